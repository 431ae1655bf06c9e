"""Fleet fixtures: a local SparkSession, simulated fleets, SSH hosts in network namespaces, a standalone cluster.

Everything here is real: sshd from Debian's openssh-server, one per network namespace on a bridge, with its own
config and host keys in a temp dir; Spark's own Master and Worker started from the pip-installed pyspark.
"""

from __future__ import annotations

import contextlib
import json
import os
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from kafka_ops.simulator.host import Failures, HostSpec, SimulatedHost, simulate_host
from tests.conftest import NOW_MS

IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def need_root(what: str) -> None:
    """Root-only tests fail in CI (which runs as root) instead of silently skipping."""
    if os.geteuid() != 0 or shutil.which("ip") is None or not os.path.exists("/usr/sbin/sshd"):
        msg = f"{what} needs root, ip and sshd (.ci/setup-fleet.sh installs them)"
        if IN_CI:
            pytest.fail(msg)
        pytest.skip(msg)


def me() -> str:
    return pwd.getpwuid(os.getuid()).pw_name


@pytest.fixture(scope="session")
def spark() -> Iterator[object]:
    from kafka_ops.fleet.job import spark_session

    s = spark_session("local[2]", app_name="kafka-ops fleet tests")
    s.conf.set("spark.sql.shuffle.partitions", "2")
    yield s
    s.stop()


@dataclass
class Fleet:
    root: Path
    hosts: dict[str, SimulatedHost]
    node_ids: dict[str, int]

    def inventory(
        self, path: Path, extra: dict[str, dict[str, object]] | None = None, **group: object
    ) -> Path:
        """An inventory of these hosts audited in the Spark task (ansible_connection: local)."""
        hosts: dict[str, dict[str, object]] = {}
        for name, h in self.hosts.items():
            hosts[name] = {
                "ansible_connection": "local", "kafka_log_dirs": h.log_dirs,
                "kafka_server_properties": h.server_properties, "kafka_systemd_unit": h.systemd_unit,
                "kafka_node_id": self.node_ids[name],
                "kafka_expected_mounts": {d: "/" for d in h.log_dirs},
            }  # fmt: skip
        for name, v in (extra or {}).items():
            hosts[name] = {**hosts.get(name, {}), **v}
        inv = {
            "all": {
                "children": {"kafka_brokers": {"vars": {"kafka_version": "3.7.0", **group}, "hosts": hosts}}
            }
        }
        out = path.with_suffix(".yml")
        out.write_text(json.dumps(inv))  # JSON is YAML: ansible's yaml inventory plugin reads it
        return out


def make_fleet(root: Path, spec: dict[str, tuple[int, Failures]], **kw: object) -> Fleet:
    root.mkdir(parents=True, exist_ok=True)
    os.chmod(root, 0o755)
    hosts = {
        name: simulate_host(str(root / name), HostSpec(now_ms=NOW_MS, node_id=node, failures=fail, **kw))  # type: ignore[arg-type]
        for name, (node, fail) in spec.items()
    }
    return Fleet(root, hosts, {n: node for n, (node, _f) in spec.items()})


@pytest.fixture(scope="session")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Fleet:
    """Three brokers: broker-1 with every seed failure (RET001 on orders-0), broker-2 and broker-3 healthy."""
    return make_fleet(
        tmp_path_factory.mktemp("fleet"),
        {"broker-1": (1, Failures.all()), "broker-2": (2, Failures()), "broker-3": (3, Failures())},
    )


# ------------------------------------------------------------------------------------------ SSH hosts


@dataclass
class SshLab:
    dir: Path
    key: Path
    known_hosts: Path
    addresses: dict[str, str]  # name -> address
    fleet: Fleet
    broker_user: str
    pids: list[int] = field(default_factory=list)


def _sh(*cmd: str) -> None:
    subprocess.run(cmd, check=True, capture_output=True, text=True)


def _clean_stale_labs() -> None:
    """Remove what a killed earlier run left (its namespaces, sshds and bridge): a leftover bridge on the same
    subnet would route our connections to the old sshds, whose host keys known_hosts does not hold."""
    for line in subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.splitlines():
        name = line.split()[0] if line.split() else ""
        if name.startswith("kof"):
            pids = subprocess.run(
                ["ip", "netns", "pids", name], capture_output=True, text=True
            ).stdout.split()
            for pid in pids:
                with contextlib.suppress(ProcessLookupError, ValueError):
                    os.kill(int(pid), 9)
            subprocess.run(["ip", "netns", "del", name], capture_output=True)
    for line in subprocess.run(
        ["ip", "-o", "link", "show"], capture_output=True, text=True
    ).stdout.splitlines():
        dev = line.split(":")[1].strip().split("@")[0] if ":" in line else ""
        if dev.startswith(("kofb", "kofv")):
            subprocess.run(["ip", "link", "del", dev], capture_output=True)


