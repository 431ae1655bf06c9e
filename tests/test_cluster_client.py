"""--command-config as Kafka's tools take it, without a broker: JKS, PKCS12 and PEM stores made by keytool and
cryptography (kafka_lab.certs) become an SSLContext that completes a real TLS handshake (client certificate
included) with an in-process server; bad input is one line naming the file; SASL settings as kafka-python's.
The same settings against a real broker: tests/lab/test_cluster_client_security.py."""

from __future__ import annotations

import os
import shutil
import socket
import ssl
import subprocess
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kafka_lab.certs import Pki, make_pki
from kafka_ops.cluster.client import client_settings, read_command_config

pytestmark = pytest.mark.skipif(
    shutil.which("keytool") is None, reason="keytool (a Java runtime) makes the stores"
)

PLAIN = "org.apache.kafka.common.security.plain.PlainLoginModule"
SCRAM = "org.apache.kafka.common.security.scram.ScramLoginModule"


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return make_pki(tmp_path_factory.mktemp("pki"))


@pytest.fixture(autouse=True)
def private_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The temporary dir the client's converted stores go to: each test's own, to see it left empty."""
    d = tmp_path / "tmpdir"
    d.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(d))
    return d


def handshake(pki: Pki, ctx: ssl.SSLContext, *, client_cert: bool, host: str = "127.0.0.1") -> dict[str, Any]:
    """A TLS handshake of ``ctx`` with a server holding the broker's certificate (asking for a client certificate
    when ``client_cert``); the client certificate's subject as the server saw it ({} when none)."""
    from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat, pkcs12

    key, cert, _more = pkcs12.load_key_and_certificates(pki.server_p12.read_bytes(), pki.password.encode())
    assert key is not None and cert is not None
    server_pem = pki.dir / "server-for-handshake.pem"
    server_pem.write_bytes(
        key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption()) + cert.public_bytes(Encoding.PEM)
    )
    sctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    sctx.load_cert_chain(server_pem)
    if client_cert:
        sctx.verify_mode = ssl.CERT_REQUIRED
        sctx.load_verify_locations(pki.ca_pem)
    a, b = socket.socketpair()
    seen: dict[str, Any] = {}

    def serve() -> None:
        try:
            with sctx.wrap_socket(a, server_side=True) as s:
                seen["peer"] = s.getpeercert() or {}
                s.sendall(b"ok")
        except (ssl.SSLError, OSError) as exc:
            seen["error"] = exc

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    with ctx.wrap_socket(b, server_hostname=host) as c:
        assert c.recv(2) == b"ok"
    t.join(10)
    assert "error" not in seen, seen
    subject = dict(x[0] for x in seen["peer"].get("subject", ()))
    return subject


def settings(**props: str) -> dict[str, Any]:
    return client_settings({k.replace("_", "."): v for k, v in props.items()})


def trusts(pki: Pki, kind: str) -> dict[str, str]:
    return {
        "jks": {"ssl.truststore.location": str(pki.trust_jks), "ssl.truststore.password": pki.password},
        "p12": {
            "ssl.truststore.type": "PKCS12",
            "ssl.truststore.location": str(pki.trust_p12),
            "ssl.truststore.password": pki.password,
        },
        "pem": {"ssl.truststore.type": "PEM", "ssl.truststore.location": str(pki.ca_pem)},
        "inline": {"ssl.truststore.type": "PEM", "ssl.truststore.certificates": pki.ca_pem.read_text()},
        "librdkafka": {"ssl.ca.location": str(pki.ca_pem)},
    }[kind]


@pytest.mark.parametrize("kind", ["jks", "p12", "pem", "inline", "librdkafka"])
def test_truststore_of_each_kind_verifies_the_broker(pki: Pki, kind: str, private_tmp: Path) -> None:
    cfg = client_settings({"security.protocol": "SSL", **trusts(pki, kind)})
    assert cfg["security_protocol"] == "SSL"
    assert handshake(pki, cfg["ssl_context"], client_cert=False) == {}
    assert list(private_tmp.iterdir()) == []  # the converted store is gone


def test_a_store_declared_jks_that_is_pkcs12_is_read_as_java_does(pki: Pki) -> None:
    # keytool writes PKCS12 by default since Java 9, and Java reads it as "JKS" (keystore.type.compat)
    cfg = client_settings(
        {
            "security.protocol": "SSL",
            "ssl.truststore.location": str(pki.trust_p12),
            "ssl.truststore.password": pki.password,
        }
    )
    handshake(pki, cfg["ssl_context"], client_cert=False)


def test_the_broker_is_not_trusted_without_its_ca(pki: Pki, tmp_path: Path) -> None:
    other = make_pki(tmp_path / "other")
    cfg = client_settings({"security.protocol": "SSL", **trusts(other, "p12")})
    with pytest.raises(ssl.SSLCertVerificationError):
        handshake(pki, cfg["ssl_context"], client_cert=False)


