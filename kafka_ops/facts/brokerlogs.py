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

from kafka_ops.engine.shell import strip_terminal
from kafka_ops.facts.logs import KAFKA_LINE, MAX_LINE, NOTHING_RECOGNISED, parse_line, read_lines

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


def with_rotations(path: str, keep: int = 3, skipped: list[str] | None = None) -> list[str]:
    """``path`` and its ``keep`` newest rotations beside it, oldest first (server.log.1, server.log.2026-11-26-04,
    server.log.3.gz: log4j's DailyRollingFileAppender and logrotate name them so): a start whose recovery
    outlives a rotation is still whole. Bounded, because a poll every few seconds must not re-read weeks of logs.
    Only regular files count (the broker user owns the dir): a symlink, FIFO or device named like a rotation is
    left out, and ``skipped`` gets a note naming it."""
    import glob
    import stat

    rotated: list[tuple[float, str]] = []
    for p in glob.glob(glob.escape(path) + ".*"):
        try:
            st = os.lstat(p)
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode):
            rotated.append((st.st_mtime, p))
        elif skipped is not None and not stat.S_ISDIR(st.st_mode):
            from kafka_ops.engine.fileio import SYMLINK, kind_of

            why = (
                SYMLINK
                if stat.S_ISLNK(st.st_mode)
                else f"{kind_of(st.st_mode)}, not a regular file: not read"
            )
            skipped.append(f"{p}: {why}")
    rotated.sort()
    return [p for _, p in rotated[-keep:]] + ([path] if os.path.lexists(path) else [])


def read_all(
    paths: Iterable[str], keep_text: bool = True, unrecognised: list[str] | None = None
) -> list[Event]:
    """The events of several files; ``unrecognised`` gets the files without a single Kafka log line. (A list:
    for small inputs and tests; analyze() and the collector stream with :func:`stream`.)"""
    out: list[Event] = []
    for p in paths:
        counts: list[int] = []
        out.extend(read_events(p, keep_text, counts))
        if unrecognised is not None and not counts[0]:
            unrecognised.append(p)
    return out


def _timed(path: str, fi: int, lines: Iterable[str], keep_text: bool, count: list[int]) -> Iterator[Event]:
    last = ""
    for e in _events_of_lines(path, lines, 1, keep_text, count):
        t = norm_time(e.get("time"))
        if t is not None:
            last = t
        e["_t"] = last
        e["_f"] = fi
        yield e


def stream(
    paths: list[str],
    keep_text: bool = True,
    counts: list[list[int]] | None = None,
    notes: list[str] | None = None,
) -> Iterator[Event]:
    """The events of several files in time order (as :func:`ordered` sorts them: each file's events are in time
    order already, so the files are merged, not sorted), read line by line in constant memory. ``counts`` gets
    one [n] per file, n the Kafka log lines of it once the stream is consumed; ``notes`` what was not read (a
    compression bomb's rest)."""
    import heapq

    per_file = []
    for fi, p in enumerate(paths):
        count = [0]
        if counts is not None:
            counts.append(count)
        per_file.append(_timed(p, fi, read_lines(p, notes), keep_text, count))
    return heapq.merge(*per_file, key=lambda e: (e["_t"], e["_f"], int(e.get("line") or 0)))


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
    """Every cleaner-thread death in the logs, with what it was doing and whether it was restarted since
    (see :class:`Digest`, which reads them from a stream)."""
    return Digest(keep=None).feed_all(ordered(events)).deaths_list()


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
    _samples: int = 0  # progress lines with a time: rate() needs two
    _last_sample: tuple[float, int] | None = None

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
            self._samples += 1
            self._last_sample = (t, self.done)

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
        if self._samples < 2 or self._t0 is None or self._last_sample is None:
            return None
        t1, n1 = self._last_sample
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
    return list(Digest(total=total, keep=None).feed_all(ordered(events)).loads)


def start_state(events: Iterable[Event]) -> dict[str, Any]:
    """Where the broker's latest start stands (see Digest.start_state)."""
    return Digest().feed_all(ordered(events)).start_state()


KEEP = 1000  # analyze() keeps the newest KEEP of each kind of finding (counted in full): constant memory


