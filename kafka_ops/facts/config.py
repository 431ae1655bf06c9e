"""Broker and topic configuration: server.properties defaults plus per-topic overrides, resolved as Kafka does.

Defaults are Kafka's (LogConfig.java DEFAULT_*, ServerLogConfigs.java, CleanerConfig.java,
GroupCoordinatorConfig.OFFSETS_TOPIC_SEGMENT_BYTES_DEFAULT, TransactionLogConfig):
retention.ms 7 d (log.retention.ms > .minutes > .hours), retention.bytes -1, segment.bytes 1 GiB,
segment.ms 7 d (log.roll.ms > log.roll.hours), segment.index.bytes 10 MiB, index.interval.bytes 4096,
cleanup.policy delete, delete.retention.ms 1 d, max.message.bytes 1048588, log.cleaner.io.buffer.size 512 KiB,
log.cleaner.threads 1, num.recovery.threads.per.data.dir 1; the internal topics are compacted with 100 MiB
segments.
"""

from __future__ import annotations

import builtins
import json
import os
import re
from dataclasses import field

from kafka_ops.engine.checkpoints import parse_properties
from kafka_ops.engine.compat import slotted
from kafka_ops.engine.errors import EngineError, FormatError
from kafka_ops.engine.fileio import read_bytes

DAY_MS = 24 * 3600 * 1000

TOPIC_DEFAULTS: dict[str, str] = {
    "retention.ms": str(7 * DAY_MS),
    "retention.bytes": "-1",
    "segment.bytes": str(1024**3),
    "segment.ms": str(7 * DAY_MS),
    "segment.index.bytes": str(10 * 1024 * 1024),
    "index.interval.bytes": "4096",
    "cleanup.policy": "delete",
    "delete.retention.ms": str(DAY_MS),
    "max.message.bytes": "1048588",
    "message.timestamp.type": "CreateTime",
    "min.insync.replicas": "1",
    "file.delete.delay.ms": "60000",
}

# broker property -> topic property it supplies the default for (ServerTopicConfigSynonyms)
_SYNONYMS: dict[str, list[str]] = {
    "retention.ms": ["log.retention.ms", "log.retention.minutes", "log.retention.hours"],
    "retention.bytes": ["log.retention.bytes"],
    "segment.bytes": ["log.segment.bytes"],
    "segment.ms": ["log.roll.ms", "log.roll.hours"],
    "segment.index.bytes": ["log.index.size.max.bytes"],
    "index.interval.bytes": ["log.index.interval.bytes"],
    "cleanup.policy": ["log.cleanup.policy"],
    "delete.retention.ms": ["log.cleaner.delete.retention.ms"],
    "max.message.bytes": ["message.max.bytes"],
    "message.timestamp.type": ["log.message.timestamp.type"],
    "min.insync.replicas": ["min.insync.replicas"],
    "file.delete.delay.ms": ["log.segment.delete.delay.ms"],
}
_UNIT_MS = {"minutes": 60_000, "hours": 3_600_000}

INTERNAL_TOPICS = {
    "__consumer_offsets": {"cleanup.policy": "compact", "segment.bytes": str(100 * 1024 * 1024)},
    "__transaction_state": {"cleanup.policy": "compact", "segment.bytes": str(100 * 1024 * 1024)},
}


# --------------------------------------------------------------------------------------- ConfigDef, as Kafka
# How the broker reads a value (apache/kafka 1eb7644, clients/.../common/config/ConfigDef.java): parseType trims
# the string (String.trim: every char <= U+0020), then INT/SHORT/LONG go through Integer/Short/Long.parseLong (an
# optional sign and decimal digits, nothing else: no unit, no '_', no '.'; out of range fails the same),
# DOUBLE through Double.parseDouble, BOOLEAN accepts only "true"/"false" in any letter case, LIST splits on
# \s*,\s* (keeping a trailing empty element); a failure is ConfigException("Invalid value <v> for configuration
# <k>: Not a number of type LONG" / "Expected value to be either true or false"). Validators then run on the
# parsed value: Range.atLeast/between ("Value must be at least <n>" / "no more than <n>"), ValidString.in and,
# per element, ValidList.in ("String must be one of: a, b"), both case-sensitive.
# The broker builds its config with KafkaConfig.fromProps at start (kafka.Kafka.buildServer): a ConfigException
# there ends the process ("Exiting Kafka due to fatal exception", exit 1) before any log is loaded.
@slotted(frozen=True)
class ConfigType:
    kind: str  # INT SHORT LONG DOUBLE BOOLEAN STRING LIST, as ConfigDef.Type
    at_least: int | None = None
    at_most: int | None = None
    one_of: tuple[str, ...] = ()


_I, _L, _S, _D, _B = (
    ConfigType("INT"),
    ConfigType("LONG"),
    ConfigType("SHORT"),
    ConfigType("DOUBLE"),
    ConfigType("BOOLEAN"),
)
_STR = ConfigType("STRING")


