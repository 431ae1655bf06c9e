"""DumpLogSegments, Kafka's own reader, as a second oracle for ``kafka-ops dump`` (lab: runs Maven Central jars).

Every ``.log``, KRaft ``.checkpoint``, ``.index``, ``.timeindex``, ``.txnindex`` and producer ``.snapshot`` of every
partition dir of the corpus of real broker data dirs (shared/corpus, copied: DumpLogSegments opens a missing
``.index`` with ``File.createNewFile`` and 4.3 trims what it dumps, and we run as root), of a simulated host with
every failure planted (``kafka-ops simulate --fail all``), of a running host with every codec, and of damaged
copies, is dumped by DumpLogSegments 3.9.1 and by ``kafka-ops dump --format json --records --payloads`` (its
events, encoded as the CLI encodes them; one test checks the CLI prints exactly those). For each file the test
derives what DumpLogSegments must print from our events alone, with the tool's own rules (each cited where it is
encoded), and compares it with what it did print: the same batches (every field of its batch line), the same
records (offset, timestamp and its type, key and value sizes, sequence, header keys, control type and coordinator
epoch, key and payload as StringDecoder prints them), the same index entries, the same invalid trailing bytes, and
the same stderr diagnostics (index offset mismatches, time index mismatches and order, offsets not found,
non-consecutive offsets, corrupt snapshots, the exception that stops it). The other cached releases (2.8.2,
3.5.2, 3.7.2, 4.3.1) dump a subset chosen to show every feature of the full set (file type, magic, codec,
timestamp type, control type, tail, index shape, crash), so each release's output format is covered. Last,
kafka-dump-log.sh's options (decoders, --index-sanity-check, --verify-index-only, --max-bytes) are run on both
sides with the same files.

Sources: core/src/main/scala/kafka/tools/DumpLogSegments.scala at 2.8.2 / 3.5.2 / 3.7 / 3.9, cited as DLS;
tools/src/main/java/org/apache/kafka/tools/DumpLogSegments.java (4.3), cited as DLS-java.
"""

from __future__ import annotations

import base64
import bisect
import json
import operator
import os
import shutil
import struct
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path

import pytest

from kafka_lab import dumplog, jars
from kafka_lab.versions import CI_VERSIONS, Version, parse
from kafka_ops.engine.dump import DumpOptions, _payload, dump_file
from kafka_ops.engine.internal_topics import CONSUMER_OFFSETS, TRANSACTION_STATE
from kafka_ops.engine.layout import parse_kraft_snapshot, parse_partition_dir, parse_segment_file
from kafka_ops.engine.records import (
    CONTROL_TYPES,
    Batch,
    BatchScanner,
    LogBuffer,
    Record,
    control_record,
    iter_records,
)
from kafka_ops.simulator.host import Failures, HostSpec, TopicSpec, simulate_host

pytestmark = pytest.mark.lab

CORPUS = Path(os.environ.get("KAFKA_OPS_CORPUS", Path(__file__).resolve().parents[3] / "shared" / "corpus"))
if not CORPUS.exists():
    CORPUS = Path("/work/shared/corpus")

FULL = "3.9.1"  # runs on every file
# run on the covering subset: the releases the oracle's expectations were written for (CI's, from 2.8)
OTHERS = tuple(v for v in CI_VERSIONS if v != FULL and parse(v) >= (2, 8))
OPTS = DumpOptions(records=True, payloads=True)  # kafka-ops dump --records --payloads
DLS_ARGS = ("--deep-iteration", "--print-data-log")
MAX_MESSAGE_SIZE = 5 * 1024 * 1024  # DLS --max-message-size default: the slice read at an index entry
SUFFIXES = (".log", ".index", ".timeindex", ".txnindex", ".snapshot")


# ------------------------------------------------------------------------------------------- data sets


def _partition_files(root: Path, base: Path) -> list[str]:
    """Every file DumpLogSegments reads, of every partition dir under ``root`` (relative to ``base``)."""
    out = []
    for d, _dirs, names in os.walk(root):
        if parse_partition_dir(os.path.basename(d)) is None:
            continue
        for n in names:
            seg = parse_segment_file(n)
            if (seg is not None and not seg.leftover and seg.suffix in SUFFIXES) or (
                (k := parse_kraft_snapshot(n)) is not None and k[2] == "complete"
            ):
                out.append(os.path.relpath(os.path.join(d, n), base))
    return sorted(out)


def _codec_host(root: str) -> None:
    """A running broker (preallocated active indexes) with every codec and interleaved transactions."""
    topics = [
        TopicSpec(f"c-{codec}", partitions=1, records_per_partition=120, codec=codec, batch_records=7)
        for codec in ("gzip", "snappy", "lz4", "zstd")
    ]
    topics.append(
        TopicSpec("tx", partitions=1, records_per_partition=160, producer="transactional", abort_every=3,
                  txn_producers=2, open_txn=True, codec="lz4")
    )  # fmt: skip
    topics.append(
        TopicSpec("lat", partitions=1, records_per_partition=80, log_append_time=True, codec="zstd")
    )
    simulate_host(root, HostSpec(topics=topics, running=True, log_dirs=1, seed=11))


def _damage(src_root: Path, files: list[str], root: Path) -> list[str]:
    """Copies of simulated partition dirs, one file of each damaged the way a disk or a crash damages it."""

    def pick(pred: object) -> str:
        # the smallest segment that fits: a partition dir's indexes make DumpLogSegments slow when padded
        for f in sorted(files, key=lambda f: sum(p.stat().st_size for p in (src_root / f).parent.iterdir())):
            if f.endswith(".log") and pred(f):  # type: ignore[operator]
                return f
        raise AssertionError("no segment to damage")

    out: list[str] = []

    def copy(name: str, src: str) -> Path:
        d = root / name / (os.path.basename(os.path.dirname(src)))
        shutil.copytree(src_root / os.path.dirname(src), d)
        out.extend(os.path.relpath(d / n, src_root) for n in os.listdir(d) if parse_segment_file(n))
        return d / os.path.basename(src)

    def batches(p: Path) -> list[tuple[int, int]]:
        with LogBuffer.open(p) as buf:
            return [(b.position, b.size) for b in BatchScanner(buf)]

    multi = pick(lambda f: len(batches(src_root / f)) >= 6)
    # a flipped bit in a record of the third batch: CRC invalid, sizes intact
    p = copy("crc", multi)
    pos, size = batches(p)[2]
    data = bytearray(p.read_bytes())
    data[pos + size - 2] ^= 0x01
    p.write_bytes(bytes(data))
    # a batch whose size field reads 5 (below the 14-byte minimum): FileLogInputStream throws
    p = copy("badsize", multi)
    pos, _ = batches(p)[3]
    data = bytearray(p.read_bytes())
    data[pos + 8 : pos + 12] = struct.pack(">i", 5)
    p.write_bytes(bytes(data))
    # the last 30 bytes cut off (a torn write) and 9 bytes of garbage after a complete copy
    p = copy("torn", multi)
    p.write_bytes(p.read_bytes()[:-30])
    p = copy("garbage", multi)
    p.write_bytes(p.read_bytes() + b"\x00" * 9)
    # an offset index with a slot of relative offset 0 in the middle (DLS stops there, we list on)
    idx_src = next(
        f for f in sorted(files, key=lambda f: (src_root / f).stat().st_size)
        if f.endswith(".index") and (src_root / f).stat().st_size >= 32 and os.path.exists(src_root / (f[:-6] + ".log"))
    )  # fmt: skip
    p = copy("midzero", idx_src)
    data = bytearray(p.read_bytes())
    data[8:12] = b"\x00\x00\x00\x00"
    p.write_bytes(bytes(data))
    # a producer snapshot with a flipped CRC byte, and one cut in the middle of an entry
    snap_src = next(f for f in files if f.endswith(".snapshot") and (src_root / f).stat().st_size > 10)
    p = copy("snapcrc", snap_src)
    data = bytearray(p.read_bytes())
    data[3] ^= 0xFF
    p.write_bytes(bytes(data))
    p = copy("snapcut", snap_src)
    p.write_bytes(p.read_bytes()[:-20])
    # a time index whose second entry repeats the first one's timestamp (out of order for DLS)
    ts_src = next(
        f for f in sorted(files, key=lambda f: (src_root / f).stat().st_size)
        if f.endswith(".timeindex") and (src_root / f).stat().st_size >= 24
        and (src_root / f).read_bytes()[12:24] != bytes(12) and os.path.exists(src_root / (f[:-10] + ".log"))
    )  # fmt: skip
    p = copy("tsorder", ts_src)
    data = bytearray(p.read_bytes())
    data[12:20] = data[0:8]
    p.write_bytes(bytes(data))
    # a transaction index with half an entry at its end
    txn_src = next(
        (f for f in files if f.endswith(".txnindex") and (src_root / f).stat().st_size >= 34), None
    )
    if txn_src is not None:
        p = copy("txncut", txn_src)
        p.write_bytes(p.read_bytes() + b"\x00" * 17)
    return sorted(set(out))


