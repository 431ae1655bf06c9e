"""Issue 20, inputs: we run as root on hosts whose log dirs and log files the broker user controls.

A symlink in a log dir is never read through (a root-only file's first line must not reach a report), a FIFO
given or planted as any input never hangs a command (one line naming the file and exit 2, or a note for a file
the tool found itself), broker logs are read in constant memory with a limit on what a compressed rotation may
decompress to, and a cluster port that accepts but never answers TLS cannot hang past --cluster-timeout.
Real files, FIFOs, symlinks, sockets and processes; no mocks.
"""

from __future__ import annotations

import gzip
import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from kafka_ops.collector import ship
from kafka_ops.simulator.host import HostSpec, SimulatedHost, simulate_host
from tests.conftest import NOW_MS

CLI = [sys.executable, "-m", "kafka_ops.cli"]
COLLECTOR = [sys.executable, "-m", "kafka_ops.collector.remote"]
SECRET = "TOPSECRET-root-only-7f3a9c"
# runs the command given as its arguments and reports the child's peak RSS (KiB) as the last line of stderr
_PEAK_RSS = (
    "import resource, subprocess, sys\n"
    "p = subprocess.run(sys.argv[1:], stdin=sys.stdin, capture_output=True)\n"
    "sys.stdout.buffer.write(p.stdout); sys.stderr.buffer.write(p.stderr)\n"
    "sys.stderr.write('\\nPEAK_RSS_KB %d\\n' % resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
    "sys.exit(p.returncode)\n"
)


def run(cmd: list[str], timeout: float = 30, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, input=stdin)


def lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


def run_measured(cmd: list[str], stdin: str | None = None, timeout: float = 300) -> tuple[int, str, str, int]:
    """(exit code, stdout, stderr, peak RSS in MiB) of ``cmd`` run as a child of a small wrapper process."""
    p = run([sys.executable, "-c", _PEAK_RSS, *cmd], timeout=timeout, stdin=stdin)
    err, _, last = p.stderr.rstrip().rpartition("\n")
    assert last.startswith("PEAK_RSS_KB "), p.stderr[-2000:]
    return p.returncode, p.stdout, err, int(last.split()[1]) // 1024


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> SimulatedHost:
    return simulate_host(str(tmp_path_factory.mktemp("hostile")), HostSpec(now_ms=NOW_MS))


@pytest.fixture
def fifo(tmp_path: Path) -> Iterator[str]:
    path = tmp_path / "input.fifo"
    os.mkfifo(path)
    yield str(path)


# ------------------------------------------------------------------------------------------ FIFOs as inputs
def _named_inputs(host: SimulatedHost, fifo: str) -> dict[str, list[str]]:
    sp, unit = host.server_properties, host.systemd_unit
    return {
        "audit --server-properties": [*CLI, "audit", "--server-properties", fifo],
        "audit --systemd-unit": [*CLI, "audit", "--server-properties", sp, "--systemd-unit", fifo],
        "audit --topic-configs": [*CLI, "audit", "--server-properties", sp, "--topic-configs", fifo],
        "audit --broker-log": [*CLI, "audit", "--server-properties", sp, "--systemd-unit", unit, "--broker-log", fifo],
        "audit --waive-file": [*CLI, "audit", "--server-properties", sp, "--waive-file", fifo],
        "forecast --server-properties": [*CLI, "forecast", "--server-properties", fifo],
        "forecast --topic-configs": [*CLI, "forecast", "--server-properties", sp, "--topic-configs", fifo],
        "logs FILE": [*CLI, "logs", fifo],
        "logs --follow FILE": [*CLI, "logs", "--follow", "--timeout", "5", fifo],
        "report REPORT": [*CLI, "report", fifo, "-o", fifo + ".html"],
        "cluster status --command-config": [
            *CLI, "cluster", "status", "--bootstrap-server", "127.0.0.1:1", "--command-config", fifo,
        ],
        "collector audit --server-properties": [*COLLECTOR, "audit", "--server-properties", fifo],
        "collector audit --broker-log": [*COLLECTOR, "audit", "--server-properties", sp, "--broker-log", fifo],
        "collector logs --broker-log": [*COLLECTOR, "logs", "--broker-log", fifo],
        "collector logs --rotated": [*COLLECTOR, "logs", "--rotated", "--broker-log", fifo],
        "collector logs --wait-start": [*COLLECTOR, "logs", "--wait-start", "0", "--broker-log", fifo],
    }  # fmt: skip


