"""`fleet diff` without Spark: the results of a local dir read with pyarrow, the diff computed here.

Spark takes tens of seconds to start; the results of a run are a few Parquet files per table (facts, findings,
hosts, each partitioned by run_date, written by fleet.results.write_run). On a local path pyarrow reads them in
a fraction of that, and the diff is the same as fleet.results.diff's (the same keys, the same order). A URI
(s3a://, hdfs://...) still goes through Spark, which has the file systems' connectors.
"""

from __future__ import annotations

import datetime as dt
import os
import re
from typing import Any

FINDING_KEY = ["host", "check", "log_dir", "path", "topic", "partition", "segment"]
PARTITION_KEY = ["host", "log_dir", "topic", "partition"]


class RunNotFound(ValueError):
    pass


def is_uri(location: str) -> bool:
    """``s3a://bucket/x``, ``file:///x``, ``hdfs://nn/x``: a scheme (two letters at least: not ``C:\\``)."""
    return re.match(r"[A-Za-z][A-Za-z0-9+.-]+://", location) is not None


def local_or_uri(location: str) -> str:
    """A URI as it is; a path made absolute (``~`` expanded) on this machine, the driver."""
    return location if is_uri(location) else os.path.abspath(os.path.expanduser(location))


def local_dir(location: str) -> str | None:
    """The local dir of a results location (a path, or a file:// URI), None for another file system's URI."""
    if location.startswith("file://"):
        return location[len("file://") :] or "/"
    return None if is_uri(location) else location


def _read(out: str, name: str, columns: list[str]) -> list[dict[str, Any]]:
    """The rows of a table, file by file: a results dir can hold runs of several kafka-ops versions, whose files
    differ in a column's type (``run_at``: a string before it was a timestamp), which one dataset schema cannot
    read."""
    import pyarrow.dataset as ds
    import pyarrow.parquet as pq

    rows: list[dict[str, Any]] = []
    for f in sorted(ds.dataset(os.path.join(out, name), format="parquet").files):
        rows.extend(pq.read_table(f, columns=columns).to_pylist())
    return rows


def run_at(value: Any) -> dt.datetime | None:
    """A run's ``run_at`` as an aware UTC datetime: a timestamp (Spark's INT96 reads back naive, in UTC), or the
    ISO 8601 string kafka-ops wrote before it was a timestamp (``2026-11-22T06:56:19.123456+00:00``); None when
    it is neither."""
    if isinstance(value, str):
        try:
            value = dt.datetime.fromisoformat(value)
        except ValueError:
            return None
    if not isinstance(value, dt.datetime):
        return None
    return value.replace(tzinfo=dt.UTC) if value.tzinfo is None else value.astimezone(dt.UTC)


def runs(out: str) -> list[str]:
    """Run ids of a local results dir, oldest first (by when each run wrote), as fleet.results.runs."""
    first: dict[str, Any] = {}
    for r in _read(out, "hosts", ["run_id", "run_at"]):
        at = run_at(r["run_at"])
        if r["run_id"] not in first or (at is not None and at < first[r["run_id"]]):
            first[r["run_id"]] = at
    return sorted(first, key=lambda k: (first[k] is not None, first[k], k))


def pick(ids: list[str], out: str, base: str | None, head: str | None) -> tuple[str | None, str]:
    """(base, head) as fleet diff takes them: head the latest, base the run before it; a run id that is not in
    ``out`` is an error naming the runs there. base is None when ``out`` holds only one run."""
    listing = ", ".join(ids) or "none"
    for given, what in ((head, "--head"), (base, "--base")):
        if given is not None and given not in ids:
            raise RunNotFound(f"{what} {given}: no such run in {out} (its runs, oldest first: {listing})")
    if not ids:
        raise RunNotFound(f"{out}: no runs in these results")
    head = head or ids[-1]
    if base is None:
        before = [r for r in ids if r != head]
        base = before[-1] if before else None
    return base, head


def _sort_key(row: dict[str, Any], order: list[str]) -> tuple[Any, ...]:
    # Spark's ascending order puts nulls first
    return tuple((row[k] is not None, row[k] if row[k] is not None else 0) for k in order)


def _anti(left: list[dict[str, Any]], right: list[dict[str, Any]], key: list[str]) -> list[dict[str, Any]]:
    have = {tuple(r[k] for k in key) for r in right}
    return [r for r in left if tuple(r[k] for k in key) not in have]


def diff(out: str, base: str, head: str) -> dict[str, Any]:
    """fleet.results.diff for a local results dir, without Spark."""
    fcols = [*FINDING_KEY, "severity", "message"]

    def side(rows: list[dict[str, Any]], run: str, cols: list[str], key: list[str]) -> list[dict[str, Any]]:
        seen: dict[tuple[Any, ...], dict[str, Any]] = {}
        for r in rows:
            if r["run_id"] == run:
                seen.setdefault(tuple(r[k] for k in key), {c: r[c] for c in cols})
        return list(seen.values())

    findings = _read(out, "findings", [*fcols, "run_id"])
    facts = _read(out, "facts", [*PARTITION_KEY, "size_bytes", "run_id"])
    hosts = _read(out, "hosts", ["host", "status", "run_id"])
    fb, fh = side(findings, base, fcols, FINDING_KEY), side(findings, head, fcols, FINDING_KEY)
    pcols = [*PARTITION_KEY, "size_bytes"]
    pb = [{c: r[c] for c in pcols} for r in facts if r["run_id"] == base]
    ph = [{c: r[c] for c in pcols} for r in facts if r["run_id"] == head]
    before = {r["host"]: r["status"] for r in hosts if r["run_id"] == base}
    after = {r["host"]: r["status"] for r in hosts if r["run_id"] == head}
    status = [
        {"host": h, "before": before.get(h), "after": after.get(h)}
        for h in sorted(set(before) | set(after))
        if before.get(h) != after.get(h)
    ]
    forder = ["host", "check", "path", "log_dir", "topic", "partition", "segment"]
    return {
        "base": base,
        "head": head,
        "new_findings": sorted(_anti(fh, fb, FINDING_KEY), key=lambda r: _sort_key(r, forder)),
        "resolved_findings": sorted(_anti(fb, fh, FINDING_KEY), key=lambda r: _sort_key(r, forder)),
        "partitions_added": sorted(_anti(ph, pb, PARTITION_KEY), key=lambda r: _sort_key(r, PARTITION_KEY)),
        "partitions_removed": sorted(_anti(pb, ph, PARTITION_KEY), key=lambda r: _sort_key(r, PARTITION_KEY)),
        "host_status_changes": status,
    }
