"""Schema 3's range index (the optional range_index section, spec/SPEC.md 7.5).

What is proved here:

* the lookup of 7.5 (at most G - 1 steps from a group's recorded start) gives the offset the
  placement walk gives, for every tensor range and slot range of random files: with and without
  an ``order`` column, no optimizer, SGD or Adam, slot entries absent (NO_STATE), ranges of
  every alignment, every group size;
* the writer writes the section by default only past 64 tensors (groups of 64), at the group
  size a checkpoint names (``range_index_group``), or not at all (0); a loaded file keeps its
  own choice and is written back byte for byte; a group size the format does not allow is
  refused before anything is written;
* every rule I1 to I7 refuses a damaged section with its code, field and offset, after P3 and
  before P4;
* conversions treat the section as derived data: nothing is reported lost, it is rebuilt;
* compatibility: the readers as committed before the section (the Python package and the C
  reader, from git history) read the new files, skipping it;
* size: 100,000 tensors of 16 bytes with Adam state as schema 3 with both optional sections
  stay within 1.25 times schema 1 (exact sizes from the writers' plans).
"""

from __future__ import annotations

import itertools
import struct
import subprocess
import sys
from pathlib import Path

import crc32c
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import onert_checkpoint as oc
from onert_checkpoint.format.layout import Schema3Layout
from onert_checkpoint.format.loss import lost_content
from onert_checkpoint.format.model import Section
from onert_checkpoint.format.revisions.v1 import write as v1_write
from onert_checkpoint.format.revisions.v3 import range_index
from onert_checkpoint.format.revisions.v3 import write as v3_write
from onert_checkpoint.format.revisions.v3.range_index import RangeIndex, lookup
from tests.old_readers import assert_old_c_reader_agrees, old_c_reader, read_with_old_library

ROOT = Path(__file__).resolve().parents[2]
VECTORS = ROOT / "spec" / "vectors"
KIND = range_index.KIND
#: The last commit before the library read and wrote the range_index section: its readers are
#: "today's readers" that must still read the new files.
BEFORE = "aa500ec"
NO_STATE = (1 << 64) - 1


def _sections(data: bytes) -> dict[int, tuple[int, int, int, int]]:
    """kind -> (table position, flags, ofs_body, len_body)."""
    out = {}
    for i in range(struct.unpack_from("<I", data, 24)[0]):
        kind, flags, ofs, length = struct.unpack_from("<IIQQ", data, 64 + 32 * i)
        out[kind] = (i, flags, ofs, length)
    return out


def _index_of(data: bytes) -> tuple[RangeIndex, int] | None:
    """The file's range_index section read by hand (SPEC 7.5), with its offset."""
    found = _sections(data).get(KIND)
    if found is None:
        return None
    _, _, s, length = found
    shift, _, groups = struct.unpack_from("<IIQ", data, s)
    sections = _sections(data)
    n, columns = struct.unpack_from("<II", data, sections[1][2])
    passes = 1 + (struct.unpack_from("<I", data, sections[2][2] + 4)[0] if 2 in sections else 0)
    starts = np.frombuffer(data, "<u8", passes * groups, s + 16)
    has_order = columns & 32  # the tensors section's ORDER column bit
    positions = np.frombuffer(data, "<u4", n, s + 16 + 8 * passes * groups) if has_order else None
    assert length == 16 + 8 * passes * groups + (4 * n if has_order else 0)
    return RangeIndex(shift, starts, positions), s


def _checkpoint(
    sizes: list[int],
    optimizer: str | None,
    absent: set[int],
    data_order: list[int] | None,
) -> oc.Checkpoint:
    tensors = [oc.Tensor(i, np.full(n, i % 251, np.uint8)) for i, n in enumerate(sizes)]
    opt = None
    if optimizer is not None:
        opt = oc.Optimizer(optimizer, {})
        for j, slot in enumerate(opt.slots):
            opt.slots[slot] = {
                t.index: oc.Buffer(t.index, np.full(t.nbytes, j + 1, np.uint8))
                for t in tensors
                if t.index not in absent
            }
    return oc.Checkpoint(tensors, opt, layout=Schema3Layout("v3", data_order=data_order))


