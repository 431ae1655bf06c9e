"""The context of a host alone (a ``facts.context.Context``): what the broker model gives its own functions
when it calls them outside a check (``forecast.broker_timestamp`` asks ``startup.next_start``), and what the
audit's context (``kafka_ops.audit.AuditContext``) builds on."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kafka_ops.broker.startup import recovery_seconds
from kafka_ops.facts.model import HostFacts


@dataclass
class HostContext:
    host: HostFacts
    cache: dict[str, Any] = field(
        default_factory=dict
    )  # per-audit state checks share (one partition at a time)

    @property
    def now_ms(self) -> int:
        return self.host.now_ms

    def recovery_seconds(self, nbytes: int, partitions: int = 1, largest: int | None = None) -> float:
        """broker.startup.recovery_seconds with this host's num.recovery.threads.per.data.dir."""
        threads = self.host.configs.server_int("num.recovery.threads.per.data.dir", 1)
        return recovery_seconds(nbytes, partitions, threads, nbytes if largest is None else largest)
