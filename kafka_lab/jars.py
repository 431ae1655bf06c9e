"""Broker jars of one Kafka release, fetched from Maven Central with Maven and cached.

One pom per version family (../shared/reference/kafka-lab.md §1): ``kafka_2.13:<v>`` with its runtime
dependencies holds the broker, the tools up to 4.2, ZooKeeper (up to 3.9) and the clients, but no logging
backend, which each family adds. ``kafka-tools`` is added for 4.3+, where ``DumpLogSegments`` moved there.
The jars land in ``<cache>/<version>/`` (default ``/var/cache/kafka-ops/kafka``, or ``$KAFKA_OPS_LAB_CACHE``);
a second call finds them and runs no Maven.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from kafka_lab.versions import parse

DEFAULT_CACHE = Path("/var/cache/kafka-ops/kafka")
_DEPENDENCY_PLUGIN = "org.apache.maven.plugins:maven-dependency-plugin:3.6.1:copy-dependencies"
_DONE = ".complete"


class LabError(RuntimeError):
    """The lab could not fetch or run a broker (one line, naming what failed)."""


@dataclass(frozen=True)
class Artifact:
    group: str
    artifact: str
    version: str


def cache_root() -> Path:
    return Path(os.environ.get("KAFKA_OPS_LAB_CACHE", DEFAULT_CACHE))


def artifacts(version: str) -> list[Artifact]:
    """What makes a runnable broker of ``version``, with its logging backend and tools."""
    v = parse(version)
    # Scala 2.13 builds start at 2.4.0; 1.1-2.3 exist as kafka_2.11/kafka_2.12 only (2.12: the newer Scala)
    out = [Artifact("org.apache.kafka", "kafka_2.13" if v >= (2, 4) else "kafka_2.12", version)]
    if v < (1, 0):
        # 0.10.2 shipped slf4j 1.7.21 with log4j 1.2.17. Its first start against an empty ZooKeeper makes the
        # cluster id with javax.xml.bind.DatatypeConverter (CoreUtils.generateUuidAsBase64), which Java 11
        # removed: a real 0.10.2.2 broker on Java 17 exits "ClassNotFoundException: javax.xml.bind.
        # DatatypeConverter" there without jaxb-api on its class path (seen here; with it, it runs)
        out.append(Artifact("org.slf4j", "slf4j-log4j12", "1.7.21"))
        out.append(Artifact("javax.xml.bind", "jaxb-api", "2.3.1"))
    elif v < (2, 0):
        # 1.1.x shipped slf4j 1.7.25 with log4j 1.2.17
        out.append(Artifact("org.slf4j", "slf4j-log4j12", "1.7.25"))
    elif v < (3, 0):
        # 2.x: slf4j-log4j12 brings log4j 1.2.17, the backend 2.x shipped with
        out.append(Artifact("org.slf4j", "slf4j-log4j12", "1.7.30"))
    elif v < (4, 0):
        out += [
            Artifact("org.slf4j", "slf4j-reload4j", "1.7.36"),
            Artifact("ch.qos.reload4j", "reload4j", "1.2.25"),
        ]
    else:
        log4j2 = "2.24.3" if v < (4, 2) else "2.25.3"
        out += [
            Artifact("org.apache.logging.log4j", "log4j-api", log4j2),
            Artifact("org.apache.logging.log4j", "log4j-core", log4j2),
            Artifact("org.apache.logging.log4j", "log4j-slf4j-impl", log4j2),
        ]
    if v >= (4, 3):
        # DumpLogSegments moved from core (kafka.tools) to org.apache.kafka.tools in 4.3
        out.append(Artifact("org.apache.kafka", "kafka-tools", version))
    return out


def pom(version: str) -> str:
    deps = "\n".join(
        f"    <dependency><groupId>{a.group}</groupId><artifactId>{a.artifact}</artifactId>"
        f"<version>{a.version}</version></dependency>"
        for a in artifacts(version)
    )
    return f"""<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>kafka-ops.lab</groupId><artifactId>broker</artifactId><version>{version}</version>
  <packaging>pom</packaging>
  <dependencies>
{deps}
  </dependencies>
</project>
"""


def jar_dir(version: str, cache: Path | None = None) -> Path:
    """The folder holding every jar of ``version``, fetched with Maven on first use."""
    parse(version)  # refuse a non-version before touching the cache
    return fetch_jars(cache or cache_root(), version, pom(version), f"Kafka {version}", LabError)


def fetch_jars(root: Path, name: str, pom_text: str, what: str, error: type[Exception] = LabError) -> Path:
    """``root/name``: the runtime jars of a pom, copied there by Maven once (a lock, then a completion marker:
    two workers never fetch the same set twice, and a half-copied folder is never used). ``error`` is raised
    with one line when Maven is missing or fails."""
    target = root / name
    if (target / _DONE).exists():
        return target
    if shutil.which("mvn") is None:
        raise error(f"mvn is not on PATH: install Maven to fetch {what} (.ci/setup-lab.sh does)")
    root.mkdir(parents=True, exist_ok=True)
    with open(root / f".{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (target / _DONE).exists():
            return target
        work = root / f".{name}.tmp"
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir()
        (work / "pom.xml").write_text(pom_text)
        proc = subprocess.run(
            ["mvn", "-B", "-q", "-f", str(work / "pom.xml"), _DEPENDENCY_PLUGIN, "-DincludeScope=runtime",
             f"-DoutputDirectory={work / 'jars'}"],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        if proc.returncode != 0:
            tail = (proc.stdout + proc.stderr).strip().splitlines()[-3:]
            raise error(f"Maven could not fetch {what}: {' / '.join(tail)}")
        shutil.rmtree(target, ignore_errors=True)
        (work / "jars").rename(target)
        shutil.copy(work / "pom.xml", target / "pom.xml")
        (target / _DONE).write_text(name + "\n")
        shutil.rmtree(work, ignore_errors=True)
    return target


def classpath(version: str, cache: Path | None = None) -> str:
    """A ``java -cp`` argument with every jar of ``version``."""
    return str(jar_dir(version, cache) / "*")
