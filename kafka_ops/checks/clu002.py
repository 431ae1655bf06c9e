"""CLU002: the cluster already has under-replicated or offline partitions."""

from __future__ import annotations

from collections.abc import Iterator

from kafka_ops.broker.replication import Unhealthy, unhealthy
from kafka_ops.checks.base import Finding, check
from kafka_ops.facts.context import Context
from kafka_ops.facts.model import HostFacts

SHOWN = 10


@check(
    "CLU002",
    severity="error",
    scope="host",
    title="The cluster already has under-replicated or offline partitions",
    incident="a rolling restart goes on while another broker is down or lagging: the next stop takes away "
    "replicas the cluster is already short of",
    needs=("cluster",),
)
def run(ctx: Context, h: HostFacts) -> Iterator[Finding]:
    facts = h.cluster
    if facts is None or h.cluster_mismatch:
        return
    bad = unhealthy(facts)
    if not bad:
        return
    offline = [u for u in bad if u.kind == "offline"]
    under = [u for u in bad if u.kind == "under_replicated"]
    behind = sorted({b for u in under for b in u.missing})
    at = facts.get("bootstrap")
    parts = []
    if offline:
        parts.append(f"{len(offline)} offline (no leader)")
    if under:
        parts.append(f"{len(under)} under-replicated (brokers {behind} out of sync)")
    names = ", ".join(u.says() for u in (offline + under)[:SHOWN]) + (
        f", and {len(bad) - SHOWN} more" if len(bad) > SHOWN else ""
    )
    yield run.finding(
        f"The cluster at {at} already has {' and '.join(parts)} partition(s): {names}.",
        "Do not roll now: bring the brokers out of sync back (is one stopped, still recovering, or failing? "
        "systemctl status kafka; its server.log), then wait until kafka-topics.sh --describe "
        "--under-replicated-partitions and --unavailable-partitions print nothing.",
        severity="critical" if offline else None,
        details={
            "offline": [_row(u) for u in offline],
            "under_replicated": [_row(u) for u in under],
            "out_of_sync_brokers": behind,
        },
    )


def _row(u: Unhealthy) -> dict[str, object]:
    return {
        "topic": u.topic,
        "partition": u.partition,
        "leader": u.leader,
        "replicas": u.replicas,
        "isr": u.isr,
    }
