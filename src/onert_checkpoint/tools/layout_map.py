"""An annotated map of a file: every field's offset, size, name and value, in file order.

This is what ``onert-ckpt dump --layout`` prints (like ``ksdump`` or ``readelf -h``): the first
thing to look at when two readers disagree. It works on invalid files too: the fields that can
be read are mapped, and the first rule that fails is reported with them.

The revision records (format/revisions/registry.py) say which map a version byte gets: the
section-table container's for a revision that writes one, schema 1's or WOF's for version 1
(told apart by structure); the offsets and widths are the generated layout's.
"""

from __future__ import annotations

import heapq
import os
import struct
import zlib
from array import array
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from onert_checkpoint_generated import layout

from ..format.dispatch import MAGIC, read_view
from ..format.errors import CheckpointError
from ..format.model import Checkpoint
from ..format.revisions import registry
from ..format.revisions.blocks import Block
from ..format.revisions.v1 import REVISION as V1
from ..format.revisions.v1 import reader as v1
from ..format.revisions.wof import REVISION as WOF
from ..format.revisions.wof import reader as wof
from ..format.source import open_source
from .jsonout import json_pieces

__all__ = ["LayoutField", "LayoutMap", "layout_map", "section_entries"]


@dataclass(frozen=True)
class LayoutField:
    """One field or byte range: ``value`` is what it holds, ``note`` what it means."""

    offset: int
    size: int
    name: str
    value: str = ""
    note: str = ""


@dataclass
class LayoutMap:
    revision: str | None
    file_size: int
    fields: list[LayoutField] = field(default_factory=list)
    #: the first rule the file breaks (None for a valid file)
    error: CheckpointError | None = None
    #: the data ranges' fields, in file order, all after ``fields`` (their offsets merge with
    #: them): made on demand by :meth:`iter_fields` (``layout_map(..., lazy=True)``), so a
    #: file of many entries is printed without a field object per entry at once
    data: Callable[[], Iterator[LayoutField]] | None = field(default=None, repr=False)

    def iter_fields(self) -> Iterator[LayoutField]:
        """Every field in file order (``fields``, and the data ranges made as they go)."""
        if self.data is None:
            return iter(self.fields)
        return heapq.merge(self.fields, self.data(), key=lambda f: (f.offset, -f.size))

    def to_dict(self, *, lazy: bool = False) -> dict[str, object]:
        """The map as JSON values; with ``lazy``, its fields a generator (:meth:`json_pieces`)."""
        fields = (f.__dict__ for f in self.iter_fields())
        return {"revision": self.revision, "file_size": self.file_size,
                "fields": fields if lazy else list(fields),
                "error": None if self.error is None else self.error.to_dict()}

    def json_pieces(self) -> Iterator[str]:
        """:meth:`to_dict` as one line of ASCII JSON, in pieces (the same text as
        ``json.dumps(self.to_dict())``), one field at a time."""
        return json_pieces(self.to_dict(lazy=True))


def _u(view: memoryview, at: int, size: int) -> int | None:
    if at + size > len(view):
        return None
    return int.from_bytes(view[at : at + size], "little")


