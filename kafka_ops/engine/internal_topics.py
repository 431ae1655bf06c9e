"""Decode the records of Kafka's internal topics ``__consumer_offsets`` and ``__transaction_state``.

Both topics store coordinator records (CoordinatorRecordSerde.java, TransactionLog.scala)::

    key   = int16 record type (the key's version) + key message
    value = int16 value version + value message, or null (a tombstone: the entry is deleted)

The messages follow Kafka's generated-message wire format (generator/.../MessageDataGenerator.java): in
non-flexible versions strings are int16 length + UTF-8 and bytes/arrays int32 length (-1 = null); in flexible
versions lengths are unsigned varint length+1 (0 = null) and every struct ends with a tagged-field section.
Field names are Kafka's JSON names (the camelCase the ``*JsonConverter`` classes print, i.e. what
``kafka-dump-log --offsets-decoder`` shows). Schemas are transcribed from the Kafka source tree:

* group-coordinator/src/main/resources/common/message/*Key.json, *Value.json, record types from
  GroupCoordinatorRecordSerde.java (0-1 OffsetCommit ... 15 ShareGroupStatePartitionMetadata);
* transaction-coordinator/src/main/resources/common/message/TransactionLogKey.json, TransactionLogValue.json,
  states from kafka.coordinator.transaction.TransactionState (TransactionMetadata.scala).

The public functions never raise: an unknown version or malformed bytes gives ``{"type": "unknown", "error":
"<part> at byte <n>: <reason>", ...}``. Standard library only.
"""

from __future__ import annotations

import base64
import struct
from collections.abc import Callable
from dataclasses import field
from typing import Any

from kafka_ops.engine.binary import I8, I16, I32, I64, Truncated, read_uvarint
from kafka_ops.engine.compat import slotted

CONSUMER_OFFSETS = "__consumer_offsets"
TRANSACTION_STATE = "__transaction_state"

_MAX_VERSION = 0x7FFF


# --------------------------------------------------------------------------------------------------------------
# Schema description (a transcription of the JSON message specs)


def _versions(spec: str) -> tuple[int, int] | None:
    """Kafka version-range notation: "0+", "3", "0-1", "none"."""
    if spec == "none":
        return None
    if spec.endswith("+"):
        return int(spec[:-1]), _MAX_VERSION
    lo, _, hi = spec.partition("-")
    return int(lo), int(hi or lo)


def _in(rng: tuple[int, int] | None, version: int) -> bool:
    return rng is not None and rng[0] <= version <= rng[1]


@slotted(frozen=True)
class _Field:
    name: str  # JSON name (camelCase of the spec's name)
    kind: str  # int8 | int16 | int32 | int64 | uint16 | float64 | bool | uuid | string | bytes | struct
    versions: tuple[int, int] | None
    array: bool = False
    nullable: tuple[int, int] | None = None
    tag: int | None = None  # tagged field: "taggedVersions" == "versions" in every schema used here
    default: Any = None  # schema default; output for tagged fields absent from the data
    fields: tuple[_Field, ...] = ()
    blob: bool = False  # bytes shown as {"size": n} instead of hex


def F(
    name: str,
    kind: str,
    versions: str = "0+",
    *,
    array: bool = False,
    nullable: str = "none",
    tag: int | None = None,
    default: Any = None,
    fields: tuple[_Field, ...] = (),
    blob: bool = False,
) -> _Field:
    return _Field(
        name[0].lower() + name[1:],
        kind,
        _versions(versions),
        array,
        _versions(nullable),
        tag,
        default,
        fields,
        blob,
    )


def S(name: str, fields: tuple[_Field, ...], versions: str = "0+", **kw: Any) -> _Field:
    """An array of structs (``"type": "[]Name"``)."""
    return F(name, "struct", versions, array=True, fields=fields, **kw)


@slotted(frozen=True)
class _Message:
    name: str
    valid: tuple[int, int]
    flexible: tuple[int, int] | None
    fields: tuple[_Field, ...] = field(default=())


def M(name: str, valid: str, flexible: str, *fields: _Field) -> _Message:
    rng = _versions(valid)
    assert rng is not None
    return _Message(name, rng, _versions(flexible), fields)


