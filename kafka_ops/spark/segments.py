"""Kafka segment files as a Spark source: ``spark.read.format("kafka-segments")`` and :func:`read_segments`.

Local paths go through pyspark's Python Data Source API (one input partition per group of whole Kafka
partitions, see ``partitions.plan_groups``); any other URI (hdfs://, s3a://, whatever Hadoop reads) goes
through Spark's ``binaryFile`` source, grouped by partition directory and decoded by the same engine code.
The rows are the same either way.

Options of the ``kafka-segments`` format (all optional but the path):

* ``path`` / ``paths`` (JSON list): segment ``.log`` files, partition dirs, log dirs, or folders holding them;
* ``topics``: comma-separated topics to read (default: every partition found, ``__cluster_metadata`` too);
* ``isolation``: ``all`` (default: every record, control records included, aborted ones flagged),
  ``read_uncommitted`` or ``read_committed`` (as a consumer with that ``isolation.level`` sees the partition);
* ``maxPartitionBytes`` (default 64 MiB), ``parallelism`` (default 2): how Kafka partitions are grouped;
* ``verifyCrc`` (default true), ``failOnCorrupt`` (default false: stop at a torn/corrupt batch as Kafka's
  recovery does).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition
from pyspark.sql.types import StructType

from kafka_ops.engine.errors import EngineError
from kafka_ops.spark.partitions import (
    ALL,
    ISOLATIONS,
    LOCAL,
    BytesLoader,
    Loader,
    PartitionRef,
    SegmentRef,
    discover,
    iter_partition,
    local_path,
    plan_groups,
)

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

FORMAT = "kafka-segments"
SCHEMA_DDL = (
    "topic string, partition int, offset long, timestamp timestamp, timestamp_ms long, timestamp_type string, "
    "key binary, value binary, headers array<struct<key: string, value: binary>>, producer_id long, "
    "producer_epoch int, sequence int, transactional boolean, control boolean, control_type string, "
    "aborted boolean, open_transaction boolean, leader_epoch int, segment long, path string"
)
HEADER_TYPE = pa.struct([("key", pa.string()), ("value", pa.binary())])
ARROW_SCHEMA = pa.schema(
    [
        ("topic", pa.string()),
        ("partition", pa.int32()),
        ("offset", pa.int64()),
        ("timestamp", pa.timestamp("us", tz="UTC")),
        ("timestamp_ms", pa.int64()),
        ("timestamp_type", pa.string()),
        ("key", pa.binary()),
        ("value", pa.binary()),
        ("headers", pa.list_(pa.field("element", HEADER_TYPE))),
        ("producer_id", pa.int64()),
        ("producer_epoch", pa.int32()),
        ("sequence", pa.int32()),
        ("transactional", pa.bool_()),
        ("control", pa.bool_()),
        ("control_type", pa.string()),
        ("aborted", pa.bool_()),
        ("open_transaction", pa.bool_()),
        ("leader_epoch", pa.int32()),
        ("segment", pa.int64()),
        ("path", pa.string()),
    ]
)
DEFAULT_MAX_PARTITION_BYTES = 64 * 1024 * 1024
CHUNK_ROWS = 32_768


def schema() -> StructType:
    return StructType.fromDDL(SCHEMA_DDL)


def arrow_batches(
    part: PartitionRef,
    isolation: str = ALL,
    loader: Loader = LOCAL,
    verify_crc: bool = True,
    fail_on_corrupt: bool = False,
    chunk_rows: int = CHUNK_ROWS,
) -> Iterator[pa.RecordBatch]:
    """One Kafka partition as Arrow record batches of ``ARROW_SCHEMA``.

    Per-record columns are appended record by record; per-batch columns once per batch and repeated with
    ``take`` at the end (most batches of a busy topic hold many records; the corpus has many of one).
    """
    offsets: list[int] = []
    ts_ms: list[int] = []
    keys: list[bytes | None] = []
    values: list[bytes | None] = []
    headers: list[list[dict[str, Any]]] = []
    seqs: list[int] = []
    per_batch: list[tuple[Any, ...]] = []
    counts: list[int] = []
    batch_fields = (
        "timestamp_type", "producer_id", "producer_epoch", "transactional", "control", "control_type",
        "aborted", "open_transaction", "leader_epoch", "segment", "path",
    )  # fmt: skip
    add_off, add_ts, add_key, add_val, add_hdr, add_seq = (
        offsets.append, ts_ms.append, keys.append, values.append, headers.append, seqs.append,
    )  # fmt: skip

    def flush() -> pa.RecordBatch:
        n = len(offsets)
        idx = pa.array(np.repeat(np.arange(len(counts), dtype=np.int32), counts))
        ts = pa.array(ts_ms, pa.int64())
        arrays: dict[str, pa.Array] = {
            "topic": pa.array([part.topic] * n, pa.string()),
            "partition": pa.array([part.partition] * n, pa.int32()),
            "offset": pa.array(offsets, pa.int64()),
            "timestamp": pa.array([None if t < 0 else t * 1000 for t in ts_ms], pa.timestamp("us", tz="UTC")),
            "timestamp_ms": ts,
            "key": pa.array(keys, pa.binary()),
            "value": pa.array(values, pa.binary()),
            "headers": pa.array(headers, ARROW_SCHEMA.field("headers").type),
            "sequence": pa.array(seqs, pa.int32()),
        }
        for i, name in enumerate(batch_fields):
            col = pa.array([c[i] for c in per_batch], ARROW_SCHEMA.field(name).type)
            arrays[name] = col.take(idx)
        for v in (offsets, ts_ms, keys, values, headers, seqs, per_batch, counts):
            v.clear()
        return pa.RecordBatch.from_arrays([arrays[f.name] for f in ARROW_SCHEMA], schema=ARROW_SCHEMA)

    for view in iter_partition(part, isolation, loader, verify_crc, fail_on_corrupt):
        b = view.batch
        start = len(offsets)
        for r in view.records():
            add_off(r.offset)
            add_ts(r.timestamp)
            add_key(r.key)
            add_val(r.value)
            add_hdr([{"key": k, "value": v} for k, v in r.headers] if r.headers else [])
            add_seq(r.sequence)
        n = len(offsets) - start
        if n:
            counts.append(n)
            v = (
                b.timestamp_type, b.producer_id, b.producer_epoch, b.is_transactional, b.is_control,
                b.control_type, view.aborted, view.open_txn, b.partition_leader_epoch, view.segment.base_offset,
                view.segment.log,
            )  # fmt: skip
            per_batch.append(v)
        if len(offsets) >= chunk_rows:
            yield flush()
    if offsets:
        yield flush()


def _bool(options: dict[str, str], key: str, default: bool) -> bool:
    v = options.get(key)
    if v is None:
        return default
    if v.lower() in ("true", "1", "yes"):
        return True
    if v.lower() in ("false", "0", "no"):
        return False
    raise ValueError(f"option {key} must be true or false, not {v!r}")


def _paths(options: dict[str, str]) -> list[str]:
    if options.get("paths"):
        paths = json.loads(options["paths"])
    elif options.get("path"):
        paths = [options["path"]]
    else:
        raise ValueError("kafka-segments needs a path: spark.read.format('kafka-segments').load(PATH)")
    return [str(p) for p in paths]


class SegmentsReader(DataSourceReader):
    def __init__(self, options: dict[str, str]) -> None:
        options = {k.lower(): v for k, v in options.items()}  # Spark's option keys are case-insensitive
        self.paths = _paths(options)
        topics = options.get("topics") or ""
        self.topics = [t.strip() for t in topics.split(",") if t.strip()] or None
        self.isolation = (options.get("isolation") or ALL).lower()
        if self.isolation not in ISOLATIONS:
            raise ValueError(
                f"option isolation must be one of {', '.join(ISOLATIONS)}, not {self.isolation!r}"
            )
        self.max_bytes = int(options.get("maxpartitionbytes") or DEFAULT_MAX_PARTITION_BYTES)
        self.parallelism = int(options.get("parallelism") or 2)
        self.verify_crc = _bool(options, "verifycrc", True)
        self.fail_on_corrupt = _bool(options, "failoncorrupt", False)

    def partitions(self) -> Sequence[InputPartition]:
        # No pushFilters(): pyspark refuses a reader that has it unless spark.sql.python.filterPushdown.enabled
        # is set, which a user's own session may not do; the ``topics`` option prunes instead.
        refs = discover(self.paths, self.topics)
        return [InputPartition(g) for g in plan_groups(refs, self.max_bytes, self.parallelism)]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        for ref in partition.value:
            yield from arrow_batches(ref, self.isolation, LOCAL, self.verify_crc, self.fail_on_corrupt)


class KafkaSegmentsDataSource(DataSource):
    """``spark.read.format("kafka-segments")``: register with ``spark.dataSource.register(...)``."""

    @classmethod
    def name(cls) -> str:
        return FORMAT

    def schema(self) -> str:
        return SCHEMA_DDL

    def reader(self, schema: StructType) -> DataSourceReader:
        return SegmentsReader(dict(self.options))


# ----------------------------------------------------------------------------------------- Hadoop paths
def _decode_dir(table: pa.Table, isolation: str, verify_crc: bool, fail_on_corrupt: bool) -> pa.Table:
    """One partition directory's ``.log``/``.txnindex`` files (from binaryFile) -> its records."""
    from kafka_ops.engine.layout import parse_partition_dir, parse_segment_file

    rows = table.select(["path", "dirname", "content", "length"]).to_pylist()
    empty = pa.Table.from_batches([], schema=ARROW_SCHEMA)
    if not rows:
        return empty
    name = parse_partition_dir(rows[0]["dirname"])
    if name is None or name.kind != "log":
        return empty
    d = rows[0]["path"].rsplit("/", 1)[0]
    ref = PartitionRef(name.topic, name.partition, d)
    contents: dict[str, bytes] = {}
    for r in rows:
        parsed = parse_segment_file(r["path"].rsplit("/", 1)[1])
        if parsed is None:
            continue
        contents[r["path"]] = r["content"]
        if parsed.suffix == ".log":
            ref.segments.append(SegmentRef(parsed.base_offset, r["path"], r["length"]))
        else:
            ref.txnindexes.append(r["path"])
    ref.segments.sort(key=lambda s: s.base_offset)
    ref.txnindexes.sort()
    batches = list(arrow_batches(ref, isolation, BytesLoader(contents), verify_crc, fail_on_corrupt))
    return pa.Table.from_batches(batches, schema=ARROW_SCHEMA) if batches else empty


