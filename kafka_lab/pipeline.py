"""A real consume-transform-produce pipeline (seed 004's service) against a lab broker, with kafka-python.

Each instance (a "pod") is its own process: a ``read_committed`` consumer in a group, and a transactional
producer that writes the transformed records to the sink topic and sends the consumed offsets to the same
transaction (``send_offsets_to_transaction`` with the consumer's group metadata, KIP-447). Records are buffered
and flushed (one transaction) every ``flush_records`` records and at every rebalance, in the revocation
callback, while the generation is still valid: the eager protocol calls ``on_partitions_revoked`` before the
JoinGroup (kafka-python ``ConsumerCoordinator``, as the Java client), and the broker still accepts the old
generation's TxnOffsetCommit while the group prepares the rebalance.

``bug=True`` is seed 004's application bug: at revocation the buffered (in-flight) records are dropped instead
of flushed, on the belief that whoever gets the partitions next restarts from the committed offset. That holds
for partitions that move, not for those that come back to the same consumer: kafka-python keeps a partition's
``TopicPartitionState`` (its fetch position) when the new assignment holds it again
(``SubscriptionState.assign_from_subscribed``), so the consumer goes on past the dropped records and its next
transaction commits offsets beyond records that were never produced.

The pod's log (``logs/POD.log``) is the service log ``kafka-ops qos --logs`` reads: kafka-python's own INFO lines
(joining, revocation, assignment) and the pipeline's ``committed partition=T-P offsets=A-B`` lines.
"""

from __future__ import annotations

import json
import logging
import multiprocessing as mp
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

LOG_FORMAT = "%(asctime)s.%(msecs)03dZ %(levelname)s [%(name)s] %(message)s"
LOG_DATEFMT = "%Y-%m-%dT%H:%M:%S"


@dataclass(frozen=True)
class PipelineConfig:
    bootstrap: str
    source_topic: str
    sink_topic: str
    group: str
    workdir: str  # logs/POD.log and truth/POD.json go here
    bug: bool = False
    flush_records: int = 20
    max_poll_records: int = 10


def transform(value: bytes) -> bytes:
    """The pipeline's transformation: the log line's id becomes ``log_id``, its text is upper-cased."""
    doc = json.loads(value)
    return json.dumps({"log_id": doc["id"], "text": str(doc.get("text", "")).upper()}).encode()


