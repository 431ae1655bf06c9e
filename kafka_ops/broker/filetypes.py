"""Something else than a regular file where the broker opens one at its start (issue 36 §2): a FIFO, a symlink, a
directory. The rule the next-start plan follows; the lab's type-* trials (tests/lab/scenarios.py TYPE_DAMAGE) judge
it on 2.8.2, 3.5.2 and 3.7.2.

From apache/kafka at 2.8.2, 3.5.2 and 3.7.1 (the same code in each unless named):

* **A FIFO read whole at the start: the start hangs.** Java opens a file it reads with ``O_RDONLY``
  (``Files.newBufferedReader``, ``FileInputStream``), and on Linux such an open of a FIFO blocks until a writer
  opens it: nobody does. ``meta.properties`` is read first of all (ZooKeeper mode: ``BrokerMetadataCheckpoint.read``
  -> ``Utils.loadProps``; KRaft: ``MetaPropertiesEnsemble.Loader`` -> ``PropertiesUtils.readPropertiesFile``), then
  ``LogManager.loadLogs`` reads each dir's ``recovery-point-offset-checkpoint`` and ``log-start-offset-checkpoint``
  (``CheckpointFile.read`` -> ``Files.newBufferedReader``, CheckpointFile.scala@2.8.2:117, server-common
  CheckpointFile.java@3.7.1), and each partition's load its ``leader-epoch-checkpoint`` (the same reader) and
  ``partition.metadata`` (``PartitionMetadataFile.read``, Files.newBufferedReader). The broker never becomes ready
  and never exits (lab 3.7.2: meta.properties, recovery-point-offset-checkpoint, leader-epoch-checkpoint, killed after
  60 s without a line after the load began).
* **``replication-offset-checkpoint`` a FIFO** is read when the ReplicaManager creates the dir's first replica after
  loading (its lazy high-watermark checkpoints, ReplicaManager.scala@2.8.2:260-261, @3.7.1:308-309). In KRaft mode
  that is the broker publishing the metadata image, which its start waits for before it is ready
  (BrokerServer.startup): the start hangs (lab 3.5.2). In ZooKeeper mode the broker is ready first and the
  LeaderAndIsr request's thread blocks: it starts (lab 2.8.2), serves none of that dir's partitions and cannot stop
  cleanly. ``cleaner-offset-checkpoint`` a FIFO blocks only the cleaner thread: the broker starts (lab 2.8.2, 3.5.2).
* **The latest producer ``.snapshot`` a FIFO**: the listing skips it (``Files.isRegularFile``), and loading the
  producer state writes a snapshot at the offsets it reloads to (``UnifiedLog.rebuildProducerState`` ->
  ``takeSnapshot``, UnifiedLog.scala@3.7.1:2166-2230) under that very name: ``FileChannel.open(CREATE, WRITE)`` of
  a FIFO opens it write-only, which blocks until a reader comes: the start hangs (lab 3.7.2). The same code is
  older than 3.7: lab 2.8.2 hangs too (a directory or a link into nothing there: the dir offline); before 2.8 (not run), "unknown".
* **Not a FIFO's open that blocks:** ``.lock`` (``FileChannel.open(CREATE, READ, WRITE)``: ``O_RDWR``, which does not
  block on a FIFO, and ``tryLock`` succeeds: lab 3.7.2 started), the segments' indexes (``RandomAccessFile(file,
  "rw")``, lazily), a ``.log`` (``dir.listFiles if file.isFile``: a FIFO is not listed as a segment at all,
  LogLoader.scala@3.7.1:304), a producer snapshot (``Files.isRegularFile`` filter, ProducerStateManager
  .isSnapshotFile@3.7.1:735): the start goes on.
* **The active segment's ``.index`` or ``.timeindex`` not a regular file: the dir goes offline.** Loading ends with
  ``activeSegment.resizeIndexes(maxIndexSize)`` (Log.scala@2.8.2:828, LogLoader.scala@3.5.2:166, @3.7.1:158) ->
  ``AbstractIndex.resize`` -> ``RandomAccessFile(file, "rw").setLength``: on a FIFO "Illegal seek", a directory
  cannot be opened ("Is a directory"): an IOException, "Error while loading log dir", the dir offline (lab
  3.7.2: a FIFO ``.index``). A closed segment's index is not opened at load (``LazyIndex``; ``sanityCheck`` only
  asks ``offsetIndexFile().exists()``, LogSegment.scala@2.8.2:80-91): its FIFO goes unnoticed (lab 3.7.2).
* **``.kafka_cleanshutdown`` a FIFO on a KRaft broker from 3.7.0** (KAFKA-15582): ``BrokerServer.startup`` asks
  ``LogManager.readBrokerEpochFromCleanShutdownFiles`` (when every log dir is live) before loading, which reads each
  marker with ``Utils.readFileAsString`` (CleanShutdownFileHandler.read@3.7.1:90-99, LogManager.scala@3.7.1:1505,
  BrokerServer.scala@3.7.1:374-380): the start hangs (lab 4.3.1). Before 3.7 and in ZooKeeper mode nobody reads it:
* **``.kafka_cleanshutdown`` is whatever stands under the name**: ``loadLogs`` asks ``exists()`` (which follows a
  link) and deletes it with ``Files.deleteIfExists`` before listing the dir (LogManager.scala@2.8.2:316-322,
  @3.7.1:437-442): a FIFO, an empty directory or a link to a file count as the marker (a clean shutdown) and are
  removed; a dangling link is no marker (the dir is recovered) and stays. (An empty dir of that name is therefore no
  "not a topic-partition directory" exit: it is gone before the listing; lab 3.7.2.)
* **``.lock`` a dangling symlink** whose target's directory does not exist: ``FileChannel.open(CREATE)`` follows
  the link and fails (NoSuchFileException): "Disk error while locking directory", the dir offline
  (LogManager.lockLogDirs, LogManager.scala@2.8.2:228-242, @3.7.1:265-279; lab 3.7.2).

Facts are from ``lstat``, ``readlink``, a ``stat`` of a link's target (whether it exists) and the listing of an
``lstat``-ed directory: nothing here opens a FIFO or reads a file through a link.
"""

