"""RET004: compact,delete keeps records older than retention.ms in a segment with newer ones (seed 003)."""

from __future__ import annotations

import os

from .retention_hosts import (
    CLEANER_MS,
    DAY,
    HOUR,
    NOW_MS,
    Failures,
    add_server_property,
    audit,
    findings,
    next_check,
    plant_seed_003,
    segments,
    simulate,
    write_partition,
)


def test_ret004_seed_003_old_records_merged_with_new_ones(tmp_path) -> None:  # type: ignore[no-untyped-def]
    host = simulate(tmp_path, [])
    part = plant_seed_003(host)
    [(b0, size0, ts0, _), (b1, _, _, _)] = segments(part)
    assert (b0, b1) == (0, 40) and ts0 == NOW_MS - 2 * HOUR + 39 * 1000
    report = audit(host)
    [f] = findings(report, "RET004")
    assert f["severity"] == "warning"
    assert (f["topic"], f["partition"], f["segment"]) == ("user-state", 0, 0)
    assert f["path"] == os.path.join(part, "00000000000000000000.log")
    d = f["details"]
    assert d["cause"] == "cleaner_merge" and d["cleaner_offset"] == 40
    assert d["first_record_timestamp"] == NOW_MS - 120 * DAY
    assert d["age_ms"] == 120 * DAY and d["over_retention_ms"] == 113 * DAY
    assert d["largest_timestamp"] == ts0 and d["timestamp_source"] == "time_index"
    # retention of compacted topics runs in the cleaner thread, every log.cleaner.backoff.ms (15 s) when idle:
    # the segment goes at the first of those checks after its largest timestamp + 7 d (+ 1 ms)
    assert d["kept_until"] == next_check(ts0 + 7 * DAY + 1, CLEANER_MS) == NOW_MS + 597_645_000
    assert d["bytes"] == size0 and d["next_segment_offset"] == 40
    assert "120.0 days old" in f["message"] and "groupSegmentsBySize" in f["message"]
    fix = f["remediation"]
    assert "null.marker=NULL" in fix and "min.compaction.lag.ms=604800000" in fix
    assert "segment.ms=86400000" in fix and "delete.retention.ms does not help" in fix
    assert '"offset": 40' in fix and "kafka-delete-records" in fix
    # the forecast agrees: RET002 has nothing to say about user-state within 24 h
    assert [x for x in findings(report, "RET002") if x["topic"] == "user-state"] == []


def test_ret004_active_segment_and_cleaner_disabled(tmp_path) -> None:  # type: ignore[no-untyped-def]
    host = simulate(tmp_path, [])
    # one segment (the active one, never cleaned) spanning 30 days
    write_partition(
        host, "profiles-cd", [(NOW_MS - 30 * DAY, "a"), (NOW_MS - HOUR, "b")],
        config={"cleanup.policy": "compact,delete", "retention.ms": str(7 * DAY)},
    )  # fmt: skip
    [f] = findings(audit(host), "RET004")
    assert f["details"]["cause"] == "active_segment" and f["details"]["age_ms"] == 30 * DAY
    add_server_property(host, "log.cleaner.enable=false")
    [f] = findings(audit(host), "RET004")
    assert f["details"]["cause"] == "cleaner_disabled" and f["details"]["kept_until"] is None
    assert "log.cleaner.enable=true" in f["remediation"]


def test_ret004_no_finding_when_the_old_segment_expires_whole(tmp_path) -> None:  # type: ignore[no-untyped-def]
    host = simulate(tmp_path, [])
    # segment 0 holds only old records: it goes at the first check, and the old records with it
    write_partition(
        host, "tidy", [(NOW_MS - 20 * DAY + i * HOUR, f"k{i}") for i in range(5)] + [(NOW_MS - HOUR, "new")],
        roll_before=(5,), config={"cleanup.policy": "compact,delete", "retention.ms": str(7 * DAY)},
        cleaner_offset=5,
    )  # fmt: skip
    # a plain compact topic keeps old records by design: not this check's business
    write_partition(
        host, "state", [(NOW_MS - 90 * DAY, "a"), (NOW_MS - HOUR, "b"), (NOW_MS, "c")], roll_before=(2,),
        config={"cleanup.policy": "compact", "retention.ms": str(7 * DAY)}, log_dir=1,
    )  # fmt: skip
    report = audit(host)
    assert findings(report, "RET004") == []
    [r2] = [x for x in findings(report, "RET002") if x["topic"] == "tidy"]
    # deleted by the cleaner thread's second pass after the start (its first sees high watermarks of 0), one
    # log.cleaner.backoff.ms (15 s) later
    assert [(s["base_offset"], s["delete_at"]) for s in r2["details"]["segments"]] == [(0, NOW_MS + 15_000)]


