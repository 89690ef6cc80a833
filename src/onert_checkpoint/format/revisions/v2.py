"""Schema 2 checkpoints: constants, reading and validation (spec/SPEC.md, section 6).

The header is read by the parser generated from spec/onert_checkpoint_v2.ksy once the raw checks
that must precede it (checksum, reserved bytes) have passed; the section table and every record
table are NumPy structured views (schemas/v2.py), checked one rule at a time over all records, so
the first failing rule is reported for the first record that breaks it, in the spec's order.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

import crc32c
import numpy as np
from kaitaistruct import KaitaiStream
from onert_checkpoint_generated.onert_checkpoint_v2 import OnertCheckpointV2

from ..dtypes import DTYPES
from ..errors import error_for
from ..model import Buffer, Checkpoint, Optimizer, Section, Tensor, TrainingState
from ..schemas.v2 import (
    SECTION_DTYPE,
    SLOT_DESCRIPTOR_DTYPE,
    SLOT_ENTRY_DTYPE,
    STATE_ENTRY_DTYPE,
    TENSOR_RECORD_DTYPE,
)
from ..source import BufferReader
from ..typed import typed_view
from .blocks import paused_collector

__all__ = [
    "ALIGNMENT",
    "HEADER_SIZE",
    "MAX_KEY_LEN",
    "MAX_NAME_LEN",
    "MAX_RANK",
    "MAX_SECTIONS",
    "MAX_SLOTS",
    "MAX_STATE_ENTRIES",
    "MAX_TENSORS",
    "MAX_VALUE_LEN",
    "NO_STATE",
    "OPTIMIZER_CODES",
    "SECTION_KINDS",
    "VALUE_TYPES",
    "WELL_KNOWN_KEYS",
    "align",
    "crc",
    "read",
]

# Sizes and limits (spec/SPEC.md, 6.2) ---------------------------------------------------------
HEADER_SIZE = 64
SECTION_ENTRY_SIZE = 32
TENSOR_RECORD_SIZE = 72
SLOT_DESCRIPTOR_SIZE = 16
SLOT_ENTRY_SIZE = 16
STATE_ENTRY_SIZE = 32
ORIGIN_SIZE = 24
SECTION_HEAD_SIZE = 8  # tensors and state sections
OPTIMIZER_HEAD_SIZE = 16

ALIGNMENT = 64
MAX_SECTIONS = 64
MAX_TENSORS = 1 << 24
MAX_RANK = 8
MAX_NAME_LEN = 1024
MAX_SLOTS = 16
MAX_STATE_ENTRIES = 1024
MAX_KEY_LEN = 255
MAX_VALUE_LEN = 1 << 20
#: ``ofs_data`` of a slot entry whose tensor has no state in that slot.
NO_STATE = 0xFFFF_FFFF_FFFF_FFFF

# Codes -------------------------------------------------------------------------------------
SECTION_KINDS = {"tensors": 1, "optimizer": 2, "state": 3, "data": 4, "origin": 5}
FLAG_REQUIRED = 1
#: The REQUIRED flag each kind defined by the specification must have (rule T4h).
KIND_FLAGS = {1: FLAG_REQUIRED, 2: FLAG_REQUIRED, 3: FLAG_REQUIRED, 4: FLAG_REQUIRED, 5: 0}
HAS_DTYPE, HAS_SHAPE, HAS_NAME, HAS_MODEL_INDEX = 1, 2, 4, 8
OPTIMIZER_CODES = {"sgd": 0, "sgd_momentum": 1, "adam": 2}
VALUE_TYPES = {"int": 0, "float": 1, "string": 2, "bytes": 3}
ORIGIN_REVISIONS = {"v1": 1, "wof": 2}
ORIGIN_DIALECTS = {None: 0, "onert": 1, "onert-micro": 2}
FOOTERLESS = 1


#: Well-known state keys and their value types; int keys are non-negative.
WELL_KNOWN_KEYS = {
    "step": "int",
    "epoch": "int",
    "iteration": "int",
    "batch_size": "int",
    "learning_rate": "float",
    "best_metric": "float",
    "loss_type": "string",
    "log_dir": "string",
}

_KIND_NAMES = {v: k for k, v in SECTION_KINDS.items()}
_OPTIMIZER_NAMES = {v: k for k, v in OPTIMIZER_CODES.items()}
_ORIGIN_REVISION_NAMES = {v: k for k, v in ORIGIN_REVISIONS.items()}
_ORIGIN_DIALECT_NAMES = {v: k for k, v in ORIGIN_DIALECTS.items()}


def align(n: int) -> int:
    """``n`` rounded up to a multiple of :data:`ALIGNMENT`."""
    return -(-n // ALIGNMENT) * ALIGNMENT


def crc(data, value: int = 0) -> int:
    """CRC-32C (Castagnoli) of ``data``, continuing from ``value``."""
    return crc32c.crc32c(data, value=value)


def header_crc(header) -> int:
    """The header checksum: CRC-32C of the 64 header bytes with bytes 4..7 taken as zero."""
    return crc(header[8:HEADER_SIZE], crc(b"\0\0\0\0", crc(header[0:4])))


def optimizer_name(code: int) -> str:
    return _OPTIMIZER_NAMES.get(code, f"optimizer_{code}")


def _fail(code: str, field: str | None, offset: int | None, message: str):
    raise error_for(code, field, offset, message)


def _first(mask: np.ndarray) -> int | None:
    hit = np.flatnonzero(mask)
    return int(hit[0]) if hit.size else None


def _check_padding(view: memoryview, start: int, end: int) -> None:
    if end > start:
        pad = np.frombuffer(view, dtype=np.uint8, count=end - start, offset=start)
        nz = _first(pad != 0)
        if nz is not None:
            _fail(
                "nonzero_padding",
                "padding",
                start + nz,
                f"alignment padding byte at {start + nz} is {int(pad[nz])}, not 0",
            )


def _check_pool(
    starts: np.ndarray,
    lengths: np.ndarray,
    fields: list[str],
    field_offsets: np.ndarray,
    pool_start: int,
    pool_end: int,
    what: str,
) -> None:
    """Names, keys and values: stored back to back from ``pool_start`` in record order, and
    exactly filling the section up to ``pool_end``."""
    expected = (
        pool_start
        + np.concatenate(([0], np.cumsum(lengths, dtype=np.uint64)[:-1])).astype(np.uint64)
        if lengths.size
        else np.zeros(0, np.uint64)
    )
    for i in range(starts.size):
        s, n, e = int(starts[i]), int(lengths[i]), int(expected[i])
        if s != e:
            _fail(
                "overlap" if s < e else "gap",
                fields[i],
                int(field_offsets[i]),
                f"{what} {fields[i]} is at {s}; it must follow the previous one at {e}",
            )
        if s + n > pool_end:
            _fail(
                "offset_out_of_bounds",
                fields[i],
                int(field_offsets[i]),
                f"{what} {fields[i]} ends at {s + n}, past its section's end at {pool_end}",
            )
    end = pool_start + int(lengths.sum(dtype=np.uint64)) if lengths.size else pool_start
    if end != pool_end:
        _fail("gap", what, end, f"bytes {end}..{pool_end} of the section belong to nothing")


def _decode(view: memoryview, start: int, length: int, field: str, at: int) -> str:
    try:
        return bytes(view[start : start + length]).decode("utf-8")
    except UnicodeDecodeError:
        _fail("bad_utf8", field, at, f"{field} is not valid UTF-8")
        raise  # unreachable


def section_order_key(kind: int) -> tuple[int, int]:
    """Sections are in ascending order of this key (rule T4i): tensors, optimizer, state,
    origin, other kinds by kind, data last."""
    known = {1: 1, 2: 2, 3: 3, 5: 4, 4: 6}
    return (known[kind], 0) if kind in known else (5, kind)


@dataclass(frozen=True)
class SectionInfo:
    index: int
    kind: int
    flags: int
    start: int
    length: int
    entry_offset: int

    @property
    def end(self) -> int:
        return self.start + self.length


def _read_header(view: memoryview) -> OnertCheckpointV2:
    size = len(view)
    if size < HEADER_SIZE:
        _fail(
            "truncated_header",
            "header",
            0,
            f"a schema-2 checkpoint has a {HEADER_SIZE}-byte header; the file has {size} bytes",
        )
    stored = int.from_bytes(view[4:8], "little")
    computed = header_crc(view)
    if stored != computed:
        _fail(
            "header_checksum",
            "header_crc",
            4,
            f"header CRC-32C is {computed:#010x}; the header records {stored:#010x}",
        )
    if view[3] != 0:
        _fail("reserved_nonzero", "reserved0", 3, f"reserved byte is {view[3]}, not 0")
    reserved = np.frombuffer(view, dtype=np.uint8, count=32, offset=32)
    nz = _first(reserved != 0)
    if nz is not None:
        _fail("reserved_nonzero", "reserved1", 32 + nz, f"reserved header byte {32 + nz} is not 0")
    len_file, ofs_table = struct.unpack_from("<QQ", view, 8)
    if size < len_file:
        _fail(
            "truncated_file",
            "len_file",
            8,
            f"the header records {len_file} bytes; the file has {size}",
        )
    if size > len_file:
        _fail(
            "trailing_bytes",
            "file",
            len_file,
            f"{size - len_file} bytes follow the {len_file} bytes the header records",
        )
    if ofs_table != HEADER_SIZE:
        _fail(
            "overlap" if ofs_table < HEADER_SIZE else "gap",
            "ofs_section_table",
            16,
            f"the section table must start at {HEADER_SIZE}, right after the header; "
            f"ofs_section_table is {ofs_table}",
        )
    # Magic, version and the fixed fields are checked again by the generated parser.
    return OnertCheckpointV2(KaitaiStream(BufferReader(view)))


def _read_sections(
    view: memoryview, hdr: OnertCheckpointV2, verify_data: bool = True
) -> list[SectionInfo]:
    size = len(view)
    n = hdr.num_sections
    if n > MAX_SECTIONS:
        _fail(
            "limit_exceeded",
            "num_sections",
            24,
            f"{n} sections; at most {MAX_SECTIONS} are allowed",
        )
    table_end = HEADER_SIZE + SECTION_ENTRY_SIZE * n
    if table_end > size:
        _fail(
            "count_exceeds_file",
            "num_sections",
            24,
            f"{n} sections need a {SECTION_ENTRY_SIZE * n}-byte table; the file has {size} bytes",
        )
    computed = crc(view[HEADER_SIZE:table_end])
    if computed != hdr.section_table_crc:
        _fail(
            "section_table_checksum",
            "section_table_crc",
            28,
            f"section table CRC-32C is {computed:#010x}; the header records "
            f"{hdr.section_table_crc:#010x}",
        )
    table = np.frombuffer(view, dtype=SECTION_DTYPE, count=n, offset=HEADER_SIZE)
    out: list[SectionInfo] = []
    pos = table_end
    for i in range(n):
        e = HEADER_SIZE + SECTION_ENTRY_SIZE * i
        f = f"sections[{i}]"
        kind, flags = int(table["kind"][i]), int(table["flags"][i])
        start, length = int(table["ofs_body"][i]), int(table["len_body"][i])
        if flags & ~FLAG_REQUIRED:
            _fail("reserved_nonzero", f"{f}.flags", e + 4, f"reserved flag bits set: {flags:#x}")
        if table["reserved"][i]:
            _fail("reserved_nonzero", f"{f}.reserved", e + 28, "reserved field is not 0")
        if start % ALIGNMENT:
            _fail(
                "misaligned",
                f"{f}.ofs_body",
                e + 8,
                f"section starts at {start}, not a multiple of {ALIGNMENT}",
            )
        if start > size:
            _fail(
                "offset_out_of_bounds",
                f"{f}.ofs_body",
                e + 8,
                f"section starts at {start}, past the end ({size})",
            )
        if length > size - start:
            _fail(
                "offset_out_of_bounds",
                f"{f}.len_body",
                e + 16,
                f"section of {length} bytes at {start} ends past the end of the {size}-byte file",
            )
        if start < pos:
            _fail(
                "overlap",
                f"{f}.ofs_body",
                e + 8,
                f"section starts at {start}, before the end of the previous structure at {pos}",
            )
        if start > align(pos):
            _fail(
                "gap",
                f"{f}.ofs_body",
                e + 8,
                f"section starts at {start}; the previous structure ends at {pos}",
            )
        _check_padding(view, pos, start)
        # The data section's CRC is the only check that reads every tensor byte: a caller that
        # opens a large file for one tensor may skip it (``load(..., verify_data=False)``).
        skip = kind == 4 and not verify_data
        computed = 0 if skip else crc(view[start : start + length])
        if not skip and computed != int(table["crc"][i]):
            _fail(
                "section_checksum",
                f"{f}.crc",
                e + 24,
                f"CRC-32C of section {i} is {computed:#010x}; "
                f"the table records {int(table['crc'][i]):#010x}",
            )
        if kind not in _KIND_NAMES and flags & FLAG_REQUIRED:
            _fail(
                "unknown_required_section",
                f"{f}.kind",
                e,
                f"section {i} has unknown kind {kind} and the must-understand flag",
            )
        if kind in KIND_FLAGS and flags & FLAG_REQUIRED != KIND_FLAGS[kind]:
            _fail(
                "bad_section_flags",
                f"{f}.flags",
                e + 4,
                f"the {_KIND_NAMES[kind]} section must have the REQUIRED flag "
                + ("set" if KIND_FLAGS[kind] else "clear"),
            )
        if out:
            key, prev = section_order_key(kind), section_order_key(out[-1].kind)
            if key == prev:
                _fail("duplicate_section", f"{f}.kind", e, f"a second section of kind {kind}")
            if key < prev:
                _fail(
                    "section_order",
                    f"{f}.kind",
                    e,
                    f"a section of kind {kind} after one of kind {out[-1].kind}: the order is "
                    "tensors, optimizer, state, origin, other kinds ascending, data",
                )
        out.append(SectionInfo(i, kind, flags, start, length, e))
        pos = start + length
    if pos != size:
        _fail("trailing_bytes", "file", pos, f"{size - pos} bytes follow the last section")
    return out


def _head(
    view: memoryview,
    sec: SectionInfo,
    head_size: int,
    name: str,
    count_field: str,
    count_at: int = 0,
) -> None:
    """Rules R0, O1, V1: the section holds its head (the error names the count field, at its own
    offset ``count_at`` within the head), and the head's reserved u32 is 0."""
    if sec.length < head_size:
        _fail(
            "count_exceeds_file",
            f"{name}.{count_field}",
            sec.start + count_at,
            f"the {name} section has {sec.length} bytes, less than its {head_size}-byte head",
        )
    if int.from_bytes(view[sec.start + head_size - 4 : sec.start + head_size], "little"):
        _fail(
            "reserved_nonzero",
            f"{name}.reserved",
            sec.start + head_size - 4,
            "reserved field is not 0",
        )