class Digest:
    """What the logs say, read from a stream of events in time order (:func:`stream`, :func:`ordered`) in
    constant memory: only the state the answers need is kept, and at most ``keep`` of each kind of finding.

    Cleaner deaths: a death is restarted by a later "[kafka-log-cleaner-thread-N]: Starting" of the same thread
    (ShutdownableThread logs it when the thread starts: broker restart, or LogCleaner.reconfigure after a dynamic
    log.cleaner.* change), or by a later broker start logged before the cleaner starts ("Loading logs",
    "[KafkaServer id=N] starting"). "Kafka version" / "started" count only when the logs have none of those lines
    (see LATE_START_KINDS). What the thread was cleaning is the latest "Cleaning segment" (and the buffer growths
    after it) of the same cleaner in the same file since its "Beginning cleaning"; the exception and "Stopped"
    come within 200 lines after the error, before the next error.
    """

    def __init__(self, total: int | None = None, keep: int | None = KEEP) -> None:
        from collections import deque

        self.total = total
        self.keep = keep
        self.versions: deque[Event] = deque(maxlen=keep)
        self.rebuilds: deque[Event] = deque(maxlen=keep)
        self.zero: deque[Event] = deque(maxlen=keep)
        self.counts = {
            "versions": 0,
            "index_rebuilds": 0,
            "zero_timestamp_deletions": 0,
            "deaths": 0,
            "loads": 0,
        }
        self.uncleanable: set[str] = set()
        self.loads: deque[Load] = deque(maxlen=keep)
        self._cur: Load | None = None
        self._started_since_loading = False
        self._server_started: list[Any] = []  # [count, time] of KafkaServer/KafkaRaftServer "started" lines
        self.deaths: deque[CleanerDeath] = deque(maxlen=keep)
        self._ctx: dict[
            tuple[object, str], dict[str, Any]
        ] = {}  # (file, cleaner number) -> what it was doing
        self._open: dict[
            object, tuple[CleanerDeath, Event, dict[str, Any]]
        ] = {}  # file -> death reading its tail
        self._pending: deque[tuple[CleanerDeath, Event, dict[str, Any]]] = deque(maxlen=keep)
        self._strong = False

    def feed_all(self, events: Iterable[Event]) -> Digest:
        for e in events:
            self.feed(e)
        self.finish()
        return self

    def feed(self, e: Event) -> None:
        k = e["kind"]
        if k == "version":
            self.counts["versions"] += 1
            self.versions.append({"version": e["version"], "at": e.get("time"), "where": _where(e)})
        elif k in ("corrupt_index", "missing_index"):
            self.counts["index_rebuilds"] += 1
            self.rebuilds.append(
                {
                    "kind": "corrupt" if k == "corrupt_index" else "missing",
                    "file": e.get("target") or _index_file(e), "at": e.get("time"), "where": _where(e),
                    "text": e.get("text"),
                }
            )  # fmt: skip
        elif k == "zero_timestamp_delete":
            self.counts["zero_timestamp_deletions"] += 1
            self.zero.append(
                {
                    "at": e.get("time"), "where": _where(e), "partition": _partition_of(str(e.get("text") or "")),
                    "text": e.get("text"),
                }
            )  # fmt: skip
        elif k == "uncleanable" and e.get("partition") and len(self.uncleanable) < 100_000:
            self.uncleanable.add(str(e["partition"]))
        # loads (LogManager.loadLogs) and whether the broker serves after the latest one
        if k == "loading_logs" or (self._cur is None and k in PROGRESS_KINDS):
            self._cur = Load(started_at=e.get("time"), start_where=_where(e), total_override=self.total)
            self.loads.append(self._cur)
            self.counts["loads"] += 1
        if self._cur is not None:
            self._cur.feed(e)
        if k == "loading_logs":
            self._started_since_loading = False
        elif k == "broker_started":
            self._started_since_loading = True
            self._server_started = [(self._server_started or [0])[0] + 1, e.get("time")]
        self._cleaner(e, k)

    # ---- cleaner deaths
    def _cleaner(self, e: Event, k: str) -> None:
        f = e.get("file")
        # a restart after the deaths still waiting for one
        if k in START_KINDS or k == "cleaner_started":
            self._strong = True
        if k in START_KINDS or k == "cleaner_started" or k in LATE_START_KINDS:
            for d, de, st in self._pending:
                if not _is_after(e, de):
                    continue
                slot = "late" if k in LATE_START_KINDS else "strong"
                if st.get(slot) is not None or (k == "cleaner_started" and e.get("thread") != d.thread):
                    continue
                if k == "cleaner_started":
                    st[slot] = (e.get("time"), f"{d.thread} Starting at {_where(e)}")
                else:
                    what = {
                        "loading_logs": "broker start ('Loading logs')", "broker_starting": "broker start ('starting')",
                        "version": "broker start ('Kafka version')", "broker_started": "broker start ('started')",
                    }  # fmt: skip
                    st[slot] = (e.get("time"), f"{what[k]} at {_where(e)}")
        # the lines after a death: its exception and "Stopped"
        opened = self._open.get(f)
        if opened is not None and int(e.get("line") or 0) > int(opened[1].get("line") or 0) + 200:
            # past the window: closed before this line counts (the same answer whichever kinds of events the
            # caller kept, e.g. the audit's AUDIT_LOG_KINDS)
            self._close(f)
            opened = None
        if opened is not None:
            d, de, st = opened
            if int(e.get("line") or 0) == int(de.get("line") or 0) and k == "cleaner_exception":
                st["same_line"] = (
                    e  # a log flattened by a copy (seed 001's article): the line's own exception
                )
            if k in ("cleaner_exception", "exception") and d.exception is None:
                d.exception = str(e.get("exception"))
                d.detail = str(e.get("detail") or "") or None
            if k == "cleaner_exception" and e.get("size"):
                d.max_size = int(e["size"])
            if k == "cleaner_stopped" and e.get("thread") == d.thread:
                d.stopped = True
                self._close(f)
            elif k == "cleaner_error":
                self._close(f)
        # what each cleaner is doing (Cleaner.cleanSegments / LogCleaner.cleanLog / growBuffersOrFail)
        if k in ("cleaner_beginning", "cleaner_cleaning", "cleaner_growing"):
            key = (f, str(e.get("cleaner")))
            if k == "cleaner_beginning":
                self._ctx[key] = {"log": str(e["log"]), "cleaning": None, "growths": []}
            else:
                ctx = self._ctx.setdefault(key, {"log": None, "cleaning": None, "growths": []})
                if k == "cleaner_cleaning":
                    ctx["cleaning"] = (str(e["log"]), int(e["segment"]), str(e["deletes"]))
                    ctx["growths"] = []
                elif len(ctx["growths"]) < 64:
                    ctx["growths"].append(int(e["to_bytes"]))
        if k == "cleaner_error":
            thread = str(e["thread"])
            d = CleanerDeath(thread, e.get("time") or e.get("_t") or None, _where(e))
            was = self._ctx.get((f, _thread_number(thread)))
            if was is not None:
                if was["cleaning"] is not None:
                    d.log, d.segment, d.deletes = was["cleaning"]
                else:
                    d.log = was["log"]
                d.growths = list(was["growths"])
            self.counts["deaths"] += 1
            self.deaths.append(d)
            entry = (d, e, {"strong": None, "late": None, "same_line": None})
            self._open[f] = entry
            self._pending.append(entry)

    def _close(self, f: object) -> None:
        d, _de, st = self._open.pop(f)
        same = st.get("same_line")
        if same is not None:
            d.exception, d.detail = str(same.get("exception")), str(same.get("detail") or "") or None
            d.max_size = int(same["size"]) if same.get("size") else d.max_size

    def finish(self) -> None:
        for f in list(self._open):
            self._close(f)
        for d, _de, st in self._pending:
            found = st["strong"] if self._strong else st["late"]
            if found is not None:
                d.restarted_at, d.restart_evidence = found
        self._pending.clear()

    def deaths_list(self) -> list[CleanerDeath]:
        return list(self.deaths)

    def start_state(self) -> dict[str, Any]:
        """Where the broker's latest start stands: ``starts`` (log loads seen so far, so a caller can tell a new
        start from an old one), ``loading`` (its LogManager.loadLogs has not logged "Loaded N logs" yet),
        ``started`` (KafkaServer/KafkaRaftServer logged "started" after that load: the broker serves), and the
        load itself (unclean dirs, logs loaded of total). The rolling restart waits on it after each start.
        ``server_starts``/``server_started_at``: how many "started" lines, and the last one's time, whatever the
        loads: a controller-only node (process.roles=controller, 3.9.1 logs "[KafkaRaftServer nodeId=N] Kafka
        Server started" once its ControllerServer is up) has no LogManager.loadLogs to wait on, only the metadata
        log's own recovery, which logs no "Loaded N logs"."""
        last = self.loads[-1] if self.loads else None
        return {
            "server_starts": self._server_started[0] if self._server_started else 0,
            "server_started_at": self._server_started[1] if self._server_started else None,
            "starts": self.counts["loads"],
            "loading": bool(last is not None and not last.completed and last.failed is None),
            "completed": bool(last is not None and last.completed),
            "started": bool(last is not None and last.completed and self._started_since_loading),
            "failed": last.failed if last is not None else None,
            "load": last.to_dict() if last is not None else None,
        }


