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


def kafka_home(unit_path: str | None = None) -> str | None:
    """The Kafka distribution's root (its libs/ holds the jars), or None when nothing names one."""
    unit = _unit(unit_path)
    for home in (os.environ.get("KAFKA_HOME"), unit.environment.get("KAFKA_HOME") if unit else None):
        if home:
            return home
    found = _version_from_install(unit)
    if found is None:
        return None
    libs = os.path.dirname(found[1])
    return os.path.dirname(libs) if os.path.basename(libs) == "libs" else None


def java(unit_path: str | None = None) -> str | None:
    """The java binary the unit starts the broker with, or None."""
    unit = _unit(unit_path)
    for home in (os.environ.get("JAVA_HOME"), unit.environment.get("JAVA_HOME") if unit else None):
        if home:
            return os.path.join(home, "bin", "java")
    for cmd in unit.lists.get("ExecStart", []) if unit else []:
        exe = cmd.lstrip("-@+!:").split()[0] if cmd.strip() else ""
        if os.path.basename(exe) == "java" and os.path.isabs(exe):
            return exe
    return shutil.which("java")
