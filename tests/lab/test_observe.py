"""The observation's readers on lines the lab's brokers wrote (no JVM: these run in a second)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kafka_lab import faults as F
from kafka_lab.observe import exit_reason, next_start, offline_dirs, parse_log, snapshot

pytestmark = pytest.mark.lab

LOG_28 = """\
[2026-11-23 21:34:05,455] INFO Skipping recovery for all logs in /l/data-1 since clean shutdown file was found (kafka.log.LogManager)
[2026-11-23 22:24:22,188] INFO [Log partition=x-0, dir=/l/data-0] Recovering unflushed segment 180 (kafka.log.Log)
[2026-11-23 22:24:22,233] WARN [Log partition=x-0, dir=/l/data-0] Corruption found in segment 180, truncating to offset 200 (kafka.log.Log)
[2026-11-23 22:24:22,268] INFO Completed load of Log(dir=/l/data-0/x-0, topic=x, partition=0, highWatermark=0, lastStableOffset=0, logStartOffset=0, logEndOffset=200) with 4 segments in 139ms (1/1 loaded in /l/data-0) (kafka.log.LogManager)
[2026-11-23 22:24:52,279] INFO [Log partition=x-0, dir=/l/data-0] Deleting segment LogSegment(baseOffset=0, size=62712, lastModifiedTime=1795472656036, largestRecordTimestamp=Some(0)) due to retention time 86400000ms breach based on the largest record timestamp in the segment (kafka.log.Log)
"""

LOG_43_EXIT = """\
[2026-11-23 22:52:30,103] ERROR Error while loading log dir /l/data-0 (kafka.log.LogManager)
java.io.IOException: Could not read file /l/data-0/t01-0/00000000000000000000.timeindex
\tat org.apache.kafka.storage.internals.log.LogLoader.removeTempFilesAndCollectSwapFiles(LogLoader.java:1)
[2026-11-23 22:52:30,290] WARN Stopping serving logs in dir /l/data-1 (kafka.log.LogManager)
[2026-11-23 22:52:30,393] ERROR [ReplicaManager broker=1] Shutdown broker because the metadata log dir /l/data-0 has failed (kafka.server.ReplicaManager)
"""


def test_parse_log_strips_the_partition_prefix() -> None:
    entries = parse_log(LOG_28)
    assert [e.partition for e in entries] == [None, "x-0", "x-0", None, "x-0"]
    assert entries[1].message == "Recovering unflushed segment 180" and entries[1].logger == "kafka.log.Log"
    assert entries[1].dir == "/l/data-0"
    assert entries[3].logger == "kafka.log.LogManager" and entries[3].message.endswith(
        "(1/1 loaded in /l/data-0)"
    )


def test_offline_dirs_and_exit_reason() -> None:
    entries = parse_log(LOG_43_EXIT)
    assert entries[0].extra[0].startswith("java.io.IOException: Could not read file")
    assert offline_dirs(entries) == ["/l/data-0", "/l/data-1"]
    assert exit_reason(entries) == (
        "[ReplicaManager broker=1] Shutdown broker because the metadata log dir /l/data-0 has failed"
    )


def _segment(pdir: Path, base: int, size: int) -> None:
    pdir.mkdir(parents=True, exist_ok=True)
    F.segment_file(pdir, base, ".log").write_bytes(b"\1" * size)
    F.segment_file(pdir, base, ".index").write_bytes(b"\0" * 8)
    F.segment_file(pdir, base, ".timeindex").write_bytes(b"\0" * 12)


def test_next_start_from_two_snapshots(tmp_path: Path) -> None:
    ldir = tmp_path / "data-0"
    pdir = ldir / "x-0"
    for base in (0, 60, 120, 180):
        _segment(pdir, base, 1000)
    before = snapshot([ldir])
    F.segment_file(pdir, 0, ".log").unlink()  # retention
    with open(F.segment_file(pdir, 180, ".log"), "r+b") as f:  # recovery truncated the tail
        f.truncate(900)
    log = LOG_28.replace("/l/data-0", str(ldir))
    obs = next_start(before, snapshot([ldir]), log)
    got = {s["base_offset"]: s for s in obs.next_start["segments"]}
    assert set(got) == {0, 180}
    assert got[0]["deleted_by"] == "retention.ms" and got[0]["deleted_at"] == "2026-11-23T22:24:52.279+00:00"
    assert got[180]["load"] == "recovered" and got[180]["truncated_bytes"] == 100
    assert obs.next_start["broker"] == "starts" and obs.next_start["log_dirs"] == [
        {"path": os.path.realpath(ldir), "state": "online"}
    ]
    exited = next_start(before, snapshot([ldir]), "", exit_code=1)
    assert {s["load"] for s in exited.next_start["segments"]} == {"not_loaded"}
    assert exited.next_start["broker"] == "exits"


LOG_37_DELETE_DIR = """\
[2026-11-26 18:00:01,000] INFO [LogLoader partition=x-0, dir=/l/data-0] Recovering unflushed segment 0 (kafka.log.LogLoader)
[2026-11-26 18:00:31,500] INFO Deleted log for partition x-0 in /l/data-0/x-0.0123456789abcdef0123456789abcdef-delete. (kafka.log.LogManager)
"""


def test_next_start_reads_delete_stray_and_future_dir_names(tmp_path: Path) -> None:
    """Suffixed partition dirs (``<tp>.<uuid>-delete/-stray/-future``) are parsed as the broker parses them; a
    ``-delete`` dir removed whole is deleted by ``delete_dir`` at its "Deleted log" line, and the live partition's
    lines (same ``x-0`` prefix) are not taken for it."""
    ldir = tmp_path / "data-0"
    uuid = "0123456789abcdef0123456789abcdef"
    live, gone = ldir / "x-0", ldir / f"x-0.{uuid}-delete"
    stray, future = ldir / f"my-topic-12.{uuid}-stray", ldir / f"y-3.{uuid}-future"
    for d in (live, gone, stray, future):
        _segment(d, 0, 1000)
    before = snapshot([ldir])
    for f in list(gone.iterdir()):
        f.unlink()
    gone.rmdir()
    log = LOG_37_DELETE_DIR.replace("/l/data-0", str(ldir))
    obs = next_start(before, snapshot([ldir]), log)
    got = {os.path.basename(os.path.dirname(s["log"])): s for s in obs.next_start["segments"]}
    assert set(got) == {live.name, gone.name}
    assert got[gone.name]["deleted_by"] == "delete_dir"
    assert got[gone.name]["deleted_at"] == "2026-11-26T18:00:31.500+00:00"
    assert (got[gone.name]["topic"], got[gone.name]["partition"], got[gone.name]["load"]) == ("x", 0, "as_is")
    assert got[live.name]["load"] == "recovered" and got[live.name]["deleted_at"] is None
    # nothing happened to the stray and future dirs: parsed, not listed
    exited = next_start(before, snapshot([ldir]), "", exit_code=1)
    parts = {(s["topic"], s["partition"]) for s in exited.next_start["segments"]}
    assert parts == {("x", 0), ("my-topic", 12), ("y", 3)}


def test_next_start_reads_a_completed_swap(tmp_path: Path) -> None:
    """A .log.swap swapped in at load: the segment at its base is ``swapped_in`` (its .log is now the swap's
    bytes), a segment it covered and the broker deleted is ``deleted_by: swap`` at the swap line's time."""
    ldir = tmp_path / "data-0"
    pdir = ldir / "x-0"
    for base in (0, 60, 120):
        _segment(pdir, base, 1000)
    swap = F.segment_file(pdir, 0, ".log.swap")
    swap.write_bytes(b"\2" * 2000)
    before = snapshot([ldir])
    F.segment_file(pdir, 60, ".log").unlink()
    swap.rename(F.segment_file(pdir, 0, ".log"))
    log = (
        f"[2026-11-26 18:00:01,250] INFO [LogLoader partition=x-0, dir={ldir}] Found log file {swap} from "
        "interrupted swap operation, which is recoverable from .swap files by renaming. (kafka.log.LogLoader)\n"
    )
    obs = next_start(before, snapshot([ldir]), log)
    got = {s["base_offset"]: s for s in obs.next_start["segments"]}
    assert set(got) == {0, 60}
    assert got[0]["load"] == "swapped_in" and got[0]["truncated_bytes"] == 0
    assert (got[60]["deleted_by"], got[60]["deleted_at"]) == ("swap", "2026-11-26T18:00:01.250+00:00")
