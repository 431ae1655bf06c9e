"""Cross-check of the engine's batch reader and writer against kafka-python (``kafka.record``), an
independent implementation of Kafka's on-disk formats, in both directions and field by field.

* Batches that ``builder.build_batch`` / ``builder.control_batch`` write are read back by kafka-python's
  ``DefaultRecordBatch``: CRC, every header field, every record.
* Batches that kafka-python's ``DefaultRecordBatchBuilder`` (v2) and ``LegacyRecordBatchBuilder`` (magic 0
  and 1) write are read by ``BatchScanner`` + ``iter_records`` and compared with what was appended and with
  what kafka-python itself reads from the same bytes.

kafka-python only writes what a producer writes (base offset 0, CreateTime, no control batches). Fields the
broker assigns (base offset, partition leader epoch, LogAppendTime, the v1 wrapper offset) are stamped onto
the produced bytes here exactly where the broker stamps them, re-computing the checksum when it covers them.

Codec libraries: the engine decompresses snappy/lz4/zstd with ``cramjam``; kafka-python needs
``python-snappy``, ``lz4``, ``zstandard`` (and ``xxhash`` to write magic-0 LZ4). A missing one skips its cases.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import kafka.codec as kp_codec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka.record import _crc32c as kp_crc32c
from kafka.record.default_records import ControlRecord, DefaultRecordBatch, DefaultRecordBatchBuilder
from kafka.record.legacy_records import LegacyRecordBatch, LegacyRecordBatchBuilder
from kafka.record.memory_records import MemoryRecords

from kafka_ops.engine import compression
from kafka_ops.engine.builder import NewRecord, build_batch, control_batch
from kafka_ops.engine.crc import crc32c_pure
from kafka_ops.engine.records import Batch, BatchScanner, LogBuffer, Record, iter_records, scan_file

GZIP, SNAPPY, LZ4, ZSTD = 1, 2, 3, 4
CODEC_NAMES = {0: "none", GZIP: "gzip", SNAPPY: "snappy", LZ4: "lz4", ZSTD: "zstd"}
_KP_CODEC = {
    0: True,
    GZIP: True,
    SNAPPY: kp_codec.has_snappy(),
    LZ4: kp_codec.has_lz4(),
    ZSTD: kp_codec.has_zstd(),
}
_KP_PACKAGE = {SNAPPY: "python-snappy", LZ4: "lz4", ZSTD: "zstandard"}

RecordTuple = tuple[int, int, bytes | None, bytes | None, list[tuple[str, bytes | None]]]


def need_codec(codec: int, magic: int = 2) -> None:
    """Skip (with the package to install) when either implementation lacks the codec."""
    missing = []
    if not compression.available(codec):
        missing.append("cramjam (engine)")
    if not _KP_CODEC[codec]:
        missing.append(f"{_KP_PACKAGE[codec]} (kafka-python)")
    if codec == LZ4 and magic == 0 and kp_codec.xxhash is None:
        missing.append("xxhash (kafka-python, magic-0 lz4)")
    if missing:
        pytest.skip(f"{CODEC_NAMES[codec]} needs " + ", ".join(missing))


def kafka_increment_sequence(base: int, delta: int) -> int:
    """DefaultRecordBatch.incrementSequence: wraps at Integer.MAX_VALUE."""
    if base > 2**31 - 1 - delta:
        return delta - (2**31 - 1 - base) - 1
    return base + delta


def compressible(i: int) -> bytes:
    return (b"payload-%d " % i) * 20


# ---------------------------------------------------------------------------------------------------------
# Readers side by side
# ---------------------------------------------------------------------------------------------------------


def ours(data: bytes) -> tuple[LogBuffer, list[Batch]]:
    """Scan bytes as a whole segment: every batch must be valid and the scan must reach the end."""
    buf = LogBuffer(data)
    scanner = BatchScanner(buf)
    batches = list(scanner)
    assert scanner.tail is None, scanner.tail
    assert scanner.valid_bytes == len(data)
    return buf, batches


def record_tuple(r: Record) -> RecordTuple:
    return (r.offset, r.timestamp, r.key, r.value, list(r.headers))


def kp_record_tuple(r: Any) -> RecordTuple:
    ts = -1 if r.timestamp is None else r.timestamp  # kafka-python: None for magic 0 (NO_TIMESTAMP)
    return (r.offset, ts, r.key, r.value, list(r.headers))


def assert_readers_agree(data: bytes) -> tuple[LogBuffer, list[Batch], list[list[Record]]]:
    """Our scanner and kafka-python's MemoryRecords see the same batches, header fields and records."""
    buf, batches = ours(data)
    theirs = list(MemoryRecords(bytes(data)))
    assert len(batches) == len(theirs)
    all_records = []
    for b, kb in zip(batches, theirs, strict=True):
        assert b.crc_valid and kb.validate_crc()
        assert b.magic == kb.magic
        assert b.size == kb.size_in_bytes
        assert b.codec_id == kb.compression_type
        recs = list(iter_records(buf, b))
        kp_recs = list(kb)
        assert [record_tuple(r) for r in recs] == [kp_record_tuple(r) for r in kp_recs]
        assert b.records_count == len(kp_recs)
        if b.magic == 2:
            raw = bytes(data[b.position + 21 : b.position + b.size])
            # two independent CRC-32C implementations agree with the stored checksum
            assert crc32c_pure(raw) == kp_crc32c.crc(raw) == b.crc == kb.crc
            assert b.base_offset == kb.base_offset
            assert b.last_offset == kb.last_offset
            assert b.partition_leader_epoch == kb.leader_epoch
            assert b.attributes == kb.attributes
            assert b.timestamp_type == ("LogAppendTime" if kb.timestamp_type == 1 else "CreateTime")
            assert b.is_transactional == kb.is_transactional
            assert b.is_control == kb.is_control_batch
            assert b.base_timestamp == kb.first_timestamp
            assert b.max_timestamp == kb.max_timestamp
            assert b.producer_id == kb.producer_id
            assert b.producer_epoch == kb.producer_epoch
            assert b.base_sequence == kb.base_sequence
            assert b.last_sequence == kb.last_sequence
            assert b.records_count == kb.records_count
            if kb.base_sequence >= 0:
                assert [r.sequence for r in recs] == [
                    kafka_increment_sequence(kb.base_sequence, r.offset - kb.base_offset) for r in recs
                ]
            if kb.is_control_batch:
                (ctrl,) = kp_recs
                assert isinstance(ctrl, ControlRecord)
                assert b.control_type == {0: "ABORT", 1: "COMMIT"}.get(ctrl.type, b.control_type)
        else:
            assert isinstance(kb, LegacyRecordBatch)
            assert b.last_offset == kb.base_offset  # the shallow (wrapper) offset
            expected_type = {None: "NoTimestampType", 0: "CreateTime", 1: "LogAppendTime"}[kb.timestamp_type]
            assert b.timestamp_type == expected_type
            assert b.base_offset == kp_recs[0].offset
            assert all(r.headers == [] for r in recs)
        all_records.append(recs)
    return buf, batches, all_records


