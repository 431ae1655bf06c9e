"""CLN001: a cleaner thread that died and was not restarted (seed 001), and one that was (history)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kafka_ops.audit import run_audit
from kafka_ops.facts.model import AuditOptions
from kafka_ops.simulator.host import cleaner_death_lines

from ..conftest import NOW_MS


@pytest.fixture(autouse=True)
def _only_cln001(monkeypatch: pytest.MonkeyPatch) -> None:
    """Run only CLN001: the audit stays fast and independent of the other checks."""
    import kafka_ops.audit.run as audit_module
    from kafka_ops.checks import load_all

    monkeypatch.setattr(
        audit_module, "load_all", lambda: {k: v for k, v in load_all().items() if k == "CLN001"}
    )


DEATH = [
    "[2026-11-01 11:52:48,105] INFO Cleaner 0: Cleaning segment 0 in log __consumer_offsets-7 (largest timestamp "
    "Sun Nov 01 10:46:21 UTC 2026) into 0, discarding deletes. (kafka.log.LogCleaner)",
    "[2026-11-01 11:52:48,923] ERROR [kafka-log-cleaner-thread-0]: Error due to (kafka.log.LogCleaner)",
    "java.lang.IllegalStateException: This log contains a message larger than maximum allowable size of 1000012.",
    "\tat kafka.log.Cleaner.growBuffers(LogCleaner.scala:675)",
    "[2026-11-01 11:52:48,924] INFO [kafka-log-cleaner-thread-0]: Stopped (kafka.log.LogCleaner)",
]


def audit(logs: list[str], version: str = "1.1.0") -> list[dict]:  # type: ignore[type-arg]
    r = run_audit(
        AuditOptions(broker_state="stopped", now_ms=NOW_MS, kafka_version=version, logs=logs, host="test")
    )
    return [f for f in r["findings"] if f["check"] == "CLN001"]


def test_dead_cleaner_thread_is_critical_and_names_kafka_6854(tmp_path: Path, broken_host) -> None:  # type: ignore[no-untyped-def]
    # the simulator plants the death as Kafka 1.1.0 logs it (seed 001's KAFKA-6854)
    cleaner = tmp_path / "log-cleaner.log"
    cleaner.write_text("\n".join(cleaner_death_lines("1.1.0")) + "\n")
    found = audit([broken_host.server_log, str(cleaner)])
    assert len(found) == 1
    f = found[0]
    assert f["severity"] == "critical"
    assert f["path"] == str(cleaner)
    d = f["details"]
    assert d["thread"] == "kafka-log-cleaner-thread-0" and d["dead_now"] and d["stopped"]
    assert d["max_size"] == 1000012 and d["kafka_6854"] is True
    assert d["log"] == "__consumer_offsets-7" and d["segment"] == 0 and d["deletes"] == "discarding"
    assert d["died_at"] == "2026-11-01 11:52:48,923"
    assert "KAFKA-6854" in f["message"] and "1000012" in f["message"]
    assert "for KAFKA-6854 upgrade to 1.1.1" in f["remediation"]


def test_texts_use_the_version_given(tmp_path: Path, broken_host) -> None:  # type: ignore[no-untyped-def]
    """The 1.1.0 death read with another version: never 'give --kafka-version' when it was given."""
    cleaner = tmp_path / "log-cleaner.log"
    cleaner.write_text("\n".join(DEATH) + "\n")
    (f,) = audit([str(cleaner)], version="3.7.0")
    assert "give --kafka-version" not in f["message"] and not f["details"]["kafka_6854"]
    assert "Not KAFKA-6854: Kafka 3.7.0 has its fix" in f["message"] and "uncleanable" in f["message"]
    assert "KAFKA-6854 upgrade" not in f["remediation"] and "max.message.bytes" in f["remediation"]
    (f,) = audit([str(cleaner)], version="2.0.0")
    assert "Not KAFKA-6854: Kafka 2.0.0 has its fix" in f["message"] and "uncleanable" not in f["message"]
    r = run_audit(AuditOptions(broker_state="stopped", now_ms=NOW_MS, logs=[str(cleaner)], host="test"))
    (f,) = [f for f in r["findings"] if f["check"] == "CLN001"]
    assert "the Kafka version is not known: give --kafka-version" in f["message"]


def test_the_simulated_3_7_0_host_dies_as_3_7_0_can(broken_host) -> None:  # type: ignore[no-untyped-def]
    """On 3.7.0 the cleaner survives exceptions (KIP-346): the simulator's dead thread died of an Error."""
    (f,) = audit([broken_host.server_log, broken_host.cleaner_log], version="3.7.0")
    assert f["severity"] == "critical" and f["details"]["exception"] == "java.lang.OutOfMemoryError"
    assert "KAFKA-6854" not in f["message"] and "give --kafka-version" not in f["message"]
    assert "heap" in f["remediation"] and "KAFKA-6854" not in f["remediation"]


