"""The page's data, built from one or more audit reports (the JSON of ``kafka_ops.audit.run_audit``).

Everything the page shows is computed here, in Python, from the report's own fields; the template only draws
it. Nothing about Kafka is decided here: deletions, sizes and their projection come from the report's
``forecast`` section (``kafka_ops.broker.forecast``), recovery from ``log_dirs`` (``kafka_ops.audit``), findings and
their texts from the checks. Several reports (or one report holding several hosts' findings, as a fleet audit
writes) make a fleet page with a host by check matrix.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kafka_ops.broker.plan import plan_sentences
from kafka_ops.checks.base import SEVERITY_RANK
from kafka_ops.units import iso

SEVERITY_ORDER = ["critical", "error", "warning", "info"]
MAX_TOPIC_CHARTS = 12  # size-over-time small multiples per host: the largest topics
# bins for the retention forecast's bars: the smallest that keeps the horizon within MAX_BINS bars
BIN_SIZES_MS = [
    60_000, 300_000, 900_000, 3_600_000, 3 * 3_600_000, 6 * 3_600_000, 12 * 3_600_000, 86_400_000, 7 * 86_400_000,
]  # fmt: skip
MAX_BINS = 96
# Colours are unique within a chart: the browser test counts each series' SVG elements by its colour.
TOPIC_COLORS = [
    "#2f6fdf", "#1a9e77", "#7b61c9", "#3aa7c9", "#6d8a1f", "#b65fa0", "#5a6b8c", "#c9a227", "#2a8c8c", "#8c5a2b",
]  # fmt: skip
FALLBACK_COLORS = ["#d62728", "#a50f15", "#ef3b2c", "#99000d", "#fb6a4a", "#cb181d"]  # RET001: reds only
PROJECTED_COLOR, STILL_COLOR, RECOVERY_COLOR = "#2f6fdf", "#8a8f98", "#e0661b"
SEVERITY_COLORS = {"critical": "#b3261e", "error": "#e0661b", "warning": "#c99a06", "info": "#2f6fdf"}
FS_COLORS = ["#b3261e", "#6a1b9a", "#00695c", "#ad5700"]


def palette(base: list[str], n: int, hue: tuple[int, int] = (180, 330)) -> list[str]:
    """``n`` distinct colours: ``base`` first, then evenly spaced hues in ``hue`` (degrees)."""
    import colorsys

    out = list(base[:n])
    extra = n - len(out)
    for i in range(extra):
        h = (hue[0] + (hue[1] - hue[0]) * i / max(1, extra)) / 360
        r, g, b = colorsys.hls_to_rgb(h, 0.42 + 0.12 * (i % 2), 0.62)
        c = f"#{round(r * 255):02x}{round(g * 255):02x}{round(b * 255):02x}"
        out.append(c if c not in out else f"#{(int(c[1:], 16) + i + 1) % 0xFFFFFF:06x}")
    return out


class ReportError(ValueError):
    """A file that is not a readable kafka-ops report (the message names the file)."""


def load_report(path: Path) -> dict[str, Any]:
    """Read and validate one report; ``ReportError`` with a one-line reason otherwise."""
    from pydantic import ValidationError

    from kafka_ops.engine.errors import EngineError
    from kafka_ops.engine.fileio import read_bytes
    from kafka_ops.render.models import validate

    try:
        text = read_bytes(str(path), follow=True).decode("utf-8")  # a FIFO is refused, never waited on
    except EngineError as exc:
        if "no such file" in exc.reason:
            raise ReportError(f"{path}: no such file") from None
        if "a directory" in exc.reason:
            raise ReportError(f"{path}: is a directory, not a report") from None
        raise ReportError(str(exc)) from None
    except FileNotFoundError:
        raise ReportError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise ReportError(f"{path}: is a directory, not a report") from None
    except (OSError, UnicodeDecodeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise ReportError(f"{path}: cannot read: {why.lower()}") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ReportError(f"{path}: not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    if not isinstance(doc, dict) or "findings" not in doc or "schema_version" not in doc:
        raise ReportError(
            f"{path}: not a kafka-ops report (no schema_version/findings: write one with "
            "`kafka-ops audit --format json`)"
        )
    try:
        validate(doc)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(x) for x in err["loc"])
        raise ReportError(f"{path}: not a valid kafka-ops report: {where}: {err['msg']}") from None
    return doc


def build(reports: list[dict[str, Any]], sources: list[str] | None = None) -> dict[str, Any]:
    """The page data for ``reports`` (``sources``: where each came from, shown on the page)."""
    from kafka_ops.checks import doc_page, load_all

    specs = load_all()
    findings = []
    for r in reports:
        for f in r["findings"]:
            findings.append({**f, "host": f.get("host") or r["host"]})
    hosts = sorted({f["host"] for f in findings} | {r["host"] for r in reports})
    fleet = len(hosts) > 1
    summary = {s: sum(r["summary"].get(s, 0) for r in reports) for s in SEVERITY_ORDER}
    gates = [r.get("gate") for r in reports]
    if any(g is not None for g in gates):
        passed = all(g is None or g["passed"] for g in gates)
        fail_on = next(g["fail_on"] for g in gates if g is not None)
        gate = {"passed": passed, "fail_on": fail_on, "hosts_failed": sorted(
            r["host"] for r, g in zip(reports, gates, strict=True) if g is not None and not g["passed"]
        )}  # fmt: skip
    else:
        gate = None

    by_check: dict[str, list[dict[str, Any]]] = {}
    for f in findings:
        by_check.setdefault(f["check"], []).append(f)
    checks = []
    for cid, fs in by_check.items():
        spec = specs.get(cid)
        worst = max((f["severity"] for f in fs), key=lambda s: SEVERITY_RANK[s])
        fs.sort(key=lambda f: (-SEVERITY_RANK[f["severity"]], f["host"], f.get("path") or ""))
        checks.append({
            "id": cid, "title": spec.title if spec else cid, "severity": worst,
            "default_severity": spec.severity if spec else None, "incident": spec.incident if spec else None,
            "doc_html": _doc_html(doc_page(cid)), "count": len(fs),
            "hosts": sorted({f["host"] for f in fs}),
            "findings": [_finding(f) for f in fs],
        })  # fmt: skip
    checks.sort(key=lambda c: (-SEVERITY_RANK[c["severity"]], c["id"]))
    overview = {
        "kind": "findings", "host": None, "id": "chart-findings", "title": "Findings per check",
        "checks": [c["id"] for c in checks],
        "series": [
            {"name": sev, "color": SEVERITY_COLORS[sev],
             "data": [sum(1 for f in c["findings"] if f["severity"] == sev) or None for c in checks]}
            for sev in SEVERITY_ORDER
            if any(f["severity"] == sev for c in checks for f in c["findings"])
        ],
    }  # fmt: skip

    skipped = []
    for r in reports:
        for s in r["skipped"]:
            what = s.get("check") or f"input {s.get('input')}"
            skipped.append({"host": r["host"], "what": what, "reason": s["reason"]})

    return {
        "title": f"kafka-ops report: {hosts[0]}"
        if not fleet
        else f"kafka-ops fleet report: {len(hosts)} hosts",
        "fleet": fleet,
        "generated_at": max(r["generated_at"] for r in reports),
        "version": reports[0]["version"],
        "sources": sources or [],
        "gate": gate,
        "summary": summary,
        "total": sum(summary.values()),
        "hosts": [_host(r, sources[i] if sources else None) for i, r in enumerate(reports)],
        "skipped": skipped,
        "errors": [{"host": r["host"], **e} for r in reports for e in r.get("errors", [])],
        "checks": checks,
        "matrix": _matrix(hosts, checks) if fleet else None,
        "overview": overview if checks else None,
        "charts": [c for r in reports for c in _charts(r, fleet=len(reports) > 1)],
        "assumptions": _assumptions(reports),
        # the model's plan of each host's next start, in words (broker.plan.plan_sentences)
        "next_start": [
            {"host": r["host"], "lines": plan_sentences(r.get("next_start"))}
            for r in reports
            if r.get("next_start")
        ],
    }


def _assumptions(reports: list[dict[str, Any]]) -> list[str]:
    out: list[str] = []
    for r in reports:
        fc = r.get("forecast") or {}
        for a in fc.get("assumptions", []) + (fc.get("projection") or {}).get("assumptions", []):
            if a not in out:
                out.append(a)
    return out


def _doc_html(md: str | None) -> str | None:
    """The check's doc page as HTML (raw HTML in the Markdown is escaped, not passed through)."""
    if md is None:
        return None
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": False}).enable("table").render(md)


