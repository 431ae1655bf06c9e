"""What each lab version's broker does with faults that reach beyond one partition: a file the broker user
cannot open (one of two log dirs offline), every dir failing, ``lost+found``, a foreign ``meta.properties``,
and SIGKILL while a producer writes. Faults go into ``data-1``; ``data-0`` holds the KRaft metadata log.
"""

from __future__ import annotations

import re

import pytest

from kafka_lab.trial import TrialResult
from tests.lab.conftest import needs_root
from tests.lab.dataset import Dataset
from tests.lab.helpers import at_least, full_text, lines, skip_uncharacterised
from tests.lab.scenarios import OFFLINE_FAULTS, offline_target

pytestmark = pytest.mark.lab


@pytest.fixture(autouse=True)
def _characterised_release(dataset: Dataset) -> None:
    skip_uncharacterised(dataset.version)


# what the loader's exception names, per fault (every version: LogLoader/Log checks canRead, FileRecords opens
# the .log read-write, listing the partition dir's checkpoint fails)
OFFLINE_CAUSE = {
    "unreadable_timeindex": "java.io.IOException: Could not read file {pdir}/00000000000000000000.timeindex",
    "padded_timeindex_root_owned": "java.io.IOException: Could not read file {pdir}/00000000000000000000.timeindex",
    "read_only_log": "java.nio.file.AccessDeniedException: {pdir}/00000000000000000000.log",
    "root_owned_partition_dir": "java.nio.file.AccessDeniedException: {pdir}/leader-epoch-checkpoint",
}


def data_dir(r: TrialResult, name: str) -> str:
    return next(d["path"] for d in r.next_start["log_dirs"] if d["path"].endswith("/" + name))


@pytest.mark.parametrize("name", list(OFFLINE_FAULTS))
def test_one_of_two_log_dirs_offline(dataset: Dataset, trials: dict[str, TrialResult], name: str) -> None:
    """A file of one partition the broker user cannot open takes that whole log dir offline at load; the broker
    starts on the other dir. 3.5 (KRaft before JBOD support, 3.7) then recreates every partition of the
    offline dir, empty, in the healthy dir and serves it from offset 0; 2.8 (ZooKeeper) and 3.7+ keep those
    partitions offline."""
    needs_root()
    r = trials[f"offline-{name}"]
    d0, d1 = data_dir(r, "data-0"), data_dir(r, "data-1")
    assert r.next_start["broker"] == "starts" and r.broker_exit is None
    assert {d["path"]: d["state"] for d in r.next_start["log_dirs"]} == {d0: "online", d1: "offline"}
    in_d1 = [t for t, where in dataset.placement.items() if where == "data-1"]
    moved = [t for t in in_d1 if not t.startswith("__")]  # those with acknowledged records
    not_loaded = {
        f"{s['topic']}-{s['partition']}" for s in r.next_start["segments"] if s["load"] == "not_loaded"
    }
    assert not_loaded == set(in_d1)
    assert all(s["load"] != "not_loaded" or s["log"].startswith(d1 + "/") for s in r.next_start["segments"])
    pdir = f"{d1}/{offline_target(dataset)}-0"
    cause = OFFLINE_CAUSE[name].format(pdir=pdir)
    assert any(cause in t for t in full_text(r, rf"^Error while loading log dir {d1}$")), cause
    assert lines(r, rf"^Stopping serving logs in dir {d1}$")
    assert r.view is not None
    assert {d["path"]: d["error"] for d in r.view["log_dirs"]} == {d0: None, d1: "KafkaStorageError"}
    recreated = sorted(p.rsplit("/", 1)[1] for p in r.observation.created)
    if dataset.version.startswith("3.5"):
        assert set(moved) <= set(recreated) <= set(in_d1)
        assert all(p.startswith(d0 + "/") for p in r.observation.created)
        served = r.view["partitions"]
        assert all(served[t]["dir"] == d0 and served[t]["log_end"] == 0 for t in moved if t in served)
    else:
        assert recreated == []
        assert sorted(r.unreadable) == sorted(moved)


