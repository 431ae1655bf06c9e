"""The controllers' roll gate (kafka_ops.broker.quorum): Strimzi KafkaQuorumCheck's rule over DescribeQuorum facts
in the shape kafka_ops.cluster.facts keeps them (tests/lab/test_cluster_checks.py asks real 3.9.1 controllers), and
`cluster check`'s answer for controllers, brokers and combined nodes (kafka_ops.cli.cluster.decide)."""

from __future__ import annotations

from typing import Any

import pytest

from kafka_ops.broker.quorum import catch_up_blockers, may_stop, voters
from kafka_ops.cli.cluster import decide

NOW = 1_795_764_389_697  # the leader's clock (ms): it reports its own last caught-up time as now


def voter(vid: int, behind_ms: int | None, fetch_ago_ms: int | None = None, leo: int = 45) -> dict[str, int]:
    lcu = -1 if behind_ms is None else NOW - behind_ms
    fetched = lcu if fetch_ago_ms is None else NOW - fetch_ago_ms
    return {
        "id": vid,
        "log_end_offset": leo,
        "last_fetch_timestamp": fetched,
        "last_caught_up_timestamp": lcu,
    }


def facts(leader: int, *vs: dict[str, int], brokers: tuple[int, ...] = (4, 5, 6)) -> dict[str, Any]:
    out = [dict(v) for v in vs]
    for v in out:
        if v["id"] == leader:  # as the leader reports itself
            v["last_fetch_timestamp"], v["last_caught_up_timestamp"] = -1, NOW
    return {
        "bootstrap": "127.0.0.1:9092", "cluster_id": "c", "controller": 4,
        "brokers": {b: f"127.0.0.1:{9000 + b}" for b in brokers}, "partitions": [], "topic_configs": {},
        "log_dirs": [], "quorum_leader": leader,
        "quorum": {"leader_id": leader, "leader_epoch": 3, "high_watermark": 45, "voters": out, "observers": []},
    }  # fmt: skip


HEALTHY = facts(1, voter(1, 0), voter(2, 5), voter(3, 12))


def test_every_voter_may_stop_when_all_are_caught_up() -> None:
    for n in (1, 2, 3):
        a = may_stop(HEALTHY, n)
        assert a.yes and a.reason is None and a.lagging == [] and a.needed == 2
    assert may_stop(HEALTHY, 1).notes == [
        "node 1 is the quorum leader (the active controller): roll it after the other voters"
    ]


def test_a_voter_further_behind_than_the_fetch_timeout_refuses_the_others_stop() -> None:
    f = facts(1, voter(1, 0), voter(2, 1999), voter(3, 2000))  # Strimzi: caught up when behind < timeout
    assert [v.caught_up for v in voters(f)] == [True, True, False]
    a = may_stop(f, 2)
    assert not a.yes and a.lagging == [3] and a.caught_up_without == [1]
    assert a.reason == (
        "stopping voter 2 leaves 1 of the other 2 voter(s) caught up with the quorum leader 1 within "
        "controller.quorum.fetch.timeout.ms=2000; 2 needed for a majority of 3. Lagging: 3 (lagging: last caught "
        "up 2.0 s before the leader's clock)"
    )
    assert not may_stop(f, 1).yes  # the leader too: without it only 2 counts
    assert may_stop(f, 3).yes  # the lagging one itself: the two others keep the majority
    assert may_stop(f, 2, fetch_timeout_ms=5000).yes  # a longer controller.quorum.fetch.timeout.ms


def test_an_unknown_caught_up_time_never_counts() -> None:
    f = facts(1, voter(1, 0), voter(2, None), voter(3, 0))
    a = may_stop(f, 3)
    assert not a.yes and "Lagging: 2 (never caught up with the leader as far as it knows)" in (a.reason or "")


def test_five_voters_need_three_caught_up_without_the_one_asked() -> None:
    f = facts(1, voter(1, 0), voter(2, 0), voter(3, 0), voter(4, 60_000), voter(5, 60_000))
    assert may_stop(f, 2).yes is False  # 1 and 3 left: 2 < 3
    assert may_stop(f, 4).yes  # 1, 2, 3 left
    assert may_stop(f, 4).needed == 3


def test_no_leader_or_no_quorum_refuses() -> None:
    f = facts(1, voter(1, 0), voter(2, 0), voter(3, 0))
    f["quorum"]["leader_id"] = -1
    assert may_stop(f, 2).reason == "the metadata quorum has no leader now (an election is under way)"
    f["quorum"] = None
    assert not may_stop(f, 2).yes


