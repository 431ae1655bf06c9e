"""`--results s3a://...` on a real S3 server: moto's (from PyPI) on loopback, Hadoop's S3A connector from Maven
Central (tests/fleet/s3a.py: hadoop-aws of pyspark's Hadoop, the AWS SDK's S3 modules, 13 MB, cached), every
setting passed with `--conf`, as an operator passes them."""

from __future__ import annotations

import json
import logging
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from kafka_ops.cli.framework import load_all
from kafka_ops.simulator.host import Failures
from tests.conftest import NOW_MS
from tests.fleet.conftest import IN_CI, make_fleet, me

REPO = Path(__file__).resolve().parents[2]
BUCKET, PREFIX = "ops", "kafka-fleet"
KEYS = ("AKIAKAFKAOPSTEST", "kafka-ops-test-secret")
# what differs between two runs of the same hosts: the run, when it wrote, how long each host took
VOLATILE = {"run_id", "run_at", "elapsed_s"}


@dataclass
class S3:
    endpoint: str
    client: Any
    conf: list[str]  # the --conf arguments: the S3A jars and settings


@pytest.fixture(scope="module")
def s3() -> Iterator[S3]:
    """moto's S3 server on a free loopback port, one bucket; the S3A jars (Maven on a cold cache)."""
    moto_server = pytest.importorskip("moto.server", reason="moto[server] (pip install -e '.[dev]')")
    import boto3

    from tests.fleet.s3a import S3AError, jars_conf, s3a_conf

    try:
        jars = jars_conf()
    except S3AError as exc:
        if IN_CI:
            pytest.fail(str(exc))
        pytest.skip(str(exc))
    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # one line per request otherwise
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    endpoint = f"http://127.0.0.1:{port}"
    client = boto3.client(
        "s3", endpoint_url=endpoint, region_name="us-east-1",
        aws_access_key_id=KEYS[0], aws_secret_access_key=KEYS[1],
    )  # fmt: skip
    client.create_bucket(Bucket=BUCKET)
    conf = {**jars, **s3a_conf(endpoint, *KEYS)}
    try:
        yield S3(endpoint, client, [a for k, v in conf.items() for a in ("--conf", f"{k}={v}")])
    finally:
        server.stop()


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    """kafka-ops as an operator runs it: its own process, so its own JVM with the S3A jars on the classpath."""
    return subprocess.run(
        [sys.executable, "-m", "kafka_ops", *args], capture_output=True, text=True, timeout=600,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )  # fmt: skip


def _objects(s3: S3, prefix: str) -> list[str]:
    keys: list[str] = []
    for page in s3.client.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=prefix):
        keys += [o["Key"] for o in page.get("Contents", [])]
    return keys


def _rows(files: list[Path]) -> list[tuple[Any, ...]]:
    """A table's rows from its Parquet files, what differs between runs left out, in a stable order."""
    import pyarrow.parquet as pq

    rows = []
    for f in files:
        t = pq.read_table(f)
        rows += [tuple(sorted((k, v) for k, v in r.items() if k not in VOLATILE)) for r in t.to_pylist()]
    return sorted(rows, key=repr)


