"""The command line's contract, for every command and option: one line on stderr for every mistake, exit codes
0/1/2 (3 for a bug of kafka-ops), `-h` everywhere, help that reads well at any width. Nothing is written on a
mistake."""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
from collections.abc import Iterator
from enum import Enum
from pathlib import Path
from typing import Any

import pytest
import typer.main

from kafka_ops.cli.framework import Group, load_all
from kafka_ops.units import DURATION_HELP

BOXES = ("╭", "│", "Traceback", "Value error", "Input should", "pydantic", "Usage:", "Try '")


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """The CLI in this process, as the entry point runs it: (exit code, stdout, stderr)."""
    code = load_all()(args=list(args), standalone_mode=False)
    out, err = capsys.readouterr()
    return int(code), out, err


def assert_one_line(err: str, prefix: str) -> None:
    """The whole of stderr is one line starting with prefix: no panel, no pydantic wording, no traceback."""
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(prefix), (lines[0], prefix)
    assert not any(b in err for b in BOXES), err


def commands() -> Iterator[tuple[str, Any]]:
    """Every command and group: ('audit', cmd), ('fix ownership', cmd), ..."""

    def walk(prefix: list[str], cmd: Any) -> Iterator[tuple[str, Any]]:
        yield " ".join(prefix), cmd
        for name, sub in getattr(cmd, "commands", {}).items():
            yield from walk([*prefix, name], sub)

    yield from walk([], typer.main.get_command(load_all()))


ALL = [(path, cmd) for path, cmd in commands()]
LEAVES = [(p, c) for p, c in ALL if not isinstance(c, Group)]


def snapshot(root: Path) -> dict[str, tuple[int, float]]:
    return {str(p): (p.stat().st_size, p.stat().st_mtime) for p in root.rglob("*")}


@pytest.mark.parametrize("path", [p for p, _ in ALL], ids=lambda p: p or "kafka-ops")
def test_dash_h_is_help_on_every_command(capsys: pytest.CaptureFixture[str], path: str) -> None:
    args = path.split() if path else []
    code, out, err = run_cli(capsys, *args, "-h")
    assert code == 0 and err == ""
    assert out.startswith(f"Usage: kafka-ops {path}".rstrip())
    code2, out2, _ = run_cli(capsys, *args, "--help")
    assert code2 == 0 and out2 == out


@pytest.mark.parametrize("columns", [40, 60, 100])
def test_help_wraps_prose_and_keeps_every_option_whole(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, columns: int
) -> None:
    monkeypatch.setenv("COLUMNS", str(columns))
    for path, cmd in ALL:
        code, out, _ = run_cli(capsys, *path.split(), "--help")
        assert code == 0
        for line in out.splitlines():
            # longer only when a single token (a path, an option) does not fit: it is never cut
            assert len(line) < columns or " " not in line.strip(), (path, line)
        words = set(out.split())
        for p in cmd.params:
            for opt in p.opts:
                if opt.startswith("-"):
                    assert opt in words or f"{opt}," in words, (path, opt)
        # types in words, not Python's
        for pytype in ("<str>", "<int>", "<path>", "<bool>", "list[", "<float>", "TEXT]"):
            assert pytype not in out, (path, pytype)


