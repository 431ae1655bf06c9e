"""How the fleet job reads a host's collector: isolated from the broker user's Python set-up, linear on long
lines, bounded by a wall-clock deadline per host (a stopped collector is that host's FLEET005, not a job that never
ends). The reader runs on real pipes; one test runs it over real SSH (tests/fleet/conftest.py's namespaces)."""

from __future__ import annotations

import os
import select
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kafka_ops.collector import ship
from kafka_ops.fleet.inventory import Target
from kafka_ops.fleet.ssh import HostFailure, collector_command, read_json_lines, stream_collector

PY = "/usr/bin/python3"


def _recv(p: subprocess.Popen[bytes]) -> Callable[[float], bytes]:
    fd = p.stdout.fileno()  # type: ignore[union-attr]

    def recv(wait: float) -> bytes:
        if not select.select([fd], [], [], wait)[0]:
            raise TimeoutError
        return os.read(fd, 1 << 16)

    return recv


def _writer(code: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE)


def test_a_100_mib_line_is_read_in_linear_time() -> None:
    p = _writer(
        "import sys; w = sys.stdout.buffer.write\n"
        'w(b\'{"kind": "partition", "x": "\' + b\'a\' * (100 << 20) + b\'"}\\n\')\n'
        'w(b\'{"kind": "report"}\\n\')\n'
    )
    t0 = time.monotonic()
    try:
        got = list(read_json_lines(_recv(p), time.monotonic() + 120, "big-1"))
    finally:
        p.kill()
        p.wait()
    took = time.monotonic() - t0
    assert [o["kind"] for o in got] == ["partition", "report"]
    assert len(got[0]["x"]) == 100 << 20
    assert took < 30, took  # line by line through paramiko's readline: no result in 200 s


def test_a_stopped_collector_ends_at_the_hosts_deadline_naming_the_host() -> None:
    p = _writer(
        'import os, signal, sys\nprint(\'{"kind": "partition"}\', flush=True)\nos.kill(os.getpid(), signal.SIGSTOP)\n'
    )
    t0 = time.monotonic()
    got: list[dict[str, Any]] = []
    try:
        with pytest.raises(HostFailure) as e:
            for obj in read_json_lines(_recv(p), time.monotonic() + 2, "stopped-1"):
                got.append(obj)
    finally:
        p.kill()
        p.wait()
    assert 1.9 < time.monotonic() - t0 < 10
    assert got == [{"kind": "partition"}]
    assert e.value.kind == "collector"
    assert e.value.error == "stopped-1: the collector did not finish within the host timeout"


def test_a_line_over_the_cap_is_one_line_naming_the_host() -> None:
    p = _writer("import sys\nsys.stdout.buffer.write(b'{' + b' ' * (3 << 20))\n")
    try:
        with pytest.raises(HostFailure) as e:
            list(read_json_lines(_recv(p), time.monotonic() + 60, "huge-1", max_line=1 << 20))
    finally:
        p.kill()
        p.wait()
    assert e.value.error == "huge-1: a line of the collector's output is over 1 MiB: not read"


