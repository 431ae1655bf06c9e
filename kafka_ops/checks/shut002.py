"""SHUT002: a torn or CRC-invalid tail in a segment's .log: what recovery truncates, or what happens when it
does not run.

Facts: ``PartitionFacts.recovery[base].tail`` (the CRC-checking scan of every segment the next start recovers, and
of every segment under ``--deep``); for the active segment of a stopped broker that the next start does not recover
(clean shutdown), the audit reads the bytes ``LogSegment.readNextOffset`` reads at load: from the last offset-index
entry to the end, with CRC checks (``engine.logdir.active_tail``; one index interval, cheap).

What the broker does (see docs/SHUT002.md):
* Recovered (``LogSegment.recover``): every batch ``ensureValid()``-ed; at the first invalid one the .log is
  truncated to the bytes validated so far (``log.truncateTo(validBytes)``), losing the tail and every valid
  batch after it. When that happens in ``LogLoader.recoverLog`` ("Corruption found in segment ..., truncating to
  offset ..."), every later segment of the partition is deleted too (``removeAndDeleteSegmentsAsync`` of the
  remaining unflushed segments). Not when the truncation happens earlier, in ``loadSegmentFiles`` (a missing
  .index): recoverLog then finds nothing left to truncate.
* Not recovered (clean shutdown, below the recovery point, or a running broker): the tail stays.
  - torn batch (its size runs past the end of the file): ``FileLogInputStream.nextBatch`` returns null there, so
    the log end offset stops before it; ``FileRecords`` opens the file positioned at its end (constructor:
    ``channel.position(limit)``), so the next batch is appended after the garbage, which then lies between two
    batches: fetches that reach it read a batch that runs into the next one (consumers: CorruptRecordException;
    followers: "Found invalid messages during fetch", retried, AbstractFetcherThread), and a later unclean start
    truncates there, dropping everything appended after it.
  - a size field below 14 (e.g. zeros): ``nextBatch`` throws CorruptRecordException; in the active segment
    ``LogSegment.readNextOffset`` reaches it at load, the exception is not an IOException, and the log loading
    fails ("There was an error in one of the threads during logs loading", LogManager.loadLogs).
  - a complete batch with a bad CRC: served as it is; consumers (check.crcs=true) fail on it, followers retry.
"""

from __future__ import annotations

from collections.abc import Iterator

from kafka_ops.broker.startup import (
    describe_after,
    human_offsets,
    in_recover_log,
    invalid_offset_exit,
    is_metadata_log,
    next_offset_fallback,
    partition_name,
    recovery_reason,
    seg_file,
    stops_loading,
)
from kafka_ops.checks.base import Finding, check
from kafka_ops.engine.logdir import Segment, active_tail
from kafka_ops.engine.records import BELOW_MIN_OVERHEAD, Tail
from kafka_ops.engine.shell import q
from kafka_ops.facts.context import Context
from kafka_ops.facts.model import NOT_READ, PartitionFacts
from kafka_ops.units import human_bytes

SMALL_SIZE = BELOW_MIN_OVERHEAD


@check(
    "SHUT002",
    severity="error",
    scope="partition",
    title="Torn or CRC-invalid tail in a segment: what recovery truncates (and deletes), or why it stays",
    incident="after an OOM kill the 0.10.2 broker logged 'Found invalid messages in log segment "
    ".../00000000000024386649.log at byte offset 886339595: Record size is smaller than minimum record overhead "
    "(14)' and truncated the segment there",
)
def run(ctx: Context, pf: PartitionFacts) -> Iterator[Finding]:
    running = ctx.host.broker_state == "running"
    segs = pf.part.segments
    tails: list[tuple[Segment, Tail, int | None]] = []
    for seg in segs:
        rec = pf.recovery.get(seg.base_offset)
        if rec is not None:
            if rec.tail is not None:
                tails.append((seg, rec.tail, rec.last_offset))
        elif seg.active and not running and seg.log is not None and seg.log.size:
            scan = active_tail(seg) if pf.active_tail is NOT_READ else pf.active_tail  # read by the collector
            if scan is not None and scan.tail is not None:
                tails.append((seg, scan.tail, scan.last_offset))
    truncating: Segment | None = None  # the segment whose truncation in recoverLog deletes the later ones
    for seg, tail, last_valid in tails:
        yield _finding(ctx, pf, seg, tail, last_valid, truncating, running)
        if (
            truncating is None
            and not running
            and recovery_reason(ctx, pf, seg) is not None
            and in_recover_log(ctx, pf, seg)
            and seg.index is not None
        ):
            truncating = seg


