"""Writing schema-2 checkpoints (spec/SPEC.md, section 6).

:func:`plan` checks the content, lays out every section and every data range, and computes all
CRC-32C values (one pass over the tensor data, no copy); :func:`chunks` then yields the file in
order. Nothing the plan computes depends on a byte the stream has not yet produced, so the
header and the section table come first and tensor data are streamed last.

The file is the canonical encoding of spec/SPEC.md 6.1: sections in the order tensors,
optimizer, state, origin, the kept unknown sections by kind, data; no empty tensors, state or
data section. Tensor records follow the entry index; data ranges, tensors and slot entries
together, follow the offsets they were read from (so a loaded file is written back byte for
byte and an upgraded onert-micro file keeps its data order), and ranges built in memory come
after them, tensors first, then each slot.
"""

from __future__ import annotations

import itertools
import math
import re
import struct
from typing import NoReturn

import numpy as np
from onert_checkpoint_generated.layout import V2TensorRecord

from ..dtypes import DTYPE_CODES, DTYPES
from ..errors import error_for
from ..model import OPTIMIZER_SLOTS, Buffer, Checkpoint, Section, is_schema2_family
from ..schemas import v2 as schema
from .container_write import Plan, assemble, chunks, finish, lay_out, stream
from .v2 import (
    ALIGNMENT,
    FLAG_REQUIRED,
    FOOTERLESS,
    HAS_DTYPE,
    HAS_MODEL_INDEX,
    HAS_NAME,
    HAS_SHAPE,
    MAX_KEY_LEN,
    MAX_NAME_LEN,
    MAX_RANK,
    MAX_SECTIONS,
    MAX_SLOTS,
    MAX_STATE_ENTRIES,
    MAX_TENSORS,
    MAX_VALUE_LEN,
    NO_STATE,
    OPTIMIZER_CODES,
    OPTIMIZER_HEAD_SIZE,
    ORIGIN_DIALECTS,
    ORIGIN_REVISIONS,
    ORIGIN_SIZE,
    SECTION_HEAD_SIZE,
    SECTION_KINDS,
    SLOT_DESCRIPTOR_SIZE,
    SLOT_ENTRY_SIZE,
    STATE_ENTRY_SIZE,
    TENSOR_RECORD_SIZE,
    VALUE_TYPES,
    WELL_KNOWN_KEYS,
    SectionKind,
)

__all__ = [
    "Plan",
    "chunks",
    "extra_sections",
    "finish",
    "origin_body",
    "origin_of",
    "plan",
    "state_body",
    "stream",
]

VERSION = 2
U32_MAX = 0xFFFF_FFFF
#: The largest value of each tensor-record field (its width in spec/onert_checkpoint_v2.ksy).
_MAX = {f.name: int(np.iinfo(f.format).max) for f in V2TensorRecord.FIELDS}


def _fail(message: str) -> NoReturn:
    raise error_for("not_representable", None, None, message)


def origin_of(ckpt: Checkpoint) -> dict[str, object] | None:
    """What a schema-2 (or schema-3) file keeps of ``ckpt``'s schema-1 or WOF origin (the
    origin section it was read with for schema 2 and 3)."""
    if is_schema2_family(ckpt.revision):
        return ckpt.origin
    if ckpt.revision in ("v1", "wof"):
        return {
            "revision": ckpt.revision,
            "dialect": ckpt.dialect if ckpt.revision == "v1" else None,
            "num_entries": ckpt.table_length,
            "footerless": "footerless" in ckpt.quirks,
        }
    return None


