"""A bounded connection to a running cluster through kafka-python's admin client.

Why kafka-python (pure Python, on PyPI): its ``KafkaAdminClient`` has everything the cluster facts need in one
client: ``describe_cluster`` (cluster id, controller, brokers), ``describe_topics`` (leader, replicas and ISR of
every partition), ``describe_configs`` (the topic configs the broker uses) and ``describe_log_dirs`` (the broker's
own view of its log dirs, offline ones included). confluent-kafka's AdminClient has no DescribeLogDirs, and needs
librdkafka's own configuration names.

``--command-config`` takes the client properties Kafka's own tools take (``security.protocol``, the ``ssl.*``
truststore and keystore in JKS, PKCS12 or PEM, ``sasl.mechanism`` with ``sasl.jaas.config``); they are mapped to
kafka-python's keywords here, the TLS settings to one ``ssl_context`` (kafka_ops.cluster.tls). Every call is bounded: a cluster that does not answer
is a ``ClusterUnavailable`` with one line, never a hang.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

DEFAULT_TIMEOUT_S = 10.0

# Kafka client property -> kafka-python keyword, for the settings other than TLS and SASL credentials (values are
# strings in the file; converted below). TLS settings become one ssl_context (kafka_ops.cluster.tls).
_PROPERTY_MAP = {
    "client.id": "client_id",
    "request.timeout.ms": "request_timeout_ms",
    "sasl.kerberos.service.name": "sasl_kerberos_service_name",
}
_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
# mechanism -> the JAAS login module Kafka's clients take for it
_LOGIN_MODULES = {
    "PLAIN": "org.apache.kafka.common.security.plain.PlainLoginModule",
    "SCRAM-SHA-256": "org.apache.kafka.common.security.scram.ScramLoginModule",
    "SCRAM-SHA-512": "org.apache.kafka.common.security.scram.ScramLoginModule",
}


class ClusterUnavailable(RuntimeError):
    """The cluster could not be asked (unreachable, refused, timed out, bad client settings): one line."""


def read_command_config(path: str) -> dict[str, Any]:
    """kafka-python keywords from a Kafka client properties file (``--command-config``), as Kafka's own tools
    take it: ``security.protocol``, the ``ssl.*`` stores (JKS, PKCS12, PEM; kafka_ops.cluster.tls), ``sasl.mechanism``
    with ``sasl.jaas.config`` (PLAIN, SCRAM-SHA-256/512; GSSAPI passed on). ClusterUnavailable naming the file
    and what is wrong."""
    from kafka_ops.engine.errors import EngineError
    from kafka_ops.facts.config import read_server_properties

    try:
        props = read_server_properties(path)  # the same Java properties syntax
    except EngineError as exc:
        raise ClusterUnavailable(f"{path}: {exc.reason}") from exc
    try:
        return client_settings(props)
    except ValueError as exc:
        raise ClusterUnavailable(f"{path}: {exc}") from None


def client_settings(props: dict[str, str]) -> dict[str, Any]:
    """kafka-python keywords from client properties; ValueError (one line, no secret in it) when unusable."""
    for key, value in props.items():
        # a ConfigProvider reference (KIP-297): Java clients resolve it only with config.providers set
        if "${" in value and "config.providers" in props and key.startswith(("ssl.", "sasl.", "security.")):
            raise ValueError(
                f"{key} refers to a config provider (${{...}}), which kafka-ops does not resolve"
            )
    protocol = (props.get("security.protocol") or "PLAINTEXT").strip().upper()
    if protocol not in _PROTOCOLS:
        raise ValueError(f"security.protocol={protocol} is not one of {', '.join(_PROTOCOLS)}")
    out: dict[str, Any] = {"security_protocol": protocol}
    for key, target in _PROPERTY_MAP.items():
        if key in props and props[key].strip():
            value = props[key].strip()
            if target == "request_timeout_ms":
                try:
                    out[target] = int(value)
                except ValueError:
                    raise ValueError(f"{key}={value} is not a number of milliseconds") from None
            else:
                out[target] = value
    if protocol.startswith("SASL_"):
        out |= _sasl(props)
    if protocol in ("SSL", "SASL_SSL"):
        from kafka_ops.cluster.tls import ssl_context

        out["ssl_context"] = ssl_context(props)  # ClientConfigError is a ValueError
    return out


def _sasl(props: dict[str, str]) -> dict[str, Any]:
    mechanism = (props.get("sasl.mechanism") or "GSSAPI").strip().upper()  # Kafka's default mechanism
    jaas = props.get("sasl.jaas.config", "").strip()
    if not (props.get("sasl.mechanism") or "").strip() and _jaas(jaas)[0] in _LOGIN_MODULES.values():
        raise ValueError(
            f"sasl.mechanism is not set (Kafka's default is GSSAPI) but sasl.jaas.config has {_jaas(jaas)[0]}: "
            "set sasl.mechanism=PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512"
        )
    if mechanism == "GSSAPI":
        return {"sasl_mechanism": mechanism}  # Kerberos: kafka-python's gssapi support, the ticket cache
    if mechanism not in _LOGIN_MODULES:
        raise ValueError(
            f"sasl.mechanism={mechanism} is not supported here (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, GSSAPI)"
        )
    if not jaas:
        raise ValueError(
            f"sasl.mechanism={mechanism} needs sasl.jaas.config with username and password "
            "(a JAAS file given to Java with -Djava.security.auth.login.config is not read)"
        )
    module, options = _jaas(jaas)
    if module != _LOGIN_MODULES[mechanism]:
        raise ValueError(
            f"sasl.jaas.config has {module or 'no login module'}, not {_LOGIN_MODULES[mechanism]} (sasl.mechanism={mechanism})"
        )
    if not options.get("username") or "password" not in options:
        raise ValueError('sasl.jaas.config has no username="..." password="..."')
    return {
        "sasl_mechanism": mechanism,
        "sasl_plain_username": options["username"],
        "sasl_plain_password": options["password"],
    }


_JAAS = re.compile(
    r"""^\s*(?P<module>[\w.$]+)\s+(?:required|requisite|sufficient|optional)(?P<options>.*?);?\s*$""", re.S
)
_JAAS_OPTION = re.compile(r"""([\w.$-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([\w.$-]+))""")


def _jaas(jaas: str) -> tuple[str | None, dict[str, str]]:
    """The login module and options of a one-module ``sasl.jaas.config`` (Kafka's JaasConfig: options are
    ``name=value``, the value quoted with \\ escapes, or a bare word)."""
    m = _JAAS.match(jaas)
    if m is None:
        return None, {}
    options = {}
    for name, quoted, bare in _JAAS_OPTION.findall(m.group("options")):
        options[name] = re.sub(r"\\(.)", r"\1", quoted) if quoted or not bare else bare
    return m.group("module"), options


def admin(
    bootstrap: str, client_config: dict[str, Any] | None = None, timeout_s: float = DEFAULT_TIMEOUT_S
) -> Any:
    """A connected ``KafkaAdminClient``; ClusterUnavailable (one line) when the cluster does not answer."""
    try:
        from kafka import KafkaAdminClient
        from kafka.errors import KafkaError
    except ImportError as exc:  # pragma: no cover - a dependency of kafka-ops
        raise ClusterUnavailable("kafka-python is not installed: pip install 'kafka-python>=3'") from exc
    check_kafka_python()
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
    last = _LastConnectionError()
    kafka_log = logging.getLogger("kafka")
    kafka_log.addHandler(last)
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
            + last.said(sasl=str(cfg.get("security_protocol", "")).startswith("SASL_"))
        ) from exc
    except (OSError, ValueError) as exc:
        raise ClusterUnavailable(f"cannot reach the cluster at {bootstrap}: {exc}") from exc
    finally:
        kafka_log.removeHandler(last)


class _LastConnectionError(logging.Handler):
    """The last connection error kafka-python logged while bootstrapping: its KafkaTimeoutError ("Unable to
    bootstrap") does not say why, and the why (a SASL authentication failure, a certificate not trusted) is what
    the operator needs."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.error: BaseException | None = None
        self.refused: BaseException | None = None  # authentication, authorization, TLS: the likely why

    def emit(self, record: logging.LogRecord) -> None:
        import ssl

        args = record.args if isinstance(record.args, tuple) else ()
        for arg in args:
            if not isinstance(arg, BaseException):
                continue
            name = type(arg).__name__
            if isinstance(arg, ssl.SSLError) or "Authentication" in name or "Authorization" in name:
                self.refused = arg
            elif (
                "Timeout" not in name and "TimedOut" not in name
            ):  # the bootstrap's own deadline: not the why
                self.error = arg

    def said(self, *, sasl: bool) -> str:
        error = self.refused or self.error
        if error is None:
            return ""
        hint = ""
        if sasl and self.refused is None and re.search(r"disconnected|not connected", str(error)):
            # a broker refusing SASL credentials closes the connection; kafka-python 3.0 then reports only that
            # ("socket disconnected" in 3.0.12, "Node not connected" in 3.0.0)
            hint = ": the broker closed the connection (wrong SASL username/password or mechanism?)"
        return f" (last error: {error_text(error)}{hint})"


CONNECT_GRACE_S = 2.0
KAFKA_PYTHON_FLOOR = (3, 0, 0)  # describe_metadata_quorum, describe_log_dirs(brokers=...): pyproject's floor


def check_kafka_python(version: str | None = None) -> None:
    """ClusterUnavailable when the installed kafka-python predates the floor: 2.x has no describe_metadata_quorum
    (the quorum would silently be unknown) and another describe_log_dirs."""
    if version is None:
        import kafka

        version = str(getattr(kafka, "__version__", "0"))
    parts = tuple(int(x) for x in re.findall(r"\d+", version)[:3])
    if parts < KAFKA_PYTHON_FLOOR:
        raise ClusterUnavailable(
            f"kafka-python {version} is too old: kafka-ops needs 3.0.0 or later (pip install -U 'kafka-python>=3')"
        )


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
    name for some errors, or with '[Error 58] SaslAuthenticationFailedError: ', repeated: said once)."""
    name, text = type(exc).__name__, str(exc).strip()
    if not text:
        return name
    text = re.sub(rf"(?:{re.escape(name)}: )+", f"{name}: ", text)
    return text if re.match(rf"(?:\[Error \d+\] )?{re.escape(name)}\b", text) else f"{name}: {text}"


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
