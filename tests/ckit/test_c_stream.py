"""The streaming C reader (ockpt_read_stream, spec/c/ockpt_stream.c) against the buffer reader.

``ockpt-info --stream`` reads a file through a read-at-offset callback (fseek/fread) with the
reader's fixed-size state, instead of a whole-file buffer; on every conformance vector and every
corpus case (tests/corpus/manifest.json) it prints exactly what the buffer reader prints, with
and without scratch memory. A callback that fails (a file shorter than the size the caller
claims) gives ``truncated_file`` at field "stream", never a wrong description. The state size
spec/c/README.md states is the compiled one. The fuzz harness (tests/fuzz, spec/c/fuzz_ockpt.c)
checks the same agreement, and the bounds of every callback read, on every input it makes. The
library files (reader and writer) call nothing outside themselves: no allocation, no libc.
"""

from __future__ import annotations

import json
import re
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

import onert_checkpoint as oc
from tests.ckit.c_programs import SANITIZED, build_probe

ROOT = Path(__file__).resolve().parents[2]
C_DIR = ROOT / "spec" / "c"
VECTORS = sorted((ROOT / "spec" / "vectors").glob("*.ckpt"))
CORPUS = ROOT / "tests" / "corpus"
CASES = [
    CORPUS / "files" / c["file"]
    for c in json.loads((CORPUS / "manifest.json").read_text())["cases"]
]
FILES = VECTORS + CASES


def _run(exe: Path, *args: str) -> tuple[int, str]:
    res = subprocess.run([str(exe), *args], capture_output=True, text=True)
    assert "runtime error" not in res.stderr and "Sanitizer" not in res.stderr, res.stderr
    return res.returncode, res.stdout


def test_every_file_reads_the_same_through_a_stream(ockpt_info):
    """... and without scratch (SPEC 6.1's pairwise method) as with it, and read with the
    data blocks' checks deferred and then run (``--deferred``: ockpt_read_stream_deferred, then
    ockpt_verify_deferred)."""
    assert len(VECTORS) > 200 and len(CASES) > 50
    assert any(p.name.startswith("v3-") for p in VECTORS)
    differ = []
    for path in FILES:
        want = _run(ockpt_info, str(path))
        assert want[0] in (0, 1), path
        for mode in (
            ["--no-scratch"],
            ["--stream"],
            ["--stream", "--no-scratch"],
            ["--deferred"],
            ["--deferred", "--no-scratch"],
        ):
            got = _run(ockpt_info, *mode, str(path))
            if got != want:
                differ.append(f"{path.name} {' '.join(mode)}:\n  {want}\n  {got}")
    assert not differ, "\n".join(differ[:10])


