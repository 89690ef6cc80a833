"""Writing schema-3 checkpoints (spec/SPEC.md 6.7): schema 2's container with compact tables.

The header, the section table, the state, origin and kept sections are schema 2's and are
built by the same code (:mod:`.v2_write`); what differs is the tensors section (columns present
only when some tensor uses them, 6.7.1), the slot entries (one u64 size each, 6.7.2) and the
data section, whose ranges are placed by rule instead of by stored offsets (6.7.3).

The file is the canonical encoding of 6.1 and 6.7: every column present only when needed, every
pad zero, sections in 6.4's order. The one choice a writer has is the data order (the ``order``
column): the tensors' ranges keep the order of the offsets they were read from (so a loaded
schema-3 file is written back byte for byte, and an upgraded onert-micro file keeps its reverse
operator order); ties between 0-byte ranges follow ``Checkpoint.data_order``, then record
order; tensors built in memory come last, in record order. Each slot's ranges follow in the
tensors' order (6.7.3).

:func:`plan` checks the content and computes every offset and the metadata checksums;
:func:`chunks` and :func:`stream` yield the file in order. Small ranges are gathered into
pieces of at most :data:`PIECE_BYTES` (a file of 100,000 16-byte tensors is a few dozen pieces,
not 200,000), never the whole data section.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Generator, Iterator, Sequence

import numpy as np

from ..dtypes import DTYPE_CODES, DTYPES
from ..model import Buffer, Checkpoint, Tensor
from ..schemas import v2 as schema
from ..schemas import v3 as schema3
from .layout_plan import data_view
from .v2 import (
    ALIGNMENT,
    FLAG_REQUIRED,
    HEADER_SIZE,
    MAX_NAME_LEN,
    MAX_RANK,
    MAX_SECTIONS,
    MAX_TENSORS,
    NO_STATE,
    OPTIMIZER_HEAD_SIZE,
    SECTION_ENTRY_SIZE,
    SECTION_HEAD_SIZE,
    SECTION_KINDS,
    SLOT_DESCRIPTOR_SIZE,
    STATE_ENTRY_SIZE,
    align,
    crc,
)
from .v2_write import (
    U32_MAX,
    Plan,
    _fail,
    _head,
    _optimizer_parts,
    _padding,
    _Section,
    _state_entries,
    _utf8,
    extra_sections,
    finish,
    origin_body,
    origin_of,
    state_body,
)
from .v3.constants import (
    COLUMN_TYPES,
    NO_DTYPE,
    NO_MODEL_INDEX,
    NO_SHAPE,
    SLOT_LEN_SIZE,
    VERSION,
    align8,
    range_alignment,
)

__all__ = [
    "COLUMNS",
    "NO_DTYPE",
    "NO_MODEL_INDEX",
    "NO_SHAPE",
    "VERSION",
    "chunks",
    "plan",
    "range_alignment",
    "stream",
]

#: The tensors section's column bits (6.7.1), in the order the columns are laid out.
COLUMNS = dict(schema3.COLUMN_BITS)

#: Ranges smaller than this are copied into a gathering piece; larger ones are handed out as
#: views of their arrays (zero copy).
SMALL_RANGE = 4096
#: A gathering piece is flushed once it holds this many bytes.
PIECE_BYTES = 1 << 20




def _data_order(
    tensors: list[Tensor], data_order: Sequence[int] | np.ndarray | None
) -> list[int]:
    """The record positions of ``tensors`` (record order) in the order their ranges are placed:
    by the offset they were read from, ties by their place in ``data_order`` (the file's
    ``order`` column) and then by record; tensors built in memory last, in record order."""
    n = len(tensors)
    listed: dict[int, int] = {}
    if data_order is not None:
        try:
            listed = {operator.index(i): k for k, i in enumerate(data_order)}
        except TypeError:
            _fail(f"data_order must list entry indices (integers), not {data_order!r:.80}")

    def key(k: int) -> tuple[bool, int, int]:
        t = tensors[k]
        offset = t.offset
        return (offset is None, offset or 0, listed.get(t.index, n + k))

    return sorted(range(n), key=key)


def _tensors_body(tensors: list[Tensor], perm: list[int]) -> bytes:
    """The tensors section (6.7.1) of ``tensors`` (in record order), data order ``perm``."""
    n = len(tensors)
    if n > MAX_TENSORS:
        _fail(f"schema 3 holds at most {MAX_TENSORS} tensors")
    # Python lists filled per tensor, made arrays once (a NumPy item assignment per field and
    # tensor costs more than the rest of the loop)
    index = [0] * n
    model_index = [NO_MODEL_INDEX] * n
    len_name = [0] * n
    dtype = [NO_DTYPE] * n
    rank = [NO_SHAPE] * n
    len_data = [0] * n
    dims: list[int] = []
    names: list[bytes] = []
    seen_model: set[int] = set()
    seen_name: set[bytes] = set()
    previous = -1
    for k, t in enumerate(tensors):
        if not previous < t.index <= U32_MAX:
            _fail(f"tensor index {t.index} is out of 0..2**32-1 or used twice")
        previous = index[k] = t.index
        if t.model_index is not None:
            if not 0 <= t.model_index < NO_MODEL_INDEX or t.model_index in seen_model:
                _fail(
                    f"model index {t.model_index} is out of 0..2**32-2 (2**32-1 means none in "
                    "schema 3) or used twice"
                )
            seen_model.add(t.model_index)
            model_index[k] = t.model_index
        if t.dtype is not None:
            code = DTYPE_CODES.get(str(t.dtype))
            if code is None:
                _fail(f"tensor {t.index}: dtype {t.dtype!r} is not a circle TensorType")
            dtype[k] = code
        if t.shape is not None:
            shape = tuple(int(d) for d in t.shape)
            if len(shape) > MAX_RANK or any(not 0 <= d <= U32_MAX for d in shape):
                _fail(f"tensor {t.index}: shape {shape} exceeds rank {MAX_RANK} or u32 dims")
            rank[k] = len(shape)
            dims += shape
            elem = DTYPES[DTYPE_CODES[str(t.dtype)]][1] if t.dtype is not None else None
            if elem is not None and math.prod(shape) * elem != t.nbytes:
                _fail(
                    f"tensor {t.index}: shape {shape} of {t.dtype} disagrees with its "
                    f"{t.nbytes} bytes"
                )
        if t.name is not None:
            raw = _utf8(t.name, f"tensor {t.index}'s name", MAX_NAME_LEN)
            if raw in seen_name:
                _fail(f"two tensors are named {t.name!r}")
            seen_name.add(raw)
            len_name[k] = len(raw)
            names.append(raw)
        len_data[k] = t.nbytes

    identity = range(n)
    # Each column only if needed (6.7.1, rule C4 to C9: a redundant column is refused).
    present = {
        "index": index != list(identity),
        "model_index": bool(seen_model),
        "name": bool(names),
        "dtype": any(d != NO_DTYPE for d in dtype),
        "shape": any(r != NO_SHAPE for r in rank),
        "order": perm != list(identity),
    }
    columns = sum(bit for what, bit in COLUMNS.items() if present[what])
    layout: list[tuple[bool, list[int] | bytes, str]] = [
        (present["index"], index, COLUMN_TYPES["index"]),
        (present["model_index"], model_index, COLUMN_TYPES["model_index"]),
        (present["name"], len_name, COLUMN_TYPES["len_name"]),
        (present["dtype"], dtype, COLUMN_TYPES["dtype"]),
        (present["shape"], rank, COLUMN_TYPES["rank"]),
        (present["order"], perm, COLUMN_TYPES["order"]),
        (present["shape"], dims, "<u4"),
        (present["name"], b"".join(names), ""),
    ]
    body = bytearray(schema3.TENSORS_HEAD.build({"num_tensors": n, "columns": columns}))
    body += np.asarray(len_data, COLUMN_TYPES["len_data"]).tobytes()
    for wanted, values, kind in layout:
        if wanted:
            body += bytes(align8(len(body)) - len(body))  # zero padding before each column
            body += values if isinstance(values, bytes) else np.asarray(values, kind).tobytes()
    return bytes(body)


def _place(start: int, sizes: list[int]) -> list[int]:
    """The offsets of ranges of ``sizes`` in data order placed from ``start`` (6.7.3, P2)."""
    out = []
    pos = start
    for n in sizes:
        if n >= ALIGNMENT:
            pos = -(-pos // ALIGNMENT) * ALIGNMENT
        elif n > 1:
            a = 1 << (n - 1).bit_length()
            pos = -(-pos // a) * a
        out.append(pos)
        pos += n
    return out


def plan(ckpt: Checkpoint, *, data_crc: bool = True) -> Plan:
    """Check ``ckpt`` against schema 3 and compute every offset and checksum of its file.

    ``data_crc=False`` leaves the data section's CRC to :func:`stream`, which computes it while
    the data are written."""
    tensors: list[Tensor] = sorted(ckpt.tensors, key=lambda t: t.index)
    n = len(tensors)
    perm = _data_order(tensors, ckpt.data_order)
    tensors_body = _tensors_body(tensors, perm) if n else None
    opt_parts = _optimizer_parts(ckpt, tensors) if ckpt.optimizer is not None else None
    state_ent, state_blobs = _state_entries(ckpt) if ckpt.state else (None, [])
    origin = origin_of(ckpt)
    extra = extra_sections(ckpt)

    # The ranges in data order: the tensors in ``perm``, then each slot's in the same order.
    in_order = [tensors[k] for k in perm]
    ranges: list[Buffer] = list(in_order)
    slot_sizes: list[np.ndarray] = []
    if opt_parts is not None:
        assert ckpt.optimizer is not None
        for name in opt_parts[2]:
            slot = ckpt.optimizer.slots[name]
            sizes = np.full(n, NO_STATE, np.uint64)
            for k, t in enumerate(tensors):
                b = slot.get(t.index)
                if b is not None:
                    sizes[k] = b.nbytes
            slot_sizes.append(sizes)
            ranges += [b for b in (slot.get(t.index) for t in in_order) if b is not None]

    bodies: list[tuple[int, int, bytes]] = []  # (kind, flags, body)
    if tensors_body is not None:
        bodies.append((SECTION_KINDS["tensors"], FLAG_REQUIRED, tensors_body))
    if opt_parts is not None:
        bodies.append((SECTION_KINDS["optimizer"], FLAG_REQUIRED, b""))  # placed below
    if state_ent is not None:
        bodies.append((SECTION_KINDS["state"], FLAG_REQUIRED, b""))  # placed below
    if origin is not None:
        bodies.append((SECTION_KINDS["origin"], 0, origin_body(origin)))
    bodies += [(s.kind, FLAG_REQUIRED if s.required else 0, bytes(s.data)) for s in extra]
    has_data = bool(ranges)
    num_sections = len(bodies) + has_data
    if num_sections > MAX_SECTIONS:
        _fail(f"schema 3 holds at most {MAX_SECTIONS} sections")

    # Sizes first (every size is known from counts and lengths), then offsets, then the bodies
    # that hold absolute offsets (slot names, state keys and values).
    lengths = []
    for kind, _, body in bodies:
        if kind == SECTION_KINDS["optimizer"]:
            assert opt_parts is not None
            k = len(opt_parts[1])
            body_len = (
                OPTIMIZER_HEAD_SIZE
                + SLOT_DESCRIPTOR_SIZE * k
                + SLOT_LEN_SIZE * k * n
                + sum(map(len, opt_parts[1]))
            )
        elif kind == SECTION_KINDS["state"]:
            assert state_ent is not None
            body_len = (
                SECTION_HEAD_SIZE + STATE_ENTRY_SIZE * len(state_ent) + sum(map(len, state_blobs))
            )
        else:
            body_len = len(body)
        lengths.append(body_len)
    pos = HEADER_SIZE + SECTION_ENTRY_SIZE * num_sections
    offsets = []
    for length in lengths:
        pos = align(pos)
        offsets.append(pos)
        pos += length
    finished: list[bytes] = []
    for (kind, _, body), ofs in zip(bodies, offsets):
        if kind == SECTION_KINDS["optimizer"]:
            assert opt_parts is not None
            body = _optimizer_body(opt_parts[0], opt_parts[1], slot_sizes, n, ofs)
        elif kind == SECTION_KINDS["state"]:
            assert state_ent is not None
            body = state_body(state_ent, state_blobs, ofs)
        finished.append(body)

    data_start = align(pos) if has_data else pos
    starts = _place(data_start, [b.nbytes for b in ranges])
    placed = list(zip(starts, ranges))
    data_len = starts[-1] + ranges[-1].nbytes - data_start if has_data else 0

    sections = [
        _Section(kind, flags, ofs, body, len(body), crc(body))
        for (kind, flags, _), ofs, body in zip(bodies, offsets, finished)
    ]
    pending = has_data and not data_crc
    if has_data:
        value = 0 if pending else _data_crc(data_start, placed)
        sections.append(
            _Section(SECTION_KINDS["data"], FLAG_REQUIRED, data_start, None, data_len, value)
        )
    file_size = data_start + data_len if has_data else pos
    header, table = _head(sections, file_size, VERSION)
    return Plan(header, table, sections, placed, file_size, pending, version=VERSION)


def _optimizer_body(
    code: int, raw_names: list[bytes], slot_sizes: list[np.ndarray], n: int, start: int
) -> bytes:
    """The optimizer section (6.7.2) at ``start``: slot j's entry for record t is its size or
    NO_STATE."""
    k = len(raw_names)
    desc = np.zeros(k, schema.SLOT_DESCRIPTOR_DTYPE)
    npos = start + OPTIMIZER_HEAD_SIZE + SLOT_DESCRIPTOR_SIZE * k + SLOT_LEN_SIZE * k * n
    for j, raw in enumerate(raw_names):
        desc["ofs_name"][j] = npos
        desc["len_name"][j] = len(raw)
        npos += len(raw)
    entries = b"".join(s.astype("<u8").tobytes() for s in slot_sizes)
    return (
        schema.OPTIMIZER_HEAD.build({"kind": code, "num_slots": k, "num_tensors": n})
        + desc.tobytes()
        + entries
        + b"".join(raw_names)
    )


def _data_pieces(start: int, placed: list[tuple[int, Buffer]]) -> Iterator[bytes | memoryview]:
    """The data section's bytes in order: ranges of :data:`SMALL_RANGE` bytes or more as views
    of their arrays, the rest (and the padding) gathered into pieces of about
    :data:`PIECE_BYTES`."""
    gather = bytearray()
    pos = start
    for ofs, b in placed:
        if ofs > pos:
            gather += _padding(ofs - pos)
        view = data_view(b)
        size = view.nbytes
        if size >= SMALL_RANGE:
            if gather:
                yield bytes(gather)
                gather = bytearray()
            yield view
        elif size:
            gather += view
            if len(gather) >= PIECE_BYTES:
                yield bytes(gather)
                gather = bytearray()
        pos = ofs + size
    if gather:
        yield bytes(gather)


def _data_crc(start: int, placed: list[tuple[int, Buffer]]) -> int:
    value = 0
    for piece in _data_pieces(start, placed):
        value = crc(piece, value)
    return value


def chunks(p: Plan) -> Iterator[bytes | memoryview]:
    """The file's bytes in order: header, section table, each section, data last."""
    if p.pending:
        p = finish(p, _data_crc(p.sections[-1].offset, p.data))
    yield from stream(p)


def stream(p: Plan) -> Generator[bytes | memoryview, None, list[tuple[int, bytes]]]:
    """The file's bytes in order, as :func:`chunks`, for a writer that can write at an offset:
    with a pending plan the data section's CRC is computed from the chunks as they go, and the
    generator returns ``[(0, header + section table)]`` to be written over the placeholders."""
    yield p.header
    yield p.table
    pos = HEADER_SIZE + len(p.table)
    value = 0
    for s in p.sections:
        if s.offset > pos:
            yield _padding(s.offset - pos)
        if s.body is not None:
            yield s.body
            pos = s.offset + s.length
            continue
        for piece in _data_pieces(s.offset, p.data):
            if p.pending:
                value = crc(piece, value)
            yield piece
    if not p.pending:
        return []
    done = finish(p, value)
    return [(0, done.header + done.table)]
