"""The offset-table block shared by schema 1 and WOF: entries, sizes, and their rules.

A block is an offset table of N u32 entries followed by a data area. Sizes are not stored: a
present entry runs to the next present entry in (offset, index) order, the last one to the end of
the block (spec/SPEC.md, "Schema 1 checkpoint", rules 8 and 9). Everything here is vectorised
with NumPy so that a table of 100,000 entries costs a few array operations, not a Python loop.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..entries import DataStore, EntryTable
from ..errors import error_for
from ..model import Buffer

__all__ = ["Block", "block_table", "check_entries", "check_fixed_header", "derive_sizes",
           "read_blocks", "read_table"]

U32 = np.dtype("<u4")
U32_MAX = 0xFFFF_FFFF


def check_fixed_header(view: memoryview, what: str, header_size: int, reserved_at: int,
                       article: str = "a") -> None:
    """Rule 1 of schema 1 and WOF: the file holds ``what``'s header of ``header_size`` bytes
    and has at most U32_MAX bytes (u32 offsets describe no more: a larger file is refused
    before any table is read, at the first byte past that size, never read with its sizes taken
    modulo 2**32); then the reserved byte is 0."""
    size = len(view)
    if size < header_size:
        raise error_for("truncated_header", "header", 0, f"{what} has {article} {header_size}-byte"
                        f" header; the file has {size} bytes")
    if size > U32_MAX:
        raise error_for(
            "limit_exceeded", "file", U32_MAX,
            f"the file has {size} bytes; the u32 offsets of {what} describe at most {U32_MAX}",
        )
    if view[reserved_at] != 0:
        raise error_for("reserved_nonzero", "reserved", reserved_at,
                        f"reserved byte is {view[reserved_at]}, not 0")


def read_table(view: memoryview, start: int, count: int) -> np.ndarray:
    """The ``count`` u32 entries at ``start`` as an int64 array (bounds already checked)."""
    return np.frombuffer(view, dtype=U32, count=count, offset=start).astype(np.int64)


@dataclass(frozen=True)
class Block:
    """A validated block: per entry its offset (0 = absent) and its size (0 when absent)."""

    name: str
    start: int
    data_start: int
    end: int
    offsets: np.ndarray
    sizes: np.ndarray

    @property
    def present(self) -> np.ndarray:
        return self.offsets != 0

    @property
    def in_table_order(self) -> bool:
        """True when the data is stored in table order (onert's convention)."""
        present = self.offsets[self.offsets != 0]
        return bool(np.all(present[1:] >= present[:-1]))

    def entry_field(self, index: int) -> str:
        return f"{self.name}[{index}]"

    def entry_offset(self, index: int) -> int:
        return self.start + 4 * index


def check_entries(
    view: memoryview, name: str, start: int, count: int, end: int, file_size: int
) -> np.ndarray:
    """Rule 8: read one block's table (at ``start``, data ending at ``end``) and check that every
    present entry lies in the file and in the block's data area; return the offsets.

    Entries are judged one at a time in table order: the first entry that breaks either test is
    reported. The caller has checked ``start + 4 * count <= end <= file_size``.
    """
    data_start = start + 4 * count
    offsets = read_table(view, start, count)
    present = offsets != 0
    beyond = present & (offsets > file_size)
    bad = np.flatnonzero(beyond | (present & ((offsets < data_start) | (offsets > end))))
    if bad.size:
        i = int(bad[0])
        if beyond[i]:
            raise error_for(
                "offset_out_of_bounds",
                f"{name}[{i}]",
                start + 4 * i,
                f"entry {i} of the {name} table points to {int(offsets[i])}, past the end of "
                f"the {file_size}-byte file",
            )
        raise error_for(
            "entry_out_of_block",
            f"{name}[{i}]",
            start + 4 * i,
            f"entry {i} of the {name} table points to {int(offsets[i])}, outside the block's "
            f"data area [{data_start}, {end}]",
        )
    return offsets


def derive_sizes(name: str, start: int, end: int, offsets: np.ndarray) -> Block:
    """Rule 9: each present entry's size from the (offset, index) order; no unreferenced bytes."""
    count = len(offsets)
    data_start = start + 4 * count
    block = Block(name, start, data_start, end, offsets, np.zeros(count, dtype=np.int64))
    index = np.flatnonzero(offsets)
    if index.size == 0:
        if data_start != end:
            raise error_for("unreferenced_bytes", name, data_start,
                            f"the {name} block has no entries but {end - data_start} bytes of data")
        return block
    order = index[np.lexsort((index, offsets[index]))]
    sorted_offsets = offsets[order]
    if int(sorted_offsets[0]) != data_start:
        raise error_for(
            "unreferenced_bytes",
            name,
            data_start,
            f"bytes {data_start}..{int(sorted_offsets[0])} of the {name} block belong to no entry",
        )
    sizes = np.empty_like(sorted_offsets)
    sizes[:-1] = sorted_offsets[1:] - sorted_offsets[:-1]
    sizes[-1] = end - sorted_offsets[-1]
    block.sizes[order] = sizes
    return block


def read_blocks(
    view: memoryview, spans: list[tuple[str, int, int]], count: int, file_size: int
) -> dict[str, Block]:
    """Rules 8 then 9 over ``spans`` (name, table start, data end) in file order: every block's
    entries are checked before any block's sizes are derived."""
    offsets = [
        check_entries(view, name, start, count, end, file_size) for name, start, end in spans
    ]
    return {name: derive_sizes(name, start, end, offs)
            for (name, start, end), offs in zip(spans, offsets)}


def block_table(store: DataStore, block: Block, cls: type[Buffer]) -> EntryTable:
    """The present entries of ``block`` as columns; their model objects (of ``cls``) are made
    when first looked at, their data are views on ``store``."""
    # Offsets, sizes and indices of a schema-1/WOF file are u32: kept as such, 12 bytes per
    # entry (a 1M-entry table of an Adam file is 36 MiB of columns, not 72).
    present = np.flatnonzero(block.present).astype(np.uint32)
    return EntryTable(store, present, block.offsets[present].astype(np.uint32),
                      block.sizes[present].astype(np.uint32), cls)
