"""What schemas 2 and 3 write the same way (spec/SPEC.md 6.4, 6.10 and 7): the header and the
section table with their CRC-32C, the sections in order at multiples of 64, the data section
last, and the streaming of the data ranges with the data section's CRC-32C summed by a second
thread while the bytes are written.

Each schema supplies what differs, its sections as :class:`Part` values (their bodies, or how
to make a body once its offset is known) and where its data ranges go (revisions/v2/write.py:
each at a multiple of 64; revisions/v3/write.py: placed by size); the one :func:`plan` puts the
sections in order, lays them out and checksums them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Generator, Iterable, Iterator
from dataclasses import dataclass

import numpy as np
from onert_checkpoint_generated import structs
from onert_checkpoint_generated.layout import Header, SectionEntry

from ..errors import error_for
from ..model import Buffer
from ..revisions.blocks import data_view
from .constants import (
    FLAG_REQUIRED,
    HEADER_SIZE,
    MAX_SECTIONS,
    SECTION_ENTRY_SIZE,
    SectionKind,
    align,
    crc,
    header_crc,
)
from .data_blocks import KIND as BLOCKS_KIND
from .data_blocks import BlockCrcs, section_body
from .running_crc import RunningCrc

__all__ = ["PIECE_BYTES", "SMALL_RANGE", "Part", "Pieces", "Plan", "Section", "chunks", "finish",
           "padding", "plan", "stream"]

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
    #: schema 3's data_blocks section (spec/SPEC.md 7.4): log2 of its block size, None
    #: without one; its body is a placeholder while ``pending``
    block_shift: int | None = None


@dataclass(frozen=True)
class Part:
    """A section a revision's codec plans: its kind, flags and body length, and its body, or
    the function that makes it (or its :data:`Pieces`) from the section's offset and the data
    section's (a body that holds absolute offsets: names, keys, data ranges)."""

    kind: int
    flags: int
    length: int
    body: bytes | Callable[[int, int], bytes | Pieces]


#: The sections of every file in this order (6.4); then the others by kind, then the data.
_FIRST = (SectionKind.TENSORS, SectionKind.OPTIMIZER, SectionKind.STATE, SectionKind.ORIGIN)


def plan(parts: list[Part], ranges: list[tuple[int, Buffer]], version: int, data_crc: bool, *,
         title: str, has_data: bool, block_shift: int | None = None) -> Plan:
    """The plan of a file of ``parts`` (in any order: they are put in 6.4's, each at the next
    multiple of 64 after the header and the table) and the data ranges ``ranges`` ((offset from
    the data section's start, buffer), in file order), whose revision ``title`` names in
    messages. ``has_data``: the file has a data section (schema 3 lists only the ranges with
    bytes). ``data_crc=False`` leaves the data section's CRC to :func:`stream`. With
    ``block_shift``, ``parts`` holds schema 3's data_blocks section (its body a placeholder of
    the right size), whose block CRCs are summed with the data section's, in the same pass."""
    parts = sorted(parts, key=lambda p: (p.kind not in _FIRST, p.kind))
    if len(parts) + has_data > MAX_SECTIONS:
        raise error_for(
            "not_representable", None, None, f"{title} holds at most {MAX_SECTIONS} sections"
        )
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
        blocks = None if block_shift is None else BlockCrcs(block_shift)
        value = 0 if pending else _data_crc(data_start, placed, blocks)
        sections.append(
            Section(int(SectionKind.DATA), FLAG_REQUIRED, data_start, None, data_len, value)
        )
        file_size = data_start + data_len
        if blocks is not None and not pending:
            sections = _with_blocks(sections, block_shift, blocks.blocks())
    header, table = _head(sections, file_size, version)
    return Plan(header, table, sections, placed, file_size, pending, version, block_shift)


def _length_and_crc(body: bytes | Pieces) -> tuple[int, int]:
    length = value = 0
    for piece in (body,) if isinstance(body, bytes) else body():  # made again when written
        length += len(piece)
        value = crc(piece, value)
    return length, value


def _with_blocks(sections: list[Section], shift: int | None, crcs: list[int]) -> list[Section]:
    """``sections`` with the data_blocks section's body holding ``crcs``."""
    assert shift is not None
    body = section_body(shift, crcs)
    return [dataclasses.replace(s, body=body, crc=crc(body)) if s.kind == BLOCKS_KIND else s
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


def _data_crc(start: int, placed: list[tuple[int, Buffer]], blocks: BlockCrcs | None = None) -> int:
    """The data section's CRC (and, into ``blocks``, its blocks' CRCs)."""
    add = crc if blocks is None else blocks
    value = 0
    for piece in _pieces(start, placed):
        value = add(piece, value)
    return value


def finish(p: Plan, value: int, blocks: list[int] | None = None) -> Plan:
    """``p`` with the data section's CRC ``value`` in its section table and header (and the
    data_blocks section's CRCs ``blocks``)."""
    sections = [*p.sections[:-1], dataclasses.replace(p.sections[-1], crc=value)]
    if blocks is not None:
        sections = _with_blocks(sections, p.block_shift, blocks)
    header, table = _head(sections, p.file_size, p.version)
    return dataclasses.replace(p, header=header, table=table, sections=sections, pending=False)


def chunks(p: Plan) -> Iterator[bytes | memoryview]:
    """The file's bytes in order: header, section table, each section, data ranges last."""
    if p.pending:
        blocks = None if p.block_shift is None else BlockCrcs(p.block_shift)
        value = _data_crc(p.sections[-1].offset, p.data, blocks)
        p = finish(p, value, None if blocks is None else blocks.blocks())
    yield from stream(p)


def stream(p: Plan) -> Generator[bytes | memoryview, None, list[tuple[int, bytes]]]:
    """The file's bytes in order, as :func:`chunks`, for a writer that can write at an offset:
    with a pending plan the data section's CRC is computed from the chunks as they go (by a
    second thread, while they are written), and the generator returns
    ``[(0, header + section table)]`` to be written over the placeholders."""
    yield p.header
    yield p.table
    pos = HEADER_SIZE + len(p.table)
    blocks = BlockCrcs(p.block_shift) if p.pending and p.block_shift is not None else None
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
        done = finish(p, running.value(), None if blocks is None else blocks.blocks())
        finished = True
    finally:
        if running is not None and not finished:
            running.close(cancel=True)  # abandoned: the writer failed or was interrupted
    patches = [(0, done.header + done.table)]
    # the data_blocks section precedes the data: its CRCs are written over its placeholder
    patches += [(s.offset, s.body) for s in done.sections
                if s.kind == BLOCKS_KIND and isinstance(s.body, bytes)]
    return patches