# ---- __consumer_offsets (group-coordinator/src/main/resources/common/message/<Name>.json) --------------------

OFFSET_COMMIT_KEY = M("OffsetCommitKey", "0-1", "none", F("group", "string", "0-1"), F("topic", "string", "0-1"), F("partition", "int32", "0-1"))  # fmt: skip
OFFSET_COMMIT_VALUE = M(
    "OffsetCommitValue", "0-4", "4+",
    F("offset", "int64"),
    F("leaderEpoch", "int32", "3+", default=-1),
    F("metadata", "string"),
    F("commitTimestamp", "int64"),
    F("expireTimestamp", "int64", "1", default=-1),
)  # fmt: skip

# Classic groups.
GROUP_METADATA_KEY = M("GroupMetadataKey", "2", "none", F("group", "string", "2"))
GROUP_METADATA_VALUE = M(
    "GroupMetadataValue", "0-4", "4+",
    F("protocolType", "string"),
    F("generation", "int32"),
    F("protocol", "string", nullable="0+"),
    F("leader", "string", nullable="0+"),
    F("currentStateTimestamp", "int64", "2+", default=-1),
    S("members", (
        F("memberId", "string"),
        F("groupInstanceId", "string", "3+", nullable="3+"),
        F("clientId", "string"),
        F("clientHost", "string"),
        F("rebalanceTimeout", "int32", "1+", default=-1),
        F("sessionTimeout", "int32"),
        F("subscription", "bytes"),  # hex here; _finish_group_metadata turns it into {"size", ...}
        F("assignment", "bytes"),
    )),
)  # fmt: skip

# KIP-848 consumer groups and KIP-932 share groups: keys are GroupId (+ MemberId) at the record type's version.
_TOPIC_PARTITIONS = (F("TopicId", "uuid"), F("Partitions", "int32", array=True))
_TOPIC_METADATA = (
    F("TopicId", "uuid"),
    F("TopicName", "string"),
    F("NumPartitions", "int32"),
    S("PartitionMetadata", (F("Partition", "int32"), F("Racks", "string", array=True))),
)


def _key(name: str, record_type: int, member: bool = False) -> _Message:
    v = str(record_type)
    group = F("GroupId", "string", v)
    return M(name, v, "none", group, F("MemberId", "string", v)) if member else M(name, v, "none", group)


CONSUMER_GROUP_MEMBER_METADATA_VALUE = M(
    "ConsumerGroupMemberMetadataValue", "0", "0+",
    F("InstanceId", "string", nullable="0+"),
    F("RackId", "string", nullable="0+"),
    F("ClientId", "string"),
    F("ClientHost", "string"),
    F("SubscribedTopicNames", "string", array=True),
    F("SubscribedTopicRegex", "string", nullable="0+"),
    F("RebalanceTimeoutMs", "int32", default=-1),
    F("ServerAssignor", "string", nullable="0+"),
    F("ClassicMemberMetadata", "struct", nullable="0+", tag=0, fields=(
        F("SessionTimeoutMs", "int32"),
        S("SupportedProtocols", (F("Name", "string"), F("Metadata", "bytes"))),
    )),
)  # fmt: skip
CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE = M(
    "ConsumerGroupCurrentMemberAssignmentValue", "0", "0+",
    F("MemberEpoch", "int32"),
    F("PreviousMemberEpoch", "int32"),
    F("State", "int8"),
    S("AssignedPartitions", _TOPIC_PARTITIONS),
    S("PartitionsPendingRevocation", _TOPIC_PARTITIONS),
)  # fmt: skip
SHARE_GROUP_MEMBER_METADATA_VALUE = M(
    "ShareGroupMemberMetadataValue", "0", "0+",
    F("RackId", "string", nullable="0+"),
    F("ClientId", "string"),
    F("ClientHost", "string"),
    F("SubscribedTopicNames", "string", array=True),
)  # fmt: skip
SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE = M(
    "ShareGroupCurrentMemberAssignmentValue", "0", "0+",
    F("MemberEpoch", "int32"),
    F("PreviousMemberEpoch", "int32"),
    F("State", "int8"),
    S("AssignedPartitions", _TOPIC_PARTITIONS),
)  # fmt: skip
SHARE_GROUP_STATE_PARTITION_METADATA_VALUE = M(
    "ShareGroupStatePartitionMetadataValue", "0", "0+",
    S("InitializedTopics", (F("TopicId", "uuid"), F("TopicName", "string"), F("Partitions", "int32", array=True))),
    S("DeletingTopics", (F("TopicId", "uuid"), F("TopicName", "string"))),
)  # fmt: skip

