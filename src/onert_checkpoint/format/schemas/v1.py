"""Construct schema of the schema-1 checkpoint (spec/onert_checkpoint_v1.ksy)."""

from __future__ import annotations

from construct import If, Pointer, Struct, this
from onert_checkpoint_generated import layout

from .common import OffsetTable, record_struct

__all__ = ["CHECKPOINT", "FOOTER", "HEADER"]

#: The 20-byte header (spec/SPEC.md, "Schema 1 checkpoint"; spec/onert_checkpoint_v1.ksy).
#: onert names ofs_opt1, ofs_opt2, ofs_other and num_entries opt1_offset, opt2_offset,
#: other_offset and length; onert-micro m_offset, v_offset, other parameters offset, n_buffers.
HEADER = record_struct(layout.V1Header)

#: The 8-byte training-state footer at ofs_other, the last bytes of the file.
FOOTER = record_struct(layout.V1Footer)

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
