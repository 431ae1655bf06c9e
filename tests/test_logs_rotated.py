"""Broker logs in every form logrotate leaves them (numbered, dated, gzip/bzip2/xz) read like the live file, and a
file with no Kafka log line in it is said so: a warning, or a refusal when nothing at all was recognised, never
a clean bill."""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from kafka_ops.simulator.host import SimulatedHost

from .conftest import NOW_MS, tree
from .test_cli_contract import assert_one_line

Cli = Callable[..., tuple[int, str, str]]
NOTHING = (
    "no Kafka broker log line recognised (expected log4j lines like '[2026-11-01 10:00:00,123] INFO ...'): "
    "nothing in it was read"
)


def rotated_copies(src: str, where: Path) -> dict[str, Path]:
    """The cleaner log of seed 001 as logrotate and log4j leave it."""
    data = Path(src).read_bytes()
    out = {
        "numbered": where / "log-cleaner.log.1",
        "dated": where / "log-cleaner.log.2026-11-01-11",
        "dateext": where / "log-cleaner.log-20261101",
        "gzip": where / "log-cleaner.log.2.gz",
        "gzip, no extension": where / "log-cleaner.log.3",
        "bzip2": where / "log-cleaner.log.4.bz2",
        "xz": where / "log-cleaner.log-20261102.xz",
    }
    for name in ("numbered", "dated", "dateext"):
        shutil.copy(src, out[name])
    out["gzip"].write_bytes(gzip.compress(data))
    out["gzip, no extension"].write_bytes(gzip.compress(data))
    out["bzip2"].write_bytes(bz2.compress(data))
    out["xz"].write_bytes(lzma.compress(data))
    return out


@pytest.mark.parametrize(
    "form", ["numbered", "dated", "dateext", "gzip", "gzip, no extension", "bzip2", "xz"]
)
def test_kafka_ops_logs_reads_every_rotated_form_as_the_live_file(
    cli: Cli, broken_host: SimulatedHost, tmp_path: Path, form: str
) -> None:
    path = rotated_copies(broken_host.cleaner_log, tmp_path)[form]
    code, out, err = cli("logs", "-f", "json", path)
    live_code, live_out, _ = cli("logs", "-f", "json", broken_host.cleaner_log)
    assert code == live_code == 1 and err == ""  # the cleaner thread of seed 001 is dead
    rotated, live = json.loads(out), json.loads(live_out)
    assert rotated["unrecognised"] == [] and rotated["cleaner_dead_now"] == ["kafka-log-cleaner-thread-0"]
    for d in (rotated, live):
        for death in d["cleaner_deaths"]:
            death.pop("where")
    assert rotated["cleaner_deaths"] == live["cleaner_deaths"]


@pytest.mark.parametrize("form", ["dated", "gzip", "xz"])
def test_audit_reads_rotated_broker_logs(
    cli: Cli, broken_host: SimulatedHost, tmp_path: Path, form: str
) -> None:
    path = rotated_copies(broken_host.cleaner_log, tmp_path)[form]
    code, out, err = cli(
        "audit", "--log-dir", broken_host.log_dirs[0], "--expect-mount", f"{broken_host.log_dirs[0]}=/",
        "--broker-state", "stopped", "--now", str(NOW_MS), "--broker-log", path, "-f", "json",
    )  # fmt: skip
    assert code == 1, err  # CLN001 is critical
    report = json.loads(out)
    [cln] = [f for f in report["findings"] if f["check"] == "CLN001"]
    assert str(path) in cln["path"] and report["errors"] == [
        e for e in report["errors"] if e["file"] != str(path)
    ]


def not_logs(where: Path, host: SimulatedHost) -> dict[str, Path]:
    empty = where / "server.log"
    empty.write_text("")
    prose = where / "notes.log"
    prose.write_text("restarted broker after deploy\nall good\n")
    gz_unit = where / "server.log.1.gz"
    gz_unit.write_bytes(gzip.compress(Path(host.systemd_unit).read_bytes()))
    return {
        "empty": empty,
        "prose": prose,
        "a unit, gzip": gz_unit,
        "server.properties": Path(host.server_properties),
    }


