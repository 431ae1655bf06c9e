"""The ``kafka-ops`` commands: one module per command, each a thin layer over the library.

Exit codes are a public contract (the audit is a pre-deploy gate): 0 the gate passed, 1 it failed on findings,
2 the tool could not do its job (bad usage, unreadable or malformed input), 3 a bug in kafka-ops. Every error is
one line on stderr, ``kafka-ops <command>: <what is wrong>``; the Command and Group classes below make sure of it
for Typer's own errors too (no boxed panels, no pydantic wording, no traceback).
"""

from __future__ import annotations

import importlib
import os
import re
import shutil
import sys
import textwrap
import traceback
from enum import Enum, StrEnum
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
from typer.core import TyperCommand, TyperGroup

from kafka_ops import __version__

PROG = "kafka-ops"
BUG_CODE = 3
REPORT_TO = "the kafka-ops maintainers"
_current = [PROG]  # the command path being run, for the prefix of every message
_exit_on_epipe = [0]
_notes: list[str] = []  # the exit code to keep when the reader of stdout goes away (the gate's, once known)

# Typer's exception classes, found through a public one (they moved from click into typer._click in 0.2x)
_USAGE_ERROR: type[Exception] = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "UsageError")
_CLICK_EXCEPTION: type[Exception] = next(
    c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException"
)


class OutputFormat(StrEnum):
    text = "text"
    json = "json"


def command_path() -> str:
    return _current[0]


def fail(message: str, code: int = 2) -> NoReturn:
    """One line on stderr, then exit: bad input never gets a traceback."""
    say(message)
    raise typer.Exit(code)


def say(message: str, piped: bool = False) -> None:
    """A one-line note or warning on stderr, prefixed like every error; on a terminal wrapped, the lines after
    the first indented, at the width a person reads it at (:func:`stderr_width`); into a pipe or a file one line,
    whatever COLUMNS says (a script or a log reads an error or a note as one line), unless ``piped``: the gate's
    summary and verdict wrap at COLUMNS into a pipe too (a CI log read at 80 columns)."""
    write_err([f"{command_path()}: {one_line(message)}"], piped=piped)


def _tty_width(stream: Any, piped: bool = False) -> int | None:
    """The width ``stream`` is read at: on a terminal COLUMNS (as shells set it) or the terminal's width; into a
    pipe or a file, COLUMNS when ``piped`` (what the caller writes is laid out for a reader, the gate's verdict
    and its failing findings), else None: one line per message or item (a CI log, `| grep`)."""
    try:
        cols = os.environ.get("COLUMNS", "")
        said = int(cols) if cols.isdigit() and int(cols) > 0 else None
        if not stream.isatty():
            return max(20, said) if piped and said else None
        return max(20, said or os.get_terminal_size(stream.fileno()).columns)
    except (OSError, ValueError, AttributeError):
        return None


def stderr_width(piped: bool = True) -> int | None:
    """The width stderr is read at (:func:`_tty_width`)."""
    return _tty_width(sys.stderr, piped)


def screen_width() -> int:
    """The width stdout's text is laid out for: COLUMNS, else the terminal's, else 80 (a pipe, a file)."""
    return max(40, shutil.get_terminal_size((80, 24)).columns)


def stdout_width() -> int | None:
    """The width stdout is read at when it is a terminal (:func:`_tty_width`)."""
    return _tty_width(sys.stdout)


def echo_wrapped(text: str, first: str = "", indent: str = "    ") -> None:
    """``text`` on stdout after ``first``, wrapped at :func:`stdout_width` (its next lines after ``indent``;
    one line when it is a pipe); a word wider than a line (a path) is never broken: it has a line of its own."""
    width = stdout_width()
    if width is None:
        sys.stdout.write(f"{first}{text}\n")
        return
    lines = textwrap.wrap(
        text, width=width, initial_indent=first, subsequent_indent=indent, break_long_words=False,
        break_on_hyphens=False,
    )  # fmt: skip
    sys.stdout.write("".join(f"{line}\n" for line in lines or [first.rstrip()]))


def write_err(lines: list[str], indent: str = "  ", piped: bool = True) -> None:
    """Lines on stderr, each wrapped at :func:`stderr_width` (its next lines indented by ``indent``); a word
    wider than a line, a path, is never broken: it has a line of its own. ``piped``: wrapped at COLUMNS into a
    pipe too (the verdict, the failing findings); else only on a terminal (errors and notes: one line each)."""
    width = stderr_width(piped)
    out = []
    for line in lines:
        if width is None or len(line) <= width:
            out.append(line)
            continue
        lead = line[: len(line) - len(line.lstrip(" "))]
        out += textwrap.wrap(
            line.lstrip(" "), width=max(width, 20), initial_indent=lead, subsequent_indent=lead + indent,
            break_long_words=False, break_on_hyphens=False,
        ) or [line]  # fmt: skip
    sys.stderr.write("".join(f"{line}\n" for line in out))
    sys.stderr.flush()


