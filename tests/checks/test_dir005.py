"""DIR005: checkpoints the broker cannot parse, and the next-start plan that follows the same rule."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kafka_ops.audit import run_audit
from kafka_ops.facts.model import AuditOptions
from kafka_ops.simulator.host import HostSpec, SimulatedHost, TopicSpec, simulate_host

from ..conftest import NOW_MS


def sim(root: Path) -> SimulatedHost:
    return simulate_host(
        str(root),
        HostSpec(now_ms=NOW_MS, topics=[TopicSpec("orders", partitions=2, records_per_partition=100)]),
    )


def audit(h: SimulatedHost, version: str | None = "3.9.1", **kw: object) -> dict:  # type: ignore[type-arg]
    return run_audit(
        AuditOptions(
            server_properties=h.server_properties,
            broker_state="stopped",
            now_ms=NOW_MS,
            kafka_version=version,
            **kw,  # type: ignore[arg-type]
        )
    )


def dir005(report: dict) -> list[dict]:  # type: ignore[type-arg]
    return [f for f in report["findings"] if f["check"] == "DIR005"]


def states(report: dict) -> dict[str, tuple[str, str | None]]:  # type: ignore[type-arg]
    return {d["path"]: (d["state"], d["check"]) for d in report["next_start"]["log_dirs"]}


ZEROS = bytes(64)
HALF = b"0\n2\norders 0 4"  # two entries announced, the first cut
GARBAGE = b"\x7fELF\x02\x01\x01\x00" + bytes(range(200, 256))


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("log-start-offset-checkpoint", ZEROS),
        ("replication-offset-checkpoint", HALF),
        ("cleaner-offset-checkpoint", GARBAGE),
    ],
)
def test_a_damaged_log_dir_checkpoint_takes_the_dir_offline(
    tmp_path: Path, name: str, content: bytes
) -> None:
    h = sim(tmp_path / "h")
    one, two = sorted(h.log_dirs)
    with open(os.path.join(two, name), "wb") as f:
        f.write(content)
    report = audit(h)
    [f] = dir005(report)
    assert (f["severity"], f["path"], f["log_dir"]) == ("error", os.path.join(two, name), two)
    assert "the dir goes offline right after the start" in f["message"]
    assert f"'Error while reading checkpoint file {two}/{name}'" in f["message"]
    assert states(report) == {one: ("online", None), two: ("offline", "DIR005")}
    assert report["next_start"]["broker"] == "starts"
    # the fix the finding gives: moved aside, the broker creates it empty and the dir stays online
    os.rename(os.path.join(two, name), tmp_path / "aside")
    report = audit(h)
    assert dir005(report) == [] and states(report)[two] == ("online", None)


def test_an_empty_checkpoint_is_fine(tmp_path: Path) -> None:
    h = sim(tmp_path / "h")
    for d in h.log_dirs:
        for name in (
            "log-start-offset-checkpoint",
            "replication-offset-checkpoint",
            "cleaner-offset-checkpoint",
        ):
            open(os.path.join(d, name), "wb").close()  # CheckpointReadBuffer: no line, no entries
    report = audit(h)
    assert dir005(report) == [] and {s for s, _ in states(report).values()} == {"online"}


def test_unread_checkpoints_are_not_reported(tmp_path: Path) -> None:
    h = sim(tmp_path / "h")
    _, two = sorted(h.log_dirs)
    with open(os.path.join(two, "cleaner-offset-checkpoint"), "wb") as f:
        f.write(GARBAGE)
    with open(h.server_properties, "a") as f:
        f.write("log.cleaner.enable=false\n")  # no cleaner thread reads it
    assert dir005(audit(h)) == []


def test_leader_epoch_checkpoint_by_version(tmp_path: Path) -> None:
    h = sim(tmp_path / "h")
    _, two = sorted(h.log_dirs)
    part = sorted(os.path.join(two, d) for d in os.listdir(two) if d.startswith("orders-"))[0]
    with open(os.path.join(part, "leader-epoch-checkpoint"), "wb") as f:
        f.write(ZEROS)
    # KAFKA-13773 (3.2.1, 3.3.0): the dir goes offline while the partition loads; KRaft before 3.7 then creates
    # the dir's partitions again, empty, in the other dir (critical), 3.7+ does not
    report = audit(h, "3.3.0")
    [f] = dir005(report)
    assert f["severity"] == "critical" and f["topic"] == "orders" and f["details"]["next_start"] == "offline"
    assert "EMPTY" in f["message"]
    assert states(report)[two] == ("offline", "DIR005") and report["next_start"]["broker"] == "starts"
    [row] = [d for d in report["next_start"]["log_dirs"] if d["path"] == two]
    assert "EMPTY in another log dir" in row["reason"]
    report = audit(h, "3.7.2")
    [f] = dir005(report)
    assert f["severity"] == "error" and "EMPTY" not in f["message"]
    # before it (2.8.2, 3.0.x, 3.1.x, 3.2.0): the load fails and the broker does not start
    for version in ("2.8.2", "3.2.0"):
        report = audit(h, version)
        [f] = dir005(report)
        assert f["severity"] == "critical" and "the broker does not start" in f["message"]
        ns = report["next_start"]
        assert (ns["broker"], ns["check"]) == ("exits", "DIR005"), ns


def test_the_only_log_dir_halts_the_broker(tmp_path: Path) -> None:
    h = sim(tmp_path / "h")
    one = sorted(h.log_dirs)[0]
    with open(os.path.join(one, "log-start-offset-checkpoint"), "wb") as f:
        f.write(ZEROS)
    report = audit(h, log_dirs=[one])
    [f] = dir005(report)
    assert f["severity"] == "critical" and "the broker halts" in f["message"]
    assert (
        report["next_start"]["broker"] == "exits"
    )  # every log dir offline: LogManager.handleLogDirFailure halts


def _partition_metadata(h: SimulatedHost) -> tuple[str, str]:
    _, two = sorted(h.log_dirs)
    part = sorted(os.path.join(two, d) for d in os.listdir(two) if d.startswith("orders-"))[0]
    return two, os.path.join(part, "partition.metadata")


@pytest.mark.parametrize(
    "content",
    [ZEROS, b"version: 0\ntopic_id:", GARBAGE, b"\n", b"version: -1\ntopic_id: q83vEjRWeJCrze8SNFZ4kA"],
    ids=repr,
)
def test_a_damaged_partition_metadata_stops_the_broker_before_3_2_1_then_takes_the_dir_offline(
    tmp_path: Path, content: bytes
) -> None:
    """PartitionMetadataFile.read: an IOException (malformed line, not UTF-8, a version it does not know) is a
    KafkaStorageException with the dir on the channel, handled as a leader-epoch-checkpoint's (KAFKA-13773)."""
    h = sim(tmp_path / "h")
    two, path = _partition_metadata(h)
    with open(path, "wb") as f:
        f.write(content)
    report = audit(h, "3.7.2")
    [f] = dir005(report)
    assert (f["severity"], f["path"], f["details"]["next_start"]) == ("error", path, "offline")
    assert f"'Error while reading partition metadata file {path}'" in f["message"]
    assert "topic id" in f["remediation"]
    assert states(report)[two] == ("offline", "DIR005") and report["next_start"]["broker"] == "starts"
    # KRaft 3.5.2 (no JBOD): the dir's partitions created again, empty, elsewhere (the lab's 3.5.2 did)
    [f] = dir005(audit(h, "3.5.2"))
    assert f["severity"] == "critical" and "EMPTY" in f["message"]
    report = audit(h, "2.8.2")
    [f] = dir005(report)
    assert f["severity"] == "critical" and "before KAFKA-13773" in f["message"]
    assert (report["next_start"]["broker"], report["next_start"]["check"]) == ("exits", "DIR005")
    # before 2.8 no broker reads the file; a ZooKeeper broker on an older protocol deletes it unread
    assert dir005(audit(h, "2.7.2")) == []
    with open(h.server_properties, "a") as f:
        f.write("inter.broker.protocol.version=2.7\n")
    assert len(dir005(audit(h, "2.8.2"))) == 1  # KRaft (the simulated host) reads it whatever the protocol
    with open(h.server_properties) as f:
        zk = [x for x in f.read().splitlines() if not x.startswith("process.roles=")]
    with open(h.server_properties, "w") as f:
        f.write("\n".join(zk) + "\n")
    assert dir005(audit(h, "2.8.2")) == []


