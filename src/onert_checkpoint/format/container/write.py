"""What schemas 2 and 3 write the same way (spec/SPEC.md 6.4 to 6.10 and 7): the header and
the section table with their CRC-32C, the sections in order at multiples of 64, the state,
origin and kept sections, the optimizer section's head, descriptors and names, the data section
last, and the streaming of the data ranges with the data section's CRC-32C summed by a second
thread while the bytes are written.

Each schema supplies what differs, its sections as :class:`Part` values (their bodies, or how
to make a body once its offset is known) and where its data ranges go (revisions/v2/write.py:
each at a multiple of 64; revisions/v3/write.py: placed by size); the one :func:`plan` puts the
sections in order, lays them out and checksums them.
"""

from __future__ import annotations

import dataclasses
import itertools
import re
import struct
from collections.abc import Callable, Generator, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
from onert_checkpoint_generated import structs
from onert_checkpoint_generated.layout import (
    Header,
    OptimizerHead,
    SectionEntry,
    SlotDescriptor,
    StateEntry,
)

from ..model import OPTIMIZER_SLOTS, Buffer, Checkpoint
from ..model import Section as KeptSection
from ..revisions.blocks import data_view, refuse
from ..revisions.registry import find
from .constants import (
    FLAG_REQUIRED,
    FOOTERLESS,
    HEADER_SIZE,
    MAX_KEY_LEN,
    MAX_NAME_LEN,
    MAX_SECTIONS,
    MAX_SLOTS,
    MAX_STATE_ENTRIES,
    MAX_VALUE_LEN,
    OPTIMIZER_CODES,
    OPTIMIZER_HEAD_SIZE,
    ORIGIN_DIALECTS,
    ORIGIN_REVISIONS,
    SECTION_ENTRY_SIZE,
    SECTION_HEAD_SIZE,
    SECTION_KINDS,
    SLOT_DESCRIPTOR_SIZE,
    STATE_ENTRY_SIZE,
    VALUE_TYPES,
    WELL_KNOWN_KEYS,
    SectionKind,
    align,
    crc,
    header_crc,
)
from .running_crc import RunningCrc

__all__ = ["PIECE_BYTES", "SMALL_RANGE", "Part", "Pieces", "Plan", "Section", "chunks",
           "common_parts", "finish", "optimizer_part", "optimizer_slots", "origin_of", "padding",
           "plan", "stream", "utf8"]

#: Ranges smaller than this are copied into a gathering piece; larger ones are handed out as
#: views of their arrays (zero copy).
SMALL_RANGE = 4096
#: A gathering piece is flushed once it holds this many bytes.
PIECE_BYTES = 1 << 20


#: A section body made piece by piece, again each time it is called: a body of millions of
#: records is never whole in memory (schema 2's tensors section).
Pieces = Callable[[], Iterable[bytes | memoryview]]


@dataclass(frozen=True)
class Section:
    kind: int
    flags: int
    offset: int
    body: bytes | Pieces | None  # None: the data section, streamed
    length: int
    crc: int


@dataclass(frozen=True)
class Plan:
    header: bytes
    table: bytes
    sections: list[Section]
    #: data ranges in file order: (offset, buffer)
    data: list[tuple[int, Buffer]]
    file_size: int
    #: the data section's CRC is not computed yet (``plan(..., data_crc=False)``): the header
    #: and the section table are placeholders until :func:`finish`
    pending: bool = False
    #: the header's version byte
    version: int = 2
    #: the part whose body sums the data (``Part.sums``); its body is a placeholder while
    #: ``pending``
    summed: Part | None = None


@dataclass(frozen=True)
class Part:
    """A section a revision's codec plans: its kind, flags and body length, and its body, or
    the function that makes it (or its :data:`Pieces`) from the section's offset and the data
    section's (a body that holds absolute offsets: names, keys, data ranges)."""

    kind: int
    flags: int
    length: int
    body: bytes | Callable[[int, int], bytes | Pieces]
    #: for a body made from sums over the data section's bytes (schema 3's data_blocks): makes
    #: a fresh summer, ``crc(piece, value)`` that also sums, whose ``body()`` replaces ``body``
    sums: Callable[[], Any] | None = None


