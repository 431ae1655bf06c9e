"""IDX004: an untrimmed, zero-padded index on a rolled segment (and on the active segment of a stopped broker
that the next start will not recover).

A new index is preallocated to ``roundDownToExactMultiple(segment.index.bytes, entrySize)`` (10,485,760 B for
``.index``, 10,485,756 B for ``.timeindex`` by default; AbstractIndex.createAndAssignMmap) and trimmed to its
entries on roll and on close (``LogSegment.onBecomeInactiveSegment``, ``AbstractIndex.close`` ->
``trimToValidSize``). When the trim fails (Permission denied in ``RandomAccessFile.setLength``, swallowed by
``Utils.closeQuietly`` on close; KAFKA-10207) the file keeps its zero slots. When the broker maps such a file it
counts every slot as an entry (``entries = length / entrySize``) and reads the last slot as the last entry:
offset = base offset, timestamp 0 (OffsetIndex/TimeIndex.lastEntry).

Rule (see docs/IDX004.md), from ``Segment.offset_index_padded`` / ``time_index_padded`` (last slot all zero):
* rolled segment: reported. ``.index``: warning (lookups that reach the zero slots restart from position 0, a
  scan of the whole segment; 10 MiB of disk and mapping per file). ``.timeindex``: critical when the topic deletes
  by time, since the broker takes 0 as the segment's largest timestamp and time retention deletes it (RET001 says
  when, without this check repeating it), warning for a topic without time retention (timestamp lookups only).
* active segment: not reported while the broker runs (its indexes are preallocated while it is the active
  segment) nor when the next start recovers it (an unclean stop: SHUT001); reported when the broker is stopped
  and the segment is loaded as it is: its index counts as full, so the first append rolls the segment, and
  appending the final time entry to a full time index fails with BufferOverflowException (KAFKA-19200).
* severity drops to warning when the next start rebuilds the index anyway (recovery, a missing .index, or a
  broker < 2.3.0 whose sanity check at load rejects it): the file is gone after that start.
"""

from __future__ import annotations

from collections.abc import Iterator

from kafka_ops.broker.startup import REBUILT, next_start, partition_name, rebuild_cost
from kafka_ops.checks.base import Finding, check
from kafka_ops.engine.indexes import OFFSET_ENTRY, TIME_ENTRY, preallocated_size
from kafka_ops.engine.logdir import Segment
from kafka_ops.engine.shell import q
from kafka_ops.facts.context import Context
from kafka_ops.facts.model import PartitionFacts
from kafka_ops.units import human_bytes


