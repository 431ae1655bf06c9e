"""The audit with worker processes (kafka_ops.facts.pool) gives the one-process report, byte for byte: same
findings, plan, forecast and errors, and the same partitions streamed to ``on_partition`` in the same order."""

from __future__ import annotations

import json
import os
import pwd
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from kafka_ops.audit import partition_row, run_audit
from kafka_ops.audit.options import audit_options
from kafka_ops.facts import collect, mounts, pool
from kafka_ops.simulator.host import Failures, HostSpec, SimulatedHost, simulate_host
from tests.conftest import NOW_MS


@pytest.fixture(autouse=True)
def steady_disk(monkeypatch: pytest.MonkeyPatch) -> None:
    """The same free space for every run (other processes write to the disk meanwhile: DIR001/DIR004 quote it)."""
    monkeypatch.setattr(
        mounts.os,
        "statvfs",
        lambda path: SimpleNamespace(
            f_blocks=1 << 26,
            f_frsize=4096,
            f_bavail=1 << 25,
            f_bfree=1 << 25,
            f_files=1 << 20,
            f_favail=1 << 19,
        ),
    )


def _audit(
    host: SimulatedHost, workers: int, **kw: Any
) -> tuple[str, list[dict[str, Any]], list[tuple[str, int, int]]]:
    opts = audit_options(
        server_properties=host.server_properties, systemd_unit=host.systemd_unit, topic_configs=host.topic_configs,
        broker_log=[host.server_log, host.cleaner_log], now=str(NOW_MS), kafka_version="3.7.0",
        broker_user=pwd.getpwuid(os.getuid()).pw_name, **kw,
    )  # fmt: skip
    opts.workers = workers
    rows: list[dict[str, Any]] = []
    progress: list[tuple[str, int, int]] = []
    report = run_audit(
        opts,
        progress=lambda d, i, n: progress.append((d, i, n)),
        on_partition=lambda pf: rows.append(partition_row(pf)),
    )
    return json.dumps(report, sort_keys=True), rows, progress


@pytest.mark.parametrize(
    ("failures", "kw"),
    [
        (Failures(), {"broker_state": "stopped"}),
        (Failures.all(), {"broker_state": "stopped"}),
        (Failures.all(), {"broker_state": "stopped", "deep": True}),
        (Failures.all(), {"broker_state": "running"}),
    ],
    ids=["healthy", "every-failure", "every-failure-deep", "running"],
)
def test_workers_give_the_one_process_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failures: Failures, kw: dict[str, Any]
) -> None:
    host = simulate_host(str(tmp_path / "host"), HostSpec(now_ms=NOW_MS, failures=failures))
    monkeypatch.setattr(pool, "CHUNK", 2)  # many small chunks, handed out to the workers in turn
    started: list[pool.Pool | None] = []
    start = pool.start
    monkeypatch.setattr(pool, "start", lambda *a: started.append(start(*a)) or started[-1])
    one = _audit(host, 1, **kw)
    assert started == [None]
    for workers in (2, 3):
        assert _audit(host, workers, **kw) == one
        assert isinstance(started[-1], pool.Pool) and not started[-1].broken  # the workers did the gathering
    assert one[1] and len(one[1]) == len(one[2])  # every partition streamed, and counted in the progress


def test_without_fork_the_audit_runs_in_one_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    host = simulate_host(str(tmp_path / "host"), HostSpec(now_ms=NOW_MS, failures=Failures.all()))
    one = _audit(host, 1, broker_state="stopped")
    import multiprocessing

    def no_fork(method: str | None = None) -> Any:
        raise ValueError(f"cannot find context for {method!r}")

    monkeypatch.setattr(multiprocessing, "get_context", no_fork)
    assert pool.start(collect.gather(audit_options(log_dir=host.log_dirs, now=str(NOW_MS))), 2) is None
    assert _audit(host, 2, broker_state="stopped") == one


def test_a_worker_that_dies_leaves_its_partitions_to_the_parent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    host = simulate_host(str(tmp_path / "host"), HostSpec(now_ms=NOW_MS, failures=Failures.all()))
    one = _audit(host, 1, broker_state="stopped")
    parent = os.getpid()
    gather = collect.gather_partition
    seen: list[int] = []

    def dying(h: Any, ldf: Any, path: str, name: Any) -> Any:
        seen.append(1)
        if os.getpid() != parent and len(seen) == 3:
            os._exit(1)  # a worker killed mid-chunk (out of memory, kill -9)
        return gather(h, ldf, path, name)

    monkeypatch.setattr(collect, "gather_partition", dying)
    monkeypatch.setattr(pool, "CHUNK", 2)
    started: list[pool.Pool | None] = []
    start = pool.start
    monkeypatch.setattr(pool, "start", lambda *a: started.append(start(*a)) or started[-1])
    assert _audit(host, 2, broker_state="stopped") == one
    assert isinstance(started[0], pool.Pool) and started[0].broken and not started[0].procs


def test_facts_a_worker_cannot_send_are_gathered_by_the_parent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    host = simulate_host(str(tmp_path / "host"), HostSpec(now_ms=NOW_MS, failures=Failures.all()))
    one = _audit(host, 1, broker_state="stopped")
    parent = os.getpid()
    pack = pool._pack

    def unpicklable(pf: Any) -> dict[str, Any]:
        state = pack(pf)
        if os.getpid() != parent and pf.part.partition == 0:
            state["oops"] = lambda: None  # pickle refuses a lambda: the whole chunk cannot be sent
        return state

    monkeypatch.setattr(pool, "_pack", unpicklable)
    monkeypatch.setattr(pool, "CHUNK", 2)
    assert _audit(host, 2, broker_state="stopped") == one


def test_a_chunk_is_unpickled_with_the_collector_off_and_it_is_left_as_it_was() -> None:
    import gc
    from multiprocessing import Pipe

    _SEEN.clear()
    r, w = Pipe(duplex=False)
    try:
        assert gc.isenabled()
        w.send([_Probe(), 1])
        assert pool._recv(r)[1] == 1 and _SEEN == [False] and gc.isenabled()
        gc.disable()  # a caller that turned it off keeps it off
        w.send([_Probe()])
        pool._recv(r)
        assert _SEEN == [False, False] and not gc.isenabled()
        gc.enable()
        w.close()
        with pytest.raises(EOFError):  # the worker went away: the collector is back on all the same
            pool._recv(r)
        assert gc.isenabled()
    finally:
        gc.enable()
        r.close()


_SEEN: list[bool] = []  # whether the cyclic collector was on each time a _Probe was unpickled


def _probe_seen() -> None:
    import gc

    _SEEN.append(gc.isenabled())


class _Probe:
    def __reduce__(self) -> tuple[Any, tuple[()]]:
        return _probe_seen, ()
