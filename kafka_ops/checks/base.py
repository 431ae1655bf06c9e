"""What a check is: a pure function from facts to findings, with a stable id, a severity and a scope.

Scopes decide what a check is given, so that the audit can stream a host of 100,000 segments partition by
partition with flat memory:

* ``partition``: ``run(ctx, PartitionFacts)`` for every partition of every log dir; a check with this scope
  alone must decide from that one partition's facts (no state kept in ``ctx.cache`` across partitions): the
  audit may run it in the worker process that gathered the facts (kafka_ops.facts.pool);
* ``logdir``: ``run(ctx, LogDirFacts)`` once per log dir, after its partitions (with their aggregates);
* ``host``: ``run(ctx, HostFacts)`` once.

A check with several scopes (``scope="partition,logdir"``) is called for each and tells them apart by the
subject's type.

``needs`` names inputs without which the check cannot decide (e.g. ``broker_user``); the audit skips the check
and says why instead of guessing. Standard library only: the same checks run on a bare broker host.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import field
from typing import Any

from kafka_ops.engine.compat import slotted
from kafka_ops.engine.shell import printable

SEVERITIES = ("info", "warning", "error", "critical")
SEVERITY_RANK = {s: i for i, s in enumerate(SEVERITIES)}
# --fail-on's values: a severity, or "never" (a report only: nothing fails the gate). The default is "error": a
# pre-deploy gate fails on a corrupt index (an error), not only on what is critical.
GATE_LEVELS = (*SEVERITIES, "never")
DEFAULT_FAIL_ON = "error"


@slotted
class Finding:
    check: str
    severity: str
    message: str
    remediation: str
    path: str | None = None
    topic: str | None = None
    partition: int | None = None
    segment: int | None = None  # base offset
    log_dir: str | None = None
    host: str | None = None
    details: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # the prose holds names the broker user chose: every control character is shown escaped here, once for
        # every output (a JSON report decoded by `jq -r` and pasted included): a name cannot start a line of a
        # remediation, so no line of one is the broker user's command, nor drive the terminal that shows it
        self.message = printable(self.message)
        self.remediation = printable(self.remediation)

    def to_dict(self) -> dict[str, Any]:
        return {
            "check": self.check,
            "severity": self.severity,
            "host": self.host,
            "log_dir": self.log_dir,
            "path": self.path,
            "topic": self.topic,
            "partition": self.partition,
            "segment": self.segment,
            "message": self.message,
            "remediation": self.remediation,
            "details": self.details,
        }


@slotted(frozen=True)
class CheckSpec:
    id: str
    severity: str  # default severity; a finding may say otherwise (e.g. IDX004 on a .timeindex)
    scope: str  # partition | logdir | host, or several separated by commas
    title: str
    incident: str  # the seed or field report it prevents
    needs: tuple[str, ...]
    run: Callable[..., Iterable[Finding]]

    @property
    def scopes(self) -> tuple[str, ...]:
        return tuple(self.scope.split(","))

    def finding(self, message: str, remediation: str, severity: str | None = None, **kw: Any) -> Finding:
        return Finding(self.id, severity or self.severity, message, remediation, **kw)


REGISTRY: dict[str, CheckSpec] = {}


def check(
    id: str, *, severity: str, scope: str, title: str, incident: str, needs: tuple[str, ...] = ()
) -> Callable[[Callable[..., Iterable[Finding]]], CheckSpec]:
    """Register a check. Ids are a public interface: never rename or reuse one."""
    if severity not in SEVERITIES or not set(scope.split(",")) <= {"partition", "logdir", "host"}:
        raise ValueError(f"{id}: bad severity or scope")

    def wrap(fn: Callable[..., Iterable[Finding]]) -> CheckSpec:
        spec = CheckSpec(id, severity, scope, title, incident, needs, fn)
        if id in REGISTRY:
            raise ValueError(f"duplicate check id {id}")
        REGISTRY[id] = spec
        return spec

    return wrap


def at_least(severity: str, threshold: str) -> bool:
    """Whether ``severity`` is at or above ``threshold`` (a --fail-on value: nothing is at or above "never")."""
    return threshold != "never" and SEVERITY_RANK[severity] >= SEVERITY_RANK[threshold]
