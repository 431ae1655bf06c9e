"""``kafka-ops rehearse`` as a library call: the audit's plan, then the node's own start in the sandbox, compared.

Order of the refusals (each one line, nothing started): not root; the broker not stopped (the audit's
broker-state rule: who holds the log dirs' .lock, who has their files open); a config the slice does not rehearse
(a KIP-853 node whose stored voter set cannot be walked down to it: voters.py); a scratch dir the broker user could write, or one
inside a log dir; a scratch whose free space cannot hold the worst-case copy-up.
"""

from __future__ import annotations

import dataclasses
import gzip
import json
import os
import re
import shutil
import stat
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import kafka_ops.rehearse.config as config
import kafka_ops.rehearse.limits as limits
import kafka_ops.rehearse.outcome as files_outcome
import kafka_ops.rehearse.sandbox as sandbox
import kafka_ops.rehearse.scratch as scratch
import kafka_ops.rehearse.voters as voters
import kafka_ops.rehearse.zkseed as zkseed
from kafka_ops.audit.run import run_audit
from kafka_ops.engine.checkpoints import read_properties
from kafka_ops.engine.errors import EngineError
from kafka_ops.facts.collect import _VERSION_LINE, _version_from_install
from kafka_ops.facts.config import read_server_properties
from kafka_ops.facts.model import AuditOptions
from kafka_ops.facts.systemd import load_unit
from kafka_ops.rehearse.compare import differences
from kafka_ops.rehearse.observe import observe

DEFAULT_HEAP = "1g"
START_TIMEOUT_S = 900.0  # copy-up of a large broker on a filesystem without reflink takes minutes
WINDOW_MARGIN_S = 5.0
FIXED_INITIAL_TASK_DELAY_MS = (
    30_000  # LogManager's first retention check up to 3.8 (LogManager.scala@3.7.0:90)
)


# What the sandbox does differently from the real start, by design (docs/rehearse.md)
LIMITS = (
    "every mount but the overlaid log dirs and the scratch is read-only in the sandbox: a start that writes through "
    "a link out of a log dir fails there (the dir offline) where the real start would write",
    "the node is its own single-voter quorum on the metadata it has on disk (for a KIP-853 quorum by VotersRecords "
    "appended to the overlay's copy of its metadata log, rehearsal.voter_set): changes made while it was down "
    "(reassignments, deletions, hence -stray dirs) are not seen, the other brokers are fenced after their session",
    "the JVM gets the heap of --heap and default options, not the unit's; of the unit's limits only LimitNOFILE "
    "is reproduced (rehearsal.open_files_limit); owners, modes and ACLs are the real files' (the overlay shows the "
    "lower inodes' and copy-up keeps them); a log dir on a read-only mount is left read-only (not overlaid), as "
    "the real start meets it",
    "each real filesystem's writable layer is an ext4 image holding the copy-up of its files plus its real free "
    "bytes and inodes for the broker user (rehearsal.space); a segment the rehearsal deletes frees no room "
    "unless it was copied up, and a file Kafka did not open read-write leaves that room unused",
)


class RehearsalRefused(RuntimeError):
    """The rehearsal was not started (one line saying why)."""


@dataclass
class RehearseOptions:
    kafka_home: str
    java: str
    broker_user: str | None = None
    scratch: str = scratch.DEFAULT_SCRATCH
    window_s: float | None = None
    heap: str = DEFAULT_HEAP
    start_timeout_s: float = START_TIMEOUT_S
    # where kafka_home and java came from (kafka_ops.rehearse.home): what the report says ran
    kafka_home_source: str = "--kafka-home"
    java_source: str = "--java"


def default_window_s(
    props: dict[str, str], version: tuple[int, ...] | None, controller_only: bool = False
) -> float:
    """A dedicated controller has no LogManager (no retention pass to wait for): a margin after it became
    active. Others: until the first retention pass and the file-delete delay after it have run: log.initial.task.delay.ms
    (an internal config since 3.8, ServerLogConfigs.java@3.9.1:189; a constant 30 s before) plus
    file.delete.delay.ms (default 60 s), plus a margin."""
    if controller_only:
        return WINDOW_MARGIN_S
    delay = FIXED_INITIAL_TASK_DELAY_MS
    if version is None or version >= (3, 8):
        delay = _int(props.get("log.initial.task.delay.ms"), FIXED_INITIAL_TASK_DELAY_MS)
    return (delay + _int(props.get("file.delete.delay.ms"), 60_000)) / 1000 + WINDOW_MARGIN_S


