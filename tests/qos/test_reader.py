"""The Spark reader (``kafka_ops.spark``) against the engine's own iteration, an independent oracle for
aborted transactions (markers looked up ahead), kafka-python's record code, and the corpus README."""

from __future__ import annotations

import os
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from kafka.record.memory_records import MemoryRecords
from pyspark.sql import SparkSession

from kafka_ops.engine.records import BatchScanner, LogBuffer, iter_records
from kafka_ops.simulator.host import SimulatedHost
from kafka_ops.spark import read_segments
from kafka_ops.spark.partitions import PartitionRef, SegmentRef, discover, plan_groups
from tests.test_corpus import CORPUS, ROWS

Key = tuple[str, int, int]  # topic, partition, offset


def engine_rows(root: str, by_dir: bool = False) -> dict[Any, tuple[Any, ...]]:
    """The engine's plain iteration: every valid batch of every segment, every record (keyed by topic,
    partition and offset, or with ``by_dir`` by partition directory and offset)."""
    out: dict[Any, tuple[Any, ...]] = {}
    for part in discover([root]):
        for seg in part.segments:
            with LogBuffer.open(seg.log) as buf:
                for b in BatchScanner(buf):
                    if not b.crc_valid:
                        break
                    for r in iter_records(buf, b):
                        key = (part.dir, r.offset) if by_dir else (part.topic, part.partition, r.offset)
                        out[key] = (
                            r.timestamp, r.key, r.value, [(k, v) for k, v in r.headers], b.is_control,
                            b.control_type, b.producer_id,
                        )  # fmt: skip
    return out


def spark_rows(df: Any, by_dir: bool = False) -> dict[Any, tuple[Any, ...]]:
    cols = (
        "topic",
        "partition",
        "offset",
        "timestamp_ms",
        "key",
        "value",
        "headers",
        "control",
        "control_type",
    )
    rows = df.select(*cols, "producer_id", "path").toArrow().to_pylist()
    out: dict[Any, tuple[Any, ...]] = {}
    for r in rows:
        key = (
            (os.path.dirname(r["path"]), r["offset"]) if by_dir else (r["topic"], r["partition"], r["offset"])
        )
        assert key not in out, f"duplicate row {key}"
        hdrs = [(h["key"], h["value"]) for h in r["headers"]]
        out[key] = (
            r["timestamp_ms"], r["key"], r["value"], hdrs, r["control"], r["control_type"], r["producer_id"],
        )  # fmt: skip
    return out


def marker_oracle(root: str, topic: str) -> tuple[set[Key], set[Key]]:
    """Aborted and open records found without any .txnindex: a transactional data batch belongs to the
    transaction that the next marker of its producer ends; ABORT -> aborted, no marker -> open."""
    aborted: set[Key] = set()
    open_: set[Key] = set()
    for part in discover([root], [topic]):
        pending: dict[int, list[Key]] = {}
        for seg in part.segments:
            with LogBuffer.open(seg.log) as buf:
                for b in BatchScanner(buf):
                    if not b.is_transactional:
                        continue
                    if b.is_control:
                        keys = pending.pop(b.producer_id, [])
                        if b.control_type == "ABORT":
                            aborted.update(keys)
                    else:
                        pending.setdefault(b.producer_id, []).extend(
                            (topic, part.partition, r.offset) for r in iter_records(buf, b)
                        )
        for keys in pending.values():
            open_.update(keys)
    return aborted, open_


@pytest.mark.parametrize("via", ["local", "hadoop"])
def test_every_record_of_a_simulated_host_equals_the_engines_iteration(
    spark: SparkSession, healthy_host: SimulatedHost, via: str
) -> None:
    root = os.path.join(healthy_host.root, "data")
    expected = engine_rows(root)
    path = root if via == "local" else "file://" + root
    got = spark_rows(read_segments(spark, path, via=via))
    assert got == expected
    # every topic of the host is there, __consumer_offsets (a name Hadoop listing would hide) included
    assert {k[0] for k in got} == {"orders", "payments", "clicks", "profiles", "__consumer_offsets"}


