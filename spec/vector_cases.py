"""Invalid conformance vectors as data, for spec/make_vectors.py: a ``Case`` is a base file, a
patch and the expected error (code, field, offset). A patch sets named places of the file
(``tensors[2].rank``, ``sections[1].ofs_body``, ``weights[0]``) that ``Places`` resolve with the
offsets and widths of the generated layout (generated/python/onert_checkpoint_generated/
layout.py, from the .ksy), the way the error fields of spec/SPEC.md 1.3 name them; ``patched``
makes a case's bytes and reseals its CRC-32Cs; tests/spec/test_vector_cases.py checks every case.
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass
from typing import ClassVar

import crc32c
import numpy as np
from onert_checkpoint_generated.layout import V3_COLUMN_ALIGNMENT as COLUMN_ALIGNMENT
from onert_checkpoint_generated.layout import V3_DATA_BLOCKS_KIND as DATA_BLOCKS_KIND
from onert_checkpoint_generated.layout import V3_MAX_RANGE_ALIGNMENT as MAX_RANGE_ALIGNMENT
from onert_checkpoint_generated.layout import V3_NO_SHAPE as NO_SHAPE
from onert_checkpoint_generated.layout import V3_OPTIMIZER_SECTION_ENTRIES as SLOT_ENTRY
from onert_checkpoint_generated.layout import V3_RANGE_INDEX_KIND as RANGE_INDEX_KIND
from onert_checkpoint_generated.layout import V3_RANGE_INDEX_SECTION_POSITION as POSITION
from onert_checkpoint_generated.layout import V3_RECORD_DIMS_DIMS as DIMS
from onert_checkpoint_generated.layout import (
    Field,
    Header,
    OptimizerHead,
    Origin,
    SectionEntry,
    SectionKind,
    SlotDescriptor,
    StateEntry,
    StateHead,
    V1Footer,
    V1Header,
    V2SlotEntry,
    V2TensorRecord,
    V2TensorsHead,
    V3DataBlocksHead,
    V3RangeIndexHead,
    V3TensorsHead,
    WofHeader,
)

NO_STATE = 0xFFFF_FFFF_FFFF_FFFF


def u32(data: bytes, at: int) -> int:
    return struct.unpack_from("<I", data, at)[0]


def put(data: bytes, at: int, value: int) -> bytes:
    """``data`` with the u32 at ``at`` replaced by ``value``."""
    out = bytearray(data)
    struct.pack_into("<I", out, at, value)
    return bytes(out)


def put8(data: bytes, at: int, value: int) -> bytes:
    out = bytearray(data)
    out[at] = value
    return bytes(out)


@dataclass(frozen=True)
class V1:
    """Where things are in a schema-1 file (read straight from the header, for patching)."""

    data: bytes

    @property
    def opt1(self) -> int:
        return u32(self.data, V1Header.ofs_opt1.offset)

    @property
    def opt2(self) -> int:
        return u32(self.data, V1Header.ofs_opt2.offset)

    @property
    def other(self) -> int:
        return u32(self.data, V1Header.ofs_other.offset)

    @property
    def n(self) -> int:
        return u32(self.data, V1Header.num_entries.offset)

    def table(self, block: str) -> int:
        return {"weights": V1Header.SIZE, "m": self.opt1, "v": self.opt2}[block]

    def entry_at(self, block: str, i: int) -> int:
        """The table position of entry ``i`` of ``block``."""
        return self.table(block) + V1Places.ENTRY * i

    def entry(self, block: str, i: int) -> int:
        return u32(self.data, self.entry_at(block, i))

    def data_start(self, block: str) -> int:
        return self.table(block) + V1Places.ENTRY * self.n


# ------------------------------------------------------------------------------------------------
# Invalid vectors as data: a table of cases, each a base file, a patch and the expected error


#: A named place of a file (see Places), or a named place and a byte delta from it (one byte).
Place = str | tuple[str, int]


@dataclass(frozen=True)
class Add:
    """A value: the field's current value plus ``delta``."""

    delta: int


@dataclass(frozen=True)
class Xor:
    """A value: the current value with the bits of ``mask`` flipped."""

    mask: int


@dataclass(frozen=True)
class At:
    """A value: the position of a place of the base file."""

    place: Place


