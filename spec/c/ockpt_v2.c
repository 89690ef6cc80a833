/* Schema 2 in the reference C reader: SPEC.md section 6, rule by rule, in the spec's order.
 *
 * Arithmetic discipline: every offset and size in schema 2 is a u64 read from the file. Before
 * any addition, an offset is compared with the file size S (or with the end of its section,
 * itself <= S), and a length is compared with `end - offset`, never `offset + length` with
 * `end`; record counts are checked against their limits (at most 2^24) before they are
 * multiplied by record sizes, so every product and sum below is far from 2^64.
 *
 * No allocation. The rules that compare records with each other (unique model indices, unique
 * names, slot names and keys, the data ranges tiling the data section in offset order) are
 * O(n^2) without scratch memory; with the caller's scratch (ockpt_read_scratch) the model-index
 * check and the data-range walk sort in it and are O(n log n). Names and keys are compared
 * pairwise in both cases (O(n^2) comparisons of at most 1 KiB each; in a real file n is the
 * number of named tensors). */
#include "ockpt_internal.h"

/* ---- reading little-endian integers (at offsets already checked against S) ---------------- */

/* Through the file's source (ockpt_internal.h): the caller's buffer or a stream. */
#define rd8(b, k) src_u8((b), (k))
#define rd16(b, k) src_u16((b), (k))
#define rd32(b, k) src_u32((b), (k))
#define rd64(b, k) src_u64((b), (k))

/* The width of every field read below is the one its rd8/rd16/rd32/rd64 call reads: each is
 * checked against the generated packed struct (ockpt_layout.h), so that a width changed in the
 * .ksy stops the build here, naming the record and field, instead of reading the wrong bytes. */
#define WIDTH_IS(rec, f, n) \
  typedef char rec##_##f##_is_read_as_##n[sizeof(((const rec##_layout *)0)->f) == (n) ? 1 : -1]
WIDTH_IS(ockpt_container_header, header_crc, 4);
WIDTH_IS(ockpt_container_header, len_file, 8);
WIDTH_IS(ockpt_container_header, num_sections, 4);
WIDTH_IS(ockpt_container_header, ofs_section_table, 8);
WIDTH_IS(ockpt_container_header, reserved0, 1);
WIDTH_IS(ockpt_container_header, section_table_crc, 4);
WIDTH_IS(ockpt_container_optimizer_head, kind, 4);
WIDTH_IS(ockpt_container_optimizer_head, num_slots, 4);
WIDTH_IS(ockpt_container_optimizer_head, num_tensors, 4);
WIDTH_IS(ockpt_container_optimizer_head, reserved, 4);
WIDTH_IS(ockpt_container_origin, dialect, 4);
WIDTH_IS(ockpt_container_origin, flags, 4);
WIDTH_IS(ockpt_container_origin, num_entries, 8);
WIDTH_IS(ockpt_container_origin, reserved, 4);
WIDTH_IS(ockpt_container_origin, revision, 4);
WIDTH_IS(ockpt_container_section_entry, crc, 4);
WIDTH_IS(ockpt_container_section_entry, flags, 4);
WIDTH_IS(ockpt_container_section_entry, kind, 4);
WIDTH_IS(ockpt_container_section_entry, len_body, 8);
WIDTH_IS(ockpt_container_section_entry, ofs_body, 8);
WIDTH_IS(ockpt_container_section_entry, reserved, 4);
WIDTH_IS(ockpt_container_slot_descriptor, len_name, 4);
WIDTH_IS(ockpt_container_slot_descriptor, ofs_name, 8);
WIDTH_IS(ockpt_container_slot_descriptor, reserved, 4);
WIDTH_IS(ockpt_v2_slot_entry, len_data, 8);
WIDTH_IS(ockpt_v2_slot_entry, ofs_data, 8);
WIDTH_IS(ockpt_container_state_entry, len_key, 4);
WIDTH_IS(ockpt_container_state_entry, len_value, 8);
WIDTH_IS(ockpt_container_state_entry, ofs_key, 8);
WIDTH_IS(ockpt_container_state_entry, value, 8);
WIDTH_IS(ockpt_container_state_entry, value_type, 1);
WIDTH_IS(ockpt_container_state_head, num_entries, 4);
WIDTH_IS(ockpt_container_state_head, reserved, 4);
WIDTH_IS(ockpt_v2_tensor_record, dtype, 1);
WIDTH_IS(ockpt_v2_tensor_record, flags, 2);
WIDTH_IS(ockpt_v2_tensor_record, index, 4);
WIDTH_IS(ockpt_v2_tensor_record, len_data, 8);
WIDTH_IS(ockpt_v2_tensor_record, len_name, 4);
WIDTH_IS(ockpt_v2_tensor_record, model_index, 4);
WIDTH_IS(ockpt_v2_tensor_record, ofs_data, 8);
WIDTH_IS(ockpt_v2_tensor_record, ofs_name, 8);
WIDTH_IS(ockpt_v2_tensor_record, rank, 1);
WIDTH_IS(ockpt_v2_tensors_head, num_tensors, 4);
WIDTH_IS(ockpt_v2_tensors_head, reserved, 4);
typedef char ockpt_v2_dims_are_read_as_4[OCKPT_V2_TENSOR_RECORD_DIMS_ELEM_SIZE == 4 ? 1 : -1];
#undef WIDTH_IS

/* x rounded up to a multiple of 64; saturates (never wraps) for x near 2^64. */
static uint64_t align64(uint64_t x) {
  uint64_t r = x % OCKPT_CONTAINER_ALIGNMENT;
  if (r == 0) return x;
  if (x > UINT64_MAX - OCKPT_CONTAINER_ALIGNMENT) return UINT64_MAX;
  return x + (OCKPT_CONTAINER_ALIGNMENT - r);
}

/* ---- errors: the field is built from up to three names and two indices -------------------- */

typedef ockpt_fname fname; /* ockpt_internal.h: F0, F1, F2 build one */

static void put_str(ockpt_result *r, size_t *n, const char *s) {
  for (; *s != '\0' && *n < OCKPT_FIELD_MAX - 1u; s++) r->field[(*n)++] = *s;
}

static void put_index(ockpt_result *r, size_t *n, int64_t v) {
  char digits[24];
  int d = 0;
  uint64_t u = (uint64_t)v;
  if (v < 0) return;
  do {
    digits[d++] = (char)('0' + (int)(u % 10u));
    u /= 10u;
  } while (u != 0);
  if (*n < OCKPT_FIELD_MAX - 1u) r->field[(*n)++] = '[';
  while (d > 0 && *n < OCKPT_FIELD_MAX - 1u) r->field[(*n)++] = digits[--d];
  if (*n < OCKPT_FIELD_MAX - 1u) r->field[(*n)++] = ']';
}

static ockpt_result ok(void) {
  ockpt_result r;
  size_t k;
  r.code = OCKPT_OK;
  for (k = 0; k < OCKPT_FIELD_MAX; k++) r.field[k] = '\0';
  r.offset = 0;
  r.message = "ok";
  return r;
}

static ockpt_result err(ockpt_error code, fname f, uint64_t offset, const char *message) {
  ockpt_result r = ok();
  size_t n = 0;
  r.code = code;
  r.offset = offset;
  r.message = message;
  put_str(&r, &n, f.a);
  put_index(&r, &n, f.i);
  put_str(&r, &n, f.b);
  put_index(&r, &n, f.j);
  put_str(&r, &n, f.c);
  r.field[n] = '\0';
  return r;
}

#define CHECK(expr)                        \
  do {                                     \
    ockpt_result check_r_ = (expr);        \
    if (check_r_.code != OCKPT_OK) return check_r_; \
  } while (0)

/* ---- UTF-8 (RFC 3629 / Unicode table 3-7: no overlongs, no surrogates, <= U+10FFFF) -------- */

static int utf8_valid(const ockpt_src *b, uint64_t at, uint64_t n) {
  uint64_t k = 0;
  while (k < n) {
    unsigned c = rd8(b, at + k), more, lo = 0x80, hi = 0xBF, m;
    if (c < 0x80) {
      k++;
      continue;
    }
    if (c >= 0xC2 && c <= 0xDF) {
      more = 1;
    } else if (c == 0xE0) {
      more = 2;
      lo = 0xA0;
    } else if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF) {
      more = 2;
    } else if (c == 0xED) {
      more = 2;
      hi = 0x9F;
    } else if (c == 0xF0) {
      more = 3;
      lo = 0x90;
    } else if (c >= 0xF1 && c <= 0xF3) {
      more = 3;
    } else if (c == 0xF4) {
      more = 3;
      hi = 0x8F;
    } else {
      return 0;
    }
    if (more > n - k - 1) return 0;
    for (m = 1; m <= more; m++) {
      unsigned d = rd8(b, at + k + m);
      if (d < lo || d > hi) return 0;
      lo = 0x80;
      hi = 0xBF;
    }
    k += more + 1;
  }
  return 1;
}

static int same_bytes(const ockpt_src *b, uint64_t x, uint64_t y, uint64_t n) {
  uint64_t k;
  for (k = 0; k < n; k++)
    if (rd8(b, x + k) != rd8(b, y + k)) return 0;
  return 1;
}

/* ---- dtypes (circle TensorType) ------------------------------------------------------------ */

