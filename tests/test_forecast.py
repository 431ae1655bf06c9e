"""`kafka-ops forecast` and kafka_ops.broker.forecast: per-segment timestamps and deletions, per-topic sizes over time."""

from __future__ import annotations

import csv
import inspect
import io
import json

from kafka_ops.broker.forecast import HostForecast, iter_forecasts
from kafka_ops.facts.collect import gather

from .checks.retention_hosts import (
    CHECK_MS,
    CLEANER_MS,
    DAY,
    NOW_MS,
    Failures,
    TopicSpec,
    add_server_property,
    audit,
    cli,
    cli_inputs,
    findings,
    next_check,
    options,
    plant_seed_003,
    segments,
    simulate,
)


def _json(host, *extra: str) -> dict:  # type: ignore[no-untyped-def]
    r = cli("forecast", *cli_inputs(host, "--format", "json", *extra))
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def _segment(doc: dict, topic: str, partition: int, base: int) -> dict:  # type: ignore[type-arg]
    [p] = [p for p in doc["partitions"] if (p["topic"], p["partition"]) == (topic, partition)]
    [s] = [s for s in p["segments"] if s["base_offset"] == base]
    return s  # type: ignore[no-any-return]


def test_json_zero_padded_segment_is_deleted_early_as_ret001_says(tmp_path) -> None:  # type: ignore[no-untyped-def]
    host = simulate(
        tmp_path, [TopicSpec("orders", partitions=1, records_per_partition=600)],
        failures=Failures(untrimmed_timeindex=True),
    )  # fmt: skip
    padded = host.planted["untrimmed_timeindex"][0]
    base = int(padded.rsplit("/", 1)[1].split(".")[0])
    doc = _json(host, "--horizon", "7d")
    assert doc["now_ms"] == NOW_MS and doc["horizon_ms"] == 7 * DAY and doc["broker_state"] == "stopped"
    s = _segment(doc, "orders", 0, base)
    assert s["timestamp_source"] == "zero_padding" and s["timestamp"] == 0
    assert s["delete_reason"] == "retention_ms" and s["in_horizon"] is True
    # the same deletion time as RET001's, and earlier than the segment's records warrant
    [r1] = findings(audit(host), "RET001")
    assert r1["segment"] == base and s["delete_at"] == r1["details"]["deleted_at_ms"]
    real = {b: real for b, _size, _ts, real in segments(host.partitions["orders-0"])}[base]
    warranted = next_check(real + 7 * DAY + 1)
    assert warranted == r1["details"]["expected_deletion_ms"] and s["delete_at"] < warranted
    # timestamp 0 has expired, so only the older (healthy, unexpired) segments hold it: deletableSegments
    prev = max(b for b in (seg[0] for seg in segments(host.partitions["orders-0"])) if b < base)
    assert s["held_by"] == prev and s["delete_at"] == _segment(doc, "orders", 0, prev)["delete_at"]
    [t] = [t for t in doc["topics"] if t["topic"] == "orders"]
    assert t["timestamp_sources"]["zero_padding"] == 1 and doc["errors"] == []


def test_csv_rows_per_segment_and_topic_sizes(tmp_path) -> None:  # type: ignore[no-untyped-def]
    host = simulate(
        tmp_path, [TopicSpec("events", partitions=2, records_per_partition=600, span_ms=9 * DAY, retention_ms=7 * DAY)]
    )  # fmt: skip
    r = cli("forecast", *cli_inputs(host, "--format", "csv"))
    assert r.returncode == 0, r.stderr
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    seg_rows = [x for x in rows if x["kind"] == "segment"]
    on_disk = {
        (p, b): (size, ts) for p in (0, 1) for b, size, ts, _ in segments(host.partitions[f"events-{p}"])
    }
    got = {(int(x["partition"]), int(x["base_offset"])): x for x in seg_rows if x["topic"] == "events"}
    assert set(got) == set(on_disk)
    for key, (size, ts) in on_disk.items():
        x = got[key]
        assert (
            int(x["bytes"]) == size and int(x["timestamp_ms"]) == ts and x["timestamp_source"] == "time_index"
        )
        # records in time order: each segment goes at the first check after its own expiry
        assert int(x["delete_at_ms"]) == next_check(ts + 7 * DAY + 1) and x["delete_reason"] == "retention_ms"
        assert x["in_horizon"] == str(int(x["delete_at_ms"]) <= NOW_MS + DAY).lower()
    sizes = [x for x in rows if x["kind"] == "topic_size" and x["topic"] == "events"]
    total = sum(size for size, _ in on_disk.values())
    gone = {}
    for x in got.values():
        if x["in_horizon"] == "true":
            gone[int(x["delete_at_ms"])] = gone.get(int(x["delete_at_ms"]), 0) + int(x["bytes"])
    assert [int(x["at_ms"]) for x in sizes] == sorted(gone)
    left = total
    for x in sizes:
        left -= gone[int(x["at_ms"])]
        assert int(x["topic_bytes"]) == left and int(x["deleted_bytes"]) == gone[int(x["at_ms"])]
    # the same numbers as RET002's
    [r2] = findings(audit(host), "RET002")
    assert r2["details"]["deleted_bytes"] == total - left
    # --every-check: the size at each check of 24 h (every 5 min from the first, 30 s after the start)
    r = cli("forecast", *cli_inputs(host, "--format", "csv", "--every-check"))
    dense = [
        x
        for x in csv.DictReader(io.StringIO(r.stdout))
        if x["kind"] == "topic_size" and x["topic"] == "events"
    ]
    assert len(dense) == (DAY - 30_000) // CHECK_MS + 1 and int(dense[-1]["topic_bytes"]) == left