# ---------------------------------------------------------------------------------------------------------
# 1. Engine writes, kafka-python reads
# ---------------------------------------------------------------------------------------------------------

BUILD_CASES: dict[str, dict[str, Any]] = {
    "keys_values": {
        "records": [NewRecord(b"key-%d" % i, b"value-%d" % i, 1_700_000_000_000 + i) for i in range(5)],
    },
    "null_key_and_value": {
        "records": [
            NewRecord(None, b"v", 1_000),
            NewRecord(b"k", None, 1_001),
            NewRecord(None, None, 1_002),
            NewRecord(b"", b"", 1_003),
        ],
    },
    "headers": {
        "records": [
            NewRecord(b"k", b"v", 5_000, [("trace-id", b"abc"), ("empty", b""), ("null", None)]),
            NewRecord(b"k2", b"v2", 5_001, [("ünïcødé-ключ", b"\x00\xff"), ("dup", b"1"), ("dup", b"2")]),
        ],
    },
    "out_of_order_timestamps": {
        "records": [NewRecord(b"a", b"1", 9_000), NewRecord(b"b", b"2", 7_000), NewRecord(b"c", b"3", 8_000)],
    },
    "log_append_time": {
        "records": [NewRecord(b"a", b"1", 10), NewRecord(b"b", b"2", 20)],
        "log_append_time": 1_750_000_000_123,
    },
    "idempotent_producer": {
        "records": [NewRecord(b"k", b"v%d" % i, 100 + i) for i in range(3)],
        "producer_id": 4242,
        "producer_epoch": 3,
        "base_sequence": 17,
    },
    "transactional": {
        "records": [NewRecord(b"k", b"v%d" % i, 100 + i) for i in range(4)],
        "producer_id": 9_000_000_001,
        "producer_epoch": 7,
        "base_sequence": 2**31 - 2,  # the last sequence wraps past Integer.MAX_VALUE
        "transactional": True,
    },
    "high_offset_and_leader_epoch": {
        "records": [NewRecord(b"k", b"v", 1)],
        "base_offset": 2**62,
        "partition_leader_epoch": 2**31 - 1,
    },
}


