"""Directories opened as root by handle from ``/``, never through a link the broker user could have made.

One rule for every directory the fixes open (log dirs, the unit's dir, the quarantine, the journal dir): the path
is opened component by component, each with O_NOFOLLOW|O_DIRECTORY relative to the directory before it. A symlink
is followed only when the directory holding it is writable by root alone (then root made it, as a
/var/lib/kafka -> /data/kafka set up by the installer), or when that directory is sticky (/tmp) and the link is
root's; a link in a directory the broker user can write (the log dir itself in /var/lib/kafka, owned by the broker
user) is refused. What the path resolved to is returned, and is what the fix prints and journals.

A directory where we *write* (journal, quarantine, drop-in) must moreover be writable by root alone, and so must
every directory on the way to it (a sticky one, such as /tmp, counts when the next component is root's): the
broker user could otherwise rename it away and plant its own. Standard library only.
"""

from __future__ import annotations

import os
import shlex
import stat as statmod
from collections import deque

_DIR_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_DIRECTORY | os.O_CLOEXEC
MAX_LINKS = 40  # as the kernel's own limit on links followed in one lookup


class FixError(Exception):
    def __init__(self, message: str, why: str = "") -> None:
        super().__init__(message)
        self.why = why  # the message without the path it is about


def q(path: str) -> str:
    """A path as a shell word on one printable line: shlex.quote, or bash's $'...' with \\xNN escapes for a name
    with control characters (a newline) or bytes that are not UTF-8 (the broker user chooses the names)."""
    if path.isprintable():
        return shlex.quote(path)
    raw = os.fsencode(path)
    return (
        "$'"
        + "".join(chr(c) if 0x20 <= c < 0x7F and c not in (0x27, 0x5C) else f"\\x{c:02x}" for c in raw)
        + "'"
    )


def _trusted_uids() -> tuple[int, int]:
    return 0, os.geteuid()


def others_can_write(st: os.stat_result) -> str | None:
    """Why someone other than root (and us) can change this directory's entries; None when nobody can."""
    if st.st_uid not in _trusted_uids():
        return f"owned by uid {st.st_uid}"
    if st.st_mode & 0o002:
        return f"writable by every user (mode {statmod.S_IMODE(st.st_mode):04o})"
    if st.st_mode & 0o020 and st.st_gid != 0:
        return f"writable by group {st.st_gid} (mode {statmod.S_IMODE(st.st_mode):04o})"
    return None


def _sticky_shelters(parent: os.stat_result, child: os.stat_result) -> bool:
    """A sticky dir (/tmp) lets nobody but its owner and root rename or unlink an entry that root owns."""
    return (
        bool(parent.st_mode & statmod.S_ISVTX)
        and parent.st_uid in _trusted_uids()
        and child.st_uid in _trusted_uids()
    )


def _show(parts: list[str]) -> str:
    return q("/" + "/".join(parts))