static const struct {
  const char *name;
  unsigned size;
} dtypes[23] = {{"ggml_q8_1", 0}, {"ggml_q8_0", 0}, {"ggml_q4_1", 0}, {"ggml_q4_0", 0},
                {"uint4", 0},     {"float32", 4},   {"float16", 2},   {"int32", 4},
                {"uint8", 1},     {"int64", 8},     {"string", 0},    {"bool", 1},
                {"int16", 2},     {"complex64", 8}, {"int8", 1},      {"float64", 8},
                {"complex128", 16}, {"uint64", 8},  {"resource", 0},  {"variant", 0},
                {"uint32", 4},    {"uint16", 2},    {"int4", 0}}; /* codes -5 .. 17 */

const char *ockpt_dtype_name(int dtype) {
  if (dtype < -5 || dtype > 17) return NULL;
  return dtypes[dtype + 5].name;
}

unsigned ockpt_dtype_size(int dtype) {
  if (dtype < -5 || dtype > 17) return 0;
  return dtypes[dtype + 5].size;
}

/* ---- the padding between structures -------------------------------------------------------- */

static ockpt_result check_padding(const ockpt_src *buf, uint64_t from, uint64_t to) {
  uint64_t k;
  for (k = from; k < to; k++)
    if (rd8(buf, k) != 0)
      return err(OCKPT_E_NONZERO_PADDING, F0("padding"), k, "alignment padding byte is not 0");
  return ok();
}

/* ---- a pool of names / keys / values: back to back from its start, filling its section ---- */

typedef struct pool {
  uint64_t expected; /* where the next item must start */
  uint64_t end;      /* the section's end */
} pool;

static ockpt_result pool_item(pool *p, uint64_t start, uint64_t len, fname field, uint64_t at,
                              const char *what) {
  (void)what;
  if (start < p->expected)
    return err(OCKPT_E_OVERLAP, field, at, "a name, key or value overlaps the previous one");
  if (start > p->expected)
    return err(OCKPT_E_GAP, field, at, "a name, key or value does not follow the previous one");
  /* start == expected <= end: the previous items ended inside the section */
  if (len > p->end - start)
    return err(OCKPT_E_OFFSET_OUT_OF_BOUNDS, field, at,
               "a name, key or value ends past the end of its section");
  p->expected = start + len;
  return ok();
}

static ockpt_result pool_end(const pool *p, const char *what) {
  if (p->expected != p->end)
    return err(OCKPT_E_GAP, F0(what), p->expected,
               "bytes at the end of the section belong to nothing");
  return ok();
}

/* ---- heapsort of u64 keys with a caller-supplied order -------------------------------------- */

typedef ockpt_less_fn less_fn; /* ockpt_internal.h */

static void sift(uint64_t *a, size_t root, size_t n, less_fn less, const void *ctx) {
  for (;;) {
    size_t child = 2 * root + 1;
    uint64_t t;
    if (child >= n) return;
    if (child + 1 < n && less(ctx, a[child], a[child + 1])) child++;
    if (!less(ctx, a[root], a[child])) return;
    t = a[root];
    a[root] = a[child];
    a[child] = t;
    root = child;
  }
}

static void heapsort_by(uint64_t *a, size_t n, less_fn less, const void *ctx) {
  size_t k;
  uint64_t t;
  if (n < 2) return;
  for (k = n / 2; k > 0; k--) sift(a, k - 1, n, less, ctx);
  for (k = n - 1; k > 0; k--) {
    t = a[0];
    a[0] = a[k];
    a[k] = t;
    sift(a, 0, k, less, ctx);
  }
}

static int less_u64(const void *ctx, uint64_t a, uint64_t b) {
  (void)ctx;
  return a < b;
}

/* ---- the reader's state ----------------------------------------------------------------------- */

typedef ockpt_container_ctx v2; /* ockpt_internal.h */

/* ---- header (H1-H5) ---------------------------------------------------------------------------- */

static ockpt_result check_header(const v2 *c) {
  const ockpt_src *buf = &c->src;
  static const uint8_t zero4[4] = {0, 0, 0, 0};
  uint32_t crc;
  uint64_t len_file, ofs_table, k;
  if (c->S < OCKPT_CONTAINER_HEADER_SIZE)
    return err(OCKPT_E_TRUNCATED_HEADER, F0("header"), 0,
               "file shorter than the 64-byte schema-2 header");
  crc = ockpt_src_crc32c(buf, 0, 0, OCKPT_CONTAINER_HEADER_AT_HEADER_CRC);
  crc = ockpt_crc32c(crc, zero4, 4);
  crc = ockpt_src_crc32c(buf, crc, OCKPT_CONTAINER_HEADER_AT_LEN_FILE, OCKPT_CONTAINER_HEADER_SIZE - OCKPT_CONTAINER_HEADER_AT_LEN_FILE);
  if (crc != rd32(buf, OCKPT_CONTAINER_HEADER_AT_HEADER_CRC))
    return err(OCKPT_E_HEADER_CHECKSUM, F0("header_crc"), OCKPT_CONTAINER_HEADER_AT_HEADER_CRC, "header CRC-32C differs");
  if (rd8(buf, OCKPT_CONTAINER_HEADER_AT_RESERVED0) != 0)
    return err(OCKPT_E_RESERVED_NONZERO, F0("reserved0"), OCKPT_CONTAINER_HEADER_AT_RESERVED0, "reserved0 is not 0");
  for (k = OCKPT_CONTAINER_HEADER_AT_RESERVED1; k < OCKPT_CONTAINER_HEADER_SIZE; k++)
    if (rd8(buf, k) != 0)
      return err(OCKPT_E_RESERVED_NONZERO, F0("reserved1"), k, "reserved header byte is not 0");
  len_file = rd64(buf, OCKPT_CONTAINER_HEADER_AT_LEN_FILE);
  ofs_table = rd64(buf, OCKPT_CONTAINER_HEADER_AT_OFS_SECTION_TABLE);
  if (c->S < len_file)
    return err(OCKPT_E_TRUNCATED_FILE, F0("len_file"), OCKPT_CONTAINER_HEADER_AT_LEN_FILE, "the file is shorter than len_file");
  if (c->S > len_file)
    return err(OCKPT_E_TRAILING_BYTES, F0("file"), len_file, "bytes follow len_file bytes");
  if (ofs_table < OCKPT_CONTAINER_HEADER_SIZE)
    return err(OCKPT_E_OVERLAP, F0("ofs_section_table"), OCKPT_CONTAINER_HEADER_AT_OFS_SECTION_TABLE,
               "the section table overlaps the header");
  if (ofs_table > OCKPT_CONTAINER_HEADER_SIZE)
    return err(OCKPT_E_GAP, F0("ofs_section_table"), OCKPT_CONTAINER_HEADER_AT_OFS_SECTION_TABLE,
               "the section table does not start right after the header");
  return ok();
}

/* ---- section table (T1-T5) ------------------------------------------------------------------- */

static int known_kind(uint32_t kind) {
  return kind >= OCKPT_CONTAINER_KIND_TENSORS && kind <= OCKPT_CONTAINER_KIND_ORIGIN;
}

/* Rule T4i: the order key of a kind is tensors 1, optimizer 2, state 3, origin 4, any other
 * kind k (5, k), data 6. Returns <0, 0, >0 as key(a) is below, equal to, above key(b). */
static int order_cmp(uint32_t a, uint32_t b) {
  static const unsigned rank[6] = {0, 1, 2, 3, 6, 4};
  unsigned ra = known_kind(a) ? rank[a] : 5, rb = known_kind(b) ? rank[b] : 5;
  if (ra != rb) return ra < rb ? -1 : 1;
  if (ra != 5 || a == b) return 0;
  return a < b ? -1 : 1;
}

