"""Remediation as plans of small actions: printed by default, applied with ``apply``, undone from a journal.

Every fix is computed from the current state (so running it twice changes nothing the second time), never
touches a ``.log`` file, and writes a write-ahead journal: ``kafka-ops fix undo JOURNAL`` puts everything back
in reverse order. Standard library only.

The log dirs belong to the broker user, who may swap any name for a symlink, a hard link, a FIFO or another file
while we run as root. So every change in a log dir is made on an opened handle, never by path: directories are
opened component by component from the log dir's root with O_NOFOLLOW|O_DIRECTORY, files with
O_NOFOLLOW|O_NONBLOCK, and the handle is fstat'ed and must be the planned dev/ino and type before fchown/fchmod
or a rename relative to the opened directories. A symlink at any level is refused, a regular file with more than
one hard link is skipped (it may be another user's file), FIFOs, sockets and devices are never opened, setuid and
setgid bits are stripped from what the fix touches and never restored.

The journal is JSON lines: a header ``{"kafka_ops_journal": 2, "fix", "created", "host"}``, then per change an
intent record ``{"n", "op", "path", ...the state before and after}`` made durable (fsync) before the change, then
``{"done": n}`` or ``{"skipped": n, "why"}`` after it; undo appends ``{"undone": n}`` and at the end
``{"undo_complete": time}``. Undo checks the current state of every file against the intent and restores only what
the fix changed, so an apply or an undo killed at any point can be undone (again).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import errno
import hashlib
import itertools
import json
import os
import secrets
import shlex
import shutil
import stat as statmod
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from typing import Any

from kafka_ops.engine.compat import slotted
from kafka_ops.engine.safepath import PathRefused as FixError  # a fix's refusal is one line, as a path's
from kafka_ops.engine.safepath import check_dir, dir_ids, open_dir, others_can_write
from kafka_ops.engine.shell import q as _q

JOURNAL_DIRS = ("/var/lib/kafka-ops/journal", os.path.expanduser("~/.local/state/kafka-ops/journal"))
JOURNAL_VERSION = 2
DEFAULT_MODE = "u+rwX"  # owner rw on files, rwx on dirs (X: execute for directories, as chmod's)
SUID_SGID = statmod.S_ISUID | statmod.S_ISGID
_DIR_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_DIRECTORY | os.O_CLOEXEC
# O_NONBLOCK: a FIFO swapped in after the check opens without waiting for a writer (and fails the fstat check)
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY
BATCH_RECORDS = 5000  # intents made durable with one fsync, before the batch's changes
BATCH_SECONDS = 1.0


@slotted
class Action:
    op: str  # chown | chmod | move | write | run
    path: str
    before: Any = None
    after: Any = None
    note: str = ""
    # where the planned file is, as the walk found it: (root, path relative to root, dev, ino, "f" | "d");
    # shared by a file's chown and chmod
    ident: tuple[str, str, int, int, str] | None = None

    def describe(self) -> str:
        q = _q(self.path)
        if self.op == "chown":
            return f"chown {self.after[0]}:{self.after[1]} {q}   (was {self.before[0]}:{self.before[1]})"
        if self.op == "chmod":
            return f"chmod {self.after:04o} {q}   (was {self.before:04o})"
        if self.op == "move":
            return f"mv {q} {_q(self.after)}"
        if self.op == "write":
            state = "new file" if self.before is None else "replaces the current content"
            return f"write {q} ({state}):\n" + "\n".join(
                "    " + line for line in str(self.after).splitlines()
            )
        if self.op == "run":
            return "run " + shlex.join(self.after)
        return f"{self.op} {q}"  # pragma: no cover


@dataclass
class Plan:
    fix: str
    actions: list[Action] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    refused: str | None = None
    log_dirs: list[str] = field(default_factory=list)  # where a journal must never be (checked at apply)

    def to_dict(self) -> dict[str, Any]:
        return {
            "fix": self.fix,
            "actions": [{k: v for k, v in asdict(a).items() if k != "ident"} for a in self.actions],
            "notes": self.notes,
            "refused": self.refused,
        }


# ------------------------------------------------------------------ modes


def parse_mode(spec: str) -> Callable[[int, bool], int]:
    """A chmod mode, symbolic (``u+rwX,g+rX,o-rwx``, ``X`` execute for directories or what has an execute bit
    already) or octal (``0750``), as a function of (current mode, is a directory) to the new mode."""
    spec = spec.strip()
    if spec and all(c in "01234567" for c in spec):
        value = int(spec, 8)
        if value > 0o7777:
            raise ValueError(f"mode {spec!r}: more than four octal digits")
        return lambda _mode, _is_dir: value
    clauses: list[tuple[int, list[tuple[str, str]]]] = []
    for clause in spec.split(","):
        i = 0
        who = 0
        while i < len(clause) and clause[i] in "ugoa":
            who |= {"u": 0o4700, "g": 0o2070, "o": 0o0007, "a": 0o6777}[clause[i]]
            i += 1
        if not who:
            who = 0o6777
        ops: list[tuple[str, str]] = []
        while i < len(clause):
            if clause[i] not in "+-=":
                raise ValueError(f"mode {spec!r}: expected + - or = at {clause[i:]!r}")
            op = clause[i]
            i += 1
            perms = ""
            while i < len(clause) and clause[i] in "rwxXst":
                perms += clause[i]
                i += 1
            ops.append((op, perms))
        if not ops:
            raise ValueError(f"mode {spec!r}: clause {clause!r} has no + - or =")
        clauses.append((who, ops))

    def apply_mode(mode: int, is_dir: bool) -> int:
        for who, ops in clauses:
            for op, perms in ops:
                bits = 0
                for p in perms:
                    if p == "r":
                        bits |= 0o444
                    elif p == "w":
                        bits |= 0o222
                    elif p == "x" or (p == "X" and (is_dir or mode & 0o111)):
                        bits |= 0o111
                    elif p == "s":
                        bits |= SUID_SGID
                    elif p == "t":
                        bits |= statmod.S_ISVTX
                bits &= who | (statmod.S_ISVTX if "t" in perms else 0)
                if op == "+":
                    mode |= bits
                elif op == "-":
                    mode &= ~bits
                else:
                    mode = (mode & ~(who & 0o6777)) | bits
        return mode

    return apply_mode


# ------------------------------------------------------------------ handles


class _Tree:
    """Directories under a root opened component by component (O_NOFOLLOW|O_DIRECTORY), the last chain kept
    open so that a walk-ordered sequence of paths opens each directory once."""

    def __init__(self, root: str, create: bool = False) -> None:
        # by handle from /, a link refused where the broker user could have made it (engine.safepath); a dir we create
        # things in (the quarantine) must be root's alone
        self.fd, self.resolved = open_dir(root, write=create, create=create)
        self.root = root
        self.create = create
        self.chain: list[tuple[str, int]] = []

    def close(self) -> None:
        for _name, fd in self.chain:
            os.close(fd)
        self.chain = []
        os.close(self.fd)

    def dir_fd(self, rel_dir: str) -> int:
        """The opened directory ``rel_dir`` ("" the root). Raises OSError (ELOOP/ENOTDIR: a link or not a
        directory on the way, ENOENT: gone)."""
        parts = [p for p in rel_dir.split("/") if p] if rel_dir else []
        keep = 0
        while keep < len(self.chain) and keep < len(parts) and self.chain[keep][0] == parts[keep]:
            keep += 1
        for _name, fd in self.chain[keep:]:
            os.close(fd)
        del self.chain[keep:]
        for name in parts[keep:]:
            parent = self.chain[-1][1] if self.chain else self.fd
            if name in (".", ".."):
                raise OSError(errno.EINVAL, f"{name!r} in a journaled path")
            if self.create:
                try:
                    os.mkdir(name, 0o700, dir_fd=parent)
                except FileExistsError:
                    pass
            self.chain.append((name, os.open(name, _DIR_FLAGS, dir_fd=parent)))
        return self.chain[-1][1] if self.chain else self.fd


class _Refused:
    """A log dir that open_dir refuses now (a link since the plan): every change in it is skipped."""

    def __init__(self, why: str) -> None:
        self.why = why

    def close(self) -> None:
        pass


def _split(rel: str) -> tuple[str, str]:
    head, _, tail = rel.rpartition("/")
    return head, tail


def _open_checked(
    tree: _Tree | _Refused, rel: str, kind: str, dev: int | None, ino: int | None
) -> tuple[int, str | None]:
    """(fd, None), or (-1, why it was skipped). Never follows a link, never opens a FIFO, socket or device."""
    if isinstance(tree, _Refused):
        return -1, f"its log dir: {tree.why}, skipped"
    if rel == "":
        fd = os.dup(tree.fd)
    else:
        head, name = _split(rel)
        try:
            parent = tree.dir_fd(head)
        except FileNotFoundError:
            return -1, "gone, skipped"
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                return -1, "a symlink or not a directory on the way now, skipped"
            raise
        try:
            st = os.stat(name, dir_fd=parent, follow_symlinks=False)
        except FileNotFoundError:
            return -1, "gone, skipped"
        want = statmod.S_ISDIR if kind == "d" else statmod.S_ISREG
        if statmod.S_ISLNK(st.st_mode):
            return -1, "a symlink now, skipped"
        if not want(st.st_mode):
            return -1, "not the planned file type now, skipped"
        try:
            fd = os.open(name, _DIR_FLAGS if kind == "d" else _FILE_FLAGS, dir_fd=parent)
        except FileNotFoundError:
            return -1, "gone, skipped"
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                return -1, "a symlink now, skipped"
            raise
    st = os.fstat(fd)
    why = None
    if not (statmod.S_ISDIR if kind == "d" else statmod.S_ISREG)(st.st_mode):
        why = "not the planned file type now, skipped"
    elif ino is not None and (st.st_dev, st.st_ino) != (dev, ino):
        why = "not the planned file now (replaced), skipped"
    elif kind == "f" and st.st_nlink > 1:
        why = f"has {st.st_nlink} hard links now (may be another user's file), skipped"
    if why:
        os.close(fd)
        return -1, why
    return fd, None


# ------------------------------------------------------------------ ownership


MAX_DEPTH = 16  # Kafka's log dirs are two levels deep (log dir, partition dir); deeper trees are not walked


def _walk(root_fd: int) -> Iterator[tuple[str, os.stat_result | None, str]]:
    """(path relative to the root, lstat, kind) for the opened root and everything under it, by directory
    handles, links not followed; kind "d", "f" or what else it is ("link", "fifo", "socket", "device", and
    "replaced" or "deep" for a dir swapped while walked or more than MAX_DEPTH levels down), stat None when
    it vanished. Open fds stay bounded by the depth whatever the number of dirs: a dir's subdirs are remembered
    by name and dev/ino, and each is opened in its turn relative to its parent's fd (O_NOFOLLOW) and must be
    the dir that was listed."""
    yield "", os.fstat(root_fd), "d"
    frames: list[tuple[int, str, list[tuple[str, int, int]]]] = []  # the open chain: (fd, rel, subdirs to do)
    fd: int | None = os.dup(root_fd)
    rel = ""
    try:
        while True:
            if fd is not None:
                subdirs: list[tuple[str, int, int]] = []
                frames.append((fd, rel, subdirs))
                fd = None
                with os.scandir(frames[-1][0]) as it:
                    entries = sorted(it, key=lambda e: e.name)
                for e in entries:
                    erel = f"{rel}/{e.name}" if rel else e.name
                    try:
                        st = e.stat(follow_symlinks=False)
                    except FileNotFoundError:
                        continue  # e.g. a checkpoint .tmp that a running broker renamed meanwhile
                    m = st.st_mode
                    if statmod.S_ISDIR(m):
                        subdirs.append((e.name, st.st_dev, st.st_ino))
                        continue
                    kind = (
                        "f" if statmod.S_ISREG(m) else "link" if statmod.S_ISLNK(m)
                        else "fifo" if statmod.S_ISFIFO(m) else "socket" if statmod.S_ISSOCK(m) else "device"
                    )  # fmt: skip
                    yield erel, st, kind
                del entries
                subdirs.reverse()  # popped from the end: depth first, in name order
            if not frames:
                return
            pfd, prel, todo = frames[-1]
            if not todo:
                os.close(pfd)
                frames.pop()
                continue
            name, dev, ino = todo.pop()
            erel = f"{prel}/{name}" if prel else name
            if len(frames) >= MAX_DEPTH:
                yield erel, None, "deep"
                continue
            try:
                fd = os.open(name, _DIR_FLAGS, dir_fd=pfd)
            except FileNotFoundError:
                continue
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    yield erel, None, "link"
                    continue
                raise
            st = os.fstat(fd)
            if (st.st_dev, st.st_ino) != (dev, ino):
                os.close(fd)
                fd = None
                yield erel, None, "replaced"
                continue
            rel = erel
            yield erel, st, "d"
    finally:
        if fd is not None:
            os.close(fd)
        for f, _rel, _todo in frames:
            os.close(f)


_LEFT = {
    "replaced": "replaced by another dir while walked, left alone",
    "deep": f"more than {MAX_DEPTH} levels deep (no Kafka log dir is), not walked, left alone",
}


def open_log_dir(path: str) -> tuple[int, str]:
    """A log dir opened as safepath says (a link refused where the broker user could have made it, as the log
    dir itself in a parent the broker user owns); (fd, the path it resolved to)."""
    return open_dir(path, what="log dir")


def resolve_log_dirs(paths: list[str]) -> list[str]:
    """What each log dir resolves to, opened by handle; FixError (one line) for a link the broker user could have
    made. Checked before anything is changed."""
    out = []
    for p in paths:
        fd, resolved = open_log_dir(p)
        os.close(fd)
        out.append(resolved)
    return out


def ownership_changes(
    log_dirs: list[str],
    uid: int,
    gid: int,
    mode: str = DEFAULT_MODE,
    note: Callable[[str], None] | None = None,
) -> Iterator[list[Action]]:
    """The ownership fix as it walks, one file at a time: its chown and/or chmod (one list per file that needs a
    change); what it leaves alone goes to ``note``. Nothing is kept: a caller can stream it."""
    new_mode = parse_mode(mode)
    say = note or (lambda _m: None)
    for top in log_dirs:
        try:
            top_fd, root = open_log_dir(top)
        except FixError as exc:
            if exc.why.endswith(("no such directory", "not a directory")):
                say(f"{_q(top)}: {exc.why}, skipped")
                continue
            raise
        try:
            yield from _own_tree(top_fd, root, uid, gid, new_mode, say)
        finally:
            os.close(top_fd)


def _own_tree(
    top_fd: int,
    root: str,
    uid: int,
    gid: int,
    new_mode: Callable[[int, bool], int],
    say: Callable[[str], None],
) -> Iterator[list[Action]]:
    for rel, st, kind in _walk(top_fd):
        path = f"{root}/{rel}" if rel else root
        if kind in _LEFT:
            say(f"{_q(path)}: {_LEFT[kind]}")
            continue
        if kind not in ("f", "d"):
            say(f"{_q(path)}: a {kind}, not followed and left alone")
            continue
        assert st is not None
        if kind == "f" and st.st_nlink > 1:
            say(f"{_q(path)}: {st.st_nlink} hard links (it may be another user's file), skipped")
            continue
        ident = (root, rel, st.st_dev, st.st_ino, kind)
        out = []
        if (st.st_uid, st.st_gid) != (uid, gid):
            out.append(Action("chown", path, (st.st_uid, st.st_gid), (uid, gid), ident=ident))
        cur = statmod.S_IMODE(st.st_mode)
        want = new_mode(cur, kind == "d") & ~SUID_SGID
        if want != cur:
            out.append(Action("chmod", path, cur, want, ident=ident))
        if out:
            yield out


def plan_ownership(log_dirs: list[str], uid: int, gid: int, mode: str = DEFAULT_MODE) -> Plan:
    """chown every file and dir under the log dirs to the broker user and give them ``mode`` (a chmod mode;
    default owner rw on files, rwx on dirs), setuid/setgid stripped. Links, FIFOs, sockets, devices and files
    with more than one hard link are left alone, with a note."""
    plan = Plan("ownership", log_dirs=list(log_dirs))
    for group in ownership_changes(log_dirs, uid, gid, mode, plan.notes.append):
        plan.actions.extend(group)
    return plan


def apply_ownership_streaming(
    log_dirs: list[str],
    uid: int,
    gid: int,
    mode: str = DEFAULT_MODE,
    journal_dir: str | None = None,
    on_change: Callable[[Action], None] | None = None,
    on_skip: Callable[[str], None] | None = None,
    on_note: Callable[[str], None] | None = None,
) -> tuple[str | None, int]:
    """The ownership fix planned and applied as it walks, a batch at a time (memory flat in the number of files):
    each batch's intents are durable before its changes. ``on_change`` sees each change as it is planned.
    Returns (the journal, None when nothing needed a change; the number of changes planned)."""
    groups = ownership_changes(log_dirs, uid, gid, mode, on_note)
    first = next(groups, None)
    if first is None:
        return None, 0
    count = 0

    def seen() -> Iterator[list[Action]]:
        nonlocal count
        for g in itertools.chain([first], groups):
            count += len(g)
            if on_change:
                for a in g:
                    on_change(a)
            yield g

    try:
        j = _Journal.create(
            journal_dir or default_journal_dir(log_dirs), "ownership", {"host": os.uname().nodename}, log_dirs
        )
    except JournalFull as exc:
        raise JournalFull(f"the journal's disk is full ({exc}): nothing was changed") from exc
    try:
        _apply_ownership(seen(), j, on_skip or (lambda _m: None), lambda _d, _t: None, None)
        with contextlib.suppress(JournalFull):
            j.sync()
    except JournalFull:
        if j.durable == j.header_len:
            os.unlink(j.path)
        raise
    finally:
        j.close()
    return j.path, count


# ------------------------------------------------------------------ systemd


def plan_systemd_dropin(
    unit_path: str, settings: dict[str, str], reload: bool = True, name: str = "kafka-ops.conf"
) -> Plan:
    """A drop-in ``<unit>.d/kafka-ops.conf`` with the given [Service] settings, then daemon-reload."""
    plan = Plan("systemd")
    unit = os.path.basename(unit_path)
    # the unit's dir (and the drop-in dir, when there is one) opened by handle and root's alone: a drop-in is run
    # by systemd as root, so one in a dir the broker user can write is refused
    try:
        ufd, unit_dir = open_dir(
            os.path.dirname(os.path.abspath(unit_path)), write=True, what="the unit's dir"
        )
    except FixError as exc:
        plan.refused = str(exc)
        return plan
    dropin_dir = os.path.join(unit_dir, f"{unit}.d")
    path = os.path.join(dropin_dir, name)
    content = (
        "# written by kafka-ops fix systemd: see `kafka-ops audit` (SYSD001-SYSD003)\n[Service]\n"
        + "".join(f"{k}={v}\n" for k, v in settings.items())
    )
    before: str | None = None
    try:
        if os.path.lexists(dropin_dir):
            dfd, _resolved = open_dir(dropin_dir, write=True, what="the drop-in dir")
            try:
                cur = _read_file(dfd, name)
            finally:
                os.close(dfd)
            if cur is False:
                plan.refused = f"{_q(path)}: not a regular file: not replacing it"
                return plan
            before = cur  # type: ignore[assignment]
    except FixError as exc:
        plan.refused = str(exc)
        return plan
    finally:
        os.close(ufd)
    if before != content:
        plan.actions.append(Action("write", path, before, content))
        if reload and shutil.which("systemctl"):
            plan.actions.append(
                Action(
                    "run", "systemctl", None, ["systemctl", "daemon-reload"], "make systemd read the drop-in"
                )
            )
        elif reload:
            plan.notes.append("systemctl not found: run `systemctl daemon-reload` on the broker host")
    return plan


# ------------------------------------------------------------------ indexes


def plan_quarantine_indexes(segments: list[tuple[str, int]], quarantine: str, log_dirs: list[str]) -> Plan:
    """Move the index files of these (partition dir, base offset) segments to a quarantine folder.

    Both ``.index`` and ``.timeindex`` (and ``.txnindex``) go: a missing ``.index`` makes LogLoader.loadSegmentFiles
    call ``recoverSegment``, which rebuilds all three from the records (LogSegment.recover). Moving only the
    ``.timeindex`` would make the broker create it empty and use the ``.log``'s mtime instead (LogSegment.sanityCheck).
    """
    plan = Plan("indexes", log_dirs=list(log_dirs))
    q = os.path.abspath(quarantine)
    roots = [os.path.abspath(d) for d in log_dirs]
    # a directory in a log dir that is not topic-partition stops the broker (LocalLog.parseTopicPartitionName);
    # one the broker user can write is its own to fill: the rule of every dir a fix writes in (engine.safepath)
    refused = check_dir(q, dir_ids(roots), "--quarantine")
    if refused:
        plan.refused = refused
        return plan
    seen = set()
    trees: dict[str, _Tree] = {}
    try:
        for part_dir, base in sorted(set(segments)):
            part_dir = os.path.abspath(part_dir)
            root = next((d for d in roots if part_dir.startswith(d.rstrip("/") + "/")), None)
            if root is None:
                plan.notes.append(f"{_q(part_dir)}: not in a log dir, skipped")
                continue
            if root not in trees:
                try:
                    trees[root] = _Tree(root)
                except FixError as exc:
                    plan.refused = str(exc)
                    return plan
            rel_dir = part_dir[len(root.rstrip("/")) + 1 :]
            resolved = trees[root].resolved
            for suffix in (".index", ".timeindex", ".txnindex"):
                name = f"{base:020d}{suffix}"
                src = f"{resolved}/{rel_dir}/{name}"
                if src in seen:
                    continue
                seen.add(src)
                try:
                    st = os.stat(name, dir_fd=trees[root].dir_fd(rel_dir), follow_symlinks=False)
                except FileNotFoundError:
                    continue
                except OSError as exc:
                    if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                        plan.notes.append(f"{_q(part_dir)}: a symlink or not a directory, skipped")
                        break
                    raise
                if not statmod.S_ISREG(st.st_mode):
                    plan.notes.append(f"{_q(src)}: not a regular file (a link?), left alone")
                    continue
                if st.st_nlink > 1:
                    plan.notes.append(f"{_q(src)}: {st.st_nlink} hard links, left alone")
                    continue
                dst = os.path.join(q, os.path.basename(resolved), rel_dir, name)
                plan.actions.append(
                    Action(
                        "move", src, None, dst, "the broker rebuilds it from the .log at start",
                        ident=(resolved, f"{rel_dir}/{name}", st.st_dev, st.st_ino, "f"),
                    )
                )  # fmt: skip
    finally:
        for t in trees.values():
            t.close()
    return plan


# ------------------------------------------------------------------ the journal


def default_journal_dir(log_dirs: list[str] | None = None) -> str:
    """The first of JOURNAL_DIRS that can hold journals (made when missing), as journal_dir() checks it."""
    whys = []
    for d in JOURNAL_DIRS:
        try:
            fd, resolved = open_dir(
                d, write=True, create=True, avoid=dir_ids(log_dirs or []), what="journal dir"
            )
        except (FixError, OSError) as exc:
            whys.append(str(exc))
            continue
        os.close(fd)
        return resolved
    raise FixError(f"no journal dir can be used ({'; '.join(whys)}): give --journal-dir")


def journal_dir_problem(path: str, log_dirs: list[str] | None = None) -> str | None:
    """Why ``path`` may not hold undo journals (None: it may): the rule of every dir a fix writes in (engine.safepath):
    it and every dir on the way writable by root alone, and outside every log dir (a second `fix ownership`
    would chown a journal there). Undo trusts what a journal says, so the broker user must not be able to
    plant one, or rename the dir away and put its own in its place."""
    return check_dir(path, dir_ids(log_dirs or []), "--journal-dir")


_ENCODE = json.JSONEncoder(
    separators=(",", ":"), default=list
).encode  # one encoder: json.dumps makes one a call


class JournalFull(FixError):
    pass


class _Journal:
    """Append-only JSON lines; ``sync`` makes everything written durable, or, when the disk is full, cuts the
    file back to what was durable and raises JournalFull."""

    def __init__(self, path: str, fd: int) -> None:
        self.path = path
        self.fd = fd
        self.pending: list[str] = []
        self.durable = os.lseek(fd, 0, os.SEEK_END)
        self.header_len = 0

    @classmethod
    def create(
        cls, jdir: str, fix: str, header: dict[str, Any], log_dirs: list[str] | None = None
    ) -> _Journal:
        dfd, resolved = open_dir(
            jdir, write=True, create=True, avoid=dir_ids(log_dirs or []), what="--journal-dir"
        )
        try:
            return cls._create_in(dfd, resolved, fix, header)
        finally:
            os.close(dfd)

    @classmethod
    def _create_in(cls, dfd: int, jdir: str, fix: str, header: dict[str, Any]) -> _Journal:
        stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%S.%fZ")
        # an unpredictable name, made with O_EXCL|O_NOFOLLOW in a dir only root can write: nobody can have put a
        # file or link there first
        name = f"{stamp}-{fix}-{secrets.token_hex(6)}.jsonl"
        path = os.path.join(jdir, name)
        # the header is written under a temporary name and renamed: a journal always starts with its header
        tmp = f".{name}.{secrets.token_hex(6)}.new"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open(tmp, flags, 0o600, dir_fd=dfd)
        j = cls(path, fd)
        j.add({"kafka_ops_journal": JOURNAL_VERSION, "fix": fix, "created": stamp, **header})
        try:
            j.sync()
        except JournalFull:
            os.close(fd)
            os.unlink(tmp, dir_fd=dfd)
            raise
        try:
            os.stat(name, dir_fd=dfd, follow_symlinks=False)
        except FileNotFoundError:
            pass
        else:
            os.close(fd)
            os.unlink(tmp, dir_fd=dfd)
            raise FixError(f"{path}: exists already")
        os.rename(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
        j.header_len = j.durable
        os.fsync(dfd)  # the journal's name is durable too
        return j

    def add(self, rec: dict[str, Any]) -> None:
        self.pending.append(_ENCODE(rec))

    def add_line(self, line: str) -> None:
        self.pending.append(line)

    def sync(self) -> None:
        if not self.pending:
            return
        data = ("\n".join(self.pending) + "\n").encode()
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(self.fd, view) :]
            os.fsync(self.fd)
        except OSError as exc:
            if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
                raise
            try:
                os.ftruncate(self.fd, self.durable)
            except OSError:
                pass
            raise JournalFull(f"{self.path}: {os.strerror(exc.errno)}") from exc
        self.durable += len(data)
        self.pending = []

    def close(self) -> None:
        os.close(self.fd)


# ------------------------------------------------------------------ apply


def _full_message(fix: str, jpath: str, done: int, total: int | None, exc: Exception) -> str:
    of = f" of {total}" if total else ""
    what = (
        "nothing was changed"
        if done == 0
        else f"{done}{of} change(s) were made and journaled: undo them with `kafka-ops fix undo {_q(jpath)}`"
    )
    return f"the journal's disk is full ({exc}): stopped before the next change; {what}"


def apply(
    plan: Plan,
    journal_dir: str | None = None,
    on_skip: Callable[[str], None] | None = None,
    on_progress: Callable[[int, int], None] | None = None,
) -> str | None:
    """Apply a plan; returns the journal path (None when there was nothing to do). Files that changed since the
    plan (gone, replaced, a link now) are skipped, and reported through ``on_skip``; ``on_progress(done, total)``
    (actions) after each batch."""
    if plan.refused:
        raise FixError(plan.refused)
    if not plan.actions:
        return None
    jdir = journal_dir or default_journal_dir(plan.log_dirs)
    try:
        j = _Journal.create(
            jdir, plan.fix, {"host": os.uname().nodename, "planned": len(plan.actions)}, plan.log_dirs
        )
    except JournalFull as exc:
        raise JournalFull(f"the journal's disk is full ({exc}): nothing was changed") from exc
    skip = on_skip or (lambda _msg: None)
    try:
        if plan.fix == "ownership":
            progress = on_progress or (lambda _done, _total: None)
            _apply_ownership(_groups(plan.actions), j, skip, progress, len(plan.actions))
        else:
            _apply_each(plan.actions, j, skip)
        try:
            j.sync()
        except JournalFull:
            pass  # only completion records were left: undo checks each file's state, not them
    except JournalFull:
        if j.durable == j.header_len:  # not one intent: nothing was changed, no journal to keep
            os.unlink(j.path)
        raise
    finally:
        j.close()
    return j.path


def _groups(actions: list[Action]) -> Iterator[list[Action]]:
    """A file's chown and chmod together (the plan lists them one after the other)."""
    group: list[Action] = []
    for a in actions:
        if group and not (a.ident is group[0].ident or a.ident == group[0].ident):
            yield group
            group = []
        group.append(a)
    if group:
        yield group