from __future__ import annotations

import os
import stat

from kafka_ops.broker.meta import broker_mode
from kafka_ops.engine import checkpoints as ckpt
from kafka_ops.engine import versions
from kafka_ops.engine.layout import METADATA_TOPIC
from kafka_ops.engine.logdir import FileInfo
from kafka_ops.facts.model import HostFacts, LogDirFacts, PartitionFacts

FIFO = "a FIFO (named pipe)"
LOCK = ".lock"
# read whole with a blocking open while the start loads, in the log dir's root / in a partition dir
ROOT_READS = {
    ckpt.META_PROPERTIES: "the broker reads it before anything else (meta.properties)",
    ckpt.RECOVERY_POINT: "LogManager.loadLogs reads it (CheckpointFile.read, Files.newBufferedReader)",
    ckpt.LOG_START: "LogManager.loadLogs reads it (CheckpointFile.read, Files.newBufferedReader)",
}
PARTITION_READS = {
    ckpt.LEADER_EPOCH: "the partition's load reads it (LeaderEpochFileCache, Files.newBufferedReader)",
    ckpt.PARTITION_METADATA: "the partition's load reads its topic id (PartitionMetadataFile.read)",
}
CHECK = "DIR005"


def _lkind(path: str) -> str | None:
    """What stands at ``path`` (lstat, never followed): "fifo", "dir", "link", "file", or None if nothing."""
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return None
    if stat.S_ISFIFO(mode):
        return "fifo"
    if stat.S_ISDIR(mode):
        return "dir"
    if stat.S_ISLNK(mode):
        return "link"
    return "file"


def _hang_reason(path: str, why: str) -> str:
    return (
        f"{path} is a FIFO (named pipe): {why}, and opening a FIFO to read blocks until a writer opens it, which "
        "nobody does: the start hangs, neither ready nor exiting"
    )


def root_hang(h: HostFacts, ldf: LogDirFacts, *, meta_only: bool = False) -> tuple[str, str] | None:
    """A FIFO in ``ldf``'s root that the start reads whole: (reason, check) of the hang, or None."""
    if not ldf.scan.exists:
        return None
    for name, why in ROOT_READS.items():
        if meta_only and name != ckpt.META_PROPERTIES:
            continue
        path = os.path.join(ldf.path, name)
        if _lkind(path) == "fifo":
            return _hang_reason(path, why), "DIR002" if name == ckpt.META_PROPERTIES else CHECK
    return None


def replication_hang(h: HostFacts) -> tuple[str, str] | None:
    """A FIFO replication-offset-checkpoint in a dir holding partitions, on a KRaft broker: its start hangs."""
    if broker_mode(h) != "kraft":
        return None
    for ldf in h.log_dirs:
        path = os.path.join(ldf.path, ckpt.REPLICATION)
        if ldf.scan.exists and _lkind(path) == "fifo" and _holds_partitions(ldf):
            why = (
                "the ReplicaManager reads it when it creates the dir's first replica, while the KRaft broker "
                "publishes the metadata image its start waits for"
            )
            return _hang_reason(path, why), CHECK
    return None


