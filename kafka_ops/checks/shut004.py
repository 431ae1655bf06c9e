"""SHUT004: a start that fails while loading the logs would write .kafka_cleanshutdown into unclean log dirs.

On 2.8.0-3.5.1 in ZooKeeper mode, a ``KafkaServer.startup`` that fails in ``LogManager.startup`` (loadLogs) runs
``shutdown()``, and ``LogManager.shutdown`` writes the clean-shutdown marker in every live log dir, also in those
that had none (KAFKA-15375, fixed in 3.5.2 and 3.6.0). A dir stopped uncleanly needs its unflushed segments
recovered; once the cause of the failure is fixed, the start after it finds the marker and skips that recovery.
The rule (which dirs, per release and mode) is ``kafka_ops.broker.failed_start``; whether the start fails while
loading is the plan's (``broker.plan.pre_load_exit``, ``loading_exit``, ``partition_load_exit``). The plan's
``next_start.after_failed_start`` says it per dir. See docs/SHUT004.md.
"""

from __future__ import annotations

from collections.abc import Iterator

from kafka_ops.broker import failed_start, meta
from kafka_ops.broker.plan import (
    loading_exit,
    log_dir_offline,
    not_live,
    partition_load_exit,
    pre_load_exit,
)
from kafka_ops.broker.startup import is_metadata_log
from kafka_ops.checks.base import Finding, check
from kafka_ops.engine import versions
from kafka_ops.engine.shell import q
from kafka_ops.facts.context import Context
from kafka_ops.facts.model import HostFacts, PartitionFacts

# ctx.cache: whether the rule can apply on this host (_may_apply), and the first partition whose load makes the
# start exit, as (reason, check, log dir)
_GATE, _KEY = "shut004_gate", "shut004"


def _may_apply(h: HostFacts) -> bool:
    """The cheap gate: a stopped ZooKeeper-mode broker of an affected release with an unclean dir to recover."""
    if h.broker_state == "running" or not versions.affected("KAFKA-15375", h.kafka_version):
        return False
    if meta.broker_mode(h) != "zk":
        return False
    return any(ldf.scan.exists and not ldf.clean_shutdown and ldf.scan.partition_names for ldf in h.log_dirs)


@check(
    "SHUT004",
    severity="critical",
    scope="partition,host",
    title="A start that fails while loading logs writes .kafka_cleanshutdown into unclean log dirs (ZooKeeper "
    "mode 2.8.0-3.5.1, KAFKA-15375)",
    incident="issue 19 §3: after a start that exits in log loading, the start after it skips the recovery of dirs "
    "that were stopped uncleanly",
    needs=("broker_stopped",),
)
def run(ctx: Context, subject: PartitionFacts | HostFacts) -> Iterator[Finding]:
    h = ctx.host
    if isinstance(subject, PartitionFacts):
        pf = subject
        gate = ctx.cache.get(_GATE)
        if gate is None:
            gate = ctx.cache[_GATE] = _may_apply(h)  # asked once per audit, not per partition
        if not gate or _KEY in ctx.cache or is_metadata_log(pf):
            return
        why = partition_load_exit(ctx, pf, log_dir_offline(h, pf.log_dir) is not None)
        if why is not None:
            ctx.cache[_KEY] = (*why, pf.log_dir.path)
        return
    if not _may_apply(h) or pre_load_exit(h) is not None:
        return  # an exit before LogManager loads anything changes no marker
    at_load = loading_exit(h)
    cause = at_load if at_load is not None else ctx.cache.get(_KEY)
    if cause is None:
        return
    listing = at_load[2] if at_load is not None else None
    after = failed_start.markers_after(h, not_live(h), listing, None if at_load is not None else cause[2])
    for m in failed_start.unsafe_dirs(after):
        marker = f"{m.path}/.kafka_cleanshutdown"
        yield Finding(
            check="SHUT004",
            severity="critical",
            log_dir=m.path,
            path=m.path,
            message=(
                f"{m.path} has no .kafka_cleanshutdown (its last stop was unclean: it needs recovery), and the next "
                f"start exits while loading the logs ({cause[0]} [{cause[1]}]): Kafka "
                f"{versions.text(h.kafka_version)} in ZooKeeper mode then runs LogManager.shutdown, which writes the "
                "marker here (KAFKA-15375, fixed in 3.5.2/3.6.0); once the cause is fixed, the start after it skips "
                "the recovery of this dir's unflushed data and loads it unchecked"
            ),
            remediation=(
                f"Fix the cause ({cause[1]}) before starting the broker. If it already failed to start, remove "
                f"the re-created marker before starting again: rm -- {q(marker)} (only in the dirs that had none "
                "before the failed start); or upgrade to 3.5.2 or later"
            ),
            details={"cause_check": cause[1], "marker": m.marker, "next_start": m.then},
        )
