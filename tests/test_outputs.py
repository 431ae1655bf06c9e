"""Issue 37: what kafka-ops writes as root never follows a link, and never lands in a dir another user can change.

`report` (its default report.html in the current dir, and -o), `audit -o` and `forecast -o` write through
kafka_ops.engine.outputs: a dir the broker user (any user but root and the invoker) can write, or a link at the
name, is refused with one line naming the path and why; the temp file has a random name made O_EXCL|O_NOFOLLOW;
a file is renamed into place, never written through.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kafka_ops.engine.outputs import OutputError, check_target, output_file, untrusted_dir

from .checks.osusers import Users, broker_users, open_tmp, set_acl  # noqa: F401
from .checks.retention_hosts import TopicSpec, audit, cli, cli_inputs, simulate

SECRET = "root-only secret\n"


def _secret(tmp: Path) -> Path:
    s = tmp / "secret"
    s.write_text(SECRET)
    s.chmod(0o600)
    return s


def _report_json(tmp: Path) -> Path:
    host = simulate(tmp / "host", [TopicSpec("orders", partitions=1, records_per_partition=50)])
    p = tmp / "audit.json"
    p.write_text(json.dumps(audit(host)))
    return p


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    return subprocess.run(
        [sys.executable, "-m", "kafka_ops", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _one_line_refusal(r: subprocess.CompletedProcess[str], *words: str) -> None:
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    for w in words:
        assert w in r.stderr, (w, r.stderr)


def test_report_default_in_the_current_dir_refuses_a_planted_link(tmp_path: Path) -> None:
    doc = _report_json(tmp_path)
    secret = _secret(tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    (work / "report.html").symlink_to(secret)
    r = _run(["report", str(doc)], work)
    _one_line_refusal(r, f"{work}/report.html", "symbolic link")
    assert secret.read_text() == SECRET
    # without the link it is written, as a regular file
    (work / "report.html").unlink()
    r = _run(["report", str(doc)], work)
    assert r.returncode == 0, r.stderr
    assert (work / "report.html").read_text().startswith("<!DOCTYPE html>")
    assert [p.name for p in work.iterdir()] == ["report.html"]  # no temp file left


def test_outputs_in_a_dir_the_broker_user_owns_are_refused(tmp_path: Path, broker_users: Users) -> None:  # noqa: F811
    doc = _report_json(tmp_path)
    secret = _secret(tmp_path)
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    os.chown(theirs, broker_users.broker.uid, broker_users.broker.gid)
    host = simulate(tmp_path / "fhost", [TopicSpec("events", partitions=1, records_per_partition=50)])
    runs = {
        "report -o": ["report", str(doc), "-o", str(theirs / "r.html")],
        "forecast -o": ["forecast", *cli_inputs(host, "-o", str(theirs / "f.csv"), "--format", "csv")],
        "audit -o": ["audit", *cli_inputs(host, "-o", str(theirs / "a.json"), "--format", "json")],
    }
    for what, args in runs.items():
        # the broker user planted links at the names: none is written through, nothing is written there
        for name in ("r.html", "f.csv", "a.json"):
            if not (theirs / name).is_symlink():
                (theirs / name).symlink_to(secret)
        r = _run(args, tmp_path)
        _one_line_refusal(r, str(theirs), f"owned by uid {broker_users.broker.uid}")
        assert secret.read_text() == SECRET, what
        assert sorted(p.name for p in theirs.iterdir()) == ["a.json", "f.csv", "r.html"], what


@pytest.mark.parametrize("how", ["group", "other", "acl", "parent"])
def test_a_dir_another_user_can_write_is_refused(tmp_path: Path, broker_users: Users, how: str) -> None:  # noqa: F811
    d = tmp_path / "d"
    d.mkdir()
    target = d
    if how == "group":
        os.chown(d, 0, broker_users.broker.gid)
        d.chmod(0o775)
    elif how == "other":
        d.chmod(0o777)
    elif how == "acl":
        set_acl(d, user=7, group=5, other=5, named_users=[(broker_users.broker.uid, 7)])
    else:  # the broker user owns a dir above: it renames ours away and puts its own in its place
        os.chown(d, broker_users.broker.uid, broker_users.broker.gid)
        target = d / "ours"
        target.mkdir()
    why = untrusted_dir(str(target))
    assert why is not None and str(d) in why, why
    with pytest.raises(OutputError, match="refused, not written"):
        check_target(str(target / "out.json"))


def test_audit_output_is_never_written_through_its_old_temp_name(tmp_path: Path) -> None:
    """The old temp name was .NAME.PID.tmp (PID from /proc): a link planted there was written through as root.
    The PID is known here (the shell execs kafka-ops); the link stays untouched and the report is a new file."""
    host = simulate(tmp_path / "host", [TopicSpec("orders", partitions=1, records_per_partition=50)])
    secret = _secret(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    old = out / "a.json"
    old.write_text("previous\n")
    keep = tmp_path / "hardlink-of-previous"
    os.link(old, keep)  # the previous report's inode is replaced, never written into
    args = " ".join(
        f"'{a}'"
        for a in ["audit", *cli_inputs(host, "-o", str(old), "--format", "json", "--fail-on", "never")]
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    p = subprocess.Popen(
        ["/bin/sh", "-c", f"sleep 1; exec '{sys.executable}' -m kafka_ops {args}"],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    (out / f".a.json.{p.pid}.tmp").symlink_to(secret)
    _, err = p.communicate(timeout=120)
    assert p.returncode == 0, err
    assert secret.read_text() == SECRET
    assert json.loads(old.read_text())["host"] and keep.read_text() == "previous\n"
    assert not old.is_symlink() and old.stat().st_ino != keep.stat().st_ino
    assert sorted(x.name for x in out.iterdir()) == [f".a.json.{p.pid}.tmp", "a.json"]


def test_a_sticky_dir_is_written_in_and_a_link_there_is_refused(tmp_path: Path, broker_users: Users) -> None:  # noqa: F811
    """A /tmp-like dir (every user writes, sticky): only an entry's owner or root can rename or remove it, so
    root's temp file and the file renamed from it cannot be swapped: writing there is safe. A link another user
    planted at the name is refused, not replaced."""
    sticky = tmp_path / "sticky"
    sticky.mkdir()
    sticky.chmod(0o1777)
    with output_file(str(sticky / "r.html")) as f:
        f.write("page\n")
    st = (sticky / "r.html").stat()
    assert (sticky / "r.html").read_text() == "page\n" and st.st_uid == 0
    os.symlink(str(_secret(tmp_path)), sticky / "l.html")
    os.lchown(sticky / "l.html", broker_users.broker.uid, broker_users.broker.gid)
    with pytest.raises(OutputError, match="a symbolic link"):
        check_target(str(sticky / "l.html"))
    for kind, make in (("a FIFO", os.mkfifo), ("a directory", os.mkdir)):
        make(sticky / "x")
        with pytest.raises(OutputError, match=kind):
            check_target(str(sticky / "x"))
        os.rmdir(sticky / "x") if kind == "a directory" else os.unlink(sticky / "x")


def test_a_failed_write_leaves_the_previous_file_and_no_temp(tmp_path: Path) -> None:
    (tmp_path / "r.json").write_text("previous\n")
    with pytest.raises(RuntimeError), output_file(str(tmp_path / "r.json")) as f:
        f.write("half")
        raise RuntimeError("stop")
    assert (tmp_path / "r.json").read_text() == "previous\n"
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]


def test_a_non_root_user_writes_in_a_dir_of_its_own(open_tmp: Path, broker_users: Users) -> None:  # noqa: F811
    """Not only root: any user running kafka-ops writes its outputs in its own dirs (its home)."""
    u = broker_users.other
    home = open_tmp / "home"
    home.mkdir()
    os.chown(home, u.uid, u.gid)
    doc = _report_json(open_tmp)
    doc.chmod(0o644)
    repo = Path(__file__).resolve().parents[1]
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(repo), "HOME": str(home)}
    cmd = [
        "setpriv",
        f"--reuid={u.uid}",
        f"--regid={u.gid}",
        "--clear-groups",
        sys.executable,
        "-m",
        "kafka_ops",
    ]
    r = subprocess.run(
        [*cmd, "report", str(doc)], cwd=home, env=env, capture_output=True, text=True, timeout=120
    )
    if "Permission denied" in r.stderr and not os.access(sys.executable, os.X_OK):
        pytest.skip("the venv is not usable by another user")
    assert r.returncode == 0, r.stderr
    made = home / "report.html"
    assert made.stat().st_uid == u.uid and made.read_text().startswith("<!DOCTYPE html>")
    time.sleep(0)  # nothing else: the user's own dir passes the rule


def test_report_refuses_before_reading_when_the_target_is_refused(tmp_path: Path) -> None:
    (tmp_path / "report.html").mkdir()
    r = cli("report", str(tmp_path / "missing.json"), "-o", str(tmp_path / "report.html"))
    _one_line_refusal(r, "a directory, not a regular file")


def test_under_sudo_the_invoking_users_dir_is_trusted(
    tmp_path: Path,
    broker_users: Users,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`sudo kafka-ops report x.json` in the operator's home: the user who ran sudo is root already. Not when
    that user is the broker user."""
    d = tmp_path / "home"
    d.mkdir()
    os.chown(d, broker_users.other.uid, broker_users.other.gid)
    assert untrusted_dir(str(d)) is not None
    monkeypatch.setenv("SUDO_UID", str(broker_users.other.uid))
    assert untrusted_dir(str(d)) is None
    assert untrusted_dir(str(d), broker_uid=broker_users.other.uid) is not None


