"""Tests for kafka_ops.engine.internal_topics.

Records are built by hand from the Kafka JSON schemas (group-coordinator/.../OffsetCommitValue.json etc.):
non-flexible strings are int16 length + UTF-8, bytes/arrays int32 length; flexible versions use unsigned
varint length+1 and end every struct with a tagged-field section.
"""

from __future__ import annotations

import base64
import collections
import json
import re
import struct
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafka_ops.engine.decoders import decode_internal
from kafka_ops.engine.internal_topics import (
    TRANSACTION_STATES,
    decode_consumer_offsets,
    decode_transaction_state,
)
from kafka_ops.engine.records import BatchScanner, LogBuffer, iter_records

CORPUS = Path("/work/shared/corpus")
ERROR_RE = re.compile(r"^(key|value) at byte \d+: \S.*$")

# ---- hand encoders -------------------------------------------------------------------------------------------


def i8(v: int) -> bytes:
    return struct.pack(">b", v)


def i16(v: int) -> bytes:
    return struct.pack(">h", v)


def i32(v: int) -> bytes:
    return struct.pack(">i", v)


def i64(v: int) -> bytes:
    return struct.pack(">q", v)


def uv(v: int) -> bytes:
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def s(x: str | None) -> bytes:
    """Non-flexible string: int16 length (-1 = null)."""
    if x is None:
        return i16(-1)
    b = x.encode()
    return i16(len(b)) + b


def cs(x: str | None) -> bytes:
    """Compact string: unsigned varint length+1 (0 = null)."""
    if x is None:
        return uv(0)
    b = x.encode()
    return uv(len(b) + 1) + b


def by(x: bytes) -> bytes:
    return i32(len(x)) + x


def cby(x: bytes) -> bytes:
    return uv(len(x) + 1) + x


def arr(items: list[bytes]) -> bytes:
    return i32(len(items)) + b"".join(items)


def carr(items: list[bytes] | None) -> bytes:
    if items is None:
        return uv(0)
    return uv(len(items) + 1) + b"".join(items)


def tags(*fields: tuple[int, bytes]) -> bytes:
    return uv(len(fields)) + b"".join(uv(t) + uv(len(d)) + d for t, d in fields)


NO_TAGS = tags()
UUID_BYTES = bytes(range(16))
UUID_STR = base64.urlsafe_b64encode(UUID_BYTES).rstrip(b"=").decode()


def check_ok(out: dict[str, Any], rtype: str) -> dict[str, Any]:
    assert out["type"] == rtype, out
    assert "error" not in out
    json.dumps(out)  # JSON-serialisable
    return out


def check_error(out: dict[str, Any], *fragments: str) -> str:
    assert out["type"] == "unknown", out
    err = out["error"]
    assert ERROR_RE.match(err), err
    assert "\n" not in err and "internal error" not in err
    for frag in fragments:
        assert frag in err, err
    json.dumps(out)
    return err


# ---- __consumer_offsets: offset commits ---------------------------------------------------------------------


def offset_key(version: int = 1, group: str = "g1", topic: str = "orders", partition: int = 7) -> bytes:
    return i16(version) + s(group) + s(topic) + i32(partition)


@pytest.mark.parametrize("key_version", [0, 1])
def test_offset_commit_key_versions(key_version: int) -> None:
    out = check_ok(decode_consumer_offsets(offset_key(key_version), None), "offset_commit")
    assert out["key_version"] == key_version
    assert out["key"] == {"group": "g1", "topic": "orders", "partition": 7}
    assert out["tombstone"] is True and out["value"] is None and out["value_version"] is None


OFFSET_VALUES: dict[int, tuple[bytes, dict[str, Any]]] = {
    0: (i64(42) + s("meta") + i64(1000), {"offset": 42, "metadata": "meta", "commitTimestamp": 1000}),
    1: (
        i64(42) + s("") + i64(1000) + i64(2000),
        {"offset": 42, "metadata": "", "commitTimestamp": 1000, "expireTimestamp": 2000},
    ),
    2: (i64(42) + s("m") + i64(1000), {"offset": 42, "metadata": "m", "commitTimestamp": 1000}),
    3: (
        i64(42) + i32(5) + s("m") + i64(1000),
        {"offset": 42, "leaderEpoch": 5, "metadata": "m", "commitTimestamp": 1000},
    ),
    4: (
        i64(42) + i32(-1) + cs("héllo") + i64(1000) + NO_TAGS,
        {"offset": 42, "leaderEpoch": -1, "metadata": "héllo", "commitTimestamp": 1000},
    ),
}


