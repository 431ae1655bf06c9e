"""IDX001: index size not a multiple of its entry size (8 / 12 / 34)."""

from __future__ import annotations

import os

from .index_hosts import Failures, audit, bases, findings, seg_path, simulate


def test_idx001_offset_index_with_trailing_bytes(tmp_path) -> None:  # type: ignore[no-untyped-def]
    host = simulate(tmp_path, failures=Failures(bad_index_size=True))
    [planted] = host.planted["bad_index_size"]
    size = os.path.getsize(planted)
    assert size % 8 == 5

    [f] = findings(audit(host, kafka_version="3.7.0"), "IDX001")
    assert (f["check"], f["severity"], f["path"], f["segment"]) == ("IDX001", "error", planted, 0)
    d = f["details"]
    assert (d["index"], d["size"], d["entry_size"], d["whole_entries"], d["remainder"]) == (
        "offset", size, 8, size // 8, 5,
    )  # fmt: skip
    # 3.7.0 after a clean stop: no sanity check at load (KAFKA-7283), the segment is not recovered
    assert d["next_start"] == "kept"
    assert f"roundDownToExactMultiple({size}, 8) / 8 = {size // 8}" in f["message"]
    assert "ignores the 5 trailing bytes" in f["message"] and "KAFKA-7283" in f["message"]
    assert "kafka-ops fix indexes" in f["remediation"]

    # up to 2.2.x the sanity check at load rejects it and the segment is rebuilt
    [old] = findings(audit(host, kafka_version="2.2.0"), "IDX001")
    assert old["details"]["next_start"] == "rebuilt"
    assert f"found {size} bytes which is neither positive nor a multiple of 8" in old["message"]
    # unknown version: both outcomes are stated
    [unknown] = findings(audit(host, kafka_version=None), "IDX001")
    assert unknown["details"]["next_start"] == "depends" and "older than 2.3.0" in unknown["message"]


def test_idx001_txnindex_remainder_on_the_active_segment(tmp_path) -> None:  # type: ignore[no-untyped-def]
    host = simulate(tmp_path)
    part = host.partitions["payments-0"]
    rolled, active = bases(part)[1], bases(part)[-1]
    with open(seg_path(part, rolled, ".txnindex"), "ab") as fh:
        fh.write(b"\x00\x01\x02")  # a rolled segment's index: only ignored
    with open(seg_path(part, active, ".txnindex"), "wb") as fh:
        fh.write(bytes(34 + 7))  # the active segment's: the next entry would be appended off the grid

    found = {f["segment"]: f for f in findings(audit(host), "IDX001")}
    assert set(found) == {rolled, active}
    r, a = found[rolled], found[active]
    assert r["path"] == seg_path(part, rolled, ".txnindex") and r["severity"] == "error"
    assert r["details"]["remainder"] == 3 and r["details"]["index"] == "txn"
    assert "remainder is only ignored" in r["message"]
    assert a["details"]["remainder"] == 7 and a["details"]["whole_entries"] == 1
    assert "7 bytes off the 34-byte grid" in a["message"]


def test_idx001_nothing_on_a_healthy_host(healthy_host) -> None:  # type: ignore[no-untyped-def]
    for version in ("3.7.0", "2.0.0", None):
        assert findings(audit(healthy_host, kafka_version=version), "IDX001") == []
