"""The schema-3 writer (spec/SPEC.md 7): canonical bytes, round trips, conversions, the CLI.

Every file written here is checked twice, independently of the library's reader: by the
Kaitai-generated parser (generated/python, from spec/onert_checkpoint_v3.ksy), which says what
the file holds and where 7.3 places each range, and by :func:`canonical_problems`, which
applies the canonical-encoding rules of 6.1 and 7 to the bytes (checksums, section order and
flags, every column present only when needed, every pad zero, nothing after the last range).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import crc32c
import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from kaitaistruct import KaitaiStream
from onert_checkpoint_generated.layout import (
    V3_NO_MODEL_INDEX,
    V3_TENSORS_SECTION_INDEX,
    V3_TENSORS_SECTION_MODEL_INDEX,
)
from onert_checkpoint_generated.onert_checkpoint_v3 import OnertCheckpointV3

import onert_checkpoint as oc
from onert_checkpoint import Buffer, Checkpoint, Optimizer, Tensor, TrainingState, convert
from onert_checkpoint.format.container.write import PIECE_BYTES, SMALL_RANGE
from onert_checkpoint.format.layout import Schema1Layout, Schema3Layout
from onert_checkpoint.format.revisions.v3 import write as v3_write
from onert_checkpoint.format.revisions.v3.placement import range_alignment
from tests.strategies import checkpoints, rich_checkpoints, wof_checkpoints

ROOT = Path(__file__).resolve().parents[2]
REAL = ROOT / "tests" / "data" / "real-onert"
MICRO = ROOT / ".." / "shared" / "reference" / "onert-micro" / "real-files"
FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

KIND_KEY = {1: (1, 0), 2: (2, 0), 3: (3, 0), 5: (4, 0), 4: (6, 0)}


def _u(b: bytes, at: int, n: int) -> int:
    return int.from_bytes(b[at : at + n], "little")


def _align(n: int, a: int) -> int:
    return -(-n // a) * a


def canonical_problems(b: bytes) -> list[str]:
    """What in ``b`` breaks the canonical encoding of a schema-3 file (6.1, 6.4, 7), read
    with the Kaitai parser and the bytes alone: [] for a canonical file."""
    bad: list[str] = []
    if b[:3] != b"\xad\x01\x03" or b[3] != 0 or any(b[32:64]):
        bad.append("header magic/version/reserved")
    head = bytearray(b[:64])
    head[4:8] = bytes(4)
    if _u(b, 4, 4) != crc32c.crc32c(bytes(head)):
        bad.append("header_crc")
    if _u(b, 8, 8) != len(b) or _u(b, 16, 8) != 64:
        bad.append("len_file or ofs_section_table")
    k = OnertCheckpointV3(KaitaiStream(__import__("io").BytesIO(b)))
    n = k.header.num_sections
    if _u(b, 28, 4) != crc32c.crc32c(b[64 : 64 + 32 * n]):
        bad.append("section_table_crc")
    pos, keys = 64 + 32 * n, []
    for s in (e.entry for e in k.section_table):
        kind = int(s.kind)
        body = b[s.ofs_body : s.ofs_body + s.len_body]
        if s.ofs_body != _align(pos, 64) or any(b[pos : s.ofs_body]):
            bad.append(f"section {kind} not at align(previous end) after zero padding")
        if s.crc != crc32c.crc32c(body) or s.reserved:
            bad.append(f"section {kind} crc/reserved")
        want = {1: 1, 2: 1, 3: 1, 4: 1, 5: 0}.get(kind)
        if want is not None and s.flags != want:
            bad.append(f"section {kind} REQUIRED flag")
        keys.append(KIND_KEY.get(kind, (5, kind)))
        pos = s.ofs_body + s.len_body
    if keys != sorted(set(keys)):
        bad.append(f"section order {keys}")
    if pos != len(b):
        bad.append("bytes after the last section")
    if k.has_tensors:
        t = k.tensors
        nt = t.num_tensors
        cols = t.columns
        needed = {
            1: t.has_index and list(t.index) != list(range(nt)),
            2: t.has_model_index and any(v != 0xFFFFFFFF for v in t.model_index),
            4: t.has_name and any(t.len_name),
            8: t.has_dtype and any(v != -128 for v in t.dtype),
            16: t.has_shape and any(v != 255 for v in t.rank),
            32: t.has_order and list(t.order) != list(range(nt)),
        }
        for bit, ok in needed.items():
            if cols & bit and not ok:
                bad.append(f"redundant column {bit}")
        if cols >> 6:
            bad.append("reserved column bits")
        for pad in ("pad_index", "pad_model_index", "pad_len_name", "pad_dtype", "pad_rank",
                    "pad_order", "pad_dims", "pad_names"):
            if any(getattr(t, pad, b"") or b""):
                bad.append(f"non-zero {pad}")
        sec = k.section_table[0]
        if t._io.pos() != sec.entry.len_body:
            bad.append("the tensors section does not end where its last column ends")
        if not k.has_data:
            bad.append("tensors without a data section")
    if k.has_data:
        start = k.ofs_data_section
        end = start + k.section_table[-1].entry.len_body
        p = start
        for r in k.ranges:
            if not r.has_state:
                continue
            if any(b[p : r.ofs_data]):
                bad.append("non-zero padding between ranges")
            p = r.ofs_data + r.len_data
        if p != end:
            bad.append("the data section does not end at the last range")
    return bad


def kaitai_content(b: bytes) -> dict[str, object]:
    """What the Kaitai parser says the file holds: per record its size and bytes in record
    order, each slot's entries by record, and the data order of the tensors."""
    k = OnertCheckpointV3(KaitaiStream(__import__("io").BytesIO(b)))
    if not k.has_tensors:
        return {"tensors": [], "slots": [], "order": []}
    nt = k.tensors.num_tensors
    tensors: list[bytes | None] = [None] * nt
    slots: dict[int, dict[int, bytes]] = {}
    order = []
    for r in k.ranges:
        if r.slot < 0:
            tensors[r.record] = bytes(r.body)
            order.append(r.record)
        elif r.has_state:
            slots.setdefault(r.slot, {})[r.record] = bytes(r.body)
    return {"tensors": tensors, "slots": slots, "order": order}


