"""When LogManager's scheduled tasks (the retention check ``kafka-log-retention``, ``kafka-delete-logs``) first run
after the broker starts: ``InitialTaskDelayMs`` (30 s, LogManager.scala), configurable as
``log.initial.task.delay.ms`` from 3.9 (engine.versions ``initial_task_delay_config``)."""

from __future__ import annotations

from kafka_ops.engine import versions
from kafka_ops.facts.model import HostFacts

INITIAL_TASK_DELAY_MS = 30_000  # LogManager.InitialTaskDelayMs; log.initial.task.delay.ms's default from 3.9


def initial_task_delay(h: HostFacts) -> int:
    """How long after start-up LogManager's tasks first run, on this broker's version and config."""
    if versions.since("initial_task_delay_config", h.kafka_version) is not False:
        return max(0, h.configs.server_int("log.initial.task.delay.ms", INITIAL_TASK_DELAY_MS))
    return INITIAL_TASK_DELAY_MS
