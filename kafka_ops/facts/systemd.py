"""The broker's systemd unit as systemd will run it: the unit file plus its drop-ins, in systemd's order.

Semantics (systemd.unit(5), systemd.service(5), systemd.kill(5)): drop-ins ``<unit>.d/*.conf`` from
/etc, /run and /usr/lib are applied in lexical order of file name after the unit; a later assignment wins; an
empty assignment resets list settings (ExecStop=, Environment=). ``TimeoutSec=`` sets both start and stop
timeouts. Unset ``TimeoutStopSec`` means ``DefaultTimeoutStopSec=`` (90 s, systemd-system.conf(5)); unset
``KillSignal`` is SIGTERM; ``KillMode`` defaults to control-group; ``SendSIGKILL`` to yes.
"""

from __future__ import annotations

import glob
import os
import re
import shlex
from dataclasses import field

from kafka_ops.engine.compat import slotted
from kafka_ops.engine.errors import EngineError
from kafka_ops.engine.fileio import read_bytes

DEFAULT_TIMEOUT_STOP_S = 90.0
UNIT_DIRS = (
    "/etc/systemd/system",
    "/run/systemd/system",
    "/usr/local/lib/systemd/system",
    "/usr/lib/systemd/system",
    "/lib/systemd/system",
)
_LIST_KEYS = {"ExecStop", "ExecStopPost", "ExecStart", "Environment", "EnvironmentFile", "ExecStartPre"}
_SPAN = re.compile(r"(\d+(?:\.\d+)?)\s*([a-z]*)")
_UNITS = {
    "": 1, "s": 1, "sec": 1, "second": 1, "seconds": 1, "ms": 0.001, "msec": 0.001, "us": 1e-6, "usec": 1e-6,
    "m": 60, "min": 60, "minute": 60, "minutes": 60, "h": 3600, "hr": 3600, "hour": 3600, "hours": 3600,
    "d": 86400, "day": 86400, "days": 86400, "w": 604800, "week": 604800, "weeks": 604800,
}  # fmt: skip


def parse_timespan(value: str) -> float | None:
    """systemd time span -> seconds; None for 'infinity' (no timeout); raises ValueError when malformed."""
    v = value.strip().lower()
    if v in ("infinity", "0"):
        return None if v == "infinity" else 0.0
    total = 0.0
    pos = 0
    v = v.replace(" ", "")
    for m in _SPAN.finditer(v):
        if m.start() != pos or m.group(2) not in _UNITS:
            raise ValueError(f"bad time span {value!r}")
        total += float(m.group(1)) * _UNITS[m.group(2)]
        pos = m.end()
    if pos != len(v) or pos == 0:
        raise ValueError(f"bad time span {value!r}")
    return total


def parse_bytes(value: str) -> int | None:
    """MemoryMax= style sizes (K, M, G, T base 1024); None for infinity or a percentage we cannot resolve."""
    v = value.strip()
    if not v or v.lower() == "infinity" or v.endswith("%"):
        return None
    m = re.fullmatch(r"(\d+)([KMGTP]?)", v, re.IGNORECASE)
    if not m:
        raise ValueError(f"bad size {value!r}")
    scale: int = 1024 ** " KMGTP".index(m.group(2).upper() or " ")
    return int(m.group(1)) * scale


@slotted
class UnitFacts:
    name: str
    path: str
    dropins: list[str] = field(default_factory=list)
    service: dict[str, str] = field(default_factory=dict)  # last value of scalar keys
    lists: dict[str, list[str]] = field(default_factory=dict)  # list keys after resets
    environment: dict[str, str] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)

    @property
    def user(self) -> str | None:
        return self.service.get("User") or None

    def timeout_stop_s(self) -> float | None:
        """Effective stop timeout in seconds (None = infinity)."""
        raw = self.service.get("TimeoutStopSec", self.service.get("TimeoutSec"))
        if raw is None or raw == "":
            return DEFAULT_TIMEOUT_STOP_S
        span = parse_timespan(raw)
        return None if span == 0 else span  # systemd.service(5): 0 disables the timeout, like "infinity"

    @property
    def timeout_stop_source(self) -> str:
        if self.service.get("TimeoutStopSec"):
            return "TimeoutStopSec"
        if self.service.get("TimeoutSec"):
            return "TimeoutSec"
        return "systemd default (DefaultTimeoutStopSec=90s)"

    def to_dict(self) -> dict[str, object]:
        return {
            "name": self.name, "path": self.path, "dropins": self.dropins, "service": self.service,
            "lists": self.lists, "environment": self.environment, "errors": self.errors,
        }  # fmt: skip


