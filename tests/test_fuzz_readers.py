"""Property-based fuzzing (hypothesis) of every reader of the engine.

The contract under test, for every reader: whatever the bytes, the only exception that escapes is
``EngineError`` (plus ``RecordError`` / ``CodecUnavailable`` from ``iter_records``), and every
``EngineError`` is one line that starts with the file's path. On top of that, the properties Kafka's own
recovery gives a log (``LogSegment.recover`` + ``FileLogInputStream``):

* a truncated log keeps exactly the batches that end before the cut: ``valid_bytes`` is the end of the last
  complete batch and ``tail.truncated_bytes`` is what recovery cuts off;
* a flipped bit inside what a checksum covers (v2: bytes [17, end), legacy: [12, end)) stops the scan at that
  batch with a "corrupt" tail; a flipped bit in the base offset (or a v2 partition leader epoch, which the
  CRC does not cover) changes nothing Kafka can see.

The number of inputs tried is printed at the end of the module (``fuzz inputs tried: N``) and written as
JSON to ``$KAFKA_OPS_FUZZ_REPORT`` when set. ``KAFKA_OPS_FUZZ_SCALE`` multiplies every example budget
(default 1: about half a minute on a laptop core).
"""

from __future__ import annotations

import itertools
import json
import os
import struct
import zlib
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from kafka_ops.engine import binary, checkpoints, compression, indexes, layout, logdir, snapshot
from kafka_ops.engine.builder import NewRecord, build_batch, control_batch
from kafka_ops.engine.crc import crc32c
from kafka_ops.engine.errors import EngineError
from kafka_ops.engine.records import (
    Batch,
    BatchScanner,
    LogBuffer,
    RecordError,
    batch_at,
    iter_records,
    scan_file,
)

T = TypeVar("T")

SCALE = float(os.environ.get("KAFKA_OPS_FUZZ_SCALE", "1"))
TRIED: Counter[str] = Counter()