@pytest.mark.parametrize("value_version", sorted(OFFSET_VALUES))
def test_offset_commit_value_versions(value_version: int) -> None:
    body, expected = OFFSET_VALUES[value_version]
    out = check_ok(decode_consumer_offsets(offset_key(), i16(value_version) + body), "offset_commit")
    assert out["value_version"] == value_version
    assert out["value"] == expected
    assert out["tombstone"] is False
    assert "warnings" not in out


def test_offset_commit_v4_unknown_tagged_field_is_skipped() -> None:
    body = i64(1) + i32(0) + cs("") + i64(5) + tags((3, b"\x01\x02"), (9, b""))
    out = check_ok(decode_consumer_offsets(offset_key(), i16(4) + body), "offset_commit")
    assert out["value"]["commitTimestamp"] == 5
    assert out["value"]["unknownTaggedFields"] == [
        {"tag": 3, "size": 2, "hex": "0102"},
        {"tag": 9, "size": 0, "hex": ""},
    ]


def test_offset_commit_errors() -> None:
    # truncated after the offset: leaderEpoch (v3) starts at byte 10
    check_error(
        decode_consumer_offsets(offset_key(), i16(3) + i64(1) + b"\x00"), "value at byte 10", "leaderEpoch"
    )
    # unsupported value version
    check_error(decode_consumer_offsets(offset_key(), i16(5) + i64(1)), "value at byte 0", "version 5")
    check_error(decode_consumer_offsets(offset_key(), i16(-1)), "version -1")
    # metadata is not nullable
    err = check_error(decode_consumer_offsets(offset_key(), i16(1) + i64(1) + s(None) + i64(0) + i64(0)))
    assert "at byte 10" in err and "non-nullable field metadata" in err
    # flexible: compact metadata null (0) is not allowed either
    check_error(decode_consumer_offsets(offset_key(), i16(4) + i64(1) + i32(0) + uv(0)), "non-nullable")
    # key: non-nullable group, short key, null key, empty key
    check_error(decode_consumer_offsets(i16(1) + s(None), None), "key at byte 2", "non-nullable field group")
    check_error(
        decode_consumer_offsets(i16(1) + s("g") + s("t") + b"\x00\x00", None), "key at byte 8", "partition"
    )
    check_error(decode_consumer_offsets(None, b"\x00\x01"), "key at byte 0", "null key")
    check_error(decode_consumer_offsets(b"", None), "key at byte 0")
    check_error(decode_consumer_offsets(b"\x00", None), "key at byte 0")


def test_offset_commit_key_decoded_even_when_value_fails() -> None:
    out = check_error(decode_consumer_offsets(offset_key(), i16(9)), "value at byte 0")
    assert out  # the error string
    res = decode_consumer_offsets(offset_key(), i16(9))
    assert res["key"] == {"group": "g1", "topic": "orders", "partition": 7}
    assert res["key_version"] == 1 and res["value_version"] == 9


def test_every_prefix_of_a_record_is_an_error() -> None:
    value = i16(4) + OFFSET_VALUES[4][0]
    for n in range(len(value)):
        check_error(decode_consumer_offsets(offset_key(), value[:n]), "value at byte")
    key = offset_key()
    for n in range(len(key)):
        check_error(decode_consumer_offsets(key[:n], value), "key at byte")


def test_trailing_bytes_are_a_warning_not_an_error() -> None:
    body, _ = OFFSET_VALUES[3]
    out = check_ok(decode_consumer_offsets(offset_key() + b"\x00", i16(3) + body + b"xyz"), "offset_commit")
    assert len(out["warnings"]) == 2
    assert "3 bytes" in out["warnings"][1]


# ---- __consumer_offsets: classic group metadata -------------------------------------------------------------


def subscription_v3(topics: list[str]) -> bytes:
    owned = arr([s("t1") + arr([i32(0), i32(2)])])
    return i16(3) + arr([s(t) for t in topics]) + by(b"ud") + owned + i32(7) + s("rack-a")


def assignment_v0(parts: dict[str, list[int]]) -> bytes:
    return i16(0) + arr([s(t) + arr([i32(p) for p in ps]) for t, ps in parts.items()]) + i32(-1)


SUB = subscription_v3(["t1", "t2"])
ASSIGN = assignment_v0({"t1": [0, 2]})


