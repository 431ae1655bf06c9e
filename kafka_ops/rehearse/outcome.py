"""What a broker did at a start, in the shape of the model's prediction (``next_start`` of ``kafka-ops audit
--format json``): one reader for the broker lab's real starts (kafka_lab.observe) and the rehearsal's sandboxed
ones (kafka_ops.rehearse.run, which takes ``after`` of the sandbox's own view of the dirs before it ends).

Two sources, combined by :func:`next_start`:

* the broker's own log of that start (:func:`parse_log`): the load, recovery, rebuild, retention and log-dir
  failure lines. Their wording per release was checked against the Kafka source at the tags (2.8.2, 3.5.2,
  3.7.1, 3.9.0) and the 4.3.1 jars' string constants, and the lab runs confirm them (tests/lab/OBSERVED.md):
  prefixes ``[Log partition=T-P, dir=D]`` (2.8) and ``[LogLoader|UnifiedLog|LocalLog partition=T-P, dir=D]``
  (3.x, 4.x);
* two :func:`snapshot` s of every file in the log dirs, before the start and after the broker stopped (take
  ``after`` only once it stopped: a running broker holds its active segment's indexes preallocated): a ``.log``
  that shrank was truncated by that many bytes, an index whose content changed was rebuilt, a segment whose
  ``.log`` is gone (or renamed ``.deleted``) was deleted.

Only segments whose fate differs from "loaded as is and kept" are listed, as in the prediction. ``deleted_by``
names what deleted a segment: ``retention.ms``, ``retention.bytes``, ``log_start_offset`` or ``recovery`` (the
segments after a corrupt one), None if no log line says.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import os
import re
import stat
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kafka_ops.engine.layout import METADATA_TOPIC, parse_partition_dir

# the broker's own lines for an offline dir, an exit, a recovery: one list, the product's (the rehearsal reads them)
from kafka_ops.rehearse.loglines import ALL_FAILED as _ALL_FAILED
from kafka_ops.rehearse.loglines import DIR_FAILURES as _DIR_FAILURES
from kafka_ops.rehearse.loglines import FATAL as _FATAL
from kafka_ops.rehearse.loglines import REBUILT as _REBUILT
from kafka_ops.rehearse.loglines import RECOVERING as _RECOVERING
from kafka_ops.rehearse.loglines import RECOVERY_DELETE as _RECOVERY_DELETE

HASH_LIMIT = 64 * 1024 * 1024
_ENTRY = re.compile(
    r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3})\] (TRACE|DEBUG|INFO|WARN|ERROR|FATAL) (.*?)(?: \(([\w.$]+)\))?$"
)
_PREFIX = re.compile(r"\[(?:Log|LogLoader|UnifiedLog|LocalLog) partition=([^,\]]+), dir=([^\]]+)\] ")
# 0.10.2 has no prefix: the partition ends the message ("Recovering unflushed segment 0 in log t-0.",
# "Scheduling log segment 0 for log t-0 for deletion.", Log.scala@0.10.2.2)
_OLD_PARTITION = re.compile(r" (?:in|for|from) log (\S+?)\.?(?= |$)")
_SEGMENT_FILE = re.compile(r"^(\d{20})\.(log|index|timeindex|txnindex)$")


# -- files ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FileState:
    size: int
    mtime_ns: int
    inode: int
    mode: int
    uid: int
    is_dir: bool
    sha1: str | None  # files up to HASH_LIMIT


@dataclass
class Snapshot:
    """Every file and dir under the log dirs at one moment (``taken_at``: epoch seconds)."""

    taken_at: float
    log_dirs: list[str]
    files: dict[str, FileState]

    def segment_logs(self) -> list[str]:
        """The ``.log`` of every segment, by path."""
        return sorted(
            p for p in self.files if _SEGMENT_FILE.match(os.path.basename(p)) and p.endswith(".log")
        )


def _sha1(path: str, size: int) -> str | None:
    if size > HASH_LIMIT:
        return None
    h = hashlib.sha1()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def snapshot(
    log_dirs: Iterable[Path | str], hash_limit: int = HASH_LIMIT, *, resolve: bool = True
) -> Snapshot:
    """Stat (and hash, up to ``hash_limit`` bytes a file) every file under the log dirs, links not followed (as
    root: root-owned and mode-000 files are read too). The rehearsal hashes nothing (``hash_limit`` -1): a host's
    terabytes are compared by size (a .log that shrank was truncated)."""
    # resolve=False: paths under /proc/<pid>/root, a magic link that resolve() would follow to the host's root
    dirs = [str(Path(d).resolve()) if resolve else os.path.normpath(d) for d in log_dirs]
    files: dict[str, FileState] = {}
    for top in dirs:
        for root, subdirs, names in os.walk(top):
            for name in subdirs + names:
                path = os.path.join(root, name)
                st = os.lstat(path)
                is_dir = stat.S_ISDIR(st.st_mode)
                digest = None
                if stat.S_ISREG(st.st_mode) and st.st_size <= hash_limit:
                    try:
                        digest = _sha1(path, st.st_size)
                    except PermissionError:
                        digest = None
                files[path] = FileState(
                    st.st_size, st.st_mtime_ns, st.st_ino, stat.S_IMODE(st.st_mode), st.st_uid, is_dir, digest
                )
    return Snapshot(time.time(), dirs, files)


# -- the broker's log ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LogEntry:
    time: dt.datetime
    level: str
    message: str  # without the [Class partition=.., dir=..] prefix
    logger: str
    partition: str | None = None  # "topic-partition" from the prefix
    dir: str | None = None
    extra: tuple[str, ...] = ()  # continuation lines (stack trace)

    @property
    def line(self) -> str:
        return f"{self.level} {self.message}"


def parse_log(text: str) -> list[LogEntry]:
    """Entries of a log written with Kafka's pattern ``[%d] %p %m (%c)%n`` (the lab's JVMs run in dt.timezone.utc)."""
    out: list[LogEntry] = []
    extra: list[str] = []
    for raw in text.splitlines():
        m = _ENTRY.match(raw)
        if not m:
            if out and raw.strip():
                extra.append(raw.rstrip())
            continue
        if out and extra:
            out[-1] = _with_extra(out[-1], extra)
        extra = []
        ts = dt.datetime.strptime(m[1], "%Y-%m-%d %H:%M:%S,%f").replace(tzinfo=dt.timezone.utc)
        msg, partition, ldir = m[3], None, None
        p = _PREFIX.search(msg)
        if p:
            partition, ldir = p[1], p[2]
            msg = msg[: p.start()] + msg[p.end() :]
        elif o := _OLD_PARTITION.search(msg):
            partition = o[1]
        out.append(LogEntry(ts, m[2], msg, m[4] or "", partition, ldir))
    if out and extra:
        out[-1] = _with_extra(out[-1], extra)
    return out


def _with_extra(e: LogEntry, extra: list[str]) -> LogEntry:
    return LogEntry(e.time, e.level, e.message, e.logger, e.partition, e.dir, tuple(extra))


_LOADED = re.compile(r"Completed load of \w*Log\(dir=([^,)]+)")
# 0.10.2: "Found a corrupted index file due to <why>}. deleting <d>/<base>.timeindex, <d>/<base>.index and
# rebuilding index..." (Log.loadSegments @0.10.2.2)
_REBUILT_OLD = re.compile(r"deleting \S+\.timeindex, (\S+)\.index and rebuilding index")
_DELETING = re.compile(r"Deleting segments? .*?baseOffset=(\d+)")
_FOUND_DELETABLE = re.compile(r"Found deletable segments with base offsets \[([\d,]*)\] due to (.*)")
_SCHEDULING = re.compile(
    r"Scheduling log segment \[?(?:baseOffset )?(\d+)"
)  # 0.10.2: "segment 0 for log t-0"
# LogManager.deleteLogs (every release): "Deleted log for partition t-0 in /d/t-0.<uuid>-delete." -- the whole dir
_DELETED_DIR = re.compile(r"Deleted log for partition \S+ in (\S+?)\.?$")
# an interrupted swap completed at load: "Found log file <d>/<base>.log.swap from interrupted swap operation, ..."
# (Log.completeSwapOperations up to 2.8, LogLoader from 3.0)
_SWAP_FOUND = re.compile(r"Found (?:log )?file (\S+\.swap) from interrupted swap operation")
_TRUNCATING = re.compile(r"Corruption found in segment (\d+), truncating to offset (\d+)")


def offline_dirs(entries: Sequence[LogEntry]) -> list[str]:
    """Log dirs the broker took offline (or failed to start with) in this log."""
    out: list[str] = []
    for e in entries:
        for rx in _DIR_FAILURES:
            m = rx.search(e.message)
            if m:
                out.append(m[1].rstrip(".,"))
        m = _ALL_FAILED.search(e.message)
        if m:
            out += [d.strip() for d in m[1].split(",")]
    return list(dict.fromkeys(os.path.normpath(d) for d in out))


# Kafka's fatal() logs at ERROR (2.8, 3.x) or FATAL; these say the broker is going down


def exit_reason(entries: Sequence[LogEntry]) -> str | None:
    """Why the broker exited: its first fatal entry (else the last ERROR), with the exception line after it."""
    fatal = [e for e in entries if e.level == "FATAL" or (e.level == "ERROR" and _FATAL.search(e.message))]
    fatal = fatal or [e for e in entries if e.level == "ERROR"][-1:]
    if not fatal:
        return None
    e = fatal[0]
    cause = next((x.strip() for x in e.extra if not x.lstrip().startswith("at ")), "")
    return f"{e.message}: {cause}" if cause else e.message


def _deleted_by(message: str) -> str | None:
    if "log truncation" in message:
        return "truncation"
    if "retention time" in message:
        return "retention.ms"
    if "retention size" in message:
        return "retention.bytes"
    if "log start offset" in message:
        return "log_start_offset"
    if "log recovery" in message:
        return "recovery"
    return None


def _iso(t: dt.datetime) -> str:
    return t.isoformat(timespec="milliseconds")


# -- the observation -----------------------------------------------------------------------------------------


@dataclass
class Observation:
    """``next_start`` (the prediction's shape) plus the relevant log entries behind it."""

    next_start: dict[str, Any]
    entries: list[LogEntry] = field(default_factory=list)
    # per segment (.log path) whose files changed: suffix -> [size before, size after, content changed]
    changes: dict[str, dict[str, list[Any]]] = field(default_factory=dict)
    # partition dirs the start created (e.g. a pre-JBOD KRaft broker recreating, empty, a partition whose
    # log dir is offline in another log dir)
    created: list[str] = field(default_factory=list)

    def segment(self, log: Path | str) -> dict[str, Any] | None:
        """The listed fate of one segment (by its ``.log`` path), None if it was loaded as is and kept."""
        return next((s for s in self.next_start["segments"] if s["log"] == str(log)), None)

    def partition(self, partition_dir: Path | str) -> list[dict[str, Any]]:
        """The listed segments of one partition."""
        prefix = str(partition_dir).rstrip("/") + "/"
        return [s for s in self.next_start["segments"] if s["log"].startswith(prefix)]

    def dir_state(self, log_dir: Path | str) -> str:
        return next(
            d["state"] for d in self.next_start["log_dirs"] if d["path"] == str(Path(log_dir).resolve())
        )

    def lines(self, pattern: str, partition: str | None = None) -> list[str]:
        """The entries matching a regex (optionally of one partition), as ``LEVEL message``."""
        rx = re.compile(pattern)
        return [
            e.line
            for e in self.entries
            if rx.search(e.message)
            and (partition is None or e.partition == partition or partition in e.message)
        ]


def next_start(before: Snapshot, after: Snapshot, log: str, *, exit_code: int | None = None) -> Observation:
    """What the start whose broker log is ``log`` did to the files of ``before`` (``after``: once stopped).

    ``exit_code`` is the broker's own exit (None when it started and we stopped it).
    """
    entries = parse_log(log)
    offline = set(offline_dirs(entries))
    exited = exit_code is not None
    dirs = [{"path": d, "state": "offline" if d in offline else "online"} for d in before.log_dirs]
    loaded = {os.path.normpath(m[1]) for e in entries if (m := _LOADED.search(e.message))}
    recovering: dict[str, set[int]] = {}
    rebuilt: set[str] = set()
    deleted: dict[tuple[str, int], tuple[str, str | None]] = {}
    for e in entries:
        if e.partition and (m := _RECOVERING.search(e.message)):
            recovering.setdefault(e.partition, set()).add(int(m[1]))
        if m := _REBUILT.search(e.message):
            rebuilt.add(os.path.normpath(m[1]))
        elif m := _REBUILT_OLD.search(e.message):
            rebuilt.add(os.path.normpath(m[1] + ".log"))
        if e.partition and (m := _RECOVERY_DELETE.search(e.message)):
            for b in re.findall(r"baseOffset=(\d+)", m[1]):
                deleted.setdefault((e.partition, int(b)), (_iso(e.time), "recovery"))
        elif e.partition and "Deleting segment" in e.message and "Deleting segment files" not in e.message:
            for b in re.findall(r"baseOffset=(\d+)", e.message):
                deleted.setdefault((e.partition, int(b)), (_iso(e.time), _deleted_by(e.message)))
        elif e.partition and (m := _FOUND_DELETABLE.search(e.message)):
            # up to 2.6: "Found deletable segments with base offsets [0,60] due to retention time 86400000ms
            # breach" (Log.deleteOldSegments @2.2.1), the files renamed .deleted at once
            for b in m[1].split(","):
                if b.strip():
                    deleted.setdefault((e.partition, int(b)), (_iso(e.time), _deleted_by(m[2])))
        elif e.partition and (m := _SCHEDULING.search(e.message)):
            # up to 2.6 every segment deletion (retention, recovery) logs this as it renames the files .deleted
            # (Log.deleteSegment @1.1.1, asyncDeleteSegment @2.2.1); the reason, if any, came before
            deleted.setdefault((e.partition, int(m[1])), (_iso(e.time), None))
    dirs_deleted = {
        os.path.normpath(m[1]): _iso(e.time) for e in entries if (m := _DELETED_DIR.search(e.message))
    }
    swapped: dict[str, str] = {}  # partition dir -> time of its first swap line
    for e in entries:
        if m := _SWAP_FOUND.search(e.message):
            swapped.setdefault(os.path.normpath(os.path.dirname(m[1])), _iso(e.time))
    segments = []
    changes: dict[str, dict[str, list[Any]]] = {}
    # a partition dir renamed <dir>.<uuid>-stray or -delete: its segments are compared with their renamed files
    # (gone once the -delete dir is removed; the old path may hold a new, empty dir of the live partition by now)
    moved = future_dirs(before, after)
    moved_away = strays(before, after, moved)
    renamed = {st["path"]: st["renamed_to"] for st in moved_away if st["renamed_to"]}
    # a -future dir renamed <tp> (its move completed): its segments are compared with their renamed files
    renamed |= {m["path"]: m["renamed_to"] for m in moved if m["renamed_to"]}
    # the current dir each completed move renamed -delete: its segments go with that dir
    replaced = {
        p: _deleted_as(p, dirs_deleted)
        for m in moved
        if m["renamed_to"]
        for p in before.files
        if os.path.basename(p) == os.path.basename(m["renamed_to"]) and os.path.dirname(p) in before.log_dirs
    }
    whole_after = after
    if renamed:
        after = _follow_renames(after, renamed)
    for log_path in before.segment_logs():
        pdir = os.path.dirname(log_path)
        ldir = os.path.dirname(pdir)
        name = parse_partition_dir(os.path.basename(pdir))
        if name is None:
            continue  # not a partition dir (the broker refuses to start with it)
        tp = f"{name.topic}-{name.partition}"
        base = int(os.path.basename(log_path)[:20])
        prefix = log_path[:-4]
        seg: dict[str, Any] = {
            "log": log_path,
            "topic": name.topic,
            "partition": name.partition,
            "base_offset": base,
            "load": "as_is",
            "truncated_bytes": 0,
            "deleted_at": None,
            "deleted_by": None,
        }
        if ldir in offline or (exited and pdir not in loaded):
            seg["load"] = "not_loaded"
            segments.append(seg)
            continue
        now = after.files.get(log_path)
        was = before.files[log_path]
        changed = _changes(before, after, prefix)
        if changed:
            changes[log_path] = changed
        if name.kind != "delete" and base in recovering.get(tp, set()):
            seg["load"] = "recovered"
        elif log_path in rebuilt or _recreated_with_entries(changed):
            seg["load"] = "indexes_rebuilt"
        swap_was = before.files.get(log_path + ".swap")
        if now is not None and swap_was is not None and now.sha1 is not None and now.sha1 == swap_was.sha1:
            seg["load"] = "swapped_in"  # the .log is now the swap's records
        if now is None and os.path.normpath(pdir) in swapped:
            seg["deleted_at"], seg["deleted_by"] = swapped[os.path.normpath(pdir)], "swap"
            seg["deleted"] = True
        elif now is None and pdir in replaced:
            seg["deleted_at"] = replaced[pdir]
            seg["deleted_by"] = "delete_dir" if replaced[pdir] else None
            seg["deleted"] = True
        elif now is None and name.kind == "delete":
            # a -delete dir's lines carry the live partition's prefix: only its own "Deleted log" line counts
            at = dirs_deleted.get(os.path.normpath(pdir))
            seg["deleted_at"], seg["deleted_by"] = at, "delete_dir" if at else None
            seg["deleted"] = True
        elif now is None:
            at, by = deleted.get((tp, base), (None, None))
            seg["deleted_at"], seg["deleted_by"] = at, by
            if at is None and (log_path + ".deleted") not in after.files:
                seg["deleted_by"] = None
            seg["deleted"] = True
        elif now.size < was.size:
            seg["truncated_bytes"] = was.size - now.size
        if seg["load"] != "as_is" or seg["truncated_bytes"] or seg.get("deleted"):
            seg.pop("deleted", None)
            segments.append(seg)
    after = whole_after
    relevant = [e for e in entries if _relevant(e)]
    out = {
        "broker": "exits" if exited else "starts",
        "reason": exit_reason(entries) if exited else None,
        "log_dirs": dirs,
        "segments": segments,
        "leftovers": leftovers(before, after),
        "strays": moved_away,
        "future_dirs": moved,
    }
    created = sorted(
        p
        for p, st in after.files.items()
        if st.is_dir and os.path.dirname(p) in after.log_dirs and p not in before.files
    )
    return Observation(out, relevant, changes, created)


# any name: the loader goes by the suffix (a KRaft snapshot's .checkpoint.deleted is the metadata log's own)
_LEFTOVER_FILE = re.compile(r"^(?!.*\.checkpoint\.deleted$).+\.(deleted|cleaned)$")


def leftovers(before: Snapshot, after: Snapshot) -> list[dict[str, Any]]:
    """Every ``*.deleted`` and ``*.cleaned`` file of a partition dir before the start, and its fate: gone
    after the stop (``deleted_at_load``: the broker deletes them only when it loads the partition) or ``kept``.
    The broker logs these deletions at debug level only, so the files say it."""
    out = []
    for path in sorted(before.files):
        m = _LEFTOVER_FILE.match(os.path.basename(path))
        if (
            m is None
            or before.files[path].is_dir
            or parse_partition_dir(os.path.basename(os.path.dirname(path))) is None
        ):
            continue
        fate = "kept" if path in after.files else "deleted_at_load"
        out.append({"path": path, "kind": m[1], "fate": fate})
    return out


def strays(
    before: Snapshot, after: Snapshot, moved: list[dict[str, Any]] | None = None
) -> list[dict[str, Any]]:
    """Every live partition dir (not the metadata log's) that the start moved away, and how: renamed
    ``<dir>.<uuid>-stray`` and kept (``renamed_stray``), renamed ``-delete`` (``deleted``: gone by now, or queued
    for the kafka-delete-logs task), or gone without either name left (``deleted`` too: the -delete dir was
    removed within the watch). A dir still in place and not renamed is not listed: the broker kept it. (A dir in
    place may be a new one: a stray whose topic name the metadata has, under another id, is renamed away and the
    broker creates the live partition's dir anew, empty, at the same path.)"""
    out = []
    # ``moved``: future_dirs(before, after), when the caller has it
    futures = {m["path"]: m for m in (future_dirs(before, after) if moved is None else moved)}
    by_move = {  # partitions whose -future dir replaced the current one: that rename -delete is the move's
        os.path.basename(m["renamed_to"]) for m in futures.values() if m["renamed_to"]
    }
    for path in sorted(before.files):
        parent = os.path.dirname(path)
        name = parse_partition_dir(os.path.basename(path))
        if os.path.basename(path) in by_move:
            continue
        if (
            parent not in before.log_dirs
            or not before.files[path].is_dir
            or name is None
            or name.kind not in ("log", "future")
            or name.topic == METADATA_TOPIC
            or path in futures  # a -future dir kept or moved in: not a stray
        ):
            continue
        tp = f"{name.topic}-{name.partition}"  # a stray is renamed <tp>.<uuid>-stray / -delete, a -future one too
        moved = sorted(
            p
            for p, st in after.files.items()
            if st.is_dir
            and os.path.dirname(p) == parent
            and p not in before.files
            and re.fullmatch(re.escape(tp) + r"\.[0-9a-f]{32}-(stray|delete)", os.path.basename(p))
        )
        if path in after.files and not moved:
            continue  # kept
        fate = "renamed_stray" if any(p.endswith("-stray") for p in moved) else "deleted"
        out.append({"path": path, "fate": fate, "renamed_to": moved[0] if moved else None})
    return out


def _deleted_as(pdir: str, dirs_deleted: dict[str, str]) -> str | None:
    """When the broker removed ``pdir`` renamed ``<pdir>.<uuid>-delete`` ("Deleted log for partition ..."), or None."""
    pattern = re.compile(re.escape(os.path.normpath(pdir)) + r"\.[0-9a-f]{32}-delete")
    return next((t for d, t in dirs_deleted.items() if pattern.fullmatch(d)), None)


def future_dirs(before: Snapshot, after: Snapshot) -> list[dict[str, Any]]:
    """Every ``-future`` dir before the start and its fate: ``replaces_current`` when it is gone and a dir of the
    partition's own name, absent before, is in its log dir after (``LogManager.replaceCurrentWithFutureLog``
    renamed it), ``kept`` when it is still there. One gone otherwise is a stray's (``strays``), not listed."""
    out = []
    for path in sorted(before.files):
        parent = os.path.dirname(path)
        name = parse_partition_dir(os.path.basename(path))
        if (
            parent not in before.log_dirs
            or not before.files[path].is_dir
            or name is None
            or name.kind != "future"
        ):
            continue
        target = os.path.join(parent, f"{name.topic}-{name.partition}")
        if path in after.files:
            out.append({"path": path, "fate": "kept", "renamed_to": None})
        elif target in after.files and target not in before.files and after.files[target].is_dir:
            out.append({"path": path, "fate": "replaces_current", "renamed_to": target})
        # else gone (renamed -stray or -delete, or deleted): a stray future log, which ``strays`` lists
    return out


def _follow_renames(after: Snapshot, renamed: dict[str, str]) -> Snapshot:
    """``after`` with each renamed dir's files under their old path (the files now at the old path dropped; none
    when the renamed dir is gone too)."""
    files = {p: st for p, st in after.files.items() if os.path.dirname(p) not in renamed}
    for old, new in renamed.items():
        for p, st in after.files.items():
            if os.path.dirname(p) == new:
                files[os.path.join(old, os.path.basename(p))] = st
    return dataclasses.replace(after, files=files)


def _changes(before: Snapshot, after: Snapshot, prefix: str) -> dict[str, list[Any]]:
    """Per segment file that changed: ``[size before, size after, content changed]`` (None: absent)."""
    out: dict[str, list[Any]] = {}
    for suffix in (".log", ".index", ".timeindex", ".txnindex"):
        b, a = before.files.get(prefix + suffix), after.files.get(prefix + suffix)
        if b is None and a is None:
            continue
        differs = b is None or a is None or b.size != a.size or bool(b.sha1 and a.sha1 and b.sha1 != a.sha1)
        if differs or (b is not None and a is not None and (b.mode, b.uid) != (a.mode, a.uid)):
            out[suffix] = [b.size if b else None, a.size if a else None, differs]
    return out


def _recreated_with_entries(changed: dict[str, list[Any]]) -> bool:
    """A silent rebuild: an index absent before the start holds entries after it (an empty recreated
    ``.timeindex`` is not a rebuild: the broker only created it)."""
    return any(changed.get(s, [1])[0] is None and (changed[s][1] or 0) > 0 for s in (".index", ".timeindex"))


_RELEVANT = re.compile(
    r"Recovering|recovery|Found a corrupted|Could not find (?:offset )?index|Corruption found|invalid offset"
    r"|Deleting segment|Incremented log start offset|Stopping serving logs|Shutdown broker|Halting broker"
    r"|Error while loading log dir|Failed to create or validate|Could not read file|lost\+found|not in the form"
    r"|Deleted log for partition|stray log|interrupted swap|compacted but has not been deleted"
    r"|clean shutdown|cleanshutdown|Completed load of|Loaded \d+ logs|meta\.properties|cluster\.id|offline"
    r"|Created log for partition|Found deletable segments|Scheduling log segment"
)


_NOISE = re.compile(r"Producer state recovery took|Performing controller activation")


def _relevant(e: LogEntry) -> bool:
    if _NOISE.search(e.message):
        return False
    return e.level in ("WARN", "ERROR", "FATAL") or bool(_RELEVANT.search(e.message))
