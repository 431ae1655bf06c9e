"""The collector's `systemd` and `logs` modes, which the Ansible roles kafka_systemd and kafka_rolling_restart use:
the same numbers as the checks and the CLI, from a bare python3 with the script on stdin."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

from kafka_ops.collector import ship
from kafka_ops.facts import brokerlogs
from kafka_ops.simulator.host import Failures, HostSpec, simulate_host
from tests.conftest import NOW_MS


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-I", "-S", "-", *args],
        input=ship.build(),
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_systemd_mode_recommends_what_sysd001_and_sysd003_recommend(tmp_path: Path) -> None:
    host = simulate_host(str(tmp_path), HostSpec(now_ms=NOW_MS, failures=Failures(short_stop_timeout=True)))
    proc = _run(
        "systemd", "--server-properties", host.server_properties, "--systemd-unit",
        host.systemd_unit, "--broker-state", "stopped", "--kafka-version", "3.7.0",
    )  # fmt: skip
    assert proc.returncode in (0, 1), proc.stderr
    doc = json.loads(proc.stdout)
    est = doc["stop_estimate"]
    # KRaft (process.roles): 300 s controlled shutdown + 15 s, x1.25 rounded up to 30 s
    assert est["mode"] == "kraft" and est["needed_s"] >= 315
    assert doc["settings"]["TimeoutStopSec"] == f"{est['recommended_timeout_s']}s" == "420s"
    assert doc["settings"]["KillSignal"] == "SIGTERM"
    assert int(doc["settings"]["LimitNOFILE"]) == doc["nofile"]["recommended_nofile"] >= 100_000
    assert doc["nofile"]["segments"] == sum(d["segments"] for d in doc["report"]["log_dirs"])
    sysd001 = [f for f in doc["findings"] if f["check"] == "SYSD001"]
    # the check's own remediation names the same number; the unit has systemd's 90 s default
    assert sysd001 and "TimeoutStopSec=420s" in sysd001[0]["remediation"]
    assert doc["current"]["timeout_stop_s"] == 90.0


def _systemd_doc(host_unit: str, host) -> dict:  # type: ignore[no-untyped-def,type-arg]
    proc = _run(
        "systemd", "--server-properties", host.server_properties, "--systemd-unit", host_unit,
        "--broker-state", "stopped", "--kafka-version", "3.7.0",
    )  # fmt: skip
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout)  # type: ignore[no-any-return]


def test_systemd_mode_never_lowers_what_the_operator_set_and_keeps_its_own_values(tmp_path: Path) -> None:
    host = simulate_host(str(tmp_path), HostSpec(now_ms=NOW_MS, failures=Failures(short_stop_timeout=True)))
    first = _systemd_doc(host.systemd_unit, host)
    # the role writes the recommendation as a drop-in; the next run (a day later, same need) keeps it
    dropin = Path(host.systemd_unit + ".d")
    dropin.mkdir()
    conf = dropin / "kafka-ops.conf"
    conf.write_text("[Service]\n" + "".join(f"{k}={v}\n" for k, v in sorted(first["settings"].items())))
    second = _systemd_doc(host.systemd_unit, host)
    assert second["settings"] == first["settings"]
    assert second["settings_reasons"]["TimeoutStopSec"].startswith("kept: 420 s is at least the recommended")
    # an operator's infinity and a larger descriptor limit are never lowered
    conf.write_text("[Service]\nTimeoutStopSec=infinity\nLimitNOFILE=1048576:1048576\n")
    third = _systemd_doc(host.systemd_unit, host)
    assert (third["settings"]["TimeoutStopSec"], third["settings"]["LimitNOFILE"]) == ("infinity", "1048576")
    assert third["settings_reasons"]["LimitNOFILE"].startswith(
        "kept: 1048576:1048576 is at least the recommended"
    )
    # a value just under the recommendation but with the margin is kept; under the margin it is raised
    need = third["stop_estimate"]["needed_s"]
    kept_s = int(need * 1.1) + 1
    conf.write_text(f"[Service]\nTimeoutStopSec={kept_s}s\nLimitNOFILE=150000\n")
    fourth = _systemd_doc(host.systemd_unit, host)
    assert fourth["settings"]["TimeoutStopSec"] == f"{kept_s}s" and kept_s < 420
    assert fourth["settings"]["LimitNOFILE"] == "150000"  # >= 100000 and >= 1.5 x the few descriptors needed
    conf.write_text(f"[Service]\nTimeoutStopSec={int(need)}s\nLimitNOFILE=4096\n")
    fifth = _systemd_doc(host.systemd_unit, host)
    assert fifth["settings"]["TimeoutStopSec"] == "420s"
    assert fifth["settings"]["LimitNOFILE"] == str(fifth["nofile"]["recommended_nofile"])
    assert fifth["settings_reasons"]["LimitNOFILE"].startswith("raised: 4096 is below")


LOG = """\
[2026-11-22 06:00:00,000] INFO Loading logs from log dirs ArrayBuffer(/data/kafka-1) (kafka.log.LogManager)
[2026-11-22 06:00:00,001] INFO Recovering 2 logs from /data/kafka-1 since no clean shutdown file was found (kafka.log.LogManager)
[2026-11-22 06:00:01,000] INFO Completed load of UnifiedLog(dir=/data/kafka-1/a-0) with 1 segments, local-log-start-offset 0 and log-end-offset 0 in 9ms (1/2 completed in /data/kafka-1) (kafka.log.LogManager)
"""
DONE = """\
[2026-11-22 06:00:02,000] INFO Completed load of UnifiedLog(dir=/data/kafka-1/b-0) with 1 segments, local-log-start-offset 0 and log-end-offset 0 in 9ms (2/2 completed in /data/kafka-1) (kafka.log.LogManager)
[2026-11-22 06:00:02,001] INFO Loaded 2 logs in 2001ms (kafka.log.LogManager)
[2026-11-22 06:00:02,500] INFO [KafkaRaftServer nodeId=1] Kafka Server started (kafka.server.KafkaRaftServer)
"""


def test_logs_mode_tells_a_start_in_progress_from_a_finished_one(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text(LOG)
    doc = json.loads(_run("logs", "--broker-log", str(log)).stdout)
    assert doc["start"]["starts"] == 1
    assert doc["start"]["loading"] and not doc["start"]["started"]
    assert doc["start"]["load"]["logs_loaded"] == 1 and doc["start"]["load"]["logs_total"] == 2
    log.write_text(LOG + DONE)
    doc = json.loads(_run("logs", "--broker-log", str(log)).stdout)
    assert doc["start"] == brokerlogs.start_state(brokerlogs.read_all([str(log)], keep_text=False))
    assert doc["start"]["started"] and not doc["start"]["loading"]
    assert doc["start"]["load"]["unclean_dirs"] == ["/data/kafka-1"]
    # a second start begins a new load: not started until its own "started" line
    log.write_text(LOG + DONE + LOG.replace("06:00:0", "07:00:0"))
    doc = json.loads(_run("logs", "--broker-log", str(log)).stdout)
    assert doc["start"]["starts"] == 2 and not doc["start"]["started"]


def test_logs_mode_follows_a_start_across_a_rotation(tmp_path: Path) -> None:
    """The roll's wait reads server.log with its newest rotations: a recovery that began before log4j rolled the
    file and finished after it is one start, loaded and started, not a start with no beginning."""
    import gzip
    import os

    log = tmp_path / "server.log"
    old = tmp_path / "server.log.2026-11-26-03"
    older = tmp_path / "server.log.2026-11-26-02.gz"
    with gzip.open(older, "wt") as f:
        f.write("[2026-11-26 02:00:00,000] INFO nothing to see (kafka.Other)\n")
    old.write_text(LOG)
    log.write_text(DONE)
    os.utime(older, (1, 1))
    os.utime(old, (2, 2))
    alone = json.loads(_run("logs", "--broker-log", str(log)).stdout)["start"]
    # server.log alone has the end of the start without its beginning: not its unclean recovery, nor its time
    assert alone["load"] is None or alone["load"]["unclean_dirs"] == []
    doc = json.loads(_run("logs", "--rotated", "--broker-log", str(log)).stdout)
    assert doc["start"]["starts"] == 1 and doc["start"]["started"] and not doc["start"]["loading"]
    assert doc["start"]["load"]["unclean_dirs"] == ["/data/kafka-1"]
    assert brokerlogs.with_rotations(str(log)) == [str(older), str(old), str(log)]
    assert brokerlogs.with_rotations(str(log), keep=1) == [str(old), str(log)]


def test_logs_mode_tells_the_units_state(tmp_path: Path) -> None:
    """With --systemd-unit, the unit's state as systemd tells it (the wait after a start ends when it failed);
    an empty map where systemctl is missing or does not answer, never an error."""
    log = tmp_path / "server.log"
    log.write_text(LOG)
    proc = _run("logs", "--broker-log", str(log), "--systemd-unit", "kafka.service")
    assert proc.returncode == 0, proc.stderr
    unit = json.loads(proc.stdout)["unit"]
    assert isinstance(unit, dict)
    assert not unit or set(unit) >= {"ActiveState", "Result"}


def test_quorum_mode_reads_the_metadata_log_dirs_quorum_state(tmp_path: Path) -> None:
    """node.id from server.properties and leaderId from the quorum-state in the *metadata* log dir
    (metadata.log.dir, else the first of log.dirs), the roll's controller when the cluster cannot be asked."""
    a, b, meta = tmp_path / "a", tmp_path / "b", tmp_path / "meta"
    for d in (a, b, meta):
        (d / "__cluster_metadata-0").mkdir(parents=True)
    state = {
        "leaderId": 3,
        "leaderEpoch": 7,
        "votedId": -1,
        "appliedOffset": 0,
        "currentVoters": [],
        "data_version": 0,
    }
    (meta / "__cluster_metadata-0" / "quorum-state").write_text(json.dumps(state))
    (a / "__cluster_metadata-0" / "quorum-state").write_text(json.dumps(state | {"leaderId": 1}))
    props = tmp_path / "server.properties"
    props.write_text(
        f"process.roles=broker,controller\nnode.id=2\nlog.dirs={a} , {b}\nmetadata.log.dir={meta}\n"
    )
    doc = json.loads(_run("quorum", "--server-properties", str(props)).stdout)
    assert doc["node_id"] == 2 and doc["kraft"] and doc["leader_id"] == 3 and doc["leader_epoch"] == 7
    assert doc["metadata_log_dir"] == str(meta) and doc["error"] is None
    assert doc["process_roles"] == ["broker", "controller"] and doc["quorum_fetch_timeout_ms"] == 2000
    props.write_text(
        f"process.roles= controller\nnode.id=2\nlog.dirs={a}\nmetadata.log.dir={meta}\n"
        "controller.quorum.fetch.timeout.ms=5000\n"
    )
    doc = json.loads(_run("quorum", "--server-properties", str(props)).stdout)
    assert doc["process_roles"] == ["controller"] and doc["quorum_fetch_timeout_ms"] == 5000
    # without metadata.log.dir: the first of log.dirs (KafkaConfig.metadataLogDir)
    props.write_text(f"process.roles=broker\nnode.id=2\nlog.dirs={a} , {b}\n")
    doc = json.loads(_run("quorum", "--server-properties", str(props)).stdout)
    assert doc["leader_id"] == 1 and doc["metadata_log_dir"] == str(a)
    # no leader yet (-1), or no file: no leader, and why
    (a / "__cluster_metadata-0" / "quorum-state").write_text(json.dumps(state | {"leaderId": -1}))
    assert json.loads(_run("quorum", "--server-properties", str(props)).stdout)["leader_id"] is None
    props.write_text(f"broker.id=5\nlog.dirs={b}x\n")
    doc = json.loads(_run("quorum", "--server-properties", str(props)).stdout)
    assert (
        doc["node_id"] == 5
        and not doc["kraft"]
        and doc["leader_id"] is None
        and "no such file" in doc["error"]
        and doc["process_roles"] == []
    )
    bad = _run("quorum", "--server-properties", str(tmp_path / "nope.properties"))
    assert bad.returncode == 2 and "nope.properties" in bad.stderr and "Traceback" not in bad.stderr


