"""`kafka-ops report`: one self-contained HTML page from audit reports (a fleet page from several)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from kafka_ops.cli.framework import Command, app, fail


def write_html(reports: list[dict], sources: list[str], output: Path) -> None:  # type: ignore[type-arg]
    from kafka_ops.render.report import render

    page = render(reports, sources)
    try:
        output.write_text(page, encoding="utf-8")
    except OSError as exc:
        fail(f"{output}: cannot write: {(exc.strerror or str(exc)).lower()}")


@app.command(cls=Command)
def report(
    reports: Annotated[
        list[Path],
        typer.Argument(
            metavar="REPORT",
            help="Audit reports (`kafka-ops audit --format json`); several make a fleet page.",
        ),
    ],
    output: Annotated[
        Path, typer.Option("--output", "-o", metavar="FILE", help="The HTML file to write.")
    ] = Path("report.html"),
) -> None:
    """Write one HTML page that opens offline: the gate's verdict, the findings by check with their doc pages and
    fixes, the retention forecast and each topic's size over time as charts, disk use and recovery per log dir,
    and for several hosts a host by check matrix.
    """
    from kafka_ops.render.report import ReportError, load_report

    docs = []
    for path in reports:
        try:
            docs.append(load_report(path))
        except ReportError as exc:
            fail(str(exc))
    write_html(docs, [str(p) for p in reports], output)
    n = sum(len(d["findings"]) for d in docs)
    typer.echo(f"wrote {output}: {len(docs)} report(s), {n} finding(s)")
