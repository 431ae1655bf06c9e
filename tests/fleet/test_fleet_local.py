"""The fleet job in local mode on simulated hosts: the CLI's findings per host, the fleet view, Parquet and diff."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from kafka_ops.audit import run_audit
from kafka_ops.cli.framework import load_all
from kafka_ops.facts.model import AuditOptions
from kafka_ops.fleet.inventory import read_inventory
from kafka_ops.fleet.job import run_fleet
from kafka_ops.render.models import validate
from kafka_ops.simulator.host import SimulatedHost
from tests.conftest import NOW_MS
from tests.fleet.conftest import Fleet, me

REPO = Path(__file__).resolve().parents[2]
KEY = ("check", "severity", "log_dir", "path", "topic", "partition", "segment", "message")
SETTINGS = {"now_ms": NOW_MS, "broker_state": "stopped", "fail_on": "critical", "horizon": "24h"}


def cli_findings(h: SimulatedHost, name: str, user: str | None = None) -> list[tuple[Any, ...]]:
    """What `kafka-ops audit` finds on one host (the library the CLI runs)."""
    report = run_audit(
        AuditOptions(
            log_dirs=h.log_dirs, server_properties=h.server_properties, systemd_unit=h.systemd_unit,
            broker_user=user or me(), kafka_version="3.7.0", broker_state="stopped", now_ms=NOW_MS, host=name,
            expected_mounts={d: "/" for d in h.log_dirs},
        )
    )  # fmt: skip
    return sorted(tuple(f[k] for k in KEY) for f in report["findings"])


def fleet_findings(report: dict[str, Any], host: str) -> list[tuple[Any, ...]]:
    return sorted(tuple(f[k] for k in KEY) for f in report["findings"] if f["host"] == host)


def test_every_host_gets_the_cli_findings_and_the_fleet_view_adds_replicas(
    spark: Any, fleet: Fleet, tmp_path: Path
) -> None:
    inv = fleet.inventory(tmp_path / "inv", kafka_broker_user=me())
    run = run_fleet(spark, read_inventory(str(inv)), SETTINGS, name="sim", results=None)
    rep = run.report
    validate(rep)
    for name, h in fleet.hosts.items():
        assert fleet_findings(rep, name) == cli_findings(h, name), name
    assert {f["check"] for f in rep["findings"] if f["host"] == "broker-1"} >= {"RET001", "SHUT001", "CLN003"}
    assert not [f for f in rep["findings"] if f["check"].startswith("FLEET")]
    failing = rep["gate"].pop("failing")
    assert rep["gate"] == {"fail_on": "critical", "passed": False, "exit_code": 1, "waived": 0}
    # one line per failing finding, named by the host it is on (a fleet report's findings carry their host)
    crit = [f for f in rep["findings"] if f["severity"] == "critical"]
    assert len(failing) == len(crit) and all(
        x.split(" ", 3)[2].startswith(f"{f['host']}:") for x, f in zip(failing, crit, strict=True)
    )
    hosts = {h["host"]: h for h in rep["fleet"]["hosts"]}
    assert {h["status"] for h in hosts.values()} == {"ok"}
    assert [hosts[n]["node_id"] for n in ("broker-1", "broker-2", "broker-3")] == [1, 2, 3]
    for name in fleet.hosts:
        lds = [ld for ld in rep["log_dirs"] if ld["host"] == name]
        assert hosts[name]["partitions"] == sum(ld["partitions"] for ld in lds) > 0
        assert hosts[name]["log_bytes"] == sum(ld["log_bytes"] for ld in lds)
        assert hosts[name]["critical"] == sum(
            1 for f in rep["findings"] if f["host"] == name and f["severity"] == "critical"
        )
    # no leader source: the replica at risk on broker-1 may be the leader, and the report says why
    assert rep["fleet"]["leaders_source"].startswith("unknown")
    ret = [f for f in rep["findings"] if f["check"] == "RET001"]
    risk = rep["fleet"]["replicas_at_risk"]
    assert [(r["topic"], r["partition"], r["host"], r["role"]) for r in risk] == sorted(
        {(f["topic"], f["partition"], "broker-1", "unknown") for f in ret}
    )
    assert all(r["replicas_found"] == 3 for r in risk)  # the same partition on all three brokers
    orders = next(t for t in rep["fleet"]["topics"] if t["topic"] == "orders")
    assert orders["hosts"] == 3 and orders["replicas"] == 3 * orders["partitions"]
    assert orders["bytes_lost_cluster_wide"] == sum(
        f["details"]["bytes"] for f in ret if f["topic"] == "orders"
    )
    assert run.tasks == 3  # one task per host: a host's log dirs are audited together
    assert run.jobs == 1  # the audit is collected once; the view is computed from it on the driver


def test_leader_or_follower_decides_whether_data_is_lost_cluster_wide(
    spark: Any, fleet: Fleet, tmp_path: Path
) -> None:
    inv = read_inventory(
        str(fleet.inventory(tmp_path / "inv", kafka_broker_user=me())), limit="broker-1,broker-2"
    )
    at_risk = [("orders", 0)]  # RET001 on broker-1 (seed 000 planted)
    roles = {}
    for leader in (1, 2):
        desc = tmp_path / f"describe-{leader}.txt"
        desc.write_text(
            "Topic: orders\tTopicId: x\tPartitionCount: 3\tReplicationFactor: 2\tConfigs:\n"
            + "".join(
                f"\tTopic: orders\tPartition: {p}\tLeader: {leader}\tReplicas: 1,2\tIsr: 1,2\n"
                for p in range(3)
            )
        )
        rep = run_fleet(spark, inv, SETTINGS, leaders_file=str(desc)).report
        assert rep["fleet"]["leaders_source"] == f"kafka-topics --describe output {desc}"
        risk = rep["fleet"]["replicas_at_risk"]
        assert [(r["topic"], r["partition"]) for r in risk] == at_risk
        roles[leader] = risk[0]
        orders = next(t for t in rep["fleet"]["topics"] if t["topic"] == "orders")
        if leader == 1:  # broker-1 leads orders-0: its retention deletes the data for every replica
            assert risk[0]["role"] == "leader" and "cluster-wide" in risk[0]["consequence"]
            assert (
                orders["partitions_losing_data"] == 1
                and orders["bytes_lost_cluster_wide"] == risk[0]["bytes"] > 0
            )
        else:  # broker-2 leads: only broker-1's copy goes
            assert risk[0]["role"] == "follower" and "leader keeps the data" in risk[0]["consequence"]
            assert orders["partitions_at_risk"] == 1 and orders["partitions_losing_data"] == 0
            assert orders["bytes_lost_cluster_wide"] == 0
    assert roles[1]["bytes"] == roles[2]["bytes"]


def test_unusable_host_is_a_finding_and_the_others_are_still_audited(
    spark: Any, fleet: Fleet, tmp_path: Path
) -> None:
    inv = fleet.inventory(
        tmp_path / "inv", kafka_broker_user=me(),
        extra={"broker-9": {"ansible_connection": "local", "kafka_server_properties": str(tmp_path / "nope.properties")}},
    )  # fmt: skip
    rep = run_fleet(spark, read_inventory(str(inv), limit="broker-2,broker-9"), SETTINGS).report
    validate(rep)
    bad = [f for f in rep["findings"] if f["host"] == "broker-9"]
    assert [(f["check"], f["severity"]) for f in bad] == [("FLEET005", "critical")]
    assert "nope.properties" in bad[0]["message"]
    hosts = {h["host"]: h for h in rep["fleet"]["hosts"]}
    assert hosts["broker-9"]["status"] == "collector" and hosts["broker-2"]["status"] == "ok"
    assert hosts["broker-2"]["partitions"] > 0
    assert rep["gate"]["passed"] is False  # a host that was not audited cannot pass the gate


def _broker2_copy(fleet: Fleet, tmp_path: Path) -> tuple[SimulatedHost, Path]:
    """broker-2's files copied under tmp_path (a test changes them) and an inventory of that copy alone."""
    work = tmp_path / "broker-2"
    shutil.copytree(fleet.root / "broker-2", work, symlinks=True)
    h = fleet.hosts["broker-2"]
    moved = SimulatedHost(
        **{
            **h.to_dict(),
            "log_dirs": [d.replace(str(fleet.root / "broker-2"), str(work)) for d in h.log_dirs],
        }
    )
    inv = Fleet(tmp_path, {"broker-2": moved}, {"broker-2": 2}).inventory(
        tmp_path / "inv", kafka_broker_user=me()
    )
    return moved, inv


