"""spec/c/ockpt_layout.h declares the same layouts as the library's Construct structs.

A small C program prints the size and every field offset of each packed struct; they must equal
the generated Construct structs' (onert_checkpoint_generated.structs, the library's executable
schemas: Construct adds up the widths itself). The schema-3 reader (ockpt_v3.c) checks the width
of every field and array element it reads against this header at compile time: a field retyped
in a copy of the .ksy stops its build, naming it.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from construct import Struct
from onert_checkpoint_generated import layout, structs

C_DIR = Path(__file__).resolve().parents[2] / "spec" / "c"
sys.path.insert(0, str(C_DIR.parent))
try:
    import ksy_layout  # spec/: the generator, for each record's C name
finally:
    sys.path.remove(str(C_DIR.parent))

#: C struct -> the Construct struct of the same bytes: every record of every revision (the
#: container's records once, schemas 2 and 3 share them).
LAYOUTS: dict[str, object] = {
    f"{r.c_name}_layout": structs.STRUCTS[r.py_name]
    for s in ksy_layout.load_all()
    for r in s.records
}


def schema_layout(schema: object) -> tuple[int, dict[str, int]]:
    """Size and named field offsets of a fixed-size Construct Struct or NumPy record type."""
    if isinstance(schema, np.dtype):
        return schema.itemsize, {name: spec[1] for name, spec in schema.fields.items()}
    assert isinstance(schema, Struct)
    offsets: dict[str, int] = {}
    pos = 0
    for sub in schema.subcons:
        if sub.name is not None:
            offsets[sub.name] = pos
        pos += sub.sizeof()
    return pos, offsets


def c_program() -> str:
    lines = [
        "#include <stddef.h>",
        "#include <stdio.h>",
        '#include "ockpt_layout.h"',
        "int main(void) {",
        '  printf("{");',
    ]
    for k, (struct, schema) in enumerate(LAYOUTS.items()):
        _, fields = schema_layout(schema)
        sep = "," if k else ""
        lines.append(f'  printf("{sep}\\"{struct}\\": {{\\"size\\": %zu", sizeof({struct}));')
        for name in fields:
            if name.startswith("reserved"):
                continue
            lines.append(f'  printf(", \\"{name}\\": %zu", offsetof({struct}, {name}));')
        lines.append('  printf("}");')
    lines += ['  printf("}\\n");', "  return 0;", "}"]
    return "\n".join(lines) + "\n"


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is needed (.ci/run installs it)")
def test_packed_structs_match_the_schemas(tmp_path):
    source = tmp_path / "layout.c"
    source.write_text(c_program())
    exe = tmp_path / "layout"
    build = subprocess.run(
        [
            "gcc",
            "-std=c99",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-pedantic",
            f"-I{C_DIR}",
            "-o",
            str(exe),
            str(source),
        ],
        capture_output=True,
        text=True,
    )
    assert build.returncode == 0, build.stderr
    measured = json.loads(subprocess.run([str(exe)], capture_output=True, text=True).stdout)
    assert len(LAYOUTS) == len(structs.STRUCTS) > 10
    for struct, schema in LAYOUTS.items():
        size, fields = schema_layout(schema)
        got = dict(measured[struct])
        assert got.pop("size") == size, struct
        expected = {n: o for n, o in fields.items() if not n.startswith("reserved")}
        assert got == expected, struct


def test_v3_slot_entry_is_one_u64():
    """SPEC.md 7.2: the schema's slot entries are u64 values (8 bytes each), schema 2's two."""
    entries = layout.V3_OPTIMIZER_SECTION_ENTRIES
    assert (entries.format, entries.size) == ("<u8", 8) and layout.V2SlotEntry.SIZE == 16


# A width changed in the .ksy stops the build of the schema-3 reader ---------------------------

SPEC_DIR = C_DIR.parent

#: (.ksy, field, its type, the wider or narrower type, what the failing build names): one field
#: of each kind ockpt_v3.c reads, a column, the dims, a head's field, the tables after the heads
#: (range_index.position among them) and a container field of the common .ksy.
WIDTH_MUTANTS = [
    ("onert_checkpoint_v3", "dims", "u4", "u8", "OCKPT_V3_RECORD_DIMS_DIMS_is_read_as_4"),
    ("onert_checkpoint_v3", "order", "u4", "u8", "OCKPT_V3_TENSORS_SECTION_ORDER_is_read_as_4"),
    (
        "onert_checkpoint_v3",
        "len_data",
        "u8",
        "u4",
        "OCKPT_V3_TENSORS_SECTION_LEN_DATA_is_read_as_8",
    ),
    (
        "onert_checkpoint_v3",
        "entries",
        "u8",
        "u4",
        "OCKPT_V3_OPTIMIZER_SECTION_ENTRIES_is_read_as_8",
    ),
    (
        "onert_checkpoint_v3",
        "num_blocks",
        "u8",
        "u4",
        "ockpt_v3_data_blocks_head_num_blocks_is_read_as_8",
    ),
    (
        "onert_checkpoint_v3",
        "group_shift",
        "u4",
        "u8",
        "ockpt_v3_range_index_head_group_shift_is_read_as_4",
    ),
    ("onert_checkpoint_v3", "crc", "u4", "u8", "OCKPT_V3_DATA_BLOCKS_SECTION_CRC_is_read_as_4"),
    ("onert_checkpoint_v3", "start", "u8", "u4", "OCKPT_V3_RANGE_INDEX_SECTION_START_is_read_as_8"),
    (
        "onert_checkpoint_v3",
        "position",
        "u4",
        "u8",
        "OCKPT_V3_RANGE_INDEX_SECTION_POSITION_is_read_as_4",
    ),
    (
        "onert_checkpoint_common",
        "len_body",
        "u8",
        "u4",
        "ockpt_container_section_entry_len_body_is_read_as_8",
    ),
]


def _retype(text: str, field: str, old: str, new: str) -> str:
    """``text`` with the one field `- id: field` of `type: old` (after its -ockpt keys) made
    `type: new`."""
    pattern = re.compile(rf"(- id: {field}\n(?:[ ]+-ockpt-[^\n]*\n)*[ ]+type: ){old}\n")
    assert len(pattern.findall(text)) == 1, field
    return pattern.sub(rf"\g<1>{new}\n", text)


def _build_v3_reader(
    tmp: Path, mutant: tuple[str, str, str, str] | None
) -> subprocess.CompletedProcess:
    """ockpt_v3.c compiled (C99, -Wall -Wextra -Werror -pedantic) against the ockpt_layout.h
    the generator makes from a copy of spec/'s .ksy files, one field retyped by ``mutant``."""
    import sys

    sys.path.insert(0, str(SPEC_DIR))
    try:
        import ksy_layout
    finally:
        sys.path.remove(str(SPEC_DIR))
    spec = tmp / "spec"
    spec.mkdir()
    for ksy in SPEC_DIR.glob("*.ksy"):
        shutil.copy(ksy, spec / ksy.name)
    if mutant is not None:
        stem, field, old, new = mutant
        path = spec / f"{stem}.ksy"
        path.write_text(_retype(path.read_text(), field, old, new))
    c = tmp / "c"
    shutil.copytree(C_DIR, c, ignore=shutil.ignore_patterns("ockpt-info*", "ockpt-write", "*.o"))
    (c / "ockpt_layout.h").write_text(ksy_layout.c_header(ksy_layout.load_all(spec)))
    return subprocess.run(
        [
            "gcc",
            "-std=c99",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-pedantic",
            "-fsyntax-only",
            str(c / "ockpt_v3.c"),
        ],
        capture_output=True,
        text=True,
    )


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is needed (.ci/run installs it)")
def test_the_v3_reader_builds_against_the_layout_generated_from_the_ksy(tmp_path) -> None:
    """The control of the mutants below: the same build from the unchanged .ksy succeeds."""
    done = _build_v3_reader(tmp_path, None)
    assert done.returncode == 0, done.stderr


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is needed (.ci/run installs it)")
@pytest.mark.parametrize(
    ("stem", "field", "old", "new", "named"), WIDTH_MUTANTS, ids=[m[1] for m in WIDTH_MUTANTS]
)
def test_a_changed_width_stops_the_v3_reader_build_naming_the_field(
    tmp_path, stem: str, field: str, old: str, new: str, named: str
) -> None:
    done = _build_v3_reader(tmp_path, (stem, field, old, new))
    assert done.returncode != 0
    assert named in done.stderr, done.stderr


