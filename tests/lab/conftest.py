"""Fixtures of the broker lab: the jars per version, the prepared dataset, and every trial's result."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kafka_lab import broker as lab_broker
from kafka_lab.broker import lab_root
from kafka_lab.jars import LabError
from kafka_lab.trial import TrialResult
from kafka_lab.versions import selected
from tests.lab.dataset import TIMINGS, Dataset, prepare
from tests.lab.scenarios import CI_REPRESENTATIVES, ONLY_SCENARIOS, run_all, skipped_in_ci


def _lab_skip_reason() -> str | None:
    if shutil.which("java") is None and not os.environ.get("KAFKA_OPS_LAB_JAVA"):
        return "no java on PATH"
    if shutil.which("setpriv") is None:
        return "no setpriv (util-linux)"
    return None


# the versions this run covers: CI's set (one per behaviour family) by default; KAFKA_OPS_LAB_VERSIONS=all (make
# lab) runs every lab version, or a comma-separated list
RUN_VERSIONS = selected(os.environ.get("KAFKA_OPS_LAB_VERSIONS"))


@pytest.fixture(scope="session", params=RUN_VERSIONS)
def version(request: pytest.FixtureRequest) -> str:
    reason = _lab_skip_reason()
    if reason:
        pytest.skip(reason)
    return str(request.param)


@pytest.fixture(scope="session")
def jar_dir(version: str) -> Path:
    """The version's jars (fetched with Maven on first use), readable by the broker user."""
    try:
        return lab_broker.jar_dir_for(version)
    except LabError as e:
        pytest.skip(str(e))


@pytest.fixture(scope="session", autouse=True)
def _no_broker_left() -> Iterator[None]:
    yield
    lab_broker.kill_all()


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Under pytest-xdist (`make test`) the lab runs in a worker: its wall times travel to the controller."""
    out = getattr(session.config, "workeroutput", None)
    if out is not None and TIMINGS:
        out["lab_timings"] = json.dumps(TIMINGS)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    got = getattr(node, "workeroutput", {}).get("lab_timings")
    if got:
        TIMINGS.update(json.loads(got))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """The lab's wall time per version and phase (the CI budget: well under 20 minutes for all versions)."""
    if not TIMINGS:
        return
    terminalreporter.section("broker lab wall time")
    for v, phases in TIMINGS.items():
        detail = ", ".join(f"{k} {s:.1f}s" for k, s in phases.items())
        terminalreporter.write_line(f"{v}: {sum(phases.values()):.0f}s ({detail})")


@pytest.fixture(scope="session")
def dataset(version: str, jar_dir: Path) -> Iterator[Dataset]:
    lab_root().mkdir(parents=True, exist_ok=True)
    saved = Path(tempfile.mkdtemp(prefix=f"saved-{version}-", dir=lab_root()))
    try:
        yield prepare(version, saved)
    finally:
        shutil.rmtree(saved, ignore_errors=True)


class Trials(dict[str, TrialResult]):
    """run_all's results; a test asking for a trial the lab does not run on this version (ONLY_SCENARIOS) is
    skipped, with the reason."""

    def __init__(self, version: str, results: dict[str, TrialResult]) -> None:
        super().__init__(results)
        self.version = version

    def __missing__(self, name: str) -> TrialResult:
        if self.version in ONLY_SCENARIOS and name not in ONLY_SCENARIOS[self.version]:
            pytest.skip(
                f"{name}: the lab runs {', '.join(ONLY_SCENARIOS[self.version])} only on {self.version}"
            )
        if name in CI_REPRESENTATIVES and skipped_in_ci(name, self.version):
            pytest.skip(f"{name}: CI runs it on {', '.join(CI_REPRESENTATIVES[name]) or 'no release'} only")
        raise KeyError(name)


@pytest.fixture(scope="session")
def trials(dataset: Dataset) -> dict[str, TrialResult]:
    return Trials(dataset.version, run_all(dataset))


def needs_root() -> None:
    if os.geteuid() != 0:
        pytest.skip("ownership faults need root (the broker runs as the unprivileged user 'kafka')")
