"""A producer-state snapshot the next start cannot read: deleted at load, the state rebuilt from an older snapshot
or the log start (kafka_ops.broker.producer_state), as the plan's ``producer_snapshots`` says."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kafka_ops.audit import run_audit
from kafka_ops.engine.errors import FormatError
from kafka_ops.engine.snapshot import ProducerEntry, encode_snapshot, read_snapshot
from kafka_ops.facts.model import AuditOptions
from kafka_ops.simulator.host import HostSpec, SimulatedHost, TopicSpec, simulate_host

from .conftest import NOW_MS


def sim(root: Path) -> SimulatedHost:
    return simulate_host(
        str(root),
        HostSpec(now_ms=NOW_MS, topics=[TopicSpec("orders", partitions=1, records_per_partition=400)]),
    )


def audit(h: SimulatedHost, version: str = "3.9.1") -> dict:  # type: ignore[type-arg]
    return run_audit(
        AuditOptions(
            server_properties=h.server_properties,
            broker_state="stopped",
            now_ms=NOW_MS,
            kafka_version=version,
        )
    )


def snapshots(h: SimulatedHost) -> list[str]:
    (pdir,) = [os.path.join(d, x) for d in h.log_dirs for x in os.listdir(d) if x.startswith("orders-")]
    return sorted(
        (os.path.join(pdir, f) for f in os.listdir(pdir) if f.endswith(".snapshot")),
        key=lambda p: int(os.path.basename(p).split(".")[0]),
    )


def test_a_healthy_host_lists_no_snapshot(tmp_path: Path) -> None:
    h = sim(tmp_path / "h")
    assert len(snapshots(h)) >= 2
    assert audit(h)["next_start"]["producer_snapshots"] == []


def test_a_corrupt_latest_snapshot_is_deleted_and_the_older_one_loaded(tmp_path: Path) -> None:
    h = sim(tmp_path / "h")
    *_, older, latest = snapshots(h)
    with open(latest, "r+b") as f:
        f.write(bytes(os.path.getsize(latest)))  # zero-filled: version 0, CorruptSnapshotException
    for version in ("1.1.1", "2.8.2", "3.7.2", "4.1.0"):
        ns = audit(h, version)["next_start"]
        [c] = ns["producer_snapshots"]
        assert (c["path"], c["fate"], c["from_snapshot"]) == (latest, "deleted_at_load", older), version
        assert c["rebuilt_from"] == int(os.path.basename(older).split(".")[0]) and c["reread_bytes"] > 0
        assert "CorruptSnapshotException" in c["reason"] and "nothing is lost" in c["reason"]
        assert ns["broker"] == "starts" and {d["state"] for d in ns["log_dirs"]} == {"online"}


def test_every_snapshot_corrupt_rebuilds_from_the_log_start(tmp_path: Path) -> None:
    h = sim(tmp_path / "h")
    all_snaps = snapshots(h)
    for p in all_snaps:
        with open(p, "r+b") as f:
            f.seek(12)
            f.write(b"\xff\xfe")  # the CRC no longer matches
    ns = audit(h)["next_start"]
    got = ns["producer_snapshots"]
    assert [c["path"] for c in got] == all_snaps
    assert {(c["from_snapshot"], c["rebuilt_from"]) for c in got} == {(None, 0)}


def test_a_broker_that_exits_keeps_the_snapshot(tmp_path: Path) -> None:
    h = sim(tmp_path / "h")
    latest = snapshots(h)[-1]
    with open(latest, "wb") as f:
        f.write(b"\x7fELF")
    (pdir,) = {os.path.dirname(latest)}
    open(os.path.join(pdir, "partition.metadata"), "wb").close()  # an NPE at load: the broker exits
    ns = audit(h)["next_start"]
    [c] = ns["producer_snapshots"]
    assert ns["broker"] == "exits" and c["fate"] == "kept"


def test_a_snapshot_too_large_to_be_one_is_not_read(tmp_path: Path) -> None:
    """A (sparse) 65 MiB file named like the newest snapshot: a producer snapshot is a few bytes per producer, so
    the audit does not read such a file into memory (a log dir is the broker user's); it is passed over as an
    unreadable one is, and an older corrupt snapshot behind it is not judged either."""
    from kafka_ops.broker.producer_state import MAX_SNAPSHOT_BYTES

    h = sim(tmp_path / "h")
    *_, older, latest = snapshots(h)
    with open(older, "r+b") as f:
        f.write(bytes(os.path.getsize(older)))
    with open(latest, "r+b") as f:
        f.truncate(MAX_SNAPSHOT_BYTES + 1)  # zeros: corrupt if it were read
    assert audit(h)["next_start"]["producer_snapshots"] == []
    with open(latest, "r+b") as f:
        f.truncate(MAX_SNAPSHOT_BYTES)  # at the bound: read, and found corrupt
    assert [c["path"] for c in audit(h)["next_start"]["producer_snapshots"]] == [older, latest]  # by path


def test_the_audit_judges_a_snapshot_as_the_full_reader_does(tmp_path: Path) -> None:
    """The audit asks only whether a snapshot reads (read_snapshot without its entries): the same verdict as the
    full read, for a good snapshot of three producers and for an entry count past the end of the file."""
    h = sim(tmp_path / "h")
    *_, latest = snapshots(h)
    with open(latest, "wb") as f:  # three producers (the simulator's snapshots hold none)
        f.write(encode_snapshot([ProducerEntry(p, 0, 9, 390 + p, 9, NOW_MS, -1, -1) for p in (1, 2, 3)]))
    assert audit(h)["next_start"]["producer_snapshots"] == []
    full, head = read_snapshot(latest), read_snapshot(latest, entries=False)
    assert len(full.entries) == 3 and not head.entries
    assert full.crc_valid and (head.version, head.crc, head.crc_valid) == (full.version, full.crc, True)
    with open(latest, "r+b") as f:
        f.seek(6)
        f.write((len(full.entries) + 1).to_bytes(4, "big"))  # one entry more than the file holds
    for entries in (True, False):
        with pytest.raises(FormatError, match="claims"):
            read_snapshot(latest, entries=entries)
    [c] = audit(h)["next_start"]["producer_snapshots"]
    assert c["path"] == latest and "claims" in c["error"]
