"""IDX005: index files missing next to a segment's .log: the broker rebuilds them at start, at a cost.

What the broker does (see docs/IDX005.md), LogLoader.loadSegmentFiles / LogSegment.sanityCheck (same behaviour
back to 0.8: "Could not find index file corresponding to log file ..., rebuilding index"):
* ``.index`` missing: ``sanityCheck`` throws ``NoSuchFileException`` and ``recoverSegment`` re-reads the whole
  .log (CRC check of every batch, truncation at an invalid tail) and rebuilds ``.index``, ``.timeindex`` and
  ``.txnindex`` (LogSegment.recover), clean shutdown or not. ERROR "Could not find offset index file
  corresponding to log file ..., recovering segment and rebuilding index files..." (trunk logs it only after a
  clean shutdown or below the recovery point).
* ``.timeindex`` missing, ``.index`` present: created empty (``timeIndex().resize(0)``) and not rebuilt unless the
  segment is recovered anyway: the segment's largest timestamp falls back to the .log's mtime
  (LogSegment.largestTimestamp; RET001 judges what retention does with it) and timestamp lookups scan the segment.
* ``.txnindex`` missing: normal (created only for a segment holding an aborted transaction); not reported.

One finding per partition: the segments, the .log bytes re-read and the time at the audit's recovery rate
(``ctx.recovery_seconds``). Info: a missing index of the active segment is common (indexes are created lazily
since 2.3.0, KAFKA-7283/KAFKA-13603; copies often leave out the 10 MiB preallocated files). Warning when the broker
is running and a rolled segment's index is gone: it was deleted under the broker.
"""

from __future__ import annotations

from collections.abc import Iterator

from kafka_ops.broker.startup import is_metadata_log, partition_name, seg_file
from kafka_ops.checks.base import Finding, check
from kafka_ops.engine import versions
from kafka_ops.engine.logdir import Segment
from kafka_ops.facts.context import Context
from kafka_ops.facts.model import PartitionFacts
from kafka_ops.units import human_bytes, human_ms

MAX_LISTED = 10


