"""CLN003: a run of consecutive transaction markers longer than the cleaner's largest buffer (KAFKA-6854's crash)."""

from __future__ import annotations

from collections.abc import Iterator

from kafka_ops.broker.cleaner import (
    DELETE_RETENTION_MS_DEFAULT,
    CleanerBuffers,
    affected_by_6854,
    affected_by_8335,
    cleaner_buffers,
    safe_replay,
)
from kafka_ops.broker.timestamps import iso
from kafka_ops.checks.base import Finding, check
from kafka_ops.engine import versions
from kafka_ops.engine.logdir import Segment
from kafka_ops.engine.shell import q
from kafka_ops.facts.context import Context
from kafka_ops.facts.model import PartitionFacts
from kafka_ops.units import human_bytes


@check(
    "CLN003",
    severity="error",
    scope="partition",
    title="Run of transaction markers longer than the cleaner's largest buffer: fatal to the cleaner on versions "
    "with KAFKA-6854 (before 1.0.2/1.1.1/2.0.0), a build-up on versions with KAFKA-8335",
    incident="__consumer_offsets-20 held little but consecutive COMMIT markers; Kafka 1.1.0's cleaner "
    "grew its buffers 262144 -> 524288 -> 1000012 bytes and died",
    needs=("kafka_version",),
)
def run(ctx: Context, pf: PartitionFacts) -> Iterator[Finding]:
    if not pf.config.compacted or pf.control_run is None or not pf.part.segments:
        return
    run_bytes, batches, start, seg_base = pf.control_run
    h = ctx.host
    bufs = cleaner_buffers(h, pf.config)
    if run_bytes <= bufs.maximum:
        return
    version = h.kafka_version
    v = versions.text(version)
    name = f"{pf.part.topic}-{pf.part.partition}"
    seg = next((s for s in pf.part.segments if s.base_offset == seg_base), None)
    active = seg is pf.part.segments[-1]
    seg_path = seg.log.path if seg is not None and seg.log is not None else None
    growth = " -> ".join(str(c) for c in bufs.growth())
    what = (
        f"{name}: a run of {batches} consecutive control batches (transaction markers), {run_bytes} bytes "
        f"({human_bytes(run_bytes)}) from offset {start} in segment {seg_base}"
        + (" (the active segment)" if active else "")
        + f", is longer than the cleaner's largest I/O buffer, {bufs.maximum} bytes = max(topic max.message.bytes "
        f"{bufs.topic_max}, broker message.max.bytes {bufs.broker_max})"
    )
    horizon = _delete_horizon(pf, seg)
    details: dict[str, object] = {
        "run_bytes": run_bytes, "run_batches": batches, "run_start_offset": start, "segment": seg_base,
        "segment_path": seg_path, "active_segment": active, "kafka_version": v, **bufs.to_dict(),
        "buffer_growth": bufs.growth(), **horizon,
    }  # fmt: skip
    if affected_by_6854(version):
        yield from _affected(pf, what, bufs, growth, seg_path, active, horizon, details, name)
        return
    if affected_by_8335(version):
        severity = "warning"
        message = (
            f"{what}. Not a crash on Kafka {v}: since KAFKA-6854's fix (1.0.2, 1.1.1, 2.0.0) Cleaner.cleanInto "
            "grows its buffers only when a read holds no complete batch (result.bytesRead == 0). But Kafka "
            f"{v} has KAFKA-8335 (fixed in 2.2.1, 2.3.0): the cleaner keeps transactional offset commits as empty "
            "batches and never discards their markers, so runs like this one only grow, and the partition with them."
        )
        remediation = (
            "Upgrade to 2.2.1 / 2.3.0 or later: the cleaner then discards the markers and empty batches (after "
            f"delete.retention.ms) and {name} shrinks back. Until then watch its size (kafka-log-dirs --describe)."
        )
    else:
        severity = "info"
        message = (
            f"{what}. Not a crash on Kafka {v} (KAFKA-6854 fixed in 1.0.2/1.1.1/2.0.0) and not KAFKA-8335's "
            "build-up (fixed in 2.2.1/2.3.0): the cleaner discards markers once their transaction's data is gone and "
            "they are older than delete.retention.ms (since 3.1, KAFKA-8522, in a later pass after a delete horizon "
            "is stamped on the batch). A run this long is markers not removed yet: recent ones, or a cleaner that "
            "does not reach this partition (CLN004, CLN001)."
        )
        remediation = "Nothing to do if CLN004 and CLN001 report nothing for this partition: the cleaner will remove them."
    yield run.finding(message, remediation, severity=severity, path=seg_path or pf.part.path, topic=pf.part.topic,
                      partition=pf.part.partition, segment=seg_base, details=details)  # fmt: skip


