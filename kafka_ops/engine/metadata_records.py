"""Decode the records of KRaft's metadata log ``__cluster_metadata`` (and of its snapshots, ``*.checkpoint``).

A metadata record's value is framed by MetadataRecordSerde (server-common/.../AbstractApiMessageSerde.java)::

    unsigned varint frame version (1), unsigned varint record type (apiKey), unsigned varint version, message

and the message is a generated message in flexible versions (every metadata record is flexible from version 0:
compact lengths, a tagged-field section after every struct); the key is null. The output follows
``kafka-dump-log.sh --cluster-metadata-decoder`` (DumpLogSegments.ClusterMetadataLogMessageParser):
``{"type": "PARTITION_RECORD", "version": 1, "data": {...}}``, the type named as the MetadataRecordType enum
names it, the fields under their JSON names (camelCase); uuids as Kafka prints them (URL-safe base64), bytes
as hex.

Schemas are transcribed from Kafka's metadata/src/main/resources/common/metadata/*.json (apache/kafka trunk of
2024-10-25, commit 1eb7644349c, and ClearElrRecord of 4.0). A record of a type or version not known here, or
malformed, gets what could be read (type, version) and an ``error``: never an exception. Standard library only.
"""

from __future__ import annotations

import re
from typing import Any

from kafka_ops.engine.internal_topics import F, M, S, _Malformed, _Message, _read_struct, _Reader

CLUSTER_METADATA = "__cluster_metadata"
FRAME_VERSION = 1  # AbstractApiMessageSerde.DEFAULT_FRAME_VERSION

# apiKey -> the record's schema (metadata/src/main/resources/common/metadata/<Name>.json)
# fmt: off
RECORDS: dict[int, _Message] = {
    0: M(
        "RegisterBrokerRecord", "0-3", "0+",
        F("BrokerId", "int32"),
        F("IsMigratingZkBroker", "bool", "2+"),
        F("IncarnationId", "uuid"),
        F("BrokerEpoch", "int64"),
        S("EndPoints", (
            F("Name", "string"),
            F("Host", "string"),
            F("Port", "uint16"),
            F("SecurityProtocol", "int16"),
        )),
        S("Features", (
            F("Name", "string"),
            F("MinSupportedVersion", "int16"),
            F("MaxSupportedVersion", "int16"),
        )),
        F("Rack", "string", nullable="0+"),
        F("Fenced", "bool"),
        F("InControlledShutdown", "bool", "1+"),
        F("LogDirs", "uuid", "3+", array=True, tag=0, default=()),
    ),
    1: M(
        "UnregisterBrokerRecord", "0", "0+",
        F("BrokerId", "int32"),
        F("BrokerEpoch", "int64"),
    ),
    2: M(
        "TopicRecord", "0", "0+",
        F("Name", "string"),
        F("TopicId", "uuid"),
    ),
    3: M(
        "PartitionRecord", "0-2", "0+",
        F("PartitionId", "int32"),
        F("TopicId", "uuid"),
        F("Replicas", "int32", array=True),
        F("Isr", "int32", array=True),
        F("RemovingReplicas", "int32", array=True),
        F("AddingReplicas", "int32", array=True),
        F("Leader", "int32"),
        F("LeaderRecoveryState", "int8", tag=0, default=0),
        F("LeaderEpoch", "int32"),
        F("PartitionEpoch", "int32"),
        F("Directories", "uuid", "1+", array=True),
        F("EligibleLeaderReplicas", "int32", "2+", array=True, tag=1, default=None, nullable="2+"),
        F("LastKnownElr", "int32", "2+", array=True, tag=2, default=None, nullable="2+"),
    ),
    4: M(
        "ConfigRecord", "0", "0+",
        F("ResourceType", "int8"),
        F("ResourceName", "string"),
        F("Name", "string"),
        F("Value", "string", nullable="0+"),
    ),
    5: M(
        "PartitionChangeRecord", "0-2", "0+",
        F("PartitionId", "int32"),
        F("TopicId", "uuid"),
        F("Isr", "int32", array=True, tag=0, default=None, nullable="0+"),
        F("Leader", "int32", tag=1, default=-2),
        F("Replicas", "int32", array=True, tag=2, default=None, nullable="0+"),
        F("RemovingReplicas", "int32", array=True, tag=3, default=None, nullable="0+"),
        F("AddingReplicas", "int32", array=True, tag=4, default=None, nullable="0+"),
        F("LeaderRecoveryState", "int8", tag=5, default=-1),
        F("Directories", "uuid", "1+", array=True, tag=8, default=None, nullable="1+"),
        F("EligibleLeaderReplicas", "int32", "2+", array=True, tag=6, default=None, nullable="2+"),
        F("LastKnownElr", "int32", "2+", array=True, tag=7, default=None, nullable="2+"),
    ),
    7: M(
        "FenceBrokerRecord", "0", "0+",
        F("Id", "int32"),
        F("Epoch", "int64"),
    ),
    8: M(
        "UnfenceBrokerRecord", "0", "0+",
        F("Id", "int32"),
        F("Epoch", "int64"),
    ),
    9: M(
        "RemoveTopicRecord", "0", "0+",
        F("TopicId", "uuid"),
    ),
    10: M(
        "DelegationTokenRecord", "0", "0+",
        F("Owner", "string"),
        F("Requester", "string"),
        F("Renewers", "string", array=True),
        F("IssueTimestamp", "int64"),
        F("MaxTimestamp", "int64"),
        F("ExpirationTimestamp", "int64"),
        F("TokenId", "string"),
    ),
    11: M(
        "UserScramCredentialRecord", "0", "0+",
        F("Name", "string"),
        F("Mechanism", "int8"),
        F("Salt", "bytes"),
        F("StoredKey", "bytes"),
        F("ServerKey", "bytes"),
        F("Iterations", "int32"),
    ),
    12: M(
        "FeatureLevelRecord", "0", "0+",
        F("Name", "string"),
        F("FeatureLevel", "int16"),
    ),
    14: M(
        "ClientQuotaRecord", "0", "0+",
        S("Entity", (
            F("EntityType", "string"),
            F("EntityName", "string", nullable="0+"),
        )),
        F("Key", "string"),
        F("Value", "float64"),
        F("Remove", "bool"),
    ),
    15: M(
        "ProducerIdsRecord", "0", "0+",
        F("BrokerId", "int32"),
        F("BrokerEpoch", "int64"),
        F("NextProducerId", "int64"),
    ),
    17: M(
        "BrokerRegistrationChangeRecord", "0-2", "0+",
        F("BrokerId", "int32"),
        F("BrokerEpoch", "int64"),
        F("Fenced", "int8", tag=0, default=0),
        F("InControlledShutdown", "int8", "1+", tag=1, default=0),
        F("LogDirs", "uuid", "2+", array=True, tag=2, default=()),
    ),
    18: M(
        "AccessControlEntryRecord", "0", "0+",
        F("Id", "uuid"),
        F("ResourceType", "int8"),
        F("ResourceName", "string"),
        F("PatternType", "int8"),
        F("Principal", "string"),
        F("Host", "string"),
        F("Operation", "int8"),
        F("PermissionType", "int8"),
    ),
    19: M(
        "RemoveAccessControlEntryRecord", "0", "0+",
        F("Id", "uuid"),
    ),
    20: M(
        "NoOpRecord", "0", "0+",

    ),
    21: M(
        "ZkMigrationStateRecord", "0", "0+",
        F("ZkMigrationState", "int8"),
    ),
    22: M(
        "RemoveUserScramCredentialRecord", "0", "0+",
        F("Name", "string"),
        F("Mechanism", "int8"),
    ),
    23: M(
        "BeginTransactionRecord", "0", "0+",
        F("Name", "string", tag=0, default=None, nullable="0+"),
    ),
    24: M(
        "EndTransactionRecord", "0", "0+",

    ),
    25: M(
        "AbortTransactionRecord", "0", "0+",
        F("Reason", "string", tag=0, default=None, nullable="0+"),
    ),
    26: M(
        "RemoveDelegationTokenRecord", "0", "0+",
        F("TokenId", "string"),
    ),
    27: M(
        "RegisterControllerRecord", "0", "0+",
        F("ControllerId", "int32"),
        F("IncarnationId", "uuid"),
        F("ZkMigrationReady", "bool"),
        S("EndPoints", (
            F("Name", "string"),
            F("Host", "string"),
            F("Port", "uint16"),
            F("SecurityProtocol", "int16"),
        )),
        S("Features", (
            F("Name", "string"),
            F("MinSupportedVersion", "int16"),
            F("MaxSupportedVersion", "int16"),
        )),
    ),
    28: M(
        "ClearElrRecord", "0", "0+",
        F("TopicName", "string"),
    ),

}
# fmt: on