def _apply_ownership(
    groups: Iterator[list[Action]],
    j: _Journal,
    skip: Callable[[str], None],
    progress: Callable[[int, int], None],
    total: int | None,
) -> None:
    trees: dict[str, _Tree | _Refused] = {}
    made = seen = 0
    n = 0
    progress(0, total or 0)
    try:
        while True:
            batch = []
            started = time.monotonic()
            for g in groups:
                n += 1
                root, rel, dev, ino, kind = g[0].ident  # type: ignore[misc]
                rec = {"n": n, "op": "own", "path": g[0].path, "root": root, "rel": rel, "dev": dev,
                       "ino": ino, "type": kind}  # fmt: skip
                for a in g:
                    if a.op == "chown":
                        rec["uid"], rec["gid"] = a.before
                        rec["to_uid"], rec["to_gid"] = a.after
                    else:
                        rec["mode"], rec["to_mode"] = a.before, a.after
                j.add(rec)
                batch.append((n, rec))
                if len(batch) >= BATCH_RECORDS or time.monotonic() - started > BATCH_SECONDS:
                    break
            if not batch:
                return
            try:
                j.sync()  # the intents are durable before any change they describe
            except JournalFull as exc:
                raise JournalFull(_full_message("ownership", j.path, made, total, exc)) from exc
            for n_, rec in batch:
                root = rec["root"]
                if root not in trees:
                    try:
                        trees[root] = _Tree(root)
                    except FixError as exc:
                        trees[root] = _Refused(exc.why)
                fd, why = _open_checked(trees[root], rec["rel"], rec["type"], rec["dev"], rec["ino"])
                if fd < 0:
                    j.add({"skipped": n_, "why": why})
                    skip(f"{_q(rec['path'])}: {why}")
                    continue
                try:
                    if "to_uid" in rec:
                        os.fchown(fd, rec["to_uid"], rec["to_gid"])
                    if "to_mode" in rec:
                        os.fchmod(fd, rec["to_mode"])
                    elif os.fstat(fd).st_mode & SUID_SGID:
                        os.fchmod(fd, statmod.S_IMODE(os.fstat(fd).st_mode) & ~SUID_SGID)
                finally:
                    os.close(fd)
                made += ("to_uid" in rec) + ("to_mode" in rec)
                j.add_line(f'{{"done":{n_}}}')
            seen += sum(("to_uid" in rec) + ("to_mode" in rec) for _n, rec in batch)
            progress(seen, total or 0)
    finally:
        for t in trees.values():
            t.close()


