"""Seed 001 on the brokers it happened on: KAFKA-6854 (1.1.0) and KAFKA-8335 (2.2.0), and their fixes (1.1.1,
2.2.1), with a real transactional producer (../shared/reference/kafka-lab.md §2).

The producer is Kafka's own Java client of the release under test (``java/Seed001Driver.java``), compiled once
with the system JDK (``javac --release 8``) against that release's ``kafka-clients`` jar, and run on the system
Java: the client needs no ZooKeeper.

* :func:`kafka_6854`: a compacted topic (1 MiB segments, ``max.message.bytes`` 300000) gets one aborted
  transaction of 1.5 MB and then a committed one of as many keys. On 1.1.0 the cleaner, discarding the aborted
  batches, grows its buffers on every read that retains nothing and dies within seconds ("This log contains a
  message larger than maximum allowable size of 1000012", LogCleaner.growBuffers @1.1.0); 1.1.1 cleans it.
* :func:`kafka_8335`: 1,500 transactions of begin / send / sendOffsetsToTransaction / commit, then 1,500 more from
  a second transactional id. On 2.2.0 every batch of the first phase (the group coordinator's transactional offset
  commits, emptied by the cleaner, and their COMMIT markers) stays in ``__consumer_offsets-0`` and the partition
  grows; 2.2.1 cleans the first phase away.

Each returns a :class:`Seed001Run`: the stopped broker's files and log, kept for ``kafka-ops audit`` / ``logs``.
"""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kafka_lab import jars
from kafka_lab.broker import LabBroker, jar_dir_for, java
from kafka_lab.jars import LabError
from kafka_lab.produce import TopicSpec, create_topics, produce

DRIVER = Path(__file__).with_name("java") / "Seed001Driver.java"
CLEANER_DIED = "Error due to"
KAFKA_6854_TEXT = "larger than maximum allowable size"
TOPIC_6854 = "txn-compacted"
TOPIC_8335 = "txn-input"
GROUP_8335 = "seed001-group"
OFFSETS_0 = "__consumer_offsets-0"

# KAFKA-6854's recipe: the cleaner every second, any dirt cleanable; 15 records of 100 kB per transaction
PROPS_6854: dict[str, object] = {"log.cleaner.backoff.ms": 1000, "log.cleaner.min.cleanable.ratio": 0.01}
TOPIC_6854_CONFIGS: dict[str, object] = {
    "cleanup.policy": "compact",
    "segment.bytes": 1048576,
    "max.message.bytes": 300000,
}
RECORDS_6854, RECORD_BYTES_6854 = 15, 100_000
# retention of a compact,delete topic runs in the cleaner threads only: produced after the cleaner died, records
# past retention.ms stay on 1.1.0 while 1.1.1's live cleaner deletes them within a pass (backoff 1 s)
TOPIC_STALE = "stale-cd"
TOPIC_STALE_CONFIGS: dict[str, object] = {
    "cleanup.policy": "compact,delete",
    "retention.ms": 3_600_000,
    "segment.bytes": 1024,  # one 600-byte record per segment
}
STALE_RECORDS, STALE_AGE_MS = 4, 2 * 3_600_000
# KAFKA-8335's: __consumer_offsets rolls every 100 kB, markers are past delete.retention.ms after a second
PROPS_8335: dict[str, object] = {
    "offsets.topic.segment.bytes": 102400,
    "log.cleaner.backoff.ms": 1000,
    "log.cleaner.delete.retention.ms": 1000,
    "log.cleaner.min.cleanable.ratio": 0.01,
}
TRANSACTIONS_8335 = 1500

_ATTRIBUTES_AT = 21  # baseOffset 8, length 4, partitionLeaderEpoch 4, magic 1, crc 4 (DefaultRecordBatch)
_CONTROL, _TRANSACTIONAL = 0x20, 0x10


@dataclass
class BatchCount:
    batches: int = 0
    control: int = 0
    transactional_data: int = 0
    bytes: int = 0


