"""Shared fixtures: simulated hosts (written once per session and copied when a test changes them)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafka_ops.simulator.host import Failures, HostSpec, SimulatedHost, simulate_host

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
if not CORPUS.exists():  # CI clones next to shared/
    CORPUS = Path("/work/shared/corpus")

NOW_MS = 1_790_000_000_000


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
