"""The shipped collector on a real Python 3.9, the oldest a broker host brings (RHEL 9 and Debian 11 ship 3.9;
issue 22): Debian 11 bullseye's own python3 (3.9.2, with its own glibc 2.31 and standard library), from the root
filesystem .ci/setup-py39.sh builds with debootstrap. Each mode the roles run (audit, stream, systemd, ownership,
logs, logs --wait-start, quorum) is run by it and by this interpreter (3.11+), on copies of real broker data dirs
from the corpus and on simulated hosts, and the two JSON documents must be the same, but for what differs by
nature between two runs (a file system's free bytes, the seconds a wait took).

Bullseye's interpreter runs on this host's kernel through bullseye's own dynamic loader (``ld-2.31.so
--library-path <rootfs libs> <rootfs>/usr/bin/python3.9``): it finds its standard library next to itself, so the
paths, users and mounts it sees are the host's, as the 3.11 run's. One more test runs it chrooted into bullseye's
userland (root only).
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from kafka_ops.collector import ship
from kafka_ops.simulator.host import Failures, HostSpec, SimulatedHost, simulate_host
from tests.conftest import CORPUS, NOW_MS

ROOTFS = Path(os.environ.get("KAFKA_OPS_PY39_ROOT", "/var/cache/kafka-ops/bullseye-py39"))
LIBS = [ROOTFS / "lib" / "x86_64-linux-gnu", ROOTFS / "usr" / "lib" / "x86_64-linux-gnu"]
LOADER = LIBS[0] / "ld-linux-x86-64.so.2"
PY39 = ROOTFS / "usr" / "bin" / "python3.9"
# what two runs of the same collector on the same files may differ in: nothing the checks decide
VARIES = frozenset({"free_bytes", "free_inodes", "waited_s"})  # statvfs answers change between the two runs

pytestmark = pytest.mark.skipif(
    not (PY39.exists() and LOADER.exists()),
    reason=f"no Debian 11 root filesystem with python3.9 at {ROOTFS}: run .ci/setup-py39.sh as root (about 70 s)",
)

CORPUS_DIRS = {  # real data dirs: the oldest on-disk format, a ZK 3.0 broker with its logs, a KRaft node
    "v0.10-magic1": "xpxwo100__bullShit/tmp/kafka-logs",
    "zk-3.0": "tuyen-nnt__kafka_2.13-3.0.0/data/kafka",
    "kraft-3.7": "ronem123__rupia-transaction-service/kafka-logs",
    "kraft-txn": "ItumelengMogase__Real-Time-Data-Pipeline-for-Patient-Admissions/kafka-data",
}


@cache
def _script() -> str:
    """The collector the kafka_preflight role ships (tests/test_ship.py keeps it equal to a fresh build)."""
    return ship.ROLE_COPY.read_text()


def _run39(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    cmd = [str(LOADER), "--library-path", ":".join(map(str, LIBS)), str(PY39), "-I", "-S", "-", *args]
    return subprocess.run(cmd, input=_script(), capture_output=True, text=True, timeout=300, env=env)


def _run311(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-I", "-S", "-", *args]
    return subprocess.run(cmd, input=_script(), capture_output=True, text=True, timeout=300, env=env)


def _without(doc: Any) -> Any:
    if isinstance(doc, dict):
        return {k: _without(v) for k, v in doc.items() if k not in VARIES}
    if isinstance(doc, list):
        return [_without(v) for v in doc]
    return doc


def _docs(out: str) -> list[Any]:
    """The JSON document, or each line's (the stream mode)."""
    try:
        return [json.loads(out)]
    except json.JSONDecodeError:
        return [json.loads(line) for line in out.splitlines()]


def _same(*args: str, codes: tuple[int, ...] = (0,)) -> list[Any]:
    """Runs the collector under 3.9 and under this 3.11+; asserts the same exit code, stderr and JSON."""
    old, new = _run39(*args), _run311(*args)
    assert old.returncode in codes, old.stderr
    assert (old.returncode, old.stderr) == (new.returncode, new.stderr)
    docs = _docs(old.stdout)
    assert _without(docs) == _without(_docs(new.stdout))
    return docs


