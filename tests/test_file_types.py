"""Something else than a regular file where the broker opens one at its start (kafka_ops.broker.filetypes, issue 36
§2): what the next-start plan says, as the lab's real brokers did (tests/lab/scenarios.py TYPE_DAMAGE, 3.7.2). Each
test plants one file type on a simulated host; the audit itself must not block on a FIFO nor read through a link."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from kafka_ops.broker.plan import plan_sentences
from kafka_ops.render.models import validate

from .checks.index_hosts import audit, bases, seg_path, simulate
from .checks.osusers import Users, broker_users, open_tmp  # noqa: F401


def _plan(host: Any) -> dict[str, Any]:
    report = audit(host)
    validate(report)
    return report["next_start"]  # type: ignore[no-any-return]


def _host_of_broker_user(root: Path, users: Users) -> Any:
    """A simulated host whose files are the test broker user's (the OS user broker_users made)."""
    from kafka_ops.simulator.host import HostSpec, simulate_host

    from .checks.index_hosts import NOW_MS

    u = users.broker
    spec = HostSpec(now_ms=NOW_MS, broker_user=u.name, broker_uid=u.uid, broker_gid=u.gid)
    return simulate_host(str(root / "host"), spec)


def _replace(path: str, kind: str, target: str = "") -> None:
    if os.path.lexists(path):
        os.unlink(path)
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dir":
        os.mkdir(path)
    else:
        os.symlink(target, path)


def _partition(host: Any) -> str:
    """A partition dir of the second log dir with two segments or more."""
    ld = host.log_dirs[1]
    return next(
        p for n in sorted(os.listdir(ld)) if os.path.isdir(p := os.path.join(ld, n)) and len(bases(p)) >= 2
    )


def _dir_state(ns: dict[str, Any], path: str) -> str:
    return next(d["state"] for d in ns["log_dirs"] if d["path"] == path)


def test_a_fifo_where_the_start_reads_a_checkpoint_whole_hangs_the_start(tmp_path: Path) -> None:
    host = simulate(tmp_path)
    fifo = os.path.join(host.log_dirs[1], "recovery-point-offset-checkpoint")
    _replace(fifo, "fifo")
    ns = _plan(host)
    assert ns["broker"] == "hangs" and fifo in ns["reason"] and "FIFO" in ns["reason"], ns["reason"]
    assert any("the broker HANGS" in s for s in plan_sentences(ns))


def test_a_fifo_meta_properties_hangs_before_any_dir_is_judged(tmp_path: Path) -> None:
    host = simulate(tmp_path)
    _replace(os.path.join(host.log_dirs[1], "meta.properties"), "fifo")
    ns = _plan(host)
    assert ns["broker"] == "hangs" and "meta.properties" in ns["reason"]
    assert {d["state"] for d in ns["log_dirs"]} == {"online"}  # the lab's 3.7.2 logged no dir offline


def test_a_fifo_leader_epoch_checkpoint_hangs_the_partition_load(tmp_path: Path) -> None:
    host = simulate(tmp_path)
    part = _partition(host)
    _replace(os.path.join(part, "leader-epoch-checkpoint"), "fifo")
    ns = _plan(host)
    assert ns["broker"] == "hangs" and "leader-epoch-checkpoint" in ns["reason"]


def test_the_active_segments_index_as_a_fifo_or_a_dir_takes_the_dir_offline_a_closed_ones_does_not(
    tmp_path: Path,
) -> None:
    host = simulate(tmp_path)
    part = _partition(host)
    older, active = bases(part)[0], bases(part)[-1]
    _replace(seg_path(part, older, ".timeindex"), "fifo")  # LazyIndex: never opened at load (lab 3.7.2)
    ns = _plan(host)
    assert ns["broker"] == "starts" and _dir_state(ns, host.log_dirs[1]) == "online"
    for suffix, kind in ((".index", "fifo"), (".timeindex", "dir")):
        path = seg_path(part, active, suffix)
        _replace(path, kind)
        ns = _plan(host)
        row = next(d for d in ns["log_dirs"] if d["path"] == host.log_dirs[1])
        assert ns["broker"] == "starts" and row["state"] == "offline", (suffix, row)
        assert path in row["reason"] and "resizeIndexes" in row["reason"]
        os.unlink(path) if kind == "fifo" else os.rmdir(path)


