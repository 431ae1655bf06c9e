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


def decompress(codec: int, data: bytes | memoryview, magic: int = 2) -> bytes:
    """Decompress a batch body (v2) or a legacy wrapper's value (``magic`` 0/1)."""
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
        raw = bytes(data)
        if magic == 0:
            # Kafka 0.8/0.9 producers wrote a wrong LZ4 frame-descriptor checksum (HC byte) and Kafka
            # ignores it for magic v0 (Lz4Compression.wrapForInput -> new Lz4BlockInputStream(...,
            # ignoreFlagDescriptorChecksum = messageVersion == MAGIC_VALUE_V0)); the LZ4 library checks
            # it, so put the correct byte in first.
            raw = _lz4_fix_header_checksum(raw)
        return bytes(_cramjam.lz4.decompress(raw))
    return bytes(_cramjam.zstd.decompress(bytes(data)))


_P1, _P2, _P3, _P4, _P5 = 2654435761, 2246822519, 3266489917, 668265263, 374761393
_M32 = 0xFFFFFFFF


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (32 - r))) & _M32


def xxh32(data: bytes, seed: int = 0) -> int:
    """XXH32 (the LZ4 frame format's checksum), pure Python: only used on a few header bytes."""
    n = len(data)
    i = 0
    if n >= 16:
        v = [(seed + _P1 + _P2) & _M32, (seed + _P2) & _M32, seed & _M32, (seed - _P1) & _M32]
        while i + 16 <= n:
            for j in range(4):
                lane = int.from_bytes(data[i : i + 4], "little")
                v[j] = (_rotl((v[j] + lane * _P2) & _M32, 13) * _P1) & _M32
                i += 4
        h = (_rotl(v[0], 1) + _rotl(v[1], 7) + _rotl(v[2], 12) + _rotl(v[3], 18)) & _M32
    else:
        h = (seed + _P5) & _M32
    h = (h + n) & _M32
    while i + 4 <= n:
        h = (h + int.from_bytes(data[i : i + 4], "little") * _P3) & _M32
        h = (_rotl(h, 17) * _P4) & _M32
        i += 4
    while i < n:
        h = (h + data[i] * _P5) & _M32
        h = (_rotl(h, 11) * _P1) & _M32
        i += 1
    h ^= h >> 15
    h = (h * _P2) & _M32
    h ^= h >> 13
    h = (h * _P3) & _M32
    h ^= h >> 16
    return h


def _lz4_fix_header_checksum(data: bytes) -> bytes:
    """Rewrite the frame descriptor's HC byte: ``(xxh32(FLG..last descriptor byte) >> 8) & 0xFF``."""
    if len(data) < 7:
        return data  # too short for a frame header: let the library report it
    flg = data[4]
    desc_end = 6 + (8 if flg & 0x08 else 0) + (4 if flg & 0x01 else 0)  # content size, dictionary id
    if desc_end >= len(data):
        return data
    hc = (xxh32(data[4:desc_end]) >> 8) & 0xFF
    return data[:desc_end] + bytes([hc]) + data[desc_end + 1 :]


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
