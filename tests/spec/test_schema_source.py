"""The .ksy files are the one hand-written layout of each revision, and the chain from them is live.

- Every generated Construct struct (onert_checkpoint_generated.structs, which the writers build
  with) and record type has the fields, widths, offsets and fixed values of its .ksy type, read
  here from the YAML itself.
- A .ksy whose field width changes (a schema-2 record's, schema 3's dims column) makes
  ``spec/regenerate.py --check`` fail (the layout module, the parser, the C header and the SPEC
  tables drift), and once regenerated, the library's writer and reader follow the new width
  without another edit.
- Every revision's ``load`` reads each fixed structure (header, footer, section table, section
  heads) through generated code: its generated Kaitai parser, or the generated dtype where that
  parser would read the whole section (docs/performance-notes.md); replacing either by a
  stand-in that raises makes the load fail.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml
from construct import Const, Struct
from onert_checkpoint_generated import layout, structs

import onert_checkpoint as oc

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "spec"

KSY_WIDTH = {"u1": 1, "s1": 1, "u2": 2, "s2": 2, "u4": 4, "s4": 4, "u8": 8, "s8": 8}

#: Each generated Construct struct -> its .ksy file and type (None for the file's top level).
STRUCTS: list[tuple[str, str, str | None]] = [
    ("V1Header", "onert_checkpoint_v1", None),
    ("V1Footer", "onert_checkpoint_v1", "footer"),
    ("WofHeader", "onert_wof", None),
    ("Header", "onert_checkpoint_common", "header"),
    ("SectionEntry", "onert_checkpoint_common", "section_entry"),
    ("V2TensorsHead", "onert_checkpoint_v2", "tensors_section"),
    ("V3TensorsHead", "onert_checkpoint_v3", "tensors_section"),
    ("OptimizerHead", "onert_checkpoint_common", "optimizer_head"),
    ("StateHead", "onert_checkpoint_common", "state_section"),
    ("Origin", "onert_checkpoint_common", "origin_section"),
]

#: The NumPy record types of the tables -> their .ksy type.
DTYPES = [
    ("SectionEntry", "onert_checkpoint_common", "section_entry"),
    ("V2TensorRecord", "onert_checkpoint_v2", "tensor_record"),
    ("SlotDescriptor", "onert_checkpoint_common", "slot_descriptor"),
    ("V2SlotEntry", "onert_checkpoint_v2", "slot_entry"),
    ("StateEntry", "onert_checkpoint_common", "state_entry"),
]


def ksy_fields(stem: str, type_name: str | None) -> list[tuple[str, int, int, object]]:
    """(name, offset, size, valid) of the leading fixed-size fields of a .ksy type, from the
    YAML alone."""
    spec = yaml.safe_load((SPEC / f"{stem}.ksy").read_text())
    seq = spec["seq"] if type_name is None else spec["types"][type_name]["seq"]
    out, at = [], 0
    for f in seq:
        if f.get("type") in KSY_WIDTH:
            if "repeat" in f and not isinstance(f.get("repeat-expr"), int):
                break
            size = KSY_WIDTH[f["type"]] * (f["repeat-expr"] if "repeat" in f else 1)
        elif isinstance(f.get("size"), int) and "type" not in f:
            size = f["size"]
        else:
            break
        valid = f.get("valid")
        out.append((f["id"], at, size, valid if isinstance(valid, int) else None))
        at += size
    return out


def struct_fields(struct: Struct) -> list[tuple[str | None, int, int, object]]:
    out, at = [], 0
    for sub in struct.subcons:
        size = sub.sizeof()
        inner = sub.subcon if hasattr(sub, "subcon") else sub
        value = inner.value if isinstance(inner, Const) else None
        out.append((sub.name, at, size, value))  # zero padding has no name
        at += size
    return out


@pytest.mark.parametrize(("name", "stem", "type_name"), STRUCTS, ids=[s[0] for s in STRUCTS])
def test_construct_struct_equals_its_ksy_type(name, stem, type_name) -> None:
    want = ksy_fields(stem, type_name)
    got = struct_fields(structs.STRUCTS[name])
    assert len(got) == len(want), name
    for (g_name, g_at, g_size, g_value), (k_name, k_at, k_size, k_valid) in zip(got, want):
        assert (g_at, g_size) == (k_at, k_size), (name, k_name)
        if g_name is None:  # zero padding: a reserved byte string of the .ksy
            assert k_name.startswith("reserved"), (name, k_name)
            continue
        assert g_name == k_name, name
        assert g_value == k_valid, (name, k_name)


@pytest.mark.parametrize(("name", "stem", "type_name"), DTYPES, ids=[d[0] for d in DTYPES])
def test_record_dtype_equals_its_ksy_type(name, stem, type_name) -> None:
    dtype = getattr(layout, name).DTYPE
    want = ksy_fields(stem, type_name)
    assert [(n, dtype.fields[n][1], dtype.fields[n][0].itemsize) for n in dtype.names] == [
        (n, at, size) for n, at, size, _ in want
    ], name
    assert dtype.itemsize == sum(size for _, _, size, _ in want)


def test_record_struct_follows_the_ksy_not_a_copy() -> None:
    """Mutant guard: a struct typed out by hand that differs in one width is told apart."""
    from construct import Int16ul, Int32ul

    wrong = Struct("num_tensors" / Int16ul, "reserved" / Const(0, Int32ul))
    assert struct_fields(wrong) != [
        (n, at, size, v) for n, at, size, v in ksy_fields("onert_checkpoint_v2", "tensors_section")
    ]


def _ksy_types(spec: dict) -> list[tuple[str, dict]]:
    out, todo = [], list((spec.get("types") or {}).items())
    while todo:
        name, t = todo.pop()
        out.append((name, t))
        todo += list((t.get("types") or {}).items())
    return out


def test_every_integer_array_the_file_sizes_is_generated() -> None:
    """Every integer field of a .ksy repeated a number of times the file gives (a column, a
    table) has its generated Array constant of the same element width, schema 3's
    range_index.position (present by another section's bit) among them."""
    from onert_checkpoint_generated import layout

    generated = {(a.type, a.name): a for a in vars(layout).values() if isinstance(a, layout.Array)}
    found = []
    for path in sorted(SPEC.glob("*.ksy")):
        for type_name, t in _ksy_types(yaml.safe_load(path.read_text())):
            for f in t.get("seq") or []:
                if f.get("type") not in KSY_WIDTH or f.get("repeat") != "expr":
                    continue
                if isinstance(f.get("repeat-expr"), int):
                    continue
                found.append((type_name, f["id"]))
                got = generated.get((type_name, f["id"]))
                assert got is not None, (path.name, type_name, f["id"])
                assert got.size == KSY_WIDTH[f["type"]], (type_name, f["id"])
    assert ("range_index_section", "position") in found


def test_range_index_position_is_present_with_the_order_column() -> None:
    """range_index.position's presence is the tensors section's ORDER bit, and the C header
    has its element size."""
    from onert_checkpoint_generated import layout

    position = layout.V3_RANGE_INDEX_SECTION_POSITION
    assert (position.bit, position.bit_of) == (layout.V3ColumnBits.ORDER, "tensors_section")
    header = (SPEC / "c" / "ockpt_layout.h").read_text()
    assert f"#define OCKPT_V3_RANGE_INDEX_SECTION_POSITION_ELEM_SIZE {position.size}u" in header


# The chain: .ksy -> regenerate.py -> layout module, C header, SPEC tables -> library ---------

needs_tools = pytest.mark.skipif(
    shutil.which("node") is None
    or shutil.which("dot") is None
    or not (SPEC / "ksc" / "node_modules").is_dir(),
    reason="needs Node.js with spec/ksc's npm ci done, and Graphviz dot (.ci/run installs both)",
)


def _copy_tree(tmp: Path) -> Path:
    """spec/ and generated/ in ``tmp`` (the compiler's node_modules linked, not copied)."""
    shutil.copytree(SPEC, tmp / "spec", ignore=shutil.ignore_patterns("node_modules", "vectors"))
    (tmp / "spec" / "ksc" / "node_modules").symlink_to(SPEC / "ksc" / "node_modules")
    shutil.copytree(
        ROOT / "generated", tmp / "generated", ignore=shutil.ignore_patterns("__pycache__")
    )
    return tmp


def _widen_model_index(spec: Path) -> None:
    path = spec / "onert_checkpoint_v2.ksy"
    text = path.read_text()
    old = "      - id: model_index\n        type: u4\n"
    assert text.count(old) == 1
    path.write_text(text.replace(old, "      - id: model_index\n        type: u8\n"))


#: What does not follow a changed width by regeneration alone: the C reader's reads (rd16, rd32,
#: rd64 in ockpt.c, ockpt_v2.c and ockpt_v3.c take offsets, record and element sizes from
#: ockpt_layout.h, the width from the call; ockpt_v2.c and ockpt_v3.c check each width against the
#: generated struct member or *_ELEM_SIZE at compile time, so their build fails naming the field:
#: tests/ckit/test_c_layout.py widens one field of each kind ockpt_v3.c reads); the independent
#: oracles (spec/make_vectors.py, spec/oracles/, tests/format/test_v3_write.py's checker), which
#: keep their own widths by design. The C writer writes each field at its generated struct member's
#: width (PUTF, PUTA, SETF), and the library's readers and writers take every width from the layout
#: module.
NOT_FOLLOWING = (
    "spec/c/ockpt.c",
    "spec/c/ockpt_v2.c",
    "spec/c/ockpt_v3.c",
    "spec/make_vectors.py",
    "spec/oracles/v3_encoder.py",
)


@needs_tools
def test_a_changed_field_width_makes_the_check_fail_and_the_library_follows(tmp_path) -> None:
    tree = _copy_tree(tmp_path)
    regen = [sys.executable, str(tree / "spec" / "regenerate.py")]
    unchanged = subprocess.run([*regen, "--check"], capture_output=True, text=True, timeout=600)
    assert unchanged.returncode == 0, unchanged.stdout + unchanged.stderr

    _widen_model_index(tree / "spec")
    drift = subprocess.run([*regen, "--check"], capture_output=True, text=True, timeout=600)
    assert drift.returncode == 1, drift.stdout + drift.stderr
    for derived in ("layout.py", "onert_checkpoint_v2.py", "ockpt_layout.h", "SPEC.md"):
        assert derived in drift.stdout, (derived, drift.stdout)

    subprocess.run(regen, check=True, capture_output=True, timeout=600)
    header = (tree / "spec" / "c" / "ockpt_layout.h").read_text()
    assert "#define OCKPT_V2_TENSOR_RECORD_SIZE 76u" in header
    assert "| 4 | 8 | u64 | `model_index` |" in (tree / "spec" / "SPEC.md").read_text()
    # The library, given the regenerated layout and parsers, writes and reads 76-byte records.
    probe = (
        "import numpy as np, onert_checkpoint as oc\n"
        "from onert_checkpoint.format.container.constants import TENSOR_RECORD_SIZE\n"
        "ck = oc.Checkpoint(tensors=[oc.Tensor(i, np.arange(4, dtype=np.float32),"
        " model_index=2**32 + i) for i in range(3)], revision='v2')\n"
        "data = oc.to_bytes(ck)\n"
        "back = oc.load(data)\n"
        "assert [t.model_index for t in back.tensors] == [2**32, 2**32 + 1, 2**32 + 2]\n"
        "print(TENSOR_RECORD_SIZE)\n"
    )
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(tree / "generated" / "python"), env.get("PYTHONPATH", "")]
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=300
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["76"]