def _apply_each(actions: list[Action], j: _Journal, skip: Callable[[str], None]) -> None:
    """The few actions of the systemd and indexes fixes: one durable intent per action."""
    for n, a in enumerate(actions, 1):
        rec: dict[str, Any] = {"n": n, "op": a.op, "path": a.path}
        if a.op == "move":
            assert a.ident is not None
            root, rel, dev, ino, _kind = a.ident
            # the quarantine's own root: <quarantine>/<log dir name>/<partition>/<file>
            dst_rel = f"{os.path.basename(root)}/{rel}"
            rec.update(root=root, rel=rel, dev=dev, ino=ino, dst=a.after,
                       dst_root=a.after[: -len(dst_rel) - 1], dst_rel=dst_rel)  # fmt: skip
        elif a.op == "write":
            rec.update(
                before=a.before, after=a.after, after_sha256=hashlib.sha256(a.after.encode()).hexdigest(),
                made_dir=not os.path.isdir(os.path.dirname(a.path)),  # undo removes the drop-in dir it made
            )  # fmt: skip
        elif a.op == "run":
            rec["argv"] = a.after
        j.add(rec)
        try:
            j.sync()
        except JournalFull as exc:
            raise JournalFull(_full_message(a.op, j.path, n - 1, len(actions), exc)) from exc
        if a.op == "move":
            why = _move(rec["root"], rec["rel"], rec["dst_root"], rec["dst_rel"], rec["dev"], rec["ino"],
                        create=True)  # fmt: skip
            if why:
                j.add({"skipped": n, "why": why})
                skip(f"{_q(a.path)}: {why}")
                continue
        elif a.op == "write":
            # the drop-in dir 0755 as systemd's own; it and the unit's dir root's alone (engine.safepath), else refused
            dfd, _resolved = open_dir(os.path.dirname(a.path), write=True, create=True, mode=0o755)
            try:
                _write_file(dfd, os.path.basename(a.path), a.after)
            finally:
                os.close(dfd)
        elif a.op == "run":
            r = subprocess.run(a.after, capture_output=True, text=True)
            j.add({"done": n, "returncode": r.returncode})
            if r.returncode != 0:
                j.sync()
                raise FixError(
                    f"{shlex.join(a.after)} failed: {(r.stderr or r.stdout).strip().splitlines()[-1:] or r.returncode}"
                )
            continue
        j.add({"done": n})


