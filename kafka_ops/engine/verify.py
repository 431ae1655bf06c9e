"""Index verification against the ``.log``: what ``kafka-dump-log.sh`` checks, and what it misses.

Invariants, from Kafka's writers:
* ``OffsetIndex.append`` refuses an offset <= the last one (InvalidOffsetException): offsets strictly increase;
  positions are ``log.sizeInBytes()`` at append time: they strictly increase too.
* ``LogSegment.append(largestOffset, ..., records)`` indexes ``(largestOffset, physicalPosition)`` where the
  position is the start of the appended chunk and largestOffset its last offset. A follower appends many
  batches at once, so the entry's offset may lie in a later batch than the one at its position. What lookups
  need (``OffsetIndex.lookup`` then a forward scan in ``LogSegment.translateOffset``) is that the position is a
  batch start whose base offset is <= the entry's offset. That is what we check. (DumpLogSegments instead
  requires ``entry.offset == lastOffset`` of the batch at the position and misreports follower-written
  segments; KAFKA-7487.)
* ``TimeIndex.maybeAppend`` appends only when the timestamp is greater than the last entry's, and throws when
  the offset goes backwards: timestamps strictly increase, offsets never decrease.
* Zero padding: slots after the last real entry that are all zero. DumpLogSegments stops at the first slot whose
  offset equals the base offset and says nothing; we count and report them.
"""

from __future__ import annotations

import bisect
import operator

from kafka_ops.engine.compat import slotted
from kafka_ops.engine.indexes import IndexFile
from kafka_ops.engine.records import BatchScanner, LogBuffer

MAX_LISTED = 20  # issues of one kind listed individually before they are summarised


@slotted
class IndexIssue:
    kind: str  # remainder | zero_padding | non_monotonic | past_end | not_batch_start | offset_before_batch
    # | offset_past_log_end | timestamp_mismatch
    slot: int | None
    message: str
    severity: str = "error"  # error | warning | info

    def to_dict(self) -> dict[str, object]:
        return {"kind": self.kind, "slot": self.slot, "message": self.message, "severity": self.severity}


@slotted
class LogMap:
    """Batch boundaries of a log: position -> (base offset, last offset, max timestamp)."""

    size: int
    batches: dict[int, tuple[int, int, int]]
    end_offset: int | None  # last offset in the log (None if empty)
    valid_bytes: int
    _ordered: list[tuple[int, int, int]] | None = None
    _bases: list[int] | None = None

    @classmethod
    def build(cls, buf: LogBuffer) -> LogMap:
        scanner = BatchScanner(buf, verify_crc=False)
        batches = {}
        last = None
        for b in scanner:
            batches[b.position] = (b.base_offset, b.last_offset, b.max_timestamp)
            last = b.last_offset
        return cls(buf.size, batches, last, scanner.valid_bytes)

    def batch_holding(self, offset: int) -> tuple[int, int, int] | None:
        if self._ordered is None:
            self._ordered = sorted(self.batches.values())
            self._bases = [b[0] for b in self._ordered]
        i = bisect.bisect_right(self._bases, offset) - 1  # type: ignore[arg-type]  # set with _ordered
        if i >= 0 and self._ordered[i][0] <= offset <= self._ordered[i][1]:
            return self._ordered[i]
        return None


def _limit(issues: list[IndexIssue], kind: str, slot: int, message: str, severity: str = "error") -> None:
    n = sum(1 for i in issues if i.kind == kind)
    if n < MAX_LISTED:
        issues.append(IndexIssue(kind, slot, message, severity))