def test_a_link_the_broker_user_made_on_the_way_is_not_followed(tmp_path: Path, broker_users: Users) -> None:  # noqa: F811
    """-o /var/lib/kafka/reports/r.json where the broker user owns /var/lib/kafka and made `reports` a link to a
    root-only dir (/etc/cron.d): where it leads passes the rule, the link does not; nothing is written there."""
    rootonly = tmp_path / "cron.d"
    rootonly.mkdir()
    theirs = tmp_path / "kafka"
    theirs.mkdir()
    os.chown(theirs, broker_users.broker.uid, broker_users.broker.gid)
    (theirs / "reports").symlink_to(rootonly)
    os.lchown(theirs / "reports", broker_users.broker.uid, broker_users.broker.gid)
    why = untrusted_dir(str(theirs / "reports"))
    assert why is not None and "symbolic link" in why and str(theirs) in why, why
    r = _run(["report", str(_report_json(tmp_path)), "-o", str(theirs / "reports" / "r.html")], tmp_path)
    _one_line_refusal(r, "symbolic link")
    assert list(rootonly.iterdir()) == []
    # a link root made in a dir only root writes is followed, and the path it led to is printed
    (tmp_path / "to-out").symlink_to(rootonly)
    r = _run(["report", str(tmp_path / "audit.json"), "-o", str(tmp_path / "to-out" / "r.html")], tmp_path)
    assert r.returncode == 0 and r.stdout.startswith(f"wrote {rootonly}/r.html"), (r.stdout, r.stderr)


def test_a_missing_dir_is_one_line(tmp_path: Path) -> None:
    r = cli("report", str(tmp_path / "missing.json"), "-o", str(tmp_path / "no" / "r.html"))
    _one_line_refusal(r, f"cannot write: no such directory {tmp_path}/no")
