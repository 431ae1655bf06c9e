"""Every broker behaviour that changed between Kafka releases: one table, asked by every version question.

Each row names the first release with the behaviour, the ticket, and the source file at that release's tag where
it can be read (apache/kafka; class locations per release were read from the published jars as well). Code asks
``since(NAME, version)``; an unknown version (None) answers None, so that a caller must say what it assumes.

Class names cited in messages depend on the release (``cite``): ``Log`` (core/.../log/Log.scala) up to 2.8,
``LogLoader`` from 3.0 (KAFKA-12553 split loading out of Log), ``UnifiedLog`` from 3.1 (KAFKA-13068 renamed
Log), ``LazyIndex`` from 2.4 (KAFKA-9156; 2.3 had lazy offset/time index members inside LogSegment,
KAFKA-7283), ``LogSegment`` in Java from 3.7 (storage/.../internals/log/LogSegment.java), ``LogLoader`` and
``LocalLog`` in Java from 4.0, ``UnifiedLog`` and ``LogCleaner`` in Java from 4.1 (org.apache.kafka.storage.
internals.log, as the kafka-storage jars of 4.0.0 / 4.1.0 hold them).
"""

from __future__ import annotations

import re

from kafka_ops.engine.compat import slotted

Version = tuple[int, ...]


@slotted(frozen=True)
class Behaviour:
    name: str
    since: Version  # first release with the behaviour
    ticket: str
    source: str  # file at the ``since`` tag (or the last tag without it, when it is a removal)
    what: str


