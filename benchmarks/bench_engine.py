"""Engine throughput, measured as ratios against baselines run in the same process on the same files.

Run by hand (not collected by pytest)::

    python benchmarks/bench_engine.py                 # default run, about 30-60 s on 2 cores
    python benchmarks/bench_engine.py --json out.json # also write the results as JSON
    python benchmarks/bench_engine.py --quick         # small files, for a smoke run

What is measured (see benchmarks/README.md for how to read the ratios):

1. ``.log`` verification: ``BatchScanner(buf, verify_crc=True)`` iterated to the end (headers, Batch objects,
   CRC-32C of every v2 batch) against a bare loop over the same bytes that reads each batch's length at
   offset 8 and its stored CRC, calls ``crc32c.crc32c`` on bytes [21, end) and compares the two; and against
   one ``crc32c.crc32c`` call over the whole file (the ceiling: no per-batch work at all).
2. The same files through kafka-python's reader (``MemoryRecords.next_batch()`` + ``validate_crc()``).
3. A full-size (10 MiB) ``.index``: ``read_offset_index`` + ``verify_offset_index`` against a bare
   ``open().read()`` of the file, (a) preallocated and zero padded, (b) fully populated, every entry
   pointing at a batch start of a matching log.

Every timed function starts from the path (opening, reading or mapping the file is part of it), the page
cache is warmed first, readers are run round-robin and the best of ``--repeat`` runs is kept.
"""

from __future__ import annotations

import argparse
import gc
import json
import mmap
import os
import platform
import random
import shutil
import struct
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import crc32c as crc32c_wheel

from kafka_ops.engine import crc as engine_crc
from kafka_ops.engine.builder import NewRecord, build_batch
from kafka_ops.engine.indexes import (
    DEFAULT_MAX_INDEX_SIZE,
    OFFSET_ENTRY,
    encode_offset_entry,
    preallocated_size,
    read_offset_index,
)
from kafka_ops.engine.records import BatchScanner, LogBuffer
from kafka_ops.engine.verify import LogMap, verify_offset_index

MIB = 1024 * 1024
BASE_TS = 1_700_000_000_000
# at batch start + 8: length int32, (partition leader epoch, magic) skipped, stored CRC uint32
_LEN_CRC = struct.Struct(">i5xI")
_BASE_OFFSET = struct.Struct(">q")

GOAL_VS_BASELINE = 0.5  # ours >= 0.5x the bare read+crc32c loop's throughput
GOAL_VS_KAFKA_PYTHON = 20.0  # ours >= 20x kafka-python's throughput


# --------------------------------------------------------------------------------------------- generation


def _tile(batches: list[bytes], target_bytes: int) -> tuple[bytearray, int]:
    """Concatenate copies of ``batches`` up to ``target_bytes`` with consecutive base offsets.

    The base offset (bytes 0-8) lies outside the CRC-32C range [21, end), so every copy keeps a valid CRC.
    """
    out = bytearray()
    n = 0
    next_offset = 0
    i = 0
    pack_into = _BASE_OFFSET.pack_into
    while len(out) < target_bytes:
        b = batches[i % len(batches)]
        pos = len(out)
        out += b
        pack_into(out, pos, next_offset)
        (last_delta,) = struct.unpack_from(">i", b, 23)
        next_offset += last_delta + 1
        n += 1
        i += 1
    return out, n


def typical_batches(rnd: random.Random, distinct: int) -> list[bytes]:
    """An idempotent producer's batches: ~100 records, 16-byte keys, ~140-byte values (~16 KiB a batch)."""
    out = []
    ts = BASE_TS
    for i in range(distinct):
        recs = []
        for _ in range(100):
            ts += rnd.randrange(3)
            value = rnd.randbytes(rnd.randrange(110, 171))
            recs.append(NewRecord(b"user-%011d" % rnd.randrange(10**9), value, ts))
        out.append(build_batch(0, recs, producer_id=4242, producer_epoch=0, base_sequence=i * 100))
    return out


def small_batches(rnd: random.Random, distinct: int) -> list[bytes]:
    """__consumer_offsets-like commits: one record of ~100 bytes a batch (~165 bytes on disk)."""
    out = []
    for i in range(distinct):
        key = b"\x00\x01" + b"group-%04d/orders-%03d/%03d" % (rnd.randrange(500), rnd.randrange(50), i % 64)
        key += bytes(48 - len(key))
        value = b"\x00\x03" + rnd.randbytes(40)
        out.append(build_batch(0, [NewRecord(key, value, BASE_TS + i)]))
    return out


