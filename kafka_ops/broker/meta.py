"""meta.properties as the broker judges it at start: the one rule that DIR002 reports and the next-start plan
follows (the broker exits, or the dir goes offline, or it starts with the dir).

What the broker does at start (apache/kafka snapshot 1eb7644, metadata/.../properties/):
* ``MetaPropertiesEnsemble.Loader.load()`` reads ``<dir>/meta.properties`` of every log dir (and the metadata
  log dir): NoSuchFile -> ``emptyLogDirs``; any other exception (unreadable, unknown ``version``, v1 without
  ``node.id``, bad ``directory.id``) -> ``errorLogDirs``, which ``LogManager`` takes offline at start ("Failed to
  load <dir> during broker startup"); KRaft stops when it is the metadata log dir ("Encountered I/O error in
  metadata log directory <dir>. Cannot continue.").
* ``MetaProperties.Builder(Properties)``: ``version`` defaults to 0; v0 reads ``broker.id`` (optional), v1 reads
  ``node.id`` (required); ``directory.id`` must parse as a Uuid.
* ``MetaPropertiesEnsemble.verify`` (dirs in path order), RuntimeException = the broker does not start:
  "cluster.id was not specified in the v1 file: <path>", "Invalid cluster.id in: <path>. Expected <a>, but read
  <b>", "Stored node id <n> doesn't match previous node id <m> in <path>. ...", "Duplicate directory ID ...",
  "Invalid resrved directory ID ..." [sic]; ZooKeeper mode without migration also requires v0 ("Found
  unexpected version in <path>. ZK-based brokers that are not migrating only support version 0 ...").
  KRaft passes ``node.id`` of server.properties as the expected node id; ZooKeeper mode passes the cluster id
  stored in ZooKeeper and ``broker.id`` when it is set (KafkaServer.startup).
* Missing meta.properties: KRaft (``KafkaRaftServer.initializeLogDirs``) throws "No `meta.properties` found in
  <dir> (have you run `kafka-storage.sh` to format the directory?)" for any such dir, empty or not. ZooKeeper
  mode (``KafkaServer.startup``) writes a new one for every dir without one, with ZooKeeper's cluster id and its
  broker id, and never looks at what the dir holds: a dir full of partitions is adopted as this broker's data.
* Before 3.7 (``BrokerMetadataCheckpoint.getBrokerMetadataAndOfflineDirs``): ZooKeeper mode compared the raw
  properties of all dirs: any difference -> InconsistentBrokerMetadataException "BrokerMetadata is not consistent
  across log.dirs. This could happen if multiple brokers shared a log directory (log.dirs) or partial data was
  manually copied from another broker. ..."; a cluster id other than ZooKeeper's -> InconsistentClusterIdException
  "The Cluster ID <zk> doesn't match stored clusterId Some(<id>) in meta.properties. The broker is trying to join
  the wrong cluster. Configured zookeeper.connect may be wrong."
"""

from __future__ import annotations

import base64
import binascii
import os
from dataclasses import field
from typing import cast

from kafka_ops.engine import versions
from kafka_ops.engine.checkpoints import META_PROPERTIES
from kafka_ops.engine.compat import slotted
from kafka_ops.engine.fileio import SYMLINK
from kafka_ops.engine.layout import METADATA_TOPIC
from kafka_ops.engine.shell import content_free, q
from kafka_ops.facts.config import Configs
from kafka_ops.facts.model import HostFacts, LogDirFacts

EXITS, OFFLINE = "exits", "offline"


@slotted(frozen=True)
class MetaVerdict:
    """One log dir's meta.properties as the next start judges it: ``start`` is EXITS (the broker does not start),
    OFFLINE (this dir goes offline) or None (the broker starts with it; ``severity`` says what is still wrong)."""

    log_dir: str
    path: str
    message: str
    fix: str
    severity: str
    start: str | None
    details: dict[str, object] = field(default_factory=dict)


# The plan asks once per log dir and once for the broker: the last host's verdicts are kept.
_last: tuple[object, list[MetaVerdict]] = (None, [])


def verdicts(h: HostFacts) -> list[MetaVerdict]:
    """Every log dir's verdict that has something to say, in the order the broker checks them (MetaPropertiesEnsemble
    .verify: dirs in path order)."""
    global _last
    if _last[0] is not h:
        _last = (h, _verdicts(h))
    return _last[1]


