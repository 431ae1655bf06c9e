"""The lab's trials per version: which fault goes where, run once per version and shared by the tests.

* ``clean``: every per-partition fault, each in its own target topic, after a clean stop (markers kept), with
  ``log.retention.ms`` one day so that the first retention check runs on the ``retention`` topic; plus a
  ``gone-0.<uuid>-delete`` dir (a deleted topic's partition, a copy of ``retention-0``) next to ``retention-0``
  (clean and unclean), and a ``.log.swap`` of an interrupted cleaning in ``SWAP_TARGET`` (clean only);
* ``unclean``: the same faults with both ``.kafka_cleanshutdown`` markers removed (as after SIGKILL), and instead of
  the ``.swap`` a zero-filled tail (a power loss) on ``SWAP_TARGET``'s active segment: recovery truncates it;
* ``zero_tail``: that zero-filled tail after a clean stop: not recovered, read by ``readNextOffset``, and the
  broker exits (``broker.startup.stops_loading``);
* ``failed_start_markers``: that tail, and the other log dir's marker removed: which markers the failed start
  leaves for the start after it (``next_start.after_failed_start``);
* ``leftover_files``: a ``.deleted`` copy of a closed segment's ``.log`` and ``.index`` and a ``<first>.log.cleaned``
  in ``CONTROL`` after a clean stop, and ``backup.deleted`` (not a segment's name): the broker deletes them while
  loading the partition, nothing else changes;
* ``unparseable_leftover``: ``backup.log.cleaned`` in ``CONTROL``: 2.0+ parse its base offset from the name and
  exit (NumberFormatException), 1.1 deletes it; ``unparseable_swap``: ``backup.swap``, parsed (and fatal) from
  3.0 only;
* ``stray_partition``: a copy of ``CONTROL``'s partition dir as ``strayed-0`` with a fresh topic id (a topic the
  metadata does not have): KRaft 3.7+ renames it ``-stray`` and keeps it, 3.0-3.6 delete it, ZooKeeper mode keeps it;
* ``root_files``: regular files in ``data-1``'s root that are no checkpoint (a backup, one named like a partition,
  one like a -delete dir): LogManager lists sub-directories only, the broker starts and ignores them;
* ``stray_dir``: a copy of ``CONTROL``'s partition dir as ``<tp>.<uuid>-stray`` (what 3.7+ leaves of a stray):
  3.6.1+ load it as a stray log and keep it, before the name does not parse and the broker exits;
* ``index_swap``: ``<first>.index.swap``, ``.timeindex.swap`` (half the entries of the segment's own) and an empty
  ``.txnindex.swap`` in ``CONTROL``, no ``.log.swap`` (a swap interrupted after its ``.log`` was renamed in): up to
  2.8 the loader deletes that segment's indexes and keeps the swaps (rebuilt from 2.3, created empty before), from
  3.0 it renames the swaps into place (broker.swaps);
* ``reassigned_away`` (KRaft): a partition dir ``moved-0`` in ``data-1`` whose topic exists but is assigned to
  node 2 only (a broker-only lab node registered once for it; the dir is node 2's copy, with records): the state a
  replica reassigned away while the broker was down leaves. 3.3-3.6 delete it, 3.7+ rename it ``-stray``
  (broker.strays: the replica set, not only the topic id);
* ``future_dir``, ``future_dir_alone``: an interrupted intra-broker move, a copy of ``CONTROL``'s partition dir as
  ``<tp>.<uuid>-future`` in the other log dir, with the original dir kept or removed (suffixed_dirs);
* ``future_dir_renamed``: ``future_dir_alone`` after DIR003's fix, the ``-future`` dir renamed to the partition's name;
* ``stray_future_dir`` (KRaft): ``stray_partition``'s copy as ``strayed-0.<uuid>-future`` in the other log dir (an
  interrupted move of a topic deleted since): judged as a stray (3.3-3.6 deleted, 3.7.1+ renamed
  ``strayed-0.<uuid>-stray``), never moved (broker.strays);
* ``offline-<fault>``: one ownership/permission fault in a target in ``data-1`` (not the metadata dir): does
  the broker take one of its two log dirs offline, or die?
* ``offline_then_repaired``: the start after one that had data-1 offline, once the file is readable again;
* ``all_dirs_offline``: an unreadable ``.timeindex`` in both log dirs;
* ``lost_and_found``, ``meta_mismatch``: broker-level faults in ``data-1``;
* ``meta_missing``, ``dir_emptied``, ``dir_missing``, ``meta_copied``: ``data-1`` without its meta.properties
  (partitions kept), emptied, gone, or carrying ``data-0``'s file: KRaft exits (the copy from 3.7: the same
  directory.id twice), ZooKeeper mode writes a new file (creates the dir) and starts;
* ``sigkill``: SIGKILL while a producer writes, then the restart;
* ``seed003_retention``: seed 003 on topics created for it: ``compactdel`` (``compact,delete``, keyed records two
  days old, then current ones that share the last old segment; ``min.cleanable.dirty.ratio`` 1 so the cleaner
  never rewrites it) and ``sizeret`` (``retention.bytes`` three segments, current records): which segments time
  and size retention delete, and by which thread (the cleaner's for compact,delete, LogManager's for delete);
* ``checkpoint-<damage>``: one checkpoint (or the meta.properties) of ``data-1`` zero-filled, truncated, garbage,
  empty or torn after its first byte, as a power loss leaves it, or with one bad entry (CHECKPOINT_DAMAGE), a partition's leader-epoch-checkpoint or partition.metadata
  among them: does the dir go offline after the start, or does the broker exit?
* ``metadata-<file>_<damage>`` (KRaft): a file of the metadata log dir ``data-0`` damaged (METADATA_DAMAGE):
  ``bootstrap.checkpoint``, ``__cluster_metadata-0``'s partition.metadata and leader-epoch-checkpoint, its active
  segment's tail and index, its latest snapshot (written for the trial): which the start reads past, which make it
  exit, by release (broker.metadata_log);
* ``log-<older|active>_<damage>[_unclean]``, ``marker-<lock|cleanshutdown>_garbage`` (LOG_DAMAGE, issue 36 §2):
  one ``.log`` of ``CONTROL``'s partition zero-filled, emptied, cut, garbled, with a bad magic or offsets going
  backwards, after a clean stop (only the active segment's readNextOffset reads it) or an unclean one (recovery
  re-reads it); ``.lock`` and ``.kafka_cleanshutdown`` holding garbage (never read);
* ``index-<offset|time|txn>_<active|first|second>_<damage>`` (INDEX_DAMAGE, issue 36 §2): one index of data-1's
  first target damaged after a clean stop (kafka_lab.damage.index_damage: zero-filled, empty, 1 byte, cut
  mid-entry, garbage, a bad last entry, reversed, an entry past the log's end): does the start exit, rebuild the
  segment, lose the active segment's records, or delete a segment by retention (the .timeindex ones wait for it)?
* ``recovery_threads``: seed 002 with partitions of very different sizes and 4 recovery threads per dir: a
  partition ``bigpart`` (about 8 MiB written from offset 0) next to the small ones, SIGKILL right after.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kafka_lab import damage as D
from kafka_lab import faults as F
from kafka_lab.broker import LabBroker
from kafka_lab.jars import LabError
from kafka_lab.produce import Acked, TopicSpec, create_topics, produce, produce_until, writer_kind
from kafka_lab.trial import Trial, TrialResult, run_trials
from kafka_lab.versions import parse
from kafka_ops.engine import checkpoints as ckpt
from tests.lab.dataset import (
    OLD_MS,
    RETENTION_MS,
    RETENTION_TOPIC,
    SEGMENT_BYTES,
    TARGETS,
    TIMINGS,
    Dataset,
)

PartitionFault = Callable[[Path], F.Fault]

# fault name -> how it is planted into its target's partition dir (the target: TARGETS in this order)
PARTITION_FAULTS: dict[str, PartitionFault] = {
    "padded_timeindex": F.pad_time_index,
    "padded_timeindex_second": lambda p: F.pad_time_index(p, F.segment_bases(p)[1]),
    "padded_index": F.pad_offset_index,
    "torn_tail": F.torn_tail,
    "corrupt_batch_active": F.corrupt_batch,
    "corrupt_batch_rolled": lambda p: F.corrupt_batch(p, F.segment_bases(p)[1]),
    "deleted_indexes": F.delete_indexes,
    "deleted_timeindex": lambda p: F.delete_indexes(p, suffixes=(".timeindex",)),
    "misaligned_index": F.misaligned_index,
    "corrupt_batch_behind_recovery": F.corrupt_batch_behind_recovery,
}
CONTROL = TARGETS[len(PARTITION_FAULTS)]  # a target left alone
TARGET_OF = dict(zip(PARTITION_FAULTS, TARGETS, strict=False))
# the clean and unclean trials' <tp>.<uuid>-delete dir (a copy of the retention topic's)
DELETED_TOPIC = "gone"
SWAP_TARGET = TARGETS[
    len(PARTITION_FAULTS) + 1
]  # the clean trial's .swap leftover (sigkill's topic elsewhere)

OFFLINE_FAULTS: dict[str, PartitionFault] = {
    "unreadable_timeindex": F.unreadable_time_index,
    "padded_timeindex_root_owned": F.pad_time_index_root_owned,
    "read_only_log": F.read_only_log,
    "root_owned_partition_dir": F.root_owned_partition_dir,
}

# power-loss damage to a checkpoint of data-1 (not the metadata log dir): name -> plant
CheckpointDamage = Callable[[Dataset, LabBroker], F.Fault]
_DAMAGES = (D.zero_filled, D.truncated, D.garbage, D.empty)
# the log dir's own checkpoints (issue 19 §3: each zero-filled, truncated, garbage and empty)
_LOG_DIR_CHECKPOINTS = {
    "recovery_point": ckpt.RECOVERY_POINT,
    "log_start": ckpt.LOG_START,
    "replication": ckpt.REPLICATION,
    "cleaner": ckpt.CLEANER,
}
CHECKPOINT_DAMAGE: dict[str, CheckpointDamage] = {
    **{
        f"{what}_{how.__name__}": lambda ds, b, file=file, how=how, what=what: D.log_dir_checkpoint(
            b.log_dirs[1], file, how, f"{what}_{how.__name__}"
        )
        for what, file in _LOG_DIR_CHECKPOINTS.items()
        for how in _DAMAGES
    },
    **{
        f"leader_epoch_{how.__name__}": lambda ds, b, how=how: D.leader_epoch_checkpoint(
            partition_dir(ds, b, offline_target(ds)), how, f"leader_epoch_{how.__name__}"
        )
        for how in _DAMAGES
    },
    # the second log dir's meta.properties (its broker.id / node.id, cluster.id, directory.id)
    **{
        f"meta_properties_{how.__name__}": lambda ds, b, how=how: D.damage_file(
            b.log_dirs[1] / "meta.properties", how, f"meta_properties_{how.__name__}"
        )
        for how in _DAMAGES
    },
    # a partition's topic id file (2.8+): up to 3.2.0 the broker exits, then the dir goes offline; empty: a
    # NullPointerException at load on every release (kafka_ops.broker.failure_channel)
    **{
        f"partition_metadata_{how.__name__}": lambda ds, b, how=how: D.partition_metadata(
            partition_dir(ds, b, offline_target(ds)), how, f"partition_metadata_{how.__name__}"
        )
        for how in _DAMAGES
    },
    # another topic id than the metadata's for a live topic (KRaft: a stray by its id, broker.strays)
    "partition_metadata_other_id": lambda ds, b: D.other_topic_id(partition_dir(ds, b, offline_target(ds))),
    # a well-formed line whose id Uuid.fromString refuses (IllegalArgumentException): the exit on every release
    "partition_metadata_short_id": lambda ds, b: D.short_topic_id(partition_dir(ds, b, offline_target(ds))),
    # none at all (KRaft 3.7.1+: a log without a topic id is a stray)
    "partition_metadata_missing": lambda ds, b: D.missing_partition_metadata(
        partition_dir(ds, b, offline_target(ds))
    ),
    # the latest producer snapshot (every release: deleted at load, the state rebuilt from the older one)
    **{
        f"producer_snapshot_{how.__name__}": lambda ds, b, how=how: D.producer_snapshot(
            partition_dir(ds, b, offline_target(ds)), how, f"producer_snapshot_{how.__name__}"
        )
        for how in (D.zero_filled, D.truncated, D.garbage)
    },
    # KRaft's quorum-state in the metadata log dir (data-0): up to 3.7 cleared at the start, from 3.8 the exit
    **{
        f"quorum_state_{how.__name__}": lambda ds, b, how=how: D.quorum_state(
            b.log_dirs[0], how, f"quorum_state_{how.__name__}"
        )
        for how in (D.zero_filled, D.garbage, D.empty, D.truncated, D.one_byte)
    },
    # issue 36 §2's other damages an operator meets (`make lab` only, CI_REPRESENTATIVES): a file torn after its
    # first byte, and one bad entry in a checkpoint that has entries in the dataset (the recovery points of data-1,
    # the partition's epoch; log-start and cleaner checkpoints have none there)
    **{
        f"{what}_one_byte": lambda ds, b, file=file, what=what: D.log_dir_checkpoint(
            b.log_dirs[1], file, D.one_byte, f"{what}_one_byte"
        )
        for what, file in _LOG_DIR_CHECKPOINTS.items()
        if what != "cleaner"  # empty in the dataset: its first byte is no byte
    },
    **{
        f"{what}_bad_entry": lambda ds, b, file=file, what=what: D.log_dir_checkpoint(
            b.log_dirs[1], file, D.bad_entry, f"{what}_bad_entry"
        )
        # replication-offset-checkpoint's bad entry is not planted: on 3.7.2 the broker's ListOffsets for the
        # lab's read-back never answered within its timeout (KafkaTimeoutError in kafka_lab.observe.offsets, twice),
        # which stops the version's whole run; the harness must learn to record that first
        for what, file in _LOG_DIR_CHECKPOINTS.items()
        if what == "recovery_point"
    },
    **{
        f"leader_epoch_{how.__name__}": lambda ds, b, how=how: D.leader_epoch_checkpoint(
            partition_dir(ds, b, offline_target(ds)), how, f"leader_epoch_{how.__name__}"
        )
        for how in (D.one_byte, D.bad_entry)
    },
    "meta_properties_one_byte": lambda ds, b: D.damage_file(
        b.log_dirs[1] / "meta.properties", D.one_byte, "meta_properties_one_byte"
    ),
    "partition_metadata_one_byte": lambda ds, b: D.partition_metadata(
        partition_dir(ds, b, offline_target(ds)), D.one_byte, "partition_metadata_one_byte"
    ),
}


# ---- issue 36 §2: the KRaft metadata log dir's own files (data-0: metadata.log.dir is the first log dir) ----
# bootstrap.checkpoint (KafkaRaftServer.initializeLogDirs reads it at every start), __cluster_metadata-0's
# partition.metadata and leader-epoch-checkpoint (KafkaMetadataLog.apply's UnifiedLog, its own LogDirFailureChannel),
# its active segment and index (recovered in full at every start), its latest snapshot (read at the raft client's
# start from 3.8, KRaftControlRecordStateMachine): trial ``metadata-<name>``, KRaft only (SINCE)
MetadataDamage = Callable[[Dataset, LabBroker], F.Fault]
_MP = D.METADATA_PARTITION


def _metadata_snapshot(b: LabBroker, count: int = 1) -> Path:
    """Make the broker write a snapshot of its metadata log (metadata.log.max.snapshot.interval.ms 1 s, KIP-876:
    the generator fires at the next publish once the interval passed; an idle quorum writes NoOpRecords every
    500 ms), stop it cleanly, and give the latest snapshot's path (not 4.x's bootstrap snapshot at offset 0)."""
    key = "metadata.log.max.snapshot.interval.ms"
    b.set_properties(**{key.replace(".", "__"): 1000})
    b.start()
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            snaps = [p for p in (b.log_dirs[0] / _MP).glob("*.checkpoint") if not p.name.startswith("0" * 20)]
            if len(snaps) >= count:
                break
            time.sleep(0.5)
        else:
            raise LabError(f"{b.version}: no metadata snapshot within 60 s")
    finally:
        b.stop()
        b.extra.pop(key, None)
        b._write_configs()
    return D.latest_metadata_snapshot(b.log_dirs[0])


def _snapshot_damage(how: D.Damager, name: str) -> MetadataDamage:
    def plant(ds: Dataset, b: LabBroker) -> F.Fault:
        snap = _metadata_snapshot(b)
        f = D.damage_file(snap, how, name)
        f.detail["log_dir"] = str(b.log_dirs[0])
        return f

    return plant


# ===================================================================== LOG_DAMAGE (issue 36 §2, segment .log)
# Content damage to one segment's .log of CONTROL's partition, its indexes kept (kafka_lab.damage.LOG_DAMAGES):
# ``log-<older|active>_<damage>`` after a clean stop (recovery point at the log end: LogLoader.recoverLog does not
# run, only the active segment's readNextOffset reads the .log at load), ``..._unclean`` with the marker of its
# log dir removed (and, for the older segment, the partition's recovery point at 0, so recovery re-reads it);
# ``marker-lock_garbage``, ``marker-cleanshutdown_garbage``: the log dir's .lock and .kafka_cleanshutdown holding
# garbage (opened by name only). The rule: kafka_ops/broker/startup.py and docs/fidelity.md's section.
LogDamage = Callable[[Dataset, LabBroker], list[F.Fault]]


def _log_damage(where: str, damage: str, *, unclean: bool = False) -> LogDamage:
    def plant(ds: Dataset, b: LabBroker) -> list[F.Fault]:
        pdir = partition_dir(ds, b, CONTROL)
        name = f"log-{where}_{damage}" + ("_unclean" if unclean else "")
        out = [D.segment_log(pdir, where, D.LOG_DAMAGES[damage], name)]
        if unclean:
            out.append(F.remove_clean_shutdown(pdir.parent))
            if where == "older":
                out.append(F.recovery_point_to_zero(pdir))
        return out

    return plant


def _snapshot_partial(ds: Dataset, b: LabBroker) -> F.Fault:
    """A snapshot the broker was writing when it stopped: ``<offset>-<epoch>.checkpoint.part`` after the latest,
    garbage (recoverSnapshots deletes it at the start)."""
    latest = _metadata_snapshot(b)
    part = latest.with_name(f"{int(latest.name[:20]) + 1:020d}{latest.name[20:]}.part")
    part.write_bytes(D.garbage(b"") * 8)
    st = latest.stat()
    os.chown(part, st.st_uid, st.st_gid)
    return F.Fault("snapshot_partial", [part], {"log_dir": str(b.log_dirs[0]), "latest": str(latest)})


def _snapshot_latest_missing(ds: Dataset, b: LabBroker) -> F.Fault:
    """Two snapshots written, the latest deleted (by hand, or lost): the older one is the latest now."""
    latest = _metadata_snapshot(b, count=2)
    latest.unlink()
    return F.Fault("snapshot_latest_missing", [latest], {"log_dir": str(b.log_dirs[0])})


METADATA_DAMAGE: dict[str, MetadataDamage] = {
    **{
        f"bootstrap_checkpoint_{how.__name__}": lambda ds, b, how=how: D.metadata_file(
            b.log_dirs[0], "bootstrap.checkpoint", how, f"bootstrap_checkpoint_{how.__name__}"
        )
        for how in _DAMAGES
    },
    **{
        f"partition_metadata_{how.__name__}": lambda ds, b, how=how: D.metadata_file(
            b.log_dirs[0], f"{_MP}/partition.metadata", how, f"partition_metadata_{how.__name__}"
        )
        for how in (D.garbage, D.empty)
    },
    **{
        f"leader_epoch_{how.__name__}": lambda ds, b, how=how: D.metadata_file(
            b.log_dirs[0], f"{_MP}/leader-epoch-checkpoint", how, f"leader_epoch_{how.__name__}"
        )
        for how in (D.garbage, D.zero_filled)
    },
    "log_truncated": lambda ds, b: D.metadata_log_cut(b.log_dirs[0]),
    "log_zero_tail": lambda ds, b: D.metadata_log_tail(b.log_dirs[0], bytes(4096), "log_zero_tail"),
    "log_garbage_tail": lambda ds, b: D.metadata_log_tail(
        b.log_dirs[0], D.garbage(b"") * 4, "log_garbage_tail"
    ),
    "index_garbage": lambda ds, b: D.metadata_file(
        b.log_dirs[0], f"{_MP}/{D.metadata_active(b.log_dirs[0]).name[:20]}.index", D.garbage, "index_garbage"
    ),
    **{f"snapshot_{how.__name__}": _snapshot_damage(how, f"snapshot_{how.__name__}") for how in _DAMAGES},
    "snapshot_partial": _snapshot_partial,
    "snapshot_latest_missing": _snapshot_latest_missing,
}
# ---- end of issue 36 §2's metadata log dir ----
LOG_DAMAGE: dict[str, LogDamage] = {
    **{
        f"log-{where}_{damage}": _log_damage(where, damage)
        for where in ("older", "active")
        for damage in D.LOG_DAMAGES
    },
    **{
        f"log-{where}_{damage}_unclean": _log_damage(where, damage, unclean=True)
        for where, damage in (
            ("older", "zero_filled"),
            ("older", "truncated_0"),
            ("active", "truncated_0"),
            ("active", "bad_magic"),
            ("active", "offsets_backwards"),
        )
    },
    # the same backwards offsets in a segment recovered for its missing .index: the exit (no handler there)
    "log-active_offsets_backwards_no_index": lambda ds, b: [
        D.log_backwards_without_index(partition_dir(ds, b, CONTROL), "log-active_offsets_backwards_no_index")
    ],
    **{
        f"marker-{what}_garbage": lambda ds, b, file=file, what=what: [
            D.marker_content(b.workdir / ds.placement[f"{CONTROL}-0"], file, f"marker-{what}_garbage")
        ]
        for what, file in (("lock", ".lock"), ("cleanshutdown", F.CLEAN_SHUTDOWN))
    },
}
# ================================================================= end of LOG_DAMAGE
# ---- index damage (issue 36 §2) -------------------------------------------------------------------------------
# A segment's .index, .timeindex or .txnindex damaged in place (kafka_lab.damage.index_damage) in data-1's first
# target, after a clean stop: the active segment's, or an older one's (the first: retention reaches it first; a
# .txnindex the second's, whose base is above 0). name: index-<offset|time|txn>_<active|first|second>_<damage>
_INDEX_FILES = {"offset": ".index", "time": ".timeindex", "txn": ".txnindex"}
_INDEX_CELLS = {
    ("offset", "active"): ("zero_filled", "empty", "one_byte", "mid_entry", "garbage", "old_last", "out_of_order",
                           "past_end"),
    ("offset", "first"): ("zero_filled", "empty", "garbage", "past_end"),
    ("time", "active"): ("zero_filled", "empty", "mid_entry", "garbage", "old_last", "out_of_order", "past_end"),
    ("time", "first"): ("zero_filled", "empty", "mid_entry", "garbage", "old_last"),
    ("txn", "active"): ("zero_filled", "mid_entry", "garbage", "old_last", "past_end"),
    ("txn", "second"): ("zero_filled", "empty", "one_byte", "garbage", "old_last"),
}  # fmt: skip
INDEX_DAMAGE: dict[str, CheckpointDamage] = {
    f"{kind}_{which}_{how}": lambda ds, b, kind=kind, which=which, how=how: D.index_damage(
        partition_dir(ds, b, offline_target(ds)), _INDEX_FILES[kind], which, how,
        f"index-{kind}_{which}_{how}",
    )
    for (kind, which), hows in _INDEX_CELLS.items()
    for how in hows
}  # fmt: skip
# ---- end of index damage ---------------------------------------------------------------------------------------


def partition_dir(ds: Dataset, b: LabBroker, topic: str) -> Path:
    return b.workdir / ds.placement[f"{topic}-0"] / f"{topic}-0"


def plant_failed_start_markers(ds: Dataset) -> Callable[[LabBroker], list[F.Fault]]:
    """The zero-filled tail of ``zero_tail`` in CONTROL's log dir (clean: the start exits while loading), and the
    other log dir's marker removed (an unclean stop there: it needs recovery)."""

    def plant(b: LabBroker) -> list[F.Fault]:
        pdir = partition_dir(ds, b, CONTROL)
        other = next(d for d in b.log_dirs if d.name != ds.placement[f"{CONTROL}-0"])
        return [F.remove_clean_shutdown(other), F.zero_filled_tail(pdir)]

    return plant


