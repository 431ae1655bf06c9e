"""This host's copy of the KRaft metadata log (``__cluster_metadata-0``) read as the broker's metadata image: its
latest complete snapshot (``<end offset>-<epoch>.checkpoint``), then the log's records after it, in order
(``MetadataDelta.replay``), with metadata transactions as the MetadataLoader applies them.

What the image keeps: the topics (TopicsDelta: ids, names, partitions, replicas; ``broker.strays`` judges the
partition dirs by them) and the configs (ConfigurationsDelta; ``facts.kraft_configs`` turns them into the topics'
and the broker's configs). Kafka (apache/kafka 3.9.0, metadata/src/main/java/org/apache/kafka/image/):

* ``ConfigurationsDelta.replay(ConfigRecord)`` -> ``ConfigurationDelta.replay``: ``changes.put(name,
  Optional.ofNullable(value))``: a value sets the key of the resource (ConfigResource(type, name)), a null value
  deletes it; ``apply()`` leaves a resource whose configs are all deleted out of the image.
* ``MetadataDelta.replay(RemoveTopicRecord)``: ``TopicsDelta.replay`` gives the topic's name, then
  ``ConfigurationsDelta.replay(record, topicName)`` -> ``deleteAll()``: a topic's configs (keyed by its name, not
  its id) go with the topic, so a topic created again under the same name (a new TopicRecord, a new id) starts
  without them. (From 3.8.0, KAFKA-16206, deleteAll only runs when the base image already held the topic's configs:
  a topic created and deleted within one delta the loader applies at once keeps its configs under its name, a
  same-name re-creation in that delta inherits the keys it does not set again. Where the loader cuts its deltas is
  not on the disk: this reading applies the deletion, as every release does when the topic was created in an
  earlier delta.)
* Which records the broker applies: ``KafkaRaftClient`` hands its listeners committed records only (up to the
  quorum's high watermark, ``updateListenersProgress``), and a starting broker publishes its first image once it
  caught up with the quorum (MetadataLoader). The high watermark is not on the disk (KafkaMetadataLog keeps none):
  this reads every record this copy holds, which the quorum may have moved past (or, for records of an election
  this node lost, truncate): what it says is this host's copy, ``end_offset`` says up to where.

Standard library only.
"""

from __future__ import annotations

import os
from dataclasses import field

from kafka_ops.engine import binary
from kafka_ops.engine.compat import slotted
from kafka_ops.engine.errors import EngineError
from kafka_ops.engine.layout import parse_kraft_snapshot, parse_segment_file
from kafka_ops.engine.metadata_records import decode_metadata_record
from kafka_ops.engine.records import BatchScanner, LogBuffer, RecordError, iter_records


@slotted
class MetadataImage:
    """The topics of a metadata log as this host's copy has them (TopicsImage's ids, names and partitions)."""

    path: str  # the __cluster_metadata-0 dir
    snapshot: str | None  # the snapshot read first, if any
    end_offset: int  # the offset after the last record applied
    topics: dict[str, tuple[str, set[int]]] = field(default_factory=dict)  # topic id -> (name, partitions)
    # (topic id, partition) -> its replica node ids, None where a record of a version this kafka-ops does not
    # know left them unread (the assignment is then not judged)
    replicas: dict[tuple[str, int], tuple[int, ...] | None] = field(default_factory=dict)
    # ConfigRecords as ConfigurationsDelta applies them: (resource type, resource name) -> {key: value}; and the
    # offset of the last record that changed each resource (None: set by the snapshot)
    configs: dict[tuple[int, str], dict[str, str]] = field(default_factory=dict)
    config_offsets: dict[tuple[int, str], int | None] = field(default_factory=dict)
    # why the records this copy holds were not all read (a torn or corrupt tail, a record that does not decode,
    # a segment missing after the snapshot), said next to what was read; None: read to its end
    stopped: str | None = None
    # later snapshots that do not read whole (zero-filled, truncated, garbage: a power loss), passed over for the
    # one read (broker.metadata_log says what the broker does with them), one line each
    skipped: list[str] = field(default_factory=list)
    # why no topic config can be known from this copy: every snapshot is damaged and the log does not start at
    # offset 0 (the records before it are in no readable file); None: read
    unreadable: str | None = None

    def name_id(self, name: str) -> str | None:
        return next((tid for tid, (n, _) in self.topics.items() if n == name), None)


