/*
 * fuzz_micro.c - libFuzzer harness: the micro reader (spec/c/micro) against the full C reader
 * (spec/c) on the same input, and again with every CRC-32C of the input recomputed so that the
 * rules behind the checksums are reached. It aborts when the micro reader
 *   - asks its callback for a byte outside the file, or overruns its 4096-byte block buffer
 *     (the callback checks, ASan watches the buffer);
 *   - refuses with a code outside the micro profile's set (SPEC.md section 11), or refuses a
 *     file the full reader accepts other than with limit_exceeded for a file beyond its limits;
 *   - accepts a file the full reader refuses, unless the full reader's error is a rule the
 *     profile leaves to a full reader (left_to_full; the full reader reports its first failing
 *     rule only, so a file that also breaks a later rule the profile keeps is not seen here);
 *   - accepts a file the full reader accepts with other content: the counts, the optimizer
 *     kind, each range handed out once with the full reader's index, model index, size and
 *     bytes, and every state entry's key, type and value.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../spec/c/micro/ockpt_micro.h"
#include "../../spec/c/ockpt.h"

#define BUF 4096u
#define CHECK(x) \
  do { \
    if (!(x)) abort(); \
  } while (0)

typedef struct src {
  const uint8_t *data;
  size_t size;
} src;

static int read_at(void *ctx, uint64_t offset, void *dst, size_t len) {
  const src *s = ctx;
  CHECK(offset <= s->size && len <= s->size - offset); /* never outside the file */
  memcpy(dst, s->data + offset, len);
  return 0;
}

static int ends_with(const char *s, const char *end) {
  size_t a = strlen(s), b = strlen(end);
  return a >= b && !strcmp(s + a - b, end);
}

static uint32_t u32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t u64(const uint8_t *p) { return u32(p) | (uint64_t)u32(p + 4) << 32; }

/* The kind of section-table entry i, for a field "sections[i]...", or -1. */
static long entry_kind(const uint8_t *d, size_t n, const char *field) {
  unsigned long i;
  if (strncmp(field, "sections[", 9)) return -1;
  i = strtoul(field + 9, NULL, 10);
  if (i >= 64 || 64 + 32 * i + 4 > n) return -1;
  return (long)u32(d + 64 + 32 * i);
}

static int has_kind(const uint8_t *d, size_t n, uint32_t kind) {
  uint32_t i, ns = n >= 28 ? u32(d + 24) : 0;
  for (i = 0; i < ns && i < 64 && 64 + 32 * i + 4 <= n; i++)
    if (u32(d + 64 + 32 * i) == kind) return 1;
  return 0;
}

/* SPEC.md section 11's "left to a full reader", by the full reader's code and field. */
static int left_to_full(const uint8_t *d, size_t n, ockpt_error code, const char *field) {
  long kind;
  switch (code) {
  case OCKPT_E_NONZERO_PADDING: case OCKPT_E_REDUNDANT_COLUMN: case OCKPT_E_BAD_DTYPE:
  case OCKPT_E_SHAPE_MISMATCH: case OCKPT_E_BAD_UTF8: case OCKPT_E_DUPLICATE_TENSOR_NAME:
  case OCKPT_E_DUPLICATE_SLOT_NAME: case OCKPT_E_DUPLICATE_STATE_KEY:
  case OCKPT_E_BAD_STATE_TYPE: case OCKPT_E_BAD_ORIGIN: case OCKPT_E_BAD_RANGE_INDEX:
  case OCKPT_E_BAD_SECTION_FLAGS: case OCKPT_E_SECTION_ORDER: case OCKPT_E_EMPTY_SECTION:
    return 1;
  case OCKPT_E_RESERVED_NONZERO:
    return strcmp(field, "tensors.columns") &&
           (strncmp(field, "sections[", 9) || !ends_with(field, ".flags"));
  case OCKPT_E_DUPLICATE_TENSOR_INDEX:
    return ends_with(field, ".model_index");
  case OCKPT_E_LIMIT_EXCEEDED:
    return !strncmp(field, "tensors[", 8) ? ends_with(field, "].len_name") ||
                                                ends_with(field, "].rank")
                                          : !strncmp(field, "state[", 6) &&
                                                ends_with(field, "].len_value");
  case OCKPT_E_GAP:
    return !strncmp(field, "sections[", 9) || !strcmp(field, "origin");
  case OCKPT_E_COUNT_EXCEEDS_FILE:
    return !strcmp(field, "origin");
  case OCKPT_E_SECTION_CHECKSUM: case OCKPT_E_DUPLICATE_SECTION:
    kind = entry_kind(d, n, field);
    if (kind == 4 && code == OCKPT_E_SECTION_CHECKSUM) return has_kind(d, n, 0x100008u);
    return kind != 1 && kind != 2 && kind != 3 && kind != 4 && kind != 0x100008;
  default:
    return 0;
  }
}

