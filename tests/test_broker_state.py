"""The broker's state is read from the audited log dirs themselves: who holds each dir's .lock (/proc/locks), who
has its files open (/proc/<pid>/fd), never "a kafka.Kafka process runs somewhere on this host".

Real processes: a child takes the POSIX lock Kafka takes (FileChannel.tryLock is fcntl F_SETLK on Linux), another
runs with kafka.Kafka in its command line and touches nothing of the audited dirs."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from kafka_ops.facts.holders import decide, lock_use
from kafka_ops.simulator.host import SimulatedHost

Cli = Callable[..., tuple[int, str, str]]

# holds what argv[1] names, prints 'ready', waits for stdin to close; argv[2] is what it locks with
_HOLDER = """
import fcntl, sys
f = open(sys.argv[1], 'a+')
if sys.argv[2] == 'fcntl':
    fcntl.lockf(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
print('ready', flush=True)
sys.stdin.read()
"""


@contextmanager
def process(path: str, how: str, *argv: str) -> Iterator[subprocess.Popen[str]]:
    proc = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, path, how, *argv],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        yield proc
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(timeout=30)


@pytest.fixture
def host(healthy_host: SimulatedHost, tmp_path: Path) -> SimulatedHost:
    """A copy of the healthy host whose first log dir has a .lock left by its last (clean) stop."""
    root = tmp_path / "h"
    shutil.copytree(healthy_host.root, root, symlinks=True)
    copy = dataclasses.replace(
        healthy_host,
        root=str(root),
        log_dirs=[d.replace(healthy_host.root, str(root), 1) for d in healthy_host.log_dirs],
    )
    Path(copy.log_dirs[0], ".lock").touch()
    return copy


def audit(cli: Cli, host: SimulatedHost, *extra: str) -> tuple[int, dict, str]:  # type: ignore[type-arg]
    code, out, err = cli(
        "audit", "--log-dir", host.log_dirs[0], "--expect-mount", f"{host.log_dirs[0]}=/", "--kafka-version",
        "3.7.0", "-f", "json", "--fail-on", "never", *extra,
    )  # fmt: skip
    return code, json.loads(out), err


def test_a_process_holding_the_lock_as_kafka_does_is_the_running_broker(tmp_path: Path) -> None:
    lock = tmp_path / ".lock"
    with process(str(lock), "fcntl") as p:
        use = lock_use(str(tmp_path))
        state, why, _ = decide([str(tmp_path)])
    assert use.lock_held and use.lock_pids == [p.pid]
    assert state == "running"
    assert f"pid {p.pid} (python" in why and f"holds {tmp_path}/.lock (/proc/locks)" in why


def test_a_stale_lock_nobody_holds_is_a_stopped_broker(tmp_path: Path) -> None:
    (tmp_path / ".lock").touch()
    state, why, uses = decide([str(tmp_path)])
    assert state == "stopped" and uses[0].lock_exists and uses[0].lock_held is False
    assert f"nobody holds {tmp_path}/.lock" in why


def test_an_unrelated_kafka_process_does_not_make_the_audited_broker_running(tmp_path: Path) -> None:
    audited, other = tmp_path / "audited", tmp_path / "other"
    audited.mkdir()
    other.mkdir()
    (audited / ".lock").touch()
    with process(str(other / ".lock"), "fcntl", "kafka.Kafka", "/etc/kafka/other.properties") as p:
        state, why, _ = decide([str(audited)])
    assert state == "stopped", why
    assert str(p.pid) in why.split("kafka.Kafka pid(s)")[1] and why.endswith("use other dirs")


def test_a_process_with_files_of_the_dir_open_but_no_lock_is_running(tmp_path: Path) -> None:
    (tmp_path / "t-0").mkdir()
    with process(str(tmp_path / "t-0" / "00000000000000000000.log"), "open") as p:
        state, why, uses = decide([str(tmp_path)])
    assert state == "running" and uses[0].open_pids == [p.pid]
    assert f"pid {p.pid}" in why and f"has files of {tmp_path} open" in why


def test_audit_with_another_broker_on_the_host_runs_shut001_and_says_why_stopped(
    cli: Cli, host: SimulatedHost, tmp_path: Path
) -> None:
    os.remove(Path(host.log_dirs[0], ".kafka_cleanshutdown"))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    with process(str(elsewhere / ".lock"), "fcntl", "kafka.Kafka", "/etc/kafka/b2.properties"):
        code, report, err = audit(cli, host)
    assert code == 0, err
    assert report["broker_state"] == "stopped"
    assert "nobody holds" in report["inputs"]["broker_state"]["source"]
    assert report["log_dirs"][0]["lock_held"] is False and report["log_dirs"][0]["lock_pids"] == []
    assert "SHUT001" in {f["check"] for f in report["findings"]}
    assert "broker stopped: nobody holds" in err


def test_audit_while_a_process_holds_the_lock_says_which_pid(cli: Cli, host: SimulatedHost) -> None:
    with process(str(Path(host.log_dirs[0], ".lock")), "fcntl") as p:
        code, report, err = audit(cli, host)
    assert code == 0, err
    assert report["broker_state"] == "running"
    assert f"pid {p.pid}" in report["inputs"]["broker_state"]["source"]
    assert report["log_dirs"][0]["lock_held"] is True and report["log_dirs"][0]["lock_pids"] == [p.pid]
    assert f"broker running: pid {p.pid}" in err
