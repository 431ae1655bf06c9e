"""Opening a broker's files for reading only: never through a symbolic link, never blocking on something that
is not a regular file.

We run as root in log dirs the broker user controls: a checkpoint made a symlink to ``/etc/shadow`` must not be
read (its first line would end up in a report), and a FIFO or device named like a Kafka file
(``meta.properties``, ``00000000000000000000.log``, ``server.log``) would block a plain ``open()`` forever. So every
file is opened with O_NOFOLLOW (a link is refused by the kernel, ELOOP, before anything is read) and O_NONBLOCK,
then fstat-ed: anything but a regular file is refused with its kind named, and nothing of it is read.
"""

from __future__ import annotations

import errno
import io
import os
import stat

from kafka_ops.engine.errors import EngineError, os_error

NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
# the flags of every read of a file in a log dir (records.py and indexes.py open raw fds with them)
READ_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | NOFOLLOW
_FOLLOW_FLAGS = READ_FLAGS & ~NOFOLLOW
SYMLINK = "a symbolic link: not followed (kafka-ops never reads a file through a link)"

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


def kind_of(mode: int) -> str:
    """'a FIFO (named pipe)', 'a directory', ... for a mode that is not a regular file's."""
    return next((what for test, what in _KINDS if test(mode)), "not a regular file")


def not_regular(path: str, mode: int) -> EngineError:
    return EngineError(path, f"{kind_of(mode)}, not a regular file: not read")


def open_error(path: str, exc: OSError, dir_fd: int | None = None) -> EngineError:
    """The EngineError of a failed open with READ_FLAGS: ELOOP on the last name is a symlink refused."""
    if exc.errno == errno.ELOOP:
        try:
            if stat.S_ISLNK(os.lstat(path, dir_fd=dir_fd).st_mode):
                return EngineError(path, SYMLINK)
        except OSError:
            pass
    return os_error(path, exc)


def open_fd(path: str, dir_fd: int | None = None, follow: bool = False) -> tuple[int, os.stat_result]:
    """A read-only fd of a regular file and its fstat; EngineError for a symlink (unless ``follow``), a FIFO,
    a device, a socket or a directory, whose content is never read. The caller closes the fd."""
    try:
        fd = os.open(path, _FOLLOW_FLAGS if follow else READ_FLAGS, dir_fd=dir_fd)
    except OSError as exc:
        raise open_error(path, exc, dir_fd) from exc
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise not_regular(path, st.st_mode)
    except BaseException:
        os.close(fd)
        raise
    return fd, st


def open_regular(path: str, dir_fd: int | None = None, follow: bool = False) -> io.BufferedReader:
    """A read-only binary file object for a regular file; EngineError for anything else (see open_fd)."""
    fd, _ = open_fd(path, dir_fd, follow)
    try:
        os.set_blocking(fd, True)
        return open(fd, "rb", closefd=True)
    except BaseException:
        os.close(fd)
        raise


def read_bytes(path: str, max_bytes: int | None = None, follow: bool = False) -> bytes:
    """The file's bytes (up to ``max_bytes``), read to its end. On the opened fd, without a file object: the
    audit reads a producer snapshot and a few checkpoints per partition, and a buffered file object cost more than
    the reads (two fcntl for the blocking flag, a second fstat and a seek; O_NONBLOCK does not apply to a regular
    file, which open_fd ensures)."""
    fd, st = open_fd(path, follow=follow)
    try:
        want = -1 if max_bytes is None else max_bytes
        # the size it had, and one more byte: a file that grew since is read on to its end, as f.read() does
        first = os.read(fd, st.st_size + 1 if want < 0 else min(want, st.st_size + 1))
        if not first or len(first) == want:
            return first
        chunks = [first]
        got = len(first)
        while want < 0 or got < want:
            more = os.read(fd, 65536 if want < 0 else min(65536, want - got))
            if not more:
                break
            chunks.append(more)
            got += len(more)
        return b"".join(chunks)
    except OSError as exc:
        raise os_error(path, exc) from exc
    finally:
        os.close(fd)
