"""Who uses a log dir now: the holder of its ``.lock`` and the processes with its files open.

Standard library only (shipped to hosts with the collector). The broker's state is decided from the audited dirs
themselves, never from "a kafka.Kafka process exists on this host": a test box, a multi-instance host or a
container host runs other brokers on other dirs.

Kafka takes the lock at start and keeps it until it exits: ``LogManager.lockLogDirs`` -> ``FileLock.tryLock``
(apache/kafka, core/src/main/scala/kafka/utils/FileLock.scala) -> ``FileChannel.tryLock``, which the JDK implements
as a POSIX ``fcntl(F_SETLK)`` record lock on Linux. The kernel lists every held lock in /proc/locks as
``<n>: POSIX ADVISORY WRITE <pid> <major>:<minor>:<inode> <start> <end>`` (waiters with ``->`` before the type);
a lock is matched to the file by device and inode, read without taking it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

PROC = "/proc"


@dataclass
class DirUse:
    """Who uses one log dir: ``lock`` is None when .lock does not exist, else whether it is held and by whom."""

    path: str
    lock_exists: bool = False
    lock_held: bool | None = None  # None: .lock or /proc/locks could not be read
    lock_pids: list[int] = field(default_factory=list)  # 0: a holder in another pid namespace
    open_pids: list[int] = field(default_factory=list)  # processes with a file under the dir open
    unreadable: str | None = None  # why the lock could not be read

    @property
    def in_use(self) -> bool:
        return bool(self.lock_held or self.open_pids)


def _lock_lines(text: str) -> list[tuple[int, str, int]]:
    """(pid, 'maj:min', inode) of each held lock of /proc/locks (waiters, marked '->', hold nothing)."""
    out = []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) < 6 or parts[1] == "->":
            continue
        dev_ino = parts[5].rsplit(":", 1)
        if len(dev_ino) != 2:
            continue
        try:
            out.append((int(parts[4]), dev_ino[0], int(dev_ino[1])))
        except ValueError:
            continue
    return out


def _dev(st: os.stat_result) -> str:
    return f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}"


def process_name(pid: int, proc: str = PROC) -> str:
    """'java (kafka.Kafka)' or the command's name: enough to say who holds a lock."""
    try:
        with open(f"{proc}/{pid}/comm", encoding="utf-8", errors="replace") as f:
            comm = f.read().strip()
        with open(f"{proc}/{pid}/cmdline", "rb") as f:
            cmd = f.read(65536)
    except OSError:
        return "?"
    return f"{comm} (kafka.Kafka)" if b"kafka.Kafka" in cmd else comm


def _holds_open(pid: int, st: os.stat_result, proc: str) -> bool:
    """Whether ``pid`` has the file of ``st`` open (a lock line with the inode but another device number, as
    btrfs subvolumes and overlayfs show them)."""
    fd_dir = f"{proc}/{pid}/fd"
    try:
        fds = os.listdir(fd_dir)
    except OSError:
        return False
    for fd in fds:
        try:
            s = os.stat(f"{fd_dir}/{fd}")
        except OSError:
            continue
        if s.st_ino == st.st_ino and s.st_dev == st.st_dev:
            return True
    return False


def lock_use(log_dir: str, proc: str = PROC) -> DirUse:
    """The holder(s) of ``<log_dir>/.lock`` per /proc/locks."""
    use = DirUse(os.path.abspath(log_dir))
    lock = os.path.join(log_dir, ".lock")
    try:
        st = os.stat(lock, follow_symlinks=False)
    except FileNotFoundError:
        use.lock_held = False
        return use
    except OSError as exc:
        use.unreadable = f"{lock}: {(exc.strerror or str(exc)).lower()}"
        return use
    use.lock_exists = True
    try:
        with open(f"{proc}/locks", encoding="ascii", errors="replace") as f:
            lines = _lock_lines(f.read())
    except OSError as exc:
        use.unreadable = f"{proc}/locks: {(exc.strerror or str(exc)).lower()}"
        return use
    dev = _dev(st)
    pids = [pid for pid, d, ino in lines if ino == st.st_ino and d == dev]
    if not pids:  # the same inode on another device number: only when that pid has this very file open
        pids = [pid for pid, _d, ino in lines if ino == st.st_ino and pid > 0 and _holds_open(pid, st, proc)]
    use.lock_held = bool(pids)
    use.lock_pids = sorted(set(pids))
    return use


