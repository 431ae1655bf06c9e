"""`kafka-ops logs`: what the broker's own logs say (cleaner deaths, index rebuilds, zero-timestamp deletions,
unclean-shutdown recoveries), and `--follow` for a recovery under way."""

from __future__ import annotations

import json
import os
import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer

from kafka_ops.cli.framework import Command, app, fail, say
from kafka_ops.units import seconds_parser


class LogsFormat(StrEnum):
    table = "table"
    json = "json"


def _eta_text(load: Any) -> str:
    eta = load.eta_seconds()
    if eta is None:
        return "time left: estimating"
    if eta < 120:
        return f"~{eta:.0f} s left"
    if eta < 7200:
        return f"~{eta / 60:.0f} min left"
    return f"~{eta / 3600:.1f} h left"


def _describe(load: Any) -> str:
    unclean = load.unclean_dirs
    what = "recovering" if unclean else "loading"
    dirs = f"{len(load.dirs)} log dir(s)" if load.dirs else "logs"
    extra = f", {load.segments_recovered} segment(s) recovered" if load.segments_recovered else ""
    return f"{what} {dirs}{extra}"


def _summary(status: str, load: Any) -> dict[str, Any]:
    d = load.to_dict() if load is not None else {}
    d["status"] = status
    return d


def _summary_line(status: str, load: Any) -> str:
    if load is None:
        return {
            "timeout": "no log loading seen in the file before the timeout",
            "interrupted": "interrupted before any log loading was seen",
        }.get(status, f"{status}: no log loading seen")
    total = load.total
    progress = f"{load.done}/{total} logs" if total is not None else f"{load.done} logs"
    unclean = f", unclean: {', '.join(load.unclean_dirs)}" if load.unclean_dirs else ""
    segs = f", {load.segments_recovered} segment(s) recovered" if load.segments_recovered else ""
    took = f" in {load.duration_ms / 1000:.1f} s" if load.duration_ms is not None else ""
    head = {
        "completed": f"loading complete: {progress}{took}",
        "failed": f"loading failed: {load.failed} ({progress})",
        "timeout": f"timeout: loading not complete, {progress}",
        "interrupted": f"interrupted: {progress}",
    }[status]
    eta = f", {_eta_text(load)}" if status in ("timeout", "interrupted") and total is not None else ""
    return f"{head}{unclean}{segs}{eta}"


def _follow(
    path: Path,
    fmt: LogsFormat,
    timeout: float | None,
    total: int | None,
    log_dir: list[Path] | None,
    poll: float,
) -> None:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from kafka_ops.facts.brokerlogs import FollowResult, count_logs, follow

    fallback = count_logs([str(d) for d in log_dir]) if log_dir else None
    console = Console(stderr=True)
    last: dict[str, Any] = {}
    with Progress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[eta]}"),
        TimeElapsedColumn(), console=console, transient=False,
    ) as bar:  # fmt: skip
        task = bar.add_task(f"waiting for log loading in {path}", total=None, eta="")

        def update(load: Any) -> None:
            last["load"] = load
            bar.update(
                task, description=_describe(load), total=load.total, completed=load.done, eta=_eta_text(load)
            )

        try:
            result = follow(
                str(path), update, timeout_s=timeout, poll_s=poll, total=total, total_fallback=fallback
            )
        except KeyboardInterrupt:
            result = FollowResult("interrupted", last.get("load"))
        if result.load is not None:
            update(result.load)
    if fmt is LogsFormat.json:
        sys.stdout.write(json.dumps(_summary(result.status, result.load), indent=2) + "\n")
    else:
        typer.echo(_summary_line(result.status, result.load))
    raise typer.Exit(result.exit_code)


