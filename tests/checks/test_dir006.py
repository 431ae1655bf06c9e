"""DIR006 and the plan's ``strays``: partition dirs whose topic id this host's KRaft metadata log does not have.

The metadata log is written as Kafka writes it (record batches of MetadataRecordSerde frames: TopicRecord v0,
PartitionRecord v0, RemoveTopicRecord v0; a snapshot ``<end>-<epoch>.checkpoint`` holding the same batches), so
the audit reads real bytes."""

from __future__ import annotations

import base64
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from kafka_ops.audit import run_audit
from kafka_ops.broker.plan import plan_sentences
from kafka_ops.engine.binary import write_uvarint
from kafka_ops.engine.builder import NewRecord, build_batch
from kafka_ops.facts.model import AuditOptions
from kafka_ops.simulator.host import HostSpec, SimulatedHost, TopicSpec, simulate_host

from ..conftest import CORPUS, NOW_MS

_uv = write_uvarint


def _cstr(s: str) -> bytes:
    return _uv(len(s.encode()) + 1) + s.encode()


def _cints(xs: list[int]) -> bytes:
    return _uv(len(xs) + 1) + b"".join(x.to_bytes(4, "big", signed=True) for x in xs)


def uuid_bytes(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "==")


def topic_record(name: str, tid: str) -> bytes:  # TopicRecord v0 (apiKey 2)
    return b"\x01\x02\x00" + _cstr(name) + uuid_bytes(tid) + b"\x00"


def partition_record(tid: str, p: int, node: int = 1) -> bytes:  # PartitionRecord v0 (apiKey 3)
    return (
        b"\x01\x03\x00" + p.to_bytes(4, "big") + uuid_bytes(tid) + _cints([node]) + _cints([node]) + _cints([])
        + _cints([]) + node.to_bytes(4, "big") + (0).to_bytes(4, "big") + (0).to_bytes(4, "big") + b"\x00"
    )  # fmt: skip


def remove_topic_record(tid: str) -> bytes:  # RemoveTopicRecord v0 (apiKey 9)
    return b"\x01\x09\x00" + uuid_bytes(tid) + b"\x00"


def write_metadata_log(log_dir: str, batches: list[list[bytes]], snapshot: list[bytes] | None = None) -> str:
    """``__cluster_metadata-0`` in ``log_dir``: one segment from offset 0 (or from the snapshot's end offset)
    with a batch per list, and optionally a snapshot before it."""
    part = os.path.join(log_dir, "__cluster_metadata-0")
    os.makedirs(part, exist_ok=True)
    base = 0
    if snapshot is not None:
        base = len(snapshot)
        with open(os.path.join(part, f"{base:020d}-{1:010d}.checkpoint"), "wb") as f:
            f.write(build_batch(0, [NewRecord(None, v, NOW_MS) for v in snapshot]))
    data, off = b"", base
    for values in batches:
        data += build_batch(off, [NewRecord(None, v, NOW_MS) for v in values])
        off += len(values)
    with open(os.path.join(part, f"{base:020d}.log"), "wb") as f:
        f.write(data)
    return part


def topic_id_of(partition_dir: str) -> str:
    with open(os.path.join(partition_dir, "partition.metadata")) as f:
        return next(line.split(":", 1)[1].strip() for line in f if line.startswith("topic_id"))


def sim(root: Path) -> SimulatedHost:
    """A simulated KRaft host; its partitions of one topic get one topic id (the simulator draws one per dir)."""
    h = simulate_host(
        str(root),
        HostSpec(now_ms=NOW_MS, topics=[TopicSpec("orders", partitions=2, records_per_partition=200)]),
    )
    with open(os.path.join(h.partitions["orders-1"], "partition.metadata"), "w") as f:
        f.write(f"version: 0\ntopic_id: {topic_id_of(h.partitions['orders-0'])}\n")
    return h


def image_of(h: SimulatedHost) -> list[bytes]:
    """The metadata records of every topic of the simulated host (its dirs' topic ids)."""
    out: list[bytes] = []
    ids: dict[str, str] = {}
    for tp, path in sorted(h.partitions.items()):
        topic, p = tp.rsplit("-", 1)
        tid = topic_id_of(path)
        if topic not in ids:
            ids[topic] = tid
            out.append(topic_record(topic, tid))
        out.append(partition_record(tid, int(p)))
    return out


