"""CRC-32C (Castagnoli), used by v2 record batches and producer snapshots; CRC-32 for legacy messages.

Kafka: ``org.apache.kafka.common.utils.Crc32C`` (v2 batch CRC over bytes [21, end), DefaultRecordBatch.java)
and ``java.util.zip.CRC32`` (legacy message CRC over magic..end, LegacyRecord.java).
The ``crc32c`` wheel (hardware accelerated) is used when installed; otherwise a table-driven
pure-Python fallback keeps the engine stdlib-only (slow, but correct on a bare host).
"""

from __future__ import annotations

import zlib
from collections.abc import Callable

_POLY = 0x82F63B78


def _make_table() -> list[int]:
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ _POLY if c & 1 else c >> 1
        table.append(c)
    return table


_TABLE = _make_table()


def crc32c_pure(data: bytes | bytearray | memoryview, value: int = 0) -> int:
    crc = value ^ 0xFFFFFFFF
    table = _TABLE
    for b in bytes(data):
        crc = table[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


crc32c: Callable[..., int]
try:  # pragma: no cover - depends on the environment
    from crc32c import crc32c as _fast_crc32c

    crc32c = _fast_crc32c
    ACCELERATED = True
except ImportError:  # pragma: no cover
    crc32c = crc32c_pure
    ACCELERATED = False


def crc32(data: bytes | bytearray | memoryview) -> int:
    return zlib.crc32(data) & 0xFFFFFFFF
