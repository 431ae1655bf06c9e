"""The KRaft metadata log dir's own files at the next start (issue 36 §2): which damage makes a stopped node exit,
which it reads past, and which the plan cannot decide. Standard library only.

What a KRaft node reads of them, in this order (apache/kafka at the release tags):

* ``bootstrap.checkpoint`` in the metadata log dir (3.3+, KIP-778; written by ``kafka-storage format``):
  ``KafkaRaftServer.initializeLogDirs`` reads it at every start, whatever the node's role
  (core/src/main/scala/kafka/server/KafkaRaftServer.scala@3.3.1:211, @3.7.1:196, trunk:188 ->
  metadata/.../bootstrap/BootstrapDirectory.java ``read`` -> ``readFromBinaryFile``). A missing file is fine
  (``readFromConfiguration``). The file is read by ``BatchFileReader`` (``FileRecords.batchIterator``, no CRC
  check): a size field below 14 is ``CorruptRecordException`` (FileLogInputStream.nextBatch), a partial last batch
  ends the read silently, and without a ``FeatureLevelRecord`` for ``metadata.version`` among the records read
  ``BootstrapMetadata.fromRecords`` throws RuntimeException("No FeatureLevelRecord for metadata.version was found
  in the bootstrap metadata"): the node exits before it opens any log (an empty file too).
* ``__cluster_metadata-0`` is opened by ``KafkaMetadataLog.apply`` (core/src/main/scala/kafka/raft/
  KafkaMetadataLog.scala@3.5.2, @3.7.1, trunk) as a ``UnifiedLog`` with its own ``LogDirFailureChannel(5)``,
  ``recoveryPoint = 0``, ``lastShutdownClean = false``, ``keepPartitionMetadataFile = true``: its segments are
  recovered in full at every start (a torn, zero-filled or garbage tail is truncated, an index rebuilt:
  broker.startup), but its ``leader-epoch-checkpoint`` (LeaderEpochFileCache, CheckpointFileWithFailureHandler) and
  its ``partition.metadata`` (UnifiedLog.initializeTopicId) are read as any partition's, and what they throw
  (KafkaStorageException, NullPointerException, IllegalArgumentException, InconsistentTopicIdException for
  another topic id than the metadata topic's) is caught by nobody: LogManager's per-dir handling is not on this
  path (LogManager skips ``__cluster_metadata``), the raft manager does not start and the node exits.
* ``recoverSnapshots`` (same file) lists the snapshots, deletes ``.checkpoint.part`` and ``.checkpoint.deleted``
  ones and those below the log start offset, and throws IllegalStateException("Inconsistent snapshot state")
  when the log starts above 0 and no complete snapshot is at or above its start: the node exits.
* The latest complete snapshot (``<end offset>-<epoch>.checkpoint``) is read, whole, with each batch's CRC
  checked (RecordsSnapshotReader / RecordsIterator, ``doCrcValidation`` true):
  - up to 3.5: by the raft listeners only when their next offset is below the log start (the log was cleaned);
  - from 3.6.0 (KAFKA-15076, "KRaft should prefer latest snapshot"): by every listener at its start whenever a
    snapshot exists (KafkaRaftClient.updateListenersProgress@3.7.1) -- the MetadataLoader and, on a controller,
    the QuorumController, whose fault handlers are fatal on a controller (SharedServer.metadataLoaderFaultHandler:
    ``fatal = processRoles.contains(ControllerRole)``); on a broker-only node the loader counts a fault and does not
    publish: whether it then starts is not decided here (unknown);
  - from 3.8.0 (KAFKA-16207): also by ``KRaftControlRecordStateMachine.updateState`` in
    ``KafkaRaftClient.initialize``, on every role: an exception stops the raft client's start.
  A size field below 14 or above the batch limit, or a CRC mismatch, throws (CorruptRecordException). A partial
  last batch ends the read silently (ByteBufferLogInputStream.nextBatch returns null) and an empty file holds no
  batch: neither throws there (what the listener then makes of a snapshot without its header is the lab's:
  tests/lab METADATA_DAMAGE).
"""

from __future__ import annotations

import os

from kafka_ops.broker import meta
from kafka_ops.engine import checkpoints as ckpt
from kafka_ops.engine import versions
from kafka_ops.engine.compat import slotted
from kafka_ops.engine.errors import EngineError, FormatError
from kafka_ops.engine.layout import METADATA_TOPIC, parse_kraft_snapshot, parse_segment_file
from kafka_ops.engine.metadata_records import decode_metadata_record
from kafka_ops.engine.records import BELOW_MIN_OVERHEAD, BatchScanner, LogBuffer, RecordError, iter_records
from kafka_ops.facts.model import HostFacts

