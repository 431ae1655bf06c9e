"""Run a command with its stdout and/or stderr on a terminal of a given width (a pseudo-terminal), as a person
at a screen runs it: the width is the terminal's (no COLUMNS), and what it writes is read back as text."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import selectors
import struct
import subprocess
import sys
import termios

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")


def in_terminal(
    argv: list[str], columns: int, *, stdout_tty: bool = True, stderr_tty: bool = True, timeout: float = 120
) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of ``argv`` (a list for ``python``) with the chosen streams on a terminal of
    ``columns`` columns; styles and line ends normalised."""
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    env["TERM"] = "xterm"
    fds: dict[str, tuple[int, int] | None] = {}
    for name, tty in (("out", stdout_tty), ("err", stderr_tty)):
        if tty:
            master, slave = pty.openpty()
            fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
            fds[name] = (master, slave)
        else:
            fds[name] = None
    out_pty, err_pty = fds["out"], fds["err"]
    p = subprocess.Popen(
        [sys.executable, *argv], stdin=subprocess.DEVNULL, env=env,
        stdout=out_pty[1] if out_pty else subprocess.PIPE, stderr=err_pty[1] if err_pty else subprocess.PIPE,
    )  # fmt: skip
    sel = selectors.DefaultSelector()
    chunks: dict[str, list[bytes]] = {"out": [], "err": []}
    for name, pair in fds.items():
        if pair:
            os.close(pair[1])
            sel.register(pair[0], selectors.EVENT_READ, name)
        else:
            sel.register((p.stdout if name == "out" else p.stderr).fileno(), selectors.EVENT_READ, name)  # type: ignore[union-attr]
    while sel.get_map():
        for key, _ in sel.select(timeout):
            try:
                data = os.read(key.fd, 65536)
            except OSError:  # EIO: the terminal's other end is closed
                data = b""
            if data:
                chunks[key.data].append(data)
            else:
                sel.unregister(key.fd)
    code = p.wait(timeout)
    for pair in fds.values():
        if pair:
            os.close(pair[0])

    def text(name: str) -> str:
        raw = b"".join(chunks[name]).decode("utf-8", "replace").replace("\r\n", "\n")
        return ANSI.sub("", raw)

    return code, text("out"), text("err")
