"""The one SparkSession builder's master resolution and driver address (no Spark started: tests/qos and
tests/fleet start real sessions through it)."""

from __future__ import annotations

import pytest

from kafka_ops.spark import session


@pytest.mark.parametrize(
    ("given", "submit", "master"),
    [
        ("spark://broker-1:7077", False, "spark://broker-1:7077"),  # --master wins
        ("local[2]", True, "local[2]"),  # also under spark-submit
        (None, False, "local[*]"),  # nothing said: every core of this machine
        (None, True, None),  # spark-submit's master stands
    ],
)
def test_master_is_the_option_then_spark_submit_then_local(
    monkeypatch: pytest.MonkeyPatch, given: str | None, submit: bool, master: str | None
) -> None:
    if submit:
        monkeypatch.setenv("PYSPARK_GATEWAY_PORT", "41234")
    else:
        monkeypatch.delenv("PYSPARK_GATEWAY_PORT", raising=False)
    assert session.resolve_master(given) == master


@pytest.mark.parametrize(
    ("master", "loopback"),
    [
        ("local[*]", True),
        ("local", True),
        ("local-cluster[2,1,1024]", True),
        ("spark://127.0.0.1:7077", True),
        ("spark://localhost:7077", True),
        ("spark://[::1]:7077", True),
        ("spark://127.0.0.1:7077,localhost:7078", True),
        ("spark://spark-master.example:7077", False),
        ("spark://10.0.0.5:7077", False),
        ("spark://127.0.0.1:7077,10.0.0.5:7077", False),  # HA with a remote master
        ("yarn", False),
        ("k8s://https://127.0.0.1:6443", False),  # executors run in pods: they need a routable driver
        (None, False),  # spark-submit's: its own settings stand
    ],
)
def test_the_driver_is_pinned_to_loopback_only_for_local_masters(master: str | None, loopback: bool) -> None:
    assert session.is_loopback_master(master) is loopback