def _record_bytes(ckpt: Checkpoint) -> list[bytes]:
    return [bytes(t.raw) for t in sorted(ckpt.tensors, key=lambda t: t.index)]


def _meta(ckpt: Checkpoint) -> list[tuple]:
    return [
        (t.index, t.name, t.dtype, None if t.shape is None else tuple(t.shape), t.model_index)
        for t in ckpt.tensors
    ]


# --- content -> v3 -> load ----------------------------------------------------------------

@FAST
@given(rich_checkpoints())
def test_content_to_v3_and_back(ckpt: Checkpoint) -> None:
    data = oc.to_bytes(ckpt, revision="v3")
    assert canonical_problems(data) == []
    seen = kaitai_content(data)
    assert seen["tensors"] == _record_bytes(ckpt)
    back = oc.load(data)
    back.verify()
    assert back.revision == "v3"
    assert back.content_equal(ckpt)
    assert _meta(back) == _meta(ckpt)
    assert back.layout.origin == ckpt.layout.origin
    assert [(s.kind, s.data) for s in back.layout.sections] == [(s.kind, bytes(s.data))
                                                         for s in ckpt.layout.sections]
    # load -> to_bytes is the identity, and so is save
    assert oc.to_bytes(back) == data
    assert oc.to_bytes(back, revision="v3") == data


@FAST
@given(rich_checkpoints())
def test_storage_order_is_the_offsets_order(ckpt: Checkpoint) -> None:
    """The tensors' ranges follow the offsets they were read from (ties: data_order, then
    record order; tensors without an offset last): the order column the Kaitai parser sees."""
    data = oc.to_bytes(ckpt, revision="v3")
    records = sorted(ckpt.tensors, key=lambda t: t.index)
    listed = {i: k for k, i in enumerate(ckpt.layout.data_order or [])}
    n = len(records)
    want = sorted(range(n), key=lambda k: (records[k].offset is None, records[k].offset or 0,
                                           listed.get(records[k].index, n + k)))
    assert kaitai_content(data)["order"] == want