def installed_version(audit: AuditOptions) -> tuple[str, str] | None:
    """(version, where it was read) of the release the host runs today, the one that wrote the data: the
    install the unit's ExecStart names (or /opt/kafka), else the last "Kafka version" line of --broker-log (as
    the audit reads them, facts/collect.py). With --kafka-home of another release, the rehearsal is an
    upgrade's, and the report names both."""
    try:
        unit = load_unit(str(audit.systemd_unit)) if audit.systemd_unit else None
    except (OSError, EngineError):
        unit = None
    found = _version_from_install(unit)
    if found:
        return found
    last = None
    for path in audit.logs:
        try:
            opener = gzip.open if str(path).endswith(".gz") else open
            with opener(path, "rt", errors="replace") as f:
                for line in f:
                    m = _VERSION_LINE.search(line)
                    if m:
                        last = (m[1], str(path))
        except OSError:
            continue
    return last


def _directory_id(metadata_dir: str) -> str | None:
    """The metadata dir's directory.id (the raft client's own, SharedServer.scala@3.9:279), None when absent."""
    try:
        meta = read_properties(os.path.join(os.path.realpath(metadata_dir), "meta.properties"))
    except (OSError, EngineError):
        return None
    return meta.get("directory.id", "").strip() or None


_VOTERS_LINE = re.compile(r"Latest set of voters is (.*) at offset (-?\d+)")


def _last_voters_line(text: str) -> str | None:
    found = _VOTERS_LINE.findall(text)
    return f"{found[-1][0]} at offset {found[-1][1]}" if found else None


def _int(text: str | None, default: int) -> int:
    try:
        return int(str(text).strip())
    except ValueError:
        return default


def stat_tree(dirs: list[str]) -> dict[str, tuple[int, int, int, int, int]]:
    """(size, mode, uid, gid, mtime_ns) of every entry under the real dirs (links not followed): the command's
    own check that the rehearsal changed nothing (content is not hashed: terabytes; a write changes mtime)."""
    out: dict[str, tuple[int, int, int, int, int]] = {}
    for d in dirs:
        for base, subdirs, files in os.walk(d, followlinks=False):
            for name in [*subdirs, *files, ""]:
                p = os.path.join(base, name) if name else base
                try:
                    st = os.lstat(p)
                except OSError:
                    continue
                out[p] = (st.st_size if not stat.S_ISDIR(st.st_mode) else 0, st.st_mode, st.st_uid, st.st_gid,
                          st.st_mtime_ns)  # fmt: skip
    return out


