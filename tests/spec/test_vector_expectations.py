"""The expected JSON of every valid vector, derived without the library.

spec/make_vectors.py writes a valid vector's expectation from the library's own output, so a
library bug could bless itself. Here each expectation is rebuilt from an independent source and
compared: the parsers that kaitai-struct-compiler generated from the .ksy schemas read the
bytes, and the few lines below turn what they read into the description, following
spec/SPEC.md alone (entry sizes 4.4, dialect rule 11, TOOLKIT section 1); the dtype names come
from the list in SPEC.md 6.6, and CRC-32 from zlib. The same derivation is checked against the live
library, so a mutant of src/ fails here without regenerating the vectors. The C reader's
floats are checked as text: TOOLKIT.md 1.3 asks for the shortest round-trip decimal.
"""

from __future__ import annotations

import io
import itertools
import json
import math
import re
import struct
import subprocess
import zlib
from pathlib import Path

import pytest
from kaitaistruct import KaitaiStream
from onert_checkpoint_generated.onert_checkpoint_v1 import OnertCheckpointV1
from onert_checkpoint_generated.onert_checkpoint_v2 import OnertCheckpointV2
from onert_checkpoint_generated.onert_checkpoint_v3 import OnertCheckpointV3
from onert_checkpoint_generated.onert_wof import OnertWof

import onert_checkpoint as oc

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "spec"
VECTORS = SPEC / "vectors"
C_DIR = SPEC / "c"
VALID = sorted(
    p.stem
    for p in VECTORS.glob("*.ckpt")
    if "error" not in json.loads(p.with_suffix(".json").read_text())
)
NO_STATE = 2**64 - 1
TOP_KEYS = {"revision", "dialect", "file_size", "tensors", "optimizer", "state", "origin"}


def spec_dtype_names() -> dict[int, str]:
    """The dtype names of SPEC.md 6.6, listed with "(codes -5 to 17 in this order)"."""
    text = " ".join((SPEC / "SPEC.md").read_text().split())
    match = re.search(
        r"also NumPy's names; they are (.*?) \(codes \u22125 to 17 in this order[;)]", text, re.S
    )
    assert match, "SPEC.md 6.6 no longer lists the dtype names"
    names = re.findall(r"`([a-z0-9_]+)`", match.group(1))
    assert len(names) == 23
    return dict(zip(range(-5, 18), names))


DTYPE_NAMES = spec_dtype_names()


def entry(data: bytes, index: int, offset: int, nbytes: int) -> dict:
    return {
        "index": index,
        "offset": offset,
        "nbytes": nbytes,
        "crc32": zlib.crc32(data[offset : offset + nbytes]) & 0xFFFFFFFF,
    }


# ------------------------------------------------------------------------------------------------
# Schema 1 and WOF: the offset tables as the generated parsers read them


def sizes(table: list[int], block_end: int) -> dict[int, int]:
    """SPEC.md 4.4: sort the present entries by (offset, index); each ends where the next starts."""
    present = sorted((o, i) for i, o in enumerate(table) if o != 0)
    ends = [o for o, _ in present[1:]] + [block_end]
    return {i: end - o for (o, i), end in zip(present, ends)}


def block_entries(data: bytes, table: list[int], block_end: int) -> list[dict]:
    size = sizes(table, block_end)
    return [entry(data, i, table[i], size[i]) for i in sorted(size)]