def exit_verdict(h: HostFacts) -> MetaVerdict | None:
    """The first meta.properties that makes the broker exit at start, or None."""
    return next((v for v in verdicts(h) if v.start == EXITS), None)


def offline_verdict(h: HostFacts, ldf: LogDirFacts) -> MetaVerdict | None:
    """This dir's meta.properties when it takes the dir offline at start, or None."""
    return next((v for v in verdicts(h) if v.start == OFFLINE and v.log_dir == ldf.path), None)


def _verdicts(h: HostFacts) -> list[MetaVerdict]:
    out: list[MetaVerdict] = []
    mode = broker_mode(h)
    legacy = versions.since("json_clean_shutdown", h.kafka_version) is False  # BrokerMetadataCheckpoint era
    server = h.configs.server
    node_key = "broker.id" if mode == "zk" else "node.id"
    configured = _int(
        server.get(node_key) if mode != "unknown" else server.get("node.id", server.get("broker.id"))
    )
    if configured is not None and configured < 0:
        configured = None  # broker.id=-1: generated from ZooKeeper (KafkaServer.getOrGenerateBrokerId)
    meta_dir = metadata_log_dir(h) if mode == "kraft" else None
    migrating = server.get("zookeeper.metadata.migration.enable", "false").strip().lower() == "true"

    valid: list[tuple[LogDirFacts, dict[str, object]]] = []
    for ldf in sorted(h.log_dirs, key=lambda d: d.path):  # the Loader's TreeSet order
        path = os.path.join(ldf.path, META_PROPERTIES)
        names = {f.path.rsplit("/", 1)[-1] for f in ldf.scan.root_files}
        if (
            ldf.scan.exists
            and META_PROPERTIES not in names
            and any(f.path.rsplit("/", 1)[-1] == META_PROPERTIES for f in ldf.scan.fatal_dirs)
        ):
            # a directory in its place: the read throws an IOException ("Is a directory"), not NoSuchFile: the
            # dir goes offline as for an unreadable file (MetaPropertiesEnsemble.Loader's errorLogDirs from 3.7;
            # getBrokerMetadataAndOfflineDirs before; lab 3.7.2, type-meta_properties_directory), never "missing"
            out.append(_directory(ldf, path, mode, meta_dir))
            continue
        if not ldf.scan.exists or META_PROPERTIES not in names:
            v = _missing(ldf, path, mode)
            if v is not None:
                out.append(v)
            continue
        meta = ldf.scan.meta
        if meta is None and any(e.path == path and e.reason == SYMLINK for e in ldf.scan.errors):
            # a symlink to a file (the scan's stat followed it: a regular file): the broker reads the file it
            # points to (Utils.loadProps / PropertiesUtils.readPropertiesFile open the path, following the link;
            # lab 3.7.2 type-meta_properties_symlink: the dir online), which kafka-ops never reads through a link:
            # whether it holds this broker's ids is the plan's "unknown", not "offline"
            out.append(_linked(ldf, path))
            continue
        if meta is None:
            out.append(_unreadable(ldf, path, mode, meta_dir))
            continue
        kafka_view, problem = _kafka_view(meta.raw)
        if problem:
            out.append(_invalid(ldf, path, problem, mode, meta_dir, kafka_view))
            continue
        valid.append((ldf, kafka_view))

    # MetaPropertiesEnsemble.verify, dirs in the broker's order; one finding per dir, the first reason
    inconsistent = (
        "BrokerMetadata is not consistent across log.dirs. This could happen if multiple brokers shared "
    )
    inconsistent += "a log directory (log.dirs) or partial data was manually copied from another broker."
    expected_cluster: str | None = None
    cluster_from = ""
    expected_node, node_from = configured, f"{node_key}={configured} in server.properties"
    seen_dir_ids: dict[str, str] = {}
    flagged: set[str] = set()
    for ldf, kv in valid:
        path = os.path.join(ldf.path, META_PROPERTIES)
        version, dir_id = kv["version"], kv["directory_id"]
        cluster = cast("str | None", kv["cluster_id"])  # _kafka_view: cluster.id as read, node id as parsed
        node = cast("int | None", kv["node_id"])
        key = "node.id" if version == 1 else "broker.id"
        finding = None
        if mode == "zk" and not migrating and version != 0:
            said = (
                "Found unexpected version in loaded `meta.properties`: ... Zk-based brokers only support version 0 "
                "(which is implicit when the `version` field is missing)."
                if legacy
                else f"Found unexpected version in {path}. ZK-based brokers that are not migrating only support "
                "version 0 (which is implicit when the `version` field is missing)."
            )
            finding = _fatal(
                ldf, path, kv,
                f"it is version {version}, written by a KRaft node (kafka-storage.sh format), but a ZooKeeper-mode "
                f"broker accepts only version 0: the broker does not start ('{said}')",
                "This dir was formatted for another (KRaft) node or cluster: put back this broker's own data, or "
                "empty the dir if it is to be reused.",
            )  # fmt: skip
        elif cluster is None and version == 1:
            finding = _fatal(
                ldf, path, kv,
                f"it is version 1 without cluster.id: the broker does not start ('cluster.id was not specified in "
                f"the v1 file: {path}')",
                "Restore the file from a backup of this dir, or add cluster.id= with the cluster's id (the other log "
                "dirs' meta.properties, or kafka-cluster.sh cluster-id --bootstrap-server ...).",
            )  # fmt: skip
        elif cluster is not None and expected_cluster is not None and cluster != expected_cluster:
            said = (
                inconsistent
                if legacy
                else f"Invalid cluster.id in: {path}. Expected {expected_cluster}, but read {cluster}"
            )
            finding = _fatal(
                ldf, path, kv,
                f"its cluster.id {cluster} differs from {expected_cluster} in {cluster_from}: the log dirs come from "
                f"two clusters and the broker does not start ('{said}')",
                "Find which cluster this broker belongs to (kafka-cluster.sh cluster-id --bootstrap-server ...); the "
                "dir with the other cluster's id holds foreign data: with the broker stopped, move it out of log.dirs "
                "and put back this broker's own copy, or an empty dir (KRaft: then kafka-storage.sh format "
                "--ignore-formatted).",
                expected=expected_cluster,
            )  # fmt: skip
        elif node is None and mode == "kraft":
            finding = _fatal(
                ldf, path, kv,
                f"it is version 0 without broker.id: a KRaft broker does not start ('Error: node ID not found in "
                f"{ldf.path}')",
                f"Add broker.id={configured if configured is not None else '<node id>'} (or rewrite it as version=1 "
                "with node.id and cluster.id), with the broker stopped.",
            )  # fmt: skip
        elif node is not None and expected_node is not None and node != expected_node:
            if not legacy:
                said = (
                    f"Stored node id {node} doesn't match previous node id {expected_node} in {path}. If you moved "
                    "your data, make sure your configured node id matches. If you intend to create a new node, you "
                    "should remove all data in your data directories."
                )
            elif expected_node == configured and mode == "kraft":
                said = f"Configured node.id `{configured}` doesn't match stored node.id `{node}' in meta.properties. ..."
            elif expected_node == configured and mode == "zk":
                said = f"Configured broker.id {configured} doesn't match stored broker.id Some({node}) in meta.properties. ..."
            else:
                said = inconsistent
            finding = _fatal(
                ldf, path, kv,
                f"its {key} is {node} but {node_from}: the broker does not start ('{said}')",
                "The dir holds another node's data (a disk moved between brokers, a restore from the wrong host): "
                "put back this broker's own dir; if it is the configuration that is wrong, fix "
                f"{node_key} in server.properties instead.",
                expected=expected_node,
            )  # fmt: skip
        elif dir_id is not None and _reserved(str(dir_id)):
            finding = _fatal(
                ldf, path, kv,
                f"its directory.id {dir_id} is a reserved id: the broker does not start ('Invalid resrved directory "
                f"ID {dir_id} found in {ldf.path}')",
                "Delete the directory.id line, with the broker stopped: the broker writes a new random one.",
            )  # fmt: skip
        elif dir_id is not None and str(dir_id) in seen_dir_ids:
            prev = seen_dir_ids[str(dir_id)]
            finding = _fatal(
                ldf, path, kv,
                f"its directory.id {dir_id} is also the id of {prev}: one dir was copied from the other, and the "
                f"broker does not start ('Duplicate directory ID Optional[{dir_id}] found. It was the ID of {prev}, "
                f"but also of {ldf.path}'); the controller tracks each replica's dir by this id (KIP-858)",
                f"With the broker stopped, delete the directory.id line of {path} (the broker writes a new one at "
                f"start); if the whole dir is a copy of {prev}, remove the copy instead.",
            )  # fmt: skip
        if finding is not None:
            flagged.add(ldf.path)
            out.append(finding)
            continue
        if cluster is not None and expected_cluster is None:
            expected_cluster, cluster_from = cluster, path
        if node is not None and expected_node is None:
            expected_node, node_from = node, f"{key}={node} in {path}"
        if dir_id is not None:
            seen_dir_ids[str(dir_id)] = ldf.path
    if mode == "zk" and legacy:
        # BrokerMetadataCheckpoint.getBrokerMetadataAndOfflineDirs (<= 3.6): the raw property sets must be equal
        rest = [(ldf, ldf.scan.meta.raw) for ldf, _ in valid if ldf.path not in flagged and ldf.scan.meta]
        for ldf, raw in rest[1:]:
            first, first_raw = rest[0]
            diff = sorted(k for k in set(raw) | set(first_raw) if raw.get(k) != first_raw.get(k))
            if diff:
                path = os.path.join(ldf.path, META_PROPERTIES)
                out.append(
                    MetaVerdict(
                        ldf.path,
                        path,
                        f"{path} differs from {first.path}/{META_PROPERTIES} in {', '.join(diff)}: a ZooKeeper-mode "
                        f"broker before 3.7 compares the files whole and does not start (InconsistentBrokerMetadataException: "
                        f"'{inconsistent}').",
                        "With the broker stopped, make the files identical (the same version, broker.id and cluster.id, and "
                        "no key that only one of them has).",
                        "critical",
                        EXITS,
                        {"differs_in": diff, "compared_with": first.path},
                    )
                )
    return out


