"""Access decisions as the Linux kernel makes them, for a given user, from mode bits and POSIX ACLs.

Kernel order (fs/namei.c ``acl_permission_check`` / fs/posix_acl.c ``posix_acl_permission``): uid 0 bypasses
read/write checks (CAP_DAC_OVERRIDE; execute needs one x bit on files); the owner gets the owner bits (or
ACL_USER_OBJ); a named ACL_USER entry for the uid, masked by ACL_MASK; else if the owning group or any named
ACL_GROUP matching one of the user's groups grants the access (each masked), granted, and if some group
matched but none granted, denied; else the other bits. Without an ACL the group class is the owning group's
bits.

The ACL is read from the ``system.posix_acl_access`` xattr (binary: u32 version 2, then u16 tag, u16 perm,
u32 id little-endian; include/uapi/linux/posix_acl_xattr.h).
"""

from __future__ import annotations

import functools
import os
import stat as statmod
import struct
from collections.abc import Mapping
from typing import TYPE_CHECKING, Protocol

from kafka_ops.engine.compat import slotted
from kafka_ops.facts.identity import Identity

if TYPE_CHECKING:
    from kafka_ops.engine.logdir import FileInfo, Partition

R, W, X = 4, 2, 1
ACL_USER_OBJ, ACL_USER, ACL_GROUP_OBJ, ACL_GROUP, ACL_MASK, ACL_OTHER = 0x01, 0x02, 0x04, 0x08, 0x10, 0x20
_ENTRY = struct.Struct("<HHI")

AclEntry = tuple[int, int, int]  # (tag, perm, id)


def read_acl(path: str) -> list[AclEntry] | None:
    """The extended ACL of a path, or None when it has none (or xattrs are unsupported)."""
    try:
        raw = os.getxattr(path, "system.posix_acl_access", follow_symlinks=False)
    except OSError:
        return None
    return parse_acl(raw)


def parse_acl(raw: bytes) -> list[AclEntry] | None:
    if len(raw) < 4 or struct.unpack_from("<I", raw)[0] != 2:
        return None
    return [_ENTRY.unpack_from(raw, i) for i in range(4, len(raw) - _ENTRY.size + 1, _ENTRY.size)]


@slotted(frozen=True)
class Access:
    read: bool
    write: bool
    execute: bool
    via: str  # which rule decided: root, owner, acl_user, group, acl_group, other


_ACCESSES: dict[tuple[bool, bool, bool, str], Access] = {}
_MAX_DECIDED = 4096  # answers kept per identity (Identity.decided)


def _access(read: bool, write: bool, execute: bool, via: str) -> Access:
    """One Access per answer, shared (it is frozen): an audit with a broker user decides ~50 accesses per
    partition, and a frozen dataclass costs more to make than to look up."""
    key = (read, write, execute, via)
    made = _ACCESSES.get(key)
    if made is None:
        made = _ACCESSES[key] = Access(read, write, execute, via)
    return made


def decide(
    who: Identity, uid: int, gid: int, mode: int, acl: list[AclEntry] | None = None, is_dir: bool = False
) -> Access:
    if who.uid == 0:
        # CAP_DAC_OVERRIDE: read/write always; execute on a file only if some x bit is set; dirs always searchable
        return _access(True, True, is_dir or bool(mode & 0o111), "root")
    if uid == who.uid:
        bits = (mode >> 6) & 7
        return _access(bool(bits & R), bool(bits & W), bool(bits & X), "owner")
    if acl:
        mask = next((p for t, p, _ in acl if t == ACL_MASK), 7)
        for tag, perm, ident in acl:
            if tag == ACL_USER and ident == who.uid:
                p = perm & mask
                return _access(bool(p & R), bool(p & W), bool(p & X), "acl_user")
        matched = False
        best = 0
        group_obj = next((p for t, p, _ in acl if t == ACL_GROUP_OBJ), (mode >> 3) & 7)
        if gid in who.groups:
            matched = True
            best |= group_obj & mask
        for tag, perm, ident in acl:
            if tag == ACL_GROUP and ident in who.groups:
                matched = True
                best |= perm & mask
        if matched:
            # the kernel grants if one matching entry grants the whole request; per-bit union is equivalent
            # for single-bit requests, which is how the checks ask
            return _access(bool(best & R), bool(best & W), bool(best & X), "acl_group")
        other = next((p for t, p, _ in acl if t == ACL_OTHER), mode & 7)
        return _access(bool(other & R), bool(other & W), bool(other & X), "other")
    if gid in who.groups:
        bits = (mode >> 3) & 7
        return _access(bool(bits & R), bool(bits & W), bool(bits & X), "group")
    bits = mode & 7
    return _access(bool(bits & R), bool(bits & W), bool(bits & X), "other")


