"""ZooKeeper mode's seed: what the real ZooKeeper holds for this broker, read read-only with a deadline (kazoo).

The sandbox's throwaway ZooKeeper needs ``/cluster/id`` (else the broker makes a new id and exits,
KafkaServer.scala@3.5.2:225,240,638), ``/config/topics/<t>`` (the topics' overrides: retention, cleanup.policy)
and ``/brokers/topics/<t>`` (the assignment: without it the broker has no partition state and retention deletes
nothing), for the topics of the log dirs (rehearsal.md §6: the minimal seed for the right outcome). kazoo is a
maintained client (the optional extra ``zookeeper``); without it, or when the real ZooKeeper does not answer,
the seed is meta.properties' cluster id only, and the report says so.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from typing import Any

from kafka_ops.engine.layout import parse_partition_dir

_TOPIC = re.compile(
    r"^[a-zA-Z0-9._-]{1,249}$"
)  # Kafka's legal topic names: nothing else becomes a znode path


@dataclass
class Seed:
    nodes: dict[str, str] = field(default_factory=dict)  # path under the chroot -> data
    source: str = ""  # what the report says about where the seed came from
    topics: list[str] = field(default_factory=list)
    answered: bool = (
        False  # the real ZooKeeper (or the cluster) gave it; False: meta.properties' cluster id only
    )
    why: str = ""  # not answered: why the real ZooKeeper gave nothing


def topics_in(dirs: list[str]) -> list[str]:
    """The topics of the partition dirs in the log dirs (legal names only)."""
    out = set()
    for d in dirs:
        try:
            names = os.listdir(d)
        except OSError:
            continue
        for n in names:
            p = parse_partition_dir(n)
            if p is not None and p.kind == "log" and _TOPIC.match(p.topic):
                out.add(p.topic)
    return sorted(out)


def kazoo_path() -> str | None:
    """The dir holding the kazoo package (for the seeding process in the sandbox), None if it is not installed."""
    try:
        import kazoo
    except ImportError:
        return None
    return os.path.dirname(os.path.dirname(os.path.abspath(kazoo.__file__)))


def read_real(connect: str, dirs: list[str], cluster_id: str | None, deadline_s: float = 10.0) -> Seed:
    """The seed from the ZooKeeper ``connect`` names (read-only session, ``deadline_s`` to connect), else
    meta.properties' cluster id with the reason."""
    topics = topics_in(dirs)
    fallback = Seed({"/cluster/id": _cluster_node(cluster_id)} if cluster_id else {}, "", topics)
    if kazoo_path() is None:
        fallback.why = "kazoo is not installed (the extra 'zookeeper')"
        fallback.source = (
            "meta.properties' cluster id only: kazoo is not installed (the extra 'zookeeper'); topic configs and "
            "assignments not seeded: the broker's defaults, no retention"
        )
        return fallback
    from kazoo.client import KazooClient
    from kazoo.exceptions import KazooException, NoNodeError
    from kazoo.handlers.threading import KazooTimeoutError

    zk = KazooClient(hosts=connect, read_only=True, timeout=deadline_s, connection_retry={"max_tries": 1})
    try:
        zk.start(timeout=deadline_s)
        nodes: dict[str, str] = {}
        try:
            nodes["/cluster/id"] = zk.get("/cluster/id")[0].decode()
        except NoNodeError:
            if cluster_id:
                nodes["/cluster/id"] = _cluster_node(cluster_id)
        for t in topics:
            for path in (f"/config/topics/{t}", f"/brokers/topics/{t}"):
                try:
                    nodes[path] = zk.get(path)[0].decode()
                except NoNodeError:
                    pass
        return Seed(nodes, f"the real ZooKeeper {connect} (read-only)", topics, True)
    except (KazooTimeoutError, KazooException, OSError) as exc:
        fallback.why = (
            f"the real ZooKeeper {connect} did not answer within {deadline_s:.0f} s ({type(exc).__name__})"
        )
        fallback.source = (
            f"meta.properties' cluster id only: the real ZooKeeper {connect} did not answer within "
            f"{deadline_s:.0f} s ({type(exc).__name__}); topic configs and assignments not seeded: the broker's "
            "defaults, no retention"
        )
        return fallback
    finally:
        zk.stop()
        zk.close()