def _expected_offsets(ckpt: oc.Checkpoint) -> list[dict[int, int]]:
    """Per pass, record -> the offset the reader's placement gave (the tensors' in record
    order; each slot's for the records with an entry)."""
    records = {t.index: k for k, t in enumerate(ckpt.tensors)}
    out = [{k: t.offset for k, t in enumerate(ckpt.tensors)}]
    if ckpt.optimizer is not None:
        for entries in ckpt.optimizer.slots.values():
            out.append({records[i]: b.offset for i, b in entries.items()})
    return out


def _lookups_agree(data: bytes) -> int:
    """Every range's lookup through the section against the placement; the ranges looked up."""
    ckpt = oc.load(data)
    found = _index_of(data)
    assert found is not None
    index, _ = found
    data_start = _sections(data)[4][2]
    n = len(ckpt.tensors)
    records = {t.index: k for k, t in enumerate(ckpt.tensors)}
    lengths = [np.array([t.nbytes for t in ckpt.tensors], np.uint64)]
    if ckpt.optimizer is not None:
        for entries in ckpt.optimizer.slots.values():
            column = np.full(n, NO_STATE, np.uint64)
            for i, b in entries.items():
                column[records[i]] = b.nbytes
            lengths.append(column)
    order = None
    if ckpt.layout.data_order is not None:
        order = np.array([records[int(i)] for i in ckpt.layout.data_order], np.int64)
    done = 0
    for part, expected in enumerate(_expected_offsets(ckpt)):
        for k, offset in expected.items():
            assert data_start + lookup(index, lengths, order, part, k) == offset, (part, k)
            done += 1
    return done


# --- the lookup -------------------------------------------------------------------------------


@st.composite
def _files(draw: st.DrawFn) -> tuple[oc.Checkpoint, int]:
    n = draw(st.integers(1, 150))
    sizes = draw(
        st.lists(
            st.sampled_from([0, 1, 2, 3, 5, 8, 16, 17, 33, 64, 65, 130]), min_size=n, max_size=n
        )
    )
    optimizer = draw(st.sampled_from([None, "sgd", "adam"]))
    absent = set(draw(st.lists(st.integers(0, n - 1), max_size=n)))
    data_order = None
    if draw(st.booleans()):
        data_order = draw(st.permutations(list(range(n))))
    group = draw(st.sampled_from([16, 32, 64, 128]))
    return _checkpoint(sizes, optimizer, absent, data_order), group


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow])
@given(_files())
def test_the_lookup_equals_the_placement(case: tuple[oc.Checkpoint, int]) -> None:
    ckpt, group = case
    ckpt.layout.range_index_group = group
    data = oc.to_bytes(ckpt, revision="v3")
    assert _lookups_agree(data) >= len(ckpt.tensors)
    back = oc.load(data)
    assert back.layout.range_index_group == group and oc.to_bytes(back) == data


def test_the_lookup_covers_every_vector_with_the_section() -> None:
    names = sorted(p.name for p in VECTORS.glob("v3-range-index*.ckpt"))
    assert len(names) >= 3
    for name in names:
        assert _lookups_agree((VECTORS / name).read_bytes()) > 0, name


def test_the_public_surface_family_past_64_tensors_carries_the_section() -> None:
    """tests/public_surface.py's ``v3-range-index`` family (every API path and command runs on
    it and on its corrupt twin) holds the section, with a position column and Adam slots."""
    from tests.public_surface import v3_range_indexed

    data = v3_range_indexed()
    found = _index_of(data)
    assert found is not None and found[0].positions is not None
    assert _lookups_agree(data) > 200


def test_the_lookup_walks_fewer_than_a_group() -> None:
    """Each lookup steps over at most G - 1 ranges: counted on the sizes it reads."""

    class Counting(np.ndarray):
        reads = 0

        def __getitem__(self, key):  # type: ignore[no-untyped-def]
            Counting.reads += 1
            return super().__getitem__(key)

    sizes = [(7 * k) % 90 for k in range(1000)]
    data = oc.to_bytes(_checkpoint(sizes, "adam", set(), None), revision="v3")
    found = _index_of(data)
    assert found is not None
    index, _ = found
    assert index.group_size == 64
    lengths = [np.array(sizes, np.uint64).view(Counting) for _ in range(3)]
    worst = 0
    for k in range(0, 1000, 7):
        Counting.reads = 0
        lookup(index, lengths, None, 2, k)
        worst = max(worst, Counting.reads)
    assert worst <= 64  # G - 1 ranges stepped over and the range's own size


