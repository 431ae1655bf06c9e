"""CONF001: a server.properties value the broker refuses at start is a critical finding naming the key, the
value, the line and what Kafka accepts; a --topic-configs value no broker can hold is an error finding. Kafka's
own parsing is followed exactly: what it accepts gets no finding."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kafka_ops.simulator.host import SimulatedHost

from ..conftest import NOW_MS, tree

Cli = Callable[..., tuple[int, str, str]]


def audit(cli: Cli, host: SimulatedHost, sp: Path, *extra: str) -> tuple[int, dict[str, Any]]:
    before = tree(host.root)
    code, out, err = cli(
        "audit", "--server-properties", sp, "--broker-state", "stopped", "--now", str(NOW_MS),
        "--kafka-version", "3.7.0", "-f", "json",
        *[a for d in host.log_dirs for a in ("--expect-mount", f"{d}=/")], *extra,
    )  # fmt: skip
    assert code in (0, 1), err
    assert tree(host.root) == before  # the audit only reads
    return code, json.loads(out)


def with_lines(host: SimulatedHost, tmp_path: Path, *lines: str) -> tuple[Path, int]:
    """server.properties of the host plus lines; returns it and the line number of the first added line."""
    base = Path(host.server_properties).read_text()
    sp = tmp_path / "server.properties"
    sp.write_text(base + "".join(line + "\n" for line in lines))
    return sp, base.count("\n") + 1


def conf(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [f for f in report["findings"] if f["check"] == "CONF001"]


@pytest.mark.parametrize(
    ("line", "kafka_error", "suggested"),
    [
        ("log.retention.ms=7d", "Invalid value 7d for configuration log.retention.ms: Not a number of type LONG",
         "604800000"),
        ("log.retention.hours=7d", "Invalid value 7d for configuration log.retention.hours: Not a number of type INT",
         "168"),
        ("log.roll.ms=1h", "Invalid value 1h for configuration log.roll.ms: Not a number of type LONG", "3600000"),
        ("log.segment.bytes=512MiB", "Invalid value 512MiB for configuration log.segment.bytes: Not a number of type "
         "INT", "536870912"),
        ("log.retention.bytes=1_000_000", "Invalid value 1_000_000 for configuration log.retention.bytes: Not a "
         "number of type LONG", "1000000"),
        ("log.segment.bytes=3000000000", "Invalid value 3000000000 for configuration log.segment.bytes: Not a number "
         "of type INT", None),
    ],
)  # fmt: skip
def test_a_unit_suffix_or_a_number_kafka_cannot_read_is_a_critical_finding(
    cli: Cli, healthy_host: SimulatedHost, tmp_path: Path, line: str, kafka_error: str, suggested: str | None
) -> None:
    sp, n = with_lines(healthy_host, tmp_path, line)
    code, report = audit(cli, healthy_host, sp)
    assert code == 1  # critical: the default gate fails
    [f] = conf(report)
    key, value = line.split("=", 1)
    assert f["severity"] == "critical" and f["path"] == str(sp)
    assert f["message"].startswith(f"{line} (line {n} of {sp}) is not a value Kafka accepts: at start ")
    assert f"'{kafka_error}'" in f["message"] and "Exiting Kafka due to fatal exception" in f["message"]
    assert "Long.parseLong" in f["message"] or "Integer.parseInt" in f["message"]
    assert f["details"] == {**f["details"], "key": key, "value": value, "line": n, "suggested": suggested}
    if suggested:
        assert f"set {key}={suggested} on line {n} of {sp}" in f["remediation"]


@pytest.mark.parametrize(
    ("line", "says", "suggested"),
    [
        ("num.recovery.threads.per.data.dir=two", "Not a number of type INT", None),
        ("log.retention.check.interval.ms=five minutes", "Not a number of type LONG", None),
        ("log.cleaner.min.cleanable.ratio=half", "Not a number of type DOUBLE", None),
        ("num.recovery.threads.per.data.dir=0", "Invalid value 0 for configuration num.recovery.threads.per.data.dir:"
         " Value must be at least 1", None),
        ("log.cleaner.min.cleanable.ratio=1.5", "Value must be no more than 1", None),
    ],
)  # fmt: skip
def test_a_word_where_a_number_goes_or_a_number_out_of_range_is_a_critical_finding(
    cli: Cli, healthy_host: SimulatedHost, tmp_path: Path, line: str, says: str, suggested: str | None
) -> None:
    sp, n = with_lines(healthy_host, tmp_path, line)
    _, report = audit(cli, healthy_host, sp)
    [f] = conf(report)
    assert f["severity"] == "critical" and says in f["message"] and f"(line {n} of {sp})" in f["message"]


@pytest.mark.parametrize(
    ("line", "kafka_error", "suggested"),
    [
        ("log.cleanup.policy=compcat", "Invalid value compcat for configuration log.cleanup.policy: String must be "
         "one of: compact, delete", "compact"),
        ("log.cleanup.policy=compact,Delete", "Invalid value Delete for configuration log.cleanup.policy: String must "
         "be one of: compact, delete", "compact,delete"),
        ("log.cleanup.policy=[compact,delete]", "Invalid value [compact for configuration log.cleanup.policy: String "
         "must be one of: compact, delete", "compact,delete"),
        ("log.message.timestamp.type=Foo", "Invalid value Foo for configuration log.message.timestamp.type: String "
         "must be one of: CreateTime, LogAppendTime", None),
        ("log.message.timestamp.type=createtime", "Invalid value createtime for configuration "
         "log.message.timestamp.type: String must be one of: CreateTime, LogAppendTime", "CreateTime"),
        ("compression.type=GZIP", "Invalid value GZIP for configuration compression.type: String must be one of: "
         "uncompressed, zstd, lz4, snappy, gzip, producer", "gzip"),
        ("process.roles=broker,contoller", "Invalid value contoller for configuration process.roles: String must be "
         "one of: broker, controller", "broker,controller"),
    ],
)  # fmt: skip
def test_an_unknown_enum_value_is_a_critical_finding(
    cli: Cli, healthy_host: SimulatedHost, tmp_path: Path, line: str, kafka_error: str, suggested: str | None
) -> None:
    sp, n = with_lines(healthy_host, tmp_path, line)
    _, report = audit(cli, healthy_host, sp)
    [f] = conf(report)
    assert f"'{kafka_error}'" in f["message"] and "exactly so, letter case included" in f["message"]
    assert f["details"]["suggested"] == suggested and f["details"]["line"] == n


@pytest.mark.parametrize("value", ["yes", "1", "on", "enabled", "tru", ""])
def test_a_bool_that_is_not_true_or_false_is_a_critical_finding(
    cli: Cli, healthy_host: SimulatedHost, tmp_path: Path, value: str
) -> None:
    sp, _ = with_lines(healthy_host, tmp_path, f"log.preallocate={value}")
    _, report = audit(cli, healthy_host, sp)
    [f] = conf(report)
    assert (
        f"Invalid value {value} for configuration log.preallocate: Expected value to be either true or false"
        in (f["message"])
    )
    assert "true or false (in any letter case), nothing else" in f["message"]


def test_what_kafka_accepts_gets_no_finding(cli: Cli, healthy_host: SimulatedHost, tmp_path: Path) -> None:
    sp, _ = with_lines(
        healthy_host, tmp_path,
        "log.retention.ms= 604800000   ",  # trimmed by ConfigDef.parseType
        "log.retention.bytes=+1073741824",  # Long.parseLong takes a sign
        "log.cleanup.policy=compact , delete",  # split on \\s*,\\s*
        "log.preallocate=TRUE", "log.cleaner.enable=False",  # equalsIgnoreCase
        "log.cleaner.min.cleanable.ratio=0.5d",  # Double.parseDouble takes a type suffix
        "log.message.timestamp.type=LogAppendTime", "compression.type=producer",
        "some.plugin.setting=anything",  # unknown keys are ignored by Kafka, and by kafka-ops
    )  # fmt: skip
    code, report = audit(cli, healthy_host, sp)
    assert conf(report) == [] and code == 0, report["findings"]


def test_the_other_checks_read_a_refused_value_as_unset(
    cli: Cli, healthy_host: SimulatedHost, tmp_path: Path
) -> None:
    # log.retention.ms is refused: retention comes from log.retention.hours, as if log.retention.ms were unset
    sp, _ = with_lines(healthy_host, tmp_path, "log.retention.hours=1", "log.retention.ms=1h")
    _, report = audit(cli, healthy_host, sp, "--horizon", "1d")
    assert [f["details"]["key"] for f in conf(report)] == ["log.retention.ms"]
    assert "read log.retention.ms as unset" in conf(report)[0]["message"]
    (tmp_path / "unset").mkdir()
    unset, _ = with_lines(healthy_host, tmp_path / "unset", "log.retention.hours=1")
    _, baseline = audit(cli, healthy_host, unset, "--horizon", "1d")
    others = [f for f in report["findings"] if f["check"] != "CONF001"]
    assert others == baseline["findings"] and any(f["check"] == "RET002" for f in others)
    assert report["forecast"] == baseline["forecast"]


def test_log_dirs_twice_or_a_file_in_log_dirs_is_a_critical_finding(
    cli: Cli, healthy_host: SimulatedHost, tmp_path: Path
) -> None:
    a, b = healthy_host.log_dirs
    link = tmp_path / "link"
    link.symlink_to(a)
    text = Path(healthy_host.server_properties).read_text()
    for dirs, kind in (
        (f"{a},{b},{a}/", "same"), (f"{a},{b},{link}", "same"), (f"{a},{b},{tmp_path}/../{tmp_path.name}/link", "same"),
        (f"{a},{b},{healthy_host.topic_configs}", "file"),
    ):  # fmt: skip
        sp = tmp_path / "server.properties"
        sp.write_text(
            "\n".join(f"log.dirs={dirs}" if x.startswith("log.dirs=") else x for x in text.splitlines())
        )
        line = next(
            i for i, x in enumerate(sp.read_text().splitlines(), start=1) if x.startswith("log.dirs=")
        )
        code, report = audit(cli, healthy_host, sp)
        [f] = conf(report)
        third = dirs.split(",")[2]
        assert code == 1 and f["severity"] == "critical" and f["details"]["line"] == line
        if kind == "same":
            assert f"lists {a} and {third}, which are the same directory" in f["message"]
            assert f"Duplicate log directory found: {dirs.replace(',', ', ')}" in f["message"]
            assert f["remediation"] == f"List each log dir once: log.dirs={a},{b} on line {line} of {sp}."
        else:
            assert f"lists {third}, which is a file, not a directory" in f["message"]
            assert f"'{third} is not a readable log directory.'" in f["message"]
        # the directory is audited once, the file not at all
        assert [d["path"] for d in report["log_dirs"]] == [a, b]


@pytest.mark.parametrize("form", ["json", "yaml", "describe"])
def test_a_topic_configs_value_no_broker_can_hold_is_an_error_finding(
    cli: Cli, healthy_host: SimulatedHost, tmp_path: Path, form: str
) -> None:
    tc = tmp_path / f"topics.{form}"
    if form == "json":
        tc.write_text(
            '{\n  "orders": {\n    "retention.ms": "7d",\n    "cleanup.policy": "compcat"\n  }\n}\n'
        )
        lines = {"retention.ms": 3, "cleanup.policy": 4}
    elif form == "yaml":
        tc.write_text("orders:\n  retention.ms: 7d\n  cleanup.policy: compcat\n")
        lines = {"retention.ms": 2, "cleanup.policy": 3}
    else:
        tc.write_text(
            "Dynamic configs for topic orders are:\n"
            "  retention.ms=7d sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:retention.ms=7d}\n"
            "  cleanup.policy=compcat sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:cleanup.policy=compcat}\n"
        )
        lines = {"retention.ms": 2, "cleanup.policy": 3}
    _, report = audit(cli, healthy_host, Path(healthy_host.server_properties), "--topic-configs", str(tc))
    found = {f["details"]["key"]: f for f in conf(report)}
    assert set(found) == {"retention.ms", "cleanup.policy"}
    for key, f in found.items():
        assert f["severity"] == "error" and f["topic"] == "orders" and f["path"] == str(tc)
        assert (
            f["message"].startswith(f"topic orders: {key}=")
            and f"(line {lines[key]} of {tc})" in f["message"]
        )
        assert "No broker can hold it" in f["message"] and "--entity-name orders" in f["remediation"]
    assert (
        "kafka-ops uses the broker default retention.ms=604800000 (server.properties)"
        in (found["retention.ms"]["message"])
    )
    assert "7d is 604800000 ms" in found["retention.ms"]["message"]


def test_a_healthy_host_has_no_conf001(cli: Cli, healthy_host: SimulatedHost) -> None:
    _, report = audit(cli, healthy_host, Path(healthy_host.server_properties), "--topic-configs",
                      healthy_host.topic_configs)  # fmt: skip
    assert conf(report) == [] and "CONF001" in report["checks_run"]
