"""DIR005: a checkpoint file the broker cannot parse (log-start-offset, replication-offset, cleaner-offset, a
partition's leader-epoch-checkpoint or partition.metadata): its log dir goes offline right after the start, or
(leader epochs and partition.metadata up to 3.2.0; an empty partition.metadata on every release from 2.8) the
broker does not start.

The rule (when each file is read, what a failed read does, per version) is kafka_ops.broker.failure_channel's,
which the next-start plan follows too. The recovery-point checkpoint's own finding is SHUT003's.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

from kafka_ops.broker.failure_channel import DEFAULT_CHECK, Damage, dir_damage, partition_damage
from kafka_ops.broker.meta import broker_mode, metadata_log_dir
from kafka_ops.checks.base import Finding, check
from kafka_ops.checks.names import write_topic_id
from kafka_ops.engine import checkpoints as ckpt
from kafka_ops.engine import versions
from kafka_ops.engine.shell import q
from kafka_ops.facts.context import Context
from kafka_ops.facts.model import HostFacts, LogDirFacts, PartitionFacts

AT_LOAD = (ckpt.LEADER_EPOCH, ckpt.PARTITION_METADATA)  # read while the partition loads


@check(
    "DIR005",
    severity="error",
    scope="partition,logdir",
    title="Checkpoint file the broker cannot parse: its log dir goes offline after the start (or the broker exits)",
    incident="a power loss or a full disk leaves a checkpoint zero-filled, truncated or half-written: at the next "
    "start the log dir goes offline and its partitions are served by no replica on this broker",
)
def run(ctx: Context, subject: PartitionFacts | LogDirFacts) -> Iterator[Finding]:
    h = ctx.host
    if isinstance(subject, LogDirFacts):
        for d in dir_damage(h, subject):
            if d.check == DEFAULT_CHECK:
                yield _finding(h, subject, d)
        return
    damage = partition_damage(h, subject)
    if damage is not None:
        yield _finding(h, subject.log_dir, damage, subject)


def _consequence(h: HostFacts, ldf: LogDirFacts, d: Damage) -> tuple[str, str]:
    """(what else follows, severity)."""
    if d.start == "exits":
        return "", "critical"
    if len(h.log_dirs) == 1:
        return (
            " It is the only log dir: the broker halts ('Shutdown broker because all log dirs in ... have failed').",
            "critical",
        )
    kraft = broker_mode(h) == "kraft"
    if kraft and versions.since("kraft_jbod", h.kafka_version) is False and d.name in AT_LOAD:
        # seen on a real 3.5.2 broker (partition.metadata garbage in data-1): every partition of the dir created
        # again in data-0 ("Created log for partition ..."), 2,800 acknowledged records no longer served
        return (
            " The dir goes offline while its partitions load, and a KRaft broker before 3.7 (no JBOD in KRaft, "
            "KIP-858) then creates this dir's partitions again, EMPTY, in another log dir and serves them from "
            "offset 0: their records are lost to consumers.",
            "critical",
        )
    if kraft and versions.since("kraft_jbod", h.kafka_version) and metadata_log_dir(h) == ldf.path:
        return (
            " It is the KRaft metadata log dir: the broker halts ('Shutdown broker because the metadata log dir ... "
            "has failed', 3.7+).",
            "critical",
        )
    return (
        " Other replicas of its partitions must serve them; a partition with no other replica is unavailable.",
        "error",
    )


def _fix(d: Damage, kraft: bool = False) -> str:
    if d.name == ckpt.PARTITION_METADATA and kraft:
        # LogManager.isStrayKraftReplica@3.7.1:1601-1608: a log without a topic id is a stray (renamed -stray, the
        # partition created again empty); 3.0-3.7.0's stray finders throw on it (findStrayPartitions@3.5.2:76-79)
        topic = os.path.basename(os.path.dirname(d.path)).rsplit("-", 1)[0]
        return (
            f"With the broker stopped, {write_topic_id(d.path, topic)}. Do not just remove it: a KRaft broker takes a log without a topic id for a stray (from "
            "3.7.1 it renames the dir -stray and creates the partition again, empty). Then find what damaged it (a "
            "power loss without fsync'd writes, a full disk, a restore or copy)."
        )
    if d.name == ckpt.PARTITION_METADATA:
        after = (
            "the broker loads the partition without a topic id and writes the file again with the id ZooKeeper "
            "gives the partition"
        )
    elif d.name == ckpt.LEADER_EPOCH:
        after = (
            "the broker creates it empty and the dir stays online; this replica's leader-epoch history starts "
            "again from the next leader epoch"
        )
    elif d.name == ckpt.LOG_START:
        after = "the broker creates it empty and takes each partition's log start from its first segment"
    elif d.name == ckpt.REPLICATION:
        after = "the broker creates it empty (high watermarks 0 until the replicas catch up)"
    else:
        after = "the broker creates it empty and the cleaner re-reads the compacted logs from their start"
    aside = f"/var/tmp/{os.path.basename(os.path.dirname(d.path))}-{d.name}.damaged"
    return (
        f"With the broker stopped, move the damaged file out of the log dir (mv {q(d.path)} "
        f"{q(aside)}): {after}. "
        "Then find what damaged it (a power loss without fsync'd writes, a full disk, a restore or copy)."
    )


def _finding(h: HostFacts, ldf: LogDirFacts, d: Damage, pf: PartitionFacts | None = None) -> Finding:
    more, severity = _consequence(h, ldf, d)
    kw: dict[str, object] = {}
    if pf is not None:
        kw = {"topic": pf.part.topic, "partition": pf.part.partition}
    return run.finding(
        f"{d.reason}.{more}",
        _fix(d, broker_mode(h) == "kraft"),
        severity=severity,
        path=d.path,
        log_dir=ldf.path,
        details={"file": os.path.basename(d.path), "error": d.error, "next_start": d.start},
        **kw,
    )


__all__ = ["run"]
