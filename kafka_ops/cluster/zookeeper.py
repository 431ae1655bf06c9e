"""ZooKeeper's ``/cluster/id``, read once and read only, with a deadline: what a ZooKeeper-mode broker compares
with its meta.properties at start (CLI side only: kazoo is not in the stdlib-only collector).

A ZooKeeper-mode broker (KafkaServer.startup, KafkaServer.scala@2.8.2:200-218; the same through 3.9) reads
``/cluster/id`` (``{"version":"1","id":"<cluster id>"}``, ZkData.scala ``ClusterIdZNode``) and, when the znode is
missing, creates it with a new random id (``getOrGenerateClusterId``); then it throws
InconsistentClusterIdException when meta.properties has another ``cluster.id``: "The Cluster ID <zk> doesn't match
stored clusterId Some(<meta>) in meta.properties. The broker is trying to join the wrong cluster. Configured
zookeeper.connect may be wrong." So a missing znode is a mismatch too, for a broker whose meta.properties has a
``cluster.id``.

The same read-only session gives what a ZooKeeper-mode broker loads its logs with, which no file on the host holds
(issue 36 §3): each topic's overrides, ``/config/topics/<topic>`` (``{"version":1,"config":{...}}``, ZkData.scala
``ConfigEntityZNode``; LogManager's ``fetchTopicConfigOverrides`` -> ``AdminZkClient.fetchEntityConfig(Topic, t)``),
and the dynamic broker configs the broker applies over server.properties at its start
(``DynamicBrokerConfig.initialize``, DynamicBrokerConfig.scala@2.8.2: ``/config/brokers/<default>``, then
``/config/brokers/<broker.id>``).
"""

from __future__ import annotations

import json
from typing import Any


class ZooKeeperUnavailable(Exception):
    """ZooKeeper did not answer (or kazoo is missing): one line saying why."""


def read_cluster_id(
    connect: str, timeout_s: float = 10.0, *, broker_id: str | None = None, configs: bool = False
) -> dict[str, Any]:
    """``{"connect", "cluster_id"}`` from ``/cluster/id`` of the ZooKeeper ``connect`` names (a
    ``zookeeper.connect`` value, chroot included); ``cluster_id`` None when the znode does not exist.
    With ``configs``: also ``topic_configs`` (topic -> overrides, every topic under /config/topics) and
    ``broker_configs`` (``"<default>"`` and ``broker_id`` -> dynamic configs), or ``configs_error`` saying why
    they could not be read (the cluster id still stands). Raises ZooKeeperUnavailable when it does not answer
    within ``timeout_s``."""
    try:
        from kazoo.client import KazooClient
        from kazoo.exceptions import KazooException, NoNodeError
        from kazoo.handlers.threading import KazooTimeoutError
    except ImportError:
        raise ZooKeeperUnavailable(
            "kazoo is not installed (the zookeeper extra: pip install 'kafka-ops[zookeeper]'): ZooKeeper was not asked"
        ) from None
    # read_only: a server that lost its quorum still answers reads; no retries beyond the deadline
    zk = KazooClient(
        hosts=connect,
        timeout=timeout_s,
        read_only=True,
        connection_retry={"max_tries": 1},
        command_retry=None,
    )
    try:
        try:
            zk.start(timeout=timeout_s)
        except (KazooTimeoutError, KazooException, OSError, ValueError) as exc:
            raise ZooKeeperUnavailable(
                f"ZooKeeper at {connect} did not answer within {timeout_s:g} s ({type(exc).__name__})"
            ) from None
        extra: dict[str, Any] = {}
        if configs:
            try:
                extra = _read_configs(zk, broker_id, timeout_s)
            except (KazooTimeoutError, KazooException, OSError) as exc:
                extra = {"configs_error": f"reading /config failed ({type(exc).__name__})"}
        try:
            data, _ = zk.get("/cluster/id")
        except NoNodeError:
            return {"connect": connect, "cluster_id": None, **extra}
        except (KazooException, OSError) as exc:
            raise ZooKeeperUnavailable(
                f"ZooKeeper at {connect}: reading /cluster/id failed ({type(exc).__name__})"
            ) from None
    finally:
        try:
            zk.stop()
            zk.close()
        except Exception:  # closing a client that never connected
            pass
    try:
        doc = json.loads(data.decode("utf-8"))
        cid = doc["id"]
    except (ValueError, KeyError, TypeError, UnicodeDecodeError):
        raise ZooKeeperUnavailable(
            f'ZooKeeper at {connect}: /cluster/id is not {{"version":"1","id":...}}'
        ) from None
    if not isinstance(cid, str):
        raise ZooKeeperUnavailable(f"ZooKeeper at {connect}: /cluster/id has no string id")
    return {"connect": connect, "cluster_id": cid, **extra}


def _config_node(data: bytes) -> dict[str, str] | None:
    """A ConfigEntityZNode's ``config`` map (string values only), None when it is not one."""
    try:
        doc = json.loads(data.decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        return None
    cfg = doc.get("config") if isinstance(doc, dict) else None
    if not isinstance(cfg, dict):
        return None
    return {str(k): str(v) for k, v in cfg.items() if isinstance(v, (str, int))}


def _read_configs(zk: Any, broker_id: str | None, timeout_s: float) -> dict[str, Any]:
    """Every topic's overrides and this broker's dynamic configs, read asynchronously within ``timeout_s``."""
    from kazoo.exceptions import NoNodeError

    try:
        topics = zk.get_children("/config/topics")
    except NoNodeError:
        topics = []
    paths = {("topic", t): f"/config/topics/{t}" for t in topics}
    for name in ("<default>", broker_id):
        if name is not None:
            paths[("broker", name)] = f"/config/brokers/{name}"
    pending = {key: zk.get_async(path) for key, path in paths.items()}
    out: dict[str, Any] = {"topic_configs": {}, "broker_configs": {}, "unreadable": []}
    for (kind, name), res in pending.items():
        try:
            data, _ = res.get(timeout=timeout_s)
        except NoNodeError:
            continue
        cfg = _config_node(data)
        if cfg is None:
            out["unreadable"].append(paths[(kind, name)])
        elif cfg:
            out["topic_configs" if kind == "topic" else "broker_configs"][name] = cfg
    return out