@pytest.mark.parametrize("content", [b"", b"version: 0\n", b"version: 0"], ids=repr)
def test_a_partition_metadata_without_the_line_the_reader_wants_stops_every_release(
    tmp_path: Path, content: bytes
) -> None:
    """No line where PartitionMetadataReadBuffer.read wants one: null into Pattern.split, a NullPointerException
    that loadLogs does not catch on any release: the broker exits, 3.3+ included."""
    h = sim(tmp_path / "h")
    _, path = _partition_metadata(h)
    with open(path, "wb") as f:
        f.write(content)
    for version in ("2.8.2", "3.7.2", "4.1.0"):
        report = audit(h, version)
        [f] = dir005(report)
        assert f["severity"] == "critical" and "NullPointerException" in f["message"], version
        assert (report["next_start"]["broker"], report["next_start"]["check"]) == ("exits", "DIR005")


@pytest.mark.parametrize(
    "topic_id", ["q83vEj", "q83vEjRWeJCrze8SNFZ4k+", "q83vEjRWeJCrze8SNFZ4kAAAAAA", "q83vEjRWeJCrze8SNFZ4kA="]
)
def test_a_topic_id_uuid_fromstring_refuses_stops_every_release(tmp_path: Path, topic_id: str) -> None:
    """A well-formed line whose id Uuid.fromString refuses (too short, not base64url, longer than 24, a wrong
    padding): IllegalArgumentException, which neither the reader nor loadLogs catches: the broker exits on every
    release that reads the file, 3.3+ included (not an IOException: no dir offline)."""
    h = sim(tmp_path / "h")
    _, path = _partition_metadata(h)
    with open(path, "w") as f:
        f.write(f"version: 0\ntopic_id: {topic_id}\n")
    for version in ("2.8.2", "3.7.2", "4.1.0"):
        report = audit(h, version)
        [f] = dir005(report)
        assert f["severity"] == "critical" and "IllegalArgumentException" in f["message"], version
        assert (report["next_start"]["broker"], report["next_start"]["check"]) == ("exits", "DIR005")