def test_aborted_flags_match_the_markers_and_read_committed_is_what_a_consumer_sees(
    spark: SparkSession, txn_host: SimulatedHost
) -> None:
    root = os.path.join(txn_host.root, "data")
    aborted, open_ = marker_oracle(root, "ledger")
    assert len(aborted) == 2 * 130 and len(open_) == 2 * 5  # 1 in 3 of 39 transactions aborted, 1 batch open
    df = read_segments(spark, root, topics=["ledger"])
    rows = df.select(
        "partition", "offset", "control", "aborted", "open_transaction", "transactional"
    ).collect()
    flagged = {("ledger", r.partition, r.offset) for r in rows if r.aborted}
    assert flagged == aborted
    assert {("ledger", r.partition, r.offset) for r in rows if r.open_transaction} == open_
    lso = {p: min(o for (_t, q, o) in open_ if q == p) for p in (0, 1)}

    committed = read_segments(spark, root, topics=["ledger"], isolation="read_committed")
    got = {("ledger", r.partition, r.offset) for r in committed.select("partition", "offset").collect()}
    data = {("ledger", r.partition, r.offset) for r in rows if not r.control}
    # no control records, no aborted records, nothing at or past the last stable offset
    assert got == {k for k in data if k not in aborted and k[2] < lso[k[1]]}
    assert 0 < len(got) < len(data) - len(aborted)

    uncommitted = read_segments(spark, root, topics=["ledger"], isolation="read_uncommitted")
    assert uncommitted.count() == len(data) == 800
    # the same through the binaryFile path
    hadoop = read_segments(
        spark, "file://" + root, topics=["ledger"], isolation="read_committed", via="hadoop"
    )
    assert {("ledger", r.partition, r.offset) for r in hadoop.select("partition", "offset").collect()} == got


def test_one_segment_file_still_sees_aborts_indexed_in_later_segments(
    spark: SparkSession, txn_host: SimulatedHost
) -> None:
    """The ABORT marker (and so the .txnindex entry) of a transaction can lie in the next segment."""
    root = os.path.join(txn_host.root, "data")
    aborted, _open = marker_oracle(root, "ledger")
    part = discover([root], ["ledger"])[0]
    straddling = None
    for seg, nxt in zip(part.segments, part.segments[1:], strict=False):
        in_seg = {k for k in aborted if k[1] == part.partition and seg.base_offset <= k[2] < nxt.base_offset}
        txn_here = os.path.join(part.dir, f"{seg.base_offset:020d}.txnindex")
        if in_seg and os.path.getsize(txn_here) if os.path.exists(txn_here) else in_seg:
            # some of its aborted records belong to a transaction whose marker is in a later segment
            straddling = (seg, in_seg)
            break
    assert straddling is not None
    seg, in_seg = straddling
    df = read_segments(spark, seg.log)
    assert {("ledger", r.partition, r.offset) for r in df.where("aborted").collect()} == in_seg


def test_sql_over_the_format_and_options(spark: SparkSession, txn_host: SimulatedHost) -> None:
    root = os.path.join(txn_host.root, "data")
    read_segments(spark, root)  # registers the format in this session
    spark.read.format("kafka-segments").option("isolation", "read_committed").load(
        root
    ).createOrReplaceTempView("ledger_committed")
    rows = spark.sql(
        "select topic, count(*) n, sum(cast(aborted as int)) a, min(timestamp) t from ledger_committed "
        "group by topic order by topic"
    ).collect()
    assert [(r.topic, r.a) for r in rows] == [("__consumer_offsets", 0), ("ledger", 0), ("plain", 0)]
    assert rows[2].n == 120
    assert rows[1].t.year == 2026
    with pytest.raises(Exception, match="isolation must be one of"):
        spark.read.format("kafka-segments").option("isolation", "serializable").load(root).count()
    with pytest.raises(Exception, match="no such file or directory"):
        spark.read.format("kafka-segments").load(root + "/nope").count()


