"""Turning what the caller passes (a path, bytes, any buffer) into one read-only byte buffer.

Paths are memory-mapped, so tensor data handed out later are views on the page cache: opening a
1 GiB checkpoint reads only the bytes that are looked at.
"""

from __future__ import annotations

import io
import mmap
import os

__all__ = ["BufferReader", "Source", "open_source"]

Source = str | os.PathLike | bytes | bytearray | memoryview | mmap.mmap | object


def open_source(source: Source) -> memoryview:
    """A read-only, byte-addressed view of ``source``; paths are mapped, never read whole."""
    if isinstance(source, (str, os.PathLike)):
        with open(source, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size == 0:
                return memoryview(b"")
            mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        return memoryview(mapped)
    view = memoryview(source)  # type: ignore[arg-type]
    if view.ndim != 1 or view.itemsize != 1:
        view = view.cast("B")
    return view.toreadonly()


class BufferReader(io.RawIOBase):
    """A seekable read-only stream over a buffer, without copying it (for generated parsers)."""

    def __init__(self, view: memoryview) -> None:
        super().__init__()
        self._view = view
        self._pos = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: len(self._view)}[whence]
        self._pos = max(0, base + offset)
        return self._pos

    def close(self) -> None:
        # Generated parsers refer to themselves (``_root``), so they live until the cyclic
        # collector runs; dropping the view here lets a mapped file go as soon as the
        # checkpoint does.
        self._view = memoryview(b"")
        super().close()

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        chunk = self._view[self._pos : self._pos + len(buffer)]
        n = len(chunk)
        memoryview(buffer).cast("B")[:n] = chunk
        self._pos += n
        return n