def test_zero_byte_ties_keep_the_files_order() -> None:
    """Two 0-byte tensors share an offset: only data_order says which comes first, and the
    file's order column ([1, 0] here) must be written back."""
    e = np.zeros(0, np.uint8)
    ckpt = Checkpoint(tensors=[Tensor(0, e), Tensor(1, e), Tensor(2, np.ones(3, np.uint8))],
                      layout=Schema3Layout("v3", data_order=[1, 0, 2]))
    data = oc.to_bytes(ckpt)
    assert kaitai_content(data)["order"] == [1, 0, 2]
    back = oc.load(data)
    assert [int(i) for i in back.layout.data_order] == [1, 0, 2]
    assert oc.to_bytes(back) == data
    assert oc.to_bytes(convert(back, "v3")) == data  # a conversion keeps the order too
    # the same content without data_order is in record order: no order column
    plain = oc.to_bytes(Checkpoint(tensors=ckpt.tensors, revision="v3"))
    assert plain != data and kaitai_content(plain)["order"] == [0, 1, 2]


def test_columns_only_when_needed() -> None:
    """The smallest file: no column but len_data; each piece of metadata adds its column."""
    base = [Tensor(0, np.ones(4, np.uint8)), Tensor(1, np.ones(2, np.uint8))]
    data = oc.to_bytes(Checkpoint(tensors=base, revision="v3"))
    k = OnertCheckpointV3(KaitaiStream(__import__("io").BytesIO(data)))
    assert k.tensors.columns == 0
    assert k.section_table[0].entry.len_body == 8 + 16
    cases = {
        1: Checkpoint(tensors=[Tensor(0, np.ones(4, np.uint8)), Tensor(5, np.ones(2, np.uint8))]),
        2: Checkpoint(tensors=[Tensor(0, np.ones(4, np.uint8), model_index=7), base[1]]),
        4: Checkpoint(tensors=[Tensor(0, np.ones(4, np.uint8), name="w"), base[1]]),
        8 | 16: Checkpoint(tensors=[Tensor(0, np.ones(4, np.uint8), dtype="uint8", shape=(4,)),
                                    base[1]]),
        8: Checkpoint(tensors=[Tensor(0, np.ones(4, np.uint8), dtype="uint8"), base[1]]),
        32: Checkpoint(tensors=[Tensor(0, np.ones(4, np.uint8), offset=9),
                                Tensor(1, np.ones(2, np.uint8), offset=3)]),
    }
    for bits, ckpt in cases.items():
        data = oc.to_bytes(ckpt, revision="v3")
        k = OnertCheckpointV3(KaitaiStream(__import__("io").BytesIO(data)))
        assert k.tensors.columns == bits, bits
        assert canonical_problems(data) == []
        assert oc.to_bytes(oc.load(data)) == data


def test_placement_by_size() -> None:
    """7.3's a(len): 1, 2, 4, 8, 16, 32, 64 and 64 beyond; offsets relative to the data
    section's start s (a multiple of 64)."""
    sizes = [1, 3, 0, 17, 2, 64, 5, 100, 16, 1]
    ckpt = Checkpoint(tensors=[Tensor(i, np.ones(n, np.uint8)) for i, n in enumerate(sizes)])
    data = oc.to_bytes(ckpt, revision="v3")
    back = oc.load(data)
    s = back.tensors[0].offset
    assert s % 64 == 0
    assert [t.offset - s for t in back.tensors] == [0, 4, 7, 32, 50, 64, 128, 192, 304, 320]
    assert range_alignment(0) == 1 and range_alignment(17) == 32
    assert range_alignment(63) == 64 and range_alignment(10**9) == 64


@pytest.mark.parametrize("order", [["a"], [1.5], 7, [None]])
def test_a_malformed_data_order_is_refused(order: object) -> None:
    ckpt = Checkpoint(tensors=[Tensor(0, np.ones(4, np.uint8))],
                      layout=Schema3Layout("v3", data_order=order))  # type: ignore[arg-type]
    with pytest.raises(oc.NotRepresentableError):
        oc.to_bytes(ckpt, revision="v3")


