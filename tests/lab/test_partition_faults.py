"""What each lab version's broker does at start with a per-partition fault: the ground truth for the model.

Every fault lives in its own target topic of one broker run per version, run twice: ``clean`` (markers kept)
and ``unclean`` (markers removed, as after SIGKILL; the recovery-point checkpoints are the clean stop's, so
recovery re-reads each partition's active segment only). Both runs set ``log.retention.ms`` to one day and wait
for the first retention check. Observed on 2.8.2 (ZooKeeper), 3.5.2, 3.7.2, 3.9.1, 4.3.1 (KRaft): every version
behaves alike here; only the log wording differs (tests/lab/OBSERVED.md).
"""

from __future__ import annotations

import re

import pytest

from kafka_lab.trial import TrialResult
from tests.lab.dataset import RETENTION_MS, RETENTION_TOPIC, Dataset
from tests.lab.helpers import (
    acked_before,
    acked_from,
    at_least,
    bases,
    changes,
    fault,
    lines,
    listed,
    max_timestamps,
    skip_uncharacterised,
)
from tests.lab.scenarios import CONTROL, SWAP_TARGET, TARGET_OF

pytestmark = pytest.mark.lab


@pytest.fixture(autouse=True)
def _characterised_release(dataset: Dataset) -> None:
    skip_uncharacterised(dataset.version)


RUNS = ("clean", "unclean")


def only_active_recovered(ds: Dataset, r: TrialResult, topic: str, *, ignore: tuple[int, ...] = ()) -> None:
    """Nothing else of ``topic`` is listed: after the unclean run its active segment was re-read, as is."""
    got = {b: s for b, s in listed(r, topic).items() if b not in ignore}
    if r.name == "clean":
        assert got == {}
    else:
        active = bases(ds, topic)[-1]
        assert set(got) == {active}
        assert got[active]["load"] == "recovered" and got[active]["truncated_bytes"] == 0


@pytest.mark.parametrize("run", RUNS)
def test_padded_timeindex_segment_deleted_by_retention(
    dataset: Dataset, trials: dict[str, TrialResult], run: str
) -> None:
    """A rolled segment whose .timeindex kept its 10 MiB of zeros loads as is (no sanity check at load since
    2.3, and it lies below the recovery point), its largest timestamp reads as 0, and the first retention
    check deletes it: the records in it are gone although retention.ms (one day) did not pass for them."""
    r, topic = trials[run], TARGET_OF["padded_timeindex"]
    seg = listed(r, topic)[0]
    assert seg["load"] == "as_is" and seg["truncated_bytes"] == 0
    assert seg["deleted_by"] == "retention.ms" and seg["deleted_at"]
    only_active_recovered(dataset, r, topic, ignore=(0,))
    if at_least(dataset.version, (3, 7)):
        want = r"due to log retention time 86400000ms breach based on the largest record timestamp"
        stamp = "largestRecordTimestamp=0)"
    else:
        want = r"due to retention time 86400000ms breach based on the largest record timestamp"
        stamp = "largestRecordTimestamp=Some(0))"
    (line,) = lines(r, r"Deleting segment LogSegment\(baseOffset=0,", f"{topic}-0")
    assert re.search(want, line) and stamp in line
    second = bases(dataset, topic)[1]
    assert (r.lost or {})[f"{topic}-0"] == acked_before(dataset, topic, second)


@pytest.mark.parametrize("run", RUNS)
def test_padded_timeindex_behind_an_unexpired_segment_is_kept(
    dataset: Dataset, trials: dict[str, TrialResult], run: str
) -> None:
    """The same padding on the second segment: retention walks from the oldest segment and stops at the first
    one it keeps, so the padded one survives (until every segment before it has expired)."""
    r, topic = trials[run], TARGET_OF["padded_timeindex_second"]
    only_active_recovered(dataset, r, topic)
    assert f"{topic}-0" not in (r.lost or {}) and f"{topic}-0" not in r.read_errors
    assert not lines(r, r"Deleting segment", f"{topic}-0")


@pytest.mark.parametrize("run", RUNS)
def test_padded_offset_index_is_harmless(dataset: Dataset, trials: dict[str, TrialResult], run: str) -> None:
    """An untrimmed .index on a rolled segment: loaded as is, kept, and every record reads back."""
    r, topic = trials[run], TARGET_OF["padded_index"]
    only_active_recovered(dataset, r, topic)
    assert f"{topic}-0" not in (r.lost or {}) and f"{topic}-0" not in r.read_errors


