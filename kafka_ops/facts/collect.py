"""Gather the facts of a broker host: inputs, host, log dirs, and (streamed) partitions.

Everything here only reads. Partition facts are produced one partition at a time so that the audit's
memory stays flat however many segments a host has.
"""

from __future__ import annotations

import glob
import os
import re
import socket
import time
from collections.abc import Iterator, Mapping
from typing import Any

from kafka_ops.engine import checkpoints as ckpt
from kafka_ops.engine import logdir, versions
from kafka_ops.engine.errors import EngineError
from kafka_ops.engine.layout import PartitionName
from kafka_ops.engine.logdir import (
    Partition,
    TailScan,
    active_tail,
    end_and_tail,
    next_offset,
    recovered_segments,
    recovery_scan,
    scan_log_dir,
    scan_partition,
)
from kafka_ops.engine.records import BatchScanner, LogBuffer
from kafka_ops.facts import kraft_configs
from kafka_ops.facts.access import partition_files, path_facts, read_acl
from kafka_ops.facts.config import (
    TopicConfig,
    parse_version,
    read_server_properties,
    read_topic_configs,
)
from kafka_ops.facts.holders import decide, lock_use
from kafka_ops.facts.identity import Identity, resolve
from kafka_ops.facts.model import (
    AuditOptions,
    HostFacts,
    Input,
    LogDirFacts,
    PartitionFacts,
)
from kafka_ops.facts.mounts import configured_mounts, mem_total_bytes, mount_of, read_mountinfo
from kafka_ops.facts.systemd import UnitFacts, find_unit, jvm_from_env, load_unit

DEFAULT_SERVER_PROPERTIES = "/etc/kafka/server.properties"


def _version_from_install(unit: UnitFacts | None) -> tuple[str, str] | None:
    """``libs/kafka_<scala>-<version>.jar`` next to the ExecStart script (or /opt/kafka)."""
    candidates = []
    if unit is not None:
        for cmd in unit.lists.get("ExecStart", []):
            exe = cmd.lstrip("-@+!").split()[0] if cmd.strip() else ""
            if exe:
                candidates.append(os.path.dirname(os.path.dirname(exe)))
    candidates += ["/opt/kafka", "/usr/share/java/kafka", "/usr/local/kafka"]
    for root in candidates:
        for jar in sorted(
            glob.glob(os.path.join(root, "libs", "kafka_*.jar"))
            + glob.glob(os.path.join(root, "kafka_*.jar"))
        ):
            m = re.search(r"kafka_\d+\.\d+-(\d+\.\d+\.\d+[^/]*?)\.jar$", jar)
            if m and "-test" not in jar and "-sources" not in jar:
                return m.group(1), jar
    return None


_VERSION_LINE = re.compile(r"Kafka version\s*:\s*(\S+)")


def _is_empty(path: str) -> bool:
    try:
        return os.stat(path).st_size == 0
    except OSError:
        return False


