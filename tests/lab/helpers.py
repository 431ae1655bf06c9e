"""Small readers over a trial's result for the characterisation tests."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from kafka_lab.faults import Fault, batches, segment_bases, segment_file
from kafka_lab.trial import TrialResult
from kafka_lab.versions import parse
from tests.lab.dataset import Dataset

# The characterisation tests (test_partition_faults, test_broker_faults) pin the log lines and index behaviour of
# 2.8 and later; releases before 2.8 log other lines (no per-dir recovery line, no deletion reason on the
# segment) and, before 2.3, sanity-check indexes at load. Those releases are compared with the plan field by field
# by test_fidelity (docs/fidelity.md); the characterisation of their log lines is not written yet.
CHARACTERISED_FROM = (2, 8)


def skip_uncharacterised(version: str) -> None:
    if parse(version) < (*CHARACTERISED_FROM, 0):
        pytest.skip(
            f"Kafka {version}: these tests pin the log lines of 2.8+; test_fidelity compares this release's "
            "start with the plan"
        )


def at_least(version: str, v: tuple[int, int]) -> bool:
    return parse(version) >= (*v, 0)


def saved_partition(ds: Dataset, topic: str) -> Path:
    return ds.saved / ds.placement[f"{topic}-0"] / f"{topic}-0"


def bases(ds: Dataset, topic: str) -> list[int]:
    """The topic's segments in the saved data (before any fault)."""
    return segment_bases(saved_partition(ds, topic))


def acked_from(ds: Dataset, topic: str, first: int) -> list[int]:
    return sorted(o for tp, offs in ds.acked.offsets.items() if tp.topic == topic for o in offs if o >= first)


def acked_before(ds: Dataset, topic: str, end: int) -> list[int]:
    return sorted(o for tp, offs in ds.acked.offsets.items() if tp.topic == topic for o in offs if o < end)


def listed(r: TrialResult, topic: str) -> dict[int, dict[str, Any]]:
    """The topic's segments the observation lists (fate other than loaded as is and kept), by base offset."""
    return {s["base_offset"]: s for s in r.next_start["segments"] if s["topic"] == topic}


def fault(r: TrialResult, name: str) -> Fault:
    return next(f for f in r.faults if f.name == name)


def lines(r: TrialResult, pattern: str, partition: str | None = None) -> list[str]:
    return r.observation.lines(pattern, partition)


def full_text(r: TrialResult, pattern: str) -> list[str]:
    """Entries (message plus continuation lines) matching a regex."""
    rx = re.compile(pattern, re.M)
    out = []
    for e in r.observation.entries:
        text = "\n".join([e.message, *e.extra])
        if rx.search(text):
            out.append(text)
    return out


def changes(r: TrialResult, ds_topic_dir: str, base: int) -> dict[str, list[Any]]:
    """File changes of one segment (``<log dir>/<topic>-0`` relative to the trial's lab directory)."""
    key = next((k for k in r.observation.changes if k.endswith(f"/{ds_topic_dir}/{base:020d}.log")), None)
    return r.observation.changes.get(key, {}) if key else {}


def max_timestamps(ds: Dataset, topic: str) -> dict[int, int]:
    """Largest record timestamp per segment of the saved data."""
    pdir = saved_partition(ds, topic)
    return {
        b: max(x.max_timestamp for x in batches(segment_file(pdir, b, ".log"))) for b in segment_bases(pdir)
    }