BOOTSTRAP = "bootstrap.checkpoint"
CHECK = "DIR007"
EXITS, STARTS, DEPENDS = "exits", "starts", "depends"
# Uuid.METADATA_TOPIC_ID: the topic id KafkaRaftManager gives __cluster_metadata (Uuid(0, 1))
METADATA_TOPIC_ID = "AAAAAAAAAAAAAAAAAAAAAQ"


@slotted(frozen=True)
class MetadataFileDamage:
    """One file of the metadata log dir that the next start cannot read as it must."""

    path: str
    file: str  # bootstrap.checkpoint | partition.metadata | leader-epoch-checkpoint | snapshot | snapshots
    error: str  # what the reader found (no content)
    start: str  # exits | starts | depends
    reason: str

    def to_dict(self) -> dict[str, str]:
        return {
            "path": self.path, "file": self.file, "error": self.error, "fate": self.start,
            "reason": self.reason, "check": CHECK,
        }  # fmt: skip


def _batches(
    path: str, verify_crc: bool
) -> tuple[list[tuple[bool, list[dict[str, object]]]], str | None, bool]:
    """Each whole batch of a metadata file (whether it is a control batch, its decoded records: none for a control
    batch), why the read throws (None: it ends without an exception), and whether something was read that the
    broker reads differently (a CRC it does not check)."""
    out: list[tuple[bool, list[dict[str, object]]]] = []
    with LogBuffer.open(path) as buf:
        scanner = BatchScanner(buf, verify_crc=verify_crc)
        for batch in scanner:
            if not batch.crc_valid:
                break
            recs: list[dict[str, object]] = []
            if not batch.is_control:
                try:
                    recs = [decode_metadata_record(r.value) for r in iter_records(buf, batch)]
                except RecordError as e:
                    return out, f"a batch's records do not decode ({e})", True
            out.append((batch.is_control, recs))
        tail = scanner.tail
    if tail is None or tail.kind == "torn":
        return (
            out,
            None,
            False,
        )  # a partial last batch: FileLogInputStream / ByteBufferLogInputStream give null
    if BELOW_MIN_OVERHEAD in tail.reason:
        return out, f"CorruptRecordException at byte {tail.position} ({tail.reason})", False
    if "CRC" in tail.reason:
        return out, f"a batch at byte {tail.position} fails its CRC", not verify_crc
    return out, f"a corrupt batch at byte {tail.position} ({tail.reason})", True


def bootstrap_damage(h: HostFacts, mdir: str) -> MetadataFileDamage | None:
    path = os.path.join(mdir, BOOTSTRAP)
    if versions.since("kraft_bootstrap_checkpoint", h.kafka_version) is False:
        return None
    if not os.path.isfile(path) or os.path.islink(path):
        return None  # missing: the configuration's bootstrap; a link or another type: the file-type checks'
    said = f"KafkaRaftServer.initializeLogDirs reads {path} at every start (BootstrapDirectory.read)"
    try:
        batches, thrown, unsure = _batches(path, verify_crc=False)
    except (EngineError, OSError):
        return None  # cannot be opened here: left to the PERM checks
    if thrown is not None:
        if unsure:
            return MetadataFileDamage(
                path, BOOTSTRAP, thrown, DEPENDS,
                f"{said}: BatchFileReader checks no CRC and reads the damaged batch's records as they are "
                "(whether they decode and hold metadata.version is not decided here)",
            )  # fmt: skip
        return MetadataFileDamage(
            path, BOOTSTRAP, thrown, EXITS,
            f"{said}: {thrown}, which nothing catches: the node exits before it opens a log",
        )  # fmt: skip
    records = [r for _, b in batches for r in b]
    if any("error" in r for r in records):
        return MetadataFileDamage(
            path, BOOTSTRAP, "a record does not decode", DEPENDS,
            f"{said}: a record this kafka-ops does not decode (MetadataRecordSerde may, or may throw)",
        )  # fmt: skip
    for r in records:
        data = r.get("data")
        if r.get("type") == "FEATURE_LEVEL_RECORD" and isinstance(data, dict):
            if data.get("name") == "metadata.version":
                return None
    error = "no batch" if not batches else "no FeatureLevelRecord for metadata.version in its whole batches"
    return MetadataFileDamage(
        path, BOOTSTRAP, error, EXITS,
        f"{said}: {error}, so BootstrapMetadata.fromRecords throws RuntimeException ('No FeatureLevelRecord for "
        "metadata.version was found in the bootstrap metadata'): the node exits before it opens a log",
    )  # fmt: skip


