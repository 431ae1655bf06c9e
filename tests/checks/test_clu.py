"""CLU001-CLU004: the running cluster's facts (as kafka_ops.cluster.facts gives them) judged for the audited broker.

The facts here are plain data in the shape a real cluster answered with (tests/lab/test_cluster_checks.py asks a
real three-broker cluster); the host is a simulated broker, node 1 of cluster CLUSTER.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from kafka_ops.audit import run_audit
from kafka_ops.broker.replication import catch_up_blockers, stop_risks
from kafka_ops.commands.cluster import decide
from kafka_ops.facts.collect import AuditOptions
from kafka_ops.simulator.host import HostSpec, SimulatedHost, TopicSpec, simulate_host

from ..conftest import NOW_MS

CLUSTER = "q1Sh-9_ISia_zwGINzRvyQ"


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> SimulatedHost:
    return simulate_host(
        str(tmp_path_factory.mktemp("clu") / "h"),
        HostSpec(now_ms=NOW_MS, topics=[TopicSpec("orders", partitions=2, records_per_partition=50)]),
    )


def part(topic: str, p: int, leader: int, replicas: list[int], isr: list[int]) -> dict[str, Any]:
    return {
        "topic": topic,
        "partition": p,
        "leader": leader,
        "replicas": replicas,
        "isr": isr,
        "offline_replicas": [],
    }


def facts(*partitions: dict[str, Any], min_isr: dict[str, int] | None = None, **kw: Any) -> dict[str, Any]:
    topics = {p["topic"] for p in partitions}
    out = {
        "bootstrap": "127.0.0.1:9092",
        "cluster_id": CLUSTER,
        "controller": 2,
        "brokers": {1: "127.0.0.1:9092", 2: "127.0.0.1:9093", 3: "127.0.0.1:9094"},
        "partitions": list(partitions),
        "topic_configs": {
            t: {"min.insync.replicas": str((min_isr or {}).get(t, 2)), "retention.ms": "604800000"}
            for t in topics
        },
        "log_dirs": [],
    }
    out.update(kw)
    return out


def audit(h: SimulatedHost, cluster: dict[str, Any] | None, **kw: Any) -> dict[str, Any]:
    return run_audit(
        AuditOptions(
            server_properties=h.server_properties, broker_state="stopped", now_ms=NOW_MS, kafka_version="3.9.1",
            cluster=cluster, **kw,
        )
    )  # fmt: skip


def found(report: dict[str, Any], check: str) -> list[dict[str, Any]]:
    return [f for f in report["findings"] if f["check"] == check]


HEALTHY = facts(
    part("orders", 0, 1, [1, 2, 3], [1, 2, 3]),
    part("orders", 1, 2, [2, 3, 1], [2, 3, 1]),
)


def test_a_healthy_cluster_that_can_spare_the_broker_says_nothing(host: SimulatedHost) -> None:
    report = audit(host, HEALTHY)
    assert not [f for f in report["findings"] if f["check"].startswith("CLU")]
    assert report["inputs"]["cluster"] == {"value": "127.0.0.1:9092", "source": "--bootstrap-server"}
    assert not [s for s in report["skipped"] if s.get("check", "").startswith("CLU")]


def test_min_isr_equal_to_the_replication_factor_is_critical_naming_the_partitions(
    host: SimulatedHost,
) -> None:
    f = facts(
        part("orders", 0, 1, [1, 2, 3], [1, 2, 3]),
        part("orders", 1, 2, [2, 3, 1], [2, 3, 1]),
        part("strict", 0, 3, [3, 1, 2], [3, 1, 2]),
        min_isr={"strict": 3},
    )
    (c,) = found(audit(host, f), "CLU001")
    assert c["severity"] == "critical"
    assert "strict-0 (ISR [3, 1, 2], min.insync.replicas=3: 2 left in sync)" in c["message"]
    assert [(p["topic"], p["partition"], p["kind"]) for p in c["details"]["partitions"]] == [
        ("strict", 0, "below_min_isr")
    ]


def test_the_last_replica_in_sync_going_offline_and_replication_factor_one() -> None:
    f = facts(
        part("lagging", 0, 1, [1, 2, 3], [1]),  # the others fell behind: stopping 1 leaves no leader
        part("single", 0, 1, [1], [1]),  # replication factor 1: unavailable while down, whatever
        part("notmine", 0, 2, [2, 3], [2, 3]),
    )
    kinds = {(r.topic, r.kind) for r in stop_risks(f, 1)}
    assert kinds == {("lagging", "offline"), ("single", "single_replica")}
    answer = decide(f, 1, "stop")
    assert not answer["yes"]
    assert any(r.startswith("CLU001 lagging-0") and "goes offline" in r for r in answer["reasons"])
    assert any("single-0 (replication factor 1" in n for n in answer["notes"])
    # a broker not in a partition's ISR changes nothing of it when it stops (lagging-0 for broker 3)
    assert [r.name for r in stop_risks(f, 3)] == ["notmine-0"]


def test_only_replication_factor_one_partitions_do_not_refuse_the_stop(host: SimulatedHost) -> None:
    f = facts(part("orders", 0, 1, [1], [1]), part("orders", 1, 1, [1], [1]))
    assert decide(f, 1, "stop")["yes"]
    (c,) = found(audit(host, f), "CLU001")
    assert c["severity"] == "info" and "replication factor 1" in c["message"]


def test_under_replicated_and_offline_partitions_of_the_cluster(host: SimulatedHost) -> None:
    f = facts(
        part("orders", 0, 1, [1, 2, 3], [1, 2, 3]),
        part("orders", 1, 2, [2, 3, 1], [2, 1]),
        part("gone", 0, -1, [3], [3]),
    )
    (c,) = found(audit(host, f), "CLU002")
    assert c["severity"] == "critical"  # a partition without a leader
    assert c["details"]["out_of_sync_brokers"] == [3]
    assert "orders-1 (replicas [2, 3, 1], ISR [2, 1]: [3] not in sync)" in c["message"]
    assert "gone-0 (no leader" in c["message"]
    answer = decide(f, 1, "stop")
    assert not answer["yes"] and len([r for r in answer["reasons"] if r.startswith("CLU002")]) == 2
    # only under-replicated: an error (the roll waits, the default gate of the audit does not fail on it)
    (c,) = found(audit(host, facts(part("orders", 1, 2, [2, 3, 1], [2, 1]))), "CLU002")
    assert c["severity"] == "error"


def test_caught_up_after_the_start() -> None:
    behind = facts(part("orders", 0, 1, [1, 2, 3], [1, 2]), part("orders", 1, 3, [3, 1], [1]))
    why = catch_up_blockers(behind, 3)
    assert why == [
        "orders-0: broker 3 is not in sync yet (ISR [1, 2])",
        "orders-1: broker 3 is not in sync yet (ISR [1])",
    ]
    not_listed = facts(part("orders", 0, 1, [1, 2], [1, 2]), brokers={1: "a:1", 2: "b:1"})
    assert catch_up_blockers(not_listed, 3)[0].startswith("broker 3 is not listed by the cluster")
    assert decide(HEALTHY, 3, "caught_up")["yes"]
    # JSON turns the broker ids into strings: the same answer
    assert decide(json.loads(json.dumps(HEALTHY)), 3, "caught_up")["yes"]


def test_an_offline_log_dir_the_broker_reports(host: SimulatedHost) -> None:
    f = dict(HEALTHY, log_dirs=[
        {"broker": 1, "path": "/data/kafka-1", "error": None, "partitions": 3, "size_bytes": 10},
        {"broker": 1, "path": "/data/kafka-2", "error": "KafkaStorageError", "partitions": 0, "size_bytes": 0},
        {"broker": 2, "path": "/data/kafka-2", "error": "KafkaStorageError", "partitions": 0, "size_bytes": 0},
    ])  # fmt: skip
    (c,) = found(audit(host, f), "CLU003")
    assert (c["severity"], c["path"]) == ("critical", "/data/kafka-2")
    assert c["details"] == {"broker": 1, "error": "KafkaStorageError"}


def test_another_cluster_is_said_and_its_facts_are_not_used(host: SimulatedHost) -> None:
    strict = facts(
        part("orders", 0, 1, [1, 2, 3], [1, 2, 3]), min_isr={"orders": 3}, cluster_id="OtherCluster"
    )
    report = audit(host, strict)
    (c,) = found(report, "CLU004")
    assert c["severity"] == "critical" and "OtherCluster" in c["message"] and CLUSTER in c["message"]
    assert not found(report, "CLU001")  # the other cluster's ISRs say nothing of this broker
    assert report["inputs"].get("topic_configs", {}).get("source") != "--bootstrap-server"


def test_the_topic_configs_come_from_the_cluster(host: SimulatedHost) -> None:
    # the cluster keeps orders for one hour: the broker deletes by that, whatever server.properties says
    short = dict(HEALTHY, topic_configs={"orders": {"retention.ms": "3600000", "min.insync.replicas": "2"}})
    report = audit(host, short)
    assert report["inputs"]["topic_configs"]["source"] == "--bootstrap-server"
    plain = audit(host, HEALTHY)
    assert report["next_start"]["segments"] != plain["next_start"]["segments"]


def test_no_cluster_asked_is_no_cluster_check_and_one_that_did_not_answer_is_a_skip(
    host: SimulatedHost,
) -> None:
    report = audit(host, None)
    assert not [c for c in report["checks_run"] if c.startswith("CLU")]
    assert not [
        s for s in report["skipped"] if s.get("input") == "cluster" or s.get("check", "").startswith("CLU")
    ]
    report = audit(host, None, cluster_skip="cannot reach the cluster at 10.0.0.1:9092 within 10 s")
    skips = {s.get("check") or s.get("input"): s["reason"] for s in report["skipped"]}
    assert skips["cluster"].startswith("cannot reach the cluster at 10.0.0.1:9092")
    assert {"CLU001", "CLU002", "CLU003", "CLU004"} <= set(skips)
    assert skips["CLU001"].startswith("cannot reach the cluster at 10.0.0.1:9092")


def test_the_node_id_comes_from_meta_properties_or_broker_id(host: SimulatedHost) -> None:
    f = facts(part("strict", 0, 2, [2, 3, 1], [2, 3, 1]), min_isr={"strict": 3})
    assert found(audit(host, f), "CLU001")  # node 1 (meta.properties) is in the ISR
    assert not found(audit(host, f, broker_id=4), "CLU001")  # node 4 holds no replica of it


def test_fleet_hosts_are_judged_from_one_answer(host: SimulatedHost) -> None:
    """`kafka-ops fleet audit --bootstrap-server`: the driver asks once; a remote host's report (its collector
    does not ask the cluster) gets the CLU findings from that answer, with its node id from the report's identity,
    and its gate is decided again."""
    from kafka_ops.audit import apply_gate
    from kafka_ops.fleet.inventory import local_target
    from kafka_ops.fleet.task import add_cluster_findings

    report = audit(host, None)  # what the collector on the host sends
    apply_gate(report, "critical")
    assert report["identity"] == {"node_id": 1, "cluster_id": CLUSTER}
    assert report["gate"]["passed"] and "CLU001" not in report["checks_run"]
    strict = facts(part("orders", 0, 1, [1, 2, 3], [1, 2, 3]), min_isr={"orders": 3})
    add_cluster_findings(report, local_target([]), {"cluster": strict, "fail_on": "critical"})
    (c,) = found(report, "CLU001")
    assert c["severity"] == "critical" and c["host"] == report["host"]
    assert report["findings"][0]["check"] == "CLU001"  # most severe first, as the audit sorts them
    assert report["summary"]["critical"] >= 1 and report["gate"] == dict(
        report["gate"], passed=False, exit_code=1
    )
    assert not [
        s for s in report["skipped"] if s.get("check", "").startswith("CLU") or s.get("input") == "cluster"
    ]
