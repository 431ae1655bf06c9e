"""Run the stdlib collector on a remote host over SSH (paramiko) and stream its JSON lines back.

No agent is installed and nothing is written on the host: the collector script (``kafka_ops.collector.ship.build``) is the
stdin of ``python3 - stream ...``, run through ``sudo -n -u <broker user>`` when the SSH user is not the broker user,
so that files are opened as the broker opens them. Host keys are checked against known_hosts (paramiko's
``RejectPolicy``: an unknown or changed key is refused); authentication uses the inventory's key file, then the
agent and the default keys. Every way this can fail is a :class:`HostFailure` whose ``kind`` names the FLEET check.
"""

from __future__ import annotations

import json
import logging
import os
import shlex
from collections.abc import Iterator
from typing import Any

from kafka_ops.fleet.inventory import Target

KINDS = {
    "unreachable": "FLEET001",
    "host_key": "FLEET002",
    "auth": "FLEET003",
    "sudo": "FLEET004",
    "collector": "FLEET005",
}


# paramiko logs a traceback for every failed handshake; the failure is reported as a FLEET finding instead
logging.getLogger("paramiko").addHandler(logging.NullHandler())


class HostFailure(Exception):
    def __init__(self, kind: str, error: str) -> None:
        super().__init__(f"{kind}: {error}")
        self.kind = kind
        self.error = error


def collector_command(t: Target, args: list[str]) -> str:
    cmd = ["python3", "-", "stream", *args]
    if t.broker_user and t.broker_user != t.user:
        cmd = ["sudo", "-n", "-u", t.broker_user, "--", *cmd]
    return shlex.join(cmd)


def connect(t: Target, known_hosts: str | None, timeout: float, known_hosts_shown: str | None = None) -> Any:
    """``known_hosts``: the file to read here (an executor's copy of the driver's); ``known_hosts_shown``: the
    driver's path, the one messages name."""
    import paramiko

    client = paramiko.SSHClient()
    path = os.path.expanduser(known_hosts or "~/.ssh/known_hosts")
    kh = known_hosts_shown or path
    try:
        client.load_host_keys(path)  # a missing file is an error: read as empty, every host would be FLEET002
    except (OSError, paramiko.SSHException) as exc:
        raise HostFailure("host_key", f"cannot read known_hosts {kh}: {exc}") from exc
    client.set_missing_host_key_policy(paramiko.RejectPolicy())
    try:
        client.connect(
            t.address or "localhost", port=t.port, username=t.user, key_filename=t.key_file, timeout=timeout,
            banner_timeout=timeout, auth_timeout=timeout, allow_agent=True, look_for_keys=t.key_file is None,
        )  # fmt: skip
    except paramiko.ssh_exception.NoValidConnectionsError as exc:  # refused / unreachable on every address
        why = "; ".join(f"{a[0]}:{a[1]}: {(e.strerror or str(e)).lower()}" for a, e in exc.errors.items())
        raise HostFailure("unreachable", why or str(exc)) from exc
    except paramiko.BadHostKeyException as exc:
        raise HostFailure(
            "host_key",
            f"host key mismatch: got {exc.key.get_name()} {exc.key.fingerprint}, known_hosts has "
            f"{exc.expected_key.fingerprint}",
        ) from exc
    except paramiko.AuthenticationException as exc:
        raise HostFailure("auth", f"authentication failed for user {t.user}: {exc}") from exc
    except paramiko.SSHException as exc:
        if "not found in known_hosts" in str(exc):
            raise HostFailure("host_key", f"host key not in known_hosts {kh}") from exc
        raise HostFailure("unreachable", f"SSH handshake failed: {exc}") from exc
    except (TimeoutError, OSError) as exc:
        raise HostFailure("unreachable", str(exc) or type(exc).__name__) from exc
    return client


def stream_collector(
    t: Target, script: str, args: list[str], known_hosts: str | None = None, timeout: float = 10.0,
    known_hosts_shown: str | None = None,
) -> Iterator[dict[str, Any]]:  # fmt: skip
    """Yield the collector's JSON lines (``partition`` rows, then the ``report``) as they arrive."""
    client = connect(t, known_hosts, timeout, known_hosts_shown)
    try:
        stdin, stdout, stderr = client.exec_command(collector_command(t, args))
        stdin.write(script)
        stdin.flush()
        stdin.channel.shutdown_write()
        got_report = False
        for line in stdout:
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except ValueError as exc:
                raise HostFailure(
                    "collector", f"unexpected output from the collector: {line[:120]!r}"
                ) from exc
            got_report = got_report or obj.get("kind") == "report"
            yield obj
        code = stdout.channel.recv_exit_status()
        err = stderr.read().decode("utf-8", "replace").strip()
        last = err.splitlines()[-1] if err else ""
        if got_report and code in (0, 1):
            return
        sudo = [x for x in err.splitlines() if x.startswith("sudo:")]
        if sudo:  # sudo's own errors (its first line says why: unknown user, a password is required, ...)
            raise HostFailure("sudo", "; ".join(sudo[:2]))
        raise HostFailure("collector", f"exit {code}: {last or 'no output'}")
    finally:
        client.close()
