"""Simulated hosts and file surgery for the index and shutdown checks (IDX001-IDX005, SHUT002, SHUT003)."""

from __future__ import annotations

import os
import struct
from typing import Any

from kafka_ops.audit import run_audit
from kafka_ops.engine.indexes import read_offset_index, read_time_index
from kafka_ops.facts.model import AuditOptions
from kafka_ops.simulator.host import Failures, HostSpec, SimulatedHost, simulate_host

NOW_MS = 1_790_000_000_000

__all__ = ["NOW_MS", "Failures", "HostSpec"]


def simulate(root: Any, **kw: Any) -> SimulatedHost:
    return simulate_host(str(root), HostSpec(now_ms=NOW_MS, **kw))


def options(host: SimulatedHost, **kw: Any) -> AuditOptions:
    base: dict[str, Any] = dict(
        log_dirs=host.log_dirs, server_properties=host.server_properties, topic_configs=host.topic_configs,
        systemd_unit=host.systemd_unit, broker_state="stopped", now_ms=NOW_MS, kafka_version="3.7.0",
        broker_user=None,
    )  # fmt: skip
    base.update(kw)
    return AuditOptions(**base)


def audit(host: SimulatedHost, **kw: Any) -> dict[str, Any]:
    return run_audit(options(host, **kw))


def findings(report: dict[str, Any], check: str) -> list[dict[str, Any]]:
    return [f for f in report["findings"] if f["check"] == check]


def seg_path(part_dir: str, base: int, suffix: str) -> str:
    return os.path.join(part_dir, f"{base:020d}{suffix}")


def bases(part_dir: str) -> list[int]:
    return sorted(int(n.split(".")[0]) for n in os.listdir(part_dir) if n.endswith(".log"))


def offset_entries(part_dir: str, base: int) -> list[tuple[int, int]]:
    return read_offset_index(seg_path(part_dir, base, ".index")).real_entries


def time_entries(part_dir: str, base: int) -> list[tuple[int, int]]:
    return read_time_index(seg_path(part_dir, base, ".timeindex")).real_entries


def append_offset_entry(part_dir: str, base: int, offset: int, position: int) -> None:
    with open(seg_path(part_dir, base, ".index"), "ab") as f:
        f.write(struct.pack(">ii", offset - base, position))


def write_offset_entries(part_dir: str, base: int, entries: list[tuple[int, int]]) -> None:
    with open(seg_path(part_dir, base, ".index"), "wb") as f:
        for off, pos in entries:
            f.write(struct.pack(">ii", off - base, pos))


def write_time_entries(part_dir: str, base: int, entries: list[tuple[int, int]]) -> None:
    with open(seg_path(part_dir, base, ".timeindex"), "wb") as f:
        for ts, off in entries:
            f.write(struct.pack(">qi", ts, off - base))


def pad(path: str, size: int) -> None:
    """Extend a file with zeros, keeping its mtime (an untrimmed preallocation)."""
    st = os.stat(path)
    with open(path, "r+b") as f:
        f.truncate(size)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
