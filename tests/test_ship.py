"""The collector shipped to hosts: the same checks as the CLI, from a bare python3 with no site-packages."""

from __future__ import annotations

import json
import os
import pwd
import subprocess
import sys
from pathlib import Path

from kafka_ops.audit import run_audit
from kafka_ops.collector import ship
from kafka_ops.facts.model import AuditOptions
from kafka_ops.simulator.host import SimulatedHost
from tests.conftest import NOW_MS


def _args(host: SimulatedHost) -> list[str]:
    return [
        "--server-properties", host.server_properties, "--topic-configs", host.topic_configs,
        "--systemd-unit", host.systemd_unit, "--broker-state", "stopped", "--kafka-version", "3.7.0",
        "--now", str(NOW_MS), "--broker-user", pwd.getpwuid(os.getuid()).pw_name,
    ] + [a for d in host.log_dirs for a in ("--expect-mount", f"{d}=/")]  # test hosts are on the root fs  # fmt: skip


def _run(script: str, *args: str) -> subprocess.CompletedProcess[str]:
    # -I -S: no site-packages, no user site, no PYTHON* env: what a locked-down broker host has
    return subprocess.run(
        [sys.executable, "-I", "-S", "-", *args], input=script, capture_output=True, text=True, timeout=120
    )


def test_collector_from_stdin_finds_what_the_library_finds(broken_host: SimulatedHost) -> None:
    script = ship.build()
    proc = _run(script, "audit", *_args(broken_host))
    assert proc.returncode == 1, proc.stderr  # criticals planted: the gate fails as the CLI's would
    remote = json.loads(proc.stdout)
    argv = _args(broken_host)
    opts = AuditOptions(
        server_properties=argv[1], topic_configs=argv[3], systemd_unit=argv[5], broker_state="stopped",
        kafka_version="3.7.0", now_ms=NOW_MS, broker_user=argv[13], expected_mounts={d: "/" for d in broken_host.log_dirs},
    )  # fmt: skip
    local = run_audit(opts)
    key = ("check", "path", "topic", "partition", "segment", "message")
    assert [tuple(f[k] for k in key) for f in remote["findings"]] == [
        tuple(f[k] for k in key) for f in local["findings"]
    ]
    assert {f["check"] for f in remote["findings"]} >= {"RET001", "SHUT001", "IDX002", "CLN003"}
    assert remote["forecast"] == local["forecast"]
    failing = remote["gate"].pop("failing")
    assert remote["gate"] == {"fail_on": "error", "passed": False, "exit_code": 1, "waived": 0}
    assert len(failing) == sum(1 for f in remote["findings"] if f["severity"] in ("error", "critical")) > 0


def test_stream_mode_sends_one_row_per_partition_then_the_report(healthy_host: SimulatedHost) -> None:
    proc = _run(ship.build(), "stream", *_args(healthy_host))
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(x) for x in proc.stdout.splitlines()]
    assert lines[-1]["kind"] == "report"
    rows = [x for x in lines if x["kind"] == "partition"]
    report = lines[-1]["report"]
    assert len(rows) == sum(ld["partitions"] for ld in report["log_dirs"]) > 0
    assert sum(r["size_bytes"] for r in rows) == sum(ld["log_bytes"] for ld in report["log_dirs"])
    assert all(r["log_end_offset"] is not None and r["segments"] >= 1 for r in rows)


def test_bad_option_is_one_line_and_exit_2(tmp_path: Path) -> None:
    proc = _run(ship.build(), "audit", "--horizon", "soon", "--log-dir", str(tmp_path))
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "kafka-ops-collector: --horizon: not a duration: 'soon' (expected a number and a unit: ms, s, m, h, d or w, "
        "e.g. 420s, 5m, 168h, 7d or 1h30m)"
    ]
    assert proc.stdout == ""


def test_collector_refuses_an_old_python_with_one_line() -> None:
    text = ship.build()
    assert "sys.version_info < (3, 9)" in text.splitlines()[5]


def test_role_copy_is_a_fresh_build() -> None:
    # the kafka_preflight role ships this file; rebuild with `python -m kafka_ops.collector.ship` after changing a check
    assert ship.ROLE_COPY.read_text() == ship.build(), "run: python -m kafka_ops.collector.ship"
