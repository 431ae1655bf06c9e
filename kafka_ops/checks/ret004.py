"""RET004: a compact,delete partition keeps records older than retention.ms in a segment with newer ones (the segment-retention incident)."""

from __future__ import annotations

import json
from collections.abc import Iterator

from kafka_ops.broker.cleaner import retention_stall
from kafka_ops.broker.forecast import for_check
from kafka_ops.broker.timestamps import iso, segment_path
from kafka_ops.checks.base import Finding, check
from kafka_ops.engine.shell import q
from kafka_ops.facts.context import Context
from kafka_ops.facts.model import PartitionFacts
from kafka_ops.units import human_bytes, human_ms

DAY_MS = 24 * 3600 * 1000
SEED_SEGMENT_BYTES = (
    128 * 1024 * 1024
)  # what the segment-retention incident's operators lowered segment.bytes to


@check(
    "RET004",
    severity="warning",
    scope="partition",
    title="compact,delete keeps records older than retention.ms: they share a segment with newer records",
    incident="a compact,delete topic with one week of retention served months-old records, because the "
    "cleaner had merged them into segments with new ones and retention deletes whole segments only",
)
def run(ctx: Context, pf: PartitionFacts) -> Iterator[Finding]:
    cfg = pf.config
    if not (cfg.compacted and cfg.deletes) or cfg.retention_ms < 0 or not pf.part.segments:
        return
    oldest = pf.part.segments[0]
    first = pf.first_timestamps.get(oldest.base_offset)
    if first is None:
        return
    age = ctx.now_ms - first
    if age <= cfg.retention_ms:
        return
    fc = for_check(ctx, pf)
    s = fc.segments[0]
    if s.delete_at is not None and s.delete_at <= ctx.now_ms + fc.schedule.first_delay_ms:
        return  # the next retention pass deletes it: the old records go with it
    runs = fc.schedule.runs
    if runs and (s.timestamp is None or ctx.now_ms - s.timestamp > cfg.retention_ms):
        return  # kept for another reason (unknown timestamp): not this check's
    topic, part = pf.part.topic, pf.part.partition
    seg_bytes = cfg.values.get("segment.bytes")
    seg_ms = int(cfg.values.get("segment.ms", 7 * DAY_MS))
    only = len(pf.part.segments) == 1
    cleaned = pf.cleaner_offset is not None and pf.cleaner_offset > oldest.base_offset
    stalled = not runs and retention_stall(ctx.host, f"{topic}-{part}") is not None
    if not runs:
        cause, why = ("cleaner_stalled" if stalled else "cleaner_disabled"), fc.schedule.note
    elif only:
        cause = "active_segment"
        why = (
            "it is the active segment, which the cleaner never touches (LogCleanerManager.cleanableOffsets) and "
            f"which rolls only when a new batch's timestamp is more than segment.ms={seg_ms} ({human_ms(seg_ms)}) "
            "after its first batch's (LogSegment.shouldRoll, asked on append only)"
        )
    elif cleaned:
        cause = "cleaner_merge"
        why = (
            f"the cleaner has cleaned it (cleaner checkpoint {pf.cleaner_offset} > {oldest.base_offset}): each "
            "cleaning re-copies the log from its start and merges consecutive segments while their total size "
            f"fits segment.bytes={seg_bytes} (Cleaner.doClean -> groupSegmentsBySize), so records whose key was "
            "never written again end up in one segment with newer records"
        )
    else:
        cause = "mixed_timestamps"
        why = (
            "the segment was never cleaned, so its records arrived with these timestamps: a producer wrote old "
            "CreateTime timestamps next to new ones, or the segment spans more than segment.ms "
            f"({human_ms(seg_ms)})"
        )
    until = (
        "until the broker restarts (its cleaner skips this partition)"
        if stalled
        else "forever (retention never runs on it)"
        if not runs
        else (
            f"until {iso(s.delete_at)} (in {human_ms(s.delete_at - ctx.now_ms)})"
            if s.delete_at is not None
            else "until it stops receiving newer records"
        )
    )
    largest = f"{iso(s.timestamp)} ({s.source})" if s.timestamp is not None else f"unknown ({s.source})"
    msg = (
        f"{topic}-{part} (cleanup.policy={cfg.values.get('cleanup.policy')}) keeps records {human_ms(age)} old, "
        f"{human_ms(age - cfg.retention_ms)} past retention.ms={cfg.retention_ms} ({human_ms(cfg.retention_ms)}): "
        f"segment {oldest.base_offset} ({human_bytes(s.size)}) starts with a record from {iso(first)} but its "
        f"largest timestamp is {largest}, and time retention deletes a segment only as a whole, when now - its "
        f"largest timestamp > retention.ms (UnifiedLog.deleteRetentionMsBreachedSegments), so the old records stay "
        f"{until}. Why they share the segment: {why}."
    )
    if stalled:  # the whole segment may be past retention: the cleaner not running it is the one cause
        past = s.timestamp is not None and ctx.now_ms - s.timestamp > cfg.retention_ms
        msg = (
            f"{topic}-{part} (cleanup.policy={cfg.values.get('cleanup.policy')}) keeps records {human_ms(age)} old, "
            f"{human_ms(age - cfg.retention_ms)} past retention.ms={cfg.retention_ms} ({human_ms(cfg.retention_ms)}): "
            f"segment {oldest.base_offset} ({human_bytes(s.size)}, largest timestamp {largest}) "
            f"{'is past retention as a whole' if past else 'starts with them'}, but {why}."
        )
    later = pf.part.segments[1:]
    upto = later[0].base_offset if later else pf.log_end_offset
    details = {
        "cause": cause, "first_record_timestamp": first, "age_ms": age,
        "over_retention_ms": age - cfg.retention_ms, "retention_ms": cfg.retention_ms,
        "largest_timestamp": s.timestamp, "timestamp_source": s.source, "kept_until": s.delete_at,
        "bytes": s.size, "cleaner_offset": pf.cleaner_offset, "next_segment_offset": upto,
        "segment_bytes": seg_bytes, "segment_ms": seg_ms,
        "min_compaction_lag_ms": cfg.values.get("min.compaction.lag.ms"),
        "delete_retention_ms": cfg.values.get("delete.retention.ms"),
    }  # fmt: skip
    yield run.finding(
        msg,
        _fix(pf, cause, upto, seg_ms),
        path=segment_path(oldest),
        topic=topic,
        partition=part,
        segment=oldest.base_offset,
        details=details,
    )


