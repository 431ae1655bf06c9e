"""The benchmarks' recorded ratios (benchmarks/ratios.json) still hold: a quick version of each is measured and
may fall at most 20% below its record (issue 25: speed as a budget). Ratios between two steps measured in the same
run, never absolute times, so a slower CI runner measures the same thing as the machine that recorded them.

Each entry of ratios.json is ``name -> {"ratio": x, "direction": "higher-is-better" | "lower-is-better",
"measure": "MODULE:FUNCTION", ...}``: FUNCTION of benchmarks/MODULE.py is called with a scratch directory and
returns the ratio (all of them together must cost CI well under a minute)."""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "benchmarks"
RATIOS = json.loads((BENCH / "ratios.json").read_text())
TOLERANCE = (
    0.2  # a ratio may be this much worse than recorded (machine noise) before it counts as a regression
)


def worst_allowed(entry: dict[str, object]) -> float:
    recorded = float(entry["ratio"])  # type: ignore[arg-type]
    if entry["direction"] == "higher-is-better":
        return recorded * (1 - TOLERANCE)
    assert entry["direction"] == "lower-is-better", entry["direction"]
    return recorded * (1 + TOLERANCE)


def test_ratios_file_is_well_formed() -> None:
    for name, entry in RATIOS.items():
        assert entry["direction"] in ("higher-is-better", "lower-is-better"), name
        assert float(entry["ratio"]) > 0, name
        module, _, function = str(entry["measure"]).partition(":")
        assert (BENCH / f"{module}.py").is_file() and function, name


def test_tolerance_is_twenty_percent_of_the_record() -> None:
    assert worst_allowed({"ratio": 0.5, "direction": "higher-is-better"}) == pytest.approx(0.4)
    assert worst_allowed({"ratio": 2.0, "direction": "lower-is-better"}) == pytest.approx(2.4)


@pytest.mark.parametrize("name", sorted(RATIOS))
def test_ratio_within_twenty_percent_of_record(name: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    entry = RATIOS[name]
    module, _, function = entry["measure"].partition(":")
    sys.path.insert(0, str(BENCH))
    try:
        measure = getattr(importlib.import_module(module), function)
    finally:
        sys.path.remove(str(BENCH))
    got = float(measure(str(tmp_path_factory.mktemp(name))))
    limit = worst_allowed(entry)
    worse = got < limit if entry["direction"] == "higher-is-better" else got > limit
    assert not worse, (
        f"{name}: measured {got:.3f}, recorded {entry['ratio']} ({entry['direction']}): more than "
        f"{TOLERANCE:.0%} worse (limit {limit:.3f})"
    )
