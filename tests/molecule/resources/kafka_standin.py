#!/usr/bin/env python3
"""TEST DOUBLE of a Kafka broker's start and shutdown behaviour only, for the Molecule scenarios.

It is not a broker: it serves no Kafka protocol and writes no records. It reproduces what the rolling-restart
roles depend on, with Kafka's own log lines (core/.../log/LogManager.scala, KafkaRaftServer, KafkaBroker):

* start: ``LogManager.loadLogs`` logs "Loading logs from log dirs", per log dir "Skipping recovery of N logs
  ... since clean shutdown file was found" or "Recovering N logs ... since no clean shutdown file was found"
  (then spends ``--recover-seconds-unclean`` "recovering", as seed 002's broker spent hours, with LogLoader's
  "Recovering unflushed segment B. i/n recovered for TP." per segment), one
  "Completed load of ... (i/N completed in DIR)" line per partition, "Loaded N logs in T ms"; then it deletes
  ``.kafka_cleanshutdown`` in every log dir (LogManager.loadLogs deletes the marker once the logs are loaded),
  holds ``<log dir>/.lock`` with flock as the broker does (FileLock on .lock; the audit reads /proc/locks),
  opens its listener port and logs "[KafkaRaftServer nodeId=N] Kafka Server started";
* SIGTERM: spends ``--flush-seconds`` "flushing" (LogManager.shutdown: flush and close every log), then writes
  ``.kafka_cleanshutdown`` in each log dir ({"version":0,"brokerEpoch":N}, Kafka >= 3.7, KAFKA-15582) and
  exits 0. Killed before that (systemd's SIGKILL after TimeoutStopSec), it leaves no marker: the unclean stop
  of seed 002.

Settings come from server.properties (log.dirs, node.id, listeners) and the command line. Python 3 stdlib only.
"""

from __future__ import annotations

import argparse
import datetime as dt
import fcntl
import json
import os
import signal
import socket
import sys
import time

MARKER = ".kafka_cleanshutdown"


def props(path: str) -> dict[str, str]:
    out = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith(("#", "!")) and "=" in line:
                k, _, v = line.partition("=")
                out[k.strip()] = v.strip()
    return out


