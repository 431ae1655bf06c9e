"""Render a report: text that fits a screen, a summary line per check then the details per check (`table`), one
line per finding (`brief`), Markdown, JUnit XML (for CI systems), JSON, Prometheus text (node_exporter textfile). Waived findings are shown as waived in every one of them, and never fail the gate."""

from __future__ import annotations

import json
import re
import textwrap
from typing import IO, Any
from xml.etree import ElementTree as ET

from kafka_ops.broker.plan import plan_sentences
from kafka_ops.checks.base import SEVERITIES, SEVERITY_RANK, at_least
from kafka_ops.engine.shell import printable

ORDER = list(reversed(SEVERITIES))
STYLE = {"critical": "bold red", "error": "red", "warning": "yellow", "info": "cyan"}


def to_json(report: dict[str, Any]) -> str:
    return json.dumps(report, indent=2, default=str)


def write_json(report: dict[str, Any], stream: IO[str], chunk: int = 1 << 16) -> None:
    """The report as JSON (what :func:`to_json` spells, but for white space), written as it is encoded: each
    finding on one line by the C encoder (the pure-Python one that ``indent`` needs took 40 s for 20,000
    findings), the rest indented; a large report is never held a second time as one string."""
    indented = json.JSONEncoder(indent=2, default=str)
    compact = json.JSONEncoder(default=str)  # no indent: json's C encoder
    buf: list[str] = ["{"]
    size = 0
    for i, (key, value) in enumerate(report.items()):
        buf.append(("," if i else "") + f"\n  {json.dumps(key)}: ")
        if key == "findings" and isinstance(value, list) and value:
            buf.append("[")
            for j, f in enumerate(value):
                piece = ("," if j else "") + "\n    " + compact.encode(f)
                buf.append(piece)
                size += len(piece)
                if size >= chunk:
                    stream.write("".join(buf))
                    buf.clear()
                    size = 0
            buf.append("\n  ]")
        else:
            # a JSON string holds no raw newline: every newline is the encoder's, indented one level deeper
            buf.append(indented.encode(value).replace("\n", "\n  "))
    buf.append("\n}\n" if report else "}\n")
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
    failing = [f for f in report["findings"] if at_least(f["severity"], fail_on) and not f.get("waived")]
    waived = sum(
        1 for f in report["findings"] if f.get("waived")
    )  # gate.waived's count: every waived finding
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
SHOWN_WHERE = 3  # locations listed per check in the details; -v lists them all


def groups(report: dict[str, Any]) -> list[list[dict[str, Any]]]:
    """Findings grouped per check (and severity, and waiver): the most severe first, then by check id."""
    out: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for f in report["findings"]:
        key = (-SEVERITY_RANK[f["severity"]], bool(f.get("waived")), f["check"], f.get("waived_reason") or "")
        out.setdefault(key, []).append(f)
    return [out[k] for k in sorted(out)]


def _topic(f: dict[str, Any]) -> str:
    if f.get("topic") is None:
        return ""
    return f"{f['topic']}-{f['partition']}" if f.get("partition") is not None else str(f["topic"])


def _short_where(report: dict[str, Any], f: dict[str, Any]) -> str:
    """Where, in few characters: the partition (and segment) when there is one, else the last name of the path
    (whole: a path cut in the middle is no place to go to; the details give it in full)."""
    if f.get("topic") is not None:
        seg = f" @{f['segment']}" if f.get("segment") is not None else ""
        host = f"{printable(f['host'])}:" if report.get("fleet") and f.get("host") else ""
        return f"{host}{printable(_topic(f))}{seg}"
    w = where(report, f)
    host, sep, path = w.rpartition(":") if report.get("fleet") and f.get("host") else ("", "", w)
    return host + sep + (path.rstrip("/").rsplit("/", 1)[-1] or path)


def _cut_end(text: str, n: int) -> str:
    return text if len(text) <= n else text[: max(0, n - 1)] + "…"


def _fit(left: str, right: str, room: int) -> str:
    """``left  right`` in ``room`` columns: ``right`` (a location) whole, the end of ``left`` (a title) cut when
    both do not fit."""
    if len(left) + 2 + len(right) <= room:
        return f"{left}  {right}" if right else left
    if not right:
        return _cut_end(left, room)
    return f"{_cut_end(left, max(room - 2 - len(right), 8))}  {right}"


