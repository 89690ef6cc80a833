"""Reading a schema-3 file: the rules of spec/SPEC.md 7, in order (header H1-H5, section table
T1-T5, data_blocks B1-B6, tensors C0-C13, optimizer O1-O9, state V1-V9, origin G1-G3, data
P0-P3, range_index I1-I7, P4), then the same model objects as schema 2's reader, with every
range's absolute offset as P2 computed it and ``data_order``, the entry indices in the order of
their data (the ``order`` column), which the writer keeps.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
from onert_checkpoint_generated.layout import SectionEntry as Section
from onert_checkpoint_generated.layout import SectionKind as Kind

from ...container import data_blocks  # noqa: F401  (registers its section kind)
from ...container.constants import HEADER_SIZE, KIND_NAMES, MAX_SECTIONS, SECTION_ENTRY_SIZE
from ...container.extensions import EXTENSIONS
from ...container.header import check_header
from ...container.origin import check_origin_section
from ...container.rules import rule_order_reader
from ...container.section_table import check_section_table
from ...container.state import check_state_section
from ...entries import DataStore, EntryTable, SlotEntries
from ...model import Buffer, Checkpoint, Optimizer, Tensor, TrainingState
from ..record import Revision
from ..v2.reader import container_checkpoint
from . import range_index  # noqa: F401  (registers its section kind)
from .placement import Placement, check_placement, data_checks
from .slot_entries import SlotLengths, check_optimizer_section
from .tensor_columns import TensorColumns, check_tensors_section

__all__ = ["read"]


def _read(view: memoryview, verify_data: bool, defer: bool, *, rev: Revision) -> Checkpoint:
    # The header through the generated parser (onert_checkpoint_v3.ksy), after rules H1-H5.
    header = check_header(view, rev.version)
    num_sections, table_crc = header.num_sections, header.section_table_crc
    eager = verify_data and not defer
    # A section that sums the data (data_blocks) moves the data section's CRC from T4 to after
    # its own checks (rule B6 of SPEC 7.4): a damaged byte is reported by its block.
    summing = [kind for kind, ext in EXTENSIONS.items() if ext.sums is not None]
    sums_first = _lists(view, num_sections, summing)
    sections = check_section_table(view, num_sections, table_crc, eager and not sums_first)
    found = {s.kind: s for s in sections if s.kind in EXTENSIONS}
    sections = [s for s in sections if s.kind not in EXTENSIONS]
    sec = {s.kind: s for s in sections if s.kind in KIND_NAMES}.get
    data = sec(Kind.DATA)
    checked: dict[int, Any] = {}

    def extensions(late: bool, *context: Any) -> None:
        """The rules of the extension sections found whose place is after P3 (``late``) or
        after T5, before the tensors section."""
        for kind, s in found.items():
            ext = EXTENSIONS[kind]
            if ext.late == late and kind not in checked:
                checked[kind] = ext.check(view, s, *ext.check_head(view, s), *context)

    extensions(False, data, eager)
    tensors = check_tensors_section(view, t) if (t := sec(Kind.TENSORS)) else None
    num_tensors = 0 if tensors is None else tensors.size
    slots = check_optimizer_section(view, o, num_tensors) if (o := sec(Kind.OPTIMIZER)) else None
    state = check_state_section(view, v) if (v := sec(Kind.STATE)) else TrainingState()
    origin = check_origin_section(view, g) if (g := sec(Kind.ORIGIN)) else None
    late = any(EXTENSIONS[kind].late for kind in found)
    placement = check_placement(view, tensors, slots, data, eager,
                                functools.partial(extensions, True, tensors) if late else None)
    extensions(True, tensors, None)  # no ranges, no walk: I4 refuses a range_index section

    pending = None
    summed = next((checked[kind] for kind in summing if kind in checked), None)
    if defer and data is not None and tensors is not None:
        if summed is None:
            pending = data_checks(view, data, tensors, slots)
        else:
            pending = summed.deferred(data_checks(view, data, tensors, slots, whole_crc=False))
    ranged = None if summed is None or pending is None else summed.check_range
    store = DataStore(np.frombuffer(view, dtype=np.uint8), pending, ranged)
    table = _tensor_table(store, tensors, placement)
    optimizer = None if slots is None else _optimizer(store, slots, table, placement)
    layout = {ext.option: 0 for ext in EXTENSIONS.values()}
    layout.update((EXTENSIONS[kind].option, 1 << c.shift) for kind, c in checked.items())
    return container_checkpoint(view, rev, store, table, optimizer, state, origin, sections,
                                data_order=_data_order(tensors), **layout)


def _lists(view: memoryview, num_sections: int, kinds: list[int]) -> bool:
    """Whether the section table lists a section of one of ``kinds`` (read before rules T1 to
    T5 pass: only where their failure is reported is decided by it)."""
    room = (len(view) - HEADER_SIZE) // SECTION_ENTRY_SIZE if len(view) >= HEADER_SIZE else 0
    n = min(num_sections, room, MAX_SECTIONS)
    kinds_listed = np.frombuffer(view, Section.DTYPE, n, HEADER_SIZE)["kind"]
    return bool(np.isin(kinds_listed, kinds).any())


def _data_order(tensors: TensorColumns | None) -> np.ndarray | None:
    """The entry indices in data order (``index[order[k]]``); None for record order."""
    if tensors is None or tensors.order is None:
        return None
    return tensors.keys[tensors.order]


def _tensor_table(store: DataStore, tensors: TensorColumns | None,
                  placement: Placement | None) -> EntryTable:
    if tensors is None or placement is None:
        empty = np.zeros(0, np.int64)
        return EntryTable(store, empty, empty, empty, Tensor)
    return EntryTable(store, tensors.keys, placement.tensor_offsets, tensors.lengths, Tensor,
                      tensors.meta)


def _optimizer(store: DataStore, slots: SlotLengths, tensors: EntryTable,
               placement: Placement | None) -> Optimizer:
    optimizer = Optimizer(slots.kind, {})
    for j, name in enumerate(slots.names):
        if placement is None:  # no tensors: T = 0, every slot is empty
            rows = offsets = np.zeros(0, np.int64)
        else:
            rows, offsets = placement.slot_rows[j], placement.slot_offsets[j]
        table = EntryTable(store, tensors.keys[rows], offsets, slots.lengths[j][rows], Buffer,
                           owner=tensors, owner_rows=rows)
        optimizer.slots[name] = SlotEntries(table)
    return optimizer


read = rule_order_reader(_read, "v3")
