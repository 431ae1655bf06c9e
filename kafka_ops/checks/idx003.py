"""IDX003: index entries that are not monotonic, or that point past the end of the segment's .log.

What the broker writes (the invariants): ``OffsetIndex.append`` only appends an offset greater than the last one
(else InvalidOffsetException) at position ``log.sizeInBytes()``, so offsets and positions strictly increase and
every position is the start of a batch in the .log; ``TimeIndex.maybeAppend`` only appends a greater timestamp
and never a smaller offset. Offsets of a segment lie in [base offset, next segment's base offset).

Two depths (see docs/IDX003.md):
* cheap (default, every segment): from the first and last slot of each index (``IndexTail``, two small reads
  the facts already hold), ignoring zero padding (IDX004), a size remainder (IDX001) and an offset-index last
  offset below the base (IDX002):
  - offset index: last offset <= first offset, or last position <= first position (not monotonic); a first or
    last position >= the .log's size (past the end); a last offset >= the next segment's base offset (rolled)
    or >= the log end offset (active segment);
  - time index: last timestamp < first timestamp, last offset < first offset, or last offset < base offset
    (not monotonic; TimeIndex.sanityCheck's rules); a last offset >= the next segment's base / the log end.
* full (``engine.verify`` over every entry, against the .log's batch boundaries): for the segments whose .log
  the audit reads anyway (the next start recovers them, ``PartitionFacts.recovery``) and for every segment under
  ``--deep``. Reported kinds: non_monotonic, past_end, not_batch_start, offset_before_batch,
  offset_past_log_end (not: remainder = IDX001, zero_padding = IDX004, timestamp_mismatch).
"""

from __future__ import annotations

from collections.abc import Iterator

from kafka_ops.broker.next_offset import EXITS as NEXT_OFFSET_EXITS
from kafka_ops.broker.startup import (
    REBUILT,
    active_next_offset,
    next_start,
    partition_name,
    rebuild_cost,
    txn_index_at_load,
    verify_indexes,
)
from kafka_ops.broker.txn_index import EXITS as TXN_EXITS
from kafka_ops.checks.base import Finding, check
from kafka_ops.engine.logdir import Segment
from kafka_ops.engine.shell import q
from kafka_ops.facts.context import Context
from kafka_ops.facts.model import PartitionFacts

REPORTED = ("non_monotonic", "past_end", "not_batch_start", "offset_before_batch", "offset_past_log_end")
MAX_IN_MESSAGE = 3

EFFECT = {
    ("offset", "non_monotonic"): "OffsetIndex.lookup binary-searches the entries as if they were sorted "
    "(AbstractIndex.largestLowerBoundSlotFor): it can pick a slot whose position lies after the wanted batch, and "
    "the read then starts past the requested offset and skips the records in between (LogSegment.translateOffset "
    "-> FileRecords.searchForOffsetWithSize), or before it (a longer scan)",
    ("offset", "past_end"): "a lookup that lands on such an entry finds no batch from its position "
    "(FileRecords.searchForOffsetWithSize returns null): the fetch skips the rest of the segment and goes on in the "
    "next one (LocalLog.read)",
    (
        "offset",
        "not_batch_start",
    ): "a lookup that lands on such an entry starts reading in the middle of a batch: "
    "the header read there is garbage (a CorruptRecordException, or a wrong batch)",
    (
        "offset",
        "offset_before_batch",
    ): "the entry's offset lies before the batch at its position: a lookup of the "
    "offsets in between starts at that batch and skips them",
    ("offset", "offset_past_log_end"): "the entry names an offset that is not in the segment: a lookup of it "
    "scans to the end of the segment and finds nothing (FileRecords.searchForOffsetWithSize returns null)",
    (
        "time",
        "non_monotonic",
    ): "TimeIndex.lookup binary-searches the entries as if they were sorted: timestamp "
    "lookups (ListOffsets by timestamp, consumer offsetsForTimes) can return a wrong offset, and the last entry is "
    "what time retention takes as the segment's largest timestamp (LogSegment.largestTimestamp)",
    ("time", "offset_past_log_end"): "timestamp lookups return an offset that is not in the segment",
}
ACTIVE_LAST_PAST = (
    " This is the active segment and its last entry is affected: loaded without recovery, "
    "LogSegment.readNextOffset reads from offsetIndex().lastOffset(), finds no batch and returns the base offset "
    "{base}, so the broker would take {base} as the log end offset and append over offsets already in the file."
)


