"""One characterisation run: restore a saved broker, plant faults, start it, watch, stop it, observe.

A :class:`Trial` is split in :meth:`~Trial.launch` (restore, plant, snapshot, start) and :meth:`~Trial.finish`
(wait until the retention check has run, ask the broker, read every acknowledged record back, stop, snapshot,
diff) so that :func:`run_trials` can start several brokers and sit out LogManager's 30-second first retention
check (fixed up to 3.8) once for all of them.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kafka import TopicPartition
from kafka.errors import KafkaTimeoutError

from kafka_lab.broker import LabBroker, LabError, StartOutcome
from kafka_lab.faults import Fault
from kafka_lab.fidelity import DEFAULT_TOLERANCE_S, compare, predict
from kafka_lab.observe import Observation, Snapshot, broker_view, next_start, snapshot
from kafka_lab.produce import Acked, await_topics, lost, read_back
from kafka_lab.rehearsal import Rehearsed, compare_rehearsal, rehearse_trial

Plant = Callable[[LabBroker], list[Fault]]


def predict_start(
    broker: LabBroker, topic_configs: Mapping[str, Mapping[str, object]] | None = None
) -> dict[str, Any]:
    """``kafka-ops audit``'s report for the broker's stopped files, with its server.properties and version, and
    the topics' overrides (written as a ``--topic-configs`` file, as an operator exports them)."""
    return predict(
        broker.log_dirs, broker.server_properties, broker.version, broker.user,
        horizon_ms=int((broker.initial_task_delay_s + 60) * 1000), topic_configs=topic_configs_file(broker, topic_configs),
    )  # fmt: skip


def topic_configs_file(
    broker: LabBroker, topic_configs: Mapping[str, Mapping[str, object]] | None
) -> Path | None:
    """The topics' overrides as a ``--topic-configs`` file (None: none given)."""
    path = None
    if topic_configs:
        path = broker.workdir / "topic-configs.json"
        path.write_text(json.dumps({t: {k: str(v) for k, v in c.items()} for t, c in topic_configs.items()}))
    return path


# two checks at log.retention.check.interval.ms=1000, then the 1 s delete delay, with room for a loaded 2-core
# machine (4 s let a first check that came late go unobserved: seed003_retention's size deletion, twice in CI)
RETENTION_MARGIN_S = 10.0
# How much longer to wait for a deletion the plan puts before now but the broker has not made yet: a broker on a
# loaded machine can run its first retention check later than the margin (seen: seed003_retention, three CI runs).
# A deletion the broker never makes still fails the comparison, LATE_DELETION_S later.
LATE_DELETION_S = 60.0


@dataclass
class TrialResult:
    name: str
    version: str
    start: StartOutcome
    observation: Observation
    faults: list[Fault]
    view: dict[str, Any] | None  # the running broker's log dirs and offsets (None if it did not start)
    lost: dict[str, list[int]] | None  # acknowledged offsets no longer readable, per "topic-partition"
    unreadable: list[str] = field(default_factory=list)  # partitions in a dir the broker reports offline
    read_errors: dict[str, str] = field(default_factory=dict)  # partitions whose read failed (CRC, storage)
    seconds: float = 0.0
    log: str = ""  # the broker log of this start
    broker_exit: int | None = None  # the broker's own exit (None: it ran until we stopped it)
    # the model's prediction for the planted files (the audit's next_start, made before the start), the
    # differences between it and what the broker did (kafka_lab.fidelity.compare), and when the watch ended
    predicted: dict[str, Any] | None = None
    predicted_findings: list[tuple[str, str]] = field(default_factory=list)  # (check, severity) of that audit
    differences: list[str] = field(default_factory=list)
    observed_until_ms: int | None = None
    findings: list[dict[str, Any]] = field(default_factory=list)  # that audit's findings, whole
    # log dir -> whether it holds .kafka_cleanshutdown once the start ended (after the broker exited, or after
    # the lab stopped it): what a failed start leaves for the next one (broker.failed_start)
    markers_after: dict[str, bool] = field(default_factory=dict)
    # the product's rehearsal of this start on the same files, before it (None: not rehearsed in this run), and
    # where it and the real start disagree (kafka_lab.rehearsal.compare_rehearsal)
    rehearsal: Rehearsed | None = None
    rehearsal_differences: list[str] = field(default_factory=list)

    @property
    def next_start(self) -> dict[str, Any]:
        return self.observation.next_start


