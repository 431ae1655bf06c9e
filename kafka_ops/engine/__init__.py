"""The on-disk engine: reads every file of a Kafka log dir the way the broker reads it.

Standard library only, so that it can be copied to a bare broker host (the Ansible role and the
Spark job ship it). Optional accelerators (``crc32c``, ``cramjam``) are used when importable.
Nothing in this package ever writes to, truncates or maps for writing a file it reads.
"""

from kafka_ops.engine.errors import EngineError, FormatError

__all__ = ["EngineError", "FormatError"]
