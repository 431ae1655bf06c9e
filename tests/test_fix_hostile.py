"""`fix ownership|indexes` and `fix undo` against a hostile broker user: it owns the log dirs and swaps names for
symlinks to root's files, hard-links them, plants FIFOs, while the fix runs as root. Nothing outside the log dir
may change, no setuid/setgid bit may come out of it, nothing may hang."""

from __future__ import annotations

import contextlib
import os
import pwd
import signal
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from kafka_ops.remediate import fixes

HOSTILE = "kopshostile"
SUID = stat.S_ISUID | stat.S_ISGID


def start_swapper(user: pwd.struct_passwd, part: Path, decoy: Path, names: list[str]) -> int:
    """A child process running as the hostile user on the partition dir it owns: swaps each victim for a symlink
    to the decoy, then for a new file of its own, in a tight loop until killed. Returns its pid once it runs."""
    dfd = os.open(part, os.O_RDONLY | os.O_DIRECTORY)
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover (the child)
        try:
            os.setgroups([])
            os.setgid(user.pw_gid)
            os.setuid(user.pw_uid)
            os.write(w, b"go")
            while True:
                for name in names:
                    try:
                        os.symlink(str(decoy), ".s", dir_fd=dfd)
                        os.rename(".s", name, src_dir_fd=dfd, dst_dir_fd=dfd)
                        f = os.open(".f", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644, dir_fd=dfd)
                        os.close(f)
                        os.rename(".f", name, src_dir_fd=dfd, dst_dir_fd=dfd)
                    except OSError:
                        for leftover in (".s", ".f"):
                            with contextlib.suppress(OSError):
                                os.unlink(leftover, dir_fd=dfd)
        finally:
            os._exit(0)
    os.close(dfd)
    os.close(w)
    assert os.read(r, 2) == b"go"
    os.close(r)
    return pid


@pytest.fixture(scope="module")
def hostile() -> Iterator[pwd.struct_passwd]:
    if os.geteuid() != 0:
        pytest.skip("needs root: the fix runs as root against another user")
    try:
        pwd.getpwnam(HOSTILE)
    except KeyError:
        subprocess.run(
            ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", HOSTILE], check=True
        )
    yield pwd.getpwnam(HOSTILE)
    subprocess.run(["userdel", HOSTILE], check=False)


@contextlib.contextmanager
def deadline(seconds: int) -> Iterator[None]:
    """Fail instead of hanging (an open of a FIFO without O_NONBLOCK would wait for a writer forever)."""

    def hung(_signum: int, _frame: object) -> None:
        raise TimeoutError(f"hung for more than {seconds} s")

    old = signal.signal(signal.SIGALRM, hung)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def state(p: Path) -> tuple[int, int, int]:
    st = os.lstat(p)
    return st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)


def decoys(tmp_path: Path) -> tuple[Path, Path]:
    """Root's: a 'binary' (0755) and a directory with files of the names a partition dir holds."""
    d = tmp_path / "decoy"
    d.mkdir()
    binary = d / "binary"
    binary.write_bytes(b"\x7fELF root's")
    binary.chmod(0o755)
    ddir = d / "dir"
    ddir.mkdir()
    ddir.chmod(0o755)
    for i in range(40):
        f = ddir / f"{i:020d}.index"
        f.write_bytes(b"root")
        f.chmod(0o644)
    return binary, ddir


def snapshot(root: Path) -> dict[str, tuple[int, int, int]]:
    out = {}
    for d, dirs, files in os.walk(root):
        for name in [*dirs, *files]:
            out[os.path.join(d, name)] = state(Path(d) / name)
    out[str(root)] = state(root)
    return out


def no_setuid_anywhere(root: Path) -> list[str]:
    return [
        p for p, (_u, _g, m) in snapshot(root).items() if m & SUID and not stat.S_ISLNK(os.lstat(p).st_mode)
    ]


def log_dir(tmp_path: Path, user: pwd.struct_passwd, files: int = 20) -> tuple[Path, Path, list[str]]:
    """A log dir of the hostile user with one partition dir: half its files root's (the fix chowns them), half
    the hostile user's with mode 6077 (the fix strips setuid/setgid and gives u+rw)."""
    top = tmp_path / "logs"
    part = top / "orders-0"
    part.mkdir(parents=True)
    for d in (top, part):
        os.chown(d, user.pw_uid, user.pw_gid)
    names = []
    for i in range(files):
        f = part / f"{i:020d}.index"
        f.write_bytes(b"x" * 8)
        if i % 2:
            os.chown(f, user.pw_uid, user.pw_gid)
            f.chmod(0o6077)
        else:
            f.chmod(0o400)
        names.append(f.name)
    return top, part, names


