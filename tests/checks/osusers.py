"""Real users, groups and POSIX ACLs for the permission checks' tests (needs root).

``broker_users`` (session) creates, with unique names, and removes at the end:
* ``broker``: the broker user, primary group ``broker``, also a member of ``shared``;
* ``other``: another user with its own group ``other`` (the owner of "foreign" files);
* ``shared``: a group the broker user belongs to as a supplementary group.

``open_tmp``: a directory whose every ancestor other users can traverse. pytest's ``tmp_path`` lives under
``/tmp/pytest-of-root`` (mode 0700, root): a non-root broker user cannot traverse it, which PERM003 rightly reports,
so the simulated hosts of PERM003's tests live here instead (removed at the end of the test).

ACLs are set with ``os.setxattr(path, "system.posix_acl_access", ...)`` in the kernel's binary format
(include/uapi/linux/posix_acl_xattr.h: u32 version 2, then per entry u16 tag, u16 perm, u32 id; entries sorted
by tag then id), so no ``acl`` package is needed.
"""

from __future__ import annotations

import os
import shutil
import stat
import struct
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from kafka_ops.facts.access import ACL_GROUP, ACL_GROUP_OBJ, ACL_MASK, ACL_OTHER, ACL_USER, ACL_USER_OBJ

UNDEFINED_ID = 0xFFFFFFFF


@dataclass(frozen=True)
class Principal:
    name: str
    uid: int
    gid: int


@dataclass(frozen=True)
class Users:
    broker: Principal
    other: Principal
    shared_gid: int
    shared_group: str


_state: dict[str, object] = {"refs": 0, "users": None}


def _run(*cmd: str) -> None:
    subprocess.run(cmd, check=True, capture_output=True, text=True)


def _create() -> Users:
    import grp
    import pwd

    tag = uuid.uuid4().hex[:8]
    b, o, s = f"kob{tag}", f"koo{tag}", f"kos{tag}"
    _run("groupadd", s)
    _run("useradd", "--no-create-home", "--shell", "/usr/sbin/nologin", "--user-group", "--groups", s, b)
    _run("useradd", "--no-create-home", "--shell", "/usr/sbin/nologin", "--user-group", o)
    pb, po = pwd.getpwnam(b), pwd.getpwnam(o)
    return Users(
        Principal(b, pb.pw_uid, pb.pw_gid), Principal(o, po.pw_uid, po.pw_gid), grp.getgrnam(s).gr_gid, s
    )


def _remove(u: Users) -> None:
    for name in (u.broker.name, u.other.name):
        subprocess.run(["userdel", name], capture_output=True)  # --user-group: removes its group too
    for name in (u.shared_group, u.broker.name, u.other.name):
        subprocess.run(["groupdel", name], capture_output=True)  # already gone is fine


@pytest.fixture(scope="session")
def broker_users() -> Iterator[Users]:
    """Imported by several test modules: each import is its own fixture, so share one set of users."""
    if os.geteuid() != 0 or shutil.which("useradd") is None:
        pytest.skip("needs root and useradd to create real users")
    if _state["users"] is None:
        _state["users"] = _create()
    _state["refs"] = int(_state["refs"]) + 1  # type: ignore[call-overload]
    try:
        yield _state["users"]  # type: ignore[misc]
    finally:
        _state["refs"] = int(_state["refs"]) - 1  # type: ignore[call-overload]
        if _state["refs"] == 0:
            _remove(_state["users"])  # type: ignore[arg-type]
            _state["users"] = None


@pytest.fixture
def open_tmp() -> Iterator[Path]:
    base = Path(tempfile.mkdtemp(prefix="kafka-ops-perm-"))
    try:
        base.chmod(0o755)
        for p in base.parents:
            if not os.stat(p).st_mode & stat.S_IXOTH:
                pytest.skip(f"{p} is not traversable by other users: no place for a simulated host")
        yield base
    finally:
        shutil.rmtree(base, ignore_errors=True)


def acl_bytes(entries: list[tuple[int, int, int]]) -> bytes:
    """``system.posix_acl_access`` value from (tag, perm, id) entries (ids of unnamed entries ignored)."""
    named = (ACL_USER, ACL_GROUP)
    fixed = [(t, p, i if t in named else UNDEFINED_ID) for t, p, i in entries]
    return struct.pack("<I", 2) + b"".join(
        struct.pack("<HHI", *e) for e in sorted(fixed, key=lambda e: (e[0], e[2]))
    )


def set_acl(
    path: str | Path,
    *,
    user: int = 6,
    group: int = 0,
    other: int = 0,
    mask: int = 7,
    named_users=(),
    named_groups=(),
) -> None:  # type: ignore[no-untyped-def]
    """Set an access ACL: owner/group/other bits plus named user/group entries ``[(id, perm)]`` and a mask."""
    entries = [(ACL_USER_OBJ, user, 0), (ACL_GROUP_OBJ, group, 0), (ACL_MASK, mask, 0), (ACL_OTHER, other, 0)]
    entries += [(ACL_USER, p, i) for i, p in named_users] + [(ACL_GROUP, p, i) for i, p in named_groups]
    os.setxattr(str(path), "system.posix_acl_access", acl_bytes(entries))


def kernel_can(user: Principal, groups: list[int], path: str | Path, mode: int) -> bool:
    """Ask the kernel itself (a child process running as ``user``): os.access(path, mode)."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - child
        code = 2
        try:
            os.setgroups(groups)
            os.setgid(user.gid)
            os.setuid(user.uid)
            code = 0 if os.access(str(path), mode) else 1
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status) == 0
