"""The paths around the fix's walk, as a hostile broker user attacks them (issue 37): the log dir itself, the unit's
dir, the journal dir and the drop-in's temp file are opened by handle from / and refused in one line where the
broker user could have made a link or planted a file; the walk keeps a bounded number of fds open; and the fix
commands take the audit's inputs, undo --last goes back one fix at a time, undo removes what the fix made and
`fix systemd` writes only what a finding at warning or above asks for (issue 39)."""

from __future__ import annotations

import json
import os
import pwd
import re
import subprocess
import sys
from pathlib import Path

import pytest

from kafka_ops.remediate import fixes
from kafka_ops.simulator.host import Failures, HostSpec, simulate_host

from . import test_fix_hostile as th
from .conftest import NOW_MS
from .test_fix_hostile import decoys, log_dir, snapshot, state

hostile = th.hostile  # the hostile broker user's fixture, shared

REPO = str(Path(__file__).resolve().parent.parent)


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kafka_ops.cli", *args], capture_output=True, text=True,
        env={**os.environ, "PYTHONPATH": REPO},
    )  # fmt: skip


def broker_parent(tmp_path: Path, user: pwd.struct_passwd) -> Path:
    """/var/lib/kafka as on most hosts: the broker user owns the parent of its log dirs."""
    parent = tmp_path / "var-lib-kafka"
    parent.mkdir()
    os.chown(parent, user.pw_uid, user.pw_gid)
    return parent


# ------------------------------------------------------------------ 1: the log dir, the unit's dir


def log_dir_made_a_link(
    tmp_path: Path, hostile: pwd.struct_passwd
) -> tuple[Path, dict[str, tuple[int, int, int]]]:
    """(/var/lib/kafka, root's decoy files as they are): the broker user replaced its log dir /var/lib/kafka/data
    by a link to root's dir."""
    _binary, ddir = decoys(tmp_path)
    parent = broker_parent(tmp_path, hostile)
    os.symlink(ddir, parent / "data")
    return parent, snapshot(tmp_path / "decoy")


def test_a_log_dir_swapped_for_a_link_to_roots_dir_is_refused(
    tmp_path: Path, hostile: pwd.struct_passwd
) -> None:
    parent, before = log_dir_made_a_link(tmp_path, hostile)
    r = run("fix", "ownership", "--log-dir", str(parent / "data"), "--broker-user", hostile.pw_name, "--apply",
            "--journal-dir", str(tmp_path / "j"))  # fmt: skip
    assert r.returncode == 2, r.stdout + r.stderr
    (line,) = r.stderr.splitlines()
    assert f"{parent}/data is a symlink in {parent}, which is owned by uid {hostile.pw_uid}" in line
    assert snapshot(tmp_path / "decoy") == before
    # the library refuses it too, and fix indexes
    with pytest.raises(fixes.FixError, match="is a symlink"):
        fixes.plan_ownership([str(parent / "data")], hostile.pw_uid, hostile.pw_gid)
    plan = fixes.plan_quarantine_indexes(
        [(str(parent / "data" / "00000000000000000000.index"), 0)],
        str(tmp_path / "q"),
        [str(parent / "data")],
    )
    assert plan.refused and "is a symlink" in plan.refused and not plan.actions