static ockpt_result check_sections(const v2 *c) {
  const ockpt_src *buf = &c->src;
  uint64_t S = c->S, n, table_end, pos;
  uint32_t i, prev_kind = 0;
  n = rd32(buf, OCKPT_CONTAINER_HEADER_AT_NUM_SECTIONS);
  if (n > OCKPT_CONTAINER_MAX_SECTIONS)
    return err(OCKPT_E_LIMIT_EXCEEDED, F0("num_sections"), OCKPT_CONTAINER_HEADER_AT_NUM_SECTIONS, "more than 64 sections");
  table_end = OCKPT_CONTAINER_HEADER_SIZE + OCKPT_CONTAINER_SECTION_ENTRY_SIZE * n;
  if (table_end > S)
    return err(OCKPT_E_COUNT_EXCEEDS_FILE, F0("num_sections"), OCKPT_CONTAINER_HEADER_AT_NUM_SECTIONS,
               "the section table does not fit in the file");
  if (ockpt_src_crc32c(buf, 0, OCKPT_CONTAINER_HEADER_SIZE, table_end - OCKPT_CONTAINER_HEADER_SIZE) !=
      rd32(buf, OCKPT_CONTAINER_HEADER_AT_SECTION_TABLE_CRC))
    return err(OCKPT_E_SECTION_TABLE_CHECKSUM, F0("section_table_crc"), OCKPT_CONTAINER_HEADER_AT_SECTION_TABLE_CRC,
               "section table CRC-32C differs");
  c->info->num_sections = (uint32_t)n;
  pos = table_end;
  for (i = 0; i < n; i++) {
    uint64_t e = OCKPT_CONTAINER_HEADER_SIZE + OCKPT_CONTAINER_SECTION_ENTRY_SIZE * (uint64_t)i;
    uint32_t kind = rd32(buf, e + OCKPT_CONTAINER_SECTION_ENTRY_AT_KIND), flags = rd32(buf, e + OCKPT_CONTAINER_SECTION_ENTRY_AT_FLAGS);
    uint64_t start = rd64(buf, e + OCKPT_CONTAINER_SECTION_ENTRY_AT_OFS_BODY), length = rd64(buf, e + OCKPT_CONTAINER_SECTION_ENTRY_AT_LEN_BODY);
    ockpt_sec_span *span = NULL;
    if (flags & ~OCKPT_CONTAINER_FLAG_REQUIRED)
      return err(OCKPT_E_RESERVED_NONZERO, F1("sections", i, ".flags"), e + OCKPT_CONTAINER_SECTION_ENTRY_AT_FLAGS,
                 "reserved section flag bits are set");
    if (rd32(buf, e + OCKPT_CONTAINER_SECTION_ENTRY_AT_RESERVED) != 0)
      return err(OCKPT_E_RESERVED_NONZERO, F1("sections", i, ".reserved"), e + OCKPT_CONTAINER_SECTION_ENTRY_AT_RESERVED,
                 "reserved field is not 0");
    if (start % OCKPT_CONTAINER_ALIGNMENT != 0)
      return err(OCKPT_E_MISALIGNED, F1("sections", i, ".ofs_body"), e + OCKPT_CONTAINER_SECTION_ENTRY_AT_OFS_BODY,
                 "section does not start at a multiple of 64");
    if (start > S)
      return err(OCKPT_E_OFFSET_OUT_OF_BOUNDS, F1("sections", i, ".ofs_body"), e + OCKPT_CONTAINER_SECTION_ENTRY_AT_OFS_BODY,
                 "section starts past the end of the file");
    if (length > S - start)
      return err(OCKPT_E_OFFSET_OUT_OF_BOUNDS, F1("sections", i, ".len_body"), e + OCKPT_CONTAINER_SECTION_ENTRY_AT_LEN_BODY,
                 "section ends past the end of the file");
    if (start < pos)
      return err(OCKPT_E_OVERLAP, F1("sections", i, ".ofs_body"), e + OCKPT_CONTAINER_SECTION_ENTRY_AT_OFS_BODY,
                 "section starts before the end of the previous structure");
    if (start > align64(pos))
      return err(OCKPT_E_GAP, F1("sections", i, ".ofs_body"), e + OCKPT_CONTAINER_SECTION_ENTRY_AT_OFS_BODY,
                 "section starts after the alignment padding that follows the previous one");
    CHECK(check_padding(buf, pos, start));
    if (!(c->data_crc_later && kind == OCKPT_CONTAINER_KIND_DATA) &&
        ockpt_src_crc32c(buf, 0, start, length) != rd32(buf, e + OCKPT_CONTAINER_SECTION_ENTRY_AT_CRC))
      return err(OCKPT_E_SECTION_CHECKSUM, F1("sections", i, ".crc"), e + OCKPT_CONTAINER_SECTION_ENTRY_AT_CRC,
                 "section CRC-32C differs");
    /* g */
    if (!known_kind(kind) && (flags & OCKPT_CONTAINER_FLAG_REQUIRED))
      return err(OCKPT_E_UNKNOWN_REQUIRED_SECTION, F1("sections", i, ".kind"), e,
                 "a section of unknown kind has the must-understand flag");
    /* h: REQUIRED set on kinds 1-4, clear on kind 5 */
    if (known_kind(kind) &&
        (flags & OCKPT_CONTAINER_FLAG_REQUIRED) != (kind == OCKPT_CONTAINER_KIND_ORIGIN ? 0u : 1u))
      return err(OCKPT_E_BAD_SECTION_FLAGS, F1("sections", i, ".flags"), e + OCKPT_CONTAINER_SECTION_ENTRY_AT_FLAGS,
                 "the REQUIRED flag of a defined kind differs from the specification");
    /* i: order keys strictly ascending */
    if (i > 0) {
      int cmp = order_cmp(kind, prev_kind);
      if (cmp == 0)
        return err(OCKPT_E_DUPLICATE_SECTION, F1("sections", i, ".kind"), e,
                   "two sections of the same kind");
      if (cmp < 0)
        return err(OCKPT_E_SECTION_ORDER, F1("sections", i, ".kind"), e,
                   "sections are not in the order tensors, optimizer, state, origin, "
                   "other kinds ascending, data");
    }
    if (known_kind(kind)) {
      switch (kind) {
      case OCKPT_CONTAINER_KIND_TENSORS: span = &c->info->tensors; break;
      case OCKPT_CONTAINER_KIND_OPTIMIZER: span = &c->info->optimizer; break;
      case OCKPT_CONTAINER_KIND_STATE: span = &c->info->state; break;
      case OCKPT_CONTAINER_KIND_DATA: span = &c->info->data; break;
      default: span = &c->info->origin; break;
      }
      span->present = 1;
      span->table_index = i;
      span->offset = start;
      span->length = length;
    }
    prev_kind = kind;
    pos = start + length;
  }
  if (pos != S) return err(OCKPT_E_TRAILING_BYTES, F0("file"), pos, "bytes follow the last section");
  return ok();
}

/* ---- uniqueness of u32 values among records: the first record that repeats an earlier one --- */

/* Record k's value: `at(k) + off`; only records whose flags (u16 at at(k) + 8) have `mask`
 * (mask 0: every record). O(n^2) comparisons, or O(n log n) with scratch. Returns the record index, or -1 when all values differ. */
static int64_t first_repeat(const v2 *c, uint64_t base, uint32_t n, uint64_t off, unsigned mask) {
  const ockpt_src *buf = &c->src;
  uint32_t k, j;
  if (c->scratch != NULL && c->scratch_count >= n) {
    /* keys value << 32 | k, sorted: in each run of equal values the second key has the
     * smallest record index that repeats an earlier record's value. */
    uint64_t *keys = c->scratch;
    size_t p = 0, q;
    int64_t best = -1;
    for (k = 0; k < n; k++) {
      uint64_t r = base + OCKPT_V2_TENSOR_RECORD_SIZE * (uint64_t)k;
      if (mask != 0 && !(rd16(buf, r + OCKPT_V2_TENSOR_RECORD_AT_FLAGS) & mask)) continue;
      keys[p++] = ((uint64_t)rd32(buf, r + off) << 32) | k;
    }
    heapsort_by(keys, p, less_u64, NULL);
    for (q = 1; q < p; q++)
      if (keys[q] >> 32 == keys[q - 1] >> 32 && (q < 2 || keys[q - 1] >> 32 != keys[q - 2] >> 32)) {
        int64_t rec = (int64_t)(keys[q] & 0xFFFFFFFFu);
        if (best < 0 || rec < best) best = rec;
      }
    return best;
  }
  for (k = 1; k < n; k++) {
    uint64_t r = base + OCKPT_V2_TENSOR_RECORD_SIZE * (uint64_t)k;
    uint32_t v;
    if (mask != 0 && !(rd16(buf, r + OCKPT_V2_TENSOR_RECORD_AT_FLAGS) & mask)) continue;
    v = rd32(buf, r + off);
    for (j = 0; j < k; j++) {
      uint64_t q = base + OCKPT_V2_TENSOR_RECORD_SIZE * (uint64_t)j;
      if (mask != 0 && !(rd16(buf, q + OCKPT_V2_TENSOR_RECORD_AT_FLAGS) & mask)) continue;
      if (rd32(buf, q + off) == v) return k;
    }
  }
  return -1;
}

/* ---- tensors section (R0-R11) ------------------------------------------------------------- */

