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
    table = np.zeros(num_entries, dtype=np.int64)
    pos = start + 4 * num_entries
    empties = dict(empty_entries or {})
    by_position: dict[int, list[int]] = {}
    for index, before in empties.items():
        by_position.setdefault(before, []).append(index)
    for k, entry in enumerate(entries):
        for index in by_position.get(k, ()):
            table[index] = pos
        table[entry.index] = pos
        pos += entry.nbytes
    for index in by_position.get(len(entries), ()):
        table[index] = pos
    return PlannedBlock(start, table, entries, pos)
