"""`kafka-ops audit` as a CI gate: exit codes, formats, skipped inputs, and the published report schema."""

from __future__ import annotations

import json
import subprocess
import sys
from xml.etree import ElementTree as ET

from kafka_ops.render.models import SCHEMA_PATH, json_schema, validate
from kafka_ops.simulator.host import Failures, HostSpec, simulate_host

from .conftest import NOW_MS


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kafka_ops.cli", *args], capture_output=True, text=True)


def on_root_fs(host) -> list[str]:  # type: ignore[no-untyped-def]
    """Test hosts live under /tmp on the root filesystem: declare it expected (DIR001)."""
    return [arg for d in host.log_dirs for arg in ("--expect-mount", f"{d}=/")]


def base_args(host) -> list[str]:  # type: ignore[no-untyped-def]
    return [
        "audit", *on_root_fs(host), "--server-properties", host.server_properties, "--topic-configs", host.topic_configs,
        "--systemd-unit", host.systemd_unit, "--broker-state", "stopped", "--now", str(NOW_MS),
        "--kafka-version", "3.7.0", "--broker-user", "root",
    ]  # fmt: skip


def test_published_schema_is_the_models_schema() -> None:
    assert json.loads(SCHEMA_PATH.read_text()) == json.loads(json.dumps(json_schema(), sort_keys=True)), (
        "run `python -m kafka_ops.render.models` and commit the schema"
    )


def test_json_report_fields_and_gate(tmp_path) -> None:  # type: ignore[no-untyped-def]
    host = simulate_host(
        str(tmp_path / "h"),
        HostSpec(now_ms=NOW_MS, failures=Failures(unclean_shutdown=True, meta_mismatch=True)),
    )
    r = run(*base_args(host), "--format", "json")
    assert r.returncode == 1, r.stderr  # DIR002 is critical: the default --fail-on error fails
    report = json.loads(r.stdout)
    validate(report)
    for key in ("version", "host", "generated_at", "inputs", "skipped", "findings"):
        assert key in report
    assert report["generated_at"].startswith("2026-09-21T14:13:20")
    # SHUT001's severity follows the recovery estimate: these dirs recover in seconds
    shut = [f for f in report["findings"] if f["check"] == "SHUT001"]
    assert len(shut) == 2 and all(f["severity"] == "info" for f in shut)
    assert all(f["details"]["recover_estimate_s"] < 60 for f in shut)
    dir2 = [f for f in report["findings"] if f["check"] == "DIR002"]
    assert len(dir2) == 1 and dir2[0]["severity"] == "critical"
    for f in report["findings"]:
        for key in ("check", "severity", "path", "topic", "partition", "segment", "message", "remediation"):
            assert key in f
    failing = report["gate"].pop("failing")
    assert report["gate"] == {"fail_on": "error", "passed": False, "exit_code": 1, "waived": 0}
    # gate.failing: one line per failing finding (error and critical), the line the Ansible role prints
    failing_findings = [f for f in report["findings"] if f["severity"] in ("error", "critical")]
    assert [x.split(" ", 2)[:2] for x in failing] == [[f["check"], f["severity"]] for f in failing_findings]
    assert ["DIR002", "critical"] in [x.split(" ", 2)[:2] for x in failing]
    assert all(
        f" - {f['message'].split()[0]}" in x and " FIX: " in x
        for x, f in zip(failing, failing_findings, strict=True)
    )
    assert report["inputs"]["log_dirs"]["source"].startswith("log.dirs in")
    # with the broker running SHUT001 is not judged at all (DIR002 still fails the gate)
    r2 = run(
        *base_args(host)[:-6],
        "--broker-state",
        "running",
        "--kafka-version",
        "3.7.0",
        "--broker-user",
        "root",
        "-f",
        "json",
    )
    assert r2.returncode == 1, r2.stdout[-2000:]
    running = json.loads(r2.stdout)
    skipped = {s.get("check"): s["reason"] for s in running["skipped"]}
    assert "SHUT001" in skipped and "running" in skipped["SHUT001"]
    assert {f["check"] for f in running["findings"]} & {"SHUT001"} == set()


def test_healthy_host_passes_and_missing_inputs_are_reported(healthy_host) -> None:  # type: ignore[no-untyped-def]
    r = run(
        "audit",
        "--log-dir",
        healthy_host.log_dirs[0],
        "--expect-mount",
        f"{healthy_host.log_dirs[0]}=/",
        "--broker-state",
        "stopped",
        "--now",
        str(NOW_MS),
        "-f",
        "json",
    )
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr
    report = json.loads(r.stdout)
    skipped_inputs = {s["input"] for s in report["skipped"] if s.get("input")}
    assert {"broker_user", "kafka_version", "topic_configs"} <= skipped_inputs
    skipped_checks = {s["check"]: s["reason"] for s in report["skipped"] if s.get("check")}
    assert "PERM001" in skipped_checks and "broker user" in skipped_checks["PERM001"]


def test_junit_and_markdown(tmp_path) -> None:  # type: ignore[no-untyped-def]
    host = simulate_host(
        str(tmp_path / "h"),
        HostSpec(now_ms=NOW_MS, failures=Failures(unclean_shutdown=True, meta_mismatch=True)),
    )
    r = run(*base_args(host), "--format", "junit", "--fail-on", "critical")
    assert r.returncode == 1
    suite = ET.fromstring(r.stdout)
    assert suite.tag == "testsuite" and int(suite.get("failures")) >= 1
    failed = [c.get("name") for c in suite if c.find("failure") is not None]
    assert "DIR002" in failed and "SHUT001" not in failed  # SHUT001 of seconds is info
    md = run(*base_args(host), "--format", "markdown", "-o", str(tmp_path / "r.md"))
    assert md.returncode == 1 and "## critical" in (tmp_path / "r.md").read_text()


def test_bad_input_is_one_line_and_exit_2(tmp_path) -> None:  # type: ignore[no-untyped-def]
    r = run("audit", "--server-properties", str(tmp_path / "nope.properties"))
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.strip().count("\n") == 0 and "nope.properties" in r.stderr
    bad = tmp_path / "topics.json"
    bad.write_text("{not json")
    r = run("audit", "--log-dir", str(tmp_path), "--topic-configs", str(bad))
    assert r.returncode == 2 and "topics.json" in r.stderr and "Traceback" not in r.stderr
    r = run("audit", "--log-dir", str(tmp_path), "--now", "yesterday")
    assert r.returncode == 2 and r.stderr.startswith("kafka-ops audit: --now: not a time: 'yesterday'")
