"""The filesystem a log dir is on, against what the broker's start writes there: a read-only mount, no free
space or no free inode for the broker user. The one rule that ENV001 reports and the next-start plan follows.

What a start writes in each log dir (apache/kafka at the tags named; the lab's real brokers judged each rule,
``tests/lab/test_environment.py``):

* ``.lock``: ``LogManager.lockLogDirs`` opens it with ``FileLock`` (``FileChannel.open(CREATE, READ, WRITE)``,
  even when it exists); an IOException is "Disk error while locking directory <dir>" on the LogDirFailureChannel
  (LogManager.scala@2.8.2:228-242): the dir goes offline.
* ``.kafka_cleanshutdown`` is deleted before the dir's logs load (``Files.deleteIfExists``,
  LogManager.scala@2.8.2:316-322, KAFKA-10471); an IOException there is "Error while loading log dir".
* After a clean stop, each partition whose leader-epoch-checkpoint has an entry at or below the log start
  offset (nearly every partition: epoch 0 at offset 0) rewrites it at load: ``LeaderEpochFileCache
  .truncateFromStart`` -> ``flush`` (LeaderEpochFileCache.scala@2.8.2:255-268) -> ``CheckpointFile.write``
  (``<name>.tmp``, written, fsynced, renamed): on a full filesystem "No space left on device", thrown as
  KafkaStorageException, which ``LogManager.loadLogs`` does not catch before KAFKA-13773 (3.2.1): "There was an
  error in one of the threads during logs loading" and the broker exits (lab: 2.8.2); from 3.2.1 the dir goes
  offline.
* After an unclean stop, recovery rebuilds the indexes of the recovered segments and takes a producer-state
  snapshot after each (``Log.recoverSegment`` -> ``ProducerStateManager.takeSnapshot``, Log.scala@2.8.2:752): on a
  full filesystem the snapshot's write is an IOException and the dir goes offline (lab: 2.8.2); an index entry
  written through its memory map into a block the filesystem cannot allocate is a SIGBUS instead, which the JVM
  raises as ``InternalError`` ("a fault occurred in a recent unsafe memory access operation"; lab: 3.7.2's
  metadata log in ``LogSegment.recover`` -> ``TimeIndex.maybeAppend``): not an IOException, so the broker exits.
  Which comes first depends on the blocks the indexes had: the plan says the dir goes offline and names the exit.
* The KRaft metadata log (``__cluster_metadata-0``) is opened read-write and recovered at every start by the raft
  client, before LogManager (``KafkaRaftManager.buildMetadataLog``): on a read-only or full metadata log dir
  "Got exception while starting SharedServer" and the broker exits (lab: 3.7.2).
* The four log-dir checkpoints are created empty when missing, as their ``OffsetCheckpointFile`` is constructed
  (``Files.createFile`` in the ``CheckpointFile`` constructor: CheckpointFile.scala@2.8.2:87,
  server-common CheckpointFile.java@1eb7644:64-70), outside the failure channel: recovery-point-offset-checkpoint
  and log-start-offset-checkpoint when LogManager is built (LogManager.scala@2.8.2:107-110, @3.7.1:133-137,
  @1eb7644:134-137), cleaner-offset-checkpoint when the cleaner starts (LogCleanerManager.scala@2.8.2:73-74,
  ``log.cleaner.enable``), replication-offset-checkpoint when the ReplicaManager is built
  (ReplicaManager.scala@2.8.2:260-261, @3.7.1:308-309). A dir that failed at ``.lock`` is still among
  ``liveLogDirs`` then (the failure handler runs later, from ReplicaManager.startup), so a missing checkpoint in a
  dir the broker user cannot create files in (read-only, no free inode, a root it cannot write) makes the
  constructor's IOException end the start: "Fatal error during KafkaServer startup" (lab: 2.8.2, a root-owned
  dir without recovery-point-offset-checkpoint, AccessDeniedException) and the broker exits.
* ZooKeeper mode writes ``meta.properties`` to every online log dir at the end of every start
  (``KafkaServer.checkpointBrokerMetadata``, KafkaServer.scala@2.8.2:311,769-774); its IOException is fatal.

A broker running as root may use the filesystem's reserved blocks (``f_bfree``); any other user gets
``f_bavail``, which is what the broker user sees (the lab's 64 MiB ext4 had 1.8 k free blocks for root and none
for ``kafka``). A filesystem with no free inode cannot create the ``.tmp`` files: the same outcomes as no space.
Whether the broker user may write in the dir at all is ``reach`` (PERM003); without a broker user that is
unknown, and the plan says so (:func:`unknowns`).
"""

