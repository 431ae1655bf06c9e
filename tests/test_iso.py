"""One function formats every time the outputs show (units.iso, issue 24): each style is a public output's format,
so each is pinned here as those outputs print it."""

from __future__ import annotations

import pytest

from kafka_ops.broker import timestamps
from kafka_ops.units import iso

T = 1_793_491_200_000 + 10 * 3_600_000 + 46 * 60_000 + 21_000  # 2026-11-01 10:46:21 UTC


@pytest.mark.parametrize(
    ("ms", "style", "shown"),
    [
        (T, "z", "2026-11-01T10:46:21Z"),  # --now's note: milliseconds only when there are some
        (T + 5, "z", "2026-11-01T10:46:21.005Z"),
        (T, "z_ms", "2026-11-01T10:46:21.000Z"),  # the JSON report (next-start plan, qos)
        (T + 5, "z_ms", "2026-11-01T10:46:21.005Z"),
        (T + 999, "utc_s", "2026-11-01 10:46:21 UTC"),  # findings' messages
        (T, "utc_min", "2026-11-01 10:46 UTC"),  # the HTML page
        (10**20, "z_ms", str(10**20)),  # a hostile index's time out of range: its number, never a traceback
    ],
)
def test_each_style_is_the_format_its_output_prints(ms: int, style: str, shown: str) -> None:
    assert iso(ms, style) == shown  # type: ignore[arg-type]


def test_no_time_is_none_and_unknown_in_messages() -> None:
    assert iso(None, "z_ms") is None
    assert timestamps.iso(None) == "unknown"
    assert timestamps.iso(T) == "2026-11-01 10:46:21 UTC"
