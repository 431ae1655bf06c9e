"""SYSD001: the stop timeout against what a clean shutdown of this broker needs."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

import kafka_ops.facts.collect as collect
from kafka_ops.audit import run_audit
from kafka_ops.checks import sysd001
from kafka_ops.facts.config import Configs
from kafka_ops.facts.model import AuditOptions, LogDirAggregate

from ..conftest import NOW_MS


@pytest.fixture(autouse=True)
def _only_sysd001(monkeypatch: pytest.MonkeyPatch) -> None:
    """Run only SYSD001: the audit stays fast and independent of the other checks."""
    import kafka_ops.audit.run as audit_module
    from kafka_ops.checks import load_all

    monkeypatch.setattr(
        audit_module, "load_all", lambda: {k: v for k, v in load_all().items() if k == "SYSD001"}
    )


GIB = 1024**3
UNIT = """[Unit]
Description=Apache Kafka broker
[Service]
Type=simple
User=kafka
ExecStart=/opt/kafka/bin/kafka-server-start.sh /etc/kafka/server.properties
LimitNOFILE=100000
{extra}
"""


@pytest.fixture(autouse=True)
def _ram(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(collect, "mem_total_bytes", lambda: 32 * GIB)


def findings(host, unit: str, server_properties: str | None = None) -> list[dict]:  # type: ignore[no-untyped-def, type-arg]
    r = run_audit(
        AuditOptions(
            server_properties=server_properties or host.server_properties, topic_configs=host.topic_configs,
            systemd_unit=unit, broker_state="stopped", now_ms=NOW_MS, kafka_version="3.7.0", host="test",
            broker_user="root",
        )
    )  # fmt: skip
    return [f for f in r["findings"] if f["check"] == "SYSD001"]


def unit_file(tmp_path: Path, extra: str) -> str:
    p = tmp_path / "kops-sysd001-test.service"  # an unusual name: no drop-in of this machine applies
    p.write_text(UNIT.format(extra=extra))
    return str(p)


def test_systemd_default_90s_is_critical_on_kraft(broken_host) -> None:  # type: ignore[no-untyped-def]
    (f,) = findings(broken_host, broken_host.systemd_unit)
    assert f["severity"] == "critical" and f["path"] == broken_host.systemd_unit
    d = f["details"]
    assert d["timeout_stop_s"] == 90 and d["timeout_source"].startswith("systemd default")
    # process.roles=broker,controller: BrokerServer waits up to 5 minutes for controlled shutdown
    assert d["mode"] == "kraft" and d["controlled_shutdown_s"] == 300
    assert 315 <= d["needed_s"] < 316  # 300 + 15 s overhead + well under a second for 2 MiB of logs
    assert d["recommended_timeout_s"] == 420  # ceil(315.x * 1.25 / 30) * 30
    assert d["partitions"] > 0 and d["segments"] > 0 and len(d["log_dirs"]) == 2
    assert "TimeoutStopSec=420s" in f["remediation"] and "daemon-reload" in f["remediation"]


def test_no_finding_with_the_healthy_units_600s(healthy_host) -> None:  # type: ignore[no-untyped-def]
    assert findings(healthy_host, healthy_host.systemd_unit) == []


@pytest.mark.parametrize(
    ("extra", "severity"),
    [
        ("TimeoutStopSec=300", "critical"),  # below the 315 s needed
        ("TimeoutStopSec=6min", "warning"),  # 360 s: enough, but less than the recommended 420 s
        ("TimeoutSec=7min", None),  # TimeoutSec= sets the stop timeout too
        ("TimeoutStopSec=0", None),  # systemd: 0 is infinity
        ("TimeoutStopSec=infinity", None),
        ("TimeoutStopSec=90s\nTimeoutStopSec=", "critical"),  # an empty assignment: back to the default
    ],
)
def test_timeout_forms(tmp_path: Path, healthy_host, extra: str, severity: str | None) -> None:  # type: ignore[no-untyped-def]
    found = findings(healthy_host, unit_file(tmp_path, extra))
    assert [f["severity"] for f in found] == ([severity] if severity else [])


def test_zookeeper_mode_bound_is_retries_times_timeouts(tmp_path: Path, healthy_host) -> None:  # type: ignore[no-untyped-def]
    props = (
        Path(healthy_host.server_properties)
        .read_text()
        .replace("process.roles=broker,controller\n", "zookeeper.connect=zk:2181\n")
    )
    sp = tmp_path / "server.properties"
    sp.write_text(props + "controlled.shutdown.max.retries=2\n")
    (f,) = findings(healthy_host, unit_file(tmp_path, ""), str(sp))
    d = f["details"]
    assert d["mode"] == "zookeeper" and d["controlled_shutdown_s"] == 2 * (30 + 30 + 5)
    assert (
        f["severity"] == "critical" and 145 <= d["needed_s"] < 146
    )  # 2 x 65 s + 15 s, the default 90 s is short
    assert d["recommended_timeout_s"] == 210  # 145.x s * 1.25 = 181.x, rounded up to 30 s


def _host(dirs: list[tuple[int, int, int]], server: dict[str, str], mem: int | None) -> SimpleNamespace:
    log_dirs = [
        SimpleNamespace(
            path=f"/data/{i}",
            scan=SimpleNamespace(exists=True),
            agg=LogDirAggregate(partitions=p, segments=s, log_bytes=b),
        )
        for i, (p, s, b) in enumerate(dirs)
    ]
    return SimpleNamespace(
        configs=Configs(server=server), log_dirs=log_dirs, mem_total=mem, kafka_version=(3, 7, 0)
    )


def test_estimate_scales_with_dirty_bytes_partitions_and_segments() -> None:
    server = {"process.roles": "broker", "num.recovery.threads.per.data.dir": "2"}
    # 2000 partitions, 40000 segments, 4 TiB in one dir; 64 GiB RAM: 20 % may be dirty
    est = sysd001.estimate(_host([(2000, 40000, 4 * 1024 * GIB)], server, 64 * GIB))  # type: ignore[arg-type]
    (d,) = est["log_dirs"]  # type: ignore[misc]
    assert d["flush_bytes"] == int(
        0.2 * 64 * GIB
    )  # the page cache's dirty limit, not the 2000 active segments
    assert d["flush_s"] == round(0.2 * 64 * GIB / (125 * 1024**2), 1)  # ~105 s at 125 MiB/s
    assert d["close_s"] == round((2000 * 0.005 + 40000 * 0.001) / 2, 1)  # 25 s over 2 threads
    assert est["needed_s"] == round(300 + 15 + d["flush_s"] + d["close_s"], 1)
    assert est["recommended_timeout_s"] == -(-(est["needed_s"] * 1.25) // 30) * 30  # type: ignore[operator]
    # two dirs close in parallel: the slower one counts
    est2 = sysd001.estimate(_host([(10, 10, GIB), (2000, 40000, 4 * 1024 * GIB)], server, 64 * GIB))  # type: ignore[arg-type]
    assert est2["log_shutdown_s"] == max(x["seconds"] for x in est2["log_dirs"])  # type: ignore[attr-defined]
    # controlled shutdown disabled: only the logs
    est3 = sysd001.estimate(_host([(1, 1, 1)], {"controlled.shutdown.enable": "false"}, None))  # type: ignore[arg-type]
    assert est3["controlled_shutdown_s"] == 0 and est3["recommended_timeout_s"] == 180
