"""Schema 3's own constants (spec/SPEC.md 6.7); everything else is schema 2's (v2/constants)."""

from __future__ import annotations

import numpy as np

VERSION = 3

# The ``columns`` bits of the tensors section (6.7.1) --------------------------------------
INDEX, MODEL_INDEX, NAME, DTYPE, SHAPE, ORDER = 1, 2, 4, 8, 16, 32
COLUMN_BITS = 0x3F

#: The fixed columns after ``len_data``, in file order: name, bit, element type.
FIXED_COLUMNS: tuple[tuple[str, int, str], ...] = (
    ("index", INDEX, "<u4"),
    ("model_index", MODEL_INDEX, "<u4"),
    ("len_name", NAME, "<u4"),
    ("dtype", DTYPE, "i1"),
    ("rank", SHAPE, "u1"),
    ("order", ORDER, "<u4"),
)

# The "none" value of each column (6.7.1) ---------------------------------------------------
NO_MODEL_INDEX = 0xFFFF_FFFF
NO_DTYPE = -128
NO_SHAPE = 255

#: A slot entry is one u64, its ``len_data`` (6.7.2); NO_STATE is 2^64 - 1.
SLOT_LEN_SIZE = 8

#: The largest alignment of a data range (6.7.3): ranges of 64 bytes or more.
MAX_RANGE_ALIGNMENT = 64

#: log2 of a(len) for len in 0..64 (6.7.3): a(0) = a(1) = 1, else the smallest power of two
#: not below len, 64 for len >= 64.
RANGE_LEVEL = np.array(
    [0, 0] + [int(x - 1).bit_length() for x in range(2, 65)], dtype=np.int8
)


def align8(n: int) -> int:
    """``n`` rounded up to a multiple of 8 (the columns of 6.7.1)."""
    return (n + 7) & ~7