NAMED = list(_named_inputs(SimulatedHost("", [], "", "", "", "", "", 0), "").keys())


@pytest.mark.parametrize("which", NAMED)
def test_a_fifo_given_as_an_input_is_one_line_and_exit_2_never_a_hang(
    which: str, host: SimulatedHost, fifo: str
) -> None:
    cmd = _named_inputs(host, fifo)[which]
    started = time.monotonic()
    p = run(cmd)  # a hang is a TimeoutExpired
    assert time.monotonic() - started < 30
    assert p.returncode == 2, (p.returncode, p.stderr)
    assert len(lines(p.stderr)) == 1, p.stderr
    assert fifo in p.stderr and "FIFO" in p.stderr, p.stderr
    assert "Traceback" not in p.stderr


def test_dump_of_a_fifo_named_like_a_segment_says_so_and_does_not_hang(tmp_path: Path) -> None:
    seg = tmp_path / "t-0" / "00000000000000000000.log"
    seg.parent.mkdir()
    os.mkfifo(seg)
    # dump's own contract: exit 1 when a file could not be read, the other files still dumped
    p = run([*CLI, "dump", str(seg)])
    assert p.returncode == 1, p.stderr
    assert lines(p.stderr) == [f"kafka-ops dump: {seg}: a FIFO (named pipe), not a regular file: not read"]


def test_server_log_replaced_by_a_fifo_hangs_neither_the_audit_nor_the_collector(tmp_path: Path) -> None:
    h = simulate_host(str(tmp_path / "h"), HostSpec(now_ms=NOW_MS))
    log = Path(h.server_log)
    # the broker user swaps the live log for a FIFO, and puts FIFOs and a link among its rotations
    os.replace(log, log.with_name("server.log.1"))
    os.mkfifo(log)
    os.mkfifo(log.with_name("server.log.2"))
    os.symlink("/etc/hostname", log.with_name("server.log.3"))
    common = [
        "--server-properties",
        h.server_properties,
        "--systemd-unit",
        h.systemd_unit,
        "--now",
        str(NOW_MS),
    ]
    p = run([*CLI, "audit", *common, "--broker-log", str(log), "--format", "json"])
    assert p.returncode == 2 and lines(p.stderr) == [
        f"kafka-ops audit: --broker-log: {log}: a FIFO (named pipe), not a regular file: not read"
    ]
    p = run([*CLI, "audit", *common, "--broker-log", str(log.with_name("server.log.1")), "--format", "json"])
    assert p.returncode in (0, 1), p.stderr
    assert json.loads(p.stdout)["log_dirs"]
    # the collector the rolling restart polls, from a bare python3 as on the host: the FIFO it was named is an
    # error of one line; rotations it found itself that are not regular files are left out with a note
    shipped = ship.build()
    bare = [sys.executable, "-I", "-S", "-"]
    p = run([*bare, "logs", "--rotated", "--broker-log", str(log)], stdin=shipped)
    assert p.returncode == 2 and lines(p.stderr) == [
        f"kafka-ops-collector: {log}: a FIFO (named pipe), not a regular file: not read"
    ]
    os.unlink(log)
    with open(log, "w") as f:
        f.write(
            "[2026-11-01 10:00:00,000] INFO Kafka version: 3.7.0 (org.apache.kafka.common.utils.AppInfoParser)\n"
        )
    p = run([*bare, "logs", "--rotated", "--broker-log", str(log)], stdin=shipped)
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert str(log.with_name("server.log.1")) in doc["files"] and str(log) in doc["files"]
    skipped = {n["file"]: n["error"] for n in doc["not_read"]}
    assert skipped == {
        str(log.with_name("server.log.2")): "a FIFO (named pipe), not a regular file: not read",
        str(
            log.with_name("server.log.3")
        ): "a symbolic link: not followed (kafka-ops never reads a file through a link)",
    }


