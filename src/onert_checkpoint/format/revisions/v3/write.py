"""Writing schema-3 checkpoints (spec/SPEC.md 7): the tensors section's columns (7.1), the
slot entries (7.2), the placed ranges (7.3) and the extension sections (7.4, 7.5), in the
container schema 2 shares (container/write.py).

The file is the canonical encoding of 6.1 and 7: every column present only when needed, every
pad zero, sections in 6.4's order. The one choice a writer has is the data order (the ``order``
column): the tensors' ranges keep the order of the offsets they were read from (so a loaded
schema-3 file is written back byte for byte, and an upgraded onert-micro file keeps its reverse
operator order); ties between 0-byte ranges follow ``Checkpoint.layout.data_order``, then record
order; tensors built in memory come last, in record order. Each slot's ranges follow in the
tensors' order (7.3).
"""

from __future__ import annotations

import functools
import operator
from array import array
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
from onert_checkpoint_generated import structs
from onert_checkpoint_generated.layout import V3_NO_DTYPE as NO_DTYPE
from onert_checkpoint_generated.layout import V3_NO_MODEL_INDEX as NO_MODEL_INDEX
from onert_checkpoint_generated.layout import V3_NO_SHAPE as NO_SHAPE
from onert_checkpoint_generated.layout import V3_OPTIMIZER_SECTION_ENTRIES as SLOT_ENTRY
from onert_checkpoint_generated.layout import SectionKind as Kind
from onert_checkpoint_generated.layout import V3TensorsHead

from ...container import data_blocks  # noqa: F401  (registers its section kind)
from ...container.constants import (
    FLAG_REQUIRED,
    HAS_DTYPE,
    HAS_MODEL_INDEX,
    HAS_NAME,
    HAS_SHAPE,
    MAX_TENSORS,
    NO_STATE,
)
from ...container.extensions import EXTENSIONS
from ...container.write import Part, Plan, common_parts, optimizer_part, optimizer_slots
from ...container.write import plan as container_plan
from ...model import Buffer, Checkpoint
from ..blocks import refuse
from ..v2.write import Bounds, Records, column, records
from . import range_index  # noqa: F401  (registers its section kind)
from .placement import place

__all__ = ["plan"]

#: The tensors section's columns (7.1), in file order: the generated descriptor.
COLUMNS = V3TensorsHead.COLUMNS
_FORMAT = {c.name: c.format for c in COLUMNS}
#: The largest entry index and dim (the index column's and the dims' widths,
#: onert_checkpoint_v3.ksy).
_INDEX_MAX = int(np.iinfo(_FORMAT["index"]).max)
_DIM_MAX = int(np.iinfo(_FORMAT["dims"]).max)


def _bound(n: int) -> str:
    """A bound as the messages write it: ``2**32-1`` for a value a few below a power of two
    (the widths' limits and markers), else the decimal number."""
    k = n.bit_length()
    return f"2**{k}-{(1 << k) - n}" if k >= 8 and (1 << k) - n <= 16 else str(n)


#: What the writer's refusals say an entry index and a model index may be: the index column's
#: range, and the model_index column's values below NO_MODEL_INDEX, its "none".
_INDEX_RANGE = f"0..{_bound(_INDEX_MAX)}"
_MODEL_INDEX_RANGE = (
    f"0..{_bound(NO_MODEL_INDEX - 1)} ({_bound(NO_MODEL_INDEX)} means none in schema 3)"
)


#: Schema 3's bounds for the tensor records gathered by v2/write.py (7.1).
_BOUNDS = Bounds(_INDEX_MAX, _INDEX_RANGE, NO_MODEL_INDEX - 1, _MODEL_INDEX_RANGE, _DIM_MAX,
                 "u32 dims")


def _columns(ckpt: Checkpoint) -> Records:
    """The tensors' columns in record order with every check of 7.1 (v2/write.py's
    ``records``), and schema 3's markers where a tensor has no model index, dtype or shape."""
    cols = records(ckpt, _BOUNDS)
    for values, flag, none in ((cols.model_index, HAS_MODEL_INDEX, NO_MODEL_INDEX),
                               (cols.dtype, HAS_DTYPE, NO_DTYPE), (cols.rank, HAS_SHAPE, NO_SHAPE)):
        values[(cols.flags & flag) == 0] = none
    return cols


