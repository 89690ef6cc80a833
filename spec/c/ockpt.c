/* The reference C reader: spec/SPEC.md, rule by rule, in the spec's order.
 *
 * Arithmetic discipline: the file size S is a uint64_t; every u32 read from the file is widened
 * to uint64_t before it is added to anything, and every sum is at most a few times 2^32 + S, so
 * no expression below can overflow 64 bits. A byte is read only at an offset already shown to be
 * inside the buffer. */
#include "ockpt_internal.h"

/* ---- little helpers ---------------------------------------------------------------------- */

/* Every byte comes through the file's source (ockpt_internal.h): the caller's buffer or a
 * stream. */
#define rd_u8(b, k) src_u8((b), (k))
#define rd_u16(b, k) src_u16((b), (k))
#define rd_u32(b, k) src_u32((b), (k))

/* One entry of a schema-1 or WOF offset table (ockpt_layout.h; both tables are u32). */
#define OFS_SIZE OCKPT_V1_OFFSET_TABLE_OFS_ENTRIES_ELEM_SIZE
typedef char ockpt_wof_table_is_v1s[OCKPT_WOF_OFS_ENTRIES_ELEM_SIZE == OFS_SIZE ? 1 : -1];

static const ockpt_file zero_file;
static const ockpt_result zero_result;

static ockpt_result ok_result(void) {
  ockpt_result r = zero_result;
  r.message = "ok";
  return r;
}

/* An error with field `name` (or `name[index]` when index >= 0). */
static ockpt_result fail_at(ockpt_error code, const char *name, int64_t index, uint64_t offset,
                            const char *message) {
  ockpt_result r = zero_result;
  size_t n = 0;
  r.code = code;
  r.offset = offset;
  r.message = message;
  while (name[n] != '\0' && n < OCKPT_FIELD_MAX - 13u) { /* room for "[4294967295]\0" */
    r.field[n] = name[n];
    n++;
  }
  if (index >= 0) {
    char digits[10];
    int d = 0;
    uint32_t v = (uint32_t)index;
    do {
      digits[d++] = (char)('0' + v % 10u);
      v /= 10u;
    } while (v != 0);
    r.field[n++] = '[';
    while (d > 0) r.field[n++] = digits[--d];
    r.field[n++] = ']';
  }
  r.field[n] = '\0';
  return r;
}

static ockpt_result fail(ockpt_error code, const char *name, uint64_t offset,
                         const char *message) {
  return fail_at(code, name, -1, offset, message);
}

/* Schema 1 and WOF record offsets as u32: a larger file cannot be described (rule 1 of each). */
#define MAX_V1_FILE 0xFFFFFFFFu

static ockpt_result too_large(void) {
  return fail(OCKPT_E_LIMIT_EXCEEDED, "file", MAX_V1_FILE,
              "a version-1 file larger than 4 GiB - 1 bytes (its u32 offsets cannot reach)");
}

/* ---- entry sizes (SPEC.md rule 9) ---------------------------------------------------------- */

/* Size of present entry i (offset o) of a block whose entries already passed rule 8:
 * the next present offset in (offset, index) order, or the block's end, minus o. */
static uint64_t entry_size(const ockpt_file *f, const ockpt_block *bl, uint32_t i, uint32_t o) {
  const ockpt_src fs = ockpt_src_of(f);
  uint32_t n = f->num_entries, j;
  uint64_t best = bl->end;
  if (bl->sizes != NULL) return bl->sizes[i];
  if (bl->monotonic) {
    /* Table order is (offset, index) order: the next present entry in the table is next. */
    for (j = i + 1; j < n; j++) {
      uint32_t oj = rd_u32(&fs, bl->table + OFS_SIZE * (uint64_t)j);
      if (oj != 0) return (uint64_t)oj - o;
    }
    return bl->end - o;
  }
  for (j = 0; j < n; j++) { /* O(N): the smallest (offset, index) after (o, i) */
    uint32_t oj = rd_u32(&fs, bl->table + OFS_SIZE * (uint64_t)j);
    if (oj == 0 || j == i) continue;
    if ((oj > o || (oj == o && j > i)) && oj < best) best = oj;
  }
  return best - o;
}