def _finding(f: dict[str, Any]) -> dict[str, Any]:
    where = None
    if f.get("topic") is not None:
        where = f"{f['topic']}-{f['partition']}" + (
            f" @{f['segment']}" if f.get("segment") is not None else ""
        )
    return {
        "severity": f["severity"], "host": f["host"], "where": where,
        "path": f.get("path") or f.get("log_dir"), "message": f["message"], "remediation": f["remediation"],
        "waived": bool(f.get("waived")), "waived_reason": f.get("waived_reason"),
    }  # fmt: skip


def _host(r: dict[str, Any], source: str | None) -> dict[str, Any]:
    gate = r.get("gate")
    return {
        "host": r["host"], "source": source, "generated_at": r["generated_at"], "broker_state": r["broker_state"],
        "kafka_version": r["kafka_version"], "gate": gate, "summary": r["summary"],
        "checks_run": len(r["checks_run"]), "findings": len(r["findings"]),
        "log_dirs": [
            {
                "path": d["path"], "exists": d["exists"], "clean_shutdown": d["clean_shutdown"],
                "partitions": d["partitions"], "segments": d["segments"], "log_bytes": d["log_bytes"],
                "free_bytes": d["free_bytes"], "total_bytes": d["total_bytes"], "mount_point": d["mount_point"],
                "retention_delete_bytes": d.get("retention_delete_bytes", 0),
                "recover_bytes": d["recover_bytes"], "recover_segments": d["recover_segments"],
                "recover_estimate_s": d["recover_estimate_s"],
            }
            for d in r["log_dirs"]
        ],
        "horizon": _horizon(r.get("forecast")),
    }  # fmt: skip


