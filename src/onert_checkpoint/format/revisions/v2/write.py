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
from array import array
from collections.abc import Callable
from typing import NoReturn

import numpy as np
from onert_checkpoint_generated import structs
from onert_checkpoint_generated.layout import (
    OptimizerHead,
    SectionEntry,
    SlotDescriptor,
    StateEntry,
    V2SlotEntry,
    V2TensorRecord,
)

from ...container.constants import (
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
    MAX_SLOTS,
    MAX_STATE_ENTRIES,
    MAX_TENSORS,
    MAX_VALUE_LEN,
    NO_STATE,
    OPTIMIZER_CODES,
    OPTIMIZER_HEAD_SIZE,
    ORIGIN_DIALECTS,
    ORIGIN_REVISIONS,
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
from ...container.write import Part, Plan, chunks, finish, stream
from ...container.write import plan as container_plan
from ...dtypes import DTYPE_CODES, DTYPES
from ...errors import error_for
from ...model import OPTIMIZER_SLOTS, Buffer, Checkpoint, Section
from ..registry import find

__all__ = ["Plan", "chunks", "common_parts", "extra_sections", "finish", "optimizer_part",
           "origin_body", "origin_of", "plan", "state_body", "stream"]

VERSION = 2
U32_MAX = 0xFFFF_FFFF
#: The largest value of each tensor-record field (its width in spec/onert_checkpoint_v2.ksy).
_MAX = {f.name: int(np.iinfo(f.format).max) for f in V2TensorRecord.FIELDS}
#: The largest optimizer and section kind (their fields' widths in onert_checkpoint_common.ksy).
_OPTIMIZER_KIND_MAX = int(np.iinfo(OptimizerHead.kind.format).max)
_SECTION_KIND_MAX = int(np.iinfo(SectionEntry.kind.format).max)


def _fail(message: str) -> NoReturn:
    raise error_for("not_representable", None, None, message)


def origin_of(ckpt: Checkpoint) -> dict[str, object] | None:
    """What a schema-2 (or schema-3) file keeps of ``ckpt``'s schema-1 or WOF origin (the
    origin section it was read with for schema 2 and 3)."""
    rev = find(ckpt.revision)
    if rev is None or rev.holds_everything:
        return ckpt.layout.origin if rev is not None else None
    return {"revision": rev.name, "dialect": ckpt.dialect if rev.dialects else None,
            "num_entries": ckpt.table_length, "footerless": "footerless" in ckpt.layout.quirks}


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


def _tensor_records(
    ckpt: Checkpoint,
) -> tuple[np.ndarray, list[bytes], np.ndarray, dict[int, Buffer]]:
    """The tensor records (record order: ascending index), their names (the named records'),
    the offsets the tensors were read from (-1: built in memory) and, by record, the tensors
    with data bytes: one pass that makes the tensors a chunk at a time and keeps no other (a
    file of many empty tensors costs its records, not an object per tensor)."""
    n = len(ckpt.tensors)
    if n > MAX_TENSORS:
        _fail(f"schema 2 holds at most {MAX_TENSORS} tensors")
    # Columns gathered as compact arrays and stored once (a NumPy store per field and tensor
    # was most of a 10,000-tensor save's planning time).
    col_index, col_model, col_dtype, col_rank = array("q"), array("q"), array("q"), array("q")
    col_flags, col_len_name, col_len_data, col_read = (
        array("q"), array("q"), array("q"), array("q")
    )
    shaped = array("q")
    dims: list[tuple[int, ...]] = []
    names: list[bytes] = []
    named = array("q")
    seen_name: set[bytes] = set()
    held: dict[int, Buffer] = {}
    for k, t in enumerate(ckpt.tensors):
        index = t.index
        if not 0 <= index <= _MAX["index"]:
            _fail(f"tensor index {index} is out of 0..{_MAX['index']} or used twice")
        flags = 0
        col_index.append(index)
        nbytes = t.nbytes
        model_index = t.model_index
        if model_index is not None:
            if not 0 <= model_index <= _MAX["model_index"]:
                _fail(f"model index {model_index} is out of range or used twice")
            flags |= HAS_MODEL_INDEX
        col_model.append(0 if model_index is None else model_index)
        dtype = t.dtype
        code = None
        if dtype is not None:
            code = DTYPE_CODES.get(str(dtype))
            if code is None:
                _fail(f"tensor {index}: dtype {dtype!r} is not a circle TensorType")
            flags |= HAS_DTYPE
        col_dtype.append(code or 0)
        rank = 0
        if t.shape is not None:
            shape = tuple(int(d) for d in t.shape)
            if len(shape) > MAX_RANK or any(not 0 <= d <= _MAX["dims"] for d in shape):
                _fail(f"tensor {index}: shape {shape} exceeds rank {MAX_RANK} or the dims' width")
            flags |= HAS_SHAPE
            rank = len(shape)
            shaped.append(k)
            dims.append(shape + (0,) * (MAX_RANK - len(shape)))
            elem = DTYPES[code][1] if code is not None else None
            if elem is not None and math.prod(shape) * elem != nbytes:
                _fail(f"tensor {index}: shape {shape} of {dtype} disagrees with its "
                      f"{nbytes} bytes")
        col_rank.append(rank)
        name = t.name
        length = 0
        if name is not None:
            raw = _utf8(name, f"tensor {index}'s name", MAX_NAME_LEN)
            if raw in seen_name:
                _fail(f"two tensors are named {name!r}")
            seen_name.add(raw)
            flags |= HAS_NAME
            length = len(raw)
            names.append(raw)
            named.append(k)
        col_len_name.append(length)
        col_flags.append(flags)
        col_len_data.append(nbytes)
        col_read.append(-1 if t.offset is None else t.offset)
        if nbytes:
            held[k] = t
    del seen_name
    rec = np.zeros(n, V2TensorRecord.DTYPE)
    read = _ints(col_read)
    if n:
        rec["index"] = _ints(col_index)
        rec["model_index"] = _ints(col_model)
        rec["dtype"] = _ints(col_dtype)
        rec["rank"] = _ints(col_rank)
        rec["flags"] = _ints(col_flags)
        rec["len_name"] = _ints(col_len_name)
        rec["len_data"] = _ints(col_len_data)
        if dims:
            rec["dims"][_ints(shaped)] = dims
        order = np.argsort(rec["index"], kind="stable")
        if not (order == np.arange(n)).all():  # in memory, any order: records by index
            where = np.empty(n, np.int64)
            where[order] = np.arange(n)
            rec, read = rec[order], read[order]
            names = [names[j] for j in np.argsort(where[_ints(named)], kind="stable").tolist()]
            held = {int(where[k]): t for k, t in held.items()}
        by_index = rec["index"].astype(np.int64)
        if n > 1 and not (np.diff(by_index) > 0).all():
            dup = int(by_index[np.flatnonzero(np.diff(by_index) == 0)[0]])
            _fail(f"tensor index {dup} is out of 0..{_MAX['index']} or used twice")
        has_model = (rec["flags"] & HAS_MODEL_INDEX) != 0
        models = np.sort(rec["model_index"][has_model].astype(np.int64))
        if models.size > 1 and not (np.diff(models) > 0).all():
            dup = int(models[np.flatnonzero(np.diff(models) == 0)[0]])
            _fail(f"model index {dup} is out of range or used twice")
    return rec, names, read, held


def _ints(a: array[int]) -> np.ndarray:
    return np.frombuffer(a, np.int64) if len(a) else np.zeros(0, np.int64)


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
        if m is None or int(m.group(1)) > _OPTIMIZER_KIND_MAX:
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
    ent = np.zeros(len(ckpt.state), StateEntry.DTYPE)
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
            _fail(f"state {key!r} is a well-known key of type {want}"
                  + (" (non-negative)" if want == "int" else ""))
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


def _data_order(read: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """The data ranges (given in range order: their offsets ``read``, -1 for one built in
    memory, and ``sizes``) in the order the writer places them, as range numbers.

    Ranges read from a file keep their (offset, range order) order, the order rule D2 sorts
    them in, so a loaded file is written back as it was; ranges built in memory follow, in range
    order. A 0-byte range lands at the offset of the range placed after it, and D2 sorts equal
    offsets by range order, so a 0-byte range may stay before a range only if it precedes it in
    range order; the others move to the end of the section, where every range is empty.
    """
    count = read.size
    number = np.arange(count)
    if not (read >= 0).any():
        # Built in memory: range order, in which every 0-byte range precedes the next range.
        return number
    built = read < 0
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


def plan(ckpt: Checkpoint, *, data_crc: bool = True, version: int = VERSION) -> Plan:
    """Check ``ckpt`` against schema 2 and compute every offset and checksum of its file.

    ``data_crc=False`` leaves the data section's CRC to :func:`stream`, which computes it while
    the data are written (one pass over the tensor bytes instead of two)."""
    rec, names, read, held = _tensor_records(ckpt)
    n = len(rec)
    record_index = rec["index"].astype(np.int64)
    opt_parts = (
        _optimizer_parts(ckpt, set(record_index.tolist())) if ckpt.optimizer is not None else None
    )
    common = common_parts(ckpt)

    # Data ranges as columns, in range order (tensors in record order, then each slot's entries
    # in record order): the offset each was read from (-1: none), its size and, for a slot's,
    # the record it belongs to; the buffers kept are those with bytes (by range number).
    reads = [read]
    sizes_of = [rec["len_data"].astype(np.int64)]
    slot_rows: list[np.ndarray] = []
    if opt_parts is not None:
        assert ckpt.optimizer is not None
        for name in opt_parts[2]:
            keys, lens, offs = array("q"), array("q"), array("q")
            kept: list[Buffer | None] = []
            for key, b in ckpt.optimizer.slots[name].items():
                keys.append(key)
                lens.append(b.nbytes)
                offs.append(-1 if b.offset is None else b.offset)
                kept.append(b if b.nbytes else None)
            rows = np.searchsorted(record_index, _ints(keys))
            by_row = np.argsort(rows, kind="stable")
            base = sum(map(len, reads))
            for j, m in enumerate(by_row.tolist()):
                b = kept[m]
                if b is not None:
                    held[base + j] = b
            del kept
            slot_rows.append(rows[by_row])
            reads.append(_ints(offs)[by_row])
            sizes_of.append(_ints(lens)[by_row])
    read_all = np.concatenate(reads) if reads else np.zeros(0, np.int64)
    size_all = np.concatenate(sizes_of) if sizes_of else np.zeros(0, np.int64)
    # Those with a known offset in (offset, range order) order, as rule D2 sorts them, so that
    # a loaded file keeps its layout; then the others in range order.
    ranges = _data_order(read_all, size_all)
    # Every range starts aligned, so the next one starts align(size) later: the offsets (from
    # the data section's start, a multiple of 64) are a running sum (vectorised: 30,000 ranges
    # cost array operations, not a loop of align calls).
    count = ranges.size
    sizes = size_all[ranges]
    starts = np.zeros(count, np.int64)
    if count:
        np.cumsum(-(-sizes[:-1] // ALIGNMENT) * ALIGNMENT, out=starts[1:])
    rel_of = np.empty(count, np.int64)  # by range number
    rel_of[ranges] = starts
    # only the ranges with bytes are listed (an empty one writes nothing)
    full = sizes > 0
    placed: list[tuple[int, Buffer]] = [
        (ofs, held[r]) for ofs, r in zip(starts[full].tolist(), ranges[full].tolist())
    ]
    if count and not full[-1]:  # the section ends where the last range (empty) is placed
        placed.append((int(starts[-1]), Buffer(0, np.zeros(0, np.uint8))))

    parts = common[:]
    if n:

        def tensors_body(start: int, data_start: int) -> bytes:
            rec["ofs_data"] = data_start + rel_of[:n]
            tpos = start + SECTION_HEAD_SIZE + TENSOR_RECORD_SIZE * n
            named = np.flatnonzero(rec["flags"] & HAS_NAME)
            for k, raw in zip(named.tolist(), names):
                rec["ofs_name"][k] = tpos
                tpos += len(raw)
            # one copy of the records (join takes their buffer), not three
            head = structs.V2TensorsHead.build({"num_tensors": n})
            return b"".join([head, rec.data.cast("B"), *names])

        length = SECTION_HEAD_SIZE + TENSOR_RECORD_SIZE * n + sum(map(len, names))
        parts.append(Part(SectionKind.TENSORS, FLAG_REQUIRED, length, tensors_body))
    if opt_parts is not None:
        code, raw_names, _ = opt_parts

        def slot_entries(data_start: int) -> bytes:
            ent = np.zeros((len(raw_names), n), V2SlotEntry.DTYPE)
            ent["ofs_data"] = NO_STATE
            base = n
            for j, rows in enumerate(slot_rows):
                ent["ofs_data"][j, rows] = data_start + rel_of[base : base + rows.size]
                ent["len_data"][j, rows] = size_all[base : base + rows.size]
                base += rows.size
            return ent.tobytes()

        parts.append(optimizer_part(code, raw_names, n, SLOT_ENTRY_SIZE, slot_entries))
    return container_plan(parts, placed, version, data_crc, title="schema 2", has_data=count > 0)


def optimizer_part(
    code: int, raw_names: list[bytes], n: int, entry_size: int, entries: Callable[[int], bytes]
) -> Part:
    """The optimizer section (6.7) of ``n`` tensors: its head, one descriptor per slot (named
    ``raw_names``), the slot entries (``entry_size`` bytes each, made from the data section's
    offset), then the slot names."""
    k = len(raw_names)
    table = SLOT_DESCRIPTOR_SIZE * k + entry_size * k * n

    def body(start: int, data_start: int) -> bytes:
        desc = np.zeros(k, SlotDescriptor.DTYPE)
        npos = start + OPTIMIZER_HEAD_SIZE + table
        for j, raw in enumerate(raw_names):
            desc["ofs_name"][j] = npos
            desc["len_name"][j] = len(raw)
            npos += len(raw)
        head = structs.OptimizerHead.build({"kind": code, "num_slots": k, "num_tensors": n})
        return head + desc.tobytes() + entries(data_start) + b"".join(raw_names)

    length = OPTIMIZER_HEAD_SIZE + table + sum(map(len, raw_names))
    return Part(SectionKind.OPTIMIZER, FLAG_REQUIRED, length, body)


def common_parts(ckpt: Checkpoint) -> list[Part]:
    """The sections schemas 2 and 3 write alike: state (6.8), origin (6.9) and the kept
    sections of other kinds (checked now, in this order)."""
    state_ent, state_blobs = _state_entries(ckpt) if ckpt.state else (None, [])
    origin = origin_of(ckpt)
    parts = [Part(s.kind, FLAG_REQUIRED if s.required else 0, len(s.data), bytes(s.data))
             for s in extra_sections(ckpt)]
    if state_ent is not None:
        length = SECTION_HEAD_SIZE + STATE_ENTRY_SIZE * len(state_ent) + sum(map(len, state_blobs))
        parts.append(
            Part(SectionKind.STATE, FLAG_REQUIRED, length,
                 lambda start, _: state_body(state_ent, state_blobs, start))
        )
    if origin is not None:
        body = origin_body(origin)
        parts.append(Part(SectionKind.ORIGIN, 0, len(body), body))
    return parts


def state_body(state_ent: np.ndarray, state_blobs: list[bytes], start: int) -> bytes:
    """The state section (6.8) of ``_state_entries``' result, placed at ``start``."""
    spos = start + SECTION_HEAD_SIZE + STATE_ENTRY_SIZE * len(state_ent)
    for k in range(len(state_ent)):
        state_ent["ofs_key"][k] = spos
        spos += int(state_ent["len_key"][k])
        if state_ent["value_type"][k] >= VALUE_TYPES["string"]:
            state_ent["value"][k] = spos
            spos += int(state_ent["len_value"][k])
    return (structs.StateHead.build({"num_entries": len(state_ent)}) + state_ent.tobytes()
            + b"".join(state_blobs))


def extra_sections(ckpt: Checkpoint) -> list[Section]:
    """The kept sections of kinds the specification does not define, by kind (6.4's order)."""
    extra = sorted(ckpt.layout.sections, key=lambda s: s.kind)
    for s in extra:
        if s.kind in SECTION_KINDS.values() or not 0 <= s.kind <= _SECTION_KIND_MAX:
            _fail(f"section kind {s.kind} is reserved by the specification or out of range")
    for a, b in itertools.pairwise(extra):
        if a.kind == b.kind:
            _fail(f"two sections of kind {a.kind}: schema 2 holds at most one of each kind")
    return extra


def origin_body(origin: dict[str, object]) -> bytes:
    """The origin section (6.9) recording ``origin``."""
    if (origin.get("revision") not in ORIGIN_REVISIONS
        or origin.get("dialect") not in ORIGIN_DIALECTS):
        _fail(f"origin {origin!r} names an unknown revision or dialect")
    origin_n = origin.get("num_entries")
    if (isinstance(origin_n, bool) or not isinstance(origin_n, (int, np.integer))
        or not 0 <= int(origin_n) <= 0xFFFF_FFFF_FFFF_FFFF):
        _fail(f"origin num_entries {origin_n!r} is not an integer in 0..2**64-1")
    return structs.Origin.build(
        {
            "revision": ORIGIN_REVISIONS[str(origin["revision"])],
            "dialect": ORIGIN_DIALECTS[origin["dialect"]],
            "flags": FOOTERLESS if origin.get("footerless") else 0,
            "num_entries": int(origin["num_entries"]),  # type: ignore[call-overload]
        }
    )
