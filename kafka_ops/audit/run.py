"""The audit as a library: gather facts, run every check, return the report (a JSON-ready dict).

Standard library only, so that the same code runs on a bare broker host (shipped by the Ansible role) and in
the Spark job. The CLI validates the report against the pydantic models (kafka_ops.render.models) and renders it.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from functools import partial
from typing import Any

from kafka_ops import __version__
from kafka_ops.audit.context import AuditContext
from kafka_ops.broker.forecast import AUDIT_FORECAST, KEEP_SEGMENTS, HostForecast, for_check
from kafka_ops.broker.forecast import prepare as forecast_prepare
from kafka_ops.broker.plan import NextStartPlan
from kafka_ops.checks import load_all
from kafka_ops.checks.base import SEVERITY_RANK, CheckSpec, Finding
from kafka_ops.engine import versions
from kafka_ops.engine.shell import content_free
from kafka_ops.facts.collect import gather, other_cluster
from kafka_ops.facts.model import AuditOptions, HostFacts, LogDirFacts, PartitionFacts
from kafka_ops.facts.pool import iter_log_dirs

REPORT_SCHEMA_VERSION = 1
# Recovery throughput per recovery thread, from seed 002's broker log: "Completed load of log monitor-2 with
# 1 log segments ... in 18507 ms" after re-reading 886,339,595 bytes: about 48 MB/s.

# What a check needs, and why it is skipped without it
INPUT_REASONS = {
    "broker_user": "the broker user is unknown (give --broker-user, or a unit with User=)",
    "systemd_unit": "no systemd unit (give --systemd-unit)",
    "kafka_version": "the Kafka version is unknown (give --kafka-version)",
    "log_dirs": "no log dirs (give --log-dir or --server-properties)",
    "logs": "no broker logs (give --broker-log)",
    "topic_configs": "no topic configs (give --topic-configs)",
    "broker_stopped": "the broker is running: this is only decided for a stopped broker",
    "cluster": "no --bootstrap-server: the cluster checks need the running cluster",
}


def _missing(spec: CheckSpec, h: HostFacts) -> str | None:
    for need in spec.needs:
        if need == "broker_stopped":
            if h.broker_state == "running":
                return INPUT_REASONS[need]
        elif need == "broker_user":
            if h.identity is None:
                return h.skipped_inputs.get("broker_user", INPUT_REASONS[need])
        elif need == "systemd_unit":
            if h.unit is None:
                return h.skipped_inputs.get("systemd_unit", INPUT_REASONS[need])
        elif need == "kafka_version":
            if h.kafka_version is None:
                return h.skipped_inputs.get("kafka_version", INPUT_REASONS[need])
        elif not h.has(need):
            return h.skipped_inputs.get(need, INPUT_REASONS.get(need, f"input {need} is missing"))
    return None


def _stamp(f: Finding, h: HostFacts, log_dir: str | None) -> Finding:
    f.host = f.host or h.host
    f.log_dir = f.log_dir or log_dir
    # Kafka class names as the audited version has them (none when it is unknown): engine.versions.localize
    f.message = versions.localize(f.message, h.kafka_version)
    f.remediation = versions.localize(f.remediation, h.kafka_version)
    return f


def prepare_partition(
    wctx: AuditContext, alone: list[CheckSpec], grid: list[int] | None, pf: PartitionFacts
) -> None:
    """In an audit worker process, after gathering ``pf``: its forecast and size projection, and the findings of
    the checks whose only scope is the partition (pure functions of the host and ``pf``), so that the parent
    only takes them; the checks that keep state across partitions stay with the parent."""
    forecast_prepare(wctx.host, pf, grid)
    pf.findings = {spec.id: list(spec.run(wctx, pf)) for spec in alone}


def finding_order(
    severity: str, check: str, log_dir: str | None, path: str | None, segment: int | None
) -> tuple[int, str, str, str, int]:
    """The report's order of findings: most severe first, then by check, log dir, path and segment."""
    return (-SEVERITY_RANK[severity], check, log_dir or "", path or "", segment or -1)


