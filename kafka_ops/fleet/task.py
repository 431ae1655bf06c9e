"""What one Spark task runs on an executor: audit a group of hosts, yield their records as they arrive.

Records are ``(kind, host, json payload)`` tuples: ``partition`` (``kafka_ops.audit.partition_row`` plus ``host``),
``finding``, ``report`` (the host's report without its findings), ``leader`` (from a KRaft metadata log found in a
local log dir), ``host`` (status, node id, elapsed time) and ``tally`` (the host's partition rows summed up for the
fleet view: ``kafka_ops.fleet.view.tally``; the driver collects everything but the partition rows). A host that cannot be audited yields its FLEET finding,
evaluated by the check modules (``kafka_ops/checks/fleet00N.py``) on the connection facts gathered here.
"""

from __future__ import annotations

import json
import os
import queue
import time
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from kafka_ops.checks.base import DEFAULT_FAIL_ON
from kafka_ops.fleet.inventory import Target

SSH_THREADS = 16  # hosts audited at once per task over SSH (they mostly wait on the network)
Record = tuple[str, str, str]
_DONE = object()


def collector_args(t: Target, s: dict[str, Any]) -> list[str]:
    """The collector's options for a host: the target's (inventory, overridden by the CLI) and the run's."""
    a: list[str] = []
    for d in t.log_dirs:
        a += ["--log-dir", d]
    for opt, val in (
        ("--server-properties", t.server_properties), ("--broker-user", t.broker_user),
        ("--kafka-version", t.kafka_version), ("--systemd-unit", t.systemd_unit),
        ("--topic-configs", s.get("topic_configs")), ("--broker-state", s.get("broker_state")),
        ("--now", str(s["now_ms"])), ("--horizon", s.get("horizon")), ("--fail-on", s.get("fail_on")),
        ("--host", t.name),
    ):  # fmt: skip
        if val:
            a += [opt, str(val)]
    for log in s.get("broker_log") or []:
        a += ["--broker-log", log]
    for d, m in t.expected_mounts or tuple((s.get("expect_mount") or {}).items()):
        a += ["--expect-mount", f"{d}={m}"]
    a += ["--probe-as-user"] if s.get("probe_as_user") else []
    a += ["--deep"] if s.get("deep") else []
    return a


def _dumps(obj: Any) -> str:
    return json.dumps(obj, default=str, separators=(",", ":"))


def failure_records(t: Target, kind: str, error: str, s: dict[str, Any], elapsed: float) -> list[Record]:
    """The FLEET finding of a host that was not audited, from the check modules, on connection facts."""
    from kafka_ops.audit import AuditContext
    from kafka_ops.checks import load_all
    from kafka_ops.facts.model import AuditOptions, HostFacts, Input

    h = HostFacts(t.name, s["now_ms"], 0, AuditOptions(host=t.name))
    conn = {
        "kind": kind, "error": error, "address": t.address, "port": t.port, "user": t.user,
        "broker_user": t.broker_user, "known_hosts": s.get("known_hosts") or "~/.ssh/known_hosts",
    }  # fmt: skip
    h.inputs["fleet_connection"] = Input(conn, "kafka-ops fleet audit")
    ctx = AuditContext(h)
    out: list[Record] = []
    for cid, spec in load_all().items():
        if cid.startswith("FLEET"):
            for f in spec.run(ctx, h):
                f.host = t.name
                out.append(("finding", t.name, _dumps(_flat_finding(f.to_dict()))))
    out.append(("host", t.name, _dumps(_host_row(t, kind, error, elapsed, []))))
    return out


def _flat_finding(f: dict[str, Any]) -> dict[str, Any]:
    f = dict(f)
    f["details"] = _dumps(f.get("details") or {})  # a JSON string column: details differ per check
    return f


def _host_row(
    t: Target, status: str, error: str | None, elapsed: float, node_ids: list[int]
) -> dict[str, Any]:
    return {
        "host": t.name, "address": t.address or "local", "status": status, "reason": error,
        "node_id": t.node_id if t.node_id is not None else (node_ids[0] if node_ids else None),
        "elapsed_s": round(elapsed, 3),
    }  # fmt: skip


def _report_records(t: Target, report: dict[str, Any], elapsed: float, node_ids: list[int]) -> list[Record]:
    out: list[Record] = []
    for f in report["findings"]:
        f["host"] = t.name
        out.append(("finding", t.name, _dumps(_flat_finding(f))))
    rest = {k: v for k, v in report.items() if k != "findings"}
    out.append(("report", t.name, _dumps(rest)))
    out.append(("host", t.name, _dumps(_host_row(t, "ok", None, elapsed, node_ids))))
    return out


