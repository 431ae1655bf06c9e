"""``--probe-as-user``: ask the kernel itself, from a child process running as the broker user.

The child drops to the user's uid, gid and supplementary groups (setgroups/setgid/setuid), then opens each
path read-only (a real open, as the broker's LogLoader does) and asks ``access(W_OK)``/``access(X_OK)`` for
writability and traversal, so
that nothing is ever opened for writing. Needs root; results come back over a pipe as JSON.
"""

from __future__ import annotations

import json
import os

from kafka_ops.facts.identity import Identity


def probe_paths(who: Identity, paths: list[str]) -> dict[str, tuple[bool, bool, bool]]:
    """{path: (readable, writable, traversable-or-executable)} as the kernel answers for ``who``."""
    if os.geteuid() != 0:
        return {}
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        code = 0
        try:
            os.close(r)
            os.setgroups(who.groups)
            os.setgid(who.gid)
            os.setuid(who.uid)
            out = {}
            for p in paths:
                readable = True
                try:
                    if os.path.isdir(p):
                        os.listdir(p)
                    else:  # O_NONBLOCK: a FIFO would block the child, and the audit waiting on it, forever
                        os.close(os.open(p, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)))
                except OSError:
                    readable = False
                out[p] = (readable, os.access(p, os.W_OK), os.access(p, os.X_OK))
            with os.fdopen(w, "w") as f:
                json.dump(out, f)
        except BaseException:  # never let the child return into the parent's code
            code = 1
        finally:
            os._exit(code)
    os.close(w)
    with os.fdopen(r) as f:
        data = f.read()
    os.waitpid(pid, 0)
    try:
        return {k: (bool(v[0]), bool(v[1]), bool(v[2])) for k, v in json.loads(data).items()}
    except ValueError:
        return {}
