"""The voter set a KIP-853 (dynamic) quorum keeps in its metadata log, read from the node's own files.

With ``controller.quorum.bootstrap.servers`` (kraft.version 1) the voters are the last VotersRecord of the
``__cluster_metadata`` snapshot and log; ``controller.quorum.voters`` is used only while the log holds none
(``VoterSetHistory.lastValue``, ``raft/src/main/java/org/apache/kafka/raft/internals/VoterSetHistory.java@3.9:87-91``).
So the sandbox cannot make a node its own single voter by config (recipe A): it rehearses a KIP-853 node only when
the stored set is already that node alone (a quorum formatted with ``--standalone`` and never grown), where the
node becomes leader as at its real start; any other set is refused with the voters named.

VotersRecord (``clients/src/main/resources/common/message/VotersRecord.json@3.9``, flexible version 0): Version
int16, Voters compact array of (VoterId int32, VoterDirectoryId uuid, Endpoints compact array of (Name, Host
compact strings, Port uint16, tags), KRaftVersionFeature (Min, Max int16, tags), tags), tags. It is the control
record type 6 (KRAFT_VOTERS), in a snapshot's first batch and in control batches of the log.
"""

from __future__ import annotations

import base64
import os
import re
import struct
from dataclasses import dataclass

from kafka_ops.engine.records import BatchScanner, LogBuffer, RecordError, iter_records

_VOTERS = 6  # ControlRecordType.KRAFT_VOTERS
_CHECKPOINT = re.compile(r"^(\d{20})-(\d{10})\.checkpoint$")
_SEGMENT = re.compile(r"^(\d{20})\.log$")


@dataclass
class StoredVoters:
    voters: list[tuple[int, str]]  # (id, directory id as Kafka prints it: url-safe base64, no padding)
    where: str  # the file and offset it was read at


def _uvarint(b: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if pos >= len(b) or shift > 28:
            raise ValueError("truncated varint")
        c = b[pos]
        pos += 1
        value |= (c & 0x7F) << shift
        if not c & 0x80:
            return value, pos
        shift += 7


def _skip_string(b: bytes, pos: int) -> int:
    n, pos = _uvarint(b, pos)
    return pos + max(0, n - 1)


def _skip_tags(b: bytes, pos: int) -> int:
    n, pos = _uvarint(b, pos)
    for _ in range(n):
        _, pos = _uvarint(b, pos)
        size, pos = _uvarint(b, pos)
        pos += size
    return pos


def decode_voters(value: bytes) -> list[tuple[int, str]]:
    """The (voter id, directory id) pairs of one VotersRecord value; ValueError when it is not one."""
    pos = 2  # Version
    n, pos = _uvarint(value, pos)
    out = []
    for _ in range(max(0, n - 1)):
        if pos + 20 > len(value):
            raise ValueError("truncated VotersRecord")
        (vid,) = struct.unpack_from(">i", value, pos)
        dir_id = base64.urlsafe_b64encode(value[pos + 4 : pos + 20]).decode().rstrip("=")
        pos += 20
        m, pos = _uvarint(value, pos)
        for _ in range(max(0, m - 1)):
            pos = _skip_string(value, _skip_string(value, pos)) + 2
            pos = _skip_tags(value, pos)
        pos = _skip_tags(value, pos + 4)  # KRaftVersionFeature
        pos = _skip_tags(value, pos)
        out.append((vid, dir_id))
    if pos > len(value):
        raise ValueError("truncated VotersRecord")
    return out


def _last_in(path: str) -> tuple[list[tuple[int, str]], int] | None:
    found = None
    try:
        with LogBuffer.open(path) as buf:
            for batch in BatchScanner(buf, verify_crc=False):
                if not batch.is_control:
                    continue
                for rec in iter_records(buf, batch):
                    if (
                        rec.key is not None
                        and len(rec.key) >= 4
                        and struct.unpack_from(">h", rec.key, 2)[0] == _VOTERS
                    ):
                        if rec.value is not None:
                            found = (decode_voters(rec.value), rec.offset)
    except (OSError, RecordError, ValueError):
        return found
    return found


def stored_voters(metadata_dir: str) -> StoredVoters | None:
    """The last VotersRecord of the latest snapshot and the log segments after it; None when there is none
    (a static quorum: kraft.version 0)."""
    part = os.path.join(metadata_dir, "__cluster_metadata-0")
    try:
        names = os.listdir(part)
    except OSError:
        return None
    snaps = sorted(n for n in names if _CHECKPOINT.match(n))
    segs = sorted(n for n in names if _SEGMENT.match(n))
    best: tuple[int, StoredVoters] | None = None
    for name in ([snaps[-1]] if snaps else []) + segs:
        got = _last_in(os.path.join(part, name))
        if got is None:
            continue
        # a snapshot's records are numbered from 0 in its file: it stands for the log up to its end offset
        at = int(name[:20]) - 1 if name.endswith(".checkpoint") else got[1]
        if best is None or at >= best[0]:
            best = (at, StoredVoters(got[0], f"{os.path.join(part, name)} at offset {got[1]}"))
    return None if best is None else best[1]
