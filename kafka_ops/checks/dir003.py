"""DIR003: entries of a log dir that stop the broker from starting (critical), and leftovers it cleans up or
keeps at start (info).

Fatal (apache/kafka snapshot 1eb7644):
* a sub-directory of a log dir root that ``LocalLog.parseTopicPartitionName`` rejects (no ``-``; a ``-delete``,
  ``-future`` or ``-stray`` name not matching ``^(\\S+)-(\\S+)\\.(\\S+)-<suffix>``; an empty topic or partition; a
  partition that is not an int), ``lost+found`` the classic one. ``LogManager.loadLogs`` parses every
  sub-directory but ``remote-log-index-cache`` while listing the logs to load; the KafkaException is not an
  IOException, so it is not turned into an offline dir: it fails the broker's start-up.
* the same topic-partition in two log dirs (or two ``-future`` dirs of it): ``LogManager.loadLog`` throws
  IllegalStateException("Duplicate log directories for <tp> are found in both <a> and <b>. ..."), rethrown from
  ``loadLogs``: start-up fails.
* KRaft: ``__cluster_metadata-0`` in a log dir (with a meta.properties) other than the metadata log dir:
  ``KafkaRaftServer.initializeLogDirs`` throws KafkaException("Found unexpected metadata location in data
  directory ...").

Leftovers (info), with what the next start does with them:
* ``<tp>.<uuid>-delete`` dir: a partition deleted asynchronously; loaded without recovery (LogLoader skips
  ``recoverLog`` for it), queued by ``LogManager.loadLog`` -> ``addLogToBeDeleted`` and removed whole by the
  ``kafka-delete-logs`` task, first run 30 s after the start (``log.initial.task.delay.ms`` from 3.9), once
  the broker's ``file.delete.delay.ms`` (60 s) has passed; no retention runs on it (the plan lists its
  segments ``deleted_by: delete_dir``; kafka_ops.broker.suffixed_dirs cites the source per release).
* ``<tp>.<uuid>-future`` dir: the destination of an unfinished intra-broker move (``alterReplicaLogDirs``); loaded
  as a future log, the move resumes and the future replica replaces the current one when it has caught up; when the
  partition's current dir is not on the host, the broker creates it empty, truncates the future log to offset 0
  and makes it the partition's log: critical, its records are lost (kafka_ops.broker.suffixed_dirs.future_moves,
  seen on lab brokers 2.2.1 to 4.3.1).
* ``<tp>.<uuid>-stray`` dir (KRaft, 3.6.1+, KAFKA-15605): a replica the broker found it no longer hosts; before
  3.6.1 the name does not parse ('<uuid>-stray' is not an int partition) and the broker exits (critical);
  from 3.6.1 loaded as a stray log
  ("Loaded stray log: ...") and never deleted by the broker ("Move aside stray partitions, don't delete them",
  ``LogManager.asyncDelete``): it holds disk space until an operator removes it.
* in a partition dir, ``LogLoader.removeTempFilesAndCollectSwapFiles``: ``*.deleted`` files are deleted
  ("Deleting stray temporary file"); ``*.cleaned`` are deleted; a ``*.swap`` is renamed into place after the
  segments it replaces are deleted ("Found log file ... from interrupted swap operation, which is recoverable
  from .swap files by renaming."), unless its base offset is >= the smallest ``.cleaned`` offset (an unfinished
  segment split, KAFKA-6264, 2.0+; which .swap files, per release: kafka_ops.broker.leftovers): then it is
  deleted. The next_start plan lists each file deleted at load (``leftovers``, ``deleted_at_load``). Every one
  must be readable (``canRead``) or the dir goes offline ("Could not read file", PERM001). The loader goes by
  the suffix, whatever the rest of the name; a ``.cleaned`` (2.0+) or ``.swap`` name that does not start with an
  offset ``Long.parseLong`` reads throws NumberFormatException and the broker exits (critical; which names, per
  release: kafka_ops.broker.leftovers).
* ``*.tmp`` at the root: an interrupted ``CheckpointFile.write`` / ``PropertiesUtils.writePropertiesFile``
  (``<file>.tmp``, fsync, atomic rename); never read; the next write of that file truncates and reuses it
  (``new FileOutputStream(tempPath)``), the real file holds the previous version.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

from kafka_ops.broker import leftovers, strays
from kafka_ops.broker.startup import duplicate_partition_dirs
from kafka_ops.checks.base import Finding, check
from kafka_ops.engine import versions
from kafka_ops.engine.shell import q, qs
from kafka_ops.facts.context import Context
from kafka_ops.facts.model import HostFacts, LogDirFacts, PartitionFacts
from kafka_ops.units import human_bytes

MAX_LISTED = 50

_KIND_TEXT = {
    "delete": (
        "partition dir(s) pending asynchronous deletion (a deleted topic or a moved replica, renamed "
        "<tp>.<uuid>-delete by LogManager.asyncDelete)",
        "At the next start the broker loads them without recovery (LogLoader skips recoverLog for a -delete dir) "
        "and without retention, queues them (LogManager.loadLog -> addLogToBeDeleted) and the kafka-delete-logs "
        "task removes each dir whole at its first run (30 s after the start; log.initial.task.delay.ms from 3.9) "
        "or once the broker's file.delete.delay.ms (60 s by default) has passed, whichever is later ('Deleted log "
        "for partition ...'; the next_start plan lists their segments as deleted_by delete_dir). Their files must still be readable by the broker (LogLoader checks "
        "canRead, PERM001).",
        "Nothing to do: the broker deletes them. If disk space is needed before the broker starts, they can be "
        "removed by hand with the broker stopped: rm -rf {paths}.",
    ),
    "future": (
        "partition dir(s) of an unfinished intra-broker move (alterReplicaLogDirs, e.g. kafka-reassign-partitions "
        "with log_dirs), renamed <tp>.<uuid>-future",
        "At the next start the broker loads each one as the partition's future log (LogManager.loadLog -> "
        "futureLogs); the move resumes (ReplicaAlterLogDirsThread) and the future replica replaces the current one "
        "when it has caught up. Until then the partition takes space twice.",
        "Nothing to do if the move is still wanted; to cancel it, run kafka-reassign-partitions --cancel (or "
        "reassign with the original log_dirs) before the start. Never delete the partition's current dir.",
    ),
    "stray": (
        "stray replica dir(s) (KRaft, 3.6.1+: replicas this broker no longer hosts, renamed <tp>.<uuid>-stray)",
        "At the next start the broker loads them as stray logs ('Loaded stray log: ...', LogManager.loadLog -> "
        "addStrayLog) and never deletes them ('Move aside stray partitions, don't delete them', "
        "LogManager.asyncDelete): they hold disk space until an operator removes them.",
        "Check that each partition is fully replicated elsewhere (kafka-topics --describe --under-replicated-"
        "partitions), then remove them with the broker stopped: rm -rf {paths}.",
    ),
}


@check(
    "DIR003",
    severity="critical",
    scope="partition,logdir,host",
    title="Log dir entries that stop the broker from starting (lost+found, foreign dirs, duplicates); leftovers",
    incident="a log dir at a filesystem's root holds lost+found: the broker refuses to start "
    "('is not in the form of topic-partition')",
)
def run(ctx: Context, subject: PartitionFacts | LogDirFacts | HostFacts) -> Iterator[Finding]:
    if isinstance(subject, PartitionFacts):
        yield from _partition_leftovers(ctx.host, subject)
    elif isinstance(subject, LogDirFacts):
        yield from _log_dir(ctx, subject)
    else:
        yield from _host(subject)


def _log_dir(ctx: Context, ldf: LogDirFacts) -> Iterator[Finding]:
    if not ldf.scan.exists:
        return
    for d in ldf.scan.fatal_dirs:
        name = os.path.basename(d.path)
        at_mount_root = ldf.mount is not None and ldf.mount.is_mount_point
        said = (
            f"Found directory {d.path}, '{name}' is not in the form of topic-partition or topic-partition.uniqueId-"
            f"delete (if marked for deletion).\nKafka's log directories (and children) should only contain Kafka "
            f"topic data."
        )
        if name == "lost+found" and at_mount_root:
            fix = (
                f"Do not use a filesystem's root as a log dir: with the broker stopped, create a subdirectory "
                f"(mkdir {q(ldf.path + '/kafka')}), move the log dir's content into it (everything but lost+found), chown it "
                f"to the broker user, and set log.dirs to {ldf.path}/kafka. Removing lost+found (rmdir) only lasts "
                f"until the next fsck or mklost+found recreates it."
            )
        else:
            fix = (
                f"With the broker stopped, move {d.path} out of the log dir (mv {q(d.path)} /var/tmp/), or, if it is "
                f"partition data under a wrong name, rename it to <topic>-<partition>."
            )
        yield run.finding(
            f"{d.path} is a directory the broker cannot parse as a partition: at start LogManager.loadLogs calls "
            f"UnifiedLog.parseTopicPartitionName on every sub-directory of {ldf.path} and throws KafkaException "
            f"'{said.replace(chr(10), ' ')}' The exception is not an IOException, so the dir is not just taken offline: the broker does "
            f"not start."
            + (
                f" {ldf.path} is a mount point, whose root holds lost+found."
                if at_mount_root and name == "lost+found"
                else ""
            ),
            fix,
            path=d.path,
            details={"name": name, "mount_point": at_mount_root},
        )
    # -future dirs without their current dir: the resumed move empties them (suffixed_dirs; a stray's never moves)
    lost = {m.path: m for m in strays.future_moves(ctx.host) if m.lost and m.log_dir == ldf.path}
    for m in lost.values():
        tp = f"{m.topic}-{m.partition}"
        yield run.finding(
            f"{m.path} is {m.reason}.",
            f"Before the start, with the broker stopped, rename it to the partition's own name so that the broker "
            f"loads it as the current log (mv {q(m.path)} {q(os.path.join(ldf.path, tp))}), or restore the "
            f"partition's current dir; run the move again afterwards if it is still wanted.",
            severity="critical",
            path=m.path,
            log_dir=ldf.path,
            topic=m.topic,
            partition=m.partition,
            details={"kind": "future", "current": None},
        )
    # partition dirs with a suffix, from the names (no need to scan them)
    by_kind: dict[str, list[str]] = {}
    # a stray -future dir never moves: DIR006 says what happens to it
    judged = {s.path for s in strays.find(ctx.host)}
    for path, pname in ldf.scan.partition_names:
        if path in lost or path in judged:
            continue
        if pname.kind in _KIND_TEXT:
            by_kind.setdefault(pname.kind, []).append(path)
    for kind, paths in sorted(by_kind.items()):
        what, does, fix = _KIND_TEXT[kind]
        if kind == "stray" and versions.since("stray_dirs", ctx.host.kafka_version) is False:
            yield run.finding(
                f"{ldf.path} holds {len(paths)} -stray dir(s) ({', '.join(os.path.basename(p) for p in paths[:5])}),"
                " a name Kafka knows from 3.6.1 (KAFKA-15605): this broker's LocalLog.parseTopicPartitionName "
                "takes '<uuid>-stray' as the partition number, which is not an int, and throws KafkaException "
                "'... is not in the form of topic-partition ...': the broker does not start.",
                f"With the broker stopped, move them out of the log dir (mv {qs(paths[:5])} /var/tmp/) after checking "
                "that each partition is fully replicated elsewhere.",
                path=paths[0],
                details={"kind": kind, "count": len(paths), "paths": paths[:MAX_LISTED]},
            )
            continue
        yield run.finding(
            f"{ldf.path} holds {len(paths)} {what}: {', '.join(os.path.basename(p) for p in paths[:5])}"
            + (f" and {len(paths) - 5} more" if len(paths) > 5 else "")
            + f". {does}",
            fix.format(paths=qs(paths[:5]))
            + (
                f" Then the other {len(paths) - 5} (the finding's details list them)."
                if len(paths) > 5
                else ""
            ),
            severity="info",
            path=paths[0],
            details={"kind": kind, "count": len(paths), "paths": paths[:MAX_LISTED]},
        )
    tmps = [f for f in ldf.scan.root_files if f.path.endswith(".tmp")]
    if tmps:
        names = [os.path.basename(f.path) for f in tmps]
        yield run.finding(
            f"{ldf.path} holds {len(tmps)} leftover temporary file(s) of an interrupted write: {', '.join(names)}. "
            f"The broker writes a checkpoint or meta.properties as <file>.tmp, fsyncs it and renames it over the file "
            f"(CheckpointFile.write, PropertiesUtils.writePropertiesFile, Utils.atomicMoveWithFallback): a .tmp left "
            f"behind means the broker stopped (or the disk filled) in between, so the real file holds the previous "
            f"version (an older recovery point means more recovery: SHUT001). The broker never reads a .tmp; its next "
            f"write of that file truncates and reuses it, which fails, taking the log dir offline, if the broker user "
            f"cannot write it (PERM001).",
            f"Nothing to do if the broker user owns them; with the broker stopped they can be removed: "
            f"rm {qs(f.path for f in tmps)}.",
            severity="info",
            path=tmps[0].path,
            details={"files": [f.path for f in tmps], "bytes": sum(f.size for f in tmps)},
        )


def _partition_leftovers(h: HostFacts, pf: PartitionFacts) -> Iterator[Finding]:
    left = pf.part.leftovers
    if not left:
        return
    bad = leftovers.unparseable(h, pf)  # the plan's rule: the broker exits
    if bad is not None:
        path, why = bad
        yield run.finding(
            f"{why}. Every partition of every log dir waits on it: the broker does not start.",
            f"With the broker stopped, move the file out of the log dir (mv {q(path)} /var/tmp/): it is not a "
            f"file the broker wrote under that name (its name does not start with an offset).",
            path=path,
            topic=pf.part.topic,
            partition=pf.part.partition,
        )
    kinds: dict[str, list[str]] = {}
    for f in left:
        kinds.setdefault(f.path.rsplit(".", 1)[-1], []).append(f.path)
    # the .swap files of an unfinished split: the plan's rule, per release (kafka_ops.broker.leftovers)
    min_cleaned, split = leftovers.unfinished_split(h, pf)
    says = []
    if "deleted" in kinds:
        says.append(
            f"{len(kinds['deleted'])} .deleted file(s) (segments retention or compaction had scheduled for deletion "
            f"file.delete.delay.ms after; the broker stopped first): deleted at load ('Deleting stray temporary file')"
        )
    if "cleaned" in kinds:
        says.append(
            f"{len(kinds['cleaned'])} .cleaned file(s) (output of an interrupted cleaning): deleted at load"
        )
    if "swap" in kinds:
        swaps = kinds["swap"]
        says.append(
            f"{len(swaps)} .swap file(s) (a cleaned or split segment being swapped in): renamed into place after the "
            f"segments they replace are deleted ('Found log file ... from interrupted swap operation'), "
            + (
                f"except {len(split)} at or above the smallest .cleaned offset {min_cleaned}, an unfinished segment "
                f"split that is deleted (KAFKA-6264, 2.0+)"
                if split
                else "completing the interrupted swap"
            )
        )
    size = sum(f.size for f in left)
    yield run.finding(
        f"partition dir {pf.part.path} holds {len(left)} leftover file(s) ({human_bytes(size)}) that the next start "
        f"cleans up (LogLoader.removeTempFilesAndCollectSwapFiles): "
        + "; ".join(says)
        + ". The broker user must be "
        "able to read them (canRead, else 'Could not read file' takes the log dir offline: PERM001). The "
        "next_start plan lists each file deleted at load (leftovers).",
        "Nothing to do: the broker handles them at start. Do not delete a .swap by hand: it may be the only copy of "
        "the segment's cleaned data.",
        severity="info",
        path=left[0].path,
        topic=pf.part.topic,
        partition=pf.part.partition,
        details={k: v[:MAX_LISTED] for k, v in kinds.items()} | {"bytes": size},
    )


def _host(h: HostFacts) -> Iterator[Finding]:
    for name, prev, path in duplicate_partition_dirs(h):
        tp = f"{name.topic}-{name.partition}"
        if name.kind == "future":
            said = f"Duplicate log directories found: {path}, {prev}"
        else:
            said = (
                f"Duplicate log directories for {tp} are found in both {path} and {prev}. It is likely because "
                f"log directory failure happened while broker was replacing current replica with future replica. "
                f"Recover broker from this failure by manually deleting one of the two directories for this "
                f"partition. It is recommended to delete the partition in the log directory that is known to have "
                f"failed recently."
            )
        yield run.finding(
            f"partition {tp} has a {'future ' if name.kind == 'future' else ''}dir in two log dirs: {prev} and "
            f"{path}. At start LogManager.loadLog throws IllegalStateException '{said}' and the broker does not "
            f"start.",
            f"With the broker stopped, compare the two copies (kafka-ops dump, or the log end offsets and mtimes) and "
            f"move the stale one out of log.dirs (mv {q(path)} /var/tmp/) — in KRaft keep the one in the dir the "
            f"controller has assigned the replica to (kafka-log-dirs --describe on a running cluster).",
            path=path,
            log_dir=os.path.dirname(path),
            topic=name.topic,
            partition=name.partition,
            details={"first": prev, "second": path, "kind": name.kind},
        )
    from kafka_ops.broker.meta import misplaced_metadata_logs

    for ldf, path, meta_dir in misplaced_metadata_logs(h):
        yield run.finding(
            f"{path} is the KRaft metadata log, but the metadata log dir is {meta_dir}: the broker does not "
            f"start (KafkaRaftServer.initializeLogDirs: 'Found unexpected metadata location in data directory "
            f"`{path}` (the configured metadata directory is {meta_dir}).').",
            f"Set metadata.log.dir to the dir that really holds the metadata log ({ldf.path}), or, with the "
            f"broker stopped, move {path} out of {ldf.path} if it is a stale copy.",
            path=path,
            log_dir=ldf.path,
            details={"metadata_log_dir": meta_dir},
        )


__all__ = ["run"]
