"""Shared fixtures: simulated hosts (written once per session and copied when a test changes them)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from kafka_ops.simulator.host import Failures, HostSpec, SimulatedHost, simulate_host

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
if not CORPUS.exists():  # CI clones next to shared/
    CORPUS = Path("/work/shared/corpus")

NOW_MS = 1_790_000_000_000
TESTS = Path(__file__).resolve().parent
# `make test` runs these two folders side by side under pytest-xdist (--dist loadgroup): real brokers and
# systemd containers wait on JVMs and boots more than they compute, and each group keeps its session fixtures
# (the lab's prepared datasets, the Molecule testbed) in one worker
HEAVY_GROUPS = ("lab", "molecule")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        try:
            folder = item.path.resolve().relative_to(TESTS).parts[0]
        except ValueError:
            continue
        if folder in HEAVY_GROUPS:
            item.add_marker(pytest.mark.xdist_group(folder))


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
    from kafka_ops.commands import load_all

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