def _move(
    src_root: str, src_rel: str, dst_root: str, dst_rel: str, dev: int, ino: int, create: bool
) -> str | None:
    """Move the file src_rel (which must be dev/ino) to dst_rel, by names relative to opened directories; never
    replaces what is at dst_rel. None when moved, else why not. Across filesystems: copied, then unlinked."""
    try:
        src_t = _Tree(src_root)
    except FixError as exc:
        return f"{exc}, skipped"
    try:
        dst_t = _Tree(dst_root, create=create)
    except FixError as exc:
        src_t.close()
        return f"{exc}, skipped"
    try:
        fd, why = _open_checked(src_t, src_rel, "f", dev, ino)
        if fd < 0:
            return why
        try:
            src_dir = src_t.dir_fd(_split(src_rel)[0])
            dst_head, dst_name = _split(dst_rel)
            dst_dir = dst_t.dir_fd(dst_head)
            src_name = _split(src_rel)[1]
            try:
                os.link(src_name, dst_name, src_dir_fd=src_dir, dst_dir_fd=dst_dir, follow_symlinks=False)
            except FileExistsError:
                return f"{_q(os.path.join(dst_root, dst_rel))} exists: not overwriting it, skipped"
            except OSError as exc:
                if exc.errno not in (errno.EXDEV, errno.EPERM, errno.EMLINK):
                    raise
                return _copy_move(fd, src_dir, src_name, dst_dir, dst_name, dst_root, dst_rel, ino)
            # the name we linked must still be the file we checked (else undo the link and skip)
            st = os.stat(dst_name, dir_fd=dst_dir, follow_symlinks=False)
            if (st.st_dev, st.st_ino) != (dev, ino):
                os.unlink(dst_name, dir_fd=dst_dir)
                return "replaced while being moved, skipped"
            os.unlink(src_name, dir_fd=src_dir)
            return None
        finally:
            os.close(fd)
    finally:
        src_t.close()
        dst_t.close()


