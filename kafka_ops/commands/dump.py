"""`kafka-ops dump`."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from kafka_ops.commands import Command, OutputFormat, app, say


@app.command(cls=Command)
def dump(
    paths: Annotated[
        list[Path], typer.Argument(metavar="PATH", help="Files, partition dirs or whole log dirs.")
    ],
    format: Annotated[
        OutputFormat, typer.Option("--format", "-f", help="text, or json (one object per line).")
    ] = OutputFormat.text,
    records: Annotated[
        bool, typer.Option("--records", "--deep-iteration", help="Also print every record.")
    ] = False,
    payloads: Annotated[
        bool,
        typer.Option(
            "--payloads", "--print-data-log", help="Print keys, values and headers (implies --records)."
        ),
    ] = False,
    no_decode: Annotated[
        bool, typer.Option("--no-decode", help="Do not decode __consumer_offsets / __transaction_state.")
    ] = False,
    no_verify: Annotated[
        bool,
        typer.Option("--no-verify-index", help="List index entries without checking them against the .log."),
    ] = False,
    max_bytes: Annotated[
        int | None,
        typer.Option(
            "--max-bytes", metavar="BYTES", min=1, help="Read at most this many bytes of each .log."
        ),
    ] = None,
    max_entries: Annotated[
        int | None,
        typer.Option(
            "--max-index-entries",
            metavar="COUNT",
            min=0,
            help="List at most this many entries per index (all are verified).",
        ),
    ] = None,
) -> None:
    """Print what kafka-dump-log.sh prints, and what it misses: verified index entries, zero padding,
    torn or CRC-invalid tails with what recovery truncates, decoded internal topics, aborted transactions.

    Exit code 1 when any file could not be read or holds an error; the other files are still dumped.
    """
    from kafka_ops.dump import DumpOptions, dump_path, render_text

    opts = DumpOptions(
        records=records or payloads,
        payloads=payloads,
        decode=not no_decode,
        verify_indexes=not no_verify,
        max_bytes=max_bytes,
        max_index_entries=max_entries,
    )
    errors = 0
    out = sys.stdout
    for path in paths:
        for ev in dump_path(str(path), opts):
            if ev["type"] == "error":
                errors += 1
                pos = f" at byte {ev['position']}:" if ev.get("position") is not None else ""
                say(f"{ev['file']}:{pos} {ev['error']}")
                if format is OutputFormat.json:
                    out.write(json.dumps(ev, default=str) + "\n")
                continue
            if ev["type"] == "tail":
                errors += 1
                say(f"{ev['file']}: at byte {ev['position']}: {ev['message']}")
            elif ev["type"] == "index_issue" and ev.get("severity") == "error":
                errors += 1
            if format is OutputFormat.json:
                out.write(json.dumps(ev, default=str) + "\n")
            else:
                line = render_text(ev)
                if line is not None:
                    out.write(line + "\n")
    if errors:
        raise typer.Exit(1)
