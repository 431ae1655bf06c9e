"""A KRaft host's own topic and broker configs, read from its copy of the metadata log (``facts.kraft_metadata``).

A KRaft broker keeps no topic config in a file: ``kafka-configs --alter`` and the tools that create topics with
their own configs (Connect's, Schema Registry's and ksqlDB's internal topics, Streams' changelogs) write
ConfigRecords to ``__cluster_metadata``, and the broker loads its logs with them (``BrokerMetadataPublisher.
initializeManagers`` -> ``LogManager.startup`` with ``metadataCache``'s image: ``fetchTopicConfigOverrides``), then
applies the dynamic broker configs (``DynamicConfigPublisher``: BROKER resources named by its own ``node.id``,
and the cluster default, named ``""``) as the logs' defaults. Precedence, as the broker's (DynamicBrokerConfig's
doc, apache/kafka 3.9.0): a topic's override > the node's dynamic config > the cluster default > server.properties
> Kafka's default. ``--topic-configs`` and ``--bootstrap-server`` still take the place of the topic overrides
read here when given (the cluster's are its current ones). Standard library only.
"""

from __future__ import annotations

import os

from kafka_ops.facts.kraft_metadata import BROKER_RESOURCE, TOPIC_RESOURCE, MetadataImage, read_metadata
from kafka_ops.facts.model import HostFacts, Input

METADATA_PARTITION = "__cluster_metadata-0"


def metadata_dir(h: HostFacts) -> str | None:
    """``__cluster_metadata-0`` in KafkaConfig.metadataLogDir (metadata.log.dir, else the first log dir), else in
    any audited log dir; None when no audited dir has one (a ZooKeeper-mode host)."""
    want = h.configs.server.get("metadata.log.dir", "").strip()
    dirs = [ldf.path for ldf in h.log_dirs]
    if want:
        dirs.insert(0, os.path.abspath(want))
    for d in dirs:
        path = os.path.join(d, METADATA_PARTITION)
        if os.path.isdir(path) and not os.path.islink(path):
            return path
    return None


def _at(image: MetadataImage, key: tuple[int, str]) -> str:
    offset = image.config_offsets.get(key)
    if offset is None and image.snapshot is not None:
        return f"metadata snapshot {os.path.basename(image.snapshot)}"
    return f"metadata log at offset {offset}"


def apply(h: HostFacts) -> None:
    """Read the host's metadata log (when it has one) into ``h.configs``: the node's and the cluster default's
    dynamic broker configs always, the topics' overrides unless ``--topic-configs`` or the cluster gave them.
    Without any source of topic overrides, ``h.configs.assumed`` says that the broker's defaults are assumed."""
    cfg = h.configs
    from_option = h.has("topic_configs")  # --topic-configs or --bootstrap-server (apply_cluster)
    path = metadata_dir(h)
    read = read_metadata(path) if path is not None else None
    if read is None:
        if from_option:
            return
        if path is not None:
            cfg.assumed = (
                f"no topic config was read (the KRaft metadata log {path} has no snapshot or segment to read)"
            )
        elif cfg.process_roles():
            cfg.assumed = (
                "no topic config was read (a KRaft broker, but its metadata log __cluster_metadata-0 is in none of "
                "the audited dirs: give --log-dir for metadata.log.dir, --bootstrap-server or --topic-configs)"
            )
        else:
            cfg.assumed = (
                "no topic config was read (no KRaft metadata log in the audited dirs: ZooKeeper mode keeps them "
                "in ZooKeeper; give --zookeeper auto, --bootstrap-server or --topic-configs)"
            )
        return
    image = read[0]
    if image.unreadable is not None:
        # every snapshot is damaged and the log does not start at 0: no config of this copy can be known (the
        # broker itself does not start on such a copy: broker.metadata_log, DIR007)
        if not from_option:
            cfg.assumed = (
                f"no topic config was read ({image.unreadable}; give --bootstrap-server or --topic-configs)"
            )
        else:
            inp = h.inputs["topic_configs"]
            inp.notes = [*(inp.notes or []), f"the metadata log cannot be read: {image.unreadable}"]
        return
    node = h.node_id
    dynamic = []
    for label, name in ((f"dynamic broker config (node {node})", str(node)), ("dynamic cluster default", "")):
        if node is None and name != "":
            continue
        values = image.configs.get((BROKER_RESOURCE, name))
        if values:
            dynamic.append((label, dict(values)))
    cfg.dynamic = dynamic
    snap = os.path.basename(image.snapshot) if image.snapshot else None
    snap_end = int(snap.split("-", 1)[0]) if snap else 0
    if snap and image.end_offset <= snap_end:
        where = f"snapshot {snap}, no record after it"
    elif snap:
        where = f"snapshot {snap}, then the log to offset {image.end_offset - 1}"
    else:
        where = f"no snapshot, the log from its start to offset {image.end_offset - 1}"
    notes = [
        f"this host's copy of the metadata log ({where}): the broker applies what the quorum committed, which "
        "may be newer"
    ]
    for skipped in image.skipped:
        notes.append(
            f"a later snapshot does not read and was passed over ({skipped}): the configs are those of "
            + (f"the snapshot before it, {snap}" if snap else "the log from offset 0")
            + ", what the node reads once it is moved aside (the broker's own start on it: DIR007)"
        )
    if image.stopped:
        notes.append(f"read up to offset {image.end_offset - 1} only: {image.stopped}")
    if from_option:
        inp = h.inputs["topic_configs"]
        inp.notes = [*notes, f"topic overrides from {inp.source}, not from the metadata log"]
        if dynamic:
            inp.dynamic = dict(dynamic)
        return
    topics = {name: dict(v) for (rtype, name), v in image.configs.items() if rtype == TOPIC_RESOURCE}
    cfg.topics = topics
    cfg.topics_source = path
    cfg.topic_origins = {t: _at(image, (TOPIC_RESOURCE, t)) for t in topics}
    h.inputs["topic_configs"] = Input(path, "KRaft metadata log", notes=notes)
    if dynamic:
        h.inputs["topic_configs"].dynamic = dict(dynamic)
    h.skipped_inputs.pop("topic_configs", None)
    h.last_topic_config = None
