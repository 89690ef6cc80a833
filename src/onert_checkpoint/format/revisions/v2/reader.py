"""Reading a schema-2 file: the rules of spec/SPEC.md 6.5 in order, then the model objects.

Entries are not made here: the checkpoint gets the validated record columns
(:class:`~onert_checkpoint.format.entries.EntryTable`) and makes a tensor when it is looked at.
The data section's CRC-32C and padding (the only rules that read tensor bytes) run on the
first access of any tensor data, before a byte is handed out, unless ``verify_data=False``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from onert_checkpoint_generated.layout import SectionKind as Kind

from ...container.constants import KIND_NAMES, NO_STATE
from ...container.header import check_header
from ...container.origin import check_origin_section
from ...container.rules import rule_order_reader
from ...container.section_table import SectionInfo, check_section_table, unknown_section
from ...container.state import check_state_section
from ...entries import DataStore, EntryTable, SlotEntries, TensorList
from ...model import Buffer, Checkpoint, Optimizer, Tensor, TrainingState
from ..registry import Revision
from .data_ranges import DataRanges, check_data_ranges, data_checks
from .optimizer import SlotTable, check_optimizer_section
from .tensors import TensorRecords, check_tensors_section

__all__ = ["read"]


def _read(view: memoryview, verify_data: bool, defer: bool, *, rev: Revision) -> Checkpoint:
    # The header through the generated parser (onert_checkpoint_v2.ksy), after rules H1-H5.
    header = check_header(view, rev.version)
    num_sections, table_crc = header.num_sections, header.section_table_crc
    eager = verify_data and not defer
    sections = check_section_table(view, num_sections, table_crc, eager)
    by_kind = {s.kind: s for s in sections if s.kind in KIND_NAMES}
    sec = by_kind.get
    tensors = check_tensors_section(view, t) if (t := sec(Kind.TENSORS)) else None
    num_tensors = 0 if tensors is None else tensors.records.size
    slots = check_optimizer_section(view, o, num_tensors) if (o := sec(Kind.OPTIMIZER)) else None
    state = check_state_section(view, v) if (v := sec(Kind.STATE)) else TrainingState()
    origin = check_origin_section(view, g) if (g := sec(Kind.ORIGIN)) else None
    data = sec(Kind.DATA)
    check_data_ranges(view, DataRanges.collect(tensors, slots), data, eager)

    pending = data_checks(view, data, tensors, slots) if defer and data is not None else None
    store = DataStore(np.frombuffer(view, dtype=np.uint8), pending)
    table = _tensor_table(store, tensors)
    optimizer = None if slots is None else _optimizer(store, slots, table)
    return container_checkpoint(view, rev, store, table, optimizer, state, origin, sections)


def container_checkpoint(view: memoryview, rev: Revision, store: DataStore, table: EntryTable,
                         optimizer: Optimizer | None, state: TrainingState,
                         origin: dict[str, object] | None, sections: list[SectionInfo],
                         **layout: Any) -> Checkpoint:
    """The checkpoint a schema-2-family reader returns (sections of unknown kinds kept;
    ``layout``: the rest of its ``rev.layout_type``)."""
    ckpt = Checkpoint(
        tensors=TensorList(table=table), optimizer=optimizer, state=state,
        layout=rev.layout_type.of(rev.name, origin=origin, sections=[
            unknown_section(view, s) for s in sections if s.kind not in KIND_NAMES], **layout),
        file_size=len(view), source=view)
    ckpt._store = store
    return ckpt


def _tensor_table(store: DataStore, tensors: TensorRecords | None) -> EntryTable:
    if tensors is None:
        empty = np.zeros(0, np.int64)
        return EntryTable(store, empty, empty, empty, Tensor)
    rec = tensors.records
    meta = {"flags": rec["flags"], "dtype": rec["dtype"], "rank": rec["rank"], "dims": rec["dims"],
            "model_index": rec["model_index"], "names": tensors.names}
    # The index column is copied once (binary search on a strided view would copy per call).
    keys = rec["index"].astype(np.int64)
    return EntryTable(store, keys, rec["ofs_data"], rec["len_data"], Tensor, meta)


def _optimizer(store: DataStore, slots: SlotTable, tensors: EntryTable) -> Optimizer:
    optimizer = Optimizer(slots.kind, {})
    entries = slots.entries
    for j, name in enumerate(slots.names):
        ofs = entries["ofs_data"][j]
        rows = np.flatnonzero(ofs != NO_STATE)
        table = EntryTable(store, tensors.keys[rows], ofs[rows], entries["len_data"][j][rows],
                           Buffer, owner=tensors, owner_rows=rows)
        optimizer.slots[name] = SlotEntries(table)
    return optimizer


read = rule_order_reader(_read, "v2")
