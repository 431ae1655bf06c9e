"""FLEET002: Host key not in known_hosts or different from it: the connection was refused."""

from __future__ import annotations

from collections.abc import Iterator

from kafka_ops.checks.base import Finding, check
from kafka_ops.facts.context import Context
from kafka_ops.facts.model import HostFacts


@check(
    "FLEET002",
    severity="critical",
    scope="host",
    title="Host key not in known_hosts or different from it: the connection was refused",
    incident="fleet audit: a reinstalled or impersonated host: paramiko refuses an unknown or changed host key rather than sending credentials to it",
)
def run(ctx: Context, h: HostFacts) -> Iterator[Finding]:
    # Only `kafka-ops fleet audit` gathers connection facts: a single-host audit never has them (it is running
    # on the host, so the host was reached).
    conn = h.inputs.get("fleet_connection")
    if conn is None or not isinstance(conn.value, dict) or conn.value.get("kind") != "host_key":
        return
    c = conn.value
    where = f"host {h.host} ({c.get('user') or ''}@{c.get('address')}:{c.get('port')})"
    err = c.get("error")
    kh = c.get("known_hosts")
    yield run.finding(
        f"{where} presented a host key that known_hosts {kh} does not vouch for ({err}): the connection was refused before authenticating, and the host was not audited.",
        "If the host was reinstalled, verify its new key out of band (e.g. `ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub` on its console) and replace its line: `ssh-keygen -R HOST; ssh-keyscan -p PORT HOST >> ~/.ssh/known_hosts`. Otherwise treat it as an attack.",
        details={k: v for k, v in c.items() if v is not None},
    )