@check(
    "IDX004",
    severity="warning",
    scope="partition",
    title="Untrimmed, zero-padded index on a rolled segment (critical for a .timeindex)",
    incident=".timeindex files the broker could not trim or read gave segments a largest timestamp of 0 "
    "('Scheduling segments for deletion ... largestTime=0'); KAFKA-10207",
)
def run(ctx: Context, pf: PartitionFacts) -> Iterator[Finding]:
    running = ctx.host.broker_state == "running"
    cfg = pf.config
    max_index = cfg.segment_index_bytes
    time_retention = cfg.deletes and cfg.retention_ms >= 0
    for seg in pf.part.segments:
        offset_padded = seg.index is not None and seg.offset_index_padded
        time_padded = seg.timeindex is not None and seg.time_index_padded
        if not offset_padded and not time_padded:
            continue  # the usual segment: no pair of candidates made for it
        for kind, fi, padded, entry in (
            ("offset", seg.index, offset_padded, OFFSET_ENTRY),
            ("time", seg.timeindex, time_padded, TIME_ENTRY),
        ):
            if fi is None or not padded:
                continue
            nxt = next_start(ctx, pf, seg)
            if seg.active and (running or nxt.verdict == REBUILT):
                continue
            expected = preallocated_size(entry, max_index)
            full = fi.size == expected
            tail = seg.offset_tail if kind == "offset" else seg.time_tail
            slots = tail.entry_count if tail else fi.size // entry
            size_text = (
                f"{fi.size} bytes = segment.index.bytes {max_index} rounded down to {entry}-byte entries: the "
                "preallocation was never trimmed"
                if full
                else f"{fi.size} bytes, not the {expected} bytes that segment.index.bytes={max_index} preallocates "
                "(the setting changed since, or the file was cut), but its last slot is zero padding"
            )
            if kind == "time":
                effect = (
                    f"The broker counts all {slots} slots as entries and takes the last one, timestamp 0, as the "
                    "segment's largest timestamp (TimeIndex.lastEntry -> LogSegment.readMaxTimestampAndOffsetSoFar "
                    "-> largestTimestamp)"
                    + (
                        f": time retention (retention.ms={cfg.retention_ms}) sees it as expired and deletes it as "
                        "soon as the segments before it go (UnifiedLog.deletableSegments stops at the first segment it "
                        "keeps), before its records are due; RET001 gives the time and the bytes"
                        if time_retention
                        else f"; the topic has no time retention (cleanup.policy={','.join(sorted(cfg.cleanup_policy))}"
                        f", retention.ms={cfg.retention_ms}), so only timestamp lookups (ListOffsets, offsetsForTimes) "
                        "are wrong"
                    )
                    + "."
                )
                severity = "critical" if time_retention else "warning"
            else:
                effect = (
                    f"The broker counts all {slots} slots as entries and reads the last one as offset {seg.base_offset} "
                    "at position 0 (OffsetIndex.lastEntry): a lookup that reaches the zero slots restarts at position "
                    "0 and scans the segment from its start (correct, but slow), and each such file takes "
                    f"{human_bytes(fi.size)} of disk and mapped memory. The segment's .timeindex is usually padded "
                    "too (the same failed trim): see RET001."
                )
                severity = "warning"
            if seg.active:
                effect += (
                    " This is the active segment of a stopped broker that the next start loads as it is: its index "
                    "counts as full (AbstractIndex.isFull), so the first append rolls the segment (LogSegment."
                    "shouldRoll)"
                    + (
                        ", and appending the final time entry to the full time index then fails with "
                        "BufferOverflowException (LogSegment.onBecomeInactiveSegment -> TimeIndex.maybeAppend, "
                        "KAFKA-19200): produce to the partition fails."
                        if kind == "time" and full
                        else "."
                    )
                )
                if kind == "time" and full:
                    severity = "critical"
            if nxt.verdict == REBUILT:
                severity = "warning"
                fate = f"{nxt.why} ({rebuild_cost(ctx, seg)}), so the file is gone after that start"
            else:
                fate = nxt.why
            yield run.finding(
                f"{partition_name(pf)} segment {seg.base_offset} ({'active' if seg.active else 'rolled'}): "
                f"{fi.path} is zero-padded, {size_text} (the trim on roll or close failed: KAFKA-10207). {effect} "
                f"Next start: {fate}.",
                _fix(pf, seg, kind),
                severity=severity,
                path=fi.path,
                topic=pf.part.topic,
                partition=pf.part.partition,
                segment=seg.base_offset,
                details={
                    "index": kind, "size": fi.size, "preallocated_size": expected, "preallocated": full,
                    "slots": slots, "active": seg.active, "next_start": nxt.verdict,
                    "time_retention": time_retention, "log_bytes": seg.log.size if seg.log else 0,
                },
            )  # fmt: skip


def _fix(pf: PartitionFacts, seg: Segment, kind: str) -> str:
    return (
        f"With the broker stopped: kafka-ops fix indexes --log-dir {q(pf.log_dir.path)} (dry run), then with --apply: "
        f"the .index, .timeindex and .txnindex of segment {seg.base_offset} go to a quarantine folder and the broker "
        "rebuilds them from the records at start (LogLoader.loadSegmentFiles -> recoverSegment), with the segment's "
        "real largest timestamp."
        + (
            " If the broker must run first, protect the data: kafka-configs.sh --alter --entity-type topics "
            f"--entity-name {q(pf.part.topic)} --add-config retention.ms=<longer> (RET001)."
            if kind == "time"
            else ""
        )
        + " Then find why the trim failed: the broker user could not write the file (PERM001; trimToValidSize "
        "opens it read-write and calls setLength), or the broker was killed while it shut down (SHUT001, SYSD001)."
    )
