"""The header of a schema-2 file: rules H1 to H5 (spec/SPEC.md, 6.4.1 and 6.5)."""

from __future__ import annotations

import struct

import numpy as np
from kaitaistruct import KaitaiStream
from onert_checkpoint_generated.onert_checkpoint_v2 import OnertCheckpointV2

from ...source import BufferReader
from .constants import HEADER_SIZE, header_crc
from .rules import fail, first

__all__ = ["check_header", "check_header_rules"]


def check_header(view: memoryview) -> OnertCheckpointV2:
    """Rules H1 to H5; the header parsed by the generated Kaitai parser once they pass."""
    check_header_rules(view)
    # Magic, version and the fixed fields are checked again by the generated parser.
    return OnertCheckpointV2(KaitaiStream(BufferReader(view)))


def check_header_rules(view: memoryview, schema: int = 2) -> tuple[int, int]:
    """Rules H1 to H5, shared by schemas 2 and 3 (SPEC 6.7: the same header, version 3);
    returns ``num_sections`` and ``section_table_crc``."""
    size = len(view)
    if size < HEADER_SIZE:
        fail(
            "truncated_header",
            "header",
            0,
            f"a schema-{schema} checkpoint has a {HEADER_SIZE}-byte header; "
            f"the file has {size} bytes",
        )
    stored = int.from_bytes(view[4:8], "little")
    computed = header_crc(view)
    if stored != computed:
        fail(
            "header_checksum",
            "header_crc",
            4,
            f"header CRC-32C is {computed:#010x}; the header records {stored:#010x}",
        )
    if view[3] != 0:
        fail("reserved_nonzero", "reserved0", 3, f"reserved byte is {view[3]}, not 0")
    reserved = np.frombuffer(view, dtype=np.uint8, count=32, offset=32)
    nz = first(reserved != 0)
    if nz is not None:
        fail("reserved_nonzero", "reserved1", 32 + nz, f"reserved header byte {32 + nz} is not 0")
    len_file, ofs_table = struct.unpack_from("<QQ", view, 8)
    if size < len_file:
        fail(
            "truncated_file",
            "len_file",
            8,
            f"the header records {len_file} bytes; the file has {size}",
        )
    if size > len_file:
        fail(
            "trailing_bytes",
            "file",
            len_file,
            f"{size - len_file} bytes follow the {len_file} bytes the header records",
        )
    if ofs_table != HEADER_SIZE:
        fail(
            "overlap" if ofs_table < HEADER_SIZE else "gap",
            "ofs_section_table",
            16,
            f"the section table must start at {HEADER_SIZE}, right after the header; "
            f"ofs_section_table is {ofs_table}",
        )
    num_sections, table_crc = struct.unpack_from("<II", view, 24)
    return num_sections, table_crc
