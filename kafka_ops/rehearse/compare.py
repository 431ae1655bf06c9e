"""The plan against a start, field by field: ``next_start`` as the audit predicts it, and as a start did it.

One comparison for both starts that judge the plan: the rehearsal's (``rehearsal.differences``) and the lab's real
brokers (kafka_lab.fidelity, tests/lab). Each difference is a dict: ``what`` (broker, log_dir, segment,
leftover, stray, future_dir), ``path`` (none for the broker), ``field`` (for a segment: load, truncated_bytes,
deleted, deleted_at, deleted_by), ``plan``, ``observed`` and ``text``, a line to read.

When they disagree the start is right: the differences are what the model must learn.
"""

from __future__ import annotations

import datetime as dt
import os
from typing import Any

from kafka_ops.engine.layout import METADATA_TOPIC

# The broker logs a retention deletion when its check runs; the plan names the check. The lab's checks run every
# second, and the first comes the initial task delay after the start, which the plan takes as its "now": the
# start itself takes a few seconds more than the audit's "now".
DEFAULT_TOLERANCE_S = 15.0


def _ms(iso: str | None) -> int | None:
    if iso is None:
        return None
    return int(dt.datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1000)


def _listed(ns: dict[str, Any]) -> dict[str, dict[str, Any]]:
    # the KRaft metadata log is re-read (recovered from 0) at every start by design: not compared
    return {
        os.path.normpath(s["log"]): s
        for s in ns.get("segments", [])
        if os.path.basename(os.path.dirname(s["log"])) != f"{METADATA_TOPIC}-0"
    }


def _d(
    what: str, path: str | None, plan: Any, observed: Any, text: str, field: str | None = None
) -> dict[str, Any]:
    out: dict[str, Any] = {"what": what}
    if path is not None:
        out["path"] = path
    if field is not None:
        out["field"] = field
    return out | {"plan": plan, "observed": observed, "text": text}


def differences(
    predicted: dict[str, Any], observed: dict[str, Any], *, observed_until_ms: int | None = None,
    tolerance_s: float | None = DEFAULT_TOLERANCE_S, by: str = "the broker",
) -> list[dict[str, Any]]:  # fmt: skip
    """Where ``predicted`` (the plan) and ``observed`` (a start, in next_start's schema) differ; empty: the plan
    was right.

    ``observed_until_ms``: when the observation ended; a deletion the plan puts later could not be seen, so it is
    not compared. ``tolerance_s``: how far a deletion's time may be from the plan's; None compares whether a
    segment was deleted, not when nor the reason's wording (a rehearsal starts later than the audit's "now").
    ``by``: who did it, in the lines to read ("the broker", "the rehearsed start").
    """
    out: list[dict[str, Any]] = []
    if observed.get("broker") in ("hung", "no answer"):  # reports of before the word was "hangs"
        observed = {**observed, "broker": "hangs"}
    pb, ob = predicted.get("broker"), observed.get("broker")
    if pb != ob:
        said = ob
        out.append(
            _d("broker", None, pb, ob,
               f"the plan says the broker {pb}" + (f" ({predicted['reason']})" if predicted.get("reason") else "")
               + f"; {by} {said}" + (f": {observed['reason']}" if observed.get("reason") else ""))
        )  # fmt: skip
        return out
    p_dirs = {os.path.normpath(d["path"]): d for d in predicted.get("log_dirs", [])}
    o_dirs = {os.path.normpath(d["path"]): d for d in observed.get("log_dirs", [])}
    for path in sorted(set(p_dirs) | set(o_dirs)):
        p, o = p_dirs.get(path, {}).get("state"), o_dirs.get(path, {}).get("state")
        if p != o:
            why = o_dirs.get(path, {}).get("reason")
            out.append(
                _d("log_dir", path, p, o,
                   f"the plan says {path} is {p or 'not listed'}; {by} had it {o or 'not listed'}"
                   + (f": {why}" if why else ""))
            )  # fmt: skip
    if ob in ("exits", "hangs"):
        return out  # nothing is loaded (or never finishes): the log dirs' states say it all
    offline = {p for p, d in o_dirs.items() if d.get("state") == "offline"} | {
        p for p, d in p_dirs.items() if d.get("state") == "offline"
    }
    pred, obs = _listed(predicted), _listed(observed)
    default = {"load": "as_is", "truncated_bytes": 0, "deleted_at": None, "deleted_by": None}
    for log in sorted(set(pred) | set(obs)):
        if os.path.dirname(os.path.dirname(log)) in offline:
            continue  # a dir that goes offline serves nothing: compared as a dir above
        p, o = pred.get(log, default), obs.get(log, default)
        if p["load"] != o["load"]:
            why = p.get("reason") or "the plan lists nothing for it"
            out.append(
                _d("segment", log, p["load"], o["load"],
                   f"{log}: the plan says {p['load']} ({why}); {by}: {o['load']}", "load")
            )  # fmt: skip
        pt, ot = p.get("truncated_bytes") or 0, o.get("truncated_bytes") or 0
        if pt != ot:
            out.append(
                _d("segment", log, pt, ot, f"{log}: the plan truncates {pt} bytes; {by} truncated {ot}",
                   "truncated_bytes")
            )  # fmt: skip
        pa, oa = _ms(p.get("deleted_at")), _ms(o.get("deleted_at"))
        planned = pa is not None or (tolerance_s is None and p.get("deleted_by") is not None)
        if (
            planned
            and oa is None
            and pa is not None
            and observed_until_ms is not None
            and pa > observed_until_ms
        ):
            continue  # the plan deletes it after the observation ended
        if planned != (oa is not None):
            text = (
                f"the plan keeps {log}; {by} deleted it ({o.get('deleted_by') or 'no reason logged'}) at "
                f"{o.get('deleted_at')}"
                if oa is not None
                else f"the plan deletes {log} ({p.get('deleted_by')}) at {p.get('deleted_at')}; {by} kept it"
                + (" within its window" if observed_until_ms is not None else "")
            )
            out.append(
                _d("segment", log, "deleted" if planned else "kept", "deleted" if oa is not None else "kept", text,
                   "deleted")
            )  # fmt: skip
        elif pa is not None and oa is not None and tolerance_s is not None:
            if abs(pa - oa) > int(tolerance_s * 1000):
                out.append(
                    _d("segment", log, p["deleted_at"], o["deleted_at"],
                       f"{log}: {by} deleted it at {o['deleted_at']}, the plan at {p['deleted_at']} (more than "
                       f"{tolerance_s} s apart)", "deleted_at")
                )  # fmt: skip
            if o.get("deleted_by") is not None and p.get("deleted_by") != o["deleted_by"]:
                out.append(
                    _d("segment", log, p.get("deleted_by"), o["deleted_by"],
                       f"{log}: {by} deleted it by {o['deleted_by']}, the plan by {p.get('deleted_by')}",
                       "deleted_by")
                )  # fmt: skip
    out += _leftovers(predicted, observed, offline, by)
    out += _strays(predicted, observed, by)
    out += _futures(predicted, observed, by)
    return out


