"""Real data for a lab broker, written with kafka-python, and what the broker acknowledged.

kafka-python (3.0.x in the dev extra) speaks to every lab version (2.8 ZooKeeper mode to 4.3 KRaft) for all it
is asked here: admin topic creation with per-topic configs, plain and keyed producers, the four codecs (gzip;
snappy, lz4, zstd through python-snappy, lz4 and zstandard), the idempotent producer and transactions (commit
and abort), and read_committed consumers. Nothing needed confluent-kafka.

Each produce call returns :class:`Acked`: the offsets the broker acknowledged per partition with a digest of each
record's value, so that :func:`lost` can say which acknowledged records a later read no longer returns.
"""

from __future__ import annotations

import hashlib
import random
import re
import threading
import time
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.errors import (
    IncompatibleBrokerVersion,
    InvalidConfigurationError,
    KafkaError,
    KafkaTimeoutError,
    TopicAlreadyExistsError,
    UnknownBrokerIdError,
)

from kafka_lab.jars import LabError

Kind = Literal["plain", "keyed", "gzip", "snappy", "lz4", "zstd", "idempotent", "transactional", "aborted"]
KINDS: tuple[Kind, ...] = (
    "plain",
    "keyed",
    "gzip",
    "snappy",
    "lz4",
    "zstd",
    "idempotent",
    "transactional",
    "aborted",
)
CODECS = ("gzip", "snappy", "lz4", "zstd")
ZSTD_FROM = (2, 1)  # KIP-110: zstd batches are accepted from Kafka 2.1
KIP98_FROM = (0, 11)  # KIP-98: idempotent and transactional producers (message format v2) from Kafka 0.11


def kinds_for(version: str) -> tuple[Kind, ...]:
    """The producer kinds a broker of ``version`` takes (no zstd before 2.1, no idempotent or transactional
    producer before 0.11: KIP-98)."""
    from kafka_lab.versions import parse

    v = parse(version)
    return tuple(
        k
        for k in KINDS
        if (k != "zstd" or v >= ZSTD_FROM)
        and (k not in ("idempotent", "transactional", "aborted") or v >= KIP98_FROM)
    )


def writer_kind(version: str) -> Kind:
    """The producer the lab's fault targets are written with: idempotent where the broker has it (0.11+)."""
    from kafka_lab.versions import parse

    return "idempotent" if parse(version) >= KIP98_FROM else "plain"


MIN_SEGMENT_BYTES_4X = (
    1024 * 1024
)  # 4.x refuses a smaller segment.bytes; internal.segment.bytes is the escape
_CLIENT = {"request_timeout_ms": 15000, "reconnect_backoff_max_ms": 500}


@dataclass(frozen=True)
class TopicSpec:
    name: str
    partitions: int = 1
    configs: Mapping[str, object] = field(default_factory=dict)
    replication_factor: int = 1


def digest(value: bytes | None) -> bytes:
    return hashlib.blake2b(value or b"", digest_size=8).digest()


@dataclass
class Acked:
    """What the broker acknowledged: offsets per partition (and, for transactions, committed), with each
    record's value digest; ``aborted`` holds the offsets of records whose transaction was aborted."""

    offsets: dict[TopicPartition, list[int]] = field(default_factory=lambda: defaultdict(list))
    digests: dict[tuple[TopicPartition, int], bytes] = field(default_factory=dict)
    aborted: dict[TopicPartition, list[int]] = field(default_factory=lambda: defaultdict(list))
    failed: int = 0  # sends that got no acknowledgement (e.g. the broker was killed)

    def add(self, tp: TopicPartition, offset: int, value: bytes | None) -> None:
        self.offsets[tp].append(offset)
        self.digests[(tp, offset)] = digest(value)

    def merge(self, other: Acked) -> Acked:
        for tp, offs in other.offsets.items():
            self.offsets[tp].extend(offs)
        for tp, offs in other.aborted.items():
            self.aborted[tp].extend(offs)
        self.digests |= other.digests
        self.failed += other.failed
        return self

    @property
    def count(self) -> int:
        return sum(len(v) for v in self.offsets.values())

    def last_offsets(self) -> dict[TopicPartition, int]:
        return {tp: max(offs) for tp, offs in self.offsets.items() if offs}


