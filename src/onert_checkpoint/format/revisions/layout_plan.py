"""Planning where every entry of a block goes before any byte is written.

Writers compute every offset first, then stream the header, the tables and the data in file
order, so a checkpoint is never assembled in memory.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from ..model import Buffer

__all__ = ["PlannedBlock", "plan_block", "storage_order"]


@dataclass(frozen=True)
class PlannedBlock:
    """A block's table (0 = absent) and its data in storage order."""

    start: int
    table: np.ndarray
    data: list[Buffer]
    end: int


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


def plan_block(
    start: int,
    num_entries: int,
    entries: list[Buffer],
    *,
    empty_entries: dict[int, int] | None = None,
) -> PlannedBlock:
    """Lay out one block: its N-entry table at ``start``, then ``entries``' data back to back.

    ``empty_entries`` maps an index to the position (within ``entries``' order) before which a
    zero-length entry is recorded (onert writes an empty slot entry as the current offset).
    """
    # Vectorised (a running sum of the sizes), so 100,000 entries cost array operations, not
    # a Python loop with a NumPy store per entry (tests/bench/bench.py).
    table = np.zeros(num_entries, dtype=np.int64)
    count = len(entries)
    at = np.empty(count + 1, dtype=np.int64)  # at[k]: where entry k starts; at[count]: the end
    at[0] = start + 4 * num_entries
    np.cumsum(np.fromiter((e.nbytes for e in entries), np.int64, count), out=at[1:])
    at[1:] += at[0]
    if empty_entries:
        index = np.fromiter(empty_entries.keys(), np.int64, len(empty_entries))
        before = np.fromiter(empty_entries.values(), np.int64, len(empty_entries))
        placed = (before >= 0) & (before <= count)
        table[index[placed]] = at[before[placed]]
    # After the empty entries: an entry's own offset wins, as it did when written in order.
    table[np.fromiter((e.index for e in entries), np.int64, count)] = at[:-1]
    return PlannedBlock(start, table, entries, int(at[-1]))