def fuzz(max_examples: int) -> Callable[[T], T]:
    return settings(
        max_examples=max(1, int(max_examples * SCALE)),
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


def tried(name: str, n: int = 1) -> None:
    TRIED[name] += n


@pytest.fixture(scope="module", autouse=True)
def report_inputs_tried(request: pytest.FixtureRequest) -> Iterator[None]:
    TRIED.clear()
    yield
    total = sum(TRIED.values())
    lines = [f"fuzz inputs tried: {total}"] + [f"  {k}: {v}" for k, v in sorted(TRIED.items())]
    target = os.environ.get("KAFKA_OPS_FUZZ_REPORT")
    if target:
        Path(target).write_text(
            json.dumps({"total": total, "by_test": dict(sorted(TRIED.items()))}, indent=2)
        )
    capman = request.config.pluginmanager.getplugin("capturemanager")
    if capman is not None:
        with capman.global_and_fixture_disabled():
            print("\n" + "\n".join(lines))
    else:
        print("\n" + "\n".join(lines))


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


_serial = itertools.count()


def fresh_dir(base: Path) -> Path:
    d = base / f"case{next(_serial)}"
    d.mkdir()
    return d


def check_engine_error(exc: EngineError, path: str) -> None:
    """The error contract: one line, ``<path>: ...``."""
    text = str(exc)
    assert "\n" not in text and "\r" not in text, text
    assert exc.path == str(path)
    assert text.startswith(f"{path}:"), text


def read_or_error(fn: Callable[..., T], path: str, *args: Any) -> T | None:
    """Call a file reader: a value or an EngineError that names the file; anything else fails the test."""
    try:
        return fn(path, *args)
    except EngineError as exc:
        check_engine_error(exc, path)
        return None


# ---------------------------------------------------------------------------------------------------------
# Valid batches of every kind
# ---------------------------------------------------------------------------------------------------------

V2_CODECS = [c for c in range(5) if compression.available(c)]
LEGACY_CODECS = [c for c in range(4) if compression.available(c)]


def legacy_message(
    offset: int, magic: int, attrs: int, timestamp: int, key: bytes | None, value: bytes | None
) -> bytes:
    """One v0/v1 message (LegacyRecord.java): CRC-32 over magic..end."""

    def sized(b: bytes | None) -> bytes:
        return struct.pack(">i", -1) if b is None else struct.pack(">i", len(b)) + b

    body = struct.pack(">bb", magic, attrs)
    if magic == 1:
        body += struct.pack(">q", timestamp)
    body += sized(key) + sized(value)
    return struct.pack(">qiI", offset, 4 + len(body), zlib.crc32(body) & 0xFFFFFFFF) + body


def broken_lz4_header_checksum(frame: bytes) -> bytes:
    """What Kafka 0.8/0.9 wrote for magic 0 (Lz4BlockOutputStream with useBrokenFlagDescriptorChecksum):
    the HC byte hashed over magic + descriptor instead of the descriptor alone."""
    flg = frame[4]
    desc_end = 6 + (8 if flg & 0x08 else 0) + (4 if flg & 0x01 else 0)
    hc = (compression.xxh32(frame[:desc_end]) >> 8) & 0xFF
    return frame[:desc_end] + bytes([hc]) + frame[desc_end + 1 :]


def legacy_set(
    magic: int,
    codec: int,
    base: int,
    recs: list[NewRecord],
    log_append: bool = False,
    broken_hc: bool = False,
) -> bytes:
    attrs = 0x08 if (log_append and magic == 1) else 0
    if not codec:
        return b"".join(
            legacy_message(base + i, magic, attrs, r.timestamp, r.key, r.value) for i, r in enumerate(recs)
        )
    inner = b"".join(
        legacy_message(i if magic == 1 else base + i, magic, 0, r.timestamp, r.key, r.value)
        for i, r in enumerate(recs)
    )
    value = compression.compress(codec, inner)
    if broken_hc:
        value = broken_lz4_header_checksum(value)
    ts = max(r.timestamp for r in recs)
    return legacy_message(base + len(recs) - 1, magic, codec | attrs, ts, None, value)


KINDS: list[tuple[str, int, int]] = (
    [("v2", 2, c) for c in V2_CODECS]
    + [("commit", 2, 0), ("abort", 2, 0)]
    + [("legacy", m, c) for m in (0, 1) for c in LEGACY_CODECS]
    + ([("legacy-broken-lz4-hc", 0, 3)] if 3 in LEGACY_CODECS else [])
)

header_keys = st.text(st.characters(blacklist_categories=("Cs",)), max_size=4)
small_records = st.lists(
    st.builds(
        NewRecord,
        key=st.one_of(st.none(), st.binary(max_size=12)),
        value=st.one_of(st.none(), st.binary(max_size=40), st.binary(max_size=4).map(lambda b: b * 30)),
        timestamp=st.integers(0, 2**41),
        headers=st.lists(st.tuples(header_keys, st.one_of(st.none(), st.binary(max_size=6))), max_size=2),
    ),
    min_size=1,
    max_size=4,
)


def make_batch(kind: tuple[str, int, int], recs: list[NewRecord], base: int, flags: int = 0) -> bytes:
    name, magic, codec = kind
    if name == "v2":
        txn = bool(flags & 1)
        return build_batch(
            base,
            recs,
            codec=codec,
            log_append_time=recs[0].timestamp + 5 if flags & 2 else None,
            producer_id=7 if txn or flags & 4 else -1,
            producer_epoch=1 if txn or flags & 4 else -1,
            base_sequence=flags * 1000 if txn or flags & 4 else -1,
            transactional=txn,
            partition_leader_epoch=flags,
        )
    if name in ("commit", "abort"):
        return control_batch(base, name == "commit", 7, 1, recs[0].timestamp, coordinator_epoch=flags)
    plain = [NewRecord(r.key, r.value, r.timestamp) for r in recs]
    return legacy_set(magic, codec, base, plain, log_append=bool(flags & 2), broken_hc=name.endswith("hc"))


@st.composite
def valid_batches(draw: st.DrawFn) -> tuple[tuple[str, int, int], bytes]:
    kind = draw(st.sampled_from(KINDS))
    recs = draw(small_records)
    return kind, make_batch(kind, recs, draw(st.integers(0, 2**40)), draw(st.integers(0, 7)))


valid_logs = st.lists(valid_batches(), min_size=1, max_size=5)

FIXED_RECORDS = [
    NewRecord(b"key", b"value " * 8, 1_700_000_000_000, [("h", b"x")]),
    NewRecord(None, None, 1_700_000_000_007),
    NewRecord(b"k3", b"v3", 1_699_999_999_999),
]
SEEDS: dict[str, bytes] = {
    f"{k[0]}-m{k[1]}-{compression.CODECS[k[2]]}": make_batch(k, FIXED_RECORDS, 100, 3) for k in KINDS
}


# ---------------------------------------------------------------------------------------------------------
# The scan contract
# ---------------------------------------------------------------------------------------------------------


def scan(
    data: bytes, verify: bool = True, start: int = 0, end: int | None = None
) -> tuple[BatchScanner, list[Batch]]:
    """Scan and decode everything; assert the invariants that hold for any input."""
    buf = LogBuffer(data)
    scanner = BatchScanner(buf, start=start, end=end, verify_crc=verify)
    batches: list[Batch] = []
    for b in scanner:
        batches.append(b)
        b.to_dict()
        assert b.codec and b.timestamp_type and isinstance(b.last_sequence, int)
        try:
            for rec in iter_records(buf, b):
                assert rec.key is None or isinstance(rec.key, bytes)
                assert all(isinstance(k, str) for k, _v in rec.headers)
        except (RecordError, compression.CodecUnavailable) as exc:
            assert "\n" not in str(exc)
    pos = start
    for b in batches:  # batches tile the scanned range from the start
        assert b.position == pos and b.size >= 26
        pos += b.size
    assert all(b.crc_valid for b in batches[:-1])
    valid = sum(b.size for b in batches if b.crc_valid)
    assert scanner.valid_bytes == start + valid
    if scanner.tail is None:
        assert all(b.crc_valid for b in batches)
        if end is None:
            assert scanner.valid_bytes == len(data) or start > len(data)
    else:
        t = scanner.tail
        assert t.position == scanner.valid_bytes
        assert t.truncated_bytes == len(data) - t.position
        assert t.kind in ("torn", "corrupt")
        assert "\n" not in t.reason
        t.to_dict()
    return scanner, batches


@fuzz(500)
@given(data=st.binary(max_size=400), verify=st.booleans())
@example(data=b"\x00" * 17, verify=True)
@example(data=b"\x00" * 8 + struct.pack(">i", 13) + b"\x00" * 20, verify=True)
@example(data=b"\x00" * 8 + struct.pack(">i", 2**31 - 1) + b"\x02" * 20, verify=True)
def test_scanner_never_raises_on_arbitrary_bytes(data: bytes, verify: bool) -> None:
    tried("records: arbitrary bytes")
    scan(data, verify)


@st.composite
def plausible_headers(draw: st.DrawFn) -> bytes:
    """A batch header with a self-consistent size and a random magic/attributes/count, then random bytes."""
    body = draw(st.binary(max_size=200))
    magic = draw(st.sampled_from([0, 1, 2, 3, 0x80, 0xFF]))
    head = struct.pack(">qi", draw(st.integers(-(2**63), 2**63 - 1)), 5 + len(body) + 4)
    return head + bytes([draw(st.integers(0, 255)) for _ in range(4)]) + bytes([magic]) + body[:4] + body


@fuzz(200)
@given(data=plausible_headers(), verify=st.booleans())
def test_scanner_never_raises_on_plausible_headers(data: bytes, verify: bool) -> None:
    tried("records: plausible headers")
    scan(data, verify)


@st.composite
def crafted_v2(draw: st.DrawFn) -> bytes:
    """A v2 batch whose checksum is right but whose body is anything: random attributes (codec 5-7 too),
    count (negative too), and a body that is random or a real compressed stream of random records."""
    attrs = draw(st.integers(0, 0x7F))
    codec = attrs & 7
    count = draw(st.one_of(st.integers(-3, 6), st.integers(-(2**31), 2**31 - 1)))
    raw = draw(st.binary(max_size=150))
    if draw(st.booleans()) and codec in V2_CODECS and codec:
        raw = compression.compress(codec, raw)
    after_crc = (
        struct.pack(
            ">hiqqqhii",
            attrs,
            draw(st.integers(-5, 10)),
            draw(st.integers(-1, 2**40)),
            draw(st.integers(-1, 2**40)),
            -1,
            -1,
            draw(st.sampled_from([-1, 0, 2**31 - 1])),
            count,
        )
        + raw
    )
    crc = crc32c(after_crc)
    return struct.pack(">qiibI", draw(st.integers(0, 2**40)), 9 + len(after_crc), 0, 2, crc) + after_crc


@fuzz(400)
@given(data=crafted_v2())
def test_record_decoding_of_crc_valid_garbage_raises_only_record_error(data: bytes) -> None:
    """The scanner accepts the batch (its CRC is right); iter_records may only raise RecordError."""
    tried("records: crc-valid v2 garbage")
    scanner, batches = scan(data)
    assert scanner.tail is None and len(batches) == 1


@st.composite
def crafted_legacy(draw: st.DrawFn) -> bytes:
    """A CRC-valid legacy wrapper with any codec bits whose value is random or a compressed random stream."""
    magic = draw(st.sampled_from([0, 1]))
    attrs = draw(st.integers(0, 0x0F))
    codec = attrs & 7
    value = draw(st.binary(max_size=120))
    if draw(st.booleans()):
        inner = b"".join(
            legacy_message(o, draw(st.sampled_from([0, 1, 2])), draw(st.integers(0, 3)), 5, None, v)
            for o, v in draw(st.lists(st.tuples(st.integers(-3, 5), st.binary(max_size=8)), max_size=3))
        )
        value = inner[: draw(st.integers(0, len(inner)))] + value[: draw(st.integers(0, 3))]
    if draw(st.booleans()) and codec in LEGACY_CODECS and codec:
        value = compression.compress(codec, value)
    key = draw(st.one_of(st.none(), st.binary(max_size=4)))
    return legacy_message(
        draw(st.integers(-1, 2**40)), magic, attrs, 7, key, draw(st.sampled_from([value, None]))
    )


@fuzz(400)
@given(data=crafted_legacy())
def test_legacy_wrappers_with_garbage_inside_raise_only_record_error(data: bytes) -> None:
    tried("records: crc-valid legacy garbage")
    scanner, batches = scan(data)
    assert scanner.tail is None and len(batches) == 1


@fuzz(250)
@given(log=valid_logs, data=st.data())
def test_truncated_log_keeps_exactly_the_complete_batches(
    log: list[tuple[tuple[str, int, int], bytes]], data: st.DataObject
) -> None:
    """LogSegment.recover: validBytes is the end of the last complete batch before the cut; the rest is a
    torn tail of ``size - validBytes`` bytes."""
    whole = b"".join(b for _k, b in log)
    _full_scanner, full = scan(whole)
    cut = data.draw(st.integers(0, len(whole)), label="cut")
    tried("records: truncations")
    check_truncation(whole, full, cut)


def check_truncation(whole: bytes, full: list[Batch], cut: int) -> None:
    """``full``: the batches (v2) and shallow messages (v0/v1) of the intact log."""
    ends = [b.position + b.size for b in full]
    scanner, batches = scan(whole[:cut])
    kept = sum(1 for e in ends if e <= cut)
    expected_valid = ends[kept - 1] if kept else 0
    assert scanner.valid_bytes == expected_valid
    assert [b.to_dict() for b in batches] == [b.to_dict() for b in full[:kept]]
    if cut == expected_valid:
        assert scanner.tail is None
    else:
        assert scanner.tail is not None and scanner.tail.kind == "torn"
        assert scanner.tail.position == expected_valid
        assert scanner.tail.truncated_bytes == cut - expected_valid


def test_every_truncation_of_every_kind_of_batch() -> None:
    """Deterministic sweep: two batches of each kind (v2 per codec, markers, v0/v1 per codec), cut at
    every byte."""
    for _name, seed in sorted(SEEDS.items()):
        whole = seed + seed
        scanner, full = scan(whole)
        assert scanner.tail is None and len(full) >= 2
        for cut in range(len(whole) + 1):
            check_truncation(whole, full, cut)
        tried("records: truncation sweep", len(whole) + 1)


def check_bit_flip(whole: bytes, at: int, bit: int) -> None:
    """Flip one bit of an intact log at byte ``at`` and check what recovery keeps."""
    _s, full = scan(whole)
    index = next(i for i, b in enumerate(full) if b.position <= at < b.position + b.size)
    damaged = full[index]
    rel = at - damaged.position
    flipped = bytearray(whole)
    flipped[at] ^= 1 << bit
    scanner, batches = scan(bytes(flipped))
    if rel < 8 or (damaged.magic == 2 and 12 <= rel < 16):
        # base offset / partition leader epoch: covered by no checksum, as in Kafka
        assert scanner.tail is None
        assert len(batches) == len(full)
        return
    assert [b.to_dict() for b in batches[:index]] == [b.to_dict() for b in full[:index]]
    assert scanner.valid_bytes == damaged.position
    assert scanner.tail is not None and scanner.tail.position == damaged.position
    if 8 <= rel < 12:  # the size field: the batch may now run past the end of the file
        assert scanner.tail.kind in ("torn", "corrupt")
    else:
        assert scanner.tail.kind == "corrupt", scanner.tail
        if len(batches) > index:
            assert not batches[index].crc_valid
    scan(bytes(flipped), verify=False)  # and without CRC checks, decoding the damage raises nothing else


@fuzz(300)
@given(log=valid_logs, data=st.data())
def test_bit_flip_stops_the_scan_at_the_damaged_batch(
    log: list[tuple[tuple[str, int, int], bytes]], data: st.DataObject
) -> None:
    whole = b"".join(b for _k, b in log)
    at = data.draw(st.integers(0, len(whole) - 1), label="byte")
    bit = data.draw(st.integers(0, 7), label="bit")
    tried("records: bit flips")
    check_bit_flip(whole, at, bit)


def test_every_byte_flipped_in_every_kind_of_batch() -> None:
    """Deterministic sweep: each byte of each kind of batch (followed by a second batch) flipped once."""
    for _name, seed in sorted(SEEDS.items()):
        for at in range(len(seed)):
            check_bit_flip(seed + seed, at, at % 8)
        tried("records: bit-flip sweep", len(seed))


@fuzz(200)
@given(
    log=valid_logs,
    edits=st.lists(
        st.tuples(st.floats(0, 1, exclude_max=True), st.integers(0, 255), st.integers(0, 3)), max_size=4
    ),
    verify=st.booleans(),
)
def test_mutated_logs_never_raise(
    log: list[tuple[tuple[str, int, int], bytes]], edits: list[tuple[float, int, int]], verify: bool
) -> None:
    """Overwrites, insertions, deletions and duplications anywhere in a valid log."""
    tried("records: mutations")
    data = bytearray(b"".join(b for _k, b in log))
    for where, value, op in edits:
        if not data:
            break
        i = int(where * len(data))
        if op == 0:
            data[i] = value
        elif op == 1:
            data[i:i] = bytes([value])
        elif op == 2:
            del data[i : i + 1 + value % 16]
        else:
            data[i:i] = data[i : i + 1 + value]
    scan(bytes(data), verify)


@fuzz(100)
@given(log=valid_logs, data=st.data())
def test_partial_scans_and_batch_at_never_raise(
    log: list[tuple[tuple[str, int, int], bytes]], data: st.DataObject
) -> None:
    """``start``/``end`` windows (what next_offset does from an index entry) and ``batch_at`` anywhere."""
    tried("records: windows")
    whole = b"".join(b for _k, b in log)
    start = data.draw(st.integers(0, len(whole) + 3), label="start")
    end = data.draw(st.one_of(st.none(), st.integers(0, len(whole) + 3)), label="end")
    scanner = BatchScanner(LogBuffer(whole), start=start, end=end)
    for b in scanner:
        assert start <= b.position and b.position + b.size <= (len(whole) if end is None else end)
    assert scanner.valid_bytes >= start
    buf = LogBuffer(whole)
    for pos in data.draw(st.lists(st.integers(-2, len(whole) + 2), max_size=5), label="positions"):
        b = batch_at(buf, pos)
        assert b is None or b.position == pos


@fuzz(60)
@given(log=valid_logs, cut=st.floats(0, 1))
def test_segment_files_on_disk_scan_like_bytes(
    workdir: Path, log: list[tuple[tuple[str, int, int], bytes]], cut: float
) -> None:
    """The mmap path (LogBuffer.open / scan_file) sees what the in-memory path sees."""
    tried("records: files")
    whole = b"".join(b for _k, b in log)
    data = whole[: int(cut * len(whole))]
    path = fresh_dir(workdir) / "00000000000000000000.log"
    path.write_bytes(data)
    batches, tail, size = scan_file(path)
    scanner, mem = scan(data)
    assert size == len(data)
    assert [b.to_dict() for b in batches] == [b.to_dict() for b in mem]
    assert (tail.to_dict() if tail else None) == (scanner.tail.to_dict() if scanner.tail else None)


def test_unreadable_log_paths_raise_engine_errors_naming_the_file(workdir: Path) -> None:
    d = fresh_dir(workdir)
    (d / "dir.log").mkdir()
    for path in (str(d / "missing.log"), str(d / "dir.log")):
        with pytest.raises(EngineError) as info:
            LogBuffer.open(path)
        check_engine_error(info.value, path)
        tried("records: bad paths")


def java_varint(data: bytes) -> tuple[int, int] | None:
    """ByteUtils.readVarint(ByteBuffer) in Java int arithmetic; None where Java throws (underflow, too long)."""
    value = 0
    for i, b in enumerate(data[:5]):
        if i == 4:
            if b >= 0x80:
                return None  # "Varint is too long, the most significant bit in the 5th byte is set"
            value = (value | (b << 28)) & 0xFFFFFFFF  # an int: the high bits of the 5th byte fall off
        else:
            value |= (b & 0x7F) << (7 * i)
        if b < 0x80:
            return (value >> 1) ^ -(value & 1), i + 1
    return None  # BufferUnderflowException


def java_varlong(data: bytes) -> tuple[int, int] | None:
    """ByteUtils.readVarlong(ByteBuffer) in Java long arithmetic; None where Java throws."""
    value = 0
    shift = 0
    for i, b in enumerate(data):
        if b < 0x80:
            value = (value | (b << shift)) & 0xFFFFFFFFFFFFFFFF
            return (value >> 1) ^ -(value & 1), i + 1
        value |= (b & 0x7F) << shift
        shift += 7
        if shift > 63:
            return None  # "Varlong is too long"
    return None


def engine_or_none(fn: Callable[[bytes, int], tuple[int, int]], data: bytes) -> tuple[int, int] | None:
    try:
        return fn(data, 0)
    except (binary.Truncated, ValueError):
        return None


@fuzz(300)
@given(data=st.binary(max_size=11))
@example(data=b"\xff\xff\xff\xff\x7f")
@example(data=b"\xff" * 9 + b"\x7f")
def test_varints_decode_like_kafkas_byte_utils(data: bytes) -> None:
    """The record fields' varints: same value as Java's int/long arithmetic, and an error where Java throws."""
    tried("binary: varints")
    assert engine_or_none(binary.read_varint, data) == java_varint(data)
    assert engine_or_none(binary.read_varlong, data) == java_varlong(data)
    got = engine_or_none(binary.read_varint, data)
    if got is not None:
        assert -(2**31) <= got[0] < 2**31
        assert binary.read_varint(binary.write_varint(got[0]), 0)[0] == got[0]


# ---------------------------------------------------------------------------------------------------------
# Indexes
# ---------------------------------------------------------------------------------------------------------


@st.composite
def index_contents(draw: st.DrawFn, entry: struct.Struct) -> bytes:
    """Real-looking entries, then zero padding (an untrimmed preallocated index), then a partial slot."""
    if draw(st.booleans()):
        return draw(st.binary(max_size=120))
    if entry.size == 8:
        values = st.tuples(st.integers(-(2**31), 2**31 - 1), st.integers(-(2**31), 2**31 - 1))
    else:
        values = st.tuples(st.integers(-(2**63), 2**63 - 1), st.integers(-(2**31), 2**31 - 1))
    rows = draw(st.lists(values, max_size=8))
    padding = draw(st.integers(0, 6))
    extra = draw(st.binary(max_size=entry.size - 1))
    return b"".join(entry.pack(*r) for r in rows) + bytes(entry.size * padding) + extra


VERSIONS = [None, (0, 10, 1), (1, 1, 0), (2, 0, 1), (2, 1, 0), (3, 9, 0)]


def check_index(idx: indexes.IndexFile, tail: indexes.IndexTail | None, base: int, data: bytes) -> None:
    es = idx.entry_size
    assert idx.entry_count == len(data) // es == len(idx.entries)
    assert idx.remainder == len(data) % es
    assert 0 <= idx.zero_tail <= max(idx.entry_count - 1, 0)
    assert len(idx.real_entries) == idx.entry_count - idx.zero_tail
    if idx.entries:
        assert idx.last_entry == idx.entries[-1]
    else:
        assert idx.last_entry == ((base, 0) if idx.kind == "offset" else (-1, base))
    if tail is not None:
        assert tail.entry_count == idx.entry_count and tail.remainder == idx.remainder
        assert tail.first == (idx.entries[0] if idx.entries else None)
        assert tail.last == (idx.entries[-1] if idx.entries else None)


@fuzz(150)
@given(
    offset_data=index_contents(struct.Struct(">ii")),
    time_data=index_contents(struct.Struct(">qi")),
    txn_data=st.binary(max_size=120),
    base=st.integers(0, 2**63 - 1),
)
def test_index_readers(
    workdir: Path, offset_data: bytes, time_data: bytes, txn_data: bytes, base: int
) -> None:
    """Full readers and the two-slot tail reader agree; sanity checks give the same verdict on both."""
    tried("indexes: contents")
    d = fresh_dir(workdir)
    name = layout.segment_file_name(base, "")
    off_path, time_path, txn_path = (str(d / f"{name}{s}") for s in (".index", ".timeindex", ".txnindex"))
    Path(off_path).write_bytes(offset_data)
    Path(time_path).write_bytes(time_data)
    Path(txn_path).write_bytes(txn_data)

    off = indexes.read_offset_index(off_path)
    off_tail = indexes.read_index_tail(off_path, "offset", base)
    assert off.base_offset == base
    check_index(off, off_tail, base, offset_data)
    for version in VERSIONS:
        verdict = indexes.offset_sanity(off, base, version)
        assert verdict == indexes.offset_sanity(off_tail, base, version)
        assert verdict is None or ("\n" not in verdict and off_path in verdict)
    if offset_data and len(offset_data) % 8 == 0 and off.last_offset == base:
        # a zero-padded (untrimmed) index: flagged by <= 1.1 (KAFKA-7076 relaxed the check in 2.0.0)
        assert indexes.offset_sanity(off, base, (1, 1, 1)) is not None
        assert indexes.offset_sanity(off, base, (2, 0, 0)) is None

    tim = indexes.read_time_index(time_path)
    tim_tail = indexes.read_index_tail(time_path, "time", base)
    check_index(tim, tim_tail, base, time_data)
    verdict = indexes.time_sanity(tim, base)
    assert verdict == indexes.time_sanity(tim_tail, base)
    assert verdict is None or ("\n" not in verdict and time_path in verdict)

    txn = indexes.read_txn_index(txn_path)
    assert len(txn.entries) == len(txn_data) // 34 and txn.remainder == len(txn_data) % 34
    assert all(e.version == txn_data[i * 34] for i, e in enumerate(txn.entries))
    verdict = txn.sanity(base)
    assert verdict is None or "\n" not in verdict
    round_trip = b"".join(indexes.encode_txn_entry(e) for e in txn.entries)
    assert len(round_trip) == 34 * len(txn.entries)


file_names = st.one_of(
    st.sampled_from(
        ["index", ".index", "abc.index", "-1.index", "+5.index", "1_000.index", "٣.index", " 7.index"]
    ),
    st.text(
        st.characters(blacklist_characters="/\x00\n\r", blacklist_categories=("Cs",)), min_size=1, max_size=30
    ),
)


@fuzz(100)
@given(name=file_names, size=st.one_of(st.none(), st.integers(0, 64)), data=st.binary(max_size=40))
def test_index_readers_on_odd_names_and_sizes(
    workdir: Path, name: str, size: int | None, data: bytes
) -> None:
    """A name without a base offset, a claimed size larger than the file, a directory, a missing file:
    EngineErrors that name the file."""
    tried("indexes: names and sizes")
    d = fresh_dir(workdir)
    path = str(d / name)
    if name in (".", ".."):
        return
    Path(path).write_bytes(data)
    for p in (path, str(d / "missing.index"), str(d)):
        read_or_error(indexes.read_offset_index, p)
        read_or_error(indexes.read_time_index, p)
        read_or_error(indexes.read_txn_index, p)
        read_or_error(indexes.read_index_tail, p, "offset", 0, size)
        read_or_error(indexes.read_index_tail, p, "time", 5, size)
        read_or_error(indexes.base_offset_of, p)


# ---------------------------------------------------------------------------------------------------------
# Producer snapshots
# ---------------------------------------------------------------------------------------------------------


@fuzz(200)
@given(data=st.binary(max_size=200))
@example(data=struct.pack(">hIi", 1, 0, -1))
@example(data=struct.pack(">hIi", 1, 0, 2**31 - 1))
def test_snapshot_reader_on_arbitrary_bytes(workdir: Path, data: bytes) -> None:
    tried("snapshot: arbitrary bytes")
    path = fresh_dir(workdir) / "00000000000000000042.snapshot"
    path.write_bytes(data)
    snap = read_or_error(snapshot.read_snapshot, str(path))
    if snap is not None:
        assert len(data) >= 10 + 46 * len(snap.entries)


producer_entries = st.lists(
    st.builds(
        snapshot.ProducerEntry,
        st.integers(0, 2**63 - 1),
        st.integers(0, 2**15 - 1),
        st.integers(-1, 2**31 - 1),
        st.integers(-1, 2**63 - 1),
        st.integers(0, 2**31 - 1),
        st.integers(-1, 2**63 - 1),
        st.integers(-1, 2**31 - 1),
        st.integers(-1, 2**63 - 1),
    ),
    max_size=4,
)


@fuzz(100)
@given(entries=producer_entries, data=st.data())
def test_snapshot_round_trip_truncation_and_bit_flips(
    workdir: Path, entries: list[snapshot.ProducerEntry], data: st.DataObject
) -> None:
    """A snapshot reads back as written; any truncation is an error; any flipped bit is caught (a bad CRC,
    a bad version, or an entry count the file cannot hold), as ProducerStateManager.readSnapshot does."""
    tried("snapshot: valid/truncated/flipped")
    d = fresh_dir(workdir)
    raw = snapshot.encode_snapshot(entries)
    good = d / "00000000000000000001.snapshot"
    good.write_bytes(raw)
    snap = snapshot.read_snapshot(str(good))
    assert snap.crc_valid and snap.version == 1 and snap.entries == entries

    cut = data.draw(st.integers(0, len(raw) - 1), label="cut")
    short = d / "00000000000000000002.snapshot"
    short.write_bytes(raw[:cut])
    with pytest.raises(EngineError) as info:
        snapshot.read_snapshot(str(short))
    check_engine_error(info.value, str(short))

    pos = data.draw(st.integers(0, len(raw) - 1), label="byte")
    flipped = bytearray(raw)
    flipped[pos] ^= 1 << data.draw(st.integers(0, 7), label="bit")
    bad = d / "00000000000000000003.snapshot"
    bad.write_bytes(bytes(flipped))
    result = read_or_error(snapshot.read_snapshot, str(bad))
    if pos < 2:
        assert result is None  # unknown version
    elif result is not None:
        assert not result.crc_valid


# ---------------------------------------------------------------------------------------------------------
# Checkpoints and small metadata files
# ---------------------------------------------------------------------------------------------------------

JAVA_WS = " \t\n\x0b\f\r"


def java_read_lines(text: str) -> list[str]:
    """BufferedReader.readLine: lines end at \\n, \\r or \\r\\n; no empty line after a final terminator."""
    lines: list[str] = []
    cur: list[str] = []
    i = 0
    while i < len(text):
        c = text[i]
        if c in "\r\n":
            lines.append("".join(cur))
            cur = []
            if c == "\r" and text[i + 1 : i + 2] == "\n":
                i += 1
        else:
            cur.append(c)
        i += 1
    if cur:
        lines.append("".join(cur))
    return lines


def java_split(line: str) -> list[str]:
    """Pattern.compile("\\\\s+").split(line): a leading blank run gives an empty first field; trailing
    empty fields are dropped; no match at all returns the line itself."""
    if not any(c in JAVA_WS for c in line):
        return [line]
    fields = ["".join(g) for is_ws, g in itertools.groupby(line, key=lambda c: c in JAVA_WS) if not is_ws]
    if line[0] in JAVA_WS:
        fields.insert(0, "")
    while fields and fields[-1] == "":
        fields.pop()
    return fields


def java_parse(s: str, bits: int) -> int | None:
    """Integer.parseInt / Long.parseLong (ASCII digits), None for a NumberFormatException."""
    digits = s[1:] if s[:1] in ("+", "-") else s
    if not digits or any(not "0" <= c <= "9" for c in digits):
        return None
    if len(digits.lstrip("0")) > 19:
        return None  # beyond any long
    value = int(s)
    return value if -(2 ** (bits - 1)) <= value < 2 ** (bits - 1) else None


def kafka_checkpoint_model(text: str, widths: tuple[int, ...]) -> list[tuple[Any, ...]] | None:
    """CheckpointFile.CheckpointReadBuffer.read with an entry formatter; None where Kafka throws."""
    lines = java_read_lines(text)
    if not lines:
        return []
    if java_parse(lines[0], 32) != 0:
        return None
    if len(lines) == 1:
        return []
    expected = java_parse(lines[1], 32)
    if expected is None:
        return None
    out = []
    for line in lines[2:]:
        fields = java_split(line)
        if len(fields) != len(widths):
            return None
        entry: list[Any] = []
        for value, bits in zip(fields, widths, strict=True):
            if bits == 0:
                entry.append(value)
            else:
                parsed = java_parse(value, bits)
                if parsed is None:
                    return None
                entry.append(parsed)
        out.append(tuple(entry))
    return out if len(out) == expected else None


checkpoint_lines = st.one_of(
    st.sampled_from(
        [
            "0", "1", "2", "3", "-0", "+0", "00", " 0", "0 ", "", " ", "\t", "\x0b", "\x0c", "x",
            "topic 0 5", "topic\t1\t2", "t 1 2 ", " t 1 2", "t  1   2", "t 1", "t 1 2 3", "t x 2",
            "t 2147483648 1", "t -2147483648 -1", "t 1 9223372036854775807", "t 1 9223372036854775808",
            "5 10", "5 10 ", " 5 10", "5", "5 -1", "2147483648 0", "0 9223372036854775808", "١ 2",
            "t\u00a01 2", "t 1 2\u2028", "9" * 30, "1" * 5000, "+", "-", "t +1 +2", "t 1_0 2",
        ]
    ),
    st.text(st.sampled_from("0123456789 -+\tt\x0b\u00a0é"), max_size=12),
)  # fmt: skip
checkpoint_texts = st.builds(
    lambda lines, sep, final: sep.join(lines) + (sep if final else ""),
    st.lists(checkpoint_lines, max_size=7),
    st.sampled_from(["\n", "\r\n", "\r"]),
    st.booleans(),
)


@fuzz(400)
@given(text=checkpoint_texts)
@example(text="0\n1\n\n")
@example(text="0\n1\n topic 0 5\n")
@example(text="0\n1\ntopic 0 5 \n")
@example(text="0\n" + "1" * 5000 + "\n")
@example(text="0\n1\nt 2147483648 0\n")
def test_checkpoint_readers_match_kafkas_reader(workdir: Path, text: str) -> None:
    """Offset and leader-epoch checkpoints are read exactly as CheckpointFile + OffsetCheckpointFile /
    LeaderEpochCheckpointFile read them: same entries, and an EngineError exactly where Kafka throws."""
    tried("checkpoints: text vs Kafka model")
    path = fresh_dir(workdir) / "checkpoint"
    path.write_text(text, encoding="utf-8", newline="")
    got_offsets = read_or_error(checkpoints.read_offset_checkpoint, str(path))
    model = kafka_checkpoint_model(text, (0, 32, 64))
    if model is None:
        assert got_offsets is None
    else:
        assert got_offsets == {(t, p): o for t, p, o in model}
    got_epochs = read_or_error(checkpoints.read_leader_epoch_checkpoint, str(path))
    model = kafka_checkpoint_model(text, (32, 64))
    assert got_epochs == model


topics = st.text(st.sampled_from("abcxyzABC019._-"), min_size=1, max_size=30)  # Topic.LEGAL_CHARS


@fuzz(100)
@given(
    offsets=st.dictionaries(st.tuples(topics, st.integers(0, 2**31 - 1)), st.integers(-(2**63), 2**63 - 1)),
    epochs=st.lists(st.tuples(st.integers(0, 2**31 - 1), st.integers(0, 2**63 - 1))),
)
def test_checkpoint_round_trips(
    workdir: Path, offsets: dict[tuple[str, int], int], epochs: list[tuple[int, int]]
) -> None:
    tried("checkpoints: round trips")
    d = fresh_dir(workdir)
    (d / "replication-offset-checkpoint").write_text(checkpoints.encode_offset_checkpoint(offsets))
    (d / "leader-epoch-checkpoint").write_text(checkpoints.encode_leader_epoch_checkpoint(epochs))
    assert checkpoints.read_offset_checkpoint(str(d / "replication-offset-checkpoint")) == offsets
    assert checkpoints.read_leader_epoch_checkpoint(str(d / "leader-epoch-checkpoint")) == epochs


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)
json_texts = st.one_of(
    st.builds(lambda v: json.dumps({"version": 0, "brokerEpoch": v}), json_values),
    st.builds(json.dumps, json_values),
    st.sampled_from(
        [
            '{"version":0,"brokerEpoch":1e400}', '{"brokerEpoch":Infinity}', '{"brokerEpoch":-Infinity}',
            '{"brokerEpoch":NaN}', "[" * 50_000, '{"a":' * 50_000, '{"brokerEpoch": 9223372036854775808}',
            '{"version":0,"brokerEpoch":12}', "", " \n", "{", "null", '"x"',
        ]
    ),
    st.text(max_size=40),
)  # fmt: skip
small_files = st.one_of(json_texts.map(str.encode), st.binary(max_size=60))


