"""Fixes: dry run by default, --apply changes the host, a second run changes nothing, undo restores."""

from __future__ import annotations

import json
import os
import pwd
import subprocess
import sys

import pytest

from kafka_ops.simulator.host import Failures, HostSpec, simulate_host

from .conftest import NOW_MS


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kafka_ops.cli", *args], capture_output=True, text=True)


@pytest.fixture(scope="module")
def broker_user() -> str:
    if os.geteuid() != 0:
        pytest.skip("needs root to create users and chown")
    name = "kopsfixuser"
    try:
        pwd.getpwnam(name)
    except KeyError:
        subprocess.run(
            ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name], check=True
        )
    yield name
    subprocess.run(["userdel", name], check=False)


def _tree_state(root: str) -> dict[str, tuple[int, int, int]]:
    out = {}
    for d, _dirs, files in os.walk(root):
        for p in [d] + [os.path.join(d, f) for f in files]:
            st = os.lstat(p)
            out[p] = (st.st_uid, st.st_gid, st.st_mode & 0o7777)
    return out


def _unreadable_timeindex_host(tmp_path, pw):  # type: ignore[no-untyped-def]
    """A host of the broker user's own files, one .timeindex of which it cannot read."""
    return simulate_host(
        str(tmp_path / "h"),
        HostSpec(
            now_ms=NOW_MS,
            broker_uid=pw.pw_uid,
            broker_gid=pw.pw_gid,
            failures=Failures(unreadable_timeindex=True),
        ),
    )


def test_fix_ownership_dry_run_apply_idempotent_undo(tmp_path, broker_user) -> None:  # type: ignore[no-untyped-def]
    pw = pwd.getpwnam(broker_user)
    host = _unreadable_timeindex_host(tmp_path, pw)
    bad = host.planted["unreadable_timeindex"][0]
    before = _tree_state(host.log_dirs[0]) | _tree_state(host.log_dirs[1])
    args = ["fix", "ownership", "--server-properties", host.server_properties, "--broker-user", broker_user]
    dry = run(*args)
    assert dry.returncode == 0, dry.stderr
    assert f"chown {pw.pw_uid}:{pw.pw_gid} {bad}" in dry.stdout and "dry run" in dry.stdout
    assert (os.stat(bad).st_uid, os.stat(bad).st_gid) == (0, 0), "a dry run changes nothing"
    journal_dir = tmp_path / "journal"
    r = run(*args, "--apply", "--journal-dir", str(journal_dir))
    assert r.returncode == 0, r.stderr
    assert os.stat(bad).st_uid == pw.pw_uid
    again = run(*args, "--apply", "--journal-dir", str(journal_dir))
    assert "nothing to change" in again.stdout
    journals = list(journal_dir.iterdir())
    assert len(journals) == 1
    header, *records = [json.loads(line) for line in journals[0].read_text().splitlines()]
    assert header["kafka_ops_journal"] == 2 and header["fix"] == "ownership"
    (intent,) = [r for r in records if r.get("path") == bad]
    assert (intent["uid"], intent["gid"], intent["to_uid"]) == (0, 0, pw.pw_uid)
    assert {"done": intent["n"]} in records  # the intent, then its completion
    u = run("fix", "undo", str(journals[0]))
    assert u.returncode == 0, u.stderr
    assert _tree_state(host.log_dirs[0]) | _tree_state(host.log_dirs[1]) == before
    assert "already undone" in run("fix", "undo", str(journals[0])).stdout


