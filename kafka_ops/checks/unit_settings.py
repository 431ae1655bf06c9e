"""The [Service] settings the SYSD checks recommend for a broker unit, whether or not they found a problem.

``kafka-ops fix systemd`` writes what the findings recommend; the Ansible role kafka_systemd manages its drop-in
in every case, so it needs the same numbers when the unit is already right: ``python3 collector systemd ...``
prints them (see kafka_ops.remote). Standard library only (shipped to broker hosts). No rule is repeated here:
the stop timeout is SYSD001's estimate, LimitNOFILE SYSD003's need, the stop path SYSD002's drop-in.
"""

from __future__ import annotations

from typing import Any

from kafka_ops.checks import sysd001, sysd003


def recommended_settings(ctx: Any, report: dict[str, Any]) -> dict[str, Any]:
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
    settings["TimeoutStopSec"] = f"{int(est['recommended_timeout_s'])}s"  # type: ignore[call-overload]
    settings["LimitNOFILE"] = str(need["recommended_nofile"])
    unit = h.unit
    current: dict[str, Any] = {}
    if unit is not None:
        timeout, source = sysd001.effective_timeout(h)
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
        "current": current,
        "stop_estimate": est,
        "nofile": need,
        "findings": [f for f in report["findings"] if f["check"].startswith("SYSD")],
    }
