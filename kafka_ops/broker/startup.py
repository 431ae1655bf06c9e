"""What the broker's next start does with a segment's indexes and its tail (shared by IDX001-IDX005, SHUT002).

Not a check (the loader only imports ``<letters><3 digits>`` modules). Two kinds of helpers:

* predictions from facts (no disk access): whether the next start re-reads a segment and rebuilds its indexes,
  and why (:func:`next_start`);
* on-demand readers for what the cheap facts do not hold (like ``timestamps.real_timestamp``, they read a segment's
  files): the full-index verification of IDX003 (:func:`verify_indexes`), and what lies after a tail that
  recovery truncates (:func:`describe_after`); the tail of an active segment that recovery will not read is the
  engine's (``engine.logdir.active_tail``, which reads the ``.log``). Each reads only what its caller asks for;
  the default audit calls them for the segments the next start reads anyway, for the active segment's last index
  interval, or under ``--deep``.

Kafka behaviour, from apache/kafka (storage/.../log/ on trunk; core/src/main/scala/kafka/log/ at the tags):

* Indexes of every segment are sanity-checked at load up to 2.2.x (``LogSegment.sanityCheck`` calls
  ``OffsetIndex.sanityCheck``/``TimeIndex.sanityCheck``; a failure is an ``IllegalArgumentException`` (<= 1.0.x,
  ``require``) or ``CorruptIndexException`` (>= 1.1.0, KAFKA-6324) that ``Log.loadSegmentFiles`` answers with
  "Found a corrupted index file ... rebuilding index" and ``recoverSegment``). From 2.3.0 (KAFKA-7283, lazy
  indexes) only ``txnIndex.sanityCheck()`` runs at load: "we will recover the segments above the recovery point
  in recoverLog() in any case".
* The offset-index rule was ``lastOffset <= baseOffset`` up to 2.0.x and ``lastOffset < baseOffset`` from 2.1.0
  (KAFKA-7076), so a zero-padded offset index (last slot = base) fails it only up to 2.0.x.
* Recovered at start (``LogSegment.recover``: every batch CRC-checked, ``.index``/``.timeindex``/``.txnindex``
  rebuilt, the log truncated at the first invalid batch): a segment whose ``.index`` is missing
  (``LogLoader.loadSegmentFiles``: ``NoSuchFileException`` -> ``recoverSegment``), and after an unclean stop
  every segment from ``floorKey(recovery point)`` on (``LogLoader.recoverLog``). The KRaft metadata log
  ``__cluster_metadata-0`` is recovered in full at every start: ``KafkaMetadataLog.apply`` opens it with
  ``recoveryPoint = 0`` and ``lastShutdownClean = false`` (2.8.0 to trunk).
"""

from __future__ import annotations

import os
import struct
from collections.abc import Callable, Iterator

from kafka_ops.broker.next_offset import NextOffset
from kafka_ops.engine import versions
from kafka_ops.engine.compat import slotted
from kafka_ops.engine.errors import EngineError
from kafka_ops.engine.indexes import (
    IndexFile,
    offset_sanity,
    read_offset_index,
    read_time_index,
    time_sanity,
)
from kafka_ops.engine.layout import METADATA_TOPIC, PartitionName
from kafka_ops.engine.logdir import INVALID_OFFSET, Segment, active_tail, index_absent
from kafka_ops.engine.records import BELOW_MIN_OVERHEAD, RECORD_BATCH_OVERHEAD, BatchScanner, LogBuffer, Tail
from kafka_ops.engine.verify import IndexIssue, LogMap, verify_offset_index, verify_time_index
from kafka_ops.facts.context import Context
from kafka_ops.facts.model import NOT_READ, HostFacts, PartitionFacts
from kafka_ops.units import human_bytes, human_ms

REBUILT, KEPT, DEPENDS = "rebuilt", "kept", "depends"


