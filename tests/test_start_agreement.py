"""One rule for "the broker will not start": a critical finding that says the broker does not start, and the
report's ``next_start``, never disagree (issue: a critical DIR002 said "does not start" while the plan said
"starts"). The plan decides starts/exits/offline; every check that speaks of the start reads the same rule."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import fields
from pathlib import Path

import pytest

from kafka_ops.audit import run_audit
from kafka_ops.facts.model import AuditOptions
from kafka_ops.simulator.host import Failures, HostSpec, SimulatedHost, TopicSpec, simulate_host
from tests.checks.test_dir002 import CASES, edit_meta, read_meta, write_meta
from tests.checks.test_dir002 import sim as host
from tests.checks.test_dir006 import image_of, topic_id_of, write_metadata_log

from .conftest import NOW_MS

# what a finding says when it means the next start fails as a whole (not a dir, not a conditional)
SAYS_NO_START = re.compile(
    r"the broker does not start|(?:broker|it) exits (?:before|instead)|the broker refuses to start"
    r"|so the broker does not start|(?<!if it is the KRaft metadata log dir )the broker does not start at all"
)
CONDITIONAL = re.compile(r"\bif it is the (?:KRaft )?metadata log dir\b|\bwhen no log dir is left\b")


def audit(h: SimulatedHost, version: str = "3.7.0") -> dict:  # type: ignore[type-arg]
    return run_audit(
        AuditOptions(
            server_properties=h.server_properties,
            broker_state="stopped",
            now_ms=NOW_MS,
            kafka_version=version,
        )
    )


def assert_agree(report: dict) -> None:  # type: ignore[type-arg]
    ns = report["next_start"]
    critical = [f for f in report["findings"] if f["severity"] == "critical"]
    stop = [
        f for f in critical if SAYS_NO_START.search(f["message"]) and not CONDITIONAL.search(f["message"])
    ]
    if stop:
        assert ns["broker"] == "exits", (
            f"{stop[0]['check']} says the broker does not start, the plan says it starts: {stop[0]['message']}"
        )
        assert ns["check"] in {f["check"] for f in stop}, (ns["check"], [f["check"] for f in stop])
    if ns["broker"] == "exits":
        assert ns["check"] in {f["check"] for f in critical}, (
            f"the plan says the broker exits ({ns['check']}: {ns['reason']}) and no critical finding says why"
        )
    for d in ns["log_dirs"]:
        if d["state"] == "offline":
            assert d["check"] in {
                f["check"] for f in report["findings"] if f["severity"] in ("critical", "error")
            }


Plant = Callable[[SimulatedHost, str, str], None]


def _v1_without_cluster_beside_v0(h: SimulatedHost, one: str, two: str) -> None:
    """The issue's case: a v1 meta.properties without cluster.id beside a v0 one."""
    write_meta(one, {"version": "0", "broker.id": "1", "cluster.id": read_meta(one)["cluster.id"]})
    edit_meta(two, cluster_id=None)


def _unknown_version_not_metadata_dir(h: SimulatedHost, one: str, two: str) -> None:
    edit_meta(two, version="3")


def _metadata_log_in_a_data_dir(h: SimulatedHost, one: str, two: str) -> None:
    os.makedirs(os.path.join(two, "__cluster_metadata-0"))


def _bad_config_value(h: SimulatedHost, one: str, two: str) -> None:
    with open(h.server_properties, "a") as f:
        f.write("log.retention.ms=7d\n")


def _zero_filled_active_tail(h: SimulatedHost, one: str, two: str) -> None:
    """Power loss after a clean stop: zeros after the last batch of an active segment (the marker stays)."""
    part = sorted(d for d in os.listdir(one) if d.startswith("orders-"))[0]
    log = sorted(f for f in os.listdir(os.path.join(one, part)) if f.endswith(".log"))[-1]
    with open(os.path.join(one, part, log), "ab") as f:
        f.write(bytes(4096))