def plant_partition_faults(ds: Dataset, *, unclean: bool) -> Callable[[LabBroker], list[F.Fault]]:
    def plant(b: LabBroker) -> list[F.Fault]:
        out = []
        for name, fn in PARTITION_FAULTS.items():
            fault = fn(partition_dir(ds, b, TARGET_OF[name]))
            fault.name = name
            out.append(fault)
        # a deleted topic's partition dir the broker had not removed yet, a copy of the retention topic's (records
        # two days old): removed whole by the kafka-delete-logs task, no recovery, no retention (suffixed_dirs)
        out.append(D.delete_dir(partition_dir(ds, b, RETENTION_TOPIC), DELETED_TOPIC))
        if not unclean:  # an interrupted cleaning's .swap in a target no other fault of this trial touches
            out.append(D.swap_leftover(partition_dir(ds, b, SWAP_TARGET)))
        else:  # a power loss's zero-filled tail there instead (after a clean stop it stops the start: zero_tail)
            out.append(F.zero_filled_tail(partition_dir(ds, b, SWAP_TARGET)))
        if unclean:
            out += [F.remove_clean_shutdown(d) for d in b.log_dirs]
        return out

    return plant


def offline_target(ds: Dataset) -> str:
    return ds.targets_in("data-1")[0]


