"""The rehearsal's scratch space: where it lives, how much it needs, and the sweep of a killed run's leftovers.

The scratch holds the overlays' upper and work dirs, the sandbox's config and the broker's own log. It must be
root's: a dir the broker user could write would let it plant links where we write. A killed run leaves no mount
and no process (the namespaces die with their last process, rehearsal.md §7) but leaves its scratch dir on disk:
the next run removes it (:func:`sweep`) and says so.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from dataclasses import dataclass

DEFAULT_SCRATCH = "/var/lib/kafka-ops/rehearse"
RUN_PREFIX = "run-"
OWNER_FILE = "owner"
MARGIN_BYTES = 64 * 1024 * 1024  # the broker's own log, the metadata log's new records, checkpoints
REFLINK_FS = ("btrfs",)  # XFS only with reflink=1 (xfs_info)


class ScratchError(RuntimeError):
    """The scratch space cannot be used (one line naming why)."""


def _starttime(pid: int) -> str | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            text = f.read().decode("ascii", "replace")
    except OSError:
        return None
    return text.rsplit(")", 1)[1].split()[19]  # field 22, counted after the comm field


def prepare_root(path: str, log_dirs: list[str]) -> str:
    """Make (or check) the scratch root: every component a real dir owned by root that no one else can write
    (sticky dirs such as /tmp allowed: no one can rename our entry in them), itself 0711 root, and neither
    inside a log dir nor holding one. Returns its absolute path."""
    path = os.path.abspath(path)
    if any(c in path for c in ",:\\\n"):
        raise ScratchError(f"--scratch {path!r}: a path with ',', ':' or '\\' cannot be an overlay layer")
    for d in log_dirs:
        real = os.path.abspath(d)
        if path == real or path.startswith(real.rstrip("/") + "/") or real.startswith(path.rstrip("/") + "/"):
            raise ScratchError(f"--scratch {path}: it must be outside the log dirs ({real} is a log dir)")
    parts = path.strip("/").split("/")
    cur = "/"
    for i, name in enumerate(parts):
        cur = os.path.join(cur, name)
        try:
            st = os.lstat(cur)
        except FileNotFoundError:
            os.mkdir(cur, 0o755 if i < len(parts) - 1 else 0o711)
            st = os.lstat(cur)
        if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode):
            raise ScratchError(f"--scratch {path}: {cur} is not a directory (links are not followed)")
        if st.st_uid != 0:
            raise ScratchError(f"--scratch {path}: {cur} is owned by uid {st.st_uid}, not root")
        parent_writable = st.st_mode & 0o022 and not st.st_mode & stat.S_ISVTX
        if parent_writable and i < len(parts) - 1:
            raise ScratchError(f"--scratch {path}: {cur} can be written by others")
    os.chmod(path, 0o711)  # the broker user traverses to its config and log, lists nothing
    return path


def check_traverse(root: str, user: str) -> None:
    """The broker user must reach its config and log under ``root``: every component searchable by it."""
    import grp
    import pwd

    pw = pwd.getpwnam(user)
    gids = {pw.pw_gid} | {g.gr_gid for g in grp.getgrall() if user in g.gr_mem}
    cur = "/"
    for name in root.strip("/").split("/"):
        cur = os.path.join(cur, name)
        st = os.lstat(cur)
        ok = (
            st.st_mode & 0o001
            or (st.st_mode & 0o010 and st.st_gid in gids)
            or (st.st_mode & 0o100 and st.st_uid == pw.pw_uid)
        )
        if not ok:
            raise ScratchError(
                f"--scratch {root}: the broker user {user} cannot enter {cur} (mode {stat.S_IMODE(st.st_mode):o}), "
                "and the sandboxed broker reads its config and writes its log under the scratch"
            )


def new_run(root: str) -> str:
    """A fresh run dir under ``root``, marked with our pid and its start time (for :func:`sweep`)."""
    me = os.getpid()
    run = os.path.join(root, f"{RUN_PREFIX}{me}-{os.urandom(4).hex()}")
    os.mkdir(run, 0o711)
    with open(os.path.join(run, OWNER_FILE), "w") as f:
        f.write(f"{me} {_starttime(me)}\n")
    return run


def _mounted_anywhere(path: str) -> bool:
    """Whether any process's mount table still names ``path`` (then its namespace lives: do not remove)."""
    needle = path.rstrip("/") + "/"
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/mountinfo", "rb") as f:
                data = f.read()
        except OSError:
            continue
        if needle.encode() in data or f" {path} ".encode() in data:
            return True
    return False


