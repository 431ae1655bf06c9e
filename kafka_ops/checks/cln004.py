"""CLN004: a compacted partition the cleaner should have cleaned long ago: its checkpoint lags far behind.

"Far" is decided the way the cleaner picks logs (LogCleanerManager.grabFilthiestCompactedLog / cleanableOffsets,
LogCleaner.scala): the dirty part starts at the partition's entry in cleaner-offset-checkpoint (the log start
offset when there is none or it is out of range) and ends at the active segment, which is never cleaned;
segments newer than min.compaction.lag.ms are not cleanable yet; a log is cleaned once its dirty ratio
(dirty bytes / non-active bytes) reaches min.cleanable.dirty.ratio (0.5), or once a dirty segment is older than
max.compaction.lag.ms (KIP-354). The finding says since when the partition has been eligible; it is "far"
when that is more than LAG_GRACE_MS ago: a live cleaner backs off 15 s between logs (log.cleaner.backoff.ms),
so a day without cleaning an eligible log is a cleaner that does not reach it, not a busy one.
"""

from __future__ import annotations

from collections.abc import Iterator

from kafka_ops.broker.cleaner import MIN_CLEANABLE_RATIO_DEFAULT
from kafka_ops.broker.timestamps import iso
from kafka_ops.checks.base import Finding, check
from kafka_ops.facts.context import Context
from kafka_ops.facts.model import PartitionFacts
from kafka_ops.units import human_bytes, human_ms

LAG_GRACE_MS = 24 * 3600 * 1000
LONG_MAX = 2**63 - 1


def _num(
    pf: PartitionFacts, server: dict[str, str], topic_key: str, broker_key: str, default: float
) -> float:
    raw = pf.config.values.get(topic_key) or server.get(broker_key)
    try:
        return float(raw) if raw not in (None, "") else default
    except ValueError:
        return default


