"""SHUT004 and ``next_start.after_failed_start``: the clean-shutdown markers a start that fails while loading the
logs leaves, per release and mode (broker.failed_start), and the critical finding where a ZooKeeper-mode broker of
2.8.0-3.5.1 writes one into a log dir that needs recovery (KAFKA-15375)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from kafka_ops.render.models import validate
from kafka_ops.simulator.host import SimulatedHost

from .index_hosts import audit, bases, seg_path, simulate
from .test_dir002 import edit_meta, to_zookeeper_mode

MARKER = ".kafka_cleanshutdown"


def failing_host(root: Path, *, unclean: bool = True, zk: bool = True) -> SimulatedHost:
    """Two log dirs: the first without its marker (an unclean stop) when ``unclean``, and in the second (clean) a
    partition whose active segment ends in 4 KiB of zeros (a power loss): not recovered after a clean stop, so
    LogSegment.readNextOffset throws CorruptRecordException and loading fails (SHUT002)."""
    h = simulate(root)
    if zk:
        to_zookeeper_mode(h)
    if unclean:
        os.remove(os.path.join(h.log_dirs[0], MARKER))
    part = next(p for p in sorted(h.partitions.values()) if p.startswith(h.log_dirs[1] + "/"))
    with open(seg_path(part, bases(part)[-1], ".log"), "ab") as f:
        f.write(b"\0" * 4096)
    return h


def after(report: dict[str, Any]) -> list[tuple[str, str, bool]] | None:
    validate(report)
    a = report["next_start"]["after_failed_start"]
    if a is None:
        return None
    return [(d["marker"], d["next_start"], d["unsafe"]) for d in a["log_dirs"]]


def shut004(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [f for f in report["findings"] if f["check"] == "SHUT004"]


@pytest.mark.parametrize("version", ["2.8.0", "2.8.2", "3.2.3", "3.4.1", "3.5.1"])
def test_zookeeper_mode_2_8_to_3_5_1_recreates_every_marker_and_is_critical(
    tmp_path: Path, version: str
) -> None:
    h = failing_host(tmp_path)
    report = audit(h, kafka_version=version)
    ns = report["next_start"]
    assert ns["broker"] == "exits" and ns["check"] == "SHUT002"
    assert after(report) == [("recreated", "skips_recovery", True), ("recreated", "skips_recovery", False)]
    assert ns["after_failed_start"]["check"] == "SHUT004"
    [f] = shut004(report)
    assert f["severity"] == "critical" and f["log_dir"] == h.log_dirs[0]
    assert "KAFKA-15375" in f["message"] and "[SHUT002]" in f["message"]
    assert f"rm -- {h.log_dirs[0]}/{MARKER}" in f["remediation"]


def test_zookeeper_mode_3_5_2_and_later_write_it_only_where_it_was_or_loading_completed(
    tmp_path: Path,
) -> None:
    h = failing_host(tmp_path)
    for version in ("3.5.2", "3.6.0", "3.7.2"):
        report = audit(h, kafka_version=version)
        assert after(report) == [("depends", "depends", False), ("recreated", "skips_recovery", False)], (
            version
        )
        assert shut004(report) == [] and report["next_start"]["after_failed_start"]["check"] is None


def test_up_to_2_7_no_marker_is_written(tmp_path: Path) -> None:
    h = failing_host(tmp_path)
    report = audit(h, kafka_version="2.7.0")
    assert report["next_start"]["broker"] == "exits"
    # the clean dir is the one whose load fails: loadLogs never deletes its marker
    assert after(report) == [("kept", "recovers", False), ("kept", "skips_recovery", False)]
    assert shut004(report) == []
    h2 = failing_host(tmp_path / "two", unclean=False)
    report = audit(h2, kafka_version="2.7.0")
    assert after(report) == [("depends", "depends", False), ("kept", "skips_recovery", False)]


@pytest.mark.parametrize("version", ["3.5.2", "3.7.2", "4.1.0"])
def test_kraft_halts_the_markers_deleted_at_load_stay_deleted(tmp_path: Path, version: str) -> None:
    h = failing_host(tmp_path, zk=False)
    report = audit(h, kafka_version=version)
    assert report["next_start"]["broker"] == "exits"
    assert after(report) == [("kept", "recovers", False), ("deleted", "recovers", False)]
    assert shut004(report) == []


def test_kraft_before_3_4_1_is_not_predicted(tmp_path: Path) -> None:
    h = failing_host(tmp_path, zk=False)
    report = audit(h, kafka_version="3.3.2")
    assert after(report) == [("depends", "depends", False), ("depends", "depends", False)]
    assert shut004(report) == []


def test_a_clean_host_that_fails_in_loading_says_nothing_critical(tmp_path: Path) -> None:
    h = failing_host(tmp_path, unclean=False)
    report = audit(h, kafka_version="2.8.2")
    assert report["next_start"]["broker"] == "exits"
    assert after(report) == [("recreated", "skips_recovery", False), ("recreated", "skips_recovery", False)]
    assert shut004(report) == []


def test_an_unclean_host_that_starts_says_nothing(tmp_path: Path) -> None:
    h = simulate(tmp_path)
    to_zookeeper_mode(h)
    os.remove(os.path.join(h.log_dirs[0], MARKER))
    report = audit(h, kafka_version="2.8.2")
    assert report["next_start"]["broker"] == "starts" and after(report) is None
    assert shut004(report) == []


def test_an_exit_before_loading_changes_no_marker(tmp_path: Path) -> None:
    """meta.properties of another cluster: KafkaServer.startup refuses it before LogManager exists (DIR002)."""
    h = failing_host(tmp_path)
    edit_meta(h.log_dirs[1], cluster_id="AAAAAAAAAAAAAAAAAAAAAA")
    report = audit(h, kafka_version="2.8.2")
    assert report["next_start"]["broker"] == "exits" and report["next_start"]["check"] == "DIR002"
    assert after(report) is None and shut004(report) == []


def test_an_unparseable_leftover_is_a_loading_failure_too(tmp_path: Path) -> None:
    h = simulate(tmp_path)
    to_zookeeper_mode(h)
    os.remove(os.path.join(h.log_dirs[0], MARKER))
    part = next(p for p in sorted(h.partitions.values()) if p.startswith(h.log_dirs[1] + "/"))
    Path(part, "backup.log.cleaned").write_bytes(b"x")
    report = audit(h, kafka_version="3.2.3")
    assert report["next_start"]["check"] == "DIR003"
    assert after(report) == [("recreated", "skips_recovery", True), ("recreated", "skips_recovery", False)]
    [f] = shut004(report)
    assert "[DIR003]" in f["message"]


def test_a_dir_listing_that_throws_leaves_the_later_dirs_alone_in_kraft(tmp_path: Path) -> None:
    """lost+found in the first log dir: parseTopicPartitionName throws while loadLogs lists it, before it
    reaches the second dir, whose marker stays."""
    h = simulate(tmp_path)
    os.makedirs(os.path.join(h.log_dirs[0], "lost+found"))
    report = audit(h, kafka_version="3.7.2")
    assert report["next_start"]["broker"] == "exits"
    assert after(report) == [("deleted", "recovers", False), ("kept", "skips_recovery", False)]


def test_the_text_output_says_which_dir_gets_the_marker(tmp_path: Path) -> None:
    from kafka_ops.broker.plan import plan_sentences

    h = failing_host(tmp_path)
    lines = plan_sentences(audit(h, kafka_version="2.8.2")["next_start"])
    assert any(h.log_dirs[0] in ln and "SHUT004" in ln for ln in lines), lines
    assert not any("SHUT004" in ln for ln in plan_sentences(audit(h, kafka_version="3.5.2")["next_start"]))