def gather_host(opts: AuditOptions) -> HostFacts:
    now = opts.now_ms if opts.now_ms is not None else int(time.time() * 1000)
    h = HostFacts(opts.host or socket.gethostname(), now, opts.horizon_ms, opts)
    h.inputs["now_ms"] = Input(now, "--now" if opts.now_ms is not None else "clock")

    # server.properties
    sp = opts.server_properties
    sp_source = "--server-properties"
    if sp is None and os.path.exists(DEFAULT_SERVER_PROPERTIES):
        sp, sp_source = DEFAULT_SERVER_PROPERTIES, "default path"
    if sp is not None:
        h.configs.server = read_server_properties(sp)  # EngineError: the CLI says so in one line (exit 2)
        h.configs.server_source = sp
        h.inputs["server_properties"] = Input(sp, sp_source)
    else:
        h.skipped_inputs["server_properties"] = (
            f"no --server-properties and {DEFAULT_SERVER_PROPERTIES} does not exist"
        )

    # log dirs
    if opts.log_dirs:
        h.inputs["log_dirs"] = Input([os.path.abspath(d) for d in opts.log_dirs], "--log-dir")
    elif h.configs.log_dirs:
        h.inputs["log_dirs"] = Input(h.configs.log_dirs, f"log.dirs in {sp}")
    else:
        h.skipped_inputs["log_dirs"] = "no --log-dir and no log.dirs in server.properties"

    # topic configs
    if opts.topic_configs:
        h.configs.topics = read_topic_configs(opts.topic_configs)
        h.configs.topics_source = opts.topic_configs
        h.configs.topics_origin = "file"
        h.inputs["topic_configs"] = Input(opts.topic_configs, "--topic-configs")
    else:
        h.skipped_inputs["topic_configs"] = (
            "no --topic-configs: topics use the broker defaults of server.properties (on a KRaft host: their own "
            "configs, from its metadata log)"
        )

    # systemd unit
    unit_path = opts.systemd_unit or find_unit()
    if unit_path:
        h.unit = load_unit(unit_path)
        h.inputs["systemd_unit"] = Input(
            unit_path, "--systemd-unit" if opts.systemd_unit else "found on host"
        )
        h.jvm = jvm_from_env(h.unit.environment)
    else:
        h.skipped_inputs["systemd_unit"] = "no --systemd-unit and no kafka.service in the systemd unit dirs"

    # broker user
    user, user_source = opts.broker_user, "--broker-user"
    if user is None and h.unit is not None and h.unit.user:
        user, user_source = h.unit.user, f"User= in {h.unit.path}"
    if user is not None:
        h.identity = resolve(user)
        if h.identity is None:
            h.skipped_inputs["broker_user"] = f"user '{user}' ({user_source}) does not exist on this host"
        else:
            h.inputs["broker_user"] = Input(h.identity.to_dict(), user_source)
    else:
        h.skipped_inputs["broker_user"] = (
            "the broker user is unknown: no --broker-user and no User= in the systemd unit"
        )

    # broker logs (for the version and the cleaner's state: the kinds AUDIT_LOG_KINDS names, what CLN001's
    # cleaner_deaths and CLN004 read); a file the operator named with text but no Kafka log line in it is not a
    # broker log: the audit stops there (exit 2 naming it), it does not pass with the checks that read logs
    # skipped. An empty one (a healthy broker's log-cleaner.log) is said in the report
    from kafka_ops.facts.brokerlogs import audit_digest
    from kafka_ops.facts.logs import NOTHING_RECOGNISED

    recognised = []
    if opts.logs:
        paths = list(opts.logs)
        counts: list[list[int]] = []
        not_read: list[str] = []  # a compression bomb's rest: read up to the limit, said so
        # one streamed pass in time order, in bounded memory (what `kafka-ops logs` keeps)
        h.log_digest = audit_digest(paths, AUDIT_LOG_KINDS, counts, not_read)
        for n in not_read:
            path = next((p for p in paths if n.startswith(p + ": ")), n.split(": ", 1)[0])
            h.errors.append(EngineError(path, n[len(path) + 2 :]))
        for path, count in zip(paths, counts):
            if count[0]:
                recognised.append(path)
            elif _is_empty(path):  # a broker log nothing was written to yet (a quiet log-cleaner.log): said
                h.errors.append(EngineError(path, NOTHING_RECOGNISED))
            else:
                raise EngineError(path, f"{NOTHING_RECOGNISED} (--broker-log)")
    if recognised:
        h.inputs["logs"] = Input(list(opts.logs), "--broker-log")
    elif opts.logs:
        h.skipped_inputs["logs"] = f"no Kafka broker log line in --broker-log {', '.join(opts.logs)}"

    # Kafka version
    if opts.kafka_version:
        h.kafka_version = parse_version(opts.kafka_version)
        h.inputs["kafka_version"] = Input(opts.kafka_version, "--kafka-version")
    else:
        found = _version_from_install(h.unit)
        if found:
            h.kafka_version = parse_version(found[0])
            h.inputs["kafka_version"] = Input(found[0], found[1])
        else:
            announced = h.log_digest.last_version if h.log_digest is not None else None
            if announced:
                h.kafka_version = parse_version(str(announced["version"]))
                h.inputs["kafka_version"] = Input(announced["version"], str(announced["file"]))
            else:
                h.skipped_inputs["kafka_version"] = (
                    "no --kafka-version, no kafka_*.jar found and no 'Kafka version' log line"
                )

    h.mem_total = mem_total_bytes()
    return h