def _log_file_damage(pdir: str) -> MetadataFileDamage | None:
    """__cluster_metadata-0's leader-epoch-checkpoint (read first, by LeaderEpochFileCache) or partition.metadata
    (UnifiedLog.initializeTopicId, after the segments) when KafkaMetadataLog.apply throws on it."""
    opened = "KafkaMetadataLog.apply opens the metadata log as a UnifiedLog with its own LogDirFailureChannel"
    path = os.path.join(pdir, ckpt.LEADER_EPOCH)
    if os.path.isfile(path) and not os.path.islink(path):
        try:
            ckpt.read_leader_epoch_checkpoint(path)
        except FormatError as e:
            if _readable(path):
                return MetadataFileDamage(
                    path, ckpt.LEADER_EPOCH, _plain(e), EXITS,
                    f"{path} does not parse ({_plain(e)}): {opened}; LeaderEpochFileCache's read throws "
                    "KafkaStorageException ('Error while reading checkpoint file'), which no one catches on this "
                    "path (LogManager does not load the metadata log): the raft manager does not start and the "
                    "node exits",
                )  # fmt: skip
    path = os.path.join(pdir, ckpt.PARTITION_METADATA)
    if os.path.isfile(path) and not os.path.islink(path) and _readable(path):
        error: str | None = None
        try:
            topic_id = ckpt.read_partition_metadata(path)["topic_id"]
            if topic_id != METADATA_TOPIC_ID:
                error = (
                    f"topic id {topic_id}, not the metadata topic's {METADATA_TOPIC_ID} "
                    "(InconsistentTopicIdException)"
                )
        except FormatError as e:
            error = _plain(e)
        except EngineError:
            error = None  # cannot be read here: left to the PERM checks
        if error is not None:
            return MetadataFileDamage(
                path, ckpt.PARTITION_METADATA, error, EXITS,
                f"{path} does not read as the metadata topic's id ({error}): {opened}; "
                "UnifiedLog.initializeTopicId throws (KafkaStorageException, NullPointerException, "
                "IllegalArgumentException or InconsistentTopicIdException) and no one catches it on this path: "
                "the raft manager does not start and the node exits",
            )  # fmt: skip
    return None


def _readable(path: str) -> bool:
    try:
        with open(path, "rb"):
            return True
    except OSError:
        return False


def _plain(e: Exception) -> str:
    from kafka_ops.engine.shell import content_free

    return content_free(getattr(e, "reason", None) or str(e))


def _snapshot_damage(h: HostFacts, pdir: str, names: list[str]) -> MetadataFileDamage | None:
    snaps = sorted(
        (s[0], s[1], n) for n in names if (s := parse_kraft_snapshot(n)) is not None and s[2] == "complete"
    )
    bases = [p.base_offset for n in names if n.endswith(".log") and (p := parse_segment_file(n)) is not None]
    log_start = min(bases) if bases else 0
    if log_start > 0 and not any(off >= log_start for off, _, _ in snaps):
        return MetadataFileDamage(
            pdir, "snapshots", f"the log starts at {log_start} and no complete snapshot is at or above it", EXITS,
            f"{pdir}: the metadata log starts at offset {log_start} and no complete snapshot is at or above it: "
            "KafkaMetadataLog.recoverSnapshots throws IllegalStateException ('Inconsistent snapshot state') and "
            "the node exits",
        )  # fmt: skip
    if not snaps:
        return None
    name = snaps[-1][2]
    # KafkaMetadataLog.truncateToLatestSnapshot: a latest snapshot past the log's end (a follower that crashed
    # after downloading it) truncates the log fully and starts it at the snapshot's offset (the epochs' order,
    # also compared there, is left out: a snapshot past the end is the case)
    if bases and snaps[-1][0] <= max(bases):
        pass  # the log ends at or after its last segment's base: not before this snapshot
    elif snaps[-1][0] > _log_end(pdir, bases):
        log_start = snaps[-1][0]
    path = os.path.join(pdir, name)
    try:
        batches, thrown, _unsure = _batches(path, verify_crc=True)
    except (EngineError, OSError):
        return None
    # the listeners also need the snapshot's header, the first record of its first batch (a control batch):
    # RecordsSnapshotReader.lastContainedLogTimestamp throws NoSuchElementException without it (the lab's 3.7.2,
    # an empty snapshot: 'Unhandled fault in MetadataLoader#handleLoadSnapshot')
    headless = thrown is None and not batches
    if thrown is None and not headless:
        return None
    v = h.kafka_version
    raft_reads = versions.since("raft_start_reads_snapshot", v) and thrown is not None
    listeners_read = versions.since("listeners_load_latest_snapshot", v)
    controller = "controller" in h.configs.server.get("process.roles", "")
    if thrown is None:
        thrown = (
            "no whole first batch with the snapshot header (RecordsSnapshotReader: NoSuchElementException)"
        )
    said = f"{path} is the latest snapshot and {thrown}"
    if raft_reads:
        return MetadataFileDamage(
            path, "snapshot", thrown, EXITS,
            f"{said}: from 3.8.0 KafkaRaftClient.initialize reads it whole (KRaftControlRecordStateMachine, CRC "
            "checked) and the exception stops the raft client's start: the node exits",
        )  # fmt: skip
    if listeners_read or (listeners_read is False and log_start > 0):
        if controller:
            return MetadataFileDamage(
                path, "snapshot", thrown, EXITS,
                f"{said}: the raft listeners load it at their start ("
                + ("3.6+, KAFKA-15076" if listeners_read else "the log starts after offset 0")
                + "), and a controller's fault handler for it is fatal: the node exits",
            )  # fmt: skip
        return MetadataFileDamage(
            path, "snapshot", thrown, DEPENDS,
            f"{said}: the metadata loader loads it at its start and counts a fault (not fatal on a broker-only "
            "node): whether the broker then starts is not decided here",
        )  # fmt: skip
    if listeners_read is None or raft_reads is None:
        return MetadataFileDamage(
            path, "snapshot", thrown, DEPENDS,
            f"{said}: from 3.6 the listeners load it at their start (the exit on a controller), before that only "
            "when the log starts after it: the Kafka version is unknown",
        )  # fmt: skip
    return MetadataFileDamage(
        path, "snapshot", thrown, STARTS,
        f"{said}: up to 3.5 the raft listeners read a snapshot only when the log starts after their next offset; "
        "this log starts at 0, so the start replays the log and does not read it",
    )  # fmt: skip


