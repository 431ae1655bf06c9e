"""Fixtures of the Spark reader and `kafka-ops qos` tests: one local SparkSession for the whole run."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from kafka_ops.simulator.host import HostSpec, SimulatedHost, TopicSpec, simulate_host

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

NOW_MS = 1_790_000_000_000


@pytest.fixture(scope="session")
def spark() -> Iterator[SparkSession]:
    """``local[2]``, 2 shuffle partitions, UI off; an active session with another master is stopped first."""
    from kafka_ops.spark import spark_session

    session = spark_session(master="local[2]", shuffle_partitions=2, app_name="kafka-ops-tests")
    yield session
    session.stop()


@pytest.fixture(scope="session")
def txn_host(tmp_path_factory: pytest.TempPathFactory) -> SimulatedHost:
    """Interleaved transactions of three producers per partition, every third aborted, one left open;
    small segments so that transactions straddle segment boundaries."""
    return simulate_host(
        str(tmp_path_factory.mktemp("txn")),
        HostSpec(
            now_ms=NOW_MS,
            segment_bytes=6 * 1024,
            topics=[
                TopicSpec(
                    "ledger", partitions=2, records_per_partition=400, batch_records=5, value_bytes=120,
                    producer="transactional", abort_every=3, txn_producers=3, open_txn=True,
                ),
                TopicSpec("plain", partitions=1, records_per_partition=120),
            ],
        ),
    )  # fmt: skip