def test_logs_mode_needs_a_readable_log(tmp_path: Path) -> None:
    proc = _run("logs", "--broker-log", str(tmp_path / "missing.log"))
    assert proc.returncode == 2
    assert "missing.log" in proc.stderr and "Traceback" not in proc.stderr
    assert _run("logs").returncode == 2


def test_ownership_mode_is_kafka_ops_fix_ownership_planned_then_applied_with_a_journal(
    tmp_path: Path,
) -> None:
    import os

    from tests.conftest import tree

    host = simulate_host(str(tmp_path / "h"), HostSpec(now_ms=NOW_MS))
    me = os.getuid()
    victim = host.log_dirs[1]
    for dirpath, _dirs, files in os.walk(victim):
        for name in files:
            os.chmod(os.path.join(dirpath, name), 0o400)  # owner cannot write: what u+rw fixes
    args = ["ownership", "--server-properties", host.server_properties, "--broker-user", str(me)]
    before = tree(tmp_path / "h")
    plan = _run(*args)
    assert plan.returncode == 0, plan.stderr
    doc = json.loads(plan.stdout)
    assert doc["applied"] is False and doc["journal"] is None and tree(tmp_path / "h") == before
    # every file is listed, down to the segment files (what the role shows with --diff)
    files = sum(len(f) for _d, _s, f in os.walk(victim))
    assert len(doc["changes"]) == files and all(c.startswith("chmod 0600 ") for c in doc["changes"])
    journal_dir = tmp_path / "journal"
    done = _run(*args, "--apply", "--journal-dir", str(journal_dir))
    assert done.returncode == 0, done.stderr
    applied = json.loads(done.stdout)
    assert applied["applied"] and applied["changes"] == doc["changes"]
    assert Path(applied["journal"]).parent == journal_dir
    header = json.loads(Path(applied["journal"]).read_text().splitlines()[0])
    assert header["kafka_ops_journal"] == 2 and header["planned"] == files
    again = json.loads(_run(*args, "--apply", "--journal-dir", str(journal_dir)).stdout)
    assert again["changes"] == [] and again["journal"] is None  # idempotent: nothing left to do
    bad = _run(*args, "--group", "no-such-group-x")
    assert (
        bad.returncode == 2
        and bad.stderr.strip() == "kafka-ops-collector: --group: no such group: no-such-group-x"
    )


