"""A SparkSession with sane local defaults for kafka-ops (local mode needs no SPARK_HOME, only Java 17)."""

from __future__ import annotations

import os
import sys
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

DEFAULT_MASTER = "local[2]"


def spark_session(
    master: str = DEFAULT_MASTER,
    app_name: str = "kafka-ops",
    shuffle_partitions: int = 4,
    driver_memory: str = "1g",
    conf: dict[str, str] | None = None,
) -> SparkSession:
    """Get (or build) the session; an active session with another master is stopped first.

    UI off, few shuffle partitions (each task costs ~50 ms of Python worker start here), UTC session time zone
    (record timestamps are UTC epoch milliseconds), Python workers run this interpreter, the driver binds to the
    loopback address, and ``spark.read.format("kafka-segments")`` is registered.
    """
    from pyspark.sql import SparkSession

    from kafka_ops.spark.segments import register

    active = SparkSession.getActiveSession()
    if active is not None and active.sparkContext.master != master:
        active.stop()
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    builder = (
        SparkSession.builder.master(master)
        .appName(app_name)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", str(shuffle_partitions))
        .config("spark.default.parallelism", "2" if master.startswith("local") else "4")
        .config("spark.driver.memory", driver_memory)
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.adaptive.enabled", "true")
        .config("spark.python.worker.reuse", "true")
    )
    for k, v in (conf or {}).items():
        builder = builder.config(k, v)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    register(spark)
    return spark


def timed_session(**kwargs: object) -> tuple[SparkSession, float]:
    """The session and how long getting it took, in seconds (for benchmarks and ``--verbose``)."""
    t0 = time.perf_counter()
    spark = spark_session(**kwargs)  # type: ignore[arg-type]
    return spark, time.perf_counter() - t0
