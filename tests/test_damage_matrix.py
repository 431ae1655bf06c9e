"""The damage matrix of issue 36 §2 (kafka_lab/matrix.py, docs/fidelity.md's "The damage matrix"): it lists every
file and every damage the issue names, every lab trial lands in a cell (or says why it plants no damage), a cell
that cannot mean anything is n/a, and the doc's section is the one the code renders."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafka_lab import damage as D
from kafka_lab import fidelity_doc, matrix
from kafka_ops.engine import checkpoints
from kafka_ops.engine.errors import EngineError
from tests.lab.test_fidelity import SCENARIOS

ROOT = Path(__file__).resolve().parents[1]

# issue 36 "What to build" §2, its words
ISSUE_FILES = {
    ".log": ("log_older", "log_active"), ".index": ("index_older", "index_active"),
    ".timeindex": ("timeindex_older", "timeindex_active"), ".txnindex": ("txnindex_older", "txnindex_active"),
    "producer snapshots": ("snapshot",), "leader-epoch-checkpoint": ("leader_epoch",),
    "partition.metadata": ("partition_metadata",), "recovery-point-offset-checkpoint": ("recovery_point",),
    "log-start-offset-checkpoint": ("log_start",), "replication-offset-checkpoint": ("replication",),
    "cleaner-offset-checkpoint": ("cleaner",), "meta.properties": ("meta_properties",),
    ".kafka_cleanshutdown": ("clean_shutdown",), ".lock": ("lock",), "metadata log segments": ("metadata_log",),
    ".checkpoint snapshots": ("metadata_snapshot",), "quorum-state": ("quorum_state",), ".deleted": ("deleted",),
    ".cleaned": ("cleaned",), ".swap": ("swap",), "-delete": ("delete_dir",), "-future": ("future_dir",),
    "-stray": ("stray_dir",),
}  # fmt: skip
ISSUE_DAMAGES = {
    "zero-filled", "truncated at 0", "truncated at 1 byte", "truncated mid-entry", "truncated mid-record", "garbage",
    "one bad entry", "entries out of order", "an entry past the end", "empty", "missing", "unreadable",
    "symlink (to a valid copy)", "dangling symlink", "FIFO", "directory",
}  # fmt: skip


def test_the_matrix_lists_every_file_and_damage_of_the_issue() -> None:
    assert {k for keys in ISSUE_FILES.values() for k in keys} == {f.key for f in matrix.FILES if f.issue}
    labels = {d.label for d in matrix.DAMAGES}
    assert ISSUE_DAMAGES <= labels and set(matrix.ISSUE_DAMAGES) == {
        d.key for d in matrix.DAMAGES if d.label in ISSUE_DAMAGES
    }
    assert matrix.FAMILIES == ("ZooKeeper", "KRaft < 3.7", "KRaft 3.7+")


def test_every_lab_trial_lands_in_a_cell_that_applies() -> None:
    unmapped = [t for t in SCENARIOS if matrix.cells_of(t) is None]
    assert unmapped == [], f"trials no cell of kafka_lab/matrix.py takes: {unmapped}"
    for t in SCENARIOS:
        for file, damage in matrix.cells_of(t) or ():
            assert any(matrix.applies(file, damage, fam) for fam in matrix.FAMILIES), (t, file, damage)
    # the names the other trials of issue 36 take, by their prefix
    assert matrix.cells_of("type-timeindex_older_fifo") == (("timeindex_older", "fifo"),)
    assert matrix.cells_of("type-lock_symlink_dangling") == (("lock", "symlink_dangling"),)
    assert matrix.cells_of("index-timeindex_active_past_end") == (("timeindex_active", "past_end"),)
    assert matrix.cells_of("log-rolled_truncated_1") == (("log_older", "truncated_1"),)
    assert matrix.cells_of("metadata-snapshot_garbage") == (("metadata_snapshot", "garbage"),)
    assert matrix.cells_of("type-no_such_file_fifo") is None


def test_cells_that_mean_nothing_are_n_a() -> None:
    assert not matrix.applies("recovery_point", "truncated_mid_record", "KRaft 3.7+")  # a text checkpoint
    assert matrix.applies("recovery_point", "out_of_order", "ZooKeeper")
    assert matrix.applies("lock", "garbage", "ZooKeeper")  # content-free: planted to show it is never read
    assert not matrix.applies("quorum_state", "missing", "ZooKeeper")  # no KRaft there
    assert not matrix.applies("clean_shutdown", "garbage", "KRaft < 3.7")  # its bytes are read from 3.7
    assert matrix.applies("clean_shutdown", "garbage", "KRaft 3.7+")


def test_a_cell_shows_agreement_unknown_or_not_planted() -> None:
    outcomes = {
        ("2.8.2", "type-lock_fifo"): matrix.Outcome(True),
        ("3.7.2", "type-lock_fifo"): matrix.Outcome(True, "whether the broker opens it: a FIFO"),
        ("3.5.2", "type-lock_fifo"): matrix.Outcome(False),
    }
    doc = matrix.render(["type-lock_fifo", "no_fault"], outcomes)
    lock = [x for x in doc.splitlines() if x.startswith("| `.lock` |")]
    fifo = 1 + [d.key for d in matrix.DAMAGES].index("fifo")
    assert [x.split(" | ")[fifo] for x in lock] == ["✅ 2.8.2", "❌ 3.5.2", "❔ 3.7.2"]
    assert "| not planted |" in lock[0] and "| n/a |" in lock[0]
    assert "- `type-lock_fifo` on 3.7.2: whether the broker opens it: a FIFO" in doc


def test_the_doc_section_is_current_with_the_code() -> None:
    doc = (ROOT / "docs" / "fidelity.md").read_text()
    assert "\n## The damage matrix\n" in doc
    assert fidelity_doc.refresh_matrix(doc, list(SCENARIOS)) == doc, (
        "docs/fidelity.md's damage matrix is stale: python -m kafka_lab.fidelity_doc --matrix docs/fidelity.md"
    )


def test_a_partial_lab_run_enters_the_table_and_the_matrix() -> None:
    """``--merge``: one release's type-* trial (a hang) gets its row and its matrix cell; other cells are kept."""
    doc = (ROOT / "docs" / "fidelity.md").read_text()
    ns = {"broker": "hangs", "reason": "x", "log_dirs": [], "segments": []}
    report = {
        "version": "3.5.2",
        "trials": {"type-lock_fifo": {"predicted": ns, "next_start": ns, "differences": [], "faults": []}},
    }
    merged = fidelity_doc.merge_rows(doc, [report])
    row = next(x for x in merged.splitlines() if x.startswith("| `type-lock_fifo` |"))
    assert "✅ **hangs** / **hangs**" in row and row.count("| – ") >= 3
    kraft_old = merged.partition("### KRaft < 3.7")[2].partition("###")[0]
    lock = next(x for x in kraft_old.splitlines() if x.startswith("| `.lock` |"))
    fifo = 1 + [d.key for d in matrix.DAMAGES].index("fifo")
    assert lock.split(" | ")[fifo] == "✅ 3.5.2"
    assert fidelity_doc.refresh_matrix(merged, list(SCENARIOS)) == merged


