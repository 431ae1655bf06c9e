"""Render a report: text grouped by check (`table`), one line per finding (`brief`), Markdown, JUnit XML (for CI
systems), JSON. Waived findings are shown as waived in every one of them, and never fail the gate."""

from __future__ import annotations

import json
import textwrap
from typing import IO, Any
from xml.etree import ElementTree as ET

from kafka_ops.broker.plan import plan_sentences
from kafka_ops.checks.base import SEVERITIES, SEVERITY_RANK
from kafka_ops.engine.shell import printable

ORDER = list(reversed(SEVERITIES))
STYLE = {"critical": "bold red", "error": "red", "warning": "yellow", "info": "cyan"}
SHOWN_PATHS = 5  # paths listed per group of identical findings; -f json lists them all


def to_json(report: dict[str, Any]) -> str:
    return json.dumps(report, indent=2, default=str)


def write_json(report: dict[str, Any], stream: IO[str], chunk: int = 1 << 16) -> None:
    """The report as :func:`to_json` spells it, written as it is encoded: a report of 20,000 findings is never
    held a second time as one string (tens of MiB), and a reader of a pipe gets it as it comes."""
    buf: list[str] = []
    size = 0
    for piece in json.JSONEncoder(indent=2, default=str).iterencode(report):
        buf.append(piece)
        size += len(piece)
        if size >= chunk:
            stream.write("".join(buf))
            buf.clear()
            size = 0
    buf.append("\n")
    stream.write("".join(buf))


def one_line(text: str) -> str:
    """The text on one line, with whatever control characters or undecodable bytes a name brought in shown
    escaped (:func:`kafka_ops.engine.shell.printable`): a name cannot start a line or drive the terminal."""
    return printable(str(text).strip())


def markup_safe(text: object) -> str:
    """Text that goes through rich's markup (a table cell, a progress description, an f-string printed with
    markup): control characters escaped and ``[...]`` not taken as a style, so ``[bold red]`` in a name is shown
    as written."""
    from rich.markup import escape

    return escape(printable(text))


def where(report: dict[str, Any], f: dict[str, Any]) -> str:
    """The finding's path (or log dir, or topic, or host); fleet reports say the host first."""
    w = f.get("path") or f.get("log_dir") or _topic(f) or f.get("host") or ""
    w = printable(w)  # a path with a newline or an escape sequence stays on its line, inert
    if report.get("fleet") and f.get("host") and w != printable(f["host"]):
        w = f"{printable(f['host'])}:{w}"
    return w


def waived_text(f: dict[str, Any]) -> str:
    return f"waived: {one_line(f['waived_reason'])}" if f.get("waived_reason") else "waived"


def verdict(report: dict[str, Any]) -> str:
    """The gate's verdict in one line: PASS/FAIL, what decided it, and the counts of everything found."""
    gate = report.get("gate") or {}
    fail_on = gate.get("fail_on", "critical")
    above = [f for f in report["findings"] if SEVERITY_RANK[f["severity"]] >= SEVERITY_RANK.get(fail_on, 99)]
    failing = [f for f in above if not f.get("waived")]
    waived = len(above) - len(failing)
    counts = ", ".join(f"{report['summary'].get(s, 0)} {s}" for s in ORDER)
    waived_part = f", {waived} waived" if waived else ""
    if gate.get("passed", not failing):
        head = f"PASS (--fail-on {fail_on}): nothing at or above {fail_on} fails the gate{waived_part}"
    else:
        head = f"FAIL (--fail-on {fail_on}): {len(failing)} finding(s) at or above {fail_on}{waived_part}"
    return f"{head}; found {counts} — exit {gate.get('exit_code', 1 if failing else 0)}"


# ------------------------------------------------------------------------------------------------- brief
def to_brief(report: dict[str, Any]) -> str:
    """One line per finding, as linters write them: `path: CHECK severity message`; then the verdict."""
    lines = []
    for f in report["findings"]:
        mark = f" ({waived_text(f)})" if f.get("waived") else ""
        lines.append(f"{where(report, f)}: {f['check']} {f['severity']}{mark} {one_line(f['message'])}")
    lines.append(verdict(report))
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------------- table
def _normalised(f: dict[str, Any], text: str) -> str:
    """The text with what is particular to this finding (its path, log dir, partition) taken out, so that the
    same finding on several paths groups as one."""
    for value in (f.get("path"), f.get("log_dir")):
        if value:
            text = text.replace(value, "<path>")
    if f.get("topic") is not None and f.get("partition") is not None:
        text = text.replace(f"{f['topic']}-{f['partition']}", "<partition>")
    return text


