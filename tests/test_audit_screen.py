"""The audit's text fits a screen (issue 21): `make demo`'s host at 80 columns in at most 120 lines, none wider,
its first 10 lines saying what is wrong and where; 20,000 findings of one check in well under 1,000 lines."""

from __future__ import annotations

import getpass
import io
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

Cli = Callable[..., tuple[int, str, str]]
SUMMARY = re.compile(
    r"^(?P<sev>CRITICAL|ERROR|WARNING|INFO) +(?P<check>[A-Z]+\d{3}) +(?P<count>\d+)  (?P<rest>.*)$"
)


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The host `make demo` builds: `kafka-ops simulate DIR --fail all`, in a tmp dir."""
    from kafka_ops.cli.framework import load_all

    root = tmp_path_factory.mktemp("demo") / "demo-host"
    assert load_all()(args=["simulate", str(root), "--fail", "all"], standalone_mode=False) in (0, None)
    return root


def demo_args(root: Path, *extra: str) -> list[str]:
    """The Makefile's demo audit (the broker user: the one running it, as `make demo` does when not root)."""
    return [
        "audit", "--server-properties", f"{root}/etc/kafka/server.properties",
        "--systemd-unit", f"{root}/etc/systemd/system/kafka.service",
        "--topic-configs", f"{root}/etc/kafka/topic-configs.json",
        "--broker-log", f"{root}/var/log/kafka/server.log", "--broker-log", f"{root}/var/log/kafka/log-cleaner.log",
        "--broker-state", "stopped", "--kafka-version", "3.7.0", "--broker-user", getpass.getuser(), *extra,
    ]  # fmt: skip


def narrow(line: str, width: int = 80) -> bool:
    """A line fits ``width`` columns, or holds one word only (a path wider than the line, whole on its own)."""
    return len(line) <= width or " " not in line.strip()