def _log_end(pdir: str, bases: list[int]) -> int:
    """The metadata log's end offset: after the last whole batch of its last segment (its base when empty)."""
    if not bases:
        return 0
    last = max(bases)
    end = last
    try:
        with LogBuffer.open(os.path.join(pdir, f"{last:020d}.log")) as buf:
            for batch in BatchScanner(buf, verify_crc=False, controls=False):
                end = batch.next_offset
    except (EngineError, OSError):
        pass
    return end


_last: tuple[object, list[MetadataFileDamage]] = (None, [])


def damages(h: HostFacts) -> list[MetadataFileDamage]:
    """The metadata log dir's files the next start of this stopped KRaft node cannot read, in the order it meets
    them (bootstrap.checkpoint, the log's own files, the snapshots). The plan, its unknowns and DIR007 ask it for
    the same host: the last answer is kept for that facts object (a snapshot is read whole, CRCs checked)."""
    global _last
    if _last[0] is not h:
        _last = (h, _damages(h))
    return _last[1]


def _damages(h: HostFacts) -> list[MetadataFileDamage]:
    if h.broker_state == "running":
        return []
    mode = meta.broker_mode(h)
    mdir = meta.metadata_log_dir(h) if mode == "kraft" else None
    if (
        mode == "unknown"
    ):  # no server.properties: an audited dir holding __cluster_metadata-0 is a KRaft node's
        from kafka_ops.facts.kraft_configs import metadata_dir

        found = metadata_dir(h)
        mdir = os.path.dirname(found) if found is not None else None
    if mdir is None or not os.path.isdir(mdir):
        return []
    out = []
    b = bootstrap_damage(h, mdir)
    if b is not None:
        out.append(b)
    pdir = os.path.join(mdir, f"{METADATA_TOPIC}-0")
    if os.path.isdir(pdir) and not os.path.islink(pdir):
        f = _log_file_damage(pdir)
        if f is not None:
            out.append(f)
        try:
            names = os.listdir(pdir)
        except OSError:
            names = []
        s = _snapshot_damage(h, pdir, names)
        if s is not None:
            out.append(s)
    return out


def exit_reason(h: HostFacts, before_quorum_state: bool) -> tuple[str, str] | None:
    """The first damage that makes the node exit: those the start meets before quorum-state
    (``before_quorum_state``: bootstrap.checkpoint, the log's files, the snapshot list) or after it (the latest
    snapshot's records, read by the raft client's initialize and its listeners)."""
    for d in damages(h):
        if d.start == EXITS and (d.file != "snapshot") == before_quorum_state:
            return d.reason, CHECK
    return None


def unknowns(h: HostFacts) -> list[dict[str, str]]:
    """What the plan cannot decide about the metadata log dir's files (next_start's ``unknown``)."""
    return [
        {"what": f"whether the node starts with {d.path} as it is ({d.file}, {CHECK})", "reason": d.reason}
        for d in damages(h)
        if d.start == DEPENDS
    ]
