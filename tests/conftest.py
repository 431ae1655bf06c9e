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
# `make test` runs tests/lab and tests/molecule side by side in two pytest-xdist workers: real brokers and systemd
# containers wait on JVMs and boots more than they compute. Each folder is one unit of work (its session fixtures,
# the lab's prepared datasets and the Molecule testbed, are made once, in one worker); any other test file is one
# unit. A scheduler of our own: xdist 3.8's xdist_group marks do not reach its scheduler under pytest 9.
HEAVY_GROUPS = ("lab", "molecule")


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    from xdist.scheduler import LoadScopeScheduling

    class ByFolder(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            parts = nodeid.split("::")[0].split("/")
            if len(parts) > 2 and parts[0] == "tests" and parts[1] in HEAVY_GROUPS:
                return parts[1]
            return nodeid.split("::")[0]

    return ByFolder(config, log)


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