def _wrapper(width: int, indent: str, first: str | None = None) -> textwrap.TextWrapper:
    # words whole: a path, an option or a command is never broken (one wider than the line is on a line of its
    # own, whole, where a copy takes it in one piece)
    return textwrap.TextWrapper(
        width=width, initial_indent=indent if first is None else first, subsequent_indent=indent,
        break_long_words=False, break_on_hyphens=False,
    )  # fmt: skip


def _hard(text: str, first: str, width: int) -> list[str]:
    """``text`` (a location) after ``first``; when it does not fit there, ``first`` on a line of its own and the
    location whole on the next, from its first column: never broken, so that a copy takes it in one piece."""
    if len(first) + len(text) <= width:
        return [first + text]
    indent = " " * len(first)
    if len(indent) + len(text) <= width:
        return [first.rstrip(), indent + text]
    return [first.rstrip(), text]


# the end of a sentence: . ! or ? and a space before a capital, a quote, a backquote or an opening parenthesis
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`'\"(\[])")


def sentences(text: str) -> list[str]:
    """``text`` in sentences (a dot inside a path, a number or 'e.g.', or inside parentheses, ends none)."""
    out: list[str] = []
    start = 0
    for m in _SENTENCE_END.finditer(text):
        piece = text[start : m.start()]
        if piece.count("(") + piece.count("[") > piece.count(")") + piece.count("]"):
            continue  # a quoted message's sentence, inside the parentheses that hold it
        out.append(piece)
        start = m.end()
    out.append(text[start:])
    return [p for p in out if p]


def next_start_line(ns: dict[str, Any] | None) -> str | None:
    """The next start's outcome in one line (the text report's top; the whole plan is at its end)."""
    if not ns:
        return None
    v = f"Kafka {ns['kafka_version']}" if ns.get("kafka_version") else "Kafka version unknown"
    if ns.get("broker") is None:
        return f"Next start ({v}): {ns.get('reason') or 'no plan'}"
    if ns["broker"] in ("exits", "hangs"):
        return f"Next start ({v}): the broker {ns['broker'].upper()} [{ns['check']}] (why: below)"
    offline = sum(1 for d in ns.get("log_dirs", []) if d.get("state") == "offline")
    changed = len(ns.get("segments") or [])
    parts = [f"{offline} log dir(s) go OFFLINE"] if offline else []
    parts += [f"{changed} segment(s) change (below)"] if changed else []
    return f"Next start ({v}): the broker starts" + (f"; {', '.join(parts)}" if parts else "")


def _stamp(iso: str) -> str:
    """2026-11-26T17:19:11.400000+00:00 as 2026-11-26T17:19:11Z (the report keeps the whole)."""
    return iso[:19] + "Z" if iso.endswith("+00:00") and len(iso) >= 19 else iso


def table_lines(
    report: dict[str, Any], width: int = 80, verbose: bool = False
) -> list[tuple[str, str | None]]:
    """The table as (line, style) pairs, no line wider than ``width`` but one holding a single word (a path)
    wider than it, whole. First what a person at 3 a.m. needs: the host, the counts, the verdict and the next
    start's outcome, then one line per check (severity, id, count, title, where); then per check its locations
    (on lines of their own, never broken), the first sentence of its message and of its fix, whole (``verbose``:
    every finding, each with its whole text); the next start, the log dirs, what was skipped; the verdict last."""
    from kafka_ops.checks import load_all
    from kafka_ops.units import human_bytes

    width = max(40, width)
    titles = {cid: spec.title for cid, spec in load_all().items()}
    gs = groups(report)
    gate = report.get("gate") or {}
    plain = _wrapper(width, "")
    body = _wrapper(width, "  ")
    fixw = _wrapper(width, "       ", "  fix: ")
    Lines = list[tuple[str, str | None]]

    def styled(lines: list[str], style: str | None = None) -> Lines:
        return [(line, style) for line in lines]

    head = (
        f"kafka-ops audit of {printable(report['host'])} at {_stamp(report['generated_at'])} — broker "
        f"{report['broker_state']}, Kafka {report['kafka_version'] or 'unknown'}"
    )
    out = styled(plain.wrap(head), "bold")
    n = len(report["findings"])
    counts = ", ".join(f"{report['summary'].get(s, 0)} {s}" for s in ORDER if report["summary"].get(s))
    out += styled(plain.wrap(f"{n} finding(s) of {len(gs)} check(s): {counts}" if n else "nothing found"))
    verdict_style = "bold green" if gate.get("passed", True) else "bold red"
    last = styled(plain.wrap(verdict(report)), verdict_style)
    out += last
    outcome = next_start_line(report.get("next_start"))
    if outcome:
        out += styled(plain.wrap(one_line(outcome)), "bold")
    # the summary: one line per check
    if gs:
        out.append(("", None))
    num = max((len(str(len(g))) for g in gs), default=1)
    for g in gs:
        f = g[0]
        sev = f["severity"]
        left = f"{sev.upper():<8} {f['check']:<7} {len(g):>{num}}  "
        title = one_line(titles.get(f["check"], ""))
        if f.get("waived"):
            title = f"({waived_text(f)}) {title}"
        loc = _short_where(report, f) + (f" +{len(g) - 1}" if len(g) > 1 else "")
        out.append((left + _fit(title, loc, width - len(left)), STYLE[sev]))

    # the details of each check: its header, its locations, then its message and its fix
    cut = False
    for g in gs:
        f = g[0]
        sev = f["severity"]
        count = f"{len(g)} findings" if len(g) > 1 else "1 finding"
        waived = f", {waived_text(f)}" if f.get("waived") else ""
        out += styled(["", *plain.wrap(f"{sev.upper()} {f['check']} [{count}{waived}]")], STYLE[sev])
        if verbose:
            for x in g:
                out += styled(_hard(where(report, x), "  at ", width), "bold")
                out += styled(body.wrap(one_line(x["message"])))
                out += styled(fixw.wrap(one_line(x["remediation"])))
            continue
        shown = g[:SHOWN_WHERE]
        locs = [where(report, x) for x in shown if where(report, x)]
        more = [f"and {len(g) - len(shown)} more (-v lists them all)"] if len(g) > len(shown) else []
        for i, loc in enumerate(locs + more):  # one a line: a copy takes it whole, with no comma
            out += styled(_hard(loc, "     " if i else "  at ", width))
        msg, fix = sentences(one_line(f["message"])), sentences(one_line(f["remediation"]))
        said = " (said of the first; the others alike)" if len(g) > 1 else ""
        cut = cut or len(msg) > 1 or len(fix) > 1
        # the first sentence whole, never cut: what is wrong, and what to do
        out += styled(body.wrap((msg[0] if msg else "") + said + (" …" if len(msg) > 1 else "")))
        if fix:
            out += styled(fixw.wrap(fix[0] + (" …" if len(fix) > 1 else "")))

    tail: Lines = [("", None)]
    for line in plan_sentences(report.get("next_start")):
        tail += styled(plain.wrap(one_line(line)))
    for ld in report["log_dirs"]:
        text = (
            f"{printable(ld['path'])}: {ld['partitions']} partitions, {ld['segments']} segments, "
            f"{human_bytes(ld['log_bytes'])}; clean shutdown: {'yes' if ld['clean_shutdown'] else 'no'}"
        )
        tail += styled(body.wrap(text))
    for s in report["skipped"]:
        tail += styled(
            body.wrap(one_line(f"skipped {s.get('check') or 'input ' + str(s.get('input'))}: {s['reason']}")),
            "dim",
        )
    for e in report.get("errors", []):
        tail += styled(body.wrap(f"{printable(e['file'])}: {one_line(e['error'])}"), "yellow")
    for w in gate.get("waivers") or []:
        if not w["matched"]:
            tail += styled(
                body.wrap(one_line(f"waiver {w['rule']} ({w['source']}) matched no finding")), "yellow"
            )
    hint = styled(
        plain.wrap("(… the rest of a text: -v prints every finding whole, -f json the whole report)"), "dim"
    )
    return out + tail + (hint if cut else []) + last


def to_table(report: dict[str, Any], console: Any, width: int | None = None, verbose: bool = False) -> None:
    """The table (:func:`table_lines`) on a rich console: styles only when it is a terminal; every line has been
    wrapped to ``width`` (default: the console's) so rich wraps nothing and takes no markup from names."""
    from rich.text import Text

    lines = table_lines(report, width or console.width, verbose)
    if not console.is_terminal and not console.record:
        # plain text, as rich would print it here, without its cost per line (-v of 20,000 findings)
        console.file.write("".join(line + "\n" for line, _ in lines))
        return
    for line, style in lines:
        console.print(Text(line, style=style or ""), soft_wrap=True)


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


# -------------------------------------------------------------------------------------------- prometheus
def _label(value: object) -> str:
    """A label value as the exposition format writes it: backslash, double quote and newline escaped."""
    return str(value).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def to_prometheus(report: dict[str, Any], duration_s: float | None = None) -> str:
    """The audit as node_exporter's textfile collector reads it (the Prometheus text exposition format,
    version 0.0.4): findings by check and severity, the gate, the next start's outcome, when the audit ran and
    how long it took; an alert on ``kafka_ops_next_start_exits == 1`` or ``kafka_ops_gate_passed == 0``
    fires before anyone restarts the broker."""
    from datetime import datetime

    from kafka_ops.checks.base import SEVERITIES

    out: list[str] = []

    def metric(name: str, help_text: str, samples: list[tuple[dict[str, object], float]]) -> None:
        out.append(f"# HELP {name} {help_text}")
        out.append(f"# TYPE {name} gauge")
        for labels, value in samples:
            text = ",".join(f'{k}="{_label(v)}"' for k, v in labels.items())
            number = repr(float(value)) if isinstance(value, float) else str(int(value))
            out.append(f"{name}{{{text}}} {number}" if text else f"{name} {number}")

    gate = report.get("gate") or {}
    metric("kafka_ops_audit_info", "The audited host, broker state and Kafka version (always 1).", [(
        {"host": printable(report["host"]), "broker_state": report["broker_state"],
         "kafka_version": report.get("kafka_version") or "unknown"}, 1,
    )])  # fmt: skip
    fleet = bool(report.get("fleet"))  # a fleet's findings are each of a host: labelled with it
    by: dict[tuple[str, str, bool, str], int] = {}
    for f in report["findings"]:
        key = (
            f["check"],
            f["severity"],
            bool(f.get("waived")),
            printable(f.get("host") or "") if fleet else "",
        )
        by[key] = by.get(key, 0) + 1
    metric(
        "kafka_ops_findings",
        "Findings of the audit by check and severity (waived: acknowledged, not failing the gate).",
        [
            ({"check": c, "severity": s, "waived": str(w).lower(), **({"host": h} if fleet else {})}, n)
            for (c, s, w, h), n in sorted(by.items())
        ],
    )
    metric(
        "kafka_ops_severity_findings",
        "Findings of the audit by severity, waived ones included (0 when none: an alert can compare).",
        [({"severity": s}, report["summary"].get(s, 0)) for s in reversed(SEVERITIES)],
    )
    metric(
        "kafka_ops_gate_passed",
        "1 when nothing at or above --fail-on was found but what is waived, else 0.",
        [({"fail_on": gate.get("fail_on", "critical")}, 1 if gate.get("passed", True) else 0)],
    )
    metric("kafka_ops_waived_findings", "Findings the waivers matched.", [({}, gate.get("waived", 0))])
    ns = report.get("next_start") or {}
    known = ns.get("broker") is not None
    exits = ns.get("broker") == "exits"
    metric(
        "kafka_ops_next_start_known",
        "1 when the audit could say what the next start does (the plan needs the log dirs and a version).",
        [({}, 1 if known else 0)],
    )
    metric(
        "kafka_ops_next_start_exits",
        "1 when the broker's next start would exit (the check saying why as a label), else 0.",
        [({"check": ns.get("check") or ""} if exits else {}, 1 if exits else 0)],
    )
    offline = sum(1 for d in ns.get("log_dirs", []) if d.get("state") == "offline")
    metric("kafka_ops_next_start_offline_log_dirs", "Log dirs the next start takes offline.", [({}, offline)])
    metric(
        "kafka_ops_next_start_changed_segments",
        "Segments the next start recovers, rebuilds, does not load, or deletes (retention within the horizon).",
        [({}, len(ns.get("segments") or []))],
    )
    metric(
        "kafka_ops_checks_skipped",
        "Checks the audit skipped (an input missing: the report says which and why).",
        [({}, sum(1 for s in report["skipped"] if s.get("check")))],
    )
    stamp = datetime.fromisoformat(report["generated_at"].replace("Z", "+00:00")).timestamp()
    metric(
        "kafka_ops_audit_timestamp_seconds", "When the audit ran, in seconds since the epoch.", [({}, stamp)]
    )
    if duration_s is not None:
        metric("kafka_ops_audit_duration_seconds", "How long the audit took.", [({}, round(duration_s, 3))])
    return "\n".join(out) + "\n"
