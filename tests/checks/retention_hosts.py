"""Simulated hosts for the retention checks (RET002-RET004) and `kafka-ops forecast`: small, so tests stay fast."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

from kafka_ops.audit import run_audit
from kafka_ops.engine import checkpoints as ckpt
from kafka_ops.engine.builder import NewRecord, build_batch
from kafka_ops.engine.layout import parse_partition_dir
from kafka_ops.engine.logdir import log_max_timestamp, read_segment_tails, scan_partition
from kafka_ops.facts.model import AuditOptions
from kafka_ops.simulator.host import DAY, HOUR, Failures, HostSpec, SimulatedHost, TopicSpec, simulate_host
from kafka_ops.simulator.writer import PartitionWriter, SegmentConfig

NOW_MS = 1_790_000_000_000
CHECK_MS = 300_000  # log.retention.check.interval.ms of the simulated server.properties
CLEANER_MS = (
    15_000  # log.cleaner.backoff.ms default: retention of compacted topics runs in the cleaner thread
)

__all__ = ["DAY", "FIRST_CHECK_MS", "HOUR", "NOW_MS", "Failures", "HostSpec", "TopicSpec"]


def simulate(root: Any, topics: list[TopicSpec] | None = None, **kw: Any) -> SimulatedHost:
    spec = HostSpec(now_ms=NOW_MS, topics=topics if topics is not None else [], **kw)
    return simulate_host(str(root), spec)


def options(host: SimulatedHost, **kw: Any) -> AuditOptions:
    base: dict[str, Any] = dict(
        log_dirs=host.log_dirs, server_properties=host.server_properties, topic_configs=host.topic_configs,
        systemd_unit=host.systemd_unit, broker_state="stopped", now_ms=NOW_MS, kafka_version="3.7.0",
    )  # fmt: skip
    base.update(kw)
    return AuditOptions(**base)


def audit(host: SimulatedHost, **kw: Any) -> dict[str, Any]:
    return run_audit(options(host, **kw))


def findings(report: dict[str, Any], check: str) -> list[dict[str, Any]]:
    return [f for f in report["findings"] if f["check"] == check]


def set_topic_config(host: SimulatedHost, topic: str, **values: str) -> None:
    with open(host.topic_configs) as f:
        cfg = json.load(f)
    cfg.setdefault(topic, {}).update({k.replace("_", "."): v for k, v in values.items()})
    with open(host.topic_configs, "w") as f:
        json.dump(cfg, f)


def add_server_property(host: SimulatedHost, line: str) -> None:
    with open(host.server_properties, "a") as f:
        f.write(line + "\n")


def _update_checkpoint(log_dir: str, name: str, key: tuple[str, int], value: int) -> None:
    path = os.path.join(log_dir, name)
    entries = ckpt.read_offset_checkpoint(path) if os.path.exists(path) else {}
    entries[key] = value
    with open(path, "w") as f:
        f.write(ckpt.encode_offset_checkpoint(entries))


def write_partition(
    host: SimulatedHost,
    topic: str,
    records: list[tuple[int, str]],
    *,
    roll_before: tuple[int, ...] = (),
    config: dict[str, str],
    cleaner_offset: int | None = None,
    log_dir: int = 0,
) -> str:
    """Write ``topic``-0 as a broker leaves it after a clean stop: one single-record batch per (timestamp, key),
    rolling before the given record indexes only (no time/size rolls: what the cleaner writes), checkpoints
    updated. Returns the partition dir."""
    d = host.log_dirs[log_dir]
    path = os.path.join(d, f"{topic}-0")
    w = PartitionWriter(path, SegmentConfig(segment_bytes=1 << 40, segment_ms=1 << 60))
    for i, (ts, key) in enumerate(records):
        if i in roll_before:
            w.roll()
        off = w.next_offset
        w.append(build_batch(off, [NewRecord(key.encode(), b'{"plan":"pro"}', ts)]), off, off, ts)
    w.close(clean_shutdown=True)
    with open(os.path.join(path, ckpt.PARTITION_METADATA), "w") as f:
        # a real id: Kafka never writes the zero one, and refuses it at load (PartitionMetadataReadBuffer: DIR005)
        f.write("version: 0\ntopic_id: c2VlZC0wMDMtdXNlcnN0YQ\n")
    key = (topic, 0)
    _update_checkpoint(d, ckpt.RECOVERY_POINT, key, w.next_offset)
    _update_checkpoint(d, ckpt.REPLICATION, key, w.next_offset)
    _update_checkpoint(d, ckpt.LOG_START, key, 0)
    if cleaner_offset is not None:
        _update_checkpoint(d, ckpt.CLEANER, key, cleaner_offset)
    set_topic_config(host, topic, **{k.replace(".", "_"): v for k, v in config.items()})
    host.partitions[f"{topic}-0"] = path
    return path


def plant_seed_003(host: SimulatedHost) -> str:
    """Seed 003 as the cleaner leaves it: segment 0 holds 30 records from 120 days ago (keys never written again)
    merged with 10 records from two hours ago; segment 40 (active) holds 20 recent records."""
    old = NOW_MS - 120 * DAY
    recent = NOW_MS - 2 * HOUR
    records = [(old + i * HOUR, f"user-{i}") for i in range(30)]
    records += [(recent + i * 1000, f"user-{i}") for i in range(30, 60)]
    return write_partition(
        host, "user-state", records, roll_before=(40,),
        config={"cleanup.policy": "compact,delete", "retention.ms": str(7 * DAY)}, cleaner_offset=40,
    )  # fmt: skip


def segments(part_dir: str) -> list[tuple[int, int, int, int]]:
    """(base offset, .log bytes, time index last timestamp, records' max timestamp) of each segment."""
    p = scan_partition(part_dir, parse_partition_dir(os.path.basename(part_dir)))
    out = []
    for s in p.segments:
        read_segment_tails(s)
        last = s.time_tail.last[0] if s.time_tail and s.time_tail.last else -1
        out.append((s.base_offset, s.log.size, last, log_max_timestamp(s)))
    return out


# A stopped broker's first retention check runs LogManager's initial task delay (30 s) after its start, which
# the audit takes to be NOW_MS; then every interval.
FIRST_CHECK_MS = NOW_MS + 30_000


def next_check(t: int, interval: int = CHECK_MS, first: int = FIRST_CHECK_MS) -> int:
    """The first retention check at or after ``t`` (checks at ``first``, + interval, ...; a running broker's
    checks are taken to run at NOW_MS, + interval)."""
    return first if t <= first else first + -(-(t - first) // interval) * interval


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kafka_ops.cli", *args], capture_output=True, text=True)


def cli_inputs(host: SimulatedHost, *extra: str) -> list[str]:
    args = []
    for d in host.log_dirs:
        args += ["--log-dir", d]
    return [
        *args, "--server-properties", host.server_properties, "--topic-configs", host.topic_configs,
        "--systemd-unit", host.systemd_unit, "--broker-state", "stopped", "--now", str(NOW_MS),
        "--kafka-version", "3.7.0", *extra,
    ]  # fmt: skip
