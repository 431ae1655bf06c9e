"""Seed 004's state machine over consumer and service logs (pure Python, no Spark)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafka_ops.qos.logs import ASSIGNED, CONSUMED, JOINED, REVOKED, START, LogFormatError, read_logs
from kafka_ops.qos.offsets import GAP, REWIND, UNASSIGNED, check

KAFKA = "(org.apache.kafka.clients.consumer.internals.ConsumerRebalanceListenerInvoker)"
PFX = "INFO [Consumer clientId=consumer-ingest-1, groupId=ingest]"


def write(tmp_path: Path, name: str, lines: list[str]) -> str:
    p = tmp_path / name
    p.write_text("\n".join(lines) + "\n")
    return str(p)


@pytest.fixture
def seed_logs(tmp_path: Path) -> list[str]:
    """Two pods as in seed 004: pod-a keeps logs-1 over a rebalance and skips offsets 40-44; pod-b dies after
    uploading logs-0 offsets 60-79 uncommitted and pod-a restarts logs-0 from the committed offset 60;
    pod-c rotates logs-2 without ever being assigned it."""
    a = [
        f"[2022-06-15 10:00:00,000] {PFX} Adding newly assigned partitions: logs-0, logs-1 {KAFKA}",
        f"[2022-06-15 10:00:00,100] {PFX} Resetting offset for partition logs-0 to position FetchPosition{{offset=0, offsetEpoch=Optional.empty}}. (x.SubscriptionState)",
        "[2022-06-15 10:01:00,000] INFO uploaded partition=logs-0 offsets=0-19 records=20 (com.example.Rotator)",
        "[2022-06-15 10:01:00,000] INFO uploaded partition=logs-1 offsets=0-19 records=20 (com.example.Rotator)",
        "[2022-06-15 10:02:00,000] INFO uploaded partition=logs-1 offsets=20-39 records=20 (com.example.Rotator)",
        f"[2022-06-15 10:03:00,000] {PFX} Revoke previously assigned partitions logs-0, logs-1 {KAFKA}",
        f"[2022-06-15 10:03:00,900] {PFX} Successfully joined group with generation Generation{{generationId=2, memberId='m', protocol='range'}} (x.AbstractCoordinator)",
        f"[2022-06-15 10:03:01,000] {PFX} Adding newly assigned partitions: logs-1 {KAFKA}",
        "[2022-06-15 10:04:00,000] INFO uploaded partition=logs-1 offsets=45-64 records=20 (com.example.Rotator)",
        f"[2022-06-15 10:06:00,000] {PFX} Adding newly assigned partitions: logs-0, logs-1 {KAFKA}",
        f"[2022-06-15 10:06:00,100] {PFX} Setting offset for partition logs-0 to the committed offset FetchPosition{{offset=60, offsetEpoch=Optional[3]}} (x.ConsumerUtils)",
        "[2022-06-15 10:07:00,000] INFO uploaded partition=logs-0 offsets=60-99 records=40 (com.example.Rotator)",
    ]
    b = [
        f"[2022-06-15 10:03:01,000] {PFX} Adding newly assigned partitions: logs-0 {KAFKA}",
        f"[2022-06-15 10:03:01,100] {PFX} Setting offset for partition logs-0 to the committed offset FetchPosition{{offset=20, offsetEpoch=Optional[3]}} (x.ConsumerUtils)",
        "[2022-06-15 10:04:00,000] INFO uploaded partition=logs-0 offsets=20-59 records=40 (com.example.Rotator)",
        "[2022-06-15 10:05:59,000] INFO uploaded partition=logs-0 offsets=60-79 records=20 (com.example.Rotator)",
        "java.lang.OutOfMemoryError: Java heap space",
    ]
    c = [  # JSON lines with the pod in a field, a service that logs topic and partition apart
        '{"@timestamp": "2022-06-15T10:05:00.000Z", "pod": "pod-c", "message": "committed topic=logs partition=2 offsets [0..9]"}',
    ]
    return [
        write(tmp_path, "pod-a.log", a),
        write(tmp_path, "pod-b.log", b),
        write(tmp_path, "pod-c.jsonl", c),
    ]


def test_log_lines_become_events(seed_logs: list[str]) -> None:
    events = read_logs(seed_logs)
    kinds = [(e.pod, e.kind) for e in events]
    assert ("pod-a", ASSIGNED) in kinds and ("pod-a", REVOKED) in kinds and ("pod-a", JOINED) in kinds
    starts = [(e.pod, e.partitions, e.offset) for e in events if e.kind == START]
    assert starts == [("pod-a", [("logs", 0)], 0), ("pod-b", [("logs", 0)], 20), ("pod-a", [("logs", 0)], 60)]
    consumed = [(e.pod, e.partitions[0], e.first, e.last) for e in events if e.kind == CONSUMED]
    assert ("pod-c", ("logs", 2), 0, 9) in consumed and len(consumed) == 8
    assert [e.time_ms for e in events] == sorted(e.time_ms for e in events)
    revoked = next(e for e in events if e.kind == REVOKED)
    assert revoked.partitions == [("logs", 0), ("logs", 1)]  # the logger suffix is not a partition


def test_state_machine_finds_the_gap_the_rewind_and_the_unassigned_pod(seed_logs: list[str]) -> None:
    found = [
        (f.kind, f.topic, f.partition, f.pod, f.first_offset, f.last_offset)
        for f in check(read_logs(seed_logs))
    ]
    assert found == [
        (GAP, "logs", 1, "pod-a", 40, 44),  # the buffered records of the reassigned partition
        (UNASSIGNED, "logs", 2, "pod-c", 0, 9),
        (REWIND, "logs", 0, "pod-a", 60, 79),  # the uncommitted upload of the dead pod, processed again
    ]


def test_unassigned_only_when_assignments_are_logged(tmp_path: Path) -> None:
    """A service whose consumer lines are not in the logs gets no 'unassigned' finding for it."""
    only = write(tmp_path, "svc.log", ["2022-06-15T10:00:00Z uploaded partition=t-0 offsets=0-9"])
    assert check(read_logs([only])) == []


def test_gaps_without_records_are_offset_holes(seed_logs: list[str]) -> None:
    """With the topic's records known, a gap that holds none (markers, aborted records) is dropped."""
    asked = []

    def none_in_gaps(ranges: list[tuple[str, int, int, int]]) -> list[int]:
        asked.extend(ranges)
        return [0 if first == 40 else last - first + 1 for _t, _p, first, last in ranges]

    found = check(read_logs(seed_logs), none_in_gaps)
    assert asked == [("logs", 1, 40, 44), ("logs", 0, 60, 79)]
    assert [(f.kind, f.visible_records) for f in found] == [(UNASSIGNED, None), (REWIND, 20)]


