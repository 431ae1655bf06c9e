"""The Ansible collection kafka_ops.kafka (galaxy.yml): built with ansible-galaxy, its tarball holds the roles and
playbooks and nothing of the checkout's Python package, tests or Molecule scenarios; installed into an empty path,
its preflight playbook runs by FQCN from a directory outside the checkout (so the checkout's roles/ cannot be
used) against two simulated broker hosts on this machine, a chosen host group and a chosen reports folder.

No Molecule, no root: the hosts are localhost with ansible_connection=local, their log dirs written by the
simulator (tests/conftest.py), and the collector the roles ship runs under this Python.
"""

from __future__ import annotations

import json
import os
import pwd
import subprocess
import sys
import tarfile
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from kafka_ops.simulator.host import SimulatedHost
from tests.conftest import NOW_MS

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
GALAXY = BIN / "ansible-galaxy"
PLAYBOOK = BIN / "ansible-playbook"
ROLES = ("kafka_datadirs", "kafka_preflight", "kafka_rolling_restart", "kafka_systemd")
PLAYBOOKS = ("preflight.yml", "remediate.yml", "rolling_restart.yml")
# what may be at the top of the tarball: the checkout's other folders (kafka_ops, tests, docs, ...) stay out
TOP = {
    "MANIFEST.json",
    "FILES.json",
    "README.md",
    "meta",
    "playbooks",
    "roles",
    "inventories",
    "changelogs",
    "plugins",
}


@dataclass
class Installed:
    tarball: Path
    collections: Path  # ANSIBLE_COLLECTIONS_PATH
    tmp: Path


def _env(tmp: Path, collections: Path) -> dict[str, str]:
    """ansible's environment for a run outside the checkout: none of the caller's ANSIBLE_* settings (an
    ANSIBLE_CONFIG or ANSIBLE_ROLES_PATH pointing at the checkout would hide what the collection lacks)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANSIBLE_")}
    roles = tmp / "no-roles"
    roles.mkdir(exist_ok=True)
    env.update(
        PATH=f"{BIN}{os.pathsep}{env.get('PATH', '')}",
        ANSIBLE_COLLECTIONS_PATH=str(collections),
        ANSIBLE_ROLES_PATH=str(roles),
        ANSIBLE_HOME=str(tmp / "ansible-home"),
        ANSIBLE_PIPELINING="True",  # local connection: no module files copied per task
        ANSIBLE_NOCOLOR="1",
        ANSIBLE_FORCE_COLOR="0",
        PY_COLORS="0",
    )
    return env


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    if not GALAXY.exists() or not PLAYBOOK.exists():
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("CI: ansible-core is not installed: pip install -e '.[dev]'")
        pytest.skip("ansible-core is not installed")
    tmp = tmp_path_factory.mktemp("collection")
    env = _env(tmp, tmp / "collections")
    build = subprocess.run(
        [str(GALAXY), "collection", "build", "--output-path", str(tmp / "dist"), str(REPO)],
        cwd=tmp, capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert build.returncode == 0, build.stdout + build.stderr
    (tarball,) = (tmp / "dist").glob("kafka_ops-kafka-*.tar.gz")
    install = subprocess.run(
        [str(GALAXY), "collection", "install", "-p", str(tmp / "collections"), str(tarball)],
        cwd=tmp, capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert install.returncode == 0, install.stdout + install.stderr
    assert "kafka_ops.kafka:" in install.stdout and "installed successfully" in install.stdout, install.stdout
    return Installed(tarball, tmp / "collections", tmp)


def test_the_tarball_holds_the_roles_and_playbooks_and_nothing_of_the_checkout(installed: Installed) -> None:
    with tarfile.open(installed.tarball) as tar:
        names = [m.name.removeprefix("./") for m in tar.getmembers()]
        manifest = json.load(tar.extractfile("MANIFEST.json"))  # type: ignore[arg-type]
    members = set(names)
    assert {f"playbooks/{p}" for p in PLAYBOOKS} <= members
    for role in ROLES:
        assert {f"roles/{role}/tasks/main.yml", f"roles/{role}/defaults/main.yml", f"roles/{role}/README.md",
                f"roles/{role}/meta/argument_specs.yml"} <= members, role  # fmt: skip
    assert "roles/kafka_preflight/files/kafka_ops_collector.py" in members
    # the shared defaults' role: no tasks, its defaults and argument spec are what the others depend on
    assert {"roles/kafka_common/defaults/main.yml", "roles/kafka_common/meta/main.yml",
            "roles/kafka_common/meta/argument_specs.yml", "roles/kafka_common/README.md"} <= members  # fmt: skip
    top_files = {
        "meta/runtime.yml",
        "README.md",
        "inventories/example/hosts.yml",
        "changelogs/changelog.yaml",
    }
    assert top_files <= members
    assert {n.split("/")[0] for n in names} <= TOP, sorted({n.split("/")[0] for n in names} - TOP)
    leaked = [n for n in names if "molecule" in n.split("/") or "__pycache__" in n or n.endswith(".pyc")]
    assert leaked == []
    assert installed.tarball.stat().st_size < 1_000_000  # the collector is most of it (about 300 KB)
    info = manifest["collection_info"]
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert (info["namespace"], info["name"], info["version"]) == ("kafka_ops", "kafka", project["version"])
    assert info["license"] == [project["license"]]
    # Galaxy's links and a changelog whose latest release is this version (ansible-lint's galaxy rule)
    assert all(info[k].startswith("https://") for k in ("repository", "documentation", "issues")), info
    releases = yaml.safe_load((REPO / "changelogs" / "changelog.yaml").read_text())["releases"]
    assert max(releases, key=lambda v: tuple(int(x) for x in v.split("."))) == info["version"]


def _host_vars(host: SimulatedHost) -> dict[str, object]:
    return {
        "ansible_connection": "local",
        "ansible_python_interpreter": sys.executable,
        "ansible_become": False,  # the playbooks become root; this test needs no root
        "kafka_preflight_python": sys.executable,
        "kafka_server_properties": host.server_properties,
        "kafka_systemd_unit": host.systemd_unit,  # a path: no systemctl asked
        "kafka_broker_user": pwd.getpwuid(os.getuid()).pw_name,
        "kafka_version": "3.7.0",
        "kafka_expected_mounts": {d: "/" for d in host.log_dirs},  # test hosts are on the root fs
        "kafka_preflight_topic_configs": host.topic_configs,
        "kafka_preflight_broker_logs": [host.server_log, host.cleaner_log],
        "kafka_preflight_broker_state": "stopped",
        "kafka_preflight_extra_args": ["--now", str(NOW_MS)],
    }


@pytest.fixture(scope="module")
def inventory(installed: Installed, healthy_host: SimulatedHost, broken_host: SimulatedHost) -> Path:
    """Two hosts in a group that is not kafka_brokers: the playbook's group comes from kafka_ops_hosts."""
    path = installed.tmp / "inventory.yml"
    hosts = {"healthy-1": _host_vars(healthy_host), "broken-1": _host_vars(broken_host)}
    path.write_text(yaml.safe_dump({"all": {"children": {"brokers_under_test": {"hosts": hosts}}}}))
    return path


