"""Element types: circle's TensorType codes, as circle models and schema-2 records use them.

One table for the circle model reader and for schema 2 (spec/SPEC.md, section 6), taken from
circle's schema (TensorType).
"""

from __future__ import annotations

__all__ = ["DTYPES", "DTYPE_CODES"]

#: circle TensorType code -> (dtype name, bytes per element or None when not whole bytes).
#: Names are NumPy's where NumPy has the type, else circle's name lowercased.
DTYPES: dict[int, tuple[str, int | None]] = {
    -5: ("ggml_q8_1", None),
    -4: ("ggml_q8_0", None),
    -3: ("ggml_q4_1", None),
    -2: ("ggml_q4_0", None),
    -1: ("uint4", None),
    0: ("float32", 4),
    1: ("float16", 2),
    2: ("int32", 4),
    3: ("uint8", 1),
    4: ("int64", 8),
    5: ("string", None),
    6: ("bool", 1),
    7: ("int16", 2),
    8: ("complex64", 8),
    9: ("int8", 1),
    10: ("float64", 8),
    11: ("complex128", 16),
    12: ("uint64", 8),
    13: ("resource", None),
    14: ("variant", None),
    15: ("uint32", 4),
    16: ("uint16", 2),
    17: ("int4", None),
}
DTYPE_CODES = {name: code for code, (name, _) in DTYPES.items()}
