"""The [Service] settings the SYSD checks recommend for a broker unit, whether or not they found a problem.

``kafka-ops fix systemd`` writes what the findings recommend; the Ansible role kafka_systemd manages its drop-in
in every case, so it needs the same numbers when the unit is already right: ``python3 collector systemd ...``
prints them (see kafka_ops.collector.remote). Standard library only (shipped to broker hosts). No rule is repeated here:
the stop timeout is SYSD001's estimate, LimitNOFILE SYSD003's need, the stop path SYSD002's drop-in.

Two rules keep a managed unit still (the role runs on every deploy, on live brokers whose data grows):
- never lower what the unit already has: a TimeoutStopSec of ``infinity`` (or 0) or longer than the
  recommendation, a LimitNOFILE above it, stay as they are;
- hysteresis: a value is only raised when it no longer covers the need with a margin (TimeoutStopSec below
  KEEP_TIMEOUT_MARGIN x the stop time needed, or below SYSD001's floor; LimitNOFILE's soft limit below
  KEEP_NOFILE_MARGIN x the descriptors needed, or below SYSD003's minimum). A raise goes to the recommendation
  (x1.25 rounded up to 30 s; x2 rounded up to 10,000), so the next run keeps it until the need grows by about a
  seventh (the stop time) or a third (the descriptors).
"""

from __future__ import annotations

from typing import Any

from kafka_ops.checks import sysd001, sysd003
from kafka_ops.facts.context import Context

KEEP_TIMEOUT_MARGIN = 1.1  # keep a TimeoutStopSec that covers the needed stop time x 1.1 (raised to x1.25)
KEEP_NOFILE_MARGIN = (
    1.5  # keep a LimitNOFILE whose soft limit covers the needed descriptors x 1.5 (raised to x2)
)


def settle_timeout(current_s: float | None, needed_s: float, recommended_s: int) -> tuple[str, str]:
    """(TimeoutStopSec to write, why). ``current_s`` None is systemd's infinity."""
    if current_s is None:
        return "infinity", "kept: the unit already has no stop timeout (infinity), never lowered"
    keep_from = max(sysd001.FLOOR_S, needed_s * KEEP_TIMEOUT_MARGIN)
    if current_s >= recommended_s:
        return (
            f"{current_s:g}s",
            f"kept: {current_s:g} s is at least the recommended {recommended_s} s, never lowered",
        )
    if current_s >= keep_from:
        return f"{current_s:g}s", (
            f"kept: {current_s:g} s still covers the {needed_s:g} s needed x {KEEP_TIMEOUT_MARGIN:g} "
            f"(and the {sysd001.FLOOR_S} s floor)"
        )
    return f"{recommended_s}s", (
        f"raised: {current_s:g} s is below {keep_from:g} s (needed {needed_s:g} s x {KEEP_TIMEOUT_MARGIN:g}, at least "
        f"{sysd001.FLOOR_S} s): the recommendation {recommended_s} s"
    )


def settle_nofile(current: str | None, required: int, recommended: int) -> tuple[str, str]:
    """(LimitNOFILE to write, why). ``current`` is the unit's raw value (``N``, ``soft:hard``, ``infinity``)."""
    if current is not None:
        try:
            soft, hard = sysd003.parse_limit(current)
        except ValueError:
            soft = hard = -1
        keep_from = max(sysd003.RECOMMENDED_MIN, int(required * KEEP_NOFILE_MARGIN))
        raw = current.strip().lower()
        value = "infinity" if raw == "infinity" else (str(soft) if soft == hard else f"{soft}:{hard}")
        if soft >= recommended:
            return value, f"kept: {current} is at least the recommended {recommended}, never lowered"
        if soft >= keep_from:
            return value, (
                f"kept: {current} still covers the {required} descriptors needed x {KEEP_NOFILE_MARGIN:g} (and the "
                f"minimum {sysd003.RECOMMENDED_MIN})"
            )
    return str(recommended), (
        f"raised: {current or 'no LimitNOFILE (systemd default)'} is below the {required} descriptors needed x "
        f"{KEEP_NOFILE_MARGIN:g}: the recommendation {recommended}"
    )


def recommended_settings(ctx: Context, report: dict[str, Any]) -> dict[str, Any]:
    """``ctx`` is the finished audit's AuditContext, ``report`` its report."""
    h = ctx.host
    est = sysd001.estimate(h)
    acc = ctx.cache.get("sysd003")
    need = sysd003.nofile_need(h, acc.segments if acc else 0, acc.txnindex if acc else 0)
    # SIGTERM starts the broker's graceful shutdown (Exit.addShutdownHook -> KafkaServer.shutdown); SYSD002's
    # drop-in also undoes an ExecStop=/KillMode= that would skip it
    settings: dict[str, str] = {"KillSignal": "SIGTERM"}
    for f in report["findings"]:
        if f["check"] == "SYSD002":
            settings.update({k: str(v) for k, v in ((f.get("details") or {}).get("dropin") or {}).items()})
    unit = h.unit
    current: dict[str, Any] = {}
    reasons: dict[str, str] = {}
    recommended_s = int(est["recommended_timeout_s"])  # type: ignore[call-overload]
    if unit is None:
        settings["TimeoutStopSec"] = f"{recommended_s}s"
        settings["LimitNOFILE"] = str(need["recommended_nofile"])
    else:
        timeout, source = sysd001.effective_timeout(h)
        settings["TimeoutStopSec"], reasons["TimeoutStopSec"] = settle_timeout(
            timeout,
            float(est["needed_s"]),  # type: ignore[arg-type]
            recommended_s,
        )
        settings["LimitNOFILE"], reasons["LimitNOFILE"] = settle_nofile(
            unit.service.get("LimitNOFILE"), need["required"], need["recommended_nofile"]
        )
        current = {
            "unit": unit.path,
            "dropins": unit.dropins,
            "timeout_stop_s": timeout,
            "timeout_source": source,
            "kill_signal": unit.service.get("KillSignal", "SIGTERM"),
            "limit_nofile": unit.service.get("LimitNOFILE"),
        }
    return {
        "host": report["host"],
        "settings": settings,
        "settings_reasons": reasons,
        "current": current,
        "stop_estimate": est,
        "nofile": need,
        "findings": [f for f in report["findings"] if f["check"].startswith("SYSD")],
    }
