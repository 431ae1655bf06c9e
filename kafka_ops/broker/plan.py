"""The broker's next start, as one plan: the ``next_start`` object of the audit report.

What a stopped broker of the given version does with the audited files when it starts: whether it starts at all,
which log dirs it serves and which it takes offline, and each segment's fate (loaded as is, indexes rebuilt,
recovered and truncated, deleted by recovery or by retention, or not loaded). Built while the audit streams the
partitions (memory grows with the listed segments only: a healthy host lists none).

Kafka behaviour (apache/kafka; core/src/main/scala/kafka/log/ up to 3.9, storage/.../internals/log/ in 4.x):

* Broker exits (``broker_exit``, ``load_failure``): a server.properties value ``KafkaConfig.fromProps`` refuses
  (CONF001, ``ConfigProblem.stops_the_start``); a ``meta.properties`` the broker refuses (DIR002: one rule,
  ``kafka_ops.broker.meta``, which also says which dirs go offline over it); an active segment whose tail a start
  without recovery cannot read (SHUT002, ``startup.stops_loading``); a dir in a log dir that is not a partition
  name (``lost+found``): ``LocalLog.parseTopicPartitionName``
  throws a KafkaException, not an IOException, so ``LogManager.loadLogs`` does not turn it into an offline dir
  and start-up fails; log dirs whose ``meta.properties`` name different clusters or nodes
  (``MetaPropertiesEnsemble.verify`` in 3.7+, ``BrokerMetadataCheckpoint`` before: "Invalid cluster.id" /
  "Stored node id ... doesn't match"); every log dir offline ("Shutdown broker because all log dirs in ... have
  failed", ``LogDirFailureChannel`` / ``ReplicaManager``).
* Log dir offline (KIP-112, 1.0+): any IOException while loading a dir's logs marks the whole dir offline
  (``LogManager.loadLogs`` -> ``handleIOException`` / ``offlineDirs``). At load every regular file of a
  partition dir must pass ``File.canRead`` ("Could not read file": ``removeTempFilesAndCollectSwapFiles`` in
  Log.scala, LogLoader.scala, LogLoader.java), every ``.log`` is opened read-write (``FileRecords.open`` with
  ``mutable = true``: ``RandomAccessFile(file, "rw")``), and the active segment's indexes are resized read-write
  (``resizeIndexes(maxIndexSize)`` at the end of loading). A recovered segment's indexes are rewritten.
* Segments: see ``startup`` (recovered after an unclean stop from the recovery point, rebuilt for a missing
  ``.index`` or a corrupt ``.txnindex``); ``LogLoader.recoverLog`` deletes every later unflushed segment once a
  segment was truncated ("Corruption found in segment ..., truncating to offset ..." then
  ``removeAndDeleteSegmentsAsync(unflushedIter)``). Retention deletions come from ``forecast``.
* Leftover files (``leftovers``): loading a partition first deletes its ``.deleted`` and ``.cleaned`` files and
  the ``.swap`` files of an unfinished split (``removeTempFilesAndCollectSwapFiles``; ``broker.leftovers`` cites
  it per release); a ``.cleaned`` or ``.swap`` name whose offset ``Long.parseLong`` rejects makes the broker exit
  (NumberFormatException, rethrown by ``LogManager.loadLogs``; DIR003). ``LogManager.loadLogs`` keeps loading a dir's other partitions when one throws an IOException
  (``handleIOException`` only records the dir), so they are deleted in a dir that goes offline over another
  partition too; they stay in a dir that is offline before loading, in the partition whose load fails (the
  failing file may be listed first), and when the broker exits (the plan then loads nothing).
* The KRaft metadata log (``__cluster_metadata-0``) is re-read in full at every start by design
  (KafkaMetadataLog: recovery point 0); it is not listed.
* Small files (power-loss damage): a checkpoint, leader-epoch-checkpoint or ``partition.metadata`` that does
  not parse (``failure_channel``, DIR005: the dir offline, or the exit up to 3.2.0; an empty partition.metadata
  is an NPE and the exit on every release); a corrupt producer snapshot (``producer_state``: deleted at load, the
  state rebuilt from an older snapshot or the log start, ``producer_snapshots``); the KRaft ``quorum-state``
  (``quorum_state``, DIR007: cleared up to 3.7, the exit from 3.8, ``quorum_state``).
* Strays (``strays``, DIR006): a partition dir whose topic id this host's KRaft metadata log does not have is
  renamed ``-stray`` and kept (3.7+), renamed ``-delete`` and deleted (3.0-3.6) or kept (2.8); ``broker.strays``
  cites the source per release. Such a partition gets no retention deletions in the plan (a -stray log has
  none, a deleted one is gone). A broker that exits, or a log dir offline, keeps them. On 3.7.0 a partition dir
  without ``partition.metadata`` halts the broker right after loading (KAFKA-16814): the plan's exit, DIR006.
"""

from __future__ import annotations

import os
from dataclasses import field
from typing import Any

from kafka_ops.broker import (
    environment,
    failed_start,
    failure_channel,
    filetypes,
    leftovers,
    meta,
    metadata_log,
    producer_state,
    quorum_state,
    reach,
    strays,
    suffixed_dirs,
    swaps,
)
from kafka_ops.broker.next_offset import BASE as NEXT_OFFSET_BASE
from kafka_ops.broker.next_offset import EXITS as NEXT_OFFSET_EXITS
from kafka_ops.broker.next_offset import UNKNOWN as NEXT_OFFSET_UNKNOWN
from kafka_ops.broker.startup import (
    NEXT_OFFSET_FALLBACK,
    REBUILT,
    active_next_offset,
    duplicate_partition_dirs,
    in_recover_log,
    index_missing_at_load,
    is_metadata_log,
    load_failure,
    next_offset_fallback,
    next_start,
    recovery_reason,
    txn_index_at_load,
    txn_index_rebuilds,
)
from kafka_ops.broker.txn_index import EXITS as TXN_EXITS
from kafka_ops.engine import checkpoints as ckpt
from kafka_ops.engine import versions
from kafka_ops.engine.compat import slotted
from kafka_ops.engine.logdir import Segment
from kafka_ops.facts.access import access_for, all_granted, partition_files
from kafka_ops.facts.collect import partition_acls
from kafka_ops.facts.context import Context
from kafka_ops.facts.identity import Identity
from kafka_ops.facts.model import HostFacts, LogDirFacts, PartitionFacts
from kafka_ops.units import iso

AS_IS, INDEXES_REBUILT, RECOVERED, NOT_LOADED = "as_is", "indexes_rebuilt", "recovered", "not_loaded"
SWAPPED_IN = swaps.SWAPPED_IN  # its .log replaced at load by a .swap leftover's records (broker.swaps)
DELETED_BY = {
    "retention_ms": "retention.ms",
    "retention_bytes": "retention.bytes",
    "log_start": "log_start_offset",
}
RECOVERY = "recovery"  # deleted at the start by LogLoader.recoverLog after a truncation
# the whole <tp>.<uuid>-delete dir removed by the kafka-delete-logs task
DELETE_DIR = suffixed_dirs.DELETE_DIR
SWAP = swaps.SWAP  # deleted at the start: a .swap leftover that is swapped in covers it
DELETED_AT_LOAD, KEPT = leftovers.DELETED_AT_LOAD, leftovers.KEPT  # LeftoverFate.fate


@slotted
class SegmentFate:
    log: str
    topic: str
    partition: int
    base_offset: int
    log_dir: str
    load: str = AS_IS
    truncated_bytes: int = 0
    deleted_at: int | None = None
    deleted_by: str | None = None
    reason: str | None = None
    checks: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "log": self.log, "topic": self.topic, "partition": self.partition, "base_offset": self.base_offset,
            "load": self.load, "truncated_bytes": self.truncated_bytes, "deleted_at": iso(self.deleted_at, "z_ms"),
            "deleted_by": self.deleted_by, "reason": self.reason, "checks": sorted(set(self.checks)),
        }  # fmt: skip


