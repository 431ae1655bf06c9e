"""A KRaft host's own topic and broker configs, read from its metadata log (facts.kraft_configs).

The corpus's KRaft hosts are audited as a newcomer would (only --log-dir): their internal topics (Connect's,
Schema Registry's, ksqlDB's) carry cleanup.policy=compact or retention.ms=-1 in their ConfigRecords, and must not be
forecast for deletion; each topic's configs must be what ``kafka-ops dump --cluster-metadata-decoder`` shows. Unit
cases write the metadata log as Kafka does (MetadataRecordSerde frames in record batches) and audit a simulated
host with it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from kafka_ops.audit import run_audit
from kafka_ops.broker.plan import plan_sentences
from kafka_ops.facts.collect import gather
from kafka_ops.facts.kraft_metadata import read_metadata
from kafka_ops.facts.model import AuditOptions
from kafka_ops.simulator.host import HostSpec, SimulatedHost, TopicSpec, simulate_host

from .checks.test_dir006 import (
    _cstr,
    _uv,
    partition_record,
    remove_topic_record,
    topic_id_of,
    topic_record,
    write_metadata_log,
)
from .conftest import CORPUS, NOW_MS

DAY = 86_400_000
KRAFT_HOSTS = (
    "ItumelengMogase__Real-Time-Data-Pipeline-for-Patient-Admissions/kafka-data",
    "ronem123__rupia-transaction-service/kafka-logs",
    "Danielowo2000__BigDataTechnologies-Version-2/kafka_2.13-3.5.0/kraft-combined-logs",
    "Danielowo2000__BigDataTechnologies-Version-2/kafka_data",
    "duongnvt2110__ms-practice/kraft-combined-logs",
)


def config_record(rtype: int, name: str, key: str, value: str | None) -> bytes:  # ConfigRecord v0 (apiKey 4)
    v = _uv(0) if value is None else _cstr(value)
    return b"\x01\x04\x00" + rtype.to_bytes(1, "big") + _cstr(name) + _cstr(key) + v + b"\x00"


def topic(name: str, key: str, value: str | None) -> bytes:
    return config_record(2, name, key, value)


def broker(name: str, key: str, value: str | None) -> bytes:
    return config_record(4, name, key, value)


# ------------------------------------------------------------------------------------------------ the corpus


def dumped_configs(part: str) -> dict[tuple[int, str], dict[str, str]]:
    """The configs of ``part`` (a ``__cluster_metadata-0``) from what ``kafka-ops dump --cluster-metadata-decoder``
    prints: the latest snapshot's ConfigRecords, then the log's after its end offset (a null value deletes the
    key, a RemoveTopicRecord the topic's configs)."""
    names = sorted(os.listdir(part))
    snaps = sorted(n for n in names if n.endswith(".checkpoint"))
    logs = [n for n in names if n.endswith(".log")]
    end = int(snaps[-1].split("-")[0]) if snaps else 0
    files = ([snaps[-1]] if snaps else []) + logs
    out = subprocess.run(
        [sys.executable, "-m", "kafka_ops", "dump", "-f", "json", "--cluster-metadata-decoder"]
        + [os.path.join(part, n) for n in files],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    configs: dict[tuple[int, str], dict[str, str]] = {}
    ids: dict[str, str] = {}
    for line in out.stdout.splitlines():
        row = json.loads(line)
        rec = row.get("decoded")
        if row.get("type") != "record" or not isinstance(rec, dict) or rec.get("data") is None:
            continue
        if not row["file"].endswith(".checkpoint") and row["offset"] < end:
            continue
        d = rec["data"]
        if rec["type"] == "TOPIC_RECORD":
            ids[d["topicId"]] = d["name"]
        elif rec["type"] == "CONFIG_RECORD":
            values = configs.setdefault((d["resourceType"], d["resourceName"]), {})
            if d["value"] is None:
                values.pop(d["name"], None)
            else:
                values[d["name"]] = d["value"]
        elif rec["type"] == "REMOVE_TOPIC_RECORD":
            configs.pop((2, ids.get(d["topicId"], "")), None)
    return {k: v for k, v in configs.items() if v}


@pytest.mark.skipif(not CORPUS.exists(), reason="corpus not present")
@pytest.mark.parametrize("rel", KRAFT_HOSTS)
def test_corpus_kraft_hosts_use_their_own_topic_configs(rel: str) -> None:
    log_dir = str(CORPUS / rel)
    part = os.path.join(log_dir, "__cluster_metadata-0")
    want = dumped_configs(part)  # empty for the 3.5.0 host: no topic of its own configs, no dynamic config
    h = gather(AuditOptions(log_dirs=[log_dir], broker_state="stopped", now_ms=NOW_MS))
    topics = {name: v for (rtype, name), v in want.items() if rtype == 2}
    assert h.configs.topics == topics
    for t in topics:
        assert h.configs.origin(t).startswith(("metadata log at offset", "metadata snapshot"))
    # the audit: no compacted (without delete) or retention.ms=-1 topic is forecast for deletion by time
    report = run_audit(
        AuditOptions(
            log_dirs=[log_dir], broker_state="stopped", now_ms=NOW_MS, expected_mounts={log_dir: "/"}
        )
    )
    keep = {
        t
        for t, v in topics.items()
        if v.get("retention.ms") == "-1" or v.get("cleanup.policy", "").split(",") == ["compact"]
    }
    gone = {s["topic"] for s in report["next_start"]["segments"] if s["deleted_by"] in ("retention.ms",)}
    assert not gone & keep, gone & keep
    forecast = {t["topic"] for t in report["forecast"]["topics"] if t["deleted_segments"]}
    assert not forecast & keep
    assert not [f for f in report["findings"] if f["check"].startswith("RET") and f["topic"] in keep]
    tc = report["inputs"]["topic_configs"]
    assert tc["source"] == "KRaft metadata log" and tc["value"] == part
    assert all(tc["topics"][t] != "broker defaults" for t in topics if t in tc["topics"])
    assert report["next_start"]["config_note"] is None


@pytest.mark.skipif(not CORPUS.exists(), reason="corpus not present")
def test_the_schema_registry_topic_is_no_longer_forecast_for_deletion() -> None:
    """The issue's measurement: _schemas-0, docker-connect-configs-0 and the ksql command topic were 'deleted by
    retention.ms' at the next start."""
    log_dir = str(CORPUS / KRAFT_HOSTS[0])
    report = run_audit(AuditOptions(log_dirs=[log_dir], broker_state="stopped", now_ms=NOW_MS))
    assert [s for s in report["next_start"]["segments"] if s["deleted_by"]] == []
    origin = report["inputs"]["topic_configs"]["topics"]
    assert origin["_schemas"] == "metadata snapshot 00000000000000060500-0000000025.checkpoint"
    assert origin["patient_admissions"] == "broker defaults"
    # the snapshot's segment .log is not in the corpus (a blob missing from the public snapshot): said
    assert any("00000000000000000000.log is missing" in n for n in report["inputs"]["topic_configs"]["notes"])


# --------------------------------------------------------------------------------------- built metadata logs


def sim(root: Path, retention_ms: int | None = None) -> SimulatedHost:
    """A stopped simulated KRaft host (node.id 1) with one topic whose records are 3 days old."""
    h = simulate_host(
        str(root),
        HostSpec(
            now_ms=NOW_MS,
            topics=[
                TopicSpec(
                    "orders", partitions=1, records_per_partition=300, span_ms=3 * DAY, segment_bytes=16384
                )
            ],
        ),
    )
    with open(h.server_properties, "a") as f:
        f.write("\nprocess.roles=broker,controller\nnode.id=1\nlog.retention.hours=168\n")
    return h


def first_dir(h: SimulatedHost) -> str:
    return h.log_dirs[0]  # the metadata log dir: the first of log.dirs


def audit(h: SimulatedHost) -> dict[str, Any]:
    return run_audit(
        AuditOptions(
            server_properties=h.server_properties,
            broker_state="stopped",
            now_ms=NOW_MS,
            kafka_version="3.9.0",
        )
    )


def retention_of(report: dict[str, Any]) -> int:
    seg = [s for s in report["next_start"]["segments"] if s["topic"] == "orders" and s["deleted_by"]]
    return len(seg)


def image_records(h: SimulatedHost) -> list[bytes]:
    tid = topic_id_of(h.partitions["orders-0"])
    return [topic_record("orders", tid), partition_record(tid, 0)]


def test_a_config_set_then_deleted_is_gone(tmp_path: Path) -> None:
    h = sim(tmp_path)
    part = write_metadata_log(
        first_dir(h),
        [
            image_records(h),
            [topic("orders", "retention.ms", "3600000")],
            [topic("orders", "retention.ms", None)],
        ],
    )
    image, whole = read_metadata(part)  # type: ignore[misc]
    assert whole and (2, "orders") not in image.configs
    report = audit(h)
    assert retention_of(report) == 0  # 7 days (server.properties): the 3-day-old records stay
    assert report["inputs"]["topic_configs"]["topics"]["orders"] == "broker defaults"
    # without the deletion, the one-hour override deletes the old segments
    h2 = sim(tmp_path / "b")
    write_metadata_log(first_dir(h2), [image_records(h2), [topic("orders", "retention.ms", "3600000")]])
    report = audit(h2)
    assert retention_of(report) > 0
    assert report["inputs"]["topic_configs"]["topics"]["orders"] == "metadata log at offset 2"
    assert {s["config_source"] for s in report["next_start"]["segments"] if s["deleted_by"]} == {
        "metadata log at offset 2"
    }


def test_a_topic_deleted_and_created_again_drops_its_old_configs(tmp_path: Path) -> None:
    h = sim(tmp_path)
    tid = topic_id_of(h.partitions["orders-0"])
    old = "q83vEjRWeJCrze8SNFZ4kA"
    part = write_metadata_log(
        first_dir(h),
        [
            [topic_record("orders", old), partition_record(old, 0)],
            [topic("orders", "retention.ms", "3600000"), topic("orders", "cleanup.policy", "delete")],
            [remove_topic_record(old)],
            [
                topic_record("orders", tid),
                partition_record(tid, 0),
                topic("orders", "segment.bytes", "1048576"),
            ],
        ],
    )
    image, _ = read_metadata(part)  # type: ignore[misc]
    assert image.configs[(2, "orders")] == {"segment.bytes": "1048576"}
    assert retention_of(audit(h)) == 0


def test_node_config_wins_over_the_cluster_default_which_wins_over_server_properties(tmp_path: Path) -> None:
    h = sim(tmp_path)
    hour = "3600000"
    write_metadata_log(first_dir(h), [image_records(h), [broker("", "log.retention.ms", hour)]])
    report = audit(h)
    assert retention_of(report) > 0  # the cluster default (1 h) beats log.retention.hours=168
    assert report["inputs"]["topic_configs"]["dynamic"] == {
        "dynamic cluster default": {"log.retention.ms": hour}
    }
    h2 = sim(tmp_path / "b")
    write_metadata_log(
        first_dir(h2),
        [
            image_records(h2),
            [broker("", "log.retention.ms", hour), broker("1", "log.retention.ms", str(30 * DAY))],
            [broker("2", "log.retention.ms", "1")],  # another node's: not this broker's
        ],
    )
    assert retention_of(audit(h2)) == 0  # node 1's 30 days beat the cluster default
    # a synonym Kafka does not take dynamically (log.retention.hours) is ignored, as DynamicBrokerConfig does
    h3 = sim(tmp_path / "c")
    write_metadata_log(first_dir(h3), [image_records(h3), [broker("", "log.retention.hours", "1")]])
    assert retention_of(audit(h3)) == 0
    # a topic override beats them all
    h4 = sim(tmp_path / "d")
    write_metadata_log(
        first_dir(h4),
        [image_records(h4), [broker("1", "log.retention.ms", hour), topic("orders", "retention.ms", "-1")]],
    )
    assert retention_of(audit(h4)) == 0


def test_snapshot_then_log_and_a_torn_tail(tmp_path: Path) -> None:
    h = sim(tmp_path)
    snap = [
        *image_records(h),
        topic("orders", "retention.ms", "3600000"),
        topic("orders", "cleanup.policy", "compact"),
    ]
    part = write_metadata_log(first_dir(h), [[topic("orders", "cleanup.policy", "delete")]], snapshot=snap)
    image, whole = read_metadata(part)  # type: ignore[misc]
    assert whole and image.configs[(2, "orders")] == {"retention.ms": "3600000", "cleanup.policy": "delete"}
    assert image.config_offsets[(2, "orders")] == 4  # the log's record after the 4-record snapshot
    report = audit(h)
    assert retention_of(report) > 0
    # a torn batch at the end: what is before it applies, the rest does not, and the report says where it stopped
    log = os.path.join(part, f"{4:020d}.log")
    with open(log, "ab") as f:
        f.write(b"\x00" * 8 + b"\x00\x00\x01\x00" + b"\x01")  # a batch header claiming 256 bytes, cut short
    image, _ = read_metadata(part)  # type: ignore[misc]
    assert image.configs[(2, "orders")]["cleanup.policy"] == "delete"
    assert image.stopped is not None and "ends in a" in image.stopped
    notes = audit(h)["inputs"]["topic_configs"]["notes"]
    assert any("read up to offset 4 only" in n for n in notes)


def test_topic_configs_option_still_wins(tmp_path: Path) -> None:
    h = sim(tmp_path)
    write_metadata_log(first_dir(h), [image_records(h), [topic("orders", "retention.ms", "3600000")]])
    with open(h.topic_configs, "w") as f:
        json.dump({"orders": {"retention.ms": "-1"}}, f)
    report = run_audit(
        AuditOptions(
            server_properties=h.server_properties, topic_configs=h.topic_configs, broker_state="stopped",
            now_ms=NOW_MS, kafka_version="3.9.0",
        )
    )  # fmt: skip
    assert retention_of(report) == 0
    tc = report["inputs"]["topic_configs"]
    assert tc["source"] == "--topic-configs" and tc["topics"]["orders"] == "file"


def test_zookeeper_mode_says_the_defaults_were_assumed(tmp_path: Path) -> None:
    """No metadata log, no --topic-configs: every retention prediction says the broker's defaults were assumed,
    in one text line, at the same severity."""
    h = simulate_host(
        str(tmp_path),
        HostSpec(
            now_ms=NOW_MS,
            topics=[
                TopicSpec(
                    "orders", partitions=1, records_per_partition=300, span_ms=10 * DAY, segment_bytes=16384
                )
            ],
        ),
    )
    opts = AuditOptions(
        server_properties=h.server_properties, broker_state="stopped", now_ms=NOW_MS, kafka_version="3.6.0"
    )
    # the simulator writes a KRaft broker's server.properties: without its metadata log, that is what is said
    note = run_audit(opts)["next_start"]["config_note"]
    assert note and "a KRaft broker, but its metadata log" in note
    with open(h.server_properties) as f:
        text = f.read().replace("process.roles=broker,controller\n", "zookeeper.connect=127.0.0.1:2181\n")
    with open(h.server_properties, "w") as f:
        f.write(text.replace("node.id=", "broker.id="))
    for d in h.log_dirs:  # a ZooKeeper-mode meta.properties (version 0, broker.id)
        path = os.path.join(d, "meta.properties")
        with open(path) as f:
            props = dict(
                line.split("=", 1) for line in f.read().splitlines() if "=" in line and line[0] != "#"
            )
        with open(path, "w") as f:
            f.write(f"version=0\nbroker.id={props['node.id']}\ncluster.id={props['cluster.id']}\n")
    report = run_audit(opts)
    note = report["next_start"]["config_note"]
    assert note and "ZooKeeper" in note
    segs = [s for s in report["next_start"]["segments"] if s["deleted_by"]]
    assert segs and {s["config_source"] for s in segs} == {"broker defaults (assumed: no topic configs read)"}
    assert report["forecast"]["config_note"] == note
    ret = [f for f in report["findings"] if f["check"] == "RET002"]
    assert ret and all("defaults were assumed" in f["message"] for f in ret)
    assert all(f["severity"] == "info" for f in ret)
    text = plan_sentences(report["next_start"], limit=50)
    assert sum("assumes the broker's defaults" in line for line in text) == 1


def test_the_cleaner_runs_with_the_dynamic_broker_configs(tmp_path: Path) -> None:
    # message.max.bytes and the cleaner's buffers set with kafka-configs --entity-default: the log cleaner is rebuilt
    # with them (LogCleaner.ReconfigurableConfigs), so CLN001/CLN003's buffer arithmetic must use them
    from kafka_ops.broker.cleaner import cleaner_buffers
    from kafka_ops.facts.collect import topic_config

    h = sim(tmp_path)
    with open(h.server_properties, "a") as f:
        f.write("message.max.bytes=1048588\nlog.cleaner.io.buffer.size=524288\nlog.cleaner.threads=1\n")
    opts = AuditOptions(server_properties=h.server_properties, broker_state="stopped", now_ms=NOW_MS)
    before = cleaner_buffers(facts := gather(opts), topic_config(facts, "orders"))
    assert (before.broker_max, before.io_buffer_size, before.threads) == (1_048_588, 524_288, 1)
    write_metadata_log(
        first_dir(h),
        [
            image_records(h),
            [
                broker("", "message.max.bytes", "8388608"),
                broker("", "log.cleaner.io.buffer.size", "2097152"),
                broker("1", "log.cleaner.threads", "2"),
                broker("", "log.cleaner.threads", "4"),  # the node's own value wins
            ],
        ],
    )
    after = cleaner_buffers(facts := gather(opts), topic_config(facts, "orders"))
    assert (after.broker_max, after.io_buffer_size, after.threads) == (8_388_608, 2_097_152, 2)
    assert after.maximum == 8_388_608 and after.initial == 2_097_152 // 2 // 2
