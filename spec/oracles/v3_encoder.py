"""Schema 3 for spec/make_vectors.py, a test oracle (spec/oracles/README.md): a small encoder
written from spec/SPEC.md 7 alone, the locator of fields the invalid vectors corrupt, and the
expected description of a valid file.

The encoder is a second writer, independent of the library's: it reads a schema-2 file with the
Kaitai-generated parser (generated/python) and lays the same content out as schema 3 (7.1
columns, 7.2 slot entries, 7.3 placement), with the container of 6.4. Schema 3's encoding is
canonical (6.1) given the data order, so spec/make_vectors.py requires the library's writer to
produce the very same bytes, and the library's reader the same description.
"""

from __future__ import annotations

import math
import struct
import sys
import zlib
from dataclasses import dataclass, field
from io import BytesIO
from pathlib import Path

import crc32c

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "generated" / "python"))

from kaitaistruct import KaitaiStream  # noqa: E402
from onert_checkpoint_generated.onert_checkpoint_v2 import OnertCheckpointV2  # noqa: E402

NO_STATE = 2**64 - 1
NO_MODEL_INDEX = 0xFFFFFFFF
NO_DTYPE = -128
NO_SHAPE = 255
INDEX, MODEL_INDEX, NAME, DTYPE, SHAPE, ORDER = 1, 2, 4, 8, 16, 32
KIND_TENSORS, KIND_OPTIMIZER, KIND_STATE, KIND_DATA, KIND_ORIGIN = 1, 2, 3, 4, 5
REQUIRED = 1

#: circle TensorType code -> (name, whole-byte element size or None), SPEC.md 6.6
DTYPES = {
    -5: ("ggml_q8_1", None), -4: ("ggml_q8_0", None), -3: ("ggml_q4_1", None),
    -2: ("ggml_q4_0", None), -1: ("uint4", None), 0: ("float32", 4), 1: ("float16", 2),
    2: ("int32", 4), 3: ("uint8", 1), 4: ("int64", 8), 5: ("string", None), 6: ("bool", 1),
    7: ("int16", 2), 8: ("complex64", 8), 9: ("int8", 1), 10: ("float64", 8),
    11: ("complex128", 16), 12: ("uint64", 8), 13: ("resource", None), 14: ("variant", None),
    15: ("uint32", 4), 16: ("uint16", 2), 17: ("int4", None),
}  # fmt: skip
OPTIMIZER_NAMES = {0: "sgd", 1: "sgd_momentum", 2: "adam"}


def a(length: int) -> int:
    """SPEC.md 7.3: 64 for 64 bytes or more, else the smallest power of two not below it."""
    return 64 if length >= 64 else 1 if length <= 1 else 1 << (length - 1).bit_length()