def _widen_dims(spec: Path) -> None:
    path = spec / "onert_checkpoint_v3.ksy"
    text = path.read_text()
    old = "      - id: dims\n        type: u4\n"
    assert text.count(old) == 1
    path.write_text(text.replace(old, "      - id: dims\n        type: u8\n"))


#: What does not follow a changed width of schema 3's dims column by regeneration alone: the C
#: reader reads each dim with rd32 at DIM_SIZE strides (ockpt_v3.c: the stride follows, the
#: width of the read does not, so its build stops at ELEM_IS, naming
#: OCKPT_V3_RECORD_DIMS_DIMS_is_read_as_4; tests/ckit/test_c_layout.py builds it, and so for a
#: column, a head's field, the slot entries, data_blocks.crc, range_index.start and .position
#: and a section-table field); the C writer writes them at the generated width (PUTA); the
#: independent oracles keep their own widths by design.
NOT_FOLLOWING_V3 = ("spec/c/ockpt_v3.c", "spec/oracles/v3_encoder.py")


@needs_tools
def test_a_changed_schema3_width_makes_the_check_fail_and_the_library_follows(tmp_path) -> None:
    """Schema 3's dims column widened to u64 in a copy of the .ksy: regenerate --check fails on
    the layout module, the parser, the C header and SPEC 7.1's column table; regenerated,
    the library writes 8-byte dims that the regenerated Kaitai parser reads, and reads them
    back."""
    tree = _copy_tree(tmp_path)
    regen = [sys.executable, str(tree / "spec" / "regenerate.py")]
    _widen_dims(tree / "spec")
    drift = subprocess.run([*regen, "--check"], capture_output=True, text=True, timeout=600)
    assert drift.returncode == 1, drift.stdout + drift.stderr
    for derived in ("layout.py", "onert_checkpoint_v3.py", "ockpt_layout.h", "SPEC.md"):
        assert derived in drift.stdout, (derived, drift.stdout)

    subprocess.run(regen, check=True, capture_output=True, timeout=600)
    header = (tree / "spec" / "c" / "ockpt_layout.h").read_text()
    assert "#define OCKPT_V3_RECORD_DIMS_DIMS_ELEM_SIZE 8u" in header
    assert "| `dims` | `SHAPE` | u64[D] |" in (tree / "spec" / "SPEC.md").read_text()
    probe = (
        "import numpy as np, onert_checkpoint as oc\n"
        "from onert_checkpoint_generated.onert_checkpoint_v3 import OnertCheckpointV3\n"
        "from onert_checkpoint_generated.layout import V3_RECORD_DIMS_DIMS as DIMS\n"
        "arrays = [np.arange(6, dtype=np.float32).reshape(2, 3), np.ones((4,), np.int16)]\n"
        "ck = oc.Checkpoint(tensors=[oc.Tensor(i, a, dtype=a.dtype.name, shape=a.shape)"
        " for i, a in enumerate(arrays)], revision='v3')\n"
        "data = oc.to_bytes(ck)\n"
        "parsed = OnertCheckpointV3.from_bytes(data).tensors\n"
        "assert [list(d.dims) for d in parsed.dims] == [[2, 3], [4]], parsed.dims\n"
        "back = oc.load(data)\n"
        "assert [np.asarray(t).shape for t in back.tensors] == [(2, 3), (4,)]\n"
        "assert np.array_equal(np.asarray(back.tensors[0]), arrays[0])\n"
        "print(DIMS.size)\n"
    )
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(tree / "generated" / "python"), env.get("PYTHONPATH", "")]
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=300
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["8"]