def test_symlink_swaps_during_apply_never_reach_roots_files(
    tmp_path: Path, hostile: pwd.struct_passwd
) -> None:
    binary, _ddir = decoys(tmp_path)
    decoy_before = snapshot(tmp_path / "decoy")
    raced = 0
    for attempt in range(50):
        base = tmp_path / f"try{attempt}"
        top, part, names = log_dir(base, hostile)
        plan = fixes.plan_ownership([str(top)], hostile.pw_uid, hostile.pw_gid)
        assert plan.actions
        swapper = start_swapper(hostile, part, binary, names)
        try:
            skipped: list[str] = []
            with deadline(30):
                journal = fixes.apply(plan, str(base / "journal"), on_skip=skipped.append)
        finally:
            os.kill(swapper, signal.SIGKILL)
            os.waitpid(swapper, 0)
        raced += bool(skipped)
        assert snapshot(tmp_path / "decoy") == decoy_before, f"attempt {attempt}: a decoy changed"
        assert no_setuid_anywhere(base) == [], f"attempt {attempt}"
        assert journal is not None
        with deadline(30):
            fixes.undo(journal)
        assert snapshot(tmp_path / "decoy") == decoy_before, f"attempt {attempt}: undo changed a decoy"
        assert no_setuid_anywhere(base) == [], f"attempt {attempt}: undo restored a setuid bit"
    assert raced, "the swapper never won a race: the test did not test anything"


def test_swaps_before_undo_are_left_alone(tmp_path: Path, hostile: pwd.struct_passwd) -> None:
    binary, ddir = decoys(tmp_path)
    decoy_before = snapshot(tmp_path / "decoy")
    top, part, names = log_dir(tmp_path, hostile)
    journal = fixes.apply(
        fixes.plan_ownership([str(top)], hostile.pw_uid, hostile.pw_gid), str(tmp_path / "j")
    )
    assert journal is not None
    # the broker user swaps a file for a symlink to root's binary, another for a new file of its own
    os.unlink(part / names[0])
    os.symlink(binary, part / names[0])
    (part / "new").write_bytes(b"new")
    os.chown(part / "new", hostile.pw_uid, hostile.pw_gid)
    os.chmod(part / "new", 0o600)  # as the fix left the file it replaces: only the inode tells them apart
    os.rename(part / "new", part / names[1])
    out = fixes.undo(journal)
    assert snapshot(tmp_path / "decoy") == decoy_before
    assert out.problems == 2
    assert any(line.startswith("left ") and names[0] in line and "symlink" in line for line in out)
    assert any(line.startswith("left ") and names[1] in line and "replaced" in line for line in out)
    # the others are back: root's again, mode 0400; the hostile user's 6077 came back without setuid/setgid
    assert state(part / names[2]) == (0, 0, 0o400)
    assert state(part / names[3]) == (hostile.pw_uid, hostile.pw_gid, 0o0077)
    assert no_setuid_anywhere(tmp_path) == []
    # then the partition dir itself becomes a symlink to root's dir: nothing undone through it
    journal = fixes.apply(
        fixes.plan_ownership([str(top)], hostile.pw_uid, hostile.pw_gid), str(tmp_path / "j")
    )
    assert journal is not None
    os.rename(part, top / "moved")
    os.symlink(ddir, part)
    ddir_before = snapshot(ddir)
    out = fixes.undo(journal)
    assert snapshot(ddir) == ddir_before and snapshot(tmp_path / "decoy") == decoy_before
    assert out.problems > 0 and all("orders-0/" not in line for line in out if not line.startswith("left "))


def test_symlinked_partition_dir_hard_link_and_fifo_are_left_alone(
    tmp_path: Path, hostile: pwd.struct_passwd
) -> None:
    binary, ddir = decoys(tmp_path)
    decoy_before = snapshot(tmp_path / "decoy")
    top, part, names = log_dir(tmp_path, hostile)
    os.symlink(ddir, top / "clicks-0")  # a partition dir that is a symlink to root's dir
    os.link(binary, part / "00000000000000000099.timeindex")  # a hard link to root's binary
    os.mkfifo(part / "00000000000000000098.index")  # a FIFO: opening it without O_NONBLOCK would hang
    os.symlink(binary, part / "00000000000000000097.index")
    with deadline(30):
        plan = fixes.plan_ownership([str(top)], hostile.pw_uid, hostile.pw_gid)
        notes = "\n".join(plan.notes)
        assert "clicks-0: a link" in notes and "2 hard links" in notes and "a fifo" in notes
        assert "00000000000000000097.index: a link" in notes
        assert all("decoy" not in a.path and "clicks-0" not in a.path for a in plan.actions)
        journal = fixes.apply(plan, str(tmp_path / "j"))
    assert snapshot(tmp_path / "decoy") == decoy_before
    assert state(part / names[0]) == (hostile.pw_uid, hostile.pw_gid, 0o600)
    assert stat.S_ISFIFO(os.lstat(part / "00000000000000000098.index").st_mode)
    # a FIFO swapped in for a planned file between plan and apply: skipped, no hang
    (part / "00000000000000000200.index").write_bytes(b"")
    plan = fixes.plan_ownership([str(top)], hostile.pw_uid, hostile.pw_gid)
    os.unlink(part / "00000000000000000200.index")
    os.mkfifo(part / "00000000000000000200.index")
    skipped: list[str] = []
    with deadline(30):
        fixes.apply(plan, str(tmp_path / "j"), on_skip=skipped.append)
    assert any("00000000000000000200.index" in s and "file type" in s for s in skipped), skipped
    assert state(part / "00000000000000000200.index")[0] == 0
    assert journal is not None
    with deadline(30):
        fixes.undo(journal)
    assert snapshot(tmp_path / "decoy") == decoy_before