def _records(
    view,
    sec: SectionInfo,
    head_size: int,
    count: int,
    limit: int,
    dtype: np.dtype,
    name: str,
    count_field: str,
    count_at: int,
    extra: int = 0,
) -> np.ndarray:
    if count > limit:
        _fail(
            "limit_exceeded",
            f"{name}.{count_field}",
            count_at,
            f"{count} exceeds the limit {limit}",
        )
    need = head_size + dtype.itemsize * count + extra
    if need > sec.length:
        _fail(
            "count_exceeds_file",
            f"{name}.{count_field}",
            count_at,
            f"{count} records need {need} bytes; the {name} section has {sec.length}",
        )
    return np.frombuffer(view, dtype=dtype, count=count, offset=sec.start + head_size)


@dataclass
class _Range:
    field: str
    at: int
    start: int
    length: int


def _read_tensors(
    view: memoryview, sec: SectionInfo
) -> tuple[np.ndarray, list[str | None], list[_Range]]:
    _head(view, sec, SECTION_HEAD_SIZE, "tensors", "num_tensors")
    n = int.from_bytes(view[sec.start : sec.start + 4], "little")
    if n == 0:
        _fail(
            "empty_section", "tensors.num_tensors", sec.start, "a tensors section without records"
        )
    rec = _records(
        view,
        sec,
        SECTION_HEAD_SIZE,
        n,
        MAX_TENSORS,
        TENSOR_RECORD_DTYPE,
        "tensors",
        "num_tensors",
        sec.start,
    )
    base = sec.start + SECTION_HEAD_SIZE
    at = base + TENSOR_RECORD_SIZE * np.arange(n, dtype=np.int64)
    flags = rec["flags"].astype(np.int64)
    fld = "tensors[{}].{}".format
    i = _first((flags & ~0xF) != 0)
    if i is not None:
        _fail(
            "reserved_nonzero",
            fld(i, "flags"),
            int(at[i]) + 8,
            f"reserved flag bits {int(flags[i]):#x}",
        )
    for mask, name, off in (
        (((flags & HAS_MODEL_INDEX) == 0) & (rec["model_index"] != 0), "model_index", 4),
        (((flags & HAS_DTYPE) == 0) & (rec["dtype"] != 0), "dtype", 10),
        (((flags & HAS_SHAPE) == 0) & (rec["rank"] != 0), "rank", 11),
        (((flags & HAS_NAME) == 0) & (rec["len_name"] != 0), "len_name", 12),
        (((flags & HAS_NAME) == 0) & (rec["ofs_name"] != 0), "ofs_name", 16),
    ):
        i = _first(mask)
        if i is not None:
            _fail(
                "reserved_nonzero",
                fld(i, name),
                int(at[i]) + off,
                f"{name} must be 0 when its flag is clear",
            )
    rank = rec["rank"].astype(np.int64)
    i = _first(rank > MAX_RANK)
    if i is not None:
        _fail(
            "limit_exceeded",
            fld(i, "rank"),
            int(at[i]) + 11,
            f"rank {int(rank[i])} exceeds {MAX_RANK}",
        )
    dims = rec["dims"].reshape(n, MAX_RANK)
    beyond = (np.arange(MAX_RANK)[None, :] >= rank[:, None]) & (dims != 0)
    i = _first(beyond.any(axis=1))
    if i is not None:
        j = int(np.flatnonzero(beyond[i])[0])
        _fail(
            "reserved_nonzero",
            fld(i, f"dims[{j}]"),
            int(at[i]) + 40 + 4 * j,
            "a dim beyond the rank is not 0",
        )
    has_dtype = (flags & HAS_DTYPE) != 0
    known = np.isin(rec["dtype"], np.array(list(DTYPES), dtype=np.int8))
    i = _first(has_dtype & ~known)
    if i is not None:
        _fail(
            "bad_dtype",
            fld(i, "dtype"),
            int(at[i]) + 10,
            f"{int(rec['dtype'][i])} is not a circle TensorType",
        )
    has_name = (flags & HAS_NAME) != 0
    len_name = rec["len_name"].astype(np.int64)
    i = _first(has_name & ((len_name == 0) | (len_name > MAX_NAME_LEN)))
    if i is not None:
        _fail(
            "limit_exceeded",
            fld(i, "len_name"),
            int(at[i]) + 12,
            f"a name has 1..{MAX_NAME_LEN} bytes, not {int(len_name[i])}",
        )
    named = np.flatnonzero(has_name)
    _check_pool(
        rec["ofs_name"][named],
        rec["len_name"][named].astype(np.uint64),
        [fld(int(k), "ofs_name") for k in named],
        at[named] + 16,
        base + TENSOR_RECORD_SIZE * n,
        sec.end,
        "tensors.names",
    )
    index = rec["index"].astype(np.int64)
    i = _first(index[1:] <= index[:-1])
    if i is not None:
        k = i + 1
        _fail(
            "duplicate_tensor_index" if index[k] == index[i] else "tensor_order",
            fld(k, "index"),
            int(at[k]),
            f"record {k} has index {int(index[k])}; the previous record has {int(index[i])} "
            "(records are in strictly ascending index order)",
        )
    _check_unique(
        rec["model_index"],
        (flags & HAS_MODEL_INDEX) != 0,
        at,
        4,
        "duplicate_tensor_index",
        "model_index",
        "tensors",
    )
    names: list[str | None] = [None] * n
    seen: dict[str, int] = {}
    for k in named.tolist():
        s = _decode(
            view, int(rec["ofs_name"][k]), int(len_name[k]), fld(k, "name"), int(rec["ofs_name"][k])
        )
        if s in seen:
            _fail(
                "duplicate_tensor_name",
                fld(k, "name"),
                int(rec["ofs_name"][k]),
                f"tensors {seen[s]} and {k} are both named {s!r}",
            )
        seen[s] = k
        names[k] = s
    sized = np.flatnonzero(has_dtype & ((flags & HAS_SHAPE) != 0))
    for k in sized.tolist():
        elem = DTYPES[int(rec["dtype"][k])][1]
        if elem is None:
            continue
        count = 1
        for d in dims[k, : int(rank[k])].tolist():
            count *= d
        if count * elem != int(rec["len_data"][k]):
            _fail(
                "shape_mismatch",
                fld(k, "len_data"),
                int(at[k]) + 32,
                f"shape {dims[k, : int(rank[k])].tolist()} of {DTYPES[int(rec['dtype'][k])][0]} "
                f"needs {count * elem} bytes; the record has {int(rec['len_data'][k])}",
            )
    ranges = [
        _Range(fld(k, "ofs_data"), a + 24, start, length)
        for k, (a, start, length) in enumerate(
            zip(at.tolist(), rec["ofs_data"].tolist(), rec["len_data"].tolist())
        )
    ]
    return rec, names, ranges


