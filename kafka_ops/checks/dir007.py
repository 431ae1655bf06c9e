"""DIR007: the KRaft ``quorum-state`` file the next start cannot read: 3.8+ does not start, up to 3.7 the start
clears it and the node forgets its vote.

The rule (what the raft client reads, what each release does) is kafka_ops.broker.quorum_state's, which the
next-start plan follows too (``next_start.quorum_state``, and the broker's exit from 3.8). Nothing is said when
the broker is running, in ZooKeeper mode, or when the file reads.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

from kafka_ops.broker import meta, quorum_state
from kafka_ops.checks.base import Finding, check
from kafka_ops.engine.shell import q
from kafka_ops.facts.context import Context
from kafka_ops.facts.model import LogDirFacts

SEVERITY = {quorum_state.EXITS: "critical", quorum_state.DEPENDS: "error", quorum_state.CLEARED: "warning"}


@check(
    "DIR007",
    severity="critical",
    scope="logdir",
    title="KRaft quorum-state the next start cannot read: 3.8+ does not start, 3.7 and older clear it",
    incident="a power loss leaves __cluster_metadata-0/quorum-state zero-filled or half-written: from 3.8 the node "
    "does not start at all; before, it starts and forgets the vote it cast, which a quorum of several voters must "
    "never do",
)
def run(ctx: Context, ldf: LogDirFacts) -> Iterator[Finding]:
    h = ctx.host
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


__all__ = ["run"]
