"""RET003: a record timestamp in the future stalls time retention for its segment and every later one."""

from __future__ import annotations

import os

from .retention_hosts import (
    DAY,
    FIRST_CHECK_MS,
    HOUR,
    NOW_MS,
    Failures,
    TopicSpec,
    audit,
    findings,
    next_check,
    segments,
    simulate,
    write_partition,
)


def test_ret003_future_timestamp_holds_back_later_segments(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # sensor-readings-0 (retention.ms 3 d): records 10 days old, one of them (offset 20) stamped now + 30 d
    host = simulate(tmp_path, failures=Failures(future_timestamps=True))
    part = host.partitions["sensor-readings-0"]
    segs = {base: (size, ts) for base, size, ts, _real in segments(part)}
    assert sorted(segs) == [0, 20, 40] and segs[20][1] == NOW_MS + 30 * DAY
    report = audit(host)
    [f] = findings(report, "RET003")
    assert f["severity"] == "warning"
    assert (f["topic"], f["partition"], f["segment"]) == ("sensor-readings", 0, 20)
    assert f["path"] == os.path.join(part, "00000000000000000020.log")
    d = f["details"]
    # released at the first 5-minute check after now + 30 d + 3 d (strictly greater: + 1 ms)
    assert d["release_at"] == next_check(NOW_MS + 30 * DAY + 3 * DAY + 1) == NOW_MS + 33 * DAY + 30_000
    assert d["last_release_at"] == d["release_at"]
    # held back: segment 20 (its other records are 9 days old) and segment 40 (8 days old), both of which
    # would go at the first check; segment 0 goes anyway (not held)
    assert d["held_back_segments"] == [20, 40]
    assert d["held_back_bytes"] == segs[20][0] + segs[40][0]
    assert d["held_back_in_horizon_segments"] == [20, 40]
    assert d["would_delete_at"] == {"20": FIRST_CHECK_MS, "40": FIRST_CHECK_MS}
    [fs] = d["future_segments"]
    assert fs["timestamp"] == NOW_MS + 30 * DAY and fs["timestamp_source"] == "time_index"
    assert fs["future_batches"] == 1 and fs["first_future_offset"] == 20
    assert fs["other_records_max_timestamp"] == NOW_MS - 10 * DAY + 39 * HOUR
    assert f"{d['held_back_bytes']} bytes" in f["message"] and "33.0 days" in f["message"]
    assert "message.timestamp.after.max.ms=3600000" in f["remediation"]
    assert '"offset": 40' in f["remediation"] and "nothing retention would keep is lost" in f["remediation"]
    # RET002 only forecasts what really goes: segment 0
    [r2] = [x for x in findings(report, "RET002") if x["topic"] == "sensor-readings"]
    assert [s["base_offset"] for s in r2["details"]["segments"]] == [0]


def test_ret003_old_broker_gets_the_difference_config(tmp_path) -> None:  # type: ignore[no-untyped-def]
    host = simulate(tmp_path, failures=Failures(future_timestamps=True))
    [f] = findings(audit(host, kafka_version="3.5.1"), "RET003")
    assert "message.timestamp.difference.max.ms=3600000" in f["remediation"]


def test_ret003_within_tolerance_or_deleted_by_size_is_no_finding(tmp_path) -> None:  # type: ignore[no-untyped-def]
    host = simulate(tmp_path, [])
    # 30 minutes ahead: clock drift within the hour of tolerance
    write_partition(
        host, "drift", [(NOW_MS - 5 * DAY, "a"), (NOW_MS + 30 * 60 * 1000, "b"), (NOW_MS - 4 * DAY, "c")],
        roll_before=(1, 2), config={"retention.ms": str(3 * DAY)},
    )  # fmt: skip
    # a future segment that retention.bytes deletes at the first check anyway holds nothing back
    write_partition(
        host, "capped", [(NOW_MS - 5 * DAY, "a"), (NOW_MS + 9 * DAY, "b"), (NOW_MS - 4 * DAY, "c")],
        roll_before=(1, 2), config={"retention.ms": str(3 * DAY), "retention.bytes": "1"}, log_dir=1,
    )  # fmt: skip
    assert findings(audit(host), "RET003") == []


def test_ret003_no_finding_on_a_healthy_host(healthy_host) -> None:  # type: ignore[no-untyped-def]
    report = audit(healthy_host)
    assert "RET003" in report["checks_run"]
    assert findings(report, "RET003") == []


def test_ret003_future_records_in_the_active_segment_hold_themselves(tmp_path) -> None:  # type: ignore[no-untyped-def]
    host = simulate(tmp_path, [TopicSpec("x", partitions=1)])
    write_partition(
        host, "late", [(NOW_MS - 6 * DAY, "a"), (NOW_MS - 5 * DAY, "b"), (NOW_MS + 2 * DAY, "c")],
        roll_before=(1,), config={"retention.ms": str(3 * DAY)},
    )  # fmt: skip
    [f] = findings(audit(host), "RET003")
    d = f["details"]
    assert f["segment"] == 1 and d["held_back_segments"] == [1]
    assert d["release_at"] == next_check(NOW_MS + 2 * DAY + 3 * DAY + 1)
    # its other record (5 days old) would have gone at the first check
    assert d["would_delete_at"] == {"1": FIRST_CHECK_MS}
    assert '"offset": 3' in f["remediation"]  # the log end offset: the whole active segment