def derive_v1(data: bytes) -> dict:
    h = OnertCheckpointV1(KaitaiStream(_io(data)))
    S = len(data)
    end = h.ofs_other if h.ofs_other != 0 else S
    adam = h.ofs_opt2 != 0
    tables = {"weights": list(h.weights.ofs_entries)}
    ends = {"weights": h.ofs_opt1 if adam else end}
    if adam:
        tables["m"], tables["v"] = list(h.opt1.ofs_entries), list(h.opt2.ofs_entries)
        ends["m"], ends["v"] = h.ofs_opt2, end
    block_sizes = {b: sizes(t, ends[b]) for b, t in tables.items()}
    # Rule 11, from its text
    onert = all(
        all(o != 0 for o in t) and all(a <= b for a, b in itertools.pairwise(t))
        for t in tables.values()
    )
    micro = h.ofs_other != 0
    if not adam:
        onert = onert and h.ofs_opt1 == end
        micro = micro and h.ofs_opt1 == 0
    else:
        w = block_sizes["weights"]
        for slot in ("m", "v"):
            s = block_sizes[slot]
            micro = micro and s.keys() == w.keys() and all(s[i] == w[i] for i in w)
    assert onert or micro, "a valid vector fits a dialect"
    dialect = None if onert and micro else ("onert" if onert else "onert-micro")
    slots = {b: block_entries(data, tables[b], ends[b]) for b in ("m", "v") if adam}
    state = {}
    if h.ofs_other != 0:
        state = {"step": h.footer.step, "epoch": h.footer.epoch}
    return {
        "revision": "v1",
        "dialect": dialect,
        "file_size": S,
        "tensors": block_entries(data, tables["weights"], ends["weights"]),
        "optimizer": {"kind": "adam" if adam else "sgd", "slots": slots},
        "state": state,
        "origin": None,
    }


def derive_wof(data: bytes) -> dict:
    h = OnertWof(KaitaiStream(_io(data)))
    return {
        "revision": "wof",
        "dialect": None,
        "file_size": len(data),
        "tensors": block_entries(data, list(h.ofs_entries), len(data)),
        "optimizer": None,
        "state": {},
        "origin": None,
    }


# ------------------------------------------------------------------------------------------------
# Schema 2: sections, records and pools as the generated parser reads them


def state_value(data: bytes, e) -> object:
    kind, raw = int(e.value_type), e.value
    if kind == 0:
        return raw - 2**64 if raw >= 2**63 else raw
    if kind == 1:
        (x,) = struct.unpack("<d", raw.to_bytes(8, "little"))
        if math.isnan(x):
            return {"float": "nan"}
        return {"float": "inf" if x > 0 else "-inf"} if math.isinf(x) else x
    value = data[raw : raw + e.len_value]
    return value.decode("utf-8") if kind == 2 else {"bytes": value.hex()}


def derive_v2(data: bytes) -> dict:
    h = OnertCheckpointV2(KaitaiStream(_io(data)))
    bodies = {int(s.entry.kind): s.body for s in h.section_table}
    records = bodies[1].records if 1 in bodies else []
    tensors = []
    for r in records:
        t = entry(data, r.index, r.ofs_data, r.len_data)
        if r.flags & 0xF:  # TOOLKIT.md 1.2: the four keys together, null where the flag is clear
            t["name"] = r.name if r.flags & 4 else None
            t["dtype"] = DTYPE_NAMES[int(r.dtype)] if r.flags & 1 else None
            t["shape"] = list(r.dims[: r.rank]) if r.flags & 2 else None
            t["model_index"] = r.model_index if r.flags & 8 else None
        tensors.append(t)
    optimizer = None
    if 2 in bodies:
        o = bodies[2]
        kind = int(o.head.kind)
        names = {0: "sgd", 1: "sgd_momentum", 2: "adam"}
        slots = {}
        for j, desc in enumerate(o.slots):
            entries = o.entries[j * o.head.num_tensors : (j + 1) * o.head.num_tensors]
            slots[desc.name] = [
                entry(data, records[t].index, x.ofs_data, x.len_data)
                for t, x in enumerate(entries)
                if x.ofs_data != NO_STATE
            ]
        optimizer = {"kind": names.get(kind, f"optimizer_{kind}"), "slots": slots}
    state = {}
    if 3 in bodies:
        state = {e.key: state_value(data, e) for e in bodies[3].entries}
    origin = None
    if 5 in bodies:
        g = bodies[5]
        origin = {
            "revision": {1: "v1", 2: "wof"}[int(g.revision)],
            "dialect": {0: None, 1: "onert", 2: "onert-micro"}[int(g.dialect)],
            "num_entries": g.num_entries,
            "footerless": bool(g.flags & 1),
        }
    return {
        "revision": "v2",
        "dialect": None,
        "file_size": len(data),
        "tensors": tensors,
        "optimizer": optimizer,
        "state": state,
        "origin": origin,
    }


# ------------------------------------------------------------------------------------------------
# Schema 3: the columns and the computed placement of the generated parser (SPEC.md 7)