def write_log(path: str, batches: list[bytes], target_bytes: int) -> tuple[int, int]:
    data, n = _tile(batches, target_bytes)
    with open(path, "wb") as f:
        f.write(data)
    return len(data), n


def write_full_index_case(directory: str, slots: int) -> tuple[str, str, int]:
    """A log of ``slots`` minimal batches and an index whose every slot points at one of its batches."""
    os.makedirs(directory, exist_ok=True)
    batch = build_batch(0, [NewRecord(None, b"", BASE_TS)])
    log_path = os.path.join(directory, "00000000000000000000.log")
    data, n = _tile([batch], slots * len(batch))
    assert n == slots
    with open(log_path, "wb") as f:
        f.write(data)
    # entry i: (offset i, position i * size): the batch at that position holds exactly that offset
    index = bytearray(slots * OFFSET_ENTRY)
    pack_into = struct.Struct(">ii").pack_into
    size = len(batch)
    for i in range(slots):
        pack_into(index, i * OFFSET_ENTRY, i, i * size)
    idx_path = os.path.join(directory, "00000000000000000000.index")
    with open(idx_path, "wb") as f:
        f.write(index)
    return log_path, idx_path, len(data)


def write_prealloc_index_case(directory: str, max_index_bytes: int) -> tuple[str, str, int]:
    """A killed broker's active segment: a small log, a few index entries, the rest of the index zeros."""
    os.makedirs(directory, exist_ok=True)
    rnd = random.Random(7)
    log_path = os.path.join(directory, "00000000000000000000.log")
    batches = small_batches(rnd, 400)
    data, _ = _tile(batches, 64 * 1024)
    with open(log_path, "wb") as f:
        f.write(data)
    # LogSegment.append: an entry (last offset, position) each time > 4096 bytes were appended since the last
    entries = bytearray()
    buf = LogBuffer(bytes(data))
    since = 0
    for b in BatchScanner(buf):
        if since > 4096:
            entries += encode_offset_entry(0, b.last_offset, b.position)
            since = 0
        since += b.size
    idx_path = os.path.join(directory, "00000000000000000000.index")
    with open(idx_path, "wb") as f:
        f.write(entries)
        f.truncate(preallocated_size(OFFSET_ENTRY, max_index_bytes))  # RandomAccessFile.setLength (sparse)
    return log_path, idx_path, len(entries) // OFFSET_ENTRY


# --------------------------------------------------------------------------------------------- readers
# Each returns the number of batches (or entries) it went through, so results can be cross-checked.


def read_engine(path: str) -> int:
    with LogBuffer.open(path) as buf:
        scanner = BatchScanner(buf, verify_crc=True)
        n = 0
        for _b in scanner:
            n += 1
        if scanner.tail is not None:
            raise AssertionError(f"engine stopped early: {scanner.tail}")
        return n


def read_baseline(path: str) -> int:
    """The bare loop: read the file, then per batch one unpack (length, stored CRC) and one crc32c call."""
    with open(path, "rb") as f:
        data = f.read()
    view = memoryview(data)
    unpack = _LEN_CRC.unpack_from
    crc32c = crc32c_wheel.crc32c
    end = len(data)
    pos = 0
    n = 0
    bad = 0
    while pos < end:
        length, stored = unpack(data, pos + 8)
        batch_end = pos + 12 + length
        if crc32c(view[pos + 21 : batch_end]) != stored:
            bad += 1
        pos = batch_end
        n += 1
    if bad:
        raise AssertionError(f"baseline: {bad} CRC mismatches")
    return n


def read_baseline_mmap(path: str) -> int:
    """The same bare loop over a read-only mapping instead of a copy (no read() memcpy: isolates the loop)."""
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
        view = memoryview(data)
        try:
            unpack = _LEN_CRC.unpack_from
            crc32c = crc32c_wheel.crc32c
            end = len(data)
            pos = 0
            n = 0
            bad = 0
            while pos < end:
                length, stored = unpack(data, pos + 8)
                batch_end = pos + 12 + length
                if crc32c(view[pos + 21 : batch_end]) != stored:
                    bad += 1
                pos = batch_end
                n += 1
        finally:
            view.release()
    if bad:
        raise AssertionError(f"baseline: {bad} CRC mismatches")
    return n


def read_ceiling_mmap(path: str) -> int:
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
        crc32c_wheel.crc32c(data)
    return 0


def read_ceiling(path: str) -> int:
    """One crc32c call over the whole file: the speed of the CRC itself, no per-batch work."""
    with open(path, "rb") as f:
        data = f.read()
    crc32c_wheel.crc32c(data)
    return 0