def test_results_are_parquet_by_run_date_and_diff_says_what_changed(
    spark: Any, fleet: Fleet, tmp_path: Path
) -> None:
    import pyarrow.parquet as pq

    moved, inv = _broker2_copy(fleet, tmp_path)
    results = tmp_path / "results"
    targets = read_inventory(str(inv))
    # a finding present in both runs (a log-dir finding: no topic, partition or segment) is neither new nor resolved
    os.remove(os.path.join(moved.log_dirs[1], ".kafka_cleanshutdown"))
    first = run_fleet(spark, targets, SETTINGS, results=str(results))
    assert first.jobs <= 5  # the audit, then the three tables written
    assert [(f["check"], f["log_dir"]) for f in first.report["findings"]] == [("SHUT001", moved.log_dirs[1])]
    # what a bad deploy does: the broker is killed (no clean-shutdown marker) and a partition is lost
    os.remove(os.path.join(moved.log_dirs[0], ".kafka_cleanshutdown"))
    gone = sorted(p for p in os.listdir(moved.log_dirs[1]) if p.startswith("orders-"))[0]
    shutil.rmtree(os.path.join(moved.log_dirs[1], gone))
    # the second run to the same place named as a URI: Spark writes it as it is (no os.path on it)
    second = run_fleet(spark, targets, SETTINGS, results=f"file://{results}")
    for table in ("facts", "findings", "hosts"):
        # dated by the audit's --now, not the wall clock
        assert sorted(d for d in os.listdir(results / table) if d.startswith("run_date=")) == [
            "run_date=2026-09-21"
        ], table
    facts = pq.read_table(results / "facts")
    assert set(facts.column("run_id").to_pylist()) == {first.run_id, second.run_id}
    assert str(facts.schema.field("run_at").type).startswith("timestamp")

    r = CliRunner().invoke(load_all(), ["fleet", "diff", "--results", f"file://{results}", "-f", "json"])
    assert r.exit_code == 1, r.output  # new findings
    d = json.loads(r.stdout)
    assert (d["base"], d["head"]) == (first.run_id, second.run_id)
    assert [(f["check"], f["log_dir"]) for f in d["new_findings"]] == [("SHUT001", moved.log_dirs[0])]
    assert d["resolved_findings"] == []
    topic, part = gone.rsplit("-", 1)
    assert [(p["topic"], p["partition"]) for p in d["partitions_removed"]] == [(topic, int(part))]
    assert d["partitions_added"] == [] and d["host_status_changes"] == []
    text = CliRunner().invoke(load_all(), ["fleet", "diff", "--results", str(results)])
    # SHUT001 of a recovery of seconds is info (its severity follows the estimate)
    assert f"new findings: 1\n  info SHUT001 broker-2 {moved.log_dirs[0]}" in text.stdout
    # the diff above read the local results without Spark; Spark's diff (--master) says the same
    by_spark = CliRunner().invoke(
        load_all(), ["fleet", "diff", "--results", str(results), "--master", "local[2]", "-f", "json"]
    )
    assert by_spark.exit_code == 1, by_spark.output
    assert json.loads(by_spark.stdout) == d


