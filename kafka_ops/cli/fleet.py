"""`kafka-ops fleet audit` (the audit of every broker as one PySpark job) and `kafka-ops fleet diff`."""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import typer

from kafka_ops.audit.cmdoptions import GATE, INPUTS
from kafka_ops.cli.audit import (
    GIVEN,
    AuditFormat,
    Given,
    add_cluster,
    emit,
    read_waiver_options,
    with_options,
)
from kafka_ops.cli.cluster import BootstrapOpt, ClusterTimeoutOpt, CommandConfigOpt, RequireClusterOpt
from kafka_ops.cli.framework import Command, Group, OutputFormat, app, fail, say, show_notes
from kafka_ops.units import seconds_parser

fleet_app = typer.Typer(
    cls=Group,
    name="fleet",
    help="Audit a fleet of brokers as one PySpark job (local[*] by default, or --master / spark-submit).",
    no_args_is_help=True,
)
app.add_typer(fleet_app, name="fleet")


def default_results() -> str:
    """This user's own results dir: $XDG_STATE_HOME/kafka-ops/fleet, or ~/.local/state/kafka-ops/fleet (XDG Base
    Directory spec: a relative XDG_STATE_HOME is ignored). Never a dir shared by everyone who runs as root with
    their own XDG_STATE_HOME (sudo keeps it only when told to)."""
    state = os.environ.get("XDG_STATE_HOME", "")
    if not os.path.isabs(state):
        state = os.path.join(os.path.expanduser("~"), ".local", "state")
    return os.path.join(state, "kafka-ops", "fleet")


ResultsOpt = Annotated[
    str | None,
    typer.Option(
        "--results",
        metavar="DIR|URI",
        help="Parquet results: a dir, or any URI Spark writes (file://, s3a://, hdfs://...): facts, findings, "
        "hosts, partitioned by run_date. Default: your own $XDG_STATE_HOME/kafka-ops/fleet "
        "(~/.local/state/kafka-ops/fleet).",
        show_default=False,
    ),
]
ConfOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--conf",
        metavar="KEY=VALUE",
        help="A Spark setting (repeatable), applied last: e.g. spark.archives=env.tar.gz#env, "
        "spark.driver.memory=4g, spark.ui.enabled=true.",
    ),
]
ExecutorPythonOpt = Annotated[
    str | None,
    typer.Option(
        "--executor-python",
        metavar="PATH",
        help="The executors' Python (spark.pyspark.python), e.g. ./env/bin/python of a packed env sent with "
        "--conf spark.archives=env.tar.gz#env. Default: this Python for local[*], else the cluster's.",
    ),
]


def _conf(pairs: list[str] | None) -> dict[str, str]:
    out: dict[str, str] = {}
    for p in pairs or []:
        key, eq, value = p.partition("=")
        if not eq or not key.strip():
            fail(f"--conf {p!r}: expected KEY=VALUE (e.g. spark.driver.memory=4g)")
        out[key.strip()] = value
    return out


def _first_line(exc: Exception) -> str:
    text = str(exc).strip()
    from kafka_ops.fleet.shipping import EXECUTOR_ERROR

    m = re.search(re.escape(EXECUTOR_ERROR) + r"(.*)", text)
    if m:  # an executor that cannot run the job says why and how to fix it: that line, not Spark's trace
        return m.group(1).strip()
    for line in text.splitlines():
        if "Exception:" in line or "Error:" in line:
            return line.strip()[:300]
    return (text.splitlines() or [type(exc).__name__])[0][:300]


@contextlib.contextmanager
def _captured_stderr() -> Iterator[dict[str, Any]]:
    """Ansible writes its inventory warnings straight to fd 2, several lines each: keep them out of stderr, and
    show what is left afterwards as one line per warning."""
    import tempfile

    state: dict[str, Any] = {"drop": False, "text": ""}
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile(mode="w+b") as tmp:
        os.dup2(tmp.fileno(), 2)
        try:
            yield state
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            tmp.seek(0)
            text = state["text"] = tmp.read().decode("utf-8", errors="replace")
            for line in [] if state["drop"] else re.findall(r"\[WARNING\]: (.*)", text):
                say(f"warning: ansible: {line.strip()}")