def note_later(message: str) -> None:
    """A note on what the run understood of its options (--now), shown by show_notes() once the command has a
    result, so that an error stays the only line on stderr."""
    _notes.append(message)


def show_notes() -> None:
    while _notes:
        say(_notes.pop(0))


def keep_exit_code(code: int) -> None:
    """The exit code to end with if stdout's reader goes away while the result is written (`| head`)."""
    _exit_on_epipe[0] = code


def one_line(text: str) -> str:
    """On one line, every control character shown escaped (engine.shell.printable): an error or note names files
    the broker user named (a rotation, a segment), and no name may drive the terminal."""
    from kafka_ops.engine.shell import printable

    return printable(re.sub(r"\s*\n\s*|\t", " ", text).strip())


# ------------------------------------------------------------------------------------------- running a command
def _bug(exc: BaseException) -> NoReturn:
    if os.environ.get("KAFKA_OPS_DEBUG") not in (None, "", "0"):
        traceback.print_exception(exc, file=sys.stderr)
    what = one_line(f"{type(exc).__name__}: {exc}")[:300]
    say(
        f"internal error, a bug in kafka-ops {__version__} ({what}); please report it to {REPORT_TO} with the "
        "command line and the traceback that KAFKA_OPS_DEBUG=1 shows when set for the same command"
    )
    raise typer.Exit(BUG_CODE)


def _invoke(self: Any, ctx: Any, base: Any) -> Any:
    _current[0] = ctx.command_path
    try:
        return base.invoke(self, ctx)
    except (typer.Exit, typer.Abort, _CLICK_EXCEPTION):
        raise
    except KeyboardInterrupt:
        say("interrupted")
        raise typer.Exit(130) from None
    except BrokenPipeError:
        # the reader of stdout went away (`| head`): stop quietly with the result already decided
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        raise typer.Exit(_exit_on_epipe[0]) from None
    except Exception as exc:  # anything else is a bug in kafka-ops, never a traceback for the user
        _bug(exc)


class Command(TyperCommand):
    """A command whose help and errors follow the kafka-ops conventions (see the module docstring)."""

    def invoke(self, ctx: Any) -> Any:
        return _invoke(self, ctx, TyperCommand)

    def format_help(self, ctx: Any, formatter: Any) -> None:
        formatter.write(render_help(self, ctx) + "\n")


class Group(TyperGroup):
    def invoke(self, ctx: Any) -> Any:
        return _invoke(self, ctx, TyperGroup)

    def format_help(self, ctx: Any, formatter: Any) -> None:
        formatter.write(render_help(self, ctx) + "\n")

    def main(
        self, args: Any = None, prog_name: str | None = None, standalone_mode: bool = True, **kw: Any
    ) -> Any:
        argv = list(sys.argv[1:] if args is None else args)
        _notes.clear()
        _exit_on_epipe[0] = 0
        try:
            rv = super().main(args=argv, prog_name=prog_name or PROG, standalone_mode=False, **kw)
            code = rv if isinstance(rv, int) else 0
        except _USAGE_ERROR as exc:
            code = 2
            if (
                type(exc).__name__ == "NoArgsIsHelpError"
            ):  # `kafka-ops`, `kafka-ops fix`: the help, not an error
                sys.stderr.write(exc.ctx.get_help() + "\n")  # type: ignore[attr-defined]
            else:
                sys.stderr.write(f"{usage_error_line(self, exc, argv)}\n")
        except _CLICK_EXCEPTION as exc:
            code = getattr(exc, "exit_code", 1)
            sys.stderr.write(f"{PROG}: {one_line(exc.format_message())}\n")  # type: ignore[attr-defined]
        except typer.Abort:
            code = 1
            sys.stderr.write(f"{command_path()}: aborted\n")
        if not standalone_mode:
            return code
        sys.exit(code)


# ---------------------------------------------------------------------------------------------- usage errors
def _path_of(group: Any, args: list[str]) -> tuple[str, Any]:
    """The command path the arguments name, and its command (errors raised while parsing carry no context)."""
    path, cmd = [PROG], group
    for a in args:
        if a.startswith("-"):
            continue
        sub = cmd.get_command(None, a) if hasattr(cmd, "get_command") else None
        if sub is None:
            break
        path.append(a)
        cmd = sub
    return " ".join(path), cmd


