"""`kafka-ops forecast`: the retention forecast alone (a thin layer over kafka_ops.broker.forecast)."""

from __future__ import annotations

import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, TextIO

import typer

from kafka_ops.audit.cmdoptions import INPUTS
from kafka_ops.cli.audit import GIVEN, Given, build_options, with_options
from kafka_ops.cli.framework import Command, app, fail, note_later, show_notes

# the audit's inputs but --expect-mount (only DIR001, a check, reads it)
FORECAST_INPUTS = tuple(d for d in INPUTS if d != "expect_mount")


class ForecastFormat(StrEnum):
    table = "table"
    json = "json"
    csv = "csv"


@app.command(cls=Command)
@with_options("inputs", FORECAST_INPUTS)
def forecast(
    inputs: Given = GIVEN,
    format: Annotated[
        ForecastFormat,
        typer.Option("--format", "-f", help="table, json (one document, streamed) or csv (streamed rows)."),
    ] = ForecastFormat.table,
    every_check: Annotated[
        bool,
        typer.Option(
            "--every-check",
            help="Topic sizes at every retention check of the horizon, not only at those that delete something.",
        ),
    ] = False,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", metavar="FILE", help="Write to this file.")
    ] = None,
    topic: Annotated[
        list[str] | None,
        typer.Option(
            "--topic",
            "-t",
            metavar="TOPIC",
            help="Forecast only this topic (repeat for more); the other partitions are not read.",
        ),
    ] = None,
) -> None:
    """Forecast retention: for every segment the timestamp the broker will compare and where it comes from,
    when retention deletes it and why (log start, retention.bytes, retention.ms), and each topic's size at the
    retention checks over the horizon, assuming no new data arrives.

    Exit codes: 0 done; 2 bad usage or unreadable input.
    """
    from kafka_ops.broker.forecast import iter_forecasts, write_csv, write_json
    from kafka_ops.cli.framework import check_output
    from kafka_ops.engine.errors import EngineError
    from kafka_ops.engine.outputs import OutputError, output_file
    from kafka_ops.facts.collect import gather

    check_output(output)
    opts = build_options(**inputs)
    if not opts.log_dirs and not opts.server_properties and not Path("/etc/kafka/server.properties").exists():
        fail("no log dirs to forecast: give --log-dir or --server-properties")
    try:
        host = gather(opts)
        if not host.log_dirs:
            fail("no log dirs to forecast: log.dirs is empty and no --log-dir was given")
        topics = _topics(host, topic)
        show_notes()

        def write(out: TextIO) -> None:
            if format is ForecastFormat.json:
                write_json(out, host, iter_forecasts(host, topics=topics), every_check)
            elif format is ForecastFormat.csv:
                write_csv(out, host, iter_forecasts(host, topics=topics), every_check)
            else:
                _table(host, out, every_check, out is sys.stdout and sys.stderr.isatty(), topics)

        if output is None:
            write(sys.stdout)
            return
        # never through a link, in a dir no other user can change, renamed into place when whole
        try:
            with output_file(str(output)) as f:
                write(f)
        except OutputError as exc:
            fail(str(exc))
    except EngineError as exc:
        fail(str(exc))


def _topics(host: Any, wanted: list[str] | None) -> frozenset[str] | None:
    """The --topic filter. A topic with no partition in the log dirs (a typo, or not a replica on this broker)
    is named in a note: the forecast of the others goes on."""
    if not wanted:
        return None
    present = {n.topic for ldf in host.log_dirs for _, n in ldf.scan.partition_names}
    missing = sorted(set(wanted) - present)
    if missing:
        dirs = ", ".join(ldf.path for ldf in host.log_dirs)
        note_later(f"no partition of topic(s) {', '.join(map(repr, missing))} in the log dirs ({dirs})")
    return frozenset(wanted)


WIDE = 110  # columns from which the forecast is two tables; narrower, a block per segment and per topic


def _wide(console: Any, rows: list[tuple[str, ...]], sizes: list[tuple[str, ...]], horizon: str) -> None:
    from rich.table import Table

    from kafka_ops.render.text import markup_safe as esc

    t = Table(
        title="Segments deleted within the horizon, held back, or with a fallback or future timestamp",
        expand=True,
    )
    for col in ("partition", "segment", "size", "largest timestamp", "source", "deleted", "why"):
        t.add_column(col, overflow="fold")
    for r in rows:
        t.add_row(*(esc(c) for c in r))
    if rows:
        console.print(t)
    else:
        console.print("No segment is deleted within the horizon.")
    tt = Table(title="Topic size over the horizon", expand=True)
    for col in ("topic", "partitions", "size now", "deleted", f"size at +{horizon}", "drops"):
        tt.add_column(col, overflow="fold")
    for r in sizes:
        tt.add_row(*(esc(c) for c in r))
    console.print(tt)