/* Heapsort of (offset << 32 | index) keys: ascending key order is (offset, index) order. */
static void sift_down(uint64_t *a, size_t root, size_t n) {
  for (;;) {
    size_t child = 2 * root + 1;
    uint64_t t;
    if (child >= n) return;
    if (child + 1 < n && a[child + 1] > a[child]) child++;
    if (a[root] >= a[child]) return;
    t = a[root];
    a[root] = a[child];
    a[child] = t;
    root = child;
  }
}

static void heapsort_u64(uint64_t *a, size_t n) {
  size_t k;
  uint64_t t;
  if (n < 2) return;
  for (k = n / 2; k > 0; k--) sift_down(a, k - 1, n);
  for (k = n - 1; k > 0; k--) {
    t = a[0];
    a[0] = a[k];
    a[k] = t;
    sift_down(a, 0, k);
  }
}

/* With scratch = keys[N] then sizes[N] per block: fill every block's size array. */
static void fill_sizes(ockpt_file *f, uint64_t *scratch, size_t scratch_count) {
  const ockpt_src fs = ockpt_src_of(f);
  uint64_t n = f->num_entries;
  unsigned b;
  if (scratch == NULL || (uint64_t)scratch_count < n * (f->num_blocks + 1u)) return;
  for (b = 0; b < f->num_blocks; b++) {
    ockpt_block *bl = &f->blocks[b];
    uint64_t *keys = scratch;
    uint64_t *sizes = scratch + n * (b + 1u);
    size_t p = 0, k;
    uint32_t i;
    if (bl->monotonic) continue; /* already O(1) amortised without scratch */
    for (i = 0; i < n; i++) {
      uint32_t o = rd_u32(&fs, bl->table + OFS_SIZE * (uint64_t)i);
      sizes[i] = 0;
      if (o != 0) keys[p++] = ((uint64_t)o << 32) | i;
    }
    heapsort_u64(keys, p);
    for (k = 0; k < p; k++) {
      uint64_t next = k + 1 < p ? keys[k + 1] >> 32 : bl->end;
      sizes[keys[k] & 0xFFFFFFFFu] = next - (keys[k] >> 32);
    }
    bl->sizes = sizes;
  }
}

/* ---- rules 8 and 9, shared by schema 1 and WOF --------------------------------------------- */

static ockpt_result check_entries(ockpt_file *f, unsigned b, const char *name) {
  const ockpt_src fs = ockpt_src_of(f);
  ockpt_block *bl = &f->blocks[b];
  uint32_t i, prev = 0;
  bl->monotonic = 1;
  for (i = 0; i < f->num_entries; i++) {
    uint64_t t = bl->table + OFS_SIZE * (uint64_t)i;
    uint32_t o = rd_u32(&fs, t);
    if (o == 0) continue; /* absent */
    if (o > f->file_size)
      return fail_at(OCKPT_E_OFFSET_OUT_OF_BOUNDS, name, i, t,
                     "entry offset points past the end of the file");
    if (o < bl->data_start || o > bl->end)
      return fail_at(OCKPT_E_ENTRY_OUT_OF_BLOCK, name, i, t,
                     "entry offset points outside the data area of its block");
    if (o < prev) bl->monotonic = 0;
    prev = o;
  }
  return ok_result();
}

static ockpt_result check_holes(const ockpt_file *f, unsigned b, const char *name) {
  const ockpt_src fs = ockpt_src_of(f);
  const ockpt_block *bl = &f->blocks[b];
  uint32_t i;
  uint64_t lowest = bl->end + 1; /* none present yet */
  for (i = 0; i < f->num_entries; i++) {
    uint32_t o = rd_u32(&fs, bl->table + OFS_SIZE * (uint64_t)i);
    if (o != 0 && o < lowest) lowest = o;
  }
  if (lowest == bl->end + 1) {
    if (bl->data_start != bl->end)
      return fail(OCKPT_E_UNREFERENCED_BYTES, name, bl->data_start,
                  "block has data bytes but no present entry");
  } else if (lowest != bl->data_start) {
    return fail(OCKPT_E_UNREFERENCED_BYTES, name, bl->data_start,
                "bytes between the offset table and the first entry belong to no entry");
  }
  return ok_result();
}

/* ---- schema 1 (SPEC.md "Schema 1 checkpoint") --------------------------------------------- */

static const char *const v1_block_names[OCKPT_MAX_BLOCKS] = {"weights", "m", "v"};

