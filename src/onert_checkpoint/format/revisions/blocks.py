"""The offset-table block shared by schema 1 and WOF: entries, sizes, and their rules, and
where a writer puts every entry.

A block is an offset table of N u32 entries followed by a data area. Sizes are not stored: a
present entry runs to the next present entry in (offset, index) order, the last one to the end of
the block (spec/SPEC.md, "Schema 1 checkpoint", rules 8 and 9). Everything here is vectorised
with NumPy so that a table of 100,000 entries costs a few array operations, not a Python loop.

Writers compute every offset first (:func:`plan_block`), then stream the header, the tables
and the data in file order, so a checkpoint is never assembled in memory. A planned table is
kept sparse (the entries that are present) and produced in windows as it is written: a file
whose origin section claims 2**24 entries costs the memory of its present entries, not of its
table (spec/SPEC.md 9.2).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, NoReturn

import numpy as np
from kaitaistruct import KaitaiStream

from ..entries import DataStore, EntryTable
from ..errors import error_for
from ..model import Buffer
from ..source import BufferReader

__all__ = ["MAX_TABLE_ENTRIES", "U32_MAX", "Block", "PlannedBlock", "block_table", "check_entries",
           "check_table_length", "data_view", "derive_sizes", "plan_block", "read_blocks",
           "read_header", "read_table", "refuse", "storage_order"]

U32 = np.dtype("<u4")
U32_MAX = 0xFFFF_FFFF

#: The longest offset table this library writes (spec/SPEC.md 9.2): schema 2's MAX_TENSORS.
#: A table of this length is 64 MiB per block; N is stored as u32 in schema 1 and WOF.
MAX_TABLE_ENTRIES = 1 << 24

#: Entries per window when a table is written (1 MiB of u32 values).
_WINDOW = 1 << 18


def read_header(view: memoryview, what: str, layout: Any, parser: Callable[[KaitaiStream], Any],
                article: str = "a") -> Any:
    """Rules 1 to 3 of schema 1 and WOF: the file holds ``what``'s header (``layout``, its
    generated layout record) and has at most U32_MAX bytes (u32 offsets describe no more: a
    larger file is refused before any table is read, at the first byte past that size, never
    read with its sizes taken modulo 2**32); the reserved byte is 0; the header, read by the
    generated ``parser``, has an offset table that fits in the file."""
    size, header_size, reserved_at = len(view), layout.SIZE, layout.reserved.offset
    if size < header_size:
        raise error_for("truncated_header", "header", 0, f"{what} has {article} {header_size}-byte"
                        f" header; the file has {size} bytes")
    if size > U32_MAX:
        raise error_for("limit_exceeded", "file", U32_MAX, f"the file has {size} bytes; the u32 "
                        f"offsets of {what} describe at most {U32_MAX}")
    if view[reserved_at] != 0:
        raise error_for("reserved_nonzero", "reserved", reserved_at,
                        f"reserved byte is {view[reserved_at]}, not 0")
    hdr = parser(KaitaiStream(BufferReader(view)))
    n = hdr.num_entries
    if header_size + 4 * n > size:
        raise error_for("count_exceeds_file", "num_entries", layout.num_entries.offset,
                        f"{n} entries need a {4 * n}-byte offset table; the file has {size} bytes")
    return hdr


def read_table(view: memoryview, start: int, count: int) -> np.ndarray:
    """The ``count`` u32 entries at ``start`` as an int64 array (bounds already checked)."""
    return np.frombuffer(view, dtype=U32, count=count, offset=start).astype(np.int64)


@dataclass(frozen=True)
class Block:
    """A validated block: per entry its offset (0 = absent) and its size (0 when absent)."""

    name: str
    start: int
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


def check_entries(view: memoryview, name: str, start: int, count: int, end: int,
                  file_size: int) -> np.ndarray:
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
            code, where = "offset_out_of_bounds", f"past the end of the {file_size}-byte file"
        else:
            area = f"[{data_start}, {end}]"
            code, where = "entry_out_of_block", f"outside the block's data area {area}"
        raise error_for(code, f"{name}[{i}]", start + 4 * i,
                        f"entry {i} of the {name} table points to {int(offsets[i])}, {where}")
    return offsets


def derive_sizes(name: str, start: int, end: int, offsets: np.ndarray) -> Block:
    """Rule 9: each present entry's size from the (offset, index) order; no unreferenced bytes."""
    count = len(offsets)
    data_start = start + 4 * count
    block = Block(name, start, offsets, np.zeros(count, dtype=np.int64))
    index = np.flatnonzero(offsets)
    if index.size == 0:
        if data_start != end:
            raise error_for("unreferenced_bytes", name, data_start,
                            f"the {name} block has no entries but {end - data_start} bytes of data")
        return block
    order = index[np.lexsort((index, offsets[index]))]
    sorted_offsets = offsets[order]
    if int(sorted_offsets[0]) != data_start:
        raise error_for("unreferenced_bytes", name, data_start,
                        f"bytes {data_start}..{int(sorted_offsets[0])} of the {name} block belong "
                        "to no entry")
    sizes = np.empty_like(sorted_offsets)
    sizes[:-1] = sorted_offsets[1:] - sorted_offsets[:-1]
    sizes[-1] = end - sorted_offsets[-1]
    block.sizes[order] = sizes
    return block


