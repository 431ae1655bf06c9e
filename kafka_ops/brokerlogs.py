"""What a broker's own logs say happened: cleaner deaths, index rebuilds, zero-timestamp deletions, unclean-shutdown
recoveries, and the progress of a recovery that is under way. Standard library only (CLN001 uses it on a bare
broker host; ``kafka-ops logs`` renders it).

Lines are matched with the patterns of :mod:`kafka_ops.facts.logs` (Kafka's own log statements, cited there).
Events keep the file, line number and the line's timestamp; lines without a timestamp (stack traces) inherit
the timestamp of the line before them in the same file. Broker log timestamps are the broker's local time;
they are compared as written, which is right as long as every file comes from the same broker.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from kafka_ops.facts.logs import KAFKA_LINE, NOTHING_RECOGNISED, parse_line, read_lines

Event = dict[str, Any]

# A restart of the broker, logged before its cleaner threads start (KafkaServer.startup logs "starting", then
# LogManager logs "Loading logs" and LogManager.startup starts the cleaner). "Kafka version" and "started" come
# at the end of a start (AppInfoParser.registerAppInfo after logManager.startup, KafkaServer.scala @3.6.0
# lines 282/598): a thread that dies seconds into a start is logged before them, so they are only a fallback
# for logs that have none of the lines before.
START_KINDS = ("loading_logs", "broker_starting")
LATE_START_KINDS = ("version", "broker_started")
MAX_TEXT = 400


# ------------------------------------------------------------------------------------------------ reading
def read_events(path: str, keep_text: bool = True, recognised: list[int] | None = None) -> list[Event]:
    """Every event of one file, in line order, plain or compressed as logrotate leaves it (an unreadable file
    raises EngineError). ``recognised`` gets the number of Kafka log lines appended (0: not a broker log)."""
    count = [0]
    events = list(_events_of_lines(path, read_lines(path), 1, keep_text, count))
    if recognised is not None:
        recognised.append(count[0])
    return events


def _events_of_lines(
    path: str, lines: Iterable[str], first: int, keep_text: bool, count: list[int] | None = None
) -> Iterator[Event]:
    for n, line in enumerate(lines, start=first):
        found = parse_line(line)
        if count is not None and (found or KAFKA_LINE.search(line)):
            count[0] += 1
        for ev in found:
            if "file" in ev:  # a file named by the line itself (an index, a segment)
                ev["target"] = ev["file"]
            ev["file"] = path
            ev["line"] = n
            if keep_text:
                ev["text"] = line.rstrip("\n")[:MAX_TEXT]
            yield ev


def with_rotations(path: str, keep: int = 3) -> list[str]:
    """``path`` and its ``keep`` newest rotations beside it, oldest first (server.log.1, server.log.2026-11-26-04,
    server.log.3.gz: log4j's DailyRollingFileAppender and logrotate name them so): a start whose recovery
    outlives a rotation is still whole. Bounded, because a poll every few seconds must not re-read weeks of logs."""
    import glob

    rotated = [p for p in glob.glob(glob.escape(path) + ".*") if os.path.isfile(p)]
    rotated.sort(key=lambda p: os.stat(p).st_mtime)
    return rotated[-keep:] + ([path] if os.path.exists(path) else [])


def read_all(
    paths: Iterable[str], keep_text: bool = True, unrecognised: list[str] | None = None
) -> list[Event]:
    """The events of several files; ``unrecognised`` gets the files without a single Kafka log line."""
    out: list[Event] = []
    for p in paths:
        counts: list[int] = []
        out.extend(read_events(p, keep_text, counts))
        if unrecognised is not None and not counts[0]:
            unrecognised.append(p)
    return out


def norm_time(t: object) -> str | None:
    """'2026-11-01 11:52:48,923' / '2026-11-01T11:52:48.923' -> '2026-11-01 11:52:48.923' (sortable)."""
    if not isinstance(t, str) or len(t) < 19:
        return None
    return t[:10] + " " + t[11:19] + "." + t[20:23]


def parse_time(t: object) -> float | None:
    """Seconds since the epoch of a log timestamp read as UTC (only differences are used)."""
    import calendar

    n = norm_time(t)
    if n is None:
        return None
    try:
        st = time.strptime(n[:19], "%Y-%m-%d %H:%M:%S")
    except ValueError:
        return None
    return calendar.timegm(st) + int(n[20:23] or 0) / 1000


def ordered(events: Iterable[Event]) -> list[Event]:
    """Events of several files in time order: a line without a timestamp takes the one of the line before it
    in its file (``_t``); ties keep file and line order."""
    by_file: dict[str, list[Event]] = {}
    for e in events:
        by_file.setdefault(str(e.get("file")), []).append(e)
    out: list[Event] = []
    for fi, (_f, evs) in enumerate(by_file.items()):
        evs.sort(key=lambda e: int(e.get("line") or 0))
        last = None
        for e in evs:
            t = norm_time(e.get("time"))
            if t is not None:
                last = t
            e["_t"] = last or ""
            e["_f"] = fi
            out.append(e)
    out.sort(key=lambda e: (e["_t"], e["_f"], int(e.get("line") or 0)))
    return out


def _is_after(a: Event, b: Event) -> bool:
    """Whether event ``a`` happened after ``b`` (times when both have one, else line order in one file)."""
    if a.get("_t") and b.get("_t") and a["_t"] != b["_t"]:
        return bool(a["_t"] > b["_t"])
    if a.get("file") == b.get("file"):
        return int(a.get("line") or 0) > int(b.get("line") or 0)
    return bool(a.get("_t") and b.get("_t") and a["_t"] >= b["_t"] and a.get("_f", 0) != b.get("_f", 0))


def _where(e: Event) -> str:
    return f"{e.get('file')}:{e.get('line')}"


# ------------------------------------------------------------------------------------------------ cleaner
@dataclass
class CleanerDeath:
    """A log-cleaner thread that died: ShutdownableThread.run logs "Error due to" (with the exception) and then
    "Stopped" when doWork throws (LogCleaner.CleanerThread; since 2.1.0, KIP-346, only errors outside the
    per-log cleaning still kill it)."""

    thread: str
    died_at: str | None
    where: str
    exception: str | None = None
    detail: str | None = None
    max_size: int | None = None  # "maximum allowable size of N" (KAFKA-6854's message)
    log: str | None = None  # the log it was cleaning
    segment: int | None = None
    deletes: str | None = None  # retaining | discarding
    growths: list[int] = field(default_factory=list)
    stopped: bool = False  # the "Stopped" line was found
    restarted_at: str | None = None
    restart_evidence: str | None = None

    @property
    def dead_now(self) -> bool:
        return self.restart_evidence is None

    def to_dict(self) -> dict[str, Any]:
        return {
            "thread": self.thread, "died_at": self.died_at, "where": self.where, "exception": self.exception,
            "detail": self.detail, "max_size": self.max_size, "log": self.log, "segment": self.segment,
            "deletes": self.deletes, "growths": self.growths, "stopped": self.stopped,
            "restarted_at": self.restarted_at, "restart_evidence": self.restart_evidence,
            "dead_now": self.dead_now,
        }  # fmt: skip


def _thread_number(thread: str) -> str:
    return thread.rsplit("-", 1)[-1]


def cleaner_deaths(events: Iterable[Event]) -> list[CleanerDeath]:
    """Every cleaner-thread death in the logs, with what it was doing and whether it was restarted since.

    A death is restarted by a later "[kafka-log-cleaner-thread-N]: Starting" of the same thread (ShutdownableThread
    logs it when the thread starts: broker restart, or LogCleaner.reconfigure after a dynamic log.cleaner.*
    change), or by a later broker start logged before the cleaner starts ("Loading logs", "[KafkaServer id=N]
    starting"). "Kafka version" / "started" count only when the logs have none of those lines (see
    LATE_START_KINDS).
    """
    evs = ordered(events)
    by_file: dict[str, list[Event]] = {}
    for e in evs:
        by_file.setdefault(str(e.get("file")), []).append(e)
    for lst in by_file.values():
        lst.sort(key=lambda e: int(e.get("line") or 0))
    deaths: list[CleanerDeath] = []
    for e in evs:
        if e["kind"] != "cleaner_error":
            continue
        thread = str(e["thread"])
        num = _thread_number(thread)
        d = CleanerDeath(thread, e.get("time") or e.get("_t") or None, _where(e))
        same = by_file[str(e.get("file"))]
        idx = same.index(e)
        # after the error: the exception (next lines) and the "Stopped" line of the same thread
        for f in same[idx + 1 :]:
            if f["kind"] in ("cleaner_exception", "exception") and d.exception is None:
                d.exception = str(f.get("exception"))
                d.detail = str(f.get("detail") or "") or None
            if f["kind"] == "cleaner_exception" and f.get("size"):
                d.max_size = int(f["size"])
            if f["kind"] == "cleaner_stopped" and f.get("thread") == thread:
                d.stopped = True
                break
            if f["kind"] == "cleaner_error" or int(f.get("line") or 0) > int(e.get("line") or 0) + 200:
                break
        # on the same line (a log flattened by a copy, as in seed 001's article)
        for f in same:
            if f.get("line") == e.get("line") and f["kind"] == "cleaner_exception":
                d.exception, d.detail = str(f.get("exception")), str(f.get("detail") or "") or None
                d.max_size = int(f["size"]) if f.get("size") else d.max_size
        # before the error: what this cleaner was cleaning, and how its buffers grew
        for f in reversed(same[:idx]):
            if f.get("cleaner") != num:
                continue
            if f["kind"] == "cleaner_growing" and d.log is None:
                d.growths.insert(0, int(f["to_bytes"]))
            elif f["kind"] == "cleaner_cleaning" and d.log is None:
                d.log, d.segment, d.deletes = str(f["log"]), int(f["segment"]), str(f["deletes"])
            elif f["kind"] == "cleaner_beginning":
                d.log = d.log or str(f["log"])
                break
        strong = any(f["kind"] in START_KINDS or f["kind"] == "cleaner_started" for f in evs)
        for f in evs:
            if not _is_after(f, e):
                continue
            if f["kind"] == "cleaner_started" and f.get("thread") == thread:
                d.restarted_at, d.restart_evidence = f.get("time"), f"{thread} Starting at {_where(f)}"
                break
            if f["kind"] in START_KINDS or (not strong and f["kind"] in LATE_START_KINDS):
                what = {
                    "loading_logs": "broker start ('Loading logs')", "broker_starting": "broker start ('starting')",
                    "version": "broker start ('Kafka version')", "broker_started": "broker start ('started')",
                }  # fmt: skip
                d.restarted_at = f.get("time")
                d.restart_evidence = f"{what[f['kind']]} at {_where(f)}"
                break
        deaths.append(d)
    return deaths


# ------------------------------------------------------------------------------------------------ loading
@dataclass
class DirLoad:
    path: str
    unclean: bool | None = None
    total: int | None = None
    done: int = 0
    counted: int = 0  # "Completed load of log" lines (versions without "(i/M ...)")

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "unclean": self.unclean,
            "total": self.total,
            "done": max(self.done, self.counted),
        }


@dataclass
class Load:
    """One start of the broker's LogManager.loadLogs, from "Loading logs" to "Loaded N logs in T ms"."""

    started_at: str | None = None
    start_where: str | None = None
    dirs: dict[str, DirLoad] = field(default_factory=dict)
    loaded_undirected: int = 0  # 0.10-0.11 "Completed load of log X" lines carry no dir
    segments_recovered: int = 0
    invalid_tails: int = 0
    index_rebuilds: int = 0
    completed: bool = False
    completed_at: str | None = None
    duration_ms: int | None = None
    failed: str | None = None
    last_at: str | None = None
    total_override: int | None = None  # --total: the operator knows better
    total_fallback: int | None = None  # partition dirs counted on disk, when the lines carry no totals
    _t0: float | None = None
    _tlast: float | None = None
    _samples: list[tuple[float, int]] = field(default_factory=list)

    def _dir(self, path: str) -> DirLoad:
        path = path.rstrip(")").rstrip(".")
        if path not in self.dirs:
            self.dirs[path] = DirLoad(path)
        return self.dirs[path]

    def feed(self, e: Event) -> None:
        k = e["kind"]
        t = parse_time(e.get("time"))
        if t is not None:
            self._tlast = t
            self.last_at = e.get("time")
            if self._t0 is None:
                self._t0 = t
        if k == "recovery_start":
            d = self._dir(str(e["dir"]))
            d.unclean = True
            if e.get("logs"):
                d.total = int(e["logs"])
        elif k == "recovery_skip":
            d = self._dir(str(e["dir"]))
            d.unclean = False
            if e.get("logs"):
                d.total = int(e["logs"])
        elif k == "log_dir_loaded":
            d = self._dir(str(e["dir"]))
            d.done = max(d.done, int(e["done"]))
            d.total = int(e["total"])
        elif k == "log_loaded":
            if e.get("dir"):
                self._dir(str(e["dir"])).counted += 1
            else:
                self.loaded_undirected += 1
        elif k == "recovering_segment":
            self.segments_recovered += 1
        elif k == "invalid_messages":
            self.invalid_tails += 1
        elif k in ("corrupt_index", "missing_index"):
            self.index_rebuilds += 1
        elif k == "logs_loaded":
            self.completed = True
            self.completed_at = e.get("time")
            self.duration_ms = int(e["ms"]) if e.get("ms") else None
        elif k == "log_dir_failed":
            self.failed = f"all log dirs failed ({e.get('dirs')}) at {_where(e)}"
        if t is not None and k in ("log_dir_loaded", "log_loaded"):
            self._samples.append((t, self.done))

    @property
    def done(self) -> int:
        return sum(max(d.done, d.counted) for d in self.dirs.values()) + self.loaded_undirected

    @property
    def total(self) -> int | None:
        if self.total_override is not None:
            return self.total_override
        if self.dirs and all(d.total is not None for d in self.dirs.values()):
            return sum(int(d.total or 0) for d in self.dirs.values())
        return self.total_fallback

    @property
    def unclean_dirs(self) -> list[str]:
        return [p for p, d in self.dirs.items() if d.unclean]

    def rate(self) -> float | None:
        """Logs loaded per second of log time, over the samples so far."""
        if len(self._samples) < 2 or self._t0 is None:
            return None
        t1, n1 = self._samples[-1]
        elapsed = t1 - self._t0
        return n1 / elapsed if elapsed > 0 and n1 > 0 else None

    def eta_seconds(self) -> float | None:
        total, rate = self.total, self.rate()
        if total is None or rate is None:
            return None
        return max(0.0, (total - self.done) / rate)

    def to_dict(self) -> dict[str, Any]:
        return {
            "started_at": self.started_at, "where": self.start_where,
            "dirs": [d.to_dict() for d in self.dirs.values()], "unclean_dirs": self.unclean_dirs,
            "logs_loaded": self.done, "logs_total": self.total, "segments_recovered": self.segments_recovered,
            "invalid_tails_truncated": self.invalid_tails, "index_rebuilds": self.index_rebuilds,
            "completed": self.completed, "completed_at": self.completed_at, "duration_ms": self.duration_ms,
            "failed": self.failed,
        }  # fmt: skip


PROGRESS_KINDS = ("recovery_start", "recovery_skip", "log_dir_loaded", "log_loaded", "recovering_segment")


def loads(events: Iterable[Event], total: int | None = None) -> list[Load]:
    """Each start's log loading, in order. A load begins at "Loading logs" (LogManager.loadLogs, every version;
    a file that starts mid-load begins at its first progress line)."""
    out: list[Load] = []
    cur: Load | None = None
    for e in ordered(events):
        k = e["kind"]
        if k == "loading_logs" or (cur is None and k in PROGRESS_KINDS):
            cur = Load(started_at=e.get("time"), start_where=_where(e), total_override=total)
            out.append(cur)
        if cur is not None:
            cur.feed(e)
    return out


def start_state(events: Iterable[Event]) -> dict[str, Any]:
    """Where the broker's latest start stands: ``starts`` (log loads seen so far, so a caller can tell a new
    start from an old one), ``loading`` (its LogManager.loadLogs has not logged "Loaded N logs" yet),
    ``started`` (KafkaServer/KafkaRaftServer logged "started" after that load: the broker serves), and the
    load itself (unclean dirs, logs loaded of total). The rolling restart waits on it after each start."""
    evs = ordered(events)
    ls = loads(evs)
    last = ls[-1] if ls else None
    begin = max((i for i, e in enumerate(evs) if e["kind"] == "loading_logs"), default=-1)
    started = bool(
        last is not None and last.completed and any(e["kind"] == "broker_started" for e in evs[begin + 1 :])
    )
    return {
        "starts": len(ls),
        "loading": bool(last is not None and not last.completed and last.failed is None),
        "completed": bool(last is not None and last.completed),
        "started": started,
        "failed": last.failed if last is not None else None,
        "load": last.to_dict() if last is not None else None,
    }


# ------------------------------------------------------------------------------------------------ report
def analyze(paths: list[str]) -> dict[str, Any]:
    """The report of ``kafka-ops logs``: a JSON-ready dict (``unrecognised``: files with no Kafka log line, whose
    silence is no clean bill)."""
    unrecognised: list[str] = []
    events = read_all(paths, unrecognised=unrecognised)
    versions = [
        {"version": e["version"], "at": e.get("time"), "where": _where(e)}
        for e in ordered(events)
        if e["kind"] == "version"
    ]
    deaths = cleaner_deaths(events)
    rebuilds = [
        {
            "kind": "corrupt" if e["kind"] == "corrupt_index" else "missing",
            "file": e.get("target") or _index_file(e),
            "at": e.get("time"),
            "where": _where(e),
            "text": e.get("text"),
        }
        for e in ordered(events)
        if e["kind"] in ("corrupt_index", "missing_index")
    ]
    zero = [
        {
            "at": e.get("time"),
            "where": _where(e),
            "partition": _partition_of(str(e.get("text") or "")),
            "text": e.get("text"),
        }
        for e in ordered(events)
        if e["kind"] == "zero_timestamp_delete"
    ]
    uncleanable = sorted(
        {str(e["partition"]) for e in events if e["kind"] == "uncleanable" and e.get("partition")}
    )
    recs = [ld.to_dict() for ld in loads(events)]
    unclean = [r for r in recs if r["unclean_dirs"]]
    return {
        "files": paths,
        "unrecognised": [{"file": p, "error": NOTHING_RECOGNISED} for p in unrecognised],
        "versions": versions,
        "cleaner_deaths": [d.to_dict() for d in deaths],
        "cleaner_dead_now": sorted({d.thread for d in deaths if d.dead_now}),
        "uncleanable_partitions": uncleanable,
        "index_rebuilds": rebuilds,
        "zero_timestamp_deletions": zero,
        "loads": recs,
        "unclean_recoveries": unclean,
        "summary": {
            "cleaner_deaths": len(deaths),
            "cleaner_threads_dead_now": len({d.thread for d in deaths if d.dead_now}),
            "index_rebuilds": len(rebuilds),
            "zero_timestamp_deletions": len(zero),
            "unclean_recoveries": len(unclean),
        },
    }


def _index_file(e: Event) -> str | None:
    m = re.search(r"(/\S+?\.(?:timeindex|index|log))\b", str(e.get("text") or ""))
    return m.group(1) if m else None


_PARTITION = re.compile(r"\[(?:Log|UnifiedLog|LocalLog) partition=(\S+?),")


def _partition_of(text: str) -> str | None:
    m = _PARTITION.search(text)
    return m.group(1) if m else None


# ------------------------------------------------------------------------------------------------ follow
class Tail:
    """Lines appended to a file, across rotation (a new inode or a shrink starts from the top)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._f: Any = None
        self._ino: int | None = None
        self._pending = ""
        self.line_no = 0

    def _open(self) -> bool:
        try:
            self._f = open(self.path, encoding="utf-8", errors="replace")
            self._ino = os.fstat(self._f.fileno()).st_ino
            self.line_no = 0
            self._pending = ""
            return True
        except OSError:
            self._f = None
            return False

    def rotated(self) -> bool:
        try:
            st = os.stat(self.path)
        except OSError:
            return False
        return st.st_ino != self._ino or (self._f is not None and st.st_size < self._f.tell())

    def read(self) -> list[tuple[int, str]]:
        """The complete lines appended since the last call (a half-written last line waits)."""
        if self._f is None and not self._open():
            return []
        out: list[tuple[int, str]] = []
        while True:
            chunk = self._f.read(1 << 16)
            if not chunk:
                break
            self._pending += chunk
            *lines, self._pending = self._pending.split("\n")
            for line in lines:
                self.line_no += 1
                out.append((self.line_no, line))
        if not out and self.rotated():
            self.close()
            self._open()
            return self.read()
        return out

    def close(self) -> None:
        if self._f is not None:
            self._f.close()
            self._f = None


@dataclass
class FollowResult:
    status: str  # completed | failed | timeout | interrupted
    load: Load | None

    @property
    def exit_code(self) -> int:
        # a timeout fails the gate like a failed load (3 is kafka-ops' code for a bug of its own)
        return {"completed": 0, "failed": 1, "timeout": 1, "interrupted": 130}[self.status]


def count_logs(log_dirs: Iterable[str]) -> int:
    """The logs LogManager.loadLogs will load from these dirs: every sub-directory but the KRaft metadata log
    and the tiered-storage index cache (a -delete / -future / -stray dir is loaded too)."""
    n = 0
    for d in log_dirs:
        try:
            names = os.listdir(d)
        except OSError:
            continue
        for name in names:
            if name in ("__cluster_metadata-0", "remote-log-index-cache") or not os.path.isdir(
                os.path.join(d, name)
            ):
                continue
            if re.search(r"-\d+(?:\.[0-9a-fA-F]{32}-(?:delete|future|stray))?$", name):
                n += 1
    return n


def follow(
    path: str,
    on_update: Callable[[Load], None],
    *,
    timeout_s: float | None = None,
    poll_s: float = 0.2,
    total: int | None = None,
    total_fallback: int | None = None,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> FollowResult:
    """Follow the last log loading in a growing server.log until it completes, fails, or ``timeout_s`` passes.

    The file is read from its start (the totals come from the "Recovering N logs" lines); a new start of the
    broker ("Kafka version" / "Loading logs") starts a new load. When the last load in the file has already
    completed, returns at once. KeyboardInterrupt propagates to the caller (which reports "interrupted").
    """
    tail = Tail(path)
    deadline = None if timeout_s is None else clock() + timeout_s
    load: Load | None = None
    catching_up = True  # the lines already in the file: only the last load in them counts
    try:
        while True:
            changed = False
            for n, line in tail.read():
                for e in parse_line(line):
                    e["file"], e["line"] = path, n
                    k = e["kind"]
                    if k == "loading_logs" or (load is None and k in PROGRESS_KINDS):
                        load = Load(
                            started_at=e.get("time"), start_where=_where(e), total_override=total,
                            total_fallback=total_fallback,
                        )  # fmt: skip
                    if load is not None:
                        load.feed(e)
                        changed = True
                if not catching_up and load is not None and (load.completed or load.failed):
                    break
            catching_up = False
            if load is not None:
                if changed:
                    on_update(load)
                if load.completed:
                    return FollowResult("completed", load)
                if load.failed:
                    return FollowResult("failed", load)
            if deadline is not None and clock() >= deadline:
                return FollowResult("timeout", load)
            sleep(poll_s)
    finally:
        tail.close()


__all__ = [
    "CleanerDeath", "DirLoad", "FollowResult", "Load", "Tail", "analyze", "cleaner_deaths", "count_logs", "follow", "loads",
    "ordered", "read_all", "read_events",
]  # fmt: skip