def test_help_shows_what_each_value_is(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    for path, _cmd in ALL:
        _, text, _ = run_cli(capsys, *path.split(), "-h")
        assert_reflowed(text, 99)
    _, out, _ = run_cli(capsys, "audit", "-h")
    for shown in ("--now TIME", "--horizon DURATION", "--log-dir DIR", "--kafka-version VERSION",
                  "--fail-on info|warning|error|critical|never", "--expect-mount LOG_DIR=MOUNT"):  # fmt: skip
        assert shown in " ".join(out.split()), shown


def assert_reflowed(text: str, width: int) -> None:
    """Prose is filled to the width (a line ends early only where a paragraph ends), not cut where the
    docstring's source lines end."""
    lines = text.splitlines()
    in_rows = False  # past "Arguments:" / "Options:": rows of a name and its text
    for a, b in itertools.pairwise(lines):
        in_rows = in_rows or a in ("Arguments:", "Options:", "Commands:")
        indent_a, indent_b = len(a) - len(a.lstrip()), len(b) - len(b.lstrip())
        continues = (
            a.strip()
            and b.strip()
            and not b.lstrip().startswith("-")
            and ((indent_b > 2 and indent_b >= indent_a) or (not in_rows and indent_a == indent_b == 2))
        )
        under_its_name = a.lstrip().startswith("-") and indent_b > indent_a + 2  # a long option's text
        if continues and not under_its_name and not b.strip()[0].isupper():
            assert len(a) + 1 + len(b.split()[0]) > width, (a, b)


@pytest.mark.parametrize("path", [p for p, _ in LEAVES])
def test_unknown_option_is_one_line_with_close_matches(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, path: str
) -> None:
    monkeypatch.chdir(tmp_path)
    before = snapshot(tmp_path)
    for bad in ("--bogus", "--help-me", "-Z"):
        code, out, err = run_cli(capsys, *path.split(), bad)
        assert code == 2 and out == ""
        assert_one_line(err, f"kafka-ops {path}: no such option: {bad}")
    assert snapshot(tmp_path) == before


def test_unknown_option_suggests_the_one_meant(capsys: pytest.CaptureFixture[str]) -> None:
    cases = {
        ("audit", "--fail"): "kafka-ops audit: no such option: --fail (did you mean --fail-on?)",
        ("audit", "--server-propertie"): "(did you mean --server-properties?)",
        ("logs", "--folow"): "(did you mean --follow",
    }
    for args, expected in cases.items():
        code, _, err = run_cli(capsys, *args)
        assert code == 2 and expected in err, err


def _typed_options() -> Iterator[tuple[str, str, str]]:
    """(command, option, what the one line says) for every option whose value Typer converts."""
    for path, cmd in LEAVES:
        for p in cmd.params:
            if getattr(p, "param_type_name", "") != "option" or getattr(p, "is_flag", False):
                continue
            desc = getattr(p, "type_descriptor", None)
            ann = getattr(desc, "annotation", None)
            choices = getattr(desc, "choices", None)
            opt = max(p.opts, key=len)
            if p.metavar == "DURATION":  # one grammar for every duration (kafka_ops.units)
                yield path, opt, f"not a duration: 'junk' (expected {DURATION_HELP})"
            elif choices:
                values = ", ".join(c.value if isinstance(c, Enum) else str(c) for c in choices)
                yield path, opt, f"'junk' is not one of {values}"
            elif ann in (int, list[int]) or str(ann) == "int | None":
                yield path, opt, "not a whole number: 'junk'"
            elif ann in (float,) or str(ann) == "float | None":
                yield path, opt, "not a number: 'junk'"


TYPED = list(_typed_options())


def test_every_typed_option_was_found() -> None:
    found = {(p, o) for p, o, _ in TYPED}
    assert {("audit", "--fail-on"), ("audit", "--format"), ("simulate", "--log-dirs"),
            ("simulate", "--scale"), ("logs", "--timeout"), ("dump", "--max-bytes")} <= found  # fmt: skip


@pytest.mark.parametrize(("path", "opt", "says"), TYPED, ids=[f"{p}{o}" for p, o, _ in TYPED])
def test_a_bad_value_is_one_line_naming_the_option(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    path: str,
    opt: str,
    says: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    before = snapshot(tmp_path)
    # arguments first so that the option's value is what fails, whatever the command needs
    args = {"simulate": ["out"], "logs": ["server.log"], "dump": ["x.log"], "report": ["r.json"]}.get(
        path, []
    )
    code, out, err = run_cli(capsys, *path.split(), *args, opt, "junk")
    assert code == 2 and out == ""
    assert_one_line(err, f"kafka-ops {path}: {opt}: ")
    assert err.strip() == f"kafka-ops {path}: {opt}: {says}"
    assert snapshot(tmp_path) == before


def test_out_of_range_missing_values_and_extra_arguments(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    cases = {
        (
            "simulate",
            str(tmp_path / "s"),
            "--log-dirs",
            "0",
        ): "kafka-ops simulate: --log-dirs: must be at least 1, not 0",
        (
            "logs",
            "x",
            "--timeout",
            "-1",
        ): f"kafka-ops logs: --timeout: not a duration: '-1' (expected {DURATION_HELP})",
        (
            "audit",
            "--cluster-timeout",
            "0.1",
        ): "kafka-ops audit: --cluster-timeout: must be at least 0.5s, not 0.1",
        ("audit", "--now"): "kafka-ops audit: --now: needs a value",
        ("audit", "--deep=yes"): "kafka-ops audit: --deep: is a flag and takes no value",
        (
            "audit",
            "somewhere",
        ): "kafka-ops audit: unexpected argument(s): somewhere (see kafka-ops audit --help)",
        ("dump",): "kafka-ops dump: give files or dirs, as arguments or with --files a,b,c",
        ("fix", "undo"): "kafka-ops fix undo: give a JOURNAL or --last (`kafka-ops fix journals` lists them)",
        ("audi",): "kafka-ops: no such command: 'audi' (did you mean audit?)",
        ("fleet", "audti"): "kafka-ops fleet: no such command: 'audti' (did you mean audit?)",
    }
    for args, expected in cases.items():
        code, out, err = run_cli(capsys, *args)
        assert code == 2 and out == "", (args, err)
        assert_one_line(err, "kafka-ops")
        assert err.strip() == expected
    assert not (tmp_path / "s").exists()


def test_a_bug_is_exit_3_with_one_line_and_the_traceback_on_request(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import kafka_ops.cli.audit as audit_cmd

    def broken(*_: Any, **__: Any) -> Any:
        return {}["no such key"]  # what a bug looks like: an exception nobody expected

    monkeypatch.setattr(audit_cmd, "run_with_progress", broken)
    monkeypatch.delenv("KAFKA_OPS_DEBUG", raising=False)
    code, out, err = run_cli(capsys, "audit", "--log-dir", str(tmp_path), "--expect-mount", f"{tmp_path}=/")
    assert code == 3 and out == ""
    assert_one_line(err, "kafka-ops audit: internal error, a bug in kafka-ops")
    assert "KeyError: 'no such key'" in err and "KAFKA_OPS_DEBUG=1" in err and "report it" in err
    monkeypatch.setenv("KAFKA_OPS_DEBUG", "1")
    code, _, err = run_cli(capsys, "audit", "--log-dir", str(tmp_path), "--expect-mount", f"{tmp_path}=/")
    assert code == 3
    assert "Traceback (most recent call last)" in err and "def broken" not in err and "KeyError" in err
    assert err.splitlines()[-1].startswith("kafka-ops audit: internal error, a bug in kafka-ops")


def test_the_installed_entry_point_keeps_the_contract(tmp_path: Path) -> None:
    """End to end, through `python -m kafka_ops.cli` (what the console script runs)."""

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "COLUMNS": "50"}
        return subprocess.run([sys.executable, "-m", "kafka_ops.cli", *args], capture_output=True, text=True,
                              cwd=tmp_path, env=env)  # fmt: skip

    r = run("audit", "--fail-on", "bogus")
    assert r.returncode == 2 and r.stdout == ""
    assert (
        r.stderr
        == "kafka-ops audit: --fail-on: 'bogus' is not one of info, warning, error, critical, never\n"
    )
    r = run("audit", "-h")
    assert r.returncode == 0 and r.stdout.startswith("Usage: kafka-ops audit [OPTIONS]")
    assert max(len(line) for line in r.stdout.splitlines() if " " in line.strip()) < 50
    r = run("--version")
    assert r.returncode == 0 and r.stdout.startswith("kafka-ops ")
    r = run()
    assert r.returncode == 2 and "Usage: kafka-ops [OPTIONS] COMMAND" in r.stderr
    assert list(tmp_path.iterdir()) == []


def test_the_lazy_command_table_says_what_each_command_says() -> None:
    """`kafka-ops --help` lists kafka_ops.cli.framework.COMMANDS without importing the commands: the table holds
    every command, in Typer's order, with the summary its own docstring gives."""
    from kafka_ops.cli.framework import COMMANDS, _first_clause, _paragraphs

    group = typer.main.get_command(load_all())
    assert list(COMMANDS) == list(group.commands)  # type: ignore[attr-defined]
    for name, sub in group.commands.items():  # type: ignore[attr-defined]
        assert COMMANDS[name] == _first_clause(_paragraphs(sub.short_help or sub.help or "")[0]), name


def test_help_imports_only_what_it_shows(tmp_path: Path) -> None:
    """`kafka-ops --help` imports no command, nor pydantic or rich, and `kafka-ops dump -h` no other command
    nor the audit (start-up time, benchmarks/bench_dump.py); both print what the fully loaded CLI prints."""
    probe = (
        "import sys\nfrom kafka_ops.cli import main\ntry:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
        "print('MODULES', *sorted(m.split('.')[0] if m.startswith(('pydantic', 'rich')) else m for m in sys.modules"
        " if m.startswith(('kafka_ops.cli.framework.', 'kafka_ops.audit', 'pydantic', 'rich'))))"
    )
    env = {**os.environ, "COLUMNS": "100"}
    for args, allowed in (
        (["--help"], set()),
        (["dump", "-h"], {"kafka_ops.cli.dump", "pydantic", "pydantic_core"}),
    ):
        r = subprocess.run(
            [sys.executable, "-c", probe, *args], capture_output=True, text=True, cwd=tmp_path, env=env
        )
        help_text, _, modules = r.stdout.rpartition("MODULES")
        assert set(modules.split()) <= allowed, modules
        full = subprocess.run(
            [sys.executable, "-c", "import sys\nfrom kafka_ops.cli.framework import load_all\nload_all()(sys.argv[1:])", *args],
            capture_output=True, text=True, cwd=tmp_path, env=env,
        )  # fmt: skip
        assert help_text == full.stdout and full.stdout.startswith("Usage: kafka-ops")
