"""No project-internal words reach a user (issue 39): incidents are named by what happened (and KAFKA-nnnn ids),
never by our seed numbers. Scanned: every output format of the demo audit, the catalogue and every check's doc
page, the README, the docs pages for users, and every command's --help (tests, docs/dev/ and code comments may
keep the seed numbers)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from kafka_ops.simulator.host import SimulatedHost

from .conftest import NOW_MS

Cli = Callable[..., tuple[int, str, str]]
ROOT = Path(__file__).resolve().parents[1]
INTERNAL = re.compile(r"(?<![\w./])seeds? ?\d{3}", re.I)  # not in a module or file name (kafka_lab.seed004)
# docs/ pages for users (docs/dev/ is for developers; the lab's pages name its scenarios by their files)
USER_DOCS = ["docs/checks.md", "docs/incidents.md", "docs/ansible.md", "docs/fleet.md", "docs/qos.md",
             "docs/spark.md", "docs/model.md", *(f"docs/commands/{p.name}" for p in (ROOT / "docs/commands").glob("*.md"))]  # fmt: skip


def internal(text: str) -> list[str]:
    return [text[max(0, m.start() - 40) : m.end() + 20] for m in INTERNAL.finditer(text)]


def test_the_audit_says_no_seed_number_in_any_format(cli: Cli, broken_host: SimulatedHost) -> None:
    args = [
        "audit", "--server-properties", broken_host.server_properties, "--topic-configs", broken_host.topic_configs,
        "--systemd-unit", broken_host.systemd_unit, "--broker-log", broken_host.server_log, "--broker-log",
        broken_host.cleaner_log, "--broker-state", "stopped", "--now", str(NOW_MS), "--kafka-version", "3.7.0",
        "--broker-user", "root", "-v",
    ]  # fmt: skip
    for fmt in ("table", "brief", "json", "markdown", "junit", "prometheus"):
        code, out, err = cli(*args, "-f", fmt)
        assert code == 1 and not internal(out + err), (fmt, internal(out + err))


def test_the_checks_their_doc_pages_and_the_docs_say_no_seed_number(cli: Cli) -> None:
    from kafka_ops.checks import load_all

    found = {}
    _, out, _ = cli("checks", "-f", "json")
    found["checks -f json"] = internal(out)
    for cid in load_all():
        found[f"checks {cid}"] = internal(cli("checks", cid)[1])
    for page in ["README.md", *USER_DOCS]:
        if (ROOT / page).exists():
            found[page] = internal((ROOT / page).read_text(encoding="utf-8"))
    assert not {k: v for k, v in found.items() if v}


def test_no_help_says_a_seed_number(cli: Cli) -> None:
    from kafka_ops.cli.framework import load_all

    group = load_all()
    import typer

    root = typer.main.get_command(group)  # type: ignore[attr-defined]
    paths: list[list[str]] = [[]]
    for name, cmd in root.commands.items():
        paths.append([name])
        paths += [[name, sub] for sub in getattr(cmd, "commands", {})]
    found = {}
    for path in paths:
        code, out, err = cli(*path, "--help")
        assert code == 0, path
        found[" ".join(path) or "kafka-ops"] = internal(out + err)
    assert len(paths) > 15 and not {k: v for k, v in found.items() if v}


@pytest.mark.parametrize("text", ["seed 002: hours", "(seed 000)", "seed 001's cleaner", "Seed003"])
def test_the_pattern_finds_them(text: str) -> None:
    assert internal(text)