static ockpt_result check_tensors(const v2 *c) {
  const ockpt_src *buf = &c->src;
  const ockpt_sec_span *sec = &c->info->tensors;
  uint64_t s = sec->offset, L = sec->length, base, n;
  uint32_t k, j;
  int64_t rep;
  pool p;
  if (L < OCKPT_V2_TENSORS_HEAD_SIZE)
    return err(OCKPT_E_COUNT_EXCEEDS_FILE, F0("tensors.num_tensors"), s,
               "the tensors section is shorter than its 8-byte head");
  if (rd32(buf, s + OCKPT_V2_TENSORS_HEAD_AT_RESERVED) != 0)
    return err(OCKPT_E_RESERVED_NONZERO, F0("tensors.reserved"), s + OCKPT_V2_TENSORS_HEAD_AT_RESERVED, "reserved field is not 0");
  n = rd32(buf, s + OCKPT_V2_TENSORS_HEAD_AT_NUM_TENSORS);
  if (n == 0)
    return err(OCKPT_E_EMPTY_SECTION, F0("tensors.num_tensors"), s,
               "a tensors section without records");
  if (n > OCKPT_CONTAINER_MAX_TENSORS)
    return err(OCKPT_E_LIMIT_EXCEEDED, F0("tensors.num_tensors"), s, "more than 2^24 tensors");
  if (OCKPT_V2_TENSORS_HEAD_SIZE + OCKPT_V2_TENSOR_RECORD_SIZE * n > L)
    return err(OCKPT_E_COUNT_EXCEEDS_FILE, F0("tensors.num_tensors"), s,
               "the tensor records do not fit in the tensors section");
  base = s + OCKPT_V2_TENSORS_HEAD_SIZE;
#define REC(k) (base + OCKPT_V2_TENSOR_RECORD_SIZE * (uint64_t)(k))
  /* R2 */
  for (k = 0; k < n; k++)
    if (rd16(buf, REC(k) + OCKPT_V2_TENSOR_RECORD_AT_FLAGS) & ~0xFu)
      return err(OCKPT_E_RESERVED_NONZERO, F1("tensors", k, ".flags"), REC(k) + OCKPT_V2_TENSOR_RECORD_AT_FLAGS,
                 "reserved tensor flag bits are set");
  /* R3: field by field, each over all records */
  for (k = 0; k < n; k++)
    if (!(rd16(buf, REC(k) + OCKPT_V2_TENSOR_RECORD_AT_FLAGS) & OCKPT_V2_HAS_MODEL_INDEX) && rd32(buf, REC(k) + OCKPT_V2_TENSOR_RECORD_AT_MODEL_INDEX) != 0)
      return err(OCKPT_E_RESERVED_NONZERO, F1("tensors", k, ".model_index"), REC(k) + OCKPT_V2_TENSOR_RECORD_AT_MODEL_INDEX,
                 "model_index must be 0 when its flag is clear");
  for (k = 0; k < n; k++)
    if (!(rd16(buf, REC(k) + OCKPT_V2_TENSOR_RECORD_AT_FLAGS) & OCKPT_V2_HAS_DTYPE) && rd8(buf, REC(k) + OCKPT_V2_TENSOR_RECORD_AT_DTYPE) != 0)
      return err(OCKPT_E_RESERVED_NONZERO, F1("tensors", k, ".dtype"), REC(k) + OCKPT_V2_TENSOR_RECORD_AT_DTYPE,
                 "dtype must be 0 when its flag is clear");
  for (k = 0; k < n; k++)
    if (!(rd16(buf, REC(k) + OCKPT_V2_TENSOR_RECORD_AT_FLAGS) & OCKPT_V2_HAS_SHAPE) && rd8(buf, REC(k) + OCKPT_V2_TENSOR_RECORD_AT_RANK) != 0)
      return err(OCKPT_E_RESERVED_NONZERO, F1("tensors", k, ".rank"), REC(k) + OCKPT_V2_TENSOR_RECORD_AT_RANK,
                 "rank must be 0 when its flag is clear");
  for (k = 0; k < n; k++)
    if (!(rd16(buf, REC(k) + OCKPT_V2_TENSOR_RECORD_AT_FLAGS) & OCKPT_V2_HAS_NAME) && rd32(buf, REC(k) + OCKPT_V2_TENSOR_RECORD_AT_LEN_NAME) != 0)
      return err(OCKPT_E_RESERVED_NONZERO, F1("tensors", k, ".len_name"), REC(k) + OCKPT_V2_TENSOR_RECORD_AT_LEN_NAME,
                 "len_name must be 0 when its flag is clear");
  for (k = 0; k < n; k++)
    if (!(rd16(buf, REC(k) + OCKPT_V2_TENSOR_RECORD_AT_FLAGS) & OCKPT_V2_HAS_NAME) && rd64(buf, REC(k) + OCKPT_V2_TENSOR_RECORD_AT_OFS_NAME) != 0)
      return err(OCKPT_E_RESERVED_NONZERO, F1("tensors", k, ".ofs_name"), REC(k) + OCKPT_V2_TENSOR_RECORD_AT_OFS_NAME,
                 "ofs_name must be 0 when its flag is clear");
  /* R4 */
  for (k = 0; k < n; k++)
    if (rd8(buf, REC(k) + OCKPT_V2_TENSOR_RECORD_AT_RANK) > OCKPT_CONTAINER_MAX_RANK)
      return err(OCKPT_E_LIMIT_EXCEEDED, F1("tensors", k, ".rank"), REC(k) + OCKPT_V2_TENSOR_RECORD_AT_RANK,
                 "rank exceeds 8");
  /* R5 */
  for (k = 0; k < n; k++)
    for (j = rd8(buf, REC(k) + OCKPT_V2_TENSOR_RECORD_AT_RANK); j < OCKPT_CONTAINER_MAX_RANK; j++)
      if (rd32(buf, REC(k) + OCKPT_V2_TENSOR_RECORD_AT_DIMS + OCKPT_V2_TENSOR_RECORD_DIMS_ELEM_SIZE * j) != 0)
        return err(OCKPT_E_RESERVED_NONZERO, F2("tensors", k, ".dims", j, ""),
                   REC(k) + OCKPT_V2_TENSOR_RECORD_AT_DIMS + OCKPT_V2_TENSOR_RECORD_DIMS_ELEM_SIZE * j, "a dim beyond the rank is not 0");
  /* R6 */
  for (k = 0; k < n; k++)
    if ((rd16(buf, REC(k) + OCKPT_V2_TENSOR_RECORD_AT_FLAGS) & OCKPT_V2_HAS_DTYPE) &&
        ockpt_dtype_name((int8_t)rd8(buf, REC(k) + OCKPT_V2_TENSOR_RECORD_AT_DTYPE)) == NULL)
      return err(OCKPT_E_BAD_DTYPE, F1("tensors", k, ".dtype"), REC(k) + OCKPT_V2_TENSOR_RECORD_AT_DTYPE,
                 "dtype is not a circle TensorType");
  /* R7 */
  for (k = 0; k < n; k++) {
    uint32_t ln = rd32(buf, REC(k) + OCKPT_V2_TENSOR_RECORD_AT_LEN_NAME);
    if ((rd16(buf, REC(k) + OCKPT_V2_TENSOR_RECORD_AT_FLAGS) & OCKPT_V2_HAS_NAME) && (ln == 0 || ln > OCKPT_CONTAINER_MAX_NAME_LEN))
      return err(OCKPT_E_LIMIT_EXCEEDED, F1("tensors", k, ".len_name"), REC(k) + OCKPT_V2_TENSOR_RECORD_AT_LEN_NAME,
                 "a name has 1..1024 bytes");
  }
  /* R8 */
  p.expected = REC(n);
  p.end = s + L;
  for (k = 0; k < n; k++)
    if (rd16(buf, REC(k) + OCKPT_V2_TENSOR_RECORD_AT_FLAGS) & OCKPT_V2_HAS_NAME)
      CHECK(pool_item(&p, rd64(buf, REC(k) + OCKPT_V2_TENSOR_RECORD_AT_OFS_NAME), rd32(buf, REC(k) + OCKPT_V2_TENSOR_RECORD_AT_LEN_NAME),
                      F1("tensors", k, ".ofs_name"), REC(k) + OCKPT_V2_TENSOR_RECORD_AT_OFS_NAME, "tensor name"));
  CHECK(pool_end(&p, "tensors.names"));
  /* R9 */
  for (k = 1; k < n; k++) {
    uint32_t here = rd32(buf, REC(k) + OCKPT_V2_TENSOR_RECORD_AT_INDEX), before = rd32(buf, REC(k - 1) + OCKPT_V2_TENSOR_RECORD_AT_INDEX);
    if (here == before)
      return err(OCKPT_E_DUPLICATE_TENSOR_INDEX, F1("tensors", k, ".index"), REC(k),
                 "two tensor records have the same index");
    if (here < before)
      return err(OCKPT_E_TENSOR_ORDER, F1("tensors", k, ".index"), REC(k),
                 "tensor records are not in ascending index order");
  }
  rep = first_repeat(c, base, (uint32_t)n, OCKPT_V2_TENSOR_RECORD_AT_MODEL_INDEX,
                     OCKPT_V2_HAS_MODEL_INDEX);
  if (rep >= 0)
    return err(OCKPT_E_DUPLICATE_TENSOR_INDEX, F1("tensors", rep, ".model_index"),
               REC(rep) + OCKPT_V2_TENSOR_RECORD_AT_MODEL_INDEX,
               "two tensor records have the same model index");
  /* R10 */
  for (k = 0; k < n; k++) {
    uint64_t o = rd64(buf, REC(k) + OCKPT_V2_TENSOR_RECORD_AT_OFS_NAME);
    uint32_t ln = rd32(buf, REC(k) + OCKPT_V2_TENSOR_RECORD_AT_LEN_NAME);
    if (!(rd16(buf, REC(k) + OCKPT_V2_TENSOR_RECORD_AT_FLAGS) & OCKPT_V2_HAS_NAME)) continue;
    if (!utf8_valid(buf, o, ln))
      return err(OCKPT_E_BAD_UTF8, F1("tensors", k, ".name"), o, "a name is not UTF-8");
    for (j = 0; j < k; j++) {
      if (!(rd16(buf, REC(j) + OCKPT_V2_TENSOR_RECORD_AT_FLAGS) & OCKPT_V2_HAS_NAME) || rd32(buf, REC(j) + OCKPT_V2_TENSOR_RECORD_AT_LEN_NAME) != ln) continue;
      if (same_bytes(buf, rd64(buf, REC(j) + OCKPT_V2_TENSOR_RECORD_AT_OFS_NAME), o, ln))
        return err(OCKPT_E_DUPLICATE_TENSOR_NAME, F1("tensors", k, ".name"), o,
                   "two tensors have the same name");
    }
  }
  /* R11: product(dims) * size == len_data, without overflow */
  for (k = 0; k < n; k++) {
    unsigned fl = rd16(buf, REC(k) + OCKPT_V2_TENSOR_RECORD_AT_FLAGS), elem, rank = rd8(buf, REC(k) + OCKPT_V2_TENSOR_RECORD_AT_RANK);
    uint64_t len = rd64(buf, REC(k) + OCKPT_V2_TENSOR_RECORD_AT_LEN_DATA), prod;
    int zero = 0, over = 0;
    if ((fl & (OCKPT_V2_HAS_DTYPE | OCKPT_V2_HAS_SHAPE)) !=
        (OCKPT_V2_HAS_DTYPE | OCKPT_V2_HAS_SHAPE))
      continue;
    elem = ockpt_dtype_size((int8_t)rd8(buf, REC(k) + OCKPT_V2_TENSOR_RECORD_AT_DTYPE));
    if (elem == 0) continue;
    for (j = 0; j < rank; j++)
      if (rd32(buf, REC(k) + OCKPT_V2_TENSOR_RECORD_AT_DIMS + OCKPT_V2_TENSOR_RECORD_DIMS_ELEM_SIZE * j) == 0) zero = 1;
    prod = elem;
    if (!zero)
      for (j = 0; j < rank && !over; j++) {
        uint64_t d = rd32(buf, REC(k) + OCKPT_V2_TENSOR_RECORD_AT_DIMS + OCKPT_V2_TENSOR_RECORD_DIMS_ELEM_SIZE * j);
        if (prod > len / d) over = 1; /* prod * d > len (d >= 1) */
        else prod *= d;
      }
    if (zero ? len != 0 : (over || prod != len))
      return err(OCKPT_E_SHAPE_MISMATCH, F1("tensors", k, ".len_data"), REC(k) + OCKPT_V2_TENSOR_RECORD_AT_LEN_DATA,
                 "len_data differs from the product of the dims times the element size");
  }
#undef REC
  c->info->num_tensors = (uint32_t)n;
  return ok();
}