def test_audit_mode_takes_the_clis_waivers_and_gives_one_line_per_failing_finding(tmp_path: Path) -> None:
    """The kafka_preflight role's gate comes from the collector: its waivers are `kafka-ops audit --waive`'s
    (check, path glob, reason), and `gate.failing` is the line per finding the deploy log shows."""
    host = simulate_host(str(tmp_path), HostSpec(now_ms=NOW_MS, failures=Failures(short_stop_timeout=True)))
    base = ("audit", "--server-properties", host.server_properties, "--systemd-unit", host.systemd_unit,
            "--broker-state", "stopped", "--kafka-version", "3.7.0", "--host", "broker-7")  # fmt: skip
    proc = _run(*base)
    assert proc.returncode == 1, proc.stderr
    gate = json.loads(proc.stdout)["gate"]
    (line,) = [x for x in gate["failing"] if x.startswith("SYSD001 ")]
    assert line.startswith(f"SYSD001 critical broker-7:{host.systemd_unit} - ") and " FIX: " in line
    assert "\n" not in line
    # waived with a glob that matches the unit's path: reported, marked, and the gate passes
    proc = _run(*base, "--waive", f"SYSD001:{Path(host.systemd_unit).parent}/* accepted by ops until the fix")
    report = json.loads(proc.stdout)
    assert proc.returncode == 0, report["gate"]
    (f,) = [f for f in report["findings"] if f["check"] == "SYSD001"]
    assert f["waived"] and f["waived_reason"] == "accepted by ops until the fix"
    assert report["gate"]["waived"] == 1 and report["gate"]["failing"] == []
    # a glob that matches another path waives nothing
    assert _run(*base, "--waive", "SYSD001:/nowhere/* no").returncode == 1
    bad = _run(*base, "--waive", "SYSD01 typo")
    assert bad.returncode == 2 and "SYSD001" in bad.stderr and bad.stderr.count("\n") == 1