def cluster_findings(
    cluster: dict[str, Any],
    host: str,
    node_id: int | None,
    cluster_id: str | None,
    broker_state: str = "unknown",
) -> list[dict[str, Any]]:
    """The cluster checks (CLU001-CLU004) for one broker from facts asked once for many (``kafka-ops fleet
    audit``): the same check modules, on a host whose identity is its report's ``identity``."""
    h = HostFacts(host, 0, 0, AuditOptions(host=host))
    h.cluster, h.node_id, h.meta_cluster_id, h.broker_state = cluster, node_id, cluster_id, broker_state
    h.cluster_mismatch = other_cluster(cluster, cluster_id)
    ctx = AuditContext(h)
    out = []
    for spec in load_all().values():
        if "cluster" in spec.needs:
            out += [_stamp(f, h, None).to_dict() for f in spec.run(ctx, h)]
    return out


def update_aggregate(ctx: AuditContext, pf: PartitionFacts) -> None:
    agg = pf.log_dir.agg
    agg.partitions += 1
    segs = pf.part.segments
    agg.segments += len(segs)
    # len(Segment.files) and Partition.size without a list per segment (the audit's per-partition loop)
    agg.files += sum(
        (s.log is not None) + (s.index is not None) + (s.timeindex is not None) + (s.txnindex is not None)
        + (s.snapshot is not None)
        for s in segs
    )  # fmt: skip
    size = sum(s.log.size for s in segs if s.log)
    agg.log_bytes += size
    agg.largest_partition_bytes = max(agg.largest_partition_bytes, size)
    if pf.will_recover:
        recovered = [s for s in pf.part.segments if s.base_offset in pf.will_recover]
        agg.recover_segments += len(recovered)
        nbytes = sum(s.log.size for s in recovered if s.log)
        agg.recover_bytes += nbytes
        agg.largest_recover_bytes = max(agg.largest_recover_bytes, nbytes)
        agg.rebuild_index_segments += sum(1 for s in recovered if s.index is None)


