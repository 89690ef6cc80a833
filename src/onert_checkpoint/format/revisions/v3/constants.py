"""Schema 3's own constants (spec/SPEC.md 7); the container's: container/constants.py."""

from __future__ import annotations

import numpy as np
from onert_checkpoint_generated import layout

VERSION = 3

# The ``columns`` bits of the tensors section (7.1), from spec/onert_checkpoint_v3.ksy
INDEX, MODEL_INDEX, NAME, DTYPE, SHAPE, ORDER = (int(b) for b in layout.V3ColumnBits)
COLUMN_BITS = int(sum(layout.V3ColumnBits))  # the mask of every defined bit

#: Every column's element type, by name, ``len_data`` and the variable ones included (the
#: generated column descriptor of spec/onert_checkpoint_v3.ksy).
COLUMN_TYPES = {c.name: c.format for c in layout.V3TensorsHead.COLUMNS}

#: The fixed columns after ``len_data`` (one element per record), in file order: name, bit,
#: element type.
FIXED_COLUMNS: tuple[tuple[str, int, str], ...] = tuple(
    (c.name, c.bit, c.format) for c in layout.V3TensorsHead.COLUMNS if c.bit and not c.sum_of
)

# The "none" value of each column (7.1) ---------------------------------------------------
NO_MODEL_INDEX = layout.V3_NO_MODEL_INDEX
NO_DTYPE = layout.V3_NO_DTYPE
NO_SHAPE = layout.V3_NO_SHAPE

# The integer arrays of schema 3 (spec/onert_checkpoint_v3.ksy): each element's NumPy format
# (``.format``) and size (``.size``) -------------------------------------------------------------
#: The ``dims`` column: every shaped record's dims, back to back (7.1).
DIMS = layout.V3_RECORD_DIMS_DIMS
#: The optimizer section's entries: one per slot and record, its ``len_data`` (7.2).
SLOT_ENTRIES = layout.V3_OPTIMIZER_SECTION_ENTRIES
#: The data_blocks section's CRC-32C of each block (7.4).
BLOCK_CRCS = layout.V3_DATA_BLOCKS_SECTION_CRC

#: A slot entry's size (7.2); NO_STATE (2^64 - 1, onert_checkpoint_common.ksy) for no state.
SLOT_LEN_SIZE = SLOT_ENTRIES.size
NO_STATE = layout.NO_STATE

#: The largest alignment of a data range (7.3): ranges of 64 bytes or more.
MAX_RANGE_ALIGNMENT = layout.V3_MAX_RANGE_ALIGNMENT


def range_alignment(length: int) -> int:
    """``a(len)`` of 7.3: MAX_RANGE_ALIGNMENT (64) for 64 bytes or more, else the smallest
    power of two not below ``len`` (``a(0) = a(1) = 1``)."""
    if length >= MAX_RANGE_ALIGNMENT:
        return MAX_RANGE_ALIGNMENT
    return 1 << max(length - 1, 0).bit_length()


#: log2 of a(len) for len in 0..MAX_RANGE_ALIGNMENT, as a table for whole columns of sizes.
RANGE_LEVEL = np.array(
    [range_alignment(x).bit_length() - 1 for x in range(MAX_RANGE_ALIGNMENT + 1)], dtype=np.int8
)


def align8(n: int) -> int:
    """``n`` rounded up to a multiple of 8 (the columns of 7.1)."""
    return -(-n // _COLUMN_ALIGNMENT) * _COLUMN_ALIGNMENT


_COLUMN_ALIGNMENT = layout.V3_COLUMN_ALIGNMENT

