"""What the next start does with partition dirs named ``<tp>.<uuid>-delete``, ``-stray`` and ``-future``.

Kafka source (apache/kafka, at the tags named):

* ``-delete`` (every release 1.1 to 4.x): ``LogManager.loadLog`` loads the dir (``Log``/``UnifiedLog``), and
  because its name ends with ``DeleteDirSuffix`` queues it with ``addLogToBeDeleted`` (``logsToBeDeleted.add((log,
  time.milliseconds()))``) instead of putting it in ``currentLogs`` (LogManager.scala@1.1.0:267-268, @2.8.2:275,
  @3.7.1:353). The loader skips ``recoverLog`` for it (``if (!dir.getAbsolutePath.endsWith(DeleteDirSuffix))``:
  Log.scala@1.1.0:420, @2.8.2:822, LogLoader.scala@3.7.1:154; LogLoader.java:207 at the 4.0 trunk snapshot
  1eb7644, whose LogManager.scala:357 still queues it). Retention never sees it (``cleanupLogs`` walks
  ``allLogs`` / ``currentLogs`` and their futures). The ``kafka-delete-logs`` task, first scheduled
  ``InitialTaskDelayMs`` (30 s; ``log.initial.task.delay.ms`` from 3.9) after start-up, deletes every queued
  log whose queue time plus the broker's ``file.delete.delay.ms`` (``log.segment.delete.delay.ms``,
  ``currentDefaultConfig.fileDeleteDelayMs``) has passed, waiting for it otherwise (1.1: ``Thread.sleep``; 2.x+:
  rescheduled for the remainder), and logs "Deleted log for partition <tp> in <dir>." (``deleteLogs``,
  LogManager.scala@1.1.0:709-720, @2.8.2:872-888, @3.7.1:1138-1155, @3.9.0-rc3 with ``initialTaskDelayMs``).
  The whole dir goes: ``log.delete()`` removes every file and the dir.
* ``-stray`` (3.6.1+, KAFKA-15605 backported to 3.6.1): parsed (``StrayDirPattern``, LocalLog.scala@3.6.1:618)
  and loaded as a stray log (``addStrayLog``, "Loaded stray log: <dir>", LogManager.scala@3.6.2:315-317): kept in
  ``strayLogs``, not in ``currentLogs``, so no retention, and never deleted by the broker. Before 3.6.1 the name
  is not special: ``parseTopicPartitionName`` takes ``<uuid>-stray`` after the last ``-`` as the partition, which
  is not an int, and throws KafkaException "... is not in the form of topic-partition ..."
  (LocalLog.scala@3.5.2:655-684): the broker exits, as for ``lost+found``.
* ``-future`` (1.1+): loaded into ``futureLogs`` (LogManager.scala@1.1.0:271-272, @2.2.1:280-285,
  @3.7.1:368-374); retention runs on it as on the current log: on every future log up to 2.0 (``cleanupLogs``
  walks ``allLogs``, @1.1.0:852, @2.0.0:872), from 2.1 only next to its current log (each deletable current
  log's ``futureLogs.get``, @2.1.0:900, @2.2.1:915-920, @3.7.1:1413; KAFKA-7322): the forecast treats it as a
  partition, and from 2.1 projects no retention on a future log without its current dir (``no_retention``). Once
  the broker leads or follows the partition it resumes the move (ZooKeeper mode: ``becomeLeaderOrFollower`` adds
  the future replica and a log dir fetcher for every partition with a future log, ReplicaManager.scala@2.2.1:1127;
  KRaft: ``applyDelta`` -> ``maybeAddLogDirFetchers``, @3.5.2:1558-1585, @3.7.1:2248-2274, called for the
  partitions led or followed, @3.7.1:2872): the ReplicaAlterLogDirsThread copies what the future log lacks from
  the current one and, caught up, ``LogManager.replaceCurrentWithFutureLog`` renames the current dir
  ``<tp>.<uuid>-delete`` (deleted by the kafka-delete-logs task) and the future dir ``<tp>`` in its log dir
  ("The current replica is successfully replaced with the future replica for <tp>", LogManager.scala@2.2.1:832,
  @2.8.2:963). Seen on lab 2.2.1, 2.3.1,
  2.8.2, 3.5.2, 3.7.2 and 4.3.1 brokers (tests/lab ``future_dir``): no record lost.
  When the partition's current dir is not on the host (deleted by hand, or on a disk that is gone), becoming
  leader or follower creates the current log EMPTY (``Partition.getOrCreateReplica`` @2.2.1:196,
  ``createLogIfNotExists`` @3.7.1: "Created log for partition ..."), the log dir fetcher truncates the future log
  to that empty log's end, offset 0 ("... leader replied with an unknown offset in <tp>. The initial fetch
  offset 0 will be used for truncation", then "Deleting segments as part of log truncation"), and the empty
  future log replaces the current one: every record of the ``-future`` dir is gone from this broker (lab
  ``future_dir_alone``: all 200 acknowledged records no longer served, on every release above).

A partition whose topic the cluster metadata no longer has (KRaft: renamed ``-stray`` at start from 3.7,
``isStray`` in LogManager.loadLog@3.7.1:358; renamed ``-delete`` and deleted on 3.0-3.6) is
``kafka_ops.broker.strays``' (from this host's copy of the metadata log): only the dirs already so named are
handled here; a ``-future`` dir of such a partition never moves (the broker neither leads nor follows it):
``strays.future_moves`` drops it from this module's list.
"""