/* Rules 1 to 11; magic and version are already checked. */
static ockpt_result validate_v1(const ockpt_src *buf, uint64_t S, ockpt_file *f, uint64_t *scratch,
                                size_t scratch_count) {
  uint64_t N, opt1, opt2, other, end, starts[OCKPT_MAX_BLOCKS + 1];
  unsigned nb, b;
  uint32_t i;
  ockpt_result r;
  int onert_fits, micro_fits;

  *f = zero_file;
  f->buf = buf->buf;
  f->stream = buf->stream;
  f->file_size = S;
  /* 1 */
  if (S < OCKPT_V1_HEADER_SIZE)
    return fail(OCKPT_E_TRUNCATED_HEADER, "header", 0, "file shorter than the 20-byte header");
  if (S > MAX_V1_FILE) return too_large();
  /* 2 */
  if (rd_u8(buf, OCKPT_V1_HEADER_AT_RESERVED) != 0)
    return fail(OCKPT_E_RESERVED_NONZERO, "reserved", OCKPT_V1_HEADER_AT_RESERVED, "reserved byte is not 0");
  opt1 = rd_u32(buf, OCKPT_V1_HEADER_AT_OFS_OPT1);
  opt2 = rd_u32(buf, OCKPT_V1_HEADER_AT_OFS_OPT2);
  other = rd_u32(buf, OCKPT_V1_HEADER_AT_OFS_OTHER);
  N = rd_u32(buf, OCKPT_V1_HEADER_AT_NUM_ENTRIES);
  /* 3: nothing is derived from N before this */
  if (OCKPT_V1_HEADER_SIZE + OFS_SIZE * N > S)
    return fail(OCKPT_E_COUNT_EXCEEDS_FILE, "num_entries", OCKPT_V1_HEADER_AT_NUM_ENTRIES,
                "the weight offset table does not fit in the file");
  /* 4 */
  if (other != 0) {
    if (other + OCKPT_FOOTER_SIZE > S)
      return fail(OCKPT_E_TRUNCATED_FILE, "ofs_other", OCKPT_V1_HEADER_AT_OFS_OTHER, "the 8-byte footer is cut off");
    if (other + OCKPT_FOOTER_SIZE < S)
      return fail(OCKPT_E_TRAILING_BYTES, "footer", other + OCKPT_FOOTER_SIZE,
                  "bytes follow the footer, which must end the file");
  }
  end = other != 0 ? other : S;
  /* 5 */
  if (opt2 != 0) {
    if (opt1 == 0)
      return fail(OCKPT_E_OPTIMIZER_LAYOUT, "ofs_opt1", 4, "v block present without an m block");
  } else if (opt1 != 0 && opt1 != end) {
    return fail(OCKPT_E_OPTIMIZER_LAYOUT, "ofs_opt1", 4,
                "SGD ofs_opt1 is neither 0 nor the end of the blocks");
  }
  /* 6 */
  if (opt2 != 0) {
    if (opt1 > S)
      return fail(OCKPT_E_OFFSET_OUT_OF_BOUNDS, "ofs_opt1", 4, "m block starts past the end");
    if (opt2 > S)
      return fail(OCKPT_E_OFFSET_OUT_OF_BOUNDS, "ofs_opt2", 8, "v block starts past the end");
  }
  /* 7: each start leaves room for the previous block's table */
  nb = 0;
  starts[nb++] = OCKPT_V1_HEADER_SIZE;
  if (opt2 != 0) {
    starts[nb++] = opt1;
    starts[nb++] = opt2;
  }
  starts[nb] = end;
  for (b = 0; b < nb; b++) {
    if (starts[b] + OFS_SIZE * N > starts[b + 1]) {
      if (b + 1 < nb)
        return fail(OCKPT_E_BLOCK_ORDER, b + 1 == 1 ? "ofs_opt1" : "ofs_opt2", b + 1 == 1 ? OCKPT_V1_HEADER_AT_OFS_OPT1 : OCKPT_V1_HEADER_AT_OFS_OPT2,
                    "block starts before the previous block's offset table ends");
      if (other != 0)
        return fail(OCKPT_E_BLOCK_ORDER, "ofs_other", OCKPT_V1_HEADER_AT_OFS_OTHER,
                    "footer starts before the last block's offset table ends");
      return fail(OCKPT_E_BLOCK_ORDER, "header", 0,
                  "file ends before the last block's offset table ends");
    }
  }
  f->revision = OCKPT_REV_V1;
  f->num_entries = (uint32_t)N;
  f->ofs_opt1 = (uint32_t)opt1;
  f->ofs_opt2 = (uint32_t)opt2;
  f->ofs_other = (uint32_t)other;
  f->has_footer = other != 0;
  f->optimizer = opt2 != 0 ? OCKPT_OPT_ADAM : OCKPT_OPT_SGD;
  f->num_blocks = nb;
  for (b = 0; b < nb; b++) {
    f->blocks[b].table = starts[b];
    f->blocks[b].data_start = starts[b] + OFS_SIZE * N;
    f->blocks[b].end = starts[b + 1];
  }
  /* 8, for every block, then 9 for every block */
  for (b = 0; b < nb; b++) {
    r = check_entries(f, b, v1_block_names[b]);
    if (r.code != OCKPT_OK) return r;
  }
  for (b = 0; b < nb; b++) {
    r = check_holes(f, b, v1_block_names[b]);
    if (r.code != OCKPT_OK) return r;
  }
  fill_sizes(f, scratch, scratch_count);
  /* 10 (Adam), and the sizes rule 11 needs */
  micro_fits = f->has_footer;
  if (opt2 != 0) {
    const ockpt_block *w = &f->blocks[0], *m = &f->blocks[1], *v = &f->blocks[2];
    for (i = 0; i < N; i++) {
      uint64_t tw = w->table + OFS_SIZE * (uint64_t)i, tm = m->table + OFS_SIZE * (uint64_t)i,
               tv = v->table + OFS_SIZE * (uint64_t)i;
      uint32_t ow = rd_u32(buf, tw), om = rd_u32(buf, tm), ov = rd_u32(buf, tv);
      uint64_t nw, nm = 0, nv = 0;
      if (ow == 0) {
        if (om != 0)
          return fail_at(OCKPT_E_SLOT_WITHOUT_WEIGHT, "m", i, tm,
                         "m entry present where the weight entry is absent");
        if (ov != 0)
          return fail_at(OCKPT_E_SLOT_WITHOUT_WEIGHT, "v", i, tv,
                         "v entry present where the weight entry is absent");
        continue; /* all three absent: fits onert-micro */
      }
      nw = entry_size(f, w, i, ow);
      if (om != 0) nm = entry_size(f, m, i, om);
      if (ov != 0) nv = entry_size(f, v, i, ov);
      if (om != 0 && nm != 0 && nm != nw)
        return fail_at(OCKPT_E_SLOT_SIZE_MISMATCH, "m", i, tm,
                       "m entry is neither empty nor as long as its weight entry");
      if (ov != 0 && nv != 0 && nv != nw)
        return fail_at(OCKPT_E_SLOT_SIZE_MISMATCH, "v", i, tv,
                       "v entry is neither empty nor as long as its weight entry");
      if (om != 0 && ov != 0 && nm != nv)
        return fail_at(OCKPT_E_SLOT_SIZE_MISMATCH, "v", i, tv,
                       "m and v entries of the same index differ in size");
      if (om == 0 || ov == 0 || nm != nw || nv != nw) micro_fits = 0;
    }
  } else if (opt1 != 0) {
    micro_fits = 0;
  }
  /* 11 */
  onert_fits = opt2 != 0 || opt1 == end;
  for (b = 0; b < nb && onert_fits; b++) {
    if (!f->blocks[b].monotonic) onert_fits = 0;
    for (i = 0; i < N && onert_fits; i++)
      if (rd_u32(buf, f->blocks[b].table + OFS_SIZE * (uint64_t)i) == 0) onert_fits = 0;
  }
  if (!onert_fits && !micro_fits)
    return fail(OCKPT_E_DIALECT_CONFLICT, "header", 0,
                "the file fits neither the onert nor the onert-micro convention");
  f->dialect = onert_fits && micro_fits ? OCKPT_DIALECT_NULL
               : onert_fits             ? OCKPT_DIALECT_ONERT
                                        : OCKPT_DIALECT_ONERT_MICRO;
  if (f->has_footer) {
    f->step = rd_u32(buf, other);
    f->epoch = rd_u32(buf, other + OCKPT_V1_FOOTER_AT_EPOCH);
  }
  return ok_result();
}

