"""A bounded connection to a running cluster through kafka-python's admin client.

Why kafka-python (pure Python, on PyPI): its ``KafkaAdminClient`` has everything the cluster facts need in one
client: ``describe_cluster`` (cluster id, controller, brokers), ``describe_topics`` (leader, replicas and ISR of
every partition), ``describe_configs`` (the topic configs the broker uses) and ``describe_log_dirs`` (the broker's
own view of its log dirs, offline ones included). confluent-kafka's AdminClient has no DescribeLogDirs, and needs
librdkafka's own configuration names.

``--command-config`` takes the client properties Kafka's own tools take (``security.protocol``, ``ssl.*``,
``sasl.*``); they are mapped to kafka-python's names here. Every call is bounded: a cluster that does not answer
is a ``ClusterUnavailable`` with one line, never a hang.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

DEFAULT_TIMEOUT_S = 10.0

# Kafka client property -> kafka-python keyword (values are strings in the file; converted below)
_PROPERTY_MAP = {
    "security.protocol": "security_protocol",
    "sasl.mechanism": "sasl_mechanism",
    "ssl.truststore.location": None,  # JKS stores: not readable by Python's ssl; see _refuse
    "ssl.keystore.location": None,
    "ssl.ca.location": "ssl_cafile",
    "ssl.certificate.location": "ssl_certfile",
    "ssl.key.location": "ssl_keyfile",
    "ssl.key.password": "ssl_password",
    "ssl.endpoint.identification.algorithm": "ssl_check_hostname",
    "client.id": "client_id",
    "request.timeout.ms": "request_timeout_ms",
    "sasl.kerberos.service.name": "sasl_kerberos_service_name",
}


class ClusterUnavailable(RuntimeError):
    """The cluster could not be asked (unreachable, refused, timed out, bad client settings): one line."""


def read_command_config(path: str) -> dict[str, Any]:
    """kafka-python keywords from a Kafka client properties file (``--command-config``)."""
    from kafka_ops.engine.errors import EngineError
    from kafka_ops.facts.config import read_server_properties

    try:
        props = read_server_properties(path)  # the same Java properties syntax
    except EngineError as exc:
        raise ClusterUnavailable(f"{path}: {exc.reason}") from exc
    out: dict[str, Any] = {}
    for key, value in props.items():
        if key == "sasl.jaas.config":
            user, password = _jaas_credentials(value)
            if user is not None:
                out["sasl_plain_username"], out["sasl_plain_password"] = user, password
            continue
        if key in ("ssl.truststore.location", "ssl.keystore.location"):
            raise ClusterUnavailable(
                f"{path}: {key} is a Java key store, which Python's ssl cannot read: export it to PEM "
                "(keytool -exportcert -rfc) and give ssl.ca.location / ssl.certificate.location / ssl.key.location"
            )
        target = _PROPERTY_MAP.get(key)
        if target is None:
            continue  # Java-only settings (buffer sizes, ...) change nothing for the admin calls made here
        if target == "ssl_check_hostname":
            out[target] = value.strip().lower() == "https"
        elif target == "request_timeout_ms":
            out[target] = int(value)
        else:
            out[target] = value.strip()
    return out


def _jaas_credentials(jaas: str) -> tuple[str | None, str | None]:
    """username/password of a PlainLoginModule or ScramLoginModule ``sasl.jaas.config`` line."""
    import re

    user = re.search(r'username\s*=\s*"([^"]*)"', jaas)
    password = re.search(r'password\s*=\s*"([^"]*)"', jaas)
    return (user.group(1) if user else None), (password.group(1) if password else None)


def admin(
    bootstrap: str, client_config: dict[str, Any] | None = None, timeout_s: float = DEFAULT_TIMEOUT_S
) -> Any:
    """A connected ``KafkaAdminClient``; ClusterUnavailable (one line) when the cluster does not answer."""
    try:
        from kafka import KafkaAdminClient
        from kafka.errors import KafkaError
    except ImportError as exc:  # pragma: no cover - a dependency of kafka-ops
        raise ClusterUnavailable("kafka-python is not installed: pip install kafka-python") from exc
    ms = int(timeout_s * 1000)
    cfg: dict[str, Any] = {
        "bootstrap_servers": bootstrap,
        "request_timeout_ms": ms,
        "bootstrap_timeout_ms": ms,
        "connections_max_idle_ms": max(ms * 3, 30_000),
        "reconnect_backoff_max_ms": 1000,
        "client_id": "kafka-ops",
    }
    cfg.update(client_config or {})
    started = time.monotonic()
    try:
        # kafka-python's timeouts do not cover a TLS handshake with a port that accepts and never answers (it
        # blocked past 300 s with a 3 s timeout): the connection gets a hard deadline of its own
        return with_deadline(
            lambda: KafkaAdminClient(**cfg),
            timeout_s + CONNECT_GRACE_S,
            f"cannot reach the cluster at {bootstrap}",
        )
    except KafkaError as exc:
        raise ClusterUnavailable(
            f"cannot reach the cluster at {bootstrap} within {time.monotonic() - started:.0f} s: {error_text(exc)}"
        ) from exc
    except (OSError, ValueError) as exc:
        raise ClusterUnavailable(f"cannot reach the cluster at {bootstrap}: {exc}") from exc


CONNECT_GRACE_S = 2.0


def with_deadline(fn: Callable[[], T], seconds: float, what: str) -> T:
    """``fn()``, run in a daemon thread that is no longer waited for after ``seconds``: ClusterUnavailable then
    (the thread, stuck in a socket call, ends with the process)."""
    import threading

    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # handed to the caller's thread
            box["error"] = exc

    t = threading.Thread(target=run, name="kafka-ops-cluster", daemon=True)
    t.start()
    t.join(seconds)
    if t.is_alive():
        raise ClusterUnavailable(
            f"{what}: no answer within {seconds:g} s (a port that accepts connections but does not answer: "
            "not a Kafka listener, or a TLS/SASL mismatch with --command-config?)"
        )
    if "error" in box:
        raise box["error"]
    return box["value"]  # type: ignore[no-any-return]


def error_text(exc: BaseException) -> str:
    """'KafkaTimeoutError: Unable to bootstrap from ...' (kafka-python's str() already starts with the class
    name for some errors: said once)."""
    name, text = type(exc).__name__, str(exc).strip()
    if not text:
        return name
    return text if text.startswith(name) else f"{name}: {text}"


def retry(fn: Callable[[], T], attempts: int, delay_s: float, what: str) -> T:
    """Call ``fn`` up to ``attempts`` times, ``delay_s`` apart (doubling, as KafkaRoller backs off)."""
    last: Exception | None = None
    for i in range(max(1, attempts)):
        try:
            return fn()
        except ClusterUnavailable as exc:
            last = exc
            if i + 1 < attempts:
                time.sleep(delay_s * (2**i))
    raise ClusterUnavailable(f"{what}: {last} (after {attempts} attempt(s))")
