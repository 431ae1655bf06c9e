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
        list[Path] | None,
        typer.Argument(metavar="PATH", help="Files, partition dirs or whole log dirs.", show_default=False),
    ] = None,
    files: Annotated[
        list[str] | None,
        typer.Option(
            "--files",
            help="Comma-separated files or dirs (kafka-dump-log.sh's name; adds to PATHS).",
            show_default=False,
        ),
    ] = None,
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
    verify_index_only: Annotated[
        bool,
        typer.Option("--verify-index-only", help="Verify indexes against the .log without listing entries."),
    ] = False,
    index_sanity_check: Annotated[
        bool,
        typer.Option(
            "--index-sanity-check",
            help="For indexes, only run Kafka's OffsetIndex/TimeIndex sanity check (exit 1 when one fails).",
        ),
    ] = False,
    offsets_decoder: Annotated[
        bool,
        typer.Option(
            "--offsets-decoder",
            help="Decode every record as a __consumer_offsets record, whatever its topic (implies --print-data-log).",
        ),
    ] = False,
    transaction_log_decoder: Annotated[
        bool,
        typer.Option(
            "--transaction-log-decoder",
            help="Decode every record as a __transaction_state record (implies --print-data-log).",
        ),
    ] = False,
    cluster_metadata_decoder: Annotated[
        bool,
        typer.Option(
            "--cluster-metadata-decoder",
            help="Decode every record as a KRaft __cluster_metadata record: its type, version and fields "
            "(implies --print-data-log; records of __cluster_metadata-0 are decoded without it).",
        ),
    ] = False,
    skip_record_metadata: Annotated[
        bool,
        typer.Option(
            "--skip-record-metadata",
            help="Print records without their metadata (offset, timestamp, sizes, sequence, headers): only the "
            "key and payload with --print-data-log, and what a decoder decoded. JSON keeps the offset.",
        ),
    ] = False,
) -> None:
    """Print what kafka-dump-log.sh prints, and what it misses: verified index entries, zero padding,
    torn or CRC-invalid tails with what recovery truncates, decoded internal topics, aborted transactions.

    Exit code 1 when any file could not be read or holds an error; the other files are still dumped.
    """
    from kafka_ops.dump import DumpOptions, dump_path, render_text, without_record_metadata
    from kafka_ops.engine.internal_topics import CONSUMER_OFFSETS, TRANSACTION_STATE
    from kafka_ops.engine.metadata_records import CLUSTER_METADATA
    from kafka_ops.engine.shell import printable

    targets = [str(p) for p in paths or []] + [f for arg in files or [] for f in arg.split(",") if f]
    if not targets:
        raise typer.BadParameter("give files or dirs, as arguments or with --files a,b,c")
    chosen = [
        (name, topic)
        for name, topic, given in (
            ("--offsets-decoder", CONSUMER_OFFSETS, offsets_decoder),
            ("--transaction-log-decoder", TRANSACTION_STATE, transaction_log_decoder),
            ("--cluster-metadata-decoder", CLUSTER_METADATA, cluster_metadata_decoder),
        )
        if given
    ]
    if len(chosen) > 1:
        raise typer.BadParameter(f"{' and '.join(n for n, _ in chosen)} exclude each other")
    decoder = chosen[0][1] if chosen else None
    # kafka-dump-log.sh: a decoder implies --print-data-log, which implies --deep-iteration
    payloads = payloads or decoder is not None
    opts = DumpOptions(
        records=records or payloads,
        payloads=payloads,
        decode=not no_decode,
        verify_indexes=not no_verify,
        max_bytes=max_bytes,
        max_index_entries=0 if verify_index_only else max_entries,
        decoder=decoder,
        sanity_only=index_sanity_check,
    )
    errors = 0
    out = sys.stdout
    for path in targets:
        for ev in dump_path(path, opts):
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
            elif (ev["type"] == "index_issue" and ev.get("severity") == "error") or (
                ev["type"] == "sanity_check" and not ev["passed"]
            ):
                errors += 1
            if skip_record_metadata and ev["type"] == "record":
                ev = without_record_metadata(ev, format is OutputFormat.json)
            if format is OutputFormat.json:
                out.write(json.dumps(ev, default=str) + "\n")
            else:
                line = render_text(ev)
                if line is not None:  # a file name, key or payload cannot drive the terminal or add a line
                    out.write(printable(line) + "\n")
    if errors:
        raise typer.Exit(1)
