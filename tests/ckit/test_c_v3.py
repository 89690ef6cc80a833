"""Schema 3 (spec/SPEC.md 7) in the reference C reader (spec/c/ockpt_v3.c).

The files here are built by hand from the SPEC text (a small builder below: header, section
table, the columnar tensors section of 7.1, the optimizer section of 7.2, the data placed
by 7.3), independently of the library's writer and reader. Each valid file's description by
``ockpt-info`` (buffer and stream, with and without scratch: SPEC 6.1's two methods) must equal
the library's and carry the offsets the SPEC's placement rule gives; each invalid file must get,
in every mode, the code, field and offset the rule assigns (C0-C13, O4, O7, P0-P4).

The last part keeps the vectors honest: mutants of ockpt_v3.c that once passed every vector
(MUTANTS, each with what it breaks) are built and must each fail a vector named with it.
"""

from __future__ import annotations

import json
import shutil
import struct
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

import onert_checkpoint as oc
from onert_checkpoint.format.container.constants import crc as crc32c

MODES = ([], ["--no-scratch"], ["--stream"], ["--stream", "--no-scratch"])
NO_STATE = (1 << 64) - 1
NO_MODEL = 0xFFFFFFFF
INDEX, MODEL, NAME, DTYPE, SHAPE, ORDER = 1, 2, 4, 8, 16, 32

Body = Callable[[int], bytes]  # a section body, given where it starts


