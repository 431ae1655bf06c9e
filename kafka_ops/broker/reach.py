"""Whether the broker user can reach a log dir: a parent it cannot traverse, a root it cannot read, write and
traverse, or a missing dir it cannot create. The one rule that PERM003 reports and the next-start plan follows.

What the broker needs, from apache/kafka (snapshot 1eb7644):
* every directory on the path, from ``/`` down: search (x), or nothing under it can be opened;
* the log dir root: read, to pass ``LogManager.createAndValidateLogDirs`` (``!dir.isDirectory || !dir.canRead``
  -> ``IOException("<dir> is not a readable log directory.")`` -> the dir is offline); search, to open
  ``meta.properties`` (``MetaPropertiesEnsemble.Loader``), ``.lock`` and every partition; write, to create files
  in it: ``.lock`` (``FileLock``: ``FileChannel.open(CREATE, READ, WRITE)``), the checkpoints (``CheckpointFile.write``:
  ``<name>.tmp`` then ``Utils.atomicMoveWithFallback``, every 60 s), ``meta.properties`` when it adds a
  ``directory.id`` (``PropertiesUtils.writePropertiesFile``, ``.tmp`` + rename), new partition dirs, and to delete
  ``.kafka_cleanshutdown`` at start (``LogManager.loadLogs`` -> ``CleanShutdownFileHandler.delete``);
* a log dir that does not exist is created with ``dir.mkdirs()`` ("Log directory <dir> not found, creating it."),
  which needs write and search on the deepest existing ancestor; failing that: ``IOException("Failed to create
  data directory <dir>")``.

Every one of these failures is an IOException that ``LogDirFailureChannel`` turns into an offline log dir; when
no log dir is left the broker halts ("Shutdown broker because none of the specified log dirs from ... can be
created or validated" / "... all log dirs in ... have failed"). A dir whose ``meta.properties`` cannot be opened
(a parent or the root without search) is in the Loader's ``errorLogDirs``: a KRaft broker does not start when it is
the metadata log dir ("Encountered I/O error in metadata log directory <dir>. Cannot continue.", KafkaRaftServer;
before 3.7 "Cannot start server since `meta.properties` could not be loaded from <dir>").

Decided from ``LogDirFacts.parents``/``self_path`` (mode bits and POSIX ACLs, ``facts.access.decide``), or from a
``probe`` of those paths as the broker user when the facts carry one (``{path: (read, write[, traverse])}``).
"""

from __future__ import annotations

from kafka_ops.facts.access import Access, PathFacts, decide, owner_text
from kafka_ops.facts.identity import Identity
from kafka_ops.facts.model import HostFacts, LogDirFacts


def problems(who: Identity, ldf: LogDirFacts) -> list[dict[str, object]]:
    """What keeps the broker user from the log dir, outermost first (empty: nothing)."""
    probe = getattr(ldf, "probe", None) or {}
    out: list[dict[str, object]] = []
    for p in ldf.parents:
        a = _access(who, p, probe)
        if not a.execute:
            out.append(_problem(p, "x", "parent", a))
    if not ldf.scan.exists:
        # LogManager.createAndValidateLogDirs: dir.mkdirs() from the deepest existing ancestor
        anc = ldf.parents[-1] if ldf.parents else None
        if anc is not None and anc.is_dir:
            a = _access(who, anc, probe)
            missing = "".join(c for c, ok in (("w", a.write), ("x", a.execute)) if not ok)
            if missing and not any(pr["path"] == anc.path for pr in out):
                out.append(_problem(anc, missing, "create", a))
    elif ldf.self_path is not None:
        sp = ldf.self_path
        if not sp.is_dir:
            out.append(_problem(sp, "", "not_dir", None))
        else:
            a = _access(who, sp, probe)
            missing = "".join(c for c, ok in (("r", a.read), ("w", a.write), ("x", a.execute)) if not ok)
            if missing:
                out.append(_problem(sp, missing, "root", a))
    return out


def meta_unreadable(probs: list[dict[str, object]]) -> bool:
    """Whether the broker cannot open the dir's meta.properties: a parent or the root without search."""
    return any(p["kind"] == "parent" or (p["kind"] == "root" and "x" in str(p["missing"])) for p in probs)


def start_effect(h: HostFacts, ldf: LogDirFacts) -> tuple[str, str] | None:
    """("exits" | "offline", why) for this log dir at the next start, or None when the broker user reaches it."""
    who = h.identity
    if who is None:
        return None
    probs = problems(who, ldf)
    if not probs:
        return None
    from kafka_ops.broker.meta import broker_mode, metadata_log_dir

    what = f"the broker user {who.user} " + "; ".join(_short(pr, ldf.path) for pr in probs)
    if meta_unreadable(probs) and broker_mode(h) == "kraft" and metadata_log_dir(h) == ldf.path:
        return "exits", (
            f"{what}: it cannot open {ldf.path}/meta.properties, and a KRaft broker does not start without its "
            f"metadata log dir's ('Encountered I/O error in metadata log directory {ldf.path}. Cannot continue.')"
        )
    return "offline", f"{what}: LogManager takes {ldf.path} offline at the start and serves nothing from it"


def _short(pr: dict[str, object], log_dir: str) -> str:
    verbs = "/".join(_VERBS[c] for c in str(pr["missing"]))
    if pr["kind"] == "parent":
        return f"cannot traverse {pr['path']}, a parent of {log_dir}"
    if pr["kind"] == "create":
        return f"cannot create {log_dir} ({verbs} on {pr['path']})"
    if pr["kind"] == "not_dir":
        return f"finds {pr['path']} is not a directory"
    return f"cannot {verbs} {pr['path']}"


def _access(who: Identity, p: PathFacts, probe: dict[str, tuple[bool, ...]]) -> Access:
    a = decide(who, p.uid, p.gid, p.mode, p.acl, p.is_dir)
    if p.path in probe:
        v = probe[p.path]
        # a (read, write) probe cannot tell search permission apart: keep the computed answer for it
        return Access(bool(v[0]), bool(v[1]), bool(v[2]) if len(v) > 2 else a.execute, "probe")
    return a


def _problem(p: PathFacts, missing: str, kind: str, a: Access | None) -> dict[str, object]:
    return {
        "path": p.path,
        "kind": kind,  # parent | root | create | not_dir
        "missing": missing,
        "owner": owner_text(p),
        "acl": bool(p.acl),
        "via": a.via if a else None,
    }


_VERBS = {"r": "read", "w": "write", "x": "traverse"}