def broker_mode(h: HostFacts) -> str:
    """kraft | zk | unknown, from server.properties (process.roles, zookeeper.connect) and the version."""
    s = h.configs.server
    if s.get("process.roles", "").strip():
        return "kraft"
    if s.get("zookeeper.connect", "").strip():
        return "zk"
    if versions.since("kraft_only", h.kafka_version):
        return "kraft"
    return "unknown"


def metadata_log_dir(h: HostFacts) -> str | None:
    """KafkaConfig.metadataLogDir: metadata.log.dir, else the first entry of log.dirs. Without a configuration
    that names either (no server.properties: only --log-dir), the one audited dir holding ``__cluster_metadata-0``
    is taken for it (what a broker with these dirs as log.dirs finds; two such dirs: None, not known): never a
    "misplaced metadata log" exit made of a missing config (a false critical on every KRaft host audited with
    --log-dir alone)."""
    configured = metadata_log_dir_of(h.configs)
    if configured is not None or h.configs.log_dirs:
        return configured
    holding = {
        os.path.abspath(ldf.path)
        for ldf in h.log_dirs
        for _path, name in ldf.scan.partition_names
        if name.topic == METADATA_TOPIC and name.partition == 0 and name.kind == "log"
    }
    return holding.pop() if len(holding) == 1 else None