def _utf8(text: object, what: str, limit: int) -> bytes:
    if not isinstance(text, str):
        _fail(f"{what} must be a string, not {type(text).__name__}")
    try:
        raw = text.encode("utf-8")  # encoded once: a save of 10,000 names pays it 10,000 times
    except UnicodeEncodeError:
        _fail(f"{what} {text!r} is not encodable as UTF-8")
    if not 1 <= len(raw) <= limit:
        _fail(f"{what} {text!r} must have 1..{limit} UTF-8 bytes")
    return raw


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _tensor_records(ckpt: Checkpoint):
    tensors = sorted(ckpt.tensors, key=lambda t: t.index)
    n = len(tensors)
    if n > MAX_TENSORS:
        _fail(f"schema 2 holds at most {MAX_TENSORS} tensors")
    # Columns gathered as Python lists and stored once (a NumPy store per field and tensor
    # was most of a 10,000-tensor save's planning time); the checks and their order are
    # those of one tensor after the other, so the first failing tensor is reported.
    col_index = [0] * n
    col_model = [0] * n
    col_dtype = [0] * n
    col_rank = [0] * n
    col_flags = [0] * n
    col_len_name = [0] * n
    col_len_data = [0] * n
    shaped: list[int] = []
    dims: list[tuple[int, ...]] = []
    names: list[bytes] = []
    seen_index: set[int] = set()
    seen_model: set[int] = set()
    seen_name: set[bytes] = set()
    for k, t in enumerate(tensors):
        index = t.index
        if not 0 <= index <= _MAX["index"] or index in seen_index:
            _fail(f"tensor index {index} is out of 0..{_MAX['index']} or used twice")
        seen_index.add(index)
        flags = 0
        col_index[k] = index
        nbytes = t.nbytes
        model_index = t.model_index
        if model_index is not None:
            if not 0 <= model_index <= _MAX["model_index"] or model_index in seen_model:
                _fail(f"model index {model_index} is out of range or used twice")
            seen_model.add(model_index)
            flags |= HAS_MODEL_INDEX
            col_model[k] = model_index
        dtype = t.dtype
        code = None
        if dtype is not None:
            code = DTYPE_CODES.get(str(dtype))
            if code is None:
                _fail(f"tensor {index}: dtype {dtype!r} is not a circle TensorType")
            flags |= HAS_DTYPE
            col_dtype[k] = code
        if t.shape is not None:
            shape = tuple(int(d) for d in t.shape)
            if len(shape) > MAX_RANK or any(not 0 <= d <= _MAX["dims"] for d in shape):
                _fail(f"tensor {index}: shape {shape} exceeds rank {MAX_RANK} or the dims' width")
            flags |= HAS_SHAPE
            col_rank[k] = len(shape)
            shaped.append(k)
            dims.append(shape + (0,) * (MAX_RANK - len(shape)))
            elem = DTYPES[code][1] if code is not None else None
            if elem is not None and math.prod(shape) * elem != nbytes:
                _fail(
                    f"tensor {index}: shape {shape} of {dtype} disagrees with its "
                    f"{nbytes} bytes"
                )
        name = t.name
        if name is not None:
            raw = _utf8(name, f"tensor {index}'s name", MAX_NAME_LEN)
            if raw in seen_name:
                _fail(f"two tensors are named {name!r}")
            seen_name.add(raw)
            flags |= HAS_NAME
            col_len_name[k] = len(raw)
            names.append(raw)
        col_flags[k] = flags
        col_len_data[k] = nbytes
    rec = np.zeros(n, schema.TENSOR_RECORD_DTYPE)
    if n:
        rec["index"] = col_index
        rec["model_index"] = col_model
        rec["dtype"] = col_dtype
        rec["rank"] = col_rank
        rec["flags"] = col_flags
        rec["len_name"] = col_len_name
        rec["len_data"] = col_len_data
        if shaped:
            rec["dims"][shaped] = dims
    return tensors, rec, names


def _optimizer_parts(ckpt: Checkpoint, tensors) -> tuple[int, list[bytes], list[str]]:
    opt = ckpt.optimizer
    assert opt is not None
    if opt.kind in OPTIMIZER_CODES:
        code = OPTIMIZER_CODES[opt.kind]
        slot_names = list(OPTIMIZER_SLOTS[opt.kind])
        if set(opt.slots) != set(slot_names):
            _fail(f"{opt.kind} has the slots {slot_names}, not {list(opt.slots)}")
    else:
        m = re.fullmatch(r"optimizer_(\d+)", opt.kind)
        if m is None or int(m.group(1)) > U32_MAX:
            _fail(f"optimizer kind {opt.kind!r} has no schema-2 code")
        code = int(m.group(1))
        slot_names = list(opt.slots)
    if len(slot_names) > MAX_SLOTS:
        _fail(f"schema 2 holds at most {MAX_SLOTS} optimizer slots")
    raw = [_utf8(n, "slot name", MAX_NAME_LEN) for n in slot_names]
    if len(set(raw)) != len(raw):
        _fail("two optimizer slots have the same name")
    # schema 3's plan passes the indices themselves (it keeps no tensor objects)
    present = tensors if isinstance(tensors, set) else {t.index for t in tensors}
    for name in slot_names:
        orphans = sorted(set(opt.slots[name]) - present)
        if orphans:
            _fail(f"slot {name!r} has state for entries {orphans} that have no tensor")
    return code, raw, slot_names


