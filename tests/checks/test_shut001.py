"""SHUT001's recovery estimate: one recovery thread recovers a partition from end to end (LogManager.loadLogs
submits one job per partition dir to the dir's pool of num.recovery.threads.per.data.dir threads), so the
largest partition sets the floor however many threads there are."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafka_ops.broker.startup import RECOVERY_BYTES_PER_S, recovery_seconds

from .retention_hosts import Failures, TopicSpec, add_server_property, audit, findings, simulate


@pytest.mark.parametrize(
    ("nbytes", "partitions", "threads", "largest", "seconds"),
    [
        (96_000_000, 1, 8, 96_000_000, 2.0),  # one partition: one thread, whatever the setting
        (96_000_000, 4, 4, 24_000_000, 0.5),  # four equal partitions share four threads
        (96_000_000, 4, 1, 24_000_000, 2.0),  # one thread does them in turn
        (96_000_000, 4, 4, 90_000_000, 1.875),  # one big partition: its own time, not a quarter of the total
        (96_000_000, 2, 8, 48_000_000, 1.0),  # more threads than partitions: the others idle
    ],
)
def test_recovery_takes_the_largest_partition_or_the_share_of_the_threads(
    nbytes: int, partitions: int, threads: int, largest: int, seconds: float
) -> None:
    assert recovery_seconds(nbytes, partitions, threads, largest) == pytest.approx(seconds)


def test_shut001_estimate_on_a_host_with_one_big_partition_and_many_threads(tmp_path: Path) -> None:
    host = simulate(
        tmp_path,
        [
            TopicSpec("big", partitions=1, records_per_partition=6000, value_bytes=400),
            TopicSpec("small", partitions=6, records_per_partition=40, value_bytes=100),
        ],
        failures=Failures(unclean_shutdown=True),
        log_dirs=1,
    )
    add_server_property(host, "num.recovery.threads.per.data.dir=8")
    [f] = findings(audit(host), "SHUT001")
    d = f["details"]
    assert d["recovery_threads"] == 8 and d["partitions"] >= 7
    # the big partition re-reads more than the threads' share of the total
    assert d["largest_recover_bytes"] > d["recover_bytes"] / min(8, d["partitions"])
    # the floor is the big partition's own time, not the total over 7 or more threads
    assert d["recover_estimate_s"] == round(d["largest_recover_bytes"] / RECOVERY_BYTES_PER_S, 1)
    assert "the largest partition sets the floor" in f["message"]
    # a recovery of a fraction of a second is no emergency: info (SHUT001.md: the severity follows the estimate)
    assert d["recover_estimate_s"] < 60 and f["severity"] == "info"
    assert d["severity_thresholds_s"] == {"warning": 60, "critical": 600}


@pytest.mark.parametrize(
    ("seconds", "severity"),
    [(0.0, "info"), (59.9, "info"), (60, "warning"), (599, "warning"), (600, "critical"), (7200, "critical")],
)
def test_shut001_severity_follows_the_recovery_estimate(seconds: float, severity: str) -> None:
    from kafka_ops.checks.shut001 import severity_for

    assert severity_for(seconds) == severity


def test_shut001_says_nothing_of_a_controller_only_node(tmp_path: Path) -> None:
    """A KRaft controller-only node never writes the marker (no LogManager) and recovers its metadata log at every
    start: a missing marker is no sign of an unclean stop there (seen on real 3.9.1 controllers in the lab)."""
    host = simulate(
        tmp_path, [TopicSpec("t", partitions=1, records_per_partition=50)],
        failures=Failures(unclean_shutdown=True), log_dirs=1,
    )  # fmt: skip
    assert findings(audit(host), "SHUT001")  # a broker without its marker: said
    add_server_property(host, "process.roles=controller")
    assert findings(audit(host), "SHUT001") == []