@contextlib.contextmanager
def _jvm_stdout_to_stderr() -> Iterator[None]:
    """While the Spark JVM is started, fd 1 is stderr: the JVM inherits it, so nothing Spark or Java prints ever
    lands on stdout, which stays the report's alone (``-f json > report.json`` is valid JSON)."""
    sys.stdout.flush()
    try:
        saved = os.dup(1)
    except OSError:  # no fd 1
        yield
        return
    os.dup2(2, 1)
    try:
        yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)


def _spark(master: str | None, conf: dict[str, str] | None = None, executor_python: str | None = None) -> Any:
    try:
        from kafka_ops.fleet.job import spark_session
    except ImportError as exc:
        fail(f"the fleet job needs the spark extra: pip install 'kafka-ops[spark]' ({exc})")
    try:
        with _jvm_stdout_to_stderr():
            return spark_session(master, conf=conf, executor_python=executor_python)
    except Exception as exc:  # the JVM or the master could not be started / reached
        fail(f"cannot start Spark{' on ' + master if master else ''}: {_first_line(exc)}")


@fleet_app.command("audit", cls=Command)
@with_options("inputs", INPUTS)
@with_options("gate", GATE)
def fleet_audit(
    inventory: Annotated[
        Path | None,
        typer.Option(
            "--inventory",
            "-i",
            metavar="FILE",
            help="Ansible inventory: hosts of group kafka_brokers and their vars.",
        ),
    ] = None,
    limit: Annotated[
        str | None,
        typer.Option(
            "--limit",
            metavar="PATTERN",
            help="Only these hosts or groups of the inventory (comma-separated).",
        ),
    ] = None,
    inputs: Given = GIVEN,
    format: Annotated[
        AuditFormat,
        typer.Option(
            "--format", "-f", help="table, brief, json (the report + fleet), junit, markdown or html."
        ),
    ] = AuditFormat.table,
    gate: Given = GIVEN,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", metavar="FILE", help="Write the report to this file.")
    ] = None,
    master: Annotated[
        str | None,
        typer.Option(
            "--master", metavar="URL", help="Spark master URL (default local[*], or spark-submit's)."
        ),
    ] = None,
    results: ResultsOpt = None,
    no_results: Annotated[bool, typer.Option("--no-results", help="Do not write Parquet results.")] = False,
    leaders: Annotated[
        Path | None,
        typer.Option(
            "--leaders", metavar="FILE", help="`kafka-topics --describe` output: who leads each partition."
        ),
    ] = None,
    known_hosts: Annotated[
        Path | None,
        typer.Option(
            "--known-hosts", metavar="FILE", help="Host keys to verify against (default ~/.ssh/known_hosts)."
        ),
    ] = None,
    connect_timeout: Annotated[
        float,
        typer.Option(
            "--connect-timeout",
            metavar="DURATION",
            parser=seconds_parser(0.1),
            help="SSH timeout: seconds (10) or a duration (10s, 1m).",
        ),
    ] = 10.0,
    host_timeout: Annotated[
        float,
        typer.Option(
            "--host-timeout",
            metavar="DURATION",
            parser=seconds_parser(1),
            help="Wall-clock time one SSH host's audit may take, from its connection (a collector still running "
            "then is that host's FLEET005): seconds (1800) or a duration (30m).",
        ),
    ] = 1800.0,
    tasks: Annotated[
        int | None,
        typer.Option(
            "--tasks", metavar="N", min=1, help="Spark tasks to spread the hosts over (default: 4 per core)."
        ),
    ] = None,
    ssh_threads: Annotated[
        int,
        typer.Option("--ssh-threads", metavar="N", min=1, help="SSH hosts audited at once in each task."),
    ] = 16,
    conf: ConfOpt = None,
    executor_python: ExecutorPythonOpt = None,
    name: Annotated[str, typer.Option("--name", metavar="NAME", help="The fleet's name in the report.")] = "",
    bootstrap_server: BootstrapOpt = None,
    command_config: CommandConfigOpt = None,
    cluster_timeout: ClusterTimeoutOpt = 10.0,
    require_cluster: RequireClusterOpt = False,
) -> None:
    """Audit every broker of a fleet with the same checks as `kafka-ops audit`, as one PySpark job, and add what
    only a fleet view shows: which replicas are at risk (leader or follower), per-topic impact, per-host summary.

    Hosts come from --inventory (SSH with paramiko; known_hosts verified; `sudo -n -u <broker user>`) or are the
    local host's --log-dir paths. A host that cannot be audited is a FLEET00N finding, not a failed job.
    On a cluster (--master, spark-submit) the job sends kafka-ops, the SSH key files and known_hosts (read
    on this machine) with itself; SSH hosts also need paramiko on the executors: --executor-python of a packed
    environment (--conf spark.archives=env.tar.gz#env).
    With --bootstrap-server the cluster is asked once, by the driver, and CLU001-CLU004 judge each broker from
    that one answer (its node id from its meta.properties).
    Waivers (--waive, --waive-file) are the audit's: waived findings stay in the report, marked waived, and do
    not fail the gate (the Parquet results keep every finding as found).
    Exit codes: 0 nothing at or above --fail-on but what is waived; 1 something is; 2 bad usage or input.
    """
    from kafka_ops.cli.audit import build_options
    from kafka_ops.fleet.inventory import InventoryError, local_target, override, read_inventory

    waivers = read_waiver_options(
        gate["waive"], gate["waive_file"]
    )  # before Spark starts: a bad waiver is one line, at once

    opts = build_options(
        check_paths=inventory
        is None,  # an inventory's paths are on its hosts: the collector checks them there
        **inputs,
    )
    if inventory is not None:
        from kafka_ops.audit.options import _head, _is_binary

        if inventory.is_file() and not os.access(inventory, os.X_OK) and _is_binary(_head(str(inventory))):
            fail(f"{inventory}: binary data, not an inventory (ini, yaml, or an executable inventory script)")
        error = None
        with _captured_stderr() as noise:
            try:
                targets = read_inventory(str(inventory), limit)
            except InventoryError as exc:
                noise["drop"] = True  # ansible's own warnings about the same failure: the one line says it
                error = str(exc)
        if error is not None and f"Unable to parse {inventory} as an inventory source" in noise["text"]:
            error = (
                f"{inventory}: not an inventory Ansible can read (no ini, yaml or script plugin parsed it)"
            )
        if error is not None:
            fail(error)
        targets = override(
            targets, log_dirs=opts.log_dirs, server_properties=opts.server_properties,
            broker_user=opts.broker_user, kafka_version=opts.kafka_version, systemd_unit=opts.systemd_unit,
        )  # fmt: skip
        source = f"--inventory {inventory}"
    elif opts.log_dirs or opts.server_properties:
        if limit:
            fail("--limit needs --inventory")
        from dataclasses import replace

        t = local_target(opts.log_dirs)
        targets = [
            replace(
                t, server_properties=opts.server_properties, broker_user=opts.broker_user,
                kafka_version=opts.kafka_version, systemd_unit=opts.systemd_unit,
            )
        ]  # fmt: skip
        source = "--log-dir" if opts.log_dirs else "--server-properties"
    else:
        fail("no hosts to audit: give --inventory or --log-dir")
    if leaders is not None and not leaders.exists():
        fail(f"{leaders}: no such file (--leaders takes kafka-topics --describe output)")
    if leaders is not None:
        from kafka_ops.audit.options import OptionError, check_input_file

        try:
            check_input_file(str(leaders), "--leaders")
        except OptionError as exc:
            fail(str(exc))
    from kafka_ops.fleet.shipping import resolve_credentials

    try:  # on the driver, before Spark starts: ~ is this user's home, a missing file an error
        targets, kh = resolve_credentials(targets, str(known_hosts) if known_hosts else None)
    except ValueError as exc:
        fail(str(exc))
    spark_conf = _conf(conf)
    add_cluster(opts, bootstrap_server, command_config, cluster_timeout, require_cluster, None)
    settings = {
        "now_ms": opts.now_ms if opts.now_ms is not None else int(time.time() * 1000),
        "now_given": opts.now_ms is not None,
        "horizon": inputs["horizon"], "broker_state": inputs["broker_state"], "fail_on": gate["fail_on"],
        "topic_configs": opts.topic_configs, "broker_log": opts.logs, "probe_as_user": inputs["probe_as_user"],
        "deep": inputs["deep"], "expect_mount": opts.expected_mounts, "known_hosts": kh,
        "connect_timeout": connect_timeout, "host_timeout": host_timeout, "targets_source": source, "ssh_threads": ssh_threads,
        "cluster": opts.cluster, "cluster_skip": opts.cluster_skip,
    }  # fmt: skip
    from kafka_ops.fleet.results import is_uri, local_or_uri

    out = None if no_results else local_or_uri(results or default_results())
    spark = _spark(master, spark_conf, executor_python)
    from kafka_ops.fleet.job import run_fleet

    if out and not is_uri(out) and not spark.sparkContext.master.startswith("local"):
        say(
            f"warning: --results {out} is a path: on a cluster each executor writes its part of the results on "
            "its own disk; give a URI every node reaches (s3a://..., hdfs://...) or a shared file system"
        )

    try:
        run = run_fleet(
            spark, targets, settings, name=name or (inventory.name if inventory else targets[0].name),
            results=out, leaders_file=str(leaders) if leaders else None,
            progress=sys.stderr.isatty() and format is AuditFormat.table, tasks=tasks,
        )  # fmt: skip
    except (ValueError, OSError) as exc:  # --leaders unreadable, results dir not writable
        fail(str(exc))
    except Exception as exc:  # Spark itself failed (lost executors, a master gone): one line, not a JVM trace
        fail(f"the Spark job failed: {_first_line(exc)}")
    report = run.report
    code = report["gate"]["exit_code"]
    if waivers:
        from kafka_ops.audit import apply_gate, apply_waivers

        matched = apply_waivers(report, waivers)
        code = apply_gate(report, gate["fail_on"], matched)
        for w in matched:
            if not w["matched"]:
                say(f"warning: waiver {w['rule']} ({w['source']}) matched no finding")
    show_notes()
    t = run.timings
    say(
        f"run {run.run_id}: {len(targets)} host(s) in {run.tasks} Spark task(s), {run.jobs} Spark job(s); "
        f"audit {t['audit_s']:.1f} s, view {t['view_s']:.1f} s, results {t['write_s']:.1f} s"
    )
    emit(report, format.value, gate["fail_on"], output)
    if format is AuditFormat.table and output is None:
        show_fleet_table(report)
    elif output is not None or format not in (AuditFormat.brief, AuditFormat.markdown):
        # as `audit`: a CI log of `-f json -o FILE` says the verdict and which findings (host:path) fail it
        from kafka_ops.cli.audit import failing_lines
        from kafka_ops.cli.framework import write_err
        from kafka_ops.render.text import verdict

        say(verdict(report), piped=True)
        write_err(failing_lines(report))
    raise typer.Exit(code)


