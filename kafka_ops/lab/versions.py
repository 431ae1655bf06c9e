"""The Kafka releases the lab runs, and why others are not run here."""

from __future__ import annotations

import re

Version = tuple[int, int, int]

# One release per behaviour family (kafka-lab.md §1-2): 2.8 in ZooKeeper mode (the last release where it is the
# usual mode; KRaft there is a preview), a 3.3-3.6 KRaft release, 3.7 (JSON clean-shutdown marker), 3.9 (the last
# with ZooKeeper) and the newest 4.x on Maven Central (Java classes in storage).
LAB_VERSIONS: tuple[str, ...] = ("2.8.2", "3.5.2", "3.7.2", "3.9.1", "4.3.1")

# Releases that cannot run here, and why: the model follows their source at the tag (kafka_ops.broker.versions).
NOT_RUN: dict[str, str] = {
    "2.0-2.3": "their ZooKeeper 3.4.13 client cannot connect on Java 14+ (it parses InetSocketAddress.toString())",
    "1.x": "no kafka_2.13 artifact, and ZooKeeper 3.4 on Java 17 is unverified",
}

_VERSION = re.compile(r"^(\d+)\.(\d+)(?:\.(\d+))?$")


def parse(text: str) -> Version:
    """``"3.7.2"`` -> ``(3, 7, 2)``; a ValueError naming the text otherwise."""
    m = _VERSION.match(text.strip())
    if not m:
        raise ValueError(f"not a Kafka version: {text!r} (expected e.g. 3.7.2)")
    return int(m[1]), int(m[2]), int(m[3] or 0)
