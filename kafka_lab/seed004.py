"""Seed 004 for real: the transactional pipeline of :mod:`kafka_lab.pipeline` on a lab broker, with a
rebalance forced while pod ``pipeline-a`` holds an in-flight batch.

1. ``SOURCE`` (2 partitions) gets ``PHASE1`` records per partition; pod ``pipeline-a`` alone consumes them all.
2. ``pipeline-a`` holds (a slow upload): it buffers ``PHASE2`` more records per partition without flushing.
3. pod ``pipeline-b`` starts: the group rebalances; ``pipeline-a`` keeps partition 0 (the range assignor sorts
   the members by member id, which starts with the client id) and ``pipeline-b`` gets partition 1.
   With the bug, ``pipeline-a`` dropped its buffer at the revocation: partition 1's dropped records are read
   again by ``pipeline-b`` from the committed offset, partition 0's are lost (its fetch position survives).
4. ``PHASE3`` more records per partition; both pods commit them (``pipeline-a`` commits offsets past the lost
   records); ``pipeline-b`` stops (a second rebalance), then ``pipeline-a``; the broker stops cleanly.

``python -m kafka_lab.seed004 DIR [bug|clean]`` runs it and prints the ``kafka-ops qos`` command line.
"""

from __future__ import annotations

import json
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.errors import KafkaError

from kafka_lab.broker import LabBroker
from kafka_lab.jars import LabError
from kafka_lab.pipeline import PipelineConfig, Pod, wait_for
from kafka_lab.produce import TopicSpec, create_topics

SOURCE, SINK, GROUP = "logs", "enriched", "enricher"
PARTITIONS = 2
PHASE1, PHASE2, PHASE3 = 40, 30, 20
A, B = "pipeline-a", "pipeline-b"


@dataclass
class Seed004Run:
    workdir: Path
    data_dir: Path  # the stopped broker's log dir (the --source of kafka-ops qos)
    log_files: list[Path]
    bug: bool
    source: dict[tuple[int, int], str] = field(default_factory=dict)  # (partition, offset) -> id
    sink_ids: list[str] = field(default_factory=list)  # read_committed, with kafka-python
    dropped: list[tuple[int, int]] = field(default_factory=list)  # what pipeline-a discarded (ground truth)
    seconds: dict[str, float] = field(default_factory=dict)

    @property
    def lost(self) -> list[tuple[int, int]]:
        """(partition, offset) of source records the sink does not have, per the kafka-python oracle."""
        have = set(self.sink_ids)
        return sorted(k for k, v in self.source.items() if v not in have)

    def qos_args(self) -> list[str]:
        args = ["qos", "--source", str(self.data_dir), "--topic", SOURCE, "--source-id", "value:id"]
        args += ["--sink-topic", SINK, "--sink-id", "value:log_id"]
        for f in self.log_files:
            args += ["--logs", str(f)]
        return args


def _produce(bootstrap: str, per_partition: int, start: int) -> None:
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=5)
    try:
        for p in range(PARTITIONS):
            for i in range(start, start + per_partition):
                doc = {"id": f"{SOURCE}-{p}-{i}", "text": f"line {i} of partition {p}"}
                producer.send(SOURCE, json.dumps(doc).encode(), partition=p)
        producer.flush(30)
    finally:
        producer.close(timeout=10)


def _committed(admin: KafkaAdminClient) -> dict[int, int]:
    try:
        got = admin.list_group_offsets(GROUP).get(GROUP, {})
    except KafkaError:  # the group coordinator (__consumer_offsets) is created on first use: retry
        return {}
    return {tp.partition: om.offset for tp, om in got.items() if tp.topic == SOURCE}


def _wait_drained(bootstrap: str, end: int, pods: list[Pod], timeout: float = 60.0) -> None:
    """Until the group's committed offsets reach ``end`` on every partition (the source has no markers)."""
    deadline = time.monotonic() + timeout
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        while (got := _committed(admin)) != dict.fromkeys(range(PARTITIONS), end):
            dead = [p.name for p in pods if p.proc.exitcode is not None]
            if dead or time.monotonic() > deadline:
                why = f"pod(s) {', '.join(dead)} exited" if dead else f"not within {timeout:.0f}s"
                raise LabError(f"the pipeline did not commit up to offset {end}: {got} ({why})")
            time.sleep(0.2)
    finally:
        admin.close()