def test_logs_mode_counts_a_controller_only_nodes_starts(tmp_path: Path) -> None:
    """A controller-only node (process.roles=controller) loads no logs; its start is its "Kafka Server started"
    line (what 3.9.1 logs, tests/lab/test_cluster_checks.py): server_starts counts them for the roll's wait."""
    log = tmp_path / "server.log"
    log.write_text(
        "[2026-11-27 07:26:00,353] INFO [ControllerServer id=1] Starting controller (kafka.server.ControllerServer)\n"
        "[2026-11-27 07:26:07,495] INFO [KafkaRaftServer nodeId=1] Kafka Server started (kafka.server.KafkaRaftServer)\n"
        "[2026-11-27 07:26:38,985] INFO [ControllerServer id=1] Starting controller (kafka.server.ControllerServer)\n"
        "[2026-11-27 07:26:41,343] INFO [KafkaRaftServer nodeId=1] Kafka Server started (kafka.server.KafkaRaftServer)\n"
    )
    start = json.loads(_run("logs", "--rotated", "--broker-log", str(log)).stdout)["start"]
    assert start["server_starts"] == 2 and start["server_started_at"] == "2026-11-27 07:26:41,343"
    assert (
        start["starts"] == 0 and not start["started"]
    )  # no LogManager load: the brokers' "started" stays false


