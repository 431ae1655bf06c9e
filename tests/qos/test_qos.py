"""`kafka-ops qos` on simulated pipelines: a pipeline that drops the records around a rebalance and uploads a
chunk twice after a pod died (``kafka_ops.simulator.pipeline``); the comparison must find exactly those
records, in every sink format, and the offset-log check exactly the gap and the rewind."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession
from typer.testing import CliRunner

from kafka_ops.cli.framework import load_all
from kafka_ops.qos.compare import compare
from kafka_ops.qos.identifiers import parse_id_spec
from kafka_ops.qos.sinks import read_files
from kafka_ops.simulator.pipeline import PipelineSpec, SimulatedPipeline, simulate_pipeline
from kafka_ops.spark import read_segments

runner = CliRunner()


@pytest.fixture(scope="module")
def pipelines(tmp_path_factory: pytest.TempPathFactory) -> dict[str, SimulatedPipeline]:
    return {
        fmt: simulate_pipeline(str(tmp_path_factory.mktemp(f"pipe-{fmt}")), PipelineSpec(sink_format=fmt))
        for fmt in ("parquet", "avro", "json", "csv")
    }


def qos_cli(*args: str) -> tuple[int, Any]:
    result = runner.invoke(load_all(), ["qos", *args])
    out = result.stdout
    try:
        return result.exit_code, json.loads(out)
    except ValueError:
        return result.exit_code, out + result.stderr


def test_cli_finds_exactly_the_dropped_and_duplicated_records_and_the_offset_gap(
    spark: SparkSession, pipelines: dict[str, SimulatedPipeline]
) -> None:
    p = pipelines["parquet"]
    assert len(p.lost) == 7 and len(p.duplicated) == 20
    code, report = qos_cli(
        "--source", p.data_dir, "--topic", p.topic, "--source-id", "value:id", "--sink", p.sink_dir,
        "--sink-id", "field:log_id", "--logs", p.logs[0], "--logs", p.logs[1], "--format", "json",
    )  # fmt: skip
    assert code == 1, report
    assert report["source"]["records"] == p.delivered  # read_committed: aborted transactions are not expected
    missing = report["missing"]
    assert missing["records"] == 7
    (rng,) = missing["ranges"]
    assert (rng["partition"], rng["first_offset"], rng["last_offset"]) == (1, p.lost[0][1], p.lost[-1][1])
    assert rng["ids"] == [rid for _p, _o, rid in p.lost]
    # the rebalance that caused it is next to it: pod ingest-0 revoked and got partition 1 back
    kinds = {(e["pod"], e["kind"]) for e in rng["rebalances"]}
    assert {("ingest-0", "revoked"), ("ingest-0", "assigned")} <= kinds
    assert all(abs(e["distance_ms"]) <= 5 * 60_000 for e in rng["rebalances"])
    dups = report["duplicates"]
    assert (dups["ids"], dups["extra_copies"]) == (20, 20)
    assert [(d["partition"], d["offset"], d["id"], d["sink_count"]) for d in dups["items"]] == [
        (p_, o, rid, 2) for p_, o, rid in p.duplicated
    ]
    assert report["sink"]["ids_not_in_source"] == 0
    # per window and partition: the missing and duplicated records land in their hour
    by = {(w["start"], w["partition"]): w for w in report["windows"]}
    assert sum(w["missing"] for w in by.values()) == 7
    assert sum(w["records"] for w in by.values()) == p.delivered
    assert sum(w["duplicated_ids"] for w in by.values()) == 20
    # the service's offset logs: exactly the skipped offsets of partition 1 and the rewind of partition 0
    found = [
        (f["kind"], f["partition"], f["first_offset"], f["last_offset"], f["visible_records"])
        for f in report["offsets"]["findings"]
    ]
    assert p.gap is not None and p.rewind is not None
    assert found == [("gap", *p.gap, 7), ("rewind", *p.rewind, 20)]
    assert report["gate"]["failed"] is True


@pytest.mark.parametrize("fmt", ["avro", "json", "csv"])
def test_every_sink_format_gives_the_same_answer(
    spark: SparkSession, pipelines: dict[str, SimulatedPipeline], fmt: str
) -> None:
    p = pipelines[fmt]
    src = read_segments(spark, p.data_dir, topics=[p.topic], isolation="read_committed")
    sink = read_files(spark, p.sink_dir)
    result = compare(src, parse_id_spec("value:id"), sink, parse_id_spec("field:log_id"), max_ids=50)
    ranges = result["missing"]["ranges"]
    assert [(r.partition, r.first_offset, r.last_offset, r.ids) for r in ranges] == [
        (1, p.lost[0][1], p.lost[-1][1], [rid for _p, _o, rid in p.lost])
    ]
    assert {d["id"] for d in result["duplicates"]["items"]} == {rid for _p, _o, rid in p.duplicated}
    assert result["sink"]["records"] == p.delivered - 7 + 20


def test_read_uncommitted_source_expects_the_aborted_records_too(
    spark: SparkSession, pipelines: dict[str, SimulatedPipeline]
) -> None:
    """The pipeline reads read_committed: compared with everything a read_uncommitted consumer gets, the
    aborted transactions' records show up as missing (exactly those, plus the dropped ones)."""
    p = pipelines["parquet"]
    everything = read_segments(spark, p.data_dir, topics=[p.topic], isolation="read_uncommitted")
    aborted = everything.where("aborted").count()
    assert aborted > 0
    result = compare(
        everything, parse_id_spec("value:id"), read_files(spark, p.sink_dir), parse_id_spec("field:log_id")
    )
    assert result["missing"]["records"] == aborted + 7


