"""Opening a broker's files for reading only, and never blocking on something that is not a regular file.

A FIFO or device named like a Kafka file (``meta.properties``, ``00000000000000000000.log``) would block a plain
``open()`` forever; we open with O_NONBLOCK, check that it is a regular file, then read.
"""

from __future__ import annotations

import io
import os
import stat

from kafka_ops.engine.errors import EngineError, os_error

_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


def open_regular(path: str) -> io.BufferedReader:
    """A read-only binary file object for a regular file; EngineError for anything else."""
    try:
        fd = os.open(path, _FLAGS)
    except OSError as exc:
        raise os_error(path, exc) from exc
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise EngineError(path, "not a regular file")
        os.set_blocking(fd, True)
        return open(fd, "rb", closefd=True)
    except BaseException:
        os.close(fd)
        raise


def read_bytes(path: str, max_bytes: int | None = None) -> bytes:
    with open_regular(path) as f:
        try:
            return f.read() if max_bytes is None else f.read(max_bytes)
        except OSError as exc:
            raise os_error(path, exc) from exc
