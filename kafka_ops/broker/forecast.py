"""The retention forecast: which segment retention deletes when, why, and each topic's size over the horizon.

One model: every deletion comes from :func:`kafka_ops.broker.retention.plan` (UnifiedLog.deleteOldSegments), fed with
the timestamp the broker will use for each segment (:func:`broker_timestamp`, the same as RET001's). Used by
RET002/RET003/RET004, ``kafka-ops forecast``, the HTML report and the Spark job: standard library only, and it
works from the audit's own facts (``facts.collect.gather`` + ``iter_partitions``), one partition at a time, so
memory stays flat; per-topic state is a few numbers per retention check that deletes something.

When retention runs (apache/kafka snapshot 1eb7644):
* non-compacted logs: LogManager's ``kafka-log-retention`` task, every ``log.retention.check.interval.ms``
  (300000), ``LogManager.cleanupLogs`` -> ``UnifiedLog.deleteOldSegments``; ``cleanupLogs`` only takes logs
  without ``compact`` in cleanup.policy (``pauseCleaningForNonCompactedPartitions``, or the ``!compact``
  filter when there is no cleaner).
* logs with ``compact`` (``compact`` and ``compact,delete``): the cleaner thread, after each cleaning attempt
  (``LogCleaner.CleanerThread.cleanFilthiestLog`` -> ``cleanerManager.deletableLogs()`` ->
  ``deleteOldSegments``); an idle cleaner sleeps ``log.cleaner.backoff.ms`` (15000) between attempts
  (``doWork``). After a start its first pass deletes nothing (the high watermarks are still 0), so the first
  deletion comes one backoff after the start (the lab's brokers show it). With ``log.cleaner.enable=false`` there is no cleaner (LogManager.startup) and retention never
  runs on them. A running broker whose logs say its cleaner skips a log (every thread dead, or the partition
  uncleanable from 2.1.0: :func:`kafka_ops.broker.cleaner.retention_stall`) deletes nothing of it until a
  restart; the note says what the restart then deletes at once.

Assumptions (also in every output): no new data arrives (the forecast is of what is on disk now, so rolls do not
happen: ``LogSegment.shouldRoll`` is only asked on append), the high watermark is the log end offset (a leader
in sync), and checks happen at now, now + interval, ... For a stopped broker "now" is the first check after it
starts (``log.initial.task.delay.ms``, 30 s, after the log manager starts). Deleted segments are renamed
``.deleted`` and removed from disk ``file.delete.delay.ms`` (60 s) later; sizes here are the log's
(``UnifiedLog.size``), which drops at once.

Besides that forecast, the audit's report carries a *projection* (:func:`project_partition`, the HTML report's
size-over-time charts): what each partition's size does over the horizon if data keeps arriving at the rate
DIR004 measures (``broker.arrivals.arrival_rate``). Segments roll on ``segment.bytes`` and ``segment.ms``
(``LogSegment.shouldRoll``) and the same :func:`retention.plan` deletes them: the saw-tooth of seed 003.
"""

from __future__ import annotations

import csv
import json
from bisect import bisect_left
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from dataclasses import field
from itertools import repeat
from operator import add, mul, sub
from typing import Any, TextIO

from kafka_ops.broker.arrivals import arrival_rate
from kafka_ops.broker.cleaner import retention_stall
from kafka_ops.broker.plan import not_loaded
from kafka_ops.broker.retention import CHECK_INTERVAL_MS, Deletion, SegView, next_check, plan
from kafka_ops.broker.scheduler import INITIAL_TASK_DELAY_MS, initial_task_delay  # noqa: F401 (INITIAL_TASK_DELAY_MS: its old home)
from kafka_ops.broker.suffixed_dirs import no_retention
from kafka_ops.broker.timestamps import TS_ACTIVE, iso, predicted_timestamp, real_timestamp
from kafka_ops.engine import versions
from kafka_ops.engine.compat import slotted
from kafka_ops.engine.logdir import (
    TS_LOG,
    TS_MTIME,
    TS_MTIME_NO_TIMEINDEX,
    TS_UNREADABLE,
    TS_ZERO_PADDING,
    Segment,
)
from kafka_ops.engine.pickling import by_constructor
from kafka_ops.engine.shell import printable
from kafka_ops.facts.access import access_for, all_granted
from kafka_ops.facts.collect import gather_partition, iter_partitions
from kafka_ops.facts.config import Configs, TopicConfig
from kafka_ops.facts.context import Context
from kafka_ops.facts.model import HostFacts, PartitionFacts
from kafka_ops.units import human_bytes, human_ms

FORECAST_VERSION = 1
# per-segment deletion records the audit's forecast keeps per topic (RET002's details; the rest is counted in
# segments_omitted; `kafka-ops forecast` prints them all)
KEEP_SEGMENTS = 1000
# the key of ctx.cache under which the audit keeps its HostForecast (audit_forecast)
AUDIT_FORECAST = "audit_forecast"
CLEANER_BACKOFF_MS = 15_000  # CleanerConfig.LOG_CLEANER_BACKOFF_MS

ASSUMPTIONS = [
    "no new data arrives: the forecast is of the segments on disk now (no rolls, no new segments)",
    "the high watermark is the log end offset (a leader in sync)",
    "retention checks run at now, now + interval, ...; for a stopped broker 'now' is the first check after it starts",
    "sizes are the log's size (UnifiedLog.size); deleted files leave the disk file.delete.delay.ms (60 s) later",
    "the cleaner does not rewrite segments during the horizon (compacted topics may shrink or merge further)",
]

REASONS = ("log_start", "retention_bytes", "retention_ms")

# RET001's fallback timestamps (checks.ret001.SUSPECT): deletions they cause are shown apart in the report
FALLBACK_SOURCES = (TS_ZERO_PADDING, TS_UNREADABLE, TS_MTIME, TS_MTIME_NO_TIMEINDEX)
PROJECTION_POINTS = (
    240  # at most this many points per projected series (a multiple of the check interval apart)
)
PROJECTION_ASSUMPTIONS = [
    "data keeps arriving at each partition's recent rate (DIR004's: bytes appended over the last "
    "min(horizon, max(1 h, age of its oldest data)), from the .log mtimes); for a stopped broker, from now on",
    "segments roll when full (segment.bytes) or segment.ms after their first record (LogSegment.shouldRoll; "
    "segment.jitter.ms ignored); rolls closer than a quarter of the point spacing are merged",
    "the same retention model deletes them (retention.plan), evaluated at the projection's points",
    "the cleaner does not rewrite segments: compacted topics grow by their whole arrival",
]


# ----------------------------------------------------------------------------------------------- when