@pytest.mark.parametrize("run", RUNS)
def test_torn_tail(dataset: Dataset, trials: dict[str, TrialResult], run: str) -> None:
    """Garbage after the last batch of the active segment: kept as is after a clean stop (no recovery, the
    consumer never sees it); after an unclean stop recovery truncates exactly the garbage."""
    r, topic = trials[run], TARGET_OF["torn_tail"]
    f = fault(r, "torn_tail")
    active = f.detail["base_offset"]
    if run == "clean":
        assert listed(r, topic) == {}
    else:
        seg = listed(r, topic)[active]
        assert seg["load"] == "recovered" and seg["truncated_bytes"] == f.detail["garbage_bytes"]
        end = acked_from(dataset, topic, 0)[-1] + 1  # the log end offset: nothing valid was cut
        assert lines(r, rf"Corruption found in segment {active}, truncating to offset {end}$", f"{topic}-0")
    assert f"{topic}-0" not in (r.lost or {}) and f"{topic}-0" not in r.read_errors


def test_zero_filled_tail(dataset: Dataset, trials: dict[str, TrialResult]) -> None:
    """A power loss's zero-filled tail after the active segment's last batch. After an unclean stop recovery
    truncates exactly the zeros and nothing acknowledged is lost. After a clean stop nothing recovers the segment:
    readNextOffset reads into the zeros, CorruptRecordException ends the log loading and the broker exits; the
    audit said so before the start (SHUT002 critical, the plan: exits)."""
    r, topic = trials["unclean"], SWAP_TARGET
    f = fault(r, "zero_filled_tail")
    seg = listed(r, topic)[int(f.detail["base_offset"])]  # type: ignore[call-overload]
    assert seg["load"] == "recovered" and seg["truncated_bytes"] == f.detail["zero_bytes"]
    assert f"{topic}-0" not in (r.lost or {}) and f"{topic}-0" not in r.read_errors
    z = trials["zero_tail"]
    assert z.predicted is not None and z.predicted["broker"] == "exits"
    assert ("SHUT002", "critical") in z.predicted_findings
    assert z.next_start["broker"] == "exits" and z.broker_exit not in (None, 0), z.next_start
    assert "smaller than minimum record overhead" in str(z.next_start["reason"]), z.next_start["reason"]


@pytest.mark.parametrize("run", RUNS)
def test_corrupt_batch_in_active_segment(dataset: Dataset, trials: dict[str, TrialResult], run: str) -> None:
    """A batch failing its CRC in the middle of the active segment. Clean stop: loaded as is, served as is (the
    consumer's CRC check fails there). Unclean stop: recovery truncates the segment at that batch and every
    acknowledged record from it on is gone."""
    r, topic = trials[run], TARGET_OF["corrupt_batch_active"]
    f = fault(r, "corrupt_batch_active")
    active, bad = f.detail["base_offset"], f.detail["batch_base_offset"]
    gone = acked_from(dataset, topic, bad)  # type: ignore[arg-type]
    if run == "clean":
        assert listed(r, topic) == {}
        assert f"offset {bad} failed crc check" in r.read_errors[f"{topic}-0"]
    else:
        seg = listed(r, topic)[active]
        assert seg["load"] == "recovered"
        assert seg["truncated_bytes"] == f.detail["log_bytes"] - f.detail["batch_position"]  # type: ignore[operator]
        assert lines(r, rf"Corruption found in segment {active}, truncating to offset {bad}$", f"{topic}-0")
        assert f"{topic}-0" not in r.read_errors
    assert (r.lost or {})[f"{topic}-0"] == gone


@pytest.mark.parametrize("run", RUNS)
def test_corrupt_batch_in_rolled_segment(dataset: Dataset, trials: dict[str, TrialResult], run: str) -> None:
    """A corrupt batch below the recovery point is never re-read at start, clean or not: the broker serves it
    and the consumer stops at its CRC failure."""
    r, topic = trials[run], TARGET_OF["corrupt_batch_rolled"]
    bad = fault(r, "corrupt_batch_rolled").detail["batch_base_offset"]
    only_active_recovered(dataset, r, topic)
    assert f"offset {bad} failed crc check" in r.read_errors[f"{topic}-0"]


@pytest.mark.parametrize("run", RUNS)
def test_deleted_indexes_are_rebuilt(dataset: Dataset, trials: dict[str, TrialResult], run: str) -> None:
    """A rolled segment without .index/.timeindex: "Could not find offset index file" (ERROR), recovered and
    both indexes rebuilt, after a clean stop and below the recovery point alike."""
    r, topic = trials[run], TARGET_OF["deleted_indexes"]
    seg = listed(r, topic)[0]
    assert seg["load"] == "indexes_rebuilt" and seg["truncated_bytes"] == 0 and seg["deleted_by"] is None
    (line,) = lines(r, r"Could not find offset index file corresponding to log file", f"{topic}-0")
    assert line.startswith("ERROR ") and line.endswith(
        f"/{topic}-0/00000000000000000000.log, recovering segment and rebuilding index files..."
    )
    c = changes(r, f"{topic}-0", 0)
    assert c[".index"][0] is None and c[".index"][1] > 0
    assert c[".timeindex"][0] is None and c[".timeindex"][1] > 0
    only_active_recovered(dataset, r, topic, ignore=(0,))