#: The sections of every file in this order (6.4); then the others by kind, then the data.
_FIRST = (SectionKind.TENSORS, SectionKind.OPTIMIZER, SectionKind.STATE, SectionKind.ORIGIN)


def plan(parts: list[Part], ranges: list[tuple[int, Buffer]], version: int, data_crc: bool, *,
         title: str, has_data: bool) -> Plan:
    """The plan of a file of ``parts`` (in any order: they are put in 6.4's, each at the next
    multiple of 64 after the header and the table) and the data ranges ``ranges`` ((offset from
    the data section's start, buffer), in file order), whose revision ``title`` names in
    messages. ``has_data``: the file has a data section (schema 3 lists only the ranges with
    bytes). ``data_crc=False`` leaves the data section's CRC to :func:`stream`. With
    a part with ``sums`` (schema 3's data_blocks section), its body's sums are made in the same
    pass as the data section's CRC."""
    parts = sorted(parts, key=lambda p: (p.kind not in _FIRST, p.kind))
    summed = next((p for p in parts if p.sums is not None), None)
    if len(parts) + has_data > MAX_SECTIONS:
        refuse(f"{title} holds at most {MAX_SECTIONS} sections")
    offsets = []
    pos = HEADER_SIZE + SECTION_ENTRY_SIZE * (len(parts) + has_data)
    for p in parts:
        pos = align(pos)
        offsets.append(pos)
        pos += p.length
    data_start = align(pos) if has_data else pos  # without data, where the file ends
    sections = []
    for p, ofs in zip(parts, offsets):
        body = p.body if isinstance(p.body, bytes) else p.body(ofs, data_start)
        sections.append(Section(int(p.kind), p.flags, ofs, body, *_length_and_crc(body)))
    placed = [(data_start + r, b) for r, b in ranges]
    file_size = data_start
    pending = has_data and not data_crc
    if has_data:
        data_len = placed[-1][0] + placed[-1][1].nbytes - data_start if placed else 0
        blocks = _new_sums(summed)
        value = 0 if pending else _data_crc(data_start, placed, blocks)
        sections.append(Section(int(SectionKind.DATA), FLAG_REQUIRED, data_start, None, data_len,
                                value))
        file_size = data_start + data_len
        if blocks is not None and not pending:
            sections = _with_sums(sections, summed, blocks)
    header, table = _head(sections, file_size, version)
    return Plan(header, table, sections, placed, file_size, pending, version, summed)


def _length_and_crc(body: bytes | Pieces) -> tuple[int, int]:
    length = value = 0
    for piece in (body,) if isinstance(body, bytes) else body():  # made again when written
        length += len(piece)
        value = crc(piece, value)
    return length, value


def _new_sums(summed: Part | None) -> Any:
    return None if summed is None or summed.sums is None else summed.sums()


def _with_sums(sections: list[Section], summed: Part | None, sums: Any) -> list[Section]:
    """``sections`` with the summed part's body made from ``sums`` (of the data)."""
    assert summed is not None
    body = sums.body()
    return [dataclasses.replace(s, body=body, crc=crc(body)) if s.kind == summed.kind else s
            for s in sections]


def _head(sections: list[Section], file_size: int, version: int) -> tuple[bytes, bytes]:
    """The header (with ``version`` as its version byte) and the section table, with their
    CRCs."""
    table = np.zeros(len(sections), SectionEntry.DTYPE)
    for i, s in enumerate(sections):
        table[i] = (s.kind, s.flags, s.offset, s.length, s.crc, 0)
    table_bytes = table.tobytes()
    fields = {"version": version, "header_crc": 0, "len_file": file_size,
              "num_sections": len(sections), "section_table_crc": crc(table_bytes)}
    header = bytearray(structs.Header.build(fields))
    at = Header.header_crc.offset
    header[at : at + Header.header_crc.size] = header_crc(header).to_bytes(4, "little")
    return bytes(header), table_bytes