def admin(bootstrap: str) -> KafkaAdminClient:
    return KafkaAdminClient(bootstrap_servers=bootstrap, **_CLIENT)


def create_topics(bootstrap: str, specs: Iterable[TopicSpec], timeout: float = 30.0) -> None:
    """Create topics (replication factor 1 unless the spec says more) with their configs and wait until each has a leader.

    A ``segment.bytes`` under 1 MiB is sent as ``internal.segment.bytes`` to a broker that refuses it (4.x),
    so that small segments roll on every version.
    """
    specs = list(specs)
    client = admin(bootstrap)
    try:
        for spec in specs:
            configs = {k: str(v) for k, v in spec.configs.items()}
            request = {
                spec.name: {
                    "num_partitions": spec.partitions,
                    "replication_factor": spec.replication_factor,
                    "configs": configs,
                }
            }
            try:
                _create(client, request, timeout)
            except TopicAlreadyExistsError:
                pass
            except InvalidConfigurationError as e:
                if "segment.bytes" not in str(e) or "segment.bytes" not in configs:
                    raise
                configs["internal.segment.bytes"] = configs.pop("segment.bytes")
                _create(client, request, timeout)
        client.wait_for_topics([s.name for s in specs], timeout_ms=int(timeout * 1000))
    finally:
        client.close()


