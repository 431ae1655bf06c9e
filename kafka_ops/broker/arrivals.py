"""How fast data arrives in a partition, from its segments' mtimes: DIR004's disk-full horizon and the
report's size projection share this one model."""

from __future__ import annotations

from kafka_ops.facts.model import PartitionFacts

HOUR_MS = 3_600_000


def arrival_rate(pf: PartitionFacts, now: int, horizon: int) -> tuple[float, int]:
    """A partition's arrival rate in bytes/ms over the last W = min(horizon, max(1 h, age of its oldest data)),
    and W: from the ``.log`` mtimes (time of each segment's last append). Also the report's size projection
    (``kafka_ops.broker.forecast.project_partition``) and DIR004, so it is made once per partition."""
    made = pf.arrival
    if made is not None and made[0] == now and made[1] == horizon:
        return made[2], made[3]
    rate, window = _arrival_rate(pf, now, horizon)
    pf.arrival = (now, horizon, rate, window)
    return rate, window


def _arrival_rate(pf: PartitionFacts, now: int, horizon: int) -> tuple[float, int]:
    segs = [s for s in pf.part.segments if s.log is not None]
    if not segs:
        return 0.0, HOUR_MS
    first_ts = pf.first_timestamps.get(segs[0].base_offset)
    # each segment's span (start, end]: from the previous segment's end (the oldest: from its first batch's
    # timestamp) to its own mtime, never before the previous end; one pass once the window is known (the
    # oldest span's start sets it), the same sums in the same order as two
    end = min(now, segs[0].log.mtime_ms)  # type: ignore[union-attr]
    start = first_ts if first_ts is not None and 0 <= first_ts <= end else end
    window = min(horizon, max(HOUR_MS, now - start))
    lo = now - window
    arrived = 0.0
    prev_end: int | None = None
    for s in segs:
        if prev_end is not None:
            end = max(min(now, s.log.mtime_ms), prev_end)  # type: ignore[union-attr]
            start = prev_end
        prev_end = end
        if end < lo:
            continue
        size = s.log.size  # type: ignore[union-attr]
        if end == start:
            arrived += size
        else:
            arrived += size * (end - max(start, lo)) / (end - start)
    rate = arrived / window
    return rate, window
