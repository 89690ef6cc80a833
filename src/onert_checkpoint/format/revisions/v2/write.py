"""Writing schema-2 checkpoints (spec/SPEC.md, section 6): :func:`plan` checks the content,
lays out the tensor records and every data range; the container's writer (container/write.py)
checksums and yields the file in order.

The file is the canonical encoding of spec/SPEC.md 6.1: sections in the order tensors,
optimizer, state, origin, the kept unknown sections by kind, data; no empty tensors, state or
data section. Tensor records follow the entry index; data ranges, tensors and slot entries
together, follow the offsets they were read from (so a loaded file is written back byte for
byte and an upgraded onert-micro file keeps its data order), and ranges built in memory come
after them, tensors first, then each slot.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import numpy as np
from onert_checkpoint_generated import structs
from onert_checkpoint_generated.layout import V2SlotEntry, V2TensorRecord

from ...container.constants import (
    ALIGNMENT,
    FLAG_REQUIRED,
    HAS_DTYPE,
    HAS_MODEL_INDEX,
    HAS_NAME,
    HAS_SHAPE,
    MAX_NAME_LEN,
    MAX_RANK,
    MAX_TENSORS,
    NO_STATE,
    SECTION_HEAD_SIZE,
    SLOT_ENTRY_SIZE,
    TENSOR_RECORD_SIZE,
    SectionKind,
)
from ...container.rules import first
from ...container.write import (
    Part,
    Plan,
    chunks,
    common_parts,
    optimizer_part,
    optimizer_slots,
    stream,
    utf8,
)
from ...container.write import plan as container_plan
from ...dtypes import DTYPE_CODES, DTYPES
from ...model import Buffer, Checkpoint, Tensor
from ..blocks import refuse

__all__ = ["Bounds", "Plan", "Records", "chunks", "column", "plan", "records", "stream"]

VERSION = 2
#: The largest value of each tensor-record field (its width in spec/onert_checkpoint_v2.ksy).
_MAX = {f.name: int(np.iinfo(f.format).max) for f in V2TensorRecord.FIELDS}
#: The fields gathered at their widths in the layout (so that a widened field follows it).
_WIDE = ("index", "model_index", "len_name", "dims")
_TYPECODE = {f.name: np.dtype(f.format).char for f in V2TensorRecord.FIELDS}


#: Records made at a time while the tensors section is written (2.4 MB): a section of millions
#: of records is never whole in memory.
_RECORDS_AT_A_TIME = 1 << 15


@dataclass(frozen=True)
class Bounds:
    """What a revision's tensor records hold, as the writer's refusals name it: the largest
    index and the index range, the largest model index and its range, the largest dim and
    what bounds it (schema 2's below; schema 3 gathers its records here with its own)."""

    index_max: int
    index: str
    model_max: int
    model: str
    dim_max: int
    dims: str


_BOUNDS = Bounds(_MAX["index"], f"0..{_MAX['index']}", _MAX["model_index"], "range",
                 _MAX["dims"], "the dims' width")


@dataclass
class Records:
    """The tensor records' columns in record order (ascending index), each as narrow as its
    field, with the names and the dims of the records that have them, in record order."""

    index: np.ndarray
    model_index: np.ndarray
    flags: np.ndarray
    dtype: np.ndarray
    rank: np.ndarray
    len_name: np.ndarray
    names: bytes
    dims: np.ndarray
    len_data: np.ndarray
    #: the offset each tensor was read from, -1 for one built in memory
    read: np.ndarray
    #: record position -> the tensor, for the tensors with data bytes only
    held: dict[int, Buffer]

    def pieces(self, start: int, data_start: int, rel: np.ndarray) -> Iterator[bytes | memoryview]:
        """The tensors section (6.5) placed at ``start``, the records' data at ``data_start``
        plus ``rel``: its head, its records a chunk at a time, its names."""
        n = self.index.size
        yield structs.V2TensorsHead.build({"num_tensors": n})
        name_at = start + SECTION_HEAD_SIZE + TENSOR_RECORD_SIZE * n
        dim_at = 0
        for a in range(0, n, _RECORDS_AT_A_TIME):
            b = min(a + _RECORDS_AT_A_TIME, n)
            rec = np.zeros(b - a, V2TensorRecord.DTYPE)
            for field in ("index", "model_index", "flags", "dtype", "rank", "len_data"):
                rec[field] = getattr(self, field)[a:b]
            length = rec["len_name"] = self.len_name[a:b]
            ends = name_at + np.cumsum(length, dtype=np.int64)
            rec["ofs_name"] = np.where(length > 0, ends - length, 0)
            name_at = int(ends[-1])
            rec["ofs_data"] = data_start + rel[a:b]
            filled = np.arange(MAX_RANK) < self.rank[a:b, None]  # each record's dims, then 0
            count = int(filled.sum())
            rec["dims"][filled] = self.dims[dim_at : dim_at + count]
            dim_at += count
            yield rec.data.cast("B")
        yield self.names


def _gather(tensors: Iterable[Tensor], bounds: Bounds) -> Records:
    """The :class:`Records` of ``tensors`` (in their order), with every check of a record: one
    pass that makes a loaded file's tensors a chunk at a time and keeps only those with data
    bytes (a file of many empty tensors costs its columns, not an object per tensor)."""
    index, model_index, len_name, dims = (array(_TYPECODE[f]) for f in _WIDE)
    flag_col, dtype, rank = array("B"), array("b"), array("B")
    len_data, read = array("q"), array("q")
    names = bytearray()
    seen_name: set[bytes] = set()
    held: dict[int, Buffer] = {}
    for k, t in enumerate(tensors):
        i = t.index
        if not 0 <= i <= bounds.index_max:
            refuse(f"tensor index {i} is out of {bounds.index} or used twice")
        index.append(i)
        flags = 0
        nbytes = t.nbytes
        mi = t.model_index
        if mi is not None:
            if not 0 <= mi <= bounds.model_max:
                refuse(f"model index {mi} is out of {bounds.model} or used twice")
            flags |= HAS_MODEL_INDEX
        model_index.append(0 if mi is None else mi)
        code = None
        if t.dtype is not None:
            code = DTYPE_CODES.get(str(t.dtype))
            if code is None:
                refuse(f"tensor {i}: dtype {t.dtype!r} is not a circle TensorType")
            flags |= HAS_DTYPE
        dtype.append(code or 0)
        if t.shape is None:
            rank.append(0)
        else:
            shape = tuple(int(d) for d in t.shape)
            if len(shape) > MAX_RANK or any(not 0 <= d <= bounds.dim_max for d in shape):
                refuse(f"tensor {i}: shape {shape} exceeds rank {MAX_RANK} or {bounds.dims}")
            flags |= HAS_SHAPE
            rank.append(len(shape))
            dims.extend(shape)
            elem = DTYPES[code][1] if code is not None else None
            if elem is not None and math.prod(shape) * elem != nbytes:
                refuse(f"tensor {i}: shape {shape} of {t.dtype} disagrees with its {nbytes} bytes")
        if t.name is None:
            len_name.append(0)
        else:
            raw = utf8(t.name, f"tensor {i}'s name", MAX_NAME_LEN)
            if raw in seen_name:
                refuse(f"two tensors are named {t.name!r}")
            seen_name.add(raw)
            flags |= HAS_NAME
            names += raw
            len_name.append(len(raw))
        flag_col.append(flags)
        len_data.append(nbytes)
        read.append(-1 if t.offset is None else t.offset)
        if nbytes:
            held[k] = t
    c = column
    return Records(c(index), c(model_index), c(flag_col), c(dtype), c(rank), c(len_name),
                    bytes(names), c(dims), c(len_data), c(read), held)


def column(a: array[int]) -> np.ndarray:
    return np.frombuffer(a, a.typecode) if len(a) else np.zeros(0, a.typecode)


def records(ckpt: Checkpoint, bounds: Bounds = _BOUNDS) -> Records:
    """The :class:`Records` of ``ckpt``'s tensors in record order (ascending index), with every
    check of a record within ``bounds`` and those that need the order: indices and model
    indices unique."""
    r = _gather(ckpt.tensors, bounds)
    if (r.index[1:] < r.index[:-1]).any():  # in memory, any order (a loaded file's are sorted)
        r = _gather(sorted(ckpt.tensors, key=lambda t: t.index), bounds)
    if (i := first(r.index[1:] == r.index[:-1])) is not None:
        refuse(f"tensor index {int(r.index[i])} is out of {bounds.index} or used twice")
    models = np.sort(r.model_index[(r.flags & HAS_MODEL_INDEX) != 0])
    if (i := first(models[1:] == models[:-1])) is not None:
        refuse(f"model index {int(models[i])} is out of {bounds.model} or used twice")
    return r


def _data_order(read: np.ndarray, sizes: np.ndarray) -> np.ndarray | None:
    """The data ranges (given in range order: their offsets ``read``, -1 for one built in
    memory, and ``sizes``) in the order the writer places them, as range numbers (None: in
    range order).

    Ranges read from a file keep their (offset, range order) order, the order rule D2 sorts
    them in, so a loaded file is written back as it was; ranges built in memory follow, in range
    order. A 0-byte range lands at the offset of the range placed after it, and D2 sorts equal
    offsets by range order, so a 0-byte range may stay before a range only if it precedes it in
    range order; the others move to the end of the section, where every range is empty.
    """
    built = read < 0
    if built.all() or not (built.any() or (read[1:] < read[:-1]).any()):
        return None  # built in memory, or read in range order: every 0-byte range stays
    count = read.size
    number = np.arange(count)
    ordered = np.lexsort((number, np.where(built, 0, read), built))
    full = sizes[ordered] > 0
    # for each place in ``ordered``: the next range with bytes (``count``: none follows)
    at = np.where(full, np.arange(count), count)
    following = np.minimum.accumulate(at[::-1])[::-1]
    nxt = np.where(following < count, ordered[np.minimum(following, count - 1)], count)
    # an empty range stays in the group of the next range with bytes when it precedes it in
    # range order; else (and after the last such range) it moves to the end
    group = np.where(full | (ordered < nxt), following, count)
    return ordered[np.lexsort((ordered, full, group))]


def _placement(reads: list[np.ndarray], sizes_of: list[np.ndarray],
               held: dict[int, Buffer]) -> tuple[np.ndarray, list[tuple[int, Buffer]]]:
    """Where each data range (the offsets it was read from and the sizes, in parts, in range
    order) starts, from the data section's start, by range number; and the ranges with bytes
    (``held``, by range number) in file order, as the container writer lists them."""
    read, size = (c[0] if len(c) == 1 else np.concatenate(c) for c in (reads, sizes_of))
    ranges = _data_order(read, size)
    sizes = size if ranges is None else size[ranges]
    # each range starts aligned: the offsets are a running sum of align(size), made in place
    starts = np.zeros(sizes.size, np.int64)
    starts[1:] = sizes[:-1]
    starts += ALIGNMENT - 1
    starts &= -ALIGNMENT
    np.cumsum(starts, out=starts)
    rel_of = starts
    if ranges is not None:
        rel_of = np.empty(sizes.size, np.int64)
        rel_of[ranges] = starts
    # only the ranges with bytes are listed (an empty one writes nothing)
    full = np.flatnonzero(sizes)
    numbers = full if ranges is None else ranges[full]
    placed = [(ofs, held[r]) for ofs, r in zip(starts[full].tolist(), numbers.tolist())]
    if sizes.size and not sizes[-1]:  # the section ends where the last range (empty) is placed
        placed.append((int(starts[-1]), Buffer(0, np.zeros(0, np.uint8))))
    return rel_of, placed


def plan(ckpt: Checkpoint, *, data_crc: bool = True, version: int = VERSION) -> Plan:
    """Check ``ckpt`` against schema 2 and compute every offset and checksum of its file.

    ``data_crc=False`` leaves the data section's CRC to :func:`stream`, which computes it while
    the data are written (one pass over the tensor bytes instead of two)."""
    if len(ckpt.tensors) > MAX_TENSORS:
        refuse(f"schema 2 holds at most {MAX_TENSORS} tensors")
    r = records(ckpt)
    n = r.index.size
    opt_parts = optimizer_slots(ckpt, r.index)
    parts = common_parts(ckpt)

    # Data ranges as columns, in range order (tensors in record order, then each slot's entries
    # in record order): the offset each was read from (-1: none), its size and, for a slot's,
    # the record it belongs to; the buffers kept are those with bytes (by range number).
    held = r.held
    reads, sizes, slot_rows = [r.read], [r.len_data], []
    for name in opt_parts[2] if opt_parts is not None else ():
        keys, lens, offs = array("q"), array("q"), array("q")
        kept: dict[int, Buffer] = {}
        for j, (key, b) in enumerate(ckpt.optimizer.slots[name].items()):  # type: ignore[union-attr]
            keys.append(key)
            lens.append(b.nbytes)
            offs.append(-1 if b.offset is None else b.offset)
            if b.nbytes:
                kept[j] = b
        rows = np.searchsorted(r.index, column(keys))
        by_row = np.argsort(rows, kind="stable")
        place = np.empty(by_row.size, np.int64)  # each entry's range number, from the slot's first
        place[by_row] = np.arange(by_row.size)
        base = sum(map(len, reads))
        held.update((base + int(place[j]), b) for j, b in kept.items())
        slot_rows.append(rows[by_row])
        reads.append(column(offs)[by_row])
        sizes.append(column(lens)[by_row])
    rel_of, placed = _placement(reads, sizes, held)

    if n:
        length = SECTION_HEAD_SIZE + TENSOR_RECORD_SIZE * n + len(r.names)
        parts.append(Part(SectionKind.TENSORS, FLAG_REQUIRED, length,
                          lambda start, data_start: lambda: r.pieces(start, data_start, rel_of)))
    if opt_parts is not None:

        def slot_entries(data_start: int) -> bytes:
            ent = np.zeros((len(slot_rows), n), V2SlotEntry.DTYPE)
            ent["ofs_data"] = NO_STATE
            base = n
            for j, rows in enumerate(slot_rows):
                ent["ofs_data"][j, rows] = data_start + rel_of[base : base + rows.size]
                ent["len_data"][j, rows] = sizes[j + 1]
                base += rows.size
            return ent.tobytes()

        parts.append(optimizer_part(opt_parts, n, SLOT_ENTRY_SIZE, slot_entries))
    return container_plan(parts, placed, version, data_crc, title="schema 2",
                          has_data=rel_of.size > 0)