def _run(installed: Installed, *argv: str) -> subprocess.CompletedProcess[str]:
    cwd = installed.tmp / "operator"  # outside the checkout: no ansible.cfg, no roles/ beside it
    cwd.mkdir(exist_ok=True)
    env = _env(installed.tmp, installed.collections) | {"PWD": str(cwd)}
    return subprocess.run(
        [str(PLAYBOOK), *argv], cwd=cwd, capture_output=True, text=True, env=env, timeout=300
    )


def test_preflight_runs_by_fqcn_from_the_installed_collection(installed: Installed, inventory: Path) -> None:
    reports = installed.tmp / "chosen-reports"
    r = _run(installed, "-i", str(inventory), "kafka_ops.kafka.preflight",
             "-e", "kafka_ops_hosts=brokers_under_test", "-e", f"kafka_ops_report_dir={reports}")  # fmt: skip
    out = r.stdout + r.stderr
    # ansible-playbook's exit 2: a host failed; the healthy one passed, the broken one failed on its findings
    assert r.returncode == 2, out[-4000:]
    assert "skipping: no hosts matched" not in out
    assert "TASK [kafka_ops.kafka.kafka_preflight : Fail on findings at or above the threshold]" in out
    assert "kafka-ops preflight failed on broken-1:" in out
    assert f"{installed.collections}/ansible_collections/kafka_ops/kafka/roles/kafka_preflight" in out
    # kafka_preflight's dependency (meta/main.yml: `role: kafka_common`, a short name) is found in the collection,
    # and its argument spec validates the shared variables before the preflight runs
    assert "TASK [kafka_ops.kafka.kafka_common : Validating arguments against arg spec 'main'" in out
    assert f"{REPO}/roles" not in out
    recap = {line.split()[0]: line for line in out.splitlines() if " : ok=" in line}
    assert "failed=0" in recap["healthy-1"] and "failed=1" in recap["broken-1"], recap
    healthy = json.loads((reports / "healthy-1-preflight.json").read_text())
    broken = json.loads((reports / "broken-1-preflight.json").read_text())
    assert healthy["gate"]["passed"] and healthy["gate"]["failing"] == []
    assert not broken["gate"]["passed"] and broken["gate"]["failing"]
    assert {f["check"] for f in broken["findings"]} >= {"RET001", "IDX002", "SHUT001"}
    (run,) = (reports / "runs").iterdir()  # this run's copies
    assert sorted(p.name for p in run.iterdir()) == ["broken-1-preflight.json", "healthy-1-preflight.json"]
    assert not list(installed.collections.rglob("kafka-ops-reports"))  # nothing written into the collection


