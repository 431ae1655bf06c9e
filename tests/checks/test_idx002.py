"""IDX002: offset index last offset below the base offset (or equal to it, up to Kafka 2.0)."""

from __future__ import annotations

from .index_hosts import Failures, audit, findings, offset_entries, simulate


def test_idx002_last_offset_below_base(tmp_path) -> None:  # type: ignore[no-untyped-def]
    host = simulate(tmp_path, failures=Failures(index_below_base=True))
    [planted] = host.planted["index_below_base"]
    base = int(planted.rsplit("/", 1)[1].split(".")[0])

    [f] = findings(audit(host, kafka_version="3.7.0"), "IDX002")
    assert (f["check"], f["severity"], f["path"], f["segment"]) == ("IDX002", "error", planted, base)
    d = f["details"]
    assert (d["rule"], d["last_offset"], d["base_offset"], d["last_position"]) == (
        "last_offset_below_base", base - 5, base, 0,
    )  # fmt: skip
    assert d["next_start"] == "kept"  # 3.7.0, clean stop: not checked at load, not recovered
    assert f"the last offset is {base - 5} which is less than the base offset {base}" in f["message"]
    assert "starts its scan at position 0" in f["message"]

    # < 2.3.0 checks every index at load and rebuilds it
    [old] = findings(audit(host, kafka_version="2.2.0"), "IDX002")
    assert old["details"]["next_start"] == "rebuilt" and "rebuilding index" in old["message"]


def test_idx002_equal_to_base_only_up_to_1_1(tmp_path) -> None:  # type: ignore[no-untyped-def]
    host = simulate(tmp_path, failures=Failures(untrimmed_timeindex=True))
    [timeindex] = host.planted["untrimmed_timeindex"]
    index = timeindex.replace(".timeindex", ".index")
    base = int(index.rsplit("/", 1)[1].split(".")[0])

    assert findings(audit(host, kafka_version="3.7.0"), "IDX002") == []  # KAFKA-7076: "<" since 2.0.0
    # a real 2.0.1 broker loaded such an index as it is (the lab's clean trial)
    assert findings(audit(host, kafka_version="2.0.1"), "IDX002") == []
    [f] = findings(audit(host, kafka_version="1.1.1"), "IDX002")
    assert (f["severity"], f["path"], f["segment"]) == ("error", index, base)
    assert f["details"]["rule"] == "last_offset_equals_base" and f["details"]["last_offset"] == base
    assert f["details"]["entries"] == 10 * 1024 * 1024 // 8 and f["details"]["next_start"] == "rebuilt"
    assert f"which is no greater than the base offset {base}" in f["message"]  # 1.1.x wording
    [seed] = findings(audit(host, kafka_version="1.0.0"), "IDX002")
    assert f"which is no larger than the base offset {base}" in seed["message"]  # seed 002's wording


def test_idx002_not_for_segments_an_unclean_start_recovers_anyway(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # a killed 1.0 broker leaves every active index zero-padded (last offset == base): recovery rebuilds them
    host = simulate(tmp_path, failures=Failures(unclean_shutdown=True))
    assert findings(audit(host, kafka_version="1.0.0"), "IDX002") == []


def test_idx002_nothing_on_a_healthy_host(healthy_host) -> None:  # type: ignore[no-untyped-def]
    for version in ("3.7.0", "2.0.0", "1.1.1", "1.0.0", None):
        assert findings(audit(healthy_host, kafka_version=version), "IDX002") == []
    part = healthy_host.partitions["orders-0"]
    assert offset_entries(part, 0)  # the healthy indexes do have entries
