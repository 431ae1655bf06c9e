"""The Spark reader (``kafka_ops.spark``) against the engine's plain iteration, in the same process.

Run by hand (not collected by pytest)::

    python benchmarks/bench_spark_reader.py               # ~100k records, about 1-3 min on 2 cores
    python benchmarks/bench_spark_reader.py --records 20000 --repeat 2   # a smoke run

A simulated topic (``simulate_host``: 4 partitions, 50-record batches, ~200-byte JSON values) is read by:

1. **engine** (the baseline): ``BatchScanner`` + ``iter_records`` over every segment, counting records;
2. **arrow**: ``arrow_batches`` (the reader's decoding: the engine plus the aborted-transaction view and the
   Arrow columns), in this process, no Spark;
3. **spark**: ``read_segments(...).agg(count, sum(length(value)))`` in Spark local mode (``local[2]``): planning,
   two Python worker tasks, Arrow to the JVM, the aggregate.

It prints records/s for each and the ratios to the engine, plus the session start time (JVM start, first
session) and the first action's time (Python workers start). Best of ``--repeat`` runs.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections.abc import Callable

from kafka_ops.engine.records import BatchScanner, LogBuffer, iter_records
from kafka_ops.simulator.host import HostSpec, TopicSpec, simulate_host


def best(fn: Callable[[], int], repeat: int) -> tuple[float, int]:
    times, n = [], 0
    for _ in range(repeat):
        t0 = time.perf_counter()
        n = fn()
        times.append(time.perf_counter() - t0)
    return min(times), n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--records", type=int, default=100_000, help="records in the topic (4 partitions)")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        per = args.records // 4
        simulate_host(
            tmp,
            HostSpec(
                segment_bytes=8 * 1024 * 1024,
                topics=[TopicSpec("events", partitions=4, records_per_partition=per, batch_records=50)],
            ),
        )
        from kafka_ops.spark.partitions import discover
        from kafka_ops.spark.segments import arrow_batches

        parts = discover([os.path.join(tmp, "data")], ["events"])

        def engine() -> int:
            n = 0
            for part in parts:
                for seg in part.segments:
                    with LogBuffer.open(seg.log) as buf:
                        for b in BatchScanner(buf):
                            for _r in iter_records(buf, b):
                                n += 1
            return n

        def arrow() -> int:
            return sum(b.num_rows for part in parts for b in arrow_batches(part))

        t_engine, n = best(engine, args.repeat)
        t_arrow, n2 = best(arrow, args.repeat)
        assert n == n2 == per * 4, (n, n2)

        from pyspark.sql import functions as F

        from kafka_ops.spark import read_segments
        from kafka_ops.spark.session import timed_session

        spark, t_session = timed_session(master="local[2]")

        def spark_read() -> int:
            df = read_segments(spark, os.path.join(tmp, "data"), topics=["events"])
            row = df.agg(F.count("*").alias("n"), F.sum(F.length("value")).alias("b")).first()
            return int(row.n)

        t0 = time.perf_counter()
        first_n = spark_read()
        t_first = time.perf_counter() - t0
        t_spark, n3 = best(spark_read, args.repeat)
        assert first_n == n3 == n
        spark.stop()

    def rate(t: float) -> str:
        return f"{n / t:>10,.0f} records/s"

    print(f"{n} records, {len(parts)} partitions, best of {args.repeat}")
    print(f"engine iteration   {t_engine:7.2f} s  {rate(t_engine)}  (baseline)")
    print(
        f"arrow_batches      {t_arrow:7.2f} s  {rate(t_arrow)}  {t_engine / t_arrow:5.2f}x the engine's rate"
    )
    print(
        f"spark local[2]     {t_spark:7.2f} s  {rate(t_spark)}  {t_engine / t_spark:5.2f}x the engine's rate"
    )
    print(f"session start {t_session:.1f} s, first action {t_first:.1f} s (Python workers start)")


if __name__ == "__main__":
    main()
