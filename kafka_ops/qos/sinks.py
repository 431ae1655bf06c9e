"""A folder of Parquet, Avro, JSON (lines) or CSV files as a Spark DataFrame.

Parquet, JSON and CSV use Spark's own readers. Avro does not: Spark's Avro reader is the spark-avro Maven
jar, which pyspark does not ship, so Avro files are read by Spark's ``binaryFile`` source (any filesystem
Hadoop reads) and decoded with fastavro in the executors; the columns follow the writer schema of the first
file (records, arrays and maps become JSON text, enums text, fixed binary, timestamp-millis/micros timestamps).
"""

from __future__ import annotations

import io
import json
import os
from collections import Counter
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from kafka_ops.spark.partitions import local_path

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame, SparkSession

FORMATS = ("parquet", "avro", "json", "csv")
_EXTENSIONS = {".parquet": "parquet", ".avro": "avro", ".json": "json", ".jsonl": "json", ".ndjson": "json",
               ".csv": "csv"}  # fmt: skip


class SinkError(ValueError):
    """A sink that cannot be read: one line naming the path."""


def detect_format(path: str) -> str:
    """The most common known extension under a local ``path`` (a file or a folder)."""
    p = local_path(path)
    if p is None:
        raise SinkError(f"{path}: name the format (parquet, avro, json, csv) for a non-local path")
    if not os.path.exists(p):
        raise SinkError(f"{path}: no such file or directory")
    seen: Counter[str] = Counter()
    files = [p] if os.path.isfile(p) else [os.path.join(d, f) for d, _ds, fs in os.walk(p) for f in fs]
    for f in files:
        fmt = _EXTENSIONS.get(os.path.splitext(f)[1].lower())
        if fmt and not os.path.basename(f).startswith(("_", ".")):
            seen[fmt] += 1
    if not seen:
        raise SinkError(f"{path}: no .parquet, .avro, .json(l) or .csv files")
    return seen.most_common(1)[0][0]


def read_files(spark: SparkSession, path: str, fmt: str = "auto") -> DataFrame:
    fmt = detect_format(path) if fmt == "auto" else fmt
    if fmt not in FORMATS:
        raise SinkError(f"{path}: unknown format {fmt!r} (use {', '.join(FORMATS)})")
    if fmt == "avro":
        return read_avro(spark, path)
    glob = {"parquet": "*.parquet", "json": "*.json*", "csv": "*.csv"}[fmt]
    reader = spark.read.option("recursiveFileLookup", "true")
    if os.path.isdir(local_path(path) or "") or local_path(path) is None:
        reader = reader.option("pathGlobFilter", glob)
    if fmt == "csv":
        return reader.option("header", "true").csv(path)
    if fmt == "json":
        return reader.json(path)
    return reader.parquet(path)


# ----------------------------------------------------------------------------------------- Avro
def _avro_type(t: Any) -> tuple[str, Any, Callable[[Any], Any]]:
    """Avro type -> (Spark DDL type, Arrow type, value converter)."""
    import pyarrow as pa

    def ident(v: Any) -> Any:
        return v

    def as_json(v: Any) -> Any:
        return None if v is None else json.dumps(v, default=str, sort_keys=True)

    if isinstance(t, list):  # a union: nullable X, or several types -> JSON text
        rest = [x for x in t if x != "null"]
        return _avro_type(rest[0]) if len(rest) == 1 else ("string", pa.string(), as_json)
    if isinstance(t, dict):
        logical = t.get("logicalType")
        if logical in ("timestamp-millis", "timestamp-micros"):
            return "timestamp", pa.timestamp("us", tz="UTC"), ident
        if logical == "date":
            return "date", pa.date32(), ident
        kind = t.get("type")
        if kind == "enum":
            return "string", pa.string(), ident
        if kind == "fixed":
            return "binary", pa.binary(), ident
        if kind in ("record", "array", "map"):
            return "string", pa.string(), as_json
        return _avro_type(kind)
    simple = {
        "string": ("string", pa.string()), "bytes": ("binary", pa.binary()), "int": ("int", pa.int32()),
        "long": ("bigint", pa.int64()), "float": ("float", pa.float32()), "double": ("double", pa.float64()),
        "boolean": ("boolean", pa.bool_()), "null": ("string", pa.string()),
    }  # fmt: skip
    if t in simple:
        return (*simple[t], ident)
    return "string", pa.string(), as_json  # a named type defined elsewhere in the schema


def _avro_columns(schema: dict[str, Any]) -> list[tuple[str, str, Any, Callable[[Any], Any]]]:
    if schema.get("type") != "record":
        raise SinkError("an Avro sink must hold records")
    return [(f["name"], *_avro_type(f["type"])) for f in schema["fields"]]


def read_avro(spark: SparkSession, path: str) -> DataFrame:
    import fastavro
    import pyarrow as pa

    files = (
        spark.read.format("binaryFile")
        .option("pathGlobFilter", "*.avro")
        .option("recursiveFileLookup", "true")
        .load(path)
        .select("path", "content")
    )
    first = files.limit(1).collect()
    if not first:
        raise SinkError(f"{path}: no .avro files")
    try:
        writer_schema = fastavro.reader(io.BytesIO(first[0].content)).writer_schema
    except Exception as exc:  # fastavro raises ValueError/EOFError/... on a bad header
        raise SinkError(f"{first[0].path}: not an Avro container file ({exc})") from exc
    cols = _avro_columns(writer_schema or {})
    ddl = ", ".join(f"`{name}` {ddl_type}" for name, ddl_type, _a, _c in cols)
    arrow_schema = pa.schema([(name, atype) for name, _d, atype, _c in cols])

    def decode(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            for row in batch.to_pylist():
                try:
                    records = list(fastavro.reader(io.BytesIO(row["content"])))
                except Exception as exc:
                    raise SinkError(f"{row['path']}: cannot read Avro: {exc}") from exc
                if not records:
                    continue
                data = {name: [conv(r.get(name)) for r in records] for name, _d, _a, conv in cols}
                yield pa.RecordBatch.from_pydict(data, schema=arrow_schema)

    return files.mapInArrow(decode, ddl)
