"""PERM002: the broker reaches a file or dir of a log dir only through group/other bits or an ACL, not as owner.

Access works today (else PERM001 fires), but it hangs on permissions that routine operations change: a ``chmod``
(``g-w``, ``o-rwx``), a rewrite under another umask, a restore or copy without ACLs, or a remount that resets
ownership to root (the remount incident). The owner bits are the only ones that a ``chown`` to the broker user pins down.

Rule (see docs/PERM002.md):
* a path is reported when the broker user can read and write it (dirs: also traverse), as the kernel decides
  from mode bits and POSIX ACLs (``facts.access.decide``; the ``--probe-as-user`` result when there is one),
  and the path's owner is not the broker user: the access then comes from the owning group's bits, a named ACL
  entry, or the "other" bits;
* a path owned by the broker user is never reported, whatever its group: the owner bits decide its access and
  a group or mode change of the group/other bits cannot take it away;
* a broker running as root (uid 0) is not reported: CAP_DAC_OVERRIDE gives it access whoever owns the file.
"""

from __future__ import annotations

from collections.abc import Iterator

from kafka_ops.checks.base import Finding, check
from kafka_ops.checks.names import group_name, rwx
from kafka_ops.engine.logdir import FileInfo
from kafka_ops.engine.shell import q
from kafka_ops.facts.access import (
    ACL_GROUP,
    ACL_GROUP_OBJ,
    ACL_MASK,
    ACL_USER,
    PathFacts,
    access_for,
    decide,
    owner_text,
    partition_files,
)
from kafka_ops.facts.context import Context
from kafka_ops.facts.identity import Identity
from kafka_ops.facts.model import LogDirFacts, PartitionFacts

MAX_LISTED = 50


@check(
    "PERM002",
    severity="warning",
    scope="partition,logdir",
    title="Broker reaches log-dir files only through group/other bits or an ACL, not as their owner",
    incident="after a remount the files belonged to root; access that does not come from ownership "
    "is lost by the next chmod, umask or remount",
    needs=("broker_user",),
)
def run(ctx: Context, subject: PartitionFacts | LogDirFacts) -> Iterator[Finding]:
    who = ctx.host.identity
    assert who is not None  # needs=("broker_user",): the audit runs the check only with one
    if who.uid == 0:
        return
    topic: str | None
    partition: int | None
    if isinstance(subject, PartitionFacts):
        part = subject.part
        paths: list[FileInfo | PathFacts] = [
            *([part.dir_info] if part.dir_info else []),
            *partition_files(part),
        ]
        acls, probe = subject.acls, subject.probe
        topic, partition, where = part.topic, part.partition, part.path
        log_dir = subject.log_dir.path
    else:
        if not subject.scan.exists:
            return
        # the log dir root itself, then its own files (checkpoints, meta.properties, markers, .lock)
        paths = [*([subject.self_path] if subject.self_path else []), *subject.scan.root_files]
        acls = (
            {subject.self_path.path: subject.self_path.acl}
            if subject.self_path and subject.self_path.acl
            else {}
        )
        probe = {}
        topic = partition = None
        where = log_dir = subject.path
    fragile: list[dict[str, str]] = []
    for f in paths:
        if f.uid == who.uid:
            continue
        acl = acls.get(f.path)
        eff = access_for(who, f, acl, probe)
        if not (eff.read and eff.write and (eff.execute or not f.is_dir)):
            continue  # the broker lacks access: PERM001 (files) / PERM003 (the log dir root)
        a = decide(who, f.uid, f.gid, f.mode, acl, f.is_dir)
        full = a.read and a.write and (a.execute or not f.is_dir)
        via, how = _explain(who, f, acl, a.via) if full else ("probe", "as the kernel answered the probe")
        fragile.append({"path": f.path, "owner": owner_text(f), "via": via, "how": how})
    if not fragile:
        return
    first = fragile[0]
    vias = sorted({p["via"] for p in fragile})
    group = group_name(who.gid)
    more = f" ({len(fragile) - 1} more path(s) under {where} likewise)" if len(fragile) > 1 else ""
    yield run.finding(
        f"broker user {who.user} (uid {who.uid}) can read and write {first['path']} ({first['owner']}) only "
        f"{first['how']}, not as its owner{more}. It works today but is fragile: "
        + _fragility(vias)
        + " The remount incident's broker lost its .timeindex files that way after a remount reset ownership to root, and "
        "deleted the segments (PERM001, RET001).",
        f"Make the broker user the owner, which no chmod, umask or ACL change can take away: "
        f"find {q(where)} ! -user {q(who.user)} -exec chown {q(f'{who.user}:{group}')} {{}} + "
        f"(or: kafka-ops fix ownership --log-dir {q(log_dir)} --broker-user {q(who.user)}, then --apply; run it with "
        f"the broker stopped, since a chown -R races with the broker's checkpoint .tmp files)"
        + ("; then remove the world access: chmod -R o-rwx " + q(where) if "other" in vias else "")
        + ". Then make the provisioning step (mount options, the Ansible task that creates the dirs) set this "
        "ownership, so that the next remount or restore does not undo it.",
        path=first["path"],
        topic=topic,
        partition=partition,
        details={
            "count": len(fragile),
            "via": vias,
            "paths": fragile[:MAX_LISTED],
            "broker_user": who.user,
            "broker_uid": who.uid,
            "decided_by": "probe" if probe else "mode bits and POSIX ACLs",
        },
    )