class AuditDigest(Digest):
    """What the audit's checks read from --broker-log (CLN001's cleaner deaths, CLN004's and the forecast's
    uncleanable partitions, the announced version), read from a stream in bounded memory as ``kafka-ops logs``
    reads it: at most KEEP deaths, one event per uncleanable partition (at most 100,000), the last version.
    (The audit kept every event of its kinds: 1M "Cleaning segment" lines held 1.07 GB.)"""

    MAX_PARTITIONS = 100_000

    def __init__(self) -> None:
        super().__init__(keep=KEEP)
        self.last_version: Event | None = None
        self.death_counts: dict[str, int] = {}  # per thread, every death (the kept ones are the newest KEEP)
        self.uncleanable_last: dict[str, Event] = {}  # partition -> its latest "uncleanable" line
        self.uncleanable_since_start: dict[str, Event] = {}  # the same, since the latest broker start
        self.events = 0

    def feed(self, e: Event) -> None:
        k = e["kind"]
        self.events += 1
        if k == "version":
            self.last_version = e
        elif k in START_KINDS:  # a new process: the uncleanable set lives in memory only
            self.uncleanable_since_start.clear()
        elif k == "uncleanable" and e.get("partition"):
            name = str(e["partition"])
            if name in self.uncleanable_last or len(self.uncleanable_last) < self.MAX_PARTITIONS:
                self.uncleanable_last[name] = e
                self.uncleanable_since_start[name] = e
        elif k == "cleaner_error":
            t = str(e["thread"])
            if t in self.death_counts or len(self.death_counts) < self.MAX_PARTITIONS:
                self.death_counts[t] = self.death_counts.get(t, 0) + 1
        super().feed(e)