_ROWS = (
    Behaviour(
        "corrupt_index_exception", (1, 1, 0), "KAFKA-6324",
        "core/src/main/scala/kafka/log/OffsetIndex.scala@1.1.0",
        "index sanity failures throw CorruptIndexException ('no greater than') instead of require() "
        "('no larger than')",
    ),
    Behaviour(
        "log_dir_failure_channel", (1, 0, 0), "KIP-112",
        "core/src/main/scala/kafka/server/LogDirFailureChannel.scala@1.0.0",
        "an IOException on a log dir (checkpoints, loading) marks that dir offline instead of stopping the broker",
    ),
    Behaviour(
        "strict_offset_sanity", (2, 0, 0), "KAFKA-7076",
        "core/src/main/scala/kafka/log/OffsetIndex.scala@2.0.0 (commit c5e7befe014, in 2.0.0; 1.1.1 still has <=; "
        "a real 2.0.1 broker loaded a zero-padded index as it is)",
        "OffsetIndex.sanityCheck fails on lastOffset < baseOffset (was <=), so a zero-padded index passes",
    ),
    Behaviour(
        "uncleanable_partitions", (2, 1, 0), "KIP-346",
        "core/src/main/scala/kafka/log/LogCleaner.scala@2.1.0 (cleanFilthiestLog), "
        "LogCleanerManager.scala@2.1.0:231-239 (deletableLogs)",
        "an error while cleaning one log marks its partition uncleanable (in memory, until the broker restarts) "
        "instead of killing the cleaner thread; deletableLogs skips uncleanable partitions, so retention of a "
        "compacted topic's uncleanable partition stops too",
    ),
    Behaviour(
        "invalid_swap_after_cleaned", (2, 0, 0), "KAFKA-6264",
        "core/src/main/scala/kafka/log/Log.scala@2.0.0 (removeTempFilesAndCollectSwapFiles; commit 9c1cb407d89 is in the 2.0.0 tag)",
        "a .swap at or above the smallest .cleaned offset is an unfinished segment split and is deleted at load",
    ),
    Behaviour(
        "no_index_sanity_at_load", (2, 3, 0), "KAFKA-7283",
        "core/src/main/scala/kafka/log/Log.scala@2.3.0 (loadSegmentFiles)",
        "offset and time indexes are no longer sanity-checked at load (only the .txnindex); they are opened lazily",
    ),
    Behaviour(
        "missing_index_created_empty", (1, 1, 0), "KAFKA-6324",
        "core/src/main/scala/kafka/log/Log.scala@1.1.0:329-345 (loadSegmentFiles: LogSegment.open, then "
        "sanityCheck catching NoSuchFileException); @0.10.2.2:219-236 and @1.0.2:325-343 checked "
        "indexFile.exists() before opening the segment",
        "a missing .index is created empty by LogSegment.open before sanityCheck looks for it, so it is no longer "
        "rebuilt (until 2.3: missing_index_rebuilt); before 1.1 Log.loadSegments found it missing and recovered "
        "the segment (\"Could not find index file corresponding to log file ..., rebuilding index...\", seen on "
        "a real 0.10.2.2 broker in the lab)",
    ),
    Behaviour(
        "missing_index_rebuilt", (2, 3, 0), "KAFKA-7283",
        "core/src/main/scala/kafka/log/LogSegment.scala@2.3.0 (sanityCheck on lazyOffsetIndex.file)",
        "a missing .index is rebuilt at load (NoSuchFileException -> recoverSegment); up to 2.2 LogSegment.open "
        "created it empty first (AbstractIndex's constructor: file.createNewFile, @2.2.1), sanityCheck passed it, "
        "and the segment loaded as is with an empty offset index (seen on 1.1.1 in the lab)",
    ),
    Behaviour(
        "delete_all_when_end_below_start", (2, 3, 0), "KAFKA-8306",
        "core/src/main/scala/kafka/log/Log.scala@2.3.0 (recoverLog)",
        "recovery deletes every segment when the log end offset is below the log start offset",
    ),
    Behaviour(
        "lazy_index_class", (2, 4, 0), "KAFKA-9156", "core/src/main/scala/kafka/log/LazyIndex.scala@2.4.0",
        "indexes are wrapped in LazyIndex (opened at first use)",
    ),
    Behaviour(
        "message_max_bytes_1mib", (2, 5, 0), "KAFKA-4203",
        "core/src/main/scala/kafka/server/KafkaConfig.scala@2.5.0",
        "message.max.bytes defaults to 1048588 (was 1000012)",
    ),
    Behaviour(
        "log_loader", (3, 0, 0), "KAFKA-12553", "core/src/main/scala/kafka/log/LogLoader.scala@3.0.0",
        "segment loading and recovery live in LogLoader",
    ),
    Behaviour(
        "unified_log", (3, 1, 0), "KAFKA-13068", "core/src/main/scala/kafka/log/UnifiedLog.scala@3.1.0",
        "kafka.log.Log is renamed UnifiedLog",
    ),
    Behaviour(
        "catch_storage_exception_at_load", (3, 2, 1), "KAFKA-13773",
        "core/src/main/scala/kafka/log/LogManager.scala@3.2.1 (loadLogs; also 3.3.0, not in 3.0.x/3.1.x)",
        "loadLogs catches a KafkaStorageException caused by an IOException (a leader-epoch-checkpoint that does not "
        "parse): the dir goes offline instead of the broker exiting",
    ),
    Behaviour(
        "partition_metadata_read_at_load", (2, 8, 0), "KIP-516",
        "core/src/main/scala/kafka/log/Log.scala@2.8.2:353-358 (partitionMetadataFile.read() at the end of the "
        "log's load), kafka/server/PartitionMetadataFile.scala@2.8.2:139-156",
        "a partition's partition.metadata (its topic id) is read while the partition loads; before 2.8 no broker "
        "reads the file",
    ),
    Behaviour(
        "partition_metadata_newer_version", (3, 7, 0), "KAFKA-14484",
        "storage/src/main/java/org/apache/kafka/storage/internals/checkpoint/PartitionMetadataReadBuffer.java@3.7.1"
        ":49-51 (PartitionMetadataFile.scala@3.6.2:58 wants version == 0)",
        "partition.metadata of a version above 0 is read (downgrade compatibility) instead of an IOException",
    ),
    Behaviour(
        "quorum_state_read_fatal", (3, 8, 0), "KAFKA-16526",
        "raft/src/main/java/org/apache/kafka/raft/QuorumState.java@3.8.0 (initialize: no catch; @3.7.1:114-127 "
        "catches UncheckedIOException and clears the store; commit 056d232f4e2)",
        "a KRaft quorum-state file that cannot be read stops the node's start instead of being cleared",
    ),
    Behaviour(
        "kraft_bootstrap_checkpoint", (3, 3, 0), "KIP-778",
        "core/src/main/scala/kafka/server/KafkaRaftServer.scala@3.3.1:211 (initializeLogDirs: BootstrapDirectory.read)",
        "a KRaft node reads bootstrap.checkpoint in its metadata log dir at every start (broker.metadata_log)",
    ),
    Behaviour(
        "listeners_load_latest_snapshot", (3, 6, 0), "KAFKA-15076",
        "raft/src/main/java/org/apache/kafka/raft/KafkaRaftClient.java@3.7.1 (updateListenersProgress: a listener "
        "at offset 0 is handed the latest snapshot; @3.5.2 only below the log start; commit b7a6a8fd5f0)",
        "the raft listeners (metadata loader, controller) load the latest KRaft snapshot at their start",
    ),
    Behaviour(
        "raft_start_reads_snapshot", (3, 8, 0), "KAFKA-16207",
        "raft/src/main/java/org/apache/kafka/raft/internals/KRaftControlRecordStateMachine.java@3.8.0 "
        "(maybeLoadSnapshot from KafkaRaftClient.initialize, CRC checked; commit bfe81d62297)",
        "KafkaRaftClient.initialize reads the latest KRaft snapshot whole, before the listeners",
    ),
    Behaviour(
        "stray_without_topic_id", (3, 7, 1), "KAFKA-16814",
        "core/src/main/scala/kafka/log/LogManager.scala@3.7.1:1601-1608 (isStrayKraftReplica: a log without a topic "
        "id is a stray; @3.7.0:1557-1560 findStrayReplicas throws RuntimeException for it)",
        "a KRaft log loaded without a topic id (no partition.metadata) is taken for a stray and renamed -stray",
    ),
    Behaviour(
        "snapshot_deleted_kept_at_load", (3, 3, 0), "KAFKA-14240",
        "core/src/main/scala/kafka/log/LogLoader.scala@3.3.0 (removeTempFilesAndCollectSwapFiles)",
        "a file named *.checkpoint.deleted (a KRaft snapshot's suffix) is no longer deleted with the other "
        "*.deleted files while a partition loads",
    ),
    Behaviour(
        "timestamp_before_bound", (3, 6, 0), "KAFKA-14991 (KIP-937)",
        "clients/src/main/java/org/apache/kafka/common/config/TopicConfig.java@3.6.0",
        "message.timestamp.before.max.ms / after.max.ms replace message.timestamp.difference.max.ms",
    ),
    Behaviour(
        "recovering_n_logs_line", (3, 5, 0), "apache/kafka#13242",
        "core/src/main/scala/kafka/log/LogManager.scala@3.5.0 (loadLogs)",
        "the unclean-start line reads 'Recovering N logs from D since no clean shutdown file was found'",
    ),
    Behaviour(
        "java_log_segment", (3, 7, 0), "KAFKA-14481",
        "storage/src/main/java/org/apache/kafka/storage/internals/log/LogSegment.java@3.7.0",
        "LogSegment is a Java class of the storage module",
    ),
    Behaviour(
        "json_clean_shutdown", (3, 7, 0), "KAFKA-15582",
        "storage/src/main/java/org/apache/kafka/storage/internals/checkpoint/CleanShutdownFileHandler.java@3.7.0",
        ".kafka_cleanshutdown holds JSON with the broker epoch (was empty); meta.properties via MetaPropertiesEnsemble",
    ),
    Behaviour(
        "kraft_jbod", (3, 7, 0), "KIP-858",
        "core/src/main/scala/kafka/server/ReplicaManager.scala@3.7.0 (directory ids, handleLogDirFailure)",
        "a KRaft broker keeps the partitions of an offline log dir offline; before, it recreated them empty in "
        "another log dir and served them from offset 0 (seen in the lab with 3.5.2)",
    ),
    Behaviour(
        "future_retention_with_current", (2, 1, 0), "KAFKA-7322",
        "core/src/main/scala/kafka/log/LogManager.scala@2.1.0:877-916 (cleanupLogs: futureLogs.get per deletable "
        "current log; @2.0.0:868-878 walked allLogs)",
        "retention runs on a -future log only beside its current log; before, on every loaded future log",
    ),
    Behaviour(
        "stray_dirs", (3, 6, 1), "KAFKA-15605 (backported to 3.6.1)",
        "core/src/main/scala/kafka/log/LocalLog.scala@3.6.1 (StrayDirPattern; LogManager.loadLog: addStrayLog)",
        "<tp>.<uuid>-stray partition dirs are parsed and loaded as stray logs; before, the name's partition "
        "('<uuid>-stray') is not an int: parseTopicPartitionName throws a KafkaException and the broker exits",
    ),
    Behaviour(
        "stray_deleted", (3, 0, 0), "KIP-500 (BrokerMetadataPublisher)",
        "core/src/main/scala/kafka/server/metadata/BrokerMetadataPublisher.scala@3.0.0 (findStrayPartitions; "
        "ReplicaManager.deleteStrayReplicas), unchanged to @3.6.2",
        "a KRaft broker deletes, at its first metadata publish, every log whose topic id the metadata image does "
        "not have (renamed -delete, removed after file.delete.delay.ms)",
    ),
    Behaviour(
        "stray_renamed", (3, 7, 0), "KAFKA-15605",
        "core/src/main/scala/kafka/log/LogManager.scala@3.7.0 (deleteStrayKRaftReplicas: asyncDelete(isStray = "
        "true)); from 3.7.1 at load (isStrayKraftReplica)",
        "a KRaft broker renames such a log <tp>.<uuid>-stray and keeps it instead of deleting it",
    ),
    Behaviour(
        "initial_task_delay_config", (3, 9, 0), "KAFKA-16991",
        "core/src/main/scala/kafka/log/LogManager.scala@3.9.0 (initialTaskDelayMs)",
        "log.initial.task.delay.ms sets when the first retention check runs after a start (fixed 30 s before)",
    ),
    Behaviour(
        "load_logs_at_startup", (2, 8, 0), "KAFKA-10471",
        "core/src/main/scala/kafka/log/LogManager.scala@2.8.0:301-423 (loadLogs from startupWithConfigOverrides; "
        "Files.deleteIfExists(cleanShutdownFile) at 321; shutdown writes the marker at 517), KafkaServer.scala@2.8.0:"
        "251,412-417 (a failed startup runs shutdown(), which runs logManager.shutdown())",
        "loadLogs runs in LogManager.startup and deletes each live dir's .kafka_cleanshutdown as its loading starts; a "
        "ZooKeeper-mode start that fails in loading runs LogManager.shutdown, which writes a marker in every live dir. "
        "Up to 2.7 loadLogs runs in LogManager's constructor (a failure leaves logManager null: no LogManager."
        "shutdown) and deletes a dir's marker only after its partitions loaded (LogManager.scala@2.7.0:119,375-383)",
    ),
    Behaviour(
        "kraft_fatal_fault_halts", (3, 4, 1), "KAFKA-14693",
        "core/src/main/scala/kafka/server/SharedServer.scala@3.4.1:62-65 (ProcessTerminatingFaultHandler, shouldHalt "
        "true), metadata/BrokerMetadataPublisher.scala@3.5.1:350-357 ('Error starting LogManager')",
        "a KRaft broker's fatal fault (a LogManager that fails to start) halts the JVM (Exit.halt: no shutdown hook, "
        "no LogManager.shutdown); 3.3.0-3.4.0 called Exit.exit (ProcessExitingFaultHandler), whose shutdown hook "
        "shuts the broker down",
    ),
    Behaviour(
        "kraft_only", (4, 0, 0), "KIP-833", "core/src/main/scala/kafka/server/KafkaConfig.scala@4.0.0",
        "ZooKeeper mode is gone: every broker is a KRaft broker",
    ),
    Behaviour(
        "java_log_loader", (4, 0, 0), "(read from the kafka-storage-4.0.0 jar)",
        "storage/src/main/java/org/apache/kafka/storage/internals/log/LogLoader.java@4.0.0",
        "LogLoader and LocalLog are Java classes of the storage module",
    ),
    Behaviour(
        "java_unified_log", (4, 1, 0), "KAFKA-14485 (LogCleaner; read from the kafka-storage-4.1.0 jar)",
        "storage/src/main/java/org/apache/kafka/storage/internals/log/UnifiedLog.java@4.1.0",
        "UnifiedLog and LogCleaner are Java classes of the storage module",
    ),
)  # fmt: skip

