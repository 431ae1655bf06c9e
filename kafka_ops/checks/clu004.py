"""CLU004: the cluster asked is not the one of the audited files (cluster.id or node.id differ)."""

from __future__ import annotations

from collections.abc import Iterator

from kafka_ops.broker.replication import answering_node
from kafka_ops.checks.base import Finding, check
from kafka_ops.facts.context import Context
from kafka_ops.facts.model import HostFacts


@check(
    "CLU004",
    severity="critical",
    scope="host",
    title="The cluster or broker answering is not the one whose files are audited",
    incident="a gate pointed at the wrong --bootstrap-server (staging for production, a neighbour broker) "
    "answers for another cluster: its ISRs and configs say nothing about this broker",
    needs=("cluster",),
)
def run(ctx: Context, h: HostFacts) -> Iterator[Finding]:
    facts = h.cluster
    if facts is None:
        return
    at = facts.get("bootstrap")
    theirs = facts.get("cluster_id")
    if h.cluster_mismatch:
        yield run.finding(
            f"The cluster at {at} has cluster.id {theirs}, but this broker's meta.properties say "
            f"{h.meta_cluster_id}: its ISRs, configs and log dirs are another cluster's, so the cluster checks "
            "(CLU001-CLU003) and the topic configs were not taken from it.",
            "Give the --bootstrap-server of this broker's own cluster (its listeners in server.properties).",
            details={"cluster_id": theirs, "meta_cluster_id": h.meta_cluster_id},
        )
        return
    node, answering = h.node_id, answering_node(facts)
    if node is not None and answering is not None and answering != node and h.broker_state == "running":
        yield run.finding(
            f"The broker answering at {at} is node {answering}, but the audited files are node {node}'s "
            "(meta.properties): the address is another broker's.",
            "Give this broker's own listener address as --bootstrap-server (or --broker-id if the files are "
            "audited for another node on purpose).",
            severity="warning",
            details={"answering_node": answering, "node_id": node},
        )
