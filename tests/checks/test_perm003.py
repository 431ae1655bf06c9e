"""PERM003 against real users, chown/chmod and POSIX ACLs on the log dirs and their parents."""

from __future__ import annotations

import os
from pathlib import Path

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
            topics=[TopicSpec("orders", partitions=2, records_per_partition=200, span_ms=DAY)],
            broker_user=users.broker.name,
            broker_uid=users.broker.uid,
            broker_gid=users.broker.gid,
        ),
    )


def perm003(h: SimulatedHost, users: Users, log_dirs: list[str] | None = None) -> list[dict]:  # type: ignore[type-arg]
    report = run_audit(
        AuditOptions(
            server_properties=h.server_properties, log_dirs=log_dirs or [], topic_configs=h.topic_configs,
            broker_state="stopped", now_ms=NOW_MS, broker_user=users.broker.name, kafka_version="3.7.0",
        )
    )  # fmt: skip
    return sorted((f for f in report["findings"] if f["check"] == "PERM003"), key=lambda f: f["log_dir"])


def test_perm003_parent_not_traversable_then_granted_by_acl(open_tmp: Path, broker_users: Users) -> None:  # noqa: F811
    u = broker_users
    h = host(open_tmp / "h", u)
    data = os.path.dirname(h.log_dirs[0])
    os.chmod(data, 0o700)  # root:root, as a mount step that creates the mount point leaves it
    assert not kernel_can(u.broker, [u.broker.gid], h.log_dirs[0], os.X_OK)
    found = perm003(h, u)
    assert [f["log_dir"] for f in found] == sorted(h.log_dirs)  # both log dirs sit below it
    for f in found:
        assert (f["severity"], f["path"]) == ("critical", data)
        assert f["details"]["problems"] == [
            {
                "path": data,
                "kind": "parent",
                "missing": "x",
                "owner": "root:root mode 0700",
                "acl": False,
                "via": "other",
            }
        ]
        assert (
            f"cannot traverse {data} (root:root mode 0700), a parent of log dir {f['log_dir']}"
            in f["message"]
        )
        assert f"Failed to load {f['log_dir']} during broker startup" in f["message"]
        assert (
            f"chmod o+x {data}" in f["remediation"]
            and f"setfacl -m u:{u.broker.name}:x {data}" in f["remediation"]
        )
    # an ACL entry user:<broker>:--x is enough: the kernel and PERM003 agree
    set_acl(data, user=7, group=0, other=0, mask=1, named_users=[(u.broker.uid, 1)])
    assert kernel_can(u.broker, [u.broker.gid], h.log_dirs[0], os.R_OK | os.W_OK | os.X_OK)
    assert perm003(h, u) == []
    # ... unless the mask hides it (what a chmod g-x does to a dir with an ACL)
    set_acl(data, user=7, group=0, other=0, mask=0, named_users=[(u.broker.uid, 1)])
    assert not kernel_can(u.broker, [u.broker.gid], h.log_dirs[0], os.X_OK)
    found = perm003(h, u)
    assert len(found) == 2 and found[0]["details"]["problems"][0]["acl"] is True


def test_perm003_log_dir_root_missing_bits(open_tmp: Path, broker_users: Users) -> None:  # noqa: F811
    u = broker_users
    h = host(open_tmp / "h", u)
    one, two = sorted(h.log_dirs)
    os.chown(one, 0, 0)
    os.chmod(one, 0o755)  # readable and traversable through "other", not writable: .tmp checkpoints fail
    os.chmod(two, 0o300)  # the broker owns it but cannot list it: "is not a readable log directory"
    found = {f["log_dir"]: f for f in perm003(h, u)}
    assert set(found) == {one, two}
    p1 = found[one]["details"]["problems"]
    assert [(p["kind"], p["missing"], p["owner"]) for p in p1] == [("root", "w", "root:root mode 0755")]
    assert f"cannot write the log dir {one}" in found[one]["message"]
    assert "checkpoint's .tmp" in found[one]["message"]
    p2 = found[two]["details"]["problems"]
    assert [(p["kind"], p["missing"]) for p in p2] == [("root", "r")]
    assert f"'{two} is not a readable log directory.'" in found[two]["message"]
    assert f"chown {u.broker.name}:{u.broker.name} {two} && chmod u+rwx {two}" in found[two]["remediation"]


def test_perm003_missing_log_dir_that_cannot_be_created(open_tmp: Path, broker_users: Users) -> None:  # noqa: F811
    u = broker_users
    h = host(open_tmp / "h", u)
    data = os.path.dirname(h.log_dirs[0])  # root:root 0755: traversable, not writable by the broker
    missing = os.path.join(data, "kafka-3", "logs")
    [f] = perm003(h, u, log_dirs=[missing])
    assert f["path"] == data and f["log_dir"] == missing
    assert [(p["kind"], p["missing"]) for p in f["details"]["problems"]] == [("create", "w")]
    assert f"Failed to create data directory {missing}" in f["message"]
    assert f"install -d -o {u.broker.name} -g {u.broker.name} -m 0750 {missing}" in f["remediation"]


def test_perm003_no_false_alarm_on_a_healthy_host(open_tmp: Path, broker_users: Users) -> None:  # noqa: F811
    u = broker_users
    h = host(open_tmp / "h", u)
    for d in h.log_dirs:
        assert kernel_can(u.broker, [u.broker.gid], d, os.R_OK | os.W_OK | os.X_OK)
    assert perm003(h, u) == []


def test_a_partition_dir_opened_to_the_broker_by_an_acl_is_online_for_audit_and_forecast(
    open_tmp: Path,  # noqa: F811
    broker_users: Users,  # noqa: F811
) -> None:
    """The forecast's stat-only pre-pass reads the same ACLs as the audit (facts.collect.partition_acls): a
    root-owned 0700 partition dir that an ACL opens to the broker user is loaded, so its deletions stand."""
    from kafka_ops.broker.plan import dir_offline_prescan
    from kafka_ops.facts.collect import gather

    u = broker_users
    h = host(open_tmp / "h", u)
    part = next(p for p in h.partitions.values() if p.startswith(h.log_dirs[0]))
    os.chown(part, 0, 0)
    os.chmod(part, 0o700)
    set_acl(part, user=7, group=0, other=0, mask=7, named_users=[(u.broker.uid, 7)])
    assert kernel_can(u.broker, [u.broker.gid], part, os.R_OK | os.W_OK | os.X_OK)
    opts = AuditOptions(
        server_properties=h.server_properties, topic_configs=h.topic_configs, broker_state="stopped",
        now_ms=NOW_MS, broker_user=u.broker.name, kafka_version="3.7.0",
    )  # fmt: skip
    report = run_audit(opts)
    # (PERM002 warns that the dir is not the broker user's own: an ACL is easy to lose in a copy)
    assert [f["check"] for f in report["findings"] if f["check"] in ("PERM001", "PERM003")] == []
    assert {d["path"]: d["state"] for d in report["next_start"]["log_dirs"]} == dict.fromkeys(
        h.log_dirs, "online"
    )
    facts = gather(opts)
    assert [dir_offline_prescan(facts, ldf) for ldf in facts.log_dirs] == [None, None]
    # without the ACL entry both say the dir goes offline
    set_acl(part, user=7, group=0, other=0, mask=0, named_users=[(u.broker.uid, 7)])
    facts = gather(opts)
    assert dir_offline_prescan(facts, facts.log_dirs[0]) is not None
    states = {d["path"]: d["state"] for d in run_audit(opts)["next_start"]["log_dirs"]}
    assert states[h.log_dirs[0]] == "offline"
