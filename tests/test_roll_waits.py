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

import re
import threading
import time
from pathlib import Path

import pytest

from tests.test_roll_ops import Lab, _out, _ran

STOP_LABEL = re.compile(r"\(item=(\d+) s of (\d+) s: \S+ is (\w+)/(\S+), MainPID (\d+)\)")


def _unit(lab: Lab, name: str, active: str, sub: str, pid: int) -> None:
    """The host's `systemctl show` during the stop: ``active``/``sub`` with MainPID ``pid``."""
    d = lab.tmp / name
    (d / "kafka.service.show").write_text(
        f"MainPID={pid}\nActiveState={active}\nSubState={sub}\nResult=success\nTimeoutStopUSec=20min\n"
        "ExecMainCode=0\nExecMainStatus=0\n"
    )


def test_a_broker_still_stopping_at_the_deadline_is_reported_stopping_not_stopped(tmp_path: Path) -> None:
    lab = Lab(tmp_path, ["brk-1", "brk-2"], restart="stubbed")
    _unit(lab, "brk-1", "deactivating", "stop-sigterm", 4321)  # SIGTERM sent, the broker still shutting down
    t0 = time.monotonic()
    r = lab.run("-e", "kafka_rolling_restart_stop_wait=4", "-e", "kafka_rolling_restart_poll=1")
    out = _out(r)
    assert r.returncode != 0, out[-4000:]
    assert (
        "brk-1 (node 1) is still stopping after 4 s ("
        + str(tmp_path / "brk-1" / "kafka.service")
        + " is deactivating/stop-sigterm, MainPID 4321): its shutdown goes on, do not start it by hand; the roll"
        " stopped with it." in out
    ), out[-4000:]
    assert "IS STOPPED" not in out and "UNCLEAN STOP" not in out
    assert "systemd kills it at TimeoutStopUSec=20min" in out
    # nothing after the stop ran on it, and brk-2 was never stopped
    assert _ran(out) == ["Preflight before the stop", "Stop the broker"]
    # a line per question to systemd, the last one at the deadline, none a poll (1 s) + 1 s past it
    lines = STOP_LABEL.findall(out)
    assert len(lines) >= 3 and all(x[2:] == ("deactivating", "stop-sigterm", "4321") for x in lines)
    assert 4 <= int(lines[-1][0]) <= 6, lines
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