def test_thread_restart_after_the_death_makes_it_history(tmp_path: Path, broken_host) -> None:  # type: ignore[no-untyped-def]
    cleaner = tmp_path / "log-cleaner.log"
    shutil.copy(broken_host.cleaner_log, cleaner)
    with open(cleaner, "a") as fh:
        fh.write(
            "[2026-11-01 12:30:00,000] INFO [kafka-log-cleaner-thread-0]: Starting (kafka.log.LogCleaner)\n"
        )
    (f,) = audit([broken_host.server_log, str(cleaner)])
    assert f["severity"] == "info"
    assert f["details"]["dead_now"] is False
    assert f["details"]["restarted_at"] == "2026-11-01 12:30:00,000"
    assert "Starting" in f["details"]["restart_evidence"]


def test_version_line_of_the_same_start_is_not_a_restart(tmp_path: Path) -> None:
    """'Kafka version' is logged at the end of a start (after LogManager.startup started the cleaner): a thread
    that dies seconds into a start is still dead although that line follows it."""
    server = tmp_path / "server.log"
    server.write_text(
        "[2026-11-01 11:52:40,000] INFO Loading logs from log dirs ArrayBuffer(/d) (kafka.log.LogManager)\n"
        "[2026-11-01 11:52:55,000] INFO Kafka version: 1.1.0 (org.apache.kafka.common.utils.AppInfoParser)\n"
    )
    cleaner = tmp_path / "log-cleaner.log"
    cleaner.write_text(
        "[2026-11-01 11:52:41,000] INFO [kafka-log-cleaner-thread-0]: Starting (kafka.log.LogCleaner)\n"
        + "\n".join(DEATH)
        + "\n"
    )
    (f,) = audit([str(server), str(cleaner)])
    assert f["severity"] == "critical" and f["details"]["dead_now"]
    # a later start ("Loading logs" after the death) restarts it
    with open(server, "a") as fh:
        fh.write(
            "[2026-11-02 08:00:00,000] INFO Loading logs from log dirs ArrayBuffer(/d) (kafka.log.LogManager)\n"
        )
    (f,) = audit([str(server), str(cleaner)])
    assert f["severity"] == "info" and "Loading logs" in f["details"]["restart_evidence"]


def test_version_line_alone_counts_when_the_logs_have_no_earlier_start_line(tmp_path: Path) -> None:
    cleaner = tmp_path / "log-cleaner.log"
    cleaner.write_text("\n".join(DEATH) + "\n")
    server = tmp_path / "server.log"
    server.write_text(
        "[2026-11-03 09:00:00,000] INFO Kafka version : 1.1.0 (org.apache.kafka.common.utils.AppInfoParser)\n"
    )
    (f,) = audit([str(server), str(cleaner)])
    assert f["severity"] == "info" and "Kafka version" in f["details"]["restart_evidence"]


def test_every_death_of_a_thread_is_counted_and_two_threads_are_reported(tmp_path: Path) -> None:
    cleaner = tmp_path / "log-cleaner.log"
    second = [line.replace("thread-0", "thread-1").replace("Cleaner 0", "Cleaner 1") for line in DEATH]
    restart = "[2026-11-01 11:53:00,000] INFO [kafka-log-cleaner-thread-0]: Starting (kafka.log.LogCleaner)"
    later = [line.replace("11:52:4", "11:59:4") for line in DEATH]
    cleaner.write_text("\n".join([*DEATH, restart, *later, *second]) + "\n")
    found = {f["details"]["thread"]: f for f in audit([str(cleaner)])}
    assert set(found) == {"kafka-log-cleaner-thread-0", "kafka-log-cleaner-thread-1"}
    t0 = found["kafka-log-cleaner-thread-0"]
    assert t0["severity"] == "critical" and t0["details"]["deaths_of_thread"] == 2
    assert t0["details"]["died_at"] == "2026-11-01 11:59:48,923"


def test_no_finding_on_a_healthy_host(healthy_host) -> None:  # type: ignore[no-untyped-def]
    assert audit([healthy_host.server_log, healthy_host.cleaner_log], version="3.7.0") == []


def test_skipped_without_broker_logs() -> None:
    r = run_audit(AuditOptions(broker_state="stopped", now_ms=NOW_MS, kafka_version="1.1.0", host="test"))
    assert any(s.get("check") == "CLN001" for s in r["skipped"])
