"""Writing a file as root where no other user can make us write somewhere else: every output kafka-ops writes
(``report``'s HTML, ``audit -o``, ``forecast -o``) goes through :func:`output_file`. Standard library only.

The broker user owns its log dirs and, on most hosts, their parent (/var/lib/kafka); any other non-root user may
own the current dir. A plain ``open(path, "w")`` as root follows a symlink planted at ``path`` (a root-only file
is overwritten with the report), and a temp name beside it that can be guessed (``.NAME.PID.tmp``) is one more
link to plant. So, one rule:

* the dir written in is opened by handle from ``/`` by the rule of every path opened as root
  (:mod:`kafka_ops.engine.safepath`): it and every dir above it can be changed only by root, the invoking user
  (or the user who ran ``sudo``), never through a group, other bits or a POSIX ACL of another user; a link on
  the way is followed only where it lies in a dir that passes the rule (a link the broker user put in its
  /var/lib/kafka, to /etc/cron.d, is refused); the path it resolved to is what is printed. A sticky dir every
  user can write (``/tmp``) is accepted: there nobody but the file's owner and root can rename or remove the
  entries, so the temp file we create (root's, O_EXCL, unpredictable name) and the file it is renamed to cannot
  be swapped, and the rename replaces whatever link another user planted at the name without following it.
* the target, when it exists, must be a regular file (a symlink, FIFO, device or dir there is refused: some
  user put it there; we say so rather than replace it);
* the file is written as a temp file created O_CREAT|O_EXCL|O_NOFOLLOW with a random name in the opened dir
  (dir_fd: the dir checked is the dir written in), fsync-ed, renamed over the target, and the dir fsync-ed: a
  reader never sees half a file, and a failure leaves the previous file.

Refusals are one line (:class:`OutputError`) naming the path and why.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from collections.abc import Iterator
from typing import IO, Any

from kafka_ops.engine import safepath

_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


class OutputError(Exception):
    """An output refused or not written: one line naming the path and why."""


def trusted_ids(broker_uid: int | None = None) -> tuple[set[int], set[int]]:
    """The uids and gids trusted for an output (engine.safepath.trusted_ids with the invoker: the operator who
    ran ``sudo`` is root already; never the broker user)."""
    uids, gids = safepath.trusted_ids(broker_uid, invoker=True)
    return set(uids), set(gids)


def _open(path: str, broker_uid: int | None) -> tuple[int, str]:
    """(an fd of dir ``path``, what it resolved to), opened by handle by the rule (engine.safepath.open_dir)."""
    return safepath.open_dir(
        path, write=True, sticky_ok=True, trust=safepath.trusted_ids(broker_uid, invoker=True)
    )


def resolve_dir(path: str, broker_uid: int | None = None) -> tuple[str, str | None]:
    """(what dir ``path`` resolves to, why it may not be written in or None), by engine.safepath's rule."""
    try:
        fd, real = _open(path, broker_uid)
    except safepath.PathRefused as exc:
        return os.path.abspath(path), str(exc)
    os.close(fd)
    return real, None


def untrusted_dir(path: str, broker_uid: int | None = None) -> str | None:
    """Why a file written as root in dir ``path`` could be swapped by another user (the dir or a dir above it is
    theirs or writable by them, or a link on the way lies in such a dir), or None when it cannot."""
    return resolve_dir(path, broker_uid)[1]


def _open_target(path: str, broker_uid: int | None) -> tuple[int, str]:
    """(an fd of the dir the file goes in, the file's resolved path), or OutputError: the rule of the module."""
    target = os.path.abspath(path)
    d, name = os.path.split(target)
    if not name:
        raise OutputError(f"{path}: not a file name")
    if not os.path.isdir(d):
        raise OutputError(f"{path}: cannot write: no such directory {d}")
    try:
        dfd, real_dir = _open(d, broker_uid)
    except safepath.PathRefused as exc:
        raise OutputError(
            f"{path}: refused, not written: {exc.why}"  # the why names the dir and says what to do
        ) from None
    except OSError as exc:
        raise OutputError(f"{path}: cannot write: {(exc.strerror or str(exc)).lower()}") from exc
    real = os.path.join(real_dir, name)
    try:
        try:
            st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
        except FileNotFoundError:
            return dfd, real
        except OSError as exc:
            raise OutputError(f"{path}: cannot write: {(exc.strerror or str(exc)).lower()}") from exc
        if stat.S_ISLNK(st.st_mode):
            raise OutputError(
                f"{real}: refused, not written: a symbolic link (kafka-ops never writes through a link)"
            )
        if not stat.S_ISREG(st.st_mode):
            from kafka_ops.engine.fileio import kind_of

            raise OutputError(f"{real}: refused, not written: {kind_of(st.st_mode)}, not a regular file")
    except BaseException:
        os.close(dfd)
        raise
    return dfd, real


def check_target(path: str, broker_uid: int | None = None) -> str:
    """The resolved path a file will be written at, or OutputError: the rule of the module, checked before any
    work is done (an audit of an hour does not end in a refusal)."""
    dfd, real = _open_target(path, broker_uid)
    os.close(dfd)
    return real


@contextlib.contextmanager
def output_file(path: str, broker_uid: int | None = None, binary: bool = False) -> Iterator[IO[str]]:
    """A text file object to write ``path`` through (see the module): on a clean exit of the block its content
    replaces ``path`` whole; on an exception nothing of it remains. OutputError for a refused path or a failed
    write (its message names the path)."""
    dfd, real = _open_target(path, broker_uid)  # the dir checked is the dir written in: by its handle
    name = os.path.basename(real)
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
        f: IO[Any] = os.fdopen(fd, "wb") if binary else os.fdopen(fd, "w", encoding="utf-8", newline="")
        with f:
            yield f
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
