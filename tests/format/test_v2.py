"""Schema 2 (spec/SPEC.md, section 6): round trips, integrity, one test per validation rule, and the
agreement of the generated Kaitai parser, the generated Construct structs (two generators from one
.ksy) and ``load``."""

from __future__ import annotations

import os
import struct
import tempfile

import crc32c
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kaitaistruct import KaitaiStream
from onert_checkpoint_generated import layout
from onert_checkpoint_generated.layout import V2TensorFlags, V2TensorRecord, V2TensorsHead
from onert_checkpoint_generated.onert_checkpoint_v2 import OnertCheckpointV2

import onert_checkpoint as oc
from onert_checkpoint import Buffer, Checkpoint, Optimizer, Tensor, TrainingState
from onert_checkpoint.format.container import constants
from onert_checkpoint.format.layout import Schema2Layout
from onert_checkpoint.format.model import Section
from onert_checkpoint.format.source import BufferReader
from tests.spec import whole_files

FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Strategies ---------------------------------------------------------------------------------

NUMERIC = ["float32", "float16", "int32", "uint8", "int64", "int8", "float64", "int16", "bool"]
names = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=12)
int64 = st.integers(-(1 << 63), (1 << 63) - 1)
floats = st.floats(allow_nan=False)
counters = st.integers(0, (1 << 63) - 1)


@st.composite
def tensor_data(draw) -> tuple[np.ndarray, str | None, tuple[int, ...] | None]:
    if draw(st.booleans()):
        raw = draw(st.binary(max_size=70))
        return np.frombuffer(raw, dtype=np.uint8).copy(), None, None
    dtype = np.dtype(draw(st.sampled_from(NUMERIC)))
    shape = tuple(draw(st.lists(st.integers(0, 4), max_size=3)))
    count = int(np.prod(shape, dtype=np.int64))
    raw = draw(st.binary(min_size=count * dtype.itemsize, max_size=count * dtype.itemsize))
    arr = np.frombuffer(raw, dtype=np.uint8).copy().view(dtype).reshape(shape)
    return arr, dtype.name, (shape if draw(st.booleans()) else None)


@st.composite
def v2_checkpoints(draw, max_tensors: int = 5) -> Checkpoint:
    indices = draw(st.lists(st.integers(0, 40), unique=True, max_size=max_tensors))
    tensor_names = draw(st.lists(names, unique=True, min_size=len(indices), max_size=len(indices)))
    model_indices = draw(
        st.lists(st.integers(0, 99), unique=True, min_size=len(indices), max_size=len(indices))
    )
    tensors = []
    for k, i in enumerate(indices):
        data, dtype, shape = draw(tensor_data())
        tensors.append(
            Tensor(
                index=i,
                data=data,
                dtype=dtype,
                shape=shape,
                name=tensor_names[k] if draw(st.booleans()) else None,
                model_index=model_indices[k] if draw(st.booleans()) else None,
            )
        )
    kind = draw(st.sampled_from([None, "sgd", "sgd_momentum", "adam", "optimizer_7"]))
    optimizer = None
    if kind is not None:
        slots = None
        if kind == "optimizer_7":
            slots = {n: {} for n in draw(st.lists(names, unique=True, max_size=3))}
        optimizer = Optimizer(kind, slots or {})
        for entries in optimizer.slots.values():
            for t in tensors:
                if draw(st.booleans()):
                    like = draw(st.booleans())
                    data = (
                        np.zeros_like(t.data)
                        if like
                        else np.frombuffer(draw(st.binary(max_size=20)), np.uint8)
                    )
                    entries[t.index] = Buffer(index=t.index, data=data)
    state = TrainingState()
    for key, typ in draw(
        st.lists(st.sampled_from(sorted(constants.WELL_KNOWN_KEYS.items())), unique=True)
    ):
        state[key] = draw({"int": counters, "float": floats, "string": st.text(max_size=10)}[typ])
    for key in draw(
        st.lists(names.filter(lambda k: k not in constants.WELL_KNOWN_KEYS), unique=True,
                 max_size=4)
    ):
        state[key] = draw(st.one_of(int64, floats, st.text(max_size=8), st.binary(max_size=8)))
    sections = [
        Section(kind=100 + k, data=draw(st.binary(max_size=40)))
        for k in range(draw(st.integers(0, 2)))
    ]
    origin = draw(
        st.one_of(
            st.none(),
            st.fixed_dictionaries(
                {
                    "revision": st.sampled_from(["v1", "wof"]),
                    "dialect": st.sampled_from([None, "onert", "onert-micro"]),
                    "num_entries": st.integers(0, 1 << 40),
                    "footerless": st.booleans(),
                }
            ),
        )
    )
    return Checkpoint(
        tensors=tensors,
        optimizer=optimizer,
        state=state,
        layout=Schema2Layout("v2", origin=origin, sections=sections),
    )


