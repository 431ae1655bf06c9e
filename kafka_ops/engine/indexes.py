"""Offset, time and transaction indexes, counted the way the broker counts them.

* Layouts (big-endian): ``.index`` 8-byte entries (relative offset int32, position int32; OffsetIndex.java),
  ``.timeindex`` 12-byte entries (timestamp int64, relative offset int32; TimeIndex.java), ``.txnindex``
  34-byte entries (version int16, producerId, firstOffset, lastOffset, lastStableOffset int64; AbstractIndex
  is not used for it: AbortedTxn.java, TransactionIndex.java).
* Entry count: ``AbstractIndex`` maps an existing file and sets ``entries = roundDownToExactMultiple(length,
  entrySize) / entrySize``: every slot counts, zero padding included (AbstractIndex.createAndAssignMmap).
* ``lastEntry``: empty offset index -> (baseOffset, 0); empty time index -> (NO_TIMESTAMP=-1, baseOffset);
  otherwise the last slot, so a zero-padded file reads as (base, 0) / (0, base) (OffsetIndex.lastEntry,
  TimeIndex.lastEntry).
* Sanity checks (OffsetIndex.sanityCheck / TimeIndex.sanityCheck) and their history: see
  ../shared/reference/kafka-internals.md section 1.7; implemented in :func:`offset_sanity` / :func:`time_sanity`.

Reads use plain ``read``: never ``mmap`` for writing, never ``RandomAccessFile``-style resize.
"""

from __future__ import annotations

import os
import stat as statmod
import struct
from dataclasses import field

from kafka_ops.engine import versions
from kafka_ops.engine.compat import slotted
from kafka_ops.engine.errors import EngineError, os_error
from kafka_ops.engine.fileio import READ_FLAGS, not_regular, open_error, read_bytes
from kafka_ops.engine.pickling import by_constructor

OFFSET_ENTRY = 8
TIME_ENTRY = 12
TXN_ENTRY = 34
DEFAULT_MAX_INDEX_SIZE = 10 * 1024 * 1024  # segment.index.bytes / log.index.size.max.bytes
NO_TIMESTAMP = -1

_TAIL_FLAGS = READ_FLAGS  # read_index_tail's
_OFF = struct.Struct(">ii")
_TIME = struct.Struct(">qi")
_TXN = struct.Struct(">hqqqq")


def preallocated_size(entry_size: int, max_index_size: int = DEFAULT_MAX_INDEX_SIZE) -> int:
    """Size of a newly created index: ``roundDownToExactMultiple(maxIndexSize, entrySize)``."""
    return max_index_size - max_index_size % entry_size


@slotted
class IndexFile:
    """An offset or time index: raw entries plus what the broker derives from them."""

    path: str
    kind: str  # "offset" | "time"
    base_offset: int
    length: int
    entry_size: int
    entries: list[tuple[int, int]]  # offset index: (absolute offset, position); time: (timestamp, abs offset)
    remainder: int = 0  # length % entry_size: bytes Kafka ignores (and the sanity check rejects)
    zero_tail: int = 0  # trailing all-zero slots (after the first slot): untrimmed preallocation
    problems: list[str] = field(default_factory=list)

    @property
    def entry_count(self) -> int:
        """What Kafka's ``entries()`` returns: every whole slot, zero padding included."""
        return self.length // self.entry_size

    @property
    def real_entries(self) -> list[tuple[int, int]]:
        """Entries before the zero padding (what was really written)."""
        n = len(self.entries) - self.zero_tail
        return self.entries[:n]

    @property
    def last_entry(self) -> tuple[int, int]:
        """Kafka's ``lastEntry()``: read from the last slot, padding or not."""
        if not self.entries:
            return (self.base_offset, 0) if self.kind == "offset" else (NO_TIMESTAMP, self.base_offset)
        return self.entries[-1]

    @property
    def last_offset(self) -> int:
        le = self.last_entry
        return le[0] if self.kind == "offset" else le[1]

    def is_preallocated(self, max_index_size: int = DEFAULT_MAX_INDEX_SIZE) -> bool:
        return self.length == preallocated_size(self.entry_size, max_index_size)


def _read(path: str, max_bytes: int | None = None) -> bytes:
    return read_bytes(path, max_bytes)


def base_offset_of(path: str) -> int:
    """``LogFileUtils.offsetFromFileName``: the digits before the first '.' of the file name."""
    name = os.path.basename(path)
    try:
        return int(name[: name.index(".")])
    except ValueError as exc:
        raise EngineError(path, "file name does not start with a base offset") from exc


