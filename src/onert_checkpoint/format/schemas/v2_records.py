"""Schema 2's fixed-size records as NumPy structured dtypes (spec/onert_checkpoint_v2.ksy;
spec/SPEC.md, 6.4): what the reader views the file's tables through. Apart from the
Construct schema (schemas/v2.py) so that reading does not import Construct."""

from __future__ import annotations

import numpy as np

__all__ = [
    "SECTION_DTYPE",
    "SLOT_DESCRIPTOR_DTYPE",
    "SLOT_ENTRY_DTYPE",
    "STATE_ENTRY_DTYPE",
    "TENSOR_RECORD_DTYPE",
]

#: A section-table entry (32 bytes): kind, flags (bit 0 REQUIRED), offset, size, CRC-32C.
SECTION_DTYPE = np.dtype(
    [
        ("kind", "<u4"),
        ("flags", "<u4"),
        ("ofs_body", "<u8"),
        ("len_body", "<u8"),
        ("crc", "<u4"),
        ("reserved", "<u4"),
    ]
)

#: A tensor record (72 bytes).
TENSOR_RECORD_DTYPE = np.dtype(
    [
        ("index", "<u4"),
        ("model_index", "<u4"),
        ("flags", "<u2"),
        ("dtype", "i1"),
        ("rank", "u1"),
        ("len_name", "<u4"),
        ("ofs_name", "<u8"),
        ("ofs_data", "<u8"),
        ("len_data", "<u8"),
        ("dims", "<u4", (8,)),
    ]
)

SLOT_DESCRIPTOR_DTYPE = np.dtype([("ofs_name", "<u8"), ("len_name", "<u4"), ("reserved", "<u4")])

SLOT_ENTRY_DTYPE = np.dtype([("ofs_data", "<u8"), ("len_data", "<u8")])

STATE_ENTRY_DTYPE = np.dtype(
    [
        ("ofs_key", "<u8"),
        ("len_key", "<u4"),
        ("value_type", "u1"),
        ("reserved", "u1", (3,)),
        ("value", "<u8"),
        ("len_value", "<u8"),
    ]
)

for _dtype, _size in (
    (SECTION_DTYPE, 32),
    (TENSOR_RECORD_DTYPE, 72),
    (SLOT_DESCRIPTOR_DTYPE, 16),
    (SLOT_ENTRY_DTYPE, 16),
    (STATE_ENTRY_DTYPE, 32),
):
    assert _dtype.itemsize == _size, _dtype
