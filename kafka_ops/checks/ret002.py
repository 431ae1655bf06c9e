"""RET002: what time and size retention will delete within the horizon, per topic (the forecast as findings)."""

from __future__ import annotations

from collections.abc import Iterator

from kafka_ops.broker.forecast import KEEP_SEGMENTS, TopicForecast, audit_forecast, first_check_delay
from kafka_ops.broker.timestamps import iso
from kafka_ops.checks.base import Finding, check
from kafka_ops.engine.shell import q
from kafka_ops.facts.context import Context
from kafka_ops.facts.model import HostFacts
from kafka_ops.units import human_bytes, human_ms

# per-segment records kept in a finding's details (the rest is counted in segments_omitted; the whole list is
# what `kafka-ops forecast` prints)
MAX_SEGMENTS = KEEP_SEGMENTS

REASON_TEXT = {
    "log_start": "below the log start offset",
    "retention_bytes": "retention.bytes",
    "retention_ms": "retention.ms",
}


@check(
    "RET002",
    severity="info",
    scope="host",
    title="Retention forecast: what time and size retention delete within the horizon, per topic",
    incident="topic sizes drop in spikes as whole segments expire (segment.bytes / segment.ms decide "
    "how big each drop is)",
)
def run(ctx: Context, h: HostFacts) -> Iterator[Finding]:
    # the audit's own forecast, the one its report's forecast section shows (made once per audit; a log dir the
    # next start takes offline deletes nothing in it)
    acc = audit_forecast(ctx)
    if acc is None:
        return
    stopped = h.broker_state != "running"
    for name in sorted(acc.topics):
        t = acc.topics[name]
        if not t.checks:
            continue
        yield _finding(ctx, t, stopped)


def _point(ctx: Context, at: int, stopped: bool) -> str:
    if at <= ctx.now_ms + first_check_delay(ctx.host):
        return "the first retention check after the broker starts" if stopped else "the next retention check"
    return f"{iso(at)} (in {human_ms(at - ctx.now_ms)})"


def _when(ctx: Context, at: int, stopped: bool) -> str:
    return "at " + _point(ctx, at, stopped)


def _finding(ctx: Context, t: TopicForecast, stopped: bool) -> Finding:
    d = t.to_dict(projection=False)
    reasons = ", ".join(
        f"{v['segments']} by {REASON_TEXT[r]} ({human_bytes(v['bytes'])})" for r, v in d["by_reason"].items()
    )
    drop = d["largest_drop"]
    first, last = d["first_deletion_at"], d["last_deletion_at"]
    span = (
        _when(ctx, first, stopped)
        if first == last
        else f"from {_point(ctx, first, stopped)} to {_point(ctx, last, stopped)}"
    )
    message = (
        f"retention will delete {d['deleted_segments']} segment(s) of topic {t.topic}, {human_bytes(d['deleted_bytes'])} "
        f"({d['deleted_bytes']} bytes) of its {human_bytes(d['bytes_now'])} on this host, within "
        f"{human_ms(t.horizon_ms)} {span}: {reasons}. Largest single drop: {human_bytes(drop['bytes'])} "
        f"({drop['segments']} segment(s)) {_when(ctx, drop['at_ms'], stopped)}."
    )
    early = {
        s: n for s, n in d["timestamp_sources"].items() if s not in ("time_index", "log", "active_segment")
    }
    if early:
        message += (
            " Some of these segments are deleted on a fallback timestamp ("
            + ", ".join(f"{n} {s}" for s, n in early.items())
            + "): see RET001."
        )
    remediation = (
        "Nothing to fix if this is the retention you want. To keep the data longer, raise it before the "
        f"deletion: kafka-configs --bootstrap-server <broker:9092> --alter --entity-type topics --entity-name "
        f"{q(t.topic)} --add-config retention.ms=<ms> (time) or retention.bytes=<bytes per partition> (size). "
        "Retention deletes whole segments, so each drop is as large as the segments that expire together; "
        "for a steadier size lower segment.bytes / segment.ms on the topic (the segment-retention incident)."
    )
    details = {"topic": t.topic, "horizon_ms": t.horizon_ms, "horizon_end_ms": t.horizon_end, **d}
    return run.finding(message, remediation, topic=t.topic, details=details)