def open_users(dirs: list[str], proc: str = PROC, skip: set[int] | None = None) -> dict[str, list[int]]:
    """For each dir, the pids with a file under it open (/proc/<pid>/fd links; only the link text is read)."""
    prefixes = {d: os.path.abspath(d).rstrip("/") + "/" for d in dirs}
    out: dict[str, list[int]] = {d: [] for d in dirs}
    me = os.getpid()
    try:
        pids = [int(p) for p in os.listdir(proc) if p.isdigit()]
    except OSError:
        return out
    for pid in pids:
        if pid == me or (skip and pid in skip):
            continue
        fd_dir = f"{proc}/{pid}/fd"
        try:
            fds = os.listdir(fd_dir)
        except OSError:
            continue  # gone, or another user's (not root): it cannot be seen
        found: set[str] = set()
        for fd in fds:
            try:
                target = os.readlink(f"{fd_dir}/{fd}")
            except OSError:
                continue
            for d, prefix in prefixes.items():
                if d not in found and (target.startswith(prefix) or target == prefix[:-1]):
                    found.add(d)
                    out[d].append(pid)
            if len(found) == len(prefixes):
                break
    return out


def kafka_processes(proc: str = PROC) -> list[int]:
    """Pids whose command line names kafka.Kafka (said in the reason, never used to decide)."""
    out: list[int] = []
    try:
        names = os.listdir(proc)
    except OSError:
        return out
    for p in names:
        if not p.isdigit():
            continue
        try:
            with open(f"{proc}/{p}/cmdline", "rb") as f:
                if b"kafka.Kafka" in f.read(65536):
                    out.append(int(p))
        except OSError:
            continue
    return sorted(out)


def _who(pids: list[int], proc: str) -> str:
    named = [
        f"pid {p} ({process_name(p, proc)})" if p > 0 else "a process of another pid namespace" for p in pids
    ]
    return ", ".join(named)


def decide(dirs: list[str], proc: str = PROC) -> tuple[str, str, list[DirUse]]:
    """('running' | 'stopped', why in one line, each dir's use) from the log dirs alone.

    Running: some process holds a log dir's .lock, or has a file of one open. Stopped: nobody does (a .lock
    left by a broker that was killed is held by nobody: the kernel drops POSIX locks with their process)."""
    uses = [lock_use(d, proc) for d in dirs if os.path.isdir(d)]
    held = [u for u in uses if u.lock_held]
    if held:
        why = "; ".join(f"{_who(u.lock_pids, proc)} holds {u.path}/.lock" for u in held)
        return "running", f"{why} (/proc/locks)", uses
    opened = open_users([u.path for u in uses], proc)
    for u in uses:
        u.open_pids = opened.get(u.path, [])
    using = [u for u in uses if u.open_pids]
    if using:
        why = "; ".join(f"{_who(u.open_pids, proc)} has files of {u.path} open" for u in using)
        return "running", f"{why} (/proc/<pid>/fd), though no process holds its .lock", uses
    unknown = [u.unreadable for u in uses if u.unreadable]
    others = kafka_processes(proc)
    if unknown and others:  # cannot tell: a broker that may be ours is taken as running (safer for `fix`)
        return (
            "running",
            f"could not read {', '.join(str(x) for x in unknown)} and kafka.Kafka pid(s) "
            f"{', '.join(map(str, others[:5]))} run: taken as running (give --broker-state)",
            uses,
        )
    parts = []
    stale = [u.path for u in uses if u.lock_exists and u.lock_held is False]
    if stale:
        parts.append(f"nobody holds {', '.join(p + '/.lock' for p in stale)} (/proc/locks)")
    absent = [u.path for u in uses if not u.lock_exists and u.unreadable is None]
    if absent:
        parts.append(f"no .lock in {', '.join(absent)}")
    if unknown:
        parts.append(f"could not read {', '.join(str(x) for x in unknown)}")
    if not uses:
        parts.append("no audited log dir exists")
    parts.append("no process has their files open")
    if others and uses:
        parts.append(f"kafka.Kafka pid(s) {', '.join(map(str, others[:5]))} use other dirs")
    return "stopped", "; ".join(parts), uses