def test_model_index_none_value_is_refused() -> None:
    ckpt = Checkpoint(tensors=[Tensor(0, np.ones(4, np.uint8), model_index=0xFFFF_FFFF)])
    with pytest.raises(oc.NotRepresentableError):
        oc.to_bytes(ckpt, revision="v3")
    # schema 2 holds it
    assert oc.load(oc.to_bytes(ckpt, revision="v2")).tensors[0].model_index == 0xFFFF_FFFF


def test_index_refusals_name_the_generated_ranges() -> None:
    """The writer's refusals name the ranges of the generated layout: an entry index beyond the
    index column's width (0..2**32-1 for a u4) or repeated, a model index at or beyond
    V3_NO_MODEL_INDEX (the model_index column's "none", its largest value) or repeated."""
    index_bits = np.iinfo(V3_TENSORS_SECTION_INDEX.format).bits
    model_bits = np.iinfo(V3_TENSORS_SECTION_MODEL_INDEX.format).bits
    assert V3_NO_MODEL_INDEX == (1 << model_bits) - 1
    index_words = f"out of 0..2**{index_bits}-1 or used twice"
    model_words = (
        f"out of 0..2**{model_bits}-2 (2**{model_bits}-1 means none in schema 3) or used twice"
    )
    one = np.ones(1, np.uint8)
    for tensors, words in (
        ([Tensor(1 << index_bits, one)], index_words),
        ([Tensor(3, one), Tensor(3, one)], index_words),
        ([Tensor(0, one, model_index=V3_NO_MODEL_INDEX)], model_words),
        ([Tensor(0, one, model_index=5), Tensor(1, one, model_index=5)], model_words),
    ):
        with pytest.raises(oc.NotRepresentableError) as info:
            oc.to_bytes(Checkpoint(tensors=tensors), revision="v3")
        assert words in str(info.value), str(info.value)


def test_save_streams_the_same_bytes(tmp_path: Path) -> None:
    """save (CRC computed while writing, header patched after) writes what to_bytes returns;
    ranges past the gathering threshold and a flush of the gathering piece included."""
    big = SMALL_RANGE + 5
    many = PIECE_BYTES // 1000 + 3
    tensors = [Tensor(i, np.full(1000, i % 251, np.uint8)) for i in range(many)]
    tensors.append(Tensor(many, np.arange(big, dtype=np.uint8) if big < 256 else
                          np.resize(np.arange(256, dtype=np.uint8), big)))
    opt = Optimizer("adam", {"m": {0: Buffer(0, np.ones(1000, np.uint8))}, "v": {}})
    ckpt = Checkpoint(tensors=tensors, optimizer=opt, state=TrainingState(step=3))
    path = tmp_path / "x.ckpt"
    oc.save(ckpt, path, revision="v3")
    data = path.read_bytes()
    assert data == oc.to_bytes(ckpt, revision="v3")
    assert canonical_problems(data) == []
    oc.load(data).verify()


# --- conversions ----------------------------------------------------------------------------

def _slots_in_weight_order(ckpt: Checkpoint) -> Checkpoint:
    """``ckpt`` with every slot block stored in its weight block's order (as onert and
    onert-micro store them): the schema-1 files schema 3 can give back byte for byte."""
    if ckpt.optimizer is not None:
        rank = {t.index: t.offset for t in ckpt.tensors}
        for entries in ckpt.optimizer.slots.values():
            for i, b in entries.items():
                b.offset = rank[i]
    return ckpt


@FAST
@given(st.one_of(checkpoints(), wof_checkpoints()).map(_slots_in_weight_order))
def test_v1_and_wof_to_v3_and_back_byte_exact(ckpt: Checkpoint) -> None:
    original = oc.to_bytes(ckpt)
    loaded = oc.load(original)
    v3 = oc.to_bytes(convert(loaded, "v3"))
    assert canonical_problems(v3) == []
    back = oc.load(v3)
    assert back.revision == "v3" and back.content_equal(loaded)
    down = convert(back, loaded.revision, dialect=loaded.dialect)
    assert oc.to_bytes(down) == original


