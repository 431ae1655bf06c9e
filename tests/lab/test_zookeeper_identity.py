"""ENV002 against a real ZooKeeper (the lab's 2.8.2 jars, on loopback): `kafka-ops audit --zookeeper` reads
/cluster/id read-only with a deadline and compares it with meta.properties, as a ZooKeeper-mode broker does at its
start (InconsistentClusterIdException); without an answer the plan says the comparison is unknown, never that the
broker starts as if it had been made. About 10 s (a ZooKeeper JVM, no broker)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from kafka_lab.broker import LabBroker, free_port
from kafka_ops.simulator.host import HostSpec, TopicSpec, simulate_host
from tests.conftest import NOW_MS
from tests.lab.conftest import _lab_skip_reason

pytestmark = pytest.mark.lab

kazoo = pytest.importorskip("kazoo.client", reason="kazoo (the zookeeper extra) is not installed")


@pytest.fixture(scope="module")
def zookeeper() -> Iterator[str]:
    """The loopback address of a real ZooKeeper (the one Kafka 2.8.2 ships), with /cluster/id under /kafka."""
    reason = _lab_skip_reason()
    if reason:
        pytest.skip(reason)
    with LabBroker("2.8.2") as b:
        b.start_zookeeper()
        at = f"127.0.0.1:{b.zk_port}"
        zk = kazoo.KazooClient(hosts=at)
        zk.start(timeout=10)
        zk.create("/kafka/cluster/id", b'{"version":"1","id":"zk-cluster-id-00000000"}', makepath=True)
        zk.stop()
        zk.close()
        yield at


def zk_host(root: Path, connect: str) -> tuple[str, str]:
    """A ZooKeeper-mode host (version-0 meta.properties); its server.properties and meta's cluster.id."""
    h = simulate_host(str(root), HostSpec(now_ms=NOW_MS, topics=[TopicSpec("orders", partitions=1)]))
    text = Path(h.server_properties).read_text()
    text = text.replace(
        "process.roles=broker,controller\nnode.id=1\n", f"broker.id=1\nzookeeper.connect={connect}\n"
    )
    Path(h.server_properties).write_text(text)
    cid = "q1Sh-9_ISia_zwGINzRvyQ"
    for d in h.log_dirs:
        Path(d, "meta.properties").write_text(f"version=0\nbroker.id=1\ncluster.id={cid}\n")
    return h.server_properties, cid


def plan(cli: Callable[..., tuple[int, str, str]], props: str, *extra: str) -> tuple[dict[str, Any], str]:
    code, out, err = cli(
        "audit", "--server-properties", props, "--broker-state", "stopped", "--kafka-version", "2.8.2",
        "--cluster-timeout", "3s", "-f", "json", *extra,
    )  # fmt: skip
    assert code in (0, 1), err
    return json.loads(out), err


def test_zookeeper_cluster_id_against_meta_properties(
    zookeeper: str, tmp_path: Path, cli: Callable[..., tuple[int, str, str]]
) -> None:
    # another cluster's ZooKeeper (the chroot of zookeeper.connect included): the broker exits
    props, cid = zk_host(tmp_path / "a", f"{zookeeper}/kafka")
    report, _ = plan(cli, props, "--zookeeper", "auto")
    ns = report["next_start"]
    assert (ns["broker"], ns["check"]) == ("exits", "ENV002")
    assert f"has /cluster/id zk-cluster-id-00000000, not the cluster.id {cid}" in ns["reason"]
    assert "InconsistentClusterIdException" in ns["reason"]
    [f] = [f for f in report["findings"] if f["check"] == "ENV002"]
    assert f["severity"] == "critical" and f["details"]["zookeeper_cluster_id"] == "zk-cluster-id-00000000"
    assert not [u for u in ns["unknown"] if "/cluster/id" in u["what"]]

    # the same ensemble without the chroot: no /cluster/id, the broker would create a new one: exits too
    props, _ = zk_host(tmp_path / "b", zookeeper)
    ns = plan(cli, props, "--zookeeper", "auto")[0]["next_start"]
    assert (ns["broker"], ns["check"]) == ("exits", "ENV002") and "has no /cluster/id" in ns["reason"]

    # the broker's own cluster id: nothing to say
    kz = kazoo.KazooClient(hosts=zookeeper)
    kz.start(timeout=10)
    kz.create("/own/cluster/id", json.dumps({"version": "1", "id": cid}).encode(), makepath=True)
    kz.stop()
    kz.close()
    props, _ = zk_host(tmp_path / "c", f"{zookeeper}/own")
    report, _ = plan(cli, props, "--zookeeper", "auto")
    assert report["next_start"]["broker"] == "starts"
    assert not [f for f in report["findings"] if f["check"] == "ENV002"]
    assert not [u for u in report["next_start"]["unknown"] if "/cluster/id" in u["what"]]