BEHAVIOURS: dict[str, Behaviour] = {b.name: b for b in _ROWS}


def norm(version: Version) -> tuple[int, int, int]:
    return (*tuple(version), 0, 0, 0)[:3]  # type: ignore[return-value]


_SINCE: dict[tuple[str, Version], bool] = {}  # since()'s answers: asked several times per segment


def since(name: str, version: Version | None) -> bool | None:
    """Whether ``version`` has behaviour ``name``; None when the version is unknown."""
    if version is None:
        return None
    try:
        return _SINCE[(name, version)]
    except KeyError:
        has = _SINCE[(name, version)] = norm(version) >= BEHAVIOURS[name].since
        return has
    except TypeError:  # a version given as a list
        return norm(version) >= BEHAVIOURS[name].since


def has(name: str, version: Version | None, unknown: bool) -> bool:
    """``since`` with the caller's assumption for an unknown version spelled out."""
    v = since(name, version)
    return unknown if v is None else v


def missing_index_rebuilt(version: Version | None) -> bool:
    """Whether a start rebuilds a segment whose .index is missing. 1.1-2.2 do not: LogSegment.open creates it
    empty and sanityCheck passes it (AbstractIndex @2.2.1: file.createNewFile in the constructor; KAFKA-6324 in
    1.1.0 moved the existence check into sanityCheck, after the open). Before 1.1 Log.loadSegments checked
    indexFile.exists() first; from 2.3 LogSegment.sanityCheck checks the lazy index's file before opening it
    (KAFKA-7283). An unknown version keeps the 2.3+ answer."""
    return not (
        since("missing_index_created_empty", version) is True
        and since("missing_index_rebuilt", version) is False
    )


