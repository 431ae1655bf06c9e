"""A broker host as a real broker leaves it, with the failures of the seed incidents planted on request.

Layout written under ROOT (every path absolute, so the files can be audited in place)::

    ROOT/etc/kafka/server.properties        log.dirs, retention, segment and recovery settings
    ROOT/etc/kafka/topic-configs.json       per-topic overrides (retention.ms, cleanup.policy, segment.bytes)
    ROOT/etc/systemd/system/kafka.service   the broker unit (TimeoutStopSec unset unless good_systemd)
    ROOT/var/log/kafka/server.log           broker log lines matching what was planted
    ROOT/var/log/kafka/log-cleaner.log
    ROOT/data/kafka-<n>/                    the log dirs
    ROOT/host.json                          manifest: what was written and which failure lies where

Time is simulated: records are stamped between ``now - span`` and ``now``; file mtimes are the time of the
segment's last append, as on a real host.
"""

from __future__ import annotations

import base64
import json
import os
import random
import struct
from dataclasses import asdict, dataclass, field

from kafka_ops.engine import checkpoints as ckpt
from kafka_ops.engine.builder import NewRecord, build_batch, control_batch
from kafka_ops.engine.compression import CODEC_IDS
from kafka_ops.engine.indexes import OFFSET_ENTRY, TIME_ENTRY, AbortedTxn, preallocated_size
from kafka_ops.engine.layout import segment_file_name
from kafka_ops.simulator.writer import PartitionWriter, SegmentConfig

DAY = 24 * 3600 * 1000
HOUR = 3600 * 1000


@dataclass
class TopicSpec:
    name: str
    partitions: int = 3
    records_per_partition: int = 400
    value_bytes: int = 200
    batch_records: int = 10
    codec: str = "none"
    log_append_time: bool = False
    producer: str = "plain"  # plain | idempotent | transactional
    abort_every: int = 0  # transactional: every Nth transaction is aborted
    # transactional: producers whose transactions interleave in each partition (their batches alternate), and
    # whether the first producer's last transaction is left open (no marker: a producer killed mid-transaction)
    txn_producers: int = 1
    open_txn: bool = False
    cleanup_policy: str = "delete"
    retention_ms: int = 7 * DAY
    span_ms: int = 2 * DAY  # records spread over [now - span, now]
    segment_bytes: int | None = None  # topic override of log.segment.bytes
    key_space: int = 1000


@dataclass
class Failures:
    """One flag per failure of the seeds (the audit check that must find it in brackets)."""

    unreadable_timeindex: bool = False  # seed 000: a .timeindex owned by another user, mode 0600 [PERM001]
    untrimmed_timeindex: bool = (
        False  # seed 000/KAFKA-10207: rolled segment, zero-padded indexes [RET001, IDX004]
    )
    unclean_shutdown: bool = False  # seed 002: no marker, recovery point behind the log end [SHUT001]
    bad_index_size: bool = False  # .index size not a multiple of 8 [IDX001]
    index_below_base: bool = False  # .index last offset below its base offset [IDX002]
    torn_tail: bool = False  # half a batch at the end of an active .log [SHUT002]
    txn_marker_flood: bool = False  # seed 001: __consumer_offsets mostly consecutive markers [CLN003]
    compact_delete_old: bool = False  # seed 003: compact,delete keeps months-old records [RET004]
    future_timestamps: bool = False  # records stamped in the future [RET003]
    lost_found: bool = False  # lost+found in a log dir root [DIR003]
    meta_mismatch: bool = False  # log dirs whose meta.properties disagree [DIR002]
    cleaner_died: bool = False  # seed 001: log-cleaner.log shows the thread dying [CLN001]
    short_stop_timeout: bool = False  # seed 002: unit with systemd's default 90 s stop timeout [SYSD001]

    @classmethod
    def all(cls) -> Failures:
        return cls(**{k: True for k in asdict(cls())})


