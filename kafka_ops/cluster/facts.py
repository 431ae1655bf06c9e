"""What only the running cluster knows, asked once: brokers, leaders and ISRs, topic configs, log dirs.

The result is plain data (``ClusterFacts.to_dict``), so that the checks (standard library only, shipped to hosts)
read it as they read every other fact, and ``kafka-ops fleet audit`` asks once for all hosts.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from kafka_ops.cluster.client import ClusterUnavailable, admin, error_text

# The topic configs the audit's retention model and the cluster checks read.
CONFIG_KEYS = (
    "retention.ms", "retention.bytes", "cleanup.policy", "segment.bytes", "segment.ms", "min.insync.replicas",
    "delete.retention.ms", "message.timestamp.type", "min.compaction.lag.ms", "max.compaction.lag.ms",
    "local.retention.ms", "local.retention.bytes",
)  # fmt: skip


@dataclass
class PartitionState:
    topic: str
    partition: int
    leader: int  # -1: no leader (offline)
    replicas: list[int]
    isr: list[int]
    offline_replicas: list[int] = field(default_factory=list)


@dataclass
class LogDirState:
    broker: int
    path: str
    error: str | None  # None: online; the error code name otherwise (KafkaStorageError: offline)
    partitions: int = 0
    size_bytes: int = 0


@dataclass
class ClusterFacts:
    bootstrap: str
    cluster_id: str | None
    controller: int | None
    brokers: dict[int, str]  # node id -> host:port
    partitions: list[PartitionState]
    topic_configs: dict[str, dict[str, str]]  # every topic's effective values of CONFIG_KEYS
    log_dirs: list[LogDirState]
    # KRaft: the leader of the metadata quorum (DescribeQuorum on __cluster_metadata-0), i.e. the active
    # controller. A KRaft broker answers DescribeCluster/Metadata with a *random live broker* as "controller"
    # (KRaftMetadataCache.getControllerId -> getRandomAliveBroker, KIP-590), so `controller` above is only the
    # controller in ZooKeeper mode. None: ZooKeeper mode, or a broker before 3.3 (no DescribeQuorum forwarding).
    quorum_leader: int | None = None
    # KRaft: the whole DescribeQuorum answer for __cluster_metadata-0 (leader_id, leader_epoch, high_watermark,
    # voters and observers with their log_end_offset, last_fetch_timestamp, last_caught_up_timestamp, as the
    # leader reports them), the input of the controllers' roll gate (kafka_ops.broker.quorum). None as above.
    quorum: dict[str, Any] | None = None
    # each topic's own overrides (config source DYNAMIC_TOPIC_CONFIG), every key: what ZooKeeper's
    # /config/topics/<t> holds in ZooKeeper mode (the rehearsal's seed when ZooKeeper does not answer)
    topic_overrides: dict[str, dict[str, str]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def min_isr(self, topic: str) -> int:
        try:
            return int(self.topic_configs.get(topic, {}).get("min.insync.replicas", "1"))
        except ValueError:
            return 1


def gather(
    bootstrap: str,
    client_config: dict[str, Any] | None = None,
    timeout_s: float = 10.0,
    log_dirs_of: list[int] | None = None,
) -> ClusterFacts:
    """Ask the cluster once. ``log_dirs_of``: the brokers whose log dirs to describe (None: every broker).

    Each request is bounded by ``timeout_s`` (kafka-python's request timeout), and the whole conversation by a
    hard deadline (with_deadline) of OVERALL_ROUNDS times it: a connection that stalls where kafka-python's
    own timeouts do not reach (TLS) cannot hang the caller."""
    from kafka_ops.cluster.client import with_deadline

    return with_deadline(
        lambda: _gather(bootstrap, client_config, timeout_s, log_dirs_of),
        timeout_s * OVERALL_ROUNDS + 5,
        f"the cluster at {bootstrap}",
    )


OVERALL_ROUNDS = 10


def _gather(
    bootstrap: str,
    client_config: dict[str, Any] | None,
    timeout_s: float,
    log_dirs_of: list[int] | None,
) -> ClusterFacts:
    from kafka.admin import ConfigResource, ConfigResourceType
    from kafka.errors import KafkaError

    client = admin(bootstrap, client_config, timeout_s)
    try:
        cluster = _describe_cluster(client)
        brokers = {
            int(b.get("broker_id", b.get("node_id", -1))): f"{b['host']}:{b['port']}"
            for b in cluster.get("brokers", [])
        }
        topics = client.describe_topics()
        parts: list[PartitionState] = []
        names: list[str] = []
        for t in topics:
            name = t.get("topic") or t.get("name")
            if not name or t.get("error_code", 0) not in (0, None):
                continue
            names.append(name)
            for p in t.get("partitions", []):
                parts.append(
                    PartitionState(
                        name, int(p["partition_index"]), int(p.get("leader_id", -1)),
                        [int(x) for x in p.get("replica_nodes", [])], [int(x) for x in p.get("isr_nodes", [])],
                        [int(x) for x in p.get("offline_replicas", []) or []],
                    )
                )  # fmt: skip
        configs: dict[str, dict[str, str]] = {}
        overrides: dict[str, dict[str, str]] = {}
        if names:
            resources = [ConfigResource(ConfigResourceType.TOPIC, n) for n in sorted(names)]
            described = client.describe_configs(resources, config_filter="all")
            # kafka-python 3: {"topic": {name: {key: {"value": ..., "config_source": ...}}}}
            for name, entries in (described.get("topic") or {}).items():
                configs[name] = {
                    k: str(e["value"])
                    for k, e in entries.items()
                    if k in CONFIG_KEYS and e.get("value") is not None
                }
                overrides[name] = {
                    k: str(e["value"])
                    for k, e in entries.items()
                    if e.get("config_source") == "DYNAMIC_TOPIC_CONFIG" and e.get("value") is not None
                }
        quorum = _quorum(client)
        dirs: list[LogDirState] = []
        asked = log_dirs_of if log_dirs_of is not None else sorted(brokers)
        for entry in client.describe_log_dirs(brokers=[b for b in asked if b in brokers]) if asked else []:
            dirs.extend(_log_dirs(entry))
        return ClusterFacts(
            bootstrap, cluster.get("cluster_id"), cluster.get("controller_id"), brokers,
            sorted(parts, key=lambda p: (p.topic, p.partition)), configs, dirs,
            quorum["leader_id"] if quorum else None, quorum, overrides,
        )  # fmt: skip
    except KafkaError as exc:
        raise ClusterUnavailable(f"the cluster at {bootstrap} did not answer: {error_text(exc)}") from exc
    finally:
        client.close()


def _describe_cluster(client: Any) -> dict[str, Any]:
    """DescribeCluster's cluster id, controller and brokers. kafka-python 3.0.x reads DescribeCluster v1's
    endpoint_type (3.7+, KIP-919) from every answer and fails with KeyError on a v0 one (2.8-3.6, KIP-700): there,
    the same facts from a Metadata request, as its own fallback does for brokers without DescribeCluster
    (kafka/admin/_cluster.py@3.0.12 ``_describe_cluster``; seen on 2.8.2 and 3.5.2)."""
    try:
        return dict(client.describe_cluster())
    except KeyError as exc:
        if exc.args != ("endpoint_type",):
            raise
    metadata = dict(client._manager.run(client._get_cluster_metadata, []))
    metadata.pop("topics", None)
    for b in metadata.get("brokers", []):
        if "node_id" in b:
            b["broker_id"] = b.pop("node_id")
    return metadata


def _quorum(client: Any) -> dict[str, Any] | None:
    """The metadata quorum as its leader describes it (DescribeQuorum, KIP-595/KIP-836), or None where the
    cluster has none to tell (ZooKeeper mode answers DescribeQuorum with an error; brokers before 3.3 do not
    forward it) or it has no leader now. Timestamps are the leader's wall clock in ms, -1 when unknown (the
    leader reports its own last_caught_up_timestamp as its current time, DescribeQuorumResponse.json)."""
    from kafka.errors import KafkaError

    try:
        answer = client.describe_metadata_quorum()
        part = answer["topics"][0]["partitions"][0]
    except (KafkaError, KeyError, IndexError, AttributeError, TypeError):
        return None
    if part.get("error"):
        return None
    leader = int(part.get("leader_id", -1))
    if leader < 0:
        return None

    def replica(r: dict[str, Any]) -> dict[str, int]:
        return {
            "id": int(r["replica_id"]),
            "log_end_offset": int(r.get("log_end_offset", -1)),
            "last_fetch_timestamp": int(r.get("last_fetch_timestamp", -1)),
            "last_caught_up_timestamp": int(r.get("last_caught_up_timestamp", -1)),
        }

    return {
        "leader_id": leader,
        "leader_epoch": int(part.get("leader_epoch", -1)),
        "high_watermark": int(part.get("high_watermark", -1)),
        "voters": sorted((replica(r) for r in part.get("current_voters") or []), key=lambda r: r["id"]),
        "observers": sorted((replica(r) for r in part.get("observers") or []), key=lambda r: r["id"]),
    }


def _log_dirs(entry: dict[str, Any]) -> list[LogDirState]:
    """One broker's answer to DescribeLogDirs: {"broker": id, "log_dirs": [{"error_code", "log_dir", "topics"}]}."""
    from kafka.errors import for_code

    out = []
    for r in entry.get("log_dirs", []):
        code = int(r.get("error_code", 0) or 0)
        topics = r.get("topics", [])
        parts = sum(len(t.get("partitions", [])) for t in topics)
        size = sum(int(p.get("partition_size", 0) or 0) for t in topics for p in t.get("partitions", []))
        err = None if code == 0 else for_code(code).__name__
        out.append(LogDirState(int(entry["broker"]), r.get("log_dir"), err, parts, size))
    return out
