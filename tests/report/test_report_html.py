"""The HTML report, opened in a real headless Chromium (Debian's, installed by .ci/setup-chromium.sh).

The host is the demo host of `make demo`: every seed failure planted, owned by a real broker user, audited with
every input and an 8-day horizon (so that seed 000's early deletion falls inside it)."""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kafka_ops.simulator.host import Failures, HostSpec, SimulatedHost, simulate_host

from ..checks.osusers import Users, broker_users  # noqa: F401
from ..checks.retention_hosts import NOW_MS, cli
from .browser import open_report

HORIZON = "8d"


@pytest.fixture(scope="module")
def demo(broker_users: Users) -> Iterator[tuple[SimulatedHost, list[str]]]:  # noqa: F811
    root = Path(tempfile.mkdtemp(prefix="kafka-ops-report-"))
    root.chmod(0o755)  # the broker user must traverse to its log dirs (PERM003 otherwise)
    u = broker_users.broker
    host = simulate_host(
        str(root / "host"),
        HostSpec(
            now_ms=NOW_MS, failures=Failures.all(), broker_user=u.name, broker_uid=u.uid, broker_gid=u.gid
        ),
    )
    args = [
        "--server-properties", host.server_properties, "--systemd-unit", host.systemd_unit,
        "--topic-configs", host.topic_configs, "--broker-log", host.server_log, "--broker-log", host.cleaner_log,
        "--broker-state", "stopped", "--kafka-version", "3.7.0", "--broker-user", u.name,
        "--now", str(NOW_MS), "--horizon", HORIZON,
    ]  # fmt: skip
    yield host, args
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="module")
def report_json(demo: tuple[SimulatedHost, list[str]], tmp_path_factory: pytest.TempPathFactory) -> Path:
    _, args = demo
    out = tmp_path_factory.mktemp("report") / "vm.json"
    r = cli("audit", *args, "--format", "json", "--output", str(out))
    assert r.returncode == 1, r.stderr  # critical findings: the gate fails
    return out


def embedded_data(html: str) -> dict[str, Any]:
    m = re.search(r'<script id="kafka-ops-data" type="application/json">(.*?)</script>', html, re.S)
    assert m is not None
    return json.loads(m.group(1))  # type: ignore[no-any-return]


def assert_charts_drew(charts: list[dict[str, Any]]) -> None:
    """Every series of every chart is on the page: bars as one SVG element per non-empty value (plus its
    legend icon), lines as a path through every point."""
    for c in charts:
        assert c["svg"] and c["width"] > 200, c["id"]
        for s in c["series"]:
            if s["type"] == "bar":
                assert s["expect"] > 0, (c["id"], s["name"])
                assert s["fill"] == s["expect"] + (1 if c["legend"] else 0), (c["id"], s)
            else:
                assert s["stroke"] >= 1 and s["vertices"] >= 2, (c["id"], s)
                if s["name"] != "no new data":  # a step line doubles its vertices, less where flat
                    assert s["vertices"] == s["points"], (c["id"], s)