def _v_block_reordered() -> Checkpoint:
    """The input hypothesis found (seed 4266857182): an onert-micro file whose v block stores
    entries 1 and 2 in the other order than its weights; through schema 3 it comes back with v
    in the weights' order and then fits both dialects (the reader says None)."""
    def entry(cls: type[Buffer], i: int, n: int, ofs: int) -> Buffer:
        b = cls(i, np.arange(n, dtype=np.uint8))
        b.offset = ofs
        return b

    sizes = {0: 0, 1: 0, 2: 1}
    m = {i: entry(Buffer, i, n, i) for i, n in sizes.items()}
    v = {0: entry(Buffer, 0, 0, 0), 1: entry(Buffer, 1, 0, 2), 2: entry(Buffer, 2, 1, 1)}
    tensors = [entry(Tensor, i, n, i) for i, n in sizes.items()]
    return Checkpoint(tensors, Optimizer("adam", {"m": m, "v": v}),  # type: ignore[arg-type]
                      TrainingState(step=0, epoch=0),
                      layout=Schema1Layout("v1", dialect="onert-micro", num_entries=3))


@FAST
@given(st.one_of(checkpoints(), wof_checkpoints()))
@example(_v_block_reordered())
def test_v1_and_wof_to_v3_and_back_lossless(ckpt: Checkpoint) -> None:
    """Slot blocks in another order than the weights (which schema 3 cannot store: each slot
    follows the tensors' order, 7.3) still come back with every entry, byte and count."""
    loaded = oc.load(oc.to_bytes(ckpt))
    back = oc.load(oc.to_bytes(convert(loaded, "v3")))
    down = oc.load(oc.to_bytes(convert(back, loaded.revision, dialect=loaded.dialect)))
    assert down.content_equal(loaded)
    assert (down.revision, down.layout.num_entries, down.layout.quirks) == (
        loaded.revision, loaded.layout.num_entries, loaded.layout.quirks)
    if _slots_follow_weights(loaded):
        assert down.dialect == loaded.dialect
    else:
        # The slot blocks now follow the weights' order, which may make the file fit both
        # dialects (the reader then says None); the dialect it was written in still holds.
        assert down.dialect in (loaded.dialect, None)


def _slots_follow_weights(ckpt: Checkpoint) -> bool:
    """Whether every slot block stores its entries in the weight block's order."""
    def order(entries: object) -> list[int]:
        present = [b for b in entries if b.offset is not None]  # type: ignore[attr-defined]
        return [b.index for b in sorted(present, key=lambda b: (b.offset, b.index))]

    weights = order(ckpt.tensors)
    slots = ckpt.optimizer.slots.values() if ckpt.optimizer else ()
    return all(order(s.values()) == [i for i in weights if i in set(s)] for s in slots)


@FAST
@given(rich_checkpoints(revision="v2"))
def test_v2_to_v3_to_v2_byte_exact_in_v3_order(ckpt: Checkpoint) -> None:
    """A schema-2 file whose data are in schema 3's order (tensors, then each slot in the same
    order: what the v2 writer does with content built in memory) converts back exactly."""
    for t in ckpt.tensors:
        t.offset = None
    if ckpt.layout.data_order is not None:  # only a schema-3 layout carries one
        ckpt.layout.data_order = None
    v2 = oc.to_bytes(ckpt, revision="v2")
    v3 = oc.to_bytes(convert(oc.load(v2), "v3"))
    assert canonical_problems(v3) == []
    assert oc.to_bytes(convert(oc.load(v3), "v2")) == v2


def _real_files() -> list[Path]:
    files = sorted(REAL.glob("*.ckpt"))
    if MICRO.is_dir():
        files += sorted(MICRO.glob("*.bin"))
    return files


@pytest.mark.parametrize("path", _real_files(), ids=lambda p: p.name)
def test_real_files_downgrade_byte_exact(path: Path) -> None:
    original = path.read_bytes()
    ckpt = oc.load(original)
    v3 = oc.to_bytes(convert(ckpt, "v3"))
    assert canonical_problems(v3) == []
    back = oc.load(v3)
    order = kaitai_content(v3)["order"]
    # the storage order of the original's weights, by offset
    want = [k for k, _ in sorted(enumerate(ckpt.tensors), key=lambda p: (p[1].offset, p[0]))]
    assert order == want
    assert oc.to_bytes(convert(back, ckpt.revision, dialect=ckpt.dialect)) == original
    assert oc.to_bytes(back) == v3