def expected_records(
    base_offset: int, records: Sequence[NewRecord], log_append_time: int | None
) -> list[RecordTuple]:
    return [
        (
            base_offset + i,
            log_append_time if log_append_time is not None else r.timestamp,
            r.key,
            r.value,
            list(r.headers),
        )
        for i, r in enumerate(records)
    ]


def check_engine_batch_in_kafka_python(codec: int, case: dict[str, Any]) -> None:
    records: list[NewRecord] = case["records"]
    base_offset = case.get("base_offset", 1234)
    lat = case.get("log_append_time")
    ple = case.get("partition_leader_epoch", 5)
    pid = case.get("producer_id", -1)
    pepoch = case.get("producer_epoch", -1)
    bseq = case.get("base_sequence", -1)
    txn = case.get("transactional", False)
    data = build_batch(
        base_offset,
        records,
        codec=codec,
        log_append_time=lat,
        producer_id=pid,
        producer_epoch=pepoch,
        base_sequence=bseq,
        transactional=txn,
        partition_leader_epoch=ple,
    )
    kb = DefaultRecordBatch(data)
    assert kb.validate_crc()
    assert kb.magic == 2
    assert kb.size_in_bytes == len(data)
    assert kb.base_offset == base_offset
    assert kb.last_offset == base_offset + len(records) - 1
    assert kb.leader_epoch == ple
    assert kb.compression_type == codec
    assert kb.timestamp_type == (1 if lat is not None else 0)
    assert kb.is_transactional is txn
    assert kb.is_control_batch is False
    assert kb.first_timestamp == min(r.timestamp for r in records)
    assert kb.max_timestamp == (lat if lat is not None else max(r.timestamp for r in records))
    assert (kb.producer_id, kb.producer_epoch, kb.base_sequence) == (pid, pepoch, bseq)
    assert kb.last_sequence == (kafka_increment_sequence(bseq, len(records) - 1) if bseq >= 0 else -1)
    assert kb.records_count == len(records)
    assert [kp_record_tuple(r) for r in kb] == expected_records(base_offset, records, lat)
    # and our own reader says the same as kafka-python about the same bytes
    _buf, batches, recs = assert_readers_agree(data)
    assert [record_tuple(r) for r in recs[0]] == expected_records(base_offset, records, lat)
    assert batches[0].codec == CODEC_NAMES[codec]


@pytest.mark.parametrize("case", sorted(BUILD_CASES))
def test_engine_batches_are_read_by_kafka_python(case: str) -> None:
    check_engine_batch_in_kafka_python(0, BUILD_CASES[case])


@pytest.mark.parametrize("codec", [GZIP, SNAPPY, LZ4, ZSTD], ids=lambda c: CODEC_NAMES[c])
@pytest.mark.parametrize("case", ["keys_values", "headers", "transactional", "log_append_time"])
def test_engine_compressed_batches_are_read_by_kafka_python(codec: int, case: str) -> None:
    need_codec(codec)
    check_engine_batch_in_kafka_python(codec, BUILD_CASES[case])


def test_engine_large_snappy_batch_spans_several_xerial_blocks() -> None:
    """More than 32 KiB of records: the xerial snappy stream holds several blocks, as snappy-java writes."""
    need_codec(SNAPPY)
    records = [NewRecord(b"k%d" % i, compressible(i) * 4, 1_000 + i) for i in range(200)]
    check_engine_batch_in_kafka_python(SNAPPY, {"records": records})


