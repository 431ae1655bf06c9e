"""The rolling restart's two waits on a wall-clock deadline, run by ansible-playbook on local hosts
(tests/test_roll_ops.py's Lab: the role's own restart.yml, with only systemd's actions and the audit replaced,
and a stand-in `systemctl show` answering from a file the test writes):

- the stop wait (tasks/wait_stop.yml): it ends when systemd says the process has exited, else at
  kafka_rolling_restart_stop_wait s after the stop, within a poll of it, and then says what is true: the broker is
  still stopping (the unit deactivating), not "IS STOPPED";
- the start wait (tasks/wait_start.yml): every collector call's wait is bounded by the time left less what the
  calls cost, so that a slow host (SSH, a loaded broker) does not carry the wait a call past its deadline.
"""

from __future__ import annotations

import itertools
import json
import re
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.test_roll_ops import Lab, _out, _ran

STOP_LABEL = re.compile(r"\(item=(\d+) s of (\d+) s: \S+ is (\w+)/(\S+), MainPID (\d+)\)")


def _unit(lab: Lab, name: str, active: str, sub: str, pid: int) -> None:
    """The host's `systemctl show` during the stop: ``active``/``sub`` with MainPID ``pid``."""
    d = lab.tmp / name
    (d / "kafka.service.show").write_text(
        f"MainPID={pid}\nActiveState={active}\nSubState={sub}\nResult=success\nTimeoutStopUSec=20min\n"
        "ExecMainCode=0\nExecMainStatus=0\n"
    )


@pytest.mark.parametrize(
    ("active", "sub", "said"),
    [("deactivating", "stop-sigterm", "stopping"),  # SIGTERM sent, the broker still shutting down
     ("active", "running", "running, not stopping yet")],  # systemd has not begun the stop job
)  # fmt: skip
def test_a_broker_still_stopping_at_the_deadline_is_reported_stopping_not_stopped(
    tmp_path: Path, active: str, sub: str, said: str
) -> None:
    lab = Lab(tmp_path, ["brk-1", "brk-2"], restart="stubbed")
    _unit(lab, "brk-1", active, sub, 4321)
    t0 = time.monotonic()
    r = lab.run("-e", "kafka_rolling_restart_stop_wait=4", "-e", "kafka_rolling_restart_poll=1")
    out = _out(r)
    assert r.returncode != 0, out[-4000:]
    assert (
        f"brk-1 (node 1) is still {said} after 4 s ({tmp_path / 'brk-1' / 'kafka.service'} is {active}/{sub},"
        " MainPID 4321): its stop goes on, do not start it by hand; the roll stopped with it." in out
    ), out[-4000:]
    assert "IS STOPPED" not in out and "UNCLEAN STOP" not in out
    assert "systemd kills it at TimeoutStopUSec=20min" in out
    # nothing after the stop ran on it, and brk-2 was never stopped
    assert _ran(out) == ["Preflight before the stop", "Stop the broker"]
    # a line per question to systemd (a poll, 1 s, apart and what a question costs), the last one at the
    # deadline or one question past it, never more (seconds are rounded: + 1)
    lines = STOP_LABEL.findall(out)
    assert len(lines) >= 2 and all(x[2:] == (active, sub, "4321") for x in lines)
    at = [int(x[0]) for x in lines]
    assert 4 <= at[-1] <= 4 + max(b - a for a, b in itertools.pairwise(at)) + 1, at
    assert at[-2] < 4 + 1, at
    assert time.monotonic() - t0 < 120