def test_the_demo_audit_at_80_columns_says_the_verdict_first_and_cuts_no_sentence_and_no_path(
    cli: Cli, demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import time

    from kafka_ops.render.text import sentences

    monkeypatch.setenv("COLUMNS", "80")
    now = ("--now", str(int(time.time() * 1000)))  # the same times in both reports' texts
    code, out, err = cli(*demo_args(demo, *now))
    lines = out.splitlines()
    assert code == 1
    assert all(narrow(line) for line in lines), [line for line in lines if not narrow(line)]
    # COLUMNS said: the gate's summary, verdict and failing findings wrap at it even into a pipe (a CI log read
    # at 80 columns); a note on how an option was read stays one line there, as an error does (say())
    gate = [line for line in err.splitlines() if "--now" not in line]
    assert all(narrow(line) for line in gate), [line for line in gate if not narrow(line)]
    # stderr on a terminal of 80 columns (a pipe here: one line per message): the notes, the summary, the
    # verdict and the failing findings, wrapped
    from .terminal import in_terminal

    out_file = demo.parent / "report.json"
    _, _, err = in_terminal(
        ["-m", "kafka_ops.cli", *demo_args(demo, *now, "-f", "json", "-o", str(out_file))], 80
    )
    assert "FAIL (--fail-on error)" in err and all(narrow(line) for line in err.splitlines()), err
    code, js, _ = cli(*demo_args(demo, "-f", "json", *now))
    report = json.loads(js)
    # the first 5 lines: which host, the counts, the verdict, and the next start's outcome in one line
    top = "\n".join(lines[:5])
    assert lines[0].startswith("kafka-ops audit of ") and "finding(s) of" in lines[1]
    assert "FAIL (--fail-on error): " in top and "— exit 1" in top
    assert "Next start (Kafka 3.7.0): the broker EXITS [DIR002]" in top
    # then one line per check, the most severe first, saying where
    rows = [m for m in map(SUMMARY.match, lines[:30]) if m]
    assert len(rows) >= 7
    critical = sorted({f["check"] for f in report["findings"] if f["severity"] == "critical"})
    assert len(critical) <= len(rows) and sorted(m["check"] for m in rows[: len(critical)]) == critical
    for m in rows:
        found = [
            f for f in report["findings"] if f["check"] == m["check"] and f["severity"] == m["sev"].lower()
        ]
        assert int(m["count"]) == len(found)
        first = found[0]
        place = m["rest"].rsplit("  ", 1)[1].removesuffix(f" +{len(found) - 1}")
        whole = first["path"] or first["log_dir"] or ""
        topic = f"{first['topic']}-{first['partition']}" if first["partition"] is not None else first["topic"]
        # a partition, or the path's last name whole: never a path cut in the middle
        assert whole.endswith("/" + place) or (topic and place.startswith(topic)), (m["check"], place)
    # each check's first finding: its first sentence and the first of its fix whole (wrapped, not cut); each
    # location on a line whole (a copy takes it in one piece)
    text = " ".join(" ".join(line.split()) for line in lines)
    seen = set()
    for f in report["findings"]:
        key = (f["check"], f["severity"])
        if key not in seen:
            seen.add(key)
            assert " ".join(sentences(f["message"])[0].split()) in text, f["check"]
            assert " ".join(sentences(f["remediation"])[0].split()) in text, f["check"]
    stripped = {line.strip().removeprefix("at ") for line in lines}
    assert all(f["path"] in stripped for f in report["findings"] if f["path"]), stripped
    # the verdict last too; what was left out is said, with how to see it whole
    verdict = max(i for i, line in enumerate(lines) if line.startswith("FAIL (--fail-on error)"))
    assert len(lines) - verdict <= 2 and lines[-1].endswith("— exit 1")
    assert "-v prints every finding whole" in out


def test_first_sentences_end_at_a_sentence_not_at_a_dot() -> None:
    from kafka_ops.render.text import sentences

    assert sentences("log dir /a/b.c is on / (ext4; 7.5 GiB free). Put it e.g. on /data. (KAFKA-1) Then.") == [
        "log dir /a/b.c is on / (ext4; 7.5 GiB free).", "Put it e.g. on /data.", "(KAFKA-1) Then.",
    ]  # fmt: skip
    assert sentences("it stops ('Invalid id in: /m.properties. Expected A, but read B') [DIR002]. Fix.") == [
        "it stops ('Invalid id in: /m.properties. Expected A, but read B') [DIR002].", "Fix.",
    ]  # fmt: skip


def test_a_location_wider_than_the_line_is_whole_on_a_line_of_its_own() -> None:
    from kafka_ops.render.text import table_lines

    report = many(2, same_text=True)
    deep = "/data/kafka-1/" + "a-very-long-topic-name-" * 4 + "0/00000000000000000420.timeindex"
    report["findings"][0]["path"] = deep
    lines = [line for line, _ in table_lines(report, 60)]
    assert deep in lines  # whole, alone, from the first column: wider than 60, the only such line
    assert [line for line in lines if len(line) > 60] == [deep]


def test_the_demo_audit_verbose_and_brief(cli: Cli, demo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    _, out, _ = cli(*demo_args(demo, "-v"))
    _, brief, _ = cli(*demo_args(demo, "-f", "brief"))
    lines = out.splitlines()
    assert all(narrow(line) for line in lines) and len(lines) > 120  # everything, wrapped
    assert "cut to fit" not in out
    assert len(brief.splitlines()) == len(json.loads(cli(*demo_args(demo, "-f", "json"))[1])["findings"]) + 1


def many(n: int, *, same_text: bool) -> dict[str, Any]:
    """A report of ``n`` PERM001 findings, one per partition (each its own message and fix unless same_text)."""
    findings = []
    for i in range(n):
        d = f"/data/kafka-1/topic-{i}"
        text = "/data/kafka-1/topic-x" if same_text else d
        findings.append({
            "check": "PERM001", "severity": "critical", "host": "h", "log_dir": "/data/kafka-1", "path": d,
            "topic": "topic", "partition": i, "segment": None,
            "message": f"broker user kafka (uid 999) cannot write {text} (root:root mode 0644). " + "Why. " * 60,
            "remediation": f"With the broker stopped: chown -R kafka:kafka {text} && chmod -R u+rwX {text}. " * 3,
            "details": {"count": 1},
        })  # fmt: skip
    return {
        "host": "h", "generated_at": "2026-11-26T17:19:11+00:00", "broker_state": "stopped", "kafka_version": "3.7.0",
        "summary": {"critical": n}, "findings": findings, "log_dirs": [], "skipped": [], "errors": [],
        "next_start": None, "gate": {"fail_on": "critical", "passed": False, "exit_code": 1},
    }  # fmt: skip


@pytest.mark.parametrize("same_text", [False, True])
def test_20000_findings_of_one_check_are_one_group_in_under_1000_lines(same_text: bool) -> None:
    from rich.console import Console

    from kafka_ops.render.text import table_lines, to_table

    report = many(20_000, same_text=same_text)
    lines = [line for line, _ in table_lines(report, 80)]
    assert len(lines) < 1000 and max(map(len, lines)) <= 80
    assert [line for line in lines if SUMMARY.match(line)] == [
        "CRITICAL PERM001 20000  Broker user cannot read and write a fil…  topic-0 +19999"
    ]
    at = lines.index("  at /data/kafka-1/topic-0")
    assert lines[at - 1 : at + 4] == [
        "CRITICAL PERM001 [20000 findings]",
        "  at /data/kafka-1/topic-0",
        "     /data/kafka-1/topic-1",
        "     /data/kafka-1/topic-2",
        "     and 19997 more (-v lists them all)",
    ]
    # -v: every location, each finding's own text (written as plain text when not a terminal)
    buf = io.StringIO()
    to_table(report, Console(file=buf, width=80), 80, verbose=True)
    text = buf.getvalue()
    assert all(f"  at /data/kafka-1/topic-{i}\n" in text for i in (0, 9_999, 19_999))
    assert text.count("  fix: ") == 20_000


def test_json_is_the_report_with_one_finding_a_line() -> None:
    from kafka_ops.render.text import write_json

    report = many(300, same_text=False)
    report["findings"][7]["message"] = 'a name with a newline\n and a quote " in it'
    buf = io.StringIO()
    write_json(report, buf, chunk=1000)
    text = buf.getvalue()
    assert json.loads(text) == report
    assert sum(1 for line in text.splitlines() if line.startswith('    {"check": "PERM001"')) == 300
    for empty in ({}, {"findings": []}):
        buf = io.StringIO()
        write_json(empty, buf)
        assert json.loads(buf.getvalue()) == empty
