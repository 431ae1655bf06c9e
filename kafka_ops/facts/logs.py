"""Events in the broker's own logs (server.log, log-cleaner.log), as structured facts.

The patterns are Kafka's log statements (core/.../log/LogCleaner.scala, LogLoader.java, LogManager.scala,
UnifiedLog, AppInfoParser); each event keeps the file, line number and timestamp of its line.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from typing import BinaryIO

from kafka_ops.engine.errors import EngineError, os_error
from kafka_ops.engine.fileio import open_regular
from kafka_ops.engine.shell import strip_terminal

_TS = re.compile(r"^\[(\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}[,.]\d{3})\]")
PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("version", re.compile(r"Kafka version\s*:\s*(?P<version>\S+)")),
    # LogCleaner: ShutdownableThread logs "Error due to" then "Stopped" when the cleaner thread dies
    ("cleaner_error", re.compile(r"ERROR \[(?P<thread>kafka-log-cleaner-thread-\d+)\]: Error due to")),
    ("cleaner_stopped", re.compile(r"INFO \[(?P<thread>kafka-log-cleaner-thread-\d+)\]: Stopped")),
    (
        "cleaner_exception",
        re.compile(
            r"(?P<exception>java\.lang\.\w+(?:Exception|Error)): (?P<detail>This log contains a message larger than maximum allowable size of (?P<size>\d+)\.?.*)"
        ),
    ),
    # KIP-346 (2.1.0): the cleaner survives and marks the partition uncleanable; the same text from 2.1.0 to trunk
    # (LogCleaner.scala@2.1.0:343, @3.7.1:398): "Unexpected exception thrown when cleaning log <Log.toString>.
    # Marking its partition (<topic>-<p>) as uncleanable". Log.toString holds the dir, whose parent may itself
    # look like a partition (/data/kafka-1/t-0): the partition is read from the parentheses.
    ("uncleanable", re.compile(r"Marking its partition \((?P<partition>[^()\s]+-\d+)\) as uncleanable")),
    # LogLoader / LogSegment: index rebuilds
    (
        "corrupt_index",
        re.compile(r"Found a corrupted index file (?:corresponding to log file (?P<file>\S+) )?due to"),
    ),
    (
        "missing_index",
        re.compile(r"Could not find offset index file corresponding to log file (?P<file>\S+),"),
    ),
    # UnifiedLog retention with a zero timestamp (seed 000 after the fact)
    (
        "zero_timestamp_delete",
        re.compile(r"(?:largestTime=0|largestRecordTimestamp=Some\(0\)|largestRecordTimestamp=0\b)"),
    ),
    (
        "retention_delete",
        re.compile(
            r"(?:Found deletable segments with base offsets \[(?P<bases>[\d,]*)\] due to retention time|Deleting segment .* due to log retention time)"
        ),
    ),
    # LogManager: unclean-shutdown recovery and its progress
    (
        "recovery_start",
        re.compile(r"Recovering (?P<logs>\d+) logs from (?P<dir>\S+) since no clean shutdown file was found"),
    ),
    (
        "recovery_skip",
        re.compile(
            r"Skipping recovery of (?P<logs>\d+) logs from (?P<dir>\S+) since clean shutdown file was found"
        ),
    ),
    ("recovering_segment", re.compile(r"Recovering unflushed segment (?P<base>\d+)")),
    (
        "log_loaded",
        re.compile(
            r"Completed load of log (?P<log>\S+) with (?P<segments>\d+) (?:log )?segments.* in (?P<ms>\d+) ?ms"
        ),
    ),
    ("logs_loaded", re.compile(r"Loaded (?P<logs>\d+) logs in (?P<ms>\d+) ?ms")),
    ("log_dir_loaded", re.compile(r"\((?P<done>\d+)/(?P<total>\d+) completed in (?P<dir>\S+)\)")),
    ("log_dir_failed", re.compile(r"Shutdown broker because all log dirs in (?P<dirs>.+) have failed")),
    (
        "permission_denied",
        re.compile(r"(?P<file>/\S+) \(Permission denied\)|AccessDeniedException: (?P<file2>/\S+)"),
    ),
    # ---- added for CLN001 and `kafka-ops logs` (additive: the kinds above keep their meaning) ----
    # ShutdownableThread.run logs "Starting" when a thread (re)starts: after a broker restart or a dynamic
    # reconfiguration of log.cleaner.* (LogCleaner.reconfigure: shutdown() then startup())
    ("cleaner_started", re.compile(r"INFO \[(?P<thread>kafka-log-cleaner-thread-\d+)\]: Starting")),
    # broker (re)start: KafkaServer.startup "[KafkaServer id=N] starting/started" (ZK), KafkaRaftServer
    # "Kafka Server started" (KafkaBroker.STARTED_MESSAGE), 0.10.x "[Kafka Server N], started"
    ("broker_starting", re.compile(r"\[KafkaServer id=(?P<node>\d+)\] starting")),
    ("broker_started", re.compile(r"\[KafkaServer id=(?P<node>\d+)\] started")),
    ("broker_started", re.compile(r"\[KafkaRaftServer nodeId=(?P<node>\d+)\] Kafka Server started")),
    ("broker_started", re.compile(r"\[Kafka Server (?P<node>\d+)\], started")),
    # Cleaner.cleanSegments: what a cleaner thread was cleaning (1.x-2.x, then 3.x's LogSegment(...) form)
    (
        "cleaner_cleaning",
        re.compile(
            r"Cleaner (?P<cleaner>\d+): Cleaning segment (?P<segment>\d+) in log (?P<log>\S+) .*?"
            r"(?P<deletes>retaining|discarding) deletes"
        ),
    ),
    (
        "cleaner_cleaning",
        re.compile(
            r"Cleaner (?P<cleaner>\d+): Cleaning LogSegment\(baseOffset=(?P<segment>\d+).*? in log (?P<log>\S+) "
            r".*?(?P<deletes>retaining|discarding) deletes"
        ),
    ),
    (
        "cleaner_beginning",
        re.compile(r"Cleaner (?P<cleaner>\d+): Beginning cleaning of log (?P<log>\S+?)\.?(?:\s|$)"),
    ),
    (
        "cleaner_growing",
        re.compile(
            r"Cleaner (?P<cleaner>\d+): Growing cleaner I/O buffers from (?P<from_bytes>\d+) ?bytes to "
            r"(?P<to_bytes>\d+) bytes"
        ),
    ),
    # the head line of a stack trace (the exception a thread died of follows its "Error due to" line)
    (
        "exception",
        re.compile(
            r"^(?:Caused by: )?(?P<exception>(?:[a-z_][\w$]*\.)+[A-Z][\w$]*(?:Exception|Error))(?::\s*(?P<detail>.*?))?\s*$"
        ),
    ),
    # LogManager.loadLogs across versions: start of loading, per-dir recovery decision, per-log progress, end
    ("loading_logs", re.compile(r"INFO (?:\[LogManager[^\]]*\] ?)?Loading logs(?:\.| from log dirs)")),
    (
        "recovery_start",  # 2.8.0-3.x: no count
        re.compile(
            r"Attempting recovery for all logs in (?P<dir>\S+) since no clean shutdown file was found"
        ),
    ),
    (
        "recovery_skip",
        re.compile(r"Skipping recovery for all logs in (?P<dir>\S+) since clean shutdown file was found"),
    ),
    ("log_dir_loaded", re.compile(r"\((?P<done>\d+)/(?P<total>\d+) loaded in (?P<dir>\S+)\)")),  # 2.8.0-3.0.x
    (
        "log_loaded",  # 1.0-2.7: Log.scala with logIdent "[Log partition=t-0, dir=/d] "
        re.compile(
            r"\[Log partition=(?P<log>\S+), dir=(?P<dir>[^\]]+)\] Completed load of log with (?P<segments>\d+) "
            r"segments.* in (?P<ms>\d+) ?ms"
        ),
    ),
    ("logs_loaded", re.compile(r"Logs loading complete in (?P<ms>\d+) ?ms")),  # up to 2.7
    (
        "invalid_messages",  # LogSegment.recover truncating a torn or corrupt tail
        re.compile(r"Found invalid messages in log segment (?P<file>\S+) at byte offset (?P<position>\d+)"),
    ),
]


def parse_line(line: str) -> list[dict[str, object]]:
    out = []
    ts = _TS.match(line)
    for kind, pat in PATTERNS:
        m = pat.search(line)
        if m:
            ev: dict[str, object] = {"kind": kind, "time": ts.group(1) if ts else None}
            ev.update({k: v for k, v in m.groupdict().items() if v is not None})
            out.append(ev)
    return out


# A line of the broker's own log4j layout ("[%d] %p %m (%c)%n" in config/log4j.properties): its timestamp and level,
# anywhere on the line (journald or a shipper may prefix it).
KAFKA_LINE = re.compile(
    r"\[\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}[,.]\d{3}\]\s+(?:TRACE|DEBUG|INFO|WARN|ERROR|FATAL)\b"
)
NOTHING_RECOGNISED = (
    "no Kafka broker log line recognised (expected log4j lines like '[2026-11-01 10:00:00,123] INFO ...'): "
    "nothing in it was read"
)
_MAGIC = {b"\x1f\x8b": "gzip", b"BZh": "bz2", b"\xfd7zXZ\x00": "xz", b"\x28\xb5\x2f\xfd": "zstd"}
# Logs are streamed: memory stays constant whatever the size of a file. A line longer than MAX_LINE is cut (every
# pattern above matches within a log4j line's first few hundred characters); a compressed rotation stops being
# read past MAX_DECOMPRESSED bytes, or once past BOMB_FLOOR it has grown more than BOMB_RATIO times the compressed
# bytes read (log4j text compresses 10 to 30 times with gzip: a higher ratio is a compression bomb), with a note.
MAX_LINE = 64 * 1024
MAX_DECOMPRESSED = 4 << 30
BOMB_FLOOR = 64 << 20
BOMB_RATIO = 500
_CHUNK = 1 << 20


def _kind(path: str, head: bytes) -> str | None:
    kind = next((name for magic, name in _MAGIC.items() if head.startswith(magic)), None)
    if kind == "zstd":
        raise EngineError(path, "zstd-compressed, which Python cannot read: zstd -d it first")
    return kind


def open_log(path: str) -> BinaryIO:
    """A broker log as a binary stream, in every form logrotate leaves it: plain (server.log, server.log.1,
    server.log.2026-11-01-10, server.log-20261101) or compressed with gzip, bzip2 or xz (told by the content, not
    the name), decompressed as it is read. Opened without following a link (the broker user owns the log dir)
    and without blocking: a symlink, FIFO or device, an unreadable or a zstd-compressed file is an EngineError."""
    raw = open_regular(path)
    try:
        kind = _kind(path, raw.peek(6)[:6])
        if kind is None:
            return raw
        import importlib

        module = importlib.import_module({"gzip": "gzip", "bz2": "bz2", "xz": "lzma"}[kind])
        return module.open(raw, "rb")  # type: ignore[no-any-return]
    except OSError as exc:
        raw.close()
        raise os_error(path, exc) from exc
    except BaseException:
        raw.close()
        raise


def _too_big(out: int, raw: BinaryIO | None) -> str | None:
    if out > MAX_DECOMPRESSED:
        return f"more than {MAX_DECOMPRESSED >> 30} GiB decompressed"
    try:
        read = raw.tell() if raw is not None else 0
    except (OSError, ValueError):
        return None
    if read and out > BOMB_FLOOR and out > BOMB_RATIO * read:
        return (
            f"it decompresses to more than {BOMB_RATIO} times its compressed size (a compression bomb?): "
            f"{out >> 20} MiB from {read >> 10} KiB"
        )
    return None


def read_lines(path: str, notes: list[str] | None = None) -> Iterator[str]:
    """The lines of a broker log (see open_log), without their line ends, streamed in constant memory; a corrupt
    compressed file is an EngineError naming it. A compressed file that grows past the limits above stops being read: ``notes`` gets
    one line saying so (without ``notes``, an EngineError)."""
    import lzma
    import zlib

    try:
        with open_log(path) as f:
            # the compressed file under GzipFile (fileobj), BZ2File and LZMAFile (_fp): how much of it was read
            raw: BinaryIO | None = getattr(f, "fileobj", None) or getattr(f, "_fp", None)
            compressed = not isinstance(f, io.BufferedReader)
            pending = b""
            out = 0
            while True:
                chunk = f.read(_CHUNK)
                if not chunk:
                    break
                out += len(chunk)
                why = _too_big(out, raw) if compressed else None
                if why is not None:
                    note = f"stopped reading after {out >> 20} MiB: {why}"
                    if notes is None:
                        raise EngineError(path, note)
                    notes.append(f"{path}: {note}")
                    return
                data = pending + chunk
                cut = data.rfind(b"\n")
                if cut < 0:  # no line ends in it: a line longer than MAX_LINE is cut
                    pending = data[:MAX_LINE]
                    continue
                pending = data[cut + 1 : cut + 1 + MAX_LINE]
                # one decode per chunk (a newline byte is never inside a UTF-8 sequence)
                # the broker user writes these files: no escape sequence or control character of theirs goes on
                # (an OSC 52 in a version string would set the clipboard of whoever reads `kafka-ops logs`)
                block = strip_terminal(data[:cut].decode("utf-8", "replace"))
                lines = block.split("\n")
                if "\r" in block:
                    lines = [line.removesuffix("\r") for line in lines]
                if len(block) > MAX_LINE and max(map(len, lines)) > MAX_LINE:
                    lines = [line[:MAX_LINE] for line in lines]
                yield from lines
            if pending:
                yield strip_terminal(pending.decode("utf-8", "replace").removesuffix("\r"))
    except (
        OSError,
        EOFError,
        zlib.error,
        lzma.LZMAError,
        ValueError,
    ) as exc:  # a truncated or corrupt archive
        raise EngineError(path, f"cannot read: {exc.__class__.__name__}: {exc}".rstrip(": ")) from exc


def read_log_events(path: str) -> list[dict[str, object]]:
    events, _ = read_log_file(path)
    return events


def read_log_file(
    path: str, notes: list[str] | None = None, kinds: frozenset[str] | None = None
) -> tuple[list[dict[str, object]], int]:
    """The events of one broker log and how many of its lines are Kafka log lines (0: not a broker log).
    ``kinds``: only events of these kinds are kept (the audit's checks need a few rare kinds, not the one or two
    events per partition of every start: memory then grows with what the checks read, not with the file)."""
    events: list[dict[str, object]] = []
    recognised = 0
    for n, line in enumerate(read_lines(path, notes), start=1):
        found = parse_line(line)
        if found or KAFKA_LINE.search(line):
            recognised += 1
        for ev in found:
            if kinds is not None and ev["kind"] not in kinds:
                continue
            ev["file"] = path
            ev["line"] = n
            events.append(ev)
    return events, recognised


__all__ = ["EngineError", "open_log", "parse_line", "read_lines", "read_log_events", "read_log_file"]
