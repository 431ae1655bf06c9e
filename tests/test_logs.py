"""`kafka-ops logs` and kafka_ops.facts.brokerlogs: the broker's own log lines, across the formats of Kafka versions."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from kafka_ops.facts import brokerlogs
from kafka_ops.facts.logs import parse_line

# seed 002's broker (0.10.2): an OOM kill, then index rebuilds at the next start
SEED_002 = """\
[2023-08-02 19:12:09,880] INFO Loading logs. (kafka.log.LogManager)
[2023-08-02 19:12:10,001] WARN Found a corrupted index file due to requirement failed: Corrupt index found, index file (/data/kafka-logs/monitor-2/00000000000024386649.index) has non-zero size but the last offset is 24386649 which is no larger than the base offset 24386649.}. deleting /data/kafka-logs/monitor-2/00000000000024386649.timeindex, /data/kafka-logs/monitor-2/00000000000024386649.index and rebuilding index... (kafka.log.Log)
[2023-08-02 19:12:10,002] WARN Found invalid messages in log segment /data/kafka-logs/monitor-2/00000000000024386649.log at byte offset 886339595: Record size is smaller than minimum record overhead (14).. (kafka.log.LogSegment)
[2023-08-02 19:12:10,003] INFO Recovering unflushed segment 24386649 in log monitor-2. (kafka.log.Log)
[2023-08-02 19:12:28,510] INFO Completed load of log monitor-2 with 1 log segments and log end offset 31119681 in 18507 ms (kafka.log.Log)
[2023-08-02 19:12:28,600] INFO Logs loading complete in 18720 ms. (kafka.log.LogManager)
"""

# Kafka 3.x (LogManager.loadLogs with counts), written in steps by the test's writer thread
HEAD_START = [
    "[2026-11-22 10:00:00,000] INFO Loading logs from log dirs ArrayBuffer(/data/kafka-1, /data/kafka-2) (kafka.log.LogManager)",
    "[2026-11-22 10:00:00,010] INFO Recovering 3 logs from /data/kafka-1 since no clean shutdown file was found (kafka.log.LogManager)",
    "[2026-11-22 10:00:00,011] INFO Skipping recovery of 2 logs from /data/kafka-2 since clean shutdown file was found (kafka.log.LogManager)",
]


def head_progress(i: int, total: int, log_dir: str, second: int) -> list[str]:
    return [
        f"[2026-11-22 10:00:{second:02d},000] INFO [LogLoader partition=t-{i}, dir={log_dir}] Recovering unflushed "
        f"segment 0. 0/1 recovered for t-{i}. (kafka.log.LogLoader$)",
        f"[2026-11-22 10:00:{second:02d},500] INFO Completed load of UnifiedLog(dir={log_dir}/t-{i}, topicId=x) with 1 "
        f"segments, local-log-start-offset 0 and log-end-offset 10 in 9000ms ({i}/{total} completed in {log_dir}) "
        "(kafka.log.LogManager)",
    ]


HEAD_END = "[2026-11-22 10:00:40,000] INFO Loaded 5 logs in 40000ms (unclean log dirs = ArrayBuffer(/data/kafka-1)) (kafka.log.LogManager)"


def run(*args: str, **kw) -> subprocess.CompletedProcess[str]:  # type: ignore[no-untyped-def]
    return subprocess.run(
        [sys.executable, "-m", "kafka_ops.cli", "logs", *args], capture_output=True, text=True, **kw
    )


def append(path: Path, lines: list[str]) -> None:
    with open(path, "a") as f:
        f.write("".join(line + "\n" for line in lines))
        f.flush()


# ------------------------------------------------------------------------------------------------ patterns
def test_patterns_across_versions() -> None:
    kinds = lambda line: {e["kind"] for e in parse_line(line)}  # noqa: E731
    assert "log_dir_loaded" in kinds(
        "INFO Completed load of Log(dir=/d/t-0) with 1 segments in 5ms (3/7 loaded in /d) (kafka.log.LogManager)"
    )
    assert "recovery_start" in kinds(
        "INFO Attempting recovery for all logs in /d since no clean shutdown file was found (kafka.log.LogManager)"
    )
    assert "log_loaded" in kinds(
        "INFO [Log partition=t-0, dir=/d] Completed load of log with 2 segments, log start offset 0 and log end offset 9 in 12 ms (kafka.log.Log)"
    )
    assert "logs_loaded" in kinds("INFO Logs loading complete in 18720 ms. (kafka.log.LogManager)")
    assert "cleaner_started" in kinds(
        "[2026-01-01 00:00:00,000] INFO [kafka-log-cleaner-thread-0]: Starting (kafka.log.LogCleaner)"
    )
    assert "broker_started" in kinds(
        "INFO [KafkaRaftServer nodeId=1] Kafka Server started (kafka.server.KafkaRaftServer)"
    )
    (c,) = [e for e in parse_line(
        "INFO Cleaner 0: Cleaning LogSegment(baseOffset=0, size=100, lastModifiedTime=1, largestRecordTimestamp=Some(1)) "
        "in log __consumer_offsets-3 into 0 with an upper bound deletion horizon 0 computed from the segment last "
        "modified time of 1,discarding deletes. (kafka.log.LogCleaner)"
    ) if e["kind"] == "cleaner_cleaning"]  # fmt: skip
    assert c["log"] == "__consumer_offsets-3" and c["segment"] == "0" and c["deletes"] == "discarding"


# ------------------------------------------------------------------------------------------------ report
def test_report_on_seed_001s_cleaner_death(broken_host) -> None:  # type: ignore[no-untyped-def]
    r = run("--format", "json", broken_host.server_log, broken_host.cleaner_log)
    assert r.returncode == 1, r.stderr  # a cleaner thread is dead now
    rep = json.loads(r.stdout)
    assert rep["cleaner_dead_now"] == ["kafka-log-cleaner-thread-0"]
    (d,) = rep["cleaner_deaths"]
    # the simulated 3.7.0 broker's cleaner died of an Error (an exception marks the partition uncleanable there)
    assert (
        d["exception"] == "java.lang.OutOfMemoryError"
        and d["log"] == "__consumer_offsets-7"
        and d["dead_now"]
    )
    table = run(broken_host.cleaner_log)
    assert table.returncode == 1 and "DEAD now" in table.stdout


def test_report_on_seed_002s_recovery(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text(SEED_002)
    rep = brokerlogs.analyze([str(log)])
    (rb,) = rep["index_rebuilds"]
    assert rb["kind"] == "corrupt" and rb["file"] == "/data/kafka-logs/monitor-2/00000000000024386649.index"
    (ld,) = rep["loads"]
    assert ld["completed"] and ld["duration_ms"] == 18720 and ld["logs_loaded"] == 1
    assert ld["segments_recovered"] == 1 and ld["invalid_tails_truncated"] == 1 and ld["index_rebuilds"] == 1
    r = run(str(log))
    assert r.returncode == 0 and "index rebuilds (1)" in r.stdout


def test_zero_timestamp_deletions_name_the_partition(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text(
        "[2026-11-20 10:05:00,000] INFO [UnifiedLog partition=orders-3, dir=/data/kafka-1] Deleting segment "
        "LogSegment(baseOffset=0, size=4096, lastModifiedTime=1790000000000, largestRecordTimestamp=Some(0)) due to "
        "log retention time 604800000ms breach based on the largest record timestamp in the segment (kafka.log.UnifiedLog)\n"
    )
    (z,) = brokerlogs.analyze([str(log)])["zero_timestamp_deletions"]
    assert z["partition"] == "orders-3" and z["at"] == "2026-11-20 10:05:00,000"


def test_unreadable_file_is_one_line_exit_2(tmp_path: Path) -> None:
    r = run(str(tmp_path / "missing.log"))
    assert r.returncode == 2 and r.stderr.startswith("kafka-ops logs:") and "Traceback" not in r.stderr


# ------------------------------------------------------------------------------------------------ follow
def test_follow_tracks_a_recovery_to_its_end(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text("[2026-11-22 09:59:59,000] INFO [KafkaServer id=1] starting (kafka.server.KafkaServer)\n")

    def writer() -> None:
        time.sleep(0.3)
        append(log, HEAD_START)
        for i in range(1, 4):
            time.sleep(0.2)
            append(log, head_progress(i, 3, "/data/kafka-1", i * 10))
        for i in range(1, 3):
            append(log, head_progress(i, 2, "/data/kafka-2", 30 + i)[1:])
        time.sleep(0.2)
        with open(log, "a") as f:  # a half-written line waits for its end
            f.write(HEAD_END[:30])
            f.flush()
            time.sleep(0.3)
            f.write(HEAD_END[30:] + "\n")

    t = threading.Thread(target=writer)
    t.start()
    start = time.monotonic()
    r = run("--follow", str(log), "--poll", "0.05", "--timeout", "30")
    t.join()
    assert r.returncode == 0, r.stderr
    assert (
        r.stdout.strip()
        == "loading complete: 5/5 logs in 40.0 s, unclean: /data/kafka-1, 3 segment(s) recovered"
    )
    assert time.monotonic() - start < 15
    assert "5/5" in r.stderr  # the rich progress bar, on stderr


def test_follow_json_and_lines_of_2_8(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text(
        "[2026-11-22 10:00:00,000] INFO Loading logs from log dirs ArrayBuffer(/d) (kafka.log.LogManager)\n"
        "[2026-11-22 10:00:00,100] INFO Attempting recovery for all logs in /d since no clean shutdown file was found (kafka.log.LogManager)\n"
        "[2026-11-22 10:00:05,000] INFO Completed load of Log(dir=/d/t-0) with 1 segments in 5000ms (1/2 loaded in /d) (kafka.log.LogManager)\n"
        "[2026-11-22 10:00:10,000] INFO Completed load of Log(dir=/d/t-1) with 1 segments in 5000ms (2/2 loaded in /d) (kafka.log.LogManager)\n"
        "[2026-11-22 10:00:10,100] INFO Loaded 2 logs in 10100ms. (kafka.log.LogManager)\n"
    )
    r = run("--follow", str(log), "--format", "json", "--timeout", "10")
    assert r.returncode == 0, r.stderr
    s = json.loads(r.stdout)
    assert (
        s["status"] == "completed"
        and s["logs_loaded"] == 2
        and s["logs_total"] == 2
        and s["unclean_dirs"] == ["/d"]
    )


def test_follow_old_format_counts_partition_dirs_for_the_total(tmp_path: Path) -> None:
    data = tmp_path / "data"
    for name in ("t-0", "t-1", "t-2", "__cluster_metadata-0"):
        (data / name).mkdir(parents=True)
    log = tmp_path / "server.log"
    log.write_text(
        "[2020-01-01 10:00:00,000] INFO Loading logs. (kafka.log.LogManager)\n"
        + "".join(
            f"[2020-01-01 10:00:0{i},000] INFO [Log partition=t-{i}, dir={data}] Completed load of log with 1 segments, "
            f"log start offset 0 and log end offset 5 in 1000 ms (kafka.log.Log)\n"
            for i in range(2)
        )
    )
    r = run("--follow", str(log), "--log-dir", str(data), "--timeout", "1", "--poll", "0.05")
    assert r.returncode == 1  # the third log never loads
    assert r.stdout.startswith("timeout: loading not complete, 2/3 logs")


def _wait_until_open(pid: int, path: Path, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if any(
                os.path.realpath(f"/proc/{pid}/fd/{fd}") == str(path) for fd in os.listdir(f"/proc/{pid}/fd")
            ):
                time.sleep(0.2)
                return
        except OSError:
            pass
        time.sleep(0.05)
    raise AssertionError(f"{path} never opened by {pid}")


def test_follow_stops_on_ctrl_c(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text("\n".join([*HEAD_START, *head_progress(1, 3, "/data/kafka-1", 10)]) + "\n")
    p = subprocess.Popen(
        [sys.executable, "-m", "kafka_ops.cli", "logs", "--follow", str(log), "--poll", "0.05"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    _wait_until_open(p.pid, log)  # Ctrl-C once it follows the file, not while Python is still importing
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=20)
    assert p.returncode == 130, err
    assert out.startswith("interrupted: 1/5 logs") and "unclean: /data/kafka-1" in out


def test_follow_returns_at_once_when_the_last_load_completed_and_ignores_older_ones(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    older = [*HEAD_START, *head_progress(1, 3, "/data/kafka-1", 10), HEAD_END]  # an earlier start, complete
    newer = [
        "[2026-11-23 08:00:00,000] INFO Loading logs from log dirs ArrayBuffer(/data/kafka-1) (kafka.log.LogManager)",
        "[2026-11-23 08:00:00,010] INFO Skipping recovery of 4 logs from /data/kafka-1 since clean shutdown file was found (kafka.log.LogManager)",
        *[head_progress(i, 4, "/data/kafka-1", i)[1] for i in range(1, 5)],
        "[2026-11-23 08:00:09,000] INFO Loaded 4 logs in 9000ms (kafka.log.LogManager)",
    ]
    log.write_text("\n".join(older + newer) + "\n")
    r = run("--follow", str(log), "--timeout", "5")
    assert r.returncode == 0 and r.stdout.strip() == "loading complete: 4/4 logs in 9.0 s"
    # --follow DIR follows DIR/server.log
    d = run("--follow", str(tmp_path), "--timeout", "5")
    assert d.returncode == 0 and d.stdout == r.stdout
    # the same file with the newer start still under way: it is followed, not the completed older one
    log.write_text("\n".join(older + newer[:-1]) + "\n")
    r = run("--follow", str(log), "--timeout", "0.5", "--poll", "0.05")
    assert r.returncode == 1 and r.stdout.startswith("timeout: loading not complete, 4/4 logs")


def test_follow_reports_a_failed_start(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text(
        "\n".join(
            [*HEAD_START, "[2026-11-22 10:00:01,000] ERROR Shutdown broker because all log dirs in /data/kafka-1, "
             "/data/kafka-2 have failed (kafka.log.LogManager)"]
        ) + "\n"
    )  # fmt: skip
    r = run("--follow", str(log), "--timeout", "5")
    assert r.returncode == 1 and r.stdout.startswith("loading failed")


def test_follow_survives_rotation(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text("\n".join([*HEAD_START, *head_progress(1, 3, "/data/kafka-1", 10)]) + "\n")
    seen: list[int] = []
    steps = iter(range(100))

    def sleep(_s: float) -> None:
        n = next(steps)
        if n == 1:  # log4j rolls server.log: a new file continues the same load
            os.rename(log, tmp_path / "server.log.1")
            log.write_text(
                "\n".join(
                    [*head_progress(2, 3, "/data/kafka-1", 20), *head_progress(3, 3, "/data/kafka-1", 30)]
                )
                + "\n"
            )
        if n == 3:
            append(
                log,
                [
                    *head_progress(1, 2, "/data/kafka-2", 31)[1:],
                    *head_progress(2, 2, "/data/kafka-2", 32)[1:],
                    HEAD_END,
                ],
            )

    res = brokerlogs.follow(str(log), lambda ld: seen.append(ld.done), timeout_s=30, sleep=sleep)
    assert res.status == "completed" and res.load is not None and res.load.done == 5 and seen[0] == 1


# A broker writing its recovery while its server.log is rotated under the follower: log4j's RollingFileAppender
# (close, server.log.2 -> .3, .1 -> .2, server.log -> .1, a new server.log) or logrotate's copytruncate (copy to
# server.log.1, truncate in place while the writer keeps its O_APPEND handle). Each log's lines are a recovered
# segment and a completed load: the follower's counts say whether any line was lost or read twice.
WRITER = r"""
import os, shutil, sys, time
path, mode, n, every = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
d = "/data/kafka-1"
def lines(i):
    return (f"[2026-11-27 10:{i // 60 % 60:02d}:{i % 60:02d},000] INFO [LogLoader partition=t-{i}, dir={d}] Recovering "
            f"unflushed segment 0. 0/1 recovered for t-{i}. (kafka.log.LogLoader$)\n"
            f"[2026-11-27 10:{i // 60 % 60:02d}:{i % 60:02d},500] INFO [Log partition=t-{i}, dir={d}] Completed load of "
            f"log with 1 segments, log start offset 0 and log end offset 5 in 1000 ms (kafka.log.Log)\n")