/* ---- optimizer section (O1-O10) ---------------------------------------------------------- */

static const char *const known_slots[3][2] = {{"", ""}, {"momentum", ""}, {"m", "v"}};
static const uint32_t known_k[3] = {0, 1, 2};

static int is_cstr(const ockpt_src *b, uint64_t at, uint64_t n, const char *s) {
  uint64_t k;
  for (k = 0; k < n; k++)
    if (s[k] == '\0' || (uint8_t)s[k] != rd8(b, at + k)) return 0;
  return s[n] == '\0';
}

static ockpt_result check_optimizer(const v2 *c, unsigned entry_size) {
  const ockpt_src *buf = &c->src;
  const ockpt_sec_span *sec = &c->info->optimizer;
  uint64_t s = sec->offset, L = sec->length, K, T, desc, entries, namepool, need;
  uint32_t kind, j, t;
  pool p;
  if (L < OCKPT_CONTAINER_OPTIMIZER_HEAD_SIZE)
    return err(OCKPT_E_COUNT_EXCEEDS_FILE, F0("optimizer.num_slots"), s + OCKPT_CONTAINER_OPTIMIZER_HEAD_AT_NUM_SLOTS,
               "the optimizer section is shorter than its 16-byte head");
  if (rd32(buf, s + OCKPT_CONTAINER_OPTIMIZER_HEAD_AT_RESERVED) != 0)
    return err(OCKPT_E_RESERVED_NONZERO, F0("optimizer.reserved"), s + OCKPT_CONTAINER_OPTIMIZER_HEAD_AT_RESERVED,
               "reserved field is not 0");
  kind = rd32(buf, s + OCKPT_CONTAINER_OPTIMIZER_HEAD_AT_KIND);
  K = rd32(buf, s + OCKPT_CONTAINER_OPTIMIZER_HEAD_AT_NUM_SLOTS);
  T = rd32(buf, s + OCKPT_CONTAINER_OPTIMIZER_HEAD_AT_NUM_TENSORS);
  if (K > OCKPT_CONTAINER_MAX_SLOTS)
    return err(OCKPT_E_LIMIT_EXCEEDED, F0("optimizer.num_slots"), s + OCKPT_CONTAINER_OPTIMIZER_HEAD_AT_NUM_SLOTS, "more than 16 slots");
  if (T != c->info->num_tensors)
    return err(OCKPT_E_BAD_OPTIMIZER, F0("optimizer.num_tensors"), s + OCKPT_CONTAINER_OPTIMIZER_HEAD_AT_NUM_TENSORS,
               "num_tensors differs from the tensors section's");
  /* K <= 16 and T <= 2^24: need < 2^33 */
  need = OCKPT_CONTAINER_OPTIMIZER_HEAD_SIZE + OCKPT_CONTAINER_SLOT_DESCRIPTOR_SIZE * K + (uint64_t)entry_size * K * T;
  if (need > L)
    return err(OCKPT_E_COUNT_EXCEEDS_FILE, F0("optimizer.num_slots"), s + OCKPT_CONTAINER_OPTIMIZER_HEAD_AT_NUM_SLOTS,
               "the slot descriptors and entries do not fit in the optimizer section");
  if (kind <= OCKPT_CONTAINER_OPT_ADAM && known_k[kind] != K)
    return err(OCKPT_E_BAD_OPTIMIZER, F0("optimizer.num_slots"), s + OCKPT_CONTAINER_OPTIMIZER_HEAD_AT_NUM_SLOTS,
               "a known optimizer kind with another number of slots");
  desc = s + OCKPT_CONTAINER_OPTIMIZER_HEAD_SIZE;
  entries = desc + OCKPT_CONTAINER_SLOT_DESCRIPTOR_SIZE * K;
  namepool = entries + (uint64_t)entry_size * K * T;
#define DESC(j) (desc + OCKPT_CONTAINER_SLOT_DESCRIPTOR_SIZE * (uint64_t)(j))
  for (j = 0; j < K; j++)
    if (rd32(buf, DESC(j) + OCKPT_CONTAINER_SLOT_DESCRIPTOR_AT_RESERVED) != 0)
      return err(OCKPT_E_RESERVED_NONZERO, F1("optimizer.slots", j, ".reserved"), DESC(j) + OCKPT_CONTAINER_SLOT_DESCRIPTOR_AT_RESERVED,
                 "reserved field is not 0");
  for (j = 0; j < K; j++) {
    uint32_t ln = rd32(buf, DESC(j) + OCKPT_CONTAINER_SLOT_DESCRIPTOR_AT_LEN_NAME);
    if (ln == 0 || ln > OCKPT_CONTAINER_MAX_NAME_LEN)
      return err(OCKPT_E_LIMIT_EXCEEDED, F1("optimizer.slots", j, ".len_name"), DESC(j) + OCKPT_CONTAINER_SLOT_DESCRIPTOR_AT_LEN_NAME,
                 "a slot name has 1..1024 bytes");
  }
  p.expected = namepool;
  p.end = s + L;
  for (j = 0; j < K; j++)
    CHECK(pool_item(&p, rd64(buf, DESC(j) + OCKPT_CONTAINER_SLOT_DESCRIPTOR_AT_OFS_NAME), rd32(buf, DESC(j) + OCKPT_CONTAINER_SLOT_DESCRIPTOR_AT_LEN_NAME),
                    F1("optimizer.slots", j, ".ofs_name"), DESC(j), "slot name"));
  CHECK(pool_end(&p, "optimizer.names"));
  for (j = 0; j < K; j++) {
    uint64_t o = rd64(buf, DESC(j) + OCKPT_CONTAINER_SLOT_DESCRIPTOR_AT_OFS_NAME);
    uint32_t ln = rd32(buf, DESC(j) + OCKPT_CONTAINER_SLOT_DESCRIPTOR_AT_LEN_NAME), q;
    if (!utf8_valid(buf, o, ln))
      return err(OCKPT_E_BAD_UTF8, F1("optimizer.slots", j, ".name"), o,
                 "a slot name is not UTF-8");
    for (q = 0; q < j; q++)
      if (rd32(buf, DESC(q) + OCKPT_CONTAINER_SLOT_DESCRIPTOR_AT_LEN_NAME) == ln && same_bytes(buf, rd64(buf, DESC(q) + OCKPT_CONTAINER_SLOT_DESCRIPTOR_AT_OFS_NAME), o, ln))
        return err(OCKPT_E_DUPLICATE_SLOT_NAME, F1("optimizer.slots", j, ".name"), o,
                   "two slots have the same name");
  }
  if (kind <= OCKPT_CONTAINER_OPT_ADAM)
    for (j = 0; j < K; j++)
      if (!is_cstr(buf, rd64(buf, DESC(j) + OCKPT_CONTAINER_SLOT_DESCRIPTOR_AT_OFS_NAME), rd32(buf, DESC(j) + OCKPT_CONTAINER_SLOT_DESCRIPTOR_AT_LEN_NAME), known_slots[kind][j]))
        return err(OCKPT_E_BAD_OPTIMIZER, F0("optimizer.slots"), desc,
                   "a known optimizer kind with other slot names");
#undef DESC
  /* O10 (schema 2 only: a schema-3 entry is its size alone, SPEC.md 7.2) */
  for (j = 0; j < K && entry_size == OCKPT_V2_SLOT_ENTRY_SIZE; j++)
    for (t = 0; t < T; t++) {
      uint64_t e = entries + OCKPT_V2_SLOT_ENTRY_SIZE * ((uint64_t)j * T + t);
      if (rd64(buf, e + OCKPT_V2_SLOT_ENTRY_AT_OFS_DATA) == OCKPT_CONTAINER_NO_STATE && rd64(buf, e + OCKPT_V2_SLOT_ENTRY_AT_LEN_DATA) != 0)
        return err(OCKPT_E_BAD_SLOT_ENTRY, F2("optimizer.slots", j, "", t, ".len_data"), e + OCKPT_V2_SLOT_ENTRY_AT_LEN_DATA,
                   "an entry marked NO_STATE has a non-zero size");
    }
  c->info->optimizer_kind = kind;
  c->info->num_slots = (uint32_t)K;
  return ok();
}

