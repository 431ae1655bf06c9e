"""A consuming pipeline with seed 004's failures, for `kafka-ops qos` to find.

A broker host holds a transactional topic (``simulate_host``; aborted transactions included); two pods of a
service consume it read_committed, upload each partition's records in chunks as files (the sink) and log each
upload (``uploaded partition=logs-1 offsets=120-139``) next to the Kafka consumer's own INFO lines. Two
rebalances happen:

1. at 40% of the span the group rebalances and pod ``ingest-0`` gets partition 1 back: the records it had
   fetched but not handed to its stream (``lost``) are dropped while its position stays past them (seed 004's
   buffered-records bug): they never reach the sink, and its next upload starts after them;
2. at 75% pod ``ingest-1`` uploads its last chunk of partition 0 and dies before committing it: ``ingest-0``
   takes partition 0 over from the committed offset and uploads that chunk again (``duplicated``).

Everything else reaches the sink exactly once. The ground truth is returned (and written to
``pipeline.json``).
"""

from __future__ import annotations

import csv
import datetime as dt
import json
import os
from dataclasses import asdict, dataclass, field

from kafka_ops.simulator.host import HOUR, HostSpec, SimulatedHost, TopicSpec, simulate_host

SINK_FORMATS = ("parquet", "avro", "json", "csv")


@dataclass
class PipelineSpec:
    topic: str = "logs"
    partitions: int = 3
    records_per_partition: int = 300
    span_ms: int = 3 * HOUR
    chunk: int = 20  # records per uploaded file
    lag_ms: int = 2000  # processing lag behind the record timestamp
    lost: int = 7  # records dropped at the first rebalance
    sink_format: str = "parquet"
    now_ms: int = 1_790_000_000_000
    seed: int = 7


@dataclass
class SimulatedPipeline:
    root: str
    host: SimulatedHost
    data_dir: str  # the broker's data (segments of the topic)
    sink_dir: str
    sink_format: str
    logs: list[str]  # one log file per pod
    topic: str
    rebalances_ms: list[int]
    lost: list[tuple[int, int, str]] = field(default_factory=list)  # (partition, offset, id)
    duplicated: list[tuple[int, int, str]] = field(default_factory=list)
    gap: tuple[int, int, int] | None = None  # (partition, first, last offset) the uploads skip
    rewind: tuple[int, int, int] | None = None  # (partition, first, last offset) consumed twice
    delivered: int = 0  # records a read_committed consumer gets from the topic

    def to_dict(self) -> dict[str, object]:
        d = asdict(self)
        d.pop("host")
        return d


def _stamp(ms: int) -> str:
    t = dt.datetime.fromtimestamp(ms / 1000, dt.UTC)
    return t.strftime("%Y-%m-%d %H:%M:%S,") + f"{t.microsecond // 1000:03d}"


class _Pods:
    def __init__(self) -> None:
        self.lines: dict[str, list[tuple[int, str]]] = {"ingest-0": [], "ingest-1": []}
        self.client = {"ingest-0": "consumer-ingest-1", "ingest-1": "consumer-ingest-1"}

    def consumer(self, pod: str, ms: int, msg: str, logger: str) -> None:
        prefix = f"[Consumer clientId={self.client[pod]}, groupId=ingest]"
        self.lines[pod].append(
            (ms, f"[{_stamp(ms)}] INFO {prefix} {msg} (org.apache.kafka.clients.consumer.internals.{logger})")
        )

    def service(self, pod: str, ms: int, msg: str) -> None:
        self.lines[pod].append((ms, f"[{_stamp(ms)}] INFO {msg} (com.example.ingest.Rotator)"))

    def rebalance(self, pod: str, ms: int, revoked: list[str], assigned: list[str], generation: int) -> None:
        self.consumer(
            pod, ms, "Request joining group due to: group is already rebalancing", "AbstractCoordinator"
        )
        self.consumer(
            pod,
            ms + 5,
            f"Revoke previously assigned partitions {', '.join(revoked)}",
            "ConsumerRebalanceListenerInvoker",
        )
        self.consumer(pod, ms + 10, "(Re-)joining group", "AbstractCoordinator")
        self.consumer(
            pod, ms + 900,
            f"Successfully joined group with generation Generation{{generationId={generation}, "
            f"memberId='{self.client[pod]}-{pod}', protocol='range'}}", "AbstractCoordinator",
        )  # fmt: skip
        self.consumer(
            pod,
            ms + 950,
            f"Adding newly assigned partitions: {', '.join(assigned)}",
            "ConsumerRebalanceListenerInvoker",
        )

    def start(self, pod: str, ms: int, tp: str, offset: int, committed: bool) -> None:
        pos = f"FetchPosition{{offset={offset}, offsetEpoch=Optional[0], currentLeader=LeaderAndEpoch{{leader=Optional[broker-1:9092 (id: 1 rack: null)], epoch=0}}}}"
        if committed:
            self.consumer(
                pod, ms, f"Setting offset for partition {tp} to the committed offset {pos}", "ConsumerUtils"
            )
        else:
            self.consumer(
                pod, ms, f"Resetting offset for partition {tp} to position {pos}.", "SubscriptionState"
            )

    def write(self, folder: str) -> list[str]:
        os.makedirs(folder, exist_ok=True)
        paths = []
        for pod, lines in self.lines.items():
            path = os.path.join(folder, f"{pod}.log")
            with open(path, "w") as f:
                f.writelines(text + "\n" for _ms, text in sorted(lines, key=lambda x: x[0]))
            paths.append(path)
        return paths