def test_a_clean_shutdown_marker_of_another_type_counts_as_the_marker_a_dangling_link_does_not(
    tmp_path: Path,
) -> None:
    host = simulate(tmp_path)
    marker = os.path.join(host.log_dirs[1], ".kafka_cleanshutdown")
    _replace(marker, "dir")  # deleted before the dir is listed: no "not a topic-partition directory" exit
    ns = _plan(host)
    assert ns["broker"] == "starts" and ns["segments"] == [], (ns["reason"], ns["segments"][:2])
    os.rmdir(marker)
    _replace(marker, "fifo")  # up to 3.6 nobody reads it (lab 2.8.2, 3.5.2: a clean start)
    ns = audit(host, kafka_version="3.5.2")["next_start"]
    assert ns["broker"] == "starts" and ns["segments"] == []
    ns = _plan(host)  # 3.7+ KRaft reads its broker epoch first: the start hangs (lab 4.3.1)
    assert ns["broker"] == "hangs" and marker in ns["reason"] and "broker epoch" in ns["reason"]
    os.unlink(marker)
    _replace(marker, "link", str(tmp_path / "nowhere"))  # exists() is false: an unclean stop, recovered
    ns = _plan(host)
    assert ns["broker"] == "starts" and {s["load"] for s in ns["segments"]} == {"recovered"}


def test_a_lock_linked_into_a_missing_dir_takes_the_dir_offline_a_fifo_lock_does_not(tmp_path: Path) -> None:
    host = simulate(tmp_path)
    lock = os.path.join(host.log_dirs[1], ".lock")
    _replace(lock, "fifo")  # O_RDWR does not block on a FIFO, and tryLock takes it (lab 3.7.2)
    assert _dir_state(_plan(host), host.log_dirs[1]) == "online"
    os.unlink(lock)
    _replace(lock, "link", str(tmp_path / "gone" / ".lock"))
    ns = _plan(host)
    row = next(d for d in ns["log_dirs"] if d["path"] == host.log_dirs[1])
    assert row["state"] == "offline" and "Disk error while locking directory" in row["reason"]
    os.unlink(lock)
    _replace(lock, "link", str(tmp_path / ".lock-elsewhere"))  # its dir exists: FileChannel.open creates it
    assert _dir_state(_plan(host), host.log_dirs[1]) == "online"


def test_a_fifo_replication_checkpoint_hangs_a_kraft_start_not_a_zookeeper_one(tmp_path: Path) -> None:
    """Lab: 3.5.2 (KRaft) never became ready; 2.8.2 (ZooKeeper) did, its LeaderAndIsr thread blocked."""
    host = simulate(tmp_path)
    fifo = os.path.join(host.log_dirs[1], "replication-offset-checkpoint")
    _replace(fifo, "fifo")
    ns = _plan(host)  # the simulated host's server.properties: KRaft (process.roles)
    assert ns["broker"] == "hangs" and fifo in ns["reason"], ns["reason"]
    props = Path(host.server_properties)
    text = props.read_text()
    lines = [x for x in text.splitlines() if not x.startswith(("process.roles", "controller.", "node.id"))]
    props.write_text("\n".join([*lines, "zookeeper.connect=localhost:2181", "broker.id=1"]) + "\n")
    zk = audit(host, kafka_version="2.8.2")["next_start"]
    # (it exits over the simulated host's KRaft meta.properties in ZooKeeper mode: not over the FIFO)
    assert zk["broker"] != "hangs" and fifo not in (zk["reason"] or ""), zk["reason"]


