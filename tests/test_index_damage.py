"""Index damage at the next start (issue 36 §2): what the plan (``next_start``) and the checks say of a
segment's damaged ``.txnindex`` / ``.index`` / ``.timeindex``, on planted files of a simulated stopped host.
The lab's real brokers are the judges (tests/lab/scenarios.py INDEX_DAMAGE, docs/fidelity.md)."""

from __future__ import annotations

import struct
from typing import Any

from tests.checks.index_hosts import audit, bases, findings, seg_path, simulate


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
    # garbage where the file was: the first entry's version 0x7f45 (an ELF header)
    plant(seg_path(part, base, ".txnindex"), b"\x7fELF" + bytes(64))
    report = audit(host)
    ns = report["next_start"]
    assert ns["broker"] == "exits" and ns["check"] == "IDX003", ns["reason"]
    assert "Unexpected aborted transaction version 32581" in ns["reason"]
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