def _check_unique(
    values: np.ndarray, mask: np.ndarray, at: np.ndarray, off: int, code: str, name: str, what: str
) -> None:
    idx = np.flatnonzero(mask)
    if idx.size < 2:
        return
    v = values[idx]
    order = np.argsort(v, kind="stable")
    dup = np.flatnonzero(v[order][1:] == v[order][:-1])
    if dup.size:
        # report the later record of the first duplicated pair in record order
        later = sorted(int(idx[order[d + 1]]) for d in dup)[0]
        _fail(
            code,
            f"{what}[{later}].{name}",
            int(at[later]) + off,
            f"{name} {int(values[later])} appears twice",
        )


def _read_optimizer(view: memoryview, sec: SectionInfo, num_tensors: int):
    _head(view, sec, OPTIMIZER_HEAD_SIZE, "optimizer", "num_slots", 4)
    kind, k, t = struct.unpack_from("<III", view, sec.start)
    if k > MAX_SLOTS:
        _fail(
            "limit_exceeded", "optimizer.num_slots", sec.start + 4, f"{k} slots exceed {MAX_SLOTS}"
        )
    if t != num_tensors:
        _fail(
            "bad_optimizer",
            "optimizer.num_tensors",
            sec.start + 8,
            f"the optimizer section covers {t} tensors; the tensors section has {num_tensors}",
        )
    need = OPTIMIZER_HEAD_SIZE + SLOT_DESCRIPTOR_SIZE * k + SLOT_ENTRY_SIZE * k * t
    if need > sec.length:
        _fail(
            "count_exceeds_file",
            "optimizer.num_slots",
            sec.start + 4,
            f"{k} slots for {t} tensors need {need} bytes; the section has {sec.length}",
        )
    kind_name = optimizer_name(kind)
    from ..model import OPTIMIZER_SLOTS

    expected = OPTIMIZER_SLOTS.get(kind_name) if kind in _OPTIMIZER_NAMES else None
    if expected is not None and len(expected) != k:
        _fail(
            "bad_optimizer",
            "optimizer.num_slots",
            sec.start + 4,
            f"{kind_name} has {len(expected)} slots, not {k}",
        )
    desc_at = sec.start + OPTIMIZER_HEAD_SIZE
    desc = np.frombuffer(view, dtype=SLOT_DESCRIPTOR_DTYPE, count=k, offset=desc_at)
    at = desc_at + SLOT_DESCRIPTOR_SIZE * np.arange(k, dtype=np.int64)
    i = _first(desc["reserved"] != 0)
    if i is not None:
        _fail(
            "reserved_nonzero",
            f"optimizer.slots[{i}].reserved",
            int(at[i]) + 12,
            "reserved field is not 0",
        )
    ln = desc["len_name"].astype(np.int64)
    i = _first((ln == 0) | (ln > MAX_NAME_LEN))
    if i is not None:
        _fail(
            "limit_exceeded",
            f"optimizer.slots[{i}].len_name",
            int(at[i]) + 8,
            f"a slot name has 1..{MAX_NAME_LEN} bytes, not {int(ln[i])}",
        )
    entries_at = desc_at + SLOT_DESCRIPTOR_SIZE * k
    pool = entries_at + SLOT_ENTRY_SIZE * k * t
    _check_pool(
        desc["ofs_name"],
        desc["len_name"].astype(np.uint64),
        [f"optimizer.slots[{j}].ofs_name" for j in range(k)],
        at,
        pool,
        sec.end,
        "optimizer.names",
    )
    names: list[str] = []
    for j in range(k):
        s = _decode(
            view,
            int(desc["ofs_name"][j]),
            int(ln[j]),
            f"optimizer.slots[{j}].name",
            int(desc["ofs_name"][j]),
        )
        if s in names:
            _fail(
                "duplicate_slot_name",
                f"optimizer.slots[{j}].name",
                int(desc["ofs_name"][j]),
                f"slot {s!r} appears twice",
            )
        names.append(s)
    if expected is not None and tuple(names) != expected:
        _fail(
            "bad_optimizer",
            "optimizer.slots",
            desc_at,
            f"{kind_name}'s slots are {expected}, not {tuple(names)}",
        )
    entries = (
        np.frombuffer(view, dtype=SLOT_ENTRY_DTYPE, count=k * t, offset=entries_at).reshape(k, t)
        if k * t
        else np.zeros((k, t), SLOT_ENTRY_DTYPE)
    )
    bad = (entries["ofs_data"] == NO_STATE) & (entries["len_data"] != 0)
    i = _first(bad.reshape(-1))
    if i is not None:
        _fail(
            "bad_slot_entry",
            f"optimizer.slots[{i // t}][{i % t}].len_data",
            entries_at + SLOT_ENTRY_SIZE * i + 8,
            "an entry marked NO_STATE must have size 0",
        )
    ranges: list[tuple[int, int, _Range]] = []
    for j in range(k):
        present = np.flatnonzero(entries["ofs_data"][j] != NO_STATE)
        offsets = entries["ofs_data"][j][present].tolist()
        lengths = entries["len_data"][j][present].tolist()
        for r, start, length in zip(present.tolist(), offsets, lengths):
            e = entries_at + SLOT_ENTRY_SIZE * (j * t + r)
            ranges.append((j, r, _Range(f"optimizer.slots[{j}][{r}].ofs_data", e, start, length)))
    return kind_name, names, ranges