def _int(at_least: int | None = None, at_most: int | None = None) -> ConfigType:
    return ConfigType("INT", at_least, at_most)


def _long(at_least: int | None = None) -> ConfigType:
    return ConfigType("LONG", at_least)


COMPRESSION_TYPES = (
    "uncompressed",
    "zstd",
    "lz4",
    "snappy",
    "gzip",
    "producer",
)  # BrokerCompressionType.names()
TIMESTAMP_TYPES = ("CreateTime", "LogAppendTime")
CLEANUP_POLICIES = ("compact", "delete")
RECORD_OVERHEAD_V0 = 14  # LegacyRecord.RECORD_OVERHEAD_V0: log.segment.bytes / segment.bytes atLeast

# server.properties keys that kafka-ops validates, as defined in LogConfig.SERVER_CONFIG_DEF, CleanerConfig,
# ServerConfigs, KRaftConfigs, SocketServerConfigs, ReplicationConfigs, GroupCoordinatorConfig,
# TransactionLogConfig and ZkConfigs (1eb7644). Keys not listed are not checked (Kafka ignores unknown keys).
SERVER_CONFIG: dict[str, ConfigType] = {
    "num.partitions": _int(1), "log.dir": _STR, "log.dirs": _STR, "log.segment.bytes": _int(RECORD_OVERHEAD_V0),
    "log.roll.ms": _L, "log.roll.hours": _int(1), "log.roll.jitter.ms": _L, "log.roll.jitter.hours": _int(0),
    "log.retention.ms": _L, "log.retention.minutes": _I, "log.retention.hours": _I, "log.retention.bytes": _L,
    "log.retention.check.interval.ms": _long(1), "log.cleanup.policy": ConfigType("LIST", one_of=CLEANUP_POLICIES),
    "log.index.size.max.bytes": _int(4), "log.index.interval.bytes": _int(0), "log.flush.interval.messages": _long(1),
    "log.segment.delete.delay.ms": _long(0), "log.flush.scheduler.interval.ms": _L, "log.flush.interval.ms": _L,
    "log.flush.offset.checkpoint.interval.ms": _int(0), "log.flush.start.offset.checkpoint.interval.ms": _int(0),
    "log.preallocate": _B, "num.recovery.threads.per.data.dir": _int(1), "auto.create.topics.enable": _B,
    "min.insync.replicas": _int(1), "log.message.timestamp.type": ConfigType("STRING", one_of=TIMESTAMP_TYPES),
    "log.message.timestamp.difference.max.ms": _long(0), "log.message.timestamp.before.max.ms": _long(0),
    "log.message.timestamp.after.max.ms": _long(0), "log.message.downconversion.enable": _B,
    "log.dir.failure.timeout.ms": _long(1),
    "log.cleaner.threads": _int(0), "log.cleaner.io.max.bytes.per.second": _D, "log.cleaner.dedupe.buffer.size": _L,
    "log.cleaner.io.buffer.size": _int(0), "log.cleaner.io.buffer.load.factor": _D, "log.cleaner.backoff.ms": _long(0),
    "log.cleaner.min.cleanable.ratio": ConfigType("DOUBLE", 0, 1), "log.cleaner.enable": _B,
    "log.cleaner.delete.retention.ms": _long(0), "log.cleaner.min.compaction.lag.ms": _long(0),
    "log.cleaner.max.compaction.lag.ms": _long(1),
    "broker.id": _I, "node.id": _I, "process.roles": ConfigType("LIST", one_of=("broker", "controller")),
    "message.max.bytes": _int(0), "num.io.threads": _int(1), "num.network.threads": _int(1), "background.threads": _int(1),
    "queued.max.requests": _int(1), "delete.topic.enable": _B,
    "compression.type": ConfigType("STRING", one_of=COMPRESSION_TYPES), "controlled.shutdown.enable": _B,
    "controlled.shutdown.max.retries": _I, "controlled.shutdown.retry.backoff.ms": _L,
    "unclean.leader.election.enable": _B, "default.replication.factor": _I, "num.replica.fetchers": _I,
    "replica.lag.time.max.ms": _L, "replica.fetch.max.bytes": _int(0), "auto.leader.rebalance.enable": _B,
    "offsets.topic.replication.factor": ConfigType("SHORT", 1), "offsets.topic.num.partitions": _int(1),
    "offsets.topic.segment.bytes": _int(1), "offsets.retention.minutes": _int(1),
    "transaction.state.log.replication.factor": ConfigType("SHORT", 1), "transaction.state.log.min.isr": _int(1),
    "transaction.state.log.num.partitions": _int(1), "transaction.state.log.segment.bytes": _int(1),
    "group.initial.rebalance.delay.ms": _I, "socket.send.buffer.bytes": _I, "socket.receive.buffer.bytes": _I,
    "socket.request.max.bytes": _int(1), "max.connections": _int(0), "max.connections.per.ip": _int(0),
    "zookeeper.session.timeout.ms": _I, "zookeeper.connection.timeout.ms": _I,
}  # fmt: skip

