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

SCENARIOS = [
    "no_fault",
    "clean",
    "unclean",
    "all_dirs_offline",
    "lost_and_found",
    "meta_mismatch",
    "sigkill",
] + [f"offline-{n}" for n in OFFLINE_FAULTS]


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


def test_clean_stop_without_fault_plans_nothing_and_passes_the_gate(trials: dict[str, TrialResult]) -> None:
    """A cleanly stopped broker with nothing wrong: the plan is empty, the broker loads everything as is and
    deletes nothing, and the audit finds nothing at critical (the default gate passes)."""
    r = trials["no_fault"]
    assert r.predicted is not None and r.predicted["broker"] == "starts"
    assert r.predicted["segments"] == [] and {d["state"] for d in r.predicted["log_dirs"]} == {"online"}
    assert [s for s in r.next_start["segments"] if "__cluster_metadata" not in s["log"]] == []
    assert not [c for c, sev in r.predicted_findings if sev == "critical"], r.predicted_findings