def _finding(
    ctx: Context,
    pf: PartitionFacts,
    seg: Segment,
    tail: Tail,
    last_valid: int | None,
    earlier: Segment | None,
    running: bool,
) -> Finding:
    log = seg.log.path  # type: ignore[union-attr]
    size = seg.log.size  # type: ignore[union-attr]
    after = describe_after(seg, tail.position)
    first_lost = last_valid + 1 if last_valid is not None else seg.base_offset
    what = f"{log} ({size} bytes) is valid up to byte {tail.position}, then {tail.truncated_bytes} bytes fail: {tail.reason}"
    lost = []
    if after is not None:
        if after.batches:
            lost.append(
                f"{after.batches} complete batch{'es' if after.batches != 1 else ''} with {after.records} records, "
                f"{human_offsets(after.first_offset, after.last_offset)}"
                + (
                    " (the first one CRC-invalid)"
                    if tail.kind == "corrupt" and SMALL_SIZE not in tail.reason
                    else ""
                )
            )
        if after.trailing_bytes:
            part = (
                f", {human_offsets(after.partial_base_offset, after.partial_last_offset)}"
                if after.partial_base_offset is not None and after.partial_last_offset is not None
                else ""
            )
            count = (
                f", {after.partial_records} record{'s' if after.partial_records != 1 else ''}"
                if after.partial_records is not None
                else ""
            )
            lost.append(
                f"{after.trailing_bytes} bytes of a torn batch{part}{count}"
                if tail.kind == "torn" or after.batches
                else f"{after.trailing_bytes} unreadable bytes"
            )
    lost_text = "; ".join(lost) if lost else f"{tail.truncated_bytes} bytes"
    reason = None if running else recovery_reason(ctx, pf, seg)
    later = [s for s in pf.part.segments if s.base_offset > seg.base_offset]
    later_bytes = sum(s.log.size for s in later if s.log)
    deletes_later = (
        reason is not None
        and earlier is None
        and in_recover_log(ctx, pf, seg)
        and seg.index is not None
        and later
    )
    severity = None
    if earlier is not None and reason is not None and in_recover_log(ctx, pf, seg):
        fate = (
            f"The next start never gets to it: LogLoader.recoverLog truncates segment {earlier.base_offset} first "
            "and deletes this segment with every other later one."
        )
    elif reason is not None:
        fate = (
            f"The next start recovers the segment ({reason}): LogSegment.recover truncates it to {tail.position} "
            f"bytes ('Found invalid messages in log segment {log} at byte offset {tail.position}'), keeping offsets "
            f"up to {last_valid if last_valid is not None else 'none (the segment is emptied)'} and losing "
            f"{lost_text}."
        )
        if deletes_later:
            end = pf.log_end_offset
            fate += (
                f" Because it truncates inside LogLoader.recoverLog ('Corruption found in segment {seg.base_offset}, "
                f"truncating to offset {first_lost}'), it then deletes every later segment of {partition_name(pf)}: "
                f"{len(later)} segment(s), {human_bytes(later_bytes)}, "
                f"{human_offsets(later[0].base_offset, end - 1 if end is not None else None)} "
                "(removeAndDeleteSegmentsAsync of the remaining unflushed segments)."
            )
        elif later and seg.index is None:
            fate += (
                " It is truncated while the segments are loaded (its .index is missing), so LogLoader.recoverLog "
                "finds nothing left to truncate and keeps the later segments."
            )
        fate += (
            " A follower fetches the lost offsets again from the leader; on the leader or a sole replica they are "
            "gone."
        )
    else:
        why = (
            "the broker is running, and recovery only runs at a start after an unclean stop (for segments at or above "
            "the recovery point); a clean stop keeps the tail"
            if running
            else (
                f"{pf.log_dir.path} has .kafka_cleanshutdown, so LogLoader.recoverLog does not run"
                if pf.log_dir.clean_shutdown and not is_metadata_log(pf)
                else f"the segment lies below the recovery point {pf.recovery_point}, where LogLoader.recoverLog starts"
            )
        )
        # the active segment's index entry finds no batch: readNextOffset gives the base offset (issue 36 §2)
        fallback = next_offset_fallback(ctx, pf, seg) if seg.active and not running else None
        fate = f"The next start does NOT truncate it ({why}). " + (
            f"{fallback}." if fallback else _not_truncated(seg, tail, pf)
        )
        if running and seg.active and tail.kind == "torn":
            severity = "warning"
            fate = (
                "The broker is running: a partial batch at the end of the active segment is most likely an append "
                "in progress while the audit read the file; audit again, and treat it as below if it stays. "
                + fate
            )
    if stops_loading(ctx, pf, seg, tail):
        severity = "critical"  # the broker does not start: the next-start plan says so too (load_failure)
    elif not running and invalid_offset_exit(ctx, pf, seg, tail):
        severity = "critical"
        fate = (
            "The next start does not get past it: its .index is missing, so the loader recovers it while listing "
            "the segments (LogLoader.loadSegmentFiles), where the InvalidOffsetException is not caught (only "
            "LogLoader.recoverLog catches it): loading the logs fails and the broker exits."
        )
    details = {
        "kind": tail.kind, "reason": tail.reason, "position": tail.position, "truncated_bytes": tail.truncated_bytes,
        "log_bytes": size, "last_valid_offset": last_valid, "first_lost_offset": first_lost,
        "truncated_at_next_start": reason is not None, "active": seg.active,
        "deletes_later_segments": [s.base_offset for s in later] if deletes_later else [],
        "deleted_bytes": later_bytes if deletes_later else 0,
    }  # fmt: skip
    if after is not None:
        details.update(
            lost_batches=after.batches, lost_records=after.records, lost_first_offset=after.first_offset,
            lost_last_offset=after.last_offset, trailing_bytes=after.trailing_bytes,
            torn_base_offset=after.partial_base_offset, torn_last_offset=after.partial_last_offset,
        )  # fmt: skip
    return run.finding(
        f"{partition_name(pf)} segment {seg.base_offset}: {what}. {fate}",
        _fix(pf, seg, reason is not None, bool(deletes_later), tail),
        severity=severity,
        path=log,
        topic=pf.part.topic,
        partition=pf.part.partition,
        segment=seg.base_offset,
        details=details,
    )