def keystores(pki: Pki, kind: str) -> dict[str, str]:
    return {
        "jks": {
            "ssl.keystore.location": str(pki.client_jks),
            "ssl.keystore.password": pki.password,
            "ssl.key.password": pki.password,
        },
        "p12": {
            "ssl.keystore.type": "PKCS12",
            "ssl.keystore.location": str(pki.client_p12),
            "ssl.keystore.password": pki.password,
        },
        "pem": {
            "ssl.keystore.type": "PEM",
            "ssl.keystore.location": str(pki.client_pem),
            "ssl.key.password": pki.password,
        },
        "inline": {
            "ssl.keystore.type": "PEM",
            "ssl.keystore.key": pki.client_key_pem,
            "ssl.keystore.certificate.chain": pki.client_chain_pem,
            "ssl.key.password": pki.password,
        },
    }[kind]


@pytest.mark.parametrize("kind", ["jks", "p12", "pem", "inline"])
def test_keystore_of_each_kind_presents_the_client_certificate(
    pki: Pki, kind: str, private_tmp: Path
) -> None:
    cfg = client_settings({"security.protocol": "SSL", **trusts(pki, "jks"), **keystores(pki, kind)})
    assert handshake(pki, cfg["ssl_context"], client_cert=True) == {"commonName": "kafka-ops"}
    assert list(private_tmp.iterdir()) == []  # key and chain were written there, removed once loaded


def test_inline_pem_joined_by_properties_continuation_lines(pki: Pki, tmp_path: Path) -> None:
    """As a properties file holds inline PEM (KIP-651's example): each line ends with a backslash, so the value
    read is the PEM on one line."""

    def continued(pem: str) -> str:
        return " \\\n  ".join(pem.strip().splitlines())

    f = tmp_path / "client.properties"
    f.write_text(
        "security.protocol=SSL\nssl.truststore.type=PEM\nssl.keystore.type=PEM\n"
        f"ssl.truststore.certificates={continued(pki.ca_pem.read_text())}\n"
        f"ssl.keystore.certificate.chain={continued(pki.client_chain_pem)}\n"
        f"ssl.keystore.key={continued(pki.client_key_pem)}\n"
        f"ssl.key.password={pki.password}\n"
    )
    cfg = read_command_config(str(f))
    assert handshake(pki, cfg["ssl_context"], client_cert=True) == {"commonName": "kafka-ops"}


def bad(pki: Pki, props: dict[str, str]) -> str:
    with pytest.raises(ValueError) as exc:
        client_settings({"security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN",
                         "sasl.jaas.config": f'{PLAIN} required username="u" password="p";', **props})  # fmt: skip
    text = str(exc.value)
    assert "\n" not in text and pki.password not in text and "wrong-pass-123" not in text
    return text


def test_wrong_passwords_name_the_file_and_the_setting(pki: Pki) -> None:
    wrong = {"ssl.truststore.password": "wrong-pass-123"}
    assert bad(pki, {**trusts(pki, "jks"), **wrong}) == (
        f"{pki.trust_jks} (ssl.truststore.location): wrong ssl.truststore.password"
    )
    assert bad(pki, {**trusts(pki, "p12"), **wrong}).startswith(
        f"{pki.trust_p12} (ssl.truststore.location): wrong ssl.truststore.password"
    )
    assert bad(pki, {**keystores(pki, "pem"), "ssl.key.password": "wrong-pass-123"}).startswith(
        f"{pki.client_pem} (ssl.keystore.location): wrong ssl.key.password"
    )
    assert bad(pki, {**keystores(pki, "jks"), "ssl.keystore.password": "wrong-pass-123"}) == (
        f"{pki.client_jks} (ssl.keystore.location): wrong ssl.keystore.password"
    )


def test_missing_file_and_wrong_type(pki: Pki, tmp_path: Path) -> None:
    missing = tmp_path / "nope.jks"
    assert bad(pki, {"ssl.truststore.location": str(missing), "ssl.truststore.password": "x"}) == (
        f"{missing} (ssl.truststore.location): no such file"
    )
    assert "the file is PEM: set ssl.truststore.type=PEM" in bad(
        pki, {"ssl.truststore.type": "PKCS12", "ssl.truststore.location": str(pki.ca_pem)}
    )
    assert "ssl.truststore.type=PEM but the file is a JKS store" in bad(
        pki, {"ssl.truststore.type": "PEM", "ssl.truststore.location": str(pki.trust_jks)}
    )
    assert "ssl.truststore.type=BCFKS is not supported" in bad(
        pki, {"ssl.truststore.type": "BCFKS", "ssl.truststore.location": str(pki.trust_jks)}
    )
    assert "the key is encrypted: set ssl.key.password" in bad(
        pki, {"ssl.keystore.type": "PEM", "ssl.keystore.location": str(pki.client_pem)}
    )
    # Kafka's own rules (DefaultSslEngineFactory)
    assert "needs ssl.truststore.type=PEM" in bad(
        pki, {"ssl.truststore.certificates": pki.ca_pem.read_text()}
    )
    assert "takes no ssl.truststore.password" in bad(
        pki, {**trusts(pki, "pem"), "ssl.truststore.password": "x"}
    )


