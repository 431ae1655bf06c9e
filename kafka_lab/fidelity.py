"""The model against the broker: the audit's ``next_start`` for a lab broker's stopped files, and a field-by-field
comparison with what that broker then did at its start (kafka_lab.observe).

When they disagree the broker is right: the differences are what the model must learn (tests/lab asserts there
are none, scenario by scenario and version by version).
"""

from __future__ import annotations

import datetime as dt
import os
import time
from pathlib import Path
from typing import Any

from kafka_ops.engine.layout import METADATA_TOPIC

# The broker logs a retention deletion when its check runs; the plan names the check. The lab's checks run every
# second, and the first comes the initial task delay after the start, which the plan takes as its "now": the
# start itself takes a few seconds more than the audit's "now".
DEFAULT_TOLERANCE_S = 15.0


def predict(
    log_dirs: list[Path], server_properties: Path, version: str, broker_user: str | None, *,
    now_ms: int | None = None, horizon_ms: int = 120_000, topic_configs: Path | None = None,
) -> dict[str, Any]:  # fmt: skip
    """The audit's report for a stopped lab broker (its ``next_start`` is the prediction); ``topic_configs``: a
    ``--topic-configs`` file with the overrides the topics were created with (cleanup.policy, retention.bytes)."""
    from kafka_ops.audit import run_audit
    from kafka_ops.facts.model import AuditOptions

    opts = AuditOptions(
        log_dirs=[str(d) for d in log_dirs], server_properties=str(server_properties), kafka_version=version,
        broker_user=broker_user, broker_state="stopped",
        now_ms=now_ms if now_ms is not None else int(time.time() * 1000), horizon_ms=horizon_ms,
        topic_configs=str(topic_configs) if topic_configs is not None else None,
    )  # fmt: skip
    return run_audit(opts)


def _ms(iso: str | None) -> int | None:
    if iso is None:
        return None
    return int(dt.datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1000)


