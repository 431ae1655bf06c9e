"""What the fleet job sends to its executors: kafka-ops itself, and the run's SSH credentials.

* The package: a zip of ``kafka_ops`` built through the import system (``importlib.resources``, so it also works
  when kafka_ops is itself imported from a zip) and added with ``SparkContext.addPyFile``: executors whose Python
  lacks kafka-ops import it from there. Its stdlib part is all a local-path host needs.
* SSH hosts also need paramiko, whose dependencies (cryptography, bcrypt, PyNaCl) are native code that cannot be
  imported from a zip: executors get them from a packed environment (``--archives env.tar.gz#env
  --executor-python ./env/bin/python``, see docs/fleet.md); a task that cannot import them fails the job with
  :data:`HOW_TO_SHIP`, instead of turning every host into a FLEET finding.
* Credentials: the key files and known_hosts are resolved on the driver (``~`` is the driver's home, relative
  paths are the driver's), a missing one is an error there, and each is sent with ``SparkContext.addFile`` under
  a name unique to its content; tasks open them with ``SparkFiles.get``.

Spark refuses to register two different paths under one name, and serves a file from its path while a task may
fetch it: the copies live in one private dir per run (mode 0700, :func:`run_files`) under names unique to the run,
and that dir is removed when the run ends, however it ends (an error, Ctrl-C): no copy of a key outlives the run.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import shutil
import sys
import tempfile
import uuid
import zipfile
from collections.abc import Iterator
from dataclasses import replace
from importlib import resources
from importlib.abc import Traversable
from typing import Any

from kafka_ops.fleet.inventory import Target

EXECUTOR_ERROR = "kafka-ops executor: "  # the prefix the CLI looks for in a failed job's trace
HOW_TO_SHIP = (
    "give the executors a Python with kafka-ops[spark] installed: pack one (`python -m venv env && "
    "env/bin/pip install 'kafka-ops[spark]' && venv-pack -o env.tar.gz`, or conda-pack) and run with "
    "`--conf spark.archives=env.tar.gz#env --executor-python ./env/bin/python` (see docs/fleet.md)"
)
_DIR: str | None = None  # the current run's private dir (run_files)
_RUN = ""  # a name part unique to the current run: a later run's copy is never taken for this one's
_ADDED: dict[str, set[str]] = {}  # application id -> names added to it


@contextlib.contextmanager
def run_files() -> Iterator[str]:
    """The private dir (mode 0700) of one run's shipped files, removed when the run ends, on an error or a
    KeyboardInterrupt too: the copies of the SSH key files and known_hosts live no longer than the run."""
    global _DIR, _RUN
    outer = (_DIR, _RUN)
    d = tempfile.mkdtemp(prefix="kafka-ops-fleet-ship-")  # mkdtemp: mode 0700, an unpredictable name
    _DIR, _RUN = d, uuid.uuid4().hex[:8]
    try:
        yield d
    finally:
        _DIR, _RUN = outer
        shutil.rmtree(d, ignore_errors=True)


def _private_dir() -> str:
    if _DIR is None:
        raise RuntimeError("kafka-ops: files are shipped only inside shipping.run_files()")
    return _DIR


def _zip_tree(z: zipfile.ZipFile, node: Traversable, rel: str) -> None:
    if node.is_file():
        info = zipfile.ZipInfo(rel, date_time=(1980, 1, 1, 0, 0, 0))  # deterministic: same sources, same zip
        info.compress_type = zipfile.ZIP_DEFLATED
        z.writestr(info, node.read_bytes())
        return
    for child in sorted(node.iterdir(), key=lambda c: c.name):
        if child.name != "__pycache__" and not child.name.endswith((".pyc", ".pyo")):
            _zip_tree(z, child, f"{rel}/{child.name}")


def package_zip() -> bytes:
    """The ``kafka_ops`` package as a zip, from the import system (works when it is imported from a zip)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        _zip_tree(z, resources.files("kafka_ops"), "kafka_ops")
    return buf.getvalue()


def _store(name: str, data: bytes, mode: int = 0o600) -> str:
    digest = hashlib.sha256(data).hexdigest()[:16]
    path = os.path.join(_private_dir(), f"{digest}-{_RUN}-{name}")
    if not os.path.exists(path):
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
    return path


def _add(sc: Any, path: str, py: bool = False) -> str:
    """Add ``path`` to the session once; the name executors pass to ``SparkFiles.get``."""
    name = os.path.basename(path)
    added = _ADDED.setdefault(sc.applicationId, set())
    if name not in added:
        sc.addPyFile(path) if py else sc.addFile(path)
        added.add(name)
    return name


def ship_package(sc: Any) -> str:
    """Add the kafka_ops zip to the session's Python path (executors and their tasks); its name."""
    from kafka_ops import __version__

    return _add(sc, _store(f"kafka_ops-{__version__}.zip", package_zip(), 0o644), py=True)


def _read(path: str, what: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        raise ValueError(f"{path}: no such file ({what})") from None
    except IsADirectoryError:
        raise ValueError(f"{path}: a directory, not a file ({what})") from None
    except OSError as exc:
        raise ValueError(f"{path}: cannot read it ({what}): {exc.strerror}") from None


def resolve_credentials(targets: list[Target], known_hosts: str | None) -> tuple[list[Target], str | None]:
    """Key files and known_hosts as absolute paths on the driver (``~`` the driver's home), checked readable:
    a missing known_hosts would refuse every host (FLEET002), a missing key would fail every login (FLEET003),
    so either is bad input (ValueError, one line). known_hosts is None when no host is reached over SSH."""
    remote = [t for t in targets if not t.local]
    if not remote:
        return targets, None
    kh = os.path.abspath(os.path.expanduser(known_hosts or "~/.ssh/known_hosts"))
    _read(kh, "--known-hosts: the host keys SSH hosts are verified against")
    out = []
    for t in targets:
        if t.key_file and not t.local:
            key = os.path.abspath(os.path.expanduser(t.key_file))
            _read(key, f"the SSH key of host {t.name}")
            t = replace(t, key_file=key)
        out.append(t)
    return out, kh


def ship_credentials(sc: Any, targets: list[Target], known_hosts: str | None) -> dict[str, str]:
    """Send known_hosts and the key files (resolved by :func:`resolve_credentials`) with the job: driver path ->
    the name a task passes to ``SparkFiles.get``."""
    paths = sorted({p for p in [known_hosts, *(t.key_file for t in targets if not t.local)] if p})
    return {p: _add(sc, _store(os.path.basename(p), _read(p, "SSH credentials"))) for p in paths}


def executor_file(path: str | None, files: dict[str, str] | None) -> str | None:
    """On an executor: the local copy of a file the driver shipped (else the path as given)."""
    if path and files and path in files:
        from pyspark import SparkFiles

        return SparkFiles.get(files[path])
    return path


def need_paramiko() -> None:
    """On an executor about to reach SSH hosts: paramiko and its native dependencies, or a job-failing error."""
    try:
        import paramiko  # noqa: F401
    except ImportError as exc:
        raise RuntimeError(
            f"{EXECUTOR_ERROR}SSH hosts need paramiko on the executors, but {sys.executable} (Python "
            f"{sys.version.split()[0]}) cannot import it ({exc}): {HOW_TO_SHIP}"
        ) from exc
