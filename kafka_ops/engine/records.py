"""Record batches as they lie in a ``.log`` segment: magic v0/v1 message sets and v2 record batches.

The scan follows Kafka's own iteration and recovery rules exactly, so that what we call a torn or
corrupt tail is what the broker will truncate:

* ``FileLogInputStream.nextBatch()`` (clients/.../record/FileLogInputStream.java): stop when at most
  ``HEADER_SIZE_UP_TO_MAGIC`` (17) bytes remain; a size field below ``RECORD_OVERHEAD_V0`` (14) is a
  ``CorruptRecordException``; a batch that runs past the end of the file ends the iteration (a torn tail).
* ``LogSegment.recover()`` (storage/.../log/LogSegment.java): every batch is ``ensureValid()``-ed
  (size >= 61 and CRC-32C for v2, CRC-32 for v0/v1); at the first invalid batch the segment is truncated
  to the bytes validated so far (``log.truncateTo(validBytes)``).

v2 layout: DefaultRecordBatch.java (61-byte header, CRC-32C over bytes [21, end)); records: DefaultRecord.java.
v0/v1 layout: LegacyRecord.java (CRC-32 over magic..end); every shallow message is a batch
(AbstractLegacyRecordBatch), a compressed one wraps an inner message set.
"""

from __future__ import annotations

import mmap
import os
import stat
import struct
from collections.abc import Iterator
from dataclasses import field

from kafka_ops.engine import compression
from kafka_ops.engine.binary import Truncated, read_varint, read_varlong
from kafka_ops.engine.compat import slotted
from kafka_ops.engine.crc import crc32, crc32c
from kafka_ops.engine.errors import EngineError, os_error
from kafka_ops.engine.fileio import READ_FLAGS, not_regular, open_error

LOG_OVERHEAD = 12  # offset int64 + size int32 (Records.LOG_OVERHEAD)
HEADER_SIZE_UP_TO_MAGIC = 17  # Records.HEADER_SIZE_UP_TO_MAGIC
RECORD_OVERHEAD_V0 = (
    14  # LegacyRecord.RECORD_OVERHEAD_V0: crc 4 + magic 1 + attrs 1 + key len 4 + value len 4
)
# a size field below it: FileLogInputStream.nextBatch throws CorruptRecordException (SHUT002, the next start)
BELOW_MIN_OVERHEAD = "smaller than the minimum record overhead"
RECORD_OVERHEAD_V1 = 22  # + timestamp 8
RECORD_BATCH_OVERHEAD = 61  # DefaultRecordBatch.RECORD_BATCH_OVERHEAD

NO_TIMESTAMP = -1
NO_PRODUCER_ID = -1

# DefaultRecordBatch attribute bits
COMPRESSION_MASK = 0x07
TIMESTAMP_TYPE_MASK = 0x08
TRANSACTIONAL_FLAG = 0x10
CONTROL_FLAG = 0x20
DELETE_HORIZON_FLAG = 0x40

# ControlRecordType.java
CONTROL_TYPES = {
    0: "ABORT",
    1: "COMMIT",
    2: "LEADER_CHANGE",
    3: "SNAPSHOT_HEADER",
    4: "SNAPSHOT_FOOTER",
    5: "KRAFT_VERSION",
    6: "KRAFT_VOTERS",
}

_V2_HEADER = struct.Struct(">qiibIhiqqqhii")
# The same 61 bytes with magic and attributes unsigned (as view[pos + 16] and ``attrs & 0xFFFF`` read them):
# BatchScanner's hot path reads a whole header with this one unpack.
_V2_HEADER_U = struct.Struct(">qiiBIHiqqqhii")
_LOG_HEADER = struct.Struct(">qib")  # offset, size, (partition leader epoch skipped) ... magic at 16
_LEGACY_V0 = struct.Struct(">qiIbb")  # offset, size, crc, magic, attributes
_LEGACY_V1 = struct.Struct(">qiIbbq")  # + timestamp
_I64_I32 = struct.Struct(">qi")
_I32 = struct.Struct(">i")
_I16_I16 = struct.Struct(">hh")
_I16_I32 = struct.Struct(">hi")