def _local_metadata(t: Target, log_dirs: Iterable[str]) -> tuple[list[Record], list[int]]:
    """Leaders from a KRaft metadata log and node.id from meta.properties, for log dirs on this machine."""
    from kafka_ops.engine.checkpoints import read_meta_properties
    from kafka_ops.engine.errors import EngineError
    from kafka_ops.fleet.leaders import METADATA_PARTITION, read_metadata_log

    out: list[Record] = []
    nodes: list[int] = []
    for d in log_dirs:
        try:
            meta = read_meta_properties(os.path.join(d, "meta.properties"))
            if meta.node_id is not None:
                nodes.append(meta.node_id)
        except (EngineError, OSError):
            pass
        md = os.path.join(d, METADATA_PARTITION)
        if os.path.isdir(md):
            try:
                lead = read_metadata_log(md)
            except (EngineError, OSError, ValueError, IndexError):
                continue  # an unreadable metadata log: leaders stay unknown (the audit reports the file)
            for (topic, part), leader in sorted(lead.leaders.items()):
                row = {"topic": topic, "partition": part, "leader": leader, "source": lead.source}
                row["last_offset"] = lead.last_offset
                out.append(("leader", t.name, _dumps(row)))
    return out, nodes


def audit_local(t: Target, s: dict[str, Any]) -> Iterator[Record]:
    from kafka_ops.audit import apply_gate, partition_row, run_audit
    from kafka_ops.audit.options import audit_options
    from kafka_ops.engine.errors import EngineError

    start = time.monotonic()
    rows: list[Record] = []

    def on_partition(pf: Any) -> None:
        rows.append(("partition", t.name, _dumps({"host": t.name, **partition_row(pf)})))

    try:
        opts = audit_options(
            log_dir=list(t.log_dirs), server_properties=t.server_properties, broker_user=t.broker_user,
            kafka_version=t.kafka_version, topic_configs=s.get("topic_configs"), systemd_unit=t.systemd_unit,
            broker_state=s.get("broker_state"), now=str(s["now_ms"]), horizon=s.get("horizon"),
            broker_log=s.get("broker_log"), probe_as_user=s.get("probe_as_user"), deep=s.get("deep"),
            host=t.name, expect_mount=[f"{d}={m}" for d, m in t.expected_mounts] or
            [f"{d}={m}" for d, m in (s.get("expect_mount") or {}).items()],
        )  # fmt: skip
        opts.workers = 1  # Spark runs one audit per core already: no worker processes of its own
        opts.cluster, opts.cluster_skip = s.get("cluster"), s.get("cluster_skip")  # asked once, by the driver
        report = run_audit(opts, on_partition=on_partition)
        if not report["log_dirs"]:
            raise ValueError("no log dirs to audit: give --log-dir or --server-properties")
    except (EngineError, ValueError, OSError) as exc:
        yield from failure_records(t, "collector", str(exc), s, time.monotonic() - start)
        return
    apply_gate(report, s.get("fail_on") or DEFAULT_FAIL_ON)
    yield from rows
    meta, nodes = _local_metadata(t, [ld["path"] for ld in report["log_dirs"]])
    yield from meta
    yield from _report_records(t, report, time.monotonic() - start, nodes)


def audit_remote(t: Target, s: dict[str, Any], script: str) -> Iterator[Record]:
    from dataclasses import replace

    from kafka_ops.fleet.shipping import executor_file
    from kafka_ops.fleet.ssh import HOST_TIMEOUT, HostFailure, stream_collector

    start = time.monotonic()
    files = s.get("spark_files")  # credentials the driver sent with the job: their copies on this executor
    conn = replace(t, key_file=executor_file(t.key_file, files))
    kh = s.get("known_hosts")
    try:
        for obj in stream_collector(
            conn,
            script,
            collector_args(t, s),
            executor_file(kh, files),
            float(s.get("connect_timeout") or 10),
            known_hosts_shown=kh,
            host_timeout=float(s.get("host_timeout") or HOST_TIMEOUT),
        ):
            if obj.get("kind") == "partition":
                row = {k: v for k, v in obj.items() if k != "kind"}
                yield ("partition", t.name, _dumps({"host": t.name, **row}))
            elif obj.get("kind") == "report":
                report = obj["report"]
                if s.get("cluster") is not None:
                    add_cluster_findings(report, t, s)
                yield from _report_records(t, report, time.monotonic() - start, [])
    except HostFailure as exc:
        yield from failure_records(t, exc.kind, exc.error, s, time.monotonic() - start)