# GroupCoordinatorRecordSerde.apiMessageKeyFor / apiMessageValueFor: record type (key version) -> messages.
_GROUP_RECORDS: dict[int, tuple[str, _Message, _Message]] = {
    0: ("offset_commit", OFFSET_COMMIT_KEY, OFFSET_COMMIT_VALUE),
    1: ("offset_commit", OFFSET_COMMIT_KEY, OFFSET_COMMIT_VALUE),
    2: ("group_metadata", GROUP_METADATA_KEY, GROUP_METADATA_VALUE),
    3: ("consumer_group_metadata", _key("ConsumerGroupMetadataKey", 3),
        M("ConsumerGroupMetadataValue", "0", "0+", F("Epoch", "int32"))),
    4: ("consumer_group_partition_metadata", _key("ConsumerGroupPartitionMetadataKey", 4),
        M("ConsumerGroupPartitionMetadataValue", "0", "0+", S("Topics", _TOPIC_METADATA))),
    5: ("consumer_group_member_metadata", _key("ConsumerGroupMemberMetadataKey", 5, member=True),
        CONSUMER_GROUP_MEMBER_METADATA_VALUE),
    6: ("consumer_group_target_assignment_metadata", _key("ConsumerGroupTargetAssignmentMetadataKey", 6),
        M("ConsumerGroupTargetAssignmentMetadataValue", "0", "0+", F("AssignmentEpoch", "int32"))),
    7: ("consumer_group_target_assignment_member", _key("ConsumerGroupTargetAssignmentMemberKey", 7, member=True),
        M("ConsumerGroupTargetAssignmentMemberValue", "0", "0+", S("TopicPartitions", _TOPIC_PARTITIONS))),
    8: ("consumer_group_current_member_assignment", _key("ConsumerGroupCurrentMemberAssignmentKey", 8, member=True),
        CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE),
    9: ("share_group_partition_metadata", _key("ShareGroupPartitionMetadataKey", 9),
        M("ShareGroupPartitionMetadataValue", "0", "0+", S("Topics", _TOPIC_METADATA))),
    10: ("share_group_member_metadata", _key("ShareGroupMemberMetadataKey", 10, member=True),
         SHARE_GROUP_MEMBER_METADATA_VALUE),
    11: ("share_group_metadata", _key("ShareGroupMetadataKey", 11),
         M("ShareGroupMetadataValue", "0", "0+", F("Epoch", "int32"))),
    12: ("share_group_target_assignment_metadata", _key("ShareGroupTargetAssignmentMetadataKey", 12),
         M("ShareGroupTargetAssignmentMetadataValue", "0", "0+", F("AssignmentEpoch", "int32"))),
    13: ("share_group_target_assignment_member", _key("ShareGroupTargetAssignmentMemberKey", 13, member=True),
         M("ShareGroupTargetAssignmentMemberValue", "0", "0+", S("TopicPartitions", _TOPIC_PARTITIONS))),
    14: ("share_group_current_member_assignment", _key("ShareGroupCurrentMemberAssignmentKey", 14, member=True),
         SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE),
    15: ("share_group_state_partition_metadata", _key("ShareGroupStatePartitionMetadataKey", 15),
         SHARE_GROUP_STATE_PARTITION_METADATA_VALUE),
}  # fmt: skip