def test_cli_fleet_audit_prints_the_audit_report_for_the_same_options(
    spark: Any, healthy_host: SimulatedHost, broken_host: SimulatedHost
) -> None:
    """A pipeline can switch between `audit` and `fleet audit`: same options, same findings, same exit code."""
    for h in (healthy_host, broken_host):
        args = [
            "--server-properties", h.server_properties, "--systemd-unit", h.systemd_unit, "--broker-user", me(),
            "--kafka-version", "3.7.0", "--broker-state", "stopped", "--now", str(NOW_MS), "-f", "json",
            *[a for d in h.log_dirs for a in ("--log-dir", d, "--expect-mount", f"{d}=/")],
        ]  # fmt: skip
        single = CliRunner().invoke(load_all(), ["audit", *args])
        fleet = CliRunner().invoke(load_all(), ["fleet", "audit", *args, "--no-results"])
        assert fleet.exit_code == single.exit_code, fleet.output
        a, b = json.loads(single.stdout), json.loads(fleet.stdout)
        assert b["findings"] == a["findings"]  # findings carry host in both
        assert set(b) >= set(a) and b["fleet"]["hosts"][0]["host"] == a["host"]
        volatile = ("free_bytes", "free_inodes")  # the disk's free space and inodes move between the two runs
        assert [{k: v for k, v in ld.items() if k not in volatile} for ld in b["log_dirs"]] == [
            {**{k: v for k, v in ld.items() if k not in volatile}, "host": a["host"]} for ld in a["log_dirs"]
        ]
        assert b["gate"] == a["gate"] and b["summary"] == a["summary"]


