"""Audit options from command-line values: shared by the CLI, the collector shipped to hosts and the fleet job.

Standard library only (it is shipped to broker hosts with the collector). A value that cannot be what its option
needs raises :class:`OptionError`, whose text is one line: ``--now: not a time: 'yesterday' (expected ...)``.
Paths are checked for their kind here, before anything is read: a file where a log dir goes, a server.properties
given as the systemd unit, the same log dir twice, an --expect-mount that names no log dir of the audit.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from typing import Any

from kafka_ops.facts.collect import DEFAULT_SERVER_PROPERTIES
from kafka_ops.facts.model import AuditOptions
from kafka_ops.units import (  # noqa: F401 (the older import path of the time and duration parsers)
    DURATION_HELP,
    MILLIS_BELOW,
    SECONDS_BELOW,
    iso,
    parse_duration,
    parse_now,
    parse_now_ms,
    parse_span,
    read_time,
    seconds_parser,
    time_note,
)

# '3.7.0', '2.8', '0.10.2.1', '7.6.0-ccs', '3.8.0-SNAPSHOT', or a jar's name 'kafka_2.13-3.7.0'
_VERSION = re.compile(r"^(?:kafka_\d+\.\d+-)?\d+(?:\.\d+){1,3}(?:[-+~][0-9A-Za-z][0-9A-Za-z.+~-]*)?$")
_SNIFF = 65536


class OptionError(ValueError):
    """An option's value that cannot be used; ``str()`` is ``<option>: <why>`` on one line."""

    def __init__(self, option: str, message: str) -> None:
        self.option = option
        self.reason = message
        super().__init__(f"{option}: {message}" if option else message)


def parse_seconds(text: str, option: str) -> float:
    """A --...-sec / --timeout value: seconds as a bare number (the unit is the option's) or any duration."""
    try:
        return parse_duration(text, bare="s") / 1000
    except ValueError as exc:
        raise OptionError(option, str(exc)) from None


def parse_kafka_version(text: str) -> str:
    if not _VERSION.match(text.strip()):
        raise OptionError(
            "--kafka-version",
            f"not a Kafka version: {text!r} (expected e.g. 3.7.0, 2.8, 0.10.2.1 or kafka_2.13-3.7.0)",
        )
    return text.strip()


def parse_expected_mounts(items: Iterable[str]) -> dict[str, str]:
    """['/data/kafka-1=/data/kafka-1', ...] -> {absolute log dir: mount point}."""
    out: dict[str, str] = {}
    for item in items:
        d, sep, m = item.partition("=")
        if not sep or not d or not m:
            raise OptionError("--expect-mount", f"takes LOG_DIR=MOUNT_POINT, not {item!r}")
        key = os.path.abspath(d)
        if key in out and out[key] != m:
            raise OptionError("--expect-mount", f"{d} is given twice, with {out[key]} and {m}")
        out[key] = m
    return out


# ------------------------------------------------------------------------------------------------- paths
def _head(path: str, option: str = "") -> bytes:
    """The first bytes of a named input, opened without blocking: a FIFO, device or socket is refused here
    (a plain open() of a FIFO waits forever for a writer)."""
    from kafka_ops.engine.errors import EngineError
    from kafka_ops.engine.fileio import open_fd

    try:
        fd, _st = open_fd(path, follow=True)
    except EngineError as exc:
        if "not a regular file" in exc.reason:
            raise OptionError(option, str(exc)) from None
        return b""  # unreadable: the reader says so in its own words (permission denied, ...)
    try:
        return os.pread(fd, _SNIFF, 0)
    except OSError:
        return b""
    finally:
        os.close(fd)


def _is_binary(head: bytes) -> bool:
    """NUL or many control bytes. Not 'not UTF-8': Java reads server.properties as ISO-8859-1."""
    controls = sum(1 for b in head if b < 9 or 13 < b < 32)
    return b"\0" in head or controls > len(head) // 100


COMPRESSED_MAGIC = {b"\x1f\x8b": "gzip", b"BZh": "bzip2", b"\xfd7zXZ\x00": "xz", b"\x28\xb5\x2f\xfd": "zstd"}


def compression_of(head: bytes) -> str | None:
    return next((name for magic, name in COMPRESSED_MAGIC.items() if head.startswith(magic)), None)


def _section_headers(text: str) -> list[str]:
    return re.findall(r"(?m)^\s*\[([A-Za-z][\w-]*)\]\s*$", text)


def _must_be_file(option: str, path: str) -> bytes:
    if not os.path.lexists(path):
        raise OptionError(option, f"{path}: no such file")
    if os.path.isdir(path):
        raise OptionError(option, f"{path}: a directory, not a file")
    if not os.path.exists(path):
        raise OptionError(option, f"{path}: a broken symlink (to {os.readlink(path)})")
    return _head(path, option)


