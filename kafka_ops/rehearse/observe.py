"""What the sandboxed broker did per log dir and per segment, from its own log lines, in ``next_start``'s schema.

The log lines' wording per release: the regexes of the lab's observer (kafka_lab/observe.py, checked against the
Kafka source at the tags 2.8.2, 3.5.2, 3.7.1, 3.9.0 and the 4.3.1 jars, and confirmed by the lab's runs); the
per-dir load lines of LogManager.loadLogs, checked in the 2.8.2, 3.7.2 and 4.3.1 release jars' string constants:

* a dir's load begins with "Skipping recovery for all logs in D since clean shutdown file was found" or "Attempting
  recovery for all logs in D since no clean shutdown file was found" (2.8), "Skipping recovery of N logs from D
  since clean shutdown file was found" or "Recovering N logs from D since no clean shutdown file was found" (3.x,
  4.x);
* each log's load ends with "Completed load of Log(dir=D/T-P, ...) ... in Xms (i/n loaded in D)" (2.8) or
  "(i/n completed in D)" (3.x, 4.x): the dir is loaded when i == n.

Before 2.6 (2.0-2.5, ZooKeeper mode) no INFO line names a dir's load: "Loading logs." begins the load of every dir
at once (LogManager.loadLogs@2.2.1:302; the clean-shutdown line is DEBUG, :316, so ``clean_shutdown`` stays None),
and each log's load ends with "[Log partition=T-P, dir=D] Completed load of log with N segments, log start offset S
and log end offset E in X ms" (Log.scala@2.2.1:214,310; the same words at 2.0.1 and 2.5.1): a dir's ``load_s`` runs
from "Loading logs." to its last log's completion, ``logs`` counts them. Recovery ("Recovering unflushed segment"),
rebuilt indexes and retention's "Found deletable segments" are worded as in 2.8 (Log.scala@2.2.1:476,480,603,1476);
deletions are "Scheduling log segment [baseOffset N, size S] for deletion." (Log.deleteSegment@2.2.1:1942), read
with their reason from the files and the lines before them (kafka_ops.rehearse.outcome.next_start).

The wall time of a dir's load (``load_s``) runs from its first line to its last log's completion: the real number
behind SHUT001's estimate of the recovery time (the copy-up of a filesystem without reflink adds to it, and the log's
timestamps are to the millisecond).
"""

from __future__ import annotations

import os
import re
from datetime import datetime
from typing import Any

from kafka_ops.rehearse.loglines import REBUILT as _REBUILT
from kafka_ops.rehearse.loglines import RECOVERING as _RECOVERING
from kafka_ops.rehearse.loglines import RECOVERY_DELETE as _RECOVERY_DELETE

_ENTRY = re.compile(r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3})\] (TRACE|DEBUG|INFO|WARN|ERROR|FATAL) (.*)$")
_PREFIX = re.compile(r"\[(?:Log|LogLoader|UnifiedLog|LocalLog) partition=([^,\]]+), dir=([^\]]+)\] ")
_DIR_START = re.compile(
    r"(?:(Skipping) recovery (?:for all logs in|of \d+ logs from)|(?:Attempting) recovery for all logs in"
    r"|(Recovering) \d+ logs from) (\S+) since (no )?clean shutdown file was found"
)
_DIR_DONE = re.compile(r"Completed load of .*\((\d+)/(\d+) (?:loaded|completed) in (\S+?)\)")
_ALL_START_OLD = "Loading logs. (kafka.log.LogManager)"  # 2.0-2.5
_LOG_DONE_OLD = "Completed load of log with "  # 2.0-2.5, under the [Log partition=T-P, dir=D] prefix
_WHOLE_LOG_DELETED = "Deleting segments as the log has been deleted"
_FOUND_DELETABLE = re.compile(r"Found deletable segments with base offsets \[([\d,]*)\] due to (.*)")


def _time(text: str) -> datetime:
    return datetime.strptime(text, "%Y-%m-%d %H:%M:%S,%f")


def _deleted_by(message: str) -> str | None:
    for words, by in (
        ("log truncation", "truncation"),
        ("retention time", "retention.ms"),
        ("retention size", "retention.bytes"),
        ("log start offset", "log_start_offset"),
        ("log recovery", "recovery"),
    ):
        if words in message:
            return by
    return None


