"""The product's rehearsal (``kafka_ops.rehearse``) on a lab trial's planted files, before the real start on the
same files: issue 38's first test ("the rehearsal's outcome equals the real start's outcome, and the real files are
unchanged").

:func:`rehearse_trial` runs the library call on the stopped lab broker (root only: the sandbox mounts overlays) and
checks, with the lab's own snapshot (size, mode, owner, mtime, inode and content hash of every entry), that the
files are byte-identical after it; :func:`compare_rehearsal` compares its ``observed`` with what the real start did
(kafka_lab.observe's ``next_start``), as far as the rehearsal observes: starts or exits, each log dir's state, the
segments deleted, recovered and rebuilt. When they disagree, the rehearsal is wrong (it is the same broker).
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kafka_lab.broker import LabBroker, jar_dir_for, java, lab_root
from kafka_lab.observe import Snapshot, snapshot
from kafka_ops.engine.layout import METADATA_TOPIC
from kafka_ops.rehearse import compare

# A trial that does not wait for retention: watch the rehearsed start this long after its ready line (its load,
# the dirs' states and recovery's deletions are all logged before it)
SHORT_WINDOW_S = 2.0
HEAP = "384m"
# after the first retention pass: its lines (the lab checks retention every second)
RETENTION_MARGIN_S = 5.0
# deletions made by LogManager's retention pass: compared only where the rehearsal's window covered that pass
_RETENTION = {"retention.ms", "retention.bytes", "log_start_offset"}


@dataclass
class Rehearsed:
    """What the rehearsal of one trial said, and whether the real files survived it."""

    observed: dict[str, Any] | None  # the report's rehearsal.observed (None: refused, with ``refused``)
    report: dict[str, Any] | None = (
        None  # the rehearsal part of the report (timings, differences with the plan)
    )
    refused: str | None = None
    changed: list[str] = field(default_factory=list)  # real entries the rehearsal changed (must be empty)
    seconds: float = 0.0
    covered_retention: bool = False  # the window ran past the first retention pass


_homes: dict[str, Path] = {}


def _home(version: str) -> Path:
    """A Kafka home of the lab's jars (``--kafka-home``: its libs/ is all the rehearsal uses)."""
    if version not in _homes:
        lab_root().mkdir(parents=True, exist_ok=True)
        home = Path(tempfile.mkdtemp(prefix=f"rh-home-{version}-", dir=lab_root()))
        home.chmod(0o755)  # the broker user reads the jars through it
        (home / "libs").symlink_to(jar_dir_for(version))
        if not _homes:
            atexit.register(_remove_homes)
        _homes[version] = home
    return _homes[version]


def _remove_homes() -> None:
    for home in _homes.values():
        shutil.rmtree(home, ignore_errors=True)  # a symlink to the jars and its dir: the jars stay


def _diff(before: Snapshot, after: Snapshot) -> list[str]:
    return sorted(
        p for p in set(before.files) | set(after.files) if before.files.get(p) != after.files.get(p)
    )


def rehearse_trial(
    broker: LabBroker, before: Snapshot, *, wait_retention: bool, topic_configs: Path | None = None
) -> Rehearsed:
    """Rehearse the stopped ``broker``'s next start (``before``: its files' snapshot, taken just before)."""
    from kafka_ops.facts.model import AuditOptions
    from kafka_ops.rehearse import RehearsalRefused, RehearseOptions, rehearse

    if os.geteuid() != 0:
        return Rehearsed(None, refused="not root (the rehearsal mounts overlays)")
    if not broker.kraft:
        broker.start_zookeeper()  # the "real" ZooKeeper the rehearsal seeds its own from (read-only)
    # up to 3.8 the first retention pass comes 30 s after the start: watched only where the trial waits for it
    # (its deletions are read from the pass's own lines: file.delete.delay.ms need not pass)
    covered = wait_retention or broker.initial_task_delay_s < SHORT_WINDOW_S
    window = broker.initial_task_delay_s + RETENTION_MARGIN_S if covered else SHORT_WINDOW_S
    root = Path(tempfile.mkdtemp(prefix="rh-scratch-", dir="/tmp"))
    root.chmod(0o711)  # root's, searchable: the broker user reaches its config and log in the scratch
    audit = AuditOptions(
        server_properties=str(broker.server_properties), kafka_version=broker.version,
        broker_user=broker.user, topic_configs=str(topic_configs) if topic_configs else None,
    )  # fmt: skip
    ro = RehearseOptions(
        kafka_home=str(_home(broker.version)), java=java(broker.version), broker_user=broker.user,
        scratch=str(root / "scratch"), window_s=window, heap=HEAP,
    )  # fmt: skip
    t0 = time.monotonic()
    try:
        report = rehearse(audit, ro)
    except RehearsalRefused as exc:
        return Rehearsed(None, refused=str(exc), changed=_diff(before, snapshot(broker.log_dirs)))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    r = report["rehearsal"]
    return Rehearsed(
        r["observed"], r, changed=_diff(before, snapshot(broker.log_dirs)), seconds=time.monotonic() - t0,
        covered_retention=covered,
    )  # fmt: skip


