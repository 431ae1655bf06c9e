"""ENV002: ZooKeeper's ``/cluster/id`` (read with ``--zookeeper``) is not the ``cluster.id`` of the audited log
dirs' meta.properties: a ZooKeeper-mode broker exits at its start (InconsistentClusterIdException).

The rule is kafka_ops.broker.environment.identity_verdict's, which the next-start plan follows too. Without an
answer from ZooKeeper nothing is said here; the plan's ``unknown`` names the comparison it could not make.
"""

from __future__ import annotations

from collections.abc import Iterator

from kafka_ops.broker import environment
from kafka_ops.checks.base import Finding, check
from kafka_ops.facts.context import Context
from kafka_ops.facts.model import HostFacts


@check(
    "ENV002",
    severity="critical",
    scope="host",
    title="ZooKeeper's /cluster/id is not meta.properties' cluster.id: a ZooKeeper-mode broker exits at start",
    incident="a broker restored or re-pointed at another ZooKeeper ensemble (a wrong chroot, staging's "
    "zookeeper.connect) exits at its start with InconsistentClusterIdException",
)
def run(ctx: Context, h: HostFacts) -> Iterator[Finding]:
    v = environment.identity_verdict(h)
    if v is None:
        return
    zk = h.options.zookeeper or {}
    yield run.finding(
        f"{v.reason}.",
        v.fix,
        details={
            "zookeeper": zk.get("connect"),
            "zookeeper_cluster_id": zk.get("cluster_id"),
            "meta_cluster_id": h.meta_cluster_id,
        },
    )


__all__ = ["run"]