@slotted
class Batch:
    """One batch (v2) or one shallow message (v0/v1), with every header field."""

    position: int
    base_offset: int
    last_offset: int
    size: int  # bytes on disk, LOG_OVERHEAD included
    magic: int
    crc: int
    crc_valid: bool
    attributes: int
    partition_leader_epoch: int = -1
    base_timestamp: int = NO_TIMESTAMP
    max_timestamp: int = NO_TIMESTAMP
    producer_id: int = NO_PRODUCER_ID
    producer_epoch: int = -1
    base_sequence: int = -1
    records_count: int | None = 1
    control_type: str | None = None
    coordinator_epoch: int | None = None

    @property
    def codec(self) -> str:
        return compression.CODECS.get(self.attributes & COMPRESSION_MASK, f"unknown({self.attributes & 7})")

    @property
    def codec_id(self) -> int:
        return self.attributes & COMPRESSION_MASK

    @property
    def timestamp_type(self) -> str:
        if self.magic == 0:
            return "NoTimestampType"
        return "LogAppendTime" if self.attributes & TIMESTAMP_TYPE_MASK else "CreateTime"

    @property
    def is_transactional(self) -> bool:
        return self.magic >= 2 and bool(self.attributes & TRANSACTIONAL_FLAG)

    @property
    def is_control(self) -> bool:
        return self.magic >= 2 and bool(self.attributes & CONTROL_FLAG)

    @property
    def has_delete_horizon(self) -> bool:
        return self.magic >= 2 and bool(self.attributes & DELETE_HORIZON_FLAG)

    @property
    def delete_horizon_ms(self) -> int | None:
        # KAFKA-8522: when bit 6 is set, the base timestamp field holds the delete horizon.
        return self.base_timestamp if self.has_delete_horizon else None

    @property
    def last_sequence(self) -> int:
        if self.base_sequence < 0:
            return -1
        # DefaultRecordBatch.incrementSequence wraps at Integer.MAX_VALUE
        delta = self.last_offset - self.base_offset
        return (self.base_sequence + delta) % (2**31) if delta >= 0 else -1

    @property
    def next_offset(self) -> int:
        return self.last_offset + 1

    def to_dict(self) -> dict[str, object]:
        return {
            "position": self.position,
            "base_offset": self.base_offset,
            "last_offset": self.last_offset,
            "count": self.records_count,
            "magic": self.magic,
            "crc": self.crc,
            "crc_valid": self.crc_valid,
            "codec": self.codec,
            "timestamp_type": self.timestamp_type,
            "is_transactional": self.is_transactional,
            "is_control": self.is_control,
            "control_type": self.control_type,
            "coordinator_epoch": self.coordinator_epoch,
            "producer_id": self.producer_id,
            "producer_epoch": self.producer_epoch,
            "base_sequence": self.base_sequence,
            "last_sequence": self.last_sequence,
            "partition_leader_epoch": self.partition_leader_epoch,
            "base_timestamp": self.base_timestamp,
            "max_timestamp": self.max_timestamp,
            "delete_horizon_ms": self.delete_horizon_ms,
            "size": self.size,
        }


@slotted
class Record:
    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: list[tuple[str, bytes | None]] = field(default_factory=list)
    sequence: int = -1
    size: int = 0


@slotted
class Tail:
    """Where a scan stopped before the end of the file, and what Kafka's recovery would do with it."""

    position: int  # first byte that recovery would truncate (validBytes)
    truncated_bytes: int  # file size - position
    reason: str
    kind: str  # "torn" (partial batch / short tail), "corrupt" (bad size/CRC/format)

    def to_dict(self) -> dict[str, object]:
        return {
            "position": self.position,
            "truncated_bytes": self.truncated_bytes,
            "reason": self.reason,
            "kind": self.kind,
        }


