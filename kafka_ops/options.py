"""Audit options from command-line values: shared by the CLI, the collector shipped to hosts and the fleet job.

Standard library only (it is shipped to broker hosts with the collector); errors are ValueError with a one-line message.
"""

from __future__ import annotations

import datetime as dt
import os
import re
from collections.abc import Iterable
from typing import Any

from kafka_ops.facts.collect import AuditOptions

_SPAN = re.compile(r"^(\d+)\s*(ms|s|m|min|h|d|w)?$")
_SPAN_MS = {
    "ms": 1,
    "s": 1000,
    "m": 60_000,
    "min": 60_000,
    "h": 3_600_000,
    "d": 86_400_000,
    "w": 604_800_000,
    None: 3_600_000,
}


def parse_span(text: str) -> int:
    """'24h', '7d', '90m', '3600s' -> milliseconds (a bare number is hours)."""
    m = _SPAN.match(text.strip())
    if not m:
        raise ValueError(f"bad duration {text!r} (use e.g. 24h, 7d, 90m)")
    return int(m.group(1)) * _SPAN_MS[m.group(2)]


def parse_now(text: str) -> int:
    """Epoch milliseconds, or an ISO 8601 time (UTC unless it says otherwise)."""
    if text.isdigit():
        return int(text)
    try:
        t = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError as exc:
        raise ValueError(f"bad time {text!r} (use epoch ms or ISO 8601, e.g. 2026-11-22T10:00:00Z)") from exc
    if t.tzinfo is None:
        t = t.replace(tzinfo=dt.UTC)
    return int(t.timestamp() * 1000)


def parse_expected_mounts(items: Iterable[str]) -> dict[str, str]:
    """['/data/kafka-1=/data/kafka-1', ...] -> {absolute log dir: mount point}."""
    out = {}
    for item in items:
        d, sep, m = item.partition("=")
        if not sep or not d or not m:
            raise ValueError(f"--expect-mount takes LOG_DIR=MOUNT_POINT, not {item!r}")
        out[os.path.abspath(d)] = m
    return out


def audit_options(**kw: Any) -> AuditOptions:
    """AuditOptions from the values of the CLI's options (named as the options are, without dashes)."""
    now_ms = parse_now(str(kw["now"])) if kw.get("now") else None
    return AuditOptions(
        log_dirs=[str(p) for p in kw.get("log_dir") or []],
        server_properties=str(kw["server_properties"]) if kw.get("server_properties") else None,
        broker_user=kw.get("broker_user"),
        kafka_version=kw.get("kafka_version"),
        topic_configs=str(kw["topic_configs"]) if kw.get("topic_configs") else None,
        systemd_unit=str(kw["systemd_unit"]) if kw.get("systemd_unit") else None,
        broker_state=str(kw.get("broker_state") or "auto"),
        now_ms=now_ms,
        horizon_ms=parse_span(str(kw.get("horizon") or "24h")),
        logs=[str(p) for p in kw.get("broker_log") or []],
        probe_as_user=bool(kw.get("probe_as_user")),
        deep=bool(kw.get("deep")),
        host=kw.get("host"),
        expected_mounts=parse_expected_mounts(kw.get("expect_mount") or []),
    )