def member(version: int, instance: str | None = None) -> bytes:
    """One GroupMetadataValue.MemberMetadata at ``version``."""
    flex = version >= 4
    st_ = cs if flex else s
    b = st_("member-1")
    if version >= 3:
        b += st_(instance)
    b += st_("client-1") + st_("/10.0.0.1")
    if version >= 1:
        b += i32(300000)
    b += i32(45000)
    b += (cby if flex else by)(SUB) + (cby if flex else by)(ASSIGN)
    return b + (NO_TAGS if flex else b"")


def group_value(version: int, protocol_type: str = "consumer", members: int = 1) -> bytes:
    flex = version >= 4
    st_ = cs if flex else s
    b = i16(version) + st_(protocol_type) + i32(3) + st_("range") + st_("member-1")
    if version >= 2:
        b += i64(1700000000000)
    ms = [member(version, "static-1") for _ in range(members)]
    b += carr(ms) if flex else arr(ms)
    return b + (NO_TAGS if flex else b"")


GROUP_KEY = i16(2) + s("my-group")


@pytest.mark.parametrize("version", [0, 1, 2, 3, 4])
def test_group_metadata_value_versions(version: int) -> None:
    out = check_ok(decode_consumer_offsets(GROUP_KEY, group_value(version)), "group_metadata")
    assert out["key_version"] == 2 and out["key"] == {"group": "my-group"}
    assert out["value_version"] == version
    v = out["value"]
    assert v["protocolType"] == "consumer" and v["generation"] == 3
    assert v["protocol"] == "range" and v["leader"] == "member-1"
    assert ("currentStateTimestamp" in v) == (version >= 2)
    (m,) = v["members"]
    assert m["memberId"] == "member-1" and m["clientId"] == "client-1" and m["clientHost"] == "/10.0.0.1"
    assert m["sessionTimeout"] == 45000
    assert m.get("rebalanceTimeout") == (300000 if version >= 1 else None)
    assert m.get("groupInstanceId") == ("static-1" if version >= 3 else None)
    assert ("groupInstanceId" in m) == (version >= 3)
    assert m["subscription"] == {
        "size": len(SUB),
        "version": 3,
        "topics": ["t1", "t2"],
        "userData": {"size": 2},
        "ownedPartitions": [{"topic": "t1", "partitions": [0, 2]}],
        "generationId": 7,
        "rackId": "rack-a",
    }
    assert m["assignment"] == {
        "size": len(ASSIGN),
        "version": 0,
        "assignedPartitions": [{"topic": "t1", "partitions": [0, 2]}],
        "userData": None,
    }


def test_group_metadata_empty_group_with_null_protocol_and_leader() -> None:
    value = i16(3) + s("") + i32(0) + s(None) + s(None) + i64(-1) + arr([])
    out = check_ok(decode_consumer_offsets(GROUP_KEY, value), "group_metadata")
    assert out["value"] == {
        "protocolType": "",
        "generation": 0,
        "protocol": None,
        "leader": None,
        "currentStateTimestamp": -1,
        "members": [],
    }
    flex = i16(4) + cs("") + i32(0) + cs(None) + cs(None) + i64(-1) + carr([]) + NO_TAGS
    assert check_ok(decode_consumer_offsets(GROUP_KEY, flex), "group_metadata")["value"]["leader"] is None


def test_group_metadata_non_consumer_protocol_keeps_sizes_only() -> None:
    out = check_ok(
        decode_consumer_offsets(GROUP_KEY, group_value(3, protocol_type="connect")), "group_metadata"
    )
    (m,) = out["value"]["members"]
    assert m["subscription"] == {"size": len(SUB)} and m["assignment"] == {"size": len(ASSIGN)}


def test_group_metadata_undecodable_subscription_is_not_fatal() -> None:
    value = (
        i16(1)
        + s("consumer")
        + i32(1)
        + s("p")
        + s("m")
        + arr([s("m") + s("c") + s("h") + i32(1) + i32(2) + by(b"\x00") + by(b"")])
    )
    out = check_ok(decode_consumer_offsets(GROUP_KEY, value), "group_metadata")
    (m,) = out["value"]["members"]
    assert m["subscription"]["size"] == 1 and "error" in m["subscription"]
    assert m["assignment"]["size"] == 0 and "error" in m["assignment"]


