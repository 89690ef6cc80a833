"""The origin section of a schema-2 file: rules G1 to G3 (spec/SPEC.md, 6.9 and 6.5)."""

from __future__ import annotations

import numpy as np
from onert_checkpoint_generated.layout import Origin
from onert_checkpoint_generated.onert_checkpoint_common import OnertCheckpointCommon as Common

from .constants import FOOTERLESS, ORIGIN_DIALECT_NAMES, ORIGIN_REVISION_NAMES, ORIGIN_SIZE
from .rules import fail, parse_fixed
from .section_table import SectionInfo

__all__ = ["check_origin_section"]


def check_origin_section(view: memoryview, sec: SectionInfo) -> dict[str, object]:
    """Rules G1 to G3 (on the fields as the generated dtype reads them, in the rules' order);
    what an upgraded file was, as the generated parser reads it once they pass."""
    if sec.length < ORIGIN_SIZE:
        fail("count_exceeds_file", "origin", sec.start,
             f"the origin section has {sec.length} bytes, not {ORIGIN_SIZE}")
    if sec.length > ORIGIN_SIZE:
        fail("gap", "origin", sec.start + ORIGIN_SIZE,
             f"the origin section has {sec.length} bytes, not {ORIGIN_SIZE}")
    o = np.frombuffer(view, dtype=Origin.DTYPE, count=1, offset=sec.start)[0]
    rev, dialect, flags = int(o["revision"]), int(o["dialect"]), int(o["flags"])
    if flags & ~FOOTERLESS:
        fail("reserved_nonzero", "origin.flags", sec.start + Origin.flags.offset,
             f"reserved flag bits {flags:#x}")
    if o["reserved"]:
        fail("reserved_nonzero", "origin.reserved", sec.start + Origin.reserved.offset,
             "reserved field is not 0")
    if rev not in ORIGIN_REVISION_NAMES:
        fail("bad_origin", "origin.revision", sec.start, f"unknown origin revision {rev}")
    if dialect not in ORIGIN_DIALECT_NAMES:
        fail("bad_origin", "origin.dialect", sec.start + Origin.dialect.offset,
             f"unknown origin dialect {dialect}")
    parsed = parse_fixed(view, sec.start, Origin, Common.OriginSection)
    return {"revision": ORIGIN_REVISION_NAMES[int(parsed.revision)],
            "dialect": ORIGIN_DIALECT_NAMES[int(parsed.dialect)],
            "num_entries": int(parsed.num_entries), "footerless": bool(parsed.flags & FOOTERLESS)}
