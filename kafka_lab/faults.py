"""Faults planted into a stopped lab broker's log dirs, as operators and crashes leave them.

Each function changes files under a partition dir (``<log dir>/<topic>-<partition>``) or a log dir root and
returns a :class:`Fault` naming what it changed, for the test to hand to the observation. Segments are chosen
by base offset; by default a *rolled* fault takes the oldest segment (the one retention reaches first) and a
tail fault the active (last) one. Ownership faults need root (``chown root``); the broker runs as ``kafka``.
"""

from __future__ import annotations

import os
import random
import re
import shutil
import struct
from dataclasses import dataclass, field
from pathlib import Path

MAX_INDEX_BYTES = 10 * 1024 * 1024  # log.index.size.max.bytes / segment.index.bytes default
OFFSET_ENTRY, TIME_ENTRY = 8, 12
LOG_OVERHEAD = 12  # base offset (8) + length (4)
RECORD_BATCH_OVERHEAD = 61  # v2 batch header; the records (or the compressed blob) follow
CLEAN_SHUTDOWN = ".kafka_cleanshutdown"


@dataclass
class Fault:
    """What a fault changed: its name, the paths it touched, and details (offsets, sizes) for assertions."""

    name: str
    paths: list[Path]
    detail: dict[str, object] = field(default_factory=dict)

    @property
    def partition_dir(self) -> Path | None:
        return Path(str(self.detail["partition_dir"])) if "partition_dir" in self.detail else None


@dataclass(frozen=True)
class Batch:
    position: int
    base_offset: int
    last_offset: int
    size: int
    max_timestamp: int


def segment_bases(partition_dir: Path) -> list[int]:
    """Base offsets of the partition's segments, oldest first (the last is the active segment)."""
    return sorted(
        int(p.name[:-4]) for p in partition_dir.glob("*.log") if re.fullmatch(r"\d{20}\.log", p.name)
    )


def segment_file(partition_dir: Path, base: int, suffix: str) -> Path:
    return partition_dir / f"{base:020d}{suffix}"


def _rolled(partition_dir: Path, base: int | None) -> int:
    bases = segment_bases(partition_dir)
    if len(bases) < 2:
        raise ValueError(f"{partition_dir} has no rolled segment (segments: {bases})")
    if base is None:
        return bases[0]
    if base not in bases[:-1]:
        raise ValueError(f"{base} is not a rolled segment of {partition_dir} ({bases})")
    return base


def _active(partition_dir: Path) -> int:
    bases = segment_bases(partition_dir)
    if not bases:
        raise ValueError(f"{partition_dir} has no segment")
    return bases[-1]


def batches(log: Path) -> list[Batch]:
    """The batches of a ``.log`` by their 12-byte framing (stops at a torn or impossible length)."""
    data = log.read_bytes()
    out, pos = [], 0
    while pos + RECORD_BATCH_OVERHEAD <= len(data):
        base, length = struct.unpack_from(">qi", data, pos)
        if length < RECORD_BATCH_OVERHEAD - LOG_OVERHEAD or pos + LOG_OVERHEAD + length > len(data):
            break
        delta, _, max_ts = struct.unpack_from(">iqq", data, pos + 23)
        out.append(Batch(pos, base, base + delta, LOG_OVERHEAD + length, max_ts))
        pos += LOG_OVERHEAD + length
    return out


def _pad(path: Path, entry: int, max_index_bytes: int) -> tuple[int, int]:
    before = path.stat().st_size
    target = max_index_bytes - max_index_bytes % entry  # AbstractIndex preallocates roundDown(max, entrySize)
    with open(path, "r+b") as f:
        f.truncate(target)  # the new bytes read as zeros, as an untrimmed preallocated index
    return before, target


def pad_time_index(
    partition_dir: Path, base: int | None = None, max_index_bytes: int = MAX_INDEX_BYTES
) -> Fault:
    """A rolled segment's ``.timeindex`` zero-padded to its preallocated size, as when the trim at roll failed."""
    base = _rolled(partition_dir, base)
    path = segment_file(partition_dir, base, ".timeindex")
    before, after = _pad(path, TIME_ENTRY, max_index_bytes)
    return Fault(
        "padded_timeindex",
        [path],
        {
            "partition_dir": str(partition_dir),
            "base_offset": base,
            "size_before": before,
            "size_after": after,
        },
    )