/* ---- WOF (SPEC.md "Weight-only format") ---------------------------------------------------- */

static ockpt_result validate_wof(const ockpt_src *buf, uint64_t S, ockpt_file *f, uint64_t *scratch,
                                 size_t scratch_count) {
  uint64_t N;
  ockpt_result r;
  *f = zero_file;
  f->buf = buf->buf;
  f->stream = buf->stream;
  f->file_size = S;
  if (S < OCKPT_WOF_HEADER_SIZE)
    return fail(OCKPT_E_TRUNCATED_HEADER, "header", 0, "file shorter than the 8-byte header");
  if (S > MAX_V1_FILE) return too_large();
  if (rd_u8(buf, OCKPT_WOF_HEADER_AT_RESERVED) != 0)
    return fail(OCKPT_E_RESERVED_NONZERO, "reserved", OCKPT_WOF_HEADER_AT_RESERVED, "reserved byte is not 0");
  N = rd_u32(buf, OCKPT_WOF_HEADER_AT_NUM_ENTRIES);
  if (OCKPT_WOF_HEADER_SIZE + OFS_SIZE * N > S)
    return fail(OCKPT_E_COUNT_EXCEEDS_FILE, "num_entries", OCKPT_WOF_HEADER_AT_NUM_ENTRIES,
                "the offset table does not fit in the file");
  f->revision = OCKPT_REV_V1;
  f->format = OCKPT_FORMAT_WOF;
  f->num_entries = (uint32_t)N;
  f->optimizer = OCKPT_OPT_NONE;
  f->dialect = OCKPT_DIALECT_NULL;
  f->num_blocks = 1;
  f->blocks[0].table = OCKPT_WOF_HEADER_SIZE;
  f->blocks[0].data_start = OCKPT_WOF_HEADER_SIZE + OFS_SIZE * N;
  f->blocks[0].end = S;
  r = check_entries(f, 0, "tensors");
  if (r.code != OCKPT_OK) return r;
  r = check_holes(f, 0, "tensors");
  if (r.code != OCKPT_OK) return r;
  fill_sizes(f, scratch, scratch_count);
  return ok_result();
}

