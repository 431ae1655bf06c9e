"""The environment the broker starts in, judged by real brokers (kafka_ops.broker.environment, ENV001, PERM003): a
second log dir on a loop-mounted ext4 of 64 MiB, made read-only, owned by root, filled to its last block after a
clean stop and after a SIGKILL. Before each start `kafka-ops audit` predicts from the real mount table and statvfs
(the broker user: the lab's `kafka`); the broker then starts, and its log says which dirs it took offline, or
why it exited. One ZooKeeper release (2.8.2: what exits there) and one KRaft release (3.7.2: a dir offline), one
broker each, six starts (about 1.5 minutes per release)."""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kafka_lab.broker import LabBroker, lab_root
from kafka_lab.broker import broker_user as lab_broker_user
from kafka_lab.observe import exit_reason, offline_dirs, parse_log
from kafka_lab.produce import TopicSpec, create_topics, produce
from kafka_lab.trial import predict_start
from tests.lab.conftest import RUN_VERSIONS, _lab_skip_reason

pytestmark = pytest.mark.lab

# one release per family this rule differs by (KAFKA-13773, 3.2.1); both in CI's set
ENV_VERSIONS = [v for v in ("2.8.2", "3.7.2") if v in RUN_VERSIONS]


def _run(*cmd: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(cmd), capture_output=True, text=True)


@pytest.fixture(params=ENV_VERSIONS)
def disk_broker(request: pytest.FixtureRequest) -> Iterator[tuple[LabBroker, Path]]:
    """A broker of the release with data-0 on the lab's disk (the KRaft metadata log dir) and a second log dir
    on a loop-mounted ext4 of its own."""
    reason = _lab_skip_reason()
    if reason:
        pytest.skip(reason)
    if os.geteuid() != 0 or not shutil.which("mkfs.ext4") or not shutil.which("losetup"):
        if os.environ.get("CI"):
            pytest.fail("CI needs root and e2fsprogs for the loop-mounted log dir")
        pytest.skip("needs root and mkfs.ext4")
    version = str(request.param)
    lab_root().mkdir(parents=True, exist_ok=True)
    base = Path(os.path.realpath(lab_root())) / f"env-{version}-{os.getpid()}"
    shutil.rmtree(base, ignore_errors=True)
    base.mkdir(mode=0o755)
    image, mnt = base / "disk.img", base / "mnt"
    with open(image, "wb") as f:
        f.truncate(64 * 1024 * 1024)
    subprocess.run(["mkfs.ext4", "-q", "-F", str(image)], check=True, capture_output=True)
    mnt.mkdir()
    r = _run("mount", "-o", "loop", str(image), str(mnt))
    if r.returncode != 0:
        shutil.rmtree(base, ignore_errors=True)
        if os.environ.get("CI"):
            pytest.fail(f"cannot loop-mount here: {r.stderr.strip()}")
        pytest.skip(f"cannot loop-mount here: {r.stderr.strip()}")
    data = mnt / "data"
    data.mkdir()
    kafka = pwd.getpwnam(lab_broker_user() or "root")
    os.chown(data, kafka.pw_uid, kafka.pw_gid)
    b = LabBroker(
        version, base / "lab", log_dirs=["data-0", str(data)], properties={"log.segment.bytes": 1 << 20}
    )
    try:
        yield b, data
    finally:
        b.close()
        for p in (b.proc, b.zk_proc):
            if p is not None:
                p.wait(30)
        _run("mount", "-o", "remount,rw", str(mnt))
        _run("umount", str(mnt))
        shutil.rmtree(base, ignore_errors=True)


def _fill(mnt: Path) -> None:
    """Fill the filesystem as root: the broker user (not root) then has no block at all (f_bavail 0)."""
    with open(mnt / "filler", "wb") as f:
        for size in (1 << 20, 4096):
            chunk = b"\0" * size
            try:
                while True:
                    f.write(chunk)
                    f.flush()
            except OSError:
                pass
        os.fsync(f.fileno())
    assert os.statvfs(mnt).f_bavail == 0