from __future__ import annotations

import os

from kafka_ops.broker import reach
from kafka_ops.broker.meta import broker_mode, metadata_log_dir
from kafka_ops.engine import versions
from kafka_ops.engine.compat import slotted
from kafka_ops.facts.model import HostFacts, LogDirFacts
from kafka_ops.units import human_bytes

CHECK = "ENV001"
EXITS, OFFLINE = "exits", "offline"
# the checkpoints created when missing, in the order the start builds their OffsetCheckpointFile
CREATED = (
    ("recovery-point-offset-checkpoint", "LogManager is built"),
    ("log-start-offset-checkpoint", "LogManager is built"),
    ("cleaner-offset-checkpoint", "the log cleaner starts"),
    ("replication-offset-checkpoint", "the ReplicaManager is built"),
)


@slotted(frozen=True)
class EnvVerdict:
    start: str  # exits | offline
    problem: str  # read_only | no_space | no_inodes | cannot_create | cluster_id
    reason: str
    fix: str
    # the other outcome the broker may choose (the plan keeps ``start`` and names this in next_start.unknown)
    alternative: str | None = None


def free_for_broker(h: HostFacts, ldf: LogDirFacts) -> int | None:
    """Bytes the broker user can still allocate on the log dir's filesystem (None: not known)."""
    m = ldf.mount
    if m is None:
        return None
    if h.identity is not None and h.identity.uid == 0 and m.free_bytes_root is not None:
        return m.free_bytes_root
    return m.free_bytes


def _cannot_create(h: HostFacts, ldf: LogDirFacts) -> str | None:
    """Why the broker user cannot create a file in the log dir's root, or None (it can, or it is not known)."""
    m = ldf.mount
    if m is not None and m.read_only:
        return "its filesystem is read-only"
    if m is not None and m.free_inodes is not None and m.free_inodes <= 0:
        return "its filesystem has no free inode"
    who = h.identity
    if who is not None:
        for pr in reach.problems(who, ldf):
            # a parent or the root without search: meta.properties is unreadable, the dir is not live (PERM003)
            if pr["kind"] in ("parent", "create", "not_dir") or "x" in str(pr["missing"]):
                return None
            if pr["kind"] == "root" and "w" in str(pr["missing"]):
                return f"the broker user {who.user} cannot write in it ({pr['owner']})"
    return None


def _fatal_line(h: HostFacts) -> str:
    # KafkaServer.startup (ZooKeeper mode) / BrokerServer.startup (KRaft, BrokerServer.scala@3.7.1:552)
    if broker_mode(h) == "kraft":
        return "Fatal error during broker startup. Prepare to shutdown"
    return "Fatal error during KafkaServer startup. Prepare to shutdown"


def _missing_created(h: HostFacts, ldf: LogDirFacts) -> list[tuple[str, str]]:
    cleaner = h.configs.server.get("log.cleaner.enable", "true").strip().lower() != "false"
    present = {os.path.basename(f.path) for f in ldf.scan.root_files}
    return [
        (name, when)
        for name, when in CREATED
        if name not in present and (cleaner or name != "cleaner-offset-checkpoint")
    ]


