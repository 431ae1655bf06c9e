"""The ``kafka-ops`` command: a thin layer over the library (kafka_ops.dump, kafka_ops.simulator, ...)."""

from __future__ import annotations

import json
import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from kafka_ops import __version__

app = typer.Typer(
    name="kafka-ops",
    help="Say what a Kafka broker will do with the files on its disks at its next start, why, and the fix.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)


class OutputFormat(StrEnum):
    text = "text"
    json = "json"


def fail(message: str, code: int = 2) -> None:
    """One line on stderr, then exit: bad input never gets a traceback."""
    typer.echo(f"kafka-ops: {message}", err=True)
    raise typer.Exit(code)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"kafka-ops {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """kafka-ops: preflight and remediation for self-managed Kafka brokers."""


@app.command()
def dump(
    paths: Annotated[list[Path], typer.Argument(help="Files, partition dirs or whole log dirs.")],
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
        int | None, typer.Option("--max-bytes", help="Read at most this many bytes of each .log.")
    ] = None,
    max_entries: Annotated[
        int | None,
        typer.Option(
            "--max-index-entries", help="List at most this many entries per index (all are verified)."
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
                pos = f" at byte {ev['position']}" if ev.get("position") is not None else ""
                typer.echo(
                    f"kafka-ops: {ev['file']}:{pos} {ev['error']}"
                    if pos
                    else f"kafka-ops: {ev['file']}: {ev['error']}",
                    err=True,
                )
                if format is OutputFormat.json:
                    out.write(json.dumps(ev, default=str) + "\n")
                continue
            if ev["type"] == "tail":
                errors += 1
                typer.echo(f"kafka-ops: {ev['file']}: at byte {ev['position']}: {ev['message']}", err=True)
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


@app.command()
def simulate(
    directory: Annotated[Path, typer.Argument(help="Where to write the simulated host (created).")],
    failures: Annotated[
        list[str] | None,
        typer.Option("--fail", help="Plant a failure (repeatable): a name from --list-failures, or 'all'."),
    ] = None,
    list_failures: Annotated[
        bool, typer.Option("--list-failures", help="List the failures that can be planted.")
    ] = False,
    running: Annotated[
        bool,
        typer.Option(
            "--running", help="Leave the host as a running broker leaves it (no clean-shutdown marker)."
        ),
    ] = False,
    log_dirs: Annotated[int, typer.Option("--log-dirs", min=1, help="Number of log dirs.")] = 2,
    scale: Annotated[
        float, typer.Option("--scale", min=0.01, help="Multiply record counts (1 = a few MB; 4000 ~ 10 GB).")
    ] = 1.0,
    segment_bytes: Annotated[
        int, typer.Option("--segment-bytes", help="log.segment.bytes of the simulated broker.")
    ] = 16 * 1024,
    kafka_version: Annotated[
        str,
        typer.Option(
            "--kafka-version",
            help="Broker version the files imitate (>= 3.7 writes the JSON clean-shutdown marker).",
        ),
    ] = "3.7.0",
    broker_user: Annotated[
        str | None, typer.Option("--broker-user", help="chown the log dirs to this user (needs root).")
    ] = None,
    now_ms: Annotated[
        int | None, typer.Option("--now-ms", help="Simulated current time, epoch ms (default: now).")
    ] = None,
    seed: Annotated[int, typer.Option("--seed")] = 7,
) -> None:
    """Write a broker host as a real broker leaves it: log dirs, segments of real v2 batches, indexes,
    checkpoints, markers, server.properties, a systemd unit and broker logs, with the seeds' failures planted."""
    import dataclasses
    import time

    from kafka_ops.simulator.host import Failures, HostSpec, default_topics, simulate_host

    names = [f.name for f in dataclasses.fields(Failures)]
    if list_failures:
        for f in dataclasses.fields(Failures):
            typer.echo(f.name)
        raise typer.Exit()
    chosen = Failures()
    for name in failures or []:
        if name == "all":
            chosen = Failures.all()
        elif name.replace("-", "_") in names:
            setattr(chosen, name.replace("-", "_"), True)
        else:
            fail(f"unknown failure '{name}' (choose from: {', '.join(names)}, all)")
    topics = default_topics()
    for t in topics:
        t.records_per_partition = max(1, int(t.records_per_partition * scale))
    spec = HostSpec(
        now_ms=now_ms if now_ms is not None else int(time.time() * 1000),
        log_dirs=log_dirs,
        topics=topics,
        kafka_version=kafka_version,
        segment_bytes=segment_bytes,
        running=running,
        failures=chosen,
        seed=seed,
    )
    if broker_user:
        import pwd

        try:
            pw = pwd.getpwnam(broker_user)
        except KeyError:
            fail(f"no such user: {broker_user}")
        spec.broker_user = broker_user
        spec.broker_uid, spec.broker_gid = pw.pw_uid, pw.pw_gid
    try:
        host = simulate_host(str(directory), spec)
    except OSError as exc:
        fail(f"{exc.filename or directory}: {(exc.strerror or str(exc)).lower()}")
    typer.echo(f"simulated broker host in {host.root}")
    typer.echo(f"  server.properties: {host.server_properties}")
    typer.echo(f"  log dirs: {', '.join(host.log_dirs)}")
    for name, paths in sorted(host.planted.items()):
        typer.echo(f"  planted {name}: {', '.join(paths)}")


def main() -> None:
    try:
        app()
    except KeyboardInterrupt:
        typer.echo("kafka-ops: interrupted", err=True)
        sys.exit(130)
    except BrokenPipeError:
        sys.exit(0)


if __name__ == "__main__":
    main()