def groups(report: dict[str, Any]) -> list[list[dict[str, Any]]]:
    """Findings grouped per check: the same severity, waiver, message and fix but for their paths."""
    out: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for f in report["findings"]:
        key = (
            -SEVERITY_RANK[f["severity"]], bool(f.get("waived")), f["check"], f.get("waived_reason") or "",
            _normalised(f, f["message"]), _normalised(f, f["remediation"]),
        )  # fmt: skip
        out.setdefault(key, []).append(f)
    return [out[k] for k in sorted(out, key=lambda k: (k[0], k[1], k[2]))]


def _topic(f: dict[str, Any]) -> str:
    if f.get("topic") is None:
        return ""
    return f"{f['topic']}-{f['partition']}" if f.get("partition") is not None else str(f["topic"])


def _partition(f: dict[str, Any]) -> str:
    """'orders-0 @420 ' before a path, for findings about a partition or segment that have one."""
    if f.get("topic") is None or not (f.get("path") or f.get("log_dir")):
        return ""
    seg = f" @{f['segment']}" if f.get("segment") is not None else ""
    return f"{printable(_topic(f))}{seg} "


def to_table(report: dict[str, Any], console: Any, width: int | None = None) -> None:
    """The findings grouped per check, each group's message word-wrapped (never inside a token) and its fix on
    one line so that commands paste whole; the log dirs, what was skipped, then the verdict in one line."""
    from rich.text import Text

    from kafka_ops.checks import load_all

    width = max(60, min(width or console.width, 120))
    titles = {cid: spec.title for cid, spec in load_all().items()}
    head = (
        f"kafka-ops audit of {printable(report['host'])} at {report['generated_at']} — broker {report['broker_state']}, "
        f"Kafka {report['kafka_version'] or 'unknown'}"
    )
    console.print(Text(head, style="bold"), soft_wrap=True)
    wrap = textwrap.TextWrapper(
        width=width,
        initial_indent="    ",
        subsequent_indent="    ",
        break_long_words=False,
        break_on_hyphens=False,
    )
    for g in groups(report):
        f = g[0]
        sev = f["severity"]
        count = f"{len(g)} findings" if len(g) > 1 else "1 finding"
        label = Text.assemble(
            "\n", (f"{sev.upper():<8} {f['check']}", STYLE[sev]), f"  {titles.get(f['check'], '')}  ",
            (f"[{count}{', ' + waived_text(f) if f.get('waived') else ''}]", "bold magenta" if f.get("waived") else "dim"),
        )  # fmt: skip
        console.print(label, soft_wrap=True)
        paths = [f"{_partition(x)}{where(report, x)}".strip() for x in g]
        shown = ", ".join(paths[:SHOWN_PATHS])
        more = f" (+{len(paths) - SHOWN_PATHS} more: -f json lists them)" if len(paths) > SHOWN_PATHS else ""
        console.print(Text(f"  {'where' if len(g) == 1 else 'each of'}: {shown}{more}"), soft_wrap=True)
        message = (
            f["message"]
            if len(g) == 1
            else f"{one_line(f['message'])} (said of {paths[0]}; the same for each)"
        )
        for line in wrap.wrap(one_line(message)):
            console.print(Text(line), soft_wrap=True)
        # the fix on one line: the terminal may fold it, but a copy of it pastes whole
        same = all(x["remediation"] == f["remediation"] for x in g)
        label = "  fix: " if same else f"  fix (for {paths[0]}; the same with each path): "
        console.print(Text.assemble((label, "bold"), one_line(f["remediation"])), soft_wrap=True)
    console.print("")
    for line in plan_sentences(report.get("next_start")):
        console.print(Text(one_line(line)), soft_wrap=True)
    for ld in report["log_dirs"]:
        console.print(
            Text(
                f"  {printable(ld['path'])}: {ld['partitions']} partitions, {ld['segments']} segments, {ld['log_bytes']} bytes; "
                f"clean shutdown marker: {'yes' if ld['clean_shutdown'] else 'no'}"
            ),
            soft_wrap=True,
        )
    for s in report["skipped"]:
        console.print(
            Text(
                one_line(f"  skipped {s.get('check') or 'input ' + str(s.get('input'))}: {s['reason']}"),
                style="dim",
            ),
            soft_wrap=True,
        )
    for e in report.get("errors", []):
        console.print(
            Text(f"  {printable(e['file'])}: {one_line(e['error'])}", style="yellow"), soft_wrap=True
        )
    gate = report.get("gate") or {}
    for w in gate.get("waivers") or []:
        if not w["matched"]:
            console.print(
                Text(one_line(f"  waiver {w['rule']} ({w['source']}) matched no finding"), style="yellow")
            )
    console.print(
        Text(verdict(report), style="bold green" if gate.get("passed", True) else "bold red"), soft_wrap=True
    )