def param_label(param: Any) -> str:
    """How the user spells a parameter: its longest option name, or the argument's metavar."""
    opts = [o for o in getattr(param, "opts", []) if o.startswith("-")]
    if opts:
        return max(opts, key=len)
    return (getattr(param, "metavar", None) or (param.name or "argument")).upper()


def _option_names(cmd: Any) -> list[str]:
    names = ["--help", "-h"]
    for p in getattr(cmd, "params", []):
        names += [
            o for o in [*getattr(p, "opts", []), *getattr(p, "secondary_opts", [])] if o.startswith("-")
        ]
    return names


def close_matches(word: str, candidates: list[str], n: int = 3) -> list[str]:
    low = word.lower()
    prefixed = [c for c in candidates if c.lower().startswith(low) and c.lower() != low]
    if prefixed:  # what the word begins is what was meant: --fail is --fail-on, not --waive
        return prefixed[:n]
    import difflib  # only for a mistake: not at start-up

    return difflib.get_close_matches(word, candidates, n=n, cutoff=0.6)


def _choices(param: Any) -> list[str]:
    desc = getattr(param, "type_descriptor", None)
    raw = (
        getattr(desc, "choices", None)
        if desc is not None
        else getattr(getattr(param, "type", None), "choices", None)
    )
    return [c.value if isinstance(c, Enum) else str(c) for c in raw or ()]


def bad_value_text(exc: Any) -> str:
    """The reason of a BadParameter in words (Typer >= 0.2x validates with pydantic: no pydantic wording)."""
    param = getattr(exc, "param", None)
    errors = exc.__cause__.errors() if hasattr(exc.__cause__, "errors") else []
    if errors:
        err = errors[0]
        kind, given, ctx = err.get("type", ""), err.get("input"), err.get("ctx") or {}
        choices = _choices(param)
        if choices and kind in ("value_error", "enum", "literal_error"):
            return f"{given!r} is not one of {', '.join(choices)}"
        if kind in ("int_parsing", "int_from_float", "int_type"):
            return f"not a whole number: {given!r}"
        if kind in ("float_parsing", "float_type", "finite_number"):
            return f"not a number: {given!r}"
        if kind in ("bool_parsing", "bool_type"):
            return f"not true or false: {given!r}"
        bounds = {"greater_than_equal": "at least", "greater_than": "more than", "less_than_equal": "at most"}
        if kind in bounds or kind == "less_than":
            limit = next(iter(ctx.values()), "?")
            if isinstance(limit, float) and limit.is_integer():
                limit = int(limit)
            return f"must be {bounds.get(kind, 'less than')} {limit}, not {given}"
        if kind == "value_error" and "error" in ctx:
            return one_line(str(ctx["error"])).rstrip(".")
    text = one_line(str(getattr(exc, "message", exc)))
    return re.sub(r"^(Value error|Assertion failed), ", "", text).rstrip(".")


def usage_error_line(group: Any, exc: Any, argv: list[str]) -> str:
    """One line for an error Typer raises while reading the command line."""
    ctx = getattr(exc, "ctx", None)
    where, cmd = (ctx.command_path, ctx.command) if ctx is not None else _path_of(group, argv)
    kind = type(exc).__name__
    msg = one_line(str(getattr(exc, "message", "")))
    if kind == "NoSuchOption":
        opt = exc.option_name
        near = close_matches(opt, _option_names(cmd))
        hint = f" (did you mean {' or '.join(near)}?)" if near else f" (see {where} --help)"
        return f"{where}: no such option: {opt}{hint}"
    if kind == "MissingParameter":
        param = exc.param
        what = "option" if getattr(param, "param_type_name", "") == "option" else "argument"
        choices = _choices(param)
        extra = f" (one of {', '.join(choices)})" if choices else ""
        return f"{where}: missing {what} {param_label(param)}{extra} (see {where} --help)"
    if getattr(exc, "param", None) is not None:
        return f"{where}: {param_label(exc.param)}: {bad_value_text(exc)}"
    if kind == "BadOptionUsage":
        opt = getattr(exc, "option_name", "")
        if "requires an argument" in msg:
            return f"{where}: {opt}: needs a value"
        if "does not take a value" in msg:
            return f"{where}: {opt}: is a flag and takes no value"
        return f"{where}: {opt}: {msg.rstrip('.')}"
    m = re.match(r"No such command '([^']*)'", msg)
    if m:
        names = [
            n
            for n in (cmd.list_commands(ctx) if hasattr(cmd, "list_commands") else [])
            if not getattr(cmd.commands.get(n), "hidden", False)
        ]
        near = close_matches(m.group(1), names)
        hint = f"did you mean {' or '.join(near)}?" if near else f"commands: {', '.join(names)}"
        return f"{where}: no such command: {m.group(1)!r} ({hint})"
    m = re.match(r"Got unexpected extra argument(?:s|\(s\))? \((.*)\)", msg)
    if m:
        return f"{where}: unexpected argument(s): {m.group(1)} (see {where} --help)"
    return f"{where}: {msg[:1].lower() + msg[1:].rstrip('.')}"


