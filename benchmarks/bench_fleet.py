"""Fleet audit benchmark: the PySpark job's wall time against running the CLI on each log dir in turn.

For the same simulated fleet (``kafka_ops.simulator``, one host per broker, 2 log dirs each), prints for 1, 2, 4
and 8 hosts:

* **cli sum**: ``kafka-ops audit --log-dir D ...`` run as a subprocess on each (host, log dir) in turn, summed:
  what a loop over the fleet costs;
* **job**: ``run_fleet`` in local mode (``local[*]``) on the same hosts (``ansible_connection: local``): the audit,
  the fleet view and the report (Parquet not written); the Spark session is started once beforehand
  and its start time is printed apart, since a pipeline pays it once per run whatever the fleet size;
* the ratio cli sum / job, and how each grows from 1 host.

No number is compared with a fixed threshold; run it on an idle machine (``nproc`` cores are used).

    python benchmarks/bench_fleet.py [--hosts 1,2,4,8] [--scale 1] [--repeat 2] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import pwd
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from kafka_ops.fleet.inventory import Target
from kafka_ops.simulator.host import Failures, HostSpec, default_topics, simulate_host

NOW_MS = 1_790_000_000_000


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hosts", default="1,2,4,8")
    ap.add_argument(
        "--scale", type=float, default=1, help="record counts x this (kafka-ops simulate --scale)"
    )
    ap.add_argument("--repeat", type=int, default=2, help="timed runs of each; the best is kept")
    ap.add_argument("--json", help="also write the timings here")
    a = ap.parse_args()
    sizes = [int(x) for x in a.hosts.split(",")]
    user = pwd.getpwuid(os.getuid()).pw_name
    exe = os.path.join(os.path.dirname(sys.executable), "kafka-ops")
    with tempfile.TemporaryDirectory(prefix="bench-fleet-") as tmp:
        topics = default_topics()
        for t in topics:  # as `kafka-ops simulate --scale` does
            t.records_per_partition = max(1, int(t.records_per_partition * a.scale))
        hosts = [
            simulate_host(
                str(Path(tmp) / f"b{i}"),
                HostSpec(
                    now_ms=NOW_MS, node_id=i, failures=Failures.all() if i == 1 else Failures(), topics=topics
                ),
            )
            for i in range(1, max(sizes) + 1)
        ]
        print(f"simulated {len(hosts)} hosts x {len(hosts[0].log_dirs)} log dirs in {tmp}", file=sys.stderr)

        def cli_sum(n: int) -> float:
            total = 0.0
            for h in hosts[:n]:
                for d in h.log_dirs:
                    t0 = time.perf_counter()
                    subprocess.run(
                        [exe, "audit", "--log-dir", d, "--server-properties", h.server_properties,
                         "--systemd-unit", h.systemd_unit, "--broker-user", user, "--kafka-version", "3.7.0",
                         "--broker-state", "stopped", "--now", str(NOW_MS), "-f", "json", "--expect-mount", f"{d}=/"],
                        capture_output=True, check=False,
                    )  # fmt: skip
                    total += time.perf_counter() - t0
            return total

        from kafka_ops.fleet.job import run_fleet, spark_session

        t0 = time.perf_counter()
        spark = spark_session()
        session_s = time.perf_counter() - t0
        settings = {
            "now_ms": NOW_MS,
            "broker_state": "stopped",
            "fail_on": "critical",
            "kafka_version": "3.7.0",
        }

        def job(n: int) -> float:
            targets = [
                Target(f"b{i + 1}", tuple(h.log_dirs), server_properties=h.server_properties,
                       systemd_unit=h.systemd_unit, broker_user=user, kafka_version="3.7.0",
                       expected_mounts=tuple((d, "/") for d in h.log_dirs))
                for i, h in enumerate(hosts[:n])
            ]  # fmt: skip
            t = time.perf_counter()
            run_fleet(spark, targets, settings)
            return time.perf_counter() - t

        job(1)  # warm the Python workers once (a real run pays this once too; it is not the per-host cost)
        rows = []
        for n in sizes:
            c = min(cli_sum(n) for _ in range(a.repeat))
            j = min(job(n) for _ in range(a.repeat))
            rows.append({"hosts": n, "units": 2 * n, "cli_sum_s": round(c, 2), "job_s": round(j, 2)})
        spark.stop()
    print(
        f"Spark session start (once per run, not in the job times): {session_s:.1f} s; cores: {os.cpu_count()}"
    )
    print(
        f"{'hosts':>5} {'units':>5} {'cli sum s':>10} {'job s':>8} {'cli/job':>8} {'cli x1':>7} {'job x1':>7}"
    )
    base = rows[0]
    for r in rows:
        print(
            f"{r['hosts']:>5} {r['units']:>5} {r['cli_sum_s']:>10.2f} {r['job_s']:>8.2f} "
            f"{r['cli_sum_s'] / r['job_s']:>8.2f} {r['cli_sum_s'] / base['cli_sum_s']:>7.2f} "
            f"{r['job_s'] / base['job_s']:>7.2f}"
        )
    if a.json:
        Path(a.json).write_text(json.dumps({"session_s": session_s, "rows": rows}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