def test_a_re_run_that_agrees_drops_the_cells_old_difference() -> None:
    """A cell the plan got wrong, re-run after the model's fix: its ❌ and its Differences line go, others stay."""
    doc = (ROOT / "docs" / "fidelity.md").read_text()
    before, sep, rest = doc.partition("\n## Differences\n\n")
    old = [
        "- 3.7.2 `type-meta_properties_directory`: broker: predicted exits, broker did starts",
        "- 3.5.2 `type-meta_properties_directory`: broker: predicted exits, broker did starts",
    ]
    doc = before + sep + "\n".join(old) + "\n\n## " + rest.partition("\n\n## ")[2]
    ns = {"broker": "starts", "reason": None, "log_dirs": [], "segments": []}
    report = {
        "version": "3.7.2",
        "trials": {
            "type-meta_properties_directory": {
                "predicted": ns,
                "next_start": ns,
                "differences": [],
                "faults": [],
            }
        },
    }
    merged = fidelity_doc.merge_rows(doc, [report])
    diffs = merged.partition("\n## Differences\n\n")[2].partition("\n\n## ")[0]
    assert diffs.splitlines() == [old[1]]
    row = next(x for x in merged.splitlines() if x.startswith("| `type-meta_properties_directory` |"))
    assert "❌" not in row


