"""PERM001: a file or dir in a log dir that the broker user cannot read and write (dirs: also traverse)."""

from __future__ import annotations

from collections.abc import Iterator

from kafka_ops.checks.base import Finding, check
from kafka_ops.checks.names import group_name
from kafka_ops.engine.shell import q
from kafka_ops.facts.access import access_for, all_granted, owner_text, partition_files, path_facts
from kafka_ops.facts.context import Context
from kafka_ops.facts.identity import Identity
from kafka_ops.facts.model import LogDirFacts, PartitionFacts

MAX_LISTED = 50


@check(
    "PERM001",
    severity="critical",
    scope="partition,logdir",
    title="Broker user cannot read and write a file or dir in a log dir",
    incident="volumes remounted with root ownership; the broker could not read .timeindex files",
    needs=("broker_user",),
)
def run(ctx: Context, subject: PartitionFacts | LogDirFacts) -> Iterator[Finding]:
    who = ctx.host.identity
    assert who is not None  # needs=("broker_user",): the audit runs the check only with one
    bad: list[tuple[str, str, str]] = []  # (path, what is missing, owner)
    topic: str | None
    partition: int | None
    if isinstance(subject, PartitionFacts):
        if all_granted(who, subject):  # nothing below would be missing: most partitions
            return
        part = subject.part
        files = partition_files(part)
        dirs = [part.dir_info] if part.dir_info else []
        acls, probe = subject.acls, subject.probe
        topic, partition, where = part.topic, part.partition, part.path
    else:
        if not subject.scan.exists:
            return
        # the log dir root's own files: checkpoints, meta.properties, the clean-shutdown marker, .lock
        files = [f for f in subject.scan.root_files]
        dirs = []
        acls, probe = {}, {}
        topic = partition = None
        where = subject.path
    for d in dirs:
        a = access_for(who, d, acls.get(d.path), probe)
        missing = "".join(c for c, ok in (("r", a.read), ("w", a.write), ("x", a.execute)) if not ok)
        if missing:
            bad.append((d.path, missing, owner_text(d)))
    for f in files:
        if f.is_dir:
            continue
        a = access_for(who, f, acls.get(f.path), probe)
        if a.read and a.write:
            continue  # the usual file: no text made for it
        missing = "".join(c for c, ok in (("r", a.read), ("w", a.write)) if not ok)
        bad.append((f.path, missing, owner_text(f)))
    if not bad:
        return
    first_path, first_missing, first_owner = bad[0]
    unreadable = [p for p, m, _ in bad if "r" in m]
    consequence = (
        "At start the broker checks every file it loads with canRead() and throws 'Could not read file': the whole "
        "log dir goes offline (LogLoader.removeTempFilesAndCollectSwapFiles)."
        if unreadable
        else "The broker opens index files read-write (LazyIndex -> AbstractIndex, RandomAccessFile 'rw') and "
        "truncates or trims segments on roll and recovery: the first such access fails with 'Permission denied', "
        "an IOException that takes the log dir offline; a failed trim on roll is swallowed and leaves a "
        "zero-padded index behind (KAFKA-10207, RET001)."
    )
    seg = None
    name = first_path.rsplit("/", 1)[-1]
    if name[:1].isdigit():
        try:
            seg = int(name.split(".", 1)[0])
        except ValueError:
            seg = None
    user = who.user
    yield run.finding(
        f"broker user {user} (uid {who.uid}) cannot {'/'.join(_verbs(first_missing))} {first_path} ({first_owner})"
        + (f" and {len(bad) - 1} more path(s) under {where}" if len(bad) > 1 else "")
        + f". {consequence}",
        f"With the broker stopped: chown -R {q(f'{user}:{_group(who)}')} {q(where)} && chmod -R u+rwX {q(where)} "
        f"(or: kafka-ops fix ownership --log-dir {q(subject.log_dir.path if isinstance(subject, PartitionFacts) else subject.path)} "
        f"--broker-user {q(user)} --apply). Then make the mount step set ownership so the next remount does not undo it.",
        path=first_path,
        topic=topic,
        partition=partition,
        segment=seg,
        details={
            "count": len(bad),
            "paths": [{"path": p, "missing": m, "owner": o} for p, m, o in bad[:MAX_LISTED]],
            "unreadable": len(unreadable),
            "decided_by": "probe" if probe else "mode bits and POSIX ACLs",
        },
    )


def _verbs(missing: str) -> list[str]:
    return [v for c, v in (("r", "read"), ("w", "write"), ("x", "traverse")) if c in missing]


def _group(who: Identity) -> str:
    return group_name(who.gid)  # looked up once, not for each of 20,000 findings


__all__ = ["path_facts", "run"]
