"""The data ranges of a schema-3 file: placed by rule, not stored (spec/SPEC.md 6.7.3), rules
P0 to P4, and the checks of the data section's bytes that ``load`` leaves to the first access
of tensor data (its CRC-32C, T4f, and the padding, P4).

Placement is a recurrence: each range starts at the end of the previous one rounded up to its
own alignment a(len), a power of two of at most 64. It is computed without a per-range loop,
by alignment level (:func:`place`): a range whose alignment is at least 2^L starts at a
multiple of 2^L, so the ranges from it up to the next such range have offsets relative to it
that depend on nothing before it. Level by level, from 1-byte alignment up to 64, these groups
are merged with one cumulative sum each: seven passes over the ranges at most.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..v2.rules import fail, first
from ..v2.section_table import SectionInfo, check_section_crc
from .constants import MAX_RANGE_ALIGNMENT, RANGE_LEVEL
from .slot_entries import SlotLengths
from .tensor_columns import TensorColumns

__all__ = ["DataRanges", "Placement", "check_placement", "data_checks", "place"]

#: ranges whose padding is gathered at once (64 bytes each): bounds the P4 check's memory
_PADDING_CHUNK = 1 << 16
_TOP_LEVEL = 6  # a(len) = 2^6 = 64 for len >= 64


def place(lengths: np.ndarray) -> np.ndarray:
    """The offset of each range from the data section's start, for ranges of these sizes in
    data order (int64 sizes, each at most 2^62 / len(lengths))."""
    count = lengths.size
    if not count:
        return np.zeros(0, np.int64)
    level = RANGE_LEVEL[np.minimum(lengths, MAX_RANGE_ALIGNMENT)]
    level[0] = _TOP_LEVEL  # the first range starts at the section's start, a multiple of 64
    # Groups at level L: a head (a range of alignment >= 2^L, or range 0) and the ranges up to
    # the next head. ``rel``: each range's offset from its group's head; ``extent``: from a
    # group's head to the end of its last range. At level 0 every range is a group.
    rel = np.zeros(count, np.int64)
    heads = np.arange(count, dtype=np.int64)
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
        sizes = np.diff(np.append(heads, count))
        rel += np.repeat(offset, sizes)
        heads = heads[first_of]
    return rel


@dataclass
class DataRanges:
    """The ranges in data order (6.7.3): the tensor records in ``order``, then slot 0's entries
    that are not NO_STATE in that order of records, slot 1's, ... ``parts[0]`` holds the
    tensor records in data order, ``parts[1 + j]`` slot j's."""

    lengths: np.ndarray  # u64, data order
    parts: list[np.ndarray]  # record numbers in data order, per part
    tensors: TensorColumns
    slots: SlotLengths | None

    @classmethod
    def collect(cls, tensors: TensorColumns, slots: SlotLengths | None) -> DataRanges:
        order = tensors.order
        records = np.arange(tensors.size) if order is None else order.astype(np.int64)
        parts = [records]
        lengths = [tensors.lengths if order is None else tensors.lengths[records]]
        if slots is not None:
            for j in range(len(slots.names)):
                column = slots.lengths[j] if order is None else slots.lengths[j][records]
                present = np.flatnonzero(~slots.absent(column))
                parts.append(records[present])
                lengths.append(column[present])
        return cls(np.concatenate(lengths), parts, tensors, slots)

    def field_of(self, i: int) -> tuple[str, int]:
        """The field and offset of range ``i`` (data order): its size."""
        for j, rows in enumerate(self.parts):
            if i < rows.size:
                k = int(rows[i])
                if j == 0:
                    return f"tensors[{k}].len_data", self.tensors.len_at(k)
                assert self.slots is not None
                return self.slots.entry_field(j - 1, k)
            i -= rows.size
        raise IndexError(i)


@dataclass
class Placement:
    """Where P2 put each range: per part (tensors, then each slot), the absolute offsets of
    the part's ranges in record order of its records (``parts`` of :class:`DataRanges`)."""

    tensor_offsets: np.ndarray  # int64, per tensor record
    slot_rows: list[np.ndarray]  # per slot: the tensor records with an entry, ascending
    slot_offsets: list[np.ndarray]  # per slot: their offsets


def check_placement(
    view: memoryview,
    tensors: TensorColumns | None,
    slots: SlotLengths | None,
    data: SectionInfo | None,
    verify_data: bool,
) -> Placement | None:
    """Rules P0 to P3, and P4 with ``verify_data`` (else :func:`data_checks` runs it later).
    Returns where every range is, None without ranges."""
    if tensors is None:
        if data is not None:  # P0
            fail("empty_section", "data", data.start, "a data section, but no tensors section")
        return None
    if data is None:  # P1
        fail(
            "offset_out_of_bounds",
            "tensors[0].len_data",
            tensors.len_at(0),
            "the file has tensors but no data section",
        )
    ranges = DataRanges.collect(tensors, slots)
    rel, lengths = _check_bounds(ranges, data)
    if verify_data:
        check_padding_between(view, data, rel, lengths)  # P4
    return _placement(ranges, rel + data.start)


