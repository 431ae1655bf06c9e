"""CONF001: a server.properties value the broker refuses at start (or a --topic-configs override no broker holds).

What the broker does (apache/kafka 1eb7644): ``kafka.Kafka.main`` -> ``buildServer`` -> ``KafkaConfig.fromProps``
parses every defined key with ``ConfigDef.parseType`` and its validator (the rules are in
kafka_ops/facts/config.py, next to the table of keys kafka-ops checks). A ConfigException is caught by ``main``:
``fatal("Exiting Kafka due to fatal exception", e)`` then ``Exit.exit(1)``: no log dir is even opened, and with
systemd's Restart=on-failure the unit restarts into the same error until StartLimitBurst stops it.

``log.dirs`` is read at start by ``LogManager.createAndValidateLogDirs``: an entry that is not a readable
directory throws IOException("<dir> is not a readable log directory.") and goes offline (the broker halts when
none is left: "Shutdown broker because none of the specified log dirs from ... can be created or validated");
two entries with the same canonical path throw KafkaException("Duplicate log directory found: <all>"), which
is not an IOException: the broker does not start.

A topic override is validated when it is set (``AlterConfigs`` / ``kafka-configs --alter`` run
``LogConfig.validate``: InvalidConfigurationException), so a refused value in a --topic-configs file cannot be
what the cluster holds: the file is wrong, and the topic keeps the broker default. That is an error, not a start
failure.
"""

from __future__ import annotations

from collections.abc import Iterator

from kafka_ops.checks.base import Finding, check
from kafka_ops.engine.shell import q
from kafka_ops.facts.config import TOPIC_DEFAULTS, ConfigProblem
from kafka_ops.facts.context import Context
from kafka_ops.facts.model import HostFacts

_EXIT = (
    "at start KafkaConfig.fromProps refuses the file with ConfigException '{err}' and the broker exits before it "
    "opens a log dir ('Exiting Kafka due to fatal exception', exit code 1; systemd restarts it into the same error)"
)


def _where(p: ConfigProblem) -> str:
    line = f"line {p.line} of " if p.line else ""
    return f"{line}{p.source}" if p.source else "server.properties"


@check(
    "CONF001",
    severity="critical",
    scope="host",
    title="server.properties value the broker refuses at start (or a --topic-configs value no broker holds)",
    incident="a value written as operators think of it (log.retention.ms=7d, cleanup.policy=compcat, "
    "log.preallocate=yes) stops the broker at its next start: the rolling deploy stalls with the broker down",
)
def run(ctx: Context, h: HostFacts) -> Iterator[Finding]:
    for p in h.configs.problems():
        if p.kind == "server" and p.bad is not None:  # stops_the_start: the plan says the broker exits
            b = p.bad
            assumed = (
                f" Until it is fixed kafka-ops's other checks read {p.key} as unset (Kafka's default)."
                if p.key not in ("log.dirs", "log.dir")
                else ""
            )
            hint = f" {b.hint}" + ("" if b.hint.endswith("?") else ".") if b.hint else ""
            fix_value = (
                f"{p.key}={b.suggested}"
                if b.suggested
                else f"{p.key} to {b.accepts.split(' (')[0].split(':')[0]}"
            )
            yield run.finding(
                f"{p.key}={p.value.strip()} ({_where(p)}) is not a value Kafka accepts: {_EXIT.format(err=b.kafka_error)}. "
                f"{p.key} takes {b.accepts}.{hint}{assumed}",
                f"Before the broker starts, set {fix_value} on {_where(p)} (or remove the line to get Kafka's "
                f"default), then run the audit again.",
                path=p.source,
                details={
                    "key": p.key,
                    "value": p.value,
                    "line": p.line,
                    "kafka_error": b.kafka_error,
                    "accepts": b.accepts,
                    "suggested": b.suggested,
                },
            )
        elif p.kind == "log_dirs_duplicate":  # stops_the_start too
            a, b2 = p.paths
            dirs = ", ".join(h.configs.log_dirs_raw)
            yield run.finding(
                f"{p.key} ({_where(p)}) lists {a} and {b2}, which are the same directory: at start "
                f"LogManager.createAndValidateLogDirs compares canonical paths and throws KafkaException('Duplicate "
                f"log directory found: {dirs}'); it is not an IOException, so the broker does not start. kafka-ops "
                f"audits the directory once.",
                f"List each log dir once: {p.key}={','.join(h.configs.log_dirs)} on {_where(p)}.",
                path=p.source,
                details={"key": p.key, "value": p.value, "line": p.line, "same": [a, b2]},
            )
        elif p.kind == "log_dir_file":
            d = p.paths[0]
            yield run.finding(
                f"{p.key} ({_where(p)}) lists {d}, which is a file, not a directory: at start "
                f"LogManager.createAndValidateLogDirs throws IOException('{d} is not a readable log directory.') and "
                "takes it offline, with every partition assigned to it; when no log dir is left the broker halts "
                "('Shutdown broker because none of the specified log dirs from ... can be created or validated'). "
                "kafka-ops does not audit it as a log dir.",
                f"Point {p.key} at directories only ({_where(p)}): fix the path, or move {d} out of the way if a "
                "directory belongs there.",
                path=p.source,
                details={"key": p.key, "value": d, "line": p.line},
            )
        elif p.kind == "topic" and p.bad is not None:
            b = p.bad
            used, source = h.configs.broker_default(p.key) if p.key in TOPIC_DEFAULTS else (None, "")
            assumed = (
                f" kafka-ops uses the broker default {p.key}={used} ({source}) for topic {p.topic}."
                if used is not None
                else ""
            )
            hint = f" {b.hint}" + ("" if b.hint.endswith("?") else ".") if b.hint else ""
            yield run.finding(
                f"topic {p.topic}: {p.key}={p.value} ({_where(p)}) is not a value Kafka accepts: '{b.kafka_error}'. "
                f"No broker can hold it (kafka-configs --alter and AdminClient.incrementalAlterConfigs refuse it with "
                f"InvalidConfigurationException), so the file does not say what the cluster has. {p.key} takes "
                f"{b.accepts}.{hint}{assumed}",
                f"Describe the topic again from the cluster (kafka-configs --bootstrap-server <broker> --entity-type "
                f"topics --entity-name {q(p.topic)} --describe --all) and give that output as --topic-configs, or fix "
                f"{p.key} in {p.source}.",
                severity="error",
                path=p.source,
                topic=p.topic,
                details={
                    "key": p.key,
                    "value": p.value,
                    "line": p.line,
                    "kafka_error": b.kafka_error,
                    "accepts": b.accepts,
                    "suggested": b.suggested,
                },
            )