class RecordError(Exception):
    """Records inside a batch could not be decoded."""


# Files up to this size are read into memory rather than mapped (LogBuffer.open).
READ_WHOLE_BYTES = 64 * 1024
FIRST_READ_BYTES = 4096  # LogBuffer.open_first_batch's first read: most first batches fit
# O_NONBLOCK: opening a FIFO named like a log must not block (regular files ignore the flag when reading)
# O_NOFOLLOW: a segment the broker user made a symlink to another file is refused, never read (fileio.py)
_OPEN_FLAGS = READ_FLAGS


def _read_fd(fd: int, size: int) -> bytes:
    """Up to ``size`` bytes from the start of ``fd`` (fewer if the file shrank meanwhile)."""
    data = os.pread(fd, size, 0)
    if len(data) < size:  # a short read: keep reading until the end of the file or ``size``
        parts = [data]
        got = len(data)
        while got < size:
            chunk = os.pread(fd, size - got, got)
            if not chunk:
                break
            parts.append(chunk)
            got += len(chunk)
        data = b"".join(parts)
    return data


class LogBuffer:
    """A read-only view of a ``.log`` (or KRaft ``.checkpoint``) file, or of bytes already in memory.

    Files are mapped with ``ACCESS_READ`` (never writable) or read whole when mapping is impossible.
    """

    def __init__(self, data: bytes | bytearray | memoryview | mmap.mmap, path: str = "<bytes>") -> None:
        self.path = path
        self._data = data
        self.view = memoryview(data)
        self.size = len(self.view)

    @classmethod
    def open(cls, path: str | os.PathLike[str]) -> LogBuffer:
        p = os.fspath(path)
        # A raw fd, not a file object: the audit opens up to three small .log files per partition, and the
        # buffered wrapper, its second fstat and the blocking-mode switch cost more than reading them.
        try:
            fd = os.open(p, _OPEN_FLAGS)
        except OSError as exc:
            raise open_error(p, exc) from exc
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):  # a FIFO or device named like a log: never block on it
                raise not_regular(p, st.st_mode)
            size = st.st_size
            if size == 0:
                return cls(b"", p)
            if size <= READ_WHOLE_BYTES:  # a copy is cheaper than mapping and unmapping a small file
                data: bytes | mmap.mmap = _read_fd(fd, size)
            else:
                try:
                    data = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
                except (OSError, ValueError):
                    data = _read_fd(fd, size)
        except OSError as exc:
            raise os_error(p, exc) from exc
        finally:
            os.close(fd)
        return cls(data, p)

    @classmethod
    def open_first_batch(cls, path: str | os.PathLike[str]) -> LogBuffer:
        """The file's first batch only, read with one or two ``pread`` (a 1 GiB segment is neither mapped nor
        read): a scan of it yields the file's first batch, or nothing when the file has no valid first batch.
        Only the first batch is the file's: what follows it (a scan's tail) is not."""
        p = os.fspath(path)
        try:
            fd = os.open(p, _OPEN_FLAGS)
        except OSError as exc:
            raise open_error(p, exc) from exc
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise not_regular(p, st.st_mode)
            size = st.st_size
            data = os.pread(fd, min(size, FIRST_READ_BYTES), 0) if size else b""
            if len(data) >= LOG_OVERHEAD:
                want = LOG_OVERHEAD + _I32.unpack_from(data, 8)[0]  # the first batch's end, from its size
                if LOG_OVERHEAD + RECORD_OVERHEAD_V0 <= want <= len(data):
                    data = data[:want]
                elif len(data) < want <= size:
                    data += os.pread(fd, want - len(data), len(data))
        except OSError as exc:
            raise os_error(p, exc) from exc
        finally:
            os.close(fd)
        return cls(data, p)

    def close(self) -> None:
        self.view.release()
        if isinstance(self._data, mmap.mmap):
            self._data.close()

    def __enter__(self) -> LogBuffer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class BatchScanner:
    """Iterates the batches of a log buffer from ``start``; after iteration ``tail`` says how it ended.

    ``verify_crc=False`` skips checksum computation (``crc_valid`` is then True); a batch that fails
    validation ends the scan, exactly as it ends Kafka's recovery.
    """

    def __init__(
        self,
        buf: LogBuffer,
        start: int = 0,
        end: int | None = None,
        verify_crc: bool = True,
        controls: bool = True,
        unknown_magic: bool = False,
    ):
        self.buf = buf
        # unknown_magic=True: a batch of a magic above 2 is framed and CRC-checked as a v2 batch and kept when its
        # CRC matches, as LogSegment.recover does (FileLogInputStream.nextBatch, DefaultRecordBatch.ensureValid);
        # False: the scan stops there (no client can read it)
        self.unknown_magic = unknown_magic
        self.start = start
        self.end = buf.size if end is None else min(end, buf.size)
        self.verify_crc = verify_crc
        # controls=False: a control batch's type and coordinator epoch stay unread (callers that only need
        # offsets, sizes or timestamps: decoding a record per transaction marker is most of such a scan)
        self.controls = controls
        self.tail: Tail | None = None
        self.valid_bytes = start  # position up to which every batch was valid (recovery's validBytes)

    def _stop(self, pos: int, reason: str, kind: str) -> None:
        self.tail = Tail(pos, self.buf.size - pos, reason, kind)

    def __iter__(self) -> Iterator[Batch]:
        view = self.buf.view
        end = self.end
        pos = self.start
        verify = self.verify_crc
        controls = self.controls
        unpack_v2 = _V2_HEADER_U.unpack_from
        unpack_head = _I64_I32.unpack_from
        # Batch(...) costs a type call plus a non-inlined __init__ frame on CPython 3.11; calling the
        # dataclass __init__ on object.__new__(Batch) builds the same object ~130 ns faster per batch.
        new_batch = object.__new__
        init_batch = Batch.__init__
        short = end - HEADER_SIZE_UP_TO_MAGIC  # from here on, too few bytes remain for a batch header
        whole = end - RECORD_BATCH_OVERHEAD  # up to here, a whole v2 header lies before ``end``
        while True:
            if pos >= short:
                if pos < end:
                    self._stop(pos, f"{end - pos} trailing bytes, too few for a batch header", "torn")
                break
            # One unpack of the whole v2 header when it fits (its fields are only used when magic >= 2, and
            # then it always fits: batch_end <= end and size >= 61); otherwise offset, size and magic only.
            if pos <= whole:
                (
                    offset, length, ple, magic, crc, attrs, last_delta, base_ts, max_ts, pid, pepoch, base_seq,
                    count,
                ) = unpack_v2(view, pos)  # fmt: skip
            else:
                offset, length = unpack_head(view, pos)
                magic = view[pos + 16]
            if length < RECORD_OVERHEAD_V0:
                self._stop(
                    pos,
                    f"record size {length} is {BELOW_MIN_OVERHEAD} ({RECORD_OVERHEAD_V0})",
                    "corrupt",
                )
                break
            batch_end = pos + LOG_OVERHEAD + length
            if batch_end > end:
                self._stop(
                    pos,
                    f"batch at offset {offset} needs {LOG_OVERHEAD + length} bytes, {end - pos} remain (torn write)",
                    "torn",
                )
                break
            if magic >= 2:
                if length + LOG_OVERHEAD < RECORD_BATCH_OVERHEAD:
                    self._stop(
                        pos,
                        f"record batch size {length + LOG_OVERHEAD} is smaller than the minimum "
                        f"allowed overhead {RECORD_BATCH_OVERHEAD}",
                        "corrupt",
                    )
                    break
                if verify and crc32c(view[pos + 21 : batch_end]) != crc:
                    self._stop(pos, f"CRC-32C mismatch in batch at offset {offset} (stored {crc})", "corrupt")
                    yield Batch(
                        pos, offset, offset + last_delta, LOG_OVERHEAD + length, magic, crc, False,
                        attrs, ple, base_ts, max_ts, pid, pepoch, base_seq, count,
                    )  # fmt: skip
                    break
                if magic > 2 and not self.unknown_magic:
                    self._stop(pos, f"unknown magic {magic}", "corrupt")
                    break
                batch = new_batch(Batch)
                init_batch(
                    batch, pos, offset, offset + last_delta, LOG_OVERHEAD + length, magic, crc, True,
                    attrs, ple, base_ts, max_ts, pid, pepoch, base_seq, count,
                )  # fmt: skip
                if attrs & CONTROL_FLAG and controls:
                    _fill_control(view, batch, batch_end)
            else:
                legacy = self._legacy(view, pos, batch_end, offset, length, magic)
                if legacy is None:
                    break
                batch = legacy
                if not batch.crc_valid:
                    self._stop(
                        pos, f"CRC-32 mismatch in message at offset {offset} (stored {batch.crc})", "corrupt"
                    )
                    yield batch
                    break
            pos = batch_end
            self.valid_bytes = pos
            yield batch

    def _legacy(
        self, view: memoryview, pos: int, batch_end: int, offset: int, length: int, magic: int
    ) -> Batch | None:
        if magic == 1:
            if length < RECORD_OVERHEAD_V1:
                self._stop(pos, f"message size {length} is smaller than the v1 overhead", "corrupt")
                return None
            _o, _l, crc, _m, attrs, ts = _LEGACY_V1.unpack_from(view, pos)
        else:
            _o, _l, crc, _m, attrs = _LEGACY_V0.unpack_from(view, pos)
            ts = NO_TIMESTAMP
        ok = crc32(view[pos + 16 : batch_end]) == crc if self.verify_crc else True
        batch = Batch(pos, offset, offset, LOG_OVERHEAD + length, magic, crc, ok, attrs & 0xFF)
        batch.base_timestamp = ts
        batch.max_timestamp = ts
        if ok and attrs & COMPRESSION_MASK:
            try:
                inner = list(_legacy_inner(view[pos:batch_end], magic, attrs, ts))
                batch.records_count = len(inner)
                if inner:
                    batch.base_offset = inner[0].offset
            except compression.CodecUnavailable:
                batch.records_count = None
            except (RecordError, ValueError, OSError, EOFError):
                batch.records_count = None
        return batch


