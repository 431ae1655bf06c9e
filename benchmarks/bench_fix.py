"""`kafka-ops fix ownership --apply` against `chown -R` + `chmod -R` on the same tree.

A tree of ``--files`` empty files (default 100,000) in ``--partitions`` partition dirs spread over 4 log dirs is
reset before every timed run to root:root, files 0400 and dirs 0500 (so every file needs a chown and a chmod).
Then, in each round, on the same tree:

* **baseline**: ``chown -R U:G`` then ``chmod -R u+rwX`` over the 4 log dirs (two coreutils processes);
* **library**: ``plan_ownership`` + ``apply`` in a fresh interpreter (timed inside it, imports excluded), with its
  write-ahead journal on the same filesystem: the whole plan in memory (what the collector does, since it returns
  the plan);
* **streaming**: ``apply_ownership_streaming`` (what ``kafka-ops fix ownership --apply`` does: planned and applied
  as it walks, a batch at a time); its peak RSS is reported for one log dir (1/4 of the files) and for all four
  (goal: flat), with the plan-in-memory library's for all four;
* **cli**: ``kafka-ops fix ownership --log-dir ... --apply`` as a subprocess, interpreter start, facts, printing
  every change and the journal included;
* **undo**: ``fix.undo`` of the library's journal (back to root:root, 0400/0500), in a fresh interpreter.

Ratio = time / the same round's baseline time (lower is better; goal: a small multiple). Best of ``--rounds``.
Must run as root (it chowns). The uid/gid given to the files is ``--user``'s (default nobody).

Usage: python benchmarks/bench_fix.py [--files 100000] [--partitions 100] [--rounds 3] [--dir DIR]
       [--user nobody] [--json PATH] [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import time
from typing import Any

LIB = r"""
import json, resource, sys, time
from kafka_ops.remediate import fixes
t0 = time.perf_counter()
if sys.argv[1] == "apply":
    plan = fixes.plan_ownership(sys.argv[5:], int(sys.argv[2]), int(sys.argv[3]))
    t1 = time.perf_counter()
    journal = fixes.apply(plan, sys.argv[4])
    n = len(plan.actions)
elif sys.argv[1] == "stream":
    t1 = t0
    journal, n = fixes.apply_ownership_streaming(sys.argv[5:], int(sys.argv[2]), int(sys.argv[3]),
                                                 journal_dir=sys.argv[4])
else:
    t1 = t0
    journal = sys.argv[2]
    n = len(fixes.undo(journal))