COLUMNS_PROGRAM = r"""
#include <stdio.h>
#include "ockpt_layout.h"
#define NUM_TENSORS "num_tensors"
#define NONE ""
#define RANK "rank"
#define LEN_NAME "len_name"
#define SHOW(name, NAME, bit, size, count, sum_of, skip, align) \
  printf("%s[\"%s\", %u, %u, \"%s\", \"%s\", %u, %u]", shown++ ? ", " : "", #name, bit, size, \
         count, sum_of, skip, align);
int main(void) {
  int shown = 0;
  printf("[");
  OCKPT_V3_TENSORS_HEAD_COLUMNS(SHOW)
  printf("]\n");
  return OCKPT_V3_TENSORS_HEAD_NUM_COLUMNS;
}
"""


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is needed (.ci/run installs it)")
def test_c_column_descriptor_is_the_generated_one(tmp_path):
    """ockpt_layout.h's OCKPT_V3_TENSORS_HEAD_COLUMNS X-macro (what ockpt_v3.c and
    ockpt_write.c loop over) lists schema 3's columns as layout.V3TensorsHead.COLUMNS does."""
    from onert_checkpoint_generated import layout

    source = tmp_path / "columns.c"
    source.write_text(COLUMNS_PROGRAM)
    exe = tmp_path / "columns"
    build = subprocess.run(["gcc", "-std=c99", "-Wall", "-Werror", f"-I{C_DIR}", "-o", str(exe),
                            str(source)], capture_output=True, text=True)
    assert build.returncode == 0, build.stderr
    res = subprocess.run([str(exe)], capture_output=True, text=True)
    want = [[c.name, c.bit, c.size, c.count, c.sum_of, c.skip, c.align]
            for c in layout.V3TensorsHead.COLUMNS]
    assert json.loads(res.stdout) == want and res.returncode == len(want)