def _logger(cfg: PipelineConfig, pod: str) -> logging.Logger:
    """Everything the process logs (kafka-python's INFO lines included) into logs/POD.log, times in UTC."""
    path = Path(cfg.workdir) / "logs" / f"{pod}.log"
    path.parent.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(path, mode="w")
    fmt = logging.Formatter(LOG_FORMAT, LOG_DATEFMT)
    fmt.converter = time.gmtime
    handler.setFormatter(fmt)
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.INFO)
    for noisy in ("kafka.net", "kafka.conn", "kafka.client_async", "kafka.cluster", "kafka.producer"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    return logging.getLogger("pipeline")


def run_pod(cfg: PipelineConfig, pod: str, stop: Any, hold: Any, holding: Any, rebalanced: Any) -> None:
    """One pipeline instance until ``stop`` is set. While ``hold`` is set it buffers without flushing (a slow
    upload: the records stay in flight) and sets ``holding`` once it buffers records of every partition it has; ``rebalanced`` is set
    at each assignment that follows a revocation."""
    from kafka import ConsumerRebalanceListener, KafkaConsumer, KafkaProducer, TopicPartition
    from kafka.coordinator.assignors.range import RangePartitionAssignor
    from kafka.structs import OffsetAndMetadata

    log = _logger(cfg, pod)
    truth: dict[str, list[list[Any]]] = {"dropped": [], "committed": []}
    lock = threading.RLock()  # kafka-python runs sync rebalance listeners on its own event-loop thread
    buffer: list[Any] = []
    consumer = KafkaConsumer(
        bootstrap_servers=cfg.bootstrap,
        group_id=cfg.group,
        client_id=pod,  # the broker's member id starts with it: the range assignor sorts members by it
        isolation_level="read_committed",
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        max_poll_records=cfg.max_poll_records,
        partition_assignment_strategy=[
            RangePartitionAssignor
        ],  # eager: every partition revoked at a rebalance
        session_timeout_ms=10000,
        heartbeat_interval_ms=500,
    )
    producer = KafkaProducer(
        bootstrap_servers=cfg.bootstrap,
        transactional_id=f"{cfg.group}-{pod}",
        client_id=f"{pod}-producer",
        acks="all",
        linger_ms=5,
    )
    producer.init_transactions()

    def flush(why: str) -> None:
        with lock:
            if not buffer:
                return
            batch = list(buffer)
            buffer.clear()
            producer.begin_transaction()
            for r in batch:
                producer.send(cfg.sink_topic, transform(r.value), key=r.key, partition=r.partition)
            ranges: dict[TopicPartition, list[int]] = {}
            for r in batch:
                tp = TopicPartition(r.topic, r.partition)
                lo_hi = ranges.setdefault(tp, [r.offset, r.offset])
                lo_hi[0], lo_hi[1] = min(lo_hi[0], r.offset), max(lo_hi[1], r.offset)
            offsets = {tp: OffsetAndMetadata(hi + 1, "", -1) for tp, (_lo, hi) in ranges.items()}
            producer.send_offsets_to_transaction(offsets, consumer.group_metadata())
            producer.commit_transaction()
            for tp, (lo, hi) in sorted(ranges.items()):
                log.info("committed partition=%s-%d offsets=%d-%d (%s)", tp.topic, tp.partition, lo, hi, why)
                truth["committed"].append([tp.topic, tp.partition, lo, hi])

    class Listener(ConsumerRebalanceListener):  # type: ignore[misc]
        revoked = False

        def on_partitions_revoked(self, revoked: set[Any]) -> None:
            with lock:
                # kafka-python calls it with an empty set before the first join as well
                Listener.revoked = Listener.revoked or bool(revoked)
                if cfg.bug and buffer:
                    # THE BUG: "whoever gets these partitions restarts from the committed offset"
                    log.info("rebalance: discarding %d buffered record(s)", len(buffer))
                    truth["dropped"].extend([r.topic, r.partition, r.offset] for r in buffer)
                    buffer.clear()
                else:
                    flush("revocation")

        def on_partitions_assigned(self, assigned: set[Any]) -> None:
            if Listener.revoked:
                rebalanced.set()

        def on_partitions_lost(self, lost: set[Any]) -> None:
            self.on_partitions_revoked(lost)

    consumer.subscribe([cfg.source_topic], listener=Listener())
    try:
        while not stop.is_set():
            polled = consumer.poll(timeout_ms=200)
            with lock:
                for recs in polled.values():
                    buffer.extend(recs)
                if hold.is_set():
                    have = {(r.topic, r.partition) for r in buffer}
                    if have and have >= {(tp.topic, tp.partition) for tp in consumer.assignment()}:
                        holding.set()
                    continue
                if len(buffer) >= cfg.flush_records or (buffer and not polled):
                    flush("batch")
        flush("shutdown")
    finally:
        consumer.close()  # eager: revokes (and so flushes) before leaving the group
        producer.close(timeout=10)
        truth_path = Path(cfg.workdir) / "truth" / f"{pod}.json"
        truth_path.parent.mkdir(parents=True, exist_ok=True)
        truth_path.write_text(json.dumps(truth))


class Pod:
    """A pipeline instance in its own process (spawned: no Kafka client state crosses a fork)."""

    _ctx = mp.get_context("spawn")

    def __init__(self, cfg: PipelineConfig, name: str, *, hold: bool = False) -> None:
        self.cfg, self.name = cfg, name
        self.stop_event = self._ctx.Event()
        self.hold_event = self._ctx.Event()
        self.holding = self._ctx.Event()
        self.rebalanced = self._ctx.Event()
        if hold:
            self.hold_event.set()
        self.proc = self._ctx.Process(
            target=run_pod,
            args=(cfg, name, self.stop_event, self.hold_event, self.holding, self.rebalanced),
            name=name,
            daemon=True,
        )

    @property
    def log_path(self) -> Path:
        return Path(self.cfg.workdir) / "logs" / f"{self.name}.log"

    def start(self) -> Pod:
        self.proc.start()
        return self

    def release(self) -> None:
        self.hold_event.clear()

    def stop(self, timeout: float = 30.0) -> int | None:
        self.stop_event.set()
        self.proc.join(timeout)
        if self.proc.is_alive():
            self.proc.kill()
            self.proc.join(5)
        return self.proc.exitcode

    def truth(self) -> dict[str, list[list[Any]]]:
        path = Path(self.cfg.workdir) / "truth" / f"{self.name}.json"
        return json.loads(path.read_text()) if path.exists() else {"dropped": [], "committed": []}


def wait_for(event: Any, what: str, timeout: float, pods: list[Pod]) -> None:
    """Wait for a pod's event; a pod that died meanwhile is an error naming it."""
    from kafka_lab.jars import LabError

    deadline = time.monotonic() + timeout
    while not event.wait(0.2):
        dead = [p.name for p in pods if p.proc.exitcode is not None]
        if dead:
            raise LabError(f"{what}: pipeline pod(s) {', '.join(dead)} exited (see their logs)")
        if time.monotonic() > deadline:
            raise LabError(f"{what}: not within {timeout:.0f}s")
