"""Audit throughput and memory on a simulated host of many segments.

Prints, measured in one run on the same files:
* the audit's wall time against a bare Python loop that only stats each file and reads each index's last slot
  (the minimum any audit must do): ratio = baseline / audit (goal: >= 0.5);
* the audit's peak Python memory (tracemalloc) at 1/4, 1/2 and all of the partitions (goal: flat in the
  number of segments, since partitions are streamed).

Usage: python benchmarks/bench_audit.py [--segments 100000] [--dir DIR] [--json PATH]
The host is written once into DIR (default: a temp dir) and reused when it already exists.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
import tracemalloc

from kafka_ops.audit import run_audit
from kafka_ops.engine.builder import NewRecord, build_batch
from kafka_ops.facts.collect import AuditOptions
from kafka_ops.simulator.writer import PartitionWriter, SegmentConfig

NOW = 1_790_000_000_000


def write_host(root: str, segments: int, per_partition: int = 100) -> list[str]:
    """Log dirs of ``segments`` segments, ``per_partition`` per partition, one small batch per segment."""
    log_dir = os.path.join(root, "data", "kafka-1")
    marker = os.path.join(root, ".complete")
    if os.path.exists(marker):
        return [log_dir]
    os.makedirs(log_dir, exist_ok=True)
    cfg = SegmentConfig(segment_bytes=1, index_interval_bytes=4096)  # roll on every batch
    partitions = max(1, segments // per_partition)
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
    """stat every file, read the last slot of every index: the floor of any audit."""
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


def baseline_pread(log_dirs: list[str]) -> int:
    """The same loop with raw fds and os.pread: the strictest floor."""
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
                        fd = os.open(f.path, os.O_RDONLY)
                        os.pread(fd, es, st.st_size - st.st_size % es - es)
                        os.close(fd)
    return n


def audit(log_dirs: list[str]) -> dict:  # type: ignore[type-arg]
    return run_audit(
        AuditOptions(log_dirs=log_dirs, now_ms=NOW, broker_state="stopped", kafka_version="3.7.0")
    )


def best_of(fn, reps: int) -> float:  # type: ignore[no-untyped-def]
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--segments", type=int, default=100_000)
    ap.add_argument("--dir", default=None)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    root = args.dir or os.path.join(tempfile.gettempdir(), f"kafka-ops-bench-{args.segments}")
    print(f"host: {root} ({args.segments} segments)")
    dirs = write_host(root, args.segments)
    baseline(dirs)  # warm the page cache and the dentry cache
    files = baseline(dirs)
    t_base = best_of(lambda: baseline(dirs), args.reps)
    t_pread = best_of(lambda: baseline_pread(dirs), args.reps)
    t_audit = best_of(lambda: audit(dirs), args.reps)
    report = audit(dirs)
    segs = sum(d["segments"] for d in report["log_dirs"])
    print(f"files: {files}, segments audited: {segs}, findings: {len(report['findings'])}")
    print(f"bare stat + index-tail loop: {t_base:.2f} s ({files / t_base:,.0f} files/s)")
    print(f"kafka-ops audit:             {t_audit:.2f} s ({segs / t_audit:,.0f} segments/s)")
    print(f"same loop with os.pread:     {t_pread:.2f} s")
    ratio = t_base / t_audit
    print(f"ratio (baseline time / audit time): {ratio:.2f}  (goal >= 0.5)")
    print(f"ratio against the os.pread loop:    {t_pread / t_audit:.2f}")

    # peak memory at growing subsets of the same host: partitions are streamed, so it must stay flat
    parts = sorted(e.path for e in os.scandir(dirs[0]) if e.is_dir())
    mem = []
    for frac in (4, 2, 1):
        sub = os.path.join(root, f"subset-{frac}")
        if not os.path.isdir(sub):
            os.makedirs(sub)
            for p in parts[: len(parts) // frac]:
                os.symlink(p, os.path.join(sub, os.path.basename(p)))
        # symlinked partition dirs are followed by os.scandir().is_dir(); files are real
        tracemalloc.start()
        r = audit([sub])
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        n = sum(d["segments"] for d in r["log_dirs"])
        mem.append((n, peak))
        print(f"peak Python memory auditing {n:>7} segments: {peak / 2**20:6.1f} MiB")
    growth = mem[-1][1] / mem[0][1] if mem[0][1] else float("nan")
    print(f"memory growth from {mem[0][0]} to {mem[-1][0]} segments: x{growth:.2f} (flat = about 1)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(
                {
                    "segments": segs,
                    "baseline_s": t_base,
                    "baseline_pread_s": t_pread,
                    "audit_s": t_audit,
                    "ratio": ratio,
                    "memory": mem,
                },
                f,
                indent=2,
            )


if __name__ == "__main__":
    main()
