"""DIR007 and the plan's ``quorum_state``: a KRaft quorum-state file the next start cannot read."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kafka_ops.audit import run_audit
from kafka_ops.broker.plan import plan_sentences
from kafka_ops.facts.model import AuditOptions
from kafka_ops.simulator.host import HostSpec, SimulatedHost, TopicSpec, simulate_host

from ..conftest import NOW_MS

GOOD = (
    b'{"clusterId":"","leaderId":1,"leaderEpoch":3,"votedId":-1,"appliedOffset":0,'
    b'"currentVoters":[{"voterId":1}],"data_version":0}\n'
)


def sim(root: Path, quorum_state: bytes | None) -> SimulatedHost:
    h = simulate_host(
        str(root),
        HostSpec(now_ms=NOW_MS, topics=[TopicSpec("orders", partitions=2, records_per_partition=50)]),
    )
    one = sorted(h.log_dirs)[0]  # the metadata log dir: the first of log.dirs
    os.makedirs(os.path.join(one, "__cluster_metadata-0"))
    if quorum_state is not None:
        with open(os.path.join(one, "__cluster_metadata-0", "quorum-state"), "wb") as f:
            f.write(quorum_state)
    return h


def audit(h: SimulatedHost, version: str | None) -> dict:  # type: ignore[type-arg]
    return run_audit(
        AuditOptions(
            server_properties=h.server_properties,
            broker_state="stopped",
            now_ms=NOW_MS,
            kafka_version=version,
        )
    )


def dir007(report: dict) -> list[dict]:  # type: ignore[type-arg]
    return [f for f in report["findings"] if f["check"] == "DIR007"]


@pytest.mark.parametrize(
    "content", [GOOD, GOOD.rstrip(b"\n") + b"\x00\x00trailing", None], ids=["good", "trail", "none"]
)
def test_a_readable_or_missing_quorum_state_says_nothing(tmp_path: Path, content: bytes | None) -> None:
    report = audit(sim(tmp_path / "h", content), "4.1.0")
    assert dir007(report) == [] and report["next_start"]["quorum_state"] is None
    assert report["next_start"]["broker"] == "starts"


DAMAGE = {
    "zero_filled": (bytes(96), "not JSON"),
    "garbage": (b"\x7fELF\x02\x01\x01\x00" + bytes(range(200, 256)), "not UTF-8"),
    "empty": (b"", "File ended prematurely"),
    "truncated": (GOOD[:40], "not JSON"),
    "no_version": (b'{"leaderId":1}\n', "no data_version"),
}


@pytest.mark.parametrize("damage", DAMAGE)
def test_a_damaged_quorum_state_stops_3_8_and_is_cleared_before(tmp_path: Path, damage: str) -> None:
    content, said = DAMAGE[damage]
    h = sim(tmp_path / "h", content)
    # 3.8+ (KAFKA-16526): the raft client's start fails, the broker exits before it loads a log
    for version in ("3.8.0", "4.1.0"):
        report = audit(h, version)
        [f] = dir007(report)
        assert f["severity"] == "critical" and said in f["message"] and "broker exits" in f["message"]
        ns = report["next_start"]
        assert (ns["broker"], ns["check"]) == ("exits", "DIR007"), ns
        assert ns["quorum_state"]["fate"] == "exits"
    # up to 3.7: cleared, the node starts and forgets its vote
    for version in ("3.5.2", "3.7.2"):
        report = audit(h, version)
        [f] = dir007(report)
        assert f["severity"] == "warning" and "Clearing local quorum state store" in f["message"]
        ns = report["next_start"]
        assert ns["broker"] == "starts" and ns["quorum_state"]["fate"] == "cleared", ns
        assert any("forgets its vote [DIR007]" in s for s in plan_sentences(ns))
    report = audit(h, None)
    [f] = dir007(report)
    assert f["severity"] == "error" and report["next_start"]["quorum_state"]["fate"] == "depends"


def test_zookeeper_mode_and_a_running_broker_say_nothing(tmp_path: Path) -> None:
    h = sim(tmp_path / "h", b"")
    assert len(dir007(audit(h, "4.1.0"))) == 1
    running = run_audit(
        AuditOptions(
            server_properties=h.server_properties,
            broker_state="running",
            now_ms=NOW_MS,
            kafka_version="4.1.0",
        )
    )
    assert dir007(running) == []
    with open(h.server_properties) as f:
        zk = [
            x
            for x in f.read().splitlines()
            if not x.startswith(("process.roles=", "node.id=", "controller."))
        ]
    with open(h.server_properties, "w") as f:
        f.write("\n".join([*zk, "broker.id=1", "zookeeper.connect=127.0.0.1:2181"]) + "\n")
    assert dir007(audit(h, "3.5.2")) == []
