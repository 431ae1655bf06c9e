"""engine.fileio.read_bytes: what a plain read gives (the whole file, or its first max_bytes), on the opened fd."""

from __future__ import annotations

import os

import pytest

from kafka_ops.engine.errors import EngineError
from kafka_ops.engine.fileio import read_bytes


@pytest.mark.parametrize("size", [0, 1, 12, 65535, 65536, 65537, 200_001])
def test_read_bytes_reads_what_a_plain_read_reads(tmp_path, size: int) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "00000000000000000042.snapshot"
    data = os.urandom(size)
    path.write_bytes(data)
    assert read_bytes(str(path)) == data
    for limit in (0, 1, 10, size, size + 5, 70_000):
        assert read_bytes(str(path), limit) == data[:limit]


def test_read_bytes_refuses_a_link_and_a_fifo(tmp_path) -> None:  # type: ignore[no-untyped-def]
    target = tmp_path / "secret"
    target.write_bytes(b"root only")
    (tmp_path / "link.snapshot").symlink_to(target)
    os.mkfifo(tmp_path / "fifo.snapshot")
    with pytest.raises(EngineError, match="symbolic link"):
        read_bytes(str(tmp_path / "link.snapshot"))
    with pytest.raises(EngineError, match="FIFO"):
        read_bytes(str(tmp_path / "fifo.snapshot"))