def audit(h: SimulatedHost, version: str | None) -> dict[str, Any]:
    return run_audit(
        AuditOptions(
            server_properties=h.server_properties, topic_configs=h.topic_configs, broker_state="stopped",
            now_ms=NOW_MS, kafka_version=version,
        )
    )  # fmt: skip


def dir006(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [f for f in report["findings"] if f["check"] == "DIR006"]


def plant_stray(h: SimulatedHost, topic: str = "gone", tid: str = "q83vEjRWeJCrze8SNFZ4kA") -> str:
    """A copy of orders-1 as partition 0 of a topic with another id (a deleted topic's dir, or a restore)."""
    src = h.partitions["orders-1"]
    dst = os.path.join(os.path.dirname(src), f"{topic}-0")
    shutil.copytree(src, dst)
    with open(os.path.join(dst, "partition.metadata"), "w") as f:
        f.write(f"version: 0\ntopic_id: {tid}\n")
    return dst


def meta_dir(h: SimulatedHost) -> str:
    return h.log_dirs[0]  # metadata.log.dir unset: the first of log.dirs


def test_a_stray_is_deleted_on_3_6_critical_and_renamed_on_3_7_warning(tmp_path: Path) -> None:
    h = sim(tmp_path / "h")
    write_metadata_log(meta_dir(h), [image_of(h)])
    stray = plant_stray(h)
    old = audit(h, "3.6.2")
    [f] = dir006(old)
    assert (f["severity"], f["path"], f["topic"], f["partition"]) == ("critical", stray, "gone", 0)
    assert "the metadata has no topic 'gone' and no topic id q83vEjRWeJCrze8SNFZ4kA" in f["message"]
    assert "Kafka 3.6.2 deletes it at the start" in f["message"] and "LOST" in f["message"]
    assert "mv " in f["remediation"]
    [st] = old["next_start"]["strays"]
    assert (st["path"], st["fate"], st["topic_id"]) == (stray, "deleted", "q83vEjRWeJCrze8SNFZ4kA")
    assert st["deleted_at"] is not None and st["deleted_at"] >= "2026-09-21"
    said = "\n".join(plan_sentences(old["next_start"]))
    assert f"stray {stray}" in said and "DELETED" in said
    new = audit(h, "3.7.2")
    [f] = dir006(new)
    assert f["severity"] == "warning" and f"{os.path.dirname(stray)}/gone-0.<uuid>-stray" in f["message"]
    [st] = new["next_start"]["strays"]
    assert (st["fate"], st["deleted_at"]) == ("renamed_stray", None)
    assert "LogManager.loadLog: isStrayKraftReplica" in st["reason"]
    assert "deleteStrayKRaftReplicas" in audit(h, "3.7.0")["next_start"]["strays"][0]["reason"]
    # the stray gets no retention deletion in the plan, the healthy partitions are no strays
    assert not [s for s in new["next_start"]["segments"] if "/gone-0/" in s["log"]]
    assert audit(h, "4.3.1")["next_start"]["strays"][0]["fate"] == "renamed_stray"
    assert audit(h, "2.8.2")["next_start"]["strays"][0]["fate"] == "kept"
    assert dir006(audit(h, None))[0]["severity"] == "error"


def test_a_topic_deleted_and_created_again_under_the_same_name_is_a_stray(tmp_path: Path) -> None:
    """The dir's topic id was removed (RemoveTopicRecord) and the name now has another id: Kafka goes by id."""
    h = sim(tmp_path / "h")
    old_tid, new_tid = "q83vEjRWeJCrze8SNFZ4kA", "AQIDBAUGBwgJCgsMDQ4PEA"
    stray = plant_stray(h, "again", old_tid)
    write_metadata_log(
        meta_dir(h),
        [image_of(h), [topic_record("again", old_tid), partition_record(old_tid, 0)], [remove_topic_record(old_tid)],
         [topic_record("again", new_tid), partition_record(new_tid, 0)]],
    )  # fmt: skip
    [f] = dir006(audit(h, "3.5.2"))
    assert f["path"] == stray and f["severity"] == "critical"
    assert f"the metadata has topic 'again' with id {new_tid}, not the dir's {old_tid}" in f["message"]
    # the live topic of that name has the partition: the broker creates it anew, empty (a real 4.3.1 broker did)
    [st] = audit(h, "4.3.1")["next_start"]["strays"]
    assert st["fate"] == "renamed_stray" and "creates again-0 anew, EMPTY" in st["reason"]


def test_records_after_the_snapshot_are_applied_and_the_snapshot_is_read(tmp_path: Path) -> None:
    h = sim(tmp_path / "h")
    tid = "q83vEjRWeJCrze8SNFZ4kA"
    stray = plant_stray(h, "later", tid)
    # the snapshot has orders; the log after it creates 'later', then removes it
    write_metadata_log(
        meta_dir(h),
        [[topic_record("later", tid), partition_record(tid, 0)], [remove_topic_record(tid)]],
        snapshot=image_of(h),
    )
    [st] = audit(h, "3.7.2")["next_start"]["strays"]
    assert st["path"] == stray
    # without the removal the topic is known: nothing
    shutil.rmtree(os.path.join(meta_dir(h), "__cluster_metadata-0"))
    write_metadata_log(
        meta_dir(h), [[topic_record("later", tid), partition_record(tid, 0)]], snapshot=image_of(h)
    )
    report = audit(h, "3.7.2")
    assert report["next_start"]["strays"] == [] and dir006(report) == []


def test_healthy_host_and_no_or_unreadable_metadata_log_say_nothing(tmp_path: Path) -> None:
    h = sim(tmp_path / "h")
    part = write_metadata_log(meta_dir(h), [image_of(h)])
    report = audit(h, "3.6.2")
    assert dir006(report) == [] and report["next_start"]["strays"] == []
    stray = plant_stray(h)
    assert len(dir006(audit(h, "3.6.2"))) == 1
    # a running broker: it judged its logs at its start (and renames a deleted topic's dir just after the
    # RemoveTopicRecord reaches its log): nothing said
    running = run_audit(
        AuditOptions(
            server_properties=h.server_properties, topic_configs=h.topic_configs, broker_state="running",
            now_ms=NOW_MS, kafka_version="3.6.2",
        )
    )  # fmt: skip
    assert dir006(running) == []
    # a topic record this kafka-ops cannot read (a PartitionRecord of an unknown version, cut short before its
    # TopicId): no image, nothing said
    with open(os.path.join(part, "00000000000000000000.log"), "ab") as f:
        f.write(build_batch(3, [NewRecord(None, b"\x01\x03\x63\x00", NOW_MS)]))
    assert dir006(audit(h, "3.6.2")) == []
    # records missing before the first segment (no snapshot covers them): nothing said
    os.rename(os.path.join(part, "00000000000000000000.log"), os.path.join(part, "00000000000000000100.log"))
    assert dir006(audit(h, "3.6.2")) == []
    # no metadata log on this host (a broker whose metadata log dir is elsewhere): nothing said
    shutil.rmtree(part)
    report = audit(h, "3.6.2")
    assert dir006(report) == [] and report["next_start"]["strays"] == []
    assert os.path.isdir(stray)  # the audit never touches the broker's files


def test_records_of_a_later_release_still_give_the_topics(tmp_path: Path) -> None:
    """A later release writes records of versions this kafka-ops does not know: a RegisterBrokerRecord v99 does
    not make topics and is passed over; a PartitionRecord v99 still leads with PartitionId and TopicId (every
    version of its schema does), so the image stays whole and the stray is still found."""
    h = sim(tmp_path / "h")
    image = image_of(h)
    tid = topic_id_of(h.partitions["orders-0"])
    later_partition = b"\x01\x03\x63" + (5).to_bytes(4, "big") + uuid_bytes(tid) + b"\x00" * 12
    later_broker = b"\x01\x00\x63" + b"\x00" * 8
    write_metadata_log(meta_dir(h), [image, [later_broker, later_partition]])
    stray = plant_stray(h)
    report = audit(h, "4.3.1")
    assert [f["path"] for f in dir006(report)] == [stray]
    from kafka_ops.broker.strays import read_image

    img = read_image(os.path.join(meta_dir(h), "__cluster_metadata-0"))
    assert img is not None and img.topics[tid] == ("orders", {0, 1, 5})


def test_zookeeper_mode_says_nothing(tmp_path: Path) -> None:
    h = sim(tmp_path / "h")
    write_metadata_log(meta_dir(h), [image_of(h)])
    plant_stray(h)
    text = Path(h.server_properties).read_text()
    Path(h.server_properties).write_text(
        text.replace("process.roles=broker,controller\nnode.id=", "zookeeper.connect=zk:2181\nbroker.id=")
    )
    report = audit(h, "3.5.2")
    assert dir006(report) == [] and report["next_start"]["strays"] == []


def test_a_broker_that_exits_keeps_the_stray(tmp_path: Path) -> None:
    h = sim(tmp_path / "h")
    write_metadata_log(meta_dir(h), [image_of(h)])
    plant_stray(h)
    os.makedirs(os.path.join(h.log_dirs[1], "lost+found"))
    report = audit(h, "3.6.2")
    assert report["next_start"]["broker"] == "exits"
    [st] = report["next_start"]["strays"]
    assert st["fate"] == "kept" and "lost+found" in st["reason"]
    assert dir006(report)[0]["severity"] == "critical"  # it still deletes it once the exit is fixed


@pytest.mark.skipif(not CORPUS.exists(), reason="corpus not present")
@pytest.mark.parametrize(
    "log_dir",
    sorted(str(p.parent) for p in CORPUS.rglob("__cluster_metadata-0")) if CORPUS.exists() else [],
)
def test_no_partition_of_a_real_kraft_host_is_a_stray(tmp_path: Path, log_dir: str) -> None:
    """The corpus' KRaft log dirs (their own metadata log): every partition's topic id is in it."""
    from kafka_ops.broker.strays import read_image

    props = tmp_path / "server.properties"
    props.write_text(f"process.roles=broker,controller\nnode.id=1\nlog.dirs={log_dir}\n")
    report = run_audit(
        AuditOptions(
            server_properties=str(props), broker_state="stopped", now_ms=NOW_MS, kafka_version="3.6.2"
        )
    )
    assert dir006(report) == [] and report["next_start"]["strays"] == []
    assert read_image(os.path.join(log_dir, "__cluster_metadata-0")) is not None


def test_a_live_partition_without_partition_metadata_is_a_stray_from_3_7_1(tmp_path: Path) -> None:
    """No partition.metadata in a live partition's dir: its log loads without a topic id. 3.7.1+ takes it for a
    stray, renames it -stray and creates the partition again, empty (a real 3.7.2 broker did: the acknowledged
    records no longer served): critical, the fix is to write the file with the topic's id. A real 3.5.2 broker
    served it as it was: nothing said."""
    h = sim(tmp_path / "h")
    write_metadata_log(meta_dir(h), [image_of(h)])
    part = h.partitions["orders-1"]
    os.remove(os.path.join(part, "partition.metadata"))
    report = audit(h, "3.7.2")
    [st] = report["next_start"]["strays"]
    assert (st["path"], st["fate"]) == (part, "renamed_stray") and "creates orders-1 again, EMPTY" in st[
        "reason"
    ]
    [f] = dir006(report)
    assert f["severity"] == "critical" and "topic_id" in f["remediation"]
    report = audit(h, "3.5.2")
    assert report["next_start"]["strays"] == [] and dir006(report) == []


def test_a_partition_without_partition_metadata_halts_3_7_0_after_loading(tmp_path: Path) -> None:
    """3.7.0 only: LogManager.findStrayReplicas throws for a log without a topic id and the fatal fault handler
    halts the broker after the logs loaded (KAFKA-16814): the plan says the broker exits, DIR006 is critical and
    names the fix (the file again, with the live topic's id), and the markers the start deleted stay deleted."""
    h = sim(tmp_path / "h")
    records = image_of(h)
    write_metadata_log(meta_dir(h), [records])
    part = h.partitions["orders-1"]
    os.remove(os.path.join(part, "partition.metadata"))
    report = audit(h, "3.7.0")
    ns = report["next_start"]
    assert ns["broker"] == "exits" and ns["check"] == "DIR006"
    assert "KAFKA-16814" in ns["reason"] and part in ns["reason"]
    [st] = ns["strays"]
    assert st["path"] == part and st["fate"] == "kept"  # the broker halts: nothing renamed
    [f] = dir006(report)
    assert f["severity"] == "critical" and "printf 'version: 0" in f["remediation"]
    assert "3.7.1" in f["remediation"]
    after = ns["after_failed_start"]
    assert after is not None and {d["marker"] for d in after["log_dirs"]} == {"deleted"}
    # a partition the metadata does not have (its PartitionRecord left out): the fix moves the dir out
    write_metadata_log(meta_dir(h), [[b for b in records if b[1:7] != b"\x03\x00\x00\x00\x00\x01"]])
    [f] = dir006(audit(h, "3.7.0"))
    assert f["severity"] == "critical" and "mv " in f["remediation"]


def partition_change_record(tid: str, p: int, replicas: list[int] | None, version: int = 0) -> bytes:
    """PartitionChangeRecord (apiKey 5): PartitionId, TopicId, then tagged fields: Replicas (tag 2) when given
    (None: the field left out, which is Kafka's null: the replicas unchanged), and an ISR (tag 0) of the same."""
    tagged = []
    if replicas is not None:
        tagged.append((0, _cints(replicas)))
        tagged.append((2, _cints(replicas)))
    else:
        tagged.append((0, _cints([1])))
    body = b"".join(_uv(tag) + _uv(len(data)) + data for tag, data in tagged)
    return b"\x01\x05" + _uv(version) + p.to_bytes(4, "big") + uuid_bytes(tid) + _uv(len(tagged)) + body


def test_a_partition_reassigned_away_from_this_broker_is_a_stray(tmp_path: Path) -> None:
    """The topic and the partition exist, but a PartitionChangeRecord moved its replicas to node 2 while this
    broker (node.id 1) was down: every KRaft release that looks for strays takes this copy for one (the replica
    assignment does not contain the local brokerId): 3.6 deletes it (info: the current replicas serve it), 3.7+
    renames it -stray (warning: the disk is never freed). A change that leaves the replicas alone (an ISR change,
    its Replicas field null) or brings this broker back is no stray; a change this kafka-ops cannot read leaves
    the assignment unjudged. (The lab's reassigned_away trial saw 3.5.2 and 3.7.2 brokers do it.)"""
    h = sim(tmp_path / "h")
    tid = topic_id_of(h.partitions["orders-0"])
    part = h.partitions["orders-1"]
    log = write_metadata_log(meta_dir(h), [image_of(h), [partition_change_record(tid, 1, [2])]])
    old = audit(h, "3.6.2")
    [st] = old["next_start"]["strays"]
    assert (st["path"], st["fate"]) == (part, "deleted") and st["deleted_at"] is not None
    assert "assigned to node(s) 2, not to this broker (node.id 1): reassigned away" in st["why"]
    [f] = dir006(old)
    assert f["severity"] == "info" and "served by its current replicas" in f["message"]
    assert "LOST" not in f["message"]
    new = audit(h, "3.7.2")
    [st] = new["next_start"]["strays"]
    assert st["fate"] == "renamed_stray" and "does not contain the local brokerId 1" in st["reason"]
    [f] = dir006(new)
    assert f["severity"] == "warning" and "-stray" in f["remediation"]
    # an ISR change (Replicas null) after the reassignment leaves it assigned to node 2
    shutil.rmtree(log)
    write_metadata_log(
        meta_dir(h),
        [image_of(h), [partition_change_record(tid, 1, [2])], [partition_change_record(tid, 1, None)]],
    )
    assert [s["path"] for s in audit(h, "3.7.2")["next_start"]["strays"]] == [part]
    # reassigned back to [2, 1]: this broker holds a replica again
    shutil.rmtree(os.path.join(meta_dir(h), "__cluster_metadata-0"))
    write_metadata_log(
        meta_dir(h),
        [image_of(h), [partition_change_record(tid, 1, [2])], [partition_change_record(tid, 1, [2, 1])]],
    )
    report = audit(h, "3.7.2")
    assert report["next_start"]["strays"] == [] and dir006(report) == []
    # a later release's PartitionChangeRecord (v99): its replicas are not known, the assignment is not judged
    shutil.rmtree(os.path.join(meta_dir(h), "__cluster_metadata-0"))
    unknown = partition_change_record(tid, 1, [2], version=99)
    write_metadata_log(meta_dir(h), [image_of(h), [unknown]])
    report = audit(h, "3.7.2")
    assert report["next_start"]["strays"] == [] and dir006(report) == []
    # and a PartitionRecord that never held this broker is a stray as well
    shutil.rmtree(os.path.join(meta_dir(h), "__cluster_metadata-0"))
    image = [r if r[:2] != b"\x01\x03" or r[3:7] != (1).to_bytes(4, "big") else partition_record(tid, 1, 3)
             for r in image_of(h)]  # fmt: skip
    write_metadata_log(meta_dir(h), [image])
    [st] = audit(h, "4.3.1")["next_start"]["strays"]
    assert st["path"] == part and "assigned to node(s) 3" in st["why"]


def test_a_future_dir_of_a_deleted_topic_is_a_stray_and_never_moves(tmp_path: Path) -> None:
    """An interrupted intra-broker move of a topic deleted since: its future log is in allLogs, so the stray rules
    judge it (3.0-3.6 delete it, 3.7.0 keeps it as a future log, 3.7.1+ rename it <tp>.<uuid>-stray); its move
    never resumes, so DIR003's "the move empties it" (no current dir) is not said."""
    h = sim(tmp_path / "h")
    write_metadata_log(meta_dir(h), [image_of(h)])
    future = plant_stray(h) + ".7e2a9c4b1d0f4e6a9b3c5d7e8f1a2b3c-future"
    os.rename(future.rsplit(".", 1)[0], future)

    def dir003(report: dict[str, Any]) -> list[dict[str, Any]]:
        return [f for f in report["findings"] if f["check"] == "DIR003" and f["path"] == future]

    old = audit(h, "3.6.2")
    [f] = dir006(old)
    assert (f["severity"], f["path"], f["topic"], f["partition"]) == ("critical", future, "gone", 0)
    assert "gone-0.<uuid>-delete" in f["message"]
    assert [s["fate"] for s in old["next_start"]["strays"]] == ["deleted"]
    assert old["next_start"]["future_dirs"] == [] and dir003(old) == []
    new = audit(h, "3.7.2")
    [f] = dir006(new)
    assert f["severity"] == "warning" and f"{os.path.dirname(future)}/gone-0.<uuid>-stray" in f["message"]
    assert "-future.<uuid>" not in f["message"] and "-future" not in f["remediation"]
    assert new["next_start"]["future_dirs"] == [] and dir003(new) == []
    # 3.7.0 moves aside the current log only: the future log stays, and nothing is lost
    kept = audit(h, "3.7.0")
    [st] = kept["next_start"]["strays"]
    assert st["fate"] == "kept" and "isFuture = false" in st["reason"]
    [fd] = kept["next_start"]["future_dirs"]
    assert (fd["path"], fd["fate"], fd["records_lost"]) == (future, "kept", False)
    assert dir003(kept) == [] and not [s for s in kept["next_start"]["segments"] if "/gone-0." in s["log"]]
    # the same dir as the future log of a live partition whose current dir is gone: the move empties it (DIR003)
    live = os.path.join(os.path.dirname(future), "orders-1.7e2a9c4b1d0f4e6a9b3c5d7e8f1a2b3c-future")
    shutil.rmtree(future)
    os.rename(h.partitions["orders-1"], live)
    report = audit(h, "3.7.2")
    assert report["next_start"]["strays"] == []
    [fd] = report["next_start"]["future_dirs"]
    assert (fd["path"], fd["records_lost"]) == (live, True)
    assert [f["severity"] for f in report["findings"] if f["check"] == "DIR003" and f["path"] == live] == [
        "critical"
    ]


def test_a_future_dir_of_a_partition_reassigned_away_names_its_stray_rename(tmp_path: Path) -> None:
    """A -future dir of a partition reassigned away (3.7.1+: renamed <tp>.<uuid>-stray, not <dir>.<uuid>-stray):
    the fix names the dir the broker leaves, the partition's name with -stray, never the -future name."""
    h = sim(tmp_path / "h")
    tid = topic_id_of(h.partitions["orders-0"])
    write_metadata_log(meta_dir(h), [image_of(h), [partition_change_record(tid, 1, [2])]])
    part = h.partitions["orders-1"]
    future = part + ".7e2a9c4b1d0f4e6a9b3c5d7e8f1a2b3c-future"
    os.rename(part, future)
    report = audit(h, "3.7.2")
    [st] = report["next_start"]["strays"]
    assert (st["path"], st["fate"]) == (future, "renamed_stray")
    [f] = dir006(report)
    assert f["severity"] == "warning" and f"{part}.*-stray" in f["remediation"], f["remediation"]
    assert "-future" not in f["remediation"]


def test_a_partition_metadata_symlinked_to_nothing_is_no_topic_id(tmp_path: Path) -> None:
    """PartitionMetadataFile.exists() follows the link: a symlink to nothing is no file, the log loads without a
    topic id and 3.7.1+ renames it -stray (lab 3.7.2 type-partition_metadata_symlink_dangling)."""
    h = sim(tmp_path / "h")
    write_metadata_log(meta_dir(h), [image_of(h)])
    part = h.partitions["orders-1"]
    pm = os.path.join(part, "partition.metadata")
    os.remove(pm)
    os.symlink(tmp_path / "gone" / "partition.metadata", pm)
    [st] = audit(h, "3.7.2")["next_start"]["strays"]
    assert (st["path"], st["fate"]) == (part, "renamed_stray")