def test_start_after_the_offline_dir_is_repaired(dataset: Dataset, trials: dict[str, TrialResult]) -> None:
    """The next start once the file is readable again: 3.5 finds each partition it recreated in data-0 also in
    data-1 and exits (1) with "Duplicate log directories"; 2.8 and 3.7+ load data-1 again and lose nothing."""
    r = trials["offline_then_repaired"]
    d0, d1 = data_dir(r, "data-0"), data_dir(r, "data-1")
    if dataset.version.startswith("3.5"):
        assert r.next_start["broker"] == "exits" and r.broker_exit == 1
        a, b = re.escape(d0), re.escape(d1)  # the order of the two depends on which loader thread ends first
        dup = re.escape("java.lang.IllegalStateException: Duplicate log directories for ") + (
            rf"(\S+) are found in both (?:{a}/\1 and {b}/\1|{b}/\1 and {a}/\1)\."
        )
        assert re.search(dup, r.next_start["reason"]), r.next_start["reason"]
    else:
        assert r.next_start["broker"] == "starts" and r.broker_exit is None
        assert [d["state"] for d in r.next_start["log_dirs"]] == ["online", "online"]
        assert r.lost == {} and r.read_errors == {} and r.unreadable == []


def test_all_log_dirs_offline(dataset: Dataset, trials: dict[str, TrialResult]) -> None:
    """An unreadable file in each dir: the broker exits with 1. From 3.7 (JBOD in KRaft) the loss of the
    metadata log's dir (data-0) races the loss of the last dir: either line may come first (both were seen on
    3.7.2 and 3.9.1; 4.3.1 named the metadata dir every time)."""
    needs_root()
    r = trials["all_dirs_offline"]
    assert r.next_start["broker"] == "exits" and r.broker_exit == 1 and not r.start.started
    assert [d["state"] for d in r.next_start["log_dirs"]] == ["offline", "offline"]
    d0, d1 = data_dir(r, "data-0"), data_dir(r, "data-1")
    all_failed = f"Shutdown broker because all log dirs in {d0}, {d1} have failed"
    metadata_failed = (
        f"[ReplicaManager broker=1] Shutdown broker because the metadata log dir {d0} has failed"
    )
    if at_least(dataset.version, (3, 7)):
        assert r.next_start["reason"] in (all_failed, metadata_failed)
    else:
        assert r.next_start["reason"] == all_failed
    assert {s["load"] for s in r.next_start["segments"]} == {"not_loaded"}


def test_lost_and_found(dataset: Dataset, trials: dict[str, TrialResult]) -> None:
    """``lost+found`` in a log dir root kills the broker at load (exit 1), in every version."""
    r = trials["lost_and_found"]
    d1 = data_dir(r, "data-1")
    assert r.next_start["broker"] == "exits" and r.broker_exit == 1
    found = (
        f"org.apache.kafka.common.KafkaException: Found directory {d1}/lost+found, 'lost+found' is not in the form "
        "of topic-partition or topic-partition.uniqueId-delete (if marked for deletion)."
    )
    if not dataset.kraft:  # the ZooKeeper-mode releases (2.8, 3.2) log these lines
        assert (
            r.next_start["reason"]
            == f"[KafkaServer id=1] Fatal error during KafkaServer startup. Prepare to shutdown: {found}"
        )
    else:
        assert r.next_start["reason"] == f"Encountered fatal fault: Error starting LogManager: {found}"
    assert [d["state"] for d in r.next_start["log_dirs"]] == ["online", "online"]