def _count_zero_tail(data: bytes, entry_size: int, n: int) -> int:
    """Number of trailing all-zero slots, never counting slot 0 (a real first entry may be all zero)."""
    if n <= 1:
        return 0
    zero = bytes(entry_size)
    # Fast path for fully preallocated files: compare big chunks first.
    i = n
    chunk = 4096
    if i - chunk > 1:
        zero_chunk = zero * chunk  # built once, not at every step
        while i - chunk > 1 and data[(i - chunk) * entry_size : i * entry_size] == zero_chunk:
            i -= chunk
    while i > 1 and data[(i - 1) * entry_size : i * entry_size] == zero:
        i -= 1
    return n - i


def _read_index(path: str, kind: str, base_offset: int | None) -> IndexFile:
    """Only the slots before the zero padding are decoded; every padding slot reads as Kafka reads it,
    (base, 0) for an offset index and (0, base) for a time index, without decoding 10 MiB of zeros."""
    es, st = (OFFSET_ENTRY, _OFF) if kind == "offset" else (TIME_ENTRY, _TIME)
    data = _read(path)
    base = base_offset_of(path) if base_offset is None else base_offset
    n = len(data) // es
    zero_tail = _count_zero_tail(data, es, n)
    raw = st.iter_unpack(data[: (n - zero_tail) * es])
    if kind == "offset":
        entries = [(base + rel, pos) for rel, pos in raw] + [(base, 0)] * zero_tail
    else:
        entries = [(ts, base + rel) for ts, rel in raw] + [(0, base)] * zero_tail
    idx = IndexFile(path, kind, base, len(data), es, entries, len(data) % es)
    idx.zero_tail = zero_tail
    return idx


def read_offset_index(path: str, base_offset: int | None = None) -> IndexFile:
    return _read_index(path, "offset", base_offset)


def read_time_index(path: str, base_offset: int | None = None) -> IndexFile:
    return _read_index(path, "time", base_offset)


@by_constructor  # sent by the audit's workers (facts.pool)
@slotted
class IndexTail:
    """The cheap view of an index the audit needs: size and last slot (what ``lastEntry`` returns)."""

    path: str
    kind: str
    length: int
    entry_size: int
    first: tuple[int, int] | None
    last: tuple[int, int] | None  # raw last slot (relative values decoded to absolute)
    # length // entry_size, computed once where the tail is read: the audit asks it several times per segment
    entry_count: int

    @property
    def remainder(self) -> int:
        return self.length % self.entry_size


_new, _init_tail = object.__new__, IndexTail.__init__


def read_index_tail(path: str, kind: str, base_offset: int, size: int | None = None) -> IndexTail:
    """Read only the first and last slot of an index (the audit's hot path: two small reads)."""
    es = OFFSET_ENTRY if kind == "offset" else TIME_ENTRY
    st = _OFF if kind == "offset" else _TIME
    try:
        # os.pread on a raw fd: two small reads without a buffered file object (the audit's hot path)
        fd = os.open(path, _TAIL_FLAGS)
    except OSError as exc:
        raise open_error(path, exc) from exc
    try:
        if size is None:  # callers that already stat-ed the file pass its size (the audit's hot path)
            fst = os.fstat(fd)
            if not statmod.S_ISREG(fst.st_mode):
                raise not_regular(path, fst.st_mode)
            size = fst.st_size
        length = size  # O_NONBLOCK: a FIFO named like an index reads short instead of blocking
        n = length // es
        if n == 0:
            return IndexTail(path, kind, length, es, None, None, 0)
        first_raw = os.pread(fd, es, 0)
        last_raw = os.pread(fd, es, (n - 1) * es) if n > 1 else first_raw
    except OSError as exc:
        raise os_error(path, exc) from exc
    finally:
        os.close(fd)
    if len(first_raw) < es or len(last_raw) < es:
        raise EngineError(path, "index shrank while it was read", None)
    a, b = st.unpack(first_raw)
    c, d = st.unpack(last_raw) if n > 1 else (a, b)
    # made on object.__new__ with the dataclass __init__ (no type.__call__): one or two per segment of the host
    tail = _new(IndexTail)
    if kind == "offset":
        _init_tail(tail, path, kind, length, es, (base_offset + a, b), (base_offset + c, d), n)
    else:
        _init_tail(tail, path, kind, length, es, (a, base_offset + b), (c, base_offset + d), n)
    return tail


