"""Writes one partition the way a broker does: segments, indexes, txn index, producer snapshots.

Mirrors storage/.../log/LogSegment.java:
* ``append``: an index entry ``(largestOffset, physicalPosition)`` and a time entry
  ``(maxTimestampSoFar, shallowOffsetOfMaxTimestampSoFar)`` when more than ``index.interval.bytes`` were
  appended since the last entry (checked before the new bytes are counted); the time entry only when its
  timestamp is greater than the last one (``TimeIndex.maybeAppend``).
* ``shouldRoll``: size would exceed ``segment.bytes``, ``segment.ms`` elapsed since the first batch's max
  timestamp (``rollingBasedTimestamp``), or an index is full (time index keeps one slot free).
* ``onBecomeInactiveSegment`` (roll) and ``close`` (clean shutdown): final time entry, then
  ``trimToValidSize`` of both indexes. The active segment's indexes are preallocated to
  ``roundDown(segment.index.bytes, entrySize)`` (AbstractIndex) and stay so while the broker runs or when it
  is killed.
* Aborted transactions go to the ``.txnindex`` of the segment that holds the ABORT marker
  (``LogSegment.updateTxnIndex``), with lastStableOffset = marker offset + 1 when no other transaction is open.
* Producer snapshots ``<offset>.snapshot`` are taken at each roll at the new segment's base offset
  (``UnifiedLog.roll`` -> ``producerStateManager.takeSnapshot``) and at clean shutdown at the log end.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from kafka_ops.engine.indexes import (
    OFFSET_ENTRY,
    TIME_ENTRY,
    AbortedTxn,
    encode_offset_entry,
    encode_time_entry,
    encode_txn_entry,
    preallocated_size,
)
from kafka_ops.engine.layout import segment_file_name
from kafka_ops.engine.snapshot import ProducerEntry, encode_snapshot


@dataclass
class SegmentConfig:
    segment_bytes: int = 1024 * 1024
    segment_ms: int = 7 * 24 * 3600 * 1000
    index_interval_bytes: int = 4096
    max_index_bytes: int = 10 * 1024 * 1024


@dataclass
class _Seg:
    base: int
    log_size: int = 0
    last_append_ms: int | None = None
    index: bytearray = field(default_factory=bytearray)
    timeindex: bytearray = field(default_factory=bytearray)
    txn: bytearray = field(default_factory=bytearray)
    bytes_since_entry: int = 0
    max_ts: int = -1
    max_ts_offset: int = -1
    rolling_ts: int | None = None
    last_time_entry_ts: int = -1


class PartitionWriter:
    def __init__(self, path: str, cfg: SegmentConfig, base_offset: int = 0) -> None:
        self.path = path
        self.cfg = cfg
        os.makedirs(path, exist_ok=True)
        self.segments: list[_Seg] = [_Seg(base_offset)]
        self._log = open(os.path.join(path, segment_file_name(base_offset, ".log")), "wb")
        self.next_offset = base_offset
        self.producers: dict[int, ProducerEntry] = {}
        self.snapshots: dict[int, bytes] = {}
        self.flushed: set[int] = set()

    @property
    def active(self) -> _Seg:
        return self.segments[-1]

    def _max_offset_entries(self) -> int:
        return preallocated_size(OFFSET_ENTRY, self.cfg.max_index_bytes) // OFFSET_ENTRY

    def _max_time_entries(self) -> int:
        return preallocated_size(TIME_ENTRY, self.cfg.max_index_bytes) // TIME_ENTRY

    def _should_roll(self, size: int, max_ts: int) -> bool:
        seg = self.active
        if not seg.log_size:
            return False
        if seg.log_size > self.cfg.segment_bytes - size:
            return True
        if seg.rolling_ts is not None and max_ts - seg.rolling_ts > self.cfg.segment_ms:
            return True
        return (
            len(seg.index) // OFFSET_ENTRY >= self._max_offset_entries()
            or len(seg.timeindex) // TIME_ENTRY >= self._max_time_entries() - 1
        )

    def _final_time_entry(self, seg: _Seg) -> None:
        # timeIndex.maybeAppend(maxTimestampSoFar, shallowOffsetOfMaxTimestampSoFar, skipFullCheck=true)
        if seg.max_ts > seg.last_time_entry_ts and seg.max_ts >= 0:
            seg.timeindex += encode_time_entry(seg.base, seg.max_ts, seg.max_ts_offset)
            seg.last_time_entry_ts = seg.max_ts

    def roll(self) -> None:
        seg = self.active
        self._final_time_entry(seg)
        self._finish(seg, preallocate=False)
        self.segments.append(_Seg(self.next_offset))
        self._log = open(os.path.join(self.path, segment_file_name(self.next_offset, ".log")), "wb")
        self.snapshots[self.next_offset] = self._snapshot()

    def append(
        self,
        batch: bytes,
        base_offset: int,
        last_offset: int,
        max_ts: int,
        producer: tuple[int, int, int, int] | None = None,
        aborted: AbortedTxn | None = None,
    ) -> int:
        """Append one encoded batch; returns its position. ``producer`` = (pid, epoch, last seq, txn first)."""
        if base_offset != self.next_offset:
            raise ValueError(f"batch base offset {base_offset} != log end offset {self.next_offset}")
        if self._should_roll(len(batch), max_ts):
            self.roll()
        seg = self.active
        pos = seg.log_size
        if pos == 0:
            seg.rolling_ts = max_ts
        self._log.write(batch)
        seg.log_size += len(batch)
        seg.last_append_ms = max(seg.last_append_ms or 0, max_ts)
        if max_ts > seg.max_ts:
            seg.max_ts = max_ts
            seg.max_ts_offset = last_offset
        if seg.bytes_since_entry > self.cfg.index_interval_bytes:
            seg.index += encode_offset_entry(seg.base, last_offset, pos)
            if seg.max_ts > seg.last_time_entry_ts:
                seg.timeindex += encode_time_entry(seg.base, seg.max_ts, seg.max_ts_offset)
                seg.last_time_entry_ts = seg.max_ts
            seg.bytes_since_entry = 0
        seg.bytes_since_entry += len(batch)
        if aborted is not None:
            seg.txn += encode_txn_entry(aborted)
        if producer is not None:
            pid, epoch, last_seq, txn_first = producer
            self.producers[pid] = ProducerEntry(
                pid, epoch, last_seq, last_offset, last_offset - base_offset, max_ts, 0, txn_first
            )
        self.next_offset = last_offset + 1
        return pos

    def _snapshot(self) -> bytes:
        return encode_snapshot(sorted(self.producers.values(), key=lambda e: e.producer_id))

    def _finish(self, seg: _Seg, preallocate: bool) -> None:
        """Close the segment's log and write its indexes: trimmed, or preallocated (active, not cleanly closed)."""
        self._log.close()
        for suffix, data, entry in (
            (".index", seg.index, OFFSET_ENTRY),
            (".timeindex", seg.timeindex, TIME_ENTRY),
        ):
            path = os.path.join(self.path, segment_file_name(seg.base, suffix))
            with open(path, "wb") as f:
                f.write(data)
                if preallocate:
                    # sparse preallocation: RandomAccessFile.setLength(roundDown(maxIndexSize, entrySize))
                    f.truncate(preallocated_size(entry, self.cfg.max_index_bytes))
        if seg.txn:
            self._write_file(segment_file_name(seg.base, ".txnindex"), bytes(seg.txn))
        if seg.last_append_ms is not None and seg.last_append_ms > 0:
            # a segment's files were last modified at its last append
            for suffix in (".log", ".index", ".timeindex", ".txnindex"):
                p = os.path.join(self.path, segment_file_name(seg.base, suffix))
                if os.path.exists(p):
                    ns = seg.last_append_ms * 1_000_000
                    os.utime(p, ns=(ns, ns))

    def close(self, clean_shutdown: bool) -> None:
        """Stop the partition: a clean shutdown trims the active indexes; a kill leaves them preallocated."""
        seg = self.active
        if clean_shutdown:
            self._final_time_entry(seg)
            self.snapshots[self.next_offset] = self._snapshot()
        self._finish(seg, preallocate=not clean_shutdown)
        # UnifiedLog keeps snapshots for recent segments; keep the last three like deleteSnapshotsBefore does
        for off in sorted(self.snapshots)[-3:]:
            self._write_file(segment_file_name(off, ".snapshot"), self.snapshots[off])

    def _write_file(self, name: str, data: bytes) -> None:
        with open(os.path.join(self.path, name), "wb") as f:
            f.write(data)

    @property
    def segment_bases(self) -> list[int]:
        return [s.base for s in self.segments]

    def segment_max_ts(self) -> dict[int, int]:
        return {s.base: s.max_ts for s in self.segments}
