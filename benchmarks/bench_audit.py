"""Audit throughput and memory on simulated hosts of many partitions and segments.

For each host shape (partitions x segments per partition), measured in one process on the same files:
* the wall time of a bare Python loop that lists the partitions, stats each file and reads each index's last
  entry (the minimum any audit must do), of ``run_audit`` (the library) and of the whole CLI,
  ``kafka-ops audit --format json`` in a subprocess (interpreter start, imports, validation and the JSON
  included); ratio = bare loop time / audit time, per round, against that round's bare loop (goal: >= 0.5);
* the peak memory at 1/4, 1/2 and all of the partitions: tracemalloc's peak in ``run_audit`` in one process
  (all of the audit's Python memory) and the CLI's peak RSS with each worker count (the largest process: the
  CLI or one of its workers) (goal: flat).

``run_audit`` is timed with each ``--workers`` count (default 1 and 2: one process, and two processes gathering
the facts, the audit's own and one forked worker); the CLI chooses its own (facts.pool.worker_count: workers only
with 2 idle CPUs or more).

Usage: python benchmarks/bench_audit.py [--shape 20000x5 --shape 2000x50] [--rounds 5] [--workers 1,2]
       [--dir DIR] [--json PATH]
Hosts are written once into DIR (default: <tmp>/kafka-ops-bench) and reused.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

from kafka_ops.audit import run_audit
from kafka_ops.engine.builder import NewRecord, build_batch
from kafka_ops.facts.model import AuditOptions
from kafka_ops.simulator.writer import PartitionWriter, SegmentConfig

NOW = 1_790_000_000_000
DEFAULT_SHAPES = ("20000x5", "2000x50")


def write_host(root: str, partitions: int, per_partition: int) -> list[str]:
    """One log dir of ``partitions`` partitions of ``per_partition`` segments, one small batch per segment."""
    log_dir = os.path.join(root, "data", "kafka-1")
    marker = os.path.join(root, ".complete")
    if os.path.exists(marker):
        return [log_dir]
    os.makedirs(log_dir, exist_ok=True)
    cfg = SegmentConfig(segment_bytes=1, index_interval_bytes=4096)  # roll on every batch
    t = NOW - 3600_000
    for p in range(partitions):
        w = PartitionWriter(os.path.join(log_dir, f"bench-{p}"), cfg)
        for i in range(per_partition):
            off = w.next_offset
            w.append(build_batch(off, [NewRecord(b"k", b"v" * 100, t + i)]), off, off, t + i)
        w.close(clean_shutdown=True)
        if p % 100 == 0:
            print(f"  writing partitions: {p}/{partitions}", file=sys.stderr, end="\r")
    with open(os.path.join(log_dir, ".kafka_cleanshutdown"), "w") as f:
        f.write('{"version":0,"brokerEpoch":1}')
    with open(os.path.join(log_dir, "meta.properties"), "w") as f:
        f.write("version=1\ncluster.id=bench\nnode.id=1\n")
    open(marker, "w").close()
    print(file=sys.stderr)
    return [log_dir]


def baseline(log_dirs: list[str]) -> int:
    """List the partitions, stat every file, read the last slot of every index: the floor of any audit."""
    n = 0
    for top in log_dirs:
        for entry in os.scandir(top):
            if not entry.is_dir():
                entry.stat()
                continue
            for f in os.scandir(entry.path):
                st = f.stat()
                n += 1
                name = f.name
                if name.endswith(".index") or name.endswith(".timeindex"):
                    es = 8 if name.endswith(".index") else 12
                    if st.st_size >= es:
                        with open(f.path, "rb") as fh:
                            fh.seek(st.st_size - st.st_size % es - es)
                            fh.read(es)
    return n


def audit(log_dirs: list[str], workers: int | None = None) -> dict[str, Any]:
    opts = AuditOptions(log_dirs=log_dirs, now_ms=NOW, broker_state="stopped", kafka_version="3.7.0")
    opts.workers = workers
    return run_audit(opts)


# The CLI's own peak RSS is VmHWM at exit: ru_maxrss would count the pages of the (large) benchmark process it
# was forked from before exec; its workers' is their ru_maxrss (RUSAGE_CHILDREN: the largest of them).
CLI = """import atexit, os, resource, sys
def _peak():
    hwm = next((int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM:")), 0)
    with open(os.environ["BENCH_PEAK_FILE"], "w") as f:
        f.write(f"{hwm} {resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}")
atexit.register(_peak)
from kafka_ops.cli import main
sys.argv[0] = "kafka-ops"
sys.exit(main())
"""


def cli(log_dirs: list[str], out: str, env: dict[str, str] | None = None) -> tuple[int, int]:
    """``kafka-ops audit --format json > out`` in a subprocess; returns the peak RSS (KiB) of the CLI process and
    of its largest worker (0 without workers)."""
    args = [sys.executable, "-c", CLI, "audit", "--format", "json", "--now", str(NOW)]
    args += ["--broker-state", "stopped", "--kafka-version", "3.7.0"]
    for d in log_dirs:
        args += ["--log-dir", d]
    peak = out + ".peak"
    with open(out, "wb") as f:
        proc = subprocess.run(args, stdout=f, env={**(env or os.environ), "BENCH_PEAK_FILE": peak})
    if proc.returncode not in (0, 1):  # 1: the gate failed, which is a result, not an error
        raise SystemExit(f"kafka-ops audit exited {proc.returncode}")
    with open(peak) as f:
        own, workers = (int(x) for x in f.read().split())
    return own, workers


def timed(fn: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def subset(root: str, log_dir: str, frac: int) -> str:
    """A log dir holding the first 1/frac of the partitions (symlinks: the broker and the audit follow them) and
    copies of the root files (the clean-shutdown marker, meta.properties): the same host, fewer partitions."""
    sub = os.path.join(root, f"fraction-{frac}")
    if not os.path.isdir(sub):
        entries = sorted(os.scandir(log_dir), key=lambda e: e.name)
        os.makedirs(sub + ".tmp")
        for e in entries:
            if not e.is_dir():
                shutil.copy2(e.path, os.path.join(sub + ".tmp", e.name))
        parts = [e.name for e in entries if e.is_dir()]
        for name in parts[: len(parts) // frac]:
            os.symlink(os.path.join(log_dir, name), os.path.join(sub + ".tmp", name))
        os.rename(sub + ".tmp", sub)
    return sub


def bench_shape(root: str, shape: str, args: argparse.Namespace) -> dict[str, Any]:
    partitions, per = (int(x) for x in shape.lower().split("x"))
    host = os.path.join(root, shape)
    print(f"\n== {partitions} partitions x {per} segments ({host})")
    dirs = write_host(host, partitions, per)
    out = os.path.join(host, "report.json")
    baseline(dirs)  # warm the page cache and the dentry cache
    files = baseline(dirs)
    report = audit(dirs, 1)
    segs = sum(d["segments"] for d in report["log_dirs"])
    print(f"files: {files}, segments audited: {segs}, findings: {len(report['findings'])}")
    steps: list[tuple[str, Callable[[], object]]] = [("baseline", lambda: baseline(dirs))]
    for w in args.workers:
        steps.append((f"run_audit w={w}", lambda w=w: audit(dirs, w)))  # type: ignore[misc]
    if not args.no_cli:
        steps.append(("cli", lambda: cli(dirs, out)))
    runs: dict[str, list[float]] = {name: [] for name, _ in steps}
    ratios: dict[str, list[float]] = {name: [] for name, _ in steps[1:]}
    for r in range(args.rounds):
        order = steps[r % len(steps) :] + steps[: r % len(steps)]  # alternate who goes first
        took = {name: timed(fn) for name, fn in order}
        for name, t in took.items():
            runs[name].append(t)
        for name in ratios:
            if name in took:
                ratios[name].append(took["baseline"] / took[name])
        print(
            f"  round {r + 1}: "
            + ", ".join(f"{n} {t:.2f} s" for n, t in took.items())
            + " | ratio "
            + ", ".join(f"{n} {v[-1]:.2f}" for n, v in ratios.items() if v)
        )
    med = {n: statistics.median(v) for n, v in runs.items() if v}
    med_ratio = {n: statistics.median(v) for n, v in ratios.items() if v}
    if med:  # --rounds 0: memory only
        print(f"{'bare loop (median):':<26} {med['baseline']:.2f} s ({files / med['baseline']:,.0f} files/s)")
    for n in ratios:
        if n in med:
            print(
                f"{n + ' (median):':<26} {med[n]:.2f} s ({segs / med[n]:,.0f} segments/s), "
                f"ratio bare/{n}: median {med_ratio[n]:.2f} (goal >= 0.5)"
            )

    mem: list[dict[str, Any]] = []
    if not args.no_memory:
        for frac in (4, 2, 1):
            sub = subset(host, dirs[0], frac)
            tracemalloc.start()
            r = audit([sub], 1)  # one process: tracemalloc sees all of the audit's Python memory
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
            n = sum(d["segments"] for d in r["log_dirs"])
            parts = sum(d["partitions"] for d in r["log_dirs"])
            rss: dict[int, tuple[int, int]] = {}
            for w in [] if args.no_cli else args.workers:  # KiB: the CLI's, its largest worker's
                rss[w] = cli([sub], out, env={**os.environ, "KAFKA_OPS_WORKERS": str(w)})
            mem.append(
                {
                    "partitions": parts,
                    "segments": n,
                    "tracemalloc_peak": peak,
                    "cli_peak_rss": {w: v[0] * 1024 for w, v in rss.items()},
                    "worker_peak_rss": {w: v[1] * 1024 for w, v in rss.items()},
                }
            )
            print(
                f"peak memory, {parts:>6} partitions / {n:>7} segments: run_audit (tracemalloc) "
                f"{peak / 2**20:5.1f} MiB; CLI peak RSS "
                + ", ".join(
                    f"w={w} {v[0] / 1024:5.1f} MiB" + (f" (worker {v[1] / 1024:5.1f} MiB)" if v[1] else "")
                    for w, v in rss.items()
                )
            )
        if mem[0]["tracemalloc_peak"]:
            growth = mem[-1]["tracemalloc_peak"] / mem[0]["tracemalloc_peak"]
            print(f"tracemalloc peak growth from 1/4 to all partitions: x{growth:.2f} (flat = about 1)")
    return {
        "shape": shape,
        "partitions": partitions,
        "segments_per_partition": per,
        "files": files,
        "segments": segs,
        "runs_s": runs,
        "median_s": med,
        "ratios": ratios,
        "median_ratio": med_ratio,
        "memory": mem,
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument(
        "--shape", action="append", help="PARTITIONSxSEGMENTS (repeatable; default 20000x5, 2000x50)"
    )
    ap.add_argument("--dir", default=None)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument(
        "--workers",
        type=lambda v: [int(x) for x in v.split(",")],
        default=[1, 2],
        help="run_audit's worker counts to time, comma-separated (default 1,2; the CLI chooses its own)",
    )
    ap.add_argument("--no-cli", action="store_true", help="time run_audit only")
    ap.add_argument("--no-memory", action="store_true")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    root = args.dir or os.path.join(tempfile.gettempdir(), "kafka-ops-bench")
    print(f"cpus: {len(os.sched_getaffinity(0))}, load average: {os.getloadavg()[0]:.2f}")
    # The CLI is timed as installed: pip compiles the package's bytecode when it installs it, where a checkout run
    # with PYTHONDONTWRITEBYTECODE=1 (as here) would compile every module at every start (about 0.15 s of CPU).
    import kafka_ops

    compileall.compile_dir(os.path.dirname(kafka_ops.__file__), quiet=1)
    results = [bench_shape(root, shape, args) for shape in (args.shape or DEFAULT_SHAPES)]
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()
