"""Who leads: PartitionRecord / PartitionChangeRecord leader fields, encoded as Kafka's generated code writes them."""

from __future__ import annotations

import os
import re
import struct
import uuid
from pathlib import Path

import pytest

from kafka_ops.engine.binary import write_uvarint
from kafka_ops.engine.checkpoints import read_meta_properties
from kafka_ops.fleet.leaders import apply_record, read_describe, read_metadata_log
from tests.conftest import CORPUS

TID = uuid.UUID("12345678-1234-5678-1234-567812345678").bytes


def _frame(api_key: int, version: int, body: bytes) -> bytes:
    return write_uvarint(1) + write_uvarint(api_key) + write_uvarint(version) + body


def _array(xs: list[int]) -> bytes:  # compact array: length + 1
    return write_uvarint(len(xs) + 1) + b"".join(struct.pack(">i", x) for x in xs)


def topic_record(name: str) -> bytes:
    n = name.encode()
    return _frame(2, 0, write_uvarint(len(n) + 1) + n + TID + write_uvarint(0))


def partition_record(p: int, leader: int, version: int = 1) -> bytes:
    body = struct.pack(">i", p) + TID + _array([1, 2, 3]) + _array([1, 2]) + _array([]) + _array([])
    body += struct.pack(">i", leader) + struct.pack(">ii", 5, 7)  # Leader, LeaderEpoch, PartitionEpoch
    if version >= 1:
        body += write_uvarint(4) + TID * 3  # Directories ([]uuid)
    return _frame(3, version, body + write_uvarint(1) + write_uvarint(0) + write_uvarint(1) + b"\x00")


def change_record(p: int, leader: int | None, isr: list[int] | None = None) -> bytes:
    tags = []
    if isr is not None:
        v = _array(isr)
        tags.append(write_uvarint(0) + write_uvarint(len(v)) + v)
    if leader is not None:
        tags.append(write_uvarint(1) + write_uvarint(4) + struct.pack(">i", leader))
    return _frame(5, 0, struct.pack(">i", p) + TID + write_uvarint(len(tags)) + b"".join(tags))


def test_leaders_follow_partition_and_change_records() -> None:
    topics: dict[bytes, str] = {}
    leaders: dict[tuple[str, int], int] = {}
    for rec in (topic_record("orders"), partition_record(0, 1), partition_record(1, 2, version=0)):
        apply_record(rec, topics, leaders)
    assert leaders == {("orders", 0): 1, ("orders", 1): 2}
    apply_record(change_record(0, None, isr=[1]), topics, leaders)  # Leader tag absent: -2, unchanged
    assert leaders[("orders", 0)] == 1
    apply_record(change_record(0, 3, isr=[3]), topics, leaders)
    apply_record(change_record(1, -1), topics, leaders)  # -1: no leader now
    assert leaders == {("orders", 0): 3, ("orders", 1): -1}
    apply_record(_frame(9, 0, TID + write_uvarint(0)), topics, leaders)  # RemoveTopicRecord
    assert leaders == {}


@pytest.mark.parametrize(
    "log_dir",
    [
        "ItumelengMogase__Real-Time-Data-Pipeline-for-Patient-Admissions/kafka-data",
        "Danielowo2000__BigDataTechnologies-Version-2/kafka_data",
        "ronem123__rupia-transaction-service/kafka-logs",
    ],
)
def test_corpus_metadata_logs_name_a_leader_for_every_partition_on_disk(log_dir: str) -> None:
    d = CORPUS / log_dir
    node = read_meta_properties(str(d / "meta.properties")).node_id
    lead = read_metadata_log(str(d / "__cluster_metadata-0"))
    on_disk = {
        (n.rsplit("-", 1)[0], int(n.rsplit("-", 1)[1]))
        for n in os.listdir(d)
        if (d / n).is_dir() and n != "__cluster_metadata-0" and "-" in n and n.rsplit("-", 1)[1].isdigit()
    }
    assert on_disk and on_disk <= set(lead.leaders)
    # single-node KRaft clusters: the broker itself, or none (-1) after its controlled shutdown fenced it
    assert set(lead.leaders.values()) <= {node, -1}
    assert lead.last_offset > 0


def test_describe_output(tmp_path: Path) -> None:
    f = tmp_path / "d.txt"
    f.write_text(
        "Topic: a\tTopicId: x\tPartitionCount: 2\tReplicationFactor: 3\tConfigs: \n"
        "\tTopic: a\tPartition: 0\tLeader: 2\tReplicas: 2,1,3\tIsr: 2,1,3\n"
        "\tTopic: a\tPartition: 1\tLeader: none\tReplicas: 1\tIsr: \n"
    )
    assert read_describe(str(f)).leaders == {("a", 0): 2, ("a", 1): -1}
    (tmp_path / "e.txt").write_text("nothing\n")
    with pytest.raises(ValueError, match=re.escape("e.txt: no 'Topic: T Partition: P Leader: N' lines")):
        read_describe(str(tmp_path / "e.txt"))


def test_the_running_cluster_beats_a_metadata_log_read_from_disk() -> None:
    """`fleet audit --bootstrap-server`: "leader at risk" is a fact from the cluster's answer (asked once),
    before the leaders a host's KRaft metadata log had when it was read."""
    import json

    from kafka_ops.fleet.job import _leaders

    on_disk = (  # a collected record: (kind, host, payload)
        "leader",
        "h1",
        json.dumps({"topic": "orders", "partition": 0, "leader": 1, "source": "md", "last_offset": 9}),
    )
    cluster = {
        "bootstrap": "b1:9092",
        "partitions": [
            {"topic": "orders", "partition": 0, "leader": 2, "replicas": [1, 2], "isr": [2]},
            {"topic": "gone", "partition": 0, "leader": -1, "replicas": [3], "isr": [3]},
        ],
    }
    leaders, source = _leaders([on_disk], None, cluster)
    assert leaders == {("orders", 0): 2, ("gone", 0): -1} and source.startswith("the cluster at b1:9092")
    leaders, source = _leaders([on_disk], None, None)
    assert leaders == {("orders", 0): 1} and source.startswith("md")
