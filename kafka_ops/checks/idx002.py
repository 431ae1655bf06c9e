"""IDX002: an offset index whose last offset is below its base offset (any version), or equal to it with
entries on a broker up to 2.0.x.

Rule (see docs/IDX002.md), from the index's last slot (``IndexTail``, the value ``OffsetIndex.lastOffset`` has):
* ``entries > 0 and lastOffset < baseOffset``: rejected by ``OffsetIndex.sanityCheck`` in every version ("Corrupt
  index found, index file X has non-zero size but the last offset is N which is less than the base offset B").
  No broker writes it: ``OffsetIndex.append`` refuses an offset <= the last one and every offset of a segment is
  >= its base, so the slot is garbage.
* ``entries > 0 and lastOffset == baseOffset``, broker < 2.0.0: rejected up to 1.1.x (``<=``: "no larger than"
  up to 1.0.x, "no greater than" 1.1.x; KAFKA-7076 made it ``<`` in 2.0.0, commit c5e7befe014, and 2.1.0). It is how a zero-padded
  (untrimmed) index looks: the last slot is (0, 0). The OOM-kill incident's 0.10.2 broker logged exactly this for the active
  segment of an OOM-killed broker. Not reported for the active segment of a running broker (its index is
  preallocated while it runs), nor for a segment that recovery re-reads anyway after an unclean stop (the rebuild
  costs nothing more and SHUT001 already reports that recovery; every partition of a killed <= 2.0 broker would
  otherwise be listed), nor when the version is unknown (IDX004 reports padded rolled indexes).

Which versions rebuild it at load: < 2.3.0 run the sanity check on every segment at load and rebuild the
segment's indexes (``Log.loadSegmentFiles`` -> ``recoverSegment``); >= 2.3.0 (KAFKA-7283) do not check, and
rebuild it only if the segment is recovered (unclean stop at or above the recovery point, or missing ``.index``).
"""

from __future__ import annotations

from collections.abc import Iterator

from kafka_ops.broker.startup import (
    REBUILT,
    next_start,
    partition_name,
    rebuild_cost,
)
from kafka_ops.checks.base import Finding, check
from kafka_ops.engine import versions
from kafka_ops.engine.shell import q
from kafka_ops.facts.context import Context
from kafka_ops.facts.model import PartitionFacts


@check(
    "IDX002",
    severity="error",
    scope="partition",
    title="Offset index's last offset is below its base offset (or equal to it, up to Kafka 2.0)",
    incident="'Corrupt index found, index file ... has non-zero size but the last offset is 24386649 "
    "which is no larger than the base offset 24386649' after an OOM kill; the 0.10.2 broker rebuilt its indexes",
)
def run(ctx: Context, pf: PartitionFacts) -> Iterator[Finding]:
    version = ctx.host.kafka_version
    strict = versions.since("strict_offset_sanity", version) is False
    running = ctx.host.broker_state == "running"
    for seg in pf.part.segments:
        t = seg.offset_tail
        if seg.index is None or t is None or t.entry_count == 0 or t.last is None:
            continue
        base = seg.base_offset
        last, position = t.last
        if last < base:
            kind = "below"
        elif (
            last == base
            and strict
            and not (running and seg.active)
            and not (not running and base in pf.will_recover and seg.index is not None)
        ):
            kind = "equal"
        else:
            continue
        n = t.entry_count
        nxt = next_start(ctx, pf, seg)
        if kind == "below":
            what = (
                f"the last slot of {seg.index.path} (slot {n - 1} of {n}) holds offset {last} (relative "
                f"{last - base}) at position {position}, below the segment's base offset {base}. No broker writes "
                "that (OffsetIndex.append refuses an offset <= the last one, and a segment holds no offset below its "
                "base): the slot is garbage. OffsetIndex.sanityCheck rejects it in every version ('... has non-zero "
                f"size but the last offset is {last} which is less than the base offset {base}')"
            )
            use = (
                ""
                if nxt.verdict == REBUILT
                else " Loaded as it is, the index is no longer sorted: OffsetIndex.lookup binary-searches it "
                "(AbstractIndex.largestLowerBoundSlotFor) and a lookup that lands on this slot starts its scan at "
                f"position {position}"
                + (
                    " (the start of the segment: a full scan of the segment for every such fetch)"
                    if position == 0
                    else " (a position after the wanted batch makes the read start past the requested offset "
                    "and skip the records in between, LogSegment.translateOffset)"
                )
                + "; kafka-dump-log.sh --index-sanity-check reports it."
            )
        else:
            word = (
                "no greater than" if versions.since("corrupt_index_exception", version) else "no larger than"
            )
            padded = seg.offset_index_padded or (n == 1 and position == 0)
            what = (
                f"the last slot of {seg.index.path} (slot {n - 1} of {n}) holds offset {last}, equal to the base "
                f"offset: Kafka {versions.text(version)} (before 2.0.0, KAFKA-7076) rejects that at load ('Corrupt "
                f"index found, index file ({seg.index.path}) has non-zero size but the last offset is {last} which "
                f"is {word} the base offset {base}'), as the OOM-kill incident's broker did"
                + (
                    ". The slot is zero padding: the index was never trimmed ("
                    + (
                        "the broker was killed while this segment was active"
                        if seg.active
                        else "the trim on roll or shutdown failed, see IDX004"
                    )
                    + ")"
                    if padded
                    else ""
                )
            )
            use = ""
        cost = f" ({rebuild_cost(ctx, seg)})" if nxt.verdict == REBUILT else ""
        yield run.finding(
            f"{partition_name(pf)} segment {base}: {what}. Next start: {nxt.why}{cost}.{use}",
            f"With the broker stopped: kafka-ops fix indexes --log-dir {q(pf.log_dir.path)} (dry run), then with "
            "--apply: it moves the segment's .index, .timeindex and .txnindex to a quarantine folder and the broker "
            "rebuilds them from the records at start (LogLoader.loadSegmentFiles -> recoverSegment)"
            + (
                ". The next start would rebuild it anyway; expect the time above and do not kill the broker while it "
                "recovers"
                if nxt.verdict == REBUILT
                else ""
            )
            + ". Then look for the cause: an unclean stop (SHUT001), a copy taken while the broker ran, a disk error.",
            path=seg.index.path,
            topic=pf.part.topic,
            partition=pf.part.partition,
            segment=base,
            details={
                "rule": "last_offset_below_base" if kind == "below" else "last_offset_equals_base",
                "last_offset": last, "last_position": position, "base_offset": base, "entries": n,
                "active": seg.active, "next_start": nxt.verdict, "log_bytes": seg.log.size if seg.log else 0,
            },
        )  # fmt: skip
