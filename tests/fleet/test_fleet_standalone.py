"""The job is not tied to local mode: `kafka-ops fleet audit --master spark://...` on a real standalone cluster."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from kafka_ops.fleet.inventory import read_inventory
from kafka_ops.fleet.job import run_fleet
from tests.conftest import CORPUS, NOW_MS
from tests.fleet.conftest import Fleet, SshLab, Standalone, bare_python, me, pack_env
from tests.fleet.test_fleet_local import KEY, cli_findings


def _mixed_inventory(fleet: Fleet, lab: SshLab, path: Path) -> Path:
    """Eight hosts: the three local brokers (audited in the Spark task) and five SSH hosts (h1-h3 audited, h4 a
    host key known_hosts refuses, h5 refusing connections), the SSH key named relative to the driver's cwd."""
    hosts: dict[str, dict[str, object]] = {}
    for name, h in fleet.hosts.items():
        hosts[name] = {
            "ansible_connection": "local", "kafka_log_dirs": h.log_dirs, "kafka_server_properties": h.server_properties,
            "kafka_systemd_unit": h.systemd_unit, "kafka_node_id": fleet.node_ids[name], "kafka_broker_user": me(),
            "kafka_expected_mounts": {d: "/" for d in h.log_dirs},
        }  # fmt: skip
    for i in range(1, 6):
        sim = lab.fleet.hosts.get(f"h{i}") or lab.fleet.hosts["h2"]
        hosts[f"h{i}"] = {
            "ansible_host": lab.addresses[f"h{i}"], "ansible_user": "root", "ansible_ssh_private_key_file": "id",
            "kafka_log_dirs": sim.log_dirs, "kafka_server_properties": sim.server_properties,
            "kafka_systemd_unit": sim.systemd_unit, "kafka_node_id": 10 + i, "kafka_broker_user": lab.broker_user,
            "kafka_expected_mounts": {d: "/" for d in sim.log_dirs},
        }  # fmt: skip
    inv = {"all": {"children": {"kafka_brokers": {"vars": {"kafka_version": "3.7.0"}, "hosts": hosts}}}}
    out = path / "inventory.yml"
    out.write_text(json.dumps(inv))
    return out


def _comparable(rep: dict[str, Any]) -> dict[str, Any]:
    hosts = [{k: v for k, v in h.items() if k != "elapsed_s"} for h in rep["fleet"]["hosts"]]
    return {
        "findings": rep["findings"], "hosts": hosts, "topics": rep["fleet"]["topics"],
        "replicas_at_risk": rep["fleet"]["replicas_at_risk"], "gate": rep["gate"], "summary": rep["summary"],
    }  # fmt: skip


def test_fleet_audit_on_a_standalone_cluster_whose_python_lacks_kafka_ops_equals_local_mode(
    standalone: Standalone, fleet: Fleet, ssh_lab: SshLab, spark: Any, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    """Two workers whose Python has neither kafka-ops nor paramiko: the job ships kafka-ops (addPyFile), the
    credentials (SparkFiles: known_hosts and the key are named relative to the driver's cwd, which no executor
    shares) and gets paramiko from a packed environment (spark.archives + --executor-python)."""
    python = bare_python()
    env_tgz = pack_env(
        tmp_path / "env.tar.gz", ["paramiko", "cryptography", "bcrypt", "pynacl", "cffi", "pycparser", "invoke"],
        python,
    )  # fmt: skip
    inv = _mixed_inventory(fleet, ssh_lab, tmp_path)
    results = f"file://{tmp_path}/results"
    exe = os.path.join(os.path.dirname(sys.executable), "kafka-ops")
    r = subprocess.run(
        [exe, "fleet", "audit", "--master", standalone.url, "-i", str(inv), "--known-hosts", "known_hosts",
         "--broker-state", "stopped", "--now", str(NOW_MS), "-f", "json", "--results", results,
         "--connect-timeout", "5", "--executor-python", "./env/bin/python",
         "--conf", f"spark.archives={env_tgz}#env", "--conf", "spark.executor.memory=512m"],
        capture_output=True, text=True, env=standalone.env, timeout=900, cwd=ssh_lab.dir,
    )  # fmt: skip
    assert r.returncode == 1, r.stderr[
        -3000:
    ]  # broker-1's and h1's criticals fail the gate (default --fail-on error)
    rep = json.loads(r.stdout)  # stdout is the report alone: Spark's own output went to stderr
    assert rep["fleet"]["spark_master"] == standalone.url
    status = {h["host"]: h["status"] for h in rep["fleet"]["hosts"]}
    assert status == {
        "broker-1": "ok", "broker-2": "ok", "broker-3": "ok", "h1": "ok", "h2": "ok", "h3": "ok",
        "h4": "host_key", "h5": "unreachable",
    }  # fmt: skip
    jobs = re.search(r"(\d+) Spark job\(s\)", r.stderr)
    assert jobs and int(jobs.group(1)) <= 5, r.stderr[-2000:]
    # the executors unpacked the packed env and fetched the kafka-ops zip, in the workers' own work dirs
    assert any(list(w.rglob("env/bin/python")) for w in standalone.work_dirs)
    assert any(list(w.rglob("*-kafka_ops-*.zip")) for w in standalone.work_dirs)
    for name, h in fleet.hosts.items():
        got = sorted(tuple(f[k] for k in KEY) for f in rep["findings"] if f["host"] == name)
        assert got == cli_findings(h, name), name
    # the same inventory in local mode (this process: kafka-ops and paramiko installed) finds the same
    monkeypatch.chdir(ssh_lab.dir)
    settings = {
        "now_ms": NOW_MS, "broker_state": "stopped", "fail_on": "error", "connect_timeout": 5,
        "known_hosts": "known_hosts", "now_given": True, "horizon": "24h",
    }  # fmt: skip
    local = run_fleet(spark, read_inventory(str(inv)), settings, name=inv.name)
    assert local.jobs == 1
    assert _comparable(rep) == _comparable(local.report)
    # results written to a URI, one row per host, dated by --now
    import pyarrow.parquet as pq

    hosts = pq.read_table(tmp_path / "results" / "hosts")
    assert sorted(hosts.column("host").to_pylist()) == sorted(status)
    assert [d for d in os.listdir(tmp_path / "results" / "hosts") if d.startswith("run_date=")] == [
        "run_date=2026-09-21"
    ]
    assert str(hosts.schema.field("run_at").type).startswith("timestamp")


def test_corpus_kraft_dirs_as_a_fleet_with_leaders_from_the_metadata_log(
    spark: object, tmp_path: Path
) -> None:
    """Real broker data dirs as hosts; who leads comes from the KRaft metadata log the brokers wrote."""
    from kafka_ops.audit import run_audit
    from kafka_ops.facts.model import AuditOptions
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
