"""Element types: circle's TensorType codes, as circle models and schema-2 records use them.

One table for the circle model reader and for schemas 2 and 3 (spec/SPEC.md 6).
"""

from __future__ import annotations

import numpy as np
from onert_checkpoint_generated import layout

__all__ = ["DTYPES", "DTYPE_CODES", "ELEMENT_SIZE", "KNOWN_CODE"]

#: circle TensorType code -> (dtype name, bytes per element or None when not whole bytes), from
#: the `tensor_type` enum of spec/onert_checkpoint_common.ksy (schema 3's NO_DTYPE marker is
#: not a type). Names are NumPy's where NumPy has the type, else circle's name lowercased.
DTYPES: dict[int, tuple[str, int | None]] = {
    int(t): (t.name.lower(), layout.TENSOR_TYPE_ELEMENT_SIZE.get(int(t)))
    for t in layout.TensorType
    if t is not layout.TensorType.NO_DTYPE
}
DTYPE_CODES = {name: code for code, (name, _) in DTYPES.items()}

#: The same over a file's code (an i8 seen as u8), for whole columns at once: bytes per
#: element (0 when not whole bytes), and whether the code is a TensorType.
ELEMENT_SIZE = np.zeros(256, np.uint64)
KNOWN_CODE = np.zeros(256, bool)
for _code, (_, _size) in DTYPES.items():
    ELEMENT_SIZE[_code & 0xFF] = _size or 0
    KNOWN_CODE[_code & 0xFF] = True
