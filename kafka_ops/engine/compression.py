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
    _cramjam = None  # type: ignore[assignment]


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
        # Kafka 0.8/0.9 producers wrote a wrong frame-descriptor checksum (HC byte) and Kafka ignores it for
        # magic v0 (Lz4Compression.wrapForInput: ignoreFlagDescriptorChecksum = messageVersion == MAGIC_VALUE_V0)
        return lz4_decompress(bytes(data), ignore_header_checksum=magic == 0)
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


# Kafka's LZ4 frame (clients/.../compress/Lz4BlockOutputStream.java, Lz4BlockInputStream.java at 3.9)
LZ4_MAGIC = 0x184D2204
LZ4_INCOMPRESSIBLE = 0x80000000
_LZ4_BLOCK_SIZES = {4: 1 << 16, 5: 1 << 18, 6: 1 << 20, 7: 1 << 22}  # BD.getBlockMaximumSize


def lz4_decompress(data: bytes, ignore_header_checksum: bool = False) -> bytes:
    """An LZ4 frame as Kafka reads it (Lz4BlockInputStream), not as the LZ4 library does.

    Kafka has its own frame reader and is stricter than the format: FLG.validate() refuses reserved bits
    (so dictionary ids), dependent blocks ("Dependent block stream is unsupported") and versions other than 1;
    BD.validate() refuses reserved bits and block sizes outside 4..7; readHeader() checks the HC byte
    (``(xxh32(FLG..descriptor end) >> 8) & 0xFF``) unless told to ignore it; readBlock() reads blocks up to the
    end mark (int32 0; a content checksum after it is skipped, not verified) and verifies block checksums.
    A frame Kafka refuses is a batch its consumers and log cleaner cannot read: raise ValueError with
    Kafka's message.
    """
    assert _cramjam is not None
    if len(data) < 6:
        raise ValueError("Stream ended prematurely")
    if int.from_bytes(data[:4], "little") != LZ4_MAGIC:
        raise ValueError("Stream unsupported (invalid magic bytes)")
    flg, bd = data[4], data[5]
    if flg & 0x03:
        raise ValueError("Reserved bits must be 0")
    if not flg & 0x20:
        raise ValueError("Dependent block stream is unsupported")
    if flg >> 6 != 1:
        raise ValueError(f"Version {flg >> 6} is unsupported")
    if bd & 0x0F:
        raise ValueError("Reserved2 field must be 0")
    if not 4 <= (bd >> 4) & 7 <= 7:
        raise ValueError("Block size value must be between 4 and 7")
    if bd & 0x80:
        raise ValueError("Reserved3 field must be 0")
    max_block = _LZ4_BLOCK_SIZES[(bd >> 4) & 7]
    pos = 6
    if flg & 0x08:  # content size: skipped
        if len(data) < pos + 8:
            raise ValueError("Stream ended prematurely")
        pos += 8
    if not ignore_header_checksum and (pos >= len(data) or data[pos] != (xxh32(data[4:pos]) >> 8) & 0xFF):
        raise ValueError("Stream frame descriptor corrupted")
    pos += 1
    out = bytearray()
    buf = bytearray(max_block)
    while True:
        if pos + 4 > len(data):
            raise ValueError("Stream ended prematurely")
        size = int.from_bytes(data[pos : pos + 4], "little")
        pos += 4
        compressed = not size & LZ4_INCOMPRESSIBLE
        size &= ~LZ4_INCOMPRESSIBLE
        if size == 0:
            return bytes(out)  # end mark
        if size > max_block:
            raise ValueError(f"Block size {size} exceeded max: {max_block}")
        if pos + size > len(data):
            raise ValueError("Stream ended prematurely")
        block = data[pos : pos + size]
        if compressed:
            try:
                n = _cramjam.lz4.decompress_block_into(block, buf)
            except Exception as exc:  # cramjam.DecompressionError
                raise ValueError(f"LZ4 block: {exc}") from exc
            out += buf[:n]
        else:
            out += block
        pos += size
        if flg & 0x10:  # block checksum
            if pos + 4 > len(data) or int.from_bytes(data[pos : pos + 4], "little") != xxh32(block):
                raise ValueError("Block checksum mismatch")
            pos += 4


def lz4_compress(data: bytes, magic: int = 2) -> bytes:
    """An LZ4 frame as Kafka's producer writes it (Lz4BlockOutputStream: FLG 0x60 = version 1, independent
    blocks, no checksums; BD 0x40 = 64 KiB blocks; an incompressible block stored raw; end mark 0)."""
    assert _cramjam is not None
    header = bytes([0x60, 0x40])
    # magic v0: Kafka 0.8/0.9's broken HC was computed over the magic bytes too (useBrokenFlagDescriptorChecksum)
    hc_input = LZ4_MAGIC.to_bytes(4, "little") + header if magic == 0 else header
    out = bytearray(LZ4_MAGIC.to_bytes(4, "little") + header + bytes([(xxh32(hc_input) >> 8) & 0xFF]))
    for i in range(0, len(data), 1 << 16):
        chunk = data[i : i + (1 << 16)]
        block = bytes(_cramjam.lz4.compress_block(chunk, store_size=False))
        if len(block) >= len(chunk):
            out += (len(chunk) | LZ4_INCOMPRESSIBLE).to_bytes(4, "little") + chunk
        else:
            out += len(block).to_bytes(4, "little") + block
    out += bytes(4)
    return bytes(out)


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
        return lz4_compress(data)
    if codec == 4:
        return bytes(_cramjam.zstd.compress(data))
    raise ValueError(f"unknown compression codec {codec}")