def _data_order(cols: Records, data_order: Sequence[int] | np.ndarray | None) -> np.ndarray | None:
    """The record positions (record order) in the order their ranges are placed: by the offset
    they were read from, ties by their place in ``data_order`` (the file's ``order`` column,
    its last mention of an index) and then by record; tensors built in memory last, in record
    order. None when that is record order (no permutation is made: a file of 2M tensors
    would pay its columns again)."""
    n = cols.index.size
    tie = None  # record order: the sorts below are stable
    if data_order is not None:
        try:
            listed = np.asarray(data_order)
            if listed.ndim != 1:
                raise TypeError("not a sequence")
            if listed.size and listed.dtype.kind not in "iub":
                listed = np.array([operator.index(i) for i in listed.ravel()], np.int64)
            listed = listed.astype(np.int64)
        except (TypeError, ValueError, OverflowError):
            refuse(f"data_order must list entry indices (integers), not {data_order!r:.80}")
        if listed.size:
            values, first_in_reversed = np.unique(listed[::-1], return_index=True)
            last = listed.size - 1 - first_in_reversed  # a dict's last mention wins
            at = np.searchsorted(values, cols.index)
            at = np.minimum(at, values.size - 1)
            found = values[at] == cols.index
            tie = np.arange(n, 2 * n, dtype=np.int64)
            tie[found] = last[at[found]]
    read, built = cols.read, cols.read < 0
    if not built.any():
        if tie is None and (read[1:] >= read[:-1]).all():
            return None
        keys: tuple[np.ndarray, ...] = (read,)
    else:
        keys = (np.where(built, 0, read), built)
    perm = np.lexsort(keys if tie is None else (tie, *keys))
    return None if (perm == np.arange(n)).all() else perm


def _tensors_body(cols: Records, perm: np.ndarray | None) -> bytes:
    """The tensors section (7.1) of the columns ``cols`` (record order), data order ``perm``
    (None: record order)."""
    n = cols.index.size
    if n > MAX_TENSORS:
        refuse(f"schema 3 holds at most {MAX_TENSORS} tensors")
    identity = np.arange(n, dtype=np.uint32)
    # Each column only if needed (7.1, rule C4 to C9: a redundant column is refused).
    wanted = {"index": (cols.index != identity).any(),
              "model_index": (cols.model_index != NO_MODEL_INDEX).any(),
              "len_name": (cols.flags & HAS_NAME).any(), "dtype": (cols.dtype != NO_DTYPE).any(),
              "rank": (cols.rank != NO_SHAPE).any(), "order": perm is not None}
    columns = sum(c.bit for c in COLUMNS if wanted.get(c.name))
    values: dict[str, Any] = {c.name: getattr(cols, c.name) for c in COLUMNS if c.name != "order"}
    values["order"] = perm  # written when not None (its bit is set)
    head = structs.V3TensorsHead.build({"num_tensors": n, "columns": columns})
    # the sizes (int64, never negative) seen as u64 with no copy: one join makes the body
    pieces: list[bytes | memoryview] = [head]
    size = len(head)
    for col in COLUMNS:  # bit 0 (len_data) always; the others when their bit is set
        if col.bit == 0 or columns & col.bit:
            pieces.append(bytes(-size % col.align))  # zero padding before the column
            v = values[col.name]
            if isinstance(v, bytes):
                pieces.append(v)
            elif col.bit == 0:
                pieces.append(memoryview(v.view(col.format)).cast("B"))
            else:
                pieces.append(v.astype(col.format).tobytes())
            size += len(pieces[-2]) + len(pieces[-1])
    return b"".join(pieces)