def _segments(side: dict[str, Any], key: str, values: set[str]) -> set[str]:
    return {
        os.path.normpath(s["log"])
        for s in side.get("segments", [])
        if s.get(key) in values and os.path.basename(os.path.dirname(s["log"])) != f"{METADATA_TOPIC}-0"
    }


def compare_rehearsal(r: Rehearsed, real: dict[str, Any]) -> list[str]:
    """Where the rehearsal and the real start (kafka_lab.observe's ``next_start``) disagree, one line each."""
    if r.observed is None:
        return [f"not rehearsed: {r.refused}"]
    obs = r.observed
    out = [f"the rehearsal changed the real files: {p}" for p in r.changed[:10]]
    if obs["broker"] != real["broker"]:
        out.append(
            f"broker: the rehearsal {obs['broker']} ({obs.get('reason')}), the real start {real['broker']} "
            f"({real.get('reason')})"
        )
        return out
    real_dirs = {os.path.normpath(d["path"]): d["state"] for d in real["log_dirs"]}
    for d in obs["log_dirs"]:
        p = os.path.normpath(d["path"])
        if real_dirs.get(p) != d["state"]:
            out.append(f"log dir {p}: the rehearsal had it {d['state']}, the real start {real_dirs.get(p)}")
    if real["broker"] != "starts":
        return out
    offline = {p for p, s in real_dirs.items() if s == "offline"}

    def online(paths: set[str]) -> set[str]:
        return {p for p in paths if os.path.dirname(os.path.dirname(p)) not in offline}

    for what, key, values in (
        ("recovered", "load", {"recovered"}),
        ("rebuilt its indexes", "load", {"indexes_rebuilt"}),
    ):
        rh, rl = online(_segments(obs, key, values)), online(_segments(real, key, values))
        out += [f"{p}: the real start {what}, the rehearsal did not" for p in sorted(rl - rh)]
        out += [f"{p}: the rehearsal {what}, the real start did not" for p in sorted(rh - rl)]

    def deleted(side: dict[str, Any]) -> set[str]:
        return online({
            os.path.normpath(s["log"])
            for s in side.get("segments", [])
            if s.get("deleted_at") is not None
            and os.path.basename(os.path.dirname(s["log"])) != f"{METADATA_TOPIC}-0"
            and (r.covered_retention or s.get("deleted_by") not in _RETENTION)
        })  # fmt: skip

    rh, rl = deleted(obs), deleted(real)
    out += [f"{p}: the real start deleted it, the rehearsal did not" for p in sorted(rl - rh)]
    out += [f"{p}: the rehearsal deleted it, the real start did not" for p in sorted(rh - rl)]

    def truncated(side: dict[str, Any]) -> dict[str, int]:
        return {
            p: s["truncated_bytes"]
            for s in side.get("segments", [])
            if s.get("truncated_bytes") and (p := os.path.normpath(s["log"])) in online({p})
        }

    th, tl = truncated(obs), truncated(real)
    out += [
        f"{p}: truncated {th.get(p, 0)} bytes in the rehearsal, {tl.get(p, 0)} at the real start"
        for p in sorted(set(th) | set(tl))
        if th.get(p, 0) != tl.get(p, 0)
    ]
    if obs.get("strays") is None:
        return [*out, "the rehearsal could not list its view of the dirs (no strays, leftovers, futures)"]
    # the rehearsal's fates in the place of the plan's (the same reader made both: kafka_ops.rehearse.outcome; the
    # comparison is the product's, kafka_ops/rehearse/compare.py)
    by = "the real start"
    fates = (
        compare._strays(obs, real, by)
        + compare._leftovers(obs, real, offline, by)
        + compare._futures(obs, real, by)
    )
    return out + [d["text"].replace("the plan", "the rehearsal") for d in fates]