/* ---- state section (V1-V9) --------------------------------------------------------------- */

static const struct {
  const char *key;
  uint8_t type;
} well_known[8] = {{"step", 0},          {"epoch", 0},       {"iteration", 0},
                   {"batch_size", 0},    {"learning_rate", 1}, {"best_metric", 1},
                   {"loss_type", 2},     {"log_dir", 2}};

static ockpt_result check_state(const v2 *c) {
  const ockpt_src *buf = &c->src;
  const ockpt_sec_span *sec = &c->info->state;
  uint64_t s = sec->offset, L = sec->length, base, n;
  uint32_t k, q;
  pool p;
  if (L < OCKPT_CONTAINER_STATE_HEAD_SIZE)
    return err(OCKPT_E_COUNT_EXCEEDS_FILE, F0("state.num_entries"), s,
               "the state section is shorter than its 8-byte head");
  if (rd32(buf, s + OCKPT_CONTAINER_STATE_HEAD_AT_RESERVED) != 0)
    return err(OCKPT_E_RESERVED_NONZERO, F0("state.reserved"), s + OCKPT_CONTAINER_STATE_HEAD_AT_RESERVED, "reserved field is not 0");
  n = rd32(buf, s + OCKPT_CONTAINER_STATE_HEAD_AT_NUM_ENTRIES);
  if (n == 0)
    return err(OCKPT_E_EMPTY_SECTION, F0("state.num_entries"), s,
               "a state section without entries");
  if (n > OCKPT_CONTAINER_MAX_STATE_ENTRIES)
    return err(OCKPT_E_LIMIT_EXCEEDED, F0("state.num_entries"), s, "more than 1024 entries");
  if (OCKPT_CONTAINER_STATE_HEAD_SIZE + OCKPT_CONTAINER_STATE_ENTRY_SIZE * n > L)
    return err(OCKPT_E_COUNT_EXCEEDS_FILE, F0("state.num_entries"), s,
               "the state entries do not fit in the state section");
  base = s + OCKPT_CONTAINER_STATE_HEAD_SIZE;
#define ENT(k) (base + OCKPT_CONTAINER_STATE_ENTRY_SIZE * (uint64_t)(k))
  for (k = 0; k < n; k++) {
    unsigned b; /* the offset of the first non-zero byte (SPEC section 1.3, error offsets) */
    for (b = OCKPT_CONTAINER_STATE_ENTRY_AT_RESERVED; b < OCKPT_CONTAINER_STATE_ENTRY_AT_VALUE; b++)
      if (rd8(buf, ENT(k) + b) != 0)
        return err(OCKPT_E_RESERVED_NONZERO, F1("state", k, ".reserved"), ENT(k) + b,
                   "reserved byte is not 0");
  }
  for (k = 0; k < n; k++)
    if (rd8(buf, ENT(k) + OCKPT_CONTAINER_STATE_ENTRY_AT_VALUE_TYPE) > OCKPT_CONTAINER_VALUE_BYTES)
      return err(OCKPT_E_BAD_STATE_TYPE, F1("state", k, ".value_type"), ENT(k) + OCKPT_CONTAINER_STATE_ENTRY_AT_VALUE_TYPE,
                 "unknown value type");
  for (k = 0; k < n; k++) {
    uint32_t lk = rd32(buf, ENT(k) + OCKPT_CONTAINER_STATE_ENTRY_AT_LEN_KEY);
    if (lk == 0 || lk > OCKPT_CONTAINER_MAX_KEY_LEN)
      return err(OCKPT_E_LIMIT_EXCEEDED, F1("state", k, ".len_key"), ENT(k) + OCKPT_CONTAINER_STATE_ENTRY_AT_LEN_KEY,
                 "a key has 1..255 bytes");
  }
  for (k = 0; k < n; k++)
    if (rd8(buf, ENT(k) + OCKPT_CONTAINER_STATE_ENTRY_AT_VALUE_TYPE) <= OCKPT_CONTAINER_VALUE_FLOAT && rd64(buf, ENT(k) + OCKPT_CONTAINER_STATE_ENTRY_AT_LEN_VALUE) != 0)
      return err(OCKPT_E_BAD_STATE_TYPE, F1("state", k, ".len_value"), ENT(k) + OCKPT_CONTAINER_STATE_ENTRY_AT_LEN_VALUE,
                 "an int or float value has len_value 0");
  for (k = 0; k < n; k++)
    if (rd8(buf, ENT(k) + OCKPT_CONTAINER_STATE_ENTRY_AT_VALUE_TYPE) >= OCKPT_CONTAINER_VALUE_STRING &&
        rd64(buf, ENT(k) + OCKPT_CONTAINER_STATE_ENTRY_AT_LEN_VALUE) > OCKPT_CONTAINER_MAX_VALUE_LEN)
      return err(OCKPT_E_LIMIT_EXCEEDED, F1("state", k, ".len_value"), ENT(k) + OCKPT_CONTAINER_STATE_ENTRY_AT_LEN_VALUE,
                 "a value has at most 1 MiB");
  p.expected = ENT(n);
  p.end = s + L;
  for (k = 0; k < n; k++) {
    CHECK(pool_item(&p, rd64(buf, ENT(k) + OCKPT_CONTAINER_STATE_ENTRY_AT_OFS_KEY), rd32(buf, ENT(k) + OCKPT_CONTAINER_STATE_ENTRY_AT_LEN_KEY), F1("state", k, ".ofs_key"),
                    ENT(k), "state key or value"));
    if (rd8(buf, ENT(k) + OCKPT_CONTAINER_STATE_ENTRY_AT_VALUE_TYPE) >= OCKPT_CONTAINER_VALUE_STRING)
      CHECK(pool_item(&p, rd64(buf, ENT(k) + OCKPT_CONTAINER_STATE_ENTRY_AT_VALUE), rd64(buf, ENT(k) + OCKPT_CONTAINER_STATE_ENTRY_AT_LEN_VALUE),
                      F1("state", k, ".value"), ENT(k) + OCKPT_CONTAINER_STATE_ENTRY_AT_VALUE, "state key or value"));
  }
  CHECK(pool_end(&p, "state.pool"));
  for (k = 0; k < n; k++) {
    uint64_t ko = rd64(buf, ENT(k) + OCKPT_CONTAINER_STATE_ENTRY_AT_OFS_KEY), value = rd64(buf, ENT(k) + OCKPT_CONTAINER_STATE_ENTRY_AT_VALUE);
    uint32_t lk = rd32(buf, ENT(k) + OCKPT_CONTAINER_STATE_ENTRY_AT_LEN_KEY);
    uint8_t type = rd8(buf, ENT(k) + OCKPT_CONTAINER_STATE_ENTRY_AT_VALUE_TYPE);
    unsigned w;
    if (!utf8_valid(buf, ko, lk))
      return err(OCKPT_E_BAD_UTF8, F1("state", k, ".key"), ko, "a key is not UTF-8");
    for (q = 0; q < k; q++)
      if (rd32(buf, ENT(q) + OCKPT_CONTAINER_STATE_ENTRY_AT_LEN_KEY) == lk && same_bytes(buf, rd64(buf, ENT(q) + OCKPT_CONTAINER_STATE_ENTRY_AT_OFS_KEY), ko, lk))
        return err(OCKPT_E_DUPLICATE_STATE_KEY, F1("state", k, ".key"), ko,
                   "two state entries have the same key");
    if (type == OCKPT_CONTAINER_VALUE_STRING && !utf8_valid(buf, value, rd64(buf, ENT(k) + OCKPT_CONTAINER_STATE_ENTRY_AT_LEN_VALUE)))
      return err(OCKPT_E_BAD_UTF8, F1("state", k, ".value"), value, "a string is not UTF-8");
    for (w = 0; w < 8; w++)
      if (is_cstr(buf, ko, lk, well_known[w].key) &&
          (type != well_known[w].type || (type == OCKPT_CONTAINER_VALUE_INT && (value >> 63) != 0)))
        return err(OCKPT_E_BAD_STATE_TYPE, F1("state", k, ".value_type"), ENT(k) + OCKPT_CONTAINER_STATE_ENTRY_AT_VALUE_TYPE,
                   "a well-known key with another type (or a negative int)");
  }
#undef ENT
  c->info->num_state = (uint32_t)n;
  return ok();
}

/* ---- origin section (G1-G3) -------------------------------------------------------------- */

