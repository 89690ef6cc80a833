"""The header of a schema-2 or schema-3 file: rules H1 to H5 (spec/SPEC.md, 6.4.1, 6.5 and 7),
on the fields as the generated NumPy record type reads them (in the rules' order, not the one
in which the generated parser checks `valid`); once they pass, the generated Kaitai parser of
the shared header reads the values the reader goes on with.
"""

from __future__ import annotations

import functools

import numpy as np
from onert_checkpoint_generated.layout import Header
from onert_checkpoint_generated.onert_checkpoint_common import OnertCheckpointCommon

from .constants import HEADER_SIZE, header_crc
from .rules import fail, first, parse_fixed

__all__ = ["check_header"]


def check_header(view: memoryview, version: int) -> OnertCheckpointCommon.Header:
    """Rules H1 to H5 on a file of version byte ``version``; the header as the generated
    parser reads it."""
    size = len(view)
    if size < HEADER_SIZE:
        fail("truncated_header", "header", 0,
             f"a schema-{version} checkpoint has a {HEADER_SIZE}-byte header; "
             f"the file has {size} bytes")
    h = np.frombuffer(view, dtype=Header.DTYPE, count=1)[0]
    stored, computed = int(h["header_crc"]), header_crc(view)
    if stored != computed:
        fail("header_checksum", "header_crc", Header.header_crc.offset,
             f"header CRC-32C is {computed:#010x}; the header records {stored:#010x}")
    if h["reserved0"] != 0:
        fail("reserved_nonzero", "reserved0", Header.reserved0.offset,
             f"reserved byte is {h['reserved0']}, not 0")
    nz = first(h["reserved1"] != 0)
    if nz is not None:
        at = Header.reserved1.offset + nz
        fail("reserved_nonzero", "reserved1", at, f"reserved header byte {at} is not 0")
    len_file, ofs_table = int(h["len_file"]), int(h["ofs_section_table"])
    if size < len_file:
        fail("truncated_file", "len_file", Header.len_file.offset,
             f"the header records {len_file} bytes; the file has {size}")
    if size > len_file:
        fail("trailing_bytes", "file", len_file,
             f"{size - len_file} bytes follow the {len_file} bytes the header records")
    if ofs_table != HEADER_SIZE:
        fail("overlap" if ofs_table < HEADER_SIZE else "gap", "ofs_section_table",
             Header.ofs_section_table.offset,
             f"the section table must start at {HEADER_SIZE}, right after the header; "
             f"ofs_section_table is {ofs_table}")
    return parse_fixed(view, 0, Header, functools.partial(OnertCheckpointCommon.Header, version))