def sweep(root: str) -> list[str]:
    """Remove the run dirs whose rehearsal is gone (its process dead or another process on its pid) and that no
    mount table names; the paths removed."""
    removed = []
    for name in sorted(os.listdir(root)):
        run = os.path.join(root, name)
        if not name.startswith(RUN_PREFIX) or os.path.islink(run) or not os.path.isdir(run):
            continue
        try:
            with open(os.path.join(run, OWNER_FILE), "rb") as f:
                pid_text, start = [*f.read().decode("ascii", "replace").split(), "", ""][:2]
        except OSError:
            pid_text, start = "", ""
        if pid_text.isdigit() and _starttime(int(pid_text)) == start:
            continue  # a rehearsal still running
        if _mounted_anywhere(run):
            continue
        detach_loops(run)
        shutil.rmtree(run, ignore_errors=True)  # never follows links (fd-based where the platform allows)
        removed.append(run)
    return removed


def _fs_of(path: str) -> tuple[str, str]:
    """(filesystem type, mount point) of the mount holding ``path``, from /proc/self/mountinfo."""
    dev = os.stat(path).st_dev
    want = f"{os.major(dev)}:{os.minor(dev)}"
    best = ("", "")
    with open("/proc/self/mountinfo") as f:
        for line in f:
            left, _, right = line.partition(" - ")
            fields = left.split()
            if len(fields) > 4 and fields[2] == want:
                point = fields[4].encode().decode("unicode_escape")
                if path.startswith(point) and len(point) >= len(best[1]):
                    best = (right.split()[0], point)
    return best


def reflinks(path: str) -> bool:
    """Whether copies on the filesystem holding ``path`` can clone extents (btrfs; XFS with reflink=1)."""
    fstype, point = _fs_of(path)
    if fstype in REFLINK_FS:
        return True
    if fstype == "xfs" and shutil.which("xfs_info"):
        out = subprocess.run(["xfs_info", point], capture_output=True, text=True, check=False).stdout
        return "reflink=1" in out
    return False


@dataclass
class Estimate:
    data_bytes: int  # regular files in the overlaid dirs
    needed_bytes: int  # the worst-case copy-up, plus a margin
    free_bytes: int
    reflink: bool
    why: str


def tree_bytes(path: str) -> int:
    """Bytes of the regular files under ``path`` (links not followed, other mounts not entered)."""
    total = 0
    try:
        top = os.lstat(path).st_dev
    except OSError:
        return 0
    for base, dirs, files in os.walk(path, followlinks=False):
        for name in files:
            try:
                st = os.lstat(os.path.join(base, name))
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode) and st.st_dev == top:
                total += st.st_size
        dirs[:] = [d for d in dirs if os.lstat(os.path.join(base, d)).st_dev == top]
    return total


def estimate(root: str, dirs: list[str]) -> Estimate:
    """The worst-case copy-up: overlayfs copies a file up whole when it is opened for writing and Kafka opens
    every segment read-write at load (``LogSegment.java@3.9.1:880``, ``FileRecords.java@3.9.1:459-467``), so
    the whole data size, unless the scratch shares a reflink-capable filesystem with every dir (the copy-up then
    clones extents: rehearsal.md §7 measured -152 KB for 254 MB on XFS)."""
    data = sum(tree_bytes(d) for d in dirs)
    dev = os.stat(root).st_dev
    same = all(os.stat(d).st_dev == dev for d in dirs)
    clone = same and reflinks(root)
    vfs = os.statvfs(root)
    free = vfs.f_bavail * vfs.f_frsize
    if clone:
        why = "the scratch is on the log dirs' own reflink-capable filesystem: copy-up clones extents"
        needed = MARGIN_BYTES
    else:
        why = "overlayfs copies up every segment Kafka opens read-write: the whole data size"
        needed = data + MARGIN_BYTES
    return Estimate(data, needed, free, clone, why)


def used_bytes(path: str) -> int:
    """Disk blocks used by the files under ``path`` (du's number)."""
    total = 0
    for base, dirs, files in os.walk(path, followlinks=False):
        for name in dirs + files:
            try:
                total += os.lstat(os.path.join(base, name)).st_blocks * 512
            except OSError:
                pass
    return total


# The writable layer holds no more than the real filesystem's free bytes and inodes (issue 38, "the same
# environment as the real start"): each real filesystem's upper and work dirs live on a sparse ext4 image in the
# scratch, loop-mounted inside the sandbox's mount namespace (``mount -o loop`` sets the loop device's autoclear
# flag: when the namespace dies, its mount goes and the kernel detaches the device, on every exit path, SIGKILL
# included). The image holds the copy-up of the lower files (overlayfs copies a file up whole when Kafka opens it
# read-write; the real start needs no room for that) plus the real free bytes for the broker user (f_bavail: a
# non-root user does not get the reserved blocks), and the lower entries plus the real free inodes (f_favail).
# Where the scratch shares a reflink-capable filesystem with the dirs, no image: the upper is on the real
# filesystem, whose free space is the real one and the copy-up clones extents.
IMAGE_BLOCK = 4096
IMAGE_SPARE_INODES = 16  # the image's root, lost+found, the upper and work dirs and overlayfs' own