def read_blocks(view: memoryview, spans: list[tuple[str, int, int]], count: int,
                file_size: int) -> dict[str, Block]:
    """Rules 8 then 9 over ``spans`` (name, table start, data end) in file order: every block's
    entries are checked before any block's sizes are derived."""
    offsets = [check_entries(view, name, start, count, end, file_size)
               for name, start, end in spans]
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


def refuse(message: str, field: str | None = None) -> NoReturn:
    """A writer's refusal of content its revision cannot hold (``not_representable``)."""
    raise error_for("not_representable", field, None, message)


def check_table_length(num_entries: object, what: str) -> int:
    """``num_entries`` as an int, refused (``not_representable``) beyond MAX_TABLE_ENTRIES,
    before anything is allocated from it."""
    if isinstance(num_entries, bool) or not isinstance(num_entries, (int, np.integer)):
        refuse(f"{what}: the table length must be an integer, not {type(num_entries).__name__}",
               "num_entries")
    n = int(num_entries)
    if not 0 <= n <= MAX_TABLE_ENTRIES:
        refuse(f"{what}: a table of {n} entries is outside 0..{MAX_TABLE_ENTRIES} (2**24, the "
               "longest offset table this library writes, spec/SPEC.md 9.2)", "num_entries")
    return n


@dataclass(frozen=True)
class PlannedBlock:
    """A block's table, sparse (``index`` ascending, each with its ``offset``; every other
    entry is 0 = absent), and its data in storage order."""

    start: int
    num_entries: int
    index: np.ndarray
    offset: np.ndarray
    data: list[Buffer]
    end: int

    def chunks(self) -> Iterator[memoryview]:
        """The table's bytes (u32 little-endian), one window of at most 1 MiB at a time, then
        the data's."""
        n = self.num_entries
        for lo in range(0, n, _WINDOW):
            hi = min(n, lo + _WINDOW)
            window = np.zeros(hi - lo, dtype=U32)
            a, b = np.searchsorted(self.index, (lo, hi))
            window[self.index[a:b] - lo] = self.offset[a:b]
            yield window.data.cast("B")  # ndarray.data: the array's memoryview
        for entry in self.data:
            yield data_view(entry)


def data_view(entry: Buffer) -> memoryview:
    """The entry's bytes as a memoryview, without copying; a C-contiguous array is exported
    directly (cheaper than :attr:`Buffer.raw`'s reshaped uint8 view, per entry of a save)."""
    data = entry.data
    if isinstance(data, np.ndarray) and data.flags.c_contiguous and data.ndim:
        try:
            return data.data.cast("B")
        except (TypeError, ValueError, NotImplementedError):
            pass  # a dtype the buffer protocol does not describe: the uint8 view below
    return entry.raw.data


def storage_order(entries: Iterable[Buffer]) -> list[Buffer]:
    """Entries in the order their data is stored: by the offset they were read from (so a loaded
    file is written back as it was), entries built in memory after them, by index.

    Readers derive sizes by sorting on (offset, index), so an empty entry that shares its offset
    with the next stored entry must have the lower index; one that would not is moved to the end
    of the block, where every entry is empty.
    """
    ordered = sorted(entries, key=lambda b: (b.offset is None, b.offset or 0, b.index))
    out: list[Buffer] = []
    moved: list[Buffer] = []
    pending: list[Buffer] = []  # empty entries waiting for the next non-empty one
    for entry in ordered:
        if entry.nbytes == 0:
            pending.append(entry)
            continue
        for empty in pending:
            (out if empty.index < entry.index else moved).append(empty)
        pending = []
        out.append(entry)
    return out + pending + moved


def plan_block(start: int, num_entries: int, entries: list[Buffer], *,
               empty_entries: dict[int, int] | None = None) -> PlannedBlock:
    """Lay out one block: its N-entry table at ``start``, then ``entries``' data back to back.

    ``empty_entries`` maps an index to the position (within ``entries``' order) before which a
    zero-length entry is recorded (onert writes an empty slot entry as the current offset).
    Every index must lie in 0..N-1 (the writers check it first).
    """
    num_entries = check_table_length(num_entries, "offset table")
    count = len(entries)  # the offsets are a running sum of the sizes (tests/bench/bench.py)
    at = np.empty(count + 1, dtype=np.int64)  # at[k]: where entry k starts; at[count]: the end
    at[0] = start + 4 * num_entries
    np.cumsum(np.fromiter((e.nbytes for e in entries), np.int64, count), out=at[1:])
    at[1:] += at[0]
    index = np.fromiter((e.index for e in entries), np.int64, count)
    if count and not (0 <= int(index.min()) and int(index.max()) < num_entries):
        refuse(f"entry indices must lie in 0..{num_entries - 1}", "num_entries")
    offset = at[:-1]
    if empty_entries:
        e_index = np.fromiter(empty_entries.keys(), np.int64, len(empty_entries))
        before = np.fromiter(empty_entries.values(), np.int64, len(empty_entries))
        placed = (before >= 0) & (before <= count)
        # An entry's own offset wins over an empty record of the same index, as it did when
        # written in order: drop the empty records of indices that have data.
        keep = placed & ~np.isin(e_index, index)
        index = np.concatenate((index, e_index[keep]))
        offset = np.concatenate((offset, at[before[keep]]))
    order = np.argsort(index, kind="stable")
    return PlannedBlock(start, num_entries, index[order], offset[order], entries, int(at[-1]))
