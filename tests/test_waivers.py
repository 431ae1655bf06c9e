"""Waivers: `--waive CHECK[:PATH-GLOB]` and `--waive-file FILE`. Waived findings stay in the report (`waived`,
`waived_reason`, `waived_by`), are shown as waived in every format and do not fail the gate, as the
kafka_preflight role's `kafka_preflight_waived_checks`. A waiver that cannot be right is refused in one line."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

import pytest

from kafka_ops.render.models import validate
from kafka_ops.simulator.host import SimulatedHost

from .conftest import NOW_MS, tree
from .test_cli_contract import assert_one_line

Cli = Callable[..., tuple[int, str, str]]


def args(host: SimulatedHost, *extra: str) -> list[str]:
    return [
        "audit", "--server-properties", host.server_properties, "--topic-configs", host.topic_configs,
        "--systemd-unit", host.systemd_unit, "--broker-log", host.server_log, "--broker-log", host.cleaner_log,
        "--broker-state", "stopped", "--now", str(NOW_MS), "--kafka-version", "3.7.0", "--broker-user", "root",
        *extra,
    ]  # fmt: skip


def audit(cli: Cli, host: SimulatedHost, *extra: str) -> tuple[int, dict[str, Any], str]:
    # the threshold these tests waive against: critical (the default is error, test_gate_inputs.py)
    code, out, err = cli(
        *args(host, "-f", "json", *(extra if "--fail-on" in extra else (*extra, "--fail-on", "critical")))
    )
    report = json.loads(out)
    validate(report)
    return code, report, err


def role_failing(report: dict[str, Any], fail_on: str, waived_checks: list[str]) -> list[dict[str, Any]]:
    """What `kafka_preflight_waived_checks` meant when the role judged in Jinja (at or above the threshold, not a
    waived check id); the role now reads the collector's `gate.failing`, which must say the same."""
    at_or_above = {"info": ["info", "warning", "error", "critical"], "warning": ["warning", "error", "critical"],
                   "error": ["error", "critical"], "critical": ["critical"]}[fail_on]  # fmt: skip
    return [f for f in report["findings"] if f["severity"] in at_or_above and f["check"] not in waived_checks]


def test_a_waived_check_is_reported_but_does_not_fail_the_gate_as_in_the_role(
    cli: Cli, broken_host: SimulatedHost
) -> None:
    _, plain, _ = audit(cli, broken_host)
    criticals = sorted({f["check"] for f in plain["findings"] if f["severity"] == "critical"})
    assert len(criticals) > 3
    # waive all but one: the gate still fails, on exactly what the role would fail on
    some = criticals[:-1]
    code, report, _ = audit(cli, broken_host, *[a for c in some for a in ("--waive", c)])
    assert code == 1 and report["gate"]["passed"] is False
    failing = [f for f in report["findings"] if f["severity"] == "critical" and not f["waived"]]
    assert failing == [{**f, "waived": False} for f in role_failing(plain, "critical", some)]
    # what the role shows and fails on: one line per failing finding, in the same order
    assert [x.split(" ", 2)[:2] for x in report["gate"]["failing"]] == [
        [f["check"], f["severity"]] for f in failing
    ]
    # waive them all: the gate passes; nothing left the report
    code, report, _ = audit(cli, broken_host, *[a for c in criticals for a in ("--waive", c)])
    assert code == 0 and report["gate"]["passed"] is True and report["gate"]["exit_code"] == 0
    assert len(report["findings"]) == len(plain["findings"]) and report["summary"] == plain["summary"]
    # every waived finding, whatever its severity (IDX004 is critical or warning): the waivers' matched, summed
    assert report["gate"]["waived"] == sum(f["check"] in criticals for f in plain["findings"])
    assert report["gate"]["waived"] == sum(w["matched"] for w in report["gate"]["waivers"])
    for f in report["findings"]:
        assert f["waived"] is (f["check"] in criticals)
        if f["waived"]:
            assert f["waived_reason"] is None and f["waived_by"] == f"{f['check']} (--waive)"
    assert role_failing(plain, "critical", criticals) == []


def test_a_path_glob_waives_only_the_findings_it_matches(cli: Cli, broken_host: SimulatedHost) -> None:
    kafka1 = broken_host.log_dirs[0]
    code, report, _ = audit(cli, broken_host, "--waive", f"SHUT001:{kafka1}", "--waive", "DIR001:*/kafka-2")
    waived = {(f["check"], f["path"] or f["log_dir"]) for f in report["findings"] if f["waived"]}
    assert waived == {("SHUT001", kafka1), ("DIR001", broken_host.log_dirs[1])}
    assert code == 1  # the other log dir's SHUT001 and DIR001 still fail
    assert [w["matched"] for w in report["gate"]["waivers"]] == [1, 1]


