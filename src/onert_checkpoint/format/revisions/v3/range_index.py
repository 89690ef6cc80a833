"""Schema 3's range_index section (kind 0x100009, optional; spec/SPEC.md 7.5): where the
placement walk of rule P2 stands every G = 2**group_shift sequence positions of each pass, so
that a reader without scratch finds any range's offset in at most G - 1 steps.

Rules I1 to I7 (after P3, before P4) compare the section with :func:`group_starts` of the walk
P2 made, which the writer's plan records; :func:`lookup` is the section's lookup, as a reader
without scratch runs it. It registers by kind (container/extensions.py) from here, not from the
container as data_blocks does: its rules and body replay schema 3's placement (placement.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from onert_checkpoint_generated.layout import (
    V3_DEFAULT_GROUP_SHIFT,
    V3_MAX_GROUP_SHIFT,
    V3_MIN_GROUP_SHIFT,
    V3_RANGE_INDEX_KIND,
    V3_RANGE_INDEX_SECTION_POSITION,
    V3_RANGE_INDEX_SECTION_START,
    V3RangeIndexHead,
)

from ...container.constants import NO_STATE, align
from ...container.extensions import Extension, ceil_shift, register
from ...container.rules import fail, first
from ...container.section_table import SectionInfo
from .placement import Pass, range_alignment
from .tensor_columns import TensorColumns

__all__ = ["KIND", "RangeIndex", "group_starts", "lookup"]

KIND = V3_RANGE_INDEX_KIND
HEAD = V3RangeIndexHead
HEAD_SIZE = HEAD.SIZE
_START = np.dtype(V3_RANGE_INDEX_SECTION_START.format)
#: position[k], record k's sequence position (present with the tensors section's order column)
_POSITION = np.dtype(V3_RANGE_INDEX_SECTION_POSITION.format)


@dataclass
class RangeIndex:
    """A validated range_index section: its group shift, starts and (with an ``order``
    column) positions, views on the file."""

    shift: int
    starts: np.ndarray
    positions: np.ndarray | None

    @property
    def group_size(self) -> int:
        return 1 << self.shift


def group_starts(n: int, shift: int, passes: list[Pass]) -> np.ndarray:
    """``start`` of 7.5 (u64, pass-major): for each pass and group g, where the walk stands
    when the pass reaches position G*g, i.e. the end of the last range of the pass at an
    earlier position, or where the previous pass ended (0 for the first)."""
    m = ceil_shift(n, shift)
    bounds = np.arange(m, dtype=np.int64) << shift
    out = np.empty(len(passes) * m, np.uint64)
    base = 0
    for p, (positions, ends) in enumerate(passes):
        last = bounds - 1 if positions is None else np.searchsorted(positions, bounds) - 1
        if ends.size:
            values = np.where(last >= 0, ends[np.maximum(last, 0)], base)
            base = int(ends[-1])
        else:
            values = np.full(m, base, np.int64)
        out[p * m : (p + 1) * m] = values
    return out


def _body(shift: int, placed: Any) -> bytes:
    """The section of the writer's ``placed`` ranges: the head, where the walk stands every
    2**shift positions of each pass (from the ends of the ranges with bytes: an empty range
    moves nothing), and with an ``order`` column every record's sequence position."""
    n, ends = placed.n, placed.rel + placed.lengths
    passes: list[Pass] = []
    lo = 0
    for at in placed.positions:
        passes.append((at, ends[lo : lo + at.size]))
        lo += at.size
    head = np.zeros(1, HEAD.DTYPE)
    head["group_shift"] = shift
    head["num_groups"] = ceil_shift(n, shift)
    body = head.tobytes() + group_starts(n, shift, passes).astype(_START, copy=False).tobytes()
    if placed.rank_of is not None:
        body += placed.rank_of.astype(_POSITION).tobytes()
    return body


def _check(view: memoryview, sec: SectionInfo, shift: int, count: int,
           tensors: TensorColumns | None, passes: list[Pass] | None) -> RangeIndex:
    """Rules I4 to I7 on the range_index section ``sec`` (spec/SPEC.md 7.5), after I1 to I3
    and P3 (which made the walk's ``passes``; None without ranges)."""
    s, length = sec.start, sec.length
    if tensors is None or passes is None:  # I4
        fail("empty_section", "range_index", s, "a range_index section, but no tensors section")
    n = tensors.size
    num_passes = len(passes)  # the tensors', then each slot's
    m = ceil_shift(n, shift)
    if count != m:  # I5
        fail("bad_range_index", "range_index.num_groups", s + HEAD.num_groups.offset,
             f"num_groups is {count}; {n} tensor records in groups of {1 << shift} make {m}")
    order = tensors.order
    want = HEAD_SIZE + _START.itemsize * num_passes * m
    if order is not None:
        want += _POSITION.itemsize * n
    if length != want:
        fail("bad_range_index", "range_index.start", s + HEAD_SIZE,
             f"the range_index section has {length} bytes; {num_passes} passes of {m} groups"
             f"{' and a position per record' if order is not None else ''} need {want}")
    starts = np.frombuffer(view, _START, num_passes * m, s + HEAD_SIZE)
    expected = group_starts(n, shift, passes)
    bad = first(starts != expected)
    if bad is not None:  # I6
        fail("bad_range_index", f"range_index.start[{bad}]", s + HEAD_SIZE + _START.itemsize * bad,
             f"start[{bad}] (pass {bad // m}, group {bad % m}) is {int(starts[bad])}; the walk "
             f"stands at {int(expected[bad])}")
    positions = None
    if order is not None:
        c = s + HEAD_SIZE + _START.itemsize * num_passes * m
        positions = np.frombuffer(view, _POSITION, n, c)
        bad = first(positions[order] != np.arange(n))
        if bad is not None:  # I7
            k = int(order[bad])
            fail("bad_range_index", f"range_index.position[{k}]", c + _POSITION.itemsize * k,
                 f"position[{k}] is {int(positions[k])}; record {k} is at sequence position "
                 f"{bad} of the order column")
    return RangeIndex(shift, starts, positions)


def lookup(index: RangeIndex, lengths: list[np.ndarray], order: np.ndarray | None, part: int,
           k: int) -> int:
    """7.5's lookup: the offset, relative to the data section's start, of record ``k``'s
    range in pass ``part`` (0: its tensor range, 1 + j: its slot-j entry), from the group's
    start and at most G - 1 ranges before it. ``lengths[part]`` is the pass's size column in
    record order (``len_data``, or slot j's entries with NO_STATE)."""
    sizes = lengths[part]
    m = index.starts.size // len(lengths)
    q = k if index.positions is None else int(index.positions[k])
    g = q >> index.shift
    pos = int(index.starts[part * m + g])
    for i in range(g << index.shift, q):
        r = i if order is None else int(order[i])
        size = int(sizes[r])
        if part and size == NO_STATE:
            continue
        pos = align(pos, range_alignment(size)) + size
    return align(pos, range_alignment(int(sizes[k])))


#: The writer's group size is G = 64 when the checkpoint names none, written only when the file
#: has more than G tensors.
register(Extension(
    KIND, "range_index", HEAD, "bad_range_index", V3_MIN_GROUP_SHIFT, V3_MAX_GROUP_SHIFT,
    f"groups of {1 << V3_MIN_GROUP_SHIFT} to {1 << V3_MAX_GROUP_SHIFT} ranges",
    "range_index_group", "", default=V3_DEFAULT_GROUP_SHIFT,
    default_above=1 << V3_DEFAULT_GROUP_SHIFT, late=True, check=_check, body=_body,
    covers=lambda placed: placed.n,
))
