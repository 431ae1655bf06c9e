"""The open-files limit the broker's unit gives it, for the sandboxed JVM (issue 38: "the unit's limits").

A start with many segments opens each one (and its indexes): under a low LimitNOFILE the real start fails with
"Too many open files", so the rehearsal must run under the same limit, not kafka-ops' own. systemd.exec(5):
LimitNOFILE=N is soft and hard N, S:H each, ``infinity`` fs.nr_open; unset, DefaultLimitNOFILE= of
systemd-system.conf(5), 1024:524288 since systemd 240 (kafka_ops.checks.sysd003 reads the same setting).
"""

from __future__ import annotations

from kafka_ops.checks.sysd003 import DEFAULT_SOFT, NEW_SYSTEMD_HARD, parse_limit
from kafka_ops.facts.systemd import find_unit, load_unit


def unit_nofile(unit_path: str | None) -> tuple[tuple[int, int] | None, str]:
    """((soft, hard), where from) for the broker's unit, or (None, why) when no unit is found or read: the
    sandbox then keeps kafka-ops' own limit and the report says so."""
    path = unit_path or find_unit()
    if not path:
        return None, "no systemd unit found (--systemd-unit): kafka-ops' own open-files limit applies"
    try:
        unit = load_unit(path)
    except Exception as exc:  # the audit reports the unit itself
        return None, f"the unit {path} could not be read ({exc}): kafka-ops' own open-files limit applies"
    raw = unit.service.get("LimitNOFILE")
    if raw:
        try:
            return parse_limit(raw), f"LimitNOFILE={raw} of {path}"
        except ValueError:
            pass  # systemd ignores a malformed value: its default applies
    return (DEFAULT_SOFT, NEW_SYSTEMD_HARD), (
        f"LimitNOFILE unset in {path}: systemd's DefaultLimitNOFILE {DEFAULT_SOFT}:{NEW_SYSTEMD_HARD} (240+)"
    )


def _can_raise() -> bool:
    """CAP_SYS_RESOURCE in our effective set (bit 24 of CapEff): what raising a hard limit needs."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("CapEff:"):
                    return bool(int(line.split()[1], 16) >> 24 & 1)
    except (OSError, ValueError):
        pass
    return False


def applicable(nofile: tuple[int, int]) -> tuple[tuple[int, int], str | None]:
    """The (soft, hard) the sandbox can give the JVM, and why it is less than the unit's (None: it is the unit's).
    Lowering is always allowed; raising the hard limit above ours needs CAP_SYS_RESOURCE, which a root in a
    container may lack: then ours is the most, and a start that needs more fails in the rehearsal only."""
    import resource

    soft, hard = nofile
    ours = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    if hard <= ours or ours == resource.RLIM_INFINITY or _can_raise():
        return (soft, hard), None
    return (min(soft, ours), ours), (
        f"capped at {ours}: kafka-ops runs without CAP_SYS_RESOURCE and cannot raise its hard limit to the unit's "
        f"{hard}; a start that needs more descriptors fails in the rehearsal only"
    )
