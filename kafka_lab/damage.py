"""Power-loss damage to a log dir's small files, planted into a stopped lab broker's files: a checkpoint
zero-filled, truncated mid-entry, garbage, or left empty (what a crash without fsync'd writes, or a full disk, leaves
behind). What the broker then does is kafka_ops.broker.failure_channel's rule; the lab is its judge."""

from __future__ import annotations

import os
from collections.abc import Callable
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