def test_a_file_that_vanishes_between_plan_and_apply_is_gone_skipped(
    tmp_path: Path, hostile: pwd.struct_passwd
) -> None:
    top, part, names = log_dir(tmp_path, hostile)
    plan = fixes.plan_ownership([str(top)], hostile.pw_uid, hostile.pw_gid)
    os.unlink(part / names[4])  # a running broker deletes a segment
    skipped: list[str] = []
    journal = fixes.apply(plan, str(tmp_path / "j"), on_skip=skipped.append)
    assert skipped == [f"{part / names[4]}: gone, skipped"]
    assert all(state(part / n)[:2] == (hostile.pw_uid, hostile.pw_gid) for n in names if n != names[4])
    assert journal is not None
    fixes.undo(journal)
    assert state(part / names[6]) == (0, 0, 0o400)


def test_undo_of_indexes_never_moves_files_through_a_symlinked_partition_dir(
    tmp_path: Path, hostile: pwd.struct_passwd
) -> None:
    _binary, ddir = decoys(tmp_path)
    ddir_before = sorted(os.listdir(ddir))
    top, part, _names = log_dir(tmp_path, hostile, files=0)
    for suffix in (".log", ".index", ".timeindex"):
        (part / f"{0:020d}{suffix}").write_bytes(b"data")
    plan = fixes.plan_quarantine_indexes([(str(part), 0)], str(tmp_path / "q"), [str(top)])
    assert [os.path.basename(a.path) for a in plan.actions] == [f"{0:020d}.index", f"{0:020d}.timeindex"]
    journal = fixes.apply(plan, str(tmp_path / "j"))
    assert journal is not None
    assert sorted(os.listdir(part)) == [f"{0:020d}.log"]
    os.rename(part, top / "elsewhere")
    os.symlink(ddir, part)  # the partition dir is now a symlink to root's dir
    out = fixes.undo(journal)
    assert sorted(os.listdir(ddir)) == ddir_before
    assert out.problems == 2 and all("symlink" in line for line in out)
    # the broker user puts the dir back: undo (again) finishes the job
    os.unlink(part)
    os.rename(top / "elsewhere", part)
    out = fixes.undo(journal)
    assert out.problems == 0 and sorted(os.listdir(part)) == sorted(
        f"{0:020d}{s}" for s in (".log", ".index", ".timeindex")
    )


def test_hostile_names_print_as_one_shell_word_on_one_line(
    tmp_path: Path, hostile: pwd.struct_passwd
) -> None:
    top, part, _names = log_dir(tmp_path, hostile, files=0)
    odd = [b"a\nchmod 4755 x", b"\xff\xfe.index", b"it's $(id).index"]
    for raw in odd:
        fd = os.open(os.fsencode(str(part)) + b"/" + raw, os.O_CREAT | os.O_WRONLY, 0o400)
        os.close(fd)
    plan = fixes.plan_ownership([str(top)], hostile.pw_uid, hostile.pw_gid)
    lines = [a.describe() for a in plan.actions]
    assert len(lines) == 2 * len(odd)  # a chown and a chmod each
    for line in lines:
        assert "\n" not in line and line.isprintable()
        line.encode("utf-8")  # printable on any terminal: no lone surrogates
    assert any("$'" in line and "\\x0a" in line for line in lines)
    assert any("\\xff\\xfe" in line for line in lines)
    assert any("/it'\"'\"'s $(id).index'" in line for line in lines)
    journal = fixes.apply(plan, str(tmp_path / "j"))
    assert journal is not None
    assert all(
        state(Path(os.fsdecode(os.fsencode(str(part)) + b"/" + raw)))[0] == hostile.pw_uid for raw in odd
    )
    fixes.undo(journal)
    assert all(state(Path(os.fsdecode(os.fsencode(str(part)) + b"/" + raw)))[0] == 0 for raw in odd)
