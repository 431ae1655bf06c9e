"""`kafka-ops rehearse`: start the stopped broker's own Kafka on a copy-on-write view of its log dirs, in a sandbox."""

from __future__ import annotations

import json
import os
import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer

from kafka_ops.cli.audit import GIVEN, Given, add_cluster, build_options, read_waiver_options, with_options
from kafka_ops.cli.cluster import BootstrapOpt, ClusterTimeoutOpt, CommandConfigOpt
from kafka_ops.cli.framework import Command, app, fail, keep_exit_code, say, show_notes

# the audit's inputs that describe the node (the log dirs are server.properties' own: the sandbox overlays them)
REHEARSE_INPUTS = (
    "server_properties", "broker_user", "kafka_version", "topic_configs", "systemd_unit", "broker_state", "now",
    "horizon", "broker_log",
)  # fmt: skip


class RehearseFormat(StrEnum):
    text = "text"
    json = "json"


@app.command(cls=Command)
@with_options("inputs", REHEARSE_INPUTS)
@with_options("gate", ("waive", "waive_file"))
def rehearse(
    inputs: Given = GIVEN,
    gate: Given = GIVEN,
    kafka_home: Annotated[
        Path | None,
        typer.Option(
            "--kafka-home",
            metavar="DIR",
            help="The Kafka distribution to start (its libs/ is what is used; default: $KAFKA_HOME, the unit's "
            "KAFKA_HOME, else the installation next to its ExecStart or in /opt/kafka). Another release's home "
            "rehearses an upgrade.",
        ),
    ] = None,
    java: Annotated[
        Path | None,
        typer.Option(
            "--java",
            metavar="PATH",
            help="The java binary (default: $JAVA_HOME's, the unit's JAVA_HOME's, the java its ExecStart runs, "
            "else PATH's).",
        ),
    ] = None,
    scratch: Annotated[
        Path | None,
        typer.Option(
            "--scratch",
            metavar="DIR",
            help="Root-owned dir for the overlays' writable layers (default /var/lib/kafka-ops/rehearse); on the log "
            "dirs' own XFS (reflink=1) or btrfs filesystem the copy-up costs ~no space, elsewhere the data's size.",
        ),
    ] = None,
    window: Annotated[
        float | None,
        typer.Option(
            "--window",
            metavar="SECONDS",
            min=0,
            help="How long to watch the broker once started (default: log.initial.task.delay.ms, or 30 s before "
            "3.8, + file.delete.delay.ms + 5 s: the first retention pass and its deletions).",
        ),
    ] = None,
    heap: Annotated[
        str, typer.Option("--heap", metavar="SIZE", help="The sandboxed JVM's heap (-Xmx/-Xms).")
    ] = "1g",
    bootstrap_server: BootstrapOpt = None,
    command_config: CommandConfigOpt = None,
    cluster_timeout: ClusterTimeoutOpt = 10.0,
    format: Annotated[
        RehearseFormat,
        typer.Option("--format", "-f", help="text (the outcome and differences) or json (the report)."),
    ] = RehearseFormat.text,
) -> None:
    """Rehearse the next start of a stopped node: a KRaft broker, combined node or dedicated controller (judged
    by "Becoming the active controller"), or a broker in ZooKeeper mode,
    its own Kafka started on its own log dirs through overlays (the real dirs a read-only lower layer, every write on --scratch, thrown away), in private
    mount, network (loopback only) and pid namespaces, as the broker user, its listeners on loopback and
    (KRaft) as its own single-voter quorum (ZooKeeper mode: beside a throwaway ZooKeeper seeded from the
    real one, read-only, else from the cluster --bootstrap-server names, else with meta.properties' cluster id). Reports the audit (its next_start is the plan) plus
    `rehearsal`: what the start did, where it differs from the plan, timings and scratch bytes.

    Refused, with the reason, unless run as root on a stopped broker with room on --scratch for the worst-case
    copy-up. A KIP-853 quorum (controller.quorum.bootstrap.servers) keeps its voter set in the metadata log:
    the sandbox appends, to the overlay's copy only, VotersRecords that make the node its only voter; refused,
    with the reason, when the stored set has the node's id with another directory id (its real start is an
    observer) or the log cannot take the batch. With --kafka-home of
    another release than the installed one (the unit's, or --broker-log's "Kafka version"), the report names
    both: an upgrade rehearsal, the plan made for the new release.

    A segment the rehearsed start deleted fails the gate unless waived as in the audit: --waive RET002[:GLOB]
    for what retention deletes, SHUT002 for what recovery deletes, DIR003 for a -delete dir the start removes (GLOB
    matched on the .log).

    Exit codes: 0 the rehearsed start started with every log dir online and deleted nothing not waived; 1 it
    exited, did not start, took a log dir offline or deleted data not waived; 2 refused or bad input; 3 a bug in
    kafka-ops.
    """
    from kafka_ops.rehearse import RehearsalRefused, RehearseOptions, failed
    from kafka_ops.rehearse import home as found
    from kafka_ops.rehearse import rehearse as run
    from kafka_ops.rehearse.scratch import DEFAULT_SCRATCH

    waivers = read_waiver_options(gate["waive"], gate["waive_file"])
    opts = build_options(**inputs)
    # the cluster's topic configs for the plan, as in the audit; in ZooKeeper mode also the sandbox's seed when the
    # real ZooKeeper does not answer
    add_cluster(opts, bootstrap_server, command_config, cluster_timeout, False, None)
    # the host's own Kafka and Java, as its unit starts them, unless named (kafka_ops.rehearse.home)
    home = (
        (str(kafka_home), "--kafka-home")
        if kafka_home is not None
        else found.find_kafka_home(opts.systemd_unit)
    )
    if home is None:
        fail(
            "no Kafka to start: give --kafka-home (none in $KAFKA_HOME, in the unit's environment, nor an "
            "installation next to its ExecStart or in /opt/kafka)"
        )
    java_bin = (str(java), "--java") if java is not None else found.find_java(opts.systemd_unit)
    if java_bin is None or not os.access(java_bin[0], os.X_OK):
        where = f"{java_bin[0]} ({java_bin[1]})" if java_bin else "none found"
        fail(f"no executable java: {where}; give --java or JAVA_HOME")
    ro = RehearseOptions(
        kafka_home=os.path.abspath(home[0]),
        java=java_bin[0],
        broker_user=inputs.get("broker_user"),
        scratch=str(scratch) if scratch is not None else DEFAULT_SCRATCH,
        window_s=window,
        heap=heap,
        kafka_home_source=home[1],
        java_source=java_bin[1],
    )
    show_notes()
    try:
        report = run(opts, ro, progress=say)
    except RehearsalRefused as exc:
        fail(f"refused: {exc}")
    from kafka_ops.render.models import validate

    validate({k: v for k, v in report.items() if k != "rehearsal"})  # the audit's part: the published schema
    code = 1 if failed(report, waivers) else 0
    keep_exit_code(code)
    if format is RehearseFormat.json:
        json.dump(report, sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(to_text(report))
    raise typer.Exit(code)


def to_text(report: dict[str, Any]) -> str:
    from kafka_ops.engine.shell import printable, q

    r = report["rehearsal"]
    plan, obs = report["next_start"], r["observed"]
    t = r["timings"]
    vs = r.get("voter_set")
    lines = [] if vs is None else [
        # KIP-853: the voter set the sandbox arranged in the overlay's metadata log (the real log unchanged)
        "voters:   stored "
        + ", ".join(f"{v['id']} ({v['directory_id']})" for v in vs["stored"])
        + f" ({vs['stored_at']}); in the sandbox "
        + " -> ".join("{" + ",".join(map(str, s)) + "}" for s in vs["appended_sets"])
        + f" appended at offset {vs['appended_at_offset']}: the node its own only voter"
    ]  # fmt: skip
    lines += [
        f"plan:     the broker {plan.get('broker')}" + (f" ({plan['reason']})" if plan.get("reason") else ""),
        f"rehearsal: Kafka {r['kafka_version'] or '?'}"
        + (
            f" (an upgrade: the data of Kafka {r['installed_version']['value']}, "
            f"{r['installed_version']['source']})"
            if r.get("upgrade")
            else ""
        )
        + f" {obs['broker']}"
        + (f" in {t['start_s']} s" if t["start_s"] is not None else "")
        + (f": {obs['reason']}" if obs.get("reason") and obs["broker"] != "starts" else ""),
    ]
    for d in obs["log_dirs"]:
        load = (
            f", loaded {d['logs']} logs in {d['load_s']} s ("
            + ("clean shutdown" if d.get("clean_shutdown") else "recovery: no clean shutdown file")
            + ")"
            if d.get("logs") is not None
            else ""
        )
        lines.append(
            f"  log dir {q(d['path'])}: {d['state']}{load}" + (f" ({d['reason']})" if d["reason"] else "")
        )
    if obs.get("logs_loaded") is not None:
        lines.append(f"  {obs['logs_loaded']} logs loaded in {obs['load_ms']} ms")
    for g in obs.get("segments", []):
        if g["deleted_at"]:
            lines.append(
                f"  deleted {q(g['log'])} ({g['deleted_by'] or 'no reason logged'}) at {g['deleted_at']}"
            )
        elif g["load"] != "as_is":
            lines.append(f"  {g['load'].replace('_', ' ')}: {q(g['log'])}")
        if g.get("truncated_bytes"):
            lines.append(f"  truncated {g['truncated_bytes']:,} bytes: {q(g['log'])}")
    fates = {"renamed_stray": "renamed -stray (kept)", "deleted": "renamed -delete (deleted)"}
    for x in obs.get("strays") or []:
        lines.append(f"  stray {q(x['path'])}: {fates.get(x['fate'], x['fate'])}")
    for x in obs.get("leftovers") or []:
        lines.append(f"  leftover {q(x['path'])}: {x['fate'].replace('_', ' ')}")
    for x in obs.get("future_dirs") or []:
        lines.append(f"  future dir {q(x['path'])}: {x['fate'].replace('_', ' ')}")
    if r.get("zookeeper_seed"):
        z = r["zookeeper_seed"]
        lines.append(
            f"  ZooKeeper seeded from {z['source']}: {len(z['nodes'])} nodes, topics {', '.join(z['topics'])}"
        )
    lines.append(
        f"differences: {len(r['differences'])}" if r["differences"] else "differences: none (the plan agrees)"
    )
    lines += [f"  {x['text']}" for x in r["differences"]]
    lines.append(
        f"timings: audit {t['audit_s']} s, sandbox {t['setup_and_run_s']} s (window {t['window_s']} s, stop "
        f"{t['stop_s']} s), cleanup {t['cleanup_s']} s; scratch used {r['scratch_bytes']:,} bytes"
    )
    g = r.get("gate")
    if g is not None:
        lines.append(
            "gate: passed" + (f" ({g['waived']} deletions waived)" if g["waived"] else "")
            if g["passed"]
            else "gate: FAILED"
        )
        lines += [f"  {x}" for x in g["failing"]]
    real = r["real_dirs"]
    lines.append(
        f"real log dirs: {real['entries']} entries, "
        + (
            "unchanged (size, mode, owner, mtime)"
            if real["unchanged"]
            else f"CHANGED: {', '.join(map(q, real['changed']))}"
        )
    )
    # names from the log dirs reach these lines through the plan and the broker's log: no control character of
    # theirs reaches the terminal
    return "\n".join(printable(x) for x in lines) + "\n"
