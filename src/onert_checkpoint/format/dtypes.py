"""Element types: circle's TensorType codes, as circle models and schema-2 records use them.

One table for the circle model reader and for schemas 2 and 3 (spec/SPEC.md, section 6),
generated from the .ksy's copy of circle's schema (TensorType).
"""

from __future__ import annotations

from onert_checkpoint_generated import layout

__all__ = ["DTYPES", "DTYPE_CODES"]

#: circle TensorType code -> (dtype name, bytes per element or None when not whole bytes), from
#: the `tensor_type` enum of spec/onert_checkpoint_common.ksy (schema 3's NO_DTYPE marker is
#: not a type). Names are NumPy's where NumPy has the type, else circle's name lowercased.
DTYPES: dict[int, tuple[str, int | None]] = {
    int(t): (t.name.lower(), layout.TENSOR_TYPE_ELEMENT_SIZE.get(int(t)))
    for t in layout.TensorType
    if t is not layout.TensorType.NO_DTYPE
}
DTYPE_CODES = {name: code for code, (name, _) in DTYPES.items()}
