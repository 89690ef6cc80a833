"""The invalid vectors spec/make_vectors.py builds from tables (its CASE_TABLES, the machinery in
spec/vector_cases.py): every case's expected error names a place the generated layout knows, at
an offset inside the file, and every invalid vector is a table row.

A case is a base file, a patch and the expected error (code, field, offset); the field follows
the names of TOOLKIT.md 1 (``tensors[2].rank``), which the table's ``Places`` resolve with the
offsets of generated/python/onert_checkpoint_generated/layout.py.
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "spec"


def _make_vectors():
    if "make_vectors" in sys.modules:
        return sys.modules["make_vectors"]
    spec = importlib.util.spec_from_file_location("make_vectors", SPEC / "make_vectors.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["make_vectors"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


mv = _make_vectors()
CASES = [
    pytest.param(prefix, places, case, id=f"{prefix}{case.name}")
    for table, (prefix, places, cases) in mv.CASE_TABLES.items()
    for case in cases()
]


def test_every_table_has_cases_with_unique_names() -> None:
    names = [p.id for p in CASES]
    assert len(names) == len(set(names))
    for table, (_prefix, _places, cases) in mv.CASE_TABLES.items():
        assert cases(), table


def _builders() -> dict[str, set[str]]:
    """Every invalid vector make_vectors builds -> the functions on the stack when it was
    added (apply_table for a row of a table)."""
    seen: dict[str, set[str]] = {}
    real = mv.invalid

    def recording(name, *args, **kw):
        frame, names = sys._getframe(1), set()
        while frame is not None:
            names.add(frame.f_code.co_name)
            frame = frame.f_back
        seen[f"invalid-{name}"] = names
        return real(name, *args, **kw)

    mv.invalid = recording
    try:
        mv.build()
    finally:
        mv.invalid = real
    return seen


def test_every_invalid_vector_is_a_table_row() -> None:
    """Every committed invalid vector is a row of CASE_TABLES, built by apply_table (the
    oracle-encoded ``invalid-v2-v3-*``, schema-3 files read as schema 2, and those of schema
    3's optional sections data_blocks and range_index too)."""
    builders = _builders()
    committed = {p.stem for p in (SPEC / "vectors").glob("invalid-*.ckpt")}
    assert committed == set(builders)
    assert set(builders) == {f"invalid-{p.id}" for p in CASES}
    by_call = sorted(name for name, stack in builders.items() if "apply_table" not in stack)
    assert by_call == []


@pytest.mark.parametrize(("prefix", "places", "case"), CASES)
def test_case_offset_lies_within_its_file(prefix, places, case) -> None:
    data = mv.patched(case, places)
    offset = mv.expected_offset(case, places)
    # an empty file's error is at 0; a section of 0 bytes that ends the file (C0, P0), or a
    # field of it, is where it starts: the file's end
    named = (case.error_as or places)(case.base).names(case.field)
    at_end = offset == len(data) and (offset == 0 or (named is not None and named.pos == offset))
    assert 0 <= offset < len(data) or at_end


@pytest.mark.parametrize(("prefix", "places", "case"), CASES)
def test_case_field_names_a_place_of_the_layout(prefix, places, case) -> None:
    """The field is a layout field, the bytes a ``name``/``key`` field points at, a record or
    area of the file, or one of the table's named areas (padding, a pool of names); the offset
    follows SPEC.md 1.3's convention: where the field starts (or, for a field holding an
    offset, where the bytes it points at start: state[4].value), for a byte array checked
    byte by byte (a reserved array) the offending byte inside it, and for B6's block_checksum
    (its one exception) the first byte of the block whose CRC the field holds."""
    where = (case.error_as or places)(case.base)
    spot = where.names(case.field)  # KeyError: the field names nothing of the layout
    offset = mv.expected_offset(case, places)
    block = re.fullmatch(r"data_blocks\.crc\[(\d+)\]", case.field)
    assert (case.code == "block_checksum") == bool(block)
    if block:
        assert offset == where.find(f"data.block[{block[1]}]").pos, (case.field, offset)
    elif spot is None:
        assert case.field in where.AREAS
    elif spot.what == "field" and spot.elements > 1:
        assert spot.pos <= offset < spot.pos + spot.width, (case.field, spot, offset)
    elif spot.what == "field" and offset != spot.pos:
        assert offset == where.find(f"*{case.field}").pos, (case.field, spot, offset)
    elif spot.what == "target":
        assert offset == spot.pos, (case.field, spot, offset)


@pytest.mark.parametrize(("prefix", "places", "case"), CASES)
def test_case_is_its_committed_vector(prefix, places, case) -> None:
    stem = SPEC / "vectors" / f"invalid-{prefix}{case.name}"
    assert mv.patched(case, places) == stem.with_suffix(".ckpt").read_bytes()
    error = json.loads(stem.with_suffix(".json").read_text())["error"]
    assert error == {
        "code": case.code,
        "field": case.field,
        "offset": mv.expected_offset(case, places),
    }


def test_places_follow_the_generated_layout() -> None:
    from onert_checkpoint_generated.layout import WofHeader

    where = mv.WofPlaces(mv.WOF)
    assert where.find("reserved").pos == WofHeader.reserved.offset
    assert where.find("tensors[2]").pos == WofHeader.SIZE + 2 * 4
    for unknown in ("reservd", "tensors[2].flags", "header.num_entries[1]"):
        with pytest.raises(KeyError):
            where.names(unknown)


def test_v3_places_agree_with_the_oracle_and_the_descriptions() -> None:
    """In every valid schema-3 vector, V3Places (from the generated layout) finds the columns,
    names and slot entries where spec/oracles/v3_encoder.py's locator (from SPEC.md alone)
    finds them, and places each range where the vector's JSON description says it starts."""
    paths = sorted((SPEC / "vectors").glob("v3-*.ckpt"))
    assert len(paths) > 30
    for path in paths:
        data = path.read_bytes()
        desc = json.loads(path.with_suffix(".json").read_text())
        if not desc["tensors"]:
            continue  # no tensors section, no data section
        where, oracle = mv.V3Places(data), mv.m3.V3(data)
        starts = oracle.column_starts()
        del starts["end"]
        columns = {name: spot.pos for name, spot in where.columns().items()}
        assert columns.pop("len_data") == oracle.len_data(0)
        assert columns == starts, path.name
        indices = [t["index"] for t in desc["tensors"]]
        for k, t in enumerate(desc["tensors"]):
            assert where.find(f"tensors[{k}].range").pos == t["offset"], (path.name, k)
            assert where.find(f"tensors[{k}].len_data").pos == oracle.len_data(k)
            if t.get("name"):
                assert where.find(f"tensors[{k}].name").pos == oracle.name_at(k)
        for j, entries in enumerate((desc["optimizer"] or {"slots": {}})["slots"].values()):
            for e in entries:
                k = indices.index(e["index"])
                assert where.find(f"optimizer.slots[{j}][{k}].range").pos == e["offset"]
                slot = where.find(f"optimizer.slots[{j}][{k}].len_data").pos
                assert slot == oracle.slot_entry(j, k)


def test_v3_places_name_columns_by_record_or_element() -> None:
    where = mv.V3Places(mv.v3_full())
    assert where.find("tensors.rank[3]") == where.find("tensors[3].rank")
    assert where.find("tensors.dtype[1]").signed
    unknown = ("tensors[1].dims[0]", "tensors[4].index", "tensors.order", "tensors[0].flags")
    for place in unknown:
        with pytest.raises(KeyError):
            where.find(place)


def test_v3_places_name_the_optional_sections() -> None:
    """In every valid schema-3 vector with a data_blocks or range_index section, the arrays
    V3Places finds after each head end where the section ends (B5's and I5's lengths), crc[i]
    is the CRC-32C of the bytes data.block[i] names, start[0] is 0 (SPEC.md 7.5) and
    position is the inverse of the order column (I7)."""
    import crc32c
    from onert_checkpoint_generated.layout import V3_DATA_BLOCKS_KIND, V3_RANGE_INDEX_KIND

    seen = {"data_blocks": 0, "range_index": 0}
    for path in sorted((SPEC / "vectors").glob("v3-*.ckpt")):
        data = path.read_bytes()
        where = mv.V3Places(data)
        kinds = {where.value(f"sections[{i}].kind") for i in range(where.value("num_sections"))}
        for section, kind in (
            ("data_blocks", V3_DATA_BLOCKS_KIND),
            ("range_index", V3_RANGE_INDEX_KIND),
        ):
            if kind not in kinds:
                continue
            seen[section] += 1
            arrays = list(where.arrays(section).values())
            assert arrays[-1].pos + arrays[-1].width == where.end(section), path.name
        if V3_DATA_BLOCKS_KIND in kinds:
            for i in range(where.value("data_blocks.num_blocks")):
                block = where.find(f"data.block[{i}]")
                crc = crc32c.crc32c(data[block.pos : block.pos + block.width])
                assert where.value(f"data_blocks.crc[{i}]") == crc, (path.name, i)
            for beyond in ("data.block", "data_blocks.crc"):
                with pytest.raises(KeyError):
                    where.find(f"{beyond}[{where.value('data_blocks.num_blocks')}]")
        if V3_RANGE_INDEX_KIND in kinds:
            assert where.value("range_index.start[0]") == 0
            if "order" not in where.columns():
                with pytest.raises(KeyError):
                    where.find("range_index.position[0]")
                continue
            for k in range(where.value("tensors.num_tensors")):
                position = where.value(f"range_index.position[{k}]")
                assert where.element("order", position) == k, (path.name, k)
    assert seen["data_blocks"] >= 2 and seen["range_index"] >= 3, seen