def default_topics() -> list[TopicSpec]:
    return [
        TopicSpec("orders", partitions=3, records_per_partition=600, codec="none", producer="idempotent"),
        TopicSpec(
            "payments", partitions=2, records_per_partition=300, producer="transactional", abort_every=4
        ),
        TopicSpec("clicks", partitions=2, records_per_partition=500, codec="gzip", log_append_time=True),
        TopicSpec(
            "profiles", partitions=1, records_per_partition=300, cleanup_policy="compact", key_space=50
        ),
    ]


@dataclass
class HostSpec:
    now_ms: int = 1_790_000_000_000
    log_dirs: int = 2
    topics: list[TopicSpec] = field(default_factory=default_topics)
    kafka_version: str = "3.7.0"
    node_id: int = 1
    cluster_id: str = "q1Sh-9_ISia_zwGINzRvyQ"
    segment_bytes: int = 16 * 1024
    index_interval_bytes: int = 4096
    max_index_bytes: int = 10 * 1024 * 1024
    running: bool = False  # True: the broker is up (no marker, active indexes preallocated)
    broker_user: str | None = None  # User= of the unit; None: the user who writes (and so owns) the files
    broker_uid: int | None = None  # chown everything to this user (root needed)
    broker_gid: int | None = None
    foreign_uid: int = 0  # owner of files planted as unreadable (root, as after a remount)
    foreign_gid: int = 0
    failures: Failures = field(default_factory=Failures)
    seed: int = 7


@dataclass
class SimulatedHost:
    root: str
    log_dirs: list[str]
    server_properties: str
    topic_configs: str
    systemd_unit: str
    server_log: str
    cleaner_log: str
    now_ms: int
    planted: dict[str, list[str]] = field(default_factory=dict)
    partitions: dict[str, str] = field(default_factory=dict)  # "topic-p" -> partition dir

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def _records(t: TopicSpec, p: int, i: int, k: int, ts0: int, step: int, pad: bytes) -> list[NewRecord]:
    """Records i..i+k of partition p: a JSON value with a unique "id" (the QoS tests' identifier), every 7th with a header."""
    return [
        NewRecord(
            f"key-{(i + j) % t.key_space}".encode(),
            json.dumps({"id": f"{t.name}-{p}-{i + j}", "n": i + j}).encode() + pad,
            ts0 + j * step // max(1, k),
            (("source", b"simulator"),) if (i + j) % 7 == 0 else (),
        )
        for j in range(k)
    ]


def _topic_id(rng: random.Random) -> str:
    # Uuid.toString(): URL-safe base64 of 16 bytes without padding
    return base64.urlsafe_b64encode(rng.randbytes(16)).decode().rstrip("=")


def _string(s: str) -> bytes:
    b = s.encode()
    return struct.pack(">h", len(b)) + b


def offset_commit_record(group: str, topic: str, partition: int, offset: int, ts: int) -> tuple[bytes, bytes]:
    """OffsetCommitKey v1 + OffsetCommitValue v3 (group-coordinator/.../common/message/OffsetCommit*.json)."""
    key = struct.pack(">h", 1) + _string(group) + _string(topic) + struct.pack(">i", partition)
    value = struct.pack(">hqi", 3, offset, -1) + _string("") + struct.pack(">q", ts)
    return key, value


