"""DIR006: a partition dir whose topic the KRaft metadata no longer has (a "stray"): what the next start does with it.

A topic deleted while the broker was down, or a partition dir back from a backup restore: the broker judges it
by its ``partition.metadata`` topic id against the metadata image at its start, and by release renames it
``<tp>.<uuid>-stray`` and keeps it (3.7+), or renames it ``-delete`` and deletes it with its records (3.0-3.6).
A partition whose topic exists but whose replica set no longer holds this broker (reassigned away while it was
down) is a stray too (info when deleted: the current replicas serve it; warning when renamed -stray: the disk is
never freed). The rule, and the source it follows, is kafka_ops.broker.strays' (the next-start plan's ``strays``
too).
Nothing is said when the broker is running or not KRaft, or when this host's metadata log is absent or cannot be
read.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

from kafka_ops.broker import strays
from kafka_ops.checks.base import Finding, check
from kafka_ops.checks.names import write_topic_id
from kafka_ops.engine.shell import q
from kafka_ops.facts.context import Context
from kafka_ops.facts.model import LogDirFacts
from kafka_ops.units import iso

SEVERITY = {
    strays.DELETED: "critical",
    strays.DEPENDS: "error",
    strays.RENAMED_STRAY: "warning",
    strays.KEPT: "info",
    strays.EXITS: "critical",
}


@check(
    "DIR006",
    severity="critical",
    scope="logdir",
    title="Partition dir of a topic the KRaft metadata no longer has: deleted (3.0-3.6) or renamed -stray (3.7+) at "
    "the next start",
    incident="a topic deleted while the broker was down, or partition dirs back from a backup restore: a 3.x KRaft "
    "broker before 3.7 deletes them at its start, records and all",
)
def run(ctx: Context, ldf: LogDirFacts) -> Iterator[Finding]:
    h = ctx.host
    for st in strays.find(h):
        if st.log_dir != ldf.path:
            continue
        base = os.path.basename(st.path)
        renamed = os.path.join(os.path.dirname(st.path), st.tp_name)  # <tp>.<uuid>-stray, a -future dir's too
        if st.fate == strays.DELETED:
            what = (
                f"{st.reason}. Its records are LOST unless the metadata is wrong and the topic comes back: "
                f"the deletion is at {iso(st.deleted_at, 'z_ms')}."
            )
            fix = (
                f"Before the start, if the data matters, move the dir out of the log dir (mv {q(st.path)} "
                f"{q('/var/tmp/' + base + '.stray')}) and produce its records again from there into a live topic "
                "(kafka-dump-log.sh reads it); if it does not, let the broker delete it. Upgrading to 3.7+ makes the "
                "broker keep such dirs (renamed -stray) instead."
            )
        elif st.fate == strays.RENAMED_STRAY:
            what = (
                f"{st.reason}. The data stays on disk in {renamed}.<uuid>-stray, served to no one, and uses disk "
                "space until removed."
            )
            fix = (
                f"After the start, find it with ls -d {q(renamed)}.*-stray. If the topic was deleted on purpose, "
                "remove that dir; to keep its records, read them with kafka-dump-log.sh and produce them into a "
                "live topic (the broker never loads a -stray dir as a partition again)."
            )
        elif st.fate == strays.EXITS:
            what = f"{st.reason}: the broker does not start."
            fix = (
                f"Before the start, {write_topic_id(os.path.join(st.path, 'partition.metadata'), st.topic)}"
                if st.live
                else f"Before the start, move the dir out of the log dir (mv {q(st.path)} "
                f"{q('/var/tmp/' + base + '.stray')}): the metadata has no such partition"
            ) + "; or upgrade to 3.7.1+, which renames such a dir -stray and starts."
        elif st.fate == strays.KEPT:
            what = f"{st.reason}."
            fix = "Remove the dir once you are sure the topic is gone, or recreate the topic on purpose."
        else:
            what = f"{st.reason}."
            fix = (
                "Give --kafka-version. On 3.0-3.6, move the dir out of the log dir before the start if its records "
                "matter: the start deletes it."
            )
        severity = SEVERITY[st.fate]
        if st.reassigned:
            # the partition lives on in its current replicas: this copy is surplus, not the only one
            severity = "info" if st.fate in (strays.DELETED, strays.KEPT) else "warning"
            if st.fate == strays.DELETED:
                what = (
                    f"{st.reason}. The partition is served by its current replicas; this copy goes at "
                    f"{iso(st.deleted_at, 'z_ms')}."
                )
                fix = "Nothing to do if the reassignment was meant; if not, reassign the partition back after the start."
            elif st.fate == strays.RENAMED_STRAY:
                fix = (
                    f"After the start, check the partition is in sync on its replicas, then remove "
                    f"{q(renamed)}.*-stray (the broker never deletes it and never loads it again)."
                )
        if st.live and st.fate in (strays.RENAMED_STRAY, strays.DELETED, strays.DEPENDS):
            severity = "critical"  # the live partition's records moved aside, the partition served empty
            fix = (
                f"Before the start, {write_topic_id(os.path.join(st.path, 'partition.metadata'), st.topic)}; the "
                "broker then loads it as the live partition."
            )
        yield run.finding(
            f"{st.path} is a partition dir the KRaft metadata no longer has ({st.why}): {what}",
            fix,
            severity=severity,
            path=st.path,
            log_dir=ldf.path,
            topic=st.topic,
            partition=st.partition,
            details={"topic_id": st.topic_id, "fate": st.fate, "deleted_at": iso(st.deleted_at, "z_ms")},
        )


__all__ = ["run"]