def metadata_log_dir_of(configs: Configs) -> str | None:
    """KafkaConfig.metadataLogDir of a server configuration (None: neither metadata.log.dir nor log.dirs)."""
    m = configs.server.get("metadata.log.dir", "").strip()
    if m:
        return os.path.abspath(m)
    dirs = configs.log_dirs
    return os.path.abspath(dirs[0]) if dirs else None


def _int(v: str | None) -> int | None:
    try:
        return int(v.strip()) if v is not None else None
    except ValueError:
        return None


def _kafka_view(raw: dict[str, str]) -> tuple[dict[str, object], str | None]:
    """What ``MetaProperties.Builder(Properties)`` makes of the file, or why it throws."""
    view: dict[str, object] = {"version": None, "cluster_id": None, "node_id": None, "directory_id": None}
    v = raw.get("version", "0").strip()
    try:
        version = int(v)
    except ValueError:
        return view, f"its version '{v}' is not a number (MetaPropertiesVersion.fromNumberString)"
    view["version"] = version
    if version not in (0, 1):
        return view, f"'Unknown meta.properties version number {version}'"
    key = "broker.id" if version == 0 else "node.id"
    if key in raw:
        node = _int(raw[key])
        if node is None:
            return view, f"its {key} '{raw[key]}' is not an int (PropertiesUtils.loadRequiredIntProp)"
        view["node_id"] = node
    elif version == 1:
        return view, "it is version 1 without node.id (PropertiesUtils.loadRequiredIntProp)"
    view["cluster_id"] = raw.get("cluster.id")
    if "directory.id" in raw:
        d = raw["directory.id"].strip()
        if not _uuid_ok(d):
            return view, f"'Unable to read directory.id as a Uuid': '{d}' is not a base64 Uuid"
        view["directory_id"] = d
    return view, None


