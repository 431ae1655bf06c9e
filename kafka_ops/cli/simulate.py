"""`kafka-ops simulate`."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from kafka_ops.cli.framework import Command, app, command_path, fail

MARKER = "# written by kafka-ops simulate"
DEFAULT_ROOT_BROKER_USER = "nobody"  # exists on Debian, RHEL, Alpine: `make demo` creates no user
# what the simulator writes under DIRECTORY that a real host also has
CONFIG_FILES = ("etc/kafka/server.properties", "etc/systemd/system/kafka.service")


LAYOUT = {"etc", "data", "var", "host.json"}  # the top-level entries simulate writes under its directory


def refuse_target(directory: Path, force: bool) -> str | None:
    """Why the simulator must not write into ``directory`` (None: it may).

    It writes etc/kafka, etc/systemd/system, var/log/kafka, data/ and host.json under the directory: into / that
    is the host's own broker configuration. So: a new or empty directory; with --force also one that holds an
    earlier simulation (host.json) or only simulate's own layout, never a real broker's server.properties."""
    shown = directory
    directory = Path(
        os.path.realpath(directory)
    )  # decide on what will be written: '..' and symlinks resolved
    if directory == Path("/"):
        return f"{shown}: is /: simulate writes etc/kafka, etc/systemd and data/ under its directory"
    if directory.exists() and not directory.is_dir():
        return f"{shown}: a file, not a directory"
    if not directory.exists() or not any(directory.iterdir()):
        return None
    if directory != Path(os.path.abspath(shown)):
        shown = Path(f"{shown} ({directory})")
    if not force:
        return (
            f"{shown}: not empty: simulate writes only into a new or empty directory (--force to write over an "
            "earlier simulation there)"
        )
    if not (directory / "host.json").is_file():
        foreign = sorted(e.name for e in directory.iterdir() if e.name not in LAYOUT)
        if foreign:
            return (
                f"{shown}: holds files simulate did not write ({', '.join(foreign[:3])}"
                f"{', ...' if len(foreign) > 3 else ''}): refusing even with --force; give a new directory"
            )
    for rel in CONFIG_FILES:
        p = directory / rel
        if os.path.lexists(p):
            from kafka_ops.engine.errors import EngineError
            from kafka_ops.engine.fileio import read_bytes

            try:  # its first line only; a link or a FIFO is not ours (and would block a plain read)
                first = read_bytes(str(p), 4096).decode("utf-8", "replace").splitlines()[:1]
            except EngineError:
                first = []
            if rel.endswith(".properties") and first != [MARKER]:
                return f"{p}: exists and was not written by kafka-ops simulate: refusing to overwrite it, even with --force"
    return None


@app.command(cls=Command)
def simulate(
    directory: Annotated[
        Path | None,
        typer.Argument(
            metavar="DIRECTORY",
            help="Where to write the simulated host: a new or empty directory (see --force). Not needed with "
            "--list-failures.",
        ),
    ] = None,
    failures: Annotated[
        list[str] | None,
        typer.Option(
            "--fail",
            metavar="NAME",
            help="Plant a failure (repeatable): a name from --list-failures, or 'all'.",
        ),
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
    log_dirs: Annotated[
        int, typer.Option("--log-dirs", metavar="COUNT", min=1, help="Number of log dirs.")
    ] = 2,
    scale: Annotated[
        float,
        typer.Option(
            "--scale", metavar="FACTOR", min=0.01, help="Multiply record counts (1 = a few MB; 4000 ~ 10 GB)."
        ),
    ] = 1.0,
    segment_bytes: Annotated[
        int,
        typer.Option(
            "--segment-bytes", metavar="BYTES", min=14, help="log.segment.bytes of the simulated broker."
        ),
    ] = 16 * 1024,
    kafka_version: Annotated[
        str,
        typer.Option(
            "--kafka-version",
            metavar="VERSION",
            help="Broker version the files imitate (>= 3.7 writes the JSON clean-shutdown marker).",
        ),
    ] = "3.7.0",
    broker_user: Annotated[
        str | None,
        typer.Option(
            "--broker-user",
            metavar="USER",
            help="chown the log dirs to this user (needs root; as root the default is nobody, an existing "
            "unprivileged user, so that the planted permission faults show as a broker sees them).",
        ),
    ] = None,
    now_ms: Annotated[
        str | None,
        typer.Option(
            "--now-ms",
            "--now",
            metavar="TIME",
            help="Simulated current time: epoch milliseconds, or ISO 8601 (UTC unless it gives an offset); "
            "default: now.",
        ),
    ] = None,
    seed: Annotated[int, typer.Option("--seed", metavar="NUMBER", help="Seed of the simulated data.")] = 7,
    force: Annotated[
        bool,
        typer.Option(
            "--force",
            help="Write over an earlier simulation in DIRECTORY (other files there stay); never into a directory "
            "with other files, over a real broker's server.properties, nor into /.",
        ),
    ] = False,
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
    if directory is None:
        fail(f"missing argument DIRECTORY (see {command_path()} --help)")
    why = refuse_target(directory, force)
    if why:
        fail(why)
    directory = Path(os.path.realpath(directory))
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
    from kafka_ops.audit.options import parse_now_ms

    try:
        now = parse_now_ms(now_ms) if now_ms is not None else int(time.time() * 1000)
    except ValueError as exc:
        fail(f"--now-ms: {exc}")
    spec = HostSpec(
        now_ms=now,
        log_dirs=log_dirs,
        topics=topics,
        kafka_version=kafka_version,
        segment_bytes=segment_bytes,
        running=running,
        failures=chosen,
        seed=seed,
    )
    chosen_user = None
    if not broker_user and os.geteuid() == 0:
        # as root the files would be root's and every permission fault planted invisible (root reads all): the
        # log dirs go to an existing unprivileged user, as a broker user owns them; nothing is created
        import pwd

        try:
            pwd.getpwnam(DEFAULT_ROOT_BROKER_USER)
            broker_user = chosen_user = DEFAULT_ROOT_BROKER_USER
        except KeyError:
            pass
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
    if chosen_user:
        typer.echo(f"  broker user: {chosen_user} (an existing user; --broker-user USER to choose)")
    for name, paths in sorted(host.planted.items()):
        typer.echo(f"  planted {name}: {', '.join(paths)}")
