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
        f"{CLEANED}: the plan does not list it; the broker: deleted_at_load",
        f"{LOG_DELETED}: the plan says kept; the broker: deleted_at_load",
    ]


def test_a_split_swap_is_not_compared_and_an_offline_dir_is_compared_as_a_dir() -> None:
    swap = f"{DIR}/t10-0/00000000000000000060.log.swap"
    assert compare(side([(swap, "swap", "deleted_at_load")]), side([])) == []
    offline = side([(LOG_DELETED, "deleted", "kept")], state="offline")
    assert compare(offline, side([(LOG_DELETED, "deleted", "deleted_at_load")], state="offline")) == []


def test_a_stray_moved_otherwise_than_planned_is_a_difference() -> None:
    """next_start.strays: the plan's renamed_stray / deleted against the dirs the broker moved away; a dir the
    plan keeps (or does not list) and the broker left in place is no difference."""
    stray = f"{DIR}/strayed-0"
    planned = side([]) | {"strays": [{"path": stray, "fate": "renamed_stray", "reason": "3.7+"}]}
    moved = side([]) | {
        "strays": [{"path": stray, "fate": "renamed_stray", "renamed_to": stray + ".x-stray"}]
    }
    assert compare(planned, moved) == []
    deleted = side([]) | {"strays": [{"path": stray, "fate": "deleted", "renamed_to": None}]}
    assert compare(planned, deleted) == [
        f"{stray}: stray: the plan says renamed_stray (3.7+); the broker: deleted"
    ]
    assert compare(side([]), deleted) == [f"{stray}: stray: the plan keeps it; the broker: deleted"]
    kept = side([]) | {"strays": [{"path": stray, "fate": "kept", "reason": "the broker exits"}]}
    assert compare(kept, side([])) == []


def test_a_completed_move_is_no_stray_and_a_future_dir_kept_or_moved_otherwise_is_a_difference() -> None:
    """The broker renamed a -future dir to the partition's name and the current dir -delete (its move resumed and
    completed): the observation says ``replaces_current`` for the future dir and does not take the current dir's
    rename for a stray; a plan that kept the future dir differs."""
    from kafka_lab.observe import FileState, Snapshot, future_dirs, strays

    def d() -> FileState:
        return FileState(0, 0, 0, 0o755, 0, True, None)

    dirs = ["/lab/data-0", DIR]
    future = "/lab/data-0/t10-0.7e2a9c4b1d0f4e6a9b3c5d7e8f1a2b3c-future"
    # a live partition met first (its own loop must not lose the moves: seen on a lab 2.2.1 broker)
    before = Snapshot(0, dirs, {"/lab/data-0/t00-0": d(), f"{DIR}/t10-0": d(), future: d()})
    after = Snapshot(
        0,
        dirs,
        {
            "/lab/data-0/t00-0": d(),
            "/lab/data-0/t10-0": d(),
            f"{DIR}/t10-0.0123456789abcdef0123456789abcdef-delete": d(),
        },
    )
    assert future_dirs(before, after) == [
        {"path": future, "fate": "replaces_current", "renamed_to": "/lab/data-0/t10-0"}
    ]
    assert strays(before, after) == []
    kept = Snapshot(0, dirs, dict(before.files))
    assert future_dirs(before, kept) == [{"path": future, "fate": "kept", "renamed_to": None}]
    observed = side([]) | {"future_dirs": future_dirs(before, after)}
    predicted = side([]) | {"future_dirs": [{"path": future, "fate": "kept", "reason": "the broker exits"}]}
    assert compare(predicted, observed) == [
        f"{future}: future dir: the plan says kept (the broker exits); the broker: replaces_current"
    ]
    predicted["future_dirs"][0]["fate"] = "replaces_current"
    assert compare(predicted, observed) == []


def test_the_rehearsal_reports_each_field_the_lab_compares_as_json() -> None:
    """rehearsal.differences is this comparison (kafka_ops.rehearse.compare): a segment the plan loads as is and
    the start recovered, truncated or deleted is a difference with its field; whether a segment was deleted is
    compared, not when (tolerance None: a rehearsal starts later than the audit's "now")."""
    from kafka_ops.rehearse.compare import differences

    log = f"{DIR}/t10-0/00000000000000000000.log"
    gone = f"{DIR}/t10-0/00000000000000000060.log"
    plan = side([]) | {"segments": [
        {"log": log, "load": "as_is", "truncated_bytes": 0, "deleted_at": None, "deleted_by": None},
        {"log": gone, "load": "as_is", "truncated_bytes": 0, "deleted_at": "2026-12-08T00:00:00Z",
         "deleted_by": "retention.ms"},
    ]}  # fmt: skip
    seen = side([]) | {"segments": [
        {"log": log, "load": "recovered", "truncated_bytes": 120, "deleted_at": None, "deleted_by": None},
        {"log": gone, "load": "as_is", "truncated_bytes": 0, "deleted_at": "2026-12-08T00:05:00Z",
         "deleted_by": "retention.ms (log start offset)"},
    ]}  # fmt: skip
    out = differences(plan, seen, tolerance_s=None, by="the rehearsed start")
    assert [(d["what"], d["path"], d["field"], d["plan"], d["observed"]) for d in out] == [
        ("segment", log, "load", "as_is", "recovered"),
        ("segment", log, "truncated_bytes", 0, 120),
    ]
    assert out[0]["text"].endswith("the rehearsed start: recovered")
    # the lab compares when and why too
    lab = compare(plan, seen)
    assert any("more than 15.0 s apart" in x for x in lab) and any("deleted it by" in x for x in lab)
    # a deletion the plan does not make
    seen["segments"][0]["deleted_at"] = "2026-12-08T00:01:00Z"
    out = differences(plan, seen, tolerance_s=None, by="the rehearsed start")
    assert ("segment", log, "deleted", "kept", "deleted") in [
        (d["what"], d["path"], d["field"], d["plan"], d["observed"]) for d in out
    ]