@pytest.mark.parametrize("commit", [True, False], ids=["COMMIT", "ABORT"])
def test_engine_control_batches_are_read_by_kafka_python(commit: bool) -> None:
    data = control_batch(500, commit, producer_id=77, producer_epoch=4, timestamp=1_234, coordinator_epoch=9)
    kb = DefaultRecordBatch(data)
    assert kb.validate_crc()
    assert kb.is_control_batch and kb.is_transactional
    assert (kb.base_offset, kb.last_offset, kb.producer_id, kb.producer_epoch) == (500, 500, 77, 4)
    (rec,) = list(kb)
    assert isinstance(rec, ControlRecord)
    assert (rec.version, rec.type, rec.commit, rec.abort) == (0, int(commit), commit, not commit)
    assert rec.value == struct.pack(">hi", 0, 9)  # EndTransactionMarker: version 0 + coordinator epoch
    assert rec.offset == 500 and rec.timestamp == 1_234

    _buf, batches, _recs = assert_readers_agree(data)
    assert batches[0].control_type == ("COMMIT" if commit else "ABORT")
    assert batches[0].coordinator_epoch == 9


# ---------------------------------------------------------------------------------------------------------
# 2. kafka-python writes, engine reads
# ---------------------------------------------------------------------------------------------------------


def broker_stamp_v2(
    data: bytes | bytearray, base_offset: int, leader_epoch: int, log_append_time: int | None = None
) -> bytes:
    """What the broker does to a produced v2 batch: assign the base offset and leader epoch (outside the
    CRC), and for LogAppendTime set attribute bit 3 and the max timestamp (inside it: recompute the CRC)."""
    out = bytearray(data)
    struct.pack_into(">q", out, 0, base_offset)
    struct.pack_into(">i", out, 12, leader_epoch)
    if log_append_time is not None:
        (attrs,) = struct.unpack_from(">h", out, 21)
        struct.pack_into(">h", out, 21, attrs | 0x08)
        struct.pack_into(">q", out, 35, log_append_time)
        struct.pack_into(">I", out, 17, kp_crc32c.crc(bytes(out[21:])))
    return bytes(out)


def kp_build_v2(
    records: Sequence[NewRecord],
    codec: int = 0,
    producer_id: int = -1,
    producer_epoch: int = -1,
    base_sequence: int = -1,
    transactional: bool = False,
) -> bytes:
    builder = DefaultRecordBatchBuilder(
        magic=2,
        compression_type=codec,
        is_transactional=transactional,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        base_sequence=base_sequence,
        batch_size=1 << 24,
    )
    for i, r in enumerate(records):
        assert builder.append(i, timestamp=r.timestamp, key=r.key, value=r.value, headers=list(r.headers))
    return bytes(builder.build())


V2_PRODUCER_MODES: dict[str, dict[str, Any]] = {
    "plain": {},
    "idempotent": {"producer_id": 31, "producer_epoch": 0, "base_sequence": 0},
    "transactional": {
        "producer_id": 2**40,
        "producer_epoch": 12,
        "base_sequence": 2**31 - 3,
        "transactional": True,
    },
}


def sample_records() -> list[NewRecord]:
    return [
        NewRecord(b"key-0", compressible(0), 1_700_000_000_500),
        NewRecord(None, compressible(1), 1_700_000_000_100),  # earlier than the first: negative delta
        NewRecord(b"key-2", None, 1_700_000_000_900, [("h1", b"x"), ("h-null", None)]),
        NewRecord(b"", compressible(3), 1_700_000_000_900, [("ключ", compressible(3)[:10])]),
    ]


