"""The rolling restart's opt-in rehearsal (kafka_rolling_restart_rehearse), run by ansible-playbook on a local
host as tests/test_roll_ops.py runs the role: its restart.yml with only the actions that need systemd or a
broker replaced by a line naming the task (the stop, the start, the preflight, the wait for the start), and the
rehearsal itself REAL: the shipped collector's `rehearse` mode, run by the role as it runs on a broker host,
starting Kafka 3.7.2 (the lab's jars) in the sandbox on a stopped lab node's own log dirs.

The rehearsal's exit decides: 0 (the node starts) the roll goes on to the start; 1 (another cluster's
meta.properties in a log dir: the start exits) the roll stops there, the broker not started, with the
rehearsal's reason; 2 (a kafka_home without libs/: refused) the roll stops by default, and goes on, saying so,
with kafka_rolling_restart_rehearse_unrehearsed=start.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kafka_ops.engine.checkpoints import parse_properties
from kafka_ops.rehearse.config import properties_text
from tests import test_rehearse
from tests.test_rehearse import _copy, needs_root, rehearsal
from tests.test_roll_ops import Lab, _out, _ran


@pytest.fixture(scope="module")
def lab() -> Iterator[dict[str, Any]]:
    """test_rehearse's: a stopped Kafka 3.7.2 combined node (2 log dirs, a topic of 2 partitions), the lab's jars
    as a Kafka home, a root-only scratch (its function, run for this module)."""
    yield from test_rehearse.lab.__wrapped__()


pytestmark = [needs_root, rehearsal]


def _roll(tmp: Path, lab: dict[str, Any], node: Path, *extra: str) -> tuple[int, str, Path]:
    """One roll of a local host whose broker is the stopped lab node ``node`` (a copy), rehearsal on."""
    roll = Lab(tmp, ["brk-1"], restart="stubbed")
    data = [str(node / "data-0"), str(node / "data-1")]
    hosts = {
        "brk-1": roll.hosts["brk-1"]
        | {
            "kafka_server_properties": str(node / "config" / "server.properties"),
            "kafka_broker_user": "kafka",
            "kafka_preflight_report": {"log_dirs": [{"path": d} for d in data]},
        }
    }
    reports = tmp / "reports"
    r = roll.run(
        "-e", "kafka_rolling_restart_rehearse=true", "-e", f"kafka_rolling_restart_rehearse_kafka_home={lab['home']}",
        "-e", f"kafka_rolling_restart_rehearse_scratch={lab['scratch']}", "-e", "kafka_rolling_restart_rehearse_heap=384m",
        "-e", "kafka_rolling_restart_rehearse_window=0", "-e", f"kafka_rolling_restart_report_dir={reports}", *extra,
        hosts=hosts,
    )  # fmt: skip
    assert not isinstance(r, Exception)
    return r.returncode, _out(r), reports  # type: ignore[union-attr]


def _report(reports: Path) -> dict[str, Any]:
    (path,) = reports.glob("brk-1-*-rehearsal.json")
    doc: dict[str, Any] = json.loads(path.read_text())
    return doc


def test_a_rehearsal_that_starts_lets_the_roll_start_the_broker(lab: dict[str, Any], tmp_path: Path) -> None:
    node = _copy(lab, "roll-ok")
    try:
        rc, out, reports = _roll(tmp_path, lab, node)
        assert rc == 0, out[-4000:]
        assert "brk-1: rehearsal: Kafka 3.7.2 starts in " in out
        assert "the plan: the broker starts; differences: 0; real log dirs unchanged" in out
        assert "Start the broker" in _ran(out) and "brk-1 restarted cleanly" in out
        r = _report(reports)["rehearsal"]
        assert r["observed"]["broker"] == "starts" and r["real_dirs"]["unchanged"]
    finally:
        shutil.rmtree(node)


def test_a_rehearsal_whose_start_exits_stops_the_roll_before_the_start(
    lab: dict[str, Any], tmp_path: Path
) -> None:
    node = _copy(lab, "roll-exit")
    meta = node / "data-1" / "meta.properties"
    meta.write_text(
        properties_text({**parse_properties(meta.read_text()), "cluster.id": "AAAAAAAAAAAAAAAAAAAAAA"})
    )
    try:
        rc, out, reports = _roll(tmp_path, lab, node)
        assert rc != 0
        assert "Start the broker" not in _ran(out), out[-4000:]
        assert (
            "brk-1 (node 1) IS STOPPED and the roll stopped with it. What failed: Stop the roll when the rehearsal"
            in out
        )
        assert "says it would fail: Kafka 3.7.2 exits: " in out and "Invalid cluster.id" in out
        assert _report(reports)["rehearsal"]["observed"]["broker"] == "exits"
    finally:
        shutil.rmtree(node)


def test_a_start_that_cannot_be_rehearsed_stops_the_roll_unless_told_to_start(
    lab: dict[str, Any], tmp_path: Path
) -> None:
    node = _copy(lab, "roll-refused")
    nolibs = Path(tempfile.mkdtemp(prefix="rh-nolibs-"))  # an upgrade's home mistyped: no libs/
    try:
        rc, out, _ = _roll(
            tmp_path / "stop", lab, node, "-e", f"kafka_rolling_restart_rehearse_kafka_home={nolibs}"
        )
        assert rc != 0
        assert "Start the broker" not in _ran(out), out[-4000:]
        assert "IS STOPPED and the roll stopped with it" in out
        assert (
            f"its next start could not be rehearsed (exit 2): refused: --kafka-home {nolibs}: no libs/" in out
        )
        assert "kafka_rolling_restart_rehearse_unrehearsed=start" in out
        rc, out, _ = _roll(
            tmp_path / "start", lab, node, "-e", f"kafka_rolling_restart_rehearse_kafka_home={nolibs}",
            "-e", "kafka_rolling_restart_rehearse_unrehearsed=start",
        )  # fmt: skip
        assert rc == 0, out[-4000:]
        assert "brk-1: NOT REHEARSED (exit 2): refused: --kafka-home" in out
        assert "it starts unrehearsed" in out
        assert "Start the broker" in _ran(out) and "brk-1 restarted cleanly" in out
    finally:
        shutil.rmtree(node)
        nolibs.rmdir()


@pytest.fixture(autouse=True)
def _dirs(tmp_path: Path) -> None:
    for sub in ("stop", "start"):
        (tmp_path / sub).mkdir()
