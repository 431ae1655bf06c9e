"""Kafka's own reader of log-dir files, DumpLogSegments, run from the lab's jars, and its output parsed.

``kafka-dump-log.sh`` is ``kafka.tools.DumpLogSegments`` (core, Scala) up to 4.2 and
``org.apache.kafka.tools.DumpLogSegments`` (tools, Java) from 4.3 (../shared/reference/kafka-lab.md §4). What it
prints, per release (core/src/main/scala/kafka/tools/DumpLogSegments.scala at 2.8.2, 3.5.2, 3.7.x, 3.9.x;
tools/src/main/java/org/apache/kafka/tools/DumpLogSegments.java from 4.3):

* stdout, per file: ``Dumping <file as given>``, then
  - ``.log``: ``Starting offset: N`` (2.8) / ``Log starting offset: N`` (3.0+); KRaft ``.checkpoint`` (3.3+):
    ``Snapshot end offset: N, epoch: E`` (``bootstrap.checkpoint``: ``KRaft bootstrap snapshot``); one line per
    batch (``printBatchLevel``: ``key: value`` pairs; magic < 2 starts with ``offset:``, 3.0+ adds
    ``deleteHorizonMs``, 2.8 prints the codec enum (``NONE``), later its name (``none``)); with
    ``--deep-iteration`` one ``| offset: ...`` line per record (2.8 repeats batch fields on it, 3.0+ does not),
    control records' type (``endTxnMarker: COMMIT coordinatorEpoch: E``, ``controlType: NAME(id)``, or the
    record as JSON: ``SnapshotHeader {..}``, 4.3: ``LeaderChange: {..}``), and with ``--print-data-log``
    `` key: K payload: V`` (StringDecoder: the bytes as UTF-8) for non-control records; then
    ``Found N invalid bytes at the end of <file name>`` when the batches stop short of the file's end.
  - ``.index``: ``offset: O position: P`` per slot, stopping at the first slot i > 0 whose offset is the base
    offset; ``<file> is empty.`` for a file with no slot; ``<file> passed sanity check.``
  - ``.timeindex``: ``timestamp: T offset: O`` with the same stop rule.
  - ``.snapshot``: ``producerId: .. producerEpoch: .. coordinatorEpoch: .. currentTxnFirstOffset: ..
    [lastTimestamp: ..] [firstSequence: .. lastSequence: .. lastOffset: .. offsetDelta: .. timestamp: ..]``.
  - ``.txnindex``: ``version: .. producerId: .. firstOffset: .. lastOffset: .. lastStableOffset: ..``.
* stderr, after all files: ``Mismatches in :<abs path>`` / ``  Index offset: X, log offset: Y``; ``Found
  timestamp mismatch in :<abs path>``, ``Found out of order timestamp in :<abs path>``, ``The following indexed
  offsets are not found in the log.`` (no file name; 4.3: ``... not found in :<abs path>``); ``Non-consecutive offsets in <abs path>`` /
  ``  A is followed by B``. During the loop: ``Ignoring unknown file F``, a corrupt producer snapshot's message.
* An exception (a missing ``.log`` beside an index, a record it cannot parse) ends the whole run: files after it
  are not dumped and the stderr summaries are not printed. :func:`run` therefore reruns the files around a crash
  and reports the crash on the file that caused it.

Payloads may hold newlines: a line that is not one of the above continues the previous record line.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from kafka_lab import jars
from kafka_lab.versions import Version, parse

# One --files argument must stay below Linux's MAX_ARG_STRLEN (131072 bytes per argument).
MAX_FILES_ARG = 100_000
TIMESTAMP_TYPES = ("CreateTime", "LogAppendTime", "NoTimestampType")

# The JVM starts in ~0.5 s with C1 only and the serial collector; the dump itself is I/O and string building.
JVM_OPTS = (
    "-XX:TieredStopAtLevel=1",
    "-XX:+UseSerialGC",
    "-Xmx512m",
    # payloads are printed as Java strings: UTF-8 out, whatever the locale
    "-Dfile.encoding=UTF-8",
    "-Dsun.stdout.encoding=UTF-8",
    "-Dsun.stderr.encoding=UTF-8",
)


def dump_class(version: str | Version) -> str:
    v = parse(version) if isinstance(version, str) else version
    return "org.apache.kafka.tools.DumpLogSegments" if v >= (4, 3) else "kafka.tools.DumpLogSegments"


# ------------------------------------------------------------------------------------------ parsed output


@dataclass
class DumpedRecord:
    offset: int
    timestamp_type: str
    timestamp: int
    key_size: int
    value_size: int
    sequence: int | None = None  # magic >= 2
    header_keys: list[str] | None = None  # magic >= 2
    legacy_valid: bool | None = None  # magic < 2: " isValid: B crc: C"
    legacy_crc: int | None = None
    control: str | None = None  # ControlRecordType name as that release knows it (UNKNOWN for others)
    control_type_id: int | None = None  # printed with "controlType: NAME(id)" only
    coordinator_epoch: int | None = None
    control_json: str | None = (
        None  # SnapshotHeader / SnapshotFooter / KRaftVersion / KRaftVoters / LeaderChange
    )
    data: str = ""  # what --print-data-log appended: " key: K payload: V" (raw, newlines included)
    batch_fields: dict[str, str] = field(default_factory=dict)  # 2.8 repeats batch fields on each record line

    @property
    def key(self) -> str | None:
        """Best effort: the data split at the first " payload: " (a key may contain that text)."""
        if not self.data.startswith(" key: "):
            return None
        k, sep, _ = self.data[6:].partition(" payload: ")
        return k if sep else self.data[6:]

    @property
    def payload(self) -> str | None:
        i = self.data.find(" payload: ")
        return None if i < 0 else self.data[i + 10 :]


@dataclass
class DumpedBatch:
    fields: dict[str, str]  # every "name: value" pair of the batch line, as printed
    records: list[DumpedRecord] = field(default_factory=list)

    def int(self, name: str) -> int:
        return int(self.fields[name])

    @property
    def legacy(self) -> bool:
        return "baseOffset" not in self.fields

    @property
    def timestamp_type(self) -> str:
        return next(t for t in TIMESTAMP_TYPES if t in self.fields)

    @property
    def max_timestamp(self) -> int:
        return int(self.fields[self.timestamp_type])


@dataclass
class DumpedFile:
    path: str  # as passed to --files
    kind: str  # log | index | timeindex | snapshot | txnindex | unknown
    header: str | None = None  # "Log starting offset: 0", "Snapshot end offset: N, epoch: E", ...
    batches: list[DumpedBatch] = field(default_factory=list)
    invalid_bytes: int | None = None  # "Found N invalid bytes at the end of F"
    index_entries: list[tuple[int, int]] = field(default_factory=list)  # (offset, position)
    time_entries: list[tuple[int, int]] = field(default_factory=list)  # (timestamp, offset)
    empty: bool = False  # "<file> is empty."
    sanity_passed: bool = False  # "<file> passed sanity check."
    producer_states: list[dict[str, str]] = field(default_factory=list)
    aborted_txns: list[dict[str, int]] = field(default_factory=list)
    crash: str | None = None  # stderr of the run this file ended (its exception and stack trace)
    unparsed: list[str] = field(default_factory=list)  # lines no rule explains (a parser bug if not empty)

    @property
    def records(self) -> list[DumpedRecord]:
        return [r for b in self.batches for r in b.records]

    @property
    def exception(self) -> str | None:
        """The simple class name of the exception that ended the run here ("NoSuchFileException")."""
        if self.crash is None:
            return None
        return exception_class(self.crash) or "unknown exception"


_EXCEPTION = re.compile(r'^(?:Exception in thread "main" )?((?:[\w$]+\.)*([\w$]*(?:Exception|Error)))(?::|$)')


def exception_class(stderr: str) -> str | None:
    """The first exception a stderr names: Scala's ``Exception in thread "main" a.b.CException: msg``, or the
    stack trace DLS-java prints after the message (``Utils.stackTrace``)."""
    for line in stderr.split("\n"):
        if m := _EXCEPTION.match(line):
            return m[2]
    return None


@dataclass
class DumpRun:
    """Everything one or more DumpLogSegments runs printed about a list of files."""

    version: str
    files: dict[str, DumpedFile] = field(default_factory=dict)  # by path as passed
    # stderr summaries, by path as passed to --files (DumpLogSegments prints File.getAbsolutePath)
    index_mismatches: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    time_mismatches: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    time_out_of_order: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    # "The following indexed offsets are not found in the log." names no file (Scala): one group per file, path
    # None; 4.3 prints "... not found in :<abs path>" (keyed by the path as passed)
    time_not_found: list[tuple[str | None, list[tuple[int, int]]]] = field(default_factory=list)
    non_consecutive: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    ignored: list[str] = field(default_factory=list)  # "Ignoring unknown file F"
    stderr_messages: list[str] = field(default_factory=list)  # other stderr lines (corrupt snapshot messages)
    jvm_runs: int = 0

    def merge(self, other: DumpRun) -> None:
        self.files.update(other.files)
        for name in ("index_mismatches", "time_mismatches", "time_out_of_order", "non_consecutive"):
            getattr(self, name).update(getattr(other, name))
        self.time_not_found += other.time_not_found
        self.ignored += other.ignored
        self.stderr_messages += other.stderr_messages
        self.jvm_runs += other.jvm_runs


def _kind(path: str) -> str:
    name = os.path.basename(path)
    suffix = name[name.rfind(".") :] if "." in name else ""
    return {
        ".log": "log",
        ".checkpoint": "log",  # Snapshots.SUFFIX (3.3+); 2.8 ignores it
        ".index": "index",
        ".timeindex": "timeindex",
        ".snapshot": "snapshot",
        ".txnindex": "txnindex",
    }.get(suffix, "unknown")


_INT = r"(-?\d+)"
_REC = re.compile(
    r"\| offset: " + _INT + r" (CreateTime|LogAppendTime|NoTimestampType): " + _INT + r" keySize: " + _INT
    + r" valueSize: " + _INT
)  # fmt: skip
_REC_28 = re.compile(
    r"\| offset: " + _INT + r" isValid: (true|false) crc: (\S+) keySize: " + _INT + r" valueSize: " + _INT
    + r" (CreateTime|LogAppendTime|NoTimestampType): " + _INT
    + r"((?: (?:baseOffset|lastOffset|baseSequence|lastSequence|producerEpoch|partitionLeaderEpoch|batchSize"
    r"|magic|compressType|position): \S+)*)"
)  # fmt: skip
_SEQ_HEADERS = re.compile(r" sequence: " + _INT + r" headerKeys: \[(.*?)\]")
_LEGACY_3 = re.compile(r" isValid: (true|false) crc: (\d+)\}?")  # 3.x Scala prints a stray "}" (4.3 does not)
_LEGACY_28 = re.compile(r" crc: (\S+) isvalid: (true|false)")
_TXN_MARKER = re.compile(r" endTxnMarker: (ABORT|COMMIT) coordinatorEpoch: " + _INT)
_CONTROL_TYPE = re.compile(r" controlType: (\w+)\(" + _INT + r"\)")
_CONTROL_JSON = re.compile(
    r" (SnapshotHeader|SnapshotFooter|KRaftVersion|KRaftVoters|LeaderChange:) (.*)", re.S
)
_CONTROL_JSON_NAMES = {
    "SnapshotHeader": "SNAPSHOT_HEADER",
    "SnapshotFooter": "SNAPSHOT_FOOTER",
    "KRaftVersion": "KRAFT_VERSION",
    "KRaftVoters": "KRAFT_VOTERS",
    "LeaderChange:": "LEADER_CHANGE",
}
_INVALID = re.compile(r"Found (\d+) invalid bytes at the end of (.+)")
_INDEX = re.compile(r"offset: " + _INT + r" position: " + _INT)
_TIME = re.compile(r"timestamp: " + _INT + r" offset: " + _INT)
_TXN = re.compile(
    r"version: " + _INT + r" producerId: " + _INT + r" firstOffset: " + _INT + r" lastOffset: " + _INT
    + r" lastStableOffset: " + _INT
)  # fmt: skip
_V2_BATCH_KEYS = (
    "baseOffset", "lastOffset", "count", "baseSequence", "lastSequence", "producerId", "producerEpoch",
    "partitionLeaderEpoch", "isTransactional", "isControl",
)  # fmt: skip
_BATCH_TAIL_KEYS = ("position", "?", "size", "magic", "compresscodec", "crc", "isvalid")


def _pairs(line: str) -> dict[str, str] | None:
    """``name: value name: value ...`` (no value holds a space) or None."""
    tokens = line.split(" ")
    if len(tokens) % 2 or not all(t.endswith(":") for t in tokens[::2]):
        return None
    return {k[:-1]: v for k, v in zip(tokens[::2], tokens[1::2], strict=True)}


def _batch_line(line: str) -> dict[str, str] | None:
    """A batch line exactly as printBatchLevel writes it (so a payload line never passes for one)."""
    fields = _pairs(line)
    if fields is None:
        return None
    keys = list(fields)
    if keys[:1] == ["offset"]:
        head: list[str] = ["offset"]
    elif tuple(keys[:10]) == _V2_BATCH_KEYS:
        head = list(_V2_BATCH_KEYS) + (["deleteHorizonMs"] if "deleteHorizonMs" in fields else [])
    else:
        return None
    tail = keys[len(head) :]
    if len(tail) != len(_BATCH_TAIL_KEYS) or tail[1] not in TIMESTAMP_TYPES:
        return None
    if any(want not in ("?", got) for want, got in zip(_BATCH_TAIL_KEYS, tail, strict=True)):
        return None
    return fields


def _record_line(line: str, is_control: bool) -> DumpedRecord | None:
    m28 = _REC_28.match(line)
    if m28:
        rec = DumpedRecord(
            int(m28[1]), m28[6], int(m28[7]), int(m28[4]), int(m28[5]), legacy_valid=m28[2] == "true"
        )
        rec.batch_fields = _pairs(m28[8].strip()) or {}
        rest = line[m28.end() :]
        if m := _SEQ_HEADERS.match(rest):
            rec.sequence, rec.header_keys = int(m[1]), m[2].split(",") if m[2] else []
            rec.legacy_valid = None  # v2 records always print isValid: true crc: null in 2.8
            rest = rest[m.end() :]
        elif m := _LEGACY_28.match(rest):
            rec.legacy_crc, rec.legacy_valid = int(m[1]), m[2] == "true"
            rest = rest[m.end() :]
    else:
        m = _REC.match(line)
        if not m:
            return None
        rec = DumpedRecord(int(m[1]), m[2], int(m[3]), int(m[4]), int(m[5]))
        rest = line[m.end() :]
        if m := _SEQ_HEADERS.match(rest):
            rec.sequence, rec.header_keys = int(m[1]), m[2].split(",") if m[2] else []
            rest = rest[m.end() :]
        if m := _LEGACY_3.match(rest):
            rec.legacy_valid, rec.legacy_crc = m[1] == "true", int(m[2])
            rest = rest[m.end() :]
    if is_control:
        if m := _TXN_MARKER.match(rest):
            rec.control, rec.coordinator_epoch = m[1], int(m[2])
        elif m := _CONTROL_TYPE.match(rest):
            rec.control, rec.control_type_id = m[1], int(m[2])
        elif m := _CONTROL_JSON.match(rest):
            rec.control, rec.control_json = _CONTROL_JSON_NAMES[m[1]], m[2]
        else:
            return None
        rest = rest[m.end() :]
    rec.data = rest
    return rec


def parse_stdout(text: str, files: Sequence[str]) -> list[DumpedFile]:
    """The stdout of one run over ``files`` (in order): one DumpedFile per ``Dumping`` section printed."""
    out: list[DumpedFile] = []
    lines = text.split("\n")  # println writes "\n"; payloads may hold "\r" and other separators
    if lines and lines[-1] == "":
        lines.pop()
    nxt = 0
    cur: DumpedFile | None = None
    last_rec: DumpedRecord | None = None
    for line in lines:
        # A section starts only at "Dumping <the next file>": a payload line cannot fake one.
        if nxt < len(files) and line == f"Dumping {files[nxt]}":
            cur = DumpedFile(files[nxt], _kind(files[nxt]))
            out.append(cur)
            nxt += 1
            last_rec = None
            continue
        if cur is None:
            continue  # e.g. a deprecation notice before the first file
        if cur.kind == "log":
            if (
                cur.header is None
                and not cur.batches
                and (
                    line.startswith(("Starting offset: ", "Log starting offset: ", "Snapshot end offset: "))
                    or line == "KRaft bootstrap snapshot"
                )
            ):
                cur.header = line
                continue
            if (fields := _batch_line(line)) is not None:
                cur.batches.append(DumpedBatch(fields))
                last_rec = None
                continue
            if line.startswith("| ") and cur.batches:
                rec = _record_line(line, cur.batches[-1].fields.get("isControl") == "true")
                if rec is not None:
                    cur.batches[-1].records.append(rec)
                    last_rec = rec
                    continue
            if (m := _INVALID.fullmatch(line)) and m[2] == os.path.basename(cur.path):
                cur.invalid_bytes = int(m[1])
                last_rec = None
                continue
            if last_rec is not None:  # a payload (or control JSON) that held a newline
                if last_rec.control_json is not None:
                    last_rec.control_json += "\n" + line
                else:
                    last_rec.data += "\n" + line
                continue
        elif cur.kind == "index":
            if m := _INDEX.fullmatch(line):
                cur.index_entries.append((int(m[1]), int(m[2])))
                continue
        elif cur.kind == "timeindex":
            if m := _TIME.fullmatch(line):
                cur.time_entries.append((int(m[1]), int(m[2])))
                continue
        elif cur.kind == "snapshot":
            if line.startswith("producerId: ") and (fields := _pairs(line.rstrip(" "))) is not None:
                cur.producer_states.append(fields)
                continue
        elif cur.kind == "txnindex":
            if m := _TXN.fullmatch(line):
                keys = ("version", "producer_id", "first_offset", "last_offset", "last_stable_offset")
                cur.aborted_txns.append(dict(zip(keys, map(int, m.groups()), strict=True)))
                continue
        if line == f"{cur.path} is empty.":
            cur.empty = True
        elif line == f"{cur.path} passed sanity check.":
            cur.sanity_passed = True
        else:
            cur.unparsed.append(line)
    return out


_STDERR_GROUPS: dict[str, tuple[str, re.Pattern[str]]] = {
    "Mismatches in :": (
        "index_mismatches",
        re.compile(r"  Index offset: " + _INT + r", log offset: " + _INT),
    ),
    "Found timestamp mismatch in :": (
        "time_mismatches",
        re.compile(r"  Index timestamp: " + _INT + r", log timestamp: " + _INT),
    ),
    "Found out of order timestamp in :": (
        "time_out_of_order",
        re.compile(r"  Index timestamp: " + _INT + r", Previously indexed timestamp: " + _INT),
    ),
    "Non-consecutive offsets in ": ("non_consecutive", re.compile(r"  " + _INT + r" is followed by " + _INT)),
}
_NOT_FOUND_HEAD = "The following indexed offsets are not found in the log."
_NOT_FOUND_HEAD_PATH = "The following indexed offsets are not found in :"
_NOT_FOUND = re.compile(r"Indexed offset: " + _INT + r", found log offset: " + _INT)
_NOISE = ("log4j:", "SLF4J:", "WARNING: ")


def parse_stderr(text: str, run: DumpRun) -> list[str]:
    """Fill ``run``'s stderr summaries; return the lines that are none of them (an exception, ...)."""
    other: list[str] = []
    group: list[tuple[int, int]] | None = None
    pattern: re.Pattern[str] | None = None
    for line in text.split("\n"):
        if not line or line.startswith(_NOISE):
            continue
        if pattern is not None and group is not None and (m := pattern.fullmatch(line)):
            group.append((int(m[1]), int(m[2])))
            continue
        group = pattern = None
        for head, (name, pat) in _STDERR_GROUPS.items():
            if line.startswith(head):
                group = getattr(run, name).setdefault(line[len(head) :], [])
                pattern = pat
                break
        else:
            if line == _NOT_FOUND_HEAD or line.startswith(_NOT_FOUND_HEAD_PATH):
                group = []
                path = line[len(_NOT_FOUND_HEAD_PATH) :] if line != _NOT_FOUND_HEAD else None
                run.time_not_found.append((path, group))
                pattern = _NOT_FOUND
            elif line.startswith("Ignoring unknown file "):
                run.ignored.append(line[len("Ignoring unknown file ") :])
            else:
                other.append(line)
    return other


