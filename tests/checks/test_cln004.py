"""CLN004: a compacted partition eligible for cleaning for more than a day, its checkpoint far behind."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from kafka_ops.audit import run_audit
from kafka_ops.engine import checkpoints as ckpt
from kafka_ops.facts.model import AuditOptions
from kafka_ops.simulator.host import HostSpec, SimulatedHost, simulate_host

from ..conftest import NOW_MS


@pytest.fixture(autouse=True)
def _only_cln004(monkeypatch: pytest.MonkeyPatch) -> None:
    """Run only CLN004: the audit stays fast and independent of the other checks."""
    import kafka_ops.audit.run as audit_module
    from kafka_ops.checks import load_all

    monkeypatch.setattr(
        audit_module, "load_all", lambda: {k: v for k, v in load_all().items() if k == "CLN004"}
    )


def findings(host: SimulatedHost, logs: list[str] | None = None) -> list[dict]:  # type: ignore[type-arg]
    r = run_audit(
        AuditOptions(
            server_properties=host.server_properties, topic_configs=host.topic_configs, broker_state="running",
            now_ms=NOW_MS, kafka_version="3.7.0", host="test", broker_user="root", logs=logs or [],
        )
    )  # fmt: skip
    return [f for f in r["findings"] if f["check"] == "CLN004"]


def rewind_cleaner_checkpoint(host: SimulatedHost, partition: str, offset: int) -> None:
    log_dir = os.path.dirname(host.partitions[partition])
    path = os.path.join(log_dir, ckpt.CLEANER)
    entries = ckpt.read_offset_checkpoint(path)
    topic, p = partition.rsplit("-", 1)
    entries[(topic, int(p))] = offset
    Path(path).write_text(ckpt.encode_offset_checkpoint(entries))


def test_checkpoint_stuck_at_the_log_start_is_reported(tmp_path: Path) -> None:
    host = simulate_host(str(tmp_path), HostSpec(now_ms=NOW_MS))
    rewind_cleaner_checkpoint(host, "profiles-0", 0)  # the simulator checkpoints the active segment's base
    (f,) = findings(host)
    assert f["severity"] == "warning" and f["topic"] == "profiles" and f["partition"] == 0
    d = f["details"]
    # profiles-0: segments 0, 70, 140, 210 and the active 280; log end 300
    assert d["first_dirty_offset"] == 0 and d["active_segment"] == 280 and d["log_end_offset"] == 300
    assert d["lag_offsets"] == 280 and d["dirty_segments"] == 4 and d["clean_bytes"] == 0
    assert d["dirty_ratio"] == 1.0 and d["lag_ms"] > d["grace_ms"] == 24 * 3600 * 1000
    seg0_mtime = (
        os.stat(os.path.join(host.partitions["profiles-0"], "00000000000000000000.log")).st_mtime_ns // 10**6
    )
    assert d["eligible_since_ms"] == seg0_mtime and d["lag_ms"] == NOW_MS - seg0_mtime
    assert "cleaner thread died" in f["message"]


def test_uncleanable_log_line_is_named_as_the_cause(tmp_path: Path) -> None:
    host = simulate_host(str(tmp_path), HostSpec(now_ms=NOW_MS))
    rewind_cleaner_checkpoint(host, "profiles-0", 0)
    log = tmp_path / "log-cleaner.log"
    log.write_text(
        "[2026-11-01 10:00:00,000] WARN [kafka-log-cleaner-thread-0]: Unexpected exception thrown when cleaning "
        "log Log(dir=/d/profiles-0, topic=profiles, partition=0). Marking its partition (profiles-0) as "
        "uncleanable (kafka.log.LogCleaner)\n"
    )
    (f,) = findings(host, [str(log)])
    assert f["details"]["marked_uncleanable"] is True and "marked it uncleanable" in f["message"]


def test_min_compaction_lag_defers_eligibility(tmp_path: Path) -> None:
    host = simulate_host(str(tmp_path), HostSpec(now_ms=NOW_MS))
    rewind_cleaner_checkpoint(host, "profiles-0", 0)
    cfg = json.loads(Path(host.topic_configs).read_text())
    cfg["profiles"]["min.compaction.lag.ms"] = str(30 * 24 * 3600 * 1000)
    Path(host.topic_configs).write_text(json.dumps(cfg))
    assert findings(host) == []


def test_no_finding_on_a_healthy_host(healthy_host) -> None:  # type: ignore[no-untyped-def]
    # the checkpoint sits at the active segment: nothing cleanable is dirty
    assert findings(healthy_host) == []
