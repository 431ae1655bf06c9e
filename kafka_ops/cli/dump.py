"""`kafka-ops dump`."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer

from kafka_ops.cli.framework import Command, OutputFormat, app, say


def _json_encoder() -> Callable[[object], str]:
    """``json.dumps(ev, default=str)``, its C encoder made once instead of once a line (a third of the time
    of ``--format json`` over records)."""
    c_make_encoder = getattr(json.encoder, "c_make_encoder", None)
    if c_make_encoder is None:  # no _json accelerator: the same output, slower
        return json.JSONEncoder(default=str).encode
    # the arguments JSONEncoder.iterencode passes for json.dumps' defaults and default=str
    enc = c_make_encoder({}, str, json.encoder.encode_basestring_ascii, None, ": ", ", ", False, False, True)
    return lambda ev: "".join(enc(ev, 0))


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
    from kafka_ops.engine.dump import DumpOptions, dump_path, render_text, without_record_metadata
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
    as_json = format is OutputFormat.json
    encode = _json_encoder()
    # batch and record lines (nearly all of them) are written in chunks; any other event writes the chunk first,
    # so what goes to stderr stays in order with stdout
    chunk: list[str] = []
    last_file, file_json = None, ""
    try:
        for path in targets:
            for ev in dump_path(path, opts):
                t = ev["type"]
                if skip_record_metadata and t == "record":
                    ev = without_record_metadata(ev, as_json)
                elif t == "record" and len(ev) == 8 and not ev["header_keys"]:
                    # the common record (no header, key, payload, decoded value or control type): only whole
                    # numbers beside the file name, so written here, the same text as encode() or printable()
                    if as_json:
                        if ev["file"] is not last_file:
                            last_file, file_json = ev["file"], encode(ev["file"])
                        chunk.append(
                            f'{{"type": "record", "file": {file_json}, "offset": {ev["offset"]:d}, "timestamp": '
                            f'{ev["timestamp"]:d}, "key_size": {ev["key_size"]:d}, "value_size": {ev["value_size"]:d}, '
                            f'"sequence": {ev["sequence"]:d}, "header_keys": []}}'
                        )
                    else:
                        chunk.append(render_text(ev))
                    if len(chunk) >= 1024:
                        chunk.append("")
                        out.write("\n".join(chunk))
                        chunk.clear()
                    continue
                if t == "record" or t == "batch":
                    # a file name, key or payload cannot drive the terminal or add a line
                    text = encode(ev) if as_json else render_text(ev)
                    if text is not None:
                        chunk.append(text if as_json else printable(text))
                    if len(chunk) >= 1024:
                        chunk.append("")
                        out.write("\n".join(chunk))
                        chunk.clear()
                    continue
                if chunk:
                    chunk.append("")
                    out.write("\n".join(chunk))
                    chunk.clear()
                if t == "error":
                    errors += 1
                    pos = f" at byte {ev['position']}:" if ev.get("position") is not None else ""
                    say(f"{ev['file']}:{pos} {ev['error']}")
                    if as_json:
                        out.write(encode(ev) + "\n")
                    continue
                if t == "tail":
                    errors += 1
                    say(f"{ev['file']}: at byte {ev['position']}: {ev['message']}")
                elif (t == "index_issue" and ev.get("severity") == "error") or (
                    t == "sanity_check" and not ev["passed"]
                ):
                    errors += 1
                if as_json:
                    out.write(encode(ev) + "\n")
                else:
                    line = render_text(ev)
                    if line is not None:
                        out.write(printable(line) + "\n")
    finally:  # what was read before an error is printed before its message
        if chunk:
            chunk.append("")
            out.write("\n".join(chunk))
    if errors:
        raise typer.Exit(1)