@pytest.fixture(scope="session")
def ssh_lab() -> Iterator[SshLab]:
    """Five network namespaces on a bridge: h1-h3 run sshd with keys known_hosts trusts; h4 runs sshd with a host key
    known_hosts does not match; h5 runs nothing (connection refused). Brokers' data belong to user kfleet."""
    need_root("SSH hosts in network namespaces")
    _clean_stale_labs()
    tag = f"{os.getpid() % 10000}"
    bridge, ns = f"kofb{tag}", [f"kof{tag}-{i}" for i in range(1, 6)]
    d = Path(tempfile.mkdtemp(prefix="kafka-ops-fleet-ssh-", dir="/tmp"))
    os.chmod(d, 0o755)  # the broker user must traverse it (sudo -u kfleet)
    user, created = "kfleet", False
    try:
        pwd.getpwnam(user)
    except KeyError:
        _sh("useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", user)
        created = True
    pw = pwd.getpwnam(user)
    os.makedirs("/run/sshd", exist_ok=True)
    lab = SshLab(d, d / "id", d / "known_hosts", {}, Fleet(d, {}, {}), user)
    try:
        _sh("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(lab.key))
        shutil.copy(d / "id.pub", d / "authorized_keys")
        _sh("ip", "link", "add", bridge, "type", "bridge")
        _sh("ip", "addr", "add", "10.232.0.1/24", "dev", bridge)
        _sh("ip", "link", "set", bridge, "up")
        known = []
        for i, n in enumerate(ns, start=1):
            addr = f"10.232.0.{10 + i}"
            lab.addresses[f"h{i}"] = addr
            _sh("ip", "netns", "add", n)
            _sh("ip", "link", "add", f"kofv{tag}-{i}", "type", "veth", "peer", "name", "eth0", "netns", n)
            _sh("ip", "link", "set", f"kofv{tag}-{i}", "master", bridge, "up")
            _sh("ip", "-n", n, "addr", "add", f"{addr}/24", "dev", "eth0")
            _sh("ip", "-n", n, "link", "set", "eth0", "up")
            _sh("ip", "-n", n, "link", "set", "lo", "up")
            if i == 5:
                continue  # nothing listens: connection refused
            hk = d / f"hostkey{i}"
            _sh("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(hk))
            trusted = hk
            if i == 4:  # known_hosts holds another key for this address: a reinstalled or impersonated host
                trusted = d / "otherkey"
                _sh("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(trusted))
            known.append(f"{addr} " + " ".join((d / f"{trusted.name}.pub").read_text().split()[:2]))
            conf = d / f"sshd{i}.conf"
            conf.write_text(
                f"ListenAddress {addr}\nPort 22\nHostKey {hk}\nAuthorizedKeysFile {d}/authorized_keys\n"
                f"StrictModes no\nPermitRootLogin prohibit-password\nPasswordAuthentication no\nUsePAM no\n"
                f"PidFile {d}/sshd{i}.pid\n"
            )
            _sh("ip", "netns", "exec", n, "/usr/sbin/sshd", "-f", str(conf), "-E", str(d / f"sshd{i}.log"))
        lab.known_hosts.write_text("\n".join(known) + "\n")
        for i in range(1, 5):
            for _ in range(100):
                if (d / f"sshd{i}.pid").exists():
                    break
                time.sleep(0.05)
            lab.pids.append(int((d / f"sshd{i}.pid").read_text()))
        lab.fleet = make_fleet(
            d / "data",
            {"h1": (1, Failures.all()), "h2": (2, Failures()), "h3": (3, Failures())},
            broker_user=user, broker_uid=pw.pw_uid, broker_gid=pw.pw_gid,
        )  # fmt: skip
        yield lab
    finally:
        for pid in lab.pids:
            try:
                os.kill(pid, 15)
            except ProcessLookupError:
                pass
        for i, n in enumerate(ns, start=1):
            subprocess.run(["ip", "link", "del", f"kofv{tag}-{i}"], capture_output=True)
            subprocess.run(["ip", "netns", "del", n], capture_output=True)
        subprocess.run(["ip", "link", "del", bridge], capture_output=True)
        shutil.rmtree(d, ignore_errors=True)
        if created:
            subprocess.run(["userdel", user], capture_output=True)


# ------------------------------------------------------------------------------------------ standalone cluster


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Standalone:
    url: str
    env: dict[str, str]
    work_dirs: list[Path]


BARE_PYTHON = "/usr/bin/python3"  # the workers' Python: no kafka-ops, no pyspark, no paramiko


def bare_python() -> str:
    """The system Python, whose site-packages lack kafka-ops: what a cluster's workers have. Its minor version
    must be the driver's (pyspark refuses a mismatch)."""
    ok = os.path.exists(BARE_PYTHON) and subprocess.run(
        [BARE_PYTHON, "-I", "-c", f"import sys; assert sys.version_info[:2] == {tuple(sys.version_info[:2])}\n"
         "try:\n import kafka_ops\nexcept ImportError:\n pass\nelse:\n raise SystemExit(1)"],
        capture_output=True,
    ).returncode == 0  # fmt: skip
    if not ok:
        msg = f"{BARE_PYTHON} must be Python {sys.version_info[0]}.{sys.version_info[1]} without kafka-ops"
        if IN_CI:
            pytest.fail(msg)
        pytest.skip(msg)
    return BARE_PYTHON


def pack_env(out: Path, dists: list[str], python: str) -> Path:
    """A packed environment as `venv-pack` makes one: a venv on ``python`` holding ``dists`` (copied from this
    interpreter's installed distributions), as a .tar.gz for ``spark.archives``."""
    import importlib.metadata as md
    import tarfile

    env = out.with_suffix(".d")
    subprocess.run([python, "-m", "venv", "--without-pip", str(env)], check=True, capture_output=True)
    site = subprocess.run(
        [str(env / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True, capture_output=True, text=True,
    ).stdout.strip()  # fmt: skip
    for d in dists:
        dist = md.distribution(d)
        for f in dist.files or []:
            src = Path(str(dist.locate_file(f)))
            if "__pycache__" in f.parts or ".." in f.parts or not src.is_file():
                continue
            dst = Path(site) / f
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst)
    with tarfile.open(out, "w:gz") as t:
        t.add(env, arcname=".")
    return out


@pytest.fixture(scope="session")
def standalone(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Standalone]:
    """A Spark standalone master and two workers (one core each) on localhost, from the installed pyspark
    (bin/spark-class). The workers' environment has no PYSPARK_PYTHON: the driver says which Python runs."""
    import pyspark

    home = os.path.dirname(pyspark.__file__)
    logs = tmp_path_factory.mktemp("spark-standalone")
    env = {
        **{k: v for k, v in os.environ.items() if k != "PYSPARK_PYTHON"}, "SPARK_HOME": home,
        "SPARK_LOCAL_IP": "127.0.0.1", "SPARK_LOG_DIR": str(logs),
    }  # fmt: skip
    # the workers' Python workers inherit the workers' PYTHONPATH: none, so that nothing of ours leaks to them
    workers_env = {k: v for k, v in env.items() if k != "PYTHONPATH"}
    port, ui = _free_port(), _free_port()
    url = f"spark://127.0.0.1:{port}"
    cls = os.path.join(home, "bin", "spark-class")
    procs = []
    work = [logs / "work1", logs / "work2"]
    try:
        procs.append(subprocess.Popen(
            [cls, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(port),
             "--webui-port", str(ui)], env=env, stdout=open(logs / "master.log", "w"), stderr=subprocess.STDOUT,
        ))  # fmt: skip
        for i, w in enumerate(work, start=1):
            procs.append(subprocess.Popen(
                [cls, "org.apache.spark.deploy.worker.Worker", url, "--cores", "1", "--memory", "1g",
                 "--webui-port", str(_free_port()), "--work-dir", str(w)], env=workers_env,
                stdout=open(logs / f"worker{i}.log", "w"), stderr=subprocess.STDOUT,
            ))  # fmt: skip
        deadline = time.monotonic() + 180
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{ui}/json/", timeout=2) as r:
                    if json.load(r).get("aliveworkers", 0) >= 2:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline or any(p.poll() is not None for p in procs):
                raise RuntimeError(f"standalone cluster did not come up: see {logs}")
            time.sleep(0.5)
        yield Standalone(url, env, work)
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
