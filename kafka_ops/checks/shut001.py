"""SHUT001: the broker is stopped without a clean-shutdown marker: the next start recovers every unflushed segment."""

from __future__ import annotations

from collections.abc import Iterator

from kafka_ops.checks.base import Finding, check
from kafka_ops.facts.context import Context
from kafka_ops.facts.model import LogDirFacts
from kafka_ops.units import human_bytes, human_ms

# The severity follows the estimated recovery: what the operator waits for at the next start. Under a minute the
# start is barely slower than a clean one; ten minutes and more hold up a rolling restart and keep the broker's
# partitions under-replicated that long (the OOM-kill incident: hours).
WARNING_AFTER_S = 60
CRITICAL_AFTER_S = 600


def severity_for(recover_seconds: float) -> str:
    if recover_seconds >= CRITICAL_AFTER_S:
        return "critical"
    return "warning" if recover_seconds >= WARNING_AFTER_S else "info"


@check(
    "SHUT001",
    severity="critical",
    scope="logdir",
    title="Stopped broker without .kafka_cleanshutdown: recovery at the next start (critical when 10 min or more)",
    incident="an OOM kill / systemd SIGKILL left no marker; the broker spent hours rebuilding indexes",
    needs=("broker_stopped",),
)
def run(ctx: Context, ldf: LogDirFacts) -> Iterator[Finding]:
    if not ldf.scan.exists or ldf.clean_shutdown:
        return
    if not ldf.scan.partition_names:
        return  # nothing to recover: a new (or formatted, never started) broker has no marker and loses nothing
    roles = ctx.host.configs.process_roles()
    if roles and "broker" not in roles:
        # a KRaft controller-only node has no LogManager (KafkaRaftServer.scala@3.7.1:80-87: BrokerServer only
        # with the broker role), so it never writes the marker, and its metadata log is recovered from offset 0
        # at every start whatever the marker says (KafkaMetadataLog.scala@3.7.1:584-592, recoveryPoint 0,
        # lastShutdownClean false): the missing marker says nothing of its last stop
        return
    a = ldf.agg
    secs = ctx.recovery_seconds(a.recover_bytes, a.partitions, a.largest_recover_bytes)
    threads = ctx.host.configs.server_int("num.recovery.threads.per.data.dir", 1)
    severity = severity_for(secs)
    took = "under a second" if secs < 1 else f"about {human_ms(secs * 1000)}"
    yield run.finding(
        f"log dir {ldf.path} has no .kafka_cleanshutdown and the broker is stopped: its last stop was not clean "
        f"(SIGKILL, OOM kill or a stop timeout). At the next start LogLoader.recoverLog re-reads, CRC-checks and "
        f"re-indexes every segment from the recovery point on: {a.recover_segments} segments, "
        f"{human_bytes(a.recover_bytes)} in {a.partitions} partitions (the largest {human_bytes(a.largest_recover_bytes)}), "
        f"{took} with num.recovery.threads.per.data.dir={threads} (at 48 MB/s per thread, the "
        "rate of the OOM-kill incident's broker log; one thread recovers a partition from end to end, LogManager.loadLogs, so "
        "the largest partition sets the floor whatever the threads).",
        "Expect the start to take that long and do not kill the broker while it recovers (`kafka-ops logs --follow "
        "server.log` shows the progress). Raise num.recovery.threads.per.data.dir (e.g. to the number of cores) "
        "before starting to shorten it, and fix the stop path so it does not happen again: SYSD001, SYSD004.",
        severity=severity,
        path=ldf.path,
        details={
            "recover_segments": a.recover_segments, "recover_bytes": a.recover_bytes,
            "recover_estimate_s": round(secs, 1), "recovery_threads": threads,
            "partitions": a.partitions, "largest_recover_bytes": a.largest_recover_bytes,
            "severity_thresholds_s": {"warning": WARNING_AFTER_S, "critical": CRITICAL_AFTER_S},
        },
    )  # fmt: skip