class _Sink:
    def __init__(self, folder: str, fmt: str) -> None:
        if fmt not in SINK_FORMATS:
            raise ValueError(f"sink format must be one of {', '.join(SINK_FORMATS)}")
        self.folder, self.fmt, self.n = folder, fmt, 0
        os.makedirs(folder, exist_ok=True)

    def upload(self, pod: str, partition: int, rows: list[dict[str, object]]) -> str:
        self.n += 1
        name = os.path.join(self.folder, f"date=2026-09-21/{pod}-p{partition}-{self.n:04d}.{self.fmt}")
        os.makedirs(os.path.dirname(name), exist_ok=True)
        if self.fmt == "json":
            with open(name, "w") as f:
                f.writelines(json.dumps(r) + "\n" for r in rows)
        elif self.fmt == "csv":
            with open(name, "w", newline="") as f:
                w = csv.DictWriter(f, fieldnames=list(rows[0]))
                w.writeheader()
                w.writerows(rows)
        elif self.fmt == "parquet":
            import pyarrow as pa
            import pyarrow.parquet as pq

            pq.write_table(pa.Table.from_pylist(rows), name)
        else:
            import fastavro

            schema = {
                "type": "record", "name": "LogEntry", "namespace": "com.example.ingest",
                "fields": [
                    {"name": "log_id", "type": "string"}, {"name": "user", "type": "string"},
                    {"name": "message", "type": ["null", "string"]}, {"name": "kafka_partition", "type": "int"},
                    {"name": "kafka_offset", "type": "long"},
                    {"name": "ingested_at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
                ],
            }  # fmt: skip
            recs = [
                {**r, "ingested_at": dt.datetime.fromtimestamp(int(r["ingested_at"]) / 1000, dt.UTC)}
                for r in rows
            ]
            with open(name, "wb") as f:
                fastavro.writer(f, fastavro.parse_schema(schema), recs)
        return name


def simulate_pipeline(root: str, spec: PipelineSpec | None = None) -> SimulatedPipeline:
    from kafka_ops.spark.partitions import READ_COMMITTED, discover, iter_records_of

    spec = spec or PipelineSpec()
    if spec.partitions < 3:
        raise ValueError("the pipeline needs at least 3 partitions")
    root = os.path.abspath(root)
    host = simulate_host(
        os.path.join(root, "broker"),
        HostSpec(
            now_ms=spec.now_ms,
            seed=spec.seed,
            topics=[
                TopicSpec(
                    spec.topic, partitions=spec.partitions, records_per_partition=spec.records_per_partition,
                    batch_records=5, producer="transactional", abort_every=5, span_ms=spec.span_ms,
                    value_bytes=0,  # values are plain JSON documents
                ),
            ],
        ),
    )  # fmt: skip
    data_dir = os.path.join(host.root, "data")
    records: dict[int, list[tuple[int, int, str]]] = {}
    for part in discover([data_dir], [spec.topic]):
        records[part.partition] = [
            (r.offset, r.timestamp_ms, json.loads(r.value or b"{}")["id"])
            for r in iter_records_of(part, READ_COMMITTED)
        ]
    start = spec.now_ms - spec.span_ms
    t1 = start + spec.span_ms * 40 // 100
    t2 = start + spec.span_ms * 75 // 100
    tp = [f"{spec.topic}-{p}" for p in range(spec.partitions)]
    out = SimulatedPipeline(
        root, host, data_dir, os.path.join(root, "sink"), spec.sink_format, [], spec.topic, [t1, t2],
        delivered=sum(len(v) for v in records.values()),
    )  # fmt: skip
    pods, sink = _Pods(), _Sink(out.sink_dir, spec.sink_format)
    a, b = "ingest-0", "ingest-1"
    others = list(range(2, spec.partitions))
    # owners per phase: [start, t1), [t1, t2), [t2, end)
    owners = {0: (a, b, a), 1: (a, a, a)} | {p: (b, a, a) for p in others}
    pods.consumer(a, start - 60_000, "(Re-)joining group", "AbstractCoordinator")
    pods.consumer(
        a,
        start - 59_000,
        f"Adding newly assigned partitions: {tp[0]}, {tp[1]}",
        "ConsumerRebalanceListenerInvoker",
    )
    pods.consumer(
        b,
        start - 59_000,
        f"Adding newly assigned partitions: {', '.join(tp[2:])}",
        "ConsumerRebalanceListenerInvoker",
    )
    pods.rebalance(a, t1, [tp[0], tp[1]], [tp[1], *tp[2:]], 2)
    pods.rebalance(b, t1, tp[2:], [tp[0]], 2)
    pods.rebalance(a, t2, [tp[1], *tp[2:]], tp, 3)

    def upload(pod: str, p: int, chunk: list[tuple[int, int, str]], at: int) -> None:
        rows = [
            {"log_id": i, "user": f"user-{o % 17}", "message": f"entry {i}", "kafka_partition": p,
             "kafka_offset": o, "ingested_at": ts}
            for o, ts, i in chunk
        ]  # fmt: skip
        name = sink.upload(pod, p, rows)
        pods.service(
            pod, at, f"uploaded partition={tp[p]} offsets={chunk[0][0]}-{chunk[-1][0]} records={len(chunk)} "
            f"file={os.path.basename(name)}",
        )  # fmt: skip

    for p, recs in sorted(records.items()):
        phases = [(start - 1, t1), (t1, t2), (t2, spec.now_ms + 1)]
        committed = 0
        i = 0  # next record to process
        for ph, (lo, hi) in enumerate(phases):
            pod = owners[p][ph]
            kept = ph > 0 and owners[p][ph - 1] == pod
            if not kept:
                pods.start(pod, lo + 1000 if ph else start - 58_000, tp[p], committed, committed=ph > 0)
                i = next((k for k, r in enumerate(recs) if r[0] >= committed), len(recs))
            elif p == 1 and ph == 1:
                # seed 004: the records buffered before the rebalance are dropped; the position stays past them
                lost = recs[i : i + spec.lost]
                out.lost = [(p, o, rid) for o, _ts, rid in lost]
                after = i + len(lost)
                out.gap = (p, recs[i - 1][0] + 1, recs[after][0] - 1)
                i = after
            chunk: list[tuple[int, int, str]] = []
            last_chunk: list[tuple[int, int, str]] = []
            before_last = committed
            while i < len(recs) and recs[i][1] < hi:
                chunk.append(recs[i])
                i += 1
                if len(chunk) == spec.chunk:
                    upload(pod, p, chunk, max(chunk[-1][1] + spec.lag_ms, lo + 2000))
                    before_last, committed, last_chunk = committed, chunk[-1][0] + 1, chunk
                    chunk = []
            if chunk:  # flushed at the rebalance (onRevoke) or at the end
                upload(pod, p, chunk, max(hi - 1 if ph < 2 else chunk[-1][1] + spec.lag_ms, lo + 2000))
                before_last, committed, last_chunk = committed, chunk[-1][0] + 1, chunk
            if p == 0 and ph == 1:
                # its last upload was never committed (the pod died): the next owner starts before it
                out.duplicated = [(p, o, rid) for o, _ts, rid in last_chunk]
                out.rewind = (p, before_last, last_chunk[-1][0])
                committed = before_last
    out.logs = pods.write(os.path.join(root, "logs"))
    with open(os.path.join(root, "pipeline.json"), "w") as f:
        json.dump(out.to_dict(), f, indent=2)
    return out


def main() -> None:  # pragma: no cover - a demo helper: python -m kafka_ops.simulator.pipeline DIR [FORMAT]
    import sys

    fmt = sys.argv[2] if len(sys.argv) > 2 else "parquet"
    p = simulate_pipeline(sys.argv[1], PipelineSpec(sink_format=fmt))
    print(f"topic {p.topic}: {p.data_dir}\nsink ({p.sink_format}): {p.sink_dir}\nlogs: {', '.join(p.logs)}")
    print(f"lost {len(p.lost)} record(s) of partition 1, duplicated {len(p.duplicated)} of partition 0")


if __name__ == "__main__":  # pragma: no cover
    main()
