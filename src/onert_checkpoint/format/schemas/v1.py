"""Construct schema of the schema-1 checkpoint (spec/onert_checkpoint_v1.ksy)."""

from __future__ import annotations

from construct import Const, If, Int8ul, Int16ul, Int32ul, Pointer, Struct, this

from .common import OffsetTable

__all__ = ["CHECKPOINT", "FOOTER", "HEADER"]

#: The 20-byte header (spec/SPEC.md, "Schema 1 checkpoint").
HEADER = Struct(
    "magic" / Const(429, Int16ul),
    "version" / Const(1, Int8ul),
    "reserved" / Const(0, Int8ul),
    "ofs_opt1" / Int32ul,  # onert: opt1_offset; onert-micro: m_offset
    "ofs_opt2" / Int32ul,  # onert: opt2_offset; onert-micro: v_offset
    "ofs_other" / Int32ul,  # onert: other_offset; onert-micro: other parameters offset
    "num_entries" / Int32ul,  # onert: length; onert-micro: n_buffers
)

#: The 8-byte training-state footer at ofs_other, the last bytes of the file.
FOOTER = Struct(
    "step" / Int32ul,
    "epoch" / Int32ul,
)

#: The whole file's structure: header, the three offset tables and the footer (the data areas
#: between them are found through the tables).
CHECKPOINT = Struct(
    "header" / HEADER,
    "weights" / OffsetTable(this.header.num_entries),
    "m"
    / If(
        this.header.ofs_opt2 != 0,
        Pointer(this.header.ofs_opt1, OffsetTable(this.header.num_entries)),
    ),
    "v"
    / If(
        this.header.ofs_opt2 != 0,
        Pointer(this.header.ofs_opt2, OffsetTable(this.header.num_entries)),
    ),
    "footer" / If(this.header.ofs_other != 0, Pointer(this.header.ofs_other, FOOTER)),
)
