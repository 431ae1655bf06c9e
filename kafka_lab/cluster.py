"""A KRaft cluster of several lab brokers on loopback ports: each node a combined broker and controller, one
quorum of all of them (``controller.quorum.voters``), one cluster id, internal topics replicated on three nodes.
With ``controllers=N`` the first N nodes are dedicated controllers (``process.roles=controller``, the quorum's
voters, a controller listener only) and the ``size`` others dedicated brokers (``process.roles=broker``), as a
production KRaft cluster runs (issue 22's quorum gate).

Used where one broker cannot show a behaviour: ISRs that shrink when a broker stops, min.insync.replicas, under-
replicated partitions (issue 11's cluster checks).
"""

from __future__ import annotations

from collections.abc import Mapping

from kafka_lab.broker import LabBroker, LabError, StartOutcome


class LabCluster:
    def __init__(
        self,
        version: str = "3.9.1",
        size: int = 3,
        properties: Mapping[str, object] | None = None,
        *,
        controllers: int = 0,
        controller_heap: str = "256m",
    ) -> None:
        self.controllers = controllers
        self.brokers = [
            LabBroker(
                version, properties=properties, **({"heap": controller_heap} if i < controllers else {})
            )
            for i in range(controllers + size)
        ]
        if not self.brokers[0].kraft:
            raise LabError("a lab cluster is KRaft only (3.x and later)")
        cluster_id = self.brokers[0].cluster_id
        voters = ",".join(f"{i}@127.0.0.1:{b.controller_port}" for i, b in self.nodes() if self.is_voter(i))
        rf = min(3, size)
        for i, b in self.nodes():
            b.cluster_id = cluster_id
            if controllers:
                b.set_properties(**self._dedicated(i, b))
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

    def _dedicated(self, i: int, b: LabBroker) -> dict[str, object]:
        """A dedicated controller's or broker's own listeners and role (KafkaConfig: a controller-only node
        advertises its controller listener alone; a broker-only one has no controller listener)."""
        if i <= self.controllers:
            listener = f"CONTROLLER://127.0.0.1:{b.controller_port}"
            return {"process.roles": "controller", "listeners": listener, "advertised.listeners": listener}
        return {"process.roles": "broker", "listeners": f"PLAINTEXT://127.0.0.1:{b.broker_port}"}

    def is_voter(self, node_id: int) -> bool:
        return not self.controllers or node_id <= self.controllers

    def is_broker(self, node_id: int) -> bool:
        return not self.controllers or node_id > self.controllers

    def nodes(self) -> list[tuple[int, LabBroker]]:
        return [(i + 1, b) for i, b in enumerate(self.brokers)]

    def node(self, node_id: int) -> LabBroker:
        return self.brokers[node_id - 1]

    @property
    def bootstrap(self) -> str:
        up = [b.bootstrap for i, b in self.nodes() if self.is_broker(i) and b.running]
        return ",".join(up) or self.node(self.controllers + 1).bootstrap

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