def test_jks_without_keytool_says_what_to_do(pki: Pki, monkeypatch: pytest.MonkeyPatch) -> None:
    real = shutil.which
    monkeypatch.setattr(
        shutil, "which", lambda name, *a, **k: None if name == "keytool" else real(name, *a, **k)
    )
    text = bad(pki, trusts(pki, "jks"))
    assert text.startswith(f"{pki.trust_jks} (ssl.truststore.location): a JKS store, which needs keytool")
    assert "install a Java runtime" in text and "ssl.truststore.type=PKCS12" in text
    handshake(
        pki,
        client_settings({"security.protocol": "SSL", **trusts(pki, "p12")})["ssl_context"],
        client_cert=False,
    )


def test_keytool_gets_no_password_on_its_command_line(pki: Pki, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[list[str]] = []
    real: Callable[..., Any] = subprocess.run

    def spy(cmd: list[str], *a: Any, **k: Any) -> Any:
        seen.append(cmd)
        return real(cmd, *a, **k)

    monkeypatch.setattr(subprocess, "run", spy)
    settings(security_protocol="SSL", **{k.replace(".", "_"): v for k, v in keystores(pki, "jks").items()})
    assert seen and all(pki.password not in " ".join(c) for c in seen)


def test_a_password_with_a_dollar_brace_is_literal_without_config_providers() -> None:
    cfg = client_settings(
        {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN",
         "sasl.jaas.config": f'{PLAIN} required username="u" password="a${{b}}";'}
    )  # fmt: skip
    assert cfg["sasl_plain_password"] == "a${b}"


def test_sasl_plain_and_scram_from_the_jaas_line() -> None:
    assert client_settings(
        {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "SCRAM-SHA-512",
         "sasl.jaas.config": f'{SCRAM} required username="alice" password="a\\"b";'}
    ) == {"security_protocol": "SASL_PLAINTEXT", "sasl_mechanism": "SCRAM-SHA-512",
          "sasl_plain_username": "alice", "sasl_plain_password": 'a"b'}  # fmt: skip
    cfg = client_settings(
        {"security.protocol": "sasl_plaintext", "sasl.mechanism": "PLAIN", "client.id": "ops",
         "sasl.jaas.config": f"{PLAIN} required username=bob password=secret;"}
    )  # fmt: skip
    assert (cfg["sasl_plain_username"], cfg["sasl_plain_password"], cfg["client_id"]) == (
        "bob",
        "secret",
        "ops",
    )
    assert "ssl_context" not in cfg  # TLS settings mean nothing on a plaintext listener


@pytest.mark.parametrize(
    ("props", "said"),
    [
        ({"sasl.mechanism": "SCRAM-SHA-256", "sasl.jaas.config": f'{PLAIN} required username="u" password="p";'},
         f"sasl.jaas.config has {PLAIN}, not {SCRAM}"),
        ({"sasl.mechanism": "PLAIN"}, "sasl.mechanism=PLAIN needs sasl.jaas.config"),
        ({"sasl.mechanism": "PLAIN", "sasl.jaas.config": f"{PLAIN} required;"}, "has no username"),
        ({"sasl.mechanism": "OAUTHBEARER"}, "sasl.mechanism=OAUTHBEARER is not supported here"),
        ({"sasl.mechanism": "PLAIN", "config.providers": "file",
          "sasl.jaas.config": f'{PLAIN} required username="u" password="${{file:/s:p}}";'},
         "sasl.jaas.config refers to a config provider"),
        ({"sasl.jaas.config": f'{SCRAM} required username="u" password="p";'},
         "sasl.mechanism is not set (Kafka's default is GSSAPI) but sasl.jaas.config has"),
        ({"security.protocol": "TLS"}, "security.protocol=TLS is not one of"),
    ],
)  # fmt: skip
def test_sasl_mistakes_are_one_line(props: dict[str, str], said: str) -> None:
    with pytest.raises(ValueError, match=None) as exc:
        client_settings({"security.protocol": "SASL_PLAINTEXT", **props})
    assert said in str(exc.value)


def test_cli_exit_2_one_line_naming_the_file(
    pki: Pki, tmp_path: Path, cli: Callable[..., tuple[int, str, str]]
) -> None:
    f = tmp_path / "client.properties"
    f.write_text(
        f"security.protocol=SSL\nssl.truststore.location={pki.trust_p12}\nssl.truststore.type=PKCS12\n"
        "ssl.truststore.password=wrong-pass-123\n"
    )
    for args in (["cluster", "status"], ["cluster", "check", "--broker", "1"]):
        code, out, err = cli(*args, "--bootstrap-server", "127.0.0.1:1", "--command-config", f)
        assert code == 2, err
        assert len(err.strip().splitlines()) == 1, err
        assert str(f) in err and str(pki.trust_p12) in err and "wrong ssl.truststore.password" in err, err
        assert "wrong-pass-123" not in err + out and "Traceback" not in err


def test_no_private_dir_left_after_an_error(pki: Pki, private_tmp: Path) -> None:
    bad(pki, {**keystores(pki, "jks"), "ssl.keystore.password": "wrong-pass-123"})
    assert list(private_tmp.iterdir()) == []
    assert os.listdir(private_tmp) == []


def test_kafka_python_before_3_is_refused_in_one_line() -> None:
    from kafka_ops.cluster.client import ClusterUnavailable, check_kafka_python

    check_kafka_python("3.0.0")
    check_kafka_python("3.0.12")
    with pytest.raises(
        ClusterUnavailable, match=r"kafka-python 2\.2\.15 is too old: kafka-ops needs 3\.0\.0"
    ):
        check_kafka_python("2.2.15")
    check_kafka_python()  # the installed one (the dev extra's floor)


def test_pem_truststore_with_openssl_bag_attributes(pki: Pki, tmp_path: Path) -> None:
    """`openssl pkcs12 -nokeys` output: text lines before each certificate."""
    f = tmp_path / "ca-bag.pem"
    f.write_text(
        "Bag Attributes\n    friendlyName: ca\nsubject=CN = kafka-ops lab CA\n" + pki.ca_pem.read_text()
    )
    cfg = client_settings(
        {"security.protocol": "SSL", "ssl.truststore.type": "PEM", "ssl.truststore.location": str(f)}
    )
    handshake(pki, cfg["ssl_context"], client_cert=False)


def test_kafka_python_errors_name_their_class_once() -> None:
    from kafka.errors import KafkaConnectionError, SaslAuthenticationFailedError

    from kafka_ops.cluster.client import error_text

    sasl = SaslAuthenticationFailedError("SaslAuthenticationFailedError: Authentication failed")
    assert error_text(sasl) == "[Error 58] SaslAuthenticationFailedError: Authentication failed"
    assert (
        error_text(KafkaConnectionError("socket disconnected")) == "KafkaConnectionError: socket disconnected"
    )
    assert error_text(ConnectionRefusedError(111, "Connection refused")) == (
        "ConnectionRefusedError: [Errno 111] Connection refused"
    )


def test_host_name_checked_unless_the_algorithm_is_empty(pki: Pki) -> None:
    """Kafka's default ssl.endpoint.identification.algorithm=https checks the broker's name; empty turns it off."""
    cfg = client_settings({"security.protocol": "SSL", **trusts(pki, "p12")})
    with pytest.raises(ssl.SSLCertVerificationError, match="mismatch"):
        handshake(pki, cfg["ssl_context"], client_cert=False, host="broker-9.example")
    off = client_settings(
        {"security.protocol": "SSL", "ssl.endpoint.identification.algorithm": "", **trusts(pki, "p12")}
    )
    handshake(pki, off["ssl_context"], client_cert=False, host="broker-9.example")


def test_key_and_chain_written_only_in_a_private_dir(pki: Pki, monkeypatch: pytest.MonkeyPatch) -> None:
    from kafka_ops.cluster import tls

    seen: list[tuple[str, int, int, bytes]] = []
    real = tls._write_private

    def spy(path: str, data: bytes) -> None:
        real(path, data)
        seen.append(
            (path, os.stat(os.path.dirname(path)).st_mode & 0o777, os.stat(path).st_mode & 0o777, data)
        )

    monkeypatch.setattr(tls, "_write_private", spy)
    client_settings({"security.protocol": "SSL", **trusts(pki, "p12"), **keystores(pki, "p12")})
    assert [Path(p).name for p, *_ in seen] == ["chain.pem", "key.pem"]
    assert all(dmode == 0o700 and fmode == 0o600 for _, dmode, fmode, _ in seen), seen
    assert all(not Path(p).parent.is_relative_to(pki.dir) for p, *_ in seen)  # never beside the stores
    assert b"ENCRYPTED PRIVATE KEY" in seen[1][3]  # under a one-time password, not the store's
    assert not any(Path(p).exists() for p, *_ in seen)
