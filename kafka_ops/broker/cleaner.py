"""Log-cleaner knowledge shared by CLN001-CLN004 (a helper module, not a check: its name has no number).

Versions (first release tags containing the fix commit, ``git tag --contains`` in apache/kafka):

* KAFKA-6854 (PR #4962, commits 3a45a2b6a5c / 962eef014bc / 6dbd9b59e60): ``Cleaner.cleanInto`` grew its I/O
  buffers when a read held no *retained message* (``result.messagesRead == 0``), which is also the case when
  every batch read was discarded (transaction markers, aborted data); at ``max.message.bytes`` it threw
  ``IllegalStateException: This log contains a message larger than maximum allowable size of N`` and the
  cleaner thread died. Fixed in 1.0.2, 1.1.1 and 2.0.0 (``result.bytesRead == 0``). Transactions exist since
  0.11.0.0, so 0.11.0.x, 1.0.0, 1.0.1 and 1.1.0 are affected (0.11.0.3 was never released).
* KAFKA-8335 (PR #6715, commits 0bf7fa85de1 / d798dbf497d): the cleaner kept every batch whose last sequence
  equalled its producer's last sequence; the group coordinator writes transactional offset commits with
  sequence 0, so they were kept as empty batches and their COMMIT markers were never discardable:
  ``__consumer_offsets`` grows without bound. Fixed in 2.2.1 and 2.3.0 (the 2.0/2.1 branch fixes were never
  released).

Buffers (LogCleaner.scala @1.1.0): ``CleanerThread`` builds ``new Cleaner(ioBufferSize =
config.ioBufferSize / config.numThreads / 2, maxIoBufferSize = config.maxMessageSize)`` where
``config.ioBufferSize`` is ``log.cleaner.io.buffer.size`` (524288), ``numThreads`` ``log.cleaner.threads`` (1)
and ``maxMessageSize`` the broker's ``message.max.bytes``; ``cleanSegments`` calls ``cleanInto(...,
log.config.maxMessageSize, ...)`` with the topic's ``max.message.bytes``; ``growBuffers(maxLogMessageSize)``
doubles up to ``max(maxLogMessageSize, maxIoBufferSize)`` and throws once the buffer is already that size.
``restoreBuffers()`` shrinks them back after every source segment. ``message.max.bytes`` defaulted to
1000000 + 12 = 1000012 up to 2.4.x and 1048576 + 12 = 1048588 from 2.5.0 (KAFKA-4203, commit bd5a1c4d368).
"""

from __future__ import annotations

from dataclasses import field

from kafka_ops.engine import versions
from kafka_ops.engine.compat import slotted
from kafka_ops.engine.errors import EngineError
from kafka_ops.engine.records import BatchScanner, LogBuffer
from kafka_ops.facts.config import TopicConfig
from kafka_ops.facts.model import HostFacts

IO_BUFFER_SIZE_DEFAULT = 512 * 1024  # KafkaConfig/CleanerConfig LogCleanerIoBufferSize
CLEANER_THREADS_DEFAULT = 1
DELETE_RETENTION_MS_DEFAULT = 24 * 3600 * 1000
MIN_CLEANABLE_RATIO_DEFAULT = 0.5


def affected_by_6854(version: tuple[int, ...] | None) -> bool:
    return bool(versions.affected("KAFKA-6854", version))


def affected_by_8335(version: tuple[int, ...] | None) -> bool:
    return bool(versions.affected("KAFKA-8335", version))


ALL_PARTITIONS = "*"