def verdict(h: HostFacts, ldf: LogDirFacts) -> EnvVerdict | None:
    """What the next start does with this log dir because of its filesystem, or None (nothing, or not known)."""
    m = ldf.mount
    if h.broker_state == "running" or not ldf.scan.exists:
        return None
    why = _cannot_create(h, ldf)
    missing = _missing_created(h, ldf) if why else []
    if why and missing:
        name, when = missing[0]
        return EnvVerdict(
            EXITS, "cannot_create",
            f"{ldf.path}/{name} is missing and {ldf.path} cannot have files created in it ({why}): the start "
            f"creates it empty when {when} (Files.createFile in the CheckpointFile constructor, outside the log "
            f"dir failure channel), and the IOException ends the start ('{_fatal_line(h)}'): the broker exits",
            f"Make {ldf.path} writable by the broker user before the start (its filesystem read-write with free "
            "inodes, the dir owned by the broker user), or take it out of log.dirs.",
        )  # fmt: skip
    if m is None:
        return None
    kraft_meta = broker_mode(h) == "kraft" and metadata_log_dir(h) == ldf.path
    where = f"{ldf.path} (filesystem {m.mount_point}, {m.fstype} {m.source})"
    if m.read_only:
        how = (
            "read-only (mounted ro, or remounted read-only by the kernel after I/O errors: check dmesg)"
            if "ro" in m.options.split(",")
            else "read-only"
        )
        fix = (
            f"Find why it is read-only (dmesg; a filesystem remounted read-only after errors needs fsck first), "
            f"then mount it read-write (mount -o remount,rw {m.mount_point}, and rw in /etc/fstab) before the "
            "broker starts."
        )
        if kraft_meta:
            return EnvVerdict(
                EXITS, "read_only",
                f"{where} is {how}: the KRaft metadata log in it is opened read-write by the raft client before "
                "LogManager ('Got exception while starting SharedServer' ... 'Read-only file system') and the broker "
                "exits",
                fix,
            )  # fmt: skip
        return EnvVerdict(
            OFFLINE, "read_only",
            f"{where} is {how}: LogManager.lockLogDirs cannot open {ldf.path}/.lock read-write ('Disk error while "
            "locking directory' ... 'Read-only file system'), nor delete .kafka_cleanshutdown ('Error while "
            "loading log dir'): the log dir goes offline at the start",
            fix,
        )  # fmt: skip
    free = free_for_broker(h, ldf)
    no_space = free is not None and free <= 0
    no_inodes = m.free_inodes is not None and m.free_inodes <= 0
    if not (no_space or no_inodes):
        return None
    what = (
        f"has no free space for the broker user ({human_bytes(free or 0)} available)"
        if no_space
        else "has no free inode for the broker user"
    )
    problem = "no_space" if no_space else "no_inodes"
    fix = (
        f"Free space on {m.mount_point} before the broker starts (leftover -delete/-stray dirs: DIR003; files that "
        "are not Kafka's; lower retention once it runs), or grow the filesystem. Never delete segment files by hand."
        if no_space
        else f"Free inodes on {m.mount_point} (remove files that are not Kafka's) or grow the filesystem."
    )
    if kraft_meta:
        return EnvVerdict(
            EXITS, problem,
            f"{where} {what}: the KRaft metadata log in it is recovered at every start, and its rebuilt indexes "
            "need new blocks (a SIGBUS in the memory-mapped index: InternalError 'a fault occurred in a recent "
            "unsafe memory access operation', 'Got exception while starting SharedServer'): the broker exits",
            fix,
        )  # fmt: skip
    if not ldf.clean_shutdown:
        return EnvVerdict(
            OFFLINE, problem,
            f"{where} {what}: after an unclean stop recovery rewrites the indexes and writes a producer snapshot "
            "for each recovered segment (Log.recoverSegment -> ProducerStateManager.takeSnapshot), and the "
            "IOException 'No space left on device' takes the log dir offline ('Error while loading log dir'); "
            "unless an index entry written into its memory map where no block can be allocated comes first: a "
            "SIGBUS, InternalError 'a fault occurred in a recent unsafe memory access operation', not an "
            "IOException, and the broker exits (a real 2.8.2 broker did each, on the same files)",
            fix,
            f"the broker exits instead of taking {ldf.path} offline if a rebuilt index entry needs a block before "
            "a producer snapshot does (InternalError from the memory-mapped index): which write fails first is not "
            "in the files",
        )  # fmt: skip
    caught = versions.since("catch_storage_exception_at_load", h.kafka_version)
    rewrite = (
        f"{where} {what}: loading each partition rewrites its leader-epoch-checkpoint "
        "(LeaderEpochFileCache.truncateFromStart -> CheckpointFile.write of a .tmp file), which fails with 'No "
        "space left on device' as a KafkaStorageException ('Error while writing to checkpoint file')"
    )
    if caught is False:
        return EnvVerdict(
            EXITS, problem,
            f"{rewrite}, which LogManager.loadLogs does not catch before KAFKA-13773: 'There was an error in one "
            "of the threads during logs loading' and the broker exits",
            fix,
        )  # fmt: skip
    return EnvVerdict(
        OFFLINE, problem,
        f"{rewrite}, which LogManager.loadLogs catches (KAFKA-13773, 3.2.1): the log dir goes offline at the start"
        + ("" if caught else "; a broker older than 3.2.1 exits instead (the Kafka version is unknown)"),
        fix,
        None if caught else "a broker older than 3.2.1 exits instead (KAFKA-13773; the Kafka version is unknown)",
    )  # fmt: skip


