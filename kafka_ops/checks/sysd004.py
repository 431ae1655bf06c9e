"""SYSD004: the JVM's heap plus direct memory does not fit the unit's memory limit or the host with page cache.

What the JVM can grow to: the heap (-Xmx; kafka-server-start.sh sets KAFKA_HEAP_OPTS="-Xmx1G -Xms1G" when it
is unset; without -Xmx HotSpot takes MaxRAMPercentage, 25 %, of RAM), direct buffers (-XX:MaxDirectMemorySize;
unset, HotSpot allows as much as the maximum heap: VM.maxDirectMemory() = Runtime.maxMemory()), and the rest
of the process (metaspace, code cache, thread stacks, GC data structures): NON_HEAP_BYTES plus
GC_OVERHEAD x heap.

Where it must fit:

* the unit's cgroup: MemoryMax= (cgroup v2; MemoryLimit= is its deprecated cgroup-v1 name,
  systemd.resource-control(5)). Page cache is charged to the cgroup too, but the kernel reclaims it first;
  when the process's own memory reaches the limit the kernel's OOM killer sends SIGKILL inside the cgroup;
* the host: Kafka serves reads and buffers writes through the page cache ("Don't fear the filesystem",
  docs/design.html), so the JVM should leave at least PAGE_CACHE_SHARE of RAM (and PAGE_CACHE_MIN_BYTES) to
  the page cache and the OS; a JVM bigger than RAM is killed by the host's OOM killer (the OOM-kill incident).

Percentages (MemoryMax=80%) are of the host's RAM (HostFacts.mem_total).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from kafka_ops.checks.base import Finding, check
from kafka_ops.engine.shell import q
from kafka_ops.facts.context import Context
from kafka_ops.facts.model import HostFacts
from kafka_ops.facts.systemd import parse_bytes
from kafka_ops.units import human_bytes

GIB = 1024**3
NON_HEAP_BYTES = 512 * 1024 * 1024  # metaspace (~100 MiB for Kafka), code cache (240 MiB reserved), stacks
GC_OVERHEAD = 0.10  # G1 remembered sets, card table, marking bitmaps: a few % to 10 % of the heap
PAGE_CACHE_SHARE = 0.25
PAGE_CACHE_MIN_BYTES = GIB
DIRECT_CAP = GIB  # what the remediation caps direct memory at
_RAM_PCT = re.compile(r"-XX:MaxRAMPercentage=(\d+(?:\.\d+)?)")


def _limit(h: HostFacts) -> tuple[int | None, str | None]:
    unit = h.unit
    assert unit is not None
    for key in ("MemoryMax", "MemoryLimit"):
        raw = (unit.service.get(key) or "").strip()
        if not raw:
            continue
        if raw.endswith("%") and h.mem_total:
            try:
                return int(
                    float(raw[:-1]) / 100 * h.mem_total
                ), f"{key}={raw} of {human_bytes(h.mem_total)} RAM"
            except ValueError:
                continue
        try:
            v = parse_bytes(raw)
        except ValueError:
            continue
        return v, (f"{key}={raw}" if v is not None else None)
    return None, None


@check(
    "SYSD004",
    severity="warning",
    scope="host",
    title="JVM heap + direct memory does not fit the unit's MemoryMax= or the host with room for the page cache",
    incident="the host's memory filled up and the OOM killer SIGKILLed the broker: no clean-shutdown "
    "marker, hours of index rebuilds",
    needs=("systemd_unit",),
)
def run(ctx: Context, h: HostFacts) -> Iterator[Finding]:
    jvm = h.jvm
    if jvm is None:
        return
    heap, heap_source = jvm.heap_max_bytes, jvm.source
    if heap is None:
        m = _RAM_PCT.search(jvm.opts)
        pct = float(m.group(1)) if m else 25.0
        if not h.mem_total:
            return
        heap = int(pct / 100 * h.mem_total)
        heap_source = f"no -Xmx: MaxRAMPercentage {pct:g} % of RAM"
    direct = jvm.direct_max_bytes if jvm.direct_max_bytes is not None else heap
    direct_source = (
        "-XX:MaxDirectMemorySize" if "MaxDirectMemorySize" in jvm.opts else "unset: as large as the heap"
    )
    other = NON_HEAP_BYTES + int(GC_OVERHEAD * heap)
    footprint = heap + direct + other
    limit, limit_source = _limit(h)
    problems = []
    if limit is not None and footprint > limit:
        problems.append(
            f"the unit's {limit_source} ({human_bytes(limit)}) is below it: when the JVM's own memory reaches the "
            "limit (page cache in the cgroup is reclaimed first), the kernel OOM-kills it inside the cgroup"
        )
    room = max(PAGE_CACHE_MIN_BYTES, int(PAGE_CACHE_SHARE * h.mem_total)) if h.mem_total else None
    if h.mem_total and room is not None and footprint + room > h.mem_total:
        if footprint > h.mem_total:
            problems.append(
                f"the host has {human_bytes(h.mem_total)} of RAM, less than that: the host's OOM killer ends the "
                "broker as it grows (the OOM-kill incident)"
            )
        else:
            problems.append(
                f"the host has {human_bytes(h.mem_total)} of RAM: it leaves {human_bytes(h.mem_total - footprint)} for "
                f"the page cache and the OS, less than {human_bytes(room)} ({PAGE_CACHE_SHARE:.0%} of RAM): reads "
                "that should hit the page cache go to disk, and other processes push the host into the OOM killer"
            )
    if not problems:
        return
    unit = h.unit
    assert unit is not None
    fits = min(x for x in (limit, (h.mem_total - room) if h.mem_total and room else None) if x is not None)
    message = (
        f"The broker's JVM can grow to {human_bytes(footprint)}: heap {human_bytes(heap)} ({heap_source}), direct "
        f"memory {human_bytes(direct)} ({direct_source}) and about {human_bytes(other)} outside both "
        f"({human_bytes(NON_HEAP_BYTES)} + {GC_OVERHEAD:.0%} of the heap); "
        + "; and ".join(problems)
        + ". An OOM kill is a SIGKILL: no clean shutdown, no .kafka_cleanshutdown, full recovery at the next start."
    )
    # a heap that fits with direct memory capped at DIRECT_CAP: h + cap + NON_HEAP + GC_OVERHEAD * h <= fits
    heap_gib = max(1, min(heap // GIB, int((fits - DIRECT_CAP - NON_HEAP_BYTES) / ((1 + GC_OVERHEAD) * GIB))))
    kafka_opts = " ".join(
        x for x in (re.sub(r"-XX:MaxDirectMemorySize=\S+", "", unit.environment.get("KAFKA_OPTS", "")).strip(),
                    "-XX:MaxDirectMemorySize=1g") if x
    )  # fmt: skip
    # printf's format: its \\n are the line ends; a % or a quote in the unit's KAFKA_OPTS stays literal
    dropin = (
        f'[Service]\\nEnvironment="KAFKA_HEAP_OPTS=-Xms{heap_gib}g -Xmx{heap_gib}g" '
        f'"KAFKA_OPTS={kafka_opts.replace("%", "%%")}"\\n'
    )
    remediation = (
        f"Make heap + direct + {human_bytes(NON_HEAP_BYTES)} + {GC_OVERHEAD:.0%} of the heap fit in "
        f"{human_bytes(fits)}: cap direct memory (-XX:MaxDirectMemorySize=1g is plenty for the network buffers) and "
        f"size the heap for the broker, not the host (Kafka's ops guide: -Xmx6g on 24 GB machines, the rest left "
        f"to the page cache): with a {heap_gib} GiB heap it fits. A drop-in: mkdir -p "
        f"{q(f'/etc/systemd/system/{unit.name}.d')} && printf {q(dropin)} > "
        f"{q(f'/etc/systemd/system/{unit.name}.d/kafka-ops-memory.conf')} && systemctl daemon-reload, then a rolling restart"
        + (
            f"; or raise {limit_source.split('=')[0]}= instead"
            if limit_source and limit is not None and limit == fits
            else ""
        )
        + "."
    )
    details = {
        "unit": unit.path, "heap_bytes": heap, "heap_source": heap_source, "direct_bytes": direct,
        "direct_source": direct_source, "other_bytes": other, "footprint_bytes": footprint, "limit_bytes": limit,
        "limit_source": limit_source, "mem_total": h.mem_total, "page_cache_room_bytes": room,
        "fits_bytes": fits, "jvm_opts": jvm.opts,
    }  # fmt: skip
    yield run.finding(message, remediation, path=unit.path, details=details)
