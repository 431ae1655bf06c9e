"""The audit of a host whose every partition has a finding against the same host with none (issue 21).

One log dir of ``--partitions`` partitions (one segment each, written by ``bench_audit.write_host``), all files
root-owned, mode 0644. Audited with ``--broker-user root`` it has no partition finding; with ``--broker-user
nobody`` (who can read but not write them) every partition is a PERM001 finding: the same scan, the same facts,
only the findings differ. Timed in one run, on the same (page-cached) files, in rounds that alternate the two:

* ``kafka-ops audit -f json -o FILE`` and ``kafka-ops audit -f table`` (COLUMNS=80, to a file) in a subprocess,
  with and without the findings;
* in this process: ``run_audit``, the report's validation, ``write_json`` and the table's lines, apart.

Prints each step's median and the ratio **with findings / without** (goal: the CLI's json and table <= 2), and
the table's line count (goal: < 1,000). Never a timed test: a ratio measured in one run on the same machine.

Usage: python benchmarks/bench_findings.py [--partitions 20000] [--rounds 3] [--dir DIR] [--json PATH]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from bench_audit import NOW, write_host

from kafka_ops.audit import apply_gate, run_audit
from kafka_ops.facts.model import AuditOptions
from kafka_ops.render.models import validate
from kafka_ops.render.text import table_lines, write_json

USERS = {"none": "root", "findings": "nobody"}
os.environ.setdefault("KAFKA_OPS_WORKERS", "1")  # the same single process for both; the CLI too


def cli_args(log_dir: str, user: str, fmt: str, out: str) -> list[str]:
    args = [sys.executable, "-m", "kafka_ops", "audit", "--log-dir", log_dir, "--broker-state", "stopped"]
    args += ["--kafka-version", "3.7.0", "--now", str(NOW), "--broker-user", user, "-f", fmt]
    return args + (["-o", out] if fmt == "json" else [])


def run_cli(log_dir: str, user: str, fmt: str, out: str) -> float:
    env = {**os.environ, "COLUMNS": "80", "KAFKA_OPS_WORKERS": "1"}
    t = time.perf_counter()
    with open(out, "w") as f:
        proc = subprocess.run(cli_args(log_dir, user, fmt, out), stdout=f, stderr=subprocess.DEVNULL, env=env)
    elapsed = time.perf_counter() - t
    if proc.returncode not in (0, 1):
        raise SystemExit(f"kafka-ops audit exited {proc.returncode}")
    return elapsed


def in_process(log_dir: str, user: str) -> dict[str, float]:
    times: dict[str, float] = {}
    opts = AuditOptions(log_dirs=[log_dir], broker_user=user, broker_state="stopped", kafka_version="3.7.0")
    opts.now_ms = NOW
    t = time.perf_counter()
    report = run_audit(opts)
    apply_gate(report, "critical", None)
    times["run_audit"] = time.perf_counter() - t
    t = time.perf_counter()
    validate(report)
    times["validate"] = time.perf_counter() - t
    t = time.perf_counter()
    write_json(report, io.StringIO())
    times["write_json"] = time.perf_counter() - t
    t = time.perf_counter()
    lines = table_lines(report, 80)
    times["table_lines"] = time.perf_counter() - t
    times["findings"] = len(report["findings"])
    times["table lines"] = len(lines)
    return times


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--partitions", type=int, default=20000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--dir", default=os.path.join(tempfile.gettempdir(), "kafka-ops-bench"))
    ap.add_argument("--json", metavar="PATH")
    args = ap.parse_args()
    (log_dir,) = write_host(os.path.join(args.dir, f"{args.partitions}x1"), args.partitions, 1)
    out = os.path.join(args.dir, "bench-findings.out")
    runs: dict[str, dict[str, list[float]]] = {k: {} for k in USERS}
    counts: dict[str, dict[str, float]] = {}
    for r in range(args.rounds):
        order = list(USERS.items()) if r % 2 == 0 else list(reversed(USERS.items()))
        for kind, user in order:
            for fmt in ("json", "table"):
                runs[kind].setdefault(f"cli {fmt}", []).append(run_cli(log_dir, user, fmt, out))
                if fmt == "table":
                    with open(out) as f:
                        counts.setdefault(kind, {})["cli table lines"] = sum(1 for _ in f)
            t = in_process(log_dir, user)
            for k in ("run_audit", "validate", "write_json", "table_lines"):
                runs[kind].setdefault(k, []).append(t[k])
            counts.setdefault(kind, {}).update(findings=t["findings"], table_lines_n=t["table lines"])
        print(f"round {r + 1}/{args.rounds} done", file=sys.stderr)
    result: dict[str, Any] = {
        "partitions": args.partitions,
        "rounds": args.rounds,
        "steps": {},
        "counts": counts,
    }
    print(f"{args.partitions} partitions; findings: {counts['none']['findings']:.0f} without, "
          f"{counts['findings']['findings']:.0f} with; table at 80 columns: "
          f"{counts['none']['cli table lines']:.0f} / {counts['findings']['cli table lines']:.0f} lines")  # fmt: skip
    print(f"{'step':<14} {'without s':>10} {'with s':>10} {'ratio':>7}")
    for step in runs["none"]:
        a, b = statistics.median(runs["none"][step]), statistics.median(runs["findings"][step])
        ratio = b / a if a else float("inf")
        result["steps"][step] = {"without_s": a, "with_s": b, "ratio": ratio, "runs": runs["none"][step],
                                 "runs_with": runs["findings"][step]}  # fmt: skip
        print(f"{step:<14} {a:>10.2f} {b:>10.2f} {ratio:>7.2f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=2)


if __name__ == "__main__":
    main()