def open_dir(
    path: str,
    *,
    write: bool = False,
    create: bool = False,
    mode: int = 0o700,
    avoid: dict[tuple[int, int], str] | None = None,
    what: str = "",
) -> tuple[int, str]:
    """(an O_DIRECTORY fd of ``path``, the path it resolved to), opened from / as the module says. ``write``: the
    dir and every dir on the way must be writable by root alone; ``create``: missing dirs are made (``mode``), in
    dirs writable by root alone; ``avoid``: {(dev, ino): log dir} that the dir must not be or be under. Raises
    FixError with one line saying why it is refused."""
    label = f"{what} " if what else ""
    given = path
    if not os.path.isabs(path):
        path = os.path.join(os.getcwd(), path)
    todo = deque(p for p in path.split("/") if p)
    chain = [os.open("/", _DIR_FLAGS)]
    names: list[str] = []
    stats = [os.fstat(chain[0])]
    links = 0

    def refuse(why: str) -> FixError:
        return FixError(f"{label}{q(given)}: {why}", why)

    try:
        while todo:
            name = todo.popleft()
            if name == ".":
                continue
            if name == "..":
                if len(chain) > 1:
                    os.close(chain.pop())
                    names.pop()
                    stats.pop()
                continue
            parent, pst = chain[-1], stats[-1]
            try:
                st = os.stat(name, dir_fd=parent, follow_symlinks=False)
            except FileNotFoundError:
                if not create:
                    raise refuse(f"{_show([*names, name])}: no such directory") from None
                why = others_can_write(pst)
                if why and not (pst.st_mode & statmod.S_ISVTX and pst.st_uid in _trusted_uids()):
                    # in a sticky dir (/tmp) what we make is ours: checked below as any dir on the way
                    raise refuse(f"would be made in {_show(names)}, which is {why}: choose another") from None
                try:
                    os.mkdir(name, mode, dir_fd=parent)
                except FileExistsError:
                    pass
                st = os.stat(name, dir_fd=parent, follow_symlinks=False)
            if statmod.S_ISLNK(st.st_mode):
                why = others_can_write(pst)
                if why and not _sticky_shelters(pst, st):
                    raise refuse(
                        f"{_show([*names, name])} is a symlink in {_show(names)}, which is {why} (the broker user "
                        "can make it lead anywhere): refused; give the directory it leads to if that is meant"
                    )
                links += 1
                if links > MAX_LINKS:
                    raise refuse("too many levels of symbolic links")
                target = os.readlink(name, dir_fd=parent)
                if target.startswith("/"):
                    for fd in chain[1:]:
                        os.close(fd)
                    del chain[1:], names[:], stats[1:]
                todo.extendleft(reversed([p for p in target.split("/") if p]))
                continue
            if not statmod.S_ISDIR(st.st_mode):
                raise refuse(f"{_show([*names, name])}: not a directory")
            if write:
                why = others_can_write(pst)
                if why and not _sticky_shelters(pst, st):
                    raise refuse(
                        f"it is under {_show(names)}, which is {why}: the broker user could rename it away and "
                        "put its own in its place; choose a dir that only root can write"
                    )
            try:
                fd = os.open(name, _DIR_FLAGS, dir_fd=parent)
            except OSError as exc:
                raise refuse(
                    f"{_show([*names, name])}: changed while being opened ({exc.strerror})"
                ) from None
            chain.append(fd)
            names.append(name)
            fst = os.fstat(fd)
            stats.append(fst)
            if (fst.st_dev, fst.st_ino) != (st.st_dev, st.st_ino):
                raise refuse(f"{_show(names)}: replaced while being opened")
        for st in stats:
            inside = (avoid or {}).get((st.st_dev, st.st_ino))
            if inside:
                raise refuse(
                    f"it is in the log dir {q(inside)}, whose files the broker user controls (`fix ownership` would "
                    "chown what is there, and the broker would refuse to start with a dir there that is not a "
                    "partition); choose a dir outside every log dir"
                )
        if write:
            why = others_can_write(stats[-1])
            if why:
                raise refuse(f"{_show(names)} is {why}; choose a dir that only root can write")
        fd = chain.pop()
        return fd, "/" + "/".join(names)
    finally:
        for fd in chain:
            os.close(fd)


def check_dir(path: str, avoid: dict[tuple[int, int], str] | None = None, what: str = "") -> str | None:
    """Why ``path`` may not hold what we write (None: it may), without creating it: its deepest existing dir
    must pass ``open_dir(write=True)`` and so would what is made under it."""
    probe = os.path.abspath(path)
    while True:
        try:
            fd, _resolved = open_dir(probe, write=True, avoid=avoid, what=what)
        except FixError as exc:
            if exc.why.endswith(": no such directory") and probe != "/":
                probe = os.path.dirname(probe)
                continue
            return f"{what} {q(path)}: {exc.why}".lstrip()
        os.close(fd)
        return None


def dir_ids(paths: list[str]) -> dict[tuple[int, int], str]:
    """{(dev, ino): path} of the dirs that exist (the log dirs a write must stay out of)."""
    out = {}
    for p in paths:
        try:
            st = os.stat(p)
        except OSError:
            continue
        out[(st.st_dev, st.st_ino)] = p
    return out