def run_audit(
    opts: AuditOptions,
    progress: Callable[[str, int, int], None] | None = None,
    on_partition: Callable[[PartitionFacts], None] | None = None,
    on_host: Callable[[AuditContext], None] | None = None,
) -> dict[str, Any]:
    """Audit a host. ``progress(log_dir, done, total)`` is called after each partition, ``on_partition(facts)``
    with each partition's facts once its checks ran (the collector streams them to the fleet job),
    ``on_host(ctx)`` once every check ran (the collector's ``systemd`` mode reads the host's totals from it)."""
    checks = load_all()
    h = gather(opts)
    ctx = AuditContext(h)
    findings: list[Finding] = []
    skipped: list[dict[str, str]] = [{"input": k, "reason": v} for k, v in sorted(h.skipped_inputs.items())]
    runnable: dict[str, CheckSpec] = {}
    for cid, spec in checks.items():
        why = _missing(spec, h)
        if why is None:
            runnable[cid] = spec
        elif "cluster" in spec.needs and h.cluster is None and opts.cluster_skip is None:
            pass  # the cluster was not asked for (no --bootstrap-server): its checks are not part of this audit
        else:
            skipped.append({"check": cid, "reason": why})
    by_scope = {s: [c for c in runnable.values() if s in c.scopes] for s in ("partition", "logdir", "host")}
    # checks of the partition scope alone decide from one partition's facts: a worker process that gathered the
    # facts runs them too (prepare_partition); the others keep state across partitions and run here, in order
    alone = [spec for spec in by_scope["partition"] if spec.scopes == ("partition",)]
    partition_runs = [(spec.id, spec.run) for spec in by_scope["partition"]]
    errors: list[dict[str, Any]] = [e.to_dict() for e in h.errors]
    # the audit's one forecast: the report's forecast section (no per-segment rows), with the size projection the
    # HTML report draws, and RET002's findings (with per-segment records), read from ctx once it is complete
    host_forecast = HostForecast(
        h.now_ms,
        h.horizon_ms,
        keep_segments=KEEP_SEGMENTS,
        project_every_ms=h.configs.server_int("log.retention.check.interval.ms", 300_000),
    )
    ctx.cache[AUDIT_FORECAST] = host_forecast
    plan = NextStartPlan(h)  # the report's next_start: the same model the checks and the forecast read
    # partitions in order; gathered by worker processes if it pays, which also make their forecasts and run the
    # partition-alone checks (with a context of their own)
    prepare = partial(prepare_partition, AuditContext(h), alone, host_forecast.grid)
    topics_seen: set[str] = set()
    for ldf, partitions in iter_log_dirs(h, prepare=prepare):
        names = ldf.scan.partition_names
        # a log dir's forecast joins the host's at its end: if the dir goes offline, it deletes nothing
        dir_forecast = HostForecast(
            h.now_ms, h.horizon_ms, KEEP_SEGMENTS, project_every_ms=host_forecast.project_every_ms
        )
        deleted = 0
        for i, pf in enumerate(partitions, start=1):
            update_aggregate(ctx, pf)
            topics_seen.add(pf.part.topic)
            deletions: dict[int, tuple[int, str]] = {}
            if pf.part.segments:
                fc = for_check(ctx, pf)
                gone = dir_forecast.add(fc)  # fc.deletions(), asked once
                if gone:  # most partitions lose no segment within the horizon: no generator, no comprehension
                    deleted += sum(s.size for s in gone)
                    deletions = {
                        s.base: (s.delete_at, s.reason) for s in gone if s.delete_at is not None and s.reason
                    }
            plan.add_partition(ctx, pf, deletions)
            found = pf.findings or {}  # made by the worker, for the partition-alone checks
            for cid, run in partition_runs:  # most yield nothing: no generator wrapped around each
                for f in found[cid] if cid in found else run(ctx, pf):
                    findings.append(_stamp(f, h, ldf.path))
            if pf.errors:
                errors.extend(e.to_dict() for e in pf.errors)
            if on_partition is not None:
                on_partition(pf)
            if progress is not None:
                progress(ldf.path, i, len(names))
        online = plan.dir_online(ldf.path)
        host_forecast.merge(dir_forecast, deletions=online)
        ldf.agg.retention_delete_bytes = deleted if online else 0
        for spec in by_scope["logdir"]:
            findings.extend(_stamp(f, h, ldf.path) for f in spec.run(ctx, ldf))
        errors.extend(e.to_dict() for e in ldf.scan.errors)
    for spec in by_scope["host"]:
        findings.extend(_stamp(f, h, None) for f in spec.run(ctx, h))
    if on_host is not None:
        on_host(ctx)
    plan.finish()
    plan.attach_checks(findings)
    findings.sort(key=lambda f: finding_order(f.severity, f.check, f.log_dir, f.path, f.segment))
    _own_access_errors(errors, skipped, h.identity.uid if h.identity is not None else None)
    forecast = host_forecast.to_dict()
    next_start = plan.to_dict()
    config_sources(h, topics_seen, findings, forecast, next_start)
    counts = {s: 0 for s in SEVERITY_RANK}
    for f in findings:
        counts[f.severity] += 1
    return {
        "schema_version": REPORT_SCHEMA_VERSION,
        "version": __version__,
        "host": h.host,
        "generated_at": dt.datetime.fromtimestamp(h.now_ms / 1000, tz=dt.timezone.utc).isoformat(),
        "broker_state": h.broker_state,
        "kafka_version": ".".join(map(str, h.kafka_version)) if h.kafka_version else None,
        "inputs": {k: v.to_dict() for k, v in sorted(h.inputs.items())},
        "skipped": skipped,
        "checks_run": sorted(runnable),
        "summary": counts,
        "log_dirs": [log_dir_summary(ctx, ldf) for ldf in h.log_dirs],
        "findings": [f.to_dict() for f in findings],
        # a reader's error names the file and the line, never the line's bytes (the file may be a link to any)
        "errors": [{**e, "error": content_free(e["error"])} if "error" in e else e for e in errors],
        "forecast": forecast,
        "next_start": next_start,
        "identity": {"node_id": h.node_id, "cluster_id": h.meta_cluster_id},
    }


