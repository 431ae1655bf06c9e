"""A partition's records as a consumer sees them, decoded by the engine (stdlib only: no Spark here).

Which segments make up a partition comes from the log dir layout (``kafka_ops.engine.layout``); batches and
records from ``kafka_ops.engine.records``; aborted transactions from the ``.txnindex`` files
(``kafka_ops.engine.indexes``). Nothing is parsed twice.

Aborted records follow the consumer's own algorithm (Kafka's source):

* the broker answers a fetch with the aborted transactions of the fetched range, read from the ``.txnindex`` of
  the segments: every entry with ``lastOffset >= fetchOffset`` and ``firstOffset < upperBound``
  (``TransactionIndex.collectAbortedTxns``, ``LocalLog.collectAbortedTransactions``);
* the consumer (``CompletedFetch.nextFetchedRecord`` with ``isolation.level=read_committed``), for every batch
  that has a producer id: adds to its aborted-producer set the producer of every aborted transaction whose
  ``firstOffset <= batch.lastOffset``; an ABORT control batch removes its producer from the set; a
  transactional data batch whose producer is in the set is skipped; control records are never returned;
* a read_committed fetch ends at the last stable offset (``UnifiedLog.read`` with ``FetchIsolation.TXN_COMMITTED``
  reads up to ``fetchLastStableOffsetMetadata``): the first offset of the earliest transaction that has no
  marker yet. On a stopped broker's disk that is a transaction whose producer wrote no COMMIT/ABORT after it.
"""

from __future__ import annotations

import heapq
import math
import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from urllib.parse import urlparse

from kafka_ops.engine.errors import EngineError
from kafka_ops.engine.indexes import AbortedTxn, parse_txn_index, read_txn_index
from kafka_ops.engine.layout import parse_partition_dir, parse_segment_file
from kafka_ops.engine.records import Batch, BatchScanner, LogBuffer, Record, iter_records

ALL = "all"  # every record, control records included, aborted ones flagged
READ_UNCOMMITTED = "read_uncommitted"  # what a read_uncommitted consumer gets: no control records
READ_COMMITTED = "read_committed"  # no control records, no aborted records, nothing at or past the LSO
ISOLATIONS = (ALL, READ_UNCOMMITTED, READ_COMMITTED)

_MAX_DEPTH = 6  # how deep a directory given as input is searched for partition dirs


@dataclass(frozen=True, slots=True)
class SegmentRef:
    base_offset: int
    log: str  # path (local) or URI (binaryFile)
    size: int


@dataclass(slots=True)
class PartitionRef:
    """One Kafka partition's segments to read, plus every ``.txnindex`` of its directory."""

    topic: str
    partition: int
    dir: str
    segments: list[SegmentRef] = field(default_factory=list)
    txnindexes: list[str] = field(default_factory=list)

    @property
    def size(self) -> int:
        return sum(s.size for s in self.segments)


class Loader:
    """Where segment bytes come from: the local filesystem here, Spark's binaryFile source elsewhere."""

    def log(self, seg: SegmentRef) -> LogBuffer:
        return LogBuffer.open(seg.log)

    def txn(self, path: str) -> list[AbortedTxn]:
        return read_txn_index(path).entries


class BytesLoader(Loader):
    """Files already in memory, keyed by the path/URI used in the refs."""

    def __init__(self, contents: dict[str, bytes]) -> None:
        self.contents = contents

    def log(self, seg: SegmentRef) -> LogBuffer:
        return LogBuffer(self.contents[seg.log], seg.log)

    def txn(self, path: str) -> list[AbortedTxn]:
        return parse_txn_index(self.contents[path], path).entries


LOCAL = Loader()


def local_path(path: str) -> str | None:
    """A plain path, or a ``file:`` URI made plain; None for any other scheme (hdfs://, s3a://, ...)."""
    u = urlparse(path)
    if u.scheme == "file":
        return u.path
    if u.scheme and len(u.scheme) > 1:  # "C:" style drive letters are not schemes
        return None
    return path


# ----------------------------------------------------------------------------------------- discovery
def _partition_name(dirpath: str) -> tuple[str, int] | None:
    name = parse_partition_dir(os.path.basename(os.path.normpath(dirpath)))
    if name is None or name.kind != "log":  # -delete / -future / -stray copies would duplicate records
        return None
    return name.topic, name.partition


