"""Who leads each partition: from the KRaft metadata log, or from `kafka-topics --describe` output.

The metadata log (``__cluster_metadata-0``: the newest complete ``<offset>-<epoch>.checkpoint`` snapshot, then the
``.log`` segments from its end offset on) is read with the engine's batch scanner; only the leader fields of three
record types are decoded (apache/kafka 1eb7644, ``metadata/src/main/resources/common/metadata/``):

* ``TopicRecord`` (apiKey 2, v0, flexible): Name (compact string), TopicId (uuid);
* ``PartitionRecord`` (apiKey 3, v0-2, flexible): PartitionId int32, TopicId uuid, Replicas, Isr,
  RemovingReplicas, AddingReplicas (compact int32 arrays), Leader int32 (-1: no leader), ...;
* ``PartitionChangeRecord`` (apiKey 5, v0-2, flexible): PartitionId int32, TopicId uuid, then only tagged fields;
  Leader is tag 1, default -2 ("the leader didn't change"), -1 "now no leader";
* ``RemoveTopicRecord`` (apiKey 9): TopicId uuid (the topic's partitions are gone).

Each record value is framed by ``AbstractApiMessageSerde.read``: frame version (unsigned varint, must be 1), apiKey
(unsigned varint), version (unsigned varint), then the message. Standard library only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from kafka_ops.engine.binary import I32, read_uvarint
from kafka_ops.engine.layout import parse_partition_dir
from kafka_ops.engine.logdir import scan_partition
from kafka_ops.engine.records import BatchScanner, LogBuffer, iter_records

METADATA_PARTITION = "__cluster_metadata-0"
TOPIC_RECORD, PARTITION_RECORD, PARTITION_CHANGE_RECORD, REMOVE_TOPIC_RECORD = 2, 3, 5, 9
NO_LEADER, LEADER_UNCHANGED = -1, -2


@dataclass
class Leaders:
    """(topic, partition) -> leader node id (-1: none), and where that came from."""

    leaders: dict[tuple[str, int], int] = field(default_factory=dict)
    source: str = "unknown"
    last_offset: int = -1  # metadata log: the last record applied (to pick the newest of several copies)


def _compact_array_skip(buf: bytes, pos: int, width: int) -> int:
    n, pos = read_uvarint(buf, pos)  # length + 1; 0 is null
    return pos + max(0, n - 1) * width


def _tagged_leader(buf: bytes, pos: int) -> int:
    """The Leader tag (1) of a PartitionChangeRecord's tagged fields, or LEADER_UNCHANGED."""
    count, pos = read_uvarint(buf, pos)
    for _ in range(count):
        tag, pos = read_uvarint(buf, pos)
        size, pos = read_uvarint(buf, pos)
        if tag == 1 and size == 4:
            return I32.unpack_from(buf, pos)[0]
        pos += size
    return LEADER_UNCHANGED


def apply_record(value: bytes, topics: dict[bytes, str], leaders: dict[tuple[str, int], int]) -> None:
    frame, pos = read_uvarint(value, 0)
    if frame != 1:
        return  # frame 0 was KRaft's 2.8 preview; the broker refuses it too
    api_key, pos = read_uvarint(value, pos)
    _version, pos = read_uvarint(value, pos)
    if api_key == TOPIC_RECORD:
        n, pos = read_uvarint(value, pos)
        name = bytes(value[pos : pos + n - 1]).decode("utf-8")
        pos += n - 1
        topics[bytes(value[pos : pos + 16])] = name
    elif api_key == PARTITION_RECORD:
        partition = I32.unpack_from(value, pos)[0]
        topic = topics.get(bytes(value[pos + 4 : pos + 20]))
        pos += 20
        for _ in range(4):  # Replicas, Isr, RemovingReplicas, AddingReplicas
            pos = _compact_array_skip(value, pos, 4)
        if topic is not None:
            leaders[(topic, partition)] = I32.unpack_from(value, pos)[0]
    elif api_key == PARTITION_CHANGE_RECORD:
        partition = I32.unpack_from(value, pos)[0]
        topic = topics.get(bytes(value[pos + 4 : pos + 20]))
        leader = _tagged_leader(value, pos + 20)
        if topic is not None and leader != LEADER_UNCHANGED:
            leaders[(topic, partition)] = leader
    elif api_key == REMOVE_TOPIC_RECORD:
        name = topics.pop(bytes(value[pos : pos + 16]), None)
        for key in [k for k in leaders if k[0] == name]:
            del leaders[key]


def _apply_file(path: str, start: int, topics: dict[bytes, str], out: Leaders) -> None:
    with LogBuffer.open(path) as buf:
        for batch in BatchScanner(buf, verify_crc=False):
            if batch.is_control or (batch.last_offset is not None and batch.last_offset < start):
                continue
            for rec in iter_records(buf, batch):
                if rec.offset >= start and rec.value is not None:
                    apply_record(bytes(rec.value), topics, out.leaders)
                    out.last_offset = max(out.last_offset, rec.offset)


def read_metadata_log(partition_dir: str) -> Leaders:
    """Leaders as of the end of a ``__cluster_metadata-0`` dir. Raises EngineError on an unreadable file."""
    # the engine lists the dir as LogManager does: segments (no leftovers) and KRaft snapshots
    part = scan_partition(partition_dir, parse_partition_dir(METADATA_PARTITION), read_tails=False)  # type: ignore[arg-type]
    # raise for the dir, a segment or a snapshot it cannot read (not the epoch checkpoint: unused here)
    for err in part.errors:
        if err.path == partition_dir or err.path.endswith((".log", ".checkpoint")):
            raise err
    out = Leaders(source=f"KRaft metadata log {partition_dir}")
    topics: dict[bytes, str] = {}
    start = 0
    complete = [(end, fi.path) for end, _epoch, state, fi in part.kraft_snapshots if state == "complete"]
    if complete:
        start, snap = complete[-1]  # a snapshot's name is its end offset (exclusive): records < start
        _apply_file(snap, 0, topics, out)
    for seg in part.segments:
        if seg.log is not None:
            _apply_file(seg.log.path, start, topics, out)
    return out


_DESCRIBE = re.compile(r"Topic:\s*(\S+)\s+Partition:\s*(\d+)\s+Leader:\s*(-?\d+|none)", re.IGNORECASE)


def read_describe(path: str) -> Leaders:
    """``kafka-topics.sh --describe`` output: one ``Topic: T Partition: P Leader: N ...`` line per partition."""
    out = Leaders(source=f"kafka-topics --describe output {path}")
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = _DESCRIBE.search(line)
            if m:
                leader = m.group(3)
                out.leaders[(m.group(1), int(m.group(2)))] = -1 if leader.lower() == "none" else int(leader)
    if not out.leaders:
        raise ValueError(
            f"{path}: no 'Topic: T Partition: P Leader: N' lines (kafka-topics --describe output)"
        )
    return out