def _listed(ns: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {
        os.path.normpath(s["log"]): s
        for s in ns["segments"]
        if os.path.basename(os.path.dirname(s["log"])) != f"{METADATA_TOPIC}-0"
    }


def compare(
    predicted: dict[str, Any], observed: dict[str, Any], *, observed_until_ms: int | None = None,
    tolerance_s: float = DEFAULT_TOLERANCE_S,
) -> list[str]:  # fmt: skip
    """Differences between the plan and what the broker did, one line each (empty: the model was right).

    ``observed_until_ms``: when the observation ended; a deletion the plan puts later could not be seen, so it is
    not compared. The KRaft metadata log (re-read at every start by design) is left out on both sides.
    """
    out: list[str] = []
    if observed.get("broker") == "hung":  # a report of a lab run before the word was "hangs"
        observed = {**observed, "broker": "hangs"}
    if predicted.get("broker") != observed.get("broker"):
        out.append(
            f"broker: predicted {predicted.get('broker')} ({predicted.get('reason')}), "
            f"broker did {observed.get('broker')} ({observed.get('reason')})"
        )
        return out
    p_dirs = {os.path.normpath(d["path"]): d["state"] for d in predicted["log_dirs"]}
    o_dirs = {os.path.normpath(d["path"]): d["state"] for d in observed["log_dirs"]}
    for path in sorted(set(p_dirs) | set(o_dirs)):
        if p_dirs.get(path) != o_dirs.get(path):
            out.append(f"log dir {path}: predicted {p_dirs.get(path)}, broker made it {o_dirs.get(path)}")
    if observed["broker"] in ("exits", "hangs"):
        return out  # nothing is loaded (or never finishes): the log dirs' states say it all
    offline = {p for p, s in o_dirs.items() if s == "offline"} | {
        p for p, s in p_dirs.items() if s == "offline"
    }
    pred, obs = _listed(predicted), _listed(observed)
    default = {"load": "as_is", "truncated_bytes": 0, "deleted_at": None, "deleted_by": None}
    tol = int(tolerance_s * 1000)
    for log in sorted(set(pred) | set(obs)):
        if os.path.dirname(os.path.dirname(log)) in offline:
            continue  # a dir that goes offline serves nothing: compared as a dir above
        p, o = pred.get(log, default), obs.get(log, default)
        where = f"{os.path.basename(os.path.dirname(log))} segment {int(os.path.basename(log)[:20])}"
        if p["load"] != o["load"]:
            out.append(f"{where}: load predicted {p['load']}, broker: {o['load']} ({_why(p)})")
        if p["truncated_bytes"] != o["truncated_bytes"]:
            out.append(
                f"{where}: truncated bytes predicted {p['truncated_bytes']}, broker: {o['truncated_bytes']}"
            )
        pa, oa = _ms(p["deleted_at"]), _ms(o["deleted_at"])
        if pa is not None and observed_until_ms is not None and pa > observed_until_ms and oa is None:
            continue  # predicted after the observation ended
        if (pa is None) != (oa is None):
            out.append(
                f"{where}: deletion predicted {p['deleted_at']} ({p['deleted_by']}), broker: {o['deleted_at']} "
                f"({o['deleted_by']})"
            )
        elif pa is not None and oa is not None:
            if abs(pa - oa) > tol:
                out.append(
                    f"{where}: deleted at {o['deleted_at']}, predicted {p['deleted_at']} (more than {tolerance_s} s apart)"
                )
            if o["deleted_by"] is not None and p["deleted_by"] != o["deleted_by"]:
                out.append(f"{where}: deleted by {o['deleted_by']}, predicted {p['deleted_by']}")
    out += _compare_leftovers(predicted, observed, offline)
    out += _compare_strays(predicted, observed)
    out += _compare_futures(predicted, observed)
    return out


def _compare_futures(predicted: dict[str, Any], observed: dict[str, Any]) -> list[str]:
    """Each ``-future`` dir's fate: its move completed (renamed in place of the current dir) or kept."""
    pred = {os.path.normpath(f["path"]): f for f in predicted.get("future_dirs", [])}
    obs = {os.path.normpath(f["path"]): f for f in observed.get("future_dirs", [])}
    return _fate_differences(pred, obs, "future dir", "not listed", "not listed")


def _compare_strays(predicted: dict[str, Any], observed: dict[str, Any]) -> list[str]:
    """Each partition dir the plan takes for a stray (renamed -stray, or renamed -delete and deleted) against the
    dirs the broker moved away (kafka_lab.observe.strays); a dir on neither list was kept by both."""
    pred = {
        os.path.normpath(s["path"]): s
        for s in predicted.get("strays", [])
        if s["fate"] in ("renamed_stray", "deleted")
    }
    obs = {os.path.normpath(s["path"]): s for s in observed.get("strays", [])}
    return _fate_differences(pred, obs, "stray fate", "kept", "the plan keeps it")


def _fate_differences(
    pred: dict[str, dict[str, Any]], obs: dict[str, dict[str, Any]], what: str, absent: str, absent_why: str
) -> list[str]:
    """Each path whose ``fate`` the plan and the broker give differently (``absent``: a path a side does not
    list), with the plan's reason."""
    out = []
    for path in sorted(set(pred) | set(obs)):
        p, o = pred.get(path, {}).get("fate", absent), obs.get(path, {}).get("fate", absent)
        if p != o:
            why = pred.get(path, {}).get("reason") or absent_why
            out.append(f"{os.path.basename(path)}: {what} predicted {p}, broker: {o} ({why})")
    return out


def _compare_leftovers(predicted: dict[str, Any], observed: dict[str, Any], offline: set[str]) -> list[str]:
    """Each ``.deleted`` / ``.cleaned`` file's fate (deleted at load or kept). The plan's unfinished-split ``.swap``
    files are not compared: their deletion cannot be told from a swap's rename by the files alone."""

    def by_path(side: dict[str, Any]) -> dict[str, dict[str, Any]]:
        return {
            os.path.normpath(lf["path"]): lf
            for lf in side.get("leftovers", [])
            if lf["kind"] in ("deleted", "cleaned")
            and os.path.basename(os.path.dirname(lf["path"])) != f"{METADATA_TOPIC}-0"
        }

    out = []
    pred, obs = by_path(predicted), by_path(observed)
    for path in sorted(set(pred) | set(obs)):
        if os.path.dirname(os.path.dirname(path)) in offline:
            continue  # compared as a dir
        p, o = pred.get(path, {}).get("fate", "not listed"), obs.get(path, {}).get("fate", "not listed")
        if p != o:
            where = f"{os.path.basename(os.path.dirname(path))} {os.path.basename(path)}"
            out.append(
                f"{where}: predicted {p}, broker: {o} ({pred.get(path, {}).get('reason') or 'not listed'})"
            )
    return out


def _why(p: dict[str, Any]) -> str:
    return str(p.get("reason") or "the plan lists nothing for it")