def access_for(
    who: Identity,
    f: FileInfo | PathFacts,
    acl: list[tuple[int, int, int]] | None,
    probe: Mapping[str, tuple[bool, ...]] | None = None,
) -> Access:
    """The broker user's access to a path: the kernel's own answer when it was probed, else computed."""
    if probe and f.path in probe:
        v = probe[f.path]
        return _access(bool(v[0]), bool(v[1]), bool(v[2]) if len(v) > 2 else False, "probe")
    if acl:
        return decide(who, f.uid, f.gid, f.mode, acl, f.is_dir)
    # without an ACL the answer is the identity's and the file's (owner, group, mode, type) alone: kept per identity
    key = (f.uid, f.gid, f.mode, f.is_dir)
    decided = who.decided
    a = decided.get(key)
    if a is None:
        a = decide(who, f.uid, f.gid, f.mode, None, f.is_dir)
        if len(decided) < _MAX_DECIDED:  # bounded: each owner, group and mode a hostile user sets is a key
            decided[key] = a
    return a  # type: ignore[return-value]


def partition_files(part: Partition) -> list[FileInfo]:
    """Every file of a partition dir the loader meets: the segments' files, the leftovers, the other files and
    the orphan indexes (the list the next-start plan's access pass and PERM001 both walk)."""
    return (
        [f for s in part.segments for f in s.files] + part.leftovers + part.other_files + part.orphan_indexes
    )


class PartitionAccess(Protocol):
    """What all_granted reads of a partition's facts (facts.model.PartitionFacts, which imports this module)."""

    part: Partition
    acls: dict[str, list[tuple[int, int, int]]]
    probe: dict[str, tuple[bool, bool, bool]]
    granted: bool | None


def all_granted(who: Identity, pf: PartitionAccess) -> bool:
    """Whether ``who`` can list, enter, read and write the partition's dir and read and write each of its files,
    as access_for decides: the answer for nearly every partition of a healthy host, asked once (kept in
    ``pf.granted``) so that the plan's access pass and PERM001 look file by file only when it is False."""
    if pf.granted is not None:
        return pf.granted
    acls, probe = pf.acls, pf.probe
    ok = True
    d = pf.part.dir_info
    if d is not None:
        a = access_for(who, d, acls.get(d.path) if acls else None, probe)
        ok = a.read and a.write and a.execute
    if ok:
        for f in partition_files(pf.part):
            if not f.is_dir:
                a = access_for(who, f, acls.get(f.path) if acls else None, probe)
                if not (a.read and a.write):
                    ok = False
                    break
    pf.granted = ok
    return ok


def owner_text(f: FileInfo | PathFacts) -> str:
    return f"{_owner_names(f.uid, f.gid)} mode {f.mode:04o}"


@functools.lru_cache(maxsize=64)
def _owner_names(uid: int, gid: int) -> str:
    """user:group of ids, looked up once per audit (a host of 20,000 unreadable partitions asked the user and
    group databases 200,000 times, a tenth of the audit's time)."""
    import grp
    import pwd

    try:
        u = pwd.getpwuid(uid).pw_name
    except KeyError:
        u = str(uid)
    try:
        g = grp.getgrgid(gid).gr_name
    except KeyError:
        g = str(gid)
    return f"{u}:{g}"


@slotted
class PathFacts:
    path: str
    uid: int
    gid: int
    mode: int
    is_dir: bool
    acl: list[tuple[int, int, int]] | None


def path_facts(path: str) -> PathFacts | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return PathFacts(
        path, st.st_uid, st.st_gid, statmod.S_IMODE(st.st_mode), statmod.S_ISDIR(st.st_mode), read_acl(path)
    )