/* SPEC.md section 3, step 5.4: a file is WOF-shaped when S >= 8, n = u32@4 != 0 and
 * 8 + 4n <= S. (In a checkpoint that ends at its footer u32@4 is ofs_opt1: 0, or more than a
 * quarter of the file; appended bytes are caught by step 5.3 first.) */
static int wof_shaped(const ockpt_src *buf, uint64_t S) {
  uint64_t n;
  if (S < OCKPT_WOF_HEADER_SIZE) return 0;
  n = rd_u32(buf, 4);
  return n != 0 && OCKPT_WOF_HEADER_SIZE + OFS_SIZE * n <= S;
}

/* ---- schema 2 (SPEC.md section 6): ockpt_v2.c ---------------------------------------------- */

static ockpt_result read_v2(const ockpt_src *buf, uint64_t S, ockpt_file *f, uint64_t *scratch,
                            size_t scratch_count) {
  return ockpt_v2_validate(buf, S, f, scratch, scratch_count);
}

/* ---- revision detection (SPEC.md "Reading a file") ----------------------------------------- */

/* Steps 1 to 4. Returns OCKPT_OK with *version set, or the error. */
static ockpt_result preamble(const ockpt_src *buf, uint64_t S, unsigned *version) {
  if (S < 2) return fail(OCKPT_E_TRUNCATED_HEADER, "header", 0, "file shorter than 2 bytes");
  if (rd_u16(buf, 0) != OCKPT_MAGIC)
    return fail(OCKPT_E_BAD_MAGIC, "magic", 0, "magic is not 429 (bytes ad 01)");
  if (S < 3) return fail(OCKPT_E_TRUNCATED_HEADER, "header", 0, "file shorter than 3 bytes");
  *version = rd_u8(buf, 2);
  if (*version != OCKPT_REV_V1 && *version != OCKPT_REV_V2 && *version != OCKPT_REV_V3)
    return fail(OCKPT_E_UNSUPPORTED_VERSION, "version", 2, "unknown version byte");
  return ok_result();
}