# Topic-level keys (LogConfig's topic ConfigDef, 1eb7644): what an override may hold.
TOPIC_CONFIG: dict[str, ConfigType] = {
    "segment.bytes": _int(RECORD_OVERHEAD_V0), "segment.ms": _long(1), "segment.jitter.ms": _long(0),
    "segment.index.bytes": _int(4), "flush.messages": _long(1), "flush.ms": _long(0), "retention.bytes": _L,
    "retention.ms": _long(-1), "max.message.bytes": _int(0), "index.interval.bytes": _int(0),
    "delete.retention.ms": _long(0), "min.compaction.lag.ms": _long(0), "max.compaction.lag.ms": _long(1),
    "file.delete.delay.ms": _long(0), "min.cleanable.dirty.ratio": ConfigType("DOUBLE", 0, 1),
    "cleanup.policy": ConfigType("LIST", one_of=CLEANUP_POLICIES), "unclean.leader.election.enable": _B,
    "min.insync.replicas": _int(1), "compression.type": ConfigType("STRING", one_of=COMPRESSION_TYPES),
    "preallocate": _B, "message.timestamp.type": ConfigType("STRING", one_of=TIMESTAMP_TYPES),
    "message.timestamp.difference.max.ms": _long(0), "message.timestamp.before.max.ms": _long(0),
    "message.timestamp.after.max.ms": _long(0), "message.downconversion.enable": _B,
    "remote.storage.enable": _B, "local.retention.ms": _long(-2), "local.retention.bytes": _long(-2),
}  # fmt: skip

_RANGES = {"INT": (-(2**31), 2**31 - 1), "SHORT": (-(2**15), 2**15 - 1), "LONG": (-(2**63), 2**63 - 1)}
_JAVA_SPACE = "".join(chr(c) for c in range(33))  # String.trim() strips every char <= U+0020
# Double.parseDouble (FloatingDecimal.readJavaFormatString): decimal or hex, an optional f/F/d/D suffix
_JAVA_DOUBLE = re.compile(
    r"^[+-]?(?:NaN|Infinity|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?[fFdD]?"
    r"|0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)[pP][+-]?\d+[fFdD]?)$"
)
_UNIT_SUFFIX = re.compile(r"^\s*(\d+)\s*([a-zA-Z]+)\s*$")
_TIME_UNITS_MS = {
    "ms": 1, "s": 1000, "sec": 1000, "secs": 1000, "seconds": 1000, "m": 60_000, "min": 60_000, "mins": 60_000,
    "minutes": 60_000, "h": 3_600_000, "hr": 3_600_000, "hrs": 3_600_000, "hour": 3_600_000, "hours": 3_600_000,
    "d": 86_400_000, "day": 86_400_000, "days": 86_400_000, "w": 604_800_000, "week": 604_800_000,
    "weeks": 604_800_000,
}  # fmt: skip
_BYTE_UNITS = {
    "k": 1000, "kb": 1000, "kib": 1024, "m": 1000**2, "mb": 1000**2, "mib": 1024**2, "g": 1000**3, "gb": 1000**3,
    "gib": 1024**3, "t": 1000**4, "tb": 1000**4, "tib": 1024**4,
}  # fmt: skip
_KEY_UNIT_MS = {"ms": 1, "seconds": 1000, "minutes": 60_000, "hours": 3_600_000}


@slotted(frozen=True)
class BadValue:
    """A value Kafka refuses, with Kafka's own words for it and what it accepts instead."""

    key: str
    value: str
    kafka_error: str  # ConfigException's message, as the broker logs it
    accepts: str
    hint: str | None = None  # e.g. "7d is 604800000 ms"
    suggested: str | None = None  # a value Kafka takes that means what the text seems to mean


_BOOL_WORDS = {"yes": "true", "y": "true", "on": "true", "1": "true", "enabled": "true", "enable": "true",
               "no": "false", "n": "false", "off": "false", "0": "false", "disabled": "false", "disable": "false"}  # fmt: skip


def _closest(word: str, choices: tuple[str, ...]) -> str | None:
    """The choice an operator most likely meant: the same but for letter case, else a near spelling."""
    import difflib

    same = [c for c in choices if c.lower() == word.lower()]
    if same:
        return same[0]
    near = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    return near[0] if near else None


def _java_long(text: str) -> int | None:
    """Long.parseLong-like: an optional sign and decimal digits (Unicode digits too, as Character.digit)."""
    body = text[1:] if text[:1] in "+-" else text
    if not body or not all(c.isdecimal() for c in body):
        return None
    return int(text)


