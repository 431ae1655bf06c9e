"""The fleet audit as a PySpark job (driver side): group hosts into tasks, collect once, build the view here.

A run is one Spark job when nothing is written (the audit, whose records are collected: findings, reports, host
rows and per-host tallies, kilobytes per host) and four with ``--results`` (the audit, then one write per table,
the partition rows read from the audit's cached output). The fleet view is computed on the driver from the
collected records (``kafka_ops.fleet.view``).

Spark costs about 50 ms per Python task, so work is grouped: one task per host (a host's log dirs are audited
together, as cross-dir checks need) up to ``4 x defaultParallelism`` tasks (or ``tasks``), then several hosts per
task, audited ``ssh_threads`` at a time when remote. A progress bar on stderr follows the job's tasks.

For a master that is not local, the job ships kafka-ops itself and the SSH credentials with it
(``kafka_ops.fleet.shipping``).
"""

from __future__ import annotations

import datetime as dt
import json
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field
from typing import Any

from kafka_ops.checks.base import DEFAULT_FAIL_ON
from kafka_ops.fleet.inventory import Target
from kafka_ops.fleet.shipping import EXECUTOR_ERROR, HOW_TO_SHIP
from kafka_ops.spark.session import spark_session  # noqa: F401  (the one builder: the fleet CLI gets it here)

FACT_SCHEMA_DDL = (
    "host STRING, log_dir STRING, topic STRING, partition INT, segments INT, size_bytes BIGINT, "
    "base_offset_first BIGINT, base_offset_last BIGINT, log_start_offset BIGINT, log_end_offset BIGINT, "
    "recovery_point BIGINT, cleaner_offset BIGINT, recover_segments INT, cleanup_policy STRING, topic_id STRING, "
    "leader_epoch INT"
)
FINDING_SCHEMA_DDL = (
    "check STRING, severity STRING, host STRING, log_dir STRING, path STRING, topic STRING, partition INT, "
    "segment BIGINT, message STRING, remediation STRING, details STRING"
)
TASKS_PER_SLOT = 4


@dataclass
class FleetRun:
    report: dict[str, Any]
    run_id: str
    tasks: int
    results: str | None
    timings: dict[str, float] = field(default_factory=dict)
    jobs: int = 0  # Spark jobs the run started (its job group's)


def group_targets(targets: list[Target], slots: int, tasks: int | None = None) -> list[list[dict[str, Any]]]:
    """Round-robin hosts (largest first, by log dirs) into ``tasks`` tasks (default: at most TASKS_PER_SLOT x
    slots), never more tasks than hosts."""
    n = max(1, min(len(targets), tasks or TASKS_PER_SLOT * max(1, slots)))
    groups: list[list[dict[str, Any]]] = [[] for _ in range(n)]
    for i, t in enumerate(sorted(targets, key=lambda t: -len(t.log_dirs))):
        groups[i % n].append(asdict(t))
    return groups


def executor_task(s: dict[str, Any]) -> Callable[[Iterable[list[dict[str, Any]]]], Iterator[Any]]:
    """The ``mapPartitions`` body. A closure, so cloudpickle sends it by value: unpickling it on an executor
    imports nothing, and an executor without kafka-ops gets an error that says how to ship it instead of
    ``ModuleNotFoundError`` raised inside Spark's worker."""
    hint = HOW_TO_SHIP
    prefix = EXECUTOR_ERROR

    def run(groups: Iterable[list[dict[str, Any]]]) -> Iterator[Any]:
        try:
            from kafka_ops.fleet.task import run_partition
        except ImportError as exc:
            raise RuntimeError(
                f"{prefix}{sys.executable} (Python {sys.version.split()[0]}) cannot import kafka_ops ({exc}); the "
                f"job adds it with SparkContext.addPyFile for a cluster master, or {hint}"
            ) from exc
        return run_partition(groups, s)

    return run