static ockpt_result finish(ockpt_result r, ockpt_file *out) {
  if (r.code != OCKPT_OK) *out = zero_file;
  return r;
}

/* SPEC.md section 3 over any source: the buffer readers and the stream reader are this. */
static ockpt_result read_any(const ockpt_src *b, uint64_t S, ockpt_file *out, uint64_t *scratch,
                             size_t scratch_count) {
  unsigned version = 0;
  ockpt_result r, rv1, rwof;
  ockpt_file wof;
  r = preamble(b, S, &version);
  if (r.code != OCKPT_OK) return finish(r, out);
  if (version == OCKPT_REV_V2) return finish(read_v2(b, S, out, scratch, scratch_count), out);
  if (version == OCKPT_REV_V3)
    return finish(ockpt_v3_validate(b, S, out, scratch, scratch_count), out);
  /* 5.1 checkpoint first */
  rv1 = validate_v1(b, S, out, scratch, scratch_count);
  if (rv1.code == OCKPT_OK) return rv1;
  /* 5.2 then WOF */
  rwof = validate_wof(b, S, &wof, scratch, scratch_count);
  if (rwof.code == OCKPT_OK) {
    *out = wof;
    return rwof;
  }
  /* 5.3 a valid checkpoint with bytes appended: its own trailing_bytes error */
  if (rv1.code == OCKPT_E_TRAILING_BYTES) {
    uint64_t cut = (uint64_t)rd_u32(b, 12) + OCKPT_FOOTER_SIZE; /* rule 4 failed: cut < S */
    ockpt_file prefix;
    if (validate_v1(b, cut, &prefix, NULL, 0).code == OCKPT_OK) return finish(rv1, out);
  }
  /* 5.4 which error to report */
  return finish(wof_shaped(b, S) ? rwof : rv1, out);
}

ockpt_result ockpt_read_scratch(const void *buf, size_t len, ockpt_file *out, uint64_t *scratch,
                                size_t scratch_count) {
  ockpt_src src;
  ockpt_file ignored;
  src.buf = (const uint8_t *)buf;
  src.stream = NULL;
  if (out == NULL) out = &ignored; /* validation only */
  /* a NULL buffer reads as an empty file */
  return read_any(&src, src.buf == NULL ? 0 : (uint64_t)len, out, scratch, scratch_count);
}

static ockpt_result read_stream(ockpt_stream *s, ockpt_file *out, uint64_t *scratch,
                                size_t scratch_count, int defer) {
  ockpt_src src;
  ockpt_file ignored;
  ockpt_result r;
  src.buf = NULL;
  src.stream = s;
  if (out == NULL) out = &ignored;
  s->held = NULL; /* a block buffer verified for an earlier read proves nothing now */
  s->held_at = 0;
  s->defer = defer;
  r = read_any(&src, s->size, out, scratch, scratch_count);
  s->defer = 0;
  if (s->failed) { /* what was read is not the file: report the read that failed */
    r = fail(OCKPT_E_TRUNCATED_FILE, "stream", s->failed_at,
             "the read callback failed: the file is shorter than the size given");
    *out = zero_file;
  } else if (r.code == OCKPT_OK && out->container.unchecked != 0) {
    r.code = OCKPT_DEFERRED; /* never OCKPT_OK: not every rule ran */
    r.message = "every rule passed but the data blocks' checksums (B6), deferred";
  }
  return r;
}

ockpt_result ockpt_read_stream(ockpt_stream *s, ockpt_file *out, uint64_t *scratch,
                               size_t scratch_count) {
  return read_stream(s, out, scratch, scratch_count, 0);
}

ockpt_result ockpt_read_stream_deferred(ockpt_stream *s, ockpt_file *out, uint64_t *scratch,
                                        size_t scratch_count) {
  return read_stream(s, out, scratch, scratch_count, 1);
}

ockpt_result ockpt_read(const void *buf, size_t len, ockpt_file *out) {
  return ockpt_read_scratch(buf, len, out, NULL, 0);
}

typedef ockpt_result (*revision_reader)(const ockpt_src *buf, uint64_t S, ockpt_file *f,
                                        uint64_t *scratch, size_t scratch_count);