def unknowns(h: HostFacts) -> list[dict[str, str]]:
    """What the plan cannot decide about these files for lack of the broker's mode."""
    if broker_mode(h) != "unknown":
        return []
    return [
        {
            "what": f"whether the start hangs on {os.path.join(ldf.path, ckpt.REPLICATION)}, a FIFO (KRaft: it "
            "hangs; ZooKeeper mode: it starts and does not serve that dir)",
            "reason": "the broker's mode is unknown (process.roles, zookeeper.connect)",
        }
        for ldf in h.log_dirs
        if ldf.scan.exists
        and _lkind(os.path.join(ldf.path, ckpt.REPLICATION)) == "fifo"
        and _holds_partitions(ldf)
    ]


def _holds_partitions(ldf: LogDirFacts) -> bool:
    return any(n.topic != METADATA_TOPIC for _, n in ldf.scan.partition_names)


def marker_hang(h: HostFacts) -> tuple[str, str] | None:
    """A FIFO .kafka_cleanshutdown that a KRaft 3.7+ broker reads for its epoch before loading, or None (the
    caller asks only when every log dir is live)."""
    if broker_mode(h) != "kraft" or not versions.has("json_clean_shutdown", h.kafka_version, unknown=False):
        return None
    for ldf in h.log_dirs:
        path = os.path.join(ldf.path, ckpt.CLEAN_SHUTDOWN)
        if ldf.scan.exists and _lkind(path) == "fifo":
            why = (
                "the KRaft broker reads its broker epoch from every log dir's marker before loading "
                "(LogManager.readBrokerEpochFromCleanShutdownFiles)"
            )
            return _hang_reason(path, why), "SHUT001"
    return None


def partition_hang(h: HostFacts, pf: PartitionFacts) -> tuple[str, str] | None:
    """A FIFO in the partition dir that its load reads whole (or rewrites: the latest producer snapshot, 3.7+),
    or None (from the scan's lstat)."""
    for f in pf.part.other_files:
        name = f.path.rsplit("/", 1)[-1]
        if f.kind == FIFO and name in PARTITION_READS:
            return _hang_reason(f.path, PARTITION_READS[name]), CHECK
    snap = latest_snapshot_fifo(pf)
    if snap is not None and snapshot_written_at_load(h.kafka_version):
        why = "loading the producer state writes a snapshot under its name (UnifiedLog.rebuildProducerState)"
        return _hang_reason(snap, why).replace("to read blocks", "to write blocks"), CHECK
    return None


def snapshot_written_at_load(version: versions.Version | None) -> bool:
    """Whether the start's producer-state load writes a snapshot under the latest one's name on this release: the
    lab measured it on 2.8.2 and 3.7.2 (a FIFO there hangs the start, a directory or a link into nothing takes the
    dir offline); no release before 2.8 was run with it, nor an unknown version: False (the plan's "unknown")."""
    return version is not None and versions.norm(version) >= (2, 8, 0)


def latest_snapshot_fifo(pf: PartitionFacts) -> str | None:
    """The partition's latest producer snapshot, when it is a FIFO."""
    latest = _latest_snapshot(pf)
    return latest.path if latest is not None and latest.kind == FIFO else None


def _latest_snapshot(pf: PartitionFacts) -> FileInfo | None:
    snaps = [s.snapshot for s in pf.part.segments if s.snapshot is not None]
    snaps += [f for f in pf.part.other_files if f.path.endswith(".snapshot")]
    if not snaps:
        return None
    return max(snaps, key=lambda f: f.path.rsplit("/", 1)[-1])  # 20-digit names: by name is by offset


def latest_snapshot_unwritable(pf: PartitionFacts) -> tuple[str, str] | None:
    """The latest producer snapshot a directory, or a symlink to nothing in a directory that does not exist:
    (path, what the write under its name throws), or None. Loading the producer state writes a snapshot under that
    name (the FIFO's case above): ``FileChannel.open(CREATE, WRITE)`` of a directory throws 'Is a directory', through
    such a link NoSuchFileException, an IOException (lab 3.7.2 type-snapshot_directory, _symlink_dangling: the dir
    offline)."""
    latest = _latest_snapshot(pf)
    if latest is None:
        return None
    if latest.is_dir:
        return latest.path, "'Is a directory'"
    if latest.kind == "a symbolic link" and _dangling_into_nothing(latest.path):
        return latest.path, "NoSuchFileException through the link"
    return None


