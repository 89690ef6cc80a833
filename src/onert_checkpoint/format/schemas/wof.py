"""Construct schema of the weight-only format (spec/onert_wof.ksy)."""

from __future__ import annotations

from construct import Const, Int8ul, Int16ul, Int32ul, Struct, this

from .common import OffsetTable

__all__ = ["HEADER", "WOF"]

HEADER = Struct(
    "magic" / Const(429, Int16ul),
    "version" / Const(1, Int8ul),
    "reserved" / Const(0, Int8ul),
    "num_entries" / Int32ul,  # luci / onert-micro: n_buffers
)

WOF = Struct(
    "header" / HEADER,
    "ofs_entries" / OffsetTable(this.header.num_entries),
)
