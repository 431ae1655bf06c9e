"""The log end offset the next start reads from the active segment (issue 36 §2: a damaged ``.index``).

After a clean stop the active segment is not recovered; ``LogLoader.recoverLog`` takes its log end offset from
``LogSegment.readNextOffset()`` (LogLoader.scala@3.7:394, 474; Log.scala@2.8.2:878, 944), which trusts the
offset index:

* ``read(offsetIndex().lastOffset(), log.sizeInBytes())``: ``lastOffset`` is the base offset plus the relative
  offset of the index's last slot (``entries = file length / 8``, padding and garbage slots included; base when
  it has none);
* ``translateOffset`` -> ``OffsetIndex.lookup(lastOffset)`` (AbstractIndex.largestLowerBoundSlotFor: a binary
  search over the slots, the last 1024 first, that assumes sorted entries) -> the slot's position, at least 0
  (``Math.max(mapping.position, startingFilePosition)``);
* ``FileRecords.searchForOffsetWithSize(lastOffset, position)``: the batches from that position
  (``FileLogInputStream.nextBatch``: a size field below 14 throws CorruptRecordException, a batch running past
  the file's end ends the iteration, a magic below 2 is a legacy batch whose last offset is its header's offset)
  until one whose last offset is at least ``lastOffset``; none: ``read`` returns null and ``readNextOffset``
  returns the segment's BASE offset;
* else the records from that batch to the file's end, whose last batch's ``nextOffset()`` is the log end offset.

So an index entry past the end of the log, or naming an offset past the last record, makes the broker take the
active segment's base offset for the log end offset: every record of the active segment is beyond the end it
serves, the high watermark is clamped to it and the next append reuses those offsets in the same file. A
position in the middle of a batch reads a header out of record bytes: the exit (CorruptRecordException, not an
IOException), or an offset the model does not trust.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterator

from kafka_ops.engine.compat import slotted
from kafka_ops.engine.errors import EngineError
from kafka_ops.engine.fileio import read_bytes
from kafka_ops.engine.logdir import Segment
from kafka_ops.engine.records import LogBuffer

ENTRY = 8
WARM_ENTRIES = 8192 // ENTRY  # AbstractIndex.warmEntries
HEADER_UP_TO_MAGIC, LOG_OVERHEAD, MIN_SIZE, V2_HEADER = 17, 12, 14, 61
MAX_INDEX_READ = 64 * 1024 * 1024

AS_LOGGED, BASE, EXITS, UNKNOWN = "as_logged", "base", "exits", "unknown"


@slotted
class NextOffset:
    kind: str  # as_logged | base | exits | unknown
    offset: int | None  # the log end offset the broker takes (base, or the records' own)
    why: str


class _Corrupt(Exception):
    pass


class _Unreadable(Exception):
    pass


def _lookup(slot_offset: Callable[[int], int], n: int, target: int) -> int:
    """AbstractIndex.indexSlotRangeFor(LARGEST_LOWER_BOUND, KEY) over ``n`` slots: the slot for ``target``, -1
    for none (``slot_offset(i)``: slot i's offset; a binary search reads a few slots only)."""
    if n == 0:
        return -1

    def search(lo: int, hi: int) -> int:
        while lo < hi:
            mid = (lo + hi + 1) >> 1
            off = slot_offset(mid)
            if off > target:
                hi = mid - 1
            elif off < target:
                lo = mid
            else:
                return mid
        return lo

    first_hot = max(0, n - 1 - WARM_ENTRIES)
    if slot_offset(first_hot) < target:
        return search(first_hot, n - 1)
    if slot_offset(0) > target:
        return -1
    return search(0, first_hot)


def _batches(view: memoryview, start: int, end: int) -> Iterator[tuple[int, int]]:
    """(position, last offset) of each batch FileLogInputStream reads from ``start``; _Corrupt on a size below
    14, _Unreadable where the broker's read of a v2 header would run past the file (an EOF it reports)."""
    pos = start
    while pos < end - HEADER_UP_TO_MAGIC:
        offset, size = struct.unpack_from(">qi", view, pos)
        if size < MIN_SIZE:
            raise _Corrupt(f"a size field of {size} at byte {pos}")
        if pos > end - LOG_OVERHEAD - size:
            return
        magic = struct.unpack_from(">b", view, pos + 16)[0]
        if magic < 2:
            last = offset
        else:
            if pos + V2_HEADER > end:
                raise _Unreadable(f"a batch header at byte {pos} that runs past the end of the file")
            last = offset + struct.unpack_from(">i", view, pos + 23)[0]
        yield pos, last
        pos += LOG_OVERHEAD + size


def read_next_offset(seg: Segment, records_end: int | None) -> NextOffset | None:
    """What ``readNextOffset`` returns for this (active) segment at a start without recovery, against
    ``records_end`` (the offset after its last batch, as a scan of the .log from byte 0 finds it); None when the
    files cannot be read (their own checks say so)."""
    if seg.log is None or seg.index is None:
        return None
    try:
        raw = read_bytes(seg.index.path, MAX_INDEX_READ)
    except EngineError:
        return None
    n = len(raw) // ENTRY

    def slot(i: int) -> tuple[int, int]:
        rel, pos = struct.unpack_from(">ii", raw, i * ENTRY)
        return seg.base_offset + rel, pos

    target = slot(n - 1)[0] if n else seg.base_offset
    found_slot = _lookup(lambda i: slot(i)[0], n, target)
    start = max(slot(found_slot)[1], 0) if found_slot >= 0 else 0
    where = f"the index's last offset {target} (slot {n - 1}), looked up at byte {start}"
    try:
        with LogBuffer.open(seg.log.path) as buf:
            end = buf.size
            found = None
            for pos, last in _batches(buf.view, start, end):
                if last >= target:
                    found = pos
                    break
            if found is None:
                return NextOffset(
                    BASE,
                    seg.base_offset,
                    f"LogSegment.readNextOffset reads from {where} of the {end}-byte .log, finds no batch up to "
                    f"that offset (FileRecords.searchForOffsetWithSize returns null) and returns the base offset "
                    f"{seg.base_offset}: the broker takes {seg.base_offset} for the log end offset"
                    + (f" instead of {records_end}" if records_end is not None else ""),
                )
            last_batch = None
            for _, last in _batches(buf.view, found, end):
                last_batch = last
    except _Corrupt as exc:
        return NextOffset(
            EXITS,
            None,
            f"LogSegment.readNextOffset reads from {where} and finds {exc}: CorruptRecordException, not an "
            "IOException, so loading the logs fails and the broker exits",
        )
    except _Unreadable as exc:
        return NextOffset(UNKNOWN, None, f"LogSegment.readNextOffset reads from {where} and finds {exc}")
    except EngineError:
        return None
    leo = None if last_batch is None else last_batch + 1
    if records_end is None:
        return None  # nothing to compare with: the log's own end is unknown (its reader says why)
    if leo == records_end:
        return NextOffset(AS_LOGGED, leo, "")
    return NextOffset(
        UNKNOWN,
        leo,
        f"LogSegment.readNextOffset reads from {where}, a position that is no batch start, and takes {leo} for "
        f"the log end offset" + f" (the records end before {records_end})",
    )