@fuzz(200)
@given(raw=small_files)
@example(raw=b'{"version":0,"brokerEpoch":1e400}')
@example(raw=b'{"version":0,"brokerEpoch":-Infinity}')
@example(raw=b"[" * 100_000)
@example(raw=b'{"a":' * 100_000)
@example(raw=b"\xff\xfe")
def test_clean_shutdown_and_quorum_state_readers(workdir: Path, raw: bytes) -> None:
    """``.kafka_cleanshutdown``: any content still counts as a clean-shutdown marker (Kafka catches every
    exception and returns no epoch); ``quorum-state``: a JSON object or an EngineError."""
    tried("checkpoints: json files")
    d = fresh_dir(workdir)
    (d / ".kafka_cleanshutdown").write_bytes(raw)
    marker = checkpoints.read_clean_shutdown(str(d))
    assert marker.present and marker.format in ("empty", "json", "unparsable")
    assert marker.broker_epoch is None or isinstance(marker.broker_epoch, int)
    (d / "quorum-state").write_bytes(raw)
    state = read_or_error(checkpoints.read_quorum_state, str(d / "quorum-state"))
    assert state is None or isinstance(state, dict)


def test_clean_shutdown_marker_absent_and_unreadable(workdir: Path) -> None:
    d = fresh_dir(workdir)
    assert checkpoints.read_clean_shutdown(str(d)).present is False
    # an empty dir in its place counts as the marker (LogManager deletes whatever it is before listing: lab, every
    # release, type-clean_shutdown_directory); one with something in it is the reader's error (deleteIfExists throws)
    (d / ".kafka_cleanshutdown").mkdir()
    marker = checkpoints.read_clean_shutdown(str(d))
    assert marker.present is True
    (d / ".kafka_cleanshutdown" / "x").write_text("")
    with pytest.raises(EngineError) as info:
        checkpoints.read_clean_shutdown(str(d))
    check_engine_error(info.value, str(d / ".kafka_cleanshutdown"))
    tried("checkpoints: json files")


