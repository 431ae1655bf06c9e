"""Partition dirs of topics the KRaft metadata no longer has ("strays"), and what the next start does with them.

A host may carry partition dirs of a topic the cluster deleted while the broker was down, or that came back
from a backup restore. A KRaft broker judges every loaded log against the metadata image it gets at its start
(apache/kafka, core/src/main/scala/kafka/):

* up to 2.8 (KRaft preview): no such judgement; the log is loaded and kept.
* 3.0.0 to 3.6.2: at the first metadata publish, ``BrokerMetadataPublisher.findStrayPartitions`` (server/metadata/
  BrokerMetadataPublisher.scala@3.0.0:65, @3.5.2:72-98, @3.6.2:72-98) returns every log whose topic id is not in
  the image ("Found stray log dir ...: the topicId ... does not exist in the metadata image") or whose replicas
  do not hold this broker; ``finishInitializingReplicaManager`` (@3.5.2:380-392, @3.6.2:349-359) hands them to
  ``ReplicaManager.deleteStrayReplicas`` -> ``stopPartitions(tp -> true)`` (delete = true) -> ``LogManager.
  asyncDelete`` without ``isStray``: the dir is renamed ``<tp>.<uuid>-delete`` and the kafka-delete-logs task
  removes it once file.delete.delay.ms has passed. The records are gone. (3.6.1/3.6.2 only load -stray dirs,
  KAFKA-15605's loader part; their publisher still deletes.)
* 3.7.0: ``BrokerMetadataPublisher.initializeManagers`` calls ``LogManager.deleteStrayKRaftReplicas`` right
  after ``logManager.startup`` (LogManager.scala@3.7.0:573-580, BrokerMetadataPublisher.scala@3.7.0:285-300):
  ``asyncDelete(tp, isStray = true)`` renames the dir ``<tp>.<uuid>-stray`` ("Log for partition ... is marked as
  stray and renamed to ...", LogManager.scala@3.7.0:1258-1261) and keeps it: "Move aside stray partitions, don't
  delete them" (KAFKA-15605).
* 3.7.1 to 4.x: ``LogManager.loadLog`` asks ``isStray`` (``LogManager.isStrayKraftReplica``, LogManager.scala
  @3.7.1:1596, @3.9.0-rc3:1611-1641, trunk of 2024-10-25) for every loaded log and renames a stray one
  ``<tp>.<uuid>-stray`` at load ("Log in ... marked stray and renamed to ...", @3.9.0-rc3:359-366): kept, loaded as
  a stray log, no retention, never deleted by the broker.
* ZooKeeper mode: the broker cannot tell from its disk (a topic deletion stays pending in ZooKeeper until the
  replica is back, then the controller's StopReplica(delete = true) deletes it): nothing is predicted here.

What this module knows is what this host's copy of the metadata log says (``__cluster_metadata-0``: its latest
snapshot ``<offset>-<epoch>.checkpoint`` and the records after it). The broker decides from the quorum's latest
image, which can only be newer: a topic deleted after this host's copy ends is missed here, never invented. When
the metadata log is not on this host, cannot be read whole, or has a gap, nothing is predicted. A dir is judged by
its ``partition.metadata`` topic id and partition number, as Kafka does (``getPartition(topicId, partition)``), and
then by the partition's replica set: every KRaft release that looks for strays also takes a partition whose
replicas do not hold this broker's ``node.id`` for one ("Found stray log dir ...: the current replica assignment
... does not contain the local brokerId", BrokerMetadataPublisher.findStrayPartitions@3.0.0:76-81,
@3.6.2:81-86; LogManager.findStrayReplicas@3.7.0:1564-1569, isStrayKraftReplica@3.7.1:1612-1618): a replica
reassigned away while the broker was down. The replicas are PartitionRecord's, then every PartitionChangeRecord's
that sets them (a null Replicas field leaves them as they were, PartitionRegistration.merge@3.7.1:241). A dir without a
readable ``partition.metadata`` is judged by the 3.7.1+ rule below only.

A ``<tp>.<uuid>-future`` dir (an interrupted intra-broker move) is judged the same way: its future log is in
``allLogs`` (``currentLogs.values ++ futureLogs.values``, LogManager.scala@3.7.0:1388), which
``findStrayPartitions`` (BrokerMetadataPublisher.scala@3.6.2:353) and ``findStrayReplicas`` walk, and 3.7.1+'s
``loadLog`` asks ``isStray`` before it files a log as current or future (LogManager.scala@3.7.1:358-369). Its fate:
3.0-3.6 rename it ``<tp>.<uuid>-delete`` and delete it (``asyncDelete(topicPartitions, ...)`` deletes the future log
too, LogManager.scala@3.6.2:1241-1244); 3.7.0 keeps it as a future log (``deleteStrayKRaftReplicas`` moves aside the
current log only: ``asyncDelete(topicPartition, false, false, true)``, isFuture false, @3.7.0:579); 3.7.1+ renames it
``<tp>.<uuid>-stray``. Either way its move never resumes: the broker neither leads nor follows a partition the
metadata does not give it (``kafka_ops.broker.suffixed_dirs`` leaves such a dir to this module). Standard library
only.
"""