def _uuid_ok(s: str) -> bool:
    """Uuid.fromString: at most 24 chars of URL-safe base64 decoding to 16 bytes."""
    if len(s) > 24:
        return False
    try:
        raw = base64.b64decode(s + "=" * (-len(s) % 4), altchars=b"-_", validate=True)
    except (binascii.Error, ValueError):
        return False
    return len(raw) == 16


def _reserved(s: str) -> bool:
    """DirectoryId.reserved: most significant bits 0 and least significant < 100."""
    raw = base64.b64decode(s + "=" * (-len(s) % 4), altchars=b"-_")
    return int.from_bytes(raw[:8], "big") == 0 and int.from_bytes(raw[8:], "big", signed=True) < 100


def _offline_text(ldf: LogDirFacts, mode: str, meta_dir: str | None) -> str:
    if mode == "kraft" and meta_dir == ldf.path:
        return (
            f"it is the metadata log dir, so the broker does not start ('Encountered I/O error in metadata log "
            f"directory {ldf.path}. Cannot continue.')"
        )
    return (
        f"MetaPropertiesEnsemble.Loader puts {ldf.path} in errorLogDirs and LogManager takes it offline at start "
        f"('Failed to load {ldf.path} during broker startup'): its partitions are unavailable on this broker"
    )


def _offline_start(ldf: LogDirFacts, mode: str, meta_dir: str | None) -> str:
    return EXITS if mode == "kraft" and meta_dir == ldf.path else OFFLINE


def _directory(ldf: LogDirFacts, path: str, mode: str, meta_dir: str | None) -> MetaVerdict:
    return MetaVerdict(
        ldf.path,
        path,
        f"{path} is a directory, not a file: reading it fails ('Is a directory'): {_offline_text(ldf, mode, meta_dir)}.",
        f"With the broker stopped, look at what is in it (ls -la {q(path)}), move it out of the log dir, and restore "
        "meta.properties from a backup, or rewrite it from another log dir of this broker (the same version, "
        "cluster.id and node.id), owned by the broker user.",
        "critical",
        _offline_start(ldf, mode, meta_dir),
        {"reason": "a directory", "mode": mode},
    )


LINKED = "a symbolic link to a file"


def _linked(ldf: LogDirFacts, path: str) -> MetaVerdict:
    return MetaVerdict(
        ldf.path,
        path,
        f"{path} is a symbolic link to a file: the broker reads the file it points to, which kafka-ops does not "
        "(it never reads through a link): whether it holds this broker's cluster.id and node.id is not checked.",
        f'Replace the link by the file itself (with the broker stopped: cp --remove-destination "$(readlink -f '
        f'{q(path)})" {q(path)}), owned by the broker user, and audit again.',
        "warning",
        None,
        {"reason": LINKED},
    )


def unknowns(h: HostFacts) -> list[dict[str, str]]:
    """What the plan cannot decide about the log dirs' meta.properties: a symlinked one's content."""
    return [
        {
            "what": f"whether {v.path} (a symbolic link) holds this broker's cluster.id and node.id, which decide "
            f"whether {v.log_dir} is loaded",
            "reason": "kafka-ops never reads a file through a link; the broker reads the file it points to",
        }
        for v in verdicts(h)
        if v.details.get("reason") == LINKED
    ]


def _unreadable(ldf: LogDirFacts, path: str, mode: str, meta_dir: str | None) -> MetaVerdict:
    reason = content_free(next((e.reason for e in ldf.scan.errors if e.path == path), "unreadable"))
    if "no 'version' property" in reason:
        # Kafka reads a missing version as 0 (MetaProperties.Builder); kafka-ops's reader does not parse it
        return MetaVerdict(
            ldf.path,
            path,
            f"{path} has no version= line: Kafka reads it as version 0, but kafka-ops could not compare it with the "
            f"other log dirs ({reason}).",
            f"Check it by hand (cat -v {q(path)}) against the other log dirs' meta.properties.",
            "warning",
            None,
            {"reason": reason},
        )
    return MetaVerdict(
        ldf.path,
        path,
        f"{path} cannot be read or parsed ({reason}): {_offline_text(ldf, mode, meta_dir)}.",
        f"With the broker stopped, restore {path} from a backup, or rewrite it from another log dir of this broker "
        f"(the same version, cluster.id and node.id, and this dir's own directory.id if a backup has it), owned by "
        f"the broker user.",
        "critical",
        _offline_start(ldf, mode, meta_dir),
        {"reason": reason, "mode": mode},
    )


