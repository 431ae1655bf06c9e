"""The fleet section of the report as text (after the CLI's own table), and the diff of two runs."""

from __future__ import annotations

from typing import Any

from kafka_ops.engine.shell import printable
from kafka_ops.render.text import markup_safe as esc
from kafka_ops.units import human_bytes


def fleet_table(report: dict[str, Any], console: Any) -> None:
    from rich.table import Table

    fl = report["fleet"]
    console.print(
        f"[bold]fleet[/bold]: {fl['hosts_audited']} of {fl['hosts_total']} host(s) audited, {fl['units']} "
        f"(host, log dir) unit(s) in {fl['tasks']} Spark task(s) on {esc(fl['spark_master'])}; run {esc(fl['run_id'])}"
        + (f", results in {esc(fl['results'])}" if fl.get("results") else "")
    )
    t = Table(title="hosts", expand=False)
    for c in (
        "host",
        "address",
        "status",
        "node",
        "log dirs",
        "partitions",
        "bytes",
        "crit",
        "err",
        "warn",
        "info",
    ):
        t.add_column(c, no_wrap=c in ("host", "status"))
    for h in fl["hosts"]:
        status = h["status"] if h["status"] == "ok" else f"[bold red]{esc(h['status'])}[/]"
        t.add_row(
            esc(h["host"]), esc(h["address"]), status, str(h["node_id"] if h["node_id"] is not None else "?"),
            str(h["log_dirs"]), str(h["partitions"]), human_bytes(h["log_bytes"]), str(h["critical"]),
            str(h["error"]), str(h["warning"]), str(h["info"]),
        )  # fmt: skip
    console.print(t)
    console.print(f"leaders: {esc(fl['leaders_source'])}")
    if fl["replicas_at_risk"]:
        r = Table(title="replicas at risk of RET001 (time retention deleting recent data)", expand=True)
        for c in ("partition", "host", "role", "segments", "bytes", "what it means"):
            r.add_column(c, overflow="fold")
        for x in fl["replicas_at_risk"]:
            r.add_row(
                esc(f"{x['topic']}-{x['partition']}"), esc(x["host"]), esc(x["role"]), str(x["segments"]),
                human_bytes(x["bytes"] or 0), esc(x["consequence"]),
            )  # fmt: skip
        console.print(r)
    else:
        console.print("replicas at risk of RET001: none")
    risky = [t for t in fl["topics"] if t["partitions_at_risk"]]
    for t in risky:
        console.print(
            f"  topic {esc(t['topic'])}: {t['partitions_at_risk']} of {t['partitions']} partition(s) at risk, "
            f"{t['partitions_losing_data']} losing data cluster-wide ({human_bytes(t['bytes_lost_cluster_wide'])}); "
            f"{t['replicas']} replicas on {t['hosts']} host(s)"
        )


def diff_text(d: dict[str, Any]) -> str:
    out = [f"fleet diff: run {d['base']} -> {d['head']}"]
    for key, title in (
        ("new_findings", "new findings"), ("resolved_findings", "resolved findings"),
    ):  # fmt: skip
        out.append(f"{title}: {len(d[key])}")
        out += [
            f"  {f['severity']} {f['check']} {f['host']} {f['path'] or f['log_dir'] or ''}" for f in d[key]
        ]
    for key, title in (
        ("partitions_added", "partitions added"),
        ("partitions_removed", "partitions removed"),
    ):
        out.append(f"{title}: {len(d[key])}")
        out += [f"  {p['host']} {p['log_dir']} {p['topic']}-{p['partition']}" for p in d[key]]
    out.append(f"host status changes: {len(d['host_status_changes'])}")
    out += [
        f"  {h['host']}: {h['before'] or '(absent)'} -> {h['after'] or '(absent)'}"
        for h in d["host_status_changes"]
    ]
    return "\n".join(printable(line) for line in out)
