"""Issue 25's budget in one run: the three benchmarks one after the other on this machine, their ratios in one table.

* the audit against the bare loop (``bench_audit_stages.py``: best bare loop time / best step time, goal >= 0.5,
  for ``run_audit`` in one process, with two, and the CLI with the worker count it chooses);
* ``kafka-ops dump`` against Kafka's DumpLogSegments (``bench_dump.py``: kafka-ops time / its time, goal <= 1.0
  with and without records; ``--format json`` / text <= 1.3; ``kafka-ops --help`` < 0.25 s);
* 20,000 findings against none on the same host (``bench_findings.py``: with / without, goal <= 2 for the CLI's
  JSON and table).

Each script runs as it would by hand (its own process, its own rounds and baseline); this one only runs them in a row,
so the three figures come from the same stretch of the same machine, and prints them against their goals. A ratio is
only compared with the other steps of its own script: never an absolute time.

Usage: python benchmarks/bench_budget.py [--quick] [--json PATH] [--dir DIR]
  --quick: 2,000 partitions and one round each, a 32 MiB segment: a smoke test of the runner, not a result.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))


def run(script: str, args: list[str], out: str) -> dict[str, Any]:
    """One benchmark script in its own process, its output shown as it runs; its --json result."""
    cmd = [sys.executable, os.path.join(HERE, script), *args, "--json", out]
    print(f"$ {' '.join(cmd[1:])}", flush=True)
    t = time.monotonic()
    subprocess.run(cmd, check=True)
    print(f"({script}: {time.monotonic() - t:.0f} s)\n", flush=True)
    with open(out) as f:
        return json.load(f)


def rows(
    stages: dict[str, Any], dump: dict[str, Any], findings: dict[str, Any]
) -> list[tuple[str, float, str, bool]]:
    """(what, measured, goal, met) for each ratio of the budget."""
    out: list[tuple[str, float, str, bool]] = []
    for step, entry in stages["steps"].items():
        if step == "bare loop" or "best_s" not in entry:
            continue
        ratio = stages["steps"]["bare loop"]["best_s"] / entry["best_s"]
        out.append((f"audit {stages['shape']}: bare loop / {step}", ratio, ">= 0.5", ratio >= 0.5))
    r = dump["ratios"]
    for case in ("records", "batches, 1 big segment", "batches, many small segments", "payloads"):
        if case in r:
            out.append((f"dump {case}: kafka-ops / DumpLogSegments", r[case], "<= 1.0", r[case] <= 1.0))
    if "records json / text" in r:
        v = r["records json / text"]
        out.append(("dump --records: json / text", v, "<= 1.3", v <= 1.3))
    help_s = (dump.get("best_s", {}).get("help") or {}).get("wall")
    if help_s is not None:
        out.append(("kafka-ops --help (seconds, not a ratio)", help_s, "< 0.25 s", help_s < 0.25))
    for step in ("cli json", "cli table"):
        if step in findings["steps"]:
            v = findings["steps"][step]["ratio"]
            out.append((f"{findings['partitions']} findings / none: {step}", v, "<= 2", v <= 2))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--dir", default=os.path.join(tempfile.gettempdir(), "kafka-ops-bench"))
    ap.add_argument("--json", metavar="PATH", help="also write the three results and the table here")
    args = ap.parse_args()
    shape, parts, rounds, big = (
        ("2000x5", "2000", "1", "32") if args.quick else ("20000x5", "20000", "2", "256")
    )
    started = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    with tempfile.TemporaryDirectory() as tmp:
        stages = run(
            "bench_audit_stages.py",
            ["--shape", shape, "--rounds", rounds, "--no-memory", "--no-stages", "--dir", args.dir],
            os.path.join(tmp, "stages.json"),
        )
        dump = run(
            "bench_dump.py",
            ["--big-mib", big, "--repeat", "2", "--dir", os.path.join(args.dir, f"dump-{big}")],
            os.path.join(tmp, "dump.json"),
        )
        findings = run(
            "bench_findings.py",
            ["--partitions", parts, "--rounds", rounds, "--dir", args.dir],
            os.path.join(tmp, "findings.json"),
        )
    table = rows(stages, dump, findings)
    print(f"issue 25's budget, one run started {started}; {os.cpu_count()} CPUs, load average at the end "
          f"{os.getloadavg()[0]:.1f}")  # fmt: skip
    width = max(len(w) for w, *_ in table)
    for what, value, goal, met in table:
        print(f"  {what:<{width}}  {value:6.2f}  goal {goal:<8} {'met' if met else 'NOT MET'}")
    floor = stages.get("floor")
    if floor:  # not goals: where the audit's time goes, in CPU time (bench_audit_stages.floor)
        print("  where the floor is (CPU time, bare loop / step):")
        for step, v in floor.items():
            if "ratio" in v and step != "bare loop":
                print(f"    {step:<16} {v['ratio']:5.2f}  ({v['us_per_partition']:.0f} us a partition)")
            elif "ideal_ratio" in v:
                print(
                    f"    {step:<16} {v['ideal_ratio']:5.2f}  at best on an idle machine (its CPU in all "
                    f"{v['overhead_vs_w1']:+.0%} on w=1's)"
                )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(
                {"started": started, "stages": stages, "dump": dump, "findings": findings,
                 "budget": [{"what": w, "value": v, "goal": g, "met": m} for w, v, g, m in table]},
                f, indent=2,
            )  # fmt: skip


if __name__ == "__main__":
    main()
