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
* a partition's ``partition.metadata`` (its topic id, 2.8+; not read before): read once the partition's segments
  are loaded (``partitionMetadataFile.read()`` in Log.scala@2.8.2:353-358, ``UnifiedLog.initializeTopicId``
  @3.5.2:186-197, @3.7.1:205-216, trunk of 2024-10-25:205-216), not through CheckpointFileWithFailureHandler but
  with the same handling: ``PartitionMetadataFile.read`` (kafka/server/PartitionMetadataFile.scala@2.8.2:139-156,
  @3.5.2:138-157; storage/.../checkpoint/PartitionMetadataFile.java@3.7.1:100-113) turns an IOException into
  "Error while reading partition metadata file <path>" on the channel and a KafkaStorageException: up to 3.2.0 the
  broker exits, from 3.2.1 the dir goes offline, as for the leader epochs. ``PartitionMetadataReadBuffer.read``
  (@2.8.2:49-77, PartitionMetadataReadBuffer.java@3.7.1:40-76) throws an IOException for a first or second line
  that is not ``<key>: <value>`` ("Malformed line in checkpoint file"), a version it does not know, the zero
  topic id, bytes that are not UTF-8; but a file with no first line (0 bytes) or none after a good version line
  hands ``null`` to ``Pattern.split``: a NullPointerException, which no release's loadLogs catches: the broker
  exits on every release from 2.8. A topic id that ``Uuid.fromString`` refuses (longer than 24 characters, not
  base64url, not 16 bytes: Uuid.java@2.8.2:107-121, the same to 4.x) throws IllegalArgumentException, which
  ``PartitionMetadataReadBuffer.read`` does not catch (only NumberFormatException) nor does any release's loadLogs
  (IOException and, from KAFKA-13773, KafkaStorageException; LogManager.scala@3.7.1:411-538): the broker exits too,
  as for the NullPointerException (a half-written id, say). A version above 0 is an IOException up to 3.6 and
  accepted from 3.7.0 (KAFKA-14484 moved the reader to Java, "version >= 0"). An inter.broker.protocol.version below 2.8 (ZooKeeper mode)
  deletes the file instead of reading it (``keepPartitionMetadataFile``).

