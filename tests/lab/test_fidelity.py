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
    "seed003_retention",
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


def test_seed003_compact_delete_keeps_old_records_that_share_a_segment_and_size_retention_deletes(
    trials: dict[str, TrialResult],
) -> None:
    """Seed 003 on a real broker: of a ``compact,delete`` topic, time retention (run by the cleaner thread)
    deletes the segments that hold only old records and keeps the one where old records share a segment with
    new ones (RET004 says so before the start); ``retention.bytes`` deletes the oldest segments of a ``delete``
    topic down to its limit. The plan said each of these deletions (the fidelity test above compares them)."""
    r = trials["seed003_retention"]
    assert r.predicted is not None and r.differences == [], r.differences

    def deleted(topic: str, side: dict) -> dict[int, str]:  # type: ignore[type-arg]
        return {
            s["base_offset"]: s["deleted_by"]
            for s in side["segments"]
            if f"/{topic}-0/" in s["log"] and s["deleted_at"] is not None
        }

    (pdir,) = [p for p in r.faults[0].paths if p.name == "compactdel-0"]
    bases = sorted(int(f.name[:20]) for f in pdir.glob("*.log*") if f.name[:20].isdigit())
    gone = deleted("compactdel", r.next_start)
    assert gone and set(gone.values()) == {"retention.ms"}, gone
    kept = [b for b in bases if b not in gone]
    assert kept and max(gone) < min(kept)  # the oldest go, from the start of the log
    assert deleted("compactdel", r.predicted) == {b: "retention.ms" for b in gone}
    assert ("RET004", "warning") in r.predicted_findings or any(
        c == "RET004" for c, _ in r.predicted_findings
    )
    by_size = deleted("sizeret", r.next_start)
    assert by_size and set(by_size.values()) == {"retention.bytes"}, by_size
    assert deleted("sizeret", r.predicted) == by_size
