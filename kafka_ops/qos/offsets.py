"""Seed 004's state machine: a service's logs of consumed offsets, from every pod, checked to be in sync.

Per partition, in time order over all pods, it tracks the owner (the pod the consumer logs say it was assigned
to) and the next offset expected (one past the highest offset consumed so far). It reports:

* ``gap``: a pod consumed (or a consumer started at) an offset past the next expected one: the offsets in
  between were never consumed by anyone (seed 004: "a pod resets its offsets ... and there is a gap");
* ``rewind``: a pod consumed (or started at) offsets that were consumed before: they are processed twice,
  duplicates downstream unless the sink is transactional;
* ``unassigned``: a pod consumed a partition that the logs never assigned to it, or that was assigned to
  another pod since (seed 004: "a pod rotates a kafka [partition] without it got assigned to that pod first").

Offsets are not contiguous in a topic with transactions (each COMMIT/ABORT marker takes an offset, aborted
records are never delivered to read_committed consumers) or after compaction, so a gap between two logged
ranges may hold no record at all: :func:`check` takes ``count_visible`` (records a consumer would get in an
offset range, from the topic's segments), counts the records of every gap and rewind, and drops those that
hold none.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from kafka_ops.qos.logs import ASSIGNED, CONSUMED, JOINED, JOINING, LEAVE, LOST, REVOKED, START, LogEvent
from kafka_ops.units import iso

GAP, REWIND, UNASSIGNED = "gap", "rewind", "unassigned"


@dataclass(slots=True)
class OffsetFinding:
    kind: str
    topic: str
    partition: int
    pod: str
    time_ms: int
    first_offset: int | None = None
    last_offset: int | None = None
    visible_records: int | None = None  # records in the range a consumer would get (None: not known)
    cause: str = ""  # "consumed" (a logged range) or "start" (a consumer's start offset)
    previous_pod: str | None = None
    file: str = ""
    line: int = 0

    @property
    def offsets(self) -> int:
        if self.first_offset is None or self.last_offset is None:
            return 0
        return self.last_offset - self.first_offset + 1

    def message(self) -> str:
        where = f"{self.topic}-{self.partition}"
        rng = f"offsets {self.first_offset}-{self.last_offset}"
        if self.kind == GAP:
            n = f", {self.visible_records} record(s)" if self.visible_records is not None else ""
            how = "started past" if self.cause == START else "consumed past"
            return f"{self.pod} {how} {rng} of {where}{n}: never consumed (after {self.previous_pod or '-'})"
        if self.kind == REWIND:
            how = "started back at" if self.cause == START else "consumed again"
            return f"{self.pod} {how} {rng} of {where}: processed twice (first by {self.previous_pod or '-'})"
        owner = f"assigned to {self.previous_pod}" if self.previous_pod else "never assigned to it"
        return f"{self.pod} consumed {where} ({rng}) while it was {owner}"

    def to_dict(self) -> dict[str, object]:
        return {
            "kind": self.kind,
            "topic": self.topic,
            "partition": self.partition,
            "pod": self.pod,
            "time": iso(self.time_ms, "z_ms"),
            "first_offset": self.first_offset,
            "last_offset": self.last_offset,
            "offsets": self.offsets,
            "visible_records": self.visible_records,
            "cause": self.cause,
            "previous_pod": self.previous_pod,
            "message": self.message(),
            "file": self.file,
            "line": self.line,
        }


@dataclass(slots=True)
class _State:
    owner: str | None = None
    next_offset: int | None = None
    last_pod: str | None = None  # the pod that consumed up to next_offset
    revoking: bool = False  # the owner logged the revocation and has not rejoined yet


CountVisible = Callable[[list[tuple[str, int, int, int]]], list[int]]


def check(events: Iterable[LogEvent], count_visible: CountVisible | None = None) -> list[OffsetFinding]:
    """Run the state machine over time-ordered events; gaps without visible records are dropped when
    ``count_visible`` (a batch function: [(topic, partition, first, last)] -> record counts) is given, and so
    are rewinds over no record."""
    events = list(events)
    # with no consumer assignment line in the logs at all, ownership is unknown: no 'unassigned' findings
    assignments_logged = any(e.kind == ASSIGNED for e in events)
    states: dict[tuple[str, int], _State] = {}
    out: list[OffsetFinding] = []
    for ev in events:
        if ev.kind in (ASSIGNED, REVOKED, LOST):
            for tp in ev.partitions:
                st = states.setdefault(tp, _State())
                if ev.kind == ASSIGNED:
                    st.owner, st.revoking = ev.pod, False
                elif st.owner == ev.pod and ev.kind == REVOKED:
                    # the Java client (ConsumerRebalanceListenerInvoker) and kafka-python (ConsumerCoordinator)
                    # log the revocation before they call onPartitionsRevoked, where a pipeline commits what it
                    # holds: the pod owns the partitions until it rejoins or leaves
                    st.revoking = True
                elif st.owner == ev.pod:
                    st.owner = None
            continue
        if ev.kind in (JOINING, JOINED, LEAVE):
            for st in states.values():
                if st.revoking and st.owner == ev.pod:
                    st.owner, st.revoking = None, False
            continue
        if ev.kind == START and ev.partitions and ev.offset is not None:
            tp = ev.partitions[0]
            st = states.setdefault(tp, _State())
            _compare(out, st, tp, ev, ev.offset, None, START)
            if st.next_offset is not None:
                # reported once here: the ranges this consumer goes on to log are measured from its start
                st.next_offset, st.last_pod = ev.offset, ev.pod
            continue
        if ev.kind != CONSUMED or ev.first is None or ev.last is None:
            continue
        tp = ev.partitions[0]
        st = states.setdefault(tp, _State())
        if assignments_logged and st.owner != ev.pod:
            out.append(
                OffsetFinding(
                    UNASSIGNED,
                    tp[0],
                    tp[1],
                    ev.pod,
                    ev.time_ms,
                    ev.first,
                    ev.last,
                    cause=CONSUMED,
                    previous_pod=st.owner,
                    file=ev.file,
                    line=ev.line,
                )
            )
        _compare(out, st, tp, ev, ev.first, ev.last, CONSUMED)
        if st.next_offset is None or ev.last + 1 > st.next_offset:
            st.next_offset = ev.last + 1
            st.last_pod = ev.pod
    if count_visible is not None:
        ranged = [f for f in out if f.kind in (GAP, REWIND)]
        counts = count_visible(
            [(f.topic, f.partition, f.first_offset or 0, f.last_offset or 0) for f in ranged]
        )
        for f, n in zip(ranged, counts, strict=True):
            f.visible_records = n
        out = [f for f in out if not (f.kind in (GAP, REWIND) and f.visible_records == 0)]
    return out


def _compare(
    out: list[OffsetFinding],
    st: _State,
    tp: tuple[str, int],
    ev: LogEvent,
    first: int,
    last: int | None,
    cause: str,
) -> None:
    expected = st.next_offset
    if expected is None:
        return
    if first > expected:
        out.append(
            OffsetFinding(
                GAP,
                tp[0],
                tp[1],
                ev.pod,
                ev.time_ms,
                expected,
                first - 1,
                cause=cause,
                previous_pod=st.last_pod,
                file=ev.file,
                line=ev.line,
            )
        )
    elif first < expected:
        end = expected - 1 if last is None else min(last, expected - 1)
        out.append(
            OffsetFinding(
                REWIND,
                tp[0],
                tp[1],
                ev.pod,
                ev.time_ms,
                first,
                end,
                cause=cause,
                previous_pod=st.last_pod,
                file=ev.file,
                line=ev.line,
            )
        )