def plant_offline(ds: Dataset, fn: PartitionFault) -> Callable[[LabBroker], list[F.Fault]]:
    return lambda b: [fn(partition_dir(ds, b, offline_target(ds)))]


def plant_all_dirs_offline(ds: Dataset) -> Callable[[LabBroker], list[F.Fault]]:
    return lambda b: [
        F.unreadable_time_index(partition_dir(ds, b, ds.targets_in("data-0")[0])),
        F.unreadable_time_index(partition_dir(ds, b, ds.targets_in("data-1")[0])),
    ]


def plant_offline_then_repaired(ds: Dataset) -> Callable[[LabBroker], list[F.Fault]]:
    """Run once with an unreadable .timeindex in data-1 (the dir goes offline), stop, make it readable again:
    the trial observes the start after the repair."""

    def plant(b: LabBroker) -> list[F.Fault]:
        fault = F.unreadable_time_index(partition_dir(ds, b, offline_target(ds)))
        b.start()
        time.sleep(3)  # a pre-JBOD KRaft broker recreates the offline dir's partitions meanwhile
        b.stop()
        fault.paths[0].chmod(0o644)
        fault.name = "offline_then_repaired"
        return [fault]

    return plant


def plant_sigkill(ds: Dataset, acked: Acked) -> Callable[[LabBroker], list[F.Fault]]:
    """Start, write with an idempotent producer, SIGKILL once 500 records are acknowledged and more are in
    flight (the trial then restarts the broker)."""

    def plant(b: LabBroker) -> list[F.Fault]:
        b.start()
        stop, got = threading.Event(), Acked()
        topic = TARGETS[-1]
        writer = threading.Thread(
            target=produce_until,
            args=(b.bootstrap, topic, stop),
            kwargs={"acked": got, "kind": writer_kind(b.version)},
        )
        writer.start()
        deadline = time.monotonic() + 30
        while got.count < 500 and time.monotonic() < deadline and writer.is_alive():
            time.sleep(0.05)
        time.sleep(0.5)
        b.kill()
        stop.set()
        writer.join(60)
        acked.merge(got)
        return [
            F.Fault("sigkill", [], {"topic": topic, "acked_while_killed": got.count, "failed": got.failed})
        ]

    return plant