def duplicate_partition_dirs(h: HostFacts) -> Iterator[tuple[PartitionName, str, str]]:
    """(name, first path, second path) for every partition (or its ``-future`` dir) found in two log dirs:
    ``LogManager.loadLog`` throws IllegalStateException("Duplicate log directories ...") and start-up fails."""
    seen: dict[tuple[str, int, str], str] = {}
    for ldf in h.log_dirs:
        for path, name in ldf.scan.partition_names:
            if name.kind not in ("log", "future") or name.topic == METADATA_TOPIC:
                continue
            prev = seen.setdefault((name.topic, name.partition, name.kind), path)
            if prev != path:
                yield name, prev, path


def is_metadata_log(pf: PartitionFacts) -> bool:
    # Partition.topic without its property call: asked ~8 times per partition
    return pf.part.name.topic == METADATA_TOPIC


def recover_log_floor(pf: PartitionFacts) -> int | None:
    """First segment ``LogLoader.recoverLog`` re-reads after an unclean stop: ``floorKey(recovery point)``
    (``LogSegments.values(recoveryPoint, MAX)``), the first segment when no segment is at or below it."""
    segs = pf.part.segments
    if not segs:
        return None
    rp = 0 if is_metadata_log(pf) else (pf.recovery_point or 0)
    floor = None
    for s in segs:
        if s.base_offset <= rp:
            floor = s.base_offset
    return floor if floor is not None else segs[0].base_offset


def in_recover_log(ctx: Context, pf: PartitionFacts, seg: Segment) -> bool:
    """Whether ``LogLoader.recoverLog`` (not just ``loadSegmentFiles``) re-reads the segment at the next start,
    for a stopped broker: no clean-shutdown marker (or the metadata log) and at or above the floor."""
    if ctx.host.broker_state == "running":
        return False
    if pf.log_dir.clean_shutdown and not is_metadata_log(pf):
        return False
    floor = recover_log_floor(pf)
    return floor is not None and seg.base_offset >= floor


def stops_loading(ctx: Context, pf: PartitionFacts, seg: Segment, tail: Tail) -> bool:
    """Whether this tail makes the next start fail as a whole (SHUT002 reports it, the plan follows it): the active
    segment, not recovered, is read by LogSegment.readNextOffset when the log is loaded, and FileLogInputStream
    .nextBatch throws CorruptRecordException on a size field below the minimum record overhead (14: a zero-filled
    tail reads as size 0). It is not an IOException, so LogManager.loadLogs fails ('There was an error in one of
    the threads during logs loading') and the broker exits. A recovered segment is truncated there instead."""
    return (
        seg.active
        and ctx.host.broker_state != "running"
        and tail.kind == "corrupt"
        and BELOW_MIN_OVERHEAD in tail.reason
        and recovery_reason(ctx, pf, seg) is None
    )


def invalid_offset_exit(ctx: Context, pf: PartitionFacts, seg: Segment, tail: Tail) -> bool:
    """Whether recovery's InvalidOffsetException (engine.logdir.recovery_scan) meets this segment while the loader
    recovers it for a missing .index, where nothing catches it (load_failure): the broker exits."""
    return (
        INVALID_OFFSET in tail.reason
        and ctx.host.broker_state != "running"
        and index_missing_at_load(ctx, pf, seg)
        and bool(versions.missing_index_rebuilt(ctx.host.kafka_version))
    )