def read_kafka_python(path: str) -> int:
    from kafka.record.memory_records import MemoryRecords

    with open(path, "rb") as f:
        data = f.read()
    records = MemoryRecords(data)
    n = 0
    while True:
        batch = records.next_batch()
        if batch is None:
            break
        if not batch.validate_crc():
            raise AssertionError(f"kafka-python: CRC mismatch in batch {n}")
        n += 1
    return n


def read_bare(path: str) -> int:
    with open(path, "rb") as f:
        return len(f.read())


# --------------------------------------------------------------------------------------------- timing


@dataclass
class Timing:
    name: str
    best: float = float("inf")
    runs: list[float] = field(default_factory=list)


def time_round_robin(
    funcs: dict[str, Callable[[], object]],
    repeat: int,
    warmup: int = 1,
    limits: dict[str, int] | None = None,
) -> dict[str, Timing]:
    """Run every function ``warmup`` times untimed, then ``repeat`` rounds in turn; keep each one's best.

    ``limits`` caps the timed runs of slow functions (they take part in the first rounds only), so that
    every reader is measured in the same stretch of time and shares its noise.
    """
    limits = limits or {}
    for _ in range(warmup):
        for fn in funcs.values():
            fn()
    timings = {name: Timing(name) for name in funcs}
    for round_no in range(repeat):
        for name, fn in funcs.items():
            if round_no >= limits.get(name, repeat):
                continue
            t0 = time.perf_counter()
            fn()
            dt = time.perf_counter() - t0
            timings[name].runs.append(dt)
            timings[name].best = min(timings[name].best, dt)
    return timings


def warm(path: str) -> None:
    with open(path, "rb") as f:
        while f.read(16 * MIB):
            pass


# --------------------------------------------------------------------------------------------- report


def fmt_rate(v: float) -> str:
    if v >= 1e6:
        return f"{v / 1e6:8.2f} M"
    if v >= 1e3:
        return f"{v / 1e3:8.1f} k"
    return f"{v:8.0f}  "


def run_log_case(label: str, path: str, size: int, n_batches: int, repeat: int, kp_repeat: int) -> dict:
    warm(path)
    counts = {
        "engine": read_engine(path),
        "baseline": read_baseline(path),
        "baseline mmap": read_baseline_mmap(path),
        "kafka-python": read_kafka_python(path),
    }
    for name, c in counts.items():
        if c != n_batches:
            raise AssertionError(f"{label}: {name} saw {c} batches, expected {n_batches}")
    read_ceiling(path)
    read_ceiling_mmap(path)
    funcs = {
        "engine": lambda: read_engine(path),
        "baseline": lambda: read_baseline(path),
        "baseline mmap": lambda: read_baseline_mmap(path),
        "ceiling": lambda: read_ceiling(path),
        "ceiling mmap": lambda: read_ceiling_mmap(path),
        "kafka-python": lambda: read_kafka_python(path),
    }
    # every reader ran once above (count check, ceilings): that was the warm-up
    timings = time_round_robin(funcs, repeat, warmup=0, limits={"kafka-python": kp_repeat})
    rows = {}
    for name, t in timings.items():
        rows[name] = {
            "best_s": t.best,
            "runs_s": t.runs,
            "mb_per_s": size / t.best / 1e6,
            "batches_per_s": None if name.startswith("ceiling") else n_batches / t.best,
        }
    eng = timings["engine"].best
    ratios = {
        "engine_vs_baseline": timings["baseline"].best / eng,
        "engine_vs_baseline_mmap": timings["baseline mmap"].best / eng,
        "engine_vs_ceiling": timings["ceiling"].best / eng,
        "engine_vs_ceiling_mmap": timings["ceiling mmap"].best / eng,
        "engine_vs_kafka_python": timings["kafka-python"].best / eng,
        "baseline_vs_kafka_python": timings["kafka-python"].best / timings["baseline"].best,
    }
    return {
        "label": label,
        "bytes": size,
        "batches": n_batches,
        "avg_batch_bytes": size / n_batches,
        "readers": rows,
        "ratios": ratios,
        "goals": {
            "engine_vs_baseline>=0.5": ratios["engine_vs_baseline"] >= GOAL_VS_BASELINE,
            "engine_vs_baseline_mmap>=0.5": ratios["engine_vs_baseline_mmap"] >= GOAL_VS_BASELINE,
            "engine_vs_kafka_python>=20": ratios["engine_vs_kafka_python"] >= GOAL_VS_KAFKA_PYTHON,
        },
    }


