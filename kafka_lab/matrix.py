"""The damage matrix of issue 36 §2: every file the broker opens at its start x every kind of damage that crashes,
disks and people leave x the three behaviour families (ZooKeeper mode; KRaft before 3.7; KRaft 3.7+), each cell
mapped to the lab trial(s) that plant it (tests/lab/scenarios.py), "n/a" where the damage has no meaning for the
file (a content-free marker cannot be "out of order"), "not planted" where no trial plants it yet.

The cell's outcome comes from a lab report (kafka_lab.fidelity_doc): per release of the family, whether the plan
and the broker agreed, or the plan said "unknown" (next_start's ``unknown``, with the model's reason).

Trial names map to cells by their prefix, so that a new trial lands in its cell without an edit here:
``checkpoint-<file>_<damage>``, ``index-<file>_<damage>``, ``log-<where>_<damage>``, ``metadata-<file>_<damage>``,
``type-<file>_<kind>``; the older trials, named by what they do, are listed in :data:`NAMED`, and the few that
plant no file damage at all (a baseline, a cluster state) in :data:`NOT_A_CELL` with the reason.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from kafka_lab.versions import parse

FAMILIES = ("ZooKeeper", "KRaft < 3.7", "KRaft 3.7+")


def family(version: str) -> str:
    """The lab runs ZooKeeper mode before 3.3 (KRaft was a preview), KRaft from 3.3; 3.7 brought JBOD to KRaft."""
    v = parse(version)
    return FAMILIES[0] if v < (3, 3) else FAMILIES[1] if v < (3, 7) else FAMILIES[2]


@dataclass(frozen=True)
class Damage:
    key: str
    label: str
    content: bool  # a damage to the file's bytes (else to its presence or type)


DAMAGES = (
    Damage("zero_filled", "zero-filled", True),
    Damage("truncated_0", "truncated at 0", True),
    Damage("truncated_1", "truncated at 1 byte", True),
    Damage("truncated_mid_entry", "truncated mid-entry", True),
    Damage("truncated_mid_record", "truncated mid-record", True),
    Damage("garbage", "garbage", True),
    Damage("one_bad_entry", "one bad entry", True),
    Damage("out_of_order", "entries out of order", True),
    Damage("past_end", "an entry past the end", True),
    Damage("empty", "empty", True),
    Damage("missing", "missing", False),
    Damage("unreadable", "unreadable", False),
    Damage("symlink", "symlink (to a valid copy)", False),
    Damage("symlink_dangling", "dangling symlink", False),
    Damage("fifo", "FIFO", False),
    Damage("directory", "directory", False),
    # the leftovers of interrupted work are not damaged files but states: present as the interruption left them,
    # or under a name the loader cannot parse
    Damage("as_left", "as left", False),
    Damage("bad_name", "unparseable name", False),
)
DAMAGE = {d.key: d for d in DAMAGES}
TYPE_KINDS = ("missing", "unreadable", "symlink", "symlink_dangling", "fifo", "directory")

# the issue's own list of damages (as_left and bad_name are the leftovers' states, added)
ISSUE_DAMAGES = tuple(d.key for d in DAMAGES if d.key not in ("as_left", "bad_name"))

_ALL_FAMILIES = frozenset(FAMILIES)
_KRAFT = frozenset(FAMILIES[1:])
_TEXT_LIST = frozenset(ISSUE_DAMAGES) - {"truncated_mid_record"}  # a text checkpoint of entries: no records
_TEXT_KV = _TEXT_LIST - {"out_of_order", "past_end"}  # key: value lines, nothing that points into a log
_INDEX = frozenset(ISSUE_DAMAGES) - {
    "truncated_mid_record"
}  # fixed-size entries, each pointing into the .log
_LOG = frozenset(ISSUE_DAMAGES) - {
    "past_end"
}  # batches: mid-entry is a batch header cut, mid-record a record's
_SNAPSHOT = frozenset(ISSUE_DAMAGES) - {"truncated_mid_record", "out_of_order", "past_end"}
_PRESENCE = frozenset(TYPE_KINDS)
_LEFTOVER_FILE = _PRESENCE - {"missing"} | {"as_left", "bad_name"}
_LEFTOVER_DIR = _PRESENCE - {"missing", "directory"} | {"as_left"}
_DIR = _PRESENCE - {"directory"} | {"empty", "garbage"}  # empty: emptied; garbage: a foreign entry in it


@dataclass(frozen=True)
class File:
    key: str
    label: str
    damages: frozenset[str]  # the damages that mean something for it
    families: frozenset[str] = _ALL_FAMILIES  # where the broker has it at all
    issue: bool = True  # named by issue 36 (partition dir and log dir are added for the older trials)


FILES = (
    File("log_older", "a closed segment's `.log`", _LOG),
    File("log_active", "the active segment's `.log`", _LOG),
    File("index_older", "a closed segment's `.index`", _INDEX),
    File("index_active", "the active segment's `.index`", _INDEX),
    File("timeindex_older", "a closed segment's `.timeindex`", _INDEX),
    File("timeindex_active", "the active segment's `.timeindex`", _INDEX),
    File("txnindex_older", "a closed segment's `.txnindex`", _INDEX),
    File("txnindex_active", "the active segment's `.txnindex`", _INDEX),
    File("snapshot", "the producer `.snapshot`", _SNAPSHOT),
    File("leader_epoch", "`leader-epoch-checkpoint`", _TEXT_LIST),
    File("partition_metadata", "`partition.metadata`", _TEXT_KV),
    File("recovery_point", "`recovery-point-offset-checkpoint`", _TEXT_LIST),
    File("log_start", "`log-start-offset-checkpoint`", _TEXT_LIST),
    File("replication", "`replication-offset-checkpoint`", _TEXT_LIST),
    File("cleaner", "`cleaner-offset-checkpoint`", _TEXT_LIST),
    File("meta_properties", "`meta.properties`", _TEXT_KV),
    # content-free up to 3.6 (its presence is the news); from 3.7 it holds the broker epoch (KIP-966's
    # CleanShutdownFileHandler): its bytes matter on KRaft 3.7+ only (see :func:`applies`)
    File("clean_shutdown", "`.kafka_cleanshutdown`", _TEXT_KV | _PRESENCE),
    # content-free (FileChannel.tryLock): garbage in it is never read
    File("lock", "`.lock`", _PRESENCE | {"garbage"}),
    File("metadata_log", "the KRaft metadata log's segments", _LOG, _KRAFT),
    File("metadata_snapshot", "the KRaft metadata `.checkpoint` snapshots", _LOG | {"as_left"}, _KRAFT),
    # the metadata log dir's other files the start reads (h-metalog's trials): bootstrap.checkpoint
    # (KafkaRaftServer.initializeLogDirs), __cluster_metadata-0's partition.metadata and leader-epoch-checkpoint
    File(
        "bootstrap_checkpoint",
        "the metadata log dir's `bootstrap.checkpoint`",
        _SNAPSHOT,
        _KRAFT,
        issue=False,
    ),
    File(
        "metadata_partition_metadata",
        "`__cluster_metadata-0/partition.metadata`",
        _TEXT_KV,
        _KRAFT,
        issue=False,
    ),
    File(
        "metadata_leader_epoch",
        "`__cluster_metadata-0/leader-epoch-checkpoint`",
        _TEXT_LIST,
        _KRAFT,
        issue=False,
    ),
    File("quorum_state", "`quorum-state`", _TEXT_KV, _KRAFT),
    File("deleted", "`.deleted` files", _LEFTOVER_FILE),
    File("cleaned", "`.cleaned` files", _LEFTOVER_FILE),
    File(
        "swap", "`.swap` files", _LEFTOVER_FILE | {"zero_filled", "truncated_mid_record", "garbage", "empty"}
    ),
    File("delete_dir", "`-delete` dirs", _LEFTOVER_DIR),
    File("future_dir", "`-future` dirs", _LEFTOVER_DIR),
    File("stray_dir", "`-stray` dirs", _LEFTOVER_DIR),
    File("partition_dir", "a partition dir", _DIR, issue=False),
    File("log_dir", "a log dir", _DIR, issue=False),
)
FILE = {f.key: f for f in FILES}


def applies(file: str, damage: str, fam: str) -> bool:
    """Whether the cell means something (else "n/a")."""
    f = FILE[file]
    if fam not in f.families or damage not in f.damages:
        return False
    # the marker's bytes: read from 3.7 only (KRaft; ZooKeeper mode is gone from 4.0, and 3.7-3.9's ZooKeeper
    # mode is not a lab family)
    return not (file == "clean_shutdown" and DAMAGE[damage].content and fam != FAMILIES[2])


Cell = tuple[str, str]  # (file, damage)

# The older trials, named by what they do: the cells they plant (a trial may plant several)
NAMED: dict[str, tuple[Cell, ...]] = {
    "clean": (
        ("timeindex_older", "zero_filled"), ("index_older", "zero_filled"), ("log_active", "truncated_mid_record"),
        ("log_active", "one_bad_entry"), ("log_older", "one_bad_entry"), ("index_older", "missing"),
        ("timeindex_older", "missing"), ("index_older", "truncated_mid_entry"), ("delete_dir", "as_left"),
        ("swap", "as_left"),
    ),
    "unclean": (
        ("clean_shutdown", "missing"), ("timeindex_older", "zero_filled"), ("index_older", "zero_filled"),
        ("log_active", "truncated_mid_record"), ("log_active", "one_bad_entry"), ("log_older", "one_bad_entry"),
        ("index_older", "missing"), ("timeindex_older", "missing"), ("index_older", "truncated_mid_entry"),
        ("delete_dir", "as_left"), ("log_active", "zero_filled"),
    ),
    "sigkill": (("clean_shutdown", "missing"), ("log_active", "truncated_mid_record")),
    "recovery_threads": (("clean_shutdown", "missing"),),
    "offline-unreadable_timeindex": (("timeindex_older", "unreadable"),),
    "offline-padded_timeindex_root_owned": (("timeindex_older", "unreadable"),),
    "offline-read_only_log": (("log_older", "unreadable"),),
    "offline-root_owned_partition_dir": (("partition_dir", "unreadable"),),
    "offline_then_repaired": (("timeindex_older", "unreadable"),),
    "all_dirs_offline": (("timeindex_older", "unreadable"),),
    "metadata_dir_offline": (("timeindex_older", "unreadable"),),
    "lost_and_found": (("log_dir", "garbage"),),
    "root_files": (("log_dir", "garbage"),),
    "meta_mismatch": (("meta_properties", "one_bad_entry"),),
    "meta_copied": (("meta_properties", "one_bad_entry"),),
    "meta_missing": (("meta_properties", "missing"),),
    "dir_emptied": (("log_dir", "empty"),),
    "dir_missing": (("log_dir", "missing"),),
    "zero_tail": (("log_active", "zero_filled"),),
    "failed_start_markers": (("log_active", "zero_filled"), ("clean_shutdown", "missing")),
    "leftover_files": (("deleted", "as_left"), ("cleaned", "as_left")),
    "unparseable_leftover": (("cleaned", "bad_name"),),
    "unparseable_swap": (("swap", "bad_name"),),
    "index_swap": (("swap", "as_left"),),
    "stray_dir": (("stray_dir", "as_left"),),
    "future_dir": (("future_dir", "as_left"),),
    "future_dir_alone": (("future_dir", "as_left"),),
    "future_dir_renamed": (("future_dir", "as_left"),),
    "stray_future_dir": (("future_dir", "as_left"),),
    "marker-lock_garbage": (("lock", "garbage"),),  # content-free: its bytes are never read
    "marker-cleanshutdown_garbage": (("clean_shutdown", "garbage"),),
    "metadata-log_zero_tail": (("metadata_log", "zero_filled"),),
    "metadata-log_garbage_tail": (("metadata_log", "garbage"),),
    "metadata-index_garbage": (("metadata_log", "garbage"),),  # its .index: rebuilt by the recovery of every start
    "metadata-snapshot_partial": (("metadata_snapshot", "as_left"),),  # a .checkpoint.part
    "metadata-snapshot_latest_missing": (("metadata_snapshot", "missing"),),
}  # fmt: skip
NOT_A_CELL = {
    "no_fault": "the baseline: nothing planted",
    "seed003_retention": "retention of healthy files (seed 003), no damage",
    "stray_partition": "a partition of a topic the metadata does not have: the cluster's state, not a file's damage",
    "reassigned_away": "a replica the metadata assigns elsewhere: the cluster's state, not a file's damage",
}

# file tokens of the prefixed names (checkpoint-, index-, log-, metadata-, type-)
_FILE_TOKENS: dict[str, str] = {
    **{f.key: f.key for f in FILES},
    "log": "log_active", "active": "log_active", "log_rolled": "log_older", "rolled": "log_older",
    "older": "log_older", "closed": "log_older", "older_log": "log_older", "active_log": "log_active",
    "index": "index_active", "offset_index": "index_active", "timeindex": "timeindex_active",
    "time_index": "timeindex_active", "txnindex": "txnindex_active", "txn_index": "txnindex_active",
    "producer_snapshot": "snapshot", "leader_epoch_checkpoint": "leader_epoch", "meta": "meta_properties",
    "recovery_point_offset": "recovery_point", "log_start_offset": "log_start", "replication_offset": "replication",
    "cleaner_offset": "cleaner", "cleanshutdown": "clean_shutdown", "kafka_cleanshutdown": "clean_shutdown",
    "quorum": "quorum_state", "segment": "metadata_log", "metadata_segment": "metadata_log",
    "checkpoint": "metadata_snapshot", "metadata_checkpoint": "metadata_snapshot",
    "partition": "partition_dir", "dir": "log_dir",
}  # fmt: skip
for _s in ("index", "timeindex", "txnindex", "log"):
    for _w, _to in (("rolled", "older"), ("closed", "older"), ("older", "older"), ("active", "active")):
        _FILE_TOKENS[f"{_s}_{_w}"] = f"{_s}_{_to}"
        _FILE_TOKENS[f"{_w}_{_s}"] = f"{_s}_{_to}"
# metadata-<file>: the metadata log's own files
_METADATA_TOKENS = {
    "log": "metadata_log", "segment": "metadata_log", "log_active": "metadata_log", "log_older": "metadata_log",
    "active": "metadata_log", "older": "metadata_log", "snapshot": "metadata_snapshot",
    "checkpoint": "metadata_snapshot", "quorum_state": "quorum_state", "quorum": "quorum_state",
    "bootstrap_checkpoint": "bootstrap_checkpoint", "partition_metadata": "metadata_partition_metadata",
    "leader_epoch": "metadata_leader_epoch",
}  # fmt: skip
# index-<offset|time|txn>_<active|first|second>_<damage> (INDEX_DAMAGE)
for _s, _f in (("offset", "index"), ("time", "timeindex"), ("txn", "txnindex")):
    _FILE_TOKENS[f"{_s}_active"] = f"{_f}_active"
    for _w in ("first", "second"):
        _FILE_TOKENS[f"{_s}_{_w}"] = f"{_f}_older"
_DAMAGE_TOKENS: dict[str, str] = {
    **{d.key: d.key for d in DAMAGES},
    "truncated": "truncated_mid_entry", "mid_entry": "truncated_mid_entry", "mid_record": "truncated_mid_record",
    "truncated_zero": "truncated_0", "truncated_one_byte": "truncated_1", "one_byte": "truncated_1",
    "truncated_1_byte": "truncated_1", "torn": "truncated_mid_record", "bad_entry": "one_bad_entry",
    "corrupt_entry": "one_bad_entry", "other_id": "one_bad_entry", "short_id": "one_bad_entry",
    "unordered": "out_of_order", "beyond_end": "past_end", "deleted": "missing", "root_owned": "unreadable",
    "link": "symlink", "symlink_valid": "symlink", "dangling": "symlink_dangling", "dir": "directory",
    "old_last": "one_bad_entry", "truncated_mid_header": "truncated_mid_record", "garbage_middle": "garbage",
    "bad_magic": "one_bad_entry", "offsets_backwards": "out_of_order",
}  # fmt: skip
PREFIXES = ("checkpoint-", "index-", "log-", "metadata-", "type-")


def cells_of(trial: str) -> tuple[Cell, ...] | None:
    """The cells trial ``trial`` plants, or None when its name maps to none (NOT_A_CELL: () )."""
    if trial in NAMED:
        return NAMED[trial]
    if trial in NOT_A_CELL:
        return ()
    prefix = next((p for p in PREFIXES if trial.startswith(p)), None)
    if prefix is None:
        return None
    rest = trial[len(prefix) :]
    if prefix == "log-":  # the stop (``_unclean``) or a removed index (``_no_index``) is the trial's setting
        rest = re.sub(r"_(unclean|no_index)$", "", rest)
    files = _METADATA_TOKENS if prefix == "metadata-" else _FILE_TOKENS
    if prefix == "log-":  # log-<where>_<damage>: the where is a segment of a partition's log
        files = {k: v for k, v in _FILE_TOKENS.items() if v.startswith("log_")}
    # the longest damage token that ends the name, the rest a file token
    for tok in sorted(_DAMAGE_TOKENS, key=len, reverse=True):
        if rest.endswith("_" + tok):
            head = rest[: -len(tok) - 1]
            if head in files:
                d = _DAMAGE_TOKENS[tok]
                # a 0-byte file is both "empty" and "truncated at 0": the same bytes
                same = {"empty": "truncated_0", "truncated_0": "empty"}.get(d)
                return ((files[head], d),) + (((files[head], same),) if same else ())
    return None


def trials_by_cell(trials: Iterable[str]) -> dict[Cell, list[str]]:
    out: dict[Cell, list[str]] = {}
    for t in trials:
        for c in cells_of(t) or ():
            out.setdefault(c, []).append(t)
    return out


@dataclass(frozen=True)
class Outcome:
    """One trial on one release: the plan and the broker agreed (``ok``), and what the plan said it could not
    know (``unknown``: next_start's reasons, joined)."""

    ok: bool
    unknown: str | None = None


Outcomes = Mapping[tuple[str, str], Outcome]  # (version, trial) -> outcome


def outcomes_from_reports(reports: Iterable[Mapping[str, object]]) -> dict[tuple[str, str], Outcome]:
    out: dict[tuple[str, str], Outcome] = {}
    for r in reports:
        trials = r["trials"]
        assert isinstance(trials, dict)
        for name, t in trials.items():
            pred = t.get("predicted") or {}
            # the plan's unknowns about the planted files (not the host's others: ZooKeeper's cluster id, ...)
            planted = {str(p) for f in t.get("faults") or [] for p in f.get("paths") or []}
            why = "; ".join(
                f"{u.get('what')}: {u.get('reason')}"
                for u in pred.get("unknown") or []
                if any(p in str(u.get("what")) for p in planted)
            )
            out[(str(r["version"]), name)] = Outcome(not t.get("differences"), why or None)
    return out


_MARK = {"agree": "✅", "differ": "❌", "unknown": "❔"}


def _cell(trials: list[str], versions: list[str], outcomes: Outcomes) -> str:
    """A family's cell: each of its releases that ran a trial of the cell, marked."""
    by_state: dict[str, list[str]] = {}
    for v in versions:
        got = [outcomes[(v, t)] for t in trials if (v, t) in outcomes]
        if not got:
            continue
        state = (
            "differ" if not all(o.ok for o in got) else "unknown" if any(o.unknown for o in got) else "agree"
        )
        by_state.setdefault(state, []).append(v)
    if not by_state:
        return "planted, not run"
    return "; ".join(f"{_MARK[s]} {', '.join(vs)}" for s, vs in by_state.items())


def render(trials: Iterable[str], outcomes: Outcomes) -> str:
    """The "The damage matrix" section of docs/fidelity.md: ``trials`` every lab trial (tests/lab/test_fidelity
    SCENARIOS), ``outcomes`` one lab report's."""
    trials = list(trials)
    by_cell = trials_by_cell(trials)
    versions = sorted({v for v, _ in outcomes}, key=parse)
    fam_versions = {f: [v for v in versions if family(v) == f] for f in FAMILIES}
    out = [
        "## The damage matrix",
        "",
        "Issue 36 §2: every file the broker opens at its start x every kind of damage x the three families",
        "(`kafka_lab/matrix.py`; written by `python -m kafka_lab.fidelity_doc` from the lab report above). One table",
        "per family; a row per file, a column per damage. A cell: the releases of that family that ran a trial",
        "planting it, ✅ the plan and the broker agreed, ❌ they differed (see Differences), ❔ the plan said",
        "`unknown` (its reason below); *planted, not run*: a trial exists but this report has no release of the family",
        "that ran it; *not planted*: no trial yet; n/a: the damage means nothing for that file (a marker has no",
        "entries to put out of order; the KRaft metadata log is not there in ZooKeeper mode). Which trials plant a",
        "cell is listed after the tables.",
    ]
    for fam in FAMILIES:
        out += ["", f"### {fam}", "", "| file | " + " | ".join(d.label for d in DAMAGES) + " |"]
        out.append("|---|" + "---|" * len(DAMAGES))
        for f in FILES:
            row = []
            for d in DAMAGES:
                if not applies(f.key, d.key, fam):
                    row.append("n/a")
                elif (f.key, d.key) not in by_cell:
                    row.append("not planted")
                else:
                    row.append(_cell(by_cell[(f.key, d.key)], fam_versions[fam], outcomes))
            out.append(f"| {f.label} | " + " | ".join(row) + " |")
    unknown = sorted(
        (v, t, o.unknown)
        for (v, t), o in outcomes.items()
        if o.unknown and cells_of(t) and any(applies(fl, d, family(v)) for fl, d in cells_of(t) or ())
    )
    out += ["", "What the plan said it could not know, per trial and release:", ""]
    out += [f"- `{t}` on {v}: {why}" for v, t, why in unknown] or ["- nothing"]
    out += ["", "The trials that plant each cell:", ""]
    for (fl, d), names in sorted(by_cell.items(), key=lambda kv: _order(kv[0])):
        out.append(f"- {FILE[fl].label}, {DAMAGE[d].label}: " + ", ".join(f"`{n}`" for n in names))
    out += [
        "",
        "Trials that plant no file damage: " + "; ".join(f"`{k}` ({v})" for k, v in NOT_A_CELL.items()),
    ]
    return "\n".join(out) + "\n"


def _order(cell: Cell) -> tuple[int, int]:
    return [f.key for f in FILES].index(cell[0]), [d.key for d in DAMAGES].index(cell[1])


_ROW = re.compile(r"^\| `([^`]+)` \| (.*) \|$")
_UNKNOWN = re.compile(r"^- `([^`]+)` on ([0-9.]+): (.*)$")


def outcomes_from_doc(doc: str) -> dict[tuple[str, str], Outcome]:
    """The outcomes a docs/fidelity.md was written from: its scenario table's ✅/❌ per trial and release, and the
    matrix section's unknowns (so that a test can check the section is current with the code)."""
    lines = doc.splitlines()
    head = next(i for i, x in enumerate(lines) if x.startswith("| scenario | "))
    versions = [c.strip().split(" ", 1)[0] for c in lines[head].strip("|").split("|")[1:]]
    out: dict[tuple[str, str], Outcome] = {}
    for line in lines[head + 2 :]:
        m = _ROW.match(line)
        if not m:
            break
        for v, c in zip(versions, m.group(2).split(" | "), strict=False):
            if c.startswith(("✅", "❌")):
                out[(v, m.group(1))] = Outcome(c.startswith("✅"))
    section = doc.partition("\n## The damage matrix\n")[2].partition("\n## ")[0]
    for line in section.splitlines():
        m = _UNKNOWN.match(line)
        if m and (m.group(2), m.group(1)) in out:
            out[(m.group(2), m.group(1))] = Outcome(out[(m.group(2), m.group(1))].ok, m.group(3))
    return out