@dataclass
class Image:
    path: str  # the image file in the run dir
    mount: str  # where the sandbox mounts it (a dir in the run dir)
    dirs: list[str]  # the real dirs (on one filesystem) whose layers it holds
    real_free_bytes: int
    real_free_inodes: int
    copy_up_bytes: int
    copy_up_inodes: int
    free_bytes: int  # the image's own free bytes and inodes, as mkfs made them
    free_inodes: int
    capped: bool  # the scratch's room was less than what the image should hold


def _lower_usage(path: str) -> tuple[int, int]:
    """(bytes a copy-up of every file and dir under ``path`` takes on a 4 KiB-block filesystem, entries)."""
    blocks = entries = 0
    try:
        top = os.lstat(path).st_dev
    except OSError:
        return 0, 0
    for base, dirs, files in os.walk(path, followlinks=False):
        for name in dirs + files:
            try:
                st = os.lstat(os.path.join(base, name))
            except OSError:
                continue
            entries += 1
            if stat.S_ISREG(st.st_mode):
                blocks += -(-st.st_size // IMAGE_BLOCK)
            elif stat.S_ISDIR(st.st_mode):
                blocks += 1
        dirs[:] = [d for d in dirs if os.lstat(os.path.join(base, d)).st_dev == top]
    return blocks * IMAGE_BLOCK, entries + 1


def _mkfs(path: str, size: int, inodes: int) -> tuple[int, int]:
    """A sparse ext4 image of ``size`` bytes and at least ``inodes`` inodes; (its free bytes, free inodes)."""
    with open(path, "wb") as f:
        f.truncate(size)
    # -m 0: no blocks reserved for root (the broker user's share is what f_bavail gave); no journal: a
    # throwaway filesystem, and the journal's blocks would be less room; -N: the inode count
    subprocess.run(
        ["mkfs.ext4", "-q", "-F", "-m", "0", "-O", "^has_journal", "-b", str(IMAGE_BLOCK), "-N", str(inodes),
         "-E", "lazy_itable_init=1,nodiscard", path],
        check=True, capture_output=True,
    )  # fmt: skip
    out = subprocess.run(["dumpe2fs", "-h", path], check=True, capture_output=True, text=True).stdout
    fields = dict(line.split(":", 1) for line in out.splitlines() if ":" in line)
    return int(fields["Free blocks"]) * IMAGE_BLOCK, int(fields["Free inodes"])


def make_images(run: str, dirs: list[str], clone: bool) -> list[Image]:
    """One image per real filesystem of ``dirs`` (dirs on one filesystem share its free space), sized to its free
    bytes and inodes plus the copy-up; none when ``clone`` (see above)."""
    if clone:
        return []
    groups: dict[int, list[str]] = {}
    for d in dirs:
        if os.statvfs(d).f_flag & os.ST_RDONLY:
            continue  # not overlaid: read-only in the sandbox as on the host
        groups.setdefault(os.stat(d).st_dev, []).append(d)
    room = max(0, os.statvfs(run).f_bavail * os.statvfs(run).f_frsize - MARGIN_BYTES)
    images = []
    for n, members in enumerate(groups.values()):
        vfs = os.statvfs(members[0])
        free_b, free_i = vfs.f_bavail * vfs.f_frsize, vfs.f_favail
        used = [_lower_usage(d) for d in members]
        up_b, up_i = sum(u[0] for u in used), sum(u[1] for u in used)
        want_b = up_b + free_b + IMAGE_BLOCK * (2 * len(members) + 2)  # upper/work roots, the image's root
        want_i = up_i + free_i + IMAGE_SPARE_INODES * len(members)
        capped = want_b > room
        want_b = min(want_b, room)
        path = os.path.join(run, f"fs-{n}.img")
        size = want_b + want_b // 16 + 8 * IMAGE_BLOCK + want_i * 256  # a first guess at ext4's own overhead
        size = -(-size // IMAGE_BLOCK) * IMAGE_BLOCK
        got_b, got_i = _mkfs(path, size, want_i)
        if got_b != want_b:  # the overhead, now known, is nearly the same for the corrected size
            size = max(size + (want_b - got_b), 64 * IMAGE_BLOCK)
            got_b, got_i = _mkfs(path, size, want_i)
        os.chmod(path, 0o600)
        mount = os.path.join(run, f"fs-{n}")
        os.mkdir(mount, 0o711)
        images.append(Image(path, mount, members, free_b, free_i, up_b, up_i, got_b, got_i, capped))
    return images


def detach_loops(run: str) -> list[str]:
    """Detach the loop devices whose backing file is under ``run`` (a killed run's, if the kernel's autoclear
    had not done it); the devices detached."""
    out = []
    base = "/sys/block"
    try:
        names = [n for n in os.listdir(base) if n.startswith("loop")]
    except OSError:
        return out
    prefix = run.rstrip("/") + "/"
    for name in names:
        try:
            with open(os.path.join(base, name, "loop", "backing_file")) as f:
                backing = f.read().strip()
        except OSError:
            continue
        if backing.startswith(prefix):
            subprocess.run(["losetup", "-d", f"/dev/{name}"], capture_output=True, check=False)
            out.append(f"/dev/{name}")
    return out