def _judge(
    b: LabBroker, data: Path, expect: tuple[str, str | None, str], *, or_exits: bool = False
) -> dict[str, Any]:
    """Predict, start, compare: ``expect`` = (broker, the data dir's state, the check): what the plan must say,
    and the broker must do; ``or_exits``: the plan names the exit as the other outcome (next_start.unknown), and
    the broker may take it."""
    report = predict_start(b)
    ns = report["next_start"]
    row = next(d for d in ns["log_dirs"] if d["path"] == str(data))
    said = (ns["broker"], row["state"] if ns["broker"] == "starts" else None, ns["check"] or row["check"])
    assert said == expect, (said, ns["reason"], row["reason"])
    out = b.start(check=False, timeout=120)
    entries = parse_log(b.run_log())
    if out.started:
        time.sleep(2)  # a dir the channel takes offline just after the ready line
        entries = parse_log(b.run_log())
    did_exit = not out.started or not b.running
    if or_exits:
        assert any(str(data) in u["what"] and "or exits" in u["what"] for u in ns["unknown"]), ns["unknown"]
        if did_exit:
            assert "InternalError" in (exit_reason(entries) or ""), exit_reason(entries)
            return report
    assert (ns["broker"] == "exits") == did_exit, exit_reason(entries)
    if not did_exit:
        offline = str(data) in offline_dirs(entries)
        assert offline == (row["state"] == "offline"), offline_dirs(entries)
        assert str(b.log_dirs[0]) not in offline_dirs(entries)
    return report


def _stop(b: LabBroker) -> None:
    if b.running:
        b.stop()
    # A KRaft broker may create again, empty, in data-0 a partition of the dir it took offline when the topic's
    # directory assignment had not reached the controller yet (seen once on 3.7.2 here): the next start would
    # then exit on the duplicate (DIR003, which the plan said). Not what this test judges: remove the copies.
    data = b.log_dirs[1]
    for p in b.log_dirs[0].glob("env-*"):
        if os.path.isdir(data / p.name):
            shutil.rmtree(p)


def test_read_only_root_owned_and_full_log_dir(disk_broker: tuple[LabBroker, Path]) -> None:
    b, data = disk_broker
    mnt = data.parent
    zk = not b.kraft  # 2.8.2: before KAFKA-13773 a failed checkpoint write at load is the exit
    b.start()
    create_topics(b.bootstrap, [TopicSpec("env", 4)])
    produce(b.bootstrap, "env", 1000, value_bytes=1000)
    time.sleep(5)  # KRaft 3.7+: the replicas' directory assignments reach the controller (AssignmentsManager)
    b.stop()
    assert any(p.name.startswith("env-") for p in data.iterdir()), "no partition in the loop-mounted dir"

    # read-only: .lock cannot be opened read-write, .kafka_cleanshutdown not deleted
    subprocess.run(["mount", "-o", "remount,ro", str(mnt)], check=True)
    report = _judge(b, data, ("starts", "offline", "ENV001"))
    assert [f["details"]["problem"] for f in report["findings"] if f["check"] == "ENV001"] == ["read_only"]
    _stop(b)
    subprocess.run(["mount", "-o", "remount,rw", str(mnt)], check=True)

    # the root of the log dir owned by root: PERM003's rule (the broker user cannot delete .kafka_cleanshutdown)
    st = data.stat()
    os.chown(data, 0, 0)
    _judge(b, data, ("starts", "offline", "PERM003"))
    _stop(b)
    # ... and without its recovery-point-offset-checkpoint: LogManager creates it outside the failure channel
    rp = data / "recovery-point-offset-checkpoint"
    kept = rp.read_bytes()
    rp.unlink()
    report = _judge(b, data, ("exits", None, "ENV001"))
    assert [f["details"]["problem"] for f in report["findings"] if f["check"] == "ENV001"] == [
        "cannot_create"
    ]
    rp.write_bytes(kept)
    os.chown(rp, st.st_uid, st.st_gid)
    os.chown(data, st.st_uid, st.st_gid)

    # full after a clean stop: each partition rewrites its leader-epoch-checkpoint at load
    assert (data / ".kafka_cleanshutdown").exists()
    _fill(mnt)
    report = _judge(b, data, ("exits", None, "ENV001") if zk else ("starts", "offline", "ENV001"))
    assert [f["details"]["problem"] for f in report["findings"] if f["check"] == "ENV001"] == ["no_space"]
    _stop(b)
    (mnt / "filler").unlink()

    # full after a SIGKILL: recovery's producer snapshots fail with an IOException, the dir goes offline; or a
    # rebuilt index entry's page fault comes first (SIGBUS: InternalError) and the broker exits: 2.8.2 did each
    b.start()
    produce(b.bootstrap, "env", 200, value_bytes=1000)
    b.kill()
    b.wait_exit(30)
    assert not (data / ".kafka_cleanshutdown").exists()
    _fill(mnt)
    _judge(b, data, ("starts", "offline", "ENV001"), or_exits=True)
    _stop(b)