def test_onert_micro_real_files_present_or_skip() -> None:
    if not MICRO.is_dir():
        pytest.skip(f"the onert-micro reference files are not here ({MICRO})")
    files = sorted(MICRO.glob("*.bin"))
    assert files
    # onert-micro stores in reverse operator order: an order column, not the identity
    data = oc.to_bytes(convert(oc.load(files[0].read_bytes()), "v3"))
    order = kaitai_content(data)["order"]
    assert order != sorted(order)


# --- file size --------------------------------------------------------------------------------

def _tiny(n: int, kind: str) -> Checkpoint:
    """``n`` float32 tensors of 16 bytes, as tests/bench/bench.py builds them but without the
    names, dtypes and shapes schema 1 cannot hold: the same content in both revisions."""
    tensors = [Tensor(i, np.full(4, i, np.float32).view(np.uint8)) for i in range(n)]
    opt = Optimizer(kind)
    for slot in opt.slots:
        opt.slots[slot] = {i: Buffer(i, np.zeros(4, np.float32)) for i in range(n)}
    return Checkpoint(tensors, opt, TrainingState(step=100, epoch=1))


@pytest.mark.parametrize("kind", ["sgd", "adam"])
def test_v3_size_of_100k_tiny_tensors_within_the_goal(kind: str) -> None:
    """Schema 3's size goal: 100,000 tensors of 16 bytes as v3 at most 1.25 times v1 (sizes are
    exact, computed by the writers' plans without writing)."""
    from onert_checkpoint.format.revisions.v1 import write as v1_write

    ckpt = _tiny(100_000, kind)
    v1 = v1_write.plan(ckpt, "onert").file_size
    v3 = v3_write.plan(ckpt, data_crc=False).file_size
    per_tensor = {"sgd": 8 + 16, "adam": 8 + 16 + 16 + 32}[kind]
    data = 100_000 * {"sgd": 16, "adam": 48}[kind]
    # the per-block CRCs of the data (a 32-byte table entry, a 16-byte head and 4 bytes per
    # 64 KiB block, padded to 64) come on top of the header, table and state
    blocks = 32 + 16 + 4 * -(-data // 65536) + 63
    # and the range_index section (SPEC 7.5): a table entry, a 16-byte head and, per pass
    # (the tensors, each slot), 8 bytes per group of 64 tensors, padded to 64
    passes = {"sgd": 1, "adam": 3}[kind]
    index = 32 + 16 + 8 * passes * -(-100_000 // 64) + 63
    assert v3 - 100_000 * per_tensor < 512 + blocks + index  # a few hundred bytes
    assert v3 / v1 <= 1.25, (v3, v1)


# --- the command line -----------------------------------------------------------------------

def _cli(*args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "onert_checkpoint", *map(str, args)],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)


def test_cli_convert_to_v3_and_info_json(tmp_path: Path) -> None:
    src = REAL / "fc2-adam-step8.ckpt"
    out, back = tmp_path / "o.ckpt", tmp_path / "back.ckpt"
    r = _cli("convert", src, out, "--to", "v3")
    assert r.returncode == 0, r.stderr
    data = out.read_bytes()
    assert data[2] == 3 and canonical_problems(data) == []
    info = _cli("info", "--json", out)
    assert info.returncode == 0, info.stderr
    desc = json.loads(info.stdout)
    assert desc["revision"] == "v3"
    assert desc["origin"] == {"revision": "v1", "dialect": None, "num_entries": 4,
                              "footerless": False}
    loaded = oc.load(data)
    assert [e["offset"] for e in desc["tensors"]] == [t.offset for t in loaded.tensors]
    assert [e["nbytes"] for e in desc["tensors"]] == [128, 32, 96, 12]
    assert desc["state"] == {"step": 8, "epoch": 0}
    r = _cli("convert", out, back, "--to", "v1")
    assert r.returncode == 0, r.stderr
    assert back.read_bytes() == src.read_bytes()


def test_cli_new_revision_v3(tmp_path: Path) -> None:
    out = tmp_path / "new.ckpt"
    r = _cli("new", "--model", REAL / "fc2.circle", "--revision", "v3", out)
    assert r.returncode == 0, r.stderr
    ckpt = oc.load(out)
    assert ckpt.revision == "v3"
    assert [(t.name, t.shape) for t in ckpt.tensors] == [
        ("w0", (8, 4)), ("b0", (8,)), ("w1", (3, 8)), ("b1", (3,))]
    assert canonical_problems(out.read_bytes()) == []
    assert ckpt.layout.origin is not None and ckpt.layout.origin["dialect"] == "onert"


def test_cli_edit_to_v3_and_state_keys_on_v3(tmp_path: Path) -> None:
    """edit --to v3 converts while editing; a schema-3 file takes state keys schema 1 cannot
    hold, and stays schema 3 with its data order (an onert-micro file's reverse order)."""
    src = REAL / "fc2-adam-step8.ckpt"
    v3, edited = tmp_path / "v3.ckpt", tmp_path / "edited.ckpt"
    r = _cli("edit", src, v3, "--to", "v3", "--step", "9")
    assert r.returncode == 0, r.stderr
    r = _cli("edit", v3, edited, "--set", "learning_rate=0.5", "--set", "note=hello")
    assert r.returncode == 0, r.stderr
    ckpt = oc.load(edited)
    assert ckpt.revision == "v3"
    assert dict(ckpt.state) == {"step": 9, "epoch": 0, "learning_rate": 0.5, "note": "hello"}
    assert canonical_problems(edited.read_bytes()) == []
    if MICRO.is_dir():
        micro = sorted(MICRO.glob("*.bin"))[0]
        mv3, medited = tmp_path / "m.ckpt", tmp_path / "m2.ckpt"
        assert _cli("convert", micro, mv3, "--to", "v3").returncode == 0
        assert _cli("edit", mv3, medited, "--step", "3").returncode == 0
        assert kaitai_content(medited.read_bytes())["order"] == kaitai_content(
            mv3.read_bytes())["order"]


@pytest.mark.parametrize("name", ["fc2-adam-step8", "fc3-sgd-step12", "fc3sq-adam-step12"])
def test_binding_a_v3_file_names_what_the_v1_file_names(name: str) -> None:
    """An onert file upgraded to schema 3 without its model binds like the original: the
    origin section says its entries are onert's (TOOLKIT 2)."""
    path = REAL / f"{name}.ckpt"
    model = REAL / f"{name.split('-')[0]}.circle"
    v3 = oc.to_bytes(convert(oc.load(path), "v3"))
    want = oc.load(path, model=model)
    got = oc.load(v3, model=model)
    assert [(t.name, t.dtype, t.shape) for t in got.tensors] == [
        (t.name, t.dtype, t.shape) for t in want.tensors]


def test_binding_a_v3_file_by_its_model_indices() -> None:
    """Records that carry a model index bind to that tensor, whatever their entry index and
    however many of the model's trainable tensors the file holds (two of fc2's four here)."""
    by_model = {5: 3, 1: 32}  # circle tensor -> float32 count (b1, w0)
    tensors = [Tensor(k, np.zeros(count, np.float32).view(np.uint8), model_index=t)
               for k, (t, count) in enumerate(by_model.items())]
    data = oc.to_bytes(Checkpoint(tensors=tensors), revision="v3")
    got = oc.load(data, model=REAL / "fc2.circle")
    assert [(t.name, t.shape) for t in got.tensors] == [("b1", (3,)), ("w0", (8, 4))]


def test_binding_an_onert_micro_v3_file() -> None:
    """onert-micro's entries are circle tensor indices; the v3 file's origin says so."""
    if not MICRO.is_dir():
        pytest.skip(f"the onert-micro reference files are not here ({MICRO})")
    path, model = MICRO / "ckpt_adam.bin", MICRO / "fc2.circle"
    want = oc.load(path, model=model)
    got = oc.load(oc.to_bytes(convert(oc.load(path), "v3")), model=model)
    assert [t.name for t in got.tensors] == [t.name for t in want.tensors]
    assert all(t.name for t in got.tensors)
