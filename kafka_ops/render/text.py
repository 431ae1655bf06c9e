"""Render a report: text that fits a screen, a summary line per check then the details per check (`table`), one
line per finding (`brief`), Markdown, JUnit XML (for CI systems), JSON. Waived findings are shown as waived in every one of them, and never fail the gate."""

from __future__ import annotations

import json
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
    above = [f for f in report["findings"] if at_least(f["severity"], fail_on)]
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
SHOWN_WHERE = 3  # locations listed per check in the details; -v lists them all
SCREEN = 110  # lines the table aims at (the prose of each check is cut to fit); -v prints everything
MIN_MSG = 1  # lines of a check's message shown however many checks there are
MIN_FIX = {"critical": 2, "error": 2, "warning": 1, "info": 1}  # and of its fix (the least severe cut first)
PLAN_LINES = 3  # lines of each next-start sentence (-v: all)


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
    """Where, in few characters: the partition (and segment) when there is one, else the path."""
    if f.get("topic") is not None:
        seg = f" @{f['segment']}" if f.get("segment") is not None else ""
        host = f"{printable(f['host'])}:" if report.get("fleet") and f.get("host") else ""
        return f"{host}{printable(_topic(f))}{seg}"
    return where(report, f)


def _cut_end(text: str, n: int) -> str:
    return text if len(text) <= n else text[: max(0, n - 1)] + "…"


def _cut_start(text: str, n: int) -> str:
    return text if len(text) <= n else "…" + text[len(text) - max(0, n - 1) :]