def test_fleet_audit_writes_its_results_to_s3a_and_fleet_diff_reads_them_back(
    s3: S3, spark: Any, tmp_path: Path
) -> None:
    fleet = make_fleet(tmp_path / "fleet", {"broker-1": (1, Failures.all()), "broker-2": (2, Failures())})
    inv = fleet.inventory(tmp_path / "inv", kafka_broker_user=me())
    audit = ["fleet", "audit", "-i", str(inv), "--broker-state", "stopped", "--now", str(NOW_MS), "-f", "json"]  # fmt: skip
    uri = f"s3a://{BUCKET}/{PREFIX}"

    first = _cli(*audit, "--results", uri, "--master", "local[2]", *s3.conf)
    assert first.returncode == 1, first.stderr  # broker-1's planted incidents fail the gate
    report = json.loads(first.stdout)
    assert report["fleet"]["spark_jobs"] == 4  # the audit, then the three tables
    run1 = report["fleet"]["run_id"]
    keys = _objects(s3, PREFIX + "/")
    for table in ("facts", "findings", "hosts"):
        assert any(
            k.startswith(f"{PREFIX}/{table}/run_date=2026-09-21/") and k.endswith(".parquet") for k in keys
        ), (table, keys)
    assert not [k for k in keys if "_temporary" in k], keys  # the commit left no scratch behind

    # the same audit to a local dir (in this process: the tests' session, no S3A): the same tables
    local = tmp_path / "local"
    r = CliRunner().invoke(load_all(), [*audit, "--results", f"file://{local}"])
    assert r.exit_code == 1, r.output
    assert json.loads(r.stdout)["findings"] == report["findings"]
    for table in ("facts", "findings", "hosts"):
        fetched = []
        for k in keys:
            if k.startswith(f"{PREFIX}/{table}/") and k.endswith(".parquet"):
                fetched.append(tmp_path / "fetched" / k)
                fetched[-1].parent.mkdir(parents=True, exist_ok=True)
                s3.client.download_file(BUCKET, k, str(fetched[-1]))
        files = sorted((local / table).glob("run_date=*/*.parquet"))
        assert files and fetched, table
        # run_date comes from the partition dir, not the file: each side's rows carry the same columns
        assert _rows(fetched) == _rows(files), table
        assert len(_rows(fetched)) > 0

    # broker-2 killed (no clean-shutdown marker): the second run to S3, then the diff read back from it
    os.remove(os.path.join(fleet.hosts["broker-2"].log_dirs[0], ".kafka_cleanshutdown"))
    second = _cli(*audit, "--results", uri, "--master", "local[2]", *s3.conf)
    assert second.returncode == 1, second.stderr
    run2 = json.loads(second.stdout)["fleet"]["run_id"]
    d = _cli("fleet", "diff", "--results", uri, "--master", "local[2]", "-f", "json", *s3.conf)
    assert d.returncode == 1, d.stderr  # a new finding
    diff = json.loads(d.stdout)
    assert (diff["base"], diff["head"]) == (run1, run2)
    assert [(f["check"], f["host"], f["log_dir"]) for f in diff["new_findings"]] == [
        ("SHUT001", "broker-2", fleet.hosts["broker-2"].log_dirs[0])
    ]
    assert diff["resolved_findings"] == [] and diff["host_status_changes"] == []
    assert diff["partitions_added"] == [] and diff["partitions_removed"] == []
    assert "Exception" not in d.stderr, d.stderr


def test_a_results_uri_without_its_connector_is_one_line_before_the_audit(spark: Any, tmp_path: Path) -> None:
    """pyspark alone has no S3A: said before any host is audited (not after, losing the audit), exit 2."""
    from kafka_ops.fleet.inventory import read_inventory
    from kafka_ops.fleet.job import run_fleet
    from kafka_ops.fleet.results import ResultsError

    fleet = make_fleet(tmp_path / "fleet", {"broker-1": (1, Failures())})
    inv = fleet.inventory(tmp_path / "inv", kafka_broker_user=me())
    settings = {"now_ms": NOW_MS, "broker_state": "stopped", "fail_on": "critical", "horizon": "24h"}
    store = spark.sparkContext._jsc.sc().statusStore()  # every job this session ran, in any job group
    before = store.jobsList(None).size()
    with pytest.raises(
        ResultsError, match=r"no file system for s3a://: add Hadoop's S3 connector: .*hadoop-aws"
    ):
        run_fleet(spark, read_inventory(str(inv)), settings, results=f"s3a://{BUCKET}/{PREFIX}")
    assert store.jobsList(None).size() == before  # no Spark job: nothing audited
    for args in (
        ["fleet", "audit", "-i", str(inv), "--broker-state", "stopped", "--results", f"s3a://{BUCKET}/x"],
        ["fleet", "diff", "--results", f"s3a://{BUCKET}/x"],
    ):
        r = CliRunner().invoke(load_all(), args)
        assert r.exit_code == 2, r.output
        lines = r.stderr.strip().splitlines()
        assert "no file system for s3a://" in lines[-1] and "Traceback" not in r.stderr, r.stderr