def run_index_case(label: str, log_path: str, idx_path: str, active: bool, repeat: int) -> dict:
    warm(log_path)
    warm(idx_path)
    t0 = time.perf_counter()
    with LogBuffer.open(log_path) as buf:
        log = LogMap.build(buf)
    logmap_s = time.perf_counter() - t0
    idx = read_offset_index(idx_path)
    issues = verify_offset_index(idx, log, active)
    summary = {
        "slots": idx.entry_count,
        "real_entries": len(idx.real_entries),
        "zero_tail": idx.zero_tail,
        "log_batches": len(log.batches),
        "issues": [i.kind for i in issues],
    }

    def engine() -> int:
        ix = read_offset_index(idx_path)
        return len(verify_offset_index(ix, log, active))

    def engine_read_only() -> int:
        return len(read_offset_index(idx_path).entries)

    timings = time_round_robin(
        {
            "bare read": lambda: read_bare(idx_path),
            "read_offset_index": engine_read_only,
            "read+verify": engine,
        },
        repeat,
    )
    size = os.path.getsize(idx_path)
    rows = {
        name: {"best_s": t.best, "runs_s": t.runs, "mb_per_s": size / t.best / 1e6}
        for name, t in timings.items()
    }
    return {
        "label": label,
        "bytes": size,
        "summary": summary,
        "logmap_build_s": logmap_s,
        "readers": rows,
        "ratios": {
            "verify_vs_bare_read": timings["read+verify"].best / timings["bare read"].best,
            "read_index_vs_bare_read": timings["read_offset_index"].best / timings["bare read"].best,
        },
    }


def print_log_table(cases: list[dict]) -> None:
    print()
    print("1-2. .log verification (best of runs; every reader starts from the path)")
    hdr = (
        f"{'file':<34} {'reader':<14} {'best ms':>9} {'MB/s':>9} {'batches/s':>11} {'engine speed / its':>20}"
    )
    print(hdr)
    print("-" * len(hdr))
    for c in cases:
        eng = c["readers"]["engine"]["best_s"]
        first = True
        for name in ("engine", "baseline", "baseline mmap", "ceiling", "ceiling mmap", "kafka-python"):
            r = c["readers"][name]
            bps = fmt_rate(r["batches_per_s"]) if r["batches_per_s"] else "-".rjust(10)
            rel = "" if name == "engine" else f"{r['best_s'] / eng:.3f}"
            label = c["label"] if first else ""
            print(f"{label:<34} {name:<14} {r['best_s'] * 1e3:9.1f} {r['mb_per_s']:9.0f} {bps:>11} {rel:>20}")
            first = False
        g = c["ratios"]
        verdict = {k: "met" if v else "MISSED" for k, v in c["goals"].items()}

        print(
            f"  throughput ratios: engine/baseline {g['engine_vs_baseline']:.3f} "
            f"(goal >= {GOAL_VS_BASELINE}: {verdict['engine_vs_baseline>=0.5']}), "
            f"engine/baseline-mmap {g['engine_vs_baseline_mmap']:.3f} "
            f"({verdict['engine_vs_baseline_mmap>=0.5']}), engine/ceiling {g['engine_vs_ceiling']:.3f}, "
            f"engine/ceiling-mmap {g['engine_vs_ceiling_mmap']:.3f}"
        )
        print(
            f"  engine vs kafka-python {g['engine_vs_kafka_python']:.2f}x "
            f"(goal >= {GOAL_VS_KAFKA_PYTHON:.0f}x: {verdict['engine_vs_kafka_python>=20']}); "
            f"the bare baseline itself is {g['baseline_vs_kafka_python']:.2f}x kafka-python"
        )
        print()


def print_index_table(cases: list[dict]) -> None:
    print("3. .index verification (10 MiB index; LogMap of the log built once, outside the timing)")
    hdr = f"{'index':<44} {'step':<18} {'best ms':>9} {'MB/s':>9} {'time / bare':>12}"
    print(hdr)
    print("-" * len(hdr))
    for c in cases:
        bare = c["readers"]["bare read"]["best_s"]
        first = True
        for name in ("bare read", "read_offset_index", "read+verify"):
            r = c["readers"][name]
            label = c["label"] if first else ""
            print(
                f"{label:<44} {name:<18} {r['best_s'] * 1e3:9.1f} {r['mb_per_s']:9.0f} {r['best_s'] / bare:11.1f}x"
            )
            first = False
        s = c["summary"]
        print(
            f"{'':<44} slots {s['slots']}, real entries {s['real_entries']}, zero tail {s['zero_tail']}, "
            f"issues {s['issues'] or 'none'}; LogMap.build ({s['log_batches']} batches) "
            f"{c['logmap_build_s'] * 1e3:.0f} ms"
        )
        print()