static ockpt_result check_origin(const v2 *c) {
  const ockpt_src *buf = &c->src;
  const ockpt_sec_span *sec = &c->info->origin;
  uint64_t s = sec->offset;
  uint32_t rev, dialect, flags;
  if (sec->length < OCKPT_CONTAINER_ORIGIN_SIZE)
    return err(OCKPT_E_COUNT_EXCEEDS_FILE, F0("origin"), s,
               "the origin section is shorter than 24 bytes");
  if (sec->length > OCKPT_CONTAINER_ORIGIN_SIZE)
    return err(OCKPT_E_GAP, F0("origin"), s + OCKPT_CONTAINER_ORIGIN_SIZE,
               "the origin section is longer than 24 bytes");
  rev = rd32(buf, s + OCKPT_CONTAINER_ORIGIN_AT_REVISION);
  dialect = rd32(buf, s + OCKPT_CONTAINER_ORIGIN_AT_DIALECT);
  flags = rd32(buf, s + OCKPT_CONTAINER_ORIGIN_AT_FLAGS);
  if (flags & ~OCKPT_CONTAINER_ORIGIN_FOOTERLESS)
    return err(OCKPT_E_RESERVED_NONZERO, F0("origin.flags"), s + OCKPT_CONTAINER_ORIGIN_AT_FLAGS,
               "reserved origin flag bits are set");
  if (rd32(buf, s + OCKPT_CONTAINER_ORIGIN_AT_RESERVED) != 0)
    return err(OCKPT_E_RESERVED_NONZERO, F0("origin.reserved"), s + OCKPT_CONTAINER_ORIGIN_AT_RESERVED, "reserved field is not 0");
  if (rev != 1 && rev != 2)
    return err(OCKPT_E_BAD_ORIGIN, F0("origin.revision"), s, "unknown origin revision");
  if (dialect > 2)
    return err(OCKPT_E_BAD_ORIGIN, F0("origin.dialect"), s + OCKPT_CONTAINER_ORIGIN_AT_DIALECT, "unknown origin dialect");
  c->info->origin_revision = rev;
  c->info->origin_dialect = dialect;
  c->info->origin_flags = flags;
  c->info->origin_num_entries = rd64(buf, s + OCKPT_CONTAINER_ORIGIN_AT_NUM_ENTRIES);
  return ok();
}

/* ---- data ranges (D1, D2) ------------------------------------------------------------------ */

/* Ranges are numbered p = 0 .. n + K*n - 1: the tensor records, then slot j's entry for record
 * t at n + j*n + t (NO_STATE entries are no range and are skipped), which is the spec's order. */
typedef struct ranges {
  const v2 *c;
  uint64_t rec_base;  /* first tensor record */
  uint64_t ent_base;  /* first slot entry */
  uint64_t n, count;  /* records; n + K*n */
} ranges;

/* Range p: 1 with its start, length and the position of its ofs_data field; 0 for NO_STATE. */
static int get_range(const ranges *R, uint64_t p, uint64_t *start, uint64_t *len, uint64_t *at) {
  const ockpt_src *buf = &R->c->src;
  if (p < R->n) {
    *at = R->rec_base + OCKPT_V2_TENSOR_RECORD_SIZE * p + OCKPT_V2_TENSOR_RECORD_AT_OFS_DATA;
    *start = rd64(buf, *at + OCKPT_V2_SLOT_ENTRY_AT_OFS_DATA);
    *len = rd64(buf, *at + OCKPT_V2_SLOT_ENTRY_AT_LEN_DATA);
    return 1;
  }
  *at = R->ent_base + OCKPT_V2_SLOT_ENTRY_SIZE * (p - R->n);
  *start = rd64(buf, *at + OCKPT_V2_SLOT_ENTRY_AT_OFS_DATA);
  *len = rd64(buf, *at + OCKPT_V2_SLOT_ENTRY_AT_LEN_DATA);
  return *start != OCKPT_CONTAINER_NO_STATE;
}

static fname range_field(const ranges *R, uint64_t p) {
  if (p < R->n) return F1("tensors", (int64_t)p, ".ofs_data");
  return F2("optimizer.slots", (int64_t)((p - R->n) / R->n), "", (int64_t)((p - R->n) % R->n),
            ".ofs_data");
}

static int less_range(const void *ctx, uint64_t a, uint64_t b) {
  const ranges *R = (const ranges *)ctx;
  uint64_t sa, la, aa, sb, lb, ab;
  get_range(R, a, &sa, &la, &aa);
  get_range(R, b, &sb, &lb, &ab);
  return sa < sb || (sa == sb && a < b);
}

/* One step of D2 for range p (start, len): against pos, the end of the previous range. */
static ockpt_result d2_step(const ranges *R, uint64_t p, uint64_t start, uint64_t at,
                            uint64_t pos) {
  uint64_t expected = align64(pos);
  if (start < expected)
    return err(OCKPT_E_OVERLAP, range_field(R, p), at, "a data range overlaps the previous one");
  if (start > expected)
    return err(OCKPT_E_GAP, range_field(R, p), at,
               "a data range does not follow the previous one's alignment padding");
  return check_padding(&R->c->src, pos, start);
}

static ockpt_result check_ranges(const v2 *c) {
  const ockpt_container *info = c->info;
  ranges R;
  uint64_t p, start, len, at, lo, hi, pos;
  R.c = c;
  R.n = info->num_tensors;
  R.rec_base = info->tensors.offset + OCKPT_V2_TENSORS_HEAD_SIZE;
  R.ent_base = info->optimizer.offset + OCKPT_CONTAINER_OPTIMIZER_HEAD_SIZE + OCKPT_CONTAINER_SLOT_DESCRIPTOR_SIZE * info->num_slots;
  R.count = R.n + (uint64_t)info->num_slots * R.n;
  lo = info->data.offset;
  hi = info->data.offset + info->data.length;
  /* D0 */
  if (info->data.present) {
    int any = 0;
    for (p = 0; p < R.count && !any; p++) any = get_range(&R, p, &start, &len, &at);
    if (!any) return err(OCKPT_E_EMPTY_SECTION, F0("data"), lo, "a data section, but no data range");
  }
  /* D1 */
  for (p = 0; p < R.count; p++) {
    if (!get_range(&R, p, &start, &len, &at)) continue;
    if (start % OCKPT_CONTAINER_ALIGNMENT != 0)
      return err(OCKPT_E_MISALIGNED, range_field(&R, p), at,
                 "a data range does not start at a multiple of 64");
    if (!info->data.present || start < lo || start > hi || len > hi - start)
      return err(OCKPT_E_OFFSET_OUT_OF_BOUNDS, range_field(&R, p), at,
                 "a data range is not inside the data section");
  }
  if (!info->data.present) return ok();
  /* D2, in (start, p) order; every range is now inside [lo, hi] */
  pos = lo;
  if (c->scratch != NULL && c->scratch_count >= R.count) {
    uint64_t *order = c->scratch;
    size_t m = 0, q;
    for (p = 0; p < R.count; p++)
      if (get_range(&R, p, &start, &len, &at)) order[m++] = p;
    heapsort_by(order, m, less_range, &R);
    for (q = 0; q < m; q++) {
      get_range(&R, order[q], &start, &len, &at);
      CHECK(d2_step(&R, order[q], start, at, pos));
      pos = start + len;
    }
  } else {
    /* without scratch: repeatedly the smallest (start, p) after the previous one, O(R^2) */
    uint64_t cs = 0, cp = 0;
    int first = 1;
    for (;;) {
      uint64_t bs = 0, bp = 0, bl = 0, ba = 0;
      int found = 0;
      for (p = 0; p < R.count; p++) {
        if (!get_range(&R, p, &start, &len, &at)) continue;
        if (!first && (start < cs || (start == cs && p <= cp))) continue;
        if (!found || start < bs || (start == bs && p < bp)) {
          found = 1;
          bs = start;
          bp = p;
          bl = len;
          ba = at;
        }
      }
      if (!found) break;
      CHECK(d2_step(&R, bp, bs, ba, pos));
      pos = bs + bl;
      cs = bs;
      cp = bp;
      first = 0;
    }
  }
  if (pos != hi)
    return err(OCKPT_E_GAP, F0("data"), pos,
               "bytes at the end of the data section belong to no tensor or slot");
  return ok();
}

/* ---- the whole file -------------------------------------------------------------------------- */

uint64_t ockpt_v2_scratch_count(uint64_t S) {
  /* every range needs a 16-byte slot entry or a 72-byte tensor record in the file */
  return S / 16u + 1u;
}

ockpt_result ockpt_v2_validate(const ockpt_src *src, uint64_t S, ockpt_file *f,
                               uint64_t *scratch, size_t scratch_count) {
  static const ockpt_file zero_file;
  v2 c;
  *f = zero_file;
  f->buf = src->buf;
  f->stream = src->stream;
  f->file_size = S;
  c.src = *src;
  c.S = S;
  c.scratch = scratch;
  c.scratch_count = scratch != NULL ? scratch_count : 0;
  c.info = &f->container;
  c.data_crc_later = 0;
  CHECK(check_header(&c));
  CHECK(check_sections(&c));
  if (f->container.tensors.present) CHECK(check_tensors(&c));
  if (f->container.optimizer.present) CHECK(check_optimizer(&c, OCKPT_V2_SLOT_ENTRY_SIZE));
  if (f->container.state.present) CHECK(check_state(&c));
  if (f->container.origin.present) CHECK(check_origin(&c));
  CHECK(check_ranges(&c));
  f->revision = OCKPT_REV_V2;
  f->dialect = OCKPT_DIALECT_NULL;
  f->optimizer = OCKPT_OPT_NONE;
  return ok();
}

