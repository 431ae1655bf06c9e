"""IDX003: index entries not monotonic or pointing past the end of the .log (cheap by default, full when read)."""

from __future__ import annotations

import os

from .index_hosts import (
    Failures,
    append_offset_entry,
    audit,
    bases,
    findings,
    offset_entries,
    seg_path,
    simulate,
    time_entries,
    write_offset_entries,
    write_time_entries,
)


def test_idx003_entry_past_the_end_of_the_log(tmp_path) -> None:  # type: ignore[no-untyped-def]
    host = simulate(tmp_path)
    part = host.partitions["orders-0"]
    b = bases(part)
    rolled, active = b[1], b[-1]
    rolled_size = os.path.getsize(seg_path(part, rolled, ".log"))
    last_off, _ = offset_entries(part, rolled)[-1]
    append_offset_entry(part, rolled, last_off + 3, rolled_size + 100)
    active_size = os.path.getsize(seg_path(part, active, ".log"))
    append_offset_entry(part, active, offset_entries(part, active)[-1][0] + 50, active_size + 10)

    found = {f["segment"]: f for f in findings(audit(host), "IDX003")}
    assert set(found) == {rolled, active}
    r = found[rolled]
    assert (r["severity"], r["path"]) == ("error", seg_path(part, rolled, ".index"))
    assert r["details"]["depth"] == "first_last_slot"
    assert r["details"]["kinds"] == ["offset_past_log_end", "past_end"]
    assert (
        f"points at position {rolled_size + 100}, past the end of the log ({rolled_size} bytes)"
        in r["message"]
    )
    assert f"records end before offset {b[2]}" in r["message"]  # the next segment's base offset
    a = found[active]
    assert "readNextOffset" in a["message"] and f"take {active} as the log end offset" in a["message"]


def test_idx003_time_index_not_monotonic(tmp_path) -> None:  # type: ignore[no-untyped-def]
    host = simulate(tmp_path)
    part = host.partitions["orders-1"]
    base = bases(part)[3]
    entries = time_entries(part, base)
    assert len(entries) >= 2
    entries[-1] = (entries[0][0] - 1000, entries[-1][1])
    write_time_entries(part, base, entries)

    [f] = findings(audit(host), "IDX003")
    assert (f["path"], f["segment"], f["severity"]) == (seg_path(part, base, ".timeindex"), base, "error")
    assert f["details"]["index"] == "time" and f["details"]["kinds"] == ["non_monotonic"]
    assert f"timestamp {entries[0][0] - 1000}" in f["message"]


def test_idx003_full_check_under_deep_and_for_recovered_segments(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # two entries swapped in the middle: first and last slot look fine, only a full read sees it
    host = simulate(tmp_path, failures=Failures(unclean_shutdown=True))
    part = host.partitions["orders-2"]
    b = bases(part)
    for base in (b[2], b[-2]):  # b[-2] is at the recovery point: the next start recovers it
        e = offset_entries(part, base)
        assert len(e) >= 3
        e[0], e[1] = e[1], e[0]
        write_offset_entries(part, base, e)

    default = {f["segment"]: f for f in findings(audit(host), "IDX003")}
    assert set(default) == {b[-2]}  # read anyway by the recovery scan; b[2] is below the recovery point
    assert (
        default[b[-2]]["details"]["depth"] == "full" and default[b[-2]]["details"]["next_start"] == "rebuilt"
    )
    deep = {f["segment"]: f for f in findings(audit(host, deep=True), "IDX003")}
    assert set(deep) == {b[2], b[-2]}
    assert (
        deep[b[2]]["details"]["kinds"] == ["non_monotonic"] and deep[b[2]]["details"]["next_start"] == "kept"
    )
    assert "slot 1: offset" in deep[b[2]]["message"]


def test_idx003_nothing_on_healthy_or_otherwise_broken_hosts(healthy_host, broken_host) -> None:  # type: ignore[no-untyped-def]
    for host in (healthy_host, broken_host):  # zero padding, remainders, torn tails are other checks'
        assert findings(audit(host), "IDX003") == []
        assert findings(audit(host, deep=True), "IDX003") == []