# ConsumerProtocolSubscription.json / ConsumerProtocolAssignment.json (clients/src/main/resources/common/message/):
# the subscription/assignment bytes of a classic group whose protocolType is "consumer".
_CONSUMER_SUBSCRIPTION = M(
    "ConsumerProtocolSubscription", "0-3", "none",
    F("Topics", "string", array=True),
    F("UserData", "bytes", nullable="0+", blob=True),
    S("OwnedPartitions", (F("Topic", "string", "1+"), F("Partitions", "int32", "1+", array=True)), "1+"),
    F("GenerationId", "int32", "2+", default=-1),
    F("RackId", "string", "3+", nullable="3+"),
)  # fmt: skip
_CONSUMER_ASSIGNMENT = M(
    "ConsumerProtocolAssignment", "0-3", "none",
    S("AssignedPartitions", (F("Topic", "string"), F("Partitions", "int32", array=True))),
    F("UserData", "bytes", nullable="0+", blob=True),
)  # fmt: skip

# ---- __transaction_state (transaction-coordinator/src/main/resources/common/message/) ------------------------

TRANSACTION_LOG_KEY = M("TransactionLogKey", "0", "none", F("TransactionalId", "string", "0"))
TRANSACTION_LOG_VALUE = M(
    "TransactionLogValue", "0-1", "1+",
    F("ProducerId", "int64"),
    F("PreviousProducerId", "int64", "1+", tag=0, default=-1),
    F("NextProducerId", "int64", "1+", tag=1, default=-1),
    F("ProducerEpoch", "int16"),
    F("TransactionTimeoutMs", "int32"),
    F("TransactionStatus", "int8"),
    S("TransactionPartitions", (F("Topic", "string"), F("PartitionIds", "int32", array=True)), nullable="0+"),
    F("TransactionLastUpdateTimestampMs", "int64"),
    F("TransactionStartTimestampMs", "int64"),
    F("ClientTransactionVersion", "int16", "1+", tag=2, default=0),
)  # fmt: skip

# kafka.coordinator.transaction.TransactionState.fromId (TransactionMetadata.scala)
TRANSACTION_STATES = (
    "Empty", "Ongoing", "PrepareCommit", "PrepareAbort", "CompleteCommit", "CompleteAbort", "Dead", "PrepareEpochFence",
)  # fmt: skip

# org.apache.kafka.coordinator.group.modern.MemberState (unknown values map to UNKNOWN)
MEMBER_STATES = {0: "STABLE", 1: "UNREVOKED_PARTITIONS", 2: "UNRELEASED_PARTITIONS", 127: "UNKNOWN"}


# --------------------------------------------------------------------------------------------------------------
# Wire-format reader


class _Malformed(Exception):
    def __init__(self, pos: int, reason: str) -> None:
        super().__init__(reason)
        self.pos = pos
        self.reason = reason


_UUID = struct.Struct(">16s")
_FIXED = {
    "int8": I8, "int16": I16, "int32": I32, "int64": I64,
    "uint16": struct.Struct(">H"), "float64": struct.Struct(">d"), "bool": struct.Struct("?"),
}  # fmt: skip


class _Reader:
    """Reads one generated message from ``buf`` (Kafka's ByteBufferAccessor semantics, positions for errors)."""

    __slots__ = ("buf", "pos")

    def __init__(self, buf: bytes, pos: int = 0) -> None:
        self.buf = buf
        self.pos = pos

    @property
    def remaining(self) -> int:
        return len(self.buf) - self.pos

    def fixed(self, st: struct.Struct, what: str) -> Any:
        if self.remaining < st.size:
            raise _Malformed(self.pos, f"{what} needs {st.size} bytes, {self.remaining} remain")
        (v,) = st.unpack_from(self.buf, self.pos)
        self.pos += st.size
        return v

    def uvarint(self, what: str) -> int:
        """ByteUtils.readUnsignedVarint: at most 5 bytes, an int32."""
        start = self.pos
        try:
            v, end = read_uvarint(self.buf, start)
        except Truncated:
            raise _Malformed(start, f"{what}: unsigned varint runs past the end") from None
        except ValueError:
            raise _Malformed(start, f"{what}: unsigned varint is longer than 5 bytes") from None
        if end - start > 5:
            raise _Malformed(start, f"{what}: unsigned varint is longer than 5 bytes")
        if v > 0x7FFFFFFF:
            raise _Malformed(start, f"{what}: unsigned varint {v} does not fit in an int32")
        self.pos = end
        return v

    def take(self, n: int, what: str) -> bytes:
        if n > self.remaining:
            raise _Malformed(self.pos, f"{what} needs {n} bytes, {self.remaining} remain")
        out = self.buf[self.pos : self.pos + n]
        self.pos += n
        return out


