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
from collections.abc import Sequence

import numpy as np

from ..dtypes import DTYPE_CODES, DTYPES
from ..model import Buffer, Checkpoint, Tensor
from ..schemas import v2 as schema
from ..schemas import v3 as schema3
from .container_write import PIECE_BYTES, SMALL_RANGE, Plan, assemble, chunks, lay_out, stream
from .v2 import (
    ALIGNMENT,
    FLAG_REQUIRED,
    MAX_NAME_LEN,
    MAX_RANK,
    MAX_SECTIONS,
    MAX_TENSORS,
    NO_STATE,
    OPTIMIZER_HEAD_SIZE,
    SECTION_HEAD_SIZE,
    SLOT_DESCRIPTOR_SIZE,
    STATE_ENTRY_SIZE,
    SectionKind,
)
from .v2_write import (
    U32_MAX,
    _fail,
    _optimizer_parts,
    _state_entries,
    _utf8,
    extra_sections,
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
from .v3.data_blocks import DEFAULT_BLOCK_SIZE, HEAD_SIZE, block_shift_of, num_blocks
from .v3.data_blocks import KIND as BLOCKS_KIND

__all__ = [
    "COLUMNS",
    "NO_DTYPE",
    "NO_MODEL_INDEX",
    "NO_SHAPE",
    "PIECE_BYTES",
    "SMALL_RANGE",
    "VERSION",
    "chunks",
    "plan",
    "range_alignment",
    "stream",
]

#: The tensors section's column bits (6.7.1), in the order the columns are laid out.
COLUMNS = dict(schema3.COLUMN_BITS)





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
        bodies.append((SectionKind.TENSORS, FLAG_REQUIRED, tensors_body))
    if opt_parts is not None:
        bodies.append((SectionKind.OPTIMIZER, FLAG_REQUIRED, b""))  # placed below
    if state_ent is not None:
        bodies.append((SectionKind.STATE, FLAG_REQUIRED, b""))  # placed below
    if origin is not None:
        bodies.append((SectionKind.ORIGIN, 0, origin_body(origin)))
    bodies += [(s.kind, FLAG_REQUIRED if s.required else 0, bytes(s.data)) for s in extra]
    has_data = bool(ranges)
    # Placement is relative to the data section's start (a multiple of 64): computed once,
    # before the sections are laid out, since the data_blocks section's size depends on it.
    rel = _place(0, [b.nbytes for b in ranges])
    data_len = rel[-1] + ranges[-1].nbytes if ranges else 0
    shift = _data_blocks(ckpt, extra, data_len)
    if shift is not None:  # among the other kinds, in ascending kind order (6.4)
        at = len(bodies) - sum(1 for s in extra if s.kind > BLOCKS_KIND)
        placeholder = bytes(HEAD_SIZE + 4 * num_blocks(data_len, shift))
        bodies.insert(at, (BLOCKS_KIND, 0, placeholder))
    if len(bodies) + has_data > MAX_SECTIONS:
        _fail(f"schema 3 holds at most {MAX_SECTIONS} sections")

    # Sizes first (every size is known from counts and lengths), then offsets, then the bodies
    # that hold absolute offsets (slot names, state keys and values).
    lengths = []
    for kind, _, body in bodies:
        if kind == SectionKind.OPTIMIZER:
            assert opt_parts is not None
            k = len(opt_parts[1])
            body_len = (
                OPTIMIZER_HEAD_SIZE
                + SLOT_DESCRIPTOR_SIZE * k
                + SLOT_LEN_SIZE * k * n
                + sum(map(len, opt_parts[1]))
            )
        elif kind == SectionKind.STATE:
            assert state_ent is not None
            body_len = (
                SECTION_HEAD_SIZE + STATE_ENTRY_SIZE * len(state_ent) + sum(map(len, state_blobs))
            )
        else:
            body_len = len(body)
        lengths.append(body_len)
    offsets, data_start = lay_out(lengths, has_data)
    finished: list[tuple[int, int, bytes]] = []
    for (kind, flags, body), ofs in zip(bodies, offsets):
        if kind == SectionKind.OPTIMIZER:
            assert opt_parts is not None
            body = _optimizer_body(opt_parts[0], opt_parts[1], slot_sizes, n, ofs)
        elif kind == SectionKind.STATE:
            assert state_ent is not None
            body = state_body(state_ent, state_blobs, ofs)
        finished.append((int(kind), flags, body))

    placed = [(data_start + r, b) for r, b in zip(rel, ranges)]
    return assemble(finished, offsets, placed, data_start, VERSION, data_crc, shift)


def _data_blocks(ckpt: Checkpoint, extra: Sequence[object], data_len: int) -> int | None:
    """log2 of the data_blocks section's block size (SPEC 6.7.4), None for no section: the
    checkpoint's ``data_block_size`` (0: none; None: :data:`DEFAULT_BLOCK_SIZE`); no section
    without data bytes."""
    if any(getattr(s, "kind", None) == BLOCKS_KIND for s in extra):
        _fail(
            f"a kept section of kind {BLOCKS_KIND} would collide with schema 3's data_blocks "
            "section of that kind"
        )
    size = ckpt.data_block_size
    if size is None:
        size = DEFAULT_BLOCK_SIZE
    if size == 0 and not isinstance(size, bool):
        return None
    shift = block_shift_of(size)
    return shift if data_len else None


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
