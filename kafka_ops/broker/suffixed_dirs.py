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
* ``-future`` (1.1+): loaded into ``futureLogs`` (LogManager.scala@1.1.0:271-272); retention runs on it as on the
  current log (``cleanupLogs``: ``allLogs`` @1.1.0:852, the future log next to its current one @3.7.1:1413):
  the forecast treats it as a partition.

A partition whose topic the cluster metadata no longer has (KRaft: renamed ``-stray`` at start from 3.7,
``isStray`` in LogManager.loadLog@3.7.1:358; renamed ``-delete`` and deleted on 3.0-3.6) is
``kafka_ops.broker.strays``' (from this host's copy of the metadata log): only the dirs already so named are
handled here.
"""

from __future__ import annotations

from kafka_ops.broker.scheduler import initial_task_delay
from kafka_ops.engine import versions
from kafka_ops.facts.model import HostFacts, LogDirFacts, PartitionFacts

DELETE_DIR = "delete_dir"  # SegmentFate.deleted_by: the kafka-delete-logs task removed the whole -delete dir
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
    return None


def fatal_stray_dirs(h: HostFacts, ldf: LogDirFacts) -> list[str]:
    """-stray dirs that a broker before 3.6.1 cannot parse (it exits)."""
    if versions.since("stray_dirs", h.kafka_version) is not False:
        return []
    return [path for path, name in ldf.scan.partition_names if name.kind == "stray"]