def test_demo_host_report_in_chromium(report_json: Path, tmp_path: Path) -> None:
    report = json.loads(report_json.read_text())
    html = tmp_path / "report.html"
    r = cli("report", str(report_json), "-o", str(html))
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == f"wrote {html}: 1 report(s), {len(report['findings'])} finding(s)"
    shot = tmp_path / "report.png"
    run = open_report(html, shot)

    # offline and clean: no console message at all, no page error, no request but the page itself
    assert run.ready
    assert run.console == [] and run.page_errors == []
    assert run.requests == [html.resolve().as_uri()]
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 100_000

    # the next start in words, as the text output says it (the demo host's meta.properties name two clusters,
    # which the broker verifies before it loads any log: it exits over that before it meets lost+found)
    from kafka_ops.broker.plan import plan_sentences

    lines = plan_sentences(report["next_start"])
    assert lines[0].startswith("Next start (Kafka 3.7.0): the broker EXITS") and "[DIR002]" in lines[0]
    assert all(line.strip() in run.text for line in lines)

    # every chart drew every series
    assert_charts_drew(run.charts)
    kinds = [c["kind"] for c in run.charts]
    topics = sorted(t["topic"] for t in report["forecast"]["topics"])
    assert (
        kinds.count("findings")
        == kinds.count("retention")
        == kinds.count("disk")
        == kinds.count("recovery")
        == 1
    )
    assert sorted(c["topic"] for c in run.charts if c["kind"] == "topic") == topics

    # the retention chart: per topic what `kafka-ops forecast` deletes within the horizon, fallback apart (RET001)
    f = cli("forecast", *_inputs(report_json), "--format", "json")
    assert f.returncode == 0, f.stderr
    deleted: dict[tuple[str, bool], int] = {}
    fallback_sources = {"zero_padding", "unreadable", "mtime", "mtime_missing_timeindex"}
    for p in json.loads(f.stdout)["partitions"]:
        for s in p["segments"]:
            if s["in_horizon"]:
                key = (p["topic"], s["timestamp_source"] in fallback_sources)
                deleted[key] = deleted.get(key, 0) + s["bytes"]
    data = embedded_data(html.read_text())
    [ret] = [c for c in data["charts"] if c["kind"] == "retention"]
    assert {(s["topic"], s["fallback"]): sum(b or 0 for b in s["data"]) for s in ret["series"]} == deleted
    # seed 000 before it happens: RET001's segment is in the fallback series, in the bar of its deletion time
    [ret001] = [x for x in report["findings"] if x["check"] == "RET001"]
    [fb] = [s for s in ret["series"] if s["fallback"]]
    assert fb["topic"] == ret001["topic"]
    at = ret001["details"]["deleted_at_ms"]
    i = next(
        i
        for i, _ in enumerate(ret["bins"])
        if i + 1 == len(ret["bins"]) or at < NOW_MS // ret["bin_ms"] * ret["bin_ms"] + (i + 1) * ret["bin_ms"]
    )
    assert fb["data"][i] is not None and fb["data"][i] >= ret001["details"]["bytes"]
    [bar] = [
        s for c in run.charts if c["kind"] == "retention" for s in c["series"] if s["name"] == fb["name"]
    ]
    assert bar["fill"] == sum(1 for b in fb["data"] if b) + 1

    # the page says what the report says
    text = run.text
    assert "FAIL" in text and "do not start the rolling deploy" in text
    for sev, n in report["summary"].items():
        assert re.search(rf"\b{n}\s*\n?\s*{sev}\b", text), sev
    for c in {x["check"] for x in report["findings"]}:
        assert f"{c} doc page" in text
    for ld in report["log_dirs"]:
        assert ld["path"] in text
    assert "Nothing was skipped" in text
    fix = report["findings"][0]["remediation"]
    assert fix in text


def _inputs(report_json: Path) -> list[str]:
    """The audit's own inputs, read back from the report (what `kafka-ops forecast` needs to agree)."""
    rep = json.loads(report_json.read_text())
    i = rep["inputs"]
    return [
        "--server-properties", i["server_properties"]["value"], "--topic-configs", i["topic_configs"]["value"],
        "--broker-state", "stopped", "--kafka-version", "3.7.0", "--broker-user", i["broker_user"]["value"]["user"],
        "--now", str(NOW_MS), "--horizon", HORIZON,
    ]  # fmt: skip


def _comparable(data: dict[str, Any]) -> dict[str, Any]:
    """The page data without what differs between two audits of one host: where the report came from and the
    filesystem's free space (other processes write to it)."""
    text = json.dumps(data)
    for key in ("free_bytes", "free_inodes", "limit_bytes"):
        text = re.sub(rf'"{key}": \d+', f'"{key}": 0', text)
    text = re.sub(r'"source": "[^"]*"', '"source": ""', text)
    # free space also shows in words (DIR004's "fills in ...", the disk chart's limit): mask numbers in sentences
    text = re.sub(
        r'("(?:message|remediation|title|subtitle|text)": ")([^"\\]|\\.)*"',
        lambda m: re.sub(r"\d", "#", m.group(0)),
        text,
    )
    out = json.loads(text)
    out.pop("sources")
    return out  # type: ignore[no-any-return]


def test_audit_format_html_writes_the_same_page(
    demo: tuple[SimulatedHost, list[str]], report_json: Path, tmp_path: Path
) -> None:
    _, args = demo
    direct = tmp_path / "audit.html"
    r = cli("audit", *args, "--format", "html", "-o", str(direct))
    assert r.returncode == 1, r.stderr  # the gate's exit code, whatever the format
    # after the --now note; then the audit's summary and verdict lines
    assert r.stdout == "" and f"wrote {direct}" in r.stderr.strip().splitlines()
    # the verdict, then the findings that fail the gate (indented, one a line)
    said = [line for line in r.stderr.strip().splitlines() if not line.startswith("  ")]
    assert said[-1].startswith("kafka-ops audit: FAIL (--fail-on error): ")
    via = tmp_path / "via-report.html"
    assert cli("report", str(report_json), "-o", str(via)).returncode == 0
    a, b = (_comparable(embedded_data(p.read_text())) for p in (direct, via))
    assert a == b
    run = open_report(direct)
    assert run.console == [] and run.page_errors == [] and run.requests == [direct.resolve().as_uri()]
    assert_charts_drew(run.charts)
    assert {c["kind"] for c in run.charts} == {"findings", "retention", "topic", "disk", "recovery"}