@dataclass(frozen=True)
class Copy:
    """A value: the value of another field of the base file."""

    place: str


@dataclass(frozen=True)
class Cut:
    """The file cut after its first ``end`` bytes (``end`` < 0: that many bytes off its end)."""

    end: int


@dataclass(frozen=True)
class Append:
    raw: bytes


Value = int | bytes | Add | Xor | At | Copy
#: A patch: places and their new values, or such pairs and cuts and appends, in order.
Patch = dict[Place, Value] | tuple[tuple[Place, Value] | Cut | Append, ...]


@dataclass(frozen=True)
class Spot:
    """Where a place is: its position, its width in bytes, whether it is signed, whether it is
    a field (of a layout record, or an entry of an offset table), a whole record, an area (a
    byte range without fields of its own) or the bytes a field points at ("target"), and how
    many elements it has (a reserved byte array: several)."""

    pos: int
    width: int
    signed: bool = False
    what: str = "field"
    elements: int = 1


class Places:
    """The named places of a file, in the words of the error fields (SPEC 1.3, error fields):
    ``record`` (``tensors[2]``, ``sections[1]``), ``record.field`` and ``record.field[i]`` (the
    generated layout gives the field's offset and width: ``tensors[2].rank``,
    ``tensors[1].dims[3]``), a bare header field (``num_sections``), ``area.end``, ``end`` (the
    file's size) and ``*place`` (the position a field holds: ``*tensors[1].ofs_name``)."""

    HEADER: type = Header
    SEAL = "none"  # how a case's file is sealed unless it says (Case.seal)
    #: error field names that name an area of bytes, not a field (padding, a pool of names)
    AREAS: frozenset[str] = frozenset()

    def __init__(self, data: bytes) -> None:
        self.data = data

    def record(self, path: str) -> tuple[int, type | int] | None:
        """Position and layout class (or width) of the record ``path``; None if none is."""
        return (0, self.HEADER) if path == "header" else None

    def end(self, area: str) -> int:
        raise KeyError(f"{area}.end")

    def find(self, place: str) -> Spot:
        if place.startswith("*"):
            held = self.find(place[1:])
            value = int.from_bytes(self.data[held.pos : held.pos + held.width], "little")
            return Spot(value, 1, what="area")
        if place == "end":
            return Spot(len(self.data), 0, what="area")
        found = self.record(place)
        if found is not None:
            pos, kind = found
            if isinstance(kind, int):
                return Spot(pos, kind, what="field" if kind else "area")
            return Spot(pos, kind.SIZE, what="record")
        head, _, tail = place.rpartition(".")
        if tail == "end":
            return Spot(self.end(head), 0, what="area")
        found = self.record(head or "header")
        name = re.fullmatch(r"([a-z_0-9]+)(?:\[(\d+)\])?", tail)
        if found is None or isinstance(found[1], int) or name is None:
            raise KeyError(place)
        field = getattr(found[1], name[1], None)
        if not isinstance(field, Field):
            raise KeyError(place)
        element = field.size // field.count
        if name[2] is None:
            at = found[0] + field.offset
            return Spot(at, field.size, field.format.startswith("i"), elements=field.count)
        if int(name[2]) >= field.count:
            raise KeyError(place)
        at = found[0] + field.offset + element * int(name[2])
        return Spot(at, element, field.format.startswith("i"))

    def position(self, place: Place) -> int:
        if isinstance(place, str):
            return self.find(place).pos
        return self.find(place[0]).pos + place[1]

    def names(self, field: str) -> Spot | None:
        """The place an error field names: a place, the bytes a ``name`` or ``key`` points at
        (``tensors[1].name``: where ``tensors[1].ofs_name`` points), or one of AREAS (None).
        KeyError if it names nothing of the layout."""
        if field in self.AREAS:
            return None
        pointer = re.fullmatch(r"(.+)\.(name|key)", field)
        if pointer:
            target = self.find(f"*{pointer[1]}.ofs_{pointer[2]}")
            return Spot(target.pos, 1, what="target")
        return self.find(field)


