"""Checkpoint files the broker cannot parse: the one rule that DIR005 and SHUT003 report and the next-start plan
follows (which log dir goes offline, or whether the broker exits).

Every checkpoint is read through ``CheckpointFileWithFailureHandler`` (KIP-112, 1.0.0+;
core/src/main/scala/kafka/server/checkpoints/CheckpointFile.scala up to 3.x,
storage/.../internals/checkpoint/CheckpointFileWithFailureHandler.java later): a read that fails with an
IOException logs "Error while reading checkpoint file <path>", puts the log dir on the ``LogDirFailureChannel``
(``maybeAddOfflineLogDir``) and throws KafkaStorageException. ``CheckpointReadBuffer.read`` turns every parse
failure into an IOException ("Malformed line in checkpoint file", "Expected N entries ... but found only M",
"Unrecognized version", a NumberFormatException on a zero-filled or garbage line, a MalformedInputException on
bytes that are not UTF-8); an empty (0-byte) file reads as no entries and is fine. After start-up the
ReplicaManager's ``LogDirFailureHandler`` takes the dir off the channel and ``handleLogDirFailure`` stops serving
every replica in it; with no live dir left the broker halts ("Shutdown broker because all log dirs in ... have
failed", LogManager.handleLogDirFailure), and from 3.7 a KRaft broker halts when it is the metadata log dir
("Shutdown broker because the metadata log dir ... has failed", ReplicaManager.handleLogDirFailure@3.7.0).

When each file is read (so whether the damage is met at all):
* ``recovery-point-offset-checkpoint``, ``log-start-offset-checkpoint``: ``LogManager.loadLogs`` at every start;
  it catches the exception ("Error occurred while reading ... resetting the recovery checkpoint to 0") and goes on,
  but the dir is on the channel already.
* ``replication-offset-checkpoint`` (high watermarks): ``ReplicaManager``'s lazy offset checkpoints, read when the
  first replica of the dir is created after the start (becomeLeaderOrFollower / applyDelta): only a dir that holds
  partitions.
* ``cleaner-offset-checkpoint``: ``LogCleanerManager.allCleanerCheckpoints``, read at every pass of the cleaner
  thread (``grabFilthiestCompactedLog``), which runs from the start when ``log.cleaner.enable`` (default true).
* a partition's ``leader-epoch-checkpoint``: ``LeaderEpochFileCache`` reads it while the partition loads. Up to
  3.2.0 the KafkaStorageException is not caught by ``LogManager.loadLogs`` (only IOException is): the load fails
  ("There was an error in one of the threads during logs loading") and the broker exits. KAFKA-13773 (3.2.1,
  3.3.0) catches it: the dir goes offline by the channel instead.
"""

from __future__ import annotations

import os

from kafka_ops.engine import checkpoints as ckpt
from kafka_ops.engine import versions
from kafka_ops.engine.compat import slotted
from kafka_ops.engine.errors import FormatError
from kafka_ops.engine.shell import content_free
from kafka_ops.facts.model import HostFacts, LogDirFacts, PartitionFacts

# where the plan and the findings name it; the recovery point's own consequences are SHUT003's
CHECK_OF = {ckpt.RECOVERY_POINT: "SHUT003"}
DEFAULT_CHECK = "DIR005"
# the plan's checks for a dir taken offline after the start (its partitions were loaded: not recreated elsewhere)
AFTER_START_CHECKS = frozenset({DEFAULT_CHECK, *CHECK_OF.values()})

WHEN_READ = {
    ckpt.RECOVERY_POINT: "LogManager.loadLogs reads it at the start",
    ckpt.LOG_START: "LogManager.loadLogs reads it at the start",
    ckpt.REPLICATION: "the ReplicaManager reads it when it creates the dir's first replica after the start",
    ckpt.CLEANER: "the log cleaner thread reads it at its first pass after the start (allCleanerCheckpoints)",
    ckpt.LEADER_EPOCH: "LeaderEpochFileCache reads it while the partition loads",
}


@slotted(frozen=True)
class Damage:
    """One checkpoint the next start cannot parse, and what follows."""

    path: str
    name: str  # the checkpoint's file name
    error: str  # what kafka-ops's reader (the same rules as CheckpointReadBuffer) found
    start: str  # "offline": the dir goes offline after the start; "exits": the broker does not start
    check: str

    @property
    def reason(self) -> str:
        said = f"'Error while reading checkpoint file {self.path}'"
        if self.start == "exits":
            return (
                f"{self.path} does not parse ({self.error}): {WHEN_READ[self.name]}, CheckpointFileWithFailureHandler "
                f"throws KafkaStorageException ({said}), which LogManager.loadLogs does not catch before KAFKA-13773: "
                "'There was an error in one of the threads during logs loading' and the broker does not start"
            )
        return (
            f"{self.path} does not parse ({self.error}): {WHEN_READ[self.name]} and CheckpointFileWithFailureHandler "
            f"puts the log dir on the LogDirFailureChannel ({said}): the dir goes offline right after the start and "
            "serves none of its partitions"
        )


def _format_error(errors: list, path: str) -> str | None:  # type: ignore[type-arg]
    for e in errors:
        if isinstance(e, FormatError) and os.path.abspath(e.path) == os.path.abspath(path):
            return content_free(e.reason)  # what identifies the damage, never the file's content
    return None


def _cleaner_enabled(h: HostFacts) -> bool:
    return h.configs.server.get("log.cleaner.enable", "true").strip().lower() != "false"


def dir_damage(h: HostFacts, ldf: LogDirFacts) -> list[Damage]:
    """The log dir's own checkpoints that the next start cannot parse and meets, in the order it reads them."""
    if versions.since("log_dir_failure_channel", h.kafka_version) is False:
        return []  # before KIP-112 no dir goes offline: a failed read stops the broker (not modelled)
    out = []
    for name in (ckpt.RECOVERY_POINT, ckpt.LOG_START, ckpt.REPLICATION, ckpt.CLEANER):
        path = os.path.join(ldf.path, name)
        error = _format_error(ldf.scan.errors, path)
        if error is None:
            continue
        if name == ckpt.REPLICATION and not ldf.scan.partition_names:
            continue  # no replica of this dir is created: the file is never read
        if name == ckpt.CLEANER and not _cleaner_enabled(h):
            continue
        out.append(Damage(path, name, error, "offline", CHECK_OF.get(name, DEFAULT_CHECK)))
    return out


def partition_damage(h: HostFacts, pf: PartitionFacts) -> Damage | None:
    """The partition's leader-epoch-checkpoint when the next start cannot parse it."""
    if not pf.part.errors:  # most partitions: nothing to match (asked three times per partition)
        return None
    path = os.path.join(pf.part.path, ckpt.LEADER_EPOCH)
    error = _format_error(pf.part.errors, path)
    if error is None:
        return None
    caught = versions.since("catch_storage_exception_at_load", h.kafka_version)
    return Damage(path, ckpt.LEADER_EPOCH, error, "exits" if caught is False else "offline", DEFAULT_CHECK)
