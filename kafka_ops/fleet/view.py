"""The fleet view, computed on the driver from what the hosts streamed back: what no single host can see.

Each task tallies its hosts' partition rows (:func:`tally`: per host its log dirs, partitions and bytes, per topic
the partitions it holds); the driver collects those tallies with the findings and host rows in the one collect of
the run (kilobytes per host, not one row per partition) and computes the view here, in plain Python: a fixed
handful of Spark jobs per run whatever the fleet's size, where 29 small Spark queries cost 10-40 s.

* Replicas: the same topic-partition found on several hosts is one partition's replicas.
* Replicas at risk: RET001 findings (time retention will delete recent data) joined with who leads the partition.
  On the **leader** the loss is cluster-wide: the leader deletes the segments and advances its log start offset,
  and each follower deletes the same offsets when a fetch response carries it
  (apache/kafka 1eb7644 ``ReplicaFetcherThread.processPartitionData`` ->
  ``log.maybeIncrementLogStartOffset(leaderLogStartOffset, LeaderOffsetIncremented)``). On a **follower** only
  that replica's copy goes (retention runs on every replica: ``LogManager.cleanupLogs`` takes all logs): the
  leader keeps serving the data and the follower does not fetch it again (it fetches from its own log end offset),
  so the partition has one copy less of those offsets, and loses them if that follower becomes leader. A replica
  whose leader is unknown is treated as possibly the leader.
* Per topic: replicas, bytes, partitions at risk and partitions that lose data cluster-wide.
* Per host: status (ok or the reason it was not audited), partitions, bytes, findings per severity.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import Any

CONSEQUENCE = {
    "leader": "data loss cluster-wide: the leader deletes these offsets and its followers follow its log start "
    "offset (ReplicaFetcherThread -> maybeIncrementLogStartOffset)",
    "follower": "this replica's copy is deleted; the leader keeps the data and the follower does not fetch it "
    "again: one copy less, lost if this replica becomes leader",
    "unknown": "leader unknown: treated as possibly the leader (data loss cluster-wide)",
}
SEVERITIES = ("critical", "error", "warning", "info")


def tally(host: str, rows: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """One host's partition rows summed up for the view: log dirs, partitions, bytes, and per topic the
    partitions (sorted, distinct), rows and bytes."""
    dirs: set[str] = set()
    parts = 0
    size = 0
    topics: dict[str, dict[str, Any]] = {}
    for r in rows:
        dirs.add(r["log_dir"])
        parts += 1
        size += r.get("size_bytes") or 0
        t = topics.setdefault(r["topic"], {"partitions": set(), "rows": 0, "bytes": 0})
        t["partitions"].add(r["partition"])
        t["rows"] += 1
        t["bytes"] += r.get("size_bytes") or 0
    return {
        "host": host, "log_dirs": len(dirs), "partitions": parts, "log_bytes": size,
        "topics": {k: {**v, "partitions": sorted(v["partitions"])} for k, v in sorted(topics.items())},
    }  # fmt: skip


def _long(v: Any) -> int | None:
    try:
        return int(v) if v is not None else None
    except (TypeError, ValueError):
        return None


def _key(*vals: Any) -> tuple[Any, ...]:
    """Ascending, nulls first (as Spark orders)."""
    return tuple((v is not None, v if v is not None else 0) for v in vals)


def replicas_at_risk(
    tallies: list[dict[str, Any]], findings: list[dict[str, Any]], leaders: dict[tuple[str, int], int],
    hosts: list[dict[str, Any]],
) -> list[dict[str, Any]]:  # fmt: skip
    ret: dict[tuple[str, str, int], dict[str, Any]] = {}
    for f in findings:
        if f["check"] != "RET001":
            continue
        d = f.get("details") or {}
        g = ret.setdefault((f["host"], f["topic"], f["partition"]), {"segments": 0, "bytes": [], "at": []})
        g["segments"] += 1
        if _long(d.get("bytes")) is not None:
            g["bytes"].append(_long(d.get("bytes")))
        if _long(d.get("deleted_at_ms")) is not None:
            g["at"].append(_long(d.get("deleted_at_ms")))
    holders: dict[tuple[str, int], set[str]] = defaultdict(set)
    for t in tallies:
        for topic, v in t["topics"].items():
            for p in v["partitions"]:
                holders[(topic, p)].add(t["host"])
    node = {h["host"]: h["node_id"] for h in hosts}
    out = []
    for (host, topic, part), g in ret.items():
        leader = leaders.get((topic, part))
        n = node.get(host)
        role = "unknown" if leader is None or n is None else "leader" if leader == n else "follower"
        out.append({
            "topic": topic, "partition": part, "host": host, "node_id": n, "leader": leader, "role": role,
            "replicas_found": len(holders[(topic, part)]) if (topic, part) in holders else None,
            "segments": g["segments"], "bytes": sum(g["bytes"]) if g["bytes"] else None,
            "first_deletion_ms": min(g["at"]) if g["at"] else None, "consequence": CONSEQUENCE[role],
        })  # fmt: skip
    return sorted(out, key=lambda r: _key(r["topic"], r["partition"], r["host"]))


def per_topic(
    tallies: list[dict[str, Any]], findings: list[dict[str, Any]], at_risk: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    base: dict[str, dict[str, Any]] = {}
    for t in tallies:
        for topic, v in t["topics"].items():
            b = base.setdefault(topic, {"partitions": set(), "replicas": 0, "hosts": set(), "log_bytes": 0})
            b["partitions"].update(v["partitions"])
            b["replicas"] += v["rows"]
            b["hosts"].add(t["host"])
            b["log_bytes"] += v["bytes"]
    found: dict[str, int] = defaultdict(int)
    for f in findings:
        if f.get("topic") is not None:
            found[f["topic"]] += 1
    by_topic: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in at_risk:
        by_topic[r["topic"]].append(r)
    out = []
    for topic, b in base.items():
        risk = by_topic.get(topic, [])
        lose = [r for r in risk if r["role"] in ("leader", "unknown")]
        out.append({
            "topic": topic, "partitions": len(b["partitions"]), "replicas": b["replicas"], "hosts": len(b["hosts"]),
            "log_bytes": b["log_bytes"], "partitions_at_risk": len({r["partition"] for r in risk}),
            "partitions_losing_data": len({r["partition"] for r in lose}),
            "bytes_lost_cluster_wide": sum(r["bytes"] or 0 for r in lose), "findings": found.get(topic, 0),
        })  # fmt: skip
    return sorted(out, key=lambda t: (-t["partitions_losing_data"], -t["partitions_at_risk"], t["topic"]))


def per_host(
    tallies: list[dict[str, Any]], findings: list[dict[str, Any]], hosts: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    size = {t["host"]: t for t in tallies}
    sev: dict[str, dict[str, int]] = defaultdict(lambda: dict.fromkeys(SEVERITIES, 0))
    for f in findings:
        if f["severity"] in SEVERITIES:
            sev[f["host"]][f["severity"]] += 1
    out = []
    for h in sorted(hosts, key=lambda h: _key(h["host"])):
        t = size.get(h["host"]) or {}
        out.append({
            "host": h["host"], "address": h["address"], "status": h["status"], "reason": h["reason"],
            "node_id": h["node_id"], "elapsed_s": float(h["elapsed_s"]), "log_dirs": t.get("log_dirs", 0),
            "partitions": t.get("partitions", 0), "log_bytes": t.get("log_bytes", 0),
            **(sev[h["host"]] if h["host"] in sev else dict.fromkeys(SEVERITIES, 0)),
        })  # fmt: skip
    return out


def fleet_view(
    tallies: list[dict[str, Any]], findings: list[dict[str, Any]], host_rows: list[dict[str, Any]],
    leaders: dict[tuple[str, int], int],
) -> dict[str, Any]:  # fmt: skip
    """Per host, per topic and the replicas at risk; ``findings`` with ``details`` as a dict."""
    at_risk = replicas_at_risk(tallies, findings, leaders, host_rows)
    return {
        "hosts": per_host(tallies, findings, host_rows),
        "topics": per_topic(tallies, findings, at_risk),
        "replicas_at_risk": at_risk,
    }
