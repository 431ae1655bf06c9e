"""The write-ahead journal: `fix ownership --apply` and `fix undo` killed (SIGKILL) at random points, and a full
disk under the journal. After any of them, undo (run again, as often as needed) gives back exactly the tree there
was before: every change was either journaled and undone, or never made."""

from __future__ import annotations

import os
import random
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kafka_ops.remediate import fixes

UID = GID = 54321  # the broker user: a number is enough for chown
REPO = str(Path(__file__).resolve().parent.parent)

APPLY = """
import sys
from kafka_ops.remediate import fixes
if sys.argv[3] == "plan":  # the plan in memory, then applied (the collector's way)
    plan = fixes.plan_ownership([sys.argv[1]], 54321, 54321)
    print("go", flush=True)
    fixes.apply(plan, sys.argv[2])
else:  # planned and applied as it walks (the CLI's way)
    print("go", flush=True)
    fixes.apply_ownership_streaming([sys.argv[1]], 54321, 54321, journal_dir=sys.argv[2])
"""
UNDO = """
import sys
from kafka_ops.remediate import fixes
print("go", flush=True)
fixes.undo(sys.argv[1])
"""

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root to chown")


def make_tree(root: Path, partitions: int = 8, files: int = 250) -> None:
    modes = (0o400, 0o640, 0o444, 0o600, 0o4755)
    for p in range(partitions):
        d = root / f"topic-{p}"
        d.mkdir(parents=True)
        d.chmod(0o500 if p % 3 == 0 else 0o755)
        for i in range(files):
            f = d / f"{i:020d}.index"
            f.write_bytes(b"")
            f.chmod(modes[(i + p) % len(modes)])
    root.chmod(0o750)


def tree(root: Path) -> dict[str, tuple[int, int, int]]:
    out = {}
    for d, _dirs, files in os.walk(root):
        for p in [d] + [os.path.join(d, f) for f in files]:
            st = os.lstat(p)
            out[p] = (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode))
    return out


def without_setuid(state: dict[str, tuple[int, int, int]]) -> dict[str, tuple[int, int, int]]:
    """What undo gives back: the state before, except setuid/setgid, which kafka-ops never restores."""
    return {p: (u, g, m & ~(stat.S_ISUID | stat.S_ISGID)) for p, (u, g, m) in state.items()}


def undone(now: dict[str, tuple[int, int, int]], before: dict[str, tuple[int, int, int]]) -> list[str]:
    """Paths not as before (setuid/setgid may be gone: the fix strips them and undo never restores them)."""
    stripped = without_setuid(before)
    return [p for p in before if now.get(p) not in (before[p], stripped[p])] + sorted(set(now) - set(before))


@pytest.fixture
def fast_fs(tmp_path: Path):  # type: ignore[no-untyped-def]
    """A tmpfs for the trees and journals of the kill tests: a SIGKILL loses nothing of the page cache, so the
    disk's fsync only costs time here (and the machine is shared)."""
    mnt = tmp_path / "fast"
    mnt.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256m", "tmpfs", str(mnt)], capture_output=True)
    yield mnt
    if r.returncode == 0:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


def start(script: str, *args: str) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", script, *args],
        stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": REPO},
    )  # fmt: skip
    assert proc.stdout is not None and proc.stdout.readline() == "go\n"
    return proc


def killed_after(proc: subprocess.Popen[str], delay: float) -> None:
    time.sleep(delay)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)


def journals(jdir: Path) -> list[Path]:
    return sorted(jdir.glob("*.jsonl")) if jdir.exists() else []


def timed_run(script: str, *args: str) -> float:
    t0 = time.monotonic()
    proc = start(script, *args)
    t0 = time.monotonic()
    assert proc.wait(timeout=120) == 0
    return time.monotonic() - t0


def test_apply_killed_anywhere_is_undone_exactly(fast_fs: Path) -> None:
    tmp_path = fast_fs
    root = tmp_path / "logs"
    make_tree(root)
    original = tree(root)
    restored = without_setuid(original)
    # one whole run first: how long an apply takes here, and a clean undo
    whole = timed_run(APPLY, str(root), str(tmp_path / "j0"), "plan")
    assert all(u == UID for u, _g, _m in tree(root).values())
    (journal,) = journals(tmp_path / "j0")
    fixes.undo(str(journal))
    assert tree(root) == restored
    rng = random.Random(20)
    seen_partial = 0
    for attempt in range(30):
        jdir = tmp_path / f"j{attempt + 1}"
        way = ("plan", "stream")[attempt % 2]
        killed_after(start(APPLY, str(root), str(jdir), way), rng.uniform(0, whole * 1.1))
        changed = tree(root) != restored
        found = journals(jdir)
        if not found:
            assert not changed, f"attempt {attempt}: changes without a journal"
            continue
        (journal,) = found
        seen_partial += changed and any(u != UID for u, _g, _m in tree(root).values())
        fixes.undo(str(journal))
        assert tree(root) == restored, f"attempt {attempt}: not all undone"
        assert fixes.undo(str(journal)) == [], f"attempt {attempt}: a second undo found work"
        assert tree(root) == restored
    assert seen_partial, "no kill landed in the middle of an apply: the test did not test anything"