def _fix(pf: PartitionFacts, cause: str, upto: int | None, seg_ms: int) -> str:
    cfg = pf.config
    topic, part = pf.part.topic, pf.part.partition
    r = cfg.retention_ms
    alter = (
        f"kafka-configs --bootstrap-server <broker:9092> --alter --entity-type topics --entity-name {q(topic)} "
        "--add-config"
    )
    if cause == "cleaner_stalled":
        return (
            "Find why the cleaner stopped and remove the cause first (a dead thread: CLN001, 'Error due to' in "
            "log-cleaner.log; an uncleanable partition: 'Unexpected exception thrown when cleaning log'), then "
            "restart the broker: its new cleaner runs retention again, and deletes at once what expired meanwhile "
            "(kafka-ops forecast says how much). Without a restart nothing of this partition is deleted."
        )
    if cause == "cleaner_disabled":
        return (
            "Enable the cleaner: log.cleaner.enable=true in server.properties and restart the broker (the "
            "cleaner thread is what runs retention for compacted topics); until then nothing of this topic is "
            "deleted."
        )
    steps = [
        "Retention cannot remove single records. To drop the old ones now, produce a tombstone (the key with a "
        "null value) for each of their keys, e.g. kafka-console-producer --bootstrap-server <broker:9092> --topic "
        f"{q(topic)} --property parse.key=true --property key.separator=: --property null.marker=NULL with lines "
        "'<key>:NULL' (null.marker: Kafka >= 3.2; or kcat -P -Z -K:): once the tombstones' segment has rolled (the "
        "active segment is never cleaned) the next cleaning drops the old values, and the tombstones "
        f"delete.retention.ms ({cfg.values.get('delete.retention.ms')} ms) after the cleaner "
        "first sees them."
    ]
    if upto is not None:
        spec = json.dumps({"version": 1, "partitions": [{"topic": topic, "partition": part, "offset": upto}]})
        steps.append(
            f"Or, if the segment's newer records may go too (the latest value of their keys is lost), delete the "
            f"whole segment: echo {q(spec)} > {q(f'delete-{topic}-{part}.json')}; kafka-delete-records --bootstrap-server "
            f"<broker:9092> --offset-json-file {q(f'delete-{topic}-{part}.json')}."
        )
    new_ms = max(3600 * 1000, r // 7)
    cfgs = []
    if seg_ms > new_ms:
        cfgs.append(f"segment.ms={new_ms}")
    seg_bytes = int(cfg.values.get("segment.bytes", 1024**3))
    if seg_bytes > SEED_SEGMENT_BYTES:
        cfgs.append(f"segment.bytes={SEED_SEGMENT_BYTES}")
    shrink = (
        f"Shrink what old records can share a segment with: {alter} {','.join(cfgs)} (segment.ms bounds how long "
        "a segment keeps receiving records; the cleaner's merged groups are at most segment.bytes): this narrows "
        "the window but does not bound a record's age, since records whose key is never rewritten keep being "
        "merged into newer segments while they fit."
        if cfgs
        else "segment.ms and segment.bytes are already small: they narrow the window but cannot bound a record's "
        "age, since records whose key is never rewritten keep being merged into newer segments while they fit."
    )
    steps.append(shrink)
    steps.append(
        f"To bound it for good: {alter} min.compaction.lag.ms={r} (>= retention.ms): the cleaner then only merges "
        "segments whose largest timestamp is already older than retention.ms (LogCleanerManager.cleanableOffsets), "
        "which the retention pass it runs right after deletes; nothing within retention is compacted any more, so "
        "if that is acceptable cleanup.policy=delete says it plainly. delete.retention.ms does not help: it only "
        "sets how long tombstones and transaction markers outlive their first cleaning."
    )
    return " ".join(steps)