class _Unreadable(Exception):
    pass


TOPIC_RESOURCE, BROKER_RESOURCE = 2, 4  # ConfigResource.Type ids (TOPIC, BROKER)


def _apply(image: MetadataImage, rec: dict[str, object], offset: int | None = None) -> None:
    data = rec.get("data")
    if not isinstance(data, dict):
        return
    t = rec.get("type")
    if t == "CONFIG_RECORD":
        # ConfigurationDelta.replay: a value sets the key, a null value deletes it; an image left empty is
        # dropped (ConfigurationsDelta.apply)
        key = (int(data["resourceType"]), str(data["resourceName"]))
        values = image.configs.setdefault(key, {})
        if data["value"] is None:
            values.pop(str(data["name"]), None)
        else:
            values[str(data["name"])] = str(data["value"])
        image.config_offsets[key] = offset
        if not values:
            del image.configs[key]
    elif t == "TOPIC_RECORD":
        image.topics[str(data["topicId"])] = (str(data["name"]), set())
    elif t == "PARTITION_RECORD":
        entry = image.topics.get(str(data["topicId"]))
        if entry is None:
            raise _Unreadable(f"a PartitionRecord of topic id {data['topicId']} before its TopicRecord")
        pid = data["partitionId"]
        p = int(pid) if isinstance(pid, int) else -1
        entry[1].add(p)
        image.replicas[(str(data["topicId"]), p)] = _node_ids(data.get("replicas"))
    elif t == "PARTITION_CHANGE_RECORD":
        part = (
            str(data["topicId"]),
            int(data["partitionId"]) if isinstance(data["partitionId"], int) else -1,
        )
        if "replicas" not in data:
            image.replicas[part] = (
                None  # a record read by its leading fields only: the replicas are not known
            )
        elif data["replicas"] is not None:  # null: unchanged
            image.replicas[part] = _node_ids(data["replicas"])
    elif t == "REMOVE_TOPIC_RECORD":
        tid = str(data["topicId"])
        gone = image.topics.pop(tid, None)
        if gone is not None:
            # MetadataDelta.replay(RemoveTopicRecord) -> ConfigurationsDelta.replay(record, topicName): the topic's
            # configs go with it (deleteAll), so a topic created again under that name starts with none
            image.configs.pop((TOPIC_RESOURCE, gone[0]), None)
            image.config_offsets.pop((TOPIC_RESOURCE, gone[0]), None)
        for part in [k for k in image.replicas if k[0] == tid]:
            del image.replicas[part]


def _node_ids(value: object) -> tuple[int, ...] | None:
    if not isinstance(value, list) or not all(isinstance(x, int) for x in value):
        return None
    return tuple(value)


_TOPIC_TYPES = ("TOPIC_RECORD", "PARTITION_RECORD", "PARTITION_CHANGE_RECORD", "REMOVE_TOPIC_RECORD")


def _uvarint(b: bytes, pos: int) -> tuple[int, int]:
    try:
        return binary.read_uvarint(b, pos)
    except (binary.Truncated, ValueError) as e:
        raise _Unreadable("a varint past the end") from e


