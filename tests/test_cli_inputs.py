"""Inputs operators get wrong: each is refused with one line naming the option and what is wrong (exit 2), and
nothing is written; or, for what the broker itself reads, a finding that says exactly that (test_conf001.py)."""

from __future__ import annotations

import gzip
import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from kafka_ops.simulator.host import SimulatedHost

from .conftest import NOW_MS, tree
from .test_cli_contract import assert_one_line

Cli = Callable[..., tuple[int, str, str]]


def refused(cli: Cli, watch: list[Path | str], *args: str) -> str:
    """Run a command that must be refused: exit 2, nothing on stdout, one line on stderr, no file changed."""
    before = [tree(w) for w in watch]
    code, out, err = cli(*args)
    assert code == 2 and out == "", (args, code, out[-500:], err)
    assert_one_line(
        err, "kafka-ops " + " ".join(a for a in args[:2] if not a.startswith("-") and "/" not in a) + ":"
    )
    assert [tree(w) for w in watch] == before
    return err.strip()


def audit_json(cli: Cli, host: SimulatedHost, *extra: str) -> tuple[int, dict, str]:  # type: ignore[type-arg]
    args = [
        "audit", "--log-dir", host.log_dirs[0], "--expect-mount", f"{host.log_dirs[0]}=/", "--broker-state", "stopped",
        "--kafka-version", "3.7.0", "-f", "json", *extra,
    ]  # fmt: skip
    code, out, err = cli(*args)
    return code, json.loads(out), err


