"""The context every check is given besides its subject: the host's facts, the state checks share and the audit's
own settings. Standard library only (shipped)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from kafka_ops.broker.context import HostContext
from kafka_ops.checks.base import CheckSpec
from kafka_ops.facts.model import PartitionFacts


@dataclass
class AuditContext(HostContext):
    """What every check is given besides its subject (a ``facts.context.Context``): host facts, the state checks
    share (``cache``) and the audit's own settings."""

    partition_checks: list[CheckSpec] = field(default_factory=list)
    on_partition: Callable[[PartitionFacts], None] | None = None