def _horizon(fc: dict[str, Any] | None) -> dict[str, Any] | None:
    if not fc:
        return None
    return {
        "from": iso(fc["now_ms"], "utc_min"),
        "to": iso(fc["horizon_end_ms"], "utc_min"),
        "hours": fc["horizon_ms"] / 3_600_000,
    }


def _matrix(hosts: list[str], checks: list[dict[str, Any]]) -> dict[str, Any]:
    """Host by check: the number of findings and the worst severity in each cell."""
    cells: dict[str, dict[str, dict[str, Any]]] = {h: {} for h in hosts}
    for c in checks:
        for f in c["findings"]:
            cell = cells[f["host"]].setdefault(c["id"], {"count": 0, "severity": f["severity"]})
            cell["count"] += 1
            if SEVERITY_RANK[f["severity"]] > SEVERITY_RANK[cell["severity"]]:
                cell["severity"] = f["severity"]
    rows = sorted(
        hosts,
        key=lambda h: (-max((SEVERITY_RANK[x["severity"]] for x in cells[h].values()), default=-1),
                       -sum(x["count"] for x in cells[h].values()), h),
    )  # fmt: skip
    return {"hosts": rows, "checks": [c["id"] for c in checks], "cells": cells}


# ----------------------------------------------------------------------------------------------- charts


def _charts(r: dict[str, Any], fleet: bool) -> list[dict[str, Any]]:
    """The charts of one report, each ``{kind, host, id, ...}`` with its series ready to draw."""
    out: list[dict[str, Any]] = []
    host = r["host"]
    label = f" — {host}" if fleet else ""
    fc = r.get("forecast")
    if fc:
        ret = _retention_chart(fc)
        out.append({"kind": "retention", "host": host, "title": f"Retention forecast{label}", **ret})
        topics = _topic_charts(fc)
        if topics:
            out.append({"kind": "topics", "host": host, "title": f"Topic size over time{label}", **topics})
    disk = _disk_chart(r)
    if disk:
        out.append({"kind": "disk", "host": host, "title": f"Disk use per log dir{label}", **disk})
    rec = _recovery_chart(r)
    if rec:
        out.append({"kind": "recovery", "host": host, "title": f"Recovery at the next start{label}", **rec})
    for i, c in enumerate(out):
        c["id"] = f"chart-{_slug(host)}-{c['kind']}-{i}"
    return out