def test_fix_indexes_quarantines_both_indexes_and_never_a_log(tmp_path) -> None:  # type: ignore[no-untyped-def]
    host = simulate_host(
        str(tmp_path / "h"), HostSpec(now_ms=NOW_MS, failures=Failures(untrimmed_timeindex=True))
    )
    ti = host.planted["untrimmed_timeindex"][0]
    part = os.path.dirname(ti)
    logs_before = sorted(f for f in os.listdir(part) if f.endswith(".log"))
    common = [
        "fix", "indexes", "--server-properties", host.server_properties, "--topic-configs", host.topic_configs,
        "--broker-state", "stopped", "--now", str(NOW_MS),
    ]  # fmt: skip
    inside = run(*common, "--quarantine", os.path.join(host.log_dirs[0], "q"))
    assert inside.returncode == 2 and "would refuse to start" in inside.stderr
    q = tmp_path / "quarantine"
    r = run(*common, "--quarantine", str(q), "--apply", "--journal-dir", str(tmp_path / "j"))
    assert r.returncode == 0, r.stderr
    assert not os.path.exists(ti) and not os.path.exists(ti[: -len(".timeindex")] + ".index")
    moved = sorted(p.name for p in q.rglob("*") if p.is_file())
    assert moved == [os.path.basename(ti)[: -len(".timeindex")] + s for s in (".index", ".timeindex")]
    assert sorted(f for f in os.listdir(part) if f.endswith(".log")) == logs_before
    assert "nothing to change" in run(*common, "--quarantine", str(q), "--apply").stdout
    running = run(*common[:-4], "--broker-state", "running", "--quarantine", str(q))
    assert running.returncode == 2 and "stop it first" in running.stderr


def test_fix_systemd_writes_a_dropin_with_the_given_timeout(tmp_path) -> None:  # type: ignore[no-untyped-def]
    host = simulate_host(
        str(tmp_path / "h"), HostSpec(now_ms=NOW_MS, failures=Failures(short_stop_timeout=True))
    )
    args = [
        "fix", "systemd", "--server-properties", host.server_properties, "--systemd-unit", host.systemd_unit,
        "--timeout-stop-sec", "420", "--no-reload",
    ]  # fmt: skip
    r = run(*args, "--apply", "--journal-dir", str(tmp_path / "j"))
    assert r.returncode == 0, r.stderr
    dropin = host.systemd_unit + ".d/kafka-ops.conf"
    assert "TimeoutStopSec=420s" in open(dropin).read()
    from kafka_ops.facts.systemd import load_unit

    assert load_unit(host.systemd_unit).timeout_stop_s() == 420
    assert "nothing to change" in run(*args, "--apply", "--journal-dir", str(tmp_path / "j")).stdout
    journal = next((tmp_path / "j").iterdir())
    assert run("fix", "undo", str(journal)).returncode == 0
    assert not os.path.exists(dropin)


def test_undo_reads_a_version_1_journal(tmp_path, broker_user) -> None:  # type: ignore[no-untyped-def]
    """Journals written before the JSON-lines format (one JSON document, `done` entries by path) still undo."""
    pw = pwd.getpwnam(broker_user)
    f = tmp_path / "d" / "t-0" / "00000000000000000000.index"
    f.parent.mkdir(parents=True)
    f.write_bytes(b"")
    os.chown(f, pw.pw_uid, pw.pw_gid)
    os.chmod(f, 0o600)
    journal = tmp_path / "old.json"
    journal.write_text(
        json.dumps(
            {
                "fix": "ownership",
                "created": "x",
                "planned": 2,
                "done": [
                    {"op": "chown", "path": str(f), "before": [0, 0], "after": [pw.pw_uid, pw.pw_gid]},
                    {"op": "chmod", "path": str(f), "before": 0o400, "after": 0o600},
                ],
            }
        )
    )
    r = run("fix", "undo", str(journal))
    assert r.returncode == 0, r.stderr
    st = os.lstat(f)
    assert (st.st_uid, st.st_gid, st.st_mode & 0o7777) == (0, 0, 0o400)
    assert "already undone" in run("fix", "undo", str(journal)).stdout


def test_mode_specs_mean_what_chmod_means() -> None:
    from kafka_ops.remediate.fixes import parse_mode

    default = parse_mode("u+rwX")
    assert default(0o400, False) == 0o600 and default(0o500, True) == 0o700
    assert default(0o410, False) == 0o710  # X: a file that some class may execute already
    group = parse_mode("u+rwX,g+rX,o-rwx")
    assert group(0o404, False) == 0o640 and group(0o705, True) == 0o750
    assert parse_mode("0750")(0o777, True) == 0o750
    assert parse_mode("u=rw,go=")(0o777, False) == 0o600
    for bad in ("u+rwz", "rw", "u", "77777"):
        with pytest.raises(ValueError):
            parse_mode(bad)


