"""Producer-state snapshots (``<offset>.snapshot``) the next start cannot read, and what it does instead.

Kafka source (apache/kafka), the same in every release from 1.1 to 4.x: loading a partition rebuilds its producer
state (``Log.loadProducerState``/``rebuildProducerState``, LogLoader from 3.0) through
``ProducerStateManager.truncateAndReload``, which first deletes unread every snapshot above the log end offset or at
or below the log start offset, then ``loadFromSnapshot`` reads the latest snapshot left. A snapshot that
``readSnapshot`` refuses (a version other than 1, a CRC-32C that does not match, a struct that does not parse:
``CorruptSnapshotException``) is logged ("Failed to load producer snapshot from '<path>': ...", WARN) and deleted,
and the next older one is tried; with none left the state is rebuilt from the log start offset. The partition then
re-reads its segments from that offset to the log end (no index is rebuilt, nothing is truncated): the start
takes longer, nothing is lost. (ProducerStateManager.scala@1.1.1:543-565, @2.8.2:605-627 and truncateAndReload
@2.8.2:656-662, readSnapshot @2.8.2:381-417; storage/.../internals/log/ProducerStateManager.java@3.5.2:302-321,
@3.7.1:330-349 and :393-409, readSnapshot @3.7.1:657-695; trunk of 2024-10-25:297-316.) The broker reads the
snapshots of every partition it loads, after a clean stop too (the latest snapshot exists, so the clean-shutdown
shortcut of ``rebuildProducerState`` does not apply). Not modelled: a topic on a message format before v2 (no
producer state is loaded from snapshots).

Standard library only.
"""

from __future__ import annotations

from kafka_ops.engine.compat import slotted
from kafka_ops.engine.errors import EngineError, FormatError
from kafka_ops.engine.snapshot import read_snapshot
from kafka_ops.facts.model import PartitionFacts

DELETED_AT_LOAD, KEPT = "deleted_at_load", "kept"


@slotted
class CorruptSnapshot:
    path: str
    topic: str
    partition: int
    log_dir: str
    error: str  # what the reader found (no content)
    rebuilt_from: int  # the offset the producer state is rebuilt from
    from_snapshot: str | None  # the older snapshot loaded instead, or None (rebuilt from the log start)
    reread_bytes: int  # the segments' bytes at or above the segment that holds rebuilt_from
    fate: str = DELETED_AT_LOAD
    reason: str | None = None

    def to_dict(self) -> dict[str, object]:
        return {
            "path": self.path, "topic": self.topic, "partition": self.partition, "error": self.error,
            "fate": self.fate, "rebuilt_from": self.rebuilt_from, "from_snapshot": self.from_snapshot,
            "reread_bytes": self.reread_bytes, "reason": self.reason,
        }  # fmt: skip


# a snapshot holds ~40-60 bytes per producer: a file above this is not read into the audit's memory (hostile
# input in a log dir the broker user controls), and is taken as read, as an unreadable one is
MAX_SNAPSHOT_BYTES = 64 << 20


def _snapshot_files(pf: PartitionFacts) -> list[tuple[int, str, int]]:
    """(offset, path, size) of the partition's producer snapshots, newest first."""
    out = []
    files = [s.snapshot for s in pf.part.segments if s.snapshot is not None] + [
        f for f in pf.part.other_files if f.path.endswith(".snapshot")
    ]
    for f in files:
        path = f.path
        name = path[path.rfind("/") + 1 : -len(".snapshot")]  # os.path.basename(path) without ".snapshot"
        if f.is_dir or not (name.isascii() and name.isdigit()):
            continue
        out.append((int(name), path, f.size))
    return sorted(set(out), reverse=True)


def _corrupt(path: str, size: int) -> str | None:
    """Why ``readSnapshot`` throws CorruptSnapshotException for this file, or None when it reads."""
    if size > MAX_SNAPSHOT_BYTES:
        return None
    try:
        snap = read_snapshot(path, entries=False)  # whether it reads, not what it holds
    except FormatError as e:
        return e.reason
    except EngineError:
        return None  # unreadable: an IOException, not a corrupt snapshot (the plan's PERM001 rule)
    return None if snap.crc_valid else "its CRC-32C does not match (CRC is no longer valid)"


def corrupt_snapshots(pf: PartitionFacts) -> list[CorruptSnapshot]:
    """The snapshots the next start reads, finds corrupt and deletes (newest first; empty on a healthy partition:
    one small file read per partition)."""
    if not pf.part.segments:
        return []
    log_start = pf.log_start if pf.log_start is not None else pf.part.segments[0].base_offset
    end = pf.log_end_offset
    bad: list[tuple[str, str]] = []
    good: tuple[int, str] | None = None
    for off, path, size in _snapshot_files(pf):
        if off <= log_start or (end is not None and off > end):
            continue  # deleted unread by truncateAndReload
        why = _corrupt(path, size)
        if why is None:
            good = (off, path)
            break
        bad.append((path, why))
    if not bad:
        return []
    start = good[0] if good is not None else log_start
    from_seg = max((s.base_offset for s in pf.part.segments if s.base_offset <= start), default=0)
    reread = sum(s.log.size for s in pf.part.segments if s.base_offset >= from_seg and s.log is not None)
    source = f"the older snapshot {good[1]}" if good is not None else f"the log start offset {start}"
    out = []
    for path, why in bad:
        c = CorruptSnapshot(
            path, pf.part.topic, pf.part.partition, pf.log_dir.path, why, start,
            good[1] if good is not None else None, reread,
        )  # fmt: skip
        c.reason = (
            f"ProducerStateManager.readSnapshot throws CorruptSnapshotException ({why}): the start logs "
            f"'Failed to load producer snapshot from {path}', deletes it and rebuilds the producer state from "
            f"{source}, re-reading the segments from offset {start} ({reread} bytes); nothing is lost"
        )
        out.append(c)
    return out
