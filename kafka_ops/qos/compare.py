"""The source/sink comparison of seed 004's QoS test, in Spark.

Source rows carry (topic, partition, offset, timestamp_ms, id); the sink only needs the id. An identifier is
*missing* when no sink row has it, a *duplicate* when the sink has it more often than the source. Missing
records are grouped per partition into ranges of consecutive source records (no delivered record between
them, whatever the offsets in between hold: markers, aborted or compacted records); every count is also
given per time window (tumbling, on the record timestamp) and partition.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kafka_ops.qos.identifiers import IdSpec, id_column
from kafka_ops.qos.logs import CONSUMED, REBALANCE_KINDS, START, LogEvent
from kafka_ops.units import iso

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

SOURCE_COLUMNS = ("topic", "partition", "offset", "timestamp_ms")


class SourceError(ValueError):
    pass


@dataclass(slots=True)
class MissingRange:
    topic: str
    partition: int
    first_offset: int
    last_offset: int
    records: int
    first_ms: int | None
    last_ms: int | None
    ids: list[str]
    rebalances: list[dict[str, Any]] = field(default_factory=list)
    skip: LogEvent | None = None  # the first consumed-offset line of the partition past the range

    def to_dict(self) -> dict[str, Any]:
        return {
            "topic": self.topic,
            "partition": self.partition,
            "first_offset": self.first_offset,
            "last_offset": self.last_offset,
            "records": self.records,
            "first_timestamp": iso(self.first_ms, "z_ms"),
            "last_timestamp": iso(self.last_ms, "z_ms"),
            "ids": self.ids,
            "rebalances": self.rebalances,
            "skipped_by": None
            if self.skip is None
            else {
                "time": iso(self.skip.time_ms, "z_ms"),
                "pod": self.skip.pod,
                "first_offset": self.skip.first,
                "last_offset": self.skip.last,
                "file": self.skip.file,
                "line": self.skip.line,
            },
        }


def source_frame(df: DataFrame, spec: IdSpec) -> DataFrame:
    """A source (the reader's DataFrame or an export) as (topic, partition, offset, timestamp_ms, id)."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import TimestampType

    cols = set(df.columns)
    if not {"partition", "offset"} <= cols:
        raise SourceError(f"the source needs partition and offset columns; it has: {', '.join(df.columns)}")
    topic = F.col("topic").cast("string") if "topic" in cols else F.lit(None).cast("string")
    if "timestamp_ms" in cols:
        ts = F.col("timestamp_ms").cast("long")
    elif "timestamp" in cols and isinstance(df.schema["timestamp"].dataType, TimestampType):
        ts = F.unix_millis(F.col("timestamp"))
    elif "timestamp" in cols:
        ts = F.col("timestamp").cast("long")
    else:
        ts = F.lit(None).cast("long")
    return df.select(
        topic.alias("topic"),
        F.col("partition").cast("int").alias("partition"),
        F.col("offset").cast("long").alias("offset"),
        ts.alias("timestamp_ms"),
        id_column(df, spec).alias("id"),
    ).dropDuplicates(["topic", "partition", "offset"])  # the same partition read from several replicas


def compare(
    source: DataFrame,
    source_id: IdSpec,
    sink: DataFrame,
    sink_id: IdSpec,
    *,
    window_ms: int = 3_600_000,
    from_ms: int | None = None,
    to_ms: int | None = None,
    max_ids: int = 100,
) -> dict[str, Any]:
    """The comparison as a plain dict (see ``kafka-ops qos --format json``)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    src = source_frame(source, source_id)
    if from_ms is not None:
        src = src.where(F.col("timestamp_ms") >= from_ms)
    if to_ms is not None:
        src = src.where(F.col("timestamp_ms") < to_ms)
    # null ids are grouped too: the sink's rows without an identifier are counted, never matched
    sink_counts = (
        sink.select(id_column(sink, sink_id).alias("id")).groupBy("id").agg(F.count("*").alias("sink_n"))
    )
    sink_counts = sink_counts.cache()
    source_counts = src.where(F.col("id").isNotNull()).groupBy("id").agg(F.count("*").alias("source_n"))
    has_id = F.col("id").isNotNull()
    joined = (
        src.join(sink_counts.where(has_id), "id", "left")
        .join(source_counts, "id", "left")
        .withColumn("missing", has_id & F.col("sink_n").isNull())
        .withColumn(
            # a duplicated id counts once, at its first source record
            "first_of_id",
            F.row_number().over(Window.partitionBy("id").orderBy("topic", "partition", "offset")) == 1,
        )
        .withColumn(
            "extra",
            F.when(
                has_id & F.col("first_of_id") & (F.col("sink_n") > F.col("source_n")),
                F.col("sink_n") - F.col("source_n"),
            ).otherwise(0),
        )
        .cache()
    )

    # per partition: consecutive missing records form a range (gaps and islands over the source order)
    by_offset = Window.partitionBy("topic", "partition").orderBy("offset")
    ranges_rows = (
        joined.withColumn("rn", F.row_number().over(by_offset))
        .where("missing")
        .withColumn("grp", F.col("rn") - F.row_number().over(by_offset))
        .groupBy("topic", "partition", "grp")
        .agg(
            F.min("offset").alias("first"),
            F.max("offset").alias("last"),
            F.count("*").alias("n"),
            F.min("timestamp_ms").alias("first_ms"),
            F.max("timestamp_ms").alias("last_ms"),
            F.slice(F.sort_array(F.collect_list(F.struct("offset", "id"))), 1, max_ids).alias("sample"),
        )
        .orderBy("topic", "partition", "first")
        .collect()
    )
    ranges = [
        MissingRange(
            r.topic, r.partition, r.first, r.last, r.n, r.first_ms, r.last_ms, [s.id for s in r.sample]
        )
        for r in ranges_rows
    ]

    win = F.floor(F.col("timestamp_ms") / window_ms) * window_ms
    windows = (
        joined.withColumn("window", win)
        .groupBy("window", "topic", "partition")
        .agg(
            F.count("*").alias("records"),
            F.sum((~has_id).cast("int")).alias("no_id"),
            F.sum(F.col("missing").cast("int")).alias("missing"),
            F.sum((F.col("extra") > 0).cast("int")).alias("duplicated_ids"),
            F.sum("extra").alias("extra_copies"),
            F.min("timestamp_ms").alias("lo"),
            F.max("timestamp_ms").alias("hi"),
        )
        .orderBy("window", "topic", "partition")
        .collect()
    )
    dup_items = (
        joined.where(F.col("extra") > 0)
        .orderBy("topic", "partition", "offset")
        .select("id", "topic", "partition", "offset", "timestamp_ms", "sink_n", "source_n")
        .limit(max_ids)
        .collect()
    )
    source_ids = src.where(has_id).select("id").distinct().withColumn("in_source", F.lit(True))
    sink_row = (
        sink_counts.join(source_ids, "id", "left")
        .agg(
            F.sum("sink_n").alias("n"),
            F.sum(F.when(~has_id, F.col("sink_n")).otherwise(0)).alias("no_id"),
            F.sum(has_id.cast("int")).alias("distinct"),
            F.sum((has_id & F.col("in_source").isNull()).cast("int")).alias("not_in_source"),
        )
        .first()
    )
    joined.unpersist()
    sink_counts.unpersist()

    def total(field: str) -> int:
        return int(sum(getattr(w, field) or 0 for w in windows))

    los = [w.lo for w in windows if w.lo is not None]
    his = [w.hi for w in windows if w.hi is not None]
    return {
        "source": {
            "records": total("records"),
            "without_id": total("no_id"),
            "first_timestamp": iso(min(los), "z_ms") if los else None,
            "last_timestamp": iso(max(his), "z_ms") if his else None,
            "from": iso(from_ms, "z_ms"),
            "to": iso(to_ms, "z_ms"),
            "id": str(source_id),
        },
        "sink": {
            "records": int(sink_row.n or 0) if sink_row else 0,
            "without_id": int(sink_row.no_id or 0) if sink_row else 0,
            "distinct_ids": int(sink_row.distinct or 0) if sink_row else 0,
            "ids_not_in_source": int(sink_row.not_in_source or 0) if sink_row else 0,
            "id": str(sink_id),
        },
        "missing": {"records": total("missing"), "ranges": ranges},
        "duplicates": {
            "ids": total("duplicated_ids"),
            "extra_copies": total("extra_copies"),
            "items": [
                {
                    "id": d.id,
                    "topic": d.topic,
                    "partition": d.partition,
                    "offset": d.offset,
                    "timestamp": iso(d.timestamp_ms, "z_ms"),
                    "sink_count": d.sink_n,
                    "source_count": d.source_n,
                }
                for d in dup_items
            ],
        },
        "windows": [
            {
                "start": iso(w.window, "z_ms"),
                "end": iso(w.window + window_ms, "z_ms") if w.window is not None else None,
                "topic": w.topic,
                "partition": w.partition,
                "records": w.records,
                "missing": w.missing or 0,
                "duplicated_ids": w.duplicated_ids or 0,
                "extra_copies": w.extra_copies or 0,
            }
            for w in windows
        ],
        "window_ms": window_ms,
    }


def attach_rebalances(
    ranges: list[MissingRange], events: list[LogEvent], tolerance_ms: int, limit: int = 6
) -> None:
    """Put next to each missing range the rebalance events that concern its partition or no partition in
    particular, nearest first: those within ``tolerance_ms`` of its records' timestamps, and those within
    ``tolerance_ms`` of the skip, the first consumed-offset line of the partition past the range (a pipeline
    that lags reads old records: the rebalance that lost them is near the skip, not near their timestamps).
    Events between the last consumed line before the range and the skip are at distance 0 and marked
    ``during_skip`` (seed 004: the revocation and rejoin between the two commits). A consumer start offset just
    past the range is always kept (the consumer resumed after the lost records)."""
    reb = [e for e in events if e.kind in REBALANCE_KINDS]
    consumed = [e for e in events if e.kind == CONSUMED and e.partitions and e.first is not None]
    for r in ranges:

        def mine(e: LogEvent, r: MissingRange = r) -> bool:
            return (r.topic, r.partition) in e.partitions or (
                r.topic is None and any(p == r.partition for _t, p in e.partitions)
            )

        before = [e.time_ms for e in consumed if mine(e) and e.last is not None and e.last < r.first_offset]
        after = [e for e in consumed if mine(e) and (e.first or 0) > r.last_offset]
        skip = min(after, key=lambda e: e.time_ms) if after else None
        r.skip = skip
        lo = max(before) if before else None
        picked: list[tuple[int, int, LogEvent, bool]] = []
        for e in reb:
            if e.partitions and not mine(e):
                continue
            resumed = (
                e.kind == START and e.offset is not None and r.first_offset < e.offset <= r.last_offset + 1
            )
            dists = []
            if r.first_ms is not None and r.last_ms is not None:
                dists.append(max(r.first_ms - e.time_ms, e.time_ms - r.last_ms, 0))
            during = False
            if skip is not None:
                start = lo if lo is not None else skip.time_ms - tolerance_ms
                during = start <= e.time_ms <= skip.time_ms
                dists.append(0 if during else abs(e.time_ms - skip.time_ms))
            dist = min(dists) if dists else 0
            if (dists and dist <= tolerance_ms) or resumed:
                picked.append((0 if e.partitions else 1, dist, e, during))
        # those during the skip first (the partition's own, then the group's), then the nearest; a line repeated
        # by the same pod (kafka-python's join retried with its new member id) once
        picked.sort(key=lambda x: (not x[3], x[0], x[1], x[2].time_ms))
        seen: set[tuple[str, str, tuple[tuple[str, int], ...], bool]] = set()
        kept = []
        for own, d, e, during in picked:
            key = (e.pod, e.kind, tuple(e.partitions), during)
            if key not in seen:
                seen.add(key)
                kept.append((own, d, e, during))
        r.rebalances = [
            {**e.to_dict(), "distance_ms": d, "during_skip": during} for _own, d, e, during in kept[:limit]
        ]
        r.rebalances.sort(key=lambda x: str(x["time"]))


def count_in_ranges(source: DataFrame, ranges: list[tuple[str, int, int, int]]) -> list[int]:
    """How many source records lie in each (topic, partition, first, last) offset range (one Spark job)."""
    from pyspark.sql import functions as F

    if not ranges:
        return []
    spark = source.sparkSession
    rdf = spark.createDataFrame(
        [(i, t, p, a, b) for i, (t, p, a, b) in enumerate(ranges)],
        "i int, r_topic string, r_partition int, r_first long, r_last long",
    )
    cond = (
        (F.col("partition") == F.col("r_partition"))
        & (F.col("offset") >= F.col("r_first"))
        & (F.col("offset") <= F.col("r_last"))
        & (F.col("topic").isNull() | F.col("r_topic").isNull() | (F.col("topic") == F.col("r_topic")))
    )
    topic = F.col("topic").cast("string") if "topic" in source.columns else F.lit(None).cast("string")
    src = source.select(topic.alias("topic"), F.col("partition").cast("int"), F.col("offset").cast("long"))
    rows = src.join(rdf, cond).groupBy("i").count().collect()
    counts = {r.i: r["count"] for r in rows}
    return [counts.get(i, 0) for i in range(len(ranges))]
