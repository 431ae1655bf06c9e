"""SYSD002: a stop path that skips or cuts the broker's graceful shutdown.

What systemd does on stop (systemd.service(5) ExecStop=/TimeoutStopSec=, systemd.kill(5)):

1. runs each ExecStop= command (each bounded by TimeoutStopSec=); "the remaining processes of the service are
   killed according to KillMode= and KillSignal= ... immediately after the command exited";
2. sends KillSignal= (default SIGTERM) - to every process of the cgroup (KillMode=control-group, the default),
   to the main process only (process, mixed), or to none (none);
3. waits TimeoutStopSec= (SYSD001), then sends FinalKillSignal= (SIGKILL) unless SendSIGKILL=no; with
   KillMode=mixed the SIGKILL goes to the rest of the cgroup as soon as the main process has exited.

The JVM runs its shutdown hooks - Kafka's is "kafka-shutdown-hook" (kafka.Kafka: Exit.addShutdownHook ->
server.shutdown(): controlled shutdown, LogManager.shutdown, .kafka_cleanshutdown) - on SIGTERM, SIGINT and
SIGHUP (HotSpot's shutdown signals), not on SIGKILL or SIGQUIT (a thread dump; the JVM keeps running). With
``-Xrs`` the JVM installs no handler for them (jvm.cpp JVM_RegisterSignal: "if ReduceSignalUsage (-Xrs) is set,
Shutdown Hooks must be invoked via System.exit()"), so SIGTERM's default action ends the JVM without hooks.

``kafka-server-stop.sh`` does ``kill -s ${SIGNAL:-TERM}`` on every ``kafka.Kafka`` JVM it finds with ``ps``
and returns at once (bin/kafka-server-stop.sh). As an ExecStop= it is harmless with the defaults (systemd then
sends SIGTERM again and waits TimeoutStopSec=), useless, and harmful with KillMode=none (systemd waits for
nothing) or a SIGKILL KillSignal= (sent right after it returns), or when SIGNAL=KILL is in the environment.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator

from kafka_ops.checks.base import Finding, check
from kafka_ops.engine.shell import q
from kafka_ops.facts.context import Context
from kafka_ops.facts.model import HostFacts
from kafka_ops.facts.systemd import UnitFacts

GRACEFUL = {"TERM", "INT", "HUP"}
_NUM = {
    "1": "HUP",
    "2": "INT",
    "3": "QUIT",
    "9": "KILL",
    "15": "TERM",
    "6": "ABRT",
    "10": "USR1",
    "12": "USR2",
}
_HARD_KILL = re.compile(
    r"(?:^|[\s;&|/])(?:kill|pkill|killall)\s+(?:[^;&|]*\s)?(?:-9|-KILL|-SIGKILL|-s\s*(?:9|KILL|SIGKILL)|"
    r"--signal[=\s](?:9|KILL|SIGKILL))(?:\s|$)"
    r"|systemctl\s+kill\s+[^;&|]*(?:-s|--signal)[=\s]*(?:9|KILL|SIGKILL)",
    re.IGNORECASE,
)
_TERM_ONLY = re.compile(r"(?:^|[\s;&|/])(?:kill|pkill|killall)\b|kafka-server-stop(?:\.sh)?\b", re.IGNORECASE)
_SHELLS = {"sh", "bash", "dash", "zsh", "ksh"}


def signal_name(value: str | None) -> str:
    v = (value or "SIGTERM").strip().upper()
    if v.startswith("SIG"):
        v = v[3:]
    return _NUM.get(v, v)


def _cmd(line: str) -> str:
    return line.lstrip("-@+!:|")  # systemd's ExecStart=/ExecStop= prefixes


def _main_is_not_jvm(unit: UnitFacts) -> str | None:
    """The ExecStart= that leaves a shell, not the JVM, as the unit's main process (None when it is the JVM or
    undecidable). kafka-server-start.sh execs kafka-run-class.sh, which execs java."""
    for line in unit.lists.get("ExecStart", []):
        try:
            argv = shlex.split(_cmd(line))
        except ValueError:
            continue
        if len(argv) >= 3 and argv[0].rsplit("/", 1)[-1] in _SHELLS and argv[1] == "-c":
            script = argv[2].strip()
            if not script.startswith("exec ") and re.search(r"[|;&\n]", script):
                return line
    return None


@check(
    "SYSD002",
    severity="warning",
    scope="host",
    title="Stop path that skips the broker's graceful shutdown (KillSignal, KillMode, ExecStop)",
    incident="a broker that does not get SIGTERM and time to act on it loses its clean-shutdown marker; "
    "the next start recovers every unflushed segment",
    needs=("systemd_unit",),
)
def run(ctx: Context, h: HostFacts) -> Iterator[Finding]:
    unit = h.unit
    assert unit is not None
    svc = unit.service
    kill_signal = signal_name(svc.get("KillSignal"))
    restart_signal = (
        signal_name(svc.get("RestartKillSignal")) if svc.get("RestartKillSignal") else kill_signal
    )
    kill_mode = (svc.get("KillMode") or "control-group").strip().lower()
    stops = [_cmd(s) for s in unit.lists.get("ExecStop", [])]
    hard = [s for s in stops if _HARD_KILL.search(s)]
    soft = [s for s in stops if s not in hard and _TERM_ONLY.search(s)]
    stop_signal_env = signal_name(unit.environment.get("SIGNAL")) if unit.environment.get("SIGNAL") else None
    opts = h.jvm.opts if h.jvm else ""
    problems: list[tuple[str, str, str, dict[str, str]]] = []  # (severity, key, text, drop-in settings)

    for name, sig in (("KillSignal", kill_signal), ("RestartKillSignal", restart_signal)):
        if sig in GRACEFUL or (name == "RestartKillSignal" and not svc.get("RestartKillSignal")):
            continue
        effect = {
            "KILL": "SIGKILL ends the JVM at once: no controlled shutdown, no flush, no .kafka_cleanshutdown",
            "QUIT": "SIGQUIT makes the JVM print a thread dump and keep running: systemd waits TimeoutStopSec and "
            "then SIGKILLs it",
        }.get(sig, f"SIG{sig} does not start the JVM's shutdown hooks (only SIGTERM, SIGINT and SIGHUP do)")
        when = "every stop" if name == "KillSignal" else "every systemctl restart"
        problems.append(("warning", name, f"{name}={svc.get(name)} on {when}: {effect}", {name: "SIGTERM"}))
    if kill_mode == "none":
        problems.append(
            (
                "warning", "KillMode",
                "KillMode=none: systemd sends no signal and waits for nothing"
                + (" (ExecStop= only asks the broker to stop)" if stops else " (and there is no ExecStop=)")
                + ": the unit is 'inactive' while the JVM may still be shutting down, `systemctl restart` starts a "
                "second JVM that fails on the log dirs' .lock, and at reboot systemd-shutdown kills whatever is "
                "left. systemd deprecates KillMode=none.",
                {"KillMode": "control-group"},
            )
        )  # fmt: skip
    elif kill_mode in ("process", "mixed"):
        wrapper = _main_is_not_jvm(unit)
        if wrapper:
            effect = (
                "the JVM never gets SIGTERM and is left running when the shell exits"
                if kill_mode == "process"
                else "the shell exits and systemd SIGKILLs the rest of the cgroup, the JVM with it, at once"
            )
            problems.append(
                (
                    "warning", "KillMode",
                    f"KillMode={kill_mode} signals only the main process, and ExecStart={wrapper} makes it a "
                    f"shell, not the JVM: {effect}.",
                    {"KillMode": "control-group"},
                )
            )  # fmt: skip
    for s in hard:
        problems.append(
            (
                "warning", "ExecStop",
                f"ExecStop={s} SIGKILLs the broker: no controlled shutdown, no flush, no .kafka_cleanshutdown",
                {"ExecStop": ""},
            )
        )  # fmt: skip
    for s in soft:
        if "kafka-server-stop" in s and stop_signal_env and stop_signal_env not in GRACEFUL:
            problems.append(
                (
                    "warning", "ExecStop",
                    f"ExecStop={s} with SIGNAL={unit.environment.get('SIGNAL')} in the unit's environment: "
                    f"kafka-server-stop.sh sends `kill -s $SIGNAL`, SIG{stop_signal_env}, not SIGTERM",
                    {"ExecStop": ""},
                )
            )  # fmt: skip
            continue
        if kill_mode == "none" or kill_signal == "KILL":
            why = (
                "KillMode=none: nothing waits for the JVM"
                if kill_mode == "none"
                else "KillSignal=SIGKILL follows at once"
            )
            problems.append(
                (
                    "warning", "ExecStop",
                    f"ExecStop={s} sends the stop signal and returns at once ({why})",
                    {"ExecStop": ""},
                )
            )  # fmt: skip
        else:
            problems.append(
                (
                    "info", "ExecStop",
                    f"ExecStop={s} sends SIGTERM and returns at once: harmless here (systemd then sends "
                    f"SIG{kill_signal} to the cgroup and waits TimeoutStopSec), but useless"
                    + (
                        ", and kafka-server-stop.sh without --node-id / --process-role signals every kafka.Kafka JVM "
                        "on the host, not only this unit's"
                        if "kafka-server-stop" in s and "--node-id" not in s and "--process-role" not in s
                        else ""
                    ),
                    {"ExecStop": ""},
                )
            )  # fmt: skip
    if re.search(r"(?:^|\s)-Xrs(?:\s|$)", opts):
        problems.append(
            (
                "warning", "JVM",
                "-Xrs in the JVM options: the JVM installs no SIGTERM/SIGINT/SIGHUP handler (jvm.cpp "
                "JVM_RegisterSignal, ReduceSignalUsage), so SIGTERM ends it without running Kafka's shutdown hook",
                {},
            )
        )  # fmt: skip
    if not problems:
        return
    severity = "warning" if any(p[0] == "warning" for p in problems) else "info"
    dropin: dict[str, str] = {}
    for sev, _key, _text, settings in problems:
        if sev == "warning" or severity == "info":
            dropin.update(settings)
    lines = "".join(f"{k}={v}\\n" for k, v in dropin.items())
    path = f"/etc/systemd/system/{unit.name}.d/kafka-ops-stop.conf"
    message = (
        f"{unit.name}: "
        + "; ".join(p[2] for p in problems)
        + ". A broker that is not stopped by SIGTERM and given time (SYSD001) loses its clean-shutdown marker and "
        "recovers every unflushed segment at the next start (the OOM-kill incident)."
    )
    remediation = (
        "Let systemd stop the JVM itself: SIGTERM to the cgroup, then TimeoutStopSec. A drop-in "
        + (
            f"(`ExecStop=` empty resets the list): mkdir -p {q(path.rsplit('/', 1)[0])} && printf '[Service]\\n{lines}' > "
            f"{q(path)} && systemctl daemon-reload, or `kafka-ops fix systemd --systemd-unit {q(unit.path)} --apply`"
            if dropin
            else f"is not enough for -Xrs: remove it from KAFKA_OPTS / KAFKA_JVM_PERFORMANCE_OPTS in {unit.path}"
        )
        + ". Keep SuccessExitStatus=143 (the JVM exits 128+15 after SIGTERM)."
    )
    details = {
        "unit": unit.path, "kill_signal": kill_signal, "restart_kill_signal": restart_signal, "kill_mode": kill_mode,
        "exec_stop": stops, "problems": [{"severity": p[0], "setting": p[1], "text": p[2]} for p in problems],
        "dropin": dropin,
    }  # fmt: skip
    yield run.finding(message, remediation, severity=severity, path=unit.path, details=details)