# seed 003's topics (created by the trial's plant, so that the other trials keep their plans): what the audit
# is told about them is what they were created with, as `kafka-configs --describe` would give it
SEED003_CONFIGS: dict[str, dict[str, object]] = {
    # the cleaner never compacts it (a ratio is cleanable when strictly above min.cleanable.dirty.ratio,
    # LogCleanerManager.grabFilthiestCompactedLog), so only retention changes its segments
    "compactdel": {"cleanup.policy": "compact,delete", "min.cleanable.dirty.ratio": "1"},
    "sizeret": {"cleanup.policy": "delete", "retention.bytes": 3 * SEGMENT_BYTES},
}


def plant_seed003(b: LabBroker) -> list[F.Fault]:
    """Start, create and fill seed 003's topics, stop cleanly. The cleaner is off meanwhile: with the trial's short
    backoff it would delete compactdel's old segments before the stop, leaving the start under test nothing to do.
    So is LogManager's retention check: the lab runs it every second (from 1 s after the start on 3.9+, whose
    initial delay is configurable), and on a loaded machine, where producing sizeret takes more than a second, it
    deleted sizeret's oldest segments down to retention.bytes during this plant, so that the start under test had
    nothing left to delete by size (the plan agreed; seen in full CI runs on 3.9.1 and 4.3.1 only). A long interval
    alone did not do (a full run of 4.3.1 on 2026-11-27 loaded sizeret-0 with logStartOffset 180): from 3.9 the
    first check comes log.initial.task.delay.ms after the start, which the lab sets to 1 s, so the plant delays
    that first check by an hour too."""
    props = b.properties()
    interval = props["log.retention.check.interval.ms"]
    delay = props.get("log.initial.task.delay.ms")
    b.set_properties(log__cleaner__enable="false", log__retention__check__interval__ms=3_600_000)
    if delay is not None:
        b.set_properties(log__initial__task__delay__ms=3_600_000)
    b.start()
    create_topics(
        b.bootstrap,
        [TopicSpec(t, configs={**c, "segment.bytes": SEGMENT_BYTES}) for t, c in SEED003_CONFIGS.items()],
    )
    old = int(time.time() * 1000) - OLD_MS
    produce(b.bootstrap, "compactdel", 200, kind="keyed", timestamp_ms=old, seed=600, flush_every=10)
    produce(b.bootstrap, "compactdel", 20, kind="keyed", seed=601, flush_every=5)
    produce(b.bootstrap, "sizeret", 400, seed=602, flush_every=10)
    b.stop()
    b.set_properties(log__cleaner__enable="true", log__retention__check__interval__ms=interval)
    if delay is not None:
        b.set_properties(log__initial__task__delay__ms=delay)
    dirs = [d / f"{t}-0" for t in SEED003_CONFIGS for d in b.log_dirs if (d / f"{t}-0").is_dir()]
    # each compactdel segment's oldest and newest batch timestamp (MaxTimestamp of its first and last batch)
    (cd,) = [d for d in dirs if d.name == "compactdel-0"]
    spans = {}
    for base in F.segment_bases(cd):
        bs = F.batches(F.segment_file(cd, base, ".log"))
        if bs:
            spans[base] = (bs[0].max_timestamp, max(x.max_timestamp for x in bs))
    return [F.Fault("seed003", dirs, {"old_ms": old, "compactdel": spans})]


REASSIGNED_TOPIC = "moved"
HELPER_NODE = 2


