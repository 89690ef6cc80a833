/* libFuzzer harness: clang -fsanitize=fuzzer,address,undefined (see Makefile, `make fuzz`).
 *
 * Besides "no crash, no sanitizer report", it checks properties the spec implies, so a logic
 * slip aborts too:
 *   - the allocation-free path and the scratch path give the same result and the same entries;
 *   - the single-revision readers agree with the dispatcher;
 *   - every present entry lies inside the file and inside its block's data area, and the sizes
 *     of a block's present entries add up to its data area exactly (rule 9: no hole, no overlap);
 *   - an error's field is a non-empty string and its offset is inside the file (or 0);
 *   - schema 2: ockpt_read_v2() agrees with the dispatcher; every tensor and slot data range lies
 *     inside the data section, and together with their alignment padding they cover it exactly;
 *     names, keys and string values lie inside the file; the scratch path (sorted) and the
 *     allocation-free path (O(n^2)) give the same result;
 *   - schema 3: ockpt_read_v3() agrees with the dispatcher; every range lies inside the data
 *     section at a multiple of its a(len), and sorted by (offset, size) the ranges tile it
 *     (SPEC.md 7.3: no overlap, padding shorter than the next range's alignment, the section
 *     ending with the last range); records read through a cursor equal records read one by one;
 *     the offsets kept in scratch equal the ones the scratch-free reader computes;
 *   - the stream reader (ockpt_read_stream over a read-at-offset callback) gives the same result
 *     and the same entries and records as the buffer reader; its callback is never asked for a
 *     byte outside the file nor for more than OCKPT_STREAM_LINE bytes at once; and when the
 *     callback fails from some offset on, the result is either the same as the buffer reader's
 *     (the reader never needed those bytes) or truncated_file at field "stream".
 */
#include <stdlib.h>
#include <string.h>

#include "ockpt.h"

#define SCRATCH_MAX (1u << 16)
static uint64_t scratch[SCRATCH_MAX];

static void check(int ok) {
  if (!ok) abort();
}

static void same_result(const ockpt_result *a, const ockpt_result *b) {
  check(a->code == b->code);
  check(a->offset == b->offset);
  check(strcmp(a->field, b->field) == 0);
}

static volatile uint32_t sink;

static void walk(const ockpt_file *f, const ockpt_file *g) {
  unsigned b;
  check(f->revision == g->revision && f->format == g->format && f->dialect == g->dialect);
  check(f->num_blocks == g->num_blocks);
  for (b = 0; b < f->num_blocks; b++) {
    const ockpt_block *bl = &f->blocks[b];
    uint64_t total = 0;
    uint32_t i;
    check(bl->data_start <= bl->end && bl->end <= f->file_size);
    for (i = 0; i < f->num_entries; i++) {
      uint64_t o = 0, n = 0, o2 = 0, n2 = 0;
      int p = ockpt_entry(f, b, i, &o, &n);
      check(p == ockpt_entry(g, b, i, &o2, &n2));
      if (p != 1) continue;
      check(o == o2 && n == n2);
      check(o >= bl->data_start && n <= bl->end - o);
      total += n;
      {
        uint32_t crc = 0;
        check(ockpt_file_crc32(f, o, n, &crc) == 0);
        sink ^= crc;
      }
    }
    check(total == bl->end - bl->data_start);
    check(ockpt_entry(f, b, f->num_entries, NULL, NULL) == -1);
  }
  check(ockpt_entry(f, f->num_blocks, 0, NULL, NULL) == -1);
}

static uint64_t align64(uint64_t x) { return (x + 63u) / 64u * 64u; }

