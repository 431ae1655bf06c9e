"""Mount points, mount options and free space (bytes and inodes) of a path, from /proc/self/mountinfo (proc(5))
and statvfs."""

from __future__ import annotations

import os

from kafka_ops.engine.compat import slotted


@slotted
class MountFacts:
    path: str
    mount_point: str
    fstype: str
    source: str
    is_mount_point: bool  # the path itself is a mount point
    on_root_fs: bool  # the path lives on the filesystem mounted at /
    total_bytes: int | None
    free_bytes: int | None  # available to unprivileged users (f_bavail)
    # the mount's per-mount and superblock options (mountinfo fields 6 and 11), "" when not read; a filesystem
    # remounted read-only after I/O errors (ext4 errors=remount-ro) has "ro" in its superblock options only
    options: str = ""
    free_inodes: int | None = None  # available to unprivileged users (f_favail)
    free_bytes_root: int | None = (
        None  # f_bfree: what a broker running as root can still use (reserved blocks)
    )

    @property
    def read_only(self) -> bool | None:
        if not self.options:
            return None
        return "ro" in self.options.split(",")

    def to_dict(self) -> dict[str, object]:
        return {
            "path": self.path, "mount_point": self.mount_point, "fstype": self.fstype, "source": self.source,
            "is_mount_point": self.is_mount_point, "on_root_fs": self.on_root_fs,
            "total_bytes": self.total_bytes, "free_bytes": self.free_bytes, "read_only": self.read_only,
            "free_inodes": self.free_inodes,
        }  # fmt: skip


def _unescape(s: str) -> str:
    # mountinfo escapes space, tab, newline and backslash as octal
    out, i = [], 0
    while i < len(s):
        if s[i] == "\\" and i + 3 < len(s) and s[i + 1 : i + 4].isdigit():
            out.append(chr(int(s[i + 1 : i + 4], 8)))
            i += 4
        else:
            out.append(s[i])
            i += 1
    return "".join(out)


def read_mountinfo(path: str = "/proc/self/mountinfo") -> list[tuple[str, ...]]:
    """[(mount point, fstype, source, options)] in mount order; options are the per-mount options and the
    superblock options joined by a comma."""
    out: list[tuple[str, ...]] = []
    try:
        with open(path) as f:
            for line in f:
                left, _, right = line.partition(" - ")
                fields = left.split()
                rf = right.split()
                if len(fields) >= 5 and len(rf) >= 2:
                    opts = fields[5] if len(fields) > 5 else ""
                    if len(rf) >= 3:
                        opts = f"{opts},{rf[2]}"
                    out.append((_unescape(fields[4]), rf[0], _unescape(rf[1]), opts))
    except OSError:
        pass
    return out


def mount_of(path: str, mounts: list[tuple[str, ...]] | None = None) -> MountFacts:
    real = os.path.realpath(path)
    mounts = read_mountinfo() if mounts is None else mounts
    best: tuple[str, ...] = ("/", "unknown", "unknown", "")
    for m in mounts:  # the last, longest matching mount wins (stacked mounts)
        mp = m[0]
        if real == mp or real.startswith(mp.rstrip("/") + "/") or mp == "/":
            if len(mp) >= len(best[0]):
                best = (*m[:3], m[3] if len(m) > 3 else "")
    total = free = inodes = free_root = None
    try:
        st = os.statvfs(real)
        total, free = st.f_blocks * st.f_frsize, st.f_bavail * st.f_frsize
        free_root = st.f_bfree * st.f_frsize
        inodes = st.f_favail if st.f_files else None  # f_files 0: a filesystem without inode counts (btrfs)
    except OSError:
        pass
    return MountFacts(
        real,
        best[0],
        best[1],
        best[2],
        best[0] == real,
        best[0] == "/",
        total,
        free,
        best[3],
        inodes,
        free_root,
    )


def _fstab_field(s: str) -> str:
    return _unescape(s)  # fstab(5) escapes spaces as \040, as mountinfo does


def configured_mounts(
    fstab: str = "/etc/fstab", unit_dirs: tuple[str, ...] = ("/etc/systemd/system", "/run/systemd/system")
) -> list[tuple[str, str]]:
    """Mount points the host is configured to mount: [(mount point, where it is configured)], from /etc/fstab
    (fstab(5): the second field; swap and ``none`` skipped) and systemd ``.mount`` units (``Where=``)."""
    out: list[tuple[str, str]] = []
    try:
        with open(fstab) as f:
            for n, line in enumerate(f, start=1):
                fields = line.split("#", 1)[0].split()
                if len(fields) >= 3 and fields[1].startswith("/") and fields[2] != "swap":
                    out.append((os.path.normpath(_fstab_field(fields[1])), f"{fstab}:{n}"))
    except OSError:
        pass
    for d in unit_dirs:
        try:
            names = sorted(os.listdir(d))
        except OSError:
            continue
        for name in names:
            if not name.endswith(".mount"):
                continue
            path = os.path.join(d, name)
            try:
                with open(path) as f:
                    for line in f:
                        key, _, value = line.strip().partition("=")
                        if key.strip() == "Where" and value.strip().startswith("/"):
                            out.append((os.path.normpath(value.strip()), path))
            except OSError:
                continue
    return out


def mem_total_bytes(path: str = "/proc/meminfo") -> int | None:
    try:
        with open(path) as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return None