def _length(r: _Reader, f: _Field, flexible: bool, version: int) -> int | None:
    """Length prefix of a string/bytes/array; None when null (error when the field is not nullable)."""
    start = r.pos
    if flexible:
        n = r.uvarint(f"length of {f.name}") - 1
    elif f.kind == "string" and not f.array:
        n = r.fixed(I16, f"length of {f.name}")
    else:
        n = r.fixed(I32, f"length of {f.name}")
    if n < 0:
        if _in(f.nullable, version):
            return None
        raise _Malformed(start, f"non-nullable field {f.name} was serialized as null")
    return n


def _read_string(r: _Reader, f: _Field, flexible: bool, version: int) -> str | None:
    start = r.pos
    n = _length(r, f, flexible, version)
    if n is None:
        return None
    if n > 0x7FFF:
        raise _Malformed(start, f"string field {f.name} had invalid length {n}")
    return r.take(n, f"string {f.name}").decode("utf-8", "replace")


def _read_value(r: _Reader, f: _Field, version: int, flexible: bool, tagged: bool) -> Any:
    if f.array:
        start = r.pos
        n = _length(r, f, flexible, version)
        if n is None:
            return None
        if n > r.remaining:
            raise _Malformed(
                start, f"{f.name}: array of {n} elements, but there are only {r.remaining} bytes remaining"
            )
        if f.kind == "struct":
            return [_read_struct(r, f.fields, version, flexible) for _ in range(n)]
        elem = _Field(f"{f.name} element", f.kind, f.versions)  # elements are never nullable
        if f.kind == "string":
            return [_read_string(r, elem, flexible, version) for _ in range(n)]
        return [_read_scalar(r, elem) for _ in range(n)]
    if f.kind == "struct":
        if _in(f.nullable, version):
            # MessageDataGenerator.generateStructReader: tagged -> uvarint marker, untagged -> int8 marker
            present = (
                r.uvarint(f"presence of {f.name}") > 0
                if tagged
                else r.fixed(I8, f"presence of {f.name}") >= 0
            )
            if not present:
                return None
        return _read_struct(r, f.fields, version, flexible)
    if f.kind == "string":
        return _read_string(r, f, flexible, version)
    if f.kind == "bytes":
        n = _length(r, f, flexible, version)
        if n is None:
            return None
        data = r.take(n, f"bytes {f.name}")
        return {"size": n} if f.blob else data.hex()
    return _read_scalar(r, f)


def _read_scalar(r: _Reader, f: _Field) -> int | float | bool | str:
    if f.kind == "uuid":
        # org.apache.kafka.common.Uuid.toString: URL-safe base64 without padding
        return base64.urlsafe_b64encode(r.fixed(_UUID, f.name)).rstrip(b"=").decode("ascii")
    v = r.fixed(_FIXED[f.kind], f.name)
    return v if f.kind in ("bool", "float64") else int(v)  # bool: readByte() != 0 (any non-zero byte)


def _read_struct(r: _Reader, fields: tuple[_Field, ...], version: int, flexible: bool) -> dict[str, Any]:
    out: dict[str, Any] = {}
    tagged: dict[int, _Field] = {}
    for f in fields:
        if f.tag is not None:
            tagged[f.tag] = f
            if _in(f.versions, version):
                out[f.name] = f.default  # overwritten if the tag is present
        elif _in(f.versions, version):
            out[f.name] = _read_value(r, f, version, flexible, tagged=False)
    if flexible:
        unknown: list[dict[str, Any]] = []
        for _ in range(r.uvarint("number of tagged fields")):
            tag_pos = r.pos
            tag = r.uvarint("tag")
            size = r.uvarint(f"size of tagged field {tag}")
            if size > r.remaining:
                raise _Malformed(tag_pos, f"tagged field {tag} needs {size} bytes, {r.remaining} remain")
            end = r.pos + size
            tf = tagged.get(tag)
            if tf is None:
                unknown.append({"tag": tag, "size": size, "hex": r.take(size, f"tagged field {tag}").hex()})
                continue
            if not _in(tf.versions, version):
                raise _Malformed(tag_pos, f"tag {tag} is not valid for version {version}")
            # tagged fields are always in the flexible encoding
            sub = _Reader(r.buf[:end], r.pos)
            out[tf.name] = _read_value(sub, tf, version, True, tagged=True)
            if sub.pos != end:
                raise _Malformed(
                    tag_pos,
                    f"tagged field {tag} ({tf.name}) declares {size} bytes, its value used {sub.pos - r.pos}",
                )
            r.pos = end
        if unknown:
            out["unknownTaggedFields"] = unknown
    return out


