"""The cluster checks (CLU001-CLU004) and `kafka-ops cluster check` against a real three-broker KRaft cluster
(3.9.1 on loopback ports): the rolling restart's two questions answered from the running cluster.

One cluster for the module (about 10 s to start on 2 cores); the tests run in order and change it: a topic whose
min.insync.replicas equals its replication factor is listed and refuses a stop only with --strict-min-isr;
lowered, the stop is allowed; a broker
stopped leaves the others' partitions under-replicated (the audit and the check say so, naming it); started
again, the check waits until it has caught up.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from kafka_lab.cluster import LabCluster
from kafka_lab.produce import TopicSpec, create_topics

pytestmark = pytest.mark.lab
VERSION = "3.9.1"


def cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kafka_ops.cli", *args], capture_output=True, text=True, timeout=timeout
    )


@pytest.fixture(scope="module")
def cluster() -> Iterator[LabCluster]:
    with LabCluster(VERSION) as c:
        c.start()
        create_topics(
            c.brokers[0].bootstrap,
            [
                TopicSpec("strict", 2, {"min.insync.replicas": 3}, replication_factor=3),
                TopicSpec(
                    "normal", 2, {"min.insync.replicas": 2, "retention.ms": 12345678}, replication_factor=3
                ),
                TopicSpec("single", 1, {}, replication_factor=1),
            ],
        )
        yield c


def check(c: LabCluster, broker: int, *more: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    args = ["cluster", "check", "--bootstrap-server", c.brokers[0].bootstrap, "--broker", str(broker), *more]
    return cli(*args, timeout=timeout)


def audit(c: LabCluster, node: int, *more: str) -> tuple[int, dict]:  # type: ignore[type-arg]
    b = c.node(node)
    r = cli(
        "audit", "--server-properties", str(b.server_properties), "--kafka-version", VERSION,
        "--broker-user", b.user, "--broker-state", "running", "--format", "json",
        "--bootstrap-server", c.brokers[0].bootstrap, *more,
    )  # fmt: skip
    assert r.returncode in (0, 1), r.stderr
    return r.returncode, json.loads(r.stdout)


def test_min_isr_equal_to_the_replication_factor_is_listed_and_refuses_only_when_asked(
    cluster: LabCluster,
) -> None:
    """Strimzi's exemption: no roll can spare a replica of `strict` (replication factor 3, min 3), so it is said
    and does not hold the roll; --strict-min-isr counts it, and a waiver of the topic leaves it out alone."""
    for node in (1, 2, 3):
        r = check(cluster, node)
        assert r.returncode == 0, (r.stdout, r.stderr)
        assert r.stdout.startswith(f"yes: broker {node} may be stopped now")
        for p in (0, 1):
            assert (
                f"note: CLU001 strict-{p} (replication factor 3 <= min.insync.replicas=3: acks=all"
                in r.stdout
            )
        r = check(cluster, node, "--strict-min-isr")
        assert r.returncode == 1, (r.stdout, r.stderr)
        assert r.stdout.startswith(f"no: stopping broker {node} now is not safe")
        assert "CLU001 strict-0 (ISR" in r.stdout and "CLU001 strict-1 (ISR" in r.stdout
        assert "min.insync.replicas=3: 2 left in sync" in r.stdout
        assert "normal-" not in r.stdout  # 3 in sync, min 2: one may go
    r = check(cluster, 2, "--strict-min-isr", "--ignore-partition", "strict:0", "-f", "json")
    answer = json.loads(r.stdout)
    assert r.returncode == 1 and [x.split(" (")[0] for x in answer["reasons"]] == ["CLU001 strict-1"]
    assert [x.split(" (")[0] for x in answer["waived"]] == ["CLU001 strict-0"]
    assert check(cluster, 2, "--strict-min-isr", "--ignore-topic", "strict").returncode == 0
    # the audit of broker 1's files says the same, as a warning naming the partitions
    code, report = audit(cluster, 1)
    assert not [f for f in report["findings"] if f["check"] == "CLU001" and f["severity"] == "critical"]
    (f,) = [f for f in report["findings"] if f["check"] == "CLU001" and f["severity"] == "warning"]
    assert code == 0 and {(p["topic"], p["partition"], p["kind"]) for p in f["details"]["partitions"]} == {
        ("strict", 0, "rf_le_min_isr"),
        ("strict", 1, "rf_le_min_isr"),
    }


def test_the_audit_takes_the_topic_configs_from_the_cluster(cluster: LabCluster) -> None:
    _, report = audit(cluster, 1)
    assert report["inputs"]["cluster"]["value"] == cluster.brokers[0].bootstrap
    assert report["inputs"]["topic_configs"]["source"] == "--bootstrap-server"
    assert not [s for s in report["skipped"] if s.get("check", "").startswith("CLU")]
    # the same cluster: meta.properties and the cluster agree
    assert not [f for f in report["findings"] if f["check"] == "CLU004"]


def test_lowered_to_two_the_stop_is_allowed(cluster: LabCluster) -> None:
    from kafka.admin import ConfigResource, ConfigResourceType, KafkaAdminClient

    admin = KafkaAdminClient(bootstrap_servers=cluster.brokers[0].bootstrap)
    try:
        admin.alter_configs(
            [ConfigResource(ConfigResourceType.TOPIC, "strict", configs={"min.insync.replicas": "2"})]
        )
    finally:
        admin.close()
    single_leader = None
    for node in (1, 2, 3):
        r = check(cluster, node, "--retries", "3", "--retry-delay", "1")
        assert r.returncode == 0, (r.stdout, r.stderr)
        assert r.stdout.startswith(f"yes: broker {node} may be stopped now")
        if "single-0 (replication factor 1" in r.stdout:
            single_leader = node  # listed as a note, never a refusal
    assert single_leader is not None
    code, report = audit(cluster, 1)
    assert code == 0 and not [f for f in report["findings"] if f["check"] in ("CLU001", "CLU002")
                             and f["severity"] in ("error", "critical")]  # fmt: skip


def test_a_stopped_broker_leaves_under_replicated_partitions_and_the_roll_waits(cluster: LabCluster) -> None:
    cluster.node(3).stop()
    deadline = time.monotonic() + 30
    while True:  # the controller takes broker 3 out of the ISRs as its controlled shutdown ends
        r = check(cluster, 1, "-f", "json")
        answer = json.loads(r.stdout)
        if any("CLU002" in x for x in answer["reasons"]) or time.monotonic() > deadline:
            break
        time.sleep(1)
    assert r.returncode == 1 and not answer["yes"]
    under = [x for x in answer["reasons"] if x.startswith("CLU002")]
    # every partition short of a replica misses broker 3; the replication-factor-1 topic, if broker 3 held it,
    # is offline (no leader)
    assert under and all("[3] not in sync" in x or "(no leader; replicas [3]" in x for x in under), under
    assert any(x.startswith("CLU002 strict-0") for x in under)
    # with broker 3 gone, broker 1's stop leaves one replica of each partition: below min.insync.replicas=2
    assert any(x.startswith("CLU001 normal-0") for x in answer["reasons"])
    code, report = audit(cluster, 1)
    (f,) = [f for f in report["findings"] if f["check"] == "CLU002"]
    assert f["details"]["out_of_sync_brokers"] == [3]
    # error; critical when a partition has no leader (single-0 when broker 3 was its only replica)
    assert f["severity"] == ("critical" if f["details"]["offline"] else "error")
    assert code == 1  # CLU001 critical: stopping broker 1 now makes partitions unavailable
    # has broker 3 caught up? no: it is not even listed
    r = check(cluster, 3, "--after-start")
    assert r.returncode == 1 and "broker 3 is not listed by the cluster" in r.stdout


def test_started_again_the_check_waits_until_it_has_caught_up(cluster: LabCluster) -> None:
    cluster.start([3])
    r = check(cluster, 3, "--after-start", "--retries", "6", "--retry-delay", "1", timeout=200)
    assert r.returncode == 0, (r.stdout, r.stderr)
    assert r.stdout.startswith("yes: broker 3 has caught up")
    assert check(cluster, 1).returncode == 0


def test_an_unreachable_cluster_is_one_line_and_never_a_silent_pass(cluster: LabCluster) -> None:
    with socket.socket() as s:  # a loopback port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    t0 = time.monotonic()
    r = cli(
        "cluster",
        "check",
        "--bootstrap-server",
        f"127.0.0.1:{port}",
        "--broker",
        "1",
        "--cluster-timeout",
        "2",
    )
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.count("\n") == 1 and f"127.0.0.1:{port}" in r.stderr and "Traceback" not in r.stderr
    assert time.monotonic() - t0 < 60
    # the audit skips the cluster checks and says why; with --require-cluster it refuses
    b = cluster.node(1)
    base = ["audit", "--server-properties", str(b.server_properties), "--broker-user", b.user,
            "--broker-state", "running", "--bootstrap-server", f"127.0.0.1:{port}", "--cluster-timeout", "2"]  # fmt: skip
    r = cli(*base, "--format", "json")
    report = json.loads(r.stdout)
    assert r.returncode == 0, r.stderr
    (skip,) = [s for s in report["skipped"] if s.get("input") == "cluster"]
    assert f"127.0.0.1:{port}" in skip["reason"]
    assert {s["check"] for s in report["skipped"] if "check" in s} >= {"CLU001", "CLU002", "CLU003", "CLU004"}
    assert "the cluster checks (CLU001-CLU004) were not run" in r.stderr
    r = cli(*base, "--require-cluster")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and f"127.0.0.1:{port}" in r.stderr


def _quorum_leader_on_disk(c: LabCluster, node: int) -> int:
    """The leaderId in the node's own quorum-state (its metadata log dir: the first of log.dirs here)."""
    first = str(c.node(node).properties()["log.dirs"]).split(",")[0]
    return int(json.loads((Path(first) / "__cluster_metadata-0" / "quorum-state").read_text())["leaderId"])