def test_a_waive_file_with_comments_and_reasons(cli: Cli, broken_host: SimulatedHost, tmp_path: Path) -> None:
    wf = tmp_path / "waivers"
    wf.write_text(
        "# accepted risks, reviewed 2026-09-20\n"
        "\n"
        "DIR001            test hosts live on the root filesystem\n"
        f"shut001:{broken_host.log_dirs[1]}   # ticket OPS-42: replaced disk\n"
        "RET003:/nowhere/*  a stale waiver\n"
    )
    _, report, err = audit(cli, broken_host, "--waive-file", str(wf))
    by = {f["check"]: f for f in report["findings"] if f["waived"]}
    assert by["DIR001"]["waived_reason"] == "test hosts live on the root filesystem"
    assert by["DIR001"]["waived_by"] == f"DIR001 ({wf}:3)"
    assert by["SHUT001"]["waived_reason"] == "ticket OPS-42: replaced disk"
    assert report["gate"]["waivers"] == [
        {"rule": "DIR001", "reason": "test hosts live on the root filesystem", "source": f"{wf}:3", "matched": 2},
        {"rule": f"SHUT001:{broken_host.log_dirs[1]}", "reason": "ticket OPS-42: replaced disk",
         "source": f"{wf}:4", "matched": 1},
        {"rule": "RET003:/nowhere/*", "reason": "a stale waiver", "source": f"{wf}:5", "matched": 0},
    ]  # fmt: skip
    assert (
        f"kafka-ops audit: warning: waiver RET003:/nowhere/* ({wf}:5) matched no finding" in err.splitlines()
    )


def test_waived_findings_are_shown_as_waived_in_every_format(
    cli: Cli, broken_host: SimulatedHost, tmp_path: Path
) -> None:
    # DIR001 is a warning for a log dir on the root filesystem: gate on warnings to see the waiver matter
    waive = ["--waive", "DIR001 root fs on purpose", "--fail-on", "warning"]
    _, out, _ = cli(*args(broken_host, *waive))
    assert "[2 findings, waived: root fs on purpose]" in out
    _, out, _ = cli(*args(broken_host, *waive, "-f", "brief"))
    lines = [line for line in out.splitlines() if ": DIR001 " in line]
    assert len(lines) == 2 and all(
        ": DIR001 warning (waived: root fs on purpose) log dir " in x for x in lines
    )
    assert (
        out.splitlines()[-1].startswith("FAIL (--fail-on warning): ")
        and ", 2 waived;" in out.splitlines()[-1]
    )
    _, out, _ = cli(*args(broken_host, *waive, "-f", "markdown"))
    assert out.count("| DIR001 (waived: root fs on purpose) |") == 2
    _, out, _ = cli(*args(broken_host, *waive, "-f", "junit"))
    case = next(c for c in ET.fromstring(out) if c.get("name") == "DIR001")
    skipped = case.find("skipped")
    assert case.find("failure") is None and skipped is not None
    assert skipped.get("message") == "2 finding(s) at or above warning, waived: root fs on purpose"
    html = tmp_path / "r.html"
    cli(*args(broken_host, *waive, "-f", "html", "-o", str(html)))
    page = html.read_text()  # the page's data (drawn as a 'waived' badge on each finding)
    assert page.count('"waived":true,"waived_reason":"root fs on purpose"') == 2 and 'class: "waived"' in page


@pytest.mark.parametrize(
    ("waiver", "why"),
    [
        ("RETT001", "--waive: no check 'RETT001' (did you mean RET001"),
        ("PERM01:/data/*", "--waive: no check 'PERM01' (did you mean PERM001"),
        (
            "DIR001:",
            "--waive: 'DIR001:': the path glob after ':' is empty (give CHECK alone to waive all its findings)",
        ),
        ("nothing-like-it", "--waive: no check 'nothing-like-it' (`kafka-ops checks` lists them)"),
    ],
)
def test_a_waiver_that_cannot_be_right_is_refused(
    cli: Cli, broken_host: SimulatedHost, waiver: str, why: str
) -> None:
    before = tree(broken_host.root)
    code, out, err = cli(*args(broken_host, "--waive", waiver))
    assert code == 2 and out == ""
    assert_one_line(err, f"kafka-ops audit: {why}")
    assert tree(broken_host.root) == before


def test_a_waive_file_that_cannot_be_right_is_refused(
    cli: Cli, broken_host: SimulatedHost, tmp_path: Path
) -> None:
    bad = tmp_path / "waivers"
    bad.write_text("# fine\nDIR001 ok\nSHUT01 typo here\n")
    cases = {
        str(bad): f"--waive-file: {bad}:3: no check 'SHUT01' (did you mean SHUT001",
        str(tmp_path / "nope"): f"--waive-file: {tmp_path / 'nope'}: no such file",
        str(tmp_path): f"--waive-file: {tmp_path}: a directory, not a file",
    }
    for path, why in cases.items():
        code, out, err = cli(*args(broken_host, "--waive-file", path))
        assert code == 2 and out == ""
        assert_one_line(err, f"kafka-ops audit: {why}")
