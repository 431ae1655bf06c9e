"""`kafka-ops qos`: what entered a topic against what a pipeline wrote out (seed 004), in Spark local mode."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from kafka_ops.audit.options import parse_now, parse_span, time_note
from kafka_ops.cli.framework import Command, OutputFormat, app, fail, note_later, show_notes

_SPARK_MISSING = (
    "kafka-ops qos needs pyspark, pyarrow and fastavro: pip install 'kafka-ops[spark]' (and Java 17)"
)


@app.command(cls=Command)
def qos(
    source: Annotated[
        list[str] | None,
        typer.Option(
            "--source",
            metavar="PATH",
            help="Segments of the topic: .log files, partition dirs, log dirs or folders holding them; "
            "local paths or any URI Hadoop reads (hdfs://, s3a://). Repeatable.",
        ),
    ] = None,
    source_export: Annotated[
        str | None,
        typer.Option(
            "--source-export",
            metavar="PATH",
            help="Instead of segments: an export of the topic (Parquet/Avro/JSON/CSV files with partition, offset "
            "and ideally timestamp columns, e.g. what the kafka-segments reader wrote).",
        ),
    ] = None,
    source_export_format: Annotated[
        str,
        typer.Option(
            "--source-export-format",
            metavar="auto|parquet|avro|json|csv",
            help="auto, parquet, avro, json or csv.",
        ),
    ] = "auto",
    topic: Annotated[
        str | None, typer.Option("--topic", metavar="TOPIC", help="The topic to compare (segments source).")
    ] = None,
    isolation: Annotated[
        str,
        typer.Option(
            "--isolation",
            metavar="read_committed|read_uncommitted",
            help="How the pipeline's consumer reads the topic: read_committed (skips aborted transactions) or "
            "read_uncommitted.",
        ),
    ] = "read_committed",
    source_id: Annotated[
        str | None,
        typer.Option(
            "--source-id",
            metavar="ID_SPEC",
            help="The record identifier in the source: value:PATH (JSON field), key, header:NAME, field:COL.",
        ),
    ] = None,
    sink: Annotated[
        str | None,
        typer.Option(
            "--sink", metavar="DIR", help="The folder of files the pipeline wrote (searched recursively)."
        ),
    ] = None,
    sink_topic: Annotated[
        str | None,
        typer.Option(
            "--sink-topic",
            metavar="TOPIC",
            help="Instead of --sink: the pipeline's output topic, read from the same segments as --source "
            "(with --isolation: a transactional pipeline's committed output).",
        ),
    ] = None,
    sink_format: Annotated[
        str,
        typer.Option(
            "--sink-format", metavar="auto|parquet|avro|json|csv", help="auto, parquet, avro, json or csv."
        ),
    ] = "auto",
    sink_id: Annotated[
        str | None,
        typer.Option(
            "--sink-id",
            metavar="ID_SPEC",
            help="The identifier in the sink: field:COL, value:PATH, key or header:NAME.",
        ),
    ] = None,
    since: Annotated[
        str | None,
        typer.Option(
            "--from",
            metavar="TIME",
            help="Only source records at or after this time (ISO 8601, epoch seconds or epoch milliseconds).",
        ),
    ] = None,
    until: Annotated[
        str | None,
        typer.Option(
            "--to",
            metavar="TIME",
            help="Only source records before this time (ISO 8601, epoch seconds or epoch milliseconds).",
        ),
    ] = None,
    window: Annotated[
        str, typer.Option("--window", metavar="DURATION", help="Report window (tumbling, on record time).")
    ] = "1h",
    logs: Annotated[
        list[Path] | None,
        typer.Option(
            "--logs",
            metavar="FILE",
            help="Consumer/service log files (one per pod): rebalance events are shown next to each gap, and "
            "consumed-offset lines are checked for gaps and rewinds. Repeatable.",
        ),
    ] = None,
    offset_pattern: Annotated[
        str | None,
        typer.Option(
            "--offset-pattern",
            metavar="REGEX",
            help="Regex for the service's consumed-offset lines, with named groups partition, first, last "
            "(optional topic, pod). Default: lines like 'uploaded partition=logs-3 offsets=120-139'.",
        ),
    ] = None,
    log_timezone: Annotated[
        str,
        typer.Option("--log-timezone", metavar="ZONE", help="Time zone of log times written without one."),
    ] = "UTC",
    tolerance: Annotated[
        str,
        typer.Option(
            "--rebalance-tolerance", metavar="DURATION", help="How far from a gap a rebalance event is shown."
        ),
    ] = "5m",
    max_ids: Annotated[
        int, typer.Option("--max-ids", metavar="COUNT", min=0, help="Identifiers listed per missing range.")
    ] = 20,
    format: Annotated[OutputFormat, typer.Option("--format", "-f", help="text or json.")] = OutputFormat.text,
    master: Annotated[str, typer.Option("--master", metavar="URL", help="Spark master.")] = "local[2]",
) -> None:
    """Compare a topic with what a pipeline wrote: missing identifiers with their offset ranges, duplicates,
    per window and partition, rebalances next to each gap; check consumed-offset logs for gaps and rewinds.

    Exit code 1 when records are missing (from the sink, or never consumed per the logs), 0 otherwise, 2 on
    bad input.
    """
    from kafka_ops.qos.identifiers import IdSpecError, parse_id_spec
    from kafka_ops.qos.logs import LogFormatError, read_logs

    # the values first (one line naming the option), then what is missing
    window_ms = _option("--window", parse_span, window)
    tolerance_ms = _option("--rebalance-tolerance", parse_span, tolerance)
    from_ms = _option("--from", parse_now, since) if since else None
    to_ms = _option("--to", parse_now, until) if until else None
    if not source and not source_export and not logs:
        fail("give a source (--source segments or --source-export) and a --sink, or --logs to check")
    if source and source_export:
        fail("give either --source or --source-export, not both")
    if sink and not (source or source_export):
        fail("--sink needs a source to compare with (--source or --source-export)")
    if sink and sink_topic:
        fail("give either --sink or --sink-topic, not both")
    if sink_topic and not source:
        fail("--sink-topic reads the topic from the --source segments: give --source")
    if isolation not in ("read_committed", "read_uncommitted"):
        fail(f"--isolation must be read_committed or read_uncommitted, not {isolation!r}")
    if window_ms <= 0:
        fail("--window must be positive")
    specs = None
    if sink or sink_topic:
        if not source_id or not sink_id:
            fail("name the record identifier on both sides: --source-id and --sink-id")
        try:
            specs = parse_id_spec(source_id), parse_id_spec(sink_id)
        except IdSpecError as exc:
            fail(str(exc))
    from kafka_ops.audit.options import OptionError, check_input_file

    for p in logs or []:
        try:
            check_input_file(str(p))
        except OptionError as exc:
            fail(str(exc))
    events = []
    if logs:
        try:
            events = read_logs([str(p) for p in logs], offset_pattern, topic, log_timezone)
        except LogFormatError as exc:
            fail(str(exc))
    try:
        import pyarrow  # noqa: F401
        import pyspark  # noqa: F401

        from kafka_ops.spark import read_segments, spark_session
    except ImportError:
        fail(_SPARK_MISSING)
    _check_local_inputs(source or [], source_export, sink, topic)
    if sink_topic:
        _check_local_inputs(source or [], None, None, sink_topic)
    report = _run(
        spark_session, read_segments, source or [], source_export, source_export_format, topic, isolation, specs,
        sink, sink_format, window_ms, from_ms, to_ms, events, tolerance_ms, max_ids, master,
        sink_topic=sink_topic,
        show=format is OutputFormat.text and sys.stderr.isatty(),
    )  # fmt: skip
    show_notes()
    if format is OutputFormat.json:
        sys.stdout.write(json.dumps(report, indent=2) + "\n")
    else:
        _text(report)
    raise typer.Exit(1 if report["gate"]["failed"] else 0)


def _option(name: str, parse: Any, value: str) -> Any:
    try:
        result = parse(value)
    except ValueError as exc:
        fail(f"{name}: {exc}")
    if parse is parse_now:
        note_later(time_note(name, value))
    return result


def _check_local_inputs(source: list[str], export: str | None, sink: str | None, topic: str | None) -> None:
    """Bad local paths get one line here, before Spark starts."""
    from kafka_ops.engine.errors import EngineError
    from kafka_ops.qos.sinks import SinkError, detect_format
    from kafka_ops.spark.partitions import discover, local_path

    local = [s for s in source if local_path(s) is not None]
    if local:
        try:
            parts = discover(local, [topic] if topic else None)
        except EngineError as exc:
            fail(str(exc))
        if not parts and len(local) == len(source):
            fail(f"no partition{' of topic ' + topic if topic else ''} under {', '.join(local)}")
    for path in (export, sink):
        if path and local_path(path) is not None and not os.path.exists(local_path(path) or ""):
            fail(f"{path}: no such file or directory")
    if sink and local_path(sink) is not None:
        try:
            detect_format(sink)
        except SinkError as exc:
            fail(str(exc))


def _run(
    spark_session: Any,
    read_segments: Any,
    source: list[str],
    export: str | None,
    export_format: str,
    topic: str | None,
    isolation: str,
    specs: Any,
    sink: str | None,
    sink_format: str,
    window_ms: int,
    from_ms: int | None,
    to_ms: int | None,
    events: list[Any],
    tolerance_ms: int,
    max_ids: int,
    master: str,
    show: bool,
    sink_topic: str | None = None,
) -> dict[str, Any]:
    from rich.console import Console

    from kafka_ops.qos.compare import SourceError, attach_rebalances, compare, count_in_ranges
    from kafka_ops.qos.identifiers import IdSpecError
    from kafka_ops.qos.logs import CONSUMED
    from kafka_ops.qos.offsets import GAP, check
    from kafka_ops.qos.sinks import SinkError, read_files

    console = Console(stderr=True, quiet=not show)
    report: dict[str, Any] = {"version": 1, "inputs": {
        "source": source, "source_export": export, "topic": topic, "isolation": isolation, "sink": sink,
        "sink_format": sink_format, "sink_topic": sink_topic, "logs": sorted({e.file for e in events}),
    }}  # fmt: skip
    with console.status("starting Spark") as status:
        spark = spark_session(master=master)
        try:
            src_df = None
            if export:
                status.update(f"reading the export {export}")
                src_df = read_files(spark, export, export_format)
                if topic and "topic" in src_df.columns:
                    src_df = src_df.where(src_df.topic == topic)
            elif source:
                status.update("reading segments")
                src_df = read_segments(spark, source, isolation=isolation, topics=[topic] if topic else None)
            if (sink or sink_topic) and src_df is not None:
                status.update("comparing source and sink")
                if sink_topic:
                    sink_df = read_segments(spark, source, isolation=isolation, topics=[sink_topic])
                else:
                    sink_df = read_files(spark, sink, sink_format)
                result = compare(
                    src_df, specs[0], sink_df, specs[1], window_ms=window_ms, from_ms=from_ms, to_ms=to_ms,
                    max_ids=max_ids,
                )  # fmt: skip
                attach_rebalances(result["missing"]["ranges"], events, tolerance_ms)
                result["missing"]["ranges"] = [r.to_dict() for r in result["missing"]["ranges"]]
                report.update(result)
            consumed = [e for e in events if e.kind == CONSUMED]
            if events:
                status.update("checking consumed offsets")
                counter = None
                if src_df is not None:
                    # the source holds what the consumer gets (segments: no control records, no aborted ones
                    # under read_committed), so a gap holding none of its records is an offset hole, not a loss
                    visible = src_df

                    def counter(ranges: list[tuple[str, int, int, int]]) -> list[int]:
                        return count_in_ranges(visible, ranges)

                findings = check(events, counter)
                report["offsets"] = {
                    "events": len(events),
                    "consumed_lines": len(consumed),
                    "records_known": counter is not None,
                    "findings": [f.to_dict() for f in findings],
                }
        except (SinkError, SourceError, IdSpecError) as exc:
            fail(str(exc))
        except Exception as exc:  # Spark's own errors (a path Hadoop cannot read, a corrupt file): one line
            fail(_one_line(exc))
    reasons = []
    missing = report.get("missing", {}).get("records", 0)
    if missing:
        reasons.append(f"{missing} record(s) missing from the sink")
    gaps = [f for f in report.get("offsets", {}).get("findings", []) if f["kind"] == GAP]
    if gaps:
        n = sum(f["visible_records"] or 0 for f in gaps)
        reasons.append(f"{len(gaps)} gap(s) in consumed offsets" + (f" ({n} record(s))" if n else ""))
    report["gate"] = {"failed": bool(reasons), "reasons": reasons}
    return report


def _one_line(exc: Exception) -> str:
    text = str(exc).strip()
    for line in text.splitlines():
        line = line.strip()
        if "EngineError" in line or "SinkError" in line or "ValueError:" in line:
            return line.split(": ", 1)[-1]
    first = text.splitlines()[0] if text else type(exc).__name__
    return first[:300]


def _text(report: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    from kafka_ops.render.text import markup_safe as esc

    c = Console(width=max(120, Console().width), highlight=False)

    inp = report["inputs"]
    src = inp["source_export"] or ", ".join(inp["source"]) or "-"
    c.print(
        f"[bold]kafka-ops qos[/]: {esc(src)}"
        + (f" (topic {esc(inp['topic'])}, {esc(inp['isolation'])})" if inp["topic"] else "")
    )
    if "source" in report:
        s, k = report["source"], report["sink"]
        c.print(
            f"source: {s['records']} record(s) by {esc(s['id'])}, {s['first_timestamp']} .. {s['last_timestamp']}"
            + (f", {s['without_id']} without id" if s["without_id"] else "")
        )
        where = esc(f"topic {inp['sink_topic']}" if inp.get("sink_topic") else inp["sink"])
        c.print(
            f"sink:   {k['records']} row(s) by {esc(k['id'])} in {where}, {k['distinct_ids']} distinct id(s)"
            + (f", {k['ids_not_in_source']} not in the source" if k["ids_not_in_source"] else "")
            + (f", {k['without_id']} without id" if k["without_id"] else "")
        )
        m, d = report["missing"], report["duplicates"]
        c.print(
            f"missing: {m['records']} record(s) in {len(m['ranges'])} range(s); "
            f"duplicates: {d['ids']} id(s), {d['extra_copies']} extra cop(y/ies)"
        )
        if m["ranges"]:
            t = Table(title="missing from the sink")
            for col in ("partition", "offsets", "records", "record times", "ids", "rebalances near"):
                t.add_column(col)
            for r in m["ranges"]:
                ids = ", ".join(r["ids"][:3]) + (" …" if r["records"] > 3 else "")
                reb = "\n".join(
                    f"{'*' if e.get('during_skip') else ''}{str(e['time'])[11:23]} {e['pod']} {e['kind']} "
                    f"{','.join(e['partitions'])}".rstrip()
                    for e in r["rebalances"]
                )
                if r.get("skipped_by") and r["rebalances"]:
                    k = r["skipped_by"]
                    reb += f"\n(* before {str(k['time'])[11:23]}: {k['pod']} consumed past, at "
                    reb += f"{k['first_offset']}-{k['last_offset']})"
                times = f"{str(r['first_timestamp'])[:19]} .. {str(r['last_timestamp'])[11:19]}"
                t.add_row(*map(esc, (
                    f"{r['topic']}-{r['partition']}", f"{r['first_offset']}-{r['last_offset']}", str(r["records"]),
                    times, ids, reb or "-",
                )))  # fmt: skip
            c.print(t)
        if d["items"]:
            t = Table(title="duplicated in the sink")
            for col in ("id", "partition", "offset", "record time", "sink copies", "source copies"):
                t.add_column(col)
            for x in d["items"]:
                t.add_row(*map(esc, (
                    x["id"], f"{x['topic']}-{x['partition']}", str(x["offset"]), str(x["timestamp"])[:19],
                    str(x["sink_count"]), str(x["source_count"]),
                )))  # fmt: skip
            c.print(t)
        bad = [w for w in report["windows"] if w["missing"] or w["duplicated_ids"]]
        if bad:
            t = Table(
                title=f"windows of {report['window_ms'] // 60000} min with missing or duplicated records"
            )
            for col in ("window", "partition", "records", "missing", "duplicated ids"):
                t.add_column(col)
            for w in bad:
                t.add_row(*map(esc, (
                    str(w["start"])[:16], f"{w['topic']}-{w['partition']}", str(w["records"]), str(w["missing"]),
                    str(w["duplicated_ids"]),
                )))  # fmt: skip
            c.print(t)
    if "offsets" in report:
        o = report["offsets"]
        c.print(
            f"offset logs: {o['events']} event(s), {o['consumed_lines']} consumed-offset line(s), "
            f"{len(o['findings'])} finding(s)"
            + ("" if o["records_known"] else " (no source given: gaps may hold only markers)")
        )
        if o["findings"]:
            t = Table(title="consumed offsets")
            for col in ("kind", "partition", "pod", "offsets", "records", "time", "what"):
                t.add_column(col)
            for f in o["findings"]:
                t.add_row(*map(esc, (
                    f["kind"], f"{f['topic']}-{f['partition']}", f["pod"], f"{f['first_offset']}-{f['last_offset']}",
                    "?" if f["visible_records"] is None else str(f["visible_records"]), str(f["time"])[:19],
                    f["message"],
                )))  # fmt: skip
            c.print(t)
    g = report["gate"]
    c.print(
        "gate: [bold red]FAIL[/] — " + esc("; ".join(g["reasons"]))
        if g["failed"]
        else "gate: [bold green]pass[/]"
    )