/* ---- access --------------------------------------------------------------------------------- */

/* Schema 3 (ockpt_v3.c) shares the section table, optimizer, state and origin access. */
static int is_container(const ockpt_file *f) {
  return f != NULL && (f->revision == OCKPT_REV_V2 || f->revision == OCKPT_REV_V3);
}

/* Through the file's source; names, keys and values as pointers only into a buffer. */
int ockpt_sec_tensor(const ockpt_file *f, uint32_t k, ockpt_tensor_info *t) {
  uint64_t r;
  unsigned j;
  ockpt_src src;
  if (!is_container(f) || k >= f->container.num_tensors || t == NULL) return -1;
  if (f->revision == OCKPT_REV_V3) return ockpt_v3_tensor_at(f, k, t);
  src = ockpt_src_of(f);
  r = f->container.tensors.offset + OCKPT_V2_TENSORS_HEAD_SIZE + OCKPT_V2_TENSOR_RECORD_SIZE * (uint64_t)k;
  t->index = rd32(&src, r + OCKPT_V2_TENSOR_RECORD_AT_INDEX);
  t->model_index = rd32(&src, r + OCKPT_V2_TENSOR_RECORD_AT_MODEL_INDEX);
  t->flags = rd16(&src, r + OCKPT_V2_TENSOR_RECORD_AT_FLAGS);
  t->dtype = (int8_t)rd8(&src, r + OCKPT_V2_TENSOR_RECORD_AT_DTYPE);
  t->rank = rd8(&src, r + OCKPT_V2_TENSOR_RECORD_AT_RANK);
  t->name_len = rd32(&src, r + OCKPT_V2_TENSOR_RECORD_AT_LEN_NAME);
  t->name_offset = rd64(&src, r + OCKPT_V2_TENSOR_RECORD_AT_OFS_NAME);
  t->name = (t->flags & OCKPT_V2_HAS_NAME) && f->buf != NULL ? f->buf + t->name_offset : NULL;
  t->offset = rd64(&src, r + OCKPT_V2_TENSOR_RECORD_AT_OFS_DATA);
  t->nbytes = rd64(&src, r + OCKPT_V2_TENSOR_RECORD_AT_LEN_DATA);
  for (j = 0; j < OCKPT_CONTAINER_MAX_RANK; j++) t->dims[j] = rd32(&src, r + OCKPT_V2_TENSOR_RECORD_AT_DIMS + OCKPT_V2_TENSOR_RECORD_DIMS_ELEM_SIZE * j);
  return 1;
}

int ockpt_sec_slot_at(const ockpt_file *f, uint32_t j, uint64_t *name_offset,
                      uint32_t *name_len) {
  uint64_t d;
  ockpt_src src;
  if (!is_container(f) || j >= f->container.num_slots) return -1;
  src = ockpt_src_of(f);
  d = f->container.optimizer.offset + OCKPT_CONTAINER_OPTIMIZER_HEAD_SIZE + OCKPT_CONTAINER_SLOT_DESCRIPTOR_SIZE * (uint64_t)j;
  if (name_offset != NULL) *name_offset = rd64(&src, d + OCKPT_CONTAINER_SLOT_DESCRIPTOR_AT_OFS_NAME);
  if (name_len != NULL) *name_len = rd32(&src, d + OCKPT_CONTAINER_SLOT_DESCRIPTOR_AT_LEN_NAME);
  return 1;
}

int ockpt_sec_slot(const ockpt_file *f, uint32_t j, const uint8_t **name, uint32_t *name_len) {
  uint64_t at;
  if (ockpt_sec_slot_at(f, j, &at, name_len) != 1) return -1;
  if (name != NULL) *name = f->buf != NULL ? f->buf + at : NULL;
  return 1;
}

int ockpt_sec_slot_entry(const ockpt_file *f, uint32_t j, uint32_t k, uint64_t *offset,
                         uint64_t *nbytes) {
  uint64_t e, o;
  ockpt_src src;
  if (!is_container(f) || j >= f->container.num_slots || k >= f->container.num_tensors) return -1;
  if (f->revision == OCKPT_REV_V3) return ockpt_v3_slot_entry_at(f, j, k, offset, nbytes);
  src = ockpt_src_of(f);
  e = f->container.optimizer.offset + OCKPT_CONTAINER_OPTIMIZER_HEAD_SIZE + OCKPT_CONTAINER_SLOT_DESCRIPTOR_SIZE * (uint64_t)f->container.num_slots +
      OCKPT_V2_SLOT_ENTRY_SIZE * ((uint64_t)j * f->container.num_tensors + k);
  o = rd64(&src, e + OCKPT_V2_SLOT_ENTRY_AT_OFS_DATA);
  if (o == OCKPT_CONTAINER_NO_STATE) return 0;
  if (offset != NULL) *offset = o;
  if (nbytes != NULL) *nbytes = rd64(&src, e + OCKPT_V2_SLOT_ENTRY_AT_LEN_DATA);
  return 1;
}

int ockpt_sec_state(const ockpt_file *f, uint32_t k, ockpt_state_info *e) {
  uint64_t r, v;
  ockpt_src src;
  union {
    uint64_t u;
    double d;
  } bits;
  if (!is_container(f) || k >= f->container.num_state || e == NULL) return -1;
  src = ockpt_src_of(f);
  r = f->container.state.offset + OCKPT_CONTAINER_STATE_HEAD_SIZE + OCKPT_CONTAINER_STATE_ENTRY_SIZE * (uint64_t)k;
  v = rd64(&src, r + OCKPT_CONTAINER_STATE_ENTRY_AT_VALUE);
  e->key_offset = rd64(&src, r + OCKPT_CONTAINER_STATE_ENTRY_AT_OFS_KEY);
  e->key = f->buf != NULL ? f->buf + e->key_offset : NULL;
  e->key_len = rd32(&src, r + OCKPT_CONTAINER_STATE_ENTRY_AT_LEN_KEY);
  e->type = rd8(&src, r + OCKPT_CONTAINER_STATE_ENTRY_AT_VALUE_TYPE);
  e->i = 0;
  e->f = 0.0;
  e->value = NULL;
  e->value_offset = 0;
  e->len = 0;
  if (e->type == OCKPT_CONTAINER_VALUE_INT) {
    e->i = v >> 63 ? -(int64_t)(~v) - 1 : (int64_t)v;
  } else if (e->type == OCKPT_CONTAINER_VALUE_FLOAT) {
    bits.u = v;
    e->f = bits.d;
  } else {
    e->value_offset = v;
    e->value = f->buf != NULL ? f->buf + v : NULL;
    e->len = rd64(&src, r + OCKPT_CONTAINER_STATE_ENTRY_AT_LEN_VALUE);
  }
  return 1;
}

int ockpt_container_section(const ockpt_file *f, uint32_t i, uint32_t *kind, uint32_t *flags,
                            uint64_t *offset, uint64_t *length) {
  uint64_t e;
  ockpt_src src;
  if (!is_container(f) || i >= f->container.num_sections) return -1;
  src = ockpt_src_of(f);
  e = OCKPT_CONTAINER_HEADER_SIZE + OCKPT_CONTAINER_SECTION_ENTRY_SIZE * (uint64_t)i;
  if (kind != NULL) *kind = rd32(&src, e + OCKPT_CONTAINER_SECTION_ENTRY_AT_KIND);
  if (flags != NULL) *flags = rd32(&src, e + OCKPT_CONTAINER_SECTION_ENTRY_AT_FLAGS);
  if (offset != NULL) *offset = rd64(&src, e + OCKPT_CONTAINER_SECTION_ENTRY_AT_OFS_BODY);
  if (length != NULL) *length = rd64(&src, e + OCKPT_CONTAINER_SECTION_ENTRY_AT_LEN_BODY);
  return 1;
}

/* ---- shared with schema 3 (ockpt_v3.c, through ockpt_internal.h) ---------------------------- */

ockpt_result ockpt_container_ok(void) { return ok(); }
ockpt_result ockpt_container_err(ockpt_error code, ockpt_fname f, uint64_t offset, const char *message) {
  return err(code, f, offset, message);
}
int ockpt_container_utf8_valid(const ockpt_src *b, uint64_t at, uint64_t n) { return utf8_valid(b, at, n); }
int ockpt_container_same_bytes(const ockpt_src *b, uint64_t x, uint64_t y, uint64_t n) {
  return same_bytes(b, x, y, n);
}
ockpt_result ockpt_container_check_padding(const ockpt_src *b, uint64_t from, uint64_t to) {
  return check_padding(b, from, to);
}
void ockpt_container_heapsort(uint64_t *a, size_t n, ockpt_less_fn less, const void *ctx) {
  heapsort_by(a, n, less, ctx);
}
ockpt_result ockpt_container_check_header(const ockpt_container_ctx *c) { return check_header(c); }
ockpt_result ockpt_container_check_sections(const ockpt_container_ctx *c) { return check_sections(c); }
ockpt_result ockpt_sec_check_optimizer(const ockpt_container_ctx *c, unsigned entry_size) {
  return check_optimizer(c, entry_size);
}
ockpt_result ockpt_sec_check_state(const ockpt_container_ctx *c) { return check_state(c); }
ockpt_result ockpt_sec_check_origin(const ockpt_container_ctx *c) { return check_origin(c); }