@by_constructor  # sent by the audit's workers (facts.pool)
@slotted(frozen=True)
class Schedule:
    """How often retention runs for a topic, and by which thread."""

    interval_ms: int
    runs: bool
    thread: str  # log-retention (LogManager) | log-cleaner (LogCleaner)
    note: str = ""
    # a stopped broker's first retention check comes this long after its start (LogManager.startup schedules
    # "kafka-log-retention" with initialTaskDelayMs): the plan's checks run at now + first_delay_ms + k * interval
    first_delay_ms: int = 0

    def to_dict(self) -> dict[str, object]:
        return {
            "thread": self.thread, "interval_ms": self.interval_ms, "runs": self.runs, "note": self.note,
            "first_delay_ms": self.first_delay_ms,
        }  # fmt: skip


def _enabled(configs: Configs, key: str, default: bool) -> bool:
    raw = configs.server.get(key)
    return default if raw is None else raw.strip().lower() != "false"


def retention_schedule(configs: Configs, cfg: TopicConfig) -> Schedule:
    if cfg.compacted:
        if not _enabled(configs, "log.cleaner.enable", True):
            return Schedule(
                0, False, "log-cleaner",
                "log.cleaner.enable=false: retention of topics with compact in cleanup.policy only runs in the "
                "cleaner thread (LogCleaner.CleanerThread.cleanFilthiestLog; LogManager.cleanupLogs skips them), "
                "so nothing of this topic is ever deleted",
            )  # fmt: skip
        backoff = configs.broker_int("log.cleaner.backoff.ms", CLEANER_BACKOFF_MS)
        return Schedule(max(1, backoff), True, "log-cleaner")
    interval = configs.server_int("log.retention.check.interval.ms", CHECK_INTERVAL_MS)
    return Schedule(max(1, interval), True, "log-retention")


# ----------------------------------------------------------------------------------------------- what


def first_check_delay(host: HostFacts) -> int:
    """How long after the next start the first retention check runs: 0 for a running broker (its checks are
    already going; their phase is unknown), else LogManager's initial task delay."""
    if host.broker_state == "running":
        return 0
    return initial_task_delay(host)


def broker_timestamp(
    host: HostFacts, pf: PartitionFacts, seg: Segment, sanity_at_load: bool | None = None
) -> tuple[int | None, str]:
    """The largest timestamp the broker will compare for ``seg`` and where it comes from (RET001's rule):
    :func:`broker.timestamps.predicted_timestamp`, and 0 when the broker user cannot read the .timeindex (seed 000's
    broker took it as 0; a current one takes the log dir offline at the first read). ``sanity_at_load``:
    :func:`index_sanity_at_load` of the host, when the caller asked it once for all its segments."""
    ts, source = predicted_timestamp(pf, seg, running=host.broker_state == "running")
    if sanity_at_load is None:
        sanity_at_load = index_sanity_at_load(host)
    if source != TS_LOG and sanity_at_load:
        # brokers before 2.3.0 sanity-check every index at load and rebuild a failing one from the records
        # (LogSegment.sanityCheck -> CorruptIndexException -> recoverSegment): then the records' timestamp is used
        from kafka_ops.broker.context import HostContext
        from kafka_ops.broker.startup import REBUILT, next_start

        if next_start(HostContext(host), pf, seg).verdict == REBUILT:
            return real_timestamp(seg), TS_LOG
    who = host.identity
    if who is not None and seg.timeindex is not None and source != TS_LOG and not all_granted(who, pf):
        a = access_for(who, seg.timeindex, pf.acls.get(seg.timeindex.path), pf.probe)
        if not a.read:
            return 0, TS_UNREADABLE
    if source == TS_UNREADABLE:
        return 0, source
    return ts, source


def index_sanity_at_load(host: HostFacts) -> bool:
    """Whether the host's broker sanity-checks every index at load (before 2.3.0): a rule of the version, asked
    once per partition rather than per segment."""
    return versions.since("no_index_sanity_at_load", host.kafka_version) is False


@by_constructor  # sent by the audit's workers (facts.pool)
@slotted
class SegmentForecast:
    base: int
    size: int
    timestamp: int | None  # what the broker compares (LogSegment.largestTimestamp after the next start)
    # time_index | zero_padding | mtime | mtime_missing_timeindex | log | unreadable | active_segment
    source: str
    delete_at: int | None = None  # the retention check that deletes it (None: never, without new data)
    reason: str | None = None  # log_start | retention_bytes | retention_ms
    held_by: int | None = None  # an older segment whose later expiry delays this one (deletableSegments)
    note: str | None = None  # why it is never deleted
    first_timestamp: int | None = None  # first batch's timestamp (the oldest segment only)

    def in_horizon(self, horizon_end: int) -> bool:
        return self.delete_at is not None and self.delete_at <= horizon_end

    def to_dict(self, horizon_end: int) -> dict[str, Any]:
        d: dict[str, Any] = {
            "base_offset": self.base, "bytes": self.size, "timestamp": self.timestamp,
            "timestamp_source": self.source, "delete_at": self.delete_at, "delete_reason": self.reason,
            "in_horizon": self.in_horizon(horizon_end), "held_by": self.held_by, "note": self.note,
        }  # fmt: skip
        if self.first_timestamp is not None:
            d["first_record_timestamp"] = self.first_timestamp
        return d