static void walk_v2(const ockpt_file *f, size_t size) {
  const ockpt_container *v = &f->container;
  uint64_t covered = 0, ranges = 0;
  uint32_t k, j;
  check(f->revision == OCKPT_REV_V2 && f->num_blocks == 0);
  check(!v->data.present || v->data.length <= size - v->data.offset);
  for (k = 0; k < v->num_tensors; k++) {
    ockpt_tensor_info t;
    check(ockpt_sec_tensor(f, k, &t) == 1);
    if (k > 0) {
      ockpt_tensor_info prev;
      check(ockpt_sec_tensor(f, k - 1, &prev) == 1 && prev.index < t.index);
    }
    check(v->data.present && t.offset >= v->data.offset &&
          t.nbytes <= v->data.offset + v->data.length - t.offset && t.offset % 64 == 0);
    if (t.name != NULL) {
      check(t.name >= f->buf && (uint64_t)(t.name - f->buf) + t.name_len <= size);
      check(ockpt_dtype_name(t.dtype) != NULL || !(t.flags & OCKPT_V2_HAS_DTYPE));
    }
    covered += align64(t.nbytes);
    ranges++;
    sink ^= ockpt_crc32(0, f->buf + t.offset, (size_t)t.nbytes);
  }
  check(ockpt_sec_tensor(f, v->num_tensors, NULL) == -1);
  for (j = 0; j < v->num_slots; j++) {
    const uint8_t *name;
    uint32_t len;
    check(ockpt_sec_slot(f, j, &name, &len) == 1);
    check((uint64_t)(name - f->buf) + len <= size);
    for (k = 0; k < v->num_tensors; k++) {
      uint64_t o = 0, n = 0;
      int p = ockpt_sec_slot_entry(f, j, k, &o, &n);
      check(p == 0 || p == 1);
      if (p != 1) continue;
      check(o >= v->data.offset && n <= v->data.offset + v->data.length - o && o % 64 == 0);
      covered += align64(n);
      ranges++;
    }
  }
  /* the ranges tile the data section: their aligned sizes add up to it (the last range's
   * padding may lie past its end) */
  if (ranges > 0) check(covered >= v->data.length && covered - v->data.length < 64);
  for (k = 0; k < v->num_state; k++) {
    ockpt_state_info e;
    check(ockpt_sec_state(f, k, &e) == 1);
    check((uint64_t)(e.key - f->buf) + e.key_len <= size && e.type <= 3);
    if (e.type >= 2) check((uint64_t)(e.value - f->buf) + e.len <= size);
  }
  for (k = 0; k < v->num_sections; k++)
    check(ockpt_container_section(f, k, NULL, NULL, NULL, NULL) == 1);
}


/* ---- schema 3 ----------------------------------------------------------------------------- */

static uint64_t range_align(uint64_t len) {
  uint64_t a = 1;
  if (len >= 64) return 64;
  while (a < len) a <<= 1;
  return a;
}

#define RANGES_MAX 512u
static uint64_t range_ofs[RANGES_MAX], range_len[RANGES_MAX];

