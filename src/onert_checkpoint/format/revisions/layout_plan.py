"""Planning where every entry of a block goes before any byte is written.

Writers compute every offset first, then stream the header, the tables and the data in file
order, so a checkpoint is never assembled in memory. A table is kept sparse (the entries that
are present) and produced in windows as it is written: a file whose origin section claims
2**24 entries costs the memory of its present entries, not of its table (spec/SPEC.md 9.2).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import numpy as np

from ..errors import error_for
from ..model import Buffer

__all__ = ["MAX_TABLE_ENTRIES", "U32_MAX", "PlannedBlock", "check_table_length", "data_view",
           "plan_block", "storage_order"]

U32_MAX = 0xFFFF_FFFF

#: The longest offset table this library writes (spec/SPEC.md 9.2): schema 2's MAX_TENSORS.
#: A table of this length is 64 MiB per block; N is stored as u32 in schema 1 and WOF.
MAX_TABLE_ENTRIES = 1 << 24

#: Entries per window when a table is written (1 MiB of u32 values).
_WINDOW = 1 << 18


def check_table_length(num_entries: object, what: str) -> int:
    """``num_entries`` as an int, refused (``not_representable``) beyond MAX_TABLE_ENTRIES,
    before anything is allocated from it."""
    if isinstance(num_entries, bool) or not isinstance(num_entries, (int, np.integer)):
        raise error_for(
            "not_representable", "num_entries", None,
            f"{what}: the table length must be an integer, not {type(num_entries).__name__}",
        )
    n = int(num_entries)
    if not 0 <= n <= MAX_TABLE_ENTRIES:
        raise error_for(
            "not_representable",
            "num_entries",
            None,
            f"{what}: a table of {n} entries is outside 0..{MAX_TABLE_ENTRIES} (2**24, the "
            "longest offset table this library writes, spec/SPEC.md 9.2)",
        )
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

    def table_chunks(self) -> Iterator[memoryview]:
        """The table's bytes (u32 little-endian), one window of at most 1 MiB at a time."""
        n = self.num_entries
        for lo in range(0, n, _WINDOW):
            hi = min(n, lo + _WINDOW)
            window = np.zeros(hi - lo, dtype="<u4")
            a, b = np.searchsorted(self.index, (lo, hi))
            window[self.index[a:b] - lo] = self.offset[a:b]
            yield window.data.cast("B")  # ndarray.data: the array's memoryview

    def table(self) -> np.ndarray:
        """The whole table (for tests and small blocks)."""
        return np.frombuffer(b"".join(self.table_chunks()), dtype="<u4").astype(np.int64)


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
    # Vectorised (a running sum of the sizes), so 100,000 entries cost array operations, not
    # a Python loop with a NumPy store per entry (tests/bench/bench.py).
    count = len(entries)
    at = np.empty(count + 1, dtype=np.int64)  # at[k]: where entry k starts; at[count]: the end
    at[0] = start + 4 * num_entries
    np.cumsum(np.fromiter((e.nbytes for e in entries), np.int64, count), out=at[1:])
    at[1:] += at[0]
    index = np.fromiter((e.index for e in entries), np.int64, count)
    if count and not (0 <= int(index.min()) and int(index.max()) < num_entries):
        raise error_for("not_representable", "num_entries", None,
                        f"entry indices must lie in 0..{num_entries - 1}")
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
