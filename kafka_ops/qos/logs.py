"""Consumer and service log lines: rebalance events, start offsets, and consumed offset ranges.

Kafka consumer lines (INFO), as the Java client writes them (Kafka's source, clients/.../consumer/internals/):

* ``Adding newly assigned partitions: t-0, t-1`` and ``Revoke previously assigned partitions t-0`` /
  ``Lost previously assigned partitions t-0`` (ConsumerRebalanceListenerInvoker.java; before 2.4 the
  ConsumerCoordinator wrote ``Setting newly assigned partitions [..]`` / ``Revoking previously assigned
  partitions [..]``);
* ``(Re-)joining group``, ``Request joining group due to: ..``, ``Successfully joined group with generation
  Generation{generationId=5, ..}``, ``Member .. sending LeaveGroup request ..`` (AbstractCoordinator.java);
* kafka-python's (``kafka.coordinator``, ``kafka.consumer.fetcher``; 3.x): ``Setting newly assigned partitions
  {TopicPartition(topic='t', partition=0)} for group g``, ``Revoking previously assigned partitions {..} for
  group g``, ``Group g lost membership; forcibly revoking {..}``, ``Successfully joined group g <Generation 2
  (member_id: ..)>``, ``Group g is rebalancing; rejoining.``, ``Leaving consumer group g (member ..)`` and
  ``Resetting offset for partition TopicPartition(..) to offset 0.``;
* ``Setting offset for partition t-0 to the committed offset FetchPosition{offset=120, ..}``
  (ConsumerUtils.refreshCommittedOffsets) and ``Resetting offset for partition t-0 to position
  FetchPosition{offset=0, ..}`` (SubscriptionState.maybeSeekUnvalidated, auto.offset.reset): where a consumer
  starts reading a partition.

Service lines (seed 004: "when committing I'm logging the minimum and maximum offset contained by the
committed and uploaded files per kafka partition") match ``--offset-pattern``, a regex with named groups
``partition`` (``topic-3`` or ``3``), ``first``, ``last`` and optionally ``topic`` and ``pod``. The default
takes lines such as ``uploaded partition=logs-3 offsets=1200-1299`` or ``committed topic=logs partition=3
offsets [1200..1299]``.

Each line's time comes from its start (``[2022-06-15 10:00:00,123]``, ``2022-06-15T10:00:00.123Z``, ...) or
the ``@timestamp``/``timestamp``/``time`` field of a JSON line; times without a zone are read in ``tz``
(UTC by default). The pod is the line's ``pod=NAME`` (or JSON ``pod``/``pod_name``/``host``), else the file
name without its extension (``kubectl logs`` writes one file per pod).
"""

from __future__ import annotations

import datetime as dt
import io
import json
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from zoneinfo import ZoneInfo

from kafka_ops.engine.errors import EngineError
from kafka_ops.engine.fileio import open_regular
from kafka_ops.units import iso

REVOKED, ASSIGNED, LOST, JOINING, JOINED, LEAVE, START, CONSUMED = (
    "revoked", "assigned", "lost", "joining", "joined", "leave", "start", "consumed",
)  # fmt: skip
REBALANCE_KINDS = (REVOKED, ASSIGNED, LOST, JOINING, JOINED, LEAVE, START)

DEFAULT_OFFSET_PATTERN = (
    r"\b(?:consumed|committed|uploaded|rotated|wrote|written|processed|flushed)\b.*?"
    r"\bpartition[=: ]+(?P<partition>[^\s,;]+).*?"
    r"\boffsets?[=: ]+\[?(?P<first>\d+)\s*(?:-|\.\.|,|to)\s*(?P<last>\d+)"
)

