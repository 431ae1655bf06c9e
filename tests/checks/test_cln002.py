"""CLN002: versions with KAFKA-6854 / KAFKA-8335 and transaction markers in compacted partitions (one finding)."""

from __future__ import annotations

import pytest

from kafka_ops.audit import run_audit
from kafka_ops.broker.cleaner import affected_by_6854, affected_by_8335, default_message_max_bytes
from kafka_ops.facts.config import parse_version
from kafka_ops.facts.model import AuditOptions

from ..conftest import NOW_MS


@pytest.fixture(autouse=True)
def _only_cln002(monkeypatch: pytest.MonkeyPatch) -> None:
    """Run only CLN002: the audit stays fast and independent of the other checks."""
    import kafka_ops.audit.run as audit_module
    from kafka_ops.checks import load_all

    monkeypatch.setattr(
        audit_module, "load_all", lambda: {k: v for k, v in load_all().items() if k == "CLN002"}
    )


def audit(host, version: str | None) -> dict:  # type: ignore[no-untyped-def, type-arg]
    return run_audit(
        AuditOptions(
            server_properties=host.server_properties, topic_configs=host.topic_configs, broker_state="stopped",
            now_ms=NOW_MS, kafka_version=version, host="test", broker_user="root",
        )
    )  # fmt: skip


@pytest.mark.parametrize(
    ("version", "k6854", "k8335"),
    [
        ("0.10.2.1", False, False), ("0.11.0.2", True, True), ("1.0.1", True, True), ("1.0.2", False, True),
        ("1.1.0", True, True), ("1.1.1", False, True), ("2.0.0", False, True), ("2.2.0", False, True),
        ("2.2.1", False, False), ("2.3.0", False, False), ("3.7.0", False, False), ("2.1", False, True),
    ],
)  # fmt: skip
def test_version_table_matches_the_fix_tags(version: str, k6854: bool, k8335: bool) -> None:
    v = parse_version(version)
    assert affected_by_6854(v) is k6854
    assert affected_by_8335(v) is k8335


def test_message_max_bytes_default_changed_in_2_5() -> None:
    assert default_message_max_bytes((1, 1, 0)) == 1_000_012
    assert default_message_max_bytes((2, 4, 1)) == 1_000_012
    assert default_message_max_bytes((2, 5, 0)) == 1_048_588


def test_markers_on_an_8335_version_give_one_host_finding(healthy_host) -> None:  # type: ignore[no-untyped-def]
    r = audit(healthy_host, "2.2.0")
    found = [f for f in r["findings"] if f["check"] == "CLN002"]
    assert len(found) == 1
    f = found[0]
    assert f["severity"] == "warning" and f["partition"] is None
    d = f["details"]
    assert d["kafka_8335"] is True and d["kafka_6854"] is False
    # __consumer_offsets-7: 20 transactional offset commits, each with its COMMIT marker; `profiles` has none;
    # `payments` has markers but is not compacted
    assert d["partitions"] == 1 and d["control_batches"] == 20
    assert d["partitions_listed"][0]["partition"] == "__consumer_offsets-7"
    assert "KAFKA-8335" in f["message"] and "KAFKA-6854" not in f["message"].split(".")[0]


def test_both_bugs_on_1_1_0(broken_host) -> None:  # type: ignore[no-untyped-def]
    (f,) = [f for f in audit(broken_host, "1.1.0")["findings"] if f["check"] == "CLN002"]
    d = f["details"]
    assert d["kafka_6854"] and d["kafka_8335"]
    assert d["control_batches"] == 20 + 20000 and d["longest_run_bytes"] == 1_560_078


def test_no_finding_on_fixed_versions(healthy_host, broken_host) -> None:  # type: ignore[no-untyped-def]
    for host in (healthy_host, broken_host):
        assert not [f for f in audit(host, "3.7.0")["findings"] if f["check"] == "CLN002"]


def test_skipped_without_a_version(healthy_host) -> None:  # type: ignore[no-untyped-def]
    r = run_audit(
        AuditOptions(
            log_dirs=[], server_properties=healthy_host.server_properties, broker_state="stopped", now_ms=NOW_MS,
            host="test",
        )
    )  # fmt: skip
    if r["kafka_version"] is None:  # no kafka_*.jar on this machine
        assert any(s.get("check") == "CLN002" for s in r["skipped"])