def gather_log_dir(h: HostFacts, path: str, mounts: list[tuple[str, ...]]) -> LogDirFacts:
    # partitions are streamed by iter_partitions(): list their names only
    scan = scan_log_dir(path, read_tails=False, partitions=False)
    ldf = LogDirFacts(os.path.abspath(path), True, scan)
    parents = []
    cur = os.path.dirname(os.path.abspath(path))
    while True:
        pf = path_facts(cur)
        if pf is not None:
            parents.append(pf)
        if cur == "/":
            break
        cur = os.path.dirname(cur)
    ldf.parents = list(reversed(parents))
    ldf.self_path = path_facts(path) if scan.exists else None
    if scan.exists:
        ldf.mount = mount_of(path, mounts)
        ldf.lock_held = lock_use(path).lock_held
    if h.identity is not None:
        for p in [ldf.self_path, *ldf.parents]:
            if p is not None and p.acl:
                ldf.acls[p.path] = p.acl
        for fi in scan.root_files:
            acl = read_acl(fi.path)
            if acl:
                ldf.acls[fi.path] = acl
        if h.options.probe_as_user:
            from kafka_ops.facts.probe import probe_paths

            paths = (
                [p.path for p in ldf.parents]
                + ([ldf.path] if ldf.self_path else [])
                + [f.path for f in scan.root_files]
            )
            ldf.probe = probe_paths(h.identity, paths)
    return ldf


def determine_broker_state(h: HostFacts) -> None:
    opt = h.options.broker_state
    if opt in ("running", "stopped"):
        h.broker_state = opt
        h.inputs["broker_state"] = Input(opt, "--broker-state")
        return
    # from the audited dirs only: their .lock holders and open files (facts/holders.py), never "some
    # kafka.Kafka process runs on this host"
    h.broker_state, src, uses = decide([d.path for d in h.log_dirs if d.scan.exists])
    by_path = {u.path: u for u in uses}
    for d in h.log_dirs:
        if d.path in by_path:
            u = by_path[d.path]
            d.lock_held, d.lock_pids, d.open_pids = u.lock_held, u.lock_pids, u.open_pids
    h.inputs["broker_state"] = Input(h.broker_state, src)


# The log events the audit keeps (see read_log_file): the version, CLN004's uncleanable partitions, and CLN001's
# cleaner deaths with their context and the restarts after them (brokerlogs.cleaner_deaths, START_KINDS,
# LATE_START_KINDS).
AUDIT_LOG_KINDS = frozenset(
    {
        "version", "uncleanable", "cleaner_error", "cleaner_stopped", "cleaner_exception", "exception",
        "cleaner_started", "cleaner_cleaning", "cleaner_beginning", "cleaner_growing", "loading_logs",
        "broker_starting", "broker_started",
    }
)  # fmt: skip


def gather(opts: AuditOptions) -> HostFacts:
    """Host and log-dir facts (partitions are streamed later by :func:`iter_partitions`)."""
    h = gather_host(opts)
    mounts = read_mountinfo()
    h.configured_mounts = configured_mounts(opts.fstab, opts.mount_unit_dirs)
    dirs = h.inputs["log_dirs"].value if h.has("log_dirs") else []
    for d in dirs:  # type: ignore[attr-defined]  # the log_dirs input is a list of paths
        h.log_dirs.append(gather_log_dir(h, d, mounts))
    determine_broker_state(h)
    apply_cluster(h, opts)
    apply_zookeeper_configs(
        h, opts
    )  # after the cluster's (which wins) and before the metadata log's (ZooKeeper mode)
    kraft_configs.apply(h)  # after the cluster's: --topic-configs and --bootstrap-server take its place
    return h


