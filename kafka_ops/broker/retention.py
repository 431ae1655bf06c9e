"""When retention deletes each segment: the one model behind RET001, RET002, RET004 and ``kafka-ops forecast``.

From core/src/main/scala/kafka/log/UnifiedLog.scala (snapshot 1eb7644):
* ``deleteOldSegments()``: with ``delete`` in cleanup.policy, three passes in this order: log-start-offset
  breach, ``retention.bytes`` breach, ``retention.ms`` breach; without it only the first.
* ``deletableSegments(predicate)``: walks from the oldest segment and stops at the first one for which the
  predicate is false; a segment is only deletable when the high watermark >= its upper bound (the next
  segment's base offset, or the log end offset for the last); a last segment that is empty is never deleted.
* time: ``startMs - segment.largestTimestamp > retentionMs`` (strictly greater); ``retention.ms < 0`` disables it.
* size: while ``size - retention.bytes`` leaves room, drop segments from the oldest (``diff - segmentSize >= 0``).
* runs every ``log.retention.check.interval.ms`` (300000 by default, LogManager.cleanupLogs) for topics without
  ``compact``; topics with ``compact`` get retention from the cleaner thread (every ``log.cleaner.backoff.ms``):
  callers pass the interval (kafka_ops.broker.forecast.retention_schedule).

The plan assumes no new data arrives (it forecasts what is on disk now) and that the high watermark is the log
end offset (a leader in sync: the case in which deletions happen).
"""

from __future__ import annotations

from operator import attrgetter

from kafka_ops.engine.compat import slotted

CHECK_INTERVAL_MS = 300_000
# plan()'s sort key, a SegView's base offset, read in C: the audit makes a plan per partition at least
_BASE = attrgetter("base")


@slotted
class SegView:
    base: int
    size: int
    timestamp: int | None  # the largest timestamp the broker will use (None: unknown, never time-deletable)
    source: str  # where it comes from (engine.logdir TS_* values)
    empty: bool = False


@slotted
class Deletion:
    base: int
    at_ms: int  # the retention check that deletes it
    reason: str  # log_start | retention_bytes | retention_ms
    size: int
    timestamp: int | None
    source: str

    def to_dict(self) -> dict[str, object]:
        return {
            "base_offset": self.base, "at_ms": self.at_ms, "reason": self.reason, "bytes": self.size,
            "timestamp": self.timestamp, "timestamp_source": self.source,
        }  # fmt: skip


def next_check(t: int, now: int, interval: int) -> int:
    """The first retention check at or after ``t`` (checks run at now, now + interval, ...)."""
    if t <= now:
        return now
    k = -(-(t - now) // interval)
    return now + k * interval


def plan(
    segments: list[SegView],
    *,
    now_ms: int,
    retention_ms: int,
    retention_bytes: int,
    deletes: bool,
    log_start: int | None = None,
    high_watermark: int | None = None,
    log_end: int | None = None,
    check_interval_ms: int = CHECK_INTERVAL_MS,
) -> list[Deletion]:
    """Every segment that retention deletes, in order, with the check that deletes it."""
    # the audit asks this several times per partition (forecast, projection, DIR004): the walk below is
    # deletableSegments' with its bound (the next segment's base, or the log end) and the empty-last rule inline
    segs = sorted(segments, key=_BASE)
    out: list[Deletion] = []
    n = len(segs)
    if not n:
        return out
    last = n - 1
    end = log_end if log_end is not None else segs[last].base + 1
    hw = end if high_watermark is None else high_watermark
    # the walk stops at the first segment not allowed: the first whose upper bound is above the high watermark,
    # or the last when it is empty (UnifiedLog.deletableSegments); every one before it is allowed
    stop = 0
    while stop < last and hw >= segs[stop + 1].base:
        stop += 1
    if stop == last and (hw < end or segs[last].empty or segs[last].size == 0):
        pass  # the last is not allowed either
    elif stop == last:
        stop = n
    i = 0
    # pass 1: log start offset breach (always, whatever the cleanup policy)
    if log_start is not None:
        while i < last and i < stop and segs[i + 1].base <= log_start:
            s = segs[i]
            out.append(Deletion(s.base, now_ms, "log_start", s.size, s.timestamp, s.source))
            i += 1
    if not deletes:
        return out
    # pass 2: retention.bytes, at the first check
    if retention_bytes >= 0:
        diff = sum(s.size for s in segs[i:]) - retention_bytes
        while i < stop and diff >= 0 and diff - segs[i].size >= 0:
            s = segs[i]
            diff -= s.size
            out.append(Deletion(s.base, now_ms, "retention_bytes", s.size, s.timestamp, s.source))
            i += 1
    # pass 3: retention.ms; a segment goes at the first check after it and every older one expired
    if retention_ms >= 0:
        horizon_t = now_ms
        while i < stop:
            s = segs[i]
            ts = s.timestamp
            if ts is None:
                break
            expires = ts + retention_ms + 1  # strictly greater than retention.ms
            if expires > now_ms:  # next_check(expires, now_ms, check_interval_ms), inline
                at = now_ms + -(-(expires - now_ms) // check_interval_ms) * check_interval_ms
                if at > horizon_t:
                    horizon_t = at
            out.append(Deletion(s.base, horizon_t, "retention_ms", s.size, ts, s.source))
            i += 1
    return out