def test_fleet_audit_waivers_are_the_audits(spark: Any, broken_host: SimulatedHost, tmp_path: Path) -> None:
    """--waive and --waive-file as `audit` takes them: the same findings waived, the same gate."""
    args = [
        "--server-properties", broken_host.server_properties, "--systemd-unit", broken_host.systemd_unit,
        "--broker-user", me(), "--kafka-version", "3.7.0", "--broker-state", "stopped", "--now", str(NOW_MS),
        "-f", "json", *[a for d in broken_host.log_dirs for a in ("--log-dir", d, "--expect-mount", f"{d}=/")],
    ]  # fmt: skip
    unwaived = json.loads(CliRunner().invoke(load_all(), ["audit", *args]).stdout)
    # every check at or above the default --fail-on (error)
    critical = sorted({f["check"] for f in unwaived["findings"] if f["severity"] in ("error", "critical")})
    assert critical, "the broken host fails the gate"
    waivers = tmp_path / "waivers"
    waivers.write_text("# acknowledged\n" + "".join(f"{c} ticket OPS-7\n" for c in critical[1:]))
    waive = ["--waive", critical[0], "--waive-file", str(waivers), "--waive", "IDX001:/nowhere/*"]
    single = CliRunner().invoke(load_all(), ["audit", *args, *waive])
    fleet = CliRunner().invoke(load_all(), ["fleet", "audit", *args, *waive, "--no-results"])
    assert single.exit_code == fleet.exit_code == 0, fleet.output
    a, b = json.loads(single.stdout), json.loads(fleet.stdout)
    assert b["findings"] == a["findings"] and b["gate"] == a["gate"]
    # waived: every finding the waivers matched (IDX004's warnings too), the sum of their matched
    assert b["gate"]["passed"] and b["gate"]["waived"] == sum(f["check"] in critical for f in a["findings"])
    assert b["gate"]["waived"] == sum(w["matched"] for w in b["gate"]["waivers"])
    assert {w["rule"]: w["matched"] for w in b["gate"]["waivers"]}["IDX001:/nowhere/*"] == 0
    # stderr says the verdict, as `audit` does for a report its stdout does not show a person
    assert "kafka-ops fleet audit: PASS (--fail-on error): " in fleet.stderr
    assert "waiver IDX001:/nowhere/* (--waive) matched no finding" in fleet.stderr


def test_bad_input_is_one_line(tmp_path: Path) -> None:
    app = load_all()
    r = CliRunner().invoke(app, ["fleet", "audit", "--inventory", str(tmp_path / "none.yml")])
    assert (
        r.exit_code == 2
        and r.stderr.strip()
        == f"kafka-ops fleet audit: {tmp_path / 'none.yml'}: no such inventory file or directory"
    )
    r = CliRunner().invoke(app, ["fleet", "audit"])
    assert (
        r.exit_code == 2
        and r.stderr.strip() == "kafka-ops fleet audit: no hosts to audit: give --inventory or --log-dir"
    )
    r = CliRunner().invoke(app, ["fleet", "diff", "--results", str(tmp_path)])
    assert r.exit_code == 2 and "no fleet results here" in r.stderr