@pytest.mark.skipif(not os.path.exists(PY), reason="needs /usr/bin/python3")
def test_the_collector_runs_isolated_from_the_users_site_and_python_variables(tmp_path: Path) -> None:
    """The command the fleet runs on a host (here without SSH or sudo, in a shell as sshd runs it): a
    usercustomize.py in the user's site dir and a sitecustomize.py on PYTHONPATH are not run."""
    home = tmp_path / "home"
    ver = subprocess.run(
        [PY, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    site = home / ".local" / "lib" / f"python{ver}" / "site-packages"
    site.mkdir(parents=True)
    evil = tmp_path / "evil"
    evil.mkdir()
    planted = "import pathlib; pathlib.Path({!r}).write_text('ran')\n"
    (site / "usercustomize.py").write_text(planted.format(str(tmp_path / "usercustomize-ran")))
    (evil / "sitecustomize.py").write_text(planted.format(str(tmp_path / "sitecustomize-ran")))
    (tmp_path / "startup.py").write_text(planted.format(str(tmp_path / "startup-ran")))
    env = {"PATH": f"{Path(PY).parent}:/usr/bin:/bin", "HOME": str(home), "PYTHONPATH": str(evil),
           "PYTHONSTARTUP": str(tmp_path / "startup.py"), "PYTHONINSPECT": "1"}  # fmt: skip
    cmd = collector_command(
        Target("h1", log_dirs=(str(tmp_path / "none"),), address="h1"), ["--log-dir", "/nonexistent"]
    )
    assert cmd.startswith("python3 -I -s - stream ")
    # a control: the same python3 runs both planted files when not isolated
    subprocess.run(["sh", "-c", "python3 -c pass"], env=env, cwd=tmp_path, check=True)
    assert (tmp_path / "usercustomize-ran").exists() or (tmp_path / "sitecustomize-ran").exists()
    for f in ("usercustomize-ran", "sitecustomize-ran"):
        (tmp_path / f).unlink(missing_ok=True)
    r = subprocess.run(
        ["sh", "-c", cmd],
        env=env,
        cwd=tmp_path,
        input=ship.build(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "kafka-ops-collector" in r.stderr or r.stdout  # the collector itself ran
    assert sorted(p.name for p in tmp_path.glob("*-ran")) == []


def test_over_ssh_a_stopped_collector_is_the_hosts_fleet005_within_its_timeout(ssh_lab: Any) -> None:
    t = Target("h2", address=ssh_lab.addresses["h2"], user="root", key_file=str(ssh_lab.key))
    stop = 'import os, signal\nprint(\'{"kind": "partition"}\', flush=True)\nos.kill(os.getpid(), signal.SIGSTOP)\n'
    t0 = time.monotonic()
    got: list[dict[str, Any]] = []
    with pytest.raises(HostFailure) as e:
        for obj in stream_collector(t, stop, [], str(ssh_lab.known_hosts), 5.0, host_timeout=4):
            got.append(obj)
    assert time.monotonic() - t0 < 15
    assert got == [{"kind": "partition"}]
    assert (e.value.kind, e.value.error) == (
        "collector",
        "h2: the collector did not finish within the host timeout",
    )
    big = 'import sys\nw = sys.stdout.buffer.write\nw(b\'{"kind": "partition", "x": "\' + b\'a\' * (32 << 20) + b\'"}\\n\')\nw(b\'{"kind": "report"}\\n\')\n'
    t0 = time.monotonic()
    got = list(stream_collector(t, big, [], str(ssh_lab.known_hosts), 5.0))
    assert [o["kind"] for o in got] == ["partition", "report"] and len(got[0]["x"]) == 32 << 20
    assert time.monotonic() - t0 < 60


def test_the_fleet_tasks_host_timeout_makes_a_stopped_collector_its_fleet005(ssh_lab: Any) -> None:
    """audit_remote, as a Spark task runs it, with the --host-timeout the CLI puts in the job's settings."""
    import json

    from kafka_ops.fleet.task import audit_remote

    t = Target("h3", address=ssh_lab.addresses["h3"], user="root", key_file=str(ssh_lab.key))
    stop = "import os, signal\nos.kill(os.getpid(), signal.SIGSTOP)\n"
    s = {"now_ms": 0, "known_hosts": str(ssh_lab.known_hosts), "connect_timeout": 5, "host_timeout": 3}
    t0 = time.monotonic()
    records = list(audit_remote(t, s, stop))
    assert time.monotonic() - t0 < 15
    findings = [json.loads(r[2]) for r in records if r[0] == "finding"]
    assert [f["check"] for f in findings] == ["FLEET005"]
    assert "h3: the collector did not finish within the host timeout" in findings[0]["message"]
