"""`kafka-ops audit`: the pre-deploy gate."""

from __future__ import annotations

import functools
import inspect
import sys
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import IO, Annotated, Any

import typer

from kafka_ops.audit.cmdoptions import GATE, INPUTS, OPTIONS
from kafka_ops.cli.cluster import (
    BootstrapOpt,
    ClusterTimeoutOpt,
    CommandConfigOpt,
    RequireClusterOpt,
    ask_cluster,
)
from kafka_ops.cli.framework import (
    Command,
    app,
    check_output,
    fail,
    keep_exit_code,
    note_later,
    say,
    show_notes,
    write_err,
)


class AuditFormat(StrEnum):
    table = "table"
    brief = "brief"
    json = "json"
    junit = "junit"
    markdown = "markdown"
    html = "html"
    prometheus = "prometheus"


def build_options(check_paths: bool = True, **kw: Any) -> Any:
    """AuditOptions from CLI values (shared with `fleet audit`, `forecast` and `fix`); a bad value is one line."""
    from kafka_ops.audit.options import audit_options, time_note

    try:
        opts = audit_options(check_paths=check_paths, **kw)
    except ValueError as exc:
        fail(str(exc))
    if kw.get("now"):
        note_later(time_note("--now", str(kw["now"])))
    horizon = str(kw.get("horizon") or "").strip()
    if horizon.isdigit():  # the older spelling, still read as hours
        note_later(
            f"--horizon {horizon} read as {horizon} hours: write {horizon}h (a bare number is deprecated)"
        )
    return opts


def add_cluster(
    opts: Any,
    bootstrap: str | None,
    command_config: Path | None,
    timeout_s: float,
    required: bool,
    broker_id: int | None,
) -> None:
    """The running cluster's facts into ``opts`` (or why they are missing); exit 2 only when it is required."""
    from kafka_ops.cluster.client import ClusterUnavailable

    opts.broker_id = broker_id
    if bootstrap is None:
        if required:
            fail("--require-cluster needs --bootstrap-server")
        if command_config is not None:
            fail("--command-config needs --bootstrap-server")
        return
    try:
        opts.cluster = ask_cluster(bootstrap, command_config, timeout_s)
    except ClusterUnavailable as exc:
        if required:
            fail(str(exc))
        opts.cluster_skip = f"{exc}: the cluster checks (CLU001-CLU004) were not run"
        note_later(f"warning: {opts.cluster_skip}")


def add_zookeeper(opts: Any, connect: str | None, timeout_s: float) -> None:
    """ZooKeeper's /cluster/id into ``opts`` (read once, read only, within ``timeout_s``), or why it is unknown.
    ``auto``: the zookeeper.connect of the audited server.properties."""
    if connect is None:
        return
    from kafka_ops.cluster.zookeeper import ZooKeeperUnavailable, read_cluster_id

    if connect.strip() == "auto":
        from kafka_ops.engine.errors import EngineError
        from kafka_ops.facts.config import read_server_properties

        found = None
        if opts.server_properties:
            try:
                found = (
                    read_server_properties(opts.server_properties).get("zookeeper.connect", "").strip()
                    or None
                )
            except (EngineError, OSError):
                found = None
        if found is None:
            opts.zookeeper_skip = (
                "--zookeeper auto: no zookeeper.connect in the server.properties: ZooKeeper was not asked"
            )
            note_later(f"warning: {opts.zookeeper_skip}")
            return
        connect = found
    broker_id = None
    if opts.server_properties:
        from kafka_ops.engine.errors import EngineError
        from kafka_ops.facts.config import read_server_properties

        try:
            broker_id = read_server_properties(opts.server_properties).get("broker.id", "").strip() or None
        except (EngineError, OSError):
            broker_id = None
    try:
        opts.zookeeper = read_cluster_id(connect, timeout_s, broker_id=broker_id, configs=True)
    except ZooKeeperUnavailable as exc:
        opts.zookeeper_skip = str(exc)
        note_later(f"warning: {opts.zookeeper_skip}")