def _leading_fields(rec: dict[str, object], value: bytes | None, error: str) -> dict[str, object]:
    """The fields this module needs from a topic record of a version this kafka-ops does not know: they lead the
    message in every version of its schema (TopicRecord: Name, TopicId; PartitionRecord: PartitionId, TopicId;
    PartitionChangeRecord: PartitionId, TopicId; RemoveTopicRecord: TopicId), so a later release's record still
    gives them (not its replicas: left unknown); else the image is unreadable."""
    import base64

    if value is None:
        raise _Unreadable(error)
    b = bytes(value)
    pos = 0
    for _ in range(3):  # frame version, record type, record version
        _, pos = _uvarint(b, pos)
    t = rec.get("type")
    data: dict[str, object] = {}
    if t == "TOPIC_RECORD":
        n, pos = _uvarint(b, pos)
        if n < 1 or pos + n - 1 + 16 > len(b):
            raise _Unreadable(error)
        data["name"] = b[pos : pos + n - 1].decode("utf-8", "replace")
        pos += n - 1
    elif t in ("PARTITION_RECORD", "PARTITION_CHANGE_RECORD"):
        if pos + 4 + 16 > len(b):
            raise _Unreadable(error)
        data["partitionId"] = int.from_bytes(b[pos : pos + 4], "big", signed=True)
        pos += 4
    if pos + 16 > len(b):
        raise _Unreadable(error)
    data["topicId"] = base64.urlsafe_b64encode(b[pos : pos + 16]).decode().rstrip("=")
    return {"type": t, "version": rec.get("version"), "data": data}


def _replay(image: MetadataImage, path: str, start: int, snapshot: bool = False) -> None:
    """Apply the committed-looking records of one file from offset ``start`` (metadata transactions: the records
    between BeginTransaction and AbortTransaction are dropped, as the MetadataLoader does). A snapshot's records
    carry no log offset (``snapshot``: their configs are said to come from the snapshot)."""
    pending: list[tuple[dict[str, object], int | None]] | None = None
    name = os.path.basename(path)
    with LogBuffer.open(path) as buf:
        scanner = BatchScanner(buf, verify_crc=True)
        for batch in scanner:
            if batch.is_control or batch.next_offset <= start:
                continue
            for r in iter_records(buf, batch):
                if r.offset < start:
                    continue
                at = None if snapshot else r.offset
                rec = decode_metadata_record(r.value)
                if "error" in rec:
                    if rec.get("type") == "CONFIG_RECORD" and image.stopped is None:
                        image.stopped = (
                            f"{name}: the ConfigRecord at offset {r.offset} does not decode ({rec['error']})"
                        )
                    if rec.get("type") not in _TOPIC_TYPES:
                        continue  # a record of a later release's type or version that does not make topics
                    rec = _leading_fields(rec, r.value, f"{path}: offset {r.offset}: {rec['error']}")
                t = rec["type"]
                if t == "BEGIN_TRANSACTION_RECORD":
                    pending = []
                elif t == "END_TRANSACTION_RECORD":
                    for p, p_at in pending or []:
                        _apply(image, p, p_at)
                    pending = None
                elif t == "ABORT_TRANSACTION_RECORD":
                    pending = None
                elif pending is not None:
                    pending.append((rec, at))
                else:
                    _apply(image, rec, at)
                image.end_offset = r.offset + 1
        # a torn or corrupt tail ends the scan: recovery truncates it there as well (the records after it are not
        # this copy's); said, for what reads the configs
        if scanner.tail is not None and image.stopped is None:
            image.stopped = (
                f"{name} ends in a {scanner.tail.kind} record batch at byte {scanner.tail.position} "
                f"({scanner.tail.reason}): read up to it"
            )


def _snapshot_problem(image: MetadataImage, name: str) -> str | None:
    """Replay snapshot ``image.snapshot`` into ``image``; why it does not read whole, or None."""
    assert image.snapshot is not None
    try:
        _replay(image, image.snapshot, 0, snapshot=True)
    except _Unreadable as exc:
        return f"{name}: {exc}"
    except (EngineError, RecordError, OSError, KeyError, ValueError, TypeError) as exc:
        return f"{name}: {exc}"
    except Exception as exc:  # a codec library's own error (a compressed batch), or a bug: said, not raised
        return f"{name}: {type(exc).__name__}"
    if image.stopped is not None:
        return image.stopped
    try:
        if os.stat(image.snapshot).st_size == 0:
            return f"{name}: an empty file (no snapshot header)"
    except OSError as exc:
        return f"{name}: {exc.strerror}"
    return None


def read_image(partition_dir: str) -> MetadataImage | None:
    """The topics of the metadata log in ``partition_dir`` (``__cluster_metadata-0``), or None when it cannot
    be read whole: no snapshot covers the records before the first segment, a record does not decode, a file
    cannot be opened."""
    read = read_metadata(partition_dir)
    return read[0] if read is not None and read[1] else None


