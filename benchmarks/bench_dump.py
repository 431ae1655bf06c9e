"""``kafka-ops dump`` against Kafka's own DumpLogSegments on the same files, and the CLI's start-up time.

Both tools run as they would for a user: one process each (``python -m kafka_ops dump ...`` and
``java ... kafka.tools.DumpLogSegments ...`` from the lab's jars, kafka_lab.dumplog's JVM options), start-up
included, stdout to /dev/null. The cases, each on the same files:

* batches: ``dump FILE`` vs ``--files FILE`` on one big segment, and on many small segments in one run;
* records: ``dump --records`` vs ``--deep-iteration`` (the same fields: offset, timestamp, key and value sizes,
  sequence, header keys), and ``--format json`` against the text;
* payloads: ``dump --payloads`` vs ``--deep-iteration --print-data-log`` (keys and values too);
* start-up: ``kafka-ops --help`` vs ``python -c pass`` and ``python -c "import json"``.

Before timing, each pair runs once and their batch and record lines are counted: both must agree with what was
written. Then the commands run round-robin ``--repeat`` times; the best wall time is kept (the CPU time of that
run is printed too). A ratio is kafka-ops' time / the other's: below 1, kafka-ops is faster.

Usage: python benchmarks/bench_dump.py [--big-mib 256] [--small-count 1000] [--repeat 3] [--kafka 3.9.1]
       [--dir DIR] [--json PATH]
Needs java (17) and the lab's jars of that release (kafka_lab.jars fetches them with Maven on first use).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import struct
import subprocess
import sys
import tempfile
import time

# the broker lab (kafka_lab/) sits at the repository's root, beside kafka_ops, and is not installed
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from kafka_lab import jars
from kafka_lab.dumplog import JVM_OPTS, dump_class
from kafka_ops.engine.builder import NewRecord, build_batch

MIB = 1024 * 1024
BASE_TS = 1_700_000_000_000
GOAL_RECORDS = 1.0  # dump --records at least as fast as DumpLogSegments --deep-iteration
GOAL_JSON = 1.3  # --format json within 1.3x of the text
GOAL_STARTUP_S = 0.25  # kafka-ops --help, on an idle machine


# --------------------------------------------------------------------------------------------- the files
def typical_batches(rnd: random.Random, distinct: int) -> list[bytes]:
    """An idempotent producer's batches: 100 records of 16-byte keys and 110-170-byte text values."""
    out = []
    ts = BASE_TS
    for i in range(distinct):
        recs = []
        for _ in range(100):
            ts += rnd.randrange(3)
            value = rnd.randbytes(rnd.randrange(55, 86)).hex().encode()  # text: both tools print it as is
            recs.append(NewRecord(b"user-%011d" % rnd.randrange(10**9), value, ts))
        out.append(build_batch(0, recs, producer_id=4242, producer_epoch=0, base_sequence=i * 100))
    return out


def small_batches(rnd: random.Random, distinct: int) -> list[bytes]:
    """One record a batch, ~100 bytes (what a __consumer_offsets-like or low-rate topic holds)."""
    out = []
    for i in range(distinct):
        key = b"group-%04d/orders-%03d" % (rnd.randrange(500), i % 64)
        out.append(build_batch(0, [NewRecord(key, rnd.randbytes(20).hex().encode(), BASE_TS + i)]))
    return out


def write_segment(path: str, batches: list[bytes], target_bytes: int, first_offset: int) -> tuple[int, int]:
    """Copies of ``batches`` with consecutive base offsets (outside the CRC's range) up to ``target_bytes``.
    Returns (batches, records)."""
    out = bytearray()
    offset = first_offset
    n = records = 0
    while len(out) < target_bytes:
        b = batches[n % len(batches)]
        pos = len(out)
        out += b
        struct.pack_into(">q", out, pos, offset)
        (last_delta,) = struct.unpack_from(">i", b, 23)
        offset += last_delta + 1
        records += struct.unpack_from(">i", b, 57)[0]
        n += 1
    with open(path, "wb") as f:
        f.write(out)
    return n, records


def make_files(root: str, big_mib: int, small_count: int) -> dict[str, object]:
    rnd = random.Random(25)
    big_dir = os.path.join(root, "orders-0")
    small_dir = os.path.join(root, "events-0")
    os.makedirs(big_dir, exist_ok=True)
    os.makedirs(small_dir, exist_ok=True)
    big = os.path.join(big_dir, f"{0:020d}.log")
    nb, nr = write_segment(big, typical_batches(rnd, 200), big_mib * MIB, 0)
    small, offset, sb = [], 0, 0
    batches = small_batches(rnd, 100)
    for _ in range(small_count):
        path = os.path.join(small_dir, f"{offset:020d}.log")
        n, _ = write_segment(path, batches, 16 * 1024, offset)
        small.append(path)
        offset += n
        sb += n
    return {"big": big, "big_batches": nb, "big_records": nr, "small": small, "small_batches": sb}


# ------------------------------------------------------------------------------------------------ running
def ours(*args: str) -> list[str]:
    return [sys.executable, "-m", "kafka_ops", *args]


def theirs(version: str, *args: str) -> list[str]:
    return ["java", *JVM_OPTS, "-cp", jars.classpath(version), dump_class(version), *args]


