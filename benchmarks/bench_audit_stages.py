"""The audit against the bare loop, and where its time goes: a per-stage profile (issue 25, the audit's budget).

On one simulated host (``bench_audit.write_host``: P partitions of S one-batch segments, a healthy, cleanly
stopped broker), in the same process and the same rounds:

* **bare loop** (:func:`bare_loop`): scandir every partition, lstat every file, and open (O_NOFOLLOW) and pread
  the last 12 bytes of every ``.index``/``.timeindex`` that holds an entry: what any audit must do at least;
* **run_audit w=1** and **w=N** (the library, one process and N gathering processes, ``facts.pool``);
* **cli** (``kafka-ops audit --format json``, a subprocess: interpreter start, imports, the report's validation
  and its JSON), with ``KAFKA_OPS_WORKERS=1`` and with the worker count the CLI chooses itself.

Ratio = bare loop time / step time: printed per round, and the result is the best bare loop time over the best
time of the step (the machine this runs on is shared: noise only ever makes a step slower; a per-round ratio
is flattered by a round whose bare loop was slowed down). Goal: >= 0.5.

Then one more (untimed) audit in one process with every stage's function wrapped in a timer (exclusive time:
a stage's nested calls to another stage are charged to that one): scan (partition dirs listed and stat-ed,
index tails), facts (the rest of the gathering: the active and oldest ``.log``, recovery), forecast (each
partition's forecast and the per-topic totals), plan (the next-start plan), checks, and render (the report's
validation and JSON, timed after the audit), and the CLI's fixed cost (an empty log dir's audit). The timers
cost about a microsecond a call, so the stages add up to a little more than the plain run_audit. And the CLI's
own peak RSS with one process (VmHWM) at 1/4, 1/2 and all of the partitions.

Then the floor (:func:`floor`, unless ``--no-floor``): the CPU time of the audit's steps cut short (the scan, the
index tails, the facts, the whole audit) against the bare loop, and w=N's CPU in all.

Usage: python benchmarks/bench_audit_stages.py [--shape 20000x5] [--rounds 3] [--workers 2] [--dir DIR]
       [--no-cli] [--no-stages] [--no-memory] [--no-floor] [--json PATH]
"""

from __future__ import annotations

import argparse
import compileall
import io
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from bench_audit import NOW, audit, cli, subset, write_host

_OPEN = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC


def bare_loop(log_dirs: list[str]) -> int:
    """scandir every partition, lstat every file, pread the last 12 bytes of every index with an entry."""
    n = 0
    for top in log_dirs:
        for entry in os.scandir(top):
            if not entry.is_dir(follow_symlinks=False):
                entry.stat(follow_symlinks=False)
                continue
            for f in os.scandir(entry.path):
                size = f.stat(follow_symlinks=False).st_size
                n += 1
                name = f.name
                if size >= 8 and (name.endswith(".index") or name.endswith(".timeindex")):
                    fd = os.open(f.path, _OPEN)
                    try:
                        os.pread(fd, 12, max(0, size - 12))
                    finally:
                        os.close(fd)
    return n


def cli_args(log_dirs: list[str]) -> list[str]:
    args = [sys.executable, "-m", "kafka_ops", "audit", "--format", "json", "--now", str(NOW)]
    args += ["--broker-state", "stopped", "--kafka-version", "3.7.0"]
    for d in log_dirs:
        args += ["--log-dir", d]
    return args


def run_cli(log_dirs: list[str], out: str, workers: int | None) -> None:
    """``kafka-ops audit --format json > out``, with ``workers`` (KAFKA_OPS_WORKERS) or the CLI's own choice."""
    env = dict(os.environ)
    env.pop("KAFKA_OPS_WORKERS", None)
    if workers is not None:
        env["KAFKA_OPS_WORKERS"] = str(workers)
    with open(out, "wb") as f:
        proc = subprocess.run(cli_args(log_dirs), stdout=f, stderr=subprocess.DEVNULL, env=env)
    if proc.returncode not in (0, 1):  # 1: the gate failed, which is a result
        raise SystemExit(f"kafka-ops audit exited {proc.returncode}")


