"""The data ranges of a schema-2 file: rules D0 to D4 (spec/SPEC.md, 8.3 and 6.5), and the
checks of the data section's bytes that ``load`` leaves to the first access of tensor data.

Ranges are columns (start, length) in the spec's range order: the tensor records, then the
slot entries slot by slot (NO_STATE skipped). A range's field name is made only for an error.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from onert_checkpoint_generated.layout import V2TensorRecord

from ...container.constants import ALIGNMENT
from ...container.rules import fail, first, first_dirty
from ...container.section_table import SectionInfo, check_section_crc
from .optimizer import SlotTable
from .tensors import TensorRecords

__all__ = ["DataRanges", "check_data_ranges", "data_checks"]

#: ranges whose padding is gathered at once (64 bytes each): bounds the check's memory
_PADDING_CHUNK = 1 << 16


@dataclass
class DataRanges:
    starts: np.ndarray  # u64, range order
    lengths: np.ndarray
    tensors: TensorRecords | None
    slots: SlotTable | None
    present: list[np.ndarray]  # per slot: the tensor records with an entry

    @classmethod
    def collect(cls, tensors: TensorRecords | None, slots: SlotTable | None) -> DataRanges:
        empty = [np.zeros(0, np.uint64)]
        starts = empty + ([] if tensors is None else [tensors.records["ofs_data"]])
        lengths = empty + ([] if tensors is None else [tensors.records["len_data"]])
        present = []
        if slots is not None:
            entries = slots.entries
            for j in range(len(slots.names)):
                rows = slots.present(j)
                present.append(rows)
                starts.append(entries["ofs_data"][j][rows])
                lengths.append(entries["len_data"][j][rows])
        return cls(np.concatenate(starts), np.concatenate(lengths), tensors, slots, present)

    def __len__(self) -> int:
        return int(self.starts.size)

    def field_of(self, i: int) -> tuple[str, int]:
        """The field and offset of range ``i`` (range order)."""
        n = 0 if self.tensors is None else self.tensors.records.size
        if i < n:
            assert self.tensors is not None
            return f"tensors[{i}].ofs_data", self.tensors.at(i) + V2TensorRecord.ofs_data.offset
        i -= n
        assert self.slots is not None
        for j, rows in enumerate(self.present):
            if i < rows.size:
                return self.slots.entry_field(j, int(rows[i]))
            i -= rows.size
        raise IndexError(i)


def check_data_ranges(view: memoryview, ranges: DataRanges, data: SectionInfo | None,
                      verify_data: bool) -> None:
    """Rules D0 to D4. The padding rule D3 reads a 64-byte block of the file per range (the
    mapping's fault-around makes that most of the file): it runs here only with
    ``verify_data``, else when tensor data are first accessed (:func:`data_checks`)."""
    n = len(ranges)
    if data is not None and n == 0:  # D0
        fail("empty_section", "data", data.start, "a data section, but no data range")
    starts, lengths = ranges.starts, ranges.lengths
    misaligned = starts % np.uint64(ALIGNMENT) != 0
    if data is None:
        outside = np.ones(n, bool)
    else:
        lo, hi = np.uint64(data.start), np.uint64(data.end)
        outside = (starts < lo) | (starts > hi) | (lengths > hi - np.minimum(starts, hi))
    i = first(misaligned | outside)  # D1
    if i is not None:
        field, at = ranges.field_of(i)
        start, length = int(starts[i]), int(lengths[i])
        if misaligned[i]:
            fail("misaligned", field, at, f"data at {start} is not a multiple of {ALIGNMENT}")
        where = ("there is no data section" if data is None
                 else f"the data section is [{data.start}, {data.end})")
        fail("offset_out_of_bounds", field, at, f"{length} bytes at {start}: {where}")
    if data is None:
        return
    order, s, prev = _sorted(ranges, data)
    expected = -(-prev // ALIGNMENT) * ALIGNMENT
    k = first(s != expected)  # D2
    if verify_data:
        check_padding_runs(view, s[:k] if k is not None else s, prev)  # D3
    if k is not None:
        field, at = ranges.field_of(int(order[k]))
        start, pos = int(s[k]), int(prev[k])
        if start < int(expected[k]):
            fail("overlap", field, at,
                 f"data at {start} overlaps the previous range, which ends at {pos}")
        fail("gap", field, at, f"data at {start}; the previous range ends at {pos}")
    end = int(s[-1] + ranges.lengths[order[-1]]) if n else data.start
    if end != data.end:  # D4
        fail("gap", "data", end,
             f"bytes {end}..{data.end} of the data section belong to no tensor or slot")


def _sorted(ranges: DataRanges, data: SectionInfo) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Range order sorted by (start, position), the sorted starts, and for each the end of
    the range before it (the data section's start for the first)."""
    starts = ranges.starts.astype(np.int64)
    order = np.argsort(starts, kind="stable")
    s = starts[order]
    prev = np.empty_like(s)
    if s.size:
        prev[0] = data.start
        prev[1:] = s[:-1] + ranges.lengths[order[:-1]].astype(np.int64)
    return order, s, prev


def check_padding_runs(view: memoryview, s: np.ndarray, prev: np.ndarray) -> None:
    """D3: the first (sorted) range whose padding ``[prev, s)`` holds a non-zero byte is
    refused, for ranges that passed D2 (``s`` is ``prev`` rounded up to 64), in chunks of
    bounded memory."""
    pad = s - prev[: s.size]
    padded = np.flatnonzero(pad > 0)
    for lo in range(0, padded.size, _PADDING_CHUNK):
        which = padded[lo : lo + _PADDING_CHUNK]
        dirty = first_dirty(view, s[which], pad[which])
        if dirty is not None:
            fail("nonzero_padding", "padding", dirty,
                 f"alignment padding byte at {dirty} is {view[dirty]}, not 0")


def data_checks(view: memoryview, data: SectionInfo, tensors: TensorRecords | None,
                slots: SlotTable | None) -> Callable[[], None]:
    """The data section's checks that read its bytes, for the first access of tensor data:
    its CRC-32C (T4f), then the padding between ranges (D3), in the spec's order."""

    def run() -> None:
        check_section_crc(view, data)
        ranges = DataRanges.collect(tensors, slots)
        _, s, prev = _sorted(ranges, data)
        check_padding_runs(view, s, prev)

    return run