def load_failure(ctx: Context, pf: PartitionFacts) -> str | None:
    """Why loading this partition makes the broker exit at its next start (``stops_loading``), or None."""
    if ctx.host.broker_state == "running" or not pf.part.segments:
        return None
    for seg in pf.part.segments:
        # InvalidOffsetException in a segment recovered for its missing .index: loadSegmentFiles calls
        # recoverSegment without recoverLog's handler (LogLoader.scala@3.5.2 loadSegmentFiles catches only
        # NoSuchFileException and CorruptIndexException around sanityCheck; Log.scala@2.8.2 the same), so the
        # exception ends the partition's load, and LogManager.loadLogs, which takes a dir offline for an
        # IOException only, fails ('There was an error in one of the threads during logs loading')
        rec = pf.recovery.get(seg.base_offset)
        if (
            rec is not None
            and rec.tail is not None
            and invalid_offset_exit(ctx, pf, seg, rec.tail)
            and seg.log
        ):
            return (
                f"{seg.log.path}: its .index is missing, so the loader recovers it while listing the segments, and "
                f"recovery meets a {rec.tail.reason.split(': ')[0]}: {INVALID_OFFSET}, which only "
                "LogLoader.recoverLog catches; loading the logs fails and the broker exits"
            )
    seg = pf.part.segments[-1]
    if not seg.active or seg.log is None or not seg.log.size:
        return None
    rec = pf.recovery.get(seg.base_offset)
    if rec is not None:
        tail = rec.tail
    else:
        scan = active_tail(seg) if pf.active_tail is NOT_READ else pf.active_tail
        tail = scan.tail if scan is not None else None
    if tail is None or not stops_loading(ctx, pf, seg, tail):
        return None
    return (
        f"{seg.log.path}: a size field below 14 at byte {tail.position} of the active segment, which a start "
        "without recovery reads (LogSegment.readNextOffset): CorruptRecordException, not an IOException, so "
        "loading the logs fails and the broker exits"
    )


NEXT_OFFSET_FALLBACK = (
    "LogSegment.readNextOffset"  # how a next_offset_fallback reason begins (plan_sentences)
)


def next_offset_fallback(ctx: Context, pf: PartitionFacts, seg: Segment) -> str | None:
    """Why loading this active segment without recovery puts the partition's log end offset back at the segment's
    base offset while its ``.log`` still holds complete batches past it, or None. The rule is
    broker.next_offset's (``LogSegment.readNextOffset``, via :func:`active_next_offset`): its ``base`` outcome.
    Measured on 3.7.2 (docs/fidelity.md, issue 36 §2): the active .log cut mid-record or mid-header
    ('logEndOffset=180', the segment's base, with 15 complete batches still in the file), its last batch's
    offsets set back, or an index entry past the log's end. The records are then not served and the next appends
    reuse their offsets. After an unclean stop recovery rebuilds the index first: not this."""
    if not seg.active or seg.log is None or not seg.log.size:
        return None
    nxt = active_next_offset(ctx, pf)
    if nxt is None or nxt.kind != "base" or pf.part.segments[-1] is not seg:
        return None
    try:
        with LogBuffer.open(seg.log.path) as buf:
            n, last = 0, None
            for b in BatchScanner(buf, verify_crc=False, controls=False):  # what still lies in the file
                n, last = n + 1, b.last_offset
    except EngineError:
        return None
    if not n or last is None or last < seg.base_offset:
        return None  # nothing complete past the base offset: the records are gone from the file anyway
    index = f" (its offset index {seg.index.path})" if seg.index is not None else ""
    return (
        f"{nxt.why.split(': the broker takes')[0]}, so the partition's log end offset falls back to "
        f"{seg.base_offset}{index}. The {n} complete batch{'es' if n != 1 else ''} ({human_offsets(seg.base_offset, last)}) "
        f"still in {seg.log.path} are no longer served, and the next records appended get their offsets again "
        "(the start itself succeeds)"
    )


