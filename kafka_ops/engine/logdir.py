"""A log dir as the broker will find it at its next start: partitions, segments, markers, checkpoints.

The scan is cheap by default: one ``stat`` per file and two small reads per index (its first and last
slot), which is all the broker itself looks at before recovery (``LogSegment.readMaxTimestampAndOffsetSoFar``
reads the time index's last slot; ``readNextOffset`` starts from the offset index's last slot). Reading whole
``.log`` files is a separate, explicit step (:func:`next_offset`, :func:`recovery_scan`, :func:`active_tail`).

Predictions, each from Kafka's source (storage/.../log/):
* which segments the next start re-reads: none after a clean shutdown; otherwise every segment from the one
  holding the recovery point on (``LogLoader.recoverLog`` with ``LogSegments.values(recoveryPoint, MAX)``,
  which starts at ``floorKey(recoveryPoint)``), plus any segment whose ``.index`` is missing
  (``LogSegment.sanityCheck`` -> NoSuchFileException -> ``recoverSegment``, LogLoader.loadSegmentFiles).
* the timestamp time retention compares (``LogSegment.largestTimestamp``): the time index's last slot when
  >= 0, else the ``.log``'s mtime. A recovered segment's time index is rebuilt from the batches
  (``LogSegment.recover``), so its value comes from the log. A missing ``.timeindex`` with an ``.index``
  present is created empty (``resize(0)``) and the mtime is used.
"""

from __future__ import annotations

import heapq
import os
import stat as statmod
import struct
from collections.abc import Iterator
from dataclasses import field

from kafka_ops.engine import checkpoints as ckpt
from kafka_ops.engine.compat import slotted
from kafka_ops.engine.errors import EngineError, os_error
from kafka_ops.engine.fileio import kind_of, open_regular
from kafka_ops.engine.indexes import OFFSET_ENTRY, TIME_ENTRY, IndexTail, read_index_tail
from kafka_ops.engine.layout import (
    LEFTOVER_SUFFIXES,
    METADATA_TOPIC,
    REMOTE_INDEX_CACHE,
    SEGMENT_SUFFIXES,
    PartitionName,
    parse_kraft_snapshot,
    parse_partition_dir,
    parse_segment_file,
)
from kafka_ops.engine.pickling import by_constructor
from kafka_ops.engine.records import BatchScanner, LogBuffer, Tail

# Where the retention timestamp of a segment comes from (public values: they appear in reports).
TS_TIME_INDEX = "time_index"  # last slot of the .timeindex
TS_ZERO_PADDING = "zero_padding"  # last slot of an untrimmed, zero-padded .timeindex: 0
TS_MTIME = "mtime"  # empty time index (or a negative last slot): the .log's last-modified time
TS_MTIME_NO_TIMEINDEX = "mtime_missing_timeindex"  # .timeindex missing, .index present: created empty
TS_LOG = "log"  # the segment will be recovered: rebuilt from the batches' max timestamps
TS_UNREADABLE = "unreadable"  # the .timeindex cannot be read


