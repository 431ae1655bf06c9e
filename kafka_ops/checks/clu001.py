"""CLU001: stopping this broker now leaves partitions below min.insync.replicas or with no replica in sync."""

from __future__ import annotations

from collections.abc import Iterator

from kafka_ops.broker.replication import NOT_REFUSING, AtRisk, stop_risks
from kafka_ops.checks.base import Finding, check
from kafka_ops.engine.shell import q
from kafka_ops.facts.context import Context
from kafka_ops.facts.model import HostFacts

SHOWN = 10  # partitions named in the message; details.partitions has them all


@check(
    "CLU001",
    severity="critical",
    scope="host",
    title="Stopping this broker now leaves partitions below min.insync.replicas or with no replica in sync",
    incident="a rolling restart stops a broker whose partitions have no other in-sync replica to spare: "
    "acks=all producers fail (NotEnoughReplicas) or the partitions go offline until it is back",
    needs=("cluster",),
)
def run(ctx: Context, h: HostFacts) -> Iterator[Finding]:
    facts, node = h.cluster, h.node_id
    if facts is None or node is None or h.cluster_mismatch:
        return  # CLU004 says why the cluster's facts are not this broker's
    risks = stop_risks(facts, node)
    blocking = [r for r in risks if r.kind not in NOT_REFUSING]
    single = [r for r in risks if r.kind == "single_replica"]
    exempt = [r for r in risks if r.kind == "rf_le_min_isr"]
    at = facts.get("bootstrap")
    if blocking:
        offline = [r for r in blocking if r.kind == "offline"]
        names = ", ".join(r.says() for r in blocking[:SHOWN]) + (
            f", and {len(blocking) - SHOWN} more" if len(blocking) > SHOWN else ""
        )
        what = (
            f"{len(offline)} go offline (no replica left in sync) and "
            f"{len(blocking) - len(offline)} fall below min.insync.replicas"
            if offline
            else f"{len(blocking)} fall below min.insync.replicas (producers with acks=all fail with NotEnoughReplicas)"
        )
        yield run.finding(
            f"Stopping broker {node} now (cluster at {at}) makes {len(blocking)} partition(s) unavailable: {what}: {names}.",
            "Do not stop this broker yet. Wait until the other replicas are back in sync (`kafka-ops cluster check "
            f"--bootstrap-server {q(at)} --broker {q(node)}` answers yes; kafka-topics.sh --describe "
            "--under-min-isr-partitions).",
            details={"broker": node, "partitions": [_row(r) for r in blocking]},
        )
    if exempt:
        names = ", ".join(r.says() for r in exempt[:SHOWN]) + (
            f", and {len(exempt) - SHOWN} more" if len(exempt) > SHOWN else ""
        )
        yield run.finding(
            f"{len(exempt)} partition(s) on broker {node} have a replication factor <= min.insync.replicas: no roll "
            f"can spare one of their replicas, so the stop of broker {node} (or of any of their brokers) refuses "
            f"their acks=all writes while it is down; the roll does not wait for them (as Strimzi's KafkaRoller): "
            f"{names}.",
            "Accept that acks=all producers to these topics fail during each broker's restart, or lower "
            "min.insync.replicas below the replication factor (kafka-configs.sh --alter --entity-type topics "
            "--entity-name TOPIC --add-config min.insync.replicas=N) or add replicas (kafka-reassign-partitions.sh).",
            severity="warning",
            details={"broker": node, "partitions": [_row(r) for r in exempt]},
        )
    if single:
        names = ", ".join(r.name for r in single[:SHOWN]) + (
            f", and {len(single) - SHOWN} more" if len(single) > SHOWN else ""
        )
        yield run.finding(
            f"{len(single)} partition(s) have broker {node} as their only replica (replication factor 1): they are "
            f"unavailable while it is down, whatever the order of the roll: {names}.",
            "Accept the outage of these partitions during the restart, or give the topics more replicas "
            "(kafka-reassign-partitions.sh) before rolling.",
            severity="info",
            details={"broker": node, "partitions": [_row(r) for r in single]},
        )


def _row(r: AtRisk) -> dict[str, object]:
    return {
        "topic": r.topic, "partition": r.partition, "replicas": r.replicas, "isr": r.isr,
        "min_insync_replicas": r.min_isr, "left_in_sync": r.left_in_sync, "kind": r.kind,
    }  # fmt: skip