def plant_reassigned_away(b: LabBroker) -> list[F.Fault]:
    """Start the broker (node 1, the quorum's only controller) and a broker-only lab node 2 of the same cluster,
    create ``moved`` with its one partition on node 2 alone (a manual assignment needs a registered broker:
    ReplicationControlManager.validateManualPartitionAssignment), write to it, stop both, and copy node 2's
    ``moved-0`` into this broker's data-1: a copy of a live partition whose replica set does not hold this broker,
    which is what a reassignment away from a stopped broker leaves on it."""

    from kafka.admin import NewTopic

    from kafka_lab.produce import admin

    b.start()
    helper = LabBroker(b.version)
    try:
        helper.cluster_id = b.cluster_id
        helper.set_properties(
            **{
                "process.roles": "broker",
                "node.id": HELPER_NODE,
                "controller.quorum.voters": f"1@127.0.0.1:{b.controller_port}",
                "listeners": f"PLAINTEXT://127.0.0.1:{helper.broker_port}",
            }
        )
        helper.start()
        client = admin(b.bootstrap)
        try:
            client.create_topics(
                [NewTopic(REASSIGNED_TOPIC, replica_assignments={0: [HELPER_NODE]})], timeout_ms=30_000
            )
        finally:
            client.close()
        produce(helper.bootstrap, REASSIGNED_TOPIC, 50, seed=800)
        helper.stop()
        b.stop()
        (src,) = [
            d / f"{REASSIGNED_TOPIC}-0" for d in helper.log_dirs if (d / f"{REASSIGNED_TOPIC}-0").is_dir()
        ]
        target = F.copy_partition_dir(src, b.log_dirs[1] / src.name)
        topic_id = ckpt.read_partition_metadata(str(target / "partition.metadata"))["topic_id"]
    finally:
        helper.close()
    return [F.Fault("reassigned_away", [target], {"topic_id": topic_id, "replicas": [HELPER_NODE]})]


def plant_future_dir(ds: Dataset, *, keep_source: bool) -> Callable[[LabBroker], list[F.Fault]]:
    def plant(b: LabBroker) -> list[F.Fault]:
        src = partition_dir(ds, b, CONTROL)
        other = next(d for d in b.log_dirs if d.name != ds.placement[f"{CONTROL}-0"])
        name = "future_dir" if keep_source else "future_dir_alone"
        return [D.future_dir(src, other, keep_source=keep_source, name=name)]

    return plant


def plant_stray_future(ds: Dataset) -> Callable[[LabBroker], list[F.Fault]]:
    """``stray_partition``'s copy of ``CONTROL`` (a fresh topic id) as ``strayed-0.<uuid>-future`` in the other log
    dir: the destination of a move of a topic deleted since."""

    def plant(b: LabBroker) -> list[F.Fault]:
        import shutil

        src = partition_dir(ds, b, CONTROL)
        other = next(d for d in b.log_dirs if d.name != ds.placement[f"{CONTROL}-0"])
        fault = F.stray_partition(src)
        (copy,) = fault.paths
        target = other / f"{copy.name}.{D.FUTURE_DIR_UUID}-future"
        shutil.move(str(copy), str(target))
        fault.name, fault.paths = "stray_future_dir", [target]
        fault.detail["partition_dir"] = str(target)
        return [fault]

    return plant


def plant_future_renamed(ds: Dataset) -> Callable[[LabBroker], list[F.Fault]]:
    """``future_dir_alone`` after DIR003's fix: the ``-future`` dir renamed ``<tp>`` in its log dir (the partition
    now in the other log dir than before, as a finished move leaves it)."""

    def plant(b: LabBroker) -> list[F.Fault]:
        (fault,) = plant_future_dir(ds, keep_source=False)(b)
        (future,) = fault.paths
        target = future.parent / future.name.split(".", 1)[0]
        future.rename(target)
        fault.name, fault.paths = "future_dir_renamed", [target]
        return [fault]

    return plant


BIG_PARTITION = "bigpart"
RECOVERY_THREADS = 4


def plant_recovery_threads(b: LabBroker) -> list[F.Fault]:
    """Start, write about 8 MiB to a new partition (its recovery point stays 0: the checkpoint is written every
    log.flush.offset.checkpoint.interval.ms, 60 s), SIGKILL: its whole log is recovered at the next start."""
    b.start()
    create_topics(b.bootstrap, [TopicSpec(BIG_PARTITION, configs={"segment.bytes": SEGMENT_BYTES})])
    produce(b.bootstrap, BIG_PARTITION, 8000, seed=700)
    b.kill()
    (pdir,) = [d / f"{BIG_PARTITION}-0" for d in b.log_dirs if (d / f"{BIG_PARTITION}-0").is_dir()]
    return [F.Fault("recovery_threads", [pdir], {"threads": RECOVERY_THREADS})]


# ---- file-type damage (issue 36 §2, helper h-types) -------------------------------------------------------------
# Every file the broker opens at its start replaced by something that is not that file (kafka_lab.damage.type_damage:
# missing, root-owned 0600, a symlink to a valid copy outside the log dirs or to nothing, a FIFO, a directory), in
# data-1 (not the metadata log dir) or in its first target partition. Trial names: type-<file>_<kind>, <file> as in
# kafka_lab.matrix. A start that neither becomes ready nor exits within TYPE_START_TIMEOUT_S is "hung" (a FIFO can
# block a reader: kafka_lab.trial). The cells that other trials plant already are left out (TYPE_ALREADY).
TYPE_START_TIMEOUT_S = 60.0


def _segment(suffix: str, which: int) -> Callable[[Dataset, LabBroker], Path]:
    def where(ds: Dataset, b: LabBroker) -> Path:
        p = partition_dir(ds, b, offline_target(ds))
        return F.segment_file(p, F.segment_bases(p)[which], suffix)

    return where


def _latest_snapshot(ds: Dataset, b: LabBroker) -> Path:
    p = partition_dir(ds, b, offline_target(ds))
    snaps = sorted(p.glob("*.snapshot"), key=lambda x: x.name)
    return snaps[-1] if snaps else p / f"{F.segment_bases(p)[-1]:020d}.snapshot"


TYPE_FILES: dict[str, Callable[[Dataset, LabBroker], Path]] = {
    **{
        f"{kind}_{pos}": _segment(f".{kind}", -1 if pos == "active" else 0)
        for kind in ("log", "index", "timeindex", "txnindex")
        for pos in ("older", "active")
    },
    "snapshot": _latest_snapshot,
    "leader_epoch": lambda ds, b: partition_dir(ds, b, offline_target(ds)) / ckpt.LEADER_EPOCH,
    "partition_metadata": lambda ds, b: partition_dir(ds, b, offline_target(ds)) / ckpt.PARTITION_METADATA,
    **{what: (lambda ds, b, file=file: b.log_dirs[1] / file) for what, file in _LOG_DIR_CHECKPOINTS.items()},
    "meta_properties": lambda ds, b: b.log_dirs[1] / "meta.properties",
    "clean_shutdown": lambda ds, b: b.log_dirs[1] / ".kafka_cleanshutdown",
    "lock": lambda ds, b: b.log_dirs[1] / ".lock",
}
# planted by other trials already: offline-unreadable_timeindex, meta_missing, checkpoint-partition_metadata_missing
TYPE_ALREADY = {"timeindex_older_unreadable", "meta_properties_missing", "partition_metadata_missing"}
TYPE_DAMAGE: dict[str, CheckpointDamage] = {
    f"{what}_{kind}": lambda ds, b, what=what, kind=kind: D.type_damage(
        TYPE_FILES[what](ds, b), kind, f"type-{what}_{kind}", elsewhere=b.workdir / "elsewhere"
    )
    for what in TYPE_FILES
    for kind in D.TYPE_KINDS
    if f"{what}_{kind}" not in TYPE_ALREADY
}
# CI: at most four (each behaviour once); `make lab` runs every one on every release
TYPE_CI = {
    "type-index_active_fifo": ("3.7.2",),  # the dir offline (resizeIndexes)
    "type-clean_shutdown_directory": ("2.8.2",),  # the marker, deleted before the listing: starts
    "type-lock_symlink_dangling": ("4.3.1",),  # "Disk error while locking directory": the dir offline
    "type-recovery_point_fifo": ("3.5.2",),  # the start hangs (60 s of CI)
}
# ---- end of file-type damage -------------------------------------------------------------------------------------