def _table(report: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from kafka_ops.cli.framework import screen_width
    from kafka_ops.render.text import markup_safe as esc

    c = Console(width=screen_width())  # COLUMNS, the terminal's, or 80: tables fold their cells to fit
    s = report["summary"]
    versions = ", ".join(sorted({v["version"] for v in report["versions"]})) or "unknown"
    read = len(report["files"]) - len(report["unrecognised"])
    c.print(f"[bold]broker logs[/]: {read} file(s) read, Kafka {esc(versions)}")
    narrow = c.width < 110  # a block per cleaner death: five columns in 80 break every cell

    def say(text: str, first: str = "", indent: str = "      ", style: str = "") -> None:
        import textwrap

        from kafka_ops.engine.shell import printable

        for line in textwrap.wrap(
            printable(text), c.width, initial_indent=first, subsequent_indent=indent, break_long_words=False,
            break_on_hyphens=False,
        ):  # fmt: skip
            c.print(Text(line, style=style), soft_wrap=True)

    for u in report["unrecognised"]:
        say(f"nothing recognised in {u['file']}: {u['error']}", indent="  ", style="yellow")
    if report["cleaner_deaths"] and narrow:
        say("log-cleaner thread deaths:", style="bold")
        for d in report["cleaner_deaths"]:
            state = "DEAD now" if d["dead_now"] else f"restarted: {d['restart_evidence']}"
            say(f"{d['thread']} died at {d['died_at']}: {state}", "  ", style="red" if d["dead_now"] else "")
            say(f"{d['exception'] or '?'}: {d['detail'] or ''}".strip(), "      ")
            if d["log"]:
                say(f"cleaning {d['log']} segment {d['segment']} ({d['deletes']} deletes)", "      ")
    elif report["cleaner_deaths"]:
        t = Table(title="log-cleaner thread deaths")
        t.add_column("thread", no_wrap=True)
        t.add_column("died at", no_wrap=True)
        for col in ("exception", "cleaning", "state"):
            t.add_column(col)
        for d in report["cleaner_deaths"]:
            state = "[red]DEAD now[/]" if d["dead_now"] else f"restarted: {esc(d['restart_evidence'])}"
            cleaning = f"{d['log']} segment {d['segment']} ({d['deletes']} deletes)" if d["log"] else "-"
            exc = f"{d['exception'] or '?'}: {d['detail'] or ''}".strip()
            t.add_row(esc(d["thread"]), esc(d["died_at"]), esc(exc), esc(cleaning), state)
        c.print(t)
    if report["uncleanable_partitions"]:
        c.print(
            "[yellow]uncleanable partitions (KIP-346)[/]: " + esc(", ".join(report["uncleanable_partitions"]))
        )
    if report["index_rebuilds"]:
        t = Table("at", "kind", "file", title=f"index rebuilds ({len(report['index_rebuilds'])})")
        for r in report["index_rebuilds"][:200]:
            t.add_row(esc(r["at"]), r["kind"], esc(r["file"] or r["where"]))
        c.print(t)
    if report["zero_timestamp_deletions"]:
        t = Table("at", "partition", "line", title="segments deleted on timestamp 0 (RET001)")
        for z in report["zero_timestamp_deletions"][:200]:
            t.add_row(esc(z["at"]), esc(z["partition"] or "?"), esc(str(z["text"])[:160]))
        c.print(t)
    if report["loads"]:
        t = Table("started", "unclean dirs", "logs", "segments recovered", "index rebuilds", "took", "result",
                  title="log loading at each start")  # fmt: skip
        for ld in report["loads"]:
            total = ld["logs_total"]
            took = f"{ld['duration_ms'] / 1000:.1f} s" if ld["duration_ms"] is not None else "-"
            result = (
                "failed" if ld["failed"] else ("complete" if ld["completed"] else "[yellow]not complete[/]")
            )
            t.add_row(
                esc(ld["started_at"]), esc(", ".join(ld["unclean_dirs"])) or "-",
                f"{ld['logs_loaded']}/{total}" if total is not None else str(ld["logs_loaded"]),
                str(ld["segments_recovered"]), str(ld["index_rebuilds"]), took, result,
            )  # fmt: skip
        c.print(t)
    c.print(
        f"cleaner deaths {s['cleaner_deaths']} (dead now {s['cleaner_threads_dead_now']}), index rebuilds "
        f"{s['index_rebuilds']}, zero-timestamp deletions {s['zero_timestamp_deletions']}, unclean recoveries "
        f"{s['unclean_recoveries']}"
    )


LOG_FAMILIES = ("server.log", "log-cleaner.log")  # log4j.properties of Kafka: kafkaAppender, cleanerAppender


def _logs_in(d: Path) -> list[Path]:
    """The broker logs of a log directory: server.log and log-cleaner.log with their rotations (log4j's
    server.log.2026-11-01-10, logrotate's server.log.1, server.log-20261101.gz), each family oldest first (by
    mtime, the live file last). Only regular files: a link or FIFO named like a log is named in a warning."""
    import re
    import stat

    from kafka_ops.engine.shell import q

    families = "|".join(re.escape(n) for n in LOG_FAMILIES)
    pattern = re.compile(rf"({families})(?:[.-].+)?")
    found: dict[str, list[tuple[bool, float, str]]] = {n: [] for n in LOG_FAMILIES}
    try:
        names = sorted(os.listdir(d))
    except OSError as exc:
        fail(f"{d}: cannot list the directory ({(exc.strerror or str(exc)).lower()})")
    for name in names:
        m = pattern.fullmatch(name)
        if not m:
            continue
        p = d / name
        try:
            st = os.lstat(p)
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode):
            found[m.group(1)].append((name == m.group(1), st.st_mtime, name))
        elif not stat.S_ISDIR(st.st_mode):
            say(f"warning: {q(str(p))}: not a regular file: not read")
    out = [d / name for family in found.values() for _live, _mtime, name in sorted(family)]
    if not out:
        fail(f"{d}: no {' or '.join(LOG_FAMILIES)} (nor a rotation of one) in this directory")
    return out