def test_status_names_the_quorum_leader_and_follows_it_when_it_moves(cluster: LabCluster) -> None:
    """`cluster status` names the active controller as the metadata quorum's leader (what each node's
    quorum-state says), not the random live broker KRaft puts in DescribeCluster's controller field; stopped,
    the controller's place goes to another node, and status says so (what the roll re-asks before each broker)."""
    r = cli("cluster", "status", "--bootstrap-server", cluster.bootstrap, "-f", "json")
    assert r.returncode == 0, r.stderr
    st = json.loads(r.stdout)
    assert st["brokers"] == [1, 2, 3] and st["controller_from"] == "metadata quorum"
    leader = st["controller"]
    assert leader == _quorum_leader_on_disk(cluster, 1) == _quorum_leader_on_disk(cluster, 2)
    for _ in range(5):  # DescribeCluster names a random live broker; the quorum leader stays put
        again = json.loads(
            cli("cluster", "status", "--bootstrap-server", cluster.bootstrap, "-f", "json").stdout
        )
        assert again["controller"] == leader
    cluster.node(leader).stop()
    try:
        other = next(n for n in (1, 2, 3) if n != leader)
        asked = cluster.node(other).bootstrap
        deadline = time.monotonic() + 60
        while True:
            r = cli("cluster", "status", "--bootstrap-server", asked, "-f", "json")
            if r.returncode != 0:
                # while the quorum elects its next leader the node asked may not answer in time: exit 2 with one
                # line, never a traceback; the roll asks again (--retries), and so does this loop
                assert r.returncode == 2 and "Traceback" not in r.stderr and not r.stdout, r.stderr
                assert time.monotonic() < deadline, r.stderr
                time.sleep(1)
                continue
            st = json.loads(r.stdout)
            moved = st["controller"] not in (None, leader)
            # the stopped node leaves the brokers' list when its session expires (broker.session.timeout.ms)
            if (moved and leader not in st["brokers"]) or time.monotonic() > deadline:
                break
            time.sleep(1)
        assert st["controller"] in set((1, 2, 3)) - {leader}
        assert leader not in st["brokers"]
        text = cli("cluster", "status", "--bootstrap-server", asked).stdout
        assert f"active controller {st['controller']} (from the metadata quorum)" in text
    finally:
        cluster.start([leader])