def check_kafka_python_v2_in_engine(codec: int, mode: dict[str, Any], log_append_time: int | None) -> None:
    records = sample_records()
    produced = kp_build_v2(records, codec, **mode)
    data = broker_stamp_v2(produced, base_offset=10_000, leader_epoch=3, log_append_time=log_append_time)
    _buf, batches, recs = assert_readers_agree(data)
    (b,) = batches
    assert b.magic == 2
    assert b.codec_id == codec  # the values compress, so kafka-python kept the codec
    assert (b.base_offset, b.last_offset, b.records_count) == (10_000, 10_003, 4)
    assert b.partition_leader_epoch == 3
    assert b.base_timestamp == records[0].timestamp  # kafka-python bases deltas on the first record
    assert b.max_timestamp == (log_append_time or max(r.timestamp for r in records))
    assert b.timestamp_type == ("LogAppendTime" if log_append_time else "CreateTime")
    assert b.producer_id == mode.get("producer_id", -1)
    assert b.producer_epoch == mode.get("producer_epoch", -1)
    assert b.base_sequence == mode.get("base_sequence", -1)
    assert b.is_transactional is mode.get("transactional", False)
    assert not b.is_control and b.control_type is None
    if b.base_sequence >= 0:
        assert b.last_sequence == kafka_increment_sequence(b.base_sequence, 3)
    assert [record_tuple(r) for r in recs[0]] == expected_records(10_000, records, log_append_time)


@pytest.mark.parametrize("mode", sorted(V2_PRODUCER_MODES))
@pytest.mark.parametrize("codec", [0, GZIP, SNAPPY, LZ4, ZSTD], ids=lambda c: CODEC_NAMES[c])
def test_kafka_python_v2_batches_are_read_by_engine(codec: int, mode: str) -> None:
    need_codec(codec)
    check_kafka_python_v2_in_engine(codec, V2_PRODUCER_MODES[mode], None)


@pytest.mark.parametrize("codec", [0, GZIP, ZSTD], ids=lambda c: CODEC_NAMES[c])
def test_kafka_python_v2_batches_stamped_log_append_time_are_read_by_engine(codec: int) -> None:
    need_codec(codec)
    check_kafka_python_v2_in_engine(codec, {}, 1_760_000_000_000)


def legacy_crc(out: bytearray, pos: int, size: int) -> None:
    """LegacyRecord: CRC-32 over magic..end of the message, stored at offset 12 of the entry."""
    struct.pack_into(">I", out, pos + 12, zlib.crc32(bytes(out[pos + 16 : pos + 12 + size])) & 0xFFFFFFFF)


def kp_build_legacy(
    magic: int,
    codec: int,
    records: Sequence[NewRecord],
    base_offset: int,
    log_append_time: int | None = None,
) -> bytes:
    """A message set as a broker stores it after kafka-python produced it.

    Uncompressed: one message per record, absolute offsets. Compressed: one wrapper whose offset the broker
    sets to the last inner offset; inner offsets are absolute for magic 0 and relative (0..n-1) for magic 1
    (KIP-31). LogAppendTime (magic 1): the broker sets attribute bit 3 and the timestamp of the wrapper
    (compressed) or of every message (uncompressed) and recomputes the CRC.
    """
    builder = LegacyRecordBatchBuilder(magic=magic, compression_type=codec, batch_size=1 << 24)
    for i, r in enumerate(records):
        inner_offset = i if (codec and magic == 1) else base_offset + i
        assert builder.append(inner_offset, timestamp=r.timestamp, key=r.key, value=r.value) is not None
    out = bytearray(builder.build())
    if codec:
        struct.pack_into(">q", out, 0, base_offset + len(records) - 1)
    positions = []
    pos = 0
    while pos < len(out):
        (size,) = struct.unpack_from(">i", out, pos + 8)
        positions.append((pos, size))
        pos += 12 + size
    if log_append_time is not None:
        assert magic == 1
        for pos, size in positions:
            out[pos + 17] |= 0x08
            struct.pack_into(">q", out, pos + 18, log_append_time)
            legacy_crc(out, pos, size)
    return bytes(out)


def legacy_records() -> list[NewRecord]:
    return [
        NewRecord(b"k0", compressible(0), 1_600_000_000_000),
        NewRecord(None, compressible(1), 1_600_000_000_005),
        NewRecord(b"k2", None, 1_600_000_000_003),
        NewRecord(b"", compressible(3), 1_600_000_000_010),
    ]