ID_CHECK = "ENV002"


def identity_verdict(h: HostFacts) -> EnvVerdict | None:
    """The exit of a ZooKeeper-mode broker whose meta.properties name another cluster than ZooKeeper's
    ``/cluster/id`` (read with --zookeeper), or None (they match, or it is not known: :func:`unknowns`).

    KafkaServer.startup (KafkaServer.scala@2.8.2:200-218, the same up to 3.9): ``getOrGenerateClusterId`` reads
    /cluster/id, creating it with a new random id when it is missing; then "The Cluster ID <zk> doesn't match
    stored clusterId Some(<meta>) in meta.properties. The broker is trying to join the wrong cluster. Configured
    zookeeper.connect may be wrong." (InconsistentClusterIdException) and the broker exits, before LogManager."""
    if h.broker_state == "running" or broker_mode(h) != "zk" or not h.meta_cluster_id:
        return None
    zk = h.options.zookeeper
    if zk is None:
        return None
    theirs, at = zk.get("cluster_id"), zk.get("connect")
    if theirs == h.meta_cluster_id:
        return None
    if theirs is None:
        what = (
            f"ZooKeeper at {at} has no /cluster/id: the broker creates it with a new random id "
            "(getOrGenerateClusterId), which is not"
        )
    else:
        what = f"ZooKeeper at {at} has /cluster/id {theirs}, not"
    return EnvVerdict(
        EXITS, "cluster_id",
        f"{what} the cluster.id {h.meta_cluster_id} of meta.properties: InconsistentClusterIdException ('The "
        f"Cluster ID ... doesn't match stored clusterId Some({h.meta_cluster_id}) in meta.properties. The broker is "
        "trying to join the wrong cluster. Configured zookeeper.connect may be wrong.') and the broker exits before "
        "it opens a log dir",
        "Point zookeeper.connect at this broker's own ZooKeeper ensemble (with its chroot, e.g. zk1:2181/kafka). "
        "Only if these log dirs really are to join that cluster: move meta.properties aside in every log dir "
        "(their data is another cluster's: remove it too), never edit cluster.id to make the check pass.",
    )  # fmt: skip


def _has_peers(h: HostFacts) -> bool:
    """Whether a KRaft node's config names other nodes that check its cluster id: a broker-only node, a quorum
    named by controller.quorum.bootstrap.servers (KIP-853), or voters besides itself."""
    s = h.configs.server
    voters = [
        v.split("@", 1)[0].strip() for v in s.get("controller.quorum.voters", "").split(",") if v.strip()
    ]
    node = (s.get("node.id") or s.get("broker.id") or "").strip()
    roles = {r.strip() for r in s.get("process.roles", "").split(",") if r.strip()}
    if s.get("controller.quorum.bootstrap.servers", "").strip() or (roles and "controller" not in roles):
        return True
    return any(v != node for v in voters)