def derive_v3(data: bytes) -> dict:
    """SPEC.md 7.3: the description of schema 2 with revision "v3"; a record has a name,
    dtype, shape or model index when its column is present and holds another value than the
    column's "none" (7.1); each offset is the one the .ksy's ``ranges`` instance places."""
    h = OnertCheckpointV3(KaitaiStream(_io(data)))
    placed = {(r.slot, r.record): r for r in h.ranges if r.has_state}
    tensors = []
    t = h.tensors
    n = t.num_tensors if h.has_tensors else 0
    for k in range(n):
        r = placed[(-1, k)]
        e = entry(data, t.index[k] if t.has_index else k, r.ofs_data, r.len_data)
        name = t.names[k].name if t.has_name and t.len_name[k] != 0 else None
        dtype = int(t.dtype[k]) if t.has_dtype else -128
        shape = list(t.dims[k].dims) if t.has_shape and t.rank[k] != 255 else None
        model_index = t.model_index[k] if t.has_model_index else 0xFFFFFFFF
        if name is not None or dtype != -128 or shape is not None or model_index != 0xFFFFFFFF:
            e["name"] = name
            e["dtype"] = None if dtype == -128 else DTYPE_NAMES[dtype]
            e["shape"] = shape
            e["model_index"] = None if model_index == 0xFFFFFFFF else model_index
        tensors.append(e)
    optimizer = None
    if h.has_optimizer:
        o = h.optimizer
        kind = int(o.head.kind)
        names = {0: "sgd", 1: "sgd_momentum", 2: "adam"}
        slots = {}
        for j, desc in enumerate(o.slots):
            slots[desc.name] = [
                entry(data, tensors[k]["index"], placed[(j, k)].ofs_data, o.entries[j * n + k])
                for k in range(n)
                if o.entries[j * n + k] != NO_STATE
            ]
        optimizer = {"kind": names.get(kind, f"optimizer_{kind}"), "slots": slots}
    bodies = {int(s.entry.kind): s.body for s in h.section_table}
    state = {e.key: state_value(data, e) for e in bodies[3].entries} if 3 in bodies else {}
    origin = None
    if 5 in bodies:
        g = bodies[5]
        origin = {
            "revision": {1: "v1", 2: "wof"}[int(g.revision)],
            "dialect": {0: None, 1: "onert", 2: "onert-micro"}[int(g.dialect)],
            "num_entries": g.num_entries,
            "footerless": bool(g.flags & 1),
        }
    return {
        "revision": "v3",
        "dialect": None,
        "file_size": len(data),
        "tensors": tensors,
        "optimizer": optimizer,
        "state": state,
        "origin": origin,
    }


def _io(data: bytes) -> io.BytesIO:
    return io.BytesIO(data)


def derive(name: str, data: bytes) -> dict:
    """The description of a valid vector, from the generated parsers and SPEC.md."""
    if data[2] == 3:
        return derive_v3(data)
    if data[2] == 2:
        return derive_v2(data)
    # Section 3, step 5: which of the two version-1 layouts the vector was built as is in its
    # name (wof-*, v1-*); the derivation does not re-validate, it describes
    return derive_wof(data) if name.startswith("wof") else derive_v1(data)


def as_json(obj: object) -> object:
    return json.loads(json.dumps(obj, allow_nan=False))


# ------------------------------------------------------------------------------------------------
# The checks


def test_every_valid_vector_is_derived() -> None:
    assert len(VALID) >= 60
    assert {n.split("-")[0] for n in VALID} == {"v1", "wof", "v2", "v3"}


@pytest.mark.parametrize("name", VALID)
def test_expectation_equals_independent_derivation(name: str) -> None:
    data = (VECTORS / f"{name}.ckpt").read_bytes()
    want = json.loads((VECTORS / f"{name}.json").read_text())
    assert set(want) == TOP_KEYS
    assert as_json(derive(name, data)) == want


@pytest.mark.parametrize("name", VALID)
def test_library_equals_independent_derivation(name: str) -> None:
    """The live library, so that a bug in src/ fails here before any vector is regenerated."""
    data = (VECTORS / f"{name}.ckpt").read_bytes()
    assert as_json(oc.describe(oc.load(data))) == as_json(derive(name, data))


def test_dtype_names_of_the_spec_are_the_library_s() -> None:
    from onert_checkpoint.format.dtypes import DTYPES

    assert DTYPE_NAMES == {code: name for code, (name, _) in DTYPES.items()}