@pytest.mark.parametrize("codec", [0, GZIP, SNAPPY, LZ4], ids=lambda c: CODEC_NAMES[c])
@pytest.mark.parametrize("magic", [0, 1])
def test_kafka_python_legacy_message_sets_are_read_by_engine(magic: int, codec: int) -> None:
    """Magic 0 LZ4 is written with the pre-0.10 wrong frame-descriptor checksum, which Kafka ignores."""
    need_codec(codec, magic)
    records = legacy_records()
    data = kp_build_legacy(magic, codec, records, base_offset=700)
    _buf, batches, recs = assert_readers_agree(data)
    assert len(batches) == (1 if codec else len(records))
    for b in batches:
        assert (b.magic, b.codec_id) == (magic, codec)
        assert b.timestamp_type == ("NoTimestampType" if magic == 0 else "CreateTime")
        assert not b.is_transactional and not b.is_control
        assert b.producer_id == -1 and b.base_sequence == -1 and b.last_sequence == -1
    if codec:
        (b,) = batches
        assert (b.base_offset, b.last_offset, b.records_count) == (700, 703, 4)
    else:
        assert [(b.base_offset, b.last_offset, b.records_count) for b in batches] == [
            (700 + i, 700 + i, 1) for i in range(4)
        ]
    got = [record_tuple(r) for batch_records in recs for r in batch_records]
    assert got == [
        (700 + i, r.timestamp if magic == 1 else -1, r.key, r.value, []) for i, r in enumerate(records)
    ]


@pytest.mark.parametrize("codec", [0, GZIP], ids=lambda c: CODEC_NAMES[c])
def test_kafka_python_v1_log_append_time_is_read_by_engine(codec: int) -> None:
    """LegacyRecord.timestamp(): inner messages of a LogAppendTime wrapper take the wrapper's timestamp."""
    records = legacy_records()
    data = kp_build_legacy(1, codec, records, base_offset=0, log_append_time=1_650_000_000_000)
    _buf, batches, recs = assert_readers_agree(data)
    assert all(b.timestamp_type == "LogAppendTime" for b in batches)
    assert [r.timestamp for rs in recs for r in rs] == [1_650_000_000_000] * len(records)


def test_v1_wrapper_offset_zero_keeps_inner_offsets() -> None:
    """AbstractLegacyRecordBatch.DeepRecordsIterator: a v1 wrapper offset of 0 (some librdkafka versions)
    means absoluteBaseOffset 0, so the inner relative offsets are used as they are. (kafka-python's reader
    computes 0 - lastInner instead, i.e. negative offsets, so this case is checked against Kafka's rule.)"""
    builder = LegacyRecordBatchBuilder(magic=1, compression_type=GZIP, batch_size=1 << 20)
    for i in range(3):
        builder.append(i, timestamp=100 + i, key=None, value=compressible(i))
    data = bytes(builder.build())
    assert struct.unpack_from(">q", data, 0)[0] == 0
    buf, (b,) = ours(data)
    assert [r.offset for r in iter_records(buf, b)] == [0, 1, 2]
    assert (b.base_offset, b.last_offset) == (0, 0)


def test_mixed_segment_file_written_by_both_implementations(tmp_path: Path) -> None:
    """A segment as it looks after a message-format upgrade: v1 messages, then v2 batches from both
    writers and a transaction marker, read from a file on disk by scan_file and by kafka-python."""
    parts = [
        kp_build_legacy(1, 0, legacy_records()[:2], base_offset=0),
        kp_build_legacy(1, GZIP, legacy_records(), base_offset=2),
        broker_stamp_v2(
            kp_build_v2(
                sample_records(), GZIP, producer_id=5, producer_epoch=0, base_sequence=0, transactional=True
            ),
            base_offset=6,
            leader_epoch=1,
        ),
        control_batch(10, True, producer_id=5, producer_epoch=0, timestamp=1_700_000_001_000),
        build_batch(11, [NewRecord(b"k", b"v", 1_700_000_002_000)], codec=GZIP, partition_leader_epoch=2),
    ]
    data = b"".join(parts)
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(data)
    batches, tail, size = scan_file(path)
    assert tail is None and size == len(data)
    assert [(b.magic, b.base_offset, b.last_offset) for b in batches] == [
        (1, 0, 0),
        (1, 1, 1),
        (1, 2, 5),
        (2, 6, 9),
        (2, 10, 10),
        (2, 11, 11),
    ]
    assert [b.control_type for b in batches] == [None, None, None, None, "COMMIT", None]
    _buf, _batches, recs = assert_readers_agree(data)
    assert [r.offset for rs in recs for r in rs] == list(range(12))