def test_the_stop_wait_ends_when_systemd_says_the_process_exited(tmp_path: Path) -> None:
    lab = Lab(tmp_path, ["brk-1"], restart="stubbed")
    _unit(lab, "brk-1", "deactivating", "stop-sigterm", 4321)

    # the broker's clean shutdown ends a few questions into the wait (the file is swapped whole: no torn read)
    def exits() -> None:
        time.sleep(9)  # the play's start and the preflight stand-in come first
        tmp = tmp_path / "brk-1" / "show.tmp"
        tmp.write_text(
            "MainPID=0\nActiveState=inactive\nSubState=dead\nResult=success\nTimeoutStopUSec=20min\n"
            "ExecMainCode=1\nExecMainStatus=143\n"
        )
        tmp.replace(tmp_path / "brk-1" / "kafka.service.show")

    t = threading.Thread(target=exits)
    t.start()
    r = lab.run("-e", "kafka_rolling_restart_stop_wait=600", "-e", "kafka_rolling_restart_poll=1")
    t.join()
    out = _out(r)
    assert r.returncode == 0, out[-4000:]
    lines = STOP_LABEL.findall(out)
    assert lines[-1][2:] == ("inactive", "dead", "0"), lines
    assert int(lines[-1][0]) < 60  # at once, not at the 600 s deadline
    assert "Start the broker" in _ran(out) and "brk-1 restarted cleanly" in out


@pytest.mark.parametrize("stop_wait", [0])
def test_a_stop_wait_already_past_asks_systemd_once(tmp_path: Path, stop_wait: int) -> None:
    """Even with no time left (the stop itself took it all) systemd is asked once: its answer is the verdict."""
    lab = Lab(tmp_path, ["brk-1"], restart="stubbed")  # Lab.show: stopped (MainPID=0, inactive)
    r = lab.run("-e", f"kafka_rolling_restart_stop_wait={stop_wait}", "-e", "kafka_rolling_restart_poll=1")
    out = _out(r)
    assert r.returncode == 0, out[-4000:]
    assert len(STOP_LABEL.findall(out)) == 1 and "brk-1 restarted cleanly" in out


# --- the start wait: each call bounded by the time left -----------------------------------------------------

START_LABEL = re.compile(r"\(item=(-?\d+) s of (\d+) s: ")


def _start_wait(tmp: Path, slow_s: float, start_wait: int, every: int) -> tuple[str, int, dict[str, Any]]:
    """wait_start.yml alone on one local host whose broker never finishes loading its logs (unit active), with
    every collector call ``slow_s`` late to start (a host slow to answer: SSH, a loaded broker); the deadline
    taken as restart.yml takes it. Returns the output, the return code, and what the calls were: the deadline and
    the end (the controller's clock), each call's asked_at, its wait (--wait-start) and its waited_s."""
    lab = Lab(tmp, ["brk-1"], restart="stubbed")
    _unit(lab, "brk-1", "active", "running", 4321)
    log = tmp / "brk-1" / "server.log"
    log.write_text(
        "[2026-11-27 07:26:00,000] INFO Loading logs from log dirs ArrayBuffer(/data/kafka-1) (kafka.log.LogManager)\n"
        "[2026-11-27 07:26:00,010] INFO Recovering 3 logs from /data/kafka-1 since no clean shutdown file was found"
        " (kafka.log.LogManager)\n"
    )
    slow = tmp / "bin" / "slow-python"
    slow.write_text(f'#!/bin/sh\nsleep {slow_s}\nexec {sys.executable} "$@"\n')
    slow.chmod(0o755)
    host = lab.hosts["brk-1"] | {
        "kafka_preflight_python": str(slow), "kafka_rolling_restart_start_wait": start_wait,
        "kafka_rolling_restart_progress_every": every, "kafka_rolling_restart_poll": 1,
        "kafka_rolling_restart_mark": {"stat": {"exists": True, "dev": log.stat().st_dev, "inode": log.stat().st_ino,
                                                "size": 0}},
    }  # fmt: skip
    calls = tmp / "calls.json"
    record = (
        "{{ {'end': now().timestamp(), 'deadline': kafka_rolling_restart_start_deadline | float,"
        " 'argv': kafka_rolling_restart_poll_log.results | map(attribute='cmd') | list,"
        " 'out': kafka_rolling_restart_poll_log.results | map(attribute='stdout') | list} | to_json }}"
    )
    play = tmp / "wait.yml"
    play.write_text(
        yaml.safe_dump(
            [{
                "name": "Wait", "hosts": "kafka_brokers", "gather_facts": False,
                "tasks": [
                    {"name": "The deadline, as restart.yml takes it before the start", "ansible.builtin.set_fact": {
                        "kafka_rolling_restart_start_deadline": "{{ now().timestamp() + kafka_rolling_restart_start_wait | int }}"}},
                    {"name": "Wait", "block": [{"name": "Wait", "ansible.builtin.include_role": {
                        "name": "kafka_rolling_restart", "tasks_from": "wait_start.yml"}}],
                     "always": [{"name": "Record the calls", "ansible.builtin.copy": {
                         "content": record, "dest": str(calls), "mode": "0644"}}]},
                ],
            }],
            sort_keys=False,
        )
    )  # fmt: skip
    r = lab.run(play=play, hosts={"brk-1": host})
    out = _out(r)
    assert calls.exists(), out[-4000:]
    doc = json.loads(calls.read_text())
    runs = [json.loads(o) for o in doc["out"]]
    doc["calls"] = [
        {"asked_at": d["asked_at"], "waited_s": d["waited_s"], "wait": float(a[a.index("--wait-start") + 1])}
        for a, d in zip(doc["argv"], runs, strict=True)
    ]  # fmt: skip
    return out, r.returncode, doc


