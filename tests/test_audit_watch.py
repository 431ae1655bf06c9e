"""What a CI log and a monitoring system read of the audit (issue 39): with `-o FILE` stderr names the failing
findings (check, severity, where), as ruff and ansible-lint do; stderr wraps at COLUMNS; `waived` is one count
everywhere; `-f prometheus` is node_exporter's textfile format, parsed here line by line."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

from kafka_ops.simulator.host import SimulatedHost

from .conftest import NOW_MS
from .test_waivers import args  # the demo host's audit command line, as the waiver tests run it

Cli = Callable[..., tuple[int, str, str]]


def test_a_ci_log_names_the_failing_findings_under_the_verdict(
    cli: Cli, broken_host: SimulatedHost, tmp_path: Path
) -> None:
    # a CI log: no terminal, one line per finding
    code, out, err = cli(*args(broken_host, "-f", "junit", "-o", str(tmp_path / "r.xml")))
    assert code == 1 and out == ""
    _, js, _ = cli(*args(broken_host, "-f", "json"))
    report = json.loads(js)
    lines = err.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("kafka-ops audit: FAIL (--fail-on error)"))
    failing = [f for f in report["findings"] if f["severity"] in ("error", "critical")]
    listed = lines[at + 1 :]
    assert len(failing) <= 20 and len(listed) == len(failing)
    for line, f in zip(listed, failing, strict=True):
        assert line == f"  {f['check']} {f['severity']} {f['path'] or f['log_dir']}"
    # a bound: the first 20, then how many more
    from kafka_ops.cli.audit import failing_lines

    big = {**report, "findings": failing * 10}
    lines = failing_lines(big)
    assert (
        len(lines) == 21 and lines[-1] == f"  and {len(failing) * 10 - 20} more (the report lists them all)"
    )


def test_stderr_on_a_terminal_wraps_at_its_width_and_never_breaks_a_path(
    broken_host: SimulatedHost, tmp_path: Path
) -> None:
    from .terminal import in_terminal

    # the summary line of an audit with inputs missing is long: not found ..., N check(s) skipped ...
    argv = ["-m", "kafka_ops.cli", "audit", "--server-properties", broken_host.server_properties,
            "--broker-state", "stopped", "-f", "json", "-o", str(tmp_path / "r.json")]  # fmt: skip
    code, _, err = in_terminal(argv, 60)
    assert code == 1
    lines = err.splitlines()
    assert len(lines) > 3 and "check(s) skipped" in err
    assert all(len(line) <= 60 or " " not in line.strip() for line in lines), err
    # each message starts with the command's name, its next lines indented; the paths listed whole on a line
    assert all(line.startswith(("kafka-ops audit: ", "  ")) for line in lines)
    report = json.loads((tmp_path / "r.json").read_text())
    failing = [f["path"] for f in report["findings"] if f["severity"] in ("error", "critical") and f["path"]]
    assert failing and all(any(p in line.split() for line in lines) for p in failing)
    # a pipe (a CI log): one line per message, whatever the width
    code, _, piped = in_terminal(argv, 60, stderr_tty=False)
    assert len(piped.splitlines()) < len(lines) and any(len(line) > 60 for line in piped.splitlines())


def test_waived_is_the_same_count_in_the_gate_the_waivers_and_the_verdict(
    cli: Cli, broken_host: SimulatedHost
) -> None:
    # a waiver of a warning under --fail-on error: matched 1, and the gate says 1 waived (it said 0)
    code, js, err = cli(*args(broken_host, "-f", "json", "--waive", "RET004 accepted"))
    gate = json.loads(js)["gate"]
    assert code == 1
    assert [w["matched"] for w in gate["waivers"]] == [1] and gate["waived"] == 1
    assert ", 1 waived;" in err
    _, text, _ = cli(*args(broken_host, "--waive", "RET004 accepted"))
    assert ", 1 waived;" in " ".join(text.split())


# the text exposition format, version 0.0.4: https://prometheus.io/docs/instrumenting/exposition_formats/
NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
LABEL = r'[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*"'
SAMPLE = re.compile(rf"^(?P<name>{NAME})(?:\{{(?P<labels>{LABEL}(?:,{LABEL})*)?\}})? (?P<value>\S+)$")
HELP = re.compile(rf"^# HELP (?P<name>{NAME}) \S.*$")
TYPE = re.compile(rf"^# TYPE (?P<name>{NAME}) (counter|gauge|histogram|summary|untyped)$")


def parse_exposition(text: str) -> dict[str, list[tuple[dict[str, str], float]]]:
    """The samples of a text exposition, by metric name; AssertionError on any line the format does not allow
    (prometheus_client's parser is not a dependency; this is its grammar, stricter: every metric typed)."""
    assert text.endswith("\n") and "\n\n" not in text
    typed: dict[str, str] = {}
    out: dict[str, list[tuple[dict[str, str], float]]] = {}
    for line in text.splitlines():
        if line.startswith("# HELP"):
            assert HELP.match(line), line
            continue
        if line.startswith("# TYPE"):
            m = TYPE.match(line)
            assert m and m["name"] not in typed, line  # one TYPE per metric, before its samples
            typed[m["name"]] = m.group(2)
            continue
        m = SAMPLE.match(line)
        assert m, line
        assert m["name"] in typed, f"{line}: no TYPE before it"
        value = float(m["value"])  # a Go float: ValueError if not
        labels = dict(re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"', m["labels"] or ""))
        out.setdefault(m["name"], []).append((labels, value))
    return out


def test_prometheus_is_the_textfile_collector_format(cli: Cli, broken_host: SimulatedHost) -> None:
    code, text, err = cli(*args(broken_host, "-f", "prometheus"))
    _, js, _ = cli(*args(broken_host, "-f", "json"))
    report = json.loads(js)
    assert code == 1 and "FAIL (--fail-on error)" in err
    m = parse_exposition(text)
    # findings by check and severity, as many as the report has
    assert sum(v for _, v in m["kafka_ops_findings"]) == len(report["findings"])
    shut = [v for lab, v in m["kafka_ops_findings"] if lab["check"] == "SHUT001"]
    assert shut == [sum(f["check"] == "SHUT001" for f in report["findings"])]
    assert {lab["severity"]: v for lab, v in m["kafka_ops_severity_findings"]} == {
        s: report["summary"].get(s, 0) for s in ("critical", "error", "warning", "info")
    }
    # the gate and the next start: the demo host's next start exits (DIR002), which an alert rule can see
    assert m["kafka_ops_gate_passed"] == [({"fail_on": "error"}, 0)]
    assert m["kafka_ops_next_start_exits"] == [({"check": "DIR002"}, 1)]
    # when: the audit's time (--now) and how long it took
    assert m["kafka_ops_audit_timestamp_seconds"] == [({}, NOW_MS / 1000)]
    ((_, took),) = m["kafka_ops_audit_duration_seconds"]
    assert 0 < took < 120


def test_prometheus_of_a_healthy_host_and_hostile_label_values() -> None:
    from kafka_ops.render.text import to_prometheus

    report = {
        "host": 'h"1\\\nx', "generated_at": "2026-11-26T17:19:11+00:00", "broker_state": "stopped",
        "kafka_version": None, "summary": {}, "findings": [], "log_dirs": [], "skipped": [], "errors": [],
        "next_start": {"broker": "starts", "kafka_version": "3.7.0", "log_dirs": [], "segments": []},
        "gate": {"fail_on": "error", "passed": True, "exit_code": 0, "waived": 0},
    }  # fmt: skip
    m = parse_exposition(to_prometheus(report))
    assert m["kafka_ops_next_start_exits"] == [({}, 0)] and m["kafka_ops_gate_passed"][0][1] == 1
    host = m["kafka_ops_audit_info"][0][0]["host"]
    assert host.startswith('h\\"1\\\\') and "\n" not in host  # escaped, and on its line
    assert "kafka_ops_findings" not in m and m["kafka_ops_severity_findings"][0] == (
        {"severity": "critical"},
        0,
    )


def test_prometheus_of_a_fleet_labels_each_finding_with_its_host() -> None:
    from kafka_ops.render.text import to_prometheus

    finding = {"check": "RET001", "severity": "critical", "waived": False}
    report = {
        "host": "fleet", "generated_at": "2026-11-26T17:19:11+00:00", "broker_state": "stopped",
        "kafka_version": "3.7.0", "summary": {"critical": 3}, "log_dirs": [], "skipped": [], "errors": [],
        "findings": [{**finding, "host": "b-1"}, {**finding, "host": "b-1"}, {**finding, "host": "b-2"}],
        "next_start": None, "gate": {"fail_on": "error", "passed": False, "exit_code": 1, "waived": 0},
        "fleet": {"hosts_total": 2},
    }  # fmt: skip
    m = parse_exposition(to_prometheus(report))
    assert {lab["host"]: v for lab, v in m["kafka_ops_findings"]} == {"b-1": 2, "b-2": 1}
    assert m["kafka_ops_next_start_known"] == [({}, 0)]