def _without_preallocated_indexes(
    before: files_outcome.Snapshot, view: files_outcome.Snapshot, props: dict[str, str]
) -> files_outcome.Snapshot:
    """The running broker's view with each index it created at the start (absent before) taken as empty when its
    size is the preallocated one: an index opened for writing is set to log.index.size.max.bytes rounded down to
    whole entries (AbstractIndex.scala@2.2.1:113-119) until its close trims it, so in the view a new empty index
    (2.2.1 creates the missing .index of a segment when it opens it, LogSegment.open) looks like a rebuilt one; seen
    on 2.2.1's clean and unclean trials (a deleted .index and .timeindex: the real start did not rebuild them).
    A rebuild the broker logs is read from its line (observe.py)."""
    try:
        max_bytes = int(props.get("log.index.size.max.bytes", "10485760"))
    except ValueError:
        return view
    sizes = {".index": max_bytes // 8 * 8, ".timeindex": max_bytes // 12 * 12}
    files = dict(view.files)
    for path, st in view.files.items():
        ext = os.path.splitext(path)[1]
        if ext in sizes and path not in before.files and st.size == sizes[ext]:
            files[path] = dataclasses.replace(st, size=0)
    return dataclasses.replace(view, files=files)


def _merge_segments(by_lines: list[dict[str, Any]], by_files: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The segments the log lines name (observe.py) with what the files say (outcome.py: truncated bytes, a
    segment gone without a line, a swap completed): one entry per .log, a deletion's time and reason from
    whichever side has them. A segment not loaded (its dir offline, the broker exited) is not listed."""
    out = {s["log"]: dict(s) for s in by_lines}
    for f in by_files:
        if f["load"] == "not_loaded":
            continue
        s = out.setdefault(f["log"], {k: f[k] for k in ("log", "topic", "partition", "base_offset")} | {
            "load": "as_is", "truncated_bytes": 0, "deleted_at": None, "deleted_by": None})  # fmt: skip
        s["truncated_bytes"] = f["truncated_bytes"]
        if s["load"] == "as_is":
            s["load"] = f["load"]
        if s["deleted_at"] is None and f["deleted_at"] is not None:
            s["deleted_at"], s["deleted_by"] = f["deleted_at"], f["deleted_by"]
    return sorted(out.values(), key=lambda s: s["log"])


def rehearse(
    audit: AuditOptions, ro: RehearseOptions, progress: Callable[[str], None] | None = None
) -> dict[str, Any]:
    """The audit's report with ``rehearsal``; raises RehearsalRefused before anything starts when it cannot."""
    say = progress or (lambda _: None)
    if os.geteuid() != 0:
        raise RehearsalRefused("rehearse runs as root (it mounts overlays in a namespace of its own)")
    if not audit.server_properties:
        raise RehearsalRefused("rehearse needs --server-properties (the config the node starts with)")
    if not os.path.isdir(os.path.join(ro.kafka_home, "libs")):
        raise RehearsalRefused(
            f"--kafka-home {ro.kafka_home}: no libs/ directory (a Kafka distribution's root)"
        )
    version = sandbox.kafka_version_of(ro.kafka_home)
    misfit = sandbox.java_misfit(ro.kafka_home, ro.java)
    if misfit:
        raise RehearsalRefused(misfit)
    installed = installed_version(audit)
    from_home = audit.kafka_version is None and version is not None
    if from_home:
        # the plan is made for the release that will start (another home: an upgrade rehearsal)
        audit.kafka_version = ".".join(map(str, version or ()))
    t0 = time.monotonic()
    report = run_audit(audit)
    if from_home and "kafka_version" in report.get("inputs", {}):
        report["inputs"]["kafka_version"]["source"] = f"--kafka-home {ro.kafka_home}/libs"
    audit_s = time.monotonic() - t0
    if report["broker_state"] != "stopped":
        src = (report.get("inputs") or {}).get("broker_state", {}).get("source")
        raise RehearsalRefused(
            f"the broker is {report['broker_state']}" + (f" ({src})" if src else "")
            + ": rehearse only a stopped broker (give --broker-state stopped only if you know it is)"
        )  # fmt: skip
    props = read_server_properties(str(audit.server_properties))
    try:
        cfg = config.sandbox_properties(dict(props), version)
    except config.SandboxConfigError as exc:
        raise RehearsalRefused(f"{audit.server_properties}: {exc}") from None
    stored = None
    if cfg.dynamic_quorum:
        stored = voters.stored_voters(os.path.realpath(cfg.metadata_dir))
        if stored is None:
            kraft = voters.stored_kraft_version(os.path.realpath(cfg.metadata_dir))
            if kraft >= 1:
                # a leader of kraft.version 1 needs a stored voter set (LeaderState.java@3.9:327-338 throws)
                raise RehearsalRefused(
                    f"{audit.server_properties}: a KIP-853 quorum (kraft.version {kraft}) but no VotersRecord in "
                    f"{cfg.metadata_dir}/__cluster_metadata-0 (a node formatted and never started?): the voter "
                    "set is unknown"
                )
            # kraft.version 0: the configured voters decide (a broker may name a static quorum by its
            # bootstrap servers): the static recipe
            config.as_static(cfg)
    if cfg.dynamic_quorum and stored is not None:
        dir_id = _directory_id(cfg.metadata_dir)
        other = [d for v, d in stored.voters if v == cfg.node_id and dir_id and d != dir_id]
        if other:
            # the node's id is a voter of another directory (a disk replaced, a node reformatted): its real start
            # is an observer that never votes; a rehearsal as the voter would hide that
            raise RehearsalRefused(
                f"{audit.server_properties}: the stored voter set ({stored.where}) has node {cfg.node_id} with "
                f"directory id {other[0]}, but {cfg.metadata_dir}/meta.properties says {dir_id}: the real start "
                "joins as an observer, not as that voter (VoterSet.VoterNode.isVoter compares the directory "
                "ids, VoterSet.java@3.9:344-353); not rehearsed"
            )
        try:
            cfg.voters_append = voters.single_voter_batch(
                os.path.realpath(cfg.metadata_dir), stored, cfg.node_id, dir_id, cfg.controller_endpoints
            )
        except voters.VoterSetError as exc:
            raise RehearsalRefused(
                f"{audit.server_properties}: a KIP-853 quorum: the sandbox cannot make node {cfg.node_id} its "
                f"only voter: {exc}"
            ) from None
    user = ro.broker_user or (report.get("inputs", {}).get("broker_user") or {}).get("value")
    if not user:
        raise RehearsalRefused("the broker user is unknown: give --broker-user (or a unit with User=)")
    dirs = sandbox.overlaid_dirs(cfg)
    try:
        root = scratch.prepare_root(ro.scratch, dirs)
        scratch.check_traverse(root, user)
    except scratch.ScratchError as exc:
        raise RehearsalRefused(str(exc)) from None
    swept = scratch.sweep(root)
    for s in swept:
        say(f"removed the scratch of an earlier rehearsal that did not finish: {s}")
    est = scratch.estimate(root, [d for d in dirs if os.path.isdir(d)])
    if est.needed_bytes > est.free_bytes:
        raise RehearsalRefused(
            f"--scratch {root}: {est.free_bytes:,} bytes free, the rehearsal may need {est.needed_bytes:,} "
            f"({est.why}; {est.data_bytes:,} bytes of data): give a --scratch with room, or on the log dirs' "
            "own XFS (reflink=1) or btrfs filesystem"
        )
    window = (
        ro.window_s
        if ro.window_s is not None
        else default_window_s(dict(props), version, cfg.roles == ["controller"])
    )
    before = stat_tree(dirs)
    before_files = files_outcome.snapshot(
        dirs, hash_limit=-1
    )  # sizes only: a host's terabytes are not hashed
    after_files: files_outcome.Snapshot | None = None
    run_dir = scratch.new_run(root)
    try:
        t1 = time.monotonic()
        try:
            images = scratch.make_images(run_dir, [d for d in dirs if os.path.isdir(d)], est.reflink)
        except (OSError, subprocess.CalledProcessError) as exc:
            detail = (
                exc.stderr.decode(errors="replace").strip()
                if isinstance(exc, subprocess.CalledProcessError)
                else ""
            )
            raise RehearsalRefused(
                f"could not make the scratch's filesystem image of the log dirs' free space: {exc}"
                + (f": {detail}" if detail else "")
            ) from None
        unit_nofile, nofile_source = limits.unit_nofile(
            str(audit.systemd_unit) if audit.systemd_unit else None
        )
        nofile, nofile_capped = limits.applicable(unit_nofile) if unit_nofile else (None, None)
        try:
            cluster_id = (report.get("identity") or {}).get("cluster_id")
            seed = None
            if cfg.mode == "zookeeper":
                say(
                    f"reading this broker's topics from the real ZooKeeper {props.get('zookeeper.connect')} (read-only)"
                )
                seed = zkseed.read_real(str(props.get("zookeeper.connect")), dirs, cluster_id)
                if not seed.answered and audit.cluster:  # --bootstrap-server answered: the cluster's own
                    say(
                        f"seeding the sandbox's ZooKeeper from the cluster at {audit.cluster.get('bootstrap')}"
                    )
                    seed = zkseed.from_cluster(audit.cluster, dirs, cluster_id, seed.why)
            script = sandbox.prepare(
                run_dir, cfg, ro.kafka_home, ro.java, user, ro.heap, version, cluster_id, images, seed,
                nofile=nofile,
            )  # fmt: skip
        except sandbox.SandboxError as exc:
            raise RehearsalRefused(str(exc)) from None
        say(
            f"starting Kafka {'.'.join(map(str, version)) if version else '(version unknown)'} in the sandbox"
        )
        try:
            ready = sandbox.ACTIVE if cfg.roles == ["controller"] else sandbox.READY
            outcome = sandbox.run(run_dir, script, dirs, window, ro.start_timeout_s, say, ready)
        except sandbox.SandboxError as exc:
            raise RehearsalRefused(str(exc)) from None
        outcome.setup_s = round(time.monotonic() - t1, 2)
        watched_until_ms = int(time.time() * 1000)  # the JVM is stopped: no deletion after this one was seen
        used = scratch.used_bytes(run_dir)
        after_files = outcome.view  # None: the broker exited (its files are not read: lines only)
        padded = {}
        for n in range(len(images)):
            try:
                with open(os.path.join(run_dir, f"fs-{n}.pad.json")) as f:
                    padded[n] = json.load(f)
            except (OSError, ValueError):
                pass
    finally:
        t2 = time.monotonic()
        scratch.detach_loops(run_dir)  # the kernel's autoclear has done it when the namespace ended
        shutil.rmtree(run_dir, ignore_errors=True)
        cleanup_s = time.monotonic() - t2
    after = stat_tree(dirs)
    changed = sorted(p for p in set(before) | set(after) if before.get(p) != after.get(p))
    per_dir, segments = observe(outcome.log_text, dirs)
    from_files: dict[str, Any] = {}
    if after_files is not None:
        code = (
            None
            if outcome.broker == "starts"
            else (outcome.exit_code if outcome.exit_code is not None else -1)
        )
        after_files = _without_preallocated_indexes(before_files, after_files, dict(props))
        from_files = files_outcome.next_start(
            before_files, after_files, outcome.log_text, exit_code=code
        ).next_start
        segments = _merge_segments(segments, from_files["segments"])
    observed = {
        "broker": outcome.broker,
        "reason": outcome.reason,
        "exit_code": outcome.exit_code,
        "log_dirs": [
            {
                "path": d,
                "state": "offline" if d in outcome.offline else "online",
                "reason": outcome.offline.get(d),
                **per_dir[d],
            }
            for d in dirs
        ],
        "logs_loaded": outcome.logs_loaded,
        "load_ms": outcome.load_ms,
        "segments": segments,
        # from the sandbox's view of the dirs once the broker ended (None: it could not be listed): each
        # .deleted/.cleaned leftover's fate, each partition dir moved away (renamed -stray, or -delete and
        # deleted), each -future dir's fate, as kafka_lab reads a real start's (kafka_ops.rehearse.outcome)
        "leftovers": from_files.get("leftovers"),
        "strays": from_files.get("strays"),
        "future_dirs": from_files.get("future_dirs"),
        "fatal": outcome.fatal,
    }
    report["rehearsal"] = {
        "kafka_home": ro.kafka_home,
        "kafka_home_source": ro.kafka_home_source,
        "java": ro.java,
        "java_source": ro.java_source,
        "kafka_version": ".".join(map(str, version)) if version else None,
        # the release that runs today (wrote the data): another one in --kafka-home is an upgrade rehearsal
        "installed_version": None if installed is None else {"value": installed[0], "source": installed[1]},
        "upgrade": installed is not None
        and version is not None
        and installed[0].split("-")[0] != ".".join(map(str, version)),
        "mode": cfg.mode,
        "roles": cfg.roles,
        "changed_properties": {k: {"was": w, "now": n} for k, (w, n) in sorted(cfg.changed.items())},
        "quorum_state_removed": cfg.drop_quorum_state,
        # KIP-853: the stored voter set and the control batch appended in the overlay (the node alone at last)
        "voter_set": None
        if stored is None or cfg.voters_append is None
        else {
            "stored": [{"id": v, "directory_id": d} for v, d in stored.voters],
            "stored_at": stored.where,
            "appended_at_offset": cfg.voters_append.base_offset,
            "appended_epoch": cfg.voters_append.epoch,
            "appended_sets": cfg.voters_append.steps,
            # the raft client's own word on the voter set it read last (KRaftControlRecordStateMachine.java@3.9:284)
            "read_by_the_node": _last_voters_line(outcome.log_text),
        },
        "observed": observed,
        # the lab's comparison of the plan with a real start (kafka_ops.rehearse.compare): whether a segment was
        # deleted, not when (the rehearsal starts later than the audit's "now") nor the reason's wording
        "differences": differences(
            report["next_start"],
            observed,
            observed_until_ms=watched_until_ms,
            tolerance_s=None,
            by="the rehearsed start",
        ),
        "timings": {
            "audit_s": round(audit_s, 2),
            "setup_and_run_s": outcome.setup_s,
            "start_s": outcome.start_s,
            "window_s": outcome.window_s,
            "stop_s": outcome.stop_s,
            "cleanup_s": round(cleanup_s, 2),
        },
        "scratch_bytes": used,
        "scratch_estimate": {
            "data_bytes": est.data_bytes,
            "needed_bytes": est.needed_bytes,
            "free_bytes": est.free_bytes,
            "reflink": est.reflink,
        },
        "swept": swept,
        # the JVM's RLIMIT_NOFILE: the unit's (source), unless capped (why); None: kafka-ops' own
        "open_files_limit": {
            "soft": nofile[0] if nofile else None,
            "hard": nofile[1] if nofile else None,
            "source": nofile_source,
            "capped": nofile_capped,
        },
        "zookeeper_seed": None
        if seed is None
        else {"source": seed.source, "topics": seed.topics, "nodes": sorted(seed.nodes)},
        "space": [
            {
                "dirs": img.dirs,
                "real_free_bytes": img.real_free_bytes,
                "real_free_inodes": img.real_free_inodes,
                "copy_up_bytes": img.copy_up_bytes,
                "copy_up_inodes": img.copy_up_inodes,
                "layer_free_bytes": padded.get(n, {}).get("free_bytes"),
                "layer_free_inodes": padded.get(n, {}).get("free_inodes"),
                "capped_by_scratch": img.capped,
            }
            for n, img in enumerate(images)
        ],
        "limits": list(LIMITS),
        "real_dirs": {"entries": len(before), "unchanged": not changed, "changed": changed[:20]},
    }
    return report


# A segment the rehearsed start deleted is waived as the audit waives a finding (--waive CHECK[:PATH-GLOB], the
# glob matched on the segment's .log): by the check that plans that kind of deletion. RET002 is the audit's forecast
# of what time and size retention (and the log start offset) delete; SHUT002 what recovery truncates and deletes
# after a torn tail; DIR003 the leftovers the start removes (a <tp>.<uuid>-delete dir, a completed .swap's old
# segment). A deletion the broker logged without a reason we know is waived with RET002 too ("Deleting segment"
# lines come from retention).
DELETION_CHECKS = {"recovery": "SHUT002", "truncation": "SHUT002", "delete_dir": "DIR003", "swap": "DIR003"}
DELETION_DEFAULT_CHECK = "RET002"


def gate(report: dict[str, Any], waivers: list[Any] | None = None) -> dict[str, Any]:
    """The rehearsal's gate, recorded as ``rehearsal.gate``: failed (exit 1) when the rehearsed start exited (or
    never answered), took a log dir offline, or deleted a segment no waiver (kafka_ops.audit.waivers.Waiver)
    matches. The KRaft metadata log's own cleaning is not the operator's data and is left out."""
    from kafka_ops.engine.layout import METADATA_TOPIC

    r = report["rehearsal"]
    obs = r["observed"]
    failing = []
    if obs["broker"] != "starts":
        failing.append(
            f"the rehearsed start {obs['broker']}" + (f": {obs['reason']}" if obs.get("reason") else "")
        )
    failing += [
        f"{d['path']} went offline: {d.get('reason')}" for d in obs["log_dirs"] if d["state"] == "offline"
    ]
    deletions = []
    for s in obs.get("segments", []):
        if (
            s.get("deleted_at") is None
            or os.path.basename(os.path.dirname(s["log"])) == f"{METADATA_TOPIC}-0"
        ):
            continue
        check = DELETION_CHECKS.get(s.get("deleted_by") or "", DELETION_DEFAULT_CHECK)
        finding = {"check": check, "path": s["log"], "log_dir": os.path.dirname(os.path.dirname(s["log"]))}
        w = next((w for w in waivers or [] if w.matches(finding)), None)
        deletions.append(
            {"log": s["log"], "deleted_by": s.get("deleted_by"), "check": check,
             "waived_by": f"{w.rule} ({w.source})" if w is not None else None}
        )  # fmt: skip
        if w is None:
            failing.append(
                f"it deleted {s['log']} ({s.get('deleted_by') or 'no reason logged'}): not waived "
                f"(--waive {check} or --waive '{check}:PATH-GLOB' accepts it)"
            )
    out = {
        "passed": not failing,
        "exit_code": 1 if failing else 0,
        "failing": failing,
        "deletions": deletions,
        "waived": sum(1 for d in deletions if d["waived_by"]),
    }
    r["gate"] = out
    return out


def failed(report: dict[str, Any], waivers: list[Any] | None = None) -> bool:
    """The gate (:func:`gate`): the rehearsed start exited (or never answered), took a log dir offline, or
    deleted data no waiver accepts."""
    return not gate(report, waivers)["passed"]
