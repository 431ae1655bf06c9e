"""Which leftover files of a partition dir the next start deletes while it loads the partition: ``.deleted`` and
``.cleaned`` files, and the ``.swap`` files of an unfinished segment split.

Kafka source (apache/kafka, at the tags named), ``removeTempFilesAndCollectSwapFiles``, the first step of loading
a partition (Log.scala up to 2.8, LogLoader.scala 3.0-3.9, storage/.../internals/log/LogLoader.java in 4.x, read
at the trunk snapshot 1eb7644); every regular file of the dir passes ``canRead`` first ("Could not read file"):

* ``*.deleted`` (a segment retention, recovery or the cleaner had renamed for deletion ``file.delete.delay.ms``
  later; the broker stopped first): deleted at once ("Deleting stray temporary file", debug level) in every
  release (Log.scala@1.1.0:297-299, @2.8.2:652-654; LogLoader.scala@3.7.1:230-232; LogLoader.java:278-280);
  from 3.3 a KRaft snapshot's ``.checkpoint.deleted`` is skipped (not a segment file: not a leftover here).
* ``*.cleaned`` (the output of an interrupted cleaning): deleted at load in every release; 1.1 in the same loop
  (Log.scala@1.1.0:297), from 2.0 after the loop, once the invalid swaps are gone ("Deleting stray .clean file",
  Log.scala@2.0.0:364-366, @2.8.2:685-687, LogLoader.scala@3.7.1:251-253, LogLoader.java:307-309).
* ``*.swap`` at or above the smallest ``.cleaned`` offset (an unfinished split, KAFKA-6264, since 2.0.0: commit
  9c1cb407d89 is first in the 2.0.0 tag): deleted ("Deleting invalid swap file", debug). Up to 2.8 only
  ``.log.swap`` files are collected, and an invalid one is deleted with the ``.index.swap``, ``.timeindex.swap``
  and ``.txnindex.swap`` of its base (``deleteIndicesIfExist(baseFile, SwapFileSuffix)``, Log.scala@2.0.0:352-361,
  @2.8.2:673-682); from 3.0 every ``.swap`` file is collected and each one at or above that offset is deleted
  (LogLoader.scala@3.0.0:246, @3.7.1:241-248; LogLoader.java:290-304). 1.1 has no such rule. The other ``.swap``
  files are swapped in (kafka_ops.broker.swaps: the plan's segments say ``swapped_in``), not listed here.

The loader goes by the suffix alone, so these rules hold for any file name (``backup.deleted`` is deleted too).
To order swaps and cleaned files it reads the base offset from the name, ``offsetFromFileName``:
``Long.parseLong(name.substring(0, name.indexOf('.')))`` (Log.scala@2.8.2:2734-2736, LogFileUtils.java:73-75).
A name it cannot parse (``backup.log.cleaned``) throws NumberFormatException, which is not an IOException:
``LogManager.loadLogs`` does not take the dir offline but rethrows it ("There was an error in one of the threads
during logs loading", LogManager.scala@2.8.2:389-391, @3.7.1:537-538, trunk 1eb7644:539-541) and the broker exits.
Which names are parsed: a ``.cleaned`` from 2.0 (1.1 deletes it unread, Log.scala@1.1.0:297); a ``.swap`` whose
name without ``.swap`` ends in ``.log``, ``.index``, ``.timeindex`` or ``.txnindex`` up to 2.8
(``deleteIndicesIfExist`` -> ``offsetFromFile``, Log.scala@1.1.0:283-309, @2.8.2:636-669); every ``.swap`` from
3.0 (the KAFKA-6264 partition reads each one's offset, LogLoader.scala@3.7.1:244, LogLoader.java:294-295).
From 3.3 (KAFKA-14240) a ``*.checkpoint.deleted`` file is not deleted: it is a KRaft snapshot's suffix
(LogLoader.scala@3.3.0:235).
"""

from __future__ import annotations

import os

from kafka_ops.engine import versions
from kafka_ops.engine.layout import parse_segment_file
from kafka_ops.facts.model import HostFacts, PartitionFacts

DELETED_AT_LOAD = "deleted_at_load"  # the plan's leftover fate: the start deletes the file while loading
KEPT = "kept"  # the start does not load the partition (broker exit, offline dir): the file stays

_INDEX_SUFFIXES = (".index", ".timeindex", ".txnindex")
INDEX_SWAPS = tuple(s + ".swap" for s in _INDEX_SUFFIXES)
_LONG_MIN, _LONG_MAX = -(1 << 63), (1 << 63) - 1


def java_long(text: str) -> int | None:
    """``Long.parseLong(text)``, or None where it throws NumberFormatException: an optional sign, then one or
    more decimal digits (Character.digit accepts every Unicode decimal digit), within a signed 64-bit long."""
    body = text[1:] if text[:1] in ("+", "-") else text
    if not body or not all(c.isdecimal() for c in body):
        return None
    value = int(text)  # only a sign and decimal digits: int() reads them as parseLong does
    return value if _LONG_MIN <= value <= _LONG_MAX else None


def offset(path: str) -> int | None:
    """``offsetFromFileName``: the long before the name's first dot (None where the loader cannot parse it)."""
    return java_long(os.path.basename(path).split(".", 1)[0])


