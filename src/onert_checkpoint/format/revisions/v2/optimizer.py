"""The optimizer section of a schema-2 file: rules O1 to O10 (spec/SPEC.md, 6.7 and 6.5)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from onert_checkpoint_generated.layout import OptimizerHead, SlotDescriptor, V2SlotEntry
from onert_checkpoint_generated.onert_checkpoint_common import OnertCheckpointCommon as Common

from ...container.constants import (
    MAX_NAME_LEN,
    MAX_SLOTS,
    NO_STATE,
    OPTIMIZER_HEAD_SIZE,
    OPTIMIZER_NAMES,
    SLOT_DESCRIPTOR_SIZE,
    SLOT_ENTRY_SIZE,
    optimizer_name,
)
from ...container.rules import check_head, check_pool, decode, fail, first, parse_fixed
from ...container.section_table import SectionInfo
from ...model import OPTIMIZER_SLOTS

__all__ = ["SlotTable", "check_optimizer_head", "check_optimizer_section", "slot_table"]


@dataclass
class SlotTable:
    """The validated optimizer section: kind, slot names and the K x T entry table (a view
    on the file; ``ofs_data`` is NO_STATE where a tensor has no state in a slot)."""

    kind: str
    names: list[str]
    entries: np.ndarray
    entries_at: int
    num_tensors: int

    def entry_field(self, j: int, t: int) -> tuple[str, int]:
        """The field and offset of slot j's entry for tensor record t (range errors)."""
        return (f"optimizer.slots[{j}][{t}].ofs_data",
                self.entries_at + SLOT_ENTRY_SIZE * (j * self.num_tensors + t))

    def present(self, j: int) -> np.ndarray:
        return np.flatnonzero(self.entries["ofs_data"][j] != NO_STATE)


_NUM_TENSORS = OptimizerHead.num_tensors.offset


def check_optimizer_section(view: memoryview, sec: SectionInfo, num_tensors: int) -> SlotTable:
    """Rules O1 to O10, in order."""
    kind_name, names, entries_at, t = check_optimizer_head(view, sec, num_tensors)
    entries = check_slot_entries(view, entries_at, len(names), t)
    return SlotTable(kind_name, names, entries, entries_at, t)


def check_optimizer_head(view: memoryview, sec: SectionInfo, num_tensors: int,
                         entry_size: int = SLOT_ENTRY_SIZE) -> tuple[str, list[str], int, int]:
    """Rules O1 to O9 (schema 3 has ``entry_size`` 8, SPEC 7.2); returns the kind's name,
    the slot names, the offset of the entry table and T."""
    check_head(view, sec, OptimizerHead, "optimizer", "num_slots")
    head = parse_fixed(view, sec.start, OptimizerHead, Common.OptimizerHead)
    kind, k, t = int(head.kind), int(head.num_slots), int(head.num_tensors)
    k_at, t_at = sec.start + OptimizerHead.num_slots.offset, sec.start + _NUM_TENSORS
    if k > MAX_SLOTS:
        fail("limit_exceeded", "optimizer.num_slots", k_at, f"{k} slots exceed {MAX_SLOTS}")
    if t != num_tensors:
        fail("bad_optimizer", "optimizer.num_tensors", t_at,
             f"the optimizer section covers {t} tensors; the tensors section has {num_tensors}")
    need = OPTIMIZER_HEAD_SIZE + SLOT_DESCRIPTOR_SIZE * k + entry_size * k * t
    if need > sec.length:
        fail("count_exceeds_file", "optimizer.num_slots", k_at,
             f"{k} slots for {t} tensors need {need} bytes; the section has {sec.length}")
    kind_name = optimizer_name(kind)
    expected = OPTIMIZER_SLOTS.get(kind_name) if kind in OPTIMIZER_NAMES else None
    if expected is not None and len(expected) != k:
        fail("bad_optimizer", "optimizer.num_slots", k_at,
             f"{kind_name} has {len(expected)} slots, not {k}")
    desc_at = sec.start + OPTIMIZER_HEAD_SIZE
    names = check_slot_names(view, sec, desc_at, k, t, kind_name, expected, entry_size)
    return kind_name, names, desc_at + SLOT_DESCRIPTOR_SIZE * k, t


def check_slot_names(view: memoryview, sec: SectionInfo, desc_at: int, k: int, t: int,
                     kind_name: str, expected: tuple[str, ...] | None,
                     entry_size: int = SLOT_ENTRY_SIZE) -> list[str]:
    """O6 descriptors, O7 the name pool, O8 names UTF-8 and unique, O9 a known kind's names."""
    desc = np.frombuffer(view, dtype=SlotDescriptor.DTYPE, count=k, offset=desc_at)
    at = desc_at + SLOT_DESCRIPTOR_SIZE * np.arange(k, dtype=np.int64)
    i = first(desc["reserved"] != 0)
    if i is not None:
        fail("reserved_nonzero", f"optimizer.slots[{i}].reserved",
             int(at[i]) + SlotDescriptor.reserved.offset, "reserved field is not 0")
    ln = desc["len_name"].astype(np.int64)
    i = first((ln == 0) | (ln > MAX_NAME_LEN))
    if i is not None:
        fail("limit_exceeded", f"optimizer.slots[{i}].len_name",
             int(at[i]) + SlotDescriptor.len_name.offset,
             f"a slot name has 1..{MAX_NAME_LEN} bytes, not {int(ln[i])}")
    entries_at = desc_at + SLOT_DESCRIPTOR_SIZE * k
    pool = entries_at + entry_size * k * t
    check_pool(desc["ofs_name"], desc["len_name"],
               lambda j: (f"optimizer.slots[{j}].ofs_name", int(at[j])), pool, sec.end,
               "optimizer.names")
    names: list[str] = []
    for j in range(k):
        s = decode(view, int(desc["ofs_name"][j]), int(ln[j]), f"optimizer.slots[{j}].name",
                   int(desc["ofs_name"][j]))
        if s in names:
            fail("duplicate_slot_name", f"optimizer.slots[{j}].name", int(desc["ofs_name"][j]),
                 f"slot {s!r} appears twice")
        names.append(s)
    if expected is not None and tuple(names) != expected:
        fail("bad_optimizer", "optimizer.slots", desc_at,
             f"{kind_name}'s slots are {expected}, not {tuple(names)}")
    return names


def check_slot_entries(view: memoryview, entries_at: int, k: int, t: int) -> np.ndarray:
    """O10: an entry without state (NO_STATE) has size 0. Returns the K x T entry table."""
    entries = slot_table(view, entries_at, k, t, V2SlotEntry.DTYPE)
    bad = (entries["ofs_data"] == NO_STATE) & (entries["len_data"] != 0)
    i = first(bad.reshape(-1))
    if i is not None:
        fail("bad_slot_entry", f"optimizer.slots[{i // t}][{i % t}].len_data",
             entries_at + SLOT_ENTRY_SIZE * i + V2SlotEntry.len_data.offset,
             "an entry marked NO_STATE must have size 0")
    return entries


def slot_table(view: memoryview, at: int, k: int, t: int, dtype: np.dtype) -> np.ndarray:
    """The K x T table of slot entries at ``at`` (a view on the file)."""
    if not k * t:
        return np.zeros((k, t), dtype)
    return np.frombuffer(view, dtype=dtype, count=k * t, offset=at).reshape(k, t)
