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


def test_skip_record_metadata_prints_only_key_and_payload(healthy_host) -> None:  # type: ignore[no-untyped-def]
    part = healthy_host.partitions["payments-0"]
    log = os.path.join(part, sorted(f for f in os.listdir(part) if f.endswith(".log"))[0])
    full = run("dump", "--print-data-log", log)
    r = run("dump", "--print-data-log", "--skip-record-metadata", log)
    assert full.returncode == r.returncode == 0, r.stderr
    full_recs = [x for x in full.stdout.splitlines() if x.startswith("| offset:")]
    recs = [x for x in r.stdout.splitlines() if x.startswith("|")]
    assert recs and len(recs) == len(full_recs)
    for short, long in zip(recs, full_recs, strict=True):
        # kafka-dump-log.sh --skip-record-metadata: "| key: K payload: V", the same key and payload
        assert short.startswith("| key: ") and " payload: " in short and "offset:" not in short
        assert long.endswith(short[1:])
    assert "baseOffset: " in r.stdout  # batches keep their line
    j = run("dump", "-f", "json", "--print-data-log", "--skip-record-metadata", log)
    rows = [json.loads(x) for x in j.stdout.splitlines() if '"record"' in x]
    assert rows and all(
        set(x) <= {"type", "file", "offset", "key", "value", "headers", "skip_record_metadata"} for x in rows
    )


def _uv(n: int) -> bytes:
    out = b""
    while n >= 0x80:
        out += bytes([n & 0x7F | 0x80])
        n >>= 7
    return out + bytes([n])


def _cstr(s: str) -> bytes:
    return _uv(len(s) + 1) + s.encode()


def _cints(xs: list[int]) -> bytes:
    return _uv(len(xs) + 1) + b"".join(x.to_bytes(4, "big", signed=True) for x in xs)


def test_cluster_metadata_records_are_decoded(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Records written as Kafka's MetadataRecordSerde frames them (frame version 1, apiKey, version, then the
    flexible message of metadata/src/main/resources/common/metadata/*.json)."""
    from kafka_ops.engine.builder import NewRecord, build_batch

    topic_id = bytes(range(16))
    uuid_text = "AAECAwQFBgcICQoLDA0ODw"  # Uuid.toString: URL-safe base64, no padding
    topic = b"\x01\x02\x00" + _cstr("orders") + topic_id + b"\x00"
    partition = (  # PartitionRecord v1, tag 0 (LeaderRecoveryState) = 1
        b"\x01\x03\x01" + (7).to_bytes(4, "big") + topic_id + _cints([1, 2]) + _cints([2]) + _cints([]) + _cints([])
        + (2).to_bytes(4, "big") + (5).to_bytes(4, "big") + (9).to_bytes(4, "big") + _uv(3) + topic_id * 2
        + b"\x01" + _uv(0) + _uv(1) + b"\x01"
    )  # fmt: skip
    config = b"\x01\x04\x00\x02" + _cstr("orders") + _cstr("retention.ms") + b"\x00" + b"\x00"  # value null
    unknown = b"\x01\x63\x00\x00"  # apiKey 99
    values = [topic, partition, config, unknown]
    part = tmp_path / "__cluster_metadata-0"
    part.mkdir()
    recs = [NewRecord(None, v, NOW_MS) for v in values]
    (part / "00000000000000000000.log").write_bytes(build_batch(0, recs))
    r = run("dump", "-f", "json", "--records", str(part / "00000000000000000000.log"))
    assert r.returncode == 0, r.stderr
    decoded = [json.loads(x)["decoded"] for x in r.stdout.splitlines() if '"record"' in x]
    assert decoded[0] == {
        "type": "TOPIC_RECORD",
        "version": 0,
        "data": {"name": "orders", "topicId": uuid_text},
    }
    assert decoded[1]["type"] == "PARTITION_RECORD" and decoded[1]["version"] == 1
    assert decoded[1]["data"] == {
        "partitionId": 7, "topicId": uuid_text, "replicas": [1, 2], "isr": [2], "removingReplicas": [],
        "addingReplicas": [], "leader": 2, "leaderRecoveryState": 1, "leaderEpoch": 5, "partitionEpoch": 9,
        "directories": [uuid_text, uuid_text],
    }  # fmt: skip
    assert decoded[2]["data"] == {
        "resourceType": 2,
        "resourceName": "orders",
        "name": "retention.ms",
        "value": None,
    }
    assert decoded[3]["type"] == "UNKNOWN(99)" and "not known" in decoded[3]["error"]
    # the same bytes under another name: only with --cluster-metadata-decoder, which prints payloads too
    other = tmp_path / "copy-0"
    other.mkdir()
    (other / "00000000000000000000.log").write_bytes((part / "00000000000000000000.log").read_bytes())
    plain = run("dump", "--records", str(other))
    assert "decoded:" not in plain.stdout
    r = run("dump", "--cluster-metadata-decoder", "--skip-record-metadata", str(other))
    assert r.returncode == 0, r.stderr
    lines = [x for x in r.stdout.splitlines() if x.startswith("|")]
    assert lines[0].startswith('| decoded: {"type":"TOPIC_RECORD","version":0,"data":{"name":"orders"')
    bad = run("dump", "--cluster-metadata-decoder", "--offsets-decoder", str(other))
    assert (
        bad.returncode == 2
        and "--offsets-decoder and --cluster-metadata-decoder exclude each other" in bad.stderr
    )


@pytest.mark.skipif(not CORPUS.exists(), reason="corpus not present")
def test_cluster_metadata_of_the_corpus_decodes_without_an_error() -> None:
    dirs = sorted(str(p) for p in CORPUS.rglob("__cluster_metadata-0"))
    assert dirs
    r = run("dump", "-f", "json", "--records", "--no-verify-index", *dirs)
    assert r.returncode == 0, r.stderr[:2000]
    decoded = [json.loads(x)["decoded"] for x in r.stdout.splitlines() if '"decoded"' in x]
    assert len(decoded) > 1000 and not [d for d in decoded if "error" in d]
    types = {d["type"] for d in decoded}
    assert {"TOPIC_RECORD", "PARTITION_RECORD", "REGISTER_BROKER_RECORD", "FEATURE_LEVEL_RECORD"} <= types
    topics = {d["data"]["name"] for d in decoded if d["type"] == "TOPIC_RECORD"}
    assert "__consumer_offsets" in topics or len(topics) > 5
