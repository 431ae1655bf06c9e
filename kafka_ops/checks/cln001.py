"""CLN001: the broker logs show a log-cleaner thread that died and was not restarted since: compaction stopped."""

from __future__ import annotations

from collections.abc import Iterator

from kafka_ops.broker.cleaner import affected_by_6854
from kafka_ops.checks.base import Finding, check
from kafka_ops.engine import versions
from kafka_ops.facts.brokerlogs import CleanerDeath
from kafka_ops.facts.context import Context
from kafka_ops.facts.model import HostFacts

KAFKA_6854_TEXT = "larger than maximum allowable size"


@check(
    "CLN001",
    severity="critical",
    scope="host",
    title='A log-cleaner thread died ("Error due to" then "Stopped") and was not restarted: compaction stopped',
    incident="kafka-log-cleaner-thread-0 died on __consumer_offsets-20 (KAFKA-6854, Kafka 1.1.0); the "
    "compacted partition grew for weeks until the disks filled",
    needs=("logs",),
)
def run(ctx: Context, h: HostFacts) -> Iterator[Finding]:
    # the deaths as read at gather time, in one streamed pass (facts.brokerlogs.AuditDigest: the newest KEEP,
    # each thread's deaths counted in full)
    g = h.log_digest
    if g is None:
        return
    deaths = g.deaths_list()
    if not deaths:
        return
    last: dict[str, CleanerDeath] = {}
    for d in deaths:
        last[d.thread] = d
    count = g.death_counts
    threads = max(1, h.configs.broker_int("log.cleaner.threads", 1))
    for thread in sorted(last):
        d = last[thread]
        yield _finding(ctx, h, d, count[thread], threads, sum(1 for x in last.values() if x.dead_now))


def _cause(h: HostFacts, d: CleanerDeath) -> str:
    detail = (d.detail or "").rstrip(". ")
    exc = f"{d.exception}: '{detail}'" if d.exception and detail else (d.exception or "an exception")
    doing = ""
    if d.log:
        doing = f" while cleaning {d.log}" + (f" segment {d.segment}" if d.segment is not None else "")
        if d.deletes:
            doing += f" ({d.deletes} deletes)"
    why = ""
    if d.detail and KAFKA_6854_TEXT in d.detail:
        if affected_by_6854(h.kafka_version):
            why = (
                f" This is KAFKA-6854 on Kafka {versions.text(h.kafka_version)}: Cleaner.cleanInto grew its I/O "
                "buffers whenever a read held only discarded batches (transaction markers) and threw once they "
                "reached max.message.bytes (LogCleaner.growBuffers @1.1.0); CLN003 names the partition and the "
                "run of markers that kill it."
            )
        elif h.kafka_version is None:
            why = (
                " The buffers reached max(max.message.bytes, message.max.bytes) and a read still held no complete "
                "batch (LogCleaner.growBuffers): a batch larger than the limit, or KAFKA-6854 on a version before "
                "1.0.2/1.1.1/2.0.0 (the Kafka version is not known: give --kafka-version)."
            )
        else:
            why = (
                " The buffers reached max(max.message.bytes, message.max.bytes) and a read still held no complete "
                f"batch (LogCleaner.growBuffers): a batch larger than the limit. Not KAFKA-6854: Kafka "
                f"{versions.text(h.kafka_version)} has its fix (1.0.2, 1.1.1, 2.0.0)"
                + (
                    "; and since 2.1.0 (KIP-346) this exception marks the partition uncleanable instead of "
                    "killing the thread, so a thread that died of it ran an older version when it died."
                    if versions.norm(h.kafka_version) >= (2, 1, 0)
                    else "."
                )
            )
    return f"{exc}{doing}.{why}"