class Trial:
    """Restore ``saved``, run ``plant`` on the stopped copy, start it (``properties`` added), observe."""

    def __init__(
        self,
        name: str,
        saved: Path,
        plant: Plant,
        *,
        acked: Acked | None = None,
        properties: Mapping[str, object] | None = None,
        wait_retention: bool = False,
        keep: bool = False,
        topic_configs: Mapping[str, Mapping[str, object]] | None = None,
        rehearse: bool = False,
        start_timeout: float = 120.0,
    ) -> None:
        self.name, self.saved, self.plant, self.acked = name, saved, plant, acked
        # a start neither ready nor exited by then is "hung" (killed; the observation says so): a FIFO in a file's
        # place can block the broker's reader forever
        self.start_timeout = start_timeout
        self.hung = False
        self.topic_configs = topic_configs  # the overrides the audit is told (plant may create the topics)
        self.properties = dict(properties or {})
        self.wait_retention = wait_retention
        self.keep = keep
        self.rehearse = rehearse  # run the product's rehearsal on the planted files before the real start
        self.rehearsal: Rehearsed | None = None
        self.broker: LabBroker | None = None
        self.predicted: dict[str, Any] | None = None
        self.predicted_findings: list[tuple[str, str]] = []
        self.findings: list[dict[str, Any]] = []
        self.faults: list[Fault] = []
        self.before: Snapshot | None = None
        self.outcome: StartOutcome | None = None
        self._began = 0.0
        self._started_at = (
            0.0  # monotonic time of the start under test (a plant may start and stop the broker)
        )

    def launch(self) -> None:
        self._began = time.monotonic()
        self.broker = LabBroker.restore(self.saved, properties=self.properties, keep=self.keep)
        try:
            self.faults = self.plant(self.broker)
            self.before = snapshot(self.broker.log_dirs)
            if self.rehearse:
                # before the model's plan, not between it and the start: the plan's "now" is the start's (its
                # deletion times are compared within seconds), and a rehearsal takes 10-60 s
                self.rehearsal = rehearse_trial(
                    self.broker, self.before, wait_retention=self.wait_retention,
                    topic_configs=topic_configs_file(self.broker, self.topic_configs),
                    start_timeout=self.start_timeout,
                )  # fmt: skip
            report = predict_start(self.broker, self.topic_configs)  # the model, on the stopped files
            self.predicted = report["next_start"]
            self.predicted_findings = [(f["check"], f["severity"]) for f in report["findings"]]
            self.findings = report["findings"]
            self._started_at = time.monotonic()
            try:
                self.outcome = self.broker.start(self.start_timeout, check=False)
            except LabError as e:  # await_ready killed it: neither ready nor exited
                if "not ready within" not in str(e):
                    raise
                self.hung = True
                self.outcome = StartOutcome(False, time.monotonic() - self._started_at, None, [str(e)])
        except BaseException:
            self.broker.close()
            raise

    @property
    def ready_at(self) -> float:
        """Monotonic time after which the first retention check has run (and deleted files are gone)."""
        assert self.broker is not None
        if not self.wait_retention or self.outcome is None or not self.outcome.started:
            return 0.0
        return self._started_at + self.outcome.seconds + self.broker.initial_task_delay_s + RETENTION_MARGIN_S

    def _await_due_deletions(self) -> None:
        """Wait (at most LATE_DELETION_S) until every deletion the plan puts within that time has happened (its
        segment file renamed .deleted by the broker), then the broker's file.delete.delay.ms (1 s) with room."""
        if not self.wait_retention or self.predicted is None:
            return
        deadline = time.monotonic() + LATE_DELETION_S
        until = dt.datetime.now(dt.UTC) + dt.timedelta(seconds=LATE_DELETION_S)
        # every deletion the plan puts within the wait: its time passed and its file gone
        planned = [
            (dt.datetime.fromisoformat(s["deleted_at"].replace("Z", "+00:00")), s["log"])
            for s in self.predicted.get("segments", [])
            if s.get("deleted_at")
        ]
        planned = [(at, log) for at, log in planned if at <= until]
        waited = False
        while time.monotonic() < deadline:
            now = dt.datetime.now(dt.UTC)
            if all(at <= now and not os.path.exists(log) for at, log in planned):
                break
            waited = True
            time.sleep(0.5)
        if waited:
            time.sleep(2.0)

    def finish(self) -> TrialResult:
        assert self.broker is not None and self.before is not None and self.outcome is not None
        broker = self.broker
        try:
            view = None
            lost_now: dict[str, list[int]] | None = None
            unreadable: list[str] = []
            read_errors: dict[str, str] = {}
            if self.outcome.started:
                time.sleep(max(0.0, self.ready_at - time.monotonic()))
                self._await_due_deletions()
                if broker.running:
                    view, lost_now, unreadable, read_errors = self._ask(broker)
            watched_until = int(time.time() * 1000)
            log_before_stop = broker.run_log()
            exit_code = broker.exit_code
            stop_hung = False
            if exit_code is None:
                try:
                    broker.stop()
                except (
                    LabError
                ) as e:  # killed: a thread blocked on a FIFO holds the stop (the start was seen)
                    if "did not stop within" not in str(e):
                        raise
                    stop_hung = True
            after = snapshot(broker.log_dirs)
            obs = next_start(self.before, after, log_before_stop, exit_code=exit_code)
            if stop_hung:  # not compared: what the stop does is not the plan's
                obs.next_start["stop"] = "hangs"
            if self.hung:
                obs.next_start["broker"] = "hangs"
                obs.next_start["reason"] = (
                    f"neither ready nor exited within {self.start_timeout:.0f} s (killed): "
                    + " ".join(self.outcome.fatal)
                )
            return TrialResult(
                self.name,
                broker.version,
                self.outcome,
                obs,
                self.faults,
                view,
                lost_now,
                unreadable,
                read_errors,
                time.monotonic() - self._began,
                log_before_stop,
                exit_code,
                self.predicted,
                self.predicted_findings,
                compare(
                    self.predicted, obs.next_start, observed_until_ms=watched_until,
                    tolerance_s=self.outcome.seconds + DEFAULT_TOLERANCE_S,
                ),
                watched_until,
                self.findings,
                {d: os.path.join(d, ".kafka_cleanshutdown") in after.files for d in after.log_dirs},
                self.rehearsal,
                compare_rehearsal(self.rehearsal, obs.next_start) if self.rehearsal is not None else [],
            )  # fmt: skip
        finally:
            broker.close()

    def _ask(
        self, broker: LabBroker
    ) -> tuple[dict[str, Any], dict[str, list[int]] | None, list[str], dict[str, str]]:
        if self.acked is not None:
            await_topics(broker.bootstrap, {tp.topic for tp in self.acked.offsets})
        for attempt in range(3):
            view = broker_view(broker.bootstrap)
            offline = {d["path"] for d in view["log_dirs"] if d["error"]}
            served = {tp for tp, where in view["partitions"].items() if where.get("dir") not in offline}
            if self.acked is None:
                return view, None, [], {}
            parts = [
                tp
                for tp in self.acked.offsets
                if view.get("served_all") or f"{tp.topic}-{tp.partition}" in served
            ]
            skipped = sorted(f"{tp.topic}-{tp.partition}" for tp in self.acked.offsets if tp not in parts)
            if view.get("served_all"):
                break
            try:
                view = broker_view(broker.bootstrap, parts)
                break
            except (KafkaTimeoutError, KeyError):
                # a dir can go offline between the two questions (the replication checkpoint is read when the
                # first replica is created after the start; seen on 2.0.1): its partitions stop answering, or
                # (1.1.1, 2.0.1) kafka-python drops them from the ListOffsets answer (KeyError)
                if attempt == 2:
                    raise
        read = read_back(broker.bootstrap, parts, timeout=30)
        gone = lost(_only(self.acked, parts), read)
        errors = {f"{tp.topic}-{tp.partition}": e for tp, e in read.errors.items()}
        return view, {f"{tp.topic}-{tp.partition}": offs for tp, offs in gone.items()}, skipped, errors


def _only(acked: Acked, parts: Sequence[TopicPartition]) -> Acked:
    out = Acked()
    for tp in parts:
        out.offsets[tp] = list(acked.offsets[tp])
        for o in out.offsets[tp]:
            out.digests[(tp, o)] = acked.digests[(tp, o)]
    return out


def run_trials(trials: Sequence[Trial]) -> list[TrialResult]:
    """Launch every trial, then finish them in turn: the retention wait overlaps instead of adding up."""
    launched: list[Trial] = []
    try:
        for t in trials:
            t.launch()
            launched.append(t)
        return [t.finish() for t in launched]
    finally:
        for t in launched:
            if t.broker is not None:
                t.broker.close()
