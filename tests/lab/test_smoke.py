"""Smoke: a broker of every lab version takes every producer kind, stops cleanly (writing the clean-shutdown
marker), restarts and returns every acknowledged record (and no aborted one)."""

from __future__ import annotations

import json

import pytest

from kafka_lab.produce import kinds_for
from tests.lab.dataset import Dataset
from tests.lab.helpers import at_least

pytestmark = pytest.mark.lab


def test_every_producer_kind_was_acknowledged(dataset: Dataset) -> None:
    for kind in kinds_for(dataset.version):
        got = [
            tp
            for tp in (dataset.acked.aborted if kind == "aborted" else dataset.acked.offsets)
            if tp.topic == f"smoke-{kind}"
        ]
        assert got, f"nothing acknowledged for smoke-{kind}"
    assert all(
        len(offs) == 300 for tp, offs in dataset.acked.offsets.items() if tp.topic.startswith("smoke-")
    )


def test_clean_stop_writes_the_marker_in_every_log_dir(dataset: Dataset) -> None:
    assert set(dataset.markers_after_stop) == {"data-0", "data-1"}
    for text in dataset.markers_after_stop.values():
        assert text is not None
        if at_least(dataset.version, (3, 7)):  # KIP-966: the marker carries the broker epoch
            doc = json.loads(text)
            assert doc["version"] == 0 and doc["brokerEpoch"] > 0
        else:
            assert text == ""


def test_restart_returns_every_acknowledged_record(dataset: Dataset) -> None:
    assert dataset.smoke_lost == {}
    assert dataset.smoke_visible_aborted == {}
    assert dataset.smoke_read_errors == {}
    assert dataset.smoke_read >= dataset.acked.count


def test_start_time(dataset: Dataset) -> None:
    assert len(dataset.start_seconds) == 2
    assert all(s < 60 for s in dataset.start_seconds), dataset.start_seconds
