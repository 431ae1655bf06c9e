"""The TLS settings of a Kafka client properties file, as Kafka's own tools take them, as one ``ssl.SSLContext``.

Kafka's names (what cp-ansible and the Kafka docs write): ``ssl.truststore.type|location|password`` and
``ssl.keystore.type|location|password`` with ``ssl.key.password``, types JKS, PKCS12 and PEM, and PEM inline
(KIP-651: ``ssl.truststore.certificates``, ``ssl.keystore.certificate.chain``, ``ssl.keystore.key``). The
librdkafka names (``ssl.ca.location``, ``ssl.certificate.location``, ``ssl.key.location``) still work.

PKCS12 is read with the ``cryptography`` package. JKS has no maintained Python reader: ``keytool`` (a Java
runtime) converts it to PKCS12 in a private temporary directory. As Java 9+ does (keystore.type.compat), a store
declared JKS or PKCS12 is read as what its bytes are (keytool has made PKCS12 files by default since Java 9).

The context is built once, before any connection: trusted certificates are loaded from memory; the client's key
and chain go through a private temporary directory (0700, the key encrypted there with a one-time password),
removed as soon as the context has loaded them. kafka-python takes the context as ``ssl_context``.
Rules mirrored from Kafka's DefaultSslEngineFactory (clients/src/main/java/org/apache/kafka/common/security/ssl/
DefaultSslEngineFactory.java): inline certificates only with type PEM, not both a location and inline
certificates, no store password with PEM.
"""

from __future__ import annotations

import base64
import os
import re
import secrets
import shutil
import ssl
import subprocess
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


class ClientConfigError(ValueError):
    """The TLS settings cannot be used: one line, naming the setting or file and what is wrong."""


_JKS_MAGIC = b"\xfe\xed\xfe\xed"
_JCEKS_MAGIC = b"\xce\xce\xce\xce"
_PEM_BLOCK = re.compile(rb"-+BEGIN ([A-Z0-9 ]+)-+(.*?)-+END \1-+", re.S)
_TYPES = ("JKS", "PKCS12", "PEM")
KEYTOOL_TIMEOUT_S = 60


@dataclass
class _Material:
    ca: list[Any] = field(default_factory=list)  # cryptography x509.Certificate
    chain: list[Any] = field(default_factory=list)
    key: Any = None