def hadoop_segment_files(spark: SparkSession, paths: list[str], topics: list[str] | None) -> list[str]:
    """The ``.log`` and ``.txnindex`` files under ``paths``, listed with Hadoop's FileSystem API.

    Listed here rather than by binaryFile's recursive lookup, which silently skips names starting with ``_``
    or ``.`` (Spark's hidden-file rule) and so would drop ``__consumer_offsets-N``; the walk is the local one
    (partition dirs are the dirs holding segment files; ``-delete``/``-future``/``-stray`` copies skipped).
    A ``.log`` file given alone brings its partition's ``.txnindex`` files.
    """
    from kafka_ops.engine.layout import parse_partition_dir, parse_segment_file

    jvm = spark.sparkContext._jvm  # type: ignore[attr-defined]
    conf = spark.sparkContext._jsc.hadoopConfiguration()  # type: ignore[attr-defined]
    wanted = set(topics) if topics else None
    out: list[str] = []

    def keep_dir(d: Any) -> bool:
        name = parse_partition_dir(d.getName())
        if name is None or name.kind != "log":
            return False
        return wanted is None or name.topic in wanted

    def listing(p: Any) -> list[Any]:
        return list(p.getFileSystem(conf).listStatus(p))

    def walk(p: Any, depth: int) -> None:
        entries = listing(p)
        segs = [e for e in entries if e.isFile() and parse_segment_file(e.getPath().getName())]
        if segs:
            if keep_dir(p):
                for e in segs:
                    parsed = parse_segment_file(e.getPath().getName())
                    if parsed and not parsed.leftover and parsed.suffix in (".log", ".txnindex"):
                        out.append(e.getPath().toString())
            return
        if depth >= 6:
            return
        for e in entries:
            n = e.getPath().getName()
            if e.isDirectory() and not n.startswith(".") and not n.endswith(("-delete", "-future", "-stray")):
                walk(e.getPath(), depth + 1)

    for raw in paths:
        p = jvm.org.apache.hadoop.fs.Path(raw)
        fs = p.getFileSystem(conf)
        if not fs.exists(p):
            raise EngineError(raw, "no such file or directory")
        st = fs.getFileStatus(p)
        if st.isFile():
            parsed = parse_segment_file(p.getName())
            if parsed is None or parsed.suffix != ".log" or parsed.leftover:
                raise EngineError(raw, "not a segment file (<20-digit base offset>.log)")
            out.append(st.getPath().toString())
            out.extend(
                e.getPath().toString()
                for e in listing(p.getParent())
                if e.getPath().getName().endswith(".txnindex")
            )
        else:
            walk(st.getPath(), 0)
    return sorted(set(out))


