"""The fleet job over real SSH: sshd in network namespaces, paramiko, sudo to the broker user, known_hosts."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from kafka_ops.fleet.inventory import read_inventory
from kafka_ops.fleet.job import run_fleet
from kafka_ops.render.models import validate
from tests.conftest import NOW_MS
from tests.fleet.conftest import SshLab
from tests.fleet.test_fleet_local import KEY, cli_findings

SETTINGS = {"now_ms": NOW_MS, "broker_state": "stopped", "fail_on": "critical", "connect_timeout": 5}


def _inventory(lab: SshLab, path: Path) -> Path:
    hosts: dict[str, dict[str, Any]] = {}
    for i in range(1, 6):
        name = f"h{i}"
        sim = lab.fleet.hosts.get(name) or lab.fleet.hosts["h2"]  # h4/h5 are never reached: any dirs will do
        hosts[name] = {
            "ansible_host": lab.addresses[name], "ansible_user": "root",
            "ansible_ssh_private_key_file": str(lab.key), "kafka_log_dirs": sim.log_dirs,
            "kafka_server_properties": sim.server_properties, "kafka_systemd_unit": sim.systemd_unit,
            "kafka_node_id": i, "kafka_expected_mounts": {d: "/" for d in sim.log_dirs},
        }  # fmt: skip
    # the same reachable sshd, but a broker user sudo does not know, and a config file that is not there
    hosts["h6-sudo"] = {**hosts["h1"], "kafka_broker_user": "no-such-broker-user"}
    hosts["h7-badconf"] = {**hosts["h2"], "kafka_server_properties": "/nonexistent/server.properties"}
    # a key the host does not accept (no agent runs here: nothing else is offered)
    hosts["h8-auth"] = {**hosts["h3"], "ansible_ssh_private_key_file": str(lab.dir / "otherkey")}
    inv = {"all": {"children": {"kafka_brokers": {
        "vars": {"kafka_version": "3.7.0", "kafka_broker_user": lab.broker_user}, "hosts": hosts}}}}  # fmt: skip
    out = path / "inventory.yml"
    out.write_text(json.dumps(inv))
    return out


def _snapshot(root: Path) -> dict[str, tuple[int, float]]:
    out = {}
    for dirpath, dirs, files in os.walk(root):
        for n in dirs + files:
            p = os.path.join(dirpath, n)
            st = os.lstat(p)
            out[p] = (st.st_size, st.st_mtime)
    return out


def test_fleet_over_ssh_hosts_with_an_unreachable_one_and_a_wrong_host_key(
    spark: Any, ssh_lab: SshLab, tmp_path: Path
) -> None:
    before = _snapshot(ssh_lab.fleet.root)
    targets = read_inventory(str(_inventory(ssh_lab, tmp_path)))
    settings = {**SETTINGS, "known_hosts": str(ssh_lab.known_hosts)}
    run = run_fleet(spark, targets, settings, name="netns")
    rep = run.report
    validate(rep)
    status = {h["host"]: h["status"] for h in rep["fleet"]["hosts"]}
    assert status == {
        "h1": "ok", "h2": "ok", "h3": "ok", "h4": "host_key", "h5": "unreachable", "h6-sudo": "sudo",
        "h7-badconf": "collector", "h8-auth": "auth",
    }  # fmt: skip
    fleet_checks = sorted((f["host"], f["check"]) for f in rep["findings"] if f["check"].startswith("FLEET"))
    assert fleet_checks == [
        ("h4", "FLEET002"), ("h5", "FLEET001"), ("h6-sudo", "FLEET004"), ("h7-badconf", "FLEET005"),
        ("h8-auth", "FLEET003"),
    ]  # fmt: skip
    by_host = {f["host"]: f for f in rep["findings"] if f["check"].startswith("FLEET")}
    assert (
        "host key mismatch" in by_host["h4"]["message"]
        and str(ssh_lab.known_hosts) in by_host["h4"]["message"]
    )
    assert f"{ssh_lab.addresses['h5']}:22: connection refused" in by_host["h5"]["message"]
    assert "(sudo: unknown user no-such-broker-user;" in by_host["h6-sudo"]["message"]
    assert "/nonexistent/server.properties" in by_host["h7-badconf"]["message"]
    assert "authentication failed for user root" in by_host["h8-auth"]["message"]
    # the reachable hosts: the CLI's own findings, computed on the host as the broker user (sudo -u kfleet)
    for name in ("h1", "h2", "h3"):
        got = sorted(tuple(f[k] for k in KEY) for f in rep["findings"] if f["host"] == name)
        assert got == cli_findings(ssh_lab.fleet.hosts[name], name, user=ssh_lab.broker_user), name
    assert {f["check"] for f in rep["findings"] if f["host"] == "h1"} >= {"RET001", "SHUT001", "PERM001"}
    hosts = {h["host"]: h for h in rep["fleet"]["hosts"]}
    assert hosts["h2"]["partitions"] > 0 and hosts["h2"]["node_id"] == 2
    # the replicas found on the three brokers are one partition's replicas
    orders = next(t for t in rep["fleet"]["topics"] if t["topic"] == "orders")
    assert orders["hosts"] == 3 and orders["replicas"] == 3 * orders["partitions"]
    # no agent, nothing written on the hosts' data
    assert _snapshot(ssh_lab.fleet.root) == before
    assert rep["gate"]["passed"] is False
