"""Small helpers for the permission and directory checks: group names and permission bits as text."""

from __future__ import annotations

import functools


@functools.lru_cache(maxsize=64)  # once per audit: the checks name the same few ids for each finding
def group_name(gid: int) -> str:
    import grp

    try:
        return grp.getgrgid(gid).gr_name
    except KeyError:
        return str(gid)


def rwx(bits: int) -> str:
    """3 permission bits as ``rw-``."""
    return "".join(c if bits & m else "-" for c, m in (("r", 4), ("w", 2), ("x", 1)))
