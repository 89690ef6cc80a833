"""The optimizer section of a schema-3 file: slot entries of one u64 each, rules O1 to O9
with 7.2's changes (spec/SPEC.md 7.2); the head, descriptors and names are schema 2's
(revisions/v2/optimizer.py, parametrized by the entry size)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from onert_checkpoint_generated.layout import V3_OPTIMIZER_SECTION_ENTRIES as ENTRY

from ...container.constants import NO_STATE
from ...container.section_table import SectionInfo
from ..v2.optimizer import check_optimizer_head, slot_table

__all__ = ["SlotLengths", "check_optimizer_section"]


@dataclass
class SlotLengths:
    """The validated optimizer section: kind, slot names and the K x T ``len_data`` table (a
    view on the file; NO_STATE where a tensor has no state in a slot)."""

    kind: str
    names: list[str]
    lengths: np.ndarray
    entries_at: int
    num_tensors: int

    def entry_field(self, j: int, t: int) -> tuple[str, int]:
        """The field and offset of slot j's entry for tensor record t (range errors)."""
        return (f"optimizer.slots[{j}][{t}].len_data",
                self.entries_at + ENTRY.size * (j * self.num_tensors + t))

    @staticmethod
    def absent(column: np.ndarray) -> np.ndarray:
        return column == np.array(NO_STATE, ENTRY.format)


def check_optimizer_section(view: memoryview, sec: SectionInfo, num_tensors: int) -> SlotLengths:
    """Rules O1 to O9 (O4 and O7 with 8-byte entries; there is no O10)."""
    kind, names, entries_at, t = check_optimizer_head(view, sec, num_tensors, ENTRY.size)
    lengths = slot_table(view, entries_at, len(names), t, np.dtype(ENTRY.format))
    return SlotLengths(kind, names, lengths, entries_at, t)