@by_constructor  # sent by the audit's workers (facts.pool)
@slotted
class PartitionForecast:
    topic: str
    partition: int
    log_dir: str
    path: str
    now_ms: int
    horizon_ms: int
    config: TopicConfig
    schedule: Schedule
    log_start: int | None
    log_end: int | None
    segments: list[SegmentForecast]
    errors: list[dict[str, Any]] = field(default_factory=list)
    rate: float = 0.0  # arrival rate, bytes/ms (broker.arrivals.arrival_rate): for the projection only
    # project_lazy(self, grid) made where the facts were gathered (the audit's workers): (grid, projection)
    projection: tuple[list[int], list[float] | Line] | None = None

    def projected(self, grid: list[int]) -> list[float] | Line:
        """``project_lazy(self, grid)``, made once (the topic's and the log dir's sums both ask)."""
        made = self.projection
        if made is not None and (made[0] is grid or made[0] == grid):
            return made[1]
        out = project_lazy(self, grid)
        self.projection = (grid, out)
        return out

    @property
    def horizon_end(self) -> int:
        return self.now_ms + self.horizon_ms

    @property
    def bytes(self) -> int:
        return sum(s.size for s in self.segments)

    def deletions(self, within_horizon: bool = True) -> list[SegmentForecast]:
        end = self.horizon_end
        return [
            s for s in self.segments if s.delete_at is not None and (not within_horizon or s.delete_at <= end)
        ]

    def block(self, why: str) -> None:
        """The next start does not serve this partition (its log dir goes offline): nothing is deleted."""
        s0 = self.schedule
        self.schedule = Schedule(
            s0.interval_ms, False, s0.thread, f"nothing is deleted: {why}", s0.first_delay_ms
        )
        for s in self.segments:
            s.delete_at = s.reason = s.held_by = None

    def segment(self, base: int) -> SegmentForecast | None:
        return next((s for s in self.segments if s.base == base), None)

    def replan(self, timestamps: Mapping[int, int | None]) -> dict[int, Deletion]:
        """:func:`retention.plan` again with some segments' timestamps replaced (a what-if: RET003's "had the
        producer's clock been right"), with this partition's config, schedule and offsets."""
        if not self.schedule.runs:
            return {}
        views = [
            SegView(s.base, s.size, timestamps.get(s.base, s.timestamp), s.source) for s in self.segments
        ]
        cfg = self.config
        deletions = plan(
            views, now_ms=self.now_ms + self.schedule.first_delay_ms, retention_ms=cfg.retention_ms,
            retention_bytes=cfg.retention_bytes,
            deletes=cfg.deletes, log_start=self.log_start, log_end=self.log_end,
            check_interval_ms=self.schedule.interval_ms,
        )  # fmt: skip
        return {d.base: d for d in deletions}

    def to_dict(self) -> dict[str, Any]:
        gone = self.deletions()
        cfg = self.config
        return {
            "topic": self.topic, "partition": self.partition, "log_dir": self.log_dir, "path": self.path,
            "bytes": self.bytes, "log_start_offset": self.log_start, "log_end_offset": self.log_end,
            "config": {
                "cleanup_policy": cfg.values.get("cleanup.policy"), "retention_ms": cfg.retention_ms,
                "retention_bytes": cfg.retention_bytes, "segment_bytes": cfg.values.get("segment.bytes"),
                "segment_ms": cfg.values.get("segment.ms"),
            },
            "retention_check": self.schedule.to_dict(),
            "deleted_bytes": sum(s.size for s in gone), "deleted_segments": len(gone),
            "segments": [s.to_dict(self.horizon_end) for s in self.segments],
            "errors": self.errors,
        }  # fmt: skip


def forecast_partition(
    host: HostFacts, pf: PartitionFacts, *, now_ms: int | None = None, horizon_ms: int | None = None
) -> PartitionForecast:
    """Every segment of one partition: the timestamp the broker will use, and when retention deletes it."""
    now = host.now_ms if now_ms is None else now_ms
    horizon = host.horizon_ms if horizon_ms is None else horizon_ms
    cfg = pf.config
    sched = retention_schedule(host.configs, cfg)
    delay = first_check_delay(host)
    if delay and sched.runs and sched.thread == "log-retention":
        sched = Schedule(sched.interval_ms, sched.runs, sched.thread, sched.note, delay)
    elif sched.runs and sched.thread == "log-cleaner" and host.broker_state != "running":
        # the cleaner's first pass comes as the broker starts, while every loaded log's high watermark is still
        # 0 ("Completed load of Log(... highWatermark=0": Partition sets it when it becomes leader or follower),
        # and UnifiedLog.deletableSegments only deletes below the high watermark: nothing goes. The next pass
        # comes log.cleaner.backoff.ms later (CleanerThread.doWork pauses backoffMs when it cleaned nothing). The
        # lab's 2.8.2 broker deleted a compact,delete topic's expired segments 15.1 s after "Loaded 25 logs".
        sched = Schedule(sched.interval_ms, sched.runs, sched.thread, sched.note, sched.interval_ms)
    stalled = None
    if sched.runs and sched.thread == "log-cleaner":  # a running broker whose cleaner skips this log
        stalled = retention_stall(host, f"{pf.part.topic}-{pf.part.partition}")
    blocked = not_loaded(host, pf)
    if blocked is None:
        blocked = no_retention(host, pf)
    if blocked is not None:  # the next start serves nothing of this partition, so it deletes nothing of it
        sched = Schedule(
            sched.interval_ms, False, sched.thread, f"nothing is deleted: {blocked}", sched.first_delay_ms
        )
    segs: list[SegmentForecast] = []
    sanity = index_sanity_at_load(host)
    for seg in pf.part.segments:
        ts, source = broker_timestamp(host, pf, seg, sanity)
        segs.append(SegmentForecast(seg.base_offset, seg.log.size if seg.log else 0, ts, source))
    if segs and segs[0].base in pf.first_timestamps:
        segs[0].first_timestamp = pf.first_timestamps[segs[0].base]
    if stalled is not None and blocked is None:
        sched = Schedule(
            sched.interval_ms, False, sched.thread, f"{stalled}. {_after_restart(pf, segs, sched, now)}",
            sched.first_delay_ms,
        )  # fmt: skip
    out = PartitionForecast(
        pf.part.topic, pf.part.partition, pf.log_dir.path, pf.part.path, now, horizon, cfg, sched,
        pf.log_start, pf.log_end_offset, segs, [e.to_dict() for e in pf.errors],
    )  # fmt: skip
    if not segs:
        return out
    out.rate = arrival_rate(pf, now, horizon)[0]
    deletions = list(out.replan({}).values())  # retention.plan, in deletion order
    by_base = {s.base: s for s in segs}
    latest: tuple[int, int] | None = None  # (own expiry, base) of the latest-expiring time deletion so far
    for d in deletions:
        s = by_base[d.base]
        s.delete_at, s.reason = d.at_ms, d.reason
        if d.reason == "retention_ms" and s.timestamp is not None:
            own = next_check(
                s.timestamp + cfg.retention_ms + 1, now + sched.first_delay_ms, sched.interval_ms
            )
            if latest is not None and own < d.at_ms:
                s.held_by = latest[1]
            if latest is None or own > latest[0]:
                latest = (own, s.base)
    _explain_kept(out, len(deletions))
    return out


