"""Names inside a log dir and inside a partition dir, classified as the broker classifies them.

* Root: ``LogManager.loadLogs`` loads every sub-directory except ``remote-log-index-cache`` and the KRaft
  ``__cluster_metadata-0``, parsing each name with ``LocalLog.parseTopicPartitionName``: a name without
  ``-``, or a ``-delete``/``-future``/``-stray`` name that does not match its pattern, or a partition that is
  not an int, throws a ``KafkaException`` that fails broker start-up (it is not an IOException, so the dir is
  not merely taken offline). ``lost+found`` is the classic case. Files at the root are not loaded as logs.
* Partition dir: ``<20-digit base offset>.<suffix>`` (LogFileUtils.java), plus ``.deleted``/``.cleaned``/
  ``.swap`` leftovers (LogLoader.removeTempFilesAndCollectSwapFiles), ``leader-epoch-checkpoint``,
  ``partition.metadata``; KRaft snapshots ``<offset>-<epoch>.checkpoint`` (raft/.../snapshot/Snapshots.java).
"""

from __future__ import annotations

import re

from kafka_ops.engine.compat import slotted
from kafka_ops.engine.pickling import by_constructor

REMOTE_INDEX_CACHE = "remote-log-index-cache"  # RemoteIndexCache.DIR_NAME
METADATA_TOPIC = "__cluster_metadata"  # KafkaRaftServer.MetadataTopic
DELETE_SUFFIX = "-delete"
FUTURE_SUFFIX = "-future"
STRAY_SUFFIX = "-stray"
_SPECIAL = {
    DELETE_SUFFIX: re.compile(r"^(\S+)-(\S+)\.(\S+)-delete$"),
    FUTURE_SUFFIX: re.compile(r"^(\S+)-(\S+)\.(\S+)-future$"),
    STRAY_SUFFIX: re.compile(r"^(\S+)-(\S+)\.(\S+)-stray$"),
}
_JAVA_INT_MIN, _JAVA_INT_MAX = -(2**31), 2**31 - 1

SEGMENT_SUFFIXES = (".log", ".index", ".timeindex", ".txnindex", ".snapshot")
LEFTOVER_SUFFIXES = (".deleted", ".cleaned", ".swap")
_KRAFT_SNAPSHOT = re.compile(r"^(\d{20})-(\d{10})\.checkpoint(\.part|\.deleted)?$")


@by_constructor  # sent by the audit's workers (facts.pool)
@slotted(frozen=True)
class PartitionName:
    topic: str
    partition: int
    kind: str  # "log" | "delete" | "future" | "stray"


def parse_partition_dir(name: str) -> PartitionName | None:
    """``LocalLog.parseTopicPartitionName``; None where the broker would throw and refuse to start."""
    if not name or "-" not in name:
        return None
    kind = "log"
    base = name
    for suffix, pattern in _SPECIAL.items():
        if name.endswith(suffix):
            if not pattern.match(name):
                return None
            kind = suffix[1:]
            base = name[: name.rindex(".")]
            break
    i = base.rindex("-")
    topic, part = base[:i], base[i + 1 :]
    if not topic or not part:
        return None
    # Java Integer.parseInt: optional sign, ASCII digits, int range
    if not re.fullmatch(r"[+-]?[0-9]+", part):
        return None
    p = int(part)
    if not _JAVA_INT_MIN <= p <= _JAVA_INT_MAX:
        return None
    return PartitionName(topic, p, kind)


def is_loaded_by_broker(name: str) -> bool:
    """Whether ``LogManager.loadLogs`` loads (and therefore parses) this root sub-directory."""
    if name == REMOTE_INDEX_CACHE:
        return False
    parsed = parse_partition_dir(name)
    return not (parsed is not None and parsed.topic == METADATA_TOPIC)


@slotted(frozen=True)
class SegmentFileName:
    base_offset: int
    suffix: str  # ".log", ".index", ...
    leftover: str  # "" or ".deleted" / ".cleaned" / ".swap"


_SUFFIXES = frozenset(SEGMENT_SUFFIXES)


def parse_segment_file(name: str) -> SegmentFileName | None:
    """``<digits><suffix>[.deleted|.cleaned|.swap]``; on the audit's hot path, so no regex."""
    dot = name.find(".")
    if dot <= 0:
        return None
    digits = name[:dot]
    if not (digits.isascii() and digits.isdigit()):
        return None
    rest = name[dot:]
    if rest in _SUFFIXES:
        return SegmentFileName(int(digits), rest, "")
    for lo in LEFTOVER_SUFFIXES:
        if rest.endswith(lo) and rest[: -len(lo)] in _SUFFIXES:
            return SegmentFileName(int(digits), rest[: -len(lo)], lo)
    return None


def parse_kraft_snapshot(name: str) -> tuple[int, int, str] | None:
    """``<end offset>-<epoch>.checkpoint[.part|.deleted]`` -> (offset, epoch, state)."""
    m = _KRAFT_SNAPSHOT.match(name)
    if not m:
        return None
    return int(m.group(1)), int(m.group(2)), (m.group(3) or "").lstrip(".") or "complete"


def segment_file_name(base_offset: int, suffix: str) -> str:
    """``LogFileUtils.filenamePrefixFromOffset``: at least 20 digits, zero padded."""
    return f"{base_offset:020d}{suffix}"