@check(
    "IDX003",
    severity="error",
    scope="partition",
    title="Index entries not monotonic, or pointing past the end of the segment's .log",
    incident="after an unclean stop the index no longer matched the log; the 0.10.2 broker caught it at "
    "start only because its sanity check ran on every segment (since 2.3.0 it does not)",
)
def run(ctx: Context, pf: PartitionFacts) -> Iterator[Finding]:
    segs = pf.part.segments
    for i, seg in enumerate(segs):
        if seg.txnindex is not None:
            txn = txn_index_at_load(ctx, pf, seg)
            if txn is not None:
                yield _txn_finding(ctx, pf, seg, *txn)
        if seg.active and seg.index is not None:
            nxt_off = active_next_offset(ctx, pf)
            if nxt_off is not None and nxt_off.kind == NEXT_OFFSET_EXITS:
                yield _exit_finding(pf, seg, nxt_off.why)
                continue
        next_base = segs[i + 1].base_offset if i + 1 < len(segs) else None
        end = next_base if next_base is not None else pf.log_end_offset  # first offset not in the segment
        full = seg.base_offset in pf.recovery
        if full:
            found = verify_indexes(seg)
            per_index = {
                k: [(x.kind, x.slot, x.message) for x in v if x.kind in REPORTED] for k, v in found.items()
            }
            t = seg.offset_tail
            if t is not None and t.last is not None and t.entry_count and t.last[0] < seg.base_offset:
                # the garbage last slot is IDX002's; do not report it twice
                per_index["offset"] = [x for x in per_index.get("offset", []) if x[1] != t.entry_count - 1]
        else:  # the usual segment: its two index tails, most often nothing to say (no dict made for it)
            offset_issues, time_issues = _cheap_offset(seg, end), _cheap_time(seg, end)
            if not offset_issues and not time_issues:
                continue
            per_index = {"offset": offset_issues, "time": time_issues}
        for kind, issues in per_index.items():
            if not issues:
                continue
            yield _finding(ctx, pf, seg, kind, issues, full)


def _cheap_offset(seg: Segment, end: int | None) -> list[tuple[str, int | None, str]]:
    t = seg.offset_tail
    if seg.index is None or seg.log is None or t is None or t.entry_count == 0 or t.first is None:
        return []
    base, size, n = seg.base_offset, seg.log.size, t.entry_count
    out: list[tuple[str, int | None, str]] = []
    first_off, first_pos = t.first
    if (first_off, first_pos) != (base, 0) and first_pos >= size:
        out.append(("past_end", 0, f"slot 0: offset {first_off} points at position {first_pos}, past the end of "
                    f"the log ({size} bytes)"))  # fmt: skip
    if seg.offset_index_padded or t.last is None or n < 1:
        return out
    last_off, last_pos = t.last
    if last_off < base:
        return out  # IDX002
    if n >= 2 and (last_off <= first_off or last_pos <= first_pos):
        out.append(("non_monotonic", n - 1, f"slot {n - 1}: offset {last_off} at position {last_pos} does not "
                    f"follow slot 0: offset {first_off} at position {first_pos}"))  # fmt: skip
    if last_pos >= size and (n >= 2 or first_pos < size):
        out.append(("past_end", n - 1, f"slot {n - 1}: offset {last_off} points at position {last_pos}, past the "
                    f"end of the log ({size} bytes)"))  # fmt: skip
    if end is not None and last_off >= end:
        out.append(("offset_past_log_end", n - 1, f"slot {n - 1}: offset {last_off} is not in the segment, whose "
                    f"records end before offset {end}"))  # fmt: skip
    return out


def _cheap_time(seg: Segment, end: int | None) -> list[tuple[str, int | None, str]]:
    t = seg.time_tail
    if seg.timeindex is None or t is None or t.entry_count == 0 or t.first is None or t.last is None:
        return []
    if seg.time_index_padded:
        return []  # IDX004 (and RET001): the last slot is zero padding
    base, n = seg.base_offset, t.entry_count
    (first_ts, first_off), (last_ts, last_off) = t.first, t.last
    out: list[tuple[str, int | None, str]] = []
    if last_off < base:
        out.append(("non_monotonic", n - 1, f"slot {n - 1}: offset {last_off} is below the base offset {base} "
                    "(TimeIndex.sanityCheck: 'the last offset is ... less than the first offset')"))  # fmt: skip
    elif n >= 2 and (last_ts < first_ts or last_off < first_off):
        out.append(("non_monotonic", n - 1, f"slot {n - 1}: timestamp {last_ts} offset {last_off} after slot 0: "
                    f"timestamp {first_ts} offset {first_off}"))  # fmt: skip
    if end is not None and last_off >= end:
        out.append(("offset_past_log_end", n - 1, f"slot {n - 1}: offset {last_off} is not in the segment, whose "
                    f"records end before offset {end}"))  # fmt: skip
    return out


