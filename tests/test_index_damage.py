"""Index damage at the next start (issue 36 §2): what the plan (``next_start``) and the checks say of a
segment's damaged ``.txnindex`` / ``.index`` / ``.timeindex``, on planted files of a simulated stopped host.
The lab's real brokers are the judges (tests/lab/scenarios.py INDEX_DAMAGE, docs/fidelity.md)."""

from __future__ import annotations

import os
import struct
from typing import Any

from kafka_ops.broker.plan import plan_sentences
from kafka_ops.engine.records import BatchScanner, LogBuffer
from tests.checks.index_hosts import (
    append_offset_entry,
    audit,
    bases,
    findings,
    offset_entries,
    seg_path,
    simulate,
    write_offset_entries,
)


def aborted_txn(version: int, last: int, first: int = 0) -> bytes:
    """One AbortedTxn entry (34 bytes: version int16, producerId, firstOffset, lastOffset, lastStableOffset)."""
    return struct.pack(">hqqqq", version, 7, first, last, first)


def plant(path: str, data: bytes) -> None:
    with open(path, "wb") as f:
        f.write(data)


def segment_row(report: dict[str, Any], log: str) -> dict[str, Any] | None:
    return next((s for s in report["next_start"]["segments"] if s["log"] == log), None)


def test_a_txnindex_entry_of_an_unknown_version_makes_the_broker_exit(tmp_path) -> None:  # type: ignore[no-untyped-def]
    host = simulate(tmp_path)
    part = host.partitions["orders-0"]
    base = bases(part)[1]
    # garbage where the file was (an ELF header): the version is the first byte only, 0x7f (the lab's 3.7.2 broker:
    # 'Unexpected aborted transaction version 127')
    plant(seg_path(part, base, ".txnindex"), b"\x7fELF" + bytes(64))
    report = audit(host)
    ns = report["next_start"]
    assert ns["broker"] == "exits" and ns["check"] == "IDX003", ns["reason"]
    assert "Unexpected aborted transaction version 127" in ns["reason"]
    [f] = findings(report, "IDX003")
    assert f["severity"] == "critical" and f["path"] == seg_path(part, base, ".txnindex")
    assert "the broker exits" in f["message"]


def test_a_txnindex_entry_below_the_base_offset_rebuilds_the_segment_at_load(tmp_path) -> None:  # type: ignore[no-untyped-def]
    host = simulate(tmp_path)
    part = host.partitions["orders-0"]
    base = bases(part)[1]
    assert base > 0
    plant(seg_path(part, base, ".txnindex"), bytes(2 * 34))  # zero-filled: version 0, last offset 0 < base
    report = audit(host)
    ns = report["next_start"]
    assert ns["broker"] == "starts", ns["reason"]
    row = segment_row(report, seg_path(part, base, ".log"))
    assert row is not None and row["load"] == "indexes_rebuilt", row
    assert "below the segment's base offset" in row["reason"]
    [f] = findings(report, "IDX003")
    assert f["severity"] == "error" and f["details"]["next_start"] == "rebuilt"


def test_a_zero_filled_txnindex_of_the_first_segment_passes(tmp_path) -> None:  # type: ignore[no-untyped-def]
    host = simulate(tmp_path)
    part = host.partitions["orders-0"]
    first = bases(part)[0]
    assert first == 0
    plant(seg_path(part, first, ".txnindex"), bytes(2 * 34) + b"\x01")  # last offset 0 >= 0; a partial entry
    report = audit(host)
    assert report["next_start"]["broker"] == "starts"
    assert segment_row(report, seg_path(part, first, ".log")) is None  # loaded as it is
    assert not findings(report, "IDX003")