def text(version: Version | None) -> str:
    """The release as the report's ``kafka_version`` spells it (``3.7.0``), "unknown" when it is not known."""
    return ".".join(map(str, version)) if version else "unknown"


# Where each class lives, by release (see the module docstring); the key is the role, the value the name cited.
def cite(role: str, version: Version | None) -> str:
    """The class (or Scala file) that does ``role`` in ``version``: "loader" (loads and recovers segments),
    "log" (the partition's log), "segment", "index", "cleaner". Empty for an unknown version, so that a
    message never names a class that the operator's broker does not have."""
    if version is None:
        return ""
    v = norm(version)
    if role == "loader":
        if v < (3, 0, 0):
            return "Log.loadSegments"
        return "LogLoader (storage, Java)" if v >= (4, 0, 0) else "LogLoader"
    if role == "log":
        if v < (3, 1, 0):
            return "Log"
        return "UnifiedLog (storage, Java)" if v >= (4, 1, 0) else "UnifiedLog"
    if role == "segment":
        return "LogSegment (storage, Java)" if v >= (3, 7, 0) else "LogSegment"
    if role == "index":
        if v < (2, 3, 0):
            return "OffsetIndex/TimeIndex (checked at load)"
        if v < (2, 4, 0):
            return "LogSegment's lazy indexes"
        return "LazyIndex (storage, Java)" if v >= (3, 5, 0) else "LazyIndex"
    if role == "cleaner":
        return "LogCleaner (storage, Java)" if v >= (4, 1, 0) else "LogCleaner"
    raise KeyError(role)