@slotted
class LeftoverFate:
    """A ``.deleted``, ``.cleaned`` or unfinished-split ``.swap`` file of a partition dir (broker.leftovers)."""

    path: str
    topic: str
    partition: int
    kind: str  # deleted | cleaned | swap
    log_dir: str
    fate: str = DELETED_AT_LOAD
    reason: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path, "topic": self.topic, "partition": self.partition, "kind": self.kind,
            "fate": self.fate, "reason": self.reason,
        }  # fmt: skip


@slotted
class LogDirFate:
    path: str
    state: str = "online"
    reason: str | None = None
    check: str | None = None
    segments_not_loaded: int = 0
    at_load: bool = False  # offline while its partitions load (not after the start, by a checkpoint read)

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path, "state": self.state, "reason": self.reason, "check": self.check,
            "segments_not_loaded": self.segments_not_loaded,
        }  # fmt: skip


def _who(h: HostFacts) -> Identity | None:
    return h.identity


# The audit asks both questions twice for each partition (the forecast through not_loaded, then the plan): the
# last answer is kept, keyed by the facts object itself, so the access decisions are made once.
_last_dir: tuple[object, tuple[str, str] | None] = (None, None)
_last_partition: tuple[object, tuple[str, str] | None] = (None, None)


def log_dir_offline(h: HostFacts, ldf: LogDirFacts) -> tuple[str, str] | None:
    """Why the broker takes this log dir offline before loading any partition, or None (see _log_dir_offline)."""
    global _last_dir
    if _last_dir[0] is not ldf:
        _last_dir = (ldf, _log_dir_offline(h, ldf))
    return _last_dir[1]


def partition_offline(h: HostFacts, pf: PartitionFacts) -> tuple[str, str] | None:
    """Why loading this partition throws an IOException that takes its whole log dir offline, or None."""
    global _last_partition
    if _last_partition[0] is not pf:
        _last_partition = (pf, _partition_offline(h, pf))
    return _last_partition[1]


def _log_dir_offline(h: HostFacts, ldf: LogDirFacts) -> tuple[str, str] | None:
    """Why the broker takes this log dir offline before loading any partition, or None: the dir itself or a
    checkpoint in its root the broker user cannot use (``LogManager.createAndValidateLogDirs``: "Failed to create
    or validate data directory"; the offset checkpoints are read with ``CheckpointFileWithFailureHandler``)."""
    v = meta.offline_verdict(h, ldf)
    if v is not None:  # MetaPropertiesEnsemble.Loader's errorLogDirs: offline before any partition is loaded
        return v.message.rstrip("."), "DIR002"
    why = _log_dir_access_offline(h, ldf)
    if why is not None:
        return why
    why = filetypes.lock_offline(ldf)  # LogManager.lockLogDirs
    if why is not None:
        return why
    env = environment.verdict(h, ldf)  # a read-only or full filesystem (ENV001)
    if env is not None and env.start == environment.OFFLINE:
        return env.reason, environment.CHECK
    for d in failure_channel.dir_damage(h, ldf):  # read by loadLogs, the ReplicaManager, the cleaner
        return d.reason, d.check
    return None


def _log_dir_access_offline(h: HostFacts, ldf: LogDirFacts) -> tuple[str, str] | None:
    effect = reach.start_effect(h, ldf)  # the path and the root (PERM003's rule)
    if effect is not None:
        return effect[1], "PERM003"
    who = _who(h)
    if who is None or not ldf.scan.exists or ldf.scan.info is None:
        return None
    for f in ldf.scan.root_files:
        name = f.path.rsplit("/", 1)[-1]
        if name == filetypes.LOCK:
            a = access_for(who, f, ldf.acls.get(f.path), ldf.probe)
            if not (a.read and a.write):
                # FileLock: FileChannel.open(CREATE, READ, WRITE) -> AccessDeniedException, an IOException:
                # "Disk error while locking directory" (LogManager.lockLogDirs, LogManager.scala@3.7.1:265-279;
                # lab 3.7.2: a root-owned 0600 .lock)
                return (
                    f"the broker user {who.user} cannot open {f.path} read-write: LogManager.lockLogDirs fails with "
                    "AccessDeniedException ('Disk error while locking directory') and the log dir goes offline",
                    "PERM001",
                )
            continue
        if name == ckpt.META_PROPERTIES and not access_for(who, f, ldf.acls.get(f.path), ldf.probe).read:
            # AccessDeniedException, an IOException: MetaPropertiesEnsemble.Loader puts the dir in errorLogDirs
            # (MetaPropertiesEnsemble.java@3.7.1:134-143: any Exception but NoSuchFile), BrokerMetadataCheckpoint.getBrokerMetadataAndOfflineDirs
            # in its offlineDirs (BrokerMetadataCheckpoint.scala@2.8.2:151-175): offline before any load (lab 3.7.2
            # type-meta_properties_unreadable: "Error while reading meta.properties file", the dir offline)
            return (
                f"the broker user {who.user} cannot read {f.path}: its read fails with AccessDeniedException ('Error "
                f"while reading meta.properties file') and LogManager takes {ldf.path} offline at the start ('Failed "
                "to load ... during broker startup')",
                "PERM001",
            )
        if not name.endswith("checkpoint"):
            continue
        if name == ckpt.REPLICATION and failure_channel.zk_replication_unknown(h):
            continue  # the plan's "unknown" (_zk_replication_unknowns)
        if not access_for(who, f, ldf.acls.get(f.path), ldf.probe).read:
            return (
                f"the broker user {who.user} cannot read {f.path}: the checkpoint read fails with an IOException "
                "and the log dir goes offline (CheckpointFileWithFailureHandler, KIP-112)",
                "PERM001",
            )
    return None


def _zk_replication_unknowns(h: HostFacts) -> list[dict[str, str]]:
    """ZooKeeper mode: a replication-offset-checkpoint the broker cannot open (failure_channel.zk_replication_unknown)."""
    if not failure_channel.zk_replication_unknown(h):
        return []
    who = _who(h)
    out = []
    for ldf in h.log_dirs:
        path = os.path.join(ldf.path, ckpt.REPLICATION)
        f = next((x for x in ldf.scan.root_files if x.path == path), None)
        denied = (
            who is not None and f is not None and not access_for(who, f, ldf.acls.get(path), ldf.probe).read
        )
        dangling = failure_channel.dangling(ldf.scan.errors, path) is not None
        if denied or dangling:
            out.append({
                "what": f"whether {ldf.path} goes offline: {path} cannot be opened by the broker "
                f"({'the broker user cannot read it' if denied else 'a symbolic link to nothing'})",
                "reason": "a ZooKeeper-mode 2.8.2 broker kept the dir online in the lab (a garbage file takes it "
                "offline); why was not found",
            })  # fmt: skip
    return out


def _partition_offline(h: HostFacts, pf: PartitionFacts) -> tuple[str, str] | None:
    if _unreadable_checkpoint_exit(h, pf) is not None:  # the broker exits over it: no dir is taken offline
        return None
    why = _partition_access_offline(h, pf)
    if why is not None:
        return why
    why = filetypes.active_index_offline(pf)  # resizeIndexes at the end of the load
    if why is not None:
        return why
    snap = filetypes.latest_snapshot_unwritable(pf)
    if snap is not None and filetypes.snapshot_written_at_load(h.kafka_version):  # as the FIFO
        return (
            f"{snap[0]} cannot be written: loading the producer state writes a snapshot under its name "
            f"(UnifiedLog.rebuildProducerState -> takeSnapshot, FileChannel.open CREATE WRITE): {snap[1]}, an "
            "IOException: the whole log dir goes offline",
            filetypes.CHECK,
        )
    d = failure_channel.partition_damage(h, pf)  # read after the files were listed and checked
    if d is not None and d.start == "offline":
        return d.reason, d.check
    return None