# --- the writer's choice ----------------------------------------------------------------------


@pytest.mark.parametrize(("n", "written"), [(1, False), (64, False), (65, True), (1000, True)])
def test_written_by_default_past_64_tensors(n: int, written: bool) -> None:
    data = oc.to_bytes(_checkpoint([4] * n, "adam", set(), None), revision="v3")
    found = _index_of(data)
    assert (found is not None) == written
    back = oc.load(data)
    assert back.layout.range_index_group == (64 if written else 0)
    assert oc.to_bytes(back) == data


@pytest.mark.parametrize("group", [16, 256, 1 << 16])
def test_the_group_size_is_the_checkpoint_s_choice_even_for_few_tensors(group: int) -> None:
    ckpt = _checkpoint([3, 0, 70, 16], "sgd", set(), [2, 0, 3, 1])
    ckpt.layout.range_index_group = group
    data = oc.to_bytes(ckpt, revision="v3")
    found = _index_of(data)
    assert found is not None and found[0].group_size == group
    back = oc.load(data)
    assert back.layout.range_index_group == group and oc.to_bytes(back) == data
    assert _lookups_agree(data) == 4


@pytest.mark.parametrize("optimizer", [None, "adam"])
@pytest.mark.parametrize("group", [16, 1 << 16])
def test_a_group_size_without_tensors_writes_no_section_and_a_file_the_reader_accepts(
    group: int, optimizer: str | None
) -> None:
    """I4 refuses a range_index section without tensors (``empty_section``): a checkpoint
    that names a group size but holds no tensor gets no section, not a file its own reader
    refuses."""
    ckpt = _checkpoint([], optimizer, set(), None)
    ckpt.layout.range_index_group = group
    data = oc.to_bytes(ckpt, revision="v3")
    assert _index_of(data) is None
    back = oc.load(data)
    back.verify()
    assert len(back) == 0 and back.layout.range_index_group == 0


def test_zero_writes_no_section_and_a_file_without_one_stays_without() -> None:
    ckpt = _checkpoint([4] * 200, None, set(), None)
    ckpt.layout.range_index_group = 0
    data = oc.to_bytes(ckpt, revision="v3")
    assert _index_of(data) is None
    back = oc.load(data)
    assert back.layout.range_index_group == 0 and oc.to_bytes(back) == data


@pytest.mark.parametrize("group", [8, 100, 1 << 17, -64, True, 64.0])
def test_a_group_size_the_format_does_not_allow_is_refused(group: object) -> None:
    ckpt = _checkpoint([4] * 3, None, set(), None)
    ckpt.layout.range_index_group = group  # type: ignore[assignment]
    with pytest.raises(oc.NotRepresentableError, match="range_index_group"):
        oc.to_bytes(ckpt, revision="v3")


def test_a_kept_section_of_its_kind_is_refused() -> None:
    ckpt = _checkpoint([4] * 3, None, set(), None)
    ckpt.layout.sections = [Section(kind=KIND, data=b"x" * 16)]
    with pytest.raises(oc.NotRepresentableError, match="range_index"):
        oc.to_bytes(ckpt, revision="v3")


def test_the_section_sits_after_data_blocks_and_before_higher_kinds() -> None:
    ckpt = _checkpoint([40] * 100, "adam", {3}, None)
    ckpt.layout.sections = [Section(kind=0x80000001, data=b"private")]
    data = oc.to_bytes(ckpt, revision="v3")
    kinds = [k for k, _ in sorted(_sections(data).items(), key=lambda kv: kv[1][0])]
    assert kinds == [1, 2, 0x100008, KIND, 0x80000001, 4]
    assert oc.to_bytes(oc.load(data)) == data


# --- conversions: derived data ------------------------------------------------------------------