class _Progress:
    """Polls Spark's status tracker from a driver thread and shows the job's tasks done on stderr."""

    def __init__(self, sc: Any, group: str, hosts: int, tasks: int, show: bool) -> None:
        self.sc, self.group, self.hosts, self.tasks, self.show = sc, group, hosts, tasks, show
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> _Progress:
        if self.show:
            self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        if self.show:
            self.thread.join()

    def _done(self) -> int:
        st = self.sc.statusTracker()
        done = 0
        for jid in st.getJobIdsForGroup(self.group):
            job = st.getJobInfo(jid)
            for sid in job.stageIds if job else []:
                info = st.getStageInfo(sid)
                if info is not None:
                    done += info.numCompletedTasks
        return done

    def _run(self) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        with Progress(
            TextColumn(f"[bold]auditing[/] {self.hosts} host(s) in"), BarColumn(), MofNCompleteColumn(),
            TextColumn("tasks"), TimeElapsedColumn(), console=Console(stderr=True), transient=True,
        ) as bar:  # fmt: skip
            task = bar.add_task("fleet", total=self.tasks)
            while not self.stop.wait(0.2):
                bar.update(task, completed=min(self.tasks, self._done()))


def run_fleet(
    spark: Any,
    targets: list[Target],
    settings: dict[str, Any],
    name: str = "fleet",
    results: str | None = None,
    leaders_file: str | None = None,
    progress: bool = False,
    tasks: int | None = None,
    ship: bool | None = None,
) -> FleetRun:
    """Audit ``targets``; ``settings`` are the audit options' values (``now_ms`` set by the caller;
    ``ssh_threads``, ``known_hosts``). ``results``: a path or any URI Spark writes (``file://``, ``s3a://``...).
    ``ship``: send kafka-ops with the job (default: when the master is not local)."""
    from kafka_ops.fleet.shipping import run_files

    with run_files():  # the copies of the SSH credentials it ships are removed when the run ends, however
        return _run_fleet(spark, targets, settings, name, results, leaders_file, progress, tasks, ship)