def pad_time_index_root_owned(
    partition_dir: Path, base: int | None = None, max_index_bytes: int = MAX_INDEX_BYTES
) -> Fault:
    """The padded ``.timeindex`` also owned by root with mode 600 (the broker user can neither read nor trim it)."""
    fault = pad_time_index(partition_dir, base, max_index_bytes)
    os.chown(fault.paths[0], 0, 0)
    fault.paths[0].chmod(0o600)
    fault.name = "padded_timeindex_root_owned"
    return fault


def unreadable_time_index(partition_dir: Path, base: int | None = None) -> Fault:
    """A rolled segment's ``.timeindex`` with mode 000 (still owned by the broker user, which cannot read it)."""
    base = _rolled(partition_dir, base)
    path = segment_file(partition_dir, base, ".timeindex")
    path.chmod(0o000)
    return Fault("unreadable_timeindex", [path], {"partition_dir": str(partition_dir), "base_offset": base})


def pad_offset_index(
    partition_dir: Path, base: int | None = None, max_index_bytes: int = MAX_INDEX_BYTES
) -> Fault:
    """A rolled segment's ``.index`` zero-padded to its preallocated size (untrimmed)."""
    base = _rolled(partition_dir, base)
    path = segment_file(partition_dir, base, ".index")
    before, after = _pad(path, OFFSET_ENTRY, max_index_bytes)
    return Fault(
        "padded_index",
        [path],
        {
            "partition_dir": str(partition_dir),
            "base_offset": base,
            "size_before": before,
            "size_after": after,
        },
    )


def read_only_log(partition_dir: Path, base: int | None = None) -> Fault:
    """A rolled segment's ``.log`` with mode 444 (readable, not writable, by its owner the broker user)."""
    base = _rolled(partition_dir, base)
    path = segment_file(partition_dir, base, ".log")
    path.chmod(0o444)
    return Fault("read_only_log", [path], {"partition_dir": str(partition_dir), "base_offset": base})


def root_owned_partition_dir(partition_dir: Path) -> Fault:
    """The partition dir owned by root with mode 700: the broker user cannot list or enter it."""
    os.chown(partition_dir, 0, 0)
    partition_dir.chmod(0o700)
    return Fault("root_owned_partition_dir", [partition_dir], {"partition_dir": str(partition_dir)})


def torn_tail(partition_dir: Path, nbytes: int = 100, seed: int = 7) -> Fault:
    """Random garbage appended to the active segment's ``.log``, as a torn write leaves it."""
    base = _active(partition_dir)
    path = segment_file(partition_dir, base, ".log")
    size = path.stat().st_size
    garbage = random.Random(seed).randbytes(nbytes)
    with open(path, "ab") as f:
        f.write(garbage)
    return Fault(
        "torn_tail",
        [path],
        {
            "partition_dir": str(partition_dir),
            "base_offset": base,
            "valid_bytes": size,
            "garbage_bytes": nbytes,
        },
    )


def zero_filled_tail(partition_dir: Path, nbytes: int = 4096) -> Fault:
    """Zeros after the last batch of the active segment's ``.log``: what a power loss leaves when the filesystem
    had extended the file (its size committed) but not written the data blocks. Unlike random garbage, whose
    size field usually points past the end (read as a partial batch: the end), a zero size field is below the
    minimum record overhead: FileLogInputStream.nextBatch throws CorruptRecordException there."""
    base = _active(partition_dir)
    path = segment_file(partition_dir, base, ".log")
    size = path.stat().st_size
    with open(path, "ab") as f:
        f.write(bytes(nbytes))
    return Fault(
        "zero_filled_tail",
        [path],
        {"partition_dir": str(partition_dir), "base_offset": base, "valid_bytes": size, "zero_bytes": nbytes},
    )


