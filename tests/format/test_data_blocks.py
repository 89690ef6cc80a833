"""Schema 3's per-block data checksums (the optional data_blocks section, spec/SPEC.md 7.4).

What is proved here:

* the writer writes the section by default (64 KiB blocks), at the block size a checkpoint
  names, or not at all (``data_block_size = 0``); a loaded file keeps its own; a block size
  the format does not allow is refused before anything is written;
* reading one tensor verifies the blocks its bytes lie in, each once, and never the whole data
  section: the CRC work is counted, and it does not grow with the file;
* a changed data byte is refused with ``block_checksum`` naming its block before a byte of that
  block is handed out; ``verify()`` and ``validate`` still check every block and then the
  data section's own CRC;
* compatibility both ways: every schema-3 vector committed before the section existed reads as
  before and is written back byte for byte, and the readers as committed before it (the Python
  package and the C reader, taken from git history) read the new files, skipping the section.
"""

from __future__ import annotations

import json
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import crc32c
import numpy as np
import pytest

import onert_checkpoint as oc
from onert_checkpoint.format.container import data_blocks
from onert_checkpoint.format.revisions.v3 import placement
from tests.old_readers import (
    MODES,
    assert_old_c_reader_agrees,
    old_c_reader,
    old_tree,
    read_with_old_library,
)

ROOT = Path(__file__).resolve().parents[2]
VECTORS = ROOT / "spec" / "vectors"
KIND = data_blocks.KIND
#: The last commit before schema 3 had a data_blocks section: its readers are "today's
#: readers" that must still read the new files.
BEFORE = "a60f1d3"


def _tensors(count: int, elements: int = 8750, seed: int = 0) -> oc.Checkpoint:
    """``count`` float32 tensors of ``elements`` values (35,000 bytes by default) with names,
    dtypes and shapes, each with its own values."""
    rng = np.random.default_rng(seed)
    return oc.Checkpoint(
        [
            oc.Tensor(
                i,
                rng.standard_normal(elements).astype(np.float32),
                name=f"t{i}",
                dtype="float32",
                shape=(elements,),
            )
            for i in range(count)
        ]
    )


def _sections(data: bytes) -> dict[int, tuple[int, int, int, int]]:
    """kind -> (table position, flags, ofs_body, len_body)."""
    out = {}
    for i in range(struct.unpack_from("<I", data, 24)[0]):
        kind, flags, ofs, length = struct.unpack_from("<IIQQ", data, 64 + 32 * i)
        out[kind] = (i, flags, ofs, length)
    return out


def _block_size(data: bytes) -> int | None:
    found = _sections(data).get(KIND)
    if found is None:
        return None
    return 1 << struct.unpack_from("<I", data, found[2])[0]


# --- writing ---------------------------------------------------------------------------------


