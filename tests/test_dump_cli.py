"""`kafka-ops dump` as an operator runs it: real files, real exit codes, one-line errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from kafka_ops.simulator.host import HostSpec, simulate_host

from .conftest import CORPUS, NOW_MS

REQUIRED = {
    "file", "position", "base_offset", "last_offset", "count", "magic", "crc_valid", "codec",
    "is_transactional", "is_control", "control_type", "producer_id", "max_timestamp", "size",
}  # fmt: skip


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kafka_ops.cli", *args], capture_output=True, text=True)


def test_json_has_one_object_per_batch_with_the_documented_fields(healthy_host) -> None:  # type: ignore[no-untyped-def]
    part = healthy_host.partitions["payments-0"]
    log = sorted(f for f in os.listdir(part) if f.endswith(".log"))[0]
    r = run("dump", "--format", "json", os.path.join(part, log))
    assert r.returncode == 0, r.stderr
    events = [json.loads(line) for line in r.stdout.splitlines()]
    batches = [e for e in events if e["type"] == "batch"]
    assert batches and all(REQUIRED <= set(b) for b in batches)
    controls = [b for b in batches if b["is_control"]]
    assert controls and {b["control_type"] for b in controls} <= {"COMMIT", "ABORT"}
    assert all(b["control_type"] is None for b in batches if not b["is_control"])


def test_torn_tail_reports_position_and_bytes_recovery_truncates(broken_host) -> None:  # type: ignore[no-untyped-def]
    torn = broken_host.planted["torn_tail"][0]
    r = run("dump", "-f", "json", torn)
    assert r.returncode == 1
    tail = next(json.loads(x) for x in r.stdout.splitlines() if '"tail"' in x)
    size = os.path.getsize(torn)
    assert tail["position"] + tail["truncated_bytes"] == size and tail["truncated_bytes"] > 0


def test_zero_padding_on_a_rolled_timeindex_is_reported(broken_host) -> None:  # type: ignore[no-untyped-def]
    r = run("dump", broken_host.planted["untrimmed_timeindex"][0])
    assert r.returncode == 1
    assert "zero_padding" in r.stdout and "timestamp 0" in r.stdout


def test_bad_input_is_one_line_per_file_and_the_rest_is_still_dumped(tmp_path, healthy_host) -> None:  # type: ignore[no-untyped-def]
    junk = tmp_path / "00000000000000000000.log"
    junk.write_bytes(os.urandom(5000))
    short = tmp_path / "00000000000000000100.index"
    short.write_bytes(b"\x00\x00\x00\x01\x00")
    good = os.path.join(healthy_host.partitions["orders-0"], "00000000000000000000.log")
    r = run("dump", str(junk), str(tmp_path / "missing.log"), str(tmp_path), good)
    assert r.returncode == 1
    assert "Traceback" not in r.stderr
    for line in r.stderr.strip().splitlines():
        assert line.startswith("kafka-ops dump: /"), line
    assert str(junk) in r.stderr and "at byte 0" in r.stderr
    assert "missing.log" in r.stderr
    assert "baseOffset: 0" in r.stdout  # the good file after the bad ones


def test_not_a_log_dir(tmp_path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "notes.txt").write_text("hello")
    r = run("dump", str(tmp_path))
    assert r.returncode == 1 and "not a Kafka log dir" in r.stderr


def test_decodes_consumer_offsets_and_reads_whole_log_dirs(tmp_path) -> None:  # type: ignore[no-untyped-def]
    host = simulate_host(str(tmp_path / "h"), HostSpec(now_ms=NOW_MS))
    co = host.partitions["__consumer_offsets-7"]
    r = run("dump", "-f", "json", "--records", co)
    assert r.returncode == 0, r.stderr
    decoded = [json.loads(x)["decoded"] for x in r.stdout.splitlines() if '"decoded"' in x]
    assert decoded and all(d["type"] == "offset_commit" for d in decoded)
    assert decoded[0]["key"]["group"] == "billing-consumers"
    r = run("dump", "--max-index-entries", "1", *host.log_dirs)
    assert r.returncode == 0, r.stderr
    assert "meta_properties" in r.stdout and "clean_shutdown" in r.stdout


@pytest.mark.skipif(not CORPUS.exists(), reason="corpus not present")
def test_whole_corpus_dumps_without_errors() -> None:
    dirs = sorted(str(p.parent) for p in CORPUS.rglob("meta.properties"))
    r = run("dump", "-f", "json", "--no-verify-index", *dirs)
    assert r.returncode == 0, r.stderr[:2000]
    assert "Traceback" not in r.stderr