def retention_stall(host: HostFacts, partition: str) -> str | None:
    """Why a RUNNING broker's cleaner deletes nothing of compacted partition ``partition`` (``topic-N``) until it
    restarts, from its own logs; None when it does (or the logs do not say).

    Retention of a log with ``compact`` in cleanup.policy runs only in the cleaner threads: LogManager.cleanupLogs
    takes ``cleaner.pauseCleaningForNonCompactedPartitions()`` (LogManager.scala@1.1.0 and @2.1.0:883-892), and
    each CleanerThread, after a cleaning attempt, calls ``deleteOldSegments`` on ``cleanerManager.deletableLogs()``
    (LogCleaner.scala@1.1.0:319-327 cleanOrSleep, @2.2.0:322-330 cleanFilthiestLog). So:

    * every cleaner thread dead (CLN001's "Error due to" then "Stopped", no restart since): nothing of any compacted
      topic is deleted. One surviving thread is enough: deletableLogs hands every compacted log to whichever thread
      asks (a dying thread's ``doneCleaning`` runs in a ``finally``, LogCleaner.scala@1.1.0:314-316).
    * from 2.1.0 (KIP-346) an error while cleaning a log marks its partition uncleanable instead of killing the
      thread, and deletableLogs skips uncleanable partitions (LogCleanerManager.scala@2.1.0:231-239, the same at
      3.7.1:253-263); the mark lives in memory (``uncleanablePartitions``) until the broker restarts.

    A restart starts new threads with an empty uncleanable set: their retention deletes what expired meanwhile.
    A dynamic ``log.cleaner.*`` change also restarts dead threads (``LogCleaner.reconfigure``: shutdown, startup;
    CLN001 then sees their "Starting" line), but keeps the uncleanable set (it lives in the LogCleanerManager).
    """
    if host.broker_state != "running" or host.log_digest is None:
        return None
    stalls = host.cleaner_stalls
    if stalls is None:
        stalls = host.cleaner_stalls = _stalls(host)
    return stalls.get(ALL_PARTITIONS) or stalls.get(partition)


def _stalls(host: HostFacts) -> dict[str, str]:
    out: dict[str, str] = {}
    g = host.log_digest  # facts.brokerlogs.AuditDigest: read in one streamed pass at gather time
    last = {d.thread: d for d in g.deaths_list()}
    dead = sorted(t for t, d in last.items() if d.dead_now)
    threads = max(1, host.configs.broker_int("log.cleaner.threads", CLEANER_THREADS_DEFAULT))
    if dead and len(dead) >= threads:
        when = max((last[t].died_at or "" for t in dead), default="") or "an unknown time"
        out[ALL_PARTITIONS] = (
            f"every log-cleaner thread is dead ({', '.join(dead)}, the last at {when}; CLN001) and retention of "
            "topics with compact in cleanup.policy runs only in the cleaner threads (LogManager.cleanupLogs "
            "skips them): nothing of this topic is deleted until the broker restarts (or a dynamic change of a "
            "log.cleaner.* setting restarts the threads, LogCleaner.reconfigure)"
        )
    if versions.since("uncleanable_partitions", host.kafka_version) is False:
        return out
    # the partitions marked since the latest start (START_KINDS: "Kafka version" lines also come from clients,
    # not a start; the uncleanable set is in memory only)
    marked = {
        name: f"{e.get('time') or 'an unknown time'} ({e.get('file')}:{e.get('line')})"
        for name, e in g.uncleanable_since_start.items()
    }
    for name, where in marked.items():
        out[name] = (
            f"the broker marked {name} uncleanable at {where} (KIP-346: an error while cleaning it) and the "
            "cleaner skips uncleanable partitions for retention too (LogCleanerManager.deletableLogs): nothing "
            "of it is deleted until the broker restarts"
        )
    return out


def default_message_max_bytes(version: tuple[int, ...] | None) -> int:
    """KafkaConfig.MessageMaxBytes: 1000000 + LOG_OVERHEAD before 2.5.0, 1024 * 1024 + LOG_OVERHEAD since."""
    return 1_048_588 if versions.has("message_max_bytes_1mib", version, unknown=True) else 1_000_012


@slotted(frozen=True)
class CleanerBuffers:
    initial: int  # ioBufferSize of one Cleaner
    maximum: int  # max(topic max.message.bytes, broker message.max.bytes)
    topic_max: int
    broker_max: int
    io_buffer_size: int
    threads: int

    def growth(self) -> list[int]:
        """Buffer capacities a cleaner goes through before it throws: initial, doubled, ..., maximum."""
        caps = [self.initial]
        while caps[-1] < self.maximum:
            caps.append(min(caps[-1] * 2, self.maximum))
        return caps

    @property
    def certain_fatal_run(self) -> int:
        """A run of discarded batches at least this long kills an affected cleaner wherever it lies in the
        segment: up to one buffer is lost to the alignment of the first read, then every read that finds only
        discarded batches doubles the buffer, and the read at ``maximum`` throws."""
        caps = self.growth()
        return caps[0] + sum(caps)

    def to_dict(self) -> dict[str, int]:
        return {
            "initial_buffer": self.initial, "max_buffer": self.maximum, "topic_max_message_bytes": self.topic_max,
            "broker_message_max_bytes": self.broker_max, "log_cleaner_io_buffer_size": self.io_buffer_size,
            "log_cleaner_threads": self.threads, "certain_fatal_run_bytes": self.certain_fatal_run,
        }  # fmt: skip