def test_written_by_default_with_64_kib_blocks_and_kept_on_a_round_trip(tmp_path: Path) -> None:
    ckpt = _tensors(4)
    data = oc.to_bytes(ckpt, revision="v3")
    assert _block_size(data) == 65536
    i, flags, ofs, length = _sections(data)[KIND]
    _, _, dofs, dlen = _sections(data)[4]
    assert flags == 0 and i == len(_sections(data)) - 2  # optional, just before the data
    assert length == 16 + 4 * -(-dlen // 65536)
    # each recorded CRC is the block's, the last block shorter
    crcs = struct.unpack_from(f"<{(length - 16) // 4}I", data, ofs + 16)
    blocks = [data[dofs + b : dofs + min(b + 65536, dlen)] for b in range(0, dlen, 65536)]
    assert list(crcs) == [crc32c.crc32c(b) for b in blocks]
    back = oc.load(data)
    assert back.layout.data_block_size == 65536
    assert KIND not in [s.kind for s in back.layout.sections]
    assert oc.to_bytes(back) == data
    oc.save(ckpt, tmp_path / "s.ckpt", revision="v3")  # the streaming writer patches the CRCs
    assert (tmp_path / "s.ckpt").read_bytes() == data


@pytest.mark.parametrize("size", [64, 4096, 1 << 24])
def test_the_block_size_is_the_checkpoint_s_choice(size: int, tmp_path: Path) -> None:
    ckpt = _tensors(3, elements=300)
    ckpt.layout.data_block_size = size
    data = oc.to_bytes(ckpt, revision="v3")
    assert _block_size(data) == size
    back = oc.load(data)
    back.verify()
    assert back.layout.data_block_size == size and oc.to_bytes(back) == data
    oc.save(ckpt, tmp_path / "s.ckpt", revision="v3")
    assert (tmp_path / "s.ckpt").read_bytes() == data


def test_zero_writes_no_section_and_a_file_without_one_stays_without() -> None:
    ckpt = _tensors(3, elements=300)
    ckpt.layout.data_block_size = 0
    data = oc.to_bytes(ckpt, revision="v3")
    assert _block_size(data) is None
    back = oc.load(data)
    assert back.layout.data_block_size == 0 and oc.to_bytes(back) == data


@pytest.mark.parametrize("size", [32, 100, 1 << 25, -64, True, 4096.0])
def test_a_block_size_the_format_does_not_allow_is_refused(size: object) -> None:
    ckpt = _tensors(1, elements=16)
    ckpt.layout.data_block_size = size  # type: ignore[assignment]
    with pytest.raises(oc.CheckpointError) as err:
        oc.to_bytes(ckpt, revision="v3")
    assert err.value.code == "not_representable"


def test_no_section_without_data_bytes() -> None:
    empty = oc.Checkpoint([oc.Tensor(0, np.zeros(0, np.float32))])
    assert _block_size(oc.to_bytes(empty, revision="v3")) is None


# --- reading: only what is read is verified ---------------------------------------------------


class _Counted:
    """The data_blocks module's CRC, counting the bytes it reads."""

    def __init__(self) -> None:
        self.bytes = 0
        self.real = data_blocks.crc

    def __call__(self, data, value: int = 0) -> int:
        self.bytes += memoryview(data).nbytes
        return self.real(data, value)


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> _Counted:
    counter = _Counted()
    monkeypatch.setattr(data_blocks, "crc", counter)

    def whole_section(*args: object) -> None:
        raise AssertionError("a read of one tensor checked the whole data section's CRC")

    monkeypatch.setattr(placement, "check_section_crc", whole_section)
    return counter


def _first_read_cost(counter: _Counted, count: int, k: int) -> int:
    ckpt = _tensors(count)
    ckpt.layout.data_block_size = 4096
    loaded = oc.load(oc.to_bytes(ckpt, revision="v3"))
    counter.bytes = 0
    assert np.array_equal(np.asarray(loaded.tensors[k].data), ckpt.tensors[k].data)
    return counter.bytes


def test_one_tensor_costs_its_blocks_whatever_the_file_s_size(counted: _Counted) -> None:
    small = _first_read_cost(counted, 8, 5)
    large = _first_read_cost(counted, 128, 5)
    assert 35_000 <= small <= 35_000 + 2 * 4096
    assert large == small


def _blocks_of(loaded: oc.Checkpoint, k: int, start: int, size: int) -> set[int]:
    t = loaded.tensors[k]
    return set(range((t.offset - start) // size, (t.offset + t.nbytes - 1 - start) // size + 1))


def test_each_block_is_verified_once(counted: _Counted) -> None:
    """Tensors 2 and 3 share a block: reading 3 after 2 verifies only 3's other blocks."""
    ckpt = _tensors(4)
    data = oc.to_bytes(ckpt, revision="v3")
    _, _, start, length = _sections(data)[4]
    loaded = oc.load(data)
    two, three = (_blocks_of(loaded, k, start, 65536) for k in (2, 3))
    assert two & three and three - two

    def size(blocks: set[int]) -> int:  # the last block is shorter
        return sum(min(65536, length - 65536 * i) for i in blocks)

    counted.bytes = 0  # the writer's CRCs
    np.asarray(loaded.tensors[2].data)
    assert counted.bytes == size(two)
    counted.bytes = 0
    np.asarray(loaded.tensors[3].data)
    assert counted.bytes == size(three - two)


def test_once_reads_have_verified_every_block_a_hand_out_checks_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Reads that have verified every block (and so run the rest of B6 and P4) leave nothing
    pending: later hand-outs, of entries made afresh, make no call into the checks."""
    calls = []
    real = data_blocks.DataBlocks.check_range

    def check_range(self: data_blocks.DataBlocks, start: int, end: int) -> bool:
        calls.append((start, end))
        return real(self, start, end)

    monkeypatch.setattr(data_blocks.DataBlocks, "check_range", check_range)
    ckpt = _tensors(6)
    ckpt.layout.data_block_size = 4096
    loaded = oc.load(oc.to_bytes(ckpt, revision="v3"))
    for t in loaded.tensors:  # floating entries: none is kept
        np.asarray(t.data)
    del t
    assert len(calls) == 6  # each read checked its own range
    assert loaded._store is not None and loaded._store.verified
    for k in range(6):  # entries made now, their arrays handed out for the first time
        assert np.array_equal(loaded[f"t{k}"].data, ckpt.tensors[k].data)
    assert len(calls) == 6


# --- reading: a changed byte ------------------------------------------------------------------


def _flip(data: bytes, at: int) -> bytes:
    out = bytearray(data)
    out[at] ^= 0x10
    return bytes(out)


def _corrupt_tensor(k: int, block: int = 4096) -> tuple[bytes, oc.Checkpoint, int]:
    """A file whose tensor k has one changed byte (its section CRCs left as written), the
    content, and the absolute offset of the changed byte."""
    ckpt = _tensors(6)
    ckpt.layout.data_block_size = block
    data = oc.to_bytes(ckpt, revision="v3")
    at = oc.load(data).tensors[k].offset + 1000
    return _flip(data, at), ckpt, at


def test_a_changed_byte_is_refused_naming_its_block_before_it_is_handed_out() -> None:
    bad, ckpt, at = _corrupt_tensor(3)
    loaded = oc.load(bad)
    start = _sections(bad)[4][2]
    block = (at - start) // 4096
    with pytest.raises(oc.CheckpointError) as err:
        np.asarray(loaded.tensors[3].data)
    assert (err.value.code, err.value.field, err.value.offset) == (
        "block_checksum",
        f"data_blocks.crc[{block}]",
        start + 4096 * block,
    )
    with pytest.raises(oc.CheckpointError):  # again: still refused
        np.asarray(loaded.tensors[3].data)
    # a tensor in other blocks is verified and handed out
    assert np.array_equal(np.asarray(loaded.tensors[0].data), ckpt.tensors[0].data)


def test_verify_checks_every_block_after_partial_reads() -> None:
    bad, _, at = _corrupt_tensor(0)
    loaded = oc.load(bad)
    np.asarray(loaded.tensors[5].data)  # fine: another block
    with pytest.raises(oc.CheckpointError) as err:
        loaded.verify()
    assert err.value.code == "block_checksum"
    assert err.value.offset == _sections(bad)[4][2] + 4096 * ((at - _sections(bad)[4][2]) // 4096)


def test_after_a_failed_verify_good_blocks_are_handed_out_and_the_bad_one_never() -> None:
    """SPEC 7.4: a reader that knows data_blocks verifies, before it hands out a range, the
    blocks the range lies in. A failed ``verify()`` (the whole of B6) condemns its block, not
    the file's other blocks: a tensor in verified blocks is still read, the damaged tensor
    never, and ``verify()`` and a whole-file hand-out keep raising."""
    bad, ckpt, _ = _corrupt_tensor(2)
    loaded = oc.load(bad)
    with pytest.raises(oc.CheckpointError) as first:
        loaded.verify()
    assert first.value.code == "block_checksum"
    for k in (0, 5):  # before the damaged block (verified by verify()) and after (not yet)
        assert np.array_equal(np.asarray(loaded.tensors[k].data), ckpt.tensors[k].data)
    for _ in range(2):
        with pytest.raises(oc.CheckpointError) as err:
            np.asarray(loaded.tensors[2].data)
        assert (err.value.code, err.value.field) == (first.value.code, first.value.field)
    with pytest.raises(oc.CheckpointError) as again:
        loaded.verify()
    assert again.value.field == first.value.field
    with pytest.raises(oc.CheckpointError):
        oc.to_bytes(loaded)


def _reseal(data: bytes, data_crc: int | None = None) -> bytes:
    """Every section CRC recomputed (the data section's set to ``data_crc`` when given), then
    the table's and the header's."""
    out = bytearray(data)
    n = struct.unpack_from("<I", out, 24)[0]
    for i in range(n):
        e = 64 + 32 * i
        kind, _, ofs, length = struct.unpack_from("<IIQQ", out, e)
        value = crc32c.crc32c(bytes(out[ofs : ofs + length]))
        if kind == 4 and data_crc is not None:
            value = data_crc
        struct.pack_into("<I", out, e + 24, value)
    struct.pack_into("<I", out, 28, crc32c.crc32c(bytes(out[64 : 64 + 32 * n])))
    struct.pack_into("<I", out, 4, 0)
    struct.pack_into("<I", out, 4, crc32c.crc32c(bytes(out[:64])))
    return bytes(out)


def test_verify_checks_the_data_section_s_own_crc_after_the_blocks() -> None:
    """Every block intact, the data section's recorded CRC wrong: a read hands out verified
    blocks, ``verify()`` (and ``validate``) still refuse the file, as an old reader does, and
    so does the read that completes the verification of every block (describing the file,
    exporting it: whatever reads all of it has run all of B6)."""
    ckpt = _tensors(6)
    ckpt.layout.data_block_size = 4096
    data = oc.to_bytes(ckpt, revision="v3")
    i, _, _, _ = _sections(data)[4]
    bad = _reseal(data, data_crc=0x12345678)
    loaded = oc.load(bad)
    assert np.array_equal(np.asarray(loaded.tensors[1].data), ckpt.tensors[1].data)
    with pytest.raises(oc.CheckpointError) as err:
        loaded.verify()
    assert (err.value.code, err.value.field) == ("section_checksum", f"sections[{i}].crc")
    again = oc.load(bad)
    for k in range(5):
        np.asarray(again.tensors[k].data)
    with pytest.raises(oc.CheckpointError) as err:
        np.asarray(again.tensors[5].data)  # its blocks are the last unverified ones
    assert err.value.code == "section_checksum"
    with pytest.raises(oc.CheckpointError) as err:
        oc.describe(oc.load(bad))
    assert err.value.code == "section_checksum"


def test_validate_reports_the_block(tmp_path: Path) -> None:
    bad, _, _ = _corrupt_tensor(2)
    path = tmp_path / "bad.ckpt"
    path.write_bytes(_reseal(bad))  # only the block's CRC can tell
    res = subprocess.run(
        [sys.executable, "-m", "onert_checkpoint", "validate", str(path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert res.returncode != 0
    assert "block_checksum" in res.stdout + res.stderr


# --- compatibility ----------------------------------------------------------------------------


def _new_files(tmp_path: Path) -> list[Path]:
    """Files with the section: every valid data_blocks vector, and files of the writer at three
    block sizes (several blocks, the last shorter) with an Adam optimizer and state."""
    files = sorted(VECTORS.glob("v3-data-blocks*.ckpt"))
    assert len(files) >= 2
    base = _tensors(5, elements=3000)
    opt = oc.Optimizer("adam", {})
    for slot in ("m", "v"):
        opt.slots[slot] = {t.index: oc.Buffer(t.index, t.data * 0.5) for t in base.tensors}
    for size in (64, 4096, 65536):
        ckpt = oc.Checkpoint(list(base.tensors), opt, oc.TrainingState(step=3, epoch=1))
        ckpt.layout.data_block_size = size
        path = tmp_path / f"new-{size}.ckpt"
        oc.save(ckpt, path, revision="v3")
        assert _block_size(path.read_bytes()) == size
        files.append(path)
    return files


def test_python_reader_before_the_section_reads_the_new_files(tmp_path: Path) -> None:
    files = _new_files(tmp_path)
    seen = read_with_old_library(tmp_path, BEFORE, files)
    for path in files:
        now = oc.load(path)
        assert seen[str(path)][:2] == [
            oc.describe(now),
            [t.data.tobytes().hex() for t in now.tensors],
        ], path.name


def test_c_reader_before_the_section_reads_the_new_files(tmp_path: Path) -> None:
    assert_old_c_reader_agrees(old_c_reader(tmp_path, BEFORE), _new_files(tmp_path))


def test_schema_3_vectors_written_before_the_section_read_and_write_back_unchanged(
    tmp_path: Path,
) -> None:
    old = old_tree(tmp_path, BEFORE, "spec/vectors") / "spec" / "vectors"
    names = sorted(p.name for p in old.glob("v3-*.ckpt"))
    assert len(names) >= 40
    for name in names:
        data = (old / name).read_bytes()
        assert (VECTORS / name).read_bytes() == data, name  # the committed vector is unchanged
        loaded = oc.load(data)
        loaded.verify()
        assert loaded.layout.data_block_size == 0
        assert oc.to_bytes(loaded) == data, name
        want = json.loads((old / name).with_suffix(".json").read_text())
        assert json.loads(json.dumps(oc.describe(loaded))) == want, name


def test_c_reader_agrees_on_every_data_blocks_vector_in_every_mode(ockpt_info: Path) -> None:
    """The reference C reader (buffer and stream, with and without scratch) gives each
    data_blocks vector's expected JSON: through a stream it sums every block's CRC and the data
    section's in one read of each byte."""
    names = sorted(
        p.stem
        for p in VECTORS.glob("*.ckpt")
        if p.stem.startswith(("invalid-v3-b", "v3-data-blocks"))
    )
    assert len(names) >= 14
    for name in names:
        want = json.loads((VECTORS / f"{name}.json").read_text())
        for mode in MODES:
            res = subprocess.run(
                [str(ockpt_info), *mode, str(VECTORS / f"{name}.ckpt")],
                capture_output=True,
                text=True,
            )
            assert "Sanitizer" not in res.stderr and "runtime error" not in res.stderr
            got = json.loads(res.stdout)
            if "error" in got:
                got["error"].pop("message", None)
            assert got == want, (name, mode)


@pytest.mark.parametrize("shift", [6, 9, 12, 16])
def test_the_section_crc_combined_from_the_blocks_is_the_crc_of_the_data(shift: int) -> None:
    """The data section's CRC that B6 checks last is combined from the blocks' CRCs (no second
    pass over the data): equal to the CRC-32C of the bytes for any length, the last block
    shorter or not."""
    rng = np.random.default_rng(shift)
    size = 1 << shift
    for length in (1, size - 1, size, size + 1, 3 * size, 3 * size + 17):
        data = rng.integers(0, 256, length, dtype=np.uint8).tobytes()
        crcs = np.array(
            [crc32c.crc32c(data[i : i + size]) for i in range(0, length, size)], np.uint32
        )
        assert data_blocks.combine(crcs, shift, length) == crc32c.crc32c(data), length


def test_dump_layout_names_the_section_and_its_fields(tmp_path: Path) -> None:
    ckpt = _tensors(3, elements=3000)
    ckpt.layout.data_block_size = 4096
    path = tmp_path / "blocks.ckpt"
    oc.save(ckpt, path, revision="v3")
    res = subprocess.run(
        [sys.executable, "-m", "onert_checkpoint", "dump", "--layout", str(path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert res.returncode == 0, res.stderr
    rows = {line.split()[2]: line for line in res.stdout.splitlines()[2:] if len(line.split()) > 2}
    assert rows["sections[1].kind"].endswith("data_blocks")
    assert "blocks of 4096 bytes" in rows["data_blocks.block_shift"]
    data_len = _sections(path.read_bytes())[4][3]
    assert rows["data_blocks.num_blocks"].split()[3] == str(-(-data_len // 4096))


#: A loader over the C kit's streaming reader: validate, then (optionally) change one byte of
#: the medium, then copy the whole data section through ockpt_v3_copy_verified with one block
#: buffer of the file's block size, and through ockpt_file_copy.
_COPY_DRIVER = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ockpt.h"
static unsigned char *medium;
static int read_at(void *ctx, uint64_t at, void *dst, size_t len) {
  (void)ctx;
  memcpy(dst, medium + at, len);
  return 0;
}
int main(int argc, char **argv) {
  static ockpt_stream s;
  ockpt_file f;
  ockpt_result r;
  FILE *fp = fopen(argv[1], "rb");
  long size, flip = atol(argv[2]);
  unsigned char *verified, *plain, *block;
  uint32_t bs;
  uint64_t d, n;
  fseek(fp, 0, SEEK_END);
  size = ftell(fp);
  fseek(fp, 0, SEEK_SET);
  medium = malloc((size_t)size);
  if (fread(medium, 1, (size_t)size, fp) != (size_t)size) return 3;
  ockpt_stream_init(&s, read_at, NULL, (uint64_t)size);
  r = ockpt_read_stream(&s, &f, NULL, 0);
  if (r.code != OCKPT_OK) { printf("read %s\n", ockpt_error_name(r.code)); return 1; }
  if (flip >= 0) medium[flip] ^= 1; /* the medium returns another byte from now on */
  bs = ockpt_v3_block_size(&f);
  d = f.container.data.offset;
  n = f.container.data.length;
  block = malloc(bs ? bs : 1);
  verified = calloc(1, (size_t)n);
  plain = calloc(1, (size_t)n);
  ockpt_file_copy(&f, d, plain, (size_t)n);
  r = ockpt_v3_copy_verified(&f, d, verified, (size_t)n, block, bs);
  printf("%u %s %s %llu %d\n", (unsigned)bs, ockpt_error_name(r.code), r.field,
         (unsigned long long)r.offset, memcmp(plain, medium + d, (size_t)n) == 0);
  fclose(fp);
  free(medium);
  free(block);
  free(verified);
  free(plain);
  return 0;
}
"""


def test_c_copy_verifies_each_block_before_copying_it(tmp_path: Path) -> None:
    """ockpt_v3_copy_verified: with one buffer of the writer's block size, a copy of the data
    verified at the copy itself. A byte the medium changes after the file was validated reaches
    the caller through ockpt_file_copy, never through the verifying copy, which names the
    block."""
    if shutil.which("gcc") is None:
        pytest.skip("gcc is needed to build the C kit")
    c_dir = ROOT / "spec" / "c"
    (tmp_path / "driver.c").write_text(_COPY_DRIVER)
    lib = ["ockpt.c", "ockpt_v2.c", "ockpt_v3.c", "ockpt_stream.c", "ockpt_crc32.c"]
    built = subprocess.run(
        ["gcc", "-std=c99", "-Wall", "-Werror", "-O1", "-fsanitize=address,undefined",
         f"-I{c_dir}", "-o", str(tmp_path / "driver"), str(tmp_path / "driver.c"),
         *(str(c_dir / f) for f in lib)],
        capture_output=True, text=True, timeout=300,
    )
    assert built.returncode == 0, built.stderr
    ckpt = _tensors(4, elements=3000)
    ckpt.layout.data_block_size = 512  # a microcontroller-sized buffer
    path = tmp_path / "small-blocks.ckpt"
    oc.save(ckpt, path, revision="v3")
    _, _, d, length = _sections(path.read_bytes())[4]

    def run(flip: int) -> list[str]:
        res = subprocess.run([str(tmp_path / "driver"), str(path), str(flip)],
                             capture_output=True, text=True, timeout=60)
        assert res.returncode == 0 and "Sanitizer" not in res.stderr, res.stdout + res.stderr
        return res.stdout.split()

    intact = run(-1)
    assert intact[0] == "512" and intact[1] == "ok" and intact[-1] == "1"
    at = d + 3 * 512 + 100
    bs, code, field, offset, plain_equal = run(at)
    assert (bs, code, field, int(offset)) == ("512", "block_checksum", "data_blocks.crc[3]",
                                              d + 3 * 512)
    assert plain_equal == "1"  # the unverified copy handed out the changed byte
    assert length > 4 * 512
