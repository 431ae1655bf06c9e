"""The one SparkSession builder of kafka-ops: ``qos``, the Spark reader and the ``fleet`` job.

Local mode needs no SPARK_HOME, only Java 17; under ``spark-submit`` the submitted master and settings are kept.
"""

from __future__ import annotations

import os
import re
import sys
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

DEFAULT_MASTER = "local[*]"  # when neither --master nor spark-submit says otherwise
LOOPBACK = "127.0.0.1"
LOG4J = os.path.join(os.path.dirname(__file__), "log4j2.properties")  # Spark's own logging: errors only
_LOOPBACK_HOSTS = {"localhost", "::1", "[::1]"}


def under_spark_submit() -> bool:
    """Whether spark-submit (or pyspark's shell) launched this interpreter: it hands over its JVM gateway."""
    return "PYSPARK_GATEWAY_PORT" in os.environ


def resolve_master(master: str | None) -> str | None:
    """``--master`` when given; else None under spark-submit (its master stands); else :data:`DEFAULT_MASTER`."""
    if master:
        return master
    return None if under_spark_submit() else DEFAULT_MASTER


def is_loopback_master(master: str | None) -> bool:
    """A local master (``local``, ``local[n]``, ``local-cluster[...]``) or a standalone master whose every host
    is this machine's loopback (``spark://127.0.0.1:7077``): its executors reach the driver on 127.0.0.1. A
    remote ``spark://`` master, YARN or Kubernetes must reach the driver at a routable address."""
    if not master:
        return False
    if master.startswith("local"):
        return True
    if not master.startswith("spark://"):
        return False
    hosts = []
    for hostport in master[len("spark://") :].split(","):  # standalone HA: spark://h1:7077,h2:7077
        m = re.fullmatch(r"(\[[^\]]*\]|[^:]*)(?::\d+)?", hostport.strip())
        hosts.append(m.group(1) if m else hostport)
    return all(h in _LOOPBACK_HOSTS or h.startswith("127.") for h in hosts)


def spark_session(
    master: str | None = None,
    app_name: str = "kafka-ops",
    shuffle_partitions: int = 4,
    driver_memory: str = "1g",
    conf: dict[str, str] | None = None,
    executor_python: str | None = None,
) -> SparkSession:
    """Get (or build) the session, on the master :func:`resolve_master` gives. An active session is reused when
    no master is asked for (a notebook's, a test's, spark-submit's); one on another master than the ``master``
    asked for is stopped first.

    UI and console progress off, few shuffle partitions (each task costs ~50 ms of Python worker start), UTC
    session time zone (record timestamps are UTC epoch milliseconds), Spark's logging kept to errors, and
    ``spark.read.format("kafka-segments")`` registered. For a local or loopback master the driver binds to and
    advertises 127.0.0.1 (a laptop's hostname may not resolve); for any other master it is left to Spark, since
    executors elsewhere must reach it.

    The executors' Python: ``executor_python`` when given (``spark.pyspark.python``, e.g. ``./env/bin/python``
    of a packed environment sent with ``spark.archives``); for a local master this interpreter (the workers run
    on this machine); otherwise left to the cluster (``PYSPARK_PYTHON``, ``spark.pyspark.python`` or the
    workers' ``python3``): this interpreter's path usually does not exist on a worker. ``conf`` (``--conf
    KEY=VALUE``) is applied last: it overrides any of the settings above.
    """
    from pyspark.sql import SparkSession

    from kafka_ops.spark.segments import register

    resolved = resolve_master(master)
    active = SparkSession.getActiveSession()
    if active is not None and master and active.sparkContext.master != resolved:
        active.stop()
    local = resolved is not None and resolved.startswith("local")
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    builder = SparkSession.builder.appName(app_name)
    if resolved is not None:
        builder = builder.master(resolved)
    if is_loopback_master(resolved):
        os.environ.setdefault("SPARK_LOCAL_IP", LOOPBACK)
        builder = builder.config("spark.driver.host", LOOPBACK).config("spark.driver.bindAddress", LOOPBACK)
    builder = (
        builder.config("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile=file:{LOG4J}")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", str(shuffle_partitions))
        .config("spark.driver.memory", driver_memory)
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.adaptive.enabled", "true")
        .config("spark.python.worker.reuse", "true")
    )
    for k, v in (conf or {}).items():
        builder = builder.config(k, v)
    python = (
        executor_python
        or (conf or {}).get("spark.pyspark.python")
        or os.environ.get("PYSPARK_PYTHON")
        or (sys.executable if local else None)
    )
    if python:
        builder = builder.config("spark.pyspark.python", python)
    # pyspark takes the executors' Python from PYSPARK_PYTHON when the context starts (spark.pyspark.python is
    # only read by spark-submit): set for that moment, then put back
    saved = os.environ.get("PYSPARK_PYTHON")
    if python:
        os.environ["PYSPARK_PYTHON"] = python
    try:
        spark = builder.getOrCreate()
    finally:
        if saved is None:
            os.environ.pop("PYSPARK_PYTHON", None)
        else:
            os.environ["PYSPARK_PYTHON"] = saved
    spark.sparkContext.setLogLevel("ERROR")
    register(spark)
    return spark


def timed_session(**kwargs: object) -> tuple[SparkSession, float]:
    """The session and how long getting it took, in seconds (for benchmarks and ``--verbose``)."""
    t0 = time.perf_counter()
    spark = spark_session(**kwargs)  # type: ignore[arg-type]
    return spark, time.perf_counter() - t0
