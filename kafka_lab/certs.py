"""A small PKI for TLS tests: a CA, a broker certificate for 127.0.0.1/localhost, a client certificate, and the
stores Kafka's tools take: JKS and PKCS12 made by keytool (as cp-ansible's are), PEM files.

Keys and certificates are made with the ``cryptography`` package; keytool (a Java runtime) makes the JKS stores
and the truststores, so they are what Java writes, not what a Python library thinks Java writes.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Pki:
    dir: Path
    password: str  # every store's password and the client key's password
    ca_pem: Path  # the CA certificate (a PEM truststore)
    trust_jks: Path
    trust_p12: Path
    server_p12: Path  # the broker's keystore (key + chain), PKCS12
    client_pem: Path  # the client's key (PKCS8, encrypted with ``password``) and chain, one PEM file
    client_p12: Path
    client_jks: Path
    client_key_pem: str  # the same key and chain as inline PEM texts (KIP-651)
    client_chain_pem: str


def _name(cn: str) -> Any:
    from cryptography import x509
    from cryptography.x509.oid import NameOID

    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def _cert(
    subject: str,
    key: Any,
    issuer: str,
    issuer_key: Any,
    *,
    ca: bool,
    san: bool = False,
    addresses: tuple[str, ...] = (),
) -> Any:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes

    now = datetime.datetime.now(datetime.UTC)
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(subject))
        .issuer_name(_name(issuer))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=30))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if san:
        builder = builder.add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
                + [x509.IPAddress(ipaddress.ip_address(a)) for a in addresses]
            ),
            critical=False,
        )
    return builder.sign(issuer_key, hashes.SHA256())


def keytool(*args: str, password: str) -> None:
    """Run keytool with the store passwords from its environment (``:env``)."""
    tool = shutil.which("keytool")
    if tool is None:
        raise RuntimeError("keytool is not on PATH (a Java runtime)")
    env = dict(os.environ, LAB_STOREPASS=password)
    proc = subprocess.run([tool, *args], env=env, capture_output=True, text=True, timeout=120, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"keytool {args[0]} failed: {proc.stdout}{proc.stderr}")


def make_pki(directory: Path, password: str = "lab-secret", addresses: tuple[str, ...] = ()) -> Pki:
    """The stores in ``directory``; the broker certificate names localhost, 127.0.0.1 and ``addresses`` (more IP
    addresses its clients reach it by, as the Molecule hosts' 10.88.77.x)."""
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.serialization import (
        BestAvailableEncryption,
        Encoding,
        PrivateFormat,
        pkcs12,
    )

    directory.mkdir(parents=True, exist_ok=True)
    ca_key, server_key, client_key = (ec.generate_private_key(ec.SECP256R1()) for _ in range(3))
    ca = _cert("kafka-ops lab CA", ca_key, "kafka-ops lab CA", ca_key, ca=True)
    server = _cert("broker", server_key, "kafka-ops lab CA", ca_key, ca=False, san=True, addresses=addresses)
    client = _cert("kafka-ops", client_key, "kafka-ops lab CA", ca_key, ca=False)
    pw = password.encode()
    p = Pki(
        directory, password, directory / "ca.pem", directory / "trust.jks", directory / "trust.p12",
        directory / "server.p12", directory / "client.pem", directory / "client.p12", directory / "client.jks",
        client_key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, BestAvailableEncryption(pw)).decode(),
        (client.public_bytes(Encoding.PEM) + ca.public_bytes(Encoding.PEM)).decode(),
    )  # fmt: skip
    p.ca_pem.write_bytes(ca.public_bytes(Encoding.PEM))
    p.server_p12.write_bytes(
        pkcs12.serialize_key_and_certificates(
            b"broker", server_key, server, [ca], BestAvailableEncryption(pw)
        )
    )
    p.client_p12.write_bytes(
        pkcs12.serialize_key_and_certificates(
            b"client", client_key, client, [ca], BestAvailableEncryption(pw)
        )
    )
    p.client_pem.write_text(p.client_key_pem + p.client_chain_pem)
    for store, kind in ((p.trust_jks, "JKS"), (p.trust_p12, "PKCS12")):
        keytool(
            "-importcert", "-noprompt", "-alias", "ca", "-file", str(p.ca_pem), "-keystore", str(store),
            "-storetype", kind, "-storepass:env", "LAB_STOREPASS", password=password,
        )  # fmt: skip
    keytool(
        "-importkeystore", "-noprompt", "-srckeystore", str(p.client_p12), "-srcstoretype", "PKCS12",
        "-srcstorepass:env", "LAB_STOREPASS", "-destkeystore", str(p.client_jks), "-deststoretype", "JKS",
        "-deststorepass:env", "LAB_STOREPASS", password=password,
    )  # fmt: skip
    return p
