"""`pip install .` is the CLI's runtime alone; the extras add the rest, and `.[dev]` (make test, CI) holds them all."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def names(requirements: list[str]) -> set[str]:
    return {re.match(r"[A-Za-z0-9_.-]+", r).group(0).lower().replace("_", "-") for r in requirements}


def test_the_runtime_is_small_and_the_heavy_parts_are_extras() -> None:
    runtime = names(PROJECT["dependencies"])
    # kafka-python: `cluster check|status` are the rolling-restart role's gates, run by this CLI on the controller
    assert runtime <= {"typer", "rich", "pydantic", "markdown-it-py", "pyyaml", "kafka-python"}, runtime
    extras = PROJECT["optional-dependencies"]
    assert {"pyspark", "pyarrow", "paramiko", "ansible-core"} <= names(extras["spark"])
    assert names(extras["cluster"]) == {"cryptography"}  # --command-config's PKCS12/PEM stores
    for heavy in ("pyspark", "playwright", "molecule", "cryptography", "pytest"):
        assert heavy not in runtime


def test_dev_holds_every_extra_so_that_make_test_runs_everything() -> None:
    extras = PROJECT["optional-dependencies"]
    dev = names(extras["dev"])
    for name, reqs in extras.items():
        assert names(reqs) <= dev, f"the {name} extra is not all in dev: {names(reqs) - dev}"
    makefile = (ROOT / "Makefile").read_text()
    assert "pip install -q -e '.[dev]'" in makefile  # make venv / make test, as CI (.ci/run -> make test)


def test_license_is_an_spdx_string_not_the_deprecated_table() -> None:
    assert PROJECT["license"] == "Apache-2.0"
    build = tomllib.loads((ROOT / "pyproject.toml").read_text())["build-system"]
    assert "setuptools>=77" in build["requires"]  # the first setuptools that reads an SPDX license string