def observe(text: str, dirs: list[str]) -> tuple[dict[str, dict[str, Any]], list[dict[str, Any]]]:
    """(per log dir: its load's wall time, logs, clean or not; the segments whose fate is not "loaded as is and
    kept": recovered, indexes rebuilt, deleted with the time and the reason)."""
    per_dir: dict[str, dict[str, Any]] = {
        d: {"load_s": None, "logs": None, "clean_shutdown": None, "_start": None} for d in dirs
    }
    real = {os.path.realpath(d): d for d in dirs} | {os.path.normpath(d): d for d in dirs}
    segs: dict[str, dict[str, Any]] = {}
    old_start: datetime | None = None  # 2.0-2.5: "Loading logs." and each dir's completed logs
    old_done: dict[str, list[datetime]] = {}

    def seg(log_dir: str, tp: str, base: int) -> dict[str, Any]:
        path = os.path.join(real.get(os.path.normpath(log_dir), log_dir), tp, f"{base:020d}.log")
        topic, _, part = tp.rpartition("-")
        return segs.setdefault(
            path,
            {"log": path, "topic": topic, "partition": int(part) if part.isdigit() else None, "base_offset": base,
             "load": "as_is", "truncated_bytes": 0, "deleted_at": None, "deleted_by": None},
        )  # fmt: skip

    for line in text.splitlines():
        m = _ENTRY.match(line)
        if not m:
            continue
        at, msg = _time(m[1]), m[3]
        if msg == _ALL_START_OLD and old_start is None:
            old_start = at
        elif x := _DIR_START.search(msg):
            d = real.get(os.path.normpath(x[3].rstrip(".,")))
            if d is not None and per_dir[d]["_start"] is None:
                per_dir[d]["_start"] = at
                per_dir[d]["clean_shutdown"] = x[4] is None
                per_dir[d]["load_s"] = 0.0  # a dir with no logs: no completion line follows
        elif x := _DIR_DONE.search(msg):
            d = real.get(os.path.normpath(x[3]))
            if d is not None and per_dir[d]["_start"] is not None and x[1] == x[2]:
                per_dir[d]["logs"] = int(x[2])
                per_dir[d]["load_s"] = round((at - per_dir[d]["_start"]).total_seconds(), 3)
        p = _PREFIX.search(msg)
        if not p:
            continue
        tp, log_dir = p[1], p[2]
        if (
            msg[p.end() :].startswith(_LOG_DONE_OLD)
            and (d := real.get(os.path.normpath(log_dir))) is not None
        ):
            old_done.setdefault(d, []).append(at)
        if x := _RECOVERING.search(msg):
            seg(log_dir, tp, int(x[1]))["load"] = "recovered"
        elif x := _REBUILT.search(msg):
            s = seg(log_dir, tp, int(os.path.basename(x[1])[:20]))
            if s["load"] == "as_is":
                s["load"] = "indexes_rebuilt"
        if _WHOLE_LOG_DELETED in msg:
            # a -delete dir's segments, removed with their dir, under the live partition's prefix (T-P, the
            # log dir): not that partition's segments. Their fate is the -delete dir's, read from the files
            # (outcome.py); seen on 3.7.2 in the lab's `unclean` trial, where this line made the rehearsal report
            # the live gone-0's segments deleted
            continue
        if x := _RECOVERY_DELETE.search(msg):
            bases, by = [int(b) for b in re.findall(r"baseOffset=(\d+)", x[1])], "recovery"
        elif "Deleting segment" in msg and "Deleting segment files" not in msg:
            bases, by = [int(b) for b in re.findall(r"baseOffset=(\d+)", msg)], _deleted_by(msg)
        elif x := _FOUND_DELETABLE.search(msg):
            bases, by = [int(b) for b in x[1].split(",") if b.strip()], _deleted_by(x[2])
        else:
            bases, by = [], None
        for b in bases:
            s = seg(log_dir, tp, b)
            if s["deleted_at"] is None:
                s["deleted_at"] = at.isoformat(timespec="milliseconds")
                s["deleted_by"] = by
    for d, v in per_dir.items():
        if v.pop("_start") is None and old_start is not None:
            done = old_done.get(d, [])
            v["logs"] = len(done)
            v["load_s"] = round((max(done) - old_start).total_seconds(), 3) if done else 0.0
    return per_dir, sorted(segs.values(), key=lambda s: s["log"])
