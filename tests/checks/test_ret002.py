"""RET002: the retention forecast per topic (bytes, segments, when), from retention.plan."""

from __future__ import annotations

from .retention_hosts import (
    CHECK_MS,
    DAY,
    FIRST_CHECK_MS,
    NOW_MS,
    TopicSpec,
    audit,
    findings,
    next_check,
    segments,
    set_topic_config,
    simulate,
)

EVENTS = TopicSpec("events", partitions=2, records_per_partition=600, span_ms=9 * DAY, retention_ms=7 * DAY)


def test_ret002_forecasts_time_retention_per_topic(tmp_path) -> None:  # type: ignore[no-untyped-def]
    host = simulate(tmp_path, [EVENTS, TopicSpec("fresh", partitions=1, span_ms=DAY)])
    report = audit(host)
    [f] = findings(report, "RET002")  # one finding per topic with deletions: not for "fresh" (1 day < 7 days)
    assert f["severity"] == "info" and f["topic"] == "events" and f["partition"] is None
    # expected from the files: records are in time order, so a segment goes at the first check after its
    # largest timestamp + retention.ms (strictly greater: + 1 ms); within 24 h
    horizon_end = NOW_MS + 24 * 3600 * 1000
    expected: list[tuple[int, int, int, int]] = []  # (partition, base, bytes, at)
    total = 0
    for p in (0, 1):
        for base, size, ts, real in segments(host.partitions[f"events-{p}"]):
            assert ts == real  # a healthy time index: its last slot is the records' max timestamp
            total += size
            at = next_check(ts + 7 * DAY + 1)
            if at <= horizon_end:
                expected.append((p, base, size, at))
    assert len(expected) >= 4
    d = f["details"]
    assert d["deleted_segments"] == len(expected)
    assert d["deleted_bytes"] == sum(e[2] for e in expected)
    assert d["bytes_now"] == total and d["bytes_at_horizon"] == total - d["deleted_bytes"]
    assert d["partitions"] == 2
    assert (
        d["first_deletion_at"] == min(e[3] for e in expected) == FIRST_CHECK_MS
    )  # already expired: first check
    assert d["last_deletion_at"] == max(e[3] for e in expected)
    assert d["by_reason"] == {"retention_ms": {"bytes": d["deleted_bytes"], "segments": len(expected)}}
    assert d["check_interval_ms"] == CHECK_MS
    got = {(s["partition"], s["base_offset"], s["bytes"], s["delete_at"]) for s in d["segments"]}
    assert got == set(expected)
    assert all(s["timestamp_source"] == "time_index" and s["reason"] == "retention_ms" for s in d["segments"])
    # the series: the topic's size after each check that deletes something, ending at bytes_at_horizon
    series = d["series"]
    assert [p["at_ms"] for p in series] == sorted({e[3] for e in expected})
    assert series[-1]["bytes"] == d["bytes_at_horizon"]
    assert sum(p["deleted_bytes"] for p in series) == d["deleted_bytes"]
    drop = max(series, key=lambda p: p["deleted_bytes"])
    assert d["largest_drop"]["bytes"] == drop["deleted_bytes"]
    assert (
        f"{d['deleted_bytes']} bytes" in f["message"] and "at the first retention check after" in f["message"]
    )
    assert "retention.ms=<ms>" in f["remediation"] and "--entity-name events" in f["remediation"]


def test_ret002_size_retention_deletes_oldest_segments_at_the_first_check(tmp_path) -> None:  # type: ignore[no-untyped-def]
    host = simulate(tmp_path, [TopicSpec("metrics", partitions=1, records_per_partition=600, span_ms=DAY)])
    segs = segments(host.partitions["metrics-0"])
    total = sum(s[1] for s in segs)
    limit = total - segs[0][1] - segs[1][1] - 10  # 2 segments + 10 bytes over: 2 go (10 B is no segment)
    set_topic_config(host, "metrics", retention_bytes=str(limit))
    [f] = findings(audit(host), "RET002")
    d = f["details"]
    # UnifiedLog.deleteRetentionSizeBreachedSegments: diff = size - retention.bytes; delete while diff - size >= 0
    diff, gone = total - limit, []
    for base, size, _ts, _real in segs:
        if diff - size < 0:
            break
        diff -= size
        gone.append((base, size))
    assert len(gone) == 2
    assert d["by_reason"] == {"retention_bytes": {"bytes": sum(s for _, s in gone), "segments": 2}}
    assert [(s["base_offset"], s["bytes"], s["delete_at"]) for s in d["segments"]] == [
        (b, s, FIRST_CHECK_MS) for b, s in gone
    ]
    assert d["series"] == [
        {"at_ms": FIRST_CHECK_MS, "deleted_bytes": sum(s for _, s in gone), "deleted_segments": 2,
         "bytes": total - sum(s for _, s in gone)}
    ]  # fmt: skip


def test_ret002_no_finding_on_a_healthy_host(healthy_host) -> None:  # type: ignore[no-untyped-def]
    report = audit(healthy_host)
    assert "RET002" in report["checks_run"]
    assert findings(report, "RET002") == []


def test_ret002_leaves_out_a_log_dir_the_next_start_takes_offline(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # events-0/2 land in one log dir, events-1/3 in the other; events-2's leader-epoch-checkpoint cannot be parsed:
    # loading it takes its whole dir offline (failure_channel, KIP-112), events-0 included, which the audit
    # gathered before it met events-2: the next start deletes nothing in that dir
    events = TopicSpec(
        "events", partitions=4, records_per_partition=600, span_ms=9 * DAY, retention_ms=7 * DAY
    )
    host = simulate(tmp_path, [events])
    bad = host.partitions["events-2"].rsplit("/", 1)[0]
    assert host.partitions["events-0"].startswith(bad + "/")
    assert not host.partitions["events-1"].startswith(bad + "/")
    with open(f"{host.partitions['events-2']}/leader-epoch-checkpoint", "w") as f:
        f.write("0\n1\nnot an epoch\n")
    report = audit(host)
    ns = report["next_start"]
    assert ns["broker"] == "starts"
    assert next(d for d in ns["log_dirs"] if d["path"] == bad)["state"] == "offline"
    [f] = findings(report, "RET002")
    [topic] = [t for t in report["forecast"]["topics"] if t["topic"] == "events"]
    d = f["details"]
    # the finding says what the report's forecast says: only the online dir's partitions lose segments
    assert d["deleted_bytes"] == topic["deleted_bytes"] > 0
    assert d["deleted_segments"] == topic["deleted_segments"]
    assert d["bytes_now"] == topic["bytes_now"] and d["series"] == topic["series"]
    assert {s["partition"] for s in d["segments"]} == {1, 3}
    assert d["deleted_bytes"] == sum(s["bytes"] for s in d["segments"])
    assert f"({d['deleted_bytes']} bytes)" in f["message"]
