"""Construct schema of the schema-2 checkpoint (spec/onert_checkpoint_v2.ksy; spec/SPEC.md,
section 6).

Fixed-size records are NumPy structured dtypes read and built by :class:`RecordArray` in one
step (the idiom of :class:`~.common.OffsetTable`): a 2**24-record tensor table costs one
``frombuffer``, not one Python call per field.
"""

from __future__ import annotations

import numpy as np
from construct import (
    Adapter,
    Array,
    Bytes,
    Const,
    Int8ul,
    Int16ul,
    Int32ul,
    Int64ul,
    Padding,
    Pointer,
    Struct,
    Switch,
    this,
)

from .v2_records import (
    SECTION_DTYPE,
    SLOT_DESCRIPTOR_DTYPE,
    SLOT_ENTRY_DTYPE,
    STATE_ENTRY_DTYPE,
    TENSOR_RECORD_DTYPE,
)

__all__ = [
    "CHECKPOINT",
    "HEADER",
    "OPTIMIZER_HEAD",
    "ORIGIN",
    "SECTION_DTYPE",
    "SLOT_DESCRIPTOR_DTYPE",
    "SLOT_ENTRY_DTYPE",
    "STATE_ENTRY_DTYPE",
    "STATE_HEAD",
    "TENSORS_HEAD",
    "TENSOR_RECORD_DTYPE",
    "RecordArray",
]

#: The 64-byte header. ``header_crc`` is CRC-32C of these 64 bytes with the field itself zero.
HEADER = Struct(
    "magic" / Const(429, Int16ul),
    "version" / Const(2, Int8ul),
    "reserved0" / Const(0, Int8ul),
    "header_crc" / Int32ul,
    "len_file" / Int64ul,
    "ofs_section_table" / Const(64, Int64ul),
    "num_sections" / Int32ul,
    "section_table_crc" / Int32ul,
    Padding(32),  # reserved1
)

#: A section-table entry (32 bytes): kind, flags (bit 0 REQUIRED), offset, size, CRC-32C.


#: Tensors section (kind 1): this head, ``num_tensors`` records, then the names.
TENSORS_HEAD = Struct("num_tensors" / Int32ul, "reserved" / Const(0, Int32ul))

#: A tensor record (72 bytes).


#: Optimizer section (kind 2): this head, K slot descriptors, K*T slot entries, the slot names.
OPTIMIZER_HEAD = Struct(
    "kind" / Int32ul,
    "num_slots" / Int32ul,
    "num_tensors" / Int32ul,
    "reserved" / Const(0, Int32ul),
)



#: State section (kind 3): this head, ``num_entries`` entries, then keys and values.
STATE_HEAD = Struct("num_entries" / Int32ul, "reserved" / Const(0, Int32ul))


#: Origin section (kind 5, optional): what an upgraded file was.
ORIGIN = Struct(
    "revision" / Int32ul,
    "dialect" / Int32ul,
    "flags" / Int32ul,
    "reserved" / Const(0, Int32ul),
    "num_entries" / Int64ul,
)



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

#: A section's body by kind (names, keys and values are found through the records' offsets;
#: DATA and unknown kinds stay raw bytes).
_BODY = Switch(
    lambda ctx: int(ctx.kind),
    {1: TENSORS, 2: OPTIMIZER, 3: STATE, 5: ORIGIN},
    default=Bytes(lambda ctx: int(ctx.len_body)),
)

_SECTION = Struct(
    "kind" / Int32ul,
    "flags" / Int32ul,
    "ofs_body" / Int64ul,
    "len_body" / Int64ul,
    "crc" / Int32ul,
    "reserved" / Const(0, Int32ul),
    "body" / Pointer(this.ofs_body, _BODY),
)

#: The whole file's structure, for parsing: the header, then every section through the table.
CHECKPOINT = Struct(
    "header" / HEADER,
    "sections" / Array(this.header.num_sections, _SECTION),
)
