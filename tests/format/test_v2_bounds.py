"""Every bound of spec/SPEC.md section 6.5 at its edge: the last value allowed and the first one
refused (an off-by-one in any comparison fails a test).

Each length or offset comparison of the schema-2 reading rules gets a file that sits exactly on
the bound and one that is one step past it (one byte, one count, or one alignment step where the
rule before it only lets aligned values through). The file on the bound must not be refused by
that rule; the file past it must be refused with the rule's error code (and, where the spec
fixes them, its field and offset). The hypothesis properties draw such files only by chance;
these tests make an off-by-one in any bound fail every run.

The reference C reader (spec/c) judges every file too and must give the same code, field and
offset. Files are written by the library (``oc.to_bytes``) or laid out by :func:`raw_v2` from the
spec's tables, patched, and resealed with tests/fuzz/structure.py's ``reseal_v2`` (every
CRC-32C recomputed) so that the patch, not a checksum, decides the outcome.
"""

from __future__ import annotations

import json
import os
import struct
import subprocess
from pathlib import Path

import numpy as np
import pytest

import onert_checkpoint as oc
from onert_checkpoint import Buffer, Checkpoint, Optimizer, Tensor, TrainingState
from onert_checkpoint.format.layout import Schema2Layout
from onert_checkpoint.format.model import Section
from tests.fuzz.structure import reseal_v2

# Constants of SPEC 6.2, written out here rather than imported from the reader under test.
HEADER_SIZE = 64
ALIGNMENT = 64
MAX_SECTIONS = 64
MAX_TENSORS = 1 << 24
MAX_RANK = 8
MAX_NAME_LEN = 1024
MAX_SLOTS = 16
MAX_STATE_ENTRIES = 1024
MAX_KEY_LEN = 255
MAX_VALUE_LEN = 1 << 20
NO_STATE = (1 << 64) - 1
REQUIRED = 1
TENSORS, OPTIMIZER, STATE, DATA, ORIGIN = 1, 2, 3, 4, 5
RECORD = 72  # tensor record, SPEC 8.1