def test_conversions_rebuild_the_section_and_lose_nothing() -> None:
    ckpt = _checkpoint([(5 * k) % 70 for k in range(100)], "adam", {1, 50}, None)
    v3 = oc.to_bytes(ckpt, revision="v3")
    assert _index_of(v3) is not None
    loaded = oc.load(v3)
    v2 = oc.to_bytes(oc.convert(loaded, "v2"))  # no allow_lossy: nothing is lost
    assert KIND not in _sections(v2)
    again = oc.to_bytes(oc.convert(oc.load(v2), "v3"))
    assert _index_of(again) is not None and oc.load(again).content_equal(loaded)
    assert lost_content(loaded, "v2") == [] and loaded.layout.sections == []
    # a schema-3 rewrite at another group size is the same content
    loaded.layout.range_index_group = 16
    other = oc.to_bytes(loaded)
    assert other != v3 and oc.load(other).content_equal(oc.load(v3))


# --- rules I1 to I7 ---------------------------------------------------------------------------


def _reseal(data: bytearray) -> bytes:
    """Every section CRC, the table's and the header's recomputed."""
    n = struct.unpack_from("<I", data, 24)[0]
    for i in range(n):
        e = 64 + 32 * i
        ofs, length = struct.unpack_from("<QQ", data, e + 8)
        struct.pack_into("<I", data, e + 24, crc32c.crc32c(bytes(data[ofs : ofs + length])))
    struct.pack_into("<I", data, 28, crc32c.crc32c(bytes(data[64 : 64 + 32 * n])))
    struct.pack_into("<I", data, 4, 0)
    struct.pack_into("<I", data, 4, crc32c.crc32c(bytes(data[:64])))
    return bytes(data)


