"""SHUT003: the recovery-point checkpoint is missing, unreadable, lacks a partition, or is ahead of the log end.

``<log dir>/recovery-point-offset-checkpoint`` says, per partition, up to which offset the log was flushed; after
an unclean stop ``LogLoader.recoverLog`` re-reads every segment from ``floorKey(recovery point)`` on. What the
broker does with a bad one (see docs/SHUT003.md), LogManager.loadLogs / loadLog, CheckpointFile:

* missing: the ``OffsetCheckpointFile`` constructor creates it empty (``CheckpointFile``: ``Files.createFile``),
  it reads no entries, and every partition gets recovery point 0 (``recoveryPoints.getOrDefault(tp, 0L)``).
* unreadable (permissions, or not the checkpoint format): ``CheckpointFileWithFailureHandler.read`` logs "Error
  while reading checkpoint file", puts the log dir on the ``LogDirFailureChannel`` (since 1.0.0, KIP-112) and
  throws; ``loadLogs`` logs "Error occurred while reading recovery-point-offset-checkpoint file of directory ...,
  resetting the recovery checkpoint to 0" and goes on with 0 for every partition. After start-up the
  ReplicaManager's ``LogDirFailureHandler`` takes the dir off the channel: its replicas go offline
  (``handleLogDirFailure``), and the broker halts if the dir holds the KRaft metadata log. The lab's 2.8.2, 3.5.2 and
  3.9.1 brokers did so (tests/lab: checkpoint-recovery_point_garbage); the plan says it (failure_channel).
* no entry for a partition: recovery point 0 for it (same ``getOrDefault``).
* ahead of the log end offset: ``recoverLog`` starts at ``floorKey(checkpoint)``, the segment holding it (the
  active one), so the segments below are trusted unchecked; the broker lowers the recovery point to the log end
  at load. If the log-start checkpoint is ahead too, ``deleteSegmentsIfLogStartGreaterThanLogEnd`` deletes every
  segment of the partition (2.3.0 and later).

Recovery point 0 matters only at a start without the clean-shutdown marker: then every segment is re-read. The
partition rule (no entry) is reported only then; the log-dir rules always (an interrupted start deletes the
marker first, KAFKA-10471, and the next one recovers everything). The KRaft metadata log has no entry by design
(KafkaMetadataLog recovers it in full at every start) and is skipped, as are -delete/-future/-stray dirs.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

from kafka_ops.broker.startup import is_metadata_log, partition_name, recover_log_floor
from kafka_ops.checks.base import Finding, check
from kafka_ops.engine import checkpoints as ckpt
from kafka_ops.engine import versions
from kafka_ops.engine.layout import METADATA_TOPIC
from kafka_ops.engine.shell import content_free, q
from kafka_ops.facts.context import Context
from kafka_ops.facts.model import LogDirFacts, PartitionFacts
from kafka_ops.units import human_bytes, human_ms


@check(
    "SHUT003",
    severity="warning",
    scope="partition,logdir",
    title="Recovery-point checkpoint missing, unreadable, without a partition, or ahead of the log end",
    incident="the recovery after an unclean stop re-read everything from the recovery point; a lost or "
    "unreadable checkpoint makes that everything",
)
def run(ctx: Context, subject: PartitionFacts | LogDirFacts) -> Iterator[Finding]:
    if isinstance(subject, LogDirFacts):
        yield from _log_dir(ctx, subject)
    else:
        yield from _partition(ctx, subject)


def _state(ctx: Context, ldf: LogDirFacts) -> str:
    if ctx.host.broker_state == "running":
        return "running"
    return "clean" if ldf.clean_shutdown else "unclean"


def _full_recovery(ctx: Context, ldf: LogDirFacts) -> str:
    a = ldf.agg
    secs = ctx.recovery_seconds(a.log_bytes, a.partitions, a.largest_partition_bytes)
    took = "under a second" if secs < 1 else f"about {human_ms(secs * 1000)}"
    return (
        f"every segment of every partition: {a.segments} segments, {human_bytes(a.log_bytes)} in {a.partitions} "
        f"partitions, {took}"
    )


def _log_dir(ctx: Context, ldf: LogDirFacts) -> Iterator[Finding]:
    if not ldf.scan.exists or ldf.scan.info is None or not ldf.scan.info.is_dir:
        return
    path = os.path.join(ldf.path, ckpt.RECOVERY_POINT)
    present = any(os.path.basename(f.path) == ckpt.RECOVERY_POINT for f in ldf.scan.root_files)
    if present and ldf.scan.checkpoints.get(ckpt.RECOVERY_POINT) is not None:
        return
    if not any(n.topic != METADATA_TOPIC for _, n in ldf.scan.partition_names):
        return  # nothing for LogManager to load from this dir
    state = _state(ctx, ldf)
    if state == "unclean":
        consequence = (
            "There is no .kafka_cleanshutdown, so the next start's LogLoader.recoverLog re-reads "
            + _full_recovery(ctx, ldf)
            + " (SHUT001 reports the same recovery)."
        )
    elif state == "clean" and present:
        consequence = (
            ".kafka_cleanshutdown is present, so recovery point 0 costs nothing at the next start itself "
            "(LogLoader.recoverLog does not run); after an unclean stop it would mean re-reading "
            + _full_recovery(ctx, ldf)
            + "."
        )
    elif state == "clean":
        consequence = (
            ".kafka_cleanshutdown is present, so the next start skips recovery and writes the checkpoint again "
            "within log.flush.offset.checkpoint.interval.ms (60 s by default). But the start deletes the marker "
            "first (KAFKA-10471): if it is interrupted before the checkpoint is written, the following start "
            "re-reads " + _full_recovery(ctx, ldf) + "."
        )
    else:
        consequence = (
            "The broker is running and rewrites the checkpoint every log.flush.offset.checkpoint.interval.ms (60 s "
            "by default), so this file was removed or damaged under it, or its writes fail ('Error while writing "
            "to checkpoint file', which takes the log dir offline). If the broker dies before a good one is "
            "written, the next start re-reads " + _full_recovery(ctx, ldf) + "."
        )
    if not present:
        yield run.finding(
            f"{path} is missing. At the next start the LogManager creates it empty (CheckpointFile: "
            "Files.createFile), reads no entries and gives every partition recovery point 0 (LogManager.loadLog: "
            f"recoveryPoints.getOrDefault(tp, 0)). {consequence}",
            "Find out what removed it (a clean-up script, a restore or copy that left out the log dir's root files). "
            "Nothing to restore by hand: the broker writes it again; keep the stop clean (SHUT001, SYSD001) so that "
            "the missing checkpoint costs nothing.",
            path=path,
            details={"problem": "missing", "state": state, "log_bytes": ldf.agg.log_bytes},
        )
        return
    err = next(
        (e for e in ldf.scan.errors if os.path.abspath(e.path) == os.path.abspath(path)),
        None,
    )
    why = content_free(err.reason) if err is not None else "unreadable"
    version = ctx.host.kafka_version
    channel = versions.has("log_dir_failure_channel", version, unknown=True)
    metadata_here = any(os.path.basename(d.path) == f"{METADATA_TOPIC}-0" for d in ldf.scan.skipped_dirs)
    offline = (
        " CheckpointFileWithFailureHandler.read also logs 'Error while reading checkpoint file' and puts the log "
        "dir on the LogDirFailureChannel (since 1.0.0): after start-up the ReplicaManager's LogDirFailureHandler "
        "takes the dir offline (handleLogDirFailure: every replica in it stops being served)"
        + (
            ", and since this dir holds the KRaft metadata log (__cluster_metadata-0) the broker halts "
            "('Shutdown broker because the metadata log dir ... has failed')"
            if metadata_here
            else "; the broker halts if it is the KRaft metadata log dir"
        )
        + " (real 2.8.2, 3.5.2 and 3.9.1 brokers did so in kafka-ops' tests)."
        if channel
        else ""
    )
    yield run.finding(
        f"{path} cannot be read as a checkpoint: {why}. At the next start LogManager.loadLogs logs 'Error occurred "
        f"while reading recovery-point-offset-checkpoint file of directory {ldf.path}, resetting the recovery "
        f"checkpoint to 0' and loads every partition with recovery point 0. {consequence}{offline}",
        "With the broker stopped: if the file is only unreadable to the broker user, fix its owner and mode "
        f"(kafka-ops fix ownership --log-dir {q(ldf.path)} --apply; PERM001). If its content is damaged, move it "
        f"aside (mv {q(path)} {q(path + '.corrupt')}): a missing checkpoint is created empty without taking the dir offline, "
        "and the start re-reads the segments only if the stop was unclean.",
        severity="error" if channel else None,
        path=path,
        details={
            "problem": "unreadable", "error": why, "state": state, "log_dir_offline_after_start": channel,
            "metadata_log_dir": metadata_here, "log_bytes": ldf.agg.log_bytes,
        },
    )  # fmt: skip


def _partition(ctx: Context, pf: PartitionFacts) -> Iterator[Finding]:
    if is_metadata_log(pf) or pf.part.name.kind != "log" or not pf.part.segments:
        return
    ldf = pf.log_dir
    if ldf.scan.checkpoints.get(ckpt.RECOVERY_POINT) is None:
        return  # missing or unreadable: the log-dir finding says it for every partition
    state = _state(ctx, ldf)
    rp, leo = pf.recovery_point, pf.log_end_offset
    if rp is not None and (leo is None or rp <= leo):
        return  # the usual partition: its name and size are not made for it
    name = partition_name(pf)
    segs = pf.part.segments
    size = pf.part.size
    if rp is None:
        if state != "unclean":
            return
        secs = ctx.recovery_seconds(size, 1)
        yield run.finding(
            f"{ldf.path}/{ckpt.RECOVERY_POINT} has no entry for {name}: LogManager.loadLog uses recovery point 0, "
            f"and since the last stop was unclean LogLoader.recoverLog re-reads {_all(len(segs))} of it "
            f"({human_bytes(size)}, about {human_ms(secs * 1000)}) instead of only the unflushed ones. The broker "
            "writes the entry at its next checkpoint: the partition was created or moved here less than "
            "log.flush.offset.checkpoint.interval.ms (60 s) before the stop, or its dir was copied in by hand.",
            "Expect the longer recovery. If the partition dir was copied in by hand, check that it belongs to this "
            "broker (the controller's assignment) and that it was copied with the source broker stopped.",
            path=pf.part.path,
            topic=pf.part.topic,
            partition=pf.part.partition,
            details={"problem": "no_entry", "state": state, "segments": len(segs), "log_bytes": size},
        )
        return
    if leo is None or rp <= leo:
        return
    floor = recover_log_floor(pf)
    version = ctx.host.kafka_version
    ls = pf.log_start
    delete_all = ls is not None and ls > leo
    delete_text = ""
    if delete_all:
        delete_text = (
            f" The log-start-offset checkpoint ({ls}) is above the log end offset too: at load LogLoader "
            f"deletes every segment of {name} ('Deleting all segments because logEndOffset ({leo}) is smaller than "
            f"logStartOffset {ls}. This could happen if segment files were deleted from the file system.', "
            f"deleteSegmentsIfLogStartGreaterThanLogEnd; 2.3.0 and later): {len(segs)} segments, "
            f"{human_bytes(size)}."
        )
    yield run.finding(
        f"{name}: the recovery point {rp} in {ldf.path}/{ckpt.RECOVERY_POINT} is above the log end offset {leo}: "
        f"the checkpoint says offsets up to {rp - 1} were flushed, but the log ends {rp - leo} offsets earlier. "
        "Either the log was truncated after the checkpoint was written (a follower truncating to its leader, then "
        "an unclean stop before the next checkpoint) or flushed data is gone (files restored from an older copy, "
        "a segment removed by hand, a file system that lost synced writes). At load the broker lowers the recovery "
        f"point to the log end offset; after an unclean stop LogLoader.recoverLog starts at floorKey({rp}) = "
        f"segment {floor}, so only that segment is re-read and the {sum(1 for s in segs if s.base_offset < (floor or 0))} "
        f"segments below it are trusted unchecked.{delete_text}",
        (
            f"Do not start the broker yet: back up {pf.part.path} (cp -a, broker stopped), then find the missing "
            "segments (an older or partial restore) or, if another replica holds the partition, remove this "
            "replica's dir so that it is fetched again from the leader."
            if delete_all
            else "If files were restored or copied, check that the log dir's checkpoints and segments come from the "
            "same moment (kafka-ops dump the partition dir). If another replica is in sync, this one truncates and "
            "catches up from the leader after the start; if it was the leader, the offsets above "
            f"{leo - 1} were lost."
        ),
        severity="error" if delete_all and versions.has("delete_all_when_end_below_start", version, unknown=True) else None,
        path=pf.part.path,
        topic=pf.part.topic,
        partition=pf.part.partition,
        details={
            "problem": "ahead_of_log_end", "recovery_point": rp, "log_end_offset": leo, "log_start_offset": ls,
            "recover_log_floor": floor, "deletes_all_segments": delete_all, "state": state,
        },
    )  # fmt: skip


def _all(n: int) -> str:
    return "its only segment" if n == 1 else f"all {n} segments"