def test_a_fifo_or_a_link_to_a_device_named_like_log_dir_files_does_not_hang_the_audit(
    tmp_path: Path,
) -> None:
    h = simulate_host(str(tmp_path / "h"), HostSpec(now_ms=NOW_MS))
    d = Path(h.log_dirs[0])
    ckpt = d / "cleaner-offset-checkpoint"
    ckpt.unlink(missing_ok=True)
    os.mkfifo(ckpt)
    part = next(p for p in sorted(d.iterdir()) if p.is_dir())
    seg = sorted(part.glob("*.log"))[0]
    seg.unlink()
    os.mkfifo(seg)
    (part / "leader-epoch-checkpoint").unlink(missing_ok=True)
    os.symlink("/dev/zero", part / "leader-epoch-checkpoint")
    p = run(
        [*CLI, "audit", "--server-properties", h.server_properties, "--now", str(NOW_MS), "-f", "json"], 120
    )
    assert p.returncode in (0, 1), p.stderr
    errors = {e["file"]: e["error"] for e in json.loads(p.stdout)["errors"]}
    assert errors[str(ckpt)] == "a FIFO (named pipe), not a regular file: not read"
    assert errors[str(part / "leader-epoch-checkpoint")].startswith("a symbolic link: not followed")


def test_a_quorum_state_or_producer_snapshot_that_is_a_link_or_a_fifo_is_never_read(tmp_path: Path) -> None:
    """The session-13 readers (KRaft quorum-state, producer snapshots) open through engine.fileio too: a link to a
    root-only file is not read through, a FIFO does not hang the audit, and neither is judged damaged."""
    h = simulate_host(str(tmp_path / "h"), HostSpec(now_ms=NOW_MS))
    decoy = tmp_path / "shadow"
    decoy.write_text(f'{{"{SECRET}": 1, "data_version": 0}}\n')
    decoy.chmod(0o600)
    mdir = Path(sorted(h.log_dirs)[0]) / "__cluster_metadata-0"
    mdir.mkdir()
    (mdir / "quorum-state").symlink_to(decoy)
    parts = [
        p for d in h.log_dirs for p in Path(d).iterdir() if p.is_dir() and len(list(p.glob("*.log"))) > 2
    ]
    part = sorted(parts)[0]
    bases = sorted(p.name[:20] for p in part.glob("*.log"))
    for snap in (part / f"{bases[-1]}.snapshot", part / f"{bases[1]}.snapshot"):
        snap.unlink(missing_ok=True)
    os.mkfifo(part / f"{bases[-1]}.snapshot")  # the newest: read first
    (part / f"{bases[1]}.snapshot").symlink_to(decoy)
    args = [
        "audit",
        "--server-properties",
        h.server_properties,
        "--now",
        str(NOW_MS),
        "--kafka-version",
        "3.9.1",
    ]
    p = run([*CLI, *args, "-f", "json"], 120)
    assert p.returncode in (0, 1), p.stderr
    assert SECRET not in p.stdout + p.stderr
    ns = json.loads(p.stdout)["next_start"]
    assert ns["quorum_state"] is None and ns["producer_snapshots"] == []
    assert not [f for f in json.loads(p.stdout)["findings"] if f["check"] == "DIR007"]


