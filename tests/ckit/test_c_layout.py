"""spec/c/ockpt_layout.h declares the same layouts as the library's schemas.

A small C program prints the size and every field offset of each packed struct; they must equal
the Construct structs' and the NumPy record types' (the library's executable schemas).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from construct import Struct

from onert_checkpoint.format.schemas import v1, v2, v3, wof

C_DIR = Path(__file__).resolve().parents[2] / "spec" / "c"

#: C struct -> the library's schema of the same bytes.
LAYOUTS: dict[str, object] = {
    "ockpt_v1_header_layout": v1.HEADER,
    "ockpt_v1_footer_layout": v1.FOOTER,
    "ockpt_wof_header_layout": wof.HEADER,
    "ockpt_v2_header_layout": v2.HEADER,
    "ockpt_v2_section_entry_layout": v2.SECTION_DTYPE,
    "ockpt_v2_tensors_head_layout": v2.TENSORS_HEAD,
    "ockpt_v2_tensor_record_layout": v2.TENSOR_RECORD_DTYPE,
    "ockpt_v2_optimizer_head_layout": v2.OPTIMIZER_HEAD,
    "ockpt_v2_slot_descriptor_layout": v2.SLOT_DESCRIPTOR_DTYPE,
    "ockpt_v2_slot_entry_layout": v2.SLOT_ENTRY_DTYPE,
    "ockpt_v2_state_head_layout": v2.STATE_HEAD,
    "ockpt_v2_state_entry_layout": v2.STATE_ENTRY_DTYPE,
    "ockpt_v2_origin_layout": v2.ORIGIN,
    "ockpt_v3_tensors_head_layout": v3.TENSORS_HEAD,
}

#: Schema 3's fixed-size structures that are schema 2's (SPEC.md 6.7): the C kit declares them
#: once; the library's v3 schemas must have the same layout.
SHARED_WITH_V3: dict[str, object] = {
    "ockpt_v2_header_layout": v3.HEADER,
    "ockpt_v2_section_entry_layout": v3.SECTION_DTYPE,
    "ockpt_v2_optimizer_head_layout": v3.OPTIMIZER_HEAD,
    "ockpt_v2_slot_descriptor_layout": v3.SLOT_DESCRIPTOR_DTYPE,
    "ockpt_v2_state_head_layout": v3.STATE_HEAD,
    "ockpt_v2_state_entry_layout": v3.STATE_ENTRY_DTYPE,
    "ockpt_v2_origin_layout": v3.ORIGIN,
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
    for struct, schema in [*LAYOUTS.items(), *SHARED_WITH_V3.items()]:
        size, fields = schema_layout(schema)
        got = dict(measured[struct])
        assert got.pop("size") == size, struct
        expected = {n: o for n, o in fields.items() if not n.startswith("reserved")}
        assert got == expected, struct


def test_v3_slot_entry_is_one_u64():
    """SPEC.md 6.7.2: the schema's slot entries are u64 values (8 bytes each)."""
    parsed = v3.OPTIMIZER.parse(bytes(16) + bytes(0))
    assert parsed.entries.dtype.itemsize == 8
    built = v3.OPTIMIZER.build(
        {
            "head": {"kind": 1, "num_slots": 1, "num_tensors": 2, "reserved": 0},
            "slots": np.zeros(1, v3.SLOT_DESCRIPTOR_DTYPE),
            "entries": [3, v3.NO_STATE],
        }
    )
    assert len(built) == 16 + 16 + 2 * 8
