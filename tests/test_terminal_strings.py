"""Issue 37: what a broker's own files say reaches no terminal and no report as escape sequences.

The broker user writes server.log: a "Kafka version" line ending in an OSC 52 sequence, printed raw by
`kafka-ops logs` through `| tee`, set tmux's clipboard, and the operator's next paste was the broker user's
command. Log lines are stripped of escape sequences (OSC, CSI, DCS, C1) and control characters where they are
read (facts.logs.read_lines), so every command and format shows none: `logs` (table, json), `audit` (table,
brief, markdown, json: decoded too, as `jq -r` shows it). `dump` shows a record's bytes escaped (visible, inert).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from kafka_ops.engine.shell import strip_terminal
from kafka_ops.simulator.host import Failures, HostSpec, SimulatedHost, simulate_host
from tests.conftest import NOW_MS

OSC52 = "\x1b]52;c;ZWNobyBQV05FRAo=\x07"  # base64 of a command, for the clipboard
CSI = "\x1b[2J\x1b[31m"
C1 = "\x9b31m\x9d0;title\x9c"
ANY_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kafka_ops", *args], capture_output=True, text=True, timeout=180
    )


def _strings(doc: Any) -> list[str]:
    if isinstance(doc, str):
        return [doc]
    if isinstance(doc, dict):
        return [s for k, v in doc.items() for s in (*_strings(k), *_strings(v))]
    if isinstance(doc, list):
        return [s for v in doc for s in _strings(v)]
    return []


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> SimulatedHost:
    h = simulate_host(str(tmp_path_factory.mktemp("osc")), HostSpec(now_ms=NOW_MS, failures=Failures.all()))
    # (past the first KiB of ordinary lines: a file that starts with control bytes is refused as binary data)
    filler = "".join(
        f"[2026-11-01 09:00:{i % 60:02d},000] INFO an ordinary line {i} (kafka.server.KafkaServer)\n"
        for i in range(200)
    )
    log = Path(h.server_log)
    text = log.read_text()
    assert "Kafka version: " in text
    text = re.sub(r"(Kafka version: \S+)", lambda m: m.group(1) + OSC52 + CSI, text)
    log.write_text(filler + text)
    cleaner = Path(h.cleaner_log)
    text = cleaner.read_text()
    assert "Java heap space" in text
    cleaner.write_text(filler + text.replace("Java heap space", f"Java heap space{CSI}{C1}{OSC52}"))
    return h


def _clean(text: str, what: str) -> None:
    assert not ANY_CONTROL.search(text.replace("\n", "")), (what, ANY_CONTROL.search(text.replace("\n", "")))
    assert "ZWNobyBQV05FRAo" not in text, what  # the OSC's payload went with it, not only its ESC


def test_logs_prints_no_sequence_in_table_or_json(host: SimulatedHost) -> None:
    r = _run("logs", host.server_log, host.cleaner_log)
    assert r.returncode == 1, r.stderr  # the simulated cleaner death
    _clean(r.stdout, "logs table")
    assert "Kafka 3.7.0" in r.stdout and "Java heap space" in r.stdout
    r = _run("logs", "--format", "json", host.server_log, host.cleaner_log)
    doc = json.loads(r.stdout)
    for s in _strings(doc):
        _clean(s, "logs json (decoded)")
    assert {v["version"] for v in doc["versions"]} == {"3.7.0"}
    assert doc["cleaner_deaths"][0]["detail"] == "Java heap space"


@pytest.mark.parametrize("fmt", ["table", "brief", "markdown", "json"])
def test_audit_prints_no_sequence_from_the_logs(host: SimulatedHost, fmt: str) -> None:
    args = [
        "audit", "--server-properties", host.server_properties, "--systemd-unit", host.systemd_unit,
        "--topic-configs", host.topic_configs, "--broker-log", host.server_log, "--broker-log", host.cleaner_log,
        "--broker-state", "running", "--now", str(NOW_MS), "--format", fmt,
    ]  # fmt: skip
    r = _run(*args)
    assert r.returncode in (0, 1), r.stderr
    _clean(r.stdout, fmt)
    _clean(r.stderr, fmt + " stderr")
    if fmt == "json":
        doc = json.loads(r.stdout)
        for s in _strings(doc):
            _clean(s, "audit json (decoded)")
        [cln] = [f for f in doc["findings"] if f["check"] == "CLN001"]
        assert "Java heap space" in cln["message"]


def test_strip_terminal_takes_whole_sequences_and_keeps_text() -> None:
    assert strip_terminal(f"3.7.0{OSC52}{CSI}{C1} ok\tx") == "3.7.0 ok\tx"
    assert strip_terminal("a\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\b") == "alinkb"
    assert strip_terminal("é, 中文, ✓") == "é, 中文, ✓"
    assert strip_terminal("a\x1b]unterminated\nnext line") == "a\nnext line"  # a sequence never eats a line


def test_dump_prints_no_sequence_from_a_record(tmp_path: Path) -> None:
    """A segment the broker user wrote (or a producer's record): key, value and header as `dump --payloads`
    shows them, text and JSON decoded."""
    from kafka_ops.engine.builder import NewRecord, build_batch

    part = tmp_path / "t-0"
    part.mkdir()
    payload = f"v{OSC52}{CSI}{C1}".encode()
    rec = NewRecord(
        key=f"k{CSI}".encode(), value=payload, timestamp=NOW_MS, headers=((f"h{OSC52}", payload),)
    )
    (part / "00000000000000000000.log").write_bytes(build_batch(0, [rec]))
    r = _run("dump", "--payloads", str(part / "00000000000000000000.log"))
    assert r.returncode == 0, r.stderr
    # a dump shows the bytes as they are, escaped: visible, inert
    assert not ANY_CONTROL.search(r.stdout.replace("\n", "")), ANY_CONTROL.search(r.stdout.replace("\n", ""))
    assert "payload: v\\e]52;c;ZWNobyBQV05FRAo=\\x07\\e[2J" in r.stdout
    r = _run("dump", "--payloads", "--format", "json", str(part / "00000000000000000000.log"))
    assert r.returncode == 0, r.stderr
    assert not ANY_CONTROL.search(r.stdout.replace("\n", ""))  # JSON's own escapes: data, exact


@pytest.mark.parametrize("fmt", ["table", "csv", "json"])
def test_forecast_prints_no_sequence_from_the_logs(host: SimulatedHost, fmt: str) -> None:
    r = _run(
        "forecast", "--server-properties", host.server_properties, "--topic-configs", host.topic_configs,
        "--broker-log", host.server_log, "--broker-log", host.cleaner_log, "--broker-state", "running",
        "--now", str(NOW_MS), "--format", fmt,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    _clean(r.stdout, fmt)
    if fmt == "json":
        for s in _strings(json.loads(r.stdout)):
            _clean(s, "forecast json (decoded)")


def test_logs_of_a_dir_shows_a_hostile_rotation_name_escaped(tmp_path: Path, host: SimulatedHost) -> None:
    """`logs /var/log/kafka` reads the rotations the broker user may name: a name's sequence is shown inert."""
    d = tmp_path / "logs"
    d.mkdir()
    (d / "server.log").write_text(Path(host.server_log).read_text())
    (d / f"server.log.1{OSC52}").write_text("not a broker log\n")
    r = _run("logs", str(d))
    assert r.returncode in (0, 1), r.stderr
    assert not ANY_CONTROL.search(r.stdout.replace("\n", "")) and not ANY_CONTROL.search(
        r.stderr.replace("\n", "")
    )
    assert "server.log.1\\e]52;c;" in r.stdout + r.stderr
