"""Remediation as plans of small actions: printed by default, applied with ``apply``, undone from a journal.

Every fix is computed from the current state (so running it twice changes nothing the second time), never
touches a ``.log`` file, and writes a journal of what it changed, with the state before, before it changes it:
``kafka-ops fix undo JOURNAL`` puts everything back in reverse order. Standard library only.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import shutil
import stat as statmod
import subprocess
from dataclasses import asdict, dataclass, field
from typing import Any

JOURNAL_DIRS = ("/var/lib/kafka-ops/journal", os.path.expanduser("~/.local/state/kafka-ops/journal"))


@dataclass
class Action:
    op: str  # chown | chmod | move | write | run
    path: str
    before: Any = None
    after: Any = None
    note: str = ""

    def describe(self) -> str:
        if self.op == "chown":
            return (
                f"chown {self.after[0]}:{self.after[1]} {self.path}   (was {self.before[0]}:{self.before[1]})"
            )
        if self.op == "chmod":
            return f"chmod {self.after:04o} {self.path}   (was {self.before:04o})"
        if self.op == "move":
            return f"mv {self.path} {self.after}"
        if self.op == "write":
            state = "new file" if self.before is None else "replaces the current content"
            return f"write {self.path} ({state}):\n" + "\n".join(
                "    " + line for line in str(self.after).splitlines()
            )
        if self.op == "run":
            return "run " + " ".join(self.after)
        return f"{self.op} {self.path}"  # pragma: no cover


@dataclass
class Plan:
    fix: str
    actions: list[Action] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    refused: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "fix": self.fix,
            "actions": [asdict(a) for a in self.actions],
            "notes": self.notes,
            "refused": self.refused,
        }


class FixError(Exception):
    pass


# ------------------------------------------------------------------ ownership


def plan_ownership(log_dirs: list[str], uid: int, gid: int) -> Plan:
    """chown every path under the log dirs to the broker user and give the owner rw (files) / rwx (dirs)."""
    plan = Plan("ownership")
    for top in log_dirs:
        if not os.path.isdir(top):
            plan.notes.append(f"{top}: not a directory, skipped")
            continue
        for dirpath, dirnames, filenames in os.walk(top):
            for path, is_dir in [(dirpath, True)] + [(os.path.join(dirpath, f), False) for f in filenames]:
                try:
                    st = os.lstat(path)
                except FileNotFoundError:
                    continue  # e.g. a checkpoint .tmp that a running broker renamed meanwhile
                if statmod.S_ISLNK(st.st_mode):
                    continue
                if (st.st_uid, st.st_gid) != (uid, gid):
                    plan.actions.append(Action("chown", path, [st.st_uid, st.st_gid], [uid, gid]))
                mode = statmod.S_IMODE(st.st_mode)
                want = mode | (0o700 if is_dir else 0o600)
                if want != mode:
                    plan.actions.append(Action("chmod", path, mode, want))
            dirnames.sort()
    return plan


# ------------------------------------------------------------------ systemd


def plan_systemd_dropin(
    unit_path: str, settings: dict[str, str], reload: bool = True, name: str = "kafka-ops.conf"
) -> Plan:
    """A drop-in ``<unit>.d/kafka-ops.conf`` with the given [Service] settings, then daemon-reload."""
    plan = Plan("systemd")
    unit = os.path.basename(unit_path)
    dropin_dir = os.path.join(os.path.dirname(os.path.abspath(unit_path)), f"{unit}.d")
    path = os.path.join(dropin_dir, name)
    content = (
        "# written by kafka-ops fix systemd: see `kafka-ops audit` (SYSD001-SYSD003)\n[Service]\n"
        + "".join(f"{k}={v}\n" for k, v in settings.items())
    )
    before = None
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            before = f.read()
    if before != content:
        plan.actions.append(Action("write", path, before, content))
        if reload and shutil.which("systemctl"):
            plan.actions.append(
                Action(
                    "run", "systemctl", None, ["systemctl", "daemon-reload"], "make systemd read the drop-in"
                )
            )
        elif reload:
            plan.notes.append("systemctl not found: run `systemctl daemon-reload` on the broker host")
    return plan


# ------------------------------------------------------------------ indexes


def plan_quarantine_indexes(segments: list[tuple[str, int]], quarantine: str, log_dirs: list[str]) -> Plan:
    """Move the index files of these (partition dir, base offset) segments to a quarantine folder.

    Both ``.index`` and ``.timeindex`` (and ``.txnindex``) go: a missing ``.index`` makes LogLoader.loadSegmentFiles
    call ``recoverSegment``, which rebuilds all three from the records (LogSegment.recover). Moving only the
    ``.timeindex`` would make the broker create it empty and use the ``.log``'s mtime instead (LogSegment.sanityCheck).
    """
    plan = Plan("indexes")
    q = os.path.abspath(quarantine)
    for d in log_dirs:
        d = os.path.abspath(d)
        if q == d or q.startswith(d.rstrip("/") + "/"):
            # a directory in a log dir that is not topic-partition stops the broker (LocalLog.parseTopicPartitionName)
            plan.refused = f"quarantine {q} is inside log dir {d}: the broker would refuse to start; choose another --quarantine"
            return plan
    seen = set()
    for part_dir, base in sorted(set(segments)):
        for suffix in (".index", ".timeindex", ".txnindex"):
            src = os.path.join(part_dir, f"{base:020d}{suffix}")
            if src in seen or not os.path.exists(src):
                continue
            seen.add(src)
            dst = os.path.join(
                q,
                os.path.basename(os.path.dirname(part_dir)),
                os.path.basename(part_dir),
                os.path.basename(src),
            )
            plan.actions.append(
                Action("move", src, None, dst, "the broker rebuilds it from the .log at start")
            )
    return plan


# ------------------------------------------------------------------ apply / undo


def default_journal_dir() -> str:
    for d in JOURNAL_DIRS:
        try:
            os.makedirs(d, exist_ok=True)
            if os.access(d, os.W_OK):
                return d
        except OSError:
            continue
    raise FixError("no writable journal dir: give --journal-dir")


def _write_journal(path: str, doc: dict[str, Any]) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=2)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def apply(plan: Plan, journal_dir: str | None = None) -> str | None:
    """Apply a plan; returns the journal path (None when there was nothing to do)."""
    if plan.refused:
        raise FixError(plan.refused)
    if not plan.actions:
        return None
    jdir = journal_dir or default_journal_dir()
    os.makedirs(jdir, exist_ok=True)
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S.%fZ")
    jpath = os.path.join(jdir, f"{stamp}-{plan.fix}.json")
    doc: dict[str, Any] = {
        "fix": plan.fix,
        "created": stamp,
        "host": os.uname().nodename,
        "done": [],
        "planned": len(plan.actions),
    }
    _write_journal(jpath, doc)
    for a in plan.actions:
        entry = asdict(a)
        if a.op == "chown":
            os.chown(a.path, a.after[0], a.after[1], follow_symlinks=False)
        elif a.op == "chmod":
            os.chmod(a.path, a.after)
        elif a.op == "move":
            os.makedirs(os.path.dirname(a.after), exist_ok=True)
            if os.path.exists(a.after):
                raise FixError(f"{a.after}: already exists in the quarantine, not overwriting")
            shutil.move(a.path, a.after)
        elif a.op == "write":
            os.makedirs(os.path.dirname(a.path), exist_ok=True)
            tmp = a.path + ".kafka-ops.tmp"
            with open(tmp, "w", encoding="utf-8") as f:
                f.write(a.after)
            os.chmod(tmp, 0o644)
            os.replace(tmp, a.path)
            entry["after_sha256"] = hashlib.sha256(a.after.encode()).hexdigest()
        elif a.op == "run":
            r = subprocess.run(a.after, capture_output=True, text=True)
            entry["returncode"] = r.returncode
            if r.returncode != 0:
                doc["done"].append(entry)
                _write_journal(jpath, doc)
                raise FixError(
                    f"{' '.join(a.after)} failed: {(r.stderr or r.stdout).strip().splitlines()[-1:] or r.returncode}"
                )
        doc["done"].append(entry)
        _write_journal(jpath, doc)  # after every action: an interrupted fix can still be undone
    return jpath


def undo(journal_path: str) -> list[str]:
    """Reverse a journal's actions, last first. Returns what was done."""
    try:
        with open(journal_path, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError) as exc:
        raise FixError(f"{journal_path}: not a readable kafka-ops journal ({exc})") from exc
    if doc.get("undone"):
        return []
    out = []
    for e in reversed(doc.get("done", [])):
        op, path = e["op"], e["path"]
        if op == "chown":
            os.chown(path, e["before"][0], e["before"][1], follow_symlinks=False)
            out.append(f"chown {e['before'][0]}:{e['before'][1]} {path}")
        elif op == "chmod":
            os.chmod(path, e["before"])
            out.append(f"chmod {e['before']:04o} {path}")
        elif op == "move":
            if os.path.exists(path):
                raise FixError(
                    f"{path} exists again (the broker rebuilt it?): not overwriting it with the quarantined copy"
                )
            shutil.move(e["after"], path)
            out.append(f"mv {e['after']} {path}")
        elif op == "write":
            if e["before"] is None:
                os.remove(path)
                out.append(f"rm {path}")
            else:
                with open(path, "w", encoding="utf-8") as f:
                    f.write(e["before"])
                out.append(f"restore {path}")
        elif op == "run":
            if e["after"] == ["systemctl", "daemon-reload"]:
                subprocess.run(e["after"], capture_output=True)
                out.append("systemctl daemon-reload")
    doc["undone"] = dt.datetime.now(dt.UTC).isoformat()
    _write_journal(journal_path, doc)
    return out