def _copy_move(
    fd: int, src_dir: int, src_name: str, dst_dir: int, dst_name: str, dst_root: str, dst_rel: str, ino: int
) -> str | None:
    try:
        out = os.open(dst_name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600,
                      dir_fd=dst_dir)  # fmt: skip
    except FileExistsError:
        return f"{_q(os.path.join(dst_root, dst_rel))} exists: not overwriting it, skipped"
    try:
        st = os.fstat(fd)
        os.lseek(fd, 0, os.SEEK_SET)
        while os.sendfile(out, fd, None, 1 << 24):
            pass
        os.fchown(out, st.st_uid, st.st_gid)
        os.fchmod(out, statmod.S_IMODE(st.st_mode) & ~SUID_SGID)
        os.utime(out, ns=(st.st_atime_ns, st.st_mtime_ns))
        os.fsync(out)
    finally:
        os.close(out)
    cur = os.stat(src_name, dir_fd=src_dir, follow_symlinks=False)
    if cur.st_ino != ino:
        return "replaced while being copied, skipped (the copy stays at the destination)"
    os.unlink(src_name, dir_fd=src_dir)
    return None


# ------------------------------------------------------------------ undo


class UndoLines(list[str]):
    """What undo did, one line each; ``problems``: how many changes it had to leave (a link now, replaced...)."""

    problems = 0


