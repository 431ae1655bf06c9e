"""The fleet view, computed in Spark from the rows the hosts streamed back: what no single host can see.

* Replicas: the same topic-partition found on several hosts is one partition's replicas.
* Replicas at risk: RET001 findings (time retention will delete recent data) joined with who leads the partition.
  On the **leader** the loss is cluster-wide: the leader deletes the segments and advances its log start offset,
  and each follower deletes the same offsets when a fetch response carries it
  (apache/kafka 1eb7644 ``ReplicaFetcherThread.processPartitionData`` ->
  ``log.maybeIncrementLogStartOffset(leaderLogStartOffset, LeaderOffsetIncremented)``). On a **follower** only
  that replica's copy goes (retention runs on every replica: ``LogManager.cleanupLogs`` takes all logs): the
  leader keeps serving the data and the follower does not fetch it again (it fetches from its own log end offset),
  so the partition has one copy less of those offsets, and loses them if that follower becomes leader. A replica
  whose leader is unknown is treated as possibly the leader.
* Per topic: replicas, bytes, partitions at risk and partitions that lose data cluster-wide.
* Per host: status (ok or the reason it was not audited), partitions, bytes, findings per severity.
"""

from __future__ import annotations

from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

CONSEQUENCE = {
    "leader": "data loss cluster-wide: the leader deletes these offsets and its followers follow its log start "
    "offset (ReplicaFetcherThread -> maybeIncrementLogStartOffset)",
    "follower": "this replica's copy is deleted; the leader keeps the data and the follower does not fetch it "
    "again: one copy less, lost if this replica becomes leader",
    "unknown": "leader unknown: treated as possibly the leader (data loss cluster-wide)",
}

LEADER_SCHEMA = T.StructType(
    [
        T.StructField("topic", T.StringType()),
        T.StructField("partition", T.IntegerType()),
        T.StructField("leader", T.IntegerType()),
    ]
)
HOST_SCHEMA = T.StructType(
    [
        T.StructField("host", T.StringType()),
        T.StructField("address", T.StringType()),
        T.StructField("status", T.StringType()),
        T.StructField("reason", T.StringType()),
        T.StructField("node_id", T.IntegerType()),
        T.StructField("elapsed_s", T.DoubleType()),
    ]
)


def _rows(df: DataFrame) -> list[dict[str, Any]]:
    return [r.asDict(recursive=True) for r in df.collect()]


def replicas_at_risk(
    facts: DataFrame, findings: DataFrame, leaders: DataFrame, hosts: DataFrame
) -> DataFrame:
    ret = (
        findings.where(F.col("check") == "RET001")
        .withColumn("bytes", F.get_json_object("details", "$.bytes").cast("long"))
        .withColumn("deleted_at_ms", F.get_json_object("details", "$.deleted_at_ms").cast("long"))
        .groupBy("host", "topic", "partition")
        .agg(
            F.count("*").alias("segments"),
            F.sum("bytes").alias("bytes"),
            F.min("deleted_at_ms").alias("first_deletion_ms"),
        )
    )
    replicas = facts.groupBy("topic", "partition").agg(F.countDistinct("host").alias("replicas_found"))
    role = (
        F.when(F.col("leader").isNull() | F.col("node_id").isNull(), "unknown")
        .when(F.col("leader") == F.col("node_id"), "leader")
        .otherwise("follower")
    )
    conseq = F.create_map([F.lit(x) for kv in CONSEQUENCE.items() for x in kv])
    return (
        ret.join(hosts.select("host", "node_id"), "host", "left")
        .join(leaders, ["topic", "partition"], "left")
        .join(replicas, ["topic", "partition"], "left")
        .withColumn("role", role)
        .withColumn("consequence", conseq[F.col("role")])
        .select(
            "topic",
            "partition",
            "host",
            "node_id",
            "leader",
            "role",
            "replicas_found",
            "segments",
            "bytes",
            "first_deletion_ms",
            "consequence",
        )
        .orderBy("topic", "partition", "host")
    )


def per_topic(facts: DataFrame, findings: DataFrame, at_risk: DataFrame) -> DataFrame:
    base = facts.groupBy("topic").agg(
        F.countDistinct("partition").alias("partitions"),
        F.count("*").alias("replicas"),
        F.countDistinct("host").alias("hosts"),
        F.sum("size_bytes").alias("log_bytes"),
    )
    lose = F.col("role").isin("leader", "unknown")
    risk = at_risk.groupBy("topic").agg(
        F.countDistinct("partition").alias("partitions_at_risk"),
        F.countDistinct(F.when(lose, F.col("partition"))).alias("partitions_losing_data"),
        F.sum(F.when(lose, F.col("bytes")).otherwise(0)).alias("bytes_lost_cluster_wide"),
    )
    found = findings.where(F.col("topic").isNotNull()).groupBy("topic").agg(F.count("*").alias("findings"))
    return (
        base.join(risk, "topic", "left")
        .join(found, "topic", "left")
        .fillna(0, ["partitions_at_risk", "partitions_losing_data", "bytes_lost_cluster_wide", "findings"])
        .orderBy(F.desc("partitions_losing_data"), F.desc("partitions_at_risk"), "topic")
    )


def per_host(facts: DataFrame, findings: DataFrame, hosts: DataFrame) -> DataFrame:
    size = facts.groupBy("host").agg(
        F.countDistinct("log_dir").alias("log_dirs"),
        F.count("*").alias("partitions"),
        F.sum("size_bytes").alias("log_bytes"),
    )
    sev = findings.groupBy("host").agg(
        *[F.sum(F.when(F.col("severity") == s, 1).otherwise(0)).alias(s) for s in SEVERITIES]
    )
    return (
        hosts.join(size, "host", "left")
        .join(sev, "host", "left")
        .fillna(0, ["log_dirs", "partitions", "log_bytes", *SEVERITIES])
        .orderBy("host")
    )


SEVERITIES = ("critical", "error", "warning", "info")


def fleet_view(
    spark: SparkSession, facts: DataFrame, findings: DataFrame, host_rows: list[dict[str, Any]],
    leaders: dict[tuple[str, int], int],
) -> dict[str, Any]:  # fmt: skip
    hosts = spark.createDataFrame(
        [
            (h["host"], h["address"], h["status"], h["reason"], h["node_id"], float(h["elapsed_s"]))
            for h in host_rows
        ],
        HOST_SCHEMA,
    )
    lead = spark.createDataFrame([(t, p, n) for (t, p), n in sorted(leaders.items())], LEADER_SCHEMA)
    at_risk = replicas_at_risk(facts, findings, lead, hosts).cache()
    out = {
        "hosts": _rows(per_host(facts, findings, hosts)),
        "topics": _rows(per_topic(facts, findings, at_risk)),
        "replicas_at_risk": _rows(at_risk),
    }
    at_risk.unpersist()
    return out