def apply_cluster(h: HostFacts, opts: AuditOptions) -> None:
    """The audited broker's identity, and the running cluster's facts when it was asked: its topic configs take
    the place of server.properties defaults and of a --topic-configs file (they are what the broker uses), unless
    the cluster is another one than meta.properties name (CLU004 says so)."""
    metas = [ldf.scan.meta for ldf in h.log_dirs if ldf.scan is not None and ldf.scan.meta is not None]
    h.meta_cluster_id = next((m.cluster_id for m in metas if m.cluster_id), None)
    node = opts.broker_id
    if node is None:
        node = next((m.node_id for m in metas if m.node_id is not None), None)
    if node is None:
        raw = h.configs.server_value("node.id") or h.configs.server_value("broker.id")
        node = int(raw) if raw is not None and raw.lstrip("-").isdigit() and int(raw) >= 0 else None
    h.node_id = node
    if opts.zookeeper is not None:
        # the identity only: the configs read in the same session are said in inputs.topic_configs
        ident = {k: opts.zookeeper.get(k) for k in ("connect", "cluster_id")}
        if opts.zookeeper.get("configs_error"):
            ident["configs_error"] = opts.zookeeper["configs_error"]
        h.inputs["zookeeper"] = Input(ident, "--zookeeper")
    elif opts.zookeeper_skip is not None:
        h.skipped_inputs["zookeeper"] = opts.zookeeper_skip
    if opts.cluster is None:
        # asked and not answered: a skip with its reason (never a silent pass); not asked: not part of the audit
        if opts.cluster_skip is not None:
            h.skipped_inputs["cluster"] = opts.cluster_skip
        return
    h.cluster = opts.cluster
    h.inputs["cluster"] = Input(opts.cluster.get("bootstrap"), "--bootstrap-server")
    h.cluster_mismatch = other_cluster(opts.cluster, h.meta_cluster_id)
    if h.cluster_mismatch:
        return
    topics = opts.cluster.get("topic_configs") or {}
    if topics:
        h.configs.topics = {t: dict(c) for t, c in topics.items()}
        h.configs.topics_source = f"the cluster at {opts.cluster.get('bootstrap')}"
        h.configs.topics_label = h.configs.topics_origin = "cluster"
        h.configs.topic_origins = {}
        h.inputs["topic_configs"] = Input(h.configs.topics_source, "--bootstrap-server")
        h.skipped_inputs.pop("topic_configs", None)
        h.last_topic_config = None


def apply_zookeeper_configs(h: HostFacts, opts: AuditOptions) -> None:
    """A ZooKeeper-mode broker's topic overrides and dynamic broker configs, read from ZooKeeper with
    --zookeeper (kafka_ops.cluster.zookeeper: ``/config/topics/<t>``, ``/config/brokers/<default>`` and
    ``/config/brokers/<broker.id>``): what the broker loads its logs with when the cluster is down. Not applied
    when its /cluster/id is not meta.properties' (another cluster's configs: ENV002 says so), and the topic
    overrides not when --topic-configs or --bootstrap-server gave them. Precedence as DynamicBrokerConfig's:
    the broker's own dynamic config > the cluster default > server.properties."""
    zk = opts.zookeeper
    if not isinstance(zk, dict) or "topic_configs" not in zk:
        return
    if h.meta_cluster_id and zk.get("cluster_id") != h.meta_cluster_id:
        return
    where = f"ZooKeeper at {zk.get('connect')}"
    cfg = h.configs
    brokers = zk.get("broker_configs") or {}
    dynamic = []
    if h.node_id is not None and brokers.get(str(h.node_id)):
        dynamic.append(
            (f"dynamic broker config (broker {h.node_id}, {where})", dict(brokers[str(h.node_id)]))
        )
    if brokers.get("<default>"):
        dynamic.append((f"dynamic cluster default ({where})", dict(brokers["<default>"])))
    cfg.dynamic = dynamic
    notes = [f"unreadable znode {p} (not a config's JSON): left out" for p in zk.get("unreadable") or []]
    if h.has("topic_configs"):
        inp = h.inputs["topic_configs"]
        inp.notes = [*(inp.notes or []), *notes, f"topic overrides from {inp.source}, not from ZooKeeper"]
        if dynamic:
            inp.dynamic = dict(dynamic)
        return
    cfg.topics = {t: dict(c) for t, c in (zk.get("topic_configs") or {}).items()}
    cfg.topics_source = f"{where} (/config/topics)"
    cfg.topics_origin = "ZooKeeper /config/topics"
    cfg.topic_origins = {}
    h.inputs["topic_configs"] = Input(cfg.topics_source, "--zookeeper", notes=notes or None)
    if dynamic:
        h.inputs["topic_configs"].dynamic = dict(dynamic)
    h.skipped_inputs.pop("topic_configs", None)
    h.last_topic_config = None


