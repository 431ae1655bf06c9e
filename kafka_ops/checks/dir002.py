"""DIR002: meta.properties missing, unreadable, invalid or disagreeing across the log dirs.

The rule (what the broker does with each log dir's meta.properties at start, with Kafka's sources) is
kafka_ops.broker.meta's, which the next-start plan follows too: this check reports its verdicts.
"""

from __future__ import annotations

from collections.abc import Iterator

from kafka_ops.broker.meta import broker_mode, metadata_log_dir, metadata_log_dir_of, verdicts
from kafka_ops.checks.base import Finding, check
from kafka_ops.facts.context import Context
from kafka_ops.facts.model import HostFacts


@check(
    "DIR002",
    severity="critical",
    scope="host",
    title="meta.properties missing, unreadable or disagreeing across log dirs (cluster.id, node.id, directory.id)",
    incident="a log dir restored from another broker or cluster, or a disk swapped between brokers: the broker "
    "refuses to start, or silently adopts foreign data",
)
def run(ctx: Context, h: HostFacts) -> Iterator[Finding]:
    for v in verdicts(h):
        yield run.finding(
            v.message, v.fix, severity=v.severity, path=v.path, log_dir=v.log_dir, details=dict(v.details)
        )


# where other modules found them before kafka_ops.broker.meta held the rule
__all__ = ["broker_mode", "metadata_log_dir", "metadata_log_dir_of", "run"]
