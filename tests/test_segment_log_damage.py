"""Content damage to a segment's ``.log`` that recovery re-reads (issue 36 §2): the plan says what
``LogSegment.recover`` does with it, as the broker lab measured (tests/lab/scenarios.py LOG_DAMAGE; docs/fidelity.md
'Segment .log damage'). The damage is kafka_lab.damage's, the host the simulator's, stopped uncleanly."""

from __future__ import annotations

import os
import struct
from pathlib import Path
from typing import Any

from kafka_lab import damage as D
from kafka_ops.render.models import validate

from .checks.index_hosts import Failures, audit, seg_path, simulate


def _recovered(tmp_path: Path) -> tuple[Any, str, str, list[int]]:
    """An uncleanly stopped host, and its partition with most recovered segments (path, topic-p, bases)."""
    host = simulate(tmp_path, failures=Failures(unclean_shutdown=True))
    recovered: dict[tuple[str, int], list[int]] = {}
    for s in audit(host)["next_start"]["segments"]:
        recovered.setdefault((s["topic"], s["partition"]), []).append(s["base_offset"])
    (topic, p), segs = max(recovered.items(), key=lambda kv: len(kv[1]))
    assert len(segs) >= 2
    part = next(d for ld in host.log_dirs for d in [os.path.join(ld, f"{topic}-{p}")] if os.path.isdir(d))
    return host, part, f"{topic}-{p}", segs


def _fates(host: Any, name: str) -> dict[int, dict[str, Any]]:
    report = audit(host)
    validate(report)
    return {
        s["base_offset"]: s
        for s in report["next_start"]["segments"]
        if f"{s['topic']}-{s['partition']}" == name
    }


def _rewrite(path: str, how: D.Damager) -> None:
    data = Path(path).read_bytes()
    Path(path).write_bytes(how(data))


def test_a_batch_of_an_unknown_magic_whose_crc_matches_is_kept_by_recovery(tmp_path: Path) -> None:
    """LogSegment.recover checks a v2 batch's size and CRC only (the magic lies before the CRC's range): the last
    batch's magic set to 7 is kept, nothing truncated (lab 3.7.2, log-active_bad_magic_unclean). The old model
    stopped its scan at the unknown magic and planned the batch's bytes truncated."""
    host, part, name, segs = _recovered(tmp_path)
    log = seg_path(part, segs[0], ".log")
    _rewrite(log, D.log_bad_magic)
    first = _fates(host, name)[segs[0]]
    assert first["load"] == "recovered" and first["truncated_bytes"] == 0, first
    assert all(_fates(host, name)[b]["deleted_at"] is None for b in segs[1:])


def test_offsets_going_backwards_at_an_index_entry_empty_the_segment_and_delete_the_later_ones(
    tmp_path: Path,
) -> None:
    """A batch whose offsets are not above the index entry recovery last wrote (every index.interval.bytes):
    OffsetIndex.append throws InvalidOffsetException and recoverLog empties the segment ('Found invalid offset
    during recovery. Deleting the corrupt segment and creating an empty one'), then deletes every later segment
    (lab 3.7.2, log-active_offsets_backwards_unclean: all 20,904 bytes). The old model planned nothing."""
    host, part, name, segs = _recovered(tmp_path)
    log = seg_path(part, segs[0], ".log")
    data = bytearray(Path(log).read_bytes())
    size = len(data)
    # every batch of the second half takes the segment's first base offset: the CRC does not cover it
    pos = 0
    while pos + 12 <= size:
        length = struct.unpack_from(">i", data, pos + 8)[0]
        if pos > size // 2:
            data[pos : pos + 8] = data[0:8]
        pos += 12 + length
    Path(log).write_bytes(bytes(data))
    fates = _fates(host, name)
    first = fates[segs[0]]
    assert first["load"] == "recovered" and first["truncated_bytes"] == size, first
    for base in segs[1:]:
        assert fates[base]["deleted_by"] == "recovery", fates[base]


def test_offsets_going_backwards_between_index_entries_are_kept(tmp_path: Path) -> None:
    """Backwards offsets in a batch recovery writes no index entry for (less than index.interval.bytes after
    the last one) are not checked: the segment is kept whole."""
    host, part, name, segs = _recovered(tmp_path)
    log = seg_path(part, segs[0], ".log")
    spans = D._batch_spans(Path(log).read_bytes())
    assert spans[1][0] <= 4096  # the second batch lies within the first interval: no entry written for it
    data = bytearray(Path(log).read_bytes())
    data[spans[1][0] : spans[1][0] + 8] = data[0:8]
    Path(log).write_bytes(bytes(data))
    first = _fates(host, name)[segs[0]]
    assert first["load"] == "recovered" and first["truncated_bytes"] == 0, first


def _last_index_entry(index: str) -> tuple[int, int]:
    data = Path(index).read_bytes()
    entries = [struct.unpack_from(">ii", data, i) for i in range(0, len(data) - 7, 8)]
    real = [e for e in entries if e != (0, 0)]
    assert real, index
    return real[-1]