def corrupt_batch(partition_dir: Path, base: int | None = None) -> Fault:
    """Flip bytes in the payload of the middle batch of a segment (default: the active one): its CRC fails.

    ``detail`` has the batch's offsets and position: a recovery truncates the log there and drops every later
    batch (acknowledged records included).
    """
    base = _active(partition_dir) if base is None else base
    path = segment_file(partition_dir, base, ".log")
    found = batches(path)
    if len(found) < 3:
        raise ValueError(f"{path} has {len(found)} batches: too few to corrupt one in the middle")
    batch = found[len(found) // 2]
    at = batch.position + RECORD_BATCH_OVERHEAD + (batch.size - RECORD_BATCH_OVERHEAD) // 2
    with open(path, "r+b") as f:
        f.seek(at)
        chunk = f.read(4)
        f.seek(at)
        f.write(bytes(b ^ 0xFF for b in chunk))
    return Fault(
        "corrupt_batch",
        [path],
        {
            "partition_dir": str(partition_dir),
            "base_offset": base,
            "batch_base_offset": batch.base_offset,
            "batch_last_offset": batch.last_offset,
            "batch_position": batch.position,
            "flipped_at": at,
            "batches": len(found),
            "log_bytes": path.stat().st_size,
        },
    )


def delete_indexes(
    partition_dir: Path, base: int | None = None, suffixes: tuple[str, ...] = (".index", ".timeindex")
) -> Fault:
    """A rolled segment's index files deleted (default: both)."""
    base = _rolled(partition_dir, base)
    paths = [segment_file(partition_dir, base, s) for s in suffixes]
    for p in paths:
        p.unlink()
    return Fault("deleted_indexes", paths, {"partition_dir": str(partition_dir), "base_offset": base})


def misaligned_index(partition_dir: Path, base: int | None = None, extra: int = 3) -> Fault:
    """A rolled segment's ``.index`` whose size is not a multiple of 8 (``extra`` stray bytes at its end)."""
    base = _rolled(partition_dir, base)
    path = segment_file(partition_dir, base, ".index")
    with open(path, "ab") as f:
        f.write(b"\x01" * extra)
    return Fault(
        "misaligned_index",
        [path],
        {"partition_dir": str(partition_dir), "base_offset": base, "size": path.stat().st_size},
    )


def lost_and_found(log_dir: Path) -> Fault:
    """``lost+found`` in a log dir root, as mkfs leaves it on a mount point (root, mode 700)."""
    path = log_dir / "lost+found"
    path.mkdir()
    os.chown(path, 0, 0)
    path.chmod(0o700)
    return Fault("lost_and_found", [path], {"log_dir": str(log_dir)})


def mismatched_meta_properties(log_dir: Path, cluster_id: str = "AAAAAAAAAAAAAAAAAAAAAA") -> Fault:
    """``meta.properties`` of one log dir naming another cluster (``cluster.id``) than the others; before 2.3,
    whose files hold no cluster.id (BrokerMetadataCheckpoint @2.2.0), another broker (``broker.id`` 2)."""
    path = log_dir / "meta.properties"
    text = path.read_text()
    old = re.search(r"^cluster\.id=(.*)$", text, re.M)
    if old is None:
        broker = re.search(r"^broker\.id=(.*)$", text, re.M)
        if broker is None:
            raise ValueError(f"{path} has neither cluster.id nor broker.id")
        now = "2" if broker[1] != "2" else "3"
        path.write_text(text.replace(broker.group(0), f"broker.id={now}"))
        return Fault(
            "mismatched_meta_properties",
            [path],
            {"log_dir": str(log_dir), "was": broker[1], "now": now, "key": "broker.id"},
        )
    path.write_text(text.replace(old.group(0), f"cluster.id={cluster_id}"))
    return Fault(
        "mismatched_meta_properties", [path], {"log_dir": str(log_dir), "was": old[1], "now": cluster_id}
    )


def remove_clean_shutdown(log_dir: Path) -> Fault:
    """The clean-shutdown marker removed from a log dir root, as after SIGKILL."""
    path = log_dir / CLEAN_SHUTDOWN
    existed = path.exists()
    path.unlink(missing_ok=True)
    return Fault("removed_clean_shutdown", [path], {"log_dir": str(log_dir), "existed": existed})


def recovery_point_to_zero(partition_dir: Path) -> Fault:
    """Set the partition's entry of its log dir's ``recovery-point-offset-checkpoint`` to 0, as when the broker
    died before its first checkpoint: after an unclean stop, recovery then re-reads every segment."""
    from kafka_ops.engine import checkpoints as ckpt

    path = partition_dir.parent / ckpt.RECOVERY_POINT
    topic, part = partition_dir.name.rsplit("-", 1)
    st = path.stat()
    entries = ckpt.read_offset_checkpoint(str(path))
    before = entries.get((topic, int(part)))
    entries[(topic, int(part))] = 0
    path.write_text(ckpt.encode_offset_checkpoint(entries))
    os.chown(path, st.st_uid, st.st_gid)
    return Fault("recovery_point_to_zero", [path], {"partition": partition_dir.name, "was": before})


def corrupt_batch_behind_recovery(partition_dir: Path) -> Fault:
    """A corrupt batch in the second segment, and the partition's recovery point at 0: an unclean start recovers
    from the first segment, truncates the second at that batch and (LogLoader.recoverLog) deletes every later
    segment. A clean start reads none of it."""
    f = corrupt_batch(partition_dir, segment_bases(partition_dir)[1])
    rp = recovery_point_to_zero(partition_dir)
    f.name = "corrupt_batch_behind_recovery"
    f.paths += rp.paths
    f.detail["recovery_point_was"] = rp.detail["was"]
    return f


def leftover_files(partition_dir: Path, base: int | None = None) -> Fault:
    """What a broker stopped in the middle of deletions and a cleaning leaves: a ``.deleted`` copy of a closed
    segment's ``.log`` and ``.index`` (retention renames a segment's files ``.deleted`` and deletes them
    ``file.delete.delay.ms`` later) and the first segment's records as ``<first base>.log.cleaned`` (a cleaning's
    output before its rename to ``.swap``), and ``backup.deleted``, not a segment file's name (the loader goes by the
    suffix alone). The originals stay; owner and mode are the originals'."""
    bases = segment_bases(partition_dir)
    # a closed segment other than the first when there is one (the first gets the .cleaned)
    base = _rolled(partition_dir, base if base is not None or len(bases) < 3 else bases[1])
    first = bases[0]
    planted = []
    for src, dst in (
        (segment_file(partition_dir, base, ".log"), segment_file(partition_dir, base, ".log.deleted")),
        (segment_file(partition_dir, base, ".index"), segment_file(partition_dir, base, ".index.deleted")),
        (segment_file(partition_dir, first, ".log"), segment_file(partition_dir, first, ".log.cleaned")),
    ):
        dst.write_bytes(src.read_bytes())
        st = src.stat()
        os.chown(dst, st.st_uid, st.st_gid)
        dst.chmod(st.st_mode & 0o7777)
        planted.append(dst)
    planted.append(
        _owned_like(partition_dir / "backup.deleted", segment_file(partition_dir, first, ".index"))
    )
    return Fault("leftover_files", planted, {"partition_dir": str(partition_dir), "base_offset": base})


def _owned_like(path: Path, like: Path, data: bytes = b"kafka-ops lab\n") -> Path:
    path.write_bytes(data)
    st = like.stat()
    os.chown(path, st.st_uid, st.st_gid)
    path.chmod(st.st_mode & 0o7777)
    return path


def unparseable_leftover(partition_dir: Path, name: str = "backup.log.cleaned") -> Fault:
    """A leftover someone named by hand in a partition dir. ``backup.log.cleaned``: the loader reads a
    ``.cleaned`` file's base offset from its name (2.0+), Long.parseLong('backup') throws NumberFormatException
    and the broker exits; 1.1 deletes it unread. ``backup.swap`` (not a log or index swap): parsed from 3.0 only."""
    like = segment_file(partition_dir, segment_bases(partition_dir)[0], ".log")
    path = _owned_like(partition_dir / name, like)
    return Fault("unparseable_leftover", [path], {"partition_dir": str(partition_dir)})


# --------------------------------------------------------------------------------- a log dir's own damage
def log_dir_without_meta(log_dir: Path) -> Fault:
    """The dir's ``meta.properties`` gone, its partitions kept (a restore that skipped dotfiles-like small files,
    a hand cleanup): KRaft exits ("No `meta.properties` found"), ZooKeeper mode writes a new one and adopts the
    partitions (KafkaServer.startup)."""
    path = log_dir / "meta.properties"
    path.unlink()
    return Fault("log_dir_without_meta", [path], {"log_dir": str(log_dir)})


def emptied_log_dir(log_dir: Path) -> Fault:
    """Everything in the dir removed, the dir kept (a volume that came back empty: a new disk, a failed mount
    whose mount point is seen instead)."""
    gone = sorted(log_dir.iterdir())
    for p in gone:
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p)
        else:
            p.unlink()
    return Fault("emptied_log_dir", [log_dir], {"log_dir": str(log_dir), "removed": len(gone)})