def from_cluster(cluster: dict[str, Any], dirs: list[str], cluster_id: str | None, why_not_zk: str) -> Seed:
    """The seed from the running cluster (``--bootstrap-server``: kafka_ops.cluster.facts.ClusterFacts.to_dict())
    when ZooKeeper did not answer: its cluster id, each topic's own overrides as ``/config/topics/<t>``
    (ConfigEntityZNode: ``{"version":1,"config":{...}}``) and its assignment as ``/brokers/topics/<t>`` (TopicZNode:
    ``{"version":1,"partitions":{"<p>":[replicas]}}``; version 3 with the ``topic_id`` of the log dirs'
    partition.metadata where they have one, 2.8+: without it the sandbox's controller would give the topic a new
    id, which the broker refuses against its partition.metadata), TopicZNode.scala@2.8.2."""
    topics = topics_in(dirs)
    nodes: dict[str, str] = {}
    cid = cluster.get("cluster_id") or cluster_id
    if cid:
        nodes["/cluster/id"] = _cluster_node(cid)
    assignment: dict[str, dict[str, list[int]]] = {}
    for p in cluster.get("partitions") or []:
        if p["topic"] in topics:
            assignment.setdefault(p["topic"], {})[str(p["partition"])] = [int(r) for r in p["replicas"]]
    ids = _topic_ids(dirs)
    overrides = cluster.get("topic_overrides") or {}
    for t in topics:
        if overrides.get(t):
            nodes[f"/config/topics/{t}"] = json.dumps(
                {"version": 1, "config": overrides[t]}, separators=(",", ":")
            )
        if t in assignment:
            node: dict[str, Any] = {"version": 1, "partitions": assignment[t]}
            if t in ids:
                node = {"version": 3, "topic_id": ids[t], "partitions": assignment[t], "adding_replicas": {},
                        "removing_replicas": {}}  # fmt: skip
            nodes[f"/brokers/topics/{t}"] = json.dumps(node, separators=(",", ":"))
    return Seed(
        nodes,
        f"the cluster at {cluster.get('bootstrap')} (--bootstrap-server): its cluster id, topic overrides and "
        f"assignments ({why_not_zk})",
        topics,
        True,
    )


def _topic_ids(dirs: list[str]) -> dict[str, str]:
    """Each topic's id from its partition dirs' partition.metadata (the first readable one)."""
    from kafka_ops.engine.checkpoints import read_partition_metadata
    from kafka_ops.engine.errors import EngineError

    out: dict[str, str] = {}
    for d in dirs:
        try:
            names = sorted(os.listdir(d))
        except OSError:
            continue
        for n in names:
            p = parse_partition_dir(n)
            if p is None or p.kind != "log" or p.topic in out or not _TOPIC.match(p.topic):
                continue
            try:
                out[p.topic] = read_partition_metadata(os.path.join(d, n, "partition.metadata"))["topic_id"]
            except (EngineError, OSError, KeyError):
                pass
    return out


def _cluster_node(cluster_id: str) -> str:
    return json.dumps(
        {"version": "1", "id": cluster_id}, separators=(",", ":")
    )  # KafkaZkClient's ClusterIdZNode


SEED_PY = """import json,sys
from kazoo.client import KazooClient
port,chroot,nodes=sys.argv[1],sys.argv[2],json.load(open(sys.argv[3]))
zk=KazooClient(hosts='127.0.0.1:'+port);zk.start(timeout=30);zk.ensure_path(chroot or '/')
for path,data in nodes.items():zk.create(chroot.rstrip('/')+path,data.encode(),makepath=True)
zk.stop();zk.close()
"""