def _state_entries(ckpt: Checkpoint) -> tuple[np.ndarray, list[bytes]]:
    if len(ckpt.state) > MAX_STATE_ENTRIES:
        _fail(f"schema 2 holds at most {MAX_STATE_ENTRIES} state entries")
    ent = np.zeros(len(ckpt.state), schema.STATE_ENTRY_DTYPE)
    blobs: list[bytes] = []
    for k, (key, value) in enumerate(ckpt.state.items()):
        raw_key = _utf8(key, "state key", MAX_KEY_LEN)
        payload: bytes | None = None
        if isinstance(value, (bool, np.bool_)):
            _fail(f"state {key!r}: booleans have no schema-2 type (store 0 or 1)")
        if isinstance(value, (int, np.integer)):
            v = int(value)
            if not -(1 << 63) <= v < 1 << 63:
                _fail(f"state {key!r}: {v} does not fit in int64")
            vt, bits = "int", v & 0xFFFF_FFFF_FFFF_FFFF
        elif isinstance(value, (float, np.floating)):
            vt, bits = "float", int.from_bytes(struct.pack("<d", float(value)), "little")
        elif isinstance(value, str):
            vt, bits = "string", 0
            if not _encodable(value):
                _fail(f"state {key!r}: the string is not encodable as UTF-8")
            payload = value.encode("utf-8")
        elif isinstance(value, (bytes, bytearray, memoryview)):
            vt, bits, payload = "bytes", 0, bytes(value)
        else:
            _fail(f"state {key!r}: {type(value).__name__} is not int, float, str or bytes")
        want = WELL_KNOWN_KEYS.get(key)
        if want is not None and (want != vt or (vt == "int" and int(value) < 0)):
            _fail(
                f"state {key!r} is a well-known key of type {want}"
                + (" (non-negative)" if want == "int" else "")
            )
        if payload is not None and len(payload) > MAX_VALUE_LEN:
            _fail(f"state {key!r}: values have at most {MAX_VALUE_LEN} bytes")
        ent["len_key"][k] = len(raw_key)
        ent["value_type"][k] = VALUE_TYPES[vt]
        ent["value"][k] = bits
        ent["len_value"][k] = 0 if payload is None else len(payload)
        blobs.append(raw_key)
        if payload is not None:
            blobs.append(payload)
    return ent, blobs


def _data_order(ranges: list[tuple[str, int, Buffer]]) -> list[tuple[str, int, Buffer]]:
    """The data ranges (given in range order) in the order the writer places them.

    Ranges read from a file keep their (offset, range order) order, the order rule D2 sorts
    them in, so a loaded file is written back as it was; ranges built in memory follow, in range
    order. A 0-byte range lands at the offset of the range placed after it, and D2 sorts equal
    offsets by range order, so a 0-byte range may stay before a range only if it precedes it in
    range order; the others move to the end of the section, where every range is empty.
    """
    if all(r[2].offset is None for r in ranges):
        # Built in memory: range order, in which every 0-byte range precedes the next range.
        return ranges
    ordered = sorted(
        enumerate(ranges), key=lambda p: (p[1][2].offset is None, p[1][2].offset or 0, p[0])
    )
    out: list[tuple[int, tuple[str, int, Buffer]]] = []
    moved: list[tuple[int, tuple[str, int, Buffer]]] = []
    pending: list[tuple[int, tuple[str, int, Buffer]]] = []
    for item in ordered:
        if item[1][2].nbytes == 0:
            pending.append(item)
            continue
        if pending:
            out += sorted((e for e in pending if e[0] < item[0]), key=lambda e: e[0])
            moved += [e for e in pending if e[0] > item[0]]
            pending = []
        out.append(item)
    out += sorted(pending + moved, key=lambda e: e[0])
    return [r for _, r in out]


