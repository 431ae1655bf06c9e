"""The audit's options are declared once (kafka_ops.audit.cmdoptions) and every door takes them from there (issue 24:
they were declared in commands/audit.py, forecast.py and fleet.py, plus an argparse copy in remote.py): `kafka-ops
audit`, `forecast` and `fleet audit` (Typer) and the collector shipped to broker hosts (argparse) take the same
names, help and defaults, and the same command line means the same audit to the CLI and to the collector."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from kafka_ops.audit.cmdoptions import GATE, INPUTS, OPTIONS
from kafka_ops.audit.options import audit_options
from kafka_ops.cli.framework import _choices, load_all
from kafka_ops.collector import remote

GROUP = typer.main.get_command(load_all())


def cli_params(*path: str) -> dict[str, Any]:
    cmd: Any = GROUP
    for name in path:
        cmd = cmd.commands[name]
    return {p.name: p for p in cmd.params}


def collector_actions() -> dict[str, argparse.Action]:
    return {a.dest: a for a in remote.parser()._actions}


@pytest.mark.parametrize(
    ("path", "dests"),
    [
        (("audit",), (*INPUTS, *GATE)),
        (("fleet", "audit"), (*INPUTS, *GATE)),
        (("forecast",), tuple(d for d in INPUTS if d != "expect_mount")),
    ],
)
def test_each_command_takes_the_declared_options_as_declared(
    path: tuple[str, ...], dests: tuple[str, ...]
) -> None:
    params = cli_params(*path)
    # forecast runs no check: no --expect-mount
    assert "expect_mount" in dests or "expect_mount" not in params
    for d in dests:
        o, p = OPTIONS[d], params[d]
        assert p.opts == [o.name] and p.help == o.help and (p.metavar or "") == o.metavar, d
        default = p.default.value if hasattr(p.default, "value") else p.default
        assert default == (False if o.flag else None if o.repeat else o.default), d
        assert p.multiple == o.repeat and p.is_flag == o.flag, d
        assert tuple(_choices(p)) == o.choices, d  # (--fail-on's any case: the test below gives WARNING)


def test_the_collector_takes_the_declared_options_as_declared() -> None:
    actions = collector_actions()
    for d in (*INPUTS, *GATE):
        o, a = OPTIONS[d], actions[d]
        assert a.option_strings == [o.name] and a.help == o.help and (a.metavar or "") == o.metavar, d
        assert a.default == (False if o.flag else [] if o.repeat else o.default), d
        assert tuple(a.choices or ()) == o.choices, d


def test_one_command_line_is_one_audit_for_the_cli_and_the_collector(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What `kafka-ops audit ARGS` hands to the audit and what the collector reads of the same ARGS build equal
    AuditOptions (options named differently, a default that differs or a case rule would make them differ)."""
    from kafka_ops.cli import audit as audit_cmd

    d1, d2 = tmp_path / "data-1", tmp_path / "data-2"
    d1.mkdir()
    d2.mkdir()
    log = tmp_path / "server.log"
    log.write_text(
        "[2026-11-01 10:00:00,000] INFO Kafka version: 3.7.0 (org.apache.kafka.common.utils.AppInfoParser)\n"
    )
    argv = [
        "--log-dir", str(d1), "--log-dir", str(d2), "--broker-state", "stopped", "--now", "1790000000000",
        "--horizon", "7d", "--kafka-version", "3.7.0", "--deep", "--broker-log", str(log),
        "--expect-mount", f"{d1}=/", "--fail-on", "WARNING", "--waive", "IDX001 known",
    ]  # fmt: skip
    seen: dict[str, Any] = {}

    def capture(check_paths: bool = True, **kw: Any) -> Any:
        seen.update(kw)
        raise typer.Exit(0)

    monkeypatch.setattr(audit_cmd, "build_options", capture)
    r = CliRunner().invoke(load_all(), ["audit", *argv])
    assert r.exit_code == 0, r.output
    a = remote.parser().parse_args(["audit", *argv])
    assert set(seen) == set(INPUTS)
    assert audit_options(**seen) == audit_options(**{d: getattr(a, d) for d in INPUTS})
    assert audit_options(**seen).horizon_ms == 7 * 86_400_000 and audit_options(**seen).deep
    assert a.fail_on == "warning" and a.waive == ["IDX001 known"]


def test_defaults_are_one_audit_too() -> None:
    """Nothing given: the CLI's defaults and the collector's build the same options (auto, 24h, no logs)."""
    a = remote.parser().parse_args(["audit"])
    defaults = {
        d: (False if OPTIONS[d].flag else None if OPTIONS[d].repeat else OPTIONS[d].default) for d in INPUTS
    }
    assert audit_options(check_paths=False, **defaults) == audit_options(
        check_paths=False, **{d: getattr(a, d) for d in INPUTS}
    )
    assert a.fail_on == "error" and a.broker_state == "auto" and a.horizon == "24h"
