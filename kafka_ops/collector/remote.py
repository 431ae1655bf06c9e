"""The collector's entry point on a broker host: ``python3 kafka_ops_collector.py audit|stream [options]``.

Shipped by the Ansible role and the fleet job (see kafka_ops.collector.ship); standard library only. It takes the same
audit options as ``kafka-ops audit``, runs the same facts collector and checks, and writes JSON on stdout:
``audit`` one report document; ``stream`` JSON lines, one ``partition`` row per partition as it is scanned,
then one ``report`` (so a caller sees progress and keeps the facts without waiting for the whole host);
``systemd`` the unit settings the SYSD checks recommend for this broker (stop timeout, stop signal,
LimitNOFILE; kafka_ops.checks.unit_settings), found or not, with the report; ``logs`` what the ``--broker-log``
files say (``kafka-ops logs``'s report) and where the latest start stands (brokerlogs.start_state); ``tail`` the
last ``--lines`` lines of one ``--broker-log`` (the rolling restart's rescue: a bounded read that refuses a link,
a FIFO or a device, control characters escaped); ``rehearse`` ``kafka-ops rehearse`` (kafka_ops.rehearse: the
broker's next start in a sandbox, the rolling restart's opt-in step), the report with ``rehearsal``.
Exit codes as the CLI's: 0, 1 when a finding is at or above ``--fail-on``, 2 on bad input (one line on stderr).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from kafka_ops.audit.cmdoptions import GATE, INPUTS, OPTIONS, Option


class _Usage(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # one line, no usage dump: callers parse stderr
        raise _Usage(message)


def add_option(p: argparse.ArgumentParser, o: Option) -> None:
    """One of the audit's options (kafka_ops.audit.cmdoptions) on the collector's parser."""
    kw: dict[str, Any] = {"help": o.help.replace("%", "%%")}  # argparse formats help with %
    if o.flag:
        kw["action"] = "store_true"
    else:
        if o.metavar:
            kw["metavar"] = o.metavar
        if o.repeat:
            kw.update(action="append", default=[])
        elif o.default is not None:
            kw["default"] = o.default
        if o.choices:
            kw["choices"] = o.choices
            if o.any_case:
                kw["type"] = str.lower
    p.add_argument(o.name, **kw)


def parser() -> argparse.ArgumentParser:
    p = _Parser(prog="kafka-ops-collector", description=__doc__.splitlines()[0])
    p.add_argument(
        "mode",
        choices=("audit", "stream", "version", "systemd", "logs", "ownership", "quorum", "tail", "rehearse"),
    )
    # the audit's options, as `kafka-ops audit` takes them: one declaration (kafka_ops.audit.cmdoptions) for both
    for dest in (*INPUTS, *GATE):
        add_option(p, OPTIONS[dest])
    p.add_argument(
        "--rotated", action="store_true", help="logs: read each --broker-log's newest rotations with it."
    )
    p.add_argument(
        "--wait-start",
        type=float,
        metavar="SECONDS",
        help="logs: follow one --broker-log from --cursor for up to SECONDS (0: read once) and return as soon as "
        "the start has logged 'Kafka Server started', has failed, or --systemd-unit is down: the lines after "
        "the cursor only, with the cursor to pass to the next call.",
    )
    p.add_argument(
        "--cursor",
        metavar="JSON",
        help='logs --wait-start: where the last call stopped (its \'cursor\'), or {"dev": D, "ino": I, '
        '"offset": SIZE} of the log taken before the start.',
    )
    p.add_argument(
        "--poll-every",
        type=float,
        default=1.0,
        metavar="SECONDS",
        help="logs --wait-start: seconds between reads.",
    )
    p.add_argument(
        "--asked-at",
        type=float,
        metavar="SECONDS",
        help="logs --wait-start: the caller's clock when it made this call, returned as asked_at beside waited_s: "
        "the caller measures on its own clock what a call costs beyond its wait (SSH, the collector's start).",
    )
    p.add_argument(
        "--lines", type=int, default=50, metavar="N", help=f"tail: how many lines (at most {TAIL_MAX_LINES})."
    )
    p.add_argument("--host", help="The name to report the host as (default: its hostname).")
    # ownership mode: `kafka-ops fix ownership`'s plan, applied (with its undo journal) only with --apply
    p.add_argument(
        "--group", help="ownership: the group to own the files (default: the broker user's group)."
    )
    p.add_argument(
        "--mode",
        dest="chmod_mode",
        default="u+rwX",
        help="ownership: chmod mode for every file and dir (symbolic, X: execute for dirs, or octal).",
    )
    p.add_argument("--apply", action="store_true", help="ownership: apply the plan (default: print it only).")
    # rehearse mode: `kafka-ops rehearse`'s own options (docs/rehearse.md)
    p.add_argument(
        "--kafka-home",
        metavar="DIR",
        help="rehearse: the Kafka distribution to start (default: $KAFKA_HOME, the unit's, else the installation "
        "next to the unit's ExecStart or /opt/kafka); another release's home rehearses an upgrade.",
    )
    p.add_argument(
        "--java",
        metavar="PATH",
        help="rehearse: the java binary (default: $JAVA_HOME's, the unit's, the unit's ExecStart's, else PATH's).",
    )
    p.add_argument(
        "--scratch", metavar="DIR", help="rehearse: root-owned dir for the overlays' writable layers."
    )
    p.add_argument(
        "--window", type=float, metavar="SECONDS", help="rehearse: how long to watch the broker once started."
    )
    p.add_argument("--heap", default="1g", metavar="SIZE", help="rehearse: the sandboxed JVM's heap.")
    p.add_argument(
        "--journal-dir", help="ownership: where the undo journal goes (default: /var/lib/kafka-ops/journal)."
    )
    return p


def main(argv: list[str] | None = None) -> int:
    p = parser()
    try:
        a = p.parse_args(argv)
    except _Usage as exc:
        print(f"kafka-ops-collector: {exc}", file=sys.stderr)
        return 2
    from kafka_ops import __version__

    if a.mode == "version":
        print(json.dumps({"version": __version__, "python": sys.version.split()[0]}))
        return 0
    if a.mode == "logs" and a.wait_start is not None:
        return _wait_start(a.broker_log, a.systemd_unit, a.cursor, a.wait_start, a.poll_every, a.asked_at)
    if a.mode == "logs":
        return _logs(a.broker_log, a.rotated, a.systemd_unit)
    if a.mode == "quorum":
        return _quorum(a.server_properties)
    if a.mode == "tail":
        return _tail(a.broker_log, a.lines)
    if a.mode == "rehearse":
        return _rehearse(a)
    from kafka_ops.audit import apply_gate, apply_waivers, partition_row, run_audit, unusable, waivers_from
    from kafka_ops.audit.options import audit_options
    from kafka_ops.engine.errors import EngineError

    try:
        waivers = waivers_from(a.waive, a.waive_file)
    except ValueError as exc:
        print(f"kafka-ops-collector: {exc}", file=sys.stderr)
        return 2
    try:
        opts = audit_options(host=a.host, **{d: getattr(a, d) for d in INPUTS})
    except ValueError as exc:
        print(f"kafka-ops-collector: {exc}", file=sys.stderr)
        return 2
    if a.mode == "ownership":
        return _ownership(opts, a.group, a.apply, a.journal_dir, a.chmod_mode)
    out = sys.stdout

    def emit(kind: str, body: dict[str, Any]) -> None:
        out.write(json.dumps({"kind": kind, **body}, default=str) + "\n")
        out.flush()

    finished: list[Any] = []
    try:
        if a.mode == "stream":
            report = run_audit(opts, on_partition=lambda pf: emit("partition", partition_row(pf)))
        else:
            report = run_audit(opts, on_host=finished.append)
    except EngineError as exc:
        print(f"kafka-ops-collector: {exc}", file=sys.stderr)
        return 2
    if not report["log_dirs"]:
        print(
            "kafka-ops-collector: no log dirs to audit: give --log-dir or --server-properties",
            file=sys.stderr,
        )
        return 2
    why = unusable(report)
    if why is not None:
        print(f"kafka-ops-collector: {why}", file=sys.stderr)
        return 2
    code = apply_gate(report, a.fail_on, apply_waivers(report, waivers) if waivers else None)
    if a.mode == "stream":
        emit("report", {"report": report})
    elif a.mode == "systemd":
        from kafka_ops.checks.unit_settings import recommended_settings

        doc = recommended_settings(finished[0], report)
        doc["report"] = report
        out.write(json.dumps(doc, indent=2, default=str) + "\n")
    else:
        out.write(json.dumps(report, indent=2, default=str) + "\n")
    return code


def _ownership(
    opts: Any, group: str | None, apply: bool, journal_dir: str | None, mode: str = "u+rwX"
) -> int:
    """``kafka-ops fix ownership`` on the host, for the kafka_datadirs role: the plan (every chown and chmod, with
    the state before), applied only with ``apply``, with the undo journal's path."""
    import grp

    from kafka_ops.facts.collect import gather
    from kafka_ops.remediate.fixes import FixError, parse_mode, plan_ownership
    from kafka_ops.remediate.fixes import apply as apply_plan

    def fail(message: str) -> int:
        print(f"kafka-ops-collector: {message}", file=sys.stderr)
        return 2

    try:
        parse_mode(mode)
    except ValueError as exc:
        return fail(f"--mode: {exc}")

    h = gather(opts)
    if h.identity is None:
        return fail(h.skipped_inputs.get("broker_user", "the broker user is unknown: give --broker-user"))
    gid = h.identity.gid
    if group:
        try:
            gid = grp.getgrnam(group).gr_gid
        except KeyError:
            return fail(f"--group: no such group: {group}")
    dirs = [d.path for d in h.log_dirs]
    if not dirs:
        return fail("no log dirs: give --log-dir or --server-properties")
    try:
        plan = plan_ownership(dirs, h.identity.uid, gid, mode)
    except FixError as exc:  # a log dir that is a link the broker user could have made: refused, one line
        return fail(f"ownership: {exc}")
    journal = None
    skipped: list[str] = []
    if apply:
        try:
            journal = apply_plan(plan, journal_dir, on_skip=skipped.append)
        except (FixError, OSError) as exc:
            return fail(f"ownership: {exc}")
    doc = {
        "host": h.host,
        "log_dirs": dirs,
        "applied": apply,
        "journal": journal,
        "changes": [a.describe() for a in plan.actions],
        "skipped": skipped,
        "plan": plan.to_dict(),
    }
    sys.stdout.write(json.dumps(doc, indent=2, default=str) + "\n")
    return 0