def _narrow(console: Any, rows: list[tuple[str, ...]], sizes: list[tuple[str, ...]], horizon: str) -> None:
    """The two tables as blocks of wrapped lines (a table of 7 columns in 80 breaks every cell)."""
    import textwrap

    from rich.text import Text

    from kafka_ops.engine.shell import printable

    def say(text: str, first: str = "", indent: str = "    ", style: str = "") -> None:
        for line in textwrap.wrap(
            printable(text),  # a name's control characters and undecodable bytes shown escaped console.width, initial_indent=first, subsequent_indent=indent, break_long_words=False,
            break_on_hyphens=False,
        ):  # fmt: skip
            console.print(Text(line, style=style), soft_wrap=True)

    if rows:
        say(
            "Segments deleted within the horizon, held back, or with a fallback or future timestamp:",
            style="bold",
        )
        for part, seg, size, ts, source, when, why in rows:
            say(f"{part} segment {seg} ({size}): deleted {when}", "  ", "      ")
            say(f"largest timestamp {ts} ({source}){'; ' + why if why else ''}", "      ", "      ")
    else:
        say("No segment is deleted within the horizon.")
    say("Topic size over the horizon:", style="bold")
    for name, parts, now, deleted, after, drops in sizes:
        say(
            f"{name}: {parts} partition(s), {now} now, {deleted} deleted, {after} at +{horizon}",
            "  ",
            "      ",
        )
        if drops != "-":
            say(f"drops: {drops}", "      ", "      ")


def _table(
    host: Any, out: TextIO, every_check: bool, progress: bool, topics: frozenset[str] | None = None
) -> None:
    from rich.console import Console

    from kafka_ops.broker.forecast import HostForecast, iter_forecasts
    from kafka_ops.broker.timestamps import iso
    from kafka_ops.cli.framework import screen_width
    from kafka_ops.render.text import markup_safe as esc
    from kafka_ops.units import human_bytes, human_ms

    # COLUMNS, the terminal's width, or 80 (tables fold their cells to fit); a file: 160
    console = Console(file=out, width=screen_width() if out is sys.stdout else 160)
    hf = HostForecast(host.now_ms, host.horizon_ms)
    end = host.now_ms + host.horizon_ms
    rows: list[tuple[str, ...]] = []
    errors: list[dict[str, Any]] = []

    def at(ms: int | None) -> str:
        if ms is None:
            return "never (without new data)"
        if ms <= host.now_ms:
            return "first check after start" if host.broker_state != "running" else "next check"
        return f"{iso(ms)} (+{human_ms(ms - host.now_ms)})"

    def consume(fcs: Any) -> None:
        for fc in fcs:
            hf.add(fc)
            errors.extend(fc.errors)
            for s in fc.segments:
                gone = s.delete_at is not None and s.delete_at <= end
                odd = s.source not in ("time_index", "log", "active_segment")
                future = s.timestamp is not None and s.timestamp > host.now_ms + 3600 * 1000
                if not (gone or odd or future or s.held_by is not None):
                    continue
                why = s.reason or (s.note or "")
                if s.held_by is not None:
                    why += f" (held by segment {s.held_by})"
                when = (
                    at(s.delete_at)
                    if gone or s.delete_at is None
                    else f"after the horizon: {iso(s.delete_at)}"
                )
                ts = "unknown" if s.timestamp is None else iso(s.timestamp)
                row = (
                    f"{fc.topic}-{fc.partition}",
                    str(s.base),
                    human_bytes(s.size),
                    ts,
                    s.source,
                    when,
                    why,
                )
                rows.append(row)

    if progress:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

        with Progress(
            TextColumn("[bold]scanning[/] {task.description}"), BarColumn(), MofNCompleteColumn(),
            console=Console(stderr=True), transient=True,
        ) as bar:  # fmt: skip
            tasks: dict[str, Any] = {}

            def tick(log_dir: str, done: int, total: int) -> None:
                if log_dir not in tasks:
                    tasks[log_dir] = bar.add_task(esc(log_dir), total=total)
                bar.update(tasks[log_dir], completed=done)

            consume(iter_forecasts(host, tick, topics))
    else:
        consume(iter_forecasts(host, topics=topics))

    console.print(
        f"[bold]kafka-ops forecast[/bold] of {esc(host.host)} at {iso(host.now_ms)}, horizon {human_ms(host.horizon_ms)}"
        f" — broker {host.broker_state}; assuming no new data arrives"
    )
    if host.configs.assumed:  # said once, before any deletion it decides (the audit's next_start.config_note)
        console.print(
            f"[yellow]Retention assumes the broker's defaults for every topic: {esc(host.configs.assumed)}.[/yellow]"
        )
    sizes = []
    for name in sorted(hf.topics):
        tf = hf.topics[name]
        drops = "; ".join(
            f"{at(p['at_ms'])}: -{human_bytes(p['deleted_bytes'])} -> {human_bytes(p['bytes'])}"
            for p in tf.series(every_check)
            if p["deleted_bytes"] or every_check
        )
        sizes.append((
            name, str(tf.partitions), human_bytes(tf.bytes_now), human_bytes(tf.deleted_bytes),
            human_bytes(tf.bytes_now - tf.deleted_bytes), drops or "-",
        ))  # fmt: skip
    if console.width < WIDE:
        _narrow(console, rows, sizes, human_ms(host.horizon_ms))
    else:
        _wide(console, rows, sizes, human_ms(host.horizon_ms))
    from kafka_ops.broker.forecast import host_errors

    for e in host_errors(host) + errors:
        console.print(f"  [yellow]could not read {esc(e.get('file'))}: {esc(e.get('error'))}[/yellow]")
