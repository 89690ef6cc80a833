"""An annotated map of a file: every field's offset, size, name and value, in file order.

This is what ``onert-ckpt dump --layout`` prints (like ``ksdump`` or ``readelf -h``): the first
thing to look at when two readers disagree. It works on invalid files too: the fields that can
be read are mapped, and the first rule that fails is reported with them.

One mapper per revision, keyed by the version byte (:data:`MAPPERS`); a revision module may
offer ``layout_fields(view) -> list[LayoutField]``, which is used for its version byte.
"""

from __future__ import annotations

import heapq
import importlib
import os
import zlib
from array import array
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..format.dispatch import MAGIC, read_view
from ..format.errors import CheckpointError
from ..format.model import Checkpoint
from ..format.revisions import v1, wof
from ..format.revisions.blocks import Block
from ..format.source import open_source
from .jsonout import dumps

__all__ = ["MAPPERS", "LayoutField", "LayoutMap", "layout_map"]


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

    def to_dict(self) -> dict[str, object]:
        return {
            "revision": self.revision,
            "file_size": self.file_size,
            "fields": [f.__dict__ for f in self.iter_fields()],
            "error": None if self.error is None else self.error.to_dict(),
        }

    def json_pieces(self) -> Iterator[str]:
        """:meth:`to_dict` as one line of ASCII JSON, in pieces (the same text as
        ``json.dumps(self.to_dict())``), one field at a time."""
        yield f'{{"revision": {dumps(self.revision)}, "file_size": {dumps(self.file_size)}, '
        yield '"fields": ['
        sep = ""
        for f in self.iter_fields():
            yield sep + dumps(f.__dict__)
            sep = ", "
        error = None if self.error is None else self.error.to_dict()
        yield f'], "error": {dumps(error)}}}'


def _u(view: memoryview, at: int, size: int) -> int | None:
    if at + size > len(view):
        return None
    return int.from_bytes(view[at : at + size], "little")


def _int_fields(view: memoryview, specs: list[tuple[int, int, str, str]]) -> list[LayoutField]:
    out = []
    for at, size, name, note in specs:
        value = _u(view, at, size)
        if value is None:
            avail = max(0, len(view) - at)
            if avail:
                out.append(LayoutField(at, avail, name, bytes(view[at:]).hex(" "), "truncated"))
            break
        shown = f"{value:#010x}" if name.endswith("crc") else str(value)
        out.append(LayoutField(at, size, name, shown, note))
    return out


def _magic_field(view: memoryview) -> list[LayoutField]:
    if len(view) < 2:
        return []
    magic = _u(view, 0, 2)
    note = f"bytes {bytes(view[:2]).hex(' ')}" + ("" if magic == MAGIC else f", not {MAGIC}")
    return [LayoutField(0, 2, "magic", str(magic), note)]


def _block_fields(view: memoryview, block: Block, label: str) -> list[LayoutField]:
    n = len(block.offsets)
    out = [LayoutField(block.start, 4 * n, f"{label} table", "", f"{n} u32 offsets")]
    for i in range(n):
        o, size = int(block.offsets[i]), int(block.sizes[i])
        note = "absent" if o == 0 else f"data [{o}, {o + size}), {size} bytes"
        out.append(LayoutField(block.start + 4 * i, 4, f"{label}[{i}]", str(o), note))
    present = [i for i in range(n) if block.offsets[i] != 0]
    present.sort(key=lambda i: (int(block.offsets[i]), i))
    for i in present:
        o, size = int(block.offsets[i]), int(block.sizes[i])
        crc = zlib.crc32(view[o : o + size]) & 0xFFFFFFFF
        out.append(LayoutField(o, size, f"{label}[{i}] data", "", f"crc32 {crc:08x}"))
    return out


_V1_HEADER = [
    (2, 1, "version", "schema version"),
    (3, 1, "reserved", "must be 0"),
    (4, 4, "ofs_opt1", "opt1_offset (onert) / m_offset (onert-micro)"),
    (8, 4, "ofs_opt2", "opt2_offset (onert) / v_offset (onert-micro)"),
    (12, 4, "ofs_other", "other_offset: start of the 8-byte footer"),
    (16, 4, "num_entries", "length / n_buffers: entries of every offset table"),
]