class _Host:
    def __init__(self, root: str, spec: HostSpec) -> None:
        self.root = os.path.abspath(root)
        self.spec = spec
        self.rng = random.Random(spec.seed)
        self.now = spec.now_ms
        self.host = SimulatedHost(
            root=self.root,
            log_dirs=[os.path.join(self.root, "data", f"kafka-{i + 1}") for i in range(spec.log_dirs)],
            server_properties=os.path.join(self.root, "etc/kafka/server.properties"),
            topic_configs=os.path.join(self.root, "etc/kafka/topic-configs.json"),
            systemd_unit=os.path.join(self.root, "etc/systemd/system/kafka.service"),
            server_log=os.path.join(self.root, "var/log/kafka/server.log"),
            cleaner_log=os.path.join(self.root, "var/log/kafka/log-cleaner.log"),
            now_ms=self.now,
        )
        self.writers: dict[tuple[str, int], tuple[str, PartitionWriter]] = {}
        self.log_lines: list[str] = []
        self.cleaner_lines: list[str] = []
        self.topic_configs: dict[str, dict[str, str]] = {}

    @property
    def unit_user(self) -> str:
        """The unit's User=: the spec's, else the owner of the written files (so a simulated host is healthy
        whoever writes it, whether or not a 'kafka' user exists on this machine)."""
        import pwd

        if self.spec.broker_user:
            return self.spec.broker_user
        uid = self.spec.broker_uid if self.spec.broker_uid is not None else os.getuid()
        try:
            return pwd.getpwuid(uid).pw_name
        except KeyError:
            return str(uid)

    @property
    def unit_group(self) -> str:
        import grp

        if self.spec.broker_user:
            return self.spec.broker_user
        gid = self.spec.broker_gid if self.spec.broker_gid is not None else os.getgid()
        try:
            return grp.getgrgid(gid).gr_name
        except KeyError:
            return str(gid)

    def plant(self, failure: str, path: str) -> None:
        self.host.planted.setdefault(failure, []).append(path)

    # ----------------------------------------------------------------- partitions
    def _writer(self, topic: str, partition: int, segment_bytes: int | None = None) -> PartitionWriter:
        log_dir = self.host.log_dirs[(sum(map(ord, topic)) + partition) % len(self.host.log_dirs)]
        path = os.path.join(log_dir, f"{topic}-{partition}")
        cfg = SegmentConfig(
            segment_bytes=segment_bytes or self.spec.segment_bytes,
            index_interval_bytes=self.spec.index_interval_bytes,
            max_index_bytes=self.spec.max_index_bytes,
        )
        w = PartitionWriter(path, cfg)
        self.writers[(topic, partition)] = (log_dir, w)
        self.host.partitions[f"{topic}-{partition}"] = path
        with open(os.path.join(path, ckpt.PARTITION_METADATA), "w") as f:
            f.write(f"version: 0\ntopic_id: {_topic_id(self.rng)}\n")
        with open(os.path.join(path, ckpt.LEADER_EPOCH), "w") as f:
            f.write(ckpt.encode_leader_epoch_checkpoint([(0, 0)]))
        return w

    def write_topic(self, t: TopicSpec) -> None:
        cfg = {"cleanup.policy": t.cleanup_policy, "retention.ms": str(t.retention_ms)}
        if t.segment_bytes:
            cfg["segment.bytes"] = str(t.segment_bytes)
        if t.log_append_time:
            cfg["message.timestamp.type"] = "LogAppendTime"
        self.topic_configs[t.name] = cfg
        codec = CODEC_IDS[t.codec]
        pad = b"x" * max(0, t.value_bytes - 40)
        if t.producer == "transactional" and (t.txn_producers > 1 or t.open_txn):
            self.write_interleaved_transactions(t, codec, pad)
            return
        for p in range(t.partitions):
            w = self._writer(t.name, p, t.segment_bytes)
            start = self.now - t.span_ms
            n = t.records_per_partition
            step = max(1, t.span_ms // max(1, n))
            pid = 1000 + p if t.producer != "plain" else -1
            seq = 0
            txn = 0
            i = 0
            while i < n:
                k = min(t.batch_records, n - i)
                ts0 = start + i * step
                recs = _records(t, p, i, k, ts0, step, pad)
                base = w.next_offset
                lat = ts0 + (k - 1) * step // max(1, k) if t.log_append_time else None
                transactional = t.producer == "transactional"
                data = build_batch(
                    base, recs, codec=codec, log_append_time=lat,
                    producer_id=pid, producer_epoch=0 if pid >= 0 else -1,
                    base_sequence=seq if pid >= 0 else -1, transactional=transactional,
                )  # fmt: skip
                max_ts = lat if lat is not None else max(r.timestamp for r in recs)
                w.append(
                    data,
                    base,
                    base + k - 1,
                    max_ts,
                    (pid, 0, seq + k - 1, base if transactional else -1) if pid >= 0 else None,
                )
                seq += k
                i += k
                if transactional:
                    txn += 1
                    commit = not (t.abort_every and txn % t.abort_every == 0)
                    m_off = w.next_offset
                    aborted = AbortedTxn(0, pid, base, m_off, m_off + 1) if not commit else None
                    w.append(
                        control_batch(m_off, commit, pid, 0, max_ts + 1),
                        m_off,
                        m_off,
                        max_ts + 1,
                        (pid, 0, seq - 1, -1),
                        aborted,
                    )

    def write_interleaved_transactions(self, t: TopicSpec, codec: int, pad: bytes) -> None:
        """Transactions of ``t.txn_producers`` producers interleaved batch by batch in each partition.

        Each transaction is two batches; producers take turns appending one batch, so transactions overlap in
        offsets and an ABORT's ``.txnindex`` entry has ``lastStableOffset`` = the first offset of the earliest
        transaction still open after the marker, or marker offset + 1 (ProducerStateManager.lastStableOffset,
        LogSegment.updateTxnIndex). Every ``abort_every``-th transaction (counted per partition) is aborted.
        """
        txn_batches = 2
        for p in range(t.partitions):
            w = self._writer(t.name, p, t.segment_bytes)
            start = self.now - t.span_ms
            n = t.records_per_partition
            step = max(1, t.span_ms // max(1, n))
            pids = [2000 + 10 * p + k for k in range(t.txn_producers)]
            seq = dict.fromkeys(pids, 0)
            written = dict.fromkeys(pids, 0)  # batches in the producer's current transaction
            ongoing: dict[int, int] = {}  # pid -> first offset of its open transaction
            txn = 0
            i = 0
            turn = 0
            while i < n:
                pid = pids[turn % len(pids)]
                turn += 1
                k = min(t.batch_records, n - i)
                ts0 = start + i * step
                recs = _records(t, p, i, k, ts0, step, pad)
                base = w.next_offset
                ongoing.setdefault(pid, base)
                data = build_batch(
                    base, recs, codec=codec, producer_id=pid, producer_epoch=0, base_sequence=seq[pid],
                    transactional=True,
                )  # fmt: skip
                max_ts = max(r.timestamp for r in recs)
                seq[pid] += k
                w.append(data, base, base + k - 1, max_ts, (pid, 0, seq[pid] - 1, ongoing[pid]))
                i += k
                written[pid] += 1
                last_of_open = t.open_txn and pid == pids[0] and i + t.batch_records * len(pids) > n
                if (written[pid] < txn_batches and i < n) or last_of_open:
                    continue
                txn += 1
                commit = not (t.abort_every and txn % t.abort_every == 0)
                first = ongoing.pop(pid)
                written[pid] = 0
                m_off = w.next_offset
                lso = min(ongoing.values()) if ongoing else m_off + 1
                aborted = AbortedTxn(0, pid, first, m_off, lso) if not commit else None
                w.append(
                    control_batch(m_off, commit, pid, 0, max_ts + 1), m_off, m_off, max_ts + 1,
                    (pid, 0, seq[pid] - 1, -1), aborted,
                )  # fmt: skip
            # transactions of the other producers still open when the data ran out get their markers
            for pid in [q for q in pids if q in ongoing and not (t.open_txn and q == pids[0])]:
                ongoing.pop(pid)
                m_off = w.next_offset
                w.append(
                    control_batch(m_off, True, pid, 0, self.now - 1), m_off, m_off, self.now - 1,
                    (pid, 0, seq[pid] - 1, -1),
                )  # fmt: skip

    def write_consumer_offsets(self, flood: bool) -> None:
        """``__consumer_offsets-7``: offset commits, transactional commits, and (seed 001) a marker flood.

        The flood is what compaction leaves after a transactional consumer committed for weeks on a version
        with KAFKA-8335: the offset records are gone, the COMMIT markers remain, thousands in a row.
        """
        self.topic_configs["__consumer_offsets"] = {
            "cleanup.policy": "compact",
            "segment.bytes": str(100 * 1024 * 1024),
        }
        w = self._writer("__consumer_offsets", 7, segment_bytes=100 * 1024 * 1024)
        ts = self.now - 3 * DAY
        for i in range(40):
            key, value = offset_commit_record("billing-consumers", "orders", i % 3, 100 + i, ts + i * 1000)
            off = w.next_offset
            w.append(build_batch(off, [NewRecord(key, value, ts + i * 1000)]), off, off, ts + i * 1000)
        # Transactional offset commits, each followed by its COMMIT marker...
        pid = 50_000
        t = ts + 60_000
        for i in range(20):
            key, value = offset_commit_record("dedup-consumer-group", "events", i % 4, i, t)
            off = w.next_offset
            batch = build_batch(
                off,
                [NewRecord(key, value, t)],
                producer_id=pid + i % 8,
                producer_epoch=2,
                base_sequence=i,
                transactional=True,
            )
            w.append(batch, off, off, t)
            off = w.next_offset
            w.append(control_batch(off, True, pid + i % 8, 2, t), off, off, t)
            t += 50
        # ...then what the cleaner leaves of weeks of them: the offsets are compacted away, the markers stay.
        for i in range(20000 if flood else 0):
            off = w.next_offset
            w.append(control_batch(off, True, pid + i % 8, 2, t), off, off, t)
            t += 50
        if flood:
            self.plant("txn_marker_flood", w.path)

    def write_compact_delete(self) -> None:
        """Seed 003: a compact,delete topic whose oldest segment mixes 120-day-old records with new ones."""
        name = "user-state"
        self.topic_configs[name] = {"cleanup.policy": "compact,delete", "retention.ms": str(7 * DAY)}
        w = self._writer(name, 0)
        w.cfg.segment_ms = (
            1 << 60
        )  # the cleaner's output segment never rolls by time: old and new records share it
        old = self.now - 120 * DAY
        for i in range(30):
            off = w.next_offset
            ts = old + i * HOUR
            w.append(
                build_batch(off, [NewRecord(f"user-{i}".encode(), b'{"plan":"free"}', ts)]), off, off, ts
            )
        recent = self.now - 2 * HOUR
        for i in range(30, 40):
            off = w.next_offset
            ts = recent + i * 1000
            w.append(build_batch(off, [NewRecord(f"user-{i}".encode(), b'{"plan":"pro"}', ts)]), off, off, ts)
        w.roll()
        for i in range(40, 60):
            off = w.next_offset
            ts = recent + i * 1000
            w.append(build_batch(off, [NewRecord(f"user-{i}".encode(), b'{"plan":"pro"}', ts)]), off, off, ts)
        self.plant("compact_delete_old", os.path.join(w.path, segment_file_name(0, ".log")))

    def write_future(self) -> None:
        name = "sensor-readings"
        self.topic_configs[name] = {"cleanup.policy": "delete", "retention.ms": str(3 * DAY)}
        w = self._writer(name, 0)
        for i in range(60):
            off = w.next_offset
            ts = self.now - 10 * DAY + i * HOUR
            if i == 20:
                ts = self.now + 30 * DAY  # a producer with a broken clock
                self.plant("future_timestamps", f"{w.path}@{off}")
            w.append(build_batch(off, [NewRecord(b"s", b"21.5", ts)]), off, off, ts)
            if i in (19, 39):
                w.roll()

    # ----------------------------------------------------------------- finish
    def close_partitions(self) -> None:
        clean = not self.spec.running and not self.spec.failures.unclean_shutdown
        for (_topic, _p), (_d, w) in sorted(self.writers.items()):
            w.close(clean_shutdown=clean)

    def write_log_dir_files(self) -> None:
        clean = not self.spec.running and not self.spec.failures.unclean_shutdown
        v37 = tuple(int(x) for x in self.spec.kafka_version.split(".")[:2]) >= (3, 7)
        for i, log_dir in enumerate(self.host.log_dirs):
            os.makedirs(log_dir, exist_ok=True)
            mine = {k: w for k, (d, w) in self.writers.items() if d == log_dir}
            rp = {k: w.next_offset for k, w in mine.items()}
            if self.spec.failures.unclean_shutdown:
                # the last flush checkpointed an older log end: everything after it is "unflushed"
                for k, w in mine.items():
                    bases = w.segment_bases
                    rp[k] = bases[-2] if len(bases) > 1 else 0
                self.plant("unclean_shutdown", log_dir)
            starts = {k: w.segment_bases[0] for k, w in mine.items()}
            files = {
                ckpt.RECOVERY_POINT: ckpt.encode_offset_checkpoint(rp),
                ckpt.LOG_START: ckpt.encode_offset_checkpoint(starts),
                ckpt.REPLICATION: ckpt.encode_offset_checkpoint({k: w.next_offset for k, w in mine.items()}),
                ckpt.CLEANER: ckpt.encode_offset_checkpoint(
                    {
                        k: w.segment_bases[-1]
                        for k, w in mine.items()
                        if "compact" in self.topic_configs.get(k[0], {}).get("cleanup.policy", "")
                    }
                ),
            }
            for name, text in files.items():
                with open(os.path.join(log_dir, name), "w") as f:
                    f.write(text)
            cluster = self.spec.cluster_id
            node = self.spec.node_id
            if self.spec.failures.meta_mismatch and i == 1:
                cluster = "Zz9OtherClusterIdZzzzw"
                self.plant("meta_mismatch", os.path.join(log_dir, ckpt.META_PROPERTIES))
            dir_id = _topic_id(self.rng)
            with open(os.path.join(log_dir, ckpt.META_PROPERTIES), "w") as f:
                f.write(
                    "#\n#Mon Nov 02 10:00:00 UTC 2026\n"
                    f"cluster.id={cluster}\ndirectory.id={dir_id}\nnode.id={node}\nversion=1\n"
                )
            if clean:
                with open(os.path.join(log_dir, ckpt.CLEAN_SHUTDOWN), "w") as f:
                    f.write('{"version":0,"brokerEpoch":42}' if v37 else "")
            if self.spec.failures.lost_found and i == 0:
                os.makedirs(os.path.join(log_dir, "lost+found"), exist_ok=True)
                self.plant("lost_found", os.path.join(log_dir, "lost+found"))

    def plant_index_failures(self) -> None:
        f = self.spec.failures
        regular = {t.name for t in self.spec.topics}
        rolled = [
            (k, w)
            for k, (_d, w) in sorted(self.writers.items())
            if len(w.segment_bases) > 2 and k[0] in regular
        ]
        if not rolled:
            return
        if f.untrimmed_timeindex:
            # KAFKA-10207: the trim on roll failed (e.g. Permission denied in RandomAccessFile.setLength,
            # swallowed by closeQuietly): the rolled segment keeps full-size, zero-padded indexes.
            (_k, w) = rolled[0]
            # below the recovery point even after an unclean stop, so that recovery does not rebuild it
            base = w.segment_bases[max(0, len(w.segment_bases) - 3)]
            for suffix, entry in ((".timeindex", TIME_ENTRY), (".index", OFFSET_ENTRY)):
                p = os.path.join(w.path, segment_file_name(base, suffix))
                st = os.stat(p)
                with open(p, "r+b") as fh:
                    fh.truncate(preallocated_size(entry, self.spec.max_index_bytes))
                os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))
            self.plant("untrimmed_timeindex", os.path.join(w.path, segment_file_name(base, ".timeindex")))
        if f.bad_index_size:
            (_k, w) = rolled[min(1, len(rolled) - 1)]
            p = os.path.join(w.path, segment_file_name(w.segment_bases[0], ".index"))
            with open(p, "ab") as fh:
                fh.write(b"\x00\x00\x00\x01\x00")
            self.plant("bad_index_size", p)
        if f.index_below_base:
            (_k, w) = rolled[min(2, len(rolled) - 1)]
            p = os.path.join(w.path, segment_file_name(w.segment_bases[1], ".index"))
            with open(p, "ab") as fh:
                fh.write(struct.pack(">ii", -5, 0))
            self.plant("index_below_base", p)
        if f.torn_tail:
            (_k, w) = rolled[-1]
            p = os.path.join(w.path, segment_file_name(w.segment_bases[-1], ".log"))
            batch = build_batch(w.next_offset, [NewRecord(b"k", b"v" * 300, self.now - 1000)])
            with open(p, "ab") as fh:
                fh.write(batch[: len(batch) // 2])
            self.plant("torn_tail", p)
        if f.unreadable_timeindex:
            (_k, w) = rolled[-1] if len(rolled) > 1 else rolled[0]
            p = os.path.join(w.path, segment_file_name(w.segment_bases[0], ".timeindex"))
            self.plant("unreadable_timeindex", p)

    def apply_ownership(self) -> None:
        s = self.spec
        if s.broker_uid is not None:
            gid = s.broker_gid if s.broker_gid is not None else s.broker_uid
            for top in self.host.log_dirs:
                os.chown(top, s.broker_uid, gid)
                for dirpath, dirnames, filenames in os.walk(top):
                    for n in dirnames + filenames:
                        os.chown(os.path.join(dirpath, n), s.broker_uid, gid, follow_symlinks=False)
        for p in self.host.planted.get("unreadable_timeindex", []):
            os.chown(p, s.foreign_uid, s.foreign_gid)
            os.chmod(p, 0o600)

    def write_config(self) -> None:
        s = self.spec
        os.makedirs(os.path.dirname(self.host.server_properties), exist_ok=True)
        with open(self.host.server_properties, "w") as f:
            f.write(
                "# written by kafka-ops simulate\n"
                f"process.roles=broker,controller\nnode.id={s.node_id}\n"
                f"log.dirs={','.join(self.host.log_dirs)}\n"
                "log.retention.hours=168\nlog.retention.check.interval.ms=300000\n"
                f"log.segment.bytes={s.segment_bytes}\nlog.index.interval.bytes={s.index_interval_bytes}\n"
                f"log.index.size.max.bytes={s.max_index_bytes}\n"
                "num.recovery.threads.per.data.dir=1\nlog.cleaner.enable=true\n"
                "message.max.bytes=1048588\n"
            )
        with open(self.host.topic_configs, "w") as f:
            json.dump(self.topic_configs, f, indent=2, sort_keys=True)
        os.makedirs(os.path.dirname(self.host.systemd_unit), exist_ok=True)
        timeout = "" if s.failures.short_stop_timeout else "TimeoutStopSec=600\n"
        with open(self.host.systemd_unit, "w") as f:
            f.write(
                "[Unit]\nDescription=Apache Kafka broker\nAfter=network-online.target\n\n[Service]\nType=simple\n"
                f"User={self.unit_user}\nGroup={self.unit_group}\n"
                'Environment="KAFKA_HEAP_OPTS=-Xms4g -Xmx4g"\n'
                "ExecStart=/opt/kafka/bin/kafka-server-start.sh /etc/kafka/server.properties\n"
                f"{timeout}LimitNOFILE=100000\nSuccessExitStatus=143\nRestart=on-failure\n\n"
                "[Install]\nWantedBy=multi-user.target\n"
            )
        if s.failures.short_stop_timeout:
            self.plant("short_stop_timeout", self.host.systemd_unit)

    def write_logs(self) -> None:
        os.makedirs(os.path.dirname(self.host.server_log), exist_ok=True)
        t0 = "2026-11-01 10:00:00,000"
        lines = [
            f"[{t0}] INFO Kafka version: {self.spec.kafka_version} (org.apache.kafka.common.utils.AppInfoParser)"
        ]
        lines += self.log_lines
        with open(self.host.server_log, "w") as f:
            f.write("\n".join(lines) + "\n")
        cl = list(self.cleaner_lines)
        if self.spec.failures.cleaner_died:
            cl += cleaner_death_lines(self.spec.kafka_version)
            self.plant("cleaner_died", self.host.cleaner_log)
        with open(self.host.cleaner_log, "w") as f:
            f.write("\n".join(cl) + ("\n" if cl else ""))

    def write_manifest(self) -> None:
        with open(os.path.join(self.root, "host.json"), "w") as f:
            json.dump(self.host.to_dict(), f, indent=2, sort_keys=True)


def cleaner_death_lines(kafka_version: str) -> list[str]:
    """log-cleaner.log of a cleaner thread that died, as it can die on ``kafka_version``.

    Before 2.1.0 (KIP-346) any exception while cleaning kills the thread: seed 001's, KAFKA-6854's
    IllegalStateException from growBuffers (on a version with the bug the run of markers throws it; on a fixed
    one only a batch larger than max.message.bytes does). From 2.1.0 such an exception marks the partition
    uncleanable and the thread goes on (LogCleaner.CleanerThread.tryCleanFilthiestLog @3.7.0: cleanLog wraps
    every Exception in a LogCleaningException); only an Error still ends doWork, and ShutdownableThread logs
    'Error due to' and 'Stopped': an OutOfMemoryError while cleaning (a heap too small for the dedupe buffer
    and the I/O buffers), the death simulated there."""
    from kafka_ops.engine.versions import norm

    try:
        version = norm(tuple(int(x) for x in kafka_version.split("-")[0].split(".")))
    except ValueError:
        version = (3, 7, 0)
    cleaning = (
        "[2026-11-01 11:52:48,105] INFO Cleaner 0: Cleaning segment 0 in log __consumer_offsets-7 "
        "(largest timestamp Sun Nov 01 10:46:21 UTC 2026) into 0, discarding deletes. (kafka.log.LogCleaner)"
    )
    if version < (2, 1, 0):
        exception = [
            "java.lang.IllegalStateException: This log contains a message larger than maximum allowable size of 1000012.",
            "\tat kafka.log.Cleaner.growBuffers(LogCleaner.scala:675)",
        ]
    else:
        exception = [
            "java.lang.OutOfMemoryError: Java heap space",
            "\tat java.base/java.nio.HeapByteBuffer.<init>(HeapByteBuffer.java:64)",
            "\tat java.base/java.nio.ByteBuffer.allocate(ByteBuffer.java:360)",
            "\tat kafka.log.Cleaner.growBuffers(LogCleaner.scala:938)",
        ]
    return [
        cleaning,
        "[2026-11-01 11:52:48,923] ERROR [kafka-log-cleaner-thread-0]: Error due to (kafka.log.LogCleaner)",
        *exception,
        "[2026-11-01 11:52:48,924] INFO [kafka-log-cleaner-thread-0]: Stopped (kafka.log.LogCleaner)",
    ]


def simulate_host(root: str, spec: HostSpec | None = None) -> SimulatedHost:
    """Write a simulated broker host under ``root`` (created if needed) and return what was written."""
    spec = spec or HostSpec()
    h = _Host(root, spec)
    for d in h.host.log_dirs:
        os.makedirs(d, exist_ok=True)
    for t in spec.topics:
        h.write_topic(t)
    h.write_consumer_offsets(flood=spec.failures.txn_marker_flood)
    if spec.failures.compact_delete_old:
        h.write_compact_delete()
    if spec.failures.future_timestamps:
        h.write_future()
    h.close_partitions()
    h.write_log_dir_files()
    h.plant_index_failures()
    h.write_config()
    h.write_logs()
    h.apply_ownership()
    h.write_manifest()
    return h.host