property_lines = st.one_of(
    st.sampled_from(
        [
            "version=1", "version = 0", "version:1", "version 1", "version=x", "version=" + "9" * 5000,
            "cluster.id=abc", "node.id=3", "broker.id=-1", "broker.id=2147483648", "directory.id=xyz",
            "# comment", "! comment", "   ", "key\\", "ke\\=y=v", "a\\\\", "\\", "=", ":", "node.id=",
        ]
    ),
    st.text(max_size=20),
)  # fmt: skip
property_texts = st.builds(lambda ls: "\n".join(ls), st.lists(property_lines, max_size=6))


@fuzz(200)
@given(text=property_texts, raw=st.binary(max_size=30), use_raw=st.booleans())
def test_properties_meta_and_partition_metadata_readers(
    workdir: Path, text: str, raw: bytes, use_raw: bool
) -> None:
    tried("checkpoints: properties and metadata")
    props = checkpoints.parse_properties(text)
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in props.items())
    d = fresh_dir(workdir)
    content = raw if use_raw else text.encode()
    for name, reader in (
        ("meta.properties", checkpoints.read_meta_properties),
        ("partition.metadata", checkpoints.read_partition_metadata),
        ("recovery-point-offset-checkpoint", checkpoints.read_offset_checkpoint),
        ("leader-epoch-checkpoint", checkpoints.read_leader_epoch_checkpoint),
        ("quorum-state", checkpoints.read_quorum_state),
    ):
        (d / name).write_bytes(content)
        read_or_error(reader, str(d / name))
        read_or_error(reader, str(d / "missing"))
        read_or_error(reader, str(d))  # a directory


