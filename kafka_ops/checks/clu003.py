"""CLU003: the broker itself reports a log dir offline."""

from __future__ import annotations

from collections.abc import Iterator

from kafka_ops.broker.replication import offline_log_dirs
from kafka_ops.checks.base import Finding, check
from kafka_ops.facts.context import Context
from kafka_ops.facts.model import HostFacts


@check(
    "CLU003",
    severity="critical",
    scope="host",
    title="The running broker reports a log dir offline",
    incident="a log dir the broker could not read went offline at runtime; its partitions were served "
    "by nobody on this broker until an operator looked",
    needs=("cluster",),
)
def run(ctx: Context, h: HostFacts) -> Iterator[Finding]:
    facts, node = h.cluster, h.node_id
    if facts is None or node is None or h.cluster_mismatch:
        return
    for d in offline_log_dirs(facts, node):
        path = str(d.get("path"))
        yield run.finding(
            f"Broker {node} reports its log dir {path} offline ({d.get('error')}): it serves none of that dir's "
            "partitions (the other replicas lead them, or nobody does), and a restart brings the dir back only if "
            "the cause (a failed disk, a remount, permissions) is gone.",
            "Find the I/O error in the broker's server.log ('Error while ... in dir', 'Stopping serving logs in "
            "dir'), fix the disk or its ownership (kafka-ops audit on the stopped broker says what the next start "
            "will do with the dir), then restart the broker.",
            path=path,
            details={"broker": node, "error": d.get("error")},
        )
