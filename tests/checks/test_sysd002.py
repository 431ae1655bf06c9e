"""SYSD002: stop paths that skip the graceful shutdown (KillSignal, KillMode, ExecStop, -Xrs)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafka_ops.audit import run_audit
from kafka_ops.facts.model import AuditOptions

from ..conftest import NOW_MS


@pytest.fixture(autouse=True)
def _only_sysd002(monkeypatch: pytest.MonkeyPatch) -> None:
    """Run only SYSD002: the audit stays fast and independent of the other checks."""
    import kafka_ops.audit.run as audit_module
    from kafka_ops.checks import load_all

    monkeypatch.setattr(
        audit_module, "load_all", lambda: {k: v for k, v in load_all().items() if k == "SYSD002"}
    )


BASE = """[Service]
Type=simple
User=kafka
Environment="KAFKA_HEAP_OPTS=-Xms1g -Xmx1g"
ExecStart=/opt/kafka/bin/kafka-server-start.sh /etc/kafka/server.properties
TimeoutStopSec=600
LimitNOFILE=100000
SuccessExitStatus=143
"""


def findings(tmp_path: Path, extra: str) -> list[dict]:  # type: ignore[type-arg]
    unit = tmp_path / "kops-sysd002-test.service"
    unit.write_text(BASE + extra + "\n")
    sp = tmp_path / "server.properties"
    sp.write_text("process.roles=broker\n")
    r = run_audit(
        AuditOptions(
            server_properties=str(sp), systemd_unit=str(unit), broker_state="stopped", now_ms=NOW_MS,
            kafka_version="3.7.0", host="test",
        )
    )  # fmt: skip
    return [f for f in r["findings"] if f["check"] == "SYSD002"]


@pytest.mark.parametrize(
    ("extra", "severity", "setting", "dropin"),
    [
        ("KillSignal=SIGKILL", "warning", "KillSignal", {"KillSignal": "SIGTERM"}),
        ("KillSignal=9", "warning", "KillSignal", {"KillSignal": "SIGTERM"}),
        ("KillSignal=SIGQUIT", "warning", "KillSignal", {"KillSignal": "SIGTERM"}),
        ("RestartKillSignal=SIGKILL", "warning", "RestartKillSignal", {"RestartKillSignal": "SIGTERM"}),
        ("ExecStop=/bin/kill -9 $MAINPID", "warning", "ExecStop", {"ExecStop": ""}),
        ("ExecStop=/bin/kill -s KILL $MAINPID", "warning", "ExecStop", {"ExecStop": ""}),
        ("ExecStop=-/usr/bin/pkill -f kafka.Kafka -9", "warning", "ExecStop", {"ExecStop": ""}),
        ("KillMode=none", "warning", "KillMode", {"KillMode": "control-group"}),
        # kafka-server-stop.sh alone: systemd still sends SIGTERM and waits TimeoutStopSec afterwards
        ("ExecStop=/opt/kafka/bin/kafka-server-stop.sh", "info", "ExecStop", {"ExecStop": ""}),
        ('ExecStop=/opt/kafka/bin/kafka-server-stop.sh\nEnvironment="SIGNAL=KILL"', "warning", "ExecStop", {"ExecStop": ""}),
        ("ExecStop=/opt/kafka/bin/kafka-server-stop.sh\nKillSignal=SIGKILL", "warning", "ExecStop", None),
        ('Environment="KAFKA_OPTS=-Xrs"', "warning", "JVM", {}),
    ],
)  # fmt: skip
def test_stop_paths(tmp_path: Path, extra: str, severity: str, setting: str, dropin: dict | None) -> None:  # type: ignore[type-arg]
    (f,) = findings(tmp_path, extra)
    assert f["severity"] == severity
    assert setting in {p["setting"] for p in f["details"]["problems"]}
    if dropin is not None:
        assert f["details"]["dropin"] == dropin


def test_kill_mode_none_with_kafka_server_stop_is_a_warning(tmp_path: Path) -> None:
    (f,) = findings(tmp_path, "KillMode=none\nExecStop=/opt/kafka/bin/kafka-server-stop.sh")
    assert f["severity"] == "warning"
    assert {p["setting"]: p["severity"] for p in f["details"]["problems"]} == {
        "KillMode": "warning",
        "ExecStop": "warning",
    }
    assert f["details"]["dropin"] == {"KillMode": "control-group", "ExecStop": ""}


def test_mixed_kill_mode_with_a_shell_wrapper_kills_the_jvm(tmp_path: Path) -> None:
    wrapper = (
        "/bin/bash -c '/opt/kafka/bin/kafka-server-start.sh /etc/kafka/server.properties | logger -t kafka'"
    )
    base = BASE.replace("ExecStart=/opt/kafka/bin/kafka-server-start.sh /etc/kafka/server.properties\n", "")
    unit = tmp_path / "kops-sysd002-test.service"
    unit.write_text(base + f"ExecStart={wrapper}\nKillMode=mixed\n")
    empty = tmp_path / "server.properties"  # an empty configuration (a device such as /dev/null is refused)
    empty.write_text("")
    r = run_audit(AuditOptions(server_properties=str(empty), systemd_unit=str(unit), broker_state="stopped",
                               now_ms=NOW_MS, kafka_version="3.7.0", host="test"))  # fmt: skip
    (f,) = [f for f in r["findings"] if f["check"] == "SYSD002"]
    assert f["severity"] == "warning" and "SIGKILLs the rest of the cgroup" in f["message"]
    # with exec, or with the default KillMode, the JVM gets SIGTERM: nothing to say
    unit.write_text(base + f"ExecStart={wrapper}\n")
    r = run_audit(AuditOptions(server_properties=str(empty), systemd_unit=str(unit), broker_state="stopped",
                               now_ms=NOW_MS, kafka_version="3.7.0", host="test"))  # fmt: skip
    assert not [f for f in r["findings"] if f["check"] == "SYSD002"]


@pytest.mark.parametrize(
    "extra",
    ["", "KillSignal=SIGTERM", "KillSignal=TERM", "KillSignal=SIGINT", "KillMode=mixed", "KillMode=process",
     "ExecStop=/usr/local/bin/kafka-stop-and-wait.sh"],
)  # fmt: skip
def test_graceful_stop_paths_give_no_finding(tmp_path: Path, extra: str) -> None:
    assert findings(tmp_path, extra) == []


def test_no_finding_on_a_healthy_host(healthy_host) -> None:  # type: ignore[no-untyped-def]
    r = run_audit(AuditOptions(server_properties=healthy_host.server_properties, systemd_unit=healthy_host.systemd_unit,
                               broker_state="stopped", now_ms=NOW_MS, kafka_version="3.7.0", host="test",
                               log_dirs=[]))  # fmt: skip
    assert not [f for f in r["findings"] if f["check"] == "SYSD002"]