class Broker:
    def __init__(self, a: argparse.Namespace) -> None:
        self.a = a
        p = props(a.server_properties)
        self.dirs = [d.strip() for d in p.get("log.dirs", p.get("log.dir", "")).split(",") if d.strip()]
        self.node = p.get("node.id", p.get("broker.id", "0"))
        listener = p.get("listeners", "PLAINTEXT://:9092").split(",")[0]
        self.port = int(listener.rsplit(":", 1)[1])
        self.log = open(a.log, "a", encoding="utf-8", buffering=1)
        self.locks: list[int] = []
        self.stopping = False

    def info(self, text: str, cls: str) -> None:
        now = dt.datetime.now().strftime("%Y-%m-%d %H:%M:%S,%f")[:-3]
        self.log.write(f"[{now}] INFO {text} ({cls})\n")

    def partitions(self, d: str) -> list[str]:
        return sorted(e for e in os.listdir(d) if os.path.isdir(os.path.join(d, e)) and "-" in e)

    def start(self) -> None:
        ident = f"[KafkaRaftServer nodeId={self.node}] "
        self.info(
            ident + "Starting (kafka-ops test double of the broker's start/stop)",
            "kafka.server.KafkaRaftServer",
        )
        self.info(f"Kafka version: {self.a.kafka_version}", "org.apache.kafka.common.utils.AppInfoParser")
        t0 = time.monotonic()
        self.info(f"Loading logs from log dirs ArrayBuffer({', '.join(self.dirs)})", "kafka.log.LogManager")
        total = 0
        for d in self.dirs:
            parts = self.partitions(d)
            clean = os.path.exists(os.path.join(d, MARKER))
            if clean:
                self.info(f"Skipping recovery of {len(parts)} logs from {d} since clean shutdown file was found",
                          "kafka.log.LogManager")  # fmt: skip
            else:
                self.info(f"Recovering {len(parts)} logs from {d} since no clean shutdown file was found",
                          "kafka.log.LogManager")  # fmt: skip
            pause = (self.a.recover_seconds if clean else self.a.recover_seconds_unclean) / max(1, len(parts))
            for i, part in enumerate(parts, start=1):
                time.sleep(pause)
                bases = sorted(
                    int(f[:-4])
                    for f in os.listdir(os.path.join(d, part))
                    if f[:-4].isdigit() and f.endswith(".log")
                )
                segs = len(bases)
                topic, _, num = part.rpartition("-")
                # LogLoader.recoverLog: every segment above the recovery point (here: all of them)
                if not clean:
                    for done, base in enumerate(bases):
                        self.info(
                            f"[LogLoader partition={part}, dir={d}] Recovering unflushed segment {base}. "
                            f"{done}/{segs} recovered for {part}.",
                            "kafka.log.LogLoader$",
                        )
                self.info(
                    f"Completed load of UnifiedLog(dir={d}/{part}, topic={topic}, partition={num}) with {segs} "
                    f"segments, local-log-start-offset 0 and log-end-offset 0 in {int(pause * 1000)}ms "
                    f"({i}/{len(parts)} completed in {d})",
                    "kafka.log.LogManager",
                )
            total += len(parts)
        for d in self.dirs:
            try:
                os.unlink(os.path.join(d, MARKER))
            except FileNotFoundError:
                pass
            fd = os.open(os.path.join(d, ".lock"), os.O_RDWR | os.O_CREAT, 0o644)
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            self.locks.append(fd)
        self.info(f"Loaded {total} logs in {int((time.monotonic() - t0) * 1000)}ms", "kafka.log.LogManager")
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("0.0.0.0", self.port))
        self.sock.listen(16)
        self.info(ident + "Kafka Server started", "kafka.server.KafkaRaftServer")

    def shutdown(self, signum: int, _frame: object) -> None:
        if self.stopping:
            return
        self.stopping = True
        ident = f"[BrokerServer id={self.node}] "
        self.info(ident + "Transition from STARTED to SHUTTING_DOWN", "kafka.server.BrokerServer")
        for s in range(int(self.a.flush_seconds)):
            self.info(f"[LogManager broker={self.node}] flushing logs before shutdown ({s}/{self.a.flush_seconds:g} s)",
                      "kafka.log.LogManager")  # fmt: skip
            time.sleep(1)
        time.sleep(self.a.flush_seconds - int(self.a.flush_seconds))
        for d in self.dirs:
            path = os.path.join(d, MARKER)
            with open(path + ".tmp", "w", encoding="utf-8") as f:
                f.write(json.dumps({"version": 0, "brokerEpoch": int(time.time())}, separators=(",", ":")))
                f.flush()
                os.fsync(f.fileno())
            os.replace(path + ".tmp", path)
        self.info(f"[LogManager broker={self.node}] Shutdown complete.", "kafka.log.LogManager")
        self.info(ident + "shut down completed", "kafka.server.BrokerServer")
        sys.exit(0)

    def serve(self) -> None:
        while True:
            conn, _ = self.sock.accept()
            conn.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--server-properties", default="/etc/kafka/server.properties")
    ap.add_argument("--log", default="/var/log/kafka/server.log")
    ap.add_argument("--flush-seconds", type=float, default=12.0, help="time spent 'flushing' after SIGTERM")
    ap.add_argument("--recover-seconds", type=float, default=1.0, help="load time after a clean stop")
    ap.add_argument(
        "--recover-seconds-unclean", type=float, default=4.0, help="load time after an unclean stop"
    )
    ap.add_argument("--kafka-version", default="3.7.0")
    a = ap.parse_args()
    b = Broker(a)
    signal.signal(signal.SIGTERM, b.shutdown)
    b.start()
    b.serve()
    return 0


if __name__ == "__main__":
    sys.exit(main())
