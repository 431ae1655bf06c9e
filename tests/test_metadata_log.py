"""The KRaft metadata log dir's own files at the next start (broker.metadata_log, DIR007; issue 36 §2), on damaged
copies of the corpus's real KRaft hosts (shared/corpus is read-only: each test copies one). What each release does
is the lab's (tests/lab METADATA_DAMAGE, docs/fidelity.md "The KRaft metadata log's damage"): bootstrap.checkpoint,
the metadata log's partition.metadata and leader-epoch-checkpoint that do not read make every KRaft release exit; a
damaged latest snapshot makes 3.6+ exit (its listeners read it at their start), 3.8+ on every role; the log's own
segments are recovered at every start. The topic configs read from a damaged copy say what they rest on."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from kafka_ops.audit import run_audit
from kafka_ops.facts.collect import gather
from kafka_ops.facts.model import AuditOptions

from .conftest import CORPUS, NOW_MS

pytestmark = pytest.mark.skipif(not (CORPUS / "README.md").is_file(), reason="corpus not present")

ITUMELENG = "ItumelengMogase__Real-Time-Data-Pipeline-for-Patient-Admissions/kafka-data"  # snapshots, no .log
DANIEL_350 = "Danielowo2000__BigDataTechnologies-Version-2/kafka_2.13-3.5.0/kraft-combined-logs"  # log from 0
DANIEL_DATA = "Danielowo2000__BigDataTechnologies-Version-2/kafka_data"  # log from 0, two snapshots
MP = "__cluster_metadata-0"


def copy(rel: str, tmp: Path) -> Path:
    dst = tmp / "d"
    shutil.copytree(CORPUS / rel, dst, symlinks=True)
    for root, dirs, files in os.walk(dst):
        for n in dirs + files:
            os.chmod(os.path.join(root, n), 0o755 if n in dirs else 0o644)
    os.chmod(dst, 0o755)
    return dst


def write(path: Path, data: bytes) -> None:
    path.write_bytes(data)


def audit(d: Path, version: str, roles: str = "broker,controller") -> dict[str, Any]:
    """The audit of a stopped node whose server.properties names ``d`` as its only log dir (the metadata log dir)."""
    props = d.parent / "server.properties"
    props.write_text(f"process.roles={roles}\nnode.id=1\nlog.dirs={d}\ncontroller.quorum.voters=1@h:9093\n")
    return run_audit(
        AuditOptions(
            server_properties=str(props), broker_state="stopped", now_ms=NOW_MS, kafka_version=version,
            expected_mounts={str(d): "/"},
        )
    )  # fmt: skip


def metadata_files(report: dict[str, Any]) -> list[tuple[str, str]]:
    return [(m["file"], m["fate"]) for m in report["next_start"]["metadata_log"]]


def latest_snapshot(d: Path) -> Path:
    return sorted((d / MP).glob("*.checkpoint"))[-1]


GARBAGE = b"\x7fELF\x02\x01\x01\x00" + bytes(range(200, 256)) * 2


@pytest.mark.parametrize("damage", ["zero_filled", "garbage", "empty", "first_batch_cut"])
def test_a_bootstrap_checkpoint_that_does_not_read_stops_every_kraft_release(
    tmp_path: Path, damage: str
) -> None:
    """The lab's 3.7.2: 'CorruptRecordException: Found record size 0 ... in file .../bootstrap.checkpoint' (zeros,
    garbage), 'No FeatureLevelRecord for metadata.version was found in the bootstrap metadata' (empty); a cut that
    leaves the batch with the FeatureLevelRecord whole started (the file's last batch lost)."""
    d = copy(ITUMELENG, tmp_path)
    good = (d / "bootstrap.checkpoint").read_bytes()
    assert metadata_files(audit(d, "3.7.2")) == []
    write(d / "bootstrap.checkpoint", {
        "zero_filled": bytes(len(good)), "garbage": GARBAGE, "empty": b"", "first_batch_cut": good[:40],
    }[damage])  # fmt: skip
    for version in ("3.5.2", "3.7.2", "4.1.1"):
        r = audit(d, version)
        ns = r["next_start"]
        assert (ns["broker"], ns["check"]) == ("exits", "DIR007"), (version, ns["reason"])
        assert metadata_files(r) == [("bootstrap.checkpoint", "exits")]
        [f] = [f for f in r["findings"] if f["check"] == "DIR007"]
        assert (
            f["severity"] == "critical" and "BootstrapDirectory" in f["message"] and "mv " in f["remediation"]
        )
        # the exit comes before the raft client: the quorum-state is not said to be read
        assert ns["quorum_state"] is None


def test_a_bootstrap_checkpoint_cut_in_its_last_batch_still_reads(tmp_path: Path) -> None:
    d = copy(ITUMELENG, tmp_path)
    good = (d / "bootstrap.checkpoint").read_bytes()
    write(d / "bootstrap.checkpoint", good + good[:30])  # a partial batch after the whole ones: read past
    assert metadata_files(audit(d, "4.1.1")) == []


@pytest.mark.parametrize(
    ("name", "data", "said"),
    [
        ("partition.metadata", GARBAGE, "does not read as the metadata topic's id"),
        ("partition.metadata", b"", "does not read as the metadata topic's id"),
        (
            "partition.metadata",
            b"version: 0\ntopic_id: q83vEjRWeJCPIZ1yVf3lZw\n",
            "InconsistentTopicIdException",
        ),
        ("leader-epoch-checkpoint", bytes(16), "LeaderEpochFileCache"),
    ],
    ids=["pm_garbage", "pm_empty", "pm_other_id", "epochs_zero_filled"],
)
def test_the_metadata_logs_own_checkpoints_stop_every_kraft_release(
    tmp_path: Path, name: str, data: bytes, said: str
) -> None:
    """KafkaMetadataLog.apply reads them with its own LogDirFailureChannel: nobody catches the exception (the lab's
    3.7.2: 'Got exception while starting SharedServer ... KafkaStorageException: Error while reading partition
    metadata file', NullPointerException for an empty one). Not a dir offline, as for another partition."""
    d = copy(DANIEL_DATA, tmp_path)
    write(d / MP / name, data)
    for version in ("3.5.2", "3.7.2", "4.1.1"):
        r = audit(d, version)
        ns = r["next_start"]
        assert (ns["broker"], ns["check"]) == ("exits", "DIR007"), (version, ns["reason"])
        assert said in ns["reason"] and {x["state"] for x in ns["log_dirs"]} == {"online"}
        assert metadata_files(r) == [(name, "exits")]


def test_a_damaged_latest_snapshot_by_release_and_role(tmp_path: Path) -> None:
    """3.8+: KafkaRaftClient.initialize reads it (every role); 3.6-3.7: the listeners at their start (fatal on a
    controller: the lab's 3.7.2 'Unhandled fault in MetadataLoader#handleLoadSnapshot'; a broker-only node:
    unknown); 3.5 with the log from offset 0: not read."""
    d = copy(DANIEL_350, tmp_path)
    snap = latest_snapshot(d)
    write(snap, bytes(snap.stat().st_size))
    assert metadata_files(audit(d, "4.1.1", "broker")) == [("snapshot", "exits")]
    assert audit(d, "4.1.1", "broker")["next_start"]["broker"] == "exits"
    r = audit(d, "3.7.2", "broker,controller")
    assert r["next_start"]["broker"] == "exits" and metadata_files(r) == [("snapshot", "exits")]
    r = audit(d, "3.7.2", "broker")
    assert r["next_start"]["broker"] == "starts" and metadata_files(r) == [("snapshot", "depends")]
    assert [u for u in r["next_start"]["unknown"] if str(snap) in u["what"]]
    r = audit(d, "3.5.2", "broker,controller")
    assert r["next_start"]["broker"] == "starts" and metadata_files(r) == [("snapshot", "starts")]
    [f] = [f for f in r["findings"] if f["check"] == "DIR007"]
    assert f["severity"] == "warning"


def test_an_empty_latest_snapshot_has_no_header_for_the_listeners(tmp_path: Path) -> None:
    """The lab's 3.7.2: an empty snapshot throws NoSuchElementException in the metadata loader (no header)."""
    d = copy(DANIEL_350, tmp_path)
    write(latest_snapshot(d), b"")
    assert metadata_files(audit(d, "3.7.2", "broker,controller")) == [("snapshot", "exits")]


def test_a_snapshot_past_the_log_end_is_read_on_3_5_too(tmp_path: Path) -> None:
    """No segment: KafkaMetadataLog.truncateToLatestSnapshot starts the log at the latest snapshot, which the
    listeners then read at their start on every release."""
    d = copy(ITUMELENG, tmp_path)
    snap = latest_snapshot(d)
    write(snap, bytes(snap.stat().st_size))
    r = audit(d, "3.5.2", "broker,controller")
    assert r["next_start"]["broker"] == "exits" and metadata_files(r) == [("snapshot", "exits")]


def test_a_log_that_starts_above_every_snapshot_stops_the_start(tmp_path: Path) -> None:
    d = copy(DANIEL_350, tmp_path)
    for s in (d / MP).glob("*.checkpoint"):
        s.unlink()
    for p in (d / MP).glob("00000000000000000000.*"):
        p.rename(p.with_name(f"{17000:020d}{p.suffix}"))
    r = audit(d, "3.7.2", "broker,controller")
    assert r["next_start"]["broker"] == "exits" and "Inconsistent snapshot state" in r["next_start"]["reason"]


# ------------------------------------------------------------------------ the topic configs of a damaged copy


def test_configs_pass_over_a_damaged_snapshot_for_the_one_before_and_say_so(tmp_path: Path) -> None:
    d = copy(DANIEL_DATA, tmp_path)
    want = gather(AuditOptions(log_dirs=[str(d)], broker_state="stopped", now_ms=NOW_MS)).configs.topics
    snap = latest_snapshot(d)
    write(snap, bytes(snap.stat().st_size))
    r = audit(d, "3.7.2")
    h = gather(AuditOptions(log_dirs=[str(d)], broker_state="stopped", now_ms=NOW_MS))
    assert h.configs.topics == want  # the older snapshot, then the log: the same state
    notes = " ".join(r["inputs"]["topic_configs"]["notes"])
    assert snap.name in notes and "passed over" in notes
    assert r["next_start"]["config_note"] is None


def test_configs_of_a_copy_with_no_readable_snapshot_and_no_log_from_0_are_not_guessed(
    tmp_path: Path,
) -> None:
    """Every snapshot zero-filled, no segment from offset 0: nothing says what the topics' overrides are: the
    report says the broker's defaults are assumed, next to each prediction (config_note), never silently."""
    d = copy(ITUMELENG, tmp_path)
    for s in (d / MP).glob("*.checkpoint"):
        write(s, bytes(s.stat().st_size))
    r = audit(d, "3.7.2")
    assert r["next_start"]["config_note"] and "no snapshot" in r["next_start"]["config_note"]
    assert r["inputs"].get("topic_configs", {}).get("source") != "KRaft metadata log"