def _v1_header(view: memoryview) -> list[LayoutField]:
    fields = _magic_field(view) + _int_fields(view, _V1_HEADER)
    notes = {f.name: f for f in fields}
    other = notes.get("ofs_other")
    if other is not None and other.value == "0":
        fields[fields.index(other)] = LayoutField(12, 4, "ofs_other", "0", "0: no footer")
    return fields


def _v1_map(view: memoryview) -> LayoutMap:
    layout = v1.read_layout(view)
    fields = _v1_header(view)
    labels = {"weights": "weights", "m": "m", "v": "v"}
    if layout.kind == "sgd":
        sgd_notes = {"ofs_opt1": "SGD: no m block", "ofs_opt2": "SGD: no v block"}
        fields = [
            LayoutField(f.offset, f.size, f.name, f.value, sgd_notes[f.name])
            if f.name in sgd_notes else f
            for f in fields
        ]
    for name, block in layout.blocks.items():
        fields += _block_fields(view, block, labels.get(name, name))
    if layout.has_footer:
        other = layout.header.ofs_other
        fields += _int_fields(
            view,
            [(other, 4, "footer.step", "current step"),
             (other + 4, 4, "footer.epoch", "current epoch (onert always writes 0)")],
        )
    return LayoutMap("v1", len(view), fields)


def _wof_map(view: memoryview) -> LayoutMap:
    _, block = wof.read_layout(view)
    fields = _wof_header(view) + _block_fields(view, block, "tensors")
    return LayoutMap("wof", len(view), fields)


def _wof_header(view: memoryview) -> list[LayoutField]:
    return _magic_field(view) + _int_fields(
        view,
        [(2, 1, "version", "schema version (shared with schema-1 checkpoints)"),
         (3, 1, "reserved", "must be 0"),
         (4, 4, "num_entries", "number of circle tensors")],
    )


def _version_1(view: memoryview) -> LayoutMap:
    try:
        return _v1_map(view)
    except CheckpointError as checkpoint_error:
        try:
            return _wof_map(view)
        except CheckpointError as wof_error:
            if wof.is_wof_shaped(view):
                return LayoutMap("wof", len(view), _wof_header(view), wof_error)
            return LayoutMap("v1", len(view), _v1_header(view), checkpoint_error)


_V2_HEADER = [
    (2, 1, "version", "schema version"),
    (3, 1, "reserved0", "must be 0"),
    (4, 4, "header_crc", "CRC-32C of the 64-byte header, this field as 0"),
    (8, 8, "len_file", "file size"),
    (16, 8, "ofs_section_table", "section table start (64)"),
    (24, 4, "num_sections", "entries of the section table"),
    (28, 4, "section_table_crc", "CRC-32C of the section table"),
]
_V2_SECTION = [(0, 4, "kind"), (4, 4, "flags"), (8, 8, "ofs_body"), (16, 8, "len_body"),
               (24, 4, "crc"), (28, 4, "reserved")]


def _v2_header(view: memoryview) -> list[LayoutField]:
    fields = _magic_field(view) + _int_fields(view, _V2_HEADER)
    if len(view) >= 64:
        fields.append(LayoutField(32, 32, "reserved1", "", "32 bytes, must be 0"))
    return fields