@by_constructor  # sent by the audit's workers (facts.pool)
@slotted
class FileInfo:
    path: str
    size: int
    mtime_ms: int
    mode: int
    uid: int
    gid: int
    is_dir: bool = False
    # what stands under the name when it is neither a regular file nor a dir ("a FIFO (named pipe)", "a symbolic
    # link", fileio.kind_of), from lstat: the broker opens a file through a link and blocks on a FIFO's open
    # (kafka_ops.broker.filetypes); "" for a regular file or a dir
    kind: str = ""

    @classmethod
    def of(cls, path: str, st: os.stat_result) -> FileInfo:
        return cls(
            path, st.st_size, int(st.st_mtime_ns // 1_000_000), statmod.S_IMODE(st.st_mode), st.st_uid,
            st.st_gid, statmod.S_ISDIR(st.st_mode), _kind(st.st_mode),
        )  # fmt: skip

    def to_dict(self) -> dict[str, object]:
        return {
            "path": self.path,
            "size": self.size,
            "mtime_ms": self.mtime_ms,
            "mode": f"{self.mode:04o}",
            "uid": self.uid,
            "gid": self.gid,
        }


@by_constructor  # sent by the audit's workers (facts.pool)
@slotted
class Segment:
    base_offset: int
    dir: str
    log: FileInfo | None = None
    index: FileInfo | None = None
    timeindex: FileInfo | None = None
    txnindex: FileInfo | None = None
    snapshot: FileInfo | None = None
    active: bool = False
    offset_tail: IndexTail | None = None
    time_tail: IndexTail | None = None
    errors: list[EngineError] = field(default_factory=list)

    @property
    def files(self) -> list[FileInfo]:
        return [
            f for f in (self.log, self.index, self.timeindex, self.txnindex, self.snapshot) if f is not None
        ]

    @property
    def offset_index_padded(self) -> bool:
        """Last slot (0, 0) with more than one slot: an untrimmed preallocated offset index."""
        t = self.offset_tail
        return bool(t is not None and t.last == (self.base_offset, 0) and t.entry_count > 1)

    @property
    def time_index_padded(self) -> bool:
        """Last slot (0, 0): zero padding (no real time entry has timestamp 0 at relative offset 0)."""
        t = self.time_tail
        return bool(t is not None and t.last == (0, self.base_offset) and t.entry_count >= 1)

    def retention_timestamp(self, will_recover: bool) -> tuple[int | None, str]:
        """``LogSegment.largestTimestamp()`` as the broker will compute it after its next start.

        Returns (value, source). ``value`` is None when it can only be known by reading the log (TS_LOG)
        or the index is unreadable; see :func:`log_max_timestamp` for the former.
        """
        if will_recover or self.index is None:
            return None, TS_LOG
        if self.timeindex is None:
            return (self.log.mtime_ms if self.log else None), TS_MTIME_NO_TIMEINDEX
        t = self.time_tail
        if t is None:
            return None, TS_UNREADABLE
        last = t.last
        if last is None or t.entry_count == 0:
            return (self.log.mtime_ms if self.log else None), TS_MTIME
        ts = last[0]
        if ts == 0 and last[1] == self.base_offset:  # time_index_padded (it has an entry)
            return 0, TS_ZERO_PADDING
        if ts >= 0:
            return ts, TS_TIME_INDEX
        return (self.log.mtime_ms if self.log else None), TS_MTIME


@by_constructor  # sent by the audit's workers (facts.pool)
@slotted
class Partition:
    path: str
    name: PartitionName
    segments: list[Segment] = field(default_factory=list)
    leftovers: list[FileInfo] = field(default_factory=list)  # every file named *.deleted / .cleaned / .swap
    orphan_indexes: list[FileInfo] = field(default_factory=list)  # index without its .log: deleted at load
    kraft_snapshots: list[tuple[int, int, str, FileInfo]] = field(default_factory=list)
    other_files: list[FileInfo] = field(default_factory=list)
    dir_info: FileInfo | None = None
    leader_epochs: list[tuple[int, int]] | None = None
    topic_id: str | None = None
    errors: list[EngineError] = field(default_factory=list)

    @property
    def topic(self) -> str:
        return self.name.topic

    @property
    def partition(self) -> int:
        return self.name.partition

    @property
    def size(self) -> int:
        return sum(s.log.size for s in self.segments if s.log)


@slotted
class LogDir:
    path: str
    exists: bool = True
    info: FileInfo | None = None
    meta: ckpt.MetaProperties | None = None
    clean_shutdown: ckpt.CleanShutdown | None = None
    checkpoints: dict[str, dict[tuple[str, int], int] | None] = field(default_factory=dict)
    partitions: list[Partition] = field(default_factory=list)
    partition_names: list[tuple[str, PartitionName]] = field(
        default_factory=list
    )  # (path, name), all of them
    fatal_dirs: list[FileInfo] = field(default_factory=list)  # dirs that stop the broker (lost+found)
    skipped_dirs: list[FileInfo] = field(default_factory=list)  # remote-log-index-cache, __cluster_metadata-0
    root_files: list[FileInfo] = field(default_factory=list)
    errors: list[EngineError] = field(default_factory=list)

    @property
    def recovery_points(self) -> dict[tuple[str, int], int]:
        return self.checkpoints.get(ckpt.RECOVERY_POINT) or {}

    def segment_count(self) -> int:
        return sum(len(p.segments) for p in self.partitions)


def _stat(path: str, errors: list[EngineError]) -> FileInfo | None:
    try:
        return FileInfo.of(path, os.stat(path))
    except OSError as exc:
        errors.append(os_error(path, exc))
        return None


# suffix -> Segment attribute, for the names the broker writes (no leftover suffix): the scan's fast path
_SEGMENT_ATTR = {suffix: suffix[1:] for suffix in SEGMENT_SUFFIXES}
_S_IFMT, _S_IFDIR, _S_IFREG = statmod.S_IFMT(0o177777), statmod.S_IFDIR, statmod.S_IFREG


def _kind(mode: int) -> str:
    """ "" for a regular file or a dir, else what it is (fileio.kind_of: "a FIFO (named pipe)", ...)."""
    if statmod.S_ISREG(mode) or statmod.S_ISDIR(mode):
        return ""
    return "a symbolic link" if statmod.S_ISLNK(mode) else kind_of(mode)


def scan_partition(path: str, name: PartitionName, read_tails: bool = True) -> Partition:
    part = Partition(path, name)
    part.dir_info = _stat(path, part.errors)
    try:
        entries = list(os.scandir(path))
    except OSError as exc:
        part.errors.append(os_error(path, exc))
        return part
    segs: dict[int, Segment] = {}
    # The audit's hot path (one call per file of the host): FileInfo built inline, segment names split
    # without parse_segment_file unless the name has a leftover suffix or is not a segment file at all; a
    # segment's files share their digits, which are checked and converted once (by_digits).
    # FileInfo and Segment made as records.BatchScanner makes a Batch: their dataclass __init__ called on
    # object.__new__(cls), the same object without type.__call__'s overhead (~0.1 µs each, 20-odd per partition).
    seg_attr = _SEGMENT_ATTR
    by_digits: dict[str, Segment] = {}
    new, init_file, init_segment = object.__new__, FileInfo.__init__, Segment.__init__
    ifmt, ifdir, ifreg = _S_IFMT, _S_IFDIR, _S_IFREG
    for e in entries:
        try:
            st = e.stat(follow_symlinks=False)
        except OSError as exc:
            part.errors.append(os_error(e.path, exc))
            continue
        mode = st.st_mode
        is_dir = (mode & ifmt) == ifdir
        fi = new(FileInfo)
        init_file(
            fi, e.path, st.st_size, st.st_mtime_ns // 1_000_000, mode & 0o7777, st.st_uid, st.st_gid, is_dir,
            "" if is_dir or (mode & ifmt) == ifreg else _kind(mode),
        )  # fmt: skip
        if is_dir:
            part.other_files.append(fi)
            continue
        fname = e.name
        dot = fname.find(".")
        attr = seg_attr.get(fname[dot:]) if dot > 0 else None
        if attr is not None:
            digits = fname[:dot]
            seg = by_digits.get(digits)
            if seg is None and digits.isdigit() and digits.isascii():
                base = int(digits)
                seg = segs.get(base)
                if seg is None:
                    seg = segs[base] = new(Segment)
                    init_segment(seg, base, path)
                by_digits[digits] = seg
            if seg is not None:
                setattr(seg, attr, fi)
                continue
        parsed = parse_segment_file(fname)
        if parsed is not None:
            if parsed.leftover:
                part.leftovers.append(fi)
                continue
            seg = segs.get(parsed.base_offset)
            if seg is None:
                seg = segs[parsed.base_offset] = Segment(parsed.base_offset, path)
            setattr(seg, parsed.suffix[1:], fi)
            continue
        if fname == ckpt.LEADER_EPOCH:
            part.other_files.append(fi)
            try:
                part.leader_epochs = ckpt.read_leader_epoch_checkpoint(e.path)
            except EngineError as exc:
                part.errors.append(exc)
            continue
        if fname == ckpt.PARTITION_METADATA:
            part.other_files.append(fi)
            try:
                part.topic_id = ckpt.read_partition_metadata(e.path).get("topic_id")
            except EngineError as exc:
                part.errors.append(exc)
            continue
        snap = parse_kraft_snapshot(fname)
        if snap is not None:
            part.kraft_snapshots.append((*snap, fi))
            continue
        if fname.endswith(LEFTOVER_SUFFIXES):
            # not a segment file's name, but the loader acts on the suffix alone (kafka_ops.broker.leftovers)
            part.leftovers.append(fi)
            continue
        part.other_files.append(fi)
    # Producer snapshots are named by offset but are not segment files; split them out.
    ordered = [segs[b] for b in sorted(segs)]
    for seg in ordered:
        if seg.log is None:
            if seg.index or seg.timeindex or seg.txnindex:
                part.orphan_indexes.extend(f for f in (seg.index, seg.timeindex, seg.txnindex) if f)
            continue
        part.segments.append(seg)
    for seg in ordered:
        if seg.log is None and seg.snapshot is not None:
            part.other_files.append(seg.snapshot)
    if part.segments:
        part.segments[-1].active = True
    if read_tails:
        for seg in part.segments:
            read_segment_tails(seg)
    part.kraft_snapshots.sort()
    return part


_new, _init_tail = object.__new__, IndexTail.__init__


def read_segment_tails(seg: Segment) -> None:
    """Fill ``offset_tail``/``time_tail`` from the first and last slot of each index (two small reads).

    An index smaller than one slot has no entry to read: it is not opened (most closed segments of a quiet
    partition have an empty ``.index``), which is what ``read_index_tail`` would return after opening it.
    """
    index, timeindex = seg.index, seg.timeindex
    if index is not None:
        if index.size < OFFSET_ENTRY:
            seg.offset_tail = tail = _new(IndexTail)  # as scan_partition makes a FileInfo
            _init_tail(tail, index.path, "offset", index.size, OFFSET_ENTRY, None, None, 0)
        else:
            try:
                seg.offset_tail = read_index_tail(index.path, "offset", seg.base_offset, index.size)
            except EngineError as exc:
                seg.errors.append(exc)
    if timeindex is not None:
        if timeindex.size < TIME_ENTRY:
            seg.time_tail = tail = _new(IndexTail)
            _init_tail(tail, timeindex.path, "time", timeindex.size, TIME_ENTRY, None, None, 0)
        else:
            try:
                seg.time_tail = read_index_tail(timeindex.path, "time", seg.base_offset, timeindex.size)
            except EngineError as exc:
                seg.errors.append(exc)


def scan_log_dir(path: str, read_tails: bool = True, partitions: bool = True) -> LogDir:
    """Scan one ``log.dirs`` entry. Never raises for what it finds; problems go to ``errors``.

    ``partitions=False`` only lists the partition dirs (``partition_names``), for callers that stream them.
    """
    ld = LogDir(os.path.abspath(path))
    try:
        st = os.stat(path)
    except FileNotFoundError:
        ld.exists = False
        return ld
    except OSError as exc:
        ld.errors.append(os_error(path, exc))
        return ld
    ld.info = FileInfo.of(ld.path, st)
    if not ld.info.is_dir:
        ld.errors.append(EngineError(ld.path, "not a directory"))
        return ld
    try:
        # names, not DirEntry objects, which would each keep their stat result until the loop ends: the peak
        # memory of a log dir of 100,000 partitions. The dirent's type says "dir" without a stat (the plain dirs'
        # names apart from the rest's): a partition dir's own stat is scan_partition's (dir_info), so it is not
        # stat-ed twice.
        dirs: list[str] = []
        others: list[str] = []
        with os.scandir(path) as it:
            for e in it:
                (dirs if e.is_dir(follow_symlinks=False) else others).append(e.name)
    except OSError as exc:
        ld.errors.append(os_error(path, exc))
        return ld
    for entry, plain_dir in _by_name(dirs, others):
        epath = os.path.join(path, entry)  # what os.scandir(path) gives as DirEntry.path
        name = parse_partition_dir(entry) if entry != REMOTE_INDEX_CACHE else None
        fi: FileInfo | None = None
        if not plain_dir or name is None or name.topic == METADATA_TOPIC:  # its FileInfo is kept
            try:
                # File.isDirectory follows symlinks (LogManager.loadLogs), so a symlinked partition dir is loaded
                st = os.stat(epath)
            except OSError as exc:
                ld.errors.append(os_error(epath, exc))
                continue
            fi = FileInfo.of(epath, st)
            if not fi.is_dir:
                ld.root_files.append(fi)
                continue
            if entry == REMOTE_INDEX_CACHE:
                ld.skipped_dirs.append(fi)
                continue
            if name is None:
                ld.fatal_dirs.append(fi)
                continue
        assert name is not None
        if name.topic == METADATA_TOPIC:
            assert fi is not None  # stat-ed above
            ld.skipped_dirs.append(fi)
            # The KRaft metadata log is read by the raft layer, not LogManager; still scan it for dumps.
        ld.partition_names.append((epath, name))
        if partitions:
            ld.partitions.append(scan_partition(epath, name, read_tails))
    root = {f.path.rsplit("/", 1)[-1] for f in ld.root_files}
    meta_path = os.path.join(ld.path, ckpt.META_PROPERTIES)
    if ckpt.META_PROPERTIES in root:
        try:
            ld.meta = ckpt.read_meta_properties(meta_path)
        except EngineError as exc:
            ld.errors.append(exc)
    try:
        ld.clean_shutdown = ckpt.read_clean_shutdown(ld.path)
    except EngineError as exc:
        ld.errors.append(exc)
    for ck in ckpt.OFFSET_CHECKPOINTS:
        if ck not in root:
            ld.checkpoints[ck] = None
            continue
        try:
            ld.checkpoints[ck] = ckpt.read_offset_checkpoint(os.path.join(ld.path, ck))
        except EngineError as exc:
            ld.checkpoints[ck] = None
            ld.errors.append(exc)
    return ld


def _by_name(dirs: list[str], others: list[str]) -> Iterator[tuple[str, bool]]:
    """(name, is in ``dirs``) for the names of both lists in sorted order (each name is in one of them, so the
    flag never decides the order)."""
    dirs.sort()
    others.sort()
    return heapq.merge(((n, True) for n in dirs), ((n, False) for n in others))


def index_absent(part: Partition, seg: Segment) -> bool:
    """Whether the loader finds no ``.index`` for ``seg``: nothing under its name. A directory there is no missing
    index: ``offsetIndexFile().exists()`` is true for it (LogSegment.java@3.7.1:182-193 sanityCheck,
    LogSegment.scala@2.8.2:80-91; lab 3.7.2 type-index_older_directory: loaded as is); the scan lists it among the
    partition's other entries, not as the segment's index."""
    if seg.index is not None:
        return False
    stem = os.path.join(part.path, f"{seg.base_offset:020d}.index")
    return not any(o.is_dir and o.path == stem for o in part.other_files)


def recovered_segments(
    part: Partition, clean_shutdown: bool, recovery_point: int | None, *, missing_index_recovers: bool = True
) -> list[Segment]:
    """Segments the next start re-reads, rebuilding their indexes (``LogLoader.recoverLog``).

    ``recovery_point`` None means the checkpoint has no entry (or is unreadable): the broker uses 0.
    A segment with a missing ``.index`` is recovered even after a clean shutdown from 2.3 on
    (``missing_index_recovers``); up to 2.2 ``LogSegment.open`` creates it empty and it loads as is
    (kafka_ops.engine.versions: missing_index_rebuilt).
    """
    out = [s for s in part.segments if index_absent(part, s)] if missing_index_recovers else []
    if clean_shutdown or not part.segments or part.name.kind == "delete":
        # a <tp>.<uuid>-delete dir is never recovered: the loader skips recoverLog for it (Log.scala@1.1.0:420,
        # @2.8.2:822, LogLoader.scala@3.7.1:154); loadSegmentFiles still rebuilds a missing index
        return out
    rp = recovery_point or 0
    floor = None
    for s in part.segments:
        if s.base_offset <= rp:
            floor = s.base_offset
    start = floor if floor is not None else part.segments[0].base_offset
    extra = [
        s
        for s in part.segments
        if s.base_offset >= start and (not index_absent(part, s) or not missing_index_recovers)
    ]
    return sorted(out + extra, key=lambda s: s.base_offset)


def log_max_timestamp(seg: Segment) -> int:
    """Largest batch max timestamp in the ``.log`` (what recovery rebuilds), -1 if none."""
    if seg.log is None:
        return -1
    best = -1
    with LogBuffer.open(seg.log.path) as buf:
        for b in BatchScanner(buf, verify_crc=False):
            if b.max_timestamp > best:
                best = b.max_timestamp
    return best


def next_offset(seg: Segment, buf: LogBuffer | None = None) -> int:
    """``LogSegment.readNextOffset``: scan from the offset index's last entry to the end of the log.

    ``buf``: the segment's ``.log`` already opened by the caller (the audit reads it for other facts too)."""
    if seg.log is None:
        return seg.base_offset
    if buf is None:
        with LogBuffer.open(seg.log.path) as opened:
            return next_offset(seg, opened)
    start = 0
    if seg.offset_tail and seg.offset_tail.last and not seg.offset_index_padded:
        start = max(0, seg.offset_tail.last[1])
    nxt = seg.base_offset
    if start >= buf.size:
        # where the records end (IDX003 and the forecast read it so): the whole segment. The broker's
        # readNextOffset then gives the base offset instead (FileRecords.searchForOffsetWithSize finds no batch
        # from there): broker.startup.next_offset_fallback says that, issue 36 §2
        start = 0
    scanner = BatchScanner(buf, start=start, verify_crc=False, controls=False)
    for b in scanner:
        nxt = b.next_offset
    if scanner.tail is not None and scanner.tail.kind == "corrupt" and start > 0 and nxt == seg.base_offset:
        # the index pointed somewhere odd: fall back to a full scan
        scanner = BatchScanner(buf, verify_crc=False, controls=False)
        for b in scanner:
            nxt = b.next_offset
    return nxt


@slotted
class RecoveryResult:
    """What ``LogSegment.recover`` will do to one segment."""

    segment: Segment
    valid_bytes: int
    tail: Tail | None
    batches: int
    records: int
    max_timestamp: int
    last_offset: int | None
    bytes_read: int


INVALID_OFFSET = "InvalidOffsetException"  # in a RecoveryResult tail's reason: recovery_scan's index rule


def recovery_scan(seg: Segment, index_interval_bytes: int = 4096) -> RecoveryResult:
    """Re-read a segment as ``LogSegment.recover`` does (LogSegment.scala@2.2.1-2.8.2, LogSegment.java@3.5.2-4.x):
    ``batch.ensureValid()`` on every batch, the truncation at the first invalid one, and the index entries it
    writes every ``index.interval.bytes`` (``index_interval_bytes``) of records.

    * ensureValid checks a v2 batch's size and CRC only, and FileLogInputStream.nextBatch frames every magic >= 2
      as a v2 batch: a batch of an unknown magic (> 2) whose CRC matches (the CRC covers attributes to the end,
      not the magic) is kept (lab, 3.7.2: 'log-active_bad_magic_unclean', 0 bytes truncated).
    * ``OffsetIndex.append`` throws InvalidOffsetException for an offset not above the last one it appended, and
      ``TimeIndex.maybeAppend`` for an offset below its last entry's; ``recoverLog`` answers it with
      ``segment.truncateTo(baseOffset)``: 'Found invalid offset during recovery. Deleting the corrupt segment and
      creating an empty one' (Log.scala@2.2.1:608, @2.8.2:904, LogLoader.scala@3.5.2:427; lab, 3.7.2:
      'log-active_offsets_backwards_unclean', the whole segment truncated): the tail is then the whole file."""
    assert seg.log is not None
    batches = records = 0
    max_ts = -1
    last = None
    last_index_entry = 0
    index_last: int | None = None  # the offset index's last appended offset (none yet)
    time_last: int | None = None  # the time index's last entry's offset (none yet)
    time_last_ts = -1  # and its timestamp (RecordBatch.NO_TIMESTAMP while empty)
    offset_of_max = -1
    with LogBuffer.open(seg.log.path) as buf:
        # counts, timestamps and offsets only
        scanner = BatchScanner(buf, verify_crc=True, controls=False, unknown_magic=True)
        for b in scanner:
            if not b.crc_valid:
                break
            if b.max_timestamp > max_ts:
                max_ts, offset_of_max = b.max_timestamp, b.last_offset
            if b.position - last_index_entry > index_interval_bytes:
                bad = index_last is not None and b.last_offset <= index_last
                bad = bad or (time_last is not None and offset_of_max < time_last)
                if bad:
                    tail = Tail(
                        0, buf.size,
                        f"batch at byte {b.position} has offsets {b.base_offset}-{b.last_offset}, not above the "
                        f"index's last entry: {INVALID_OFFSET}, and recovery empties the segment",
                        "corrupt",
                    )  # fmt: skip
                    return RecoveryResult(seg, 0, tail, 0, 0, -1, None, buf.size)
                index_last = b.last_offset
                if max_ts > time_last_ts:  # TimeIndex.maybeAppend appends a larger timestamp only
                    time_last, time_last_ts = offset_of_max, max_ts
                last_index_entry = b.position
            batches += 1
            records += b.records_count or 0
            last = b.last_offset
        return RecoveryResult(
            seg, scanner.valid_bytes, scanner.tail, batches, records, max_ts, last, buf.size
        )


def last_real_offset_entry(seg: Segment) -> tuple[int, int] | None:
    """The last non-zero slot of the offset index (absolute offset, position): a binary search over a
    zero-padded (preallocated) index, which holds real entries then zero slots; None if there is none.

    A real entry is never all zero: the first is written after ``index.interval.bytes`` of records, so its
    position is > 0 (LogSegment.append / LogSegment.recover).
    """
    t = seg.offset_tail
    if seg.index is None or t is None or t.entry_count == 0:
        return None
    if not seg.offset_index_padded:
        return t.last if t.last and t.last[1] > 0 else None
    n = t.entry_count
    zero = bytes(OFFSET_ENTRY)
    try:
        with open_regular(seg.index.path) as f:  # never through a link, never a FIFO

            def slot(i: int) -> bytes:
                f.seek(i * OFFSET_ENTRY)
                return f.read(OFFSET_ENTRY)

            if slot(0) == zero:
                return None
            lo, hi = 0, n - 1  # slot lo is real, slot hi is zero
            while hi - lo > 1:
                mid = (lo + hi) // 2
                if slot(mid) == zero:
                    hi = mid
                else:
                    lo = mid
            rel, pos = struct.unpack(">ii", slot(lo))
    except (OSError, EngineError):
        return None
    return seg.base_offset + rel, pos


@slotted
class TailScan:
    """How the active segment's .log ends, read from its last index entry on with CRC checks."""

    tail: Tail | None
    valid_bytes: int
    last_offset: int | None  # last offset of the last valid batch read (None: none read)
    start: int  # where the scan started


def end_and_tail(seg: Segment, buf: LogBuffer) -> tuple[int, TailScan] | None:
    """:func:`next_offset` and :func:`active_tail` of the segment's open ``.log`` in one CRC pass, when both read
    the same bytes: both start at the offset index's last entry (0 without one) unless the index is zero-padded
    (active_tail then searches the last real entry). A pass in which every batch is valid yields, with the CRC,
    the batches the pass without it yields. None when they may differ (a zero-padded index, a batch that fails
    its CRC, an index entry that does not point at a batch): then ask both."""
    if seg.log is None or seg.offset_index_padded:
        return None
    t = seg.offset_tail
    start = max(0, t.last[1]) if t is not None and t.last else 0
    if start >= buf.size:
        start = 0
    scanner = BatchScanner(buf, start=start, verify_crc=True, controls=False)
    nxt = seg.base_offset
    last = None
    for b in scanner:
        if not b.crc_valid:
            return None
        nxt = b.next_offset
        last = b.last_offset
    tail = scanner.tail
    if start and tail is not None and tail.kind == "corrupt":
        return None
    return nxt, TailScan(tail, scanner.valid_bytes, last, start)


def active_tail(seg: Segment, buf: LogBuffer | None = None) -> TailScan | None:
    """Scan the segment from its last real offset-index entry to the end with CRC checks: the bytes that
    ``LogSegment.readNextOffset`` reads at load (it starts at ``offsetIndex().lastOffset()``); from 0 when the
    index has no entry or its entry is not a batch start. None when the .log cannot be read.

    ``buf``: the segment's ``.log`` already opened by the caller (the fact collector reads it once)."""
    if seg.log is None:
        return None
    if buf is None:
        try:
            with LogBuffer.open(seg.log.path) as opened:
                return active_tail(seg, opened)
        except EngineError:
            return None
    entry = last_real_offset_entry(seg)
    start = entry[1] if entry else 0
    if start >= buf.size:
        start = 0
    for attempt in (start, 0):
        scanner = BatchScanner(buf, start=attempt, verify_crc=True, controls=False)
        last = None
        read = 0
        for b in scanner:
            if not b.crc_valid:
                break
            last = b.last_offset
            read += 1
        t = scanner.tail
        if attempt and read == 0 and t is not None and t.kind == "corrupt":
            continue  # the index entry does not point at a batch: read the whole segment
        return TailScan(t, scanner.valid_bytes, last, attempt)
    return None
