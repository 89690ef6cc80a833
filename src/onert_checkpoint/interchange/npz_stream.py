"""An npz (a zip of ``.npy`` members, stored uncompressed, as ``numpy.savez`` writes) produced
as a stream of chunks, one member at a time: a writer never holds every array, and the zip's
central directory is kept as its packed bytes (about 60 per member) rather than an object per
member, so a checkpoint of millions of empty entries exports within a bound of its size.

The zip is what ``zipfile`` reads (and ``numpy.load``): ZIP64 records are added when the
members, the sizes or the offsets exceed the classic format's fields; every member's time is
1980-01-01 00:00 (the output depends on the content only).
"""

from __future__ import annotations

import io
import struct
import zlib
from collections.abc import Iterable, Iterator
from typing import IO

import numpy as np
from numpy.lib import format as npy

__all__ = ["TextData", "npy_geometry", "npy_header", "npy_pieces", "npz_chunks", "string_member"]

_LOCAL = struct.Struct("<IHHHHHIIIHH")
_CENTRAL = struct.Struct("<IHHHHHHIIIHHHHHII")
_END = struct.Struct("<IHHHHIIH")
_END64 = struct.Struct("<IQHHIIQQQQ")
_LOCATOR64 = struct.Struct("<IIQI")
_U16, _U32 = 0xFFFF, 0xFFFFFFFF
_DOS_DATE = (0 << 9) | (1 << 5) | 1  # 1980-01-01
_VERSION_NEEDED = 45  # ZIP64 may be needed; what zipfile writes for it


def npy_geometry(f: IO[bytes]) -> tuple[tuple[int, ...], np.dtype, int]:
    """(shape, dtype, data size in bytes) that the ``.npy`` header at ``f`` claims, read
    without reading the data (which NumPy would allocate as the header claims)."""
    version = npy.read_magic(f)
    # format 3.0 differs from 2.0 only in the header's text encoding
    read = npy.read_array_header_1_0 if version == (1, 0) else npy.read_array_header_2_0
    shape, _, dtype = read(f)
    return shape, dtype, int(np.prod(shape, dtype=object)) * dtype.itemsize


def npy_header(arr: np.ndarray) -> bytes:
    """The ``.npy`` header (magic, version, padded dict) ``numpy.save`` writes for ``arr``:
    version 1.0, or 2.0 when the header does not fit 1.0's 65535 bytes."""
    out = io.BytesIO()
    fields = npy.header_data_from_array_1_0(arr)
    try:
        npy.write_array_header_1_0(out, fields)
    except ValueError:
        out = io.BytesIO()
        npy.write_array_header_2_0(out, fields)
    return out.getvalue()


class TextData:
    """The data of ``numpy.array(text)`` (a 0-d unicode array: the text in UTF-32-LE) for the
    text made of ``pieces``, encoded a piece at a time when it is written (4 bytes a character:
    a 10 MB metadata text would be a 40 MB array)."""

    def __init__(self, pieces: list[str]) -> None:
        self.pieces = pieces
        self.chars = sum(len(p) for p in pieces)

    def __len__(self) -> int:
        return 4 * max(self.chars, 1)  # numpy stores "" as one NUL code point (dtype <U1)

    def chunks(self) -> Iterator[bytes]:
        if not self.chars:
            yield b"\0\0\0\0"
        for piece in self.pieces:
            for at in range(0, len(piece), 1 << 20):
                yield piece[at : at + (1 << 20)].encode("utf-32-le", "surrogatepass")


def string_member(pieces: str | list[str]) -> tuple[bytes, TextData]:
    """(npy header, data) of ``numpy.array(text)`` for the text made of ``pieces``, without
    making the text or the array."""
    data = TextData([pieces] if isinstance(pieces, str) else pieces)
    return npy_header(np.empty((), dtype=f"<U{max(data.chars, 1)}")), data


def npy_pieces(arr: np.ndarray) -> tuple[bytes, memoryview | bytes]:
    """(header, data): the bytes of ``numpy.save(f, arr)`` without a copy of a contiguous
    array."""
    if arr.dtype.hasobject:  # pragma: no cover - exports hold plain numbers only
        raise ValueError("object arrays are not exported")
    if not arr.flags.c_contiguous:  # (ascontiguousarray would make a 0-d array 1-d)
        arr = arr.copy(order="C")
    return npy_header(arr), memoryview(arr.reshape(-1).view(np.uint8))  # type: ignore[arg-type]


def npz_chunks(
    members: Iterable[tuple[str, np.ndarray | tuple[bytes, bytes | memoryview | TextData]]],
) -> Iterator[bytes | memoryview]:
    """The bytes of an npz holding ``members`` (name without ``.npy``, array or (npy header,
    data)), in file order."""
    central = bytearray()
    count = offset = 0
    for name, member in members:
        header, data = member if isinstance(member, tuple) else npy_pieces(member)
        size = len(header) + len(data)
        parts = data.chunks() if isinstance(data, TextData) else (data,)
        crc = zlib.crc32(header)
        for part in parts:
            crc = zlib.crc32(part, crc)
        raw_name = (name + ".npy").encode("utf-8")
        flags = 0 if raw_name.isascii() else 0x800  # the name is UTF-8
        big = size >= _U32
        extra = struct.pack("<HHQQ", 1, 16, size, size) if big else b""
        local = _LOCAL.pack(0x04034B50, _VERSION_NEEDED, flags, 0, 0, _DOS_DATE, crc,
                            _U32 if big else size, _U32 if big else size, len(raw_name), len(extra))
        yield local + raw_name + extra
        yield header
        if isinstance(data, TextData):
            yield from data.chunks()  # encoded again: a second pass costs less than the text
        elif len(data):
            yield data
        # the central record: ZIP64 extra fields in the order sizes, offset, as needed
        fields = ([size, size] if big else []) + ([offset] if offset >= _U32 else [])
        cextra = struct.pack(f"<HH{len(fields)}Q", 1, 8 * len(fields), *fields) if fields else b""
        central += _CENTRAL.pack(
            0x02014B50, _VERSION_NEEDED, _VERSION_NEEDED, flags, 0, 0, _DOS_DATE, crc,
            _U32 if big else size, _U32 if big else size, len(raw_name), len(cextra), 0, 0, 0,
            0x180 << 16, min(offset, _U32),  # -rw------- as zipfile's files, no attributes
        )
        central += raw_name + cextra
        count += 1
        offset += len(local) + len(raw_name) + len(extra) + size
    start = offset
    yield memoryview(central)
    size = len(central)
    if count >= _U16 or start >= _U32 or size >= _U32:
        yield _END64.pack(0x06064B50, 44, _VERSION_NEEDED, _VERSION_NEEDED, 0, 0, count, count,
                          size, start)
        yield _LOCATOR64.pack(0x07064B50, 0, start + size, 1)
    yield _END.pack(0x06054B50, 0, 0, min(count, _U16), min(count, _U16), min(size, _U32),
                    min(start, _U32), 0)