def _read_state(view: memoryview, sec: SectionInfo) -> TrainingState:
    _head(view, sec, SECTION_HEAD_SIZE, "state", "num_entries")
    n = int.from_bytes(view[sec.start : sec.start + 4], "little")
    if n == 0:
        _fail("empty_section", "state.num_entries", sec.start, "a state section without entries")
    ent = _records(
        view,
        sec,
        SECTION_HEAD_SIZE,
        n,
        MAX_STATE_ENTRIES,
        STATE_ENTRY_DTYPE,
        "state",
        "num_entries",
        sec.start,
    )
    base = sec.start + SECTION_HEAD_SIZE
    at = base + STATE_ENTRY_SIZE * np.arange(n, dtype=np.int64)
    fld = "state[{}].{}".format
    reserved = ent["reserved"].reshape(n, 3)
    i = _first(reserved.any(axis=1))
    if i is not None:  # the offset of the first non-zero byte (SPEC section 9, error offsets)
        j = int(np.flatnonzero(reserved[i])[0])
        _fail("reserved_nonzero", fld(i, "reserved"), int(at[i]) + 13 + j, "reserved byte is not 0")
    vt = ent["value_type"].astype(np.int64)
    i = _first(vt > 3)
    if i is not None:
        _fail(
            "bad_state_type",
            fld(i, "value_type"),
            int(at[i]) + 12,
            f"unknown value type {int(vt[i])}",
        )
    lk = ent["len_key"].astype(np.int64)
    i = _first((lk == 0) | (lk > MAX_KEY_LEN))
    if i is not None:
        _fail(
            "limit_exceeded",
            fld(i, "len_key"),
            int(at[i]) + 8,
            f"a key has 1..{MAX_KEY_LEN} bytes, not {int(lk[i])}",
        )
    scalar = vt <= 1
    i = _first(scalar & (ent["len_value"] != 0))
    if i is not None:
        _fail(
            "bad_state_type",
            fld(i, "len_value"),
            int(at[i]) + 24,
            "an int or float value has len_value 0",
        )
    i = _first(~scalar & (ent["len_value"] > MAX_VALUE_LEN))
    if i is not None:
        _fail(
            "limit_exceeded",
            fld(i, "len_value"),
            int(at[i]) + 24,
            f"a value has at most {MAX_VALUE_LEN} bytes",
        )
    # Keys and string/bytes values, interleaved in entry order: key 0, value 0, key 1, ...
    starts, lengths, fields, offs = [], [], [], []
    for k in range(n):
        starts.append(int(ent["ofs_key"][k]))
        lengths.append(int(lk[k]))
        fields.append(fld(k, "ofs_key"))
        offs.append(int(at[k]))
        if not scalar[k]:
            starts.append(int(ent["value"][k]))
            lengths.append(int(ent["len_value"][k]))
            fields.append(fld(k, "value"))
            offs.append(int(at[k]) + 16)
    _check_pool(
        np.array(starts, np.uint64),
        np.array(lengths, np.uint64),
        fields,
        np.array(offs),
        base + STATE_ENTRY_SIZE * n,
        sec.end,
        "state.pool",
    )
    state = TrainingState()
    for k in range(n):
        ko = int(ent["ofs_key"][k])
        key = _decode(view, ko, int(lk[k]), fld(k, "key"), ko)
        if key in state:
            _fail("duplicate_state_key", fld(k, "key"), ko, f"key {key!r} appears twice")
        t = int(vt[k])
        raw = int(ent["value"][k])
        value: object
        if t == 0:
            value = raw - (1 << 64) if raw >= 1 << 63 else raw
        elif t == 1:
            value = struct.unpack("<d", raw.to_bytes(8, "little"))[0]
        elif t == 2:
            value = _decode(view, raw, int(ent["len_value"][k]), fld(k, "value"), raw)
        else:
            value = bytes(view[raw : raw + int(ent["len_value"][k])])
        want = WELL_KNOWN_KEYS.get(key)
        if want is not None and (VALUE_TYPES[want] != t or (t == 0 and value < 0)):  # type: ignore[operator]
            _fail(
                "bad_state_type",
                fld(k, "value_type"),
                int(at[k]) + 12,
                f"{key!r} is a well-known key of type {want}"
                + (" (non-negative)" if want == "int" else ""),
            )
        state[key] = value
    return state


