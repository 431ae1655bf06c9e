"""The report's ``next_start`` plan (kafka_ops.broker.plan) on simulated hosts, one fault at a time.

The broker lab (tests/lab) checks the same plan against real brokers; these tests pin what the model says for
the files the simulator writes, and that the plan, the forecast and the findings agree.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from kafka_ops.broker.plan import plan_sentences
from kafka_ops.render.models import validate

from .checks.index_hosts import NOW_MS, Failures, audit, bases, seg_path, simulate
from .checks.osusers import Users, broker_users, open_tmp  # noqa: F401


def plan(report: dict[str, Any]) -> dict[str, Any]:
    validate(report)  # the plan is part of the published schema
    return report["next_start"]  # type: ignore[no-any-return]


def fates(ns: dict[str, Any]) -> dict[tuple[str, int, int], dict[str, Any]]:
    return {(s["topic"], s["partition"], s["base_offset"]): s for s in ns["segments"]}


def test_healthy_host_plan_is_empty(tmp_path: Path) -> None:
    host = simulate(tmp_path)
    ns = plan(audit(host))
    assert ns["broker"] == "starts" and ns["reason"] is None and ns["kafka_version"] == "3.7.0"
    assert [d["state"] for d in ns["log_dirs"]] == ["online", "online"]
    assert ns["segments"] == []


def test_running_broker_gets_no_plan(tmp_path: Path) -> None:
    host = simulate(tmp_path, running=True)
    ns = plan(audit(host, broker_state="running"))
    assert ns["broker"] is None and "running" in ns["reason"] and ns["segments"] == []


def test_unclean_stop_recovers_from_the_recovery_point_and_truncates_the_torn_tail(tmp_path: Path) -> None:
    host = simulate(tmp_path, failures=Failures(unclean_shutdown=True, torn_tail=True))
    report = audit(host)
    ns = plan(report)
    assert ns["broker"] == "starts"
    [torn] = host.planted["torn_tail"]
    part = os.path.dirname(torn)
    topic, p = os.path.basename(part).rsplit("-", 1)
    by = fates(ns)
    active = bases(part)[-1]
    f = by[(topic, int(p), active)]
    assert f["load"] == "recovered" and f["truncated_bytes"] > 0 and "SHUT002" in f["checks"]
    # exactly the bytes after the last valid batch: what LogSegment.recover truncates
    from kafka_ops.engine.layout import parse_partition_dir
    from kafka_ops.engine.logdir import recovery_scan, scan_partition

    seg = scan_partition(part, parse_partition_dir(os.path.basename(part))).segments[-1]  # type: ignore[arg-type]
    assert f["truncated_bytes"] == os.path.getsize(torn) - recovery_scan(seg).valid_bytes
    # every listed segment is recovered, and every recovered segment of the report's log dirs is listed
    assert {s["load"] for s in ns["segments"]} == {"recovered"}
    assert len(ns["segments"]) == sum(d["recover_segments"] for d in report["log_dirs"])


def test_corrupt_batch_in_recovery_truncates_and_deletes_the_later_segments(tmp_path: Path) -> None:
    host = simulate(tmp_path, failures=Failures(unclean_shutdown=True))
    # the partition with most segments above its recovery point: corrupt the first recovered one in its middle
    report = audit(host)
    recovered: dict[tuple[str, int], list[int]] = {}
    for s in report["next_start"]["segments"]:
        recovered.setdefault((s["topic"], s["partition"]), []).append(s["base_offset"])
    (topic, p), segs = max(recovered.items(), key=lambda kv: len(kv[1]))
    assert len(segs) >= 2
    part = next(d for ld in host.log_dirs for d in [os.path.join(ld, f"{topic}-{p}")] if os.path.isdir(d))
    log = seg_path(part, segs[0], ".log")
    size = os.path.getsize(log)
    with open(log, "r+b") as fh:  # a byte inside the second half's records: its batch's CRC fails
        fh.seek(size // 2 + 70)
        b = fh.read(1)
        fh.seek(size // 2 + 70)
        fh.write(bytes([b[0] ^ 0xFF]))
    by = fates(plan(audit(host)))
    first = by[(topic, p, segs[0])]
    assert first["load"] == "recovered" and 0 < first["truncated_bytes"] < size
    for base in segs[1:]:
        later = by[(topic, p, base)]
        assert later["deleted_by"] == "recovery" and later["deleted_at"] is not None, later


def test_missing_index_is_rebuilt_after_a_clean_stop(tmp_path: Path) -> None:
    host = simulate(tmp_path)
    part = next(
        os.path.join(ld, d) for ld in host.log_dirs for d in sorted(os.listdir(ld)) if d.startswith("orders-")
    )
    base = bases(part)[0]
    os.remove(seg_path(part, base, ".index"))
    ns = plan(audit(host))
    topic, p = os.path.basename(part).rsplit("-", 1)
    [f] = ns["segments"]
    assert (f["topic"], f["partition"], f["base_offset"], f["load"]) == (
        topic,
        int(p),
        base,
        "indexes_rebuilt",
    )
    assert f["truncated_bytes"] == 0 and "IDX005" in f["checks"]


def test_missing_index_after_a_clean_stop_by_release(tmp_path: Path) -> None:
    """0.10.2 rebuilds a missing .index (Log.loadSegments: "Could not find index file ..., rebuilding index",
    seen on a real 0.10.2.2 broker in the lab), 1.1-2.2 load it as is (LogSegment.open creates it empty), 2.3+
    rebuild it again (KAFKA-7283)."""
    host = simulate(tmp_path)
    part = next(
        os.path.join(ld, d) for ld in host.log_dirs for d in sorted(os.listdir(ld)) if d.startswith("orders-")
    )
    os.remove(seg_path(part, bases(part)[0], ".index"))
    loads = {}
    for v in ("0.10.2", "1.0.2", "1.1.0", "2.2.1", "2.3.0", "3.7.0"):
        segs = plan(audit(host, kafka_version=v))["segments"]
        loads[v] = [s["load"] for s in segs]
        if v == "0.10.2":
            assert "Log.loadSegments finds no index file" in segs[0]["reason"], segs
    assert loads == {
        "0.10.2": ["indexes_rebuilt"],
        "1.0.2": ["indexes_rebuilt"],
        "1.1.0": [],
        "2.2.1": [],
        "2.3.0": ["indexes_rebuilt"],
        "3.7.0": ["indexes_rebuilt"],
    }


def test_missing_index_above_the_recovery_point_of_an_unclean_stop_is_recovered(tmp_path: Path) -> None:
    """The 3.5.2 lab broker, killed right after a roll (the new segment's .index, created lazily, did not exist
    yet): loadSegmentFiles rebuilds the index, then recoverLog re-reads the segment as unflushed ("Recovering
    unflushed segment"): recovered, not only indexes_rebuilt. Below the recovery point it stays indexes_rebuilt."""
    host = simulate(tmp_path, failures=Failures(unclean_shutdown=True))
    by = fates(plan(audit(host)))
    (topic, p), segs = max(
        ((k[:2], [b for (t, q, b) in by if (t, q) == k[:2]]) for k in by), key=lambda kv: len(kv[1])
    )
    part = next(d for ld in host.log_dirs for d in [os.path.join(ld, f"{topic}-{p}")] if os.path.isdir(d))
    above = segs[-1]
    os.remove(seg_path(part, above, ".index"))
    below = [b for b in bases(part) if b < min(segs)]
    if below:
        os.remove(seg_path(part, below[0], ".index"))
    by = fates(plan(audit(host)))
    f = by[(topic, p, above)]
    assert f["load"] == "recovered" and ".index is missing" in f["reason"], f
    if below:
        assert by[(topic, p, below[0])]["load"] == "indexes_rebuilt"


def test_lost_found_makes_the_broker_exit(tmp_path: Path) -> None:
    host = simulate(tmp_path, failures=Failures(lost_found=True))
    ns = plan(audit(host))
    assert (ns["broker"], ns["check"]) == ("exits", "DIR003") and "lost+found" in ns["reason"]
    # the dirs' own states (the lab's brokers log no dir failure before exiting); nothing is loaded
    assert {d["state"] for d in ns["log_dirs"]} == {"online"}
    assert {d["segments_not_loaded"] for d in ns["log_dirs"]} != {0}


def test_meta_properties_of_another_cluster_make_the_broker_exit(tmp_path: Path) -> None:
    host = simulate(tmp_path, failures=Failures(meta_mismatch=True))
    ns = plan(audit(host))
    assert (ns["broker"], ns["check"]) == ("exits", "DIR002") and "cluster.id" in ns["reason"]


def test_zero_padded_timeindex_is_deleted_by_time_retention(tmp_path: Path) -> None:
    host = simulate(tmp_path, failures=Failures(untrimmed_timeindex=True))
    [timeindex] = host.planted["untrimmed_timeindex"]
    assert not [
        s for s in plan(audit(host))["segments"] if s["deleted_at"]
    ]  # beyond the default 24 h horizon
    report = audit(host, horizon_ms=10 * 24 * 3600 * 1000)  # RET001's deletion is 6.4 days out
    ns = plan(report)
    base = int(os.path.basename(timeindex).split(".")[0])
    [f] = [
        s
        for s in ns["segments"]
        if s["base_offset"] == base and s["log"].startswith(os.path.dirname(timeindex))
    ]
    assert f["load"] == "as_is" and f["deleted_by"] == "retention.ms" and "RET001" in f["checks"]
    [ret] = [x for x in report["findings"] if x["check"] == "RET001"]
    assert ret["details"]["deleted_at_ms"] == _ms(f["deleted_at"])


def _ms(iso: str) -> int:
    import datetime as dt

    return int(dt.datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1000)


def test_unreadable_timeindex_takes_its_log_dir_offline_and_nothing_is_deleted_there(
    open_tmp: Path,  # noqa: F811
    broker_users: Users,  # noqa: F811
) -> None:
    u = broker_users.broker
    from kafka_ops.simulator.host import HostSpec, simulate_host

    spec = HostSpec(
        now_ms=NOW_MS, failures=Failures(unreadable_timeindex=True, untrimmed_timeindex=True),
        broker_user=u.name, broker_uid=u.uid, broker_gid=u.gid,
    )  # fmt: skip
    host = simulate_host(str(open_tmp / "host"), spec)
    [unreadable] = host.planted["unreadable_timeindex"]
    report = audit(host, broker_user=u.name)
    ns = plan(report)
    bad_dir = next(ld for ld in host.log_dirs if unreadable.startswith(ld + "/"))
    d = next(x for x in ns["log_dirs"] if x["path"] == bad_dir)
    assert d["state"] == "offline" and d["check"] == "PERM001" and unreadable in d["reason"]
    assert d["segments_not_loaded"] == next(x for x in report["log_dirs"] if x["path"] == bad_dir)["segments"]
    # nothing of that dir is deleted: not in the plan, not in the forecast, not by RET001
    assert all(
        s["load"] == "not_loaded" and s["deleted_at"] is None
        for s in ns["segments"]
        if s["log"].startswith(bad_dir)
    )
    assert next(x for x in report["forecast"]["log_dirs"] if x["path"] == bad_dir)["deleted_bytes"] == 0
    assert not [
        f for f in report["findings"] if f["check"] == "RET001" and (f["path"] or "").startswith(bad_dir)
    ]
    assert any(f["check"] == "PERM001" for f in report["findings"])
    if bad_dir == sorted(host.log_dirs)[0]:
        # the KRaft metadata log dir (first of log.dirs): from 3.7 the broker halts when it fails (the lab's 3.9.1
        # broker did, scenario metadata_dir_offline; 3.5.2 served the other dir)
        assert (ns["broker"], ns["check"]) == ("exits", "PERM001") and "metadata log dir" in ns["reason"]
    else:  # the broker still starts on the other dir
        assert ns["broker"] == "starts"


def test_text_output_says_what_the_next_start_does(tmp_path: Path) -> None:
    host = simulate(tmp_path, failures=Failures(lost_found=True))
    args = [
        "--server-properties", host.server_properties, "--systemd-unit", host.systemd_unit,
        "--topic-configs", host.topic_configs, "--broker-state", "stopped", "--kafka-version", "3.9.1",
        "--now", str(NOW_MS),
    ]  # fmt: skip
    env = {**os.environ, "COLUMNS": "200"}
    kafka_ops = shutil.which("kafka-ops") or os.path.join(os.path.dirname(sys.executable), "kafka-ops")
    out = subprocess.run([kafka_ops, "audit", *args], capture_output=True, text=True, env=env)
    assert out.returncode == 1
    assert "Next start (Kafka 3.9.1): the broker EXITS:" in out.stdout and "[DIR003]" in out.stdout
    md = subprocess.run([kafka_ops, "audit", *args, "--format", "markdown"], capture_output=True, text=True)
    assert "## next start" in md.stdout and "the broker EXITS" in md.stdout


def test_messages_name_the_classes_of_the_version_asked_for(tmp_path: Path) -> None:
    host = simulate(tmp_path, failures=Failures(unclean_shutdown=True))

    def texts(version: str | None) -> str:
        r = audit(host, kafka_version=version)
        return " ".join(
            [f["message"] for f in r["findings"]] + [s["reason"] for s in r["next_start"]["segments"]]
        )

    v28, v37, unknown = texts("2.8.2"), texts("3.7.2"), texts(None)
    assert "Log.recoverLog" in v28 and "LogLoader" not in v28 and "UnifiedLog" not in v28
    assert "LogLoader.recoverLog" in v37
    assert "recoverLog" in unknown and not any(
        c in unknown for c in ("LogLoader", "UnifiedLog", "Log.recoverLog")
    )


def test_new_broker_with_empty_log_dirs_is_not_an_unclean_shutdown(tmp_path: Path) -> None:
    host = simulate(tmp_path)
    for d in host.log_dirs:  # formatted, never started: meta.properties only, no marker
        for name in os.listdir(d):
            p = os.path.join(d, name)
            if name != "meta.properties":
                shutil.rmtree(p) if os.path.isdir(p) else os.remove(p)
    report = audit(host)
    assert not [f for f in report["findings"] if f["check"] == "SHUT001"]
    assert plan(report)["broker"] == "starts" and plan(report)["segments"] == []


def test_a_partition_in_two_log_dirs_makes_the_broker_exit(tmp_path: Path) -> None:
    host = simulate(tmp_path)
    a, b = host.log_dirs
    name = sorted(n for n in os.listdir(a) if n.startswith("orders-"))[0]
    shutil.copytree(os.path.join(a, name), os.path.join(b, name))
    ns = plan(audit(host))
    assert (ns["broker"], ns["check"]) == ("exits", "DIR003") and "Duplicate log directories" in ns["reason"]


UUID = "5c1d0bd4a3e94b5c8a3f6e2d7b9c0a11"


def _with_retention(host: Any) -> tuple[str, list[int]]:
    """A partition dir of the simulated host with segments that time retention deletes within 10 days."""
    ns = plan(audit(host, horizon_ms=10 * 24 * 3600 * 1000))
    gone: dict[str, list[int]] = {}
    for s in ns["segments"]:
        if s["deleted_by"] == "retention.ms":
            gone.setdefault(os.path.dirname(s["log"]), []).append(s["base_offset"])
    assert gone, "the simulated host has no retention deletion to start from"
    return max(gone.items(), key=lambda kv: len(kv[1]))


def test_delete_dir_is_removed_whole_without_recovery_or_retention(tmp_path: Path) -> None:
    """A <tp>.<uuid>-delete dir (a deleted topic's partition the broker had not removed before it stopped) is
    queued at load and removed whole by kafka-delete-logs: max(initial task delay 30 s, file.delete.delay.ms
    60 s) after the start. The plan does not forecast retention on it, and does not recover it after an unclean
    stop (LogLoader skips recoverLog for a -delete dir)."""
    host = simulate(tmp_path, failures=Failures(unclean_shutdown=True))
    live, _ = _with_retention(host)
    copy = os.path.join(os.path.dirname(live), f"gone-0.{UUID}-delete")
    shutil.copytree(live, copy)
    report = audit(host, horizon_ms=10 * 24 * 3600 * 1000)
    ns = plan(report)
    mine = [s for s in ns["segments"] if os.path.dirname(s["log"]) == copy]
    assert sorted(s["base_offset"] for s in mine) == bases(copy)
    assert {(s["deleted_by"], s["load"], s["topic"], s["partition"]) for s in mine} == {
        ("delete_dir", "as_is", "gone", 0)
    }
    assert {_ms(s["deleted_at"]) for s in mine} == {NOW_MS + 60_000}
    # the live partition's own fates are unchanged: recovered above its recovery point, retention as before
    assert [s for s in ns["segments"] if os.path.dirname(s["log"]) == live]
    assert not [f for f in report["findings"] if f["check"].startswith("RET") and copy in str(f.get("path"))]
    assert "removes 1 -delete dir(s) whole" in "\n".join(plan_sentences(ns))


def test_delete_dir_waits_for_log_initial_task_delay_from_3_9(tmp_path: Path) -> None:
    host = simulate(tmp_path)
    live, _ = _with_retention(host)
    copy = os.path.join(os.path.dirname(live), f"gone-0.{UUID}-delete")
    shutil.copytree(live, copy)
    with open(host.server_properties, "a") as f:
        f.write("\nlog.initial.task.delay.ms=90000\nlog.segment.delete.delay.ms=1000\n")
    ns = plan(audit(host, kafka_version="3.9.0"))
    assert {_ms(s["deleted_at"]) for s in ns["segments"] if s["deleted_by"] == "delete_dir"} == {
        NOW_MS + 90_000
    }
    ns = plan(audit(host, kafka_version="3.8.0"))  # fixed 30 s, the 1 s delay already passed
    assert {_ms(s["deleted_at"]) for s in ns["segments"] if s["deleted_by"] == "delete_dir"} == {
        NOW_MS + 30_000
    }


def test_stray_dir_stops_a_broker_before_3_6_1_and_is_kept_without_retention_after(tmp_path: Path) -> None:
    """-stray is parsed from 3.6.1 (KAFKA-15605): loaded as a stray log, no retention, never deleted. Before, the
    name's partition '<uuid>-stray' is not an int and the broker exits (as for lost+found)."""
    host = simulate(tmp_path)
    live, _ = _with_retention(host)
    copy = os.path.join(os.path.dirname(live), f"gone-0.{UUID}-stray")
    shutil.copytree(live, copy)
    ns = plan(audit(host, kafka_version="3.5.2"))
    assert (ns["broker"], ns["check"]) == ("exits", "DIR003") and copy in ns["reason"]
    for v in ("3.6.1", "3.7.0"):
        ns = plan(audit(host, kafka_version=v, horizon_ms=10 * 24 * 3600 * 1000))
        assert ns["broker"] == "starts"
        assert not [s for s in ns["segments"] if os.path.dirname(s["log"]) == copy], v
        assert [s for s in ns["segments"] if os.path.dirname(s["log"]) == live and s["deleted_at"]], v


def test_swap_leftover_replaces_the_segments_it_covers(tmp_path: Path) -> None:
    """An interrupted cleaning's <base>.log.swap holding the first two segments' records: at load the broker
    swaps it in at the first segment's base and deletes the second (LogLoader from 3.0, Log.completeSwapOperations
    before); a .swap at or above the smallest .cleaned offset is an unfinished split, deleted instead (2.0+)."""
    host = simulate(tmp_path)
    part = max((p for p in host.partitions.values()), key=lambda p: len(bases(p)))
    b0, b1, b2 = bases(part)[:3]
    with open(seg_path(part, b0, ".log.swap"), "wb") as out:
        for b in (b0, b1):
            with open(seg_path(part, b, ".log"), "rb") as f:
                out.write(f.read())
    for v in ("2.8.2", "3.7.0"):
        ns = plan(audit(host, kafka_version=v))
        mine = {s["base_offset"]: s for s in ns["segments"] if os.path.dirname(s["log"]) == part}
        assert mine[b0]["load"] == "swapped_in" and mine[b0]["deleted_at"] is None, v
        assert (mine[b1]["deleted_by"], _ms(mine[b1]["deleted_at"])) == ("swap", NOW_MS), v
        assert b2 not in mine, v
        assert "completes 1 interrupted swap(s)" in "\n".join(plan_sentences(ns)), v
    shutil.copy(seg_path(part, b0, ".log"), seg_path(part, b0, ".log.cleaned"))
    ns = plan(audit(host, kafka_version="3.7.0"))
    assert not [s for s in ns["segments"] if os.path.dirname(s["log"]) == part]
    for v in ("2.0.0", "2.8.2"):  # KAFKA-6264 is in the 2.0.0 tag (commit 9c1cb407d89)
        ns = plan(audit(host, kafka_version=v))
        assert not [s for s in ns["segments"] if os.path.dirname(s["log"]) == part], v
    ns = plan(audit(host, kafka_version="1.1.1"))  # no KAFKA-6264 rule yet: swapped in
    assert {s["load"] for s in ns["segments"] if s["base_offset"] == b0 and s["log"].startswith(part)} == {
        "swapped_in"
    }


def test_index_swaps_without_a_log_swap_rebuild_the_segment_up_to_2_8_and_are_renamed_in_from_3_0(
    tmp_path: Path,
) -> None:
    """``<base>.index.swap``, ``.timeindex.swap`` and ``.txnindex.swap`` and no ``.log.swap`` (a swap stopped after
    the new .log was renamed in): up to 2.8 the loader deletes that base's indexes and keeps the swaps, so the
    segment is rebuilt (2.3-2.8) or loads with new empty indexes (1.1-2.2: not rebuilt); from 3.0 the swaps are
    renamed into place and the segment loads as it is. No segment is deleted either way (the lab's index_swap
    trial saw 2.2.1, 2.8.2, 3.5.2, 3.7.2 and 4.3.1 brokers do it)."""
    host = simulate(tmp_path)
    part = max((p for p in host.partitions.values()), key=lambda p: len(bases(p)))
    b0 = bases(part)[0]
    for suffix in (".index", ".timeindex"):
        shutil.copy(seg_path(part, b0, suffix), seg_path(part, b0, suffix + ".swap"))
    open(seg_path(part, b0, ".txnindex.swap"), "wb").close()

    def mine(v: str) -> dict[int, dict[str, Any]]:
        ns = plan(audit(host, kafka_version=v))
        return {s["base_offset"]: s for s in ns["segments"] if os.path.dirname(s["log"]) == part}

    for v in ("2.3.0", "2.8.2"):
        got = mine(v)
        assert list(got) == [b0] and got[b0]["load"] == "indexes_rebuilt" and got[b0]["deleted_at"] is None, v
        assert "an index .swap of its base is there" in got[b0]["reason"], v
    for v in ("1.1.1", "2.2.1", "3.0.0", "3.7.0", "4.3.1"):
        assert mine(v) == {}, v
    # the swaps are not leftovers the start deletes (kept up to 2.8, renamed in from 3.0)
    ns = plan(audit(host, kafka_version="2.8.2"))
    assert not [lf for lf in ns["leftovers"] if lf["path"].endswith(".swap")]


def test_a_future_dir_replaces_its_current_dir_and_without_it_is_truncated_to_nothing(tmp_path: Path) -> None:
    """An interrupted intra-broker move, ``<tp>.<uuid>-future`` in the other log dir: the move resumes after the
    start and the future log replaces the current one, nothing lost (no segment listed). Without the partition's
    current dir the broker creates it empty, truncates the future log to offset 0 and makes it the partition's log:
    every segment of the future dir but an emptied first one is deleted, DIR003 critical (lab 2.2.1-4.3.1 brokers
    did both: ``future_dir``, ``future_dir_alone``). A broker that exits keeps the dir."""
    host = simulate(tmp_path)
    part = max((p for p in host.partitions.values()), key=lambda p: len(bases(p)))
    other = next(d for d in host.log_dirs if not part.startswith(d + "/"))
    future = os.path.join(other, os.path.basename(part) + ".0123456789abcdef0123456789abcdef-future")
    shutil.copytree(part, future)
    for v in ("2.2.1", "3.7.2", "4.3.1"):
        report = audit(host, kafka_version=v)
        ns = plan(report)
        [fd] = ns["future_dirs"]
        assert (fd["path"], fd["current"], fd["fate"], fd["records_lost"]) == (
            future,
            part,
            "replaces_current",
            False,
        )
        assert not [s for s in ns["segments"] if os.path.dirname(s["log"]) == future], v
        # the current dir goes with its -delete rename, removed by the kafka-delete-logs task
        gone = [s for s in ns["segments"] if os.path.dirname(s["log"]) == part]
        assert sorted(s["base_offset"] for s in gone) == bases(part), v
        assert {s["deleted_by"] for s in gone} == {"delete_dir"} and {s["load"] for s in gone} == {"as_is"}, v
        assert not [f for f in report["findings"] if f["check"] == "DIR003" and f["severity"] == "critical"]
    shutil.rmtree(part)
    report = audit(host, kafka_version="3.7.2")
    ns = plan(report)
    [fd] = ns["future_dirs"]
    assert (fd["current"], fd["fate"], fd["records_lost"]) == (None, "replaces_current", True)
    mine = {s["base_offset"]: s for s in ns["segments"] if os.path.dirname(s["log"]) == future}
    b = bases(future)
    assert sorted(mine) == b and b[0] == 0
    assert mine[0]["truncated_bytes"] == os.path.getsize(seg_path(future, 0, ".log"))
    assert mine[0]["deleted_at"] is None
    assert {(s["deleted_by"], _ms(s["deleted_at"])) for o, s in mine.items() if o} == {("truncation", NOW_MS)}
    [f] = [f for f in report["findings"] if f["check"] == "DIR003" and f["severity"] == "critical"]
    assert f["path"] == future and "LOST" in f["message"] and "mv " in f["remediation"]
    assert "records are LOST" in "\n".join(plan_sentences(ns))
    os.makedirs(os.path.join(other, "lost+found"))  # the broker exits: the dir stays as it is
    [fd] = plan(audit(host, kafka_version="3.7.2"))["future_dirs"]
    assert (fd["fate"], fd["records_lost"]) == ("kept", False)


def leftover_fates(ns: dict[str, Any]) -> dict[str, tuple[str, str]]:
    return {os.path.basename(lf["path"]): (lf["kind"], lf["fate"]) for lf in ns["leftovers"]}


def test_deleted_and_cleaned_leftovers_are_deleted_at_load(tmp_path: Path) -> None:
    """A .deleted copy of a closed segment (retention renamed it, the broker stopped before file.delete.delay.ms)
    and a .cleaned file: loading the partition deletes both (removeTempFilesAndCollectSwapFiles, every release);
    the segments themselves load as they are. The lab's leftovers scenario saw real brokers do it."""
    host = simulate(tmp_path)
    part = max((p for p in host.partitions.values()), key=lambda p: len(bases(p)))
    b0, b1 = bases(part)[:2]
    for suffix in (".log", ".index"):
        shutil.copy(seg_path(part, b1, suffix), seg_path(part, b1, suffix + ".deleted"))
    shutil.copy(seg_path(part, b0, ".log"), seg_path(part, b0, ".log.cleaned"))
    names = {
        os.path.basename(seg_path(part, b1, ".log.deleted")): ("deleted", "deleted_at_load"),
        os.path.basename(seg_path(part, b1, ".index.deleted")): ("deleted", "deleted_at_load"),
        os.path.basename(seg_path(part, b0, ".log.cleaned")): ("cleaned", "deleted_at_load"),
    }
    for v in ("1.1.1", "2.2.1", "3.7.0", "4.1.0"):
        report = audit(host, kafka_version=v)
        ns = plan(report)
        assert ns["broker"] == "starts" and ns["segments"] == [], v
        assert leftover_fates(ns) == names, v
        reasons = {os.path.basename(lf["path"]): lf["reason"] for lf in ns["leftovers"]}
        fn = (
            "Log.removeTempFilesAndCollectSwapFiles"
            if v < "3"
            else "LogLoader.removeTempFilesAndCollectSwapFiles"
        )
        assert all(fn in r for r in reasons.values()), (v, reasons)
        assert (
            "Deleting stray temporary file" in reasons[os.path.basename(seg_path(part, b1, ".log.deleted"))]
        )
        text = "\n".join(plan_sentences(ns))
        assert "deletes 3 leftover file(s) at load (.cleaned, .deleted" in text, text
        assert "loads every segment as it is" in text, text
        # DIR003 says the same (info)
        [dir003] = [f for f in report["findings"] if f["check"] == "DIR003" and f["path"].startswith(part)]
        assert dir003["severity"] == "info" and "deleted at load" in dir003["message"]


def test_unfinished_split_swaps_are_deleted_at_load_as_each_release_collects_them(tmp_path: Path) -> None:
    """A .swap at or above the smallest .cleaned offset is an unfinished split (KAFKA-6264, 2.0+): deleted at
    load with the .cleaned. Up to 2.8 only a .log.swap is collected, with the index swaps of its base; from 3.0
    every .swap file at or above the offset. 1.1 swaps it in (swaps.py) and lists only the .cleaned."""
    host = simulate(tmp_path)
    part = max((p for p in host.partitions.values()), key=lambda p: len(bases(p)))
    _b0, b1, b2 = bases(part)[:3]
    shutil.copy(seg_path(part, b1, ".log"), seg_path(part, b1, ".log.cleaned"))
    shutil.copy(seg_path(part, b1, ".log"), seg_path(part, b1, ".log.swap"))
    shutil.copy(seg_path(part, b1, ".index"), seg_path(part, b1, ".index.swap"))
    shutil.copy(seg_path(part, b2, ".index"), seg_path(part, b2, ".index.swap"))  # no .log.swap at b2
    name = lambda b, sfx: os.path.basename(seg_path(part, b, sfx))  # noqa: E731
    cleaned = {name(b1, ".log.cleaned"): ("cleaned", "deleted_at_load")}
    split = {
        name(b1, ".log.swap"): ("swap", "deleted_at_load"),
        name(b1, ".index.swap"): ("swap", "deleted_at_load"),
    }
    ns = plan(audit(host, kafka_version="3.7.0"))
    assert leftover_fates(ns) == cleaned | split | {name(b2, ".index.swap"): ("swap", "deleted_at_load")}
    assert not [s for s in ns["segments"] if os.path.dirname(s["log"]) == part]  # nothing swapped in
    ns = plan(audit(host, kafka_version="2.8.2"))
    assert leftover_fates(ns) == cleaned | split
    ns = plan(audit(host, kafka_version="1.1.1"))
    assert leftover_fates(ns) == cleaned
    assert {s["load"] for s in ns["segments"] if s["base_offset"] == b1 and s["log"].startswith(part)} == {
        "swapped_in"
    }


def test_a_deleted_file_of_any_name_is_deleted_at_load(tmp_path: Path) -> None:
    """The loader goes by the suffix: ``leader-epoch-checkpoint.deleted`` is deleted like a segment's ``.deleted``
    in every release; from 3.3 (KAFKA-14240) a ``*.checkpoint.deleted`` is a KRaft snapshot's and left alone."""
    host = simulate(tmp_path)
    part = max((p for p in host.partitions.values()), key=lambda p: len(bases(p)))
    Path(part, "backup.deleted").write_bytes(b"x")
    Path(part, "old.checkpoint.deleted").write_bytes(b"x")
    for v in ("1.1.1", "2.2.1", "3.2.3", "3.7.0", "4.1.0"):
        ns = plan(audit(host, kafka_version=v))
        assert ns["broker"] == "starts", v
        want = {"backup.deleted": ("deleted", "deleted_at_load")}
        if v < "3.3":
            want["old.checkpoint.deleted"] = ("deleted", "deleted_at_load")
        assert leftover_fates(ns) == want, v
        [reason] = [lf["reason"] for lf in ns["leftovers"] if lf["path"].endswith("backup.deleted")]
        assert "not a segment file's name" in reason and "Deleting stray temporary file" in reason


def test_a_cleaned_or_swap_name_without_an_offset_makes_the_broker_exit(tmp_path: Path) -> None:
    """``offsetFromFileName`` (Long.parseLong of the name up to its first dot) throws NumberFormatException on
    ``backup.log.cleaned``: not an IOException, so LogManager.loadLogs rethrows it and the broker exits (2.0+; 1.1
    deletes a .cleaned unread). A ``.swap``: up to 2.8 only a log or index swap is parsed, from 3.0 every one.
    DIR003 says so (critical); a name with a sign or a long's digits parses and changes nothing."""
    host = simulate(tmp_path)
    part = max((p for p in host.partitions.values()), key=lambda p: len(bases(p)))
    cleaned = Path(part, "backup.log.cleaned")
    cleaned.write_bytes(b"x")
    for v, broker in (("1.1.1", "starts"), ("2.2.1", "exits"), ("3.7.0", "exits"), ("4.1.0", "exits")):
        report = audit(host, kafka_version=v)
        ns = plan(report)
        assert ns["broker"] == broker, v
        crit = [f for f in report["findings"] if f["check"] == "DIR003" and f["severity"] == "critical"]
        if broker == "starts":
            assert leftover_fates(ns) == {"backup.log.cleaned": ("cleaned", "deleted_at_load")}
            assert crit == [], crit
            continue
        assert (
            ns["check"] == "DIR003"
            and "Long.parseLong('backup') throws NumberFormatException" in ns["reason"]
        )
        assert leftover_fates(ns) == {"backup.log.cleaned": ("cleaned", "kept")}
        [f] = crit
        assert f["path"] == str(cleaned) and "mv " in f["remediation"] and report["summary"]["critical"] >= 1
    cleaned.unlink()
    swap = Path(part, "backup.swap")  # not a log or index swap: parsed from 3.0 only
    swap.write_bytes(b"x")
    assert plan(audit(host, kafka_version="2.8.2"))["broker"] == "starts"
    assert plan(audit(host, kafka_version="3.0.0"))["broker"] == "exits"
    swap.unlink()
    Path(part, "copy.index.swap").write_bytes(b"x")  # an index swap: parsed in every release
    assert plan(audit(host, kafka_version="1.1.1"))["broker"] == "exits"
    Path(part, "copy.index.swap").unlink()
    Path(part, "+7.log.cleaned").write_bytes(b"x")  # parseLong accepts a sign
    assert plan(audit(host, kafka_version="3.7.0"))["broker"] == "starts"


def test_leftovers_stay_when_the_broker_exits(tmp_path: Path) -> None:
    """lost+found in a log dir: the broker exits while listing the logs to load: nothing is deleted."""
    host = simulate(tmp_path, failures=Failures(lost_found=True))
    part = max((p for p in host.partitions.values()), key=lambda p: len(bases(p)))
    b0 = bases(part)[0]
    shutil.copy(seg_path(part, b0, ".log"), seg_path(part, b0, ".log.deleted"))
    ns = plan(audit(host))
    assert ns["broker"] == "exits"
    [lf] = ns["leftovers"]
    assert (lf["fate"], lf["kind"]) == ("kept", "deleted") and "lost+found" in lf["reason"]
    assert "leftover file(s)" not in "\n".join(plan_sentences(ns))


def test_running_broker_plan_lists_no_leftovers(tmp_path: Path) -> None:
    host = simulate(tmp_path, running=True)
    part = max((p for p in host.partitions.values()), key=lambda p: len(bases(p)))
    shutil.copy(seg_path(part, bases(part)[0], ".log"), seg_path(part, bases(part)[0], ".log.deleted"))
    assert plan(audit(host, broker_state="running"))["leftovers"] == []


def test_delete_dir_after_an_unclean_stop_is_not_counted_as_recovery(tmp_path: Path) -> None:
    """SHUT001's recovery estimate and the plan agree: a -delete dir is not re-read after an unclean stop."""
    host = simulate(tmp_path, failures=Failures(unclean_shutdown=True))
    before = audit(host)
    live, _ = _with_retention(host)
    shutil.copytree(live, os.path.join(os.path.dirname(live), f"gone-0.{UUID}-delete"))
    after = audit(host)
    assert [d["recover_segments"] for d in after["log_dirs"]] == [
        d["recover_segments"] for d in before["log_dirs"]
    ]
    assert len([s for s in after["next_start"]["segments"] if s["load"] == "recovered"]) == sum(
        d["recover_segments"] for d in after["log_dirs"]
    )


def test_leftovers_in_a_dir_that_goes_offline_at_load(
    open_tmp: Path,  # noqa: F811
    broker_users: Users,  # noqa: F811
) -> None:
    """An unreadable .timeindex takes its log dir offline while that partition loads ('Could not read file'):
    its own leftovers may stay (the loader stops at the first unreadable file it lists), but LogManager.loadLogs
    still loads the dir's other partitions and deletes theirs (handleIOException only records the dir)."""
    u = broker_users.broker
    from kafka_ops.simulator.host import HostSpec, simulate_host

    spec = HostSpec(
        now_ms=NOW_MS, failures=Failures(unreadable_timeindex=True),
        broker_user=u.name, broker_uid=u.uid, broker_gid=u.gid,
    )  # fmt: skip
    host = simulate_host(str(open_tmp / "host"), spec)
    [unreadable] = host.planted["unreadable_timeindex"]
    failing = os.path.dirname(unreadable)
    other = next(
        p for p in host.partitions.values() if os.path.dirname(p) == os.path.dirname(failing) and p != failing
    )
    for part in (failing, other):
        b0 = bases(part)[0]
        dst = seg_path(part, b0, ".log.deleted")
        shutil.copy(seg_path(part, b0, ".log"), dst)
        os.chown(dst, u.uid, u.gid)
    # 3.6.1: a KRaft broker before 3.7 does not halt when the metadata log dir fails; 3.7.0 may (first dir)
    for v in ("3.6.1", "3.7.0"):
        ns = plan(audit(host, broker_user=u.name, kafka_version=v))
        fate = {os.path.dirname(lf["path"]): lf for lf in ns["leftovers"]}
        assert set(fate) == {failing, other}, v
        if ns["broker"] == "exits":  # the KRaft metadata log dir (first of log.dirs) halts a 3.7+ broker
            assert v == "3.7.0" and {lf["fate"] for lf in fate.values()} == {"kept"}
            continue
        assert (
            fate[failing]["fate"] == "kept" and "loading this partition fails" in fate[failing]["reason"]
        ), v
        assert fate[other]["fate"] == "deleted_at_load", v
        assert "goes offline over another one" in fate[other]["reason"], v


def test_offsets_are_read_from_names_as_long_parselong_reads_them() -> None:
    """The loader's offsetFromFileName: an optional sign, Unicode decimal digits, a signed 64-bit range."""
    from kafka_ops.broker.leftovers import java_long, offset

    assert [java_long(t) for t in ("5", "+5", "-1", "٣", "00000000000000000012")] == [5, 5, -1, 3, 12]
    assert [java_long(t) for t in ("", "+", "1_0", " 1", "0x1", "9223372036854775808")] == [None] * 6
    assert java_long("-9223372036854775808") == -(1 << 63)
    assert (
        offset("/d/t-0/backup.log.cleaned") is None and offset("/d/t-0/00000000000000000042.log.swap") == 42
    )


def test_retention_runs_on_a_future_dir_without_its_current_dir_up_to_2_0_only(tmp_path: Path) -> None:
    """Up to 2.0 LogManager.cleanupLogs walks allLogs, future logs too; from 2.1 (KAFKA-7322) only the future log
    beside a deletable current log: a -future dir whose current dir is not on the host gets no retention, and
    the forecast of its log dir counts none of its bytes."""
    host = simulate(tmp_path)
    live, _ = _with_retention(host)
    other = next(d for d in host.log_dirs if not live.startswith(d + "/"))
    horizon = 10 * 24 * 3600 * 1000

    def deleted_in_other(version: str) -> int:
        report = audit(host, kafka_version=version, horizon_ms=horizon)
        return int(next(x for x in report["forecast"]["log_dirs"] if x["path"] == other)["deleted_bytes"])

    before = {v: deleted_in_other(v) for v in ("2.0.1", "2.2.1")}
    future = os.path.join(other, os.path.basename(live) + ".0123456789abcdef0123456789abcdef-future")
    shutil.copytree(live, future)
    shutil.rmtree(live)
    assert deleted_in_other("2.2.1") == before["2.2.1"]
    assert deleted_in_other("2.0.1") > before["2.0.1"]
