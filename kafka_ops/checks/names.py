"""Small helpers for the permission and directory checks: group names and permission bits as text, the command
that writes a partition.metadata."""

from __future__ import annotations

import functools

from kafka_ops.engine.shell import q


@functools.lru_cache(maxsize=64)  # once per audit: the checks name the same few ids for each finding
def group_name(gid: int) -> str:
    import grp

    try:
        return grp.getgrgid(gid).gr_name
    except KeyError:
        return str(gid)


def rwx(bits: int) -> str:
    """3 permission bits as ``rw-``."""
    return "".join(c if bits & m else "-" for c, m in (("r", 4), ("w", 2), ("x", 1)))


def write_topic_id(path: str, topic: str) -> str:
    """How to write a partition.metadata (DIR005, DIR006): the topic's id from the cluster, in the file's format."""
    return (
        f"write {q(path)} with the topic's id (kafka-topics.sh --describe --topic {q(topic)} shows TopicId): "
        f"printf 'version: 0\\ntopic_id: %s\\n' <TopicId> > {q(path)}, owned by the broker user"
    )