# ---- the rolling restart's start wait: `logs --wait-start`, reading only what the log got since the cursor
def _mark(log: Path) -> dict[str, int]:
    st = log.stat()
    return {"dev": st.st_dev, "ino": st.st_ino, "offset": st.st_size}


def _wait(log: Path, cursor: object, seconds: float = 0) -> dict:  # type: ignore[type-arg]
    proc = _run("logs", "--broker-log", str(log), "--wait-start", str(seconds), "--poll-every", "0.2",
                "--cursor", json.dumps(cursor))  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)  # type: ignore[no-any-return]


def test_wait_start_reads_only_the_lines_after_the_cursor_and_hands_on_its_cursor(tmp_path: Path) -> None:
    """The wait after `systemctl start` begins at the log's end taken before the start: the broker's earlier start
    (started, in the same file) is not the new one; each call reads only what was appended since the last one."""
    log = tmp_path / "server.log"
    log.write_text(LOG + DONE)  # an earlier start, loaded and started
    mark = _mark(log)
    first = _wait(log, mark)
    assert first["start"]["starts"] == 0 and not first["start"]["started"] and first["read_bytes"] == 0
    assert first["progress"] == "no new start in its log yet (no 'Loading logs' line)"
    new = LOG.replace("06:00:0", "07:00:0")
    with log.open("a") as f:
        f.write(new)
    second = _wait(log, first["cursor"])
    assert second["read_bytes"] == len(new.encode())
    assert second["start"]["starts"] == 1 and second["start"]["loading"] and not second["start"]["started"]
    assert second["start"]["load"]["logs_loaded"] == 1 and second["start"]["load"]["logs_total"] == 2
    assert second["progress"].startswith("recovering: 1/2 logs loaded (/data/kafka-1 unclean 1/2)")
    done = DONE.replace("06:00:0", "07:00:0")
    with log.open("a") as f:
        f.write(done)
    third = _wait(log, second["cursor"], seconds=30)  # returns at once: the start is over
    assert third["read_bytes"] == len(done.encode()) and third["waited_s"] < 10
    # the full re-read agrees
    whole = brokerlogs.start_state(brokerlogs.read_all([str(log)], keep_text=False))
    assert third["start"]["started"] and whole["started"]
    for key in ("logs_loaded", "logs_total", "unclean_dirs", "completed", "duration_ms", "started_at"):
        assert third["start"]["load"][key] == whole["load"][key], key
    assert third["progress"] == "started: 2/2 logs loaded in 2001 ms, recovered /data/kafka-1"