def test_group_metadata_v4_nested_tagged_fields() -> None:
    m = member(4, None)[: -len(NO_TAGS)] + tags((5, b"\xaa"))
    value = i16(4) + cs("consumer") + i32(1) + cs("range") + cs(None) + i64(5) + carr([m]) + tags((1, b"zz"))
    out = check_ok(decode_consumer_offsets(GROUP_KEY, value), "group_metadata")
    assert out["value"]["unknownTaggedFields"] == [{"tag": 1, "size": 2, "hex": "7a7a"}]
    (mm,) = out["value"]["members"]
    assert mm["groupInstanceId"] is None
    assert mm["unknownTaggedFields"] == [{"tag": 5, "size": 1, "hex": "aa"}]


def test_group_metadata_errors() -> None:
    # members array claims more elements than there are bytes
    value = i16(0) + s("consumer") + i32(1) + s("p") + s("m") + i32(1000)
    check_error(decode_consumer_offsets(GROUP_KEY, value), "value at byte 22", "1000 elements")
    # negative bytes length for a non-nullable subscription
    bad = i16(0) + s("c") + i32(1) + s("p") + s("m") + arr([s("m") + s("c") + s("h") + i32(1) + i32(-1)])
    check_error(decode_consumer_offsets(GROUP_KEY, bad), "non-nullable field subscription")
    # string longer than 0x7fff in a flexible version
    check_error(
        decode_consumer_offsets(GROUP_KEY, i16(4) + uv(0x8001)), "value at byte 2", "invalid length 32768"
    )
    # varint longer than 5 bytes
    check_error(
        decode_consumer_offsets(GROUP_KEY, i16(4) + b"\x80" * 6), "value at byte 2", "longer than 5 bytes"
    )
    # a key of type 2 read with its own schema: group must be there
    check_error(decode_consumer_offsets(i16(2), None), "key at byte 2")


# ---- __consumer_offsets: KIP-848 consumer groups and KIP-932 share groups ------------------------------------


def tp_struct(partitions: list[int]) -> bytes:
    return UUID_BYTES + carr([i32(p) for p in partitions]) + NO_TAGS


TP_EXPECTED = {"topicId": UUID_STR, "partitions": [0, 1]}
TOPIC_METADATA = (
    UUID_BYTES + cs("orders") + i32(3) + carr([i32(0) + carr([cs("r1"), cs("r2")]) + NO_TAGS]) + NO_TAGS
)
TOPIC_METADATA_EXPECTED = {
    "topicId": UUID_STR,
    "topicName": "orders",
    "numPartitions": 3,
    "partitionMetadata": [{"partition": 0, "racks": ["r1", "r2"]}],
}

# record type -> (type name, has member id, value bytes (after the version), expected value)
NEW_RECORDS: dict[int, tuple[str, bool, bytes, dict[str, Any]]] = {
    3: ("consumer_group_metadata", False, i32(12) + NO_TAGS, {"epoch": 12}),
    4: (
        "consumer_group_partition_metadata",
        False,
        carr([TOPIC_METADATA]) + NO_TAGS,
        {"topics": [TOPIC_METADATA_EXPECTED]},
    ),
    5: (
        "consumer_group_member_metadata",
        True,
        cs(None) + cs("rack") + cs("client") + cs("/h") + carr([cs("a"), cs("b")]) + cs("^x.*")
        + i32(30000) + cs("uniform") + NO_TAGS,
        {
            "instanceId": None,
            "rackId": "rack",
            "clientId": "client",
            "clientHost": "/h",
            "subscribedTopicNames": ["a", "b"],
            "subscribedTopicRegex": "^x.*",
            "rebalanceTimeoutMs": 30000,
            "serverAssignor": "uniform",
            "classicMemberMetadata": None,
        },
    ),
    6: ("consumer_group_target_assignment_metadata", False, i32(4) + NO_TAGS, {"assignmentEpoch": 4}),
    7: (
        "consumer_group_target_assignment_member",
        True,
        carr([tp_struct([0, 1])]) + NO_TAGS,
        {"topicPartitions": [TP_EXPECTED]},
    ),
    8: (
        "consumer_group_current_member_assignment",
        True,
        i32(5) + i32(4) + i8(1) + carr([tp_struct([0, 1])]) + carr([]) + NO_TAGS,
        {
            "memberEpoch": 5,
            "previousMemberEpoch": 4,
            "state": 1,
            "stateName": "UNREVOKED_PARTITIONS",
            "assignedPartitions": [TP_EXPECTED],
            "partitionsPendingRevocation": [],
        },
    ),
    9: ("share_group_partition_metadata", False, carr([TOPIC_METADATA]) + NO_TAGS, {"topics": [TOPIC_METADATA_EXPECTED]}),
    10: (
        "share_group_member_metadata",
        True,
        cs(None) + cs("c") + cs("/h") + carr([cs("t")]) + NO_TAGS,
        {"rackId": None, "clientId": "c", "clientHost": "/h", "subscribedTopicNames": ["t"]},
    ),
    11: ("share_group_metadata", False, i32(2) + NO_TAGS, {"epoch": 2}),
    12: ("share_group_target_assignment_metadata", False, i32(3) + NO_TAGS, {"assignmentEpoch": 3}),
    13: (
        "share_group_target_assignment_member",
        True,
        carr([tp_struct([0, 1])]) + NO_TAGS,
        {"topicPartitions": [TP_EXPECTED]},
    ),
    14: (
        "share_group_current_member_assignment",
        True,
        i32(9) + i32(8) + i8(0) + carr([tp_struct([0, 1])]) + NO_TAGS,
        {
            "memberEpoch": 9,
            "previousMemberEpoch": 8,
            "state": 0,
            "stateName": "STABLE",
            "assignedPartitions": [TP_EXPECTED],
        },
    ),
    15: (
        "share_group_state_partition_metadata",
        False,
        carr([UUID_BYTES + cs("t") + carr([i32(0)]) + NO_TAGS]) + carr([UUID_BYTES + cs("old") + NO_TAGS]) + NO_TAGS,
        {
            "initializedTopics": [{"topicId": UUID_STR, "topicName": "t", "partitions": [0]}],
            "deletingTopics": [{"topicId": UUID_STR, "topicName": "old"}],
        },
    ),
}  # fmt: skip