def test_an_export_of_the_topic_is_a_source_too(
    spark: SparkSession, pipelines: dict[str, SimulatedPipeline], tmp_path: Path
) -> None:
    p = pipelines["json"]
    export = str(tmp_path / "export")
    read_segments(spark, p.data_dir, topics=[p.topic], isolation="read_committed").write.parquet(export)
    code, report = qos_cli(
        "--source-export", export, "--source-id", "value:id", "--sink", p.sink_dir, "--sink-id", "field:log_id",
        "--format", "json",
    )  # fmt: skip
    assert code == 1
    assert report["missing"]["records"] == 7 and report["duplicates"]["ids"] == 20


def test_duplicates_alone_pass_the_gate(spark: SparkSession, tmp_path: Path) -> None:
    p = simulate_pipeline(str(tmp_path), PipelineSpec(lost=0, sink_format="json"))
    code, out = qos_cli(
        "--source", p.data_dir, "--topic", p.topic, "--source-id", "value:id", "--sink", p.sink_dir,
        "--sink-id", "field:log_id",
    )  # fmt: skip
    assert code == 0, out
    assert "missing: 0 record(s) in 0 range(s); duplicates: 20 id(s)" in out
    assert "gate: pass" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "give a source"),
        (["--source", "/nonexistent/data", "--sink", "/tmp", "--source-id", "key", "--sink-id", "field:id"],
         "/nonexistent/data: no such file or directory"),
        (["--source", "{data}", "--sink", "{sink}", "--source-id", "value:id"], "--source-id and --sink-id"),
        (["--source", "{data}", "--sink", "{sink}", "--source-id", "uuid", "--sink-id", "field:log_id"],
         "bad identifier 'uuid'"),
        (["--source", "{data}", "--sink", "{sink}/nope", "--source-id", "key", "--sink-id", "field:id"],
         "nope: no such file or directory"),
        (["--source", "{data}", "--isolation", "serializable"], "--isolation must be"),
        (["--source", "{data}", "--topic", "nope", "--logs", "{log}"], "no partition of topic nope"),
        (["--logs", "{log}", "--window", "soon"], "kafka-ops qos: --window: not a duration: 'soon'"),
        (["--logs", "/nonexistent.log"], "/nonexistent.log: no such file"),
    ],
)  # fmt: skip
def test_bad_input_is_one_line_and_exit_2(
    pipelines: dict[str, SimulatedPipeline], args: list[str], message: str
) -> None:
    p = pipelines["json"]
    filled = [a.format(data=p.data_dir, sink=p.sink_dir, log=p.logs[0]) for a in args]
    result = runner.invoke(load_all(), ["qos", *filled])
    assert result.exit_code == 2, result.output
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.output


def test_offset_logs_alone(pipelines: dict[str, SimulatedPipeline]) -> None:
    """Without a source the gap check still runs (gaps then include marker-only holes, said so)."""
    p = pipelines["json"]
    code, report = qos_cli("--logs", p.logs[0], "--logs", p.logs[1], "--format", "json")
    assert code == 1
    assert report["offsets"]["records_known"] is False
    kinds = {f["kind"] for f in report["offsets"]["findings"]}
    assert kinds == {"gap", "rewind"}
    assert p.gap is not None
    assert any(
        f["first_offset"] == p.gap[1] and f["last_offset"] == p.gap[2] for f in report["offsets"]["findings"]
    )