def _logs(paths: list[str], rotated: bool = False, unit: str | None = None) -> int:
    """Where the broker's latest start stands (brokerlogs.start_state), and with --systemd-unit the unit's state
    as systemd tells it, so that a wait for the start ends as soon as the broker has failed or exited."""
    from kafka_ops.engine.errors import EngineError
    from kafka_ops.facts import brokerlogs

    if not paths:
        print("kafka-ops-collector: logs needs --broker-log FILE", file=sys.stderr)
        return 2
    skipped: list[str] = []
    if rotated:
        paths = [r for p in paths for r in brokerlogs.with_rotations(p, skipped=skipped)] or paths
    digest = brokerlogs.Digest()
    try:
        doc = brokerlogs.analyze(paths, digest)  # one streamed pass, in constant memory (polled every 2 s)
    except EngineError as exc:
        print(f"kafka-ops-collector: {exc}", file=sys.stderr)
        return 2
    doc["not_read"] += [{"file": n.split(": ", 1)[0], "error": n.split(": ", 1)[1]} for n in skipped]
    doc["start"] = digest.start_state()
    if unit:
        doc["unit"] = _unit_state(unit)
    sys.stdout.write(json.dumps(doc, indent=2, default=str) + "\n")
    return 0


# the tail's bounds: what one read may cost whatever the broker user put at the log's path
TAIL_MAX_LINES = 1000
TAIL_MAX_BYTES = 256 * 1024
TAIL_LINE_CHARS = 1000


