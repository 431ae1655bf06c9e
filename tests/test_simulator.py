"""The simulator writes what a broker writes, and each planted failure is really there on disk."""

from __future__ import annotations

import json
import os

import pytest

from kafka_ops.engine import checkpoints as ckpt
from kafka_ops.engine.indexes import read_offset_index, read_time_index, read_txn_index
from kafka_ops.engine.logdir import scan_log_dir
from kafka_ops.engine.records import BatchScanner, LogBuffer, iter_records
from kafka_ops.engine.verify import LogMap, verify_offset_index, verify_time_index
from kafka_ops.simulator.host import Failures, HostSpec, simulate_host

from .conftest import NOW_MS


def _segments(host):  # type: ignore[no-untyped-def]
    for d in host.log_dirs:
        for p in scan_log_dir(d).partitions:
            for s in p.segments:
                yield p, s


def test_healthy_host_is_what_a_cleanly_stopped_broker_leaves(healthy_host) -> None:  # type: ignore[no-untyped-def]
    for d in healthy_host.log_dirs:
        ld = scan_log_dir(d)
        assert ld.errors == []
        assert ld.clean_shutdown is not None and ld.clean_shutdown.format == "json"  # 3.7+: brokerEpoch JSON
        assert ld.meta is not None and ld.meta.version == 1 and ld.meta.directory_id
        for p in ld.partitions:
            # the recovery point of a clean stop is the log end offset
            end = p.segments[-1]
            with LogBuffer.open(end.log.path) as buf:
                last = [b for b in BatchScanner(buf)]
            leo = last[-1].next_offset if last else end.base_offset
            assert ld.recovery_points[(p.topic, p.partition)] == leo
    n = 0
    for p, s in _segments(healthy_host):
        n += 1
        oi = read_offset_index(s.index.path)
        ti = read_time_index(s.timeindex.path)
        assert oi.zero_tail == 0 and ti.zero_tail == 0, "clean shutdown trims every index"
        with LogBuffer.open(s.log.path) as buf:
            lm = LogMap.build(buf)
            assert lm.valid_bytes == buf.size
        issues = verify_offset_index(oi, lm, s.active) + verify_time_index(ti, lm, s.active)
        assert issues == [], (p.topic, s.base_offset, issues)
    assert n > 40


def test_indexes_hold_an_entry_per_index_interval(healthy_host) -> None:  # type: ignore[no-untyped-def]
    for _p, s in _segments(healthy_host):
        oi = read_offset_index(s.index.path)
        # LogSegment.append: an entry once more than index.interval.bytes (4096) were appended since the last
        expected_max = s.log.size // 4096
        assert len(oi.entries) <= expected_max + 1
        if s.log.size > 3 * 4096:
            assert len(oi.entries) >= 1


def test_transactions_leave_markers_and_aborted_txn_index(healthy_host) -> None:  # type: ignore[no-untyped-def]
    aborted = commits = 0
    for p, s in _segments(healthy_host):
        if p.topic != "payments":
            continue
        with LogBuffer.open(s.log.path) as buf:
            for b in BatchScanner(buf):
                if b.is_control:
                    assert b.is_transactional and b.control_type in ("COMMIT", "ABORT")
                    commits += b.control_type == "COMMIT"
                    aborted += b.control_type == "ABORT"
                else:
                    assert b.is_transactional and b.producer_id >= 1000
                    assert len(list(iter_records(buf, b))) == b.records_count
        if s.txnindex is not None:
            for e in read_txn_index(s.txnindex.path).entries:
                assert e.last_offset >= s.base_offset
    assert commits > 0 and aborted > 0


def test_running_broker_leaves_preallocated_active_indexes(tmp_path) -> None:  # type: ignore[no-untyped-def]
    host = simulate_host(str(tmp_path), HostSpec(now_ms=NOW_MS, running=True))
    for d in host.log_dirs:
        assert not os.path.exists(os.path.join(d, ckpt.CLEAN_SHUTDOWN))
    for _p, s in _segments(host):
        size = os.path.getsize(s.index.path)
        if s.active:
            assert size == 10 * 1024 * 1024 and os.path.getsize(s.timeindex.path) == 10485756
        else:
            assert size < 4096


def test_every_failure_is_planted_where_the_manifest_says(broken_host) -> None:  # type: ignore[no-untyped-def]
    planted = broken_host.planted
    assert set(planted) == set(Failures.all().__dict__)
    ti = planted["untrimmed_timeindex"][0]
    assert os.path.getsize(ti) == 10485756 and read_time_index(ti).last_entry[0] == 0
    assert os.path.getsize(planted["bad_index_size"][0]) % 8 != 0
    idx = read_offset_index(planted["index_below_base"][0])
    assert idx.last_offset < idx.base_offset
    with LogBuffer.open(planted["torn_tail"][0]) as buf:
        sc = BatchScanner(buf)
        list(sc)
        assert sc.tail is not None and sc.tail.kind == "torn" and sc.tail.truncated_bytes > 0
    for d in planted["unclean_shutdown"]:
        assert not os.path.exists(os.path.join(d, ckpt.CLEAN_SHUTDOWN))
    assert os.path.isdir(planted["lost_found"][0])
    metas = {
        ckpt.read_meta_properties(os.path.join(d, ckpt.META_PROPERTIES)).cluster_id
        for d in broken_host.log_dirs
    }
    assert len(metas) == 2
    with open(os.path.join(broken_host.root, "host.json")) as f:
        manifest = json.load(f)
    assert manifest["planted"] == planted


def test_txn_marker_flood_is_a_long_run_of_consecutive_markers(broken_host) -> None:  # type: ignore[no-untyped-def]
    run = best = 0
    for _p, s in _segments(broken_host):
        if not s.log.path.startswith(broken_host.planted["txn_marker_flood"][0]):
            continue
        with LogBuffer.open(s.log.path) as buf:
            for b in BatchScanner(buf):
                run = run + b.size if b.is_control else 0
                best = max(best, run)
    assert best > 1_000_012  # longer than the largest cleaner buffer of seed 001


@pytest.mark.parametrize(
    ("version", "died_of"),
    [
        (
            "1.1.0",
            "java.lang.IllegalStateException: This log contains a message larger than maximum allowable size",
        ),
        ("2.0.1", "java.lang.IllegalStateException"),
        ("2.1.0", "java.lang.OutOfMemoryError: Java heap space"),
        ("3.7.0", "java.lang.OutOfMemoryError: Java heap space"),
    ],
)
def test_the_cleaner_dies_as_the_simulated_version_can(tmp_path, version: str, died_of: str) -> None:  # type: ignore[no-untyped-def]
    """Before 2.1.0 any exception while cleaning kills the thread (KAFKA-6854's among them); from 2.1.0 (KIP-346)
    an exception marks the partition uncleanable, and only an Error still kills it."""
    from kafka_ops.simulator.host import Failures, HostSpec, simulate_host

    host = simulate_host(
        str(tmp_path / "h"), HostSpec(kafka_version=version, topics=[], failures=Failures(cleaner_died=True))
    )
    text = open(host.cleaner_log).read()
    assert died_of in text and "Error due to" in text and "Stopped" in text
    assert ("maximum allowable size" in text) == (version < "2.1")
