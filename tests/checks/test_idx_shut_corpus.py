"""IDX001-IDX005 and SHUT002 against real broker data dirs (shared/corpus, audited in place, read-only).

The corpus holds no corrupt index and no torn or CRC-invalid tail (its README), so IDX001-IDX003 and SHUT002
must stay silent, with and without ``--deep``; its index blobs missing from the public snapshot (the 10 MiB
preallocated indexes of active segments) must come out as IDX005 info and nothing else.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kafka_ops.audit import run_audit
from kafka_ops.engine.logdir import scan_log_dir
from kafka_ops.facts.model import AuditOptions

from .index_hosts import NOW_MS

CORPUS = Path(os.environ.get("KAFKA_OPS_CORPUS", Path(__file__).resolve().parents[3] / "shared" / "corpus"))
if not CORPUS.exists():
    CORPUS = Path("/work/shared/corpus")

pytestmark = pytest.mark.skipif(not (CORPUS / "README.md").is_file(), reason=f"no corpus at {CORPUS}")

# log dir -> Kafka versions to audit it as: the README's version, or both ends of its range
LOG_DIRS = {
    "xpxwo100__bullShit/tmp/kafka-logs": ("0.10.1.0",),
    "fabiogjardim__bigdata_docker/data/kafka": ("2.0.0", "2.7.0"),
    "mscaldas2012__kafka-connect-spooldir/kafka-data": ("2.1.1",),
    "tuyen-nnt__kafka_2.13-3.0.0/data/kafka": ("3.0.0",),
    "tuyen-nnt__kafka_2.13-3.0.0/data/kafka-1": ("3.0.0",),
    "tuyen-nnt__kafka_2.13-3.0.0/data/kafka-2": ("3.0.0",),
    "Hachibitz__finsavior-monolith/kafka-logs": ("3.6.0", "3.9.0"),
    "ItumelengMogase__Real-Time-Data-Pipeline-for-Patient-Admissions/kafka-data": ("3.7.0",),
    "Danielowo2000__BigDataTechnologies-Version-2/kafka_2.13-3.5.0/kraft-combined-logs": ("3.5.0",),
    "Danielowo2000__BigDataTechnologies-Version-2/kafka_data": ("3.4.0",),
    "ronem123__rupia-transaction-service/kafka-logs": ("3.7.0",),
    "duongnvt2110__ms-practice/kraft-combined-logs": ("3.9.0",),
}
CASES = [(d, v, deep) for d, vs in LOG_DIRS.items() for v in vs for deep in (False, True)]


@pytest.mark.parametrize(("log_dir", "version", "deep"), CASES)
def test_corpus_has_no_corrupt_index_or_tail_and_missing_indexes_are_info(log_dir, version, deep) -> None:  # type: ignore[no-untyped-def]
    path = str(CORPUS / log_dir)
    report = run_audit(
        AuditOptions(
            log_dirs=[path], broker_state="stopped", now_ms=NOW_MS, kafka_version=version, deep=deep,
            broker_user=None, server_properties=None, topic_configs=None,
        )
    )  # fmt: skip
    by_check: dict[str, list[dict]] = {}
    for f in report["findings"]:
        by_check.setdefault(f["check"], []).append(f)
    for cid in ("IDX001", "IDX002", "IDX003", "SHUT002"):
        assert by_check.get(cid, []) == [], cid

    # every segment whose .index is missing is in an IDX005 info finding of its partition, and only those
    scan = scan_log_dir(path)
    expected = {
        (p.topic, p.partition): [s.base_offset for s in p.segments if s.index is None]
        for p in scan.partitions
        if any(s.index is None for s in p.segments)
    }
    idx005 = by_check.get("IDX005", [])
    assert {f["severity"] for f in idx005} <= {"info"}
    got = {(f["topic"], f["partition"]): f["details"]["missing_index"] for f in idx005}
    assert got == expected
    for f in idx005:
        assert f["details"]["active_only"] is True  # the corpus's missing blobs are active segments' indexes