def new_key(record_type: int, with_member: bool) -> bytes:
    return i16(record_type) + s("cg") + (s("m-1") if with_member else b"")


@pytest.mark.parametrize("record_type", sorted(NEW_RECORDS))
def test_new_group_record_types(record_type: int) -> None:
    rtype, with_member, body, expected = NEW_RECORDS[record_type]
    key = new_key(record_type, with_member)
    out = check_ok(decode_consumer_offsets(key, i16(0) + body), rtype)
    assert out["key_version"] == record_type and out["value_version"] == 0
    assert out["key"] == ({"groupId": "cg", "memberId": "m-1"} if with_member else {"groupId": "cg"})
    assert out["value"] == expected
    tomb = check_ok(decode_consumer_offsets(key, None), rtype)
    assert tomb["tombstone"] is True and tomb["value"] is None
    # the value schemas only have version 0
    check_error(decode_consumer_offsets(key, i16(1) + body), "value at byte 0", "version 1")
    # every prefix of the value is malformed
    full = i16(0) + body
    for n in range(len(full)):
        check_error(decode_consumer_offsets(key, full[:n]), "value at byte")


def test_member_state_unknown_value_maps_to_unknown() -> None:
    body = i32(1) + i32(0) + i8(42) + carr([]) + carr([]) + NO_TAGS
    out = check_ok(
        decode_consumer_offsets(new_key(8, True), i16(0) + body), "consumer_group_current_member_assignment"
    )
    assert out["value"]["stateName"] == "UNKNOWN"


def test_consumer_group_member_classic_metadata_tagged_struct() -> None:
    classic = uv(1) + i32(10000) + carr([cs("range") + cby(b"\x01\x02\x03") + NO_TAGS]) + NO_TAGS
    body = (
        cs("inst")
        + cs(None)
        + cs("c")
        + cs("/h")
        + carr([])
        + cs(None)
        + i32(-1)
        + cs(None)
        + tags((0, classic))
    )
    out = check_ok(decode_consumer_offsets(new_key(5, True), i16(0) + body), "consumer_group_member_metadata")
    assert out["value"]["instanceId"] == "inst"
    assert out["value"]["classicMemberMetadata"] == {
        "sessionTimeoutMs": 10000,
        "supportedProtocols": [{"name": "range", "metadata": "010203"}],
    }
    # a presence marker of 0 means null
    body_null = body[: -len(tags((0, classic)))] + tags((0, uv(0)))
    out = check_ok(
        decode_consumer_offsets(new_key(5, True), i16(0) + body_null), "consumer_group_member_metadata"
    )
    assert out["value"]["classicMemberMetadata"] is None
    # a tagged field whose declared size does not match what its value uses
    body_bad = body[: -len(tags((0, classic)))] + tags((0, classic + b"\x00"))
    check_error(decode_consumer_offsets(new_key(5, True), i16(0) + body_bad), "tagged field 0", "declares")