def test_a_fifo_latest_producer_snapshot_hangs_from_2_8_and_is_unknown_before(tmp_path: Path) -> None:
    host = simulate(tmp_path)
    part = _partition(host)
    snaps = sorted(n for n in os.listdir(part) if n.endswith(".snapshot"))
    latest = os.path.join(part, snaps[-1] if snaps else f"{bases(part)[-1]:020d}.snapshot")
    _replace(latest, "fifo")
    ns = _plan(host)  # 3.7.0: rebuildProducerState writes a snapshot under its name (lab 3.7.2)
    assert ns["broker"] == "hangs" and latest in ns["reason"], ns["reason"]
    ns = audit(host, kafka_version="2.8.2")["next_start"]  # lab 2.8.2: hangs too
    assert ns["broker"] == "hangs" and latest in ns["reason"], ns["reason"]
    ns = audit(host, kafka_version="2.7.2")["next_start"]  # no release before 2.8 was run with it
    assert ns["broker"] == "starts" and any(latest in u["what"] for u in ns["unknown"]), ns["unknown"]


def test_a_lock_the_broker_user_cannot_open_read_write_takes_the_dir_offline(
    open_tmp: Path,  # noqa: F811
    broker_users: Users,  # noqa: F811
) -> None:
    u = broker_users.broker
    host = _host_of_broker_user(open_tmp, broker_users)
    lock = os.path.join(host.log_dirs[1], ".lock")
    with open(lock, "wb"):
        pass
    os.chown(lock, 0, 0)
    os.chmod(lock, 0o600)  # lab 3.7.2: AccessDeniedException, 'Disk error while locking directory'
    ns = audit(host, broker_user=u.name)["next_start"]
    row = next(d for d in ns["log_dirs"] if d["path"] == host.log_dirs[1])
    assert row["state"] == "offline" and "Disk error while locking directory" in row["reason"], row
    os.chown(lock, u.uid, u.gid)
    ns = audit(host, broker_user=u.name)["next_start"]
    assert next(d for d in ns["log_dirs"] if d["path"] == host.log_dirs[1])["state"] == "online"


def test_a_fifo_txnindex_or_an_index_linked_into_nothing_takes_the_dir_offline(tmp_path: Path) -> None:
    """Lab 3.7.2: 'Illegal seek' (TransactionIndex.sanityCheck), FileNotFoundException (the index's rebuild)."""
    host = simulate(tmp_path)
    part = _partition(host)
    for path, kind, target in (
        (seg_path(part, bases(part)[-1], ".txnindex"), "fifo", ""),
        (seg_path(part, bases(part)[0], ".index"), "link", str(tmp_path / "gone" / "x.index")),
    ):
        saved = Path(path).read_bytes() if os.path.isfile(path) else None
        _replace(path, kind, target)
        ns = _plan(host)
        row = next(d for d in ns["log_dirs"] if d["path"] == host.log_dirs[1])
        assert ns["broker"] == "starts" and row["state"] == "offline" and path in row["reason"], row
        os.unlink(path)
        if saved is not None:
            Path(path).write_bytes(saved)


def test_a_directory_in_place_of_meta_properties_takes_the_dir_offline_not_the_broker_down(
    tmp_path: Path,
) -> None:
    # lab 3.7.2 (type-meta_properties_directory): "Error while reading meta.properties file ... Is a directory",
    # the dir in errorLogDirs, the broker started with it offline; the plan had taken the file as missing (an exit)
    host = simulate(tmp_path)
    path = os.path.join(host.log_dirs[1], "meta.properties")
    saved = Path(path).read_text()
    os.unlink(path)
    os.mkdir(path)
    ns = _plan(host)
    assert ns["broker"] == "starts", ns.get("reason")
    assert _dir_state(ns, host.log_dirs[1]) == "offline"
    # the metadata log dir's: the broker cannot continue without it
    os.rmdir(path)
    Path(path).write_text(saved)
    first = os.path.join(host.log_dirs[0], "meta.properties")
    os.unlink(first)
    os.mkdir(first)
    ns = _plan(host)
    assert ns["broker"] == "exits" and "Is a directory" in ns["reason"], ns.get("reason")