def plan(ckpt: Checkpoint, *, data_crc: bool = True) -> Plan:
    """Check ``ckpt`` against schema 2 and compute every offset and checksum of its file.

    ``data_crc=False`` leaves the data section's CRC to :func:`stream`, which computes it while
    the data are written (one pass over the tensor bytes instead of two)."""
    tensors, rec, names = _tensor_records(ckpt)
    n = len(tensors)
    opt_parts = _optimizer_parts(ckpt, tensors) if ckpt.optimizer is not None else None
    state_ent, state_blobs = _state_entries(ckpt) if ckpt.state else (None, [])
    origin = origin_of(ckpt)
    extra = extra_sections(ckpt)

    # Data ranges: those with a known offset in (offset, range order) order, as rule D2 sorts
    # them, so that a loaded file keeps its layout; then the others in range order (tensors in
    # record order, then each slot's entries in record order).
    rank = {t.index: k for k, t in enumerate(tensors)}
    ranges: list[tuple[str, int, Buffer]] = [("t", 0, t) for t in tensors]
    if opt_parts is not None:
        assert ckpt.optimizer is not None
        for j, name in enumerate(opt_parts[2]):
            slot = ckpt.optimizer.slots[name]
            ranges += [("s", j, slot[i]) for i in sorted(slot, key=rank.__getitem__)]
    ranges = _data_order(ranges)

    # Section sizes, known before any offset: (kind, flags, length).
    heads: list[tuple[int, int, int]] = []
    if n:
        length = SECTION_HEAD_SIZE + TENSOR_RECORD_SIZE * n + sum(map(len, names))
        heads.append((SectionKind.TENSORS, FLAG_REQUIRED, length))
    if opt_parts is not None:
        k = len(opt_parts[1])
        length = (
            OPTIMIZER_HEAD_SIZE
            + SLOT_DESCRIPTOR_SIZE * k
            + SLOT_ENTRY_SIZE * k * n
            + sum(map(len, opt_parts[1]))
        )
        heads.append((SectionKind.OPTIMIZER, FLAG_REQUIRED, length))
    if state_ent is not None:
        length = SECTION_HEAD_SIZE + STATE_ENTRY_SIZE * len(state_ent) + sum(map(len, state_blobs))
        heads.append((SectionKind.STATE, FLAG_REQUIRED, length))
    if origin is not None:
        heads.append((SectionKind.ORIGIN, 0, ORIGIN_SIZE))
    heads += [(s.kind, FLAG_REQUIRED if s.required else 0, len(s.data)) for s in extra]
    lengths = [length for _, _, length in heads]
    has_data = bool(ranges)
    if len(lengths) + has_data > MAX_SECTIONS:
        _fail(f"schema 2 holds at most {MAX_SECTIONS} sections")
    offsets, data_start = lay_out(lengths, has_data)
    # Every range starts aligned, so the next one starts align(size) later: the offsets are a
    # running sum (vectorised: 30,000 ranges cost array operations, not a loop of align calls).
    count = len(ranges)
    buffers = [b for _, _, b in ranges]
    sizes = np.fromiter((b.nbytes for b in buffers), np.int64, count)
    starts = np.empty(count, np.int64)
    if count:
        starts[0] = data_start
        np.cumsum(-(-sizes[:-1] // ALIGNMENT) * ALIGNMENT, out=starts[1:])
        starts[1:] += data_start
    start_list = starts.tolist()
    placed: list[tuple[int, Buffer]] = list(zip(start_list, buffers))
    tensor_ofs: dict[int, int] = {}
    slot_ofs: dict[tuple[int, int], int] = {}
    for (what, j, entry), ofs in zip(ranges, start_list):
        if what == "t":
            tensor_ofs[entry.index] = ofs
        else:
            slot_ofs[(j, entry.index)] = ofs

    # Section bodies (metadata only; small).
    rec["ofs_data"] = [tensor_ofs[t.index] for t in tensors]
    body_bytes: list[bytes] = []
    si = 0
    if n:
        tpos = offsets[0] + SECTION_HEAD_SIZE + TENSOR_RECORD_SIZE * n
        named = np.flatnonzero(rec["flags"] & HAS_NAME)
        for k, raw in zip(named.tolist(), names):
            rec["ofs_name"][k] = tpos
            tpos += len(raw)
        body_bytes.append(
            schema.TENSORS_HEAD.build({"num_tensors": n}) + rec.tobytes() + b"".join(names)
        )
        si = 1
    if opt_parts is not None:
        code, raw_names, slot_names = opt_parts
        k = len(raw_names)
        start = offsets[si]
        desc = np.zeros(k, schema.SLOT_DESCRIPTOR_DTYPE)
        npos = start + OPTIMIZER_HEAD_SIZE + SLOT_DESCRIPTOR_SIZE * k + SLOT_ENTRY_SIZE * k * n
        for j, raw in enumerate(raw_names):
            desc["ofs_name"][j] = npos
            desc["len_name"][j] = len(raw)
            npos += len(raw)
        ent = np.zeros((k, n), schema.SLOT_ENTRY_DTYPE)
        ent["ofs_data"] = NO_STATE
        assert ckpt.optimizer is not None
        for j, name in enumerate(slot_names):
            entries = ckpt.optimizer.slots[name]
            if not entries:
                continue
            cols = np.fromiter((rank[i] for i in entries), np.int64, len(entries))
            ent["ofs_data"][j, cols] = [slot_ofs[(j, i)] for i in entries]
            ent["len_data"][j, cols] = [b.nbytes for b in entries.values()]
        body_bytes.append(
            schema.OPTIMIZER_HEAD.build({"kind": code, "num_slots": k, "num_tensors": n})
            + desc.tobytes()
            + ent.tobytes()
            + b"".join(raw_names)
        )
        si += 1
    if state_ent is not None:
        body_bytes.append(state_body(state_ent, state_blobs, offsets[si]))
        si += 1
    if origin is not None:
        body_bytes.append(origin_body(origin))
    body_bytes += [bytes(s.data) for s in extra]

    bodies = [(int(kind), flags, body) for (kind, flags, _), body in zip(heads, body_bytes)]
    return assemble(bodies, offsets, placed, data_start, VERSION, data_crc)


def state_body(state_ent: np.ndarray, state_blobs: list[bytes], start: int) -> bytes:
    """The state section (6.4.5) of ``_state_entries``' result, placed at ``start``."""
    spos = start + SECTION_HEAD_SIZE + STATE_ENTRY_SIZE * len(state_ent)
    for k in range(len(state_ent)):
        state_ent["ofs_key"][k] = spos
        spos += int(state_ent["len_key"][k])
        if state_ent["value_type"][k] >= VALUE_TYPES["string"]:
            state_ent["value"][k] = spos
            spos += int(state_ent["len_value"][k])
    return (
        schema.STATE_HEAD.build({"num_entries": len(state_ent)})
        + state_ent.tobytes()
        + b"".join(state_blobs)
    )


def extra_sections(ckpt: Checkpoint) -> list[Section]:
    """The kept sections of kinds the specification does not define, by kind (6.4's order)."""
    extra = sorted(ckpt.sections, key=lambda s: s.kind)
    for s in extra:
        if s.kind in SECTION_KINDS.values() or not 0 <= s.kind <= U32_MAX:
            _fail(f"section kind {s.kind} is reserved by the specification or out of range")
    for a, b in itertools.pairwise(extra):
        if a.kind == b.kind:
            _fail(f"two sections of kind {a.kind}: schema 2 holds at most one of each kind")
    return extra


def origin_body(origin: dict[str, object]) -> bytes:
    """The origin section (6.4.6) recording ``origin``."""
    if (
        origin.get("revision") not in ORIGIN_REVISIONS
        or origin.get("dialect") not in ORIGIN_DIALECTS
    ):
        _fail(f"origin {origin!r} names an unknown revision or dialect")
    origin_n = origin.get("num_entries")
    if (
        isinstance(origin_n, bool)
        or not isinstance(origin_n, (int, np.integer))
        or not 0 <= int(origin_n) <= 0xFFFF_FFFF_FFFF_FFFF
    ):
        _fail(f"origin num_entries {origin_n!r} is not an integer in 0..2**64-1")
    return schema.ORIGIN.build(
        {
            "revision": ORIGIN_REVISIONS[str(origin["revision"])],
            "dialect": ORIGIN_DIALECTS[origin["dialect"]],
            "flags": FOOTERLESS if origin.get("footerless") else 0,
            "num_entries": int(origin["num_entries"]),  # type: ignore[call-overload]
        }
    )
