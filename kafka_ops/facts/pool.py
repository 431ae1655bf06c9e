"""Gather partition facts in worker processes, handed back in order (the audit's second core, and more).

The fact gathering (a stat per file, index tails, the ends of the active and oldest ``.log``) is most of an
audit's work and independent from one partition to the next, while what consumes the facts (the checks, the
next-start plan, the forecast) keeps state across partitions and must see them in order. So workers gather
chunks of consecutive partitions and the parent takes the chunks back in partition order: the audit does the
same work in the same order as with one process, and its report is identical.

Standard library only (shipped to broker hosts). Workers are forked (``multiprocessing``'s ``fork`` context: the
collector's modules are imported from memory, which a spawned interpreter could not do), so they start with the
parent's host facts and need nothing sent but chunk bounds. Where fork or pipes are unavailable (no ``fork``
start method, a sandbox without ``fork``, a daemonic process), :func:`start` returns None and the audit runs in
one process; a worker that dies leaves the rest to the parent. The parent counts as one of the processes that
gather (:func:`start` forks one worker fewer than :func:`worker_count`): it gathers the chunks no worker holds
when it needs them, so two CPUs are kept busy by the parent and one worker. Memory stays flat: each worker works at most
``AHEAD`` chunks ahead of the parent. A ``prepare`` callable does more pure per-partition work in the workers
(the audit's: each partition's forecast), whose results travel back with the facts.
"""

from __future__ import annotations

import os
import signal
import time
from collections import deque
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from multiprocessing.connection import Connection

    from kafka_ops.facts.model import HostFacts, LogDirFacts, PartitionFacts

Prepare = Callable[["PartitionFacts"], None]
CHUNK = 32  # partitions per message: big enough to amortise a message, small enough to keep workers busy
AHEAD = 2  # chunks a worker may hold beyond the one the parent reads: flat memory, no idle worker
STEAL = 2  # chunks the parent may gather itself ahead of the one it needs, while it waits for a worker
PARENT = -1  # the owner of a chunk the parent gathered
MIN_PARTITIONS = 256  # fewer partitions than this (with the worker count left to the audit): one process
MAX_WORKERS = 8
PIPE_BYTES = 1 << 20  # a larger pipe lets a worker hand over a chunk without waiting for the parent to read
IDLE_SAMPLE_S = 0.05  # how long the audit looks at the CPUs' idle time before choosing its worker count


def cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))  # the CPUs this process may run on (taskset, cgroup cpusets)
    except (AttributeError, OSError):
        return os.cpu_count() or 1


ENV = "KAFKA_OPS_WORKERS"  # the worker count when the caller leaves it to the audit (1: one process)


def idle_cpus(cpus: int, seconds: float = IDLE_SAMPLE_S) -> float:
    """How many of the machine's CPUs were idle over the last ``seconds`` (/proc/stat); ``cpus`` when unknown."""

    def sample() -> tuple[int, int]:
        with open("/proc/stat", "rb") as f:
            ticks = [int(x) for x in f.readline().split()[1:]]
        return ticks[3] + ticks[4], sum(ticks)  # idle + iowait, all

    try:
        idle0, all0 = sample()
        time.sleep(seconds)
        idle1, all1 = sample()
    except (OSError, ValueError, IndexError):
        return float(cpus)
    machine = os.cpu_count() or cpus
    return (idle1 - idle0) / max(1, all1 - all0) * machine


def worker_count(requested: int | None, partitions: int) -> int:
    """Processes to gather with: ``requested`` (1: the parent alone), else $KAFKA_OPS_WORKERS, else, on a host with
    enough partitions to repay starting them, one per idle CPU this process may use. Workers cost about a
    third more CPU than one process (the facts are pickled), so they only pay with two CPUs or more to spare:
    on a busy machine (another broker's load, other jobs) the audit stays in one process."""
    if requested is None and os.environ.get(ENV, "").strip().isdigit():
        requested = int(os.environ[ENV])
    if requested is not None:
        return max(1, requested)
    cpus = min(cpu_count(), MAX_WORKERS)
    if partitions < MIN_PARTITIONS or cpus < 2:
        return 1
    idle = int(min(float(cpus), idle_cpus(cpus)) + 0.3)
    return idle if idle >= 2 else 1


def _pack(pf: PartitionFacts) -> dict[str, Any]:
    """What a worker sends: the facts without the log dir and topic config, which the parent has already."""
    state = pf.__dict__.copy()
    del state["log_dir"], state["config"]
    if pf.forecast is not None:
        pf.forecast.config = None  # the parent's own (the worker's pf is dropped once sent)
    return state


def _unpack(h: HostFacts, ldf: LogDirFacts, state: dict[str, Any]) -> PartitionFacts:
    from kafka_ops.facts.collect import topic_config
    from kafka_ops.facts.model import PartitionFacts

    pf = PartitionFacts.__new__(PartitionFacts)
    state["log_dir"] = ldf
    state["config"] = cfg = topic_config(h, state["part"].name.topic)
    if state["forecast"] is not None:
        state["forecast"].config = cfg
    pf.__dict__.update(state)
    return pf