_TPS = r"\[?(?P<tps>[^\]]*?)\]?"
_KP_SET = r"(?P<tps>set\(\)|\{.*?\})"  # kafka-python: a Python set of TopicPartition(topic='t', partition=0)
_RULES: list[tuple[str, re.Pattern[str]]] = [
    # kafka-python (ConsumerCoordinator, eager protocol), before the Java forms that would also match them
    (ASSIGNED, re.compile(r"Setting newly assigned partitions " + _KP_SET + r" for group ")),
    (REVOKED, re.compile(r"Revoking previously assigned partitions " + _KP_SET + r" for group ")),
    (LOST, re.compile(r"Group \S+ lost membership; forcibly revoking " + _KP_SET)),
    (ASSIGNED, re.compile(r"(?:Adding|Setting) newly assigned partitions:?\s*" + _TPS + r"\s*$")),
    (REVOKED, re.compile(r"Revok(?:e|ing) previously assigned partitions:?\s*" + _TPS + r"\s*$")),
    (LOST, re.compile(r"Lost previously assigned partitions:?\s*" + _TPS + r"\s*$")),
    (
        JOINED,
        re.compile(r"Successfully joined group with generation (?:Generation\{generationId=)?(?P<gen>-?\d+)"),
    ),
    (JOINED, re.compile(r"Successfully joined group \S+ <Generation (?P<gen>-?\d+)")),  # kafka-python
    (
        JOINING,
        re.compile(
            r"\(Re-\)joining group|Request joining group due to: (?P<reason>.*)$"
            r"|Group \S+ is rebalancing; rejoining"  # kafka-python's heartbeat: REBALANCE_IN_PROGRESS
        ),
    ),
    (LEAVE, re.compile(r"sending LeaveGroup request to coordinator|Leaving consumer group \S+ \(member")),
    (
        START,
        re.compile(
            r"(?:Setting offset for partition (?P<tp>\S+) to the committed offset|"
            r"Resetting offset for partition (?P<tp2>\S+) to (?:position|offset))\s*"
            r"(?:FetchPosition\{offset=)?(?P<offset>\d+)"
        ),
    ),
    (
        START,  # kafka-python (Fetcher: auto.offset.reset)
        re.compile(
            r"Resetting offset for partition TopicPartition\(topic='(?P<kt>[^']+)', partition=(?P<kp>\d+)\) "
            r"to offset (?P<offset>\d+)"
        ),
    ),
]
_KP_TP = re.compile(r"TopicPartition\(topic='(?P<topic>[^']+)', partition=(?P<partition>\d+)\)")
_LOGGER_SUFFIX = re.compile(r"\s+\([\w.$-]+\)\s*$")  # log4j's " (org.apache.kafka...)" at the end
_TIME = re.compile(
    r"^\W{0,2}(?P<d>\d{4}-\d{2}-\d{2})[T ](?P<t>\d{2}:\d{2}:\d{2})(?:[.,](?P<f>\d{1,9}))?"
    r"\s*(?P<z>Z|[+-]\d{2}:?\d{2}|UTC)?"
)
_POD = re.compile(r"\bpod[=:]\s*\"?(?P<pod>[\w.-]+)")


class LogFormatError(ValueError):
    pass


@dataclass(slots=True)
class LogEvent:
    time_ms: int
    pod: str
    kind: str
    partitions: list[tuple[str, int]] = field(default_factory=list)
    offset: int | None = None  # start: the offset the consumer starts at
    first: int | None = None  # consumed: the range
    last: int | None = None
    detail: str = ""
    file: str = ""
    line: int = 0

    def to_dict(self) -> dict[str, object]:
        return {
            "time": iso(self.time_ms, "z_ms"),
            "pod": self.pod,
            "kind": self.kind,
            "partitions": [f"{t}-{p}" for t, p in self.partitions],
            "offset": self.offset,
            "first_offset": self.first,
            "last_offset": self.last,
            "detail": self.detail,
            "file": self.file,
            "line": self.line,
        }


def parse_tp(text: str) -> tuple[str, int] | None:
    topic, sep, part = text.strip().strip(",;").rpartition("-")
    if not sep or not topic or not part.isdigit():
        return None
    return topic, int(part)


def _tps(text: str) -> list[tuple[str, int]]:
    if "TopicPartition(" in text or text == "set()":  # kafka-python's repr of a set of TopicPartition
        return sorted((m["topic"], int(m["partition"])) for m in _KP_TP.finditer(text))
    return [tp for tp in (parse_tp(x) for x in text.split(",")) if tp is not None]


def _line_time(text: str, tz: dt.tzinfo) -> int | None:
    m = _TIME.match(text)
    if not m:
        return None
    frac = (m.group("f") or "0")[:6].ljust(6, "0")
    t = dt.datetime.fromisoformat(f"{m.group('d')}T{m.group('t')}.{frac}")
    z = m.group("z")
    if z in ("Z", "UTC"):
        t = t.replace(tzinfo=dt.UTC)
    elif z:
        t = dt.datetime.fromisoformat(f"{m.group('d')}T{m.group('t')}.{frac}{z[:3]}:{z[-2:]}")
    else:
        t = t.replace(tzinfo=tz)
    return int(t.timestamp() * 1000)


def _json_line(text: str, tz: dt.tzinfo) -> tuple[int | None, str, str | None]:
    try:
        doc = json.loads(text)
    except ValueError:
        return None, text, None
    if not isinstance(doc, dict):
        return None, text, None
    msg = str(doc.get("message") or doc.get("msg") or doc.get("log") or "")
    when = doc.get("@timestamp") or doc.get("timestamp") or doc.get("time") or doc.get("ts")
    ms = None
    if isinstance(when, int | float):
        ms = int(when if when > 1e11 else when * 1000)
    elif isinstance(when, str):
        ms = _line_time(when, tz)
    pod = doc.get("pod") or doc.get("pod_name") or doc.get("host")
    return ms, msg, str(pod) if pod else None