def missing_log_dir(log_dir: Path) -> Fault:
    """The dir itself gone (an unmounted volume whose mount point was removed, a typo in log.dirs)."""
    shutil.rmtree(log_dir)
    return Fault("missing_log_dir", [log_dir], {"log_dir": str(log_dir)})


def copied_meta_properties(src_dir: Path, dst_dir: Path) -> Fault:
    """``src_dir``'s ``meta.properties`` copied over ``dst_dir``'s (a dir cloned from another): the same
    ``directory.id`` twice from 3.7 (MetaPropertiesEnsemble.verify: "Duplicate directory ID"), identical files
    before."""
    path = dst_dir / "meta.properties"
    was = path.read_bytes()
    path.write_bytes((src_dir / "meta.properties").read_bytes())
    return Fault(
        "copied_meta_properties",
        [path],
        {"log_dir": str(dst_dir), "from": str(src_dir), "changed": was != path.read_bytes()},
    )


def copy_partition_dir(source: Path, target: Path, replace: dict[str, bytes] | None = None) -> Path:
    """``source``'s regular files copied into a new dir ``target`` beside it, owner, mode and times kept (as the
    broker user left them); ``replace``: file name -> the bytes written instead of the source's."""
    target.mkdir()
    st = source.stat()
    os.chown(target, st.st_uid, st.st_gid)
    target.chmod(st.st_mode & 0o7777)
    for f in sorted(source.iterdir()):
        if not f.is_file() or f.is_symlink():
            continue
        dst = target / f.name
        dst.write_bytes((replace or {}).get(f.name) or f.read_bytes())
        fs = f.stat()
        os.chown(dst, fs.st_uid, fs.st_gid)
        dst.chmod(fs.st_mode & 0o7777)
        os.utime(dst, ns=(fs.st_atime_ns, fs.st_mtime_ns))
    return target