def verify_offset_index(idx: IndexFile, log: LogMap | None, active: bool) -> list[IndexIssue]:
    issues: list[IndexIssue] = []
    if idx.remainder:
        issues.append(
            IndexIssue(
                "remainder", None,
                f"size {idx.length} is not a multiple of 8: {idx.remainder} trailing bytes "
                "(OffsetIndex.sanityCheck rejects it)",
            )
        )  # fmt: skip
    if idx.zero_tail:
        where = "active segment (preallocated; normal while the broker runs)" if active else "rolled segment"
        issues.append(
            IndexIssue(
                "zero_padding", len(idx.entries) - idx.zero_tail,
                f"{idx.zero_tail} zero-padded slots after {len(idx.entries) - idx.zero_tail} real entries "
                f"on the {where}; Kafka counts all {idx.entry_count} slots as entries",
                "info" if active else "warning",
            )
        )  # fmt: skip
    real = idx.real_entries
    if not real:
        return issues
    offsets = [o for o, _ in real]
    positions = [p for _, p in real]
    # C-level comparisons over the whole index; a Python loop only when something is wrong
    if not all(map(operator.lt, offsets, offsets[1:])) or not all(map(operator.lt, positions, positions[1:])):
        for i in range(1, len(real)):
            if offsets[i] <= offsets[i - 1] or positions[i] <= positions[i - 1]:
                _limit(
                    issues, "non_monotonic", i,
                    f"slot {i}: offset {offsets[i]} at position {positions[i]} does not follow offset "
                    f"{offsets[i - 1]} at position {positions[i - 1]}",
                )  # fmt: skip
    if log is None:
        return issues
    batches = log.batches
    # One dict lookup per entry and C-level checks over the results; the Python loops run only on a problem.
    found = list(map(batches.get, positions))
    missing = None in found
    if missing:
        for i, (o, p) in enumerate(real):
            if p not in batches:
                if p >= log.size:
                    _limit(
                        issues, "past_end", i,
                        f"slot {i}: offset {o} points at position {p}, past the end of the log ({log.size} bytes)",
                    )  # fmt: skip
                else:
                    _limit(
                        issues,
                        "not_batch_start",
                        i,
                        f"slot {i}: position {p} (offset {o}) is not a batch start",
                    )
    # (read only when nothing is missing: no None in found)
    if missing or any(map(operator.gt, map(operator.itemgetter(0), found), offsets)):  # type: ignore[arg-type]
        for i, (o, p) in enumerate(real):
            b = batches.get(p)
            if b is not None and b[0] > o:
                _limit(
                    issues, "offset_before_batch", i,
                    f"slot {i}: offset {o} points at the batch at position {p}, which starts at offset {b[0]}: "
                    "lookups of that offset would skip records",
                )  # fmt: skip
    if log.end_offset is not None and offsets[-1] > log.end_offset:
        issues.append(
            IndexIssue(
                "offset_past_log_end", len(real) - 1,
                f"last entry offset {offsets[-1]} is beyond the log's last offset {log.end_offset}",
            )
        )  # fmt: skip
    return issues


def verify_time_index(idx: IndexFile, log: LogMap | None, active: bool) -> list[IndexIssue]:
    issues: list[IndexIssue] = []
    if idx.remainder:
        issues.append(
            IndexIssue(
                "remainder", None,
                f"size {idx.length} is not a multiple of 12: {idx.remainder} trailing bytes "
                "(TimeIndex.sanityCheck rejects it)",
            )
        )  # fmt: skip
    if idx.zero_tail or (idx.entries and idx.entries[-1] == (0, idx.base_offset)):
        n_real = len(idx.entries) - idx.zero_tail
        if idx.entries and idx.entries[0] == (0, idx.base_offset):
            n_real = 0
        where = "active segment (preallocated; normal while the broker runs)" if active else "rolled segment"
        issues.append(
            IndexIssue(
                "zero_padding", n_real,
                f"{len(idx.entries) - n_real} zero-padded slots after {n_real} real entries on the {where}: "
                "the broker reads the last slot, timestamp 0, as the segment's largest timestamp",
                "info" if active else "error",
            )
        )  # fmt: skip
    real = [e for e in idx.real_entries if e != (0, idx.base_offset)]
    if not real:
        return issues
    ts = [t for t, _ in real]
    offs = [o for _, o in real]
    if not all(map(operator.lt, ts, ts[1:])) or not all(map(operator.le, offs, offs[1:])):
        for i in range(1, len(real)):
            if ts[i] <= ts[i - 1] or offs[i] < offs[i - 1]:
                _limit(
                    issues, "non_monotonic", i,
                    f"slot {i}: timestamp {ts[i]} offset {offs[i]} after timestamp {ts[i - 1]} offset {offs[i - 1]}",
                )  # fmt: skip
    if log is None:
        return issues
    for i, (t, o) in enumerate(real):
        if log.end_offset is None or o > log.end_offset or o < idx.base_offset:
            _limit(issues, "offset_past_log_end", i, f"slot {i}: offset {o} is not in the log")
            continue
        b = log.batch_holding(o)
        if b is not None and b[2] != t and t > b[2]:
            _limit(
                issues, "timestamp_mismatch", i,
                f"slot {i}: timestamp {t} for offset {o}, but the batch holding it has max timestamp {b[2]}",
                "warning",
            )  # fmt: skip
    return issues