def open_journal(path: str) -> tuple[int, int, str]:
    """(its dir's fd, the journal opened read/append, the path it resolved to) of a journal undo may trust: undo
    does as root what a journal says (chown back to any uid, chmod, write a file's content), so a journal the
    broker user could have written or planted is refused, in one line: its dir or a dir on the way writable by
    another user than root, or the file owned by another user, group/other-writable, a link or hard-linked."""
    head, name = os.path.split(os.path.abspath(path))
    try:
        dfd, resolved = open_dir(head, write=True)
    except FixError as exc:
        raise FixError(f"{_q(path)}: not undone: its dir {exc.why}") from None
    try:
        try:
            fd = os.open(
                name, os.O_RDWR | os.O_APPEND | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dfd
            )
        except FileNotFoundError:
            raise FixError(f"{_q(path)}: no such file") from None
        except OSError as exc:
            why = "a symlink" if exc.errno == errno.ELOOP else exc.strerror
            raise FixError(f"{_q(path)}: not undone: {why}") from None
        st = os.fstat(fd)
        why = (
            "not a regular file" if not statmod.S_ISREG(st.st_mode)
            else others_can_write(st, fd) or (f"{st.st_nlink} hard links" if st.st_nlink > 1 else None)
        )  # fmt: skip
        if why:
            os.close(fd)
            raise FixError(
                f"{_q(path)}: not undone: the journal is {why}, so the broker user could have written it; "
                "read it and put back by hand what it lists"
            )
    except BaseException:
        os.close(dfd)
        raise
    return dfd, fd, os.path.join(resolved, name)


