"""What the cluster does when a broker stops, and whether a started broker has caught up: the rules behind the
CLU checks and ``kafka-ops cluster check`` (one implementation for both).

Input: the cluster facts as plain data (``kafka_ops.cluster.facts.ClusterFacts.to_dict()``; JSON turns the
broker ids of ``brokers`` into strings, which is accepted). Standard library only: the checks that read these
rules are shipped to broker hosts with the rest of the model.

What Kafka does (apache/kafka at 3.9.1, the same on every lab version):
* A stopping broker leaves the ISR of every partition it follows or leads: the controller removes it when its
  registration ends (KRaft: ``ReplicationControlManager.handleBrokerFenced``/``handleBrokerUnregistered``; ZooKeeper
  mode: ``KafkaController.onBrokerFailure`` -> ``onReplicasBecomeOffline``) and a controlled shutdown moves its
  leaderships first (``ControlledShutdown``), so what is left in sync is the ISR without it.
* A write with ``acks=all`` fails with ``NotEnoughReplicasException`` when the ISR is smaller than the topic's
  ``min.insync.replicas`` (``Partition.appendRecordsToLeader``: ``if (inSyncSize < minIsr && requiredAcks == -1)``).
* A partition whose ISR becomes empty has no leader (``leader: -1``, offline) until a replica in the last ISR comes
  back, or an unclean election (``unclean.leader.election.enable``) elects an out-of-sync one and loses records.
* Under-replicated: fewer replicas in sync than assigned (the broker's ``UnderReplicatedPartitions`` metric,
  ``Partition.isUnderReplicated``: ``isLeader && (assignmentState.replicationFactor - partitionState.isr.size) > 0``).
* Strimzi's KafkaRoller (strimzi-kafka-operator, cluster-operator/.../operator/resource/KafkaAvailability.java,
  ``canRoll`` -> ``wouldAffectAvailability``, the rule this gate follows): only the partitions with a replica on the broker count; a partition whose replication factor is
  ``<= min.insync.replicas`` is never counted ("will be under-replicated ... if broker {} is restarted, but there
  are only {} replicas": no roll can ever spare a broker of it, so refusing would refuse every roll for good);
  otherwise the broker may not roll when it is in the ISR and the ISR is ``== min.insync.replicas``, or the ISR is
  already ``< min.insync.replicas`` and it holds a replica. Here the last two are ``below_min_isr``/``offline`` and
  the own partitions' CLU002 (under-replicated or offline); unlike Strimzi, a stop that would leave an exempt
  partition with no replica in sync at all still counts (``offline``: that stop does make it worse).
* A KRaft broker is listed by the cluster (Metadata/DescribeCluster) only once it is unfenced, that is after its log
  recovery at start (``BrokerLifecycleManager``: it asks to be unfenced when ``LogManager`` has loaded its logs), so
  a restarted broker that is listed has finished its recovery.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kafka_ops.engine.compat import slotted

Facts = Mapping[str, Any]


@slotted(frozen=True)
class AtRisk:
    """A partition that the stop of ``broker`` would make unavailable, for writes (below min ISR) or at all."""

    topic: str
    partition: int
    replicas: list[int]
    isr: list[int]
    min_isr: int
    left_in_sync: int  # the ISR once the broker is gone
    kind: str  # offline | below_min_isr | single_replica | rf_le_min_isr

    @property
    def name(self) -> str:
        return f"{self.topic}-{self.partition}"

    def says(self) -> str:
        if self.kind == "single_replica":
            return f"{self.name} (replication factor 1: unavailable while the broker is down)"
        if self.kind == "offline":
            return f"{self.name} (ISR {self.isr}: no replica left in sync, the partition goes offline)"
        if self.kind == "rf_le_min_isr":
            return (
                f"{self.name} (replication factor {len(self.replicas)} <= min.insync.replicas={self.min_isr}: "
                "acks=all writes fail while any of its replicas is down, whatever the roll does)"
            )
        return f"{self.name} (ISR {self.isr}, min.insync.replicas={self.min_isr}: {self.left_in_sync} left in sync)"


@slotted(frozen=True)
class Unhealthy:
    """A partition the cluster already serves badly: no leader, or fewer replicas in sync than assigned."""

    topic: str
    partition: int
    leader: int
    replicas: list[int]
    isr: list[int]
    kind: str  # offline | under_replicated

    @property
    def name(self) -> str:
        return f"{self.topic}-{self.partition}"

    @property
    def missing(self) -> list[int]:
        return [r for r in self.replicas if r not in self.isr]

    def says(self) -> str:
        if self.kind == "offline":
            return f"{self.name} (no leader; replicas {self.replicas}, ISR {self.isr})"
        return f"{self.name} (replicas {self.replicas}, ISR {self.isr}: {self.missing} not in sync)"


def min_isr(facts: Facts, topic: str) -> int:
    """The topic's min.insync.replicas as the cluster has it (its effective value: topic, broker or default)."""
    raw = (facts.get("topic_configs") or {}).get(topic, {}).get("min.insync.replicas", "1")
    try:
        return int(raw)
    except (TypeError, ValueError):
        return 1