def _partition_access_offline(h: HostFacts, pf: PartitionFacts) -> tuple[str, str] | None:
    who = _who(h)
    if who is None or all_granted(who, pf):  # every question below is answered yes: most partitions
        return None
    part = pf.part
    if part.dir_info is not None:
        a = access_for(who, part.dir_info, pf.acls.get(part.dir_info.path), pf.probe)
        if not (a.read and a.execute):
            # the loader lists the dir and opens its checkpoints (leader-epoch-checkpoint first): the lab's
            # brokers of every version answer AccessDeniedException, an IOException that takes the dir offline
            return (
                f"the broker user {who.user} cannot list and enter {part.path}: loading "
                f"{part.topic}-{part.partition} fails with AccessDeniedException (IOException), so the whole log "
                "dir goes offline",
                "PERM001",
            )
    files = partition_files(part)
    loader = versions.cite("loader", h.kafka_version)
    for f in files:
        if f.is_dir:
            continue
        if not access_for(who, f, pf.acls.get(f.path), pf.probe).read:
            return (
                f"the broker user {who.user} cannot read {f.path}: loading {part.topic}-{part.partition} throws "
                f"'Could not read file' (IOException{', ' + loader if loader else ''}), so the whole log dir "
                "goes offline",
                "PERM001",
            )
    for s in part.segments:
        if s.log is not None and not access_for(who, s.log, pf.acls.get(s.log.path), pf.probe).write:
            return (
                f"the broker user {who.user} cannot write {s.log.path}: the broker opens every .log read-write at "
                "load (FileRecords.open), the IOException takes the whole log dir offline",
                "PERM001",
            )
    if part.segments:
        active = part.segments[-1]
        for ix in (active.index, active.timeindex):
            if ix is not None and not access_for(who, ix, pf.acls.get(ix.path), pf.probe).write:
                return (
                    f"the broker user {who.user} cannot write {ix.path}: the active segment's indexes are resized "
                    "read-write at the end of loading (resizeIndexes), the IOException takes the whole log dir "
                    "offline",
                    "PERM001",
                )
    for base in pf.will_recover:
        rs = next((x for x in part.segments if x.base_offset == base), None)
        if rs is None:
            continue
        for ix in (rs.index, rs.timeindex, rs.txnindex):
            if ix is not None and not access_for(who, ix, pf.acls.get(ix.path), pf.probe).write:
                return (
                    f"the broker user {who.user} cannot write {ix.path}, which recovery rewrites "
                    "(LogSegment.recover): the IOException takes the whole log dir offline",
                    "PERM001",
                )
    return None


def broker_exit(h: HostFacts) -> tuple[str, str] | None:
    """Why the broker refuses to start with these files, before loading any partition, or None."""
    pre = pre_load_exit(h)
    if pre is not None:
        return pre
    at_load = loading_exit(h)
    return (at_load[0], at_load[1]) if at_load is not None else None


def pre_load_exit(h: HostFacts) -> tuple[str, str] | None:
    """Why the broker exits before LogManager loads any log dir, or None. meta.properties is verified first
    (KafkaRaftServer / KafkaServer.startup, before LogManager), by the one rule DIR002 reports."""
    for p in h.configs.problems():  # KafkaConfig.fromProps and the log dirs' validation come first
        if p.stops_the_start:
            where = f"line {p.line} of {p.source}" if p.line and p.source else p.source or "server.properties"
            said = (
                f"KafkaConfig.fromProps throws ConfigException '{p.bad.kafka_error}'"
                if p.bad is not None
                else "LogManager.createAndValidateLogDirs throws KafkaException 'Duplicate log directory found'"
            )
            return (
                f"{p.key}={p.value.strip()} ({where}): {said} and the broker exits before it opens a log dir",
                "CONF001",
            )
    v = meta.exit_verdict(h)
    if v is not None:
        return v.message.rstrip("."), "DIR002"
    ident = environment.identity_verdict(h)  # ZooKeeper's /cluster/id, checked before LogManager (ENV002)
    if ident is not None:
        return ident.reason, environment.ID_CHECK
    for ldf in h.log_dirs:  # a metadata log dir whose meta.properties the broker user cannot open
        effect = reach.start_effect(h, ldf)
        if effect is not None and effect[0] == "exits":
            return effect[1], "PERM003"
    for ldf in h.log_dirs:  # a read-only or full filesystem the start must write in (ENV001)
        env = environment.verdict(h, ldf)
        if env is not None and env.start == environment.EXITS:
            return env.reason, environment.CHECK
    for _ldf, path, meta_dir in meta.misplaced_metadata_logs(h):
        return (
            f"{path} is the KRaft metadata log in a data dir, but the metadata log dir is {meta_dir}: "
            "KafkaRaftServer.initializeLogDirs throws 'Found unexpected metadata location in data directory' and "
            "the broker does not start",
            "DIR003",
        )
    # the metadata log dir's bootstrap.checkpoint (initializeLogDirs), then the metadata log's own files
    # (KafkaMetadataLog.apply), then quorum-state (KafkaRaftClient.initialize), then the latest snapshot's records
    ml = metadata_log.exit_reason(h, before_quorum_state=True)
    if ml is not None:
        return ml
    qs = quorum_state.damage(h)  # the raft client starts before LogManager
    if qs is not None and qs.start == quorum_state.EXITS:
        return qs.reason, "DIR007"
    return metadata_log.exit_reason(h, before_quorum_state=False)


def loading_exit(h: HostFacts) -> tuple[str, str, str | None] | None:
    """Why LogManager.loadLogs fails for these files before any partition's own load is asked, or None:
    (reason, check, the log dir whose listing throws, or None when it is a partition's load that throws)."""
    for ldf in h.log_dirs:
        if any(d.path.rsplit("/", 1)[-1] == ckpt.META_PROPERTIES for d in ldf.scan.fatal_dirs):
            continue  # meta.properties a directory: its read fails first, the dir is never listed (meta.py)
        for d in ldf.scan.fatal_dirs:
            if d.path.rsplit("/", 1)[-1] == ckpt.CLEAN_SHUTDOWN and filetypes.clean_shutdown_marker(ldf.path):
                continue  # an empty dir of that name: deleted as the marker before the listing (filetypes)
            return (
                f"{d.path} is not a topic-partition directory: LogManager.loadLogs throws a KafkaException "
                "('... is not in the form of topic-partition ...'), which is not an IOException, so the broker "
                "exits instead of taking the log dir offline",
                "DIR003",
                ldf.path,
            )
    for ldf in h.log_dirs:
        for path in suffixed_dirs.fatal_stray_dirs(h, ldf):
            return (
                f"{path} is named -stray, which a broker before 3.6.1 does not know: LocalLog."
                "parseTopicPartitionName takes '<uuid>-stray' as the partition, not an int, and throws a "
                "KafkaException ('... is not in the form of topic-partition ...'): the broker exits",
                "DIR003",
                ldf.path,
            )
    for name, prev, path in duplicate_partition_dirs(h):
        return (
            f"{name.topic}-{name.partition} is in two log dirs ({prev} and {path}): LogManager.loadLog throws "
            "IllegalStateException('Duplicate log directories for ... are found in both ...') and start-up "
            "fails (a real 3.5.2 broker did so in kafka-ops' tests, after an offline dir's partitions were recreated elsewhere)",
            "DIR003",
            None,
        )
    return None


