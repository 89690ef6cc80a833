/*
 * micro_harness.c - the micro reader (spec/c/micro) as a device harness would run it, printing
 * the micro profile's line format (SPEC.md section 11):
 *
 *   micro 1 <buffer bytes>
 *   accept <tensors> <slots> <optimizer kind or ->
 *   state <key> <int|float|string|bytes> <u64>     one per entry, key %XX-escaped
 *   tensor <index> <model index or -> <nbytes> <crc32c>     in data order
 *   slot <j> <index> <nbytes> <crc32c>
 *   end                                             or, at any point: refuse <code> <field> <offset>
 *
 * Usage: micro_harness [--buffer N] FILE. The data are copied through a 64-byte buffer, as
 * into a model's tensors, and their CRC-32C printed. "bytes-read N" goes to stderr.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../spec/c/micro/ockpt_micro.h"
#include "../../spec/c/ockpt.h"

static unsigned long long bytes_read;

static int read_at(void *ctx, uint64_t offset, void *dst, size_t len) {
  FILE *f = ctx;
  bytes_read += len;
  if (fseek(f, (long)offset, SEEK_SET) != 0) return -1;
  return fread(dst, 1, len, f) == len ? 0 : -1;
}

static int refuse(const ockpt_micro *m) {
  printf("refuse %s %s %lu\n", ockpt_error_name((ockpt_error)m->code), m->field,
         (unsigned long)m->offset);
  return 1;
}

static int run(ockpt_micro *m, FILE *f, long size, uint8_t *block, unsigned long buffer);

int main(int argc, char **argv) {
  unsigned long buffer = 4096;
  ockpt_micro m;
  uint8_t *block;
  FILE *f;
  long size;
  int rc;
  if (argc == 4 && !strcmp(argv[1], "--buffer")) {
    buffer = strtoul(argv[2], NULL, 10);
    argv += 2;
    argc -= 2;
  }
  if (argc != 2 || !(f = fopen(argv[1], "rb"))) {
    fprintf(stderr, "usage: micro_harness [--buffer N] FILE\n");
    return 2;
  }
  fseek(f, 0, SEEK_END);
  size = ftell(f);
  block = malloc(buffer ? buffer : 1);
  printf("micro 1 %lu\n", buffer);
  rc = run(&m, f, size, block, buffer);
  fprintf(stderr, "bytes-read %llu\n", bytes_read);
  fclose(f);
  free(block);
  return rc;
}

static int run(ockpt_micro *m, FILE *f, long size, uint8_t *block, unsigned long buffer) {
  static const char *const types[4] = {"int", "float", "string", "bytes"};
  ockpt_micro_range r;
  uint8_t key[255], type, chunk[64];
  uint64_t value;
  uint32_t k, key_len, i;
  int rc;
  rc = ockpt_micro_open(m, read_at, f, (uint64_t)size, block, (uint32_t)buffer);
  if (rc) return refuse(m);
  printf("accept %u %u ", (unsigned)m->num_tensors, (unsigned)m->num_slots);
  if (m->opt_kind == 0xffffffffu) printf("-\n");
  else printf("%u\n", (unsigned)m->opt_kind);
  for (k = 0; k < m->num_state; k++) {
    if (ockpt_micro_state(m, k, key, &key_len, &type, &value)) return refuse(m);
    printf("state ");
    for (i = 0; i < key_len; i++)
      printf(key[i] > 0x20 && key[i] < 0x7f && key[i] != '%' ? "%c" : "%%%02X", key[i]);
    printf(" %s %llu\n", type < 4 ? types[type] : "unknown", (unsigned long long)value);
  }
  while ((rc = ockpt_micro_next(m, &r)) == 1) {
    uint32_t crc = 0, left = r.nbytes;
    while (left) {
      uint32_t n = left < sizeof chunk ? left : (uint32_t)sizeof chunk;
      if (ockpt_micro_copy(m, chunk, n)) return refuse(m);
      crc = ockpt_crc32c(crc, chunk, n);
      left -= n;
    }
    if (r.pass) printf("slot %u %u", (unsigned)(r.pass - 1), (unsigned)r.index);
    else if (r.model_index == OCKPT_MICRO_NO_MODEL_INDEX) printf("tensor %u -", (unsigned)r.index);
    else printf("tensor %u %u", (unsigned)r.index, (unsigned)r.model_index);
    printf(" %u %08x\n", (unsigned)r.nbytes, (unsigned)crc);
  }
  if (rc < 0) return refuse(m);
  printf("end\n");
  return 0;
}