def _fill_control(view: memoryview, batch: Batch, batch_end: int) -> None:
    """The batch's first control record: its type (and a transaction marker's coordinator epoch).

    Control batches are never compressed by the broker; a compressed one is left undecoded.
    """
    if batch.codec_id != 0 or (batch.records_count or 0) < 1:
        return
    try:
        rec = next(_iter_v2_records(view[batch.position + RECORD_BATCH_OVERHEAD : batch_end], batch, 1))
    except (StopIteration, RecordError):
        return
    batch.control_type, batch.coordinator_epoch = control_record(rec.key, rec.value)


def control_record(key: bytes | None, value: bytes | None) -> tuple[str | None, int | None]:
    """One control record's type (from its key) and, for a transaction marker, its coordinator epoch.

    Each record of a control batch has its own type: ControlRecordType.parseTypeId(record.key), which
    DumpLogSegments prints per record (core/.../tools/DumpLogSegments.scala 3.9, dumpLog:
    ``val controlTypeId = ControlRecordType.parseTypeId(record.key)``). A KRaft snapshot's first batch holds
    SNAPSHOT_HEADER, KRAFT_VERSION and KRAFT_VOTERS records together. Key: version int16 + type int16; a
    marker's value: version int16 + coordinator epoch int32 (EndTransactionMarker.deserialize).
    """
    if key is None or len(key) < 4:
        return None, None
    ctype = _I16_I16.unpack_from(key, 0)[1]
    epoch = None
    if ctype in (0, 1) and value is not None and len(value) >= 6:
        epoch = _I16_I32.unpack_from(value, 0)[1]
    return CONTROL_TYPES.get(ctype, f"UNKNOWN({ctype})"), epoch