@dataclass
class Seed001Run:
    """A stopped broker after the load: where its files, config and log are, and what the cleaner did."""

    version: str
    broker: LabBroker
    cleaner_died: bool
    death_lines: list[str]
    swaps: int  # "Swapping in cleaned segment" lines: cleaning passes that completed
    before: BatchCount = field(default_factory=BatchCount)  # the watched partition after phase 1 (8335)
    after: BatchCount = field(default_factory=BatchCount)  # ... at the end
    first_phase_left: int = 0  # 8335: batches below the second phase's first offset still on disk
    stale_left: int | None = None  # 6854: non-empty segments of TOPIC_STALE left after STALE_WAIT_S
    while_running: Any = None  # what kafka_6854's while_running callback returned
    seconds: float = 0.0

    @property
    def log_file(self) -> Path:
        return self.broker.log_file


def count_batches(partition_dir: Path, below: int | None = None) -> BatchCount:
    """Batches of every segment of a partition (``below``: only those whose base offset is lower)."""
    out = BatchCount()
    for log in sorted(partition_dir.glob("*.log")):
        data = log.read_bytes()
        pos = 0
        while pos + 61 <= len(data):
            base, length = struct.unpack_from(">qi", data, pos)
            if length <= 0 or pos + 12 + length > len(data):
                break
            if below is None or base < below:
                (attributes,) = struct.unpack_from(">h", data, pos + _ATTRIBUTES_AT)
                out.batches += 1
                out.bytes += 12 + length
                if attributes & _CONTROL:
                    out.control += 1
                elif attributes & _TRANSACTIONAL:
                    out.transactional_data += 1
            pos += 12 + length
    return out