# ---------------------------------------------------------------------------------- symlinks in a log dir
def test_a_checkpoint_linked_to_a_root_only_file_is_reported_as_a_link_and_never_read(tmp_path: Path) -> None:
    h = simulate_host(str(tmp_path / "h"), HostSpec(now_ms=NOW_MS))
    decoy = tmp_path / "shadow"
    decoy.write_text(f"{SECRET} 42\nroot:$6$hash:19000:0:99999:7:::\n")
    decoy.chmod(0o600)
    d = Path(h.log_dirs[0])
    linked = [d / "recovery-point-offset-checkpoint", d / "meta.properties"]
    part = next(p for p in sorted(d.iterdir()) if p.is_dir() and (p / "partition.metadata").exists())
    linked += [
        part / "partition.metadata",
        part / "leader-epoch-checkpoint",
        sorted(part.glob("*.index"))[-1],
    ]
    linked += [sorted(part.glob("*.log"))[-1]]
    for p in linked:
        p.unlink(missing_ok=True)
        p.symlink_to(decoy)
    args = ["audit", "--server-properties", h.server_properties, "--now", str(NOW_MS), "--deep"]
    outputs = {}
    page = tmp_path / "report.html"
    for fmt in ("json", "table", "markdown", "html", "junit", "brief", "prometheus"):
        p = run([*CLI, *args, "--format", fmt, *(["--output", str(page)] if fmt == "html" else [])], 120)
        assert p.returncode in (0, 1), p.stderr
        outputs[fmt] = page.read_text() if fmt == "html" else p.stdout
        assert outputs[fmt].strip(), fmt
        assert SECRET not in outputs[fmt] + p.stderr, fmt
    report = json.loads(outputs["json"])
    errors = {e["file"]: e["error"] for e in report["errors"]}
    for p in linked[:-1]:
        assert (
            errors.get(str(p))
            == "a symbolic link: not followed (kafka-ops never reads a file through a link)"
        )
    assert "a symbolic link: not followed" in outputs["table"]
    # the collector shipped to hosts says the same, from a bare python3
    p = run([sys.executable, "-I", "-S", "-", *args], 120, stdin=ship.build())
    assert p.returncode in (0, 1), p.stderr
    assert SECRET not in p.stdout + p.stderr
    assert str(linked[0]) in {e["file"] for e in json.loads(p.stdout)["errors"]}


# ------------------------------------------------------------------------------------- logs: memory, bombs
def _heavy_log(path: Path, mb: int) -> None:
    """A server.log of ``mb`` MiB in which every line is an event (2,000,000-partition loads, deletions with
    zero timestamps, index rebuilds): the worst case for memory, every line kept by the old reader."""
    target = mb << 20
    with open(path, "w") as f:
        i = 0
        while f.tell() < target:
            rows = []
            for _ in range(1000):
                i += 1
                ts = f"2026-11-{1 + (i // 100000) % 28:02d} 10:{(i // 1000) % 60:02d}:00,000"
                rows.append(
                    f"[{ts}] INFO [LogLoader partition=t{i}-0, dir=/data/k] Completed load of log with 1 segments, "
                    f"local-log-start-offset 0 and log-end-offset 0 in 3ms ({i}/2000000 loaded in /data/k) "
                    "(kafka.log.LogManager)\n"
                    f"[{ts}] INFO [UnifiedLog partition=t{i}-0, dir=/data/k] Deleting segment LogSegment(baseOffset=0, "
                    "size=10, lastModifiedTime=1, largestRecordTimestamp=Some(0)) due to log retention time "
                    "604800000ms breach (kafka.log.LocalLog)\n"
                    f"[{ts}] ERROR Found a corrupted index file corresponding to log file /data/k/t{i}-0/"
                    "00000000000000000000.log due to Corrupt index found (kafka.log.LogLoader)\n"
                )
            f.write("".join(rows))


