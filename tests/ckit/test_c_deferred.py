"""What the C kit hands out after a deferred read (ockpt_read_stream_deferred: rule B6, the data
blocks' CRC-32C, left for later).

Until ockpt_verify_deferred() has passed, no byte of the data section, and no checksum of such
bytes, leaves the library except through ockpt_v3_copy_verified(), which checks each block first
(in the caller's block buffer, re-checked there when it is reused). A read that fails on the way
is a `truncated_file` at field "stream", never a checksum error.

A small program drives the kit over a schema-3 file with data_blocks in memory, one operation per
argument: `read` (the deferred read), `crc OFF LEN` (ockpt_file_crc32), `copy OFF LEN`
(ockpt_v3_copy_verified, the bytes it wrote printed in hex), `poke K` (change byte K of the block
buffer, as a careless caller might), `fail OFF` (every read from then on that reaches OFF fails),
`verify` (ockpt_verify_deferred), `reads` (data bytes the callback handed over so far).
"""

from __future__ import annotations

import struct
import subprocess
import zlib
from pathlib import Path

import numpy as np
import pytest

import onert_checkpoint as oc
from tests.ckit.c_programs import SANITIZED, build_probe

DATA, DATA_BLOCKS = 4, 0x100008
BLOCK = 64

PROBE = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ockpt.h"
static unsigned char *medium;
static uint64_t fail_from = UINT64_MAX, data_from, data_to, data_bytes;
static int read_at(void *ctx, uint64_t at, void *dst, size_t len) {
  uint64_t lo = at > data_from ? at : data_from, hi = at + len < data_to ? at + len : data_to;
  (void)ctx;
  if (at + len > fail_from) return -1;
  memcpy(dst, medium + at, len);
  if (hi > lo) data_bytes += hi - lo;
  return 0;
}
static void result(const char *what, ockpt_result r) {
  printf("%s %s %s %llu\n", what, ockpt_error_name(r.code), r.field[0] ? r.field : "-",
         (unsigned long long)r.offset);
}
int main(int argc, char **argv) {
  static ockpt_stream s;
  static unsigned char block[1 << 16], dst[1 << 16];
  ockpt_file f;
  FILE *fp = fopen(argv[1], "rb");
  long size;
  int a;
  if (fp == NULL) return 3;
  fseek(fp, 0, SEEK_END);
  size = ftell(fp);
  fseek(fp, 0, SEEK_SET);
  medium = malloc((size_t)size);
  if (fread(medium, 1, (size_t)size, fp) != (size_t)size) return 3;
  fclose(fp);
  data_from = strtoull(argv[2], NULL, 10);
  data_to = strtoull(argv[3], NULL, 10);
  ockpt_stream_init(&s, read_at, NULL, (uint64_t)size);
  for (a = 4; a < argc; a++) {
    if (strcmp(argv[a], "read") == 0) {
      result("read", ockpt_read_stream_deferred(&s, &f, NULL, 0));
    } else if (strcmp(argv[a], "crc") == 0) {
      uint32_t crc = 12345;
      int got = ockpt_file_crc32(&f, strtoull(argv[a + 1], NULL, 10),
                                 strtoull(argv[a + 2], NULL, 10), &crc);
      printf("crc %d %lu\n", got, (unsigned long)crc);
      a += 2;
    } else if (strcmp(argv[a], "copy") == 0) {
      uint64_t off = strtoull(argv[a + 1], NULL, 10), len = strtoull(argv[a + 2], NULL, 10), k;
      ockpt_result r;
      memset(dst, 0xEE, len);
      r = ockpt_v3_copy_verified(&f, off, dst, (size_t)len, block, sizeof block);
      printf("copy %s %s %llu ", ockpt_error_name(r.code), r.field[0] ? r.field : "-",
             (unsigned long long)r.offset);
      for (k = 0; k < len; k++) printf("%02x", dst[k]);
      printf("\n");
      a += 2;
    } else if (strcmp(argv[a], "poke") == 0) {
      block[atoi(argv[++a])] ^= 0xFF;
    } else if (strcmp(argv[a], "fail") == 0) {
      fail_from = strtoull(argv[++a], NULL, 10);
    } else if (strcmp(argv[a], "verify") == 0) {
      result("verify", ockpt_verify_deferred(&f));
      printf("unchecked %u\n", (unsigned)f.container.unchecked);
    } else if (strcmp(argv[a], "reads") == 0) {
      printf("reads %llu\n", (unsigned long long)data_bytes);
    } else {
      return 2;
    }
  }
  free(medium);
  return 0;
}
"""


@pytest.fixture(scope="module")
def probe(tmp_path_factory) -> Path:
    return build_probe(tmp_path_factory.mktemp("deferred"), "probe", PROBE, SANITIZED)


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory) -> tuple[Path, bytes, int, int]:
    """A schema-3 file with 64-byte data blocks (a few hundred bytes of data, several blocks):
    its path, bytes and data section (offset, length)."""
    rng = np.random.default_rng(3)
    sizes = [50, 7, 40, 3, 64, 9, 1, 30, 2, 11, 5, 20]
    tensors = [oc.Tensor(i, rng.standard_normal(e).astype(np.float32), name=f"layer{i}/weight",
                         dtype="float32", shape=(e,)) for i, e in enumerate(sizes)]
    ckpt = oc.Checkpoint(tensors, None, oc.TrainingState(step=2, epoch=1))
    ckpt.layout.data_block_size = BLOCK
    data = oc.to_bytes(ckpt, revision="v3")
    path = tmp_path_factory.mktemp("file") / "blocks.ckpt"
    path.write_bytes(data)
    d, n = section(data, DATA)
    assert section(data, DATA_BLOCKS)[1] == 16 + 4 * -(-n // BLOCK) and n > 4 * BLOCK
    return path, data, d, n


def section(data: bytes, kind: int) -> tuple[int, int]:
    for i in range(struct.unpack_from("<I", data, 24)[0]):
        if struct.unpack_from("<I", data, 64 + 32 * i)[0] == kind:
            return struct.unpack_from("<QQ", data, 64 + 32 * i + 8)
    raise AssertionError(f"no section of kind {kind:#x}")


def run(probe: Path, checkpoint, *ops: object) -> list[list[str]]:
    path, _, d, n = checkpoint
    res = subprocess.run([str(probe), str(path), str(d), str(d + n), *map(str, ops)],
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 0 and "runtime error" not in res.stderr, res.stdout + res.stderr
    return [line.split() for line in res.stdout.splitlines()]


def test_file_crc32_refuses_unverified_data_after_a_deferred_read(probe, checkpoint):
    """As ockpt_file_copy: -1 and *crc unchanged for a range that reaches into the data section
    (one byte of it is enough), zlib's CRC-32 of a range before it; after ockpt_verify_deferred
    the data section's CRC-32 too."""
    _, data, d, _ = checkpoint
    out = run(probe, checkpoint, "read", "crc", d + 8, 4, "crc", d - 8, 9, "crc", 0, d,
              "verify", "crc", d + 8, 4)
    assert out[0][:2] == ["read", "deferred"]
    assert out[1] == ["crc", "-1", "12345"] and out[2] == ["crc", "-1", "12345"]
    assert out[3] == ["crc", "0", str(zlib.crc32(data[:d], 12345))]
    assert out[4][:2] == ["verify", "ok"] and out[5] == ["unchecked", "0"]
    assert out[6] == ["crc", "0", str(zlib.crc32(data[d + 8 : d + 12], 12345))]


