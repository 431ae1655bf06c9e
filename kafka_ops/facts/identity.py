"""The broker user as the kernel sees it: uid, primary gid and supplementary groups."""

from __future__ import annotations

import grp
import os
import pwd
from dataclasses import field

from kafka_ops.engine.compat import slotted


@slotted
class Identity:
    user: str
    uid: int
    gid: int
    groups: list[int] = field(default_factory=list)  # supplementary groups, primary included
    # facts.access.access_for's answers by (owner uid, gid, mode, is dir) for files without an ACL or a probe:
    # the audit asks ~50 per partition, most of them the same few (the broker user's own files)
    decided: dict[tuple[int, int, int, bool], object] = field(
        default_factory=dict, init=False, compare=False, repr=False
    )

    def to_dict(self) -> dict[str, object]:
        return {"user": self.user, "uid": self.uid, "gid": self.gid, "groups": self.groups}

    @classmethod
    def from_dict(cls, d: dict) -> Identity:  # type: ignore[type-arg]
        return cls(d["user"], int(d["uid"]), int(d["gid"]), [int(g) for g in d.get("groups", [])])


def resolve(user: str) -> Identity | None:
    """Look the user up in the host's user database (None if it does not exist here)."""
    try:
        pw = pwd.getpwnam(user) if not user.isdigit() else pwd.getpwuid(int(user))
    except KeyError:
        return None
    try:
        groups = os.getgrouplist(pw.pw_name, pw.pw_gid)
    except OSError:  # pragma: no cover
        groups = [pw.pw_gid] + [g.gr_gid for g in grp.getgrall() if pw.pw_name in g.gr_mem]
    return Identity(pw.pw_name, pw.pw_uid, pw.pw_gid, sorted(set(groups)))