def driver_classes(version: str) -> Path:
    """The driver compiled against ``version``'s kafka-clients (cached beside the jars, rebuilt when changed)."""
    if shutil.which("javac") is None:
        raise LabError("javac is not on PATH: seed 001's driver needs a JDK (Java 17: javac --release 8)")
    jar_dir = jar_dir_for(version)
    out = jars.cache_root() / "seed001-driver" / version
    stamp = out / "Seed001Driver.class"
    if stamp.exists() and stamp.stat().st_mtime >= DRIVER.stat().st_mtime:
        return out
    out.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(
        ["javac", "--release", "8", "-nowarn", "-cp", str(jar_dir / "*"), "-d", str(out), str(DRIVER)],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise LabError(f"javac could not compile {DRIVER.name} for Kafka {version}: {proc.stderr[-500:]}")
    return out


def run_driver(version: str, *args: str, timeout: float) -> str:
    """Run the driver (the system Java) to completion; its output, or a LabError with its last lines."""
    cp = f"{driver_classes(version)}:{jar_dir_for(version) / '*'}"
    cmd = [
        java(),
        "-Xmx256m",
        "-XX:TieredStopAtLevel=1",
        "-XX:+UseSerialGC",
        "-cp",
        cp,
        "Seed001Driver",
        *args,
    ]
    try:
        proc = subprocess.run(
            cmd,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            env={"PATH": os.environ["PATH"]},
        )
    except subprocess.TimeoutExpired as e:
        raise LabError(f"seed 001's driver ({args[0]}) did not finish within {timeout:.0f} s") from e
    if proc.returncode != 0 or f"done {args[0]}" not in proc.stdout:
        tail = (proc.stdout + proc.stderr).strip().splitlines()[-5:]
        raise LabError(f"seed 001's driver ({args[0]}) failed on Kafka {version}: {' / '.join(tail)}")
    return proc.stdout


def _cleaner_lines(b: LabBroker) -> tuple[list[str], int]:
    text = b.log_text()
    lines = text.splitlines()
    deaths = [ln for ln in lines if "kafka-log-cleaner-thread" in ln and CLEANER_DIED in ln]
    swaps = sum(1 for ln in lines if "Swapping in cleaned segment" in ln)
    return deaths, swaps


def _partition_dir(b: LabBroker, name: str) -> Path:
    for d in b.log_dirs:
        if (d / name).is_dir():
            return d / name
    raise LabError(f"{name} is not in any log dir of the lab broker")


STALE_WAIT_S = 8.0  # eight cleaner passes


def kafka_6854(
    version: str, *, watch_s: float = 30.0, while_running: Callable[[LabBroker], Any] | None = None
) -> Seed001Run:
    """An aborted then a committed transaction on a compacted topic; watch the cleaner until it dies or has
    cleaned the topic (a swap after the committed transaction); then records past retention into a compact,delete
    topic, ``STALE_WAIT_S`` of cleaner passes, ``while_running(broker)`` (an audit of the running broker), and
    stop the broker cleanly."""
    began = time.monotonic()
    b = LabBroker(version, properties=PROPS_6854, keep=True)
    try:
        b.start()
        create_topics(b.bootstrap, [TopicSpec(TOPIC_6854, configs=TOPIC_6854_CONFIGS)])
        run_driver(
            version, "aborted-then-committed", b.bootstrap, TOPIC_6854, "seed001-6854",
            str(RECORDS_6854), str(RECORD_BYTES_6854), timeout=120,
        )  # fmt: skip
        deadline = time.monotonic() + watch_s
        deaths, swaps = _cleaner_lines(b)
        while time.monotonic() < deadline and not deaths:
            time.sleep(1)
            deaths, swaps = _cleaner_lines(b)
        if deaths:  # the thread logs 'Stopped' right after: let it reach the file
            time.sleep(1)
        create_topics(b.bootstrap, [TopicSpec(TOPIC_STALE, configs=TOPIC_STALE_CONFIGS)])
        old = int(time.time() * 1000) - STALE_AGE_MS
        produce(
            b.bootstrap,
            TOPIC_STALE,
            STALE_RECORDS,
            kind="keyed",
            value_bytes=600,
            timestamp_ms=old,
            flush_every=1,
        )
        time.sleep(STALE_WAIT_S)
        stale = _partition_dir(b, f"{TOPIC_STALE}-0")
        stale_left = sum(1 for f in stale.glob("*.log") if f.stat().st_size > 0)
        seen = while_running(b) if while_running is not None else None
        b.stop()
        deaths, swaps = _cleaner_lines(b)
        after = count_batches(_partition_dir(b, f"{TOPIC_6854}-0"))
        return Seed001Run(
            version, b, bool(deaths), deaths, swaps, after=after, seconds=time.monotonic() - began,
            stale_left=stale_left, while_running=seen,
        )  # fmt: skip
    except BaseException:
        b.close()
        raise


def kafka_8335(version: str, *, transactions: int = TRANSACTIONS_8335, settle_s: float = 20.0) -> Seed001Run:
    """Phase 1: ``transactions`` transactional offset commits from one transactional id; phase 2: as many from a
    second one (their markers make the first phase's cleanable). Then let the cleaner run and stop cleanly."""
    began = time.monotonic()
    b = LabBroker(version, properties=PROPS_8335, keep=True)
    try:
        b.start()
        create_topics(b.bootstrap, [TopicSpec(TOPIC_8335)])
        args = (b.bootstrap, TOPIC_8335)
        run_driver(
            version, "offset-commits", *args, "seed001-8335-a", GROUP_8335, str(transactions), timeout=400
        )
        offsets = _partition_dir(b, OFFSETS_0)
        before = count_batches(offsets)
        phase2_from = _log_end(offsets)
        run_driver(
            version, "offset-commits", *args, "seed001-8335-b", GROUP_8335, str(transactions), timeout=400
        )
        time.sleep(settle_s)  # a few cleaner passes (backoff 1 s) past delete.retention.ms (1 s)
        b.stop()
        deaths, swaps = _cleaner_lines(b)
        return Seed001Run(
            version, b, bool(deaths), deaths, swaps, before=before, after=count_batches(offsets),
            first_phase_left=count_batches(offsets, below=phase2_from).batches, seconds=time.monotonic() - began,
        )  # fmt: skip
    except BaseException:
        b.close()
        raise


def _log_end(partition_dir: Path) -> int:
    """The offset after the partition's last batch on disk."""
    end = 0
    for log in sorted(partition_dir.glob("*.log")):
        data = log.read_bytes()
        pos = 0
        while pos + 61 <= len(data):
            base, length = struct.unpack_from(">qi", data, pos)
            if length <= 0 or pos + 12 + length > len(data):
                break
            (delta,) = struct.unpack_from(">i", data, pos + 23)
            end = max(end, base + delta + 1)
            pos += 12 + length
    return end