def run(cmd: list[str], capture: bool = False) -> tuple[float, float, str]:
    """(wall s, CPU s of the child, stdout if captured)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    proc = subprocess.run(
        cmd, stdout=subprocess.PIPE if capture else subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False
    )
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"exit {proc.returncode}: {' '.join(cmd[:8])} ...")
    return wall, cpu, proc.stdout.decode("utf-8", "replace") if capture else ""


def counts(text: str) -> tuple[int, int]:
    lines = text.splitlines()
    return sum(line.startswith("baseOffset: ") for line in lines), sum(
        line.startswith("| offset: ") for line in lines
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--big-mib", type=int, default=256)
    ap.add_argument("--small-count", type=int, default=1000, help="segments of 16 KiB of one-record batches")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--kafka", default="3.9.1", help="the release whose DumpLogSegments runs")
    ap.add_argument("--dir", help="keep the files here (default: a temporary directory, deleted after)")
    ap.add_argument("--json", help="also write every timing and ratio here")
    a = ap.parse_args()

    root = a.dir or tempfile.mkdtemp(prefix="kafka-ops-bench-dump-")
    try:
        files = make_files(root, a.big_mib, a.small_count)
        big, small = str(files["big"]), list(files["small"])  # type: ignore[call-overload]
        small_arg = ",".join(small)
        k = a.kafka
        pairs: dict[str, tuple[list[str], list[str]]] = {
            "batches, 1 big segment": (ours("dump", big), theirs(k, "--files", big)),
            "batches, many small segments": (
                ours("dump", "--files", small_arg),
                theirs(k, "--files", small_arg),
            ),
            "records": (ours("dump", "--records", big), theirs(k, "--deep-iteration", "--files", big)),
            "payloads": (
                ours("dump", "--payloads", big),
                theirs(k, "--deep-iteration", "--print-data-log", "--files", big),
            ),
        }
        extra = {
            "records json": ours("dump", "--records", "--format", "json", big),
            "help": ours("--help"),
            "python -c pass": [sys.executable, "-c", "pass"],
            'python -c "import json"': [sys.executable, "-c", "import json"],
        }
        expect = {
            "batches, 1 big segment": (files["big_batches"], 0),
            "batches, many small segments": (files["small_batches"], 0),
            "records": (files["big_batches"], files["big_records"]),
            "payloads": (files["big_batches"], files["big_records"]),
        }
        print(
            f"{a.big_mib} MiB segment: {files['big_batches']} batches, {files['big_records']} records; "
            f"{a.small_count} small segments: {files['small_batches']} batches; Kafka {k}; {os.cpu_count()} CPUs, "
            f"load {os.getloadavg()[0]:.1f}"
        )
        for name, (mine, other) in pairs.items():  # both tools see every batch and record: the runs are equal
            for who, cmd in (("kafka-ops", mine), ("DumpLogSegments", other)):
                got = counts(run(cmd, capture=True)[2])
                if got != expect[name]:
                    raise SystemExit(
                        f"{name}: {who} printed {got} (batches, records), expected {expect[name]}"
                    )
        commands = {**{f"{n} / kafka-ops": p[0] for n, p in pairs.items()}}
        commands |= {f"{n} / DumpLogSegments": p[1] for n, p in pairs.items()} | extra
        best: dict[str, tuple[float, float]] = {}
        for _ in range(a.repeat):
            for name, cmd in commands.items():
                wall, cpu, _ = run(cmd)
                if name not in best or wall < best[name][0]:
                    best[name] = (wall, cpu)

        print(
            f"\n{'case':32} {'kafka-ops':>16} {'DumpLogSegments':>18} {'ratio':>7}  (wall s best of {a.repeat}; cpu s)"
        )
        ratios: dict[str, float] = {}
        for name in pairs:
            m, o = best[f"{name} / kafka-ops"], best[f"{name} / DumpLogSegments"]
            ratios[name] = m[0] / o[0]
            print(f"{name:32} {m[0]:7.2f} ({m[1]:5.2f}) {o[0]:9.2f} ({o[1]:5.2f}) {ratios[name]:7.2f}")
        j, t = best["records json"], best["records / kafka-ops"]
        ratios["records json / text"] = j[0] / t[0]
        print(
            f"{'records --format json':32} {j[0]:7.2f} ({j[1]:5.2f})   vs text {t[0]:.2f}: {ratios['records json / text']:.2f}"
        )
        h, p, js = best["help"], best["python -c pass"], best['python -c "import json"']
        ratios["help / python -c pass"] = h[0] / p[0]
        ratios["help / import json"] = h[0] / js[0]
        print(
            f"{'kafka-ops --help':32} {h[0]:7.3f} s; python -c pass {p[0]:.3f} s (x{ratios['help / python -c pass']:.2f}),"
            f' -c "import json" {js[0]:.3f} s (x{ratios["help / import json"]:.2f})'
        )
        print(
            f"\ngoals: records ratio <= {GOAL_RECORDS}: {'met' if ratios['records'] <= GOAL_RECORDS else 'NOT met'}; "
            f"json / text <= {GOAL_JSON}: {'met' if ratios['records json / text'] <= GOAL_JSON else 'NOT met'}; "
            f"--help < {GOAL_STARTUP_S} s on an idle machine: {h[0]:.3f} s here"
        )
        if a.json:
            with open(a.json, "w") as f:
                json.dump({"best_s": {n: {"wall": w, "cpu": c} for n, (w, c) in best.items()}, "ratios": ratios,
                           "files": {k2: v for k2, v in files.items() if k2 != "small"}}, f, indent=2)  # fmt: skip
    finally:
        if not a.dir:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
