"""IDX001: an index file whose size is not a multiple of its entry size (.index 8, .timeindex 12, .txnindex 34).

No broker writes such a file: ``AbstractIndex`` preallocates and resizes offset and time indexes to
``roundDownToExactMultiple(size, entrySize)`` and ``TransactionIndex.append`` writes whole 34-byte entries. A
remainder means a torn write, a cut copy or a foreign write, so the whole entries may be wrong as well.

What the broker does with it (see docs/IDX001.md):
* offset/time index, broker < 2.3.0: ``OffsetIndex``/``TimeIndex.sanityCheck`` at load throws ("Index file X is
  corrupt, found L bytes which is neither positive nor a multiple of 8"; <= 1.0.x an IllegalArgumentException
  "not positive or not a multiple of 8") and ``Log.loadSegmentFiles`` rebuilds the segment's indexes.
* offset/time index, broker >= 2.3.0 (KAFKA-7283): no check at load. ``AbstractIndex`` maps the file and sets
  ``entries = roundDownToExactMultiple(length, entrySize) / entrySize``: the trailing bytes are ignored and the
  whole entries are used as they are. Rebuilt only if the segment is recovered (unclean stop at or above the
  recovery point, or missing ``.index``). The remainder goes at the next resize (``trimToValidSize`` at close or
  roll; the active segment's indexes are resized to ``segment.index.bytes`` at load).
* ``.txnindex``, every version: ``TransactionIndex.sanityCheck`` (the only index check at load since 2.3.0)
  checks each whole entry's version and lastOffset (the exit or a rebuild: IDX003, broker.txn_index); reads stop
  before the remainder. ``openChannel`` positions the channel at
  the end of the file, so an entry appended to the active segment's index lands off the 34-byte grid and it and
  every later entry read back as garbage. Rebuilt when the segment is recovered (``txnIndex.reset()``).
"""

from __future__ import annotations

from collections.abc import Iterator

from kafka_ops.broker.startup import (
    KEPT,
    REBUILT,
    load_sanity_failure,
    next_start,
    partition_name,
    rebuild_cost,
    recovery_reason,
)
from kafka_ops.checks.base import Finding, check
from kafka_ops.engine.indexes import OFFSET_ENTRY, TIME_ENTRY, TXN_ENTRY
from kafka_ops.engine.logdir import Segment
from kafka_ops.engine.shell import q
from kafka_ops.facts.context import Context
from kafka_ops.facts.model import PartitionFacts

KINDS = (
    ("offset", "index", OFFSET_ENTRY),
    ("time", "timeindex", TIME_ENTRY),
    ("txn", "txnindex", TXN_ENTRY),
)


@check(
    "IDX001",
    severity="error",
    scope="partition",
    title="Index file size is not a multiple of its entry size (8 / 12 / 34 bytes)",
    incident="an unclean stop left corrupt index files that the 0.10.2 broker found at start "
    "('Corrupt index found ... rebuilding index') and rebuilt for hours",
)
def run(ctx: Context, pf: PartitionFacts) -> Iterator[Finding]:
    for seg in pf.part.segments:
        for kind, attr, entry in KINDS:
            fi = getattr(seg, attr)
            if fi is None or fi.size % entry == 0:
                continue
            whole, rem = divmod(fi.size, entry)
            if kind == "txn":
                verdict, fate = _txn_fate(ctx, pf, seg)
                effect = (
                    "TransactionIndex never checks its size (sanityCheck only checks each whole entry's version and "
                    f"lastOffset): reads stop before the {rem} trailing bytes. "
                    + (
                        "This is the active segment: TransactionIndex.openChannel positions the channel at the end "
                        f"of the file, so the next aborted transaction is appended {rem} bytes off the 34-byte grid "
                        "and it and every later entry read back as garbage: READ_COMMITTED fetches get wrong "
                        "aborted ranges (aborted records delivered or committed ones dropped) or fail with "
                        "'Unexpected aborted transaction version'."
                        if seg.active
                        else "Nothing is appended to a rolled segment's .txnindex, so the remainder is only ignored; "
                        "but the file was cut or overwritten, so its whole entries are suspect too."
                    )
                )
            else:
                nxt = next_start(ctx, pf, seg)
                verdict, fate = nxt.verdict, nxt.why
                effect = (
                    "Whenever the broker loads it without rebuilding it, AbstractIndex maps the file with entries = "
                    f"roundDownToExactMultiple({fi.size}, {entry}) / {entry} = {whole}, ignores the {rem} trailing "
                    "bytes and uses the whole entries as they are for lookups"
                    + (" and for the segment's largest timestamp (retention)." if kind == "time" else ".")
                )
            cost = f" ({rebuild_cost(ctx, seg)})" if verdict == REBUILT else ""
            yield run.finding(
                f"{fi.path} is {fi.size} bytes, not a multiple of the {entry}-byte {kind} index entry: {whole} "
                f"whole entries and {rem} trailing bytes, which no broker writes (a torn write, a cut copy or a "
                f"foreign write). {effect} Next start: {fate}{cost}.",
                _fix(pf, seg, verdict),
                path=fi.path,
                topic=pf.part.topic,
                partition=pf.part.partition,
                segment=seg.base_offset,
                details={
                    "index": kind, "size": fi.size, "entry_size": entry, "whole_entries": whole, "remainder": rem,
                    "active": seg.active, "next_start": verdict,
                    "log_bytes": seg.log.size if seg.log else 0,
                },
            )  # fmt: skip


def _txn_fate(ctx: Context, pf: PartitionFacts, seg: Segment) -> tuple[str, str]:
    reason = recovery_reason(ctx, pf, seg)
    if reason is not None:
        return (
            REBUILT,
            f"the next start rebuilds it from the records ({reason}; LogSegment.recover resets it)",
        )
    v = ctx.host.kafka_version
    if v is not None:
        failure = load_sanity_failure(seg, v)
        if failure:
            return REBUILT, (
                f"the next start rebuilds it with the segment's other indexes: LogSegment.sanityCheck throws "
                f"'{failure}' for the offset or time index"
            )
    if ctx.host.broker_state == "running":
        return KEPT, (
            "it is rebuilt only if the broker stops uncleanly and the segment is at or above the recovery point then"
        )
    return KEPT, "the next start keeps it as it is (the segment is not recovered)"


def _fix(pf: PartitionFacts, seg: Segment, verdict: str) -> str:
    where = f"segment {seg.base_offset} of {q(partition_name(pf))}"
    return (
        f"With the broker stopped, quarantine the index files of {where}: kafka-ops fix indexes --log-dir "
        f"{q(pf.log_dir.path)} (dry run), then again with --apply; the broker rebuilds .index, .timeindex and "
        f".txnindex from the records at start (LogLoader.loadSegmentFiles -> recoverSegment)"
        + (
            " (it would rebuild them anyway at the next start, so this only makes it certain)"
            if verdict == REBUILT
            else ""
        )
        + ". Then find what cut the file: a copy or backup taken while the broker ran, a restore, a full disk."
    )
