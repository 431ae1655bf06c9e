"""The README is the landing page: under 15 KB, its links resolve, and what it tells a user to type works.

Every ``kafka-ops ...`` command line of its shell blocks runs against the demo host (``kafka-ops simulate
demo-host --fail all``) with the exit code the line documents (``# exit 1``; 0 when it says none); the broker
host's paths (/etc/kafka, /etc/systemd/system, /var/log/kafka) are the demo host's. The CI gate recipe's job
runs as written but for the install line (kafka-ops is this checkout) and its site paths. Only the README's
commands: docs/ pages hold transcripts of real runs that are not re-run here (too slow).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
LIMIT = 15_000  # bytes
HOST_PATHS = {  # a broker host's files -> the demo host's
    "/etc/kafka/": "demo-host/etc/kafka/",
    "/etc/systemd/system/": "demo-host/etc/systemd/system/",
    "/var/log/kafka/": "demo-host/var/log/kafka/",
}
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)


def blocks(lang: str) -> list[str]:
    return [body for kind, body in FENCE.findall(README.read_text(encoding="utf-8")) if kind == lang]


def command_lines() -> list[str]:
    """The README's `kafka-ops ...` command lines (continuations joined, a leading `sudo ` or `$ ` dropped)."""
    out = []
    for body in blocks("sh") + blocks("console"):
        for line in body.replace("\\\n", " ").splitlines():
            line = re.sub(r"^(\$ )?(sudo )?", "", line.strip())
            if line.startswith("kafka-ops "):
                out.append(line)
    return out


def expected_exit(line: str) -> int:
    comment = line.split("#", 1)[1] if "#" in line else ""
    m = re.search(r"\bexit (\d)\b", comment)
    return int(m.group(1)) if m else 0


def on_demo_host(text: str) -> str:
    for real, demo in HOST_PATHS.items():  # absolute paths only, not the demo host's own
        text = re.sub(rf"(?<![\w./-]){re.escape(real)}", demo, text)
    return text


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """A directory holding demo-host/, and an environment whose `kafka-ops` is this checkout's."""
    cwd = tmp_path_factory.mktemp("readme")
    bindir = cwd / "bin"
    bindir.mkdir()
    shim = bindir / "kafka-ops"
    shim.write_text(f'#!/bin/sh\nexec {sys.executable} -m kafka_ops "$@"\n')
    shim.chmod(0o755)
    env = dict(
        os.environ, PATH=f"{bindir}{os.pathsep}{os.environ['PATH']}", PYTHONPATH=str(ROOT), COLUMNS="110"
    )
    env.pop("KAFKA_OPS_DEBUG", None)
    subprocess.run(["kafka-ops", "simulate", "demo-host", "--fail", "all"], cwd=cwd, env=env, check=True,
                   capture_output=True)  # fmt: skip
    return cwd, env


def test_readme_is_a_landing_page_under_15_kb() -> None:
    size = len(README.read_bytes())
    assert size < LIMIT, f"README.md is {size} bytes: move the detail to docs/ (limit {LIMIT})"
    text = README.read_text(encoding="utf-8")
    for section in ("## Install", "## A 5-minute tour", "## On your broker host", "## Exit codes and formats",
                    "## A CI gate", "## Ansible in four commands"):  # fmt: skip
        assert f"\n{section}\n" in text, section


def test_links_of_the_readme_and_docs_resolve() -> None:
    """What moved from the README to docs/ kept its links working (relative to the page that holds them)."""
    pages = [README, *sorted((ROOT / "docs").rglob("*.md"))]
    assert len(pages) > 15
    missing = []
    for page in pages:
        links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", page.read_text(encoding="utf-8"))
        if page == README:
            assert len(links) > 20
        missing += [
            f"{page.relative_to(ROOT)}: {t}"
            for t in links
            if not re.match(r"[a-z]+:", t) and not (page.parent / t).exists()
        ]
    assert not missing, f"links to missing files: {missing}"


def test_every_command_line_of_the_readme_runs_with_its_documented_exit_code(demo) -> None:
    cwd, env = demo
    lines = command_lines()
    assert len(lines) >= 10 and any(line.startswith("kafka-ops audit") for line in lines)
    wrong = []
    for line in lines:
        run = subprocess.run(
            ["bash", "-c", on_demo_host(line)], cwd=cwd, env=env, capture_output=True, text=True
        )
        if run.returncode != expected_exit(line):
            wrong.append(
                f"{line}\n  exit {run.returncode}, documented {expected_exit(line)}: {run.stderr[-500:]}"
            )
        if run.returncode in (0, 1):
            assert "Traceback" not in run.stderr, line
    assert not wrong, "\n".join(wrong)
    assert (cwd / "demo-report.html").stat().st_size > 10_000  # the tour's HTML page was written


