"""The checks every part of a schema-2 file shares: the error, the first failing record,
padding, string pools, section heads, record tables (spec/SPEC.md, 6.5)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NoReturn

import numpy as np
from kaitaistruct import KaitaiStream

from ..errors import CheckpointError, error_for
from ..revisions.registry import BY_NAME, Revision
from ..source import BufferReader
from .constants import ALIGNMENT

if TYPE_CHECKING:
    from ..model import Checkpoint

__all__ = ["SectionInfo", "check_head", "check_padding", "check_pool", "decode", "fail",
           "first", "first_dirty", "first_repeat", "read_records", "rule_order_reader"]


@dataclass(frozen=True)
class SectionInfo:
    """One row of the section table, as checked (section_table.py)."""

    index: int
    kind: int
    flags: int
    start: int
    length: int
    entry_offset: int
    crc: int = 0

    @property
    def end(self) -> int:
        return self.start + self.length


def fail(code: str, field: str | None, offset: int | None, message: str) -> NoReturn:
    raise error_for(code, field, offset, message)


def first(mask: np.ndarray) -> int | None:
    """The position of the first True in ``mask``, or None."""
    if not mask.size:
        return None
    i = int(np.argmax(mask))
    return i if mask[i] else None


def check_padding(view: memoryview, start: int, end: int) -> None:
    """Rules T4e and D3 for one run of padding: the first non-zero byte is reported."""
    if end > start:
        pad = np.frombuffer(view, dtype=np.uint8, count=end - start, offset=start)
        nz = first(pad != 0)
        if nz is not None:
            fail("nonzero_padding", "padding", start + nz,
                 f"alignment padding byte at {start + nz} is {int(pad[nz])}, not 0")


def first_dirty(view: memoryview, starts: np.ndarray, pads: np.ndarray) -> int | None:
    """The offset of the first non-zero byte of the padding runs of ``pads`` bytes (each less
    than ALIGNMENT) before ``starts`` (absolute, past the header), in their order: each run is
    the tail of the ALIGNMENT bytes before its start, gathered for all through a strided view."""
    whole, a = np.frombuffer(view, dtype=np.uint8), ALIGNMENT
    windows = np.lib.stride_tricks.as_strided(whole, shape=(whole.size - a + 1, a),
                                              strides=(1, 1), writeable=False)
    dirty = (windows[starts - a] != 0) & (np.arange(a)[None, :] >= (a - pads)[:, None])
    hit = first(dirty.any(axis=1))
    if hit is None:
        return None
    return int(starts[hit]) - a + int(np.flatnonzero(dirty[hit])[0])


def check_pool(starts: np.ndarray, lengths: np.ndarray, field_of: Callable[[int], tuple[str, int]],
               pool_start: int, pool_end: int, gap_field: str) -> None:
    """Rule R8 (and O7, V8): names, keys and values stored back to back from ``pool_start`` in
    record order, exactly filling the section up to ``pool_end``. ``field_of(i)`` names the
    i-th string's field and its offset (made only for an error).

    Whole columns at once: for each string, in order, ``overlap``/``gap`` against the end of
    the previous one, then ``offset_out_of_bounds``; the first string that fails is reported.
    """
    starts = starts.astype(np.uint64, copy=False)
    lengths = lengths.astype(np.uint64, copy=False)
    n = starts.size
    ends = np.cumsum(lengths, dtype=np.uint64) if n else np.zeros(0, np.uint64)
    # u64 sums wrap as the reference C reader's do; a wrapped sum is caught as a misplaced
    # string or an end past the section
    expected = np.empty(n, np.uint64)
    if n:
        expected[0] = 0
        expected[1:] = ends[:-1]
        expected += np.uint64(pool_start)
    misplaced = starts != expected
    limit = np.uint64(pool_end)
    past = (starts > limit) | (lengths > limit - np.minimum(starts, limit))
    i = first(misplaced | past)
    if i is not None:
        field, at = field_of(i)
        s, e = int(starts[i]), int(expected[i])
        if s != e:
            fail("overlap" if s < e else "gap", field, at,
                 f"{field} is at {s}; it must follow the previous one at {e}")
        fail("offset_out_of_bounds", field, at,
             f"{field} ends at {s + int(lengths[i])}, past its section's end at {pool_end}")
    end = pool_start + (int(ends[-1]) if n else 0)
    if end != pool_end:
        fail("gap", gap_field, end, f"bytes {end}..{pool_end} of the section belong to nothing")


def decode(view: memoryview, start: int, length: int, field: str, at: int) -> str:
    try:
        return bytes(view[start : start + length]).decode("utf-8")
    except UnicodeDecodeError:
        fail("bad_utf8", field, at, f"{field} is not valid UTF-8")


def parse_fixed(view: memoryview, start: int, record: Any, parser: Callable[..., Any]) -> Any:
    """The fixed-size record at ``start`` (its generated layout ``record``) read by its
    generated Kaitai parser once the rules on it have passed: the values a reader goes on with
    (docs/performance-notes.md, "Fixed structures", says where the generated dtype is used)."""
    stream = KaitaiStream(BufferReader(view[start : start + record.SIZE]))
    parsed = parser(stream)
    stream.close()
    return parsed


def check_head(view: memoryview, sec: SectionInfo, head: Any, name: str, count_field: str):
    """Rules R0, O1, V1: the section holds its head (the error names the count field, at its
    offset in the head), and the head's ``reserved`` field is 0. ``head`` is the head's
    generated record (onert_checkpoint_generated.layout); returns the head read through it."""
    if sec.length < head.SIZE:
        fail("count_exceeds_file", f"{name}.{count_field}",
             sec.start + getattr(head, count_field).offset,
             f"the {name} section has {sec.length} bytes, less than its {head.SIZE}-byte head")
    fields = np.frombuffer(view, dtype=head.DTYPE, count=1, offset=sec.start)[0]
    if fields["reserved"]:
        fail("reserved_nonzero", f"{name}.reserved", sec.start + head.reserved.offset,
             "reserved field is not 0")
    return fields


def read_records(view, sec: SectionInfo, head_size: int, count: int, limit: int, dtype: np.dtype,
                 name: str, count_field: str, count_at: int, extra: int = 0) -> np.ndarray:
    if count > limit:
        fail("limit_exceeded", f"{name}.{count_field}", count_at,
             f"{count} exceeds the limit {limit}")
    need = head_size + dtype.itemsize * count + extra
    if need > sec.length:
        fail("count_exceeds_file", f"{name}.{count_field}", count_at,
             f"{count} records need {need} bytes; the {name} section has {sec.length}")
    return np.frombuffer(view, dtype=dtype, count=count, offset=sec.start + head_size)


def first_repeat(values: np.ndarray) -> int | None:
    """The first position whose value equals an earlier position's (sort, then compare
    neighbours: of each run of equal values, all but the first repeat; the smallest wins)."""
    if values.size < 2:
        return None
    order = np.argsort(values, kind="stable")
    v = values[order]
    dup = np.flatnonzero(v[1:] == v[:-1])
    return int(order[dup + 1].min()) if dup.size else None


def rule_order_reader(read: Callable[..., Checkpoint], default: str) -> Callable[..., Checkpoint]:
    """A revision's ``read(view, *, verify_data=True, revision=None)`` (``revision``: by default
    the registry's ``default``) from ``read(view, verify_data, defer, rev=record)``: the data
    section's checks deferred to the first access of any entry's data. A file refused so is
    read again with every check in place: a deferred check may come first in the spec's order,
    and the error is the one the spec names for the file."""

    def read_file(
        view: memoryview, *, verify_data: bool = True, revision: Revision | None = None
    ) -> Checkpoint:
        rev = revision if revision is not None else BY_NAME[default]
        try:
            return read(view, verify_data, verify_data, rev=rev)
        except CheckpointError:
            if verify_data:
                read(view, True, False, rev=rev)
            raise

    return read_file