@fuzz(100)
@given(
    cluster=st.text(st.sampled_from("AZaz09_-Qx"), min_size=22, max_size=22), node=st.integers(0, 2**31 - 1)
)
def test_meta_properties_round_trip(workdir: Path, cluster: str, node: int) -> None:
    tried("checkpoints: meta.properties round trip")
    d = fresh_dir(workdir)
    (d / "meta.properties").write_text(
        f"#\n#Thu Jan 01 00:00:00 UTC 2026\nnode.id={node}\nversion=1\ncluster.id={cluster}\n"
    )
    meta = checkpoints.read_meta_properties(str(d / "meta.properties"))
    assert (meta.version, meta.node_id, meta.cluster_id) == (1, node, cluster)


# ---------------------------------------------------------------------------------------------------------
# Names
# ---------------------------------------------------------------------------------------------------------

any_names = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)


@fuzz(300)
@given(name=any_names, topic=topics, partition=st.integers(0, 2**31 - 1), uid=st.uuids())
def test_partition_dir_names(name: str, topic: str, partition: int, uid: Any) -> None:
    """LocalLog.parseTopicPartitionName: the last '-' splits topic and partition; -delete/-future/-stray
    names carry a '.<uuid>'; anything else is None (the broker refuses to start)."""
    tried("layout: partition dir names")
    parsed = layout.parse_partition_dir(name)
    assert parsed is None or (parsed.topic and -(2**31) <= parsed.partition < 2**31)
    layout.is_loaded_by_broker(name)
    assert layout.parse_partition_dir(f"{topic}-{partition}") == layout.PartitionName(topic, partition, "log")
    for kind in ("delete", "future", "stray"):
        special = layout.parse_partition_dir(f"{topic}-{partition}.{uid.hex}-{kind}")
        assert special == layout.PartitionName(topic, partition, kind)
    assert layout.parse_partition_dir(f"{topic}-{2**31}") is None