@app.command(cls=Command)
def logs(
    files: Annotated[
        list[Path],
        typer.Argument(
            metavar="FILE|DIR",
            help="server.log / log-cleaner.log files, rotated ones too: server.log.1, server.log.2026-11-01-10, "
            "gzip, bzip2 or xz compressed (told by their content); or a directory of logs (/var/log/kafka): "
            "the server.log and log-cleaner.log in it and all their rotations.",
        ),
    ],
    format: Annotated[LogsFormat, typer.Option("--format", "-f", help="table or json.")] = LogsFormat.table,
    follow: Annotated[
        bool,
        typer.Option(
            "--follow",
            help="Follow a growing server.log of a starting broker and show its log loading (recovery) until it "
            "completes, fails, Ctrl-C or --timeout; across its rotations (renamed, or truncated by copytruncate), "
            "each line once.",
        ),
    ] = False,
    timeout: Annotated[
        str | None,
        typer.Option(
            "--timeout",
            metavar="DURATION",
            help="With --follow: give up after this long: seconds (90), or a duration (90s, 5m, 1h).",
        ),
    ] = None,
    log_dir: Annotated[
        list[Path] | None,
        typer.Option(
            "--log-dir",
            metavar="DIR",
            help="With --follow: count the logs to load here when the broker's lines carry no totals (Kafka < 2.8).",
        ),
    ] = None,
    total: Annotated[
        int | None,
        typer.Option(
            "--total", metavar="COUNT", min=1, help="With --follow: the number of logs to load, if known."
        ),
    ] = None,
    poll: Annotated[
        float,
        typer.Option(
            "--poll",
            metavar="DURATION",
            parser=seconds_parser(0.01),
            help="With --follow: the time between reads: seconds (0.5) or a duration (500ms, 2s).",
        ),
    ] = 0.5,
) -> None:
    """Read broker logs and report log-cleaner deaths, index rebuilds, segments deleted with a zero timestamp and
    unclean-shutdown recoveries; or, with --follow, watch a recovering broker load its logs.

    A directory (/var/log/kafka) stands for the server.log and log-cleaner.log in it and all their rotations,
    oldest first; with --follow, for its server.log. Files are read as a stream in constant memory. A compressed file is read only up to 4 GiB decompressed, or
    up to where (past 64 MiB) it has grown more than 500 times its compressed size (a compression bomb): what
    was read counts, and a warning names the file. Symlinks, FIFOs and devices are not read.

    Exit codes: 0 fine / loading complete; 1 a cleaner thread is dead now, or loading failed or did not complete
    before --timeout; 2 bad usage or unreadable file; 130 interrupted.
    """
    from kafka_ops.audit.options import OptionError, check_broker_log, compression_of, parse_seconds

    try:
        timeout_s = parse_seconds(timeout, "--timeout") if timeout is not None else None
    except OptionError as exc:
        fail(str(exc))
    if follow and len(files) == 1 and files[0].is_dir() and not files[0].is_symlink():
        files = [files[0] / "server.log"]
    elif not follow:
        files = [p for f in files for p in (_logs_in(f) if f.is_dir() and not f.is_symlink() else [f])]
    if follow:
        if len(files) != 1:
            fail("--follow takes exactly one file (the broker's server.log)")
        try:
            check_broker_log(str(files[0]), option="")
        except OptionError as exc:
            fail(str(exc))
        from kafka_ops.engine.errors import EngineError
        from kafka_ops.engine.fileio import read_bytes

        try:
            head = read_bytes(str(files[0]), 8, follow=True)
        except EngineError as exc:
            fail(str(exc))
        if compression_of(head):
            fail(
                f"--follow: {files[0]}: {compression_of(head)}-compressed: a rotated log does not grow; follow server.log"
            )
        _follow(files[0], format, timeout_s, total, log_dir, poll)
    for f in files:
        try:
            check_broker_log(str(f), option="")
        except OptionError as exc:
            fail(str(exc))
    from kafka_ops.engine.errors import EngineError
    from kafka_ops.facts.brokerlogs import analyze

    try:
        report = analyze([str(f) for f in files])
    except EngineError as exc:
        fail(str(exc))
    if len(report["unrecognised"]) == len(files):
        # nothing to go on: no clean bill for files that are not broker logs
        fail(f"{', '.join(u['file'] for u in report['unrecognised'])}: {report['unrecognised'][0]['error']}")
    for u in report["unrecognised"] + report["not_read"]:
        say(f"warning: {u['file']}: {u['error']}")
    for k in report["kept"]:
        say(f"note: {k}")
    if format is LogsFormat.json:
        sys.stdout.write(json.dumps(report, indent=2) + "\n")
    else:
        _table(report)
    raise typer.Exit(1 if report["cleaner_dead_now"] else 0)