def cleaner_buffers(host: HostFacts, topic_config: TopicConfig) -> CleanerBuffers:
    """The buffers of an affected cleaner for one topic, from the broker's configs and the topic's."""
    cfg = host.configs
    version = host.kafka_version
    # the dynamic broker configs first: the cleaner is rebuilt with them (Configs.broker_int)
    io = cfg.broker_int("log.cleaner.io.buffer.size", IO_BUFFER_SIZE_DEFAULT)
    threads = max(1, cfg.broker_int("log.cleaner.threads", CLEANER_THREADS_DEFAULT))
    broker_max = cfg.broker_int("message.max.bytes", default_message_max_bytes(version))
    if topic_config is not None and topic_config.sources.get("max.message.bytes") not in (None, "default"):
        topic_max = int(topic_config.values["max.message.bytes"])
    else:
        topic_max = broker_max  # the topic default is the broker's message.max.bytes
    initial = io // threads // 2  # Scala Int division, as in CleanerThread
    return CleanerBuffers(initial, max(topic_max, broker_max), topic_max, broker_max, io, threads)


@slotted
class Replay:
    """What ``Cleaner.cleanInto`` of an affected version does with one source segment."""

    fatal: bool = False
    fatal_position: int | None = None  # start of the read that threw
    fatal_offset: int | None = None  # base offset of the first batch of that read
    growths: list[int] = field(default_factory=list)  # capacities grown to, in order
    reads: int = 0
    bytes: int = 0

    def to_dict(self) -> dict[str, object]:
        return {
            "fatal": self.fatal, "fatal_position": self.fatal_position, "fatal_offset": self.fatal_offset,
            "growths": self.growths, "reads": self.reads, "bytes": self.bytes,
        }  # fmt: skip


def replay_clean_into(path: str, initial: int, maximum: int) -> Replay:
    """Replay LogCleaner.cleanInto @1.1.0 over a segment, batch headers only.

    Each iteration reads ``capacity`` bytes from ``position``; ``MemoryRecords.filterTo`` walks the complete
    batches in them; ``position += bytesRead`` (complete batches, kept or discarded); when no message of a
    retained batch was read (``messagesRead == 0``) the buffers grow, or the cleaner throws when they are
    already at the maximum. Assumption (the state in which seed 001's cleaner died): every control batch is
    discarded (its transaction's data is compacted away and the segment is past the delete horizon, i.e.
    cleaned with "discarding deletes"), every other batch contributes its records (an empty batch, as
    KAFKA-8335 leaves them, contributes none). Aborted data, also discarded, is not modelled.
    """
    r = Replay()
    cap = initial
    chunk_start = 0  # position of the current read
    chunk_first: int | None = None
    messages = 0
    in_chunk = 0

    def close_chunk(first_offset: int | None) -> bool:
        nonlocal cap
        r.reads += 1
        if messages == 0:
            if cap >= maximum:
                r.fatal, r.fatal_position, r.fatal_offset = True, chunk_start, first_offset
                return True
            cap = min(cap * 2, maximum)
            r.growths.append(cap)
        return False

    with LogBuffer.open(path) as buf:
        for b in BatchScanner(buf, verify_crc=False):
            end = b.position + b.size
            while end > chunk_start + cap:  # this batch is not complete in the current read
                if close_chunk(chunk_first if in_chunk else b.base_offset):
                    return r
                chunk_start = b.position  # position += bytesRead: the batches read are contiguous
                messages = in_chunk = 0
                chunk_first = None
            if in_chunk == 0:
                chunk_first = b.base_offset
            in_chunk += 1
            if not b.is_control:
                messages += b.records_count if b.records_count is not None else 1
            r.bytes = end
        if in_chunk:
            close_chunk(chunk_first)
    return r


def safe_replay(path: str, initial: int, maximum: int) -> Replay | None:
    try:
        return replay_clean_into(path, initial, maximum)
    except (EngineError, OSError):
        return None


__all__ = [
    "CleanerBuffers", "Replay", "affected_by_6854", "affected_by_8335", "cleaner_buffers",
    "default_message_max_bytes", "replay_clean_into", "safe_replay",
]  # fmt: skip