# ---------------------------------------------------------------------------------------------------------
# 3. Property-based round trips in both directions
# ---------------------------------------------------------------------------------------------------------

header_keys = st.text(st.characters(blacklist_categories=("Cs",)), max_size=8)
payloads = st.one_of(st.none(), st.binary(max_size=48), st.binary(max_size=6).map(lambda b: b * 40))
new_records = st.lists(
    st.builds(
        NewRecord,
        key=payloads,
        value=payloads,
        timestamp=st.integers(0, 2**43),
        headers=st.lists(st.tuples(header_keys, st.one_of(st.none(), st.binary(max_size=16))), max_size=3),
    ),
    min_size=1,
    max_size=8,
)
available_codecs = st.sampled_from([c for c in CODEC_NAMES if compression.available(c) and _KP_CODEC[c]])
producer_states = st.one_of(
    st.just((-1, -1, -1, False)),
    st.tuples(st.integers(0, 2**63 - 1), st.integers(0, 2**15 - 1), st.integers(0, 2**31 - 1), st.booleans()),
)


@settings(max_examples=60, deadline=None)
@given(
    records=new_records,
    codec=available_codecs,
    base_offset=st.integers(0, 2**62),
    leader_epoch=st.integers(-1, 2**31 - 1),
    log_append_time=st.one_of(st.none(), st.integers(0, 2**43)),
    producer=producer_states,
)
def test_property_engine_batches_read_by_kafka_python(
    records: list[NewRecord],
    codec: int,
    base_offset: int,
    leader_epoch: int,
    log_append_time: int | None,
    producer: tuple[int, int, int, bool],
) -> None:
    pid, pepoch, bseq, txn = producer
    case = {
        "records": records,
        "base_offset": base_offset,
        "partition_leader_epoch": leader_epoch,
        "log_append_time": log_append_time,
        "producer_id": pid,
        "producer_epoch": pepoch,
        "base_sequence": bseq,
        "transactional": txn,
    }
    check_engine_batch_in_kafka_python(codec, case)


@settings(max_examples=60, deadline=None)
@given(
    records=new_records,
    codec=available_codecs,
    base_offset=st.integers(0, 2**62),
    producer=producer_states,
    log_append_time=st.one_of(st.none(), st.integers(0, 2**43)),
)
def test_property_kafka_python_batches_read_by_engine(
    records: list[NewRecord],
    codec: int,
    base_offset: int,
    producer: tuple[int, int, int, bool],
    log_append_time: int | None,
) -> None:
    pid, pepoch, bseq, txn = producer
    produced = kp_build_v2(records, codec, pid, pepoch, bseq, txn)
    data = broker_stamp_v2(produced, base_offset, 0, log_append_time)
    _buf, (b,), (recs,) = assert_readers_agree(data)
    assert (b.base_offset, b.last_offset) == (base_offset, base_offset + len(records) - 1)
    assert (b.producer_id, b.producer_epoch, b.base_sequence, b.is_transactional) == (pid, pepoch, bseq, txn)
    assert [record_tuple(r) for r in recs] == expected_records(base_offset, records, log_append_time)


legacy_records_strategy = st.lists(
    st.builds(NewRecord, key=payloads, value=payloads, timestamp=st.integers(0, 2**43)),
    min_size=1,
    max_size=6,
)


@settings(max_examples=40, deadline=None)
@given(
    magic=st.sampled_from([0, 1]),
    codec=st.sampled_from([c for c in (0, GZIP, SNAPPY, LZ4) if compression.available(c) and _KP_CODEC[c]]),
    records=legacy_records_strategy,
    base_offset=st.integers(0, 2**62),
)
def test_property_kafka_python_legacy_read_by_engine(
    magic: int, codec: int, records: list[NewRecord], base_offset: int
) -> None:
    if codec == LZ4 and magic == 0 and kp_codec.xxhash is None:
        return  # kafka-python cannot write magic-0 lz4 without xxhash
    data = kp_build_legacy(magic, codec, records, base_offset)
    _buf, _batches, recs = assert_readers_agree(data)
    got = [record_tuple(r) for rs in recs for r in rs]
    assert got == [
        (base_offset + i, r.timestamp if magic == 1 else -1, r.key, r.value, [])
        for i, r in enumerate(records)
    ]