def _after_restart(pf: PartitionFacts, segs: list[SegmentForecast], sched: Schedule, now: int) -> str:
    """What a restart now deletes of a partition whose running cleaner skips it: the new cleaner's first pass
    deletes nothing (high watermarks still 0), its second, log.cleaner.backoff.ms later, deletes what expired
    (the same rule as a stopped broker's forecast). The timestamps are the running broker's: a restart that
    rebuilds an index could change them (the audit's next-start plan says where)."""
    cfg = pf.config
    first = now + sched.interval_ms
    views = [SegView(s.base, s.size, s.timestamp, s.source) for s in segs]
    gone = [
        d for d in plan(
            views, now_ms=first, retention_ms=cfg.retention_ms, retention_bytes=cfg.retention_bytes,
            deletes=cfg.deletes, log_start=pf.log_start, log_end=pf.log_end_offset,
            check_interval_ms=sched.interval_ms,
        )
        if d.at_ms <= first
    ]  # fmt: skip
    if not gone:
        return "A restart deletes nothing of it at once"
    size = sum(s.size for s in segs if s.base in {d.base for d in gone})
    # a new thread that dies again on the same log deletes nothing: each pass cleans before it deletes
    # (LogCleaner.cleanOrSleep @1.1.0:297-327, cleanFilthiestLog @2.2.0:309-330)
    return (
        f"A restart now, once the cleaner's cause is removed, deletes {len(gone)} segment(s), {human_bytes(size)}, "
        f"at once: its cleaner's second pass, log.cleaner.backoff.ms ({human_ms(sched.interval_ms)}) after the "
        "start, finds them expired (a new cleaner that dies again on the same log deletes nothing: each pass "
        "cleans before it deletes)"
    )


def _explain_kept(fc: PartitionForecast, n_deleted: int) -> None:
    """Say why the segments that retention never deletes (without new data) stay."""
    kept = fc.segments[n_deleted:]
    if not kept:
        return
    cfg = fc.config
    first = kept[0]
    if not fc.schedule.runs:
        why = fc.schedule.note
    elif not cfg.deletes:
        why = (
            f"cleanup.policy={cfg.values.get('cleanup.policy')}: without delete only segments below the log "
            "start offset are deleted (UnifiedLog.deleteOldSegments)"
        )
    elif cfg.retention_ms < 0:
        why = "retention.ms=-1 (no time retention) and retention.bytes is not exceeded"
    elif first is fc.segments[-1] and first.size == 0:
        why = "an empty last segment is never deleted (UnifiedLog.deletableSegments)"
    elif first.timestamp is None:
        why = f"its largest timestamp is unknown ({first.source}): time retention cannot decide"
    else:
        why = "not deletable"  # pragma: no cover - plan() deletes every segment with a known timestamp
    first.note = why
    if len(kept) > 1:  # the later ones share one note, made once
        note = (
            why
            if not fc.schedule.runs or not cfg.deletes or cfg.retention_ms < 0
            else f"after segment {first.base}, which is never deleted: deletion stops at the first segment "
            "that cannot go (UnifiedLog.deletableSegments)"
        )
        for s in kept[1:]:
            s.note = note


# ----------------------------------------------------------------------------------------------- projection


