"""`kafka-ops fleet submit`: spark-submit of the fleet job from the venv kafka-ops is installed in, with no
SPARK_HOME exported and the venv not activated (its bin/ not on PATH)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kafka_ops.cli.framework import load_all
from kafka_ops.fleet.submit import SubmitError, split
from tests.conftest import NOW_MS
from tests.fleet.conftest import Fleet, me

REPO = Path(__file__).resolve().parents[2]


def test_spark_submits_options_come_before_the_fleet_command() -> None:
    assert split(["--master", "yarn", "--conf", "spark.x=audit", "--verbose", "audit", "-i", "inv"]) == (
        ["--master", "yarn", "--conf", "spark.x=audit", "--verbose"],
        ["audit", "-i", "inv"],
    )
    assert split(["--name", "diff", "--", "diff", "--results", "r"]) == (
        ["--name", "diff"],
        ["diff", "--results", "r"],
    )
    with pytest.raises(SubmitError, match=r"\{audit,diff\} ARGS \(got: nothing\)"):
        split(["--master", "local[1]"])
    with pytest.raises(SubmitError, match=r"no such option: --mastr \(did you mean --master\?\)"):
        split(["--mastr", "yarn", "audit"])
    r = CliRunner().invoke(load_all(), ["fleet", "submit", "--master", "local[1]", "fix"])
    assert r.exit_code == 2 and "(got: fix)" in r.stderr


def test_fleet_submit_runs_the_audit_through_pysparks_own_spark_submit(fleet: Fleet, tmp_path: Path) -> None:
    """The README recipe without SPARK_HOME: PATH has only the system's bin dirs (whose python3 has no pyspark),
    so the venv's bin/spark-submit cannot find its Spark; `fleet submit` runs pyspark's own, the driver on this
    Python. One local-mode run, about 45 s here."""
    h = fleet.hosts["broker-2"]
    args = [
        "--server-properties", h.server_properties, "--systemd-unit", h.systemd_unit, "--broker-user", me(),
        "--kafka-version", "3.7.0", "--broker-state", "stopped", "--now", str(NOW_MS), "-f", "json",
        *[a for d in h.log_dirs for a in ("--log-dir", d, "--expect-mount", f"{d}=/")],
    ]  # fmt: skip
    env = {k: v for k, v in os.environ.items() if k not in ("SPARK_HOME", "VIRTUAL_ENV", "PYSPARK_PYTHON",
                                                               "PYSPARK_DRIVER_PYTHON")}  # fmt: skip
    env.update(PATH="/usr/bin:/bin", PYTHONPATH=str(REPO))
    venv_submit = Path(sys.executable).parent / "spark-submit"
    if venv_submit.exists():  # why the helper is there: pip's wrapper looks for pyspark with python3 on PATH
        plain = subprocess.run(
            [str(venv_submit), "--version"], env=env, capture_output=True, text=True, cwd=tmp_path
        )
        assert plain.returncode != 0, plain.stderr

    r = subprocess.run(
        [sys.executable, "-m", "kafka_ops", "fleet", "submit", "--master", "local[1]", "audit", *args, "--no-results"],
        env=env, capture_output=True, text=True, cwd=tmp_path, timeout=300,
    )  # fmt: skip
    import pyspark

    home = os.path.dirname(os.path.abspath(pyspark.__file__))
    assert r.stderr.startswith(f"kafka-ops fleet submit: SPARK_HOME={home} PYSPARK_DRIVER_PYTHON={sys.executable} "
                               f"{home}/bin/spark-submit --master 'local[1]' "), r.stderr  # fmt: skip
    report = json.loads(r.stdout)  # stdout is the report alone: Spark's logs and the notes went to stderr
    assert report["fleet"]["spark_master"] == "local[1]" and report["fleet"]["spark_jobs"] == 1
    assert "1 Spark job(s);" in r.stderr
    single = CliRunner().invoke(load_all(), ["audit", *args])
    assert r.returncode == single.exit_code
    assert report["findings"] == json.loads(single.stdout)["findings"]
