"""The engine against real broker data dirs (shared/corpus, read-only; table in its README.md).

For every data dir: the batch and record counts, magic values, codecs, transactional/control batches and
byte totals equal the README's row; every batch has a valid CRC and no segment ends in a torn or corrupt
tail; every file reader accepts every file it is meant for; and index blobs missing from the snapshot
show up as absent segment attributes (or, for a missing ``.log``, as orphan indexes), never as errors.

Batches are counted over segment ``.log`` files (``Partition.segments``) and KRaft snapshots
``<offset>-<epoch>.checkpoint`` in ``__cluster_metadata-0`` (``Partition.kraft_snapshots``), which are
record-batch files too.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from kafka_ops.engine import checkpoints, indexes, logdir
from kafka_ops.engine.layout import parse_segment_file
from kafka_ops.engine.records import BatchScanner, LogBuffer, iter_records
from kafka_ops.engine.snapshot import read_snapshot

CORPUS = Path(os.environ.get("KAFKA_OPS_CORPUS", Path(__file__).resolve().parents[2] / "shared" / "corpus"))
if not CORPUS.exists():  # CI clones next to shared/; this workplace keeps it at /work/shared
    CORPUS = Path("/work/shared/corpus")

pytestmark = pytest.mark.skipif(not (CORPUS / "README.md").is_file(), reason=f"no corpus at {CORPUS}")


@dataclass(frozen=True)
class Row:
    """One row of the corpus README."""

    number: int
    path: str  # <owner>__<repo>/<path in that repository>
    partitions: int
    log_segments: int
    non_empty_segments: int
    batches: int
    records: int
    magics: frozenset[int]
    codecs: frozenset[int]
    total_bytes: int  # every file of the data dir
    transactional_batches: int
    control_batches: int
    control_types: frozenset[str]
    kraft_snapshots: int
    missing_blobs: int


ROWS = [
    Row(1, "xpxwo100__bullShit/tmp/kafka-logs", 53, 53, 4, 22280, 22280, frozenset({1}), frozenset({0}),
        1396688, 0, 0, frozenset(), 0, 106),
    Row(4, "fabiogjardim__bigdata_docker/data/kafka", 52, 52, 5, 19, 20, frozenset({2}), frozenset({0}),
        7026, 0, 0, frozenset(), 0, 104),
    Row(5, "mscaldas2012__kafka-connect-spooldir/kafka-data", 104, 104, 18, 526, 582, frozenset({2}),
        frozenset({0, 3}), 163829, 0, 0, frozenset(), 0, 208),
    Row(7, "tuyen-nnt__kafka_2.13-3.0.0/data/kafka", 59, 59, 5, 1369, 3126, frozenset({2}), frozenset({0}),
        307142, 0, 0, frozenset(), 0, 118),
    Row(8, "tuyen-nnt__kafka_2.13-3.0.0/data/kafka-1", 5, 5, 0, 0, 0, frozenset(), frozenset(),
        531, 0, 0, frozenset(), 0, 10),
    Row(9, "tuyen-nnt__kafka_2.13-3.0.0/data/kafka-2", 5, 5, 0, 0, 0, frozenset(), frozenset(),
        523, 0, 0, frozenset(), 0, 10),
    Row(10, "Hachibitz__finsavior-monolith/kafka-logs", 51, 51, 1, 3, 3, frozenset({2}), frozenset({0}),
        5891, 0, 0, frozenset(), 0, 0),
    Row(12, "ItumelengMogase__Real-Time-Data-Pipeline-for-Patient-Admissions/kafka-data", 140, 139, 6, 156, 648,
        frozenset({2}), frozenset({0}), 114603, 2, 7, frozenset({"COMMIT", "SNAPSHOT_FOOTER", "SNAPSHOT_HEADER"}),
        3, 1),
    Row(13, "Danielowo2000__BigDataTechnologies-Version-2/kafka_2.13-3.5.0/kraft-combined-logs", 2, 2, 1,
        28514, 28526, frozenset({2}), frozenset({0}), 2064825, 0, 7,
        frozenset({"LEADER_CHANGE", "SNAPSHOT_FOOTER", "SNAPSHOT_HEADER"}), 1, 0),
    Row(14, "Danielowo2000__BigDataTechnologies-Version-2/kafka_data", 143, 143, 8, 16253, 16855, frozenset({2}),
        frozenset({0}), 1248140, 8, 9,
        frozenset({"COMMIT", "LEADER_CHANGE", "SNAPSHOT_FOOTER", "SNAPSHOT_HEADER"}), 2, 286),
    Row(17, "ronem123__rupia-transaction-service/kafka-logs", 52, 54, 5, 12486, 20663, frozenset({2}),
        frozenset({0}), 1818353, 0, 250, frozenset({"SNAPSHOT_FOOTER", "SNAPSHOT_HEADER"}), 125, 1),
    Row(18, "duongnvt2110__ms-practice/kraft-combined-logs", 1, 0, 0, 135, 270, frozenset({2}), frozenset({0}),
        215430, 0, 90, frozenset({"SNAPSHOT_FOOTER", "SNAPSHOT_HEADER"}), 45, 2),
]  # fmt: skip


def row_id(row: Row) -> str:
    return f"{row.number}-{row.path.split('__', 1)[0]}"


def batch_files(ld: logdir.LogDir) -> Iterator[str]:
    """Every record-batch file of a data dir: segment .log files and KRaft snapshot .checkpoint files."""
    for part in ld.partitions:
        for seg in part.segments:
            assert seg.log is not None
            yield seg.log.path
        for _offset, _epoch, _state, info in part.kraft_snapshots:
            yield info.path


def all_errors(ld: logdir.LogDir) -> list[str]:
    errs = [str(e) for e in ld.errors]
    for part in ld.partitions:
        errs += [str(e) for e in part.errors]
        for seg in part.segments:
            errs += [str(e) for e in seg.errors]
    return errs


@pytest.mark.parametrize("row", ROWS, ids=row_id)
def test_batches_and_records_match_the_readme(row: Row) -> None:
    ld = logdir.scan_log_dir(str(CORPUS / row.path))
    assert ld.exists
    assert all_errors(ld) == []
    assert ld.fatal_dirs == []
    assert len(ld.partitions) == row.partitions
    segments = [s for p in ld.partitions for s in p.segments]
    assert len(segments) == row.log_segments
    assert sum(1 for s in segments if s.log and s.log.size > 0) == row.non_empty_segments
    assert sum(len(p.kraft_snapshots) for p in ld.partitions) == row.kraft_snapshots

    batches = records = txn = control = 0
    magics: set[int] = set()
    codecs: set[int] = set()
    control_types: set[str] = set()
    for path in batch_files(ld):
        with LogBuffer.open(path) as buf:
            scanner = BatchScanner(buf)
            for batch in scanner:
                assert batch.crc_valid, f"{path}: batch at byte {batch.position}"
                batches += 1
                decoded = list(iter_records(buf, batch))
                assert len(decoded) == batch.records_count
                assert all(batch.base_offset <= r.offset <= batch.last_offset for r in decoded), (
                    f"{path}: record offsets outside batch at byte {batch.position}"
                )
                records += len(decoded)
                magics.add(batch.magic)
                codecs.add(batch.codec_id)
                txn += batch.is_transactional
                control += batch.is_control
                if batch.control_type:
                    control_types.add(batch.control_type)
            assert scanner.tail is None, f"{path}: {scanner.tail}"
            assert scanner.valid_bytes == buf.size
    assert (batches, records) == (row.batches, row.records)
    assert magics == row.magics
    assert codecs == row.codecs
    assert (txn, control) == (row.transactional_batches, row.control_batches)
    assert control_types == row.control_types

    total = sum(
        os.path.getsize(os.path.join(d, f)) for d, _dirs, files in os.walk(CORPUS / row.path) for f in files
    )
    assert total == row.total_bytes


@pytest.mark.parametrize("row", ROWS, ids=row_id)
def test_blobs_missing_from_the_snapshot_are_absent_not_errors(row: Row) -> None:
    """An index file missing from a partition dir is ``None`` on its segment (Kafka rebuilds it at the next
    start); a missing ``.log`` leaves its indexes as orphans (the broker deletes them). Neither is an error."""
    ld = logdir.scan_log_dir(str(CORPUS / row.path))
    missing_indexes = 0
    for part in ld.partitions:
        for seg in part.segments:
            if seg.index is None:
                missing_indexes += 1
                assert seg.offset_tail is None
            if seg.timeindex is None:
                missing_indexes += 1
                assert seg.time_tail is None
            if seg.index is not None:
                assert seg.offset_tail is not None
            if seg.timeindex is not None:
                assert seg.time_tail is not None
            assert seg.errors == []
    orphan_groups = {
        (part.path, parsed.base_offset)
        for part in ld.partitions
        for info in part.orphan_indexes
        if (parsed := parse_segment_file(os.path.basename(info.path))) is not None
    }
    assert missing_indexes + len(orphan_groups) == row.missing_blobs
    assert all_errors(ld) == []


@pytest.mark.parametrize("row", ROWS, ids=row_id)
def test_every_reader_accepts_every_corpus_file(row: Row) -> None:
    """Indexes, producer snapshots, checkpoints and metadata files as the broker left them: each reader
    returns a value (an index may still fail its sanity check; that is a finding, not an exception)."""
    root = CORPUS / row.path
    read = 0
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            path = os.path.join(dirpath, name)
            parsed = parse_segment_file(name)
            if parsed is not None and not parsed.leftover:
                base = parsed.base_offset
                if parsed.suffix == ".index":
                    idx = indexes.read_offset_index(path)
                    tail = indexes.read_index_tail(path, "offset", base)
                    assert tail.entry_count == idx.entry_count
                    if idx.entries:
                        assert (tail.first, tail.last) == (idx.entries[0], idx.entries[-1])
                    for version in (None, (2, 0)):
                        assert indexes.offset_sanity(idx, base, version) == indexes.offset_sanity(
                            tail, base, version
                        )
                elif parsed.suffix == ".timeindex":
                    idx = indexes.read_time_index(path)
                    tail = indexes.read_index_tail(path, "time", base)
                    assert tail.entry_count == idx.entry_count
                    assert indexes.time_sanity(idx, base) == indexes.time_sanity(tail, base)
                elif parsed.suffix == ".txnindex":
                    txn = indexes.read_txn_index(path)
                    assert txn.remainder == 0
                elif parsed.suffix == ".snapshot":
                    snap = read_snapshot(path)
                    assert snap.crc_valid, path
                read += 1
            elif name == checkpoints.LEADER_EPOCH:
                epochs = checkpoints.read_leader_epoch_checkpoint(path)
                assert epochs == sorted(epochs)
                read += 1
            elif name == checkpoints.PARTITION_METADATA:
                assert checkpoints.read_partition_metadata(path)["version"] == "0"
                read += 1
            elif name == checkpoints.QUORUM_STATE:
                assert isinstance(checkpoints.read_quorum_state(path), dict)
                read += 1
            elif name in checkpoints.OFFSET_CHECKPOINTS:
                checkpoints.read_offset_checkpoint(path)
                read += 1
            elif name == checkpoints.META_PROPERTIES:
                assert checkpoints.read_meta_properties(path).version in (0, 1)
                read += 1
    assert read > 0
    assert checkpoints.read_clean_shutdown(str(root)).format in ("absent", "empty", "json")


def test_every_readme_row_is_checked() -> None:
    """The README's table and this test's expectations stay in step: a new or changed row fails here."""
    text = (CORPUS / "README.md").read_text()
    by_path = {row.path: row for row in ROWS}
    seen = set()
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 14 or not cells[0].isdigit():
            continue
        number, repo, path = int(cells[0]), cells[1].replace("/", "__", 1), cells[3]
        row = by_path.get(f"{repo}/{path}")
        assert row is not None, f"README row {number} ({repo}/{path}) has no expectations here"
        assert row.number == number
        assert int(cells[6]) == row.partitions
        assert cells[7] == f"{row.log_segments} ({row.non_empty_segments})"
        assert cells[8] == f"{row.batches}/{row.records}"
        assert cells[9] == str(sorted(row.magics))
        assert cells[10] == str(sorted(row.codecs))
        assert int(cells[11]) == row.total_bytes
        notes = cells[12]
        txn = re.search(r"transactional batches=(\d+)", notes)
        assert (int(txn.group(1)) if txn else 0) == row.transactional_batches
        control = re.search(r"control batches=(\d+) \(([A-Z_,]+)\)", notes)
        assert (int(control.group(1)) if control else 0) == row.control_batches
        assert (frozenset(control.group(2).split(",")) if control else frozenset()) == row.control_types
        kraft = re.search(r"KRaft snapshot files=(\d+)", notes)
        assert (int(kraft.group(1)) if kraft else 0) == row.kraft_snapshots
        missing = re.search(r"blobs missing from snapshot=(\d+)", cells[13])
        assert missing is not None and int(missing.group(1)) == row.missing_blobs
        seen.add(row.path)
    assert seen == set(by_path)
