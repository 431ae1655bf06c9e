"""DIR007: the KRaft ``quorum-state`` file the next start cannot read: 3.8+ does not start, up to 3.7 the start
clears it and the node forgets its vote.

The rule (what the raft client reads, what each release does) is kafka_ops.broker.quorum_state's, which the
next-start plan follows too (``next_start.quorum_state``, and the broker's exit from 3.8). Nothing is said when
the broker is running, in ZooKeeper mode, or when the file reads.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

from kafka_ops.broker import meta, metadata_log, quorum_state
from kafka_ops.checks.base import Finding, check
from kafka_ops.engine.shell import q
from kafka_ops.facts.context import Context
from kafka_ops.facts.model import LogDirFacts

SEVERITY = {quorum_state.EXITS: "critical", quorum_state.DEPENDS: "error", quorum_state.CLEARED: "warning"}


@check(
    "DIR007",
    severity="critical",
    scope="logdir",
    title="KRaft quorum-state the next start cannot read: 3.8+ does not start, 3.7 and older clear it; and the "
    "metadata log dir's bootstrap.checkpoint, partition.metadata, leader-epoch-checkpoint, latest snapshot",
    incident="a power loss leaves __cluster_metadata-0/quorum-state zero-filled or half-written: from 3.8 the node "
    "does not start at all; before, it starts and forgets the vote it cast, which a quorum of several voters must "
    "never do",
)
def run(ctx: Context, ldf: LogDirFacts) -> Iterator[Finding]:
    h = ctx.host
    # the metadata log dir's own files (the dir found by its __cluster_metadata-0 when no server.properties names it)
    here = os.path.abspath(ldf.path) + os.sep
    yield from _metadata_files(ldf, [m for m in metadata_log.damages(h) if m.path.startswith(here)])
    if meta.metadata_log_dir(h) != os.path.abspath(ldf.path):
        return
    d = quorum_state.damage(h)
    if d is None:
        return
    aside = "/var/tmp/quorum-state.damaged"
    fix = (
        f"With the broker stopped, move the file aside (mv {q(d.path)} {q(aside)}): the node then starts as a "
        "fresh member of the quorum (epoch 0, no vote) and learns the leader and epoch from the other voters or "
        "its own log. On a quorum of several voters, make sure the others are up first. Then find what damaged it "
        "(a power loss without fsync'd writes, a full disk, a restore)."
    )
    if d.start == quorum_state.DEPENDS:
        fix = "Give --kafka-version. " + fix
    yield run.finding(f"{d.reason}.", fix, severity=SEVERITY[d.start], path=d.path, log_dir=ldf.path,
                      details={"error": d.error, "next_start": d.start})  # fmt: skip


_FIX = {
    "bootstrap.checkpoint": "move it aside ({mv}): a node without it reads its bootstrap metadata from the configuration "
    "(BootstrapDirectory.readFromConfiguration), which only matters to a controller whose metadata log is empty; or "
    "copy the file from another node of the same cluster",
    "leader-epoch-checkpoint": "move it aside ({mv}): the metadata log is recovered in full at every start and its "
    "leader epochs are rebuilt from the batches",
    "partition.metadata": "move it aside ({mv}): KafkaMetadataLog writes it again with the metadata topic's id",
    "snapshot": "move it aside ({mv}): the node then reads the snapshot before it, or the log from offset 0; on a "
    "quorum of several voters it fetches what it lacks from the leader",
    "snapshots": "restore the snapshot that covers the log's start from a backup, or, on a quorum of several voters "
    "with the others up, move __cluster_metadata-0 aside so that the node fetches the log from the leader",
}


def _metadata_files(ldf: LogDirFacts, damages: list[metadata_log.MetadataFileDamage]) -> Iterator[Finding]:
    """The metadata log dir's other files the next start reads (broker.metadata_log)."""
    for m in damages:
        aside = f"/var/tmp/{os.path.basename(m.path)}.damaged"
        fix = "With the broker stopped, " + _FIX[m.file].format(mv=f"mv {q(m.path)} {q(aside)}") + "."
        yield run.finding(
            f"{m.reason}.", fix, severity=_SEVERITY.get(m.start, "error"), path=m.path, log_dir=ldf.path,
            details={"file": m.file, "error": m.error, "next_start": m.start},
        )  # fmt: skip


_SEVERITY = {metadata_log.EXITS: "critical", metadata_log.DEPENDS: "error", metadata_log.STARTS: "warning"}

__all__ = ["run"]