def iter_records(buf: LogBuffer, batch: Batch) -> Iterator[Record]:
    """Decode the records of one batch (decompressing when needed).

    Raises ``RecordError`` on malformed records and ``compression.CodecUnavailable`` when the codec's
    optional library is missing.
    """
    view = buf.view[batch.position : batch.position + batch.size]
    if batch.magic >= 2:
        # DefaultRecordBatch.iterator(): count 0 -> no records (the body is not even decompressed);
        # RecordIterator(): a negative count is an InvalidRecordException.
        count = batch.records_count or 0
        if count == 0:
            return
        if count < 0:
            raise RecordError(f"Found invalid record count {count} in magic v{batch.magic} batch")
        body: bytes | memoryview = view[RECORD_BATCH_OVERHEAD:]
        if batch.codec_id:
            try:
                body = compression.decompress(batch.codec_id, body)
            except compression.CodecUnavailable:
                raise
            except Exception as exc:  # codec libraries raise their own types
                raise RecordError(f"cannot decompress {batch.codec} batch: {exc}") from exc
        yield from _iter_v2_records(body, batch, count, exact=True)
    else:
        if batch.codec_id:
            yield from _legacy_inner(view, batch.magic, batch.attributes, batch.max_timestamp)
        else:
            yield _legacy_record(view, 0)[0]


