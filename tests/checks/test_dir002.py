"""DIR002: meta.properties across the log dirs, as MetaPropertiesEnsemble and the broker's start-up judge them."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from kafka_ops.audit import run_audit
from kafka_ops.facts.model import AuditOptions
from kafka_ops.simulator.host import Failures, HostSpec, SimulatedHost, TopicSpec, simulate_host

from ..conftest import NOW_MS

CLUSTER = "q1Sh-9_ISia_zwGINzRvyQ"


def sim(root: Path, **failures: bool) -> SimulatedHost:
    return simulate_host(
        str(root),
        HostSpec(
            now_ms=NOW_MS,
            topics=[TopicSpec("orders", partitions=2, records_per_partition=100)],
            failures=Failures(**failures),
        ),
    )


def meta_path(d: str) -> str:
    return os.path.join(d, "meta.properties")


def read_meta(d: str) -> dict[str, str]:
    with open(meta_path(d)) as f:
        return dict(
            line.split("=", 1) for line in f.read().splitlines() if "=" in line and not line.startswith("#")
        )


def write_meta(d: str, props: dict[str, str]) -> None:
    with open(meta_path(d), "w") as f:
        f.write("#\n" + "".join(f"{k}={v}\n" for k, v in props.items()))


def edit_meta(d: str, **changes: str | None) -> None:
    props = read_meta(d)
    for k, v in changes.items():
        k = k.replace("_", ".")
        if v is None:
            props.pop(k, None)
        else:
            props[k] = v
    write_meta(d, props)


def to_zookeeper_mode(h: SimulatedHost) -> None:
    """server.properties of a ZooKeeper-mode broker, meta.properties version 0 in every dir."""
    with open(h.server_properties) as f:
        lines = [ln for ln in f.read().splitlines() if not ln.startswith(("process.roles", "node.id"))]
    with open(h.server_properties, "w") as f:
        f.write("\n".join([*lines, "zookeeper.connect=zk1:2181", "broker.id=1", ""]))
    for d in h.log_dirs:
        write_meta(d, {"version": "0", "broker.id": "1", "cluster.id": CLUSTER})


def dir002(h: SimulatedHost, version: str = "3.7.0") -> list[dict]:  # type: ignore[type-arg]
    report = run_audit(
        AuditOptions(
            server_properties=h.server_properties,
            broker_state="stopped",
            now_ms=NOW_MS,
            kafka_version=version,
        )
    )
    return [f for f in report["findings"] if f["check"] == "DIR002"]


def test_dir002_cluster_id_mismatch(tmp_path: Path) -> None:
    h = sim(tmp_path / "h", meta_mismatch=True)  # the simulator gives kafka-2 another cluster's id
    _, two = sorted(h.log_dirs)
    [f] = dir002(h)
    assert (f["severity"], f["path"], f["log_dir"]) == ("critical", meta_path(two), two)
    assert f["details"]["cluster_id"] == "Zz9OtherClusterIdZzzzw" and f["details"]["expected"] == CLUSTER
    assert (
        f"'Invalid cluster.id in: {meta_path(two)}. Expected {CLUSTER}, but read Zz9OtherClusterIdZzzzw'"
        in f["message"]
    )
    # a broker before 3.7 said it differently
    [old] = dir002(h, "3.6.0")
    assert "BrokerMetadata is not consistent across log.dirs" in old["message"]


Plant = Callable[[SimulatedHost, str, str], None]


def _node(h: SimulatedHost, one: str, two: str) -> None:
    edit_meta(two, node_id="7")


def _dup_dir_id(h: SimulatedHost, one: str, two: str) -> None:
    edit_meta(two, directory_id=read_meta(one)["directory.id"])


def _reserved_dir_id(h: SimulatedHost, one: str, two: str) -> None:
    edit_meta(two, directory_id="AAAAAAAAAAAAAAAAAAAAAQ")  # Uuid(0, 1): DirectoryId.UNASSIGNED


def _missing(h: SimulatedHost, one: str, two: str) -> None:
    os.remove(meta_path(two))


def _v1_without_cluster(h: SimulatedHost, one: str, two: str) -> None:
    edit_meta(two, cluster_id=None)


def _unknown_version(h: SimulatedHost, one: str, two: str) -> None:
    edit_meta(one, version="3")  # kafka-1 is the metadata log dir (first of log.dirs)


def _zk_missing(h: SimulatedHost, one: str, two: str) -> None:
    to_zookeeper_mode(h)
    os.remove(meta_path(two))


def _zk_v1(h: SimulatedHost, one: str, two: str) -> None:
    to_zookeeper_mode(h)
    write_meta(two, {"version": "1", "node.id": "1", "cluster.id": CLUSTER})


CASES: list[tuple[str, Plant, str, str, str]] = [
    # (id, plant, dir flagged, severity, what the message must say)
    ("node_id", _node, "two", "critical",
     "'Stored node id 7 doesn't match previous node id 1 in {meta}. If you moved your data"),
    ("duplicate_directory_id", _dup_dir_id, "two", "critical", "'Duplicate directory ID Optional[{dirid}] found. It "
     "was the ID of {one}, but also of {two}'"),
    ("reserved_directory_id", _reserved_dir_id, "two", "critical",
     "'Invalid resrved directory ID AAAAAAAAAAAAAAAAAAAAAQ found in {two}'"),
    ("missing_kraft", _missing, "two", "critical",
     "'No `meta.properties` found in {two} (have you run `kafka-storage.sh` to format the directory?)'"),
    ("v1_without_cluster_id", _v1_without_cluster, "two", "critical",
     "'cluster.id was not specified in the v1 file: {meta}'"),
    ("unknown_version_in_metadata_dir", _unknown_version, "one", "critical",
     "'Unknown meta.properties version number 3'. MetaProperties.Builder throws, so it is the metadata log dir, so "
     "the broker does not start ('Encountered I/O error in metadata log directory {one}. Cannot continue.')"),
    ("missing_zookeeper_mode", _zk_missing, "two", "warning",
     "a ZooKeeper-mode broker writes a new one with the cluster id from ZooKeeper and its own broker id, without "
     "checking what the dir holds: these partitions are adopted"),
    ("v1_in_zookeeper_mode", _zk_v1, "two", "critical",
     "'Found unexpected version in {meta}. ZK-based brokers that are not migrating only support version 0"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("plant", "which", "severity", "says"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_dir002_planted(tmp_path: Path, plant: Plant, which: str, severity: str, says: str) -> None:
    h = sim(tmp_path / "h")
    one, two = sorted(h.log_dirs)
    dirid = read_meta(one)["directory.id"]
    plant(h, one, two)
    flagged = one if which == "one" else two
    [f] = dir002(h)
    assert (f["severity"], f["path"], f["log_dir"]) == (severity, meta_path(flagged), flagged)
    assert says.format(meta=meta_path(flagged), one=one, two=two, dirid=dirid) in f["message"]


def test_dir002_no_false_alarm_on_a_healthy_host(tmp_path: Path) -> None:
    h = sim(tmp_path / "h")
    assert dir002(h) == []
    # ZooKeeper mode: v0 files; a new empty log dir without meta.properties is initialised by the broker
    to_zookeeper_mode(h)
    empty = os.path.join(os.path.dirname(h.log_dirs[0]), "kafka-3")
    os.makedirs(empty)
    with open(h.server_properties, "a") as f:
        f.write(f"log.dirs={','.join([*h.log_dirs, empty])}\n")
    assert dir002(h) == []