def timed(fn: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def compare(
    dirs: list[str], rounds: int, workers: int, out: str, with_cli: bool = True
) -> dict[str, dict[str, Any]]:
    """Each step's times and ratios (bare loop / step, per round); the steps' order rotates between rounds."""
    steps: list[tuple[str, Callable[[], object]]] = [
        ("bare loop", lambda: bare_loop(dirs)),
        ("run_audit w=1", lambda: audit(dirs, 1)),
    ]
    if workers > 1:
        steps.append((f"run_audit w={workers}", lambda: audit(dirs, workers)))
    if with_cli:
        steps.append(("cli w=1", lambda: run_cli(dirs, out, 1)))
        steps.append(("cli", lambda: run_cli(dirs, out, None)))
    res: dict[str, dict[str, Any]] = {name: {"times_s": [], "ratios": []} for name, _ in steps}
    for r in range(rounds):
        order = steps[r % len(steps) :] + steps[: r % len(steps)]
        took = {name: timed(fn) for name, fn in order}
        for name, t in took.items():
            res[name]["times_s"].append(t)
            if name != "bare loop":
                res[name]["ratios"].append(took["bare loop"] / t)
        print(
            f"  round {r + 1}: "
            + ", ".join(f"{n} {t:.2f} s" for n, t in took.items())
            + " | ratio "
            + ", ".join(f"{n} {res[n]['ratios'][-1]:.2f}" for n in took if n != "bare loop"),
            flush=True,
        )
    if not rounds:  # --rounds 0: stages and memory only
        return {}
    bare = min(res["bare loop"]["times_s"])
    for name, v in res.items():
        v["best_s"] = min(v["times_s"])
        if name != "bare loop":  # best against best: a round with a slowed bare loop does not flatter it
            v["best_ratio"] = bare / v["best_s"]
    return res


# ------------------------------------------------------------------------------------------- quick (CI)
def quick_audit_ratio(root: str, partitions: int = 1000, per: int = 5, rounds: int = 5) -> float:
    """The CI figure (tests/test_bench_ratios.py, benchmarks/ratios.json ``audit_w1_vs_bare_loop``): bare loop
    / ``run_audit`` in one process on a ``partitions`` x ``per`` host written under ``root`` (reused), as the
    best of ``rounds`` of each, interleaved. CPU time of this process (user + system: both steps run in it
    alone, with the page cache warm, so it is their wall time on an idle machine): a CI runner or a machine
    shared with other jobs takes CPU away from both steps at random, which the best wall time of a few rounds
    does not always undo."""
    dirs = write_host(os.path.join(root, f"{partitions}x{per}"), partitions, per)
    bare_loop(dirs)
    audit(dirs, 1)
    bare, full = [], []
    for _ in range(rounds):
        t0 = time.process_time()
        bare_loop(dirs)
        t1 = time.process_time()
        audit(dirs, 1)
        t2 = time.process_time()
        bare.append(t1 - t0)
        full.append(t2 - t1)
    return min(bare) / min(full)


# ------------------------------------------------------------------------------------------------ floor
def _children_cpu() -> float:
    import resource

    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def floor(dirs: list[str], rounds: int = 5, workers: int = 2) -> dict[str, dict[str, float]]:
    """Where the audit's floor is: CPU time (user + system, best of ``rounds``, interleaved, one process) of the
    bare loop and of the audit's own steps cut short, each a prefix of the next: ``scan`` (scan_partition without
    the index tails: scandir, an lstat and a FileInfo per file), ``scan+tails`` (with them: what the bare loop
    reads), ``gather`` (the facts: gather_partition, also the active and oldest ``.log``), ``run_audit w=1`` (the
    forecast, the plan, the checks and the report on top). Then ``run_audit w=N``'s CPU in all (the parent and
    its workers, whose pickling the single process does not do) and the parent's own: on an idle machine with N
    CPUs its wall time is at least the larger of the parent's CPU and the total over N (``ideal ratio``).
    CPU time, not wall time: other jobs on the machine take CPUs away from a step, not CPU time from it."""
    from kafka_ops.engine.logdir import scan_partition
    from kafka_ops.facts.collect import gather, gather_partition
    from kafka_ops.facts.model import AuditOptions

    opts = AuditOptions(log_dirs=dirs, now_ms=NOW, broker_state="stopped", kafka_version="3.7.0")
    h = gather(opts)
    parts = [(ldf, ldf.scan.partition_names) for ldf in h.log_dirs]
    count = sum(len(names) for _, names in parts)

    def scan(tails: bool) -> None:
        for _, names in parts:
            for path, name in names:
                scan_partition(path, name, read_tails=tails)

    def facts() -> None:
        for ldf, names in parts:
            for path, name in names:
                gather_partition(h, ldf, path, name)

    steps: list[tuple[str, Callable[[], object]]] = [
        ("bare loop", lambda: bare_loop(dirs)),
        ("scan", lambda: scan(False)),
        ("scan+tails", lambda: scan(True)),
        ("gather", facts),
        ("run_audit w=1", lambda: audit(dirs, 1)),
    ]
    best = {name: float("inf") for name, _ in steps}
    pool = {"total": float("inf"), "parent": float("inf")}
    for _ in range(rounds):
        for name, fn in steps:
            t0 = time.process_time()
            fn()
            best[name] = min(best[name], time.process_time() - t0)
        if workers > 1:
            c0, t0 = _children_cpu(), time.process_time()
            audit(dirs, workers)
            parent, kids = time.process_time() - t0, _children_cpu() - c0
            if parent + kids < pool["total"]:
                pool = {"total": parent + kids, "parent": parent}
    bare = best["bare loop"]
    out = {
        name: {"cpu_s": t, "us_per_partition": t / count * 1e6, "ratio": bare / t} for name, t in best.items()
    }
    if workers > 1:
        ideal = max(pool["parent"], pool["total"] / workers)
        out[f"run_audit w={workers}"] = {
            "cpu_s": pool["total"], "parent_cpu_s": pool["parent"], "ideal_wall_s": ideal, "ideal_ratio": bare / ideal,
            "overhead_vs_w1": pool["total"] / best["run_audit w=1"] - 1,
        }  # fmt: skip
    return out


def print_floor(res: dict[str, dict[str, float]]) -> None:
    print("floor (CPU time, one process, best of the rounds; ratio = bare loop / step):")
    for name, v in res.items():
        if "ratio" in v:
            print(
                f"  {name:<16} {v['cpu_s']:7.2f} s  {v['us_per_partition']:7.1f} us a partition  ratio {v['ratio']:.2f}"
            )
        else:
            print(
                f"  {name:<16} {v['cpu_s']:7.2f} s of CPU in all ({v['overhead_vs_w1']:+.0%} on w=1), the parent's "
                f"{v['parent_cpu_s']:.2f} s: on an idle machine at best {v['ideal_wall_s']:.2f} s, ratio "
                f"{v['ideal_ratio']:.2f}"
            )


# ------------------------------------------------------------------------------------------------ stages
class StageClock:
    """Exclusive time per stage of wrapped functions (a stage's nested calls into another are not its own)."""

    def __init__(self) -> None:
        self.total: dict[str, float] = {}
        self.calls: dict[str, int] = {}
        self.stack: list[list[Any]] = []  # [stage, start, time of nested wrapped calls]

    def wrap(self, stage: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        clock = self
        perf = time.perf_counter

        def timed_call(*a: Any, **kw: Any) -> Any:
            frame = [stage, perf(), 0.0]
            clock.stack.append(frame)
            try:
                out = fn(*a, **kw)
                if hasattr(out, "__next__"):  # a check's generator: drain it inside the clock
                    out = list(out)
                return out
            finally:
                clock.stack.pop()
                took = perf() - frame[1]
                clock.total[stage] = clock.total.get(stage, 0.0) + took - frame[2]
                clock.calls[stage] = clock.calls.get(stage, 0) + 1
                if clock.stack:
                    clock.stack[-1][2] += took

        return timed_call


def stage_profile(dirs: list[str]) -> dict[str, float]:
    """One run_audit in one process with its stages' functions wrapped, then the CLI's render of its report."""
    from kafka_ops.audit import run as audit_mod
    from kafka_ops.broker import forecast, plan
    from kafka_ops.checks import load_all
    from kafka_ops.engine import logdir
    from kafka_ops.facts import collect
    from kafka_ops.render import text as render
    from kafka_ops.render.models import validate

    clock = StageClock()
    patched: list[tuple[Any, str, Any]] = []

    def patch(obj: Any, name: str, stage: str) -> None:
        old = getattr(obj, name)
        patched.append((obj, name, old))
        setattr(obj, name, clock.wrap(stage, old))

    patch(collect, "gather_partition", "facts")
    patch(collect, "scan_partition", "scan")
    patch(logdir, "read_segment_tails", "scan")
    patch(collect, "gather_log_dir", "scan")
    patch(audit_mod, "for_check", "forecast")
    patch(forecast.HostForecast, "add", "forecast")
    patch(forecast.HostForecast, "merge", "forecast")
    patch(audit_mod, "update_aggregate", "facts")
    for name in ("add_partition", "finish", "attach_checks", "to_dict"):
        patch(plan.NextStartPlan, name, "plan")
    specs = load_all()
    for spec in specs.values():
        old = spec.run
        patched.append((spec, "run", old))
        object.__setattr__(spec, "run", clock.wrap("checks", old))
    try:
        t0 = time.perf_counter()
        report = audit(dirs, 1)
        total = time.perf_counter() - t0
    finally:
        for obj, name, old in reversed(patched):
            object.__setattr__(obj, name, old) if obj in specs.values() else setattr(obj, name, old)
    t0 = time.perf_counter()
    validate(report)
    render.write_json(report, io.StringIO())
    out = dict(sorted(clock.total.items()))
    out["render"] = time.perf_counter() - t0
    out["other (run_audit's own loop)"] = total - sum(v for k, v in out.items() if k != "render")
    out["run_audit (instrumented)"] = total
    return out


def startup_s(root: str) -> float:
    """The CLI's fixed cost: ``kafka-ops audit --format json`` of an empty log dir (interpreter start, imports,
    the report's validation and JSON), best of 3."""
    empty = os.path.join(root, "empty", "kafka-1")
    os.makedirs(empty, exist_ok=True)
    out = os.path.join(root, "empty", "report.json")
    return min(timed(lambda: run_cli([empty], out, 1)) for _ in range(3))


def memory(host: str, dirs: list[str], out: str) -> list[dict[str, int]]:
    """The CLI w=1's own peak RSS (VmHWM at exit, bench_audit.cli: a child's ru_maxrss would count the pages of
    this benchmark process it was forked from) at 1/4, 1/2 and all of the partitions."""
    rows = []
    for frac in (4, 2, 1):
        sub = subset(host, dirs[0], frac) if frac > 1 else dirs[0]
        rss = cli([sub], out, env={**os.environ, "KAFKA_OPS_WORKERS": "1"})[0]
        rows.append({"fraction": frac, "cli_w1_peak_rss_kib": rss})
        print(f"  CLI w=1 peak RSS with 1/{frac} of the partitions: {rss / 1024:.1f} MiB", flush=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--shape", default="20000x5", help="PARTITIONSxSEGMENTS (default 20000x5)")
    ap.add_argument("--dir", default=None, help="where hosts are written once and reused")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--workers", type=int, default=2, help="run_audit's second worker count (default 2)")
    ap.add_argument("--no-cli", action="store_true")
    ap.add_argument("--no-stages", action="store_true")
    ap.add_argument("--no-memory", action="store_true")
    ap.add_argument("--no-floor", action="store_true")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    import kafka_ops

    compileall.compile_dir(os.path.dirname(kafka_ops.__file__), quiet=1)  # as pip installs it
    root = args.dir or os.path.join(tempfile.gettempdir(), "kafka-ops-bench")
    partitions, per = (int(x) for x in args.shape.lower().split("x"))
    host = os.path.join(root, args.shape)
    print(f"cpus: {len(os.sched_getaffinity(0))}, load average: {os.getloadavg()[0]:.2f}; host {host}")
    dirs = write_host(host, partitions, per)
    out = os.path.join(host, "report.json")
    files = bare_loop(dirs)  # warms the page and dentry caches
    audit(dirs, 1)
    print(f"files: {files}")
    result: dict[str, Any] = {"shape": args.shape, "files": files}
    result["steps"] = res = compare(dirs, args.rounds, args.workers, out, not args.no_cli)
    for name, v in res.items():
        extra = f", best ratio {v['best_ratio']:.2f} (goal >= 0.5)" if "best_ratio" in v else ""
        print(f"{name:<16} best {v['best_s']:.2f} s{extra}")
    if not args.no_floor:
        result["floor"] = fl = floor(dirs, max(args.rounds, 3), args.workers)
        print_floor(fl)
    if not args.no_stages:
        stages = result["stages_s"] = stage_profile(dirs)
        print("stages (one process, exclusive seconds):")
        for name, s in stages.items():
            print(f"  {name:<30} {s:6.2f}")
        if not args.no_cli:
            result["startup_s"] = s = startup_s(root)
            print(f"  {'cli of an empty log dir':<30} {s:6.2f}")
    if not args.no_memory:
        result["memory"] = memory(host, dirs, out)
    print(f"load average at the end: {os.getloadavg()[0]:.2f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=2)


if __name__ == "__main__":
    main()