# the checks whose findings a topic's config decides (retention, the cleaner): said where their configs came from
CONFIG_CHECKS = ("RET", "CLN")
ASSUMED = "broker defaults (assumed: no topic configs read)"


def config_sources(
    h: HostFacts,
    topics: set[str],
    findings: list[Finding],
    forecast: dict[str, Any],
    next_start: dict[str, Any],
) -> None:
    """Say where each topic's configs came from: per topic in ``inputs.topic_configs.topics``, and next to every
    prediction a topic config decides (next_start's retention deletions, the forecast's topics, RET/CLN
    findings). When no topic config was read at all (ZooKeeper mode without --bootstrap-server or
    --topic-configs), each says that the broker's defaults were assumed, and next_start and the forecast carry
    the one note why (``config_note``); the severity stays what the check says."""
    cfg = h.configs
    tc = h.inputs.get("topic_configs")
    if tc is not None:
        # (the KRaft metadata log's own partition is no topic with configs)
        tc.topics = {t: cfg.origin(t) for t in sorted(topics) if t != "__cluster_metadata"}

    def origin(topic: str) -> str:
        return ASSUMED if cfg.assumed else cfg.origin(topic)

    for t in forecast.get("topics", []):
        t["config_source"] = origin(t["topic"])
    forecast["config_note"] = cfg.assumed
    if next_start.get("broker") is not None:
        for seg in next_start["segments"]:
            if seg.get("deleted_by") in ("retention.ms", "retention.bytes", "log_start_offset"):
                seg["config_source"] = origin(seg["topic"])
        next_start["config_note"] = cfg.assumed
    for f in findings:
        if f.check.startswith(CONFIG_CHECKS) and f.topic is not None:
            f.details["config_source"] = origin(f.topic)
            if cfg.assumed and "broker's defaults were assumed" not in f.message:
                f.message += " (The topic's own configs were not read: the broker's defaults were assumed.)"


def _own_access_errors(
    errors: list[dict[str, Any]], skipped: list[dict[str, str]], broker_uid: int | None
) -> None:
    """Files kafka-ops itself could not read are the audit's limit, not the broker user's problem: say so, and
    how to lift it (the broker user's own access is PERM001's, decided from modes, ACLs or a probe). Run as the
    broker user (the fleet job's sudo -u), what it cannot read the broker cannot either: PERM001's, not a limit."""
    import os

    if os.geteuid() in (0, broker_uid):
        return
    denied = [e for e in errors if "permission denied" in str(e.get("error", ""))]
    for e in denied:
        e["error"] = (
            f"kafka-ops could not read {e['file']}: permission denied (run as root or as the broker user)"
        )
    if denied:
        skipped.append(
            {
                "input": "files",
                "reason": f"kafka-ops could not read {len(denied)} path(s), e.g. {denied[0]['file']}: the checks did "
                "not see them (run as root or as the broker user)",
            }
        )


def log_dir_summary(ctx: AuditContext, ldf: LogDirFacts) -> dict[str, Any]:
    a = ldf.agg
    m = ldf.mount
    return {
        "path": ldf.path,
        "exists": ldf.scan.exists,
        "clean_shutdown": ldf.clean_shutdown,
        "partitions": a.partitions,
        "segments": a.segments,
        "log_bytes": a.log_bytes,
        "recover_segments": a.recover_segments,
        "recover_bytes": a.recover_bytes,
        "recover_estimate_s": round(
            ctx.recovery_seconds(a.recover_bytes, a.partitions, a.largest_recover_bytes), 1
        ),
        "free_bytes": m.free_bytes if m else None,
        "total_bytes": m.total_bytes if m else None,
        "mount_point": m.mount_point if m else None,
        "read_only": m.read_only if m else None,
        "free_inodes": m.free_inodes if m else None,
        "retention_delete_bytes": a.retention_delete_bytes,
        "lock_held": ldf.lock_held,
        "lock_pids": ldf.lock_pids,
        "open_pids": ldf.open_pids,
    }


