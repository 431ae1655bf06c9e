"""Big-endian primitives and Kafka's zig-zag varints (ByteUtils.java)."""

from __future__ import annotations

import struct

I8 = struct.Struct(">b")
I16 = struct.Struct(">h")
U16 = struct.Struct(">H")
I32 = struct.Struct(">i")
U32 = struct.Struct(">I")
I64 = struct.Struct(">q")


class Truncated(Exception):
    """Raised internally when a read runs past the end of a buffer."""


def read_varint(buf: bytes | memoryview, pos: int) -> tuple[int, int]:
    """Read a zig-zag varint (up to 5 bytes, int32). Returns (value, new position)."""
    result = 0
    shift = 0
    n = len(buf)
    while True:
        if pos >= n:
            raise Truncated
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            break
        shift += 7
        if shift > 28:
            raise ValueError("varint is longer than 5 bytes")
    # ByteUtils.readUnsignedVarint accumulates in a Java int: bits past 32 of a 5th byte are dropped
    result &= 0xFFFFFFFF
    return (result >> 1) ^ -(result & 1), pos


def read_varlong(buf: bytes | memoryview, pos: int) -> tuple[int, int]:
    """Read a zig-zag varlong (up to 10 bytes, int64)."""
    result = 0
    shift = 0
    n = len(buf)
    while True:
        if pos >= n:
            raise Truncated
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            break
        shift += 7
        if shift > 63:
            raise ValueError("varlong is longer than 10 bytes")
    # ByteUtils.readUnsignedVarlong accumulates in a Java long: bits past 64 of a 10th byte are dropped
    result &= 0xFFFFFFFFFFFFFFFF
    return (result >> 1) ^ -(result & 1), pos


def read_uvarint(buf: bytes | memoryview, pos: int) -> tuple[int, int]:
    """Unsigned varint (flexible-version protocol fields: compact lengths, tagged fields)."""
    result = 0
    shift = 0
    n = len(buf)
    while True:
        if pos >= n:
            raise Truncated
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7
        if shift > 35:
            raise ValueError("unsigned varint is longer than 5 bytes")


def write_varint(value: int) -> bytes:
    """Zig-zag encode a signed int (int32 or int64 range)."""
    v = (value << 1) ^ (value >> 63)
    v &= 0xFFFFFFFFFFFFFFFF
    out = bytearray()
    while v & ~0x7F:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def write_uvarint(value: int) -> bytes:
    out = bytearray()
    while value & ~0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def take(buf: bytes | memoryview, pos: int, n: int) -> tuple[bytes, int]:
    end = pos + n
    if n < 0 or end > len(buf):
        raise Truncated
    return bytes(buf[pos:end]), end
