"""ENV001: a log dir on a filesystem the broker's next start cannot write in: mounted (or remounted by the
kernel) read-only, or with no free space or no free inode for the broker user; or a log dir missing a checkpoint
the start creates, where the broker user cannot create files. The broker exits, or takes the dir offline, at its
start.

The rule (what a start writes in a log dir, and what each family does when it cannot) is
kafka_ops.broker.environment's, which the next-start plan follows too. Nothing is said when the broker is
running (DIR004 forecasts the space a running broker needs) or when the mount facts could not be read (the plan's
``unknown`` says so).
"""

from __future__ import annotations

from collections.abc import Iterator

from kafka_ops.broker import environment
from kafka_ops.checks.base import Finding, check
from kafka_ops.facts.context import Context
from kafka_ops.facts.model import LogDirFacts


@check(
    "ENV001",
    severity="critical",
    scope="logdir",
    title="Log dir on a read-only or full filesystem: the next start exits or takes the dir offline",
    incident="a data disk remounted read-only after I/O errors, or filled to the last block before a restart: "
    "the broker that stopped cleanly does not come back (2.x exits; 3.x takes the dir offline)",
)
def run(ctx: Context, ldf: LogDirFacts) -> Iterator[Finding]:
    v = environment.verdict(ctx.host, ldf)
    if v is None:
        return
    m = ldf.mount
    yield run.finding(
        f"{v.reason}.",
        v.fix,
        path=ldf.path,
        log_dir=ldf.path,
        details={
            "problem": v.problem,
            "start": v.start,
            "mount_point": m.mount_point if m else None,
            "fstype": m.fstype if m else None,
            "options": m.options if m else None,
            "free_bytes": environment.free_for_broker(ctx.host, ldf),
            "free_inodes": m.free_inodes if m else None,
            "clean_shutdown": ldf.clean_shutdown,
        },
    )


__all__ = ["run"]