t2 = time.perf_counter()
print(json.dumps({"plan_s": t1 - t0, "apply_s": t2 - t1, "total_s": t2 - t0, "journal": journal, "n": n,
                  "maxrss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""


def build(root: str, files: int, partitions: int) -> list[str]:
    marker = os.path.join(root, f".complete-{files}-{partitions}")
    log_dirs = [os.path.join(root, f"kafka-{i}") for i in range(4)]
    if os.path.exists(marker):
        return log_dirs
    shutil.rmtree(root, ignore_errors=True)
    per = files // partitions
    for p in range(partitions):
        d = os.path.join(log_dirs[p % 4], f"bench-{p}")
        os.makedirs(d)
        for i in range(per):
            os.close(os.open(os.path.join(d, f"{i:020d}.index"), os.O_CREAT | os.O_WRONLY, 0o644))
    open(marker, "w").close()
    return log_dirs


def reset(log_dirs: list[str]) -> None:
    subprocess.run(["chown", "-R", "0:0", *log_dirs], check=True)
    subprocess.run(["find", *log_dirs, "-type", "d", "-exec", "chmod", "0500", "{}", "+"], check=True)
    subprocess.run(["find", *log_dirs, "-type", "f", "-exec", "chmod", "0400", "{}", "+"], check=True)
    subprocess.run(["sync"], check=True)


def timed(argv: list[str], **kw: Any) -> float:
    t0 = time.perf_counter()
    subprocess.run(argv, check=True, **kw)
    return time.perf_counter() - t0


def lib(*args: str) -> dict[str, Any]:
    r = subprocess.run([sys.executable, "-c", LIB, *args], check=True, capture_output=True, text=True)
    return json.loads(r.stdout)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=100_000)
    ap.add_argument("--partitions", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--dir")
    ap.add_argument("--user", default="nobody")
    ap.add_argument("--json")
    ap.add_argument("--quick", action="store_true", help="10,000 files, 1 round: a smoke test, not a result")
    a = ap.parse_args()
    if os.geteuid() != 0:
        print("bench_fix: needs root (it chowns)", file=sys.stderr)
        return 2
    if a.quick:
        a.files, a.partitions, a.rounds = 10_000, 20, 1
    pw = pwd.getpwnam(a.user)
    uid, gid = str(pw.pw_uid), str(pw.pw_gid)
    root = a.dir or os.path.join(tempfile.gettempdir(), "kafka-ops-bench-fix")
    log_dirs = build(root, a.files, a.partitions)
    jdir = os.path.join(root, "journal")
    rounds: list[dict[str, Any]] = []
    for r in range(a.rounds):
        reset(log_dirs)
        base = timed(["chown", "-R", f"{uid}:{gid}", *log_dirs]) + timed(["chmod", "-R", "u+rwX", *log_dirs])
        reset(log_dirs)
        quarter = lib("stream", uid, gid, jdir, log_dirs[0])
        reset(log_dirs)
        stream = lib("stream", uid, gid, jdir, *log_dirs)
        reset(log_dirs)
        whole = lib("apply", uid, gid, jdir, *log_dirs)
        undo = lib("undo", whole["journal"])
        reset(log_dirs)
        cli = timed(
            [sys.executable, "-m", "kafka_ops.cli", "fix", "ownership", "--broker-user", a.user, "--apply",
             "--journal-dir", jdir, *(f"--log-dir={d}" for d in log_dirs)],
            stdout=subprocess.DEVNULL,
        )  # fmt: skip
        row = {
            "round": r,
            "baseline_s": base,
            "library_s": whole["total_s"],
            "library_plan_s": whole["plan_s"],
            "library_apply_s": whole["apply_s"],
            "streaming_s": stream["total_s"],
            "cli_s": cli,
            "undo_s": undo["total_s"],
            "actions": whole["n"],
            "maxrss_streaming_quarter_kib": quarter["maxrss_kib"],
            "maxrss_streaming_all_kib": stream["maxrss_kib"],
            "maxrss_plan_all_kib": whole["maxrss_kib"],
        }
        rounds.append(row)
        print(
            f"round {r}: baseline {base:.2f} s, library {whole['total_s']:.2f} s "
            f"(plan {whole['plan_s']:.2f}, apply {whole['apply_s']:.2f}) = {whole['total_s'] / base:.1f}x, "
            f"streaming {stream['total_s']:.2f} s = {stream['total_s'] / base:.1f}x, "
            f"cli {cli:.2f} s = {cli / base:.1f}x, undo {undo['total_s']:.2f} s = {undo['total_s'] / base:.1f}x"
        )
        shutil.rmtree(jdir, ignore_errors=True)
    best = {
        k: min(x[k] for x in rounds) for k in ("baseline_s", "library_s", "streaming_s", "cli_s", "undo_s")
    }
    rss = rounds[-1]
    print(
        f"\n{a.files} files, {rounds[0]['actions']} changes (chown + chmod each), best of {a.rounds}:\n"
        f"  chown -R + chmod -R   {best['baseline_s']:7.2f} s\n"
        f"  library plan+apply    {best['library_s']:7.2f} s   {best['library_s'] / best['baseline_s']:5.1f}x\n"
        f"  library streaming     {best['streaming_s']:7.2f} s   {best['streaming_s'] / best['baseline_s']:5.1f}x\n"
        f"  kafka-ops fix (CLI)   {best['cli_s']:7.2f} s   {best['cli_s'] / best['baseline_s']:5.1f}x\n"
        f"  undo (library)        {best['undo_s']:7.2f} s   {best['undo_s'] / best['baseline_s']:5.1f}x\n"
        f"  peak RSS, streaming   {rss['maxrss_streaming_quarter_kib'] / 1024:.0f} MiB for 1/4 of the files, "
        f"{rss['maxrss_streaming_all_kib'] / 1024:.0f} MiB for all "
        f"(the whole plan in memory: {rss['maxrss_plan_all_kib'] / 1024:.0f} MiB)"
    )
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump({"files": a.files, "rounds": rounds, "best": best}, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
