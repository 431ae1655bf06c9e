"""No false alarm on a healthy host: what the simulator writes for a cleanly stopped broker passes the default
gate, and on a filesystem of its own (a loop-mounted ext4 image, as a data disk) nothing is at warning or above."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from kafka_ops.simulator.host import HostSpec, simulate_host

from .conftest import NOW_MS

KAFKA_OPS = shutil.which("kafka-ops") or os.path.join(os.path.dirname(sys.executable), "kafka-ops")


def audit(root: Path, *extra: str) -> tuple[int, dict]:  # type: ignore[type-arg]
    args = [
        KAFKA_OPS, "audit", "--server-properties", str(root / "etc/kafka/server.properties"),
        "--systemd-unit", str(root / "etc/systemd/system/kafka.service"),
        "--topic-configs", str(root / "etc/kafka/topic-configs.json"),
        "--broker-log", str(root / "var/log/kafka/server.log"), "--broker-log", str(root / "var/log/kafka/log-cleaner.log"),
        "--kafka-version", "3.7.0", "--now", str(NOW_MS), "--broker-state", "stopped", "--format", "json", *extra,
    ]  # fmt: skip
    r = subprocess.run(args, capture_output=True, text=True)
    assert r.returncode in (0, 1), r.stderr
    return r.returncode, json.loads(r.stdout)


def at_least_warning(report: dict) -> list[tuple[str, str, str]]:  # type: ignore[type-arg]
    return [(f["check"], f["severity"], f["path"]) for f in report["findings"] if f["severity"] != "info"]


def test_healthy_host_on_the_root_filesystem_passes_the_gate(tmp_path: Path) -> None:
    simulate_host(str(tmp_path / "h"), HostSpec(now_ms=NOW_MS))
    code, report = audit(tmp_path / "h")
    assert code == 0 and report["gate"]["passed"]
    assert report["next_start"]["broker"] == "starts" and report["next_start"]["segments"] == []
    # the only thing said above info: the data shares the OS disk (a warning, not a gate failure) when it does
    assert {(c, s) for c, s, _ in at_least_warning(report)} <= {("DIR001", "warning")}


@pytest.fixture
def data_disk(tmp_path: Path) -> Iterator[Path]:
    """An ext4 filesystem of its own, loop-mounted (root, mkfs.ext4 and a free loop device needed)."""
    if os.geteuid() != 0 or not shutil.which("mkfs.ext4") or not shutil.which("losetup"):
        if os.environ.get("CI"):
            pytest.fail("CI needs root and e2fsprogs for the loop-mounted data disk")
        pytest.skip("needs root and mkfs.ext4")
    image, mnt = tmp_path / "disk.img", tmp_path / "mnt"
    with open(image, "wb") as f:
        f.truncate(64 * 1024 * 1024)
    subprocess.run(["mkfs.ext4", "-q", "-F", str(image)], check=True, capture_output=True)
    mnt.mkdir()
    r = subprocess.run(["mount", "-o", "loop", str(image), str(mnt)], capture_output=True, text=True)
    if r.returncode != 0:
        if os.environ.get("CI"):
            pytest.fail(f"cannot loop-mount here: {r.stderr.strip()}")
        pytest.skip(f"cannot loop-mount here: {r.stderr.strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", str(mnt)], capture_output=True)


def test_healthy_host_on_a_data_disk_of_its_own_has_nothing_at_warning(data_disk: Path) -> None:
    root = data_disk / "h"
    simulate_host(str(root), HostSpec(now_ms=NOW_MS))
    code, report = audit(root)
    assert code == 0 and report["gate"]["passed"]
    assert at_least_warning(report) == []
    assert {d["mount_point"] for d in report["log_dirs"]} == {str(data_disk)}