def _serve(h: HostFacts, tasks: Connection, results: Connection, prepare: Prepare | None) -> None:
    """A worker: for each (log dir index, start, stop) received, gather those partitions and send them back as
    (facts, exception or None); stop at None or when the parent goes away."""
    import gc
    import pickle

    from kafka_ops.facts.collect import gather_partition

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle: it stops the workers
    gc.freeze()  # the parent's objects: never scanned here (nor their pages copied by the collector)
    while True:
        try:
            task = tasks.recv()
        except (EOFError, OSError):
            return
        if task is None:
            return
        d, start, stop = task
        ldf = h.log_dirs[d]
        names = ldf.scan.partition_names
        out: list[dict[str, Any]] = []
        err: BaseException | None = None
        try:
            for path, name in names[start:stop]:
                pf = gather_partition(h, ldf, path, name)
                if prepare is not None:
                    prepare(pf)
                out.append(_pack(pf))
        except Exception as exc:  # raised in the parent when it reaches this partition, as one process would
            err = exc
            try:  # one that does not pickle back (a custom __init__) goes as its text, at the same place
                pickle.loads(pickle.dumps(exc))
            except Exception:
                err = RuntimeError(f"{type(exc).__name__}: {exc}")
        try:
            results.send((out, err))
        except (OSError, ValueError):
            return  # the parent went away
        except Exception:  # facts that do not pickle: the parent gathers this chunk itself
            results.send((None, None))


class Pool:
    """Forked workers, each with its own task and result pipe."""

    def __init__(self, h: HostFacts, workers: int, prepare: Prepare | None = None) -> None:
        import multiprocessing

        ctx = multiprocessing.get_context("fork")  # ValueError where fork does not exist
        self.h = h
        self.broken = False  # a worker died: the rest of the audit runs in the parent
        self.tasks: list[Connection] = []
        self.results: list[Connection] = []
        self.procs: list[Any] = []
        ends: list[tuple[Connection, Connection]] = []  # (task read, result write): the workers' ends
        try:
            for _ in range(workers):
                task_r, task_w = ctx.Pipe(duplex=False)
                result_r, result_w = ctx.Pipe(duplex=False)
                _grow_pipe(result_w)
                self.tasks.append(task_w)
                self.results.append(result_r)
                ends.append((task_r, result_w))
            for i, (task_r, result_w) in enumerate(ends):
                # every other pipe end is closed in the child: when the parent dies, the worker sees EOF
                others = (
                    [c for j, pair in enumerate(ends) if j != i for c in pair] + self.tasks + self.results
                )
                p = ctx.Process(target=_child, args=(h, task_r, result_w, others, prepare), daemon=True)
                p.start()
                self.procs.append(p)
        except BaseException:
            self.close()
            raise
        finally:
            for task_r, result_w in ends:
                task_r.close()
                result_w.close()

    def partitions(self, d: int) -> Iterator[PartitionFacts]:
        """The facts of every partition of log dir ``d``, in order.

        Each worker holds up to ``AHEAD + 1`` chunks, sent in order. While the chunk the parent needs next is
        not back yet, the parent gathers the next chunk nobody holds itself (at most ``STEAL`` of them ahead)
        rather than wait: when the workers get less CPU than expected (other load), the parent does more of
        the work, and a chunk it gathers costs no pickling."""
        from multiprocessing.connection import wait

        from kafka_ops.facts.collect import gather_partition

        h = self.h
        ldf = h.log_dirs[d]
        names = ldf.scan.partition_names
        chunks = [(s, min(s + CHUNK, len(names))) for s in range(0, len(names), CHUNK)]
        queues: list[deque[int]] = [deque() for _ in self.procs]  # chunks sent to each worker, in order
        owner: dict[int, int] = {}  # chunk -> worker (PARENT: gathered here)
        ready: dict[int, tuple[bool, list[Any], BaseException | None]] = {}  # chunk -> (from a worker, ...)
        nxt = 0  # the first chunk nobody holds
        done = 0  # partitions handed over: where the parent takes over if a worker dies
        by_conn = {id(r): w for w, r in enumerate(self.results)}

        def feed(w: int) -> None:
            nonlocal nxt
            while nxt < len(chunks) and len(queues[w]) <= AHEAD:
                self.tasks[w].send((d, *chunks[nxt]))
                queues[w].append(nxt)
                owner[nxt] = w
                nxt += 1

        def receive(conns: list[Any]) -> None:
            for conn in conns:
                w = by_conn[id(conn)]
                out, err = _recv(conn)
                c = queues[w].popleft()
                if out is None:  # the worker could not send this chunk's facts: gathered here instead
                    steal(c)
                else:
                    ready[c] = (True, out, err)
                feed(w)

        def steal(c: int) -> None:
            out: list[PartitionFacts] = []
            err: BaseException | None = None
            try:
                for path, name in names[chunks[c][0] : chunks[c][1]]:
                    out.append(gather_partition(h, ldf, path, name))
            except Exception as exc:  # raised when the parent reaches this partition, as one process would
                err = exc
            owner[c] = PARENT
            ready[c] = (False, out, err)

        try:
            try:
                for w in range(len(self.procs)):
                    feed(w)
                for c in range(len(chunks)):
                    while c not in ready:
                        if c not in owner:  # nobody holds it (no worker took it yet): gather it here
                            steal(c)
                            break
                        conns = wait(self.results, timeout=0)
                        if (
                            not conns
                            and nxt < len(chunks)
                            and sum(o == PARENT for o in owner.values()) < STEAL
                        ):
                            steal(nxt)
                            nxt += 1
                            continue
                        receive(conns or wait(self.results))
                    from_worker, out, err = ready.pop(c)
                    owner.pop(c, None)
                    for item in out:
                        yield _unpack(h, ldf, item) if from_worker else item
                        done += 1
                    if err is not None:
                        raise err
            except (EOFError, OSError):  # a worker died (killed, out of memory) or a pipe broke
                self._break()
                for path, name in names[done:]:  # the parent gathers the rest itself, in the same order
                    yield gather_partition(h, ldf, path, name)
        finally:
            if any(queues) and not self.broken:
                self._break()  # left early: results still in the pipes would answer the next dir's tasks

    def _break(self) -> None:
        self.broken = True
        self.close()

    def close(self) -> None:
        for t in self.tasks:
            try:
                t.send(None)
            except (OSError, ValueError):
                pass
            t.close()
        for r in self.results:
            r.close()  # a worker blocked on sending a result gets EPIPE and exits
        for p in self.procs:
            p.join(timeout=5)
            if p.is_alive():  # pragma: no cover - a worker stuck in I/O
                p.terminate()
                p.join(timeout=5)
        self.procs = []