def parse_lines(
    lines: Iterable[str],
    file: str,
    offset_pattern: re.Pattern[str] | None = None,
    default_topic: str | None = None,
    tz: dt.tzinfo = dt.UTC,
) -> list[LogEvent]:
    pattern = offset_pattern or re.compile(DEFAULT_OFFSET_PATTERN)
    file_pod = os.path.splitext(os.path.basename(file))[0]
    events: list[LogEvent] = []
    last_ms: int | None = None
    for no, raw in enumerate(lines, 1):
        text = raw.rstrip("\n")
        if not text.strip():
            continue
        pod = None
        if text.lstrip().startswith("{"):
            ms, msg, pod = _json_line(text, tz)
        else:
            ms, msg = _line_time(text, tz), text
        if ms is None:
            ms = last_ms  # a continuation line (stack trace) belongs to the previous time
        if ms is None:
            continue
        last_ms = ms
        msg = _LOGGER_SUFFIX.sub("", msg)
        m_pod = _POD.search(msg)
        pod = pod or (m_pod.group("pod") if m_pod else None)
        ev = _event(msg, pattern, default_topic)
        if ev is None:
            continue
        ev.time_ms = ms
        ev.pod = pod or ev.pod or file_pod
        ev.file, ev.line = file, no
        events.append(ev)
    return events


def _event(msg: str, pattern: re.Pattern[str], default_topic: str | None) -> LogEvent | None:
    m = pattern.search(msg)
    if m is not None:
        groups = m.groupdict()
        tp = parse_tp(groups["partition"])
        if tp is None and groups["partition"].isdigit():
            topic = groups.get("topic") or _topic_in(msg) or default_topic
            tp = (topic, int(groups["partition"])) if topic else None
        if tp is None:
            return None
        first, last = int(groups["first"]), int(groups["last"])
        return LogEvent(
            0, groups.get("pod") or "", CONSUMED, [tp], first=min(first, last), last=max(first, last)
        )
    for kind, rule in _RULES:
        m = rule.search(msg)
        if m is None:
            continue
        g = m.groupdict()
        if kind == START:
            kp = (g["kt"], int(g["kp"])) if g.get("kt") and g.get("kp") else None
            tp = kp or parse_tp(g.get("tp") or g.get("tp2") or "")
            return LogEvent(0, "", kind, [tp] if tp else [], offset=int(g["offset"]), detail=msg.strip())
        if kind in (ASSIGNED, REVOKED, LOST):
            tps = _tps(g["tps"])
            if not tps and g["tps"] == "set()":
                return None  # kafka-python revokes an empty set before every first join: no event
            return LogEvent(0, "", kind, tps, detail=msg.strip())
        return LogEvent(0, "", kind, detail=msg.strip())
    return None


_TOPIC = re.compile(r"\btopic[=: ]+\"?(?P<topic>[\w.-]+)")


def _topic_in(msg: str) -> str | None:
    m = _TOPIC.search(msg)
    return m.group("topic") if m else None


def read_logs(
    paths: Iterable[str],
    offset_pattern: str | None = None,
    default_topic: str | None = None,
    tz: str = "UTC",
) -> list[LogEvent]:
    """Every event of every file, in time order (file order for equal times). Raises ``LogFormatError``."""
    try:
        zone: dt.tzinfo = dt.UTC if tz.upper() == "UTC" else ZoneInfo(tz)
    except Exception as exc:
        raise LogFormatError(f"unknown time zone {tz!r}") from exc
    try:
        pattern = re.compile(offset_pattern) if offset_pattern else None
    except re.error as exc:
        raise LogFormatError(f"bad --offset-pattern: {exc}") from exc
    if pattern is not None and not {"partition", "first", "last"} <= set(pattern.groupindex):
        raise LogFormatError("--offset-pattern needs the named groups partition, first and last")
    events: list[LogEvent] = []
    for path in paths:
        try:
            with io.TextIOWrapper(open_regular(path, follow=True), encoding="utf-8", errors="replace") as f:
                events.extend(parse_lines(f, path, pattern, default_topic, zone))
        except EngineError as exc:
            raise LogFormatError(str(exc)) from exc
        except OSError as exc:
            raise LogFormatError(
                f"{path}: cannot read: {(exc.strerror or type(exc).__name__).lower()}"
            ) from exc
    events.sort(key=lambda e: e.time_ms)  # stable: file order within the same millisecond
    return events