def partition_load_exit(
    ctx: Context, pf: PartitionFacts, offline_before_load: bool
) -> tuple[str, str] | None:
    """Why loading this partition makes the broker exit (the plan and SHUT004 ask it), or None: a tail a start
    without recovery cannot read (SHUT002), a leader-epoch-checkpoint that does not parse before 3.2.1, a
    leftover name whose offset does not parse (DIR003)."""
    failure = load_failure(ctx, pf)
    if failure is not None:
        return failure, "SHUT002"
    nxt = None if offline_before_load else active_next_offset(ctx, pf)
    if nxt is not None and nxt.kind == NEXT_OFFSET_EXITS:
        return f"{pf.part.segments[-1].index.path}: {nxt.why}", "IDX003"  # type: ignore[union-attr]
    # loadSegmentFiles opens the segments in name order: the first failure stops it
    for seg in pf.part.segments:
        txn = None if offline_before_load else txn_index_at_load(ctx, pf, seg)
        if txn is not None and txn[0] == TXN_EXITS:
            return txn[1], "IDX003"
    damage = failure_channel.partition_damage(ctx.host, pf)
    if damage is not None and damage.start == "exits":
        return damage.reason, damage.check
    unreadable = None if offline_before_load else _unreadable_checkpoint_exit(ctx.host, pf)
    if unreadable is not None:
        return unreadable
    if pf.part.leftovers and not offline_before_load:
        bad_name = leftovers.unparseable(ctx.host, pf)
        if bad_name is not None:
            return bad_name[1], "DIR003"
    return None


def _unreadable_checkpoint_exit(h: HostFacts, pf: PartitionFacts) -> tuple[str, str] | None:
    """A partition's leader-epoch-checkpoint (or its partition.metadata, when read) the broker user cannot read,
    before KAFKA-13773 (3.2.1): the read's AccessDeniedException becomes the KafkaStorageException of
    CheckpointFileWithFailureHandler / PartitionMetadataFile.read, which LogManager.loadLogs does not catch: the
    broker exits (lab 2.8.2 type-leader_epoch_unreadable: 'Fatal error during KafkaServer startup ...
    KafkaStorageException: Error while reading checkpoint file'), where 3.2.1+ takes the dir offline (PERM001)."""
    if versions.since("catch_storage_exception_at_load", h.kafka_version) is not False:
        return None
    who = _who(h)
    if who is None or all_granted(who, pf):
        return None
    names = (ckpt.LEADER_EPOCH, ckpt.PARTITION_METADATA)
    for f in pf.part.other_files:
        name = f.path.rsplit("/", 1)[-1]
        if f.is_dir or name not in names or access_for(who, f, pf.acls.get(f.path), pf.probe).read:
            continue
        if name == ckpt.PARTITION_METADATA and not failure_channel.reads_partition_metadata(h):
            continue
        return (
            f"the broker user {who.user} cannot read {f.path}: its read at load throws KafkaStorageException "
            "(AccessDeniedException), which LogManager.loadLogs does not catch before KAFKA-13773 (3.2.1): 'There "
            "was an error in one of the threads during logs loading' and the broker does not start",
            "PERM001",
        )
    return None


def not_live(h: HostFacts) -> set[str]:
    """Log dirs LogManager never loads: createAndValidateLogDirs refuses them (PERM003) or meta.properties takes
    them offline (DIR002): they are not in liveLogDirs, so neither loadLogs nor LogManager.shutdown touches them."""
    out = set()
    for ldf in h.log_dirs:
        why = log_dir_offline(h, ldf)
        if why is not None and why[1] in ("PERM003", "DIR002"):
            out.add(ldf.path)
    return out


def dir_offline_prescan(h: HostFacts, ldf: LogDirFacts) -> tuple[str, str] | None:
    """Whether the next start takes this log dir offline, decided before streaming it: a second, stat-only
    pass over its partitions (for ``kafka-ops forecast``, which streams partitions and must not predict a
    deletion in a dir that a later partition takes offline; the audit decides it in the same pass instead)."""
    if h.broker_state == "running" or h.identity is None:
        return None
    why = log_dir_offline(h, ldf)
    if why is not None:
        return why
    from kafka_ops.engine import checkpoints as ckpt
    from kafka_ops.engine.logdir import recovered_segments, scan_partition

    for path, name in ldf.scan.partition_names:
        part = scan_partition(path, name, read_tails=False)
        rp = (ldf.scan.checkpoints.get(ckpt.RECOVERY_POINT) or {}).get((name.topic, name.partition))
        pf = PartitionFacts(ldf, part, h.configs.for_topic(name.topic), rp, None, None)
        if is_metadata_log(pf):
            continue
        rebuilds = versions.missing_index_rebuilt(h.kafka_version)
        rec = recovered_segments(part, ldf.clean_shutdown, rp, missing_index_recovers=rebuilds)
        pf.will_recover = [s.base_offset for s in rec]
        pf.acls.update(partition_acls(h.identity, part))
        why = partition_offline(h, pf)
        if why is not None:
            return why
    return None


def not_loaded(h: HostFacts, pf: PartitionFacts) -> str | None:
    """Why a stopped broker's next start serves nothing of this partition because of the partition's own files
    or its log dir's, or None. The forecast and the RET checks ask it: the only fix of such a cause (ownership,
    modes) also changes what retention will read, so no deletion is predicted from these files. A broker that
    exits (DIR002, DIR003) and a log dir that goes offline for another partition's files are the plan's
    (NextStartPlan): the forecast then says what happens once that is fixed."""
    if h.broker_state == "running" or is_metadata_log(pf):
        return None
    why = log_dir_offline(h, pf.log_dir) or partition_offline(h, pf)
    return why[0] if why else None


def segment_fate(ctx: Context, pf: PartitionFacts, seg: Segment) -> tuple[str, str | None]:
    """(load, why) for one segment of a log dir that comes online."""
    reason = recovery_reason(ctx, pf, seg)
    if reason is not None:
        # a missing .index (NoSuchFileException) or a corrupt .txnindex (CorruptIndexException): recoverSegment
        # in loadSegmentFiles ('rebuilding index files')
        missing = index_missing_at_load(ctx, pf, seg) or txn_index_rebuilds(ctx, pf, seg) is not None
        if missing and in_recover_log(ctx, pf, seg):
            # a missing .index above the recovery point of an unclean stop: LogLoader.loadSegmentFiles rebuilds it,
            # then recoverLog re-reads the segment again as unflushed ("Recovering unflushed segment"; the 3.5.2
            # lab broker, killed right after a roll before the new segment's lazily created .index existed)
            return (
                RECOVERED,
                reason + "; the segment is also at or above the recovery point of an unclean stop",
            )
        kind = INDEXES_REBUILT if missing else RECOVERED
        return kind, reason
    version = ctx.host.kafka_version
    if version is None or versions.since("no_index_sanity_at_load", version):
        # next_start then says kept or depends, never rebuilt (only a pre-2.3.0 sanity check at load rebuilds
        # beyond recovery_reason): no need to make its text for every segment of the host
        return AS_IS, None
    if index_missing_at_load(ctx, pf, seg):
        # 1.1-2.2: an index .swap's base lost its indexes before the sanity check, which then passes the new
        # empty ones (versions.missing_index_rebuilt): the files' old tails no longer count
        return AS_IS, None
    ns = next_start(ctx, pf, seg)
    if ns.verdict == REBUILT:
        return INDEXES_REBUILT, ns.why
    return AS_IS, None


def _segment_fate(pf: PartitionFacts, seg: Segment) -> SegmentFate:
    return SegmentFate(
        seg.log.path if seg.log else f"{seg.dir}/{seg.base_offset:020d}.log",
        pf.part.topic, pf.part.partition, seg.base_offset, pf.log_dir.path,
    )  # fmt: skip


