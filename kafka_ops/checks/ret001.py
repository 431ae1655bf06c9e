"""RET001: time retention will delete a segment early because its timestamp is 0 or a fallback (seed 000)."""

from __future__ import annotations

from collections.abc import Iterator

from kafka_ops.checks.base import Finding, check, human_ms
from kafka_ops.checks.common import access_for, iso, predicted_timestamp, real_timestamp
from kafka_ops.engine.logdir import TS_MTIME, TS_MTIME_NO_TIMEINDEX, TS_UNREADABLE, TS_ZERO_PADDING
from kafka_ops.facts.collect import PartitionFacts
from kafka_ops.retention import SegView, plan

SUSPECT = (TS_ZERO_PADDING, TS_UNREADABLE, TS_MTIME, TS_MTIME_NO_TIMEINDEX)


@check(
    "RET001",
    severity="critical",
    scope="partition",
    title="Time retention will delete recent data: segment timestamp is 0 or a fallback",
    incident="seed 000: 'Scheduling segments for deletion ... largestTime=0' minutes after the records were written",
)
def run(ctx, pf: PartitionFacts) -> Iterator[Finding]:  # type: ignore[no-untyped-def]
    cfg = pf.config
    if not cfg.deletes or cfg.retention_ms < 0 or not pf.part.segments:
        return
    who = ctx.host.identity
    views: list[SegView] = []
    real_views: list[SegView] = []
    suspects = {}
    for seg in pf.part.segments:
        ts, source = predicted_timestamp(pf, seg)
        if who is not None and seg.timeindex is not None and source not in ("log",):
            # what the broker user can do with the file decides what the broker reads (seed 000)
            a = access_for(who, seg.timeindex, pf.acls.get(seg.timeindex.path), pf.probe)
            if not a.read:
                ts, source = None, TS_UNREADABLE
        real = ts
        if source in SUSPECT:
            real = real_timestamp(seg)
            suspects[seg.base_offset] = (ts, source, real)
        size = seg.log.size if seg.log else 0
        views.append(SegView(seg.base_offset, size, 0 if source == TS_UNREADABLE else ts, source))
        real_views.append(SegView(seg.base_offset, size, real, source))
    if not suspects:
        return
    common = dict(
        now_ms=ctx.now_ms, retention_ms=cfg.retention_ms, retention_bytes=-1, deletes=True,
        log_end=pf.log_end_offset,
    )  # fmt: skip
    predicted = {d.base: d for d in plan(views, **common)}
    expected = {d.base: d for d in plan(real_views, **common)}
    for base, (ts, source, real) in suspects.items():
        d = predicted.get(base)
        if d is None:
            continue
        e = expected.get(base)
        if e is not None and e.at_ms <= d.at_ms:
            continue  # deleted no earlier than its records warrant: not a loss
        seg = next(s for s in pf.part.segments if s.base_offset == base)
        size = seg.log.size if seg.log else 0
        when = (
            "at the next retention check"
            if d.at_ms <= ctx.now_ms
            else f"at {iso(d.at_ms)} (in {human_ms(d.at_ms - ctx.now_ms)})"
        )
        should = (
            f"its newest record is from {iso(real)}"
            if real is not None
            else "its records could not be read to compare"
        )
        if e is not None:
            should += f" and it should be deleted at {iso(e.at_ms)}"
        elif real is not None:
            should += " and it should not be deleted yet"
        cause = {
            TS_ZERO_PADDING: "its .timeindex is zero-padded (an untrimmed, preallocated index: the trim on roll failed "
            "or the broker was killed), so the broker reads the last slot, timestamp 0, as the segment's largest "
            "timestamp (TimeIndex.lastEntry -> LogSegment.largestTimestamp; KAFKA-10207, not fixed)",
            TS_UNREADABLE: "the broker user cannot read its .timeindex, so the broker cannot learn the segment's largest "
            "timestamp: seed 000's broker took it as 0 and deleted the segment; a current broker fails the first read "
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
                "timestamp_source": source, "broker_timestamp": ts if source != TS_UNREADABLE else None,
                "records_max_timestamp": real, "deleted_at_ms": d.at_ms,
                "expected_deletion_ms": e.at_ms if e else None, "bytes": size,
            },
        )  # fmt: skip


def _fix(source: str, part_dir: str, base: int, who) -> str:  # type: ignore[no-untyped-def]
    user = who.user if who else "<broker user>"
    if source == TS_UNREADABLE:
        return (
            f"Before starting the broker: chown {user} the files of {part_dir} and make them readable and writable "
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
