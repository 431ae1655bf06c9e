"""Seed 001 on the brokers it happened on: the cleaner bug reproduced with a real transactional producer (Kafka's
own Java client), then ``kafka-ops audit`` and ``kafka-ops logs`` run on that broker's own stopped files, config
and log, as an operator would: they must name the bug, with the version's text, where the broker has it, and
say nothing of the kind on the release that fixed it.

* KAFKA-6854 on 1.1.0 (the cleaner thread dies; 1.1.1 cleans the same load): ~40 s per version;
* KAFKA-8335 on 2.2.0 (``__consumer_offsets`` keeps every transaction marker; 2.2.1 cleans it): ~2.5 min.

CI runs the KAFKA-6854 pair (the shorter one, ~1 min for both); ``make lab`` (KAFKA_OPS_LAB_VERSIONS=all)
runs all four; an explicit version list runs those of the four it names.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from kafka_lab import seed001
from kafka_lab.broker import LabBroker
from kafka_lab.jars import LabError
from kafka_lab.versions import selected
from tests.lab.conftest import _lab_skip_reason

pytestmark = pytest.mark.lab

REPO = Path(__file__).resolve().parents[2]
BUG_OF = {"1.1.0": "KAFKA-6854", "1.1.1": "KAFKA-6854", "2.2.0": "KAFKA-8335", "2.2.1": "KAFKA-8335"}
AFFECTED = {"1.1.0", "2.2.0"}


def _versions() -> list[str]:
    env = os.environ.get("KAFKA_OPS_LAB_VERSIONS")
    if not env:  # CI: the KAFKA-6854 pair, the shorter reproduction (and CI's only start of 1.1 on Java 17)
        return ["1.1.0", "1.1.1"]
    if env.strip() == "all":
        return list(BUG_OF)
    return [v for v in BUG_OF if v in selected(env)]


def _kafka_ops(*args: str) -> tuple[int, str]:
    proc = subprocess.run(
        [sys.executable, "-m", "kafka_ops", *args],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert proc.returncode in (0, 1), f"kafka-ops {args[0]} failed ({proc.returncode}): {proc.stderr[-800:]}"
    return proc.returncode, proc.stdout


@pytest.fixture(scope="module", params=_versions())
def run(request: pytest.FixtureRequest) -> Iterator[seed001.Seed001Run]:
    reason = _lab_skip_reason()
    if reason:
        pytest.skip(reason)
    version = str(request.param)
    try:
        r = (
            seed001.kafka_6854(version, while_running=_running_audit(version))
            if BUG_OF[version] == "KAFKA-6854"
            else seed001.kafka_8335(version)
        )
    except LabError as e:
        pytest.fail(f"seed 001 on {version}: {e}")
    out = os.environ.get("KAFKA_OPS_LAB_REPORT")
    if out:  # what the broker did, for docs/fidelity.md's seed 001 section
        Path(out).mkdir(parents=True, exist_ok=True)
        doc = {
            "version": version, "bug": BUG_OF[version], "cleaner_died": r.cleaner_died, "deaths": r.death_lines,
            "swaps": r.swaps, "before": vars(r.before), "after": vars(r.after),
            "first_phase_left": r.first_phase_left, "seconds": round(r.seconds, 1),
        }  # fmt: skip
        (Path(out) / f"seed001-{version}.json").write_text(json.dumps(doc, indent=1))
    try:
        yield r
    finally:
        r.broker.close()


def _running_audit(version: str) -> Callable[[LabBroker], dict[str, Any]]:
    """``kafka-ops audit`` of the RUNNING broker with its log (after the cleaner died, on 1.1.0)."""

    def audit(b: LabBroker) -> dict[str, Any]:
        configs = b.workdir / "topic-configs-running.json"
        overrides = {
            seed001.TOPIC_6854: seed001.TOPIC_6854_CONFIGS,
            seed001.TOPIC_STALE: seed001.TOPIC_STALE_CONFIGS,
        }
        configs.write_text(json.dumps({t: {k: str(v) for k, v in c.items()} for t, c in overrides.items()}))
        _, out = _kafka_ops(
            "audit", "--server-properties", str(b.server_properties), "--kafka-version", version,
            "--topic-configs", str(configs), "--broker-log", str(b.log_file), "--broker-state", "running",
            "--format", "json", *(["--broker-user", b.user] if b.user else []),
        )  # fmt: skip
        return json.loads(out)  # type: ignore[no-any-return]

    return audit


@pytest.fixture(scope="module")
def audit(run: seed001.Seed001Run) -> dict[str, Any]:
    """``kafka-ops audit --format json`` on the stopped broker's files, config and log, with its version."""
    b = run.broker
    # the topic's overrides live in ZooKeeper: given as an operator exports them (kafka-configs --describe)
    configs = b.workdir / "topic-configs.json"
    overrides = (
        {seed001.TOPIC_6854: seed001.TOPIC_6854_CONFIGS} if BUG_OF[run.version] == "KAFKA-6854" else {}
    )
    configs.write_text(json.dumps({t: {k: str(v) for k, v in c.items()} for t, c in overrides.items()}))
    _, out = _kafka_ops(
        "audit", "--server-properties", str(b.server_properties), "--kafka-version", run.version,
        "--topic-configs", str(configs),
        "--broker-log", str(run.log_file), "--broker-state", "stopped", "--format", "json",
        *(["--broker-user", b.user] if b.user else []),
    )  # fmt: skip
    return json.loads(out)


