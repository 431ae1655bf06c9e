"""What a lab broker did at a start, in the shape of the model's prediction (``next_start`` of ``kafka-ops audit
--format json``): the product's reader (:mod:`kafka_ops.rehearse.outcome`, which the rehearsal runs on the
sandboxed start: one way to read a broker's start, issue 38), plus :func:`broker_view`, which asks the running
broker (admin API) for its log dirs and each partition's offsets.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kafka_ops.rehearse.outcome import (
    HASH_LIMIT,
    FileState,
    LogEntry,
    Observation,
    Snapshot,
    exit_reason,
    future_dirs,
    leftovers,
    next_start,
    offline_dirs,
    parse_log,
    snapshot,
    strays,
)

__all__ = [
    "HASH_LIMIT", "FileState", "LogEntry", "Observation", "Snapshot", "broker_view", "exit_reason", "future_dirs",
    "leftovers", "next_start", "offline_dirs", "parse_log", "snapshot", "strays",
]  # fmt: skip


# -- the running broker's view -------------------------------------------------------------------------------


def broker_view(bootstrap: str, partitions: Iterable[Any] | None = None) -> dict[str, Any]:
    """The running broker's log dirs (with their error) and each partition's dir and offsets (admin API)."""
    from kafka.errors import IncompatibleBrokerVersion, for_code

    from kafka_lab.produce import admin, offsets

    client = admin(bootstrap)
    try:
        described = client.describe_log_dirs()
    except IncompatibleBrokerVersion:
        # before 1.0 (KIP-113): no DescribeLogDirs, and no ListOffsets v2 for kafka-python 3; a running broker of
        # then serves every partition it has (one failed dir stopped the whole broker before KIP-112)
        return {"log_dirs": [], "partitions": {}, "served_all": True}
    finally:
        client.close()
    log_dirs, where = [], {}
    for broker in described:
        for d in broker["log_dirs"]:
            err = for_code(d["error_code"]).__name__ if d["error_code"] else None
            log_dirs.append({"path": d["log_dir"], "error": err})
            for t in d.get("topics", []):
                for p in t["partitions"]:
                    where[f"{t['name']}-{p['partition_index']}"] = {
                        "dir": d["log_dir"],
                        "size": p["partition_size"],
                    }
    parts: dict[str, Any] = {k: dict(v) for k, v in where.items()}
    if partitions is not None:
        # a partition of a dir going offline right now has no leader again: the caller asks again (trial._ask)
        for tp, (start, end) in offsets(bootstrap, partitions, wait_s=5).items():
            parts.setdefault(f"{tp.topic}-{tp.partition}", {}).update({"log_start": start, "log_end": end})
    return {"log_dirs": log_dirs, "partitions": parts}