def padding(n: int) -> bytes | memoryview:
    return _ZEROS[:n] if n <= len(_ZEROS) else bytes(n)


_ZEROS = memoryview(bytes(4096))


def _pieces(start: int, placed: list[tuple[int, Buffer]]) -> Iterator[bytes | memoryview]:
    """The data section's bytes in order: ranges of :data:`SMALL_RANGE` bytes or more as views
    of their arrays, the rest (and the padding) gathered into pieces of about
    :data:`PIECE_BYTES` (many small ranges cost few writes and CRC calls)."""
    gather = bytearray()
    pos = start
    for ofs, b in placed:
        if ofs > pos:
            gather += padding(ofs - pos)
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


def _data_crc(start: int, placed: list[tuple[int, Buffer]], blocks: Any = None) -> int:
    """The data section's CRC (and, into ``blocks``, a summed section's sums)."""
    add = crc if blocks is None else blocks
    value = 0
    for piece in _pieces(start, placed):
        value = add(piece, value)
    return value


def finish(p: Plan, value: int, blocks: Any = None) -> Plan:
    """``p`` with the data section's CRC ``value`` in its section table and header (and the
    summed section's body made from ``blocks``, its sums)."""
    sections = [*p.sections[:-1], dataclasses.replace(p.sections[-1], crc=value)]
    if blocks is not None:
        sections = _with_sums(sections, p.summed, blocks)
    header, table = _head(sections, p.file_size, p.version)
    return dataclasses.replace(p, header=header, table=table, sections=sections, pending=False)


def chunks(p: Plan) -> Iterator[bytes | memoryview]:
    """The file's bytes in order: header, section table, each section, data ranges last."""
    if p.pending:
        blocks = _new_sums(p.summed)
        p = finish(p, _data_crc(p.sections[-1].offset, p.data, blocks), blocks)
    yield from stream(p)


def stream(p: Plan) -> Generator[bytes | memoryview, None, list[tuple[int, bytes]]]:
    """The file's bytes in order, as :func:`chunks`, for a writer that can write at an offset:
    with a pending plan the data section's CRC is computed from the chunks as they go (by a
    second thread, while they are written), and the generator returns
    ``[(0, header + section table)]`` to be written over the placeholders."""
    yield p.header
    yield p.table
    pos = HEADER_SIZE + len(p.table)
    summed = p.summed if p.pending else None
    blocks = _new_sums(summed)
    running = RunningCrc(blocks or crc) if p.pending else None
    finished = False
    try:
        for s in p.sections:
            if s.offset > pos:
                yield padding(s.offset - pos)
            if s.body is not None:
                yield from (s.body,) if isinstance(s.body, bytes) else s.body()
                pos = s.offset + s.length
                continue
            add = None if running is None else running.add
            for piece in _pieces(s.offset, p.data):
                if add is not None:
                    add(piece)
                yield piece
        if running is None:
            return []
        done = finish(p, running.value(), blocks)
        finished = True
    finally:
        if running is not None and not finished:
            running.close(cancel=True)  # abandoned: the writer failed or was interrupted
    patches = [(0, done.header + done.table)]
    # the summed section precedes the data: its sums are written over its placeholder
    patches += [(s.offset, s.body) for s in done.sections
                if summed is not None and s.kind == summed.kind and isinstance(s.body, bytes)]
    return patches


#: An optimizer's code, its slots' names as UTF-8 and as given (``optimizer_slots``).
Slots = tuple[int, list[bytes], list[str]]
#: The largest optimizer and section kind (their fields' widths in onert_checkpoint_common.ksy).
_OPTIMIZER_KIND_MAX = int(np.iinfo(OptimizerHead.kind.format).max)
_SECTION_KIND_MAX = int(np.iinfo(SectionEntry.kind.format).max)


