"""DIR001: which filesystem a log dir is on. The mount table is given to the collector (read_mountinfo) so that the
test does not depend on how the test machine mounts /tmp; everything else (statvfs, realpath) is real."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kafka_ops.audit import run_audit
from kafka_ops.facts import collect
from kafka_ops.facts.model import AuditOptions
from kafka_ops.simulator.host import HostSpec, SimulatedHost, TopicSpec, simulate_host

from ..conftest import NOW_MS


@pytest.fixture
def sim(tmp_path: Path) -> SimulatedHost:
    return simulate_host(
        str(tmp_path / "h"),
        HostSpec(now_ms=NOW_MS, topics=[TopicSpec("orders", partitions=2, records_per_partition=100)]),
    )


def dir001(
    h: SimulatedHost,
    monkeypatch: pytest.MonkeyPatch,
    mounts: list[tuple[str, str, str]],
    expected: dict[str, str] | None = None,
    log_dirs: list[str] | None = None,
    fstab: str = "/nonexistent/fstab",
    unit_dirs: tuple[str, ...] = (),
) -> list[dict]:  # type: ignore[type-arg]
    monkeypatch.setattr(collect, "read_mountinfo", lambda path="/proc/self/mountinfo": mounts)
    opts = AuditOptions(
        server_properties=h.server_properties, log_dirs=log_dirs or [], broker_state="stopped", now_ms=NOW_MS,
        kafka_version="3.7.0", fstab=fstab, mount_unit_dirs=unit_dirs,
    )  # fmt: skip
    if expected is not None:
        opts.expected_mounts = expected  # type: ignore[attr-defined]  # proposed AuditOptions field
    return sorted((f for f in run_audit(opts)["findings"] if f["check"] == "DIR001"), key=lambda f: f["path"])


ROOT = ("/", "ext4", "/dev/sda1")


def test_dir001_log_dirs_on_the_root_filesystem(sim: SimulatedHost, monkeypatch: pytest.MonkeyPatch) -> None:
    # a single-disk VM is a supported setup: a warning about the OS disk filling, not a critical
    found = dir001(sim, monkeypatch, [ROOT])
    assert [f["path"] for f in found] == sorted(sim.log_dirs)
    for f in found:
        assert f["severity"] == "warning"
        d = f["details"]
        assert (d["mount_point"], d["fstype"], d["source"], d["on_root_fs"], d["is_mount_point"]) == (
            "/", "ext4", "/dev/sda1", True, False,
        )  # fmt: skip
        st = os.statvfs(f["path"])
        assert d["total_bytes"] == st.f_blocks * st.f_frsize and 0 < d["free_bytes"] <= d["total_bytes"]
        assert "is on the root filesystem (ext4 /dev/sda1 mounted at /;" in f["message"]
        assert f"RequiresMountsFor={f['path']}" in f["remediation"]


def test_dir001_tmpfs_missing_dir_and_wrong_mount(
    sim: SimulatedHost, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = os.path.dirname(sim.log_dirs[0])
    # tmpfs: gone at reboot
    [f] = dir001(sim, monkeypatch, [ROOT, (data, "tmpfs", "tmpfs")], log_dirs=[sim.log_dirs[0]])
    assert (
        f["severity"] == "critical" and "memory-backed" in f["message"] and f["details"]["fstype"] == "tmpfs"
    )
    # a log dir that does not exist: the broker would create it wherever its parent is
    missing = os.path.join(data, "kafka-9")
    [f] = dir001(sim, monkeypatch, [ROOT], log_dirs=[missing])
    assert (f["severity"], f["path"]) == ("critical", missing)
    assert f["details"]["deepest_existing_ancestor"] == data
    assert f"'Log directory {missing} not found, creating it.'" in f["message"]
    # an expected mount that is not there: the log dir is on the parent mount instead
    disk1 = os.path.join(data, "kafka-1")
    [f] = dir001(
        sim, monkeypatch, [ROOT, (data, "xfs", "/dev/sdb1")], expected={sim.log_dirs[0]: disk1},
        log_dirs=[sim.log_dirs[0]],
    )  # fmt: skip
    assert f["severity"] == "critical" and f["details"]["expected_mount"] == disk1
    assert (
        f"not on the expected mount {disk1}" in f["message"]
        and f"mounted at {data} (xfs /dev/sdb1)" in f["message"]
    )


def test_dir001_no_false_alarm_on_a_dedicated_mount(
    sim: SimulatedHost, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = os.path.dirname(sim.log_dirs[0])
    # log dirs below a dedicated mount (/data/kafka-1 on /data): fine
    assert dir001(sim, monkeypatch, [ROOT, (data, "xfs", "/dev/sdb1")]) == []
    # each log dir a mount point of its own: fine
    assert (
        dir001(
            sim,
            monkeypatch,
            [ROOT, *((d, "ext4", f"/dev/sd{c}1") for d, c in zip(sim.log_dirs, "bc", strict=True))],
        )
        == []
    )
    # on the root filesystem, but the operator says that is intended (--expect-mount DIR=/)
    assert dir001(sim, monkeypatch, [ROOT], expected={d: "/" for d in sim.log_dirs}) == []
    # the expected mount is there
    assert (
        dir001(sim, monkeypatch, [ROOT, (data, "xfs", "/dev/sdb1")], expected={d: data for d in sim.log_dirs})
        == []
    )


def test_dir001_configured_mount_that_is_not_mounted(
    sim: SimulatedHost, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    data = os.path.dirname(sim.log_dirs[0])
    fstab = tmp_path / "fstab"
    fstab.write_text(
        f"# <fs> <mount> <type>\nUUID=1234 /boot ext4 defaults 0 2\n/dev/sdb1 {data} xfs defaults 0 0\n"
    )
    found = dir001(sim, monkeypatch, [ROOT], fstab=str(fstab))
    assert [f["severity"] for f in found] == ["critical", "critical"]
    assert all(f"should be on the filesystem mounted at {data} ({fstab}:3)" in f["message"] for f in found)
    assert all(f["details"]["configured_mount"] == data for f in found)
    # mounted as configured: nothing
    assert dir001(sim, monkeypatch, [ROOT, (data, "xfs", "/dev/sdb1")], fstab=str(fstab)) == []
    # the same from a systemd mount unit (Where=), for the first log dir only
    units = tmp_path / "units"
    units.mkdir()
    (units / "data-kafka1.mount").write_text(f"[Mount]\nWhat=/dev/sdc1\nWhere={sim.log_dirs[0]}\nType=xfs\n")
    [f] = dir001(sim, monkeypatch, [ROOT, (data, "xfs", "/dev/sdb1")], unit_dirs=(str(units),))
    assert f["path"] == sim.log_dirs[0] and f["severity"] == "critical"
    assert f["details"]["configured_in"] == str(units / "data-kafka1.mount")


def test_dir001_empty_log_dir_that_should_hold_data(
    sim: SimulatedHost, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil

    # the second disk did not mount: its log dir is an empty directory on the root filesystem
    empty = sim.log_dirs[1]
    shutil.rmtree(empty)
    os.mkdir(empty)
    found = {f["path"]: f for f in dir001(sim, monkeypatch, [ROOT])}
    assert (
        found[empty]["severity"] == "critical" and "empty, but it should hold data" in found[empty]["message"]
    )
    assert sim.log_dirs[0] in found[empty]["details"]["empty_but_expected"]
    assert found[sim.log_dirs[0]]["severity"] == "warning"
    # a brand-new broker: every log dir empty, nothing says they should hold data
    shutil.rmtree(sim.log_dirs[0])
    os.mkdir(sim.log_dirs[0])
    assert {f["severity"] for f in dir001(sim, monkeypatch, [ROOT])} == {"warning"}
