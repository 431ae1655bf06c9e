"""Every command lays its text out for COLUMNS (issue 39): at 80 columns no stdout line of `forecast`, `logs`,
`checks`, `cluster` or `fleet` is wider (they printed 120- and 204-column tables), and a wider COLUMNS is used.
The cluster's and the fleet's text is tested through their printing functions (no cluster or Spark here)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from kafka_ops.simulator.host import SimulatedHost

from .conftest import NOW_MS

Cli = Callable[..., tuple[int, str, str]]


def widest(text: str) -> int:
    return max((len(line) for line in text.splitlines()), default=0)


def fits(text: str, width: int) -> bool:
    """No line wider than ``width``, but a line of one word (a path wider than the width, whole)."""
    return all(len(line) <= width or " " not in line.strip() for line in text.splitlines())


def test_forecast_follows_columns(
    cli: Cli, broken_host: SimulatedHost, monkeypatch: pytest.MonkeyPatch
) -> None:
    args = ["forecast", "--server-properties", broken_host.server_properties, "--topic-configs",
            broken_host.topic_configs, "--broker-state", "stopped", "--now", str(NOW_MS), "--horizon", "7d"]  # fmt: skip
    monkeypatch.setenv("COLUMNS", "80")
    code, out, _ = cli(*args)
    assert code == 0 and fits(out, 80), widest(out)  # (stderr: a pipe here, one line per note)
    # every segment the wide table lists is in the narrow text, with when it is deleted
    assert "orders-1 segment 0 (" in out and "Topic size over the horizon:" in out
    monkeypatch.setenv("COLUMNS", "150")
    code, wide, _ = cli(*args)
    assert code == 0 and 80 < widest(wide) <= 150


def test_logs_follows_columns(cli: Cli, broken_host: SimulatedHost, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    code, out, _ = cli("logs", broken_host.cleaner_log, broken_host.server_log)
    assert code == 1 and "log-cleaner thread deaths" in out and fits(out, 80), widest(out)
    monkeypatch.setenv("COLUMNS", "60")
    _, narrow, _ = cli("logs", broken_host.cleaner_log, broken_host.server_log)
    assert fits(narrow, 60), widest(narrow)


def test_checks_follows_the_terminal(cli: Cli) -> None:
    from .terminal import in_terminal

    code, out, _ = in_terminal(["-m", "kafka_ops.cli", "checks"], 80)
    assert code == 0 and fits(out, 80), widest(out)
    lines = out.splitlines()
    # a title wrapped under itself: every check's line still starts with its id, the next ones indented
    assert all(line[:1].isupper() or line.startswith(" " * 20) for line in lines)
    # a pipe: one line per check (grep's), as in a terminal wide enough
    _, piped, _ = cli("checks")
    _, wide, _ = in_terminal(["-m", "kafka_ops.cli", "checks"], 250)
    assert len(wide.splitlines()) == len(piped.splitlines()) < len(lines)


def answer() -> dict[str, Any]:
    return {
        "summary": "no: broker 2 cannot be stopped now: 3 partition(s) would go under min.insync.replicas "
        "and 1 would lose its last in-sync replica, and the active controller is not yet caught up",
        "reasons": [f"CLU001 orders-{i} (replicas [1, 2, 3], ISR [2], min.insync.replicas 2): stopping broker 2 "
                    "leaves no in-sync replica, the partition goes offline" for i in range(3)],
        "notes": ["the metadata quorum's fetch timeout is 2000 ms: a voter further behind than that counts as lagging"],
        "waived": ["CLU002 stale-0 (no leader; replicas [1, 3], ISR [3]): --ignore-partition stale-0"],
    }  # fmt: skip


def test_cluster_check_and_status_follow_the_terminal() -> None:
    from .terminal import in_terminal

    status = {
        "bootstrap": "broker-1.example.com:9093,broker-2.example.com:9093", "cluster_id": "q1Sh-9_ISia_zwGINzRvyQ",
        "brokers": list(range(1, 13)), "controller": 3001, "controller_from": "metadata quorum",
        "under_replicated": [f"a-long-topic-name-{i}" for i in range(8)], "offline": ["orders-0"],
        "voters": [3001, 3002, 3003], "quorum_leader": 3001, "attempts": 1,
    }  # fmt: skip
    script = (
        "import json, sys; from kafka_ops.cli.cluster import print_answer, print_status; "
        "print_answer(json.loads(sys.argv[1])); print_status(json.loads(sys.argv[2]))"
    )
    argv = ["-c", script, json.dumps(answer()), json.dumps(status)]
    for columns in (80, 60):
        code, out, _ = in_terminal(argv, columns)
        assert code == 0 and fits(out, columns), out
        assert (
            out.startswith("no: broker 2") and "\n  - CLU001 orders-0 " in out and "\n  waived: CLU002" in out
        )
    _, wide, _ = in_terminal(argv, 300)
    assert widest(wide) > 80


def test_fleet_tables_follow_columns(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from kafka_ops.cli.fleet import show_fleet_table

    host = {"host": "broker-1.dc1.example.com", "address": "10.0.0.1", "status": "ok", "node_id": 1,
            "log_dirs": 2, "partitions": 120, "log_bytes": 123_456_789, "critical": 7, "error": 3, "warning": 2,
            "info": 1}  # fmt: skip
    report = {"fleet": {
        "hosts_audited": 3, "hosts_total": 3, "units": 6, "tasks": 3, "spark_master": "spark://127.0.0.1:7077",
        "run_id": "20261126T142538Z-3a7918", "results": "file:///tmp/fleet-results", "leaders_source": "--leaders",
        "hosts": [{**host, "host": f"broker-{i}.dc1.example.com"} for i in range(3)],
        "replicas_at_risk": [{"topic": "orders", "partition": 0, "host": "broker-1.dc1.example.com",
                              "role": "leader", "segments": 3, "bytes": 45_000,
                              "consequence": "time retention deletes minutes-old data on the leader: consumers "
                              "that have not read it lose it"}],
        "topics": [{"topic": "orders", "partitions_at_risk": 1, "partitions": 3, "partitions_losing_data": 1,
                    "bytes_lost_cluster_wide": 45_000, "replicas": 9, "hosts": 3}],
    }}  # fmt: skip
    monkeypatch.setenv("COLUMNS", "80")
    show_fleet_table(report)
    out = capsys.readouterr().out
    assert "broker-2.dc1.example.com" in out and fits(out, 80), widest(out)
    monkeypatch.setenv("COLUMNS", "200")
    show_fleet_table(report)
    assert widest(capsys.readouterr().out) > 80