def run_with_progress(opts: Any, show: bool) -> dict[str, Any]:
    """Run the audit with a progress bar on stderr while partitions are scanned."""
    from kafka_ops.audit import run_audit
    from kafka_ops.engine.errors import EngineError

    try:
        if not show:
            return run_audit(opts)
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

        from kafka_ops.render.text import markup_safe

        with Progress(
            TextColumn("[bold]scanning[/] {task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
            console=Console(stderr=True), transient=True,
        ) as bar:  # fmt: skip
            tasks: dict[str, Any] = {}

            def progress(log_dir: str, done: int, total: int) -> None:
                if log_dir not in tasks:
                    tasks[log_dir] = bar.add_task(markup_safe(log_dir), total=total)
                bar.update(tasks[log_dir], completed=done)

            return run_audit(opts, progress)
    except EngineError as exc:
        fail(str(exc))


def emit(
    report: dict[str, Any],
    fmt: str,
    fail_on: str,
    output: Path | None,
    verbose: bool = False,
    duration_s: float | None = None,
) -> None:
    from kafka_ops.render import text as render
    from kafka_ops.render.models import validate

    validate(report)  # the published schema is what we print
    if fmt == "html":  # one self-contained page (render/report), written to --output (default report.html)
        from kafka_ops.cli.report import write_html
        from kafka_ops.engine.shell import printable

        target = output or Path("report.html")
        real = write_html([report], [f"kafka-ops audit of {report['host']}"], target)
        sys.stderr.write(f"wrote {printable(real)}\n")
        return
    if fmt == "table" and output is None:
        import shutil

        from rich.console import Console

        # COLUMNS, else the terminal's width; 80 when stdout is not a terminal or its width is unknown
        width = shutil.get_terminal_size((80, 24)).columns
        render.to_table(report, Console(highlight=False), width=width, verbose=verbose)
        return
    if fmt == "json":  # streamed as encoded; to --output through a temp file renamed at the end
        if output is None:
            render.write_json(report, sys.stdout)
            return
        _write_atomically(output, lambda f: render.write_json(report, f))
        return
    text = {
        "brief": lambda: render.to_brief(report),
        "junit": lambda: render.to_junit(report, fail_on),
        "markdown": lambda: render.to_markdown(report),
        "prometheus": lambda: render.to_prometheus(report, duration_s),
        "table": lambda: render.to_markdown(report),
    }[fmt]()
    if output is None:
        sys.stdout.write(text + ("\n" if not text.endswith("\n") else ""))
    else:
        _write_atomically(output, lambda f: f.write(text + "\n"))


def _write_atomically(output: Path, write: Callable[[IO[str]], object]) -> None:
    """Write ``output`` through a temp file beside it, renamed when complete: a CI job that reads the report
    never sees half of one, and a failed write leaves the previous report (or nothing), not a truncated file.
    The temp name is random and created O_EXCL|O_NOFOLLOW, in a dir no other user can change
    (kafka_ops.engine.outputs): a link planted at the name is never written through."""
    from kafka_ops.engine.outputs import OutputError, output_file

    try:
        with output_file(str(output)) as f:
            write(f)
    except OutputError as exc:
        fail(str(exc))


# ------------------------------------------------------------------------------------- the shared options
# Declared once, in kafka_ops.audit.cmdoptions (the collector builds its argparse parser from the same table); here
# they become Typer parameters: one Annotated type per option, and with_options() for a command's whole group.
def _choice_enum(name: str, dest: str) -> Any:
    """An option's choices as the Enum Typer wants (its values, in the declared order)."""
    return StrEnum(name, [(c, c) for c in OPTIONS[dest].choices])  # type: ignore[misc]


BrokerState = _choice_enum("BrokerState", "broker_state")
Severity = _choice_enum("Severity", "fail_on")  # --fail-on's values (any case): a severity, or never
_ENUMS = {"broker_state": BrokerState, "fail_on": Severity}


def typer_option(dest: str) -> Any:
    """The Typer parameter type of one shared option (kafka_ops.audit.cmdoptions.OPTIONS[dest])."""
    o = OPTIONS[dest]
    kind: Any
    if o.choices:
        kind = _ENUMS[dest]
    elif o.flag:
        kind = bool
    else:
        one: Any = Path if o.path else str
        kind = list[one] | None if o.repeat else one if o.default is not None else one | None
    return Annotated[
        kind, typer.Option(o.name, metavar=o.metavar or None, help=o.help, case_sensitive=not o.any_case)
    ]


def option_default(dest: str) -> Any:
    """The value a command gets when the option is not given (a repeatable option's: None, i.e. none given)."""
    o = OPTIONS[dest]
    if o.choices:
        return _ENUMS[dest](o.default)
    return False if o.flag else None if o.repeat else o.default


def with_options(group: str, dests: tuple[str, ...]) -> Callable[[Any], Any]:
    """Give a command the shared options ``dests`` in place of its parameter ``group`` (where they are listed in
    its --help), and call it with their values as one dict under that name (a choice as its text)."""

    def wrap(fn: Callable[..., Any]) -> Callable[..., Any]:
        sig = inspect.signature(fn, eval_str=True)
        params: list[inspect.Parameter] = []
        for p in sig.parameters.values():
            if p.name != group:
                params.append(p)
                continue
            params += [
                inspect.Parameter(d, p.kind, default=option_default(d), annotation=typer_option(d))
                for d in dests
            ]

        @functools.wraps(fn)
        def command(**kw: Any) -> Any:
            given = {d: kw.pop(d) for d in dests}
            kw[group] = {d: v.value if isinstance(v, StrEnum) else v for d, v in given.items()}
            return fn(**kw)

        command.__signature__ = sig.replace(parameters=params)  # type: ignore[attr-defined]
        command.__annotations__ = {p.name: p.annotation for p in params}
        return command

    return wrap


Given = dict[str, Any]  # a group of shared options' values, by dest
GIVEN: Any = None  # the default of a group's parameter in a command's def: with_options passes the values

LogDirOpt = typer_option("log_dir")
ServerPropsOpt = typer_option("server_properties")
BrokerUserOpt = typer_option("broker_user")
KafkaVersionOpt = typer_option("kafka_version")
TopicConfigsOpt = typer_option("topic_configs")
UnitOpt = typer_option("systemd_unit")
StateOpt = typer_option("broker_state")
NowOpt = typer_option("now")


def read_waiver_options(waive: list[str] | None, waive_file: Path | None) -> list[Any]:
    """The waivers of --waive and --waive-file (kafka_ops.audit.waivers_from), or one line saying which is wrong."""
    from kafka_ops.audit import waivers_from
    from kafka_ops.audit.options import OptionError, check_input_file

    if waive_file is not None:
        try:
            check_input_file(str(waive_file), "--waive-file")
        except OptionError as exc:
            fail(str(exc))
    try:
        return waivers_from(waive or [], str(waive_file) if waive_file is not None else None)
    except ValueError as exc:
        fail(str(exc))


@app.command(cls=Command)
@with_options("inputs", INPUTS)
@with_options("gate", GATE)
def audit(
    inputs: Given = GIVEN,
    format: Annotated[
        AuditFormat,
        typer.Option(
            "--format",
            "-f",
            help="table (findings grouped per check), brief (one line per finding: 'path: CHECK severity "
            "message'), json (the report), junit, markdown, html (a page: see `report`), or prometheus (node_exporter's "
            "textfile collector format: findings by check and severity, the gate, the next start's outcome).",
        ),
    ] = AuditFormat.table,
    gate: Given = GIVEN,
    bootstrap_server: BootstrapOpt = None,
    command_config: CommandConfigOpt = None,
    cluster_timeout: ClusterTimeoutOpt = 10.0,
    require_cluster: RequireClusterOpt = False,
    broker_id: Annotated[
        int | None,
        typer.Option(
            "--broker-id",
            metavar="ID",
            min=0,
            help="The audited broker's node id for the cluster checks (default: node.id/broker.id of meta.properties).",
        ),
    ] = None,
    zookeeper: Annotated[
        str | None,
        typer.Option(
            "--zookeeper",
            metavar="CONNECT|auto",
            help="Read ZooKeeper's /cluster/id (read only, bounded by --cluster-timeout) and compare it with "
            "meta.properties, as a ZooKeeper-mode broker does at its start (ENV002), and the topics' overrides and "
            "dynamic broker configs it loads its logs with (/config/topics, /config/brokers); auto: the "
            "zookeeper.connect of server.properties.",
        ),
    ] = None,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            "-o",
            metavar="FILE",
            help="Write the report to this file (html: default report.html).",
        ),
    ] = None,
    verbose: Annotated[
        bool,
        typer.Option(
            "--verbose",
            "-v",
            help="table: every finding whole, each with its message and fix (default: the verdict and the next "
            "start first, a summary line per check, then per check its first locations and the first sentence "
            "of its message and of its fix).",
        ),
    ] = False,
) -> None:
    """Audit a broker host's data dirs, systemd unit and config: what the broker will delete, rebuild, recover
    or refuse at its next start, why, and the exact fix.

    Waived findings (--waive, --waive-file) stay in the report, marked waived, and do not fail the gate.

    With --bootstrap-server the running cluster is asked once (bounded by --cluster-timeout): its topic configs
    replace server.properties defaults and --topic-configs, and CLU001-CLU004 judge whether it can spare this
    broker now. A cluster that does not answer is a skip with its reason (exit 2 with --require-cluster).

    Exit codes: 0 nothing at or above --fail-on but what is waived; 1 something is; 2 bad usage or unreadable
    input; 3 a bug in kafka-ops.
    """
    waivers = read_waiver_options(gate["waive"], gate["waive_file"])
    check_output(output if output is not None or format is not AuditFormat.html else Path("report.html"))
    opts = build_options(**inputs)
    if not opts.log_dirs and not opts.server_properties and not Path("/etc/kafka/server.properties").exists():
        fail("no log dirs to audit: give --log-dir or --server-properties")
    add_cluster(opts, bootstrap_server, command_config, cluster_timeout, require_cluster, broker_id)
    add_zookeeper(opts, zookeeper, cluster_timeout)
    import time

    started = time.monotonic()
    report = run_with_progress(opts, show=sys.stderr.isatty() and format is AuditFormat.table)
    duration_s = time.monotonic() - started
    if not report["log_dirs"] and not any(f["check"] == "CONF001" for f in report["findings"]):
        fail("no log dirs to audit: log.dirs is empty and no --log-dir was given")
    from kafka_ops.audit import apply_gate, apply_waivers, run_summary, unusable

    why = unusable(report)
    if why is not None:
        fail(why)

    matched = apply_waivers(report, waivers) if waivers else None
    code = apply_gate(report, gate["fail_on"], matched)
    for w in matched or []:
        if not w["matched"]:
            note_later(f"warning: waiver {w['rule']} ({w['source']}) matched no finding")
    keep_exit_code(code)
    show_notes()
    emit(report, format.value, gate["fail_on"], output, verbose, duration_s)
    # on stderr in every format: what the audit decided for itself and skipped, and (when stdout does not show
    # it) the verdict, so that a CI log of `-f junit -o FILE` says why it passed or failed
    from kafka_ops.render.text import verdict

    say(run_summary(report), piped=True)
    if output is not None or format in (
        AuditFormat.json,
        AuditFormat.junit,
        AuditFormat.html,
        AuditFormat.prometheus,
    ):
        say(verdict(report), piped=True)
        write_err(failing_lines(report))
    raise typer.Exit(code)


FAILING_SHOWN = 20  # findings named on stderr under the verdict (a CI log), then "and N more"


def failing_lines(report: dict[str, Any], limit: int = FAILING_SHOWN) -> list[str]:
    """The findings that fail the gate, one line each (check, severity, where), as ruff and ansible-lint name
    theirs in a CI log: the report file has the rest."""
    from kafka_ops.checks.base import at_least
    from kafka_ops.render.text import where

    fail_on = (report.get("gate") or {}).get("fail_on", "critical")
    failing = [f for f in report["findings"] if at_least(f["severity"], fail_on) and not f.get("waived")]
    lines = [f"  {f['check']} {f['severity']} {where(report, f) or '-'}" for f in failing[:limit]]
    if len(failing) > limit:
        lines.append(f"  and {len(failing) - limit} more (the report lists them all)")
    return lines