def active_index_offline(pf: PartitionFacts) -> tuple[str, str] | None:
    """A segment file whose open at load throws, taking the dir offline, or None: the active segment's .index or
    .timeindex a FIFO or a directory (resizeIndexes), any segment's .txnindex a FIFO (``TransactionIndex
    .sanityCheck`` for every segment at load seeks it: "Illegal seek", lab 3.7.2), any segment's .index a symlink
    into a directory that does not exist (``offsetIndexFile().exists()`` is false: "Could not find offset index
    file", the segment is recovered, and the rebuild's ``RandomAccessFile`` follows the link:
    FileNotFoundException, lab 3.7.2)."""
    part = pf.part
    if not part.segments:
        return None
    for seg in part.segments:
        stem = os.path.join(part.path, f"{seg.base_offset:020d}")
        if seg.txnindex is not None and seg.txnindex.kind == FIFO:
            return (
                f"{stem}.txnindex is a FIFO (named pipe): loading checks every segment's transaction index "
                "(TransactionIndex.sanityCheck), whose seek on a FIFO throws 'Illegal seek', an IOException: the "
                "whole log dir goes offline",
                CHECK,
            )
        if seg.txnindex is None and any(o.is_dir and o.path == stem + ".txnindex" for o in part.other_files):
            # exists() is true for a directory: TransactionIndex.sanityCheck opens it (FileChannel.open READ,
            # WRITE): "Is a directory", an IOException (lab 3.7.2 type-txnindex_active_directory: the dir offline)
            return (
                f"{stem}.txnindex is a directory: loading checks every segment's transaction index "
                "(TransactionIndex.sanityCheck), whose open of a directory throws 'Is a directory', an IOException: "
                "the whole log dir goes offline",
                CHECK,
            )
        if (
            seg.timeindex is not None
            and seg.timeindex.kind == "a symbolic link"
            and _dangling_into_nothing(seg.timeindex.path)
        ):
            # File.exists() is false through the link: sanityCheck takes the time index as newly created and
            # resizes it (timeIndex().resize(0), LogSegment.java@3.7.1:182-193), a RandomAccessFile "rw" through
            # the link into a directory that does not exist: FileNotFoundException (lab 3.7.2
            # type-timeindex_older_symlink_dangling, _active_: the dir offline)
            return (
                f"{stem}.timeindex is a symlink to nothing, in a directory that does not exist: the loader takes "
                "the time index as newly created and resizes it through the link (FileNotFoundException, an "
                "IOException): the whole log dir goes offline",
                CHECK,
            )
        if (
            seg.index is not None
            and seg.index.kind == "a symbolic link"
            and _dangling_into_nothing(seg.index.path)
        ):
            return (
                f"{stem}.index is a symlink to nothing, in a directory that does not exist: the loader finds no "
                "offset index, recovers the segment, and the rebuild opens the index through the link "
                "(FileNotFoundException, an IOException): the whole log dir goes offline",
                CHECK,
            )
    active = part.segments[-1]
    stem = os.path.join(part.path, f"{active.base_offset:020d}")
    for suffix, fi in ((".index", active.index), (".timeindex", active.timeindex)):
        what = fi.kind if fi is not None and fi.kind == FIFO else None
        if fi is None and any(o.is_dir and o.path == stem + suffix for o in part.other_files):
            what = "a directory"
        if what is not None:
            return (
                f"{stem + suffix} is {what}, not a regular file: loading ends with the active segment's "
                "resizeIndexes (RandomAccessFile 'rw', setLength), which throws an IOException, so the whole log "
                "dir goes offline",
                CHECK,
            )
    return None


def _dangling_into_nothing(path: str) -> bool:
    """A symlink whose target does not exist, in a directory that does not exist either (nothing can create it)."""
    try:
        target = os.path.join(os.path.dirname(path), os.readlink(path))
    except OSError:
        return False
    return not os.path.lexists(target) and not os.path.isdir(os.path.dirname(target))


def clean_shutdown_marker(log_dir: str) -> bool | None:
    """Whether ``.kafka_cleanshutdown`` counts as the marker when it is not a regular file: True (a FIFO, an
    empty dir, a link to something: exists() is true and deleteIfExists removes it), False (a dangling link), or
    None (a regular file, or nothing: the usual reading applies)."""
    path = os.path.join(log_dir, ckpt.CLEAN_SHUTDOWN)
    kind = _lkind(path)
    if kind == "fifo":
        return True
    if kind == "dir":
        try:
            return not os.listdir(
                path
            )  # a non-empty one: deleteIfExists throws (not modelled: the usual rule)
        except OSError:
            return None
    if kind == "link":
        return os.path.lexists(path) and os.path.exists(path)
    return None


def lock_offline(ldf: LogDirFacts) -> tuple[str, str] | None:
    """``.lock`` a symlink to nothing in a directory that does not exist: the lock's open fails, the dir offline."""
    path = os.path.join(ldf.path, LOCK)
    if _lkind(path) != "link":
        return None
    if not _dangling_into_nothing(path):
        return None  # the link leads to a file, or FileChannel.open(CREATE) can create it there
    target = os.path.join(ldf.path, os.readlink(path))
    return (
        f"{path} is a symlink to {target}, whose directory does not exist: LogManager.lockLogDirs' FileChannel.open "
        "follows it and throws NoSuchFileException ('Disk error while locking directory'), so the log dir goes "
        "offline",
        "DIR002",
    )