def other_cluster(facts: Mapping[str, Any], meta_cluster_id: str | None) -> bool:
    """Whether the cluster that answered has another cluster.id than the audited dirs' meta.properties (both
    known): its facts are not this broker's."""
    theirs = facts.get("cluster_id")
    return bool(theirs and meta_cluster_id and theirs != meta_cluster_id)


def _first_timestamp(path: str, buf: LogBuffer | None = None) -> int | None:
    try:
        if buf is None:  # the first batch is all it needs: the oldest segment is often the largest file
            with LogBuffer.open_first_batch(path) as opened:
                return _first_timestamp(path, opened)
        for b in BatchScanner(buf, verify_crc=False, controls=False):
            return b.base_timestamp if not b.has_delete_horizon else None
    except EngineError:
        return None
    return None


def _control_runs(pf: PartitionFacts) -> None:
    """Longest run of consecutive control batches (bytes) in a compacted partition: what KAFKA-6854's cleaner
    could not read past (LogCleaner.cleanInto grew its buffers while a read held only discarded batches)."""
    best = (0, 0, -1, -1)
    for seg in pf.part.segments:
        run_bytes = run_batches = 0
        run_start = -1
        try:
            with LogBuffer.open(seg.log.path) as buf:  # type: ignore[union-attr]
                for b in BatchScanner(buf, verify_crc=False, controls=False):  # sizes and offsets only
                    if b.is_control:
                        pf.control_batches += 1
                        if run_batches == 0:
                            run_start = b.base_offset
                        run_bytes += b.size
                        run_batches += 1
                        if run_bytes > best[0]:
                            best = (run_bytes, run_batches, run_start, seg.base_offset)
                    else:
                        run_bytes = run_batches = 0
        except EngineError as exc:
            pf.errors.append(exc)
    pf.control_run = best if best[1] else None


def partition_acls(who: Identity, part: Partition) -> dict[str, list[tuple[int, int, int]]]:
    """The POSIX ACLs of a partition's dir and files that can change ``who``'s access (the audit's partition
    facts and the plan's stat-only pre-pass read them the same way: one rule for what the broker user can open).

    An ACL cannot change the access of root, nor of the file's owner, whose access is the owner bits
    (ACL_USER_OBJ) whatever the ACL says (facts.access.decide): one getxattr per other file (most hosts: none)."""
    acls: dict[str, list[tuple[int, int, int]]] = {}
    uid = who.uid
    if uid == 0:
        return acls
    for fi in [part.dir_info, *partition_files(part)]:
        if fi is not None and fi.uid != uid:
            acl = read_acl(fi.path)
            if acl:
                acls[fi.path] = acl
    return acls


def topic_config(h: HostFacts, topic: str) -> TopicConfig:
    """``h.configs.for_topic`` for a stream of partitions: partition dirs are sorted, so a topic's partitions
    mostly come in a row and share one config (a one-topic cache: memory stays flat in the number of topics)."""
    last = h.last_topic_config
    if last is not None and last.topic == topic:
        return last
    cfg = h.last_topic_config = h.configs.for_topic(topic)
    return cfg