def _read_message(buf: bytes, msg: _Message, version: int) -> tuple[dict[str, Any], int]:
    """Read ``msg`` at ``version`` from ``buf[2:]``; returns (fields, trailing byte count)."""
    if not msg.valid[0] <= version <= msg.valid[1]:
        lo, hi = msg.valid
        known = str(lo) if lo == hi else f"{lo}-{hi}"
        raise _Malformed(0, f"unsupported {msg.name} version {version} (known: {known})")
    r = _Reader(buf, 2)
    out = _read_struct(r, msg.fields, version, _in(msg.flexible, version))
    return out, r.remaining


def _version(buf: bytes, part: str) -> int:
    if len(buf) < 2:
        raise _Malformed(0, f"needs 2 bytes for the {part} version, {len(buf)} remain")
    return int(I16.unpack_from(buf, 0)[0])


# --------------------------------------------------------------------------------------------------------------
# Public API


class _Failed(Exception):
    def __init__(self, part: str, exc: _Malformed) -> None:
        super().__init__(f"{part} at byte {exc.pos}: {exc.reason}")


def _as_bytes(data: object, part: str) -> bytes | None:
    if data is None:
        return None
    if isinstance(data, (bytes, bytearray, memoryview)):
        return bytes(data)
    raise _Failed(part, _Malformed(0, f"expected bytes, got {type(data).__name__}"))


_Records = dict[int, tuple[str, _Message, _Message]]
_Finish = Callable[[dict[str, Any]], None]


def _decode(
    key: object, value: object, records: _Records, topic: str, unknown_note: str, finish: dict[str, _Finish]
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "type": "unknown",
        "key_version": None,
        "key": None,
        "value_version": None,
        "value": None,
        "tombstone": False,
    }
    warnings: list[str] = []
    try:
        kbuf = _as_bytes(key, "key")
        vbuf = _as_bytes(value, "value")
        out["tombstone"] = vbuf is None
        if kbuf is None:
            raise _Failed("key", _Malformed(0, f"null key (every {topic} record has one)"))
        try:
            kv = _version(kbuf, "key")
            out["key_version"] = kv
            if kv not in records:
                raise _Malformed(0, f"unknown record type {kv}{unknown_note}")
            rtype, kmsg, vmsg = records[kv]
            out["key"], trailing = _read_message(kbuf, kmsg, kv)
        except _Malformed as exc:
            raise _Failed("key", exc) from None
        if trailing:
            warnings.append(f"key has {trailing} bytes after the {kmsg.name} fields (Kafka ignores them)")
        if vbuf is not None:
            try:
                vv = _version(vbuf, "value")
                out["value_version"] = vv
                val, trailing = _read_message(vbuf, vmsg, vv)
                if rtype in finish:
                    finish[rtype](val)
            except _Malformed as exc:
                raise _Failed("value", exc) from None
            out["value"] = val
            if trailing:
                warnings.append(
                    f"value has {trailing} bytes after the {vmsg.name} fields (Kafka ignores them)"
                )
        out["type"] = rtype
    except _Failed as exc:
        out["error"] = str(exc)
    except Exception as exc:  # a bug here must not stop the scan of a whole log dir
        out["error"] = f"internal error: {type(exc).__name__}: {exc}"
    if warnings:
        out["warnings"] = warnings
    return out