# -- issue 22: the KRaft quorum gate (Strimzi's KafkaQuorumCheck rule, kafka_ops.broker.quorum) ----------------


def quorum_check(c: LabCluster, node: int, *more: str, timeout: float = 120) -> tuple[int, dict]:  # type: ignore[type-arg]
    r = cli("cluster", "check", "--bootstrap-server", c.bootstrap, "--broker", str(node), "-f", "json", *more,
            timeout=timeout)  # fmt: skip
    assert r.returncode in (0, 1), (r.stdout, r.stderr)
    return r.returncode, json.loads(r.stdout)


def test_quorum_a_combined_node_gets_both_gates() -> None:
    """Combined nodes (process.roles=broker,controller): with one of them stopped, asking about another gives
    both the partitions' refusal (CLU001/CLU002) and the quorum's (QUORUM, naming the stopped voter)."""
    with LabCluster(VERSION) as c:
        c.start()
        create_topics(
            c.node(1).bootstrap, [TopicSpec("both", 1, {"min.insync.replicas": 2}, replication_factor=3)]
        )
        code, a = quorum_check(c, 1, "--retries", "5", "--retry-delay", "1")
        assert code == 0, a
        assert a["process_roles"] == ["broker", "controller"] and a["quorum_gate"]["yes"]
        leader = a["quorum_leader"]
        down, asked = [n for n in (1, 2, 3) if n != leader][:2]
        c.node(down).stop()
        deadline = time.monotonic() + 60
        while True:  # the ISR shrinks within replica.lag.time.max.ms; the voter lags past the fetch timeout
            code, a = quorum_check(c, asked)
            kinds = {x.split()[0] for x in a["reasons"]}
            if {"QUORUM", "CLU002"} <= kinds or time.monotonic() > deadline:
                break
            time.sleep(1)
        assert code == 1 and a["summary"].startswith(f"no: stopping broker {asked} now is not safe"), a
        assert {"QUORUM", "CLU002"} <= kinds, a["reasons"]
        (said,) = [x for x in a["reasons"] if x.startswith("QUORUM")]
        assert f"Lagging: {down} (lagging: last caught up" in said
        assert a["quorum_gate"]["lagging"] == [down] and a["quorum_gate"]["caught_up_without"] == [leader]