def test_it_is_debian_11s_python_39() -> None:
    doc = json.loads(_run39("version").stdout)
    assert doc["python"] == "3.9.2"  # bullseye's python3.9 (3.9.2-1)
    assert doc["version"] == json.loads(_run311("version").stdout)["version"]


@pytest.fixture(params=sorted(CORPUS_DIRS), ids=sorted(CORPUS_DIRS))
def corpus_dir(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    src = CORPUS / CORPUS_DIRS[request.param]
    if not src.is_dir():
        pytest.skip(f"corpus not present: {src}")
    return Path(shutil.copytree(src, tmp_path / "kafka-logs", symlinks=True))


def test_audit_of_a_real_data_dir_is_the_same_on_39(corpus_dir: Path) -> None:
    (report,) = _same(
        "audit", "--log-dir", str(corpus_dir), "--broker-state", "stopped", "--now", "1793491200000",
        "--expect-mount", f"{corpus_dir}=/", codes=(0, 1),
    )  # fmt: skip
    assert report["errors"] == [] and report["log_dirs"][0]["partitions"] > 0
    # the checks ran; the KRaft node with a clean stop has nothing to say since its topics' own configs (compacted
    # Connect/Schema Registry topics) are read from its metadata log (tests/test_kraft_configs.py)
    assert report["checks_run"] and (report["findings"] or report["log_dirs"][0]["clean_shutdown"])


def _args(host: SimulatedHost) -> list[str]:
    return [
        "--server-properties", host.server_properties, "--topic-configs", host.topic_configs,
        "--systemd-unit", host.systemd_unit, "--broker-state", "stopped", "--kafka-version", "3.7.0",
        "--now", str(NOW_MS), "--broker-user", pwd.getpwuid(os.getuid()).pw_name,
    ] + [a for d in host.log_dirs for a in ("--expect-mount", f"{d}=/")]  # fmt: skip


def test_audit_and_stream_of_a_simulated_host_are_the_same_on_39(broken_host: SimulatedHost) -> None:
    (report,) = _same("audit", *_args(broken_host), codes=(1,))  # every seed failure planted: the gate fails
    assert {f["check"] for f in report["findings"]} >= {"RET001", "SHUT001", "IDX002", "CLN003"}
    rows = _same("stream", *_args(broken_host), codes=(1,))
    assert rows[-1]["kind"] == "report" and sum(1 for r in rows if r["kind"] == "partition") > 0


def test_the_audits_worker_processes_on_39_find_what_one_process_finds(tmp_path: Path) -> None:
    """3.9 has no dataclass slots (engine.compat): the facts the workers send go through pickling.by_constructor's
    field-list path there; the report must be the one 3.11 makes in one process."""
    host = simulate_host(str(tmp_path / "h"), HostSpec(now_ms=NOW_MS, failures=Failures.all()))
    workers = _run39("audit", *_args(host), env={**os.environ, "KAFKA_OPS_WORKERS": "2"})
    alone = _run311("audit", *_args(host), env={**os.environ, "KAFKA_OPS_WORKERS": "1"})
    assert workers.returncode == alone.returncode == 1, workers.stderr
    assert _without(json.loads(workers.stdout)) == _without(json.loads(alone.stdout))


def test_systemd_and_ownership_modes_are_the_same_on_39(tmp_path: Path) -> None:
    host = simulate_host(
        str(tmp_path / "h"), HostSpec(now_ms=NOW_MS, failures=Failures(short_stop_timeout=True))
    )
    (doc,) = _same(
        "systemd", "--server-properties", host.server_properties, "--systemd-unit", host.systemd_unit,
        "--broker-state", "stopped", "--kafka-version", "3.7.0", "--now", str(NOW_MS), codes=(0, 1),
    )  # fmt: skip
    assert doc["settings"]["TimeoutStopSec"] == "420s"  # tests/test_collector_modes.py's figure
    for dirpath, _dirs, files in os.walk(host.log_dirs[1]):
        for name in files:
            os.chmod(os.path.join(dirpath, name), 0o400)
    me = str(os.getuid())
    (plan,) = _same("ownership", "--server-properties", host.server_properties, "--broker-user", me)
    assert plan["applied"] is False and plan["changes"]  # a dry run, as the role's --check
    journal = tmp_path / "journal"
    (done,) = [json.loads(_run39(
        "ownership", "--server-properties", host.server_properties, "--broker-user", me, "--apply",
        "--journal-dir", str(journal),
    ).stdout)]  # fmt: skip
    assert done["applied"] and done["changes"] == plan["changes"] and Path(done["journal"]).parent == journal
    (again,) = _same("ownership", "--server-properties", host.server_properties, "--broker-user", me)
    assert again["changes"] == []  # 3.9 applied it: nothing left for either


def test_rehearse_mode_the_roll_runs_refuses_the_same_on_39(tmp_path: Path) -> None:
    # the rolling restart's opt-in rehearsal runs this mode on the host: every module of kafka_ops.rehearse is
    # imported and the audit runs before the refusal (a running broker: nothing is started), on 3.9 as on 3.11+
    host = simulate_host(str(tmp_path / "h"), HostSpec(now_ms=NOW_MS))
    home = tmp_path / "kafka"
    (home / "libs").mkdir(parents=True)
    (home / "libs" / "kafka_2.13-3.7.2.jar").write_text("")
    args = ("rehearse", "--server-properties", host.server_properties, "--kafka-home", str(home), "--java",
            sys.executable, "--broker-state", "running", "--now", str(NOW_MS))  # fmt: skip
    old, new = _run39(*args), _run311(*args)
    assert old.returncode == new.returncode == 2, old.stderr
    assert old.stderr == new.stderr and old.stdout == new.stdout == ""
    why = "refused: the broker is running" if os.geteuid() == 0 else "refused: rehearse runs as root"
    assert f"kafka-ops-collector: {why}" in old.stderr


@pytest.fixture
def real_logs(tmp_path: Path) -> Path:
    src = CORPUS / "tuyen-nnt__kafka_2.13-3.0.0" / "logs"
    if not src.is_dir():
        pytest.skip(f"corpus not present: {src}")
    dst = tmp_path / "logs"
    dst.mkdir()
    for p in sorted(src.glob("server.log*")):  # the broker's server.log and its rotations, with their mtimes
        shutil.copy2(p, dst / p.name)
    return dst / "server.log"


def test_logs_modes_the_roll_uses_are_the_same_on_39(real_logs: Path) -> None:
    (rotated,) = _same("logs", "--rotated", "--broker-log", str(real_logs), "--systemd-unit", "kafka.service")
    assert rotated["start"]["starts"] >= 1
    st = real_logs.stat()
    cursor = {"dev": st.st_dev, "ino": st.st_ino, "offset": 0}
    args = ("logs", "--broker-log", str(real_logs), "--wait-start", "0", "--poll-every", "0.2")
    (first,) = _same(*args, "--cursor", json.dumps(cursor))
    assert first["read_bytes"] == st.st_size and first["cursor"]["offset"] == st.st_size
    (second,) = _same(*args, "--cursor", json.dumps(first["cursor"]))
    assert second["read_bytes"] == 0  # nothing appended since


def test_tail_mode_of_the_rolls_rescue_is_the_same_on_39(real_logs: Path, tmp_path: Path) -> None:
    (doc,) = _same("tail", "--broker-log", str(real_logs), "--lines", "50")
    assert len(doc["lines"]) == 50
    assert doc["lines"][-1] == real_logs.read_text(errors="replace").splitlines()[-1][:1000]
    link = tmp_path / "link.log"
    link.symlink_to(real_logs)
    fifo = tmp_path / "fifo.log"
    os.mkfifo(fifo)
    for bad in (link, fifo):  # refused unread, the same line from both
        assert _same("tail", "--broker-log", str(bad), codes=(2,)) == []  # exit 2, one line on stderr


def test_quorum_mode_on_a_real_kraft_dir_is_the_same_on_39(tmp_path: Path) -> None:
    src = CORPUS / CORPUS_DIRS["kraft-3.7"]
    if not src.is_dir():
        pytest.skip(f"corpus not present: {src}")
    data = shutil.copytree(src, tmp_path / "kafka-logs", symlinks=True)
    props = tmp_path / "server.properties"
    props.write_text(f"process.roles=broker,controller\nnode.id=1\nlog.dirs={data}\n")
    (doc,) = _same("quorum", "--server-properties", str(props))
    assert doc["leader_id"] is not None  # from the quorum-state the broker wrote


@pytest.fixture
def in_bullseye(tmp_path: Path) -> Iterator[tuple[Path, str]]:
    """A scratch folder inside the root filesystem: (its path here, its path in the chroot)."""
    if os.geteuid() != 0:
        pytest.skip("chroot needs root")
    inside = f"/tmp/kafka-ops-py39-{uuid.uuid4().hex[:8]}"
    here = ROOTFS / inside.lstrip("/")
    here.mkdir(parents=True)
    try:
        yield here, inside
    finally:
        shutil.rmtree(here)


def test_audit_in_a_debian_11_userland_finds_what_311_finds(in_bullseye: tuple[Path, str]) -> None:
    """chroot: bullseye's /usr, /etc and libraries only, the script on stdin as the roles send it."""
    here, inside = in_bullseye
    src = CORPUS / CORPUS_DIRS["kraft-3.7"]
    if not src.is_dir():
        pytest.skip(f"corpus not present: {src}")
    shutil.copytree(src, here / "kafka-logs", symlinks=True)
    common = ("--broker-state", "stopped", "--now", "1793491200000")
    old = subprocess.run(
        ["chroot", str(ROOTFS), "/usr/bin/python3", "-I", "-S", "-", "audit", "--log-dir", f"{inside}/kafka-logs",
         *common, "--expect-mount", f"{inside}/kafka-logs=/"],
        input=_script(), capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    new = _run311(
        "audit", "--log-dir", f"{here}/kafka-logs", *common, "--expect-mount", f"{here}/kafka-logs=/"
    )
    assert old.returncode == new.returncode == 0, old.stderr
    text = _without(json.loads(old.stdout))
    want = json.loads(json.dumps(_without(json.loads(new.stdout))).replace(str(here), inside))
    # the chroot has no /proc: the mount table is not read there, and the plan says so (next_start.unknown)
    assert text["log_dirs"][0].pop("read_only") is None and want["log_dirs"][0].pop("read_only") is False
    no_table = [u for u in text["next_start"]["unknown"] if "mount table" in u["reason"]]
    assert [u["what"] for u in no_table] == [
        f"whether {inside}/kafka-logs's filesystem is read-only (a read-only log dir goes offline, ENV001)"
    ]
    text["next_start"]["unknown"] = [u for u in text["next_start"]["unknown"] if u not in no_table]
    assert text == want


def test_the_shipped_modules_on_39_have_no_slots_and_pickle_by_constructor(tmp_path: Path) -> None:
    """engine.compat gives 3.9 plain dataclasses (3.10+: slots); pickling.by_constructor, which the audit's workers
    rely on, reads their fields there: a round trip keeps every field, as __reduce__ says."""
    from kafka_ops.collector.ship import shipped_files

    for name, source in shipped_files().items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(source)
    code = f"""
import sys, pickle, json
sys.path.insert(0, {str(tmp_path)!r})
from kafka_ops.engine.layout import PartitionName
p = PartitionName("t.x", 3, "log")
q = pickle.loads(pickle.dumps(p))
print(json.dumps([hasattr(PartitionName, "__slots__"), q == p, p.__reduce__()[1]]))
"""
    cmd = [str(LOADER), "--library-path", ":".join(map(str, LIBS)), str(PY39), "-I", "-S", "-c", code]
    old = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert old.returncode == 0, old.stderr
    assert json.loads(old.stdout) == [False, True, ["t.x", 3, "log"]]
    new = subprocess.run([sys.executable, "-I", "-S", "-c", code], capture_output=True, text=True, timeout=60)
    assert json.loads(new.stdout) == [True, True, ["t.x", 3, "log"]]  # 3.11: slots, as before
