"""ENV001 and the next-start plan on a log dir whose filesystem the start cannot write in: read-only (a mountinfo
fixture, parsed by the collector's own reader), no free bytes or no free inode for the broker user (the real
statvfs answer with its free counts set to 0), per family: what makes 2.x exit makes 3.x take the dir offline.
Each rule was judged by a real broker in the lab (tests/lab/test_environment.py)."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any

import pytest

from kafka_ops.audit import run_audit
from kafka_ops.broker.plan import plan_sentences
from kafka_ops.facts import collect, mounts
from kafka_ops.facts.model import AuditOptions
from kafka_ops.simulator.host import Failures, HostSpec, SimulatedHost, TopicSpec, simulate_host

from ..conftest import NOW_MS
from .osusers import Users, broker_users, open_tmp  # noqa: F401


def host(root: Path, *, zk: bool, unclean: bool = False) -> SimulatedHost:
    h = simulate_host(
        str(root),
        HostSpec(
            now_ms=NOW_MS,
            topics=[TopicSpec("orders", partitions=2, records_per_partition=100)],
            failures=Failures(unclean_shutdown=unclean),
        ),
    )
    if zk:  # ZooKeeper mode: the same files under a broker.id and zookeeper.connect
        text = Path(h.server_properties).read_text()
        text = text.replace(
            "process.roles=broker,controller\nnode.id=1\n", "broker.id=1\nzookeeper.connect=zk:2181\n"
        )
        Path(h.server_properties).write_text(text)
        for d in h.log_dirs:  # a ZooKeeper-mode broker's meta.properties (version 0)
            cluster = next(
                line.split("=", 1)[1] for line in Path(d, "meta.properties").read_text().splitlines()
                if line.startswith("cluster.id=")
            )  # fmt: skip
            Path(d, "meta.properties").write_text(f"version=0\nbroker.id=1\ncluster.id={cluster}\n")
    return h


def mountinfo(path: Path, lines: list[tuple[str, str, str]]) -> str:
    """A /proc/self/mountinfo of (mount point, per-mount options, superblock options) lines, ext4 each."""
    with open(path, "w") as f:
        f.write("21 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n")
        for i, (mp, opts, sb) in enumerate(lines):
            f.write(
                f"{30 + i} 21 8:{17 + i} / {mp.replace(' ', chr(92) + '040')} {opts} shared:{2 + i} - ext4 /dev/sdb{i + 1} {sb}\n"
            )
    return str(path)


def audit(
    h: SimulatedHost,
    monkeypatch: pytest.MonkeyPatch,
    version: str | None,
    *,
    table: str | None = None,
    full: dict[str, str] | None = None,
    broker_user: str | None = None,
) -> dict[str, Any]:
    """The audit's report, with the mount table read from ``table`` and ``full`` log dirs' filesystems
    answering no free bytes ("bytes") or no free inode ("inodes")."""
    if table is not None:
        monkeypatch.setattr(
            collect, "read_mountinfo", lambda path="/proc/self/mountinfo": mounts.read_mountinfo(table)
        )
    if full:
        real = mounts.mount_of

        def mount_of(path: str, table_: Any = None) -> mounts.MountFacts:
            m = real(path, table_)
            what = full.get(os.path.abspath(path))
            if what == "bytes":
                return dataclasses.replace(m, free_bytes=0)
            if what == "inodes":
                return dataclasses.replace(m, free_inodes=0)
            return m

        monkeypatch.setattr(collect, "mount_of", mount_of)
    return run_audit(
        AuditOptions(
            server_properties=h.server_properties, topic_configs=h.topic_configs, broker_state="stopped",
            now_ms=NOW_MS, kafka_version=version, broker_user=broker_user,
        )
    )  # fmt: skip


def env001(report: dict[str, Any]) -> list[dict[str, Any]]:
    return sorted((f for f in report["findings"] if f["check"] == "ENV001"), key=lambda f: f["log_dir"])


def dirs(report: dict[str, Any]) -> dict[str, tuple[str, str | None]]:
    return {d["path"]: (d["state"], d["check"]) for d in report["next_start"]["log_dirs"]}


def test_mountinfo_read_only_in_the_superblock_options_only(tmp_path: Path) -> None:
    # ext4 remounted read-only after I/O errors: the per-mount options still say rw
    table = mountinfo(
        tmp_path / "mi", [("/data 1", "rw,relatime", "ro,errors=remount-ro"), ("/d2", "rw", "rw")]
    )
    assert mounts.mount_of("/data 1/kafka", mounts.read_mountinfo(table)).read_only is True
    assert mounts.mount_of("/d2/kafka", mounts.read_mountinfo(table)).read_only is False
    assert mounts.mount_of("/d2/kafka", [("/", "ext4", "/dev/sda1")]).read_only is None  # not read: unknown


def test_read_only_data_dir_goes_offline_and_the_broker_starts_zk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    h = host(tmp_path / "h", zk=True)
    second = h.log_dirs[1]
    table = mountinfo(
        tmp_path / "mi", [(os.path.dirname(h.log_dirs[0]), "rw", "rw"), (second, "rw,relatime", "ro")]
    )
    report = audit(h, monkeypatch, "2.8.2", table=table)
    ns = report["next_start"]
    assert ns["broker"] == "starts"
    assert dirs(report) == {h.log_dirs[0]: ("online", None), second: ("offline", "ENV001")}
    row = next(d for d in ns["log_dirs"] if d["path"] == second)
    assert "Disk error while locking directory" in row["reason"] and "Read-only file system" in row["reason"]
    [f] = env001(report)
    assert (f["severity"], f["log_dir"], f["details"]["problem"], f["details"]["start"]) == (
        "critical", second, "read_only", "offline",
    )  # fmt: skip
    assert "mount -o remount,rw" in f["remediation"]
    assert {d["path"]: d["read_only"] for d in report["log_dirs"]} == {h.log_dirs[0]: False, second: True}


def test_read_only_both_dirs_the_broker_exits_zk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    h = host(tmp_path / "h", zk=True)
    table = mountinfo(tmp_path / "mi", [(d, "ro", "ro") for d in h.log_dirs])
    report = audit(h, monkeypatch, "2.8.2", table=table)
    assert report["next_start"]["broker"] == "exits"  # every log dir offline: 'all log dirs ... have failed'
    assert {c for _, c in dirs(report).values()} == {"ENV001"}


def test_read_only_metadata_log_dir_kraft_exits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    h = host(tmp_path / "h", zk=False)
    table = mountinfo(
        tmp_path / "mi", [(h.log_dirs[0], "rw", "ro")]
    )  # the first log dir holds the metadata log
    ns = audit(h, monkeypatch, "3.7.2", table=table)["next_start"]
    assert (ns["broker"], ns["check"]) == ("exits", "ENV001")
    assert "Got exception while starting SharedServer" in ns["reason"]
    # the data dir alone read-only: offline, the broker starts
    table = mountinfo(tmp_path / "mi2", [(h.log_dirs[1], "rw", "ro")])
    report = audit(h, monkeypatch, "3.7.2", table=table)
    assert report["next_start"]["broker"] == "starts"
    assert dirs(report)[h.log_dirs[1]] == ("offline", "ENV001")


@pytest.mark.parametrize("what", ["bytes", "inodes"])
def test_full_filesystem_after_a_clean_stop_2x_exits_3x_offline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, what: str
) -> None:
    h = host(tmp_path / "h", zk=True)
    second = h.log_dirs[1]
    report = audit(h, monkeypatch, "2.8.2", full={second: what})
    ns = report["next_start"]
    assert (ns["broker"], ns["check"]) == ("exits", "ENV001")
    assert "leader-epoch-checkpoint" in ns["reason"] and "KAFKA-13773" in ns["reason"]
    [f] = env001(report)
    assert f["details"]["problem"] == ("no_space" if what == "bytes" else "no_inodes")
    assert f["details"]["start"] == "exits" and f["severity"] == "critical"
    # 3.x: the same write is caught, the dir goes offline (a data dir: the metadata log is in the first)
    k = host(tmp_path / "k", zk=False)
    report = audit(k, monkeypatch, "3.7.2", full={k.log_dirs[1]: what})
    assert report["next_start"]["broker"] == "starts"
    assert dirs(report)[k.log_dirs[1]] == ("offline", "ENV001")


def test_full_filesystem_after_an_unclean_stop_goes_offline_zk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    h = host(tmp_path / "h", zk=True, unclean=True)
    report = audit(h, monkeypatch, "2.8.2", full={h.log_dirs[1]: "bytes"})
    assert report["next_start"]["broker"] == "starts"
    assert dirs(report)[h.log_dirs[1]] == ("offline", "ENV001")
    row = next(d for d in report["next_start"]["log_dirs"] if d["path"] == h.log_dirs[1])
    assert "ProducerStateManager.takeSnapshot" in row["reason"] and "InternalError" in row["reason"]
    # a real 2.8.2 broker did either, on the same files: the plan says so
    [u] = [u for u in report["next_start"]["unknown"] if "or exits" in u["what"]]
    assert h.log_dirs[1] in u["what"] and "InternalError" in u["reason"]


def test_full_metadata_log_dir_kraft_exits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    h = host(tmp_path / "h", zk=False)
    ns = audit(h, monkeypatch, "3.7.2", full={h.log_dirs[0]: "bytes"})["next_start"]
    assert (ns["broker"], ns["check"]) == ("exits", "ENV001")


def test_a_healthy_filesystem_says_nothing_and_the_unknowns_are_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    h = host(tmp_path / "h", zk=True)
    table = mountinfo(tmp_path / "mi", [(d, "rw", "rw") for d in h.log_dirs])
    report = audit(h, monkeypatch, "2.8.2", table=table)
    assert env001(report) == [] and report["next_start"]["broker"] == "starts"
    assert set(dirs(report).values()) == {("online", None)}
    # no broker user given (and none in a unit): whether it may write in each dir is not decided, and said so
    unknown = report["next_start"]["unknown"]
    assert [u["reason"] for u in unknown if "PERM003" in u["what"]] == [
        "the broker user is unknown (--broker-user, or User= in the systemd unit)"
    ] * 2
    # ZooKeeper mode, ZooKeeper not asked: whether its /cluster/id is meta.properties' is not decided either
    [ident] = [u for u in unknown if "/cluster/id" in u["what"]]
    assert "InconsistentClusterIdException" in ident["what"] and "--zookeeper auto" in ident["reason"]
    assert len(unknown) == 3
    # in words (text, Markdown, HTML): one line per missing input
    words = [w for w in plan_sentences(report["next_start"]) if w.startswith("Not decided")]
    assert len(words) == 2 and words[0].startswith(
        "Not decided (ZooKeeper was not asked (--zookeeper auto reads zookeeper.connect)): whether ZooKeeper's"
    )
    assert words[1].count("whether the broker user can write in") == 2
    # a mount table that could not be read: the read-only question is unknown too
    report = audit(h, monkeypatch, "2.8.2", table=str(tmp_path / "missing"))
    assert sum("read-only" in u["what"] for u in report["next_start"]["unknown"]) == 2


def test_read_only_dir_without_its_recovery_point_checkpoint_exits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # LogManager creates the missing checkpoint (Files.createFile) outside the failure channel: the start ends
    h = host(tmp_path / "h", zk=True)
    second = h.log_dirs[1]
    os.unlink(os.path.join(second, "recovery-point-offset-checkpoint"))
    table = mountinfo(tmp_path / "mi", [(second, "ro", "ro")])
    report = audit(h, monkeypatch, "2.8.2", table=table)
    ns = report["next_start"]
    assert (ns["broker"], ns["check"]) == ("exits", "ENV001")
    assert (
        "recovery-point-offset-checkpoint is missing" in ns["reason"]
        and "its filesystem is read-only" in ns["reason"]
    )
    assert [f["details"]["problem"] for f in env001(report)] == ["cannot_create"]


def test_root_owned_dir_offline_with_its_checkpoints_exits_without(
    open_tmp: Path,  # noqa: F811
    broker_users: Users,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    u = broker_users
    h = simulate_host(
        str(open_tmp / "h"),
        HostSpec(
            now_ms=NOW_MS, topics=[TopicSpec("orders", partitions=2, records_per_partition=100)],
            broker_user=u.broker.name, broker_uid=u.broker.uid, broker_gid=u.broker.gid,
        ),
    )  # fmt: skip
    second = h.log_dirs[1]
    os.chown(second, 0, 0)
    os.chmod(second, 0o755)
    report = audit(h, monkeypatch, "3.7.2", broker_user=u.broker.name)
    assert report["next_start"]["broker"] == "starts"
    assert dirs(report)[second] == ("offline", "PERM003")  # .kafka_cleanshutdown cannot be deleted
    assert env001(report) == []
    os.unlink(os.path.join(second, "cleaner-offset-checkpoint"))  # the cleaner creates it when it starts
    ns = audit(h, monkeypatch, "3.7.2", broker_user=u.broker.name)["next_start"]
    assert (ns["broker"], ns["check"]) == ("exits", "ENV001")
    assert f"the broker user {u.broker.name} cannot write in it (root:root mode 0755)" in ns["reason"]
    assert "the log cleaner starts" in ns["reason"]


def test_full_filesystem_version_unknown_offline_and_the_exit_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # no --kafka-version (and none found): the rule changes at 3.2.1, the plan names the other outcome
    h = host(tmp_path / "h", zk=True)
    report = audit(h, monkeypatch, None, full={h.log_dirs[1]: "bytes"})
    ns = report["next_start"]
    assert ns["kafka_version"] is None and ns["broker"] == "starts"
    assert dirs(report)[h.log_dirs[1]] == ("offline", "ENV001")
    [u] = [u for u in ns["unknown"] if "or exits" in u["what"]]
    assert "older than 3.2.1 exits instead" in u["reason"]
    # a known version decides it
    report = audit(h, monkeypatch, "3.7.2", full={h.log_dirs[1]: "bytes"})
    assert not [u for u in report["next_start"]["unknown"] if "or exits" in u["what"]]
