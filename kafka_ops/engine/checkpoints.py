"""Text checkpoints and small metadata files of a log dir.

* Offset checkpoints (recovery-point, log-start, replication, cleaner) and ``leader-epoch-checkpoint``:
  ``<version>\\n<count>\\n<entries>`` (server-common/.../CheckpointFile.java; OffsetCheckpointFile.java,
  LeaderEpochCheckpointFile.java). Errors mirror the broker's: "Unrecognised version", "Expected N entries
  but found only M", malformed line.
* ``meta.properties``: Java properties (MetaProperties.java): version, cluster.id, broker.id (v0, ZK) or
  node.id (v1, KRaft), directory.id.
* ``partition.metadata``: ``version: 0\\ntopic_id: <uuid>`` (PartitionMetadataFile.java).
* ``.kafka_cleanshutdown``: empty up to 3.6; since 3.7 (KAFKA-15582) JSON ``{"version":0,"brokerEpoch":N}``
  (CleanShutdownFileHandler.java: unknown fields ignored, any parse error reads as "no epoch").
* ``quorum-state`` (KRaft): JSON (FileQuorumStateStore.java / QuorumStateData).
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Callable
from dataclasses import field
from typing import Any, TypeVar

from kafka_ops.engine.compat import slotted
from kafka_ops.engine.errors import EngineError, FormatError
from kafka_ops.engine.fileio import read_bytes

RECOVERY_POINT = "recovery-point-offset-checkpoint"
LOG_START = "log-start-offset-checkpoint"
REPLICATION = "replication-offset-checkpoint"
CLEANER = "cleaner-offset-checkpoint"
LEADER_EPOCH = "leader-epoch-checkpoint"
META_PROPERTIES = "meta.properties"
PARTITION_METADATA = "partition.metadata"
CLEAN_SHUTDOWN = ".kafka_cleanshutdown"
QUORUM_STATE = "quorum-state"
OFFSET_CHECKPOINTS = (RECOVERY_POINT, LOG_START, REPLICATION, CLEANER)


def _read_text(path: str) -> str:
    raw = read_bytes(path)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FormatError(path, "not UTF-8 text", exc.start) from exc


_JAVA_INT = re.compile(r"[+-]?[0-9]+")
# Java's "\\s" (ASCII whitespace only): OffsetCheckpointFile / LeaderEpochCheckpointFile split entry lines
# with Pattern.compile("\\s+").split(line), which keeps a leading empty field and drops trailing ones.
_JAVA_WS = re.compile(r"[ \t\n\x0b\f\r]+")
_INT_BITS = {32: "int", 64: "long"}


def _java_int(path: str, line: str, what: str, bits: int = 32) -> int:
    """``Integer.parseInt`` / ``Long.parseLong``: ASCII digits with an optional sign, no blanks, in range.

    CheckpointFile.toInt turns a NumberFormatException (out of range included) into "Malformed line".
    """
    if not _JAVA_INT.fullmatch(line):
        raise FormatError(path, f"malformed {what} line {line!r}")
    try:
        value = int(line)
    except ValueError:  # more digits than Python converts (sys.int_info.str_digits_check_threshold)
        value = 2**bits
    if not -(2 ** (bits - 1)) <= value < 2 ** (bits - 1):
        raise FormatError(path, f"malformed {what} line {line!r}: out of {_INT_BITS[bits]} range")
    return value


def _parse_checkpoint(path: str, text: str, fields: int) -> list[list[str]]:
    """``CheckpointFile.CheckpointReadBuffer.read``: an empty file, or one with only a version line,
    holds no entries; every further line must be an entry (a blank line is malformed)."""
    lines = re.split(r"\r\n|\r|\n", text)
    if lines and lines[-1] == "":
        lines.pop()  # BufferedReader.readLine does not return the empty string after a final newline
    if not lines:
        return []
    version = _java_int(path, lines[0], "version")
    if version != 0:
        raise FormatError(path, f"Unrecognised version:{version}, expected version: 0")
    if len(lines) < 2:
        return []
    expected = _java_int(path, lines[1], "entry count")
    entries = []
    for i, line in enumerate(lines[2:], start=3):
        parts = _JAVA_WS.split(line)
        while parts and parts[-1] == "":
            parts.pop()  # String.split drops trailing empty strings: trailing blanks are accepted
        if len(parts) != fields:  # a leading blank gives an empty first field, as in Java
            raise FormatError(path, f"malformed line {i}: {line!r}")
        entries.append(parts)
    if len(entries) != expected:
        raise FormatError(path, f"Expected [{expected}] entries but found only [{len(entries)}]")
    return entries


def read_offset_checkpoint(path: str) -> dict[tuple[str, int], int]:
    """``topic partition offset`` entries -> {(topic, partition): offset}.

    OffsetCheckpointFile.Formatter.fromString: ``Integer.parseInt(partition)``, ``Long.parseLong(offset)``.
    """
    out: dict[tuple[str, int], int] = {}
    for topic, part, off in _parse_checkpoint(path, _read_text(path), 3):
        out[(topic, _java_int(path, part, "partition", 32))] = _java_int(path, off, "offset", 64)
    return out


def read_leader_epoch_checkpoint(path: str) -> list[tuple[int, int]]:
    """LeaderEpochCheckpointFile.Formatter.fromString: ``Integer.parseInt(epoch)``, ``Long.parseLong(start)``."""
    return [
        (_java_int(path, epoch, "epoch", 32), _java_int(path, start, "start offset", 64))
        for epoch, start in _parse_checkpoint(path, _read_text(path), 2)
    ]


def encode_offset_checkpoint(entries: dict[tuple[str, int], int]) -> str:
    lines = ["0", str(len(entries))] + [f"{t} {p} {o}" for (t, p), o in sorted(entries.items())]
    return "\n".join(lines) + "\n"


def encode_leader_epoch_checkpoint(entries: list[tuple[int, int]]) -> str:
    return "\n".join(["0", str(len(entries))] + [f"{e} {s}" for e, s in entries]) + "\n"


# the line ends of BufferedReader.readLine and of Properties' LineReader: \n, \r or \r\n (not \f, \v, \x1c...)
_LINE_ENDS = re.compile(r"\r\n|\r|\n")


def parse_properties(text: str) -> dict[str, str]:
    """Java ``Properties.load`` for the subset brokers write and operators edit (comments, =, :, escapes)."""
    props: dict[str, str] = {}
    logical = ""
    for raw in _LINE_ENDS.split(text):  # Properties' LineReader ends a line at \n or \r only, as readLine
        line = raw.strip() if not logical else raw.lstrip()
        if not logical and (not line or line[0] in "#!"):
            continue
        if line.endswith("\\") and not line.endswith("\\\\"):
            logical += line[:-1]
            continue
        logical += line
        key, value = _split_property(logical)
        props[key] = value
        logical = ""
    if logical:
        key, value = _split_property(logical)
        props[key] = value
    return props


def _split_property(line: str) -> tuple[str, str]:
    i = 0
    key = []
    while i < len(line):
        c = line[i]
        if c == "\\" and i + 1 < len(line):
            key.append(line[i + 1])
            i += 2
            continue
        if c in "=: \t":
            break
        key.append(c)
        i += 1
    rest = line[i:].lstrip(" \t")
    if rest[:1] in ("=", ":"):
        rest = rest[1:].lstrip(" \t")
    return "".join(key), rest.replace("\\\\", "\\")


def read_properties(path: str) -> dict[str, str]:
    """A .properties file as Kafka reads meta.properties: ``Properties.load(InputStream)``, which takes every byte
    as ISO-8859-1, so any bytes parse (PropertiesUtils.readPropertiesFile@3.7.1:75-80, Utils.loadProps@2.2.1:561-
    567): a garbage meta.properties is a file without the expected keys, not a read error. UTF-8 text is read as
    such (the keys and values Kafka writes are ASCII)."""
    raw = read_bytes(path)
    try:
        return parse_properties(raw.decode("utf-8"))
    except UnicodeDecodeError:
        return parse_properties(raw.decode("iso-8859-1"))


@slotted
class MetaProperties:
    path: str
    version: int | None
    cluster_id: str | None
    node_id: int | None  # node.id (v1) or broker.id (v0)
    directory_id: str | None
    raw: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, object]:
        return {
            "path": self.path,
            "version": self.version,
            "cluster_id": self.cluster_id,
            "node_id": self.node_id,
            "directory_id": self.directory_id,
        }


def read_meta_properties(path: str) -> MetaProperties:
    props = read_properties(path)
    try:
        version = int(props["version"]) if "version" in props else None
        node = props.get("node.id", props.get("broker.id"))
        node_id = int(node) if node is not None else None
    except ValueError as exc:
        raise FormatError(path, f"malformed value: {exc}") from exc
    if version is None:
        version = 0  # MetaProperties.Builder: a file without "version" is read as version 0
    return MetaProperties(path, version, props.get("cluster.id"), node_id, props.get("directory.id"), props)


# PartitionMetadataReadBuffer's WhiteSpacesPattern (":\\s+", Java's ASCII \\s) and BufferedReader's line ends
_PM_SPLIT = re.compile(r":[ \t\n\x0b\f\r]+")
ZERO_TOPIC_ID = "AAAAAAAAAAAAAAAAAAAAAA"  # Uuid.ZERO_UUID


def java_lines(text: str) -> list[str]:
    """The lines BufferedReader.readLine returns, in order (a final line end ends the last line)."""
    lines = _LINE_ENDS.split(text)
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def partition_metadata_fields(line: str) -> list[str]:
    """One partition.metadata line split as PartitionMetadataReadBuffer does (``":\\s+"``; Pattern.split drops
    trailing empty strings): a good line has two fields, key and value."""
    parts = _PM_SPLIT.split(line)
    while parts and parts[-1] == "":
        parts.pop()
    return parts


_B64URL = {c: i for i, c in enumerate("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")}


def java_b64url_decode(text: str) -> bytes:
    """``Base64.getUrlDecoder().decode(String)`` (java.util.Base64.Decoder.decode0, JDK 11-21): the string taken as
    ISO-8859-1 bytes, '=' padding optional but exact when present; a ValueError where Java throws
    IllegalArgumentException."""
    bits, shift, out, i, n = 0, 18, bytearray(), 0, len(text)
    while i < n:
        c = text[i]
        i += 1
        v = _B64URL.get(c, -1)
        if v < 0:
            if c == "=":
                if (shift == 6 and (i == n or text[i] != "=")) or shift == 18:
                    raise ValueError("Input byte array has wrong 4-byte ending unit")
                if shift == 6:
                    i += 1
                break
            raise ValueError(f"Illegal base64 character {ord(c) if ord(c) < 256 else 63:x}")
        bits |= v << shift
        shift -= 6
        if shift < 0:
            out += bytes(((bits >> 16) & 0xFF, (bits >> 8) & 0xFF, bits & 0xFF))
            bits, shift = 0, 18
    if shift == 6:
        out.append((bits >> 16) & 0xFF)
    elif shift == 0:
        out += bytes(((bits >> 16) & 0xFF, (bits >> 8) & 0xFF))
    elif shift == 12:
        raise ValueError("Last unit does not have enough valid bits")
    if i < n:
        raise ValueError(f"Input byte array has incorrect ending byte at {i}")
    return bytes(out)


def uuid_refused(text: str) -> str | None:
    """Why ``Uuid.fromString`` throws IllegalArgumentException for ``text``, or None: longer than 24 characters, not
    base64url as Java decodes it, or not 16 bytes decoded (Uuid.java@2.8.2:107-121, the same at @3.7.1 and in
    4.x)."""
    if len(text) > 24:
        return "longer than 24 characters"
    try:
        raw = java_b64url_decode(text)
    except ValueError as exc:
        return f"not base64url ({exc})"
    return None if len(raw) == 16 else f"{len(raw)} bytes decoded, not 16"


def java_int(text: str) -> bool:
    """Whether Integer.parseInt takes ``text`` (its range aside)."""
    return _JAVA_INT.fullmatch(text) is not None


def read_partition_metadata(path: str) -> dict[str, str]:
    """``{"version", "topic_id"}`` as PartitionMetadataReadBuffer.read takes them (PartitionMetadataFile.scala
    @2.8.2:49-77, PartitionMetadataReadBuffer.java@3.7.1:40-76): the first two lines, each ``<any key>: <value>``
    split at a colon followed by whitespace into exactly two fields; lines after them are not read. A FormatError
    where the broker's read fails (version 0 only: a newer version is refused up to 3.6; a topic id
    ``Uuid.fromString`` refuses)."""
    lines = java_lines(_read_text(path))

    def fields(i: int) -> str:
        if i >= len(lines):
            raise FormatError(path, f"no line {i + 1} (the file ends before it)")
        parts = partition_metadata_fields(lines[i])
        if len(parts) != 2:
            raise FormatError(path, f"malformed line {i + 1}: {lines[i]!r}")
        return parts[1]

    version = fields(0)
    if not java_int(version) or int(version) != 0:
        raise FormatError(path, f"expected version 0 on line 1: {lines[0]!r}")
    topic_id = fields(1)
    refused = uuid_refused(topic_id)
    if refused is not None:  # IllegalArgumentException, not an IOException (broker.failure_channel)
        raise FormatError(path, f"a topic id Uuid.fromString refuses: {refused}")
    if topic_id == ZERO_TOPIC_ID:
        raise FormatError(path, "the zero topic id ('Invalid topic ID in partition metadata file')")
    return {"version": "0", "topic_id": topic_id}


@slotted
class CleanShutdown:
    path: str
    present: bool
    broker_epoch: int | None = None  # 3.7+
    format: str = "absent"  # absent | empty (<=3.6) | json (>=3.7) | unparsable | not_regular


def read_clean_shutdown(log_dir: str) -> CleanShutdown:
    path = os.path.join(log_dir, CLEAN_SHUTDOWN)
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return CleanShutdown(path, False)
    except OSError:
        mode = stat.S_IFREG  # read_bytes says why
    if not stat.S_ISREG(mode):
        # LogManager.loadLogs asks File.exists (a link followed) and deletes whatever it is with
        # Files.deleteIfExists before listing the dir (LogManager.scala@2.8.2:316-322, @3.7.1:437-442): a FIFO, an
        # empty dir, a link to something count as the marker; a dangling link does not. Never opened here (a FIFO
        # would block), a link never read through; a non-empty dir (deleteIfExists throws) is read_bytes' error.
        if stat.S_ISLNK(mode):
            return CleanShutdown(path, os.path.exists(path), None, "not_regular")
        if stat.S_ISFIFO(mode) or (stat.S_ISDIR(mode) and not _listdir(path)):
            return CleanShutdown(path, True, None, "not_regular")
    raw = read_bytes(path)
    if not raw.strip():
        return CleanShutdown(path, True, None, "empty")
    try:
        doc = json.loads(raw)
        return CleanShutdown(path, True, int(doc["brokerEpoch"]), "json")
    except (ValueError, KeyError, TypeError, OverflowError, RecursionError):
        # CleanShutdownFileHandler.read() catches every Exception, logs it and returns an empty epoch;
        # the marker still counts. (OverflowError: brokerEpoch Infinity/1e400; RecursionError: deep nesting.)
        return CleanShutdown(path, True, None, "unparsable")


def _listdir(path: str) -> list[str] | None:
    try:
        return os.listdir(path)
    except OSError:
        return None


def read_quorum_state(path: str) -> dict[str, object]:
    try:
        doc = json.loads(_read_text(path))
    except ValueError as exc:
        raise FormatError(path, f"not JSON: {exc}") from exc
    except RecursionError as exc:  # json raises it for deeply nested arrays/objects
        raise FormatError(path, "not JSON: nested too deeply") from exc
    if not isinstance(doc, dict):
        raise FormatError(path, "quorum-state is not a JSON object")
    return doc


T = TypeVar("T")


def safe(fn: Callable[..., T], *args: Any) -> tuple[T | None, EngineError | None]:
    """Call a reader; return (value, None) or (None, EngineError)."""
    try:
        return fn(*args), None
    except EngineError as exc:
        return None, exc
