"""What the fleet job sends to executors: kafka-ops as a zip that works as imported, and credentials resolved on
the driver. No Spark here: the standalone test runs the whole of it on a cluster."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

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


# --- no copy of a secret outlives the run ---------------------------------------------------------------------


def _ship_dirs(tmp: Path) -> list[Path]:
    return sorted(tmp.glob("kafka-ops-fleet-ship-*"))


def _copies(tmp: Path, secret: bytes) -> list[Path]:
    return [p for p in tmp.rglob("*") if p.is_file() and p.read_bytes() == secret]


@pytest.fixture
def creds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Target, bytes]:
    """An SSH host nothing answers (connection refused: FLEET001), its key and known_hosts; the temp dir the run's
    copies go to is the test's own."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    secret = b"-----BEGIN OPENSSH PRIVATE KEY----- not a real one " + os.urandom(8).hex().encode() + b"\n"
    (tmp_path / "id").write_bytes(secret)
    (tmp_path / "known_hosts").write_text("")
    return (
        tmp,
        Target("gone-1", ("/d",), address="127.0.0.1", port=1, user="root", key_file=str(tmp_path / "id")),
        secret,
    )


def test_a_run_removes_its_copies_of_the_ssh_key_and_known_hosts(
    spark: Any, creds: tuple[Path, Target, bytes], tmp_path: Path
) -> None:
    from kafka_ops.fleet.job import run_fleet

    tmp, target, secret = creds
    seen: list[list[Path]] = []
    import kafka_ops.fleet.shipping as shipping

    real = shipping._add

    def add(sc: Any, path: str, py: bool = False) -> str:
        seen.append(_ship_dirs(tmp))  # the copy exists while the run needs it
        return real(sc, path, py)

    with pytest.MonkeyPatch.context() as m:
        m.setattr(shipping, "_add", add)
        run = run_fleet(
            spark, [target], {"now_ms": 0, "known_hosts": str(tmp_path / "known_hosts"), "connect_timeout": 2}
        )
    assert [f["check"] for f in run.report["findings"]] == ["FLEET001"]
    assert seen and seen[0]
    assert _ship_dirs(tmp) == [] and _copies(tmp, secret) == []


@pytest.mark.parametrize("exc", [KeyboardInterrupt, RuntimeError])
def test_a_run_that_ends_on_an_error_or_ctrl_c_removes_them_too(
    spark: Any, creds: tuple[Path, Target, bytes], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, exc: type
) -> None:
    import kafka_ops.fleet.job as job

    tmp, target, secret = creds

    def interrupted(*a: Any, **k: Any) -> Any:
        assert _copies(tmp, secret), "the key was shipped before the audit"
        raise exc("stopped by the test")

    monkeypatch.setattr(job, "group_targets", interrupted)
    with pytest.raises(exc):
        job.run_fleet(spark, [target], {"now_ms": 0, "known_hosts": str(tmp_path / "known_hosts")})
    assert _ship_dirs(tmp) == [] and _copies(tmp, secret) == []
