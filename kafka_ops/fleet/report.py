"""The fleet's report: the per-host reports merged into the CLI's report schema, plus a ``fleet`` section.

Same fields as ``kafka-ops audit --format json`` (so a pipeline can switch between the two): findings carry
``host``, ``log_dirs`` and ``errors`` too; ``broker_state``/``kafka_version`` are the hosts' common value (else
``unknown``/null); ``forecast`` sums the hosts' deletions and keeps each host's forecast under ``hosts``.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from kafka_ops import __version__
from kafka_ops.audit import REPORT_SCHEMA_VERSION, apply_gate
from kafka_ops.checks.base import SEVERITY_RANK


def _common(values: list[Any], default: Any) -> Any:
    return values[0] if values and all(v == values[0] for v in values) else default


def merge(
    name: str, now_ms: int, reports: dict[str, dict[str, Any]], findings: list[dict[str, Any]],
    inputs: dict[str, dict[str, Any]], fleet: dict[str, Any], fail_on: str,
) -> dict[str, Any]:  # fmt: skip
    findings = sorted(
        findings,
        key=lambda f: (
            -SEVERITY_RANK[f["severity"]], f["check"], f["host"] or "", f["log_dir"] or "", f["path"] or "",
            f["segment"] if f["segment"] is not None else -1,
        ),
    )  # fmt: skip
    counts = dict.fromkeys(SEVERITY_RANK, 0)
    for f in findings:
        counts[f["severity"]] += 1
    skipped: list[dict[str, Any]] = []
    for r in reports.values():
        for s in r["skipped"]:
            if s not in skipped:
                skipped.append(s)
    forecasts = {h: r["forecast"] for h, r in sorted(reports.items()) if r.get("forecast")}
    forecast = None
    if forecasts:
        first = next(iter(forecasts.values()))
        forecast = {
            **{
                k: first[k]
                for k in ("forecast_version", "now_ms", "horizon_ms", "horizon_end_ms", "assumptions")
            },
            "deleted_bytes": sum(f["deleted_bytes"] for f in forecasts.values()),
            "log_dirs": [{**ld, "host": h} for h, f in forecasts.items() for ld in f["log_dirs"]],
            "topics": [],  # per host below: replicas of a topic on several hosts are not summed
            "hosts": forecasts,
        }
    report: dict[str, Any] = {
        "schema_version": REPORT_SCHEMA_VERSION,
        "version": __version__,
        "host": name,
        "generated_at": dt.datetime.fromtimestamp(now_ms / 1000, tz=dt.UTC).isoformat(),
        "broker_state": _common([r["broker_state"] for r in reports.values()], "unknown"),
        "kafka_version": _common([r["kafka_version"] for r in reports.values()], None),
        "inputs": inputs,
        "skipped": skipped,
        "checks_run": sorted({c for r in reports.values() for c in r["checks_run"]}),
        "summary": counts,
        "log_dirs": [{**ld, "host": h} for h, r in sorted(reports.items()) for ld in r["log_dirs"]],
        "findings": findings,
        "errors": [{**e, "host": h} for h, r in sorted(reports.items()) for e in r["errors"]],
        "forecast": forecast,
        # the model's plan of each host's next start; the report's own field when the fleet is one host
        "next_start": next(iter(reports.values())).get("next_start") if len(reports) == 1 else None,
        # the audited broker's node and cluster: the host's own when the fleet is one host
        "identity": next(iter(reports.values())).get("identity") if len(reports) == 1 else None,
        "fleet": {
            **fleet,
            "next_start": {h: r["next_start"] for h, r in sorted(reports.items()) if r.get("next_start")},
            "topic_configs": {
                h: r["inputs"]["topic_configs"]
                for h, r in sorted(reports.items())
                if (r.get("inputs") or {}).get("topic_configs")
            },
        }
        if fleet is not None
        else None,
    }
    apply_gate(report, fail_on)
    return report
