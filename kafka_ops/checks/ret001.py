"""RET001: time retention will delete a segment early because its timestamp is 0 or a fallback (the remount incident)."""

from __future__ import annotations

from collections.abc import Iterator

from kafka_ops.broker.forecast import first_check_delay, for_check
from kafka_ops.broker.timestamps import iso, real_timestamp
from kafka_ops.checks.base import Finding, check
from kafka_ops.engine.logdir import TS_MTIME, TS_MTIME_NO_TIMEINDEX, TS_UNREADABLE, TS_ZERO_PADDING
from kafka_ops.facts.context import Context
from kafka_ops.facts.identity import Identity
from kafka_ops.facts.model import PartitionFacts
from kafka_ops.units import human_ms

SUSPECT = (TS_ZERO_PADDING, TS_UNREADABLE, TS_MTIME, TS_MTIME_NO_TIMEINDEX)


@check(
    "RET001",
    severity="critical",
    scope="partition",
    title="Time retention will delete recent data: segment timestamp is 0 or a fallback",
    incident="'Scheduling segments for deletion ... largestTime=0' minutes after the records were written",
)
def run(ctx: Context, pf: PartitionFacts) -> Iterator[Finding]:
    cfg = pf.config
    if not cfg.deletes or cfg.retention_ms < 0 or not pf.part.segments:
        return
    # the one model of what the broker compares and when it deletes (kafka_ops.broker.forecast / retention.plan)
    fc = for_check(ctx, pf)
    suspects = {s.base: s for s in fc.segments if s.source in SUSPECT and s.delete_at is not None}
    if not suspects:
        return
    by_base = {s.base_offset: s for s in pf.part.segments}
    real = {base: real_timestamp(by_base[base]) for base in suspects}
    expected = fc.replan(real)  # the same plan had the broker used the records' own timestamps
    for base, sf in suspects.items():
        at = sf.delete_at
        assert at is not None  # suspects are deleted in the forecast
        e = expected.get(base)
        if e is not None and e.at_ms <= at:
            continue  # deleted no earlier than its records warrant: not a loss
        seg = by_base[base]
        source = sf.source
        size = sf.size
        rec = real[base]
        when = (
            "at the first retention check after the next start"
            if at <= ctx.now_ms + first_check_delay(ctx.host)
            else f"at {iso(at)} (in {human_ms(at - ctx.now_ms)})"
        )
        if sf.held_by is not None:
            when += f", together with the older segments before it (the first to expire is {sf.held_by})"
        should = (
            f"its newest record is from {iso(rec)}"
            if rec is not None
            else "its records could not be read to compare"
        )
        if e is not None:
            should += f" and it should be deleted at {iso(e.at_ms)}"
        elif rec is not None:
            should += " and it should not be deleted yet"
        cause = {
            TS_ZERO_PADDING: "its .timeindex is zero-padded (an untrimmed, preallocated index: the trim on roll failed "
            "or the broker was killed), so the broker reads the last slot, timestamp 0, as the segment's largest "
            "timestamp (TimeIndex.lastEntry -> LogSegment.largestTimestamp; KAFKA-10207, not fixed)",
            TS_UNREADABLE: "the broker user cannot read its .timeindex, so the broker cannot learn the segment's largest "
            "timestamp: the remount incident's broker took it as 0 and deleted the segment; a current broker fails the first read "
            "with an IOException and takes the log dir offline",
            TS_MTIME: "its time index is empty, so the broker falls back to the .log file's mtime "
            f"({iso(seg.log.mtime_ms if seg.log else None)}) (LogSegment.largestTimestamp)",
            TS_MTIME_NO_TIMEINDEX: "its .timeindex is missing; the broker creates it empty and falls back to the .log "
            f"file's mtime ({iso(seg.log.mtime_ms if seg.log else None)})",
        }[source]
        yield run.finding(
            f"segment {base} of {pf.part.topic}-{pf.part.partition} ({size} bytes) will be deleted by time retention "
            f"{when}: {cause}; {should} (retention.ms={cfg.retention_ms}).",
            _fix(source, seg.dir, base, ctx.host.identity),
            path=(seg.timeindex.path if seg.timeindex else f"{seg.dir}/{base:020d}.timeindex"),
            topic=pf.part.topic,
            partition=pf.part.partition,
            segment=base,
            details={
                "timestamp_source": source, "broker_timestamp": sf.timestamp if source != TS_UNREADABLE else None,
                "records_max_timestamp": rec, "deleted_at_ms": at,
                "expected_deletion_ms": e.at_ms if e else None, "bytes": size,
            },
        )  # fmt: skip


def _fix(source: str, part_dir: str, base: int, who: Identity | None) -> str:
    user = who.user if who else "<broker user>"
    if source == TS_UNREADABLE:
        return (
            f"Before starting the broker: make {user} the owner of the files of {part_dir}, readable and writable "
            f"(kafka-ops fix ownership --apply); if the broker already runs, stop it first. Until then raise "
            f"retention.ms on the topic to protect the data (kafka-configs --alter --add-config retention.ms=...)."
        )
    if source in (TS_MTIME, TS_MTIME_NO_TIMEINDEX):
        return (
            f"With the broker stopped, move {base:020d}.index and .timeindex of {part_dir} aside "
            f"(kafka-ops fix indexes --apply) so that the broker rebuilds them from the records at start; "
            f"never restore data files without their mtimes."
        )
    return (
        f"With the broker stopped, quarantine the zero-padded index files of segment {base} in {part_dir} "
        f"(kafka-ops fix indexes --apply): the broker rebuilds them from the records at start and reads the real "
        f"timestamp. Then find why the trim failed (ownership after a remount: PERM001; an unclean stop: SHUT001)."
    )