@check(
    "CLN004",
    severity="warning",
    scope="partition",
    title="Compacted partition not cleaned for a long time: the cleaner checkpoint lags far behind the log end",
    incident="__consumer_offsets-20 stopped being compacted when the cleaner died and grew until the "
    "disks filled",
)
def run(ctx: Context, pf: PartitionFacts) -> Iterator[Finding]:
    if not pf.config.compacted:
        return
    segs = [s for s in pf.part.segments if s.log is not None]
    if len(segs) < 2:
        return
    h = ctx.host
    server = h.configs.server
    active = segs[-1]
    first = segs[0].base_offset
    log_start = pf.log_start if pf.log_start is not None else first
    checkpoint, source = pf.cleaner_offset, "cleaner-offset-checkpoint"
    if checkpoint is None:
        checkpoint, source = log_start, "no entry in cleaner-offset-checkpoint: the log start offset"
    elif checkpoint < log_start or (pf.log_end_offset is not None and checkpoint > pf.log_end_offset):
        # LogCleanerManager.cleanableOffsets resets an invalid checkpoint to the log start offset
        checkpoint, source = (
            log_start,
            f"checkpoint {pf.cleaner_offset} out of range: reset to the log start offset",
        )
    ratio_min = _num(
        pf,
        server,
        "min.cleanable.dirty.ratio",
        "log.cleaner.min.cleanable.ratio",
        MIN_CLEANABLE_RATIO_DEFAULT,
    )
    min_lag = int(_num(pf, server, "min.compaction.lag.ms", "log.cleaner.min.compaction.lag.ms", 0))
    max_lag = int(_num(pf, server, "max.compaction.lag.ms", "log.cleaner.max.compaction.lag.ms", LONG_MAX))
    bounds = [s.base_offset for s in segs[1:]]
    clean = [s for s, nxt in zip(segs[:-1], bounds) if nxt <= checkpoint]
    dirty = [s for s, nxt in zip(segs[:-1], bounds) if nxt > checkpoint]
    if not dirty:
        return
    clean_bytes = sum(s.log.size for s in clean)  # type: ignore[union-attr,misc]
    dirty_bytes = sum(s.log.size for s in dirty)  # type: ignore[union-attr,misc]
    eligible_since = None
    why = ""
    cum = 0
    for s in dirty:
        cum += s.log.size  # type: ignore[union-attr]
        ratio = cum / max(1, clean_bytes + cum)
        if ratio >= ratio_min:
            eligible_since = s.log.mtime_ms + min_lag  # type: ignore[union-attr]
            why = (
                f"its dirty ratio reached {ratio:.2f} >= min.cleanable.dirty.ratio {ratio_min:g} when segment "
                f"{s.base_offset} rolled ({iso(s.log.mtime_ms)})"  # type: ignore[union-attr]
                + (f" plus min.compaction.lag.ms {min_lag}" if min_lag else "")
            )
            break
    if max_lag < LONG_MAX:
        forced = dirty[0].log.mtime_ms + max(max_lag, min_lag)  # type: ignore[union-attr]
        if eligible_since is None or forced < eligible_since:
            eligible_since = forced
            why = f"segment {dirty[0].base_offset} became older than max.compaction.lag.ms {max_lag}"
    if eligible_since is None:
        return
    # a stopped broker cannot clean: measure up to its last write
    ref = ctx.now_ms
    if h.broker_state == "stopped":
        ref = min(ref, max(s.log.mtime_ms for s in segs))  # type: ignore[union-attr]
    lag_ms = ref - eligible_since
    if lag_ms <= LAG_GRACE_MS:
        return
    name = f"{pf.part.topic}-{pf.part.partition}"
    lag_offsets = active.base_offset - checkpoint
    causes = []
    if server.get("log.cleaner.enable", "true").strip().lower() == "false":
        causes.append("log.cleaner.enable=false in server.properties: there is no cleaner at all")
    uncleanable = h.log_digest.uncleanable_last.get(name) if h.log_digest is not None else None
    if uncleanable is not None:
        e = uncleanable
        causes.append(
            f"the broker marked it uncleanable at {e.get('time')} ({e.get('file')}:{e.get('line')})"
        )
    causes += [
        "the cleaner thread died (CLN001: 'Error due to' then 'Stopped' in log-cleaner.log; JMX "
        "kafka.log:type=LogCleaner,name=DeadThreadCount > 0 on 2.5+)",
        "the partition is marked uncleanable after an error while cleaning it (KIP-346, 2.1+: 'Unexpected exception "
        "thrown when cleaning log' in log-cleaner.log, gauge uncleanable-partitions-count; it stays so until the "
        "broker restarts)",
        "the cleaner cannot keep up (log.cleaner.threads, log.cleaner.io.max.bytes.per.second, "
        "log.cleaner.dedupe.buffer.size)",
    ]
    message = (
        f"{name}: the cleaner has not cleaned past offset {checkpoint} ({source}): {len(dirty)} segment(s), "
        f"{human_bytes(dirty_bytes)} and {lag_offsets} offsets below the active segment {active.base_offset} "
        f"(log end {pf.log_end_offset}) are dirty, against {human_bytes(clean_bytes)} clean. The partition has been "
        f"eligible for cleaning since {iso(eligible_since)}, {human_ms(lag_ms)} ago ({why}); a live cleaner takes "
        "minutes. Likely causes: " + "; ".join(causes) + ". min.compaction.lag.ms is already accounted for. "
        "Until it is cleaned, every record version and tombstone stays and the partition only grows."
    )
    remediation = (
        "Look at log-cleaner.log (kafka-ops logs <log-cleaner.log>): a dead thread is restarted by a broker restart "
        "once its cause is fixed (CLN001, CLN003); an uncleanable partition by a restart after fixing what it "
        "failed on. If log.cleaner.enable=false, set it to true (restart). A cleaner that is merely slow needs "
        "more log.cleaner.threads or a higher log.cleaner.io.max.bytes.per.second (both dynamic: kafka-configs "
        "--entity-type brokers --entity-default --alter --add-config log.cleaner.threads=2)."
    )
    details = {
        "cleaner_checkpoint": pf.cleaner_offset, "first_dirty_offset": checkpoint, "checkpoint_source": source,
        "active_segment": active.base_offset, "log_end_offset": pf.log_end_offset, "lag_offsets": lag_offsets,
        "dirty_segments": len(dirty), "dirty_bytes": dirty_bytes, "clean_bytes": clean_bytes,
        "dirty_ratio": round(dirty_bytes / max(1, clean_bytes + dirty_bytes), 3),
        "min_cleanable_dirty_ratio": ratio_min, "min_compaction_lag_ms": min_lag,
        "max_compaction_lag_ms": max_lag if max_lag < LONG_MAX else None, "eligible_since_ms": eligible_since,
        "lag_ms": lag_ms, "grace_ms": LAG_GRACE_MS, "marked_uncleanable": uncleanable is not None,
    }  # fmt: skip
    yield run.finding(message, remediation, path=pf.part.path, topic=pf.part.topic, partition=pf.part.partition,
                      details=details)  # fmt: skip
