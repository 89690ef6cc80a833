"""The generated descriptions that readers and writers loop over instead of typing layouts
again: schema 3's column descriptor (layout.V3TensorsHead.COLUMNS) and the Construct
structs of the fixed records (onert_checkpoint_generated.structs), both from the .ksy files.

- Every struct has its .ksy type's fields, offsets, widths and fixed values (read from the YAML).
- Walking the descriptor over every valid schema-3 vector finds each column where the file has
  it: the section ends where its last column ends, and the columns hold the records the
  library loads (indices, model indices, names, dtypes, shapes, data order).
"""

from __future__ import annotations

import re
import struct
from pathlib import Path

import numpy as np
import pytest
from onert_checkpoint_generated import layout, structs

import onert_checkpoint as oc
from tests.spec.test_schema_source import ksy_fields, struct_fields

ROOT = Path(__file__).resolve().parents[2]
V3_VALID = sorted(p for p in (ROOT / "spec" / "vectors").glob("v3-*.ckpt"))


def ksy_type(record: type) -> tuple[str, str | None]:
    """(stem, type) of a generated record, from the place its docstring names
    ("... onert_checkpoint_v3.ksy `tensors_section`."; the top level without a type)."""
    m = re.search(r"(\w+)\.ksy(?: `(\w+)`)?", record.__doc__ or "")
    assert m is not None, record
    return m[1], m[2]


@pytest.mark.parametrize("name", sorted(structs.STRUCTS))
def test_every_generated_struct_equals_its_ksy_type(name):
    stem, type_name = ksy_type(layout.RECORDS[name])
    want = ksy_fields(stem, type_name)
    got = struct_fields(structs.STRUCTS[name])
    assert [(at, size) for _, at, size, _ in got] == [(at, size) for _, at, size, _ in want]
    for (g_name, _, _, g_value), (k_name, _, _, k_valid) in zip(got, want):
        if g_name is None:  # zero padding: a reserved byte string
            assert k_name.startswith("reserved"), name
        else:
            assert (g_name, g_value) == (k_name, k_valid), name


def test_generated_structs_build_what_they_parse():
    """On real bytes: every schema-3 vector's header and section entries."""
    for path in V3_VALID:
        data = path.read_bytes()
        head = structs.Header.parse(data[:64])
        assert structs.Header.build(head) == data[:64]
        for i in range(head.num_sections):
            raw = data[64 + 32 * i : 96 + 32 * i]
            assert structs.SectionEntry.build(structs.SectionEntry.parse(raw)) == raw


def walk_columns(data: bytes) -> tuple[dict[str, np.ndarray], int, int]:
    """Every present column of the tensors section, placed by the descriptor alone; the
    section's end as the walk finds it, and its recorded length."""
    count = struct.unpack_from("<I", data, 24)[0]
    entries = [struct.unpack_from("<IIQQ", data, 64 + 32 * i) for i in range(count)]
    (s, length) = next((o, n) for kind, _, o, n in entries if kind == 1)
    head = np.frombuffer(data, layout.V3TensorsHead.DTYPE, 1, s)[0]
    n, bits = int(head["num_tensors"]), int(head["columns"])
    pos, cols = layout.V3TensorsHead.SIZE, {}
    for c in layout.V3TensorsHead.COLUMNS:
        if c.bit and not bits & c.bit:
            continue
        assert c.count == "num_tensors"
        assert data[s + pos : s + pos + (-pos) % c.align] == bytes((-pos) % c.align)
        pos += (-pos) % c.align
        k = n if not c.sum_of else int(sum(int(v) for v in cols[c.sum_of] if v != c.skip))
        cols[c.name] = np.frombuffer(data, c.format, k, s + pos)
        pos += k * c.size
    return cols, pos, length


def test_the_descriptor_places_every_column_of_every_schema3_vector():
    assert len(V3_VALID) > 50
    seen: set[str] = set()
    for path in V3_VALID:
        data = path.read_bytes()
        try:
            ckpt = oc.load(data)
        except oc.FormatError:
            continue  # a v3 vector that needs its model, or one the library refuses
        if not ckpt.tensors:
            continue
        cols, end, length = walk_columns(data)
        assert end == length, path.name
        seen |= set(cols)
        tensors = list(ckpt.tensors)
        assert [int(v) for v in cols["len_data"]] == [t.raw.nbytes for t in tensors], path.name
        if "index" in cols:
            assert [int(v) for v in cols["index"]] == [t.index for t in tensors], path.name
        if "names" in cols:
            names = bytes(cols["names"]).decode()
            assert names == "".join(t.name or "" for t in tensors), path.name
        if "dims" in cols:
            dims = [int(v) for v in cols["dims"]]
            want = [d for t in tensors if t.shape is not None for d in t.shape]
            assert dims == want, path.name
    assert seen == {c.name for c in layout.V3TensorsHead.COLUMNS}