def _explain(
    who: Identity, f: FileInfo | PathFacts, acl: list[tuple[int, int, int]] | None, via: str
) -> tuple[str, str]:
    """(via, how the access is granted, in words)."""
    if via == "group":
        bits = (f.mode >> 3) & 7
        return via, (
            f"through the group bits ({rwx(bits)}) of its group {group_name(f.gid)}, which {who.user} belongs to"
        )
    if via == "other":
        return via, f"through the 'other' bits ({rwx(f.mode & 7)}), which grant it to every user of the host"
    mask = next((p for t, p, _ in acl or [] if t == ACL_MASK), None)
    masked = f", masked by mask::{rwx(mask)}" if mask is not None else ""
    if via == "acl_user":
        assert acl is not None  # decide() granted it through the ACL
        perm = next(p for t, p, i in acl if t == ACL_USER and i == who.uid)
        return via, f"through the ACL entry user:{who.user}:{rwx(perm)}{masked}"
    if via == "acl_group":
        assert acl is not None  # decide() granted it through the ACL
        entries = []
        if f.gid in who.groups:
            go = next((p for t, p, _ in acl if t == ACL_GROUP_OBJ), (f.mode >> 3) & 7)
            entries.append(f"group::{rwx(go)} (owning group {group_name(f.gid)})")
        entries += [
            f"group:{group_name(i)}:{rwx(p)}" for t, p, i in acl if t == ACL_GROUP and i in who.groups
        ]
        return via, f"through the ACL entr{'ies' if len(entries) > 1 else 'y'} {', '.join(entries)}{masked}"
    return via, f"through {via}"  # pragma: no cover


def _fragility(vias: list[str]) -> str:
    out = []
    if "group" in vias or "acl_group" in vias:
        out.append(
            "a chmod g-w (or a file rewritten under umask 022), a chgrp, or dropping the broker user from the group "
            "removes the access"
        )
    if "acl_user" in vias or "acl_group" in vias:
        out.append(
            "an ACL is lost by a copy or restore without ACLs (cp without --preserve=all, rsync without -A, tar "
            "without --acls) and narrowed by any chmod of the group bits, which rewrites the ACL mask"
        )
    if "other" in vias:
        out.append(
            "the 'other' bits let every local user read and rewrite the partition data, and a chmod o-rwx or a "
            "umask 027 removes the broker's access with theirs"
        )
    if "probe" in vias:
        out.append("the kernel grants the access by a rule other than ownership")
    out.append(
        "and a remount, restore or provisioning run that resets ownership or modes (the remount incident) takes them with it"
    )
    return "; ".join(out) + "."


__all__ = ["run"]
