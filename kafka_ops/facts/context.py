"""What every check and broker-model function is given besides its subject: the context of one host's audit.

A typing protocol only (no behaviour, standard library only): checks and the broker model sit below the audit
that makes the context (``kafka_ops.audit.AuditContext``), so they name what they read from it here.
``kafka_ops.broker.context.HostContext`` is the context of a host alone, for the broker model's own calls
outside a check; ``AuditContext`` is one with the audit's own state.
"""

from __future__ import annotations

from typing import Any, Protocol

from kafka_ops.facts.model import HostFacts


class Context(Protocol):
    @property
    def host(self) -> HostFacts:
        """The host's facts."""
        ...

    @property
    def now_ms(self) -> int:
        """The audit's time (``--now``, else the clock when the facts were gathered): the host's ``now_ms``."""
        ...

    # per-audit state that checks and the broker model share (one partition at a time; a worker process of the
    # audit has its own)
    cache: dict[str, Any]

    def recovery_seconds(self, nbytes: int, partitions: int = 1, largest: int | None = None) -> float:
        """broker.startup.recovery_seconds with this host's num.recovery.threads.per.data.dir."""
        ...