f = open(path, "a")
f.write(f"[2026-11-27 09:59:59,000] INFO Loading logs from log dirs ArrayBuffer({d}) (kafka.log.LogManager)\n"
        f"[2026-11-27 09:59:59,010] INFO Recovering {n} logs from {d} since no clean shutdown file was found "
        "(kafka.log.LogManager)\n")
f.flush()
time.sleep(0.3)
for i in range(1, n + 1):
    f.write(lines(i))
    f.flush()
    if i % every == 0:
        if mode == "rename":
            f.close()
            for k in (2, 1):
                if os.path.exists(f"{path}.{k}"):
                    os.replace(f"{path}.{k}", f"{path}.{k + 1}")
            os.rename(path, path + ".1")
            f = open(path, "a")
        else:
            shutil.copyfile(path, path + ".1")
            os.truncate(path, 0)
    time.sleep(0.002 if i % 7 else 0.03)
f.write(f"[2026-11-27 11:00:00,000] INFO Loaded {n} logs in 3600000ms (unclean log dirs = ArrayBuffer({d})) "
        "(kafka.log.LogManager)\n")
f.close()
"""


@pytest.mark.parametrize("mode", ["rename", "copytruncate"])
def test_follow_reads_every_line_once_while_a_writer_rotates_the_log(tmp_path: Path, mode: str) -> None:
    """`logs --follow` against a log being rotated by another process (16 rotations): every line written is read
    once, whether it went to the file before its rotation (the rest of a renamed file, the copy of a truncated
    one) or after it; the load's counts are the writer's."""
    log = tmp_path / "server.log"
    log.write_text("[2026-11-27 09:59:58,000] INFO [KafkaServer id=1] starting (kafka.server.KafkaServer)\n")
    n, every = 400, 25
    follower = subprocess.Popen(
        [sys.executable, "-m", "kafka_ops.cli", "logs", "--follow", str(log), "--poll", "0.05", "--timeout", "120",
         "--format", "json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    _wait_until_open(follower.pid, log)  # the writer starts once the file is followed
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(log), mode, str(n), str(every)])
    try:
        out, err = follower.communicate(timeout=120)
    finally:
        writer.wait(timeout=120)
    assert writer.returncode == 0
    assert follower.returncode == 0, err
    s = json.loads(out)
    assert (s["status"], s["logs_loaded"], s["logs_total"], s["segments_recovered"]) == (
        "completed",
        n,
        n,
        n,
    ), s
    assert len(list(tmp_path.glob("server.log.*"))) == (3 if mode == "rename" else 1)


def test_a_directory_of_logs_reads_server_log_cleaner_log_and_their_rotations(
    broken_host, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    import gzip

    logs = tmp_path / "kafka"
    logs.mkdir()
    (logs / "server.log.2023-08-02-19").write_text(SEED_002)  # log4j's hourly rotation: the index rebuild
    os.utime(logs / "server.log.2023-08-02-19", (1_690_000_000, 1_690_000_000))
    (logs / "server.log").write_text("")
    cleaner = Path(broken_host.cleaner_log).read_bytes()
    (logs / "log-cleaner.log-20261101.gz").write_bytes(gzip.compress(cleaner))  # logrotate's dateext
    (logs / "controller.log").write_text(SEED_002)  # not a log this reads
    (logs / "server.log.9").symlink_to("/etc/shadow")
    r = run("--format", "json", str(logs))
    assert r.returncode == 1, r.stderr  # the cleaner thread of seed 001 is dead
    rep = json.loads(r.stdout)
    assert rep["files"] == [
        str(logs / "server.log.2023-08-02-19"), str(logs / "server.log"), str(logs / "log-cleaner.log-20261101.gz")
    ]  # fmt: skip
    assert rep["cleaner_dead_now"] == ["kafka-log-cleaner-thread-0"] and len(rep["index_rebuilds"]) == 1
    assert f"{logs / 'server.log.9'}: not a regular file: not read" in r.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "controller.log").write_text(SEED_002)
    r = run(str(empty))
    assert r.returncode == 2 and "no server.log or log-cleaner.log (nor a rotation of one)" in r.stderr
    assert len(r.stderr.splitlines()) == 1