def _create(client: Any, request: dict[str, Any], timeout: float) -> None:
    """CreateTopics to the controller; asked again while kafka-python knows the controller's id before its
    address (a cluster just started: UnknownBrokerIdError for a broker its metadata does not list yet, seen in a
    CI run's 3-broker cluster)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            client.create_topics(request, timeout_ms=int(timeout * 1000))
            return
        except UnknownBrokerIdError:
            if time.monotonic() > deadline:
                raise
            time.sleep(1)


def await_topics(bootstrap: str, topics: Iterable[str], timeout: float = 30.0) -> set[str]:
    """Wait until the broker's metadata knows every topic (a restarted ZooKeeper-mode broker learns them from
    the controller shortly after its ready line); the topics still unknown at the timeout."""
    want = set(topics)
    client = admin(bootstrap)
    try:
        deadline = time.monotonic() + timeout
        while True:
            missing = want - set(client.list_topics())
            if not missing or time.monotonic() > deadline:
                return missing
            time.sleep(0.3)
    finally:
        client.close()


def values(seed: int, count: int, size: int, compressible: bool) -> list[bytes]:
    """Record values: random (incompressible, so segments fill at the expected rate) or half text."""
    rnd = random.Random(seed)
    if not compressible:
        return [rnd.randbytes(size) for _ in range(count)]
    return [(f"{seed}:{i}:".encode() + rnd.randbytes(size // 2)).ljust(size, b"=") for i in range(count)]


def _producer(bootstrap: str, kind: Kind, client_id: str) -> KafkaProducer:
    conf: dict[str, Any] = {
        "bootstrap_servers": bootstrap,
        "acks": "all",
        "linger_ms": 5,
        "client_id": client_id,
    }
    conf |= _CLIENT
    if kind in CODECS:
        conf["compression_type"] = kind
    if kind in ("transactional", "aborted"):
        conf["transactional_id"] = client_id
    else:
        # kafka-python enables idempotence by default (as the Java client does since 3.0): only "idempotent" keeps it
        conf["enable_idempotence"] = kind == "idempotent"
    return KafkaProducer(**conf)


def produce(
    bootstrap: str,
    topic: str,
    count: int,
    *,
    kind: Kind = "plain",
    value_bytes: int = 1024,
    partition: int | None = None,
    timestamp_ms: int | None = None,
    seed: int = 0,
    transactions: int = 1,
    flush_every: int | None = None,
) -> Acked:
    """Write ``count`` records with a producer of ``kind``; returns what was acknowledged.

    ``timestamp_ms`` sets every record's CreateTime (old timestamps make retention delete the segments).
    Transactional kinds split the records over ``transactions`` transactions, committed ("transactional") or
    aborted ("aborted"; the offsets go to ``Acked.aborted``). ``flush_every`` flushes after that many records,
    so that batches stay small (many batches per segment).
    """
    vals = values(seed, count, value_bytes, compressible=kind in CODECS)
    acked = Acked()
    producer = _producer(bootstrap, kind, f"lab-{topic}-{kind}-{seed}")
    try:
        txn = kind in ("transactional", "aborted")
        if txn:
            producer.init_transactions()
        chunks = _split(list(enumerate(vals)), transactions if txn else 1)
        for chunk in chunks:
            if txn:
                producer.begin_transaction()
            futures = []
            for n, (i, value) in enumerate(chunk, 1):
                key = f"key-{i % 16}".encode() if kind == "keyed" else None
                sent = producer.send(topic, value, key=key, partition=partition, timestamp_ms=timestamp_ms)
                futures.append((value, sent))
                if flush_every and n % flush_every == 0:
                    producer.flush()
            producer.flush()
            metas = [(value, f.get(timeout=30)) for value, f in futures]
            if kind == "aborted":
                producer.abort_transaction()
                for _, md in metas:
                    acked.aborted[TopicPartition(md.topic, md.partition)].append(md.offset)
                continue
            if txn:
                producer.commit_transaction()
            for value, md in metas:
                acked.add(TopicPartition(md.topic, md.partition), md.offset, value)
    finally:
        producer.close(timeout=10)
    return acked


def _split(items: list[Any], n: int) -> list[list[Any]]:
    n = max(1, min(n, len(items) or 1))
    size = -(-len(items) // n)
    return [items[i : i + size] for i in range(0, len(items), size)] or [[]]


def produce_until(
    bootstrap: str,
    topic: str,
    stop: threading.Event,
    *,
    acked: Acked | None = None,
    kind: Kind = "idempotent",
    value_bytes: int = 1024,
    seed: int = 0,
    batch: int = 50,
    drain_s: float = 8.0,
) -> Acked:
    """Produce batches until ``stop`` is set or the broker goes away (SIGKILL); returns every acknowledged
    record, filling ``acked`` as it goes (so that another thread can wait for progress before it kills the
    broker). Sends without acknowledgement are counted in ``Acked.failed``, never as acknowledged; once ``stop``
    is set or a send failed, the outstanding ones get ``drain_s`` seconds in all."""
    acked = acked if acked is not None else Acked()
    conf: dict[str, Any] = {
        "bootstrap_servers": bootstrap,
        "acks": "all",
        "linger_ms": 2,
        "enable_idempotence": kind == "idempotent",
        "max_block_ms": 3000,
        "request_timeout_ms": 3000,
        "delivery_timeout_ms": 4000,
        "reconnect_backoff_max_ms": 500,
    }
    if kind != "idempotent":
        conf["retries"] = (
            0  # the idempotent producer refuses retries=0; delivery_timeout_ms bounds its retries
        )
    producer = KafkaProducer(**conf)
    n = 0
    deadline: float | None = None
    try:
        while not stop.is_set() and not acked.failed:
            vals = values(seed + n, batch, value_bytes, compressible=False)
            n += batch
            futures = []
            try:
                for value in vals:
                    futures.append((value, producer.send(topic, value)))
            except KafkaError:
                acked.failed += len(vals) - len(futures)
            for value, f in futures:
                if deadline is None and (stop.is_set() or acked.failed):
                    deadline = time.monotonic() + drain_s
                wait = 1.0 if deadline is None else max(0.0, deadline - time.monotonic())
                try:
                    md = _wait(f, wait, stop if deadline is None else None)
                except KafkaError:
                    acked.failed += 1
                    continue
                acked.add(TopicPartition(md.topic, md.partition), md.offset, value)
    finally:
        _close(producer)
    return acked


def _close(producer: KafkaProducer) -> None:
    """Close a producer whose broker is gone: kafka-python's close() raises on the flush of what can never be
    sent and leaves the sender running (its __del__ then raises again), so force the sender down."""
    try:
        producer.close(timeout=2)
    except KafkaError:
        sender = getattr(producer, "_sender", None)
        if sender is not None:
            sender.force_close()
        producer._closed = True  # type: ignore[attr-defined]


def _wait(future: Any, step: float, stop: threading.Event | None) -> Any:
    """A send's metadata: polled in ``step`` slices while ``stop`` is unset (then one last ``step``)."""
    while True:
        try:
            return future.get(timeout=step)
        except KafkaTimeoutError:
            if stop is None or stop.is_set():
                raise


