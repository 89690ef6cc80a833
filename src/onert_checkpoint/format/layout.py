"""How a file lays a checkpoint's content out (``Checkpoint.layout``), apart from the content.

The content (tensors, optimizer, training state) is what ``==``, export and conversion keep;
the layout is what a file of one revision records besides. Each revision's record
(``Revision.layout_type``, revisions/record.py) names its class here, which holds only what its
files carry; a field that they do not carry reads as nothing (None or ()) and cannot be set.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

__all__ = ["Layout", "Schema1Layout", "Schema2Layout", "Schema3Layout", "Section", "WofLayout"]


@dataclass(eq=False)
class Section:
    """A schema-2 section this library does not interpret, kept as it was (spec/SPEC.md,
    section 6): ``required`` is the must-understand flag, ``offset`` where it was read from."""

    kind: int
    data: bytes
    required: bool = False
    offset: int | None = None


#: What each field reads as in a layout whose revision's files do not carry it.
_NOT_CARRIED: dict[str, Any] = {"num_entries": None, "quirks": (), "origin": None, "sections": (),
                                "data_order": None, "data_block_size": None,
                                "range_index_group": None}


@dataclass(eq=False, slots=True)
class Layout:
    """What every revision's layout has: the revision's name and the schema-1 entry indexing
    ("onert" or "onert-micro", the dialect) the content follows, None when none is known."""

    revision: str
    dialect: str | None = None

    def __getattr__(self, name: str) -> Any:
        if name in _NOT_CARRIED:
            return _NOT_CARRIED[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    @classmethod
    def of(cls, revision: str, /, **values: Any) -> Layout:
        """A layout of this class with those of ``values`` that its revision's files carry
        (a ``revision`` among them, as in an origin section's, is not one)."""
        carried = {f.name: values[f.name] for f in fields(cls)[1:] if f.name in values}
        return cls(revision, **carried)

    def values(self) -> dict[str, Any]:
        """Every field but the revision, copied (for another revision's layout, `of`)."""
        return {f.name: copy.copy(getattr(self, f.name)) for f in fields(self)[1:]}

    def replaced(self, **changes: Any) -> Layout:
        """A copy with ``changes`` to the fields it carries (the others are not its files')."""
        return self.of(self.revision, **self.values() | changes)


@dataclass(eq=False, slots=True)
class WofLayout(Layout):
    #: N, the length of the offset table (for onert-micro files every tensor of the model,
    #: present or not); None for content built by hand: one past the highest entry index
    num_entries: int | None = None


@dataclass(eq=False, slots=True)
class Schema1Layout(WofLayout):
    #: what the reader or ``bind`` found irregular about the file ("footerless", ...)
    quirks: tuple[str, ...] = ()


@dataclass(eq=False, slots=True)
class Schema2Layout(Layout):
    #: where upgraded content came from (``{"revision", "dialect", "num_entries",
    #: "footerless"}``), so that a downgrade writes the original file back; None otherwise
    origin: dict[str, object] | None = None
    #: sections of kinds this library does not interpret, kept for writing back
    sections: list[Section] = field(default_factory=list)


@dataclass(eq=False, slots=True)
class Schema3Layout(Schema2Layout):
    #: the entry indices in the order the data are stored (the ``order`` column, SPEC 7.1; None:
    #: record order), which the writer keeps: offsets cannot order 0-byte tensors at one offset
    data_order: Sequence[int] | np.ndarray | None = None
    #: the block size of the per-block data checksums (data_blocks, SPEC 7.4); 0: no section;
    #: None (content not read from schema 3): the writer's default, 64 KiB
    data_block_size: int | None = None
    #: the group size G of the range_index section (SPEC 7.5); 0: no section; None (content not
    #: read from schema 3): the writer's default, G = 64 past 64 tensors
    range_index_group: int | None = None
