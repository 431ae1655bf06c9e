"""Issue 20 in the HTML report: a log dir, topic or host named as HTML is shown as text in real Chromium, its
script never runs (not even from a chart's tooltip), the page's CSP runs only the page's own scripts (by hash),
and the charts still draw."""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from kafka_ops.render.report.html import script_hashes

from ..checks.hostile_hosts import HTML_DIR, HostileHost, hostile_host
from ..checks.retention_hosts import cli
from .browser import open_report
from .test_report_html import assert_charts_drew

HOST = "<script>window.__pwned=2;document.title='PWNED'</script>"
MESSAGE_HTML = "<img src=x onerror=window.__pwned=3>"

# show every tooltip of every chart (the recovery chart's formatter returns HTML with the log dir's path)
TOOLTIPS_JS = """() => window.kafkaOpsCharts.map((c) => {
  const root = document.getElementById(c.id);
  const inst = echarts.getInstanceByDom(root);
  const seen = [];
  for (let s = 0; s < 4; s++) for (let i = 0; i < 6; i++) {
    inst.dispatchAction({ type: "showTip", seriesIndex: s, dataIndex: i });
    const tip = Array.from(root.querySelectorAll("div")).find((d) => d.style.zIndex && d.textContent);
    if (tip) seen.push(tip.textContent);
  }
  return { id: c.id, kind: c.kind, tips: seen };
})"""
STATE_JS = """() => ({ pwned: window.__pwned === undefined ? null : window.__pwned, title: document.title,
  imgs: document.querySelectorAll("img").length, scripts: document.scripts.length,
  csp: document.querySelector("meta[http-equiv='Content-Security-Policy']").content })"""
# an inline handler that got into the DOM anyway: the CSP must refuse to run it
CSP_PROBE_JS = """() => new Promise((done) => {
  const d = document.createElement("div");
  d.innerHTML = '<img src="data:," onerror="window.__csp_probe=1">';
  document.body.append(d);
  setTimeout(() => done(window.__csp_probe === undefined ? null : window.__csp_probe), 500);
})"""


@pytest.fixture(scope="module")
def hostile() -> Iterator[HostileHost]:
    root = Path(tempfile.mkdtemp(prefix="kafka-ops-hostile-report-"))
    yield hostile_host(root)
    shutil.rmtree(root, ignore_errors=True)


def test_hostile_names_are_text_and_run_no_script(hostile: HostileHost, tmp_path: Path) -> None:
    out = tmp_path / "audit.json"
    r = cli("audit", *hostile.audit_args(None), "--format", "json", "--output", str(out))
    assert r.returncode == 1, r.stderr
    report = json.loads(out.read_text())
    report["findings"] = [
        dict(f, host=HOST) if f.get("host") == report["host"] else f for f in report["findings"]
    ]
    report["host"] = HOST
    report["findings"][0]["message"] += " " + MESSAGE_HTML
    out.write_text(json.dumps(report))
    html = tmp_path / "report.html"
    r = cli("report", str(out), "-o", str(html))
    assert r.returncode == 0, r.stderr
    page = html.read_text()

    # the CSP: no inline script but the page's own two, by hash; the hashes are those of the scripts in the file
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]*)"', page)
    assert csp is not None
    script_src = next(d for d in csp.group(1).split(";") if d.strip().startswith("script-src")).split()[1:]
    assert "'unsafe-inline'" not in script_src and "'unsafe-eval'" not in script_src
    assert script_src == script_hashes(page) and len(script_src) == 2

    run = open_report(html, evaluate={"tips": TOOLTIPS_JS, "state": STATE_JS, "probe": CSP_PROBE_JS})
    assert run.ready and run.page_errors == []
    state = run.values["state"]
    # nothing the names carried ran: no flag, the title is the host name as text, no <img> was made
    assert state["pwned"] is None
    assert state["title"] == f"kafka-ops report: {HOST}"
    assert state["imgs"] == 0 and state["scripts"] == 3
    # the names are on the page as written
    assert HTML_DIR in run.text and MESSAGE_HTML in run.text and HOST in run.text
    # the recovery chart's tooltips were shown, with the path as text
    tips = {t["kind"]: t["tips"] for t in run.values["tips"]}
    assert tips["recovery"] and all(HTML_DIR in t for t in tips["recovery"])
    assert_charts_drew(run.charts)
    # an inline handler put into the DOM is refused by the CSP (the one console message of the run)
    assert run.values["probe"] is None
    assert run.console and all("Content Security Policy" in text for _, text in run.console), run.console
