"""The timestamp the broker compares for time retention (``LogSegment.largestTimestamp``), per segment.

``largestTimestamp`` is ``maxTimestampSoFar`` when >= 0, else the ``.log``'s last-modified time; after a load
``maxTimestampSoFar`` comes from the time index's last slot, after recovery from the batches
(``LogSegment.recover``). Which of these the next start uses is engine.logdir.Segment.retention_timestamp.
"""

from __future__ import annotations

import os

from kafka_ops import units
from kafka_ops.engine.logdir import TS_LOG, TS_ZERO_PADDING, Segment, log_max_timestamp
from kafka_ops.engine.records import BatchScanner, LogBuffer
from kafka_ops.facts.model import PartitionFacts

# The running broker's active segment: its .timeindex is preallocated (zero slots past the real entries) while
# the broker runs, which is normal; after the next start its largest timestamp is its records' own: a clean stop
# appends maxTimestampSoFar and trims the index (LogSegment.close -> timeIndex().maybeAppend, AbstractIndex.close
# -> trimToValidSize), a kill makes recovery rebuild it (LogSegment.recover).
TS_ACTIVE = "active_segment"


def iso(ms: int | None) -> str:
    """A time in the findings' messages (units.iso's utc_s), 'unknown' when not known."""
    return "unknown" if ms is None else units.iso(ms, "utc_s")


def predicted_timestamp(pf: PartitionFacts, seg: Segment, running: bool = False) -> tuple[int | None, str]:
    """The largest timestamp the broker will use for retention after its next start.

    ``running``: the broker is up, so a zero-padded time index on the *active* segment is its preallocation,
    not KAFKA-10207 (see ``TS_ACTIVE``); the records' largest timestamp is returned instead of 0.
    """
    will_recover = seg.base_offset in pf.will_recover
    value, source = seg.retention_timestamp(will_recover)
    if running and seg.active and source == TS_ZERO_PADDING:
        return real_timestamp(seg), TS_ACTIVE
    if source == TS_LOG:
        rec = pf.recovery.get(seg.base_offset)
        if rec is not None:
            value = rec.max_timestamp if rec.max_timestamp >= 0 else (seg.log.mtime_ms if seg.log else None)
        else:
            value = real_timestamp(seg)
    return value, source


def real_timestamp(seg: Segment) -> int | None:
    """The largest record timestamp really in the segment's ``.log`` (what a rebuilt time index would say)."""
    if seg.log is None or not os.access(seg.log.path, os.R_OK):
        return None
    try:
        ts = log_max_timestamp(seg)
    except Exception:  # unreadable or corrupt: unknown
        return None
    return ts if ts >= 0 else None


def segment_path(seg: Segment, suffix: str = ".log") -> str:
    return os.path.join(seg.dir, f"{seg.base_offset:020d}{suffix}")


def future_batches(seg: Segment, limit_ms: int) -> tuple[int, int, int | None, int | None, int | None]:
    """Batches of ``seg`` whose max timestamp is after ``limit_ms``: (batches, bytes, first such offset, largest
    timestamp among the other batches, largest timestamp of all); zeros/None when the log cannot be read."""
    n = nbytes = 0
    first = sane = top = None
    if seg.log is None or not os.access(seg.log.path, os.R_OK):
        return 0, 0, None, None, None
    try:
        with LogBuffer.open(seg.log.path) as buf:
            for b in BatchScanner(buf, verify_crc=False):
                ts = b.max_timestamp
                top = ts if top is None or ts > top else top
                if ts > limit_ms:
                    n += 1
                    nbytes += b.size
                    first = b.base_offset if first is None else first
                elif ts >= 0 and (sane is None or ts > sane):
                    sane = ts
    except Exception:  # unreadable or corrupt: what was read so far
        pass
    return n, nbytes, first, sane, top