def type_name(name: str) -> str:
    """MetadataRecordType's constant for a record name (MessageGenerator.toSnakeCase, upper case)."""
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).upper()


TYPE_NAMES = {k: type_name(m.name) for k, m in RECORDS.items()}


def decode_metadata_record(value: bytes | None) -> dict[str, Any]:
    """One ``__cluster_metadata`` record's value: ``{"type", "version", "data"}``; with ``"error"`` (and what
    could be read before it) when the bytes are not a metadata record this version of kafka-ops knows."""
    out: dict[str, Any] = {"type": None, "version": None, "data": None}
    try:
        if value is None:
            raise _Malformed(0, "null value (every metadata record has one)")
        r = _Reader(bytes(value))
        frame = r.uvarint("frame version")
        if frame != FRAME_VERSION:
            raise _Malformed(0, f"frame version {frame} (only {FRAME_VERSION} is known)")
        api_key = r.uvarint("record type")
        out["type"] = TYPE_NAMES.get(api_key, f"UNKNOWN({api_key})")
        version = out["version"] = r.uvarint("record version")
        msg = RECORDS.get(api_key)
        if msg is None:
            raise _Malformed(r.pos, f"record type {api_key} is not known to this kafka-ops")
        if not msg.valid[0] <= version <= msg.valid[1]:
            lo, hi = msg.valid
            raise _Malformed(
                r.pos, f"{msg.name} version {version} is not known to this kafka-ops (known: {lo}-{hi})"
            )
        out["data"] = _read_struct(r, msg.fields, version, True)
        if r.remaining:
            raise _Malformed(r.pos, f"{r.remaining} byte(s) of garbage after {msg.name}")  # as Kafka's serde
    except _Malformed as exc:
        out["error"] = f"at byte {exc.pos}: {exc.reason}"
    except Exception as exc:  # a bug here must not stop the dump of a whole log dir
        out["error"] = f"internal error: {type(exc).__name__}: {exc}"
    return out