def test_a_directory_in_place_of_a_closed_segments_index_loads_it_as_is(tmp_path: Path) -> None:
    """``offsetIndexFile().exists()`` is true for a directory: no 'Could not find offset index file', no rebuild;
    a closed segment's LazyIndex is not opened at load (lab 3.7.2 type-index_older_directory: loaded as is)."""
    host = simulate(tmp_path)
    part = _partition(host)
    older = bases(part)[0]
    _replace(seg_path(part, older, ".index"), "dir")
    ns = _plan(host)
    assert ns["broker"] == "starts" and _dir_state(ns, host.log_dirs[1]) == "online"
    rebuilt = [s for s in ns["segments"] if s["log"] == seg_path(part, older, ".log")]
    assert rebuilt == [], rebuilt


def test_a_directory_in_place_of_a_leader_epoch_checkpoint_takes_the_dir_offline(tmp_path: Path) -> None:
    """CheckpointFile's createFile fails on it (ignored), its read throws 'Is a directory' (lab 3.7.2
    type-leader_epoch_directory: the dir offline)."""
    host = simulate(tmp_path)
    part = _partition(host)
    path = os.path.join(part, "leader-epoch-checkpoint")
    _replace(path, "dir")
    ns = _plan(host)
    row = next(d for d in ns["log_dirs"] if d["path"] == host.log_dirs[1])
    assert ns["broker"] == "starts" and row["state"] == "offline", row
    assert path in row["reason"] and "Is a directory" in row["reason"]


def test_a_meta_properties_symlinked_to_a_good_copy_is_unknown_not_offline(tmp_path: Path) -> None:
    """The broker reads through the link (lab 3.7.2 type-meta_properties_symlink: the dir online); kafka-ops never
    does: the plan keeps the dir online and says what it could not check, never 'offline'."""
    host = simulate(tmp_path)
    path = os.path.join(host.log_dirs[1], "meta.properties")
    os.rename(path, tmp_path / "meta-copy")
    os.symlink(tmp_path / "meta-copy", path)
    ns = _plan(host)
    assert ns["broker"] == "starts" and _dir_state(ns, host.log_dirs[1]) == "online"
    assert any(path in u["what"] and "through a link" in u["reason"] for u in ns["unknown"]), ns["unknown"]


def test_a_timeindex_linked_into_nothing_or_a_txnindex_directory_takes_the_dir_offline(
    tmp_path: Path,
) -> None:
    """Lab 3.7.2: a closed segment's .timeindex a symlink into a missing directory (sanityCheck resizes the 'newly
    created' time index through the link: FileNotFoundException) and a .txnindex that is a directory
    (TransactionIndex.sanityCheck: 'Is a directory') each take the dir offline."""
    host = simulate(tmp_path)
    part = _partition(host)
    older = bases(part)[0]
    for suffix, kind in ((".timeindex", "link"), (".txnindex", "dir")):
        path = seg_path(part, older, suffix)
        _replace(path, kind, str(tmp_path / "gone" / "x"))
        ns = _plan(host)
        row = next(d for d in ns["log_dirs"] if d["path"] == host.log_dirs[1])
        assert ns["broker"] == "starts" and row["state"] == "offline", (suffix, row)
        assert path in row["reason"], row["reason"]
        os.unlink(path) if kind == "link" else os.rmdir(path)


def test_the_latest_snapshot_as_a_directory_takes_the_dir_offline_from_2_8_and_is_unknown_before(
    tmp_path: Path,
) -> None:
    host = simulate(tmp_path)
    part = _partition(host)
    snaps = sorted(n for n in os.listdir(part) if n.endswith(".snapshot"))
    assert snaps
    latest = os.path.join(part, snaps[-1])
    _replace(latest, "dir")
    report = audit(host, kafka_version="3.7.2")
    ns = report["next_start"]
    row = next(d for d in ns["log_dirs"] if d["path"] == host.log_dirs[1])
    assert row["state"] == "offline" and "Is a directory" in row["reason"], row
    ns = audit(host, kafka_version="2.8.2")["next_start"]  # lab 2.8.2: offline too
    assert _dir_state(ns, host.log_dirs[1]) == "offline"
    ns = audit(host, kafka_version="2.7.2")["next_start"]  # no release before 2.8 was run with it
    assert _dir_state(ns, host.log_dirs[1]) == "online"
    assert any(latest in u["what"] for u in ns["unknown"]), ns["unknown"]


