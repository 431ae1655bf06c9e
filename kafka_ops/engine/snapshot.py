"""Producer-state snapshots ``<offset>.snapshot`` (ProducerStateManager.java, message/ProducerSnapshot.json).

Layout: version int16 (1) @0, crc uint32 @2 = CRC-32C over bytes [6, end), int32 entry count, then
46-byte entries: ProducerId i64, Epoch i16, LastSequence i32, LastOffset i64, OffsetDelta i32,
Timestamp i64, CoordinatorEpoch i32, CurrentTxnFirstOffset i64. A bad CRC makes the broker throw
``CorruptSnapshotException`` and rebuild producer state from the log.
"""

from __future__ import annotations

import struct
from dataclasses import asdict

from kafka_ops.engine.compat import slotted
from kafka_ops.engine.crc import crc32c
from kafka_ops.engine.errors import FormatError
from kafka_ops.engine.fileio import read_bytes

_HEAD = struct.Struct(">hIi")
_ENTRY = struct.Struct(">qhiqiqiq")
ENTRY_SIZE = _ENTRY.size  # 46


@slotted
class ProducerEntry:
    producer_id: int
    producer_epoch: int
    last_sequence: int
    last_offset: int
    offset_delta: int
    timestamp: int
    coordinator_epoch: int
    current_txn_first_offset: int

    @property
    def first_sequence(self) -> int:
        return self.last_sequence - self.offset_delta

    def to_dict(self) -> dict[str, int]:
        return asdict(self)


@slotted
class ProducerSnapshot:
    path: str
    version: int
    crc: int
    crc_valid: bool
    entries: list[ProducerEntry]


def read_snapshot(path: str, entries: bool = True) -> ProducerSnapshot:
    """The snapshot's header, CRC check and entries; FormatError for what the broker's readSnapshot cannot parse
    (shorter than the header, an unknown version, more entries claimed than held). ``entries=False``: the same
    checks without decoding the entries (``entries`` left empty), for a caller that only asks whether the broker
    can read it (the audit, once per partition: a busy topic's snapshot holds an entry per producer)."""
    data = read_bytes(path)
    if len(data) < _HEAD.size:
        raise FormatError(path, f"producer snapshot is {len(data)} bytes, shorter than its 10-byte header", 0)
    version, crc, count = _HEAD.unpack_from(data, 0)
    if version != 1:
        raise FormatError(path, f"unknown producer snapshot version {version}", 0)
    crc_valid = crc32c(memoryview(data)[6:]) == crc
    if count < 0 or _HEAD.size + count * ENTRY_SIZE > len(data):
        raise FormatError(
            path, f"snapshot claims {count} entries but holds {(len(data) - _HEAD.size) // ENTRY_SIZE}", 6
        )
    if not entries:
        return ProducerSnapshot(path, version, crc, crc_valid, [])
    decoded = [ProducerEntry(*_ENTRY.unpack_from(data, _HEAD.size + i * ENTRY_SIZE)) for i in range(count)]
    return ProducerSnapshot(path, version, crc, crc_valid, decoded)


def encode_snapshot(entries: list[ProducerEntry]) -> bytes:
    body = struct.pack(">i", len(entries)) + b"".join(
        _ENTRY.pack(
            e.producer_id,
            e.producer_epoch,
            e.last_sequence,
            e.last_offset,
            e.offset_delta,
            e.timestamp,
            e.coordinator_epoch,
            e.current_txn_first_offset,
        )
        for e in entries
    )
    return struct.pack(">hI", 1, crc32c(body)) + body