# Scenarios whose outcome changes at one release: CI's default version set runs them on a release on each side
# of it that CI has (2.0: every CI release is past it, 1.1.1 is `make lab`'s; 3.0); `make lab` and any
# KAFKA_OPS_LAB_VERSIONS list run them on every release.
# the log-dir damage trials: one release per family (ZooKeeper starts; KRaft before 3.7 exits but for a copied
# meta.properties, which is the same file twice; 3.7+ exits on all four, directory ids)
_DIR_FAMILIES = ("2.8.2", "3.5.2", "3.7.2")
# the checkpoint damages CI runs on one release of each family below (the first ones the lab had); `make lab`
# runs every damage on every release
_CI_EVERY_FAMILY = {
    "recovery_point_garbage", "recovery_point_empty", "log_start_zero_filled", "replication_truncated",
    "cleaner_garbage", "leader_epoch_zero_filled",
}  # fmt: skip
# A trial the same within each family of CI releases (the full matrix, docs/fidelity.md, and the tests' own
# branches: ZooKeeper mode; KRaft before 3.7, which recreates an offline dir's partitions empty in the other dir and
# exits on their return; KRaft 3.7+, JBOD) runs in CI on one release of each family, or on one ZooKeeper and one
# KRaft release where the family makes no difference; the ZooKeeper and 3.7+ releases are taken in turn. The lab is
# most of CI's heavy pass (a fresh-clone run on 2026-11-29: 164 trials over five releases, 1,763 s of the lab
# worker's ~35 min; 128 trials, ~1,430 s, since). seed 000's own fault (offline-unreadable_timeindex), no_fault, the
# retention trio, sigkill and metadata_dir_offline stay on every CI release.
_ZK_A, _ZK_B, _KRAFT_OLD, _KRAFT_A, _KRAFT_B = "2.2.1", "2.8.2", "3.5.2", "3.7.2", "4.3.1"
_PER_FAMILY = {
    "offline-padded_timeindex_root_owned": (_ZK_B, _KRAFT_OLD, _KRAFT_B),
    "offline-read_only_log": (_ZK_A, _KRAFT_OLD, _KRAFT_A),
    "offline-root_owned_partition_dir": (_ZK_B, _KRAFT_OLD, _KRAFT_B),
    "offline_then_repaired": (_ZK_B, _KRAFT_OLD, _KRAFT_A),
    "all_dirs_offline": (_ZK_B, _KRAFT_OLD, _KRAFT_A),  # 3.7: the exit's cause changes
    "lost_and_found": (_ZK_B, _KRAFT_OLD, _KRAFT_B),
    "meta_mismatch": (_ZK_B, _KRAFT_OLD, _KRAFT_A),
    # the exit at load (readNextOffset into the zeros) comes before any dir is offline: the same on every release
    "zero_tail": (_ZK_A, _KRAFT_B),
    "leftover_files": (_ZK_A, _KRAFT_B),  # Log.scala up to 2.8, LogLoader from 3.0
    # KAFKA-15375 (ZooKeeper 2.8.0-3.5.1) and KRaft's halt; up to 2.7 the outcome is not compared ("depends")
    "failed_start_markers": (_ZK_B, _KRAFT_B),
    # up to 2.7 no per-dir recovery line; 4.x recovers fewer segments of the same data
    "recovery_threads": (_ZK_A, _ZK_B, _KRAFT_B),
    # kept (ZooKeeper), deleted (3.0-3.6), renamed -stray (3.7+)
    "stray_partition": (_ZK_B, _KRAFT_OLD, _KRAFT_B),
    "checkpoint-recovery_point_garbage": (_ZK_A, _KRAFT_OLD, _KRAFT_A),
    "checkpoint-recovery_point_empty": (_ZK_B, _KRAFT_B),  # starts: no dir offline
    "checkpoint-log_start_zero_filled": (_ZK_A, _KRAFT_OLD, _KRAFT_B),
    "checkpoint-replication_truncated": (_ZK_B, _KRAFT_OLD, _KRAFT_A),
    "checkpoint-cleaner_garbage": (_ZK_A, _KRAFT_OLD, _KRAFT_B),
    # the exit up to 3.2, then the dir offline
    "checkpoint-leader_epoch_zero_filled": (_ZK_B, _KRAFT_OLD, _KRAFT_A),
}
assert {f"checkpoint-{n}" for n in _CI_EVERY_FAMILY} <= set(_PER_FAMILY)
CI_REPRESENTATIVES = {
    **_PER_FAMILY,
    # power-loss damage to small files (session 13; each behaviour once, about 15 s a trial, () = `make lab` only:
    # it runs every one on every release): partition.metadata's IOException path offline (3.7.2, 4.3.1) and on
    # pre-JBOD KRaft recreated empty (3.5.2), its NPE on every release (3.7.2); the other topic id deleted (3.5.2)
    # or renamed -stray (4.3.1)
    "checkpoint-partition_metadata_zero_filled": ("4.3.1",),
    "checkpoint-partition_metadata_truncated": (),  # the zero-filled and garbage paths are the same read
    "checkpoint-partition_metadata_garbage": ("3.5.2",),
    "checkpoint-partition_metadata_empty": ("3.7.2",),
    "checkpoint-partition_metadata_other_id": ("3.5.2", "4.3.1"),
    "checkpoint-partition_metadata_missing": ("3.7.2",),
    "checkpoint-partition_metadata_short_id": ("4.3.1",),
    # CorruptSnapshotException, the same code from 1.1 to 4.x: one damage per release family
    "checkpoint-producer_snapshot_garbage": ("2.2.1",),
    "checkpoint-producer_snapshot_zero_filled": ("4.3.1",),
    "checkpoint-producer_snapshot_truncated": (),
    # quorum-state: cleared up to 3.7, the exit from 3.8
    "checkpoint-quorum_state_empty": ("3.7.2",),
    "checkpoint-quorum_state_zero_filled": (),
    "checkpoint-quorum_state_truncated": (),
    "checkpoint-quorum_state_one_byte": (),
    "checkpoint-partition_metadata_one_byte": (),
    # the metadata log dir's own files (issue 36 §2): four in CI, the rest in `make lab`
    **{f"metadata-{n}": () for n in METADATA_DAMAGE},
    "metadata-bootstrap_checkpoint_zero_filled": ("3.7.2",),
    "metadata-partition_metadata_garbage": ("3.5.2",),
    "metadata-snapshot_garbage": ("4.3.1",),
    "metadata-log_zero_tail": ("4.3.1",),
    "checkpoint-quorum_state_garbage": ("4.3.1",),
    # the other damages of the log dir's checkpoints, a partition's leader-epoch-checkpoint and the second dir's
    # meta.properties (session 14): `make lab` only; CI keeps one damage of each checkpoint on every CI release
    **{
        f"checkpoint-{n}": ()
        for n in CHECKPOINT_DAMAGE
        if n.startswith(
            ("recovery_point_", "log_start_", "replication_", "cleaner_", "leader_epoch_", "meta_")
        )
        and n not in _CI_EVERY_FAMILY
    },
    "unparseable_leftover": ("2.2.1",),
    # index .swap files: deleted indexes up to 2.8 (rebuilt from 2.3), renamed in from 3.0
    "index_swap": ("2.8.2", "3.7.2"),
    # a replica reassigned away: deleted (3.3-3.6) or renamed -stray (3.7+)
    "reassigned_away": ("3.5.2", "4.3.1"),
    # an interrupted intra-broker move: the same on every release run (2.2.1 - 4.3.1)
    "future_dir": ("2.8.2",),
    "future_dir_alone": ("3.7.2",),
    "future_dir_renamed": ("3.7.2",),
    # regular files in a log dir's root: ignored by every release (LogManager lists sub-directories only)
    "root_files": ("2.8.2", "4.3.1"),
    # a -stray dir: the exit before 3.6.1 (ZooKeeper and KRaft alike), kept from 3.6.1
    "stray_dir": ("3.5.2", "3.7.2"),
    # a -future dir of a topic the metadata does not have: deleted (3.3-3.6), renamed -stray (3.7.1+)
    "stray_future_dir": ("3.5.2", "4.3.1"),
    "unparseable_swap": ("2.8.2", "3.5.2"),
    **{name: _DIR_FAMILIES for name in ("meta_missing", "meta_copied", "dir_emptied", "dir_missing")},
    # ---- LOG_DAMAGE (issue 36 §2): `make lab` only but for these four, one per model rule: the start that reads
    # a zero-filled older segment never (a fetch fails after it), recovery keeping a batch of an unknown magic and
    # emptying a segment whose offsets go backwards at an index entry, and the log end offset falling back to the
    # active segment's base offset (kafka_ops.broker.startup.next_offset_fallback)
    **{name: () for name in LOG_DAMAGE},
    "log-older_zero_filled": ("3.5.2",),
    "log-active_bad_magic_unclean": ("3.7.2",),
    "log-active_offsets_backwards_unclean": ("2.8.2",),
    "log-active_truncated_mid_header": ("4.3.1",),
    # ---- index damage (issue 36 §2): `make lab` only but for the cells below ----
    **{f"index-{n}": () for n in INDEX_DAMAGE},
    # each behaviour once, on another family each (the same code from 2.3 to 4.x: broker.next_offset, txn_index)
    "index-offset_active_old_last": ("3.5.2",),  # readNextOffset reads a size of 2 inside a batch: the exit
    "index-offset_active_past_end": (
        "4.3.1",
    ),  # readNextOffset returns the base: the active segment's records lost
    "index-txn_second_garbage": ("2.8.2",),  # 'Unexpected aborted transaction version 127': the exit
    "index-txn_second_zero_filled": ("3.7.2",),  # last offset 0 below the base: the segment rebuilt at load
    # ---- end of index damage ----
    # file-type damage (issue 36 §2): TYPE_CI's few in CI, the rest in `make lab`
    **{f"type-{n}": TYPE_CI.get(f"type-{n}", ()) for n in TYPE_DAMAGE},
}