def test_a_directory_in_place_of_partition_metadata_takes_the_dir_offline(tmp_path: Path) -> None:
    """PartitionMetadataFile.exists() is true for it and the read fails ('Is a directory', lab 3.7.2)."""
    host = simulate(tmp_path)
    part = _partition(host)
    path = os.path.join(part, "partition.metadata")
    _replace(path, "dir")
    ns = _plan(host)
    row = next(d for d in ns["log_dirs"] if d["path"] == host.log_dirs[1])
    assert ns["broker"] == "starts" and row["state"] == "offline" and path in row["reason"], row


def test_a_meta_properties_the_broker_user_cannot_read_takes_the_dir_offline(
    open_tmp: Path,  # noqa: F811
    broker_users: Users,  # noqa: F811
) -> None:
    u = broker_users.broker
    host = _host_of_broker_user(open_tmp, broker_users)
    meta = os.path.join(host.log_dirs[1], "meta.properties")
    os.chown(meta, 0, 0)
    os.chmod(meta, 0o600)  # lab 3.7.2: AccessDeniedException, 'Error while reading meta.properties file'
    ns = audit(host, broker_user=u.name)["next_start"]
    row = next(d for d in ns["log_dirs"] if d["path"] == host.log_dirs[1])
    assert row["state"] == "offline" and "meta.properties" in row["reason"], row
    os.chmod(meta, 0o644)
    ns = audit(host, broker_user=u.name)["next_start"]
    assert next(d for d in ns["log_dirs"] if d["path"] == host.log_dirs[1])["state"] == "online"


def test_a_leader_epoch_checkpoint_the_broker_user_cannot_read_stops_2_8_and_takes_the_dir_offline_from_3_2_1(
    open_tmp: Path,  # noqa: F811
    broker_users: Users,  # noqa: F811
) -> None:
    """Lab 2.8.2 type-leader_epoch_unreadable: 'Fatal error during KafkaServer startup ... KafkaStorageException'
    (not caught by loadLogs before KAFKA-13773); 3.7.2: the dir offline."""
    u = broker_users.broker
    host = _host_of_broker_user(open_tmp, broker_users)
    part = _partition(host)
    path = os.path.join(part, "leader-epoch-checkpoint")
    if not os.path.exists(path):
        Path(path).write_text("0\n1\n0 0\n")
    os.chown(path, 0, 0)
    os.chmod(path, 0o600)
    ns = audit(host, broker_user=u.name, kafka_version="2.8.2")["next_start"]
    assert ns["broker"] == "exits" and path in ns["reason"] and "KAFKA-13773" in ns["reason"], ns["reason"]
    assert _dir_state(ns, host.log_dirs[1]) == "online"  # the exit: no dir taken offline (lab 2.8.2)
    ns = audit(host, broker_user=u.name, kafka_version="3.7.2")["next_start"]
    assert ns["broker"] == "starts" and _dir_state(ns, host.log_dirs[1]) == "offline"


def test_a_replication_checkpoint_linked_to_nothing_is_offline_on_kraft_and_unknown_in_zookeeper_mode(
    tmp_path: Path,
) -> None:
    """Lab 3.7.2: the dir offline (CheckpointFile's read through the link); lab 2.8.2 (ZooKeeper): online, cause
    not found: 'unknown', not 'offline'."""
    host = simulate(tmp_path)
    path = os.path.join(host.log_dirs[1], "replication-offset-checkpoint")
    _replace(path, "link", str(tmp_path / "gone" / "x"))
    ns = _plan(host)  # KRaft
    assert _dir_state(ns, host.log_dirs[1]) == "offline"
    props = Path(host.server_properties)
    lines = [
        x
        for x in props.read_text().splitlines()
        if not x.startswith(("process.roles", "controller.", "node.id"))
    ]
    props.write_text("\n".join([*lines, "zookeeper.connect=localhost:2181", "broker.id=1"]) + "\n")
    zk = audit(host, kafka_version="2.8.2")["next_start"]
    assert all(path not in (d["reason"] or "") for d in zk["log_dirs"]), zk["log_dirs"]
    assert any(path in u["what"] for u in zk["unknown"]), zk["unknown"]
