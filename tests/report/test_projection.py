"""The report's size projection (kafka_ops.broker.forecast.project_partition): rolls and the one retention model."""

from __future__ import annotations

from pathlib import Path

from kafka_ops.broker.forecast import HostForecast, PartitionForecast, iter_forecasts, projection_grid
from kafka_ops.facts.collect import gather

from ..checks.retention_hosts import CHECK_MS, DAY, NOW_MS, TopicSpec, audit, options, simulate

SEGMENT = 16 * 1024  # log.segment.bytes of the simulated hosts


def _forecasts(tmp_path: Path, topic: TopicSpec, horizon_ms: int) -> list[PartitionForecast]:
    host = simulate(tmp_path, [topic])
    fcs = iter_forecasts(gather(options(host, horizon_ms=horizon_ms)))
    return [fc for fc in fcs if fc.topic == topic.name]  # the simulator adds __consumer_offsets


def _section(fcs: list[PartitionForecast], horizon_ms: int, rate_bytes_per_ms: float | None = None) -> dict:  # type: ignore[type-arg]
    hf = HostForecast(NOW_MS, horizon_ms, project_every_ms=CHECK_MS)
    for fc in fcs:
        if rate_bytes_per_ms is not None:
            fc.rate = rate_bytes_per_ms
        hf.add(fc)
    return hf.to_dict()


def test_without_arrivals_the_projection_is_the_forecast(tmp_path: Path) -> None:
    horizon = 5 * DAY
    fcs = _forecasts(
        tmp_path, TopicSpec("events", partitions=2, records_per_partition=600, span_ms=9 * DAY), horizon
    )
    d = _section(fcs, horizon, rate_bytes_per_ms=0.0)
    [t] = d["topics"]
    grid = d["projection"]["at_ms"]
    assert (
        grid == projection_grid(NOW_MS, horizon, CHECK_MS)
        and grid[0] == NOW_MS
        and grid[-1] <= NOW_MS + horizon
    )
    assert len(grid) <= 241 and (grid[1] - grid[0]) % CHECK_MS == 0
    # the forecast's step function (size after each check that deletes), read at each point
    steps = t["series"]
    assert len(steps) >= 3  # deletions spread over the horizon
    expected = []
    for at in grid:
        done = [p["bytes"] for p in steps if p["at_ms"] <= at]
        expected.append(done[-1] if done else t["bytes_now"])
    assert t["projected_bytes"] == expected
    assert t["arrival_bytes_per_s"] == 0
    assert [
        sum(x) for x in zip(*(ld["bytes"] for ld in d["projection"]["log_dirs"]), strict=True)
    ] == expected


def test_arrivals_make_the_saw_tooth_of_seed_003(tmp_path: Path) -> None:
    """Data arriving at the measured rate: segments roll at segment.bytes and go whole once their newest record
    is older than retention.ms, so the size climbs and drops by one segment at a time around rate x retention."""
    horizon, retention = 7 * DAY, 2 * DAY
    topic = TopicSpec(
        "metrics", partitions=1, records_per_partition=900, span_ms=4 * DAY, retention_ms=retention
    )
    fcs = _forecasts(tmp_path, topic, horizon)
    [fc] = fcs
    rate = fc.rate  # DIR004's measured rate (bytes/ms)
    assert rate > 0
    assert abs(rate * 4 * DAY - fc.bytes) < 0.35 * fc.bytes  # about the bytes written over the 4-day span
    d = _section(fcs, horizon)
    [t] = d["topics"]
    sizes = t["projected_bytes"]
    grid = d["projection"]["at_ms"]
    assert t["arrival_bytes_per_s"] == round(rate * 1000, 3)
    drops = [
        (grid[i], sizes[i - 1] + rate * (grid[i] - grid[i - 1]) - sizes[i])
        for i in range(1, len(grid))
        if sizes[i] < sizes[i - 1]
    ]
    fill_ms = SEGMENT / rate
    # after the first retention.ms, one whole segment goes about every time one fills: the saw-tooth
    late = [(at, b) for at, b in drops if at > NOW_MS + retention]
    assert len(late) >= 0.7 * (horizon - retention) / fill_ms
    assert all(0.8 * SEGMENT <= b <= 2.2 * SEGMENT for _, b in late), late
    # and the size stays between the data within retention.ms and that plus a segment (and a point's arrivals)
    steady = [b for at, b in zip(grid, sizes, strict=True) if at > NOW_MS + retention + DAY]
    step = grid[1] - grid[0]
    assert min(steady) >= rate * retention - SEGMENT - rate * step
    assert max(steady) <= rate * retention + 2 * SEGMENT + rate * step
    # with no new data the same topic only shrinks (the forecast), far below the saw-tooth
    assert t["bytes_at_horizon"] < min(steady) < max(steady) < t["bytes_now"]


def test_audit_report_carries_the_projection(tmp_path: Path) -> None:
    host = simulate(tmp_path, [TopicSpec("events", partitions=2, records_per_partition=300, span_ms=DAY)])
    report = audit(host)
    proj = report["forecast"]["projection"]
    assert proj["at_ms"][0] == NOW_MS and proj["assumptions"]
    assert {ld["path"] for ld in proj["log_dirs"]} <= set(host.log_dirs)
    [t] = [t for t in report["forecast"]["topics"] if t["topic"] == "events"]
    assert len(t["projected_bytes"]) == len(proj["at_ms"]) and t["arrival_bytes_per_s"] > 0
    assert t["fallback_deleted_bytes"] == 0 and t["fallback_deletions"] == []
