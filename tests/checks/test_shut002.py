"""SHUT002: torn or CRC-invalid tail: what recovery truncates (and deletes), or what happens when it does not run."""

from __future__ import annotations

import os

from kafka_ops.engine.records import scan_file

from .index_hosts import Failures, audit, bases, findings, seg_path, simulate


def _valid_end(log: str) -> tuple[int, int]:
    """(bytes of whole batches, last offset) of a .log, read without CRC checks."""
    batches, _tail, _size = scan_file(log, verify_crc=False)
    return batches[-1].position + batches[-1].size, batches[-1].last_offset


def test_shut002_torn_tail_after_a_clean_stop_is_not_truncated(tmp_path) -> None:  # type: ignore[no-untyped-def]
    host = simulate(tmp_path, failures=Failures(torn_tail=True))
    [log] = host.planted["torn_tail"]
    size = os.path.getsize(log)
    valid, last = _valid_end(log)

    [f] = findings(audit(host), "SHUT002")
    assert (f["check"], f["severity"], f["path"]) == ("SHUT002", "error", log)
    d = f["details"]
    assert (d["kind"], d["position"], d["truncated_bytes"]) == ("torn", valid, size - valid)
    assert (d["last_valid_offset"], d["first_lost_offset"], d["torn_base_offset"]) == (
        last,
        last + 1,
        last + 1,
    )
    assert d["truncated_at_next_start"] is False
    assert "does NOT truncate" in f["message"] and "appended after the" in f["message"]
    assert f"so the log end offset is {last + 1}" in f["message"]


def test_shut002_torn_tail_after_an_unclean_stop_is_truncated(tmp_path) -> None:  # type: ignore[no-untyped-def]
    host = simulate(tmp_path, failures=Failures(torn_tail=True, unclean_shutdown=True))
    [log] = host.planted["torn_tail"]
    valid, last = _valid_end(log)
    [f] = findings(audit(host), "SHUT002")
    assert f["path"] == log and f["details"]["truncated_at_next_start"] is True
    assert (
        f"truncates it to {valid} bytes" in f["message"] and f"keeping offsets up to {last}" in f["message"]
    )
    assert f["details"]["deletes_later_segments"] == []  # the active segment: nothing after it


def test_shut002_crc_error_deletes_the_later_unflushed_segments(tmp_path) -> None:  # type: ignore[no-untyped-def]
    host = simulate(tmp_path, failures=Failures(unclean_shutdown=True))
    part = host.partitions["orders-0"]
    b = bases(part)
    target = seg_path(part, b[-2], ".log")  # at the recovery point: recovered, then the active one after it
    batches, _, _ = scan_file(target)
    bad = batches[3]
    with open(target, "r+b") as fh:  # flip a byte inside the 4th batch's records
        fh.seek(bad.position + bad.size - 5)
        byte = fh.read(1)
        fh.seek(bad.position + bad.size - 5)
        fh.write(bytes([byte[0] ^ 0xFF]))
    later = os.path.getsize(seg_path(part, b[-1], ".log"))

    [f] = findings(audit(host), "SHUT002")
    d = f["details"]
    assert (f["path"], f["segment"], d["kind"], d["position"]) == (target, b[-2], "corrupt", bad.position)
    assert d["last_valid_offset"] == batches[2].last_offset and d["lost_first_offset"] == bad.base_offset
    assert d["lost_batches"] == len(batches) - 3 and d["lost_last_offset"] == batches[-1].last_offset
    assert d["deletes_later_segments"] == [b[-1]] and d["deleted_bytes"] == later
    assert f"Corruption found in segment {b[-2]}, truncating to offset {bad.base_offset}" in f["message"]


def test_shut002_zeros_at_the_end_of_the_active_segment_after_a_clean_stop(tmp_path) -> None:  # type: ignore[no-untyped-def]
    host = simulate(tmp_path)
    part = host.partitions["orders-1"]
    log = seg_path(part, bases(part)[-1], ".log")
    size = os.path.getsize(log)
    with open(log, "ab") as fh:
        fh.write(bytes(4096))
    report = audit(host)
    [f] = findings(report, "SHUT002")
    # the broker does not start: critical, and the next-start plan says the same
    assert (f["severity"], f["details"]["position"], f["details"]["truncated_bytes"]) == (
        "critical",
        size,
        4096,
    )
    assert "smaller than the minimum record overhead" in f["message"] and "does not start" in f["message"]
    assert (report["next_start"]["broker"], report["next_start"]["check"]) == ("exits", "SHUT002")


def test_shut002_running_broker_torn_active_tail_is_a_warning(tmp_path) -> None:  # type: ignore[no-untyped-def]
    host = simulate(tmp_path, running=True, failures=Failures(torn_tail=True))
    [log] = host.planted["torn_tail"]
    assert findings(audit(host, broker_state="running"), "SHUT002") == []  # not read by default
    [f] = findings(audit(host, broker_state="running", deep=True), "SHUT002")
    assert (f["severity"], f["path"]) == ("warning", log) and "append in progress" in f["message"]


def test_shut002_nothing_on_healthy_hosts(tmp_path, healthy_host) -> None:  # type: ignore[no-untyped-def]
    assert findings(audit(healthy_host), "SHUT002") == []
    assert findings(audit(healthy_host, deep=True), "SHUT002") == []
    killed = simulate(tmp_path, failures=Failures(unclean_shutdown=True))
    assert findings(audit(killed), "SHUT002") == []