# --------------------------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--typical-mib", type=int, default=64, help="size of the ~16 KiB-batch .log (default 64)")
    ap.add_argument("--small-mib", type=int, default=32, help="size of the 1-record-batch .log (default 32)")
    ap.add_argument("--repeat", type=int, default=7, help="timed runs per reader (best kept; default 7)")
    ap.add_argument("--kp-repeat", type=int, default=3, help="timed runs of kafka-python (default 3)")
    ap.add_argument("--index-slots", type=int, default=DEFAULT_MAX_INDEX_SIZE // OFFSET_ENTRY)
    ap.add_argument("--quick", action="store_true", help="small files and 2 runs: a smoke test, not a result")
    ap.add_argument("--dir", help="work directory (default: a temporary one, removed afterwards)")
    ap.add_argument("--json", metavar="PATH", help="also write the results as JSON to PATH")
    args = ap.parse_args(argv)
    if args.quick:
        args.typical_mib, args.small_mib, args.repeat, args.kp_repeat = 8, 4, 2, 1
        args.index_slots = 65536

    if not engine_crc.ACCELERATED:
        print(
            "warning: kafka_ops uses the pure-Python CRC-32C (crc32c wheel not importable)", file=sys.stderr
        )
    work = args.dir or tempfile.mkdtemp(prefix="kafka-ops-bench-")
    os.makedirs(work, exist_ok=True)
    started = time.perf_counter()
    try:
        rnd = random.Random(20240601)
        t0 = time.perf_counter()
        typical_path = os.path.join(work, "typical", "00000000000000000000.log")
        small_path = os.path.join(work, "small", "00000000000000000000.log")
        os.makedirs(os.path.dirname(typical_path), exist_ok=True)
        os.makedirs(os.path.dirname(small_path), exist_ok=True)
        t_size, t_n = write_log(typical_path, typical_batches(rnd, 128), args.typical_mib * MIB)
        s_size, s_n = write_log(small_path, small_batches(rnd, 4096), args.small_mib * MIB)
        full_log, full_idx, full_size = write_full_index_case(os.path.join(work, "full"), args.index_slots)
        pre_log, pre_idx, pre_real = write_prealloc_index_case(
            os.path.join(work, "prealloc"), args.index_slots * OFFSET_ENTRY
        )
        gen_s = time.perf_counter() - t0

        env = {
            "python": sys.version.split()[0],
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "crc32c_wheel": getattr(crc32c_wheel, "__version__", "?"),
            "crc32c_hardware": bool(getattr(crc32c_wheel, "hardware_based", False)),
            "engine_crc_accelerated": engine_crc.ACCELERATED,
            "kafka_python": __import__("kafka").__version__,
            "repeat": args.repeat,
            "kp_repeat": args.kp_repeat,
            "gc": gc.isenabled(),
        }
        print(
            f"kafka-ops engine benchmark: Python {env['python']}, {env['cpus']} CPUs, crc32c {env['crc32c_wheel']} "
            f"(hardware {env['crc32c_hardware']}), kafka-python {env['kafka_python']}; best of {args.repeat} "
            f"(kafka-python: {args.kp_repeat}); files generated in {gen_s:.1f} s under {work}"
        )

        log_cases = [
            run_log_case(
                f"typical {t_size / MIB:.0f} MiB, {t_size / t_n / 1024:.1f} KiB/batch",
                typical_path, t_size, t_n, args.repeat, args.kp_repeat,
            ),
            run_log_case(
                f"small {s_size / MIB:.0f} MiB, {s_size / s_n:.0f} B/batch",
                small_path, s_size, s_n, args.repeat, args.kp_repeat,
            ),
        ]  # fmt: skip
        print_log_table(log_cases)

        index_cases = [
            run_index_case(
                f"(a) preallocated, {pre_real} real entries + zeros", pre_log, pre_idx, True, args.repeat
            ),
            run_index_case(
                f"(b) full, {args.index_slots} entries -> {full_size / MIB:.0f} MiB log",
                full_log, full_idx, False, args.repeat,
            ),
        ]  # fmt: skip
        print_index_table(index_cases)
        total = time.perf_counter() - started
        print(f"total {total:.1f} s")

        if args.json:
            with open(args.json, "w") as f:
                json.dump({"env": env, "log": log_cases, "index": index_cases, "total_s": total}, f, indent=2)
            print(f"results written to {args.json}")
    finally:
        if not args.dir:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