def origin_of(ckpt: Checkpoint) -> dict[str, object] | None:
    """What a schema-2 (or schema-3) file keeps of ``ckpt``'s schema-1 or WOF origin (the
    origin section it was read with for schema 2 and 3)."""
    rev = find(ckpt.revision)
    if rev is None or rev.holds_everything:
        return ckpt.layout.origin if rev is not None else None
    return {"revision": rev.name, "dialect": ckpt.dialect if rev.dialects else None,
            "num_entries": ckpt.table_length, "footerless": "footerless" in ckpt.layout.quirks}


def utf8(text: object, what: str, limit: int) -> bytes:
    if not isinstance(text, str):
        refuse(f"{what} must be a string, not {type(text).__name__}")
    try:
        raw = text.encode("utf-8")  # encoded once: a save of 10,000 names pays it 10,000 times
    except UnicodeEncodeError:
        refuse(f"{what} {text!r} is not encodable as UTF-8")
    if not 1 <= len(raw) <= limit:
        refuse(f"{what} {text!r} must have 1..{limit} UTF-8 bytes")
    return raw


def optimizer_slots(ckpt: Checkpoint, index: np.ndarray) -> Slots | None:
    """The optimizer's code, slot names (UTF-8) and slots, checked against the tensor records'
    ``index`` (None without an optimizer)."""
    opt = ckpt.optimizer
    if opt is None:
        return None
    if opt.kind in OPTIMIZER_CODES:
        code = OPTIMIZER_CODES[opt.kind]
        slot_names = list(OPTIMIZER_SLOTS[opt.kind])
        if set(opt.slots) != set(slot_names):
            refuse(f"{opt.kind} has the slots {slot_names}, not {list(opt.slots)}")
    else:
        m = re.fullmatch(r"optimizer_(\d+)", opt.kind)
        if m is None or int(m.group(1)) > _OPTIMIZER_KIND_MAX:
            refuse(f"optimizer kind {opt.kind!r} has no schema-2 code")
        code = int(m.group(1))
        slot_names = list(opt.slots)
    if len(slot_names) > MAX_SLOTS:
        refuse(f"schema 2 holds at most {MAX_SLOTS} optimizer slots")
    raw = [utf8(n, "slot name", MAX_NAME_LEN) for n in slot_names]
    if len(set(raw)) != len(raw):
        refuse("two optimizer slots have the same name")
    present = set(index.tolist())
    for name in slot_names:
        orphans = sorted(set(opt.slots[name]) - present)
        if orphans:
            refuse(f"slot {name!r} has state for entries {orphans} that have no tensor")
    return code, raw, slot_names


def _state_entries(ckpt: Checkpoint) -> tuple[np.ndarray, list[bytes]]:
    if len(ckpt.state) > MAX_STATE_ENTRIES:
        refuse(f"schema 2 holds at most {MAX_STATE_ENTRIES} state entries")
    ent = np.zeros(len(ckpt.state), StateEntry.DTYPE)
    blobs: list[bytes] = []
    for k, (key, value) in enumerate(ckpt.state.items()):
        raw_key = utf8(key, "state key", MAX_KEY_LEN)
        payload: bytes | None = None
        if isinstance(value, (bool, np.bool_)):
            refuse(f"state {key!r}: booleans have no schema-2 type (store 0 or 1)")
        if isinstance(value, (int, np.integer)):
            v = int(value)
            if not -(1 << 63) <= v < 1 << 63:
                refuse(f"state {key!r}: {v} does not fit in int64")
            vt, bits = "int", v & 0xFFFF_FFFF_FFFF_FFFF
        elif isinstance(value, (float, np.floating)):
            vt, bits = "float", int.from_bytes(struct.pack("<d", float(value)), "little")
        elif isinstance(value, str):
            vt, bits = "string", 0
            try:
                payload = value.encode("utf-8")
            except UnicodeEncodeError:
                refuse(f"state {key!r}: the string is not encodable as UTF-8")
        elif isinstance(value, (bytes, bytearray, memoryview)):
            vt, bits, payload = "bytes", 0, bytes(value)
        else:
            refuse(f"state {key!r}: {type(value).__name__} is not int, float, str or bytes")
        want = WELL_KNOWN_KEYS.get(key)
        if want is not None and (want != vt or (vt == "int" and int(value) < 0)):
            refuse(f"state {key!r} is a well-known key of type {want}"
                  + (" (non-negative)" if want == "int" else ""))
        if payload is not None and len(payload) > MAX_VALUE_LEN:
            refuse(f"state {key!r}: values have at most {MAX_VALUE_LEN} bytes")
        ent["len_key"][k] = len(raw_key)
        ent["value_type"][k] = VALUE_TYPES[vt]
        ent["value"][k] = bits
        ent["len_value"][k] = 0 if payload is None else len(payload)
        blobs.append(raw_key)
        if payload is not None:
            blobs.append(payload)
    return ent, blobs