def test_library_streams_the_audit_facts_and_agrees_with_ret002(tmp_path) -> None:  # type: ignore[no-untyped-def]
    host = simulate(tmp_path, [TopicSpec("events", partitions=2, span_ms=9 * DAY)])
    plant_seed_003(host)
    facts = gather(options(host))
    calls: list[tuple[str, int, int]] = []
    it = iter_forecasts(facts, lambda d, done, total: calls.append((d, done, total)))
    assert inspect.isgenerator(it)  # one partition at a time
    hf = HostForecast(facts.now_ms, facts.horizon_ms)
    for n, fc in enumerate(it, start=1):
        assert len(calls) == n - 1  # each partition is forecast before the next one is read
        hf.add(fc)
    assert {(d, total) for d, _, total in calls} == {(d, calls_total(calls, d)) for d in host.log_dirs}
    section = hf.to_dict()
    assert section["horizon_end_ms"] == NOW_MS + DAY and section["assumptions"]
    by_topic = {t["topic"]: t for t in section["topics"]}
    r2 = {f["topic"]: f["details"] for f in findings(audit(host), "RET002")}
    assert set(r2) == {t for t, v in by_topic.items() if v["deleted_bytes"]}
    for t, d in r2.items():
        assert d["deleted_bytes"] == by_topic[t]["deleted_bytes"] and d["series"] == by_topic[t]["series"]
    # compact,delete: retention runs in the cleaner thread (every log.cleaner.backoff.ms)
    assert by_topic["user-state"]["check_interval_ms"] == CLEANER_MS
    assert sum(d["deleted_bytes"] for d in section["log_dirs"]) == section["deleted_bytes"]


def calls_total(calls: list[tuple[str, int, int]], log_dir: str) -> int:
    return max(done for d, done, _ in calls if d == log_dir)


def test_compacted_topics_are_never_deleted_without_a_cleaner(tmp_path) -> None:  # type: ignore[no-untyped-def]
    host = simulate(tmp_path, [])
    plant_seed_003(host)
    add_server_property(host, "log.cleaner.enable=false")
    doc = _json(host, "--horizon", "30d")
    [p] = [p for p in doc["partitions"] if p["topic"] == "user-state"]
    assert (
        p["retention_check"]["runs"] is False and "log.cleaner.enable=false" in p["retention_check"]["note"]
    )
    assert all(s["delete_at"] is None and "cleaner" in s["note"] for s in p["segments"])


