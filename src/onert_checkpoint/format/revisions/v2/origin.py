"""The origin section of a schema-2 file: rules G1 to G3 (spec/SPEC.md, 6.4.6 and 6.5)."""

from __future__ import annotations

import struct

from .constants import FOOTERLESS, ORIGIN_DIALECT_NAMES, ORIGIN_REVISION_NAMES, ORIGIN_SIZE
from .rules import fail
from .section_table import SectionInfo

__all__ = ["check_origin_section"]


def check_origin_section(view: memoryview, sec: SectionInfo) -> dict[str, object]:
    """Rules G1 to G3; what an upgraded file was."""
    if sec.length < ORIGIN_SIZE:
        fail(
            "count_exceeds_file",
            "origin",
            sec.start,
            f"the origin section has {sec.length} bytes, not {ORIGIN_SIZE}",
        )
    if sec.length > ORIGIN_SIZE:
        fail(
            "gap",
            "origin",
            sec.start + ORIGIN_SIZE,
            f"the origin section has {sec.length} bytes, not {ORIGIN_SIZE}",
        )
    rev, dialect, flags, reserved, n = struct.unpack_from("<IIIIQ", view, sec.start)
    if flags & ~FOOTERLESS:
        fail("reserved_nonzero", "origin.flags", sec.start + 8, f"reserved flag bits {flags:#x}")
    if reserved:
        fail("reserved_nonzero", "origin.reserved", sec.start + 12, "reserved field is not 0")
    if rev not in ORIGIN_REVISION_NAMES:
        fail("bad_origin", "origin.revision", sec.start, f"unknown origin revision {rev}")
    if dialect not in ORIGIN_DIALECT_NAMES:
        fail("bad_origin", "origin.dialect", sec.start + 4, f"unknown origin dialect {dialect}")
    return {
        "revision": ORIGIN_REVISION_NAMES[rev],
        "dialect": ORIGIN_DIALECT_NAMES[dialect],
        "num_entries": n,
        "footerless": bool(flags & FOOTERLESS),
    }