def optimizer_part(slots: Slots, n: int, entry_size: int, entries: Callable[[int], bytes]) -> Part:
    """The optimizer section (6.7) of ``n`` tensors: its head, one descriptor per slot, the slot
    entries (``entry_size`` bytes each, made from the data section's offset), the names."""
    code, raw_names, _ = slots
    k = len(raw_names)
    table = SLOT_DESCRIPTOR_SIZE * k + entry_size * k * n

    def body(start: int, data_start: int) -> bytes:
        desc = np.zeros(k, SlotDescriptor.DTYPE)
        desc["len_name"] = lengths = np.array([len(raw) for raw in raw_names], np.int64)
        desc["ofs_name"] = start + OPTIMIZER_HEAD_SIZE + table + np.cumsum(lengths) - lengths
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
             for s in _kept_sections(ckpt)]
    if state_ent is not None:
        length = SECTION_HEAD_SIZE + STATE_ENTRY_SIZE * len(state_ent) + sum(map(len, state_blobs))
        parts.append(Part(SectionKind.STATE, FLAG_REQUIRED, length,
                          lambda start, _: _state_body(state_ent, state_blobs, start)))
    if origin is not None:
        body = _origin_body(origin)
        parts.append(Part(SectionKind.ORIGIN, 0, len(body), body))
    return parts


def _state_body(state_ent: np.ndarray, state_blobs: list[bytes], start: int) -> bytes:
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


def _kept_sections(ckpt: Checkpoint) -> list[KeptSection]:
    """The kept sections of kinds the specification does not define, by kind (6.4's order)."""
    extra = sorted(ckpt.layout.sections, key=lambda s: s.kind)
    for s in extra:
        if s.kind in SECTION_KINDS.values() or not 0 <= s.kind <= _SECTION_KIND_MAX:
            refuse(f"section kind {s.kind} is reserved by the specification or out of range")
    for a, b in itertools.pairwise(extra):
        if a.kind == b.kind:
            refuse(f"two sections of kind {a.kind}: schema 2 holds at most one of each kind")
    return extra


def _origin_body(origin: dict[str, object]) -> bytes:
    """The origin section (6.9) recording ``origin``."""
    if (origin.get("revision") not in ORIGIN_REVISIONS
        or origin.get("dialect") not in ORIGIN_DIALECTS):
        refuse(f"origin {origin!r} names an unknown revision or dialect")
    origin_n = origin.get("num_entries")
    if (isinstance(origin_n, bool) or not isinstance(origin_n, (int, np.integer))
        or not 0 <= int(origin_n) <= 0xFFFF_FFFF_FFFF_FFFF):
        refuse(f"origin num_entries {origin_n!r} is not an integer in 0..2**64-1")
    return structs.Origin.build({"revision": ORIGIN_REVISIONS[str(origin["revision"])],
                                 "dialect": ORIGIN_DIALECTS[origin["dialect"]],
                                 "flags": FOOTERLESS if origin.get("footerless") else 0,
                                 "num_entries": int(origin_n)})
