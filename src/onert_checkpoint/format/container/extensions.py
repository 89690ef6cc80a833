"""Schema 3's optional sections, registered by kind (spec/SPEC.md 7.4, 7.5): the schema-3 reader
runs a registered section's rules at its place in the rule order and keeps a section of any
other unknown kind as it was; the writer writes each from the layout field that drives it.
``data_blocks`` registers from the container, whose writer sums its CRCs in the pass over the
data; ``range_index`` from revisions/v3, since its rules replay schema 3's placement walk.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..revisions.blocks import refuse
from .rules import SectionInfo, fail

__all__ = ["EXTENSIONS", "Extension", "ceil_shift", "register"]


def ceil_shift(n: int, shift: int) -> int:
    """ceil(n / 2**shift)."""
    return -(-n >> shift)


@dataclass(frozen=True)
class Extension:
    """A section whose generated ``head`` is (shift, reserved, count), covering data bytes or
    tensor records in units of 2**shift."""

    kind: int
    name: str
    head: Any
    #: the error code of its rules, and the shifts allowed, in those rules' words
    code: str
    low: int
    high: int
    sizes: str
    #: the layout field (Schema3Layout) that is 2**shift: 0 writes no section, None ``default``
    #: when the section covers more than ``default_above``; ``unit`` its unit in refusals
    option: str
    unit: str
    default: int
    default_above: int
    #: its rules after the head's, ``check(view, sec, shift, count, *context)`` (a result with
    #: ``shift``): after P3 when ``late`` (context: the tensors, the walk's passes), else after
    #: T5 (the data section, eager)
    late: bool
    check: Callable[..., Any]
    #: the writer's ``body(shift, placed)`` and the count it covers, ``covers(placed)``
    #: (``placed``: v3/write.py's placed ranges)
    body: Callable[[int, Any], bytes]
    covers: Callable[[Any], int]
    #: ``sums(shift)``: the body is sums over the data bytes (container/write.py's ``Part.sums``);
    #: the reader checks the data section's CRC after them (B6), not in T4
    sums: Callable[[int], Any] | None = None

    def check_head(self, view: memoryview, sec: SectionInfo) -> tuple[int, int]:
        """B1-B3 of SPEC 7.4, I1-I3 of 7.5: the section holds its head, the reserved field is 0,
        the shift is in ``low..high``; the shift and the count."""
        name, head = self.name, self.head
        if sec.length < head.SIZE:
            fail(self.code, name, sec.start,
                 f"the {name} section has {sec.length} bytes, less than its {head.SIZE}-byte head")
        shift_field, reserved_field, _ = head.FIELDS
        shift, reserved, count = np.frombuffer(view, head.DTYPE, 1, sec.start)[0].tolist()
        if reserved:
            fail("reserved_nonzero", f"{name}.reserved", sec.start + reserved_field.offset,
                 "reserved field is not 0")
        if not self.low <= shift <= self.high:
            fail(self.code, f"{name}.{shift_field.name}", sec.start + shift_field.offset,
                 f"{shift_field.name} {shift} is outside {self.low}..{self.high} ({self.sizes})")
        return shift, count

    def shift_for(self, size: object, covered: int, kept: Any) -> int | None:
        """The writer's shift for the layout's ``size`` (None: no section); a kept section of
        this kind is refused."""
        if any(getattr(s, "kind", None) == self.kind for s in kept):
            refuse(f"a kept section of kind {self.kind} would collide with schema 3's "
                   f"{self.name} section of that kind")
        if size is None:
            return self.default if covered > self.default_above else None
        if size == 0 and not isinstance(size, bool):
            return None
        if (isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size <= 0
            or int(size) & (int(size) - 1)
            or not self.low <= int(size).bit_length() - 1 <= self.high):
            refuse(f"{self.option} {size!r} is not a power of two from {1 << self.low} to "
                   f"{1 << self.high}{self.unit} (0 writes no {self.name} section)")
        return int(size).bit_length() - 1 if covered else None


#: kind -> its record
EXTENSIONS: dict[int, Extension] = {}


def register(extension: Extension) -> None:
    EXTENSIONS[extension.kind] = extension