def _iter_v2_records(
    body: bytes | memoryview, batch: Batch, count: int, exact: bool = False
) -> Iterator[Record]:
    """``exact``: bytes left after the declared count are an error, as in RecordIterator.next()
    (DefaultRecordBatch.java: "Incorrect declared batch size, records still remaining in file").

    A varint of one or two bytes (-8192..8191: sizes, deltas, header counts) is decoded inline, a longer one
    by read_varint / read_varlong: the call per field was most of the time of ``dump --records``. Reading past the end is an
    IndexError here and a Truncated there, the same error for the caller."""
    if not isinstance(body, bytes):
        body = bytes(body)  # one copy of the batch; slices of bytes are cheaper than memoryview -> bytes
    pos = 0
    log_append = bool(batch.attributes & TIMESTAMP_TYPE_MASK)
    base_offset = batch.base_offset
    base_sequence = batch.base_sequence
    first_ts = batch.base_timestamp
    n = len(body)
    try:
        for i in range(count):
            start = pos
            b = body[pos]
            if b < 0x80:
                length = (b >> 1) ^ -(b & 1)
                pos += 1
            elif body[pos + 1] < 0x80:  # two bytes: -8192..8191
                u = (b & 0x7F) | (body[pos + 1] << 7)
                length = (u >> 1) ^ -(u & 1)
                pos += 2
            else:
                length, pos = read_varint(body, pos)
            rec_end = pos + length
            if length < 0 or rec_end > n:
                raise RecordError(f"record at byte {start} of the batch runs past its end")
            pos += 1  # attributes (unused)
            b = body[pos]
            if b < 0x80:
                ts_delta = (b >> 1) ^ -(b & 1)
                pos += 1
            elif body[pos + 1] < 0x80:  # two bytes: -8192..8191
                u = (b & 0x7F) | (body[pos + 1] << 7)
                ts_delta = (u >> 1) ^ -(u & 1)
                pos += 2
            else:
                ts_delta, pos = read_varlong(body, pos)
            b = body[pos]
            if b < 0x80:
                off_delta = (b >> 1) ^ -(b & 1)
                pos += 1
            elif body[pos + 1] < 0x80:  # two bytes: -8192..8191
                u = (b & 0x7F) | (body[pos + 1] << 7)
                off_delta = (u >> 1) ^ -(u & 1)
                pos += 2
            else:
                off_delta, pos = read_varint(body, pos)
            b = body[pos]
            if b < 0x80:
                klen = (b >> 1) ^ -(b & 1)
                pos += 1
            elif body[pos + 1] < 0x80:  # two bytes: -8192..8191
                u = (b & 0x7F) | (body[pos + 1] << 7)
                klen = (u >> 1) ^ -(u & 1)
                pos += 2
            else:
                klen, pos = read_varint(body, pos)
            key = None
            if klen >= 0:
                key = body[pos : pos + klen]
                pos += klen
            b = body[pos]
            if b < 0x80:
                vlen = (b >> 1) ^ -(b & 1)
                pos += 1
            elif body[pos + 1] < 0x80:  # two bytes: -8192..8191
                u = (b & 0x7F) | (body[pos + 1] << 7)
                vlen = (u >> 1) ^ -(u & 1)
                pos += 2
            else:
                vlen, pos = read_varint(body, pos)
            value = None
            if vlen >= 0:
                value = body[pos : pos + vlen]
                pos += vlen
            b = body[pos]
            if b < 0x80:
                hcount = (b >> 1) ^ -(b & 1)
                pos += 1
            elif body[pos + 1] < 0x80:  # two bytes: -8192..8191
                u = (b & 0x7F) | (body[pos + 1] << 7)
                hcount = (u >> 1) ^ -(u & 1)
                pos += 2
            else:
                hcount, pos = read_varint(body, pos)
            if hcount < 0:
                raise RecordError(f"invalid negative header count {hcount}")
            headers = []
            for _h in range(hcount):
                hk, pos = read_varint(body, pos)
                if hk < 0:
                    raise RecordError("invalid negative header key size")
                hkey = body[pos : pos + hk].decode("utf-8", "replace")
                pos += hk
                hv, pos = read_varint(body, pos)
                hval = None
                if hv >= 0:
                    hval = body[pos : pos + hv]
                    pos += hv
                headers.append((hkey, hval))
            if pos != rec_end:
                raise RecordError(
                    f"record at byte {start} of the batch: size {length} does not match its fields"
                )
            seq = -1
            if base_sequence >= 0:
                seq = (base_sequence + off_delta) % (2**31)
            if exact and i == count - 1 and rec_end != n:
                raise RecordError(
                    f"Incorrect declared batch size, {n - rec_end} bytes remain after {count} records"
                )
            yield Record(
                base_offset + off_delta,
                batch.max_timestamp if log_append else first_ts + ts_delta,
                key,
                value,
                headers,
                seq,
                rec_end - start,
            )
            pos = rec_end
    except IndexError as exc:
        raise RecordError("truncated or malformed record: truncated") from exc
    except (Truncated, ValueError) as exc:
        raise RecordError(f"truncated or malformed record: {exc or 'truncated'}") from exc


