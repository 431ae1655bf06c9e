"""The records of Kafka's internal topics, decoded by topic (kafka-dump-log.sh's decoders): one door over
engine.internal_topics (``__consumer_offsets``, ``__transaction_state``) and engine.metadata_records (KRaft's
``__cluster_metadata``), which builds on the former's schema reader."""

from __future__ import annotations

from typing import Any

from kafka_ops.engine.internal_topics import (
    CONSUMER_OFFSETS,
    TRANSACTION_STATE,
    decode_consumer_offsets,
    decode_transaction_state,
)
from kafka_ops.engine.layout import METADATA_TOPIC
from kafka_ops.engine.metadata_records import decode_metadata_record


def decode_internal(topic: str, key: bytes | None, value: bytes | None) -> dict[str, Any] | None:
    """Decode a record of ``__consumer_offsets``, ``__transaction_state`` or ``__cluster_metadata``; None for any
    other topic."""
    if topic == CONSUMER_OFFSETS:
        return decode_consumer_offsets(key, value)
    if topic == TRANSACTION_STATE:
        return decode_transaction_state(key, value)
    if topic == METADATA_TOPIC:
        return decode_metadata_record(value)
    return None