@pytest.mark.parametrize("which", ["empty", "prose", "a unit, gzip", "server.properties"])
def test_a_file_with_no_kafka_log_line_is_no_clean_bill(
    cli: Cli, broken_host: SimulatedHost, tmp_path: Path, which: str
) -> None:
    path = not_logs(tmp_path, broken_host)[which]
    before = tree(tmp_path)
    # alone: refused, nothing to report from
    code, out, err = cli("logs", path)
    assert code == 2 and out == ""
    assert_one_line(err, "kafka-ops logs: ")
    assert err.strip() == f"kafka-ops logs: {path}: {NOTHING}"
    # with a real log: a warning for it, the report for the other
    code, out, err = cli("logs", "-f", "json", path, broken_host.cleaner_log)
    assert code == 1 and err == f"kafka-ops logs: warning: {path}: {NOTHING}\n"
    assert json.loads(out)["unrecognised"] == [{"file": str(path), "error": NOTHING}]
    code, out, err = cli("logs", path, broken_host.cleaner_log)
    # (the text is laid out at the width: a path wider than what is left of a line goes whole onto the next)
    assert f"nothing recognised in {path}" in " ".join(out.split()) and "1 file(s) read" in out
    # in the audit: a named input it cannot use, refused (exit 2), never a pass with CLN001 skipped; an empty
    # file (a quiet log-cleaner.log) is said in the report and the checks that read logs are skipped
    if which == "empty":
        code, out, err = cli(
            "audit", "--log-dir", broken_host.log_dirs[0], "--expect-mount", f"{broken_host.log_dirs[0]}=/",
            "--broker-state", "stopped", "--now", str(NOW_MS), "--broker-log", path, "-f", "json",
        )  # fmt: skip
        report = json.loads(out)
        assert {"file": str(path), "position": None, "error": NOTHING} in report["errors"]
        skipped = {s.get("check") or s.get("input"): s["reason"] for s in report["skipped"]}
        assert skipped["CLN001"] == f"no Kafka broker log line in --broker-log {path}"
        return
    code, out, err = cli(
        "audit", "--log-dir", broken_host.log_dirs[0], "--expect-mount", f"{broken_host.log_dirs[0]}=/",
        "--broker-state", "stopped", "--now", str(NOW_MS), "--broker-log", path, "-f", "json",
    )  # fmt: skip
    assert code == 2 and out == ""
    assert err == f"kafka-ops audit: {path}: {NOTHING} (--broker-log)\n"
    assert tree(tmp_path) == before


def test_a_corrupt_archive_is_one_line_naming_it(
    cli: Cli, broken_host: SimulatedHost, tmp_path: Path
) -> None:
    truncated = tmp_path / "server.log.2.gz"
    truncated.write_bytes(gzip.compress(Path(broken_host.cleaner_log).read_bytes())[:60])
    code, out, err = cli("logs", truncated)
    assert code == 2 and out == ""
    assert_one_line(err, f"kafka-ops logs: {truncated}: cannot read: ")
    code, out, err = cli("audit", "--log-dir", broken_host.log_dirs[0], "--broker-log", truncated)
    assert code == 2 and out == ""
    assert_one_line(err, f"kafka-ops audit: {truncated}: cannot read: ")


def test_follow_refuses_a_rotated_file(cli: Cli, broken_host: SimulatedHost, tmp_path: Path) -> None:
    path = rotated_copies(broken_host.cleaner_log, tmp_path)["gzip"]
    code, out, err = cli("logs", "--follow", path, "--timeout", "1")
    assert code == 2 and out == ""
    assert err == (
        f"kafka-ops logs: --follow: {path}: gzip-compressed: a rotated log does not grow; follow server.log\n"
    )