@fuzz(300)
@given(
    name=any_names,
    base=st.integers(0, 2**63 - 1),
    suffix=st.sampled_from(layout.SEGMENT_SUFFIXES),
    leftover=st.sampled_from(["", *layout.LEFTOVER_SUFFIXES]),
    epoch=st.integers(0, 2**31 - 1),
    state=st.sampled_from(["", ".part", ".deleted"]),
)
def test_segment_and_snapshot_file_names(
    name: str, base: int, suffix: str, leftover: str, epoch: int, state: str
) -> None:
    tried("layout: file names")
    parsed = layout.parse_segment_file(name)
    assert parsed is None or (parsed.suffix in layout.SEGMENT_SUFFIXES and parsed.base_offset >= 0)
    layout.parse_kraft_snapshot(name)
    file_name = layout.segment_file_name(base, suffix) + leftover
    assert layout.parse_segment_file(file_name) == layout.SegmentFileName(base, suffix, leftover)
    snap = layout.parse_kraft_snapshot(f"{base:020d}-{epoch:010d}.checkpoint{state}")
    assert snap == (base, epoch, state.lstrip(".") or "complete")


# ---------------------------------------------------------------------------------------------------------
# Whole log dirs
# ---------------------------------------------------------------------------------------------------------

ROOT_NAMES = [
    "meta.properties", ".kafka_cleanshutdown", "recovery-point-offset-checkpoint", "log-start-offset-checkpoint",
    "replication-offset-checkpoint", "cleaner-offset-checkpoint", "bootstrap.checkpoint", ".lock",
    "recovery-point-offset-checkpoint.tmp",
]  # fmt: skip
DIR_NAMES = [
    "topic-0", "topic-1", "a.b_c-d-12", "__consumer_offsets-7", "__cluster_metadata-0", "lost+found",
    "remote-log-index-cache", "t-0.0123456789abcdef0123456789abcdef-delete", "t-0.abc-future", "t-x", "-", "x-",
    "t-99999999999", "t-1-stray",
]  # fmt: skip
PART_NAMES = [
    *(layout.segment_file_name(b, s) for b in (0, 100, 2**40) for s in layout.SEGMENT_SUFFIXES),
    "00000000000000000000.log.deleted", "00000000000000000100.index.swap", "00000000000000000000.log.cleaned",
    "leader-epoch-checkpoint", "partition.metadata", "quorum-state", "junk", "5.log", "00000000000000000005.txt",
    "00000000000000000007-0000000001.checkpoint", "00000000000000000007-0000000001.checkpoint.part",
]  # fmt: skip
CONTENT_KINDS = [
    "empty",
    "random",
    "log",
    "torn-log",
    "index",
    "checkpoint",
    "epochs",
    "meta",
    "json",
    "zeros",
]

