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

import json
import re
from dataclasses import dataclass, field

from kafka_ops.engine.checkpoints import parse_properties
from kafka_ops.engine.errors import EngineError, FormatError, os_error

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


@dataclass(slots=True)
class TopicConfig:
    topic: str
    values: dict[str, str]
    sources: dict[str, str]  # property -> "default" | "server.properties" | "topic"
    invalid: dict[str, str] = field(default_factory=dict)  # properties whose value is not a number
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

    @property
    def retention_ms(self) -> int:
        return self.int("retention.ms")

    @property
    def retention_bytes(self) -> int:
        return self.int("retention.bytes")

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
        return "compact" in self._policies

    @property
    def deletes(self) -> bool:
        return "delete" in self._policies

    @property
    def segment_index_bytes(self) -> int:
        return self.int("segment.index.bytes")

    def to_dict(self) -> dict[str, object]:
        return {"topic": self.topic, "values": self.values, "sources": self.sources}


@dataclass(slots=True)
class Configs:
    server: dict[str, str] = field(default_factory=dict)
    topics: dict[str, dict[str, str]] = field(default_factory=dict)
    server_source: str | None = None
    topics_source: str | None = None

    def broker_default(self, key: str) -> tuple[str, str]:
        for prop in _SYNONYMS.get(key, []):
            if prop in self.server:
                raw = self.server[prop].strip()
                unit = prop.rsplit(".", 1)[-1]
                if unit in _UNIT_MS:
                    return str(int(raw) * _UNIT_MS[unit]), "server.properties"
                return raw, "server.properties"
        return TOPIC_DEFAULTS[key], "default"

    def for_topic(self, topic: str) -> TopicConfig:
        values: dict[str, str] = {}
        sources: dict[str, str] = {}
        for key in TOPIC_DEFAULTS:
            values[key], sources[key] = self.broker_default(key)
        for key, v in INTERNAL_TOPICS.get(topic, {}).items():
            values[key], sources[key] = v, "internal topic default"
        if topic == "__consumer_offsets" and "offsets.topic.segment.bytes" in self.server:
            values["segment.bytes"], sources["segment.bytes"] = (
                self.server["offsets.topic.segment.bytes"],
                "server.properties",
            )
        for key, v in self.topics.get(topic, {}).items():
            values[key], sources[key] = v, "topic"
        return TopicConfig(topic, values, sources)

    def server_int(self, key: str, default: int) -> int:
        try:
            return int(self.server.get(key, default))
        except ValueError:
            return default

    @property
    def log_dirs(self) -> list[str]:
        raw = self.server.get("log.dirs") or self.server.get("log.dir") or ""
        return [d.strip() for d in raw.split(",") if d.strip()]


def read_server_properties(path: str) -> dict[str, str]:
    try:
        with open(path, encoding="utf-8") as f:
            return parse_properties(f.read())
    except OSError as exc:
        raise os_error(path, exc) from exc
    except UnicodeDecodeError as exc:
        raise FormatError(path, "not UTF-8 text", exc.start) from exc


# `kafka-configs --describe --all --entity-type topics`:
#   Dynamic configs for topic orders are:
#     retention.ms=86400000 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:retention.ms=86400000, ...}
# `kafka-configs --describe` (non --all):  "Configs for topic 'orders' are retention.ms=1,cleanup.policy=compact"
_DESCRIBE_HEAD = re.compile(r"^(?:All|Dynamic)? ?[Cc]onfigs for topic '?([^' ]+)'? are:?\s*(.*)$")
_DESCRIBE_ENTRY = re.compile(r"^\s+([a-z0-9.]+)=(.*?) sensitive=(?:true|false) synonyms=\{(.*)\}\s*$")


def parse_topic_configs(text: str, path: str = "<topic configs>") -> dict[str, dict[str, str]]:
    """Per-topic overrides from JSON ({topic: {key: value}}), YAML (same shape) or kafka-configs output.

    From ``--describe --all`` output only values whose first synonym is a topic-level one
    (DYNAMIC_TOPIC_CONFIG) are overrides; the rest are broker defaults, taken from server.properties.
    """
    stripped = text.lstrip()
    if stripped.startswith("{"):
        try:
            doc = json.loads(text)
        except ValueError as exc:
            raise FormatError(path, f"not valid JSON: {exc}") from exc
        return _normalise(doc, path)
    if "onfigs for topic" in text:
        out: dict[str, dict[str, str]] = {}
        topic = None
        for line in text.splitlines():
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
                continue
            e = _DESCRIBE_ENTRY.match(line)
            if e and topic:
                key, value, synonyms = e.groups()
                if synonyms.startswith("DYNAMIC_TOPIC_CONFIG"):
                    out[topic][key] = value
        return out
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
    return _normalise(doc, path)


def _normalise(doc: object, path: str) -> dict[str, dict[str, str]]:
    if not isinstance(doc, dict) or not all(isinstance(v, dict) for v in doc.values()):
        raise FormatError(path, "expected a mapping of topic -> {config: value}")
    return {str(t): {str(k): str(v) for k, v in cfg.items()} for t, cfg in doc.items()}


def read_topic_configs(path: str) -> dict[str, dict[str, str]]:
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as exc:
        raise os_error(path, exc) from exc
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
