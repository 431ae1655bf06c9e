"""The audit's command-line options, declared once: name, value, help and default of each.

Every door of the audit reads them from here (pip's cmdoptions model): ``kafka-ops audit``, ``forecast`` and
``fleet audit`` build their Typer parameters from them (kafka_ops.cli.audit.with_options), the collector
shipped to broker hosts its argparse parser (kafka_ops.collector.remote). So an option is added, renamed or explained in
one place, and the collector takes what the CLI takes. Standard library only (shipped with the collector);
what a value means is read by kafka_ops.audit.options.audit_options, whose keywords are these options' ``dest``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kafka_ops.checks.base import DEFAULT_FAIL_ON, GATE_LEVELS


@dataclass(frozen=True)
class Option:
    """One option. ``repeat``: given any number of times (a list); ``flag``: takes no value; ``path``: a file or
    directory; ``choices``: its values, any case when ``any_case``."""

    name: str
    help: str
    metavar: str = ""
    default: Any = None
    repeat: bool = False
    flag: bool = False
    path: bool = False
    choices: tuple[str, ...] = ()
    any_case: bool = False

    @property
    def dest(self) -> str:
        """The keyword it is passed as (``--log-dir`` -> ``log_dir``)."""
        return self.name.lstrip("-").replace("-", "_")


_ALL = (
    Option(
        "--log-dir",
        "A log dir (repeatable); default: log.dirs of --server-properties.",
        "DIR",
        repeat=True,
        path=True,
    ),
    Option(
        "--server-properties",
        "Broker config (default /etc/kafka/server.properties when it exists).",
        "FILE",
        path=True,
    ),
    Option("--broker-user", "The user the broker runs as (default: User= of the systemd unit).", "USER"),
    Option(
        "--kafka-version",
        "Broker version, e.g. 3.7.0 (default: from the installation's kafka_*.jar or the broker log).",
        "VERSION",
    ),
    Option(
        "--topic-configs",
        "Topic overrides: `kafka-configs --describe --all` output, JSON or YAML (default on a KRaft host: its own, "
        "from its metadata log).",
        "FILE",
        path=True,
    ),
    Option(
        "--systemd-unit",
        "The broker's unit file (default: kafka.service in the unit dirs); drop-ins are read too.",
        "FILE",
        path=True,
    ),
    Option(
        "--broker-state",
        "Whether the broker runs (auto: from the audited log dirs: who holds their .lock per /proc/locks, "
        "who has their files open; never from another broker's process).",
        default="auto",
        choices=("auto", "running", "stopped"),
    ),
    Option(
        "--now",
        "The time to audit at, for reproducible forecasts: ISO 8601 (UTC unless it gives an offset), epoch "
        "seconds or epoch milliseconds (digits below 100000000000 are seconds); the run says which it read.",
        "TIME",
    ),
    Option(
        "--horizon",
        "How far the retention forecast looks: a number and a unit, ms, s, m, h, d or w (e.g. 24h, 7d, "
        "1h30m); a bare number is hours (deprecated) and refused when implausible (604800000).",
        "DURATION",
        default="24h",
    ),
    Option(
        "--broker-log",
        "server.log / log-cleaner.log to read (repeatable), rotated ones too: server.log.1, "
        "server.log.2026-11-01-10, gzip, bzip2 or xz compressed.",
        "FILE",
        repeat=True,
        path=True,
    ),
    Option(
        "--probe-as-user", "Open every file as the broker user from a child process (root only).", flag=True
    ),
    Option("--deep", "CRC-check every segment, not only those the next start recovers.", flag=True),
    Option(
        "--expect-mount",
        "LOG_DIR=MOUNT_POINT: the filesystem a log dir must be on (repeatable; '/' accepts the root filesystem).",
        "LOG_DIR=MOUNT",
        repeat=True,
    ),
    Option(
        "--fail-on",
        "Exit 1 when a finding that is not waived is at or above this severity (any case); never: report "
        "only, exit 0 whatever is found. The default, error, fails a pre-deploy gate on a corrupt index too.",
        default=DEFAULT_FAIL_ON,
        choices=GATE_LEVELS,
        any_case=True,
    ),
    Option(
        "--waive",
        "Acknowledge a check's findings (repeatable), or only those whose path matches GLOB (* also matches "
        "/): they stay in the report, marked waived, and do not fail the gate. A reason may follow after a space.",
        "CHECK[:GLOB]",
        repeat=True,
    ),
    Option(
        "--waive-file",
        "Waivers, one per line as for --waive ('CHECK[:GLOB] reason'); blank and '#' lines are ignored.",
        "FILE",
        path=True,
    ),
)
OPTIONS: dict[str, Option] = {o.dest: o for o in _ALL}

# What to audit and how (every door of the audit; `forecast` all but expect_mount, which only DIR001 reads)
INPUTS = (
    "log_dir", "server_properties", "broker_user", "kafka_version", "topic_configs", "systemd_unit",
    "broker_state", "now", "horizon", "broker_log", "probe_as_user", "deep", "expect_mount",
)  # fmt: skip
# What every `kafka-ops fix` command reads: the audit's inputs, so that a fix sees the host as the audit that
# asked for it saw it (`fix indexes --systemd-unit`, `fix systemd --broker-state`...)
FIX_INPUTS = INPUTS
# The gate: what fails it and what is acknowledged
GATE = ("fail_on", "waive", "waive_file")
