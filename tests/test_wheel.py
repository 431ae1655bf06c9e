"""What the wheel holds: kafka_ops and nothing of the development tree (issue 24: the broker lab, ~4,100 lines that
download Kafka releases and start brokers, shipped in the wheel though only the tests import it).

The packages are found as setuptools finds them when it builds the wheel, from pyproject.toml's own
``[tool.setuptools.packages.find]`` table (``namespaces`` defaults to true there: every folder counts, not only
those with an ``__init__.py``); building a wheel here would need a newer setuptools than the venv's and the network.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from setuptools import find_namespace_packages, find_packages

ROOT = Path(__file__).resolve().parent.parent


def wheel_packages() -> list[str]:
    find = dict(
        tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]["find"]
    )
    namespaces = find.pop("namespaces", True)
    where = find.pop("where", ["."])
    finder = find_namespace_packages if namespaces else find_packages
    return sorted(p for w in where for p in finder(where=str(ROOT / w), **find))


def test_the_wheel_holds_kafka_ops_and_not_the_broker_lab() -> None:
    assert (ROOT / "kafka_lab" / "broker.py").is_file()  # the lab is there to be left out
    packages = wheel_packages()
    assert "kafka_ops" in packages and "kafka_ops.cli" in packages
    outside = [p for p in packages if p.split(".")[0] != "kafka_ops"]
    assert outside == [], f"the wheel would hold packages besides kafka_ops: {outside}"
    lab = [p for p in packages if "lab" in p.split(".")]
    assert lab == [], f"the wheel would hold the broker lab: {lab}"
    assert not any(p.startswith(("tests", "benchmarks")) for p in packages)
