"""PERM002 against real users, groups, chown/chmod and POSIX ACLs."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kafka_ops.audit import run_audit
from kafka_ops.facts.model import AuditOptions
from kafka_ops.simulator.host import HostSpec, SimulatedHost, TopicSpec, simulate_host

from ..conftest import NOW_MS
from .osusers import Users, broker_users, kernel_can, open_tmp, set_acl  # noqa: F401

DAY = 24 * 3600 * 1000


def host(root: Path, users: Users) -> SimulatedHost:
    return simulate_host(
        str(root),
        HostSpec(
            now_ms=NOW_MS,
            topics=[TopicSpec("orders", partitions=2, records_per_partition=400, span_ms=DAY)],
            broker_user=users.broker.name,
            broker_uid=users.broker.uid,
            broker_gid=users.broker.gid,
        ),
    )


def audit(h: SimulatedHost, users: Users, probe: bool = False) -> list[dict]:  # type: ignore[type-arg]
    report = run_audit(
        AuditOptions(
            server_properties=h.server_properties, topic_configs=h.topic_configs, broker_state="stopped",
            now_ms=NOW_MS, broker_user=users.broker.name, kafka_version="3.7.0", probe_as_user=probe,
        )
    )  # fmt: skip
    return report["findings"]


def seg_file(part_dir: str, suffix: str) -> str:
    return os.path.join(part_dir, f"{0:020d}{suffix}")


@pytest.mark.parametrize("probe", [False, True], ids=["computed", "probe"])
def test_perm002_access_through_group_other_and_acl(open_tmp: Path, broker_users: Users, probe: bool) -> None:  # noqa: F811
    # open_tmp, not tmp_path: the kernel (probe, kernel_can) must be able to traverse the path as the broker user
    u = broker_users
    h = host(open_tmp / "h", u)
    part = h.partitions["orders-0"]
    log, index, timeindex = seg_file(part, ".log"), seg_file(part, ".index"), seg_file(part, ".timeindex")
    # .log: owned by another user, reachable through a named ACL entry user:<broker>:rw- (mask rw-)
    os.chown(log, u.other.uid, u.other.gid)
    set_acl(log, user=6, group=0, other=0, mask=6, named_users=[(u.broker.uid, 6)])
    # .index: owned by another user, world read/write
    os.chown(index, u.other.uid, u.other.gid)
    os.chmod(index, 0o606)
    # .timeindex: root-owned (as after seed 000's remount), group "shared" (a supplementary group of the broker) rw
    os.chown(timeindex, 0, u.shared_gid)
    os.chmod(timeindex, 0o660)
    # the log dir root: root:shared 0770
    log_dir = os.path.dirname(part)
    os.chown(log_dir, 0, u.shared_gid)
    os.chmod(log_dir, 0o770)
    # the kernel agrees that the broker user can read and write every one of them
    groups = [u.broker.gid, u.shared_gid]
    for p in (log, index, timeindex):
        assert kernel_can(u.broker, groups, p, os.R_OK | os.W_OK), p
    assert kernel_can(u.broker, groups, log_dir, os.R_OK | os.W_OK | os.X_OK)

    findings = audit(h, u, probe)
    assert not [f for f in findings if f["check"] in ("PERM001", "PERM003")]  # access works
    perm = [f for f in findings if f["check"] == "PERM002"]
    by_path = {f["path"]: f for f in perm}
    f = by_path[log]  # the partition's finding: the first fragile path is the first segment's .log
    assert (f["severity"], f["topic"], f["partition"]) == ("warning", "orders", 0)
    assert f["details"]["count"] == 3
    assert f["details"]["decided_by"] == ("probe" if probe else "mode bits and POSIX ACLs")
    vias = {p["path"]: p["via"] for p in f["details"]["paths"]}
    assert vias == {log: "acl_user", index: "other", timeindex: "group"}
    owners = {p["path"]: p["owner"] for p in f["details"]["paths"]}
    assert owners[timeindex] == f"root:{u.shared_group} mode 0660"
    assert owners[index] == f"{u.other.name}:{u.other.name} mode 0606"
    assert f"ACL entry user:{u.broker.name}:rw-" in f["message"] and "not as its owner" in f["message"]
    assert "2 more path(s)" in f["message"]
    assert (
        f"find {part} ! -user {u.broker.name} -exec chown {u.broker.name}:{u.broker.name}" in f["remediation"]
    )
    assert f"chmod -R o-rwx {part}" in f["remediation"]  # the world-writable .index
    # the log dir root: reached through its group
    root = by_path[log_dir]
    assert root["severity"] == "warning" and root["details"]["count"] == 1
    assert root["details"]["paths"][0]["via"] == "group"
    assert f"group bits (rwx) of its group {u.shared_group}" in root["message"]
    assert len(perm) == 2  # nothing on orders-1 or the other log dir


def test_perm002_acl_through_group_entry(open_tmp: Path, broker_users: Users) -> None:  # noqa: F811
    u = broker_users
    h = host(open_tmp / "h", u)
    part = h.partitions["orders-1"]
    snap = next(os.path.join(part, n) for n in sorted(os.listdir(part)) if n.endswith(".timeindex"))
    os.chown(snap, u.other.uid, u.other.gid)
    set_acl(snap, user=6, group=0, other=0, mask=6, named_groups=[(u.shared_gid, 6)])
    f = next(f for f in audit(h, u) if f["check"] == "PERM002")
    assert f["path"] == snap and f["details"]["via"] == ["acl_group"]
    assert f"group:{u.shared_group}:rw-" in f["message"] and "mask::rw-" in f["message"]
    # narrowing the mask (what a chmod g-w does to a file with an ACL) takes the access away: PERM001, not PERM002
    set_acl(snap, user=6, group=0, other=0, mask=4, named_groups=[(u.shared_gid, 6)])
    assert not kernel_can(u.broker, [u.broker.gid, u.shared_gid], snap, os.W_OK)
    checks = {f["check"] for f in audit(h, u) if f["path"] == snap}
    assert checks == {"PERM001"}


def test_perm002_no_false_alarm_on_a_healthy_host(tmp_path: Path, broker_users: Users) -> None:  # noqa: F811
    u = broker_users
    h = host(tmp_path / "h", u)
    # owned by the broker user but not its group: the owner bits decide, nothing fragile
    part = h.partitions["orders-0"]
    os.chown(seg_file(part, ".log"), u.broker.uid, 0)
    os.chmod(seg_file(part, ".log"), 0o600)
    findings = audit(h, u)
    assert [f for f in findings if f["check"] in ("PERM001", "PERM002")] == []


def test_an_orphan_index_reached_through_its_acl_is_no_perm001(open_tmp: Path, broker_users: Users) -> None:  # noqa: F811
    # an index without its .log (the loader deletes it) owned by another user, 0600, an ACL entry giving the broker
    # user rw-: the kernel lets the broker read and delete it, so the dir stays online. The audit read the ACLs of
    # every file but the orphan indexes, and took this one as unreadable (PERM001 critical, the dir offline).
    u = broker_users
    h = host(open_tmp / "h", u)
    part = h.partitions["orders-1"]
    orphan = os.path.join(part, f"{99999:020d}.index")
    with open(orphan, "wb") as f:
        f.write(b"\0" * 8)
    os.chown(orphan, u.other.uid, u.other.gid)
    os.chmod(orphan, 0o600)
    set_acl(orphan, user=6, group=0, other=0, mask=6, named_users=[(u.broker.uid, 6)])
    assert kernel_can(u.broker, [u.broker.gid, u.shared_gid], orphan, os.R_OK | os.W_OK)
    findings = audit(h, u)
    assert not [f for f in findings if f["check"] == "PERM001"]
    fragile = [f for f in findings if f["check"] == "PERM002" and f["path"] == orphan]
    assert len(fragile) == 1 and fragile[0]["details"]["via"] == ["acl_user"]
