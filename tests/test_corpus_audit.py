"""The whole audit over real broker data dirs: no crash, and only the findings each dir deserves.

Why each finding is deserved:
* SHUT001 where the dir has no `.kafka_cleanshutdown`: these brokers were committed to git while running, or
  killed (a `docker stop` past its timeout), so a stopped broker starting on them recovers every segment after
  the recovery point; info, as these dirs recover in seconds (the severity follows the estimated recovery). The same dirs lack their active segments' 10 MiB preallocated indexes (the
  corpus README: absent from the public snapshot), which is IDX005 (info): rebuilt at start.
* RET002 (info): the retention forecast lists what time retention deletes: these topics hold old data.
Nothing else is critical or an error: no permission facts survive git (files are ours), the segments are intact.
"""

from __future__ import annotations

import os

import pytest

from kafka_ops.audit import run_audit
from kafka_ops.facts.model import AuditOptions

from .conftest import CORPUS

DIRS = sorted({os.path.dirname(str(p)) for p in CORPUS.rglob("meta.properties")}) if CORPUS.exists() else []
NOW = 1_793_491_200_000  # 2026-11-01


@pytest.mark.skipif(not DIRS, reason="corpus not present")
@pytest.mark.parametrize("log_dir", DIRS, ids=[d.split("corpus/")[-1] for d in DIRS])
def test_corpus_dir_gets_only_the_findings_it_deserves(log_dir: str) -> None:
    opts = AuditOptions(
        log_dirs=[log_dir], broker_state="stopped", now_ms=NOW, expected_mounts={log_dir: "/"}
    )
    report = run_audit(opts)
    assert report["errors"] == []
    clean = os.path.exists(os.path.join(log_dir, ".kafka_cleanshutdown"))
    serious = sorted({f["check"] for f in report["findings"] if f["severity"] in ("critical", "error")})
    assert serious == [], [f["message"] for f in report["findings"] if f["severity"] != "info"]
    shut = [f for f in report["findings"] if f["check"] == "SHUT001"]
    assert len(shut) == (0 if clean else 1)
    for f in shut:
        assert f["severity"] == "info" and f["details"]["recover_estimate_s"] < 60
    for f in report["findings"]:
        if f["severity"] == "warning":
            pytest.fail(f"unexpected warning: {f['check']}: {f['message']}")
        if f["check"] == "IDX005":
            assert not clean  # only brokers that did not stop cleanly left active indexes out of the snapshot
    # a running broker: no marker is normal, nothing is critical
    running = run_audit(
        AuditOptions(log_dirs=[log_dir], broker_state="running", now_ms=NOW, expected_mounts={log_dir: "/"})
    )
    assert not [f for f in running["findings"] if f["severity"] == "critical"]


KRAFT_DIRS = [d for d in DIRS if os.path.isdir(os.path.join(d, "__cluster_metadata-0"))]


@pytest.mark.skipif(not KRAFT_DIRS, reason="corpus not present")
@pytest.mark.parametrize("log_dir", KRAFT_DIRS, ids=[d.split("corpus/")[-1] for d in KRAFT_DIRS])
def test_a_kraft_dir_audited_alone_on_a_kraft_only_release_starts(log_dir: str) -> None:
    # --log-dir alone names no metadata.log.dir or log.dirs: the dir holding __cluster_metadata-0 is the metadata
    # log dir a broker with it as log.dirs uses; before, on 4.x (KRaft only) the plan said "exits, DIR003: the
    # metadata log in a data dir, but the metadata log dir is None", a critical on every healthy KRaft host
    report = run_audit(
        AuditOptions(log_dirs=[log_dir], broker_state="stopped", now_ms=NOW, kafka_version="4.1.1")
    )
    assert report["next_start"]["broker"] == "starts", report["next_start"].get("reason")
    assert not [f for f in report["findings"] if f["severity"] == "critical"]
