"""What the audit prints: `brief` one line per finding like a linter, `table` findings grouped per check with
fixes that paste whole and a one-line verdict; waived findings are shown as waived in every format."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

import pytest

from kafka_ops.render.text import groups, one_line
from kafka_ops.simulator.host import SimulatedHost

from .conftest import NOW_MS

Cli = Callable[..., tuple[int, str, str]]
BRIEF = re.compile(r"^(?P<where>\S.*?): (?P<check>[A-Z]+\d{3}) (?P<severity>info|warning|error|critical)"
                   r"(?P<waived> \(waived(?::[^)]*)?\))? (?P<message>\S.*)$")  # fmt: skip
FREE = re.compile(r'"free_(?:bytes|inodes)": \d+')
# a filesystem's free space as DIR001/DIR004 word it: it moves between two audits on a busy machine
FREE_TEXT = re.compile(r"\d+(?:\.\d)? (?:B|KiB|MiB|GiB|TiB) free")


def same_free(message: str) -> str:
    return FREE_TEXT.sub("N free", message)


VERDICT = re.compile(r"^(PASS|FAIL) \(--fail-on \w+\): .* — exit [01]$")


def args(host: SimulatedHost, *extra: str) -> list[str]:
    return [
        "audit", "--server-properties", host.server_properties, "--topic-configs", host.topic_configs,
        "--systemd-unit", host.systemd_unit, "--broker-log", host.server_log, "--broker-log", host.cleaner_log,
        "--broker-state", "stopped", "--now", str(NOW_MS), "--kafka-version", "3.7.0", "--broker-user", "root",
        *extra,
    ]  # fmt: skip


@pytest.fixture(scope="module")
def report(broken_host: SimulatedHost) -> dict[str, Any]:
    import contextlib
    import io

    from kafka_ops.cli import main

    out = io.StringIO()
    with (
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(io.StringIO()),
        pytest.raises(SystemExit),
    ):
        main(args(broken_host, "-f", "json"))
    return json.loads(out.getvalue())  # type: ignore[no-any-return]


def test_brief_is_one_line_per_finding_then_the_verdict(
    cli: Cli, broken_host: SimulatedHost, report: dict[str, Any]
) -> None:
    code, out, _ = cli(*args(broken_host, "-f", "brief"))
    lines = out.splitlines()
    assert code == 1 and len(lines) == len(report["findings"]) + 1
    for line, f in zip(lines, report["findings"], strict=False):
        m = BRIEF.match(line)
        assert m, line
        assert (m["check"], m["severity"], same_free(m["message"])) == (
            f["check"],
            f["severity"],
            same_free(one_line(f["message"])),
        )
        assert m["where"] == (f["path"] or f["log_dir"] or f["topic"])
    assert VERDICT.match(lines[-1]) and lines[-1].startswith("FAIL (--fail-on error): ")


@pytest.mark.parametrize("columns", ["60", "100", "200"])
def test_table_groups_findings_per_check_and_wraps_to_the_width(
    cli: Cli,
    broken_host: SimulatedHost,
    report: dict[str, Any],
    monkeypatch: pytest.MonkeyPatch,
    columns: str,
) -> None:
    monkeypatch.setenv("COLUMNS", columns)
    code, out, _ = cli(*args(broken_host))
    assert code == 1
    lines = out.splitlines()
    # none wider, but a line of one word (a path wider than the width, whole on a line of its own)
    assert all(len(line) <= int(columns) or " " not in line.strip() for line in lines)
    # a summary line per check, in the order of the details: severity, id, count
    gs = groups(report)
    summary = [
        line for line in lines if re.match(r"^(CRITICAL|ERROR|WARNING|INFO) +[A-Z]+\d{3} +\d+  ", line)
    ]
    assert [line.split()[:3] for line in summary] == [
        [g[0]["severity"].upper(), g[0]["check"], str(len(g))] for g in gs
    ]
    # per check, not per path: both log dirs' SHUT001 (each recovers other segments) are one group of 2
    assert [len(g) for g in gs if g[0]["check"] == "SHUT001"] == [2]
    dirs = sorted(f["log_dir"] for f in report["findings"] if f["check"] == "DIR001")
    # (a path longer than the width wraps: compared without the wrap's line breaks and indent, as under
    # pytest-xdist, whose tmp paths are longer)
    unwrapped = "".join(out.split())
    assert len(dirs) == 2 and all("".join(d.split()) in unwrapped for d in dirs)
    # the verdict: the last lines, and under the counts at the top
    verdict_at = max(i for i, line in enumerate(lines) if line.startswith(("PASS (", "FAIL (")))
    assert VERDICT.match(" ".join(lines[verdict_at:])) and out.count("FAIL (--fail-on") == 2
    assert lines.index(lines[verdict_at]) < 5


def test_table_verbose_prints_every_finding_whole(
    cli: Cli, broken_host: SimulatedHost, report: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "160")  # wider than the longest path of the test's host
    code, out, _ = cli(*args(broken_host, "-v"))
    assert code == 1 and max(len(line) for line in out.splitlines()) <= 160
    words = set(out.split())
    for f in report["findings"]:
        assert (f["path"] or f["log_dir"] or f["topic"]) in out
        # no path, option or command is cut: every word (none is wider than a line here) is in the output whole
        if f["check"] in ("DIR001", "DIR004"):  # their free bytes change between the two runs
            continue
        for token in one_line(f["message"] + " " + f["remediation"]).split():
            assert token in words, (f["check"], token)
    assert "cut to fit" not in out  # (only the summary lines are cut to the width)


def test_table_lists_a_few_paths_of_a_large_group(report: dict[str, Any]) -> None:
    from rich.console import Console

    from kafka_ops.render.text import to_table

    many = dict(report)
    base = next(f for f in report["findings"] if f["check"] == "DIR001")
    many["findings"] = [
        {**base, "log_dir": f"/data/kafka-{i}", "path": f"/data/kafka-{i}",
         "message": base["message"].replace(base["log_dir"], f"/data/kafka-{i}"),
         "remediation": base["remediation"].replace(base["log_dir"], f"/data/kafka-{i}")}
        for i in range(12)
    ]  # fmt: skip
    console = Console(record=True, width=100)
    to_table(many, console)
    text = console.export_text()
    assert re.search(r"^WARNING  DIR001  12  .*  kafka-0 \+11$", text, re.M)
    header = "\nWARNING DIR001 [12 findings]\n"
    assert (
        f"{header}  at /data/kafka-0\n     /data/kafka-1\n     /data/kafka-2\n     and 9 more (-v lists them all)\n"
        in text
    )


def test_markdown_and_junit_show_the_verdict(cli: Cli, broken_host: SimulatedHost) -> None:
    code, out, _ = cli(*args(broken_host, "-f", "markdown"))
    assert code == 1 and "- **FAIL (--fail-on error): " in out
    code, out, _ = cli(*args(broken_host, "-f", "junit"))
    suite = ET.fromstring(out)
    assert code == 1 and int(suite.get("failures") or 0) >= 1


def test_json_to_a_file_is_the_printed_report_and_a_failed_write_leaves_no_half_file(
    cli: Cli, broken_host: SimulatedHost, tmp_path: Path
) -> None:
    code, out, _ = cli(*args(broken_host, "-f", "json"))
    target = tmp_path / "report.json"
    code2, out2, _ = cli(*args(broken_host, "-f", "json", "-o", str(target)))
    assert code == code2 == 1 and out2 == ""
    # the same report (but the free bytes of the disk, which other processes change between the two runs)
    assert same_free(re.sub(FREE, "", target.read_text())) == same_free(re.sub(FREE, "", out))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.json"]  # the temp file was renamed
    # a target in a dir that cannot be written: one line naming it, exit 2, and the old report stands
    target.write_text("previous")
    tmp_path.chmod(0o500)
    try:
        if os.access(tmp_path, os.W_OK):  # root writes anywhere: make the target a directory instead
            tmp_path.chmod(0o700)
            target.unlink()
            target.mkdir()
        code3, _, err3 = cli(*args(broken_host, "-f", "json", "-o", str(target)))
    finally:
        tmp_path.chmod(0o700)
    last = err3.strip().splitlines()[-1]  # (the line before says how --now was read)
    # (a directory at the name is refused before the audit runs: kafka_ops.engine.outputs)
    assert code3 == 2 and last.startswith(f"kafka-ops audit: {target}: ")
    assert "cannot write: " in last or "refused, not written: a directory, not a regular file" in last
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]
    assert target.is_dir() or target.read_text() == "previous"
