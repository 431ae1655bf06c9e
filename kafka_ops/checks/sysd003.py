"""SYSD003: LimitNOFILE below the file descriptors the broker needs (segments, transaction indexes, connections).

What holds a file descriptor in a broker (apache/kafka, storage/.../log):

* every segment's ``.log``: LogSegment holds a FileRecords whose FileChannel is opened at load and closed at
  segment close/delete - one descriptor per segment;
* ``.txnindex``: TransactionIndex keeps its FileChannel (``maybeChannel``) once opened, and LogSegment.sanityCheck
  opens it at load - one per ``.txnindex`` file;
* ``.index`` / ``.timeindex``: AbstractIndex maps the file and closes its RandomAccessFile right away
  (``Utils.closeQuietly(raf, ...)``): they cost memory mappings (vm.max_map_count, 65530 by default), not
  descriptors;
* one socket per client or inter-broker connection, plus the JVM's own (jars on the class path, log files,
  epoll and pipe descriptors of every Selector).

Kafka's operations guide (docs/ops.html, "File descriptor limits"): "the broker needs at least
(number_of_partitions)*(partition_size/segment_size) to track all log segments in addition to the number of
connections the broker makes. We recommend at least 100000 allowed file descriptors for the broker processes
as a starting point."

The limit that applies: LimitNOFILE=N sets soft and hard to N, S:H each, ``infinity`` the kernel's fs.nr_open
(1048576 by default) (systemd.exec(5)). HotSpot raises its soft limit to the hard limit at start (os_linux.cpp
``if (MaxFDLimit) { nbr_files.rlim_cur = nbr_files.rlim_max; setrlimit(...) }``, on by default) unless
``-XX:-MaxFDLimit``: the hard limit is what the broker gets. Unset, the unit gets DefaultLimitNOFILE= of
systemd-system.conf(5): 1024:524288 since systemd 240, before it the kernel's 1024:4096 (RHEL/CentOS 7 run
systemd 219).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from kafka_ops.checks.base import Finding, check
from kafka_ops.engine.shell import q
from kafka_ops.facts.context import Context
from kafka_ops.facts.model import HostFacts, PartitionFacts

CONNECTION_ALLOWANCE = (
    10_000  # sockets when max.connections is unset: clients and replication of a busy broker
)
JVM_BASE_FDS = 1_000  # jars, log files, epoll/pipe descriptors of the Selectors
RECOMMENDED_MIN = 100_000  # Kafka's ops guide
NR_OPEN_DEFAULT = 1_048_576  # fs.nr_open: what LimitNOFILE=infinity becomes
OLD_SYSTEMD_HARD = 4_096  # systemd < 240: the kernel's default hard limit
NEW_SYSTEMD_HARD = 524_288  # systemd >= 240: DefaultLimitNOFILE=1024:524288
DEFAULT_SOFT = 1_024
MAX_MAP_COUNT_DEFAULT = 65_530


@dataclass
class _Acc:
    segments: int = 0
    txnindex: int = 0


def nofile_need(h: HostFacts, segments: int = 0, txnindex: int = 0) -> dict[str, Any]:
    """The descriptors this broker needs and the LimitNOFILE to give it (also the collector's ``systemd`` mode).

    ``segments``/``txnindex`` as counted per partition by the check; 0 segments falls back to the log dirs'
    totals."""
    segments = segments or sum(d.agg.segments for d in h.log_dirs)
    max_conn = h.configs.server_int("max.connections", 0)
    connections = max_conn if 0 < max_conn < 2**31 - 1 else CONNECTION_ALLOWANCE
    conn_source = "max.connections" if connections == max_conn else "allowance (max.connections unset)"
    required = segments + txnindex + connections + JVM_BASE_FDS
    recommended = max(RECOMMENDED_MIN, math.ceil(2 * required / 10_000) * 10_000)
    return {
        "segments": segments, "txnindex_files": txnindex, "connections": connections,
        "connections_source": conn_source, "jvm_base": JVM_BASE_FDS, "required": required,
        "recommended_nofile": recommended,
    }  # fmt: skip


def parse_limit(value: str) -> tuple[int, int]:
    """LimitNOFILE= value -> (soft, hard); ValueError when malformed."""
    v = value.strip().lower()
    soft_s, _, hard_s = v.partition(":")
    hard_s = hard_s or soft_s

    def one(x: str) -> int:
        x = x.strip()
        if x == "infinity":
            return NR_OPEN_DEFAULT
        return int(x)

    return one(soft_s), one(hard_s)


@check(
    "SYSD003",
    severity="warning",
    scope="partition,host",
    title="LimitNOFILE below the descriptors the broker needs: 'Too many open files' takes a log dir offline",
    incident="field reports: brokers with many partitions die with 'Too many open files' at load or under load; "
    "Kafka's ops guide recommends at least 100000",
    needs=("systemd_unit",),
)
def run(ctx: Context, subject: PartitionFacts | HostFacts) -> Iterator[Finding]:
    acc: _Acc = ctx.cache.setdefault("sysd003", _Acc())
    if isinstance(subject, PartitionFacts):
        acc.segments += len(subject.part.segments)
        acc.txnindex += sum(1 for s in subject.part.segments if s.txnindex is not None)
        return
    h = subject
    unit = h.unit
    assert unit is not None
    need = nofile_need(h, acc.segments, acc.txnindex)
    segments, connections = need["segments"], need["connections"]
    conn_source, required, recommended = (
        need["connections_source"],
        need["required"],
        need["recommended_nofile"],
    )
    opts = h.jvm.opts if h.jvm else ""
    raises = "-XX:-MaxFDLimit" not in opts
    raw = unit.service.get("LimitNOFILE")
    old_limit = new_limit = None
    if raw:
        try:
            soft, hard = parse_limit(raw)
        except ValueError:
            raw = None  # systemd ignores it: the default applies
    if raw:
        limit = hard if raises else soft
        source = f"LimitNOFILE={unit.service['LimitNOFILE']}" + (
            " (the JVM raises its soft limit to the hard one)" if raises and soft != hard else ""
        )
        short = limit < required
    else:
        old_limit = OLD_SYSTEMD_HARD if raises else DEFAULT_SOFT
        new_limit = NEW_SYSTEMD_HARD if raises else DEFAULT_SOFT
        limit = old_limit
        source = (
            f"LimitNOFILE unset: systemd's DefaultLimitNOFILE, {new_limit} on systemd >= 240, {old_limit} before "
            "(e.g. RHEL/CentOS 7, systemd 219)"
            + (
                " after the JVM raises its soft limit to the hard one"
                if raises
                else " (-XX:-MaxFDLimit: the soft limit)"
            )
        )
        short = old_limit < required
    maps = 2 * segments
    details = {
        "unit": unit.path, "limit": limit, "limit_source": source, "limit_on_old_systemd": old_limit,
        "limit_on_new_systemd": new_limit, "required": required, "segments": segments, "txnindex_files": acc.txnindex,
        "connections": connections, "connections_source": conn_source, "jvm_base": JVM_BASE_FDS,
        "recommended_nofile": recommended, "jvm_raises_soft_limit": raises, "index_mmaps": maps,
    }  # fmt: skip
    if not short:
        return
    maps_note = (
        f" The {segments} segments' indexes also take up to {maps} memory mappings once used: check "
        f"`sysctl vm.max_map_count` (default {MAX_MAP_COUNT_DEFAULT})."
        if maps > 0.8 * MAX_MAP_COUNT_DEFAULT
        else ""
    )
    message = (
        f"{unit.name} lets the broker open {limit} files ({source}), but it needs about {required}: one per "
        f"segment .log ({segments}), one per .txnindex ({acc.txnindex}), {connections} connections ({conn_source}) "
        f"and {JVM_BASE_FDS} for the JVM. Past the limit, opening a segment or accepting a connection fails with "
        "'Too many open files': an IOException on a log dir takes it offline (LogDirFailureChannel), and at start "
        "the broker cannot load its logs." + maps_note
    )
    remediation = (
        f"Set LimitNOFILE={recommended} (twice the need, at least the {RECOMMENDED_MIN} Kafka's ops guide "
        f"recommends) in a drop-in: `kafka-ops fix systemd --systemd-unit {q(unit.path)} --apply`, or mkdir -p "
        f"{q(f'/etc/systemd/system/{unit.name}.d')} && printf '[Service]\\nLimitNOFILE={recommended}\\n' > {q(f'/etc/systemd/system/{unit.name}.d/kafka-ops-nofile.conf')} && "
        "systemctl daemon-reload, then restart the broker (limits apply at process start). Check: "
        "`grep 'open files' /proc/$(systemctl show -p MainPID --value " + q(unit.name) + ")/limits`."
    )
    yield run.finding(message, remediation, path=unit.path, details=details)