def test_the_ci_gate_recipe_runs_and_keeps_both_reports(demo) -> None:
    cwd, env = demo
    (recipe,) = [yaml.safe_load(b) for b in blocks("yaml") if "kafka-audit.json" in b]
    ((name, job),) = recipe.items()
    assert set(job["artifacts"]["paths"]) == {"kafka-audit.json", "kafka-audit.xml"}
    assert job["artifacts"]["when"] == "always" and job["artifacts"]["reports"]["junit"] == "kafka-audit.xml"
    (waivers,) = [b for b in blocks("text") if "CHECK[:PATH-GLOB]" in b]
    install, *script = job["script"]
    # the install line: a venv of its own and pip install of $KAFKA_OPS, a PEP 508 spec of this project
    assert install.startswith("python3 -m venv .kafka-ops && .kafka-ops/bin/pip install")
    assert '"$KAFKA_OPS"' in install and job["variables"]["KAFKA_OPS"].startswith("kafka-ops @ ")
    job_dir = cwd / "ci-job"
    (job_dir / ".kafka-ops" / "bin").mkdir(parents=True)
    (job_dir / "demo-host").symlink_to(cwd / "demo-host")
    (job_dir / ".kafka-ops" / "bin" / "kafka-ops").symlink_to(cwd / "bin" / "kafka-ops")
    (job_dir / "kafka-waivers.txt").write_text(waivers)
    job_env = dict(env, **{k: on_demo_host(v) for k, v in job["variables"].items()})
    job_env["AUDIT"] += " --broker-state stopped"  # the demo host's broker has no .lock to tell
    # as GitLab's shell executor does: the lines in order, the job fails at the first that exits non-zero
    run = subprocess.run(
        ["bash", "-ec", "\n".join(script)], cwd=job_dir, env=job_env, capture_output=True, text=True
    )
    assert run.returncode == 1, run.stderr  # the demo host fails the gate: the job fails ...
    report = json.loads((job_dir / "kafka-audit.json").read_text())  # ... and keeps both reports
    gate = report["gate"]
    assert gate["fail_on"] == "error" and gate["passed"] is False and gate["exit_code"] == 1
    matched = {w["rule"]: w["matched"] for w in gate["waivers"]}
    assert matched["DIR001"] == 2 and matched["SHUT001:*/kafka-2"] == 1, matched
    assert any(f["check"] == "DIR001" and f["waived"] for f in report["findings"])
    suite = ET.parse(job_dir / "kafka-audit.xml").getroot()
    assert suite.tag == "testsuite" and int(suite.get("failures")) > 0
    assert {case.get("name") for case in suite.iter("testcase")} >= {"DIR001", "SHUT001", "RET001"}
    assert name == "kafka-preflight"


MAKEFILE = ROOT / "Makefile"


def make_variable(name: str) -> str:
    """A Makefile variable's value (continuation lines joined)."""
    text = MAKEFILE.read_text(encoding="utf-8").replace("\\\n", " ")
    (value,) = re.findall(rf"^{name} \??= (.*)$", text, re.M)
    return " ".join(value.split())


def demo_recipe() -> list[str]:
    text = MAKEFILE.read_text(encoding="utf-8").replace("\\\n", " ")
    body = text.split("\ndemo: ", 1)[1].split("\n\n", 1)[0]
    return [line.strip().lstrip("@") for line in body.splitlines()[1:]]


def test_the_two_set_up_commands_are_commands_near_the_top() -> None:
    text = README.read_text(encoding="utf-8")
    top = text[: text.index("\n## A 5-minute tour\n")]
    lines = [
        line.split("#", 1)[0].strip()
        for kind, body in FENCE.findall(top)
        if kind == "sh"
        for line in body.splitlines()
    ]
    assert "make demo" in lines and "make test" in lines


def test_make_demo_creates_no_user_and_runs_the_readme_tour() -> None:
    recipe = demo_recipe()
    assert not [line for line in recipe if re.search(r"\b(useradd|adduser|groupadd|usermod|sudo)\b", line)]
    demo = make_variable("DEMO")
    inputs = make_variable("DEMO_INPUTS").replace("$(DEMO)", demo)
    simulate = [line for line in recipe if "kafka-ops simulate" in line]
    audit = [line for line in recipe if "kafka-ops audit $(DEMO_INPUTS)" in line]
    assert len(simulate) == len(audit) == 1
    # the README's tour by hand: the same two commands
    tour = [line.split("#", 1)[0].split() for line in command_lines()[:2]]
    assert tour[0] == ["kafka-ops", "simulate", "demo-host", "--fail", "all", "--force"]
    assert (
        simulate[0].split()[1:] == ["simulate", "$(DEMO)", "--fail", "all", "--force"] and demo == "demo-host"
    )
    assert tour[1] == ["kafka-ops", "audit", *inputs.split()]


def test_the_tour_by_hand_sees_every_planted_fault_as_root_too(demo) -> None:  # type: ignore[no-untyped-def]
    """As root the simulated log dirs go to an existing unprivileged user (no User=root unit, whose broker reads
    every file and so misses the unreadable .timeindex): the tour's report is the demo's, PERM001 included."""
    cwd, env = demo
    unit = (cwd / "demo-host/etc/systemd/system/kafka.service").read_text()
    if os.geteuid() == 0:
        assert "User=nobody" in unit and "User=root" not in unit
    else:
        import getpass

        assert f"User={getpass.getuser()}" in unit
    line = command_lines()[1].split("#", 1)[0] + " -f json"
    run = subprocess.run(["bash", "-c", line], cwd=cwd, env=env, capture_output=True, text=True)
    assert run.returncode == 1, run.stderr
    report = json.loads(run.stdout)
    planted = json.loads((cwd / "demo-host/host.json").read_text())["planted"]
    assert "unreadable_timeindex" in planted
    assert any(f["check"] == "PERM001" for f in report["findings"])