def test_running_broker_active_segment_uses_its_records(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # a running broker preallocates the active segment's .timeindex (zero slots): that is not KAFKA-10207
    host = simulate(tmp_path, [TopicSpec("logs", partitions=1, span_ms=10 * DAY)], running=True)
    segs = segments(host.partitions["logs-0"])
    active, real = segs[-1][0], segs[-1][3]
    doc = _json(host, "--broker-state", "running")
    s = _segment(doc, "logs", 0, active)
    assert s["timestamp_source"] == "active_segment" and s["timestamp"] == real
    assert s["delete_at"] == next_check(real + 7 * DAY + 1, first=NOW_MS)


def test_table_and_bad_input(tmp_path) -> None:  # type: ignore[no-untyped-def]
    host = simulate(tmp_path, [], failures=Failures(future_timestamps=True))
    r = cli("forecast", *cli_inputs(host))
    assert r.returncode == 0, r.stderr
    assert "Topic size over the horizon" in r.stdout and "sensor-readings-0" in r.stdout
    assert "(held" in r.stdout and "by segment 20)" in r.stdout  # segment 40 waits for segment 20
    assert "2026-10-21" in r.stdout  # segment 20's timestamp, 30 days in the future
    r = cli("forecast", "--log-dir", str(tmp_path / "nope"), "--now", "yesterday")
    assert r.returncode == 2 and "--now: not a time" in r.stderr and "Traceback" not in r.stderr


def test_topic_filters_the_forecast_to_those_topics(tmp_path) -> None:  # type: ignore[no-untyped-def]
    host = simulate(
        tmp_path,
        [
            TopicSpec(
                "events", partitions=2, records_per_partition=300, span_ms=9 * DAY, retention_ms=7 * DAY
            ),
            TopicSpec(
                "audit", partitions=1, records_per_partition=300, span_ms=9 * DAY, retention_ms=7 * DAY
            ),
        ],
    )
    whole = _json(host)
    assert {"events", "audit"} <= {p["topic"] for p in whole["partitions"]}
    doc = _json(host, "--topic", "audit")
    assert {(p["topic"], p["partition"]) for p in doc["partitions"]} == {("audit", 0)}
    assert [t["topic"] for t in doc["topics"]] == ["audit"]
    [a] = [t for t in whole["topics"] if t["topic"] == "audit"]
    assert doc["topics"][0] == a  # the same numbers as in the whole forecast
    doc = _json(host, "--topic", "audit", "-t", "events")
    assert {p["topic"] for p in doc["partitions"]} == {"audit", "events"}
    r = cli("forecast", *cli_inputs(host, "--format", "csv", "--topic", "events"))
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    assert rows and {x["topic"] for x in rows} == {"events"}
    r = cli("forecast", *cli_inputs(host, "--topic", "audit", "--topic", "nosuch"))
    assert r.returncode == 0 and "Topic size over the horizon" in r.stdout and "audit" in r.stdout
    assert "events-0" not in r.stdout
    assert "no partition of topic(s) 'nosuch' in the log dirs" in r.stderr


def test_csv_has_one_line_per_row_whatever_the_names(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Issue 37: a log dir (and a topic) named with a newline and a command: each row stays on one line, every
    line starts with a quote, so no line of the file is the broker user's command (a shell reading it runs none)."""
    root = tmp_path / "d\n$(touch /tmp/x)"
    root.mkdir(parents=True)
    topic = "e\n$(touch${IFS}PWNED)\x1b]52;c;ZWNobyBwd25lZA==\x07"
    host = simulate(root, [TopicSpec(topic, partitions=1, records_per_partition=300, span_ms=9 * DAY)])
    r = cli("forecast", *cli_inputs(host, "--format", "csv"))
    assert r.returncode == 0, r.stderr
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    lines = r.stdout.splitlines()
    assert rows and len(lines) == len(rows) + 1
    assert all(line.startswith('"') for line in lines), [x for x in lines if not x.startswith('"')]
    assert not any(c in r.stdout for c in "\r\x1b\x07")
    seg = next(x for x in rows if x["kind"] == "segment" and x["topic"].startswith("e"))
    # the names shown escaped, whole
    assert seg["topic"] == "e\\n$(touch${IFS}PWNED)\\e]52;c;ZWNobyBwd25lZA==\\x07"
    assert seg["log_dir"].startswith(str(tmp_path) + "/d\\n$(touch /tmp/x)/")


def test_without_topic_configs_the_forecast_says_the_broker_defaults_were_assumed(tmp_path) -> None:  # type: ignore[no-untyped-def]
    host = simulate(tmp_path, [])
    args = cli_inputs(host)
    i = args.index("--topic-configs")
    bare = args[:i] + args[i + 2 :]  # no topic configs, no metadata log in the dirs: the defaults are assumed
    r = cli("forecast", *bare)
    assert r.returncode == 0, r.stderr
    assert "Retention assumes the broker's defaults for every topic: no topic config was read" in " ".join(
        r.stdout.split()
    )
    doc = json.loads(cli("forecast", *bare, "--format", "json").stdout)
    assert doc["config_note"].startswith("no topic config was read")
    # with them, nothing assumed
    r = cli("forecast", *args)
    assert "assumes the broker's defaults" not in r.stdout
    assert _json(host)["config_note"] is None
