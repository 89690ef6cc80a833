"""The tensors section of a schema-3 file: columns, rules C0 to C13 (spec/SPEC.md 7.1).

Every rule runs over whole NumPy columns (views on the file); Python loops and f-strings appear
only on the way to an error, or record by record where a float product may be inexact (C13,
as schema 2's R11). Nothing is allocated from ``num_tensors`` before C3 has shown that the
file holds its columns.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, NoReturn

import numpy as np
from onert_checkpoint_generated.layout import V3_NO_DTYPE as NO_DTYPE
from onert_checkpoint_generated.layout import V3_NO_MODEL_INDEX as NO_MODEL_INDEX
from onert_checkpoint_generated.layout import V3_NO_SHAPE as NO_SHAPE
from onert_checkpoint_generated.layout import V2TensorRecord, V3ColumnBits, V3TensorsHead

from ...container.constants import (
    HAS_DTYPE,
    HAS_MODEL_INDEX,
    HAS_NAME,
    HAS_SHAPE,
    MAX_NAME_LEN,
    MAX_RANK,
    MAX_TENSORS,
    align,
)
from ...container.rules import check_padding, fail, first, first_repeat
from ...container.section_table import SectionInfo
from ...dtypes import KNOWN_CODE
from ..v2.tensors import check_ascending, check_unique_model_index, unique_names, wrong_size

__all__ = ["TensorColumns", "check_tensors_section"]

#: codes allowed in the ``dtype`` column: the TensorType codes and NO_DTYPE
_DTYPE_OK = KNOWN_CODE.copy()
_DTYPE_OK[NO_DTYPE & 0xFF] = True


@dataclass
class TensorColumns:
    """The validated tensors section: per record its entry index, size, and the v2-shaped
    metadata columns the entry tables use (``flags``, ``dtype``, ``rank``, ``dims`` (n, 8),
    ``model_index``, ``names``); ``order`` is the ``order`` column (None: record order)."""

    start: int  # the section's ofs_body
    lengths: np.ndarray  # u64 len_data, a view on the file
    keys: np.ndarray  # int64 entry indices
    order: np.ndarray | None
    meta: dict[str, Any]

    @property
    def size(self) -> int:
        return int(self.lengths.size)

    def len_at(self, k: int) -> int:
        """The offset of ``len_data[k]`` (the field of tensor k's range errors, P1, P2, C13)."""
        return self.start + _LEN_DATA + _LEN_DATA_TYPE.itemsize * k


_COLUMNS = V3TensorsHead.columns.offset
#: The size column, right after the head (spec/onert_checkpoint_v3.ksy, `tensors_section`),
#: then the fixed columns (one element per record) and the variable ones (``dims``, ``names``:
#: as many elements as the sum of another column), each present when its bit is set.
_LEN_DATA_COLUMN, *_OTHERS = V3TensorsHead.COLUMNS
_COLUMN_BITS = int(sum(V3ColumnBits))  # the mask of every defined bit
_FIXED = tuple(c for c in _OTHERS if not c.sum_of)
_VARIABLE = tuple(c for c in _OTHERS if c.sum_of)
_DIMS = next(c for c in _VARIABLE if c.name == "dims")
_LEN_DATA = V3TensorsHead.SIZE
_LEN_DATA_TYPE = np.dtype(_LEN_DATA_COLUMN.format)


def _field(k: int, name: str) -> str:
    return f"tensors[{k}].{name}"


def _redundant(sec: SectionInfo, name: str, why: str) -> None:
    fail("redundant_column", "tensors.columns", sec.start + _COLUMNS,
         f"the {name} column is present but {why}: a column is stored only when it is needed")


def check_tensors_section(view: memoryview, sec: SectionInfo) -> TensorColumns:
    """Rules C0 to C13, in order."""
    s, length = sec.start, sec.length
    if length < V3TensorsHead.SIZE:  # C0
        fail("count_exceeds_file", "tensors.num_tensors", s, f"the tensors section has "
             f"{length} bytes, less than its {V3TensorsHead.SIZE}-byte head")
    head = np.frombuffer(view, dtype=V3TensorsHead.DTYPE, count=1, offset=s)[0]
    n, columns = int(head["num_tensors"]), int(head["columns"])
    if n == 0:  # C1
        fail("empty_section", "tensors.num_tensors", s, "a tensors section without records")
    if n > MAX_TENSORS:
        fail("limit_exceeded", "tensors.num_tensors", s, f"{n} exceeds the limit {MAX_TENSORS}")
    if columns & ~_COLUMN_BITS:  # C2
        fail("reserved_nonzero", "tensors.columns", s + _COLUMNS,
             f"reserved column bits set: {columns:#x}")
    # C3: where the fixed columns are (relative to s), and the padding before each
    pos = _LEN_DATA + _LEN_DATA_TYPE.itemsize * n
    at: dict[str, int] = {}
    pads: list[tuple[int, int]] = []
    for c in _FIXED:
        if columns & c.bit:
            at[c.name] = start = align(pos, c.align)
            pads.append((pos, start))
            pos = start + c.size * n
    if pos > length:
        fail("count_exceeds_file", "tensors.num_tensors", s,
             f"{n} records with columns {columns:#x} need {pos} bytes; the section has {length}")
    col = {c.name: np.frombuffer(view, dtype=c.format, count=n, offset=s + at[c.name])
           for c in _FIXED if c.name in at}
    lengths = np.frombuffer(view, dtype=_LEN_DATA_TYPE, count=n, offset=s + _LEN_DATA)
    for name, check in _CHECKS.items():  # C4 to C9
        if name in col:
            check(sec, col[name], at[name])
    # C10: the variable columns, as long as the sum of another column's values (``skip``: 0)
    end = pos
    for c in _VARIABLE:
        if columns & c.bit:
            values = col[c.sum_of]
            count = int(values[values != c.skip].sum(dtype=np.int64))
            at[c.name] = start = align(end, c.align)
            pads.append((end, start))
            end = start + c.size * count
            if end > length:
                fail("count_exceeds_file", f"tensors.{c.name}", s + start,
                     f"the {c.name} column of {count} elements needs {c.size * count} bytes "
                     f"from {s + start}; the section ends at {s + length}")
    if end < length:
        fail("gap", "tensors", s + end, f"bytes {s + end}..{s + length} belong to no column")
    for a, b in pads:  # C11
        check_padding(view, s + a, s + b)
    rank, len_name = col.get("rank"), col.get("len_name")
    names = None
    if len_name is not None:
        named = np.flatnonzero(len_name)  # C12
        name_lengths = len_name[named].astype(np.int64)
        starts = s + at["names"] + np.cumsum(name_lengths) - name_lengths
        names = unique_names(view, starts, name_lengths, named, n)
    # (n, the largest rank): what the entry tables read of v2's (n, 8) column, dims[k, :rank]
    shaped = None if rank is None else rank != NO_SHAPE
    dims = np.zeros((n, 0 if rank is None else int(rank[shaped].max(initial=0))), _DIMS.format)
    if dims.shape[1]:
        assert rank is not None and shaped is not None
        num_dims = int(rank[shaped].sum(dtype=np.int64))
        flat = np.frombuffer(view, dtype=_DIMS.format, count=num_dims, offset=s + at["dims"])
        _fill_dims(dims, flat, rank, shaped)
    dtype = col.get("dtype")
    if dtype is not None and rank is not None and shaped is not None:  # C13
        wrong = wrong_size(lengths, dtype, rank, dims, shaped & (dtype != NO_DTYPE))
        if wrong is not None:
            k = wrong[0]
            fail("shape_mismatch", _field(k, "len_data"), s + _LEN_DATA
                 + _LEN_DATA_TYPE.itemsize * k, wrong[1])
    keys = col["index"].astype(np.int64) if "index" in col else np.arange(n, dtype=np.int64)
    return TensorColumns(s, lengths, keys, col.get("order"), _meta(n, col, dims, names))


def _refuse(sec: SectionInfo, start: int, column: np.ndarray, k: int, code: str, name: str,
            message: str) -> NoReturn:
    """Refuse record ``k`` at its value in ``column`` (``start`` bytes into the section)."""
    fail(code, _field(k, name), sec.start + start + column.itemsize * k, message)


def _check_index(sec: SectionInfo, index: np.ndarray, start: int) -> None:
    """C4: strictly ascending, and not the identity."""
    check_ascending(index, functools.partial(_refuse, sec, start, index))
    # strictly ascending from at least 0: index[k] >= k, so the last decides the identity
    if int(index[-1]) == index.size - 1:
        _redundant(sec, "index", "every record's index is its position")


def _check_model_index(sec: SectionInfo, mi: np.ndarray, start: int) -> None:
    """C5: some record has a model index; no two records share one."""
    has = mi != NO_MODEL_INDEX
    if not has.any():
        _redundant(sec, "model_index", "no record has a model index")
    check_unique_model_index(mi, has, functools.partial(_refuse, sec, start, mi))


def _check_len_name(sec: SectionInfo, ln: np.ndarray, start: int) -> None:
    """C6: some record has a name; no name is longer than MAX_NAME_LEN."""
    if not ln.any():
        _redundant(sec, "len_name", "no record has a name")
    if (k := first(ln > MAX_NAME_LEN)) is not None:
        _refuse(sec, start, ln, k, "limit_exceeded", "len_name",
                f"a name has 1..{MAX_NAME_LEN} bytes, not {int(ln[k])}")


def _check_dtype(sec: SectionInfo, code: np.ndarray, start: int) -> None:
    """C7: some record has a dtype; each is NO_DTYPE or a circle TensorType code."""
    if not (code != NO_DTYPE).any():
        _redundant(sec, "dtype", "no record has a dtype")
    if (k := first(~_DTYPE_OK[code.view(np.uint8)])) is not None:
        _refuse(sec, start, code, k, "bad_dtype", "dtype",
                f"{int(code[k])} is not a circle TensorType")


def _check_rank(sec: SectionInfo, rank: np.ndarray, start: int) -> None:
    """C8: some record has a shape; each rank is NO_SHAPE or at most MAX_RANK."""
    shaped = rank != NO_SHAPE
    if not shaped.any():
        _redundant(sec, "rank", "no record has a shape")
    if (k := first(shaped & (rank > MAX_RANK))) is not None:
        _refuse(sec, start, rank, k, "limit_exceeded", "rank",
                f"rank {int(rank[k])} exceeds {MAX_RANK}")


def _check_order(sec: SectionInfo, order: np.ndarray, start: int) -> None:
    """C9: a permutation of the records, not the identity."""
    n = order.size
    k = first(order >= n)
    if k is None:
        k = first_repeat(order)
    if k is not None:
        _refuse(sec, start, order, k, "bad_data_order", "order",
                f"order[{k}] is {int(order[k])}: the column must name each of the {n} records once")
    if not (order != np.arange(n, dtype=order.dtype)).any():
        _redundant(sec, "order", "the data are in record order")


#: Rules C4 to C9, in order, each on its column when present.
_CHECKS = {"index": _check_index, "model_index": _check_model_index, "len_name": _check_len_name,
           "dtype": _check_dtype, "rank": _check_rank, "order": _check_order}


def _fill_dims(dims: np.ndarray, flat: np.ndarray, rank: np.ndarray, shaped: np.ndarray) -> None:
    """The flat ``dims`` column spread into (n, 8) rows, one dim position at a time."""
    r = np.where(shaped, rank, 0).astype(np.int32)  # D <= 8 * MAX_TENSORS < 2**31
    starts = np.cumsum(r, dtype=np.int32) - r
    for j in range(dims.shape[1]):
        rows = np.flatnonzero(r > j)
        dims[rows, j] = flat[starts[rows] + j]


#: Schema 2's record fields, the types of the columns the entry tables read (flags, dtype, ...).
_V2 = V2TensorRecord.DTYPE


#: The columns behind schema 2's record flags: each column's "none" value and its flag.
_FLAGS = (("dtype", NO_DTYPE, HAS_DTYPE), ("rank", NO_SHAPE, HAS_SHAPE),
          ("len_name", 0, HAS_NAME), ("model_index", NO_MODEL_INDEX, HAS_MODEL_INDEX))


def _meta(n: int, col: dict[str, np.ndarray], dims: np.ndarray,
          names: list[bytes | None] | None) -> dict[str, Any]:
    """Schema 2's record columns (revisions/v2/reader.py): flags, and 0 where a flag is clear.
    An absent column is a read-only broadcast 0 (no memory); ``dims`` is (n, largest rank)."""

    def zeros(field: str) -> np.ndarray:
        return np.broadcast_to(np.zeros(1, _V2[field]), (n,))

    meta: dict[str, Any] = {"dims": dims, "names": names}
    flags = None
    for name, none, flag in _FLAGS:
        column = col.get(name)
        if column is not None:
            if flags is None:
                flags = np.zeros(n, _V2["flags"])
            flags[column != none] |= flag
        if name == "len_name":  # the names are a column of their own
            continue
        meta[name] = (zeros(name) if column is None
                      else np.where(column != none, column, 0).astype(_V2[name]))
    meta["flags"] = zeros("flags") if flags is None else flags
    return meta