def _parse_into(unit: UnitFacts, path: str, text: str) -> None:
    section = None
    logical = ""
    for raw in text.splitlines():
        line = raw.rstrip()
        if logical:
            line = logical + line.lstrip()
            logical = ""
        if line.endswith("\\"):
            logical = line[:-1] + " "
            continue
        s = line.strip()
        if not s or s[0] in "#;":
            continue
        if s.startswith("[") and s.endswith("]"):
            section = s[1:-1]
            continue
        if section != "Service" or "=" not in s:
            continue
        key, value = (x.strip() for x in s.split("=", 1))
        if key in _LIST_KEYS:
            if value == "":
                unit.lists[key] = []
                if key == "Environment":
                    unit.environment.clear()
            else:
                unit.lists.setdefault(key, []).append(value)
                if key == "Environment":
                    try:
                        for assignment in shlex.split(value):
                            if "=" in assignment:
                                k, v = assignment.split("=", 1)
                                unit.environment[k] = v
                    except ValueError:
                        unit.errors.append(f"{path}: cannot parse Environment={value}")
        else:
            unit.service[key] = value


def _read(path: str) -> str:
    return read_bytes(path, follow=True).decode("utf-8", errors="replace")  # never waits on a FIFO


def load_unit(path: str, extra_dropin_dirs: list[str] | None = None) -> UnitFacts:
    """Parse a unit file and every drop-in that applies to it (next to it and in the standard dirs)."""
    name = os.path.basename(path)
    unit = UnitFacts(name, os.path.abspath(path))
    _parse_into(unit, path, _read(path))
    dirs = [os.path.dirname(unit.path)] + list(UNIT_DIRS) + (extra_dropin_dirs or [])
    by_name: dict[str, str] = {}
    for d in dirs:
        for f in sorted(glob.glob(os.path.join(d, f"{name}.d", "*.conf"))):
            by_name.setdefault(os.path.basename(f), f)  # /etc shadows /usr/lib for the same file name
    for base in sorted(by_name):
        f = by_name[base]
        try:
            _parse_into(unit, f, _read(f))
            unit.dropins.append(f)
        except EngineError as exc:
            unit.errors.append(str(exc))
    for ef in unit.lists.get("EnvironmentFile", []):
        optional = ef.startswith("-")
        p = ef.lstrip("-")
        try:
            for line in _read(p).splitlines():
                line = line.strip()
                if line and not line.startswith("#") and "=" in line:
                    k, v = line.split("=", 1)
                    unit.environment[k.strip()] = v.strip().strip('"').strip("'")
        except EngineError as exc:
            if not optional:
                unit.errors.append(str(exc))
    return unit


def find_unit(name: str = "kafka.service") -> str | None:
    for d in UNIT_DIRS:
        p = os.path.join(d, name)
        if os.path.exists(p):
            return p
    return None


@slotted
class JvmFacts:
    heap_max_bytes: int | None
    direct_max_bytes: int | None
    source: str
    opts: str


_XMX = re.compile(r"-Xmx(\d+)([kKmMgGtT]?)")
_DIRECT = re.compile(r"-XX:MaxDirectMemorySize=(\d+)([kKmMgGtT]?)")


def _jvm_size(num: str, unit: str) -> int:
    scale: int = 1024 ** " kmgt".index(unit.lower() or " ")
    return int(num) * scale


def jvm_from_env(env: dict[str, str]) -> JvmFacts:
    """Heap and direct memory from KAFKA_HEAP_OPTS/KAFKA_OPTS; kafka-server-start.sh defaults to -Xmx1G.

    Direct memory defaults to the max heap size (HotSpot: MaxDirectMemorySize unset -> Runtime.maxMemory()).
    """
    heap_opts = env.get("KAFKA_HEAP_OPTS")
    source = "KAFKA_HEAP_OPTS" if heap_opts else "kafka-server-start.sh default (-Xmx1G -Xms1G)"
    opts = " ".join(
        x
        for x in (
            heap_opts or "-Xmx1G -Xms1G",
            env.get("KAFKA_OPTS", ""),
            env.get("KAFKA_JVM_PERFORMANCE_OPTS", ""),
        )
        if x
    )
    heap = None
    for m in _XMX.finditer(opts):
        heap = _jvm_size(*m.groups())
    direct = heap
    for m in _DIRECT.finditer(opts):
        direct = _jvm_size(*m.groups())
    return JvmFacts(heap, direct, source, opts)