# Releases the lab runs a few scenarios on, not the matrix: 0.10.2.2 is seed 002's release (an unclean stop and
# the start that rebuilds its indexes); its leader-epoch, log-start-offset and producer-state files do not exist
# yet (0.11), so the other scenarios' faults have nothing to act on or mean something else there.
ONLY_SCENARIOS = {
    "0.10.2.2": ("no_fault", "clean", "unclean", "sigkill"),
    # 3.7.0 for KAFKA-16814 only: a partition dir without partition.metadata halts its start after loading
    # (3.7.1+ renames it -stray: 3.7.2 runs every scenario)
    "3.7.0": ("no_fault", "checkpoint-partition_metadata_missing"),
    # 3.6 for the strays: a -stray dir is the exit on 3.6.0 and a stray log kept on 3.6.2 (KAFKA-15605 backported
    # to 3.6.1); strays by topic id, by replica set and of a -future dir deleted, as on 3.5
    **{
        v: ("no_fault", "stray_dir", "stray_partition", "reassigned_away", "stray_future_dir")
        for v in ("3.6.0", "3.6.2")
    },
}


# trials whose file the lab's brokers before this release do not write: no partition.metadata before 2.8
# (KIP-516), and the lab's 2.8.2 (ZooKeeper mode, inter.broker.protocol.version 2.8 by default) wrote none in any
# partition dir either (2026-11-27): its prediction (the broker exits, before KAFKA-13773) rests on the source
SINCE: dict[str, tuple[int, int, int]] = {
    **{f"checkpoint-{n}": (3, 0, 0) for n in CHECKPOINT_DAMAGE if n.startswith("partition_metadata_")},
    **{f"type-{n}": (3, 0, 0) for n in TYPE_DAMAGE if n.startswith("partition_metadata_")},
    # the lab runs KRaft from 3.3 (ZooKeeper mode before: no quorum-state)
    **{f"checkpoint-{n}": (3, 3, 0) for n in CHECKPOINT_DAMAGE if n.startswith("quorum_state_")},
    # the KRaft metadata log dir's files (issue 36 §2)
    **{f"metadata-{n}": (3, 3, 0) for n in METADATA_DAMAGE},
    # KRaft judgements (strays by topic id). In ZooKeeper mode the id to compare with is ZooKeeper's, not on the
    # host: the lab's 3.2.3 did not serve t00-0 with another id (InconsistentTopicIdException at LeaderAndIsr;
    # the trial's offset query timed out, 2026-11-27), which the plan cannot know from the files
    "checkpoint-partition_metadata_other_id": (3, 3, 0),
    "checkpoint-partition_metadata_missing": (3, 3, 0),
    # the lab's KRaft (ZooKeeper mode: the controller's StopReplica, not the disk)
    "reassigned_away": (3, 3, 0),
    "stray_future_dir": (3, 3, 0),
}


def not_on(name: str, version: str) -> bool:
    """Whether trial ``name`` cannot run on ``version`` (SINCE: its file or its mode is not there)."""
    return name in SINCE and parse(version) < SINCE[name]


def skipped_in_ci(name: str, version: str) -> bool:
    """Whether this run leaves trial ``name`` out on ``version`` (CI_REPRESENTATIVES, SINCE, ONLY_SCENARIOS)."""
    if not_on(name, version) or (version in ONLY_SCENARIOS and name not in ONLY_SCENARIOS[version]):
        return True
    ci = not os.environ.get("KAFKA_OPS_LAB_VERSIONS")
    return ci and name in CI_REPRESENTATIVES and version not in CI_REPRESENTATIVES[name]


# The product's rehearsal (kafka-ops rehearse) of a trial's start, on its planted files before the real start
# (kafka_lab.rehearsal; issue 38): KAFKA_OPS_LAB_REHEARSE=all (make lab) on every trial of 2.0 and later (2.0-2.5's
# log lines: kafka_ops/rehearse/observe.py; 2.0-2.7 on the lab's Java 11, kafka_lab.broker.java), =none on none;
# unset, CI's sample: per family a dir offline and a recovery after a SIGKILL, one trial on 2.2.1 (17-19 s a
# rehearsal on a quiet 2-core machine, 20-40 s on a loaded one: 8 rehearsals, 2-5 minutes)
REHEARSED_SINCE = (2, 0)
REHEARSED_IN_CI: dict[str, tuple[str, ...]] = {
    "2.2.1": ("sigkill",),
    **{v: ("offline-unreadable_timeindex", "sigkill") for v in ("2.8.2", "3.5.2", "3.7.2")},
    "4.3.1": ("sigkill",),
}


def rehearsed(name: str, version: str) -> bool:
    """Whether this run rehearses trial ``name`` on ``version`` before its real start."""
    mode = os.environ.get("KAFKA_OPS_LAB_REHEARSE", "").strip().lower()
    if mode in ("all", "1", "yes"):
        return parse(version) >= REHEARSED_SINCE
    if mode in ("none", "0", "no"):
        return False
    return name in REHEARSED_IN_CI.get(version, ())