def _remove_cause(h: HostFacts, d: CleanerDeath) -> str:
    """The first step of the remediation, for the cause and the version at hand."""
    first = "Remove the cause first, or the thread dies again on the same segment (the dead-cleaner incident's cleaner died three times after restarts)"
    six_eight_five_four = bool(d.detail and KAFKA_6854_TEXT in d.detail)
    if six_eight_five_four and (h.kafka_version is None or affected_by_6854(h.kafka_version)):
        return (
            f"{first}: for KAFKA-6854 upgrade to 1.1.1 / 2.0.0 or later (2.2.1 / 2.3.0 also stop KAFKA-8335's "
            "marker build-up); see CLN003."
        )
    if d.exception == "java.lang.OutOfMemoryError":
        return (
            f"{first}: the broker's heap ran out while the cleaner allocated its buffers: it takes "
            "log.cleaner.dedupe.buffer.size (default 128 MiB, shared by the threads) and per thread two I/O buffers "
            "that grow up to max(max.message.bytes, message.max.bytes); give the broker more heap (KAFKA_HEAP_OPTS "
            "-Xmx) or lower log.cleaner.dedupe.buffer.size."
        )
    if six_eight_five_four:
        return (
            f"{first}: find the batch larger than max.message.bytes (kafka-ops dump --records on the segment) and "
            "raise the topic's max.message.bytes above it."
        )
    return f"{first}: the exception above says what it is."


def _finding(ctx: Context, h: HostFacts, d: CleanerDeath, deaths: int, threads: int, dead: int) -> Finding:
    n = d.thread.rsplit("-", 1)[-1]
    again = f" (death {deaths} of this thread in these logs)" if deaths > 1 else ""
    details = {
        **d.to_dict(),
        "deaths_of_thread": deaths,
        "log_cleaner_threads": threads,
        "dead_threads_now": dead,
        "kafka_version": versions.text(h.kafka_version),
        "kafka_6854": bool(d.detail and KAFKA_6854_TEXT in d.detail and affected_by_6854(h.kafka_version)),
    }
    path = d.where.rsplit(":", 1)[0]
    if d.dead_now:
        scope = (
            "no log is compacted any more"
            if dead >= threads
            else f"{dead} of {threads} cleaner threads are dead: compaction runs at reduced capacity"
        )
        message = (
            f"{d.thread} died at {d.died_at or 'an unknown time'} ({d.where}){again} and no restart follows in the "
            f"logs: {_cause(h, d)} ShutdownableThread.run logged 'Error due to' and 'Stopped': the thread is gone "
            f"until the broker restarts, and {scope}. Compacted topics (__consumer_offsets, __transaction_state, "
            "every cleanup.policy=compact topic) keep every record version and tombstone and grow without bound "
            "(the dead-cleaner incident: the disks filled within weeks); the group coordinator reads the whole grown "
            "__consumer_offsets partition when it moves, so failovers get slower."
        )
        remediation = (
            f"{_remove_cause(h, d)} Then restart the cleaner: restart the broker (rolling, one at "
            "a time), or on 1.1+ change a dynamic cleaner setting, which restarts the threads (LogCleaner.reconfigure: "
            f"shutdown() then startup()): kafka-configs --bootstrap-server <broker:9092> --entity-type brokers "
            f"--entity-name <broker id> --alter --add-config log.cleaner.threads={threads}. Check it runs: "
            f"'[kafka-log-cleaner-thread-{n}]: Starting' in log-cleaner.log, and (2.5+) the JMX gauge "
            "kafka.log:type=LogCleaner,name=DeadThreadCount is 0. Watch `kafka-ops logs log-cleaner.log`."
        )
        return run.finding(message, remediation, path=path, details=details)
    message = (
        f"{d.thread} died at {d.died_at or 'an unknown time'} ({d.where}){again}, and was restarted since "
        f"({d.restart_evidence}): {_cause(h, d)} It is history unless the cause remains: a cleaner that died on a "
        "segment dies again the next time it cleans that segment."
    )
    remediation = (
        "Nothing to do if the cause is gone. Otherwise see CLN003 (the run of markers on KAFKA-6854 versions) and "
        "watch log-cleaner.log for a new 'Error due to' (kafka-ops logs), or the JMX gauge "
        "kafka.log:type=LogCleaner,name=DeadThreadCount (2.5+)."
    )
    return run.finding(message, remediation, severity="info", path=path, details=details)