def _v2_map(view: memoryview, revision: str = "v2") -> LayoutMap:
    """Schema 2 or 3: header, section table, each section's body (schema 3's tensors section
    column by column), each tensor's and slot's data."""
    from ..format.revisions import v2

    # validates first: the ranges below are then known to be sane
    ckpt = v2.read(view) if revision == "v2" else read_view(view)
    fields = _v2_header(view)
    n = _u(view, 24, 4) or 0
    kinds = {code: name for name, code in v2.SECTION_KINDS.items()}
    if revision == "v3":
        from ..format.revisions.v3.data_blocks import KIND as BLOCKS_KIND
        from ..format.revisions.v3.range_index import KIND as INDEX_KIND

        kinds[BLOCKS_KIND] = "data_blocks"
        kinds[INDEX_KIND] = "range_index"
    bodies = []
    for i in range(n):
        at = 64 + 32 * i
        for rel, size, name in _V2_SECTION:
            value = _u(view, at + rel, size) or 0
            note = kinds.get(value, "unknown kind") if name == "kind" else ""
            shown = f"{value:#010x}" if name == "crc" else str(value)
            fields.append(LayoutField(at + rel, size, f"sections[{i}].{name}", shown, note))
        kind, start, length = _u(view, at, 4), _u(view, at + 8, 8), _u(view, at + 16, 8)
        if kind is not None and start is not None and length is not None:
            bodies.append((start, length, kinds.get(kind, f"kind {kind}")))
    for start, length, name in bodies:
        if name != "data":
            fields.append(LayoutField(start, length, f"{name} section", "", f"{length} bytes"))
        if name == "tensors" and revision == "v3":
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
        return LayoutMap(revision, len(view), fields, err, data)
    return LayoutMap(revision, len(view), fields, data=data)


def _data_ranges(view: memoryview, ckpt: Any) -> Callable[[], Iterator[LayoutField]]:
    """The fields of the entries read from the file (each with its CRC-32), in file order, made
    on demand from columns gathered in one pass (offsets, sizes, slot and index as arrays: a
    file of many entries costs its columns, not a field object per entry until printed)."""
    offsets, sizes, slots, keys = array("q"), array("q"), array("q"), array("q")
    names: list[str | None] = []
    for t in ckpt.tensors:
        if t.offset is not None:
            offsets.append(t.offset)
            sizes.append(t.nbytes)
            slots.append(-1)
            keys.append(t.index)
            names.append(t.name)
    slot_names: list[str] = []
    if ckpt.optimizer is not None:
        for j, (slot, entries) in enumerate(ckpt.optimizer.slots.items()):
            slot_names.append(slot)
            for i, b in entries.items():
                if b.offset is not None:
                    offsets.append(b.offset)
                    sizes.append(b.nbytes)
                    slots.append(j)
                    keys.append(i)
                    names.append(None)
    columns = [np.frombuffer(a, np.int64) if len(a) else np.zeros(0, np.int64)
               for a in (offsets, sizes, slots, keys)]
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


def _version_2(view: memoryview) -> LayoutMap:
    try:
        return _v2_map(view)
    except CheckpointError as err:
        return LayoutMap("v2", len(view), _v2_header(view), err)


def _data_blocks_fields(view: memoryview, s: int, length: int) -> list[LayoutField]:
    """Schema 3's data_blocks section (SPEC 7.4): its head, then one CRC-32C per block."""
    shift, count = _u(view, s, 4) or 0, _u(view, s + 8, 8) or 0
    return [
        LayoutField(s, 4, "data_blocks.block_shift", str(shift), f"blocks of {1 << shift} bytes"),
        LayoutField(s + 4, 4, "data_blocks.reserved", str(_u(view, s + 4, 4)), "must be 0"),
        LayoutField(s + 8, 8, "data_blocks.num_blocks", str(count), "blocks of the data section"),
        LayoutField(s + 16, length - 16, "data_blocks.crc", "", "one CRC-32C per block"),
    ]


def _range_index_fields(view: memoryview, s: int, ckpt: Checkpoint) -> list[LayoutField]:
    """Schema 3's range_index section (SPEC 7.5): its head, the starts of every group of
    every pass (the tensors', then each slot's), and with an ``order`` column each record's
    position. The file is valid: its length is these fields'."""
    from ..format.revisions.v3.range_index import HEAD

    shift, count = _u(view, s, 4) or 0, _u(view, s + 8, 8) or 0
    passes = 1 + (len(ckpt.optimizer.slots) if ckpt.optimizer is not None else 0)
    starts = 8 * passes * count
    fields = [
        LayoutField(s, 4, "range_index.group_shift", str(shift), f"groups of {1 << shift}"),
        LayoutField(s + 4, 4, "range_index.reserved", str(_u(view, s + 4, 4)), "must be 0"),
        LayoutField(s + 8, 8, "range_index.num_groups", str(count), f"groups, {passes} passes"),
        LayoutField(s + HEAD.SIZE, starts, "range_index.start", "", "where each group starts"),
    ]
    if ckpt.data_order is not None:
        n = 4 * len(ckpt.tensors)
        fields.append(
            LayoutField(
                s + HEAD.SIZE + starts, n, "range_index.position", "", "each record's place"
            )
        )
    return fields