def test_ret004_no_finding_on_a_healthy_host(healthy_host) -> None:  # type: ignore[no-untyped-def]
    report = audit(healthy_host)
    assert "RET004" in report["checks_run"]
    assert findings(report, "RET004") == []


def test_ret004_simulator_failure_flag(tmp_path) -> None:  # type: ignore[no-untyped-def]
    host = simulate(tmp_path, [], failures=Failures(compact_delete_old=True))
    [f] = findings(audit(host), "RET004")
    assert f["segment"] == 0 and f["details"]["age_ms"] == 120 * DAY


DEAD_CLEANER = [
    "[2026-09-01 11:52:48,923] ERROR [kafka-log-cleaner-thread-0]: Error due to (kafka.log.LogCleaner)",
    "java.lang.IllegalStateException: This log contains a message larger than maximum allowable size of 1000012.",
    "[2026-09-01 11:52:48,924] INFO [kafka-log-cleaner-thread-0]: Stopped (kafka.log.LogCleaner)",
]


def _expired_compact_delete(host) -> None:  # type: ignore[no-untyped-def]
    # segment 0 wholly past retention (20 days old), segment 5 active and recent
    write_partition(
        host, "tidy", [(NOW_MS - 20 * DAY + i * HOUR, f"k{i}") for i in range(5)] + [(NOW_MS - HOUR, "new")],
        roll_before=(5,), config={"cleanup.policy": "compact,delete", "retention.ms": str(7 * DAY)},
        cleaner_offset=5,
    )  # fmt: skip


def test_ret004_running_broker_whose_every_cleaner_thread_died_deletes_nothing_until_restart(
    tmp_path,
) -> None:  # type: ignore[no-untyped-def]
    host = simulate(tmp_path, [])
    _expired_compact_delete(host)
    log = tmp_path / "log-cleaner.log"
    log.write_text("\n".join(DEAD_CLEANER) + "\n")
    # stopped: the next start's new cleaner deletes segment 0 at its second pass; nothing to say
    assert findings(audit(host, logs=[str(log)], kafka_version="1.1.0"), "RET004") == []
    # running with its only cleaner thread dead: retention of compacted topics runs in the cleaner threads only
    report = audit(host, logs=[str(log)], kafka_version="1.1.0", broker_state="running")
    [f] = findings(report, "RET004")
    d = f["details"]
    assert d["cause"] == "cleaner_stalled" and d["kept_until"] is None and d["age_ms"] == 20 * DAY
    assert "is past retention as a whole" in f["message"]
    assert "every log-cleaner thread is dead (kafka-log-cleaner-thread-0" in f["message"]
    assert "until the broker restarts" in f["message"]
    assert (
        "once the cleaner's cause is removed, deletes 1 segment(s), 420 B" in f["message"]
        and "(15 s) after the start" in f["message"]
    )
    assert "restart the broker" in f["remediation"] and "log.cleaner.enable=true" not in f["remediation"]
    # one surviving thread of two runs retention for every compacted log: nothing stalls
    add_server_property(host, "log.cleaner.threads=2")
    assert (
        findings(audit(host, logs=[str(log)], kafka_version="1.1.0", broker_state="running"), "RET004") == []
    )


def test_ret004_uncleanable_partition_is_skipped_by_retention_from_2_1_until_a_restart(tmp_path) -> None:  # type: ignore[no-untyped-def]
    host = simulate(tmp_path, [])
    _expired_compact_delete(host)
    log = tmp_path / "log-cleaner.log"
    # Kafka 2.2's text (LogCleaner.scala@2.2.0:340; Log.toString is "Log(<dir>)"): a dir named kafka-1 must not be
    # taken for the partition
    marked = (
        "[2026-09-01 11:52:48,923] WARN [kafka-log-cleaner-thread-0]: Unexpected exception thrown when cleaning "
        "log Log(/data/kafka-1/tidy-0). Marking its partition (tidy-0) as uncleanable (kafka.log.LogCleaner)"
    )
    log.write_text(marked + "\n")
    [f] = findings(audit(host, logs=[str(log)], kafka_version="2.2.0", broker_state="running"), "RET004")
    assert f["details"]["cause"] == "cleaner_stalled"
    assert "marked tidy-0 uncleanable at 2026-09-01 11:52:48,923" in f["message"]
    # another partition's mark does not stall this one
    log.write_text(marked.replace("tidy-0", "other-0") + "\n")
    assert (
        findings(audit(host, logs=[str(log)], kafka_version="2.2.0", broker_state="running"), "RET004") == []
    )
    # a start after the mark clears it (the set is in memory only)
    start = "[2026-09-02 08:00:00,000] INFO Loading logs. (kafka.log.LogManager)"
    log.write_text(marked + "\n" + start + "\n")
    assert (
        findings(audit(host, logs=[str(log)], kafka_version="2.2.0", broker_state="running"), "RET004") == []
    )
