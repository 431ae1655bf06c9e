"""RET003: record timestamps in the future stall time retention for their segment and every later one."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator

from kafka_ops.broker.forecast import SegmentForecast, first_check_delay, for_check
from kafka_ops.broker.timestamps import future_batches, iso, segment_path
from kafka_ops.checks.base import Finding, check
from kafka_ops.engine import versions
from kafka_ops.engine.logdir import TS_MTIME, TS_MTIME_NO_TIMEINDEX, Segment
from kafka_ops.engine.shell import q
from kafka_ops.facts.context import Context
from kafka_ops.facts.model import PartitionFacts
from kafka_ops.units import human_bytes, human_ms

# A segment whose largest timestamp is more than this after now is "in the future". Clocks of producers and
# brokers drift by seconds, not hours; an hour also matches the message.timestamp.after.max.ms we recommend.
FUTURE_TOLERANCE_MS = 3600 * 1000
INF = math.inf


@check(
    "RET003",
    severity="warning",
    scope="partition",
    title="Record timestamps in the future stall time retention for their segment and every later one",
    incident="records stamped in the future by a producer with a wrong clock: time retention keeps their segment "
    "until that future time plus retention.ms, and every later segment with it",
)
def run(ctx: Context, pf: PartitionFacts) -> Iterator[Finding]:
    cfg = pf.config
    if not cfg.deletes or cfg.retention_ms < 0 or not pf.part.segments:
        return
    limit = ctx.now_ms + FUTURE_TOLERANCE_MS
    fc = for_check(ctx, pf)
    future = [s for s in fc.segments if s.timestamp is not None and s.timestamp > limit]
    if not fc.schedule.runs or not future:
        return
    by_base = {s.base_offset: s for s in pf.part.segments}
    reads: dict[int, tuple[int, int, int | None, int | None, int | None]] = {}
    what_if: dict[int, int] = {}
    for s in future:
        seg = by_base[s.base]
        reads[s.base] = r = future_batches(seg, limit)
        _n, _nb, _first, sane, top = r
        if s.source in (TS_MTIME, TS_MTIME_NO_TIMEINDEX) and top is not None and top <= limit:
            sane = top  # only the .log's mtime is in the future: the records' own timestamps
        if sane is None:  # only future batches: take the time they were written (the .log's mtime)
            mtime = seg.log.mtime_ms if seg.log else None
            sane = mtime if mtime is not None and mtime <= limit else ctx.now_ms
        what_if[s.base] = sane
    would = fc.replan(what_if)
    end = fc.horizon_end
    held: list[tuple[SegmentForecast, int]] = []  # (segment, when it would go had the clock been right)
    for s in fc.segments[fc.segments.index(future[0]) :]:
        d = would.get(s.base)
        if d is None:
            continue
        if (s.delete_at if s.delete_at is not None else INF) > d.at_ms:
            held.append((s, d.at_ms))
    if not held:
        return  # deleted anyway (size retention, log start) or held by something else
    s0 = future[0]
    seg0 = by_base[s0.base]
    n, nb, first, sane, _top = reads[s0.base]
    release = s0.delete_at
    last_release = max((s.delete_at if s.delete_at is not None else INF) for s, _ in held)
    held_bytes = sum(s.size for s, _ in held)
    in_h = [(s, w) for s, w in held if w <= end and (s.delete_at is None or s.delete_at > end)]
    in_h_bytes = sum(s.size for s, _ in in_h)
    topic, part = pf.part.topic, pf.part.partition
    ahead = s0.timestamp - ctx.now_ms  # type: ignore[operator]
    until = f"before {iso(release)} (in {human_ms(release - ctx.now_ms)})" if release is not None else "ever"
    soonest = min(w for _, w in held)
    msg = (
        f"segment {s0.base} of {topic}-{part} has a largest timestamp {human_ms(ahead)} in the future "
        f"({iso(s0.timestamp)}, from its {s0.source}): time retention (now - largest timestamp > retention.ms="
        f"{cfg.retention_ms}) cannot delete it {until}, and since the broker deletes segments oldest first and "
        f"stops at the first one it cannot delete (UnifiedLog.deletableSegments) it holds back {len(held)} "
        f"segment(s), {human_bytes(held_bytes)} ({held_bytes} bytes), that would otherwise go from "
        f"{_when(ctx, soonest)}"
    )
    msg += (
        f"; {len(in_h)} of them ({in_h_bytes} bytes) within the {human_ms(fc.horizon_ms)} horizon."
        if in_h
        else "."
    )
    if n:
        msg += f" {n} batch(es) ({nb} bytes) from offset {first} carry the future timestamps" + (
            f"; the segment's other records are at most from {iso(sane)}." if sane is not None else "."
        )
    if len(future) > 1:
        msg += (
            f" Segment(s) {', '.join(str(s.base) for s in future[1:])} also have future timestamps; the last "
            f"held segment goes {'never' if last_release == INF else 'at ' + iso(int(last_release))}."
        )
    details = {
        "tolerance_ms": FUTURE_TOLERANCE_MS, "retention_ms": cfg.retention_ms, "release_at": release,
        "last_release_at": None if last_release == INF else int(last_release),
        "held_back_bytes": held_bytes, "held_back_segments": [s.base for s, _ in held],
        "held_back_in_horizon_bytes": in_h_bytes, "held_back_in_horizon_segments": [s.base for s, _ in in_h],
        "would_delete_at": {str(s.base): w for s, w in held},
        "future_segments": [
            {
                "base_offset": s.base, "timestamp": s.timestamp, "timestamp_source": s.source,
                "delete_at": s.delete_at, "future_batches": reads[s.base][0], "future_bytes": reads[s.base][1],
                "first_future_offset": reads[s.base][2], "other_records_max_timestamp": reads[s.base][3],
            }
            for s in future
        ],
    }  # fmt: skip
    yield run.finding(
        msg,
        _fix(ctx, pf, s0, seg0, first, sane, what_if[s0.base]),
        path=segment_path(seg0),
        topic=topic,
        partition=part,
        segment=s0.base,
        details=details,
    )


def _when(ctx: Context, at: int) -> str:
    if at <= ctx.now_ms + first_check_delay(ctx.host):
        running = ctx.host.broker_state == "running"
        return "the next retention check" if running else "the first retention check after the broker starts"
    return f"{iso(at)} (in {human_ms(at - ctx.now_ms)})"


def _fix(
    ctx: Context,
    pf: PartitionFacts,
    s0: SegmentForecast,
    seg0: Segment,
    first: int | None,
    sane: int | None,
    good: int,
) -> str:
    cfg = pf.config
    topic, part = pf.part.topic, pf.part.partition
    later = [s for s in pf.part.segments if s.base_offset > s0.base]
    upto = later[0].base_offset if later else pf.log_end_offset
    steps = []
    if s0.source in (TS_MTIME, TS_MTIME_NO_TIMEINDEX):
        steps.append(
            f"The broker compares the .log's mtime, which is in the future: with the broker stopped set it to the "
            f"records' time, touch -m -d @{good // 1000} {q(segment_path(seg0))}, and check the host clock (NTP)."
        )
    elif cfg.values.get("message.timestamp.type") == "LogAppendTime":
        steps.append(
            "The topic uses LogAppendTime, so the broker's own clock was ahead when it appended these records: "
            "fix the broker host's clock (NTP)."
        )
    else:
        where = f" (the first is at offset {first}: kafka-dump-log --files {q(segment_path(seg0))} shows its CreateTime)"
        steps.append(
            f"Find the producer with the wrong clock{where if first is not None else ''} and fix its clock (NTP)."
        )
        v = ctx.host.kafka_version
        if versions.since("timestamp_before_bound", v) is False:
            reject = (
                "message.timestamp.difference.max.ms=3600000 (before Kafka 3.6 this also rejects records more "
                "than an hour in the past)"
            )
        else:
            reject = "message.timestamp.after.max.ms=3600000 (Kafka >= 3.6, KIP-937)"
        steps.append(
            "Make the broker reject such records (InvalidTimestampException, LogValidator.validateTimestamp): "
            f"kafka-configs --bootstrap-server <broker:9092> --alter --entity-type topics --entity-name {q(topic)} "
            f"--add-config {reject}, or message.timestamp.type=LogAppendTime to have the broker stamp them."
        )
    if upto is not None:
        spec = json.dumps({"version": 1, "partitions": [{"topic": topic, "partition": part, "offset": upto}]})
        lost = (
            "its other records are already past retention.ms, so nothing retention would keep is lost"
            if sane is not None and ctx.now_ms - sane > cfg.retention_ms
            else (
                f"this also deletes its records from {iso(sane)}, which retention would keep until "
                f"{iso(sane + cfg.retention_ms)}"
                if sane is not None
                else "this deletes the segment's records"
            )
        )
        steps.append(
            f"To release the held data now, delete up to the end of segment {s0.base}: echo {q(spec)} > "
            f"{q(f'delete-{topic}-{part}.json')}; kafka-delete-records --bootstrap-server <broker:9092> --offset-json-file "
            f"{q(f'delete-{topic}-{part}.json')} ({lost}); time retention then resumes with the next segment."
        )
    return " ".join(steps)
