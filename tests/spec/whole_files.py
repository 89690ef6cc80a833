"""Whole-file readings of each revision for the cross-checks, composed only of generated parts:
the Construct structs of the fixed records and section heads (onert_checkpoint_generated.structs)
and the NumPy record types and schema-3 column list of the layout module, read at the places
spec/SPEC.md gives. spec/regenerate.py makes both from spec/*.ksy with another generator than
the Kaitai compiler, so comparing these readings with a Kaitai parser is two generators from one
source; nothing here comes from the library's readers."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from construct import Container
from onert_checkpoint_generated import layout, structs

from onert_checkpoint.format.revisions.v3.placement import range_alignment

__all__ = ["data_placement", "read_v1", "read_v2", "read_v3", "read_wof"]


def table(data: bytes, at: int, dtype, count: int) -> np.ndarray:
    """``count`` records of ``dtype`` at ``at``; ValueError when the file ends first."""
    dtype = np.dtype(dtype)
    raw = data[at:at + dtype.itemsize * count]
    if len(raw) != dtype.itemsize * count:
        raise ValueError(f"{count} records at {at} pass the end of the file")
    return np.frombuffer(raw, dtype)


def read_v1(data: bytes) -> Container:
    """Schema 1: header, the weights table, m and v (Adam) and the footer where the header has
    them (SPEC 4.2, 4.3)."""
    h = structs.V1Header.parse(data)
    n, adam = h.num_entries, h.ofs_opt2 != 0
    return Container(
        header=h,
        weights=table(data, 20, "<u4", n),
        m=table(data, h.ofs_opt1, "<u4", n) if adam else None,
        v=table(data, h.ofs_opt2, "<u4", n) if adam else None,
        footer=structs.V1Footer.parse(data[h.ofs_other:]) if h.ofs_other else None,
    )


def read_wof(data: bytes) -> Container:
    h = structs.WofHeader.parse(data)
    return Container(header=h, ofs_entries=table(data, 8, "<u4", h.num_entries))


def _v3_tensors(data: bytes, at: int) -> Container:
    """The columns of layout.V3TensorsHead.COLUMNS in file order, each present when its bit of
    ``columns`` is set, at its alignment (SPEC 7.1)."""
    head = structs.V3TensorsHead.parse(data[at:])
    body, pos = Container(head=head), at + 8
    for c in layout.V3TensorsHead.COLUMNS:
        if c.bit and not head.columns & c.bit:
            body[c.name] = None
            continue
        pos += -pos % c.align
        count = head.num_tensors
        if c.sum_of:
            count = sum(int(v) for v in body[c.sum_of] if v != c.skip)
        body[c.name] = table(data, pos, c.format, count)
        pos += c.size * count
    return body


def _body(data: bytes, kind: int, at: int, size: int, version: int) -> object:
    k = layout.SectionKind
    if kind == k.TENSORS and version == 3:
        return _v3_tensors(data, at)
    if kind == k.TENSORS:
        head = structs.V2TensorsHead.parse(data[at:])
        return Container(head=head, records=table(data, at + 8, layout.V2TensorRecord.DTYPE,
                                                  head.num_tensors))
    if kind == k.OPTIMIZER:
        head = structs.OptimizerHead.parse(data[at:])
        slots = table(data, at + 16, layout.SlotDescriptor.DTYPE, head.num_slots)
        entry = layout.V2SlotEntry.DTYPE if version == 2 else "<u8"
        return Container(head=head, slots=slots, entries=table(
            data, at + 16 + slots.nbytes, entry, head.num_slots * head.num_tensors))
    if kind == k.STATE:
        head = structs.StateHead.parse(data[at:])
        return Container(head=head, entries=table(data, at + 8, layout.StateEntry.DTYPE,
                                                  head.num_entries))
    if kind == k.ORIGIN:
        return structs.Origin.parse(data[at:])
    return data[at:at + size]


def read_v2(data: bytes, version: int = 2) -> Container:
    """Schemas 2 and 3: the header, then every section through the table, its body read by kind
    (DATA and unknown kinds stay raw bytes)."""
    h = structs.Header.parse(data)
    if h.version != version:
        raise ValueError(f"version {h.version}, not {version}")
    sections = []
    for j in range(h.num_sections):
        s = structs.SectionEntry.parse(data[64 + 32 * j:])
        s.body = _body(data, s.kind, s.ofs_body, s.len_body, version)
        sections.append(s)
    return Container(header=h, sections=sections)


def read_v3(data: bytes) -> Container:
    return read_v2(data, 3)


def data_placement(
    ofs_data_section: int,
    len_data: Sequence[int],
    entries: Sequence[int] = (),
    order: Sequence[int] | None = None,
) -> tuple[list[int], list[int | None]]:
    """The absolute offsets of the tensor ranges (in record order) and of the slot entries (in
    entry order, None for NO_STATE), placed in data order by SPEC.md 7.3."""
    n = len(len_data)
    order = list(range(n)) if order is None else [int(k) for k in order]
    tensor_at: list[int] = [0] * n
    entry_at: list[int | None] = [None] * len(entries)
    pos = ofs_data_section
    ranges = [(-1, k) for k in order]
    for j in range(len(entries) // n if n else 0):
        ranges += [(j, k) for k in order if int(entries[j * n + k]) != layout.NO_STATE]
    for j, k in ranges:
        length = int(len_data[k]) if j < 0 else int(entries[j * n + k])
        a = range_alignment(length)
        pos = -(-pos // a) * a
        if j < 0:
            tensor_at[k] = pos
        else:
            entry_at[j * n + k] = pos
        pos += length
    return tensor_at, entry_at
