"""FLEET004: sudo to the broker user failed: permissions could not be probed as the broker sees them."""

from __future__ import annotations

from collections.abc import Iterator

from kafka_ops.checks.base import Finding, check
from kafka_ops.facts.context import Context
from kafka_ops.facts.model import HostFacts


@check(
    "FLEET004",
    severity="critical",
    scope="host",
    title="sudo to the broker user failed: permissions could not be probed as the broker sees them",
    incident="fleet audit: without running as the broker user, an unreadable .timeindex (the remount incident) looks readable to a root login",
)
def run(ctx: Context, h: HostFacts) -> Iterator[Finding]:
    # Only `kafka-ops fleet audit` gathers connection facts: a single-host audit never has them (it is running
    # on the host, so the host was reached).
    conn = h.inputs.get("fleet_connection")
    if conn is None or not isinstance(conn.value, dict) or conn.value.get("kind") != "sudo":
        return
    c = conn.value
    where = f"host {h.host} ({c.get('user') or ''}@{c.get('address')}:{c.get('port')})"
    err = c.get("error")
    bu = c.get("broker_user")
    yield run.finding(
        f"{where}: `sudo -n -u {bu}` failed ({err}): the collector must run as the broker user so that files are read as the broker reads them; the host was not audited.",
        "Allow the SSH user to run python3 as the broker user without a password, e.g. /etc/sudoers.d/kafka-ops: `deploy ALL=(kafka) NOPASSWD: /usr/bin/python3`, or log in as the broker user or root.",
        details={k: v for k, v in c.items() if v is not None},
    )
