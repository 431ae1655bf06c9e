"""SYSD003: LimitNOFILE against one descriptor per segment, per .txnindex, the connections and the JVM."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafka_ops.audit import run_audit
from kafka_ops.checks.sysd003 import parse_limit
from kafka_ops.facts.model import AuditOptions

from ..conftest import NOW_MS


@pytest.fixture(autouse=True)
def _only_sysd003(monkeypatch: pytest.MonkeyPatch) -> None:
    """Run only SYSD003: the audit stays fast and independent of the other checks."""
    import kafka_ops.audit.run as audit_module
    from kafka_ops.checks import load_all

    monkeypatch.setattr(
        audit_module, "load_all", lambda: {k: v for k, v in load_all().items() if k == "SYSD003"}
    )


UNIT = """[Service]
Type=simple
User=kafka
Environment="KAFKA_HEAP_OPTS=-Xms1g -Xmx1g"
ExecStart=/opt/kafka/bin/kafka-server-start.sh /etc/kafka/server.properties
TimeoutStopSec=600
{extra}
"""


def findings(host, tmp_path: Path, extra: str, server_extra: str = "") -> list[dict]:  # type: ignore[no-untyped-def, type-arg]
    unit = tmp_path / "kops-sysd003-test.service"
    unit.write_text(UNIT.format(extra=extra))
    sp = tmp_path / "server.properties"
    sp.write_text(Path(host.server_properties).read_text() + server_extra)
    r = run_audit(
        AuditOptions(
            server_properties=str(sp), topic_configs=host.topic_configs, systemd_unit=str(unit),
            broker_state="stopped", now_ms=NOW_MS, kafka_version="3.7.0", host="test", broker_user="root",
        )
    )  # fmt: skip
    return [f for f in r["findings"] if f["check"] == "SYSD003"]


def test_parse_limit() -> None:
    assert parse_limit("4096") == (4096, 4096)
    assert parse_limit("1024:524288") == (1024, 524288)
    assert parse_limit("infinity") == (1_048_576, 1_048_576)
    with pytest.raises(ValueError):
        parse_limit("lots")


def test_low_limit_is_a_warning_with_the_count(tmp_path: Path, healthy_host) -> None:  # type: ignore[no-untyped-def]
    (f,) = findings(healthy_host, tmp_path, "LimitNOFILE=4096")
    assert f["severity"] == "warning"
    d = f["details"]
    segments = sum(1 for p in Path(healthy_host.root, "data").glob("kafka-*/*/*.log"))
    txn = sum(1 for p in Path(healthy_host.root, "data").glob("kafka-*/*/*.txnindex"))
    assert (
        d["segments"] == segments and d["txnindex_files"] == txn and txn > 0
    )  # `payments` aborts transactions
    assert d["required"] == segments + txn + 10_000 + 1_000 and d["limit"] == 4096
    assert d["recommended_nofile"] == 100_000
    assert "LimitNOFILE=100000" in f["remediation"]


def test_unset_limit_depends_on_systemd_and_the_jvm_raises_it(tmp_path: Path, healthy_host) -> None:  # type: ignore[no-untyped-def]
    (f,) = findings(healthy_host, tmp_path, "")
    d = f["details"]
    assert d["limit_on_old_systemd"] == 4096 and d["limit_on_new_systemd"] == 524_288
    assert "systemd >= 240" in f["message"]


def test_hard_limit_counts_because_hotspot_raises_the_soft_one(tmp_path: Path, healthy_host) -> None:  # type: ignore[no-untyped-def]
    assert findings(healthy_host, tmp_path, "LimitNOFILE=1024:200000") == []
    (f,) = findings(
        healthy_host, tmp_path, 'LimitNOFILE=1024:200000\nEnvironment="KAFKA_OPTS=-XX:-MaxFDLimit"'
    )
    assert f["details"]["limit"] == 1024 and f["details"]["jvm_raises_soft_limit"] is False


def test_max_connections_replaces_the_allowance(tmp_path: Path, healthy_host) -> None:  # type: ignore[no-untyped-def]
    (f,) = findings(healthy_host, tmp_path, "LimitNOFILE=100000", "max.connections=150000\n")
    d = f["details"]
    assert d["connections"] == 150_000 and d["connections_source"] == "max.connections"
    assert d["recommended_nofile"] == -(-2 * d["required"] // 10_000) * 10_000


def test_no_finding_on_a_healthy_host(healthy_host) -> None:  # type: ignore[no-untyped-def]
    r = run_audit(
        AuditOptions(
            server_properties=healthy_host.server_properties, systemd_unit=healthy_host.systemd_unit,
            broker_state="stopped", now_ms=NOW_MS, kafka_version="3.7.0", host="test", broker_user="root",
        )
    )  # fmt: skip
    assert not [f for f in r["findings"] if f["check"] == "SYSD003"]