@dataclass
class ReadBack:
    """What a read returned: value digests by offset per partition, and the partitions a read error stopped
    (e.g. a batch failing its CRC check: the broker serves a corrupt batch of a segment it did not recover)."""

    records: dict[TopicPartition, dict[int, bytes]]
    errors: dict[TopicPartition, str] = field(default_factory=dict)

    @property
    def count(self) -> int:
        return sum(len(v) for v in self.records.values())


_ERROR_TP = re.compile(r"TopicPartition\(topic='([^']+)', partition=(\d+)\)")


def read_back(bootstrap: str, partitions: Iterable[TopicPartition], *, timeout: float = 60.0) -> ReadBack:
    """Every committed record now readable (read_committed, from the log start), as value digests by offset.

    A partition whose fetch fails (CRC, storage error) is paused and its error kept; the others are read on.
    """
    parts = list(partitions)
    out = ReadBack({tp: {} for tp in parts})
    if not parts:
        return out
    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap,
        isolation_level="read_committed",
        enable_auto_commit=False,
        group_id=None,
        max_partition_fetch_bytes=4 * 1024 * 1024,
        **_CLIENT,
    )
    try:
        consumer.assign(parts)
        try:
            consumer.seek_to_beginning(*parts)
            ends = consumer.end_offsets(parts)
        except IncompatibleBrokerVersion:
            # a broker before 0.11 (ListOffsets v0-1; kafka-python 3 speaks v2+): fetch from offset 0 until it
            # returns nothing more
            return _read_back_old(bootstrap, parts, out, timeout)
        deadline = time.monotonic() + timeout
        moved: dict[TopicPartition, tuple[int, float]] = {}
        while pending := [tp for tp in parts if tp not in out.errors and consumer.position(tp) < ends[tp]]:
            if time.monotonic() > deadline:
                behind = {str(tp): (consumer.position(tp), ends[tp]) for tp in pending}
                raise LabError(f"read_back did not reach the end offsets within {timeout:.0f} s: {behind}")
            try:
                _poll_into(consumer, out, 1000)
            except _Unattributed as e:
                unread = e
                break
            # a fetch that fails without an error the client raises again (kafka-python after it raised one
            # CorruptRecordError): the partition stays where it is; kept as its error after STUCK_S
            now, seen = time.monotonic(), {tp: consumer.position(tp) for tp in pending}
            for tp in pending:
                if moved.get(tp, (None, 0.0))[0] != seen[tp]:
                    moved[tp] = (seen[tp], now)
                elif now - moved[tp][1] > STUCK_S:
                    out.errors[tp] = f"no record past offset {seen[tp]} within {STUCK_S:.0f} s"
                    consumer.pause(tp)
        else:
            return out
    finally:
        consumer.close()
    # an error the client did not attribute to a partition (kafka-python raises CorruptRecordError 'Unexpected error
    # while fetching data' without one: a zero-filled segment the broker never re-read, issue 36 §2): read each
    # partition alone, keeping the error of the one(s) that fail
    if len(parts) == 1:
        out.errors[parts[0]] = f"{type(unread.error).__name__}: {unread.error}"
        return out
    for tp in parts:
        one = read_back(bootstrap, [tp], timeout=timeout)
        out.records[tp] = one.records[tp]
        out.errors.update(one.errors)
    return out


