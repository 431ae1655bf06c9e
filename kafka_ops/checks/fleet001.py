"""FLEET001: Host in the fleet could not be reached over SSH: it was not audited."""

from __future__ import annotations

from collections.abc import Iterator

from kafka_ops.checks.base import Finding, check
from kafka_ops.facts.context import Context
from kafka_ops.facts.model import HostFacts


@check(
    "FLEET001",
    severity="critical",
    scope="host",
    title="Host in the fleet could not be reached over SSH: it was not audited",
    incident="fleet audit: a broker host down, firewalled or misnamed in the inventory goes unchecked while the rest of the fleet passes",
)
def run(ctx: Context, h: HostFacts) -> Iterator[Finding]:
    # Only `kafka-ops fleet audit` gathers connection facts: a single-host audit never has them (it is running
    # on the host, so the host was reached).
    conn = h.inputs.get("fleet_connection")
    if conn is None or not isinstance(conn.value, dict) or conn.value.get("kind") != "unreachable":
        return
    c = conn.value
    where = f"host {h.host} ({c.get('user') or ''}@{c.get('address')}:{c.get('port')})"
    err = c.get("error")
    yield run.finding(
        f"{where} could not be reached over SSH ({err}): nothing on it was audited, so the fleet gate cannot say it is safe to deploy.",
        "Check the inventory (ansible_host, ansible_port), that the host is up and that sshd listens: `ssh -p PORT USER@HOST true`. Re-run `kafka-ops fleet audit` once it answers; the host's own checks run then.",
        details={k: v for k, v in c.items() if v is not None},
    )
