"""Coverage-guided fuzzing of the engine's readers with atheris (libFuzzer). Standalone: not collected by
pytest and not needed by the test suite.

    pip install atheris
    python tests/fuzz/atheris_readers.py --seeds /tmp/atheris-seeds      # write a seed corpus once
    python tests/fuzz/atheris_readers.py /tmp/atheris-seeds -atheris_runs=500000 -max_len=4096

The first input byte picks the reader; the rest is its input. Two targets wrap the input in a batch whose
checksum is already right (v2 CRC-32C, legacy CRC-32), so that the fuzzer reaches record decoding and
decompression instead of stopping at the CRC. The contract is the test suite's: only ``EngineError`` (and
``RecordError`` / ``CodecUnavailable`` from ``iter_records``) may escape, and an ``EngineError`` is one line
that starts with the file's path. Anything else is a crash that libFuzzer saves as ``crash-<sha1>``.
"""

from __future__ import annotations

import os
import struct
import sys
import tempfile
import zlib
from collections.abc import Callable
from typing import Any, TypeVar

import atheris

with atheris.instrument_imports(include=["kafka_ops"]):
    from kafka_ops.engine import checkpoints, compression, indexes, layout, snapshot
    from kafka_ops.engine.builder import NewRecord, build_batch, control_batch
    from kafka_ops.engine.crc import crc32c
    from kafka_ops.engine.errors import EngineError
    from kafka_ops.engine.records import BatchScanner, LogBuffer, RecordError, iter_records

T = TypeVar("T")
WORK = tempfile.mkdtemp(prefix="atheris-kafka-ops-")
N_TARGETS = 9


def check_error(exc: EngineError, path: str) -> None:
    text = str(exc)
    if "\n" in text or not text.startswith(f"{path}:"):
        raise AssertionError(f"EngineError is not one line naming {path!r}: {text!r}")


def call(fn: Callable[..., T], path: str, *args: Any) -> T | None:
    try:
        return fn(path, *args)
    except EngineError as exc:
        check_error(exc, path)
        return None


def write(name: str, data: bytes) -> str:
    path = os.path.join(WORK, name)
    with open(path, "wb") as f:
        f.write(data)
    return path


def scan(data: bytes, verify: bool) -> None:
    buf = LogBuffer(data)
    scanner = BatchScanner(buf, verify_crc=verify)
    end = 0
    for batch in scanner:
        if batch.position != end:
            raise AssertionError("batches do not tile the log")
        end += batch.size
        batch.to_dict()
        try:
            for _rec in iter_records(buf, batch):
                pass
        except (RecordError, compression.CodecUnavailable):
            pass
    tail = scanner.tail
    if tail is not None and (
        tail.position != scanner.valid_bytes or tail.truncated_bytes != len(data) - tail.position
    ):
        raise AssertionError(f"inconsistent tail {tail} for valid_bytes {scanner.valid_bytes}")
    if tail is None and scanner.valid_bytes != len(data):
        raise AssertionError("scan ended early without a tail")


def v2_with_valid_crc(payload: bytes) -> bytes:
    """Header fields from the first 40 bytes (attributes .. record count), body from the rest."""
    after_crc = payload.ljust(40, b"\x00")
    crc = crc32c(after_crc)
    return struct.pack(">qiibI", 0, 9 + len(after_crc), 0, 2, crc) + after_crc


def legacy_with_valid_crc(payload: bytes) -> bytes:
    """magic/attributes from the first two bytes; the rest is key + value as the fuzzer wrote them."""
    head = payload[:2].ljust(2, b"\x00")
    magic = head[0] % 2
    body = bytes([magic, head[1]]) + (b"\x00" * 8 if magic == 1 else b"") + payload[2:]
    if len(body) < 10:
        body = body.ljust(10, b"\xff")
    return struct.pack(">qiI", 5, 4 + len(body), zlib.crc32(body) & 0xFFFFFFFF) + body


