"""The audit reads the active segment's end offset and its tail in one CRC pass (engine.logdir.end_and_tail) where
it read it twice (next_offset, then active_tail): whenever it answers, its answer must be theirs, on any log and
any offset index (a real entry, one that points mid-batch or past the end, zero padding, none)."""

from __future__ import annotations

import struct
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafka_ops.engine.builder import NewRecord, build_batch
from kafka_ops.engine.layout import parse_partition_dir
from kafka_ops.engine.logdir import active_tail, end_and_tail, next_offset, scan_partition
from kafka_ops.engine.records import LogBuffer

BASE = 100


def write_segment(root: Path, counts: list[int], damage: int, index: str, entry: int) -> Path:
    part = root / "t-0"
    part.mkdir(parents=True, exist_ok=True)
    for f in part.iterdir():
        f.unlink()
    log = bytearray()
    positions = []
    off = BASE
    for n in counts:
        positions.append(len(log))
        log += build_batch(off, [NewRecord(b"k", b"v" * i, 1_700_000_000_000 + i) for i in range(n)])
        off += n
    if damage == 1 and log:  # a flipped byte in the last batch's body: its CRC fails
        log[-1] ^= 0xFF
    elif damage == 2:  # a torn tail
        log += b"\x00\x00\x00"
    elif damage == 3 and len(log) > 20:  # a cut last batch
        del log[-20:]
    (part / f"{BASE:020d}.log").write_bytes(bytes(log))
    idx = b""
    if index == "entry" and positions:  # an entry at one of the batches (or at an arbitrary byte)
        pos = positions[entry % len(positions)] if entry >= 0 else -entry
        idx = struct.pack(">ii", 1, pos)
    elif index == "padded":
        idx = struct.pack(">ii", 1, positions[-1] if positions else 0) + bytes(8 * 3)
    elif index == "zeros":
        idx = bytes(8 * 4)
    (part / f"{BASE:020d}.index").write_bytes(idx)
    (part / f"{BASE:020d}.timeindex").write_bytes(b"")
    return part


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    counts=st.lists(st.integers(1, 4), max_size=4),
    damage=st.integers(0, 3),
    index=st.sampled_from(["none", "entry", "padded", "zeros"]),
    entry=st.integers(-400, 5),
)
def test_one_pass_answers_as_the_two_reads(
    tmp_path: Path, counts: list[int], damage: int, index: str, entry: int
) -> None:
    part_dir = write_segment(tmp_path, counts, damage, index, entry)
    name = parse_partition_dir(part_dir.name)
    assert name is not None
    seg = scan_partition(str(part_dir), name).segments[-1]
    with LogBuffer.open(seg.log.path) as buf:  # type: ignore[union-attr]
        both = end_and_tail(seg, buf)
        expected = (next_offset(seg, buf), active_tail(seg, buf))
    if both is not None:
        assert both == expected
    # the common case answers in one pass: an intact log whose index has no padding
    if damage == 0 and index in ("none", "entry") and entry >= 0:
        assert both is not None