def test_a_torn_first_byte_and_one_bad_entry_land_in_their_cells_in_make_lab_only() -> None:
    """The checkpoint damages an operator meets (issue 36 §2): the file torn after its first byte reads as no
    entries (CheckpointFile: no count line), one bad entry is the malformed line the broker refuses; each trial
    plants its cell and runs in `make lab` only (CI stays under its budget)."""
    from tests.lab.scenarios import CHECKPOINT_DAMAGE, CI_REPRESENTATIVES

    text = b"0\n2\nt00 0 200\nt02 0 300\n"
    assert D.one_byte(text) == b"0"
    assert D.bad_entry(text) == b"0\n2\nt00 0 200\nt02 0 30x\n"
    with pytest.raises(ValueError):
        D.bad_entry(b"0\n0\n")
    new = [f"checkpoint-{n}" for n in CHECKPOINT_DAMAGE if n.endswith(("_one_byte", "_bad_entry"))]
    assert len(new) == 9
    for t in new:
        damage = "truncated_1" if t.endswith("_one_byte") else "one_bad_entry"
        assert [d for _, d in matrix.cells_of(t) or ()] == [damage], t
        assert CI_REPRESENTATIVES[t] == (), t
    assert matrix.cells_of("checkpoint-recovery_point_one_byte") == (("recovery_point", "truncated_1"),)


def test_the_models_reader_on_a_torn_first_byte_and_one_bad_entry(tmp_path: Path) -> None:
    """What the plan reads of them: no entries (the broker's CheckpointFile returns an empty list without a count
    line), and the malformed line's error (its IOException: the dir offline, or the exit, per family)."""
    f = tmp_path / "recovery-point-offset-checkpoint"
    f.write_bytes(D.one_byte(b"0\n1\nt00 0 200\n"))
    assert checkpoints.read_offset_checkpoint(str(f)) == {}
    f.write_bytes(D.bad_entry(b"0\n1\nt00 0 200\n"))
    with pytest.raises(EngineError):
        checkpoints.read_offset_checkpoint(str(f))


def test_a_partial_run_whose_plan_said_unknown_enters_the_matrix_as_unknown() -> None:
    """The table shows ✅/❌ only: the plan's 'unknown' about the planted file reaches the matrix from the report
    (❔ and its reason), and stays there when the section is written again from the doc."""
    doc = (ROOT / "docs" / "fidelity.md").read_text()
    planted = "/x/data-1/meta.properties"
    ns = {"broker": "starts", "reason": None, "log_dirs": [], "segments": []}
    pred = dict(ns, unknown=[{"what": f"whether {planted} holds this broker's ids", "reason": "a link"}])
    report = {
        "version": "3.5.2",
        "trials": {
            "type-meta_properties_symlink": {
                "predicted": pred,
                "next_start": ns,
                "differences": [],
                "faults": [{"paths": [planted]}],
            }
        },
    }
    merged = fidelity_doc.merge_rows(doc, [report])
    kraft_old = merged.partition("### KRaft < 3.7")[2].partition("###")[0]
    meta = next(x for x in kraft_old.splitlines() if x.startswith("| `meta.properties` |"))
    symlink = 1 + [d.key for d in matrix.DAMAGES].index("symlink")
    assert meta.split(" | ")[symlink] == "❔ 3.5.2"
    assert "- `type-meta_properties_symlink` on 3.5.2: " in merged
    assert fidelity_doc.refresh_matrix(merged, list(SCENARIOS)) == merged
