"""DIR004: a filesystem holding log dirs has less free space than the broker will use before retention frees
space, plus what the next start's recovery needs.

The model (docs/DIR004.md), per filesystem (log dirs on one filesystem are summed, never counted twice; a
filesystem is its mount point, or its source device and size for bind mounts/subvolumes of one device), over
the audit's horizon H (``--horizon``, 24 h by default):

need = peak growth + size-capped growth + recovery + preallocation (non-sparse filesystems only)

* arrival rate of each partition: bytes appended over the last W = min(H, max(1 h, age of its oldest data)),
  from the ``.log`` files' modification times (a segment's mtime is its last append; its bytes are spread
  evenly between the previous segment's mtime and its own, the oldest from its first batch's timestamp);
* what retention frees (``kafka_ops.broker.retention.plan``, the broker's own walk: ``deleteRetentionMsBreachedSegments``
  every ``log.retention.check.interval.ms``) with the timestamps the broker will use, each deletion landing
  ``file.delete.delay.ms`` after its check (``LocalLog.deleteSegmentFiles``: renamed ``.deleted``, removed later);
* peak growth = max over t in (now, now + H] of (sum of rates x (1 + 20 / index.interval.bytes)) x t - bytes
  freed before t: every ``index.interval.bytes`` appended adds an 8-byte ``.index`` and at most a 12-byte
  ``.timeindex`` entry (``LogSegment.append``);
* partitions with ``retention.bytes`` >= 0 grow at most to ``retention.bytes + segment.bytes`` (size retention
  only deletes whole rolled segments): min(rate x H, that bound - current size), time deletions not counted;
* compacted-only and never-deleting partitions grow by their whole rate x H (what the cleaner frees is not
  predicted);
* recovery (a stopped broker that will recover segments, ``LogDirAggregate.recover_*``): the rebuilt index
  entries of segments whose ``.index`` is missing (20 bytes per ``index.interval.bytes`` of log); on a filesystem
  without sparse files, also the indexes preallocated while segments are recovered, one per recovery thread
  (``LogSegment.recover`` -> ``AbstractIndex.reset`` -> ``resize(maxIndexSize)``);
* preallocation: ``LogLoader.load`` resizes each partition's active indexes to ``segment.index.bytes``
  (``resizeIndexes``); ``RandomAccessFile.setLength`` makes a sparse file on Linux filesystems (ext4, xfs,
  btrfs, zfs, ...), where only written entries take space; on any other filesystem type the difference to the
  current size is counted.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from kafka_ops.broker.arrivals import HOUR_MS, arrival_rate
from kafka_ops.broker.retention import CHECK_INTERVAL_MS, SegView, plan
from kafka_ops.broker.timestamps import iso
from kafka_ops.checks.base import Finding, check
from kafka_ops.engine.indexes import OFFSET_ENTRY, TIME_ENTRY, preallocated_size
from kafka_ops.engine.logdir import TS_LOG, TS_UNREADABLE, TS_ZERO_PADDING
from kafka_ops.facts.context import Context
from kafka_ops.facts.model import HostFacts, LogDirFacts, PartitionFacts
from kafka_ops.units import human_bytes, human_ms

ENTRY_BYTES = OFFSET_ENTRY + TIME_ENTRY  # one .index and (at most) one .timeindex entry per index interval
SPARSE_FS = {
    "ext2", "ext3", "ext4", "xfs", "btrfs", "zfs", "f2fs", "tmpfs", "reiserfs", "jfs", "ocfs2", "gfs2",
    "nfs", "nfs4", "ceph", "overlay", "bcachefs",
}  # fmt: skip


@dataclass
class _Acc:
    """What DIR004 learns from one log dir's partitions as they stream by."""

    rate: float = 0.0  # bytes/ms of data of the partitions on the timeline
    index_rate: float = 0.0  # bytes/ms of index entries for it
    frees: list[tuple[int, int]] = field(default_factory=list)  # (time the space is freed, bytes)
    capped: float = 0.0  # growth of size-retained partitions, bounded by retention.bytes + segment.bytes
    capped_partitions: int = 0
    rebuilt_index_bytes: int = 0
    recover_index_bytes: int = 0  # preallocated size of one recovered segment's two indexes (largest topic)
    prealloc_extra: int = 0  # active indexes grown to segment.index.bytes at start, beyond their current size
    partitions: int = 0
    window_ms: int = 0


@check(
    "DIR004",
    severity="warning",
    scope="partition,host",
    title="Free space below what the broker writes before retention frees space, plus recovery",
    incident="a partition kept growing until the disks filled; a full log dir goes offline",
)
def run(ctx: Context, subject: PartitionFacts | HostFacts) -> Iterator[Finding]:
    accs: dict[str, _Acc] = ctx.cache.setdefault("dir004", {})
    if isinstance(subject, PartitionFacts):
        _learn(ctx, subject, accs.setdefault(subject.log_dir.path, _Acc()))
        return
    yield from _judge(ctx, subject, accs)