def _slug(s: str) -> str:
    return "".join(ch if ch.isalnum() else "-" for ch in s)


def _bin_size(horizon_ms: int) -> int:
    return next((b for b in BIN_SIZES_MS if horizon_ms / b <= MAX_BINS), BIN_SIZES_MS[-1])


def _retention_chart(fc: dict[str, Any]) -> dict[str, Any]:
    """Bytes that time and size retention delete per topic, in bins over the horizon; the deletions whose
    timestamp is a fallback (RET001: zero padding, unreadable .timeindex, file mtime) as series of their own."""
    now, end = fc["now_ms"], fc["horizon_end_ms"]
    size = _bin_size(max(1, end - now))
    first = now // size * size  # bins on round times (UTC)
    nbins = max(1, -(-(end - first + 1) // size))
    bins = [first + i * size for i in range(nbins)]
    series = []
    for t in fc["topics"]:
        real = [0] * nbins
        fallback = [0] * nbins
        fb = {p["at_ms"]: p["bytes"] for p in t.get("fallback_deletions", [])}
        for p in t["series"]:
            if not p["deleted_bytes"]:
                continue
            i = min(nbins - 1, max(0, (p["at_ms"] - first) // size))
            f = min(fb.get(p["at_ms"], 0), p["deleted_bytes"])
            fallback[i] += f
            real[i] += p["deleted_bytes"] - f
        # empty bins are null, not 0: a bar of 0 bytes would still be drawn (barMinHeight)
        if any(real):
            series.append({
                "name": t["topic"], "topic": t["topic"], "fallback": False, "data": [b or None for b in real],
            })  # fmt: skip
        if any(fallback):
            series.append({
                "name": f"{t['topic']} — fallback timestamp (RET001)", "topic": t["topic"], "fallback": True,
                "data": [b or None for b in fallback],
            })  # fmt: skip
    real_colors = palette(TOPIC_COLORS, sum(1 for s in series if not s["fallback"]))
    fb_colors = palette(FALLBACK_COLORS, sum(1 for s in series if s["fallback"]), hue=(345, 375))
    for s in series:
        s["color"] = (fb_colors if s["fallback"] else real_colors).pop(0)
    fb_total = sum(b or 0 for s in series if s["fallback"] for b in s["data"])
    return {
        "bins": [iso(b, "utc_min") for b in bins], "bin_ms": size, "series": series,
        "deleted_bytes": fc["deleted_bytes"], "fallback_bytes": fb_total,
        "from": iso(now, "utc_min"), "to": iso(end, "utc_min"), "assumptions": fc.get("assumptions", []),
    }  # fmt: skip


def _topic_charts(fc: dict[str, Any]) -> dict[str, Any] | None:
    """Per topic: the size with no new data (the forecast's step line) and, when the report has the projection,
    the size if data keeps arriving (segments roll and retention deletes them: a saw-tooth)."""
    proj = fc.get("projection")
    grid = proj["at_ms"] if proj else None
    now, end = fc["now_ms"], fc["horizon_end_ms"]
    topics = []
    for t in fc["topics"]:
        still = [[now, t["bytes_now"]]]
        for p in t["series"]:
            still.append([p["at_ms"], p["bytes"]])
        still.append([end, t["bytes_at_horizon"]])
        projected = (
            [[a, b] for a, b in zip(grid, t["projected_bytes"], strict=True)]
            if grid and t.get("projected_bytes")
            else None
        )
        peak = max([t["bytes_now"]] + [b for _, b in projected or []])
        topics.append({
            "topic": t["topic"], "partitions": t["partitions"], "bytes_now": t["bytes_now"], "peak": peak,
            "deleted_bytes": t["deleted_bytes"], "rate_bytes_per_s": t.get("arrival_bytes_per_s"),
            "no_new_data": still, "projected": projected,
        })  # fmt: skip
    if not topics:
        return None
    topics.sort(key=lambda x: (-x["peak"], x["topic"]))
    shown = topics[:MAX_TOPIC_CHARTS]
    return {
        "topics": shown, "omitted": [t["topic"] for t in topics[MAX_TOPIC_CHARTS:]], "from_ms": now, "to_ms": end,
        "colors": {"projected": PROJECTED_COLOR, "no_new_data": STILL_COLOR},
        "assumptions": (proj or {}).get("assumptions", []),
    }  # fmt: skip


def _disk_chart(r: dict[str, Any]) -> dict[str, Any] | None:
    """Per log dir its size over the horizon (projected when the report has it) against the space it can
    grow into: the free space of its filesystem plus what the log dirs on it hold now."""
    dirs = [d for d in r["log_dirs"] if d["exists"]]
    fc = r.get("forecast") or {}
    if not dirs or not fc:
        return None  # without a forecast there is no time axis: the "Covered" table has the free space
    proj = fc.get("projection")
    grid = proj["at_ms"] if proj else None
    projected = {x["path"]: x["bytes"] for x in (proj or {}).get("log_dirs", [])}
    lines = []
    for d in dirs:
        if grid and d["path"] in projected:
            pts = [[a, b] for a, b in zip(grid, projected[d["path"]], strict=True)]
        elif fc:
            pts = [
                [fc["now_ms"], d["log_bytes"]],
                [fc["horizon_end_ms"], d["log_bytes"] - d.get("retention_delete_bytes", 0)],
            ]
        else:
            pts = []
        lines.append({
            "path": d["path"], "mount_point": d["mount_point"], "log_bytes": d["log_bytes"],
            "points": pts, "peak": max([d["log_bytes"]] + [b for _, b in pts]),
        })  # fmt: skip
    limits: dict[str, dict[str, Any]] = {}
    for d in dirs:
        if d["free_bytes"] is None:
            continue
        key = d["mount_point"] or d["path"]
        lim = limits.setdefault(key, {
            "mount_point": key, "free_bytes": d["free_bytes"], "total_bytes": d["total_bytes"], "log_bytes": 0,
            "log_dirs": [],
        })  # fmt: skip
        lim["log_bytes"] += d["log_bytes"]
        lim["log_dirs"].append(d["path"])
    for lim, color in zip(limits.values(), palette(FS_COLORS, len(limits), hue=(0, 40)), strict=True):
        lim["limit_bytes"] = lim["free_bytes"] + lim["log_bytes"]
        lim["color"] = color
    for line, color in zip(lines, palette(TOPIC_COLORS, len(lines)), strict=True):
        line["color"] = color
    return {
        "log_dirs": lines, "filesystems": list(limits.values()),
        "from_ms": fc["now_ms"], "to_ms": fc["horizon_end_ms"], "projected": bool(grid),
    }  # fmt: skip


def _recovery_chart(r: dict[str, Any]) -> dict[str, Any] | None:
    """For a stopped broker (or log dirs without the clean-shutdown marker): what the next start re-reads."""
    dirs = [d for d in r["log_dirs"] if d["exists"] and (d["recover_bytes"] or not d["clean_shutdown"])]
    if r["broker_state"] != "stopped" and not any(d["recover_bytes"] for d in dirs):
        return None
    if not dirs:
        return None
    return {
        "broker_state": r["broker_state"], "color": RECOVERY_COLOR,
        "log_dirs": [
            {
                "path": d["path"], "recover_bytes": d["recover_bytes"], "recover_segments": d["recover_segments"],
                "recover_estimate_s": d["recover_estimate_s"], "clean_shutdown": d["clean_shutdown"],
                "log_bytes": d["log_bytes"],
            }
            for d in dirs
        ],
    }  # fmt: skip


__all__ = ["ReportError", "build", "load_report"]