def test_a_txnindex_version_is_its_first_byte_only(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """0x00 0x05 is version 0 to the broker (buffer.get of one byte), 0x80 0x00 is -128: neither is the exit."""
    host = simulate(tmp_path)
    part = host.partitions["orders-0"]
    base = bases(part)[1]
    entry = aborted_txn(0, base)
    plant(seg_path(part, base, ".txnindex"), b"\x00\x05" + entry[2:] + b"\x80\x00" + entry[2:])
    report = audit(host)
    assert report["next_start"]["broker"] == "starts", report["next_start"]["reason"]
    assert segment_row(report, seg_path(part, base, ".log")) is None
    assert not findings(report, "IDX003")


def test_the_first_failing_txnindex_entry_decides(tmp_path) -> None:  # type: ignore[no-untyped-def]
    host = simulate(tmp_path)
    part = host.partitions["orders-0"]
    base = bases(part)[1]
    # a good entry, one below the base (CorruptIndexException: rebuilt), then a bad version (never read)
    plant(
        seg_path(part, base, ".txnindex"),
        aborted_txn(0, base) + aborted_txn(0, base - 1) + aborted_txn(3, base),
    )
    report = audit(host)
    assert report["next_start"]["broker"] == "starts"
    row = segment_row(report, seg_path(part, base, ".log"))
    assert row is not None and row["load"] == "indexes_rebuilt"


def unknown_for(report: dict[str, Any], tp: str) -> list[dict[str, str]]:
    return [u for u in report["next_start"]["unknown"] if f" {tp} " in u["what"]]


def test_an_active_index_entry_past_the_end_of_the_log_is_not_loaded_as_is(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """readNextOffset finds no batch from the entry's position and returns the base offset: the plan says the
    active segment's records are no longer served, not only 'loaded as is'."""
    host = simulate(tmp_path)
    part = host.partitions["orders-0"]
    active = bases(part)[-1]
    size = os.path.getsize(seg_path(part, active, ".log"))
    last_off = offset_entries(part, active)[-1][0] if offset_entries(part, active) else active
    append_offset_entry(part, active, last_off + 1000, size + 4096)
    report = audit(host)
    assert report["next_start"]["broker"] == "starts"
    # the records the file still holds past the base are lost: said on the active segment's row (the base
    # outcome of broker.next_offset, startup.next_offset_fallback), not as an unknown
    row = segment_row(report, seg_path(part, active, ".log"))
    assert row is not None and row["load"] == "as_is", row
    assert (
        f"returns the base offset {active}" in row["reason"]
        and seg_path(part, active, ".index") in row["reason"]
    )
    assert "no longer served" in row["reason"] and not unknown_for(report, "orders-0")
    assert "orders-0" in "\n".join(plan_sentences(report["next_start"]))


def test_an_active_index_entry_inside_a_batch_makes_the_broker_exit(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The last entry's position 5 bytes into its batch: the size field read there is 2 (the leader epoch's low
    bytes, then magic 2), below 14: CorruptRecordException at load, the exit."""
    host = simulate(tmp_path)
    part = host.partitions["orders-0"]
    active = bases(part)[-1]
    entries = offset_entries(part, active)
    assert entries, "the simulated active segment has index entries"
    entries[-1] = (entries[-1][0], entries[-1][1] + 5)
    write_offset_entries(part, active, entries)
    report = audit(host)
    ns = report["next_start"]
    assert ns["broker"] == "exits" and ns["check"] == "IDX003", ns["reason"]
    assert "a size field of 2" in ns["reason"]
    assert any(f["severity"] == "critical" for f in findings(report, "IDX003"))


def test_an_active_index_zero_filled_or_reversed_still_reads_the_log_end(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Zero slots look the base offset up at byte 0; reversed entries still land on a batch at or before the
    last offset: readNextOffset reads to the end either way, nothing unknown."""
    host = simulate(tmp_path)
    part, other = host.partitions["orders-0"], host.partitions["orders-1"]
    a0, a1 = bases(part)[-1], bases(other)[-1]
    index = seg_path(part, a0, ".index")
    plant(index, bytes(max(os.path.getsize(index), 16)))
    # an entry for every batch of orders-1's active segment, in reverse order
    with LogBuffer.open(seg_path(other, a1, ".log")) as buf:
        every = [(b.base_offset, b.position) for b in BatchScanner(buf, verify_crc=False)]
    assert len(every) >= 3
    write_offset_entries(other, a1, list(reversed(every)))
    report = audit(host)
    assert report["next_start"]["broker"] == "starts"
    assert not unknown_for(report, "orders-0") and not unknown_for(report, "orders-1")


def test_after_an_unclean_stop_the_txnindex_still_stops_the_start_but_the_active_index_is_rebuilt(
    tmp_path,
) -> None:  # type: ignore[no-untyped-def]
    """loadSegmentFiles (the .txnindex check) runs before recoverLog: the exit stays after a SIGKILL; the active
    segment above the recovery point is recovered (its .index rebuilt) before readNextOffset reads it."""
    host = simulate(tmp_path)
    for d in host.log_dirs:
        marker = os.path.join(d, ".kafka_cleanshutdown")
        if os.path.exists(marker):
            os.remove(marker)
    part, other = host.partitions["orders-0"], host.partitions["orders-1"]
    active = bases(other)[-1]
    size = os.path.getsize(seg_path(other, active, ".log"))
    append_offset_entry(other, active, active + 5000, size + 4096)
    report = audit(host)
    assert not unknown_for(report, "orders-1")
    plant(seg_path(part, bases(part)[1], ".txnindex"), b"\x7fELF" + bytes(64))
    ns = audit(host)["next_start"]
    assert ns["broker"] == "exits" and ns["check"] == "IDX003", ns["reason"]