class WofPlaces(Places):
    """WOF (onert_wof.ksy): the header, then ``tensors[i]``, the u32 offset table, and
    ``tensors.data``, the bytes after it."""

    HEADER = WofHeader
    ENTRY = 4  # ofs_entries: u4

    def record(self, path: str) -> tuple[int, type | int] | None:
        entry = re.fullmatch(r"tensors\[(\d+)\]", path)
        if entry:
            return WofHeader.SIZE + self.ENTRY * int(entry[1]), self.ENTRY
        if path == "tensors":
            return WofHeader.SIZE, 0
        if path == "tensors.data":
            n = int.from_bytes(self.data[WofHeader.num_entries.offset :][:4], "little")
            return WofHeader.SIZE + self.ENTRY * n, 0
        return super().record(path)


class V1Places(Places):
    """Schema 1 (onert_checkpoint_v1.ksy): the header, ``weights[i]``, ``m[i]`` and ``v[i]``
    (the u32 offset tables), ``weights``, ``m`` and ``v`` (each block's data, after its table)
    and ``footer``."""

    HEADER = V1Header
    ENTRY = 4  # an offset-table entry: u4

    def record(self, path: str) -> tuple[int, type | int] | None:
        f = V1(self.data)
        entry = re.fullmatch(r"(weights|m|v)\[(\d+)\]", path)
        if entry:
            return f.entry_at(entry[1], int(entry[2])), self.ENTRY
        if path in ("weights", "m", "v"):
            return f.data_start(path), 0
        if path == "footer":
            return f.other, V1Footer
        return super().record(path)


@dataclass(frozen=True)
class Case:
    """An invalid vector as data: ``base`` with ``patch`` applied (then its CRC-32Cs resealed:
    ``seal`` "all", "table" (the section table's and the header's), "header" or "none", by
    default its Places' SEAL), and the error of the first rule of spec/SPEC.md the result
    breaks: ``code``, ``field`` and ``offset`` (a number, or a place of the base file).
    ``error_as`` names the places of the error when the file is read as another revision."""

    name: str
    base: bytes
    patch: Patch
    code: str
    field: str
    offset: int | Place
    note: str
    seal: str | None = None
    error_as: type[Places] | None = None


def patched(case: Case, places: type[Places]) -> bytes:
    """The bytes of ``case``: its patch applied at places of the base file."""
    where = places(case.base)
    data = bytearray(case.base)
    ops = case.patch.items() if isinstance(case.patch, dict) else case.patch
    for op in ops:
        if isinstance(op, Cut):
            del data[op.end :]
            continue
        if isinstance(op, Append):
            data += op.raw
            continue
        place, value = op
        spot = where.find(place) if isinstance(place, str) else Spot(where.position(place), 1)
        if isinstance(value, bytes):
            data[spot.pos : spot.pos + len(value)] = value
            continue
        old = data[spot.pos : spot.pos + spot.width]
        current = int.from_bytes(old, "little", signed=spot.signed)
        if isinstance(value, Add):
            value = current + value.delta
        elif isinstance(value, Xor):
            value = current ^ value.mask
        elif isinstance(value, At):
            value = where.position(value.place)
        elif isinstance(value, Copy):
            held = where.find(value.place)
            value = int.from_bytes(case.base[held.pos : held.pos + held.width], "little")
        data[spot.pos : spot.pos + spot.width] = value.to_bytes(
            spot.width, "little", signed=spot.signed
        )
    seal = case.seal or places.SEAL
    sealed = {"all": reseal, "table": reseal_table, "header": reseal_header_only, "none": bytes}
    return sealed[seal](bytes(data))


def expected_offset(case: Case, places: type[Places]) -> int:
    if isinstance(case.offset, int):
        return case.offset
    return (case.error_as or places)(case.base).position(case.offset)


# ------------------------------------------------------------------------------------------------
# Schema 2


def u64(data: bytes, at: int) -> int:
    return struct.unpack_from("<Q", data, at)[0]


def put64(data: bytes, at: int, value: int) -> bytes:
    out = bytearray(data)
    struct.pack_into("<Q", out, at, value)
    return bytes(out)


def put_bytes(data: bytes, at: int, raw: bytes) -> bytes:
    return data[:at] + raw + data[at + len(raw) :]


