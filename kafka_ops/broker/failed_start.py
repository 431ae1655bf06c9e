"""What a start that fails while LOADING the logs leaves of the clean-shutdown markers, for the start after it.

The plan's broker exits during loading (``NextStartPlan.exit_at_load``: a tail a start without recovery cannot
read, SHUT002; a leftover name that does not parse, a partition dir name that is not one, a partition in two dirs,
DIR003; a leader-epoch-checkpoint that does not parse, DIR005). The failed start changes ``.kafka_cleanshutdown``
in the log dirs, and so what the start after it (once the cause is fixed) recovers (apache/kafka, tags cited;
the rows ``load_logs_at_startup``, ``kraft_fatal_fault_halts`` and the bug KAFKA-15375 in engine.versions):

* up to 2.7: ``LogManager``'s constructor runs ``loadLogs`` (LogManager.scala@2.7.0:119); a failure leaves
  ``KafkaServer.logManager`` null, so ``shutdown`` does not run ``LogManager.shutdown``; a dir's marker is deleted
  only once its partitions loaded, in a HashMap's order (LogManager.scala@2.7.0:375-383): a dir without a marker
  stays without, the dir whose load throws keeps its one, another dir may lose it (the next start then
  recovers it: safe).
* 2.8.0+: ``loadLogs`` runs in ``LogManager.startup`` and deletes every live dir's marker as its loading starts
  (KAFKA-10471, LogManager.scala@2.8.0:316-322), before any partition loads; a partition dir name that is not one
  throws while the dirs are listed (``parseTopicPartitionName`` in the ``logsToLoad`` filter), so the dirs after
  it in log.dirs are not reached and keep their marker.
  - ZooKeeper mode: the failed ``KafkaServer.startup`` runs ``shutdown()`` (KafkaServer.scala@2.8.0:412-417,
    @3.5.1:590-595), and ``LogManager.shutdown`` writes the marker in every live dir ("Writing clean shutdown
    marker", LogManager.scala@2.8.0:514-517, @3.5.1:628-632), also where there was none: the start after it skips
    the recovery those dirs need (KAFKA-15375). Fixed in 3.5.2/3.6.0: only where the dir had one or all its logs
    finished loading (LogManager.scala@3.5.2:645-651), which, in a dir without one, means recovered.
  - KRaft: ``BrokerMetadataPublisher`` hands the failure to the fatal fault handler ("Error starting LogManager",
    BrokerMetadataPublisher.scala@3.5.1:350-357, @3.7.1:276-294), which halts the JVM from 3.4.1 (KAFKA-14693):
    no shutdown, the markers deleted at load start stay deleted. 3.3.0-3.4.0 exited instead (shutdown hooks run);
    before 3.3 the publisher had no handler: those are not predicted.

An exit before LogManager loads anything (CONF001, DIR002, PERM003, a misplaced metadata log) changes no marker:
``exit_at_load`` is False and nothing is said.
"""

from __future__ import annotations

from typing import Any

from kafka_ops.broker import meta
from kafka_ops.engine import versions
from kafka_ops.engine.compat import slotted
from kafka_ops.facts.model import HostFacts

# a dir's marker after the failed start
RECREATED, KEPT, DELETED, DEPENDS = "recreated", "kept", "deleted", "depends"
# what the start after it does with the dir (once the cause of the failure is fixed)
RECOVERS, SKIPS_RECOVERY = "recovers", "skips_recovery"


@slotted(frozen=True)
class MarkerAfter:
    path: str
    marker_now: bool  # .kafka_cleanshutdown present before the failed start
    marker: str  # RECREATED | KEPT | DELETED | DEPENDS
    then: str  # RECOVERS | SKIPS_RECOVERY | DEPENDS: the start after the failed one
    unsafe: bool  # a marker written where there was none: unflushed data the start after it does not recover
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path, "marker_now": self.marker_now, "marker": self.marker, "next_start": self.then,
            "unsafe": self.unsafe, "reason": self.reason,
        }  # fmt: skip