safe_names = st.text(
    st.characters(blacklist_characters="/\x00\n\r", blacklist_categories=("Cs",)), min_size=1, max_size=20
).filter(lambda n: n not in (".", ".."))


@st.composite
def file_contents(draw: st.DrawFn) -> bytes:
    kind = draw(st.sampled_from(CONTENT_KINDS))
    if kind == "empty":
        return b""
    if kind == "random":
        return draw(st.binary(max_size=100))
    if kind in ("log", "torn-log"):
        data = b"".join(b for _k, b in draw(st.lists(valid_batches(), min_size=1, max_size=3)))
        return data if kind == "log" else data[: draw(st.integers(0, len(data)))]
    if kind == "index":
        return draw(index_contents(struct.Struct(">ii")))
    if kind == "checkpoint":
        return draw(checkpoint_texts).encode()
    if kind == "epochs":
        return checkpoints.encode_leader_epoch_checkpoint(
            draw(st.lists(st.tuples(st.integers(0, 9), st.integers(0, 99)), max_size=3))
        ).encode()
    if kind == "meta":
        return draw(property_texts).encode()
    if kind == "json":
        return draw(json_texts).encode()
    return bytes(draw(st.integers(1, 5)) * 12)


@st.composite
def trees(draw: st.DrawFn) -> dict[str, Any]:
    """{name: bytes (a file) | "->target" (a symlink) | {name: ...} (a partition dir)}."""
    root: dict[str, Any] = {}
    for name in draw(st.lists(st.one_of(st.sampled_from(ROOT_NAMES), safe_names), max_size=4, unique=True)):
        root[name] = draw(file_contents())
    for name in draw(st.lists(st.one_of(st.sampled_from(DIR_NAMES), safe_names), max_size=4, unique=True)):
        part: dict[str, Any] = {}
        for fname in draw(
            st.lists(st.one_of(st.sampled_from(PART_NAMES), safe_names), max_size=6, unique=True)
        ):
            how = draw(st.sampled_from(["file", "file", "file", "dir", "dangling", "link"]))
            part[fname] = {"file": None, "dir": {}, "dangling": "->nowhere", "link": "->../meta.properties"}[
                how
            ]
            if how == "file":
                part[fname] = draw(file_contents())
        root[name] = part
    return root


