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
    spans: list[tuple[int, int, int]] = []  # (start, end, bytes)
    prev_end: int | None = None
    for s in segs:
        end = min(now, s.log.mtime_ms)  # type: ignore[union-attr]
        if prev_end is not None:
            end = max(end, prev_end)
            start = prev_end
        else:
            start = first_ts if first_ts is not None and 0 <= first_ts <= end else end
        spans.append((start, end, s.log.size))  # type: ignore[union-attr]
        prev_end = end
    window = min(horizon, max(HOUR_MS, now - spans[0][0]))
    lo = now - window
    arrived = 0.0
    for start, end, size in spans:
        if end < lo:
            continue
        if end == start:
            arrived += size
        else:
            arrived += size * (end - max(start, lo)) / (end - start)
    rate = arrived / window
    return rate, window
