"""`kafka-ops cluster check`: the rolling restart's two questions, asked of the running cluster; and the cluster
options that `audit` shares."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from kafka_ops.cli.framework import Command, Group, OutputFormat, app, echo_wrapped, fail, say
from kafka_ops.units import seconds_parser

if TYPE_CHECKING:
    from kafka_ops.broker.replication import Waiver

cluster_app = typer.Typer(
    cls=Group,
    name="cluster",
    help="Ask the running cluster what a rolling restart needs to know.",
    no_args_is_help=True,
)
app.add_typer(cluster_app, name="cluster")

BootstrapOpt = Annotated[
    str | None,
    typer.Option(
        "--bootstrap-server",
        metavar="HOST:PORT",
        help="A broker of the running cluster (comma-separated for several): its topic configs, leaders, ISRs and "
        "log dirs join the audit (checks CLU001-CLU004).",
    ),
]
CommandConfigOpt = Annotated[
    Path | None,
    typer.Option(
        "--command-config",
        metavar="FILE",
        help="Client properties for --bootstrap-server, as Kafka's tools take them (security.protocol, sasl.*, "
        "ssl.* with JKS, PKCS12 or PEM stores: the cluster extra; JKS also needs keytool, a Java runtime).",
    ),
]
RequireClusterOpt = Annotated[
    bool,
    typer.Option(
        "--require-cluster",
        help="Exit 2 when the cluster cannot be asked (default: the cluster checks are skipped, with the reason).",
    ),
]
ClusterTimeoutOpt = Annotated[
    float,
    typer.Option(
        "--cluster-timeout",
        metavar="DURATION",
        help="Bound on each request to the cluster: seconds (10) or a duration (10s, 1m).",
        parser=seconds_parser(0.5),
    ),
]

RetryDelayOpt = Annotated[
    float,
    typer.Option(
        "--retry-delay",
        metavar="DURATION",
        parser=seconds_parser(0.0),
        help="Wait before the first retry (seconds, or a duration: 500ms, 2s); doubled each time.",
    ),
]


def ask_cluster(
    bootstrap: str, command_config: Path | None, timeout_s: float, attempts: int = 1, delay_s: float = 1.0
) -> dict[str, Any]:
    """The cluster's facts as plain data; ClusterUnavailable (one line) when it cannot be asked. A bad
    --command-config is the operator's mistake: one line and exit 2, whatever the caller does with an
    unreachable cluster."""
    from kafka_ops.cluster.client import ClusterUnavailable, read_command_config, retry
    from kafka_ops.cluster.facts import gather

    client_config: dict[str, Any] = {}
    if command_config is not None:
        from kafka_ops.audit.options import OptionError, check_input_file

        try:
            check_input_file(str(command_config), "--command-config")
        except OptionError as exc:
            fail(str(exc))
        try:
            client_config = read_command_config(str(command_config))
        except ClusterUnavailable as exc:
            fail(f"--command-config: {exc}")
    if attempts <= 1:
        return gather(bootstrap, client_config, timeout_s).to_dict()
    facts = retry(
        lambda: gather(bootstrap, client_config, timeout_s), attempts, delay_s, f"the cluster at {bootstrap}"
    )
    return facts.to_dict()


@cluster_app.command("check", cls=Command)
def check(
    bootstrap_server: Annotated[
        str, typer.Option("--bootstrap-server", metavar="HOST:PORT", help="A broker of the running cluster.")
    ],
    broker: Annotated[
        int, typer.Option("--broker", metavar="ID", help="The node id of the broker asked about.")
    ],
    after_start: Annotated[
        bool,
        typer.Option(
            "--after-start",
            help="Ask 'has the broker caught up after its start?' (listed by the cluster, so its recovery is done; "
            "in sync in every partition it replicates; no offline log dir) instead of 'may I stop it now?'.",
        ),
    ] = False,
    command_config: CommandConfigOpt = None,
    timeout: ClusterTimeoutOpt = 10.0,
    retries: Annotated[
        int,
        typer.Option(
            "--retries",
            metavar="N",
            min=0,
            help="Ask again up to N times while the answer is no or the cluster does not answer.",
        ),
    ] = 0,
    retry_delay: RetryDelayOpt = 5.0,
    strict_cluster: Annotated[
        bool,
        typer.Option(
            "--strict-cluster",
            help="Refuse also on under-replicated or offline partitions with no replica on broker ID (default: "
            "listed as a note and in unhealthy_elsewhere; its stop does not touch them).",
        ),
    ] = False,
    strict_min_isr: Annotated[
        bool,
        typer.Option(
            "--strict-min-isr",
            help="Refuse also on partitions whose replication factor is <= min.insync.replicas (default: listed "
            "as a note and in exempt, as Strimzi's KafkaRoller does: no roll can ever spare one of their replicas).",
        ),
    ] = False,
    ignore_partition: Annotated[
        list[str] | None,
        typer.Option(
            "--ignore-partition",
            metavar="TOPIC:PARTITION",
            help="Leave this partition out of the answer (repeatable): a known stale one; every other partition "
            "and every other gate still counts. Listed under 'waived'.",
        ),
    ] = None,
    ignore_topic: Annotated[
        list[str] | None,
        typer.Option(
            "--ignore-topic",
            metavar="TOPIC",
            help="Leave every partition of this topic out of the answer (repeatable), as --ignore-partition does.",
        ),
    ] = None,
    process_roles: Annotated[
        str | None,
        typer.Option(
            "--process-roles",
            metavar="ROLES",
            help="The node's process.roles (broker, controller or broker,controller). Default: a controller if "
            "it is a voter of the metadata quorum, a broker if the cluster lists it or it is no voter. Give it "
            "for a controller-only node after its start (it is never listed as a broker).",
        ),
    ] = None,
    quorum_fetch_timeout: Annotated[
        float,
        typer.Option(
            "--quorum-fetch-timeout",
            metavar="DURATION",
            parser=seconds_parser(0.001),
            help="The controllers' controller.quorum.fetch.timeout.ms, as seconds (2) or a duration (2000ms): a "
            "voter further behind the quorum leader than this is not counted as caught up.",
        ),
    ] = 2.0,
    format: Annotated[OutputFormat, typer.Option("--format", "-f", help="text or json.")] = OutputFormat.text,
) -> None:
    """May broker ID be stopped now (the default), or has it caught up after its start (--after-start)?

    'Stop' is refused when its stop leaves a partition below min.insync.replicas or with no replica in sync
    (CLU001), or a partition with a replica on the broker is already under-replicated or offline (CLU002): the
    same rules as the audit's. Listed but not refusing: partitions whose only replica is the broker, those whose
    replication factor is <= min.insync.replicas (--strict-min-isr refuses), unhealthy partitions elsewhere in
    the cluster (--strict-cluster refuses), and the partitions waived with --ignore-partition/--ignore-topic.

    A KRaft controller (a voter of the metadata quorum, or --process-roles holding controller) is also judged by
    the quorum rule of Strimzi's KafkaQuorumCheck: it may stop only while, without it, a majority of the voters
    has caught up with the quorum leader within --quorum-fetch-timeout; after its start it has caught up when
    the leader has heard from it within that time and it is that close behind. A combined node passes both.

    Exit codes: 0 yes; 1 no (the reasons, one per line); 2 the cluster could not be asked, or bad usage.
    """
    from kafka_ops.broker.replication import Waiver, legal_topic, parse_partition
    from kafka_ops.cluster.client import ClusterUnavailable

    roles = None
    if process_roles is not None:
        roles = sorted({r.strip() for r in process_roles.split(",") if r.strip()})
        if not roles or not set(roles) <= {"broker", "controller"}:
            fail(f"--process-roles {process_roles!r} is not broker, controller or broker,controller")
    try:
        parts = frozenset(parse_partition(x) for x in ignore_partition or [])
    except ValueError as exc:
        fail(f"--ignore-partition {exc}")
    for t in ignore_topic or []:
        if not legal_topic(t):
            fail(f"--ignore-topic {t!r} is not a Kafka topic name (1-249 of a-z A-Z 0-9 . _ -)")
    waiver = Waiver(frozenset(ignore_topic or []), parts)
    question = "caught_up" if after_start else "stop"
    answer: dict[str, Any] = {}
    for attempt in range(retries + 1):
        try:
            facts = ask_cluster(bootstrap_server, command_config, timeout)
        except ClusterUnavailable as exc:
            if attempt == retries:
                fail(f"{exc}{f' (after {retries + 1} attempts)' if retries else ''}")
            _wait(retry_delay, attempt, str(exc))
            continue
        answer = decide(
            facts,
            broker,
            question,
            strict_cluster=strict_cluster,
            strict_min_isr=strict_min_isr,
            waiver=waiver,
            process_roles=roles,
            fetch_timeout_ms=round(quorum_fetch_timeout * 1000),
        )
        answer["attempts"] = attempt + 1
        if answer["yes"] or attempt == retries:
            break
        _wait(retry_delay, attempt, answer["reasons"][0])
    if format is OutputFormat.json:
        sys.stdout.write(json.dumps(answer, indent=2) + "\n")
    else:
        print_answer(answer)
    raise typer.Exit(0 if answer["yes"] else 1)


def print_answer(answer: dict[str, Any]) -> None:
    """`cluster check`'s answer as text, wrapped at COLUMNS (or the terminal's width)."""
    echo_wrapped(answer["summary"], indent="  ")
    for line in answer["reasons"]:
        echo_wrapped(line, "  - ")
    for line in answer["notes"]:
        echo_wrapped(line, "  note: ")
    for line in answer["waived"]:
        echo_wrapped(line, "  waived: ")


@cluster_app.command("status", cls=Command)
def status(
    bootstrap_server: Annotated[
        str, typer.Option("--bootstrap-server", metavar="HOST:PORT", help="A broker of the running cluster.")
    ],
    command_config: CommandConfigOpt = None,
    timeout: ClusterTimeoutOpt = 10.0,
    retries: Annotated[
        int,
        typer.Option(
            "--retries", metavar="N", min=0, help="Ask again up to N times while the cluster does not answer."
        ),
    ] = 0,
    retry_delay: RetryDelayOpt = 5.0,
    format: Annotated[OutputFormat, typer.Option("--format", "-f", help="text or json.")] = OutputFormat.text,
) -> None:
    """Which brokers the cluster lists, which node is the active controller (the KRaft metadata quorum's
    leader, or the ZooKeeper controller), and its under-replicated and offline partitions. The rolling restart
    asks this before each broker, to roll the controller last.

    Exit codes: 0 the cluster answered; 2 it could not be asked, or bad usage.
    """
    from kafka_ops.broker.quorum import voter_ids
    from kafka_ops.broker.replication import active_controller, brokers, unhealthy
    from kafka_ops.cluster.client import ClusterUnavailable

    for attempt in range(retries + 1):
        try:
            facts = ask_cluster(bootstrap_server, command_config, timeout)
            break
        except ClusterUnavailable as exc:
            if attempt == retries:
                fail(f"{exc}{f' (after {retries + 1} attempts)' if retries else ''}")
            _wait(retry_delay, attempt, str(exc))
    bad = unhealthy(facts)
    controller = active_controller(facts)
    answer = {
        "bootstrap": facts.get("bootstrap"),
        "cluster_id": facts.get("cluster_id"),
        "brokers": sorted(brokers(facts)),
        "controller": controller,
        "controller_from": "metadata quorum"
        if facts.get("quorum_leader") is not None
        else "cluster metadata",
        "under_replicated": [u.name for u in bad if u.kind == "under_replicated"],
        "offline": [u.name for u in bad if u.kind == "offline"],
        "voters": voter_ids(facts),
        "quorum_leader": facts.get("quorum_leader"),
        "attempts": attempt + 1,
    }
    if format is OutputFormat.json:
        sys.stdout.write(json.dumps(answer, indent=2) + "\n")
        return
    print_status(answer)


def print_status(answer: dict[str, Any]) -> None:
    """`cluster status` as text, wrapped at COLUMNS (or the terminal's width)."""
    controller = answer["controller"]
    echo_wrapped(
        f"cluster {answer['cluster_id']} (asked {answer['bootstrap']}): brokers "
        f"{', '.join(map(str, answer['brokers'])) or 'none'}; active controller "
        f"{controller if controller is not None else 'unknown'} (from the {answer['controller_from']})"
        + (f"; quorum voters {', '.join(map(str, answer['voters']))}" if answer["voters"] else ""),
        indent="  ",
    )
    bad = answer["under_replicated"] + answer["offline"]
    echo_wrapped(
        f"{len(answer['under_replicated'])} under-replicated, {len(answer['offline'])} offline partition(s)"
        + (f": {', '.join(bad[:10])}" if bad else ""),
        "  ",
        "    ",
    )


def decide(
    facts: dict[str, Any],
    broker: int,
    question: str,
    *,
    strict_cluster: bool = False,
    strict_min_isr: bool = False,
    waiver: Waiver | None = None,
    process_roles: list[str] | None = None,
    fetch_timeout_ms: int = 2000,
) -> dict[str, Any]:
    """The answer to ``question`` (stop | caught_up) for ``broker``, with its reasons, from the same rules as
    CLU001-CLU003 (kafka_ops.broker.replication). Only the partitions with a replica on ``broker`` can refuse its
    stop (Strimzi's KafkaRoller judges the same set); the cluster's other unhealthy partitions are listed
    (``unhealthy_elsewhere``) and refuse only with ``strict_cluster``. ``waiver`` (replication.Waiver) leaves the
    partitions it names out of both questions, listed under ``waived``; nothing else changes.

    A controller (``process_roles``; by default: a voter of the metadata quorum) gets the quorum's gate too
    (kafka_ops.broker.quorum, Strimzi's KafkaQuorumCheck), its answer under ``quorum_gate``; a node that is only
    a controller gets no partition gate (it holds no replica) and is judged by the quorum alone."""
    from kafka_ops.broker import quorum as q
    from kafka_ops.broker.replication import (
        NOT_REFUSING,
        Waiver,
        active_controller,
        brokers,
        catch_up_blockers,
        hosts,
        offline_log_dirs,
        stop_risks,
        unhealthy,
    )

    w = waiver if waiver is not None else Waiver()
    at = facts.get("bootstrap")
    reasons: list[str] = []
    notes: list[str] = []
    waived: list[str] = []
    exempt: list[str] = []
    elsewhere: list[dict[str, Any]] = []
    voters = q.voter_ids(facts)
    listed = brokers(facts)
    # Without --process-roles: a voter is a controller; a listed node, or one that is no voter, a broker; an
    # unlisted voter (stopped, or starting) is taken for a broker too unless no listed broker is a voter (a
    # cluster of dedicated controllers): a combined node must be listed again before it counts as caught up.
    combined_mode = any(b in voters for b in listed)
    roles = list(process_roles) if process_roles else [
        r for r, on in (
            ("broker", broker in listed or broker not in voters or combined_mode),
            ("controller", broker in voters),
        ) if on
    ]  # fmt: skip
    is_broker, is_controller = "broker" in roles, "controller" in roles
    noun = "broker" if is_broker else "controller"
    gate: dict[str, Any] | None = None
    if question == "stop":
        if is_broker and broker not in brokers(facts):
            notes.append(f"broker {broker} is not listed by the cluster at {at} (stopped or still starting)")
        if is_controller:
            stop = q.may_stop(facts, broker, fetch_timeout_ms)
            gate = stop.to_dict()
            if not stop.yes:
                reasons.append(f"QUORUM {stop.reason}")
            notes += [f"QUORUM {n}" for n in stop.notes]
        for r in stop_risks(facts, broker, strict_min_isr):
            line = f"CLU001 {r.says()}"
            if w.covers(r.topic, r.partition):
                waived.append(line)
            elif r.kind in NOT_REFUSING:
                notes.append(line)
                if r.kind == "rf_le_min_isr":
                    exempt.append(r.name)
            else:
                reasons.append(line)
        other = []
        for u in unhealthy(facts):
            line = f"CLU002 {u.says()}"
            if w.covers(u.topic, u.partition):
                waived.append(line)
            elif hosts(u, broker) or strict_cluster:
                reasons.append(line)
            else:
                other.append(u)
        if other:
            shown = ", ".join(u.says() for u in other[:10]) + (
                f", and {len(other) - 10} more" if len(other) > 10 else ""
            )
            notes.append(
                f"CLU002 {len(other)} under-replicated or offline partition(s) with no replica on broker {broker} "
                f"(its stop does not touch them; --strict-cluster refuses on them): {shown}"
            )
            elsewhere = [
                {"topic": u.topic, "partition": u.partition, "leader": u.leader, "replicas": u.replicas,
                 "isr": u.isr, "kind": u.kind}
                for u in other
            ]  # fmt: skip
        for d in offline_log_dirs(facts, broker):
            notes.append(f"CLU003 log dir {d.get('path')} is offline ({d.get('error')})")
        yes = not reasons
        summary = (
            f"yes: {noun} {broker} may be stopped now"
            if yes
            else f"no: stopping {noun} {broker} now is not safe ({len(reasons)} reason(s))"
        )
    else:
        if is_broker:
            reasons = catch_up_blockers(facts, broker, w)
            if w:
                waived = [b for b in catch_up_blockers(facts, broker) if b not in reasons]
        if is_controller:
            behind = q.catch_up_blockers(facts, broker, fetch_timeout_ms)
            reasons += [f"QUORUM {b}" for b in behind]
            gate = {"node": broker, "leader": q.leader(facts), "yes": not behind,
                    "voters": [v.to_dict() for v in q.voters(facts, fetch_timeout_ms)]}  # fmt: skip
        yes = not reasons
        done = (
            ("listed by the cluster, in sync everywhere, no offline log dir" if is_broker else "")
            + ("; " if is_broker and is_controller else "")
            + ("a voter caught up with the quorum leader" if is_controller else "")
        )
        summary = (
            f"yes: {noun} {broker} has caught up ({done})"
            if yes
            else f"no: {noun} {broker} has not caught up ({len(reasons)} reason(s))"
        )
    notes += [
        f"the waiver of {x} matches no partition of the cluster (it waives nothing)"
        for x in w.unmatched(facts)
    ]
    return {
        "question": question, "broker": broker, "bootstrap": at, "cluster_id": facts.get("cluster_id"),
        "yes": yes, "summary": summary, "reasons": reasons, "notes": notes,
        "controller": active_controller(facts),
        "waived": waived, "exempt": exempt, "unhealthy_elsewhere": elsewhere,
        "strict_cluster": strict_cluster, "strict_min_isr": strict_min_isr,
        "process_roles": roles, "quorum_leader": q.leader(facts), "quorum_gate": gate,
        "quorum_fetch_timeout_ms": fetch_timeout_ms,
    }  # fmt: skip


def _wait(delay_s: float, attempt: int, why: str) -> None:
    pause = delay_s * (2**attempt)
    say(f"not yet ({why}); asking again in {pause:g} s")
    time.sleep(pause)