def gather_partition(h: HostFacts, ldf: LogDirFacts, path: str, name: PartitionName) -> PartitionFacts:
    # read from the module at each call (bench_audit_stages wraps it), without an import statement per partition
    read_segment_tails = logdir.read_segment_tails
    part = scan_partition(path, name, read_tails=False)
    key = (name.topic, name.partition)
    cps = ldf.scan.checkpoints
    pf = PartitionFacts(
        ldf, part, topic_config(h, name.topic),
        (cps.get(ckpt.RECOVERY_POINT) or {}).get(key),
        (cps.get(ckpt.LOG_START) or {}).get(key),
        (cps.get(ckpt.CLEANER) or {}).get(key),
    )  # fmt: skip
    for seg in part.segments:
        read_segment_tails(seg)
        if seg.errors:
            pf.errors.extend(seg.errors)
    if part.errors:
        pf.errors.extend(part.errors)
    who = h.identity
    if who is not None:  # ACLs only matter to the permission checks, which need the broker user
        pf.acls.update(partition_acls(who, part))
    running = h.broker_state == "running"
    if not running and part.segments:
        rec = recovered_segments(
            part, ldf.clean_shutdown, pf.recovery_point,
            missing_index_recovers=versions.missing_index_rebuilt(h.kafka_version),
        )  # fmt: skip
        pf.will_recover = [s.base_offset for s in rec]
        for seg in rec:
            try:
                pf.recovery[seg.base_offset] = recovery_scan(seg, pf.config.int("index.interval.bytes"))
            except EngineError as exc:
                pf.errors.append(exc)
    if h.options.deep:
        for seg in part.segments:
            if seg.base_offset not in pf.recovery and seg.log is not None:
                try:
                    pf.recovery[seg.base_offset] = recovery_scan(seg, pf.config.int("index.interval.bytes"))
                except EngineError as exc:
                    pf.errors.append(exc)
    if part.segments:
        _read_active_and_oldest(h, pf, running)
    if pf.config.compacted:
        _control_runs(pf)
    if h.options.probe_as_user and who is not None:
        from kafka_ops.facts.probe import probe_paths

        paths = [f.path for s in part.segments for f in s.files]
        if part.dir_info:
            paths.append(part.dir_info.path)
        pf.probe = probe_paths(who, paths)
    return pf


def _read_active_and_oldest(h: HostFacts, pf: PartitionFacts, running: bool) -> None:
    """The log end offset (the active segment's tail), the oldest segment's first timestamp and, for a stopped
    broker, how the active segment ends (SHUT002's ``active_tail``): each ``.log`` opened once."""
    segs = pf.part.segments
    active, oldest = segs[-1], segs[0]
    assert active.log is not None  # scan_partition lists segments with a .log only
    buf: LogBuffer | None = None
    try:
        buf = LogBuffer.open(active.log.path)
    except EngineError as exc:
        pf.errors.append(exc)  # what next_offset reports when it cannot open the log
    # SHUT002 would open the active .log again for its tail: read here, where the log is open already
    want_tail = not running and active.log.size and active.base_offset not in pf.recovery
    both: tuple[int, TailScan] | None = None
    if buf is not None and want_tail:
        try:
            both = end_and_tail(active, buf)  # one CRC pass for the end offset and the tail, most of the time
        except EngineError:
            both = None  # next_offset says it below
    try:
        if both is not None:
            pf.log_end_offset = both[0]
        elif buf is not None:
            try:
                pf.log_end_offset = next_offset(active, buf)
            except EngineError as exc:
                pf.errors.append(exc)
        if oldest.log is not None and oldest.log.size:
            ts = _first_timestamp(oldest.log.path, buf if oldest is active else None)
            if ts is not None:
                pf.first_timestamps[oldest.base_offset] = ts
        if want_tail:
            if both is not None:
                pf.active_tail = both[1]
            else:
                pf.active_tail = active_tail(active, buf) if buf is not None else None
    finally:
        if buf is not None:
            buf.close()


def iter_partitions(h: HostFacts, ldf: LogDirFacts) -> Iterator[PartitionFacts]:
    for path, name in ldf.scan.partition_names:
        yield gather_partition(h, ldf, path, name)