def kraft_identity_hang(h: HostFacts) -> str | None:
    """The hang of a KRaft node whose meta.properties name another cluster than the cluster at --bootstrap-server
    (taken for this node's own: CLU004 says when it is not), or None.

    Every raft RPC carries the sender's cluster id, and a voter answers another one with INCONSISTENT_CLUSTER_ID
    (KafkaRaftClient.hasValidClusterId, KafkaRaftClient.java@3.9.0-rc3:770,985,1141,1372); the node logs
    "Unexpected error INCONSISTENT_CLUSTER_ID in FETCH response" and retries, never catches up, and a broker loads
    its logs only at its first metadata publish (BrokerMetadataPublisher.initializeManagers,
    BrokerMetadataPublisher.scala@3.9.0-rc3:271-275): it never starts, nor exits (lab 3.9.1, a broker of another
    cluster.id beside its controller: retried every ~20 ms, not ready after 60 s)."""
    if h.broker_state == "running" or broker_mode(h) != "kraft" or not h.meta_cluster_id or not _has_peers(h):
        return None
    cluster = h.cluster or {}
    theirs = cluster.get("cluster_id")
    if not theirs or theirs == h.meta_cluster_id:
        return None
    return (
        f"the cluster at {cluster.get('bootstrap')} has cluster.id {theirs}, not meta.properties' "
        f"{h.meta_cluster_id}: its controllers answer this node's raft requests with INCONSISTENT_CLUSTER_ID, so it "
        "never catches up with the metadata and never loads its logs: the start hangs (CLU004)"
    )


def _identity_unknown(h: HostFacts) -> dict[str, str] | None:
    """The cluster-id comparison the plan could not make (stopped, meta.properties with an id): ZooKeeper's
    (ZooKeeper mode) or the quorum's (KRaft, a node with peers), when nothing that knows it answered."""
    if not h.meta_cluster_id:
        return None
    if broker_mode(h) == "kraft":
        theirs = (h.cluster or {}).get("cluster_id")
        if theirs or not _has_peers(h):
            return None  # compared (kraft_identity_hang), or no other node to compare with
        return {
            "what": f"whether this node's quorum has meta.properties' cluster.id {h.meta_cluster_id}: if not, its "
            "start hangs (INCONSISTENT_CLUSTER_ID from its controllers)",
            "reason": h.options.cluster_skip
            or "the cluster was not asked (--bootstrap-server gives its cluster id)",
        }
    if broker_mode(h) != "zk" or h.options.zookeeper is not None:
        return None
    cluster = h.cluster or {}
    theirs = cluster.get("cluster_id")
    if theirs and theirs == h.meta_cluster_id:
        return None  # the cluster at --bootstrap-server shares it: its ZooKeeper has it
    why = h.options.zookeeper_skip or "ZooKeeper was not asked (--zookeeper auto reads zookeeper.connect)"
    if theirs:
        why += f"; the cluster at {cluster.get('bootstrap')} has cluster.id {theirs} (CLU004)"
    elif h.options.cluster_skip:
        why += f"; {h.options.cluster_skip}"
    return {
        "what": f"whether ZooKeeper's /cluster/id is meta.properties' {h.meta_cluster_id}: if not, the broker "
        "exits (InconsistentClusterIdException, ENV002)",
        "reason": why,
    }


def unknowns(h: HostFacts) -> list[dict[str, str]]:
    """What the plan could not decide about the start's writes, for lack of an input: [{what, reason}]."""
    if h.broker_state == "running":
        return []
    out = []
    ident = _identity_unknown(h)
    if ident is not None:
        out.append(ident)
    for ldf in h.log_dirs:
        if not ldf.scan.exists:
            continue
        v = verdict(h, ldf)
        if v is not None and v.alternative:
            out.append({
                "what": f"whether the broker starts with {ldf.path} offline, or exits (ENV001)",
                "reason": v.alternative,
            })  # fmt: skip
        if h.identity is None:
            out.append({
                "what": f"whether the broker user can write in {ldf.path} (.lock, the checkpoints, "
                ".kafka_cleanshutdown's deletion, meta.properties): a dir it cannot write goes offline (PERM003)",
                "reason": "the broker user is unknown (--broker-user, or User= in the systemd unit)",
            })  # fmt: skip
        m = ldf.mount
        if m is None or not m.options:
            out.append({
                "what": f"whether {ldf.path}'s filesystem is read-only (a read-only log dir goes offline, ENV001)",
                "reason": "the mount table (/proc/self/mountinfo) was not read",
            })  # fmt: skip
        if m is None or free_for_broker(h, ldf) is None:
            out.append({
                "what": f"whether {ldf.path}'s filesystem has space for what the start writes (ENV001)",
                "reason": "statvfs of the log dir failed",
            })  # fmt: skip
    return out