def test_the_roll_finds_the_collector_through_the_installed_collection(
    installed: Installed, inventory: Path
) -> None:
    """The rolling restart's tasks read kafka_preflight's collector by role_path: from the installed tree too."""
    play = installed.tmp / "quorum.yml"
    play.write_text(
        "- name: Read the node id as the roll does\n"
        "  hosts: healthy-1\n"
        "  gather_facts: false\n"
        "  tasks:\n"
        "    - name: Quorum\n"
        "      ansible.builtin.include_role: {name: kafka_ops.kafka.kafka_rolling_restart, tasks_from: quorum.yml}\n"
        "    - name: Node\n"
        "      ansible.builtin.debug: {msg: 'node={{ kafka_rolling_restart_node }}'}\n"
    )
    r = _run(installed, "-i", str(inventory), str(play))
    assert r.returncode == 0, (r.stdout + r.stderr)[-4000:]
    assert '"msg": "node=1"' in r.stdout  # node.id of the simulated server.properties


@pytest.mark.parametrize("fatal", [True, False])
def test_the_roll_reads_any_errors_fatal_through_the_collections_action_plugin(
    installed: Installed, inventory: Path, fatal: bool
) -> None:
    """begin.yml's play check (kafka_ops.kafka.kafka_rolling_restart_play, plugins/action/) runs from the installed
    collection, where a role has no action_plugins/ of its own: a play without any_errors_fatal is refused."""
    play = installed.tmp / "begin.yml"
    play.write_text(
        "- name: Begin the roll\n  hosts: healthy-1\n  gather_facts: false\n"
        f"  any_errors_fatal: {str(fatal).lower()}\n  tasks:\n    - name: Begin\n"
        "      ansible.builtin.include_role: {name: kafka_ops.kafka.kafka_rolling_restart, tasks_from: begin.yml}\n"
    )
    r = _run(installed, "-i", str(inventory), str(play), "-e", "kafka_rolling_restart_require_cluster=false")
    out = r.stdout + r.stderr
    refused = "refusing to roll: the play does not set `any_errors_fatal: true`" in out
    assert "couldn't resolve module/action" not in out, out[-4000:]
    assert refused is not fatal, out[-4000:]
    if fatal:
        assert "Read what the play says about failures" in out and r.returncode == 0, out[-4000:]


def test_a_check_run_prints_each_finding_once_compactly_and_writes_no_report(
    installed: Installed, inventory: Path
) -> None:
    reports = installed.tmp / "check-reports"
    r = _run(installed, "-i", str(inventory), "kafka_ops.kafka.preflight", "--check",
             "-e", "kafka_ops_hosts=brokers_under_test", "-e", f"kafka_ops_report_dir={reports}")  # fmt: skip
    out = r.stdout + r.stderr
    assert r.returncode == 2, out[-4000:]
    assert not reports.exists()  # --check writes nothing, the reports neither
    lines = [x for x in out.splitlines() if x.strip().startswith('"RET001 critical ')]
    assert lines, out[-4000:]
    first = lines[0]
    # each finding once: its check and path are on one line of the whole output
    path = first.split()[2].rstrip(":")
    assert sum("RET001" in x and path in x for x in out.splitlines()) == 1, [
        x for x in out.splitlines() if path in x
    ]
    assert all(len(x.strip()) <= 300 for x in lines), max(lines, key=len)
    assert "FIX:" not in out
    (fatal,) = [x for x in out.splitlines() if x.startswith("fatal: [broken-1]")]
    assert len(fatal) < 400, fatal
    assert "kafka-ops preflight failed on broken-1:" in fatal and "RET001" in fatal
    assert "--check: no report written" in fatal