def _accepts(spec: ConfigType) -> str:
    if spec.kind in _RANGES:
        lo, hi = _RANGES[spec.kind]
        java = {"INT": "int", "SHORT": "short", "LONG": "long"}[spec.kind]
        parse = {"INT": "Integer.parseInt", "SHORT": "Short.parseShort", "LONG": "Long.parseLong"}[spec.kind]
        if spec.at_least is None and spec.at_most is None:
            which = f"a whole number (a Java {java}, {lo} to {hi})"
        else:
            which = f"a whole number from {spec.at_least if spec.at_least is not None else lo} to {spec.at_most or hi}"
        return f"{which}: digits with an optional sign, no unit, '_' or '.' ({parse})"
    if spec.kind == "DOUBLE":
        bounds = f" from {spec.at_least} to {spec.at_most}" if spec.at_least is not None else ""
        return f"a decimal number{bounds} (Double.parseDouble)"
    if spec.kind == "BOOLEAN":
        return "true or false (in any letter case), nothing else"
    if spec.kind == "LIST" and spec.one_of:
        return f"a comma-separated list of {', '.join(spec.one_of)} (exactly so, letter case included)"
    if spec.one_of:
        return f"one of {', '.join(spec.one_of)} (exactly so, letter case included)"
    return "any text"


def _unit_hint(key: str, raw: str, spec: ConfigType) -> tuple[str | None, str | None]:
    """'7d' for a .ms key: '7d is 604800000 ms' and the number to write."""
    m = _UNIT_SUFFIX.match(raw)
    if not m or spec.kind not in _RANGES:
        return None, None
    n, unit = int(m.group(1)), m.group(2).lower()
    key_unit = key.rsplit(".", 1)[-1]
    if key_unit in _KEY_UNIT_MS and unit in _TIME_UNITS_MS:
        ms = n * _TIME_UNITS_MS[unit]
        if ms % _KEY_UNIT_MS[key_unit] == 0:
            value = ms // _KEY_UNIT_MS[key_unit]
            return (
                f"{raw.strip()} is {value} {key_unit}: Kafka takes a number of {key_unit} here, no unit",
                str(value),
            )
        return f"Kafka takes a whole number of {key_unit} here, no unit", None
    if unit in _BYTE_UNITS and ("bytes" in key or key.endswith(".size")):
        value = n * _BYTE_UNITS[unit]
        if unit.endswith("ib"):
            return f"{raw.strip()} is {value} bytes: Kafka takes a number of bytes here, no unit", str(value)
        binary = n * _BYTE_UNITS[unit[0] + "ib"]
        return (
            f"{raw.strip()} is {value} bytes ({n} {unit[0].upper()}iB: {binary}): Kafka takes a number of bytes "
            "here, no unit",
            None,
        )
    return None, None


def check_value(key: str, raw: str, spec: ConfigType) -> tuple[object, BadValue | None]:
    """Parse ``raw`` as Kafka's ConfigDef does for ``spec``: (the value, None) or (None, why Kafka refuses it)."""
    trimmed = raw.strip(_JAVA_SPACE)

    def bad(
        message: str, shown: str = raw, hint: str | None = None, suggested: str | None = None
    ) -> tuple[None, BadValue]:
        err = f"Invalid value {shown} for configuration {key}: {message}"
        return None, BadValue(key, raw, err, _accepts(spec), hint, suggested)

    value: object
    if spec.kind in _RANGES:
        n = _java_long(trimmed)
        lo, hi = _RANGES[spec.kind]
        if n is None or not lo <= n <= hi:
            hint, suggested = _unit_hint(key, raw, spec)
            if hint is None and "_" in trimmed and re.fullmatch(r"[+-]?\d[\d_]*\d", trimmed):
                suggested = trimmed.replace("_", "")
                hint = f"Java reads no '_' in numbers: write {suggested}"
            elif n is not None:
                hint = f"{trimmed} does not fit in a Java {spec.kind.lower()} (from {lo} to {hi})"
            return bad(f"Not a number of type {spec.kind}", hint=hint, suggested=suggested)
        value = n
    elif spec.kind == "DOUBLE":
        if not _JAVA_DOUBLE.match(trimmed):
            return bad("Not a number of type DOUBLE")
        t = trimmed.rstrip("fFdD") if not trimmed.endswith(("NaN", "Infinity")) else trimmed
        value = float.fromhex(t) if "x" in t.lower() else float(t.replace("Infinity", "inf"))
    elif spec.kind == "BOOLEAN":
        if trimmed.lower() not in ("true", "false"):
            meant = _BOOL_WORDS.get(trimmed.lower())
            hint = f"Kafka reads only true or false: for {trimmed!r} write {meant}" if meant else None
            return bad("Expected value to be either true or false", hint=hint, suggested=meant)
        value = trimmed.lower() == "true"
    elif spec.kind == "LIST":
        items = re.split(r"\s*,\s*", trimmed) if trimmed else []
        for item in items:
            if spec.one_of and item not in spec.one_of:
                closest = [_closest(i, spec.one_of) or i for i in items if i]
                ok = all(m in spec.one_of for m in closest)
                hint = f"{item!r} is not one of them; did you mean {','.join(closest)}?" if ok else None
                return bad(
                    f"String must be one of: {', '.join(spec.one_of)}",
                    item,
                    hint,
                    ",".join(closest) if ok else None,
                )
        value = items
    else:
        if spec.one_of and trimmed not in spec.one_of:
            meant = _closest(trimmed, spec.one_of)
            hint = f"did you mean {meant}?" if meant else None
            return bad(f"String must be one of: {', '.join(spec.one_of)}", trimmed, hint, meant)
        value = trimmed
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        shown = str(value)
        if spec.at_least is not None and value < spec.at_least:
            return bad(f"Value must be at least {spec.at_least}", shown=shown)
        if spec.at_most is not None and value > spec.at_most:
            return bad(f"Value must be no more than {spec.at_most}", shown=shown)
    return value, None


