"""The section table of a schema-2 file: rules T1 to T5 (spec/SPEC.md, 6.4.2 and 6.5)."""

from __future__ import annotations

import numpy as np
from onert_checkpoint_generated.layout import Header, SectionEntry

from ..model import Section
from .constants import (
    ALIGNMENT,
    FLAG_REQUIRED,
    HEADER_SIZE,
    KIND_FLAGS,
    KIND_NAMES,
    MAX_SECTIONS,
    SECTION_ENTRY_SIZE,
    SECTION_KINDS,
    align,
    crc,
    section_order_key,
)
from .rules import SectionInfo, check_padding, fail

__all__ = ["SectionInfo", "check_section_crc", "check_section_table", "unknown_section"]


def check_section_crc(view: memoryview, info: SectionInfo, computed: int | None = None) -> None:
    """Rule T4f: the CRC-32C of the section's body (one call over the whole body, unless
    ``computed`` is given: the data section's, combined from its blocks' CRCs)."""
    if computed is None:
        computed = crc(view[info.start : info.end])
    if computed != info.crc:
        fail("section_checksum", f"sections[{info.index}].crc",
             info.entry_offset + SectionEntry.crc.offset,
             f"CRC-32C of section {info.index} is {computed:#010x}; "
             f"the table records {info.crc:#010x}")


def check_section_table(view: memoryview, num_sections: int, table_crc: int,
                        verify_data: bool = True) -> list[SectionInfo]:
    """Rules T1 to T5. ``verify_data=False`` leaves out the data section's CRC (T4f)."""
    size = len(view)
    n = num_sections
    if n > MAX_SECTIONS:
        fail("limit_exceeded", "num_sections", Header.num_sections.offset,
             f"{n} sections; at most {MAX_SECTIONS} are allowed")
    table_end = HEADER_SIZE + SECTION_ENTRY_SIZE * n
    if table_end > size:
        fail("count_exceeds_file", "num_sections", Header.num_sections.offset,
             f"{n} sections need a {SECTION_ENTRY_SIZE * n}-byte table; the file has {size} bytes")
    computed = crc(view[HEADER_SIZE:table_end])
    if computed != table_crc:
        fail("section_table_checksum", "section_table_crc", Header.section_table_crc.offset,
             f"section table CRC-32C is {computed:#010x}; the header records {table_crc:#010x}")
    table = np.frombuffer(view, dtype=SectionEntry.DTYPE, count=n, offset=HEADER_SIZE).tolist()
    out: list[SectionInfo] = []
    pos = table_end
    for i, (kind, flags, start, length, crc_, reserved) in enumerate(table):
        entry = HEADER_SIZE + SECTION_ENTRY_SIZE * i
        info = SectionInfo(i, kind, flags, start, length, entry, crc_)
        check_section_entry(view, info, reserved, pos, out[-1] if out else None, verify_data)
        out.append(info)
        pos = start + length
    if pos != size:
        fail("trailing_bytes", "file", pos, f"{size - pos} bytes follow the last section")
    return out


_FLAGS, _OFS_BODY = SectionEntry.flags.offset, SectionEntry.ofs_body.offset
_LEN_BODY, _RESERVED = SectionEntry.len_body.offset, SectionEntry.reserved.offset


def check_section_entry(view: memoryview, info: SectionInfo, reserved: int, pos: int,
                        previous: SectionInfo | None, verify_data: bool) -> None:
    """Rule T4, checks a to i, on one entry; ``pos`` is the end of the previous structure."""
    size = len(view)
    i, e, f = info.index, info.entry_offset, f"sections[{info.index}]"
    kind, flags, start, length = info.kind, info.flags, info.start, info.length
    if flags & ~FLAG_REQUIRED:
        fail("reserved_nonzero", f"{f}.flags", e + _FLAGS, f"reserved flag bits set: {flags:#x}")
    if reserved:
        fail("reserved_nonzero", f"{f}.reserved", e + _RESERVED, "reserved field is not 0")
    if start % ALIGNMENT:
        fail("misaligned", f"{f}.ofs_body", e + _OFS_BODY,
             f"section starts at {start}, not a multiple of {ALIGNMENT}")
    if start > size:
        fail("offset_out_of_bounds", f"{f}.ofs_body", e + _OFS_BODY,
             f"section starts at {start}, past the end ({size})")
    if length > size - start:
        fail("offset_out_of_bounds", f"{f}.len_body", e + _LEN_BODY,
             f"section of {length} bytes at {start} ends past the end of the {size}-byte file")
    if start < pos:
        fail("overlap", f"{f}.ofs_body", e + _OFS_BODY,
             f"section starts at {start}, before the end of the previous structure at {pos}")
    if start > align(pos):
        fail("gap", f"{f}.ofs_body", e + _OFS_BODY,
             f"section starts at {start}; the previous structure ends at {pos}")
    check_padding(view, pos, start)
    # The data section's CRC is the only check that reads every tensor byte: it is left to
    # the first access of tensor data (data_ranges.DataChecks) or skipped on request.
    if not (kind == SECTION_KINDS["data"] and not verify_data):
        check_section_crc(view, info)
    if kind not in KIND_NAMES and flags & FLAG_REQUIRED:
        fail("unknown_required_section", f"{f}.kind", e,
             f"section {i} has unknown kind {kind} and the must-understand flag")
    if kind in KIND_FLAGS and flags & FLAG_REQUIRED != KIND_FLAGS[kind]:
        fail("bad_section_flags", f"{f}.flags", e + _FLAGS,
             f"the {KIND_NAMES[kind]} section must have the REQUIRED flag "
             + ("set" if KIND_FLAGS[kind] else "clear"))
    if previous is not None:
        key, prev = section_order_key(kind), section_order_key(previous.kind)
        if key == prev:
            fail("duplicate_section", f"{f}.kind", e, f"a second section of kind {kind}")
        if key < prev:
            fail("section_order", f"{f}.kind", e,
                 f"a section of kind {kind} after one of kind {previous.kind}: the order is "
                 "tensors, optimizer, state, origin, other kinds ascending, data")


def unknown_section(view: memoryview, s: SectionInfo) -> Section:
    """A section of a kind this reader does not know (kept, and written back as it was)."""
    return Section(kind=s.kind, data=bytes(view[s.start : s.end]), required=False, offset=s.start)
