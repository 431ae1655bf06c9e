"""DIR001: a log dir that is not on the disk meant for it: a configured mount that is not mounted, missing,
empty while it should hold data, memory-backed, or on the root filesystem.

The rule (docs/DIR001.md), from the log dir's mount (``MountFacts``: the longest mount point of
/proc/self/mountinfo that contains the log dir's real path) and the host's configured mounts (/etc/fstab,
systemd ``.mount`` units):
1. if an expected mount point was given for this log dir (``AuditOptions.expected_mounts``, ``{log dir: mount
   point}``), the log dir must be on exactly that mount (``/``: the root filesystem is intended). Otherwise:
2. critical when the log dir does not exist: at start ``LogManager.createAndValidateLogDirs`` creates it with
   ``dir.mkdirs()`` on whatever filesystem holds its parent;
3. critical when a configured mount covers the log dir's path (an fstab entry or a ``.mount`` unit whose mount
   point is the log dir or one of its parents, deeper than the mount the log dir is on now) but is not mounted:
   the disk meant for the data did not mount;
4. critical when it is tmpfs/ramfs: its content is gone at the next reboot;
5. critical when it is on the root filesystem and empty while it should hold data: another log dir of the
   broker holds partitions, or its own recovery-point checkpoint names partitions that are not there;
6. a warning when it simply shares the root filesystem (a single-disk VM is a supported setup): the OS and the
   broker fill the same disk;
7. a log dir that is itself a mount point, or any directory below a dedicated mount, is fine.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

from kafka_ops.checks.base import Finding, check
from kafka_ops.engine.shell import q
from kafka_ops.facts.context import Context
from kafka_ops.facts.model import HostFacts, LogDirFacts
from kafka_ops.facts.mounts import MountFacts
from kafka_ops.units import human_bytes

MEMORY_FS = {"tmpfs", "ramfs"}


@check(
    "DIR001",
    severity="critical",
    scope="logdir",
    title="Log dir not on a filesystem of its own (root filesystem, tmpfs, or missing)",
    incident="the broker's data lives on volumes mounted at deploy time; a volume that does not mount "
    "leaves the log dir on the root filesystem",
)
def run(ctx: Context, ldf: LogDirFacts) -> Iterator[Finding]:
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
            f"Mount the filesystem meant for it before starting the broker (findmnt {q(os.path.dirname(ldf.path))}; "
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
            f"Stop the broker if it runs, mount {expected} (findmnt {q(expected)}; mount {q(expected)}), check that "
            f"{ldf.path} is then on it (findmnt -T {q(ldf.path)}), and add {unit} to the broker unit so that it never "
            f"starts without it.",
            path=ldf.path,
            details=details,
        )
        return
    if m.fstype == "unknown" and m.source == "unknown":
        yield run.finding(
            f"could not tell which filesystem holds log dir {ldf.path}: /proc/self/mountinfo was not readable.",
            "Run the audit where /proc is mounted, or check by hand: findmnt -T " + q(ldf.path),
            severity="info",
            path=ldf.path,
            details=details,
        )
        return
    covering = _unmounted_configured_mount(ctx.host.configured_mounts, ldf.path, m.mount_point)
    if covering is not None:
        mp, where = covering
        yield run.finding(
            f"log dir {ldf.path} should be on the filesystem mounted at {mp} ({where}), but {mp} is not mounted: "
            f"{ldf.path} is on {where_now(m)} instead{space}. The disk meant for the data did not mount, and the "
            "broker would read and write the wrong disk (an empty log dir there: KRaft refuses to start, ZooKeeper "
            "mode starts empty and re-replicates).",
            f"Stop the broker if it runs, mount {mp} (mount {q(mp)}; journalctl -u {q(_unit_name(mp))} says why it "
            f"failed), check that {ldf.path} is then on it (findmnt -T {q(ldf.path)}), and add {unit} to the broker "
            "unit so that it never starts without it.",
            path=ldf.path,
            details={**details, "configured_mount": mp, "configured_in": where},
        )
        return
    if m.fstype in MEMORY_FS:
        yield run.finding(
            f"log dir {ldf.path} is on {m.fstype} mounted at {m.mount_point} ({m.source}{space}): memory-backed, its "
            f"partitions, checkpoints and meta.properties are gone at the next reboot.",
            f"Move the log dir to a disk-backed filesystem mounted for it, and add {unit} to the broker unit.",
            path=ldf.path,
            details=details,
        )
        return
    if m.on_root_fs:
        empty_why = _empty_but_should_hold_data(ctx.host, ldf)
        if empty_why is not None:
            yield run.finding(
                f"log dir {ldf.path} is on the root filesystem ({m.fstype} {m.source}{space}) and empty, but it should "
                f"hold data: {empty_why}. The disk meant for it is most likely not mounted, and the broker would start "
                "this log dir empty on the OS disk.",
                f"Stop the broker if it runs; find the disk meant for {ldf.path} (lsblk -f; findmnt), mount it, and "
                f"add {unit} to the broker unit. If the dir is new on purpose, --waive {q('DIR001:' + ldf.path)}.",
                path=ldf.path,
                details={**details, "empty_but_expected": empty_why},
            )
            return
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
            f"(a single-disk VM, a test host), say so: --expect-mount {q(ldf.path + '=/')}.",
            severity="warning",
            path=ldf.path,
            details=details,
        )
        return


def where_now(m: MountFacts) -> str:
    return "the root filesystem" if m.on_root_fs else f"the filesystem mounted at {m.mount_point}"


def _unit_name(mp: str) -> str:
    """systemd's unit name of a mount point (systemd-escape --path: '/' -> '-', '-' -> '\\x2d')."""
    body = mp.strip("/").replace("-", "\\x2d").replace("/", "-")
    return (body or "-") + ".mount"


def _unmounted_configured_mount(
    configured: list[tuple[str, str]], log_dir: str, current: str
) -> tuple[str, str] | None:
    """The deepest configured mount point that contains the log dir and lies deeper than the mount it is on."""
    real = os.path.realpath(log_dir)
    best: tuple[str, str] | None = None
    for mp, where in configured:
        if mp == "/" or not (real == mp or real.startswith(mp.rstrip("/") + "/")):
            continue
        if len(mp) <= len(current.rstrip("/")) or mp == current:
            continue  # the log dir is on this mount, or on a deeper one
        if best is None or len(mp) > len(best[0]):
            best = (mp, where)
    return best


def _empty_but_should_hold_data(h: HostFacts, ldf: LogDirFacts) -> str | None:
    """Why an empty log dir should hold data, or None (it holds partitions, or nothing says it should)."""
    if ldf.scan.partition_names:
        return None
    named = sorted(ldf.scan.recovery_points)
    if named:
        t, p = named[0]
        return f"its recovery-point-offset-checkpoint names {len(named)} partition(s) ({t}-{p}, ...) that are not there"
    for other in h.log_dirs:
        if other is not ldf and other.scan.partition_names:
            return f"the broker's other log dir {other.path} holds {len(other.scan.partition_names)} partition(s)"
    return None


__all__ = ["run"]
