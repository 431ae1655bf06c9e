"""The gate's semantics and the operator's inputs (issue 21): an input the operator named that cannot be used is
exit 2 with one line saying why, never a PASS; what the audit decided for itself and skipped is one line on stderr
with the verdict, in every format; the default --fail-on is error; one grammar for durations and times."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from kafka_ops.simulator.host import Failures, HostSpec, SimulatedHost, simulate_host
from kafka_ops.units import parse_duration, parse_now_ms, parse_span, seconds_parser

from .conftest import NOW_MS
from .test_cli_inputs import refused

Cli = Callable[..., tuple[int, str, str]]
REPO = Path(__file__).resolve().parents[1]


def base(host: SimulatedHost, *extra: str) -> list[str]:
    return [
        "audit", "--log-dir", host.log_dirs[0], "--expect-mount", f"{host.log_dirs[0]}=/", "--broker-state",
        "stopped", "--kafka-version", "3.7.0", "--now", str(NOW_MS), *extra,
    ]  # fmt: skip


@pytest.fixture(scope="module")
def corrupt_index_host(tmp_path_factory: pytest.TempPathFactory) -> SimulatedHost:
    """A cleanly stopped broker whose only problem is a corrupt .index (IDX001, an error)."""
    return simulate_host(
        str(tmp_path_factory.mktemp("idx")), HostSpec(now_ms=NOW_MS, failures=Failures(bad_index_size=True))
    )


# ----------------------------------------------------------------------------------------------- --fail-on
def test_the_default_gate_fails_on_a_corrupt_index(cli: Cli, corrupt_index_host: SimulatedHost) -> None:
    code, out, _err = cli(*base(corrupt_index_host), "-f", "json")
    report = json.loads(out)
    assert report["summary"]["critical"] == 0 and report["summary"]["error"] >= 1
    assert code == 1 and report["gate"]["fail_on"] == "error" and not report["gate"]["passed"]
    assert any(line.startswith("IDX001 error ") for line in report["gate"]["failing"])
    # the older threshold is still there to ask for, in any case
    code, out, _ = cli(*base(corrupt_index_host), "-f", "json", "--fail-on", "CRITICAL")
    assert code == 0 and json.loads(out)["gate"]["fail_on"] == "critical"


def test_fail_on_never_is_a_report_only(cli: Cli, broken_host: SimulatedHost) -> None:
    code, out, err = cli(*base(broken_host), "-f", "json", "--fail-on", "Never")
    report = json.loads(out)
    assert code == 0 and report["summary"]["critical"] > 0
    assert report["gate"] == {"fail_on": "never", "passed": True, "exit_code": 0, "waived": 0, "failing": []}
    assert "PASS (--fail-on never)" in err


# ------------------------------------------------------------------------------ stderr: state, skips, verdict
def test_junit_to_a_file_says_the_verdict_and_why_on_stderr(
    cli: Cli, broken_host: SimulatedHost, tmp_path: Path
) -> None:
    target = tmp_path / "junit.xml"
    code, out, err = cli(*base(broken_host), "-f", "junit", "-o", str(target))
    assert code == 1 and out == "" and target.read_text().startswith("<?xml")
    lines = err.splitlines()
    summary = next(
        line for line in lines if line.startswith("kafka-ops audit: broker stopped: --broker-state")
    )
    assert "check(s) skipped:" in summary or "no check skipped" in summary
    # the verdict, then the findings that fail the gate, one a line (check, severity, where)
    at = next(
        i for i, line in enumerate(lines) if line.startswith("kafka-ops audit: FAIL (--fail-on error): ")
    )
    assert lines[at + 1 :] and all(
        re.match(r"^  [A-Z]+\d{3} (critical|error) \S", line) for line in lines[at + 1 :]
    )


@pytest.mark.parametrize("fmt", ["json", "brief", "markdown", "table"])
def test_every_format_says_the_state_and_the_skips_in_one_stderr_line(
    cli: Cli, healthy_host: SimulatedHost, fmt: str
) -> None:
    code, _out, err = cli(*base(healthy_host), "-f", fmt)
    assert code == 0
    summaries = [line for line in err.splitlines() if "broker stopped: --broker-state" in line]
    assert len(summaries) == 1
    # the verdict goes to stderr where stdout does not carry it
    assert ("PASS (--fail-on error)" in err) == (fmt == "json")


# -------------------------------------------------------------------------------- named but unusable inputs
def test_a_broker_user_that_does_not_exist_is_refused(cli: Cli, healthy_host: SimulatedHost) -> None:
    line = refused(cli, [healthy_host.root], *base(healthy_host), "--broker-user", "nosuchuser")
    assert line == (
        "kafka-ops audit: --broker-user: no such user on this host: 'nosuchuser' "
        "(PERM001-PERM003 judge access as the broker user)"
    )


def test_a_partition_dir_given_as_the_log_dir_is_refused(cli: Cli, healthy_host: SimulatedHost) -> None:
    part = next(
        os.path.join(healthy_host.log_dirs[0], n)
        for n in sorted(os.listdir(healthy_host.log_dirs[0]))
        if os.path.exists(os.path.join(healthy_host.log_dirs[0], n, "00000000000000000000.log"))
    )
    line = refused(cli, [healthy_host.root], "audit", "--log-dir", part, "--broker-state", "stopped")
    assert line == (
        f"kafka-ops audit: --log-dir: {part}: a partition dir, not a log dir (a log dir holds the partition "
        f"dirs): give {healthy_host.log_dirs[0]}"
    )


def test_a_log_dir_named_like_a_partition_is_still_a_log_dir(cli: Cli, healthy_host: SimulatedHost) -> None:
    # the simulator's log dirs are called kafka-1, kafka-2: TOPIC-N by name, log dirs by their content
    assert os.path.basename(healthy_host.log_dirs[0]) == "kafka-1"
    code, _, err = cli(*base(healthy_host), "-f", "json")
    assert code == 0, err


def test_a_broker_log_with_no_kafka_line_is_refused(
    cli: Cli, healthy_host: SimulatedHost, tmp_path: Path
) -> None:
    prose = tmp_path / "notes.txt"
    prose.write_text("the broker was restarted on Tuesday\n")
    line = refused(cli, [healthy_host.root], *base(healthy_host), "--broker-log", str(prose))
    assert line.startswith(f"kafka-ops audit: {prose}: no Kafka broker log line recognised")
    assert line.endswith("(--broker-log)")


@pytest.fixture
def readable_copy(healthy_host: SimulatedHost) -> Iterator[tuple[str, str]]:
    """A copy of the healthy host's first log dir that any user can traverse, with one partition dir only root
    can read: (log dir, that partition dir)."""
    root = tempfile.mkdtemp(prefix="kafka-ops-gate-")
    try:
        os.chmod(root, 0o755)
        log_dir = os.path.join(root, "kafka-1")
        shutil.copytree(healthy_host.log_dirs[0], log_dir, symlinks=True)
        for dirpath, dirnames, filenames in os.walk(root):
            for n in dirnames:
                os.chmod(os.path.join(dirpath, n), 0o755)
            for n in filenames:
                os.chmod(os.path.join(dirpath, n), 0o644)
        part = next(
            os.path.join(log_dir, n)
            for n in sorted(os.listdir(log_dir))
            if os.path.exists(os.path.join(log_dir, n, "00000000000000000000.log"))
        )
        os.chmod(part, 0o700 if os.geteuid() == 0 else 0o000)
        yield log_dir, part
    finally:
        for dirpath, dirnames, _ in os.walk(root):
            for n in dirnames:
                os.chmod(os.path.join(dirpath, n), 0o755)
        shutil.rmtree(root)


def test_partitions_kafka_ops_cannot_read_are_refused_not_passed(readable_copy: tuple[str, str]) -> None:
    """Not a PASS whose plan "loads every segment as it is": exit 2 naming a path and what to do. As root, the
    shipped collector (stdlib only, the same audit) runs as nobody with the system python3; as another user the
    CLI too."""
    from kafka_ops.collector import ship

    log_dir, part = readable_copy
    args = ["--log-dir", log_dir, "--expect-mount", f"{log_dir}=/", "--broker-state", "stopped",
            "--kafka-version", "3.7.0", "--now", str(NOW_MS)]  # fmt: skip
    if os.geteuid() == 0:
        if not os.access("/usr/bin/python3", os.X_OK):
            pytest.skip("no /usr/bin/python3 to run the collector as nobody")
        runs = [(["/usr/bin/python3", "-I", "-S", "-", "audit", *args], ship.build(), {"user": 65534})]
    else:
        runs = [
            ([sys.executable, "-I", "-S", "-", "audit", *args], ship.build(), {}),
            ([sys.executable, "-m", "kafka_ops", "audit", *args, "-f", "json"], None, {}),
        ]
    for argv, script, user in runs:
        proc = subprocess.run(
            argv, input=script, capture_output=True, text=True, cwd="/", timeout=600,
            env={**os.environ, "PYTHONPATH": str(REPO)}, **user,  # type: ignore[call-overload]
        )  # fmt: skip
        assert proc.returncode == 2 and proc.stdout == "", proc.stderr
        assert len(proc.stderr.splitlines()) == 1, proc.stderr
        assert (
            ": kafka-ops could not read " in proc.stderr
            and "run as root or as the broker user" in proc.stderr
        )
        assert part in proc.stderr


# -------------------------------------------------------------------------------- durations and times
@pytest.mark.parametrize(
    ("text", "ms"),
    [("420s", 420_000), ("5m", 300_000), ("5min", 300_000), ("168h", 604_800_000), ("7d", 604_800_000),
     ("1w", 604_800_000), ("1h30m", 5_400_000), ("500ms", 500), ("7D", 604_800_000), ("2 h", 7_200_000)],
)  # fmt: skip
def test_one_duration_grammar(text: str, ms: int) -> None:
    assert parse_duration(text) == ms
    assert parse_span(text) == ms
    assert seconds_parser()(text) == ms / 1000


def test_a_bare_number_only_where_the_option_names_the_unit() -> None:
    with pytest.raises(ValueError, match="has no unit"):
        parse_duration("420")
    assert parse_duration("420", bare="s") == 420_000  # --timeout-stop-sec 420
    assert parse_span("24") == 86_400_000  # --horizon 24: the older spelling, hours
    with pytest.raises(ValueError, match=r"604800000 hours is implausible \(69,041 years\): give the unit"):
        parse_span("604800000")


def test_horizon_in_milliseconds_by_mistake_is_refused(cli: Cli, healthy_host: SimulatedHost) -> None:
    line = refused(cli, [healthy_host.root], *base(healthy_host), "--horizon", "604800000")
    assert line.startswith("kafka-ops audit: --horizon: 604800000 hours is implausible")


def test_a_bare_horizon_still_works_and_says_it_is_hours(cli: Cli, healthy_host: SimulatedHost) -> None:
    code, out, err = cli(*base(healthy_host), "-f", "json", "--horizon", "48")
    assert code == 0 and json.loads(out)["forecast"] is not None
    assert "--horizon 48 read as 48 hours: write 48h" in err


def test_timeout_stop_sec_takes_a_duration(tmp_path: Path, cli: Cli) -> None:
    host = simulate_host(
        str(tmp_path / "h"), HostSpec(now_ms=NOW_MS, failures=Failures(short_stop_timeout=True))
    )
    for given in ("420s", "7m", "420"):
        code, out, err = cli(
            "fix", "systemd", "--server-properties", host.server_properties, "--systemd-unit", host.systemd_unit,
            "--timeout-stop-sec", given, "--no-reload",
        )  # fmt: skip
        assert code == 0 and "TimeoutStopSec=420s" in out, (given, out, err)
    line = refused(
        cli, [host.root], "fix", "systemd", "--systemd-unit", host.systemd_unit, "--timeout-stop-sec", "soon"
    )
    assert line.startswith("kafka-ops fix systemd: --timeout-stop-sec: not a duration: 'soon'")


def test_logs_timeout_and_poll_take_durations(cli: Cli, broken_host: SimulatedHost) -> None:
    code, _out, err = cli("logs", "--follow", "--timeout", "1s", "--poll", "100ms", broken_host.server_log)
    assert code in (0, 1), err
    line = refused(
        cli, [broken_host.root], "logs", "--follow", "--timeout", "5 minutes", broken_host.server_log
    )
    assert line.startswith("kafka-ops logs: --timeout: not a duration: '5 minutes'")


def test_now_ms_takes_iso_8601_too() -> None:
    assert parse_now_ms("1790000000000") == 1_790_000_000_000
    assert parse_now_ms("2026-09-21T14:13:20Z") == 1_790_000_000_000
    assert parse_now_ms("1790000000") == 1_790_000_000  # the option is named in ms: digits are ms
