"""Fleet results as Parquet (``facts/``, ``findings/``, ``hosts/``, each partitioned by ``run_date``, with
``run_id``, ``run_at`` (a timestamp: when the run wrote) and ``audit_now_ms`` columns), and the diff of two runs:
what changed since the last deploy. ``run_date`` is the date of the audit's ``--now`` (the clock's when not given).

The results location is a local path or any URI Spark writes (``file://``, ``s3a://``, ``hdfs://``, ``abfss://``):
a URI is handed to Spark as it is, never through ``os.path``."""

from __future__ import annotations

import contextlib
import datetime as dt
import os
from collections.abc import Iterator
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from kafka_ops.fleet.localdiff import FINDING_KEY, PARTITION_KEY, is_uri, local_or_uri, pick

HOST_SCHEMA_DDL = "host STRING, address STRING, status STRING, reason STRING, node_id INT, elapsed_s DOUBLE"
__all__ = [
    "FINDING_KEY",
    "PARTITION_KEY",
    "ResultsError",
    "diff",
    "is_uri",
    "local_or_uri",
    "runs",
    "write_run",
]


def table(out: str, name: str) -> str:
    return f"{out.rstrip('/')}/{name}" if is_uri(out) else os.path.join(out, name)


def write_run(
    spark: SparkSession, out: str, run_id: str, now_ms: int, facts: DataFrame, findings: DataFrame,
    host_rows: list[dict[str, Any]],
) -> None:  # fmt: skip
    run_at = dt.datetime.now(dt.UTC)
    run_date = dt.datetime.fromtimestamp(now_ms / 1000, tz=dt.UTC).date().isoformat()  # the audit's day
    hosts = spark.createDataFrame(
        [
            (h["host"], h["address"], h["status"], h["reason"], h["node_id"], float(h["elapsed_s"]))
            for h in host_rows
        ],
        HOST_SCHEMA_DDL,
    )
    errors: list[BaseException] = []

    def write(name: str, df: DataFrame) -> None:
        try:
            (
                df.withColumn("run_id", F.lit(run_id))
                .withColumn("run_at", F.lit(run_at).cast("timestamp"))
                .withColumn("audit_now_ms", F.lit(now_ms))
                .withColumn("run_date", F.lit(run_date))
                .coalesce(1)
                .write.mode("append")
                .partitionBy("run_date")
                .parquet(table(out, name))
            )
        except BaseException as exc:  # re-raised by the caller's thread
            errors.append(exc)

    from pyspark import InheritableThread

    # the three writes are three Spark jobs of a few seconds each, mostly fixed cost: run them at once
    # (InheritableThread: they keep the run's job group, so the run's jobs are counted)
    threads = [
        InheritableThread(write, args=(name, df))
        for name, df in (("facts", facts), ("findings", findings), ("hosts", hosts))
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


def _anti(left: DataFrame, right: DataFrame, key: list[str]) -> DataFrame:
    """Rows of ``left`` whose key is not in ``right``; null-safe (a log-dir finding has no topic or segment)."""
    r = right.select(*[F.col(k).alias(f"_r_{k}") for k in key])
    cond = [left[k].eqNullSafe(r[f"_r_{k}"]) for k in key]
    return left.join(r, cond, "left_anti")


class ResultsError(ValueError):
    pass


# the Hadoop file system class of each scheme a user may name, and where it comes from
_CONNECTORS = {
    "s3a": "Hadoop's S3 connector: --conf spark.jars.packages=org.apache.hadoop:hadoop-aws:<the Hadoop version of "
    'your pyspark> (and the spark.hadoop.fs.s3a.* settings; docs/fleet.md, "Results on S3")',
    "abfss": "Hadoop's Azure connector: --conf spark.jars.packages=org.apache.hadoop:hadoop-azure:<the Hadoop "
    "version of your pyspark>",
    "gs": "Google's GCS connector: --conf spark.jars.packages=com.google.cloud.bigdataoss:gcs-connector:<version>",
}


def check_file_system(spark: SparkSession, out: str) -> None:
    """Refuse a results URI whose scheme has no Hadoop file system in this session, before the audit runs (else
    the audit's work is lost at the first write): one line naming the connector to add."""
    if not is_uri(out):
        return
    scheme = out.split("://", 1)[0].lower()
    sc = spark.sparkContext
    try:
        sc._jvm.org.apache.hadoop.fs.FileSystem.getFileSystemClass(scheme, sc._jsc.hadoopConfiguration())  # type: ignore[union-attr]
    except Exception as exc:
        if "UnsupportedFileSystemException" not in str(exc) and "ClassNotFoundException" not in str(exc):
            raise
        hint = _CONNECTORS.get(
            scheme, "a Hadoop connector for it on the classpath (--conf spark.jars.packages=...)"
        )
        raise ResultsError(
            f"--results {out}: this Spark has no file system for {scheme}://: add {hint}"
        ) from None


def runs(spark: SparkSession, out: str) -> list[str]:
    """Run ids in the results location, oldest first."""
    path = table(out, "hosts")
    if not is_uri(out) and not os.path.isdir(path):
        raise ResultsError(f"{out}: no fleet results here (expected {path}/run_date=.../*.parquet)")
    try:
        df = spark.read.parquet(path)
    except Exception as exc:  # AnalysisException [PATH_NOT_FOUND] on a URI with nothing there
        if "PATH_NOT_FOUND" in str(exc) or "does not exist" in str(exc):
            raise ResultsError(
                f"{out}: no fleet results here (expected {path}/run_date=.../*.parquet)"
            ) from None
        raise
    try:
        with _quiet(spark):  # a failure here is expected of mixed results: not Spark's stack trace on stderr
            rows = df.groupBy("run_id").agg(F.min("run_at").alias("at")).orderBy("at", "run_id").collect()
    except Exception as exc:  # files whose run_at differs in type from the file Spark took the schema from
        if "run_at" not in str(exc):
            raise
        rows = _runs_by_file(spark, df.inputFiles())
    return [r.run_id for r in rows]


@contextlib.contextmanager
def _quiet(spark: SparkSession) -> Iterator[None]:
    """Spark's logging off for the block (the driver's, and a local master's executors'), then as it was."""
    sc = spark.sparkContext
    try:
        level = str(sc._jvm.org.apache.logging.log4j.LogManager.getRootLogger().getLevel().toString())  # type: ignore[union-attr]
    except Exception:  # no log4j 2 to ask: leave the logging alone
        yield
        return
    sc.setLogLevel("OFF")
    try:
        yield
    finally:
        sc.setLogLevel(level)


def _runs_by_file(spark: SparkSession, files: list[str]) -> list[Any]:
    """Run ids and when they wrote, each file read with its own schema: results written before ``run_at`` was
    a timestamp have it as an ISO 8601 string (``2026-11-22T06:56:19.123456+00:00``), parsed here."""
    from functools import reduce

    parts = [
        spark.read.parquet(f).select("run_id", F.col("run_at").cast("timestamp").alias("run_at"))
        for f in files
    ]
    df = reduce(lambda a, b: a.unionByName(b), parts)
    return df.groupBy("run_id").agg(F.min("run_at").alias("at")).orderBy("at", "run_id").collect()


def diff(spark: SparkSession, out: str, base: str | None = None, head: str | None = None) -> dict[str, Any]:
    """New and resolved findings, appeared and vanished partitions, and host status changes from base to head
    (default: the two latest runs)."""
    from kafka_ops.fleet.localdiff import RunNotFound

    check_file_system(spark, out)
    ids = runs(spark, out)
    try:
        base, head = pick(ids, out, base, head)
    except RunNotFound as exc:
        raise ResultsError(str(exc)) from None
    if base is None:
        raise ResultsError(f"{out}: only one run ({head}): nothing to compare it with yet")
    findings = spark.read.parquet(table(out, "findings"))
    facts = spark.read.parquet(table(out, "facts"))
    hosts = spark.read.parquet(table(out, "hosts"))

    def side(df: DataFrame, run: str, cols: list[str]) -> DataFrame:
        return df.where(F.col("run_id") == run).select(*cols).dropDuplicates(cols[: len(FINDING_KEY)])

    fcols = [*FINDING_KEY, "severity", "message"]
    b, h = side(findings, base, fcols), side(findings, head, fcols)
    new = _anti(h, b, FINDING_KEY)
    resolved = _anti(b, h, FINDING_KEY)
    pb = facts.where(F.col("run_id") == base).select(*PARTITION_KEY, "size_bytes")
    ph = facts.where(F.col("run_id") == head).select(*PARTITION_KEY, "size_bytes")
    hb = hosts.where(F.col("run_id") == base).select("host", F.col("status").alias("before"))
    hh = hosts.where(F.col("run_id") == head).select("host", F.col("status").alias("after"))
    status = hb.join(hh, "host", "full_outer").where(
        F.col("before").isNull() | F.col("after").isNull() | (F.col("before") != F.col("after"))
    )

    def rows(df: DataFrame, order: list[str]) -> list[dict[str, Any]]:
        return [r.asDict() for r in df.orderBy(*order).collect()]

    return {
        "base": base,
        "head": head,
        "new_findings": rows(new, ["host", "check", "path"]),
        "resolved_findings": rows(resolved, ["host", "check", "path"]),
        "partitions_added": rows(_anti(ph, pb, PARTITION_KEY), PARTITION_KEY),
        "partitions_removed": rows(_anti(pb, ph, PARTITION_KEY), PARTITION_KEY),
        "host_status_changes": rows(status, ["host"]),
    }