def test_fleet_report_has_a_host_by_check_matrix(report_json: Path, tmp_path: Path) -> None:
    """Several reports make a fleet page; so does one report holding several hosts' findings (a fleet audit's)."""
    rep = json.loads(report_json.read_text())
    second = json.loads(report_json.read_text())
    second["host"] = "broker-2"
    second["findings"] = [dict(f, host="broker-2") for f in rep["findings"] if f["severity"] != "critical"]
    second["summary"] = {s: sum(1 for f in second["findings"] if f["severity"] == s) for s in rep["summary"]}
    second["gate"] = {"fail_on": "critical", "passed": True, "exit_code": 0}
    p2 = tmp_path / "broker-2.json"
    p2.write_text(json.dumps(second))
    combined = dict(rep, findings=rep["findings"] + [dict(f, host="broker-3") for f in rep["findings"][:3]])
    p3 = tmp_path / "fleet-audit.json"
    p3.write_text(json.dumps(combined))
    html = tmp_path / "fleet.html"
    r = cli("report", str(report_json), str(p2), str(p3), "-o", str(html))
    assert r.returncode == 0, r.stderr

    expected: dict[tuple[str, str], int] = {}
    for f in rep["findings"] + second["findings"] + combined["findings"]:
        host = f["host"]
        expected[(host, f["check"])] = expected.get((host, f["check"]), 0) + 1
    cells_js = """() => Array.from(document.querySelectorAll('#matrix tr')).slice(1).map((tr) => [
        tr.querySelector('th').textContent, Array.from(tr.querySelectorAll('td')).map((td) => [td.textContent, td.className])])"""
    header_js = "() => Array.from(document.querySelectorAll('#matrix th.check')).map((th) => th.textContent)"
    run = open_report(html, evaluate={"rows": cells_js, "checks": header_js})
    assert run.console == [] and run.page_errors == [] and run.requests == [html.resolve().as_uri()]
    assert_charts_drew(run.charts)
    checks = run.values["checks"]
    got = {}
    for host, cells in run.values["rows"]:
        for check, (count, cls) in zip(checks, cells, strict=True):
            if count != "·":
                got[(host, check)] = int(count)
                assert cls.split()[1] in {"critical", "error", "warning", "info"}
    assert got == expected
    hosts = [h for h, _ in run.values["rows"]]
    # worst first: then the most findings (broker-3 has 3 critical ones, broker-2 none)
    assert hosts == [rep["host"], "broker-3", "broker-2"]
    # the failing hosts are named; charts per report file
    assert "failing hosts: " + rep["host"] in run.text
    assert sum(1 for c in run.charts if c["kind"] == "retention") == 3


@pytest.mark.parametrize(
    ("content", "why"),
    [
        (None, "no such file"),
        ("not json {", "not JSON: Expecting value at line 1 column 1"),
        ('{"hello": 1}', "not a kafka-ops report (no schema_version/findings"),
        ('{"schema_version": 1, "findings": []}', "not a valid kafka-ops report: version: Field required"),
    ],
)
def test_bad_input_is_one_line_naming_the_file(
    report_json: Path, tmp_path: Path, content: str | None, why: str
) -> None:
    bad = tmp_path / "bad.json"
    if content is not None:
        bad.write_text(content)
    out = tmp_path / "x.html"
    r = cli("report", str(report_json), str(bad), "-o", str(out))
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.startswith(f"kafka-ops report: {bad}: {why}") and r.stderr.count("\n") == 1, r.stderr
    assert not out.exists()


def test_twenty_thousand_findings_page_is_paged_and_opens(report_json: Path, tmp_path: Path) -> None:
    """20,000 findings of one check: the page draws the first 8 and the rest 200 at a time on demand, so it opens
    (ready) within the browser test's timeout, and a click shows the next page."""
    import time

    report = json.loads(report_json.read_text())
    base = next(f for f in report["findings"] if f["check"] == "DIR001")
    many = [{**base, "path": f"/data/kafka-{i}", "log_dir": f"/data/kafka-{i}"} for i in range(20_000)]
    report["findings"] = many + [f for f in report["findings"] if f["check"] != "DIR001"]
    big = tmp_path / "big.json"
    big.write_text(json.dumps(report))
    html = tmp_path / "big.html"
    r = cli("report", str(big), "-o", str(html))
    assert r.returncode == 0, r.stderr
    t0 = time.monotonic()
    count = "() => document.querySelectorAll('#check-DIR001 .finding').length"
    run = open_report(
        html,
        evaluate={
            "before": count,
            "button": "() => document.getElementById('more-DIR001').textContent",
            "after": "() => { document.getElementById('more-DIR001').click(); "
            "return document.querySelectorAll('#check-DIR001 .finding').length; }",
        },
    )
    assert run.ready and run.page_errors == [] and time.monotonic() - t0 < 60
    assert run.values["before"] == 8 and run.values["after"] == 208
    assert run.values["button"] == "show 200 more of the 19992 other DIR001 finding(s)"
