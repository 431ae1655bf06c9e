"""`kafka-ops simulate DIR` writes only into a new or empty directory, or with --force over an earlier
simulation; never over a real broker's configuration nor into /. --list-failures needs no directory."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from kafka_ops.cli.simulate import refuse_target
from kafka_ops.simulator.host import Failures

from .conftest import NOW_MS, tree
from .test_cli_contract import assert_one_line

Cli = Callable[..., tuple[int, str, str]]


def simulate(cli: Cli, directory: Path | str, *extra: str) -> tuple[int, str, str]:
    return cli("simulate", directory, "--now-ms", str(NOW_MS), "--scale", "0.05", *extra)


def test_list_failures_needs_no_directory(cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, err = cli("simulate", "--list-failures")
    assert code == 0 and err == ""
    assert out.split() == [f.name for f in dataclasses.fields(Failures)]
    assert list(tmp_path.iterdir()) == []
    code, out, err = cli("simulate")
    assert code == 2 and out == ""
    assert err == "kafka-ops simulate: missing argument DIRECTORY (see kafka-ops simulate --help)\n"


def test_a_new_or_empty_directory_is_written(cli: Cli, tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    for d in (tmp_path / "new" / "host", tmp_path / "empty"):
        code, out, _ = simulate(cli, d)
        assert code == 0 and out.startswith(f"simulated broker host in {d}")
        assert json.loads((d / "host.json").read_text())["root"] == str(d)


def test_a_directory_that_is_not_empty_is_refused_without_force(cli: Cli, tmp_path: Path) -> None:
    cases = {}
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "todo.txt").write_text("keep me\n")
    cases[notes] = "not empty"
    earlier = tmp_path / "earlier"
    assert simulate(cli, earlier)[0] == 0
    cases[earlier] = "not empty"
    a_file = tmp_path / "a-file"
    a_file.write_text("x")
    cases[a_file] = "a file, not a directory"
    for d, why in cases.items():
        before = tree(tmp_path)
        code, out, err = simulate(cli, d)
        assert code == 2 and out == ""
        assert_one_line(err, f"kafka-ops simulate: {d}: {why}")
        assert tree(tmp_path) == before


def test_force_writes_over_an_earlier_simulation_only(cli: Cli, tmp_path: Path) -> None:
    earlier = tmp_path / "earlier"
    assert simulate(cli, earlier)[0] == 0
    code, out, _ = simulate(cli, earlier, "--force", "--fail", "short_stop_timeout")
    assert code == 0 and "planted short_stop_timeout" in out
    # a directory with other files, or a real broker's configuration: refused even with --force
    host = tmp_path / "fake-host"
    (host / "etc" / "kafka").mkdir(parents=True)
    (host / "etc" / "kafka" / "server.properties").write_text("broker.id=1\nlog.dirs=/data/kafka\n")
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    (mixed / "passwd").write_text("root:x:0:0\n")
    link = tmp_path / "link-to-fake-host"
    link.symlink_to(host)
    for d, why in {
        host: f"{host / 'etc/kafka/server.properties'}: exists and was not written by kafka-ops simulate: refusing "
        "to overwrite it, even with --force",
        link: f"{host / 'etc/kafka/server.properties'}: exists and was not written by kafka-ops simulate",
        mixed: f"{mixed}: holds files simulate did not write (passwd): refusing even with --force",
    }.items():
        before = tree(tmp_path)
        code, out, err = simulate(cli, d, "--force")
        assert code == 2 and out == ""
        assert_one_line(err, f"kafka-ops simulate: {why}")
        assert tree(tmp_path) == before


@pytest.mark.parametrize("target", ["/", "/etc/..", "/etc", "/usr/../etc", "/etc/kafka/.."])
def test_never_into_root_or_a_system_directory(target: str) -> None:
    # decided without running the simulator: these paths must never be written to by a test
    for force in (False, True):
        why = refuse_target(Path(target), force)
        assert why is not None and why.startswith(f"{target}: ")