def show_fleet_table(report: dict[str, Any]) -> None:
    """The fleet's tables on stdout at COLUMNS (or the terminal's width, or 80): rich folds the cells to fit."""
    from rich.console import Console

    from kafka_ops.cli.framework import screen_width
    from kafka_ops.fleet.render import fleet_table

    fleet_table(report, Console(width=screen_width(), highlight=False))


@fleet_app.command("diff", cls=Command)
def fleet_diff(
    results: ResultsOpt = None,
    base: Annotated[
        str | None,
        typer.Option(
            "--base", metavar="RUN_ID", help="Run id to compare from (default: the one before head)."
        ),
    ] = None,
    head: Annotated[
        str | None,
        typer.Option("--head", metavar="RUN_ID", help="Run id to compare to (default: the latest)."),
    ] = None,
    format: Annotated[OutputFormat, typer.Option("--format", "-f", help="text or json.")] = OutputFormat.text,
    master: Annotated[
        str | None, typer.Option("--master", metavar="URL", help="Spark master URL (default local[*]).")
    ] = None,
    conf: ConfOpt = None,
) -> None:
    """What changed between two fleet runs (default: the last two): new and resolved findings, partitions that
    appeared or vanished, hosts whose status changed. Results in a local dir are read directly (pyarrow), without
    starting Spark; a URI (s3a://, hdfs://) is read by Spark. With only one run there is nothing to compare: it
    says so (exit 0). Exit 1 when there are new findings; 2 when the results or a run id are not there."""
    from kafka_ops.fleet.localdiff import local_dir, local_or_uri

    path = local_or_uri(results or default_results())
    local = local_dir(path)
    if local is not None and not os.path.isdir(os.path.join(local, "hosts")):
        again = f" --results {results}" if results else ""
        fail(f"{local}: no fleet results here (run `kafka-ops fleet audit{again}` first)")
    d = _diff_local(local, base, head) if local is not None and master is None else None
    if d is None:
        spark = _spark(master, _conf(conf))
        from kafka_ops.fleet.results import ResultsError, diff

        try:
            d = diff(spark, path, base, head)
        except ResultsError as exc:
            if "only one run (" not in str(exc):
                fail(str(exc))
            d = _one_run(str(exc))
    if format is OutputFormat.json:
        sys.stdout.write(json.dumps(d, indent=2, default=str) + "\n")
    elif d.get("note"):
        sys.stdout.write(d["note"] + "\n")
    else:
        from kafka_ops.fleet.render import diff_text

        sys.stdout.write(diff_text(d) + "\n")
    raise typer.Exit(1 if d["new_findings"] else 0)