def kind(path: str) -> str:
    """``deleted``, ``cleaned`` or ``swap``: the leftover's last suffix."""
    return path.rsplit(".", 1)[-1]


def unfinished_split(h: HostFacts, pf: PartitionFacts) -> tuple[int | None, set[str]]:
    """(the smallest ``.cleaned`` offset, the ``.swap`` files at or above it that loading deletes as an unfinished
    split): the one rule behind the plan's leftovers, the swaps it completes (broker.swaps) and DIR003. Only files
    count (the loader lists ``isFile`` entries)."""
    left = [f for f in pf.part.leftovers if not f.is_dir]
    cleaned = [o for f in left if kind(f.path) == "cleaned" and (o := offset(f.path)) is not None]
    min_cleaned = min(cleaned) if cleaned else None
    v = h.kafka_version
    # an unknown version: the rule of every release since 2.0
    if min_cleaned is None or versions.since("invalid_swap_after_cleaned", v) is False:
        return min_cleaned, set()
    swaps = [f.path for f in left if kind(f.path) == "swap"]
    if versions.since("log_loader", v) is not False:  # 3.0+: every .swap file at or above the offset
        return min_cleaned, {p for p in swaps if (o := offset(p)) is not None and o >= min_cleaned}
    # 2.0-2.8: a .log.swap at or above it, and the index swaps of its base
    bases = {
        o for p in swaps if p.endswith(".log.swap") and (o := offset(p)) is not None and o >= min_cleaned
    }
    return min_cleaned, {
        p for p in swaps if offset(p) in bases and (p.endswith(".log.swap") or p.endswith(INDEX_SWAPS))
    }


def _parsed_at_load(name: str, v: versions.Version | None) -> bool:
    """Whether the loader reads this leftover's base offset from its name (an unknown version: the newest rule)."""
    if name.endswith(".deleted"):
        return False  # deleted unread, or (3.3+, *.checkpoint.deleted) left alone
    if name.endswith(".cleaned"):
        return versions.since("invalid_swap_after_cleaned", v) is not False
    if not name.endswith(".swap"):
        return False
    if versions.since("log_loader", v) is not False:
        return True
    return name[: -len(".swap")].endswith((".log", *_INDEX_SUFFIXES))


def unparseable(h: HostFacts, pf: PartitionFacts) -> tuple[str, str] | None:
    """(path, why the broker exits) for the first leftover whose base offset the loader cannot parse, or None."""
    v = h.kafka_version
    for f in sorted(pf.part.leftovers, key=lambda f: f.path):
        name = os.path.basename(f.path)
        if f.is_dir or not _parsed_at_load(name, v) or offset(f.path) is not None:
            continue
        return f.path, (
            f"{f.path}: {_function(v)} reads a base offset from the name of every "
            f"{'.cleaned' if name.endswith('.cleaned') else '.swap'} file, Long.parseLong("
            f"'{name.split('.', 1)[0]}') throws NumberFormatException, which is not an IOException: "
            "LogManager.loadLogs rethrows it ('There was an error in one of the threads during logs loading') "
            "and the broker exits"
        )
    return None


def deleted_at_load(h: HostFacts, pf: PartitionFacts) -> list[tuple[str, str, str]]:
    """(path, kind, why) of each leftover file that loading this partition deletes, in path order."""
    left = [f for f in pf.part.leftovers if not f.is_dir]
    if not left:
        return []
    v = h.kafka_version
    fn = _function(v)
    min_cleaned, invalid_swaps = unfinished_split(h, pf)
    out = []
    for f in sorted(left, key=lambda f: f.path):
        k = kind(f.path)
        if k == "deleted":
            if f.path.endswith(".checkpoint.deleted") and versions.has(
                "snapshot_deleted_kept_at_load", v, True
            ):
                continue  # a KRaft snapshot's suffix: left alone (KAFKA-14240)
            segment = parse_segment_file(os.path.basename(f.path)) is not None
            why = (
                "a .deleted file ("
                + (
                    "a segment file renamed for deletion file.delete.delay.ms later; the broker stopped first"
                    if segment
                    else "not a segment file's name, but the loader goes by the suffix"
                )
                + f"): {fn} deletes it when it loads the partition ('Deleting stray temporary file')"
            )
        elif k == "cleaned":
            why = (
                f"a .cleaned file (the output of an interrupted cleaning): {fn} deletes it when it loads the "
                "partition ('Deleting stray .clean file')"
            )
        elif f.path in invalid_swaps:
            why = (
                f"a .swap at or above the smallest .cleaned offset {min_cleaned}, an unfinished segment split "
                f"(KAFKA-6264): {fn} deletes it when it loads the partition ('Deleting invalid swap file')"
            )
        else:
            continue  # swapped in (kafka_ops.broker.swaps)
        out.append((f.path, k, why))
    return out


def _function(v: versions.Version | None) -> str:
    if v is None:
        return "the log loader's removeTempFilesAndCollectSwapFiles"
    return (
        "Log.removeTempFilesAndCollectSwapFiles"
        if versions.norm(v) < (3, 0, 0)
        else ("LogLoader.removeTempFilesAndCollectSwapFiles")
    )
