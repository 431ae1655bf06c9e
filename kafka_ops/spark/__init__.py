"""Kafka segment files as a Spark data source (``pip install 'kafka-ops[spark]'``).

>>> from kafka_ops.spark import spark_session, read_segments
>>> spark = spark_session()
>>> df = read_segments(spark, "/var/lib/kafka/data", isolation="read_committed", topics=["orders"])

or ``spark.read.format("kafka-segments").option("isolation", "read_committed").load(PATH)`` once
``spark_session()`` (or ``register(spark)``) ran. Decoding is the engine's (``kafka_ops.engine``).
"""

from __future__ import annotations

from kafka_ops.spark.partitions import ALL, ISOLATIONS, READ_COMMITTED, READ_UNCOMMITTED
from kafka_ops.spark.segments import (
    FORMAT,
    SCHEMA_DDL,
    KafkaSegmentsDataSource,
    arrow_batches,
    read_segments,
    register,
    schema,
)
from kafka_ops.spark.session import spark_session

__all__ = [
    "ALL",
    "FORMAT",
    "ISOLATIONS",
    "READ_COMMITTED",
    "READ_UNCOMMITTED",
    "SCHEMA_DDL",
    "KafkaSegmentsDataSource",
    "arrow_batches",
    "read_segments",
    "register",
    "schema",
    "spark_session",
]