def canonical(value: object) -> str:
    """A parsed value as kafka-ops keeps it (the string the rest of kafka-ops parses)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ",".join(value)
    return str(value)


@slotted(frozen=True)
class ConfigProblem:
    """A value the broker refuses (server.properties: it does not start; a topic override: it cannot exist), or a
    log.dirs entry the broker refuses at start."""

    kind: str  # "server" | "topic" | "log_dirs_duplicate" | "log_dir_file"
    source: str | None  # the file
    line: int | None
    key: str
    value: str
    topic: str | None = None
    bad: BadValue | None = None
    paths: tuple[str, ...] = ()  # log.dirs entries concerned

    @property
    def stops_the_start(self) -> bool:
        """Whether the broker exits at start over it (CONF001 reports it, the next-start plan follows it): a
        server.properties value that KafkaConfig.fromProps refuses (ConfigException), or a log dir listed twice
        (LogManager.createAndValidateLogDirs: KafkaException 'Duplicate log directory found', not an IOException).
        A log.dirs entry that is a file only takes that entry offline."""
        return (self.kind == "server" and self.bad is not None) or self.kind == "log_dirs_duplicate"


def properties_lines(text: str) -> dict[str, int]:
    """The line number (1-based) where each key of a Java properties text is set (the last time, as Java)."""
    from kafka_ops.engine.checkpoints import _split_property

    lines: dict[str, int] = {}
    logical, start = "", 0
    for n, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip() if not logical else raw.lstrip()
        if not logical and (not line or line[0] in "#!"):
            continue
        if not logical:
            start = n
        if line.endswith("\\") and not line.endswith("\\\\"):
            logical += line[:-1]
            continue
        logical += line
        lines[_split_property(logical)[0]] = start
        logical = ""
    if logical:
        lines[_split_property(logical)[0]] = start
    return lines


class Properties(dict[str, str]):
    """server.properties as read, with the line each key is set on (for findings that name the line)."""

    lines: dict[str, int]
    path: str | None

    def __init__(self, values: dict[str, str], lines: dict[str, int] | None = None, path: str | None = None):
        super().__init__(values)
        self.lines = lines or {}
        self.path = path


class TopicOverrides(dict[str, dict[str, str]]):
    """Per-topic overrides as read from --topic-configs, with the line of each (topic, key) when known."""

    lines: dict[tuple[str, str], int]

    def __init__(self, values: dict[str, dict[str, str]], lines: dict[tuple[str, str], int] | None = None):
        super().__init__(values)
        self.lines = lines or {}


@slotted
class TopicConfig:
    topic: str
    values: dict[str, str]
    sources: dict[str, str]  # property -> "default" | "server.properties" | "topic"
    # overrides (and server defaults) Kafka refuses, left out of ``values``: CONF001 reports them
    invalid: dict[str, str] = field(default_factory=dict)
    # cleanup.policy and numbers parsed once: the checks ask for them several times per partition
    _policy: frozenset[str] | None = field(default=None, init=False, repr=False, compare=False)
    _ints: dict[str, int] = field(default_factory=dict, init=False, repr=False, compare=False)

    def int(self, key: str) -> int:
        value = self._ints.get(key)
        if value is None:
            try:
                value = int(self.values[key])
            except ValueError:
                # a value the broker would reject at startup: compute with Kafka's default and say so
                self.invalid[key] = self.values[key]
                value = int(TOPIC_DEFAULTS[key])
            self._ints[key] = value
        return value

    # the properties below read int()'s and _policies' caches themselves: the audit asks them ~50 times per
    # partition, and a second Python call per read was a few percent of its per-partition work
    @property
    def retention_ms(self) -> builtins.int:
        value = self._ints.get("retention.ms")
        return value if value is not None else self.int("retention.ms")

    @property
    def retention_bytes(self) -> builtins.int:
        value = self._ints.get("retention.bytes")
        return value if value is not None else self.int("retention.bytes")

    @property
    def _policies(self) -> frozenset[str]:
        policy = self._policy
        if policy is None:
            policy = self._policy = frozenset(
                p.strip()
                for p in self.values["cleanup.policy"].replace("[", "").replace("]", "").split(",")
                if p.strip()
            )
        return policy

    @property
    def cleanup_policy(self) -> set[str]:
        return set(self._policies)

    @property
    def compacted(self) -> bool:
        policy = self._policy
        return "compact" in (policy if policy is not None else self._policies)

    @property
    def deletes(self) -> bool:
        policy = self._policy
        return "delete" in (policy if policy is not None else self._policies)

    @property
    def segment_index_bytes(self) -> builtins.int:
        value = self._ints.get("segment.index.bytes")
        return value if value is not None else self.int("segment.index.bytes")

    def to_dict(self) -> dict[str, object]:
        return {"topic": self.topic, "values": self.values, "sources": self.sources}


# server_value's answers by (property, value as written): check_value and canonical are pure functions of them,
# and the audit asks a few properties per partition (log.retention.check.interval.ms, ...), ~1.4 µs a parse
_SERVER_VALUES: dict[tuple[str, str], str | None] = {}


# the broker configs the log cleaner is rebuilt with when they change dynamically (object LogCleaner's
# ReconfigurableConfigs, LogCleaner.scala@2.8.2 and 3.x; ``cleanerConfig`` takes maxMessageSize from
# message.max.bytes): a dynamic value of one of them is what the cleaner runs with
CLEANER_DYNAMIC = frozenset({
    "log.cleaner.threads", "log.cleaner.dedupe.buffer.size", "log.cleaner.io.buffer.load.factor",
    "log.cleaner.io.buffer.size", "message.max.bytes", "log.cleaner.io.max.bytes.per.second",
    "log.cleaner.backoff.ms",
})  # fmt: skip


@slotted
class Configs:
    server: dict[str, str] = field(default_factory=dict)
    topics: dict[str, dict[str, str]] = field(default_factory=dict)
    server_source: str | None = None
    topics_source: str | None = None
    topics_label: str = "topic"  # what a topic's own value is called in messages ("cluster": asked from it)
    # KRaft dynamic broker configs (the metadata log's ConfigRecords of BROKER resources), highest precedence
    # first: (label, {property: value}) for this node's, then the cluster default's (facts.kraft_configs)
    dynamic: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    # where each topic's overrides came from when they are not all from one place (the metadata log: the offset
    # of the ConfigRecord that last changed them), topic -> label; topics_origin: what the others are said to use
    topic_origins: dict[str, str] = field(default_factory=dict)
    topics_origin: str = "broker defaults"
    # why no topic override was read at all (ZooKeeper mode without --bootstrap-server / --topic-configs): said
    # next to every prediction a topic config decides; None when topic configs were read
    assumed: str | None = None

    def origin(self, topic: str) -> str:
        """Where ``topic``'s configs come from: "metadata log at offset N", "cluster", "file" or "broker defaults"."""
        found = self.topic_origins.get(topic)
        if found is not None:
            return found
        if topic in self.topics and self.topics_origin != "broker defaults":
            return self.topics_origin
        return "broker defaults"

    def server_value(self, prop: str) -> str | None:
        """A server.properties value as Kafka parses it, or None when unset or refused (CONF001 says so)."""
        raw = self.server.get(prop)
        spec = SERVER_CONFIG.get(prop)
        if raw is None or spec is None:
            return raw
        try:
            return _SERVER_VALUES[(prop, raw)]
        except KeyError:
            if len(_SERVER_VALUES) >= 4096:  # a process that audits many hosts (the fleet job): kept bounded
                _SERVER_VALUES.clear()
            value, bad = check_value(prop, raw, spec)
            out = _SERVER_VALUES[(prop, raw)] = None if bad else canonical(value)
            return out

    def broker_default(self, key: str) -> tuple[str, str]:
        # a dynamic broker config (KRaft: node, then cluster default) takes the place of server.properties: only
        # the first synonym can be set dynamically (DynamicLogConfig.ReconfigurableConfigs = the values of
        # ServerTopicConfigSynonyms.TOPIC_CONFIG_SYNONYMS: log.retention.ms, never .hours or .minutes; any other
        # is dropped, "Non-dynamic configs ... will be ignored", DynamicBrokerConfig.fromPersistentProps), and it
        # drops its static synonyms (overrideProps -> brokerConfigSynonyms); a value the broker's ConfigDef refuses
        # is ignored too (removeInvalidConfigs). DynamicLogConfig.reconfigure then makes them the logs' defaults
        # (apache/kafka 3.9.0, core/src/main/scala/kafka/server/DynamicBrokerConfig.scala)
        synonyms = _SYNONYMS.get(key, [])
        if synonyms and self.dynamic:
            prop = synonyms[0]
            spec = SERVER_CONFIG.get(prop)
            for label, values in self.dynamic:
                raw = values.get(prop)
                if raw is None:
                    continue
                parsed, bad = check_value(prop, raw, spec) if spec else (raw, None)
                if bad is None:
                    return canonical(parsed), label
        for prop in synonyms:
            raw = self.server_value(prop)
            if raw is not None:  # a refused value is skipped, as if unset: the broker does not start with it
                unit = prop.rsplit(".", 1)[-1]
                if unit in _UNIT_MS:
                    return str(int(raw) * _UNIT_MS[unit]), "server.properties"
                return raw, "server.properties"
        return TOPIC_DEFAULTS[key], "default"

    def for_topic(self, topic: str) -> TopicConfig:
        values: dict[str, str] = {}
        sources: dict[str, str] = {}
        invalid: dict[str, str] = {}
        for key in TOPIC_DEFAULTS:
            values[key], sources[key] = self.broker_default(key)
        for key, v in INTERNAL_TOPICS.get(topic, {}).items():
            values[key], sources[key] = v, "internal topic default"
        segment_bytes = self.server_value("offsets.topic.segment.bytes")
        if topic == "__consumer_offsets" and segment_bytes is not None:
            values["segment.bytes"], sources["segment.bytes"] = segment_bytes, "server.properties"
        for key, v in self.topics.get(topic, {}).items():
            spec = TOPIC_CONFIG.get(key)
            parsed, bad = check_value(key, _unbracket(v), spec) if spec else (v, None)
            if bad:  # the cluster cannot hold it (AlterConfigs refuses it): the broker default applies
                invalid[key] = v
                continue
            values[key], sources[key] = canonical(parsed) if spec else v, self.topics_label
        return TopicConfig(topic, values, sources, invalid)

    def process_roles(self) -> list[str]:
        """process.roles of server.properties, sorted (KRaft: broker, controller or both; empty: ZooKeeper mode
        or not set)."""
        return sorted({r.strip() for r in self.server.get("process.roles", "").split(",") if r.strip()})

    def server_int(self, key: str, default: int) -> int:
        try:
            return int(self.server_value(key) or default)
        except ValueError:
            return default

    def broker_int(self, key: str, default: int) -> int:
        """A broker config the log cleaner reads (``CLEANER_DYNAMIC``) as the running broker has it: the node's
        dynamic config, then the cluster default (``dynamic``: KRaft's metadata log or ZooKeeper's
        /config/brokers), then server.properties; a dynamic value that is not an int is ignored, as
        DynamicBrokerConfig drops what the broker's ConfigDef refuses."""
        if key in CLEANER_DYNAMIC:
            for _label, values in self.dynamic:
                raw = values.get(key)
                if raw is not None and raw.strip().lstrip("-").isdigit():
                    return int(raw)
        return self.server_int(key, default)

    @property
    def log_dirs_raw(self) -> list[str]:
        """log.dirs (or log.dir) as written, split as KafkaConfig does (CoreUtils.parseCsvList)."""
        raw = self.server.get("log.dirs") or self.server.get("log.dir") or ""
        return [d for d in re.split(r"\s*,\s*", raw.strip(_JAVA_SPACE)) if d]

    @property
    def log_dirs(self) -> list[str]:
        """The log dirs the broker can use: each directory once (by canonical path, as LogManager compares them),
        without entries that are files (CONF001 reports both)."""
        seen: set[str] = set()
        out = []
        for d in self.log_dirs_raw:
            real = os.path.realpath(d)
            if real in seen or (os.path.exists(d) and not os.path.isdir(d)):
                continue
            seen.add(real)
            out.append(d)
        return out

    def problems(self) -> list[ConfigProblem]:
        """Everything in the configuration the broker refuses (CONF001), in file order."""
        out: list[ConfigProblem] = []
        lines = getattr(self.server, "lines", {})
        for key, raw in self.server.items():
            spec = SERVER_CONFIG.get(key)
            bad = check_value(key, raw, spec)[1] if spec else None
            if bad is not None:
                out.append(ConfigProblem("server", self.server_source, lines.get(key), key, raw, bad=bad))
        key = "log.dirs" if "log.dirs" in self.server else "log.dir"
        first: dict[str, str] = {}
        for d in self.log_dirs_raw:
            real = os.path.realpath(d)
            if os.path.exists(d) and not os.path.isdir(d):
                out.append(
                    ConfigProblem("log_dir_file", self.server_source, lines.get(key), key, d, paths=(d,))
                )
            elif real in first:
                out.append(ConfigProblem("log_dirs_duplicate", self.server_source, lines.get(key), key,
                                         self.server.get(key, ""), paths=(first[real], d)))  # fmt: skip
            else:
                first[real] = d
        out.sort(key=lambda p: p.line or 0)
        topic_lines = getattr(self.topics, "lines", {})
        for topic, overrides in self.topics.items():
            for key, v in overrides.items():
                spec = TOPIC_CONFIG.get(key)
                bad = check_value(key, _unbracket(v), spec)[1] if spec else None
                if bad is not None:
                    line = topic_lines.get((topic, key))
                    out.append(ConfigProblem("topic", self.topics_source, line, key, v, topic=topic, bad=bad))
        return out