def test_meta_properties_of_another_cluster(dataset: Dataset, trials: dict[str, TrialResult]) -> None:
    """One log dir's meta.properties naming another cluster.id: the broker exits (1) before loading any log."""
    r = trials["meta_mismatch"]
    d1 = data_dir(r, "data-1")
    assert r.next_start["broker"] == "exits" and r.broker_exit == 1
    reason = r.next_start["reason"]
    if at_least(dataset.version, (3, 7)):
        assert reason.startswith(
            f"Exiting Kafka due to fatal exception: java.lang.RuntimeException: Invalid cluster.id in: {d1}/meta.properties. Expected "
        ) and reason.endswith(", but read AAAAAAAAAAAAAAAAAAAAAA")
    elif not dataset.kraft:  # the ZooKeeper-mode releases (2.8, 3.2) log these lines
        assert reason.startswith(
            "Fatal error during KafkaServer startup. Prepare to shutdown: kafka.common.InconsistentBrokerMetadataException: "
            "BrokerMetadata is not consistent across log.dirs."
        )
    else:
        assert reason.startswith(
            "Exiting Kafka due to fatal exception: kafka.common.InconsistentBrokerMetadataException: "
            "BrokerMetadata is not consistent across log.dirs."
        )
    assert {s["load"] for s in r.next_start["segments"]} == {"not_loaded"}


def test_sigkill_while_producing(dataset: Dataset, trials: dict[str, TrialResult]) -> None:
    """SIGKILL mid-stream, then a restart: every dir is recovered from its last recovery-point checkpoint (the
    written partition from before its first segment of this run) and every acknowledged record reads back. A kill
    inside a write() may leave the last batch torn (Linux ends a regular file's write early on a fatal signal):
    recovery then truncates it, in the written topic only, and deletes nothing that was acknowledged (the
    fidelity test holds the plan to the same bytes; a CI run saw such a tail on 3.7.2 once)."""
    r = trials["sigkill"]
    (f,) = r.faults
    assert f.detail["acked_while_killed"] > 0
    assert r.next_start["broker"] == "starts"
    assert r.lost == {} and r.read_errors == {}
    topic = f.detail["topic"]
    odd = [
        s
        for s in r.next_start["segments"]
        if not (s["load"] == "recovered" and (s["truncated_bytes"] == 0 or s["topic"] == topic))
        and not (s["topic"] == topic and s.get("deleted_by") == "recovery")
    ]
    assert odd == [], odd
    assert len([s for s in r.next_start["segments"] if s["topic"] == topic]) > 1
    recover = (
        r"Attempting recovery for all logs in "
        if not dataset.kraft  # ZooKeeper mode (2.8, 3.2)
        else r"Recovering \d+ logs from "
    )
    assert len(lines(r, recover + r"\S+ since no clean shutdown file was found")) == 2


@pytest.mark.parametrize("name", ["meta_missing", "dir_emptied", "dir_missing", "meta_copied"])
def test_a_log_dir_without_its_own_meta_properties(
    dataset: Dataset, trials: dict[str, TrialResult], name: str
) -> None:
    """data-1 lost its meta.properties (partitions kept), came back empty, is gone, or carries data-0's file. KRaft
    exits at start for the first three ("No `meta.properties` found": KafkaRaftServer.initializeLogDirs), and from
    3.7 for the copy too (the same directory.id twice); ZooKeeper mode writes a new file (or creates the dir) and
    starts; a copy before 3.7 is the same file twice and starts. The plan said so before the start (the fidelity
    test compares the rest)."""
    if name not in trials:
        pytest.skip(f"{name} not run")
    r = trials[name]
    assert r.predicted is not None
    d1 = data_dir(r, "data-1")
    exits = dataset.kraft and (name != "meta_copied" or at_least(dataset.version, (3, 7)))
    if exits:
        assert r.predicted["broker"] == "exits" and r.next_start["broker"] == "exits", (
            r.predicted,
            r.log[-800:],
        )
        assert r.broker_exit not in (None, 0)
        reason = r.next_start["reason"]
        if name == "meta_copied":
            assert "Duplicate directory ID" in reason, reason
        else:
            assert f"No `meta.properties` found in {d1}" in reason, reason
        assert ("DIR002", "critical") in r.predicted_findings, r.predicted_findings
    else:
        assert r.predicted["broker"] == "starts" and r.next_start["broker"] == "starts", (
            r.predicted,
            r.log[-800:],
        )