def apply_gate(report: dict[str, Any], fail_on: str, waivers: list[dict[str, Any]] | None = None) -> int:
    """Record the gate's verdict in the report: exit code 1 when a finding that is not waived is at or above
    ``fail_on``; ``waived`` counts the findings the waivers matched, whatever their severity (the sum of each
    waiver's ``matched`` in ``waivers``, when given: one count, the same everywhere it is shown)."""
    from kafka_ops.checks.base import at_least

    above = [f for f in report["findings"] if at_least(f["severity"], fail_on)]
    failed = any(not f.get("waived") for f in above)
    code = 1 if failed else 0
    report["gate"] = {
        "fail_on": fail_on,
        "passed": not failed,
        "exit_code": code,
        "waived": sum(1 for f in report["findings"] if f.get("waived")),
    }
    if waivers is not None:
        report["gate"]["waivers"] = waivers
    report["gate"]["failing"] = [
        finding_line(f, f.get("host") or report.get("host")) for f in above if not f.get("waived")
    ]
    return code


def unusable(report: dict[str, Any]) -> str | None:
    """Why the audit cannot stand as a verdict (exit 2), or None: kafka-ops itself could not read files of the
    log dirs (not root, nor the broker user), so the checks and the next-start plan did not see them."""
    for s in report["skipped"]:
        if s.get("input") == "files":
            return str(s["reason"])
    return None


def run_summary(report: dict[str, Any]) -> str:
    """One line on what the audit decided for itself and what it left out: the broker's state and why (which
    pid holds which .lock), the inputs it did not find, the checks it skipped. Shown on stderr in every format,
    with the verdict: a CI log says why a gate passed even when the report went to a file."""
    src = (report.get("inputs") or {}).get("broker_state", {}).get("source")
    parts = [f"broker {report['broker_state']}" + (f": {src}" if src else "")]
    inputs = [str(s["input"]) for s in report["skipped"] if s.get("input")]
    checks = [str(s["check"]) for s in report["skipped"] if s.get("check")]
    if inputs:
        parts.append(f"not found: {', '.join(inputs)}")
    if checks:
        parts.append(f"{len(checks)} check(s) skipped: {', '.join(checks)} (the report says why)")
    else:
        parts.append("no check skipped")
    return "; ".join(parts)


def finding_line(f: dict[str, Any], host: str | None = None) -> str:
    """One finding on one line, as a deploy log shows it: 'CHECK severity HOST:PATH - message FIX: remediation'."""
    where = f.get("path") or f.get("log_dir") or "-"
    flat = " ".join(str(f.get("message") or "").split())
    fix = " ".join(str(f.get("remediation") or "").split())
    return f"{f['check']} {f['severity']} {host + ':' if host else ''}{where} - {flat}" + (
        f" FIX: {fix}" if fix else ""
    )


def partition_row(pf: PartitionFacts) -> dict[str, Any]:
    """One partition's facts as a flat JSON-ready row (the fleet job's facts table, streamed from hosts)."""
    p = pf.part
    segs = p.segments
    return {
        "log_dir": pf.log_dir.path,
        "topic": p.topic,
        "partition": p.partition,
        "segments": len(segs),
        "size_bytes": p.size,
        "base_offset_first": segs[0].base_offset if segs else None,
        "base_offset_last": segs[-1].base_offset if segs else None,
        "log_start_offset": pf.log_start,
        "log_end_offset": pf.log_end_offset,
        "recovery_point": pf.recovery_point,
        "cleaner_offset": pf.cleaner_offset,
        "recover_segments": len(pf.will_recover),
        "cleanup_policy": ",".join(sorted(pf.config.cleanup_policy)) if pf.config else None,
        "topic_id": p.topic_id,
        "leader_epoch": p.leader_epochs[-1][0] if p.leader_epochs else None,  # latest epoch this replica saw
    }