def _unbracket(value: str) -> str:
    """'[compact,delete]': kafka-configs' --add-config syntax for a list, which files copied from it keep."""
    v = value.strip()
    return v[1:-1] if v.startswith("[") and v.endswith("]") else value


def read_server_properties(path: str) -> Properties:
    data = read_bytes(path, follow=True)  # a FIFO or device is refused, never waited on
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = data.decode("iso-8859-1")  # what Java's Properties.load(InputStream) reads
    return Properties(parse_properties(text), properties_lines(text), path)


# `kafka-configs --describe --all --entity-type topics`:
#   Dynamic configs for topic orders are:
#     retention.ms=86400000 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:retention.ms=86400000, ...}
# `kafka-configs --describe` (non --all):  "Configs for topic 'orders' are retention.ms=1,cleanup.policy=compact"
_DESCRIBE_HEAD = re.compile(r"^(?:All|Dynamic)? ?[Cc]onfigs for topic '?([^' ]+)'? are:?\s*(.*)$")
_DESCRIBE_ENTRY = re.compile(r"^\s+([a-z0-9.]+)=(.*?) sensitive=(?:true|false) synonyms=\{(.*)\}\s*$")


def parse_topic_configs(text: str, path: str = "<topic configs>") -> TopicOverrides:
    """Per-topic overrides from JSON ({topic: {key: value}}), YAML (same shape) or kafka-configs output, with the
    line of each override (exact for kafka-configs output, the first line naming it for JSON and YAML).

    From ``--describe --all`` output only values whose first synonym is a topic-level one
    (DYNAMIC_TOPIC_CONFIG) are overrides; the rest are broker defaults, taken from server.properties.
    """
    stripped = text.lstrip()
    if stripped.startswith("{"):
        try:
            doc = json.loads(text)
        except ValueError as exc:
            raise FormatError(path, f"not valid JSON: {exc}") from exc
        return _normalise(doc, path, text)
    if "onfigs for topic" in text:
        out: dict[str, dict[str, str]] = {}
        lines: dict[tuple[str, str], int] = {}
        topic = None
        for n, line in enumerate(text.splitlines(), start=1):
            m = _DESCRIBE_HEAD.match(line.strip()) if not line.startswith((" ", "\t")) else None
            if m:
                topic = m.group(1)
                out.setdefault(topic, {})
                inline = m.group(2).strip()
                if inline:
                    for kv in inline.split(","):
                        if "=" in kv:
                            k, v = kv.split("=", 1)
                            out[topic][k.strip()] = v.strip()
                            lines[(topic, k.strip())] = n
                continue
            e = _DESCRIBE_ENTRY.match(line)
            if e and topic:
                key, value, synonyms = e.groups()
                if synonyms.startswith("DYNAMIC_TOPIC_CONFIG"):
                    out[topic][key] = value
                    lines[(topic, key)] = n
        return TopicOverrides(out, lines)
    try:  # YAML: optional (pyyaml ships with ansible-core); a bare host uses JSON
        import yaml  # type: ignore[import-untyped]
    except ImportError as exc:
        raise FormatError(
            path, "not JSON or kafka-configs output, and PyYAML is not installed for YAML"
        ) from exc
    try:
        doc = yaml.safe_load(text)
    except Exception as exc:
        raise FormatError(path, f"not valid YAML: {str(exc).splitlines()[0]}") from exc
    return _normalise(doc, path, text)


