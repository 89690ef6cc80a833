"""Construct pieces shared by the revisions."""

from __future__ import annotations

from typing import Any

import numpy as np
from construct import (
    Adapter,
    Array,
    Bytes,
    Const,
    Int8sl,
    Int8ul,
    Int16sl,
    Int16ul,
    Int32sl,
    Int32ul,
    Int64sl,
    Int64ul,
    Padding,
    Struct,
)

__all__ = ["OffsetTable", "record_struct"]

#: NumPy element format of the generated layout -> Construct integer.
_INTS = {
    "u1": Int8ul,
    "i1": Int8sl,
    "<u2": Int16ul,
    "<i2": Int16sl,
    "<u4": Int32ul,
    "<i4": Int32sl,
    "<u8": Int64ul,
    "<i8": Int64sl,
}


def record_struct(record: Any, **fixed: int) -> Struct:
    """The Construct Struct of a fixed-size record of the generated layout
    (onert_checkpoint_generated.layout, from spec/*.ksy): its fields in order, with their
    widths; a field the .ksy gives a `valid` value (or named in ``fixed``, for the version byte
    the schemas share) is a Const; a reserved byte string is zero padding."""
    fields = []
    for f in record.FIELDS:
        if f.name.startswith("reserved") and f.count > 1:
            fields.append(Padding(f.size))
            continue
        kind = _INTS[f.format] if f.count == 1 else Array(f.count, _INTS[f.format])
        value = fixed.get(f.name, f.valid)
        fields.append(f.name / (kind if value is None else Const(value, kind)))
    return Struct(*fields)


class OffsetTable(Adapter):
    """``count`` little-endian u32 values, parsed to and built from a NumPy array in one step.

    Equivalent to ``Array(count, Int32ul)``, without one Python call per entry.
    """

    def __init__(self, count) -> None:  # count: an int or a context lambda such as this.n
        self._count = count
        super().__init__(Bytes(lambda ctx: 4 * (count(ctx) if callable(count) else count)))

    def _decode(self, obj, context, path):
        return np.frombuffer(obj, dtype="<u4").astype(np.int64)

    def _encode(self, obj, context, path):
        arr = np.asarray(obj, dtype=np.int64)
        if arr.size and (arr.min() < 0 or arr.max() > 0xFFFFFFFF):
            raise ValueError("offset does not fit in u32")
        return arr.astype("<u4").tobytes()