def markers_after(
    h: HostFacts, not_live: set[str], listing_fails_in: str | None = None, failing_dir: str | None = None
) -> list[MarkerAfter] | None:
    """Each log dir's marker after a start that fails while loading logs, or None if not predicted (unknown
    version or mode). ``not_live``: dirs LogManager never loads (createAndValidateLogDirs, meta.properties:
    not in liveLogDirs); ``listing_fails_in``: the dir whose listing throws (a partition dir name that is not one),
    when that is the failure: the dirs after it are not reached; ``failing_dir``: the dir whose load throws, when
    known (up to 2.7 its marker is never deleted)."""
    v = h.kafka_version
    if v is None:
        return None
    mode = meta.broker_mode(h)
    if mode == "unknown":
        return None
    order = [ldf.path for ldf in h.log_dirs]
    reached = set(order)
    if listing_fails_in in order:
        reached = set(order[: order.index(listing_fails_in) + 1])
    out: list[MarkerAfter] = []
    for ldf in h.log_dirs:
        had = ldf.clean_shutdown
        if ldf.path in not_live or not ldf.scan.exists:
            out.append(MarkerAfter(ldf.path, had, KEPT, _then(had), False, "LogManager never loads this dir"))
            continue
        if (
            had
            and ldf.path == (failing_dir or listing_fails_in)
            and not versions.since("load_logs_at_startup", v)
        ):
            out.append(
                MarkerAfter(
                    ldf.path,
                    had,
                    KEPT,
                    SKIPS_RECOVERY,
                    False,
                    "loading this dir fails: LogManager.loadLogs never reaches the deletion after its jobs "
                    "(LogManager.scala@2.7.0:375-383), and no shutdown runs",
                )
            )
            continue
        out.append(_one(ldf.path, had, v, mode, ldf.path in reached))
    return out


def _then(present: bool) -> str:
    return SKIPS_RECOVERY if present else RECOVERS


def _one(path: str, had: bool, v: versions.Version, mode: str, reached: bool) -> MarkerAfter:
    if not versions.since("load_logs_at_startup", v):
        if not had:
            return MarkerAfter(
                path, had, KEPT, RECOVERS, False,
                "loading fails in LogManager's constructor: no LogManager.shutdown, no marker written "
                "(LogManager.scala@2.7.0:119)",
            )  # fmt: skip
        return MarkerAfter(
            path, had, DEPENDS, DEPENDS, False,
            "deleted if this dir's partitions finished loading before the failure was met (LogManager.loadLogs "
            "deletes it after its jobs, in a HashMap's order, LogManager.scala@2.7.0:375-383), else kept",
        )  # fmt: skip
    if not reached:
        return MarkerAfter(
            path,
            had,
            KEPT,
            _then(had),
            False,
            "listing an earlier log dir throws before loadLogs reaches this one: its marker is not touched",
        )
    if mode == "zk":
        if versions.affected("KAFKA-15375", v):
            if had:
                why = (
                    "deleted as loading starts (KAFKA-10471), then written again by LogManager.shutdown, which the "
                    "failed KafkaServer.startup runs"
                )
                return MarkerAfter(path, had, RECREATED, SKIPS_RECOVERY, False, why)
            return MarkerAfter(
                path, had, RECREATED, SKIPS_RECOVERY, True,
                "no marker now (unclean), but the failed KafkaServer.startup runs LogManager.shutdown, which writes "
                "one in every live log dir (KAFKA-15375, fixed in 3.5.2 and 3.6.0): the start after it skips the "
                "recovery of this dir's unflushed data",
            )  # fmt: skip
        if had:
            return MarkerAfter(
                path, had, RECREATED, SKIPS_RECOVERY, False,
                "deleted as loading starts, written again by LogManager.shutdown: the dir had one at start "
                "(hadCleanShutdownFlags, KAFKA-15375)",
            )  # fmt: skip
        return MarkerAfter(
            path, had, DEPENDS, DEPENDS, False,
            "LogManager.shutdown writes one only if every partition of this dir finished loading, i.e. was "
            "recovered, before the failure (loadLogsCompletedFlags, KAFKA-15375): safe either way",
        )  # fmt: skip
    if not versions.since("kraft_fatal_fault_halts", v):
        return MarkerAfter(
            path,
            had,
            DEPENDS,
            DEPENDS,
            False,
            "a KRaft broker before 3.4.1 exits (shutdown hooks run) or, before 3.3, has no fault handler for a "
            "LogManager that fails to start: not predicted",
        )
    if had:
        return MarkerAfter(
            path,
            had,
            DELETED,
            RECOVERS,
            False,
            "deleted as loading starts (KAFKA-10471); the fatal fault ('Error starting LogManager') halts the JVM: "
            "no shutdown writes it again, so the start after it recovers this dir",
        )
    return MarkerAfter(
        path,
        had,
        KEPT,
        RECOVERS,
        False,
        "no marker now, and the fatal fault ('Error starting LogManager') halts the JVM without a shutdown",
    )


def unsafe_dirs(after: list[MarkerAfter] | None) -> list[MarkerAfter]:
    """The dirs where the failed start writes a marker over unrecovered data (the SHUT004 finding)."""
    return [m for m in after or [] if m.unsafe]