def _affected(
    pf: PartitionFacts,
    what: str,
    bufs: CleanerBuffers,
    growth: str,
    seg_path: str | None,
    active: bool,
    horizon: dict[str, object],
    details: dict[str, object],
    name: str,
) -> Iterator[Finding]:
    run_bytes = int(details["run_bytes"])  # type: ignore[call-overload]  # an int, set by run
    certain = bufs.certain_fatal_run
    replay = None
    if run_bytes >= certain:
        verdict = (
            f"The run is at least {certain} bytes (one buffer of alignment plus a read at every size of the growth "
            f"{growth}): the cleaner dies in it wherever it starts relative to the cleaner's reads"
        )
        fatal = True
    else:
        replay = safe_replay(seg_path, bufs.initial, bufs.maximum) if seg_path else None
        if replay is not None and replay.fatal:
            verdict = (
                "Replaying Cleaner.cleanInto over the segment (reads of the buffer's size, growth "
                f"{' -> '.join(str(c) for c in [bufs.initial, *replay.growths])}), the read at byte {replay.fatal_position} "
                f"(offset {replay.fatal_offset}) holds only markers with the buffer already at {bufs.maximum}: it throws"
            )
            fatal = True
        elif replay is not None:
            verdict = (
                f"Replaying Cleaner.cleanInto over the segment as it is now, the buffers grow to "
                f"{replay.growths[-1] if replay.growths else bufs.initial} and the segment ends before a read at "
                f"{bufs.maximum} holds only markers: it survives this content, but a run of {certain} bytes "
                "always kills it"
            )
            fatal = False
        else:
            verdict = f"The segment could not be read to replay the cleaner; a run of {certain} bytes always kills it"
            fatal = False
    if replay is not None:
        details["replay"] = replay.to_dict()
    details["fatal"] = fatal
    severity = "error" if fatal or active else "warning"
    when = (
        "The active segment is never cleaned: the cleaner reaches the run once the segment rolls, with more "
        "markers in it by then. "
        if active
        else ""
    )
    when += (
        "It dies when it cleans the segment with 'discarding deletes' (markers are discarded only past the delete "
        f"horizon: {horizon['delete_horizon_text']}). "
    )
    message = (
        f"{what}. On Kafka {details['kafka_version']} (KAFKA-6854, fixed in 1.0.2, 1.1.1, 2.0.0) Cleaner.cleanInto "
        "grows its I/O buffers from log.cleaner.io.buffer.size / log.cleaner.threads / 2 whenever a read holds no "
        "retained message, which a read of discarded markers does, and throws IllegalStateException 'This log "
        f"contains a message larger than maximum allowable size of {bufs.maximum}' once they are at the maximum "
        f"(LogCleaner.scala @1.1.0: cleanInto, growBuffers). {verdict}. {when}The thread does not "
        "come back until the broker restarts, and every compacted partition stops being cleaned (the dead-cleaner incident)."
    )
    remediation = (
        "Upgrade to 1.1.1 / 2.0.0 or later (2.2.1 / 2.3.0 also stop KAFKA-8335's marker build-up that makes these "
        "runs). Until then, the dead-cleaner incident's stopgap: raise the topic's max.message.bytes above the run so that no read "
        f"at the maximum is all markers: kafka-configs --bootstrap-server <broker:9092> --alter --entity-type topics "
        f"--entity-name {q(pf.part.topic)} --add-config max.message.bytes={_above(run_bytes)} (it only buys time: "
        "the run keeps growing on versions with KAFKA-8335); raising log.cleaner.io.buffer.size does not help. "
        "If the thread already died, restart it after the change (CLN001)."
    )
    yield run.finding(message, remediation, severity=severity, path=seg_path or pf.part.path, topic=pf.part.topic,
                      partition=pf.part.partition, segment=int(details["segment"]), details=details)  # type: ignore[call-overload]  # fmt: skip


def _above(n: int) -> int:
    """A max.message.bytes comfortably above ``n``: twice the run, rounded up to a MiB."""
    mib = 1024 * 1024
    return -(-2 * n // mib) * mib


def _delete_horizon(pf: PartitionFacts, seg: Segment | None) -> dict[str, object]:
    """Whether the cleaner would clean the run's segment 'discarding deletes' now (LogCleaner.scala @1.1.0:
    deleteHorizonMs = lastModified of the last segment below firstDirtyOffset - delete.retention.ms;
    retainDeletes = segment.lastModified > deleteHorizonMs)."""
    try:
        retention = int(pf.config.values.get("delete.retention.ms", DELETE_RETENTION_MS_DEFAULT))
    except ValueError:
        retention = DELETE_RETENTION_MS_DEFAULT
    dirty = pf.cleaner_offset if pf.cleaner_offset is not None else pf.log_start
    below = [s for s in pf.part.segments if dirty is not None and s.base_offset < dirty and s.log is not None]
    if seg is None or seg.log is None:
        return {"delete_retention_ms": retention, "discarding_now": None, "delete_horizon_text": "unknown"}
    if not below:
        text = (
            "nothing below the cleaner checkpoint is clean yet, so the horizon is 0 and it retains markers now; it "
            f"discards them once a segment at least delete.retention.ms ({retention} ms) newer than this one has "
            "been cleaned"
        )
        return {"delete_retention_ms": retention, "discarding_now": False, "delete_horizon_text": text}
    horizon = below[-1].log.mtime_ms - retention  # type: ignore[union-attr]  # below: segments with a .log
    discarding = seg.log.mtime_ms <= horizon
    text = (
        f"segment last modified {iso(seg.log.mtime_ms)}, horizon {iso(horizon)} = last clean segment's "
        f"modification time - delete.retention.ms ({retention} ms): "
        + (
            "it discards them now"
            if discarding
            else "it still retains them; it discards them once the horizon passes"
        )
    )
    return {
        "delete_retention_ms": retention, "delete_horizon_ms": horizon, "discarding_now": discarding,
        "delete_horizon_text": text,
    }  # fmt: skip
