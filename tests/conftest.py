"""Shared fixtures: simulated hosts (written once per session and copied when a test changes them)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from kafka_ops.simulator.host import Failures, HostSpec, SimulatedHost, simulate_host

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
if not CORPUS.exists():  # CI clones next to shared/
    CORPUS = Path("/work/shared/corpus")

NOW_MS = 1_790_000_000_000
# `make test`'s heavy pass runs in two pytest-xdist workers on two cores, with a scheduler of our own (xdist 3.8's
# xdist_group marks do not reach its scheduler under pytest 9). A unit of work is a test file, but for
# - "lab": the lab's trials (LAB_TRIALS: each release's prepared dataset and trials, session fixtures) with the
#   roles' runs on local hosts (tests/test_roll_*.py) first: beside the 3 + 3 brokers scenario, at the end, the roll
#   tests once failed one test (session 16);
# - "molecule": tests/molecule (the testbed, made once);
# - "spark": tests/fleet and tests/qos, for a run of them in workers (one Spark at a time: two side by side took 1.7x
#   longer each; the fleet's SSH hosts in network namespaces, whose setup tears down any other's).
# The heavy pass starts with "lab" in one worker and "molecule" in the other (2026-11-29, alone: ~6 + ~25 min against
# ~30); the lab's other files (clusters, DumpLogSegments, seeds 001 and 004: module fixtures of their own) go to
# whichever worker is free first. Units go out in collection order (pytest_collection_modifyitems below).
BEFORE_LAB = (
    "tests/test_roll_ops.py", "tests/test_roll_order.py", "tests/test_roll_waits.py", "tests/test_roll_rehearse.py",
)  # fmt: skip
LAB_TRIALS = tuple(
    f"tests/lab/test_{n}.py" for n in ("broker_faults", "fidelity", "partition_faults", "smoke")
)
FOLDERS = {"tests/fleet/": "spark", "tests/qos/": "spark", "tests/molecule/": "molecule"}
FIRST = ("spark", "lab", "molecule")


def unit_of(nodeid: str) -> str:
    """The unit of work a test belongs to (one worker runs a unit's tests, in collection order)."""
    path = nodeid.split("::")[0]
    if path in BEFORE_LAB or path in LAB_TRIALS:
        return "lab"
    return next((unit for prefix, unit in FOLDERS.items() if path.startswith(prefix)), path)


def _rank(item: pytest.Item) -> tuple[int, bool]:
    unit = unit_of(item.nodeid)
    first = FIRST.index(unit) if unit in FIRST else len(FIRST)
    return first, item.nodeid.split("::")[0] not in BEFORE_LAB


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # under pytest-xdist only (its controller and workers): a stable sort, each file's tests together and in
    # pytest's order (the lab's by release); a run in one process keeps pytest's order
    if getattr(config.option, "numprocesses", None) or os.environ.get("PYTEST_XDIST_WORKER"):
        items.sort(key=_rank)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    from xdist.scheduler import LoadScopeScheduling

    class ByUnit(LoadScopeScheduling):
        def schedule(self) -> None:
            self.config.option.loadscopereorder = (
                False  # units in collection order, not by their number of tests
            )
            super().schedule()

        def _split_scope(self, nodeid: str) -> str:
            return unit_of(nodeid)

    return ByUnit(config, log)


@pytest.fixture(scope="session")
def healthy_host(tmp_path_factory: pytest.TempPathFactory) -> SimulatedHost:
    """A cleanly stopped broker with nothing wrong (read-only: copy it before changing it)."""
    return simulate_host(str(tmp_path_factory.mktemp("healthy")), HostSpec(now_ms=NOW_MS))


@pytest.fixture(scope="session")
def broken_host(tmp_path_factory: pytest.TempPathFactory) -> SimulatedHost:
    """Every seed failure planted (read-only)."""
    return simulate_host(
        str(tmp_path_factory.mktemp("broken")), HostSpec(now_ms=NOW_MS, failures=Failures.all())
    )


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., tuple[int, str, str]]:
    """The CLI in this process, as the entry point runs it: cli(*args) -> (exit code, stdout, stderr)."""
    from kafka_ops.cli.framework import load_all

    def run(*args: str) -> tuple[int, str, str]:
        code = load_all()(args=[str(a) for a in args], standalone_mode=False)
        out, err = capsys.readouterr()
        return int(code), out, err

    return run


def tree(root: str | Path) -> dict[str, tuple[int, int, int]]:
    """Every path under root with its size, mtime and mode: to assert that a refused command changed nothing."""
    out = {}
    for p in sorted(Path(root).rglob("*")):
        st = p.lstat()
        out[str(p)] = (st.st_size, st.st_mtime_ns, st.st_mode)
    return out
