"""Construct schema of the schema-3 checkpoint (spec/onert_checkpoint_v3.ksy; spec/SPEC.md,
section 7).

Schema 3 keeps schema 2's container, state and origin sections (their pieces are schema 2's,
imported from :mod:`.v2`); what differs is the tensors section, a set of columns each at the
next multiple of 8 from the section's start and present only when its bit of ``columns`` is set
(7.1), and the slot entries of the optimizer section, one u64 each (7.2). Columns are read
and built in one NumPy step each (:class:`~.v2.RecordArray`), as schema 2's records are. Data
offsets are not stored: :func:`data_placement` computes them (7.3).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from construct import Bytes, If, Padding, Struct, Tell, this
from onert_checkpoint_generated import layout

from ..revisions.v3.constants import range_alignment
from .common import record_struct
from .v2 import (
    OPTIMIZER_HEAD,
    ORIGIN,
    SECTION_DTYPE,
    SLOT_DESCRIPTOR_DTYPE,
    STATE,
    STATE_ENTRY_DTYPE,
    STATE_HEAD,
    RecordArray,
    checkpoint,
)

__all__ = [
    "CHECKPOINT",
    "COLUMN_BITS",
    "HEADER",
    "NO_DTYPE",
    "NO_MODEL_INDEX",
    "NO_SHAPE",
    "NO_STATE",
    "OPTIMIZER",
    "OPTIMIZER_HEAD",
    "ORIGIN",
    "SECTION_DTYPE",
    "SLOT_DESCRIPTOR_DTYPE",
    "STATE",
    "STATE_ENTRY_DTYPE",
    "STATE_HEAD",
    "TENSORS",
    "TENSORS_HEAD",
    "data_placement",
    "range_alignment",
]

NO_STATE = layout.NO_STATE
NO_MODEL_INDEX = layout.V3_NO_MODEL_INDEX
NO_DTYPE = layout.V3_NO_DTYPE
NO_SHAPE = layout.V3_NO_SHAPE

#: The bits of the tensors section's ``columns`` word (7.1), in column order.
COLUMN_BITS = {b.name.lower(): int(b) for b in layout.V3ColumnBits}

#: The columns' element types, by name (spec/onert_checkpoint_v3.ksy, `tensors_section`).
_TYPES = {name: kind for name, kind, _ in layout.V3TensorsHead.ARRAYS}
_ALIGN = layout.V3_COLUMN_ALIGNMENT
_DIM = np.dtype(layout.V3_RECORD_DIMS_DIMS.format)

#: The 64-byte header: schema 2's with version byte 3.
HEADER = record_struct(layout.Header, version=3)

#: Tensors section (kind 1): this head, then the columns.
TENSORS_HEAD = record_struct(layout.V3TensorsHead)


def _has(bit: int):
    return lambda ctx: bool(ctx.head.columns & bit)


def _column(name: str, bit: int) -> list:
    """A column of ``num_tensors`` values, after zero bytes up to the next multiple of 8 (the
    section starts at a multiple of 64, so the file position's alignment is the section's)."""
    at = f"_at_{name}"
    return [
        at / Tell,
        f"_pad_{name}" / If(_has(bit), Padding(lambda ctx: -ctx[at] % _ALIGN)),
        name / If(_has(bit), RecordArray(np.dtype(_TYPES[name]), this.head.num_tensors)),
    ]


def _num_dims(ctx) -> int:
    return int(sum(int(r) for r in ctx.rank if r != NO_SHAPE))


def _num_name_bytes(ctx) -> int:
    return int(np.sum(ctx.len_name, dtype=np.uint64))


TENSORS = Struct(
    "head" / TENSORS_HEAD,
    "len_data" / RecordArray(np.dtype(_TYPES["len_data"]), this.head.num_tensors),
    *_column("index", COLUMN_BITS["index"]),
    *_column("model_index", COLUMN_BITS["model_index"]),
    *_column("len_name", COLUMN_BITS["name"]),
    *_column("dtype", COLUMN_BITS["dtype"]),
    *_column("rank", COLUMN_BITS["shape"]),
    *_column("order", COLUMN_BITS["order"]),
    "_at_dims" / Tell,
    "_pad_dims" / If(_has(COLUMN_BITS["shape"]), Padding(lambda ctx: -ctx._at_dims % _ALIGN)),
    "dims" / If(_has(COLUMN_BITS["shape"]), RecordArray(_DIM, _num_dims)),
    "_at_names" / Tell,
    "_pad_names" / If(_has(COLUMN_BITS["name"]), Padding(lambda ctx: -ctx._at_names % _ALIGN)),
    "names" / If(_has(COLUMN_BITS["name"]), Bytes(_num_name_bytes)),
)

#: Optimizer section (kind 2): schema 2's head and slot descriptors, then K*T u64 entries
#: (``len_data`` or NO_STATE), then the slot names.
OPTIMIZER = Struct(
    "head" / OPTIMIZER_HEAD,
    "slots" / RecordArray(SLOT_DESCRIPTOR_DTYPE, this.head.num_slots),
    "entries"
    / RecordArray(
        np.dtype(layout.V3_OPTIMIZER_SECTION_ENTRIES.format),
        lambda ctx: ctx.head.num_slots * ctx.head.num_tensors,
    ),
)

#: The whole file's structure, for parsing (schema 2's container with these sections).
CHECKPOINT = checkpoint(HEADER, TENSORS, OPTIMIZER)


def data_placement(
    ofs_data_section: int,
    len_data: Sequence[int],
    entries: Sequence[int] = (),
    order: Sequence[int] | None = None,
) -> tuple[list[int], list[int | None]]:
    """The absolute offsets of the tensor ranges (in record order) and of the slot entries (in
    entry order, None for NO_STATE), placed in data order by SPEC.md 7.3."""
    n = len(len_data)
    order = list(range(n)) if order is None else [int(k) for k in order]
    tensor_at: list[int] = [0] * n
    entry_at: list[int | None] = [None] * len(entries)
    pos = ofs_data_section
    ranges = [(-1, k) for k in order]
    for j in range(len(entries) // n if n else 0):
        ranges += [(j, k) for k in order if int(entries[j * n + k]) != NO_STATE]
    for j, k in ranges:
        length = int(len_data[k]) if j < 0 else int(entries[j * n + k])
        a = range_alignment(length)
        pos = -(-pos // a) * a
        if j < 0:
            tensor_at[k] = pos
        else:
            entry_at[j * n + k] = pos
        pos += length
    return tensor_at, entry_at
