"""Run the stdlib collector on a remote host over SSH (paramiko) and stream its JSON lines back.

No agent is installed and nothing is written on the host: the collector script (``kafka_ops.collector.ship.build``) is the
stdin of ``python3 -I -s - stream ...`` (isolated: no user site, no PYTHON* variables, so nothing the broker
user planted in its home or environment runs in the collector and writes its output), run through ``sudo -n -u <broker user>`` when the SSH user is not the broker user,
so that files are opened as the broker opens them. Host keys are checked against known_hosts (paramiko's
``RejectPolicy``: an unknown or changed key is refused); authentication uses the inventory's key file, then the
agent and the default keys. Every way this can fail is a :class:`HostFailure` whose ``kind`` names the FLEET check.
"""

from __future__ import annotations

import json
import logging
import os
import shlex
import time
from collections.abc import Callable, Iterator
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


# the wall-clock time one host's collector may take, from the connection to its last line (--host-timeout)
HOST_TIMEOUT = 1800.0
# the longest line read from a collector: a report line of a very large host is tens of MiB
MAX_LINE = 512 << 20
_CHUNK = 1 << 16


class HostFailure(Exception):
    def __init__(self, kind: str, error: str) -> None:
        super().__init__(f"{kind}: {error}")
        self.kind = kind
        self.error = error


def collector_command(t: Target, args: list[str]) -> str:
    cmd = ["python3", "-I", "-s", "-", "stream", *args]
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


def read_json_lines(
    recv: Callable[[float], bytes], deadline: float, host: str, max_line: int = MAX_LINE
) -> Iterator[dict[str, Any]]:
    """The collector's JSON lines from ``recv(timeout)`` (bytes, b"" at the end, TimeoutError when nothing came
    within ``timeout``), each as it completes, until the end or ``deadline`` (time.monotonic()): linear in the
    output (each byte is searched once for its line end, a line is taken off the front of one buffer), a line
    longer than ``max_line`` and a collector still running at the deadline are a HostFailure naming the host."""
    buf = bytearray()
    scanned = 0  # buf[:scanned] holds no line end
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise HostFailure("collector", f"{host}: the collector did not finish within the host timeout")
        try:
            chunk = recv(min(left, 60.0))
        except TimeoutError:
            continue
        if chunk:
            buf += chunk
        while True:
            end = buf.find(b"\n", scanned)
            if end < 0:
                scanned = len(buf)
                break
            line = bytes(buf[:end])
            del buf[: end + 1]  # a bytearray drops its front without copying the rest
            scanned = 0
            if line.strip():
                yield _json_line(line, host)
        if len(buf) > max_line:
            raise HostFailure(
                "collector",
                f"{host}: a line of the collector's output is over {max_line >> 20} MiB: not read",
            )
        if not chunk:
            if buf.strip():
                yield _json_line(bytes(buf), host)
            return


def _json_line(line: bytes, host: str) -> dict[str, Any]:
    try:
        obj = json.loads(line)
    except ValueError as exc:
        raise HostFailure(
            "collector", f"unexpected output from the collector: {line[:120].decode('utf-8', 'replace')!r}"
        ) from exc
    if not isinstance(obj, dict):
        raise HostFailure("collector", f"unexpected output from the collector: {line[:120]!r}")
    return obj


def stream_collector(
    t: Target, script: str, args: list[str], known_hosts: str | None = None, timeout: float = 10.0,
    known_hosts_shown: str | None = None, host_timeout: float = HOST_TIMEOUT,
) -> Iterator[dict[str, Any]]:  # fmt: skip
    """Yield the collector's JSON lines (``partition`` rows, then the ``report``) as they arrive, for up to
    ``host_timeout`` seconds of wall-clock time from the connection (a stopped or hung collector is a FLEET005
    naming the host, not a task that never ends)."""
    deadline = time.monotonic() + host_timeout
    client = connect(t, known_hosts, timeout, known_hosts_shown)
    try:
        stdin, stdout, _stderr = client.exec_command(collector_command(t, args))
        stdin.write(script)
        stdin.flush()
        stdin.channel.shutdown_write()
        channel = stdout.channel

        def recv(wait: float) -> bytes:
            channel.settimeout(wait)
            return channel.recv(_CHUNK)  # type: ignore[no-any-return]

        got_report = False
        for obj in read_json_lines(recv, deadline, t.name):
            got_report = got_report or obj.get("kind") == "report"
            yield obj
        if not channel.status_event.wait(max(0.1, deadline - time.monotonic())):
            raise HostFailure("collector", f"{t.name}: the collector did not finish within the host timeout")
        code = channel.recv_exit_status()
        err = _read_stderr(channel, deadline)
        last = err.splitlines()[-1] if err else ""
        if got_report and code in (0, 1):
            return
        sudo = [x for x in err.splitlines() if x.startswith("sudo:")]
        if sudo:  # sudo's own errors (its first line says why: unknown user, a password is required, ...)
            raise HostFailure("sudo", "; ".join(sudo[:2]))
        raise HostFailure("collector", f"exit {code}: {last or 'no output'}")
    finally:
        client.close()


def _read_stderr(channel: Any, deadline: float, limit: int = 1 << 20) -> str:
    """The collector's stderr, up to ``limit`` bytes (its errors are one line), within the deadline."""
    out = bytearray()
    while len(out) < limit and time.monotonic() < deadline:
        channel.settimeout(max(0.1, min(5.0, deadline - time.monotonic())))
        try:
            chunk = channel.recv_stderr(_CHUNK)
        except TimeoutError:
            continue
        if not chunk:
            break
        out += chunk
    return out.decode("utf-8", "replace").strip()