def _read_origin(view: memoryview, sec: SectionInfo) -> dict[str, object]:
    if sec.length < ORIGIN_SIZE:
        _fail(
            "count_exceeds_file",
            "origin",
            sec.start,
            f"the origin section has {sec.length} bytes, not {ORIGIN_SIZE}",
        )
    if sec.length > ORIGIN_SIZE:
        _fail(
            "gap",
            "origin",
            sec.start + ORIGIN_SIZE,
            f"the origin section has {sec.length} bytes, not {ORIGIN_SIZE}",
        )
    rev, dialect, flags, reserved, n = struct.unpack_from("<IIIIQ", view, sec.start)
    if flags & ~FOOTERLESS:
        _fail("reserved_nonzero", "origin.flags", sec.start + 8, f"reserved flag bits {flags:#x}")
    if reserved:
        _fail("reserved_nonzero", "origin.reserved", sec.start + 12, "reserved field is not 0")
    if rev not in _ORIGIN_REVISION_NAMES:
        _fail("bad_origin", "origin.revision", sec.start, f"unknown origin revision {rev}")
    if dialect not in _ORIGIN_DIALECT_NAMES:
        _fail("bad_origin", "origin.dialect", sec.start + 4, f"unknown origin dialect {dialect}")
    return {
        "revision": _ORIGIN_REVISION_NAMES[rev],
        "dialect": _ORIGIN_DIALECT_NAMES[dialect],
        "num_entries": n,
        "footerless": bool(flags & FOOTERLESS),
    }


