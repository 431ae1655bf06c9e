"""`kafka-ops fix ...`: dry run by default; `--apply` changes the host and writes an undo journal."""

from __future__ import annotations

import contextlib
import math
import os
import shlex
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Annotated, Any

import typer

from kafka_ops.audit.cmdoptions import FIX_INPUTS
from kafka_ops.cli.audit import GIVEN, Given, build_options, with_options
from kafka_ops.cli.framework import Command, Group, OutputFormat, app, fail, show_notes

fix_app = typer.Typer(
    cls=Group,
    help="Remediate what the audit found. Dry run unless --apply; every change is journaled for `fix undo`.",
    no_args_is_help=True,
)
app.add_typer(fix_app, name="fix")

ApplyOpt = Annotated[bool, typer.Option("--apply", help="Make the changes (default: only print them).")]
JournalOpt = Annotated[
    Path | None,
    typer.Option(
        "--journal-dir",
        metavar="DIR",
        help="Where the undo journal goes (default /var/lib/kafka-ops/journal): it and every dir on the way "
        "must be writable by root alone, and outside every log dir, else refused.",
    ),
]
INDEX_CHECKS = ("IDX001", "IDX002", "IDX003", "IDX004", "RET001")


@contextlib.contextmanager
def _progress_bar(what: str, long: bool) -> Iterator[Callable[[int, int], None] | None]:
    """A bar on stderr for a long apply, when stderr is a terminal."""
    if not (long and sys.stderr.isatty()):
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    with Progress(
        TextColumn(f"[bold]{what}[/]"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
        console=Console(stderr=True), transient=True,
    ) as bar:  # fmt: skip
        task = bar.add_task(what, total=None)

        def update(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total or None)

        yield update


def _print_and_apply(plan: Any, apply: bool, journal_dir: Path | None) -> None:
    from kafka_ops.remediate.fixes import FixError, JournalFull
    from kafka_ops.remediate.fixes import apply as do_apply

    if plan.refused:
        fail(plan.refused)
    for n in plan.notes:
        typer.echo(f"note: {n}")
    if not plan.actions:
        typer.echo(f"fix {plan.fix}: nothing to change.")
        return
    verb = "applying" if apply else "would apply (dry run; add --apply)"
    typer.echo(f"fix {plan.fix}: {verb} {len(plan.actions)} change(s):")
    for i in range(0, len(plan.actions), 5000):  # typer.echo a line at a time costs more than the fix
        typer.echo("\n".join(f"  {a.describe()}" for a in plan.actions[i : i + 5000]))
    if not apply:
        return
    try:
        with _progress_bar(f"fix {plan.fix}", len(plan.actions) >= 20_000) as progress:
            journal = do_apply(
                plan,
                str(journal_dir) if journal_dir else None,
                on_skip=lambda m: typer.echo(f"skipped: {m}"),
                on_progress=progress,
            )
    except JournalFull as exc:
        fail(f"fix {plan.fix} stopped: {exc}", code=1)
    except (FixError, OSError) as exc:
        fail(f"fix {plan.fix} stopped: {exc}; what was done is in the journal", code=1)
    typer.echo(f"done. Undo with: kafka-ops fix undo {shlex.quote(str(journal))}")


def _check_journal_dir(journal_dir: Path | None, log_dirs: list[str], apply: bool) -> None:
    """--journal-dir refused in one line before anything is changed, by the rule of every dir a fix writes in."""
    from kafka_ops.remediate.fixes import FixError, default_journal_dir, journal_dir_problem

    if apply and journal_dir is not None:
        problem = journal_dir_problem(str(journal_dir), log_dirs)
        if problem:
            fail(problem)
    elif apply:
        try:
            default_journal_dir(log_dirs)
        except FixError as exc:
            fail(str(exc))


def _gather(**kw: Any) -> Any:
    from kafka_ops.engine.errors import EngineError
    from kafka_ops.facts.collect import gather

    opts = build_options(**kw)
    try:
        return gather(opts), opts
    except EngineError as exc:
        fail(str(exc))


@fix_app.command("ownership", cls=Command)
@with_options("inputs", FIX_INPUTS)
def ownership(
    inputs: Given = GIVEN,
    group: Annotated[
        str | None,
        typer.Option(
            "--group",
            metavar="GROUP",
            help="Group to own the files (default: the broker user's primary group).",
        ),
    ] = None,
    mode: Annotated[
        str,
        typer.Option(
            "--mode",
            metavar="MODE",
            help="chmod mode to give every file and dir, symbolic (u+rwX,g+rX: X is execute for directories) "
            "or octal; setuid/setgid are always removed.",
        ),
    ] = "u+rwX",
    apply: ApplyOpt = False,
    journal_dir: JournalOpt = None,
) -> None:
    """chown every file and dir of the log dirs to the broker user and give it read/write (dirs: traverse).
    Symlinks, FIFOs, sockets, devices and files with more than one hard link are left alone (with a note)."""
    import grp

    from kafka_ops.remediate.fixes import parse_mode, plan_ownership

    try:
        parse_mode(mode)
    except ValueError as exc:
        fail(f"--mode: {exc}")

    h, _ = _gather(**inputs)
    if h.identity is None:
        fail(h.skipped_inputs.get("broker_user", "the broker user is unknown: give --broker-user"))
    gid = h.identity.gid
    if group:
        try:
            gid = grp.getgrnam(group).gr_gid
        except KeyError:
            fail(f"no such group: {group}")
    dirs = [d.path for d in h.log_dirs]
    if not dirs:
        fail("no log dirs: give --log-dir or --server-properties")
    from kafka_ops.remediate.fixes import FixError, resolve_log_dirs

    try:
        # by handle from /: a log dir that is a link the broker user could have made is refused, before anything
        dirs = resolve_log_dirs(dirs)
    except FixError as exc:
        fail(str(exc))
    _check_journal_dir(journal_dir, dirs, apply)
    if h.broker_state == "running":
        typer.echo(
            "note: the broker is running; checkpoint .tmp files may come and go while this runs (cp-ansible #903)"
        )
    if not apply:
        _print_and_apply(plan_ownership(dirs, h.identity.uid, gid, mode), apply, journal_dir)
        return
    _apply_ownership_streaming(dirs, h.identity.uid, gid, mode, journal_dir)


class _Lines:
    """Lines to stdout in chunks: typer.echo a line at a time costs more than the change it prints."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def add(self, line: str) -> None:
        self.lines.append(line)
        if len(self.lines) >= 5000:
            self.flush()

    def flush(self) -> None:
        if self.lines:
            typer.echo("\n".join(self.lines))
            self.lines = []


def _apply_ownership_streaming(
    dirs: list[str], uid: int, gid: int, mode: str, journal_dir: Path | None
) -> None:
    """Planned and applied as it walks, a batch at a time, so that memory stays flat on a log dir of millions of
    files; each change is printed as it is planned, before it is made."""
    from kafka_ops.remediate.fixes import FixError, JournalFull, apply_ownership_streaming

    out = _Lines()
    started = False

    def change(a: Any) -> None:
        nonlocal started
        if not started:
            out.add("fix ownership: applying the changes, each as it is planned:")
            started = True
        out.add(f"  {a.describe()}")

    planned = 0

    def counted(a: Any) -> None:
        nonlocal planned
        change(a)
        planned += 1
        if bar and planned % 1000 == 0:
            bar(planned, 0)

    try:
        # the changes printed to a terminal are the progress; a bar on stderr when they go elsewhere
        with _progress_bar("fix ownership", not sys.stdout.isatty()) as bar:
            journal, count = apply_ownership_streaming(
                dirs, uid, gid, mode, str(journal_dir) if journal_dir else None, on_change=counted,
                on_skip=lambda m: out.add(f"skipped: {m}"), on_note=lambda m: out.add(f"note: {m}"),
            )  # fmt: skip
    except JournalFull as exc:
        out.flush()
        fail(f"fix ownership stopped: {exc}", code=1)
    except (FixError, OSError) as exc:
        out.flush()
        fail(f"fix ownership stopped: {exc}; what was done is in the journal", code=1)
    out.flush()
    if journal is None:
        typer.echo("fix ownership: nothing to change.")
        return
    typer.echo(f"done: {count} change(s). Undo with: kafka-ops fix undo {shlex.quote(str(journal))}")


@fix_app.command("systemd", cls=Command)
@with_options("inputs", FIX_INPUTS)
def systemd(
    inputs: Given = GIVEN,
    timeout_stop_sec: Annotated[
        str | None,
        typer.Option(
            "--timeout-stop-sec",
            metavar="DURATION",
            help="Use this stop timeout instead of the computed one: seconds (420), or a duration (420s, 7m).",
        ),
    ] = None,
    limit_nofile: Annotated[
        int | None,
        typer.Option(
            "--limit-nofile", metavar="COUNT", min=1, help="Use this LimitNOFILE instead of the computed one."
        ),
    ] = None,
    no_reload: Annotated[
        bool, typer.Option("--no-reload", help="Do not run systemctl daemon-reload.")
    ] = False,
    all_settings: Annotated[
        bool,
        typer.Option(
            "--all-settings",
            help="Also write what an info finding suggests (e.g. an empty ExecStop= the audit calls harmless "
            "here); by default only what a finding at warning or above asks for.",
        ),
    ] = False,
    apply: ApplyOpt = False,
    journal_dir: JournalOpt = None,
) -> None:
    """Write a drop-in for the broker unit: the stop timeout a clean shutdown needs (SYSD001), SIGTERM as the
    stop signal (SYSD002), LimitNOFILE (SYSD003), as far as a finding at warning or above asks for them (all
    with --all-settings); then systemctl daemon-reload."""
    from kafka_ops.audit import run_audit
    from kafka_ops.audit.options import OptionError, parse_seconds
    from kafka_ops.engine.errors import EngineError
    from kafka_ops.remediate.fixes import plan_systemd_dropin

    stop_s = 0
    if timeout_stop_sec is not None:
        try:
            stop_s = math.ceil(parse_seconds(timeout_stop_sec, "--timeout-stop-sec"))
        except OptionError as exc:
            fail(str(exc))
        if stop_s < 1:
            fail(f"--timeout-stop-sec: must be at least 1s, not {timeout_stop_sec!r}")
    opts = build_options(**inputs)
    try:
        report = run_audit(opts)
    except EngineError as exc:
        fail(str(exc))
    unit = report["inputs"].get("systemd_unit", {}).get("value")
    if not unit:
        fail("no systemd unit found: give --systemd-unit")
    settings: dict[str, str] = {}
    left: list[str] = []
    for f in report["findings"]:
        d = f.get("details") or {}
        if (
            f["check"] in ("SYSD001", "SYSD002", "SYSD003")
            and f.get("severity") == "info"
            and not all_settings
        ):
            left.append(f["check"])  # the audit says it does no harm here: not written unless asked
            continue
        if f["check"] == "SYSD001" and d.get("recommended_timeout_s"):
            settings["TimeoutStopSec"] = f"{int(d['recommended_timeout_s'])}s"
        if f["check"] == "SYSD002":
            # the settings that restore a graceful stop for this unit (ExecStop=, KillMode=, KillSignal=...)
            settings.update({k: str(v) for k, v in (d.get("dropin") or {"KillSignal": "SIGTERM"}).items()})
        if f["check"] == "SYSD003" and d.get("recommended_nofile"):
            settings["LimitNOFILE"] = str(int(d["recommended_nofile"]))
    if timeout_stop_sec is not None:
        settings["TimeoutStopSec"] = f"{stop_s}s"
    if limit_nofile is not None:
        settings["LimitNOFILE"] = str(limit_nofile)
    for check in sorted(set(left)):
        typer.echo(
            f"note: {check}: an info finding (no harm here), not written; --all-settings writes it too"
        )
    if not settings:
        typer.echo(
            "fix systemd: the unit already stops the broker cleanly (no SYSD001-SYSD003 finding at warning or "
            "above); nothing to change."
        )
        return
    _check_journal_dir(journal_dir, [d["path"] for d in report["log_dirs"]], apply)
    plan = plan_systemd_dropin(str(unit), settings, reload=not no_reload)
    plan.log_dirs = [d["path"] for d in report["log_dirs"]]
    _print_and_apply(plan, apply, journal_dir)


@fix_app.command("indexes", cls=Command)
@with_options("inputs", FIX_INPUTS)
def indexes(
    quarantine: Annotated[
        Path,
        typer.Option(
            "--quarantine",
            metavar="DIR",
            help="Folder outside every log dir that receives the bad index files (it and every dir on the way "
            "writable by root alone).",
        ),
    ] = Path("/var/lib/kafka-ops/quarantine"),
    inputs: Given = GIVEN,
    apply: ApplyOpt = False,
    journal_dir: JournalOpt = None,
) -> None:
    """With the broker stopped, move the index files of the segments the audit flags (IDX001-IDX004, RET001) to a
    quarantine folder, so that the broker rebuilds them from the records at start. Never touches a .log."""
    import datetime as dt

    from kafka_ops.audit import run_audit
    from kafka_ops.engine.errors import EngineError
    from kafka_ops.remediate.fixes import plan_quarantine_indexes

    opts = build_options(**inputs)
    try:
        report = run_audit(opts)
    except EngineError as exc:
        fail(str(exc))
    show_notes()
    if report["broker_state"] != "stopped":
        fail("the broker is running: stop it first (index files are mapped by the running broker)")
    segments = []
    for f in report["findings"]:
        if f["check"] in INDEX_CHECKS and f.get("segment") is not None and f.get("path"):
            p = f["path"]
            part_dir = os.path.dirname(p) if os.path.basename(p)[:1].isdigit() else p
            segments.append((part_dir, int(f["segment"])))
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    log_dirs = [d["path"] for d in report["log_dirs"]]
    plan = plan_quarantine_indexes(segments, str(quarantine / stamp), log_dirs)
    if not plan.refused:
        _check_journal_dir(journal_dir, log_dirs, apply)
    _print_and_apply(plan, apply, journal_dir)


JOURNAL_OPS = {"chown", "chmod", "move", "write", "run"}


def journal_problem(path: Path) -> str | None:
    """Why ``path`` is not an undo journal that `fix ... --apply` wrote (None: it is one). Checked before
    anything is undone: undo writes into the journal, and must never do so into another file."""
    import json

    if not path.is_file():
        return f"{path}: {'a directory, not a journal' if path.is_dir() else 'no such file'}"
    try:
        with path.open(encoding="utf-8") as f:
            first = f.readline()
        if first.startswith('{"kafka_ops_journal"'):  # version 2: JSON lines, the header first
            head = json.loads(first)
            if head.get("kafka_ops_journal") != 2 or head.get("fix") not in (
                "ownership",
                "systemd",
                "indexes",
            ):
                return f"{path}: not a kafka-ops journal this version reads (header {first.strip()[:80]})"
            return None
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        return f"{path}: not a kafka-ops journal (not JSON: {str(exc).splitlines()[0]})"
    entries = doc.get("done") if isinstance(doc, dict) else None
    if (
        not isinstance(doc, dict)
        or doc.get("fix") not in ("ownership", "systemd", "indexes")
        or not isinstance(entries, list)
    ):
        return f"{path}: not a kafka-ops journal (no 'fix' and 'done' written by `kafka-ops fix ... --apply`)"
    for i, e in enumerate(entries):
        if not isinstance(e, dict) or e.get("op") not in JOURNAL_OPS or not isinstance(e.get("path"), str):
            return f"{path}: damaged journal: entry {i} of 'done' is not a change kafka-ops makes"
    return None


def _journal_dirs(journal_dir: Path | None) -> list[Path]:
    from kafka_ops.remediate.fixes import JOURNAL_DIRS

    return [journal_dir] if journal_dir else [Path(d) for d in JOURNAL_DIRS]


def journal_summary(path: Path) -> dict[str, Any] | None:
    """What a journal did: {path, fix, created, host, changes, state}; None when ``path`` is not a journal.
    state: applied (every change made or skipped), undone (undo completed), partial (the apply stopped before
    its end, or an undo left some changes: `fix undo` finishes either)."""
    import json

    if journal_problem(path):
        return None
    try:
        with path.open(encoding="utf-8") as f:
            first = f.readline()
            if not first.startswith(
                '{"kafka_ops_journal"'
            ):  # version 1: one JSON document, written at the end
                doc = json.loads(first + f.read())
                return {
                    "path": str(path), "fix": doc.get("fix"), "created": doc.get("created"),
                    "host": doc.get("host"), "changes": len(doc["done"]),
                    "state": "undone" if doc.get("undone") else "applied",
                }  # fmt: skip
            head = json.loads(first)
            intents = ended = undone = 0
            complete = False
            for line in f:  # a few strings per line: a journal of millions of changes is read in seconds
                if line.startswith('{"n":'):
                    intents += 1
                elif line.startswith(('{"done":', '{"skipped":')):
                    ended += 1
                elif line.startswith('{"undone":'):
                    undone += 1
                elif line.startswith('{"undo_complete":'):
                    complete = True
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    state = "undone" if complete else "partial" if undone or ended < intents else "applied"
    return {
        "path": str(path), "fix": head.get("fix"), "created": head.get("created"), "host": head.get("host"),
        "changes": intents, "state": state,
    }  # fmt: skip


def find_journals(journal_dir: Path | None) -> list[dict[str, Any]]:
    """Every journal in the journal dir(s), oldest first (by the time in its name, then its header)."""
    found = []
    for d in _journal_dirs(journal_dir):
        try:
            names = sorted(e.name for e in os.scandir(d) if e.name.endswith(".jsonl") and e.is_file())
        except FileNotFoundError:
            continue
        except OSError as exc:
            fail(f"{d}: cannot list the journals ({exc.strerror})")
        for name in names:
            s = journal_summary(d / name)
            if s:
                found.append(s)
    return sorted(found, key=lambda s: (str(s["created"] or ""), s["path"]))


def _when(created: str | None) -> str:
    import datetime as dt

    for fmt in ("%Y%m%dT%H%M%S.%fZ", "%Y%m%dT%H%M%SZ"):
        try:
            return dt.datetime.strptime(created or "", fmt).strftime("%Y-%m-%d %H:%M:%S UTC")
        except ValueError:
            continue
    return str(created or "?")


@fix_app.command("journals", cls=Command)
def journals(
    journal_dir: Annotated[
        Path | None,
        typer.Option(
            "--journal-dir",
            metavar="DIR",
            help="The dir to list (default: /var/lib/kafka-ops/journal and ~/.local/state/kafka-ops/journal).",
        ),
    ] = None,
    format: Annotated[OutputFormat, typer.Option("--format", "-f", help="text or json.")] = OutputFormat.text,
) -> None:
    """List the fix journals, oldest first: when, which fix, how many changes, and the state (applied; undone;
    partial: the apply stopped early or an undo left changes, `fix undo` finishes it)."""
    import json

    if journal_dir is not None and not journal_dir.is_dir():
        fail(f"{journal_dir}: {'not a directory' if journal_dir.exists() else 'no such directory'}")
    found = find_journals(journal_dir)
    if format is OutputFormat.json:
        typer.echo(json.dumps(found, indent=2))
        return
    if not found:
        where = journal_dir or " or ".join(str(d) for d in _journal_dirs(None))
        typer.echo(f"no fix journals in {where}.")
        return
    rows = [(_when(s["created"]), str(s["fix"]), str(s["changes"]), s["state"], s["path"]) for s in found]
    head = ("TIME", "FIX", "CHANGES", "STATE", "JOURNAL")
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(4)]
    for r in [head, *rows]:
        typer.echo(
            "  ".join(c.ljust(w) for c, w in zip(r[:4], widths, strict=True)) + "  " + shlex.quote(r[4])
        )


@fix_app.command("undo", cls=Command)
def undo(
    journal: Annotated[
        Path | None,
        typer.Argument(metavar="JOURNAL", help="A journal written by `fix ... --apply` (or give --last)."),
    ] = None,
    last: Annotated[
        bool,
        typer.Option(
            "--last",
            help="Undo the newest journal not undone yet (see `fix journals`); --journal-dir says where.",
        ),
    ] = False,
    journal_dir: Annotated[
        Path | None,
        typer.Option("--journal-dir", metavar="DIR", help="With --last: the journal dir (default as `fix`)."),
    ] = None,
) -> None:
    """Put back everything a fix changed, last change first. A journal the broker user could have written (its
    file or a dir on the way not root's alone) is refused."""
    from kafka_ops.remediate.fixes import FixError
    from kafka_ops.remediate.fixes import undo as do_undo

    if last == (journal is not None):
        fail("give a JOURNAL or --last (`kafka-ops fix journals` lists them)")
    if journal is None:
        if journal_dir is not None and not journal_dir.is_dir():
            fail(f"{journal_dir}: {'not a directory' if journal_dir.exists() else 'no such directory'}")
        found = find_journals(journal_dir)
        if not found:
            fail(f"no fix journals in {journal_dir or ' or '.join(str(d) for d in _journal_dirs(None))}")
        # the newest that is not undone yet: a second --last goes on to the fix before it
        pending = [s for s in found if s["state"] != "undone"]
        if not pending:
            where = journal_dir or " or ".join(str(d) for d in _journal_dirs(None))
            typer.echo(f"every fix journal in {where} is undone already; nothing to do.")
            return
        newest = pending[-1]
        journal = Path(newest["path"])
        typer.echo(f"undoing {shlex.quote(str(journal))} (fix {newest['fix']}, {_when(newest['created'])})")
    from kafka_ops.remediate.fixes import open_journal

    if not journal.is_file():
        fail(str(journal_problem(journal)))
    try:
        # undo does as root what the journal says: one the broker user could have written is refused first
        dfd, jfd, _resolved = open_journal(str(journal))
        os.close(jfd)
        os.close(dfd)
    except FixError as exc:
        fail(str(exc))
    problem = journal_problem(journal)
    if problem:
        fail(problem)
    try:
        done = do_undo(str(journal))
    except (FixError, OSError) as exc:
        fail(str(exc), code=1)
    if not done:
        typer.echo(f"{journal}: already undone (or empty); nothing to do.")
    for line in done:
        typer.echo(f"  {line}")
    if done.problems:
        fail(f"{done.problems} change(s) left as they are (lines starting with 'left'): see above", code=1)
