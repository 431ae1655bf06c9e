"""The job is not tied to local mode: `kafka-ops fleet audit --master spark://...` on a real standalone cluster."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import CORPUS
from tests.fleet.conftest import Fleet, Standalone, me
from tests.fleet.test_fleet_local import KEY, cli_findings


def test_fleet_audit_runs_on_a_standalone_cluster(
    standalone: Standalone, fleet: Fleet, tmp_path: Path
) -> None:
    inv = fleet.inventory(tmp_path / "inv", kafka_broker_user=me())
    exe = os.path.join(os.path.dirname(sys.executable), "kafka-ops")
    r = subprocess.run(
        [exe, "fleet", "audit", "--master", standalone.url, "-i", str(inv), "--broker-state", "stopped",
         "--now", "1790000000000", "-f", "json", "--results", str(tmp_path / "results")],
        capture_output=True, text=True, env=standalone.env, timeout=600,
    )  # fmt: skip
    assert r.returncode == 1, r.stderr[-3000:]  # broker-1's criticals fail the gate, as in local mode
    rep = json.loads(r.stdout)
    assert rep["fleet"]["spark_master"] == standalone.url
    assert {h["status"] for h in rep["fleet"]["hosts"]} == {"ok"}
    for name, h in fleet.hosts.items():
        got = sorted(tuple(f[k] for k in KEY) for f in rep["findings"] if f["host"] == name)
        assert got == cli_findings(h, name), name
    assert (tmp_path / "results" / "findings").is_dir()
    # the executors ran in the worker's own JVM: its work dir holds the application's stderr
    assert any((Path(standalone.env["SPARK_WORKER_DIR"])).iterdir())


def test_corpus_kraft_dirs_as_a_fleet_with_leaders_from_the_metadata_log(
    spark: object, tmp_path: Path
) -> None:
    """Real broker data dirs as hosts; who leads comes from the KRaft metadata log the brokers wrote."""
    from kafka_ops.audit import run_audit
    from kafka_ops.facts.collect import AuditOptions
    from kafka_ops.fleet.inventory import Target
    from kafka_ops.fleet.job import run_fleet

    dirs = {
        "patients": CORPUS / "ItumelengMogase__Real-Time-Data-Pipeline-for-Patient-Admissions/kafka-data",
        "bigdata": CORPUS / "Danielowo2000__BigDataTechnologies-Version-2/kafka_data",
        "kafka30": CORPUS / "tuyen-nnt__kafka_2.13-3.0.0/data/kafka",
    }
    targets = [Target(name, (str(d),), broker_user=me()) for name, d in dirs.items()]
    settings = {"now_ms": 1_790_000_000_000, "broker_state": "stopped", "fail_on": "critical"}
    rep = run_fleet(spark, targets, settings).report
    for name, d in dirs.items():
        local = run_audit(
            AuditOptions(
                log_dirs=[str(d)],
                broker_user=me(),
                broker_state="stopped",
                now_ms=1_790_000_000_000,
                host=name,
            )
        )
        assert sorted(tuple(f[k] for k in KEY) for f in rep["findings"] if f["host"] == name) == sorted(
            tuple(f[k] for k in KEY) for f in local["findings"]
        ), name
    # both KRaft dirs carry a metadata log; the newest (most records applied) is the fleet's source of leaders
    assert rep["fleet"]["leaders_source"].startswith("KRaft metadata log ")
    assert "bigdata" in rep["fleet"]["leaders_source"]
    hosts = {h["host"]: h for h in rep["fleet"]["hosts"]}
    assert hosts["patients"]["node_id"] == 1 and hosts["kafka30"]["node_id"] is not None
