"""ZooKeeper's ``/cluster/id``, read once and read only, with a deadline: what a ZooKeeper-mode broker compares
with its meta.properties at start (CLI side only: kazoo is not in the stdlib-only collector).

A ZooKeeper-mode broker (KafkaServer.startup, KafkaServer.scala@2.8.2:200-218; the same through 3.9) reads
``/cluster/id`` (``{"version":"1","id":"<cluster id>"}``, ZkData.scala ``ClusterIdZNode``) and, when the znode is
missing, creates it with a new random id (``getOrGenerateClusterId``); then it throws
InconsistentClusterIdException when meta.properties has another ``cluster.id``: "The Cluster ID <zk> doesn't match
stored clusterId Some(<meta>) in meta.properties. The broker is trying to join the wrong cluster. Configured
zookeeper.connect may be wrong." So a missing znode is a mismatch too, for a broker whose meta.properties has a
``cluster.id``.
"""

from __future__ import annotations

import json
from typing import Any


class ZooKeeperUnavailable(Exception):
    """ZooKeeper did not answer (or kazoo is missing): one line saying why."""


def read_cluster_id(connect: str, timeout_s: float = 10.0) -> dict[str, Any]:
    """``{"connect", "cluster_id"}`` from ``/cluster/id`` of the ZooKeeper ``connect`` names (a
    ``zookeeper.connect`` value, chroot included); ``cluster_id`` None when the znode does not exist.
    Raises ZooKeeperUnavailable when it does not answer within ``timeout_s``."""
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
        try:
            data, _ = zk.get("/cluster/id")
        except NoNodeError:
            return {"connect": connect, "cluster_id": None}
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
    return {"connect": connect, "cluster_id": cid}