def test_undo_killed_anywhere_is_finished_by_the_next_undo(fast_fs: Path) -> None:
    tmp_path = fast_fs
    root = tmp_path / "logs"
    make_tree(root)
    restored = without_setuid(tree(root))
    rng = random.Random(21)
    whole = None
    seen_partial = 0
    for attempt in range(31):
        jdir = tmp_path / f"j{attempt}"
        journal = fixes.apply(fixes.plan_ownership([str(root)], UID, GID), str(jdir))
        assert journal is not None
        fixed = tree(root)
        if whole is None:  # the first: a whole undo, timed
            whole = timed_run(UNDO, journal)
            assert tree(root) == restored
            continue
        killed_after(start(UNDO, journal), rng.uniform(0, whole * 1.1))
        now = tree(root)
        seen_partial += now not in (fixed, restored)
        fixes.undo(journal)
        assert tree(root) == restored, f"attempt {attempt}: the undo after a killed undo did not finish"
        assert fixes.undo(journal) == []
    assert seen_partial, "no kill landed in the middle of an undo: the test did not test anything"


@pytest.fixture
def small_fs(tmp_path: Path):  # type: ignore[no-untyped-def]
    mnt = tmp_path / "small"
    mnt.mkdir()
    # mode 0700: a journal dir must be root's alone (a tmpfs root is 1777 by default, and is refused as one)
    r = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k,mode=0700", "tmpfs", str(mnt)], capture_output=True
    )
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {r.stderr.decode().strip()}")
    yield mnt
    subprocess.run(["umount", str(mnt)], check=False)


def test_a_full_journal_disk_stops_before_the_change_and_says_how_to_undo(
    tmp_path: Path, small_fs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "logs"
    make_tree(root, partitions=4, files=500)
    original = tree(root)
    monkeypatch.setattr(fixes, "BATCH_RECORDS", 50)  # a few batches fit in 64 KiB, not all of them
    with pytest.raises(fixes.JournalFull) as exc:
        fixes.apply(fixes.plan_ownership([str(root)], UID, GID), str(small_fs))
    message = str(exc.value)
    (journal,) = journals(small_fs)
    assert "disk is full" in message and "stopped before the next change" in message
    assert "change(s) were made and journaled: undo them with `kafka-ops fix undo " in message
    assert str(journal) in message and "\n" not in message
    assert not list(small_fs.glob("*.new")) and not list(small_fs.glob("*.tmp"))
    made = sum(1 for u, _g, _m in tree(root).values() if u == UID)
    assert 0 < made < len(original)
    out = fixes.undo(str(journal))  # on the same full disk
    assert undone(tree(root), original) == [], out[-3:]


def test_the_cli_on_a_full_journal_disk_says_so_in_one_line(tmp_path: Path, small_fs: Path) -> None:
    root = tmp_path / "logs"
    make_tree(root, partitions=2, files=400)
    before = tree(root)
    r = subprocess.run(
        [sys.executable, "-m", "kafka_ops.cli", "fix", "ownership", "--log-dir", str(root),
         "--broker-user", "nobody", "--apply", "--journal-dir", str(small_fs)],
        capture_output=True, text=True, env={**os.environ, "PYTHONPATH": REPO},
    )  # fmt: skip
    assert r.returncode == 1, r.stderr
    (line,) = r.stderr.splitlines()
    assert "disk is full" in line and "nothing was changed" in line and "Traceback" not in line
    assert tree(root) == before and list(small_fs.iterdir()) == []


def test_undo_cuts_a_torn_last_line_so_the_next_undo_can_read_the_journal(tmp_path: Path) -> None:
    """An apply killed while writing an intent leaves a torn last line. Undo reads past it, and since undo appends
    its own records, it cuts that line first: otherwise it would sit mid-file and the next undo would refuse the
    journal as damaged (seen once in test_apply_killed_anywhere_is_undone_exactly)."""
    root = tmp_path / "logs"
    make_tree(root, partitions=2, files=5)
    restored = without_setuid(tree(root))
    journal = fixes.apply(fixes.plan_ownership([str(root)], UID, GID), str(tmp_path / "j"))
    assert journal is not None
    with open(journal, "a") as f:
        f.write('{"n":999,"op":"own","path":"' + str(root))  # killed mid-line: no closing, no newline
    fixes.undo(str(journal))
    assert tree(root) == restored
    assert fixes.undo(str(journal)) == []  # read, not "damaged journal: line N is not JSON"
    lines = Path(journal).read_text().splitlines()
    assert not any('"n":999' in line for line in lines) and all(line.endswith("}") for line in lines)