@check(
    "IDX005",
    severity="info",
    scope="partition",
    title="Index files missing: the next start rebuilds them from the .log",
    incident="the broker spent its start rebuilding index files; the time it takes is the .log bytes it "
    "re-reads (48 MB/s per recovery thread in the OOM-kill incident's log)",
)
def run(ctx: Context, pf: PartitionFacts) -> Iterator[Finding]:
    segs = pf.part.segments
    no_index = [s for s in segs if s.index is None and s.log is not None]
    no_time = [s for s in segs if s.index is not None and s.timeindex is None and s.log is not None]
    if not no_index and not no_time:
        return
    running = ctx.host.broker_state == "running"
    threads = ctx.host.configs.server_int("num.recovery.threads.per.data.dir", 1)
    nbytes = sum(s.log.size for s in no_index)  # type: ignore[union-attr,misc]
    secs = ctx.recovery_seconds(nbytes, 1)
    parts = []
    if no_index:
        listed = ", ".join(str(s.base_offset) for s in no_index[:MAX_LISTED])
        more = f" and {len(no_index) - MAX_LISTED} more" if len(no_index) > MAX_LISTED else ""
        parts.append(
            f"{_segments(no_index, listed, more)} {'has' if len(no_index) == 1 else 'have'} no .index: "
            "at the next start LogLoader.loadSegmentFiles gets NoSuchFileException from LogSegment.sanityCheck and "
            f"recovers {'it' if len(no_index) == 1 else 'each of them'} (recoverSegment -> LogSegment.recover), "
            "re-reading and CRC-checking "
            f"{human_bytes(nbytes)} of .log and rebuilding .index, .timeindex and .txnindex: "
            f"{'under a second' if secs < 1 else 'about ' + human_ms(secs * 1000)} of this partition's recovery thread (48 MB/s; num.recovery.threads.per.data.dir"
            f"={threads} threads share the log dir's partitions). It logs '{_log_line(ctx.host.kafka_version)}', "
            "and truncates an invalid tail if there is one (SHUT002)"
            + (
                "; the KRaft metadata log is re-read in full at every start anyway (KafkaMetadataLog)"
                if is_metadata_log(pf)
                else ""
            )
        )
    if no_time:
        rebuilt = [s for s in no_time if s.base_offset in pf.will_recover and not running]
        kept = [s for s in no_time if s.base_offset not in {r.base_offset for r in rebuilt}]
        txt = (
            f"{_segments(no_time, ', '.join(str(s.base_offset) for s in no_time[:MAX_LISTED]), ' and more' if len(no_time) > MAX_LISTED else '')} "
            f"{'has' if len(no_time) == 1 else 'have'} a .index but no .timeindex: LogSegment.sanityCheck creates it empty "
            "(timeIndex().resize(0))"
        )
        if kept:
            txt += (
                f" and it stays empty for {len(kept)} of them (not recovered): their largest timestamp is the "
                ".log's mtime (LogSegment.largestTimestamp; RET001 says whether retention deletes them early) and "
                "timestamp lookups scan the segment"
            )
        if rebuilt:
            txt += f"; {len(rebuilt)} of them are recovered at the next start, which rebuilds it"
        parts.append(txt)
    rolled_gone = running and any(not s.active for s in no_index + no_time)
    if rolled_gone:
        parts.append(
            "the broker is running and a rolled segment's index is gone: it was deleted under the broker, which keeps "
            "the mapping it has and creates a file anew when it next opens or resizes it (AbstractIndex."
            "createAndAssignMmap, resize), so what ends up on disk may be empty or zero-filled rather than rebuilt"
        )
    first = (no_index or no_time)[0]
    missing_suffix = ".index" if no_index else ".timeindex"
    yield run.finding(
        f"{partition_name(pf)}: " + "; ".join(parts) + ".",
        (
            "Stop the broker cleanly (not kill), check again, and start it: the start rebuilds the missing .index "
            "files from the records."
            if rolled_gone
            else "Nothing to repair: the next start rebuilds the missing .index files. Plan the start time for it and "
            "do not kill the broker while it recovers (server.log shows 'Recovering'/'rebuilding index files' "
            "lines per segment). A missing .timeindex alone matters for retention only: RET001 reports it when it "
            "does, and its fix (kafka-ops fix indexes --apply) has the broker rebuild it. If the files were lost in "
            "a copy or restore, copy log dirs with the broker stopped."
        ),
        severity="warning" if rolled_gone else None,
        path=seg_file(first, missing_suffix),
        topic=pf.part.topic,
        partition=pf.part.partition,
        segment=first.base_offset,
        details={
            "missing_index": [s.base_offset for s in no_index],
            "missing_timeindex_only": [s.base_offset for s in no_time],
            "rebuild_bytes": nbytes, "rebuild_estimate_s": round(secs, 1),
            "active_only": all(s.active for s in no_index + no_time),
        },
    )  # fmt: skip


def _segments(segs: list[Segment], listed: str, more: str) -> str:
    active = " (the active segment)" if segs[-1].active else ""
    if len(segs) == 1:
        return f"segment {listed}{active}"
    return f"{len(segs)} segments ({listed}{more}{', the last one active' if active else ''})"


def _log_line(version: tuple[int, ...] | None) -> str:
    """The ERROR line of a missing .index: Log.loadSegmentFiles up to 1.0.x ("... rebuilding index..."), since
    1.1.0 "... recovering segment and rebuilding index files..." (trunk LogLoader logs it only after a clean
    shutdown or below the recovery point)."""
    if version is not None and versions.norm(version) < (1, 0, 0):  # before every row of the table
        return "Could not find index file corresponding to log file ..., rebuilding index..."
    if versions.since("corrupt_index_exception", version) is False:  # the 1.1.0 log line came with it
        return "Could not find offset index file corresponding to log file ..., rebuilding index..."
    return "Could not find offset index file corresponding to log file ..., recovering segment and rebuilding index files..."