static int micro_code(int code) {
  static const ockpt_error codes[] = {
      OCKPT_E_TRUNCATED_HEADER, OCKPT_E_BAD_MAGIC, OCKPT_E_UNSUPPORTED_VERSION,
      OCKPT_E_HEADER_CHECKSUM, OCKPT_E_TRUNCATED_FILE, OCKPT_E_TRAILING_BYTES, OCKPT_E_OVERLAP,
      OCKPT_E_GAP, OCKPT_E_LIMIT_EXCEEDED, OCKPT_E_COUNT_EXCEEDS_FILE,
      OCKPT_E_SECTION_TABLE_CHECKSUM, OCKPT_E_RESERVED_NONZERO, OCKPT_E_MISALIGNED,
      OCKPT_E_OFFSET_OUT_OF_BOUNDS, OCKPT_E_UNKNOWN_REQUIRED_SECTION, OCKPT_E_DUPLICATE_SECTION,
      OCKPT_E_SECTION_CHECKSUM, OCKPT_E_BAD_DATA_BLOCKS, OCKPT_E_BLOCK_CHECKSUM,
      OCKPT_E_TENSOR_ORDER, OCKPT_E_DUPLICATE_TENSOR_INDEX, OCKPT_E_BAD_DATA_ORDER,
      OCKPT_E_BAD_OPTIMIZER};
  size_t i;
  for (i = 0; i < sizeof codes / sizeof codes[0]; i++)
    if ((int)codes[i] == code) return 1;
  return 0;
}

/* A valid file beyond the micro reader's limits with a BUF-byte buffer. */
static int beyond_limits(const ockpt_file *f) {
  uint64_t block = ockpt_v3_block_size(f);
  if (!block && f->container.data.present) block = f->container.data.length;
  return block > BUF ||
         ((f->container.columns & OCKPT_V3_COL_ORDER) && f->container.num_tensors > 8u * BUF);
}

