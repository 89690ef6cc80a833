"""The data ranges of a schema-3 file: placed by rule, not stored (spec/SPEC.md 7.3), rules
P0 to P4, and the checks of the data section's bytes that ``load`` leaves to the first access
of tensor data (its CRC-32C, T4f, and the padding, P4).

Placement is a recurrence: each range starts at the end of the previous one rounded up to its
own alignment a(len), a power of two of at most 64. It is computed without a per-range loop,
by alignment level (:func:`place`): a range whose alignment is at least 2^L starts at a
multiple of 2^L, so the ranges from it up to the next such range have offsets relative to it
that depend on nothing before it. Level by level, from 1-byte alignment up to 64, these groups
are merged with one cumulative sum each: seven passes at most. The ranges are walked in
chunks of :data:`_CHUNK`, so the work arrays stay small whatever the number of ranges.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
from onert_checkpoint_generated.layout import V3_MAX_RANGE_ALIGNMENT as MAX_RANGE_ALIGNMENT

from ...container.rules import fail, first, first_dirty
from ...container.section_table import SectionInfo, check_section_crc
from .slot_entries import SlotLengths
from .tensor_columns import TensorColumns

__all__ = ["DataRanges", "Pass", "Placement", "check_placement", "data_checks", "place",
           "range_alignment"]


def range_alignment(length: int) -> int:
    """``a(len)`` of 7.3: MAX_RANGE_ALIGNMENT (64) for 64 bytes or more, else the smallest
    power of two not below ``len`` (``a(0) = a(1) = 1``)."""
    if length >= MAX_RANGE_ALIGNMENT:
        return MAX_RANGE_ALIGNMENT
    return 1 << max(length - 1, 0).bit_length()


#: ranges placed (and their padding gathered, 64 bytes each) at once: bounds the memory
_CHUNK = 1 << 16
_TOP_LEVEL = 6  # a(len) = 2^6 = 64 for len >= 64
#: log2 of a(len) for len in 0..MAX_RANGE_ALIGNMENT, as a table for whole columns of sizes.
_LEVEL = np.array([range_alignment(x).bit_length() - 1 for x in range(MAX_RANGE_ALIGNMENT + 1)],
                  dtype=np.int8)


def place(lengths: np.ndarray, base: int = 0) -> np.ndarray:
    """The offsets (from the data section's start) of ranges of these sizes (int64, data
    order) placed one after another from ``base``, the end of the range before them (0: the
    section's start). Sizes and ``base`` must leave every sum below 2^62."""
    if not lengths.size:
        return np.zeros(0, np.int64)
    lead = base % MAX_RANGE_ALIGNMENT
    if lead:  # a range of ``lead`` bytes at the multiple of 64 before base stands for the rest
        lengths = np.concatenate([np.array([lead], np.int64), lengths])
    count = lengths.size
    level = _LEVEL[np.minimum(lengths, MAX_RANGE_ALIGNMENT)]
    level[0] = _TOP_LEVEL  # the first range starts at a multiple of 64
    # Groups at level L: a head (a range of alignment >= 2^L, or range 0) and the ranges up to
    # the next head; ``extent``: from a group's head to the end of its last range. At level 0
    # every range is a group. A range's offset is the sum over the levels of its group's
    # offset within the next level's group: each level adds, at its heads, the change of that
    # offset from the group before (``diff``), and one cumulative sum adds them up.
    diff = np.zeros(count, np.int64)
    heads: np.ndarray = np.arange(count, dtype=np.int64)  # numpy 2.2 and 2.4 stubs alike
    extent = lengths.astype(np.int64, copy=True)
    for lv in range(_TOP_LEVEL + 1):
        nxt = level[heads] > lv if lv < _TOP_LEVEL else heads == 0
        if nxt.all():
            continue  # no head of exactly this level: the groups stay as they are
        # a head of level lv starts at the previous group's end rounded up to 2^lv; that group
        # started at a multiple of 2^lv, so only its extent matters
        mask = (1 << lv) - 1
        step = (extent + mask) & ~mask
        within = np.cumsum(step) - step
        first_of = np.flatnonzero(nxt)
        group = np.cumsum(nxt) - 1
        offset = within - within[first_of][group]
        last = np.append(first_of[1:], heads.size) - 1
        extent = offset[last] + extent[last]
        diff[heads] += np.diff(offset, prepend=0)
        heads = heads[first_of]
    rel = np.cumsum(diff)
    rel += base - lead
    return rel[1:] if lead else rel


# One pass of the walk: the sequence positions of its ranges (ascending; None: every position
# 0..n-1 has a range) and each range's end relative to the data section's start.
Pass = tuple[np.ndarray | None, np.ndarray]


@dataclass
class DataRanges:
    """The ranges in data order (7.3): the tensor records in ``order``, then slot 0's entries
    that are not NO_STATE in that order of records, slot 1's, ... Part 0 is the tensors, part
    1 + j slot j; ``records[part]`` the record of each of the part's ranges, in data order
    (None: every record, in record order)."""

    tensors: TensorColumns
    slots: SlotLengths | None
    records: list[np.ndarray | None]

    @classmethod
    def collect(cls, tensors: TensorColumns, slots: SlotLengths | None) -> DataRanges:
        order = tensors.order
        records: list[np.ndarray | None] = [order]
        for column in () if slots is None else slots.lengths:  # each slot's K x T row
            if order is None:
                records.append(np.flatnonzero(~SlotLengths.absent(column)))
            else:
                records.append(order[np.flatnonzero(~SlotLengths.absent(column[order]))])
        return cls(tensors, slots, records)

    def count(self, part: int) -> int:
        rows = self.records[part]
        return self.tensors.size if rows is None else int(rows.size)

    def lengths(self, part: int, lo: int, hi: int) -> np.ndarray:
        """The sizes (u64) of ranges lo..hi of a part."""
        rows = self.records[part]
        column = self.tensors.lengths if part == 0 else self.slots.lengths[part - 1]  # type: ignore[union-attr]
        return column[lo:hi] if rows is None else column[rows[lo:hi]]

    def passes(self, parts: list[np.ndarray], start: int) -> list[Pass]:
        """Each part as the range_index section sees a pass of the walk (7.5): its ranges'
        sequence positions (None: every position) and ends relative to ``start``, from their
        offsets ``parts`` (data order)."""
        order = self.tensors.order
        where = None
        if order is not None:  # record -> sequence position
            where = np.empty(order.size, np.int64)
            where[order] = np.arange(order.size)
        out: list[Pass] = []
        for part, offsets in enumerate(parts):
            rows = self.records[part]
            ends = offsets - start + self.lengths(part, 0, self.count(part)).astype(np.int64)
            out.append((None if not part else rows if where is None else where[rows], ends))
        return out

    def field_of(self, part: int, i: int) -> tuple[str, int]:
        """The field and offset of range ``i`` of a part: its size."""
        rows = self.records[part]
        k = i if rows is None else int(rows[i])
        if part == 0:
            return f"tensors[{k}].len_data", self.tensors.len_at(k)
        assert self.slots is not None
        return self.slots.entry_field(part - 1, k)


@dataclass
class Placement:
    """Where P2 put each range, absolute: per tensor record, and per slot for the records
    with an entry (ascending)."""

    tensor_offsets: np.ndarray
    slot_rows: list[np.ndarray]
    slot_offsets: list[np.ndarray]


def check_placement(view: memoryview, tensors: TensorColumns | None, slots: SlotLengths | None,
                    data: SectionInfo | None, verify_data: bool,
                    after_p3: Callable[[list[Pass]], object] | None = None) -> Placement | None:
    """Rules P0 to P3, and P4 with ``verify_data`` (else :func:`data_checks` runs it later).
    Returns where every range is, None without ranges. ``after_p3`` runs on the placement
    between P3 and P4 (the range_index section's rules, SPEC 7.5)."""
    if tensors is None:
        if data is not None:  # P0
            fail("empty_section", "data", data.start, "a data section, but no tensors section")
        return None
    if data is None:  # P1
        fail("offset_out_of_bounds", "tensors[0].len_data", tensors.len_at(0),
             "the file has tensors but no data section")
    ranges = DataRanges.collect(tensors, slots)
    parts = [np.empty(ranges.count(p), np.int64) for p in range(len(ranges.records))]
    between = None if after_p3 is None else lambda: after_p3(ranges.passes(parts, data.start))
    for part, lo, rel, _ in _walk(view, ranges, data, verify_data, between):
        parts[part][lo : lo + rel.size] = rel
        parts[part][lo : lo + rel.size] += data.start
    return _placement(ranges, parts)


def _walk(view: memoryview, ranges: DataRanges, data: SectionInfo, padding: bool,
          between: Callable[[], object] | None = None,
          ) -> Iterator[tuple[int, int, np.ndarray, np.ndarray]]:
    """Every range in data order, chunk by chunk: (part, first range, offsets from the
    section's start, sizes), after rule P2 on them; then P3, ``between``, then (``padding``)
    P4.

    A range larger than the section fails P2 at the latest at its own place: sizes capped at
    the section's size + 1 place every range before the first failure exactly, and a chunk is
    placed only up to the first range whose capped sizes alone pass the section's end (the
    failure is there or earlier), so no sum can overflow."""
    room = data.length
    pos = 0
    dirty: int | None = None
    for part in range(len(ranges.records)):
        total = ranges.count(part)
        for lo in range(0, total, _CHUNK):
            sizes = ranges.lengths(part, lo, min(lo + _CHUNK, total))
            capped = np.minimum(sizes, np.uint64(room + 1)).astype(np.int64)
            beyond = first(np.cumsum(capped, dtype=np.uint64) > np.uint64(room - pos))
            if beyond is not None:
                capped = capped[: beyond + 1]
            rel = place(capped, pos)
            bad = first((rel > room) | (capped > room - rel))  # P2
            if bad is not None:
                field, at = ranges.field_of(part, lo + bad)
                fail("offset_out_of_bounds", field, at,
                     f"{int(sizes[bad])} bytes placed at {data.start + int(rel[bad])} end past "
                     f"the data section [{data.start}, {data.end})")
            if padding and dirty is None:
                dirty = first_dirty_padding(view, data, pos, rel, capped)
            yield part, lo, rel, capped
            pos = int(rel[-1] + capped[-1])
    if pos < room:  # P3
        fail("gap", "data", data.start + pos,
             f"bytes {data.start + pos}..{data.end} of the data section belong to no range")
    if between is not None:
        between()
    if dirty is not None:  # P4
        fail("nonzero_padding", "padding", dirty,
             f"padding byte at {dirty} is {view[dirty]}, not 0")


def first_dirty_padding(view: memoryview, data: SectionInfo, pos: int, rel: np.ndarray,
                        lengths: np.ndarray) -> int | None:
    """The offset of the first non-zero padding byte before ranges at ``rel`` (from the
    section's start; the range before them ends at ``pos``), or None."""
    ends = np.empty(rel.size, np.int64)
    ends[0] = pos
    ends[1:] = rel[:-1] + lengths[:-1]
    pad = rel - ends
    padded = np.flatnonzero(pad > 0)
    return first_dirty(view, rel[padded] + data.start, pad[padded]) if padded.size else None


def _placement(ranges: DataRanges, parts: list[np.ndarray]) -> Placement:
    """Offsets in record order: the tensors' by record, each slot's for its records."""
    order = ranges.tensors.order
    tensor_offsets = parts[0]
    if order is not None:
        tensor_offsets = np.empty_like(parts[0])
        tensor_offsets[order] = parts[0]
    slot_rows: list[np.ndarray] = []
    slot_offsets: list[np.ndarray] = []
    for j, offsets in enumerate(parts[1:]):
        rows = ranges.records[1 + j]
        assert rows is not None
        if order is not None:  # back to record order
            by_record = np.empty(ranges.tensors.size, np.int64)
            by_record[rows] = offsets
            rows = np.flatnonzero(~SlotLengths.absent(ranges.slots.lengths[j]))  # type: ignore[union-attr]
            offsets = by_record[rows]
        slot_rows.append(rows)
        slot_offsets.append(offsets)
    return Placement(tensor_offsets, slot_rows, slot_offsets)


def data_checks(view: memoryview, data: SectionInfo, tensors: TensorColumns,
                slots: SlotLengths | None, *, whole_crc: bool = True) -> Callable[[], None]:
    """The data section's checks that read its bytes, for the first access of tensor data: its
    CRC-32C (T4f; ``whole_crc=False`` leaves it to the per-block checks, data_blocks.py), then
    the padding between ranges (P4), in the spec's order."""

    def run() -> None:
        if whole_crc:
            check_section_crc(view, data)
        for _ in _walk(view, DataRanges.collect(tensors, slots), data, True):
            pass  # P2 and P3 passed at load: the walk recomputes the places for P4

    return run
