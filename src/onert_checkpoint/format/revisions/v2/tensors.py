"""The tensors section of a schema-2 file: rules R0 to R11 (spec/SPEC.md, 8.1 and 6.5).

Every rule runs over whole NumPy columns of the record table (a view on the file); Python
loops, f-strings and per-record objects appear only on the way to an error.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass
from functools import reduce
from typing import NoReturn

import numpy as np
from onert_checkpoint_generated.layout import V2TensorFlags, V2TensorRecord, V2TensorsHead

from ...container.constants import (
    HAS_DTYPE,
    HAS_MODEL_INDEX,
    HAS_NAME,
    HAS_SHAPE,
    MAX_NAME_LEN,
    MAX_RANK,
    MAX_TENSORS,
    TENSOR_RECORD_SIZE,
)
from ...container.rules import (
    check_head,
    check_pool,
    decode,
    fail,
    first,
    first_repeat,
    read_records,
)
from ...container.section_table import SectionInfo
from ...dtypes import DTYPES, ELEMENT_SIZE, KNOWN_CODE

__all__ = ["TensorRecords", "check_ascending", "check_tensors_section",
           "check_unique_model_index", "unique_names", "wrong_size"]

#: The flag bits a tensor record defines (V2TensorFlags, onert_checkpoint_v2.ksy's
#: tensor_flags), in the flags field's type; R2: every other bit is reserved.
_DEFINED_FLAGS = np.dtype(V2TensorRecord.flags.format).type(reduce(operator.or_, V2TensorFlags, 0))

@dataclass
class TensorRecords:
    """The validated record table: columns (views on the file) and the names' bytes."""

    records: np.ndarray
    base: int  # offset of record 0
    names: list[bytes | None] | None  # per record, None when no record has a name

    def at(self, k: int) -> int:
        return self.base + TENSOR_RECORD_SIZE * k

    def refuse(self, k: int, code: str, name: str, message: str, label: str = "",
               extra: int = 0) -> NoReturn:
        """Refuse record ``k`` at its field ``name`` (``extra`` bytes in, named ``label``)."""
        fail(code, _field(k, label or name), self.at(k) + _AT[name] + extra, message)


#: Each record field's offset in the record (spec/onert_checkpoint_v2.ksy, `tensor_record`).
_AT = {f.name: f.offset for f in V2TensorRecord.FIELDS}


def _field(k: int, name: str) -> str:
    return f"tensors[{k}].{name}"


def check_tensors_section(view: memoryview, sec: SectionInfo) -> TensorRecords:
    """Rules R0 to R11, in order."""
    n = int(check_head(view, sec, V2TensorsHead, "tensors", "num_tensors")["num_tensors"])  # R0
    if n == 0:  # R1
        fail("empty_section", "tensors.num_tensors", sec.start, "a tensors section without records")
    rec = read_records(view, sec, V2TensorsHead.SIZE, n, MAX_TENSORS, V2TensorRecord.DTYPE,
                       "tensors", "num_tensors", sec.start)
    out = TensorRecords(rec, sec.start + V2TensorsHead.SIZE, None)
    flags = rec["flags"]
    check_flags(out, flags)
    check_rank_and_dims(out)
    check_dtypes(out, flags)
    named = check_name_pool(out, flags, sec)
    check_index_order(out, flags)
    out.names = check_names(view, out, named)
    check_sizes(out, flags)
    return out


def check_flags(t: TensorRecords, flags: np.ndarray) -> None:
    """R2 reserved flag bits, then R3: each field whose flag is clear is 0."""
    rec = t.records
    if (i := first((flags & ~_DEFINED_FLAGS) != 0)) is not None:
        t.refuse(i, "reserved_nonzero", "flags", f"reserved flag bits {int(flags[i]):#x}")
    for flag, name in ((HAS_MODEL_INDEX, "model_index"), (HAS_DTYPE, "dtype"), (HAS_SHAPE, "rank"),
                       (HAS_NAME, "len_name"), (HAS_NAME, "ofs_name")):
        if (i := first(((flags & flag) == 0) & (rec[name] != 0))) is not None:
            t.refuse(i, "reserved_nonzero", name, f"{name} must be 0 when its flag is clear")


