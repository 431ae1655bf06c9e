"""Power-loss damage to a log dir's small files, planted into a stopped lab broker's files: a checkpoint
zero-filled, truncated mid-entry, garbage, or left empty (what a crash without fsync'd writes, or a full disk, leaves
behind). What the broker then does is kafka_ops.broker.failure_channel's rule; the lab is its judge."""

from __future__ import annotations

import os
import random
import struct
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from kafka_lab.faults import Fault, copy_partition_dir
from kafka_ops.engine import checkpoints as ckpt

Damager = Callable[[bytes], bytes]


def zero_filled(data: bytes) -> bytes:
    """The file's length kept, its blocks never written: zeros (ext4 after a power loss, data=writeback)."""
    return bytes(max(len(data), 16))


def truncated(data: bytes) -> bytes:
    """Cut in the middle of the last entry: fewer entries than the count line says, or a half line."""
    if len(data) < 6:
        return data[: len(data) // 2]
    cut = data.rstrip(b"\n").rfind(b" ")
    return data[: cut if cut > 0 else len(data) // 2]


def garbage(data: bytes) -> bytes:
    """Another file's bytes where the checkpoint was (not UTF-8, no version line)."""
    return b"\x7fELF\x02\x01\x01\x00" + bytes(range(200, 256)) * 2


def empty(data: bytes) -> bytes:
    """A 0-byte file (created, never written): the broker reads it as no entries."""
    return b""


def one_byte(data: bytes) -> bytes:
    """Only the first byte on disk (a write torn after its first byte): a checkpoint's version digit alone (read as
    no entries: CheckpointFile returns an empty list when the count line is missing), meta.properties' ``#``,
    quorum-state's ``{``."""
    return data[:1]


def bad_entry(data: bytes) -> bytes:
    """One entry of a text checkpoint bad, the others and the count line intact: the last entry's offset with its
    last digit turned into a letter (a bit flip, a slip of a hand edit). A checkpoint without entries has none to
    damage: the lab plants it where the dataset has entries (ValueError otherwise, not a silent no-op)."""
    lines = data.split(b"\n")
    entries = [i for i, x in enumerate(lines) if i >= 2 and x.strip()]
    if not entries:
        raise ValueError("bad_entry: the checkpoint has no entry to damage")
    fields = lines[entries[-1]].split(b" ")
    fields[-1] = fields[-1][:-1] + b"x"
    lines[entries[-1]] = b" ".join(fields)
    return b"\n".join(lines)


def damage_file(path: Path, how: Damager, name: str) -> Fault:
    """Rewrite ``path`` in place (same inode, owner and mode) with ``how`` of its bytes."""
    before = path.read_bytes()
    fd = os.open(path, os.O_WRONLY | os.O_TRUNC | os.O_NOFOLLOW)
    try:
        os.write(fd, how(before))
    finally:
        os.close(fd)
    return Fault(name, [path], {"file": path.name, "bytes_before": len(before), "log_dir": str(path.parent)})


def log_dir_checkpoint(log_dir: Path, checkpoint: str, how: Damager, name: str) -> Fault:
    return damage_file(log_dir / checkpoint, how, name)


def leader_epoch_checkpoint(partition_dir: Path, how: Damager, name: str) -> Fault:
    f = damage_file(partition_dir / ckpt.LEADER_EPOCH, how, name)
    f.detail["partition_dir"] = str(partition_dir)
    f.detail["log_dir"] = str(partition_dir.parent)
    return f


def partition_metadata(partition_dir: Path, how: Damager, name: str) -> Fault:
    """The partition's ``partition.metadata`` (its topic id, 2.8+) damaged in place."""
    f = damage_file(partition_dir / ckpt.PARTITION_METADATA, how, name)
    f.detail["partition_dir"] = str(partition_dir)
    f.detail["log_dir"] = str(partition_dir.parent)
    return f


def producer_snapshot(partition_dir: Path, how: Damager, name: str) -> Fault:
    """The partition's latest producer-state snapshot (``<offset>.snapshot``, the one the next start reads
    first) damaged in place."""
    snaps = sorted(
        (int(p.name[: -len(".snapshot")]), p)
        for p in partition_dir.glob("*.snapshot")
        if p.name[: -len(".snapshot")].isdigit()
    )
    if not snaps:
        raise ValueError(f"{partition_dir} has no producer snapshot")
    f = damage_file(snaps[-1][1], how, name)
    f.detail.update(
        partition_dir=str(partition_dir), log_dir=str(partition_dir.parent), offset=snaps[-1][0],
        older=[str(p) for _, p in snaps[:-1]],
    )  # fmt: skip
    return f


def other_topic_id(partition_dir: Path, name: str = "partition_metadata_other_id") -> Fault:
    """The partition's ``partition.metadata`` naming another topic id than the cluster's for its topic (a dir
    restored from another cluster, or a topic deleted and re-created while the broker was down)."""
    import base64
    import random

    topic_id = base64.urlsafe_b64encode(random.randbytes(16)).decode().rstrip("=")
    f = damage_file(
        partition_dir / ckpt.PARTITION_METADATA,
        lambda _: f"version: 0\ntopic_id: {topic_id}\n".encode(),
        name,
    )
    f.detail.update(partition_dir=str(partition_dir), log_dir=str(partition_dir.parent), topic_id=topic_id)
    return f


def short_topic_id(partition_dir: Path, name: str = "partition_metadata_short_id") -> Fault:
    """The partition's ``partition.metadata`` with its topic id cut to half its characters, the line still well
    formed (``topic_id: q83vEjRWeJC``): Uuid.fromString refuses it (IllegalArgumentException, not an IOException)."""

    def cut(data: bytes) -> bytes:
        head, _, tid = data.decode().rstrip("\n").rpartition(" ")
        return f"{head} {tid[: len(tid) // 2]}\n".encode()

    f = damage_file(partition_dir / ckpt.PARTITION_METADATA, cut, name)
    f.detail.update(partition_dir=str(partition_dir), log_dir=str(partition_dir.parent))
    return f


def missing_partition_metadata(partition_dir: Path, name: str = "partition_metadata_missing") -> Fault:
    """The partition's ``partition.metadata`` gone (moved aside by an operator, or never flushed): its log loads
    without a topic id."""
    path = partition_dir / ckpt.PARTITION_METADATA
    path.unlink()
    return Fault(name, [path], {"partition_dir": str(partition_dir), "log_dir": str(partition_dir.parent)})


def quorum_state(metadata_log_dir: Path, how: Damager, name: str) -> Fault:
    """The KRaft metadata log's ``__cluster_metadata-0/quorum-state`` damaged in place."""
    f = damage_file(metadata_log_dir / "__cluster_metadata-0" / "quorum-state", how, name)
    f.detail["log_dir"] = str(metadata_log_dir)
    return f


DELETE_DIR_UUID = (
    "5c1d0bd4a3e94b5c8a3f6e2d7b9c0a11"  # LocalLog.logDeleteDirName: <tp>.<uuid without dashes>-delete
)


def delete_dir(source: Path, topic: str, name: str = "delete_dir") -> Fault:
    """A partition dir pending deletion, as ``LogManager.asyncDelete`` leaves it when the broker stops before the
    kafka-delete-logs task ran (topic deleted, ``file.delete.delay.ms`` not yet passed): a copy of ``source``'s
    files (owner and mode kept) in ``<topic>-<p>.<uuid>-delete`` next to it."""
    partition = source.name.rsplit("-", 1)[1]
    target = copy_partition_dir(source, source.parent / f"{topic}-{partition}.{DELETE_DIR_UUID}-delete")
    return Fault(name, [target], {"source": str(source), "log_dir": str(source.parent)})


def swap_leftover(partition_dir: Path, name: str = "swap_leftover") -> Fault:
    """An interrupted cleaning: the first two segments' records written as ``<first base>.log.swap`` (a cleaning
    that kept every record), the broker stopped before it renamed the swap in and the old segments away
    (``Log.replaceSegments``). Owner and mode of the first ``.log``; no ``.index.swap``."""
    from kafka_lab.faults import segment_bases, segment_file

    b0, b1, b2 = segment_bases(partition_dir)[:3]
    first = segment_file(partition_dir, b0, ".log")
    swap = segment_file(partition_dir, b0, ".log.swap")
    swap.write_bytes(first.read_bytes() + segment_file(partition_dir, b1, ".log").read_bytes())
    st = first.stat()
    os.chown(swap, st.st_uid, st.st_gid)
    swap.chmod(st.st_mode & 0o7777)
    return Fault(
        name,
        [swap],
        {"partition_dir": str(partition_dir), "swapped_in": b0, "deleted": [b1], "covers_to": b2},
    )


def index_swap_leftover(partition_dir: Path, name: str = "index_swap") -> Fault:
    """An interrupted cleaning or split that had renamed its new ``.log`` into place but not yet its indexes
    (``LogSegment.changeFileSuffixes`` renames the log first): ``<base>.index.swap`` and ``<base>.timeindex.swap``
    beside the first segment's own indexes, each holding the first half of their entries (a valid, sparser index:
    what a rename in makes observable), and an empty ``<base>.txnindex.swap``. No ``.log.swap``. Owner and mode of
    the segment's ``.log``."""
    from kafka_lab.faults import segment_bases, segment_file

    base = segment_bases(partition_dir)[0]
    log = segment_file(partition_dir, base, ".log")
    st = log.stat()
    planted = []
    for suffix, entry in ((".index", 8), (".timeindex", 12), (".txnindex", 0)):
        src = segment_file(partition_dir, base, suffix)
        data = src.read_bytes() if entry and src.exists() else b""
        if entry:
            n = sum(1 for i in range(0, len(data) - entry + 1, entry) if any(data[i : i + entry]))
            data = data[: (n // 2) * entry]
        dst = segment_file(partition_dir, base, suffix + ".swap")
        dst.write_bytes(data)
        os.chown(dst, st.st_uid, st.st_gid)
        dst.chmod(st.st_mode & 0o7777)
        planted.append(dst)
    sizes = {p.name[len(f"{base:020d}") : -len(".swap")]: p.stat().st_size for p in planted}
    return Fault(name, planted, {"partition_dir": str(partition_dir), "base_offset": base, "sizes": sizes})


FUTURE_DIR_UUID = "7e2a9c4b1d0f4e6a9b3c5d7e8f1a2b3c"  # LogManager: <tp>.<uuid without dashes>-future


def future_dir(source: Path, log_dir: Path, *, keep_source: bool = True, name: str = "future_dir") -> Fault:
    """An intra-broker move (alterReplicaLogDirs) that the stop interrupted: ``source``'s files copied into
    ``<tp>.<uuid>-future`` in the other log dir ``log_dir`` (owner, mode and times kept; a future log that had
    caught up). ``keep_source=False``: the original partition dir removed as well (lost, or deleted by hand)."""
    import shutil

    target = copy_partition_dir(source, log_dir / f"{source.name}.{FUTURE_DIR_UUID}-future")
    if not keep_source:
        shutil.rmtree(source)
    return Fault(name, [target], {"source": str(source), "log_dir": str(log_dir), "source_kept": keep_source})


# ---- the KRaft metadata log dir's own files (issue 36 §2): bootstrap.checkpoint, __cluster_metadata-0's segments,
# snapshots, partition.metadata and leader-epoch-checkpoint; quorum-state is above ----
METADATA_PARTITION = "__cluster_metadata-0"


def metadata_file(metadata_log_dir: Path, relative: str, how: Damager, name: str) -> Fault:
    """A file of the metadata log dir (``bootstrap.checkpoint``) or of ``__cluster_metadata-0`` damaged in place."""
    f = damage_file(metadata_log_dir / relative, how, name)
    f.detail["log_dir"] = str(metadata_log_dir)
    return f


def metadata_active(metadata_log_dir: Path) -> Path:
    from kafka_lab.faults import segment_bases, segment_file

    pdir = metadata_log_dir / METADATA_PARTITION
    return segment_file(pdir, segment_bases(pdir)[-1], ".log")


def metadata_log_cut(metadata_log_dir: Path, name: str = "log_truncated") -> Fault:
    """The metadata log's active segment cut 10 bytes short: its last batch ends mid-record (a write the power
    loss cut)."""
    path = metadata_active(metadata_log_dir)
    size = path.stat().st_size
    fd = os.open(path, os.O_WRONLY | os.O_NOFOLLOW)
    try:
        os.ftruncate(fd, size - 10)
    finally:
        os.close(fd)
    return Fault(name, [path], {"log_dir": str(metadata_log_dir), "bytes_before": size})


def metadata_log_tail(metadata_log_dir: Path, tail: bytes, name: str) -> Fault:
    """Bytes appended to the metadata log's active segment (zeros: a power loss's unwritten blocks; random: a torn
    write)."""
    path = metadata_active(metadata_log_dir)
    size = path.stat().st_size
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW)
    try:
        os.write(fd, tail)
    finally:
        os.close(fd)
    return Fault(name, [path], {"log_dir": str(metadata_log_dir), "bytes_before": size})


def latest_metadata_snapshot(metadata_log_dir: Path) -> Path:
    snaps = sorted(
        p for p in (metadata_log_dir / METADATA_PARTITION).glob("*.checkpoint") if p.name[:20].isdigit()
    )
    if not snaps:
        raise ValueError(f"{metadata_log_dir / METADATA_PARTITION} has no snapshot")
    return snaps[-1]


# ----------------------------------------------------------------------- segment .log damage (issue 36 §2)
# Content damage to one segment's ``.log`` (its indexes kept as they were), as a power loss, a full disk, a bad
# sector or a hand edit leaves it: ``older`` is the partition's first (oldest, rolled) segment, ``active`` its last.
# Each Damager rewrites the file in place (damage_file: same inode, owner and mode).
_BATCH_HEADER = (
    61  # v2 RecordBatch header: baseOffset 8, length 4, epoch 4, magic 1, crc 4, ... records count 4
)


def _batch_spans(data: bytes) -> list[tuple[int, int]]:
    """(position, size) of each complete batch of a ``.log``'s bytes, by its 12-byte framing."""
    import struct

    out, pos = [], 0
    while pos + _BATCH_HEADER <= len(data):
        length = struct.unpack_from(">i", data, pos + 8)[0]
        if length < _BATCH_HEADER - 12 or pos + 12 + length > len(data):
            break
        out.append((pos, 12 + length))
        pos += 12 + length
    return out


def _middle(data: bytes) -> tuple[int, int]:
    spans = _batch_spans(data)
    if len(spans) < 3:
        raise ValueError(f"{len(spans)} batches: too few to damage one in the middle")
    return spans[len(spans) // 2]


def log_zero_filled(data: bytes) -> bytes:
    """The whole ``.log`` zeros, its length kept (blocks allocated, never written)."""
    return bytes(len(data))


def log_truncated_0(data: bytes) -> bytes:
    """An empty ``.log`` (its indexes still name positions in it)."""
    return b""


def log_truncated_mid_header(data: bytes) -> bytes:
    """Cut inside the last batch's 61-byte header (after its length field, before its records)."""
    pos, _ = _batch_spans(data)[-1]
    return data[: pos + 30]


def log_truncated_mid_record(data: bytes) -> bytes:
    """Cut in the middle of the middle batch's records: that batch partial, every later one gone."""
    pos, size = _middle(data)
    return data[: pos + _BATCH_HEADER + (size - _BATCH_HEADER) // 2]


def log_garbage_middle(data: bytes) -> bytes:
    """256 random bytes over the middle batch's start (its header and first records): the framing there is
    garbage, so is its CRC."""
    import random

    pos, _ = _middle(data)
    junk = random.Random(36).randbytes(256)
    return data[:pos] + junk + data[pos + len(junk) :]


def log_bad_magic(data: bytes) -> bytes:
    """The last batch's magic byte set to 7 (no such record format); its CRC, which starts after the magic and
    the CRC field (attributes to the end), still matches."""
    pos, _ = _batch_spans(data)[-1]
    return data[: pos + 16] + b"\x07" + data[pos + 17 :]


def log_offsets_backwards(data: bytes) -> bytes:
    """The last batch's base offset set to the first batch's (offsets go backwards; baseOffset is outside the
    CRC, so the batch still validates)."""
    spans = _batch_spans(data)
    if len(spans) < 2:
        raise ValueError(f"{len(spans)} batches: too few to go backwards")
    pos, _ = spans[-1]
    return data[:pos] + data[:8] + data[pos + 8 :]


def log_offsets_backwards_half(data: bytes) -> bytes:
    """Every batch of the second half given the first batch's base offset: recovery's next index entry there
    (every index.interval.bytes) is below the last one."""

    out = bytearray(data)
    for pos, _ in _batch_spans(data):
        if pos > len(data) // 2:
            out[pos : pos + 8] = data[:8]
    return bytes(out)


LOG_DAMAGES: dict[str, Damager] = {
    "zero_filled": log_zero_filled,
    "truncated_0": log_truncated_0,
    "truncated_mid_header": log_truncated_mid_header,
    "truncated_mid_record": log_truncated_mid_record,
    "garbage_middle": log_garbage_middle,
    "bad_magic": log_bad_magic,
    "offsets_backwards": log_offsets_backwards,
}


def segment_log(partition_dir: Path, where: str, how: Damager, name: str) -> Fault:
    """The ``.log`` of the partition's ``older`` (first) or ``active`` (last) segment damaged in place."""
    from kafka_lab.faults import segment_bases, segment_file

    bases = segment_bases(partition_dir)
    if len(bases) < 2:
        raise ValueError(f"{partition_dir} has {len(bases)} segments: no older and active one")
    base = bases[0] if where == "older" else bases[-1]
    path = segment_file(partition_dir, base, ".log")
    f = damage_file(path, how, name)
    f.detail.update(
        partition_dir=str(partition_dir), log_dir=str(partition_dir.parent), base_offset=base, where=where,
        bytes_after=path.stat().st_size,
    )  # fmt: skip
    return f


def log_backwards_without_index(partition_dir: Path, name: str) -> Fault:
    """The active segment's offsets set back in its second half, and its ``.index`` deleted: the loader recovers
    it while listing the segments (not in LogLoader.recoverLog)."""
    f = segment_log(partition_dir, "active", log_offsets_backwards_half, name)
    index = partition_dir / f"{int(str(f.detail['base_offset'])):020d}.index"
    index.unlink()
    f.paths.append(index)
    return f


def marker_content(log_dir: Path, file: str, name: str) -> Fault:
    """A log dir's ``.lock`` or ``.kafka_cleanshutdown`` holding bytes it never holds (another file's, not UTF-8,
    not the 3.7+ marker's JSON): both are opened by name, a lock or an existence test."""
    path = log_dir / file
    if (
        not path.exists()
    ):  # .lock: deleted by FileLock.destroy at the stop in some releases; planted as the dir's
        path.write_bytes(b"")
        st = log_dir.stat()
        os.chown(path, st.st_uid, st.st_gid)
    f = damage_file(path, garbage, name)
    f.detail["log_dir"] = str(log_dir)
    return f


# ---------------------------------------------------------------------------------------------------------------
# Index damage (issue 36 §2): a segment's .index, .timeindex or .txnindex damaged in place, the active segment's
# or an older one's. Each damage is a function of (the file's bytes, what it needs to know of the segment).

# entry sizes: OffsetIndex, TimeIndex, AbortedTxn.TOTAL_SIZE
INDEX_ENTRY = {".index": 8, ".timeindex": 12, ".txnindex": 34}


@dataclass(frozen=True)
class IndexSegment:
    """What an index damage may need: the segment's base offset, its .log's size and its next offset."""

    base: int
    log_size: int
    next_offset: int
    entry: int


def _entries(data: bytes, entry: int) -> list[bytes]:
    return [data[i : i + entry] for i in range(0, len(data) - entry + 1, entry)]


def _aborted_txn(producer_id: int, first: int, last: int, lso: int, version: int = 0) -> bytes:
    """One AbortedTxn entry (AbortedTxn.java: version int16, producerId int64, firstOffset, lastOffset,
    lastStableOffset int64, 34 bytes)."""
    return struct.pack(">hqqqq", version, producer_id, first, last, lso)


def _valid_txn(seg: IndexSegment) -> bytes:
    """A well-formed .txnindex of the segment (one aborted transaction inside it): what the other txnindex
    damages start from (the lab's segments have none: no transactional producer writes the targets)."""
    return _aborted_txn(7, seg.base, seg.base, seg.base)


def ix_zero_filled(data: bytes, seg: IndexSegment) -> bytes:
    """Its length kept (two entries at least), its blocks zeros (a power loss before the data blocks were
    written)."""
    return bytes(max(len(data), 2 * seg.entry))


def ix_empty(data: bytes, seg: IndexSegment) -> bytes:
    """Truncated at 0 bytes."""
    return b""


def ix_one_byte(data: bytes, seg: IndexSegment) -> bytes:
    """Truncated at 1 byte."""
    return (data or b"\x00")[:1]


def ix_mid_entry(data: bytes, seg: IndexSegment) -> bytes:
    """Truncated in the middle of its last entry (its size no multiple of the entry size)."""
    if not data:
        data = _valid_txn(seg) if seg.entry == 34 else bytes(seg.entry)
    return data[: len(data) - seg.entry // 2]


def ix_garbage(data: bytes, seg: IndexSegment) -> bytes:
    """Another file's bytes (seeded: the same on every run), its length kept (two entries at least); the first
    two bytes 0x7f 'E' (an ELF header: a .txnindex entry version 32581)."""
    rnd = random.Random(36)
    n = max(len(data), 2 * seg.entry)
    return (b"\x7fELF" + rnd.randbytes(n))[:n]


def ix_old_last(data: bytes, seg: IndexSegment) -> bytes:
    """One bad entry, the last one: a .timeindex whose last timestamp is 1970-01-01T00:00:01Z (its offset kept);
    the last position of an .index moved into the middle of a batch (its offset kept); a .txnindex entry whose
    last offset is below the segment's base (the only thing TransactionIndex.sanityCheck checks)."""
    if seg.entry == 34:
        return _aborted_txn(7, 0, seg.base - 1, 0)
    ents = _entries(data, seg.entry) or [bytes(seg.entry)]
    last = ents[-1]
    if seg.entry == 12:
        ents[-1] = struct.pack(">q", 1000) + last[8:]
    else:
        rel, pos = struct.unpack(">ii", last)
        ents[-1] = struct.pack(">ii", rel, pos + 5)
    return b"".join(ents)


def ix_out_of_order(data: bytes, seg: IndexSegment) -> bytes:
    """Its entries in reverse order."""
    if seg.entry == 34:
        data = _valid_txn(seg) + _aborted_txn(8, seg.base, seg.next_offset - 1, seg.base)
    return b"".join(reversed(_entries(data, seg.entry)))


def ix_past_end(data: bytes, seg: IndexSegment) -> bytes:
    """One more entry that points past the end of the log: an .index entry for offset next+1000 at a position
    past the .log's size, a .timeindex entry a second later than its last, at offset next+1000, a .txnindex entry
    whose last offset is next+1000."""
    past = seg.next_offset + 1000 - seg.base
    if seg.entry == 34:
        return data + _aborted_txn(7, seg.base, seg.next_offset + 1000, seg.base)
    if seg.entry == 12:
        ents = _entries(data, 12)
        ts = struct.unpack(">q", ents[-1][:8])[0] + 1000 if ents else int(time.time() * 1000)
        return data + struct.pack(">qi", ts, past)
    return data + struct.pack(">ii", past, seg.log_size + 4096)


INDEX_DAMAGES: dict[str, Callable[[bytes, IndexSegment], bytes]] = {
    f.__name__[len("ix_") :]: f
    for f in (ix_zero_filled, ix_empty, ix_one_byte, ix_mid_entry, ix_garbage, ix_old_last, ix_out_of_order,
              ix_past_end)
}  # fmt: skip


def index_damage(partition_dir: Path, suffix: str, which: str, damage: str, name: str) -> Fault:
    """``damage`` (INDEX_DAMAGES) done to the ``suffix`` index of the partition's active segment
    (``which="active"``), its first segment (``"first"``) or its second (``"second"``: a base above 0). A
    .txnindex the segment lacks (no aborted transaction) is created with the .log's owner and mode first."""
    from kafka_lab.faults import batches, segment_bases, segment_file

    bases = segment_bases(partition_dir)
    base = {"active": bases[-1], "first": bases[0], "second": bases[1]}[which]
    log = segment_file(partition_dir, base, ".log")
    bs = batches(log)
    seg = IndexSegment(base, log.stat().st_size, bs[-1].last_offset + 1 if bs else base, INDEX_ENTRY[suffix])
    path = segment_file(partition_dir, base, suffix)
    created = not path.exists()
    if created:
        path.write_bytes(b"" if damage in ("empty", "zero_filled", "garbage") else _valid_txn(seg))
        st = log.stat()
        os.chown(path, st.st_uid, st.st_gid)
        path.chmod(st.st_mode & 0o7777)
    f = damage_file(path, lambda data: INDEX_DAMAGES[damage](data, seg), name)
    f.detail.update(
        partition_dir=str(partition_dir), log_dir=str(partition_dir.parent), base_offset=base, which=which,
        created=created, bytes_after=path.stat().st_size, next_offset=seg.next_offset,
    )  # fmt: skip
    return f


# -- file-type damage (issue 36 §2): what disks and people leave in a file's place, not in its bytes ----------------
TYPE_KINDS = ("missing", "unreadable", "symlink", "symlink_dangling", "fifo", "directory")


def type_damage(path: Path, kind: str, name: str, *, elsewhere: Path) -> Fault:
    """``path`` (a file the broker opens at its start) replaced by ``kind``: gone (``missing``), owned by root and
    mode 0600 (``unreadable`` by the broker user), a symlink to a valid copy in ``elsewhere`` (outside the log dirs,
    owned like the file) or to nothing (``symlink_dangling``), a FIFO or an empty directory, each owned like the
    file was (so that only its type differs). A file that did not exist (a segment without a ``.txnindex``) is
    taken as owned like its dir."""
    st = os.lstat(path) if os.path.lexists(path) else os.lstat(path.parent)
    uid, gid = st.st_uid, st.st_gid
    existed = os.path.lexists(path)
    detail: dict[str, object] = {
        "file": path.name, "kind": kind, "existed": existed, "log_dir": str(_log_dir_of(path)),
        "partition_dir": str(path.parent) if _log_dir_of(path) != path.parent else None,
    }  # fmt: skip
    if kind == "unreadable":
        if not existed:
            path.write_bytes(b"")
        os.chown(path, 0, 0)
        path.chmod(0o600)
        return Fault(name, [path], detail)
    if kind == "symlink":
        elsewhere.mkdir(parents=True, exist_ok=True)
        target = elsewhere / path.name
        if existed:
            os.rename(path, target)  # the same bytes, inode and owner, moved away
        else:
            target.write_bytes(b"")
            os.chown(target, uid, gid)
        detail["target"] = str(target)
    elif existed:
        path.unlink()
    if kind == "missing":
        return Fault(name, [path], detail)
    if kind == "symlink":
        os.symlink(detail["target"], path)  # type: ignore[arg-type]
    elif kind == "symlink_dangling":
        target = elsewhere / f"gone-{path.name}"
        os.symlink(target, path)
        detail["target"] = str(target)
    elif kind == "fifo":
        os.mkfifo(path, 0o644)
    elif kind == "directory":
        path.mkdir(0o755)
    else:
        raise ValueError(f"unknown file-type damage {kind!r}")
    os.lchown(path, uid, gid)
    return Fault(name, [path], detail)


def _log_dir_of(path: Path) -> Path:
    """The log dir holding ``path``: its dir, or its partition dir's (a partition dir's name ends in -<n>)."""
    parent = path.parent
    return parent.parent if parent.name.rsplit("-", 1)[-1].isdigit() else parent