def run_all(ds: Dataset) -> dict[str, TrialResult]:
    """Every trial of one version (the three that wait for retention side by side, sharing the wait).
    KAFKA_OPS_LAB_TRIALS=<name>,...: only those trials (to run one scenario's tests while working on it)."""
    only = {n for n in os.environ.get("KAFKA_OPS_LAB_TRIALS", "").split(",") if n}

    def wanted(trials: list[Trial]) -> list[Trial]:
        out = [t for t in trials if (not only or t.name in only) and not skipped_in_ci(t.name, ds.version)]
        for t in out:
            t.rehearse = rehearsed(t.name, ds.version)
        return out

    props = {"log.retention.ms": RETENTION_MS}
    began = time.monotonic()
    results: dict[str, TrialResult] = {}
    for r in run_trials(
        wanted([
            Trial(
                "clean",
                ds.saved,
                plant_partition_faults(ds, unclean=False),
                acked=ds.acked,
                properties=props,
                wait_retention=True,
            ),
            Trial(
                "unclean",
                ds.saved,
                plant_partition_faults(ds, unclean=True),
                acked=ds.acked,
                properties=props,
                wait_retention=True,
            ),
            Trial(
                # a 2 s cleaner backoff: the cleaner's second pass (its first deletes nothing) within every
                # version's watch (3.9 and later check retention 1 s after the start in the lab)
                "seed003_retention", ds.saved, plant_seed003,
                properties={**props, "log.cleaner.backoff.ms": 2000}, wait_retention=True,
                topic_configs=SEED003_CONFIGS,
            ),
        ])
    ):  # fmt: skip
        results[r.name] = r
    TIMINGS[ds.version]["clean+unclean+seed003"] = time.monotonic() - began
    singles: list[Trial] = []
    if os.geteuid() == 0:
        singles += [
            Trial(f"offline-{n}", ds.saved, plant_offline(ds, fn), acked=ds.acked)
            for n, fn in OFFLINE_FAULTS.items()
        ]
    singles += [
        Trial("no_fault", ds.saved, lambda b: []),
        Trial("offline_then_repaired", ds.saved, plant_offline_then_repaired(ds), acked=ds.acked),
        Trial("all_dirs_offline", ds.saved, plant_all_dirs_offline(ds)),
        # the metadata log dir (data-0, first of log.dirs) offline: 3.7+ KRaft halts, older KRaft and ZooKeeper
        # mode serve the other dir
        Trial(
            "metadata_dir_offline",
            ds.saved,
            lambda b: [F.unreadable_time_index(partition_dir(ds, b, ds.targets_in("data-0")[0]))],
        ),
        Trial("lost_and_found", ds.saved, lambda b: [F.lost_and_found(b.log_dirs[1])]),
        Trial("meta_mismatch", ds.saved, lambda b: [F.mismatched_meta_properties(b.log_dirs[1])]),
        Trial("meta_missing", ds.saved, lambda b: [F.log_dir_without_meta(b.log_dirs[1])]),
        Trial("meta_copied", ds.saved, lambda b: [F.copied_meta_properties(b.log_dirs[0], b.log_dirs[1])]),
        Trial("dir_emptied", ds.saved, lambda b: [F.emptied_log_dir(b.log_dirs[1])]),
        Trial("dir_missing", ds.saved, lambda b: [F.missing_log_dir(b.log_dirs[1])]),
        Trial("zero_tail", ds.saved, lambda b: [F.zero_filled_tail(partition_dir(ds, b, CONTROL))]),
        # that start after an unclean stop of the other log dir: which .kafka_cleanshutdown the failed start
        # leaves (ZooKeeper 2.8.0-3.5.1 writes one in every dir, KAFKA-15375; KRaft halts: broker.failed_start)
        Trial("failed_start_markers", ds.saved, plant_failed_start_markers(ds)),
        Trial("leftover_files", ds.saved, lambda b: [F.leftover_files(partition_dir(ds, b, CONTROL))]),
        Trial(
            "unparseable_leftover",
            ds.saved,
            lambda b: [F.unparseable_leftover(partition_dir(ds, b, CONTROL))],
        ),
        # a partition dir of a topic the metadata does not have (a copy of CONTROL's with a fresh topic id): KRaft
        # 3.7+ renames it -stray and keeps it, 3.0-3.6 delete it, ZooKeeper mode keeps it (broker.strays)
        Trial("stray_partition", ds.saved, lambda b: [F.stray_partition(partition_dir(ds, b, CONTROL))]),
        Trial("root_files", ds.saved, lambda b: [F.root_files(b.log_dirs[1])]),
        Trial("stray_dir", ds.saved, lambda b: [F.stray_dir(partition_dir(ds, b, CONTROL))]),
        Trial("index_swap", ds.saved, lambda b: [D.index_swap_leftover(partition_dir(ds, b, CONTROL))]),
        Trial("reassigned_away", ds.saved, plant_reassigned_away),
        # the move resumes after the start, within a second or two but not always before the lab's usual watch
        # ends (a 3.7.2 broker once had not replaced the current log yet): watched until the first retention check
        *[
            Trial(n, ds.saved, plant_future_dir(ds, keep_source=k), acked=ds.acked, wait_retention=True)
            for n, k in (("future_dir", True), ("future_dir_alone", False))
        ],
        # DIR003's fix for future_dir_alone: the -future dir renamed to the partition's name before the start
        Trial("future_dir_renamed", ds.saved, plant_future_renamed(ds), acked=ds.acked),
        Trial("stray_future_dir", ds.saved, plant_stray_future(ds)),
        Trial(
            "unparseable_swap",
            ds.saved,
            lambda b: [F.unparseable_leftover(partition_dir(ds, b, CONTROL), "backup.swap")],
        ),
    ]
    singles += [
        Trial(f"checkpoint-{n}", ds.saved, lambda b, fn=fn: [fn(ds, b)], acked=ds.acked)
        for n, fn in CHECKPOINT_DAMAGE.items()
    ]
    singles += [
        Trial(f"metadata-{n}", ds.saved, lambda b, fn=fn: [fn(ds, b)]) for n, fn in METADATA_DAMAGE.items()
    ]
    # LOG_DAMAGE (issue 36 §2)
    singles += [
        Trial(n, ds.saved, lambda b, fn=fn: fn(ds, b), acked=ds.acked) for n, fn in LOG_DAMAGE.items()
    ]
    # index damage (issue 36 §2): the .timeindex ones watched until the first retention check (a segment's
    # largest timestamp is its time index's last entry)
    singles += [
        Trial(
            f"index-{n}",
            ds.saved,
            lambda b, fn=fn: [fn(ds, b)],
            acked=ds.acked,
            wait_retention=n.startswith("time"),
        )
        for n, fn in INDEX_DAMAGE.items()
    ]
    singles += [
        Trial(f"type-{n}", ds.saved, lambda b, fn=fn: [fn(ds, b)], start_timeout=TYPE_START_TIMEOUT_S)
        for n, fn in TYPE_DAMAGE.items()
        if os.geteuid() == 0 or not n.endswith("_unreadable")
    ]
    singles.append(
        Trial(
            "recovery_threads", ds.saved, plant_recovery_threads,
            properties={"num.recovery.threads.per.data.dir": RECOVERY_THREADS},
        )
    )  # fmt: skip
    sigkill_acked = Acked().merge(ds.acked)
    singles.append(Trial("sigkill", ds.saved, plant_sigkill(ds, sigkill_acked), acked=sigkill_acked))
    for t in wanted(singles):
        t0 = time.monotonic()
        (r,) = run_trials([t])
        results[r.name] = r
        TIMINGS[ds.version][r.name] = time.monotonic() - t0
    _report(ds, results)
    return results


def _report(ds: Dataset, results: dict[str, TrialResult]) -> None:
    """With KAFKA_OPS_LAB_REPORT=<dir>: every observation as JSON (the source of tests/lab/OBSERVED.md)."""
    out = os.environ.get("KAFKA_OPS_LAB_REPORT")
    if not out:
        return
    Path(out).mkdir(parents=True, exist_ok=True)
    doc: dict[str, Any] = {"version": ds.version, "placement": ds.placement, "trials": {}}
    for name, r in results.items():
        doc["trials"][name] = {
            "start": {
                "started": r.start.started,
                "seconds": r.start.seconds,
                "exit_code": r.start.exit_code,
                "fatal": r.start.fatal,
            },
            "broker_exit": r.broker_exit,
            "markers_after": r.markers_after,
            "faults": [
                {"name": f.name, "paths": [str(p) for p in f.paths], "detail": f.detail} for f in r.faults
            ],
            "next_start": r.next_start,
            "predicted": r.predicted,
            "differences": r.differences,
            "changes": r.observation.changes,
            "created": r.observation.created,
            "view": r.view,
            "lost": r.lost,
            "unreadable": r.unreadable,
            "read_errors": r.read_errors,
            "entries": [
                f"[{e.time.isoformat()}] {e.level} "
                f"{'[' + e.partition + '] ' if e.partition else ''}{e.message}"
                + ("".join("\n    " + x for x in e.extra[:3]))
                for e in r.observation.entries
            ],
            "seconds": r.seconds,
            "rehearsal": None
            if r.rehearsal is None
            else {
                "observed": r.rehearsal.observed,
                "refused": r.rehearsal.refused,
                "real_files_changed": r.rehearsal.changed,
                "seconds": round(r.rehearsal.seconds, 1),
                "timings": (r.rehearsal.report or {}).get("timings"),
                "differences_with_the_plan": (r.rehearsal.report or {}).get("differences"),
                "differences_with_the_real_start": r.rehearsal_differences,
            },
        }
    (Path(out) / f"{ds.version}.json").write_text(json.dumps(doc, indent=1, default=str))