static void differ(const uint8_t *data, size_t size) {
  static uint8_t *block;
  src s = {data, size};
  ockpt_file f;
  ockpt_result r = ockpt_read(data, size, &f);
  ockpt_micro m;
  ockpt_micro_range g;
  uint8_t *seen = NULL;
  uint32_t k, ranges = 0, want = 0;
  int rc, full_ok = r.code == OCKPT_OK && f.revision == OCKPT_REV_V3;
  if (!block) block = malloc(BUF);
  rc = ockpt_micro_open(&m, read_at, &s, size, block, BUF);
  if (!rc && full_ok) {
    CHECK(m.num_tensors == f.container.num_tensors && m.num_slots == f.container.num_slots);
    CHECK(m.opt_kind == (f.container.optimizer.present ? f.container.optimizer_kind : 0xffffffffu));
    CHECK(m.num_state == f.container.num_state);
    for (k = 0; k < m.num_state; k++) {
      ockpt_state_info e;
      uint8_t key[255], type;
      uint32_t len;
      uint64_t value;
      CHECK(ockpt_sec_state(&f, k, &e) == 1);
      CHECK(!ockpt_micro_state(&m, k, key, &len, &type, &value));
      CHECK(len == e.key_len && !memcmp(key, e.key, len) && type == e.type);
      if (type == OCKPT_CONTAINER_VALUE_INT) CHECK(value == (uint64_t)e.i);
      if (type == OCKPT_CONTAINER_VALUE_FLOAT) CHECK(!memcmp(&value, &e.f, 8));
      if (type >= OCKPT_CONTAINER_VALUE_STRING) CHECK(value == e.len);
    }
    seen = calloc((size_t)(m.num_slots + 1) * m.num_tensors + 1, 1);
  }
  if (!rc) {
    while ((rc = ockpt_micro_next(&m, &g)) == 1) {
      uint8_t *copy = malloc(g.nbytes ? g.nbytes : 1);
      if (ockpt_micro_copy(&m, copy, g.nbytes)) { /* a block failed its check: refused */
        free(copy);
        rc = -1;
        break;
      }
      if (full_ok) {
        uint64_t off, n;
        ockpt_tensor_info t;
        CHECK(g.pass <= m.num_slots && g.record < m.num_tensors);
        CHECK(!seen[(size_t)g.pass * m.num_tensors + g.record]++); /* each range once */
        CHECK(ockpt_v3_range(&f, g.pass, g.record, &off, &n) == 1 && n == g.nbytes);
        CHECK(!memcmp(copy, data + off, n));
        CHECK(ockpt_sec_tensor(&f, g.record, &t) == 1 && t.index == g.index);
        CHECK(g.model_index ==
              (t.flags & OCKPT_V2_HAS_MODEL_INDEX ? t.model_index : OCKPT_MICRO_NO_MODEL_INDEX));
        ranges++;
      }
      free(copy);
    }
    rc = rc < 0;
  }
  CHECK(!rc || strcmp(m.field, "stream")); /* the callback never fails here */
  if (rc) {
    CHECK(micro_code(m.code));
    if (full_ok) CHECK(m.code == OCKPT_E_LIMIT_EXCEEDED && beyond_limits(&f));
  } else if (full_ok) {
    uint32_t j;
    for (j = 0; j <= f.container.num_slots; j++)
      for (k = 0; k < f.container.num_tensors; k++) {
        uint64_t off, n;
        want += ockpt_v3_range(&f, j, k, &off, &n) == 1;
      }
    CHECK(ranges == want);
  } else {
    CHECK(r.code != OCKPT_OK); /* the micro reader accepts schema 3 only */
    CHECK(left_to_full(data, size, r.code, r.field));
  }
  free(seen);
}

/* Recompute every CRC-32C the file's own fields locate: data_blocks' block CRCs, each
 * section's, the section table's, the header's. */
static void reseal(uint8_t *d, size_t n) {
  uint32_t i, ns = u32(d + 24);
  uint64_t dofs = 0, dlen = 0, bofs = 0, blen = 0;
  if (ns > 64 || 64 + 32 * (uint64_t)ns > n) return;
  for (i = 0; i < ns; i++) {
    const uint8_t *e = d + 64 + 32 * i;
    if (u64(e + 8) > n || u64(e + 16) > n - u64(e + 8)) continue;
    if (u32(e) == 4) dofs = u64(e + 8), dlen = u64(e + 16);
    if (u32(e) == 0x100008) bofs = u64(e + 8), blen = u64(e + 16);
  }
  if (dofs && bofs && blen >= 16 && u32(d + bofs) >= 6 && u32(d + bofs) <= 24) {
    uint64_t b = (uint64_t)1 << u32(d + bofs), at;
    for (i = 0, at = 0; at < dlen && 16 + 4 * (uint64_t)i + 4 <= blen; i++, at += b) {
      uint32_t c = ockpt_crc32c(0, d + dofs + at, dlen - at < b ? dlen - at : b);
      memcpy(d + bofs + 16 + 4 * i, &c, 4); /* little-endian hosts */
    }
  }
  for (i = 0; i < ns; i++) {
    uint8_t *e = d + 64 + 32 * i;
    uint32_t c;
    if (u64(e + 8) > n || u64(e + 16) > n - u64(e + 8)) continue;
    c = ockpt_crc32c(0, d + u64(e + 8), u64(e + 16));
    memcpy(e + 24, &c, 4);
  }
  i = ockpt_crc32c(0, d + 64, 32 * (size_t)ns);
  memcpy(d + 28, &i, 4);
  memset(d + 4, 0, 4);
  i = ockpt_crc32c(0, d, 64);
  memcpy(d + 4, &i, 4);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  differ(data, size);
  if (size >= 64 && data[0] == 0xad && data[1] == 0x01 && data[2] == 3) {
    uint8_t *copy = malloc(size);
    memcpy(copy, data, size);
    reseal(copy, size);
    differ(copy, size);
    free(copy);
  }
  return 0;
}