def test_one_or_two_voters_roll_as_strimzi_does_with_a_note() -> None:
    one = facts(1, voter(1, 0))
    assert may_stop(one, 1).yes and "one voter" in may_stop(one, 1).notes[-1]
    two = facts(1, voter(1, 0), voter(2, 0))
    assert may_stop(two, 2).yes and "two voters" in may_stop(two, 2).notes[-1]
    two_lagging = facts(1, voter(1, 0), voter(2, 10_000))
    assert not may_stop(two_lagging, 1).yes  # the other one is behind: no


def test_a_node_that_is_no_voter_never_touches_the_quorum() -> None:
    a = may_stop(HEALTHY, 4)
    assert a.yes and a.notes == ["node 4 is not a voter of the metadata quorum (voters [1, 2, 3])"]


def test_after_its_start_a_voter_must_fetch_and_be_close_behind() -> None:
    assert catch_up_blockers(HEALTHY, 2) == []
    assert catch_up_blockers(HEALTHY, 1) == []  # the leader
    stale = facts(1, voter(1, 0), voter(2, 30_000), voter(3, 0))
    got = catch_up_blockers(stale, 2)
    assert got[0] == "voter 2 has not fetched from the quorum leader 1 lately (last fetch: 30.0 s ago)"
    assert got[1].startswith("voter 2 (lagging: last caught up 30.0 s before")
    fetching_behind = facts(1, voter(1, 0), voter(2, 9000, fetch_ago_ms=100), voter(3, 0))
    assert len(catch_up_blockers(fetching_behind, 2)) == 1
    assert catch_up_blockers(HEALTHY, 7) == [
        "node 7 is not a voter of the metadata quorum (voters [1, 2, 3])"
    ]


@pytest.mark.parametrize("roles", [None, ["controller"]])
def test_decide_judges_a_dedicated_controller_by_the_quorum_alone(roles: list[str] | None) -> None:
    f = facts(1, voter(1, 0), voter(2, 0), voter(3, 60_000))
    a = decide(f, 2, "stop", process_roles=roles)
    assert a["process_roles"] == ["controller"] and not a["yes"]
    assert a["summary"] == "no: stopping controller 2 now is not safe (1 reason(s))"
    assert a["reasons"][0].startswith("QUORUM stopping voter 2 leaves 1 of the other 2")
    assert a["quorum_gate"]["lagging"] == [3] and a["quorum_leader"] == 1
    assert not any("not listed" in n for n in a["notes"])
    up = decide(f, 3, "caught_up", process_roles=roles)
    assert not up["yes"] and up["summary"] == "no: controller 3 has not caught up (2 reason(s))"
    assert decide(HEALTHY, 3, "caught_up", process_roles=roles)["summary"] == (
        "yes: controller 3 has caught up (a voter caught up with the quorum leader)"
    )


def test_decide_gives_a_combined_node_both_gates() -> None:
    f = facts(1, voter(1, 0), voter(2, 0), voter(3, 60_000), brokers=(1, 2))
    f["partitions"] = [{"topic": "t", "partition": 0, "leader": 1, "replicas": [1, 2, 3], "isr": [1, 2]}]
    f["topic_configs"] = {"t": {"min.insync.replicas": "2"}}
    a = decide(f, 2, "stop")
    assert a["process_roles"] == ["broker", "controller"]
    assert {r.split()[0] for r in a["reasons"]} == {"QUORUM", "CLU001", "CLU002"}
    assert a["summary"].startswith("no: stopping broker 2 now is not safe (3 reason(s))")
    # an unlisted voter of a combined cluster must be listed again before it counts as caught up
    up = decide(f, 3, "caught_up")
    assert up["process_roles"] == ["broker", "controller"]
    assert (
        "broker 3 is not listed by the cluster (still starting, recovering its logs, or down)"
        in up["reasons"]
    )


def test_decide_keeps_a_broker_without_quorum_as_before() -> None:
    f = facts(1, voter(1, 0), voter(2, 0), voter(3, 60_000))
    a = decide(f, 5, "stop")
    assert a["yes"] and a["process_roles"] == ["broker"] and a["quorum_gate"] is None
    assert a["summary"] == "yes: broker 5 may be stopped now"