def reseal(data: bytes) -> bytes:
    """Every CRC-32C of a schema-2 file recomputed from its (possibly corrupted) fields: each
    section's from its ofs_body and len_body, the table's, then the header's (SPEC.md 6.3). Used
    after a corruption whose target rule is not a checksum, so that the rule is reached."""
    buf = bytearray(data)
    n = u32(data, 24)
    if 64 + 32 * n > len(buf):
        n = 0  # the table does not fit: only the header is resealed
    for i in range(n):
        e = 64 + 32 * i
        o, n_ = u64(data, e + 8), u64(data, e + 16)
        if o + n_ <= len(buf):
            struct.pack_into("<I", buf, e + 24, crc32c.crc32c(bytes(buf[o : o + n_])))
    struct.pack_into("<I", buf, 28, crc32c.crc32c(bytes(buf[64 : 64 + 32 * n])))
    struct.pack_into("<I", buf, 4, 0)
    struct.pack_into("<I", buf, 4, crc32c.crc32c(bytes(buf[:64])))
    return bytes(buf)


@dataclass(frozen=True)
class V2:
    """Where things are in a schema-2 file, read straight from its fields (SPEC.md 6.4), at the
    offsets and sizes of the generated layout."""

    data: bytes

    @property
    def num_sections(self) -> int:
        return u32(self.data, Header.num_sections.offset)

    def entry(self, i: int) -> int:
        """Position of section-table entry i."""
        return Header.SIZE + SectionEntry.SIZE * i

    def index_of(self, kind: int) -> int:
        return [u32(self.data, self.entry(i)) for i in range(self.num_sections)].index(kind)

    def sec(self, kind: int) -> tuple[int, int]:
        """(ofs_body, len_body) of the section of ``kind``."""
        e = self.entry(self.index_of(kind))
        return u64(self.data, e + SectionEntry.ofs_body.offset), u64(
            self.data, e + SectionEntry.len_body.offset
        )

    def rec(self, k: int) -> int:
        """Position of tensor record k."""
        return self.sec(SectionKind.TENSORS)[0] + V2TensorsHead.SIZE + V2TensorRecord.SIZE * k

    @property
    def num_tensors(self) -> int:
        return u32(self.data, self.sec(SectionKind.TENSORS)[0])

    def slot_desc(self, j: int) -> int:
        return self.sec(SectionKind.OPTIMIZER)[0] + OptimizerHead.SIZE + SlotDescriptor.SIZE * j

    def slot_entry(self, j: int, t: int) -> int:
        s = self.sec(SectionKind.OPTIMIZER)[0]
        k = u32(self.data, s + OptimizerHead.num_slots.offset)
        n = u32(self.data, s + OptimizerHead.num_tensors.offset)
        return s + OptimizerHead.SIZE + SlotDescriptor.SIZE * k + V2SlotEntry.SIZE * (j * n + t)

    def state_entry(self, k: int) -> int:
        return self.sec(SectionKind.STATE)[0] + StateHead.SIZE + StateEntry.SIZE * k


class V2Places(Places):
    """Schema 2 (SPEC.md 6.4): the header, ``sections[i]``, each section's head (``tensors``,
    ``optimizer``, ``state``, ``origin``) and records (``tensors[k]``, ``optimizer.slots[j]``,
    ``optimizer.slots[j][t]``, ``state[k]``), ``data`` (the data section) and ``<area>.end``."""

    SEAL = "all"  # every CRC-32C recomputed unless a checksum is the rule tested
    AREAS = frozenset({"file", "padding", "tensors.names", "optimizer.names", "state.pool"})
    SECTIONS: ClassVar[dict[str, tuple[int, type | int]]] = {
        "tensors": (SectionKind.TENSORS, V2TensorsHead),
        "optimizer": (SectionKind.OPTIMIZER, OptimizerHead),
        "state": (SectionKind.STATE, StateHead),
        "data": (SectionKind.DATA, 0),
        "origin": (SectionKind.ORIGIN, Origin),
    }

    def record(self, path: str) -> tuple[int, type | int] | None:
        f = V2(self.data)
        if path in self.SECTIONS:
            kind, layout = self.SECTIONS[path]
            return f.sec(kind)[0], layout
        if path == "sections":
            return f.entry(0), 0
        if path == "optimizer.slots":
            return f.slot_desc(0), 0
        for pattern, where, layout in (
            (r"sections\[(\d+)\]", f.entry, SectionEntry),
            (r"tensors\[(\d+)\]", f.rec, V2TensorRecord),
            (r"optimizer\.slots\[(\d+)\]", f.slot_desc, SlotDescriptor),
            (r"optimizer\.slots\[(\d+)\]\[(\d+)\]", f.slot_entry, V2SlotEntry),
            (r"state\[(\d+)\]", f.state_entry, StateEntry),
        ):
            match = re.fullmatch(pattern, path)
            if match:
                return where(*map(int, match.groups())), layout
        return super().record(path)

    def end(self, area: str) -> int:
        f = V2(self.data)
        if area == "sections":
            return f.entry(f.num_sections)
        ofs, length = f.sec(self.SECTIONS[area][0])
        return ofs + length