def projection_grid(now_ms: int, horizon_ms: int, check_interval_ms: int) -> list[int]:
    """Retention checks from now to the horizon, every k-th one so that there are at most
    ``PROJECTION_POINTS`` + 1 points."""
    interval = max(1, check_interval_ms)
    checks = max(1, horizon_ms // interval)
    step = interval * max(1, -(-checks // PROJECTION_POINTS))
    return list(range(now_ms, now_ms + horizon_ms + 1, step))


@slotted(frozen=True)
class Line:
    """A projected series that is ``total + rate * (t - t0)`` at every grid point t (t0 = the first): a
    partition with no roll and no deletion over the horizon. Summed as two numbers instead of a point list."""

    total: float
    rate: float

    def __reduce__(self) -> tuple[object, ...]:  # a constructor call when the audit's workers send it
        return Line, (self.total, self.rate)


def line_values(total: float, rate: float, grid: list[int]) -> list[float]:
    """The points of a :class:`Line` (or of a sum of them) on ``grid``."""
    if not grid:
        return []
    return list(map(add, repeat(total), map(mul, repeat(rate), map(sub, grid, repeat(grid[0])))))


def project_partition(fc: PartitionForecast, grid: list[int]) -> list[float]:
    """The partition's size at each grid point if data keeps arriving at ``fc.rate`` (bytes/ms).

    The active segment grows and rolls when full (``segment.bytes``) or ``segment.ms`` after its first record
    (``LogSegment.shouldRoll``: size, then ``timeWaitedForRoll`` against the first batch's timestamp); a rolled
    segment's largest timestamp is its last append. Deletions come from :func:`retention.plan` (the forecast's
    model). Its schedule for a closed segment does not change when data is appended after it (deletableSegments
    walks from the oldest; its time is the latest expiry so far), so the plan is kept and applied as time
    passes, and asked again only when it reaches the segment that was active when it was made (whose largest
    timestamp has moved since), at each point when retention.bytes is set (appends change the size), and
    while nothing is scheduled (an empty active segment may fill).
    """
    out = _project(fc, grid, False)
    assert isinstance(out, list)
    return out


def project_lazy(fc: PartitionForecast, grid: list[int]) -> list[float] | Line:
    """:func:`project_partition`, or the :class:`Line` whose points it would return (the usual partition:
    nothing rolls or goes within the horizon), which the accumulators sum without a list per partition."""
    return _project(fc, grid, True)


def _project(fc: PartitionForecast, grid: list[int], lazy: bool) -> list[float] | Line:
    if not grid:
        return []
    if not fc.segments:
        return [0.0] * len(grid)
    cfg = fc.config
    rate = max(0.0, fc.rate)
    step = grid[1] - grid[0] if len(grid) > 1 else 1
    seg_bytes = max(1, cfg.int("segment.bytes"))
    if rate > 0:
        seg_bytes = max(seg_bytes, int(rate * step / 4))  # merge rolls finer than the chart can show
    seg_ms = max(1, cfg.int("segment.ms"), step // 4)
    if lazy and len(grid) > 1:
        line = _as_line(fc, grid, rate, seg_bytes, seg_ms)
        if line is not None:  # the usual partition: no per-segment views, no pending deletions made
            return line
    segs = [SegView(s.base, s.size, s.timestamp, s.source, s.size == 0) for s in fc.segments]
    sizes = [float(s.size) for s in segs]  # the active segment's size grows in fractions of a byte
    total = sum(sizes)
    log_end = max(fc.log_end or 0, segs[-1].base + 1)
    active_start = _active_start(fc, grid[0])
    by_size = cfg.deletes and cfg.retention_bytes >= 0
    by_time = cfg.deletes and cfg.retention_ms >= 0

    def replan(t: int) -> list[Deletion]:
        for i, s in enumerate(segs):
            s.size = int(sizes[i])
        return plan(
            segs, now_ms=t, retention_ms=cfg.retention_ms, retention_bytes=cfg.retention_bytes,
            deletes=cfg.deletes, log_start=fc.log_start, log_end=log_end, check_interval_ms=fc.schedule.interval_ms,
        )  # fmt: skip

    pending: list[Deletion] = []
    planned_active = segs[-1].base
    out: list[float] = []
    prev = grid[0]
    k, n = 0, len(grid)
    while k < n:
        t = grid[k]
        if k and (not fc.schedule.runs or (not by_size and (pending or rate == 0 or not by_time))):
            # fast path: points before the next roll or deletion only add arrivals to the active segment (and
            # where retention does not run, e.g. in a log dir the next start takes offline, nothing is deleted)
            a = len(segs) - 1
            nxt = pending[0].at_ms if pending else float("inf")
            if rate > 0:
                nxt = min(nxt, prev + max(0.0, seg_bytes - sizes[a]) / rate, active_start + seg_ms)
            j = bisect_left(grid, nxt, k)  # the first point at or after nxt (the grid is sorted)
            if j > k:
                if lazy and k == 1 and j == n and out[0] == total:
                    # every point is total + rate * (t - grid[0]) (at grid[0]: total + 0.0 == out[0])
                    return Line(total, rate)
                # total + rate * (grid[i] - prev) for i in k..j-1, in C (map) rather than a Python loop: the
                # projection is the audit's largest per-partition cost after the fact gathering
                out.extend(map(add, repeat(total), map(mul, repeat(rate), map(sub, grid[k:j], repeat(prev)))))
                grown = rate * (grid[j - 1] - prev)
                sizes[a] += grown
                total += grown
                if rate > 0:
                    segs[a].timestamp, segs[a].empty = grid[j - 1], False
                prev = grid[j - 1]
                k = j
                continue
        if k and rate > 0:
            cur = float(prev)
            while True:  # appends over (prev, t], rolling as the broker would
                a = len(segs) - 1
                fill_at = cur + max(0.0, seg_bytes - sizes[a]) / rate
                time_at = float(active_start + seg_ms)  # data arrives at once: the segment is not empty
                roll_at = max(cur, min(fill_at, time_at))
                if roll_at >= t:
                    sizes[a] += rate * (t - cur)
                    total += rate * (t - cur)
                    segs[a].timestamp, segs[a].empty = t, False
                    break
                sizes[a] += rate * (roll_at - cur)
                total += rate * (roll_at - cur)
                segs[a].timestamp, segs[a].empty = int(roll_at), False
                # a new active segment; synthetic offsets: only their order counts
                segs.append(SegView(log_end, 0, None, TS_LOG, True))
                sizes.append(0.0)
                log_end += 1
                active_start = int(roll_at)
                cur = roll_at
        fresh = False  # the pending plan was made at t, after this point's appends
        if k == 0:  # at now: the forecast's own plan (forecast_partition), nothing appended yet
            pending = [
                Deletion(x.base, x.delete_at, x.reason or "", x.size, x.timestamp, x.source)
                for x in fc.segments
                if x.delete_at is not None
            ]
            pending.sort(key=lambda d: d.base)
            planned_active, fresh = segs[-1].base, True
        elif fc.schedule.runs and (by_size or (by_time and rate > 0 and not pending)):
            pending, planned_active, fresh = replan(t), segs[-1].base, True
        while pending and pending[0].at_ms <= t:
            if not fresh and rate > 0 and pending[0].base >= planned_active:
                pending, planned_active, fresh = replan(t), segs[-1].base, True
                continue
            d = pending.pop(0)
            if not segs or segs[0].base != d.base:  # pragma: no cover - plan deletes from the oldest
                break
            segs.pop(0)
            total -= sizes.pop(0)
            if not segs:  # UnifiedLog.deleteOldSegments rolls a new active segment when it deletes them all
                segs.append(SegView(log_end, 0, None, TS_LOG, True))
                sizes.append(0.0)
                log_end += 1
                active_start = t
        out.append(max(0.0, total))
        prev = t
        k += 1
    return out


def _active_start(fc: PartitionForecast, t0: int) -> float:
    """The active segment's roll clock: its first record (the previous segment's last append approximates it),
    never after ``t0``."""
    segs = fc.segments
    last = segs[-1]
    if last.first_timestamp is not None:
        start = last.first_timestamp
    elif len(segs) > 1 and segs[-2].timestamp:
        start = segs[-2].timestamp
    else:
        start = last.timestamp or t0
    return min(start, t0)


def _as_line(fc: PartitionForecast, grid: list[int], rate: float, seg_bytes: int, seg_ms: int) -> Line | None:
    """:func:`_project`'s Line, when its loop would return one, from the same values in the same order without
    the loop's per-segment views: nothing deleted at the first point (its pending plan's oldest deletion comes
    later), the fast path taken at the second point, and no deletion nor roll before the last. None: ask
    the loop."""
    segs = fc.segments
    # the pending plan's head: the oldest segment with a deletion (the plan deletes from the oldest)
    first: int | None = None
    for s in segs:
        if s.delete_at is not None:
            first = s.delete_at
            break
    if first is not None and first <= grid[0]:
        return None
    cfg = fc.config
    by_size = cfg.deletes and cfg.retention_bytes >= 0
    by_time = cfg.deletes and cfg.retention_ms >= 0
    if fc.schedule.runs and (by_size or (first is None and rate != 0 and by_time)):
        return None
    total = sum([float(s.size) for s in segs])
    nxt: float = float("inf") if first is None else first
    if rate > 0:
        active_start = _active_start(fc, grid[0])
        nxt = min(nxt, grid[0] + max(0.0, seg_bytes - float(segs[-1].size)) / rate, active_start + seg_ms)
    if bisect_left(grid, nxt, 1) != len(grid) or max(0.0, total) != total:
        return None
    return Line(total, rate)


# ----------------------------------------------------------------------------------------------- topics


@slotted
class TopicForecast:
    """A topic's deletions over the horizon, summed over its partitions as they stream by."""

    topic: str
    now_ms: int
    horizon_ms: int
    keep_segments: int = 0  # keep up to this many per-segment deletion records (RET002's details)
    partitions: int = 0
    bytes_now: int = 0
    interval_ms: int = CHECK_INTERVAL_MS
    first_delay_ms: int = 0  # the first check after the next start (Schedule.first_delay_ms)
    runs: bool = True
    checks: dict[int, list[int]] = field(default_factory=dict)  # at_ms -> [bytes, segments] (in horizon)
    by_reason: dict[str, list[int]] = field(default_factory=dict)  # reason -> [bytes, segments] (in horizon)
    sources: dict[str, int] = field(default_factory=dict)  # timestamp source -> segments deleted in horizon
    segments: list[dict[str, Any]] = field(default_factory=list)
    segments_omitted: int = 0
    fallback: dict[int, int] = field(default_factory=dict)  # at_ms -> bytes deleted on a fallback timestamp
    grid: list[int] | None = None  # projection points (None: no projection)
    projected: list[float] = field(default_factory=list)  # size at each grid point, summed over partitions
    rate: float = 0.0  # bytes/ms, summed over partitions
    # the partitions whose projection is a Line, summed: [total, rate]; projection() adds their points
    line: list[float] = field(default_factory=lambda: [0.0, 0.0])
    lines: int = 0

    def projection(self) -> list[float]:
        """The projected size at each grid point: the summed point lists plus the summed lines."""
        assert self.grid is not None
        if not self.lines:
            return self.projected
        points = line_values(self.line[0], self.line[1], self.grid)
        return list(map(add, self.projected, points)) if self.projected else points

    @property
    def horizon_end(self) -> int:
        return self.now_ms + self.horizon_ms

    def add(self, fc: PartitionForecast, gone: list[SegmentForecast] | None = None) -> None:
        """``gone``: ``fc.deletions()`` when the caller has it already (asked once per partition)."""
        self.partitions += 1
        self.bytes_now += fc.bytes
        self.interval_ms = fc.schedule.interval_ms or self.interval_ms
        self.first_delay_ms = max(self.first_delay_ms, fc.schedule.first_delay_ms)
        self.runs = self.runs and fc.schedule.runs
        for s in fc.deletions() if gone is None else gone:
            assert s.delete_at is not None and s.reason is not None
            c = self.checks.setdefault(s.delete_at, [0, 0])
            c[0] += s.size
            c[1] += 1
            r = self.by_reason.setdefault(s.reason, [0, 0])
            r[0] += s.size
            r[1] += 1
            self.sources[s.source] = self.sources.get(s.source, 0) + 1
            if s.source in FALLBACK_SOURCES:
                self.fallback[s.delete_at] = self.fallback.get(s.delete_at, 0) + s.size
            if len(self.segments) < self.keep_segments:
                rec = {
                    "partition": fc.partition, "log_dir": fc.log_dir, "base_offset": s.base, "bytes": s.size,
                    "timestamp": s.timestamp, "timestamp_source": s.source, "delete_at": s.delete_at,
                    "reason": s.reason, "held_by": s.held_by,
                }  # fmt: skip
                self.segments.append(rec)
            elif self.keep_segments:
                self.segments_omitted += 1
        if self.grid is not None:
            sizes = fc.projected(self.grid)
            if isinstance(sizes, Line):
                self.line[0] += sizes.total
                self.line[1] += sizes.rate
                self.lines += 1
            else:
                if not self.projected:
                    self.projected = [0.0] * len(self.grid)
                if len(sizes) == len(self.projected):  # always: the same sums as the loop below, in C
                    self.projected = list(map(add, self.projected, sizes))
                else:  # pragma: no cover - project_partition returns one size per grid point
                    for i, b in enumerate(sizes):
                        self.projected[i] += b
            self.rate += fc.rate

    def merge(self, o: TopicForecast, deletions: bool = True) -> None:
        """Add another accumulator of the same topic (another log dir's partitions). ``deletions=False``: its
        log dir goes offline at the next start, so the broker deletes nothing there and nothing arrives."""
        self.partitions += o.partitions
        self.bytes_now += o.bytes_now
        self.interval_ms = o.interval_ms or self.interval_ms
        self.first_delay_ms = max(self.first_delay_ms, o.first_delay_ms)
        self.runs = self.runs and o.runs
        if deletions:
            for src, dst in ((o.checks, self.checks), (o.by_reason, self.by_reason)):
                for k, (b, n) in src.items():
                    acc = dst.setdefault(k, [0, 0])  # type: ignore[arg-type]
                    acc[0] += b
                    acc[1] += n
            for k, v in o.sources.items():
                self.sources[k] = self.sources.get(k, 0) + v
            for k, v in o.fallback.items():
                self.fallback[k] = self.fallback.get(k, 0) + v
            room = max(0, self.keep_segments - len(self.segments))
            self.segments.extend(o.segments[:room])
            self.segments_omitted += o.segments_omitted + max(0, len(o.segments) - room)
        if self.grid is not None:
            more = o.projected if deletions else [float(o.bytes_now)] * len(self.grid)
            if not self.projected:
                self.projected = [0.0] * len(self.grid)
            for i, size in enumerate(more[: len(self.grid)]):
                self.projected[i] += size
            if deletions:
                self.rate += o.rate
                self.line[0] += o.line[0]
                self.line[1] += o.line[1]
                self.lines += o.lines

    @property
    def deleted_bytes(self) -> int:
        return sum(b for b, _ in self.checks.values())

    @property
    def deleted_segments(self) -> int:
        return sum(n for _, n in self.checks.values())

    def series(self, every_check: bool = False) -> list[dict[str, int]]:
        """The topic's size after each retention check that deletes something (a step function: the size
        holds until the next point), or after every check of the horizon with ``every_check``."""
        times = sorted(self.checks)
        if every_check and self.runs:
            step = max(1, self.interval_ms)
            first = self.now_ms + self.first_delay_ms
            times = sorted(set(times) | set(range(first, self.horizon_end + 1, step)))
        size = self.bytes_now
        out = []
        for t in times:
            b, n = self.checks.get(t, (0, 0))
            size -= b
            out.append({"at_ms": t, "deleted_bytes": b, "deleted_segments": n, "bytes": size})
        return out

    def largest_drop(self) -> dict[str, int] | None:
        if not self.checks:
            return None
        t, (b, n) = max(self.checks.items(), key=lambda kv: (kv[1][0], -kv[0]))
        return {"at_ms": t, "bytes": b, "segments": n}

    def to_dict(
        self, every_check: bool = False, *, segments: bool = True, projection: bool = True
    ) -> dict[str, Any]:
        """``segments``: with the per-segment records kept (``keep_segments``, RET002's details); ``projection``:
        with the projected sizes (when there is a grid; the report's forecast section)."""
        times = sorted(self.checks)
        d: dict[str, Any] = {
            "topic": self.topic, "partitions": self.partitions, "bytes_now": self.bytes_now,
            "deleted_bytes": self.deleted_bytes, "deleted_segments": self.deleted_segments,
            "bytes_at_horizon": self.bytes_now - self.deleted_bytes,
            "first_deletion_at": times[0] if times else None, "last_deletion_at": times[-1] if times else None,
            "largest_drop": self.largest_drop(), "check_interval_ms": self.interval_ms,
            "retention_runs": self.runs,
            "by_reason": {r: {"bytes": v[0], "segments": v[1]} for r, v in sorted(self.by_reason.items())},
            "timestamp_sources": dict(sorted(self.sources.items())),
            "fallback_deleted_bytes": sum(self.fallback.values()),
            # the part of the series' deletions whose timestamp is a fallback (RET001's): checks with some only
            "fallback_deletions": [{"at_ms": t, "bytes": b} for t, b in sorted(self.fallback.items())],
            "series": self.series(every_check),
        }  # fmt: skip
        if self.grid is not None and projection:
            d["arrival_bytes_per_s"] = round(self.rate * 1000, 3)
            d["projected_bytes"] = [round(b) for b in self.projection()] or [0] * len(self.grid)
        if self.keep_segments and segments:
            d["segments"] = self.segments
            d["segments_omitted"] = self.segments_omitted
        return d


class HostForecast:
    """Per-topic accumulators for a whole host (what a report's ``forecast`` section would hold)."""

    def __init__(
        self, now_ms: int, horizon_ms: int, keep_segments: int = 0, project_every_ms: int | None = None
    ) -> None:
        """``project_every_ms``: also project sizes with new data (:func:`project_partition`) on a grid of
        retention checks this far apart (the server's ``log.retention.check.interval.ms``)."""
        self.now_ms = now_ms
        self.horizon_ms = horizon_ms
        self.keep_segments = keep_segments
        self.project_every_ms = project_every_ms
        self.topics: dict[str, TopicForecast] = {}
        self.log_dir_deleted: dict[str, int] = {}
        self.grid = (
            None if project_every_ms is None else projection_grid(now_ms, horizon_ms, project_every_ms)
        )
        self.log_dir_projected: dict[str, list[float]] = {}
        self.log_dir_line: dict[str, list[float]] = {}  # log dir -> [total, rate] of its Line projections

    def add(self, fc: PartitionForecast) -> list[SegmentForecast]:
        """Add a partition's forecast; returns its deletions within the horizon (``fc.deletions()``)."""
        gone = fc.deletions()
        t = self.topics.get(fc.topic)
        if t is None:
            t = self.topics[fc.topic] = TopicForecast(
                fc.topic, self.now_ms, self.horizon_ms, self.keep_segments, grid=self.grid
            )
        grid = self.grid
        if grid is None:
            t.add(fc, gone)
        else:
            made = fc.projected(grid)
            acc = self.log_dir_projected.setdefault(fc.log_dir, [0.0] * len(grid))
            if isinstance(made, Line):  # the topic and the log dir sum it as a line
                t.add(fc, gone)
                line = self.log_dir_line.setdefault(fc.log_dir, [0.0, 0.0])
                line[0] += made.total
                line[1] += made.rate
            else:
                before = list(t.projected)
                t.add(fc, gone)
                after = t.projected
                if before and len(acc) == len(after) == len(before):  # the same sums as the loop below, in C
                    acc[:] = map(add, acc, map(sub, after, before))
                else:
                    for i, b in enumerate(after):
                        acc[i] += b - (before[i] if before else 0.0)
        freed = sum(s.size for s in gone) if gone else 0  # most partitions lose nothing: no generator made
        self.log_dir_deleted[fc.log_dir] = self.log_dir_deleted.get(fc.log_dir, 0) + freed
        return gone

    def merge(self, o: HostForecast, deletions: bool = True) -> None:
        """Add a log dir's own accumulator (see TopicForecast.merge for ``deletions``)."""
        for name, t in o.topics.items():
            mine = self.topics.get(name)
            if mine is None:
                mine = self.topics[name] = TopicForecast(
                    name, self.now_ms, self.horizon_ms, self.keep_segments, grid=self.grid
                )
            mine.merge(t, deletions)
        for p, b in o.log_dir_deleted.items():
            self.log_dir_deleted[p] = self.log_dir_deleted.get(p, 0) + (b if deletions else 0)
        if self.grid is not None:
            for p, v in o.log_dir_projected.items():
                acc = self.log_dir_projected.setdefault(p, [0.0] * len(self.grid))
                if deletions:
                    for i, size in enumerate(v):
                        acc[i] += size
                    if p in o.log_dir_line:
                        line = self.log_dir_line.setdefault(p, [0.0, 0.0])
                        line[0] += o.log_dir_line[p][0]
                        line[1] += o.log_dir_line[p][1]
                else:
                    total = float(sum(t.bytes_now for t in o.topics.values()))
                    for i in range(len(acc)):
                        acc[i] += total

    def _log_dir_points(self, path: str, points: list[float]) -> list[float]:
        line = self.log_dir_line.get(path)
        if line is None or self.grid is None:
            return points
        return list(map(add, points, line_values(line[0], line[1], self.grid)))

    def topic_list(self, every_check: bool = False) -> list[dict[str, Any]]:
        """Every topic's totals (without per-segment records: those are RET002's details)."""
        return [self.topics[t].to_dict(every_check, segments=False) for t in sorted(self.topics)]

    def to_dict(self, every_check: bool = False) -> dict[str, Any]:
        d = {
            "forecast_version": FORECAST_VERSION, "now_ms": self.now_ms, "horizon_ms": self.horizon_ms,
            "horizon_end_ms": self.now_ms + self.horizon_ms, "assumptions": ASSUMPTIONS,
            "deleted_bytes": sum(t.deleted_bytes for t in self.topics.values()),
            "log_dirs": [{"path": p, "deleted_bytes": b} for p, b in sorted(self.log_dir_deleted.items())],
            "topics": self.topic_list(every_check),
        }  # fmt: skip
        if self.grid is not None:
            d["projection"] = {
                "at_ms": self.grid, "assumptions": PROJECTION_ASSUMPTIONS,
                "log_dirs": [
                    {"path": p, "bytes": [round(b) for b in self._log_dir_points(p, v)]}
                    for p, v in sorted(self.log_dir_projected.items())
                ],
            }  # fmt: skip
        return d


# ----------------------------------------------------------------------------------------------- streams


def iter_forecasts(
    host: HostFacts,
    progress: Callable[[str, int, int], None] | None = None,
    topics: Collection[str] | None = None,
) -> Iterator[PartitionForecast]:
    """Forecast every partition of every log dir, one at a time (``progress(log_dir, done, total)``); with
    ``topics``, only those topics' partitions (the others are not read). A log dir that the next start takes
    offline (broker.plan) deletes nothing: decided by a stat-only pass first (of the whole dir)."""
    from kafka_ops.broker.plan import dir_offline_prescan

    for ldf in host.log_dirs:
        names = ldf.scan.partition_names
        if topics is not None:
            names = [(path, n) for path, n in names if n.topic in topics]
        total = len(names)
        offline = dir_offline_prescan(host, ldf)
        pfs = (gather_partition(host, ldf, path, n) for path, n in names)
        for i, pf in enumerate(pfs if topics is not None else iter_partitions(host, ldf), start=1):
            fc = forecast_partition(host, pf)
            if offline is not None and fc.schedule.runs:
                fc.block(offline[0])
            yield fc
            if progress is not None:
                progress(ldf.path, i, total)


def host_errors(host: HostFacts) -> list[dict[str, Any]]:
    return [e.to_dict() for e in host.errors] + [e.to_dict() for d in host.log_dirs for e in d.scan.errors]


def header(host: HostFacts) -> dict[str, Any]:
    from kafka_ops import __version__

    return {
        "forecast_version": FORECAST_VERSION, "version": __version__, "host": host.host,
        "broker_state": host.broker_state, "now_ms": host.now_ms, "now": iso(host.now_ms),
        "horizon_ms": host.horizon_ms, "horizon_end_ms": host.now_ms + host.horizon_ms,
        "assumptions": ASSUMPTIONS,
        # why no topic's own config was read (the audit's next_start.config_note): None when they were
        "config_note": host.configs.assumed,
    }  # fmt: skip


def write_json(
    out: TextIO, host: HostFacts, forecasts: Iterable[PartitionForecast], every_check: bool = False
) -> HostForecast:
    """Stream the forecast as one JSON document: the header, each partition as it is computed, then topics."""
    hf = HostForecast(host.now_ms, host.horizon_ms)
    out.write("{\n")
    for k, v in header(host).items():
        out.write(f"  {json.dumps(k)}: {json.dumps(v)},\n")
    out.write('  "partitions": [')
    errors: list[dict[str, Any]] = []
    sep = "\n    "
    for fc in forecasts:
        hf.add(fc)
        errors.extend(fc.errors)
        out.write(sep + json.dumps(fc.to_dict()))
        sep = ",\n    "
    errors = host_errors(host) + errors
    out.write(f'\n  ],\n  "topics": {json.dumps(hf.topic_list(every_check), indent=2)},\n')
    out.write(f'  "errors": {json.dumps(errors)}\n}}\n')
    return hf


CSV_COLUMNS = [
    "kind", "topic", "partition", "log_dir", "base_offset", "bytes", "timestamp_ms", "timestamp_utc",
    "timestamp_source", "delete_at_ms", "delete_at_utc", "delete_reason", "in_horizon", "held_by", "note",
    "at_ms", "at_utc", "topic_bytes", "deleted_bytes", "deleted_segments",
]  # fmt: skip


def write_csv(
    out: TextIO, host: HostFacts, forecasts: Iterable[PartitionForecast], every_check: bool = False
) -> HostForecast:
    """Stream CSV: a ``segment`` row per segment as partitions are computed, then ``topic_size`` rows (the
    topic's size after each check that deletes something, or every check with ``every_check``)."""
    hf = HostForecast(host.now_ms, host.horizon_ms)
    w = _SafeRows(
        csv.DictWriter(out, CSV_COLUMNS, extrasaction="ignore", lineterminator="\n", quoting=csv.QUOTE_ALL)
    )
    w.writeheader()
    for fc in forecasts:
        hf.add(fc)
        end = fc.horizon_end
        for s in fc.segments:
            row = {
                "kind": "segment", "topic": fc.topic, "partition": fc.partition, "log_dir": fc.log_dir,
                "base_offset": s.base, "bytes": s.size, "timestamp_ms": _cell(s.timestamp),
                "timestamp_utc": iso(s.timestamp) if s.timestamp is not None else "",
                "timestamp_source": s.source, "delete_at_ms": _cell(s.delete_at),
                "delete_at_utc": iso(s.delete_at) if s.delete_at is not None else "",
                "delete_reason": s.reason or "", "in_horizon": str(s.in_horizon(end)).lower(),
                "held_by": _cell(s.held_by), "note": s.note or "",
            }  # fmt: skip
            w.writerow(row)
    for name in sorted(hf.topics):
        t = hf.topics[name]
        for p in t.series(every_check):
            row = {
                "kind": "topic_size", "topic": name, "at_ms": p["at_ms"], "at_utc": iso(p["at_ms"]),
                "topic_bytes": p["bytes"], "deleted_bytes": p["deleted_bytes"],
                "deleted_segments": p["deleted_segments"],
            }  # fmt: skip
            w.writerow(row)
    return hf


class _SafeRows:
    """A DictWriter whose cells hold no raw control character: a topic or a log dir's name is the broker user's,
    and a newline in one would start a line of its own in the file (a shell that reads it, ``source``d or pasted,
    runs that line as root). Control characters are written as visible escapes (engine.shell.printable), one
    line per row; every cell is quoted, so no line starts with a name."""

    def __init__(self, w: csv.DictWriter) -> None:  # type: ignore[type-arg]
        self._w = w

    def writeheader(self) -> None:
        self._w.writeheader()

    def writerow(self, row: dict[str, Any]) -> None:
        self._w.writerow({k: printable(v) if isinstance(v, str) else v for k, v in row.items()})


def _cell(v: int | None) -> str:
    return "" if v is None else str(v)


# ----------------------------------------------------------------------------------------------- checks


def for_check(ctx: Context, pf: PartitionFacts) -> PartitionForecast:
    """The forecast of ``pf`` for the checks of one audit, computed once per partition (RET002/3/4 share it;
    only the current partition is kept, so memory stays flat), or by the worker that gathered ``pf``."""
    cached = ctx.cache.get("forecast")
    if cached is not None and cached[0] is pf:
        return cached[1]  # type: ignore[no-any-return]
    fc = pf.forecast if pf.forecast is not None else forecast_partition(ctx.host, pf)
    ctx.cache["forecast"] = (pf, fc)
    return fc


def audit_forecast(ctx: Context) -> HostForecast | None:
    """The audit's per-topic forecast (kafka_ops.audit.run_audit: the report's ``forecast`` section), complete
    once every log dir was audited (for the host-scope checks): each log dir's partitions join it at the dir's
    end, and a dir that the next start takes offline joins it without deletions. None outside an audit."""
    return ctx.cache.get(AUDIT_FORECAST)


def prepare(host: HostFacts, pf: PartitionFacts, grid: list[int] | None) -> None:
    """What :func:`for_check` and the report's projection on ``grid`` will ask of ``pf``, computed in advance
    where ``pf`` was gathered (an audit worker process, facts.pool): the same functions on the same facts."""
    if pf.part.segments:
        fc = pf.forecast = forecast_partition(host, pf)
        if grid is not None:
            fc.projection = (grid, project_lazy(fc, grid))


__all__ = [
    "ASSUMPTIONS", "AUDIT_FORECAST", "CSV_COLUMNS", "KEEP_SEGMENTS", "TS_ACTIVE", "HostForecast", "PartitionForecast", "Schedule",
    "SegmentForecast", "TopicForecast", "audit_forecast", "broker_timestamp", "for_check", "forecast_partition",
    "iter_forecasts", "retention_schedule", "write_csv", "write_json",
]  # fmt: skip