def test_a_newer_partition_metadata_version_is_read_from_3_7(tmp_path: Path) -> None:
    """KAFKA-14484 (3.7.0): "version >= 0": a file of a newer version with a good id loads; before, an IOException
    ("Unrecognized version"): offline (3.2.1+)."""
    h = sim(tmp_path / "h")
    two, path = _partition_metadata(h)
    with open(path) as f:
        tid = f.read().split("topic_id:")[1].strip()
    with open(path, "w") as f:
        f.write(f"version: 1\ntopic_id: {tid}\n")
    report = audit(h, "3.7.2")
    assert dir005(report) == [] and states(report)[two][0] == "online"
    [f] = dir005(audit(h, "3.6.2"))
    assert f["details"]["next_start"] == "offline"


@pytest.mark.parametrize(
    "name", ["log-start-offset-checkpoint", "replication-offset-checkpoint", "cleaner-offset-checkpoint"]
)
def test_a_checkpoint_symlinked_to_nothing_takes_the_dir_offline(tmp_path: Path, name: str) -> None:
    """The broker's CheckpointFile leaves a symlink in place (createFile: EEXIST) and reads through it:
    NoSuchFileException, the dir offline (lab 3.7.2 type-cleaner_symlink_dangling). A link to a good copy is read
    as that copy: online."""
    h = sim(tmp_path / "h")
    one, two = sorted(h.log_dirs)
    path = os.path.join(two, name)
    os.rename(path, tmp_path / "copy")
    os.symlink(tmp_path / "gone" / name, path)
    report = audit(h)
    [f] = dir005(report)
    assert f["path"] == path and "a symbolic link to nothing" in f["message"]
    assert f"'Error while reading checkpoint file {path}'" in f["message"]
    assert states(report) == {one: ("online", None), two: ("offline", "DIR005")}
    os.unlink(path)
    os.symlink(tmp_path / "copy", path)
    report = audit(h)
    assert dir005(report) == [] and states(report)[two] == ("online", None)


@pytest.mark.parametrize(("version", "start"), [("3.7.2", "starts"), ("3.2.0", "exits")])
def test_a_leader_epoch_checkpoint_symlinked_to_nothing(tmp_path: Path, version: str, start: str) -> None:
    h = sim(tmp_path / "h")
    two = sorted(h.log_dirs)[1]  # not the metadata log dir, whose failure halts a KRaft broker
    part = next(os.path.join(two, p) for p in sorted(os.listdir(two)) if p.startswith("orders-"))
    path = os.path.join(part, "leader-epoch-checkpoint")
    if os.path.exists(path):
        os.unlink(path)
    os.symlink(tmp_path / "gone" / "leader-epoch-checkpoint", path)
    report = audit(h, version)
    [f] = dir005(report)
    assert f["path"] == path and "a symbolic link to nothing" in f["message"]
    assert report["next_start"]["broker"] == start
    if start == "starts":
        assert states(report)[os.path.dirname(part)] == ("offline", "DIR005")