#: Schema 3's tensor columns (SPEC 7.1) in layout order: (name, column bit, element size).
_V3_COLUMNS = [
    ("index", 1, 4),
    ("model_index", 2, 4),
    ("len_name", 4, 4),
    ("dtype", 8, 1),
    ("rank", 16, 1),
    ("order", 32, 4),
]


def _v3_columns(view: memoryview, s: int) -> list[LayoutField]:
    """The fields of a valid schema-3 tensors section at ``s``: head, then each column."""
    n, columns = _u(view, s, 4) or 0, _u(view, s + 4, 4) or 0
    names = [name for name, bit, _ in _V3_COLUMNS if columns & bit]
    out = [
        LayoutField(s, 4, "tensors.num_tensors", str(n)),
        LayoutField(s + 4, 4, "tensors.columns", f"{columns:#x}", ", ".join(names) or "none"),
        LayoutField(s + 8, 8 * n, "tensors.len_data", "", f"u64[{n}]"),
    ]
    pos = s + 8 + 8 * n
    ranks = b""
    len_names = 0
    for name, bit, size in _V3_COLUMNS:
        if columns & bit:
            pos = s + -(-(pos - s) // 8) * 8
            out.append(LayoutField(pos, size * n, f"tensors.{name}", "", f"{size * n} bytes"))
            if name == "rank":
                ranks = bytes(view[pos : pos + n])
            if name == "len_name":
                len_names = sum(
                    int.from_bytes(view[pos + 4 * k : pos + 4 * k + 4], "little")
                    for k in range(n)
                )
            pos += size * n
    if columns & 16:
        dims = 4 * sum(r for r in ranks if r != 255)
        pos = s + -(-(pos - s) // 8) * 8
        out.append(LayoutField(pos, dims, "tensors.dims", "", f"{dims} bytes"))
        pos += dims
    if columns & 4:
        pos = s + -(-(pos - s) // 8) * 8
        out.append(LayoutField(pos, len_names, "tensors.names", "", f"{len_names} bytes"))
    return out


def _version_3(view: memoryview) -> LayoutMap:
    try:
        return _v2_map(view, "v3")
    except CheckpointError as err:
        return LayoutMap("v3", len(view), _v2_header(view), err)


def _from_revision_module(version: int) -> Callable[[memoryview], LayoutMap] | None:
    try:
        module = importlib.import_module(f"onert_checkpoint.format.revisions.v{version}")
    except ImportError:
        return None
    fields_of = getattr(module, "layout_fields", None)
    if fields_of is None:
        return None

    def mapper(view: memoryview) -> LayoutMap:
        try:
            return LayoutMap(f"v{version}", len(view), list(fields_of(view)))
        except CheckpointError as err:
            head = _magic_field(view) + _int_fields(view, [(2, 1, "version", "schema version")])
            return LayoutMap(f"v{version}", len(view), head, err)

    return mapper


#: version byte -> mapper of the bytes
MAPPERS: dict[int, Callable[[memoryview], LayoutMap]] = {
    1: _version_1,
    2: _version_2,
    3: _version_3,
}


def layout_map(
    source: str | os.PathLike[str] | bytes | memoryview, *, lazy: bool = False
) -> LayoutMap:
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
    size = len(view)
    head = _magic_field(view)
    if size < 3 or _u(view, 0, 2) != MAGIC:
        try:
            read_view(view)  # reports truncated_header or bad_magic
        except CheckpointError as err:
            return LayoutMap(None, size, head, err)
    version = view[2]
    mapper = MAPPERS.get(version) or _from_revision_module(version)
    if mapper is not None:
        made = mapper(view)
        if not lazy and made.data is not None:
            made.fields = list(made.iter_fields())
            made.data = None
        return made
    fields = head + _int_fields(view, [(2, 1, "version", "schema version")])
    try:
        read_view(view)  # reports unsupported_version
    except CheckpointError as err:
        return LayoutMap(None, size, fields, err)
    return LayoutMap(None, size, fields)
