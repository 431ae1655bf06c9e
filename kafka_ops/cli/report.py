"""`kafka-ops report`: one self-contained HTML page from audit reports (a fleet page from several)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from kafka_ops.cli.framework import Command, app, fail


def write_html(reports: list[dict], sources: list[str], output: Path) -> str:  # type: ignore[type-arg]
    """Write the page; the path written, as it resolved (what is printed: a link on the way is not hidden)."""
    from kafka_ops.engine.outputs import OutputError, check_target, output_file
    from kafka_ops.render.report import render

    page = render(reports, sources)
    try:  # never through a link, in a dir no other user can change (kafka_ops.engine.outputs)
        real = check_target(str(output))
        with output_file(real) as f:
            f.write(page)
    except OutputError as exc:
        fail(str(exc))
    return real


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
    from kafka_ops.cli.framework import check_output
    from kafka_ops.engine.shell import printable
    from kafka_ops.render.report import ReportError, load_report

    check_output(output)
    docs = []
    for path in reports:
        try:
            docs.append(load_report(path))
        except ReportError as exc:
            fail(str(exc))
    real = write_html(docs, [str(p) for p in reports], output)
    n = sum(len(d["findings"]) for d in docs)
    typer.echo(f"wrote {printable(real)}: {len(docs)} report(s), {n} finding(s)")