# Every revision's load reads its fixed structures through generated code ---------------------


def _files() -> dict[str, bytes]:
    """A file of each revision holding every fixed structure it has: schema 1 with its footer,
    and an upgrade of it to schemas 2 and 3 (optimizer, state and origin sections)."""
    v1 = (ROOT / "tests" / "data" / "real-onert" / "fc2-adam-step8.ckpt").read_bytes()
    ck = oc.load(v1)
    plain = oc.Checkpoint(tensors=[oc.Tensor(0, np.arange(4, dtype=np.float32).view(np.uint8))])
    return {
        "v1": v1,
        "wof": oc.to_bytes(oc.convert(plain, "wof")),
        "v2": oc.to_bytes(ck, revision="v2"),
        "v3": oc.to_bytes(ck, revision="v3"),
    }


_V2 = "onert_checkpoint.format.revisions.v2"
_C = "onert_checkpoint.format.container"
_V3 = "onert_checkpoint.format.revisions.v3"
#: What each revision's load reads its fixed structures with: (module, name) of the generated
#: Kaitai parser class it uses, or of the generated layout record whose DTYPE it reads through
#: where the generated parser would read the whole section (the section table, the tensors and
#: state sections' heads: tests/bench/bench_fixed_structures.py, docs/performance-notes.md).
FIXED_READS: dict[str, list[tuple[str, str, str]]] = {
    "v1": [("header and footer", "onert_checkpoint.format.revisions.v1.reader",
             "OnertCheckpointV1")],
    "wof": [("header", "onert_checkpoint.format.revisions.wof.reader", "OnertWof")],
    "v2": [
        ("header", f"{_C}.header", "OnertCheckpointCommon"),
        ("section table", f"{_C}.section_table", "SectionEntry"),
        ("tensors head", f"{_V2}.tensors", "V2TensorsHead"),
        ("optimizer head", f"{_V2}.optimizer", "Common"),
        ("state head", f"{_C}.state", "StateHead"),
        ("origin", f"{_C}.origin", "Common"),
    ],
    "v3": [
        ("header", f"{_C}.header", "OnertCheckpointCommon"),
        ("section table", f"{_C}.section_table", "SectionEntry"),
        ("tensors head", f"{_V3}.tensor_columns", "V3TensorsHead"),
        ("optimizer head", f"{_V2}.optimizer", "Common"),
        ("state head", f"{_C}.state", "StateHead"),
        ("origin", f"{_C}.origin", "Common"),
    ],
}
_CASES = [(rev, *read) for rev, reads in FIXED_READS.items() for read in reads]


class _Refused(Exception):
    pass


class _Raising:
    """Stands for a generated parser class or layout record: any use of it raises."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __call__(self, *args, **kwargs):
        raise _Refused(self._name)

    def __getattr__(self, attr: str):
        raise _Refused(f"{self._name}.{attr}")


@pytest.mark.parametrize(
    ("revision", "what", "module", "name"), _CASES, ids=[f"{c[0]}-{c[1]}" for c in _CASES]
)
def test_load_reads_fixed_structures_through_generated_code(
    revision: str, what: str, module: str, name: str, monkeypatch
) -> None:
    import importlib

    data = _files()[revision]
    assert oc.load(data).revision == revision
    monkeypatch.setattr(importlib.import_module(module), name, _Raising(name))
    with pytest.raises(_Refused):
        oc.load(data)