def _align(x: int, a: int) -> int:
    return -(-x // a) * a


def range_alignment(n: int) -> int:
    """a(len) of SPEC 7.3."""
    if n >= 64:
        return 64
    a = 1
    while a < n:
        a *= 2
    return a


def place(start: int, sizes: list[int]) -> list[int]:
    out, pos = [], start
    for n in sizes:
        pos = _align(pos, range_alignment(n))
        out.append(pos)
        pos += n
    return out


def tensors_body(
    lens: list[int],
    *,
    index=None,
    model=None,
    lname=None,
    dtype=None,
    rank=None,
    order=None,
    dims=None,
    names=None,
    columns=None,
    pad=b"\0",
) -> bytes:
    """The tensors section of 7.1 from its columns (None: absent); `columns` overrides the
    bits, `pad` is the byte written as column padding."""
    n = len(lens)
    cols = [
        (INDEX, index, "<I"),
        (MODEL, model, "<I"),
        (NAME, lname, "<I"),
        (DTYPE, dtype, "<b"),
        (SHAPE, rank, "<B"),
        (ORDER, order, "<I"),
    ]
    bits = sum(bit for bit, values, _ in cols if values is not None)
    body = bytearray(struct.pack("<II", n, bits if columns is None else columns))
    body += b"".join(struct.pack("<Q", v) for v in lens)
    for _, values, fmt in cols:
        if values is not None:
            body += pad * (_align(len(body), 8) - len(body))
            body += b"".join(struct.pack(fmt, v) for v in values)
    if rank is not None:
        body += pad * (_align(len(body), 8) - len(body))
        body += b"".join(struct.pack("<I", d) for d in (dims or []))
    if lname is not None:
        body += pad * (_align(len(body), 8) - len(body))
        body += b"".join(names or [])
    return bytes(body)


def optimizer_body(kind: int, slots: list[tuple[bytes, list[int]]], T: int) -> Body:
    """7.2: slot descriptors, one u64 per entry (NO_STATE: none), the names."""

    def build(start: int) -> bytes:
        K = len(slots)
        pos = start + 16 + 16 * K + 8 * K * T
        out = bytearray(struct.pack("<IIII", kind, K, T, 0))
        for name, _ in slots:
            out += struct.pack("<QII", pos, len(name), 0)
            pos += len(name)
        for _, entries in slots:
            out += b"".join(struct.pack("<Q", e) for e in entries)
        out += b"".join(name for name, _ in slots)
        return bytes(out)

    return build


def data_body(ranges: list[bytes]) -> bytes:
    """The data section: the ranges in data order, each at a multiple of a(len) (7.3)."""
    out = bytearray()
    for r in ranges:
        out += bytes(_align(len(out), range_alignment(len(r))) - len(out))
        out += r
    return bytes(out)


def build(sections: list[tuple[int, int, bytes | Body]]) -> bytes:
    """Header (version 3), section table and the bodies, each at the next multiple of 64, with
    every checksum right (6.4, 6.3)."""
    table_end = 64 + 32 * len(sections)
    pos, placed = table_end, []
    for kind, flags, body in sections:
        pos = _align(pos, 64)
        raw = body(pos) if callable(body) else body
        placed.append((kind, flags, pos, raw))
        pos += len(raw)
    table = b"".join(
        struct.pack("<IIQQII", kind, flags, ofs, len(raw), crc32c(raw), 0)
        for kind, flags, ofs, raw in placed
    )
    out = bytearray(64) + table
    for _, _, ofs, raw in placed:
        out += bytes(ofs - len(out)) + raw
    struct.pack_into("<HBBIQQII", out, 0, 429, 3, 0, 0, len(out), 64, len(sections), crc32c(table))
    struct.pack_into("<I", out, 4, crc32c(bytes(out[:64])))
    return bytes(out)


def section_start(data: bytes, kind: int) -> int:
    for i in range(struct.unpack_from("<I", data, 24)[0]):
        k, _, ofs = struct.unpack_from("<IIQ", data, 64 + 32 * i)
        if k == kind:
            return ofs
    raise KeyError(kind)


def describe(exe: Path, path: Path) -> list[dict]:
    """ockpt-info's JSON in the four modes (the message aside)."""
    outs = []
    for mode in MODES:
        res = subprocess.run([str(exe), *mode, str(path)], capture_output=True, text=True)
        assert "Sanitizer" not in res.stderr and "runtime error" not in res.stderr, res.stderr
        got = json.loads(res.stdout)
        assert res.returncode == (1 if "error" in got else 0), res.stderr
        if "error" in got:
            got["error"].pop("message")
        outs.append(got)
    return outs


def python_output(data: bytes) -> dict:
    try:
        return oc.describe(oc.load(data))
    except oc.CheckpointError as err:
        return {"error": {"code": err.code, "field": err.field, "offset": err.offset}}


# Valid files ----------------------------------------------------------------------------------

SIZES = [0, 1, 2, 3, 5, 17, 63, 64, 65, 0]


def _payload(n: int, seed: int) -> bytes:
    return bytes((seed * 31 + i * 7) % 251 + 1 for i in range(n))


def valid_files() -> dict[str, tuple[bytes, list[int]]]:
    """name -> (file, the offsets 7.3 gives its ranges in range order: tensors, then slots)."""
    files = {}
    lens = SIZES
    tensors = [_payload(n, k) for k, n in enumerate(lens)]
    # 1. the least: only len_data, data in record order
    t = tensors_body(lens)
    files["bare"] = (build([(1, 1, t), (4, 1, data_body(tensors))]), None)
    # 2. every column, a data order that is not record order, Adam with NO_STATE entries
    n = len(lens)
    order = [3, 0, 9, 1, 8, 2, 7, 4, 6, 5]
    index = [2 * k + 1 for k in range(n)]
    model = [NO_MODEL if k % 3 == 0 else 100 - k for k in range(n)]
    names = [b"w%d" % k if k % 2 else b"" for k in range(n)]
    names[5] = "é∂😀".encode()
    dtype = [-128] * n
    rank = [255] * n
    dims: list[int] = []
    dtype[1], rank[1] = 3, 0  # uint8 scalar of 1 byte
    dtype[2], rank[2] = 1, 1  # float16 [1]
    dims += [1]
    dtype[5], rank[5] = 0, 255  # float32, no shape: no product check
    dtype[7], rank[7] = 9, 2  # int8 [8, 8]
    dims += [8, 8]
    rank[9] = 3  # a shape without a dtype
    dims += [0, 4, 2]
    t = tensors_body(
        lens,
        index=index,
        model=model,
        lname=[len(x) for x in names],
        dtype=dtype,
        rank=rank,
        order=order,
        dims=dims,
        names=[x for x in names if x],
    )
    m = [NO_STATE if k % 4 == 1 else lens[k] for k in range(n)]
    v = [NO_STATE if k % 4 == 2 else 3 for k in range(n)]
    ranges = [tensors[k] for k in order]
    ranges += [_payload(m[k], 50 + k) for k in order if m[k] != NO_STATE]
    ranges += [_payload(v[k], 80 + k) for k in order if v[k] != NO_STATE]
    state = struct.pack("<II", 1, 0) + struct.pack("<QIB3xQQ", 0, 4, 0, 7, 0) + b"step"

    def state_body(start: int) -> bytes:
        return state[:8] + struct.pack("<Q", start + 40) + state[16:]

    files["columns-order-adam"] = (
        build(
            [
                (1, 1, t),
                (2, 1, optimizer_body(2, [(b"m", m), (b"v", v)], n)),
                (3, 1, state_body),
                (4, 1, data_body(ranges)),
            ]
        ),
        None,
    )
    # 3. a permutation and a slot whose ranges need no alignment: where the slot's ranges
    # start (found by the scratch-free lookup) shows to the byte
    t = tensors_body([2, 1], order=[1, 0])
    momentum = [1, 0]
    files["order-momentum"] = (
        build(
            [
                (1, 1, t),
                (2, 1, optimizer_body(1, [(b"momentum", momentum)], 2)),
                (4, 1, data_body([b"\5", b"\6\7", b"", b"\10"])),
            ]
        ),
        None,
    )
    # 4. one tensor of 0 bytes: a 0-byte data section
    files["one-empty"] = (build([(1, 1, tensors_body([0])), (4, 1, b"")]), None)
    # 5. no tensors at all: only an optimizer with T = 0 and state
    files["no-tensors"] = (build([(2, 1, optimizer_body(0, [], 0))]), None)
    return files


def expected_offsets(data: bytes) -> list[int]:
    """Every range's offset by 7.3, in the JSON's order (tensors, then slot by slot)."""
    s = section_start(data, 1)
    n, cols = struct.unpack_from("<II", data, s)
    lens = list(struct.unpack_from(f"<{n}Q", data, s + 8))
    pos = 8 + 8 * n
    order = list(range(n))
    for bit, size in ((INDEX, 4), (MODEL, 4), (NAME, 4), (DTYPE, 1), (SHAPE, 1), (ORDER, 4)):
        if cols & bit:
            pos = _align(pos, 8)
            if bit == ORDER:
                order = list(struct.unpack_from(f"<{n}I", data, s + pos))
            pos += size * n
    slots: list[list[int]] = []
    try:
        o = section_start(data, 2)
        K, T = struct.unpack_from("<II", data, o + 4)
        slots = [
            list(struct.unpack_from(f"<{T}Q", data, o + 16 + 16 * K + 8 * T * j)) for j in range(K)
        ]
    except KeyError:
        pass
    sizes = [lens[k] for k in order]
    keys = [("t", k) for k in order]
    for j, entries in enumerate(slots):
        sizes += [entries[k] for k in order if entries[k] != NO_STATE]
        keys += [(j, k) for k in order if entries[k] != NO_STATE]
    at = dict(zip(keys, place(section_start(data, 4), sizes))) if sizes else {}
    out = [at[("t", k)] for k in range(n)]
    for j, entries in enumerate(slots):
        out += [at[(j, k)] for k in range(n) if entries[k] != NO_STATE]
    return out


@pytest.mark.parametrize("name", sorted(valid_files()))
def test_valid_file(ockpt_info, tmp_path, name):
    data, _ = valid_files()[name]
    path = tmp_path / f"{name}.ckpt"
    path.write_bytes(data)
    outs = describe(ockpt_info, path)
    assert all(o == outs[0] for o in outs), outs
    got = outs[0]
    assert "error" not in got, got
    assert got["revision"] == "v3" and got == python_output(data)
    offsets = [t["offset"] for t in got["tensors"]]
    if got["optimizer"]:
        for entries in got["optimizer"]["slots"].values():
            offsets += [e["offset"] for e in entries]
    if got["tensors"]:
        assert offsets == expected_offsets(data)


def test_valid_files_exercise_the_columns(ockpt_info, tmp_path):
    """The rich file has every column, a permutation, named, shaped, scalar and NO_STATE."""
    data, _ = valid_files()["columns-order-adam"]
    s = section_start(data, 1)
    assert struct.unpack_from("<I", data, s + 4)[0] == 63
    ckpt = oc.load(data)
    assert ckpt.layout.data_order is not None and ckpt.tensors[5].name == "é∂😀"


# Invalid files: each rule of 7 ------------------------------------------------------------

L3 = [4, 8, 2]
D3 = [_payload(n, k) for k, n in enumerate(L3)]


def _tfile(t: bytes, data: bytes | None = None) -> bytes:
    return build([(1, 1, t), (4, 1, data_body(D3) if data is None else data)])


def _cases() -> dict[str, tuple[bytes, str, str, Callable[[bytes], int]]]:
    """name -> (file, code, field, offset as a function of the file)."""
    ts = lambda d: section_start(d, 1)  # noqa: E731
    c: dict[str, tuple[bytes, str, str, Callable[[bytes], int]]] = {}
    c["C0"] = (_tfile(b"\1\0\0\0"), "count_exceeds_file", "tensors.num_tensors", ts)
    c["C1-empty"] = (build([(1, 1, bytes(8))]), "empty_section", "tensors.num_tensors", ts)
    c["C1-limit"] = (
        build([(1, 1, struct.pack("<II", (1 << 24) + 1, 0))]),
        "limit_exceeded",
        "tensors.num_tensors",
        ts,
    )
    c["C2"] = (
        _tfile(tensors_body(L3, columns=64)),
        "reserved_nonzero",
        "tensors.columns",
        lambda d: ts(d) + 4,
    )
    c["C3"] = (
        _tfile(tensors_body(L3, index=[0, 1, 5])[:-1]),
        "count_exceeds_file",
        "tensors.num_tensors",
        ts,
    )
    idx = lambda d, k: ts(d) + 32 + 4 * k  # noqa: E731  (the index column after 8 + 24 bytes)
    c["C4-dup"] = (
        _tfile(tensors_body(L3, index=[0, 2, 2])),
        "duplicate_tensor_index",
        "tensors[2].index",
        lambda d: idx(d, 2),
    )
    c["C4-order"] = (
        _tfile(tensors_body(L3, index=[0, 3, 2])),
        "tensor_order",
        "tensors[2].index",
        lambda d: idx(d, 2),
    )
    c["C4-redundant"] = (
        _tfile(tensors_body(L3, index=[0, 1, 2])),
        "redundant_column",
        "tensors.columns",
        lambda d: ts(d) + 4,
    )
    c["C5-redundant"] = (
        _tfile(tensors_body(L3, model=[NO_MODEL] * 3)),
        "redundant_column",
        "tensors.columns",
        lambda d: ts(d) + 4,
    )
    c["C5-dup"] = (
        _tfile(tensors_body(L3, model=[7, NO_MODEL, 7])),
        "duplicate_tensor_index",
        "tensors[2].model_index",
        lambda d: idx(d, 2),
    )
    # the first record that repeats, not the first repeated value (8 repeats only at record 3)
    c["C5-dup-first"] = (
        _tfile(tensors_body([0] * 5, model=[9, 8, 9, 8, 1]), data_body([b""] * 5)),
        "duplicate_tensor_index",
        "tensors[2].model_index",
        lambda d: ts(d) + 48 + 8,
    )
    c["C6-redundant"] = (
        _tfile(tensors_body(L3, lname=[0, 0, 0])),
        "redundant_column",
        "tensors.columns",
        lambda d: ts(d) + 4,
    )
    c["C6-limit"] = (
        _tfile(tensors_body(L3, lname=[1, 1025, 0], names=[b"a"])),
        "limit_exceeded",
        "tensors[1].len_name",
        lambda d: idx(d, 1),
    )
    c["C7-redundant"] = (
        _tfile(tensors_body(L3, dtype=[-128] * 3)),
        "redundant_column",
        "tensors.columns",
        lambda d: ts(d) + 4,
    )
    c["C7-bad"] = (
        _tfile(tensors_body(L3, dtype=[-128, 18, -6])),
        "bad_dtype",
        "tensors[1].dtype",
        lambda d: ts(d) + 33,
    )
    c["C8-redundant"] = (
        _tfile(tensors_body(L3, rank=[255] * 3)),
        "redundant_column",
        "tensors.columns",
        lambda d: ts(d) + 4,
    )
    c["C8-limit"] = (
        _tfile(tensors_body(L3, rank=[255, 255, 9], dims=[0] * 9)),
        "limit_exceeded",
        "tensors[2].rank",
        lambda d: ts(d) + 34,
    )
    c["C9-range"] = (
        _tfile(tensors_body(L3, order=[0, 0, 3])),
        "bad_data_order",
        "tensors[2].order",
        lambda d: idx(d, 2),
    )
    c["C9-dup"] = (
        _tfile(tensors_body(L3, order=[1, 2, 1])),
        "bad_data_order",
        "tensors[2].order",
        lambda d: idx(d, 2),
    )
    c["C9-redundant"] = (
        _tfile(tensors_body(L3, order=[0, 1, 2])),
        "redundant_column",
        "tensors.columns",
        lambda d: ts(d) + 4,
    )
    shaped = tensors_body(L3, rank=[1, 255, 0], dims=[4])  # rank at 32..34, dims at 40..43
    c["C10-dims"] = (
        _tfile(shaped[:-1]),
        "count_exceeds_file",
        "tensors.dims",
        lambda d: ts(d) + 40,
    )
    named = tensors_body(L3, lname=[0, 2, 0], names=[b"ab"])  # len_name 32..43, names at 48
    c["C10-names"] = (
        _tfile(named[:-1]),
        "count_exceeds_file",
        "tensors.names",
        lambda d: ts(d) + 48,
    )
    c["C10-gap"] = (_tfile(named + b"\0"), "gap", "tensors", lambda d: ts(d) + 50)
    c["C11"] = (
        _tfile(tensors_body(L3, rank=[1, 255, 0], dims=[4], pad=b"\7")),
        "nonzero_padding",
        "padding",
        lambda d: ts(d) + 35,
    )
    names3 = lambda *ns: tensors_body(L3, lname=[len(x) for x in ns], names=list(ns))  # noqa: E731
    c["C12-utf8"] = (
        _tfile(names3(b"a", b"\xc0\x80", b"b")),
        "bad_utf8",
        "tensors[1].name",
        lambda d: ts(d) + 49,
    )
    c["C12-dup"] = (
        _tfile(names3(b"ab", b"c", b"ab")),
        "duplicate_tensor_name",
        "tensors[2].name",
        lambda d: ts(d) + 51,
    )
    # the first failing record, whichever check: a duplicate before a bad name ...
    c["C12-dup-first"] = (
        _tfile(names3(b"x", b"x", b"\xff")),
        "duplicate_tensor_name",
        "tensors[1].name",
        lambda d: ts(d) + 49,
    )
    # ... and a bad name before a duplicate
    c["C12-utf8-first"] = (
        _tfile(names3(b"\xed\xa0\x80", b"y", b"y")),
        "bad_utf8",
        "tensors[0].name",
        lambda d: ts(d) + 48,
    )
    c["C12-dup-min"] = (
        _tfile(tensors_body([0] * 4, lname=[1] * 4, names=[b"b", b"a", b"b", b"a"]), b""),
        "duplicate_tensor_name",
        "tensors[2].name",
        lambda d: ts(d) + 58,
    )
    c["C13"] = (
        _tfile(tensors_body(L3, dtype=[0, -128, 0], rank=[1, 255, 0], dims=[1])),
        "shape_mismatch",
        "tensors[2].len_data",
        lambda d: ts(d) + 24,
    )
    opt = optimizer_body(2, [(b"m", [1, NO_STATE, 2]), (b"v", [NO_STATE] * 3)], 3)
    full = [*D3, b"\1", b"\2\2"]
    c["O4"] = (
        build([(1, 1, tensors_body(L3)), (2, 1, lambda s: opt(s)[:60]), (4, 1, data_body(full))]),
        "count_exceeds_file",
        "optimizer.num_slots",
        lambda d: section_start(d, 2) + 4,
    )

    def name_moved(start: int) -> bytes:  # slot 0's name one byte after the pool's start
        body = bytearray(opt(start))
        struct.pack_into("<Q", body, 16, struct.unpack_from("<Q", body, 16)[0] + 1)
        return bytes(body)

    c["O7"] = (
        build([(1, 1, tensors_body(L3)), (2, 1, name_moved), (4, 1, data_body(full))]),
        "gap",
        "optimizer.slots[0].ofs_name",
        lambda d: section_start(d, 2) + 16,
    )
    c["P0"] = (
        build([(2, 1, optimizer_body(0, [], 0)), (4, 1, b"\0")]),
        "empty_section",
        "data",
        lambda d: section_start(d, 4),
    )
    c["P1"] = (
        build([(1, 1, tensors_body(L3))]),
        "offset_out_of_bounds",
        "tensors[0].len_data",
        lambda d: ts(d) + 8,
    )
    # all ranges empty: only P1 finds the data section missing
    c["P1-empty"] = (
        build([(1, 1, tensors_body([0, 0]))]),
        "offset_out_of_bounds",
        "tensors[0].len_data",
        lambda d: ts(d) + 8,
    )
    c["P2-tensor"] = (
        _tfile(tensors_body(L3), data_body(D3)[:-1]),
        "offset_out_of_bounds",
        "tensors[2].len_data",
        lambda d: ts(d) + 24,
    )
    c["P2-order"] = (
        _tfile(tensors_body(L3, order=[2, 1, 0]), data_body([D3[2], D3[1]])),
        "offset_out_of_bounds",
        "tensors[0].len_data",
        lambda d: ts(d) + 8,
    )
    c["P2-slot"] = (
        build([(1, 1, tensors_body(L3)), (2, 1, opt), (4, 1, data_body([*D3, b"\1"]))]),
        "offset_out_of_bounds",
        "optimizer.slots[0][2].len_data",
        lambda d: section_start(d, 2) + 48 + 16,
    )
    c["P3"] = (
        _tfile(tensors_body(L3), data_body(D3) + b"\0"),
        "gap",
        "data",
        lambda d: section_start(d, 4) + 18,
    )
    padded = bytearray(data_body(D3))
    padded[6] = 1  # between the 4-byte range (0..4) and the 8-byte one (at 8: a(8) = 8)
    c["P4"] = (
        _tfile(tensors_body(L3), bytes(padded)),
        "nonzero_padding",
        "padding",
        lambda d: section_start(d, 4) + 6,
    )
    # P4 comes after P3 and after every range's P2
    c["P4-after-P3"] = (
        _tfile(tensors_body(L3), bytes(padded) + b"\0"),
        "gap",
        "data",
        lambda d: section_start(d, 4) + 18,
    )
    return c


CASES = _cases()


def test_the_padding_case_is_what_it_says():
    data = _tfile(tensors_body(L3))
    s = section_start(data, 4)
    assert place(s, L3) == [s, s + 8, s + 16]  # a(4) = 4, a(8) = 8, a(2) = 2: 4 bytes of padding
    assert data[s + 4 : s + 8] == bytes(4)


@pytest.mark.parametrize("name", sorted(CASES))
def test_invalid_file(ockpt_info, tmp_path, name):
    data, code, field, offset = CASES[name]
    path = tmp_path / f"{name}.ckpt"
    path.write_bytes(data)
    want = {"error": {"code": code, "field": field, "offset": offset(data)}}
    for mode, got in zip(MODES, describe(ockpt_info, path)):
        assert got == want, (mode, got)


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_library_agrees(name):
    """The Python reader reports the same error on each hand-built file."""
    data, code, field, offset = CASES[name]
    assert python_output(data) == {"error": {"code": code, "field": field, "offset": offset(data)}}


# Mutants the vectors must catch ----------------------------------------------------------------

ROOT = Path(__file__).resolve().parents[2]
C_DIR = ROOT / "spec" / "c"
VECTORS = ROOT / "spec" / "vectors"

#: Edits of spec/c/ockpt_v3.c, each a plausible slip, that every vector and every case above
#: let pass until the vectors listed with it were added: a one-record index column (the identity
#: decided by index[0] alone), the smallest order columns (one record, two records, order[0]),
#: and the bytes at the ends of a data padding run (P4). The Python reader already got all of
#: them right, so without these vectors the two readers could disagree unnoticed.
#: name -> (text of ockpt_v3.c, its mutated text, the vectors that must catch the mutant)
MUTANTS: dict[str, tuple[str, str, tuple[str, ...]]] = {
    # C4 starts its identity test at k = 1, as if index[0] were always 0: a valid one-record
    # index column (index 5, index 2**32-1) is refused as redundant
    "index-identity-ignores-record-0": (
        "int identity = col32(b, l, C_INDEX, 0) == 0;",
        "int identity = 1;",
        ("v3-one-record-index", "v3-one-record-index-max"),
    ),
    # C4 takes a one-record index column for needed whatever it holds: index [0] is accepted
    "index-one-record-never-redundant": (
        "if (identity) return redundant(l);\n  }\n  /* C5 */",
        "if (identity && n > 1) return redundant(l);\n  }\n  /* C5 */",
        ("invalid-v3-c4-one-record-redundant-index",),
    ),
    # C9 takes a one-record order column for needed: order [0] is accepted
    "order-one-record-never-redundant": (
        "if (identity) return redundant(l);\n  }\n  /* C10",
        "if (identity && n > 1) return redundant(l);\n  }\n  /* C10",
        ("invalid-v3-c9-one-record-identity-order",),
    ),
    # C9's range check skips order[0]: order [1] of one record is called redundant, and an
    # out-of-range order[0] reaches the placement (P2) as a record number
    "order-range-check-skips-record-0": (
        "for (k = 0; k < n; k++) {\n      uint32_t v = col32(b, l, C_ORDER, k);",
        "for (k = 1; k < n; k++) {\n      uint32_t v = col32(b, l, C_ORDER, k);",
        ("invalid-v3-c9-one-record-order-out-of-range", "invalid-v3-c9-order-first-out-of-range"),
    ),
    # P4 stops one byte early in each padding run: a dirty last byte (and a dirty 1-byte run)
    # is accepted
    "padding-run-last-byte-unchecked": (
        "for (k = pos; k < start && !padded; k++)",
        "for (k = pos; k + 1 < start && !padded; k++)",
        (
            "invalid-v3-p4-padding-run-last-byte",
            "invalid-v3-p4-padding-run-of-one-byte",
            "invalid-v3-p4-padding-last-byte-before-slot",
        ),
    ),
    # P4 starts one byte late in each padding run
    "padding-run-first-byte-unchecked": (
        "for (k = pos; k < start && !padded; k++)",
        "for (k = pos + 1; k < start && !padded; k++)",
        ("invalid-v3-p4-padding-run-first-byte", "invalid-v3-p4-padding-run-of-one-byte"),
    ),
}
BLIND_SPOT_VECTORS = sorted(
    {
        *(v for _, _, vs in MUTANTS.values() for v in vs),
        "invalid-v3-c9-two-record-identity-order",
        "v3-order-two-records-swapped",
        "invalid-v3-p4-padding-run-middle-byte",
    }
)


def _vector(name: str) -> dict:
    return json.loads((VECTORS / f"{name}.json").read_text())


@pytest.mark.parametrize("name", BLIND_SPOT_VECTORS)
def test_blind_spot_vectors_in_every_mode(ockpt_info, name):
    """The reference reader gives these vectors' expected JSON in all four modes (buffer and
    stream, with and without scratch: the order checks differ between the last two)."""
    want = _vector(name)
    for mode, got in zip(MODES, describe(ockpt_info, VECTORS / f"{name}.ckpt")):
        assert got == want, (mode, got)
    assert python_output((VECTORS / f"{name}.ckpt").read_bytes()) == want


def _build_mutant(tmp_path: Path, old: str, new: str) -> Path:
    """ockpt-info built from a copy of spec/c/ whose ockpt_v3.c has ``old`` replaced by ``new``:
    the Makefile's library sources (those of its fuzz harness, the harness aside) and
    ockpt_info.c, at -O0 without the sanitizers, as the mutants are judged by their output."""
    if shutil.which("gcc") is None or shutil.which("make") is None:
        pytest.skip("gcc and make are needed to build the C reader (.ci/run installs them)")
    source = (C_DIR / "ockpt_v3.c").read_text()
    assert source.count(old) == 1, (
        f"ockpt_v3.c no longer holds {old!r} once: re-anchor this mutant on today's code"
    )
    for src in C_DIR.iterdir():
        if src.suffix in (".c", ".h") or src.name == "Makefile":
            shutil.copy(src, tmp_path / src.name)
    (tmp_path / "ockpt_v3.c").write_text(source.replace(old, new))
    listed = subprocess.run(
        ["make", "-s", "-C", str(tmp_path), "print-fuzz-sources"],
        capture_output=True,
        text=True,
        check=True,
    )
    sources = [s for s in listed.stdout.split() if s != "fuzz_ockpt.c"] + ["ockpt_info.c"]
    done = subprocess.run(
        ["gcc", "-std=c99", "-O0", "-o", "ockpt-info", *sources],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    return tmp_path / "ockpt-info"


@pytest.mark.parametrize("mutant", sorted(MUTANTS))
def test_the_vectors_catch_the_mutant(tmp_path, mutant):
    """Each mutant of MUTANTS builds and gives, on every vector listed with it, another output
    than the vector's expected JSON (the unmutated reader gives exactly that: spec/test_vectors.py
    and the test above)."""
    old, new, vectors = MUTANTS[mutant]
    exe = _build_mutant(tmp_path, old, new)
    for name in vectors:
        res = subprocess.run(
            [str(exe), str(VECTORS / f"{name}.ckpt")], capture_output=True, text=True
        )
        got = json.loads(res.stdout)
        got.get("error", {}).pop("message", None)
        assert got != _vector(name), f"{mutant} passes {name}"


# --- the range_index section (SPEC 7.5): lookups without scratch in O(G) --------------------

#: Counted lookups over the streaming reader: argv FILE. Reads FILE without scratch through a
#: callback that counts the bytes it hands over, and with scratch from a buffer (every offset
#: kept: the reference). For every pass p (0: tensors, 1 + j: slot j) and record k, the
#: scratch-free lookup (ockpt_v3_range) must give the scratch read's offset; prints, per pass,
#: the most bytes one lookup read and the record it was, then "mismatches N" and "index X"
#: (the file's range_index offset as the read left it, 0 without one).
_LOOKUPS = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ockpt.h"
static unsigned char *medium;
static unsigned long long bytes_read;
static int read_at(void *ctx, uint64_t at, void *dst, size_t len) {
  (void)ctx;
  memcpy(dst, medium + at, len);
  bytes_read += len;
  return 0;
}
int main(int argc, char **argv) {
  static ockpt_stream s;
  ockpt_file f, g;
  ockpt_result r;
  FILE *fp = fopen(argv[1], "rb");
  long size;
  uint64_t *scratch;
  size_t count;
  uint32_t p, k, mismatches = 0;
  if (argc != 2 || fp == NULL) return 3;
  fseek(fp, 0, SEEK_END);
  size = ftell(fp);
  fseek(fp, 0, SEEK_SET);
  medium = malloc((size_t)size);
  if (fread(medium, 1, (size_t)size, fp) != (size_t)size) return 3;
  fclose(fp);
  count = ockpt_scratch_count(medium, (size_t)size);
  scratch = malloc(count * sizeof *scratch);
  r = ockpt_read_scratch(medium, (size_t)size, &g, scratch, count);
  if (r.code != OCKPT_OK || g.container.offsets == NULL) return 4;
  ockpt_stream_init(&s, read_at, NULL, (uint64_t)size);
  r = ockpt_read_stream(&s, &f, NULL, 0);
  if (r.code != OCKPT_OK || f.container.offsets != NULL) return 5;
  for (p = 0; p <= f.container.num_slots; p++) {
    unsigned long long most = 0;
    uint32_t worst = 0;
    for (k = 0; k < f.container.num_tensors; k++) {
      uint64_t off = 0, n = 0, want = 0, wn = 0;
      unsigned long long before = bytes_read;
      int got = ockpt_v3_range(&f, p, k, &off, &n);
      int exp = ockpt_v3_range(&g, p, k, &want, &wn);
      if (got != exp || (got == 1 && (off != want || n != wn))) mismatches++;
      if (bytes_read - before > most) {
        most = bytes_read - before;
        worst = k;
      }
    }
    printf("pass %u most %llu record %u\n", p, most, worst);
  }
  printf("mismatches %u\n", mismatches);
  printf("index %llu\n", (unsigned long long)f.container.range_index);
  free(scratch);
  free(medium);
  return 0;
}
"""


def _build_lookups(tmp_path: Path, c_dir: Path = C_DIR) -> Path:
    if shutil.which("gcc") is None:
        pytest.skip("gcc is needed")
    (tmp_path / "lookups.c").write_text(_LOOKUPS)
    lib = ["ockpt.c", "ockpt_v2.c", "ockpt_v3.c", "ockpt_stream.c", "ockpt_crc32.c"]
    exe = tmp_path / "lookups"
    done = subprocess.run(
        ["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-O1",
         "-fsanitize=address,undefined", "-fno-sanitize-recover=all", f"-I{c_dir}", "-o",
         str(exe), str(tmp_path / "lookups.c"), *(str(c_dir / f) for f in lib)],
        capture_output=True, text=True)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return exe


def _hostile(path: Path, n: int, group: int | None, *, reverse: bool = True) -> Path:
    """n named 4-byte tensors, Adam (m full, v without state for every third record), data in
    reverse record order; ``group`` the range_index's group size (0: no section)."""
    import numpy as np

    z = np.zeros(1, np.float32)
    tensors = [oc.Tensor(i, z, name=f"t{i:05d}", dtype="float32", shape=(1,)) for i in range(n)]
    slots = {"m": {i: oc.Buffer(i, z) for i in range(n)},
             "v": {i: oc.Buffer(i, z) for i in range(n) if i % 3}}  # fmt: skip
    ckpt = oc.Checkpoint(tensors, oc.Optimizer("adam", slots), oc.TrainingState(step=1))
    if reverse:
        ckpt.layout.data_order = np.arange(n - 1, -1, -1)
    ckpt.layout.range_index_group = group
    path.write_bytes(oc.to_bytes(ckpt, revision="v3"))
    return path


def _lookups(exe: Path, path: Path) -> dict[str, list[str]]:
    res = subprocess.run([str(exe), str(path)], capture_output=True, text=True, timeout=300)
    assert res.returncode == 0 and "runtime error" not in res.stderr, res.stdout + res.stderr
    out = {}
    for line in res.stdout.splitlines():
        words = line.split()
        cut = 2 if words[0] == "pass" else 1
        out[" ".join(words[:cut])] = words[cut:]
    return out


@pytest.mark.parametrize("reverse", [True, False])
def test_a_lookup_through_the_range_index_walks_at_most_g_ranges(tmp_path, reverse):
    """Counted work: with a range_index of groups of 16, every scratch-free lookup of a tensor
    range or slot entry (3,000 tensors, Adam) reads at most a few cache lines of 64 bytes (the
    section's head, the record's position and its group's start, at most 15 ranges' sizes and
    order values: under 1 KiB through the callback), where the same file without the section
    reads a walk over thousands of ranges for the farthest record (over 20 KB). Every lookup
    gives the offset the read with scratch computed."""
    exe = _build_lookups(tmp_path)
    n = 3000
    indexed = _lookups(exe, _hostile(tmp_path / "indexed.ckpt", n, 16, reverse=reverse))
    plain = _lookups(exe, _hostile(tmp_path / "plain.ckpt", n, 0, reverse=reverse))
    assert indexed["mismatches"] == plain["mismatches"] == ["0"]
    assert int(indexed["index"][0]) > 0 and plain["index"] == ["0"]
    for p in range(3):
        assert int(indexed[f"pass {p}"][1]) <= 1024, indexed
    if reverse:  # without the section the last position in data order walks the whole pass
        assert max(int(plain[f"pass {p}"][1]) for p in range(3)) > 20_000, plain


def _resealed(data: bytearray) -> bytes:
    """Every section's CRC-32C, the section table's and the header's recomputed."""
    count = struct.unpack_from("<I", data, 24)[0]
    for i in range(count):
        ofs, length = struct.unpack_from("<QQ", data, 64 + 32 * i + 8)
        struct.pack_into("<I", data, 64 + 32 * i + 24, crc32c(bytes(data[ofs : ofs + length])))
    struct.pack_into("<I", data, 28, crc32c(bytes(data[64 : 64 + 32 * count])))
    struct.pack_into("<I", data, 4, 0)
    struct.pack_into("<I", data, 4, crc32c(bytes(data[:64])))
    return bytes(data)


def _order_column(data: bytes) -> int:
    """Where the order column of a file with names, dtypes, shapes and order starts."""
    s = section_start(data, 1)
    n = struct.unpack_from("<I", data, s)[0]
    at = s + 8 + 8 * n  # len_data, then len_name (u32), dtype (s8), rank (u8), order (u32)
    for size in (4, 1, 1):
        at = -(-(at + size * n) // 8) * 8
    return at


def test_a_repeated_order_value_is_found_whatever_the_range_index_says(ockpt_info, tmp_path):
    """C9 without scratch takes I7's shortcut (positions that are the inverse of `order` prove it
    a permutation in n steps) only when every comparison holds: with one order value repeated,
    the comparison fails and C9 runs in full, so every mode reports C9's error, the library's;
    with a valid file it reads as with scratch."""
    path = _hostile(tmp_path / "ok.ckpt", 200, 16)
    data = bytearray(path.read_bytes())
    at = _order_column(bytes(data))
    assert struct.unpack_from("<3I", data, at) == (199, 198, 197)
    struct.pack_into("<I", data, at + 4 * 7, 199 - 3)  # record 7 repeats record 3's value
    bad = tmp_path / "repeat.ckpt"
    bad.write_bytes(_resealed(data))
    with pytest.raises(oc.CheckpointError) as caught:
        oc.load(bad.read_bytes()).verify()
    want = {"code": caught.value.code, "field": caught.value.field, "offset": caught.value.offset}
    assert want == {"code": "bad_data_order", "field": "tensors[7].order", "offset": at + 28}
    for mode in ([], ["--no-scratch"], ["--stream", "--no-scratch"]):
        out = json.loads(subprocess.run([str(ockpt_info), *mode, str(bad)], capture_output=True,
                                        text=True).stdout)  # fmt: skip
        out["error"].pop("message")
        assert out["error"] == want, mode
        ok = subprocess.run([str(ockpt_info), *mode, str(path)], capture_output=True, text=True)
        assert ok.returncode == 0 and ok.stdout == subprocess.run(
            [str(ockpt_info), str(path)], capture_output=True, text=True).stdout  # fmt: skip