def _tail(paths: list[str], lines: int) -> int:
    """The last ``lines`` lines of one broker log, as one JSON document ``{"file", "lines"}``: the rolling
    restart's rescue, run as root on a path the broker user controls. So its dir is opened by handle from / as
    every path opened as root (engine.safepath.open_dir: a link on the way is followed only where the broker user
    could not have made it), and the file in it as every broker file is (engine.fileio.open_regular: never
    through a symlink, never blocking, a FIFO, device or socket refused
    unread), a file with more than one hard link is refused (it may be a root-only file linked into the log
    dir), at most TAIL_MAX_BYTES are read from its end, each line is cut to TAIL_LINE_CHARS and its control
    characters are written as visible escapes (engine.shell.printable): a log line cannot drive the terminal
    that shows the play's error. Exit 2 with one line on stderr when the file is not read."""
    import os

    from kafka_ops.engine.errors import EngineError
    from kafka_ops.engine.fileio import open_regular
    from kafka_ops.engine.safepath import PathRefused, open_dir
    from kafka_ops.engine.shell import printable

    if len(paths) != 1:
        print("kafka-ops-collector: tail needs one --broker-log FILE", file=sys.stderr)
        return 2
    path = paths[0]
    want = max(0, min(lines, TAIL_MAX_LINES))
    try:
        # its dir by handle from / (engine.safepath): a link anywhere on the way in a dir the broker user can
        # write (its log dir, or that dir's parent made a link to /root) is refused, not only at the file
        dfd, real_dir = open_dir(os.path.dirname(os.path.abspath(path)), what="broker log's dir")
    except PathRefused as exc:
        print(f"kafka-ops-collector: {printable(exc)}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"kafka-ops-collector: {printable(path)}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    real = os.path.join(real_dir, os.path.basename(path))
    try:
        with open_regular(os.path.basename(path), dir_fd=dfd) as f:
            st = os.fstat(f.fileno())
            if st.st_nlink > 1:
                raise EngineError(real, f"a file with {st.st_nlink} hard links: not read")
            start = max(0, st.st_size - TAIL_MAX_BYTES)
            f.seek(start)
            data = f.read(TAIL_MAX_BYTES)  # bounded: what the file grew by since the fstat is not read
    except EngineError as exc:  # named by the path it resolved to (opened by its name in the dir's handle)
        print(f"kafka-ops-collector: {printable(EngineError(real, exc.reason))}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"kafka-ops-collector: {printable(real)}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    finally:
        os.close(dfd)
    got = data.split(b"\n")
    if got and got[-1] == b"":
        got.pop()
    if start > 0 and got:
        got.pop(0)  # begun mid-line
    text = [printable(x.decode("utf-8", "replace").removesuffix("\r")[:TAIL_LINE_CHARS]) for x in got]
    print(json.dumps({"file": real, "lines": text[-want:] if want else []}))
    return 0


def _down(unit: dict[str, str]) -> bool:
    """systemd says the broker is not running: the unit failed or is inactive, or waits to be restarted."""
    return unit.get("ActiveState") in ("failed", "inactive") or unit.get("SubState") == "auto-restart"


def _wait_start(
    paths: list[str],
    unit: str | None,
    cursor: str | None,
    seconds: float,
    every: float,
    asked_at: float | None = None,
) -> int:
    """The rolling restart's wait after `systemctl start`, one bounded call of it: read the broker log from the
    cursor (only what was appended since: brokerlogs.StartWatch), every ``every`` s for up to ``seconds``, and
    return as soon as the start has logged "Kafka Server started", has failed, or systemd says the unit is down;
    then one JSON document: where the start stands, the unit's state, a line of progress, the next cursor.

    Nothing in a call waits past its ``seconds``: the sleeps, `systemctl show` (its timeout) and the read of a
    log that grows faster than it is read (the cursor keeps the rest for the next call) are each bounded by the
    time left, so that the caller's deadline is kept to within one read and one `systemctl show`."""
    import time

    from kafka_ops.engine.errors import EngineError
    from kafka_ops.facts import brokerlogs

    if len(paths) != 1:
        print("kafka-ops-collector: logs --wait-start needs one --broker-log FILE", file=sys.stderr)
        return 2
    try:
        state = json.loads(cursor) if cursor else None
        if state is not None and not isinstance(state, dict):
            raise ValueError("not a JSON object")
        watch = brokerlogs.StartWatch(paths[0], state)
    except (ValueError, TypeError, KeyError) as exc:
        print(f"kafka-ops-collector: --cursor: {exc}", file=sys.stderr)
        return 2
    t0 = time.monotonic()
    end = t0 + max(0.0, seconds)
    while True:
        try:
            watch.poll(until=end)
        except EngineError as exc:
            print(f"kafka-ops-collector: {exc}", file=sys.stderr)
            return 2
        start = watch.start()
        state_of_unit = _unit_state(unit, timeout=min(30.0, max(1.0, end - time.monotonic()))) if unit else {}
        left = end - time.monotonic()
        if start["started"] or start["failed"] or _down(state_of_unit) or left <= 0:
            break
        time.sleep(min(max(every, 0.05), left))
    doc = {
        "start": start, "unit": state_of_unit, "down": _down(state_of_unit), "progress": watch.progress(),
        "cursor": watch.cursor(), "read_bytes": watch.read_bytes, "notes": sorted(set(watch.notes)),
        "waited_s": round(time.monotonic() - t0, 2), "asked_at": asked_at,
    }  # fmt: skip
    sys.stdout.write(json.dumps(doc, default=str) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())


def _unit_state(unit: str, timeout: float = 30.0) -> dict[str, str]:
    """systemctl show's ActiveState, SubState, Result, MainPID, ExecMainCode/Status and NRestarts of ``unit``
    (empty when systemctl is not there or does not know it)."""
    import subprocess

    keys = ("ActiveState", "SubState", "Result", "MainPID", "ExecMainCode", "ExecMainStatus", "NRestarts")
    try:
        r = subprocess.run(
            ["systemctl", "show", unit, *(f"--property={k}" for k in keys)],
            capture_output=True, text=True, timeout=timeout, check=False,
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired):
        return {}
    return dict(line.split("=", 1) for line in r.stdout.splitlines() if "=" in line)


def _quorum(server_properties: str | None) -> int:
    """This node's id and the metadata quorum's leader as its own quorum-state says (the rolling restart's
    answer to 'who is the controller' when the cluster cannot be asked). The file lies in the metadata log dir:
    KafkaConfig.metadataLogDir is metadata.log.dir, else the first of log.dirs (not any log dir); the raft client
    writes it (FileQuorumStateStore, QuorumStateData: leaderId -1 while there is no leader)."""
    import os

    from kafka_ops.broker.meta import metadata_log_dir_of
    from kafka_ops.engine.checkpoints import read_quorum_state
    from kafka_ops.engine.errors import EngineError
    from kafka_ops.facts.config import Configs, read_server_properties

    if not server_properties:
        print("kafka-ops-collector: quorum needs --server-properties", file=sys.stderr)
        return 2
    try:
        props = read_server_properties(server_properties)
    except EngineError as exc:
        print(f"kafka-ops-collector: {exc}", file=sys.stderr)
        return 2
    node = (props.get("node.id") or props.get("broker.id") or "").strip()
    # KafkaConfig.metadataLogDir (the audit's own rule), else KafkaConfig's log.dir default
    configs = Configs(server=props)
    meta = metadata_log_dir_of(configs) or os.path.abspath("/tmp/kafka-logs")
    path = os.path.join(os.path.abspath(meta), "__cluster_metadata-0", "quorum-state")
    fetch = props.get("controller.quorum.fetch.timeout.ms", "2000").strip()
    out: dict[str, Any] = {
        "node_id": int(node) if node.lstrip("-").isdigit() else None,
        "kraft": bool(props.get("process.roles", "").strip()),
        # the rolling restart's order and gates: brokers-only first, then the controllers (KafkaConfig's roles)
        "process_roles": configs.process_roles(),
        # the quorum gate's threshold (QuorumConfig: controller.quorum.fetch.timeout.ms, default 2000)
        "quorum_fetch_timeout_ms": int(fetch) if fetch.isdigit() else 2000,
        "metadata_log_dir": os.path.abspath(meta),
        "quorum_state": path,
        "leader_id": None,
        "leader_epoch": None,
        "error": None,
    }
    if not os.path.exists(path):
        out["error"] = f"{path}: no such file"
    else:
        try:
            doc = read_quorum_state(path)
            leader = int(doc.get("leaderId", -1))  # type: ignore[call-overload]
            out["leader_id"] = leader if leader >= 0 else None
            out["leader_epoch"] = doc.get("leaderEpoch")
        except (EngineError, TypeError, ValueError) as exc:
            out["error"] = str(exc)
    print(json.dumps(out))
    return 0


def _rehearse(a: argparse.Namespace) -> int:
    """``kafka-ops rehearse`` on the host (the rolling restart's opt-in step): the report (the audit's, with
    ``rehearsal``) as JSON on stdout, progress on stderr; 0 the rehearsed start started with every log dir
    online, 1 it exited, did not start or took a dir offline, 2 refused or bad input (one line), 3 a bug (one
    line: the role must never read a traceback's exit 1 as the broker's verdict)."""
    import os
    import traceback

    from kafka_ops.audit.options import audit_options
    from kafka_ops.engine.errors import EngineError
    from kafka_ops.rehearse import RehearsalRefused, RehearseOptions, failed, rehearse
    from kafka_ops.rehearse import home as found
    from kafka_ops.rehearse.scratch import DEFAULT_SCRATCH

    def fail(message: str, code: int = 2) -> int:
        print(f"kafka-ops-collector: {message}", file=sys.stderr)
        return code

    def say(line: str) -> None:
        print(f"kafka-ops-collector rehearse: {line}", file=sys.stderr, flush=True)

    try:
        opts = audit_options(host=a.host, **{d: getattr(a, d) for d in INPUTS})
        home = (a.kafka_home, "--kafka-home") if a.kafka_home else found.find_kafka_home(opts.systemd_unit)
        if not home:
            return fail(
                "no Kafka home: give --kafka-home (none in $KAFKA_HOME, the unit, nor next to its ExecStart)"
            )
        java = (a.java, "--java") if a.java else found.find_java(opts.systemd_unit)
        if not java or not os.access(java[0], os.X_OK):
            return fail(
                f"--java {java[0] if java else '(none found)'}: no executable java (give --java or JAVA_HOME)"
            )
        ro = RehearseOptions(
            kafka_home=os.path.abspath(home[0]),
            java=java[0],
            broker_user=a.broker_user,
            scratch=a.scratch or DEFAULT_SCRATCH,
            window_s=a.window,
            heap=a.heap,
            kafka_home_source=home[1],
            java_source=java[1],
        )
        report = rehearse(opts, ro, progress=say)
    except RehearsalRefused as exc:
        return fail(f"refused: {exc}")
    except (ValueError, EngineError) as exc:
        return fail(str(exc))
    except Exception as exc:  # a bug: one line, exit 3 (never 1, which is the rehearsed start's failure)
        last = traceback.extract_tb(exc.__traceback__)[-1]
        return fail(f"a bug in kafka-ops: {type(exc).__name__}: {exc} (at {last.filename}:{last.lineno})", 3)
    sys.stdout.write(json.dumps(report, indent=1, default=str) + "\n")
    return 1 if failed(report) else 0
