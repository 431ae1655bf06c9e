"""The page data from reports of other shapes: older reports (no projection), no forecast, a fleet audit's."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from kafka_ops.render.report import ReportError, build, load_report, render

from ..checks.retention_hosts import NOW_MS, TopicSpec, audit, simulate


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    host = simulate(
        tmp_path_factory.mktemp("data"), [TopicSpec("events", partitions=2, span_ms=9 * 86_400_000)]
    )
    r = audit(host)
    r["gate"] = {"fail_on": "critical", "passed": True, "exit_code": 0}
    return r


def test_report_without_projection_draws_the_forecast_only(report: dict[str, Any]) -> None:
    old = copy.deepcopy(report)
    del old["forecast"]["projection"]
    for t in old["forecast"]["topics"]:
        for k in ("projected_bytes", "arrival_bytes_per_s", "fallback_deletions", "fallback_deleted_bytes"):
            t.pop(k)
    data = build([old])
    [topics] = [c for c in data["charts"] if c["kind"] == "topics"]
    assert all(
        t["projected"] is None and t["no_new_data"][0] == [NOW_MS, t["bytes_now"]] for t in topics["topics"]
    )
    [disk] = [c for c in data["charts"] if c["kind"] == "disk"]
    assert not disk["projected"] and all(len(d["points"]) == 2 for d in disk["log_dirs"])
    [ret] = [c for c in data["charts"] if c["kind"] == "retention"]
    assert (
        ret["fallback_bytes"] == 0
        and sum(b or 0 for s in ret["series"] for b in s["data"]) == ret["deleted_bytes"] > 0
    )


def test_report_without_forecast_has_no_time_charts(report: dict[str, Any]) -> None:
    r = dict(report, forecast=None)
    kinds = {c["kind"] for c in build([r])["charts"]}
    assert kinds == {"recovery"} or kinds == set()
    assert "<!DOCTYPE html>" in render([r])


def test_fleet_audit_file_with_many_hosts_makes_a_matrix(report: dict[str, Any], tmp_path: Path) -> None:
    r = copy.deepcopy(report)
    r["findings"] = [
        {
            "check": "RET002",
            "severity": "info",
            "host": h,
            "message": "m",
            "remediation": "fix it",
            "details": {},
        }
        for h in ("b1", "b2", "b2")
    ] + [
        {
            "check": "SHUT001",
            "severity": "critical",
            "host": "b2",
            "message": "m",
            "remediation": "r",
            "details": {},
        }
    ]
    path = tmp_path / "fleet.json"
    path.write_text(json.dumps(r))
    data = build([load_report(path)])
    assert data["fleet"] and data["matrix"]["hosts"][:2] == ["b2", "b1"]
    cells = data["matrix"]["cells"]
    assert cells["b2"] == {
        "SHUT001": {"count": 1, "severity": "critical"},
        "RET002": {"count": 2, "severity": "info"},
    }
    assert cells["b1"] == {"RET002": {"count": 1, "severity": "info"}} and cells[r["host"]] == {}


def test_page_data_cannot_close_its_script_element(report: dict[str, Any]) -> None:
    r = copy.deepcopy(report)
    r["findings"] = [{"check": "DIR003", "severity": "critical", "message": "</script><script>alert(1)</script>",
                      "remediation": "<b>x</b> & y", "details": {}}]  # fmt: skip
    page = render([r])
    body = page.split('<script id="kafka-ops-data" type="application/json">', 1)[1].split("</script>", 1)[0]
    assert "alert(1)" in body and "<" not in body
    assert build([r])["checks"][0]["findings"][0]["message"] == "</script><script>alert(1)</script>"


def test_load_report_names_the_file(tmp_path: Path) -> None:
    p = tmp_path / "r.json"
    p.write_text("[1, 2]")
    with pytest.raises(ReportError, match=f"^{p}: not a kafka-ops report"):
        load_report(p)
