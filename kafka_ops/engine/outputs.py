"""Writing a file as root where no other user can make us write somewhere else: every output kafka-ops writes
(``report``'s HTML, ``audit -o``, ``forecast -o``) goes through :func:`output_file`. Standard library only.

The broker user owns its log dirs and, on most hosts, their parent (/var/lib/kafka); any other non-root user may
own the current dir. A plain ``open(path, "w")`` as root follows a symlink planted at ``path`` (a root-only file
is overwritten with the report), and a temp name beside it that can be guessed (``.NAME.PID.tmp``) is one more
link to plant. So, one rule:

* the dir written in, and every dir above it, is one that only root, the invoking user (or the user who ran
  ``sudo``) can change: owned by one of them, writable by no other user through its group, its other bits or a
  POSIX ACL. A dir every user can write (``/tmp``) is accepted only as an ancestor or the dir itself when it is
  sticky (``o+t``): there nobody but the file's owner and root can rename or remove the entries, so the temp
  file we create (root's, O_EXCL, unpredictable name) and the file it is renamed to cannot be swapped, and the
  rename replaces whatever link another user planted at the name without following it. The path is resolved
  first and the rule applies to what it resolved to; a link on the way is followed only when it lies in a dir
  that passes the rule (then no other user made it or can repoint it: a link the broker user put in its
  /var/lib/kafka, to /etc/cron.d, is refused); the resolved path is what is printed.
* the target, when it exists, must be a regular file (a symlink, FIFO, device or dir there is refused: some
  user put it there; we say so rather than replace it);
* the file is written as a temp file created O_CREAT|O_EXCL|O_NOFOLLOW with a random name in the opened dir
  (dir_fd: the dir checked is the dir written in), fsync-ed, renamed over the target, and the dir fsync-ed: a
  reader never sees half a file, and a failure leaves the previous file.

Refusals are one line (:class:`OutputError`) naming the path and why. :func:`untrusted_dir` is the rule alone,
for the other paths written as root (journals, quarantine dirs).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from collections.abc import Iterator
from typing import IO

_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
# POSIX ACL tags (include/uapi/linux/posix_acl.h): named users and groups, and the mask that limits them
_ACL_USER, _ACL_GROUP, _ACL_MASK = 0x02, 0x08, 0x10


class OutputError(Exception):
    """An output refused or not written: one line naming the path and why."""


def trusted_ids(broker_uid: int | None = None) -> tuple[set[int], set[int]]:
    """The uids and gids whose write access to a dir does not let anyone else swap a file in it: root, the
    invoking user (and, under sudo, the user who ran it: root already), never the broker user."""
    uids, gids = {0, os.geteuid()}, {0}
    if os.geteuid() != 0:
        gids.add(os.getegid())
    sudo = os.environ.get("SUDO_UID", "")
    if os.geteuid() == 0 and sudo.isdigit():
        uids.add(int(sudo))
    if broker_uid is not None and broker_uid != 0:
        uids.discard(broker_uid)
    return uids, gids


def _acl_writers(path: str) -> str | None:
    """A named user or group a POSIX ACL lets write ``path`` (through its mask), or None."""
    try:
        raw = os.getxattr(path, "system.posix_acl_access", follow_symlinks=False)
    except OSError:
        return None
    import struct

    if len(raw) < 4 or struct.unpack_from("<I", raw)[0] != 2:
        return None
    entries = [struct.unpack_from("<HHI", raw, i) for i in range(4, len(raw) - 7, 8)]
    mask = next((perm for tag, perm, _ in entries if tag == _ACL_MASK), 7)
    for tag, perm, ident in entries:
        if tag in (_ACL_USER, _ACL_GROUP) and perm & mask & 2 and ident != 0:
            return f"{'user' if tag == _ACL_USER else 'group'} {ident}"
    return None


def _one_dir(cur: str, uids: set[int], gids: set[int]) -> str | None:
    """Why another user can change the entries of dir ``cur`` (not following a link there), or None."""
    try:
        st = os.lstat(cur)
    except OSError as exc:
        return f"{cur}: {(exc.strerror or str(exc)).lower()}"
    if stat.S_ISLNK(st.st_mode):  # changed since it was resolved: someone is at work there
        return f"{cur} became a symbolic link"
    if not stat.S_ISDIR(st.st_mode):
        return f"{cur} is not a directory"
    mode = stat.S_IMODE(st.st_mode)
    sticky = bool(mode & stat.S_ISVTX)
    if st.st_uid not in uids:
        return f"{cur} is owned by uid {st.st_uid}, not root: that user could swap the file"
    if mode & stat.S_IWOTH and not sticky:
        return f"{cur} is writable by every user (mode {mode:04o}, not sticky)"
    if mode & stat.S_IWGRP and st.st_gid not in gids and not sticky:
        return f"{cur} is writable by group {st.st_gid} (mode {mode:04o})"
    who = _acl_writers(cur)
    if who is not None and not sticky:
        return f"{cur} is writable by {who} (a POSIX ACL)"
    return None


def resolve_dir(path: str, broker_uid: int | None = None) -> tuple[str, str | None]:
    """(what dir ``path`` resolves to, why a link on the way is not to be followed or None). A link is followed
    only where it lies in a dir that passes the rule (only root or the invoker could have made it): a link the
    broker user put in its /var/lib/kafka, to /etc/cron.d, must not make root write there."""
    uids, gids = trusted_ids(broker_uid)
    todo = [p for p in os.path.abspath(path).split("/") if p]
    todo.reverse()
    cur, links = "/", 0
    while todo:
        name = todo.pop()
        if name == ".":
            continue
        if name == "..":
            cur = os.path.dirname(cur)
            continue
        nxt = os.path.join(cur, name)
        try:
            st = os.lstat(nxt)
        except OSError as exc:
            return nxt, f"{nxt}: {(exc.strerror or str(exc)).lower()}"
        if stat.S_ISLNK(st.st_mode):
            why = _one_dir(cur, uids, gids)
            if why is not None:
                return nxt, f"{nxt} is a symbolic link in a dir another user can change ({why})"
            links += 1
            if links > 40:  # the kernel's own limit (MAXSYMLINKS)
                return nxt, f"{nxt}: too many levels of symbolic links"
            target = os.readlink(nxt)
            if target.startswith("/"):
                cur = "/"
            todo.extend(reversed([p for p in target.split("/") if p]))
            continue
        cur = nxt
    return cur, None


def untrusted_dir(path: str, broker_uid: int | None = None) -> str | None:
    """Why a file written as root in dir ``path`` could be swapped by another user (the dir or a dir above it is
    theirs or writable by them, or a link on the way lies in such a dir), or None when it cannot. The rule
    applies to what ``path`` resolves to (:func:`resolve_dir`)."""
    uids, gids = trusted_ids(broker_uid)
    real, why = resolve_dir(path, broker_uid)
    if why is not None:
        return why
    parts = [p for p in real.split("/") if p]
    for i in range(len(parts) + 1):
        why = _one_dir("/" + "/".join(parts[:i]), uids, gids)
        if why is not None:
            return why
    return None


def check_target(path: str, broker_uid: int | None = None) -> str:
    """The resolved path a file will be written at, or OutputError: the rule of the module, checked before any
    work is done (an audit of an hour does not end in a refusal)."""
    target = os.path.abspath(path)
    d, name = os.path.split(target)
    if not name:
        raise OutputError(f"{path}: not a file name")
    if not os.path.isdir(d):
        raise OutputError(f"{path}: cannot write: no such directory {d}")
    why = untrusted_dir(d, broker_uid)
    if why is not None:
        raise OutputError(f"{path}: refused, not written: {why}; write it in a dir only root can change")
    real = os.path.join(resolve_dir(d, broker_uid)[0], name)
    try:
        st = os.lstat(real)
    except FileNotFoundError:
        return real
    except OSError as exc:
        raise OutputError(f"{path}: cannot write: {(exc.strerror or str(exc)).lower()}") from exc
    if stat.S_ISLNK(st.st_mode):
        raise OutputError(
            f"{real}: refused, not written: a symbolic link (kafka-ops never writes through a link)"
        )
    if not stat.S_ISREG(st.st_mode):
        from kafka_ops.engine.fileio import kind_of

        raise OutputError(f"{real}: refused, not written: {kind_of(st.st_mode)}, not a regular file")
    return real


@contextlib.contextmanager
def output_file(path: str, broker_uid: int | None = None, binary: bool = False) -> Iterator[IO[str]]:
    """A text file object to write ``path`` through (see the module): on a clean exit of the block its content
    replaces ``path`` whole; on an exception nothing of it remains. OutputError for a refused path or a failed
    write (its message names the path)."""
    real = check_target(path, broker_uid)
    d, name = os.path.split(real)
    try:
        dfd = os.open(d, os.O_RDONLY | _O_DIRECTORY | _O_NOFOLLOW | _O_CLOEXEC)
    except OSError as exc:
        raise OutputError(f"{path}: cannot write: {(exc.strerror or str(exc)).lower()}") from exc
    tmp = None
    try:
        umask = os.umask(0o022)
        os.umask(umask)
        for _ in range(100):
            cand = f".{name[:200]}.{secrets.token_hex(8)}.tmp"
            try:
                fd = os.open(
                    cand, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_NOFOLLOW | _O_CLOEXEC, 0o600, dir_fd=dfd
                )
            except FileExistsError:
                continue
            tmp = cand
            break
        else:
            raise OutputError(f"{path}: cannot write: no free temp name")
        f = os.fdopen(fd, "wb" if binary else "w", **({} if binary else {"encoding": "utf-8", "newline": ""}))
        with f:
            yield f  # type: ignore[misc]
            f.flush()
            os.fchmod(f.fileno(), 0o666 & ~umask)
            os.fsync(f.fileno())
        os.rename(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
        tmp = None
        with contextlib.suppress(OSError):
            os.fsync(dfd)
    except OSError as exc:
        raise OutputError(f"{path}: cannot write: {(exc.strerror or str(exc)).lower()}") from exc
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=dfd)
        os.close(dfd)


__all__ = ["OutputError", "check_target", "output_file", "resolve_dir", "trusted_ids", "untrusted_dir"]