def test_unknown_record_type_and_bad_keys() -> None:
    out = decode_consumer_offsets(i16(16) + s("g"), i16(0) + b"\x00")
    check_error(out, "key at byte 0", "unknown record type 16", "skips")
    assert out["key_version"] == 16
    check_error(decode_consumer_offsets(i16(-3), None), "unknown record type -3")
    # key of a member record missing its member id
    check_error(decode_consumer_offsets(i16(5) + s("cg"), None), "key at byte 6", "memberId")


# ---- __transaction_state --------------------------------------------------------------------------------------

TXN_KEY = i16(0) + s("txn-1")


def txn_v0(status: int, partitions: dict[str, list[int]] | None) -> bytes:
    parts = (
        i32(-1)
        if partitions is None
        else arr([s(t) + arr([i32(p) for p in ps]) for t, ps in partitions.items()])
    )
    return i16(0) + i64(1000) + i16(3) + i32(60000) + i8(status) + parts + i64(2000) + i64(1500)


def txn_v1(status: int, partitions: dict[str, list[int]] | None, tagged: bytes = NO_TAGS) -> bytes:
    parts = carr(
        None
        if partitions is None
        else [cs(t) + carr([i32(p) for p in ps]) + NO_TAGS for t, ps in partitions.items()]
    )
    return i16(1) + i64(1000) + i16(3) + i32(60000) + i8(status) + parts + i64(2000) + i64(1500) + tagged


def test_transaction_key() -> None:
    out = check_ok(decode_transaction_state(TXN_KEY, None), "transaction_metadata")
    assert out["key_version"] == 0 and out["key"] == {"transactionalId": "txn-1"}
    assert out["tombstone"] is True and out["value"] is None


def test_transaction_value_v0() -> None:
    out = check_ok(
        decode_transaction_state(TXN_KEY, txn_v0(1, {"orders": [0, 3], "audit": [1]})), "transaction_metadata"
    )
    assert out["value_version"] == 0
    assert out["value"] == {
        "producerId": 1000,
        "producerEpoch": 3,
        "transactionTimeoutMs": 60000,
        "transactionStatus": 1,
        "state": "Ongoing",
        "transactionPartitions": [
            {"topic": "orders", "partitionIds": [0, 3]},
            {"topic": "audit", "partitionIds": [1]},
        ],
        "transactionLastUpdateTimestampMs": 2000,
        "transactionStartTimestampMs": 1500,
    }
    empty = check_ok(decode_transaction_state(TXN_KEY, txn_v0(0, None)), "transaction_metadata")
    assert empty["value"]["transactionPartitions"] is None and empty["value"]["state"] == "Empty"


def test_transaction_value_v1_with_and_without_tagged_fields() -> None:
    out = check_ok(decode_transaction_state(TXN_KEY, txn_v1(2, {"t": [0]})), "transaction_metadata")
    v = out["value"]
    assert out["value_version"] == 1 and v["state"] == "PrepareCommit"
    assert v["previousProducerId"] == -1 and v["nextProducerId"] == -1 and v["clientTransactionVersion"] == 0
    assert v["transactionPartitions"] == [{"topic": "t", "partitionIds": [0]}]

    tagged = tags((0, i64(900)), (1, i64(1001)), (2, i16(2)), (7, b"\x00"))
    out = check_ok(decode_transaction_state(TXN_KEY, txn_v1(4, None, tagged)), "transaction_metadata")
    v = out["value"]
    assert (
        v["previousProducerId"] == 900 and v["nextProducerId"] == 1001 and v["clientTransactionVersion"] == 2
    )
    assert v["transactionPartitions"] is None and v["state"] == "CompleteCommit"
    assert v["unknownTaggedFields"] == [{"tag": 7, "size": 1, "hex": "00"}]


@pytest.mark.parametrize("status", range(len(TRANSACTION_STATES)))
def test_transaction_state_names(status: int) -> None:
    for value in (txn_v0(status, {"t": [0]}), txn_v1(status, {"t": [0]})):
        out = check_ok(decode_transaction_state(TXN_KEY, value), "transaction_metadata")
        assert out["value"]["state"] == TRANSACTION_STATES[status]
    assert TRANSACTION_STATES == (
        "Empty", "Ongoing", "PrepareCommit", "PrepareAbort", "CompleteCommit", "CompleteAbort", "Dead", "PrepareEpochFence",
    )  # fmt: skip