def _text_value(v: object) -> str:
    """A JSON/YAML value as the text kafka-configs would have been given ([compact, delete] -> compact,delete)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, list):
        return ",".join(_text_value(x) for x in v)
    return str(v)


def _normalise(doc: object, path: str, text: str = "") -> TopicOverrides:
    if not isinstance(doc, dict) or not all(isinstance(v, dict) for v in doc.values()):
        raise FormatError(path, "expected a mapping of topic -> {config: value}")
    out = {str(t): {str(k): _text_value(v) for k, v in cfg.items()} for t, cfg in doc.items()}
    lines: dict[tuple[str, str], int] = {}
    rows = text.splitlines()
    for topic, cfg in out.items():
        start = next(
            (i for i, r in enumerate(rows) if re.search(rf"(^|[\s{{\"']){re.escape(topic)}[\"']?\s*:", r)), 0
        )
        for key in cfg:
            at = next(
                (
                    i
                    for i in range(start, len(rows))
                    if re.search(rf"[\s{{\"',]{re.escape(key)}[\"']?\s*:", rows[i])
                ),
                None,
            )
            if at is not None:
                lines[(topic, key)] = at + 1
    return TopicOverrides(out, lines)


def read_topic_configs(path: str) -> TopicOverrides:
    try:
        text = read_bytes(path, follow=True).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FormatError(path, "not UTF-8 text", exc.start) from exc
    return parse_topic_configs(text, path)


def parse_version(v: str | None) -> tuple[int, ...] | None:
    """'3.7.0', '2.2.1-cp1', 'kafka_2.13-3.7.0' -> (3, 7, 0)."""
    if not v:
        return None
    m = re.search(r"(\d+)\.(\d+)(?:\.(\d+))?", v.rsplit("-", 1)[-1] if "kafka_" in v else v)
    if not m:
        return None
    return tuple(int(x) for x in m.groups() if x is not None)


__all__ = [
    "Configs",
    "EngineError",
    "TopicConfig",
    "parse_topic_configs",
    "parse_version",
    "read_server_properties",
]