def check_input_file(path: str, option: str = "") -> None:
    """Any named input file: it exists, is no directory, and is a regular file (a FIFO would block its reader:
    refused here, before anything reads it). The one check of every command's file options and arguments."""
    _must_be_file(option, path)


def check_server_properties(path: str, option: str = "--server-properties") -> None:
    head = _must_be_file(option, path)
    if _is_binary(head) or compression_of(head):
        raise OptionError(option, f"{path}: binary data, not a Java properties file (server.properties)")
    text = head.decode("utf-8", errors="replace")
    sections = _section_headers(text)
    if {"Unit", "Service", "Install"} & set(sections):
        raise OptionError(option, f"{path}: a systemd unit ([{sections[0]}] section), not server.properties")
    if text.lstrip().startswith("{"):
        raise OptionError(
            option, f"{path}: JSON, not a Java properties file (is it the --topic-configs file?)"
        )


def check_systemd_unit(path: str, option: str = "--systemd-unit") -> None:
    head = _must_be_file(option, path)
    if _is_binary(head) or compression_of(head):
        raise OptionError(option, f"{path}: binary data, not a systemd unit file")
    text = head.decode("utf-8", errors="replace")
    if not _section_headers(text):
        looks = (
            "; it looks like a Java properties file (server.properties?)"
            if re.search(r"(?m)^\s*[a-z]+(\.[a-z0-9]+)+\s*[=:]", text)
            else ""
        )
        raise OptionError(option, f"{path}: not a systemd unit file: no [Unit] or [Service] section{looks}")


def resolve_unit(unit: str) -> str:
    """A unit name ('kafka.service', as inventories and systemctl say it) -> its file in the unit dirs."""
    if "/" in unit or os.path.exists(unit):
        return unit
    from kafka_ops.facts.systemd import UNIT_DIRS, find_unit

    found = find_unit(unit)
    if found is None:
        raise OptionError(
            "--systemd-unit", f"{unit}: no such file, nor a unit of that name in {', '.join(UNIT_DIRS)}"
        )
    return found


def check_topic_configs(path: str, option: str = "--topic-configs") -> None:
    head = _must_be_file(option, path)
    if _is_binary(head) or compression_of(head):
        raise OptionError(option, f"{path}: binary data, not JSON, YAML or kafka-configs output")


def check_broker_log(path: str, option: str = "--broker-log") -> None:
    if os.path.isdir(path):
        raise OptionError(
            option,
            f"{path}: a directory; give the log files (server.log, server.log.1, server.log.2026-11-01-10.gz)",
        )
    head = _must_be_file(option, path)
    kind = compression_of(head)
    if kind == "zstd":
        raise OptionError(option, f"{path}: zstd-compressed, which Python cannot read: zstd -d it first")
    if kind is None and _is_binary(head):
        raise OptionError(option, f"{path}: binary data, not a broker log (nor gzip, bzip2 or xz)")


_SEGMENT_FILE = re.compile(r"^\d{20}\.(log|index|timeindex)$")
_LOG_DIR_FILES = {"meta.properties", "recovery-point-offset-checkpoint", "log-start-offset-checkpoint"}
_PARTITION_FILES = {"partition.metadata", "leader-epoch-checkpoint"}


def partition_dir_parent(path: str) -> str | None:
    """The log dir a partition dir (TOPIC-N with segments or partition.metadata in it) belongs to, when ``path``
    is one: an audit of it would find no partition and pass."""
    from kafka_ops.engine.layout import parse_partition_dir

    name = os.path.basename(os.path.abspath(path))
    if parse_partition_dir(name) is None:
        return None
    try:
        names = os.listdir(path)
    except OSError:
        return None
    if _LOG_DIR_FILES & set(names):
        return None
    if _PARTITION_FILES & set(names) or any(_SEGMENT_FILE.match(n) for n in names):
        return os.path.dirname(os.path.abspath(path))
    return None


def check_broker_user(user: str, option: str = "--broker-user") -> None:
    """A named broker user must exist here: PERM001-PERM003 judge access as that user, and are skipped without it."""
    from kafka_ops.facts.identity import resolve

    if resolve(user) is None:
        raise OptionError(
            option, f"no such user on this host: {user!r} (PERM001-PERM003 judge access as the broker user)"
        )