def _with_body(data: bytes, body: bytes) -> bytes:
    """``data`` (whose range_index section is followed by the data section) with the section's
    body replaced: the later sections move to keep 64-byte alignment."""
    at, _, s, _ = _sections(data)[KIND]
    d_pos, _, d, d_len = _sections(data)[4]
    assert d_pos == at + 1
    new_d = -(-(s + len(body)) // 64) * 64
    out = bytearray(data[:s] + body + bytes(new_d - s - len(body)) + data[d : d + d_len])
    struct.pack_into("<Q", out, 64 + 32 * at + 16, len(body))
    struct.pack_into("<Q", out, 64 + 32 * d_pos + 8, new_d)
    struct.pack_into("<Q", out, 8, len(out))
    return _reseal(out)


def _error(data: bytes) -> tuple[str, str, int]:
    with pytest.raises(oc.CheckpointError) as err:
        oc.load(data).verify()
    return err.value.code, err.value.field, err.value.offset  # type: ignore[return-value]


@pytest.fixture(scope="module")
def ordered() -> bytes:
    """70 tensors in a non-identity data order, Adam slots with absent entries: 2 groups of 64,
    3 passes, a position column; no data_blocks section."""
    sizes = [(11 * k) % 80 for k in range(70)]
    ckpt = _checkpoint(sizes, "adam", {4, 9, 66}, [(13 * k) % 70 for k in range(70)])
    ckpt.layout.data_block_size = 0  # the padding rule P4 meets no block checksum (B6) first
    return oc.to_bytes(ckpt, revision="v3")


def test_each_rule_is_reported_with_its_code_field_and_offset(ordered: bytes) -> None:
    _, _, s, length = _sections(ordered)[KIND]
    body = ordered[s : s + length]
    m, passes, n = 2, 3, 70
    pos_at = 16 + 8 * passes * m

    def put(raw: bytes, at: int, fmt: str, value: int) -> bytes:
        out = bytearray(raw)
        struct.pack_into(fmt, out, at, value)
        return bytes(out)

    def u(at: int, fmt: str = "<Q") -> int:
        return struct.unpack_from(fmt, body, at)[0]

    order = [(13 * k) % 70 for k in range(70)]
    cases = {
        "I1": (body[:15], ("bad_range_index", "range_index", s)),
        "I2": (put(body, 4, "<I", 7), ("reserved_nonzero", "range_index.reserved", s + 4)),
        "I3 low": (put(body, 0, "<I", 3), ("bad_range_index", "range_index.group_shift", s)),
        "I3 high": (put(body, 0, "<I", 17), ("bad_range_index", "range_index.group_shift", s)),
        "I5 count": (put(body, 8, "<Q", 1), ("bad_range_index", "range_index.num_groups", s + 8)),
        "I5 length": (body + bytes(4), ("bad_range_index", "range_index.start", s + 16)),
        "I6 first": (put(body, 16, "<Q", 8), ("bad_range_index", "range_index.start[0]", s + 16)),
        "I6 slot v": (
            put(body, 16 + 8 * 5, "<Q", u(16 + 8 * 5) - 1),
            ("bad_range_index", "range_index.start[5]", s + 16 + 40),
        ),
        "I7": (
            put(body, pos_at + 4 * order[1], "<I", 0),
            ("bad_range_index", f"range_index.position[{order[1]}]", s + pos_at + 4 * order[1]),
        ),
    }
    for rule, (raw, want) in cases.items():
        assert _error(_with_body(ordered, raw)) == want, rule
    assert u(pos_at + 4 * order[1], "<I") == 1 and n == 70


def test_a_required_flag_is_refused_as_an_unknown_required_kind(ordered: bytes) -> None:
    at = _sections(ordered)[KIND][0]
    data = bytearray(ordered)
    struct.pack_into("<I", data, 64 + 32 * at + 4, 1)
    assert _error(_reseal(data)) == (
        "unknown_required_section",
        f"sections[{at}].kind",
        64 + 32 * at,
    )


def test_the_rules_run_after_p3_and_before_p4(ordered: bytes) -> None:
    _, _, s, _ = _sections(ordered)[KIND]
    bad_start = bytearray(ordered)
    struct.pack_into("<Q", bad_start, s + 24, 1)  # start[1]
    # P4: a padding byte between two ranges set; the index is checked first
    loaded = oc.load(ordered)
    ranges = sorted((t.offset, t.offset + t.nbytes) for t in loaded.tensors if t.nbytes)
    gap = next(end for (_, end), (start, _) in itertools.pairwise(ranges) if start > end)
    dirty = bytearray(bad_start)
    dirty[gap] = 1
    assert _error(_reseal(dirty))[:2] == ("bad_range_index", "range_index.start[1]")
    dirty_only = bytearray(ordered)
    dirty_only[gap] = 1
    assert _error(_reseal(dirty_only)) == ("nonzero_padding", "padding", gap)
    # P3: a byte past the last range; reported before the index
    d_pos, _, d, d_len = _sections(ordered)[4]
    gapped = bytearray(bad_start + b"\0")
    struct.pack_into("<Q", gapped, 64 + 32 * d_pos + 16, d_len + 1)
    struct.pack_into("<Q", gapped, 8, len(gapped))
    assert _error(_reseal(gapped)) == ("gap", "data", d + d_len)


def test_a_section_without_tensors_is_an_empty_section() -> None:
    vector = (VECTORS / "invalid-v3-i4-no-tensors.ckpt").read_bytes()
    assert _error(vector) == ("empty_section", "range_index", _sections(vector)[KIND][2])


# --- compatibility ------------------------------------------------------------------------------


def _new_files(tmp_path: Path) -> list[Path]:
    """Files with the section: every valid range_index vector, and the writer's files with an
    order column and Adam state, at the default and at other group sizes."""
    files = sorted(VECTORS.glob("v3-range-index*.ckpt"))
    assert len(files) >= 3
    sizes = [(9 * k) % 100 for k in range(300)]
    for group in (16, 64, 1024):
        ckpt = _checkpoint(sizes, "adam", {2, 7, 200}, [(7 * k) % 300 for k in range(300)])
        ckpt.layout.range_index_group = group if group != 64 else None
        path = tmp_path / f"new-{group}.ckpt"
        oc.save(ckpt, path, revision="v3")
        found = _index_of(path.read_bytes())
        assert found is not None and found[0].group_size == group
        files.append(path)
    return files


def test_python_reader_before_the_section_reads_the_new_files(tmp_path: Path) -> None:
    files = _new_files(tmp_path)
    seen = read_with_old_library(tmp_path, BEFORE, files)
    for path in files:
        now = oc.load(path)
        description, data, kinds = seen[str(path)]
        assert [description, data] == [
            oc.describe(now),
            [t.data.tobytes().hex() for t in now.tensors],
        ], path.name
        assert kinds == [KIND]  # kept as a section of another kind, not misread
        assert now.layout.sections == []


def test_c_reader_before_the_section_reads_the_new_files(tmp_path: Path) -> None:
    assert_old_c_reader_agrees(old_c_reader(tmp_path, BEFORE), _new_files(tmp_path))


# --- size -------------------------------------------------------------------------------------


def test_100k_tiny_adam_tensors_with_both_sections_within_1_25_times_schema_1() -> None:
    """The size goal with the writer's defaults (data_blocks of 64 KiB and range_index of 64):
    exact sizes from the writers' plans, as tests/bench/bench_data_blocks.py computes them."""
    n = 100_000
    tensors = [oc.Tensor(i, np.full(4, i, np.float32).view(np.uint8)) for i in range(n)]
    opt = oc.Optimizer("adam", {})
    for slot in ("m", "v"):
        opt.slots[slot] = {i: oc.Buffer(i, np.zeros(4, np.float32)) for i in range(n)}
    ckpt = oc.Checkpoint(tensors, opt, oc.TrainingState(step=100, epoch=1))
    v1 = v1_write.plan(ckpt, "onert").file_size
    plan = v3_write.plan(ckpt, data_crc=False)
    kinds = [s.kind for s in plan.sections]
    assert 0x100008 in kinds and KIND in kinds
    index = next(s for s in plan.sections if s.kind == KIND)
    assert len(index.body) == 16 + 8 * 3 * -(-n // 64)  # 37,528 bytes (SPEC 7.5)
    ratio = plan.file_size / v1
    print(f"schema 3 {plan.file_size} / schema 1 {v1} = {ratio:.4f}")
    assert ratio <= 1.25, (plan.file_size, v1)


def test_the_fuzzers_seeds_hold_a_range_index_under_their_size_limit(tmp_path: Path) -> None:
    """tests/fuzz/run.py's schema-3 seeds include a file with the section that fits the
    fuzzers' 4 KiB inputs (-max_len=4096), valid, with groups of 16 and a position column."""
    from tests.fuzz.run import write_v3_seeds

    assert write_v3_seeds(tmp_path) >= 1
    data = (tmp_path / "v3-range-index.bin").read_bytes()
    assert len(data) <= 4096
    found = _index_of(data)
    assert found is not None and found[0].group_size == 16 and found[0].positions is not None
    assert _lookups_agree(data) == 80


def test_dump_layout_names_the_section_and_its_fields() -> None:
    path = VECTORS / "v3-range-index.ckpt"
    res = subprocess.run(
        [sys.executable, "-m", "onert_checkpoint", "dump", "--layout", str(path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert res.returncode == 0, res.stderr
    rows = {line.split()[2]: line.split() for line in res.stdout.splitlines()[2:] if line.split()}
    at, _, s, length = _sections(path.read_bytes())[KIND]
    assert rows[f"sections[{at}].kind"][-1] == "range_index"
    assert rows["range_index.group_shift"][:4] == [str(s), "4", "range_index.group_shift", "4"]
    assert rows["range_index.num_groups"][3] == "3"
    starts, positions = rows["range_index.start"], rows["range_index.position"]
    assert (int(starts[0]), int(starts[1])) == (s + 16, 8 * 3 * 3)
    assert (int(positions[0]), int(positions[1])) == (s + 16 + 72, 4 * 40)
    assert s + length == int(positions[0]) + int(positions[1])


def test_a_downgrade_drops_the_section_as_derived_data() -> None:
    """onert-micro's real Adam file upgraded to schema 3 with a range index (groups of 16)
    downgrades, without ``allow_lossy``, to the original file byte for byte."""
    source = (ROOT / "tests" / "data" / "real-onert-micro" / "ckpt_adam.bin").read_bytes()
    upgraded = oc.upgrade(oc.load(source), to="v3")
    upgraded.layout.range_index_group = 16
    data = oc.to_bytes(upgraded)
    assert _index_of(data) is not None
    loaded = oc.load(data)
    assert lost_content(loaded, "v1") == []
    assert oc.to_bytes(oc.downgrade(loaded)) == source