def _fit(left: str, right: str, room: int) -> str:
    """``left  right`` in ``room`` columns: the end of ``left`` and the start of ``right`` (the path's root) cut
    when they do not fit, ``right`` keeping at least about half of the room."""
    if len(left) + 2 + len(right) <= room:
        return f"{left}  {right}" if right else left
    if not right:
        return _cut_end(left, room)
    r = min(len(right), max(room - len(left) - 2, room * 45 // 100))
    return f"{_cut_end(left, room - 2 - r)}  {_cut_start(right, r)}"


def _wrapper(width: int, indent: str) -> textwrap.TextWrapper:
    # words whole (a path, an option, a command) unless one is wider than the line: then it is cut, so that
    # no line is wider than the terminal
    return textwrap.TextWrapper(
        width=width, initial_indent=indent, subsequent_indent=indent, break_long_words=True,
        break_on_hyphens=False,
    )  # fmt: skip


def _hard(text: str, first: str, width: int) -> list[str]:
    """``text`` after ``first``, on as many lines as it takes, cut at the width only (a path's spaces are no
    place to break it): a path that fits a line is on one line, whole."""
    indent = " " * len(first)
    room = max(10, width - len(first))
    return [(first if i == 0 else indent) + text[i : i + room] for i in range(0, max(len(text), 1), room)]


def _cut_lines(lines: list[str], n: int, width: int) -> list[str]:
    """The first ``n`` lines, the last one ending in ' …' when some were left out."""
    if len(lines) <= n:
        return lines
    kept = lines[:n]
    last = kept[-1]
    while len(last) + 2 > width and " " in last.strip():
        last = last.rsplit(" ", 1)[0]
    kept[-1] = last[: width - 2] + " …"
    return kept


def _pack(items: list[str], first: str, width: int) -> list[str]:
    """``items`` joined by ', ' on as few lines as keep each whole (one wider than a line is cut by
    :func:`_hard`), the first line after ``first``, the others indented as far."""
    lines: list[str] = []
    cur = first
    indent = " " * len(first)
    for item in items:
        lead = cur in (first, indent)
        if len(cur) + (0 if lead else 2) + len(item) <= width:
            cur += item if lead else f", {item}"
            continue
        if not lead:
            lines.append(cur + ",")
            cur = indent
        if len(cur) + len(item) <= width:
            cur += item
        else:
            *whole, cur = _hard(item, cur, width)
            lines += whole
    lines.append(cur)
    return lines


def _stamp(iso: str) -> str:
    """2026-11-26T17:19:11.400000+00:00 as 2026-11-26T17:19:11Z (the report keeps the whole)."""
    return iso[:19] + "Z" if iso.endswith("+00:00") and len(iso) >= 19 else iso


def table_lines(
    report: dict[str, Any], width: int = 80, verbose: bool = False
) -> list[tuple[str, str | None]]:
    """The table as (line, style) pairs, no line wider than ``width``: a summary first (one line per check:
    severity, id, count, title, where), then per check its first locations, its message and its fix wrapped
    (cut to fit about a screen, unless ``verbose``: then every finding whole), the next start, the log dirs,
    what was skipped, and the verdict last."""
    from kafka_ops.checks import load_all
    from kafka_ops.units import human_bytes

    width = max(40, width)
    titles = {cid: spec.title for cid, spec in load_all().items()}
    gs = groups(report)
    gate = report.get("gate") or {}
    plain = _wrapper(width, "")
    body = _wrapper(width, "  ")
    fixw = textwrap.TextWrapper(
        width=width, initial_indent="  fix: ", subsequent_indent="       ", break_long_words=True,
        break_on_hyphens=False,
    )  # fmt: skip
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
    # the summary: one line per check
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

    # the details of each check: header and where, then its message and fix (cut to fit, unless verbose)
    details: list[tuple[Lines, tuple[list[str], list[str]]]] = []
    for g in gs:
        f = g[0]
        sev = f["severity"]
        count = f"{len(g)} findings" if len(g) > 1 else "1 finding"
        waived = f", {waived_text(f)}" if f.get("waived") else ""
        header = f"{sev.upper()} {f['check']} [{count}{waived}]"
        if verbose:
            fixed = styled(["", *plain.wrap(header)], STYLE[sev])
            for x in g:
                fixed += styled(_hard(where(report, x), "  at ", width), "bold")
                fixed += styled(body.wrap(one_line(x["message"])))
                fixed += styled(fixw.wrap(one_line(x["remediation"])))
            details.append((fixed, ([], [])))
            continue
        shown = g[:SHOWN_WHERE]
        locs = [where(report, x) for x in shown]
        more = [f"and {len(g) - len(shown)} more (-v lists them all)"] if len(g) > len(shown) else []
        packed = _pack(locs + more, f"{header} at ", width)
        if len(packed) > 1 or not locs[0]:  # the header on a line of its own, the locations under it
            packed = plain.wrap(header) + _pack(locs + more, "  at ", width)
        fixed = [(packed[0], STYLE[sev]), *styled(packed[1:])]
        said = f" (said of {locs[0]}; the others alike)" if len(g) > 1 else ""
        details.append(
            (fixed, (body.wrap(one_line(f["message"]) + said), fixw.wrap(one_line(f["remediation"]))))
        )

    tail: Lines = [("", None)]
    cut_plan = False
    for line in plan_sentences(report.get("next_start")):
        wrapped = plain.wrap(one_line(line))
        cut_plan = cut_plan or (not verbose and len(wrapped) > PLAN_LINES)
        tail += styled(wrapped if verbose else _cut_lines(wrapped, PLAN_LINES, width))
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
        plain.wrap("(… cut to fit: -v prints every finding whole, -f json the whole report)"), "dim"
    )
    last = styled(plain.wrap(verdict(report)), "bold green" if gate.get("passed", True) else "bold red")
    # how many lines of each message and of each fix fit: the most that keep the whole within SCREEN lines,
    # the message cut first (the summary line has said what is wrong; the fix is what to do), the fixes of
    # warnings and infos further than those of errors and criticals
    fixed_n = len(out) + 1 + sum(len(d[0]) for d in details) + len(tail) + len(hint) + len(last)
    prose = [
        (len(p[0]), len(p[1]), MIN_FIX[g[0]["severity"]]) for g, (_, p) in zip(gs, details, strict=True) if p
    ]
    keep_msg = max((m for m, _, _ in prose), default=0)
    keep_fix = max((x for _, x, _ in prose), default=0)

    def total() -> int:
        return fixed_n + sum(min(m, keep_msg) + min(x, max(keep_fix, least)) for m, x, least in prose)

    while total() > SCREEN and (keep_msg > MIN_MSG or keep_fix > 1):
        if keep_msg > MIN_MSG and (keep_msg >= keep_fix or keep_fix <= 1):
            keep_msg -= 1
        else:
            keep_fix -= 1
    cut = cut_plan
    if details and not verbose:
        out.append(("", None))
    for g, (fixed, (msg, fix)) in zip(gs, details, strict=True):
        out += fixed
        if msg or fix:
            n_fix = max(keep_fix, MIN_FIX[g[0]["severity"]])
            cut = cut or len(msg) > keep_msg or len(fix) > n_fix
            out += styled(_cut_lines(msg, keep_msg, width))
            out += styled(_cut_lines(fix, n_fix, width))
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