def test_ssh_credentials_are_resolved_on_the_driver_and_a_missing_one_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before Spark starts: a relative --known-hosts is the driver's, a missing one would refuse every host
    (FLEET002 for all): exit 2, one line; the same for a key file the inventory names; a --conf without =."""
    app = load_all()
    key = tmp_path / "id"
    key.write_text("not really a key")
    inv = tmp_path / "inv.yml"
    hosts = {
        "b1": {
            "ansible_host": "10.232.9.9",
            "ansible_ssh_private_key_file": str(key),
            "kafka_log_dirs": ["/d"],
        }
    }
    inv.write_text(json.dumps({"all": {"children": {"kafka_brokers": {"hosts": hosts}}}}))
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(app, ["fleet", "audit", "-i", str(inv), "--known-hosts", "kh", "--no-results"])
    assert r.exit_code == 2, r.output
    assert r.stderr.strip() == (
        f"kafka-ops fleet audit: {tmp_path / 'kh'}: no such file (--known-hosts: the host keys SSH hosts are "
        "verified against)"
    )
    (tmp_path / "kh").write_text("")
    key.unlink()
    r = CliRunner().invoke(app, ["fleet", "audit", "-i", str(inv), "--known-hosts", "kh", "--no-results"])
    assert (
        r.exit_code == 2
        and r.stderr.strip() == f"kafka-ops fleet audit: {key}: no such file (the SSH key of host b1)"
    )
    key.write_text("x")
    r = CliRunner().invoke(
        app, ["fleet", "audit", "-i", str(inv), "--known-hosts", "kh", "--conf", "spark.x"]
    )
    assert r.exit_code == 2 and r.stderr.strip() == (
        "kafka-ops fleet audit: --conf 'spark.x': expected KEY=VALUE (e.g. spark.driver.memory=4g)"
    )


def test_the_report_counts_spark_jobs_and_diff_reads_results_an_older_kafka_ops_wrote(
    spark: Any, fleet: Fleet, tmp_path: Path
) -> None:
    """`fleet.spark_jobs` is the run's Spark jobs (4 with results, 1 with --no-results); a results dir that holds
    a run written before run_at was a timestamp (an ISO 8601 string, run_date the wall clock's day) and runs
    written since is read by `fleet diff`, with pyarrow and with Spark, the old run_at parsed."""
    import datetime as dt

    import pyarrow.parquet as pq
    from pyspark.sql import functions as F

    from kafka_ops.fleet.localdiff import run_at

    moved, inv = _broker2_copy(fleet, tmp_path)
    audit = [
        "fleet",
        "audit",
        "-i",
        str(inv),
        "--broker-state",
        "stopped",
        "--now",
        str(NOW_MS),
        "-f",
        "json",
    ]
    scratch, mixed = tmp_path / "scratch", tmp_path / "mixed"

    r = CliRunner().invoke(load_all(), [*audit, "--results", str(scratch)])
    assert r.exit_code == 0, r.output
    # the audit, then facts, findings and hosts written
    assert json.loads(r.stdout)["fleet"]["spark_jobs"] == 4
    assert ", 4 Spark job(s);" in r.stderr  # the summary line says the same

    # the same run as kafka-ops wrote it before run_at was a timestamp (git show 66cdc1b^:kafka_ops/fleet/results.py):
    # run_at F.lit(run_at.isoformat()), run_date the wall clock's day, the columns in that order
    old_id, old_at = "20261120T093000Z-0a1b2c", dt.datetime(2026, 11, 20, 9, 30, 0, 123456, tzinfo=dt.UTC)
    for table in ("facts", "findings", "hosts"):
        if not list((scratch / table).glob("run_date=*/*.parquet")):
            continue  # no findings: Spark writes no file for an empty partitioned table (nor did the old code)
        (
            spark.read.parquet(str(scratch / table))
            .drop("run_id", "run_at", "audit_now_ms", "run_date")
            .withColumn("run_id", F.lit(old_id))
            .withColumn("run_at", F.lit(old_at.isoformat()))
            .withColumn("audit_now_ms", F.lit(NOW_MS))
            .withColumn("run_date", F.lit(old_at.date().isoformat()))
            .coalesce(1)
            .write.mode("append")
            .partitionBy("run_date")
            .parquet(str(mixed / table))
        )
    old_file = next((mixed / "hosts" / "run_date=2026-11-20").glob("*.parquet"))
    assert str(pq.read_schema(old_file).field("run_at").type) == "string"
    assert run_at(old_at.isoformat()) == old_at

    # then the broker is killed (no clean-shutdown marker) and today's kafka-ops audits it into the same results
    os.remove(os.path.join(moved.log_dirs[0], ".kafka_cleanshutdown"))
    r = CliRunner().invoke(load_all(), [*audit, "--results", str(mixed)])
    assert r.exit_code == 0, r.output  # SHUT001 of a recovery of seconds is info: below the gate
    new = json.loads(r.stdout)["fleet"]
    assert new["spark_jobs"] == 4
    new_file = next((mixed / "hosts" / "run_date=2026-09-21").glob("*.parquet"))
    assert str(pq.read_schema(new_file).field("run_at").type) != "string"

    text = CliRunner().invoke(load_all(), ["fleet", "diff", "--results", str(mixed)])
    assert text.exit_code == 1 and text.stderr == "", text.output  # a new finding; no traceback, no error
    assert text.stdout.startswith(
        f"fleet diff: run {old_id} -> {new['run_id']}\nnew findings: 1\n  info SHUT001 broker-2 {moved.log_dirs[0]}\n"
    ), text.stdout
    d = json.loads(
        CliRunner().invoke(load_all(), ["fleet", "diff", "--results", str(mixed), "-f", "json"]).stdout
    )
    # Spark's diff (a URI of another file system, or --master) as a user runs it: its own JVM, whose stderr is
    # the terminal's (the failed one-schema read of mixed results is expected, and not shown)
    by_spark = subprocess.run(
        [sys.executable, "-m", "kafka_ops", "fleet", "diff", "--results", f"file://{mixed}", "--master", "local[1]",
         "-f", "json"],
        capture_output=True, text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(REPO)},
    )  # fmt: skip
    assert by_spark.returncode == 1, by_spark.stderr
    assert "Exception" not in by_spark.stderr and "ERROR" not in by_spark.stderr, by_spark.stderr
    assert json.loads(by_spark.stdout) == d and (d["base"], d["head"]) == (old_id, new["run_id"])

    r = CliRunner().invoke(load_all(), [*audit, "--no-results"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["fleet"]["spark_jobs"] == 1  # the audit alone


def test_fleet_audit_of_a_kraft_host_uses_its_own_topic_configs(spark: Any) -> None:
    """The fleet audits each host with the collector's code: a KRaft host's topic configs come from its metadata
    log there too (tests/test_kraft_configs.py), and the fleet report keeps each host's topic_configs input."""
    from tests.conftest import CORPUS

    log_dir = CORPUS / "ItumelengMogase__Real-Time-Data-Pipeline-for-Patient-Admissions" / "kafka-data"
    if not log_dir.is_dir():
        pytest.skip("corpus not present")
    args = ["--log-dir", str(log_dir), "--broker-state", "stopped", "--now", str(NOW_MS), "-f", "json"]
    fleet = CliRunner().invoke(load_all(), ["fleet", "audit", *args, "--no-results"])
    assert fleet.exit_code == 0, fleet.output
    r = json.loads(fleet.stdout)
    [(host, tc)] = r["fleet"]["topic_configs"].items()
    assert tc["source"] == "KRaft metadata log" and tc["topics"]["_schemas"].startswith("metadata snapshot")
    ns = r["fleet"]["next_start"][host]
    assert [s for s in ns["segments"] if s["deleted_by"]] == [] and ns["config_note"] is None