# ---------------------------------------------------------------------------------------------- markdown
def to_markdown(report: dict[str, Any]) -> str:
    out = [
        f"# kafka-ops audit: {printable(report['host'])}",
        "",
        f"- generated at: {report['generated_at']}; broker: {report['broker_state']}; Kafka: {report['kafka_version'] or 'unknown'}",
        f"- **{verdict(report)}**",
        "",
    ]
    for sev in ORDER:
        rows = [f for f in report["findings"] if f["severity"] == sev]
        if not rows:
            continue
        out += [f"## {sev} ({len(rows)})", "", "| check | where | what and why | fix |", "|---|---|---|---|"]
        for f in rows:
            check = f"{f['check']} ({waived_text(f)})" if f.get("waived") else f["check"]
            cells = [check, where(report, f), f["message"], f["remediation"]]
            out.append("| " + " | ".join(one_line(c).replace("|", "\\|") for c in cells) + " |")
        out.append("")
    words = plan_sentences(report.get("next_start"))
    if words:
        out += ["## next start", "", one_line(words[0]), ""] + [f"- {one_line(w)}" for w in words[1:]] + [""]
    if report["skipped"]:
        out += (
            ["## skipped", ""]
            + [
                one_line(f"- {s.get('check') or 'input ' + str(s.get('input'))}: {s['reason']}")
                for s in report["skipped"]
            ]
            + [""]
        )
    return "\n".join(out)


# ------------------------------------------------------------------------------------------------- junit
def to_junit(report: dict[str, Any], fail_on: str) -> str:
    """One testcase per check run; a finding at or above ``fail_on`` is a failure, unless waived (then the case
    is skipped, saying so); findings below it are system-out."""
    from kafka_ops.checks.base import at_least

    suite = ET.Element(
        "testsuite", name=f"kafka-ops audit {printable(report['host'])}", timestamp=report["generated_at"]
    )
    failures = skipped = 0
    by_check: dict[str, list[dict[str, Any]]] = {}
    for f in report["findings"]:
        by_check.setdefault(f["check"], []).append(f)
    for cid in report["checks_run"]:
        case = ET.SubElement(suite, "testcase", classname=f"kafka-ops.{printable(report['host'])}", name=cid)
        found = by_check.get(cid, [])
        above = [f for f in found if at_least(f["severity"], fail_on)]
        failing = [f for f in above if not f.get("waived")]
        waived = [f for f in above if f.get("waived")]
        if failing:
            failures += 1
            el = ET.SubElement(
                case,
                "failure",
                message=f"{len(failing)} finding(s) at or above {fail_on}",
                type=failing[0]["severity"],
            )
            el.text = "\n\n".join(
                f"[{f['severity']}] {printable(f['path'] or '')}\n{one_line(f['message'])}\nFix: {one_line(f['remediation'])}"
                for f in failing
            )
        elif waived:
            skipped += 1
            reasons = sorted({waived_text(f) for f in waived})
            ET.SubElement(
                case,
                "skipped",
                message=printable(f"{len(waived)} finding(s) at or above {fail_on}, {'; '.join(reasons)}"),
            )
        if found and not failing:
            ET.SubElement(case, "system-out").text = "\n".join(
                f"[{f['severity']}{', ' + waived_text(f) if f.get('waived') else ''}] {one_line(f['message'])}"
                for f in found
            )
    for s in report["skipped"]:
        if s.get("check"):
            case = ET.SubElement(
                suite, "testcase", classname=f"kafka-ops.{printable(report['host'])}", name=s["check"]
            )
            ET.SubElement(case, "skipped", message=one_line(s["reason"]))
            skipped += 1
    suite.set("tests", str(len(suite)))
    suite.set("failures", str(failures))
    suite.set("skipped", str(skipped))
    return ET.tostring(suite, encoding="unicode", xml_declaration=True)
