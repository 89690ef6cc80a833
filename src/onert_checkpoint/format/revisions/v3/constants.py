"""Schema 3's own constants (spec/SPEC.md 6.7); everything else is schema 2's (v2/constants)."""

from __future__ import annotations

import numpy as np
from onert_checkpoint_generated import layout

VERSION = 3

# The ``columns`` bits of the tensors section (6.7.1), from spec/onert_checkpoint_v3.ksy
INDEX, MODEL_INDEX, NAME, DTYPE, SHAPE, ORDER = (int(b) for b in layout.V3ColumnBits)
COLUMN_BITS = int(sum(layout.V3ColumnBits))  # the mask of every defined bit

#: Every column's element type, by name, ``len_data`` included (spec/onert_checkpoint_v3.ksy).
COLUMN_TYPES = {name: kind for name, kind, _ in layout.V3TensorsHead.ARRAYS}

#: The fixed columns after ``len_data``, in file order: name, bit, element type.
FIXED_COLUMNS: tuple[tuple[str, int, str], ...] = tuple(
    (name, bit, kind) for name, kind, bit in layout.V3TensorsHead.ARRAYS if bit
)

# The "none" value of each column (6.7.1) ---------------------------------------------------
NO_MODEL_INDEX = layout.V3_NO_MODEL_INDEX
NO_DTYPE = layout.V3_NO_DTYPE
NO_SHAPE = layout.V3_NO_SHAPE

#: A slot entry is one u64, its ``len_data`` (6.7.2); NO_STATE is 2^64 - 1.
SLOT_LEN_SIZE = 8

#: The largest alignment of a data range (6.7.3): ranges of 64 bytes or more.
MAX_RANGE_ALIGNMENT = layout.V3_MAX_RANGE_ALIGNMENT

def range_alignment(length: int) -> int:
    """``a(len)`` of 6.7.3: MAX_RANGE_ALIGNMENT (64) for 64 bytes or more, else the smallest
    power of two not below ``len`` (``a(0) = a(1) = 1``)."""
    if length >= MAX_RANGE_ALIGNMENT:
        return MAX_RANGE_ALIGNMENT
    return 1 << max(length - 1, 0).bit_length()


#: log2 of a(len) for len in 0..MAX_RANGE_ALIGNMENT, as a table for whole columns of sizes.
RANGE_LEVEL = np.array(
    [range_alignment(x).bit_length() - 1 for x in range(MAX_RANGE_ALIGNMENT + 1)], dtype=np.int8
)


def align8(n: int) -> int:
    """``n`` rounded up to a multiple of 8 (the columns of 6.7.1)."""
    return -(-n // _COLUMN_ALIGNMENT) * _COLUMN_ALIGNMENT


_COLUMN_ALIGNMENT = layout.V3_COLUMN_ALIGNMENT
