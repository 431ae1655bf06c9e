"""IDX004: untrimmed zero-padded index on a rolled segment (critical for a .timeindex)."""

from __future__ import annotations

from kafka_ops.engine.indexes import preallocated_size

from .index_hosts import Failures, audit, bases, findings, pad, seg_path, simulate

MAX_INDEX = 10 * 1024 * 1024


def test_idx004_padded_rolled_indexes(tmp_path) -> None:  # type: ignore[no-untyped-def]
    host = simulate(tmp_path, failures=Failures(untrimmed_timeindex=True))
    [timeindex] = host.planted["untrimmed_timeindex"]
    index = timeindex.replace(".timeindex", ".index")
    base = int(index.rsplit("/", 1)[1].split(".")[0])

    report = audit(host, kafka_version="3.7.0")
    found = {f["path"]: f for f in findings(report, "IDX004")}
    assert set(found) == {index, timeindex}
    t, i = found[timeindex], found[index]
    assert (t["severity"], t["segment"], i["severity"], i["segment"]) == ("critical", base, "warning", base)
    assert (
        t["details"]["size"] == preallocated_size(12, MAX_INDEX) == 10_485_756
        and t["details"]["preallocated"]
    )
    assert i["details"]["size"] == 10_485_760 and i["details"]["slots"] == 1_310_720
    assert t["details"]["next_start"] == "kept" and "RET001" in t["message"] and "timestamp 0" in t["message"]
    # RET001 says when; IDX004 does not repeat it
    assert [f["path"] for f in findings(report, "RET001")] == [timeindex]

    # a < 2.3.0 broker rejects the padded time index at load (last timestamp 0 < first) and rebuilds it
    old = {f["path"]: f for f in findings(audit(host, kafka_version="2.2.0"), "IDX004")}
    assert {f["severity"] for f in old.values()} == {"warning"}
    assert old[timeindex]["details"]["next_start"] == "rebuilt"


def test_idx004_time_index_of_a_topic_without_time_retention(tmp_path) -> None:  # type: ignore[no-untyped-def]
    host = simulate(tmp_path)
    part = host.partitions["profiles-0"]  # cleanup.policy=compact
    base = bases(part)[1]
    pad(seg_path(part, base, ".timeindex"), preallocated_size(12, MAX_INDEX))
    [f] = findings(audit(host), "IDX004")
    assert (f["severity"], f["segment"], f["details"]["time_retention"]) == ("warning", base, False)
    assert "no time retention" in f["message"]


def test_idx004_active_segment_loaded_as_it_is(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # a clean stop whose trim failed: the marker is written, the active time index stays full-size (KAFKA-19200)
    host = simulate(tmp_path)
    part = host.partitions["orders-1"]
    active = bases(part)[-1]
    pad(seg_path(part, active, ".timeindex"), preallocated_size(12, MAX_INDEX))
    [f] = findings(audit(host), "IDX004")
    assert (f["severity"], f["segment"], f["details"]["active"]) == ("critical", active, True)
    assert "BufferOverflowException" in f["message"] and "KAFKA-19200" in f["message"]


def test_idx004_nothing_on_healthy_running_or_killed_hosts(tmp_path, healthy_host) -> None:  # type: ignore[no-untyped-def]
    assert findings(audit(healthy_host), "IDX004") == []
    # active indexes are preallocated while the broker runs, and rebuilt by recovery after a kill
    running = simulate(tmp_path / "running", running=True)
    assert findings(audit(running, broker_state="running"), "IDX004") == []
    killed = simulate(tmp_path / "killed", failures=Failures(unclean_shutdown=True))
    assert findings(audit(killed), "IDX004") == []