def _not_truncated(seg: Segment, tail: Tail, pf: PartitionFacts) -> str:
    end = pf.log_end_offset if seg.active else None
    if tail.kind == "torn" and seg.active:
        return (
            "LogSegment.readNextOffset stops before the torn batch (FileLogInputStream.nextBatch returns null for a "
            "batch that runs past the end of the file)"
            + (f", so the log end offset is {end}" if end is not None else "")
            + "; FileRecords opens the file positioned at its end (channel.position(limit)), so the next batch is "
            f"appended after the {tail.truncated_bytes} garbage bytes, which then lie between two batches: a fetch "
            "that reaches them reads a batch that runs into the next one (consumers: CorruptRecordException; "
            "followers: 'Found invalid messages during fetch', retried without end, AbstractFetcherThread), and a "
            "later unclean start truncates the log there, dropping everything written after it."
        )
    if tail.kind == "torn":
        return (
            "Reads stop before the torn batch (FileLogInputStream.nextBatch returns null) and go on in the next "
            "segment (LocalLog.read); if a later unclean start recovers this segment, it truncates it there and "
            "deletes every later segment."
        )
    if SMALL_SIZE in tail.reason:
        return "FileLogInputStream.nextBatch throws CorruptRecordException on a size field below 14" + (
            ", and LogSegment.readNextOffset reads up to it when the log is loaded: the exception is not an "
            "IOException, so loading the logs fails ('There was an error in one of the threads during logs "
            "loading', LogManager.loadLogs) and the broker does not start."
            if seg.active
            else "; every fetch that reaches it fails."
        )
    return (
        "The broker serves the batch as it is: consumers (check.crcs=true, the default) fail on it with "
        "CorruptRecordException, followers log 'Found invalid messages during fetch' and retry; a later unclean "
        "start truncates the log there."
    )


def _fix(pf: PartitionFacts, seg: Segment, truncated: bool, deletes_later: bool, tail: Tail) -> str:
    part_dir = pf.part.path
    backup = f"cp -a {q(part_dir)} /var/tmp/kafka-ops-backup/"
    if truncated:
        return (
            f"Before the start, back up the partition with the broker stopped: {backup}"
            + (", since the start also deletes the later segments" if deletes_later else "")
            + ". If another replica is in sync, let the start truncate: this broker fetches the lost offsets from "
            "the leader. If this broker holds the only copy, keep the backup: `kafka-ops dump "
            f"{q(seg_file(seg, '.log'))}` shows the batches and where they stop, and what is past byte {tail.position} "
            "cannot be served by Kafka anyway."
        )
    qdir = q(f"/var/lib/kafka-ops/quarantine/{pf.part.topic}-{pf.part.partition}")
    return (
        f"With the broker stopped, back up the partition ({backup}), then make the next start recover just this "
        f"segment: mkdir -p {qdir} && mv {q(seg_file(seg, '.index'))} {q(seg_file(seg, '.timeindex'))} {qdir}/ (also the "
        ".txnindex if there is one). With its .index missing, LogLoader.loadSegmentFiles recovers the segment and "
        f"truncates it at byte {tail.position}, without deleting other segments; removing .kafka_cleanshutdown "
        "instead would recover every unflushed segment of the log dir. Then find what wrote past the last batch: a "
        "copy of a running broker's files, a restore, a disk or file-system error."
    )