def read_metadata(partition_dir: str) -> tuple[MetadataImage, bool] | None:
    """The metadata image of this host's copy of ``__cluster_metadata-0``: its latest complete snapshot, then
    the log's records after it, in order, up to where they can be read (``image.stopped`` says why it stopped
    short); with whether it was read whole by :func:`read_image`'s rule. None when nothing could be read.

    The last answer is kept while the dir's files (names, sizes, mtimes) are the same: the configs
    (facts.kraft_configs) and the strays (broker.strays) of one audit read one image, not the log twice."""
    global _last
    try:
        names = os.listdir(partition_dir)
        sig = (partition_dir, tuple(sorted(_stat(partition_dir, n) for n in names)))
    except OSError:
        return None
    if _last[0] == sig:
        return _last[1]
    out = _read_metadata(partition_dir, names)
    _last = (sig, out)
    return out


_last: tuple[object, tuple[MetadataImage, bool] | None] = (None, None)


def _stat(d: str, name: str) -> tuple[str, int, int]:
    st = os.lstat(os.path.join(d, name))
    return name, st.st_size, st.st_mtime_ns


def _read_metadata(partition_dir: str, names: list[str]) -> tuple[MetadataImage, bool] | None:
    snaps = sorted(
        (s[0], s[1], n) for n in names if (s := parse_kraft_snapshot(n)) is not None and s[2] == "complete"
    )
    segs = sorted(
        (p.base_offset, n) for n in names if (p := parse_segment_file(n)) is not None and n.endswith(".log")
    )
    logs = {b for b, _ in segs}
    indexed = {
        p.base_offset for n in names if (p := parse_segment_file(n)) is not None and n.endswith(".index")
    }
    if not segs and not snaps:
        return None
    image = MetadataImage(partition_dir, None, 0)
    whole = True
    skipped: list[str] = []
    # the latest snapshot that reads whole; a damaged one is passed over (said): an older one, or the log from
    # offset 0 when it starts there, holds the same state (a node whose damaged snapshot is moved aside reads that)
    for end, _epoch, name in reversed(snaps):
        trial = MetadataImage(partition_dir, os.path.join(partition_dir, name), 0)
        problem = _snapshot_problem(trial, name)
        if problem is None:
            image = trial
            image.end_offset = end
            break
        skipped.append(problem)
    image.skipped = skipped
    if skipped and image.snapshot is None:
        image.stopped = None
        if not segs or segs[0][0] > 0:
            image.unreadable = (
                f"no snapshot of {partition_dir} reads ({'; '.join(skipped)}) and the log "
                + (f"starts at offset {segs[0][0]}" if segs else "has no segment")
                + ": the records before it are in no readable file"
            )
            return image, False
    try:
        if segs and segs[0][0] > image.end_offset:
            # records between the snapshot and the first segment are missing
            image.stopped = image.stopped or (
                f"records {image.end_offset} to {segs[0][0] - 1} are on no segment of this host"
            )
            return image, False
        # a segment whose .log is missing (its .index is there) that may hold records after the snapshot: those
        # are not on this host
        later = [
            b
            for b in indexed
            if b not in logs and not any(b < lb <= image.end_offset for lb in logs | indexed)
        ]
        if later:
            image.stopped = image.stopped or (
                f"segment {min(later):020d}.log is missing: the records it held from offset {image.end_offset} on "
                "are not on this host"
            )
            if any(b >= image.end_offset for b in later):
                return image, False
        for _base, name in segs:
            _replay(image, os.path.join(partition_dir, name), image.end_offset)
    except _Unreadable as exc:
        image.stopped = image.stopped or str(exc)
        whole = False
    except (EngineError, RecordError, OSError, KeyError, ValueError, TypeError) as exc:
        image.stopped = image.stopped or f"stopped reading at offset {image.end_offset}: {exc}"
        whole = False
    except Exception as exc:  # a codec library's own error (a compressed batch), or a bug: said, not raised
        image.stopped = image.stopped or f"stopped reading at offset {image.end_offset}: {type(exc).__name__}"
        whole = False
    return image, whole
