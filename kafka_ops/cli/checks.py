"""`kafka-ops checks [ID]`: the check catalogue, and each check's doc page (as `ansible-lint -L` does)."""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer

from kafka_ops.audit import close_ids
from kafka_ops.cli.framework import Command, OutputFormat, app, fail


@app.command(cls=Command)
def checks(
    check_id: Annotated[
        str | None,
        typer.Argument(metavar="ID", help="A check id (PERM001, any letter case): print its doc page."),
    ] = None,
    format: Annotated[
        OutputFormat,
        typer.Option("--format", "-f", help="text, or json (the catalogue with each check's fields)."),
    ] = OutputFormat.text,
) -> None:
    """List every check with its severity and title, or print one check's doc page: the incident it prevents,
    what the broker does, how kafka-ops detects it, the fix, a bad and a good example.

    Exit codes: 0 done; 2 an unknown id (the line names the closest ones).
    """
    from kafka_ops.checks import doc_page, load_all

    catalogue = load_all()
    if check_id is not None:
        cid = check_id.strip().upper()
        if cid not in catalogue:
            near = close_ids(check_id.strip(), list(catalogue))
            hint = f"did you mean {', '.join(near)}?" if near else "`kafka-ops checks` lists them"
            fail(f"no check {check_id!r} ({hint})")
        page = doc_page(cid) or f"# {cid}\n\n{catalogue[cid].title}\n"
        sys.stdout.write(page if page.endswith("\n") else page + "\n")
        return
    if format is OutputFormat.json:
        rows = [
            {"id": c.id, "severity": c.severity, "scope": c.scope, "title": c.title, "incident": c.incident,
             "needs": list(c.needs)}
            for c in catalogue.values()
        ]  # fmt: skip
        sys.stdout.write(json.dumps(rows, indent=2) + "\n")
        return
    from kafka_ops.cli.framework import echo_wrapped

    width = max(len(c) for c in catalogue)
    for c in catalogue.values():  # the title wrapped under itself at COLUMNS (or the terminal's width)
        first = f"{c.id:<{width}}  {c.severity:<8}  "
        echo_wrapped(c.title, first, " " * len(first))