def _legacy_record(view: bytes | memoryview, pos: int) -> tuple[Record, int]:
    """Parse one legacy message (offset, size, crc, magic, attrs, [ts], key, value) at ``pos``."""
    try:
        offset, size = _I64_I32.unpack_from(view, pos)
        magic = view[pos + 16]
        p = pos + 18
        ts = NO_TIMESTAMP
        if magic == 1:
            ts = struct.unpack_from(">q", view, p)[0]
            p += 8
        (klen,) = _I32.unpack_from(view, p)
        p += 4
        key = None
        if klen >= 0:
            key = bytes(view[p : p + klen])
            p += klen
        (vlen,) = _I32.unpack_from(view, p)
        p += 4
        value = None
        if vlen >= 0:
            value = bytes(view[p : p + vlen])
            p += vlen
    except (struct.error, IndexError) as exc:  # IndexError: the magic byte itself lies past the end
        raise RecordError("truncated legacy message") from exc
    end = pos + LOG_OVERHEAD + size
    if p > end or end > len(view):
        raise RecordError("legacy message fields run past its size")
    return Record(offset, ts, key, value, [], -1, LOG_OVERHEAD + size), end


def _legacy_inner(view: bytes | memoryview, magic: int, attrs: int, wrapper_ts: int) -> Iterator[Record]:
    """Inner messages of a compressed legacy wrapper (AbstractLegacyRecordBatch.DeepRecordsIterator).

    Kafka's rules: zstd is invalid in a legacy wrapper, a null wrapper value and a wrapper without inner
    messages are InvalidRecordExceptions, an inner message cut short at the end of the decompressed stream
    ends the iteration silently (DataLogInputStream.nextBatch returns null), and a v1 wrapper offset of 0
    (librdkafka) means the inner offsets are used as they are.
    """
    codec = attrs & COMPRESSION_MASK
    if codec == compression.CODEC_IDS["zstd"]:
        raise RecordError(f"invalid compression type zstd in a magic v{magic} wrapper message")
    wrapper, _ = _legacy_record(view, 0)
    if wrapper.value is None:
        raise RecordError(f"Found invalid compressed record set with null value (magic = {magic})")
    try:
        inner = compression.decompress(codec, wrapper.value, magic)
    except compression.CodecUnavailable:
        raise
    except Exception as exc:
        raise RecordError(f"cannot decompress legacy wrapper: {exc}") from exc
    records = []
    pos = 0
    while pos + LOG_OVERHEAD <= len(inner):
        (size,) = _I32.unpack_from(inner, pos + 8)
        if size < RECORD_OVERHEAD_V0:
            raise RecordError(
                f"Record size {size} is less than the minimum record overhead ({RECORD_OVERHEAD_V0})"
            )
        if pos + LOG_OVERHEAD + size > len(inner):
            break
        rec, pos = _legacy_record(inner, pos)
        records.append(rec)
    if not records:
        raise RecordError("Found invalid compressed record set with no inner records")
    if magic >= 1:
        # v1 inner offsets are relative: absoluteBase = wrapperOffset - lastInnerRelativeOffset
        last_inner = records[-1].offset
        if wrapper.offset == 0:
            base = 0
        elif wrapper.offset < last_inner:
            raise RecordError(
                f"Found invalid wrapper offset in compressed v1 message set, wrapper offset "
                f"'{wrapper.offset}' is less than the last inner message offset '{last_inner}' and it is not zero."
            )
        else:
            base = wrapper.offset - last_inner
        for r in records:
            r.offset += base
            if attrs & TIMESTAMP_TYPE_MASK:
                r.timestamp = wrapper_ts
    yield from records


def scan_file(path: str | os.PathLike[str], verify_crc: bool = True) -> tuple[list[Batch], Tail | None, int]:
    """Read every batch of a file. Returns (batches, tail, file size)."""
    with LogBuffer.open(path) as buf:
        scanner = BatchScanner(buf, verify_crc=verify_crc)
        batches = list(scanner)
        return batches, scanner.tail, buf.size


def batch_at(buf: LogBuffer, position: int) -> Batch | None:
    """The batch starting exactly at ``position`` if one is valid there (used to verify index entries)."""
    if position < 0 or position + HEADER_SIZE_UP_TO_MAGIC >= buf.size:
        return None
    scanner = BatchScanner(buf, start=position, verify_crc=False)
    for batch in scanner:
        return batch
    return None


__all__ = [
    "CONTROL_TYPES",
    "Batch",
    "BatchScanner",
    "EngineError",
    "LogBuffer",
    "Record",
    "RecordError",
    "Tail",
    "batch_at",
    "control_record",
    "iter_records",
    "scan_file",
]