def _futures(predicted: dict[str, Any], observed: dict[str, Any], by: str) -> list[dict[str, Any]]:
    """Each ``-future`` dir's fate: its move completed (renamed in place of the current dir) or kept."""
    pred = {os.path.normpath(f["path"]): f for f in predicted.get("future_dirs") or []}
    obs = {os.path.normpath(f["path"]): f for f in observed.get("future_dirs") or []}
    return _fates(pred, obs, "future_dir", "not listed", "the plan does not list it", by)


def _strays(predicted: dict[str, Any], observed: dict[str, Any], by: str) -> list[dict[str, Any]]:
    """Each partition dir the plan takes for a stray (renamed -stray, or renamed -delete and deleted) against the
    dirs the start moved away (kafka_ops.rehearse.outcome.strays); a dir on neither list was kept by both."""
    pred = {
        os.path.normpath(s["path"]): s
        for s in predicted.get("strays") or []
        if s["fate"] in ("renamed_stray", "deleted")
    }
    obs = {os.path.normpath(s["path"]): s for s in observed.get("strays") or []}
    return _fates(pred, obs, "stray", "kept", "the plan keeps it", by)


def _fates(
    pred: dict[str, dict[str, Any]], obs: dict[str, dict[str, Any]], what: str, absent: str, absent_why: str,
    by: str,
) -> list[dict[str, Any]]:  # fmt: skip
    """Each path whose ``fate`` the plan and the start give differently (``absent``: a path a side does not list),
    with the plan's reason."""
    out = []
    for path in sorted(set(pred) | set(obs)):
        p, o = pred.get(path, {}).get("fate", absent), obs.get(path, {}).get("fate", absent)
        if p != o:
            label = what.replace("_", " ")
            said = (
                absent_why
                if path not in pred
                else f"the plan says {p}" + (f" ({pred[path]['reason']})" if pred[path].get("reason") else "")
            )
            out.append(_d(what, path, p, o, f"{path}: {label}: {said}; {by}: {o}"))
    return out


def _leftovers(
    predicted: dict[str, Any], observed: dict[str, Any], offline: set[str], by: str
) -> list[dict[str, Any]]:
    """Each ``.deleted`` / ``.cleaned`` file's fate (deleted at load or kept). The plan's unfinished-split ``.swap``
    files are not compared: their deletion cannot be told from a swap's rename by the files alone."""

    def by_path(side: dict[str, Any]) -> dict[str, dict[str, Any]]:
        return {
            os.path.normpath(lf["path"]): lf
            for lf in side.get("leftovers") or []
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
            said = (
                "the plan does not list it"
                if path not in pred
                else f"the plan says {p}" + (f" ({pred[path]['reason']})" if pred[path].get("reason") else "")
            )
            out.append(_d("leftover", path, p, o, f"{path}: {said}; {by}: {o}"))
    return out