def _check_ranges(
    view: memoryview, ranges: list[_Range], data: SectionInfo | None, verify_data: bool = True
) -> None:
    """Every data range is aligned, inside DATA, and together they tile DATA (rules D1, D2).

    The padding bytes between ranges are read only when ``verify_data``: like the data CRC,
    that check touches a page of the file per range (the mapping's fault-around makes it most
    of the file), while every other rule reads only the metadata.

    Vectorised: the sequential rules of the spec, evaluated for all ranges at once; the first
    range (in the spec's order) that breaks a rule is reported.
    """
    n = len(ranges)
    if data is not None and n == 0:
        _fail("empty_section", "data", data.start, "a data section, but no data range")
    starts = np.fromiter((r.start for r in ranges), np.uint64, n)
    lengths = np.fromiter((r.length for r in ranges), np.uint64, n)
    misaligned = starts % ALIGNMENT != 0
    if data is None:
        outside = np.ones(n, bool)
    else:
        lo, hi = np.uint64(data.start), np.uint64(data.end)
        outside = (starts < lo) | (starts > hi) | (lengths > hi - np.minimum(starts, hi))
    i = _first(misaligned | outside)
    if i is not None:
        r = ranges[i]
        if misaligned[i]:
            _fail(
                "misaligned", r.field, r.at, f"data at {r.start} is not a multiple of {ALIGNMENT}"
            )
        where = (
            "there is no data section"
            if data is None
            else f"the data section is [{data.start}, {data.end})"
        )
        _fail("offset_out_of_bounds", r.field, r.at, f"{r.length} bytes at {r.start}: {where}")
    if data is None:
        return
    order = np.lexsort((np.arange(n), starts))
    s = starts[order].astype(np.int64)
    e = s + lengths[order].astype(np.int64)
    prev = np.concatenate(([data.start], e[:-1])).astype(np.int64)
    expected = -(-prev // ALIGNMENT) * ALIGNMENT
    pad_len = np.clip(s - prev, 0, ALIGNMENT - 1) * int(verify_data)
    owner = np.repeat(np.arange(n), pad_len)
    within = np.arange(int(pad_len.sum())) - np.repeat(np.cumsum(pad_len) - pad_len, pad_len)
    where = np.repeat(prev, pad_len) + within
    whole = np.frombuffer(view, dtype=np.uint8)
    nonzero = np.flatnonzero(whole[where] != 0) if where.size else np.zeros(0, np.int64)
    dirty = np.zeros(n, bool)
    dirty[owner[nonzero]] = True
    k = _first((s != expected) | dirty)
    if k is not None:
        r = ranges[int(order[k])]
        pos = int(prev[k])
        if r.start < int(expected[k]):
            _fail(
                "overlap",
                r.field,
                r.at,
                f"data at {r.start} overlaps the previous range, which ends at {pos}",
            )
        if r.start > int(expected[k]):
            _fail("gap", r.field, r.at, f"data at {r.start}; the previous range ends at {pos}")
        _check_padding(view, pos, r.start)  # reached with verify_data only: reports the byte
    end = int(e[-1]) if n else data.start
    if end != data.end:
        _fail(
            "gap",
            "data",
            end,
            f"bytes {end}..{data.end} of the data section belong to no tensor or slot",
        )


def _typed(whole: np.ndarray, start: int, length: int, dtype: str | None, shape) -> np.ndarray:
    return typed_view(whole[start : start + length], dtype, shape)


def read(view: memoryview, *, verify_data: bool = True) -> Checkpoint:
    """Validate a schema-2 checkpoint; data are read-only typed views on ``view``.

    Every rule of the spec is applied; ``verify_data=False`` skips only the CRC-32C and the
    zero-padding check of the data section (the checks that read the tensor bytes).
    """
    # Thousands of acyclic model objects are made below: the cyclic collector would only
    # slow that down (see blocks.paused_collector).
    with paused_collector():
        hdr = _read_header(view)
        sections = _read_sections(view, hdr, verify_data)
        hdr._io.close()  # everything is read: release the buffer (see BufferReader)
        by_kind = {s.kind: s for s in sections if s.kind in _KIND_NAMES}
        unknown = [s for s in sections if s.kind not in _KIND_NAMES]

        rec = np.zeros(0, TENSOR_RECORD_DTYPE)
        names: list[str | None] = []
        ranges: list[_Range] = []
        if (sec := by_kind.get(1)) is not None:
            rec, names, ranges = _read_tensors(view, sec)
        optimizer_info = None
        if (sec := by_kind.get(2)) is not None:
            optimizer_info = _read_optimizer(view, sec, len(rec))
            ranges += [r for _, _, r in optimizer_info[2]]
        state = _read_state(view, by_kind[3]) if 3 in by_kind else TrainingState()
        origin = _read_origin(view, by_kind[5]) if 5 in by_kind else None
        _check_ranges(view, ranges, by_kind.get(4), verify_data)

        whole = np.frombuffer(view, dtype=np.uint8)
        tensors: list[Tensor] = []
        # Columns as Python lists: one conversion per column instead of NumPy scalar indexing per
        # field and record.
        columns = zip(
            rec["index"].tolist(),
            rec["model_index"].tolist(),
            rec["flags"].tolist(),
            rec["dtype"].tolist(),
            rec["rank"].tolist(),
            rec["dims"].tolist(),
            rec["ofs_data"].tolist(),
            rec["len_data"].tolist(),
            names,
        )
        for index, model_index, flags, code, rank, dims, start, length, name in columns:
            dtype = DTYPES[code][0] if flags & HAS_DTYPE else None
            shape = tuple(dims[:rank]) if flags & HAS_SHAPE else None
            tensors.append(
                Tensor(
                    index=index,
                    data=_typed(whole, start, length, dtype, shape),
                    offset=start,
                    name=name,
                    dtype=dtype,
                    shape=shape,
                    model_index=model_index if flags & HAS_MODEL_INDEX else None,
                )
            )
        optimizer = None
        if optimizer_info is not None:
            kind, slot_names, slot_ranges = optimizer_info
            optimizer = Optimizer(kind, {name: {} for name in slot_names})
            for j, t, rg in slot_ranges:
                owner = tensors[t]
                like = rg.length == owner.nbytes
                data = _typed(
                    whole,
                    rg.start,
                    rg.length,
                    owner.dtype if like else None,
                    owner.shape if like else None,
                )
                optimizer.slots[slot_names[j]][owner.index] = Buffer(
                    index=owner.index, data=data, offset=rg.start
                )
        return Checkpoint(
            tensors=tensors,
            optimizer=optimizer,
            state=state,
            revision="v2",
            dialect=None,
            num_entries=None,
            file_size=len(view),
            source=view,
            origin=origin,
            sections=[
                Section(
                    kind=s.kind, data=bytes(view[s.start : s.end]), required=False, offset=s.start
                )
                for s in unknown
            ],
        )
