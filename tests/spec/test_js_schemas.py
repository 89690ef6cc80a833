"""The schemas carry the format in a second language: the JavaScript parsers that the pinned
kaitai-struct-compiler generates from spec/*.ksy (generated/javascript, drift-checked by
spec/regenerate.py --check) read every valid vector, with the pinned JavaScript Kaitai runtime,
to the same layout fields as the Python side.

The Python side reads each file with the generated Construct structs and layout record types
(tests/spec/whole_files.py: spec/regenerate.py's own generator, not the Kaitai compiler, from
the same .ksy: two generators from one source), each cross-checked here against what
``onert_checkpoint.load`` reports (entry offsets, sizes, names, dtypes, shapes, slot entries,
state keys, step and epoch), so a field the library's reader and the generated code disagree on
fails the test. Node runs spec/ksc/layout.js as a subprocess; the runtime is installed from
spec/ksc/package-lock.json when missing; without Node.js (or when `npm ci` cannot run) the test
skips with the reason.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from onert_checkpoint_generated import layout

import onert_checkpoint as oc
from onert_checkpoint.format.container import constants
from onert_checkpoint.format.dtypes import DTYPE_CODES
from tests.spec import whole_files

ROOT = Path(__file__).resolve().parents[2]
KSC = ROOT / "spec" / "ksc"
JS = ROOT / "generated" / "javascript"
VALID = sorted(p for p in (ROOT / "spec" / "vectors").glob("*.ckpt")
               if not p.name.startswith("invalid-"))
EXACT = 1 << 53  # JavaScript numbers hold integers exactly up to here

pytestmark = pytest.mark.skipif(shutil.which("node") is None,
                                reason="Node.js is not installed (.ci/run installs it)")


@pytest.fixture(scope="module", autouse=True)
def js_runtime() -> None:
    """The pinned runtime in spec/ksc/node_modules, installed from the lock file if missing (as
    spec/regenerate.py does, under the same lock on spec/ksc: `npm ci` empties node_modules
    first, and the suite's other worker may be installing); skip only where that cannot be done."""
    fd = os.open(KSC, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        if (KSC / "node_modules" / "kaitai-struct").is_dir():
            return
        if shutil.which("npm") is None:
            pytest.skip("the JavaScript Kaitai runtime is not installed and npm is missing")
        res = subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=KSC,
                             capture_output=True, text=True, timeout=600)
    finally:
        os.close(fd)
    if res.returncode != 0 or not (KSC / "node_modules" / "kaitai-struct").is_dir():
        pytest.skip(f"`npm ci` in spec/ksc failed (offline?): {res.stderr[-500:]}")


def js_layouts(items: list[tuple[str, Path]]) -> list[dict]:
    env = dict(os.environ, NODE_PATH=str(KSC / "node_modules"))
    res = subprocess.run(["node", str(KSC / "layout.js"), str(JS),
                          *[f"{rev}:{path}" for rev, path in items]],
                         capture_output=True, text=True, env=env, timeout=300)
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert len(lines) == len(items), res.stdout + res.stderr
    return [json.loads(line) for line in lines]


# The library's layout ---------------------------------------------------------------------------


def _ints(values) -> list[int]:
    return [int(v) for v in values]


def _v1(data: bytes, ckpt: oc.Checkpoint) -> dict:
    p = whole_files.read_v1(data)
    h = p.header
    out = {
        "header": {k: int(h[k]) for k in ("magic", "version", "reserved", "ofs_opt1", "ofs_opt2",
                                          "ofs_other", "num_entries")},
        "weights": _ints(p.weights),
        "m": None if p.m is None else _ints(p.m),
        "v": None if p.v is None else _ints(p.v),
        "footer": None if p.footer is None else {"step": int(p.footer.step),
                                                  "epoch": int(p.footer.epoch)},
    }
    # The schema and the loader agree: entry offsets, the optimizer's tables, the footer.
    tables = {"weights": {t.index: t.offset for t in ckpt.tensors}}
    if ckpt.optimizer is not None:
        for slot in ("m", "v"):
            tables[slot] = {i: b.offset for i, b in ckpt.optimizer.slots.get(slot, {}).items()}
    for name, entries in tables.items():
        if out[name] is not None:
            assert {i: o for i, o in enumerate(out[name]) if o} == {
                i: o for i, o in entries.items() if o}, name
    assert (out["m"] is not None) == (ckpt.optimizer is not None and ckpt.optimizer.kind == "adam")
    if out["footer"] is not None:
        assert (out["footer"]["step"], out["footer"]["epoch"]) == (ckpt.step, ckpt.epoch)
    return out


def _wof(data: bytes, ckpt: oc.Checkpoint) -> dict:
    p = whole_files.read_wof(data)
    out = {
        "header": {k: int(p.header[k]) for k in ("magic", "version", "reserved", "num_entries")},
        "tensors": _ints(p.ofs_entries),
    }
    assert {i: o for i, o in enumerate(out["tensors"]) if o} == {
        t.index: t.offset for t in ckpt.tensors}
    return out


def _text(data: bytes, at: int, length: int) -> str:
    return data[at:at + length].decode("utf-8")


def _v2_body(data: bytes, kind: int, body) -> dict | None:
    if kind == 1:
        return {"num_tensors": int(body.head.num_tensors), "records": [
            {"index": int(r["index"]), "model_index": int(r["model_index"]),
             "flags": int(r["flags"]), "dtype": int(r["dtype"]), "rank": int(r["rank"]),
             "len_name": int(r["len_name"]), "ofs_name": int(r["ofs_name"]),
             "ofs_data": int(r["ofs_data"]), "len_data": int(r["len_data"]),
             "dims": _ints(r["dims"]),
             "name": _text(data, int(r["ofs_name"]), int(r["len_name"]))
             if int(r["flags"]) & constants.HAS_NAME else None}
            for r in body.records]}
    if kind == 2:
        return {"kind": int(body.head.kind), "num_slots": int(body.head.num_slots),
                "num_tensors": int(body.head.num_tensors),
                "slots": [{"ofs_name": int(s["ofs_name"]), "len_name": int(s["len_name"]),
                           "name": _text(data, int(s["ofs_name"]), int(s["len_name"]))}
                          for s in body.slots],
                "entries": [{"ofs_data": int(e["ofs_data"]), "len_data": int(e["len_data"])}
                            for e in body.entries]}
    if kind == 3:
        return {"num_entries": int(body.head.num_entries), "entries": [
            {"ofs_key": int(e["ofs_key"]), "len_key": int(e["len_key"]),
             "value_type": int(e["value_type"]), "value": int(e["value"]),
             "len_value": int(e["len_value"]),
             "key": _text(data, int(e["ofs_key"]), int(e["len_key"]))} for e in body.entries]}
    if kind == 5:
        return {k: int(body[k]) for k in ("revision", "dialect", "flags", "num_entries")}
    return None


def _v2(data: bytes, ckpt: oc.Checkpoint) -> dict:
    p = whole_files.read_v2(data)
    h = p.header
    out = {
        "header": {"magic": 429, "version": 2, "reserved0": 0, "header_crc": int(h.header_crc),
                   "len_file": int(h.len_file), "ofs_section_table": int(h.ofs_section_table),
                   "num_sections": int(h.num_sections),
                   "section_table_crc": int(h.section_table_crc)},
        "sections": [{"kind": int(s.kind), "flags": int(s.flags), "ofs_body": int(s.ofs_body),
                      "len_body": int(s.len_body), "crc": int(s.crc),
                      "body": _v2_body(data, int(s.kind), s.body)} for s in p.sections],
    }
    bodies = {s["kind"]: s["body"] for s in out["sections"]}
    records = bodies.get(1, {"records": []})["records"]
    assert [(r["index"], r["ofs_data"], r["len_data"], r["name"]) for r in records] == [
        (t.index, t.offset, t.nbytes, t.name) for t in ckpt.tensors]
    for r, t in zip(records, ckpt.tensors):
        assert (r["dtype"] if r["flags"] & constants.HAS_DTYPE else None) == (
            None if t.dtype is None else DTYPE_CODES[str(t.dtype)])
        assert (tuple(r["dims"][: r["rank"]]) if r["flags"] & constants.HAS_SHAPE else None) == (
            None if t.shape is None else tuple(t.shape))
    if 2 in bodies:
        assert ckpt.optimizer is not None
        names = [s["name"] for s in bodies[2]["slots"]]
        assert names == list(ckpt.optimizer.slots)
        n = bodies[2]["num_tensors"]
        for j, name in enumerate(names):
            got = {ckpt.tensors[k].index: (e["ofs_data"], e["len_data"])
                   for k, e in enumerate(bodies[2]["entries"][j * n:(j + 1) * n])
                   if e["ofs_data"] != constants.NO_STATE}
            assert got == {i: (b.offset, b.nbytes) for i, b in ckpt.optimizer.slots[name].items()}
    keys = [e["key"] for e in bodies.get(3, {"entries": []})["entries"]]
    assert keys == list(ckpt.state)
    return out


def _column(body, name: str, bit: int) -> list[int] | None:
    return _ints(body[name]) if int(body.head.columns) & bit else None


def _v3_tensors(body) -> dict:
    bits = {b.name.lower(): int(b) for b in layout.V3ColumnBits}
    ranks = _column(body, "rank", bits["shape"])
    lens = _column(body, "len_name", bits["name"])
    dims, names = None, None
    if ranks is not None:
        flat, dims = _ints(body.dims), []
        for r in ranks:
            r = 0 if r == layout.V3_NO_SHAPE else r
            dims.append(flat[:r])
            flat = flat[r:]
    if lens is not None:
        pool, names = bytes(body.names), []
        for n in lens:
            names.append(pool[:n].decode("utf-8"))
            pool = pool[n:]
    return {"num_tensors": int(body.head.num_tensors), "columns": int(body.head.columns),
            "len_data": _ints(body.len_data), "index": _column(body, "index", bits["index"]),
            "model_index": _column(body, "model_index", bits["model_index"]),
            "len_name": lens, "dtype": _column(body, "dtype", bits["dtype"]), "rank": ranks,
            "order": _column(body, "order", bits["order"]), "dims": dims, "names": names}


def _v3(data: bytes, ckpt: oc.Checkpoint) -> dict:
    p = whole_files.read_v3(data)
    h = p.header
    sections = []
    for s in p.sections:
        kind = int(s.kind)
        if kind == 1:
            body = _v3_tensors(s.body)
        elif kind == 2:
            body = {"kind": int(s.body.head.kind), "num_slots": int(s.body.head.num_slots),
                    "num_tensors": int(s.body.head.num_tensors),
                    "slots": [{"ofs_name": int(d["ofs_name"]), "len_name": int(d["len_name"]),
                               "name": _text(data, int(d["ofs_name"]), int(d["len_name"]))}
                              for d in s.body.slots],
                    "entries": _ints(s.body.entries)}
        else:
            body = _v2_body(data, kind, s.body)
        sections.append({"kind": kind, "flags": int(s.flags), "ofs_body": int(s.ofs_body),
                         "len_body": int(s.len_body), "crc": int(s.crc), "body": body})
    out = {
        "header": {"magic": 429, "version": 3, "reserved0": 0, "header_crc": int(h.header_crc),
                   "len_file": int(h.len_file), "ofs_section_table": int(h.ofs_section_table),
                   "num_sections": int(h.num_sections),
                   "section_table_crc": int(h.section_table_crc)},
        "sections": sections,
        "ranges": [],
    }
    bodies = {s["kind"]: s["body"] for s in sections}
    if 1 not in bodies:
        assert not ckpt.tensors
        return out
    t = bodies[1]
    n = t["num_tensors"]
    entries = bodies[2]["entries"] if 2 in bodies else []
    tensor_at, entry_at = whole_files.data_placement(
        sections[-1]["ofs_body"], t["len_data"], entries, t["order"])
    # The schema and the loader agree: indices, sizes, placed offsets, names, dtypes, shapes.
    index = t["index"] or list(range(n))
    assert [(i, o, ln) for i, o, ln in zip(index, tensor_at, t["len_data"])] == [
        (x.index, x.offset, x.nbytes) for x in ckpt.tensors]
    for k, x in enumerate(ckpt.tensors):
        assert (t["names"][k] or None if t["names"] else None) == x.name
        code = t["dtype"][k] if t["dtype"] else layout.V3_NO_DTYPE
        assert (None if code == layout.V3_NO_DTYPE else code) == (
            None if x.dtype is None else DTYPE_CODES[str(x.dtype)])
        rank = t["rank"][k] if t["rank"] else layout.V3_NO_SHAPE
        assert (None if rank == layout.V3_NO_SHAPE else tuple(t["dims"][k])) == (
            None if x.shape is None else tuple(x.shape))
    if 2 in bodies:
        assert ckpt.optimizer is not None
        for j, name in enumerate(s["name"] for s in bodies[2]["slots"]):
            got = {index[k]: (entry_at[j * n + k], entries[j * n + k]) for k in range(n)
                   if entries[j * n + k] != layout.NO_STATE}
            assert got == {i: (b.offset, b.nbytes) for i, b in ckpt.optimizer.slots[name].items()}
    order = t["order"] or list(range(n))
    for j in range(-1, len(entries) // n if n else 0):
        for k in order:
            if j < 0:
                out["ranges"].append({"slot": -1, "record": k, "ofs_data": tensor_at[k],
                                      "len_data": t["len_data"][k]})
            elif entries[j * n + k] != layout.NO_STATE:
                out["ranges"].append({"slot": j, "record": k, "ofs_data": entry_at[j * n + k],
                                      "len_data": entries[j * n + k]})
    return out


def python_layout(path: Path) -> tuple[str, dict]:
    data = path.read_bytes()
    ckpt = oc.load(data)
    build = {"v1": _v1, "wof": _wof, "v2": _v2, "v3": _v3}[ckpt.revision]
    return ckpt.revision, build(data, ckpt)


def same(js: object, py: object, where: str = "") -> list[str]:
    """Where the two layouts differ (integers beyond 2^53 compared as doubles, as JavaScript
    holds them)."""
    if isinstance(py, dict) and isinstance(js, dict):
        if js.keys() != py.keys():
            return [f"{where}: keys {sorted(js)} vs {sorted(py)}"]
        return [d for k in py for d in same(js[k], py[k], f"{where}.{k}")]
    if isinstance(py, list) and isinstance(js, list):
        if len(js) != len(py):
            return [f"{where}: {len(js)} vs {len(py)} items"]
        return [d for i, (a, b) in enumerate(zip(js, py)) for d in same(a, b, f"{where}[{i}]")]
    if isinstance(py, int) and not isinstance(py, bool) and py >= EXACT:
        return [] if isinstance(js, (int, float)) and float(js) == float(py) else [
            f"{where}: {js!r} vs {py!r}"]
    return [] if js == py and type(js) is type(py) else [f"{where}: {js!r} vs {py!r}"]


def test_every_valid_vector_parses_to_the_library_layout():
    expected = [python_layout(p) for p in VALID]
    got = js_layouts([(rev, p) for (rev, _), p in zip(expected, VALID)])
    problems = []
    for path, (_, want), js in zip(VALID, expected, got):
        problems += [f"{path.name}: {d}" for d in same(js, want)]
    assert not problems, "\n".join(problems[:40])
    revisions = {rev for rev, _ in expected}
    assert revisions == {"v1", "wof", "v2", "v3"}
    # the check reaches every part of schema 2
    for revision in ("v2", "v3"):
        kinds = {s["kind"] for (rev, lay) in expected if rev == revision for s in lay["sections"]}
        assert {1, 2, 3, 4, 5} <= kinds, revision
    columns = 0
    for rev, lay in expected:
        if rev == "v3" and lay["sections"] and lay["sections"][0]["kind"] == 1:
            columns |= lay["sections"][0]["body"]["columns"]
    assert columns == 0x3F  # every optional column of schema 3 is compared


def test_a_broken_file_is_refused_by_the_javascript_parser(tmp_path):
    """The generated parser validates what the schema declares (magic, version, reserved)."""
    bad = tmp_path / "bad.ckpt"
    bad.write_bytes(b"\xad\x01\x02\x07" + bytes(60))  # schema 2 with reserved0 = 7
    (out,) = js_layouts([("v2", bad)])
    assert "error" in out


def test_a_broken_schema_3_file_is_refused_by_the_javascript_parser(tmp_path):
    bad = tmp_path / "bad.ckpt"
    bad.write_bytes(b"\xad\x01\x02" + (VALID_V3_FIRST.read_bytes()[3:]))  # version 2
    (out,) = js_layouts([("v3", bad)])
    assert "error" in out


VALID_V3_FIRST = next(p for p in VALID if p.name.startswith("v3-"))


def test_the_runtime_version_is_pinned_exactly():
    lock = json.loads((KSC / "package-lock.json").read_text())
    assert lock["packages"]["node_modules/kaitai-struct"]["version"] == "0.11.0"
    spec = json.loads((KSC / "package.json").read_text())
    assert spec["dependencies"]["kaitai-struct"] == "0.11.0"