def test_a_large_log_is_read_in_bounded_memory(tmp_path: Path) -> None:
    # 24 MiB of events: the whole-file reader peaked near 8 times the file (1.6 GB for 200 MB); the stream stays
    # near the interpreter's own size whatever the file's
    log = tmp_path / "server.log"
    _heavy_log(log, 24)
    code, out, err, peak_mb = run_measured([*CLI, "logs", "--format", "json", str(log)])
    assert code == 0, err
    doc = json.loads(out)
    assert doc["summary"]["index_rebuilds"] > 30_000
    assert len(doc["index_rebuilds"]) == 1000 and any("kept the newest 1000" in k for k in doc["kept"])
    assert doc["loads"][-1]["logs_loaded"] == doc["summary"]["index_rebuilds"]
    assert peak_mb < 150, f"kafka-ops logs peaked at {peak_mb} MiB for a 24 MiB log"
    # the collector the rolling restart polls every 2 s, from a bare python3
    code, out, err, peak_mb = run_measured(
        [sys.executable, "-I", "-S", "-", "logs", "--rotated", "--broker-log", str(log)], stdin=ship.build()
    )
    assert code == 0, err
    assert json.loads(out)["start"]["loading"] is True
    assert peak_mb < 100, f"the collector peaked at {peak_mb} MiB for a 24 MiB log"


def test_audit_broker_log_keeps_bounded_events(tmp_path: Path, host: SimulatedHost) -> None:
    """Issue 37: `audit --broker-log` kept every line of the kinds its checks read (1M "Cleaning segment" lines:
    1.07 GB); it reads them as `logs` does, in one stream with the newest 1000 of each finding kept. 150,000
    such lines (a 27 MiB log) peaked at 190 MB before; the bound holds whatever the count."""
    log = tmp_path / "server.log"
    with open(log, "w") as f:
        f.write("[2026-11-01 09:00:00,000] INFO [KafkaServer id=1] starting (kafka.server.KafkaServer)\n")
        f.write(
            "".join(
                f"[2026-11-01 10:{(i // 6000) % 60:02d}:{(i // 100) % 60:02d},{i % 1000:03d}] INFO Cleaner 0: "
                f"Cleaning segment {i} in log t{i}-0 (largest timestamp Sun Nov 01 10:46:21 UTC 2026) into 0, "
                "discarding deletes. (kafka.log.LogCleaner)\n"
                for i in range(150_000)
            )
        )
    args = [
        "audit", "--server-properties", host.server_properties, "--broker-log", str(log), "--broker-state",
        "running", "--kafka-version", "3.7.0", "--now", str(NOW_MS), "-f", "json", "--fail-on", "never",
    ]  # fmt: skip
    code, out, err, peak_mb = run_measured([*CLI, *args], timeout=120)
    assert code == 0, err
    doc = json.loads(out)
    assert doc["inputs"]["logs"]["value"] == [str(log)] and not [
        f for f in doc["findings"] if f["check"] == "CLN001"
    ]
    assert peak_mb < 110, f"kafka-ops audit --broker-log peaked at {peak_mb} MiB for 150,000 kept lines"


