"""Version-1 files (schema 1, WOF) larger than their u32 offsets can describe.

A schema-1 checkpoint or a WOF file stores every offset as a u32, so a file of more than
0xFFFFFFFF bytes cannot be described by them (onert's own exporter wraps its offsets silently past
4 GiB). Rule 1 of each revision refuses it: `limit_exceeded`, field `file`, offset 4294967295,
before any table is read, instead of a last entry whose size is taken mod 2^32. The files here
are a few header bytes and zeros: through a stream the callback serves them, and as a buffer an
anonymous mapping that is never written (the kernel gives zero pages without allocating them).
"""

from __future__ import annotations

import struct
import subprocess
from pathlib import Path

import pytest

from tests.ckit.c_programs import build_probe

LIMIT = 0xFFFFFFFF

PROGRAM = r"""
#define _DEFAULT_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "ockpt.h"
static unsigned char head[64];
static size_t head_len;
static int read_at(void *ctx, uint64_t at, void *dst, size_t len) {
  size_t k;
  (void)ctx;
  for (k = 0; k < len; k++) ((unsigned char *)dst)[k] = at + k < head_len ? head[at + k] : 0;
  return 0;
}
static void show(const char *how, ockpt_result r, const ockpt_file *f) {
  uint64_t off = 0, n = 0;
  printf("%s %s %s %llu", how, ockpt_error_name(r.code), r.field[0] ? r.field : "-",
         (unsigned long long)r.offset);
  if (r.code == OCKPT_OK && ockpt_entry(f, 0, 0, &off, &n) == 1)
    printf(" entry %llu %llu", (unsigned long long)off, (unsigned long long)n);
  printf("\n");
}
int main(int argc, char **argv) {
  static ockpt_stream s;
  ockpt_file f;
  uint64_t size = strtoull(argv[2], NULL, 10);
  unsigned char *map;
  size_t k;
  if (argc != 3) return 2;
  head_len = strlen(argv[1]) / 2;
  for (k = 0; k < head_len; k++) sscanf(argv[1] + 2 * k, "%2hhx", &head[k]);
  ockpt_stream_init(&s, read_at, NULL, size);
  show("stream", ockpt_read_stream(&s, &f, NULL, 0), &f);
  map = mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (map == MAP_FAILED) return 3;
  memcpy(map, head, head_len);
  show("buffer", ockpt_read(map, (size_t)size, &f), &f);
  munmap(map, (size_t)size);
  return 0;
}
"""


@pytest.fixture(scope="module")
def reader(tmp_path_factory) -> Path:
    return build_probe(tmp_path_factory.mktemp("large"), "large", PROGRAM, ("-O1",))


def read(reader: Path, head: bytes, size: int) -> list[list[str]]:
    res = subprocess.run([str(reader), head.hex(), str(size)], capture_output=True, text=True,
                         timeout=60)
    assert res.returncode == 0, res.stdout + res.stderr
    return [line.split() for line in res.stdout.splitlines()]


def wof(size: int) -> bytes:
    """A WOF head: one entry at the first byte after its table, running to the end."""
    return struct.pack("<HBBII", 429, 1, 0, 1, 12)


def footerless(size: int) -> bytes:
    """onert's footer-less SGD checkpoint of one entry: ofs_opt1 is the file's size as onert's
    exporter writes it, a u32 (wrapped past 4 GiB)."""
    return struct.pack("<HBBIIIII", 429, 1, 0, size & LIMIT, 0, 0, 1, 24)


@pytest.mark.parametrize("head", [wof, footerless])
@pytest.mark.parametrize("size", [LIMIT + 1, LIMIT + 1 + 100, 2**40])
def test_a_version1_file_over_4_gib_is_limit_exceeded(reader, head, size):
    """2^32 + 100 bytes was reported valid with its entry's size mod 2^32 (88 bytes)."""
    for how in read(reader, head(size), size):
        assert how[1:] == ["limit_exceeded", "file", str(LIMIT)], how


@pytest.mark.parametrize("head", [wof, footerless])
def test_the_largest_version1_file_reads_with_its_whole_last_entry(reader, head):
    """0xFFFFFFFF bytes: valid, its one entry running to the last byte."""
    start = len(head(LIMIT))
    for how in read(reader, head(LIMIT), LIMIT):
        assert how[1:] == ["ok", "-", "0", "entry", str(start), str(LIMIT - start)], how
