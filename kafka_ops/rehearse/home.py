"""Which Kafka and which Java a rehearsal starts when none is given: the host's own, as its unit starts it.

Issue 38: "the host's own installation (its libs/ found from the unit's ExecStart or KAFKA_HOME, its Java from
the unit's environment or PATH)". The order, first found wins:

* Kafka: ``KAFKA_HOME`` of our environment, then of the unit's (Environment=, EnvironmentFile=), then the
  installation the audit reads the version from (``libs/kafka_<scala>-<version>.jar`` next to the unit's
  ExecStart script, else /opt/kafka, /usr/share/java/kafka, /usr/local/kafka: kafka_ops.facts.collect);
* Java: ``JAVA_HOME`` of our environment, then of the unit's, then the unit's ExecStart when it runs java
  itself (``ExecStart=/usr/bin/java ... kafka.Kafka``), then PATH's.

Used by the shipped collector's ``rehearse`` mode (the roles' rehearsal step, where nothing else names them).
"""

from __future__ import annotations

import os
import shutil

from kafka_ops.facts.collect import _version_from_install
from kafka_ops.facts.systemd import UnitFacts, find_unit, load_unit


def _unit(path: str | None) -> UnitFacts | None:
    found = path or find_unit()
    if not found:
        return None
    # an unreadable unit: the defaults below still apply (the audit reports the unit itself)
    try:
        return load_unit(found)
    except Exception:
        return None


def find_kafka_home(unit_path: str | None = None) -> tuple[str, str] | None:
    """The Kafka distribution's root (its libs/ holds the jars) and where it was found, or None."""
    unit = _unit(unit_path)
    if os.environ.get("KAFKA_HOME"):
        return os.environ["KAFKA_HOME"], "$KAFKA_HOME"
    if unit is not None and unit.environment.get("KAFKA_HOME"):
        return unit.environment["KAFKA_HOME"], f"KAFKA_HOME of {unit.path}"
    found = _version_from_install(unit)
    if found is None:
        return None
    libs = os.path.dirname(found[1])
    if os.path.basename(libs) != "libs":
        return None
    return os.path.dirname(libs), f"the installation of {found[1]}"


def kafka_home(unit_path: str | None = None) -> str | None:
    found = find_kafka_home(unit_path)
    return found[0] if found else None


def find_java(unit_path: str | None = None) -> tuple[str, str] | None:
    """The java binary the unit starts the broker with and where it was found, or None."""
    unit = _unit(unit_path)
    if os.environ.get("JAVA_HOME"):
        return os.path.join(os.environ["JAVA_HOME"], "bin", "java"), "$JAVA_HOME"
    if unit is not None and unit.environment.get("JAVA_HOME"):
        return os.path.join(unit.environment["JAVA_HOME"], "bin", "java"), f"JAVA_HOME of {unit.path}"
    for cmd in unit.lists.get("ExecStart", []) if unit else []:
        exe = cmd.lstrip("-@+!:").split()[0] if cmd.strip() else ""
        if os.path.basename(exe) == "java" and os.path.isabs(exe):
            return exe, f"ExecStart of {unit.path}"  # type: ignore[union-attr]
    on_path = shutil.which("java")
    return (on_path, "PATH") if on_path else None


def java(unit_path: str | None = None) -> str | None:
    found = find_java(unit_path)
    return found[0] if found else None