from __future__ import annotations

import os

from kafka_ops.broker.scheduler import initial_task_delay
from kafka_ops.engine import versions
from kafka_ops.engine.compat import slotted
from kafka_ops.engine.layout import METADATA_TOPIC
from kafka_ops.facts.model import HostFacts, LogDirFacts, PartitionFacts

DELETE_DIR = "delete_dir"  # SegmentFate.deleted_by: the kafka-delete-logs task removed the whole -delete dir
TRUNCATION = "truncation"  # SegmentFate.deleted_by: a future log truncated to an empty current log's end
REPLACES_CURRENT, KEPT = "replaces_current", "kept"  # a -future dir's fate
FILE_DELETE_DELAY_MS = 60_000  # log.segment.delete.delay.ms's default (LogConfig / ServerLogConfigs)


def kind(pf: PartitionFacts) -> str:
    return pf.part.name.kind


def delete_dir_at(h: HostFacts) -> int:
    """When the kafka-delete-logs task removes a -delete dir queued at the next start (its "now"): its first run
    (the initial task delay), or the queue time plus file.delete.delay.ms when that is later."""
    initial = initial_task_delay(h)
    delay = max(0, h.configs.server_int("log.segment.delete.delay.ms", FILE_DELETE_DELAY_MS))
    return h.now_ms + max(initial, delay)


def delete_dir_reason(h: HostFacts) -> str:
    return (
        "the partition dir is named -delete: LogManager.loadLog queues it (addLogToBeDeleted) without recovery or "
        "retention, and the kafka-delete-logs task removes the whole dir once the initial task delay and "
        "file.delete.delay.ms have passed ('Deleted log for partition ...')"
    )


def no_retention(h: HostFacts, pf: PartitionFacts) -> str | None:
    """Why retention never runs on this partition dir at the next start, or None."""
    k = kind(pf)
    if k == "delete":
        return "a -delete dir is not a live log: the kafka-delete-logs task removes it whole, retention never runs on it"
    if k == "stray" and versions.since("stray_dirs", h.kafka_version) is not False:
        return "a -stray dir is loaded as a stray log (LogManager.addStrayLog): no retention, never deleted by the broker"
    if k == "future" and versions.since("future_retention_with_current", h.kafka_version) is not False:
        if (pf.part.topic, pf.part.partition) not in current_dirs(h):
            return (
                "a -future dir without its current dir on this host: from 2.1 retention runs on a future log only "
                "beside its current log (LogManager.cleanupLogs asks futureLogs.get for each deletable current "
                "log, KAFKA-7322)"
            )
    return None


def fatal_stray_dirs(h: HostFacts, ldf: LogDirFacts) -> list[str]:
    """-stray dirs that a broker before 3.6.1 cannot parse (it exits)."""
    if versions.since("stray_dirs", h.kafka_version) is not False:
        return []
    return [path for path, name in ldf.scan.partition_names if name.kind == "stray"]


@slotted
class FutureMove:
    """A ``-future`` dir and what the next start does with it (module doc)."""

    path: str
    log_dir: str
    topic: str
    partition: int
    current: str | None  # the partition's current dir on this host, if any
    fate: str  # replaces_current | kept (set by the plan when the broker exits or a dir goes offline)
    reason: str

    @property
    def lost(self) -> bool:
        """No current dir: the future log is truncated to 0 and replaces an empty current log."""
        return self.current is None and self.fate == REPLACES_CURRENT


def current_dirs(h: HostFacts) -> dict[tuple[str, int], str]:
    """(topic, partition) -> the partition's current dir on this host (the first log dir's, as listed)."""
    current: dict[tuple[str, int], str] = {}
    for ldf in h.log_dirs:
        for path, name in ldf.scan.partition_names:
            if name.kind == "log":
                current.setdefault((name.topic, name.partition), path)
    return current


def future_moves(h: HostFacts) -> list[FutureMove]:
    """Every ``-future`` partition dir of a stopped broker, with its fate at the next start (module doc)."""
    if h.broker_state == "running":
        return []
    futures = [
        (path, ldf.path, name.topic, name.partition)
        for ldf in h.log_dirs
        for path, name in ldf.scan.partition_names
        if name.kind == "future" and name.topic != METADATA_TOPIC
    ]
    if not futures:
        return []
    current = current_dirs(h)
    out = []
    for path, log_dir, topic, partition in sorted(futures):
        cur = current.get((topic, partition))
        tp = f"{topic}-{partition}"
        target = os.path.join(log_dir, tp)
        if cur is not None:
            reason = (
                f"an interrupted intra-broker move of {tp} from {os.path.dirname(cur)}: the broker loads it as the "
                "future log, resumes the move once it leads or follows the partition (ReplicaAlterLogDirsThread) "
                f"and, caught up, replaces the current log with it: {cur} is renamed -delete and deleted, this dir "
                f"renamed {target} ('The current replica is successfully replaced with the future replica')"
            )
        else:
            reason = (
                f"an interrupted intra-broker move of {tp} whose current dir is not on this host: once the broker "
                "leads or follows the partition it creates the current log EMPTY, the log dir fetcher truncates this "
                "future log to that log's end, offset 0 ('The initial fetch offset 0 will be used for truncation'), "
                f"and the empty future log then replaces the current one as {target}: every record of this dir is "
                "LOST on this broker (a partition with no other replica loses them for good)"
            )
        out.append(FutureMove(path, log_dir, topic, partition, cur, REPLACES_CURRENT, reason))
    return out