def reseal_header_only(data: bytes) -> bytes:
    buf = bytearray(data)
    struct.pack_into("<I", buf, 4, 0)
    struct.pack_into("<I", buf, 4, crc32c.crc32c(bytes(buf[:64])))
    return bytes(buf)


def reseal_table(data: bytes) -> bytes:
    """The section table's CRC-32C recomputed, then the header's; every section's kept (a
    section's checksum is the rule tested, the table and header around it intact)."""
    buf = bytearray(data)
    n = u32(data, Header.num_sections.offset)
    table = bytes(buf[Header.SIZE : Header.SIZE + SectionEntry.SIZE * n])
    struct.pack_into("<I", buf, Header.section_table_crc.offset, crc32c.crc32c(table))
    return reseal_header_only(bytes(buf))


# ------------------------------------------------------------------------------------------------
# Schema 3


def _up(x: int, m: int) -> int:
    return -(-x // m) * m


def range_alignment(length: int) -> int:
    """a(len) of SPEC.md 7.3: the largest alignment for 64 bytes or more, else the smallest
    power of two not below ``length`` (1 for 0 or 1 byte)."""
    if length >= MAX_RANGE_ALIGNMENT:
        return MAX_RANGE_ALIGNMENT
    return 1 if length <= 1 else 1 << (length - 1).bit_length()


class V3Places(V2Places):
    """Schema 3 (SPEC.md 7): schema 2's container, optimizer head and slot descriptors,
    state and origin, with the tensors section's columns and schema 3's slot entries:
    ``tensors.columns`` (the head), ``tensors.<column>`` (a whole column: ``tensors.len_data``,
    ``tensors.order``, ``tensors.dims``, ``tensors.names``), ``tensors[k].<column>`` or
    ``tensors.<column>[k]`` (record k's element: ``tensors[2].len_data``, ``tensors[1].order``),
    ``tensors[k].name`` (record k's bytes of the names column), ``optimizer.slots[j][t].len_data``
    (one u64 per slot entry), and the ranges the placement of 7.3 gives in the data section:
    ``tensors[k].range`` and ``optimizer.slots[j][t].range`` (``.end``: where one ends). The
    columns are those of V3TensorsHead.ARRAYS in that order, then dims and names, each at the
    next multiple of V3_COLUMN_ALIGNMENT from the section's start. The optional sections of
    7.4 and 7.5: ``data_blocks`` and ``range_index`` (their heads: ``data_blocks.num_blocks``,
    ``range_index.group_shift``), the arrays after each head, whole or by element
    (``data_blocks.crc[i]``, ``range_index.start[i]``, ``range_index.position[k]``, counted as
    the rules B5 and I5 count them), and ``data.block[i]``, block i of the data section in the
    data_blocks section's block size."""

    AREAS = frozenset({"file", "padding", "optimizer.names", "state.pool"})
    SECTIONS: ClassVar[dict[str, tuple[int, type | int]]] = {
        **V2Places.SECTIONS,
        "tensors": (SectionKind.TENSORS, V3TensorsHead),
        "data_blocks": (DATA_BLOCKS_KIND, V3DataBlocksHead),
        "range_index": (RANGE_INDEX_KIND, V3RangeIndexHead),
    }
    #: the arrays after the head of each optional section, in file order; range_index's
    #: position (the inverse of the order column, present with that column: the generated
    #: V3_RANGE_INDEX_SECTION_POSITION) is not among V3RangeIndexHead.ARRAYS, which lists
    #: arrays present by a bit of their own section
    OPTIONAL_ARRAYS: ClassVar[dict[str, tuple[tuple[str, str], ...]]] = {
        "data_blocks": tuple((name, fmt) for name, fmt, _ in V3DataBlocksHead.ARRAYS),
        "range_index": (
            *((name, fmt) for name, fmt, _ in V3RangeIndexHead.ARRAYS),
            (POSITION.name, POSITION.format),
        ),
    }
    #: the columns after the fixed-size ones: the column whose bit says they are present and
    #: whose values give their length
    TRAILING: ClassVar[dict[str, str]] = {"dims": "rank", "names": "len_name"}
    COLUMNS = frozenset([name for name, _, _ in V3TensorsHead.ARRAYS] + list(TRAILING))

    def columns(self) -> dict[str, Spot]:
        """Every present column of the tensors section, in file order."""
        s = V2(self.data).sec(SectionKind.TENSORS)[0]
        n = u32(self.data, s + V3TensorsHead.num_tensors.offset)
        bits = u32(self.data, s + V3TensorsHead.columns.offset)
        out: dict[str, Spot] = {}
        pos = V3TensorsHead.SIZE
        formats = {name: (fmt, bit) for name, fmt, bit in V3TensorsHead.ARRAYS}
        formats["dims"] = (DIMS.format, formats["rank"][1])
        formats["names"] = ("u1", formats["len_name"][1])
        for name, (fmt, bit) in formats.items():
            if bit and not bits & bit:
                continue
            pos = _up(pos, COLUMN_ALIGNMENT)
            width = np.dtype(fmt).itemsize
            count = n
            if name == "dims":
                ranks = self.data[out["rank"].pos : out["rank"].pos + n]
                count = sum(r for r in ranks if r != NO_SHAPE)
            elif name == "names":
                count = sum(self._value(out["len_name"], k) for k in range(n))
            out[name] = Spot(s + pos, width * count, fmt.startswith("i"), elements=count)
            pos += width * count
        return out

    def value(self, place: str) -> int:
        """The integer the field ``place`` holds (``data_blocks.num_blocks``)."""
        return self._value(self.find(place), 0)

    def arrays(self, section: str) -> dict[str, Spot]:
        """The arrays after the head of the optional ``section``, back to back: data_blocks'
        crc (num_blocks of them, B5), range_index's start ((1 + K) * num_groups, K the
        optimizer section's num_slots, I5) and, with an order column, its position (n)."""
        at = self.find(section).pos + self.SECTIONS[section][1].SIZE
        kinds = [u32(self.data, V2(self.data).entry(i)) for i in range(V2(self.data).num_sections)]
        counts = {"crc": 0, "start": 0, "position": 0}
        if section == "data_blocks":
            counts["crc"] = self.value(f"{section}.num_blocks")
        else:
            slots = self.value("optimizer.num_slots") if SectionKind.OPTIMIZER in kinds else 0
            counts["start"] = (1 + slots) * self.value(f"{section}.num_groups")
            if SectionKind.TENSORS in kinds and "order" in self.columns():
                counts["position"] = self.value("tensors.num_tensors")
        out: dict[str, Spot] = {}
        for name, fmt in self.OPTIONAL_ARRAYS[section]:
            width = np.dtype(fmt).itemsize
            if name == "position" and not counts[name]:
                continue
            out[name] = Spot(at, width * counts[name], elements=counts[name])
            at += width * counts[name]
        return out

    def block(self, i: int) -> Spot:
        """Block i of the data section: 2**block_shift bytes from i * 2**block_shift (the last
        one shorter), the block size of the data_blocks section's head (7.4)."""
        size = 1 << self.value("data_blocks.block_shift")
        data, length = V2(self.data).sec(SectionKind.DATA)
        if i * size >= length:
            raise KeyError(f"data.block[{i}]")
        return Spot(data + i * size, min(size, length - i * size), what="area")

    def element(self, column: str, k: int) -> int:
        """Record k's value in ``column``."""
        return self._value(self.columns()[column], k)

    def _value(self, spot: Spot, k: int) -> int:
        width = spot.width // spot.elements
        at = spot.pos + width * k
        return int.from_bytes(self.data[at : at + width], "little", signed=spot.signed)

    def ranges(self) -> dict[str, Spot]:
        """Every range of the data section (SPEC.md 7.3): the tensors' in data order, then
        each slot's in the same order, each at the next multiple of a(len)."""
        s = V2(self.data).sec(SectionKind.TENSORS)[0]
        n = u32(self.data, s + V3TensorsHead.num_tensors.offset)
        cols = self.columns()
        order = [self.element("order", k) for k in range(n)] if "order" in cols else range(n)
        walk = [(f"tensors[{k}]", self.element("len_data", k)) for k in order]
        if SectionKind.OPTIMIZER in [
            u32(self.data, V2(self.data).entry(i)) for i in range(V2(self.data).num_sections)
        ]:
            o = V2(self.data).sec(SectionKind.OPTIMIZER)[0]
            for j in range(u32(self.data, o + OptimizerHead.num_slots.offset)):
                for k in order:
                    at = self.record(f"optimizer.slots[{j}][{k}]")[0]
                    length = int.from_bytes(self.data[at : at + SLOT_ENTRY.size], "little")
                    if length != NO_STATE:
                        walk.append((f"optimizer.slots[{j}][{k}]", length))
        data = V2(self.data).sec(SectionKind.DATA)[0]
        out, pos = {}, 0
        for name, length in walk:
            pos = _up(pos, range_alignment(length))
            out[f"{name}.range"] = Spot(data + pos, length, what="area")
            pos += length
        return out

    def record(self, path: str) -> tuple[int, type | int] | None:
        if re.fullmatch(r"tensors\[\d+\]", path):
            return None  # a record is a row of the columns, not a structure of its own
        entry = re.fullmatch(r"optimizer\.slots\[(\d+)\]\[(\d+)\]", path)
        if entry:
            o = V2(self.data).sec(SectionKind.OPTIMIZER)[0]
            k = u32(self.data, o + OptimizerHead.num_slots.offset)
            n = u32(self.data, o + OptimizerHead.num_tensors.offset)
            j, t = int(entry[1]), int(entry[2])
            at = o + OptimizerHead.SIZE + SlotDescriptor.SIZE * k + SLOT_ENTRY.size * (j * n + t)
            return at, SLOT_ENTRY.size
        return super().record(path)

    def find(self, place: str) -> Spot:
        if place.endswith(".range"):
            return self.ranges()[place]
        block = re.fullmatch(r"data\.block\[(\d+)\]", place)
        if block:
            return self.block(int(block[1]))
        array = re.fullmatch(r"(data_blocks|range_index)\.([a-z_]+)(?:\[(\d+)\])?", place)
        if array and array[2] in dict(self.OPTIONAL_ARRAYS[array[1]]):
            spot = self.arrays(array[1]).get(array[2])
            if spot is None:
                raise KeyError(place)  # range_index.position without an order column
            if array[3] is None:
                return spot
            if int(array[3]) >= spot.elements:
                raise KeyError(place)
            width = spot.width // spot.elements
            return Spot(spot.pos + width * int(array[3]), width)
        name = re.fullmatch(r"tensors\[(\d+)\]\.name", place)
        if name:
            k = int(name[1])
            return Spot(self.name_at(k), self.element("len_name", k), what="target")
        slot = re.fullmatch(r"(optimizer\.slots\[\d+\]\[\d+\])\.len_data", place)
        if slot:
            at, width = self.record(slot[1])
            return Spot(at, width)
        column = re.fullmatch(r"tensors(?:\[(\d+)\])?\.([a-z_]+)(?:\[(\d+)\])?", place)
        if column and column[2] in self.COLUMNS and not (column[1] and column[3]):
            if column[2] not in self.columns():
                raise KeyError(place)  # a column the file does not have
            spot = self.columns()[column[2]]
            k = column[1] or column[3]
            if k is None:
                return spot
            if column[2] in self.TRAILING or int(k) >= spot.elements:
                raise KeyError(place)
            width = spot.width // spot.elements
            return Spot(spot.pos + width * int(k), width, spot.signed)
        return super().find(place)

    def names(self, field: str) -> Spot | None:
        if re.fullmatch(r"tensors\[\d+\]\.name", field):
            return self.find(field)
        return super().names(field)

    def name_at(self, k: int) -> int:
        """Where record k's name starts in the names column."""
        return self.columns()["names"].pos + sum(self.element("len_name", i) for i in range(k))

    def end(self, area: str) -> int:
        if area.endswith(".range") or area.startswith("tensors."):
            spot = self.find(area)
            return spot.pos + spot.width
        return super().end(area)