def check_log_dirs(paths: list[str], option: str = "--log-dir") -> list[str]:
    """Absolute log dirs; a file, a partition dir, or the same dir twice (trailing slash, '..', a symlink), is
    refused."""
    seen: dict[str, str] = {}
    out = []
    for p in paths:
        if os.path.exists(p) and not os.path.isdir(p):
            raise OptionError(option, f"{p}: a file, not a directory (a log dir holds the partition dirs)")
        parent = partition_dir_parent(p) if os.path.isdir(p) else None
        if parent is not None:
            raise OptionError(
                option,
                f"{p}: a partition dir, not a log dir (a log dir holds the partition dirs): give {parent}",
            )
        real = os.path.realpath(p)
        if real in seen:
            first = seen[real]
            if first.rstrip("/") == p.rstrip("/"):
                raise OptionError(option, f"{p} is given twice: give each log dir once")
            via = f" ({real})" if real not in (os.path.abspath(first), os.path.abspath(p)) else ""
            raise OptionError(option, f"{first} and {p} are the same directory{via}: give each log dir once")
        seen[real] = p
        out.append(os.path.abspath(p))
    return out


def _known_log_dirs(log_dirs: list[str], server_properties: str | None) -> list[str] | None:
    """The log dirs the audit will scan, when they can be known now (else None: the audit says why later)."""
    if log_dirs:
        return log_dirs
    sp = server_properties or (
        DEFAULT_SERVER_PROPERTIES if os.path.exists(DEFAULT_SERVER_PROPERTIES) else None
    )
    if sp is None:
        return None
    from kafka_ops.engine.errors import EngineError
    from kafka_ops.facts.config import Configs, read_server_properties

    try:
        return [os.path.abspath(d) for d in Configs(server=read_server_properties(sp)).log_dirs]
    except EngineError:
        return None


def match_expected_mounts(expected: dict[str, str], log_dirs: list[str] | None) -> dict[str, str]:
    """Each --expect-mount key must name a log dir of the audit; keyed as the audit names that log dir."""
    if log_dirs is None:
        return expected
    by_real = {os.path.realpath(d): d for d in log_dirs}
    out = {}
    for key, mount in expected.items():
        d = by_real.get(os.path.realpath(key))
        if d is None:
            listed = ", ".join(log_dirs) or "none"
            raise OptionError("--expect-mount", f"{key} is not a log dir of this audit (log dirs: {listed})")
        out[d] = mount
    return out


# ------------------------------------------------------------------------------------------------ options
def audit_options(check_paths: bool = True, **kw: Any) -> AuditOptions:
    """AuditOptions from the values of the CLI's options (named as the options are, without dashes).

    ``check_paths=False`` when the paths are another host's (`fleet audit --inventory`): only their syntax is read.
    """
    # an empty value ('--now ""', an unset variable in a script) is a mistake, never "not given"
    try:
        now_ms = parse_now(str(kw["now"])) if kw.get("now") is not None else None
    except ValueError as exc:
        raise OptionError("--now", str(exc)) from None
    try:
        horizon_ms = parse_span(str(kw["horizon"] if kw.get("horizon") is not None else "24h"))
    except ValueError as exc:
        raise OptionError("--horizon", str(exc)) from None
    if horizon_ms <= 0:
        raise OptionError("--horizon", f"must be longer than 0, not {kw.get('horizon')!r}")
    version = parse_kafka_version(str(kw["kafka_version"])) if kw.get("kafka_version") is not None else None
    for key in ("broker_user", "server_properties", "systemd_unit", "topic_configs"):
        if kw.get(key) is not None and not str(kw[key]).strip():
            raise OptionError(f"--{key.replace('_', '-')}", "empty value")
    log_dirs = [str(p) for p in kw.get("log_dir") or []]
    sp = str(kw["server_properties"]) if kw.get("server_properties") else None
    topic_configs = str(kw["topic_configs"]) if kw.get("topic_configs") else None
    unit = str(kw["systemd_unit"]) if kw.get("systemd_unit") else None
    logs = [str(p) for p in kw.get("broker_log") or []]
    expected = parse_expected_mounts(kw.get("expect_mount") or [])
    if check_paths:
        log_dirs = check_log_dirs(log_dirs)
        if kw.get("broker_user") is not None:
            check_broker_user(str(kw["broker_user"]))
        if sp:
            check_server_properties(sp)
        if unit:
            unit = resolve_unit(unit)
            check_systemd_unit(unit)
        if topic_configs:
            check_topic_configs(topic_configs)
        for p in logs:
            check_broker_log(p)
        if expected:
            expected = match_expected_mounts(expected, _known_log_dirs(log_dirs, sp))
    return AuditOptions(
        log_dirs=log_dirs,
        server_properties=sp,
        broker_user=kw.get("broker_user"),
        kafka_version=version,
        topic_configs=topic_configs,
        systemd_unit=unit,
        broker_state=str(kw.get("broker_state") or "auto"),
        now_ms=now_ms,
        horizon_ms=horizon_ms,
        logs=logs,
        probe_as_user=bool(kw.get("probe_as_user")),
        deep=bool(kw.get("deep")),
        host=kw.get("host"),
        expected_mounts=expected,
    )
