"""DIR001: a log dir that is not on a filesystem of its own: on the root filesystem, on a memory-backed one, or
missing (the broker would create it wherever its parent lives).

The rule (docs/DIR001.md), from the log dir's mount (``MountFacts``: the longest mount point of
/proc/self/mountinfo that contains the log dir's real path):
1. if an expected mount point was given for this log dir (``AuditOptions.expected_mounts``, ``{log dir: mount
   point}``), the log dir must be on exactly that mount; ``/`` there means "the root filesystem is intended" and
   silences rule 2 (a lab or CI host). Otherwise:
2. critical when the log dir's filesystem is the one mounted at ``/``: the broker fills the OS disk, and a disk
   that failed to mount leaves the broker writing there;
3. critical when it is tmpfs/ramfs: its content is gone at the next reboot;
4. a log dir that is itself a mount point, or any directory below a dedicated mount (``/data/kafka`` on
   ``/data``), is fine;
5. critical when the log dir does not exist: at start ``LogManager.createAndValidateLogDirs`` creates it with
   ``dir.mkdirs()`` on whatever filesystem holds its parent, which is the root filesystem when the disk meant to
   hold it did not mount.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

from kafka_ops.checks.base import Finding, check, human_bytes
from kafka_ops.facts.collect import LogDirFacts

MEMORY_FS = {"tmpfs", "ramfs"}


@check(
    "DIR001",
    severity="critical",
    scope="logdir",
    title="Log dir not on a filesystem of its own (root filesystem, tmpfs, or missing)",
    incident="seed 000: the broker's data lives on volumes mounted at deploy time; a volume that does not mount "
    "leaves the log dir on the root filesystem",
)
def run(ctx, ldf: LogDirFacts) -> Iterator[Finding]:  # type: ignore[no-untyped-def]
    expected_all = getattr(ctx.host.options, "expected_mounts", None) or {}
    expected = expected_all.get(ldf.path)
    if expected is None and ldf.mount is not None:
        expected = expected_all.get(ldf.mount.path)
    if not ldf.scan.exists:
        anc = ldf.parents[-1].path if ldf.parents else "/"
        yield run.finding(
            f"log dir {ldf.path} does not exist. At start the broker creates it (LogManager.createAndValidateLogDirs: "
            f"'Log directory {ldf.path} not found, creating it.', dir.mkdirs()) on whatever filesystem holds {anc}"
            + (f", not on the expected mount {expected}" if expected and expected != "/" else "")
            + ": when the disk meant to hold it did not mount, that is the root filesystem, and the broker starts "
            "with an empty log dir (ZooKeeper mode writes a new meta.properties and re-replicates or, for "
            "partitions with no other replica, recreates them empty; KRaft refuses to start: DIR002).",
            f"Mount the filesystem meant for it before starting the broker (findmnt {os.path.dirname(ldf.path)}; "
            f"mount -a; check /etc/fstab or the mount unit), and make the broker's unit wait for it: "
            f"RequiresMountsFor={ldf.path} in a drop-in of the broker unit.",
            path=ldf.path,
            details={"exists": False, "deepest_existing_ancestor": anc, "expected_mount": expected},
        )
        return
    m = ldf.mount
    if m is None:
        return
    where = f"{m.mount_point} ({m.fstype} {m.source})"
    space = (
        f"; {human_bytes(m.free_bytes)} free of {human_bytes(m.total_bytes)}"
        if m.free_bytes is not None and m.total_bytes is not None
        else ""
    )
    details = {**m.to_dict(), "expected_mount": expected}
    unit = f"RequiresMountsFor={ldf.path}"
    if expected is not None:
        if os.path.normpath(expected) == m.mount_point:
            return
        yield run.finding(
            f"log dir {ldf.path} is on the filesystem mounted at {where}, not on the expected mount {expected}: "
            f"{expected} is not mounted (or {ldf.path} is not below it), so the broker reads and writes another "
            f"disk{' — the root filesystem' if m.on_root_fs else ''} ({m.fstype} {m.source}{space}).",
            f"Stop the broker if it runs, mount {expected} (findmnt {expected}; mount {expected}), check that "
            f"{ldf.path} is then on it (findmnt -T {ldf.path}), and add {unit} to the broker unit so that it never "
            f"starts without it.",
            path=ldf.path,
            details=details,
        )
        return
    if m.fstype == "unknown" and m.source == "unknown":
        yield run.finding(
            f"could not tell which filesystem holds log dir {ldf.path}: /proc/self/mountinfo was not readable.",
            "Run the audit where /proc is mounted, or check by hand: findmnt -T " + ldf.path,
            severity="info",
            path=ldf.path,
            details=details,
        )
        return
    if m.on_root_fs:
        yield run.finding(
            f"log dir {ldf.path} is on the root filesystem ({m.fstype} {m.source} mounted at /{space}). The broker's data "
            f"shares the OS disk: when it fills up, the OS and the broker fail together (a full log dir takes the "
            f"dir offline: IOException 'No space left on device' -> LogDirFailureChannel; with no dir left the "
            f"broker halts). And if {ldf.path} was meant to be on a disk of its own, that disk is not mounted: the "
            f"broker is writing to the root filesystem instead.",
            f"Put the log dir on a filesystem of its own: with the broker stopped, mount the data disk (e.g. at "
            f"{os.path.dirname(ldf.path) if os.path.dirname(ldf.path) != '/' else '/data'}), move the data onto it "
            f"keeping ownership (rsync -aHAXS), point log.dirs at a subdirectory of the mount (not the mount point "
            f"itself: lost+found, DIR003), and add {unit} to the broker unit. If the root filesystem is intended "
            f"(a test host), say so: --expect-mount {ldf.path}=/.",
            path=ldf.path,
            details=details,
        )
        return
    if m.fstype in MEMORY_FS:
        yield run.finding(
            f"log dir {ldf.path} is on {m.fstype} mounted at {m.mount_point} ({m.source}{space}): memory-backed, its partitions, "
            f"checkpoints and meta.properties are gone at the next reboot.",
            f"Move the log dir to a disk-backed filesystem mounted for it, and add {unit} to the broker unit.",
            path=ldf.path,
            details=details,
        )


__all__ = ["run"]