def _recv(conn: Connection) -> Any:
    """``conn.recv()`` with the cyclic garbage collector off: unpickling a chunk makes a few thousand containers,
    and the young-generation collections they set off cost about twice the unpickling itself (measured: 2,000
    partitions' facts loaded in 0.14 s of CPU without it, 0.38-0.64 s with it). Nothing unpickled is garbage yet:
    every object is kept as part of the facts."""
    import gc

    if not gc.isenabled():
        return conn.recv()
    gc.disable()
    try:
        return conn.recv()
    finally:
        gc.enable()


def _child(
    h: HostFacts, tasks: Connection, results: Connection, others: list[Connection], prepare: Prepare | None
) -> None:
    for c in others:
        c.close()
    _serve(h, tasks, results, prepare)


def _grow_pipe(conn: Connection) -> None:
    try:
        import fcntl

        # F_SETPIPE_SZ is in fcntl from 3.10; Linux's value: F_LINUX_SPECIFIC_BASE (1024) + 7 (fcntl.h)
        fcntl.fcntl(conn.fileno(), getattr(fcntl, "F_SETPIPE_SZ", 1031), PIPE_BYTES)
    except (ImportError, AttributeError, OSError):
        pass  # the default pipe size: workers wait a little more for the parent


def start(h: HostFacts, requested: int | None, prepare: Prepare | None = None) -> Pool | None:
    """Workers for the host's partitions, or None for one process (small host, one CPU, no fork).
    ``prepare(pf)`` runs in the worker on each partition's facts before they are sent.

    ``worker_count`` processes gather in all, the parent being one of them: it gathers every chunk no worker
    holds when it needs it, without pickling. So n - 1 are forked: n forked workers and the parent would be
    one process more than the CPUs counted, all busy, and each chunk a worker gathers costs more CPU in all (it
    is pickled and unpickled) than one the parent gathers."""
    partitions = sum(len(d.scan.partition_names) for d in h.log_dirs)
    n = worker_count(requested, partitions)
    if n <= 1 or partitions == 0:
        return None
    try:
        return Pool(h, n - 1, prepare)
    except (ImportError, ValueError, OSError, AssertionError):
        # no multiprocessing or no fork here, or a daemonic process (AssertionError: it may not have children)
        return None


def iter_log_dirs(
    h: HostFacts, workers: int | None = None, prepare: Callable[[PartitionFacts], None] | None = None
) -> Iterator[tuple[LogDirFacts, Iterator[PartitionFacts]]]:
    """Each log dir with its partitions' facts, in order: gathered by worker processes (this module's) when the
    host is big enough and the platform can fork, else here. Each dir's partitions must be consumed before
    the next dir is asked for. ``prepare(pf)``: more work on each partition's facts that a worker does after
    gathering them (its results go back with the facts); without workers it is not called."""
    from kafka_ops.facts.collect import iter_partitions

    pool = start(h, h.options.workers if workers is None else workers, prepare)
    try:
        for d, ldf in enumerate(h.log_dirs):
            yield ldf, (pool.partitions(d) if pool is not None else iter_partitions(h, ldf))
    finally:
        if pool is not None:
            pool.close()
