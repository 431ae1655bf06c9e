"""DIR004: free space against growth before retention frees space, recovery and preallocation.

The filesystems are given to the collector (``mount_of``: mount point, type, device and free bytes) so that the
numbers do not depend on the test machine's disk; the partitions, their mtimes and timestamps are real files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kafka_ops.audit import run_audit
from kafka_ops.engine.indexes import OFFSET_ENTRY, TIME_ENTRY, preallocated_size
from kafka_ops.facts import collect
from kafka_ops.facts.model import AuditOptions
from kafka_ops.facts.mounts import MountFacts
from kafka_ops.simulator.host import Failures, HostSpec, SimulatedHost, TopicSpec, simulate_host

from ..conftest import NOW_MS

DAY = 24 * 3600 * 1000
GiB = 1024**3
INDEX_FACTOR = (
    1 + (OFFSET_ENTRY + TIME_ENTRY) / 4096
)  # index.interval.bytes 4096 (the simulator's server.properties)
FULL_INDEX = preallocated_size(OFFSET_ENTRY, 10 * 1024 * 1024) + preallocated_size(
    TIME_ENTRY, 10 * 1024 * 1024
)


def sim(root: Path, topics: list[TopicSpec], **failures: bool) -> SimulatedHost:
    return simulate_host(str(root), HostSpec(now_ms=NOW_MS, topics=topics, failures=Failures(**failures)))


def filesystems(monkeypatch: pytest.MonkeyPatch, mounts: dict[str, tuple[str, str, str]], free: int) -> None:
    """Put each log dir on the filesystem ``{log dir: (mount point, fstype, device)}`` with ``free`` bytes free."""

    def mount_of(path: str, mounts_: object = None) -> MountFacts:
        real = os.path.realpath(path)
        mp, fstype, dev = mounts[real]
        return MountFacts(real, mp, fstype, dev, real == mp, mp == "/", 100 * GiB, free)

    monkeypatch.setattr(collect, "mount_of", mount_of)


def dir004(h: SimulatedHost, **kw: object) -> list[dict]:  # type: ignore[type-arg]
    report = run_audit(
        AuditOptions(
            server_properties=h.server_properties, topic_configs=h.topic_configs, broker_state="stopped",
            now_ms=NOW_MS, kafka_version="3.7.0", **kw,  # type: ignore[arg-type]
        )
    )  # fmt: skip
    return sorted((f for f in report["findings"] if f["check"] == "DIR004"), key=lambda f: f["path"])


def log_bytes(part_dir: str) -> int:
    return sum(os.path.getsize(os.path.join(part_dir, n)) for n in os.listdir(part_dir) if n.endswith(".log"))


def test_dir004_shared_filesystem_summed_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # 4 partitions written evenly over the last 24 h, never deleted: the next 24 h bring as much again
    h = sim(
        tmp_path / "h",
        [TopicSpec("events", partitions=4, records_per_partition=600, span_ms=DAY, retention_ms=-1)],
    )
    data = os.path.dirname(h.log_dirs[0])
    per_dir = {
        d: sum(
            log_bytes(p) for k, p in h.partitions.items() if k.startswith("events") and p.startswith(d + "/")
        )
        for d in h.log_dirs
    }
    assert all(per_dir.values())  # both log dirs hold some
    total = sum(per_dir.values())

    filesystems(monkeypatch, {d: (data, "xfs", "/dev/sdb1") for d in h.log_dirs}, free=1000)
    [f] = dir004(h)  # one filesystem, one finding
    assert (f["severity"], f["path"]) == ("warning", data)
    d = f["details"]
    assert d["log_dirs"] == h.log_dirs and d["free_bytes"] == 1000
    assert d["growth_bytes"] == pytest.approx(total * INDEX_FACTOR, abs=2)
    assert d["need_bytes"] == d["growth_bytes"]  # clean stop: no recovery; xfs: sparse preallocation
    assert d["rate_bytes_per_hour"] == pytest.approx(total / 24, abs=1)
    assert (d["freed_bytes"], d["recovery_bytes"], d["prealloc_bytes"]) == (0, 0, 0)
    assert "has 1000 B free, less than the" in f["message"] and "over the next 24.0 h" in f["message"]

    # two filesystems: each finding counts its own log dir only, and together they make the same need
    filesystems(
        monkeypatch,
        {
            h.log_dirs[0]: (h.log_dirs[0], "xfs", "/dev/sdb1"),
            h.log_dirs[1]: (h.log_dirs[1], "xfs", "/dev/sdc1"),
        },
        free=1000,
    )
    two = dir004(h)
    assert [x["details"]["log_dirs"] for x in two] == [[p] for p in sorted(h.log_dirs)]
    for x in two:
        assert x["details"]["growth_bytes"] == pytest.approx(
            per_dir[x["details"]["log_dirs"][0]] * INDEX_FACTOR, abs=2
        )
    assert sum(x["details"]["need_bytes"] for x in two) == pytest.approx(d["need_bytes"], abs=2)

    # enough space: nothing to say
    filesystems(
        monkeypatch,
        {p: (data, "xfs", "/dev/sdb1") for p in h.log_dirs},
        free=round(total * INDEX_FACTOR) + 10,
    )
    assert dir004(h) == []


def test_dir004_retention_frees_space_before_the_peak(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    topic = TopicSpec("logs", partitions=1, records_per_partition=800, span_ms=2 * DAY, retention_ms=DAY)
    h = sim(tmp_path / "h", [topic])
    filesystems(monkeypatch, {d: ("/data", "xfs", "/dev/sdb1") for d in h.log_dirs}, free=1)
    [f] = dir004(h)
    d = f["details"]
    arriving = d["rate_bytes_per_hour"] * 24 * INDEX_FACTOR
    part = h.partitions["logs-0"]
    # half the data is from the last 24 h: that is what arrives again
    assert d["rate_bytes_per_hour"] == pytest.approx(log_bytes(part) / 2 / 24, rel=0.05)
    # retention deletes the older half now and the rest as it ages: the peak is well below the arrivals
    assert d["freed_bytes"] > log_bytes(part) / 2
    assert 0 < d["growth_bytes"] < arriving / 4
    assert "retention frees" in f["message"] and "the peak is just before" in f["message"]


def test_dir004_recovery_and_preallocation_on_a_filesystem_without_sparse_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    topics = [TopicSpec("events", partitions=2, records_per_partition=600, span_ms=DAY, retention_ms=-1)]
    # killed broker: the active indexes are still preallocated (nothing more to allocate); each log dir recovers
    # segments, one at a time (num.recovery.threads.per.data.dir=1) with its indexes preallocated
    h = sim(tmp_path / "unclean", topics, unclean_shutdown=True)
    filesystems(monkeypatch, {d: ("/data", "vfat", "/dev/sdb1") for d in h.log_dirs}, free=1)
    [f] = dir004(h)
    d = f["details"]
    assert d["sparse_files"] is False
    assert d["prealloc_bytes"] == 0
    assert d["recovery_bytes"] == 2 * FULL_INDEX  # two log dirs, one recovery thread each
    assert d["need_bytes"] == pytest.approx(d["growth_bytes"] + 2 * FULL_INDEX, abs=1)
    assert "one per recovery thread" in f["message"] and "vfat does not keep sparse" not in f["message"]

    # clean stop: the trimmed active indexes grow back to segment.index.bytes at start; a segment without .index
    # is rebuilt (even after a clean stop) and its rebuilt index entries take space
    h = sim(tmp_path / "clean", topics)
    part = h.partitions["events-0"]
    logs = sorted(n for n in os.listdir(part) if n.endswith(".log"))
    first = os.path.join(part, logs[0])
    os.remove(first.replace(".log", ".index"))
    filesystems(monkeypatch, {p: ("/data", "vfat", "/dev/sdb1") for p in h.log_dirs}, free=1)
    [f] = dir004(h)
    d = f["details"]
    expected_prealloc = 0
    for p in h.partitions.values():
        active = sorted(n for n in os.listdir(p) if n.endswith(".log"))[-1]
        have = sum(
            os.path.getsize(os.path.join(p, active.replace(".log", s))) for s in (".index", ".timeindex")
        )
        expected_prealloc += FULL_INDEX - have
    assert d["prealloc_bytes"] == expected_prealloc
    rebuilt = (os.path.getsize(first) // 4096 + 1) * (OFFSET_ENTRY + TIME_ENTRY)
    assert d["recovery_bytes"] == rebuilt + FULL_INDEX  # only events-0's log dir recovers
    assert "vfat does not keep sparse" in f["message"]


def test_dir004_no_false_alarm_on_a_healthy_host(tmp_path: Path) -> None:
    h = sim(tmp_path / "h", [TopicSpec("events", partitions=2, records_per_partition=300)])
    assert dir004(h) == []  # the real filesystem of tmp_path, with its real free space
