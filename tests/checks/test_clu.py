"""CLU001-CLU004: the running cluster's facts (as kafka_ops.cluster.facts gives them) judged for the audited broker.

The facts here are plain data in the shape a real cluster answered with (tests/lab/test_cluster_checks.py asks a
real three-broker cluster); the host is a simulated broker, node 1 of cluster CLUSTER.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from kafka_ops.audit import run_audit
from kafka_ops.broker.replication import Waiver, catch_up_blockers, stop_risks, unhealthy
from kafka_ops.cli.cluster import decide
from kafka_ops.facts.model import AuditOptions
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


def test_min_isr_equal_to_the_replication_factor_does_not_refuse_the_roll_and_is_said(
    host: SimulatedHost,
) -> None:
    """Strimzi's exemption (KafkaAvailability.wouldAffectAvailability): no roll can ever spare a replica of a
    partition whose replication factor is <= min.insync.replicas, so it is listed, not counted."""
    f = facts(
        part("orders", 0, 1, [1, 2, 3], [1, 2, 3]),
        part("orders", 1, 2, [2, 3, 1], [2, 3, 1]),
        part("strict", 0, 3, [3, 1, 2], [3, 1, 2]),
        min_isr={"strict": 3},
    )
    (c,) = found(audit(host, f), "CLU001")
    assert c["severity"] == "warning"
    assert "strict-0 (replication factor 3 <= min.insync.replicas=3: acks=all writes fail" in c["message"]
    assert [(p["topic"], p["partition"], p["kind"]) for p in c["details"]["partitions"]] == [
        ("strict", 0, "rf_le_min_isr")
    ]
    answer = decide(f, 1, "stop")
    assert answer["yes"] and answer["reasons"] == [] and answer["exempt"] == ["strict-0"]
    assert any(
        n.startswith("CLU001 strict-0 (replication factor 3 <= min.insync.replicas=3")
        for n in answer["notes"]
    )
    # --strict-min-isr: counted as any other partition (the gate before the exemption)
    strict = decide(f, 1, "stop", strict_min_isr=True)
    assert not strict["yes"] and strict["exempt"] == []
    assert strict["reasons"] == ["CLU001 strict-0 (ISR [3, 1, 2], min.insync.replicas=3: 2 left in sync)"]
    # min.insync.replicas above the replication factor: exempt too
    assert decide(facts(part("strict", 0, 3, [3, 1], [3, 1]), min_isr={"strict": 3}), 1, "stop")["yes"]


def test_an_exempt_partition_whose_last_replica_in_sync_is_the_broker_still_refuses() -> None:
    # replicas [1, 2, 3] with min 3 and only broker 1 in sync: stopping it takes the partition offline
    f = facts(part("strict", 0, 1, [1, 2, 3], [1]), min_isr={"strict": 3})
    assert [r.kind for r in stop_risks(f, 1)] == ["offline"]
    answer = decide(f, 1, "stop")
    assert not answer["yes"] and answer["reasons"][0].startswith("CLU001 strict-0 (ISR [1]: no replica left")


def test_a_partition_of_the_broker_at_min_isr_refuses_its_stop() -> None:
    # replicas [1, 2, 3], min 2, broker 3 behind: broker 1's stop leaves one in sync; broker 3's changes nothing
    # of the ISR, but the partition is under-replicated with a replica on it (Strimzi: "it might be first to
    # catch up"), so both wait; broker 4 holds no replica of it and may stop
    f = facts(part("orders", 0, 1, [1, 2, 3], [1, 2]), part("other", 0, 4, [4, 2], [4, 2]))
    answer = decide(f, 1, "stop")
    assert not answer["yes"]
    assert answer["reasons"] == [
        "CLU001 orders-0 (ISR [1, 2], min.insync.replicas=2: 1 left in sync)",
        "CLU002 orders-0 (replicas [1, 2, 3], ISR [1, 2]: [3] not in sync)",
    ]
    assert decide(f, 3, "stop")["reasons"] == [
        "CLU002 orders-0 (replicas [1, 2, 3], ISR [1, 2]: [3] not in sync)"
    ]
    four = decide(f, 4, "stop")
    assert four["yes"] and [u["partition"] for u in four["unhealthy_elsewhere"]] == [0]


def test_unhealthy_partitions_elsewhere_are_reported_and_refuse_only_when_asked() -> None:
    f = facts(
        part("orders", 0, 1, [1, 2, 3], [1, 2, 3]),
        part("gone", 0, -1, [3], [3]),  # a stale offline partition on broker 3
        part("lag", 0, 2, [2, 3], [2]),  # broker 3 behind on a partition broker 1 does not hold
    )
    answer = decide(f, 1, "stop")
    assert answer["yes"] and answer["reasons"] == []
    assert [(u["topic"], u["kind"]) for u in answer["unhealthy_elsewhere"]] == [
        ("gone", "offline"),
        ("lag", "under_replicated"),
    ]
    (note,) = [n for n in answer["notes"] if n.startswith("CLU002")]
    assert "2 under-replicated or offline partition(s) with no replica on broker 1" in note
    assert "gone-0 (no leader; replicas [3], ISR [3])" in note and "--strict-cluster" in note
    strict = decide(f, 1, "stop", strict_cluster=True)
    assert not strict["yes"] and [r.split(" (")[0] for r in strict["reasons"]] == [
        "CLU002 gone-0",
        "CLU002 lag-0",
    ]
    # broker 3 holds both: they refuse its stop whatever the option
    three = decide(f, 3, "stop")
    assert not three["yes"] and len(three["reasons"]) == 2 and three["unhealthy_elsewhere"] == []
    # the audit's CLU002 still says what the whole cluster has (a finding of the cluster, not of the gate)
    assert unhealthy(f) and len(unhealthy(f)) == 2


def test_a_waiver_leaves_out_exactly_the_partitions_it_names() -> None:
    f = facts(
        part("stale", 0, -1, [1, 3], [3]),  # offline for weeks: its replicas' data is gone
        part("stale", 1, -1, [1, 2], [2]),
        part("orders", 0, 1, [1, 2, 3], [1, 2]),  # broker 3 behind: a real reason
        part("orders", 1, 2, [2, 3, 1], [2, 3, 1]),
    )
    plain = decide(f, 1, "stop")
    assert [r.split(" (")[0] for r in plain["reasons"]] == [
        "CLU001 orders-0", "CLU002 stale-0", "CLU002 stale-1", "CLU002 orders-0",
    ]  # fmt: skip
    one = decide(f, 1, "stop", waiver=Waiver(partitions=frozenset({("stale", 0)})))
    assert [r.split(" (")[0] for r in one["reasons"]] == [
        "CLU001 orders-0",
        "CLU002 stale-1",
        "CLU002 orders-0",
    ]
    assert one["waived"] == ["CLU002 stale-0 (no leader; replicas [1, 3], ISR [3])"]
    topic = decide(f, 1, "stop", waiver=Waiver(topics=frozenset({"stale"})))
    assert [r.split(" (")[0] for r in topic["reasons"]] == ["CLU001 orders-0", "CLU002 orders-0"]
    assert not topic["yes"] and len(topic["waived"]) == 2  # orders-0 still refuses: the waiver is scoped
    # broker 3 caught up, the stale topic waived: yes
    healed = dict(
        f, partitions=[p if p["topic"] == "stale" else dict(p, isr=p["replicas"]) for p in f["partitions"]]
    )
    assert decide(healed, 1, "stop", waiver=Waiver(topics=frozenset({"stale"})))["yes"]
    assert not decide(healed, 1, "stop")["yes"]
    # the same waiver after the start; a broker not listed still refuses
    assert not decide(healed, 1, "caught_up")["yes"]
    after = decide(healed, 1, "caught_up", waiver=Waiver(topics=frozenset({"stale"})))
    assert after["yes"] and after["waived"] == [
        "stale-0: broker 1 is not in sync yet (ISR [3])",
        "stale-1: broker 1 is not in sync yet (ISR [2])",
    ]
    gone = dict(healed, brokers={2: "b:1", 3: "c:1"})
    assert not decide(gone, 1, "caught_up", waiver=Waiver(topics=frozenset({"stale"})))["yes"]
    # a waiver that names nothing the cluster has is said, not silently kept
    typo = decide(healed, 1, "stop", waiver=Waiver(topics=frozenset({"stael", "stale"})))
    assert (
        "the waiver of topic stael matches no partition of the cluster (it waives nothing)" in typo["notes"]
    )


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
    answer = decide(f, 1, "stop")  # orders-1 has a replica on broker 1; gone-0 does not
    assert not answer["yes"] and [r.split(" (")[0] for r in answer["reasons"] if r.startswith("CLU002")] == [
        "CLU002 orders-1"
    ]
    assert [u["topic"] for u in answer["unhealthy_elsewhere"]] == ["gone"]
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
    # broker 3 behind: stopping broker 1 leaves orders-0 one replica in sync, below min.insync.replicas=2
    short = facts(part("orders", 0, 1, [1, 2, 3], [1, 2]))
    add_cluster_findings(report, local_target([]), {"cluster": short, "fail_on": "critical"})
    (c,) = found(report, "CLU001")
    assert c["severity"] == "critical" and c["host"] == report["host"]
    assert report["findings"][0]["check"] == "CLU001"  # most severe first, as the audit sorts them
    assert report["summary"]["critical"] >= 1 and report["gate"] == dict(
        report["gate"], passed=False, exit_code=1
    )
    assert not [
        s for s in report["skipped"] if s.get("check", "").startswith("CLU") or s.get("input") == "cluster"
    ]


def run_check(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, answer: dict[str, Any], *args: str
) -> tuple[int, str, str]:
    """`kafka-ops cluster check` in this process, as the entry point runs it, with the cluster's answer given
    (tests/lab/test_cluster_checks.py asks a real cluster): (exit code, stdout, stderr)."""
    from kafka_ops.cli import cluster as cluster_cmd
    from kafka_ops.cli.framework import load_all

    monkeypatch.setattr(cluster_cmd, "ask_cluster", lambda *_a, **_k: json.loads(json.dumps(answer)))
    code = load_all()(
        args=["cluster", "check", "--bootstrap-server", "127.0.0.1:9092", *args], standalone_mode=False
    )
    out, err = capsys.readouterr()
    return int(code), out, err


STALE = facts(
    part("orders", 0, 1, [1, 2, 3], [1, 2, 3]),
    part("gone", 0, -1, [3], [3]),  # not on broker 1
    part("stale", 2, -1, [1, 2], [2]),  # on broker 1, offline for good
)


def test_cli_exit_codes_strict_cluster_and_the_waiver(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    code, out, _ = run_check(capsys, monkeypatch, STALE, "--broker", "1")
    assert code == 1 and out.startswith("no: stopping broker 1 now is not safe (1 reason(s))")
    assert "  - CLU002 stale-2 (no leader" in out and "  note: CLU002 1 under-replicated or offline" in out
    code, out, _ = run_check(capsys, monkeypatch, STALE, "--broker", "1", "--ignore-partition", "stale:2")
    assert code == 0 and out.startswith("yes: broker 1 may be stopped now")
    assert "  waived: CLU002 stale-2 (no leader; replicas [1, 2], ISR [2])" in out
    code, out, _ = run_check(
        capsys,
        monkeypatch,
        STALE,
        "--broker",
        "1",
        "--ignore-topic",
        "stale",
        "--strict-cluster",
        "-f",
        "json",
    )
    answer = json.loads(out)
    assert code == 1 and answer["reasons"] == ["CLU002 gone-0 (no leader; replicas [3], ISR [3])"]
    assert answer["strict_cluster"] and answer["waived"] and answer["unhealthy_elsewhere"] == []
    code, out, _ = run_check(
        capsys, monkeypatch, STALE, "--broker", "1", "--ignore-topic", "stale", "-f", "json"
    )
    answer = json.loads(out)
    assert code == 0 and answer["yes"] and [u["topic"] for u in answer["unhealthy_elsewhere"]] == ["gone"]
    # RF 3 with min 3: yes by default, no with --strict-min-isr
    f = facts(part("strict", 0, 1, [1, 2, 3], [1, 2, 3]), min_isr={"strict": 3})
    assert run_check(capsys, monkeypatch, f, "--broker", "2")[0] == 0
    assert run_check(capsys, monkeypatch, f, "--broker", "2", "--strict-min-isr")[0] == 1


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--ignore-partition", "stale"], "--ignore-partition 'stale' is not TOPIC:PARTITION"),
        (["--ignore-partition", "stale:x"], "--ignore-partition 'stale:x' is not TOPIC:PARTITION"),
        (["--ignore-partition", "bad topic:1"], "--ignore-partition 'bad topic:1' is not TOPIC:PARTITION"),
        (["--ignore-topic", "a/b"], "--ignore-topic 'a/b' is not a Kafka topic name"),
    ],
)
def test_a_bad_waiver_is_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, args: list[str], says: str
) -> None:
    code, out, err = run_check(capsys, monkeypatch, STALE, "--broker", "1", *args)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith(f"kafka-ops cluster check: {says}"), err


def test_a_kraft_broker_of_another_cluster_id_hangs_and_unasked_it_is_unknown(tmp_path: Any) -> None:
    """A KRaft broker whose meta.properties name another cluster than its quorum's: its controllers answer every
    raft request INCONSISTENT_CLUSTER_ID and it never loads its logs (lab 3.9.1: not ready after 60 s, retrying
    every ~20 ms). With --bootstrap-server answering another id the plan says it hangs (CLU004); without it, that
    comparison is unknown, never "starts" on trust."""
    h = simulate_host(
        str(tmp_path / "h"),
        HostSpec(now_ms=NOW_MS, topics=[TopicSpec("orders", partitions=2, records_per_partition=50)]),
    )
    with open(h.server_properties) as f:
        text = f.read().replace("process.roles=broker,controller\n", "process.roles=broker\n")
    with open(h.server_properties, "w") as f:
        f.write(text + "controller.quorum.voters=9@ctl:9093\ncontroller.listener.names=CONTROLLER\n")
    ns = audit(h, facts(part("orders", 0, 1, [1], [1]), cluster_id="OtherCluster"))["next_start"]
    assert ns["broker"] == "hangs" and ns["check"] == "CLU004", ns
    assert "INCONSISTENT_CLUSTER_ID" in ns["reason"] and "OtherCluster" in ns["reason"]
    assert {s["load"] for s in ns["segments"] if "__cluster_metadata" not in s["log"]} <= {"not_loaded"}
    same = audit(h, facts(part("orders", 0, 1, [1], [1]), cluster_id=meta_cluster_id(h)))["next_start"]
    assert same["broker"] == "starts" and not [u for u in same["unknown"] if "quorum has" in u["what"]]
    unasked = audit(h, None)["next_start"]
    assert unasked["broker"] == "starts"
    [u] = [u for u in unasked["unknown"] if "quorum has" in u["what"]]
    assert "hangs" in u["what"] and "--bootstrap-server" in u["reason"]


def meta_cluster_id(h: SimulatedHost) -> str:
    with open(f"{h.log_dirs[0]}/meta.properties") as f:
        return next(x.split("=", 1)[1].strip() for x in f if x.startswith("cluster.id="))