def _add_dir(found: dict[str, PartitionRef], dirpath: str, entries: list[os.DirEntry[str]]) -> bool:
    """Register ``dirpath`` as a partition dir if it holds segment files; True when it does."""
    segs: list[SegmentRef] = []
    txns: list[str] = []
    for e in entries:
        parsed = parse_segment_file(e.name)
        if parsed is None or parsed.leftover or not e.is_file():
            continue
        if parsed.suffix == ".log":
            segs.append(SegmentRef(parsed.base_offset, e.path, e.stat().st_size))
        elif parsed.suffix == ".txnindex":
            txns.append(e.path)
    if not segs and not txns:
        return False
    name = _partition_name(dirpath)
    if name is None:
        return True  # segment files in a dir the broker would not load as a partition: not records
    ref = found.setdefault(dirpath, PartitionRef(name[0], name[1], dirpath))
    have = {s.base_offset for s in ref.segments}
    ref.segments.extend(s for s in segs if s.base_offset not in have)
    ref.txnindexes = sorted(set(ref.txnindexes) | set(txns))
    return True


def _walk(found: dict[str, PartitionRef], path: str, depth: int) -> None:
    try:
        entries = sorted(os.scandir(path), key=lambda e: e.name)
    except OSError as exc:
        raise EngineError(path, f"cannot read: {(exc.strerror or type(exc).__name__).lower()}") from exc
    if _add_dir(found, path, entries) or depth >= _MAX_DEPTH:
        return
    for e in entries:
        if e.is_dir(follow_symlinks=False) and not e.name.startswith("."):
            if e.name.endswith(("-delete", "-future", "-stray")):
                continue
            _walk(found, e.path, depth + 1)


def discover(paths: Iterable[str], topics: Iterable[str] | None = None) -> list[PartitionRef]:
    """Partitions under ``paths``: segment ``.log`` files, partition dirs, log dirs, or folders holding them.

    A single ``.log`` file brings its partition's ``.txnindex`` files along (an aborted transaction is indexed
    in the segment holding its ABORT marker, which may come later). KRaft's ``__cluster_metadata`` log is a partition
    like the others. Raises ``EngineError`` for a path that does not exist or cannot be listed.
    """
    found: dict[str, PartitionRef] = {}
    for raw in paths:
        path = local_path(raw)
        if path is None:
            raise EngineError(raw, "not a local path (read it with via='hadoop')")
        path = os.path.abspath(path)
        if os.path.isfile(path):
            parsed = parse_segment_file(os.path.basename(path))
            if parsed is None or parsed.suffix != ".log" or parsed.leftover:
                raise EngineError(path, "not a segment file (<20-digit base offset>.log)")
            d = os.path.dirname(path)
            name = _partition_name(d)
            if name is None:
                raise EngineError(path, "its directory is not named <topic>-<partition>")
            ref = found.setdefault(d, PartitionRef(name[0], name[1], d))
            if all(s.base_offset != parsed.base_offset for s in ref.segments):
                ref.segments.append(SegmentRef(parsed.base_offset, path, os.path.getsize(path)))
            with os.scandir(d) as it:
                ref.txnindexes = sorted(
                    set(ref.txnindexes) | {e.path for e in it if e.name.endswith(".txnindex")}
                )
        elif os.path.isdir(path):
            _walk(found, path, 0)
        else:
            raise EngineError(path, "no such file or directory")
    wanted = set(topics) if topics else None
    out = []
    for ref in found.values():
        if wanted is not None and ref.topic not in wanted:
            continue
        ref.segments.sort(key=lambda s: s.base_offset)
        out.append(ref)
    out.sort(key=lambda r: (r.topic, r.partition, r.dir))
    return out


def plan_groups(parts: list[PartitionRef], max_bytes: int, min_groups: int) -> list[list[PartitionRef]]:
    """Spread whole partitions over input partitions of about equal bytes (longest-first onto the lightest).

    A Kafka partition is never split: its aborted flags need all of its segments. As many groups as the
    parallelism (every core busy), more only when a group would exceed ``max_bytes``; never more than there
    are partitions (each Spark task costs ~50 ms of Python worker overhead).
    """
    if not parts:
        return []
    total = sum(p.size for p in parts)
    n = max(min_groups, math.ceil(total / max(1, max_bytes)))
    n = max(1, min(len(parts), n))
    heap = [(0, i) for i in range(n)]
    groups: list[list[PartitionRef]] = [[] for _ in range(n)]
    for p in sorted(parts, key=lambda p: (-p.size, p.topic, p.partition)):
        load, i = heapq.heappop(heap)
        groups[i].append(p)
        heapq.heappush(heap, (load + p.size, i))
    return [sorted(g, key=lambda p: (p.topic, p.partition)) for g in groups if g]


# ----------------------------------------------------------------------------------------- decoding
@dataclass(slots=True)
class BatchView:
    """One batch with what the partition's whole view says about it."""

    segment: SegmentRef
    batch: Batch
    aborted: bool  # a data batch of an aborted transaction
    open_txn: bool  # a data batch of a transaction with no marker on disk (at or past the LSO)
    records: Callable[[], Iterator[Record]]


