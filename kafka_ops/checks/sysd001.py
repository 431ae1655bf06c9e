"""SYSD001: the unit's stop timeout is shorter than a clean shutdown of this broker needs: systemd SIGKILLs it.

systemd (systemd.service(5), systemd.kill(5)): on stop it runs ExecStop= (each bounded by TimeoutStopSec=), then
sends KillSignal= (SIGTERM) and waits TimeoutStopSec= for the processes to exit, then sends SIGKILL. Unset, the
timeout is DefaultTimeoutStopSec= of systemd-system.conf(5), 90 s; ``TimeoutSec=`` sets it too; ``0`` means
no timeout, like ``infinity`` (load-fragment-gperf: TimeoutStopSec uses config_parse_sec_fix_0, "treats a
time of 0 as infinity, for compatibility").

What a clean shutdown needs (the estimate; every constant below is named in the finding's details):

* controlled shutdown, bounded by the broker itself:
  - KRaft: BrokerServer.shutdown waits for the controller to release it for up to 5 minutes
    (KafkaBroker.shutdown() = shutdown(Duration.ofMinutes(5)); 3.0-3.8:
    ``lifecycleManager.controlledShutdownFuture.get(5L, TimeUnit.MINUTES)``), then goes on without it;
  - ZooKeeper: KafkaServer.controlledShutdown makes controlled.shutdown.max.retries (3) attempts, each up to
    controller.socket.timeout.ms (30 s) to connect, request.timeout.ms (30 s) for the answer, then
    controlled.shutdown.retry.backoff.ms (5 s): 3 x 65 s = 195 s;
  - controlled.shutdown.enable=false: none.
  Ordinarily it takes seconds; the bound is what a slow or absent controller costs, e.g. when a whole
  cluster is stopped at once (cp-ansible's default deployment_strategy is parallel) and the controllers go
  first.
* LogManager.shutdown: per log dir, a pool of num.recovery.threads.per.data.dir threads runs
  ``log.flush(true); log.close()`` for every log (flush the segments above the recovery point, trim and
  close indexes), then writes the recovery-point and log-start checkpoints and the clean-shutdown marker
  (LogManager.scala, shutdown). Dirs run in parallel. Modelled as: the dirty data to write back (at most
  the active segments, at most the page cache's dirty limit, vm.dirty_ratio 20 % of RAM, shared by the dirs
  in proportion to their bytes) at WRITEBACK_BYTES_PER_S per dir, plus LOG_CLOSE_S per partition and
  SEGMENT_CLOSE_S per segment divided among the dir's threads.
* OVERHEAD_S for the rest (socket server, request handlers, fetchers, coordinators, the cleaner).

needed = controlled shutdown bound + OVERHEAD_S + slowest log dir; recommended = max(FLOOR_S, needed x
MARGIN rounded up to ROUND_S). Critical below needed, warning below recommended.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

from kafka_ops.checks.base import Finding, check
from kafka_ops.engine import versions
from kafka_ops.engine.shell import q
from kafka_ops.facts.context import Context
from kafka_ops.facts.model import HostFacts
from kafka_ops.facts.systemd import DEFAULT_TIMEOUT_STOP_S
from kafka_ops.units import human_bytes

FLOOR_S = 180  # Confluent's package unit: TimeoutStopSec=180 (reference §3)
MARGIN = 1.25
ROUND_S = 30
KRAFT_CONTROLLED_SHUTDOWN_S = 300.0
OVERHEAD_S = 15.0
WRITEBACK_BYTES_PER_S = 125 * 1024 * 1024  # one volume's sustained write: AWS EBS gp3 baseline, 125 MiB/s
DIRTY_RATIO = 0.20  # vm.dirty_ratio default (mm/page-writeback.c: vm_dirty_ratio = 20)
LOG_CLOSE_S = 0.005  # fsync of the active .log/.index/.timeindex and close, per partition
SEGMENT_CLOSE_S = (
    0.001  # trim and unmap one segment's indexes (every segment before lazy indexes, KAFKA-9373)
)
SEGMENT_BYTES_DEFAULT = 1024**3


def _ms(server: dict[str, str], key: str, default: int) -> float:
    try:
        return int(server.get(key, default)) / 1000
    except ValueError:
        return default / 1000


def controlled_shutdown(h: HostFacts) -> tuple[float, str, str]:
    """(bound in seconds, mode, how it was computed)."""
    s = h.configs.server
    if s.get("controlled.shutdown.enable", "true").strip().lower() == "false":
        return 0.0, "disabled", "controlled.shutdown.enable=false: no controlled shutdown"
    roles = s.get("process.roles", "").replace(" ", "")
    retries = h.configs.server_int("controlled.shutdown.max.retries", 3)
    zk_each = (
        _ms(s, "controller.socket.timeout.ms", 30_000)
        + _ms(s, "request.timeout.ms", 30_000)
        + _ms(s, "controlled.shutdown.retry.backoff.ms", 5_000)
    )
    zk = retries * zk_each
    zk_text = (
        f"ZooKeeper mode: controlled.shutdown.max.retries {retries} x (controller.socket.timeout.ms + "
        f"request.timeout.ms + controlled.shutdown.retry.backoff.ms = {zk_each:g} s) = {zk:g} s"
    )
    kraft_text = (
        f"KRaft: BrokerServer.shutdown waits up to {KRAFT_CONTROLLED_SHUTDOWN_S:g} s for the controller to "
        "release the broker, KafkaBroker.shutdown() = 5 minutes"
    )
    if roles:
        if "broker" not in roles.split(","):
            return 0.0, "kraft-controller", "KRaft controller only: no broker controlled shutdown"
        return KRAFT_CONTROLLED_SHUTDOWN_S, "kraft", kraft_text
    if s.get("zookeeper.connect"):
        return zk, "zookeeper", zk_text
    if versions.since("kraft_only", h.kafka_version):
        return KRAFT_CONTROLLED_SHUTDOWN_S, "kraft", kraft_text
    bound = max(zk, KRAFT_CONTROLLED_SHUTDOWN_S)
    return (
        bound,
        "unknown",
        f"mode unknown (no process.roles or zookeeper.connect): the larger of {kraft_text}; {zk_text}",
    )


def estimate(h: HostFacts) -> dict[str, object]:
    """The stop time this broker needs and the TimeoutStopSec to give it."""
    cs, mode, cs_text = controlled_shutdown(h)
    threads = max(1, h.configs.server_int("num.recovery.threads.per.data.dir", 1))
    seg_bytes = h.configs.server_int("log.segment.bytes", SEGMENT_BYTES_DEFAULT)
    dirs = [d for d in h.log_dirs if d.scan.exists]
    total_bytes = sum(d.agg.log_bytes for d in dirs)
    dirty_limit = DIRTY_RATIO * h.mem_total if h.mem_total else None
    per_dir = []
    slowest = 0.0
    for d in dirs:
        a = d.agg
        flush_bytes = min(a.log_bytes, a.partitions * seg_bytes)
        if dirty_limit is not None and total_bytes:
            flush_bytes = min(flush_bytes, int(dirty_limit * a.log_bytes / total_bytes))
        flush_s = flush_bytes / WRITEBACK_BYTES_PER_S
        close_s = (a.partitions * LOG_CLOSE_S + a.segments * SEGMENT_CLOSE_S) / threads
        secs = flush_s + close_s
        slowest = max(slowest, secs)
        per_dir.append(
            {
                "log_dir": d.path, "partitions": a.partitions, "segments": a.segments, "log_bytes": a.log_bytes,
                "flush_bytes": flush_bytes, "flush_s": round(flush_s, 1), "close_s": round(close_s, 1),
                "seconds": round(secs, 1),
            }
        )  # fmt: skip
    needed = cs + OVERHEAD_S + slowest
    recommended = max(FLOOR_S, math.ceil(needed * MARGIN / ROUND_S) * ROUND_S)
    return {
        "needed_s": round(needed, 1), "recommended_timeout_s": recommended, "controlled_shutdown_s": cs,
        "mode": mode, "controlled_shutdown_basis": cs_text, "log_shutdown_s": round(slowest, 1),
        "overhead_s": OVERHEAD_S, "recovery_threads_per_dir": threads, "log_dirs": per_dir,
        "partitions": sum(d.agg.partitions for d in dirs), "segments": sum(d.agg.segments for d in dirs),
        "log_bytes": total_bytes, "mem_total": h.mem_total,
        "constants": {
            "floor_s": FLOOR_S, "margin": MARGIN, "round_s": ROUND_S, "writeback_bytes_per_s": WRITEBACK_BYTES_PER_S,
            "dirty_ratio": DIRTY_RATIO, "log_close_s": LOG_CLOSE_S, "segment_close_s": SEGMENT_CLOSE_S,
            "kraft_controlled_shutdown_s": KRAFT_CONTROLLED_SHUTDOWN_S,
        },
    }  # fmt: skip


def effective_timeout(h: HostFacts) -> tuple[float | None, str]:
    """TimeoutStopSec as systemd applies it: None is no timeout ('infinity', or 0 which systemd maps to it)."""
    unit = h.unit
    assert unit is not None
    try:
        t = unit.timeout_stop_s()
    except ValueError:
        raw = unit.service.get("TimeoutStopSec", unit.service.get("TimeoutSec"))
        # systemd ignores an unparsable assignment ("Failed to parse ... ignoring"): the default applies
        return DEFAULT_TIMEOUT_STOP_S, f"systemd default (DefaultTimeoutStopSec=90s; {raw!r} does not parse)"
    if t == 0:
        return None, f"{unit.timeout_stop_source}=0 (systemd treats 0 as infinity)"
    return t, unit.timeout_stop_source


@check(
    "SYSD001",
    severity="critical",
    scope="host",
    title="systemd stop timeout shorter than the broker's clean shutdown: SIGKILL, no clean-shutdown marker",
    incident="the broker was killed (OOM, and systemd's 90 s stop timeout SIGKILLs the same way); no "
    ".kafka_cleanshutdown, hours of index rebuilds at the next start",
    needs=("systemd_unit",),
)
def run(ctx: Context, h: HostFacts) -> Iterator[Finding]:
    timeout, source = effective_timeout(h)
    shown = (
        "TimeoutStopSec unset: systemd's DefaultTimeoutStopSec=90s"
        if source.startswith("systemd default (")
        else source
    )
    if timeout is None:
        return  # never SIGKILLed on stop
    est = estimate(h)
    needed = float(est["needed_s"])  # type: ignore[arg-type]
    rec = int(est["recommended_timeout_s"])  # type: ignore[call-overload]
    if timeout >= rec:
        return
    unit = h.unit
    assert unit is not None
    parts = (
        f"controlled shutdown up to {est['controlled_shutdown_s']:g} s [{est['controlled_shutdown_basis']}], "
        f"about {est['log_shutdown_s']:g} s to flush and close {est['partitions']} partitions / {est['segments']} "
        f"segments ({human_bytes(int(est['log_bytes']))}; LogManager.shutdown, "  # type: ignore[call-overload]
        f"{est['recovery_threads_per_dir']} thread(s) per log dir) and {OVERHEAD_S:g} s for the rest"
    )
    if timeout < needed:
        severity = None
        message = (
            f"{unit.name} stops the broker with a {timeout:g} s timeout ({shown}), but a clean shutdown of this "
            f"broker can need {needed:g} s: {parts}. When it takes longer, systemd sends SIGKILL: no "
            ".kafka_cleanshutdown is written and the next start re-reads and re-indexes every segment above the "
            "recovery point (LogLoader.recoverLog; the OOM-kill incident: hours)."
        )
    else:
        severity = "warning"
        message = (
            f"{unit.name} gives the broker {timeout:g} s to stop ({shown}): enough for the estimated {needed:g} s "
            f"({parts}), but with less than the {MARGIN:g}x margin the estimate needs (recommended {rec} s)."
        )
    dropin = f"/etc/systemd/system/{unit.name}.d/kafka-ops-timeout.conf"
    remediation = (
        f"Give it TimeoutStopSec={rec}s (max({FLOOR_S} s, {needed:g} s x {MARGIN:g}, rounded up to {ROUND_S} s)) "
        f"with a drop-in: `kafka-ops fix systemd --systemd-unit {q(unit.path)} --apply`, or by hand: mkdir -p "
        f"{q(dropin.rsplit('/', 1)[0])} && printf '[Service]\\nTimeoutStopSec={rec}s\\n' > {q(dropin)} && systemctl "
        "daemon-reload (it applies to the next stop; no restart needed). Check with `systemctl show -p "
        f"TimeoutStopUSec {q(unit.name)}`."
    )
    details = {
        "timeout_stop_s": timeout,
        "timeout_source": source,
        "unit": unit.path,
        "dropins": unit.dropins,
        **est,
    }
    yield run.finding(message, remediation, severity=severity, path=unit.path, details=details)
