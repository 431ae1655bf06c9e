"""Durations and times from command-line values: one grammar for every option of every command; and sizes and
durations as people read them (human_bytes, human_ms).

Standard library only and light (the CLI imports it at start; it is shipped to hosts with the collector).

Durations: a number and a unit, or several ('1h30m'): ms, s, m (or min), h, d, w, any case, spaces allowed. A bare
number only where the option's name says the unit (--timeout-stop-sec, --now-ms) or as an older spelling that stays
valid (--horizon 24: hours, deprecated), and refused when too large to be meant in that unit (--horizon 604800000).
Times (--now and the like): ISO 8601 (UTC unless it gives an offset) or epoch milliseconds; epoch seconds stay
valid (digits below 10^11).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from typing import Literal, overload

_NUMBER = re.compile(r"^[0-9]+(\.[0-9]+)?$")
_SPAN_MS = {
    "ms": 1,
    "s": 1000,
    "m": 60_000,
    "min": 60_000,
    "h": 3_600_000,
    "d": 86_400_000,
    "w": 604_800_000,
}
# Epoch numbers: below 10^11 they are seconds (up to the year 5138), from 10^11 on milliseconds (from 1973 on);
# 10^14 and above would be microseconds or nanoseconds, which no option takes.
SECONDS_BELOW = 100_000_000_000
MILLIS_BELOW = 100_000_000_000_000

# ------------------------------------------------------------------------------------ durations and times
# One grammar for every duration option of every command: a number and a unit, or several ('1h30m'):
# ms, s, m (or min), h, d, w; spaces between them allowed. A bare number only where the option's name says the
# unit (--timeout-stop-sec, --now-ms), or as an older spelling that stays valid (--horizon 24: hours); a bare
# number too large to be meant in that unit is refused (`--horizon 604800000` is not 69 000 years).
_PART = re.compile(r"(\d+(?:\.\d+)?)\s*(min|ms|s|m|h|d|w)", re.IGNORECASE)
_DURATION = re.compile(r"^(?:\d+(?:\.\d+)?\s*(?:min|ms|s|m|h|d|w)\s*)+$", re.IGNORECASE)
_UNIT_NAMES = {"ms": "milliseconds", "s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
DURATION_HELP = "a number and a unit: ms, s, m, h, d or w, e.g. 420s, 5m, 168h, 7d or 1h30m"
MAX_DURATION_MS = 100 * 365 * 86_400_000  # a century: longer is a unit mistake, never an intent


def parse_duration(text: str, bare: str | None = None, most_ms: int = MAX_DURATION_MS) -> int:
    """A duration -> milliseconds (ValueError with one line saying why not).

    ``bare``: the unit of a number without one ('s' for --timeout-stop-sec), None where a unit is required."""
    s = str(text).strip()
    if _NUMBER.match(s):
        if bare is None:
            raise ValueError(f"not a duration: {text!r} has no unit (expected {DURATION_HELP})")
        ms = round(float(s) * _SPAN_MS[bare])
        if ms > most_ms:
            raise ValueError(
                f"{s} {_UNIT_NAMES[bare]} is implausible ({ms // 86_400_000 // 365:,} years): give the unit, "
                f"e.g. {s}ms or 7d ({DURATION_HELP})"
            )
        return ms
    if not _DURATION.match(s):
        raise ValueError(f"not a duration: {text!r} (expected {DURATION_HELP})")
    ms = round(sum(float(n) * _SPAN_MS[u.lower()] for n, u in _PART.findall(s)))
    if ms > most_ms:
        raise ValueError(f"not a plausible duration: {text!r} is more than a century")
    return ms


def parse_span(text: str) -> int:
    """'24h', '7d', '90m', '3600s' -> milliseconds (a bare number is hours: the older spelling, kept)."""
    return parse_duration(text, bare="h")


def seconds_parser(least: float = 0.0) -> Callable[[object], float]:
    """A parser for a seconds option (typer's ``parser=``): a bare number is seconds, or any duration (5m);
    below ``least`` is refused. ValueError's text is what the CLI prints after the option's name."""

    def parse(text: object) -> float:
        if isinstance(text, (int, float)):
            s = float(text)
        else:
            s = parse_duration(str(text), bare="s") / 1000
        if s < least:
            raise ValueError(f"must be at least {least:g}s, not {text}")
        return s

    return parse


def read_time(text: str) -> tuple[int, str]:
    """An ISO 8601 time, epoch seconds or epoch milliseconds -> (epoch ms, how it was read).

    Digits alone are decided by magnitude (see SECONDS_BELOW); an ISO time without an offset is UTC."""
    s = text.strip()
    if _NUMBER.match(s):
        n = float(s)
        if n < SECONDS_BELOW:
            return round(n * 1000), "epoch seconds"
        if "." not in s and n < MILLIS_BELOW:
            return int(s), "epoch milliseconds"
        raise ValueError(
            f"not a time: {text!r} (too large for epoch milliseconds: microseconds or nanoseconds? give "
            "ISO 8601, epoch seconds or epoch milliseconds)"
        )
    try:
        t = dt.datetime.fromisoformat(s.replace("z", "Z").replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(
            f"not a time: {text!r} (expected ISO 8601, epoch seconds or epoch milliseconds)"
        ) from None
    if t.tzinfo is None:
        t = t.replace(tzinfo=dt.timezone.utc)
        return int(t.timestamp() * 1000), "ISO 8601 in UTC (it gives no offset)"
    return int(t.timestamp() * 1000), "ISO 8601"


def parse_now_ms(text: str) -> int:
    """An option named in milliseconds (--now-ms): digits are epoch milliseconds, whatever their size; any other
    spelling is read as --now reads it (ISO 8601)."""
    s = text.strip()
    if s.isdigit():
        return int(s)
    return read_time(s)[0]


def parse_now(text: str) -> int:
    """Epoch milliseconds from an ISO 8601 time, epoch seconds or epoch milliseconds (see read_time)."""
    return read_time(text)[0]


# The formats a time is shown in: each is a public output's, so it stays what it is (reports are compared byte
# for byte); a new output takes one of these.
TimeStyle = Literal["z", "z_ms", "utc_s", "utc_min"]


@overload
def iso(ms: int, style: TimeStyle = "z") -> str: ...
@overload
def iso(ms: None, style: TimeStyle = "z") -> None: ...
@overload
def iso(ms: int | None, style: TimeStyle = "z") -> str | None: ...
def iso(ms: int | None, style: TimeStyle = "z") -> str | None:
    """Epoch milliseconds as a UTC time (None stays None; a time out of range is shown as its number):
    ``z`` 2026-11-01T10:46:21Z, milliseconds only when not zero (the notes on stderr, --now's);
    ``z_ms`` 2026-11-01T10:46:21.000Z (the JSON report's times: the next-start plan, qos);
    ``utc_s`` 2026-11-01 10:46:21 UTC (the findings' messages, forecast); ``utc_min`` 2026-11-01 10:46 UTC (the
    HTML page)."""
    if ms is None:
        return None
    try:
        t = dt.datetime.fromtimestamp(ms / 1000, tz=dt.timezone.utc)
    except (OverflowError, OSError, ValueError):
        return str(ms)
    if style == "z_ms":
        return t.isoformat(timespec="milliseconds").replace("+00:00", "Z")
    if style == "utc_s":
        return t.strftime("%Y-%m-%d %H:%M:%S UTC")
    if style == "utc_min":
        return t.strftime("%Y-%m-%d %H:%M UTC")
    return t.strftime("%Y-%m-%dT%H:%M:%S") + (f".{ms % 1000:03d}" if ms % 1000 else "") + "Z"


def time_note(option: str, text: str) -> str:
    """What the run understood a time option to be: '--now 1790000000000 read as epoch milliseconds: ...'."""
    ms, how = read_time(text)
    return f"{option} {text} read as {how}: {iso(ms)}"


# Sizes and durations as people read them, in the audit's messages and every renderer.
def human_bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"  # pragma: no cover


def human_ms(ms: float) -> str:
    s = ms / 1000
    if abs(s) < 120:
        return f"{s:.0f} s"
    if abs(s) < 7200:
        return f"{s / 60:.0f} min"
    if abs(s) < 2 * 86400:
        return f"{s / 3600:.1f} h"
    return f"{s / 86400:.1f} days"