def add_cluster_findings(report: dict[str, Any], t: Target, s: dict[str, Any]) -> None:
    """A remote host's cluster checks, from the cluster facts the driver asked once (the collector on the host
    does not ask the cluster): the same CLU check modules (kafka_ops.audit.cluster_findings), the host's node id
    from its report's identity (meta.properties) or the inventory; the summary and the gate follow."""
    from kafka_ops.audit import apply_gate, cluster_findings, finding_order

    ident = report.get("identity") or {}
    node = ident.get("node_id") if ident.get("node_id") is not None else t.node_id
    found = cluster_findings(
        s["cluster"], t.name, node, ident.get("cluster_id"), report.get("broker_state", "unknown")
    )
    report["findings"] = sorted(
        report["findings"] + found,
        key=lambda f: finding_order(
            f["severity"], f["check"], f.get("log_dir"), f.get("path"), f.get("segment")
        ),
    )
    for f in found:
        report["summary"][f["severity"]] = report["summary"].get(f["severity"], 0) + 1
    report["skipped"] = [
        x
        for x in report.get("skipped", [])
        if x.get("input") != "cluster" and not x.get("check", "").startswith("CLU")
    ]
    report.setdefault("inputs", {})["cluster"] = {
        "value": s["cluster"].get("bootstrap"),
        "source": "--bootstrap-server",
    }
    apply_gate(report, s.get("fail_on") or DEFAULT_FAIL_ON)


def audit_hosts(targets: list[Target], s: dict[str, Any]) -> Iterator[Record]:
    """Audit a task's hosts: remote ones concurrently (SSH waits on the network), records streamed as they come."""
    from kafka_ops.fleet.view import tally

    script = ""
    if any(not t.local for t in targets):
        from kafka_ops.collector import ship
        from kafka_ops.fleet.shipping import need_paramiko

        need_paramiko()  # else every SSH host would be a misleading FLEET005: the job fails with how to ship
        script = ship.build()
    keep = s.get("keep_partitions", True)  # the partition rows themselves are only needed for --results

    def audited(t: Target) -> Iterator[Record]:
        try:
            yield from audit_local(t, s) if t.local else audit_remote(t, s, script)
        except Exception as exc:  # never lose a host silently, nor fail the job: it is the host's FLEET005
            yield from failure_records(t, "collector", f"{type(exc).__name__}: {exc}", s, 0.0)

    def guarded(t: Target) -> Iterator[Record]:
        rows = []
        for rec in audited(t):
            if rec[0] == "partition":
                rows.append(json.loads(rec[2]))
                if not keep:
                    continue
            yield rec
        yield ("tally", t.name, _dumps(tally(t.name, rows)))

    if len(targets) == 1:
        yield from guarded(targets[0])
        return
    q: queue.Queue[Any] = queue.Queue(maxsize=10_000)

    def work(t: Target) -> None:
        try:
            for rec in guarded(t):
                q.put(rec)
        finally:
            q.put(_DONE)

    # local audits are CPU-bound (one at a time per task); remote ones mostly wait
    remote = [t for t in targets if not t.local]
    local = [t for t in targets if t.local]
    threads = max(1, int(s.get("ssh_threads") or SSH_THREADS))
    with ThreadPoolExecutor(max_workers=max(1, min(threads, len(remote)) + (1 if local else 0))) as pool:
        for t in remote:
            pool.submit(work, t)
        if local:
            pool.submit(lambda: [work(t) for t in local])
        done = 0
        while done < len(targets):
            rec = q.get()
            if rec is _DONE:
                done += 1
            else:
                yield rec


def run_partition(groups: Iterable[list[dict[str, Any]]], s: dict[str, Any]) -> Iterator[Record]:
    """``mapPartitions`` body: one group of targets as dicts (plain data crosses the wire) per Spark partition."""
    yield from audit_hosts([_target(d) for g in groups for d in g], s)


def _target(d: dict[str, Any]) -> Target:
    d = dict(d)
    d["log_dirs"] = tuple(d["log_dirs"])
    d["expected_mounts"] = tuple(tuple(x) for x in d["expected_mounts"])
    return Target(**d)