def section_entries(data: bytes | memoryview) -> list[tuple[int, ...]]:
    """(kind, ofs_body, len_body) of each section-table entry the first bytes of a
    section-table file hold (at most MAX_SECTIONS), read at the generated layout's offsets and
    not checked."""
    view, head, entry = memoryview(data), layout.Header, layout.SectionEntry
    count = min(_u(view, head.num_sections.offset, head.num_sections.size) or 0,
                layout.MAX_SECTIONS, (len(view) - head.SIZE) // entry.SIZE)
    return [tuple(int.from_bytes(view[at + f.offset :][: f.size], "little")
                  for f in (entry.kind, entry.ofs_body, entry.len_body))
            for at in range(head.SIZE, head.SIZE + entry.SIZE * count, entry.SIZE)]


#: What each field of the generated records means, by record and field name (the offsets and
#: widths are the generated layout's, from spec/*.ksy).
_NOTES: dict[str, dict[str, str]] = {
    "V1Header": {
        "version": "schema version",
        "ofs_opt1": "opt1_offset (onert) / m_offset (onert-micro)",
        "ofs_opt2": "opt2_offset (onert) / v_offset (onert-micro)",
        "ofs_other": "other_offset: start of the 8-byte footer",
        "num_entries": "length / n_buffers: entries of every offset table",
    },
    "V1Footer": {"step": "current step", "epoch": "current epoch (onert always writes 0)"},
    "WofHeader": {
        "version": "schema version (shared with schema-1 checkpoints)",
        "num_entries": "number of circle tensors",
    },
    "Header": {
        "version": "schema version",
        "header_crc": f"CRC-32C of the {layout.Header.SIZE}-byte header, this field as 0",
        "len_file": "file size",
        "ofs_section_table": f"section table start ({layout.Header.ofs_section_table.valid})",
        "num_sections": "entries of the section table",
        "section_table_crc": "CRC-32C of the section table",
    },
    "V3DataBlocksHead": {"reserved": "must be 0", "num_blocks": "blocks of the data section"},
    "V3RangeIndexHead": {"reserved": "must be 0"},
}


def _int_fields(view: memoryview, record: Any, at: int = 0, prefix: str = "",
                notes: dict[str, str] | None = None) -> list[LayoutField]:
    """The fields of a generated ``record`` at ``at``, each with its note (``notes``' first,
    "must be 0" where the layout requires it), up to the first the file cuts (shown as its
    bytes, "truncated"); reserved bytes only when the file holds them whole."""
    out = []
    notes = {**_NOTES.get(record.__name__, {}), **(notes or {})}
    for f in record.FIELDS:
        here, name = at + f.offset, prefix + f.name
        value = _u(view, here, f.size)
        if f.count > 1:
            if value is not None:
                out.append(LayoutField(here, f.size, name, "", f"{f.size} bytes, must be 0"))
            continue
        if value is None:
            if len(view) > here and f.name != "magic":
                out.append(LayoutField(here, len(view) - here, name, bytes(view[here:]).hex(" "),
                                       "truncated"))
            break
        shown = f"{value:#010x}" if f.name.endswith("crc") else str(value)
        note = notes.get(f.name, "must be 0" if f.valid == 0 else "")
        if f.name == "magic":
            bad = "" if value == f.valid else f", not {f.valid}"
            note = f"bytes {bytes(view[here : here + f.size]).hex(' ')}{bad}"
        out.append(LayoutField(here, f.size, name, shown, note))
    return out


def _block_fields(view: memoryview, block: Block, label: str) -> list[LayoutField]:
    n, width = len(block.offsets), layout.V1_OFFSET_TABLE_OFS_ENTRIES.size
    out = [LayoutField(block.start, width * n, f"{label} table", "", f"{n} u{8 * width} offsets")]
    for i in range(n):
        o, size = int(block.offsets[i]), int(block.sizes[i])
        note = "absent" if o == 0 else f"data [{o}, {o + size}), {size} bytes"
        out.append(LayoutField(block.start + width * i, width, f"{label}[{i}]", str(o), note))
    for i in sorted((i for i in range(n) if block.offsets[i] != 0),
                    key=lambda i: (int(block.offsets[i]), i)):
        o, size = int(block.offsets[i]), int(block.sizes[i])
        crc = zlib.crc32(view[o : o + size]) & 0xFFFFFFFF
        out.append(LayoutField(o, size, f"{label}[{i}] data", "", f"crc32 {crc:08x}"))
    return out


def _v1_header(view: memoryview, notes: dict[str, str] | None = None) -> list[LayoutField]:
    return [replace(f, note="0: no footer") if f.name == "ofs_other" and f.value == "0" else f
            for f in _int_fields(view, layout.V1Header, notes=notes)]


def _version_1(view: memoryview) -> LayoutMap:
    """Schema 1's map, else WOF's (told apart by structure), else the header and the error of
    the one the file is shaped as."""
    try:
        read = v1.read_layout(view)
    except CheckpointError as checkpoint_error:
        try:
            _, block = wof.read_layout(view)
        except CheckpointError as wof_error:
            if wof.is_wof_shaped(view):
                return LayoutMap(WOF.name, len(view), _int_fields(view, layout.WofHeader),
                                 wof_error)
            return LayoutMap(V1.name, len(view), _v1_header(view), checkpoint_error)
        fields = _int_fields(view, layout.WofHeader) + _block_fields(view, block, "tensors")
        return LayoutMap(WOF.name, len(view), fields)
    sgd = {"ofs_opt1": "SGD: no m block", "ofs_opt2": "SGD: no v block"}
    fields = _v1_header(view, sgd if read.kind == "sgd" else None)
    for name, block in read.blocks.items():
        fields += _block_fields(view, block, name)
    if read.has_footer:
        fields += _int_fields(view, layout.V1Footer, read.header.ofs_other, "footer.")
    return LayoutMap(V1.name, len(view), fields)


def _container(view: memoryview, record: registry.Revision) -> LayoutMap:
    try:
        return _sections_map(view, record)
    except CheckpointError as err:
        return LayoutMap(record.name, len(view), _int_fields(view, layout.Header), err)


def _sections_map(view: memoryview, record: registry.Revision) -> LayoutMap:
    """Schema 2 or 3: header, section table, each section's body (schema 3's tensors section
    column by column), each tensor's and slot's data."""
    from ..format.container.constants import KIND_NAMES

    ckpt = record.read(view)  # validates first: the ranges below are then known to be sane
    # schema 3's codec: columnar tensors, and the data_blocks and range_index sections
    columnar = record.reader.startswith("v3.")
    fields = _int_fields(view, layout.Header)
    kinds = dict(KIND_NAMES)
    if columnar:
        kinds |= {layout.V3_DATA_BLOCKS_KIND: "data_blocks",
                  layout.V3_RANGE_INDEX_KIND: "range_index"}
    entries = section_entries(view)
    for i, (kind, _, _) in enumerate(entries):
        at = layout.Header.SIZE + layout.SectionEntry.SIZE * i
        fields += [LayoutField(f.offset, f.size, f.name, f.value,
                               kinds.get(kind, "unknown kind") if f.name.endswith("kind") else "")
                   for f in _int_fields(view, layout.SectionEntry, at, f"sections[{i}].")]
    for kind, start, length in entries:
        name = kinds.get(kind, f"kind {kind}")
        if name != "data":
            fields.append(LayoutField(start, length, f"{name} section", "", f"{length} bytes"))
        if name == "tensors" and columnar:
            fields += _v3_columns(view, start)
        if name == "data_blocks":
            fields += _data_blocks_fields(view, start, length)
        if name == "range_index":
            fields += _range_index_fields(view, start, ckpt)
    fields.sort(key=lambda f: (f.offset, -f.size))
    data = _data_ranges(view, ckpt)
    # The data checks load defers (the data section's CRC-32C, its padding) run here too: the
    # map of a file whose data are corrupt still shows every field, and with them the rule
    # that fails, as validate reports it; never a clean map over bytes that fail their check.
    try:
        ckpt.verify()
    except CheckpointError as err:
        return LayoutMap(record.name, len(view), fields, err, data)
    return LayoutMap(record.name, len(view), fields, data=data)


def _data_ranges(view: memoryview, ckpt: Any) -> Callable[[], Iterator[LayoutField]]:
    """The fields of the entries read from the file (each with its CRC-32), in file order, made
    on demand from columns gathered in one pass (offsets, sizes, slot and index as arrays: a
    file of many entries costs its columns, not a field object per entry until printed)."""
    gathered = [array("q") for _ in range(4)]  # offset, size, slot (-1: weights), index
    names: list[str | None] = []
    slot_map = ckpt.optimizer.slots if ckpt.optimizer is not None else {}
    slot_names = list(slot_map)
    passes = [(-1, ((t.index, t) for t in ckpt.tensors))]
    passes += [(j, entries.items()) for j, entries in enumerate(slot_map.values())]
    for j, entries in passes:
        for key, entry in entries:
            if entry.offset is not None:
                for column, value in zip(gathered, (entry.offset, entry.nbytes, j, key)):
                    column.append(value)
                names.append(entry.name if j < 0 else None)
    columns = [np.frombuffer(a, np.int64) if len(a) else np.zeros(0, np.int64) for a in gathered]
    # file order: by offset, then the larger range first, then tensors before slots
    order = np.lexsort((-columns[1], columns[0]))

    def made() -> Iterator[LayoutField]:
        for lo in range(0, order.size, _CHUNK):
            rows = order[lo : lo + _CHUNK]
            picked = zip(*(c[rows].tolist() for c in columns), rows.tolist())
            for start, length, j, key, row in picked:
                if j < 0:
                    name = names[row]
                    label = f"tensors[{key}]" + (f" {name}" if name else "") + " data"
                else:
                    label = f"{slot_names[j]}[{key}] data"
                crc = zlib.crc32(view[start : start + length]) & 0xFFFFFFFF
                yield LayoutField(start, length, label, "", f"crc32 {crc:08x}")

    return made


#: data range fields made per step
_CHUNK = 1 << 14


def _data_blocks_fields(view: memoryview, s: int, length: int) -> list[LayoutField]:
    """Schema 3's data_blocks section (SPEC 7.4): its head, then one CRC-32C per block."""
    head, (crc,) = layout.V3DataBlocksHead, layout.V3DataBlocksHead.COLUMNS
    shift = struct.unpack_from(head.FORMAT, view, s)[0]
    notes = {"block_shift": f"blocks of {1 << shift} bytes"}
    return [*_int_fields(view, head, s, "data_blocks.", notes),
            LayoutField(s + head.SIZE, length - head.SIZE, f"data_blocks.{crc.name}", "",
                        "one CRC-32C per block")]


def _range_index_fields(view: memoryview, s: int, ckpt: Checkpoint) -> list[LayoutField]:
    """Schema 3's range_index section (SPEC 7.5): its head, the starts of every group of
    every pass (the tensors', then each slot's), and with an ``order`` column each record's
    position. The file is valid: its length is these fields'."""
    head = layout.V3RangeIndexHead
    passes = 1 + (len(ckpt.optimizer.slots) if ckpt.optimizer is not None else 0)
    shift, _, groups = struct.unpack_from(head.FORMAT, view, s)
    fields = _int_fields(view, head, s, "range_index.", {
        "group_shift": f"groups of {1 << shift}", "num_groups": f"groups, {passes} passes"})
    at = s + head.SIZE
    starts = layout.V3_RANGE_INDEX_SECTION_START.size * passes * groups
    fields.append(LayoutField(at, starts, "range_index.start", "", "where each group starts"))
    if ckpt.layout.data_order is not None:
        n = layout.V3_RANGE_INDEX_SECTION_POSITION.size * len(ckpt.tensors)
        note = "each record's place"
        fields.append(LayoutField(at + starts, n, "range_index.position", "", note))
    return fields


def _v3_columns(view: memoryview, s: int) -> list[LayoutField]:
    """The fields of a valid schema-3 tensors section at ``s``: head, then each column, placed
    by the generated column descriptor (layout.V3TensorsHead.COLUMNS)."""
    head = layout.V3TensorsHead
    n, columns = struct.unpack_from(head.FORMAT, view, s)
    present = [c for c in head.COLUMNS if not c.bit or columns & c.bit]
    optional = [c.name for c in present if c.bit and not c.sum_of]
    out = _int_fields(view, head, s, "tensors.")
    out[1] = replace(out[1], value=f"{columns:#x}", note=", ".join(optional) or "none")
    pos, at = head.SIZE, {}
    for c in present:
        pos += -pos % c.align
        at[c.name] = s + pos
        if c.sum_of:
            values = np.frombuffer(view, _COLUMN_FORMATS[c.sum_of], n, at[c.sum_of])
            count = int(values[values != c.skip].sum(dtype=np.uint64))
        else:
            count = n
        note = f"u{8 * c.size}[{n}]" if not c.bit else f"{c.size * count} bytes"
        out.append(LayoutField(s + pos, c.size * count, f"tensors.{c.name}", "", note))
        pos += c.size * count
    return out


#: column name -> its NumPy element format (for the columns other columns' sizes come from)
_COLUMN_FORMATS = {c.name: c.format for c in layout.V3TensorsHead.COLUMNS}


def layout_map(source: str | os.PathLike[str] | bytes | memoryview, *,
               lazy: bool = False) -> LayoutMap:
    """Map every field of ``source`` (a path or bytes), valid or not. With ``lazy``, the data
    ranges' fields are made as :meth:`LayoutMap.iter_fields` goes (``fields`` holds the rest).

    For example, the first fields and the last of a schema-1 file with a footer:

        >>> m = layout_map("tests/data/real-onert/fc2-sgd-step8.ckpt")
        >>> [(f.offset, f.size, f.name, f.value) for f in m.fields[:3]]
        [(0, 2, 'magic', '429'), (2, 1, 'version', '1'), (3, 1, 'reserved', '0')]
        >>> m.fields[-1].name, m.fields[-1].value, m.error
        ('footer.epoch', '0', None)
    """
    view = open_source(source, copy="auto")  # small files: no SIGBUS if truncated meanwhile
    size, fields = len(view), _int_fields(view, layout.Header)[:2]  # magic, version
    magic = size >= 3 and _u(view, 0, 2) == MAGIC
    records = registry.with_version(view[2]) if magic else []
    if len(records) > 1 or (records and records[0].streams):
        made = _version_1(view) if len(records) > 1 else _container(view, records[0])
        if not lazy and made.data is not None:
            made.fields = list(made.iter_fields())
            made.data = None
        return made
    try:
        read_view(view)  # reports truncated_header, bad_magic or unsupported_version
    except CheckpointError as err:
        return LayoutMap(None, size, fields if magic else fields[:1], err)
    return LayoutMap(None, size, fields)