def up(x: int, m: int) -> int:
    return -(-x // m) * m


# ------------------------------------------------------------------------------------------------
# Content


@dataclass
class Record:
    data: bytes
    index: int
    model_index: int | None = None
    name: bytes | None = None
    dtype: int | None = None
    shape: tuple[int, ...] | None = None


@dataclass
class StateEntry:
    key: bytes
    value_type: int  # 0 int, 1 float, 2 string, 3 bytes
    value: int | bytes  # the u64 of an int or float, the bytes of a string or bytes value


@dataclass
class Content:
    records: list[Record] = field(default_factory=list)
    order: list[int] | None = None  # data order of the records; None: record order
    optimizer_kind: int | None = None  # None: no optimizer section
    slots: list[tuple[bytes, list[bytes | None]]] = field(default_factory=list)  # None: NO_STATE
    state: list[StateEntry] = field(default_factory=list)
    origin: bytes | None = None  # the 24 bytes of an origin section
    others: list[tuple[int, int, bytes]] = field(default_factory=list)  # (kind, flags, body)


def from_v2(data: bytes) -> Content:
    """A valid schema-2 file's content, as the generated schema-2 parser reads it; the data
    order is the order of the tensor ranges' offsets (record order on a tie)."""
    h = OnertCheckpointV2(KaitaiStream(BytesIO(data)))
    c = Content()
    offsets: list[int] = []
    for e in h.section_table:
        s, kind = e.entry, int(e.entry.kind)
        raw = data[s.ofs_body : s.ofs_body + s.len_body]
        if kind == KIND_TENSORS:
            for r in e.body.records:
                c.records.append(
                    Record(
                        data[r.ofs_data : r.ofs_data + r.len_data],
                        r.index,
                        r.model_index if r.flags & 8 else None,
                        data[r.ofs_name : r.ofs_name + r.len_name] if r.flags & 4 else None,
                        int(r.dtype) if r.flags & 1 else None,
                        tuple(r.dims[: r.rank]) if r.flags & 2 else None,
                    )
                )
                offsets.append(r.ofs_data)
        elif kind == KIND_OPTIMIZER:
            o = e.body
            c.optimizer_kind = int(o.head.kind)
            for j, d in enumerate(o.slots):
                entries = o.entries[j * o.head.num_tensors : (j + 1) * o.head.num_tensors]
                c.slots.append(
                    (
                        data[d.ofs_name : d.ofs_name + d.len_name],
                        [
                            None
                            if x.ofs_data == NO_STATE
                            else data[x.ofs_data : x.ofs_data + x.len_data]
                            for x in entries
                        ],
                    )
                )
        elif kind == KIND_STATE:
            for v in e.body.entries:
                key = data[v.ofs_key : v.ofs_key + v.len_key]
                t = int(v.value_type)
                value = v.value if t < 2 else data[v.value : v.value + v.len_value]
                c.state.append(StateEntry(key, t, value))
        elif kind == KIND_ORIGIN:
            c.origin = raw
        elif kind != KIND_DATA:
            c.others.append((kind, s.flags, raw))
    order = sorted(range(len(offsets)), key=lambda k: (offsets[k], k))
    c.order = None if order == list(range(len(order))) else order
    return c


# ------------------------------------------------------------------------------------------------
# Encoding (SPEC.md 6.4 container, 7 sections)


def needed_columns(c: Content) -> int:
    rs = c.records
    bits = 0
    if any(r.index != k for k, r in enumerate(rs)):
        bits |= INDEX
    if any(r.model_index is not None for r in rs):
        bits |= MODEL_INDEX
    if any(r.name is not None for r in rs):
        bits |= NAME
    if any(r.dtype is not None for r in rs):
        bits |= DTYPE
    if any(r.shape is not None for r in rs):
        bits |= SHAPE
    if c.order is not None and c.order != list(range(len(rs))):
        bits |= ORDER
    return bits


def tensors_body(c: Content, columns: int) -> bytes:
    rs = c.records
    n = len(rs)
    out = bytearray(struct.pack("<II", n, columns))
    out += struct.pack(f"<{n}Q", *(len(r.data) for r in rs))

    def column(raw: bytes) -> None:
        out.extend(bytes(up(len(out), 8) - len(out)))
        out.extend(raw)

    if columns & INDEX:
        column(struct.pack(f"<{n}I", *(r.index for r in rs)))
    if columns & MODEL_INDEX:
        mi = [NO_MODEL_INDEX if r.model_index is None else r.model_index for r in rs]
        column(struct.pack(f"<{n}I", *mi))
    if columns & NAME:
        column(struct.pack(f"<{n}I", *(len(r.name or b"") for r in rs)))
    if columns & DTYPE:
        column(struct.pack(f"<{n}b", *(NO_DTYPE if r.dtype is None else r.dtype for r in rs)))
    if columns & SHAPE:
        column(bytes(NO_SHAPE if r.shape is None else len(r.shape) for r in rs))
    if columns & ORDER:
        column(struct.pack(f"<{n}I", *(c.order or range(n))))
    if columns & SHAPE:
        dims = [d for r in rs for d in (r.shape or ())]
        column(struct.pack(f"<{len(dims)}I", *dims))
    if columns & NAME:
        column(b"".join(r.name or b"" for r in rs))
    return bytes(out)


def optimizer_body(c: Content, s: int) -> bytes:
    k, t = len(c.slots), len(c.records)
    assert c.optimizer_kind is not None
    head = struct.pack("<IIII", c.optimizer_kind, k, t, 0)
    pool_at = s + 16 + 16 * k + 8 * k * t
    descs, entries, pool = b"", b"", b""
    for name, slot in c.slots:
        descs += struct.pack("<QII", pool_at + len(pool), len(name), 0)
        pool += name
        entries += struct.pack(f"<{t}Q", *(NO_STATE if x is None else len(x) for x in slot))
    return head + descs + entries + pool


def state_body(c: Content, s: int) -> bytes:
    n = len(c.state)
    at = s + 8 + 32 * n
    entries, pool = b"", b""
    for e in c.state:
        key_at = at + len(pool)
        pool += e.key
        if e.value_type < 2:
            assert isinstance(e.value, int)
            value, length = e.value, 0
        else:
            assert isinstance(e.value, bytes)
            value, length = at + len(pool), len(e.value)
            pool += e.value
        entries += struct.pack("<QIB3xQQ", key_at, len(e.key), e.value_type, value, length)
    return struct.pack("<II", n, 0) + entries + pool


def data_order(c: Content) -> list[tuple[int, int]]:
    """The ranges in data order (7.3): (slot, record), slot -1 for the tensor's range."""
    order = c.order if c.order is not None else list(range(len(c.records)))
    ranges = [(-1, k) for k in order]
    for j, (_, slot) in enumerate(c.slots):
        ranges += [(j, k) for k in order if slot[k] is not None]
    return ranges


def range_bytes(c: Content, slot: int, k: int) -> bytes:
    raw = c.records[k].data if slot < 0 else c.slots[slot][1][k]
    assert raw is not None
    return raw


def data_body(c: Content) -> tuple[bytes, dict[tuple[int, int], int]]:
    """The data section's bytes and each range's place relative to its start."""
    out = bytearray()
    where: dict[tuple[int, int], int] = {}
    for slot, k in data_order(c):
        raw = range_bytes(c, slot, k)
        out.extend(bytes(up(len(out), a(len(raw))) - len(out)))
        where[(slot, k)] = len(out)
        out.extend(raw)
    return bytes(out), where


@dataclass
class Encoded:
    data: bytes
    offsets: dict[tuple[int, int], int]  # (slot, record) -> absolute offset


def assemble(sections: list[tuple[int, int, object]], version: int = 3) -> bytes:
    """Header, section table and sections (each a body, or a function of its ofs_body giving
    it) at multiples of 64, every CRC-32C computed (SPEC.md 6.3, 6.4)."""
    n = len(sections)
    pos = 64 + 32 * n
    table, bodies = b"", []
    for kind, flags, body in sections:
        ofs = up(pos, 64)
        raw = body(ofs) if callable(body) else body
        assert isinstance(raw, bytes)
        table += struct.pack("<IIQQII", kind, flags, ofs, len(raw), crc32c.crc32c(raw), 0)
        bodies.append((ofs, raw))
        pos = ofs + len(raw)
    out = bytearray(pos)
    out[64 : 64 + len(table)] = table
    for ofs, raw in bodies:
        out[ofs : ofs + len(raw)] = raw
    struct.pack_into("<HBBIQQII", out, 0, 429, version, 0, 0, pos, 64, n, crc32c.crc32c(table))
    struct.pack_into("<I", out, 4, crc32c.crc32c(bytes(out[:64])))
    return bytes(out)


#: SPEC.md 7.4: the optional data_blocks section, one CRC-32C per block of the data section
KIND_DATA_BLOCKS = 0x100008


def data_blocks_body(data: bytes, shift: int) -> bytes:
    """The data_blocks section of a data section ``data`` in blocks of 2**shift bytes: u32
    block_shift, u32 reserved (0), u64 num_blocks, then each block's CRC-32C (SPEC.md 7.4)."""
    size = 1 << shift
    crcs = [crc32c.crc32c(data[i : i + size]) for i in range(0, len(data), size)]
    return struct.pack("<IIQ", shift, 0, len(crcs)) + struct.pack(f"<{len(crcs)}I", *crcs)


#: SPEC.md 7.5: the optional range_index section, where the placement stands every G ranges
KIND_RANGE_INDEX = 0x100009


def range_index_body(c: Content, shift: int) -> bytes:
    """The range_index section of ``c`` with groups of G = 2**shift sequence positions: u32
    group_shift, u32 reserved (0), u64 num_groups = ceil(n / G), then for each pass (the tensor
    ranges, then each slot's) and each group g the walk's position, relative to the data
    section, when the pass reaches sequence position G*g; then, with an ``order`` column, the
    sequence position of every record (SPEC.md 7.5)."""
    n, size = len(c.records), 1 << shift
    order = c.order if c.order is not None else list(range(n))
    passes = [[c.records[k].data for k in order]]
    passes += [[slot[k] for k in order] for _, slot in c.slots]
    starts, pos = [], 0
    for sequence in passes:
        for i, raw in enumerate(sequence):
            if i % size == 0:
                starts.append(pos)
            if raw is not None:  # NO_STATE places nothing, but its position counts
                pos = up(pos, a(len(raw))) + len(raw)
    body = struct.pack("<IIQ", shift, 0, -(-n // size))
    body += struct.pack(f"<{len(starts)}Q", *starts)
    if needed_columns(c) & ORDER:
        position = [0] * n
        for i, k in enumerate(order):
            position[k] = i
        body += struct.pack(f"<{n}I", *position)
    return body


def encode(
    c: Content,
    *,
    extra_columns: int = 0,
    block_shift: int | None = None,
    group_shift: int | None = None,
) -> Encoded:
    """``c`` as schema 3; ``extra_columns`` adds columns that hold nothing (for the
    ``redundant_column`` vectors); ``block_shift`` adds a data_blocks section of blocks of
    2**block_shift bytes (when the data section has a byte); ``group_shift`` a range_index
    section of groups of 2**group_shift positions (when there are tensors)."""
    sections: list[tuple[int, int, object]] = []
    if c.records:
        sections.append(
            (KIND_TENSORS, REQUIRED, tensors_body(c, needed_columns(c) | extra_columns))
        )
    if c.optimizer_kind is not None:
        sections.append((KIND_OPTIMIZER, REQUIRED, lambda s: optimizer_body(c, s)))
    if c.state:
        sections.append((KIND_STATE, REQUIRED, lambda s: state_body(c, s)))
    if c.origin is not None:
        sections.append((KIND_ORIGIN, 0, c.origin))
    where: dict[tuple[int, int], int] = {}
    body = b""
    if c.records:
        body, where = data_body(c)
    others = list(c.others)
    if block_shift is not None and body:
        others.append((KIND_DATA_BLOCKS, 0, data_blocks_body(body, block_shift)))
    if group_shift is not None and c.records:
        others.append((KIND_RANGE_INDEX, 0, range_index_body(c, group_shift)))
    for kind, flags, raw in sorted(others):
        sections.append((kind, flags, raw))
    if c.records:
        sections.append((KIND_DATA, REQUIRED, body))
    data = assemble(sections)
    s = V3(data).sec(KIND_DATA)[0] if c.records else 0
    return Encoded(data, {key: s + rel for key, rel in where.items()})


# ------------------------------------------------------------------------------------------------
# The description (TOOLKIT.md 1, schema 3 as 7.3 says)


def _entry(data: bytes, index: int, offset: int, nbytes: int) -> dict:
    crc = zlib.crc32(data[offset : offset + nbytes]) & 0xFFFFFFFF
    return {"index": index, "offset": offset, "nbytes": nbytes, "crc32": crc}


def _state_value(e: StateEntry) -> object:
    if e.value_type == 0:
        assert isinstance(e.value, int)
        return e.value - 2**64 if e.value >= 2**63 else e.value
    if e.value_type == 1:
        assert isinstance(e.value, int)
        (x,) = struct.unpack("<d", e.value.to_bytes(8, "little"))
        if math.isnan(x):
            return {"float": "nan"}
        if math.isinf(x):
            return {"float": "inf" if x > 0 else "-inf"}
        return x
    assert isinstance(e.value, bytes)
    return e.value.decode("utf-8") if e.value_type == 2 else {"bytes": e.value.hex()}


def describe(c: Content, enc: Encoded) -> dict:
    tensors = []
    for k, r in enumerate(c.records):
        t = _entry(enc.data, r.index, enc.offsets[(-1, k)], len(r.data))
        if any(x is not None for x in (r.name, r.dtype, r.shape, r.model_index)):
            t["name"] = None if r.name is None else r.name.decode("utf-8")
            t["dtype"] = None if r.dtype is None else DTYPES[r.dtype][0]
            t["shape"] = None if r.shape is None else list(r.shape)
            t["model_index"] = r.model_index
        tensors.append(t)
    optimizer = None
    if c.optimizer_kind is not None:
        slots = {}
        for j, (name, slot) in enumerate(c.slots):
            slots[name.decode("utf-8")] = [
                _entry(enc.data, c.records[k].index, enc.offsets[(j, k)], len(x))
                for k, x in enumerate(slot)
                if x is not None
            ]
        kind = c.optimizer_kind
        optimizer = {"kind": OPTIMIZER_NAMES.get(kind, f"optimizer_{kind}"), "slots": slots}
    origin = None
    if c.origin is not None:
        rev, dia, flags, _, num = struct.unpack("<IIIIQ", c.origin)
        origin = {
            "revision": {1: "v1", 2: "wof"}[rev],
            "dialect": {0: None, 1: "onert", 2: "onert-micro"}[dia],
            "num_entries": num,
            "footerless": bool(flags & 1),
        }
    return {
        "revision": "v3",
        "dialect": None,
        "file_size": len(enc.data),
        "tensors": tensors,
        "optimizer": optimizer,
        "state": {e.key.decode("utf-8"): _state_value(e) for e in c.state},
        "origin": origin,
    }


# ------------------------------------------------------------------------------------------------
# Where things are in a schema-3 file, read from its fields (for the corruptions)


def u32(data: bytes, at: int) -> int:
    return struct.unpack_from("<I", data, at)[0]


def u64(data: bytes, at: int) -> int:
    return struct.unpack_from("<Q", data, at)[0]


COLUMN_ORDER = (
    ("index", INDEX, 4),
    ("model_index", MODEL_INDEX, 4),
    ("len_name", NAME, 4),
    ("dtype", DTYPE, 1),
    ("rank", SHAPE, 1),
    ("order", ORDER, 4),
)


@dataclass(frozen=True)
class V3:
    data: bytes

    def entry(self, i: int) -> int:
        return 64 + 32 * i

    def kinds(self) -> list[int]:
        return [u32(self.data, self.entry(i)) for i in range(u32(self.data, 24))]

    def index_of(self, kind: int) -> int:
        return self.kinds().index(kind)

    def sec(self, kind: int) -> tuple[int, int]:
        e = self.entry(self.index_of(kind))
        return u64(self.data, e + 8), u64(self.data, e + 16)

    @property
    def n(self) -> int:
        return u32(self.data, self.sec(KIND_TENSORS)[0])

    @property
    def columns(self) -> int:
        return u32(self.data, self.sec(KIND_TENSORS)[0] + 4)

    def len_data(self, k: int) -> int:
        return self.sec(KIND_TENSORS)[0] + 8 + 8 * k

    def column_starts(self) -> dict[str, int]:
        """Absolute start of every present column (SPEC.md 7.1), dims and names included."""
        s = self.sec(KIND_TENSORS)[0]
        n, bits = self.n, self.columns
        pos = 8 + 8 * n
        out: dict[str, int] = {}
        for name, bit, size in COLUMN_ORDER:
            if bits & bit:
                pos = up(pos, 8)
                out[name] = s + pos
                pos += size * n
        if bits & SHAPE:
            pos = up(pos, 8)
            out["dims"] = s + pos
            ranks = self.data[out["rank"] : out["rank"] + n]
            pos += 4 * sum(r for r in ranks if r != NO_SHAPE)
        if bits & NAME:
            pos = up(pos, 8)
            out["names"] = s + pos
            pos += sum(u32(self.data, out["len_name"] + 4 * k) for k in range(n))
        out["end"] = s + pos
        return out

    def col(self, name: str, k: int) -> int:
        size = {"index": 4, "model_index": 4, "len_name": 4, "dtype": 1, "rank": 1, "order": 4}
        return self.column_starts()[name] + size[name] * k

    def name_at(self, k: int) -> int:
        """Where record k's name starts."""
        starts = self.column_starts()
        return starts["names"] + sum(u32(self.data, starts["len_name"] + 4 * i) for i in range(k))

    def slot_entry(self, j: int, t: int) -> int:
        s = self.sec(KIND_OPTIMIZER)[0]
        k, n = u32(self.data, s + 4), u32(self.data, s + 8)
        return s + 16 + 16 * k + 8 * (j * n + t)


def reseal(data: bytes) -> bytes:
    """Every CRC-32C recomputed from the (possibly corrupted) fields, as make_vectors.reseal."""
    buf = bytearray(data)
    n = u32(data, 24)
    if 64 + 32 * n > len(buf):
        n = 0
    for i in range(n):
        e = 64 + 32 * i
        o, ln = u64(data, e + 8), u64(data, e + 16)
        if o + ln <= len(buf):
            struct.pack_into("<I", buf, e + 24, crc32c.crc32c(bytes(buf[o : o + ln])))
    struct.pack_into("<I", buf, 28, crc32c.crc32c(bytes(buf[64 : 64 + 32 * n])))
    struct.pack_into("<I", buf, 4, 0)
    struct.pack_into("<I", buf, 4, crc32c.crc32c(bytes(buf[:64])))
    return bytes(buf)
