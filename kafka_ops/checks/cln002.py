"""CLN002: a Kafka version with a transaction-marker cleaner bug (KAFKA-6854, KAFKA-8335) and markers on disk.

Aggregation: the check runs at partition scope to count the control batches of every compacted partition
(PartitionFacts.control_batches, counted by the facts collector for compacted partitions only) into an
accumulator kept on the audit context, and at host scope, after every log dir, to yield at most one finding
for the host. Memory stays flat: one small record per partition that has markers, the list in the details is
capped at MAX_LISTED.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from kafka_ops.broker.cleaner import affected_by_6854, affected_by_8335
from kafka_ops.checks.base import Finding, check
from kafka_ops.engine import versions
from kafka_ops.facts.context import Context
from kafka_ops.facts.model import HostFacts, PartitionFacts

MAX_LISTED = 50


@dataclass
class _Acc:
    partitions: int = 0
    batches: int = 0
    longest: tuple[int, str] = (0, "")  # (bytes, topic-partition)
    listed: list[dict[str, object]] = field(default_factory=list)
    topics: set[str] = field(default_factory=set)


@check(
    "CLN002",
    severity="warning",
    scope="partition,host",
    title="Kafka version with a cleaner bug on transaction markers (KAFKA-6854 / KAFKA-8335) and markers on disk",
    incident="Kafka 1.1.0 with a transactional consumer: the cleaner died on a run of COMMIT markers "
    "in __consumer_offsets (KAFKA-6854), which KAFKA-8335 had let pile up",
    needs=("kafka_version",),
)
def run(ctx: Context, subject: PartitionFacts | HostFacts) -> Iterator[Finding]:
    version = ctx.host.kafka_version
    bug6854, bug8335 = affected_by_6854(version), affected_by_8335(version)
    if not (bug6854 or bug8335):
        return
    acc: _Acc = ctx.cache.setdefault("cln002", _Acc())
    if isinstance(subject, PartitionFacts):
        pf = subject
        if pf.config.compacted and pf.control_batches > 0:
            name = f"{pf.part.topic}-{pf.part.partition}"
            acc.partitions += 1
            acc.batches += pf.control_batches
            acc.topics.add(pf.part.topic)
            run_bytes = pf.control_run[0] if pf.control_run else 0
            if run_bytes > acc.longest[0]:
                acc.longest = (run_bytes, name)
            if len(acc.listed) < MAX_LISTED:
                acc.listed.append(
                    {
                        "partition": name, "log_dir": pf.log_dir.path, "control_batches": pf.control_batches,
                        "longest_run_bytes": run_bytes,
                        "longest_run_batches": pf.control_run[1] if pf.control_run else 0,
                    }
                )  # fmt: skip
        return
    if acc.partitions == 0:
        return
    v = versions.text(version)
    bugs = []
    if bug6854:
        bugs.append(
            "KAFKA-6854 (fixed in 1.0.2, 1.1.1, 2.0.0): Cleaner.cleanInto grows its buffers whenever a read "
            "holds only discarded batches, and the cleaner thread dies with 'IllegalStateException: This log "
            "contains a message larger than maximum allowable size' once a run of markers is longer than its "
            "largest buffer (CLN003 says whether one already is)"
        )
    if bug8335:
        bugs.append(
            "KAFKA-8335 (fixed in 2.2.1, 2.3.0): the cleaner keeps the batches of transactional offset commits "
            "(the group coordinator always writes sequence 0) as empty batches, and their COMMIT markers with "
            "them: __consumer_offsets partitions of transactional consumers grow without bound"
        )
    topics = ", ".join(sorted(acc.topics)[:10]) + (" ..." if len(acc.topics) > 10 else "")
    message = (
        f"Kafka {v} has {' and '.join(b.split(' (')[0] for b in bugs)}, and {acc.batches} transaction markers "
        f"(control batches) lie in {acc.partitions} compacted partition(s) on this host ({topics}); the longest run "
        f"of consecutive markers is {acc.longest[0]} bytes in {acc.longest[1]}. " + "; ".join(bugs) + "."
    )
    remediation = (
        "Upgrade the brokers to 2.2.1 / 2.3.0 or later (both bugs fixed; 1.1.1 / 2.0.0 fix only the crash). Until "
        "then watch log-cleaner.log for 'Error due to' (CLN001, kafka-ops logs) and the size of __consumer_offsets "
        "(kafka-log-dirs --describe); the dead-cleaner incident's stopgap, raising max.message.bytes on the topic above the longest "
        "run, only postpones the crash while markers keep piling up."
    )
    details = {
        "kafka_version": v, "kafka_6854": bug6854, "kafka_8335": bug8335, "partitions": acc.partitions,
        "control_batches": acc.batches, "longest_run_bytes": acc.longest[0], "longest_run_partition": acc.longest[1],
        "partitions_listed": acc.listed, "partitions_omitted": max(0, acc.partitions - len(acc.listed)),
    }  # fmt: skip
    yield run.finding(message, remediation, details=details)