def align(n: int) -> int:
    return -(-n // ALIGNMENT) * ALIGNMENT


# Reading the outcome ----------------------------------------------------------------------------

#: The reference C reader (spec/c, built by tests/conftest.py's ``ockpt_info`` with ASan and
#: UBSan) and a scratch folder; None where it cannot be built. Every file these tests judge is
#: judged by it too, so its bounds get the same edges.
_C_READER: dict[str, Path] = {}


@pytest.fixture(autouse=True, scope="module")
def _c_reader(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    try:
        _C_READER["exe"] = request.getfixturevalue("ockpt_info")
        _C_READER["dir"] = tmp_path_factory.mktemp("bounds")
    except pytest.skip.Exception:
        _C_READER.clear()
    yield
    _C_READER.clear()


def c_outcome(data: bytes) -> tuple[str, str, int] | str | None:
    """The C reader's verdict on ``data`` like :func:`outcome`, or "absent" without it."""
    if "exe" not in _C_READER:
        return "absent"
    path = _C_READER["dir"] / "f.ckpt"
    path.write_bytes(data)
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=1:abort_on_error=0",
               UBSAN_OPTIONS="halt_on_error=1")
    done = subprocess.run([str(_C_READER["exe"]), str(path)], capture_output=True, text=True,
                          env=env, timeout=60)
    assert "Sanitizer" not in done.stderr and "runtime error" not in done.stderr, done.stderr
    got = json.loads(done.stdout)
    if "error" not in got:
        assert done.returncode == 0, done.stderr
        return None
    assert done.returncode == 1, done.stderr
    return got["error"]["code"], got["error"]["field"], got["error"]["offset"]


def outcome(data: bytes) -> tuple[str, str, int] | None:
    """None when ``load`` accepts the file, else the error's (code, field, offset).

    Every tensor and slot entry is read too (by writing the checkpoint back): a reader may
    check the data section when its bytes are first handed out rather than in ``load``."""
    try:
        oc.to_bytes(oc.load(data))
    except oc.CheckpointError as err:
        return err.code, err.field, err.offset
    return None


def refused(data: bytes, code: str, field: str | None = None, offset: int | None = None) -> None:
    """Refused with ``code`` (and ``field``, ``offset`` when given), by the library and by the
    C reader alike (same code, field and offset)."""
    got = outcome(data)
    assert got is not None, f"accepted; expected {code}"
    assert got[0] == code, got
    if field is not None:
        assert got[1] == field, got
    if offset is not None:
        assert got[2] == offset, got
    c = c_outcome(data)
    assert c in ("absent", got), f"the C reader says {c}, the library {got}"


def not_refused_by(data: bytes, code: str, field: str | None = None) -> None:
    """The file on the bound: valid, or refused by some later rule, never by this one."""
    for got in (outcome(data), c_outcome(data)):
        if got == "absent":
            continue
        assert got is None or got[0] != code or (field is not None and got[1] != field), got


def valid(data: bytes) -> None:
    assert outcome(data) is None, outcome(data)
    assert oc.to_bytes(oc.load(data)) == data
    assert c_outcome(data) in ("absent", None), c_outcome(data)


# Finding and patching fields --------------------------------------------------------------------


def entries(data: bytes) -> list[tuple[int, int, int, int]]:
    """(kind, flags, ofs_body, len_body) of each section-table entry (SPEC 6.4.2)."""
    n = struct.unpack_from("<I", data, 24)[0]
    return [struct.unpack_from("<IIQQ", data, HEADER_SIZE + 32 * i)[:4] for i in range(n)]


def where(data: bytes, kind: int) -> tuple[int, int, int]:
    """(table entry number, s, L) of the section of ``kind``."""
    for i, (k, _flags, ofs, length) in enumerate(entries(data)):
        if k == kind:
            return i, ofs, length
    raise AssertionError(f"no section of kind {kind}")


def put(data: bytes, at: int, fmt: str, value: int, *, seal: bool = True) -> bytes:
    buf = bytearray(data)
    struct.pack_into(fmt, buf, at, value)
    return reseal_v2(bytes(buf)) if seal else bytes(buf)


def get(data: bytes, at: int, fmt: str) -> int:
    return struct.unpack_from(fmt, data, at)[0]


def set_len_body(data: bytes, kind: int, length: int) -> bytes:
    """The section of ``kind`` with ``len_body = length``, all else kept valid: the last
    section's file grows or shrinks with it (rules H4, T5); an earlier section's dropped bytes
    become zero padding (rule T4e)."""
    i, s, old = where(data, kind)
    last = i == len(entries(data)) - 1
    if last:
        data = with_size(data, s + length)
    elif length < old:
        data = data[: s + length] + bytes(old - length) + data[s + old :]
    return put(data, HEADER_SIZE + 32 * i + 16, "<Q", length)


def with_size(data: bytes, size: int) -> bytes:
    """``data`` cut or zero-extended to ``size`` bytes, ``len_file`` following (rule H4)."""
    data = data[:size] + bytes(max(0, size - len(data)))
    return put(data, 8, "<Q", size)


def raw_v2(sections: list[tuple[int, int, bytes]], *, tail: bytes = b"") -> bytes:
    """A schema-2 file laid out as SPEC 6.4 says, from (kind, flags, body) triples: header,
    table, each body at ``align(end of the previous)`` after zero padding, then ``tail``."""
    table_end = HEADER_SIZE + 32 * len(sections)
    pos, placed = table_end, []
    for _kind, _flags, body in sections:
        start = align(pos)
        placed.append(start)
        pos = start + len(body)
    out = bytearray(pos + len(tail))
    struct.pack_into("<HBB", out, 0, 429, 2, 0)
    struct.pack_into("<QQI", out, 8, len(out), HEADER_SIZE, len(sections))
    for i, ((kind, flags, body), start) in enumerate(zip(sections, placed)):
        struct.pack_into("<IIQQ", out, HEADER_SIZE + 32 * i, kind, flags, start, len(body))
        out[start : start + len(body)] = body
    out[pos:] = tail
    return reseal_v2(bytes(out))


def record(index: int, *, len_data: int = 0, ofs_data: int = 0, flags: int = 0,
           dtype: int = 0, rank: int = 0, len_name: int = 0, ofs_name: int = 0,
           dims: tuple[int, ...] = ()) -> bytes:
    """One 72-byte tensor record (SPEC 8.1)."""
    return struct.pack("<IIHbBIQQQ8I", index, 0, flags, dtype, rank, len_name, ofs_name,
                       ofs_data, len_data, *dims, *([0] * (8 - len(dims))))


# Files written by the library -------------------------------------------------------------------


def one_tensor(nbytes: int = 5, **tensor) -> bytes:
    """One raw tensor (no dtype: rule R11 stays out of the way) and its data section."""
    return oc.to_bytes(Checkpoint(tensors=[Tensor(index=0, data=np.arange(nbytes, dtype=np.uint8)
                                                  + 1, **tensor)], revision="v2"))


def two_tensors(first: int = 5, second: int = 3) -> bytes:
    return oc.to_bytes(Checkpoint(revision="v2", tensors=[
        Tensor(index=0, data=np.full(first, 7, np.uint8), name="a"),
        Tensor(index=1, data=np.full(second, 9, np.uint8), name="bb"),
    ]))


# Header (H1, H4, H5) ----------------------------------------------------------------------------


def test_h1_header_size() -> None:
    empty = oc.to_bytes(Checkpoint(revision="v2"))
    assert len(empty) == HEADER_SIZE
    valid(empty)  # S == 64: the smallest file
    refused(empty[:63], "truncated_header", "header", 0)


def test_h4_len_file() -> None:
    data = one_tensor()
    valid(data)
    size = len(data)
    refused(put(data, 8, "<Q", size + 1), "truncated_file", "len_file", 8)
    refused(put(data, 8, "<Q", size - 1), "trailing_bytes", "file", size - 1)


def test_h5_section_table_offset() -> None:
    data = one_tensor()
    assert get(data, 16, "<Q") == HEADER_SIZE
    refused(put(data, 16, "<Q", HEADER_SIZE - 1), "overlap", "ofs_section_table", 16)
    refused(put(data, 16, "<Q", HEADER_SIZE + 1), "gap", "ofs_section_table", 16)


# Section table (T1, T2, T4c-e, T5) --------------------------------------------------------------


def test_t1_max_sections() -> None:
    extra = [Section(kind=100 + k, data=b"x") for k in range(MAX_SECTIONS - 2)]
    data = oc.to_bytes(Checkpoint(tensors=[Tensor(index=0, data=np.ones(2, np.uint8))],
                                  layout=Schema2Layout("v2", sections=extra)))
    assert len(entries(data)) == MAX_SECTIONS
    valid(data)
    refused(put(data, 24, "<I", MAX_SECTIONS + 1), "limit_exceeded", "num_sections", 24)


def test_t2_table_fits_the_file() -> None:
    # Two empty optional sections of unknown kinds right after the table: 64 + 32 * 2 == S.
    data = raw_v2([(100, 0, b""), (101, 0, b"")])
    assert len(data) == HEADER_SIZE + 32 * 2
    not_refused_by(data, "count_exceeds_file", "num_sections")
    refused(put(data, 24, "<I", 3), "count_exceeds_file", "num_sections", 24)
    # the same comparison seen from the file's side: one byte short of the table
    short = reseal_v2(with_size(data, len(data) - 1))
    refused(short, "count_exceeds_file", "num_sections", 24)


def test_t4c_section_ends_at_the_end_of_the_file() -> None:
    data = one_tensor(nbytes=5)
    i, s, length = where(data, DATA)
    assert s + length == len(data)  # the bound: len_body == S - ofs_body
    valid(data)
    e = HEADER_SIZE + 32 * i
    refused(put(data, e + 16, "<Q", length + 1), "offset_out_of_bounds",
            f"sections[{i}].len_body", e + 16)


def test_t4c_section_starts_at_the_end_of_the_file() -> None:
    # An empty optional section at ofs_body == S is inside the file; one alignment step on
    # (rule T4b lets only multiples of 64 through) it is not.
    data = raw_v2([(100, 0, b"y" * ALIGNMENT), (101, 0, b"")])
    assert entries(data)[1][2] == len(data)
    not_refused_by(data, "offset_out_of_bounds")
    refused(put(data, HEADER_SIZE + 32 + 8, "<Q", len(data) + ALIGNMENT),
            "offset_out_of_bounds", "sections[1].ofs_body", HEADER_SIZE + 32 + 8)


def test_t4b_section_alignment() -> None:
    data = one_tensor()
    i, s, _ = where(data, DATA)
    e = HEADER_SIZE + 32 * i
    assert s % ALIGNMENT == 0
    for wrong in (s - 1, s + 1):
        refused(put(data, e + 8, "<Q", wrong), "misaligned", f"sections[{i}].ofs_body", e + 8)


def test_t4d_section_placement() -> None:
    data = two_tensors()
    i, s, _length = where(data, DATA)
    _, t_s, t_len = where(data, TENSORS)
    pos = t_s + t_len
    assert s == align(pos) and pos % ALIGNMENT  # the bound: ofs_body == align(pos)
    valid(data)
    e = HEADER_SIZE + 32 * i
    refused(put(data, e + 8, "<Q", s - ALIGNMENT), "overlap", f"sections[{i}].ofs_body", e + 8)
    # one alignment step further, the file 64 zero bytes longer so that the section still fits
    later = data[:s] + bytes(ALIGNMENT) + data[s:]
    later = put(put(later, 8, "<Q", len(later), seal=False), e + 8, "<Q", s + ALIGNMENT)
    refused(later, "gap", f"sections[{i}].ofs_body", e + 8)


def test_t4d_section_right_at_pos() -> None:
    # pos itself aligned: ofs_body == pos is allowed, one step before is an overlap.
    data = raw_v2([(100, 0, b"z" * ALIGNMENT), (101, 0, b"w")])
    first_end = entries(data)[0][2] + ALIGNMENT
    assert entries(data)[1][2] == first_end
    valid(data)
    refused(put(data, HEADER_SIZE + 32 + 8, "<Q", first_end - ALIGNMENT), "overlap",
            "sections[1].ofs_body", HEADER_SIZE + 32 + 8)


def test_t4e_padding_before_a_section() -> None:
    data = two_tensors()
    _, t_s, t_len = where(data, TENSORS)
    _, s, _ = where(data, DATA)
    first, last = t_s + t_len, s - 1
    assert first < last
    for at in (first, last):
        refused(put(data, at, "<B", 1), "nonzero_padding", "padding", at)
    # the byte after the padding is the section's own: its CRC, not the padding rule, guards it
    buf = bytearray(data)
    buf[s] ^= 0xFF
    refused(bytes(buf), "section_checksum")


def test_t5_file_ends_where_the_last_section_ends() -> None:
    data = one_tensor()
    valid(data)
    refused(with_size(data, len(data) + 1), "trailing_bytes", "file", len(data))
    empty = oc.to_bytes(Checkpoint(revision="v2"))
    refused(with_size(empty, HEADER_SIZE + 1), "trailing_bytes", "file", HEADER_SIZE)


# Tensors section (R0, R1, R4, R7, R8, R11) ------------------------------------------------------


def test_r0_tensors_section_head() -> None:
    head = struct.pack("<II", 0, 0)
    at_bound = raw_v2([(TENSORS, REQUIRED, head)])  # L == 8: the head fits, n == 0 is next
    s = entries(at_bound)[0][2]
    refused(at_bound, "empty_section", "tensors.num_tensors", s)
    refused(raw_v2([(TENSORS, REQUIRED, head[:7])]), "count_exceeds_file",
            "tensors.num_tensors", s)


def test_r1_tensor_count() -> None:
    data = one_tensor()
    _, s, length = where(data, TENSORS)
    assert length == 8 + RECORD  # no names: the bound 8 + 72n == L
    valid(data)
    refused(put(data, s, "<I", 2), "count_exceeds_file", "tensors.num_tensors", s)
    refused(set_len_body(data, TENSORS, length - 1), "count_exceeds_file",
            "tensors.num_tensors", s)
    refused(put(data, s, "<I", 0), "empty_section", "tensors.num_tensors", s)
    # MAX_TENSORS itself passes the limit (and then does not fit); one more is over the limit
    refused(put(data, s, "<I", MAX_TENSORS), "count_exceeds_file", "tensors.num_tensors", s)
    refused(put(data, s, "<I", MAX_TENSORS + 1), "limit_exceeded", "tensors.num_tensors", s)


def test_r4_rank() -> None:
    shape = (1,) * MAX_RANK
    data = oc.to_bytes(Checkpoint(tensors=[Tensor(index=0, data=np.ones(shape, np.float32),
                                                  dtype="float32", shape=shape)], revision="v2"))
    valid(data)
    _, s, _ = where(data, TENSORS)
    r = s + 8
    assert get(data, r + 11, "<B") == MAX_RANK
    refused(put(data, r + 11, "<B", MAX_RANK + 1), "limit_exceeded", "tensors[0].rank", r + 11)


@pytest.mark.parametrize("rank", [0, 3, MAX_RANK - 1])
def test_r5_dims_beyond_the_rank(rank: int) -> None:
    shape = (2,) * rank
    data = oc.to_bytes(Checkpoint(tensors=[Tensor(index=0, data=np.ones(shape, np.uint8),
                                                  dtype="uint8", shape=shape)], revision="v2"))
    valid(data)
    _, s, _ = where(data, TENSORS)
    r = s + 8
    if rank:  # the last dim of the shape is the shape's own (R11 then sees the wrong length)
        refused(put(data, r + 40 + 4 * (rank - 1), "<I", 3), "shape_mismatch")
    refused(put(data, r + 40 + 4 * rank, "<I", 1), "reserved_nonzero",
            f"tensors[0].dims[{rank}]", r + 40 + 4 * rank)


@pytest.mark.parametrize("name_len", [1, MAX_NAME_LEN])
def test_r7_name_length(name_len: int) -> None:
    data = one_tensor(name="n" * name_len)
    valid(data)
    _, s, _ = where(data, TENSORS)
    r = s + 8
    assert get(data, r + 12, "<I") == name_len
    past = 0 if name_len == 1 else MAX_NAME_LEN + 1
    refused(put(data, r + 12, "<I", past), "limit_exceeded", "tensors[0].len_name", r + 12)


def test_r8_name_pool() -> None:
    data = two_tensors()
    _, s, length = where(data, TENSORS)
    r0, r1 = s + 8, s + 8 + RECORD
    p = s + 8 + 2 * RECORD
    assert get(data, r0 + 16, "<Q") == p and get(data, r1 + 16, "<Q") == p + 1
    assert p + 1 + 2 == s + length  # the last name ends where the section ends
    valid(data)
    # the first name: one byte before or after its place
    refused(put(data, r0 + 16, "<Q", p - 1), "overlap", "tensors[0].ofs_name", r0 + 16)
    refused(put(data, r0 + 16, "<Q", p + 1), "gap", "tensors[0].ofs_name", r0 + 16)
    # the last name one byte longer than the section holds
    refused(put(data, r1 + 12, "<I", 3), "offset_out_of_bounds", "tensors[1].ofs_name", r1 + 16)
    # one byte shorter: the pool ends before the section does
    refused(put(data, r1 + 12, "<I", 1), "gap", offset=s + length - 1)


def test_r11_shape_and_length() -> None:
    data = oc.to_bytes(Checkpoint(tensors=[Tensor(index=0, data=np.ones((2, 3), np.int16),
                                                  dtype="int16", shape=(2, 3))], revision="v2"))
    valid(data)
    _, s, _ = where(data, TENSORS)
    r = s + 8
    assert get(data, r + 32, "<Q") == 12
    for wrong in (11, 13):
        refused(put(data, r + 32, "<Q", wrong), "shape_mismatch", "tensors[0].len_data", r + 32)


# Optimizer section (O1, O2, O4, O6, O7) ---------------------------------------------------------


def test_o1_optimizer_section_head() -> None:
    data = oc.to_bytes(Checkpoint(revision="v2", optimizer=Optimizer("sgd")))
    _, s, length = where(data, OPTIMIZER)
    assert length == 16  # K = 0, T = 0: the head is the whole section
    valid(data)
    refused(set_len_body(data, OPTIMIZER, 15), "count_exceeds_file", "optimizer.num_slots")
    assert s % ALIGNMENT == 0


def test_o2_slot_count() -> None:
    names = [f"s{k}" for k in range(MAX_SLOTS)]
    data = oc.to_bytes(
        Checkpoint(optimizer=Optimizer("optimizer_9", {n: {} for n in names}), revision="v2")
    )
    valid(data)
    _, s, _ = where(data, OPTIMIZER)
    refused(put(data, s + 4, "<I", MAX_SLOTS + 1), "limit_exceeded", "optimizer.num_slots",
            s + 4)


def _one_slot(name: str = "m") -> bytes:
    ckpt = Checkpoint(revision="v2", tensors=[Tensor(index=0, data=np.ones(4, np.uint8))],
                      optimizer=Optimizer("optimizer_9", {name: {}}))
    ckpt.optimizer.slots[name][0] = Buffer(0, np.full(2, 3, np.uint8))
    return oc.to_bytes(ckpt)


def test_o4_slot_tables_fit_the_section() -> None:
    data = _one_slot("m")
    _, s, length = where(data, OPTIMIZER)
    fixed = 16 + 16 * 1 + 16 * 1 * 1
    assert length == fixed + 1  # one name byte
    valid(data)
    # L == 16 + 16K + 16KT: the tables fit (the name no longer does: a later rule)
    not_refused_by(set_len_body(data, OPTIMIZER, fixed), "count_exceeds_file")
    refused(set_len_body(data, OPTIMIZER, fixed - 1), "count_exceeds_file",
            "optimizer.num_slots", s + 4)
    refused(put(data, s + 4, "<I", 2), "count_exceeds_file", "optimizer.num_slots", s + 4)


@pytest.mark.parametrize("name_len", [1, MAX_NAME_LEN])
def test_o6_slot_name_length(name_len: int) -> None:
    data = _one_slot("q" * name_len)
    valid(data)
    _, s, _ = where(data, OPTIMIZER)
    d = s + 16
    past = 0 if name_len == 1 else MAX_NAME_LEN + 1
    refused(put(data, d + 8, "<I", past), "limit_exceeded", "optimizer.slots[0].len_name", d + 8)


def test_o7_slot_name_pool() -> None:
    data = _one_slot("mm")
    _, s, length = where(data, OPTIMIZER)
    d = s + 16
    p = s + 16 + 16 + 16
    assert get(data, d, "<Q") == p and p + 2 == s + length
    refused(put(data, d, "<Q", p - 1), "overlap", "optimizer.slots[0].ofs_name", d)
    refused(put(data, d, "<Q", p + 1), "gap", "optimizer.slots[0].ofs_name", d)
    refused(put(data, d + 8, "<I", 3), "offset_out_of_bounds", "optimizer.slots[0].ofs_name", d)
    refused(put(data, d + 8, "<I", 1), "gap", offset=p + 1)


# State section (V1, V2, V5, V7, V8) -------------------------------------------------------------


def test_v1_state_section_head() -> None:
    head = struct.pack("<II", 0, 0)
    at_bound = raw_v2([(STATE, REQUIRED, head)])
    s = entries(at_bound)[0][2]
    refused(at_bound, "empty_section", "state.num_entries", s)
    refused(raw_v2([(STATE, REQUIRED, head[:7])]), "count_exceeds_file", "state.num_entries", s)


def test_v2_state_entry_count() -> None:
    many = TrainingState({f"k{i}": i for i in range(MAX_STATE_ENTRIES)})
    data = oc.to_bytes(Checkpoint(revision="v2", state=many))
    valid(data)
    _, s, _ = where(data, STATE)
    refused(put(data, s, "<I", MAX_STATE_ENTRIES + 1), "limit_exceeded", "state.num_entries", s)
    # 8 + 32n == L with n = 1 and an empty pool is impossible (a key has a byte), so the count
    # side: one entry more than the section holds
    small = oc.to_bytes(Checkpoint(revision="v2", state=TrainingState(step=1)))
    _, s, length = where(small, STATE)
    assert length == 8 + 32 + len("step")
    not_refused_by(set_len_body(small, STATE, 8 + 32), "count_exceeds_file")
    refused(set_len_body(small, STATE, 8 + 32 - 1), "count_exceeds_file", "state.num_entries", s)
    refused(put(small, s, "<I", 2), "count_exceeds_file", "state.num_entries", s)
    refused(put(small, s, "<I", 0), "empty_section", "state.num_entries", s)


@pytest.mark.parametrize("key_len", [1, MAX_KEY_LEN])
def test_v5_key_length(key_len: int) -> None:
    data = oc.to_bytes(Checkpoint(revision="v2", state=TrainingState({"k" * key_len: 1})))
    valid(data)
    _, s, _ = where(data, STATE)
    r = s + 8
    past = 0 if key_len == 1 else MAX_KEY_LEN + 1
    refused(put(data, r + 8, "<I", past), "limit_exceeded", "state[0].len_key", r + 8)


def test_v7_value_length() -> None:
    data = oc.to_bytes(Checkpoint(revision="v2", state=TrainingState(blob=b"\0" * MAX_VALUE_LEN)))
    valid(data)
    _, s, _ = where(data, STATE)
    r = s + 8
    assert get(data, r + 24, "<Q") == MAX_VALUE_LEN
    refused(put(data, r + 24, "<Q", MAX_VALUE_LEN + 1), "limit_exceeded", "state[0].len_value",
            r + 24)


def test_v8_state_pool() -> None:
    data = oc.to_bytes(Checkpoint(revision="v2", state=TrainingState(log_dir="ab")))
    _, s, length = where(data, STATE)
    r = s + 8
    p = s + 8 + 32
    key_len = len("log_dir")
    assert get(data, r, "<Q") == p and get(data, r + 16, "<Q") == p + key_len
    assert p + key_len + 2 == s + length
    valid(data)
    refused(put(data, r, "<Q", p - 1), "overlap", "state[0].ofs_key", r)
    refused(put(data, r, "<Q", p + 1), "gap", "state[0].ofs_key", r)
    refused(put(data, r + 16, "<Q", p + key_len - 1), "overlap", "state[0].value", r + 16)
    refused(put(data, r + 16, "<Q", p + key_len + 1), "gap", "state[0].value", r + 16)
    refused(put(data, r + 24, "<Q", 3), "offset_out_of_bounds", "state[0].value", r + 16)
    refused(put(data, r + 24, "<Q", 1), "gap", offset=s + length - 1)


# Origin section (G1) ----------------------------------------------------------------------------


@pytest.mark.parametrize("length", [23, 24, 25])
def test_g1_origin_length(length: int) -> None:
    body = struct.pack("<IIIIQ", 1, 1, 0, 0, 3)
    padded = (body + b"\0")[:length]
    data = raw_v2([(ORIGIN, 0, padded)])
    s = entries(data)[0][2]
    if length == 24:
        valid(data)
    elif length < 24:
        refused(data, "count_exceeds_file", "origin", s)
    else:
        refused(data, "gap", "origin", s + 24)


# Data ranges (D1, D2, D3, D4) -------------------------------------------------------------------


def test_d1_range_inside_the_data_section() -> None:
    data = two_tensors(first=5, second=3)
    _, s, length = where(data, DATA)
    _, t_s, _ = where(data, TENSORS)
    r1 = t_s + 8 + RECORD
    second = get(data, r1 + 24, "<Q")
    assert second == s + ALIGNMENT and second + 3 == s + length  # the last range ends at s + L
    valid(data)
    refused(put(data, r1 + 32, "<Q", 4), "offset_out_of_bounds", "tensors[1].ofs_data", r1 + 24)
    refused(put(data, r1 + 24, "<Q", s - ALIGNMENT), "offset_out_of_bounds",
            "tensors[1].ofs_data", r1 + 24)
    refused(put(data, r1 + 24, "<Q", s + 2 * ALIGNMENT), "offset_out_of_bounds",
            "tensors[1].ofs_data", r1 + 24)


def test_d1_empty_range_at_the_end_of_the_section() -> None:
    # A 0-byte range may start at s + L (inside, by D1's bounds) when s + L is aligned.
    data = two_tensors(first=ALIGNMENT, second=0)
    _, s, length = where(data, DATA)
    _, t_s, _ = where(data, TENSORS)
    r1 = t_s + 8 + RECORD
    assert get(data, r1 + 24, "<Q") == s + length == s + ALIGNMENT
    valid(data)
    refused(put(data, r1 + 24, "<Q", s + length + ALIGNMENT), "offset_out_of_bounds",
            "tensors[1].ofs_data", r1 + 24)


def test_d2_range_placement() -> None:
    data = oc.to_bytes(Checkpoint(revision="v2", tensors=[
        Tensor(index=k, data=np.full(n, k + 1, np.uint8)) for k, n in enumerate((70, 3, 5))]))
    _, s, _ = where(data, DATA)
    _, t_s, _ = where(data, TENSORS)
    r1 = t_s + 8 + RECORD
    assert get(data, r1 + 24, "<Q") == s + 2 * ALIGNMENT  # align(s + 70)
    valid(data)
    refused(put(data, r1 + 24, "<Q", s + ALIGNMENT), "overlap", "tensors[1].ofs_data", r1 + 24)
    refused(put(data, r1 + 24, "<Q", s + 3 * ALIGNMENT), "gap", "tensors[1].ofs_data", r1 + 24)


def test_d3_padding_between_ranges() -> None:
    data = two_tensors(first=5, second=3)
    _, s, _ = where(data, DATA)
    for at in (s + 5, s + ALIGNMENT - 1):
        refused(put(data, at, "<B", 1), "nonzero_padding", "padding", at)


def test_d4_data_section_ends_with_the_last_range() -> None:
    data = one_tensor(nbytes=5)
    i, s, length = where(data, DATA)
    assert length == 5
    grown = put(with_size(data, len(data) + 1), HEADER_SIZE + 32 * i + 16, "<Q", length + 1)
    refused(grown, "gap", "data", s + length)
    # the same file with a 6-byte tensor is valid: only the extra byte made the gap
    valid(one_tensor(nbytes=6))
