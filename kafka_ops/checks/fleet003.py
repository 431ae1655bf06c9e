"""FLEET003: SSH authentication failed: no key or agent identity was accepted."""

from __future__ import annotations

from collections.abc import Iterator

from kafka_ops.checks.base import Finding, check
from kafka_ops.facts.context import Context
from kafka_ops.facts.model import HostFacts


@check(
    "FLEET003",
    severity="critical",
    scope="host",
    title="SSH authentication failed: no key or agent identity was accepted",
    incident="fleet audit: a rotated deploy key or a missing authorized_keys entry leaves a host unaudited",
)
def run(ctx: Context, h: HostFacts) -> Iterator[Finding]:
    # Only `kafka-ops fleet audit` gathers connection facts: a single-host audit never has them (it is running
    # on the host, so the host was reached).
    conn = h.inputs.get("fleet_connection")
    if conn is None or not isinstance(conn.value, dict) or conn.value.get("kind") != "auth":
        return
    c = conn.value
    where = f"host {h.host} ({c.get('user') or ''}@{c.get('address')}:{c.get('port')})"
    err = c.get("error")
    yield run.finding(
        f"{where} refused every key offered ({err}): the host was not audited.",
        "Give the key the host accepts (ansible_ssh_private_key_file, or load it into ssh-agent) or add the public key to ~USER/.ssh/authorized_keys on the host.",
        details={k: v for k, v in c.items() if v is not None},
    )
