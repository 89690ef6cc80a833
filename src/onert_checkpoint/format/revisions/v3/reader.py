"""Reading a schema-3 file: the rules of spec/SPEC.md 7, in order
(header H1-H5, section table T1-T5, tensors C0-C13, optimizer O1-O9, state V1-V9, origin
G1-G3, data P0-P4), then the same model objects as schema 2's reader.

The checkpoint holds the validated columns (:class:`~onert_checkpoint.format.entries.EntryTable`)
with every range's absolute offset as P2 computed it, and ``data_order``: the entry indices
of the tensors in the order of their data (the ``order`` column), which the writer keeps.
The data section's CRC-32C and padding (P4) run on the first access of tensor data, as in
schema 2, unless ``verify_data=False``.
"""

from __future__ import annotations

import numpy as np
from onert_checkpoint_generated.layout import SectionEntry as Section
from onert_checkpoint_generated.layout import SectionKind as Kind

from ...container import section_table as table
from ...container.constants import HEADER_SIZE, KIND_NAMES, MAX_SECTIONS, SECTION_ENTRY_SIZE
from ...container.data_blocks import KIND as BLOCKS_KIND
from ...container.data_blocks import DataBlocks, check_data_blocks
from ...container.header import check_header
from ...container.origin import check_origin_section
from ...container.rules import rule_order_reader
from ...container.section_table import check_section_table
from ...container.state import check_state_section
from ...entries import DataStore, EntryTable, SlotEntries
from ...model import Buffer, Checkpoint, Optimizer, Tensor, TrainingState
from ..record import Revision
from ..v2.reader import container_checkpoint
from .placement import Pass, Placement, check_placement, data_checks
from .range_index import KIND as INDEX_KIND
from .range_index import RangeIndex, check_range_index
from .slot_entries import SlotLengths, check_optimizer_section
from .tensor_columns import TensorColumns, check_tensors_section

__all__ = ["read"]


def _read(view: memoryview, verify_data: bool, defer: bool, *, rev: Revision) -> Checkpoint:
    # The header through the generated parser (onert_checkpoint_v3.ksy), after rules H1-H5.
    header = check_header(view, rev.version)
    num_sections, table_crc = header.num_sections, header.section_table_crc
    eager = verify_data and not defer
    # With a data_blocks section the data section's CRC runs after the block CRCs (rule B6 of
    # SPEC 7.4), not in T4: a damaged byte is reported by its block.
    blocks_first = _lists_data_blocks(view, num_sections)
    sections = check_section_table(view, num_sections, table_crc, eager and not blocks_first)
    blocks = _data_blocks(view, sections, eager)
    index = next((s for s in sections if s.kind == INDEX_KIND), None)
    sections = [s for s in sections if s.kind not in (BLOCKS_KIND, INDEX_KIND)]
    sec = {s.kind: s for s in sections if s.kind in KIND_NAMES}.get
    tensors = check_tensors_section(view, t) if (t := sec(Kind.TENSORS)) else None
    num_tensors = 0 if tensors is None else tensors.size
    slots = check_optimizer_section(view, o, num_tensors) if (o := sec(Kind.OPTIMIZER)) else None
    state = check_state_section(view, v) if (v := sec(Kind.STATE)) else TrainingState()
    origin = check_origin_section(view, g) if (g := sec(Kind.ORIGIN)) else None
    data = sec(Kind.DATA)
    # The range_index section's rules I1 to I7 run after P3, before P4 (SPEC 7.5).
    checked: list[RangeIndex] = []

    def check_index(passes: list[Pass] | None) -> None:
        assert index is not None
        checked.append(check_range_index(view, index, tensors, slots, passes))

    placement = check_placement(
        view, tensors, slots, data, eager, None if index is None else check_index
    )
    if index is not None and not checked:  # no ranges: I4 refuses the section
        check_index(None)

    pending = None
    if defer and data is not None and tensors is not None:
        if blocks is None:
            pending = data_checks(view, data, tensors, slots)
        else:
            pending = blocks.deferred(data_checks(view, data, tensors, slots, whole_crc=False))
    ranged = None if blocks is None or pending is None else blocks.check_range
    store = DataStore(np.frombuffer(view, dtype=np.uint8), pending, ranged)
    table = _tensor_table(store, tensors, placement)
    optimizer = None if slots is None else _optimizer(store, slots, table, placement)
    return container_checkpoint(view, rev, store, table, optimizer, state, origin, sections,
                                data_order=_data_order(tensors),
                                data_block_size=0 if blocks is None else blocks.block_size,
                                range_index_group=checked[0].group_size if checked else 0)


def _lists_data_blocks(view: memoryview, num_sections: int) -> bool:
    """Whether the section table lists a data_blocks section (read before rules T1 to T5 pass:
    only where their failure is reported is decided by it)."""
    room = (len(view) - HEADER_SIZE) // SECTION_ENTRY_SIZE if len(view) >= HEADER_SIZE else 0
    n = min(num_sections, room, MAX_SECTIONS)
    kinds = np.frombuffer(view, Section.DTYPE, n, HEADER_SIZE)["kind"]
    return bool((kinds == BLOCKS_KIND).any())


def _data_blocks(
    view: memoryview, sections: list[table.SectionInfo], eager: bool
) -> DataBlocks | None:
    """Rules B1 to B5 on a data_blocks section, and with ``eager`` B6 (every block's CRC, then
    the data section's): they run after T5, before the tensors section."""
    found = next((s for s in sections if s.kind == BLOCKS_KIND), None)
    if found is None:
        return None
    data = next((s for s in sections if s.kind == Kind.DATA), None)
    blocks = check_data_blocks(view, found, data)
    if eager and data is not None:
        blocks.check_all()
        blocks.check_section_crc()
    return blocks


def _data_order(tensors: TensorColumns | None) -> np.ndarray | None:
    """The entry indices in data order (``index[order[k]]``); None for record order."""
    if tensors is None or tensors.order is None:
        return None
    return tensors.keys[tensors.order]


def _tensor_table(
    store: DataStore, tensors: TensorColumns | None, placement: Placement | None
) -> EntryTable:
    if tensors is None or placement is None:
        empty = np.zeros(0, np.int64)
        return EntryTable(store, empty, empty, empty, Tensor)
    return EntryTable(
        store, tensors.keys, placement.tensor_offsets, tensors.lengths, Tensor, tensors.meta
    )


def _optimizer(
    store: DataStore, slots: SlotLengths, tensors: EntryTable, placement: Placement | None
) -> Optimizer:
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