def test_ansible_lint_production_passes_inside_the_installed_collection(installed: Installed) -> None:
    """As Galaxy's importer lints it: in the collection installed from its tarball, where only the collection's own
    names resolve (a playbook naming a role by its short name: "the role 'kafka_preflight' was not found")."""
    lint = BIN / "ansible-lint"
    if not lint.exists():
        pytest.skip("ansible-lint is not installed")
    root = installed.collections / "ansible_collections" / "kafka_ops" / "kafka"
    env = _env(installed.tmp, installed.collections) | {"HOME": str(installed.tmp / "lint-home")}
    r = subprocess.run(
        [str(lint), "--profile", "production", "--offline", "--nocolor"],
        cwd=root, capture_output=True, text=True, env=env, timeout=600,
    )  # fmt: skip
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-4000:]
    assert "Profile 'production' was required, and it passed." in out, out[-4000:]
    for p in PLAYBOOKS:
        doc = yaml.safe_load((root / "playbooks" / p).read_text())
        names = [x.get("role") for x in doc[0].get("roles", [])] + [
            t["ansible.builtin.include_role"]["name"]
            for t in doc[0].get("tasks", [])
            if "ansible.builtin.include_role" in t
        ]
        assert names and all(n.startswith("kafka_ops.kafka.") for n in names), (p, names)


LOWEST_ANSIBLE_CORE = "ansible-core>=2.18,<2.19"  # meta/runtime.yml's requires_ansible: the lowest supported


@pytest.fixture(scope="module")
def lowest_ansible(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bin/ of the lowest supported ansible-core: KAFKA_OPS_ANSIBLE_218 (a bin/ folder), else installed by pip
    into a venv of this test's (pip's cache makes it quick after the first time); skipped when pip cannot get it."""
    given = os.environ.get("KAFKA_OPS_ANSIBLE_218")
    if given:
        return Path(given)
    venv = tmp_path_factory.mktemp("ansible-core-218") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True, timeout=120)
    r = subprocess.run(
        [str(venv / "bin" / "pip"), "install", "-q", LOWEST_ANSIBLE_CORE],
        capture_output=True,
        text=True,
        timeout=600,
    )
    if r.returncode != 0:
        pytest.skip(
            f"pip could not install {LOWEST_ANSIBLE_CORE}: {(r.stderr.strip().splitlines() or ['?'])[-1]}"
        )
    return venv / "bin"


def test_the_playbooks_parse_with_the_lowest_ansible_core(
    installed: Installed, inventory: Path, lowest_ansible: Path
) -> None:
    """The other end of the supported range (the tests run 2.19): every playbook parses by FQCN from the installed
    collection, and the preflight runs there (--check: it reads only) with the same verdicts as on 2.19."""
    playbook = lowest_ansible / "ansible-playbook"
    version = subprocess.run([str(playbook), "--version"], capture_output=True, text=True, timeout=60).stdout
    assert version.startswith("ansible-playbook [core 2.18."), version
    env = _env(installed.tmp, installed.collections) | {
        "PATH": f"{lowest_ansible}{os.pathsep}{os.environ['PATH']}"
    }
    cwd = installed.tmp / "operator-218"
    cwd.mkdir(exist_ok=True)
    for p in PLAYBOOKS:
        r = subprocess.run(
            [str(playbook), "-i", str(inventory), "--syntax-check", f"kafka_ops.kafka.{p.removesuffix('.yml')}"],
            cwd=cwd, capture_output=True, text=True, env=env, timeout=300,
        )  # fmt: skip
        assert r.returncode == 0, (p, r.stdout + r.stderr)
    r = subprocess.run(
        [str(playbook), "-i", str(inventory), "kafka_ops.kafka.preflight", "--check",
         "-e", "kafka_ops_hosts=brokers_under_test", "-e", f"kafka_ops_report_dir={installed.tmp / 'reports-218'}"],
        cwd=cwd, capture_output=True, text=True, env=env, timeout=300,
    )  # fmt: skip
    out = r.stdout + r.stderr
    assert r.returncode == 2, out[-4000:]
    recap = {line.split()[0]: line for line in out.splitlines() if " : ok=" in line}
    assert "failed=0" in recap["healthy-1"] and "failed=1" in recap["broken-1"], recap
    assert "kafka-ops preflight failed on broken-1:" in out