def test_an_active_log_cut_at_its_last_index_entry_puts_the_log_end_offset_back_at_its_base(
    tmp_path: Path,
) -> None:
    """After a clean stop, the active .log cut inside the batch its offset index's last entry points at:
    LogSegment.readNextOffset finds no batch reaching that entry's offset and returns the segment's base offset
    (lab 3.7.2, log-active_truncated_mid_header: 'logEndOffset=180' with complete batches still in the file). The
    plan lists the segment, loaded as it is, with that consequence; the old plan listed nothing."""
    host = simulate(tmp_path)
    report = audit(host)
    assert report["next_start"]["segments"] == []
    # an active segment with an index entry: its partition's last .log of more than index.interval.bytes
    for ld in host.log_dirs:
        for part in sorted(os.listdir(ld)):
            if not os.path.isdir(os.path.join(ld, part)) or "__" in part:
                continue
            logs = sorted(f for f in os.listdir(os.path.join(ld, part)) if f.endswith(".log"))
            if not logs:
                continue
            log = os.path.join(ld, part, logs[-1])
            if os.path.getsize(log) > 8192:
                break
        else:
            continue
        break
    else:
        raise AssertionError("no active segment with an index entry")
    base = int(os.path.basename(log)[:20])
    _, pos = _last_index_entry(log[: -len(".log")] + ".index")
    os.truncate(log, pos + 30)  # inside that batch's header
    report = audit(host)
    validate(report)
    [seg] = [s for s in report["next_start"]["segments"] if s["log"] == log]
    assert seg["load"] == "as_is" and seg["truncated_bytes"] == 0 and seg["deleted_at"] is None
    assert f"log end offset falls back to {base}" in seg["reason"], seg["reason"]
    assert report["next_start"]["broker"] == "starts"
    from kafka_ops.broker.plan import plan_sentences

    assert any("falls back to their base offset" in t for t in plan_sentences(report["next_start"]))
    # SHUT002 on the cut batch says the same, not 'readNextOffset stops before the torn batch'
    [f] = [f for f in report["findings"] if f["check"] == "SHUT002" and f["path"] == log]
    assert f"log end offset falls back to {base}" in f["message"] and "stops before" not in f["message"], f


def test_the_log_end_offset_of_an_active_log_cut_before_its_last_index_entry_is_its_base(
    tmp_path: Path,
) -> None:
    """readNextOffset from an index position at or past the end of the .log finds no batch: the base offset (lab
    2.8.2 and 3.7.2, log-active_truncated_mid_record: 'log end offset 180'), not the last complete batch's next
    offset that the old model took after reading the segment from its start."""
    from kafka_ops.engine.layout import parse_partition_dir
    from kafka_ops.engine.logdir import next_offset, scan_partition

    host = simulate(tmp_path)
    for ld in host.log_dirs:
        parts = [os.path.join(ld, p) for p in sorted(os.listdir(ld)) if "__" not in p]
        for part in [p for p in parts if os.path.isdir(p)]:
            logs = sorted(f for f in os.listdir(part) if f.endswith(".log"))
            if logs and os.path.getsize(os.path.join(part, logs[-1])) > 8192:
                break
        else:
            continue
        break
    log = os.path.join(part, logs[-1])
    base = int(logs[-1][:20])
    _, pos = _last_index_entry(log[: -len(".log")] + ".index")
    os.truncate(log, pos)  # the last index entry now points at the end of the file
    seg = scan_partition(part, parse_partition_dir(os.path.basename(part))).segments[-1]  # type: ignore[arg-type]
    assert D._batch_spans(Path(log).read_bytes())  # complete batches remain before the cut
    assert next_offset(seg) > base
    fates = _fates(host, os.path.basename(part))
    assert f"log end offset falls back to {base}" in fates[base]["reason"]


def test_offsets_going_backwards_in_a_segment_recovered_for_its_missing_index_stop_the_start(
    tmp_path: Path,
) -> None:
    """The same backwards offsets in a segment whose .index is missing after a clean stop: the loader recovers it
    in loadSegmentFiles, where nothing catches InvalidOffsetException (only recoverLog does), and the broker exits.
    The old plan had the segment's indexes rebuilt and the broker start."""
    host = simulate(tmp_path)
    for ld in host.log_dirs:
        parts = [os.path.join(ld, p) for p in sorted(os.listdir(ld)) if "__" not in p]
        for part in [p for p in parts if os.path.isdir(p)]:
            logs = sorted(f for f in os.listdir(part) if f.endswith(".log"))
            if logs and os.path.getsize(os.path.join(part, logs[-1])) > 12288:
                break
        else:
            continue
        break
    log = os.path.join(part, logs[-1])
    _rewrite(log, D.log_offsets_backwards_half)
    os.unlink(log[: -len(".log")] + ".index")
    report = audit(host)
    validate(report)
    ns = report["next_start"]
    assert ns["broker"] == "exits" and ns["check"] == "SHUT002", (ns["broker"], ns["reason"])
    assert log in ns["reason"] and "InvalidOffsetException" in ns["reason"]
    [f] = [f for f in report["findings"] if f["check"] == "SHUT002" and f["path"] == log]
    assert f["severity"] == "critical" and "the broker exits" in f["message"], f
