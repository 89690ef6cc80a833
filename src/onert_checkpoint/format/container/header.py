"""The header of a schema-2 or schema-3 file: rules H1 to H5 (spec/SPEC.md, 6.4.1, 6.5 and 7).

The rules read the fields through the header's generated NumPy record type (the order of the
rules is the specification's, not the field order in which the generated parser checks `valid`);
once they pass, the header is read by the generated Kaitai parser of the shared header
(onert_checkpoint_common.ksy, with the revision's version byte), and its values are the ones
the reader goes on with.
"""

from __future__ import annotations

import numpy as np
from kaitaistruct import KaitaiStream
from onert_checkpoint_generated.layout import Header
from onert_checkpoint_generated.onert_checkpoint_common import OnertCheckpointCommon

from ..source import BufferReader
from .constants import HEADER_SIZE, header_crc
from .rules import fail, first

__all__ = ["check_header"]


def check_header(view: memoryview, version: int) -> OnertCheckpointCommon.Header:
    """Rules H1 to H5, shared by schemas 2 and 3 (SPEC 7: the same header, version 3); the
    header of a file of version byte ``version`` as the generated parser reads it once they
    pass."""
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
    io = KaitaiStream(BufferReader(view))
    parsed = OnertCheckpointCommon.Header(version, io)
    io.close()  # only the header was read: release the buffer (see BufferReader)
    return parsed