def _read_hadoop(
    spark: SparkSession,
    paths: list[str],
    topics: list[str] | None,
    isolation: str,
    verify_crc: bool,
    fail_on_corrupt: bool,
) -> DataFrame:
    from pyspark.sql import functions as F

    files = hadoop_segment_files(spark, paths, topics)
    if not files:
        return spark.createDataFrame([], schema())
    listed = (
        spark.read.format("binaryFile")
        .load(files)
        .withColumn("dirname", F.regexp_extract("path", r"([^/]+)/[^/]+$", 1))
        .withColumn("dir", F.regexp_extract("path", r"^(.*)/[^/]+$", 1))
    )

    def decode(table: pa.Table) -> pa.Table:
        return _decode_dir(table, isolation, verify_crc, fail_on_corrupt)

    return (
        listed.select("dir", "dirname", "path", "length", "content")
        .groupBy("dir")
        .applyInArrow(decode, schema())
    )


def read_segments(
    spark: SparkSession,
    paths: str | Sequence[str],
    *,
    isolation: str = ALL,
    topics: Sequence[str] | None = None,
    via: str = "auto",
    max_partition_bytes: int = DEFAULT_MAX_PARTITION_BYTES,
    verify_crc: bool = True,
    fail_on_corrupt: bool = False,
) -> DataFrame:
    """Records of the segments under ``paths`` as a DataFrame (``SCHEMA_DDL``).

    ``via``: ``local`` (the Python data source; plain paths and ``file:`` URIs), ``hadoop`` (Spark's
    ``binaryFile`` source, for hdfs://, s3a://, ...), or ``auto`` (local when every path is local).
    """
    plist = [paths] if isinstance(paths, str) else [str(p) for p in paths]
    if isolation not in ISOLATIONS:
        raise ValueError(f"isolation must be one of {', '.join(ISOLATIONS)}, not {isolation!r}")
    if via == "auto":
        via = "local" if all(local_path(p) is not None for p in plist) else "hadoop"
    if via == "hadoop":
        return _read_hadoop(
            spark, plist, list(topics) if topics else None, isolation, verify_crc, fail_on_corrupt
        )
    if via != "local":
        raise ValueError(f"via must be auto, local or hadoop, not {via!r}")
    register(spark)
    reader = (
        spark.read.format(FORMAT)
        .option("paths", json.dumps(plist))
        .option("isolation", isolation)
        .option("maxPartitionBytes", str(max_partition_bytes))
        .option("parallelism", str(spark.sparkContext.defaultParallelism))
        .option("verifyCrc", str(verify_crc).lower())
        .option("failOnCorrupt", str(fail_on_corrupt).lower())
    )
    if topics:
        reader = reader.option("topics", ",".join(topics))
    return reader.load()


def register(spark: SparkSession) -> None:
    """Make ``spark.read.format("kafka-segments")`` available in this session (idempotent)."""
    spark.dataSource.register(KafkaSegmentsDataSource)
