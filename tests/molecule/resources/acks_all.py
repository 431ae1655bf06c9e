"""The client side of the real-broker Molecule scenario (roles/kafka_rolling_restart/molecule/brokers), run on the
controller with kafka-python:

  acks_all.py topics BOOTSTRAP            create `orders` (RF 3, min.insync.replicas=3), `events` (RF 3, min 2)
  acks_all.py stale BOOTSTRAP NODE DIR OTHER
                                          create `stale` (1 partition, its only replica on broker NODE), alone
                                          in NODE's log dir DIR (its other replicas moved to OTHER)
  acks_all.py lower BOOTSTRAP             set min.insync.replicas=2 on `orders`
  acks_all.py produce BOOTSTRAP DIR       write numbered records to `events` with acks=all until DIR/stop exists;
                                          every acknowledged number goes to DIR/acked (one per line), every
                                          failed send to DIR/failed; DIR/summary.json at the end
  acks_all.py check BOOTSTRAP DIR         read `events` from the start: exit 1 and name them if an acknowledged
                                          record is missing

Every client takes its security settings from the Kafka client properties file named by KAFKA_OPS_CLIENT_CONFIG
when set (the scenario's SASL_SSL client.properties, read as `kafka-ops cluster --command-config` reads it).

An acknowledged record (acks=all) is one that every in-sync replica had; a roll that loses one is the bug the
scenario looks for.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import ConfigResource, ConfigResourceType, NewTopic
from kafka.errors import TopicAlreadyExistsError

from kafka_ops.cluster.client import read_command_config

TOPIC = "events"


def security() -> dict[str, object]:
    path = os.environ.get("KAFKA_OPS_CLIENT_CONFIG", "")
    return read_command_config(path) if path else {}


def _create(bootstrap: str, topics: list[NewTopic]) -> None:
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=30000, **security())
    try:
        admin.create_topics(topics, timeout_ms=60000)
    except TopicAlreadyExistsError:  # prepare.yml run again (molecule prepare --force)
        pass
    deadline = time.monotonic() + 60
    names = {t.name for t in topics}
    while time.monotonic() < deadline:  # metadata on every broker, each partition with a leader
        found = {t["name"]: t for t in admin.describe_topics(sorted(names))}
        if all(found.get(n, {}).get("partitions") and all(p["leader_id"] >= 0 for p in found[n]["partitions"])
               for n in names):  # fmt: skip
            break
        time.sleep(1)
    admin.close()


def topics(bootstrap: str) -> None:
    _create(
        bootstrap,
        [
            NewTopic("orders", 2, 3, topic_configs={"min.insync.replicas": "3"}),
            NewTopic(TOPIC, 3, 3, topic_configs={"min.insync.replicas": "2"}),
        ],
    )


def stale(bootstrap: str, node: int, alone_in: str, others_to: str) -> None:
    """`stale` (RF 1) on broker ``node``, its replica moved into the log dir ``alone_in`` and the broker's other
    replicas out of it into ``others_to`` (AlterReplicaLogDirs: the broker copies them, then swaps)."""
    _create(bootstrap, [NewTopic("stale", replica_assignments={0: [node]})])
    moves = {("stale", 0, node): alone_in}
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=30000, **security())
    for t in admin.describe_topics(["orders", TOPIC]):
        for p in t["partitions"]:
            if node in p["replica_nodes"]:
                moves[(t["name"], p["partition_index"], node)] = others_to
    errors = admin.alter_replica_log_dirs(moves)
    admin.close()
    bad = {str(k): str(v) for k, v in errors.items() if getattr(v, "errno", 0)}
    if bad:
        raise SystemExit(f"alter_replica_log_dirs: {bad}")


def lower(bootstrap: str) -> None:
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=30000, **security())
    admin.alter_configs(
        [ConfigResource(ConfigResourceType.TOPIC, "orders", configs={"min.insync.replicas": "2"})]
    )
    admin.close()


def produce(bootstrap: str, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    producer = KafkaProducer(
        bootstrap_servers=bootstrap, acks="all", retries=2147483647, max_in_flight_requests_per_connection=1,
        request_timeout_ms=15000, delivery_timeout_ms=120000, linger_ms=5, reconnect_backoff_max_ms=2000,
        **security(),
    )  # fmt: skip
    acked = (out / "acked").open("a", buffering=1)
    failed = (out / "failed").open("a", buffering=1)
    counts = {"sent": 0, "acked": 0, "failed": 0}

    def ok(n: int):  # type: ignore[no-untyped-def]
        def cb(_meta: object) -> None:
            acked.write(f"{n}\n")
            counts["acked"] += 1

        return cb

    def bad(n: int):  # type: ignore[no-untyped-def]
        def cb(exc: BaseException) -> None:
            failed.write(f"{n} {type(exc).__name__}: {exc}\n")
            counts["failed"] += 1

        return cb

    n = 0
    give_up = (
        time.monotonic() + 3600
    )  # a scenario that failed never writes DIR/stop: do not outlive it by much
    while not (out / "stop").exists() and time.monotonic() < give_up:
        fut = producer.send(TOPIC, value=str(n).encode(), key=str(n % 7).encode())
        fut.add_callback(ok(n))
        fut.add_errback(bad(n))
        counts["sent"] += 1
        n += 1
        # 10 records a second: hundreds across every restart, and the three brokers' TLS and replication stay a
        # small load beside the lab (at 50 a second they took ~0.16 of a core each through the scenario)
        time.sleep(0.1)
    producer.flush(timeout=120)
    producer.close(timeout=30)
    (out / "summary.json").write_text(json.dumps(counts))


def check(bootstrap: str, out: Path) -> int:
    acked = {int(x) for x in (out / "acked").read_text().split()}
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, consumer_timeout_ms=10000,
                             **security())  # fmt: skip
    parts = [TopicPartition(TOPIC, p) for p in sorted(consumer.partitions_for_topic(TOPIC) or [])]
    consumer.assign(parts)
    consumer.seek_to_beginning(*parts)
    end = consumer.end_offsets(parts)
    seen: set[int] = set()
    deadline = time.monotonic() + 120
    while any(consumer.position(tp) < end[tp] for tp in parts) and time.monotonic() < deadline:
        for records in consumer.poll(timeout_ms=1000).values():
            seen.update(int(r.value) for r in records)
    consumer.close()
    missing = sorted(acked - seen)
    summary = json.loads((out / "summary.json").read_text()) if (out / "summary.json").exists() else {}
    print(json.dumps({"acked": len(acked), "in_topic": len(seen), "missing": missing[:20], "lost": len(missing),
                      "producer": summary}))  # fmt: skip
    return 1 if missing or not acked else 0


def main(argv: list[str]) -> int:
    cmd, bootstrap, *rest = argv
    if cmd == "topics":
        topics(bootstrap)
    elif cmd == "stale":
        stale(bootstrap, int(rest[0]), rest[1], rest[2])
    elif cmd == "lower":
        lower(bootstrap)
    elif cmd == "produce":
        produce(bootstrap, Path(rest[0]))
    elif cmd == "check":
        return check(bootstrap, Path(rest[0]))
    else:
        print(f"acks_all.py: unknown command {cmd}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