def check_rank_and_dims(t: TensorRecords) -> None:
    """R4 rank within MAX_RANK; R5 dims beyond the rank are 0."""
    rec = t.records
    rank = rec["rank"]
    if (i := first(rank > MAX_RANK)) is not None:
        t.refuse(i, "limit_exceeded", "rank", f"rank {int(rank[i])} exceeds {MAX_RANK}")
    dims = rec["dims"]
    beyond = (np.arange(MAX_RANK, dtype=np.uint8)[None, :] >= rank[:, None]) & (dims != 0)
    if (i := first(beyond.any(axis=1))) is not None:
        j = int(np.flatnonzero(beyond[i])[0])
        t.refuse(i, "reserved_nonzero", "dims", "a dim beyond the rank is not 0",
                 f"dims[{j}]", dims.itemsize * j)


def check_dtypes(t: TensorRecords, flags: np.ndarray) -> None:
    """R6: a dtype, when flagged, is a circle TensorType code."""
    code = t.records["dtype"]
    if (i := first(((flags & HAS_DTYPE) != 0) & ~KNOWN_CODE[code.view(np.uint8)])) is not None:
        t.refuse(i, "bad_dtype", "dtype", f"{int(code[i])} is not a circle TensorType")


def check_name_pool(t: TensorRecords, flags: np.ndarray, sec: SectionInfo) -> np.ndarray:
    """R7 name lengths, R8 the name pool; returns the named records."""
    rec = t.records
    has_name = (flags & HAS_NAME) != 0
    len_name = rec["len_name"]
    if (i := first(has_name & ((len_name == 0) | (len_name > MAX_NAME_LEN)))) is not None:
        t.refuse(i, "limit_exceeded", "len_name",
                 f"a name has 1..{MAX_NAME_LEN} bytes, not {int(len_name[i])}")
    named = np.flatnonzero(has_name) if not has_name.all() else None
    starts = rec["ofs_name"] if named is None else rec["ofs_name"][named]
    lengths = len_name if named is None else len_name[named]

    def field_of(j: int) -> tuple[str, int]:
        k = j if named is None else int(named[j])
        return _field(k, "ofs_name"), t.at(k) + _AT["ofs_name"]

    check_pool(starts, lengths, field_of, t.base + TENSOR_RECORD_SIZE * rec.size, sec.end,
               "tensors.names")
    return np.arange(rec.size) if named is None else named


def check_index_order(t: TensorRecords, flags: np.ndarray) -> None:
    """R9: indices strictly ascending; model indices (where flagged) unique."""
    check_ascending(t.records["index"], t.refuse)
    check_unique_model_index(t.records["model_index"], (flags & HAS_MODEL_INDEX) != 0, t.refuse)


def check_ascending(index: np.ndarray, refuse: Callable[..., NoReturn]) -> None:
    """R9 and C4: the index column strictly ascending (``refuse(k, code, field, message)``)."""
    if (i := first(index[1:] <= index[:-1])) is not None:
        k = i + 1
        refuse(k, "duplicate_tensor_index" if index[k] == index[i] else "tensor_order", "index",
               f"record {k} has index {int(index[k])}; the previous record has "
               f"{int(index[i])} (records are in strictly ascending index order)")


def check_unique_model_index(mi: np.ndarray, has: np.ndarray,
                             refuse: Callable[..., NoReturn]) -> None:
    """R9 and C5: no two records of ``has`` share a model index."""
    rows = np.flatnonzero(has)
    if (r := first_repeat(mi[rows])) is not None:
        k = int(rows[r])
        refuse(k, "duplicate_tensor_index", "model_index",
               f"model_index {int(mi[k])} appears twice")


def check_names(view: memoryview, t: TensorRecords, named: np.ndarray) -> list[bytes | None] | None:
    """R10: every name is UTF-8 and unique. Returns the names' bytes per record (decoded
    only when a tensor is looked at), or None when no record has a name."""
    if not named.size:
        return None
    rec = t.records
    starts = rec["ofs_name"][named].astype(np.int64)
    return unique_names(view, starts, rec["len_name"][named].astype(np.int64), named, rec.size)


