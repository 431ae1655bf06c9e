"""FLEET005: The collector could not run or its input was rejected on the host (exit 2, no python3, bad output)."""

from __future__ import annotations

from collections.abc import Iterator

from kafka_ops.checks.base import Finding, check
from kafka_ops.facts.context import Context
from kafka_ops.facts.model import HostFacts


@check(
    "FLEET005",
    severity="critical",
    scope="host",
    title="The collector could not run or its input was rejected on the host (exit 2, no python3, bad output)",
    incident="fleet audit: an audit that silently checks nothing: a missing python3, a log dir that is not there, a bad option",
)
def run(ctx: Context, h: HostFacts) -> Iterator[Finding]:
    # Only `kafka-ops fleet audit` gathers connection facts: a single-host audit never has them (it is running
    # on the host, so the host was reached).
    conn = h.inputs.get("fleet_connection")
    if conn is None or not isinstance(conn.value, dict) or conn.value.get("kind") != "collector":
        return
    c = conn.value
    where = f"host {h.host} ({c.get('user') or ''}@{c.get('address')}:{c.get('port')})"
    err = c.get("error")
    yield run.finding(
        f"{where}: the kafka-ops collector failed ({err}): the host was not audited.",
        "Fix what the message names: install python3 >= 3.9 on the host, or correct the log dirs / server.properties path in the inventory (kafka_log_dirs, kafka_server_properties). Run it by hand to see: `kafka-ops fleet audit --inventory INV --limit HOST`.",
        details={k: v for k, v in c.items() if v is not None},
    )