def _run_fleet(
    spark: Any, targets: list[Target], settings: dict[str, Any], name: str, results: str | None,
    leaders_file: str | None, progress: bool, tasks: int | None, ship: bool | None,
) -> FleetRun:  # fmt: skip
    from pyspark import StorageLevel

    from kafka_ops.checks import load_all
    from kafka_ops.fleet import report as fleet_report
    from kafka_ops.fleet.shipping import resolve_credentials, ship_credentials, ship_package
    from kafka_ops.fleet.view import fleet_view

    t0 = time.monotonic()
    sc = spark.sparkContext
    s = dict(settings)
    targets, s["known_hosts"] = resolve_credentials(targets, s.get("known_hosts"))
    shipped = False
    if ship if ship is not None else not sc.master.startswith("local"):
        ship_package(sc)
        shipped = True
    if s["known_hosts"] is not None:
        s["spark_files"] = ship_credentials(sc, targets, s["known_hosts"])
        shipped = True
    if shipped and sc.master.startswith("local"):
        # the run's copies are removed when it ends (shipping.run_files), but Spark keeps every added file for the
        # context's life and an executor fetches the ones it has not seen before its next task: the local
        # executor takes its copies now, so that a later job of a context that lives on (a notebook, a test
        # session) does not fail on a file that is gone ("exists and does not match contents"), even after a
        # run that ended before its first task
        sc.parallelize([0], 1).count()
    s["keep_partitions"] = bool(results)
    if results:
        from kafka_ops.fleet.results import check_file_system

        check_file_system(spark, results)  # s3a:// without hadoop-aws: said now, not after the audit
    groups = group_targets(targets, sc.defaultParallelism, tasks)
    group = f"kafka-ops-fleet-{uuid.uuid4().hex[:8]}"
    sc.setJobGroup(group, f"kafka-ops fleet audit of {len(targets)} host(s)")
    records = sc.parallelize(groups, len(groups)).mapPartitions(executor_task(s))
    if results:  # the partition rows are written after the collect: kept, not audited again
        records = records.persist(StorageLevel.MEMORY_AND_DISK)
    t_ready = time.monotonic()
    with _Progress(sc, group, len(targets), len(groups), progress):
        small = records.filter(lambda r: r[0] != "partition").collect()  # the audit: every host, once
    t_audit = time.monotonic()

    reports = {h: json.loads(p) for k, h, p in small if k == "report"}
    host_rows = sorted((json.loads(p) for k, _h, p in small if k == "host"), key=lambda h: h["host"])
    flat = [json.loads(p) for k, _h, p in small if k == "finding"]
    all_findings = [_unflat(dict(f)) for f in flat]
    tallies = [json.loads(p) for k, _h, p in small if k == "tally"]
    leaders, source = _leaders(small, leaders_file, s.get("cluster"))
    view = fleet_view(tallies, all_findings, host_rows, leaders)
    run_id = s.get("run_id") or f"{dt.datetime.now(dt.UTC):%Y%m%dT%H%M%SZ}-{uuid.uuid4().hex[:6]}"
    units = sum(len(t.units()) for t in targets)
    fleet = {
        "run_id": run_id,
        "results": results,
        "hosts_total": len(targets),
        "hosts_audited": sum(1 for h in host_rows if h["status"] == "ok"),
        "units": units,
        "tasks": len(groups),
        "spark_jobs": 0,  # set below, once the results are written: the run's job group's jobs
        "spark_master": sc.master,
        "leaders_source": source,
        **view,
    }
    inputs = {
        "now_ms": {"value": s["now_ms"], "source": "--now" if s.get("now_given") else "clock (driver)"},
        "hosts": {"value": [t.name for t in targets], "source": s.get("targets_source") or "--log-dir"},
    }
    rep = fleet_report.merge(
        name, s["now_ms"], reports, all_findings, inputs, fleet, s.get("fail_on") or DEFAULT_FAIL_ON
    )
    rep["checks_run"] = sorted(set(rep["checks_run"]) | {c for c in load_all() if c.startswith("FLEET")})
    t_view = time.monotonic()
    try:
        if results:
            from pyspark.sql import functions as F

            from kafka_ops.fleet.results import write_run

            facts = spark.createDataFrame(
                records.filter(lambda r: r[0] == "partition").map(lambda r: (r[2],)), "payload STRING"
            ).select(F.from_json("payload", FACT_SCHEMA_DDL).alias("r")).select("r.*")  # fmt: skip
            cols = [c.split()[0] for c in FINDING_SCHEMA_DDL.split(", ")]
            findings = spark.createDataFrame(
                [tuple(f.get(c) for c in cols) for f in flat], FINDING_SCHEMA_DDL
            )
            write_run(spark, results, run_id, s["now_ms"], facts, findings, host_rows)
        jobs = len(sc.statusTracker().getJobIdsForGroup(group))
        rep["fleet"]["spark_jobs"] = jobs
    finally:
        if results:
            records.unpersist()
        sc.setLocalProperty("spark.jobGroup.id", None)  # type: ignore[arg-type]  # later jobs are not the run's
    timings = {
        "setup_s": t_ready - t0, "audit_s": t_audit - t_ready, "view_s": t_view - t_audit,
        "write_s": time.monotonic() - t_view,
    }  # fmt: skip
    return FleetRun(rep, run_id, len(groups), results, timings, jobs)


def _unflat(f: dict[str, Any]) -> dict[str, Any]:
    f["details"] = json.loads(f["details"]) if f.get("details") else {}
    return f


def _leaders(
    small: list[tuple[str, str, str]], leaders_file: str | None, cluster: dict[str, Any] | None = None
) -> tuple[dict[tuple[str, int], int], str]:
    """The running cluster's answer (--bootstrap-server: leaders as they are now), else the KRaft metadata log
    with the most records applied, else --leaders, else unknown."""
    if cluster is not None:
        lead = {(p["topic"], int(p["partition"])): int(p["leader"]) for p in cluster.get("partitions") or []}
        return lead, f"the cluster at {cluster.get('bootstrap')} (Metadata, asked once by the driver)"
    best: dict[str, dict[tuple[str, int], int]] = {}
    last: dict[str, int] = {}
    for kind, _host, payload in small:
        if kind == "leader":
            row = json.loads(payload)
            best.setdefault(row["source"], {})[(row["topic"], row["partition"])] = row["leader"]
            last[row["source"]] = row["last_offset"]
    if best:
        src = max(last, key=lambda k: last[k])
        return best[src], f"{src} (on host {next(h for k, h, p in small if k == 'leader' and src in p)})"
    if leaders_file:
        from kafka_ops.fleet.leaders import read_describe

        lead = read_describe(leaders_file)
        return lead.leaders, lead.source
    return (
        {},
        "unknown: no KRaft metadata log among the local log dirs and no --leaders; every replica at risk is treated as possibly the leader",
    )