def active_next_offset(ctx: Context, pf: PartitionFacts) -> NextOffset | None:
    """The log end offset a stopped broker's next start takes from the active segment's offset index
    (broker.next_offset: ``LogSegment.readNextOffset`` after a clean stop), or None when the segment is recovered
    (its indexes rebuilt first), empty, or its files cannot be read. Cached per partition: the plan and IDX003
    ask it."""
    segs = pf.part.segments
    if ctx.host.broker_state == "running" or not segs or is_metadata_log(pf):
        return None
    seg = segs[-1]
    if not seg.active or seg.log is None or not seg.log.size or seg.index is None:
        return None
    cache: dict[str, NextOffset | None] = ctx.cache.setdefault("active_next_offset", {})
    if seg.index.path not in cache:
        from kafka_ops.broker.next_offset import read_next_offset

        version = ctx.host.kafka_version
        rebuilt = recovery_reason(ctx, pf, seg) is not None or (
            version is not None and load_sanity_failure(seg, version) is not None  # up to 2.2: rebuilt first
        )
        cache[seg.index.path] = None if rebuilt else read_next_offset(seg, pf.log_end_offset)
    return cache[seg.index.path]


RECOVERY_BYTES_PER_S = 48_000_000  # one recovery thread's rate: seed 002's broker log (reference 2.x)


def recovery_seconds(nbytes: int, partitions: int, threads: int, largest: int) -> float:
    """How long a log dir's recovery takes: ``nbytes`` to re-read in ``partitions`` partitions, the largest
    ``largest`` bytes, with ``threads`` = num.recovery.threads.per.data.dir.

    LogManager.loadLogs gives each log dir a pool of num.recovery.threads.per.data.dir threads and submits one
    job per partition dir (``jobsForDir = logsToLoad.map { ... loadLog ... }``, ``pool.submit``;
    core/src/main/scala/kafka/log/LogManager.scala from 2.8.0 to 3.8.0, and still kafka.log.LogManager (Scala)
    in 4.3.1's kafka_2.13 jar): a partition is recovered by one thread
    from end to end. So the dir takes at least its largest partition's time, and at least the total shared by
    the threads: ``max(largest, nbytes / min(threads, partitions))`` at RECOVERY_BYTES_PER_S."""
    parallel = max(1, min(threads, partitions))
    return max(largest, nbytes / parallel) / RECOVERY_BYTES_PER_S


def index_missing_at_load(ctx: Context, pf: PartitionFacts, seg: Segment) -> bool:
    """Whether the loader finds this segment without its ``.index``: missing on disk, or deleted at load for an
    index ``.swap`` of its base (1.1-2.8, ``broker.swaps.indexes_deleted_at_load``). A directory under the index's
    name is no missing index: the loader asks ``offsetIndexFile().exists()``, true for a directory
    (LogSegment.java@3.7.1:182-193 sanityCheck, LogSegment.scala@2.8.2:80-91), and a closed segment's LazyIndex is
    not opened at load: it loads as is (lab 3.7.2 type-index_older_directory; the active segment's is
    filetypes.active_index_offline's, its resizeIndexes fails)."""
    if seg.index is None:
        return index_absent(pf.part, seg)
    if not pf.part.leftovers:
        return False
    from kafka_ops.broker.swaps import indexes_deleted_at_load

    return seg.base_offset in indexes_deleted_at_load(ctx.host, pf)


def txn_index_at_load(ctx: Context, pf: PartitionFacts, seg: Segment) -> tuple[str, str] | None:
    """What the next start's ``txnIndex.sanityCheck`` does with this segment's ``.txnindex`` (broker.txn_index:
    the broker exits, or it rebuilds the segment's indexes), or None; asked only of a stopped broker, and only
    when the check runs: the ``.index`` is there (else NoSuchFileException comes first) and, up to 2.2, the offset
    and time indexes pass their checks (else CorruptIndexException comes first: a rebuild)."""
    if seg.txnindex is None or ctx.host.broker_state == "running" or index_missing_at_load(ctx, pf, seg):
        return None
    version = ctx.host.kafka_version
    if version is not None and load_sanity_failure(seg, version):
        return None
    cache: dict[str, tuple[str, str] | None] = ctx.cache.setdefault("txn_index_at_load", {})
    path = seg.txnindex.path
    if path not in cache:
        from kafka_ops.broker.txn_index import sanity_at_load

        cache[path] = sanity_at_load(seg)
    return cache[path]


