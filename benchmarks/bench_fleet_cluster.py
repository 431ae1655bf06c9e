"""Fleet job structure benchmark: Spark jobs per run, fixed cost and per-host cost, on any master.

For 1, 8 and 32 simulated hosts (``kafka_ops.simulator``, 2 log dirs each, audited in the Spark task as
``ansible_connection: local`` hosts are) it runs ``run_fleet`` with Parquet results written to a ``file://`` URI
and prints, per fleet size (best of ``--repeat`` runs, after one warm-up run):

* **jobs**: the Spark jobs the run started (its job group's, from ``SparkContext.statusTracker``);
* **audit s**: the audit stage (the one collect: every host audited once);
* **outside s**: everything else the run spends: shipping the package, the fleet view on the driver, the three
  Parquet writes (run at once): the fixed cost a run pays whatever the fleet size;
* **per host ms**: (total(n) - total(1)) / (n - 1), the cost of one more host; and **fixed s** = total(1) - per host.

Ratios, not thresholds: the ``outside/total`` column says how much of a run is not auditing.

    python benchmarks/bench_fleet_cluster.py [--master spark://127.0.0.1:7077] [--hosts 1,8,32] [--repeat 2]
        [--executor-python /usr/bin/python3] [--conf spark.executor.memory=512m] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import pwd
import sys
import tempfile
import time
from pathlib import Path

from kafka_ops.fleet.inventory import Target
from kafka_ops.simulator.host import Failures, HostSpec, simulate_host

NOW_MS = 1_790_000_000_000


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--hosts", default="1,8,32")
    ap.add_argument("--repeat", type=int, default=2, help="timed runs of each; the best is kept")
    ap.add_argument("--executor-python", help="the executors' Python (default: the cluster's)")
    ap.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("--json", help="also write the timings here")
    a = ap.parse_args()
    sizes = [int(x) for x in a.hosts.split(",")]
    user = pwd.getpwuid(os.getuid()).pw_name
    with tempfile.TemporaryDirectory(prefix="bench-fleet-cluster-") as tmp:
        os.chmod(tmp, 0o755)
        hosts = [
            simulate_host(
                str(Path(tmp) / f"b{i}"),
                HostSpec(now_ms=NOW_MS, node_id=i, failures=Failures.all() if i == 1 else Failures()),
            )
            for i in range(1, max(sizes) + 1)
        ]
        print(f"simulated {len(hosts)} hosts x {len(hosts[0].log_dirs)} log dirs in {tmp}", file=sys.stderr)
        from kafka_ops.fleet.job import run_fleet, spark_session

        conf = dict(c.split("=", 1) for c in a.conf)
        t0 = time.perf_counter()
        spark = spark_session(a.master, conf=conf, executor_python=a.executor_python)
        session_s = time.perf_counter() - t0
        settings = {"now_ms": NOW_MS, "broker_state": "stopped", "fail_on": "critical"}
        results = f"file://{tmp}/results"

        def run(n: int) -> dict[str, float]:
            targets = [
                Target(f"b{i + 1}", tuple(h.log_dirs), server_properties=h.server_properties,
                       systemd_unit=h.systemd_unit, broker_user=user, kafka_version="3.7.0",
                       expected_mounts=tuple((d, "/") for d in h.log_dirs))
                for i, h in enumerate(hosts[:n])
            ]  # fmt: skip
            t = time.perf_counter()
            r = run_fleet(spark, targets, settings, results=results)
            total = time.perf_counter() - t
            return {"total_s": total, "audit_s": r.timings["audit_s"], "outside_s": total - r.timings["audit_s"],
                    "jobs": r.jobs, "tasks": r.tasks}  # fmt: skip

        run(1)  # warm-up: executors and their Python workers start once per session, not per run
        rows = []
        for n in sizes:
            best = min((run(n) for _ in range(a.repeat)), key=lambda x: x["total_s"])
            rows.append({"hosts": n, **best})
        master = spark.sparkContext.master
        spark.stop()
    one = rows[0]
    print(f"master {master}; session start {session_s:.1f} s (once per run, not in the times below)")
    print(
        f"{'hosts':>5} {'jobs':>4} {'tasks':>5} {'total s':>8} {'audit s':>8} {'outside s':>9} {'outside/total':>13}"
    )
    for r in rows:
        print(
            f"{r['hosts']:>5} {r['jobs']:>4} {r['tasks']:>5} {r['total_s']:>8.2f} {r['audit_s']:>8.2f} "
            f"{r['outside_s']:>9.2f} {r['outside_s'] / r['total_s']:>13.2f}"
        )
    last = rows[-1]
    if last["hosts"] > one["hosts"]:
        per_host = (last["total_s"] - one["total_s"]) / (last["hosts"] - one["hosts"])
        print(
            f"per host {per_host * 1000:.0f} ms; fixed {one['total_s'] - per_host * one['hosts']:.2f} s "
            f"(from {one['hosts']} and {last['hosts']} hosts)"
        )
    if a.json:
        Path(a.json).write_text(
            json.dumps({"master": master, "session_s": session_s, "rows": rows}, indent=2)
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