def plan(ckpt: Checkpoint, *, data_crc: bool = True, version: int = 3) -> Plan:
    """Check ``ckpt`` against schema 3 and compute every offset and checksum of its file (as
    v2/write.py's ``plan``)."""
    cols = _columns(ckpt)
    n = cols.index.size
    perm = _data_order(cols, ckpt.layout.data_order)
    tensors_body = _tensors_body(cols, perm) if n else None
    opt_parts = optimizer_slots(ckpt, cols.index)
    parts = common_parts(ckpt)
    extra = ckpt.layout.sections

    # The ranges in data order: the tensors in ``perm``, then each slot's in the same order.
    # Only ranges with bytes are listed (an empty range moves nothing, 7.3), so a file of
    # many empty entries costs columns, not an object per entry.
    # each pass's sequence positions of ranges with bytes (the range_index section's, 7.5)
    positions: list[np.ndarray] = [
        np.flatnonzero((cols.len_data if perm is None else cols.len_data[perm]) > 0)]
    records = positions[0] if perm is None else perm[positions[0]]
    ranges: list[Buffer] = [cols.held[k] for k in records.tolist()]
    num_ranges = n
    slot_sizes: list[np.ndarray] = []
    rank_of = None  # record position -> place in data order (None: the same)
    if perm is not None:
        rank_of = np.empty(n, np.int64)
        rank_of[perm] = np.arange(n)
    if opt_parts is not None:
        assert ckpt.optimizer is not None
        for name in opt_parts[2]:
            slot = ckpt.optimizer.slots[name]
            keys, lens = array("q"), array("q")
            held: list[Buffer] = []
            for key, b in slot.items():
                keys.append(key)
                lens.append(b.nbytes)
                if b.nbytes:
                    held.append(b)
            key_arr, len_arr = column(keys), column(lens)
            rows = np.searchsorted(cols.index, key_arr)
            sizes = np.full(n, NO_STATE, SLOT_ENTRY.format)
            sizes[rows] = len_arr
            slot_sizes.append(sizes)
            num_ranges += key_arr.size
            at = rows[len_arr > 0] if rank_of is None else rank_of[rows[len_arr > 0]]
            by_place = np.argsort(at, kind="stable")
            ranges += [held[j] for j in by_place.tolist()]
            positions.append(at[by_place])

    if tensors_body is not None:
        parts.append(Part(Kind.TENSORS, FLAG_REQUIRED, len(tensors_body), tensors_body))
    if opt_parts is not None:
        entries = b"".join(sizes.astype(SLOT_ENTRY.format).tobytes() for sizes in slot_sizes)
        parts.append(optimizer_part(opt_parts, n, SLOT_ENTRY.size, lambda _: entries))
    has_data = num_ranges > 0
    # Placement is relative to the data section's start (a multiple of 64): computed once,
    # before the sections are laid out, since the data_blocks section's size depends on it.
    lengths = np.fromiter((b.nbytes for b in ranges), np.int64, len(ranges))
    rel = place(lengths)
    data_len = int(rel[-1] + lengths[-1]) if ranges else 0
    placed = _Placed(n, data_len, positions, rel, lengths, rank_of)
    for kind in sorted(EXTENSIONS):  # the optional sections that a layout field drives (7.4, 7.5)
        ext = EXTENSIONS[kind]
        shift = ext.shift_for(getattr(ckpt.layout, ext.option), ext.covers(placed), extra)
        if shift is not None:
            body = ext.body(shift, placed)
            sums = None if ext.sums is None else functools.partial(ext.sums, shift)
            parts.append(Part(kind, 0, len(body), body, sums))
    return container_plan(parts, list(zip(rel.tolist(), ranges)), version, data_crc,
                          title="schema 3", has_data=has_data)


class _Placed(NamedTuple):
    """What an extension section's body is made of: n tensors, data_len data bytes, each pass's
    sequence positions of ranges with bytes, those ranges' offsets and sizes, and each
    record's place in data order (None: record order)."""

    n: int
    data_len: int
    positions: list[np.ndarray]
    rel: np.ndarray
    lengths: np.ndarray
    rank_of: np.ndarray | None
