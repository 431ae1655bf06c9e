"""kafka_lab.fidelity.compare on leftover files: a fate the plan got wrong, or a file it did not list, is a
difference; a dir that goes offline is compared as a dir."""

from __future__ import annotations

from typing import Any

from kafka_lab.fidelity import compare

DIR = "/lab/data-1"
LOG_DELETED = f"{DIR}/t10-0/00000000000000000060.log.deleted"
CLEANED = f"{DIR}/t10-0/00000000000000000000.log.cleaned"


def side(leftovers: list[tuple[str, str, str]], state: str = "online") -> dict[str, Any]:
    return {
        "broker": "starts", "reason": None, "log_dirs": [{"path": DIR, "state": state}], "segments": [],
        "leftovers": [{"path": p, "kind": k, "fate": f, "reason": None} for p, k, f in leftovers],
    }  # fmt: skip


def test_same_fates_agree() -> None:
    both = [(LOG_DELETED, "deleted", "deleted_at_load"), (CLEANED, "cleaned", "deleted_at_load")]
    assert compare(side(both), side(both)) == []


def test_a_wrong_fate_and_an_unlisted_file_are_differences() -> None:
    predicted = side([(LOG_DELETED, "deleted", "kept")])
    observed = side([(LOG_DELETED, "deleted", "deleted_at_load"), (CLEANED, "cleaned", "deleted_at_load")])
    out = compare(predicted, observed)
    assert out == [
        "t10-0 00000000000000000000.log.cleaned: predicted not listed, broker: deleted_at_load (not listed)",
        "t10-0 00000000000000000060.log.deleted: predicted kept, broker: deleted_at_load (not listed)",
    ]


def test_a_split_swap_is_not_compared_and_an_offline_dir_is_compared_as_a_dir() -> None:
    swap = f"{DIR}/t10-0/00000000000000000060.log.swap"
    assert compare(side([(swap, "swap", "deleted_at_load")]), side([])) == []
    offline = side([(LOG_DELETED, "deleted", "kept")], state="offline")
    assert compare(offline, side([(LOG_DELETED, "deleted", "deleted_at_load")], state="offline")) == []
