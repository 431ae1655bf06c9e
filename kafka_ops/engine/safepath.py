"""The one rule for every path kafka-ops opens or writes as root, where another user (the broker user, who owns
its log dirs and, on most hosts, their parent /var/lib/kafka) can change what a name leads to. Standard library
only: the CLI, the fixes and the shipped collector use it alike.

*Who can change a dir* (:func:`others_can_write`): anyone but the trusted users (root, ourselves, and for an
output the operator who ran ``sudo``: :func:`trusted_ids`) who owns it, or can write it through its group (a
group other than root's), its other bits or a POSIX ACL entry (a named user or group, through the mask).

*Opening a dir* (:func:`open_dir`): from ``/``, component by component, each with O_NOFOLLOW|O_DIRECTORY relative
to the dir before it (so no component can be swapped between a check and the open). A symlink is followed only
when the dir holding it passes the rule (then root made it, as a /var/lib/kafka -> /data/kafka set up by the
installer), or when that dir is sticky (/tmp) and the link is root's; a link in a dir the broker user can write
(the log dir itself in /var/lib/kafka) is refused. What the path resolved to is returned, and is what is printed
and journaled.

*A dir written in* (``write=True``: journal, quarantine, drop-in, outputs) must moreover pass the rule itself, and
so must every dir on the way to it (a sticky one, such as /tmp, counts when the next component is a trusted
user's): the broker user could otherwise rename it away and plant its own. ``sticky_ok`` accepts a sticky dir
itself (/tmp) for a file created there O_EXCL under an unpredictable name and renamed into place (an output:
nobody but its owner and root can rename or remove an entry there); never for a dir we read back later (a
journal dir: another user may leave its own files in /tmp).
"""

from __future__ import annotations

import os
import stat as statmod
import struct
from collections import deque

from kafka_ops.engine.shell import q

_DIR_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_DIRECTORY | os.O_CLOEXEC
MAX_LINKS = 40  # as the kernel's own limit on links followed in one lookup (MAXSYMLINKS)
# POSIX ACL tags (include/uapi/linux/posix_acl.h): named users and groups, and the mask that limits them
_ACL_USER, _ACL_GROUP, _ACL_MASK = 0x02, 0x08, 0x10


class PathRefused(Exception):
    """A path refused by the rule: one line naming it and why; ``why`` is the reason without the path."""

    def __init__(self, message: str, why: str = "") -> None:
        super().__init__(message)
        self.why = why


def trusted_ids(
    broker_uid: int | None = None, invoker: bool = False
) -> tuple[frozenset[int], frozenset[int]]:
    """(uids, gids) whose write access to a dir does not let anyone else swap what is in it: root and ourselves;
    with ``invoker`` (an output the operator asked for, in its own dirs) also a non-root user's own group and the
    user who ran ``sudo`` (root already); never ``broker_uid``. Without it (journals, quarantine, drop-in, log
    dirs) a group other than root's is never trusted."""
    uids, gids = {0, os.geteuid()}, {0}
    if invoker and os.geteuid() != 0:
        gids.add(os.getegid())
    sudo = os.environ.get("SUDO_UID", "")
    if invoker and os.geteuid() == 0 and sudo.isdigit():
        uids.add(int(sudo))
    if broker_uid is not None and broker_uid != 0:
        uids.discard(broker_uid)
    return frozenset(uids), frozenset(gids)


def acl_writer(fd: int) -> str | None:
    """A named user or group (not root) a POSIX ACL lets write the open file ``fd`` (through its mask), or None."""
    try:
        raw = os.getxattr(fd, "system.posix_acl_access")
    except (OSError, AttributeError):  # no ACL, no xattr support (not Linux)
        return None
    if len(raw) < 4 or struct.unpack_from("<I", raw)[0] != 2:
        return None
    entries = [struct.unpack_from("<HHI", raw, i) for i in range(4, len(raw) - 7, 8)]
    mask = next((perm for tag, perm, _ in entries if tag == _ACL_MASK), 7)
    for tag, perm, ident in entries:
        if tag in (_ACL_USER, _ACL_GROUP) and perm & mask & 2 and ident != 0:
            return f"{'user' if tag == _ACL_USER else 'group'} {ident}"
    return None


