"""Construct schema of the schema-2 checkpoint (spec/onert_checkpoint_v2.ksy; spec/SPEC.md,
section 6).

The fixed-size records come from the layout generated from the .ksy files; the tables are
their NumPy structured dtypes, read and built by :class:`RecordArray` in one
step (the idiom of :class:`~.common.OffsetTable`): a 2**24-record tensor table costs one
``frombuffer``, not one Python call per field.
"""

from __future__ import annotations

import numpy as np
from construct import Adapter, Array, Bytes, Pointer, Struct, Switch, this
from onert_checkpoint_generated import layout

from .common import record_struct

__all__ = [
    "CHECKPOINT",
    "HEADER",
    "OPTIMIZER_HEAD",
    "ORIGIN",
    "SECTION_DTYPE",
    "SECTION_ENTRY",
    "SLOT_DESCRIPTOR_DTYPE",
    "SLOT_ENTRY_DTYPE",
    "STATE_ENTRY_DTYPE",
    "STATE_HEAD",
    "TENSORS_HEAD",
    "TENSOR_RECORD_DTYPE",
    "RecordArray",
]

# The fixed-size records, from the generated layout of spec/onert_checkpoint_common.ksy and
# spec/onert_checkpoint_v2.ksy: Construct structs for the heads, NumPy record types for the
# tables.

#: The 64-byte header. ``header_crc`` is CRC-32C of these 64 bytes with the field itself zero.
HEADER = record_struct(layout.Header, version=2)

#: A section-table entry (32 bytes): kind, flags (bit 0 REQUIRED), offset, size, CRC-32C.
SECTION_ENTRY = record_struct(layout.SectionEntry)
SECTION_DTYPE = layout.SectionEntry.DTYPE

#: Tensors section (kind 1): this head, ``num_tensors`` records, then the names.
TENSORS_HEAD = record_struct(layout.V2TensorsHead)
#: A tensor record (72 bytes).
TENSOR_RECORD_DTYPE = layout.V2TensorRecord.DTYPE

#: Optimizer section (kind 2): this head, K slot descriptors, K*T slot entries, the slot names.
OPTIMIZER_HEAD = record_struct(layout.OptimizerHead)
SLOT_DESCRIPTOR_DTYPE = layout.SlotDescriptor.DTYPE
SLOT_ENTRY_DTYPE = layout.V2SlotEntry.DTYPE

#: State section (kind 3): this head, ``num_entries`` entries, then keys and values.
STATE_HEAD = record_struct(layout.StateHead)
STATE_ENTRY_DTYPE = layout.StateEntry.DTYPE

#: Origin section (kind 5, optional): what an upgraded file was.
ORIGIN = record_struct(layout.Origin)


class RecordArray(Adapter):
    """``count`` fixed-size records, parsed to and built from a NumPy structured array."""

    def __init__(self, dtype: np.dtype, count) -> None:  # count: an int or a context lambda
        self._dtype = dtype
        self._count = count
        super().__init__(
            Bytes(lambda ctx: dtype.itemsize * (count(ctx) if callable(count) else count))
        )

    def _decode(self, obj, context, path):
        return np.frombuffer(obj, dtype=self._dtype)

    def _encode(self, obj, context, path):
        return np.asarray(obj, dtype=self._dtype).tobytes()


def _records(dtype: np.dtype, count):
    return RecordArray(dtype, count)


TENSORS = Struct(
    "head" / TENSORS_HEAD,
    "records" / _records(TENSOR_RECORD_DTYPE, this.head.num_tensors),
)
OPTIMIZER = Struct(
    "head" / OPTIMIZER_HEAD,
    "slots" / _records(SLOT_DESCRIPTOR_DTYPE, this.head.num_slots),
    "entries" / _records(SLOT_ENTRY_DTYPE, lambda ctx: ctx.head.num_slots * ctx.head.num_tensors),
)
STATE = Struct(
    "head" / STATE_HEAD,
    "entries" / _records(STATE_ENTRY_DTYPE, this.head.num_entries),
)

def checkpoint(header: Struct, tensors: Struct, optimizer: Struct) -> Struct:
    """The whole file's structure of a schema-2-family revision, for parsing: the header, then
    every section through the table, its body parsed by kind (names, keys and values are found
    through the records' offsets; DATA and unknown kinds stay raw bytes)."""
    kind = layout.SectionKind
    body = Switch(
        lambda ctx: int(ctx.kind),
        {kind.TENSORS: tensors, kind.OPTIMIZER: optimizer, kind.STATE: STATE, kind.ORIGIN: ORIGIN},
        default=Bytes(lambda ctx: int(ctx.len_body)),
    )
    section = Struct(*SECTION_ENTRY.subcons, "body" / Pointer(this.ofs_body, body))
    return Struct("header" / header, "sections" / Array(this.header.num_sections, section))


CHECKPOINT = checkpoint(HEADER, TENSORS, OPTIMIZER)
