"""SHUT003: recovery-point checkpoint missing, unreadable, without a partition, or ahead of the log end."""

from __future__ import annotations

import os

from kafka_ops.engine import checkpoints as ckpt

from .index_hosts import Failures, audit, findings, simulate


def _rp(log_dir: str) -> str:
    return os.path.join(log_dir, ckpt.RECOVERY_POINT)


def test_shut003_missing_checkpoint(tmp_path) -> None:  # type: ignore[no-untyped-def]
    killed = simulate(tmp_path / "killed", failures=Failures(unclean_shutdown=True))
    os.remove(_rp(killed.log_dirs[0]))
    report = audit(killed)
    [f] = findings(report, "SHUT003")
    [summary] = [d for d in report["log_dirs"] if d["path"] == killed.log_dirs[0]]
    assert (f["severity"], f["path"], f["details"]["problem"]) == (
        "warning",
        _rp(killed.log_dirs[0]),
        "missing",
    )
    assert f["details"]["state"] == "unclean" and f["details"]["log_bytes"] == summary["log_bytes"]
    assert "recovery point 0" in f["message"] and "re-reads every segment" in f["message"]

    clean = simulate(tmp_path / "clean")
    os.remove(_rp(clean.log_dirs[1]))
    [g] = findings(audit(clean), "SHUT003")
    assert (
        g["details"]["state"] == "clean"
        and "skips recovery" in g["message"]
        and "KAFKA-10471" in g["message"]
    )


def test_shut003_unreadable_checkpoint_takes_the_dir_offline(tmp_path) -> None:  # type: ignore[no-untyped-def]
    host = simulate(tmp_path)
    with open(_rp(host.log_dirs[0]), "w") as fh:
        fh.write("0\n3\norders 1\n")
    [f] = findings(audit(host), "SHUT003")
    assert (f["severity"], f["details"]["problem"], f["details"]["log_dir_offline_after_start"]) == (
        "error", "unreadable", True,
    )  # fmt: skip
    assert "resetting the recovery checkpoint to 0" in f["message"] and "LogDirFailureChannel" in f["message"]
    # before 1.0.0 (no LogDirFailureChannel): only the WARN and recovery point 0
    [old] = findings(audit(host, kafka_version="0.11.0.3"), "SHUT003")
    assert old["severity"] == "warning" and old["details"]["log_dir_offline_after_start"] is False


def test_shut003_partition_entries(tmp_path) -> None:  # type: ignore[no-untyped-def]
    host = simulate(tmp_path, failures=Failures(unclean_shutdown=True))
    log_dir = host.log_dirs[1]
    rp = ckpt.read_offset_checkpoint(_rp(log_dir))
    ls = ckpt.read_offset_checkpoint(os.path.join(log_dir, ckpt.LOG_START))
    gone, ahead, doomed = sorted(rp)[:3]
    del rp[gone]
    rp[ahead] += 1000
    rp[doomed] = ls[doomed] = 10**6
    with open(_rp(log_dir), "w") as fh:
        fh.write(ckpt.encode_offset_checkpoint(rp))
    with open(os.path.join(log_dir, ckpt.LOG_START), "w") as fh:
        fh.write(ckpt.encode_offset_checkpoint(ls))

    found = {(f["topic"], f["partition"]): f for f in findings(audit(host), "SHUT003")}
    assert set(found) == {gone, ahead, doomed}
    assert found[gone]["severity"] == "warning" and found[gone]["details"]["problem"] == "no_entry"
    a = found[ahead]
    assert (a["severity"], a["details"]["problem"], a["details"]["recovery_point"]) == (
        "warning", "ahead_of_log_end", rp[ahead],
    )  # fmt: skip
    assert f"above the log end offset {a['details']['log_end_offset']}" in a["message"]
    d = found[doomed]
    assert d["severity"] == "error" and d["details"]["deletes_all_segments"] is True
    assert "Deleting all segments because logEndOffset" in d["message"]

    # after a clean stop a missing entry costs nothing: not reported (the ahead ones still are)
    os.makedirs(log_dir, exist_ok=True)
    with open(os.path.join(log_dir, ckpt.CLEAN_SHUTDOWN), "w") as fh:
        fh.write('{"version":0,"brokerEpoch":42}')
    clean = {(f["topic"], f["partition"]) for f in findings(audit(host), "SHUT003")}
    assert clean == {ahead, doomed}


def test_shut003_nothing_on_healthy_hosts(tmp_path, healthy_host) -> None:  # type: ignore[no-untyped-def]
    assert findings(audit(healthy_host), "SHUT003") == []
    killed = simulate(tmp_path, failures=Failures(unclean_shutdown=True))
    assert findings(audit(killed), "SHUT003") == []