class NextStartPlan:
    """Accumulates the plan while the audit streams partitions; ``to_dict`` is the report's ``next_start``."""

    def __init__(self, h: HostFacts) -> None:
        self.h = h
        self.applies = h.broker_state != "running"
        self.exit = pre_load_exit(h) if self.applies else None
        # a FIFO where the start reads a file whole (broker.filetypes): the start hangs; ``exit`` holds why
        self.hangs = False
        self._type_unknowns: list[dict[str, str]] = []  # broker.filetypes: what no lab release decided
        self._hang_before_load = False  # meta.properties: read before anything else, no dir state reached
        if self.applies:
            meta_hang = next(
                (w for d in h.log_dirs if (w := filetypes.root_hang(h, d, meta_only=True))), None
            )
            if meta_hang is not None:
                self.exit, self.hangs, self._hang_before_load = meta_hang, True, True
        # an exit while LogManager loads the logs changes the clean-shutdown markers (broker.failed_start)
        self.exit_at_load = False
        self._listing_fails_in: str | None = None
        self._failing_dir: str | None = None  # the dir of the partition whose load throws
        if self.applies and self.exit is None:
            at_load = loading_exit(h)
            if at_load is not None:
                self.exit, self.exit_at_load, self._listing_fails_in = at_load[:2], True, at_load[2]
        self.dirs: dict[str, LogDirFate] = {}
        self.segments: list[SegmentFate] = []
        self.leftovers: list[LeftoverFate] = []
        # producer snapshots deleted at load, their state rebuilt from the log (broker.producer_state)
        self.snapshots: list[producer_state.CorruptSnapshot] = []
        # what the plan cannot decide for a partition's own files ({what, reason}, next_start.unknown): the log
        # end offset a damaged active offset index gives (broker.next_offset)
        self.unknown: list[dict[str, str]] = []
        # partition dir -> its stray verdict (broker.strays): the same answer DIR006 gives
        self.strays: dict[str, strays.Stray] = {s.path: s for s in strays.find(h)} if self.applies else {}
        # -future dir -> the interrupted intra-broker move it holds (strays.future_moves: a stray one never moves)
        self.futures: dict[str, suffixed_dirs.FutureMove] = (
            {m.path: m for m in strays.future_moves(h)} if self.applies else {}
        )
        self._replaced = {
            m.current: m
            for m in self.futures.values()
            if m.current is not None and m.fate == suffixed_dirs.REPLACES_CURRENT
        }
        self._offline_before_load: set[str] = set()  # dirs LogManager never loads a partition of
        for ldf in h.log_dirs:
            fate = self.dirs[ldf.path] = LogDirFate(ldf.path)
            why = log_dir_offline(h, ldf) if self.applies else None
            if why is not None:
                fate.state, fate.reason, fate.check = "offline", why[0], why[1]
                self._offline_before_load.add(ldf.path)
        if self.applies and self.exit is None:  # the quorum's cluster id (--bootstrap-server): before loading
            hang_id = environment.kraft_identity_hang(h)
            if hang_id is not None:
                self.exit, self.hangs = (hang_id, "CLU004"), True
        if self.applies and self.exit is None and not self._offline_before_load:
            hang = filetypes.marker_hang(h)  # KRaft 3.7+: the markers' broker epoch, before loading
            if hang is not None:
                self.exit, self.hangs = hang, True
        if self.applies and self.exit is None:  # loadLogs reads each live dir's checkpoints first
            for ldf in h.log_dirs:
                hang = None if ldf.path in self._offline_before_load else filetypes.root_hang(h, ldf)
                if hang is not None:
                    self.exit, self.hangs, self.exit_at_load = hang, True, True
                    break

    def dir_online(self, path: str) -> bool:
        """Whether the dir's own files let the broker serve it (a broker exit is apart: see ``not_loaded``)."""
        return self.dirs[path].state == "online"

    def add_partition(self, ctx: Context, pf: PartitionFacts, deletions: dict[int, tuple[int, str]]) -> bool:
        """Record the partition's listed segments; returns False when its log dir is (now) offline, so that
        the caller drops the partition's retention deletions. ``deletions``: base -> (at_ms, reason)."""
        if not self.applies or is_metadata_log(pf):
            return True
        if self.exit is None:
            self.exit = partition_load_exit(ctx, pf, pf.log_dir.path in self._offline_before_load)
            self.exit_at_load = self.exit is not None
            self._failing_dir = pf.log_dir.path if self.exit is not None else None
        if self.exit is None and pf.log_dir.path not in self._offline_before_load:
            hang = filetypes.partition_hang(self.h, pf)
            if hang is not None:
                self.exit, self.hangs, self.exit_at_load = hang, True, True
            elif (
                bad := filetypes.latest_snapshot_unwritable(pf)
            ) is not None and not filetypes.snapshot_written_at_load(self.h.kafka_version):
                # before 2.8 or an unknown version: the same write, not run on a lab release
                self._type_unknowns.append({
                    "what": f"whether {bad[0]} takes the dir offline: 2.8+ writes a snapshot under its name while "
                    f"loading the producer state ({bad[1]}, the dir offline: lab 2.8.2, 3.7.2)",
                    "reason": "no release before 2.8 was run with it (kafka_ops/broker/filetypes.py)",
                })  # fmt: skip
            elif (snap := filetypes.latest_snapshot_fifo(pf)) is not None:  # before 2.8 or an unknown version
                self._type_unknowns.append({
                    "what": f"whether the start hangs on {snap}, a FIFO: 2.8+ writes a snapshot under its name "
                    "while loading the producer state, and hangs (lab 2.8.2, 3.7.2)",
                    "reason": "no release before 2.8 was run with it (kafka_ops/broker/filetypes.py)",
                })  # fmt: skip
        fate = self.dirs[pf.log_dir.path]
        if fate.state == "online":
            off = partition_offline(self.h, pf)
            if off is not None:
                fate.state, fate.reason, fate.check = "offline", off[0], off[1]
                fate.at_load = True  # a partition's own files: the load itself fails (PERM001, DIR005)
                self._unload(fate.path)
        online = self.exit is None and self.dir_online(pf.log_dir.path)
        if online:
            nxt = active_next_offset(ctx, pf)
            # the base offset's outcome is said on the segment (next_offset_fallback) when records are lost
            if nxt is not None and (
                nxt.kind == NEXT_OFFSET_UNKNOWN
                or (
                    nxt.kind == NEXT_OFFSET_BASE
                    and next_offset_fallback(ctx, pf, pf.part.segments[-1]) is None
                )
            ):
                tp = f"{pf.part.topic}-{pf.part.partition}"
                self.unknown.append({
                    "what": f"which records of {tp} the broker serves after the start, and at which offsets it "
                    "appends the next ones (IDX003)",
                    "reason": f"{pf.part.segments[-1].index.path}: {nxt.why}",  # type: ignore[union-attr]
                })  # fmt: skip
        if pf.part.leftovers:
            self._leftovers(pf)
        # (kept instead when nothing is loaded: to_dict)
        self.snapshots += producer_state.corrupt_snapshots(pf)
        if online and pf.part.name.kind == "delete":
            self._delete_dir(pf)
            return online
        move = self.futures.get(pf.part.path)
        if online and move is not None and move.lost:
            self._truncated_future(pf, move)
            return online
        move = self._replaced.get(pf.part.path)
        if online and move is not None and self.dir_online(move.log_dir):
            self._replaced_current(pf, move)
            return online
        stray = self.strays.get(pf.part.path)
        if stray is not None and stray.fate in (strays.RENAMED_STRAY, strays.DELETED):
            deletions = {}  # a -stray log gets no retention; a deleted one is gone
        truncated_at: int | None = None
        swapped = swaps.swap_fates(self.h, pf) if online and pf.part.leftovers else {}
        for seg in pf.part.segments:
            # a SegmentFate is made for the listed segments only: most are loaded as they are and not deleted
            if not online:
                load, why = segment_fate(ctx, pf, seg)
                if load != AS_IS or seg.base_offset in deletions:
                    sf = _segment_fate(pf, seg)
                    sf.load, sf.reason = NOT_LOADED, fate.reason or (self.exit[0] if self.exit else None)
                    self.segments.append(sf)
                continue
            if truncated_at is not None:
                # deleted without being re-read (the lab's brokers: no "Recovering" line for them)
                sf = _segment_fate(pf, seg)
                sf.load, sf.deleted_at, sf.deleted_by = AS_IS, self.h.now_ms, RECOVERY
                sf.reason = (
                    f"recovery truncated segment {truncated_at} of this partition, and LogLoader.recoverLog then "
                    "deletes every later unflushed segment"
                )
                self.segments.append(sf)
                continue
            if seg.base_offset in swapped:
                sf = _segment_fate(pf, seg)
                what, sf.reason = swapped[seg.base_offset]
                if what == SWAP:
                    sf.deleted_at, sf.deleted_by = self.h.now_ms, SWAP
                else:
                    sf.load = SWAPPED_IN
                self.segments.append(sf)
                continue
            load, why = segment_fate(ctx, pf, seg)
            d = deletions.get(seg.base_offset)
            if load == AS_IS and d is None:
                # loaded as it is, but the log end offset falls back to its base offset (issue 36 §2)
                fallback = next_offset_fallback(ctx, pf, seg) if seg.active else None
                if fallback is not None:
                    sf = _segment_fate(pf, seg)
                    sf.reason = fallback
                    self.segments.append(sf)
                continue
            sf = _segment_fate(pf, seg)
            sf.load, sf.reason = load, why
            rec = pf.recovery.get(seg.base_offset)
            if load != AS_IS and rec is not None and rec.tail is not None:
                sf.truncated_bytes = rec.tail.truncated_bytes
                if sf.truncated_bytes and load == RECOVERED:
                    truncated_at = seg.base_offset
            if d is not None:
                sf.deleted_at, sf.deleted_by = d[0], DELETED_BY.get(d[1], d[1])
            self.segments.append(sf)
        return online

    def _leftovers(self, pf: PartitionFacts) -> None:
        """The partition's leftover files that loading it deletes (a broker exit is applied in ``to_dict``)."""
        planned = leftovers.deleted_at_load(self.h, pf)
        if not planned:
            return
        path = pf.log_dir.path
        kept: str | None = None
        if path in self._offline_before_load:
            kept = f"the log dir goes offline before any partition is loaded ({self.dirs[path].reason})"
        else:
            own = partition_offline(self.h, pf)
            if own is not None:
                kept = (
                    f"loading this partition fails ({own[0]}); the loader deletes leftovers only as it lists them, "
                    "and may list the failing file first"
                )
        for p, kind, why in planned:
            lf = LeftoverFate(p, pf.part.topic, pf.part.partition, kind, path, reason=why)
            if kept is not None:
                lf.fate, lf.reason = KEPT, kept
            self.leftovers.append(lf)

    def _delete_dir(self, pf: PartitionFacts) -> None:
        """Every segment of a -delete dir: loaded without recovery, then removed with the dir (suffixed_dirs)."""
        at, why = suffixed_dirs.delete_dir_at(self.h), suffixed_dirs.delete_dir_reason(self.h)
        for seg in pf.part.segments:
            sf = _segment_fate(pf, seg)
            sf.deleted_at, sf.deleted_by, sf.reason = at, DELETE_DIR, why
            if seg.base_offset in pf.will_recover:  # only a missing .index: rebuilt by loadSegmentFiles
                sf.load = INDEXES_REBUILT
            self.segments.append(sf)

    def _truncated_future(self, pf: PartitionFacts, move: suffixed_dirs.FutureMove) -> None:
        """A -future dir without its current dir: truncated to offset 0 once the broker leads or follows the
        partition (suffixed_dirs), its first segment emptied when it starts at 0, every other one deleted."""
        for i, seg in enumerate(pf.part.segments):
            sf = _segment_fate(pf, seg)
            sf.reason = move.reason
            if i == 0 and seg.base_offset == 0:
                sf.truncated_bytes = seg.log.size if seg.log is not None else 0
            else:
                sf.deleted_at, sf.deleted_by = self.h.now_ms, suffixed_dirs.TRUNCATION
            self.segments.append(sf)

    def _replaced_current(self, pf: PartitionFacts, move: suffixed_dirs.FutureMove) -> None:
        """The current dir of a move that resumes: renamed -delete once the future log has caught up, and removed
        by the kafka-delete-logs task (suffixed_dirs): every segment deleted with the dir, nothing lost."""
        at = suffixed_dirs.delete_dir_at(self.h)
        for seg in pf.part.segments:
            sf = _segment_fate(pf, seg)
            sf.deleted_at, sf.deleted_by, sf.reason = (
                at,
                DELETE_DIR,
                (f"{move.reason}; the kafka-delete-logs task then removes the renamed dir"),
            )
            self.segments.append(sf)

    def _unload(self, log_dir: str) -> None:
        """A log dir went offline after some of its partitions were planned: none of them is loaded."""
        for sf in self.segments:
            if sf.log_dir == log_dir:
                sf.load, sf.truncated_bytes, sf.deleted_at, sf.deleted_by = NOT_LOADED, 0, None, None
                sf.reason = self.dirs[log_dir].reason

    def attach_checks(self, findings: list[Any]) -> None:
        """Name on each listed segment the checks whose findings are about it."""
        by_key: dict[tuple[str, int, int], SegmentFate] = {
            (s.topic, s.partition, s.base_offset): s for s in self.segments
        }
        for f in findings:
            if f.topic is None or f.partition is None or f.segment is None:
                continue
            sf = by_key.get((f.topic, f.partition, f.segment))
            if sf is not None:
                sf.checks.append(f.check)

    def finish(self) -> None:
        if not self.applies:
            return
        if self.exit is None and self.dirs and all(d.state == "offline" for d in self.dirs.values()):
            self.exit = (
                "every log dir is offline: the broker shuts down ('Shutdown broker because all log dirs in ... have "
                "failed')",
                next(iter(self.dirs.values())).check or "PERM001",
            )
        if self.exit is None:
            self.exit = self._metadata_dir_halt()
        if self.exit is None:
            self.exit = self._stray_halt()
            # the halt comes after LogManager.startup loaded every log: the markers it deleted stay deleted
            self.exit_at_load = self.exit is not None
        for ldf in self.h.log_dirs:
            fate = self.dirs[ldf.path]
            if self.exit is not None or fate.state == "offline":
                fate.segments_not_loaded = ldf.agg.segments

    def _metadata_dir_halt(self) -> tuple[str, str] | None:
        """From 3.7 a KRaft broker halts when its metadata log dir fails: LogManager puts a dir that failed while
        loading on the LogDirFailureChannel, and ReplicaManager.handleLogDirFailure halts for the metadata log dir
        ('Shutdown broker because the metadata log dir ... has failed', ReplicaManager.scala@3.7.0). A dir that
        never passed createAndValidateLogDirs (PERM003) is not in liveLogDirs and is not handled there."""
        h = self.h
        if not versions.since("kraft_jbod", h.kafka_version) or meta.broker_mode(h) != "kraft":
            return None
        fate = self.dirs.get(meta.metadata_log_dir(h) or "")
        if fate is None or fate.state != "offline" or fate.check in (None, "PERM003"):
            return None
        return (
            f"{fate.path} is the KRaft metadata log dir and goes offline ({fate.reason}): the broker halts ('Shutdown "
            f"broker because the metadata log dir {fate.path} has failed')",
            fate.check,
        )

    def _stray_halt(self) -> tuple[str, str] | None:
        """3.7.0 halts right after loading when a loaded log has no topic id (broker.strays: KAFKA-16814); a log
        of a dir that went offline is not among LogManager's logs."""
        for st in self.strays.values():
            if st.fate == strays.EXITS and self.dirs[st.log_dir].state != "offline":
                return f"{st.path}: {st.reason}", "DIR006"
        return None

    def _offline_consequence(self) -> str:
        """What else the broker does with an offline dir's partitions, for the audited version."""
        h = self.h
        kraft = bool(h.configs.server.get("process.roles", "").strip()) or bool(
            versions.since("kraft_only", h.kafka_version)
        )
        if kraft and versions.since("kraft_jbod", h.kafka_version) is False:
            return (
                "; a KRaft broker before 3.7 (no JBOD in KRaft, KIP-858) then recreates this dir's partitions "
                "EMPTY in another log dir and serves them from offset 0: their records are lost to consumers"
            )
        return ""

    def to_dict(self) -> dict[str, Any]:
        h = self.h
        if not self.applies:
            return {
                "kafka_version": versions.text(h.kafka_version) if h.kafka_version else None,
                "broker": None,
                "reason": "the broker is running: the plan is made for a stopped broker",
                "check": None,
                "log_dirs": [],
                "segments": [],
                "leftovers": [],
                "strays": [],
                "future_dirs": [],
                "producer_snapshots": [],
                "quorum_state": None,
                "unknown": [],
                "metadata_log": [],
                "after_failed_start": None,
            }
        if self.exit is None:  # after every partition loaded, before the KRaft broker is ready
            hang = filetypes.replication_hang(h)
            if hang is not None:
                self.exit, self.hangs = hang, True
        exited = self.exit is not None
        dirs = []
        for d in self.dirs.values():
            dirs.append(
                d.to_dict()
            )  # a broker that exits serves nothing: ``broker`` says so, states stay own
        segs = self.segments
        if exited:
            segs = [s for s in segs if s.load != AS_IS or s.deleted_at is not None]
            for s in segs:
                s.load, s.truncated_bytes, s.deleted_at, s.deleted_by = NOT_LOADED, 0, None, None
                s.reason = self.exit[0] if self.exit else None
        if self._hang_before_load:  # meta.properties: no dir reached a state before the hang
            for row in dirs:
                row.update(state="online", reason=None, check=None)
        v = h.kafka_version
        extra = self._offline_consequence()
        for fate, row in zip(self.dirs.values(), dirs):  # dirs is built from self.dirs above
            # (a dir that the failure channel takes offline after the start keeps its partitions: not recreated;
            # a partition's leader-epoch-checkpoint or partition.metadata fails its load: at load)
            at_load = fate.at_load or row.get("check") not in failure_channel.AFTER_START_CHECKS
            if row["state"] == "offline" and row.get("check") and extra and row["reason"] and at_load:
                row["reason"] += extra
            row["reason"] = versions.localize(row["reason"], v) if row["reason"] else None
        for s in segs:
            s.reason = versions.localize(s.reason, v) if s.reason else None
        for lf in self.leftovers:
            if exited:  # loadLogs never runs, or the plan loads nothing (a load failure: see the module doc)
                lf.fate, lf.reason = KEPT, self.exit[0] if self.exit else None
            elif (
                lf.fate == DELETED_AT_LOAD
                and self.dirs[lf.log_dir].state == "offline"
                and "over another one" not in (lf.reason or "")
            ):  # to_dict may be asked twice
                # the dir went offline over another partition (before or after this one in the stream)
                lf.reason = (
                    f"{lf.reason}; LogManager.loadLogs still loads this partition although the log dir goes "
                    "offline over another one"
                )
            lf.reason = versions.localize(lf.reason, v) if lf.reason else None
        return {
            "kafka_version": versions.text(h.kafka_version) if h.kafka_version else None,
            "broker": "hangs" if self.hangs else "exits" if exited else "starts",
            "reason": versions.localize(self.exit[0], v) if self.exit else None,
            "check": self.exit[1] if self.exit else None,
            "log_dirs": dirs,
            "segments": [
                s.to_dict() for s in sorted(segs, key=lambda s: (s.topic, s.partition, s.base_offset))
            ],
            "leftovers": [lf.to_dict() for lf in sorted(self.leftovers, key=lambda lf: lf.path)],
            "strays": [self._stray_dict(st, exited) for _, st in sorted(self.strays.items())],
            "future_dirs": [self._future_dict(m, exited) for _, m in sorted(self.futures.items())],
            "producer_snapshots": [
                self._snapshot_dict(c, exited) for c in sorted(self.snapshots, key=lambda c: c.path)
            ],
            "quorum_state": self._quorum_state(),
            # what the plan could not decide for lack of an input (the broker user, the mount table, statvfs)
            "unknown": environment.unknowns(h)
            + metadata_log.unknowns(h)
            + filetypes.unknowns(h)
            + meta.unknowns(h)
            + _zk_replication_unknowns(h)
            + self._type_unknowns
            + ([] if exited else self.unknown),
            "metadata_log": [d.to_dict() for d in metadata_log.damages(h)],
            "after_failed_start": self._after_failed_start(),
        }

    def _quorum_state(self) -> dict[str, Any] | None:
        """The KRaft quorum-state the start cannot read: cleared (up to 3.7), the broker's exit (3.8+: DIR007), or
        kept (the broker exits before the raft client starts, over something else)."""
        qs = quorum_state.damage(self.h)
        if qs is None:
            return None
        fate, reason = qs.start, qs.reason
        later = {d.reason for d in metadata_log.damages(self.h) if d.file == "snapshot"}
        if self.exit is not None and self.exit[0] not in (qs.reason, *later) and not self.exit_at_load:
            # an exit before loading comes before the raft client too (KafkaRaftServer checks the config and the
            # log dirs' meta.properties first)
            fate, reason = "kept", self.exit[0]
        return {
            "path": qs.path,
            "error": qs.error,
            "fate": fate,
            "reason": versions.localize(reason, self.h.kafka_version),
            "check": "DIR007",
        }

    def _after_failed_start(self) -> dict[str, Any] | None:
        """The clean-shutdown markers a start that fails while loading leaves, per log dir (broker.failed_start),
        and what the start after it (once the cause is fixed) recovers; None when the broker starts or exits
        before loading."""
        if not self.exit_at_load:
            return None
        after = failed_start.markers_after(
            self.h, not_live(self.h), self._listing_fails_in, self._failing_dir
        )
        if after is None:
            return None
        return {
            "log_dirs": [m.to_dict() for m in after],
            "check": "SHUT004" if failed_start.unsafe_dirs(after) else None,
        }

    def _snapshot_dict(self, c: producer_state.CorruptSnapshot, exited: bool) -> dict[str, Any]:
        d = c.to_dict()
        if exited:
            d["fate"], d["reason"] = producer_state.KEPT, self.exit[0] if self.exit else None
        elif self.dirs[c.log_dir].state == "offline":
            d["fate"], d["reason"] = (
                producer_state.KEPT,
                f"its log dir goes offline ({self.dirs[c.log_dir].reason})",
            )
        d["reason"] = versions.localize(str(d["reason"]), self.h.kafka_version) if d["reason"] else None
        return d

    def _future_dict(self, m: suffixed_dirs.FutureMove, exited: bool) -> dict[str, Any]:
        fate = m.fate
        reason: str | None = m.reason
        off = [
            d for d in (m.log_dir, os.path.dirname(m.current or "")) if d and self.dirs[d].state == "offline"
        ]
        if exited:
            fate, reason = suffixed_dirs.KEPT, self.exit[0] if self.exit else None
        elif off:
            fate, reason = suffixed_dirs.KEPT, f"{off[0]} goes offline ({self.dirs[off[0]].reason})"
        return {
            "path": m.path, "topic": m.topic, "partition": m.partition, "current": m.current, "fate": fate,
            "records_lost": fate == suffixed_dirs.REPLACES_CURRENT and m.lost,
            "reason": versions.localize(reason, self.h.kafka_version) if reason else None,
        }  # fmt: skip

    def _stray_dict(self, st: strays.Stray, exited: bool) -> dict[str, Any]:
        fate, at = st.fate, st.deleted_at
        reason: str | None = st.reason
        if exited:
            fate, reason, at = strays.KEPT, self.exit[0] if self.exit else None, None
        elif self.dirs[st.log_dir].state == "offline":
            fate, reason, at = strays.KEPT, f"its log dir goes offline ({self.dirs[st.log_dir].reason})", None
        return {
            "path": st.path, "topic": st.topic, "partition": st.partition, "topic_id": st.topic_id,
            "why": st.why, "fate": fate, "deleted_at": iso(at, "z_ms"), "reason": reason,
        }  # fmt: skip