@dataclass
class DataSet:
    name: str
    files: list[str]  # relative to Lab.root, starting with the set's name


@dataclass
class Lab:
    root: Path  # every set lives under it: one DumpLogSegments run covers them all
    sets: list[DataSet]
    ours: dict[str, list[dict[str, object]]] = field(default_factory=dict)  # file -> our events
    runs: dict[str, dumplog.DumpRun] = field(default_factory=dict)  # version -> its run
    subset: list[str] = field(default_factory=list)  # the files the other releases dump
    seconds: dict[str, float] = field(default_factory=dict)
    compared: dict[str, Counter[str]] = field(default_factory=dict)  # version -> what agreed
    private: dict[str, Path] = field(default_factory=dict)  # version -> root of its private copies
    changed: set[str] = field(default_factory=set)  # files a Scala DumpLogSegments changed (none, we check)

    @property
    def files(self) -> list[str]:
        return [f for ds in self.sets for f in ds.files]


def _our_events(path: str) -> list[dict[str, object]]:
    # the CLI writes json.dumps(ev, default=str) per event (cli/dump.py): the same encoding, one call
    return json.loads(json.dumps(list(dump_file(path, OPTS)), default=str))


def _available(version: str) -> bool:
    try:
        jars.classpath(version)
    except (jars.LabError, OSError):
        return False
    return shutil.which("java") is not None


# --------------------------------------------------------------------------- what DumpLogSegments must print


@dataclass(frozen=True)
class Tool:
    """Per-release output rules of DumpLogSegments (checked at each tag named)."""

    version: str

    @property
    def v(self) -> Version:
        return parse(self.version)

    @property
    def java(self) -> bool:
        return self.v >= (4, 3)  # org.apache.kafka.tools.DumpLogSegments

    def log_header(self, name: str) -> str | None:
        if (k := parse_kraft_snapshot(name)) is not None:
            # DLS 3.3+: `case UnifiedLog.LogFileSuffix | Snapshots.SUFFIX` and "Snapshot end offset: .., epoch: .."
            return f"Snapshot end offset: {k[0]}, epoch: {k[1]}"
        base = int(name.split(".")[0])
        # DLS 2.8.2 dumpLog: println("Starting offset: " + startOffset); 3.3+: s"Log starting offset: $startOffset"
        return f"Starting offset: {base}" if self.v < (3, 3) else f"Log starting offset: {base}"

    def reads_checkpoints(self) -> bool:
        return self.v >= (3, 3)  # before: "Ignoring unknown file" (no Snapshots.SUFFIX case)

    def codec(self, name: str) -> str:
        # 2.8 prints the CompressionType enum (toString = constant name), 3.0+ its `.name` field
        return name.upper() if self.v < (3, 0) else name

    def control(self, type_id: int) -> tuple[str, str]:
        """(name, form): form "marker" (endTxnMarker), "json" (SnapshotHeader {..}) or "type" (controlType: N(id)).

        ControlRecordType.fromTypeId per tag: 2.8.2 ABORT 0, COMMIT 1, QUORUM_REASSIGNMENT 2, LEADER_CHANGE 3;
        3.0-3.7 ABORT, COMMIT, LEADER_CHANGE 2, SNAPSHOT_HEADER 3, SNAPSHOT_FOOTER 4; 3.8+ adds KRAFT_VERSION 5,
        KRAFT_VOTERS 6; anything else is UNKNOWN. DLS prints JSON for SNAPSHOT_HEADER/FOOTER from 3.3, for
        KRAFT_VERSION/VOTERS from 3.8, for LEADER_CHANGE in DLS-java (observed in 4.3.1).
        """
        if self.v < (3, 0):
            names = {0: "ABORT", 1: "COMMIT", 2: "QUORUM_REASSIGNMENT", 3: "LEADER_CHANGE"}
        else:
            names = {0: "ABORT", 1: "COMMIT", 2: "LEADER_CHANGE", 3: "SNAPSHOT_HEADER", 4: "SNAPSHOT_FOOTER"}
            if self.v >= (3, 8):
                names |= {5: "KRAFT_VERSION", 6: "KRAFT_VOTERS"}
        name = names.get(type_id, "UNKNOWN")
        if name in ("ABORT", "COMMIT"):
            return name, "marker"
        json_types = set()
        if self.v >= (3, 3):
            json_types |= {"SNAPSHOT_HEADER", "SNAPSHOT_FOOTER"}
        if self.v >= (3, 8):
            json_types |= {"KRAFT_VERSION", "KRAFT_VOTERS"}
        if self.java:
            json_types.add("LEADER_CHANGE")
        return name, "json" if name in json_types else "type"


_CONTROL_IDS = {name: i for i, name in CONTROL_TYPES.items()}


def _control_id(control_type: object) -> int:
    s = str(control_type)
    if s.startswith("UNKNOWN("):
        return int(s[8:-1])
    return _CONTROL_IDS[s]


def _payload_bytes(s: object) -> bytes | None:
    """Inverse of kafka_ops.engine.dump._payload: UTF-8 text as is, other bytes as "0x" + hex.

    (The two collide only for a text value that itself reads "0x" + the hex of invalid UTF-8.)
    """
    if s is None:
        return None
    assert isinstance(s, str)
    if s.startswith("0x"):
        try:
            raw = bytes.fromhex(s[2:])
        except ValueError:
            return s.encode()
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError:
            return raw
    return s.encode()


def _opt_long(v: object) -> str:
    return "OptionalLong.empty" if v is None else f"OptionalLong[{v}]"


class Diffs(list[str]):
    def eq(self, what: str, ours: object, theirs: object) -> None:
        if ours != theirs:
            self.append(f"{what}: ours {ours!r}, DumpLogSegments {theirs!r}")