def _read_all(bootstrap: str, topic: str) -> list[tuple[int, int, bytes]]:
    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap, isolation_level="read_committed", enable_auto_commit=False, group_id=None
    )
    out: list[tuple[int, int, bytes]] = []
    try:
        parts = [TopicPartition(topic, p) for p in range(PARTITIONS)]
        consumer.assign(parts)
        consumer.seek_to_beginning(*parts)
        ends = consumer.end_offsets(parts)  # read_committed: the last stable offset
        deadline = time.monotonic() + 30
        while any(consumer.position(tp) < ends[tp] for tp in parts):
            if time.monotonic() > deadline:
                raise LabError(f"reading {topic} back did not reach its end offsets")
            for tp, recs in consumer.poll(timeout_ms=500).items():
                out.extend((tp.partition, r.offset, r.value) for r in recs)
    finally:
        consumer.close()
    return out


def run(workdir: Path, *, bug: bool, version: str = "3.9.1") -> Seed004Run:
    """The whole scenario; the broker is stopped (cleanly) when it returns."""
    workdir.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    with LabBroker(version) as broker:
        broker.start()
        seconds = {"broker start": time.monotonic() - t0}
        create_topics(broker.bootstrap, [TopicSpec(SOURCE, PARTITIONS), TopicSpec(SINK, PARTITIONS)])
        cfg = PipelineConfig(broker.bootstrap, SOURCE, SINK, GROUP, str(workdir), bug=bug)
        a, b = Pod(cfg, A), Pod(cfg, B)
        pods = [a, b]
        t1 = time.monotonic()
        try:
            _produce(broker.bootstrap, PHASE1, 0)
            a.start()
            _wait_drained(broker.bootstrap, PHASE1, pods)
            a.hold_event.set()
            _produce(broker.bootstrap, PHASE2, PHASE1)
            wait_for(a.holding, f"{A} buffering both partitions", 30, pods)
            b.start()
            wait_for(a.rebalanced, f"the rebalance after {B} joined", 60, pods)
            a.release()
            _produce(broker.bootstrap, PHASE3, PHASE1 + PHASE2)
            _wait_drained(broker.bootstrap, PHASE1 + PHASE2 + PHASE3, pods)
            b.stop()
            a.stop()
        finally:
            for p in pods:
                if p.proc.pid is not None and p.proc.exitcode is None:
                    p.proc.kill()
        seconds["pipeline"] = time.monotonic() - t1
        source = {
            (p, o): json.loads(v)["id"] for p, o, v in _read_all(broker.bootstrap, SOURCE) if v is not None
        }
        sink_ids = [
            json.loads(v)["log_id"] for _p, _o, v in _read_all(broker.bootstrap, SINK) if v is not None
        ]
        broker.stop()
        data = workdir / "data"
        if data.exists():
            shutil.rmtree(data)
        shutil.copytree(broker.log_dirs[0], data)  # the broker's lab dir goes with close()
    seconds["total"] = time.monotonic() - t0
    truth = a.truth()
    return Seed004Run(
        workdir,
        data,
        [a.log_path, b.log_path],
        bug,
        source,
        sink_ids,
        sorted((p, o) for t, p, o in truth["dropped"] if t == SOURCE),
        seconds,
    )


def main(argv: list[str]) -> int:
    if len(argv) not in (1, 2) or (len(argv) == 2 and argv[1] not in ("bug", "clean")):
        print("usage: python -m kafka_lab.seed004 DIR [bug|clean]", file=sys.stderr)
        return 2
    try:
        r = run(Path(argv[0]), bug=len(argv) == 1 or argv[1] == "bug")
    except (LabError, KafkaError) as exc:
        print(f"seed004: {exc}", file=sys.stderr)
        return 1
    print(f"lost (kafka-python read_committed oracle): {r.lost}")
    print(f"dropped by {A} at the rebalance: {r.dropped}")
    print("kafka-ops " + " ".join(r.qos_args()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