@pytest.fixture(scope="module")
def dedicated() -> Iterator[LabCluster]:
    """3 dedicated controllers (nodes 1-3, the voters) and 3 dedicated brokers (nodes 4-6)."""
    with LabCluster(VERSION, controllers=3) as c:
        c.start()
        # the brokers' ready lines come before every broker has their registrations in its metadata (kafka-python
        # then sends CreateTopics to a node id it cannot resolve yet): wait until the cluster lists all three
        deadline = time.monotonic() + 60
        while True:
            r = cli("cluster", "status", "--bootstrap-server", c.bootstrap, "-f", "json")
            if r.returncode == 0 and json.loads(r.stdout)["brokers"] == [4, 5, 6]:
                break
            assert time.monotonic() < deadline, (r.stdout, r.stderr)
            time.sleep(1)
        create_topics(
            c.node(4).bootstrap, [TopicSpec("kept", 2, {"min.insync.replicas": 2}, replication_factor=3)]
        )
        yield c


def test_quorum_gate_says_yes_for_every_voter_when_all_are_caught_up(dedicated: LabCluster) -> None:
    r = cli("cluster", "status", "--bootstrap-server", dedicated.bootstrap, "-f", "json")
    st = json.loads(r.stdout)
    assert st["brokers"] == [4, 5, 6] and st["voters"] == [1, 2, 3] and st["controller"] in (1, 2, 3)
    for node in (1, 2, 3):
        code, a = quorum_check(dedicated, node, "--retries", "5", "--retry-delay", "1")
        assert code == 0 and a["summary"] == f"yes: controller {node} may be stopped now", a
        assert a["process_roles"] == ["controller"]  # inferred: a voter, and no listed broker is one
        gate = a["quorum_gate"]
        assert gate["yes"] and gate["lagging"] == [] and gate["needed"] == 2
        assert [v["id"] for v in gate["voters"]] == [1, 2, 3]
        assert all(v["caught_up"] for v in gate["voters"])
        assert not any("not listed" in n for n in a["notes"])
    for node in (4, 5, 6):  # brokers: the partitions' gate alone, as before
        code, a = quorum_check(dedicated, node)
        assert code == 0 and a["quorum_gate"] is None and a["process_roles"] == ["broker"], a


def test_quorum_the_leader_is_named_to_roll_last(dedicated: LabCluster) -> None:
    st = json.loads(cli("cluster", "status", "--bootstrap-server", dedicated.bootstrap, "-f", "json").stdout)
    leader = st["controller"]
    assert st["quorum_leader"] == leader
    _, a = quorum_check(dedicated, leader, "--process-roles", "controller")
    assert a["quorum_leader"] == leader
    assert (
        f"QUORUM node {leader} is the quorum leader (the active controller): roll it after the other voters"
        in (a["notes"])
    )
    for node in {1, 2, 3} - {leader}:
        _, a = quorum_check(dedicated, node, "--process-roles", "controller")
        assert not any("roll it after" in n for n in a["notes"])


