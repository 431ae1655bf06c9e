"""Kafka segment files as a Spark data source (``pip install 'kafka-ops[spark]'``).

>>> from kafka_ops.spark import spark_session, read_segments
>>> spark = spark_session()
>>> df = read_segments(spark, "/var/lib/kafka/data", isolation="read_committed", topics=["orders"])

or ``spark.read.format("kafka-segments").option("isolation", "read_committed").load(PATH)`` once
``spark_session()`` (or ``register(spark)``) ran. Decoding is the engine's (``kafka_ops.engine``).

pyspark and pyarrow are imported on first use of a name that needs them, so that the stdlib-only
``kafka_ops.spark.partitions`` (the consumer view of a partition) works without them.
"""

from __future__ import annotations

import importlib
from typing import Any

from kafka_ops.spark.partitions import ALL, ISOLATIONS, READ_COMMITTED, READ_UNCOMMITTED

_LAZY = {
    "FORMAT": "segments",
    "SCHEMA_DDL": "segments",
    "KafkaSegmentsDataSource": "segments",
    "arrow_batches": "segments",
    "read_segments": "segments",
    "register": "segments",
    "schema": "segments",
    "spark_session": "session",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(f"kafka_ops.spark.{_LAZY[name]}"), name)
    raise AttributeError(f"module 'kafka_ops.spark' has no attribute {name!r}")


__all__ = ["ALL", "ISOLATIONS", "READ_COMMITTED", "READ_UNCOMMITTED", *_LAZY]