def test_no_answer_is_unknown_never_starts_as_checked(
    tmp_path: Path, cli: Callable[..., tuple[int, str, str]]
) -> None:
    dead = f"127.0.0.1:{free_port()}"  # nothing listens there
    props, cid = zk_host(tmp_path / "a", dead)
    report, err = plan(cli, props, "--zookeeper", "auto")
    ns = report["next_start"]
    [u] = [u for u in ns["unknown"] if "/cluster/id" in u["what"]]
    assert cid in u["what"] and f"ZooKeeper at {dead} did not answer within 3 s" in u["reason"]
    assert "did not answer" in err
    assert {s["input"]: s["reason"] for s in report["skipped"] if "input" in s}["zookeeper"].startswith(
        f"ZooKeeper at {dead} did not answer"
    )
    # not asked at all: unknown too, saying how to ask
    ns = plan(cli, props)[0]["next_start"]
    [u] = [u for u in ns["unknown"] if "/cluster/id" in u["what"]]
    assert "ZooKeeper was not asked (--zookeeper auto" in u["reason"]
    assert os.path.exists(props)


def test_zookeeper_topic_overrides_and_dynamic_defaults_decide_the_plan(
    zookeeper: str, tmp_path: Path, cli: Callable[..., tuple[int, str, str]]
) -> None:
    # a ZooKeeper-mode host whose topics' configs live in ZooKeeper only (issue 36 §3): the cluster's dynamic
    # default (/config/brokers/<default>) keeps data forever, "orders" has its own override of one hour
    # (/config/topics/orders), "clicks" none; the records span 10 days, server.properties keeps 7
    root = tmp_path / "h"
    h = simulate_host(
        str(root),
        HostSpec(
            now_ms=NOW_MS,
            topics=[
                TopicSpec("orders", partitions=1, span_ms=10 * 86_400_000, segment_bytes=20_000),
                TopicSpec("clicks", partitions=1, span_ms=10 * 86_400_000, segment_bytes=20_000),
            ],
        ),
    )
    text = Path(h.server_properties).read_text()
    text = text.replace(
        "process.roles=broker,controller\nnode.id=1\n", f"broker.id=1\nzookeeper.connect={zookeeper}/cfg\n"
    )
    Path(h.server_properties).write_text(text)
    cid = "cfgCluster-00000000000A"
    for d in h.log_dirs:
        Path(d, "meta.properties").write_text(f"version=0\nbroker.id=1\ncluster.id={cid}\n")

    def deleted(report: dict[str, Any], topic: str) -> list[dict[str, Any]]:
        return [s for s in report["next_start"]["segments"] if s["topic"] == topic and s.get("deleted_by")]

    kz = kazoo.KazooClient(hosts=zookeeper)
    kz.start(timeout=10)
    kz.create("/cfg/cluster/id", json.dumps({"version": "1", "id": cid}).encode(), makepath=True)
    # before any override: both topics lose their old segments to server.properties' retention, and the report
    # says the broker's defaults were assumed (ZooKeeper was not asked)
    before, _ = plan(cli, h.server_properties)
    assert deleted(before, "orders") and deleted(before, "clicks")
    assert before["next_start"]["config_note"]
    kz.create(
        "/cfg/config/topics/orders", b'{"version":1,"config":{"retention.ms":"3600000"}}', makepath=True
    )
    kz.create(
        "/cfg/config/brokers/<default>", b'{"version":1,"config":{"log.retention.ms":"-1"}}', makepath=True
    )
    kz.stop()
    kz.close()
    after, _ = plan(cli, h.server_properties, "--zookeeper", "auto")
    assert deleted(after, "clicks") == []  # the dynamic cluster default: kept forever
    gone = deleted(after, "orders")  # its own override: one hour
    assert len(gone) == len(deleted(before, "orders")) and {s["config_source"] for s in gone} == {
        "ZooKeeper /config/topics"
    }
    tc = after["inputs"]["topic_configs"]
    assert tc["source"] == "--zookeeper" and tc["value"] == f"ZooKeeper at {zookeeper}/cfg (/config/topics)"
    assert (
        tc["topics"]["orders"] == "ZooKeeper /config/topics" and tc["topics"]["clicks"] == "broker defaults"
    )
    assert tc["dynamic"] == {
        f"dynamic cluster default (ZooKeeper at {zookeeper}/cfg)": {"log.retention.ms": "-1"}
    }
    assert not after["next_start"].get("config_note")
    assert after["inputs"]["zookeeper"]["value"] == {"connect": f"{zookeeper}/cfg", "cluster_id": cid}
