"""SYSD004: heap + direct memory against MemoryMax= and the host's RAM with room for the page cache."""

from __future__ import annotations

from pathlib import Path

import pytest

import kafka_ops.facts.collect as collect
from kafka_ops.audit import run_audit
from kafka_ops.facts.model import AuditOptions

from ..conftest import NOW_MS


@pytest.fixture(autouse=True)
def _only_sysd004(monkeypatch: pytest.MonkeyPatch) -> None:
    """Run only SYSD004: the audit stays fast and independent of the other checks."""
    import kafka_ops.audit.run as audit_module
    from kafka_ops.checks import load_all

    monkeypatch.setattr(
        audit_module, "load_all", lambda: {k: v for k, v in load_all().items() if k == "SYSD004"}
    )


GIB = 1024**3
MIB = 1024**2
UNIT = """[Service]
Type=simple
User=kafka
ExecStart=/opt/kafka/bin/kafka-server-start.sh /etc/kafka/server.properties
TimeoutStopSec=600
LimitNOFILE=100000
{extra}
"""


def findings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, extra: str, ram: int, unit: str | None = None
) -> list[dict]:  # type: ignore[type-arg]
    monkeypatch.setattr(collect, "mem_total_bytes", lambda: ram)
    if unit is None:
        p = tmp_path / "kops-sysd004-test.service"
        p.write_text(UNIT.format(extra=extra))
        unit = str(p)
    sp = tmp_path / "server.properties"
    sp.write_text("process.roles=broker\n")
    r = run_audit(
        AuditOptions(
            server_properties=str(sp), systemd_unit=unit, broker_state="stopped", now_ms=NOW_MS,
            kafka_version="3.7.0", host="test",
        )
    )  # fmt: skip
    return [f for f in r["findings"] if f["check"] == "SYSD004"]


def footprint(heap: int, direct: int) -> int:
    return heap + direct + 512 * MIB + int(0.10 * heap)


def test_seed_002_a_jvm_larger_than_the_host(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, healthy_host
) -> None:  # type: ignore[no-untyped-def]
    # the simulated unit: KAFKA_HEAP_OPTS=-Xms4g -Xmx4g, direct memory unset (as large as the heap)
    (f,) = findings(tmp_path, monkeypatch, "", 8 * GIB, unit=healthy_host.systemd_unit)
    d = f["details"]
    assert f["severity"] == "warning"
    assert d["heap_bytes"] == 4 * GIB and d["direct_bytes"] == 4 * GIB
    assert d["footprint_bytes"] == footprint(4 * GIB, 4 * GIB) and d["mem_total"] == 8 * GIB
    assert "OOM killer" in f["message"]


def test_memory_max_below_the_footprint(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (f,) = findings(tmp_path, monkeypatch, 'Environment="KAFKA_HEAP_OPTS=-Xmx4g"\nMemoryMax=6G', 64 * GIB)
    d = f["details"]
    assert d["limit_bytes"] == 6 * GIB and d["limit_source"] == "MemoryMax=6G"
    assert d["footprint_bytes"] == footprint(4 * GIB, 4 * GIB) > 6 * GIB
    assert "inside the cgroup" in f["message"]


def test_percentage_and_cgroup_v1_limits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (f,) = findings(tmp_path, monkeypatch, 'Environment="KAFKA_HEAP_OPTS=-Xmx4g"\nMemoryMax=25%', 32 * GIB)
    assert f["details"]["limit_bytes"] == 8 * GIB
    (f,) = findings(tmp_path, monkeypatch, 'Environment="KAFKA_HEAP_OPTS=-Xmx4g"\nMemoryLimit=5G', 64 * GIB)
    assert f["details"]["limit_source"] == "MemoryLimit=5G"


def test_too_little_page_cache_left(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # 10 GiB heap, 1 GiB direct: 12.5 GiB of 16 GiB leaves less than a quarter to the page cache
    (f,) = findings(
        tmp_path, monkeypatch,
        'Environment="KAFKA_HEAP_OPTS=-Xmx10g" "KAFKA_OPTS=-XX:MaxDirectMemorySize=1g"', 16 * GIB,
    )  # fmt: skip
    assert f["details"]["page_cache_room_bytes"] == 4 * GIB and "page cache" in f["message"]


@pytest.mark.parametrize(
    ("extra", "ram"),
    [
        (
            'Environment="KAFKA_HEAP_OPTS=-Xmx4g" "KAFKA_OPTS=-XX:MaxDirectMemorySize=1g"\nMemoryMax=6G',
            64 * GIB,
        ),
        ("", 8 * GIB),  # kafka-server-start.sh's default -Xmx1G: 1 + 1 + 0.6 GiB
        ('Environment="KAFKA_HEAP_OPTS=-Xmx6g"\nMemoryMax=infinity', 32 * GIB),
    ],
)
def test_fitting_memory_gives_no_finding(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, extra: str, ram: int
) -> None:
    assert findings(tmp_path, monkeypatch, extra, ram) == []


def test_no_finding_on_a_healthy_host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, healthy_host) -> None:  # type: ignore[no-untyped-def]
    assert findings(tmp_path, monkeypatch, "", 32 * GIB, unit=healthy_host.systemd_unit) == []
