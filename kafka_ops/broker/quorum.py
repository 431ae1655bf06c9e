"""May a KRaft controller (a voter of the metadata quorum) stop now, and has it caught up after its start: the
rules behind ``kafka-ops cluster check`` for nodes with ``process.roles`` holding ``controller``.

Input: the cluster facts as plain data (``ClusterFacts.to_dict()``), whose ``quorum`` is the DescribeQuorum answer
for ``__cluster_metadata-0`` as the quorum leader gives it (KIP-595, forwarded by brokers from 3.3, KIP-836).
Standard library only, as the rest of kafka_ops.broker.

What Kafka reports (apache/kafka 3.9.1, DescribeQuorumResponse.json; LeaderState.describeQuorum): for every
voter its ``log_end_offset``, ``last_fetch_timestamp`` (the leader's wall clock at the voter's last fetch) and
``last_caught_up_timestamp`` (the leader's append time of the offset the voter last fetched up to); the leader
reports itself with -1 as last fetch and its *current time* as last caught-up, and -1 means unknown. A voter
that stops fetching keeps its last values, which age against the leader's clock.

The rule (Strimzi's, strimzi-kafka-operator, cluster-operator/src/main/java/io/strimzi/operator/cluster/operator/
resource/KafkaQuorumCheck.java, ``canRollController`` -> ``isQuorumHealthyWithoutNode``, commit a2e6f60):
* no quorum leader (leader id -1): no;
* a quorum of one voter: yes (nothing else can stay; said as a note);
* a voter counts as caught up when it is the leader, or its ``last_caught_up_timestamp`` is known (>= 0) and
  ``leader's last_caught_up_timestamp - its last_caught_up_timestamp < controller.quorum.fetch.timeout.ms``
  (QuorumConfig default 2000 ms: the time after which a follower that has not heard from the leader starts an
  election, so a voter further behind is not counted on to keep the quorum);
* the voter asked about is left out of the count; with two voters: yes when the other one counts (a quorum of
  two cannot lose one without losing its majority: said as a note); otherwise yes when the voters that count
  are at least a majority of all voters, ``(n + 2) // 2``.
The active controller (the quorum leader) is rolled last (Strimzi's KafkaRoller defers it; here the role does).

After a start the node's own state is judged: it is a voter the leader has heard from within the fetch timeout
and that counts as caught up by the rule above.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kafka_ops.engine.compat import slotted

Facts = Mapping[str, Any]

#: controller.quorum.fetch.timeout.ms's default (QuorumConfig.DEFAULT_QUORUM_FETCH_TIMEOUT_MS)
DEFAULT_FETCH_TIMEOUT_MS = 2000


@slotted(frozen=True)
class Voter:
    """One voter as the leader sees it, judged against ``fetch_timeout_ms``."""

    id: int
    log_end_offset: int
    last_fetch_timestamp: int
    last_caught_up_timestamp: int
    leader: bool
    behind_ms: int | None  # leader's clock - its last caught-up time; None: unknown (-1)
    caught_up: bool

    def says(self) -> str:
        if self.leader:
            return f"{self.id} (the quorum leader)"
        if self.behind_ms is None:
            return f"{self.id} (never caught up with the leader as far as it knows)"
        state = "caught up" if self.caught_up else "lagging"
        return f"{self.id} ({state}: last caught up {self.behind_ms / 1000:.1f} s before the leader's clock)"

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id, "log_end_offset": self.log_end_offset,
            "last_fetch_timestamp": self.last_fetch_timestamp,
            "last_caught_up_timestamp": self.last_caught_up_timestamp,
            "leader": self.leader, "behind_ms": self.behind_ms, "caught_up": self.caught_up,
        }  # fmt: skip


def quorum(facts: Facts) -> Mapping[str, Any] | None:
    q = facts.get("quorum")
    return q if isinstance(q, Mapping) else None


def voter_ids(facts: Facts) -> list[int]:
    q = quorum(facts)
    return sorted(int(v["id"]) for v in (q.get("voters") or [])) if q else []


def leader(facts: Facts) -> int | None:
    q = quorum(facts)
    if not q:
        return None
    lid = int(q.get("leader_id", -1))
    return lid if lid >= 0 else None


def voters(facts: Facts, fetch_timeout_ms: int = DEFAULT_FETCH_TIMEOUT_MS) -> list[Voter]:
    """Every voter, judged caught up or not by Strimzi's rule (see the module's docstring)."""
    q = quorum(facts)
    if not q:
        return []
    lid = leader(facts)
    raw = {int(v["id"]): v for v in q.get("voters") or []}
    now = int(raw[lid].get("last_caught_up_timestamp", -1)) if lid in raw else -1
    out = []
    for vid, v in sorted(raw.items()):
        lcu = int(v.get("last_caught_up_timestamp", -1))
        behind = now - lcu if lcu >= 0 and now >= 0 else None
        is_leader = vid == lid
        caught = lcu >= 0 and (is_leader or (behind is not None and behind < fetch_timeout_ms))
        out.append(
            Voter(
                vid, int(v.get("log_end_offset", -1)), int(v.get("last_fetch_timestamp", -1)), lcu,
                is_leader, 0 if is_leader else behind, caught,
            )
        )  # fmt: skip
    return out


@slotted(frozen=True)
class StopAnswer:
    """Whether voter ``node`` may stop: ``yes``; ``reason`` (None when yes); ``notes`` (said, not refusing)."""

    node: int
    leader: int | None
    voters: list[Voter]
    caught_up_without: list[int]  # the other voters that count as caught up
    lagging: list[int]  # the other voters that do not
    needed: int  # how many of them must count
    yes: bool
    reason: str | None
    notes: list[str]

    def to_dict(self) -> dict[str, Any]:
        return {
            "node": self.node, "leader": self.leader, "voters": [v.to_dict() for v in self.voters],
            "caught_up_without": self.caught_up_without, "lagging": self.lagging, "needed": self.needed,
            "yes": self.yes, "reason": self.reason, "notes": self.notes,
        }  # fmt: skip


def may_stop(facts: Facts, node: int, fetch_timeout_ms: int = DEFAULT_FETCH_TIMEOUT_MS) -> StopAnswer:
    """May voter ``node`` stop now without the metadata quorum losing its caught-up majority (Strimzi's
    ``isQuorumHealthyWithoutNode``)? A node that is no voter never touches the quorum: yes."""
    vs = voters(facts, fetch_timeout_ms)
    lid = leader(facts)
    others = [v for v in vs if v.id != node]
    caught = [v.id for v in others if v.caught_up]
    lagging = [v.id for v in others if not v.caught_up]
    n = len(vs)
    needed = 1 if n == 2 else (n + 2) // 2
    notes: list[str] = []

    def answer(yes: bool, reason: str | None) -> StopAnswer:
        return StopAnswer(node, lid, vs, caught, lagging, needed, yes, reason, notes)

    if quorum(facts) is None:
        return answer(False, "the metadata quorum could not be described (no leader, or not a KRaft cluster)")
    if lid is None:
        return answer(False, "the metadata quorum has no leader now (an election is under way)")
    if node not in {v.id for v in vs}:
        notes.append(f"node {node} is not a voter of the metadata quorum (voters {[v.id for v in vs]})")
        return answer(True, None)
    if node == lid:
        notes.append(
            f"node {node} is the quorum leader (the active controller): roll it after the other voters"
        )
    if n == 1:
        notes.append(
            f"the metadata quorum has one voter ({node}): the cluster has no controller while it is down"
        )
        return answer(True, None)
    if n == 2:
        notes.append(
            "the metadata quorum has two voters: it has no majority while either is down (three are needed to "
            "roll without losing it)"
        )
    if len(caught) >= needed:
        return answer(True, None)
    said = ", ".join(v.says() for v in others if not v.caught_up)
    return answer(
        False,
        f"stopping voter {node} leaves {len(caught)} of the other {len(others)} voter(s) caught up with the "
        f"quorum leader {lid} within controller.quorum.fetch.timeout.ms={fetch_timeout_ms}; {needed} needed "
        f"for a majority of {n}. Lagging: {said}",
    )


def catch_up_blockers(facts: Facts, node: int, fetch_timeout_ms: int = DEFAULT_FETCH_TIMEOUT_MS) -> list[str]:
    """Why voter ``node`` has not caught up after its start (empty: it has): the quorum has no leader, the node
    is no voter, the leader has not heard from it within the fetch timeout, or it is further behind than that."""
    if quorum(facts) is None:
        return ["the metadata quorum could not be described (no leader, or not a KRaft cluster)"]
    lid = leader(facts)
    if lid is None:
        return ["the metadata quorum has no leader now (an election is under way)"]
    vs = {v.id: v for v in voters(facts, fetch_timeout_ms)}
    me = vs.get(node)
    if me is None:
        return [f"node {node} is not a voter of the metadata quorum (voters {sorted(vs)})"]
    if me.leader:
        return []
    now = vs[lid].last_caught_up_timestamp
    out = []
    if me.last_fetch_timestamp < 0 or now - me.last_fetch_timestamp >= fetch_timeout_ms:
        ago = (
            "never" if me.last_fetch_timestamp < 0 else f"{(now - me.last_fetch_timestamp) / 1000:.1f} s ago"
        )
        out.append(f"voter {node} has not fetched from the quorum leader {lid} lately (last fetch: {ago})")
    if not me.caught_up:
        out.append(f"voter {me.says()} is behind the quorum leader {lid}")
    return out