def test_wait_start_waits_up_to_its_seconds_and_says_what_is_wrong_with_a_bad_cursor(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text(LOG)
    doc = _wait(log, {}, seconds=1.5)  # no cursor: the whole file; still loading, so it waits its 1.5 s
    assert doc["start"]["loading"] and doc["waited_s"] >= 1.5
    proc = _run("logs", "--broker-log", str(log), "--wait-start", "0", "--cursor", "[1, 2]")
    assert proc.returncode == 2 and proc.stderr.strip() == "kafka-ops-collector: --cursor: not a JSON object"


def test_wait_start_echoes_asked_at_and_a_read_past_its_time_leaves_the_rest_to_the_next_poll(
    tmp_path: Path,
) -> None:
    """The role measures a call's cost on its own clock (asked_at comes back as given); and a log that grew more
    than a call has time to read is read a block at a time past the call's end, the cursor keeping the rest: no
    line lost, none read twice."""
    log = tmp_path / "server.log"
    log.write_text(LOG)
    doc = json.loads(
        _run("logs", "--broker-log", str(log), "--wait-start", "0", "--asked-at", "1795788554.25").stdout
    )
    assert doc["asked_at"] == 1795788554.25 and doc["waited_s"] < 10
    mark = _mark(log)
    n = 30_000  # 4.4 MB of "Recovering unflushed segment" lines
    with log.open("a") as f:
        f.write(LOG.replace("06:00:0", "07:00:0") + SEGMENT * n)
    w = brokerlogs.StartWatch(str(log), mark)
    w.poll(until=time.monotonic() - 1)  # the call's time is up: one block, not the whole backlog
    assert w.read_bytes == 1 << 20 and 0 < w.load.segments_recovered < n  # type: ignore[union-attr]
    calls = 1
    while w.offset < log.stat().st_size:
        nxt = brokerlogs.StartWatch(w.path, json.loads(json.dumps(w.cursor())))
        nxt.poll(until=time.monotonic() - 1)
        w, calls = nxt, calls + 1
    assert calls == 5 and w.load.segments_recovered == n  # type: ignore[union-attr]


SEGMENT = "[2026-11-22 06:00:00,500] INFO [LogLoader partition=orders-7, dir=/data/kafka-1] Recovering unflushed segment 120. 3/10 recovered for orders-7. (kafka.log.LogLoader$)\n"


def _again(w: brokerlogs.StartWatch) -> brokerlogs.StartWatch:
    """The next call's watch, from this one's cursor through JSON (as the role carries it)."""
    nxt = brokerlogs.StartWatch(w.path, json.loads(json.dumps(w.cursor())))
    nxt.poll()
    return nxt


def test_start_watch_leaves_a_half_written_line_for_the_next_read(tmp_path: Path) -> None:
    """A line the broker has not finished writing is not read (the offset stays before it) until its end comes."""
    log = tmp_path / "server.log"
    lines = LOG.splitlines(keepends=True)
    head = lines[0] + lines[1]
    log.write_text(head + SEGMENT[:40])
    w = brokerlogs.StartWatch(str(log), _mark(log) | {"offset": 0})
    w.poll()
    assert w.load is not None and w.load.segments_recovered == 0 and w.offset == len(head.encode())
    with log.open("a") as f:
        f.write(SEGMENT[40:] + lines[2][:-30])
    w = _again(w)
    assert w.load is not None and w.load.segments_recovered == 1 and w.load.done == 0
    assert "now orders-7 segment 120 (3/10 recovered)" in w.progress()
    with log.open("a") as f:
        f.write(lines[2][-30:])
    w = _again(w)
    assert w.load is not None and w.load.done == 1 and w.offset == log.stat().st_size and w.line == 4


def test_start_watch_reads_the_rest_of_a_rotated_file_then_the_new_one(tmp_path: Path) -> None:
    """log4j's RollingFileAppender renames server.log to server.log.1 and opens a new server.log: the lines the
    old file got after the last read are read from it (found by its inode), then the new file from its start,
    each line once."""
    log = tmp_path / "server.log"
    lines = LOG.splitlines(keepends=True)
    log.write_text(lines[0])
    w = brokerlogs.StartWatch(str(log), _mark(log) | {"offset": 0})
    w.poll()
    with log.open("a") as f:
        f.write(lines[1] + lines[2][:50])  # the last line half written when the appender rolls
    log.rename(tmp_path / "server.log.1")
    with (tmp_path / "server.log.1").open("a") as f:
        f.write(lines[2][50:])
    log.write_text(DONE)
    w = _again(w)
    assert w.notes == [] and w.starts == 1 and w.start()["started"]
    assert w.load is not None and w.load.done == 2 and w.load.unclean_dirs == ["/data/kafka-1"]
    assert w.offset == len(DONE.encode()) and w.ino == log.stat().st_ino
    # the old file compressed (or gone) before the next read: what it got after the cursor cannot be read
    w2 = brokerlogs.StartWatch(str(log), _mark(log))
    w2.poll()
    (tmp_path / "server.log.1").unlink()
    log.rename(tmp_path / "server.log.2")
    (tmp_path / "server.log.2").unlink()
    log.write_text(LOG)
    w2 = _again(w2)
    assert w2.notes == [
        f"{log} was replaced and its previous file is not beside it uncompressed: what was written to it after "
        f"byte {len(DONE.encode())} is not read"
    ]
    assert w2.starts == 1 and w2.load is not None and w2.load.done == 1


def test_start_watch_reads_a_truncated_file_from_its_start(tmp_path: Path) -> None:
    """logrotate's copytruncate keeps the inode and empties the file: shorter than the offset, read from 0."""
    log = tmp_path / "server.log"
    log.write_text("[2026-11-22 05:00:00,000] INFO the broker's earlier life (kafka.Other)\n" * 50)
    w = brokerlogs.StartWatch(str(log), _mark(log))
    w.poll()
    with log.open("r+") as f:
        f.truncate(0)
    with log.open("a") as f:
        f.write(LOG)
    w = _again(w)
    assert w.read_bytes == len(LOG.encode()) and w.starts == 1
    assert w.load is not None and w.load.done == 1
    assert (
        len(w.notes) == 1 and "truncated (logrotate copytruncate?), read again from its start" in w.notes[0]
    )


def test_start_watch_reads_what_copytruncate_copied_away_and_a_log_grown_back_past_its_offset(
    tmp_path: Path,
) -> None:
    """copytruncate between two calls: the lines written after the last read went to the copy (server.log.1) before
    the truncation, and the log grew back past the offset before the next call (same inode, not shorter): the
    bytes before the offset tell it, the copy gives those lines, then the log is read from its start; each line
    once: the start's two logs and 'Kafka Server started' are all seen."""
    log = tmp_path / "server.log"
    log.write_text("[2026-11-22 05:00:00,000] INFO the broker's earlier life (kafka.Other)\n" * 5)
    head = LOG.splitlines(keepends=True)
    with log.open("a") as f:
        f.write("".join(head[:2]))
    w = _again(
        brokerlogs.StartWatch(str(log), {"dev": log.stat().st_dev, "ino": log.stat().st_ino, "offset": 0})
    )
    assert w.starts == 1 and w.load is not None and w.load.done == 0
    with log.open("a") as f:
        f.write(head[2] + SEGMENT)  # 1/2 loaded, a segment recovered: not read before the rotation
    shutil.copyfile(log, tmp_path / "server.log.1")
    with log.open("r+") as f:
        f.truncate(0)
    filler = "[2026-11-22 06:00:01,500] INFO [LogLoader partition=b-0, dir=/data/kafka-1] Loading producer state (kafka.log.UnifiedLog$)\n"
    with log.open("a") as f:
        f.write(filler * 20 + DONE)  # past the old offset again
    assert log.stat().st_size > w.offset
    w = _again(w)
    assert w.starts == 1 and w.start()["started"] and w.load is not None and w.load.done == 2, w.notes
    assert w.load.segments_recovered == 1 and w.recovering == {
        "partition": "orders-7", "dir": "/data/kafka-1", "base": "120", "done": "3", "of": "10"
    }  # fmt: skip
    assert w.notes == [
        f"{log}: truncated (logrotate copytruncate?): its copy {log}.1 read to its end, then it from its start"
    ]


def test_start_watch_knows_no_total_until_every_listed_log_dir_has_said_its_own(tmp_path: Path) -> None:
    """ "Loading logs from log dirs ArrayBuffer(/a, /b)" names every dir; /b's "Recovering N logs" may come later."""
    log = tmp_path / "server.log"
    log.write_text(LOG.replace("ArrayBuffer(/data/kafka-1)", "ArrayBuffer(/data/kafka-1, /data/kafka-2)"))
    w = brokerlogs.StartWatch(str(log))
    w.poll()
    assert w.start()["load"]["logs_total"] is None
    assert w.progress().startswith(
        "recovering: 1/? logs loaded (/data/kafka-1 unclean 1/2; /data/kafka-2 0/?)"
    )
    with log.open("a") as f:
        f.write(
            "[2026-11-22 06:00:01,500] INFO Skipping recovery of 3 logs from /data/kafka-2 since clean shutdown file was found (kafka.log.LogManager)\n"
        )
    w = _again(w)
    assert w.start()["load"]["logs_total"] == 5
    assert w.progress().startswith(
        "recovering: 1/5 logs loaded (/data/kafka-1 unclean 1/2; /data/kafka-2 clean 0/3)"
    )


def test_wait_start_sees_a_controller_only_nodes_start(tmp_path: Path) -> None:
    """A controller-only node loads no logs: the wait sees its "Kafka Server started" after the cursor (the role
    takes it as the start for such a node), and not the one before the cursor."""
    log = tmp_path / "server.log"
    old = "[2026-11-27 07:26:07,495] INFO [KafkaRaftServer nodeId=1] Kafka Server started (kafka.server.KafkaRaftServer)\n"
    log.write_text(old)
    first = _wait(log, _mark(log))
    assert first["start"]["server_started"] is None and not first["start"]["started"]
    with log.open("a") as f:
        f.write(
            "[2026-11-27 07:26:38,985] INFO [ControllerServer id=1] Starting controller (kafka.server.ControllerServer)\n"
            + old.replace("07:26:07,495", "07:26:41,343")
        )
    second = _wait(log, first["cursor"])
    assert second["start"]["server_started"] == "2026-11-27 07:26:41,343"
    assert not second["start"]["started"]  # a broker's start needs its logs loaded
    assert "Kafka Server started' at 2026-11-27 07:26:41,343" in second["progress"]