def test_fix_ownership_gives_the_mode_asked_for_and_refuses_a_bad_one(tmp_path, broker_user) -> None:  # type: ignore[no-untyped-def]
    pw = pwd.getpwnam(broker_user)
    part = tmp_path / "d" / "t-0"
    part.mkdir(parents=True)
    f = part / "00000000000000000000.index"
    f.write_bytes(b"")
    f.chmod(0o6400)
    args = ["fix", "ownership", "--log-dir", str(tmp_path / "d"), "--broker-user", broker_user]
    bad = run(*args, "--mode", "u+rwz")
    assert bad.returncode == 2 and len(bad.stderr.splitlines()) == 1 and "--mode" in bad.stderr
    r = run(*args, "--mode", "u+rwX,g+rX", "--apply", "--journal-dir", str(tmp_path / "j"))
    assert r.returncode == 0, r.stderr
    st = os.lstat(f)
    assert (st.st_uid, st.st_mode & 0o7777) == (pw.pw_uid, 0o640)  # setuid/setgid removed
    assert os.lstat(part).st_mode & 0o777 == 0o755


def test_fix_journals_list_states_undo_last_takes_the_newest_applied(tmp_path, broker_user) -> None:  # type: ignore[no-untyped-def]
    pw = pwd.getpwnam(broker_user)
    host = _unreadable_timeindex_host(tmp_path, pw)
    bad = host.planted["unreadable_timeindex"][0]
    jdir = tmp_path / "journal"
    assert "no fix journals in" in run("fix", "journals", "--journal-dir", str(jdir.parent)).stdout
    args = ["fix", "ownership", "--server-properties", host.server_properties, "--broker-user", broker_user]
    assert run(*args, "--apply", "--journal-dir", str(jdir)).returncode == 0
    (applied,) = jdir.iterdir()
    # an apply killed after its first intent: the intent is durable, its completion is not
    lines = applied.read_text().splitlines()
    killed = jdir / "20000101T000000.000000Z-ownership.jsonl"
    killed.write_text(
        "\n".join(lines[:2]).replace(
            lines[0].split('"created":"')[1].split('"')[0], "20000101T000000.000000Z"
        )
        + "\n"
    )
    (jdir / "notes.jsonl").write_text("not a journal\n")  # not listed, not undone
    listed = run("fix", "journals", "--journal-dir", str(jdir), "--format", "json")
    assert listed.returncode == 0, listed.stderr
    doc = json.loads(listed.stdout)
    assert [(j["path"], j["fix"], j["state"]) for j in doc] == [
        (str(killed), "ownership", "partial"),
        (str(applied), "ownership", "applied"),
    ]
    text = run("fix", "journals", "--journal-dir", str(jdir)).stdout
    assert "2000-01-01 00:00:00 UTC  ownership" in text and "partial" in text and "applied" in text
    u = run("fix", "undo", "--last", "--journal-dir", str(jdir))
    assert u.returncode == 0, u.stderr
    assert f"undoing {applied}" in u.stdout and os.stat(bad).st_uid == 0  # the newest one, not the killed one
    states = {
        j["path"]: j["state"]
        for j in json.loads(run("fix", "journals", "--journal-dir", str(jdir), "-f", "json").stdout)
    }
    assert states == {str(killed): "partial", str(applied): "undone"}
    # the next --last goes on to the newest fix still applied (here the killed one), then there is none left
    again = run("fix", "undo", "--last", "--journal-dir", str(jdir))
    assert again.returncode == 0 and f"undoing {killed}" in again.stdout, again.stdout + again.stderr
    last = run("fix", "undo", "--last", "--journal-dir", str(jdir))
    assert last.returncode == 0 and "undone already; nothing to do" in last.stdout
    both = run("fix", "undo", str(applied), "--last")
    assert both.returncode == 2 and "give a JOURNAL or --last" in both.stderr
    empty = run("fix", "undo", "--last", "--journal-dir", str(tmp_path / "h"))
    assert empty.returncode == 2 and "no fix journals in" in empty.stderr