def _invalid(
    ldf: LogDirFacts, path: str, problem: str, mode: str, meta_dir: str | None, view: dict[str, object]
) -> MetaVerdict:
    return MetaVerdict(
        ldf.path,
        path,
        f"{path} is invalid for the broker: {problem}. MetaProperties.Builder throws, so "
        f"{_offline_text(ldf, mode, meta_dir)}.",
        f"With the broker stopped, fix {path} (version=1 with cluster.id and node.id for KRaft; version=0 with "
        f"broker.id and cluster.id for ZooKeeper mode) to match this broker's other log dirs.",
        "critical",
        _offline_start(ldf, mode, meta_dir),
        {"problem": problem, **view},
    )


def _fatal(
    ldf: LogDirFacts, path: str, view: dict[str, object], what: str, fix: str, expected: object = None
) -> MetaVerdict:
    return MetaVerdict(
        ldf.path, path, f"{path}: {what}.", fix, "critical", EXITS, {**view, "expected": expected}
    )


def _missing(ldf: LogDirFacts, path: str, mode: str) -> MetaVerdict | None:
    partitions = len(ldf.scan.partition_names)
    holds = f"holds {partitions} partition dir(s)" if partitions else "holds no partition"
    kraft_text = (
        f"a KRaft broker does not start ('No `meta.properties` found in {ldf.path} (have you run `kafka-storage.sh` "
        f"to format the directory?)')"
    )
    zk_text = (
        "a ZooKeeper-mode broker writes a new one with the cluster id from ZooKeeper and its own broker id, without "
        "checking what the dir holds"
    )
    if mode == "kraft":
        sev, what = "critical", kraft_text
    elif mode == "zk":
        if not partitions:
            return None  # a new, empty dir: the broker initialises it
        sev, what = (
            "warning",
            zk_text
            + ": these partitions are adopted as this broker's data whatever broker or cluster they came from",
        )
    else:
        sev = "critical" if partitions else "warning"
        what = f"{kraft_text}; {zk_text}"
    fix = (
        f"If {ldf.path} is this broker's own data and only the file was lost, recreate it with the broker stopped "
        f"from another log dir of this broker (the same version, cluster.id and node.id), with this dir's own "
        f"directory.id if a backup has it: a new one makes the controller see a new dir (KIP-858). KRaft: "
        f"kafka-storage.sh format --ignore-formatted -t <cluster id> -c <server.properties> writes one, with a new "
        f"directory.id, into every log dir that lacks it (Formatter.doFormat). If the data came from elsewhere, move "
        f"it out of log.dirs first."
    )
    if not ldf.scan.exists:
        fix = "The dir itself is missing (DIR001): mount or create it first. " + fix
    return MetaVerdict(
        ldf.path,
        path,
        f"{path} is missing ({ldf.path} {holds}{'' if ldf.scan.exists else ', and does not exist'}): {what}.",
        fix,
        sev,
        # KafkaRaftServer.initializeLogDirs throws for any such dir; a ZooKeeper-mode broker adopts it (and a
        # broker of unknown mode is either: the finding says both, the plan decides nothing)
        EXITS if mode == "kraft" else None,
        {"partitions": partitions, "mode": mode, "exists": ldf.scan.exists},
    )


def misplaced_metadata_logs(h: HostFacts) -> list[tuple[LogDirFacts, str, str]]:
    """(log dir, path, metadata log dir) of every KRaft metadata log found in a data dir other than the metadata log
    dir: KafkaRaftServer.initializeLogDirs throws 'Found unexpected metadata location in data directory ...' and the
    broker does not start."""
    if broker_mode(h) != "kraft":
        return []
    meta_dir = metadata_log_dir(h)
    if meta_dir is None:
        return []  # no configuration names the metadata log dir: which copy is misplaced is not known
    out = []
    for ldf in h.log_dirs:
        if ldf.path == meta_dir or ldf.scan.meta is None:
            continue  # KafkaRaftServer only looks in the dirs whose meta.properties it read
        for path, name in ldf.scan.partition_names:
            if name.topic == METADATA_TOPIC and name.partition == 0 and name.kind == "log":
                out.append((ldf, path, str(meta_dir)))
    return out
