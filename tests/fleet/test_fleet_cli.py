"""`fleet diff` and `fleet audit` options that answer without starting Spark: the diff of local results read with
pyarrow, run ids that are not there, one run only, the default results dir, bad waivers."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from kafka_ops.cli.framework import load_all


@pytest.fixture
def no_spark(monkeypatch: pytest.MonkeyPatch) -> None:
    """Starting Spark fails the test: these answers must come without it."""
    import kafka_ops.cli.fleet as fleet_cmd

    def refuse(*_a: Any, **_k: Any) -> None:
        raise AssertionError("Spark was started")

    monkeypatch.setattr(fleet_cmd, "_spark", refuse)


FINDING = {"host": "b1", "check": "SHUT001", "log_dir": "/d1", "path": "/d1", "topic": None, "partition": None,
           "segment": None, "severity": "info", "message": "no marker"}  # fmt: skip


def write_run(out: Path, run_id: str, at_s: int, findings: list[dict[str, Any]], parts: list[tuple[str, int]],
              hosts: dict[str, str]) -> None:  # fmt: skip
    """One run as fleet.results.write_run lays it out: facts/, findings/, hosts/ by run_date, Parquet."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    s, i64 = pa.string(), pa.int64()
    run = [("run_id", s), ("run_at", pa.timestamp("us", tz="UTC")), ("audit_now_ms", i64)]
    schemas = {
        "findings": pa.schema([("host", s), ("check", s), ("log_dir", s), ("path", s), ("topic", s),
                               ("partition", pa.int32()), ("segment", i64), ("severity", s), ("message", s), *run]),
        "facts": pa.schema([("host", s), ("log_dir", s), ("topic", s), ("partition", pa.int32()),
                            ("size_bytes", i64), *run]),
        "hosts": pa.schema([("host", s), ("address", s), ("status", s), ("reason", s), ("node_id", pa.int32()),
                            ("elapsed_s", pa.float64()), *run]),
    }  # fmt: skip
    extra = {
        "run_id": run_id,
        "run_at": dt.datetime.fromtimestamp(at_s, tz=dt.UTC),
        "audit_now_ms": at_s * 1000,
    }
    rows = {
        "findings": [{**f, **extra} for f in findings],
        "facts": [{"host": "b1", "log_dir": "/d1", "topic": t, "partition": p, "size_bytes": 10, **extra} for t, p in parts],
        "hosts": [{"host": h, "address": h, "status": st, "reason": None, "node_id": 1, "elapsed_s": 0.5, **extra}
                  for h, st in hosts.items()],
    }  # fmt: skip
    for name, schema in schemas.items():
        d = out / name / "run_date=2026-09-21"
        d.mkdir(parents=True, exist_ok=True)
        pq.write_table(pa.Table.from_pylist(rows[name], schema=schema), d / f"part-{run_id}.parquet")


def cli(*args: str, env: dict[str, str] | None = None) -> Any:
    return CliRunner().invoke(load_all(), list(args), env=env)


def test_diff_of_local_results_needs_no_spark(tmp_path: Path, no_spark: None) -> None:
    out = tmp_path / "results"
    write_run(out, "r1", 1000, [FINDING], [("orders", 0), ("orders", 1)], {"b1": "ok", "b2": "ok"})
    # one run: nothing to compare, said so (not "run None not found")
    r = cli("fleet", "diff", "--results", str(out))
    assert r.exit_code == 0, r.output
    assert r.stdout.strip() == f"{out}: only one run (r1): nothing to compare it with yet"
    second = {**FINDING, "log_dir": "/d2", "path": "/d2", "severity": "critical", "message": "other"}
    write_run(
        out,
        "r2",
        2000,
        [FINDING, second],
        [("orders", 0), ("payments", 0)],
        {"b1": "ok", "b2": "unreachable"},
    )
    r = cli("fleet", "diff", "--results", f"file://{out}", "-f", "json")
    assert r.exit_code == 1, r.output  # a new finding
    d = json.loads(r.stdout)
    assert (d["base"], d["head"]) == ("r1", "r2")
    assert d["new_findings"] == [{k: second[k] for k in FINDING}]
    assert d["resolved_findings"] == []
    assert [(p["topic"], p["partition"]) for p in d["partitions_added"]] == [("payments", 0)]
    assert [(p["topic"], p["partition"]) for p in d["partitions_removed"]] == [("orders", 1)]
    assert d["host_status_changes"] == [{"host": "b2", "before": "ok", "after": "unreachable"}]
    text = cli("fleet", "diff", "--results", str(out))
    assert "new findings: 1\n  critical SHUT001 b1 /d2" in text.stdout
    # the other way round: what was new is resolved
    back = json.loads(
        cli("fleet", "diff", "--results", str(out), "--base", "r2", "--head", "r1", "-f", "json").stdout
    )
    assert back["resolved_findings"] == d["new_findings"] and back["new_findings"] == []


def test_a_run_id_that_is_not_there_is_named_with_the_runs_that_are(tmp_path: Path, no_spark: None) -> None:
    out = tmp_path / "results"
    write_run(out, "r1", 1000, [FINDING], [("orders", 0)], {"b1": "ok"})
    write_run(out, "r2", 2000, [FINDING], [("orders", 0)], {"b1": "ok"})
    r = cli("fleet", "diff", "--results", str(out), "--base", "r0")
    assert r.exit_code == 2
    assert (
        r.stderr.strip()
        == f"kafka-ops fleet diff: --base r0: no such run in {out} (its runs, oldest first: r1, r2)"
    )
    r = cli("fleet", "diff", "--results", str(out), "--head", "nope")
    assert r.exit_code == 2 and "--head nope: no such run" in r.stderr


def test_results_default_to_the_users_own_state_dir(tmp_path: Path, no_spark: None) -> None:
    state = tmp_path / "state"
    r = cli("fleet", "diff", env={"XDG_STATE_HOME": str(state)})
    assert r.exit_code == 2
    assert f"{state}/kafka-ops/fleet: no fleet results here (run `kafka-ops fleet audit` first)" in r.stderr
    write_run(state / "kafka-ops" / "fleet", "r1", 1000, [], [("orders", 0)], {"b1": "ok"})
    r = cli("fleet", "diff", env={"XDG_STATE_HOME": str(state)})
    assert r.exit_code == 0 and "only one run (r1)" in r.stdout
    home = tmp_path / "home"
    r = cli(
        "fleet", "diff", env={"XDG_STATE_HOME": "relative/dir", "HOME": str(home)}
    )  # ignored: not absolute
    assert r.exit_code == 2 and f"{home}/.local/state/kafka-ops/fleet: no fleet results here" in r.stderr
    assert "Default: your own $XDG_STATE_HOME/kafka-ops/fleet" in " ".join(
        cli("fleet", "audit", "--help").stdout.split()
    )


def test_fleet_audit_refuses_a_bad_waiver_before_spark_starts(tmp_path: Path, no_spark: None) -> None:
    r = cli("fleet", "audit", "--log-dir", str(tmp_path), "--waive", "SHUT01")
    assert r.exit_code == 2 and "SHUT01" in r.stderr and "SHUT001" in r.stderr  # did you mean
    bad = tmp_path / "waivers"
    bad.write_text("# ok\nNOPE999 reason\n")
    r = cli("fleet", "audit", "--log-dir", str(tmp_path), "--waive-file", str(bad))
    assert r.exit_code == 2 and f"{bad}:2" in r.stderr