@pytest.fixture(scope="module")
def logs(run: seed001.Seed001Run) -> tuple[int, dict[str, Any]]:
    code, out = _kafka_ops("logs", str(run.log_file), "--format", "json")
    return code, json.loads(out)


def _findings(audit: dict[str, Any], check: str) -> list[dict[str, Any]]:
    return [f for f in audit["findings"] if f["check"] == check]


def test_the_broker_does_what_the_ticket_says(run: seed001.Seed001Run) -> None:
    """The reproduction itself: the affected release shows the bug, the fixed one does not, on the same load."""
    if BUG_OF[run.version] == "KAFKA-6854":
        if run.version in AFFECTED:
            assert run.cleaner_died, "1.1.0's cleaner did not die on the aborted transaction"
            assert any(seed001.KAFKA_6854_TEXT in ln for ln in run.broker.log_text().splitlines()), (
                run.death_lines
            )
        else:
            assert not run.cleaner_died, run.death_lines
            assert run.swaps >= 1, "1.1.1's cleaner never cleaned the topic"
        return
    # KAFKA-8335: the first phase's batches (empty offset-commit batches and their COMMIT markers)
    assert not run.cleaner_died, run.death_lines
    if run.version in AFFECTED:
        # phase 1's 1,500 COMMIT markers and 1,500 emptied offset-commit batches stay (2,999 of 3,000 seen)
        assert run.before.control >= seed001.TRANSACTIONS_8335, run.before
        assert run.first_phase_left >= 2 * seed001.TRANSACTIONS_8335 - 10, (run.first_phase_left, run.after)
        assert run.after.bytes > run.before.bytes
    else:  # cleaned away (2 batches left seen)
        assert run.first_phase_left <= 10, (run.first_phase_left, run.after)


def test_audit_names_the_bug_with_the_version_text(run: seed001.Seed001Run, audit: dict[str, Any]) -> None:
    cln1, cln2, cln3 = (_findings(audit, c) for c in ("CLN001", "CLN002", "CLN003"))
    v = run.version
    all_text = json.dumps([f for f in audit["findings"] if f["check"].startswith("CLN")])
    if v == "1.1.0":
        [f] = cln1
        assert f["severity"] == "critical" and f["details"]["kafka_6854"] is True, f
        assert f["details"]["dead_now"] is True
        assert "This is KAFKA-6854 on Kafka 1.1.0" in f["message"], f["message"]
        assert "IllegalStateException" in f["message"] and "1000012" in f["message"]
        assert f"{seed001.TOPIC_6854}-0" in f["message"]
        [g] = cln2
        assert g["details"]["kafka_6854"] is True and "KAFKA-6854" in g["message"]
        assert f"{seed001.TOPIC_6854}" in g["message"]
    elif v == "1.1.1":
        assert cln1 == [] and cln3 == []
        assert "KAFKA-6854" not in all_text, all_text  # the crash is fixed in 1.1.1
    elif v == "2.2.0":
        assert cln1 == []
        [g] = cln2
        assert g["details"]["kafka_8335"] is True and g["details"]["kafka_6854"] is False, g
        assert g["message"].startswith("Kafka 2.2.0 has KAFKA-8335"), g["message"]
        assert "KAFKA-6854" not in g["message"]
        assert "__consumer_offsets" in g["message"]
        assert g["details"]["control_batches"] >= seed001.TRANSACTIONS_8335
    else:  # 2.2.1: fixed, nothing of the kind
        assert cln1 == [] and cln2 == [] and cln3 == []
        assert "KAFKA-8335" not in all_text and "KAFKA-6854" not in all_text, all_text


def test_logs_command_names_the_dead_cleaner(
    run: seed001.Seed001Run, logs: tuple[int, dict[str, Any]]
) -> None:
    """``kafka-ops logs`` on the broker's log: exit 1 and the dead thread on 1.1.0; exit 0, no death, elsewhere."""
    code, doc = logs
    text = json.dumps(doc)
    if run.version == "1.1.0":
        assert code == 1, doc
        assert "kafka-log-cleaner-thread-0" in text and seed001.KAFKA_6854_TEXT in text, text[:2000]
    else:
        assert code == 0, doc
        assert "kafka-log-cleaner-thread-0" not in text or 'dead_now": true' not in text, text[:2000]


def test_a_dead_cleaner_stops_retention_of_compact_delete_topics(run: seed001.Seed001Run) -> None:
    """Records past retention.ms in a compact,delete topic, written after the cleaner died: 1.1.0 keeps them (its
    retention runs only in the dead cleaner thread) and the audit of the running broker says so, with what a
    restart deletes; 1.1.1's live cleaner deletes them within its passes and the audit says nothing of it."""
    if BUG_OF[run.version] != "KAFKA-6854":
        pytest.skip("the KAFKA-6854 pair only")
    seen = run.while_running
    ret4 = [f for f in _findings(seen, "RET004") if f["topic"] == seed001.TOPIC_STALE]
    if run.version in AFFECTED:
        assert run.stale_left == seed001.STALE_RECORDS, run.stale_left
        [f] = ret4
        assert f["details"]["cause"] == "cleaner_stalled", f
        assert "every log-cleaner thread is dead (kafka-log-cleaner-thread-0" in f["message"], f["message"]
        assert f"deletes {seed001.STALE_RECORDS} segment(s)" in f["message"], f["message"]
    else:
        assert run.stale_left == 0, run.stale_left
        assert [
            f for f in seen["findings"] if (f.get("details") or {}).get("cause") == "cleaner_stalled"
        ] == []