def txn_index_rebuilds(ctx: Context, pf: PartitionFacts, seg: Segment) -> str | None:
    """Why the next start's loader rebuilds this segment for its ``.txnindex`` (CorruptIndexException), or None."""
    got = txn_index_at_load(ctx, pf, seg)
    if got is None:
        return None
    from kafka_ops.broker.txn_index import REBUILT as TXN_REBUILT

    return got[1] if got[0] == TXN_REBUILT else None


def recovery_reason(ctx: Context, pf: PartitionFacts, seg: Segment) -> str | None:
    """Why the next start re-reads this segment and rebuilds its indexes (LogSegment.recover), or None."""
    txn = txn_index_rebuilds(ctx, pf, seg)
    if txn is not None:
        return txn
    if index_missing_at_load(ctx, pf, seg) and versions.missing_index_rebuilt(ctx.host.kafka_version):
        what = (
            "its .index is missing"
            if seg.index is None
            else "an index .swap of its base is there, so Log.removeTempFilesAndCollectSwapFiles deletes its "
            ".index, .timeindex and .txnindex before loading it (and keeps the .swap)"
        )
        if versions.since("missing_index_created_empty", ctx.host.kafka_version) is False:
            return f"{what}: Log.loadSegments finds no index file and recovers the segment"
        return f"{what}: the loader gets NoSuchFileException from LogSegment.sanityCheck and calls recoverSegment"
    if is_metadata_log(pf):
        return (
            "the KRaft metadata log is re-read in full at every start (KafkaMetadataLog opens it with "
            "recoveryPoint 0 and lastShutdownClean false)"
        )
    if ctx.host.broker_state != "running" and seg.base_offset in pf.will_recover:
        rp = pf.recovery_point
        return (
            f"the last stop was unclean (no .kafka_cleanshutdown in {pf.log_dir.path}) and the segment is at or "
            f"above the recovery point ({rp if rp is not None else 'none: 0'}), so LogLoader.recoverLog re-reads it"
        )
    return None


def load_sanity_failure(seg: Segment, version: tuple[int, ...]) -> str | None:
    """The exception ``LogSegment.sanityCheck`` of a broker older than 2.3.0 throws at load for this segment
    (then ``Log.loadSegmentFiles`` rebuilds its indexes), or None (also for 2.3.0 and later)."""
    if versions.since("no_index_sanity_at_load", version):
        return None
    if seg.offset_tail is not None:
        msg = offset_sanity(seg.offset_tail, seg.base_offset, version)
        if msg:
            # 1.1.0-2.0.x say "no greater than" (KAFKA-6324), <= 1.0.x "no larger than" (reference 1.7)
            return (
                msg.replace("no larger than", "no greater than")
                if versions.since("corrupt_index_exception", version)
                else msg
            )
    if seg.time_tail is not None:
        msg = time_sanity(seg.time_tail, seg.base_offset)
        if msg:
            return msg
    return None


@slotted
class NextStart:
    verdict: str  # rebuilt | kept | depends
    why: str