def TestOneInput(data: bytes) -> None:  # atheris' conventional name
    if not data:
        return
    target, payload = data[0] % N_TARGETS, data[1:]
    if target == 0:
        scan(payload, True)
    elif target == 1:
        scan(payload, False)
    elif target == 2:
        scan(v2_with_valid_crc(payload), True)
    elif target == 3:
        scan(legacy_with_valid_crc(payload), True)
    elif target == 4:
        off = write("00000000000000000100.index", payload)
        tim = write("00000000000000000100.timeindex", payload)
        txn = write("00000000000000000100.txnindex", payload)
        idx = call(indexes.read_offset_index, off)
        if idx is not None:
            indexes.offset_sanity(idx, 100, (2, 0))
            indexes.offset_sanity(idx, 100, None)
        t = call(indexes.read_time_index, tim)
        if t is not None:
            indexes.time_sanity(t, 100)
        call(indexes.read_index_tail, off, "offset", 100)
        call(indexes.read_index_tail, tim, "time", 100)
        x = call(indexes.read_txn_index, txn)
        if x is not None:
            x.sanity(100)
    elif target == 5:
        call(snapshot.read_snapshot, write("00000000000000000001.snapshot", payload))
    elif target == 6:
        path = write("recovery-point-offset-checkpoint", payload)
        call(checkpoints.read_offset_checkpoint, path)
        call(checkpoints.read_leader_epoch_checkpoint, path)
    elif target == 7:
        for name, reader in (
            ("meta.properties", checkpoints.read_meta_properties),
            ("partition.metadata", checkpoints.read_partition_metadata),
            ("quorum-state", checkpoints.read_quorum_state),
        ):
            call(reader, write(name, payload))
        write(".kafka_cleanshutdown", payload)
        checkpoints.read_clean_shutdown(WORK)
        checkpoints.parse_properties(payload.decode("utf-8", "replace"))
    else:
        name = payload.decode("utf-8", "replace")
        layout.parse_partition_dir(name)
        layout.is_loaded_by_broker(name)
        layout.parse_segment_file(name)
        layout.parse_kraft_snapshot(name)


def write_seeds(directory: str) -> None:
    """Valid inputs for every target: batches of every codec and magic, indexes, checkpoints, names."""
    os.makedirs(directory, exist_ok=True)
    recs = [NewRecord(b"key", b"value " * 10, 1_700_000_000_000, [("h", b"v")]), NewRecord(None, None, 5)]
    seeds: list[tuple[int, bytes]] = []
    for codec in compression.CODECS:
        if compression.available(codec):
            batch = build_batch(10, recs, codec=codec, producer_id=3, producer_epoch=0, base_sequence=0)
            seeds += [(0, batch + batch), (1, batch), (2, batch[21:])]
    seeds.append((0, control_batch(12, True, 3, 0, 7, coordinator_epoch=1)))
    for magic in (0, 1):
        for codec in (0, 1, 2, 3):
            if compression.available(codec):
                # two inner messages: magic, attributes 0, null key, value "abc"
                msg = legacy_with_valid_crc(bytes([magic, 0]) + struct.pack(">ii", -1, 3) + b"abc")
                inner = msg + msg
                wrapped = compression.compress(codec, inner) if codec else b"xyz"
                value = struct.pack(">i", -1) + struct.pack(">i", len(wrapped)) + wrapped
                seeds.append((3, bytes([magic, codec]) + value))
                seeds.append((0, legacy_with_valid_crc(bytes([magic, codec]) + value)))
    seeds += [
        (4, struct.pack(">ii", 0, 0) + struct.pack(">ii", 5, 4096) + bytes(16)),
        (4, struct.pack(">qi", 1_700_000_000_000, 3) * 2),
        (5, b"\x00\x01" + bytes(8)),
        (6, b"0\n2\ntopic 0 5\ntopic 1 7\n"),
        (6, b"0\n1\n3 100\n"),
        (7, b"version=1\nnode.id=1\ncluster.id=abc\n"),
        (7, b'{"version":0,"brokerEpoch":12}'),
        (8, b"topic-0"),
        (8, b"topic-0.0123456789abcdef0123456789abcdef-delete"),
        (8, b"00000000000000000000.log.deleted"),
        (8, b"00000000000000000007-0000000001.checkpoint"),
    ]
    for i, (target, payload) in enumerate(seeds):
        with open(os.path.join(directory, f"seed-{i:03d}"), "wb") as f:
            f.write(bytes([target]) + payload)
    print(f"wrote {len(seeds)} seeds to {directory}")


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--seeds":
        write_seeds(sys.argv[2])
        return
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