def root_files(log_dir: Path) -> Fault:
    """Regular files in a log dir's root that are no checkpoint: an operator's backup, and one named like a
    partition (``t00-7``) and like a -delete dir. LogManager.loadLogs lists the sub-directories only
    (``listFiles.filter(_.isDirectory)``): the broker starts and ignores them."""
    like = log_dir / "meta.properties"
    made = [
        _owned_like(log_dir / name, like, b"kafka-ops lab: not a partition\n")
        for name in ("backup.tar.gz", "t00-7", f"t00-8.{'0' * 32}-delete")
    ]
    return Fault("root_files", made, {"log_dir": str(log_dir)})


STRAY_DIR_UUID = "3c9e1f0a5b7d4c2e8a6f1b3d5e7a9c0b"  # LogManager: <tp>.<uuid without dashes>-stray


def stray_dir(partition_dir: Path) -> Fault:
    """A ``<tp>.<uuid>-stray`` dir beside ``partition_dir``, a copy of its files (owner, mode and times kept): what
    a 3.7+ KRaft broker leaves when it moves a stray log aside (a downgrade or a restore then meets it). 3.6.1+
    load it as a stray log and keep it; before, the name does not parse as topic-partition and the broker exits
    (kafka_ops.broker.suffixed_dirs)."""
    target = copy_partition_dir(
        partition_dir, partition_dir.parent / f"{partition_dir.name}.{STRAY_DIR_UUID}-stray"
    )
    return Fault("stray_dir", [target], {"partition_dir": str(target), "source": str(partition_dir)})


def stray_partition(partition_dir: Path, topic: str = "strayed") -> Fault:
    """A partition dir of a topic the cluster metadata does not have, as a topic deleted while the broker was down
    or a backup restore leaves it: a copy of ``partition_dir``'s files (owner, mode and times kept) as
    ``<topic>-<p>`` next to it, its ``partition.metadata`` naming a fresh random topic id. A KRaft broker takes it
    for a stray at its start (kafka_ops.broker.strays); a ZooKeeper-mode broker cannot tell."""
    import base64

    partition = partition_dir.name.rsplit("-", 1)[1]
    topic_id = base64.urlsafe_b64encode(random.randbytes(16)).decode().rstrip("=")
    target = copy_partition_dir(
        partition_dir,
        partition_dir.parent / f"{topic}-{partition}",
        {"partition.metadata": f"version: 0\ntopic_id: {topic_id}\n".encode()},
    )
    return Fault(
        "stray_partition",
        [target],
        {"partition_dir": str(target), "source": str(partition_dir), "topic_id": topic_id},
    )