@pytest.mark.parametrize("run", RUNS)
def test_deleted_timeindex_is_recreated_empty(
    dataset: Dataset, trials: dict[str, TrialResult], run: str
) -> None:
    """Only the .timeindex missing: no log line, no rebuild; the broker creates an empty .timeindex (so the
    segment's largest timestamp falls back to the .log's mtime)."""
    r, topic = trials[run], TARGET_OF["deleted_timeindex"]
    only_active_recovered(dataset, r, topic)
    assert changes(r, f"{topic}-0", 0) == {".timeindex": [None, 0, True]}
    assert not lines(r, r"index", f"{topic}-0")


@pytest.mark.parametrize("run", RUNS)
def test_misaligned_index_is_trimmed_not_rebuilt(
    dataset: Dataset, trials: dict[str, TrialResult], run: str
) -> None:
    """A .index of 8n+3 bytes: no sanity check at load, loaded as is; the 3 stray bytes go when the (lazily
    opened) index is closed and trimmed to its whole entries."""
    r, topic = trials[run], TARGET_OF["misaligned_index"]
    only_active_recovered(dataset, r, topic)
    size = fault(r, "misaligned_index").detail["size"]
    assert changes(r, f"{topic}-0", 0) == {".index": [size, size - 3, True]}  # type: ignore[operator]
    assert f"{topic}-0" not in (r.lost or {}) and f"{topic}-0" not in r.read_errors


@pytest.mark.parametrize("run", RUNS)
def test_untouched_partition(dataset: Dataset, trials: dict[str, TrialResult], run: str) -> None:
    r = trials[run]
    only_active_recovered(dataset, r, CONTROL)
    assert f"{CONTROL}-0" not in (r.lost or {})


@pytest.mark.parametrize("run", RUNS)
def test_time_retention(dataset: Dataset, trials: dict[str, TrialResult], run: str) -> None:
    """Records two days old under log.retention.ms of one day: the first retention check deletes, oldest first,
    every segment whose largest timestamp is older than that, and stops at the first newer one."""
    r = trials[run]
    ts = max_timestamps(dataset, RETENTION_TOPIC)
    old = [b for b in sorted(ts)[:-1] if ts[b] < dataset.old_ms + 1000]
    assert old, ts
    got = listed(r, RETENTION_TOPIC)
    deleted = sorted(b for b, s in got.items() if s["deleted_by"])
    assert deleted == old
    assert all(got[b]["deleted_by"] == "retention.ms" and got[b]["load"] == "as_is" for b in old)
    first = bases(dataset, RETENTION_TOPIC)[len(old)]
    assert r.lost is not None
    assert r.lost[f"{RETENTION_TOPIC}-0"] == acked_before(dataset, RETENTION_TOPIC, first)
    assert lines(r, rf"Incremented log start offset to {first} due to", f"{RETENTION_TOPIC}-0")
    assert RETENTION_MS == 86_400_000


def test_clean_and_unclean_dir_lines(dataset: Dataset, trials: dict[str, TrialResult]) -> None:
    """The per-dir line that says whether a dir is recovered (marker absent) or not."""
    clean, unclean = trials["clean"], trials["unclean"]
    if not dataset.kraft:  # the ZooKeeper-mode releases (2.8, 3.2) log these lines
        skip, recover = r"Skipping recovery for all logs in ", r"Attempting recovery for all logs in "
    else:
        skip, recover = r"Skipping recovery of \d+ logs from ", r"Recovering \d+ logs from "
    assert len(lines(clean, skip + r"\S+ since clean shutdown file was found")) == 2
    assert len(lines(unclean, recover + r"\S+ since no clean shutdown file was found")) == 2
    assert not lines(clean, r"Recovering unflushed segment", f"{TARGET_OF['torn_tail']}-0")


@pytest.mark.parametrize("run", RUNS)
def test_corrupt_batch_behind_the_recovery_point_zero(
    dataset: Dataset, trials: dict[str, TrialResult], run: str
) -> None:
    """A corrupt batch in the second segment of a partition whose recovery point is 0. Clean stop: nothing is
    re-read. Unclean stop: recovery reads from the first segment, truncates the second at the bad batch, and
    deletes every later segment (LogLoader.recoverLog: "Corruption found in segment", then the rest of the
    unflushed segments go)."""
    r, topic = trials[run], TARGET_OF["corrupt_batch_behind_recovery"]
    f = fault(r, "corrupt_batch_behind_recovery")
    second, bad = f.detail["base_offset"], f.detail["batch_base_offset"]
    got = listed(r, topic)
    if run == "clean":
        assert got == {}
        return
    all_bases = bases(dataset, topic)
    assert got[second]["load"] == "recovered"
    assert got[second]["truncated_bytes"] == f.detail["log_bytes"] - f.detail["batch_position"]  # type: ignore[operator]
    later = [b for b in all_bases if b > second]  # type: ignore[operator]
    assert later and all(got[b]["deleted_by"] == "recovery" for b in later), got
    assert lines(r, rf"Corruption found in segment {second}, truncating to offset {bad}$", f"{topic}-0")