def _lookup(slots: list[tuple[int, int]], target: int) -> int:
    """OffsetIndex.lookup(target).position over every slot of the .index, zero padding included
    (AbstractIndex.indexSlotRangeFor / binarySearch, LARGEST_LOWER_BOUND; warm section 8192 / 8 entries)."""
    n = len(slots)
    if n == 0:
        return 0

    def search(lo: int, hi: int) -> int:
        while lo < hi:
            mid = (lo + hi + 1) >> 1
            k = slots[mid][0]
            if k > target:
                hi = mid - 1
            elif k < target:
                lo = mid
            else:
                return mid
        return lo

    first_hot = max(0, n - 1 - 8192 // 8)
    if slots[first_hot][0] < target:
        return slots[search(first_hot, n - 1)][1]
    if slots[0][0] > target:
        return 0  # slot -1: OffsetPosition(baseOffset, 0)
    return slots[search(0, first_hot)][1]


def _by_type(evs: list[dict[str, object]], t: str) -> list[dict[str, object]]:
    return [e for e in evs if e["type"] == t]


def _file_ev(evs: list[dict[str, object]]) -> dict[str, object] | None:
    return next((e for e in evs if e["type"] == "file"), None)


@dataclass
class LogModel:
    """What DumpLogSegments iterates in a .log: our batches, then (past a batch we stop at) the rest."""

    batches: list[dict[str, object]]  # batch events (ours, then the engine's past our stop)
    records: list[list[dict[str, object]]]  # per batch
    crash: str | None = None  # exception class DLS must stop with
    invalid_bytes: int | None = None


def _log_model(path: str, evs: list[dict[str, object]]) -> LogModel:
    batches: list[dict[str, object]] = []
    records: list[list[dict[str, object]]] = []
    for e in evs:
        if e["type"] == "batch":
            batches.append(e)
            records.append([])
        elif e["type"] == "record":
            records[-1].append(e)
    tail = next((e for e in evs if e["type"] == "tail"), None)
    size = int(_file_ev(evs)["size"])  # type: ignore[arg-type, index]
    model = LogModel(batches, records)
    if tail is not None and tail["kind"] == "corrupt" and batches and not batches[-1]["crc_valid"]:
        # We stop at the first batch whose CRC fails, as LogSegment.recover() truncates there. DLS does not
        # validate while iterating (FileLogInputStream.nextBatch checks sizes only; dumpLog prints
        # batch.isValid and goes on, deep-iterating the bad batch's records too): read on with our engine.
        with LogBuffer.open(path) as buf:
            bad = batches[-1]
            bad_batch = next(iter(BatchScanner(buf, start=int(bad["position"]), verify_crc=False)))  # type: ignore[call-overload]
            records[-1] = [_record_ev(bad_batch, r) for r in iter_records(buf, bad_batch)]
            pos = bad_batch.position + bad_batch.size
            while True:
                sc = BatchScanner(buf, start=pos, verify_crc=True)
                more = list(sc)  # up to and including the next batch whose CRC fails
                for nb in more:
                    batches.append({"type": "batch", **nb.to_dict()})
                    records.append([_record_ev(nb, r) for r in iter_records(buf, nb)])
                if more and not more[-1].crc_valid:
                    pos = more[-1].position + more[-1].size
                    continue
                tail = sc.tail.to_dict() if sc.tail is not None else None
                break
    if tail is not None:
        if str(tail["reason"]).startswith("record size"):
            # FileLogInputStream.nextBatch: size < LegacyRecord.RECORD_OVERHEAD_V0 -> CorruptRecordException
            model.crash = "CorruptRecordException"
        elif tail["kind"] == "torn":
            model.invalid_bytes = int(tail["truncated_bytes"])  # type: ignore[arg-type]
    elif (iterated := sum(int(b["size"]) for b in batches)) < size:  # type: ignore[misc]
        model.invalid_bytes = size - iterated
    return model


def _record_ev(batch: Batch, r: Record) -> dict[str, object]:
    """A record event as kafka-ops dump writes it (for batches past the one where our scan stops)."""
    ev: dict[str, object] = {
        "offset": r.offset, "timestamp": r.timestamp, "key_size": -1 if r.key is None else len(r.key),
        "value_size": -1 if r.value is None else len(r.value), "sequence": r.sequence,
        "header_keys": [k for k, _ in r.headers], "key": _payload(r.key), "value": _payload(r.value),
    }  # fmt: skip
    if batch.is_control:
        ev["control_type"], ev["coordinator_epoch"] = control_record(r.key, r.value)
    return ev


def compare_log(
    tool: Tool, path: str, evs: list[dict[str, object]], got: dumplog.DumpedFile, run: dumplog.DumpRun,
    abs_path: str, max_bytes: int | None = None,
) -> Diffs:  # fmt: skip
    d = Diffs()
    name = os.path.basename(path)
    errors = _by_type(evs, "error")
    d.eq("our errors", [], [e["error"] for e in errors])
    model = _log_model(abs_path, evs)
    d.eq("header", tool.log_header(name), got.header)
    if model.crash is not None:
        d.eq("crash", model.crash, got.exception)
    else:
        d.eq("crash", None, got.crash)
        # DLS 3.3+: `if (trailingBytes > 0 && maxBytes == Integer.MAX_VALUE)`: never with --max-bytes (we still
        # report a torn tail the file really has, not the cut our --max-bytes makes)
        d.eq("invalid trailing bytes", None if max_bytes else model.invalid_bytes, got.invalid_bytes)
    d.eq("batch count", len(model.batches), len(got.batches))
    offsets: list[int] = []
    for i, (ours, recs, theirs) in enumerate(zip(model.batches, model.records, got.batches, strict=False)):
        where = f"batch {i} at {ours['position']}"
        f = theirs.fields
        ts_type = str(ours["timestamp_type"])
        want: dict[str, str] = {}
        if int(ours["magic"]) >= 2:  # type: ignore[call-overload]
            want |= {
                "baseOffset": str(ours["base_offset"]), "lastOffset": str(ours["last_offset"]),
                "count": str(ours["count"]), "baseSequence": str(ours["base_sequence"]),
                "lastSequence": str(ours["last_sequence"]), "producerId": str(ours["producer_id"]),
                "producerEpoch": str(ours["producer_epoch"]),
                "partitionLeaderEpoch": str(ours["partition_leader_epoch"]),
                "isTransactional": str(ours["is_transactional"]).lower(),
                "isControl": str(ours["is_control"]).lower(),
            }  # fmt: skip
            if tool.v >= (3, 2):
                want["deleteHorizonMs"] = _opt_long(ours["delete_horizon_ms"])  # DLS 3.2+ printBatchLevel
        else:
            want["offset"] = str(ours["last_offset"])  # printBatchLevel: "offset: " + batch.lastOffset
        want |= {
            "position": str(ours["position"]), ts_type: str(ours["max_timestamp"]), "size": str(ours["size"]),
            "magic": str(ours["magic"]), "compresscodec": tool.codec(str(ours["codec"])), "crc": str(ours["crc"]),
            "isvalid": str(ours["crc_valid"]).lower(),
        }  # fmt: skip
        d.eq(f"{where} fields", want, f)
        d.eq(f"{where} records", len(recs), len(theirs.records))
        for r, t in zip(recs, theirs.records, strict=False):
            rw = f"{where} record {r['offset']}"
            offsets.append(int(r["offset"]))  # type: ignore[call-overload]
            d.eq(f"{rw} offset", r["offset"], t.offset)
            d.eq(f"{rw} timestamp", (ts_type, r["timestamp"]), (t.timestamp_type, t.timestamp))
            d.eq(f"{rw} sizes", (r["key_size"], r["value_size"]), (t.key_size, t.value_size))
            if int(ours["magic"]) >= 2:  # type: ignore[call-overload]
                d.eq(f"{rw} sequence", r["sequence"], t.sequence)
                d.eq(f"{rw} header keys", r["header_keys"], t.header_keys)
            elif ours["codec"] == "none":
                # an uncompressed legacy message is its own (only) record: the batch's CRC and validity
                d.eq(f"{rw} legacy crc", (ours["crc_valid"], ours["crc"]), (t.legacy_valid, t.legacy_crc))
            else:
                d.append(f"{rw}: a compressed legacy inner record's CRC is not in our events")
            if tool.v < (3, 0):
                # 2.8 repeats batch fields on the record line (DLS 2.8.2 dumpLog)
                b28 = {
                    "baseOffset": str(ours["base_offset"]), "lastOffset": str(ours["last_offset"]),
                    "baseSequence": str(ours["base_sequence"]), "lastSequence": str(ours["last_sequence"]),
                    "producerEpoch": str(ours["producer_epoch"]),
                    "partitionLeaderEpoch": str(ours["partition_leader_epoch"]), "batchSize": str(ours["size"]),
                    "magic": str(ours["magic"]), "compressType": tool.codec(str(ours["codec"])),
                    "position": str(ours["position"]),
                }  # fmt: skip
                d.eq(f"{rw} 2.8 batch fields", b28, t.batch_fields)
            if ours["is_control"]:
                ctype = r.get("control_type", ours.get("control_type"))
                cname, form = tool.control(_control_id(ctype))
                d.eq(f"{rw} control type", cname, t.control)
                if form == "marker":
                    epoch = r.get("coordinator_epoch", ours.get("coordinator_epoch"))
                    d.eq(f"{rw} coordinator epoch", epoch, t.coordinator_epoch)
                elif form == "type":
                    d.eq(f"{rw} control type id", _control_id(ctype), t.control_type_id)
                else:
                    d.eq(f"{rw} control record as JSON", True, t.control_json is not None)
                d.eq(f"{rw} data", "", t.data)  # dumpLog: `printContents && !batch.isControlBatch`
            else:
                key, value = _payload_bytes(r.get("key")), _payload_bytes(r.get("value"))
                # DecoderMessageParser with StringDecoder: new String(bytes, UTF_8); " key: K" then " payload: V"
                data = ("" if key is None else " key: " + dumplog.java_utf8(key)) + (
                    "" if value is None else " payload: " + dumplog.java_utf8(value)
                )
                d.eq(f"{rw} key/payload", data, t.data)
    d.eq("unparsed output", [], got.unparsed)
    # Non-consecutive offsets over the whole file (stderr). DLS (Scala): the first record sets lastOffset,
    # each later one not at lastOffset + 1 is listed (a List, prepended). DLS-java: lastOffset starts at -1,
    # so a first offset other than 0 is listed too, and a TreeMap keyed by the earlier offset keeps one each.
    pairs = [(a, b) for a, b in pairwise(offsets) if b != a + 1]
    if tool.java:
        if offsets and offsets[0] != 0:
            pairs.insert(0, (-1, offsets[0]))
        pairs = sorted(dict(pairs).items())
    if model.crash is None:
        d.eq("non-consecutive offsets", sorted(pairs), sorted(run.non_consecutive.get(path, [])))
    return d


def compare_index(
    tool: Tool, path: str, evs: list[dict[str, object]], got: dumplog.DumpedFile, run: dumplog.DumpRun,
    abs_path: str, log_evs: list[dict[str, object]] | None, verify_only: bool = False,
) -> Diffs:  # fmt: skip
    d = Diffs()
    f = _file_ev(evs)
    base = int(os.path.basename(path).split(".")[0])
    log_path = abs_path[: -len(".index")] + ".log"
    if log_evs is None:
        # dumpIndex opens the .log first: FileRecords.open(logFile, false) -> NoSuchFileException
        d.eq("crash", "NoSuchFileException", got.exception)
        return d
    assert f is not None
    if int(f["entries_kafka_counts"]) == 0:  # type: ignore[call-overload]
        d.eq("empty", True, got.empty)  # DLS: `if (index.entries == 0) println(s"$file is empty.")`
        d.eq("entries", [], got.index_entries)
        d.eq("crash", None, got.crash)
        return d
    ours = [(int(e["offset"]), int(e["position"])) for e in _by_type(evs, "index_entry")]  # type: ignore[call-overload]
    # DLS dumpIndex: "since it is a sparse file, in the event of a crash there may be many zero entries, stop
    # if we see one": it stops at the first slot i > 0 whose offset is the base offset. We list every slot
    # before the all-zero tail and report the padding separately.
    stop = next((i for i, (o, _) in enumerate(ours) if i > 0 and o == base), len(ours))
    want = ours[:stop]
    # For each entry DLS reads the first batch at its position (fileRecords.slice(position, maxMessageSize))
    # and records a mismatch when that batch's last offset is not the entry's offset. Positions past the end
    # make slice throw; an empty slice makes iterator.next() throw.
    mismatches: list[tuple[int, int]] = []
    crash = None
    with LogBuffer.open(log_path) as buf:
        for i, (o, p) in enumerate(want):
            if p > buf.size:
                crash, want = "IllegalArgumentException", want[:i]
                break
            sc = BatchScanner(buf, start=p, end=min(buf.size, p + MAX_MESSAGE_SIZE), verify_crc=False)
            first = next(iter(sc), None)
            if first is None:
                corrupt = sc.tail is not None and sc.tail.reason.startswith("record size")
                crash, want = "CorruptRecordException" if corrupt else "NoSuchElementException", want[:i]
                break
            if first.last_offset != o:
                mismatches.append((o, first.last_offset))
    if verify_only:  # dumpIndex: `if (!verifyOnly) println(...)`; the mismatches are still collected
        want = []
    d.eq("entries", want, got.index_entries)
    d.eq("crash", crash, got.exception)
    if tool.java:  # DLS-java: a TreeMap(reverseOrder) keyed by the index offset
        mismatches = list(dict(mismatches).items())
    if crash is None:
        d.eq("offset mismatches", sorted(mismatches), sorted(run.index_mismatches.get(path, [])))
    d.eq("unparsed output", [], got.unparsed)
    return d


def compare_time_index(
    tool: Tool, path: str, evs: list[dict[str, object]], got: dumplog.DumpedFile, abs_path: str,
    log_exists: bool, idx_evs: list[dict[str, object]] | None, verify_only: bool = False,
) -> tuple[Diffs, dict[str, list[tuple[int, int]]]]:  # fmt: skip
    """Also returns the stderr lists DLS must print for this file (mismatch, out of order, not found)."""
    d = Diffs()
    expect: dict[str, list[tuple[int, int]]] = {"mismatch": [], "order": [], "not_found": []}
    base = int(os.path.basename(path).split(".")[0])
    if not log_exists:  # dumpTimeIndex opens the .log first
        d.eq("crash", "NoSuchFileException", got.exception)
        return d, expect
    if (
        idx_evs is None
    ):  # new OffsetIndex(missing file, .., maxIndexSize -1, ..): "Invalid max index size: -1"
        d.eq("crash", "IllegalArgumentException", got.exception)
        return d, expect
    ours = [(int(e["timestamp"]), int(e["offset"])) for e in _by_type(evs, "time_index_entry")]  # type: ignore[call-overload]
    stop = next((i for i, (_, o) in enumerate(ours) if i > 0 and o == base), len(ours))  # the same stop rule
    want = ours[:stop]
    idx_file = _file_ev(idx_evs)
    slots = [(int(e["offset"]), int(e["position"])) for e in _by_type(idx_evs, "index_entry")]  # type: ignore[call-overload]
    slots += [(base, 0)] * int(idx_file["zero_padded_slots"] if idx_file else 0)  # type: ignore[call-overload]
    prev = -1  # RecordBatch.NO_TIMESTAMP
    crash = None
    with LogBuffer.open(abs_path[: -len(".timeindex")] + ".log") as buf:
        # every scan from a batch start is a tail of the scan from 0: scan once (a padded .index sends every
        # lookup to position 0, and a marker-flooded segment has thousands of batches)
        scan0 = BatchScanner(buf, verify_crc=False)
        chain = list(scan0)
        at = {b.position: i for i, b in enumerate(chain)}
        lasts = [b.last_offset for b in chain]
        ordered = all(map(operator.le, lasts, lasts[1:]))
        for ts, o in want:
            # dumpTimeIndex: position = index.lookup(entry.offset).position, then the first batch from there
            # whose lastOffset >= entry.offset (Scala: lazy find; Java: collects every batch first)
            pos = _lookup(slots, o)
            if pos in at:
                k, tail = at[pos], scan0.tail
                j = (
                    bisect.bisect_left(lasts, o, k)
                    if ordered
                    else next((j for j in range(k, len(chain)) if lasts[j] >= o), len(chain))
                )
                match = chain[j] if j < len(chain) else None
            else:  # not a batch start: DLS reads whatever lies there as batch headers
                scan = BatchScanner(buf, start=pos, verify_crc=False)
                scanned = list(scan)
                match, tail = next((b for b in scanned if b.last_offset >= o), None), scan.tail
            if (tool.java or match is None) and tail is not None and tail.reason.startswith("record size"):
                # FileLogInputStream.nextBatch throws CorruptRecordException on a size below 14 before a match
                # (Scala's lazy find) or anywhere after the position (Java collects them all): the run ends
                crash = "CorruptRecordException"
                want = want[: want.index((ts, o))]
                break
            if match is None:
                expect["not_found"].append((o, -1))
            elif match.last_offset != o:
                expect["not_found"].append((o, match.last_offset))
            else:
                max_ts = max([r.timestamp for r in iter_records(buf, match)], default=-1)
                if max_ts != ts:
                    expect["mismatch"].append((ts, max_ts))
                if prev >= ts:
                    expect["order"].append((ts, prev))
            prev = ts
    d.eq("entries", [] if verify_only else want, got.time_entries)  # dumpTimeIndex: `if (!verifyOnly)`
    d.eq("crash", crash, got.exception)
    d.eq("unparsed output", [], got.unparsed)
    if crash is not None:
        expect = {"mismatch": [], "order": [], "not_found": []}  # summaries are printed after the loop only
    return d, expect


def compare_snapshot(
    tool: Tool, evs: list[dict[str, object]], got: dumplog.DumpedFile
) -> tuple[Diffs, list[str]]:
    """Also returns the stderr message DLS must print (a CorruptSnapshotException, caught per file)."""
    d = Diffs()
    f = _file_ev(evs)
    err = _by_type(evs, "error")
    messages: list[str] = []
    want: list[dict[str, str]] = []
    if f is None:
        # ours refuses the file (too short, unknown version, entries past the end): the struct read of
        # ProducerStateManager.readSnapshot fails first -> "Snapshot failed schema validation: ..."
        d.eq("our error", True, bool(err))
        messages.append("Snapshot failed schema validation")
    elif not f["crc_valid"]:
        # readSnapshot checks the CRC before returning any entry
        messages.append(f"Snapshot is corrupt (CRC is no longer valid). Stored crc: {f['crc']}.")
    else:
        for e in _by_type(evs, "producer_state"):
            w = {
                "producerId": str(e["producer_id"]), "producerEpoch": str(e["producer_epoch"]),
                "coordinatorEpoch": str(e["coordinator_epoch"]),
            }  # fmt: skip
            first = e["current_txn_first_offset"]
            # 3.x: OptionalLong (ProducerStateEntry.currentTxnFirstOffset); 2.8: Scala Option[Long]
            if tool.v >= (3, 0):
                w["currentTxnFirstOffset"] = _opt_long(first if int(first) >= 0 else None)  # type: ignore[call-overload]
            else:
                w["currentTxnFirstOffset"] = f"Some({first})" if int(first) >= 0 else "None"  # type: ignore[call-overload]
            if tool.v >= (3, 1):
                w["lastTimestamp"] = str(e["timestamp"])
            if int(e["last_offset"]) >= 0:  # type: ignore[call-overload]
                # readSnapshot keeps BatchMetadata only for lastOffset >= 0; firstSeq is
                # DefaultRecordBatch.decrementSequence(lastSeq, offsetDelta)
                w |= {
                    "firstSequence": str(e["first_sequence"]), "lastSequence": str(e["last_sequence"]),
                    "lastOffset": str(e["last_offset"]), "offsetDelta": str(e["offset_delta"]),
                    "timestamp": str(e["timestamp"]),
                }  # fmt: skip
            want.append(w)
    d.eq("producer entries", want, got.producer_states)
    d.eq("crash", None, got.crash)
    d.eq("unparsed output", [], got.unparsed)
    return d, messages


def compare_txn_index(evs: list[dict[str, object]], got: dumplog.DumpedFile) -> Diffs:
    d = Diffs()
    want = [
        {
            k: int(e[k])
            for k in ("version", "producer_id", "first_offset", "last_offset", "last_stable_offset")
        }  # type: ignore[call-overload]
        for e in _by_type(evs, "aborted_txn")
    ]
    # TransactionIndex.iterable: hasNext while at least AbortedTxn.TOTAL_SIZE (34) bytes remain; a version
    # above 0 throws KafkaException
    crash = "KafkaException" if any(w["version"] > 0 for w in want) else None
    if crash:
        want = want[: next(i for i, w in enumerate(want) if w["version"] > 0)]
    d.eq("aborted transactions", want, got.aborted_txns)
    d.eq("crash", crash, got.exception)
    d.eq("unparsed output", [], got.unparsed)
    return d


# ------------------------------------------------------------------------------------------- features


def features(rel: str, evs: list[dict[str, object]]) -> set[tuple[object, ...]]:
    """What a file exercises in DumpLogSegments' output (the subset for other releases covers them all)."""
    name = os.path.basename(rel)
    kind = dumplog._kind(rel)
    out: set[tuple[object, ...]] = {(kind,)}
    if name.endswith(".checkpoint"):
        out.add(("checkpoint",))
    offsets = [int(e["offset"]) for e in evs if e["type"] == "record"]  # type: ignore[call-overload]
    if any(b != a + 1 for a, b in pairwise(offsets)):
        out.add(("offset gap",))  # stderr "Non-consecutive offsets"
    if offsets and offsets[0] != 0:
        out.add(("first offset not 0",))  # DLS-java lists (-1, first)
    for e in evs:
        t = e["type"]
        if t == "batch":
            out.add(("batch", e["magic"], e["codec"], e["timestamp_type"], e["crc_valid"]))
            if e["is_control"]:
                out.add(("control", e["control_type"]))
            if e["is_transactional"]:
                out.add(("transactional",))
            if e["delete_horizon_ms"] is not None:
                out.add(("delete_horizon",))
        elif t == "record" and e["header_keys"]:
            out.add(("headers",))
        elif t == "tail":
            out.add(("tail", e["kind"], str(e["reason"]).split(" ")[0]))
        elif t == "index_issue":
            out.add((kind, "issue", e["kind"]))
        elif t == "file" and kind in ("index", "timeindex"):
            out.add((kind, "empty" if e["entries_kafka_counts"] == 0 else "entries"))
        elif t == "file" and kind == "snapshot":
            out.add((kind, "entries" if e["entries"] else "none", e["crc_valid"]))
        elif t == "error":
            out.add((kind, "error"))
    return out


def _cost(root: Path, rel: str, ours: dict[str, list[dict[str, object]]]) -> int:
    """About what DumpLogSegments spends on a file: its size, and for a time index whose offset index is
    zero-padded, a scan from position 0 per entry (OffsetIndex.lookup lands on a padding slot)."""
    cost = (root / rel).stat().st_size
    stem = rel[: rel.rfind(".")]
    if rel.endswith(".timeindex") and (idx := ours.get(stem + ".index")):
        f = _file_ev(idx)
        if f and f["zero_padded_slots"] and (root / (stem + ".log")).exists():
            cost += len(_by_type(ours[rel], "time_index_entry")) * (root / (stem + ".log")).stat().st_size
    return cost


def _cover(files: list[str], feats: dict[str, set[tuple[object, ...]]], costs: dict[str, int]) -> list[str]:
    """Greedy: the cheapest files that together show every feature."""
    todo = set().union(*feats.values()) if feats else set()
    chosen: list[str] = []
    for f in sorted(files, key=lambda f: costs[f]):
        if feats[f] & todo:
            chosen.append(f)
            todo -= feats[f]
    return chosen


# --------------------------------------------------------------------------------------------- fixture


def _expected_crash(root: Path, rel: str) -> bool:
    """Files that end a DumpLogSegments run (they get a JVM each): an index without its .log or .index."""
    p = root / rel
    stem = str(p)[: str(p).rfind(".")]
    if rel.endswith(".index"):
        return not os.path.exists(stem + ".log")
    if rel.endswith(".timeindex"):
        return not (os.path.exists(stem + ".log") and os.path.exists(stem + ".index"))
    return False


def _run(version: str, root: Path, files: list[str], args: tuple[str, ...] = DLS_ARGS,
         crashers: list[str] | None = None) -> dumplog.DumpRun:  # fmt: skip
    """DumpLogSegments over ``files`` under ``root``; files expected to end the run get a JVM each."""
    crashers = crashers if crashers is not None else [f for f in files if _expected_crash(root, f)]
    run = dumplog.run(version, [f for f in files if f not in crashers], root, args)
    run.merge(dumplog.run_each(version, crashers, root, args=args))
    return run


def _private_copy(src: Path, files: list[str], root: Path) -> Path:
    """The files (and the .log / .index their dump opens) copied under ``root``, paths kept.

    DLS-java (4.3) writes to what it dumps: dumpIndex opens the OffsetIndex in try-with-resources, so
    AbstractIndex.close() -> trimToValidSize() cuts an .index whose size is not a multiple of 8 down to one.
    """
    for rel in files:
        stem = rel[: rel.rfind(".")]
        for f in {rel, stem + ".log", stem + ".index"}:
            if (src / f).exists():
                (root / f).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(src / f, root / f)
    return root


def _stat(root: Path, files: list[str]) -> dict[str, tuple[int, int]]:
    return {f: ((st := (root / f).stat()).st_size, st.st_mtime_ns) for f in files}


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    if not _available(FULL):
        pytest.skip(f"no java or no Kafka {FULL} jars (kafka_lab.jars)")
    if not (CORPUS / "README.md").is_file():
        pytest.skip(f"no corpus at {CORPUS}")
    t0 = time.monotonic()
    tmp = tmp_path_factory.mktemp("dumporacle")
    shutil.copytree(CORPUS, tmp / "corpus", ignore=shutil.ignore_patterns("*.md"))
    for d, _dirs, names in os.walk(tmp / "corpus"):  # the corpus is read-only; the copy need not be
        os.chmod(d, 0o755)
        for n in names:
            os.chmod(os.path.join(d, n), 0o644)
    simulate_host(str(tmp / "sim"), HostSpec(failures=Failures.all()))  # = kafka-ops simulate DIR --fail all
    _codec_host(str(tmp / "codecs"))
    sets = [DataSet(n, _partition_files(tmp / n, tmp)) for n in ("corpus", "sim", "codecs")]
    sets.append(DataSet("damaged", _damage(tmp, sets[1].files, tmp / "damaged")))
    lab = Lab(tmp, sets)
    before = _stat(tmp, lab.files)
    lab.seconds["setup"] = time.monotonic() - t0

    # DumpLogSegments runs in the background (two JVMs at a time) while we dump the same files.
    with ThreadPoolExecutor(max_workers=1) as bg:
        t1 = time.monotonic()
        full = bg.submit(_run, FULL, tmp, lab.files)
        for rel in lab.files:
            lab.ours[rel] = _our_events(str(tmp / rel))
        lab.seconds["ours"] = time.monotonic() - t1
        for ds in sets:
            feats = {f: features(f, lab.ours[f]) for f in ds.files}
            costs = {f: _cost(tmp, f, lab.ours) for f in ds.files}
            lab.subset += _cover(ds.files, feats, costs)
        others: dict[str, Future[dumplog.DumpRun]] = {}
        for v in (v for v in OTHERS if _available(v)):
            root = _private_copy(tmp, lab.subset, tmp / f"dls-{v}") if Tool(v).java else tmp
            if Tool(v).java:
                lab.private[v] = root
            others[v] = bg.submit(_run, v, root, lab.subset)
        lab.runs[FULL] = full.result()
        lab.seconds[FULL] = time.monotonic() - t1
        for v, fut in others.items():
            lab.runs[v] = fut.result()
        lab.seconds["all"] = time.monotonic() - t0
    lab.changed = {p for p, st in _stat(tmp, lab.files).items() if before[p] != st}
    yield lab


def _compare(
    lab: Lab, version: str, files: list[str], run: dumplog.DumpRun | None = None,
    ours: dict[str, list[dict[str, object]]] | None = None, verify_only: bool = False,
    max_bytes: int | None = None, counter: str | None = None, whole_run: bool = False,
) -> dict[str, list[str]]:  # fmt: skip
    """Every file's differences; ``run``/``ours`` default to the plain dump of ``version`` and our events.

    ``whole_run``: ``files`` are all the run dumped, so the stderr lines that name no file (Scala's "indexed
    offsets not found" groups, corrupt snapshot messages, anything unexplained) are compared too.
    """
    tool = Tool(version)
    run = run or lab.runs[version]
    ours = ours or lab.ours
    counter = counter or version
    problems: dict[str, list[str]] = {}
    time_expect: dict[str, dict[str, list[tuple[int, int]]]] = {}
    snapshot_messages: list[str] = []
    for rel in files:
        abs_path = str(lab.root / rel)
        evs = ours[rel]
        got = run.files.get(rel)
        kind = dumplog._kind(rel)
        if kind == "log" and rel.endswith(".checkpoint") and not tool.reads_checkpoints():
            diffs = Diffs()
            diffs.eq("ignored", True, rel in run.ignored)  # no Snapshots.SUFFIX case before 3.3
        elif got is None:
            diffs = Diffs(["DumpLogSegments printed no section for it"])
        elif kind == "log":
            diffs = compare_log(tool, rel, evs, got, run, abs_path, max_bytes)
        elif kind == "index":
            log = rel[: -len(".index")] + ".log"
            diffs = compare_index(tool, rel, evs, got, run, abs_path, lab.ours.get(log), verify_only)
        elif kind == "timeindex":
            stem = rel[: -len(".timeindex")]
            idx = lab.ours.get(stem + ".index")
            exists = (lab.root / (stem + ".log")).exists()
            diffs, expect = compare_time_index(tool, rel, evs, got, abs_path, exists, idx, verify_only)
            time_expect[rel] = expect
        elif kind == "snapshot":
            diffs, msgs = compare_snapshot(tool, evs, got)
            snapshot_messages += msgs
        elif kind == "txnindex":
            diffs = compare_txn_index(evs, got)
        else:
            diffs = Diffs([f"unexpected file kind {kind}"])
        if diffs:
            problems[rel] = diffs
        elif got is not None:
            c = lab.compared.setdefault(counter, Counter())
            c[f"{kind} files"] += 1
            c["batches"] += len(got.batches)
            c["records"] += len(got.records)
            c["payloads"] += sum(1 for r in got.records if r.data)
            c["control records"] += sum(1 for r in got.records if r.control)
            c["index entries"] += len(got.index_entries)
            c["time index entries"] += len(got.time_entries)
            c["producer states"] += len(got.producer_states)
            c["aborted txns"] += len(got.aborted_txns)
            c["crashes"] += got.crash is not None
            c["invalid tails"] += got.invalid_bytes is not None
            c["stderr: index mismatches"] += len(run.index_mismatches.get(rel, []))
            c["stderr: time index mismatches"] += len(run.time_mismatches.get(rel, []))
            c["stderr: time index out of order"] += len(run.time_out_of_order.get(rel, []))
            c["stderr: non-consecutive offsets"] += len(run.non_consecutive.get(rel, []))
    # the time indexes' stderr summaries, by path (DLS-java names the file of "not found" groups too)
    mine = set(files)
    named = {p: sorted(g) for p, g in run.time_not_found if p is not None}
    for name, have_all in (
        ("mismatch", run.time_mismatches), ("order", run.time_out_of_order), ("not_found", named)
    ):  # fmt: skip
        want = {p: sorted(e[name]) for p, e in time_expect.items() if e[name]}
        if name == "not_found" and not named:
            continue
        have = {p: sorted(v) for p, v in have_all.items() if p in mine}
        if want != have:
            problems.setdefault("<stderr>", []).append(
                f"time index {name}: ours {want}, DumpLogSegments {have}"
            )
    if not whole_run:
        return problems
    # Scala's "not found" groups name no file: compare them as a multiset over the whole run
    want_nf = sorted(sorted(e["not_found"]) for e in time_expect.values() if e["not_found"] and not named)
    have_nf = sorted(sorted(g) for p, g in run.time_not_found if p is None)
    if want_nf != have_nf:
        problems.setdefault("<stderr>", []).append(
            f"offsets not found: ours {want_nf}, DumpLogSegments {have_nf}"
        )
    # corrupt snapshots: CorruptSnapshotException messages, caught per file (no file name)
    have_msgs = sorted(m for m in run.stderr_messages if m.startswith("Snapshot "))
    want_msgs = sorted(snapshot_messages)
    if len(have_msgs) != len(want_msgs) or not all(
        h.startswith(w) for w, h in zip(want_msgs, have_msgs, strict=False)
    ):
        problems.setdefault("<stderr>", []).append(
            f"snapshot messages: ours {want_msgs}, DumpLogSegments {have_msgs}"
        )
    rest = [m for m in run.stderr_messages if not m.startswith("Snapshot ")]
    if rest:
        problems.setdefault("<stderr>", []).append(f"unexplained stderr: {rest[:5]}")
    if "<stderr>" not in problems:
        c = lab.compared.setdefault(counter, Counter())
        c["stderr: indexed offsets not found"] += sum(len(g) for _, g in run.time_not_found)
        c["stderr: corrupt snapshots"] += len(have_msgs)
    return problems


def _report(problems: dict[str, list[str]], limit: int = 40) -> str:
    lines = []
    for f, ds in sorted(problems.items()):
        lines.append(f"{f}: {len(ds)} differences")
        lines += [f"    {x}" for x in ds[:8]]
        if len(lines) > limit:
            break
    return "\n".join(lines)


@pytest.mark.parametrize("set_name", ["corpus", "sim", "codecs", "damaged"])
def test_full_release_agrees_on_every_file(lab: Lab, set_name: str) -> None:
    ds = next(s for s in lab.sets if s.name == set_name)
    assert ds.files
    problems = _compare(lab, FULL, ds.files)
    assert not problems, _report(problems)


def test_full_release_stderr_lines_without_file_names(lab: Lab) -> None:
    """Scala's "offsets not found" groups and corrupt-snapshot messages name no file: compared over the run."""
    files = [f for f in lab.files if f.endswith((".timeindex", ".snapshot"))]
    problems = _compare(lab, FULL, files, counter=f"{FULL} (stderr)", whole_run=True)
    assert not problems, _report(problems)


@pytest.mark.parametrize("version", OTHERS)
def test_other_releases_agree_on_covering_subset(lab: Lab, version: str) -> None:
    if version not in lab.runs:
        pytest.skip(f"no Kafka {version} jars")
    problems = _compare(lab, version, lab.subset, whole_run=True)
    assert not problems, _report(problems)


def test_dump_log_segments_changes_only_what_dls_java_trims(lab: Lab) -> None:
    """DumpLogSegments up to 4.2 (Scala) leaves every file as it was; 4.3 (Java) cuts an .index whose size is not
    a multiple of 8 (try-with-resources OffsetIndex -> AbstractIndex.close() -> trimToValidSize()), as root even
    in a read-only data dir: a reason to dump copies."""
    assert lab.changed == set()
    odd = [rel for rel in lab.subset if rel.endswith(".index") and (lab.root / rel).stat().st_size % 8]
    assert odd, "no .index of odd size in the subset: the trim is not exercised"
    for v, root in lab.private.items():
        for rel in lab.subset:
            if rel.endswith(".index") and (root / (rel[:-6] + ".log")).exists():
                size, now = (lab.root / rel).stat().st_size, (root / rel).stat().st_size
                assert now == size - size % 8, f"{v} {rel}: {size} -> {now}"


def test_cli_json_is_what_was_compared(lab: Lab) -> None:
    """`kafka-ops dump --format json --records --payloads` prints exactly the events the comparison used."""
    files = [f for f in lab.subset if not f.endswith(".index")][:12] + [
        f for f in lab.subset if f.endswith(".index")
    ][:3]
    proc = subprocess.run(
        [sys.executable, "-m", "kafka_ops.cli", "dump", "--format", "json", "--records", "--payloads",
         "--files", ",".join(files)],
        cwd=lab.root, capture_output=True, text=True, check=False,
    )  # fmt: skip
    printed = [json.loads(line) for line in proc.stdout.splitlines()]
    want = [ev for f in files for ev in lab.ours[f]]
    assert "Traceback" not in proc.stderr and len(printed) == len(want)
    for got_ev, want_ev in zip(printed, want, strict=True):
        got_ev["file"] = str(lab.root / str(got_ev["file"]))  # events name files by the path given
        assert got_ev == want_ev


# ------------------------------------------------------------------ kafka-dump-log.sh's options, same files

OPTION_ARGS: dict[str, tuple[str, ...]] = {
    "offsets-decoder": ("--offsets-decoder",),
    "transaction-log-decoder": ("--transaction-log-decoder",),
    "index-sanity-check": ("--index-sanity-check",),
    "verify-index-only": ("--verify-index-only",),
    "max-bytes": (*DLS_ARGS, "--max-bytes", "3000"),
}
MAX_BYTES = 3000


def _our_options(option: str) -> DumpOptions:
    """What ``kafka-ops dump`` runs for each kafka-dump-log.sh option (cli/dump.py)."""
    return {
        "offsets-decoder": DumpOptions(records=True, payloads=True, decoder=CONSUMER_OFFSETS),
        "transaction-log-decoder": DumpOptions(records=True, payloads=True, decoder=TRANSACTION_STATE),
        "index-sanity-check": DumpOptions(sanity_only=True),
        "verify-index-only": DumpOptions(max_index_entries=0),
        "max-bytes": DumpOptions(records=True, payloads=True, max_bytes=MAX_BYTES),
    }[option]


def _option_files(lab: Lab, option: str) -> list[str]:
    """The files an option is about, from the covering subset (every index shape, every kind of log) and, for
    the decoders, every internal topic's log; files that end the plain run (covered there) are left out."""
    plain = lab.runs[FULL]
    out = []
    for f in lab.files:
        part = os.path.basename(os.path.dirname(f))
        if (got := plain.files.get(f)) is None or got.crash is not None or not f.endswith(SUFFIXES):
            continue
        if option == "offsets-decoder":
            take = f.endswith(".log") and part.startswith("__consumer_offsets-")
        elif option == "transaction-log-decoder":
            take = f.endswith(".log") and part.startswith("__transaction_state-")
        elif option in ("index-sanity-check", "verify-index-only"):
            take = f.endswith((".index", ".timeindex")) and f in lab.subset
        else:
            take = f.endswith(".log") and f in lab.subset
        if take:
            out.append(f)
    return out


@dataclass
class OptionRun:
    run: dumplog.DumpRun
    files: list[str]
    ours: dict[str, list[dict[str, object]]]  # our events with the matching options


@pytest.fixture(scope="module")
def option_runs(lab: Lab) -> dict[str, OptionRun]:
    """option -> DumpLogSegments 3.9.1 with it over the option's files, and our events with ours."""
    t0 = time.monotonic()
    out: dict[str, OptionRun] = {}
    with ThreadPoolExecutor(max_workers=1) as bg:
        futs = {}
        for option, args in OPTION_ARGS.items():
            files = _option_files(lab, option)
            opts = _our_options(option)
            ours = {
                f: json.loads(json.dumps(list(dump_file(str(lab.root / f), opts)), default=str))
                for f in files
            }
            # a failing sanity check throws CorruptIndexException: those files get a JVM each
            crashers = [
                f for f in files if any(e["type"] == "sanity_check" and not e["passed"] for e in ours[f])
            ]  # fmt: skip
            futs[option] = (bg.submit(_run, FULL, lab.root, files, args, crashers), files, ours)
        for option, (fut, files, ours) in futs.items():
            out[option] = OptionRun(fut.result(), files, ours)
    lab.seconds["options"] = time.monotonic() - t0
    return out


def _decoded_diffs(option: str, rec: dict[str, object], t: dumplog.DumpedRecord) -> list[str]:
    """Our decoded record against the key/payload DumpLogSegments 3.9's decoder printed."""
    d = Diffs()
    dec = rec.get("decoded")
    where = f"record {rec['offset']}"
    if not isinstance(dec, dict):
        return [f"{where}: ours not decoded"]
    data = t.data
    if not data.startswith(" key: "):
        return [f"{where}: DumpLogSegments printed no key: {data[:100]!r}"]
    if option == "offsets-decoder":
        # OffsetsMessageParser: key {"type": "<key version>", "data": ..}, payload {"version": "<v>", "data": ..}
        # or "<DELETE>"; an unknown type or an error prints only a key: "Unknown record type N at offset O,
        # skipping." / "Error at offset O, skipping. <message>"
        if dec.get("error"):
            unknown = str(dec["error"]).startswith("key at byte 0: unknown record type")
            want = (
                f" key: Unknown record type {dec['key_version']}"
                if unknown
                else f" key: Error at offset {rec['offset']}"
            )
            d.eq(f"{where} undecodable", want, data[: len(want)])
            return d
        key, end = json.JSONDecoder().raw_decode(data, 6)
        d.eq(f"{where} key", {"type": str(dec["key_version"]), "data": dec["key"]}, key)
        rest = data[end:]
        if dec["tombstone"]:
            d.eq(f"{where} payload", " payload: <DELETE>", rest)
            return d
        if not rest.startswith(" payload: "):
            return [f"{where}: no payload in {rest[:80]!r}"]
        payload = json.loads(rest[10:])
        d.eq(f"{where} value version", str(dec["value_version"]), payload.get("version"))
        d.eq(f"{where} value", *_align(dec["value"], payload.get("data")))
        return d
    # TransactionLogMessageParser (TransactionLog.formatRecordKeyAndValue, 3.9): plain text
    if dec.get("error"):
        return [f"{where}: ours could not decode: {dec['error']}"]
    key = f"transaction_metadata::transactionalId={dec['key']['transactionalId']}"  # type: ignore[index]
    if dec["tombstone"]:
        d.eq(f"{where} key/payload", f" key: {key} payload: <DELETE>", data)
        return d
    v = dec["value"]
    assert isinstance(v, dict)
    head = f" key: {key} payload: producerId:{v['producerId']},producerEpoch:{v['producerEpoch']},state={v['state']},partitions=["
    tail = f"],txnLastUpdateTimestamp={v['transactionLastUpdateTimestampMs']},txnTimeoutMs={v['transactionTimeoutMs']}"
    if not (data.startswith(head) and data.endswith(tail)):
        return [f"{where}: ours {head}...{tail}, DumpLogSegments {data}"]
    # topicPartitions is a mutable Set: its mkString order is the hash set's
    theirs = data[len(head) : len(data) - len(tail)]
    parts = sorted(
        f"{tp['topic']}-{p}" for tp in v["transactionPartitions"] or [] for p in tp["partitionIds"]
    )
    d.eq(f"{where} partitions", parts, sorted(theirs.split(",")) if theirs else [])
    return d


def _align(ours: object, theirs: object) -> tuple[object, object]:
    """Our decoded value and DLS's JSON in the same terms.

    Bytes: Jackson prints them as base64; our decoder prints a blob as ``{"size": n}`` (compare the sizes).
    A classic group member's subscription/assignment: DLS replaces the bytes by the consumer protocol's JSON
    when it can (prepareGroupMetadataValue); we print ``{"size", "version", <fields>}``: drop size and version.
    """
    if isinstance(ours, dict):
        if set(ours) == {"size"} and isinstance(theirs, str):
            return ours, {"size": len(base64.b64decode(theirs))}
        if "size" in ours and isinstance(theirs, dict) and set(ours) - {"size", "version", "error"}:
            ours = {k: v for k, v in ours.items() if k not in ("size", "version")}
        if isinstance(theirs, dict):
            pairs = {k: _align(v, theirs.get(k)) for k, v in ours.items()}
            return {k: o for k, (o, _) in pairs.items()}, {
                k: pairs[k][1] if k in pairs else v for k, v in theirs.items()
            }
        return ours, theirs
    if isinstance(ours, list) and isinstance(theirs, list) and len(ours) == len(theirs):
        pairs2 = [_align(o, t) for o, t in zip(ours, theirs, strict=True)]
        return [o for o, _ in pairs2], [t for _, t in pairs2]
    return ours, theirs


def test_dump_log_options_agree(lab: Lab, option_runs: dict[str, OptionRun]) -> None:
    """kafka-dump-log.sh's option names in kafka-ops dump, checked against DumpLogSegments 3.9.1 with the same
    option on the same files: the decoders, --index-sanity-check, --verify-index-only, --max-bytes."""
    problems: dict[str, list[str]] = {}
    for option, o in option_runs.items():
        c = lab.compared.setdefault(f"{FULL} --{option}", Counter())
        for rel in o.files:
            evs, got = o.ours[rel], o.run.files.get(rel)
            key = f"--{option} {rel}"
            if got is None:
                problems[key] = ["DumpLogSegments printed no section for it"]
                continue
            d = Diffs()
            if option.endswith("decoder"):
                recs = [e for e in evs if e["type"] == "record" and "decoded" in e]
                theirs = [r for r in got.records if r.control is None]
                d.eq("decoded records", len(recs), len(theirs))
                for r, t in zip(recs, theirs, strict=False):
                    d += _decoded_diffs(option, r, t)
                c["decoded records"] += len(recs)
            elif option == "index-sanity-check":
                f = _file_ev(evs)
                check = next(e for e in evs if e["type"] == "sanity_check")
                if rel.endswith(".index") and f is not None and f["entries_kafka_counts"] == 0:
                    # dumpIndex: `if (index.entries == 0) { println(s"$file is empty."); return }` comes first
                    d.eq("empty", True, got.empty)
                elif check["passed"]:
                    d.eq("passed", True, got.sanity_passed)
                else:  # sanityCheck throws CorruptIndexException with the message we print
                    d.eq("exception", "CorruptIndexException", got.exception)
                    d.eq("message", True, str(check["message"]) in (got.crash or ""))
                c["failed" if not check["passed"] else "passed"] += 1
            elif option == "verify-index-only":
                listed = [e for e in evs if e["type"] in ("index_entry", "time_index_entry")]
                d.eq("entries we list", [], listed)
                issues = [e for e in evs if e["type"] == "index_issue"]
                d.eq("our issues", [e for e in lab.ours[rel] if e["type"] == "index_issue"], issues)
            if d:
                problems[key] = d
        if option in ("verify-index-only", "max-bytes"):
            for f, diffs in _compare(
                lab, FULL, o.files, o.run, o.ours if option == "max-bytes" else lab.ours,
                verify_only=option == "verify-index-only", max_bytes=MAX_BYTES if option == "max-bytes" else None,
                counter=f"{FULL} --{option}", whole_run=True,
            ).items():  # fmt: skip
                problems[f"--{option} {f}"] = diffs
    assert not problems, _report(problems)


def test_coverage(lab: Lab) -> None:
    """The comparison covered what it claims: every file type, magic 1 and 2, every codec, controls, tails.

    (Last in the file: it reports what every test before it compared.)
    """
    kinds = Counter(dumplog._kind(f) for f in lab.files)
    print(f"compared: { {v: dict(c) for v, c in lab.compared.items()} }")
    assert {"log", "index", "timeindex", "snapshot", "txnindex"} <= set(kinds)
    feats = set().union(*(features(f, lab.ours[f]) for f in lab.files))
    batches = {f for f in feats if f[0] == "batch"}
    assert {b[1] for b in batches} >= {1, 2}
    assert {b[2] for b in batches} >= {"none", "gzip", "snappy", "lz4", "zstd"}
    assert {f[1] for f in feats if f[0] == "control"} >= {
        "COMMIT",
        "ABORT",
        "LEADER_CHANGE",
        "SNAPSHOT_HEADER",
    }
    assert ("tail", "torn", "batch") in feats
    full = lab.compared[FULL]
    assert full["records"] > 100_000 and full["payloads"] > 90_000 and full["index entries"] > 1000
    assert full["producer states"] and full["aborted txns"] and full["crashes"] and full["invalid tails"]
    print(f"files per type: {dict(kinds)}; subset: {len(lab.subset)} files; "
          f"JVMs: { {v: r.jvm_runs for v, r in lab.runs.items()} }; "
          f"seconds: { {k: round(v, 1) for k, v in lab.seconds.items()} }")  # fmt: skip
