"""Schema 3's data_blocks section (kind 0x100008, optional; spec/SPEC.md 7.4): one CRC-32C
per block of the data section, so that reading one tensor verifies the blocks its bytes lie in
instead of the whole data section.

Reading: rules B1 to B5, then blocks verified on demand, each once
(:meth:`DataBlocks.check_range`), or all in order (B6). Writing: :class:`BlockCrcs` sums the
blocks' CRCs and the whole section's in the container writer's one pass over the data.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from onert_checkpoint_generated.layout import (
    V3_DATA_BLOCKS_KIND,
    V3_DATA_BLOCKS_SECTION_CRC,
    V3_MAX_BLOCK_SHIFT,
    V3_MIN_BLOCK_SHIFT,
    V3DataBlocksHead,
)

from .constants import crc
from .extensions import Extension, ceil_shift, register
from .rules import fail
from .section_table import SectionInfo, check_section_crc

__all__ = ["DEFAULT_BLOCK_SIZE", "KIND", "BlockCrcs", "DataBlocks", "combine"]

KIND = V3_DATA_BLOCKS_KIND
#: block_shift, reserved, num_blocks (onert_checkpoint_v3.ksy, `data_blocks_section`); then
#: one CRC per block, each CRC_SIZE bytes
HEAD_SIZE = V3DataBlocksHead.SIZE
CRC_TYPE, CRC_SIZE = V3_DATA_BLOCKS_SECTION_CRC.format, V3_DATA_BLOCKS_SECTION_CRC.size


@dataclass
class DataBlocks:
    """A data section's blocks and their recorded CRCs; ``done[i]`` once block i matched.

    ``rest``: the data section's other deferred checks (its own CRC, then P4), run by
    :meth:`check_range` once reads have verified every block: a reader that has handed out
    every byte has then run all of B6 and P4, as one that reports a file valid must (SPEC
    7.4), whatever entry point read the bytes. Its CRC then needs no pass over the data:
    :meth:`section_crc` combines the verified blocks' CRCs."""

    view: memoryview
    data: SectionInfo
    shift: int
    crcs: np.ndarray  # u32, one per block
    rest: Callable[[], None] | None = None
    #: one byte per block (indexing a bytearray is what a read of one tensor costs)
    done: bytearray = field(init=False)
    remaining: int = field(init=False)
    completed: bool = field(init=False, default=False)
    #: the data section's bounds (what each block's check reads, without a property)
    _start: int = field(init=False)
    _end: int = field(init=False)

    def __post_init__(self) -> None:
        self.reset()
        self._start, self._end = self.data.start, self.data.end

    def reset(self) -> None:
        """Forget which blocks passed (a caller asks again: the bytes may have changed)."""
        self.done = bytearray(self.crcs.size)
        self.remaining = self.crcs.size
        self.completed = False

    def check_range(self, start: int, end: int) -> bool:
        """Verify every block that bytes [start, end) (absolute) touch, each once per file.
        True once every block and :attr:`rest` have passed: the caller has nothing left to
        check, and need not call again."""
        if end > start:
            lo = (start - self._start) >> self.shift
            hi = (end - 1 - self._start) >> self.shift
            done = self.done
            for i in range(lo, hi + 1):
                if not done[i]:
                    self._check(i)
        if not self.remaining and self.rest is not None and not self.completed:
            self.rest()
            self.completed = True
        return self.completed

    def deferred(self, padding: Callable[[], None]) -> Callable[[], None]:
        """The deferred data checks in the spec's order: every block (B6; all of them again,
        for a caller who asks again after the bytes may have changed), the data section's CRC
        (combined from theirs) and P4 (``padding``); the last two are also :attr:`rest`."""

        def rest() -> None:
            self.check_section_crc()
            padding()

        def run() -> None:
            self.reset()
            self.check_all()
            rest()
            self.completed = True

        self.rest = rest
        return run

    def check_all(self) -> None:
        """Rule B6's first half: every block not verified yet, in order."""
        done = self.done
        for i in range(len(done)):
            if not done[i]:
                self._check(i)

    def check_section_crc(self) -> None:
        """B6's end, once every block has passed: the data section's own CRC (T4 f), combined
        from the blocks' CRCs instead of read again."""
        assert not self.remaining
        check_section_crc(self.view, self.data, combine(self.crcs, self.shift, self.data.length))

    def _check(self, i: int) -> None:
        start = self._start + (i << self.shift)
        end = min(start + (1 << self.shift), self._end)
        computed = crc(self.view[start:end])
        recorded = self.crcs.item(i)  # read from the file each time: it may have changed
        if computed != recorded:
            fail("block_checksum", f"data_blocks.crc[{i}]", start,
                 f"CRC-32C of data block {i} (bytes {start}..{end - 1}) is {computed:#010x}; "
                 f"the data_blocks section records {recorded:#010x}")
        self.done[i] = 1
        self.remaining -= 1


# CRC-32C of a concatenation from the CRCs of its parts (as zlib's crc32_combine): appending n
# zero bytes to a message is a linear map of its CRC over GF(2), a 32x32 bit matrix; crc(A + B)
# is that map for len(B) applied to crc(A), xor crc(B). Matrices are lists of 32 column words.
_POLY = 0x82F63B78  # CRC-32C, reflected


def _times(mat: list[int], vec: int) -> int:
    out, i = 0, 0
    while vec:
        if vec & 1:
            out ^= mat[i]
        vec >>= 1
        i += 1
    return out


