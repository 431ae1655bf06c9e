"""CLN003: a run of markers longer than the cleaner's largest buffer, replayed as Kafka 1.1.0's cleanInto does."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from kafka_ops.audit import run_audit
from kafka_ops.broker.cleaner import CleanerBuffers, replay_clean_into
from kafka_ops.engine.builder import NewRecord, build_batch, control_batch
from kafka_ops.facts.model import AuditOptions
from kafka_ops.simulator.host import Failures, HostSpec, SimulatedHost, simulate_host

from ..conftest import NOW_MS


@pytest.fixture(autouse=True)
def _only_cln003(monkeypatch: pytest.MonkeyPatch) -> None:
    """Run only CLN003: the audit stays fast and independent of the other checks."""
    import kafka_ops.audit.run as audit_module
    from kafka_ops.checks import load_all

    monkeypatch.setattr(
        audit_module, "load_all", lambda: {k: v for k, v in load_all().items() if k == "CLN003"}
    )


RUN_BYTES = 1_560_078  # 20001 markers of 78 bytes: the simulator's flood in __consumer_offsets-7


def findings(host: SimulatedHost, version: str) -> list[dict]:  # type: ignore[type-arg]
    r = run_audit(
        AuditOptions(
            server_properties=host.server_properties, topic_configs=host.topic_configs, broker_state="stopped",
            now_ms=NOW_MS, kafka_version=version, host="test", broker_user="root",
        )
    )  # fmt: skip
    return [f for f in r["findings"] if f["check"] == "CLN003"]


def test_marker_flood_on_1_1_0_is_an_error(broken_host) -> None:  # type: ignore[no-untyped-def]
    (f,) = findings(broken_host, "1.1.0")
    assert f["severity"] == "error"
    assert f["topic"] == "__consumer_offsets" and f["partition"] == 7 and f["segment"] == 0
    d = f["details"]
    assert d["run_bytes"] == RUN_BYTES and d["run_batches"] == 20001 and d["run_start_offset"] == 79
    # server.properties sets message.max.bytes=1048588; log.cleaner.io.buffer.size 512 KiB / 1 thread / 2
    assert d["initial_buffer"] == 262_144 and d["max_buffer"] == 1_048_588
    assert d["buffer_growth"] == [262_144, 524_288, 1_048_576, 1_048_588]
    assert d["certain_fatal_run_bytes"] == 262_144 + 262_144 + 524_288 + 1_048_576 + 1_048_588
    # the flood is in the active segment: not fatal as it is now (the replay says so), but it will be read
    assert d["active_segment"] is True and d["fatal"] is False
    assert d["replay"]["growths"] == [524_288, 1_048_576, 1_048_588]
    assert f["path"].endswith("__consumer_offsets-7/00000000000000000000.log")


def test_with_1_1_0_defaults_the_replay_dies_like_seed_001(tmp_path: Path) -> None:
    host = simulate_host(str(tmp_path), HostSpec(now_ms=NOW_MS, failures=Failures(txn_marker_flood=True)))
    props = Path(host.server_properties)
    props.write_text(re.sub(r"message\.max\.bytes=.*\n", "", props.read_text()))  # 1.1.0's default: 1000012
    (f,) = findings(host, "1.1.0")
    d = f["details"]
    assert f["severity"] == "error" and d["max_buffer"] == 1_000_012
    # seed 001's log: "Growing cleaner I/O buffers from 262144bytes to 524288 bytes", "... to 1000012 bytes",
    # then "This log contains a message larger than maximum allowable size of 1000012."
    assert d["fatal"] is True and d["replay"]["growths"] == [524_288, 1_000_012]
    assert d["replay"]["fatal_offset"] == 13404 and d["replay"]["fatal_position"] == 1_048_412
    assert "maximum allowable size of 1000012" in f["message"]
    # the stopgap names a max.message.bytes above the run
    assert "max.message.bytes=3145728" in f["remediation"]


def test_fixed_versions_say_growth_not_crash(broken_host) -> None:  # type: ignore[no-untyped-def]
    (f,) = findings(broken_host, "2.2.0")
    assert f["severity"] == "warning" and "KAFKA-8335" in f["message"] and "Not a crash" in f["message"]
    (f,) = findings(broken_host, "3.7.0")
    assert f["severity"] == "info"


def test_no_finding_without_a_long_run(healthy_host) -> None:  # type: ignore[no-untyped-def]
    assert findings(healthy_host, "1.1.0") == []


def _segment(path: Path, parts: list[bytes]) -> None:
    path.write_bytes(b"".join(parts))


def test_replay_follows_clean_into_read_by_read(tmp_path: Path) -> None:
    """A non-active segment: data, a run of markers, data. The run kills a 1.1.0 cleaner iff some read at the
    maximum buffer size holds only markers."""
    off = 0
    parts: list[bytes] = []
    for _ in range(10):
        parts.append(build_batch(off, [NewRecord(b"k", b"v" * 100, NOW_MS)]))
        off += 1
    start = off
    markers = 0
    while sum(map(len, parts)) < 2 * 131_072 + 40_000:
        parts.append(control_batch(off, True, 7, 0, NOW_MS))
        off += 1
        markers += 1
    parts.append(build_batch(off, [NewRecord(b"k", b"v", NOW_MS)]))
    seg = tmp_path / "00000000000000000000.log"
    _segment(seg, parts)
    # buffers 65536 -> 131072 (max): the read at 131072 that is all markers throws
    r = replay_clean_into(str(seg), 65_536, 131_072)
    assert r.fatal and r.growths == [131_072]
    assert start < r.fatal_offset < start + markers
    # with a larger maximum the run is consumed by growing reads and the segment survives
    r = replay_clean_into(str(seg), 65_536, 1_048_576)
    assert not r.fatal and r.growths[-1] <= 1_048_576
    assert r.bytes == os.path.getsize(seg)


def test_a_batch_larger_than_the_buffer_grows_it_and_is_read(tmp_path: Path) -> None:
    seg = tmp_path / "00000000000000000000.log"
    _segment(seg, [build_batch(0, [NewRecord(b"k", b"x" * 200_000, NOW_MS)])])
    r = replay_clean_into(str(seg), 65_536, 1_048_576)
    assert not r.fatal and r.growths == [131_072, 262_144]


def test_certain_fatal_run() -> None:
    b = CleanerBuffers(262_144, 1_000_012, 1_000_012, 1_000_012, 524_288, 1)
    assert b.growth() == [262_144, 524_288, 1_000_012]
    assert b.certain_fatal_run == 262_144 + 262_144 + 524_288 + 1_000_012