def brokers(facts: Facts) -> dict[int, str]:
    return {int(k): str(v) for k, v in (facts.get("brokers") or {}).items()}


def active_controller(facts: Facts) -> int | None:
    """The node that is the active controller: the metadata quorum's leader in KRaft, the ZooKeeper controller
    otherwise. A KRaft broker names a random live broker as 'controller' in Metadata and DescribeCluster
    (KRaftMetadataCache.getControllerId -> getRandomAliveBroker, "clients do not have direct access to the
    controller in the KRaft world", KIP-590), so that id is used only when the quorum cannot be asked (ZooKeeper
    mode; KRaft brokers forward DescribeQuorum from 3.3, KIP-836)."""
    leader = facts.get("quorum_leader")
    if leader is not None:
        return int(leader)
    ctl = facts.get("controller")
    return int(ctl) if ctl is not None and int(ctl) >= 0 else None


def stop_risks(facts: Facts, broker: int, strict_min_isr: bool = False) -> list[AtRisk]:
    """Partitions that ``broker``'s stop makes unavailable: every partition whose ISR holds it and would then be
    empty (offline) or below min.insync.replicas (acks=all producers fail), and its replication-factor-1
    partitions (kind ``single_replica``: unavailable while it is down, whatever the roll does). A partition whose
    replication factor is <= its min.insync.replicas is kind ``rf_le_min_isr`` (Strimzi's exemption: no roll can
    spare one of its brokers) unless the stop leaves it no replica in sync, or ``strict_min_isr`` counts it as
    ``below_min_isr`` as any other."""
    out = []
    for p in facts.get("partitions") or []:
        isr = [int(x) for x in p.get("isr") or []]
        replicas = [int(x) for x in p.get("replicas") or []]
        if broker not in isr:
            continue  # not in sync: its stop changes nothing of what is served
        left = len(isr) - 1
        need = min_isr(facts, p["topic"])
        if replicas == [broker]:
            kind = "single_replica"
        elif left == 0:
            kind = "offline"
        elif left < need and len(replicas) <= need and not strict_min_isr:
            kind = "rf_le_min_isr"
        elif left < need:
            kind = "below_min_isr"
        else:
            continue
        out.append(AtRisk(p["topic"], int(p["partition"]), replicas, isr, need, left, kind))
    return out


#: kinds of stop_risks that do not refuse a stop: they are unavailable (for acks=all writes) while the broker is
#: down whatever the order of the roll, so the gate lists them and goes on
NOT_REFUSING = ("single_replica", "rf_le_min_isr")


def hosts(u: Unhealthy | AtRisk, broker: int) -> bool:
    """Whether ``broker`` holds a replica of the partition: only then can its stop (or its lag) touch it."""
    return broker in u.replicas