# ---------------------------------------------------------------------------------------------------- help
_TYPE_WORDS = {int: "INTEGER", float: "NUMBER", str: "TEXT", Path: "PATH", bool: ""}


def _metavar(param: Any) -> str:
    if getattr(param, "is_flag", False) or getattr(param, "count", False):
        return ""
    if getattr(param, "metavar", None):
        return str(param.metavar)
    choices = _choices(param)
    if choices:
        return "|".join(choices)
    desc = getattr(param, "type_descriptor", None)
    ann = getattr(desc, "annotation", None)
    args = getattr(ann, "__args__", None)
    if args and getattr(ann, "__origin__", None) is list:
        ann = args[0]
    word = _TYPE_WORDS.get(ann) if ann is not None else None
    if word is None:
        word = str(getattr(getattr(param, "type", None), "name", "value")).upper()
    return word


def _wrap(text: str, width: int, indent: str = "", first: str | None = None) -> list[str]:
    """Word-wrap prose without breaking a token (paths, options and commands stay whole)."""
    w = textwrap.TextWrapper(
        width=max(width, 20),
        initial_indent=indent if first is None else first,
        subsequent_indent=indent,
        break_long_words=False,
        break_on_hyphens=False,
    )
    return w.wrap(text) or [indent if first is None else first]


def _paragraphs(doc: str) -> list[str]:
    """A docstring's paragraphs, each joined into one line (the source's line breaks are not the reader's)."""
    doc = textwrap.dedent(doc or "").strip()
    return [" ".join(p.split()) for p in re.split(r"\n\s*\n", doc) if p.strip()]


def _width() -> int:
    return max(30, min(shutil.get_terminal_size((100, 24)).columns, 110) - 1)


def _default_text(param: Any) -> str:
    show = getattr(param, "show_default", True)
    default = getattr(param, "default", None)
    if show is False or default is None or default is False or default in ((), [], ""):
        return ""
    if isinstance(show, str):
        return show
    if isinstance(default, Enum):
        default = default.value
    return f"default: {default}"


def render_help(cmd: Any, ctx: Any) -> str:
    width = _width()
    params = [p for p in cmd.get_params(ctx) if not getattr(p, "hidden", False)]
    args = [p for p in params if getattr(p, "param_type_name", "") == "argument"]
    opts = [p for p in params if getattr(p, "param_type_name", "") != "argument"]
    usage = [ctx.command_path, "[OPTIONS]"]
    for a in args:
        name = param_label(a) + ("..." if a.nargs == -1 else "")
        usage.append(name if a.required else f"[{name}]")
    if isinstance(cmd, TyperGroup):
        usage.append("COMMAND [ARGS]...")
    out = _wrap(" ".join(usage), width, "    ", "Usage: ")
    for para in _paragraphs(cmd.help or ""):
        out += ["", *_wrap(para, width, "  ")]
    if args:
        out += ["", "Arguments:"]
        out += _rows([(param_label(a), a.help or "") for a in args], width)
    out += ["", "Options:"]
    rows = []
    for p in opts:
        names = ", ".join(sorted((o for o in p.opts if o.startswith("-")), key=len))
        if p.secondary_opts:
            names += " / " + ", ".join(p.secondary_opts)
        meta = _metavar(p)
        helptext = p.help or ""
        extra = _default_text(p)
        if extra:
            helptext = f"{helptext} [{extra}]".strip()
        rows.append((f"{names} {meta}".strip(), helptext))
    out += _rows(rows, width)
    if isinstance(cmd, TyperGroup):
        out += ["", "Commands:"]
        cmds = []
        for name in cmd.list_commands(ctx):
            if name in getattr(cmd, "summaries", {}) and name not in cmd.commands:
                cmds.append((name, cmd.summaries[name]))  # not imported to say what it does
                continue
            sub = cmd.get_command(ctx, name)
            if sub is None or getattr(sub, "hidden", False):
                continue
            first = _paragraphs(sub.short_help or sub.help or "")
            cmds.append((name, _first_clause(first[0]) if first else ""))
        out += _rows(cmds, width)
        out += ["", *_wrap(f"Run '{ctx.command_path} COMMAND -h' for a command's options.", width)]
    return "\n".join(line.rstrip() for line in out)


