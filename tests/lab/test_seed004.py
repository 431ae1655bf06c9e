"""Seed 004 for real: `kafka-ops qos` on a real transactional pipeline (kafka_lab.seed004) on a 3.9.1
broker. With the application bug (in-flight batch dropped at the revocation) it names exactly the records the
pipeline lost, read from the broker's segments, and the rebalance beside them; without it, it finds nothing.
The lost records are also checked against a kafka-python read_committed read of both topics (the oracle) and
the pipeline's own record of what it dropped."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from kafka_lab.seed004 import PHASE1, PHASE2, PHASE3, SOURCE, A, B, Seed004Run, run
from kafka_ops.cli.framework import load_all
from tests.lab.conftest import _lab_skip_reason

pytestmark = pytest.mark.lab


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Seed004Run]:
    reason = _lab_skip_reason()
    if reason:
        pytest.skip(reason)
    out = {}
    for name in ("bug", "clean"):
        workdir = tmp_path_factory.mktemp(f"seed004-{name}")
        out[name] = run(workdir, bug=name == "bug")
    return out


def qos(r: Seed004Run) -> tuple[int, Any]:
    result = CliRunner().invoke(load_all(), [*r.qos_args(), "--format", "json"])
    try:
        return result.exit_code, json.loads(result.stdout)
    except ValueError:
        return result.exit_code, result.stdout + result.stderr


def test_with_the_bug_qos_names_exactly_the_lost_records_and_the_rebalance(
    runs: dict[str, Seed004Run],
) -> None:
    r = runs["bug"]
    total = PHASE1 + PHASE2 + PHASE3
    # what was lost: pipeline-a's buffer of partition 0 (it kept partition 0; partition 1's dropped records
    # went to pipeline-b, which started from the committed offset)
    lost = [(0, o) for o in range(PHASE1, PHASE1 + PHASE2)]
    assert r.lost == lost, r.seconds
    assert [d for d in r.dropped if d[0] == 0] == lost and {p for p, _o in r.dropped} == {0, 1}
    code, report = qos(r)
    assert code == 1, report
    assert report["source"]["records"] == 2 * total
    assert report["sink"]["records"] == 2 * total - len(lost) and report["sink"]["ids_not_in_source"] == 0
    (rng,) = report["missing"]["ranges"]
    assert (rng["topic"], rng["partition"], rng["first_offset"], rng["last_offset"]) == (
        SOURCE, 0, PHASE1, PHASE1 + PHASE2 - 1,
    )  # fmt: skip
    assert rng["records"] == len(lost) and rng["ids"][:3] == [f"{SOURCE}-0-{o}" for o in (40, 41, 42)]
    # beside it: pipeline-a's revocation of both partitions and its assignment of partition 0 alone, between
    # its last commit before the lost records and the commit past them, and pipeline-b joining
    during = [(e["pod"], e["kind"], e["partitions"]) for e in rng["rebalances"] if e["during_skip"]]
    assert (A, "revoked", [f"{SOURCE}-0", f"{SOURCE}-1"]) in during
    assert (A, "assigned", [f"{SOURCE}-0"]) in during
    assert (B, "joining", []) in during
    assert rng["skipped_by"]["pod"] == A and rng["skipped_by"]["first_offset"] == PHASE1 + PHASE2
    # the pipeline's own logs: pipeline-a committed past offsets it never consumed
    (gap,) = report["offsets"]["findings"]
    assert (gap["kind"], gap["partition"], gap["pod"]) == ("gap", 0, A)
    assert (gap["first_offset"], gap["last_offset"], gap["visible_records"]) == (40, 69, len(lost))
    assert report["gate"]["failed"]


def test_without_the_bug_qos_finds_nothing(runs: dict[str, Seed004Run]) -> None:
    r = runs["clean"]
    assert r.lost == [] and r.dropped == []
    code, report = qos(r)
    assert code == 0, report
    total = 2 * (PHASE1 + PHASE2 + PHASE3)
    assert report["source"]["records"] == total and report["sink"]["records"] == total
    assert report["missing"]["records"] == 0 and report["duplicates"]["ids"] == 0
    assert report["offsets"]["findings"] == [] and not report["gate"]["failed"]
    # the same rebalance happened: pipeline-a flushed its in-flight batch at the revocation instead
    text = Path(r.log_files[0]).read_text()
    assert "(revocation)" in text and "Revoking previously assigned partitions {TopicPartition" in text


def test_bad_sink_topic_input_is_one_line_and_exit_2(runs: dict[str, Seed004Run]) -> None:
    r = runs["clean"]
    result = CliRunner().invoke(
        load_all(), ["qos", "--source", str(r.data_dir), "--topic", SOURCE, "--source-id", "value:id",
                     "--sink-topic", "nope", "--sink-id", "value:log_id"],
    )  # fmt: skip
    assert result.exit_code == 2 and "nope" in result.output and "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1