def _partition_file(one: str, name: str) -> str:
    part = sorted(d for d in os.listdir(one) if d.startswith("orders-"))[0]
    return os.path.join(one, part, name)


def _partition_metadata(content: bytes) -> Plant:
    """Power-loss damage to a partition's topic id file (DIR005): an NPE (no line) or an IOException at load."""

    def plant(h: SimulatedHost, one: str, two: str) -> None:
        with open(_partition_file(two, "partition.metadata"), "wb") as f:
            f.write(content)

    return plant


def _corrupt_producer_snapshot(h: SimulatedHost, one: str, two: str) -> None:
    """Deleted at load, the state rebuilt: no finding, the broker starts."""
    part = os.path.dirname(_partition_file(one, "x"))
    latest = max((f for f in os.listdir(part) if f.endswith(".snapshot")), key=lambda f: int(f.split(".")[0]))
    with open(os.path.join(part, latest), "wb") as f:
        f.write(bytes(64))


def _partition_metadata_missing(h: SimulatedHost, one: str, two: str) -> None:
    """A live partition without partition.metadata beside this host's metadata log (DIR006): renamed -stray and
    created again empty on 3.7.1+, the halt after loading on 3.7.0 (KAFKA-16814), served as it is before."""
    tid = topic_id_of(h.partitions["orders-0"])  # the simulator draws a topic id per dir: one for the topic
    with open(os.path.join(h.partitions["orders-1"], "partition.metadata"), "w") as f:
        f.write(f"version: 0\ntopic_id: {tid}\n")
    write_metadata_log(h.log_dirs[0], [image_of(h)])
    os.remove(_partition_file(two, "partition.metadata"))


def _meta_properties(content: bytes) -> Plant:
    """Power-loss damage to the second dir's meta.properties: Properties.load(InputStream) reads any bytes as
    ISO-8859-1, so garbage is a file without version or node id (a lab 3.7.2 broker: 'Error: node ID not found in
    .../data-1', the exit), not an unreadable one."""

    def plant(h: SimulatedHost, one: str, two: str) -> None:
        with open(os.path.join(two, "meta.properties"), "wb") as f:
            f.write(content)

    return plant


PLANTS: list[tuple[str, Plant]] = [(c[0], c[1]) for c in CASES] + [
    ("partition_metadata_empty", _partition_metadata(b"")),
    ("partition_metadata_zero_filled", _partition_metadata(bytes(48))),
    ("partition_metadata_truncated", _partition_metadata(b"version: 0\ntopic_id:")),
    ("partition_metadata_missing", _partition_metadata_missing),
    ("meta_properties_garbage", _meta_properties(b"\x7fELF\x02\x01\x01\x00" + bytes(range(128, 256)))),
    ("meta_properties_zero_filled", _meta_properties(bytes(96))),
    ("corrupt_producer_snapshot", _corrupt_producer_snapshot),
    ("v1_without_cluster_beside_v0", _v1_without_cluster_beside_v0),
    ("unknown_version_not_metadata_dir", _unknown_version_not_metadata_dir),
    ("metadata_log_in_a_data_dir", _metadata_log_in_a_data_dir),
    ("bad_config_value", _bad_config_value),
    ("zero_filled_active_tail", _zero_filled_active_tail),
]


@pytest.mark.parametrize("plant", [p for _, p in PLANTS], ids=[n for n, _ in PLANTS])
@pytest.mark.parametrize("version", ["2.8.2", "3.6.0", "3.7.0", "4.1.0"])
def test_planted_damage(tmp_path: Path, plant: Plant, version: str) -> None:
    h = host(tmp_path / "h")
    one, two = sorted(h.log_dirs)
    plant(h, one, two)
    assert_agree(audit(h, version))


FAILURES = [f.name for f in fields(Failures) if f.type in (bool, "bool") and f.name != "running"]