def test_older_client_lines_and_time_zones(tmp_path: Path) -> None:
    lines = [
        "2019-03-01 11:00:00.250 INFO  o.a.k.c.c.i.ConsumerCoordinator - [Consumer clientId=c, groupId=g] "
        "Setting newly assigned partitions [orders-0, orders-1]",
        "2019-03-01 11:05:00.000 INFO  o.a.k.c.c.i.ConsumerCoordinator - [Consumer clientId=c, groupId=g] "
        "Revoking previously assigned partitions [orders-0, orders-1]",
        "2019-03-01 11:06:00.000 INFO  Resetting offset for partition orders-0 to offset 42.",
    ]
    events = read_logs([write(tmp_path, "old.log", lines)], tz="Europe/Paris")
    assert [(e.kind, e.partitions) for e in events[:2]] == [
        (ASSIGNED, [("orders", 0), ("orders", 1)]),
        (REVOKED, [("orders", 0), ("orders", 1)]),
    ]
    assert events[2].offset == 42
    assert events[0].time_ms == 1551434400250  # 11:00:00.250 in Paris is 10:00:00.250 UTC
    with pytest.raises(LogFormatError, match="named groups partition, first and last"):
        read_logs([str(tmp_path / "old.log")], offset_pattern=r"moved (?P<partition>\S+)")
    with pytest.raises(LogFormatError, match="unknown time zone"):
        read_logs([str(tmp_path / "old.log")], tz="Mars/Olympus")


def test_kafka_python_lines_and_commits_in_the_revocation_callback(tmp_path: Path) -> None:
    """kafka-python's coordinator lines (sets of TopicPartition) are rebalance events; the empty revocation
    before a first join is none; a commit logged after the revocation line (in on_partitions_revoked) and
    before the rejoin belongs to the revoking pod."""
    kp = "INFO [kafka.coordinator.consumer]"
    tps = "{TopicPartition(topic='logs', partition=0), TopicPartition(topic='logs', partition=1)}"
    a = [
        f"2026-11-24T05:00:01.935Z {kp} Revoking previously assigned partitions set() for group g",
        "2026-11-24T05:00:01.990Z INFO [kafka.coordinator] Successfully joined group g <Generation 1 (member_id: "
        "a-1, protocol: range)>",
        f"2026-11-24T05:00:02.020Z {kp} Setting newly assigned partitions {tps} for group g",
        "2026-11-24T05:00:02.060Z INFO [kafka.consumer.fetcher] Resetting offset for partition "
        "TopicPartition(topic='logs', partition=0) to offset 0.",
        "2026-11-24T05:00:02.473Z INFO [pipeline] committed partition=logs-0 offsets=0-19 (batch)",
        "2026-11-24T05:00:04.027Z INFO [kafka.coordinator.heartbeat] Group g is rebalancing; rejoining.",
        f"2026-11-24T05:00:04.034Z {kp} Revoking previously assigned partitions {tps} for group g",
        "2026-11-24T05:00:04.035Z INFO [pipeline] committed partition=logs-0 offsets=20-29 (revocation)",
        "2026-11-24T05:00:04.036Z INFO [kafka.coordinator] (Re-)joining group g",
        "2026-11-24T05:00:05.036Z INFO [kafka.coordinator] Leaving consumer group g (member a-1).",
    ]
    events = read_logs([write(tmp_path, "pod-a.log", a)])
    kinds = [(e.kind, e.partitions, e.offset) for e in events]
    assert kinds[:4] == [
        (JOINED, [], None), (ASSIGNED, [("logs", 0), ("logs", 1)], None), (START, [("logs", 0)], 0),
        (CONSUMED, [("logs", 0)], None),
    ]  # fmt: skip
    assert [k for k, _p, _o in kinds[4:]] == ["joining", REVOKED, CONSUMED, "joining", "leave"]
    assert check(events) == []