def small_file() -> bytes:
    """A small file that has every kind of section, for the exhaustive integrity tests."""
    ckpt = Checkpoint(
        tensors=[
            Tensor(
                index=0, data=np.arange(3, dtype=np.float32), name="w", dtype="float32", shape=(3,)
            ),
            Tensor(index=2, data=np.arange(5, dtype=np.uint8), model_index=4),
        ],
        optimizer=Optimizer("adam"),
        state=TrainingState(step=3, learning_rate=0.5, log_dir="r", x=b"\x01"),
        layout=Schema2Layout("v2", origin={"revision": "v1", "dialect": "onert-micro",
                                           "num_entries": 3, "footerless": False},
                             sections=[Section(kind=77, data=b"opt")]),
    )
    ckpt.optimizer.slots["m"][0] = Buffer(0, np.ones(3, np.float32))
    return oc.to_bytes(ckpt)


# Helpers --------------------------------------------------------------------------------------


def table(data: bytes) -> np.ndarray:
    n = min(struct.unpack_from("<I", data, 24)[0], (len(data) - 64) // 32)
    return np.frombuffer(data, dtype=layout.SectionEntry.DTYPE, count=n, offset=64).copy()


def section(data: bytes, kind: int) -> tuple[int, int]:
    t = table(data)
    k = int(np.flatnonzero(t["kind"] == kind)[0])
    return int(t["ofs_body"][k]), int(t["len_body"][k])


def refresh(data: bytes | bytearray) -> bytes:
    """Recompute every checksum, so that a patched file fails on its patch, not on a CRC."""
    buf = bytearray(data)
    t = table(bytes(buf))
    for k in range(len(t)):
        start, length = int(t["ofs_body"][k]), int(t["len_body"][k])
        if start + length <= len(buf):
            t["crc"][k] = crc32c.crc32c(bytes(buf[start : start + length]))
    buf[64 : 64 + t.nbytes] = t.tobytes()
    buf[28:32] = struct.pack("<I", crc32c.crc32c(bytes(buf[64 : 64 + t.nbytes])))
    buf[4:8] = struct.pack("<I", constants.header_crc(bytes(buf)))
    return bytes(buf)


def patch(data: bytes, at: int, fmt: str, value) -> bytes:
    buf = bytearray(data)
    struct.pack_into(fmt, buf, at, value)
    return refresh(buf)


def code_of(data: bytes) -> str:
    """The error of ``data``: from ``load``, or from the data checks it leaves to the first
    access of tensor data (``verify`` runs them now)."""
    with pytest.raises(oc.CheckpointError) as info:
        oc.load(data).verify()
    return info.value.code


def assert_same(a: Checkpoint, b: Checkpoint) -> None:
    assert a.content_equal(b)
    for x, y in zip(a.tensors, b.tensors):
        assert (x.name, x.dtype, x.model_index) == (y.name, y.dtype, y.model_index)
        assert (x.shape is None) == (y.shape is None) and (
            x.shape is None or tuple(x.shape) == tuple(y.shape)
        )
    assert a.layout.origin == b.layout.origin
    assert [(s.kind, bytes(s.data)) for s in a.layout.sections] == [
        (s.kind, bytes(s.data)) for s in b.layout.sections
    ]


# Round trips ---------------------------------------------------------------------------------


@FAST
@given(v2_checkpoints())
def test_round_trip(ckpt: Checkpoint) -> None:
    data = oc.to_bytes(ckpt)
    back = oc.load(data)
    assert back.revision == "v2" and back.file_size == len(data)
    assert_same(ckpt, back)
    assert oc.to_bytes(back) == data
    for t in back.tensors:  # zero-copy, aligned, typed when the record says how
        assert t.offset % constants.ALIGNMENT == 0 and not t.data.flags.writeable
        if t.dtype is not None and t.shape is not None:
            assert t.data.dtype == np.dtype(t.dtype) and t.data.shape == tuple(t.shape)


def test_empty_checkpoint() -> None:
    data = oc.to_bytes(Checkpoint(revision="v2"))
    back = oc.load(data)
    assert back.revision == "v2" and len(back) == 0 and back.optimizer is None and not back.state
    assert data[:3] == b"\xad\x01\x02"


def test_zero_length_tensors_share_an_offset() -> None:
    ckpt = Checkpoint(
        tensors=[Tensor(index=i, data=np.zeros(0, np.uint8)) for i in range(3)], revision="v2"
    )
    back = oc.load(oc.to_bytes(ckpt))
    assert [t.nbytes for t in back.tensors] == [0, 0, 0]


def test_default_revision_is_v3_and_loaded_v1_saves_as_v1() -> None:
    """A checkpoint built by hand is the recommended revision, schema 3; a loaded one keeps
    its file's revision."""
    assert Checkpoint().revision == "v3"
    assert oc.load(oc.to_bytes(Checkpoint())).revision == "v3"
    path = "tests/data/real-onert/fc2-adam-step8.ckpt"
    with open(path, "rb") as f:
        raw = f.read()
    assert oc.to_bytes(oc.load(path)) == raw


def test_crc32c_check_value() -> None:
    assert constants.crc(b"123456789") == 0xE3069283


def test_describe() -> None:
    d = oc.describe(oc.load(small_file()))
    assert d["revision"] == "v2"
    assert d["tensors"][0]["name"] == "w" and d["tensors"][0]["shape"] == [3]
    assert d["optimizer"]["kind"] == "adam" and len(d["optimizer"]["slots"]["m"]) == 1
    assert d["state"] == {"step": 3, "learning_rate": 0.5, "log_dir": "r", "x": {"bytes": "01"}}


# Integrity -----------------------------------------------------------------------------------


def test_every_bit_flip_is_detected() -> None:
    data = small_file()
    assert len(data) < 1200
    buf = bytearray(data)
    for bit in range(8 * len(data)):
        buf[bit // 8] ^= 1 << (bit % 8)
        with pytest.raises(oc.CheckpointError):
            oc.load(bytes(buf)).verify()
        buf[bit // 8] ^= 1 << (bit % 8)


def test_every_truncation_is_detected() -> None:
    data = small_file()
    for n in range(len(data)):
        with pytest.raises(oc.CheckpointError):
            oc.load(data[:n])


def test_unknown_optional_section_is_kept() -> None:
    back = oc.load(small_file())
    assert [(s.kind, s.data) for s in back.layout.sections] == [(77, b"opt")]


def test_unknown_required_section() -> None:
    data = small_file()
    k = int(np.flatnonzero(table(data)["kind"] == 77)[0])
    assert code_of(patch(data, 64 + 32 * k + 4, "<I", 1)) == "unknown_required_section"


# One test per rule ---------------------------------------------------------------------------


def test_truncated_header() -> None:
    assert code_of(small_file()[:63]) == "truncated_header"


def test_header_checksum() -> None:
    buf = bytearray(small_file())
    buf[40] = 1
    assert code_of(bytes(buf)) == "header_checksum"


def test_reserved_nonzero() -> None:
    assert code_of(patch(small_file(), 40, "<B", 1)) == "reserved_nonzero"


def test_reserved_tensor_flag_bits() -> None:
    """R2: a tensor record's flag bits other than V2TensorFlags' (the generated layout) are
    reserved: each one set is refused at tensors[0].flags; the one defined bit record 0 lacks
    (HAS_MODEL_INDEX, its model_index field 0) reads as model index 0."""
    data = small_file()
    at = section(data, 1)[0] + V2TensorsHead.SIZE + V2TensorRecord.flags.offset
    (flags,) = struct.unpack_from("<H", data, at)
    defined = sum(int(f) for f in V2TensorFlags)
    for bit in range(8 * V2TensorRecord.flags.size):
        if flags >> bit & 1:
            continue
        patched = patch(data, at, "<H", flags | 1 << bit)
        if 1 << bit & defined:
            assert oc.load(patched).tensors[0].model_index == 0
            continue
        with pytest.raises(oc.CheckpointError) as info:
            oc.load(patched)
        error = info.value
        assert (error.code, error.field, error.offset) == (
            "reserved_nonzero",
            "tensors[0].flags",
            at,
        )


def test_truncated_file_and_trailing_bytes() -> None:
    data = small_file()
    assert code_of(patch(data, 8, "<Q", len(data) + 1)) == "truncated_file"
    assert code_of(refresh(data + b"\0")) == "trailing_bytes"


def test_section_table_checksum() -> None:
    buf = bytearray(small_file())
    buf[64 + 16] ^= 1
    assert code_of(bytes(buf)) == "section_table_checksum"


def test_section_checksum() -> None:
    data = small_file()
    start, _ = section(data, 4)
    buf = bytearray(data)
    buf[start] ^= 1
    assert code_of(bytes(buf)) == "section_checksum"


def test_limit_exceeded() -> None:
    assert code_of(patch(small_file(), 24, "<I", constants.MAX_SECTIONS + 1)) == "limit_exceeded"


def test_count_exceeds_file() -> None:
    data = small_file()
    start, _ = section(data, 1)
    assert code_of(patch(data, start, "<I", 1000)) == "count_exceeds_file"


def test_misaligned() -> None:
    data = small_file()
    assert code_of(patch(data, 64 + 8, "<Q", table(data)["ofs_body"][0] + 8)) == "misaligned"


def test_overlap_and_gap() -> None:
    data = small_file()
    t = table(data)
    assert code_of(patch(data, 64 + 32 + 8, "<Q", int(t["ofs_body"][0]))) == "overlap"
    assert code_of(patch(data, 64 + 32 + 8, "<Q", int(t["ofs_body"][1]) + 64)) == "gap"
    start, _ = section(data, 1)
    assert (
        code_of(
            patch(
                data,
                start + 8 + 72 + 24,
                "<Q",
                int(struct.unpack_from("<Q", data, start + 8 + 24)[0]),
            )
        )
        == "overlap"
    )


def test_nonzero_padding() -> None:
    data = small_file()
    start, length = section(data, 1)
    assert (start + length) % 64
    assert code_of(patch(data, start + length, "<B", 1)) == "nonzero_padding"


def test_duplicate_section() -> None:
    data = small_file()
    k = int(np.flatnonzero(table(data)["kind"] == 77)[0])
    assert code_of(patch(data, 64 + 32 * k, "<I", 5)) == "duplicate_section"


def test_duplicate_tensor_index() -> None:
    data = small_file()
    start, _ = section(data, 1)
    assert code_of(patch(data, start + 8 + 72, "<I", 0)) == "duplicate_tensor_index"


def _named(**state) -> bytes:
    return oc.to_bytes(
        Checkpoint(
            tensors=[
                Tensor(index=0, data=np.zeros(1, np.uint8), name="a"),
                Tensor(index=1, data=np.zeros(1, np.uint8), name="b"),
            ],
            optimizer=Optimizer("optimizer_9", {"p": {}, "q": {}}),
            state=TrainingState(state or {"k1": 1, "k2": 2}),
            revision="v2",
        )
    )


def test_duplicate_tensor_name() -> None:
    data = _named()
    start, length = section(data, 1)
    assert code_of(patch(data, start + length - 1, "<B", ord("a"))) == "duplicate_tensor_name"


def test_bad_utf8() -> None:
    data = _named()
    start, length = section(data, 1)
    assert code_of(patch(data, start + length - 1, "<B", 0xFF)) == "bad_utf8"


def test_duplicate_slot_name() -> None:
    data = _named()
    start, length = section(data, 2)
    assert code_of(patch(data, start + length - 1, "<B", ord("p"))) == "duplicate_slot_name"


def test_duplicate_state_key() -> None:
    data = _named()
    start, length = section(data, 3)
    assert code_of(patch(data, start + length - 1, "<B", ord("1"))) == "duplicate_state_key"


def test_bad_state_type() -> None:
    data = _named(step=1)
    start, _ = section(data, 3)
    assert code_of(patch(data, start + 8 + 12, "<B", 1)) == "bad_state_type"  # step as float
    assert code_of(patch(data, start + 8 + 12, "<B", 9)) == "bad_state_type"


def test_bad_dtype_and_shape_mismatch() -> None:
    data = small_file()
    start, _ = section(data, 1)
    assert code_of(patch(data, start + 8 + 10, "<b", 99)) == "bad_dtype"
    assert code_of(patch(data, start + 8 + 40, "<I", 4)) == "shape_mismatch"


def test_bad_optimizer() -> None:
    data = small_file()
    start, _ = section(data, 2)
    assert code_of(patch(data, start, "<I", 1)) == "bad_optimizer"  # sgd_momentum with m, v


def test_bad_slot_entry() -> None:
    data = small_file()
    start, _ = section(data, 2)
    entry_v1 = start + 16 + 2 * 16 + 16 * 3  # slot v, tensor record 1: NO_STATE
    assert code_of(patch(data, entry_v1 + 8, "<Q", 4)) == "bad_slot_entry"


def test_bad_origin() -> None:
    data = small_file()
    start, _ = section(data, 5)
    assert code_of(patch(data, start, "<I", 7)) == "bad_origin"


def test_offset_out_of_bounds() -> None:
    data = small_file()
    start, _ = section(data, 1)
    assert (
        code_of(patch(data, start + 8 + 24, "<Q", constants.align(len(data)) + 640))
        == "offset_out_of_bounds"
    )


def raw_file(sections: list[tuple[int, int, bytes]]) -> bytes:
    """A schema-2 file of the given (kind, flags, body) sections, laid out and sealed as the
    spec says, in the order given (whatever the order rules say)."""
    n = len(sections)
    pos = 64 + 32 * n
    placed = []
    for kind, flags, body in sections:
        pos = constants.align(pos)
        placed.append((kind, flags, pos, body))
        pos += len(body)
    buf = bytearray(pos)
    for i, (kind, flags, ofs, body) in enumerate(placed):
        struct.pack_into("<IIQQII", buf, 64 + 32 * i, kind, flags, ofs, len(body), 0, 0)
        buf[ofs : ofs + len(body)] = body
    struct.pack_into("<HBB", buf, 0, 429, 2, 0)
    struct.pack_into("<QQI", buf, 8, pos, 64, n)
    return refresh(buf)


ORIGIN_BODY = struct.pack("<IIIIQ", 1, 0, 0, 0, 4)


def test_tensor_order() -> None:
    """Rule R9: records in strictly ascending index order; equal: duplicate, smaller: order."""
    data = small_file()
    start, _ = section(data, 1)
    at = start + 8 + 72  # record 1 (index 2)
    with pytest.raises(oc.CheckpointError) as info:
        oc.load(patch(data, start + 8, "<I", 3))  # record 0 gets index 3 > 2
    assert (info.value.code, info.value.field, info.value.offset) == (
        "tensor_order",
        "tensors[1].index",
        at,
    )
    with pytest.raises(oc.CheckpointError) as info:
        oc.load(patch(data, at, "<I", 0))
    assert (info.value.code, info.value.field) == ("duplicate_tensor_index", "tensors[1].index")


@pytest.mark.parametrize("kind", [1, 2, 3, 4, 5])
def test_bad_section_flags(kind: int) -> None:
    """Rule T4h: the REQUIRED flag of kinds 1..5 is fixed (set for 1..4, clear for 5)."""
    data = small_file()
    k = int(np.flatnonzero(table(data)["kind"] == kind)[0])
    with pytest.raises(oc.CheckpointError) as info:
        oc.load(patch(data, 64 + 32 * k + 4, "<I", 0 if kind != 5 else 1))
    assert (info.value.code, info.value.field, info.value.offset) == (
        "bad_section_flags",
        f"sections[{k}].flags",
        64 + 32 * k + 4,
    )


def test_section_order() -> None:
    """Rule T4i: tensors, optimizer, state, origin, other kinds ascending, data last."""
    data = small_file()
    kinds = table(data)["kind"].tolist()
    assert kinds == [1, 2, 3, 5, 77, 4]
    k = kinds.index(5)
    with pytest.raises(oc.CheckpointError) as info:  # origin -> kind 78 > 77
        oc.load(patch(data, 64 + 32 * k, "<I", 78))
    assert (info.value.code, info.value.field, info.value.offset) == (
        "section_order",
        "sections[4].kind",
        64 + 32 * 4,
    )
    with pytest.raises(oc.CheckpointError) as info:  # state after origin
        oc.load(raw_file([(5, 0, ORIGIN_BODY), (3, 1, struct.pack("<II", 0, 0))]))
    assert (info.value.code, info.value.field, info.value.offset) == (
        "section_order",
        "sections[1].kind",
        96,
    )
    with pytest.raises(oc.CheckpointError) as info:
        oc.load(raw_file([(5, 0, ORIGIN_BODY), (9, 0, b"x"), (6, 0, b"y")]))
    assert (info.value.code, info.value.field) == ("section_order", "sections[2].kind")
    with pytest.raises(oc.CheckpointError) as info:
        oc.load(raw_file([(9, 0, b"x"), (9, 0, b"y")]))
    assert (info.value.code, info.value.field) == ("duplicate_section", "sections[1].kind")
    back = oc.load(raw_file([(5, 0, ORIGIN_BODY), (6, 0, b"y"), (9, 0, b"x")]))
    assert [s.kind for s in back.layout.sections] == [6, 9]


def test_empty_sections() -> None:
    """Rules R1, V2, D0: empty tensors, state and data sections are omitted."""
    empty = struct.pack("<II", 0, 0)
    for sections, want in (
        ([(1, 1, empty)], ("empty_section", "tensors.num_tensors", 128)),
        ([(3, 1, empty)], ("empty_section", "state.num_entries", 128)),
        ([(4, 1, b"")], ("empty_section", "data", 128)),
        # the shape of corpus case v2-check-ranges-valueerror, in section order: no tensor
        # and an empty data section used to raise a bare ValueError from numpy
        ([(5, 0, ORIGIN_BODY), (0, 0, bytes(152)), (4, 1, b"")], ("empty_section", "data", 448)),
    ):
        with pytest.raises(oc.CheckpointError) as info:
            oc.load(raw_file(sections))
        assert (info.value.code, info.value.field, info.value.offset) == want
    assert len(oc.to_bytes(Checkpoint(revision="v2"))) == 64  # no section at all
    assert oc.load(raw_file([])).tensors == []


def test_writer_sorts_kept_sections_and_refuses_two_of_a_kind() -> None:
    ckpt = Checkpoint(layout=Schema2Layout("v2", sections=[Section(kind=9, data=b"x"),
                                                          Section(kind=6, data=b"y")]))
    back = oc.load(oc.to_bytes(ckpt))
    assert [(s.kind, s.data) for s in back.layout.sections] == [(6, b"y"), (9, b"x")]
    with pytest.raises(oc.NotRepresentableError):
        oc.to_bytes(
            Checkpoint(layout=Schema2Layout("v2", sections=[Section(kind=9, data=b"x"),
                                                            Section(kind=9, data=b"")]))
        )


def test_data_order_is_kept_across_tensors_and_slots() -> None:
    """A file whose slot data precede tensor data saves back byte for byte (the writer keeps
    the order of the offsets the data were read from)."""
    data = bytearray(small_file())
    tstart, _ = section(data, 1)
    ostart, _ = section(data, 2)
    t0 = tstart + 8 + 24  # tensors[0].ofs_data (12 bytes)
    m0 = ostart + 16 + 16 * 2  # optimizer.slots[0][0].ofs_data (12 bytes, K = 2)
    a, b = struct.unpack_from("<Q", data, t0)[0], struct.unpack_from("<Q", data, m0)[0]
    struct.pack_into("<Q", data, t0, b)
    struct.pack_into("<Q", data, m0, a)
    dstart, dlen = section(data, 4)
    body = bytearray(data[dstart : dstart + dlen])
    ta, ma = a - dstart, b - dstart
    body[ta : ta + 12], body[ma : ma + 12] = bytes(body[ma : ma + 12]), bytes(body[ta : ta + 12])
    data[dstart : dstart + dlen] = body
    swapped = refresh(data)
    back = oc.load(swapped)
    assert back[0].offset > back.optimizer.slots["m"][0].offset
    assert oc.to_bytes(back) == swapped


def test_empty_range_stays_valid_when_a_tensor_is_added() -> None:
    """A 0-byte range may share an offset only with a later range of the range order."""
    ckpt = Checkpoint(
        tensors=[
            Tensor(index=1, data=np.ones(4, np.uint8)),
            Tensor(index=3, data=np.zeros(0, np.uint8)),
        ],
        revision="v2",
    )
    back = oc.load(oc.to_bytes(ckpt))
    back.tensors.append(Tensor(index=2, data=np.ones(8, np.uint8)))
    back.tensors.append(Tensor(index=0, data=np.ones(0, np.uint8)))
    back.tensors.sort(key=lambda t: t.index)
    again = oc.load(oc.to_bytes(back))
    assert [t.nbytes for t in again.tensors] == [0, 4, 8, 0]


def test_describe_non_finite_floats() -> None:
    """TOOLKIT 1.3: non-finite floats are {"float": "nan" | "inf" | "-inf"}; the JSON is strict."""
    import json

    nan_bits = struct.unpack("<d", struct.pack("<Q", 0xFFF8_0000_0000_0001))[0]
    ckpt = Checkpoint(
        state=TrainingState(
            learning_rate=float("inf"), best_metric=float("-inf"), a=nan_bits, b=-0.0, c=1.5
        ),
        revision="v2",
    )
    data = oc.to_bytes(ckpt)
    back = oc.load(data)
    assert oc.to_bytes(back) == data  # the NaN payload is kept
    state = json.loads(json.dumps(oc.describe(back), allow_nan=False))["state"]
    assert state == {
        "learning_rate": {"float": "inf"},
        "best_metric": {"float": "-inf"},
        "a": {"float": "nan"},
        "b": -0.0,
        "c": 1.5,
    }


# Agreement of the three readers --------------------------------------------------------------


@FAST
@given(v2_checkpoints())
def test_kaitai_construct_and_load_agree(ckpt: Checkpoint) -> None:
    data = oc.to_bytes(ckpt)
    loaded = oc.load(data)
    ks = OnertCheckpointV2(KaitaiStream(BufferReader(memoryview(data))))
    cs = whole_files.read_v2(data)
    assert ks.header.len_file == cs.header.len_file == len(data)
    assert ks.header.num_sections == cs.header.num_sections == len(cs.sections)
    records = []
    for ke, ce in zip(ks.section_table, cs.sections):
        assert (int(ke.entry.kind), ke.entry.ofs_body, ke.entry.len_body, ke.entry.crc) == (
            ce.kind,
            ce.ofs_body,
            ce.len_body,
            ce.crc,
        )
        if ce.kind == 1:
            rec = ce.body.records
            assert [r.index for r in ke.body.records] == rec["index"].tolist()
            assert [r.name if r.has_name else None for r in ke.body.records] == [
                t.name for t in loaded.tensors
            ]
            assert [(r.ofs_data, r.len_data) for r in ke.body.records] == list(
                zip(rec["ofs_data"].tolist(), rec["len_data"].tolist())
            )
            records = rec
        if ce.kind == 2:
            assert int(ke.body.head.kind) == ce.body.head.kind
            assert [s.name for s in ke.body.slots] == list(loaded.optimizer.slots)
            assert [e.has_state for e in ke.body.entries] == (
                ce.body.entries["ofs_data"] != constants.NO_STATE
            ).tolist()
        if ce.kind == 3:
            assert [e.key for e in ke.body.entries] == list(loaded.state)
            assert ce.body.entries["value_type"].tolist() == [
                int(e.value_type) for e in ke.body.entries
            ]
        if ce.kind == 5:
            assert ke.body.num_entries == ce.body.num_entries == loaded.layout.origin["num_entries"]
    assert [(t.index, t.offset, t.nbytes) for t in loaded.tensors] == [
        (int(r["index"]), int(r["ofs_data"]), int(r["len_data"])) for r in records
    ]


def test_data_checks_run_before_any_data_is_handed_out():
    """The data section's CRC is not read by ``load`` (a 1 GiB file opens at the cost of its
    tables) but before the first byte of any entry is handed out; ``verify_data=False`` opts
    out, and a structural fault is found by ``load`` either way."""
    import numpy as np

    import onert_checkpoint as oc

    ckpt = oc.Checkpoint(
        [oc.Tensor(0, np.arange(64, dtype=np.uint8))], oc.Optimizer("sgd"), revision="v2"
    )
    data = bytearray(oc.to_bytes(ckpt))
    body = oc.load(bytes(data)).tensors[0].offset
    data[body] ^= 1  # a flipped bit in the tensor data
    lazy = oc.load(bytes(data))
    assert lazy[0].nbytes == 64  # metadata: no data read
    for access in (lambda: lazy[0].data, lambda: lazy.tensors[0].raw, lazy.verify):
        with pytest.raises(oc.CheckpointError) as err:
            access()
        assert err.value.code == "section_checksum"
    assert oc.load(bytes(data), verify_data=False).tensors[0].raw[0] == 1
    data[3] = 1  # a structural fault is still found
    with pytest.raises(oc.CheckpointError):
        oc.load(bytes(data), verify_data=False)


def test_data_checks_keep_the_spec_order_of_errors():
    """A file with a bad data CRC and a later structural fault: ``load`` reports the CRC
    (rule T4f comes before the tensor rules), as an eager reader does."""
    import numpy as np

    import onert_checkpoint as oc

    ckpt = oc.Checkpoint(
        [oc.Tensor(0, np.arange(64, dtype=np.uint8))], oc.Optimizer("sgd"), revision="v2"
    )
    data = oc.to_bytes(ckpt)
    body = oc.load(data).tensors[0].offset
    start, _ = section(data, 1)
    flawed = bytearray(patch(data, start + 8 + 8, "<H", 0x10))  # R2: a reserved flag bit
    assert code_of(bytes(flawed)) == "reserved_nonzero"
    flawed[body] ^= 1  # and a flipped data bit: the data CRC (T4f) is the first rule broken
    with pytest.raises(oc.CheckpointError) as err:
        oc.load(bytes(flawed))
    assert err.value.code == "section_checksum"


def test_validate_checks_the_data_that_load_leaves_for_later():
    """``onert-ckpt validate`` runs the deferred data checks (real subprocess)."""
    import subprocess
    import sys

    import numpy as np

    ckpt = oc.Checkpoint(
        [oc.Tensor(0, np.arange(64, dtype=np.uint8))], oc.Optimizer("sgd"), revision="v2"
    )
    data = bytearray(oc.to_bytes(ckpt))
    data[oc.load(bytes(data))[0].offset] ^= 1
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "flipped.ckpt")
        with open(path, "wb") as f:
            f.write(data)
        done = subprocess.run(
            [sys.executable, "-m", "onert_checkpoint", "validate", path],
            capture_output=True,
            text=True,
        )
    assert done.returncode == 1
    assert "section_checksum" in done.stdout