@pytest.mark.parametrize("name", ["v2-full", "v3-full", "v1-micro-adam", "v1-onert-adam"])
def test_a_failing_read_is_reported_not_misread(ockpt_info, tmp_path, name):
    """Cut the file short but claim its full size: the first read past the cut fails and the
    reader reports it (truncated_file, field "stream", the failed read's offset)."""
    data = (ROOT / "spec" / "vectors" / f"{name}.ckpt").read_bytes()
    cut = tmp_path / "cut.ckpt"
    for keep in (len(data) // 3, len(data) - 1):
        cut.write_bytes(data[:keep])
        code, out = _run(ockpt_info, f"--stream-size={len(data)}", str(cut))
        err = json.loads(out)["error"]
        assert code == 1 and (err["code"], err["field"]) == ("truncated_file", "stream"), out
        assert keep - 64 < err["offset"] <= keep
    cut.write_bytes(data)
    assert _run(ockpt_info, f"--stream-size={len(data)}", str(cut)) == _run(ockpt_info, str(cut))


def test_the_documented_state_size_is_the_compiled_one(tmp_path):
    """spec/c/README.md states sizeof(ockpt_stream) and sizeof(ockpt_file) on this target."""
    if shutil.which("gcc") is None:
        pytest.skip("gcc is needed")
    src = tmp_path / "sizes.c"
    src.write_text(
        '#include <stdio.h>\n#include "ockpt.h"\n'
        'int main(void) { printf("%zu %zu", sizeof(ockpt_stream), sizeof(ockpt_file));'
        " return 0; }\n"
    )
    exe = tmp_path / "sizes"
    subprocess.run(["gcc", "-std=c99", "-I", str(C_DIR), "-o", str(exe), str(src)], check=True)
    stream, file = map(
        int, subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout.split()
    )
    readme = (C_DIR / "README.md").read_text()
    m = re.search(
        r"`sizeof\(ockpt_stream\)` is (\d+) bytes and `sizeof\(ockpt_file\)` (\d+)", readme
    )
    assert m is not None, "spec/c/README.md does not state the stream reader's state size"
    assert (int(m.group(1)), int(m.group(2))) == (stream, file)


#: What a compiler may emit on its own (struct copies, position-independent code).
COMPILER_SYMBOLS = {"memcpy", "memset", "memmove", "_GLOBAL_OFFSET_TABLE_"}
LIBRARY = [
    "ockpt.c",
    "ockpt_v2.c",
    "ockpt_v3.c",
    "ockpt_stream.c",
    "ockpt_crc32.c",
    "ockpt_write.c",
]


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_the_library_calls_nothing_outside_itself(tmp_path, opt):
    """No allocation, no I/O, no libc: every symbol the reader and writer files leave undefined
    is defined by another file of the library (or emitted by the compiler itself)."""
    if shutil.which("gcc") is None or shutil.which("nm") is None:
        pytest.skip("gcc and nm (binutils) are needed")
    defined: set[str] = set()
    undefined: dict[str, set[str]] = {}
    for name in LIBRARY:
        obj = tmp_path / f"{name}.o"
        subprocess.run(
            ["gcc", "-std=c99", opt, "-c", str(C_DIR / name), "-o", str(obj)], check=True
        )
        table = subprocess.run(["nm", str(obj)], capture_output=True, text=True, check=True)
        for line in table.stdout.splitlines():
            parts = line.split()
            if len(parts) == 2 and parts[0] == "U":
                undefined.setdefault(parts[1], set()).add(name)
            elif len(parts) == 3 and parts[1] in "TDBR":
                defined.add(parts[2])
    outside = {
        sym: files
        for sym, files in undefined.items()
        if sym not in defined and sym not in COMPILER_SYMBOLS
    }
    assert not outside, f"the library calls outside itself: {outside}"
    assert {"ockpt_read", "ockpt_read_stream", "ockpt_write"} <= defined


# --- the one-pass load: B6 deferred to the verifying copies -------------------------------------

#: A loader over the streaming reader, counting the bytes its read callback hands over:
#: argv: FILE MODE FLIP FILL IMAGE DATA_OFFSET DATA_LENGTH (the bytes read inside that range
#: during the read are counted apart). MODE "full" reads with ockpt_read_stream, "deferred" with
#: ockpt_read_stream_deferred; FLIP >= 0 flips one bit of that byte of the medium before the
#: read; then every range (the tensors', then each slot's, record order) is copied with
#: ockpt_v3_copy_verified into an image of the data section, first filled with FILL, written to
#: IMAGE. Prints the read's code, the bytes read, the failed copies, then ockpt_verify_deferred's
#: code and the bytes read by the end.
_LOADER = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ockpt.h"
static unsigned char *medium;
static unsigned long long bytes_read, largest;
static uint64_t data_from, data_to, data_bytes; /* the reads' bytes inside [data_from, data_to) */
static int read_at(void *ctx, uint64_t at, void *dst, size_t len) {
  uint64_t lo = at > data_from ? at : data_from, hi = at + len < data_to ? at + len : data_to;
  (void)ctx;
  memcpy(dst, medium + at, len);
  bytes_read += len;
  if (hi > lo) data_bytes += hi - lo;
  if (len > largest) largest = len;
  return 0;
}
#define name ockpt_error_name /* "deferred" too: one list of result codes */
int main(int argc, char **argv) {
  static ockpt_stream s;
  ockpt_file f;
  ockpt_result r;
  ockpt_v3_cursor c;
  ockpt_tensor_info t;
  FILE *fp = fopen(argv[1], "rb");
  long size, flip = atol(argv[3]);
  unsigned char *image, *block;
  uint64_t d, off, n, probe;
  uint32_t j, k, idx, failed = 0;
  if (argc != 8 || fp == NULL) return 3;
  fseek(fp, 0, SEEK_END);
  size = ftell(fp);
  fseek(fp, 0, SEEK_SET);
  medium = malloc((size_t)size);
  if (fread(medium, 1, (size_t)size, fp) != (size_t)size) return 3;
  fclose(fp);
  if (flip >= 0) medium[flip] ^= 0x10;
  data_from = strtoull(argv[6], NULL, 10);
  data_to = data_from + strtoull(argv[7], NULL, 10);
  ockpt_stream_init(&s, read_at, NULL, (uint64_t)size);
  r = strcmp(argv[2], "deferred") == 0 ? ockpt_read_stream_deferred(&s, &f, NULL, 0)
                                       : ockpt_read_stream(&s, &f, NULL, 0);
  printf("read %s %s %llu\n", name(r.code), r.field, (unsigned long long)r.offset);
  if (r.code < 0) return 0; /* an error; OCKPT_OK and OCKPT_DEFERRED go on */
  printf("after-read %llu of %ld data %llu\n", bytes_read, size, (unsigned long long)data_bytes);
  d = f.container.data.offset;
  n = f.container.data.length;
  printf("file-copy-of-data %d\n", ockpt_file_copy(&f, d + n / 2, &probe, 1));
  image = malloc((size_t)n);
  memset(image, atoi(argv[4]), (size_t)n);
  block = malloc(ockpt_v3_block_size(&f));
  for (j = 0; j <= f.container.num_slots; j++) {
    ockpt_v3_cursor_init(&f, &c);
    for (k = 0; k < f.container.num_tensors; k++) {
      int got = j == 0 ? ockpt_v3_next_tensor(&f, &c, &t)
                       : ockpt_v3_slot_entry(&f, &c, j - 1, k, &idx, &off, &t.nbytes);
      if (j == 0) off = t.offset;
      if (got != 1) continue;
      r = ockpt_v3_copy_verified(&f, off, image + (off - d), (size_t)t.nbytes, block,
                                 ockpt_v3_block_size(&f));
      if (r.code != OCKPT_OK) {
        failed++;
        printf("copy-failed %llu %llu %s %s %llu\n", (unsigned long long)off,
               (unsigned long long)t.nbytes, name(r.code), r.field, (unsigned long long)r.offset);
      }
    }
  }
  printf("after-copies %llu failed %u largest %llu\n", bytes_read, failed, largest);
  r = ockpt_verify_deferred(&f);
  printf("verify %s %s %llu\n", name(r.code), r.field, (unsigned long long)r.offset);
  printf("after-verify %llu unchecked %u\n", bytes_read, (unsigned)f.container.unchecked);
  fp = fopen(argv[5], "wb");
  fwrite(image, 1, (size_t)n, fp);
  fclose(fp);
  free(image);
  free(block);
  free(medium);
  return 0;
}
"""


@pytest.fixture(scope="module")
def loader(tmp_path_factory) -> Path:
    return build_probe(tmp_path_factory.mktemp("loader"), "loader", _LOADER, SANITIZED)


def _adam_file(tmp_path: Path, block_size: int) -> Path:
    """Schema 3 with data_blocks: Adam, named tensors of sizes that leave padding between ranges
    (4 to 12,000 bytes), data in record order (what every file built in memory has)."""
    import numpy as np

    rng = np.random.default_rng(7)
    sizes = [3000, 1, 777, 3, 5, 3000, 100, 2, 1500, 64]
    tensors = [
        oc.Tensor(
            i,
            rng.standard_normal(e).astype(np.float32),
            name=f"layer{i}",
            dtype="float32",
            shape=(e,),
        )
        for i, e in enumerate(sizes)
    ]
    slots = {
        name: {
            i: oc.Buffer(i, rng.standard_normal(e).astype(np.float32)) for i, e in enumerate(sizes)
        }
        for name in ("m", "v")
    }
    ckpt = oc.Checkpoint(tensors, oc.Optimizer("adam", slots), oc.TrainingState(step=5, epoch=1))
    ckpt.layout.data_block_size = block_size
    path = tmp_path / f"adam-{block_size}.ckpt"
    path.write_bytes(oc.to_bytes(ckpt, revision="v3"))
    return path


def _section(data: bytes, kind: int) -> tuple[int, int]:
    """(ofs_body, len_body) of the section of that kind."""
    for i in range(struct.unpack_from("<I", data, 24)[0]):
        if struct.unpack_from("<I", data, 64 + 32 * i)[0] == kind:
            return struct.unpack_from("<QQ", data, 64 + 32 * i + 8)
    raise AssertionError(f"no section of kind {kind:#x}")


def _load(loader: Path, path: Path, mode: str, flip: int = -1, fill: int = 0) -> tuple[dict, bytes]:
    image = path.with_suffix(f".{mode}.{fill}.img")
    d, length = _section(path.read_bytes(), 4)
    res = subprocess.run(
        [str(loader), str(path), mode, str(flip), str(fill), str(image), str(d), str(length)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 0 and "runtime error" not in res.stderr, res.stdout + res.stderr
    out: dict = {"failed": []}
    for line in res.stdout.splitlines():
        key, *rest = line.split()
        if key == "copy-failed":
            out["failed"].append(rest)
        else:
            out[key] = rest
    return out, image.read_bytes() if image.exists() else b""


@pytest.mark.parametrize("block_size", [64, 4096])
def test_a_deferred_load_reads_each_data_byte_once(loader, tmp_path, block_size):
    """Counted work, not time: the bytes the read callback hands over during a whole load (read,
    then every range copied with ockpt_v3_copy_verified). ockpt_read_stream reads the data to
    check every block and then again for the copies (about 2x the file); the deferred read
    leaves B6 to the copies, which verify each block once in the caller's block buffer (about
    1x). The deferred read reports OCKPT_DEFERRED, never OCKPT_OK, refuses ockpt_file_copy
    into the data section, and ockpt_verify_deferred then runs the whole of B6 (reading the
    data once more) and makes the file valid."""
    path = _adam_file(tmp_path, block_size)
    size = path.stat().st_size
    data = path.read_bytes()
    assert _section(data, 0x100008)[1] > 16  # the file has its data_blocks section
    full, full_image = _load(loader, path, "full")
    deferred, deferred_image = _load(loader, path, "deferred")
    assert full["read"][0] == "ok" and deferred["read"][0] == "deferred"
    assert full["file-copy-of-data"] == ["0"] and deferred["file-copy-of-data"] == ["-1"]
    assert full["after-copies"][2] == deferred["after-copies"][2] == "0"  # no copy failed
    assert full_image == deferred_image
    full_bytes, deferred_bytes = int(full["after-copies"][0]), int(deferred["after-copies"][0])
    assert full_bytes >= 1.8 * size, (full_bytes, size)
    # 1x plus the data_blocks section's CRCs read a second time (6% of the file at 64-byte
    # blocks) and the tables the copies look ranges up in
    assert deferred_bytes <= 1.15 * size, (deferred_bytes, size)
    # the read itself reads no data byte: of the data section only the padding between ranges
    ckpt = oc.load(data)
    ranges = sum(t.raw.nbytes for t in ckpt.tensors) + sum(
        b.raw.nbytes for slot in ckpt.optimizer.slots.values() for b in slot.values()
    )
    assert int(deferred["after-read"][4]) <= _section(data, 4)[1] - ranges
    assert int(full["after-read"][4]) >= _section(data, 4)[1]
    assert int(deferred["after-copies"][4]) <= 64  # OCKPT_STREAM_LINE at most per read
    # the validator call: every block and the data section's CRC, once more over the data
    assert deferred["verify"][0] == "ok" and deferred["after-verify"][2] == "0"
    assert int(deferred["after-verify"][0]) >= deferred_bytes + 0.8 * size


@pytest.mark.parametrize("block_size", [64, 4096])
def test_a_deferred_load_copies_no_byte_of_a_bad_block(loader, tmp_path, block_size):
    """One data bit flipped on the medium: the full read refuses the file (block_checksum); the
    deferred read accepts it as OCKPT_DEFERRED and the copies then refuse each range that lies
    in the bad block, naming it, while no byte of that block reaches the caller (two loads
    into images first filled with 0x00 and 0xFF: a byte is written when both agree); every other
    byte is copied, equal to the file's. ockpt_verify_deferred then reports the block."""
    path = _adam_file(tmp_path, block_size)
    data = path.read_bytes()
    d, length = _section(data, 4)
    flip = d + length // 2 + 7
    bad = (flip - d) // block_size
    full, _ = _load(loader, path, "full", flip)
    assert full["read"] == ["block_checksum", f"data_blocks.crc[{bad}]", str(d + bad * block_size)]
    runs = [_load(loader, path, "deferred", flip, fill) for fill in (0, 255)]
    out = runs[0][0]
    assert out["read"][0] == "deferred"
    assert out["failed"], "the range with the flipped bit was copied"
    for off, n, code, field, at in out["failed"]:
        assert (code, field, int(at)) == (
            "block_checksum",
            f"data_blocks.crc[{bad}]",
            d + bad * block_size,
        )
        assert int(off) < d + (bad + 1) * block_size and int(off) + int(n) > d + bad * block_size
    written = [a == b for a, b in zip(runs[0][1], runs[1][1])]
    original = data[d : d + length]
    bad_block = range(bad * block_size, min((bad + 1) * block_size, length))
    assert not any(written[i] for i in bad_block)
    assert all(runs[0][1][i] == original[i] for i in range(length) if written[i])
    # a failed range was copied up to its bad block and no further; every other range whole
    # (what is left unwritten outside the failed ranges is padding: at most 63 bytes a range)
    in_failed = [False] * length
    for off, n, *_ in out["failed"]:
        first, end = int(off) - d, int(off) + int(n) - d
        assert all(written[first : max(first, bad_block.start)])
        assert not any(written[max(first, bad_block.start) : end])
        in_failed[first:end] = [True] * (end - first)
    assert sum(1 for i in range(length) if not written[i] and not in_failed[i]) <= 30 * 63
    assert out["verify"] == ["block_checksum", f"data_blocks.crc[{bad}]", str(d + bad * block_size)]
    assert out["after-verify"][2] == "1"  # still unchecked: never reported valid


def test_a_deferred_read_of_a_file_without_data_blocks_is_a_full_read(loader, tmp_path):
    """Nothing could verify the data later, so the deferred read runs every rule: OCKPT_OK."""
    path = _adam_file(tmp_path, 0)
    out, _ = _load(loader, path, "deferred")
    assert out["read"][0] == "ok" and out["file-copy-of-data"] == ["0"]
    assert int(out["after-read"][0]) >= path.stat().st_size
