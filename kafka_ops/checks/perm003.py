"""PERM003: the broker user cannot reach its log dir: a parent it cannot traverse, or a root it cannot read,
write and traverse (or that is missing and cannot be created).

The rule (what the broker needs on the path and the root, and what a failure does at start) is
kafka_ops.broker.reach's, which the next-start plan follows too: this check reports it, with the fix.
"""

from __future__ import annotations

from collections.abc import Iterator

from kafka_ops.broker import reach
from kafka_ops.checks.base import Finding, check
from kafka_ops.checks.names import group_name
from kafka_ops.engine.shell import q, qs
from kafka_ops.facts.context import Context
from kafka_ops.facts.identity import Identity
from kafka_ops.facts.model import LogDirFacts


@check(
    "PERM003",
    severity="critical",
    scope="logdir",
    title="Broker user cannot traverse a parent of a log dir, or read/write/traverse the log dir itself",
    incident="volumes remounted with root ownership; a log dir the broker cannot open goes offline",
    needs=("broker_user",),
)
def run(ctx: Context, ldf: LogDirFacts) -> Iterator[Finding]:
    who = ctx.host.identity
    assert who is not None  # needs=("broker_user",): the audit runs the check only with one
    probe = getattr(ldf, "probe", None) or {}
    problems = reach.problems(who, ldf)
    if not problems:
        return
    first = problems[0]
    text = "; ".join(_describe(who, pr, ldf.path) for pr in problems)
    yield run.finding(
        f"broker user {who.user} (uid {who.uid}) {text}. {_consequence(problems, ldf.path)}",
        _fix(who, problems, ldf),
        path=str(first["path"]),
        details={
            "problems": problems,
            "broker_user": who.user,
            "broker_uid": who.uid,
            "decided_by": "probe" if probe else "mode bits and POSIX ACLs",
        },
    )


_VERBS = {"r": "read", "w": "write", "x": "traverse"}


def _describe(who: Identity, pr: dict[str, object], log_dir: str) -> str:
    verbs = "/".join(_VERBS[c] for c in str(pr["missing"]))
    acl = ", with an ACL" if pr["acl"] else ""
    if pr["kind"] == "parent":
        return f"cannot traverse {pr['path']} ({pr['owner']}{acl}), a parent of log dir {log_dir}"
    if pr["kind"] == "create":
        return (
            f"cannot create the missing log dir {log_dir}: it cannot {verbs} its deepest existing ancestor "
            f"{pr['path']} ({pr['owner']}{acl})"
        )
    if pr["kind"] == "not_dir":
        return f"finds {pr['path']} is not a directory ({pr['owner']})"
    return f"cannot {verbs} the log dir {pr['path']} ({pr['owner']}{acl})"


def _consequence(problems: list[dict[str, object]], log_dir: str) -> str:
    kinds = {str(p["kind"]) for p in problems}
    root_missing = "".join(str(p["missing"]) for p in problems if p["kind"] == "root")
    if "parent" in kinds or "x" in root_missing:
        why = (
            f"The broker cannot open {log_dir}/meta.properties (AccessDeniedException): MetaPropertiesEnsemble.Loader "
            f"puts the dir in errorLogDirs and LogManager.createAndValidateLogDirs takes it offline at start "
            f"('Failed to load {log_dir} during broker startup'); if it is the KRaft metadata log dir the broker "
            f"does not start at all ('Encountered I/O error in metadata log directory {log_dir}. Cannot continue.')."
        )
    elif "not_dir" in kinds or "r" in root_missing:
        why = (
            f"LogManager.createAndValidateLogDirs checks `!dir.isDirectory || !dir.canRead` and throws "
            f"'{log_dir} is not a readable log directory.': the dir is offline from the start."
        )
    elif "create" in kinds:
        why = (
            f"LogManager.createAndValidateLogDirs logs 'Log directory {log_dir} not found, creating it.' and "
            f"dir.mkdirs() fails: 'Failed to create data directory {log_dir}', the dir is offline from the start."
        )
    else:  # only w on the root
        why = (
            "The broker cannot create files in it: taking the .lock (FileLock creates it), deleting "
            ".kafka_cleanshutdown at start (CleanShutdownFileHandler.delete), writing a checkpoint's .tmp (every "
            "60 s, CheckpointFile.write) or a new partition dir fails with an IOException that takes the dir "
            "offline at start or within a minute (in KRaft, failing to add a directory.id to meta.properties "
            "stops the broker). A log-dir checkpoint missing from it is created when the start builds its "
            "CheckpointFile, outside the failure channel: then the broker exits instead (ENV001)."
        )
    return (
        why
        + " Its partitions go offline on this broker (under-replicated, or unavailable where it holds the only "
        "replica); with no log dir left the broker halts ('Shutdown broker because none of the specified log dirs "
        "... can be created or validated')."
    )


def _fix(who: Identity, problems: list[dict[str, object]], ldf: LogDirFacts) -> str:
    user, group = who.user, group_name(who.gid)
    steps: list[str] = []
    parents = [str(p["path"]) for p in problems if p["kind"] == "parent"]
    if parents:
        steps.append(
            "give the broker user search permission on "
            + ", ".join(parents)
            + f": chmod o+x {qs(parents)} (or, to grant it to {user} alone: "
            + " && ".join(f"setfacl -m {q(f'u:{user}:x')} {q(p)}" for p in parents)
            + ")"
        )
    for p in problems:
        if p["kind"] == "root":
            steps.append(
                f"with the broker stopped: chown {q(f'{user}:{group}')} {q(ldf.path)} && chmod u+rwx {q(ldf.path)} "
                f"(or kafka-ops fix ownership --log-dir {q(ldf.path)} --broker-user {q(user)}, then --apply)"
            )
        elif p["kind"] == "create":
            steps.append(
                f"first check that the filesystem meant to hold {ldf.path} is mounted (DIR001): a missing log dir "
                f"is often a mount that failed; then create it for the broker: install -d -o {q(user)} -g {q(group)} "
                f"-m 0750 {q(ldf.path)}"
            )
        elif p["kind"] == "not_dir":
            steps.append(
                f"move the file {ldf.path} aside and create the log dir in its place, owned by {user}"
            )
    return (
        "; ".join(steps)
        + ". Then make the mount/provisioning step set these permissions so a remount keeps them."
    )


__all__ = ["run"]