def others_can_write(
    st: os.stat_result, fd: int | None = None, trust: tuple[frozenset[int], frozenset[int]] | None = None
) -> str | None:
    """Why someone other than the trusted users (:func:`trusted_ids`) can change this dir's entries or this
    file; None when nobody can. ``fd`` (the same file, open): its POSIX ACL is read too."""
    uids, gids = trust or trusted_ids()
    if st.st_uid not in uids:
        return f"owned by uid {st.st_uid}"
    if st.st_mode & 0o002:
        return f"writable by every user (mode {statmod.S_IMODE(st.st_mode):04o})"
    if st.st_mode & 0o020 and st.st_gid not in gids:
        return f"writable by group {st.st_gid} (mode {statmod.S_IMODE(st.st_mode):04o})"
    who = acl_writer(fd) if fd is not None else None
    if who is not None:
        return f"writable by {who} (a POSIX ACL)"
    return None


def _sticky(st: os.stat_result, uids: frozenset[int]) -> bool:
    return bool(st.st_mode & statmod.S_ISVTX) and st.st_uid in uids


def _sticky_shelters(parent: os.stat_result, child: os.stat_result, uids: frozenset[int]) -> bool:
    """A sticky dir (/tmp) lets nobody but its owner and root rename or unlink an entry that a trusted user owns."""
    return _sticky(parent, uids) and child.st_uid in uids


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
    sticky_ok: bool = False,
    trust: tuple[frozenset[int], frozenset[int]] | None = None,
) -> tuple[int, str]:
    """(an O_DIRECTORY fd of ``path``, the path it resolved to), opened from / as the module says. ``write``: the
    dir and every dir on the way must be writable by root alone; ``create``: missing dirs are made (``mode``), in
    dirs writable by root alone; ``avoid``: {(dev, ino): log dir} that the dir must not be or be under;
    ``sticky_ok``: a sticky dir itself may be written in (an output, not a journal dir); ``trust``: who besides
    root may write (:func:`trusted_ids`). Raises PathRefused with one line saying why it is refused."""
    trust = trust or trusted_ids()
    uids = trust[0]
    label = f"{what} " if what else ""
    given = path
    if not os.path.isabs(path):
        path = os.path.join(os.getcwd(), path)
    todo = deque(p for p in path.split("/") if p)
    chain = [os.open("/", _DIR_FLAGS)]
    names: list[str] = []
    stats = [os.fstat(chain[0])]
    links = 0

    def refuse(why: str) -> PathRefused:
        return PathRefused(f"{label}{q(given)}: {why}", why)

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
                why = others_can_write(pst, parent, trust)
                if why and not _sticky(pst, uids):
                    # in a sticky dir (/tmp) what we make is ours: checked below as any dir on the way
                    raise refuse(f"would be made in {_show(names)}, which is {why}: choose another") from None
                try:
                    os.mkdir(name, mode, dir_fd=parent)
                except FileExistsError:
                    pass
                st = os.stat(name, dir_fd=parent, follow_symlinks=False)
            if statmod.S_ISLNK(st.st_mode):
                why = others_can_write(pst, parent, trust)
                if why and not _sticky_shelters(pst, st, uids):
                    raise refuse(
                        f"{_show([*names, name])} is a symlink in {_show(names)}, which is {why} (the broker user "
                        "can make that symbolic link lead anywhere): refused; give the directory it leads to if "
                        "that is meant"
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
                why = others_can_write(pst, parent, trust)
                if why and not _sticky_shelters(pst, st, uids):
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
            why = others_can_write(stats[-1], chain[-1], trust)
            if why and not (sticky_ok and _sticky(stats[-1], uids)):
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
        except PathRefused as exc:
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


__all__ = ["PathRefused", "acl_writer", "check_dir", "dir_ids", "open_dir", "others_can_write", "trusted_ids"]
