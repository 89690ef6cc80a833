"""Construct schema of the weight-only format (spec/onert_wof.ksy)."""

from __future__ import annotations

from construct import Struct, this
from onert_checkpoint_generated import layout

from .common import OffsetTable, record_struct

__all__ = ["HEADER", "WOF"]

#: The 8-byte header (spec/onert_wof.ksy); luci and onert-micro name num_entries n_buffers.
HEADER = record_struct(layout.WofHeader)

WOF = Struct(
    "header" / HEADER,
    "ofs_entries" / OffsetTable(this.header.num_entries),
)