def next_start(ctx: Context, pf: PartitionFacts, seg: Segment) -> NextStart:
    """Whether the next start rebuilds this segment's indexes (and re-reads its .log), and why."""
    version = ctx.host.kafka_version
    reason = recovery_reason(ctx, pf, seg)
    if reason is not None:
        return NextStart(REBUILT, f"rebuilt from the records, because {reason} (LogSegment.recover)")
    running = ctx.host.broker_state == "running"

    def tail() -> str:
        return (
            "if the broker stops uncleanly and the segment is at or above the recovery point then, "
            "LogLoader.recoverLog rebuilds it; after a clean stop it is kept as it is"
            if running
            else _kept_reason(pf)
        )

    if version is not None:
        failure = load_sanity_failure(seg, version)
        if failure:
            return NextStart(
                REBUILT,
                f"Kafka {versions.text(version)} sanity-checks every index at load: LogSegment.sanityCheck throws "
                f"'{failure}', and the log loader logs 'Found a corrupted index file ... rebuilding index' and "
                "recovers the segment, rebuilding its indexes from the records",
            )
        if not versions.since("no_index_sanity_at_load", version):
            return NextStart(
                KEPT,
                _partition_text(
                    ctx, pf, "passes",
                    lambda: f"Kafka {versions.text(version)} sanity-checks indexes at load, but this one passes "
                    f"OffsetIndex/TimeIndex.sanityCheck; {tail()}",
                ),
            )  # fmt: skip
        return NextStart(
            DEPENDS if running else KEPT,
            _partition_text(
                ctx, pf, "unchecked",
                lambda: f"Kafka {versions.text(version)} does not sanity-check offset and time indexes at load "
                f"(since 2.3.0, KAFKA-7283; only txnIndex.sanityCheck runs): {tail()}",
            ),
        )  # fmt: skip
    old = load_sanity_failure(seg, (2, 0))
    mid = load_sanity_failure(seg, (2, 2))
    if mid:
        return NextStart(
            DEPENDS,
            f"the Kafka version is unknown: a broker older than 2.3.0 rebuilds it at load (LogSegment.sanityCheck: "
            f"'{mid}'); 2.3.0 and later do not sanity-check it (KAFKA-7283): {tail()}",
        )
    if old:
        return NextStart(
            DEPENDS,
            f"the Kafka version is unknown: a broker older than 2.1.0 rebuilds it at load (LogSegment.sanityCheck: "
            f"'{old}'); 2.1.0 and later accept it (KAFKA-7076, and no check at load since 2.3.0): {tail()}",
        )
    return NextStart(
        DEPENDS if running else KEPT,
        _partition_text(
            ctx, pf, "unknown",
            lambda: "no version of the broker rejects it at load (2.3.0 and later do not sanity-check offset and "
            f"time indexes, KAFKA-7283): {tail()}",
        ),
    )  # fmt: skip


def _partition_text(ctx: Context, pf: PartitionFacts, key: str, make: Callable[[], str]) -> str:
    """A verdict's text that is the same for every segment of ``pf`` (the usual one: kept as it is), made
    once per partition: the plan asks :func:`next_start` for every segment of every partition."""
    entry: tuple[PartitionFacts, dict[str, str]] | None = ctx.cache.get("next_start")
    if entry is None or entry[0] is not pf:
        entry = ctx.cache["next_start"] = (pf, {})
    text = entry[1].get(key)
    if text is None:
        text = entry[1][key] = make()
    return text


def _kept_reason(pf: PartitionFacts) -> str:
    if pf.log_dir.clean_shutdown:
        return (
            f"kept as it is ({pf.log_dir.path} has .kafka_cleanshutdown, so LogLoader.recoverLog "
            "does not run)"
        )
    rp = pf.recovery_point
    return (
        f"kept as it is (the segment lies below the recovery point {rp}, where LogLoader.recoverLog starts)"
    )


# ----------------------------------------------------------------------------------------------- readers


def read_index_head(path: str, kind: str, base_offset: int) -> IndexFile:
    """An offset or time index with only its real entries (the slots before the zero padding): the engine's
    reader, which decodes no padding slot, with the padding left out (padding is IDX004's)."""
    idx = (read_offset_index if kind == "offset" else read_time_index)(path, base_offset)
    return IndexFile(path, kind, base_offset, idx.length, idx.entry_size, idx.real_entries, idx.remainder)