def _aborted_txns(part: PartitionRef, loader: Loader, start: int) -> list[AbortedTxn]:
    txns: list[AbortedTxn] = []
    for path in part.txnindexes:
        txns.extend(e for e in loader.txn(path) if e.last_offset >= start)
    txns.sort(key=lambda e: e.first_offset)
    return txns


def last_stable_offsets(batches: Iterable[Batch]) -> dict[int, int]:
    """Producer id -> first offset of its transaction that has no COMMIT/ABORT marker after it."""
    open_first: dict[int, int] = {}
    for b in batches:
        if b.is_transactional:
            if b.is_control:
                open_first.pop(b.producer_id, None)
            else:
                open_first.setdefault(b.producer_id, b.base_offset)
    return open_first


def iter_partition(
    part: PartitionRef,
    isolation: str = ALL,
    loader: Loader = LOCAL,
    verify_crc: bool = True,
    fail_on_corrupt: bool = False,
) -> Iterator[BatchView]:
    """The partition's batches in offset order, flagged and filtered as ``isolation`` says.

    A segment is read up to its first invalid or torn batch, the bytes Kafka's recovery keeps; with
    ``fail_on_corrupt`` such a batch raises ``EngineError`` instead.
    """
    if isolation not in ISOLATIONS:
        raise ValueError(f"isolation must be one of {', '.join(ISOLATIONS)}, not {isolation!r}")
    if not part.segments:
        return
    scanned: list[tuple[SegmentRef, LogBuffer, list[Batch]]] = []
    try:
        for seg in part.segments:
            buf = loader.log(seg)
            scanned.append((seg, buf, []))
            scanner = BatchScanner(buf, verify_crc=verify_crc)
            batches = [b for b in scanner if b.crc_valid]
            if fail_on_corrupt and scanner.tail is not None:
                raise EngineError(seg.log, scanner.tail.reason, scanner.tail.position)
            scanned[-1] = (seg, buf, batches)
        open_first = last_stable_offsets(b for _s, _b, bs in scanned for b in bs)
        lso = min(open_first.values()) if open_first else None
        txns = _aborted_txns(part, loader, part.segments[0].base_offset)
        next_txn = 0
        aborted_pids: set[int] = set()
        for seg, buf, batches in scanned:
            for b in batches:
                pid = b.producer_id
                aborted = False
                if b.magic >= 2 and pid >= 0:
                    # CompletedFetch.consumeAbortedTransactionsUpTo(batch.lastOffset())
                    while next_txn < len(txns) and txns[next_txn].first_offset <= b.last_offset:
                        aborted_pids.add(txns[next_txn].producer_id)
                        next_txn += 1
                    if b.is_control:
                        if b.control_type == "ABORT":
                            aborted_pids.discard(pid)
                    elif b.is_transactional and pid in aborted_pids:
                        aborted = True
                open_txn = (
                    b.is_transactional
                    and not b.is_control
                    and pid in open_first
                    and b.base_offset >= open_first[pid]
                )
                if isolation != ALL and b.is_control:
                    continue
                if isolation == READ_COMMITTED:
                    if lso is not None and b.base_offset >= lso:
                        return
                    if aborted:
                        continue
                yield BatchView(seg, b, aborted, open_txn, _records(buf, b))
    finally:
        for _seg, buf, _batches in scanned:
            buf.close()


def _records(buf: LogBuffer, batch: Batch) -> Callable[[], Iterator[Record]]:
    return lambda: iter_records(buf, batch)


@dataclass(frozen=True, slots=True)
class ConsumedRecord:
    """A record as the reader returns it (the Python twin of one DataFrame row)."""

    topic: str
    partition: int
    offset: int
    timestamp_ms: int
    timestamp_type: str
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes | None], ...]
    producer_id: int
    transactional: bool
    control: bool
    control_type: str | None
    aborted: bool
    open_transaction: bool


def iter_records_of(
    part: PartitionRef, isolation: str = ALL, loader: Loader = LOCAL
) -> Iterator[ConsumedRecord]:
    """Record by record (for simulators and small tools; Spark reads columns, see ``segments``)."""
    for v in iter_partition(part, isolation, loader):
        b = v.batch
        for r in v.records():
            yield ConsumedRecord(
                part.topic, part.partition, r.offset, r.timestamp, b.timestamp_type, r.key, r.value,
                tuple(r.headers), b.producer_id, b.is_transactional, b.is_control, b.control_type, v.aborted,
                v.open_txn,
            )  # fmt: skip