def _first_clause(text: str) -> str:
    """The text up to its first '.', ':' or ';' outside parentheses: a command's one-line summary."""
    depth = 0
    for i, c in enumerate(text):
        depth += {"(": 1, ")": -1}.get(c, 0)
        if depth == 0 and c in ".:;" and (i + 1 == len(text) or text[i + 1].isspace()):
            return text[:i]
    return text


def _rows(rows: list[tuple[str, str]], width: int) -> list[str]:
    """Two columns when the terminal is wide enough, else each description under its name."""
    col = min(max((len(n) for n, _ in rows), default=0) + 4, 34)
    out = []
    two_columns = width - col >= 36
    for name, text in rows:
        if two_columns and len(name) + 4 <= col:
            out += _wrap(text, width, " " * col, f"  {name}".ljust(col)) if text else [f"  {name}"]
        else:
            out += _wrap(name, width, "      ", "  ")
            if text:
                out += _wrap(text, width, " " * (col if two_columns else 8))
    return out


# -------------------------------------------------------------------------------------------------- the app
# Every command of `kafka-ops`, in the order of its help (commands, then groups of commands), with the summary
# that help shows: `kafka-ops --help` imports none of the modules (their imports cost most of the start-up),
# a command's module is imported when the command is run or its help shown. Each module is named for its
# command. tests/test_cli_contract.py checks this table against the modules' own docstrings.
COMMANDS: dict[str, str] = {
    "audit": "Audit a broker host's data dirs, systemd unit and config",
    "checks": "List every check with its severity and title, or print one check's doc page",
    "dump": "Print what kafka-dump-log.sh prints, and what it misses",
    "forecast": "Forecast retention",
    "logs": (
        "Read broker logs and report log-cleaner deaths, index rebuilds, segments deleted with a zero "
        "timestamp and unclean-shutdown recoveries"
    ),
    "qos": "Compare a topic with what a pipeline wrote",
    "rehearse": "Rehearse the next start of a stopped node",
    "report": "Write one HTML page that opens offline",
    "simulate": "Write a broker host as a real broker leaves it",
    "cluster": "Ask the running cluster what a rolling restart needs to know",
    "fix": "Remediate what the audit found",
    "fleet": "Audit a fleet of brokers as one PySpark job (local[*] by default, or --master / spark-submit)",
}


class RootGroup(Group):
    """`kafka-ops` itself: its commands are imported when first asked for (see COMMANDS)."""

    summaries = COMMANDS

    def list_commands(self, ctx: Any) -> list[str]:
        return [*COMMANDS, *(n for n in self.commands if n not in COMMANDS)]

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        cmd = self.commands.get(cmd_name)
        if cmd is None and cmd_name in COMMANDS:
            importlib.import_module(f"{__package__}.{cmd_name}")
            # Typer's public way to turn the commands registered on `app` so far into Click's
            cmd = typer.main.get_command(app).commands.get(cmd_name)  # type: ignore[attr-defined]
            if cmd is not None:
                self.commands[cmd_name] = cmd
        return cmd


app = typer.Typer(
    name=PROG,
    cls=RootGroup,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


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
    """Say what a Kafka broker will do with the files on its disks at its next start, why, and the fix.

    Exit codes of every command: 0 the gate passed (or the job is done); 1 the gate failed on findings; 2 bad
    usage or input that cannot be read; 3 a bug in kafka-ops (KAFKA_OPS_DEBUG=1 shows its traceback).
    """


def load_all() -> typer.Typer:
    """The app with every command imported (tests, the fleet job); the CLI itself imports one on demand."""
    import pkgutil

    for m in pkgutil.iter_modules(importlib.import_module(str(__package__)).__path__):
        if m.name != "__main__":  # the entry point (python -m kafka_ops.cli) runs the CLI when imported
            importlib.import_module(f"{__package__}.{m.name}")
    return app


def check_output(output: Path | None) -> None:
    """Refuse an output path before the work (engine.outputs' rule): one line, exit 2. Here, not in cli.audit:
    report and forecast use it too, and cli.audit imports cli.report (no loop among the commands)."""
    from kafka_ops.engine.outputs import OutputError, check_target

    if output is not None:
        try:
            check_target(str(output))
        except OutputError as exc:
            fail(str(exc))