def ssl_context(props: Mapping[str, str]) -> ssl.SSLContext:
    """The client's SSLContext from ``props`` (a client properties file, as read); ClientConfigError."""
    check_hostname = props.get("ssl.endpoint.identification.algorithm", "https").strip().lower() == "https"
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)  # what kafka-python's own context starts from
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    ctx.check_hostname = check_hostname  # Kafka's default algorithm, https, checks it
    if any(k.startswith(("ssl.truststore.", "ssl.keystore.")) for k in props):
        try:
            import cryptography  # noqa: F401
        except ImportError:
            raise ClientConfigError(
                "reading ssl.truststore/ssl.keystore needs the cryptography package: pip install 'kafka-ops[cluster]'"
            ) from None
    work = tempfile.mkdtemp(prefix="kafka-ops-tls-")  # 0700 (mkdtemp), never beside the stores
    try:
        os.chmod(work, 0o700)
        ca = _trusted(props, work)
        ca_file = _get(props, "ssl.ca.location")
        if ca and ca_file:
            raise ClientConfigError("give the trusted certificates once: ssl.truststore.* or ssl.ca.location")
        if ca:
            ctx.load_verify_locations(cadata="".join(_pem(c) for c in ca))
        elif ca_file:
            _load(lambda: ctx.load_verify_locations(cafile=ca_file), f"{ca_file} (ssl.ca.location)")
        else:
            ctx.load_default_certs()  # as Java's default truststore: the system's CAs
        own = _own(props, work)
        if own is not None:
            _load_own(ctx, own, work)
        elif _get(props, "ssl.certificate.location"):
            cert, key = _get(props, "ssl.certificate.location"), _get(props, "ssl.key.location")
            password = props.get("ssl.key.password")
            _load(
                lambda: ctx.load_cert_chain(cert, key, password=password),
                f"{cert} (ssl.certificate.location)" + (f", {key} (ssl.key.location)" if key else ""),
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return ctx


def _get(props: Mapping[str, str], key: str) -> str | None:
    value = props.get(key)
    if value is None or not value.strip():
        return None
    return value.strip()


def _store_type(props: Mapping[str, str], kind: str) -> str:
    declared = (_get(props, f"ssl.{kind}.type") or "JKS").upper()  # Kafka's default (SslConfigs)
    if declared not in _TYPES:
        raise ClientConfigError(f"ssl.{kind}.type={declared} is not supported here (JKS, PKCS12 or PEM)")
    return declared


def _trusted(props: Mapping[str, str], work: str) -> list[Any]:
    location, inline = _get(props, "ssl.truststore.location"), _get(props, "ssl.truststore.certificates")
    if location is None and inline is None:
        return []
    declared = _store_type(props, "truststore")
    password = props.get("ssl.truststore.password")
    if inline is not None:
        if location is not None:
            raise ClientConfigError(
                "both ssl.truststore.location and ssl.truststore.certificates are set: give one"
            )
        if declared != "PEM":
            raise ClientConfigError(
                f"ssl.truststore.certificates needs ssl.truststore.type=PEM, not {declared}"
            )
        certs = _pem_certs(inline.encode(), "ssl.truststore.certificates")
        if not certs:
            raise ClientConfigError("ssl.truststore.certificates holds no PEM certificate")
        return certs
    assert location is not None
    where = f"{location} (ssl.truststore.location)"
    if declared == "PEM" and password:
        raise ClientConfigError(
            f"{where}: a PEM truststore takes no ssl.truststore.password (Kafka refuses it)"
        )
    material = _read_store(location, where, "truststore", declared, password, None, work)
    certs = material.ca + material.chain
    if not certs:
        raise ClientConfigError(f"{where}: no certificate in it")
    return certs


def _own(props: Mapping[str, str], work: str) -> _Material | None:
    location = _get(props, "ssl.keystore.location")
    chain, key = _get(props, "ssl.keystore.certificate.chain"), _get(props, "ssl.keystore.key")
    if location is None and chain is None and key is None:
        return None
    declared = _store_type(props, "keystore")
    password, key_password = props.get("ssl.keystore.password"), props.get("ssl.key.password")
    if chain is not None or key is not None:
        if location is not None:
            raise ClientConfigError(
                "both ssl.keystore.location and ssl.keystore.key/certificate.chain are set"
            )
        if declared != "PEM":
            raise ClientConfigError(f"ssl.keystore.key needs ssl.keystore.type=PEM, not {declared}")
        if chain is None or key is None:
            raise ClientConfigError(
                "ssl.keystore.key and ssl.keystore.certificate.chain go together: give both"
            )
        certs = _pem_certs(chain.encode(), "ssl.keystore.certificate.chain")
        if not certs:
            raise ClientConfigError("ssl.keystore.certificate.chain holds no PEM certificate")
        return _Material(chain=certs, key=_pem_key(key.encode(), key_password, "ssl.keystore.key"))
    assert location is not None
    where = f"{location} (ssl.keystore.location)"
    if declared == "PEM" and password:
        raise ClientConfigError(f"{where}: a PEM keystore takes ssl.key.password, not ssl.keystore.password")
    material = _read_store(location, where, "keystore", declared, password, key_password, work)
    if material.key is None:
        raise ClientConfigError(f"{where}: no private key in it")
    return material


def _read_store(
    location: str,
    where: str,
    kind: str,
    declared: str,
    password: str | None,
    key_password: str | None,
    work: str,
) -> _Material:
    try:
        with open(location, "rb") as fh:
            data = fh.read(64 << 20)
    except FileNotFoundError:
        raise ClientConfigError(f"{where}: no such file") from None
    except OSError as exc:
        raise ClientConfigError(f"{where}: cannot read it: {exc.strerror}") from None
    # a PEM file may open with text (openssl's "Bag Attributes"); the stores are binary from their first byte
    is_pem = data[:4] not in (_JKS_MAGIC, _JCEKS_MAGIC) and data[:1] != b"\x30" and b"-----BEGIN " in data
    if declared == "PEM":
        if not is_pem:
            found = "a JKS store" if data[:4] == _JKS_MAGIC else "binary (PKCS12?)"
            raise ClientConfigError(f"{where}: ssl.{kind}.type=PEM but the file is {found}, not PEM")
        if kind == "truststore":
            return _Material(ca=_pem_certs(data, where))
        return _Material(chain=_pem_certs(data, where), key=_pem_key(data, key_password, where))
    if is_pem:
        raise ClientConfigError(
            f"{where}: ssl.{kind}.type={declared} but the file is PEM: set ssl.{kind}.type=PEM"
        )
    if data[:4] == _JCEKS_MAGIC:
        raise ClientConfigError(f"{where}: a JCEKS store, not {declared}: convert it to PKCS12 with keytool")
    if data[:4] == _JKS_MAGIC:
        data, once = _jks_to_pkcs12(location, where, kind, password, key_password, work)
        return _pkcs12(data, where, kind, once, None)
    return _pkcs12(data, where, kind, password, key_password)


def _pkcs12(data: bytes, where: str, kind: str, password: str | None, key_password: str | None) -> _Material:
    from cryptography.hazmat.primitives.serialization import pkcs12

    tries = [password] + ([key_password] if key_password not in (None, password) else [])
    last: Exception | None = None
    for pw in tries:
        try:
            key, cert, more = pkcs12.load_key_and_certificates(data, pw.encode() if pw is not None else None)
        except (ValueError, TypeError) as exc:
            last = exc
            continue
        if kind == "truststore":
            return _Material(ca=[c for c in [cert, *more] if c is not None])
        return _Material(chain=[c for c in [cert, *more] if c is not None], key=key)
    if password is None:
        raise ClientConfigError(f"{where}: cannot open it without ssl.{kind}.password (not a PKCS12 store?)")
    raise ClientConfigError(f"{where}: wrong ssl.{kind}.password, or not a PKCS12/JKS store") from last


def _jks_to_pkcs12(
    location: str, where: str, kind: str, password: str | None, key_password: str | None, work: str
) -> tuple[bytes, str]:
    """The JKS store as PKCS12 bytes (keytool, into ``work``) and the one-time password they are under."""
    keytool = shutil.which("keytool")
    if keytool is None:
        raise ClientConfigError(
            f"{where}: a JKS store, which needs keytool to be read: install a Java runtime, or convert it "
            f"(keytool -importkeystore -srckeystore {location} -destkeystore store.p12 -deststoretype PKCS12) "
            f"and set ssl.{kind}.type=PKCS12"
        )
    if not password:
        raise ClientConfigError(f"{where}: a JKS store cannot be converted without ssl.{kind}.password")
    dest = os.path.join(work, f"{kind}.p12")
    # the passwords reach keytool through its environment (:env), never its command line (ps shows that)
    once = secrets.token_hex(16)
    env = dict(os.environ, KAFKA_OPS_SRC_PASS=password, KAFKA_OPS_KEY_PASS=key_password or password)
    env["KAFKA_OPS_DEST_PASS"] = once
    cmd = [
        keytool, "-importkeystore", "-noprompt",
        "-srckeystore", location, "-srcstoretype", "JKS", "-srcstorepass:env", "KAFKA_OPS_SRC_PASS",
        "-destkeystore", dest, "-deststoretype", "PKCS12", "-deststorepass:env", "KAFKA_OPS_DEST_PASS",
    ]  # fmt: skip
    if kind == "keystore" and key_password and key_password != password:
        cmd += ["-srckeypass:env", "KAFKA_OPS_KEY_PASS", "-destkeypass:env", "KAFKA_OPS_DEST_PASS"]
    try:
        proc = subprocess.run(
            cmd, env=env, capture_output=True, text=True, timeout=KEYTOOL_TIMEOUT_S, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ClientConfigError(f"{where}: keytool could not convert it: {exc}") from None
    if proc.returncode != 0 or not os.path.exists(dest):
        said = (proc.stdout + proc.stderr).strip()
        if "password was incorrect" in said or "password verification failed" in said:
            raise ClientConfigError(f"{where}: wrong ssl.{kind}.password")
        if "Cannot recover key" in said or "Given final block not properly padded" in said:
            raise ClientConfigError(f"{where}: wrong ssl.key.password")
        line = next((ln for ln in said.splitlines() if "error" in ln.lower()), said[:200])
        raise ClientConfigError(f"{where}: keytool could not convert it: {line}")
    with open(dest, "rb") as fh:
        return fh.read(), once


def _pem_blocks(data: bytes) -> list[tuple[str, bytes]]:
    """(label, DER) of each PEM block; the base64 may be on one line, as a properties value's continuation
    lines join it (Kafka's PemStore reads it so too)."""
    out = []
    for label, body in _PEM_BLOCK.findall(data):
        try:
            out.append((label.decode(), base64.b64decode(b"".join(body.split()), validate=True)))
        except ValueError:
            continue
    return out


def _pem_certs(data: bytes, where: str) -> list[Any]:
    from cryptography import x509

    certs = []
    for label, der in _pem_blocks(data):
        if label.endswith("CERTIFICATE"):
            try:
                certs.append(x509.load_der_x509_certificate(der))
            except ValueError as exc:
                raise ClientConfigError(f"{where}: a certificate that cannot be read ({exc})") from None
    return certs


def _pem_key(data: bytes, password: str | None, where: str) -> Any:
    from cryptography.hazmat.primitives.serialization import load_der_private_key

    keys = [der for label, der in _pem_blocks(data) if label.endswith("PRIVATE KEY")]
    if not keys:
        raise ClientConfigError(f"{where}: no PEM private key in it")
    try:
        return load_der_private_key(keys[0], password.encode() if password else None)
    except TypeError:
        what = "the key is encrypted: set ssl.key.password" if not password else "the key is not encrypted"
        raise ClientConfigError(f"{where}: {what}") from None
    except ValueError:
        raise ClientConfigError(f"{where}: wrong ssl.key.password, or not a private key") from None


def _pem(cert: Any) -> str:
    from cryptography.hazmat.primitives.serialization import Encoding

    return str(cert.public_bytes(Encoding.PEM).decode())


def _load(fn: Any, where: str) -> None:
    try:
        fn()
    except FileNotFoundError:
        raise ClientConfigError(f"{where}: no such file") from None
    except (OSError, ssl.SSLError) as exc:
        raise ClientConfigError(
            f"{where}: cannot be loaded ({getattr(exc, 'reason', None) or exc})"
        ) from None


def _load_own(ctx: ssl.SSLContext, own: _Material, work: str) -> None:
    """The client's key and chain into ``ctx``: Python's ssl loads them only from files, written here in the
    private dir, the key encrypted with a one-time password, both removed with the dir by the caller."""
    from cryptography.hazmat.primitives.serialization import BestAvailableEncryption, Encoding, PrivateFormat

    once = secrets.token_hex(16)
    chain_file, key_file = os.path.join(work, "chain.pem"), os.path.join(work, "key.pem")
    _write_private(chain_file, "".join(_pem(c) for c in own.chain).encode())
    _write_private(
        key_file,
        own.key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, BestAvailableEncryption(once.encode())),
    )
    _load(lambda: ctx.load_cert_chain(chain_file, key_file, password=once), "the keystore's key and chain")


def _write_private(path: str, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