def offset_sanity(
    idx: IndexFile | IndexTail, base_offset: int, kafka_version: tuple[int, ...] | None
) -> str | None:
    """``OffsetIndex.sanityCheck`` as the given broker version runs it (None: the current rule).

    Up to 1.1.x it requires ``lastOffset > baseOffset`` when there are entries ("no larger than" / "no greater
    than"); from 2.0.0 (KAFKA-7076: engine.versions "strict_offset_sanity") only ``lastOffset >= baseOffset``.
    """
    n = idx.entry_count
    last_off = (idx.last[0] if idx.last else base_offset) if isinstance(idx, IndexTail) else idx.last_offset
    strict = versions.since("strict_offset_sanity", kafka_version) is False
    if n != 0 and (last_off <= base_offset if strict else last_off < base_offset):
        word = "no larger than" if strict else "less than"
        return (
            f"Corrupt index found, index file {idx.path} has non-zero size but the last offset is {last_off} "
            f"which is {word} the base offset {base_offset}"
        )
    if idx.length % OFFSET_ENTRY != 0:
        return (
            f"Index file {idx.path} is corrupt, found {idx.length} bytes which is neither positive nor a "
            f"multiple of {OFFSET_ENTRY}"
        )
    return None


def time_sanity(idx: IndexFile | IndexTail, base_offset: int) -> str | None:
    """``TimeIndex.sanityCheck``: last timestamp >= first; last offset >= base; length % 12 == 0."""
    n = idx.entry_count
    if isinstance(idx, IndexTail):
        first, last = idx.first, idx.last
    else:
        first = idx.entries[0] if idx.entries else None
        last = idx.entries[-1] if idx.entries else None
    if n != 0 and first is not None and last is not None:
        if last[0] < first[0]:
            return (
                f"Corrupt time index found, time index file ({idx.path}) has non-zero size but the last "
                f"timestamp is {last[0]} which is less than the first timestamp {first[0]}"
            )
        if last[1] < base_offset:
            return (
                f"Corrupt time index found, time index file ({idx.path}) has non-zero size but the last "
                f"offset is {last[1]} which is less than the first offset {base_offset}"
            )
    if idx.length % TIME_ENTRY != 0:
        return (
            f"Time index file {idx.path} is corrupt, found {idx.length} bytes which is neither positive nor a "
            f"multiple of {TIME_ENTRY}"
        )
    return None


@slotted
class AbortedTxn:
    version: int
    producer_id: int
    first_offset: int
    last_offset: int
    last_stable_offset: int

    def to_dict(self) -> dict[str, int]:
        return {
            "version": self.version,
            "producer_id": self.producer_id,
            "first_offset": self.first_offset,
            "last_offset": self.last_offset,
            "last_stable_offset": self.last_stable_offset,
        }


@slotted
class TxnIndexFile:
    path: str
    length: int
    entries: list[AbortedTxn]
    remainder: int

    def sanity(self, base_offset: int) -> str | None:
        """``TransactionIndex.sanityCheck``: every entry's lastOffset >= segment base; version 0 only."""
        for e in self.entries:
            if e.version > 0:
                return f"Unexpected aborted transaction version {e.version} in transaction index {self.path}"
            if e.last_offset < base_offset:
                return (
                    f"Last offset of aborted transaction {e.to_dict()} in index {self.path} is less than "
                    f"start offset {base_offset}"
                )
        return None


def read_txn_index(path: str) -> TxnIndexFile:
    return parse_txn_index(_read(path), path)


def parse_txn_index(data: bytes, path: str = "<bytes>") -> TxnIndexFile:
    """A ``.txnindex`` already in memory (e.g. read by Spark's binaryFile source from HDFS or S3)."""
    n = len(data) // TXN_ENTRY
    entries = []
    for i in range(n):
        version, pid, first, last, lso = _TXN.unpack_from(data, i * TXN_ENTRY)
        # AbortedTxn.version() reads only the first byte of the int16 field
        entries.append(AbortedTxn(data[i * TXN_ENTRY], pid, first, last, lso))
        del version
    return TxnIndexFile(path, len(data), entries, len(data) % TXN_ENTRY)


def encode_offset_entry(base: int, offset: int, position: int) -> bytes:
    return _OFF.pack(offset - base, position)


def encode_time_entry(base: int, timestamp: int, offset: int) -> bytes:
    return _TIME.pack(timestamp, offset - base)


def encode_txn_entry(e: AbortedTxn) -> bytes:
    return _TXN.pack(e.version, e.producer_id, e.first_offset, e.last_offset, e.last_stable_offset)
