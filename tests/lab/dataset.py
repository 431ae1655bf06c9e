"""The data every lab trial of a version starts from: one prepared broker, stopped cleanly and saved.

Two log dirs (``data-0`` also holds the KRaft metadata log): one topic per producer kind (``smoke-<kind>``),
fault targets ``t00``..``t11`` (idempotent producer, 64 KiB segments: at least 3 rolled segments and an active
one with at least 4 batches) and ``retention`` (records with a CreateTime two days old, then a few current
ones). ``segment.bytes`` 65536 goes as ``internal.segment.bytes`` to 4.x, which refuses less than 1 MiB.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from kafka import TopicPartition

from kafka_lab.broker import LabBroker
from kafka_lab.faults import CLEAN_SHUTDOWN, batches, segment_bases, segment_file
from kafka_lab.jars import LabError
from kafka_lab.produce import (
    Acked,
    TopicSpec,
    create_topics,
    kinds_for,
    lost,
    produce,
    read_back,
    visible_aborted,
    writer_kind,
)
from kafka_lab.versions import parse

SEGMENT_BYTES = 65536
TARGETS = [f"t{i:02d}" for i in range(12)]
RETENTION_TOPIC = "retention"
OLD_MS = 2 * 86_400_000  # the retention topic's old records: two days old
RETENTION_MS = 86_400_000  # the trials' log.retention.ms: one day
DELETE_DELAY_MS = 1000  # log.segment.delete.delay.ms (file.delete.delay.ms of every topic)
TIMINGS: dict[str, dict[str, float]] = {}  # version -> phase -> wall seconds (printed at the session's end)


@dataclass
class Dataset:
    version: str
    saved: Path
    acked: Acked
    placement: dict[str, str]  # "topic-partition" -> log dir name
    markers_after_stop: dict[
        str, str | None
    ]  # log dir name -> .kafka_cleanshutdown's text after the clean stop
    old_ms: int = 0  # CreateTime of the retention topic's old records
    smoke_lost: dict[TopicPartition, list[int]] = field(default_factory=dict)
    smoke_visible_aborted: dict[TopicPartition, list[int]] = field(default_factory=dict)
    smoke_read: int = 0
    smoke_read_errors: dict[str, str] = field(default_factory=dict)
    start_seconds: list[float] = field(default_factory=list)

    @property
    def kraft(self) -> bool:
        return parse(self.version) >= (3, 3)  # the lab runs 1.1-3.2 in ZooKeeper mode

    def targets_in(self, log_dir: str) -> list[str]:
        return [t for t in TARGETS if self.placement.get(f"{t}-0") == log_dir]


def _fill_target(b: LabBroker, topic: str, seed: int) -> Acked:
    """At least 3 rolled segments, and an active segment with at least 4 batches (for corrupt_batch)."""
    kind = writer_kind(b.version)
    acked = produce(b.bootstrap, topic, 200, kind=kind, seed=seed, flush_every=5)
    pdir = next(d / f"{topic}-0" for d in b.log_dirs if (d / f"{topic}-0").exists())
    for i in range(40):
        bases = segment_bases(pdir)
        if len(bases) >= 4 and len(batches(segment_file(pdir, bases[-1], ".log"))) >= 4:
            return acked
        acked.merge(produce(b.bootstrap, topic, 5, kind=kind, seed=seed * 1000 + i))
    raise LabError(f"{topic} did not roll as expected: {segment_bases(pdir)}")


def prepare(version: str, saved: Path) -> Dataset:
    """Write the dataset with a fresh broker, stop it cleanly, save it; then restart it and read it all back."""
    began = time.monotonic()
    with LabBroker(version, log_dirs=2, properties={"log.segment.delete.delay.ms": DELETE_DELAY_MS}) as b:
        b.start()
        specs = [
            TopicSpec(f"smoke-{k}", configs={"segment.bytes": SEGMENT_BYTES}) for k in kinds_for(version)
        ]
        specs += [TopicSpec(t, configs={"segment.bytes": SEGMENT_BYTES}) for t in [*TARGETS, RETENTION_TOPIC]]
        create_topics(b.bootstrap, specs)
        acked = Acked()
        for i, kind in enumerate(kinds_for(version)):
            acked.merge(produce(b.bootstrap, f"smoke-{kind}", 300, kind=kind, seed=i, transactions=3))
        for i, t in enumerate(TARGETS):
            acked.merge(_fill_target(b, t, 100 + i))
        old = int(time.time() * 1000) - OLD_MS
        acked.merge(produce(b.bootstrap, RETENTION_TOPIC, 200, timestamp_ms=old, seed=500, flush_every=10))
        acked.merge(produce(b.bootstrap, RETENTION_TOPIC, 20, seed=501, flush_every=5))
        b.stop()
        markers = {
            d.name: (d / CLEAN_SHUTDOWN).read_text() if (d / CLEAN_SHUTDOWN).exists() else None
            for d in b.log_dirs
        }
        placement = {p.name: d.name for d in b.log_dirs for p in d.iterdir() if p.is_dir()}
        b.save(saved)
        prepared = time.monotonic() - began
        # the smoke check: the same broker, restarted, reads back every acknowledged record
        b.start()
        parts = sorted(set(acked.offsets) | set(acked.aborted))
        read = read_back(b.bootstrap, parts)
        ds = Dataset(version, saved, acked, placement, markers, old)
        ds.smoke_lost = lost(acked, read)
        ds.smoke_visible_aborted = visible_aborted(acked, read)
        ds.smoke_read = read.count
        ds.smoke_read_errors = {str(tp): e for tp, e in read.errors.items()}
        b.stop()
        ds.start_seconds = list(b.start_seconds)
    TIMINGS.setdefault(version, {})["prepare"] = prepared
    TIMINGS[version]["smoke"] = time.monotonic() - began - prepared
    return ds