from __future__ import annotations

import os

from kafka_ops.broker import meta, suffixed_dirs
from kafka_ops.engine import checkpoints as ckpt
from kafka_ops.engine import versions
from kafka_ops.engine.compat import slotted
from kafka_ops.engine.errors import EngineError
from kafka_ops.engine.layout import METADATA_TOPIC
from kafka_ops.facts.kraft_metadata import MetadataImage, read_image
from kafka_ops.facts.model import HostFacts

RENAMED_STRAY, DELETED, KEPT, DEPENDS = "renamed_stray", "deleted", "kept", "depends"
EXITS = "exits"  # 3.7.0 only: a log without a topic id stops the start (KAFKA-16814)


@slotted
class Stray:
    path: str
    log_dir: str
    topic: str
    partition: int
    topic_id: str
    why: str  # what the metadata says instead
    fate: str  # renamed_stray | deleted | kept | depends
    reason: str
    deleted_at: int | None = None  # for "deleted": when the kafka-delete-logs task removes the renamed dir
    live: bool = (
        False  # the live partition's own data (no topic id): moved aside and the partition created empty
    )
    reassigned: bool = False  # the topic and partition exist, but their replicas do not hold this broker

    @property
    def tp_name(self) -> str:
        """``<topic>-<partition>``: the name the broker renames it by (``<tp>.<uuid>-stray`` / ``-delete``), also
        for a ``<tp>.<uuid>-future`` dir."""
        return f"{self.topic}-{self.partition}"


def metadata_partition_dir(h: HostFacts) -> str | None:
    """The ``__cluster_metadata-0`` dir of this host's KRaft metadata log (in the metadata log dir when it is
    there, else in any audited log dir), or None."""
    found = [
        path
        for ldf in h.log_dirs
        for path, name in ldf.scan.partition_names
        if name.topic == METADATA_TOPIC and name.kind == "log" and name.partition == 0
    ]
    want = meta.metadata_log_dir(h)
    for path in found:
        if want is not None and os.path.dirname(path) == want:
            return path
    return found[0] if found else None


_last: tuple[object, list[Stray]] = (None, [])


def find(h: HostFacts) -> list[Stray]:
    """Every partition dir of this host that the broker's next start takes for a stray (module doc), with its
    fate; empty when the broker is not KRaft or the metadata log is not on this host or cannot be read.
    Asked by the plan and by DIR006: the answer is kept for the last host asked."""
    global _last
    if _last[0] is not h:
        _last = (h, _find(h))
    return _last[1]


