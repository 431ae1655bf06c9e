"""The rolling restart's order (roles/kafka_rolling_restart/tasks/step.yml), run by ansible-playbook: brokers-only
nodes first, then the controllers (dedicated and combined) in inventory order, the active controller last; and
its wait after a controller-only node's start (wait_start.yml), on the shipped collector's reading of its log.

The role's own tasks (main.yml, begin.yml, step.yml, quorum.yml with the shipped collector reading each host's
server.properties and quorum-state) run on six local hosts; only restart.yml, the restart itself, is replaced by a
line that says which host it would restart. The cluster is not asked (kafka_rolling_restart_require_cluster=false):
the controller comes from the quorum-state files, as when the cluster cannot answer. The cluster's own answers on
real dedicated controllers are tests/lab/test_cluster_checks.py's (test_quorum_*); the 3+3 Molecule scenario is
still to come.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
PLAYBOOK = Path(sys.executable).parent / "ansible-playbook"


def _host(tmp: Path, name: str, node: int, roles: str | None, leader: int) -> dict[str, object]:
    d = tmp / name
    meta = d / "data" / "__cluster_metadata-0"
    meta.mkdir(parents=True)
    (meta / "quorum-state").write_text(json.dumps({"leaderId": leader, "leaderEpoch": 4, "votedId": -1}))
    props = d / "server.properties"
    roles_line = f"process.roles={roles}\n" if roles else ""
    props.write_text(f"{roles_line}node.id={node}\nlog.dirs={d / 'data'}\n")
    return {
        "ansible_connection": "local",
        "ansible_python_interpreter": sys.executable,
        "kafka_preflight_python": sys.executable,
        "kafka_server_properties": str(props),
    }


def roll(tmp: Path, hosts: dict[str, tuple[int, str | None]], leader: int) -> list[str]:
    if not PLAYBOOK.exists():
        pytest.skip("ansible-core is not installed")
    roles = tmp / "roles"
    for r in ("kafka_common", "kafka_preflight", "kafka_rolling_restart"):
        shutil.copytree(REPO / "roles" / r, roles / r, ignore=shutil.ignore_patterns("molecule"))
    (roles / "kafka_rolling_restart" / "tasks" / "restart.yml").write_text(
        "---\n- name: Restart (replaced by the test)\n  ansible.builtin.debug:\n"
        '    msg: "ROLLED {{ inventory_hostname }}"\n'
    )
    inv = {n: _host(tmp, n, node, r, leader) for n, (node, r) in hosts.items()}
    doc = {"all": {"children": {"kafka_brokers": {"hosts": inv}}}}
    (tmp / "inventory.yml").write_text(yaml.safe_dump(doc, sort_keys=False))  # the inventory order as given
    (tmp / "play.yml").write_text(
        "- name: Roll\n  hosts: kafka_brokers\n  gather_facts: false\n  any_errors_fatal: true\n  tasks:\n"
        "    - name: Roll\n      ansible.builtin.include_role: {name: kafka_rolling_restart}\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANSIBLE_")} | {
        "ANSIBLE_ROLES_PATH": str(roles), "ANSIBLE_HOME": str(tmp / "ansible-home"), "ANSIBLE_NOCOLOR": "1",
        "ANSIBLE_PIPELINING": "True",
    }  # fmt: skip
    r = subprocess.run(
        [str(PLAYBOOK), "-i", str(tmp / "inventory.yml"), str(tmp / "play.yml"),
         "-e", "kafka_rolling_restart_require_cluster=false", "-e", f"kafka_ops_report_dir={tmp / 'reports'}"],
        cwd=tmp, capture_output=True, text=True, env=env, timeout=600,
    )  # fmt: skip
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-4000:]
    steps = re.findall(r"step \d+/\d+: restarting (\S+) \(node \d+\);", out)
    assert re.findall(r'"msg": "ROLLED (\S+)"', out) == steps, out[-4000:]
    return steps


def test_brokers_first_then_the_controllers_the_quorum_leader_last(tmp_path: Path) -> None:
    hosts = {
        "ctl-1": (1, "controller"), "ctl-2": (2, "controller"), "ctl-3": (3, "controller"),
        "brk-4": (4, "broker"), "both-7": (7, "broker,controller"), "brk-5": (5, "broker"),
    }  # fmt: skip
    assert roll(tmp_path, hosts, leader=2) == ["brk-4", "brk-5", "ctl-1", "ctl-3", "both-7", "ctl-2"]


def test_combined_nodes_keep_the_inventory_order_the_controller_last(tmp_path: Path) -> None:
    hosts = {
        "n-1": (1, "broker,controller"),
        "n-2": (2, "broker,controller"),
        "n-3": (3, "broker,controller"),
    }
    assert roll(tmp_path, hosts, leader=1) == ["n-2", "n-3", "n-1"]


def _wait_start(
    tmp: Path, before_server_starts: int, controller_only: bool
) -> subprocess.CompletedProcess[str]:
    """The role's wait_start.yml on one local host whose log shows two starts of a controller-only node; the mark
    (the log's end before `systemctl start`, restart.yml) after the first ``before_server_starts`` of them."""
    roles = tmp / "roles"
    for r in ("kafka_common", "kafka_preflight", "kafka_rolling_restart"):
        shutil.copytree(REPO / "roles" / r, roles / r, ignore=shutil.ignore_patterns("molecule"))
    log = tmp / "server.log"
    lines = [
        "[2026-11-27 07:26:00,353] INFO [ControllerServer id=1] Starting controller (kafka.server.ControllerServer)\n",
        "[2026-11-27 07:26:07,495] INFO [KafkaRaftServer nodeId=1] Kafka Server started (kafka.server.KafkaRaftServer)\n",
        "[2026-11-27 07:26:38,985] INFO [ControllerServer id=1] Starting controller (kafka.server.ControllerServer)\n",
        "[2026-11-27 07:26:41,343] INFO [KafkaRaftServer nodeId=1] Kafka Server started (kafka.server.KafkaRaftServer)\n",
    ]
    log.write_text("".join(lines))
    st = log.stat()
    mark = {
        "exists": True,
        "dev": st.st_dev,
        "inode": st.st_ino,
        "size": len("".join(lines[: 2 * before_server_starts])),
    }
    unit = tmp / "kafka.service"
    unit.write_text("[Service]\nExecStart=/bin/true\n")
    host = {
        "ansible_connection": "local", "ansible_python_interpreter": sys.executable,
        "kafka_preflight_python": sys.executable, "kafka_broker_log": str(log), "kafka_systemd_unit": str(unit),
        "kafka_rolling_restart_controller_only": controller_only, "kafka_rolling_restart_start_wait": 2,
        "kafka_rolling_restart_poll": 1, "kafka_rolling_restart_progress_every": 1,
        "kafka_rolling_restart_mark": {"stat": mark},
    }  # fmt: skip
    (tmp / "inventory.yml").write_text(yaml.safe_dump({"all": {"hosts": {"ctl-1": host}}}))
    (tmp / "play.yml").write_text(
        "- name: Wait\n  hosts: all\n  gather_facts: false\n  tasks:\n"
        "    - name: The deadline, as restart.yml takes it before the start\n"
        '      ansible.builtin.set_fact: {kafka_rolling_restart_start_deadline: "{{ now().timestamp() + 2 }}"}\n'
        "    - name: Wait\n"
        "      ansible.builtin.include_role: {name: kafka_rolling_restart, tasks_from: wait_start.yml}\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANSIBLE_")} | {
        "ANSIBLE_ROLES_PATH": str(roles), "ANSIBLE_HOME": str(tmp / "ansible-home"), "ANSIBLE_NOCOLOR": "1",
    }  # fmt: skip
    return subprocess.run(
        [str(PLAYBOOK), "-i", str(tmp / "inventory.yml"), str(tmp / "play.yml")],
        cwd=tmp, capture_output=True, text=True, env=env, timeout=300,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("before", "controller_only", "started"), [(1, True, True), (2, True, False), (1, False, False)]
)
def test_a_controller_only_start_is_a_new_kafka_server_started_line(
    tmp_path: Path, before: int, controller_only: bool, started: bool
) -> None:
    """wait_start.yml: a controller-only node has started when its log shows a "Kafka Server started" line after
    the mark taken before the start (it loads no logs); no new line, or a broker's node with no finished load, is
    no start."""
    if not PLAYBOOK.exists():
        pytest.skip("ansible-core is not installed")
    r = _wait_start(tmp_path, before, controller_only)
    out = r.stdout + r.stderr
    if started:
        assert r.returncode == 0, out[-4000:]
    else:
        assert r.returncode == 2, out[-4000:]
        assert 'ctl-1 did not start: no "Kafka Server started" within 2 s' in out