# ----------------------------------------------------------------------------------------------------- --now
@pytest.mark.parametrize(
    ("given", "how"),
    [
        (str(NOW_MS), "epoch milliseconds"),
        (str(NOW_MS // 1000), "epoch seconds"),
        ("1790000000.0", "epoch seconds"),
        ("2026-09-21T14:13:20Z", "ISO 8601"),
        ("2026-09-21T16:13:20+02:00", "ISO 8601"),
        ("2026-09-21T14:13:20", "ISO 8601 in UTC (it gives no offset)"),
        ("2026-09-21 14:13:20", "ISO 8601 in UTC (it gives no offset)"),
    ],
)
def test_now_is_iso_epoch_seconds_or_epoch_millis_and_the_run_says_which(
    cli: Cli, healthy_host: SimulatedHost, given: str, how: str
) -> None:
    code, report, err = audit_json(cli, healthy_host, "--now", given)
    assert code == 0, err
    assert report["generated_at"] == "2026-09-21T14:13:20+00:00"
    # the note first, then the audit's summary and verdict lines
    assert err.splitlines()[0] == f"kafka-ops audit: --now {given} read as {how}: 2026-09-21T14:13:20Z"


def test_digits_are_decided_by_magnitude(cli: Cli, healthy_host: SimulatedHost) -> None:
    # 99999999999 is the largest number read as seconds (year 5138); 100000000000 the smallest as milliseconds
    _, report, err = audit_json(cli, healthy_host, "--now", "99999999999")
    assert "read as epoch seconds: 5138-11-16T09:46:39Z" in err and report["generated_at"].startswith(
        "5138-11-16"
    )
    _, report, err = audit_json(cli, healthy_host, "--now", "100000000000")
    assert "read as epoch milliseconds: 1973-03-03T09:46:40Z" in err
    assert report["generated_at"].startswith("1973-03-03")


@pytest.mark.parametrize(
    ("given", "why"),
    [
        ("yesterday", "not a time: 'yesterday' (expected ISO 8601, epoch seconds or epoch milliseconds)"),
        ("2026-13-01", "not a time: '2026-13-01' (expected ISO 8601, epoch seconds or epoch milliseconds)"),
        ("-5", "not a time: '-5' (expected ISO 8601, epoch seconds or epoch milliseconds)"),
        (
            "1790000000000000",
            "not a time: '1790000000000000' (too large for epoch milliseconds: microseconds or "
            "nanoseconds? give ISO 8601, epoch seconds or epoch milliseconds)",
        ),
        (
            "1790000000000.5",
            "not a time: '1790000000000.5' (too large for epoch milliseconds: microseconds or "
            "nanoseconds? give ISO 8601, epoch seconds or epoch milliseconds)",
        ),
    ],
)
def test_a_time_that_is_not_one_is_refused(
    cli: Cli, healthy_host: SimulatedHost, given: str, why: str
) -> None:
    line = refused(cli, [healthy_host.root], "audit", "--log-dir", healthy_host.log_dirs[0], "--now", given)
    assert line == f"kafka-ops audit: --now: {why}"
    line = refused(
        cli, [healthy_host.root], "forecast", "--log-dir", healthy_host.log_dirs[0], "--now", given
    )
    assert line == f"kafka-ops forecast: --now: {why}"


# ------------------------------------------------------------------------------- --kafka-version, --horizon
@pytest.mark.parametrize("given", ["latest", "3", "v3.7.0", "3.7.x", "three", "3.7.0.x", "kafka-3.7.0"])
def test_a_kafka_version_that_is_not_one_is_refused(
    cli: Cli, healthy_host: SimulatedHost, given: str
) -> None:
    line = refused(
        cli, [healthy_host.root], "audit", "--log-dir", healthy_host.log_dirs[0], "--kafka-version", given
    )
    assert line == (
        f"kafka-ops audit: --kafka-version: not a Kafka version: {given!r} "
        "(expected e.g. 3.7.0, 2.8, 0.10.2.1 or kafka_2.13-3.7.0)"
    )


@pytest.mark.parametrize(
    "given", ["3.7.0", "2.8", "0.10.2.1", "7.6.0-ccs", "3.8.0-SNAPSHOT", "kafka_2.13-3.7.0"]
)
def test_kafka_versions_as_written_are_accepted(cli: Cli, healthy_host: SimulatedHost, given: str) -> None:
    code, report, err = audit_json(cli, healthy_host, "--now", str(NOW_MS), "--kafka-version", given)
    assert code == 0 and report["inputs"]["kafka_version"]["value"] == given, err


@pytest.mark.parametrize("given", ["soon", "7 days", "1.5x", "-1h", "24hours"])
def test_a_horizon_that_is_not_a_duration_is_refused(
    cli: Cli, healthy_host: SimulatedHost, given: str
) -> None:
    line = refused(
        cli, [healthy_host.root], "audit", "--log-dir", healthy_host.log_dirs[0], "--horizon", given
    )
    assert line == (
        f"kafka-ops audit: --horizon: not a duration: {given!r} (expected a number and a unit: ms, s, m, h, d or w, "
        "e.g. 420s, 5m, 168h, 7d or 1h30m)"
    )


# --------------------------------------------------------------------------------- paths of the wrong kind
def test_a_file_where_a_log_dir_goes_is_refused(
    cli: Cli, healthy_host: SimulatedHost, tmp_path: Path
) -> None:
    segment = Path(healthy_host.partitions["orders-0"]) / "00000000000000000000.log"
    for path in (healthy_host.server_properties, str(segment), healthy_host.topic_configs):
        for command in ("audit", "forecast"):
            line = refused(
                cli, [healthy_host.root], command, "--log-dir", healthy_host.log_dirs[0], "--log-dir", path
            )
            assert line == (
                f"kafka-ops {command}: --log-dir: {path}: a file, not a directory (a log dir holds the partition dirs)"
            )


def test_the_same_log_dir_twice_is_refused_however_it_is_spelled(
    cli: Cli, healthy_host: SimulatedHost, tmp_path: Path
) -> None:
    d = healthy_host.log_dirs[0]
    link = tmp_path / "link"
    link.symlink_to(d)
    parent, name = os.path.split(d)
    cases = {
        d + "/": f"{d} is given twice",
        d: f"{d} is given twice",
        f"{parent}/../{os.path.basename(parent)}/{name}": f"{d} and {parent}/../{os.path.basename(parent)}/{name} "
        "are the same directory",
        str(link): f"{d} and {link} are the same directory",
    }
    for second, says in cases.items():
        line = refused(cli, [healthy_host.root, tmp_path], "audit", "--log-dir", d, "--log-dir", second)
        assert line == f"kafka-ops audit: --log-dir: {says}: give each log dir once"


def test_a_file_of_the_wrong_kind_as_the_systemd_unit_is_refused(
    cli: Cli, healthy_host: SimulatedHost, tmp_path: Path
) -> None:
    binary = tmp_path / "kafka.service"
    binary.write_bytes(b"\x7fELF\x02\x01\x01\x00" + os.urandom(2000))
    gz = tmp_path / "kafka.service.gz"
    gz.write_bytes(gzip.compress(Path(healthy_host.systemd_unit).read_bytes()))
    empty = tmp_path / "empty.service"
    empty.write_text("")
    cases = {
        healthy_host.server_properties: "not a systemd unit file: no [Unit] or [Service] section; it looks like a "
        "Java properties file (server.properties?)",
        str(binary): "binary data, not a systemd unit file",
        str(gz): "binary data, not a systemd unit file",
        str(empty): "not a systemd unit file: no [Unit] or [Service] section",
        healthy_host.log_dirs[0]: "a directory, not a file",
        str(tmp_path / "nope.service"): "no such file",
    }
    for path, why in cases.items():
        line = refused(cli, [healthy_host.root, tmp_path], "audit", "--log-dir", healthy_host.log_dirs[0],
                       "--systemd-unit", path)  # fmt: skip
        assert line == f"kafka-ops audit: --systemd-unit: {path}: {why}"


def test_a_file_of_the_wrong_kind_as_server_properties_is_refused(
    cli: Cli, healthy_host: SimulatedHost, tmp_path: Path
) -> None:
    binary = tmp_path / "server.properties"
    binary.write_bytes(os.urandom(3000).replace(b"\n", b"\0"))
    cases = {
        healthy_host.systemd_unit: "a systemd unit ([Unit] section), not server.properties",
        healthy_host.topic_configs: "JSON, not a Java properties file (is it the --topic-configs file?)",
        str(binary): "binary data, not a Java properties file (server.properties)",
        healthy_host.log_dirs[0]: "a directory, not a file",
    }
    for path, why in cases.items():
        line = refused(cli, [healthy_host.root, tmp_path], "audit", "--server-properties", path)
        assert line == f"kafka-ops audit: --server-properties: {path}: {why}"


def test_an_expect_mount_that_names_no_log_dir_is_refused(
    cli: Cli, healthy_host: SimulatedHost, tmp_path: Path
) -> None:
    dirs = ", ".join(healthy_host.log_dirs)
    sp = healthy_host.server_properties
    for args, why in {
        ("--server-properties", sp, "--expect-mount", "/data/kafka-9=/data/kafka-9"):
            f"/data/kafka-9 is not a log dir of this audit (log dirs: {dirs})",
        ("--server-properties", sp, "--expect-mount", f"{tmp_path}=/"):
            f"{tmp_path} is not a log dir of this audit (log dirs: {dirs})",
        ("--log-dir", healthy_host.log_dirs[0], "--expect-mount", f"{healthy_host.log_dirs[1]}=/"):
            f"{healthy_host.log_dirs[1]} is not a log dir of this audit (log dirs: {healthy_host.log_dirs[0]})",
        ("--log-dir", healthy_host.log_dirs[0], "--expect-mount", healthy_host.log_dirs[0]):
            f"takes LOG_DIR=MOUNT_POINT, not {healthy_host.log_dirs[0]!r}",
        ("--log-dir", healthy_host.log_dirs[0], "--expect-mount", f"{healthy_host.log_dirs[0]}=/",
         "--expect-mount", f"{healthy_host.log_dirs[0]}/=/data"):
            f"{healthy_host.log_dirs[0]}/ is given twice, with / and /data",
    }.items():  # fmt: skip
        line = refused(cli, [healthy_host.root, tmp_path], "audit", *args)
        assert line == f"kafka-ops audit: --expect-mount: {why}"


def test_an_expect_mount_spelled_another_way_still_applies(
    cli: Cli, healthy_host: SimulatedHost, tmp_path: Path
) -> None:
    link = tmp_path / "link"
    link.symlink_to(healthy_host.log_dirs[0])
    for spelled in (f"{link}/", healthy_host.log_dirs[0] + "/"):
        code, out, err = cli("audit", "--log-dir", healthy_host.log_dirs[0], "--expect-mount", f"{spelled}=/",
                             "--broker-state", "stopped", "--now", str(NOW_MS), "-f", "json")  # fmt: skip
        assert code == 0, err
        assert not [f for f in json.loads(out)["findings"] if f["check"] == "DIR001"]  # on / as expected


def test_a_broker_log_of_the_wrong_kind_is_refused(
    cli: Cli, healthy_host: SimulatedHost, tmp_path: Path
) -> None:
    zst = tmp_path / "server.log.1.zst"
    zst.write_bytes(b"\x28\xb5\x2f\xfd" + os.urandom(100))
    binary = tmp_path / "server.log"
    binary.write_bytes(b"\0\1\2" * 1000)
    cases = {
        str(
            tmp_path
        ): "a directory; give the log files (server.log, server.log.1, server.log.2026-11-01-10.gz)",
        str(zst): "zstd-compressed, which Python cannot read: zstd -d it first",
        str(binary): "binary data, not a broker log (nor gzip, bzip2 or xz)",
        str(tmp_path / "server.log.7"): "no such file",
    }
    for path, why in cases.items():
        line = refused(cli, [healthy_host.root, tmp_path], "audit", "--log-dir", healthy_host.log_dirs[0],
                       "--broker-log", path)  # fmt: skip
        assert line == f"kafka-ops audit: --broker-log: {path}: {why}"


# ------------------------------------------------------------------------------------- files of other commands
def test_fix_undo_refuses_a_file_that_is_not_a_journal(cli: Cli, tmp_path: Path) -> None:
    files = {
        "object.json": ('{"a": 1}', "not a kafka-ops journal (no 'fix' and 'done' written by `kafka-ops fix ... --apply`)"),
        "array.json": ("[1, 2]", "not a kafka-ops journal (no 'fix' and 'done' written by `kafka-ops fix ... --apply`)"),
        "text.json": ("hello", "not a kafka-ops journal (not JSON: Expecting value: line 1 column 1 (char 0))"),
        "damaged.json": ('{"fix": "ownership", "done": [{"op": "rm -rf", "path": "/"}]}',
                         "damaged journal: entry 0 of 'done' is not a change kafka-ops makes"),
    }  # fmt: skip
    for name, (content, _) in files.items():
        (tmp_path / name).write_text(content)
    (tmp_path / "dir").mkdir()
    cases = {str(tmp_path / n): why for n, (_, why) in files.items()}
    cases[str(tmp_path / "dir")] = "a directory, not a journal"
    cases[str(tmp_path / "none.json")] = "no such file"
    for path, why in cases.items():
        line = refused(cli, [tmp_path], "fix", "undo", path)
        assert line == f"kafka-ops fix undo: {path}: {why}"


def test_fleet_audit_refuses_an_inventory_ansible_cannot_read(tmp_path: Path) -> None:
    import subprocess
    import sys

    binary = tmp_path / "inventory.bin"
    binary.write_bytes(bytes(range(256)) * 4)  # the ini plugin would read hosts named by control characters
    group = tmp_path / "inventory.json"
    group.write_text('{"a": 1}')  # the yaml plugin reads 'a' as an invalid group: no host at all
    unreadable = tmp_path / "dir"
    unreadable.mkdir()
    (unreadable / "notes").write_text("# audit notes\n\n- broker: stopped; gate: FAIL\n")
    cases = {
        str(binary): "binary data, not an inventory (ini, yaml, or an executable inventory script)",
        str(group): "no hosts in group kafka_brokers",
        str(unreadable): "not an inventory Ansible can read (no ini, yaml or script plugin parsed it)",
        str(tmp_path / "none.yml"): "no such inventory file or directory",
    }
    for path, why in cases.items():
        r = subprocess.run([sys.executable, "-m", "kafka_ops.cli", "fleet", "audit", "--inventory", path,
                            "--no-results"], capture_output=True, text=True, timeout=120)  # fmt: skip
        assert r.returncode == 2 and r.stdout == ""
        assert r.stderr == f"kafka-ops fleet audit: {path}: {why}\n"


def test_an_empty_or_zero_value_is_a_mistake_not_a_default(cli: Cli, healthy_host: SimulatedHost) -> None:
    d = healthy_host.log_dirs[0]
    cases = {
        ("--now", ""): "--now: not a time: '' (expected ISO 8601, epoch seconds or epoch milliseconds)",
        ("--now", "١٧٩٠٠٠٠٠٠٠"): "--now: not a time: '١٧٩٠٠٠٠٠٠٠' (expected ISO 8601, epoch seconds or epoch "
        "milliseconds)",
        (
            "--kafka-version",
            "",
        ): "--kafka-version: not a Kafka version: '' (expected e.g. 3.7.0, 2.8, 0.10.2.1 or "
        "kafka_2.13-3.7.0)",
        ("--broker-user", " "): "--broker-user: empty value",
        ("--horizon", "0"): "--horizon: must be longer than 0, not '0'",
        ("--horizon", "0d"): "--horizon: must be longer than 0, not '0d'",
        (
            "--systemd-unit",
            "kafka-nope.service",
        ): "--systemd-unit: kafka-nope.service: no such file, nor a unit of "
        "that name in /etc/systemd/system, /run/systemd/system, /usr/local/lib/systemd/system, "
        "/usr/lib/systemd/system, /lib/systemd/system",
    }
    for (opt, value), why in cases.items():
        line = refused(cli, [healthy_host.root], "audit", "--log-dir", d, opt, value)
        assert line == f"kafka-ops audit: {why}"
    line = refused(cli, [healthy_host.root], "dump", "--max-bytes", "0", d)
    assert line == "kafka-ops dump: --max-bytes: must be at least 1, not 0"