/* f read without scratch, g with it (the same file). */
static void walk_v3(const ockpt_file *f, const ockpt_file *g, size_t size) {
  const ockpt_container *v = &f->container;
  uint64_t lo = v->data.offset, hi = v->data.offset + v->data.length, pos;
  size_t r = 0, a, b;
  uint32_t k, j;
  ockpt_v3_cursor cf, cg;
  check(f->revision == OCKPT_REV_V3 && g->revision == OCKPT_REV_V3 && f->num_blocks == 0);
  check(v->tensors.present == v->data.present && v->offsets == NULL);
  check(!v->data.present || v->data.length <= size - v->data.offset);
  ockpt_v3_cursor_init(f, &cf);
  ockpt_v3_cursor_init(g, &cg);
  for (k = 0; k < v->num_tensors; k++) {
    ockpt_tensor_info t, u, w;
    check(ockpt_v3_next_tensor(f, &cf, &t) == 1 && ockpt_v3_next_tensor(g, &cg, &w) == 1);
    check(ockpt_sec_tensor(f, k, &u) == 1);
    check(t.index == u.index && t.offset == u.offset && t.nbytes == u.nbytes &&
          t.name_offset == u.name_offset && t.name_len == u.name_len && t.flags == u.flags &&
          t.dtype == u.dtype && t.rank == u.rank && t.model_index == u.model_index);
    check(memcmp(t.dims, u.dims, sizeof t.dims) == 0);
    check(t.offset == w.offset && t.index == w.index && t.name_offset == w.name_offset);
    { /* one range looked up alone (through the range_index when the file has one) */
      uint64_t o = 0, n = 0;
      check(ockpt_v3_range(f, 0, k, &o, &n) == 1 && o == t.offset && n == t.nbytes);
    }
    check(t.offset >= lo && t.nbytes <= hi - t.offset && t.offset % range_align(t.nbytes) == 0);
    if (t.flags & OCKPT_V2_HAS_NAME)
      check(t.name != NULL && t.name_offset >= v->tensors.offset &&
            t.name_len <= v->tensors.offset + v->tensors.length - t.name_offset);
    if (t.flags & OCKPT_V2_HAS_DTYPE) check(ockpt_dtype_name(t.dtype) != NULL);
    if (k > 0) {
      ockpt_tensor_info prev;
      check(ockpt_sec_tensor(f, k - 1, &prev) == 1 && prev.index < t.index);
    }
    sink ^= ockpt_crc32(0, f->buf + t.offset, (size_t)t.nbytes);
    if (r < RANGES_MAX) range_ofs[r] = t.offset, range_len[r] = t.nbytes;
    r++;
  }
  check(ockpt_v3_next_tensor(f, &cf, NULL) == -1 || v->num_tensors == 0);
  for (j = 0; j < v->num_slots; j++) {
    const uint8_t *name;
    uint32_t len;
    check(ockpt_sec_slot(f, j, &name, &len) == 1);
    check((uint64_t)(name - f->buf) + len <= size);
    for (k = 0; k < v->num_tensors; k++) {
      uint64_t o = 0, n = 0, o2 = 0, n2 = 0, o3 = 0, n3 = 0, o4 = 0, n4 = 0, o5 = 0, n5 = 0;
      uint32_t index = 0;
      int p = ockpt_sec_slot_entry(f, j, k, &o, &n);
      check(p == ockpt_v3_slot_entry(g, &cg, j, k, &index, &o2, &n2));
      check(p == ockpt_v3_slot_entry(f, &cf, j, k, NULL, &o3, &n3));
      check(p == 0 || p == 1);
      check(p == ockpt_v3_range(f, j + 1, k, &o4, &n4));
      check(p == ockpt_v3_range(g, j + 1, k, &o5, &n5));
      if (p != 1) continue;
      check(o == o2 && n == n2 && o == o3 && n == n3);
      check(o == o4 && n == n4 && o == o5 && n == n5);
      check(o >= lo && n <= hi - o && o % range_align(n) == 0);
      if (r < RANGES_MAX) range_ofs[r] = o, range_len[r] = n;
      r++;
    }
  }
  /* the ranges tile the data section (small files: an insertion sort by (offset, size)) */
  if (r > 0 && r <= RANGES_MAX) {
    for (a = 1; a < r; a++)
      for (b = a; b > 0 && (range_ofs[b] < range_ofs[b - 1] ||
                            (range_ofs[b] == range_ofs[b - 1] && range_len[b] < range_len[b - 1]));
           b--) {
        uint64_t t0 = range_ofs[b], t1 = range_len[b];
        range_ofs[b] = range_ofs[b - 1], range_len[b] = range_len[b - 1];
        range_ofs[b - 1] = t0, range_len[b - 1] = t1;
      }
    check(range_ofs[0] == lo);
    for (pos = lo, a = 0; a < r; a++) {
      check(range_ofs[a] >= pos && range_ofs[a] - pos < range_align(range_len[a]));
      pos = range_ofs[a] + range_len[a];
    }
    check(pos == hi);
  }
  for (k = 0; k < v->num_state; k++) {
    ockpt_state_info e;
    check(ockpt_sec_state(f, k, &e) == 1);
    check((uint64_t)(e.key - f->buf) + e.key_len <= size && e.type <= 3);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Schema 2 checksums stop almost every random mutation at H2 or T3: a copy with every CRC-32C
 * recomputed (where the fields let us find the bytes) reaches the rules behind them. */
#define RESEAL_MAX (1u << 20)
static uint8_t resealed[RESEAL_MAX];

static void put32(uint8_t *b, uint64_t k, uint32_t v) {
  b[k] = (uint8_t)v;
  b[k + 1] = (uint8_t)(v >> 8);
  b[k + 2] = (uint8_t)(v >> 16);
  b[k + 3] = (uint8_t)(v >> 24);
}

static uint64_t get64(const uint8_t *b, uint64_t k) {
  uint64_t v = 0;
  int i;
  for (i = 7; i >= 0; i--) v = (v << 8) | b[k + (uint64_t)i];
  return v;
}

static void reseal(uint8_t *b, size_t size) {
  uint64_t n, i;
  if (size < 64) return;
  n = (uint64_t)b[24] | ((uint64_t)b[25] << 8) | ((uint64_t)b[26] << 16) | ((uint64_t)b[27] << 24);
  if (n <= 64 && 64 + 32 * n <= size) {
    for (i = 0; i < n; i++) {
      uint64_t e = 64 + 32 * i, o = get64(b, e + 8), l = get64(b, e + 16);
      if (o <= size && l <= size - o) put32(b, e + 24, ockpt_crc32c(0, b + o, (size_t)l));
    }
    put32(b, 28, ockpt_crc32c(0, b + 64, (size_t)(32 * n)));
  }
  put32(b, 4, 0);
  put32(b, 4, ockpt_crc32c(0, b, 64));
}

static int one_input(const uint8_t *data, size_t size);

/* ---- the stream reader over the same bytes ------------------------------------------------ */

typedef struct mem {
  const uint8_t *data;
  size_t size;
  uint64_t fail_from; /* reads reaching this offset fail (UINT64_MAX: none) */
} mem;

static int mem_read(void *ctx, uint64_t offset, void *dst, size_t len) {
  const mem *m = (const mem *)ctx;
  check(len > 0 && len <= OCKPT_STREAM_LINE);               /* bounded reads */
  check(offset <= m->size && len <= m->size - offset);      /* never outside the file */
  if (offset + len > m->fail_from) return -1;
  memcpy(dst, m->data + offset, len);
  return 0;
}

static ockpt_stream stream;

/* The stream reader agrees with the buffer reader's result `r` and file `f`. */
static void stream_agrees(const uint8_t *data, size_t size, const ockpt_result *r,
                          const ockpt_file *f) {
  mem m;
  ockpt_file s;
  ockpt_result rs;
  size_t need;
  m.data = data;
  m.size = size;
  m.fail_from = UINT64_MAX;
  ockpt_stream_init(&stream, mem_read, &m, size);
  need = ockpt_stream_scratch_count(&stream);
  check(need == ockpt_scratch_count(data, size));
  rs = ockpt_read_stream(&stream, &s, size % 2 ? scratch : NULL, need <= SCRATCH_MAX ? need : 0);
  same_result(r, &rs);
  check(!ockpt_stream_failed(&stream));
  if (r->code == OCKPT_OK) {
    uint32_t k, j;
    check(s.buf == NULL && s.stream == &stream && s.revision == f->revision);
    if (f->revision != OCKPT_REV_V2 && f->revision != OCKPT_REV_V3) {
      walk(f, &s);
    } else {
      const ockpt_container *cs = &s.container, *cf = &f->container;
      check(cs->num_tensors == cf->num_tensors && cs->num_slots == cf->num_slots &&
            cs->num_state == cf->num_state && cs->num_sections == cf->num_sections);
      for (k = 0; k < f->container.num_tensors; k++) {
        ockpt_tensor_info a, b;
        check(ockpt_sec_tensor(f, k, &a) == 1 && ockpt_sec_tensor(&s, k, &b) == 1);
        check(a.index == b.index && a.offset == b.offset && a.nbytes == b.nbytes &&
              a.name_offset == b.name_offset && a.name_len == b.name_len && b.name == NULL &&
              a.flags == b.flags && a.dtype == b.dtype && a.rank == b.rank &&
              a.model_index == b.model_index && memcmp(a.dims, b.dims, sizeof a.dims) == 0);
        {
          uint32_t c1 = 0, c2 = 0;
          check(ockpt_file_crc32(f, a.offset, a.nbytes, &c1) == 0);
          check(ockpt_file_crc32(&s, b.offset, b.nbytes, &c2) == 0 && c1 == c2);
        }
        for (j = 0; j < f->container.num_slots; j++) {
          uint64_t o1 = 0, n1 = 0, o2 = 0, n2 = 0;
          int r1 = ockpt_sec_slot_entry(f, j, k, &o1, &n1);
          check(r1 == ockpt_sec_slot_entry(&s, j, k, &o2, &n2));
          check(o1 == o2 && n1 == n2);
        }
      }
      for (k = 0; k < f->container.num_state; k++) {
        ockpt_state_info a, b;
        check(ockpt_sec_state(f, k, &a) == 1 && ockpt_sec_state(&s, k, &b) == 1);
        check(a.key_offset == b.key_offset && a.key_len == b.key_len && a.type == b.type &&
              a.i == b.i && a.len == b.len && a.value_offset == b.value_offset);
      }
    }
    check(!ockpt_stream_failed(&stream));
  }
  /* the deferred read (B6 left to ockpt_verify_deferred): the same result once verified */
  ockpt_stream_init(&stream, mem_read, &m, size);
  rs = ockpt_read_stream_deferred(&stream, &s, NULL, 0);
  check(!ockpt_stream_failed(&stream));
  if (rs.code == OCKPT_DEFERRED) {
    uint64_t probe;
    uint32_t crc = 7;
    check(s.container.unchecked == OCKPT_UNCHECKED_BLOCKS && ockpt_v3_block_size(&s) != 0);
    check(ockpt_file_copy(&s, s.container.data.offset, &probe, 1) == -1);
    check(ockpt_file_crc32(&s, s.container.data.offset, 1, &crc) == -1 && crc == 7);
    rs = ockpt_verify_deferred(&s);
    check(rs.code != OCKPT_OK || s.container.unchecked == 0);
  } else {
    check(rs.code == OCKPT_OK ? s.container.unchecked == 0 : 1);
  }
  same_result(r, &rs);
  /* a callback that fails from some offset on (chosen from the input's size) */
  if (size > 0) {
    m.fail_from = (uint64_t)(size * 7u / 11u);
    ockpt_stream_init(&stream, mem_read, &m, size);
    rs = ockpt_read_stream(&stream, &s, NULL, 0);
    if (ockpt_stream_failed(&stream)) {
      check(rs.code == OCKPT_E_TRUNCATED_FILE && strcmp(rs.field, "stream") == 0 &&
            rs.offset + OCKPT_STREAM_LINE > m.fail_from && s.revision == OCKPT_REV_NONE);
    } else {
      same_result(r, &rs);
    }
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  one_input(data, size);
  if (size >= 3 && (data[2] == OCKPT_REV_V2 || data[2] == OCKPT_REV_V3) &&
      size <= RESEAL_MAX) {
    memcpy(resealed, data, size);
    reseal(resealed, size);
    one_input(resealed, size);
  }
  return 0;
}

static int one_input(const uint8_t *data, size_t size) {
  ockpt_file f, g, h;
  ockpt_result r = ockpt_read(data, size, &f);
  size_t need = ockpt_scratch_count(data, size);
  ockpt_result rs = ockpt_read_scratch(data, size, &g, scratch, need <= SCRATCH_MAX ? need : 0);
  same_result(&r, &rs);
  if (size >= 3 && data[2] == OCKPT_REV_V2) {
    ockpt_result r2 = ockpt_read_v2(data, size, &h);
    same_result(&r, &r2);
  }
  if (size >= 3 && data[2] == OCKPT_REV_V3) {
    ockpt_result r3 = ockpt_read_v3(data, size, &h);
    same_result(&r, &r3);
  }
  stream_agrees(data, size, &r, &f);
  if (r.code != OCKPT_OK) {
    check(r.field[0] != '\0' && r.offset <= size && r.message != NULL);
    check(f.revision == OCKPT_REV_NONE);
    return 0;
  }
  if (f.revision == OCKPT_REV_V2) {
    check(g.revision == OCKPT_REV_V2);
    check(ockpt_read_v2(data, size, &h).code == OCKPT_OK);
    check(ockpt_read_v1(data, size, &h).code != OCKPT_OK);
    walk_v2(&f, size);
    return 0;
  }
  if (f.revision == OCKPT_REV_V3) {
    check(ockpt_read_v3(data, size, &h).code == OCKPT_OK);
    check(ockpt_read_v2(data, size, &h).code != OCKPT_OK);
    if (need <= SCRATCH_MAX && f.container.tensors.present) check(g.container.offsets == scratch);
    walk_v3(&f, &g, size);
    return 0;
  }
  walk(&f, &g);
  if (f.format == OCKPT_FORMAT_CHECKPOINT) {
    check(ockpt_read_v1(data, size, &h).code == OCKPT_OK);
  } else {
    check(ockpt_read_v1(data, size, &h).code != OCKPT_OK);
    check(ockpt_read_wof(data, size, &h).code == OCKPT_OK);
  }
  return 0;
}