def unique_names(view: memoryview, starts: np.ndarray, lengths: np.ndarray, named: np.ndarray,
                 n: int) -> list[bytes | None]:
    """R10 and C12 over the names at ``starts`` (ascending) of records ``named`` of ``n``:
    their bytes per record, None where a record has no name.

    The pool is decoded once: it is valid UTF-8 and no name starts inside a multi-byte
    character exactly when every name is valid UTF-8 on its own. On any doubt the records
    are checked one by one, in order, for the spec's first failing record.
    """
    lo = int(starts[0])
    pool = bytes(view[lo:int(starts[-1] + lengths[-1])])
    rel = starts - lo
    raw: list[bytes | None] = [pool[a:a + b] for a, b in zip(rel.tolist(), lengths.tolist())]
    try:
        pool.decode("utf-8")
        heads = np.frombuffer(pool, np.uint8)[rel]
        clean = not ((heads & 0xC0) == 0x80).any() and len(set(raw)) == len(raw)
    except UnicodeDecodeError:
        clean = False
    if not clean:
        seen: dict[str, int] = {}
        for j, k in enumerate(named.tolist()):
            at = int(starts[j])
            s = decode(view, at, int(lengths[j]), _field(k, "name"), at)
            if s in seen:
                fail("duplicate_tensor_name", _field(k, "name"), at,
                     f"tensors {seen[s]} and {k} are both named {s!r}")
            seen[s] = k
    if named.size == n:
        return raw
    names: list[bytes | None] = [None] * n
    for k, b in zip(named.tolist(), raw):
        names[k] = b
    return names


def check_sizes(t: TensorRecords, flags: np.ndarray) -> None:
    """R11: with a dtype of whole-byte elements and a shape, ``len_data`` is their product."""
    rec = t.records
    shaped = ((flags & HAS_DTYPE) != 0) & ((flags & HAS_SHAPE) != 0)
    wrong = wrong_size(rec["len_data"], rec["dtype"], rec["rank"], rec["dims"], shaped)
    if wrong is not None:
        t.refuse(wrong[0], "shape_mismatch", "len_data", wrong[1])


def wrong_size(lengths: np.ndarray, dtype: np.ndarray, rank: np.ndarray, dims: np.ndarray,
               shaped: np.ndarray) -> tuple[int, str] | None:
    """R11 and C13: the first of the ``shaped`` records with a dtype of whole-byte elements
    whose ``len_data`` is not their product, and the message refusing it; None if none.

    The product is computed in float64, one dim position at a time (one float per record, not
    eight); where it may not be exact (at or above 2**52), in Python integers, record by
    record."""
    rows = np.flatnonzero(shaped & (ELEMENT_SIZE[dtype.view(np.uint8)] != 0))
    if not rows.size:
        return None
    r = rank[rows]
    prod = ELEMENT_SIZE[dtype[rows].view(np.uint8)].astype(np.float64)
    for j in range(dims.shape[1]):
        prod *= np.where(r > j, dims[rows, j], 1)
    exact = prod < 2.0**52
    wrong = rows[np.flatnonzero(exact & (prod != lengths[rows].astype(np.float64)))[:1]].tolist()
    doubtful = (int(k) for k in rows[~exact].tolist())
    bad = next((k for k in doubtful if _product(dims, dtype, rank, k) != int(lengths[k])), None)
    if not wrong and bad is None:
        return None
    k = min([*wrong, *([] if bad is None else [bad])])
    return k, (f"shape {dims[k, : int(rank[k])].tolist()} of {DTYPES[int(dtype[k])][0]} needs "
               f"{_product(dims, dtype, rank, k)} bytes; the record has {int(lengths[k])}")


def _product(dims: np.ndarray, dtype: np.ndarray, rank: np.ndarray, k: int) -> int:
    count = int(ELEMENT_SIZE[int(dtype[k]) & 0xFF])
    for d in dims[k, : int(rank[k])].tolist():
        count *= d
    return count