def _square(mat: list[int]) -> list[int]:
    return [_times(mat, mat[n]) for n in range(32)]


@functools.cache
def _zeros(log2_bytes: int) -> list[int]:
    """The map of appending 2**log2_bytes zero bytes."""
    if log2_bytes == 0:
        bit = [_POLY] + [1 << n for n in range(31)]  # one zero bit
        return _square(_square(_square(bit)))  # eight
    return _square(_zeros(log2_bytes - 1))


@functools.cache
def _tables(log2_bytes: int) -> tuple[list[int], ...]:
    """:func:`_zeros` as four byte-indexed tables: the map of x is their xor over x's bytes."""
    mat = _zeros(log2_bytes)
    return tuple([_times(mat, b << (8 * k)) for b in range(256)] for k in range(4))


def _append_zeros(value: int, length: int) -> int:
    k = 0
    while length:
        if length & 1:
            value = _times(_zeros(k), value)
        length >>= 1
        k += 1
    return value


def combine(crcs: np.ndarray, shift: int, length: int) -> int:
    """The CRC-32C of ``length`` bytes from the CRCs of their blocks of 2**shift bytes (the
    last one shorter)."""
    values = crcs.tolist()
    if not values:
        return 0
    t0, t1, t2, t3 = _tables(shift)
    whole = values[0]
    for value in values[1:-1]:  # full blocks: one table lookup per byte of the CRC
        w = whole
        whole = t0[w & 255] ^ t1[(w >> 8) & 255] ^ t2[(w >> 16) & 255] ^ t3[w >> 24] ^ value
    if len(values) > 1:
        last = length - ((len(values) - 1) << shift)
        whole = _append_zeros(whole, last) ^ values[-1]
    return whole


def _check(view: memoryview, sec: SectionInfo, shift: int, count: int, data: SectionInfo | None,
           eager: bool) -> DataBlocks:
    """Rules B4 and B5 on the data_blocks section ``sec`` (spec/SPEC.md 7.4), after B1 to B3,
    and with ``eager`` B6 (every block's CRC, then the data section's)."""
    s, length = sec.start, sec.length
    if data is None or data.length == 0:  # B4
        fail("empty_section", "data_blocks", s, "a data_blocks section, but no data to cover")
    expected = ceil_shift(data.length, shift)
    if count != expected:  # B5
        fail("bad_data_blocks", "data_blocks.num_blocks", s + V3DataBlocksHead.num_blocks.offset,
             f"num_blocks is {count}; {data.length} data bytes in blocks of {1 << shift} "
             f"make {expected}")
    if length != HEAD_SIZE + CRC_SIZE * count:
        fail("bad_data_blocks", "data_blocks.crc", s + HEAD_SIZE,
             f"the data_blocks section has {length} bytes; {count} blocks need "
             f"{HEAD_SIZE + CRC_SIZE * count}")
    blocks = DataBlocks(view, data, shift, np.frombuffer(view, CRC_TYPE, count, s + HEAD_SIZE))
    if eager:
        blocks.check_all()
        blocks.check_section_crc()
    return blocks


class BlockCrcs:
    """``crc(piece, value)`` for the container writer's running CRC that also sums the CRC of
    every block of 2**shift bytes of the same stream (pieces in order, from the section's
    start): the whole-section CRC and the block CRCs in one pass over the data."""

    def __init__(self, shift: int) -> None:
        self.shift, self.size = shift, 1 << shift
        self.crcs: list[int] = []
        self._value = 0
        self._fill = 0

    def __call__(self, piece: Any, value: int) -> int:
        mv = memoryview(piece).cast("B")
        n, pos, size = mv.nbytes, 0, self.size
        while pos < n:
            take = min(size - self._fill, n - pos)
            self._value = crc(mv[pos : pos + take], self._value)
            self._fill += take
            pos += take
            if self._fill == size:
                self.crcs.append(self._value)
                self._value = self._fill = 0
        return crc(mv, value)

    def body(self) -> bytes:
        """The data_blocks section of every block's CRC, the last (shorter) block's included."""
        crcs = [*self.crcs, self._value] if self._fill else self.crcs
        head = np.array([(self.shift, 0, len(crcs))], V3DataBlocksHead.DTYPE).tobytes()
        return head + np.asarray(crcs, CRC_TYPE).tobytes()


#: The writer's block size when the checkpoint names none. 64 KiB: one 35 KB tensor costs at
#: most two blocks of CRC (about 0.1 ms), the section 4 bytes per 64 KiB of data (0.006%);
#: tests/bench/bench_data_blocks.py measures the choice.
DEFAULT_BLOCK_SIZE = 1 << 16
register(Extension(
    KIND, "data_blocks", V3DataBlocksHead, "bad_data_blocks", V3_MIN_BLOCK_SHIFT,
    V3_MAX_BLOCK_SHIFT, f"{1 << V3_MIN_BLOCK_SHIFT} B to {1 << V3_MAX_BLOCK_SHIFT} B blocks",
    "data_block_size", " bytes", default=DEFAULT_BLOCK_SIZE.bit_length() - 1, default_above=0,
    late=False, check=_check,
    body=lambda shift, placed: bytes(HEAD_SIZE + CRC_SIZE * ceil_shift(placed.data_len, shift)),
    covers=lambda placed: placed.data_len, sums=BlockCrcs,
))
