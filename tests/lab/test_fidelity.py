"""The model against the broker: for every lab scenario and version, ``kafka-ops audit``'s ``next_start`` (made
on the stopped, faulted files before the start) equals what the broker then did, field by field: it starts or
exits, every log dir's state, every segment's load, truncated bytes and deletion (within the start's duration
plus a margin; kafka_ops.lab.fidelity). When they differ, the broker is right: fix the model, keep the scenario.
"""

from __future__ import annotations

import os

import pytest

from kafka_ops.lab.trial import TrialResult
from tests.lab.scenarios import OFFLINE_FAULTS

pytestmark = pytest.mark.lab

SCENARIOS = ["clean", "unclean", "all_dirs_offline", "lost_and_found", "meta_mismatch", "sigkill"] + [
    f"offline-{n}" for n in OFFLINE_FAULTS
]


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_next_start_is_what_the_broker_did(trials: dict[str, TrialResult], scenario: str) -> None:
    if scenario not in trials:
        assert scenario.startswith("offline-") and os.geteuid() != 0, f"{scenario} did not run"
        pytest.skip("ownership faults need root")
    r = trials[scenario]
    assert r.predicted is not None
    assert r.differences == [], "\n".join(
        [f"{r.version} {scenario}: the model and the broker differ:", *r.differences]
    )