/* One revision's reader, called directly: the preamble, then the version byte it expects. */
static ockpt_result read_revision(const void *buf, size_t len, ockpt_file *out, unsigned want,
                                  const char *why, revision_reader read) {
  ockpt_src b;
  uint64_t S = buf == NULL ? 0 : (uint64_t)len;
  unsigned version = 0;
  ockpt_file ignored;
  ockpt_result r;
  b.buf = (const uint8_t *)buf;
  b.stream = NULL;
  r = preamble(&b, S, &version);
  if (out == NULL) out = &ignored;
  if (r.code == OCKPT_OK && version != want) r = fail(OCKPT_E_UNSUPPORTED_VERSION, "version", 2, why);
  if (r.code == OCKPT_OK) r = read(&b, S, out, NULL, 0);
  return finish(r, out);
}

ockpt_result ockpt_read_v1(const void *buf, size_t len, ockpt_file *out) {
  return read_revision(buf, len, out, OCKPT_REV_V1, "not a schema-1 version byte", validate_v1);
}

ockpt_result ockpt_read_wof(const void *buf, size_t len, ockpt_file *out) {
  return read_revision(buf, len, out, OCKPT_REV_V1, "WOF has version byte 1", validate_wof);
}

ockpt_result ockpt_read_v2(const void *buf, size_t len, ockpt_file *out) {
  return read_revision(buf, len, out, OCKPT_REV_V2, "not the schema-2 version byte", read_v2);
}

ockpt_result ockpt_read_v3(const void *buf, size_t len, ockpt_file *out) {
  return read_revision(buf, len, out, OCKPT_REV_V3, "not the schema-3 version byte",
                       ockpt_v3_validate);
}

static size_t scratch_count(const ockpt_src *b, uint64_t S) {
  uint64_t need = 0, n;
  if (S >= 3 && rd_u8(b, 2) == OCKPT_REV_V2) return (size_t)ockpt_v2_scratch_count(S);
  if (S >= 3 && rd_u8(b, 2) == OCKPT_REV_V3) return (size_t)ockpt_v3_scratch_count(S);
  if (S >= OCKPT_WOF_HEADER_SIZE) {
    n = rd_u32(b, 4);
    if (OCKPT_WOF_HEADER_SIZE + OFS_SIZE * n <= S) need = 2u * n; /* keys + one block */
  }
  if (S >= OCKPT_V1_HEADER_SIZE) {
    n = rd_u32(b, 16);
    if (OCKPT_V1_HEADER_SIZE + OFS_SIZE * n <= S && 4u * n > need) need = 4u * n; /* keys + 3 blocks */
  }
  return (size_t)need; /* need <= S, which fits size_t */
}

size_t ockpt_scratch_count(const void *buf, size_t len) {
  ockpt_src b;
  b.buf = (const uint8_t *)buf;
  b.stream = NULL;
  return scratch_count(&b, buf == NULL ? 0 : (uint64_t)len);
}

size_t ockpt_stream_scratch_count(ockpt_stream *s) {
  ockpt_src b;
  b.buf = NULL;
  b.stream = s;
  return scratch_count(&b, s->size);
}

/* ---- access after a successful read -------------------------------------------------------- */

int ockpt_entry(const ockpt_file *f, unsigned block, uint32_t i, uint64_t *offset,
                uint64_t *nbytes) {
  const ockpt_block *bl;
  ockpt_src fs;
  uint32_t o;
  if (f == NULL || f->revision == OCKPT_REV_NONE || block >= f->num_blocks ||
      i >= f->num_entries)
    return -1;
  bl = &f->blocks[block];
  fs = ockpt_src_of(f);
  o = rd_u32(&fs, bl->table + OFS_SIZE * (uint64_t)i);
  if (o == 0) return 0;
  if (offset != NULL) *offset = o;
  if (nbytes != NULL) *nbytes = entry_size(f, bl, i, o);
  return 1;
}

uint64_t ockpt_table_position(const ockpt_file *f, unsigned block, uint32_t i) {
  if (f == NULL || block >= f->num_blocks) return 0;
  return f->blocks[block].table + OFS_SIZE * (uint64_t)i;
}

const char *ockpt_block_name(const ockpt_file *f, unsigned block) {
  if (f == NULL || block >= f->num_blocks) return "";
  if (f->format == OCKPT_FORMAT_WOF) return "tensors";
  return v1_block_names[block];
}