@pytest.mark.parametrize("failure", FAILURES)
def test_each_simulated_failure(tmp_path: Path, failure: str) -> None:
    assert_agree(audit(host(tmp_path / "h", **{failure: True})))


def test_a_garbage_meta_properties_stops_a_kraft_broker(tmp_path: Path) -> None:
    """Not 'unreadable' (which would be the dir's own failure): the bytes are read as ISO-8859-1 and hold no node
    id, so a KRaft broker exits before loading (DIR002)."""
    h = host(tmp_path / "h")
    one, two = sorted(h.log_dirs)
    _meta_properties(b"\x7fELF\x02\x01\x01\x00" + bytes(range(128, 256)))(h, one, two)
    report = audit(h, "3.7.0")
    assert report["next_start"]["broker"] == "exits" and report["next_start"]["check"] == "DIR002"
    assert "node ID not found" in report["next_start"]["reason"]


def test_the_issue_case_exits(tmp_path: Path) -> None:
    h = host(tmp_path / "h")
    one, two = sorted(h.log_dirs)
    _v1_without_cluster_beside_v0(h, one, two)
    ns = audit(h)["next_start"]
    assert (ns["broker"], ns["check"]) == ("exits", "DIR002") and "cluster.id was not specified" in ns[
        "reason"
    ]


def test_a_zero_filled_active_tail_after_a_clean_stop_exits(tmp_path: Path) -> None:
    h = host(tmp_path / "h")
    one, two = sorted(h.log_dirs)
    _zero_filled_active_tail(h, one, two)
    report = audit(h)
    ns = report["next_start"]
    assert (ns["broker"], ns["check"]) == ("exits", "SHUT002"), ns
    [f] = [f for f in report["findings"] if f["check"] == "SHUT002"]
    assert f["severity"] == "critical" and "the broker does not start" in f["message"]
    # without the marker the start recovers the segment and truncates the zeros instead
    os.remove(os.path.join(one, ".kafka_cleanshutdown"))
    report = audit(h)
    assert report["next_start"]["broker"] == "starts"
    [f] = [f for f in report["findings"] if f["check"] == "SHUT002"]
    assert f["severity"] != "critical" and f["details"]["truncated_at_next_start"]


# -- the broker user's reach (PERM003), with real users ------------------------------------------------------

from tests.checks.osusers import Users, broker_users, open_tmp  # noqa: E402, F401


def _perm_host(root: Path, users: Users) -> SimulatedHost:
    return simulate_host(
        str(root),
        HostSpec(
            now_ms=NOW_MS,
            topics=[TopicSpec("orders", partitions=2, records_per_partition=100)],
            broker_user=users.broker.name,
            broker_uid=users.broker.uid,
            broker_gid=users.broker.gid,
        ),
    )


@pytest.mark.parametrize("where", ["parent", "metadata_root", "data_root"])
def test_unreachable_log_dirs(open_tmp: Path, broker_users: Users, where: str) -> None:  # noqa: F811
    h = _perm_host(open_tmp / "h", broker_users)
    one, two = sorted(h.log_dirs)  # one: the KRaft metadata log dir (first of log.dirs)
    target = {"parent": os.path.dirname(one), "metadata_root": one, "data_root": two}[where]
    os.chown(target, 0, 0)
    os.chmod(target, 0o700)
    report = run_audit(
        AuditOptions(
            server_properties=h.server_properties, broker_state="stopped", now_ms=NOW_MS,
            broker_user=broker_users.broker.name, kafka_version="3.7.0",
        )
    )  # fmt: skip
    assert_agree(report)
    ns = report["next_start"]
    if where == "data_root":
        assert ns["broker"] == "starts"
        assert {d["path"]: d["state"] for d in ns["log_dirs"]} == {one: "online", two: "offline"}
    else:  # the metadata log dir's meta.properties cannot be opened: KafkaRaftServer does not start
        assert (ns["broker"], ns["check"]) == ("exits", "PERM003"), ns