@slotted(frozen=True)
class Bug:
    """A broker bug fixed in patch releases of several branches: affected in ``[lo, hi)`` of each range."""

    ticket: str
    ranges: tuple[tuple[Version, Version], ...]
    fixed_in: str
    what: str


BUGS: dict[str, Bug] = {
    b.ticket: b
    for b in (
        Bug(
            "KAFKA-6854", (((0, 11, 0), (1, 0, 2)), ((1, 1, 0), (1, 1, 1))), "1.0.2, 1.1.1 and 2.0.0",
            "the log cleaner thread dies on a transaction marker it cannot place (seed 001)",
        ),
        Bug(
            "KAFKA-15375", (((2, 8, 0), (3, 5, 2)),), "3.5.2 (c252e930fb7) and 3.6.0 (daea0fdff09)",
            "a start that fails while loading logs runs LogManager.shutdown, which writes .kafka_cleanshutdown in "
            "every live log dir, also in those that had none (LogManager.scala@3.5.1:577-640); from the fix only where "
            "the dir had one or its loading completed (hadCleanShutdownFlags, loadLogsCompletedFlags, "
            "LogManager.scala@3.5.2:645-651)",
        ),
        Bug(
            "KAFKA-8335", (((0, 11, 0), (2, 2, 1)),), "2.2.1 and 2.3.0",
            "the log cleaner keeps empty transaction-marker batches forever in __consumer_offsets",
        ),
    )
}  # fmt: skip


