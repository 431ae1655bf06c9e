"""kafka_ops.cluster against a real broker: the facts only the running cluster knows, read back as they were set,
and an address that does not answer is one line within its timeout (issue 11's client; its checks come next)."""

from __future__ import annotations

import socket
import time

import pytest

from kafka_lab.broker import LabBroker
from kafka_lab.produce import TopicSpec, create_topics
from kafka_ops.cluster.client import ClusterUnavailable
from kafka_ops.cluster.facts import gather

pytestmark = pytest.mark.lab


# 3.5.2: DescribeCluster v0 (before KIP-919's v1), which kafka-python 3.0.x cannot read (cluster.facts)
@pytest.mark.parametrize("version", ["3.5.2", "3.9.1"])
def test_topic_configs_leaders_and_log_dirs_from_a_real_broker(version: str) -> None:
    with LabBroker(version, log_dirs=2) as b:
        b.start()
        create_topics(b.bootstrap, [TopicSpec("facts", partitions=2, configs={"retention.ms": "12345"})])
        # the broker creates a partition's log when it applies the metadata that made it leader, just after
        # clients see the leader: ask until DescribeLogDirs lists both (bounded)
        deadline = time.monotonic() + 30
        while True:
            facts = gather(b.bootstrap, timeout_s=20)
            if sum(d.partitions for d in facts.log_dirs) >= 2 or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        b.stop()
    assert facts.cluster_id == b.cluster_id and facts.controller == 1 and list(facts.brokers) == [1]
    assert facts.topic_configs["facts"]["retention.ms"] == "12345"
    assert facts.topic_configs["facts"]["cleanup.policy"] == "delete"
    assert facts.topic_overrides["facts"] == {
        "retention.ms": "12345"
    }  # the topic's own: what ZooKeeper holds
    parts = [p for p in facts.partitions if p.topic == "facts"]
    assert [(p.partition, p.leader, p.replicas, p.isr) for p in parts] == [(0, 1, [1], [1]), (1, 1, [1], [1])]
    assert sorted(d.path for d in facts.log_dirs) == sorted(str(d) for d in b.log_dirs)
    assert all(d.error is None for d in facts.log_dirs) and sum(d.partitions for d in facts.log_dirs) >= 2


def test_an_address_that_does_not_answer_is_one_line_within_its_timeout() -> None:
    with socket.socket() as s:  # a loopback port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    t0 = time.monotonic()
    with pytest.raises(ClusterUnavailable) as e:
        gather(f"127.0.0.1:{port}", timeout_s=3)
    assert time.monotonic() - t0 < 30
    assert "\n" not in str(e.value) and f"127.0.0.1:{port}" in str(e.value)