def _find(h: HostFacts) -> list[Stray]:
    # a running broker has judged its logs already, and one deleting a topic right now renames the dir just after
    # the RemoveTopicRecord reaches its log: only a broker that is not running is judged
    if meta.broker_mode(h) != "kraft" or h.broker_state == "running":
        return []
    mdir = metadata_partition_dir(h)
    if mdir is None:
        return []
    image = read_image(mdir)
    if image is None:
        return []
    out: list[Stray] = []
    node = _node_id(h)
    for ldf in h.log_dirs:
        for path, name in ldf.scan.partition_names:
            if name.kind not in ("log", "future") or name.topic == METADATA_TOPIC:
                continue
            future = name.kind == "future"
            pm = os.path.join(path, "partition.metadata")
            # PartitionMetadataFile.exists() is File.exists(), which follows a link: a symlink to nothing is no
            # file (lab 3.7.2 type-partition_metadata_symlink_dangling: renamed -stray as for a missing one)
            if not os.path.exists(pm):
                st = _without_topic_id(h, image, ldf.path, path, name.topic, name.partition, future)
                if st is not None:
                    out.append(st)
                continue
            try:
                tid = ckpt.read_partition_metadata(pm)["topic_id"]  # never empty nor the zero id
            except (EngineError, OSError):
                continue  # no topic id to judge by (module doc); a damaged file takes the dir offline (DIR005)
            entry = image.topics.get(tid)
            if entry is not None and name.partition in entry[1]:
                replicas = image.replicas.get((tid, name.partition))
                if node is None or replicas is None or node in replicas:
                    continue
                fate, reason, at = _fate(h, path, future)
                why = (
                    f"topic {entry[0]!r} partition {name.partition} is assigned to node(s) "
                    f"{', '.join(map(str, replicas)) or 'none'}, not to this broker (node.id {node}): reassigned away"
                )
                reason = (
                    f"the metadata's replica set of {name.topic}-{name.partition} does not hold this broker, which "
                    f"takes its copy for a stray ('Found stray log dir ...: the current replica assignment ... does "
                    f"not contain the local brokerId {node}'): {reason}"
                )
                out.append(
                    Stray(
                        path,
                        ldf.path,
                        name.topic,
                        name.partition,
                        tid,
                        why,
                        fate,
                        reason,
                        at,
                        reassigned=True,
                    )
                )
                continue
            if entry is not None:
                why = f"topic id {tid} ({entry[0]!r}) has no partition {name.partition} in the metadata"
            else:
                other = image.name_id(name.topic)
                why = (
                    f"the metadata has topic {name.topic!r} with id {other}, not the dir's {tid} (deleted and "
                    "created again)"
                    if other is not None
                    else f"the metadata has no topic {name.topic!r} and no topic id {tid} (deleted, or restored "
                    "from a backup)"
                )
            fate, reason, at = _fate(h, path, future)
            if (
                not future
                and entry is None
                and other is not None
                and name.partition in image.topics[other][1]
            ):
                if fate in (RENAMED_STRAY, DELETED, DEPENDS):
                    # seen on a real 4.3.1 broker: "Created log for partition t00-0 in <the same dir>" once the
                    # stray was renamed, and the acknowledged records of the old id were no longer served
                    reason += (
                        f"; the broker then creates {name.topic}-{name.partition} anew, EMPTY, for the topic of "
                        "that name the metadata has (when this broker is one of its replicas): served from offset 0, "
                        "without this dir's records"
                    )
            out.append(Stray(path, ldf.path, name.topic, name.partition, tid, why, fate, reason, at))
    return out


def future_moves(h: HostFacts) -> list[suffixed_dirs.FutureMove]:
    """The host's ``-future`` dirs whose move the next start resumes (``suffixed_dirs.future_moves``), and the
    stray ones this module's rules keep as future logs (3.7.0; the KRaft preview), with fate ``kept``: a stray
    ``-future`` dir renamed ``-stray`` or ``-delete`` is not listed (``next_start.strays`` and DIR006 say it). Asked
    by the plan and by DIR003: one answer for both."""
    found = {s.path: s for s in find(h)}
    out = []
    for m in suffixed_dirs.future_moves(h):
        st = found.get(m.path)
        if st is None:
            out.append(m)
        elif st.fate == KEPT:
            m.fate, m.reason = suffixed_dirs.KEPT, f"{st.why}: {st.reason}"
            out.append(m)
    return out


def _node_id(h: HostFacts) -> int | None:
    """This KRaft broker's ``node.id`` (server.properties), or None."""
    raw = h.configs.server.get("node.id")
    try:
        return int(str(raw).strip()) if raw is not None else None
    except ValueError:
        return None