STUCK_S = 10.0


class _Unattributed(Exception):
    def __init__(self, error: KafkaError) -> None:
        super().__init__(str(error))
        self.error = error


def _poll_into(consumer: KafkaConsumer, out: ReadBack, timeout_ms: int) -> int:
    """One poll's records into ``out`` (how many); a partition whose fetch fails is paused, its error kept."""
    try:
        polled = consumer.poll(timeout_ms=timeout_ms)
    except KafkaError as e:
        m = _ERROR_TP.search(str(e))
        if m is None:
            raise _Unattributed(e) from e
        tp = TopicPartition(m[1], int(m[2]))
        out.errors[tp] = f"{type(e).__name__}: {e}"
        consumer.pause(tp)
        return 0
    for tp, records in polled.items():
        for r in records:
            out.records[tp][r.offset] = digest(r.value)
    return sum(len(records) for records in polled.values())


def _read_back_old(bootstrap: str, parts: list[TopicPartition], out: ReadBack, timeout: float) -> ReadBack:
    """read_back for a broker without ListOffsets v2 (0.10.2): from offset 0 until 3 s pass with no record
    (not read_committed either: that Fetch has no isolation level, and such a broker has no transactions)."""
    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap,
        enable_auto_commit=False,
        group_id=None,
        max_partition_fetch_bytes=4 * 1024 * 1024,
        **_CLIENT,
    )
    try:
        return _poll_old(consumer, parts, out, timeout)
    finally:
        consumer.close()


def _poll_old(
    consumer: KafkaConsumer, parts: list[TopicPartition], out: ReadBack, timeout: float
) -> ReadBack:
    consumer.assign(parts)
    for tp in parts:
        consumer.seek(tp, 0)
    deadline = time.monotonic() + timeout
    quiet_since = time.monotonic()
    while time.monotonic() - quiet_since < 3.0:
        if time.monotonic() > deadline:
            raise LabError(f"read_back did not end within {timeout:.0f} s")
        if _poll_into(consumer, out, 500):
            quiet_since = time.monotonic()
    return out


def lost(acked: Acked, read: ReadBack) -> dict[TopicPartition, list[int]]:
    """Acknowledged offsets a read no longer returned (or returned with another value), per partition."""
    out: dict[TopicPartition, list[int]] = {}
    for tp, offs in acked.offsets.items():
        got = read.records.get(tp, {})
        gone = [o for o in offs if got.get(o) != acked.digests[(tp, o)]]
        if gone:
            out[tp] = gone
    return out


def visible_aborted(acked: Acked, read: ReadBack) -> dict[TopicPartition, list[int]]:
    """Offsets of aborted records a read_committed read returned anyway (should be none)."""
    out = {tp: [o for o in offs if o in read.records.get(tp, {})] for tp, offs in acked.aborted.items()}
    return {tp: offs for tp, offs in out.items() if offs}


def offsets(
    bootstrap: str, partitions: Iterable[TopicPartition], wait_s: float = 45
) -> dict[TopicPartition, tuple[int, int]]:
    """(log start offset, log end offset) per partition, as the broker reports them now; a partition without a
    leader is asked again for up to ``wait_s`` (then KeyError)."""
    parts = list(partitions)
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, group_id=None, **_CLIENT)
    try:
        deadline = time.monotonic() + wait_s
        while True:
            try:
                starts = consumer.beginning_offsets(parts)
                ends = consumer.end_offsets(parts)
                break
            except KeyError:
                # kafka-python drops a partition whose leader the broker (seen on 1.1.1 just started, and on
                # 2.0.1 at load average 17+, where 5 s did not suffice) has not elected yet from its ListOffsets
                # result: ask again, for a while
                if time.monotonic() > deadline:
                    raise
                time.sleep(1)
    finally:
        consumer.close()
    return {tp: (starts[tp], ends[tp]) for tp in parts}