_AFFECTED: dict[tuple[str, Version], bool] = {}  # affected()'s answers: CLN002 asks two per partition


def affected(ticket: str, version: Version | None) -> bool | None:
    """Whether ``version`` has the bug; None when the version is unknown."""
    if version is None:
        return None
    try:
        return _AFFECTED[(ticket, version)]
    except KeyError:
        v = norm(version)
        has = _AFFECTED[(ticket, version)] = any(lo <= v < hi for lo, hi in BUGS[ticket].ranges)
        return has
    except TypeError:  # a version given as a list
        v = norm(version)
        return any(lo <= v < hi for lo, hi in BUGS[ticket].ranges)


# Class names in messages, rewritten for the version asked for: the model's texts name the current classes
# (LogLoader, UnifiedLog); a 2.x broker has those methods in Log (core/.../log/Log.scala), and an unknown
# version gets no class name at all, so that a message never names a class the operator's broker lacks.
_CLASS_REF = re.compile(r"\b(LogLoader|UnifiedLog|LazyIndex)\b(\.\w+)?")


def localize(text: str, version: Version | None) -> str:
    """``text`` with its Kafka class names as the broker of ``version`` has them (see ``cite``)."""
    if version is None:
        return _CLASS_REF.sub(lambda m: (m.group(2) or "")[1:] or _GENERIC[m.group(1)], text)
    v = norm(version)

    def sub(m: re.Match[str]) -> str:
        cls, member = m.group(1), m.group(2) or ""
        if (cls == "LogLoader" and v < (3, 0, 0)) or (cls == "UnifiedLog" and v < (3, 1, 0)):
            return "Log" + member
        if cls == "LazyIndex" and v < (2, 4, 0):
            return ("the lazily opened index" if v >= (2, 3, 0) else "OffsetIndex/TimeIndex") + member
        return cls + member

    return _CLASS_REF.sub(sub, text)


_GENERIC = {"LogLoader": "the log loader", "UnifiedLog": "the partition's log", "LazyIndex": "the lazy index"}