def materialise(base: Path, tree: dict[str, Any]) -> None:
    for name, node in tree.items():
        path = base / name
        if isinstance(node, dict):
            path.mkdir(exist_ok=True)
            materialise(path, node)
        elif isinstance(node, str):
            os.symlink(node[2:], path)
        else:
            path.write_bytes(node)


def check_scan_errors(errors: list[EngineError], root: str) -> None:
    for err in errors:
        assert isinstance(err, EngineError)
        assert "\n" not in str(err)
        assert os.path.abspath(err.path).startswith(root)
        assert str(err).startswith(err.path)


@fuzz(100)
@given(tree=trees())
def test_scan_log_dir_over_random_trees(workdir: Path, tree: dict[str, Any]) -> None:
    """scan_log_dir never raises; every problem it records is an EngineError naming a file under the root;
    then every file it classified is read with its reader under the same contract."""
    tried("logdir: random trees")
    root = fresh_dir(workdir)
    materialise(root, tree)
    ld = logdir.scan_log_dir(str(root))
    assert ld.exists and ld.path == str(root)
    check_scan_errors(ld.errors, str(root))
    names = {os.path.basename(p.path) for p in ld.partitions}
    assert names == {n for n, v in tree.items() if isinstance(v, dict) and layout.parse_partition_dir(n)}
    assert {os.path.basename(f.path) for f in ld.fatal_dirs} == {
        n for n, v in tree.items() if isinstance(v, dict) and layout.parse_partition_dir(n) is None
        and n != layout.REMOTE_INDEX_CACHE
    }  # fmt: skip
    for part in ld.partitions:
        check_scan_errors(part.errors, str(root))
        assert [s.base_offset for s in part.segments] == sorted(s.base_offset for s in part.segments)
        for seg in part.segments:
            check_scan_errors(seg.errors, str(root))
            assert seg.log is not None
            for info, reader in (
                (seg.index, indexes.read_offset_index),
                (seg.timeindex, indexes.read_time_index),
                (seg.txnindex, indexes.read_txn_index),
                (seg.snapshot, snapshot.read_snapshot),
            ):
                if info is not None:
                    read_or_error(reader, info.path)
            buf = read_or_error(LogBuffer.open, seg.log.path)
            if buf is not None:
                with buf:
                    scan(bytes(buf.view))
            for fn in (logdir.recovery_scan, logdir.next_offset, logdir.log_max_timestamp):
                try:
                    fn(seg)
                except EngineError as exc:
                    check_engine_error(exc, seg.log.path)
            seg.retention_timestamp(False)
        logdir.recovered_segments(part, False, None)
        for _offset, _epoch, _state, info in part.kraft_snapshots:
            buf = read_or_error(LogBuffer.open, info.path)
            if buf is not None:
                with buf:
                    scan(bytes(buf.view))


def test_scan_log_dir_on_missing_and_non_directory_roots(workdir: Path) -> None:
    d = fresh_dir(workdir)
    assert logdir.scan_log_dir(str(d / "absent")).exists is False
    (d / "file").write_bytes(b"x")
    ld = logdir.scan_log_dir(str(d / "file"))
    assert len(ld.errors) == 1
    check_engine_error(ld.errors[0], str(d / "file"))
    tried("logdir: random trees")