A checkpoint that is **a symlink to nothing** (its target missing, or a path the kernel cannot resolve) fails the
same read: ``CheckpointFile``'s constructor creates the file only if nothing stands under the name
(``Files.createFile``, O_CREAT|O_EXCL, which fails with EEXIST on any symlink: FileAlreadyExistsException, ignored;
server-common CheckpointFile.java@3.7.1:64-70, CheckpointFile.scala@2.8.2:42-44), then ``read`` opens it through
the link (``Files.newBufferedReader``): NoSuchFileException, an IOException, "Error while reading checkpoint file":
the dir on the LogDirFailureChannel, as for a damaged file (lab 3.7.2 type-cleaner_symlink_dangling: "Failed to
access checkpoint file cleaner-offset-checkpoint", the dir offline). kafka-ops never reads through a link: the scan
refuses it (``fileio.SYMLINK``) and the rule asks only whether the link resolves (``stat``), nothing is opened.
A link that resolves is read by the broker as the file it points to (lab 3.7.2 type-*_symlink: agreed). A partition's
``leader-epoch-checkpoint`` that is **a directory** fails the same way (createFile: FileAlreadyExistsException,
ignored; the read: IOException "Is a directory"; lab 3.7.2 type-leader_epoch_directory, the dir offline); the log
dir's own checkpoints as directories are LogManager's listing's (not a topic-partition dir: the exit), not this rule.
"""

from __future__ import annotations

import os
import re
import stat

from kafka_ops.engine import checkpoints as ckpt
from kafka_ops.engine import versions
from kafka_ops.engine.compat import slotted
from kafka_ops.engine.errors import EngineError, FormatError
from kafka_ops.engine.fileio import read_bytes
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
    ckpt.PARTITION_METADATA: "the broker reads the partition's topic id from it once its segments are loaded",
}
NPE = "NullPointerException"  # Damage.thrown: not an IOException, caught by no release's loadLogs
READ = "read"  # not thrown: this release reads the file (a newer version, from 3.7.0)
IAE = (
    "IllegalArgumentException"  # Damage.thrown: Uuid.fromString refusing the topic id, caught by none either
)


@slotted(frozen=True)
class Damage:
    """One checkpoint the next start cannot parse, and what follows."""

    path: str
    name: str  # the checkpoint's file name
    error: str  # what kafka-ops's reader (the same rules as CheckpointReadBuffer) found
    start: str  # "offline": the dir goes offline after the start; "exits": the broker does not start
    check: str
    thrown: str | None = None  # partition.metadata: NPE, which no release catches at load

    @property
    def reason(self) -> str:
        if self.name == ckpt.PARTITION_METADATA:
            return self._partition_metadata_reason()
        said = f"'Error while reading checkpoint file {self.path}'"
        if self.error.startswith((DANGLING, DIRECTORY)):
            thrown = (
                "NoSuchFileException" if self.error.startswith(DANGLING) else "IOException 'Is a directory'"
            )
            return (
                f"{self.path} is {self.error}: {WHEN_READ[self.name]}, read in place (CheckpointFile.read, "
                f"Files.newBufferedReader: {thrown}), and CheckpointFileWithFailureHandler "
                + (
                    f"throws KafkaStorageException ({said}), which LogManager.loadLogs does not catch before "
                    "KAFKA-13773: 'There was an error in one of the threads during logs loading' and the broker does "
                    "not start"
                    if self.start == "exits"
                    else f"puts the log dir on the LogDirFailureChannel ({said}): the dir goes offline right after "
                    "the start and serves none of its partitions"
                )
            )
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

    def _partition_metadata_reason(self) -> str:
        when = WHEN_READ[self.name]
        if self.thrown == IAE:
            return (
                f"{self.path} does not parse ({self.error}): {when}; Uuid.fromString throws "
                "IllegalArgumentException, which neither PartitionMetadataReadBuffer.read nor LogManager.loadLogs "
                "catches: 'There was an error in one of the threads during logs loading' and the broker does not "
                "start"
            )
        if self.thrown == NPE:
            return (
                f"{self.path} does not parse ({self.error}): {when}; with no line to read, "
                "PartitionMetadataReadBuffer.read hands null to Pattern.split and throws NullPointerException, which "
                "LogManager.loadLogs does not catch: 'There was an error in one of the threads during logs loading' "
                "and the broker does not start"
            )
        said = f"'Error while reading partition metadata file {self.path}'"
        if self.start == "exits":
            return (
                f"{self.path} does not parse ({self.error}): {when}; PartitionMetadataFile.read throws "
                f"KafkaStorageException ({said}), which LogManager.loadLogs does not catch before KAFKA-13773: "
                "'There was an error in one of the threads during logs loading' and the broker does not start"
            )
        return (
            f"{self.path} does not parse ({self.error}): {when}; PartitionMetadataFile.read puts the log dir on "
            f"the LogDirFailureChannel ({said}) and LogManager.loadLogs goes on: the dir goes offline at the start "
            "and serves none of its partitions"
        )


def _format_error(errors: list, path: str) -> str | None:  # type: ignore[type-arg]
    for e in errors:
        if isinstance(e, FormatError) and os.path.abspath(e.path) == os.path.abspath(path):
            return content_free(e.reason)  # what identifies the damage, never the file's content
    return None


DANGLING = "a symbolic link to nothing"
DIRECTORY = "a directory"


def dangling(errors: list, path: str) -> str | None:  # type: ignore[type-arg]
    """``path`` a symlink that does not resolve (the scan could not stat it, or refused the link: SYMLINK): the
    broker's read through it fails. Only ``lstat`` and ``stat`` (which follows the link) are asked, nothing is
    opened; a link that resolves is the broker's file: None."""
    target = os.path.abspath(path)
    if not any(type(e) is EngineError and os.path.abspath(e.path) == target for e in errors):
        return None
    try:
        if not stat.S_ISLNK(os.lstat(path).st_mode):
            return None
        os.stat(path)
    except OSError as exc:
        return f"{DANGLING} ({(exc.strerror or type(exc).__name__).lower()})"
    return None


def zk_replication_unknown(h: HostFacts) -> bool:
    """A ZooKeeper-mode broker whose replication-offset-checkpoint cannot be opened (the broker user cannot read
    it, or a symlink to nothing): lab 2.8.2 started with the dir online both times (type-replication_unreadable,
    _symlink_dangling), where a garbage or truncated one took it offline; why was not found (session 20): the plan
    says "unknown" for exactly these two cases, not "offline"."""
    from kafka_ops.broker.meta import broker_mode

    return broker_mode(h) == "zk"


def _cleaner_enabled(h: HostFacts) -> bool:
    return h.configs.server.get("log.cleaner.enable", "true").strip().lower() != "false"


def dir_damage(h: HostFacts, ldf: LogDirFacts) -> list[Damage]:
    """The log dir's own checkpoints that the next start cannot parse and meets, in the order it reads them."""
    if versions.since("log_dir_failure_channel", h.kafka_version) is False:
        return []  # before KIP-112 no dir goes offline: a failed read stops the broker (not modelled)
    out = []
    for name in (ckpt.RECOVERY_POINT, ckpt.LOG_START, ckpt.REPLICATION, ckpt.CLEANER):
        path = os.path.join(ldf.path, name)
        error = _format_error(ldf.scan.errors, path) or dangling(ldf.scan.errors, path)
        if error is None:
            continue
        if name == ckpt.REPLICATION and not ldf.scan.partition_names:
            continue  # no replica of this dir is created: the file is never read
        if name == ckpt.CLEANER and not _cleaner_enabled(h):
            continue
        if name == ckpt.REPLICATION and error.startswith(DANGLING) and zk_replication_unknown(h):
            continue  # the plan's "unknown" (zk_replication_unknown)
        out.append(Damage(path, name, error, "offline", CHECK_OF.get(name, DEFAULT_CHECK)))
    return out


def partition_damage(h: HostFacts, pf: PartitionFacts) -> Damage | None:
    """The partition's leader-epoch-checkpoint (read first) or partition.metadata when the next start cannot parse
    it."""
    path = os.path.join(pf.part.path, ckpt.LEADER_EPOCH)
    # a directory in its place: CheckpointFile's createFile fails (FileAlreadyExistsException, ignored) and its
    # read throws IOException 'Is a directory' (lab 3.7.2 type-leader_epoch_directory: the dir offline); the scan
    # lists it among the partition's other entries, without an error
    in_place = next((DIRECTORY for o in pf.part.other_files if o.is_dir and o.path == path), None)
    if not pf.part.errors and not any(
        o.is_dir for o in pf.part.other_files
    ):  # most partitions: nothing to match
        return None
    caught = versions.since("catch_storage_exception_at_load", h.kafka_version)
    start = "exits" if caught is False else "offline"
    error = _format_error(pf.part.errors, path) or dangling(pf.part.errors, path) or in_place
    if error is not None:
        return Damage(path, ckpt.LEADER_EPOCH, error, start, DEFAULT_CHECK)
    path = os.path.join(pf.part.path, ckpt.PARTITION_METADATA)
    # a directory in its place: exists() is true and PartitionMetadataFile.read fails ('Is a directory', an
    # IOException on the channel: lab 3.7.2 type-partition_metadata_directory, the dir offline)
    error = _format_error(pf.part.errors, path) or next(
        (DIRECTORY for o in pf.part.other_files if o.is_dir and o.path == path), None
    )
    if error is None or not reads_partition_metadata(h):
        return None
    if error == DIRECTORY:
        return Damage(path, ckpt.PARTITION_METADATA, error, start, DEFAULT_CHECK)
    thrown = _partition_metadata_thrown(path, h)
    if thrown == READ:
        return None
    return Damage(path, ckpt.PARTITION_METADATA, error, "exits" if thrown else start, DEFAULT_CHECK, thrown)


def reads_partition_metadata(h: HostFacts) -> bool:
    """Whether the start reads partition.metadata (``keepPartitionMetadataFile``: KafkaConfig.usesTopicId, a
    KRaft broker or an inter.broker.protocol.version from 2.8). Unknown version: assumed to read it."""
    if versions.since("partition_metadata_read_at_load", h.kafka_version) is False:
        return False
    if h.configs.server.get("process.roles", "").strip():
        return True
    ibp = re.match(r"\s*(\d+)\.(\d+)", h.configs.server.get("inter.broker.protocol.version", ""))
    return ibp is None or (int(ibp.group(1)), int(ibp.group(2))) >= (2, 8)


def _partition_metadata_thrown(path: str, h: HostFacts) -> str | None:
    """What PartitionMetadataReadBuffer.read throws that is not an IOException, or None (an IOException, or the
    file cannot be read again): NPE when it reads no line where it wants one, IAE for a topic id Uuid.fromString
    refuses."""
    try:
        text = read_bytes(path, 65536).decode("utf-8")  # not UTF-8: MalformedInputException, an IOException
    except (EngineError, OSError, UnicodeDecodeError):
        return None
    lines = ckpt.java_lines(text)  # the engine's reader's rules, read again here for what it throws
    if not lines:
        return NPE
    fields = ckpt.partition_metadata_fields(lines[0])
    if len(fields) != 2 or not ckpt.java_int(fields[1]):
        return None  # "Malformed line": IOException
    version = int(fields[1])
    newer_ok = versions.since("partition_metadata_newer_version", h.kafka_version)
    if not (version == 0 or (version > 0 and newer_ok is not False)):
        return None  # "Unrecognized version": IOException
    if len(lines) < 2:
        return NPE
    second = ckpt.partition_metadata_fields(lines[1])
    if len(second) != 2:
        return None  # "Malformed line": IOException
    if ckpt.uuid_refused(second[1]) is not None:
        return IAE
    if version > 0 and second[1] != ckpt.ZERO_TOPIC_ID:
        return (
            READ  # 3.7+ reads a newer version's file as version 0's (kafka-ops's reader takes version 0 only)
        )
    return None