# ------------------------------------------------------------------------------------------------ running


def _chunks(files: Sequence[str], cwd: str, parts: int = 1, limit: int = MAX_FILES_ARG) -> list[list[str]]:
    """At least ``parts`` lists of about equal bytes to read (largest first onto the lightest list), each
    joined by commas under ``limit`` characters; each list keeps the order of ``files``."""
    need = max(parts, -(-sum(len(f) + 1 for f in files) // limit), 1)
    order = {f: i for i, f in enumerate(files)}

    def size(f: str) -> int:
        try:
            return os.path.getsize(os.path.join(cwd, f))
        except OSError:
            return 0

    chunks = [_Chunk() for _ in range(need)]
    for f in sorted(files, key=size, reverse=True):
        room = [c for c in chunks if c.chars + len(f) + 1 <= limit]
        chunk = min(room, key=lambda c: c.size) if room else _Chunk()
        if not room:
            chunks.append(chunk)
        chunk.size += size(f)
        chunk.chars += len(f) + 1
        chunk.files.append(f)
    return [sorted(c.files, key=order.__getitem__) for c in chunks if c.files]


@dataclass
class _Chunk:
    size: int = 0  # bytes to read
    chars: int = 0  # length of the --files argument
    files: list[str] = field(default_factory=list)


def _run_once(version: str, files: list[str], cwd: str, args: Sequence[str]) -> tuple[DumpRun, list[str]]:
    """One JVM. Returns the run and the files still to dump (those around a crash), crash recorded."""
    cmd = [
        "java", *JVM_OPTS, "-cp", jars.classpath(version), dump_class(version),
        *args, "--files", ",".join(files),
    ]  # fmt: skip
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, check=False)
    stdout = proc.stdout.decode("utf-8")
    stderr = proc.stderr.decode("utf-8", "replace")
    run = DumpRun(version, jvm_runs=1)
    dumped = parse_stdout(stdout, files)
    other = parse_stderr(stderr, run)
    _relative_keys(run, cwd)
    if proc.returncode == 0:
        run.files = {d.path: d for d in dumped}
        run.stderr_messages = other
        return run, []
    if not dumped:
        raise RuntimeError(f"DumpLogSegments {version} failed before any file: {stderr.strip()[-2000:]}")
    # The exception ended the run on the last file it started; the files before it lost their stderr
    # summaries (printed after the loop), so they run again, and so do the files after it.
    crashed = dumped[-1]
    crashed.crash = "\n".join(other).strip()
    crash_run = DumpRun(version, files={crashed.path: crashed}, jvm_runs=1)
    i = files.index(crashed.path)
    return crash_run, files[:i] + files[i + 1 :]


def _relative_keys(run: DumpRun, cwd: str) -> None:
    """Stderr names files by File.getAbsolutePath (user.dir + "/" + the path given): key them by the path given."""
    prefixes = {os.path.abspath(cwd) + os.sep, os.path.realpath(cwd) + os.sep}

    def rel(p: str) -> str:
        return next((p[len(x) :] for x in prefixes if p.startswith(x)), p)

    for name in ("index_mismatches", "time_mismatches", "time_out_of_order", "non_consecutive"):
        setattr(run, name, {rel(k): v for k, v in getattr(run, name).items()})
    run.time_not_found = [(None if p is None else rel(p), g) for p, g in run.time_not_found]


def run(
    version: str,
    files: Sequence[str],
    cwd: str | os.PathLike[str] = ".",
    args: Sequence[str] = ("--deep-iteration", "--print-data-log"),
    workers: int = 2,
) -> DumpRun:
    """DumpLogSegments of ``version`` over ``files`` (paths relative to ``cwd``), as few JVMs as the argument
    length allows, ``workers`` at a time. A file that crashes the tool is reported with ``crash`` set; the
    files around it are dumped by further runs (put files expected to crash into their own call: each one
    costs a JVM)."""
    total = DumpRun(version)
    pending = _chunks(list(files), os.fspath(cwd), workers)
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        while pending:
            results = list(pool.map(lambda c: _run_once(version, c, os.fspath(cwd), args), pending))
            pending = []
            for part, rest in results:
                total.merge(part)
                if rest:
                    pending += _chunks(rest, os.fspath(cwd))
    return total


def run_each(
    version: str, files: Iterable[str], cwd: str | os.PathLike[str] = ".", workers: int = 2, **kw: object
) -> DumpRun:
    """One JVM per file (files expected to crash the tool), ``workers`` at a time."""
    total = DumpRun(version)
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        for part in pool.map(lambda f: run(version, [f], cwd, workers=1, **kw), list(files)):  # type: ignore[arg-type]
            total.merge(part)
    return total


# ------------------------------------------------------------------------------------------ payload text


def _cont(b: int) -> bool:
    return (b & 0xC0) == 0x80


def java_utf8(data: bytes) -> str:
    """``new String(bytes, UTF_8)`` as JDK 17 builds it (what StringDecoder prints for a key or payload).

    Python's ``decode("utf-8", "replace")`` differs on malformed input: Java replaces an encoded surrogate
    (ED A0 80) with one U+FFFD, Python with three, and splits truncated sequences differently. This follows
    String.decodeUTF8_UTF16 (java.base/java/lang/String.java, JDK 17) step by step.
    """
    try:
        return data.decode("utf-8")  # well-formed input decodes identically
    except UnicodeDecodeError:
        pass
    out: list[str] = []
    repl = "\ufffd"
    sp, sl = 0, len(data)
    while sp < sl:
        b1 = data[sp]
        sp += 1
        if b1 < 0x80:
            out.append(chr(b1))
        elif b1 >> 5 == 0b110 and b1 & 0x1E:  # 2 bytes, not overlong
            if sp < sl:
                b2 = data[sp]
                sp += 1
                if not _cont(b2):
                    out.append(repl)
                    sp -= 1
                else:
                    out.append(chr(((b1 & 0x1F) << 6) | (b2 & 0x3F)))
                continue
            out.append(repl)
            break
        elif b1 >> 4 == 0b1110:  # 3 bytes
            if sp + 1 < sl:
                b2, b3 = data[sp], data[sp + 1]
                sp += 2
                if (b1 == 0xE0 and b2 & 0xE0 == 0x80) or not _cont(b2) or not _cont(b3):  # isMalformed3
                    out.append(repl)
                    sp -= 3
                    # malformed3: skip 1 byte if b2 is the problem, else 2
                    sp += 1 if (b1 == 0xE0 and b2 & 0xE0 == 0x80) or not _cont(b2) else 2
                else:
                    c = ((b1 & 0x0F) << 12) | ((b2 & 0x3F) << 6) | (b3 & 0x3F)
                    out.append(repl if 0xD800 <= c <= 0xDFFF else chr(c))
                continue
            if sp < sl and (
                (b1 == 0xE0 and data[sp] & 0xE0 == 0x80) or not _cont(data[sp])
            ):  # isMalformed3_2
                out.append(repl)
                continue
            out.append(repl)
            break
        elif b1 >> 3 == 0b11110:  # 4 bytes
            if sp + 2 < sl:
                b2, b3, b4 = data[sp], data[sp + 1], data[sp + 2]
                sp += 3
                uc = ((b1 & 0x07) << 18) | ((b2 & 0x3F) << 12) | ((b3 & 0x3F) << 6) | (b4 & 0x3F)
                if not (_cont(b2) and _cont(b3) and _cont(b4)) or not 0x10000 <= uc <= 0x10FFFF:
                    out.append(repl)
                    sp -= 4
                    # malformed4
                    if (
                        b1 > 0xF4
                        or (b1 == 0xF0 and not 0x90 <= b2 <= 0xBF)
                        or (b1 == 0xF4 and b2 & 0xF0 != 0x80)
                        or not _cont(b2)
                    ):
                        sp += 1
                    elif not _cont(b3):
                        sp += 2
                    else:
                        sp += 3
                else:
                    out.append(chr(uc))
                continue
            if b1 > 0xF4 or (
                sp < sl
                and (
                    (b1 == 0xF0 and not 0x90 <= data[sp] <= 0xBF)
                    or (b1 == 0xF4 and data[sp] & 0xF0 != 0x80)
                    or not _cont(data[sp])
                )
            ):  # isMalformed4_2
                out.append(repl)
                continue
            sp += 1
            out.append(repl)
            if sp < sl and not _cont(data[sp]):  # isMalformed4_3
                continue
            break
        else:
            out.append(repl)
    return "".join(out)
