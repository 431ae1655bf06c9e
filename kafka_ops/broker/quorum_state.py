"""The KRaft ``quorum-state`` file (``<metadata log dir>/__cluster_metadata-0/quorum-state``): what the next start
does when it cannot read it, the rule DIR007 reports and the next-start plan follows.

The raft client reads it before any log is loaded (``KafkaRaftClient.initialize`` -> ``QuorumState.initialize`` ->
``FileBasedStateStore.readElectionState``, ``FileQuorumStateStore`` from 3.9): ``readStateFromFile`` reads the
first line (``BufferedReader.readLine``, UTF-8) and parses it with Jackson; a file with no line ("File ended
prematurely", EOFException), bytes that are not UTF-8, a first line that is not a JSON object or has no
``data_version`` are IOExceptions, rethrown as UncheckedIOException ("Error while reading the Quorum status from the
file ..."): raft/src/main/java/org/apache/kafka/raft/FileBasedStateStore.java@3.5.2:71-99, @3.7.1:73-107,
FileQuorumStateStore.java (trunk of 2024-10-25):88-131.

* up to 3.7 (KRaft 2.8-3.7): ``QuorumState.initialize`` catches it, logs "Clearing local quorum state store after
  error loading state", deletes the file and starts from epoch 0 with no leader and no vote (QuorumState.java
  @3.5.2:114-127, @3.7.1:114-127): the node starts, and forgets the vote it had cast in the current epoch.
* from 3.8.0 (KAFKA-16526, commit 056d232f4e2, first in 3.8.0): the catch is gone (QuorumState.java@3.8.0,
  trunk:125-140): the exception stops the raft client's start and the node exits.

Only the four damage forms of a power loss are modelled (no line, not UTF-8, not a JSON object, no
``data_version``); a well-formed object that QuorumStateDataJsonConverter refuses is left to the broker.
Standard library only.
"""

from __future__ import annotations

import json
import os

from kafka_ops.broker import meta
from kafka_ops.engine import versions
from kafka_ops.engine.compat import slotted
from kafka_ops.engine.errors import EngineError
from kafka_ops.engine.fileio import read_bytes
from kafka_ops.engine.layout import METADATA_TOPIC
from kafka_ops.facts.model import HostFacts

QUORUM_STATE = "quorum-state"
CLEARED, EXITS, DEPENDS = "cleared", "exits", "depends"


@slotted(frozen=True)
class QuorumStateDamage:
    path: str
    error: str  # what the reader found (no content)
    start: str  # cleared | exits | depends

    @property
    def reason(self) -> str:
        said = f"'Error while reading the Quorum status from the file {self.path}'"
        read = (
            f"{self.path} cannot be read as the raft client reads it ({self.error}): the start reads it first of "
            f"all (QuorumState.initialize), an UncheckedIOException ({said})"
        )
        if self.start == EXITS:
            return (
                f"{read}, which no one catches from 3.8.0 (KAFKA-16526): the raft client does not start and the "
                "broker exits before it loads any log"
            )
        if self.start == CLEARED:
            return (
                f"{read}, which QuorumState.initialize catches up to 3.7: it logs 'Clearing local quorum state "
                "store after error loading state', deletes the file and starts from epoch 0 without a leader or a "
                "vote (the node forgets the vote it cast in the current epoch)"
            )
        return f"{read}: up to 3.7 the file is cleared and the node starts, from 3.8.0 the node exits"


def _error(path: str) -> str | None:
    """Why FileBasedStateStore.readStateFromFile throws an IOException for this file, or None when it reads (or
    the file cannot be opened here: left to the PERM checks)."""
    try:
        raw = read_bytes(path, 1 << 20)
    except EngineError:
        return None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return "not UTF-8 text (MalformedInputException)"
    if not text:
        return "no line ('File ended prematurely', EOFException)"
    line = text.replace("\r\n", "\n").replace("\r", "\n").split("\n", 1)[0]
    try:  # Jackson's readTree reads the first value and leaves what follows it
        doc, _ = json.JSONDecoder().raw_decode(line.lstrip(" \t"))
    except (ValueError, RecursionError):
        return "its first line is not JSON"
    if not isinstance(doc, dict):
        return "its first line is not a JSON object"
    if "data_version" not in doc:
        return "no data_version field"
    return None


def damage(h: HostFacts) -> QuorumStateDamage | None:
    """The metadata log dir's quorum-state when the next start cannot read it (KRaft, a stopped broker)."""
    if h.broker_state == "running" or meta.broker_mode(h) != "kraft":
        return None
    mdir = meta.metadata_log_dir(h)
    if mdir is None:
        return None
    path = os.path.join(mdir, f"{METADATA_TOPIC}-0", QUORUM_STATE)
    if not os.path.isfile(path) or os.path.islink(path):
        return None
    error = _error(path)
    if error is None:
        return None
    exits = versions.since("quorum_state_read_fatal", h.kafka_version)
    return QuorumStateDamage(path, error, DEPENDS if exits is None else EXITS if exits else CLEARED)
