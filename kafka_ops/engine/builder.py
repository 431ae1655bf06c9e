"""Writes v2 record batches byte for byte as a Kafka producer/broker does (DefaultRecordBatch.writeHeader,
DefaultRecord.writeTo); used by the simulator and the tests. Reading never uses this module."""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import field

from kafka_ops.engine import compression
from kafka_ops.engine.binary import write_varint
from kafka_ops.engine.compat import slotted
from kafka_ops.engine.crc import crc32c
from kafka_ops.engine.records import (
    CONTROL_FLAG,
    DELETE_HORIZON_FLAG,
    TIMESTAMP_TYPE_MASK,
    TRANSACTIONAL_FLAG,
)

_HEADER_AFTER_CRC = struct.Struct(">hiqqqhii")  # attributes .. records count (bytes 21..61)


@slotted
class NewRecord:
    key: bytes | None
    value: bytes | None
    timestamp: int
    headers: Sequence[tuple[str, bytes | None]] = field(default_factory=tuple)


def _encode_record(offset_delta: int, ts_delta: int, rec: NewRecord) -> bytes:
    body = bytearray(b"\x00")  # attributes
    body += write_varint(ts_delta)
    body += write_varint(offset_delta)
    if rec.key is None:
        body += write_varint(-1)
    else:
        body += write_varint(len(rec.key)) + rec.key
    if rec.value is None:
        body += write_varint(-1)
    else:
        body += write_varint(len(rec.value)) + rec.value
    body += write_varint(len(rec.headers))
    for hk, hv in rec.headers:
        kb = hk.encode()
        body += write_varint(len(kb)) + kb
        body += write_varint(-1) if hv is None else write_varint(len(hv)) + hv
    return write_varint(len(body)) + bytes(body)


def build_batch(
    base_offset: int,
    records: Sequence[NewRecord],
    *,
    codec: int = 0,
    log_append_time: int | None = None,
    producer_id: int = -1,
    producer_epoch: int = -1,
    base_sequence: int = -1,
    transactional: bool = False,
    control: bool = False,
    partition_leader_epoch: int = 0,
    delete_horizon_ms: int | None = None,
    offset_deltas: Sequence[int] | None = None,
) -> bytes:
    """One v2 batch. ``log_append_time`` set makes a LogAppendTime batch stamped with that time."""
    if not records:
        raise ValueError("a batch needs at least one record")
    first_ts = min(r.timestamp for r in records)
    max_ts = max(r.timestamp for r in records)
    deltas = list(offset_deltas) if offset_deltas is not None else list(range(len(records)))
    if len(deltas) != len(records):
        raise ValueError(f"{len(deltas)} offset deltas for {len(records)} records")
    body = b"".join(_encode_record(d, r.timestamp - first_ts, r) for d, r in zip(deltas, records))
    attrs = codec & 0x07
    if log_append_time is not None:
        attrs |= TIMESTAMP_TYPE_MASK
        max_ts = log_append_time
    if transactional:
        attrs |= TRANSACTIONAL_FLAG
    if control:
        attrs |= CONTROL_FLAG
    base_ts = first_ts
    if delete_horizon_ms is not None:
        attrs |= DELETE_HORIZON_FLAG
        base_ts = delete_horizon_ms
    if codec:
        body = compression.compress(codec, body)
    after_crc = (
        _HEADER_AFTER_CRC.pack(
            attrs, deltas[-1], base_ts, max_ts, producer_id, producer_epoch, base_sequence, len(records)
        )
        + body
    )
    crc = crc32c(after_crc)
    length = 4 + 1 + 4 + len(after_crc)  # partition leader epoch + magic + crc + rest
    return struct.pack(">qiibI", base_offset, length, partition_leader_epoch, 2, crc) + after_crc


def control_batch(
    offset: int,
    commit: bool,
    producer_id: int,
    producer_epoch: int,
    timestamp: int,
    coordinator_epoch: int = 0,
    partition_leader_epoch: int = 0,
) -> bytes:
    """A transaction marker (EndTransactionMarker.java): key = version 0 + type; value = version 0 + epoch."""
    key = struct.pack(">hh", 0, 1 if commit else 0)
    value = struct.pack(">hi", 0, coordinator_epoch)
    return build_batch(
        offset,
        [NewRecord(key, value, timestamp)],
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        transactional=True,
        control=True,
        partition_leader_epoch=partition_leader_epoch,
    )
