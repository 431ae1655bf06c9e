"""Batch codecs (CompressionType.java: 0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd).

gzip is in the standard library; snappy, lz4 and zstd need the optional ``cramjam`` wheel.
Kafka's snappy is the xerial/snappy-java block stream (``SnappyOutputStream``: magic header, then
``int32 length + raw snappy block`` repeated); lz4 is the LZ4 frame format (KafkaLZ4BlockOutputStream);
zstd is a zstd frame.
"""

from __future__ import annotations

import gzip
import struct

CODECS = {0: "none", 1: "gzip", 2: "snappy", 3: "lz4", 4: "zstd"}
CODEC_IDS = {v: k for k, v in CODECS.items()}

_XERIAL_MAGIC = b"\x82SNAPPY\x00"
_XERIAL_HEADER = _XERIAL_MAGIC + struct.pack(">ii", 1, 1)

try:  # pragma: no cover - environment dependent
    import cramjam as _cramjam
except ImportError:  # pragma: no cover
    _cramjam = None


class CodecUnavailable(Exception):
    """The codec's optional library is not installed."""


def available(codec: int) -> bool:
    return codec in (0, 1) or (_cramjam is not None and codec in (2, 3, 4))


def decompress(codec: int, data: bytes | memoryview) -> bytes:
    if codec == 0:
        return bytes(data)
    if codec == 1:
        return gzip.decompress(bytes(data))
    if codec not in CODECS:
        raise ValueError(f"unknown compression codec {codec}")
    if _cramjam is None:
        raise CodecUnavailable(f"{CODECS[codec]} needs the optional 'cramjam' package")
    if codec == 2:
        return _snappy_decompress(bytes(data))
    if codec == 3:
        return bytes(_cramjam.lz4.decompress(bytes(data)))
    return bytes(_cramjam.zstd.decompress(bytes(data)))


def _snappy_decompress(data: bytes) -> bytes:
    assert _cramjam is not None
    if not data.startswith(_XERIAL_MAGIC):
        return bytes(_cramjam.snappy.decompress_raw(data))
    out = bytearray()
    pos = 16  # magic (8) + version (4) + compatible version (4)
    while pos < len(data):
        if pos + 4 > len(data):
            raise ValueError("truncated xerial snappy block header")
        (n,) = struct.unpack_from(">i", data, pos)
        pos += 4
        if n < 0 or pos + n > len(data):
            raise ValueError("truncated xerial snappy block")
        out += bytes(_cramjam.snappy.decompress_raw(data[pos : pos + n]))
        pos += n
    return bytes(out)


def compress(codec: int, data: bytes) -> bytes:
    """Compress as a Kafka producer would (used by the simulator)."""
    if codec == 0:
        return data
    if codec == 1:
        return gzip.compress(data, mtime=0)
    if _cramjam is None:
        raise CodecUnavailable(f"{CODECS.get(codec, codec)} needs the optional 'cramjam' package")
    if codec == 2:
        out = bytearray(_XERIAL_HEADER)
        for i in range(0, len(data), 32 * 1024):  # snappy-java's default block size
            block = bytes(_cramjam.snappy.compress_raw(data[i : i + 32 * 1024]))
            out += struct.pack(">i", len(block)) + block
        return bytes(out)
    if codec == 3:
        return bytes(_cramjam.lz4.compress(data))
    if codec == 4:
        return bytes(_cramjam.zstd.compress(data))
    raise ValueError(f"unknown compression codec {codec}")