def audit_digest(
    paths: list[str], kinds: frozenset[str], counts: list[list[int]], notes: list[str]
) -> AuditDigest:
    """The AuditDigest of ``paths``: one streamed pass over them in time order (:func:`stream`), the events of
    ``kinds`` fed. ``counts`` gets each file's number of Kafka log lines, ``notes`` what was not read."""
    g = AuditDigest()
    return g.feed_all(  # type: ignore[return-value]
        e for e in stream(paths, keep_text=False, counts=counts, notes=notes) if e["kind"] in kinds
    )


# ------------------------------------------------------------------------------------------------ report
def analyze(paths: list[str], digest: Digest | None = None) -> dict[str, Any]:
    """The report of ``kafka-ops logs``: a JSON-ready dict (``unrecognised``: files with no Kafka log line, whose
    silence is no clean bill; ``not_read``: what was left unread, a compression bomb's rest). The files are
    streamed once, in constant memory; ``digest`` (a fresh Digest) is filled for the caller's own questions."""
    counts: list[list[int]] = []
    notes: list[str] = []
    g = digest if digest is not None else Digest()
    g.feed_all(stream(paths, keep_text=True, counts=counts, notes=notes))
    unrecognised = [p for p, c in zip(paths, counts) if not c[0]]
    deaths = g.deaths_list()
    recs = [ld.to_dict() for ld in g.loads]
    unclean = [r for r in recs if r["unclean_dirs"]]
    kept = [
        f"kept the newest {g.keep} of {n} {what}"
        for what, n in (
            ("versions", g.counts["versions"]), ("cleaner deaths", g.counts["deaths"]),
            ("index rebuilds", g.counts["index_rebuilds"]),
            ("zero-timestamp deletions", g.counts["zero_timestamp_deletions"]), ("log loads", g.counts["loads"]),
        )
        if g.keep is not None and n > g.keep
    ]  # fmt: skip
    return {
        "files": paths,
        "unrecognised": [{"file": p, "error": NOTHING_RECOGNISED} for p in unrecognised],
        "not_read": [{"file": n.split(": ", 1)[0], "error": n.split(": ", 1)[1]} for n in notes],
        "kept": kept,
        "versions": list(g.versions),
        "cleaner_deaths": [d.to_dict() for d in deaths],
        "cleaner_dead_now": sorted({d.thread for d in deaths if d.dead_now}),
        "uncleanable_partitions": sorted(g.uncleanable),
        "index_rebuilds": list(g.rebuilds),
        "zero_timestamp_deletions": list(g.zero),
        "loads": recs,
        "unclean_recoveries": unclean,
        "summary": {
            "cleaner_deaths": g.counts["deaths"],
            "cleaner_threads_dead_now": len({d.thread for d in deaths if d.dead_now}),
            "index_rebuilds": g.counts["index_rebuilds"],
            "zero_timestamp_deletions": g.counts["zero_timestamp_deletions"],
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
# the bytes before a reader's offset it keeps: they tell the same file from one truncated and grown back past it
MARK = 64


def _holds(f: Any, offset: int, mark: bytes) -> bool:
    """The open file ``f`` holds ``mark`` just before ``offset`` (its position is left where it was)."""
    mark = mark[len(mark) - min(len(mark), offset) :]  # never more than was read
    if not mark:
        return True
    here = f.tell()
    f.seek(offset - len(mark))
    same: bool = f.read(len(mark)) == mark
    f.seek(here)
    return same


def truncated(f: Any, offset: int, mark: bytes) -> bool:
    """logrotate's copytruncate, as a reader at ``offset`` in the open log ``f`` tells it: the same file is shorter
    than what was read, or (grown back since) no longer holds the bytes read last."""
    return os.fstat(f.fileno()).st_size < offset or not _holds(f, offset, mark)


def copy_of_truncated(path: str, offset: int, mark: bytes) -> str | None:
    """The copy copytruncate left beside ``path`` (server.log.1, ...) that holds what a reader read up to
    ``offset`` (``mark`` just before it): the lines written between its last read and the copy are in it, after
    ``offset``. Only an uncompressed regular file; None when none holds them (or no mark to tell)."""
    import stat

    from kafka_ops.engine.errors import EngineError
    from kafka_ops.engine.fileio import open_regular

    if not mark:
        return None
    for p in reversed(with_rotations(path, keep=10)):
        try:
            st = os.lstat(p)
        except OSError:
            continue
        if p == path or not stat.S_ISREG(st.st_mode) or st.st_size < offset:
            continue
        try:
            with open_regular(p) as f:
                if _holds(f, offset, mark):
                    return p
        except (OSError, EngineError):
            continue
    return None


class Tail:
    """Lines appended to a growing log, across its rotations, each line once.

    - renamed away (log4j's RollingFileAppender: server.log -> server.log.1, a new server.log; logrotate's
      create): the open handle still reads the old file, so what was written to it before the rename and not yet
      read is read to its end (its half-written last line too: it will not grow), then the new file from its start;
    - truncated in place (logrotate's copytruncate): the same file is shorter than what was read, or (grown back
      since) no longer holds the bytes last read; the copy beside it (server.log.1 ...) that holds them gives the
      lines written between the last read and the copy, then the file is read from its start.
    Binary reads, the offset only past a complete line (a half-written last line waits for its end)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._f: Any = None
        self._id: tuple[int, int] | None = None
        self._offset = 0  # past the last complete line read
        self._mark = b""  # the bytes just before _offset
        self._pending = b""
        self.line_no = 0
        self.notes: list[str] = []  # what could not be read

    def _open(self) -> bool:
        from kafka_ops.engine.errors import EngineError
        from kafka_ops.engine.fileio import open_regular

        try:  # never through a link, never waiting on a FIFO put in the log's place
            self._f = open_regular(self.path)
        except (OSError, EngineError):
            self._f = None
            return False
        st = os.fstat(self._f.fileno())
        self._id = (st.st_dev, st.st_ino)
        self._offset, self._mark, self._pending, self.line_no = 0, b"", b"", 0
        return True

    def _lines(self, data: bytes, final: bool = False) -> list[tuple[int, str]]:
        """Split ``data`` (after what is pending) into complete lines; the rest waits, unless ``final``."""
        data = self._pending + data
        cut = len(data) if final else data.rfind(b"\n") + 1
        self._pending = data[cut:]
        if len(self._pending) > MAX_LINE:  # a line with no end in sight: cut, as read_lines cuts it
            cut, self._pending = len(data), b""
        if not cut:
            return []
        done = data[:cut]
        self._offset += len(done)
        self._mark = (self._mark + done)[-MARK:]
        out = []
        for raw in done.split(b"\n")[: -1 if done.endswith(b"\n") else None]:
            self.line_no += 1
            out.append(
                (self.line_no, strip_terminal(raw.decode("utf-8", "replace").removesuffix("\r")[:MAX_LINE]))
            )
        return out

    def _drain(self, f: Any, final: bool, max_chunks: int) -> list[tuple[int, str]]:
        out: list[tuple[int, str]] = []
        for _ in range(max_chunks):
            chunk = f.read(1 << 16)
            if not chunk:
                break
            out += self._lines(chunk)
        if final and self._pending:
            out += self._lines(b"", final=True)
        return out

    def _copy_of_truncated(self) -> list[tuple[int, str]]:
        """The lines copytruncate copied away before they were read: the rest of the copy beside the log."""
        from kafka_ops.engine.errors import EngineError
        from kafka_ops.engine.fileio import open_regular

        p = copy_of_truncated(self.path, self._offset, self._mark)
        if p is not None:
            try:
                with open_regular(p) as old:
                    old.seek(self._offset)
                    self._pending = b""
                    return self._drain(old, final=True, max_chunks=1 << 30)
            except (OSError, EngineError):
                pass
        self.notes.append(
            f"{self.path} was truncated and no copy beside it holds what was written after byte {self._offset}"
        )
        return []

    def read(self, max_chunks: int = 64) -> list[tuple[int, str]]:
        """Complete lines appended since the last call, at most ``max_chunks`` reads of 64 KiB at a time: call
        again until it returns nothing (a 200 MB log is never held whole)."""
        if self._f is None and not self._open():
            return []
        out: list[tuple[int, str]] = []
        if truncated(self._f, self._offset, self._mark):  # copytruncate, before reading on
            out = self._copy_of_truncated()
            self._f.seek(0)
            self._offset, self._mark, self._pending, self.line_no = 0, b"", b"", 0
        out += self._drain(self._f, final=False, max_chunks=max_chunks)
        if out:
            return out
        try:
            st = os.stat(self.path)
        except OSError:
            return []  # renamed and not created again yet: the next call looks again
        if (st.st_dev, st.st_ino) == self._id:
            return []
        # renamed away: what was written to it since the read above (the writer may have written until the
        # rename), a call at a time; at its end its half-written last line, then the new file from its start
        out = self._drain(self._f, final=False, max_chunks=max_chunks)
        if out:
            return out
        out = self._lines(b"", final=True) if self._pending else []
        self.close()
        return out + (self.read(max_chunks) if self._open() else [])

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
            done = False
            while not done:  # what is in the file now, in batches
                batch = tail.read()
                if not batch:
                    break
                for n, line in batch:
                    for e in parse_line(line):
                        e["file"], e["line"] = path, n
                        k = e["kind"]
                        if k == "loading_logs" or (load is None and k in PROGRESS_KINDS):
                            load = Load(
                                started_at=e.get("time"),  # type: ignore[arg-type]  # a str, or absent
                                start_where=_where(e), total_override=total,
                                total_fallback=total_fallback,
                            )  # fmt: skip
                        if load is not None:
                            load.feed(e)
                            changed = True
                    if not catching_up and load is not None and (load.completed or load.failed):
                        done = True
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


# ------------------------------------------------------------------------------------------------ the wait for a start
# LogLoader's "Recovering unflushed segment N. i/n recovered for TP." (3.x, LogLoader.scala @3.9 line 422; 2.x logs
# the base offset only), with its logIdent "[LogLoader partition=TP, dir=D] " (2.8+; "[Log partition=..." before)
_RECOVERING = re.compile(
    r"\[(?:LogLoader|Log|UnifiedLog) partition=(?P<partition>\S+?), dir=(?P<dir>[^\]]+)\] Recovering unflushed "
    r"segment (?P<base>\d+)(?:\. (?P<done>\d+)/(?P<of>\d+) recovered)?"
)
# LogManager.loadLogs' first line names every live log dir: "Loading logs from log dirs ArrayBuffer(/a, /b)" (3.x;
# a Scala collection's toString). Each dir's "Recovering/Skipping recovery of N logs" comes later, in loadLogs' loop
# over the dirs once it has listed that dir: until every dir has said its N, the total is not known.
_LOADING_DIRS = re.compile(r"Loading logs from log dirs \w*\((?P<dirs>[^)]*)\)")
_READ = 1 << 20


def _load_state(ld: Load) -> dict[str, Any]:
    import dataclasses

    return dataclasses.asdict(ld)


def _load_from(d: dict[str, Any]) -> Load:
    d = dict(d)
    d["dirs"] = {p: DirLoad(**v) for p, v in (d.get("dirs") or {}).items()}
    if d.get("_last_sample") is not None:
        d["_last_sample"] = tuple(d["_last_sample"])
    return Load(**d)


class StartWatch:
    """The wait for a start of the broker, read from its log incrementally: each :meth:`poll` reads only the lines
    appended since the last one. Its whole state (where the reading stopped: the file's device, inode and byte
    offset; what the lines read so far said) is :meth:`cursor`, a JSON-ready dict, so that a caller polling from
    separate processes (the rolling restart: one collector call over SSH per poll) carries it from one call to
    the next and never reads a line twice.

    Only the lines after the cursor count: a cursor taken before ``systemctl start`` (the file's inode and size)
    makes every load seen a new start. Rotation: when ``path`` is another file than the cursor's (log4j renamed it
    to server.log.1, logrotate moved it), the rest of the old file is read first, found beside it by its inode
    (a compressed or deleted one cannot be: a note says what was not read), then the new file from its start;
    when the same file is shorter than the offset (logrotate's copytruncate), it is read from its start again.
    A half-written last line waits for its end (the offset stays before it), but in a file rotated away, which
    will not grow any more."""

    def __init__(self, path: str, cursor: dict[str, Any] | None = None) -> None:
        c = cursor or {}
        self.path = path
        self.dev: int | None = int(c["dev"]) if c.get("dev") is not None else None
        self.ino: int | None = int(c["ino"]) if c.get("ino") is not None else None
        self.offset = int(c.get("offset") or 0)
        # the bytes just before the offset (hex): a copytruncate that grew back past the offset is told by them,
        # and the copy that holds them gives what was written after them (a mark taken with stat has none)
        self.mark = bytes.fromhex(str(c.get("mark") or ""))[-MARK:]
        self.line = int(c.get("line") or 0)
        self.starts = int(c.get("starts") or 0)
        self.started = bool(c.get("started"))
        # a "Kafka Server started" line after the cursor, whether or not logs were loaded: a KRaft controller-only
        # node loads none and logs only that ("[KafkaRaftServer nodeId=N] Kafka Server started", 3.9.1)
        self.server_started: str | None = c.get("server_started")
        self.load: Load | None = _load_from(c["load"]) if c.get("load") else None
        self.recovering: dict[str, Any] | None = c.get("recovering")
        self.last_at: str | None = c.get("last_at")
        self.notes: list[str] = []  # this call's: what could not be read
        self.read_bytes = 0  # this call's

    def cursor(self) -> dict[str, Any]:
        return {
            "dev": self.dev, "ino": self.ino, "offset": self.offset, "mark": self.mark.hex(), "line": self.line,
            "starts": self.starts,
            "started": self.started, "server_started": self.server_started,
            "load": _load_state(self.load) if self.load is not None else None,
            "recovering": self.recovering, "last_at": self.last_at,
        }  # fmt: skip

    def poll(self, until: float | None = None) -> None:
        """Read what was appended since the cursor (EngineError: the log is a link, a FIFO, unreadable); with
        ``until`` (time.monotonic), the live file only until then, a block at least: the cursor keeps the rest."""
        import stat

        from kafka_ops.engine.fileio import open_regular

        if not os.path.lexists(self.path):
            self.notes.append(f"{self.path}: no such file (yet)")
            return
        with open_regular(self.path) as f:
            st = os.fstat(f.fileno())
            if self.ino is not None and (st.st_dev, st.st_ino) != (self.dev, self.ino):
                self._drain_replaced(stat)
                self.offset = self.line = 0
                self.mark = b""
            elif truncated(f, self.offset, self.mark):
                self._read_copy(st.st_size)
                self.offset = self.line = 0
                self.mark = b""
            self.dev, self.ino = st.st_dev, st.st_ino
            self._read(f, final=False, until=until)

    def _read_copy(self, size: int) -> None:
        """The log was truncated in place: the lines written between the last read and logrotate's copy are in
        the copy beside it (copy_of_truncated), read from the offset to its end."""
        from kafka_ops.engine.fileio import open_regular

        copy = copy_of_truncated(self.path, self.offset, self.mark)
        if copy is not None:
            with open_regular(copy) as old:
                self._read(old, final=True)
            self.notes.append(
                f"{self.path}: truncated (logrotate copytruncate?): its copy {copy} read to its end, then it from its start"
            )
            return
        self.notes.append(
            f"{self.path}: shorter ({size} bytes) than where it was last read ({self.offset}), or no longer what was "
            "read there: truncated (logrotate copytruncate?), read again from its start"
            + ("" if not self.mark else "; no copy beside it holds what was written after the last read")
        )

    def _drain_replaced(self, stat: Any) -> None:
        from kafka_ops.engine.fileio import open_regular

        for p in reversed(with_rotations(self.path, keep=10)):
            try:
                st = os.lstat(p)
            except OSError:
                continue
            if p != self.path and stat.S_ISREG(st.st_mode) and (st.st_dev, st.st_ino) == (self.dev, self.ino):
                with open_regular(p) as old:
                    self._read(old, final=True)
                return
        self.notes.append(
            f"{self.path} was replaced and its previous file is not beside it uncompressed: what was written to "
            f"it after byte {self.offset} is not read"
        )

    def _read(self, f: Any, final: bool, until: float | None = None) -> None:
        f.seek(self.offset)
        pending = b""  # always starts at self.offset
        got = 0
        while True:
            if until is not None and got and time.monotonic() >= until:
                break  # a block at least; the rest is the next poll's (a rotated file is read whole: final)
            chunk = f.read(_READ)
            if not chunk:
                break
            got += len(chunk)
            self.read_bytes += len(chunk)
            data = pending + chunk
            cut = data.rfind(b"\n")
            if cut < 0:
                pending = data
                if len(pending) > MAX_LINE:  # a line with no end in sight: cut, as read_lines cuts it
                    self._lines(pending[:MAX_LINE])
                    self._advance(pending)
                    pending = b""
                continue
            self._lines(data[:cut])
            self._advance(data[: cut + 1])
            pending = data[cut + 1 :]
        if final and pending:
            self._lines(pending)
            self._advance(pending)

    def _advance(self, done: bytes) -> None:
        self.offset += len(done)
        self.mark = (self.mark + done[-MARK:])[-MARK:]

    def _lines(self, block: bytes) -> None:
        pos = self.offset  # where the block starts: events say where they are by byte (the cursor of a start
        # taken with stat knows no line number)
        for raw in block.split(b"\n"):
            self.line += 1
            line = strip_terminal(
                raw.decode("utf-8", "replace").removesuffix("\r")[:MAX_LINE]
            )  # as read_lines
            for e in parse_line(line):
                e["file"], e["line"] = self.path, f"byte {pos}"
                self._feed(e, line)
            pos += len(raw) + 1

    def _feed(self, e: Event, text: str) -> None:
        k = e["kind"]
        if k == "loading_logs" or (self.load is None and k in PROGRESS_KINDS):
            self.load = Load(started_at=e.get("time"), start_where=_where(e))
            listed = _LOADING_DIRS.search(text) if k == "loading_logs" else None
            for d in listed.group("dirs").split(", ") if listed else []:
                if d.startswith("/"):
                    self.load._dir(d)  # its total unknown until its own line comes
            self.starts += 1
            self.started = False
            self.recovering = None
        if k == "broker_started":
            self.server_started = str(e.get("time") or _where(e))
        if self.load is None:
            return
        self.load.feed(e)
        if e.get("time"):
            self.last_at = str(e["time"])
        if k == "broker_started":
            self.started = True
        elif k == "recovering_segment":
            m = _RECOVERING.search(text)
            if m:
                self.recovering = {key: v for key, v in m.groupdict().items() if v is not None}

    def start(self) -> dict[str, Any]:
        """Where the start stands, as :meth:`Digest.start_state` says it (``starts``: loads since the cursor)."""
        ld = self.load
        return {
            "starts": self.starts,
            "loading": bool(ld is not None and not ld.completed and ld.failed is None),
            "completed": bool(ld is not None and ld.completed),
            "started": bool(ld is not None and ld.completed and self.started),
            "server_started": self.server_started,
            "failed": ld.failed if ld is not None else None,
            "load": ld.to_dict() if ld is not None else None,
        }

    def progress(self) -> str:
        """One line for an operator watching the wait: what the log says so far."""
        ld = self.load
        if ld is None:
            if self.server_started:  # a controller-only node: no logs to load
                return f"'Kafka Server started' at {self.server_started} (no logs loaded: a controller)"
            return "no new start in its log yet (no 'Loading logs' line)"
        if ld.failed:
            return f"failed: {ld.failed}"
        total = ld.total
        loaded = f"{ld.done}/{total if total is not None else '?'} logs loaded"
        if ld.completed:
            took = f" in {ld.duration_ms} ms" if ld.duration_ms is not None else ""
            unclean = f", recovered {', '.join(ld.unclean_dirs)}" if ld.unclean_dirs else ""
            if self.started:
                return f"started: {loaded}{took}{unclean}"
            return f"logs loaded ({loaded}{took}{unclean}), no 'Kafka Server started' yet"
        dirs = list(ld.dirs.values())
        per_dir = "; ".join(
            f"{d.path} {'unclean' if d.unclean else 'clean' if d.unclean is False else ''}"
            f" {max(d.done, d.counted)}/{d.total if d.total is not None else '?'}".replace("  ", " ")
            for d in dirs[:4]
        ) + (f"; {len(dirs) - 4} more dirs" if len(dirs) > 4 else "")
        out = f"{'recovering' if ld.unclean_dirs else 'loading logs'}: {loaded}"
        out += f" ({per_dir})" if per_dir else ""
        if ld.segments_recovered:
            out += f", {ld.segments_recovered} unflushed segments recovered"
        r = self.recovering
        if r:
            of = f" ({r['done']}/{r['of']} recovered)" if r.get("of") else ""
            out += f", now {r['partition']} segment {r['base']}{of}"
        if self.last_at:
            out += f"; last line at {self.last_at}"
        return out


__all__ = [
    "CleanerDeath", "Digest", "DirLoad", "FollowResult", "Load", "StartWatch", "Tail", "analyze", "cleaner_deaths", "count_logs",
    "follow", "loads", "ordered", "read_all", "read_events", "stream",
]  # fmt: skip