def test_derivation_notices_a_wrong_expectation() -> None:
    """The comparison can fail: one byte of tensor data changed changes the derived crc32."""
    name = "v1-onert-adam"
    data = bytearray((VECTORS / f"{name}.ckpt").read_bytes())
    want = json.loads((VECTORS / f"{name}.json").read_text())
    data[want["tensors"][0]["offset"]] ^= 1
    assert as_json(derive(name, bytes(data))) != want


V3_VALID = [n for n in VALID if n.startswith("v3-")]


def test_v3_vectors_cover_every_column_and_an_order() -> None:
    columns = 0
    for name in V3_VALID:
        h = OnertCheckpointV3(KaitaiStream(_io((VECTORS / f"{name}.ckpt").read_bytes())))
        if h.has_tensors:
            columns |= h.tensors.columns
    assert columns == 0x3F


@pytest.mark.parametrize("name", V3_VALID)
def test_v3_placement_of_the_ksy_equals_the_construct_reading(name: str) -> None:
    """Two readings of 7.3 agree: the .ksy's ``ranges`` instance in the Kaitai parser, and
    ``data_placement`` over the columns read by the generated Construct structs
    (tests/spec/whole_files.py; two generators from one .ksy)."""
    from tests.spec import whole_files

    data = (VECTORS / f"{name}.ckpt").read_bytes()
    h = OnertCheckpointV3(KaitaiStream(_io(data)))
    p = whole_files.read_v3(data)
    secs = {int(s.kind): s for s in p.sections}
    if 1 not in secs:
        assert h.num_ranges == 0
        return
    t = secs[1].body
    entries = secs[2].body.entries if 2 in secs else []
    tensor_at, entry_at = whole_files.data_placement(secs[4].ofs_body, t.len_data, entries, t.order)
    n = int(t.head.num_tensors)
    ksy = {(r.slot, r.record): r.ofs_data for r in h.ranges if r.has_state}
    construct = {(-1, k): o for k, o in enumerate(tensor_at)}
    construct |= {(i // n, i % n): o for i, o in enumerate(entry_at) if o is not None}
    assert ksy == construct


def test_v3_derivation_notices_a_wrong_placement() -> None:
    """The derivation reads offsets from the .ksy's placement: changing a tensor's size moves
    every later range, which the comparison sees."""
    name = "v3-alignment-classes"
    data = bytearray((VECTORS / f"{name}.ckpt").read_bytes())
    want = json.loads((VECTORS / f"{name}.json").read_text())
    s = struct.unpack_from("<Q", data, 64 + 8)[0]
    struct.pack_into("<Q", data, s + 8, 1)  # tensor 0: 0 bytes -> 1, so tensor 1 moves by 1
    got = as_json(derive(name, bytes(data)))
    assert [t["offset"] for t in got["tensors"]] != [t["offset"] for t in want["tensors"]]


# ------------------------------------------------------------------------------------------------
# The C reader's float text (TOOLKIT.md 1.3: the shortest decimal that reads back)


def _ockpt_info() -> Path:
    tool = C_DIR / "ockpt-info"
    if not tool.exists():
        built = subprocess.run(["make", "-C", str(C_DIR)], capture_output=True, text=True)
        if built.returncode != 0 or not tool.exists():
            pytest.skip(f"the C reader does not build here: {built.stderr[-300:]}")
    return tool


FLOAT_VECTORS = [
    n
    for n in VALID
    if n.startswith("v2")
    and re.search(r'": -?[0-9][0-9.e+-]*[.e]', (VECTORS / f"{n}.json").read_text())
]


def test_float_vectors_exist() -> None:
    assert FLOAT_VECTORS


@pytest.mark.parametrize("name", FLOAT_VECTORS)
def test_c_reader_writes_shortest_floats(name: str) -> None:
    tool = _ockpt_info()
    out = subprocess.run([str(tool), str(VECTORS / f"{name}.ckpt")], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout
    tokens: list[str] = []

    def keep(token: str) -> float:
        tokens.append(token)
        return float(token)

    json.loads(out.stdout, parse_float=keep)
    assert tokens
    for token in tokens:
        assert token == repr(float(token)), f"{token} is not the shortest round-trip decimal"
