"""``kafka-ops dump``: every file of a log dir, decoded, verified, as events (dicts) for text or JSON output.

What it adds to ``kafka-dump-log.sh`` (core/.../tools/DumpLogSegments.scala): index entries verified against
the ``.log`` (engine.verify), zero padding counted instead of silently skipped, torn or CRC-invalid tails with
the byte position and the bytes recovery would truncate, records of aborted transactions marked from the
``.txnindex``, internal topics decoded by default, and every file type of a log dir (checkpoints, markers,
``meta.properties``, ``partition.metadata``, ``quorum-state``, producer snapshots).
Bad input never raises: an ``error`` event names the file and the byte position.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass

from kafka_ops.engine import checkpoints as ckpt
from kafka_ops.engine import compression
from kafka_ops.engine.decoders import decode_internal
from kafka_ops.engine.errors import EngineError
from kafka_ops.engine.indexes import (
    offset_sanity,
    read_offset_index,
    read_time_index,
    read_txn_index,
    time_sanity,
)
from kafka_ops.engine.layout import parse_kraft_snapshot, parse_partition_dir, parse_segment_file
from kafka_ops.engine.records import BatchScanner, LogBuffer, RecordError, control_record, iter_records
from kafka_ops.engine.snapshot import read_snapshot
from kafka_ops.engine.verify import LogMap, verify_offset_index, verify_time_index

Event = dict[str, object]


@dataclass
class DumpOptions:
    records: bool = False  # iterate records (kafka-dump-log's --deep-iteration)
    payloads: bool = False  # print keys and values (--print-data-log)
    decode: bool = True  # decode internal topics' keys and values
    verify_indexes: bool = True
    max_bytes: int | None = None  # stop reading a .log after this many bytes (KIP-824's --max-bytes)
    max_index_entries: int | None = None  # entries listed per index (all are verified)
    # decode every record as this internal topic's, whatever the partition dir says (kafka-dump-log.sh's
    # --offsets-decoder / --transaction-log-decoder): "__consumer_offsets" or "__transaction_state"
    decoder: str | None = None
    sanity_only: bool = False  # indexes: only OffsetIndex/TimeIndex.sanityCheck (--index-sanity-check)


def _err(path: str, exc: EngineError | str, position: int | None = None) -> Event:
    if isinstance(exc, EngineError):
        return {"type": "error", "file": exc.path, "position": exc.position, "error": exc.reason}
    return {"type": "error", "file": path, "position": position, "error": exc}


def _topic_of(path: str) -> str | None:
    parent = os.path.basename(os.path.dirname(os.path.abspath(path)))
    name = parse_partition_dir(parent)
    return name.topic if name else None


def _payload(b: bytes | None) -> str | None:
    if b is None:
        return None
    try:
        return b.decode("utf-8")
    except UnicodeDecodeError:
        return "0x" + b.hex()


def dump_log(path: str, opts: DumpOptions) -> Iterator[Event]:
    """Batches (and records) of a ``.log`` or KRaft ``.checkpoint`` file, then its tail."""
    try:
        buf = LogBuffer.open(path)
    except EngineError as exc:
        yield _err(path, exc)
        return
    topic = opts.decoder or _topic_of(path)
    aborted: list[tuple[int, int, int]] = []  # (producer id, first offset, last offset)
    txn_path = path[: -len(".log")] + ".txnindex" if path.endswith(".log") else None
    if txn_path and os.path.exists(txn_path):
        try:
            aborted = [
                (e.producer_id, e.first_offset, e.last_offset) for e in read_txn_index(txn_path).entries
            ]
        except EngineError as exc:
            yield _err(txn_path, exc)
    with buf:
        yield {"type": "file", "file": path, "kind": "log", "size": buf.size}
        scanner = BatchScanner(buf, end=opts.max_bytes)
        n_batches = n_records = 0
        for batch in scanner:
            ev: Event = {"type": "batch", "file": path, **batch.to_dict()}
            if batch.is_transactional and not batch.is_control:
                ev["aborted"] = any(
                    p == batch.producer_id and f <= batch.base_offset <= last for p, f, last in aborted
                )
            n_batches += 1
            yield ev
            if not (opts.records or opts.payloads) or not batch.crc_valid:
                continue
            # per batch, not per record: what each record's event holds besides its own fields
            is_control = batch.is_control
            decode = (opts.decode or opts.decoder) and topic and not is_control
            payloads = opts.payloads
            try:
                for rec in iter_records(buf, batch):
                    n_records += 1
                    key, value, headers = rec.key, rec.value, rec.headers
                    rev: Event = {
                        "type": "record", "file": path, "offset": rec.offset, "timestamp": rec.timestamp,
                        "key_size": -1 if key is None else len(key),
                        "value_size": -1 if value is None else len(value),
                        "sequence": rec.sequence, "header_keys": [k for k, _ in headers] if headers else [],
                    }  # fmt: skip
                    if is_control:
                        # per record, not the batch's first record: a KRaft snapshot's first batch holds
                        # SNAPSHOT_HEADER, KRAFT_VERSION and KRAFT_VOTERS (engine.records.control_record)
                        rev["control_type"], rev["coordinator_epoch"] = control_record(key, value)
                    elif decode and topic is not None:  # decode_internal is None for no topic
                        decoded = decode_internal(topic, key, value)
                        if decoded is not None:
                            rev["decoded"] = decoded
                    if payloads:
                        rev["key"] = _payload(key)
                        rev["value"] = _payload(value)
                        rev["headers"] = {k: _payload(v) for k, v in headers}
                    yield rev
            except compression.CodecUnavailable as exc:
                yield _err(path, f"batch at offset {batch.base_offset}: {exc}", batch.position)
            except RecordError as exc:
                yield _err(path, f"batch at offset {batch.base_offset}: {exc}", batch.position)
        tail = scanner.tail
        if tail is not None and not (opts.max_bytes and tail.kind == "torn" and scanner.end < buf.size):
            yield {
                "type": "tail", "file": path, **tail.to_dict(),
                "message": f"{tail.reason}; recovery truncates {tail.truncated_bytes} bytes from position {tail.position}",
            }  # fmt: skip
        yield {
            "type": "summary", "file": path, "batches": n_batches,
            "records": n_records if (opts.records or opts.payloads) else None,
            "valid_bytes": scanner.valid_bytes, "size": buf.size,
        }  # fmt: skip


def dump_index(path: str, opts: DumpOptions) -> Iterator[Event]:
    seg = parse_segment_file(os.path.basename(path))
    kind = "offset" if path.endswith(".index") else "time"
    try:
        idx = read_offset_index(path) if kind == "offset" else read_time_index(path)
    except EngineError as exc:
        yield _err(path, exc)
        return
    yield {
        "type": "file", "file": path, "kind": f"{kind}_index", "size": idx.length,
        "entries_kafka_counts": idx.entry_count, "real_entries": len(idx.real_entries),
        "zero_padded_slots": idx.zero_tail,
    }  # fmt: skip
    if opts.sanity_only:
        # what the broker ran at load before 2.3 (and kafka-dump-log.sh --index-sanity-check runs); unlike
        # DumpLogSegments (which prints "<file> is empty." for an offset index without a whole slot and skips
        # the check), the check runs on every index: a 5-byte .index fails it
        base = seg.base_offset if seg is not None else idx.base_offset
        problem = offset_sanity(idx, base, None) if kind == "offset" else time_sanity(idx, base)
        yield {
            "type": "sanity_check", "file": path, "kind": f"{kind}_index", "passed": problem is None,
            "message": problem,
        }  # fmt: skip
        return
    limit = opts.max_index_entries
    for i, (a, b) in enumerate(idx.real_entries):
        if limit is not None and i >= limit:
            break
        if kind == "offset":
            yield {"type": "index_entry", "file": path, "slot": i, "offset": a, "position": b}
        else:
            yield {"type": "time_index_entry", "file": path, "slot": i, "timestamp": a, "offset": b}
    log_map = None
    log_path = os.path.join(os.path.dirname(path), f"{idx.base_offset:020d}.log")
    active = False
    if opts.verify_indexes and seg is not None and os.path.exists(log_path):
        try:
            with LogBuffer.open(log_path) as buf:
                log_map = LogMap.build(buf)
        except EngineError as exc:
            yield _err(log_path, exc)
        siblings = [
            s.base_offset
            for n in os.listdir(os.path.dirname(path) or ".")
            if (s := parse_segment_file(n)) is not None and s.suffix == ".log" and not s.leftover
        ]
        active = bool(siblings) and max(siblings) == idx.base_offset
    verify = verify_offset_index if kind == "offset" else verify_time_index
    for issue in verify(idx, log_map, active):
        yield {"type": "index_issue", "file": path, **issue.to_dict()}


def dump_txn_index(path: str) -> Iterator[Event]:
    try:
        idx = read_txn_index(path)
    except EngineError as exc:
        yield _err(path, exc)
        return
    yield {"type": "file", "file": path, "kind": "txn_index", "size": idx.length, "entries": len(idx.entries)}
    for e in idx.entries:
        yield {"type": "aborted_txn", "file": path, **e.to_dict()}
    if idx.remainder:
        yield _err(
            path,
            f"size {idx.length} is not a multiple of 34: {idx.remainder} trailing bytes",
            idx.length - idx.remainder,
        )
    base = parse_segment_file(os.path.basename(path))
    if base is not None and (problem := idx.sanity(base.base_offset)):
        yield {
            "type": "index_issue",
            "file": path,
            "kind": "sanity",
            "slot": None,
            "message": problem,
            "severity": "error",
        }


def dump_snapshot(path: str) -> Iterator[Event]:
    try:
        snap = read_snapshot(path)
    except EngineError as exc:
        yield _err(path, exc)
        return
    yield {
        "type": "file", "file": path, "kind": "producer_snapshot", "version": snap.version,
        "crc": snap.crc, "crc_valid": snap.crc_valid, "entries": len(snap.entries),
    }  # fmt: skip
    for e in snap.entries:
        yield {"type": "producer_state", "file": path, **e.to_dict(), "first_sequence": e.first_sequence}


def dump_small_file(path: str) -> Iterator[Event]:
    name = os.path.basename(path)
    try:
        if name in ckpt.OFFSET_CHECKPOINTS:
            entries = ckpt.read_offset_checkpoint(path)
            yield {"type": "file", "file": path, "kind": "offset_checkpoint", "entries": len(entries)}
            for (t, p), o in sorted(entries.items()):
                yield {"type": "checkpoint_entry", "file": path, "topic": t, "partition": p, "offset": o}
        elif name == ckpt.LEADER_EPOCH:
            entries2 = ckpt.read_leader_epoch_checkpoint(path)
            yield {"type": "file", "file": path, "kind": "leader_epoch_checkpoint", "entries": len(entries2)}
            for epoch, start in entries2:
                yield {"type": "leader_epoch", "file": path, "epoch": epoch, "start_offset": start}
        elif name == ckpt.META_PROPERTIES:
            meta = ckpt.read_meta_properties(path)
            yield {"type": "file", "file": path, "kind": "meta_properties", **meta.to_dict()}
        elif name == ckpt.PARTITION_METADATA:
            yield {
                "type": "file",
                "file": path,
                "kind": "partition_metadata",
                **ckpt.read_partition_metadata(path),
            }
        elif name == ckpt.CLEAN_SHUTDOWN:
            cs = ckpt.read_clean_shutdown(os.path.dirname(path) or ".")
            yield {
                "type": "file", "file": path, "kind": "clean_shutdown", "format": cs.format,
                "broker_epoch": cs.broker_epoch,
            }  # fmt: skip
        elif name == ckpt.QUORUM_STATE:
            yield {
                "type": "file",
                "file": path,
                "kind": "quorum_state",
                "state": ckpt.read_quorum_state(path),
            }
        elif name == ".lock" or name.endswith(".tmp"):
            # .lock: LogManager's file lock; *.tmp: a checkpoint write that was interrupted (CheckpointFile)
            kind = "lock" if name == ".lock" else "interrupted_checkpoint_write"
            yield {"type": "file", "file": path, "kind": kind, "size": os.path.getsize(path)}
        elif name.endswith(".properties"):
            yield {
                "type": "file",
                "file": path,
                "kind": "properties",
                "properties": ckpt.read_properties(path),
            }
        else:
            yield _err(path, "unknown file type: not a Kafka log-dir file")
    except EngineError as exc:
        yield _err(path, exc)


def dump_file(path: str, opts: DumpOptions) -> Iterator[Event]:
    name = os.path.basename(path)
    seg = parse_segment_file(name)
    if seg is not None and seg.leftover:
        yield {"type": "file", "file": path, "kind": f"leftover{seg.leftover}", "size": os.path.getsize(path)}
        return
    if name.endswith(".log") or parse_kraft_snapshot(name) is not None or name == "bootstrap.checkpoint":
        yield from dump_log(path, opts)
    elif name.endswith(".index") or name.endswith(".timeindex"):
        yield from dump_index(path, opts)
    elif name.endswith(".txnindex"):
        yield from dump_txn_index(path)
    elif name.endswith(".snapshot"):
        yield from dump_snapshot(path)
    else:
        yield from dump_small_file(path)


def _partition_files(path: str) -> list[str]:
    return sorted(os.path.join(path, n) for n in os.listdir(path) if os.path.isfile(os.path.join(path, n)))


def dump_path(path: str, opts: DumpOptions) -> Iterator[Event]:
    """A file, a partition dir, or a whole log dir."""
    if not os.path.lexists(path):
        yield _err(path, "no such file or directory")
        return
    if not os.path.isdir(path):
        yield from dump_file(path, opts)
        return
    try:
        names = sorted(os.listdir(path))
    except OSError as exc:
        yield _err(path, f"cannot list directory: {(exc.strerror or str(exc)).lower()}")
        return
    if parse_partition_dir(os.path.basename(os.path.normpath(path))) is not None and any(
        parse_segment_file(n) or n in (ckpt.LEADER_EPOCH, ckpt.PARTITION_METADATA) or parse_kraft_snapshot(n)
        for n in names
    ):
        for f in _partition_files(path):
            yield from dump_file(f, opts)
        return
    is_log_dir = any(n in (ckpt.META_PROPERTIES, *ckpt.OFFSET_CHECKPOINTS) for n in names) or any(
        os.path.isdir(os.path.join(path, n)) and parse_partition_dir(n) is not None for n in names
    )
    if not is_log_dir:
        yield _err(
            path,
            "not a Kafka log dir or partition dir (no meta.properties, checkpoints or topic-partition dirs)",
        )
        return
    for n in names:
        p = os.path.join(path, n)
        if os.path.isdir(p):
            if parse_partition_dir(n) is None:
                yield _err(
                    p, f"'{n}' is not in the form topic-partition: the broker refuses to start with it here"
                )
                continue
            for f in _partition_files(p):
                yield from dump_file(f, opts)
        else:
            yield from dump_file(p, opts)


# ---------------------------------------------------------------- text rendering

_RECORD_CONTENT = ("type", "file", "key", "value", "headers", "decoded", "skip_record_metadata")


def without_record_metadata(ev: Event, keep_offset: bool = False) -> Event:
    """A record event as kafka-dump-log.sh --skip-record-metadata prints it (DumpLogSegments.dumpLog): its key,
    payload and decoded content, none of offset, timestamp, sizes, sequence, header keys, control type."""
    out: Event = {k: v for k, v in ev.items() if k in _RECORD_CONTENT}
    if keep_offset:
        out["offset"] = ev["offset"]
    out["skip_record_metadata"] = True
    return out


def _b(v: object) -> str:
    return str(v).lower() if isinstance(v, bool) else str(v)


def render_text(ev: Event) -> str | None:
    """A line in the spirit of kafka-dump-log.sh (its field names), plus what it does not print."""
    t = ev["type"]
    if t == "file":
        extra = " ".join(f"{k}: {_b(v)}" for k, v in ev.items() if k not in ("type", "file", "kind"))
        return f"Dumping {ev['file']} ({ev['kind']}) {extra}".rstrip()
    if t == "batch":
        ts_name = ev["timestamp_type"]
        s = (
            f"baseOffset: {ev['base_offset']} lastOffset: {ev['last_offset']} count: {ev['count']} "
            f"baseSequence: {ev['base_sequence']} lastSequence: {ev['last_sequence']} producerId: {ev['producer_id']} "
            f"producerEpoch: {ev['producer_epoch']} partitionLeaderEpoch: {ev['partition_leader_epoch']} "
            f"isTransactional: {_b(ev['is_transactional'])} isControl: {_b(ev['is_control'])} "
            f"deleteHorizonMs: {ev['delete_horizon_ms']} position: {ev['position']} {ts_name}: {ev['max_timestamp']} "
            f"size: {ev['size']} magic: {ev['magic']} compresscodec: {ev['codec']} crc: {ev['crc']} "
            f"isvalid: {_b(ev['crc_valid'])}"
        )
        if ev.get("control_type"):
            s += f" endTxnMarker: {ev['control_type']}"
            if ev.get("coordinator_epoch") is not None:
                s += f" coordinatorEpoch: {ev['coordinator_epoch']}"
        if ev.get("aborted"):
            s += " aborted: true"
        return s
    if t == "record" and ev.get("skip_record_metadata"):
        s = "|"
        if "decoded" in ev:
            s += f" decoded: {json.dumps(ev['decoded'], separators=(',', ':'))}"
        if "key" in ev:
            s += f" key: {ev['key']} payload: {ev['value']}"
        return s
    if t == "record":
        s = (
            f"| offset: {ev['offset']} timestamp: {ev['timestamp']} keySize: {ev['key_size']} "
            f"valueSize: {ev['value_size']} sequence: {ev['sequence']} headerKeys: {ev['header_keys']}"
        )
        if ev.get("control_type"):
            s += f" endTxnMarker: {ev['control_type']} coordinatorEpoch: {ev['coordinator_epoch']}"
        if "decoded" in ev:
            s += f" decoded: {json.dumps(ev['decoded'], separators=(',', ':'))}"
        if "key" in ev:
            s += f" key: {ev['key']} payload: {ev['value']}"
        return s
    if t == "tail":
        return f"TAIL at position {ev['position']}: {ev['message']}"
    if t == "summary":
        recs = f" records: {ev['records']}" if ev.get("records") is not None else ""
        return f"Summary {ev['file']}: batches: {ev['batches']}{recs} valid bytes: {ev['valid_bytes']} of {ev['size']}"
    if t == "index_entry":
        return f"offset: {ev['offset']} position: {ev['position']}"
    if t == "time_index_entry":
        return f"timestamp: {ev['timestamp']} offset: {ev['offset']}"
    if t == "sanity_check":
        if ev["passed"]:
            return f"{ev['file']} passed sanity check."
        return f"{ev['file']} failed sanity check: {ev['message']}"
    if t == "index_issue":
        return f"{str(ev['severity']).upper()} {ev['kind']}: {ev['message']}"
    if t == "aborted_txn":
        return (
            f"version: {ev['version']} producerId: {ev['producer_id']} firstOffset: {ev['first_offset']} "
            f"lastOffset: {ev['last_offset']} lastStableOffset: {ev['last_stable_offset']}"
        )
    if t == "producer_state":
        return (
            f"producerId: {ev['producer_id']} producerEpoch: {ev['producer_epoch']} coordinatorEpoch: "
            f"{ev['coordinator_epoch']} currentTxnFirstOffset: {ev['current_txn_first_offset']} lastTimestamp: "
            f"{ev['timestamp']} firstSequence: {ev['first_sequence']} lastSequence: {ev['last_sequence']} "
            f"lastOffset: {ev['last_offset']} offsetDelta: {ev['offset_delta']}"
        )
    if t == "checkpoint_entry":
        return f"{ev['topic']} {ev['partition']} {ev['offset']}"
    if t == "leader_epoch":
        return f"epoch: {ev['epoch']} startOffset: {ev['start_offset']}"
    return None
