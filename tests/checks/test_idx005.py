"""IDX005: index files missing: the next start rebuilds them (info), with the bytes and time it takes."""

from __future__ import annotations

import os

from kafka_ops.broker.startup import RECOVERY_BYTES_PER_S

from .index_hosts import audit, bases, findings, seg_path, simulate


def test_idx005_missing_index_is_rebuilt_at_start(tmp_path) -> None:  # type: ignore[no-untyped-def]
    host = simulate(tmp_path)
    part = host.partitions["orders-0"]
    b = bases(part)
    os.remove(seg_path(part, b[2], ".index"))
    os.remove(seg_path(part, b[2], ".timeindex"))
    os.remove(seg_path(part, b[4], ".index"))
    size = sum(os.path.getsize(seg_path(part, x, ".log")) for x in (b[2], b[4]))

    [f] = findings(audit(host), "IDX005")
    assert (f["check"], f["severity"], f["path"], f["segment"]) == (
        "IDX005", "info", seg_path(part, b[2], ".index"), b[2],
    )  # fmt: skip
    d = f["details"]
    assert d["missing_index"] == [b[2], b[4]] and d["missing_timeindex_only"] == []
    assert d["rebuild_bytes"] == size
    assert d["rebuild_estimate_s"] == round(size / RECOVERY_BYTES_PER_S, 1)
    assert "NoSuchFileException" in f["message"] and "recoverSegment" in f["message"]


def test_idx005_missing_timeindex_is_created_empty(tmp_path) -> None:  # type: ignore[no-untyped-def]
    host = simulate(tmp_path)
    part = host.partitions["orders-1"]
    base = bases(part)[3]
    os.remove(seg_path(part, base, ".timeindex"))
    [f] = findings(audit(host), "IDX005")
    assert (f["severity"], f["path"], f["segment"]) == ("info", seg_path(part, base, ".timeindex"), base)
    assert f["details"]["missing_timeindex_only"] == [base] and f["details"]["rebuild_bytes"] == 0
    assert "creates it empty" in f["message"] and "mtime" in f["message"]


def test_idx005_rolled_index_deleted_under_a_running_broker(tmp_path) -> None:  # type: ignore[no-untyped-def]
    host = simulate(tmp_path, running=True)
    part = host.partitions["orders-2"]
    base = bases(part)[1]
    os.remove(seg_path(part, base, ".index"))
    [f] = findings(audit(host, broker_state="running"), "IDX005")
    assert (f["severity"], f["segment"]) == ("warning", base)
    assert "deleted under the broker" in f["message"]


def test_idx005_nothing_on_a_healthy_host(tmp_path, healthy_host) -> None:  # type: ignore[no-untyped-def]
    assert findings(audit(healthy_host), "IDX005") == []
    running = simulate(tmp_path, running=True)
    assert findings(audit(running, broker_state="running"), "IDX005") == []
