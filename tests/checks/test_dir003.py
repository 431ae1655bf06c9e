"""DIR003: log dir entries that stop the broker (critical) and leftovers it handles at start (info)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from kafka_ops.audit import run_audit
from kafka_ops.facts.model import AuditOptions
from kafka_ops.simulator.host import Failures, HostSpec, SimulatedHost, TopicSpec, simulate_host

from ..conftest import NOW_MS

UUID = "0123456789abcdef0123456789abcdef"


def sim(root: Path, **failures: bool) -> SimulatedHost:
    return simulate_host(
        str(root),
        HostSpec(
            now_ms=NOW_MS,
            topics=[TopicSpec("orders", partitions=2, records_per_partition=400, segment_bytes=8 * 1024)],
            failures=Failures(**failures),
        ),
    )


def dir003(h: SimulatedHost, version: str = "3.7.0") -> list[dict]:  # type: ignore[type-arg]
    report = run_audit(
        AuditOptions(
            server_properties=h.server_properties, topic_configs=h.topic_configs, broker_state="stopped",
            now_ms=NOW_MS, kafka_version=version,
        )
    )  # fmt: skip
    return [f for f in report["findings"] if f["check"] == "DIR003"]


def test_dir003_entries_that_stop_the_broker(tmp_path: Path) -> None:
    h = sim(tmp_path / "h", lost_found=True)  # lost+found in kafka-1
    one, two = sorted(h.log_dirs)
    bad_name = os.path.join(two, "orders-backup")  # partition "backup" is not an int
    shutil.copytree(h.partitions["orders-1"], bad_name)
    # orders-0 in both log dirs
    src = h.partitions["orders-0"]
    other = two if src.startswith(one + "/") else one
    dup = os.path.join(other, "orders-0")
    shutil.copytree(src, dup)
    found = [f for f in dir003(h) if f["severity"] == "critical"]
    by_path = {f["path"]: f for f in found}
    lf = by_path[os.path.join(one, "lost+found")]
    assert lf["log_dir"] == one and lf["details"]["name"] == "lost+found"
    assert (
        f"'Found directory {one}/lost+found, 'lost+found' is not in the form of topic-partition or "
        f"topic-partition.uniqueId-delete (if marked for deletion). Kafka's log directories (and children) should "
        f"only contain Kafka topic data.'" in lf["message"]
    )
    assert "the broker does not start" in lf["message"]
    assert "'orders-backup' is not in the form of topic-partition" in by_path[bad_name]["message"]
    # the duplicate is reported once, on the dir met second (log dirs in configuration order)
    [d] = [f for f in found if f["details"].get("kind") == "log"]
    assert (d["topic"], d["partition"]) == ("orders", 0)
    assert {d["details"]["first"], d["details"]["second"]} == {src, dup}
    assert "'Duplicate log directories for orders-0 are found in both" in d["message"]
    assert len(found) == 3


def test_dir003_kraft_metadata_log_outside_the_metadata_dir(tmp_path: Path) -> None:
    h = sim(tmp_path / "h")
    one, two = sorted(
        h.log_dirs
    )  # metadata.log.dir unset: the first of log.dirs, kafka-1, is the metadata dir
    os.makedirs(os.path.join(two, "__cluster_metadata-0"))
    [f] = dir003(h)
    assert (f["severity"], f["path"]) == ("critical", os.path.join(two, "__cluster_metadata-0"))
    assert (
        f"'Found unexpected metadata location in data directory `{two}/__cluster_metadata-0` (the configured "
        in (f["message"])
    )
    os.makedirs(os.path.join(one, "__cluster_metadata-0"))  # where it belongs: fine
    assert len(dir003(h)) == 1


def test_dir003_leftovers_are_info(tmp_path: Path) -> None:
    h = sim(tmp_path / "h")
    part = h.partitions["orders-1"]
    log_dir = os.path.dirname(part)
    # a pending async delete, an unfinished move, a stray replica
    for suffix in ("delete", "future", "stray"):
        shutil.copytree(part, os.path.join(log_dir, f"orders-1.{UUID}-{suffix}"))
    segs = sorted(n for n in os.listdir(part) if n.endswith(".log"))
    assert len(segs) >= 3, segs
    first, second = (os.path.join(part, n) for n in segs[:2])
    shutil.copy(first, first + ".deleted")
    shutil.copy(second, second + ".cleaned")
    shutil.copy(second, second + ".swap")  # offset >= the smallest .cleaned: an unfinished split, deleted
    shutil.copy(first, first.replace(".log", ".index") + ".swap")
    with open(os.path.join(log_dir, "recovery-point-offset-checkpoint.tmp"), "w") as f:
        f.write("0\n1\norders 1 0\n")
    found = dir003(h)
    assert {f["severity"] for f in found} == {"info"}
    by_kind = {f["details"].get("kind"): f for f in found if f["details"].get("kind")}
    assert set(by_kind) == {"delete", "future", "stray"}
    assert by_kind["delete"]["path"] == os.path.join(log_dir, f"orders-1.{UUID}-delete")
    assert "removes each dir whole at its first run" in by_kind["delete"]["message"]
    assert "without retention" in by_kind["delete"]["message"]
    assert "never deletes them" in by_kind["stray"]["message"]
    assert "the move resumes" in by_kind["future"]["message"]
    [left] = [f for f in found if f["path"].startswith(part + "/")]
    assert (left["topic"], left["partition"]) == ("orders", 1)
    assert left["details"]["deleted"] == [first + ".deleted"] and left["details"]["cleaned"] == [
        second + ".cleaned"
    ]
    assert sorted(left["details"]["swap"]) == sorted(
        [second + ".swap", first.replace(".log", ".index") + ".swap"]
    )
    size = 2 * os.path.getsize(first) + 2 * os.path.getsize(second)  # the four copies
    assert left["details"]["bytes"] == size
    base2 = int(os.path.basename(second).split(".")[0])
    assert (
        f"except 1 at or above the smallest .cleaned offset {base2}, an unfinished segment split"
        in left["message"]
    )
    [tmp] = [f for f in found if f["path"].endswith(".tmp")]
    assert (
        tmp["path"] == os.path.join(log_dir, "recovery-point-offset-checkpoint.tmp")
        and tmp["log_dir"] == log_dir
    )
    assert "never reads a .tmp" in tmp["message"]
    assert len(found) == 5


def test_dir003_no_false_alarm_on_a_healthy_host(tmp_path: Path) -> None:
    h = sim(tmp_path / "h")
    # what the broker itself skips or owns at the root is not reported
    os.makedirs(os.path.join(h.log_dirs[0], "remote-log-index-cache"))
    os.makedirs(os.path.join(h.log_dirs[0], "__cluster_metadata-0"))  # kafka-1 is the metadata log dir
    assert dir003(h) == []


def test_dir003_lost_found_at_the_root_of_a_real_filesystem(tmp_path: Path) -> None:
    """The classic case on a real ext4 filesystem (mkfs creates lost+found): the log dir is the mount point.
    Also DIR001's good case for real: a log dir on a mount of its own, or below it, is fine."""
    if os.geteuid() != 0 or not shutil.which("mkfs.ext4") or not shutil.which("mount"):
        pytest.skip("needs root, mkfs.ext4 and mount")
    img, mnt = tmp_path / "disk.img", tmp_path / "mnt"
    mnt.mkdir()
    with open(img, "wb") as f:
        f.truncate(16 * 1024 * 1024)
    subprocess.run(["mkfs.ext4", "-q", "-F", str(img)], check=True, capture_output=True)
    if subprocess.run(["mount", "-o", "loop", str(img), str(mnt)], capture_output=True).returncode != 0:
        pytest.skip("cannot mount a loop device here")
    try:
        h = sim(tmp_path / "h")
        shutil.copytree(h.log_dirs[0], mnt, dirs_exist_ok=True)
        assert (mnt / "lost+found").is_dir()

        def audit(log_dir: Path) -> list[dict]:  # type: ignore[type-arg]
            opts = AuditOptions(
                log_dirs=[str(log_dir)], broker_state="stopped", now_ms=NOW_MS, kafka_version="3.7.0"
            )
            return [f for f in run_audit(opts)["findings"] if f["check"] in ("DIR001", "DIR003")]

        [f] = audit(mnt)
        assert (f["check"], f["severity"], f["path"]) == ("DIR003", "critical", str(mnt / "lost+found"))
        assert f"{mnt} is a mount point, whose root holds lost+found" in f["message"]
        assert f"set log.dirs to {mnt}/kafka" in f["remediation"]
        # the fix: a subdirectory of the mount as the log dir
        (mnt / "kafka").mkdir()
        for entry in os.listdir(mnt):
            if entry not in ("lost+found", "kafka"):
                shutil.move(str(mnt / entry), str(mnt / "kafka" / entry))
        assert audit(mnt / "kafka") == []
    finally:
        subprocess.run(["umount", str(mnt)], capture_output=True)


def test_dir003_a_stray_dir_stops_a_broker_before_3_6_1(tmp_path: Path) -> None:
    """-stray is a name Kafka parses from 3.6.1 (KAFKA-15605): before, '<uuid>-stray' is taken as the partition
    number, not an int, and the broker does not start (LocalLog.parseTopicPartitionName@3.5.2)."""
    h = sim(tmp_path / "h")
    part = h.partitions["orders-1"]
    stray = os.path.join(os.path.dirname(part), f"orders-1.{UUID}-stray")
    shutil.copytree(part, stray)
    [old] = dir003(h, "3.5.2")
    assert (old["severity"], old["path"]) == ("critical", stray) and "does not start" in old["message"]
    for v in ("3.6.1", "3.9.0"):
        [new] = dir003(h, v)
        assert new["severity"] == "info" and "never deletes them" in new["message"], v