def test_torn_tail_stops_where_recovery_truncates(
    spark: SparkSession, broken_host: SimulatedHost, tmp_path: Path
) -> None:
    torn = broken_host.planted["torn_tail"][0]
    part_dir = tmp_path / os.path.basename(os.path.dirname(torn))
    shutil.copytree(os.path.dirname(torn), part_dir)
    expected = engine_rows(str(part_dir))
    assert spark_rows(read_segments(spark, str(part_dir))) == expected
    with pytest.raises(
        Exception, match=r"00000000000000000280\.log: at byte \d+ batch at offset \d+ needs \d+ bytes"
    ):
        read_segments(spark, str(part_dir), fail_on_corrupt=True).count()


def test_plan_groups_keeps_partitions_whole_and_balanced() -> None:
    parts = [
        PartitionRef("t", i, f"/d/t-{i}", [SegmentRef(0, f"/d/t-{i}/0.log", size)])
        for i, size in enumerate([900, 100, 100, 100, 500, 400, 0, 0])
    ]
    groups = plan_groups(parts, max_bytes=1000, min_groups=2)
    assert sorted(p.partition for g in groups for p in g) == list(range(8))
    loads = sorted(sum(p.size for p in g) for g in groups)
    assert len(groups) == 3 and loads == [600, 600, 900]  # 2100 bytes need 3 groups of at most ~1000
    assert len(plan_groups(parts[:1], 10, 8)) == 1  # never more groups than partitions
    assert plan_groups([], 10, 2) == []


# ----------------------------------------------------------------------------------------- the corpus
CORPUS_ROWS = [r for r in ROWS if r.kraft_snapshots == 0]  # the README counts segments only for these


@pytest.mark.skipif(not (CORPUS / "README.md").is_file(), reason=f"no corpus at {CORPUS}")
def test_corpus_records_equal_the_engine_and_the_readme(spark: SparkSession) -> None:
    dirs = [str(CORPUS / r.path) for r in ROWS]
    df = read_segments(spark, dirs)
    got = spark_rows(df, by_dir=True)
    expected: dict[Any, tuple[Any, ...]] = {}
    for d in dirs:
        expected.update(engine_rows(d, by_dir=True))
    assert got == expected
    per_dir = Counter(os.path.dirname(part_dir) for part_dir, _offset in got)
    for row in CORPUS_ROWS:
        assert per_dir.get(str(CORPUS / row.path), 0) == row.records, row.path


@pytest.mark.skipif(not (CORPUS / "README.md").is_file(), reason=f"no corpus at {CORPUS}")
@pytest.mark.parametrize(
    "partition_dir",
    [
        "xpxwo100__bullShit/tmp/kafka-logs/TEST-TOPIC-0",  # magic v1
        "mscaldas2012__kafka-connect-spooldir/kafka-data",  # v2, lz4
        "ronem123__rupia-transaction-service/kafka-logs",  # v2 with headers, compacted
    ],
)
def test_corpus_fields_equal_kafka_pythons_record_code(spark: SparkSession, partition_dir: str) -> None:
    root = str(CORPUS / partition_dir)
    expected = {}
    for part in discover([root]):
        for seg in part.segments:
            data = Path(seg.log).read_bytes()
            for batch in MemoryRecords(data) if data else []:
                for r in batch:
                    ts = r.timestamp if r.timestamp is not None else -1
                    hdrs = [(k, v) for k, v in getattr(r, "headers", [])]
                    expected[(part.topic, part.partition, r.offset)] = (ts, r.key, r.value, hdrs)
    got = {k: v[:4] for k, v in spark_rows(read_segments(spark, root)).items() if not v[4]}
    assert len(got) > 0
    assert got == {k: v for k, v in expected.items() if k in got}
    assert set(got) <= set(expected)