def plan_sentences(ns: dict[str, Any] | None, limit: int = 10) -> list[str]:
    """The report's ``next_start`` in words: one short section for the text, Markdown and HTML outputs."""
    if not ns:
        return []
    v = f"Kafka {ns['kafka_version']}" if ns.get("kafka_version") else "Kafka version unknown"
    if ns.get("broker") is None:
        return [f"Next start ({v}): {ns.get('reason') or 'no plan'}."]
    if ns["broker"] == "exits":
        out = [f"Next start ({v}): the broker EXITS: {ns['reason']} [{ns['check']}]."]
    elif ns["broker"] == "hangs":
        out = [f"Next start ({v}): the broker HANGS: {ns['reason']} [{ns['check']}]."]
    else:
        out = [f"Next start ({v}): the broker starts."]
    for d in ns["log_dirs"]:
        if d["state"] == "offline" and d.get("check"):
            out.append(
                f"{d['path']} goes OFFLINE ({d['segments_not_loaded']} segments not loaded): {d['reason']} "
                f"[{d['check']}]."
            )
    by_reason: dict[str, list[str]] = {}  # what the plan could not decide, one line per missing input
    for u in ns.get("unknown") or []:
        by_reason.setdefault(u["reason"], []).append(u["what"])
    for reason, whats in by_reason.items():
        out.append(f"Not decided ({reason}): " + "; ".join(whats) + ".")
    segs = ns["segments"]
    if ns["broker"] in ("exits", "hangs"):
        out.append(
            "Nothing is loaded, recovered or deleted until that is fixed"
            + (f" ({len(segs)} segment(s) would otherwise change)" if segs else "")
            + ": fix it and audit again."
        )
        for d in (ns.get("after_failed_start") or {}).get("log_dirs", []):
            if d["unsafe"]:
                out.append(
                    f"  That failed start WRITES .kafka_cleanshutdown into {d['path']}, which needs recovery: the "
                    "start after it skips that recovery (KAFKA-15375) [SHUT004]."
                )
        return out
    counts: dict[str, list[int]] = {}
    for s in segs:
        key = s["load"] if s["load"] != AS_IS else ""
        if key:
            c = counts.setdefault(key, [0, 0])
            c[0] += 1
            c[1] += s["truncated_bytes"]
    words = {
        RECOVERED: "recovers {n} segment(s) (re-reads them, rebuilds their indexes){t}",
        INDEXES_REBUILT: "rebuilds the indexes of {n} segment(s){t}",
        NOT_LOADED: "does not load {n} segment(s) that the plan would otherwise change",
    }
    parts = []
    for key in (RECOVERED, INDEXES_REBUILT, NOT_LOADED):
        if key in counts:
            n, t = counts[key]
            parts.append(words[key].format(n=n, t=f", truncating {t} bytes" if t else ""))
    by_recovery = [s for s in segs if s["deleted_by"] == RECOVERY]
    by_retention = [
        s for s in segs if s["deleted_at"] and s["deleted_by"] not in (RECOVERY, DELETE_DIR, SWAP)
    ]
    by_swap = [s for s in segs if s["deleted_by"] == SWAP or s["load"] == SWAPPED_IN]
    by_delete_dir = [s for s in segs if s["deleted_by"] == DELETE_DIR]
    if by_recovery:
        parts.append(f"deletes {len(by_recovery)} segment(s) after a truncation (LogLoader.recoverLog)")
    if by_swap:
        parts.append(
            f"completes {len({s['log'].rsplit('/', 1)[0] for s in by_swap})} interrupted swap(s) (.swap leftovers): "
            f"{sum(s['load'] == SWAPPED_IN for s in by_swap)} segment(s) replaced, "
            f"{sum(s['deleted_by'] == SWAP for s in by_swap)} deleted"
        )
    if by_delete_dir:
        dirs = {s["log"].rsplit("/", 1)[0] for s in by_delete_dir}
        parts.append(
            f"removes {len(dirs)} -delete dir(s) whole ({len(by_delete_dir)} segment(s)) at "
            f"{min(s['deleted_at'] for s in by_delete_dir)} (kafka-delete-logs)"
        )
    if by_retention:
        first = min(s["deleted_at"] for s in by_retention)
        parts.append(
            f"then retention deletes {len(by_retention)} segment(s) within the horizon, the first at {first}"
        )
    fallback = [
        s for s in segs if s["load"] == AS_IS and (s["reason"] or "").startswith(NEXT_OFFSET_FALLBACK)
    ]
    if fallback:
        parts.append(
            f"loads {len(fallback)} active segment(s) whose log end offset falls back to their base offset "
            "(records still in the file are no longer served, and new ones reuse their offsets)"
        )
    if not parts:
        parts.append("loads every segment as it is, and retention deletes nothing within the horizon")
    gone = [lf for lf in ns.get("leftovers", []) if lf["fate"] == DELETED_AT_LOAD]
    if gone:
        kinds = sorted({lf["kind"] for lf in gone})
        parts.append(
            f"deletes {len(gone)} leftover file(s) at load ({', '.join('.' + k for k in kinds)}: "
            "removeTempFilesAndCollectSwapFiles)"
        )
    out.append("It " + "; ".join(parts) + ".")
    if by_retention and ns.get("config_note"):  # one line, not one per segment (audit.run.config_sources)
        out.append(f"  Retention assumes the broker's defaults for every topic: {ns['config_note']}.")
    q = ns.get("quorum_state")
    if q and q["fate"] == quorum_state.CLEARED:
        out.append(
            f"  {q['path']} cannot be read ({q['error']}): the start clears it and forgets its vote [DIR007]"
        )
    for c in ns.get("producer_snapshots", []):
        if c["fate"] == producer_state.DELETED_AT_LOAD:
            out.append(
                f"  producer snapshot {c['path']} is corrupt ({c['error']}): deleted at load, the producer state "
                f"rebuilt from offset {c['rebuilt_from']} ({c['reread_bytes']} bytes re-read)"
            )
    for st in ns.get("strays", []):
        what = {
            strays.RENAMED_STRAY: "renamed <dir>.<uuid>-stray and kept (not served)",
            strays.DELETED: f"renamed -delete and DELETED at {st['deleted_at']}",
            strays.KEPT: "kept as it is",
            strays.DEPENDS: "deleted or renamed -stray, by release",
        }[st["fate"]]
        out.append(f"  stray {st['path']} ({st['why']}): {what} [DIR006]")
    for fd in ns.get("future_dirs", []):
        if fd["fate"] != suffixed_dirs.REPLACES_CURRENT:
            continue
        what = (
            "truncated to offset 0 and made the partition's log: its records are LOST"
            if fd["records_lost"]
            else f"the move resumes and replaces {fd['current']} (renamed -delete) once caught up"
        )
        out.append(f"  future dir {fd['path']}: {what} [DIR003]")
    shown = sorted(segs, key=lambda s: (not s["truncated_bytes"], not s["deleted_at"]))[:limit]
    for s in shown:
        what = s["load"].replace("_", " ")
        if s["truncated_bytes"]:
            what += f", {s['truncated_bytes']} bytes truncated"
        if s["deleted_at"]:
            what += f", deleted by {s['deleted_by']} at {s['deleted_at']}"
        checks = f" [{', '.join(s['checks'])}]" if s["checks"] else ""
        out.append(f"  {s['topic']}-{s['partition']} segment {s['base_offset']}: {what}{checks}")
    if len(segs) > limit:
        out.append(f"  ... and {len(segs) - limit} more segment(s) (--format json lists them all)")
    return out
