"""A simulated broker host whose names are hostile: the tests of what kafka-ops prints and renders (issue 20).

Every path of the host runs through a dir named with a shell payload and a glob, then one named as HTML that
runs script; a topic's name holds a shell payload, a glob, an escape sequence, a newline and rich markup; the
log dir holds a ``-delete`` dir named ``t$(touch${IFS}PWNED)-0.<uuid>-delete`` (the issue's example), a
``-stray`` dir whose name holds a glob, and a ``-delete`` dir whose name is not UTF-8. All the simulator's
failures are planted, so most checks have something to say about these paths.
"""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass
from pathlib import Path

from kafka_ops.simulator.host import (
    Failures,
    HostSpec,
    SimulatedHost,
    TopicSpec,
    default_topics,
    simulate_host,
)

from .retention_hosts import NOW_MS

SHELL_PAYLOAD = "$(touch${IFS}PWNED)"  # runs `touch PWNED` if a shell ever evaluates it
SHELL_DIR = f"sh {SHELL_PAYLOAD} `touch PWNED2` *"  # a space, a command substitution, backquotes, a glob
HTML_DIR = '<img src=x onerror="window.__pwned=1;document.title=`PWNED`">'
HOSTILE_TOPIC = f"t{SHELL_PAYLOAD}*\x1b[31m\n[bold red]forged\r"
DELETE_DIR = f"t{SHELL_PAYLOAD}-0.{uuid.UUID(int=1).hex}-delete"
STRAY_DIR = f"x*-0.{uuid.UUID(int=2).hex}-stray"
NOT_UTF8_DIR = b"bad\xff\x1b[2J-0." + uuid.UUID(int=3).hex.encode() + b"-delete"


@dataclass
class HostileHost:
    host: SimulatedHost
    root: Path  # the dir holding the hostile path components

    def audit_args(self, broker_user: str | None) -> list[str]:
        h = self.host
        return [
            "--server-properties", h.server_properties, "--systemd-unit", h.systemd_unit,
            "--topic-configs", h.topic_configs, "--broker-log", h.server_log, "--broker-log", h.cleaner_log,
            "--broker-state", "stopped", "--kafka-version", "3.7.0", "--now", str(NOW_MS), "--horizon", "8d",
            *(["--broker-user", broker_user] if broker_user else []),
        ]  # fmt: skip


def hostile_host(
    root: Path, uid: int | None = None, gid: int | None = None, user: str | None = None
) -> HostileHost:
    """The host under ``root`` (made traversable by everyone, so that a broker user reaches its log dirs)."""
    base = root / SHELL_DIR / HTML_DIR
    base.mkdir(parents=True)
    for p in (root, root / SHELL_DIR, base):
        p.chmod(0o755)
    topics = [*default_topics(), TopicSpec(HOSTILE_TOPIC, partitions=1, records_per_partition=50)]
    spec = HostSpec(
        now_ms=NOW_MS,
        failures=Failures.all(),
        topics=topics,
        broker_user=user,
        broker_uid=uid,
        broker_gid=gid,
    )
    host = simulate_host(str(base / "host"), spec)
    for d in host.log_dirs:
        _drop_from_checkpoints(d)
    # ... and a line the broker user forged into the first dir's recovery point (SHUT003 names it by its number)
    with open(os.path.join(host.log_dirs[0], "recovery-point-offset-checkpoint"), "ab") as f:
        f.write(b"[bold red]forged\x1b[2J 0 0 extra\n")
    first = host.log_dirs[0]
    for name in (DELETE_DIR, STRAY_DIR):
        os.mkdir(os.path.join(first, name))
    os.mkdir(os.path.join(os.fsencode(first), NOT_UTF8_DIR))
    if uid is not None:
        for name in (os.fsencode(DELETE_DIR), os.fsencode(STRAY_DIR), NOT_UTF8_DIR):
            os.chown(os.path.join(os.fsencode(first), name), uid, gid if gid is not None else -1)
    return HostileHost(host, root)


def _drop_from_checkpoints(log_dir: str) -> None:
    """A broker writes checkpoint entries only for legal topic names (Topic.validate: [a-zA-Z0-9._-]), so the
    hostile topic is in none of its log dir's offset checkpoints: the simulator's lines for it would not parse, and
    the dir would go offline at the next start (DIR005, SHUT003) with every finding of it."""
    import re

    from kafka_ops.engine import checkpoints as ckpt

    legal = re.compile(rb"[a-zA-Z0-9._-]+ [0-9]+ [0-9]+")
    for name in ckpt.OFFSET_CHECKPOINTS:
        path = Path(log_dir) / name
        lines = re.split(rb"\r\n|\r|\n", path.read_bytes())
        kept = [ln for ln in lines[2:] if legal.fullmatch(ln)]
        path.write_bytes(b"\n".join([b"0", str(len(kept)).encode(), *kept]) + b"\n")