def _read_journal(path: str, fd: int) -> tuple[dict[str, Any], list[dict[str, Any]], bool, int | None]:
    """(header, records, old whole-JSON format, where a torn last line starts: None when there is none)."""
    try:
        with open(os.dup(fd), encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise FixError(f"{path}: not a readable kafka-ops journal ({exc})") from exc
    if not text.startswith('{"kafka_ops_journal"'):
        try:
            doc = json.loads(text)  # kafka-ops before journal version 2: one JSON document
        except ValueError as exc:
            raise FixError(f"{path}: not a readable kafka-ops journal ({exc})") from exc
        if not isinstance(doc, dict) or not isinstance(doc.get("done"), list):
            raise FixError(f"{path}: not a kafka-ops journal")
        return doc, doc["done"], True, None
    lines = text.split("\n")
    recs = []
    offset = 0  # in bytes, where this line starts
    for i, line in enumerate(lines):
        if line:
            try:
                recs.append(json.loads(line))
            except ValueError as exc:
                if i >= len(lines) - 2:
                    # a torn last line: written when the apply was killed, before its change was made
                    return recs[0], recs[1:], False, offset
                raise FixError(f"{path}: damaged journal: line {i + 1} is not JSON ({exc})") from exc
        offset += len(line.encode("utf-8")) + 1
    return recs[0], recs[1:], False, None


def undo(journal_path: str) -> UndoLines:
    """Reverse a journal's changes, last first, each only if the fix made it and the file is still the one the
    fix changed. Can be run again (after a kill, or to finish what was left)."""
    dfd, jfd, journal_path = open_journal(journal_path)
    try:
        return _undo(dfd, jfd, journal_path)
    finally:
        os.close(dfd)


def _undo(dfd: int, jfd: int, journal_path: str) -> UndoLines:
    try:
        header, recs, old, torn_at = _read_journal(journal_path, jfd)
    except BaseException:
        os.close(jfd)
        raise
    out = UndoLines()
    if old:
        os.close(jfd)  # rewritten whole at the end, under a new name
        if header.get("undone"):
            return out
        intents = _old_intents(recs)
        undone: set[int] = set()
        done: dict[int, dict[str, Any]] = {}
    else:
        if any("undo_complete" in r for r in recs):
            os.close(jfd)
            return out
        intents = [r for r in recs if "n" in r and "op" in r]
        undone = {r["undone"] for r in recs if "undone" in r}
        done = {r["done"]: r for r in recs if "done" in r}
    j = None if old else _Journal(journal_path, jfd)
    if j is not None and torn_at is not None:
        # undo appends its records: the torn line goes first (as a log's recovery truncates a torn tail), or it
        # would sit mid-file and make the journal unreadable to the next undo
        try:
            os.ftruncate(j.fd, torn_at)
            os.fsync(j.fd)
            j.durable = torn_at
        except OSError as exc:
            j.close()
            raise FixError(f"{journal_path}: cannot cut its torn last line ({exc.strerror})") from exc
    trees: dict[str, _Tree] = {}
    last_sync = time.monotonic()
    try:
        for rec in reversed(intents):
            n = rec["n"]
            if n in undone:
                continue
            line = _undo_one(rec, trees, None if old else done.get(n))
            left = bool(line and line.startswith("left "))
            if line:
                out.append(line)
                out.problems += left
            if j is not None and not left:  # what was left is tried again by the next undo
                j.add_line(f'{{"undone":{n}}}')
                if rec["op"] in ("move", "write") or time.monotonic() - last_sync > BATCH_SECONDS:
                    j = _sync_or_stop(j, out)
                    last_sync = time.monotonic()
        if out.problems:
            pass  # not complete: the next undo tries what was left again
        elif j is not None:
            j.add({"undo_complete": dt.datetime.now(dt.timezone.utc).isoformat()})
            j = _sync_or_stop(j, out)
        elif old:
            header["undone"] = dt.datetime.now(dt.timezone.utc).isoformat()
            tmp = f".{os.path.basename(journal_path)}.{secrets.token_hex(6)}.tmp"
            try:
                flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
                with open(os.open(tmp, flags, 0o600, dir_fd=dfd), "w", encoding="utf-8") as f:
                    json.dump(header, f, indent=2)
                    f.flush()
                    os.fsync(f.fileno())
                os.replace(tmp, os.path.basename(journal_path), src_dir_fd=dfd, dst_dir_fd=dfd)
            except (
                OSError
            ) as exc:  # everything is undone; only the mark is missing (a next undo finds nothing)
                with contextlib.suppress(OSError):
                    os.unlink(tmp, dir_fd=dfd)
                out.append(f"note: {journal_path}: could not mark it undone ({exc.strerror})")
    finally:
        for t in trees.values():
            t.close()
        if j is not None:
            j.close()
    return out


def _sync_or_stop(j: _Journal, out: UndoLines) -> _Journal | None:
    """Undo's records only save work for the next undo (every step checks the file's state): on a full disk it
    goes on without them."""
    try:
        j.sync()
        return j
    except JournalFull:
        out.append(f"note: {j.path}: disk full, undo goes on without recording its progress")
        j.close()
        return None


def _old_intents(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A version-1 journal's ``done`` entries as intents: paths opened from / with O_NOFOLLOW, no dev/ino."""
    recs = []
    for n, e in enumerate(entries, 1):
        p = e.get("path", "")
        base = {"n": n, "path": p, "root": "/", "rel": p.lstrip("/"), "dev": None, "ino": None}
        if e.get("op") in ("chown", "chmod"):
            rec = {**base, "op": "own", "type": "any"}
            if e["op"] == "chown":
                rec.update(uid=e["before"][0], gid=e["before"][1], to_uid=e["after"][0], to_gid=e["after"][1])
            else:
                rec.update(mode=e["before"], to_mode=e["after"])
            recs.append(rec)
        elif e.get("op") == "move":
            recs.append({**base, "op": "move", "dst": e["after"], "dst_root": "/",
                         "dst_rel": e["after"].lstrip("/")})  # fmt: skip
        elif e.get("op") == "write":
            recs.append({**base, "op": "write", "before": e["before"], "after_sha256": e.get("after_sha256")})
        elif e.get("op") == "run":
            recs.append({**base, "op": "run", "argv": e.get("after")})
    return recs


def _undo_one(rec: dict[str, Any], trees: dict[str, _Tree], done: dict[str, Any] | None) -> str | None:
    op, path = rec["op"], _q(rec["path"])
    if op == "own":
        root = rec["root"]
        try:
            if root not in trees:
                trees[root] = _Tree(root)
        except FixError as exc:
            return (
                f"left {path}: its log dir is gone"
                if exc.why.endswith("no such directory")
                else f"left {path}: {exc}"
            )
        kind = rec["type"]
        if kind == "any":  # a version-1 journal does not say: whatever is there, but no link
            try:
                head, name = _split(rec["rel"])
                st = os.stat(name, dir_fd=trees[root].dir_fd(head), follow_symlinks=False)
                kind = "d" if statmod.S_ISDIR(st.st_mode) else "f"
            except OSError:
                kind = "f"
        fd, why = _open_checked(trees[root], rec["rel"], kind, rec["dev"], rec["ino"])
        if fd < 0:
            if why == "gone, skipped":
                return f"{path}: gone, nothing to put back"
            return f"left {path}: {why}"
        try:
            st = os.fstat(fd)
            did = []
            if "to_uid" in rec and (st.st_uid, st.st_gid) == (rec["to_uid"], rec["to_gid"]) != (
                rec["uid"],
                rec["gid"],
            ):
                os.fchown(fd, rec["uid"], rec["gid"])
                did.append(f"chown {rec['uid']}:{rec['gid']} {path}")
            if "to_mode" in rec:
                cur = statmod.S_IMODE(
                    st.st_mode
                )  # a chown by root clears only setuid/setgid: never in to_mode
                want = rec["mode"] & ~SUID_SGID
                if cur == rec["to_mode"] and cur != want:
                    os.fchmod(fd, want)
                    stripped = "  (setuid/setgid not restored)" if rec["mode"] & SUID_SGID else ""
                    did.append(f"chmod {want:04o} {path}{stripped}")
            return "; ".join(did) or None  # nothing: never changed (killed before) or already back
        finally:
            os.close(fd)
    if op == "move":
        return _undo_move(rec, done)
    if op == "write":
        return _undo_write(rec)
    if op == "run":
        if rec.get("argv") == ["systemctl", "daemon-reload"] and shutil.which("systemctl"):
            subprocess.run(rec["argv"], capture_output=True)
            return "systemctl daemon-reload"
        return None
    return f"left {path}: unknown change {op!r}"


def _undo_write(rec: dict[str, Any]) -> str | None:
    """A written file (the systemd drop-in) back as it was, by handle in its dir; the dir removed when the fix
    made it and it is empty now."""
    p, path = rec["path"], _q(rec["path"])
    head, name = os.path.split(p)
    try:
        dfd, _resolved = open_dir(head, write=True)
    except FixError as exc:
        if exc.why.endswith("no such directory"):
            return None if rec["before"] is None else f"left {path}: its dir is gone"
        return f"left {path}: {exc}"
    try:
        cur = _read_file(dfd, name)
        if cur is False:
            return f"left {path}: not a regular file now, not touching it"
        if cur != rec["before"]:
            if (
                cur is not None
                and rec.get("after_sha256")
                and hashlib.sha256(cur.encode()).hexdigest() != rec["after_sha256"]
            ):
                return f"left {path}: changed since the fix, not overwriting it"
            if rec["before"] is not None:
                _write_file(dfd, name, rec["before"])
                return f"restore {path}"
            os.unlink(name, dir_fd=dfd)
            did = [f"rm {path}"]
        else:
            did = []
    finally:
        os.close(dfd)
    if rec.get("made_dir"):
        try:
            pfd, _resolved = open_dir(os.path.dirname(head), write=True)
        except FixError:
            return "; ".join(did) or None
        try:
            os.rmdir(os.path.basename(head), dir_fd=pfd)
            did.append(f"rmdir {_q(head)}")
        except OSError:
            pass  # not empty: something else is in it now, or already gone
        finally:
            os.close(pfd)
    return "; ".join(did) or None


def _read_file(dfd: int, name: str) -> str | bool | None:
    """The text of ``name`` in the opened dir; None when there is none, False when it is not a regular file."""
    try:
        fd = os.open(name, _FILE_FLAGS, dir_fd=dfd)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return False
        raise
    with open(fd, encoding="utf-8", errors="replace") as f:
        if not statmod.S_ISREG(os.fstat(f.fileno()).st_mode):
            return False
        return f.read()


def _write_file(dfd: int, name: str, text: str) -> None:
    """``name`` in the opened dir replaced whole: an unpredictable temp made O_EXCL|O_NOFOLLOW, fsync'ed, renamed."""
    tmp = f".{name}.{secrets.token_hex(6)}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644, dir_fd=dfd)
    try:
        with open(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fchmod(f.fileno(), 0o644)
            os.fsync(f.fileno())
        os.replace(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=dfd)
        raise
    os.fsync(dfd)


def _undo_move(rec: dict[str, Any], done: dict[str, Any] | None) -> str | None:
    path, dst = _q(rec["path"]), _q(rec["dst"])
    try:
        src_t = _Tree(rec["root"])
    except FixError as exc:
        return f"left {dst}: {exc}"
    try:
        head, name = _split(rec["rel"])
        try:
            src_dir = src_t.dir_fd(head)
            st = os.stat(name, dir_fd=src_dir, follow_symlinks=False)
        except FileNotFoundError:
            st = None
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                return f"left {dst}: a symlink or not a directory on the way to {path} now"
            raise
        if st is not None:
            if rec["ino"] is not None and (st.st_dev, st.st_ino) == (rec["dev"], rec["ino"]):
                _drop_quarantined_link(rec)
                return None  # never moved (killed before), or already back
            return f"left {dst}: {path} exists again (the broker rebuilt it?): not overwriting it"
    finally:
        src_t.close()
    try:
        q = _Tree(rec["dst_root"])
    except FixError as exc:
        return f"left {path}: the quarantine: {exc}"
    try:
        head, name = _split(rec["dst_rel"])
        try:
            st = os.stat(name, dir_fd=q.dir_fd(head), follow_symlinks=False)
        except OSError:
            return f"{path}: not in the quarantine (never moved), nothing to put back"
        # the quarantine is root's own folder: what is there is what the fix put there (a copy across filesystems
        # has an inode of its own)
    finally:
        q.close()
    why = _move(rec["dst_root"], rec["dst_rel"], rec["root"], rec["rel"], st.st_dev, st.st_ino, create=False)
    if why:
        return f"left {dst}: {why}"
    _drop_empty_quarantine_dirs(rec["dst_root"], rec["dst_rel"])
    return f"mv {dst} {path}"


def _drop_empty_quarantine_dirs(dst_root: str, dst_rel: str) -> None:
    """The dirs the fix made in the quarantine (<quarantine>/<time>/<log dir>/<partition>), removed by undo once
    empty, deepest first, by handle (rmdir removes only an empty dir)."""
    head = _split(dst_rel)[0]
    rels = []
    rel = f"{os.path.basename(dst_root)}/{head}" if head else os.path.basename(dst_root)
    while rel:
        rels.append(rel)
        rel = _split(rel)[0]
    try:
        t = _Tree(os.path.dirname(dst_root))
    except FixError:
        return
    try:
        for rel in rels:
            h, name = _split(rel)
            try:
                os.rmdir(name, dir_fd=t.dir_fd(h))
            except OSError:
                return  # not empty (another file still there): the dirs above it stay too
    finally:
        t.close()


def _drop_quarantined_link(rec: dict[str, Any]) -> None:
    """A move killed between link and unlink leaves the file under both names: drop the quarantine's."""
    try:
        q = _Tree(rec["dst_root"])
    except (OSError, FixError):
        return
    try:
        head, name = _split(rec["dst_rel"])
        d = q.dir_fd(head)
        st = os.stat(name, dir_fd=d, follow_symlinks=False)
        if (st.st_dev, st.st_ino) == (rec["dev"], rec["ino"]):
            os.unlink(name, dir_fd=d)
    except OSError:
        pass
    finally:
        q.close()