def _embedded(hex_blob: str, msg: _Message, decode: bool) -> dict[str, Any]:
    """A member's subscription/assignment: its size, and its fields for the "consumer" protocol.

    ConsumerProtocol.deserializeSubscription/Assignment read a newer version with the highest known one;
    undecodable bytes are kept as a size (DumpLogSegments.prepareGroupMetadataValue swallows the error too).
    """
    blob = bytes.fromhex(hex_blob)
    out: dict[str, Any] = {"size": len(blob)}
    if not decode:
        return out
    try:
        version = _version(blob, "embedded")
        if version < 0:
            raise _Malformed(0, f"negative version {version}")
        fields, _trailing = _read_message(blob, msg, min(version, msg.valid[1]))
        out["version"] = version
        out.update(fields)
    except _Malformed as exc:
        out["error"] = f"at byte {exc.pos}: {exc.reason}"
    return out


def _finish_group_metadata(val: dict[str, Any]) -> None:
    consumer = val["protocolType"] == "consumer"  # ConsumerProtocol.PROTOCOL_TYPE
    for member in val["members"]:
        member["subscription"] = _embedded(member["subscription"], _CONSUMER_SUBSCRIPTION, consumer)
        member["assignment"] = _embedded(member["assignment"], _CONSUMER_ASSIGNMENT, consumer)


def _finish_member_assignment(val: dict[str, Any]) -> None:
    val["stateName"] = MEMBER_STATES.get(val["state"], "UNKNOWN")  # MemberState.fromValue


def _finish_transaction(val: dict[str, Any]) -> None:
    status = val["transactionStatus"]
    if not 0 <= status < len(TRANSACTION_STATES):
        # TransactionState.fromId throws IllegalStateException: the coordinator cannot load the partition.
        # The status byte follows version(2) + producerId(8) + producerEpoch(2) + timeout(4) in v0 and v1.
        raise _Malformed(16, f"unknown transaction state id {status}")
    val["state"] = TRANSACTION_STATES[status]


_GROUP_FINISH: dict[str, _Finish] = {
    "group_metadata": _finish_group_metadata,
    "consumer_group_current_member_assignment": _finish_member_assignment,
    "share_group_current_member_assignment": _finish_member_assignment,
}
_TXN_RECORDS: _Records = {0: ("transaction_metadata", TRANSACTION_LOG_KEY, TRANSACTION_LOG_VALUE)}


def decode_consumer_offsets(key: bytes | None, value: bytes | None) -> dict[str, Any]:
    """Decode one ``__consumer_offsets`` record (GroupCoordinatorRecordSerde; GroupMetadataManager.readMessageKey).

    Returns ``{"type", "key_version", "key", "value_version", "value", "tombstone"}``, plus ``"error"`` when
    the type is ``"unknown"`` and ``"warnings"`` when the bytes hold more than the schema reads. Types:
    offset_commit, group_metadata, consumer_group_* and share_group_* (see ``_GROUP_RECORDS``). A group's
    member subscription/assignment is ``{"size": n}``, with the decoded fields for the "consumer" protocol.
    """
    note = " (known: 0-15; the group coordinator skips unknown types with a warning)"
    return _decode(key, value, _GROUP_RECORDS, CONSUMER_OFFSETS, note, _GROUP_FINISH)


def decode_transaction_state(key: bytes | None, value: bytes | None) -> dict[str, Any]:
    """Decode one ``__transaction_state`` record (TransactionLog.readTxnRecordKey / readTxnRecordValue).

    Same shape as ``decode_consumer_offsets``; type "transaction_metadata". The value gets ``"state"`` (the
    TransactionState name) next to the raw ``"transactionStatus"`` id.
    """
    note = " (known: 0; the transaction coordinator skips unknown key versions)"
    return _decode(
        key, value, _TXN_RECORDS, TRANSACTION_STATE, note, {"transaction_metadata": _finish_transaction}
    )


__all__ = [
    "CONSUMER_OFFSETS",
    "MEMBER_STATES",
    "TRANSACTION_STATE",
    "TRANSACTION_STATES",
    "decode_consumer_offsets",
    "decode_transaction_state",
]