@pytest.mark.parametrize(("slow_s", "start_wait", "every"), [(3.0, 12, 4), (0.0, 6, 4)])
def test_the_start_wait_ends_within_a_poll_of_its_deadline_however_slow_each_call(
    tmp_path: Path, slow_s: float, start_wait: int, every: int
) -> None:
    """Each call is given the time left less what the last call cost beyond its wait (the first: half of what is
    left at most), and no call is made that would end further past the deadline than now is before it; so the
    wait ends near its deadline. Before, a call made 4 s before the deadline was given those 4 s and ended its own
    cost (here 3 s and more) past it. What a call costs is measured here as the role measures it (asked_at, the
    controller's clock), so the bounds hold on a loaded machine too."""
    out, rc, doc = _start_wait(tmp_path, slow_s, start_wait, every)
    assert rc == 2, out[-4000:]
    assert (
        f'brk-1 did not start: no "Kafka Server started" within {start_wait} s: recovering: 0/3 logs loaded'
        in out
    )
    calls, deadline, end = doc["calls"], doc["deadline"], doc["end"]
    assert len(START_LABEL.findall(out)) == len(calls) >= 1  # a progress line per call
    # what each call cost beyond its wait, on the controller's clock (the last: until the play went on)
    ends = [c["asked_at"] for c in calls[1:]] + [end]
    costs = [e - c["asked_at"] - c["waited_s"] for c, e in zip(calls, ends, strict=True)]
    assert calls[0]["wait"] <= (deadline - calls[0]["asked_at"]) / 2 + 0.1
    for k in range(1, len(calls)):  # each wait bounded by the time left less the last call's cost
        left = deadline - calls[k]["asked_at"]
        assert calls[k]["wait"] <= max(0.0, left - costs[k - 1]) + 0.1 or calls[k]["wait"] <= every, (
            k,
            calls,
            costs,
        )
        assert calls[k]["wait"] <= max(0.0, left - costs[k - 1]) + 0.1, (k, calls, costs)
    if slow_s:
        assert min(costs) >= slow_s  # every call was slow
    # the end: past the deadline by at most a poll (1 s) + 1 s and what the last call cost more than the one
    # before (the estimate it was given); before it by at most half a call's cost
    grew = max(0.0, costs[-1] - costs[-2]) if len(costs) > 1 else costs[-1]
    assert -(max(costs) / 2 + 0.5) <= end - deadline <= 2.0 + grew, (end - deadline, calls, costs)