def _finding(
    ctx: Context,
    pf: PartitionFacts,
    seg: Segment,
    kind: str,
    issues: list[tuple[str, int | None, str]],
    full: bool,
) -> Finding:
    path = (seg.index if kind == "offset" else seg.timeindex).path  # type: ignore[union-attr]
    kinds = sorted({k for k, _, _ in issues})
    effects = "; ".join(EFFECT[(kind, k)] for k in kinds if (kind, k) in EFFECT)
    effects = (effects[:1].upper() + effects[1:] + ".") if effects else ""
    t = seg.offset_tail
    last_slot = t.entry_count - 1 if t is not None else None
    nxt = next_start(ctx, pf, seg)
    if (
        kind == "offset"
        and seg.active
        and nxt.verdict != REBUILT
        and any(k in ("past_end", "offset_past_log_end") and slot == last_slot for k, slot, _ in issues)
    ):
        effects += ACTIVE_LAST_PAST.format(base=seg.base_offset)
    listed = "; ".join(m for _, _, m in issues[:MAX_IN_MESSAGE])
    more = f" (and {len(issues) - MAX_IN_MESSAGE} more)" if len(issues) > MAX_IN_MESSAGE else ""
    how = "every entry checked against the .log's batches" if full else "first and last slot"
    cost = f" ({rebuild_cost(ctx, seg)})" if nxt.verdict == REBUILT else ""
    return run.finding(
        f"{partition_name(pf)} segment {seg.base_offset}: the {kind} index {path} is inconsistent ({how}): "
        f"{listed}{more}. No broker writes that: the index does not describe this .log (an unclean stop that "
        f"flushed the index but not the log, a copy of files taken at different times, a disk error). "
        f"{effects} Next start: {nxt.why}{cost}.",
        f"With the broker stopped: kafka-ops fix indexes --log-dir {q(pf.log_dir.path)} (dry run), then with --apply: "
        "the segment's .index, .timeindex and .txnindex go to a quarantine folder and the broker rebuilds them "
        "from the records at start (LogLoader.loadSegmentFiles -> recoverSegment). kafka-ops dump "
        f"{q(path)} lists every entry checked against the log. If files were restored or copied, check that the "
        ".log and its indexes come from the same moment.",
        path=path,
        topic=pf.part.topic,
        partition=pf.part.partition,
        segment=seg.base_offset,
        details={
            "index": kind, "depth": "full" if full else "first_last_slot", "kinds": kinds,
            "issues": [{"kind": k, "slot": s, "message": m} for k, s, m in issues],
            "active": seg.active, "next_start": nxt.verdict, "log_bytes": seg.log.size if seg.log else 0,
        },
    )  # fmt: skip


def _txn_finding(ctx: Context, pf: PartitionFacts, seg: Segment, verdict: str, why: str) -> Finding:
    """A ``.txnindex`` whose entries the next start's ``TransactionIndex.sanityCheck`` refuses (broker.txn_index):
    critical when the broker exits over it, an error when it rebuilds the segment."""
    path = seg.txnindex.path  # type: ignore[union-attr]
    if verdict == TXN_EXITS:
        effect = f"Next start: the broker exits instead of starting ({why})."
    else:
        effect = (
            f"Next start: the segment is rebuilt from its records, because {why} ({rebuild_cost(ctx, seg)})."
        )
    return run.finding(
        f"{partition_name(pf)} segment {seg.base_offset}: the transaction index {path} holds an entry no broker "
        f"writes (a torn or foreign write, a copy of files taken at different times). {effect}",
        f"With the broker stopped: kafka-ops fix indexes --log-dir {q(pf.log_dir.path)} (dry run), then with --apply: "
        "the segment's .index, .timeindex and .txnindex go to a quarantine folder and the broker rebuilds them "
        f"from the records at start (LogLoader.loadSegmentFiles -> recoverSegment). kafka-ops dump {q(path)} lists "
        "its entries.",
        severity="critical" if verdict == TXN_EXITS else None,
        path=path,
        topic=pf.part.topic,
        partition=pf.part.partition,
        segment=seg.base_offset,
        details={"index": "txn", "next_start": verdict, "active": seg.active},
    )


def _exit_finding(pf: PartitionFacts, seg: Segment, why: str) -> Finding:
    """The active segment's offset index sends the next start's ``readNextOffset`` into bytes it cannot read
    (broker.next_offset): the broker exits."""
    path = seg.index.path  # type: ignore[union-attr]
    return run.finding(
        f"{partition_name(pf)} segment {seg.base_offset}: the offset index {path} of the active segment does not "
        f"describe its .log. Next start: the broker exits instead of starting ({why}).",
        f"With the broker stopped: kafka-ops fix indexes --log-dir {q(pf.log_dir.path)} (dry run), then with --apply: "
        "the segment's indexes go to a quarantine folder and the broker rebuilds them from the records at start "
        f"(LogLoader.loadSegmentFiles -> recoverSegment). kafka-ops dump {q(path)} lists every entry checked "
        "against the log.",
        severity="critical",
        path=path,
        topic=pf.part.topic,
        partition=pf.part.partition,
        segment=seg.base_offset,
        details={"index": "offset", "next_start": "exits", "active": True},
    )