def _gzip_bomb(path: Path, zero_mib: int) -> None:
    """A real broker line, then ``zero_mib`` MiB of zero bytes (no line end), as concatenated gzip members:
    a file of about zero_mib KiB."""
    member = gzip.compress(b"\0" * (8 << 20), compresslevel=9)
    with open(path, "wb") as f:
        f.write(
            gzip.compress(b"[2026-11-01 10:00:00,000] INFO Kafka version: 3.7.0 (o.a.k.c.u.AppInfoParser)\n")
        )
        for _ in range(zero_mib // 8):
            f.write(member)


def test_a_gzip_bomb_stops_with_a_note_not_a_memory_error(tmp_path: Path) -> None:
    bomb = tmp_path / "server.log.3.gz"
    _gzip_bomb(bomb, 2048)  # 2 GiB decompressed from about 2 MiB
    assert bomb.stat().st_size < 4 << 20
    code, out, err, peak_mb = run_measured([*CLI, "logs", "--format", "json", str(bomb)], timeout=120)
    assert code == 0, err
    assert "MemoryError" not in err and "Traceback" not in err
    note = [line for line in lines(err) if "stopped reading" in line]
    assert len(note) == 1 and str(bomb) in note[0] and "compression bomb" in note[0], err
    doc = json.loads(out)
    assert doc["versions"][0]["version"] == "3.7.0"  # what came before the limit was read
    assert [n["file"] for n in doc["not_read"]] == [str(bomb)]
    assert peak_mb < 150, f"peaked at {peak_mb} MiB"
    # the audit reads --broker-log the same way: the note is an error of the report, the audit goes on
    h = simulate_host(str(tmp_path / "h"), HostSpec(now_ms=NOW_MS))
    p = run(
        [*CLI, "audit", "--server-properties", h.server_properties, "--now", str(NOW_MS), "--broker-log", str(bomb),
         "-f", "json"], 120,
    )  # fmt: skip
    assert p.returncode in (0, 1), p.stderr
    errors = {e["file"]: e["error"] for e in json.loads(p.stdout)["errors"]}
    assert "stopped reading" in errors[str(bomb)]


# -------------------------------------------------------------------------------------- cluster deadline
@pytest.fixture
def silent_port() -> Iterator[int]:
    """A TCP port on 127.0.0.1 that accepts connections and never sends a byte (no TLS ServerHello)."""
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", 0))
    srv.listen(16)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        srv.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(srv.accept()[0])
            except OSError:
                continue

    t = threading.Thread(target=accept, daemon=True)
    t.start()
    yield srv.getsockname()[1]
    stop.set()
    t.join(5)
    for c in held:
        c.close()
    srv.close()


@pytest.mark.parametrize(
    ("command", "protocol"), [(["status"], "SSL"), (["check", "--broker", "1"], "SASL_SSL")]
)
def test_a_tls_port_that_never_answers_ends_within_the_cluster_timeout(
    command: list[str], protocol: str, silent_port: int, tmp_path: Path
) -> None:
    cfg = tmp_path / "client.properties"
    cfg.write_text(
        f"security.protocol={protocol}\n"
        + ("sasl.mechanism=PLAIN\nsasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule "
           'required username="u" password="p";\n' if protocol == "SASL_SSL" else "")
    )  # fmt: skip
    started = time.monotonic()
    p = run(
        [*CLI, "cluster", *command, "--bootstrap-server", f"127.0.0.1:{silent_port}", "--command-config", str(cfg),
         "--cluster-timeout", "3"],
    )  # fmt: skip
    took = time.monotonic() - started
    assert p.returncode == 2, p.stderr
    assert len(lines(p.stderr)) == 1, p.stderr
    assert f"127.0.0.1:{silent_port}" in p.stderr and "no answer within" in p.stderr, p.stderr
    assert took < 20, f"took {took:.1f} s with --cluster-timeout 3"


# ------------------------------------------------------------------- session 14's reads: swaps, futures, copies
def test_index_swaps_and_a_future_dir_that_are_links_or_fifos_are_never_read(tmp_path: Path) -> None:
    """The loader's index .swap rules (broker.swaps), a .log.swap's next offset and the -future dir's move
    (broker.suffixed_dirs) read names and files the broker user controls: a link to a root-only file is not read
    through, a FIFO does not hang the audit, and a linked -future dir's root-only content reaches no output."""
    h = simulate_host(str(tmp_path / "h"), HostSpec(now_ms=NOW_MS))
    decoy = tmp_path / "shadow"
    decoy.write_text(f"{SECRET}\n" * 64)
    decoy.chmod(0o600)
    outside = tmp_path / "outside-0"  # a partition-like dir outside the log dirs, root-only
    outside.mkdir(mode=0o700)
    (outside / "partition.metadata").write_text(f"version: 0\ntopic_id: {SECRET}\n")
    (outside / "00000000000000000000.log").write_text(SECRET)
    part = next(p for d in h.log_dirs for p in sorted(Path(d).iterdir()) if p.is_dir())
    first = sorted(part.glob("*.log"))[0].name[:20]
    (part / f"{first}.index.swap").symlink_to(decoy)
    os.mkfifo(part / f"{first}.timeindex.swap")
    (part / f"{first}.log.swap").symlink_to(decoy)
    tp = part.name
    future = Path(h.log_dirs[-1]) / f"{tp}.7e2a9c4b1d0f4e6a9b3c5d7e8f1a2b3c-future"
    future.symlink_to(outside, target_is_directory=True)
    for version in ("2.8.2", "3.7.2"):
        args = ["audit", "--server-properties", h.server_properties, "--now", str(NOW_MS)]
        p = run([*CLI, *args, "--kafka-version", version, "-f", "json"], 120)
        assert p.returncode in (0, 1), p.stderr
        assert SECRET not in p.stdout + p.stderr, version
        ns = json.loads(p.stdout)["next_start"]
        # the linked .log.swap is not swapped in, and no segment of the partition is said to be replaced by it
        assert not [
            s for s in ns["segments"] if s["log"].startswith(str(part) + "/") and s["load"] == "swapped_in"
        ]
        # (a linked -future dir is a move as Kafka sees it: LogManager.loadLogs' File.isDirectory follows links)
        assert [fd["path"] for fd in ns["future_dirs"]] == [str(future)]
    # the collector shipped to hosts, from a bare python3: the same
    p = run([sys.executable, "-I", "-S", "-", *args, "--kafka-version", "2.8.2"], 120, stdin=ship.build())
    assert p.returncode in (0, 1), p.stderr
    assert SECRET not in p.stdout + p.stderr


def test_a_copytruncate_copy_that_is_a_link_or_a_fifo_is_never_read(tmp_path: Path) -> None:
    """``logs --follow`` and the roll's start wait read the copy copytruncate leaves beside the log (server.log.1)
    for the lines written before the truncation: the broker user can put a link to a root-only file or a FIFO
    there instead. Neither is read (nor waited on); a regular copy is."""
    from kafka_ops.facts.brokerlogs import Tail

    log = tmp_path / "server.log"
    first = "".join(f"[2026-11-01 10:00:0{i},000] INFO line {i} (kafka.Kafka)\n" for i in range(5))
    decoy = tmp_path / "shadow"
    decoy.write_text(first + f"[2026-11-01 10:00:09,000] INFO {SECRET} (kafka.Kafka)\n" * 3)
    decoy.chmod(0o600)
    for planted in ("link", "fifo", "regular"):
        for p in (log, log.with_name("server.log.1")):
            p.unlink(missing_ok=True)
        log.write_text(first)
        tail = Tail(str(log))
        assert [t for _, t in tail.read()] == first.splitlines()
        copy = log.with_name("server.log.1")  # copytruncate: the copy, then the log truncated and written on
        if planted == "link":
            copy.symlink_to(decoy)
        elif planted == "fifo":
            os.mkfifo(copy)
        else:
            copy.write_text(first + "[2026-11-01 10:00:06,000] INFO written before the copy (kafka.Kafka)\n")
        log.write_text("[2026-11-01 10:00:10,000] INFO after the truncation (kafka.Kafka)\n")
        got = [t for _, t in tail.read()]
        assert not [t for t in got if SECRET in t], planted
        assert got[-1].endswith("after the truncation (kafka.Kafka)"), (planted, got)
        if planted == "regular":
            assert got[0].endswith("written before the copy (kafka.Kafka)") and tail.notes == []
        else:
            assert len(got) == 1 and "no copy beside it holds" in tail.notes[-1], (planted, tail.notes)