def _without_topic_id(
    h: HostFacts,
    image: MetadataImage,
    log_dir: str,
    path: str,
    topic: str,
    partition: int,
    future: bool = False,
) -> Stray | None:
    """A partition dir without ``partition.metadata``: its log loads without a topic id, which 3.7.1+ takes for a
    stray ("The topicId does not exist in Log(...), treat it as a stray log": LogManager.isStrayKraftReplica
    @3.7.1:1601-1608, trunk:1618-1625) and renames -stray; the live partition of that name is then created again,
    EMPTY (a real 3.7.2 broker did both: 200 acknowledged records no longer served). A real 3.5.2 broker loaded
    and served it as it was (its stray finder was not asked for it). 3.7.0's ``findStrayReplicas`` throws for it
    ("The log dir ... does not have a topic ID, which is not allowed when running in KRaft mode", LogManager.scala
    @3.7.0:1557-1560; KAFKA-16814, "KRaft broker cannot startup when partition.metadata is missing", fixed in 3.7.1
    by commit 01e9918530e): ``BrokerMetadataPublisher.initializeManagers`` calls it right after ``logManager.
    startup`` and hands the error to the fatal fault handler ("Error starting LogManager",
    BrokerMetadataPublisher.scala@3.7.0:288-306), which halts the JVM (KAFKA-14693): EXITS, after every log
    loaded."""
    v = h.kafka_version
    if v is None or not versions.since("stray_renamed", v):
        return None
    live = (tid := image.name_id(topic)) is not None and partition in image.topics[tid][1]
    if future:  # a future log without a topic id: its current log (if any) is judged on its own
        live = False
    if not versions.since("stray_without_topic_id", v):  # 3.7.0
        reason = (
            f"it has no partition.metadata, so its log loads without a topic id, and Kafka {versions.text(v)} "
            "then halts the start: LogManager.findStrayReplicas throws ('... does not have a topic ID, which is "
            "not allowed when running in KRaft mode') right after the logs load, and BrokerMetadataPublisher's "
            "fatal fault handler halts the broker ('Error starting LogManager'; KAFKA-16814, fixed in 3.7.1), at "
            "every start until the file is back"
        )
        why = "no partition.metadata: no topic id" + (
            f" (the metadata has topic {topic!r} as {tid})" if live else ""
        )
        return Stray(path, log_dir, topic, partition, "", why, EXITS, reason, None, live)
    fate, reason, at = _fate(h, path, future)
    reason = f"it has no partition.metadata, so its log loads without a topic id: {reason}"
    if live:
        reason += (
            f"; the broker then creates {topic}-{partition} again, EMPTY, for the live topic (when this broker is one "
            "of its replicas) and serves it from offset 0: this dir's records are no longer served"
        )
    why = "no partition.metadata: no topic id" + (
        f" (the metadata has topic {topic!r} as {tid})" if live else ""
    )
    return Stray(path, log_dir, topic, partition, "", why, fate, reason, at, live)


def _fate(h: HostFacts, path: str, future: bool = False) -> tuple[str, str, int | None]:
    v = h.kafka_version
    # the renamed dir's name: <tp>.<uuid>-stray / -delete (UnifiedLog.logStrayDirName(topicPartition)), also for a
    # future log's <tp>.<uuid>-future dir
    tp = os.path.basename(path).rsplit(".", 1)[0] if future else os.path.basename(path)
    if (
        future
        and v is not None
        and versions.since("stray_renamed", v)
        and not versions.since("stray_without_topic_id", v)
    ):  # 3.7.0
        return (
            KEPT,
            f"Kafka {versions.text(v)} moves aside the current log of a stray partition only "
            "(LogManager.deleteStrayKRaftReplicas: asyncDelete(topicPartition, isFuture = false, isStray = true)): "
            "this future log stays loaded as it is, and its move never resumes (the broker neither leads nor "
            "follows the partition)",
            None,
        )
    if v is None:
        return (
            DEPENDS,
            "the Kafka version is unknown: 3.0-3.6 rename it -delete and delete it at the start "
            "(BrokerMetadataPublisher.findStrayPartitions -> ReplicaManager.deleteStrayReplicas), 3.7 and later "
            f"rename it {tp}.<uuid>-stray and keep it (KAFKA-15605)",
            None,
        )
    if versions.since("stray_renamed", v):
        how = (
            "right after loading the logs (LogManager.deleteStrayKRaftReplicas -> asyncDelete(isStray = true))"
            if versions.norm(v) < (3, 7, 1)
            else "while loading it (LogManager.loadLog: isStrayKraftReplica)"
        )
        return (
            RENAMED_STRAY,
            f"Kafka {versions.text(v)} renames it {tp}.<uuid>-stray {how} and keeps it: loaded "
            "as a stray log, no retention, never deleted by the broker ('Move aside stray partitions, don't "
            "delete them', KAFKA-15605)",
            None,
        )
    if versions.since("stray_deleted", v):
        return (
            DELETED,
            f"Kafka {versions.text(v)} deletes it at the start: BrokerMetadataPublisher.findStrayPartitions finds "
            "it at the first metadata publish, ReplicaManager.deleteStrayReplicas renames it "
            f"{tp}.<uuid>-delete and the kafka-delete-logs task removes it whole once "
            "file.delete.delay.ms has passed ('Deleted log for partition ...')",
            suffixed_dirs.delete_dir_at(h),
        )
    return (
        KEPT,
        f"Kafka {versions.text(v)} (KRaft preview) does not look for stray logs at the start: loaded and kept as a "
        "live log",
        None,
    )