def _check_bounds(ranges: DataRanges, data: SectionInfo) -> tuple[np.ndarray, np.ndarray]:
    """P2 and P3; the ranges' offsets from the section's start and their sizes (int64)."""
    room = data.length
    # A range larger than the section fails P2 at the latest at its own place: sizes capped
    # at room + 1 place every range before the first failure exactly, and the placement is
    # computed only up to the first range whose capped sizes alone pass the section's end
    # (the failure is there or earlier), so no sum can overflow.
    capped = np.minimum(ranges.lengths, np.uint64(room + 1)).astype(np.int64)
    beyond = first(np.cumsum(capped) > room)  # increasing until past room: no wrap before
    if beyond is not None:
        capped = capped[: beyond + 1]
    rel = place(capped)
    bad = first((rel > room) | (capped > room - rel))  # P2
    if bad is not None:
        field, at = ranges.field_of(bad)
        fail(
            "offset_out_of_bounds",
            field,
            at,
            f"{int(ranges.lengths[bad])} bytes placed at {data.start + int(rel[bad])} end past "
            f"the data section [{data.start}, {data.end})",
        )
    end = int(rel[-1] + capped[-1])
    if end < room:  # P3
        fail(
            "gap",
            "data",
            data.start + end,
            f"bytes {data.start + end}..{data.end} of the data section belong to no range",
        )
    return rel, capped


def check_padding_between(
    view: memoryview, data: SectionInfo, rel: np.ndarray, lengths: np.ndarray
) -> None:
    """P4: the first non-zero padding byte between ranges, in data order. Each padding run is
    shorter than 64 bytes and ends where a range starts: it is the tail of the 64 bytes before
    that start, gathered for many ranges at once through a strided view of the file."""
    if rel.size < 2:
        return
    pad_start = rel[:-1] + lengths[:-1]
    pad = rel[1:] - pad_start
    padded = np.flatnonzero(pad > 0)
    if not padded.size:
        return
    whole = np.frombuffer(view, dtype=np.uint8)
    # every padded range starts at least 64 bytes into the file (after the header)
    windows = np.lib.stride_tricks.as_strided(
        whole, shape=(whole.size - MAX_RANGE_ALIGNMENT + 1, MAX_RANGE_ALIGNMENT), strides=(1, 1),
        writeable=False,
    )
    columns = np.arange(MAX_RANGE_ALIGNMENT)[None, :]
    for lo in range(0, padded.size, _PADDING_CHUNK):
        which = padded[lo : lo + _PADDING_CHUNK]
        ends = rel[which + 1] + data.start
        rows = windows[ends - MAX_RANGE_ALIGNMENT]
        tail = columns >= (MAX_RANGE_ALIGNMENT - pad[which])[:, None]
        hit = first(((rows != 0) & tail).any(axis=1))
        if hit is not None:
            row = rows[hit] * tail[hit]
            offset = int(ends[hit]) - MAX_RANGE_ALIGNMENT + int(np.flatnonzero(row)[0])
            fail(
                "nonzero_padding",
                "padding",
                offset,
                f"padding byte at {offset} is {int(whole[offset])}, not 0",
            )


def _placement(ranges: DataRanges, absolute: np.ndarray) -> Placement:
    parts = ranges.parts
    n = ranges.tensors.size
    tensor_offsets = np.empty(n, np.int64)
    tensor_offsets[parts[0]] = absolute[:n]
    at = n
    slot_rows: list[np.ndarray] = []
    slot_offsets: list[np.ndarray] = []
    for rows in parts[1:]:
        ofs = absolute[at : at + rows.size]
        at += rows.size
        if ranges.tensors.order is not None:  # back to record order
            by_record = np.argsort(rows, kind="stable")
            rows, ofs = rows[by_record], ofs[by_record]
        slot_rows.append(rows)
        slot_offsets.append(ofs)
    return Placement(tensor_offsets, slot_rows, slot_offsets)


def data_checks(
    view: memoryview, data: SectionInfo, tensors: TensorColumns, slots: SlotLengths | None
) -> Callable[[], None]:
    """The data section's checks that read its bytes, for the first access of tensor data: its
    CRC-32C (T4f), then the padding between ranges (P4), in the spec's order."""

    def run() -> None:
        check_section_crc(view, data)
        ranges = DataRanges.collect(tensors, slots)
        rel, lengths = _check_bounds(ranges, data)  # passed at load: recomputes the places
        check_padding_between(view, data, rel, lengths)

    return run
