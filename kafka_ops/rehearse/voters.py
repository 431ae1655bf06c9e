"""The voter set a KIP-853 (dynamic) quorum keeps in its metadata log, read from the node's own files, and the
control batch that makes the node its own single voter inside the sandbox's overlay.

With ``controller.quorum.bootstrap.servers`` (kraft.version 1) the voters are the last VotersRecord of the
``__cluster_metadata`` snapshot and log; ``controller.quorum.voters`` is used only while the log holds none
(``VoterSetHistory.lastValue``, ``raft/src/main/java/org/apache/kafka/raft/internals/VoterSetHistory.java@3.9:87-91``).
So the sandbox cannot make a node its own single voter by config (recipe A). It appends, in the overlay's copy of
the metadata log's last segment (never the real file), one control batch whose VotersRecords walk the stored set
down to the node alone (:func:`single_voter_batch`); the raft client reads every batch of the log up to its end,
committed or not, with its CRC checked, and the last VotersRecord is the voter set
(``KRaftControlRecordStateMachine.maybeLoadLog``/``handleBatch``, ``raft/.../internals/
KRaftControlRecordStateMachine.java@3.9:216-288``). The metadata log is recovered at every start
(``KafkaMetadataLog.scala@3.9:589-601``: recoveryPoint 0, lastShutdownClean false): the batch must be a valid v2
batch at the log end offset, or recovery would truncate it.

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
import time
from dataclasses import dataclass, field

from kafka_ops.engine.binary import write_uvarint
from kafka_ops.engine.builder import NewRecord, build_batch
from kafka_ops.engine.records import BatchScanner, LogBuffer, RecordError, iter_records

_VOTERS = 6  # ControlRecordType.KRAFT_VOTERS
_KRAFT_VERSION = 5  # ControlRecordType.KRAFT_VERSION
_CHECKPOINT = re.compile(r"^(\d{20})-(\d{10})\.checkpoint$")
_SEGMENT = re.compile(r"^(\d{20})\.log$")


@dataclass
class StoredVoters:
    voters: list[tuple[int, str]]  # (id, directory id as Kafka prints it: url-safe base64, no padding)
    where: str  # the file and offset it was read at
    # each voter's (id, directory id bytes, its encoded entry as stored): a step of the walk to the node alone
    # keeps the other voters byte for byte
    entries: list[tuple[int, bytes, bytes]] = field(default_factory=list)


class VoterSetError(ValueError):
    """The single-voter batch cannot be made (one line naming why)."""


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


def _dir_text(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def voter_entries(value: bytes) -> list[tuple[int, bytes, bytes]]:
    """(voter id, directory id bytes, the voter's whole encoded entry) of one VotersRecord value; ValueError when
    it is not one."""
    pos = 2  # Version
    n, pos = _uvarint(value, pos)
    out = []
    for _ in range(max(0, n - 1)):
        start = pos
        if pos + 20 > len(value):
            raise ValueError("truncated VotersRecord")
        (vid,) = struct.unpack_from(">i", value, pos)
        dir_raw = bytes(value[pos + 4 : pos + 20])
        pos += 20
        m, pos = _uvarint(value, pos)
        for _ in range(max(0, m - 1)):
            pos = _skip_string(value, _skip_string(value, pos)) + 2
            pos = _skip_tags(value, pos)
        pos = _skip_tags(value, pos + 4)  # KRaftVersionFeature
        pos = _skip_tags(value, pos)
        if pos > len(value):
            raise ValueError("truncated VotersRecord")
        out.append((vid, dir_raw, bytes(value[start:pos])))
    return out


def decode_voters(value: bytes) -> list[tuple[int, str]]:
    """The (voter id, directory id) pairs of one VotersRecord value; ValueError when it is not one."""
    return [(vid, _dir_text(d)) for vid, d, _ in voter_entries(value)]


def _last_in(path: str, kind: int = _VOTERS) -> tuple[list[tuple[int, bytes, bytes]], int] | None:
    """The last control record of type ``kind`` in the file: its voters (KRAFT_VOTERS), or for KRAFT_VERSION
    ``[(kraft.version, b"", b"")]`` (KRaftVersionRecord v0: Version int16, KRaftVersion int16, tags)."""
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
                        and struct.unpack_from(">h", rec.key, 2)[0] == kind
                        and rec.value is not None
                    ):
                        if kind == _VOTERS:
                            found = (voter_entries(rec.value), rec.offset)
                        elif len(rec.value) >= 4:
                            found = ([(struct.unpack_from(">h", rec.value, 2)[0], b"", b"")], rec.offset)
    except (OSError, RecordError, ValueError):
        return found
    return found


def stored_kraft_version(metadata_dir: str) -> int:
    """The last KRaftVersionRecord's kraft.version (control record type 5) of the latest snapshot and the log; 0
    when there is none (KRaftControlRecordStateMachine.lastKraftVersion, ...StateMachine.java@3.9:166-171)."""
    got = stored_voters(metadata_dir, _KRAFT_VERSION)
    return got.voters[0][0] if got is not None else 0


def stored_voters(metadata_dir: str, kind: int = _VOTERS) -> StoredVoters | None:
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
        got = _last_in(os.path.join(part, name), kind)
        if got is None:
            continue
        # a snapshot's records are numbered from 0 in its file: it stands for the log up to its end offset
        at = int(name[:20]) - 1 if name.endswith(".checkpoint") else got[1]
        if best is None or at >= best[0]:
            best = (
                at,
                StoredVoters(
                    [(v, _dir_text(d)) for v, d, _ in got[0]],
                    f"{os.path.join(part, name)} at offset {got[1]}",
                    got[0],
                ),
            )
    return None if best is None else best[1]


# ControlRecordType.recordKey: version 0, type KRAFT_VOTERS (ControlRecordType.java@3.9)
_VOTERS_KEY = struct.pack(">hh", 0, _VOTERS)
# the kraft.version range 3.9 to 4.3 support (KRaftVersion: 0 and 1): the voter's own range, as the leader
# writes it for itself (LeaderState.java@3.9:340-366 rewrites the entry if it differs: harmless)
_KRAFT_RANGE = (0, 1)


@dataclass
class Append:
    """The control batch appended at the end of the metadata log's last segment, inside the overlay only."""

    segment: str  # the segment's file name in __cluster_metadata-0
    size: int  # its size on disk (the append checks it is still that)
    batch: bytes
    base_offset: int  # the log end offset
    epoch: int  # the partition leader epoch of the log's last batch
    steps: list[list[int]]  # the voter ids of each VotersRecord, in order (the last: the node alone)


def encode_voter(node_id: int, directory_id: bytes, endpoints: list[tuple[str, str, int]]) -> bytes:
    """One Voter entry of a VotersRecord v0 (VotersRecord.json@3.9), no tagged fields."""
    out = struct.pack(">i", node_id) + directory_id + write_uvarint(len(endpoints) + 1)
    for name, host, port in endpoints:
        n, h = name.encode(), host.encode()
        out += write_uvarint(len(n) + 1) + n + write_uvarint(len(h) + 1) + h + struct.pack(">H", port) + b"\0"
    return out + struct.pack(">hh", *_KRAFT_RANGE) + b"\0" + b"\0"


def voters_value(entries: list[bytes]) -> bytes:
    """A VotersRecord v0 value (``MessageUtil.toByteBuffer``: the record's own Version field first)."""
    return struct.pack(">h", 0) + write_uvarint(len(entries) + 1) + b"".join(entries) + b"\0"


def walk(
    stored: list[tuple[int, bytes, bytes]], mine: tuple[int, bytes, bytes]
) -> list[list[tuple[int, bytes, bytes]]]:
    """The voter sets from ``stored`` to the node alone, each differing from the one before by at most one voter
    (id, directory id) removed and one added: VoterSetHistory.addAt refuses a set without an overlapping majority
    with the last one read from the log (``VoterSetHistory.java@3.9.0-rc3:49-69`` throws
    IllegalArgumentException; the 3.9.1 and 4.3.1 jars log it at INFO and keep the set, javap of
    ``VoterSetHistory.addAt``), ``VoterSet.hasOverlappingMajority`` (``VoterSet.java@3.9:285-291``: each side's
    difference at most one voter). A set from the bootstrap checkpoint (offset -1) is not checked. The last set is
    ``mine`` (the node with its loopback endpoint)."""
    key = (mine[0], mine[1])
    cur = list(stored)
    steps = []
    if not any((v, d) == key for v, d, _ in cur):
        # a voter set maps an id to one node: the node's own id (of another directory) goes first
        victim = next((e for e in cur if e[0] == mine[0]), cur[0] if cur else None)
        cur = [e for e in cur if e is not victim] + [mine]
        steps.append(cur)
    while len(cur) > 1:
        victim = next(e for e in cur if (e[0], e[1]) != key)
        cur = [e for e in cur if e is not victim]
        steps.append(cur)
    if steps:
        steps[-1] = [mine]
    else:
        steps.append([mine])  # already alone: its entry with the sandbox's endpoint
    return steps


def _last_batch(path: str) -> tuple[int | None, int | None, int, str | None]:
    """(next offset, partition leader epoch) of the file's last batch (None, None when it holds none), its size,
    and why the append cannot follow it (a tail recovery truncates: the batch would go with it)."""
    with LogBuffer.open(path) as buf:
        scanner = BatchScanner(buf, verify_crc=True, controls=False)
        last = None
        for batch in scanner:
            last = batch
        why = None
        if scanner.tail is not None:
            why = (
                f"{path}: its tail from byte {scanner.tail.position} is {scanner.tail.reason}: recovery truncates "
                "it at the start, and a batch appended after it with it"
            )
        if last is None:
            return None, None, buf.size, why
        return last.last_offset + 1, last.partition_leader_epoch, buf.size, why


def single_voter_batch(
    metadata_dir: str,
    stored: StoredVoters,
    node_id: int,
    directory_id: str | None,
    endpoints: list[tuple[str, str, int]],
    now_ms: int | None = None,
) -> Append:
    """The control batch that makes the node (``node_id``, its metadata dir's ``directory_id``) its quorum's only
    voter: VotersRecords walking ``stored`` down to it (:func:`walk`), at the log end offset of the last segment,
    in the partition leader epoch of the log's last batch (the leader epoch cache then gains no entry; the node's
    election starts a later epoch), CRC32C as Kafka computes it (engine.builder). VoterSetError when the log's end
    cannot take it."""
    part = os.path.join(metadata_dir, "__cluster_metadata-0")
    try:
        names = os.listdir(part)
    except OSError as exc:
        raise VoterSetError(f"{part}: {exc.strerror}") from None
    segs = sorted(n for n in names if _SEGMENT.match(n))
    snaps = sorted(n for n in names if _CHECKPOINT.match(n))
    if not segs:
        raise VoterSetError(f"{part}: no log segment to append the single-voter VotersRecord to")
    try:
        leo, epoch, size, why = _last_batch(os.path.join(part, segs[-1]))
        if why:
            raise VoterSetError(why)
        if leo is None:
            leo = int(segs[-1][:20])
        for name in reversed(segs[:-1]):
            if epoch is not None:
                break
            epoch = _last_batch(os.path.join(part, name))[1]
    except (OSError, RecordError) as exc:
        raise VoterSetError(f"{part}: {exc}") from None
    if snaps:
        m = _CHECKPOINT.match(snaps[-1])
        assert m is not None
        snap_end, snap_epoch = int(m[1]), int(m[2])
        if epoch is None:
            epoch = snap_epoch
        if snap_epoch > epoch or (snap_epoch == epoch and snap_end > leo):
            # the start truncates such a log fully to the snapshot, the appended batch with it
            # (KafkaMetadataLog.truncateToLatestSnapshot, KafkaMetadataLog.scala@3.9:175-183)
            raise VoterSetError(
                f"{part}: the latest snapshot {snaps[-1]} is past the log's end (offset {leo}, epoch {epoch}): the "
                "start truncates the log to it"
            )
    if directory_id:
        try:
            dir_raw = base64.urlsafe_b64decode(directory_id + "=" * (-len(directory_id) % 4))
        except ValueError:
            dir_raw = b""
        if len(dir_raw) != 16:
            raise VoterSetError(
                f"directory.id {directory_id!r} of {metadata_dir}/meta.properties is not a Uuid"
            )
    else:
        # no directory.id yet (the start writes one, KafkaRaftServer.scala@3.9:175): the zero Uuid is a voter
        # whatever its directory (VoterSet.VoterNode.isVoter, VoterSet.java@3.9:344-353)
        dir_raw = bytes(16)
    mine = (node_id, dir_raw, encode_voter(node_id, dir_raw, endpoints))
    steps = walk(stored.entries, mine)
    ts = int(time.time() * 1000) if now_ms is None else now_ms
    records = [NewRecord(_VOTERS_KEY, voters_value([e[2] for e in s]), ts) for s in steps]
    batch = build_batch(leo, records, control=True, partition_leader_epoch=epoch or 0)
    return Append(segs[-1], size, batch, leo, epoch or 0, [[e[0] for e in s] for s in steps])


# appends the batch inside the sandbox (its mount namespace, the overlays mounted), to the overlay's copy: the
# dirs opened without following links, the segment a regular file of the size read before
APPEND_PY = """import os,stat,sys
d,name,size,src=sys.argv[1],sys.argv[2],int(sys.argv[3]),sys.argv[4]
data=open(src,'rb').read()
F=os.O_RDONLY|os.O_DIRECTORY|os.O_NOFOLLOW
top=os.open(d,F);part=os.open('__cluster_metadata-0',F,dir_fd=top)
fd=os.open(name,os.O_WRONLY|os.O_APPEND|os.O_NOFOLLOW|os.O_NONBLOCK,dir_fd=part)
st=os.fstat(fd)
if not stat.S_ISREG(st.st_mode) or st.st_size!=size:
 sys.exit('%s/__cluster_metadata-0/%s changed since it was read'%(d,name))
while data:data=data[os.write(fd,data):]
os.fsync(fd);os.close(fd)
"""