def test_the_shipped_collector_refuses_a_log_dir_link_in_one_line(
    tmp_path: Path, hostile: pwd.struct_passwd
) -> None:
    """The kafka_datadirs role's door to the ownership fix: the same refusal, no traceback."""
    from kafka_ops.collector import ship

    parent, before = log_dir_made_a_link(tmp_path, hostile)
    r = subprocess.run(
        [sys.executable, "-I", "-S", "-", "ownership", "--log-dir", str(parent / "data"), "--broker-user",
         hostile.pw_name, "--apply", "--journal-dir", str(tmp_path / "j")],
        input=ship.build(), capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert r.returncode == 2, r.stdout
    (line,) = r.stderr.splitlines()
    assert line.startswith("kafka-ops-collector: ownership: log dir ") and "is a symlink" in line
    assert snapshot(tmp_path / "decoy") == before


def test_a_link_root_made_is_followed_and_what_it_led_to_is_printed(
    tmp_path: Path, hostile: pwd.struct_passwd
) -> None:
    top, _part, _names = log_dir(tmp_path / "real", hostile)
    (tmp_path / "etc").mkdir()
    os.symlink(
        top, tmp_path / "etc" / "logs"
    )  # root's dir, root's link (an installer's /var/lib/kafka -> /data)
    plan = fixes.plan_ownership([str(tmp_path / "etc" / "logs")], hostile.pw_uid, hostile.pw_gid)
    assert plan.actions and all(a.path.startswith(f"{top}/") or a.path == str(top) for a in plan.actions)


def test_fix_systemd_refuses_a_unit_dir_the_broker_user_can_write(
    tmp_path: Path, hostile: pwd.struct_passwd
) -> None:
    units = broker_parent(tmp_path, hostile)
    (units / "kafka.service").write_text("[Service]\nExecStart=/bin/true\n")
    plan = fixes.plan_systemd_dropin(str(units / "kafka.service"), {"TimeoutStopSec": "420s"}, reload=False)
    assert plan.refused and f"owned by uid {hostile.pw_uid}" in plan.refused and not plan.actions
    # a drop-in dir the broker user made in root's unit dir
    root_units = tmp_path / "etc"
    root_units.mkdir()
    (root_units / "kafka.service").write_text("[Service]\nExecStart=/bin/true\n")
    (root_units / "kafka.service.d").mkdir()
    os.chown(root_units / "kafka.service.d", hostile.pw_uid, hostile.pw_gid)
    plan = fixes.plan_systemd_dropin(
        str(root_units / "kafka.service"), {"TimeoutStopSec": "420s"}, reload=False
    )
    assert plan.refused and "kafka.service.d" in plan.refused


# ------------------------------------------------------------------ 2: bounded fds

WALK = """
import os, resource, sys
from kafka_ops.remediate import fixes
resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))
root, jdir, uid = sys.argv[1], sys.argv[2], int(sys.argv[3])
journal, count = fixes.apply_ownership_streaming([root], uid, uid, journal_dir=jdir)
again, _ = fixes.apply_ownership_streaming([root], uid, uid, journal_dir=jdir)
back = fixes.plan_ownership([root], 0, 0)  # planned whole (the collector's way): everything to give back
undone = fixes.undo(journal)
print(count, again, len(undone), len(back.actions), len(fixes.plan_ownership([root], 0, 0).actions))
"""


def test_the_walk_keeps_a_bounded_number_of_fds_whatever_the_number_of_dirs(tmp_path: Path) -> None:
    """2,000 partition dirs under RLIMIT_NOFILE 64: the fds held are the chain of dirs being walked, not every
    dir seen (which stopped at ~1,000 dirs with ulimit -n 1024, leaving root-owned files)."""
    if os.geteuid() != 0:
        pytest.skip("needs root to chown")
    root = tmp_path / "logs"
    root.mkdir()
    for i in range(2000):
        d = root / f"t-{i}"
        d.mkdir()
        (d / "00000000000000000000.log").write_bytes(b"")
    r = subprocess.run(
        [sys.executable, "-c", WALK, str(root), str(tmp_path / "j"), "54321"],
        capture_output=True, text=True, env={**os.environ, "PYTHONPATH": REPO}, timeout=300,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr[-2000:]
    count, again, undone, back, replanned = r.stdout.split()
    assert int(count) == 4001  # a chown each: the root, 2,000 dirs, 2,000 files
    assert again == "None"  # idempotent: nothing left to change
    assert int(undone) == int(back) == 4001
    assert int(replanned) == 0  # after the undo everything is root's again, as before
    assert all(os.lstat(root / f"t-{i}").st_uid == 0 for i in range(0, 2000, 97))


# ------------------------------------------------------------------ 3: the journal


def test_a_journal_dir_the_broker_user_can_write_or_in_a_log_dir_is_refused(
    tmp_path: Path, hostile: pwd.struct_passwd
) -> None:
    top, _part, _names = log_dir(tmp_path, hostile)
    parent = broker_parent(tmp_path, hostile)
    args = ["fix", "ownership", "--log-dir", str(top), "--broker-user", hostile.pw_name, "--apply"]
    before = snapshot(top)
    for jdir, why in (
        (parent / "journal", f"{parent} is owned by uid {hostile.pw_uid}"),
        (parent, f"is owned by uid {hostile.pw_uid}"),
        (top / "journal", f"it is in the log dir {top}"),
    ):
        r = run(*args, "--journal-dir", str(jdir))
        assert r.returncode == 2, r.stdout
        (line,) = r.stderr.splitlines()
        assert line.startswith(f"kafka-ops fix ownership: --journal-dir {jdir}: ") and why in line, line
    assert snapshot(top) == before and not (top / "journal").exists()
    # a root-owned log dir: a journal there would be chowned by the next `fix ownership`
    (tmp_path / "rootlogs").mkdir()
    assert fixes.journal_dir_problem(str(tmp_path / "rootlogs" / "j"), [str(tmp_path / "rootlogs")])


def test_journals_have_unpredictable_names_and_undo_refuses_one_the_broker_user_could_have_written(
    tmp_path: Path, hostile: pwd.struct_passwd
) -> None:
    top, _part, _names = log_dir(tmp_path, hostile)
    jdir = tmp_path / "j"
    made = [fixes.apply(fixes.plan_ownership([str(top)], uid, uid), str(jdir)) for uid in (hostile.pw_uid, 0)]
    assert all(j and re.fullmatch(r"\d{8}T\d{6}\.\d{6}Z-ownership-[0-9a-f]{12}\.jsonl", os.path.basename(j))
               for j in made)  # fmt: skip
    assert made[0] != made[1]
    journal = Path(made[1])  # type: ignore[arg-type]
    for how in ("file owned by the broker user", "group-writable file", "dir the broker user owns"):
        target = journal
        if how == "file owned by the broker user":
            os.chown(journal, hostile.pw_uid, hostile.pw_gid)
        elif how == "group-writable file":
            os.chown(journal, 0, hostile.pw_gid)
            journal.chmod(0o660)
        else:
            journal.chmod(0o600)
            os.chown(journal, 0, 0)
            (tmp_path / "p").mkdir()
            target = broker_parent(tmp_path / "p", hostile) / journal.name
            target.write_bytes(journal.read_bytes())
        r = run("fix", "undo", str(target))
        assert r.returncode == 2, (how, r.stdout)
        (line,) = r.stderr.splitlines()
        assert "not undone" in line and ("could have written" in line or "owned by uid" in line), line
        with pytest.raises(fixes.FixError):
            fixes.undo(str(target))
    assert all(state(p)[0] == 0 for p in top.rglob("*"))  # nothing was undone: the last fix gave all to root


# ------------------------------------------------------------------ 4: the drop-in


def test_fix_systemd_writes_through_an_unpredictable_temp_never_a_planted_link(tmp_path: Path) -> None:
    host = simulate_host(
        str(tmp_path / "h"), HostSpec(now_ms=NOW_MS, failures=Failures(short_stop_timeout=True))
    )
    dropin_dir = Path(host.systemd_unit + ".d")
    dropin_dir.mkdir()
    victim = tmp_path / "shadow"
    victim.write_text("root's\n")
    os.symlink(
        victim, dropin_dir / "kafka-ops.conf.kafka-ops.tmp"
    )  # the temp name the fix used to write through
    r = run("fix", "systemd", "--server-properties", host.server_properties, "--systemd-unit", host.systemd_unit,
            "--no-reload", "--apply", "--journal-dir", str(tmp_path / "j"))  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert victim.read_text() == "root's\n"
    assert "TimeoutStopSec=" in (dropin_dir / "kafka-ops.conf").read_text()
    assert sorted(p.name for p in dropin_dir.iterdir()) == ["kafka-ops.conf", "kafka-ops.conf.kafka-ops.tmp"]


# ------------------------------------------------------------------ 4b: one rule for every path opened as root


def test_the_collectors_tail_refuses_a_log_whose_dir_the_broker_user_made_a_link(
    tmp_path: Path, hostile: pwd.struct_passwd
) -> None:
    """The roll's rescue (`tail` mode) opens the log's dir by handle from / as the fix does (engine.safepath): the
    broker user, owner of /var/lib/kafka, replaced its log dir by a link to a root-only dir; a link refused only at
    the file's own name was followed there, and a root-only file's last lines were printed."""
    from kafka_ops.collector import ship

    parent = broker_parent(tmp_path, hostile)
    rootonly = tmp_path / "root-only"
    rootonly.mkdir(mode=0o700)
    (rootonly / "server.log").write_text("line one\nSECRET-ROOT-ONLY-LINE\n")
    os.symlink(rootonly, parent / "logs")
    os.lchown(parent / "logs", hostile.pw_uid, hostile.pw_gid)
    real = parent / "real"
    real.mkdir()
    (real / "server.log").write_text("INFO started\n")
    os.chown(real, hostile.pw_uid, hostile.pw_gid)
    code = ship.build()

    def tail(log: Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-I", "-S", "-", "tail", "--broker-log", str(log), "--lines", "5"],
            input=code, capture_output=True, text=True, timeout=120,
        )  # fmt: skip

    r = tail(parent / "logs" / "server.log")
    assert r.returncode == 2 and "SECRET" not in r.stdout + r.stderr, (r.stdout, r.stderr)
    (line,) = r.stderr.splitlines()
    assert f"{parent}/logs is a symlink in {parent}, which is owned by uid {hostile.pw_uid}" in line, line
    ok = tail(real / "server.log")  # the broker user's own log in its own dir: read, as before
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout) == {"file": str(real / "server.log"), "lines": ["INFO started"]}


def test_a_posix_acl_for_the_broker_user_refuses_a_journal_dir_and_a_journal(
    tmp_path: Path, hostile: pwd.struct_passwd
) -> None:
    """Journals follow the outputs' stricter reading of the rule: a dir or a journal that a POSIX ACL lets the
    broker user write is theirs to swap or fill, whatever its owner and mode bits say."""
    from .checks.osusers import set_acl

    top, _part, _names = log_dir(tmp_path, hostile)
    jdir = tmp_path / "j"
    jdir.mkdir(mode=0o755)
    set_acl(jdir, user=7, group=5, other=5, named_users=[(hostile.pw_uid, 7)])
    before = snapshot(top)
    r = run("fix", "ownership", "--log-dir", str(top), "--broker-user", hostile.pw_name, "--apply",
            "--journal-dir", str(jdir))  # fmt: skip
    assert r.returncode == 2, r.stdout
    (line,) = r.stderr.splitlines()
    assert f"is writable by user {hostile.pw_uid} (a POSIX ACL)" in line, line
    assert snapshot(top) == before and list(jdir.iterdir()) == []
    ours = tmp_path / "ours"
    journal = fixes.apply(fixes.plan_ownership([str(top)], hostile.pw_uid, hostile.pw_gid), str(ours))
    assert journal
    set_acl(journal, user=6, group=4, other=4, named_users=[(hostile.pw_uid, 6)])
    r = run("fix", "undo", journal)
    assert r.returncode == 2, r.stdout
    (line,) = r.stderr.splitlines()
    assert "not undone: the journal is writable by user" in line and "could have written" in line, line
    assert all(state(p)[0] == hostile.pw_uid for p in top.rglob("*"))  # nothing was undone


# ------------------------------------------------------------------ 5: issue 39


def test_every_fix_command_takes_the_audits_inputs(tmp_path: Path) -> None:
    host = simulate_host(str(tmp_path / "h"), HostSpec(now_ms=NOW_MS))
    common = ["--server-properties", host.server_properties, "--systemd-unit", host.systemd_unit,
              "--broker-state", "stopped", "--now", str(NOW_MS), "--kafka-version", "3.7.0"]  # fmt: skip
    for fix in ("indexes", "systemd", "ownership"):
        r = run("fix", fix, *common, "--topic-configs", host.topic_configs, "--broker-user", "root")
        assert "No such option" not in r.stderr and r.returncode in (0, 2), (fix, r.stderr)
        assert "nothing to change" in r.stdout or "would apply" in r.stdout or r.returncode == 2, (
            fix,
            r.stdout,
        )
    assert run("fix", "indexes", "--systemd-unit", host.systemd_unit, "--server-properties",
               host.server_properties, "--broker-state", "stopped").returncode == 0  # fmt: skip


def test_undo_last_goes_back_one_fix_at_a_time_and_removes_the_dropin_dir_it_made(tmp_path: Path) -> None:
    host = simulate_host(
        str(tmp_path / "h"), HostSpec(now_ms=NOW_MS, failures=Failures(short_stop_timeout=True))
    )
    jdir = tmp_path / "j"
    args = ["fix", "systemd", "--server-properties", host.server_properties, "--systemd-unit", host.systemd_unit,
            "--no-reload", "--apply", "--journal-dir", str(jdir)]  # fmt: skip
    assert run(*args, "--timeout-stop-sec", "420").returncode == 0
    assert run(*args, "--timeout-stop-sec", "500").returncode == 0
    dropin = Path(host.systemd_unit + ".d") / "kafka-ops.conf"
    assert "TimeoutStopSec=500s" in dropin.read_text()
    first = run("fix", "undo", "--last", "--journal-dir", str(jdir))
    assert first.returncode == 0 and "TimeoutStopSec=420s" in dropin.read_text(), first.stdout + first.stderr
    second = run("fix", "undo", "--last", "--journal-dir", str(jdir))
    assert second.returncode == 0, second.stderr
    assert not Path(host.systemd_unit + ".d").exists(), second.stdout  # the dir the first fix made: gone too
    third = run("fix", "undo", "--last", "--journal-dir", str(jdir))
    assert third.returncode == 0 and "undone already; nothing to do" in third.stdout
    states = {
        j["state"]
        for j in json.loads(run("fix", "journals", "--journal-dir", str(jdir), "-f", "json").stdout)
    }
    assert states == {"undone"}


def test_fix_systemd_writes_only_what_a_warning_asks_for_unless_all_settings(tmp_path: Path) -> None:
    host = simulate_host(str(tmp_path / "h"), HostSpec(now_ms=NOW_MS))
    unit = Path(host.systemd_unit)
    unit.write_text(
        unit.read_text().replace("ExecStart=", "ExecStop=/opt/kafka/bin/kafka-server-stop.sh\nExecStart=")
    )
    args = [
        "fix",
        "systemd",
        "--server-properties",
        host.server_properties,
        "--systemd-unit",
        str(unit),
        "--no-reload",
    ]
    audit = run("audit", "--server-properties", host.server_properties, "--systemd-unit", str(unit),
                "-f", "json", "--fail-on", "never")  # fmt: skip
    sysd002 = [f for f in json.loads(audit.stdout)["findings"] if f["check"] == "SYSD002"]
    assert [f["severity"] for f in sysd002] == ["info"] and "harmless here" in sysd002[0]["message"]
    r = run(*args)
    assert r.returncode == 0 and "nothing to change" in r.stdout and "ExecStop" not in r.stdout, r.stdout
    assert "SYSD002: an info finding" in r.stdout
    r = run(*args, "--all-settings")
    assert r.returncode == 0 and "ExecStop=" in r.stdout and "would apply" in r.stdout, r.stdout


def test_undo_of_indexes_removes_the_quarantine_dirs_the_fix_made(tmp_path: Path) -> None:
    host = simulate_host(
        str(tmp_path / "h"), HostSpec(now_ms=NOW_MS, failures=Failures(untrimmed_timeindex=True))
    )
    q = tmp_path / "q"
    args = ["fix", "indexes", "--server-properties", host.server_properties, "--topic-configs", host.topic_configs,
            "--broker-state", "stopped", "--now", str(NOW_MS), "--quarantine", str(q)]  # fmt: skip
    r = run(*args, "--apply", "--journal-dir", str(tmp_path / "j"))
    assert r.returncode == 0 and any(p.is_file() for p in q.rglob("*")), r.stdout + r.stderr
    u = run("fix", "undo", "--last", "--journal-dir", str(tmp_path / "j"))
    assert u.returncode == 0, u.stdout + u.stderr
    assert list(q.iterdir()) == []  # <quarantine>/<time>/<log dir>/<partition>: made by the fix, gone with it