def test_quorum_gate_refuses_a_voter_while_another_is_down(dedicated: LabCluster) -> None:
    """One controller stopped: asking about another (follower or leader) is refused, the stopped one named as
    lagging (1 of 3 voters left caught up without the one asked); the stopped one itself may stay down. Started
    again, --after-start says it has caught up (a voter the leader hears from), and the gate opens again."""
    code, a = quorum_check(dedicated, 1, "--retries", "5", "--retry-delay", "1")
    leader = a["quorum_leader"]
    down, follower = sorted({1, 2, 3} - {leader})
    dedicated.node(down).stop()
    try:
        deadline = time.monotonic() + 30
        while True:
            code, a = quorum_check(dedicated, follower, "--process-roles", "controller")
            if code == 1 or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        assert (
            code == 1 and a["summary"] == f"no: stopping controller {follower} now is not safe (1 reason(s))"
        ), a
        (said,) = a["reasons"]
        assert said.startswith(
            f"QUORUM stopping voter {follower} leaves 1 of the other 2 voter(s) caught up with the quorum leader "
            f"{leader} within controller.quorum.fetch.timeout.ms=2000; 2 needed for a majority of 3. Lagging: {down}"
        ), said
        assert a["quorum_gate"]["lagging"] == [down]
        code, a = quorum_check(dedicated, leader, "--process-roles", "controller")
        assert code == 1 and a["quorum_gate"]["lagging"] == [down], a
        code, a = quorum_check(dedicated, down, "--process-roles", "controller")
        assert code == 0, a  # the two others are caught up: its being down costs the quorum nothing more
        code, a = quorum_check(dedicated, down, "--process-roles", "controller", "--after-start")
        assert code == 1 and a["summary"] == f"no: controller {down} has not caught up (2 reason(s))", a
        assert (
            f"QUORUM voter {down} has not fetched from the quorum leader {leader} lately" in a["reasons"][0]
        )
        # a broker's stop is judged by its partitions alone, whatever the quorum does
        code, a = quorum_check(dedicated, 4)
        assert code == 0 and a["quorum_gate"] is None, a
    finally:
        dedicated.start([down])
    code, a = quorum_check(
        dedicated, down, "--process-roles", "controller", "--after-start", "--retries", "6", "--retry-delay", "1",
        timeout=200,
    )  # fmt: skip
    assert code == 0 and a["summary"].startswith(f"yes: controller {down} has caught up"), a
    code, a = quorum_check(
        dedicated, follower, "--process-roles", "controller", "--retries", "5", "--retry-delay", "1"
    )
    assert code == 0, a


def test_quorum_a_controller_only_start_is_seen_in_its_log(dedicated: LabCluster) -> None:
    """What the roll waits on after a controller-only node's start (the collector's `logs` mode): 3.9.1 logs
    "[KafkaRaftServer nodeId=N] Kafka Server started" once its ControllerServer is up, but no "Loaded N logs"
    (no LogManager): server_starts counts the starts, while `started` (the brokers' load + started) stays false."""
    from kafka_ops.facts.brokerlogs import Digest, stream

    node = dedicated.node(2)

    def state() -> dict:  # type: ignore[type-arg]
        g = Digest()
        g.feed_all(stream([str(node.log_file)], keep_text=True))
        return g.start_state()

    before = state()
    assert before["server_starts"] >= 1
    node.stop()
    # a clean stop of a controller-only node leaves no .kafka_cleanshutdown (LogManager writes it; a controller
    # has none): the roll judges its stop by systemd's Result instead (restart.yml)
    assert node.exit_code in (0, 143), node.exit_code
    assert not any((d / ".kafka_cleanshutdown").exists() for d in node.log_dirs)
    node.start()
    after = state()
    assert after["server_starts"] == before["server_starts"] + 1
    assert after["server_started_at"] != before["server_started_at"]
    assert "Kafka Server started" in node.run_log()


def test_a_node_of_another_cluster_id_hangs_as_planned(cluster: LabCluster) -> None:
    """Node 3's meta.properties rewritten with another cluster.id while it is stopped: with the cluster's own
    --bootstrap-server the plan says its start hangs (CLU004: its peers answer INCONSISTENT_CLUSTER_ID); started,
    it neither becomes ready nor exits. Then its files are put back and it rejoins."""
    import re

    from kafka_lab.jars import LabError

    b = cluster.node(3)
    b.stop()
    metas = {d / "meta.properties": (d / "meta.properties").read_text() for d in b.log_dirs}
    try:
        for path, text in metas.items():
            path.write_text(re.sub(r"cluster.id=.*", "cluster.id=AAAAAAAAAAAAAAAAAAAAAA", text))
        r = cli(
            "audit", "--server-properties", str(b.server_properties), "--kafka-version", VERSION,
            "--broker-user", b.user, "--broker-state", "stopped", "--format", "json",
            "--bootstrap-server", cluster.brokers[0].bootstrap,
        )  # fmt: skip
        ns = json.loads(r.stdout)["next_start"]
        assert (ns["broker"], ns["check"]) == ("hangs", "CLU004"), ns
        with pytest.raises(LabError, match=r"not ready within 45 s.*INCONSISTENT_CLUSTER_ID"):
            b.start(45)
    finally:
        b.kill()
        for path, text in metas.items():
            path.write_text(text)
    b.start()