def unhealthy(facts: Facts) -> list[Unhealthy]:
    """Every partition of the cluster without a leader or with a replica out of sync."""
    out = []
    for p in facts.get("partitions") or []:
        isr = [int(x) for x in p.get("isr") or []]
        replicas = [int(x) for x in p.get("replicas") or []]
        leader = int(p.get("leader", -1))
        if leader < 0:
            kind = "offline"
        elif any(r not in isr for r in replicas):
            kind = "under_replicated"
        else:
            continue
        out.append(Unhealthy(p["topic"], int(p["partition"]), leader, replicas, isr, kind))
    return out


_TOPIC_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")


def legal_topic(name: str) -> bool:
    """Kafka's rule for a topic name (``Topic.validate``: 1-249 of [a-zA-Z0-9._-], not . or ..)."""
    return 0 < len(name) <= 249 and set(name) <= _TOPIC_CHARS and name not in (".", "..")


def parse_partition(spec: str) -> tuple[str, int]:
    """``TOPIC:PARTITION`` (a topic name has no colon) as (topic, partition); ValueError saying what is wrong."""
    topic, sep, number = spec.rpartition(":")
    if not sep or not legal_topic(topic) or not number.isdigit():
        raise ValueError(f"{spec!r} is not TOPIC:PARTITION (a Kafka topic name, a colon, a partition number)")
    return topic, int(number)


@slotted(frozen=True)
class Waiver:
    """Partitions an operator has named as known and accepted (a stale offline partition, a topic being
    deleted): the gates skip them and only them, and say so."""

    topics: frozenset[str] = frozenset()
    partitions: frozenset[tuple[str, int]] = frozenset()

    def covers(self, topic: str, partition: int) -> bool:
        return topic in self.topics or (topic, int(partition)) in self.partitions

    def __bool__(self) -> bool:
        return bool(self.topics or self.partitions)

    def unmatched(self, facts: Facts) -> list[str]:
        """The waivers that name no partition of the cluster (a typo waives nothing: say so)."""
        have = {(p["topic"], int(p["partition"])) for p in facts.get("partitions") or []}
        topics = {t for t, _ in have}
        return [f"topic {t}" for t in sorted(self.topics - topics)] + [
            f"partition {t}:{n}" for t, n in sorted(self.partitions - have)
        ]


def offline_log_dirs(facts: Facts, broker: int) -> list[dict[str, Any]]:
    """The log dirs ``broker`` itself reports with an error (DescribeLogDirs: KafkaStorageError = offline)."""
    return [d for d in facts.get("log_dirs") or [] if int(d.get("broker", -1)) == broker and d.get("error")]


def catch_up_blockers(facts: Facts, broker: int, waiver: Waiver | None = None) -> list[str]:
    """Why ``broker`` has not caught up after its start (empty: it has): not listed by the cluster (still
    starting or recovering its logs), a partition it replicates where it is not in sync, one it leads with a
    follower out of sync, an offline log dir. The partitions ``waiver`` covers are left out."""
    out = []
    if broker not in brokers(facts):
        out.append(
            f"broker {broker} is not listed by the cluster (still starting, recovering its logs, or down)"
        )
    for u in unhealthy(facts):
        if waiver is not None and waiver.covers(u.topic, u.partition):
            continue
        if broker in u.missing:
            out.append(f"{u.name}: broker {broker} is not in sync yet (ISR {u.isr})")
        elif u.leader == broker and u.kind == "under_replicated":
            out.append(f"{u.name}: led by broker {broker}, {u.missing} not in sync")
        elif u.kind == "offline" and broker in u.replicas:
            out.append(f"{u.name}: no leader (replicas {u.replicas})")
    for d in offline_log_dirs(facts, broker):
        out.append(f"log dir {d.get('path')} of broker {broker} is offline ({d.get('error')})")
    return out


def answering_node(facts: Facts) -> int | None:
    """The node whose advertised address is the bootstrap address asked (None: a name or VIP none advertises)."""
    asked = {a.strip() for a in str(facts.get("bootstrap") or "").split(",") if a.strip()}
    for node, addr in brokers(facts).items():
        if addr in asked:
            return node
    return None