def _learn(ctx: Context, pf: PartitionFacts, acc: _Acc) -> None:
    segs = [s for s in pf.part.segments if s.log is not None]
    acc.partitions += 1
    if not segs:
        return
    now, horizon = ctx.now_ms, ctx.host.horizon_ms
    cfg = pf.config
    interval = max(1, cfg.int("index.interval.bytes"))
    sib = cfg.segment_index_bytes
    full_index = preallocated_size(OFFSET_ENTRY, sib) + preallocated_size(TIME_ENTRY, sib)
    running = ctx.host.broker_state == "running"

    rate, window = arrival_rate(pf, now, horizon)
    index_rate = rate * ENTRY_BYTES / interval
    acc.window_ms = max(acc.window_ms, window)

    size_now = sum(s.log.size for s in segs)  # type: ignore[union-attr,misc]
    if cfg.deletes and cfg.retention_bytes >= 0:
        bound = max(0, cfg.retention_bytes + cfg.int("segment.bytes") - size_now)
        acc.capped += min((rate + index_rate) * horizon, bound * (1 + ENTRY_BYTES / interval))
        acc.capped_partitions += 1
    else:
        acc.rate += rate
        acc.index_rate += index_rate
        if cfg.deletes and cfg.retention_ms >= 0:
            delay = cfg.int("file.delete.delay.ms")
            # a time deletion comes no earlier than timestamp + retention.ms + 1: when no segment's can be freed
            # within the horizon, the plan has nothing to say here (most partitions: skip it, and make no views)
            latest = now + horizon - delay - cfg.retention_ms - 1
            due = False  # a segment whose timestamp is at or before latest (decided as the segments are stamped)
            stamped: list[tuple[int, int, int | None, str]] = []  # (base, size, timestamp, source)
            will_recover = pf.will_recover
            for s in segs:
                if will_recover and s.base_offset in will_recover:
                    rec = pf.recovery.get(s.base_offset)
                    ts = rec.max_timestamp if rec is not None and rec.max_timestamp >= 0 else s.log.mtime_ms  # type: ignore[union-attr]
                    src = TS_LOG
                else:
                    ts, src = s.retention_timestamp(False)
                    if src == TS_UNREADABLE:
                        ts = None
                    elif running and s.active and src == TS_ZERO_PADDING:
                        ts = s.log.mtime_ms  # type: ignore[union-attr]  # a running broker's preallocated index
                stamped.append((s.base_offset, s.log.size, ts, src))  # type: ignore[union-attr]
                if ts is not None and ts <= latest:
                    due = True
            if due:
                interval_ms = ctx.host.configs.server_int(
                    "log.retention.check.interval.ms", CHECK_INTERVAL_MS
                )
                views = [SegView(base, size, ts, src, size == 0) for base, size, ts, src in stamped]
                for d in plan(
                    views, now_ms=now, retention_ms=cfg.retention_ms, retention_bytes=-1, deletes=True,
                    log_end=pf.log_end_offset, check_interval_ms=interval_ms,
                ):  # fmt: skip
                    if d.at_ms + delay <= now + horizon:
                        acc.frees.append((d.at_ms + delay, d.size))

    # recovery at the next start
    if pf.will_recover:
        for s in segs:
            if s.base_offset in pf.will_recover and s.index is None:
                acc.rebuilt_index_bytes += (s.log.size // interval + 1) * ENTRY_BYTES  # type: ignore[union-attr]
        acc.recover_index_bytes = max(acc.recover_index_bytes, full_index)
    # LogLoader.load: the active segment's indexes are resized to segment.index.bytes
    active = segs[-1]
    have = (active.index.size if active.index else 0) + (active.timeindex.size if active.timeindex else 0)
    acc.prealloc_extra += max(0, full_index - have)


def _fs_key(ldf: LogDirFacts) -> tuple[str, ...]:
    m = ldf.mount
    assert m is not None
    if m.source.startswith("/") and m.total_bytes is not None:
        return ("dev", m.source, str(m.total_bytes))  # a bind mount or subvolume of the same device
    return ("mp", m.mount_point)


def _judge(ctx: Context, h: HostFacts, accs: dict[str, _Acc]) -> Iterator[Finding]:
    groups: dict[tuple[str, ...], list[LogDirFacts]] = {}
    for ldf in h.log_dirs:
        if ldf.scan.exists and ldf.mount is not None and ldf.mount.free_bytes is not None:
            groups.setdefault(_fs_key(ldf), []).append(ldf)
    now, horizon = ctx.now_ms, h.horizon_ms
    threads = max(1, h.configs.server_int("num.recovery.threads.per.data.dir", 1))
    for dirs in groups.values():
        m = dirs[0].mount
        assert m is not None and m.free_bytes is not None
        sparse = m.fstype in SPARSE_FS
        accs_here = [accs.get(d.path, _Acc()) for d in dirs]
        rate = sum(a.rate for a in accs_here)
        index_rate = sum(a.index_rate for a in accs_here)
        frees = sorted(f for a in accs_here for f in a.frees)
        # peak of (rate + index_rate) * t - freed before t, just before each deletion and at the horizon
        best, best_t, freed_before, cum = 0.0, now + horizon, 0, 0
        i = 0
        while True:
            t = frees[i][0] if i < len(frees) else now + horizon
            g = (rate + index_rate) * (t - now) - cum
            if g > best:
                best, best_t, freed_before = g, t, cum
            if i >= len(frees):
                break
            while i < len(frees) and frees[i][0] == t:
                cum += frees[i][1]
                i += 1
        freed_total = cum
        capped = sum(a.capped for a in accs_here)
        capped_n = sum(a.capped_partitions for a in accs_here)
        rebuilt = sum(a.rebuilt_index_bytes for a in accs_here)
        in_flight = 0
        if not sparse:
            for d, a in zip(dirs, accs_here):
                in_flight += min(threads, d.agg.recover_segments) * a.recover_index_bytes
        recovery = rebuilt + in_flight
        prealloc = 0 if sparse else sum(a.prealloc_extra for a in accs_here)
        need = best + capped + recovery + prealloc
        if m.free_bytes >= need:
            continue
        window = max((a.window_ms for a in accs_here), default=horizon)
        names = ", ".join(d.path for d in dirs)
        parts = [
            f"{human_bytes(best)} of growth at its peak (new data and its index entries, minus what retention has "
            f"freed by then; arriving at "
            f"{human_bytes(rate * HOUR_MS)}/h, measured from the .log files' modification times over the last "
            f"{human_ms(window)}; retention frees {human_bytes(freed_total)} in that time"
            + (
                f", the peak is just before {iso(best_t)}, after {human_bytes(freed_before)} freed"
                if best_t < now + horizon
                else ""
            )
            + ")"
        ]
        if capped_n:
            parts.append(
                f"{human_bytes(capped)} for {capped_n} partition(s) bounded by retention.bytes + segment.bytes"
            )
        if recovery:
            parts.append(
                f"{human_bytes(recovery)} for the next start's recovery ("
                + (
                    f"{human_bytes(rebuilt)} of rebuilt indexes for segments without .index"
                    if rebuilt
                    else ""
                )
                + (
                    f"{'; ' if rebuilt else ''}{human_bytes(in_flight)} of indexes preallocated while segments are "
                    f"recovered, one per recovery thread"
                    if in_flight
                    else ""
                )
                + ")"
            )
        if prealloc:
            parts.append(
                f"{human_bytes(prealloc)} for the active segments' indexes, which the broker preallocates to "
                f"segment.index.bytes at start and {m.fstype} does not keep sparse"
            )
        yield run.finding(
            f"filesystem {m.mount_point} ({m.fstype} {m.source}) holding log dir(s) {names} has "
            f"{human_bytes(m.free_bytes)} free, less than the {human_bytes(need)} the broker needs over the next "
            f"{human_ms(horizon)}: "
            + "; ".join(parts)
            + ". When it is full, appends fail with IOException 'No "
            "space left on device': the broker takes the log dir offline (LogDirFailureChannel) and halts when no "
            "log dir is left.",
            "Free space before it runs out: lower retention.ms or retention.bytes of the largest topics "
            "(kafka-configs --bootstrap-server ... --alter --entity-type topics --entity-name <topic> --add-config "
            "retention.ms=<ms>), move partitions to another log dir or broker (kafka-reassign-partitions), remove "
            "leftover -delete/-stray dirs (DIR003), or grow the filesystem. Never delete segment files by hand.",
            path=m.mount_point,
            log_dir=dirs[0].path,
            details={
                "log_dirs": [d.path for d in dirs],
                "mount_point": m.mount_point,
                "fstype": m.fstype,
                "sparse_files": sparse,
                "free_bytes": m.free_bytes,
                "need_bytes": round(need),
                "growth_bytes": round(best),
                "rate_bytes_per_hour": round(rate * HOUR_MS),
                "index_bytes_per_hour": round(index_rate * HOUR_MS),
                "freed_bytes": freed_total,
                "peak_at_ms": best_t,
                "capped_bytes": round(capped),
                "recovery_bytes": recovery,
                "prealloc_bytes": prealloc,
                "horizon_ms": horizon,
                "window_ms": window,
            },
        )


__all__ = ["run"]