def verify_indexes(seg: Segment) -> dict[str, list[IndexIssue]]:
    """Full verification of the segment's offset and time index against its .log (engine.verify).

    Reads both indexes (decoding the slots before their zero padding: padding is IDX004's), then the batch
    headers of the .log (no CRC): in that order, so that on a running broker every indexed position was written
    before the log is read (LogSegment.append writes the records, then the index entry). Returns
    {"offset": [...], "time": [...]} for the indexes that exist and can be read; unreadable files are left to
    PERM001.
    """
    out: dict[str, list[IndexIssue]] = {}
    if seg.log is None or (seg.index is None and seg.timeindex is None):
        return out
    off = tim = None
    try:
        off = read_index_head(seg.index.path, "offset", seg.base_offset) if seg.index is not None else None
    except EngineError:
        pass
    try:
        tim = (
            read_index_head(seg.timeindex.path, "time", seg.base_offset)
            if seg.timeindex is not None
            else None
        )
    except EngineError:
        pass
    if off is None and tim is None:
        return out
    try:
        with LogBuffer.open(seg.log.path) as buf:
            log = LogMap.build(buf)
    except EngineError:
        return out
    if off is not None:
        out["offset"] = verify_offset_index(off, log, seg.active)
    if tim is not None:
        out["time"] = verify_time_index(tim, log, seg.active)
    return out


@slotted
class AfterTail:
    """What lies from a tail position to the end of the .log, read without CRC checks."""

    batches: int  # complete batches (the CRC-invalid one included)
    records: int
    first_offset: int | None
    last_offset: int | None
    trailing_bytes: int  # bytes after the last complete batch: a torn batch or unreadable garbage
    partial_base_offset: int | None
    partial_last_offset: int | None
    partial_records: int | None


def describe_after(seg: Segment, position: int) -> AfterTail | None:
    """Offsets and records between ``position`` and the end of the segment (what recovery truncates)."""
    if seg.log is None:
        return None
    try:
        with LogBuffer.open(seg.log.path) as buf:
            scanner = BatchScanner(buf, start=position, verify_crc=False)
            n = recs = 0
            first = last = None
            for b in scanner:
                n += 1
                recs += b.records_count or 0
                first = b.base_offset if first is None else first
                last = b.last_offset
            trailing = 0
            p_base = p_last = p_count = None
            t = scanner.tail
            if t is not None:
                trailing = t.truncated_bytes
            if t is not None and t.kind == "torn":
                raw = bytes(buf.view[t.position : t.position + RECORD_BATCH_OVERHEAD])
                if len(raw) >= 8:
                    p_base = struct.unpack_from(">q", raw, 0)[0]
                magic = raw[16] if len(raw) > 16 else None
                if magic == 2:
                    if len(raw) >= 27:
                        p_last = p_base + struct.unpack_from(">i", raw, 23)[0]
                    if len(raw) >= RECORD_BATCH_OVERHEAD:
                        p_count = struct.unpack_from(">i", raw, 57)[0]
                elif magic in (0, 1):
                    p_last = p_base  # a legacy message holds one offset (the wrapper's last, if compressed)
    except EngineError:
        return None
    return AfterTail(n, recs, first, last, trailing, p_base, p_last, p_count)


def human_offsets(first: int | None, last: int | None) -> str:
    if first is None or last is None:
        return "unknown offsets"
    return f"offset {first}" if first == last else f"offsets {first}-{last}"


def partition_name(pf: PartitionFacts) -> str:
    return f"{pf.part.topic}-{pf.part.partition}"


def seg_file(seg: Segment, suffix: str) -> str:
    return os.path.join(seg.dir, f"{seg.base_offset:020d}{suffix}")


def rebuild_cost(ctx: Context, seg: Segment) -> str:
    """'re-reading its 1.2 GiB .log: about 25 s' at the audit's recovery rate (seed 002's broker: 48 MB/s)."""
    size = seg.log.size if seg.log else 0
    return f"re-reading its {human_bytes(size)} .log takes about {human_ms(ctx.recovery_seconds(size, 1) * 1000)}"