@fleet_app.command(
    "submit",
    cls=Command,
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
)
def fleet_submit(ctx: typer.Context) -> None:
    """Run `kafka-ops fleet audit` or `fleet diff` through spark-submit: `kafka-ops fleet submit [SPARK-SUBMIT
    OPTIONS] audit ARGS`. Uses the spark-submit of the pyspark installed with kafka-ops (SPARK_HOME its package
    dir, unless SPARK_HOME is set), with this Python as the driver's: no SPARK_HOME to export, no venv to
    activate. spark-submit's exit code is the command's; stdout stays the report's alone."""
    import shlex

    from kafka_ops.fleet.submit import SubmitError, command

    try:
        argv, env = command(list(ctx.args))
    except SubmitError as exc:
        fail(str(exc))
    say(
        f"SPARK_HOME={env['SPARK_HOME']} PYSPARK_DRIVER_PYTHON={env['PYSPARK_DRIVER_PYTHON']} {shlex.join(argv)}"
    )
    sys.stdout.flush()
    os.execve(argv[0], argv, env)


def _one_run(note: str, head: str | None = None) -> dict[str, Any]:
    return {
        "base": None, "head": head, "note": note, "new_findings": [], "resolved_findings": [],
        "partitions_added": [], "partitions_removed": [], "host_status_changes": [],
    }  # fmt: skip


def _diff_local(local: str, base: str | None, head: str | None) -> dict[str, Any] | None:
    """The diff of a local results dir without Spark (fleet.localdiff); None when pyarrow is missing."""
    try:
        from kafka_ops.fleet import localdiff
    except ImportError:
        return None
    try:
        ids = localdiff.runs(local)
        b, h = localdiff.pick(ids, local, base, head)
    except ImportError:
        return None
    except localdiff.RunNotFound as exc:
        fail(str(exc))
    except (OSError, ValueError) as exc:  # pyarrow: ArrowInvalid is a ValueError, a missing file an OSError
        fail(f"{local}: cannot read the fleet results ({_first_line(exc)})")
    if b is None:
        return _one_run(f"{local}: only one run ({h}): nothing to compare it with yet", h)
    try:
        return localdiff.diff(local, b, h)
    except (OSError, ValueError) as exc:
        fail(f"{local}: cannot read the fleet results ({_first_line(exc)})")
