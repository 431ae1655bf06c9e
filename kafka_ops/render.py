"""Render a report: a rich table grouped by severity, Markdown, JUnit XML (for CI systems), JSON."""

from __future__ import annotations

import json
from typing import Any
from xml.etree import ElementTree as ET

from kafka_ops.checks.base import SEVERITIES

ORDER = list(reversed(SEVERITIES))
STYLE = {"critical": "bold red", "error": "red", "warning": "yellow", "info": "cyan"}


def to_json(report: dict[str, Any]) -> str:
    return json.dumps(report, indent=2, default=str)


def to_table(report: dict[str, Any], console: Any) -> None:
    from rich.table import Table

    gate = report.get("gate") or {}
    verdict = "PASS" if gate.get("passed", True) else "FAIL"
    console.print(
        f"[bold]kafka-ops audit[/bold] of {report['host']} at {report['generated_at']} — broker {report['broker_state']}, "
        f"Kafka {report['kafka_version'] or 'unknown'} — gate (--fail-on {gate.get('fail_on', 'critical')}): "
        f"[{'green' if verdict == 'PASS' else 'bold red'}]{verdict}[/]"
    )
    for sev in ORDER:
        rows = [f for f in report["findings"] if f["severity"] == sev]
        if not rows:
            continue
        t = Table(title=f"{sev.upper()} ({len(rows)})", title_style=STYLE[sev], show_lines=True, expand=True)
        t.add_column("check", no_wrap=True)
        t.add_column("where", overflow="fold", max_width=40)
        t.add_column("what the broker will do, and why", overflow="fold")
        t.add_column("fix", overflow="fold")
        for f in rows:
            where = f["path"] or f["log_dir"] or f["host"] or ""
            if f.get("topic") is not None:
                where = (
                    f"{f['topic']}-{f['partition']}"
                    + (f" @{f['segment']}" if f.get("segment") is not None else "")
                    + f"\n{where}"
                )
            if report.get("fleet") and f.get("host"):  # fleet reports: every finding says its host
                where = f"[bold]{f['host']}[/]: {where}" if where != f["host"] else f"[bold]{where}[/]"
            t.add_row(f"[{STYLE[sev]}]{f['check']}[/]", where, f["message"], f["remediation"])
        console.print(t)
    counts = ", ".join(f"{report['summary'].get(s, 0)} {s}" for s in ORDER)
    console.print(f"Findings: {counts}.")
    for ld in report["log_dirs"]:
        console.print(
            f"  {ld['path']}: {ld['partitions']} partitions, {ld['segments']} segments, {ld['log_bytes']} bytes; "
            f"clean shutdown marker: {'yes' if ld['clean_shutdown'] else 'no'}"
        )
    for s in report["skipped"]:
        console.print(
            f"  [dim]skipped {s.get('check') or 'input ' + str(s.get('input'))}: {s['reason']}[/dim]"
        )
    for e in report.get("errors", []):
        console.print(f"  [yellow]{e['file']}: {e['error']}[/yellow]")


def to_markdown(report: dict[str, Any]) -> str:
    gate = report.get("gate") or {}
    out = [
        f"# kafka-ops audit: {report['host']}",
        "",
        f"- generated at: {report['generated_at']}; broker: {report['broker_state']}; Kafka: {report['kafka_version'] or 'unknown'}",
        f"- gate (`--fail-on {gate.get('fail_on', 'critical')}`): **{'PASS' if gate.get('passed', True) else 'FAIL'}**",
        "- findings: " + ", ".join(f"{report['summary'].get(s, 0)} {s}" for s in ORDER),
        "",
    ]
    for sev in ORDER:
        rows = [f for f in report["findings"] if f["severity"] == sev]
        if not rows:
            continue
        out += [f"## {sev} ({len(rows)})", "", "| check | where | what and why | fix |", "|---|---|---|---|"]
        for f in rows:
            where = f["path"] or f["log_dir"] or ""
            if report.get("fleet") and f.get("host"):
                where = f"{f['host']}: {where}"
            cells = [f["check"], where, f["message"], f["remediation"]]
            out.append("| " + " | ".join(c.replace("|", "\\|").replace("\n", " ") for c in cells) + " |")
        out.append("")
    if report["skipped"]:
        out += (
            ["## skipped", ""]
            + [
                f"- {s.get('check') or 'input ' + str(s.get('input'))}: {s['reason']}"
                for s in report["skipped"]
            ]
            + [""]
        )
    return "\n".join(out)


def to_junit(report: dict[str, Any], fail_on: str) -> str:
    """One testcase per check run; a finding at or above ``fail_on`` is a failure, below it system-out."""
    from kafka_ops.checks.base import at_least

    suite = ET.Element(
        "testsuite", name=f"kafka-ops audit {report['host']}", timestamp=report["generated_at"]
    )
    failures = 0
    by_check: dict[str, list[dict[str, Any]]] = {}
    for f in report["findings"]:
        by_check.setdefault(f["check"], []).append(f)
    for cid in report["checks_run"]:
        case = ET.SubElement(suite, "testcase", classname=f"kafka-ops.{report['host']}", name=cid)
        found = by_check.get(cid, [])
        failing = [f for f in found if at_least(f["severity"], fail_on)]
        if failing:
            failures += 1
            el = ET.SubElement(
                case,
                "failure",
                message=f"{len(failing)} finding(s) at or above {fail_on}",
                type=failing[0]["severity"],
            )
            el.text = "\n\n".join(
                f"[{f['severity']}] {f['path'] or ''}\n{f['message']}\nFix: {f['remediation']}"
                for f in failing
            )
        elif found:
            ET.SubElement(case, "system-out").text = "\n".join(
                f"[{f['severity']}] {f['message']}" for f in found
            )
    for s in report["skipped"]:
        if s.get("check"):
            case = ET.SubElement(suite, "testcase", classname=f"kafka-ops.{report['host']}", name=s["check"])
            ET.SubElement(case, "skipped", message=s["reason"])
    suite.set("tests", str(len(suite)))
    suite.set("failures", str(failures))
    suite.set("skipped", str(sum(1 for s in report["skipped"] if s.get("check"))))
    return ET.tostring(suite, encoding="unicode", xml_declaration=True)