def test_transaction_errors() -> None:
    check_error(
        decode_transaction_state(TXN_KEY, txn_v0(8, None)),
        "value at byte 16",
        "unknown transaction state id 8",
    )
    check_error(decode_transaction_state(TXN_KEY, txn_v1(-1, None)), "value at byte 16", "state id -1")
    check_error(decode_transaction_state(TXN_KEY, i16(2) + b"\x00" * 40), "value at byte 0", "version 2")
    check_error(decode_transaction_state(i16(1) + s("x"), None), "key at byte 0", "unknown record type 1")
    check_error(decode_transaction_state(None, None), "null key")
    # tagged previousProducerId declared with 4 bytes: its int64 runs past the tag's window
    bad = txn_v1(0, None, tags((0, i32(1))))
    check_error(decode_transaction_state(TXN_KEY, bad), "previousProducerId")
    # tagged field size beyond the end of the value
    bad = txn_v1(0, None)[:-1] + uv(1) + uv(0) + uv(50) + b"\x00"
    check_error(decode_transaction_state(TXN_KEY, bad), "tagged field 0 needs 50 bytes")
    full = txn_v1(1, {"t": [0]}, tags((0, i64(1))))
    for n in range(len(full)):
        check_error(decode_transaction_state(TXN_KEY, full[:n]), "value at byte")


# ---- dispatch and robustness ---------------------------------------------------------------------------------


def test_decode_internal_dispatch() -> None:
    assert decode_internal("__consumer_offsets", offset_key(), None)["type"] == "offset_commit"  # type: ignore[index]
    assert decode_internal("__transaction_state", TXN_KEY, None)["type"] == "transaction_metadata"  # type: ignore[index]
    assert decode_internal("orders", offset_key(), None) is None
    assert decode_internal("__consumer_offsets-0", offset_key(), None) is None
    # KRaft's metadata log is decoded too (engine.metadata_records): a frame cut after its version is an error
    cut = decode_internal("__cluster_metadata", None, b"\x01")
    assert cut is not None and cut["type"] is None and "runs past the end" in cut["error"]
    noop = decode_internal("__cluster_metadata", None, b"\x01\x14\x00\x00")  # NoOpRecord v0
    assert noop == {"type": "NO_OP_RECORD", "version": 0, "data": {}}


def test_bytes_like_inputs_and_wrong_types() -> None:
    body, _ = OFFSET_VALUES[3]
    out = decode_consumer_offsets(bytearray(offset_key()), memoryview(i16(3) + body))  # type: ignore[arg-type]
    check_ok(out, "offset_commit")
    check_error(decode_consumer_offsets("not bytes", None), "key at byte 0", "expected bytes")  # type: ignore[arg-type]
    check_error(decode_transaction_state(TXN_KEY, 12), "value at byte 0", "expected bytes")  # type: ignore[arg-type]


KNOWN_TYPES = {"unknown", "offset_commit", "group_metadata", "transaction_metadata"} | {
    v[0] for v in NEW_RECORDS.values()
}


def check_any(out: dict[str, Any]) -> None:
    assert out["type"] in KNOWN_TYPES
    assert set(out) >= {"type", "key_version", "key", "value_version", "value", "tombstone"}
    json.dumps(out)
    if out["type"] == "unknown":
        assert ERROR_RE.match(out["error"]), out["error"]
        assert "internal error" not in out["error"]


maybe_bytes = st.one_of(st.none(), st.binary(max_size=200))


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(key=maybe_bytes, value=maybe_bytes)
def test_random_bytes_never_raise(key: bytes | None, value: bytes | None) -> None:
    check_any(decode_consumer_offsets(key, value))
    check_any(decode_transaction_state(key, value))


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    record_type=st.integers(min_value=-1, max_value=16),
    value_version=st.integers(min_value=-1, max_value=5),
    key_tail=st.binary(max_size=40),
    value_tail=st.binary(max_size=300),
)
def test_random_bodies_behind_valid_versions_never_raise(
    record_type: int, value_version: int, key_tail: bytes, value_tail: bytes
) -> None:
    """Get past the version checks so the fuzzing reaches the field readers of every schema."""
    key = i16(record_type) + s("g") + s("m") + i32(0) + key_tail
    value = i16(value_version) + value_tail
    check_any(decode_consumer_offsets(key, value))
    check_any(decode_transaction_state(i16(0) + s("t") + key_tail, value))


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_mutated_valid_records_never_raise(data: st.DataObject) -> None:
    samples = [
        (decode_consumer_offsets, GROUP_KEY, group_value(data.draw(st.integers(0, 4)))),
        (decode_consumer_offsets, offset_key(), i16(4) + OFFSET_VALUES[4][0]),
        (decode_transaction_state, TXN_KEY, txn_v1(1, {"t": [0, 1]}, tags((0, i64(5))))),
    ] + [
        (decode_consumer_offsets, new_key(rt, wm), i16(0) + body)
        for rt, (_n, wm, body, _e) in NEW_RECORDS.items()
    ]
    fn, key, value = data.draw(st.sampled_from(samples))
    buf = bytearray(value)
    for _ in range(data.draw(st.integers(1, 4))):
        pos = data.draw(st.integers(0, len(buf) - 1))
        buf[pos] = data.draw(st.integers(0, 255))
    check_any(fn(key, bytes(buf)))


