"""A KRaft cluster of several lab brokers on loopback ports: each node a combined broker and controller, one
quorum of all of them (``controller.quorum.voters``), one cluster id, internal topics replicated on three nodes.

Used where one broker cannot show a behaviour: ISRs that shrink when a broker stops, min.insync.replicas, under-
replicated partitions (issue 11's cluster checks).
"""

from __future__ import annotations

from collections.abc import Mapping

from kafka_lab.broker import LabBroker, LabError, StartOutcome


class LabCluster:
    def __init__(
        self, version: str = "3.9.1", size: int = 3, properties: Mapping[str, object] | None = None
    ) -> None:
        self.brokers = [LabBroker(version, properties=properties) for _ in range(size)]
        if not self.brokers[0].kraft:
            raise LabError("a lab cluster is KRaft only (3.x and later)")
        cluster_id = self.brokers[0].cluster_id
        voters = ",".join(f"{i}@127.0.0.1:{b.controller_port}" for i, b in self.nodes())
        rf = min(3, size)
        for i, b in self.nodes():
            b.cluster_id = cluster_id
            b.set_properties(
                **{
                    "node.id": i,
                    "controller.quorum.voters": voters,
                    "offsets.topic.replication.factor": rf,
                    "transaction.state.log.replication.factor": rf,
                    "transaction.state.log.min.isr": min(2, rf),
                    # a follower that stops fetching leaves the ISR after this (default 30 s): faster here
                    "replica.lag.time.max.ms": 5000,
                }
            )

    def nodes(self) -> list[tuple[int, LabBroker]]:
        return [(i + 1, b) for i, b in enumerate(self.brokers)]

    def node(self, node_id: int) -> LabBroker:
        return self.brokers[node_id - 1]

    @property
    def bootstrap(self) -> str:
        return ",".join(b.bootstrap for b in self.brokers if b.running) or self.brokers[0].bootstrap

    def start(self, nodes: list[int] | None = None, timeout: float = 180.0) -> dict[int, StartOutcome]:
        """Start the nodes together (a quorum forms only when a majority runs) and wait for every ready line.
        The JVMs are spawned from this thread (see LabBroker.launch), then awaited one after the other."""
        which = nodes or [i for i, _ in self.nodes()]
        began = {i: self.node(i).launch() for i in which}
        return {i: self.node(i).await_ready(began[i], timeout) for i in which}

    def close(self) -> None:
        for b in self.brokers:
            b.close()

    def __enter__(self) -> LabCluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
