"""The facts of a broker host, as the audit's checks and the broker model read them: the audit's options, the
host, its log dirs and (streamed) partitions. Plain data; kafka_ops.facts.collect gathers it (read only)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kafka_ops.engine.compat import slotted
from kafka_ops.engine.errors import EngineError
from kafka_ops.engine.logdir import LogDir, Partition, RecoveryResult
from kafka_ops.facts.access import PathFacts
from kafka_ops.facts.config import Configs, TopicConfig
from kafka_ops.facts.identity import Identity
from kafka_ops.facts.mounts import MountFacts
from kafka_ops.facts.systemd import JvmFacts, UnitFacts

NOT_READ: Any = object()  # PartitionFacts.active_tail when the collector did not read it
HOUR_MS = 3600 * 1000


@dataclass
class AuditOptions:
    log_dirs: list[str] = field(default_factory=list)
    server_properties: str | None = None
    broker_user: str | None = None
    kafka_version: str | None = None
    topic_configs: str | None = None
    systemd_unit: str | None = None
    broker_state: str = "auto"  # auto | running | stopped
    now_ms: int | None = None
    horizon_ms: int = 24 * HOUR_MS
    logs: list[str] = field(default_factory=list)  # server.log / log-cleaner.log files
    probe_as_user: bool = False
    deep: bool = False  # CRC-verify every segment, not only those recovery will read
    host: str | None = None
    expected_mounts: dict[str, str] = field(
        default_factory=dict
    )  # log dir -> the mount point it must be on (DIR001)
    fstab: str = "/etc/fstab"  # configured mounts (DIR001: a configured mount that is not mounted)
    mount_unit_dirs: tuple[str, ...] = ("/etc/systemd/system", "/run/systemd/system")
    # processes gathering partition facts: None = one per CPU on a host of many partitions, 1 = this one only
    workers: int | None = None
    # the running cluster's facts (kafka_ops.cluster.facts.ClusterFacts.to_dict(): asked by the CLI, plain data
    # here), or why they are unknown; the node id of the audited broker when meta.properties should not decide
    cluster: dict[str, Any] | None = None
    cluster_skip: str | None = None
    broker_id: int | None = None
    # ZooKeeper's /cluster/id (kafka_ops.cluster.zookeeper.read_cluster_id: {"connect", "cluster_id"}, asked by the
    # CLI with --zookeeper), or why it is unknown
    zookeeper: dict[str, Any] | None = None
    zookeeper_skip: str | None = None


@slotted
class Input:
    value: object
    source: str
    # topic_configs only (each said when set): per topic, where its configs came from; what limits the reading;
    # the dynamic broker configs (KRaft) applied as the topics' defaults, by layer
    topics: dict[str, str] | None = None
    notes: list[str] | None = None
    dynamic: dict[str, dict[str, str]] | None = None

    def to_dict(self) -> dict[str, object]:
        d: dict[str, object] = {"value": self.value, "source": self.source}
        for k in ("topics", "notes", "dynamic"):
            v = getattr(self, k)
            if v is not None:
                d[k] = v
        return d


@dataclass
class LogDirAggregate:
    partitions: int = 0
    segments: int = 0
    files: int = 0
    log_bytes: int = 0
    recover_segments: int = 0
    recover_bytes: int = 0  # what the next start re-reads (unclean stop, missing .index)
    rebuild_index_segments: int = 0
    retention_delete_bytes: int = 0  # what time/size retention deletes within the horizon
    largest_partition_bytes: int = 0
    largest_recover_bytes: int = 0  # the most one partition re-reads: one recovery thread does it alone


@dataclass
class LogDirFacts:
    path: str
    configured: bool  # listed in log.dirs / --log-dir
    scan: LogDir
    parents: list[PathFacts] = field(default_factory=list)  # / ... parent of the log dir
    self_path: PathFacts | None = None
    mount: MountFacts | None = None
    lock_held: bool | None = None
    lock_pids: list[int] = field(default_factory=list)  # who holds .lock (facts/holders.py)
    open_pids: list[int] = field(default_factory=list)  # who has its files open, when nobody holds .lock
    agg: LogDirAggregate = field(default_factory=LogDirAggregate)
    acls: dict[str, list[tuple[int, int, int]]] = field(default_factory=dict)  # root files and the dir itself
    probe: dict[str, tuple[bool, bool, bool]] = field(default_factory=dict)  # path -> (read, write, traverse)

    @property
    def clean_shutdown(self) -> bool:
        return bool(self.scan.clean_shutdown and self.scan.clean_shutdown.present)


@dataclass
class PartitionFacts:
    log_dir: LogDirFacts
    part: Partition
    config: TopicConfig
    recovery_point: int | None
    log_start: int | None
    cleaner_offset: int | None
    will_recover: list[int] = field(default_factory=list)  # segment base offsets the next start re-reads
    recovery: dict[int, RecoveryResult] = field(default_factory=dict)  # deep scans of those segments
    log_end_offset: int | None = None
    first_timestamps: dict[int, int] = field(default_factory=dict)  # base offset -> first batch timestamp
    control_run: tuple[int, int, int, int] | None = None  # (bytes, batches, start offset, segment base)
    control_batches: int = 0
    acls: dict[str, list[tuple[int, int, int]]] = field(default_factory=dict)
    probe: dict[str, tuple[bool, bool, bool]] = field(
        default_factory=dict
    )  # path -> (read, write, traverse) as user
    errors: list[EngineError] = field(default_factory=list)
    # engine.logdir.active_tail of the active segment, read with the other tail facts (SHUT002's); NOT_READ:
    # not read here (a running broker, a recovered or empty active segment), the check reads it if it needs it
    active_tail: Any = NOT_READ
    # broker.forecast.PartitionForecast made where the facts were gathered (broker.forecast.prepare), or None
    forecast: Any = None
    # broker.arrivals.arrival_rate's (now, horizon, rate, window): DIR004 and the forecast both ask for it
    arrival: tuple[int, int, float, int] | None = None
    # check id -> its findings, for the checks an audit worker ran where it gathered the facts (audit.py)
    findings: dict[str, list[Any]] | None = None
    # facts.access.all_granted's answer for the host's broker user, once asked (None: not yet)
    granted: bool | None = None


@dataclass
class HostFacts:
    host: str
    now_ms: int
    horizon_ms: int
    options: AuditOptions
    inputs: dict[str, Input] = field(default_factory=dict)
    skipped_inputs: dict[str, str] = field(default_factory=dict)  # input -> why it is unknown
    identity: Identity | None = None
    kafka_version: tuple[int, ...] | None = None
    configs: Configs = field(default_factory=Configs)
    unit: UnitFacts | None = None
    jvm: JvmFacts | None = None
    mem_total: int | None = None
    broker_state: str = "unknown"  # running | stopped | unknown
    log_events: list[dict[str, object]] = field(default_factory=list)  # (no longer filled: see log_digest)
    # what --broker-log says, as the checks read it (facts.brokerlogs.AuditDigest, bounded memory); None: no logs
    log_digest: Any = None
    configured_mounts: list[tuple[str, str]] = field(
        default_factory=list
    )  # (mount point, fstab line or unit)
    log_dirs: list[LogDirFacts] = field(default_factory=list)
    errors: list[EngineError] = field(default_factory=list)
    last_topic_config: TopicConfig | None = field(default=None, repr=False)  # topic_config()'s cache
    cleaner_stalls: dict[str, str] | None = field(default=None, repr=False)  # broker.cleaner's cache
    cluster: dict[str, Any] | None = None  # the running cluster's facts (AuditOptions.cluster)
    node_id: int | None = (
        None  # the audited broker's node id (--broker-id, meta.properties, server.properties)
    )
    meta_cluster_id: str | None = None  # cluster.id of the audited log dirs' meta.properties
    cluster_mismatch: bool = False  # the cluster asked has another cluster.id than meta.properties

    def has(self, name: str) -> bool:
        return name in self.inputs and self.inputs[name].value is not None
