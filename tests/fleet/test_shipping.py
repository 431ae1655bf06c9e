"""What the fleet job sends to executors: kafka-ops as a zip that works as imported, and credentials resolved on
the driver. No Spark here: the standalone test runs the whole of it on a cluster."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from kafka_ops.collector import ship
from kafka_ops.fleet.inventory import Target
from kafka_ops.fleet.shipping import package_zip, resolve_credentials


def test_the_package_zip_imports_and_builds_the_same_collector_from_inside_the_zip(tmp_path: Path) -> None:
    data = package_zip()
    assert data == package_zip()  # deterministic: same sources, same zip (Spark adds it once per content)
    z = tmp_path / "kafka_ops.zip"
    z.write_bytes(data)
    names = zipfile.ZipFile(z).namelist()
    assert "kafka_ops/fleet/task.py" in names and "kafka_ops/checks/docs/RET001.md" in names
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]
    # -I: no site-packages, no PYTHONPATH: kafka_ops comes from the zip alone, as on an executor
    code = (
        f"import sys; sys.path.insert(0, {str(z)!r}); import kafka_ops.collector.ship as s; "
        "assert s.__file__.startswith(sys.path[0]), s.__file__; sys.stdout.write(s.build())"
    )
    r = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout == ship.build()


def test_credentials_are_the_drivers_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / ".ssh").mkdir()
    (tmp_path / ".ssh" / "known_hosts").write_text("")
    (tmp_path / "keys").mkdir()
    (tmp_path / "keys" / "id").write_text("k")
    monkeypatch.chdir(tmp_path / "keys")
    local = Target("l", ("/d",))
    remote = Target("r", ("/d",), address="10.0.0.9", key_file="id")
    targets, kh = resolve_credentials([local, remote], None)
    assert kh == str(tmp_path / ".ssh" / "known_hosts")  # the default, in the driver's home
    assert targets == [
        local,
        Target("r", ("/d",), address="10.0.0.9", key_file=str(tmp_path / "keys" / "id")),
    ]
    assert resolve_credentials([local], "nope") == ([local], None)  # no SSH host: nothing to read
    with pytest.raises(ValueError, match=r"known_hosts2: no such file"):
        resolve_credentials([remote], "~/.ssh/known_hosts2")