# ---- the real corpus -----------------------------------------------------------------------------------------


def corpus_records() -> list[tuple[str, str, Any]]:
    out = []
    for topic in ("__consumer_offsets", "__transaction_state"):
        for d in sorted(CORPUS.rglob(f"{topic}-*")):
            if not d.is_dir():
                continue
            for log in sorted(d.glob("*.log")):
                with LogBuffer.open(log) as buf:
                    for batch in BatchScanner(buf):
                        if batch.is_control:  # transaction markers of transactional offset commits
                            continue
                        for rec in iter_records(buf, batch):
                            out.append((topic, f"{log}@{rec.offset}", rec))
    return out


@pytest.mark.skipif(not CORPUS.is_dir(), reason="shared corpus not available")
def test_corpus_internal_topics_decode() -> None:
    records = corpus_records()
    counts: collections.Counter[tuple[str, str, Any]] = collections.Counter()
    for topic, where, rec in records:
        out = decode_internal(topic, rec.key, rec.value)
        assert out is not None
        assert out["type"] != "unknown", (where, out)
        assert "warnings" not in out, (where, out)
        json.dumps(out)
        counts[(topic, out["type"], out["value_version"])] += 1
        key, value = out["key"], out["value"]
        assert out["tombstone"] == (rec.value is None)
        if out["type"] == "offset_commit":
            # legacy clients could commit with group id "" (KIP-289 deprecated it); topics are never empty
            assert isinstance(key["group"], str) and key["topic"] and key["partition"] >= 0
            if value is not None:
                assert value["offset"] >= 0 and value["commitTimestamp"] > 0
                if "expireTimestamp" in value:  # v1 only
                    assert (
                        value["expireTimestamp"] == -1 or value["expireTimestamp"] >= value["commitTimestamp"]
                    )
        elif out["type"] == "group_metadata":
            assert isinstance(key["group"], str) and key["group"]
            if value is not None:
                assert value["generation"] >= 0
                for m in value["members"]:
                    assert m["memberId"] and m["sessionTimeout"] > 0
                    assert m["subscription"]["size"] > 0
                    if value["protocolType"] == "consumer":
                        assert "error" not in m["subscription"] and m["subscription"]["topics"]
                        assert "error" not in m["assignment"]
        elif out["type"] == "transaction_metadata":
            assert key["transactionalId"]
            if value is not None:
                assert value["producerId"] >= 0 and value["state"] in TRANSACTION_STATES
                assert value["transactionTimeoutMs"] > 0
                if value["state"] == "Empty":
                    assert value["transactionPartitions"] is None

    by_type = collections.Counter({t: 0 for t in ("offset_commit", "group_metadata", "transaction_metadata")})
    for (_topic, rtype, _vv), n in counts.items():
        by_type[rtype] += n
    # the corpus has offset commits (v1, v3 and flexible v4), group metadata (v1-v3) and transactions (v0)
    assert (
        by_type["offset_commit"] > 1000
        and by_type["group_metadata"] > 100
        and by_type["transaction_metadata"] > 0
    )
    assert counts[("__consumer_offsets", "offset_commit", 4)] >= 1
    assert counts[("__consumer_offsets", "group_metadata", None)] >= 1  # tombstones
    states = {
        decode_internal(t, r.key, r.value)["value"]["state"]  # type: ignore[index]
        for t, _w, r in records
        if t == "__transaction_state" and r.value is not None
    }
    assert {"Empty", "Ongoing", "CompleteCommit"} <= states