def test_file_crc32_refuses_a_range_a_failed_read_left_unread(probe, checkpoint):
    """A callback failing from the file's first byte on: the CRC of a range the cache does not
    hold (the whole file before the data, more than its 512 bytes) is refused, not computed over
    the zeros the failed reads gave."""
    _, _, d, _ = checkpoint
    assert d > 8 * 64
    out = run(probe, checkpoint, "read", "fail", 0, "crc", 0, d)
    assert out[1] == ["crc", "-1", "12345"]


def test_copy_verified_refuses_a_range_past_the_data_sections_end(probe, checkpoint):
    """offset_out_of_bounds at field "data" with the range's offset, and no byte written, for a
    range that starts inside the data section and ends past it (and one that starts at its
    end); the last bytes of the section themselves copy."""
    _, data, d, n = checkpoint
    end = d + n
    out = run(probe, checkpoint, "read", "copy", end - 4, 8, "copy", end, 1, "copy", end - 4, 4)
    assert out[1] == ["copy", "offset_out_of_bounds", "data", str(end - 4), "ee" * 8]
    assert out[2] == ["copy", "offset_out_of_bounds", "data", str(end), "ee"]
    assert out[3] == ["copy", "ok", "-", "0", data[end - 4 : end].hex()]


def test_a_held_block_is_checked_again_before_it_is_reused(probe, checkpoint):
    """Through a stream the block buffer is remembered with the verified block it holds: a
    second copy from that block reads no data byte; after the caller changed one byte of the
    buffer, the next copy from the block finds the buffer's CRC-32C wrong, reads the block
    again and hands out the file's bytes, never the changed one."""
    _, data, d, _ = checkpoint
    a, b = d + 8, d + 20  # both in block 0
    out = run(probe, checkpoint, "read", "reads", "copy", a, 4, "reads", "copy", b, 4, "reads",
              "poke", 20, "copy", b, 4, "reads")
    assert out[0][:2] == ["read", "deferred"]
    first, second, third = int(out[3][1]), int(out[5][1]), int(out[7][1])
    assert out[2] == ["copy", "ok", "-", "0", data[a : a + 4].hex()]
    assert out[4] == ["copy", "ok", "-", "0", data[b : b + 4].hex()]
    assert out[6] == ["copy", "ok", "-", "0", data[b : b + 4].hex()]
    assert first - int(out[1][1]) >= BLOCK  # the first copy read its block
    assert second == first, "the held block was read again"
    assert third - second >= BLOCK, "the changed buffer was trusted"


def test_a_failed_read_during_verify_deferred_is_truncated_file(probe, checkpoint):
    """ockpt_verify_deferred reads the data once more: a read that fails there is the file
    being shorter than the size given (truncated_file, field "stream", at the failed read),
    not a block whose CRC-32C differs; the file stays unchecked."""
    _, _, d, _ = checkpoint
    fail = d + 2 * BLOCK + 5  # in block 2
    out = run(probe, checkpoint, "read", "fail", fail, "verify")
    assert out[0][:2] == ["read", "deferred"]
    code, field, at = out[1][1:]
    assert (code, field) == ("truncated_file", "stream")
    assert d <= int(at) < fail <= int(at) + 64
    assert out[2] == ["unchecked", "1"]
    # the same failure met by a verified copy is a truncated_file too
    out = run(probe, checkpoint, "read", "fail", fail, "copy", d + 2 * BLOCK, 8)
    assert out[1][1:4] == ["truncated_file", "stream", str(d + 2 * BLOCK)]
