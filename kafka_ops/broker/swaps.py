"""Which segments a ``.swap`` leftover replaces at the next start (a cleaning or a segment split that the broker
stopped in the middle of: the new segment written as ``<base>.log.swap``, the old ones not yet deleted).

Kafka source (apache/kafka, at the tags named):

* Which swaps count: ``removeTempFilesAndCollectSwapFiles`` keeps the ``.swap`` files; from 2.0 (KAFKA-6264) one
  whose base offset is at or above the smallest ``.cleaned`` offset is an unfinished split and is deleted
  (Log.scala@2.8.2:673-676, LogLoader.scala@3.7.1:241-248). Only ``.log.swap`` files define a swap segment.
* Up to 2.8 (``Log.completeSwapOperations``, Log.scala@1.1.0:379-392, @2.8.2:766-791): for each swap segment,
  "Found log file <f> from interrupted swap operation, repairing.", ``recoverSegment`` (its indexes rebuilt), then
  ``replaceSegments`` with ``logSegments(swap.baseOffset, swap.readNextOffset)`` (from 2.1 filtered to those
  whose next offset is above the swap's base, Log.scala@2.1.0:504; 1.1 keeps the floor segment unfiltered, which
  the model does not follow): the old segment at the swap's base is replaced by the swap, the
  others are deleted (``asyncDeleteSegment``: renamed ``.deleted`` at once).
* From 3.0 (KAFKA-12520, LogLoader.scala@3.0.0:103-139, @3.7.1 the same; LogLoader.java:136-170 in 4.x, read at
  the trunk snapshot 1eb7644): the smallest base and the largest
  ``readNextOffset`` over all swap segments make one range; every non-swap file whose name's offset falls in it
  is deleted ("Deleting segment files ... that is compacted but has not been deleted yet."), then every swap is
  renamed into place ("Recovering file ... by renaming from .swap files."). A segment whose ``.index`` went
  with the range and had no ``.index.swap`` is then loaded with a missing index: rebuilt.

* An index ``.swap`` (``<base>.index.swap``, ``.timeindex.swap``, ``.txnindex.swap``: a cleaning or split that
  stopped after renaming the new ``.log`` into place but before its indexes, ``LogSegment.changeFileSuffixes``
  renames the log first): up to 2.8 ``removeTempFilesAndCollectSwapFiles`` deletes the three indexes of that base
  and leaves the index ``.swap`` where it is ("if an index just delete the index files, they will be rebuilt":
  ``deleteIndicesIfExist(baseFile)``, Log.scala@1.1.0:300-306, @2.2.1:409-416, @2.8.2:658-665), so the segment
  loads without indexes (rebuilt from 2.3, created empty on 1.1-2.2: ``versions.missing_index_rebuilt``). From
  3.0 every ``.swap`` is renamed into place ("Recovering file ... by renaming from .swap files.",
  LogLoader.scala@3.0.0:136-141, @3.7.1:131-137): the swapped index becomes the segment's, loaded as it is;
  without a ``.log.swap`` no segment is deleted (the range is taken over ``.log.swap`` files only).

The plan says ``load: swapped_in`` for the segment at a swap's base (its ``.log`` becomes the swap's records)
and ``deleted_by: swap`` (at the start) for the other segments it covers. The forecast keeps using the old
segment's facts for the one swapped in (an approximation: its records are the cleaned copy of the same range).
"""

from __future__ import annotations

from kafka_ops.broker import leftovers
from kafka_ops.engine import versions
from kafka_ops.engine.errors import EngineError
from kafka_ops.engine.records import BatchScanner, LogBuffer
from kafka_ops.facts.model import HostFacts, PartitionFacts

SWAPPED_IN = "swapped_in"  # SegmentFate.load
SWAP = "swap"  # SegmentFate.deleted_by


def _next_offset(path: str, base: int) -> int:
    """``LogSegment.readNextOffset`` of a swap segment: the offset after its last batch (its base if empty)."""
    nxt = base
    try:
        with LogBuffer.open(path) as buf:
            for b in BatchScanner(buf, verify_crc=False, controls=False):
                nxt = b.next_offset
    except (OSError, EngineError):
        return base
    return nxt


def valid_log_swaps(h: HostFacts, pf: PartitionFacts) -> list[tuple[int, int, str]]:
    """(base, next offset, path) of every ``.log.swap`` the next start swaps in."""
    left = pf.part.leftovers
    if not left:
        return []
    _, split = leftovers.unfinished_split(h, pf)
    out = []
    for f in left:
        if not f.path.endswith(".log.swap") or f.is_dir:
            continue
        base = leftovers.offset(f.path)
        if base is None:
            continue
        if f.path in split:
            continue  # an unfinished split: deleted (KAFKA-6264)
        out.append((base, _next_offset(f.path, base), f.path))
    return sorted(out)


def indexes_deleted_at_load(h: HostFacts, pf: PartitionFacts) -> set[int]:
    """Bases whose ``.index``/``.timeindex``/``.txnindex`` the loader deletes before loading the segments because
    an index ``.swap`` of that base is there (1.1-2.8; module doc). Empty from 3.0 (the swap is renamed in) and
    for an unknown version (the newest rule)."""
    if versions.since("log_loader", h.kafka_version) is not False:
        return set()
    out = set()
    for f in pf.part.leftovers:
        if f.is_dir or not f.path.endswith(leftovers.INDEX_SWAPS):
            continue
        base = leftovers.offset(f.path)
        if base is not None:
            out.add(base)
    return out


def swap_fates(h: HostFacts, pf: PartitionFacts) -> dict[int, tuple[str, str]]:
    """Listed segment base -> (SWAPPED_IN or SWAP, why) for the segments the next start's swap completion
    replaces or deletes; empty when the partition has no valid ``.log.swap``."""
    swaps = valid_log_swaps(h, pf)
    if not swaps:
        return {}
    bases = [s.base_offset for s in pf.part.segments]
    swap_bases = {b for b, _, _ in swaps}
    out: dict[int, tuple[str, str]] = {}
    if versions.since("log_loader", h.kafka_version) is not False:  # 3.0+: one range over all swaps
        lo, hi = min(b for b, _, _ in swaps), max(n for _, n, _ in swaps)
        for b in bases:
            if lo <= b < hi:
                out[b] = _fate(b in swap_bases, lo, hi)
        return out
    for sb, nxt, _ in swaps:  # up to 2.8: each swap replaces logSegments(base, readNextOffset)
        nexts: list[int | None] = [*bases[1:], None]
        for b, after in zip(bases, nexts):
            if b < nxt and (after is None or after > sb) and (b >= sb or after is not None):
                out[b] = _fate(b == sb, sb, nxt)
    return out


def _fate(at_base: bool, lo: int, hi: int) -> tuple[str, str]:
    if at_base:
        return SWAPPED_IN, (
            f"a .swap leftover covers offsets {lo} to {hi}: at load the broker completes the interrupted swap and "
            "this segment becomes the .swap's records (LogLoader, 'Found log file ... from interrupted swap "
            "operation')"
        )
    return SWAP, (
        f"a .swap leftover covers offsets {lo} to {hi}: at load the broker deletes this segment, which the "
        "interrupted cleaning or split had already replaced ('... compacted but has not been deleted yet')"
    )
