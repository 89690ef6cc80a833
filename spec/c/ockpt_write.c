/* The reference C writer (ockpt_write.h): schema 1 in both dialects, WOF and schema 2, byte for
 * byte as the Python library writes them (src/onert_checkpoint/format/revisions/, the *_write modules).
 *
 * One mechanism places the data of every target. A block (schema 1, WOF) or the data section
 * (schema 2) holds "ranges" numbered r = 0..R-1 in range order (table order; schema 2: the
 * tensors in record order, then each slot's entries in record order). Ranges are stored in
 * storage order: sorted by the key (built in memory?, source offset, r), so that a loaded file
 * keeps its layout (SPEC.md 6.10 and appendix B). A 0-byte range sits at the offset of the next non-empty
 * range in storage order when it precedes that range in range order; otherwise (and when no
 * non-empty range follows) at the end, where every range is empty. Readers sort ranges by
 * (offset, range order) (rule 9, D2), so this is the only placement a reader gives back.
 */
#include "ockpt_write.h"

#include <stddef.h>

#include "ockpt.h"

#define NONE UINT64_MAX
#define CHUNK ((uint64_t)1 << 30) /* largest callback/CRC call: fits any size_t >= 32 bits */

/* ---- output: the same generator feeds a CRC-32C or the caller's callback ----------------- */

typedef struct sink {
  int crc_only; /* 1: only compute `crc` over the bytes */
  uint32_t crc;
  ockpt_write_fn write;
  void *ctx;
  uint64_t count;
  int failed;
  size_t fill;
  /* crc_only with blocks != NULL: also the CRC-32C of every block of 2^block_shift bytes,
   * each put to `blocks` as a u32 as soon as the block ends (schema 3's data_blocks section,
   * SPEC.md 7.4); `blocks` is another sink, never one with blocks of its own */
  struct sink *blocks;
  unsigned block_shift;
  uint64_t block_fill;
  uint32_t block_crc;
  uint8_t buf[256];
} sink;

static void put(sink *s, const void *data, uint64_t n);

static void set_le(uint8_t *p, uint64_t v, unsigned bytes) {
  unsigned i;
  for (i = 0; i < bytes; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static void block_crcs(sink *s, const uint8_t *p, size_t k) {
  uint64_t size = (uint64_t)1 << s->block_shift;
  while (k > 0) {
    size_t m = (size_t)(size - s->block_fill < k ? size - s->block_fill : k);
    uint8_t le[OCKPT_V3_DATA_BLOCKS_SECTION_CRC_ELEM_SIZE];
    s->block_crc = ockpt_crc32c(s->block_crc, p, m);
    s->block_fill += m;
    if (s->block_fill == size) {
      set_le(le, s->block_crc, sizeof le);
      put(s->blocks, le, sizeof le);
      s->block_crc = 0;
      s->block_fill = 0;
    }
    p += m;
    k -= m;
  }
}

static void emit(sink *s, const uint8_t *p, uint64_t n) {
  while (n > 0) {
    size_t k = (size_t)(n < CHUNK ? n : CHUNK);
    if (s->crc_only) {
      s->crc = ockpt_crc32c(s->crc, p, k);
      if (s->blocks != NULL) block_crcs(s, p, k);
    } else if (!s->failed && s->write(s->ctx, p, k) != 0) {
      s->failed = 1;
    }
    p += k;
    n -= k;
  }
}

static void flush(sink *s) {
  emit(s, s->buf, s->fill);
  s->fill = 0;
}

static void put(sink *s, const void *data, uint64_t n) {
  const uint8_t *p = (const uint8_t *)data;
  s->count += n;
  if (n > sizeof s->buf - s->fill) {
    flush(s);
    if (n >= sizeof s->buf) {
      emit(s, p, n); /* large data goes straight through, never copied */
      return;
    }
  }
  while (n-- > 0) s->buf[s->fill++] = *p++;
}

static void put_zeros(sink *s, uint64_t n) {
  static const uint8_t zeros[64] = {0};
  while (n > 0) {
    uint64_t k = n < sizeof zeros ? n : sizeof zeros;
    put(s, zeros, k);
    n -= k;
  }
}

static void put_le(sink *s, uint64_t v, unsigned bytes) {
  uint8_t b[8];
  unsigned i;
  for (i = 0; i < bytes; i++) b[i] = (uint8_t)(v >> (8 * i));
  put(s, b, bytes);
}
/* A field of a record of ockpt_layout.h (`rec` a generated packed struct), as wide as the .ksy
 * makes it; an element of an array of integers (`arr` its OCKPT_..._ELEM_SIZE stem). */
#define WIDTH(rec, f) ((unsigned)sizeof(((const rec *)0)->f))
#define PUTF(s, rec, f, v) put_le((s), (uint64_t)(v), WIDTH(rec, f))
#define PUTA(s, arr, v) put_le((s), (uint64_t)(v), arr##_ELEM_SIZE)
/* The same into a buffer holding the record, at the field's offset (OCKPT_..._AT_<FIELD>). */
#define SETF(buf, rec, f, v) set_le((buf) + offsetof(rec, f), (uint64_t)(v), WIDTH(rec, f))
#define V1H ockpt_v1_header_layout
#define V1F ockpt_v1_footer_layout
#define WOFH ockpt_wof_header_layout
#define V2H ockpt_container_header_layout
#define SEC ockpt_container_section_entry_layout
#define TH2 ockpt_v2_tensors_head_layout
#define TH3 ockpt_v3_tensors_head_layout
#define REC ockpt_v2_tensor_record_layout
#define OPT ockpt_container_optimizer_head_layout
#define DESC ockpt_container_slot_descriptor_layout
#define SLOT ockpt_v2_slot_entry_layout
#define STH ockpt_container_state_head_layout
#define STE ockpt_container_state_entry_layout
#define ORG ockpt_container_origin_layout
#define DBH ockpt_v3_data_blocks_head_layout
#define RIH ockpt_v3_range_index_head_layout

static void sink_init(sink *s, int crc_only, ockpt_write_fn write, void *ctx) {
  s->crc_only = crc_only;
  s->crc = 0;
  s->write = write;
  s->ctx = ctx;
  s->count = 0;
  s->failed = 0;
  s->fill = 0;
  s->blocks = NULL;
  s->block_shift = 0;
  s->block_fill = 0;
  s->block_crc = 0;
}

/* ---- ranges and their placement ------------------------------------------------------------ */

typedef struct layout {
  const ockpt_w_checkpoint *c;
  int v2;           /* schema 2: every range starts on a 64-byte boundary */
  int block;        /* schema 1 / WOF: 0 weights, 1 + j slot j; -1 schema 2 */
  int absent_empty; /* onert: an absent slot entry is recorded like an empty one */
  int use_src;      /* storage order follows the source offsets */
  uint64_t num_ranges;
  uint64_t data_start;
  int monotonic;    /* storage order is range order: offsets are prefix sums */
  uint64_t cur_r, cur_sum; /* cursor of the prefix sum (monotonic) */
} layout;

static uint64_t align_to(const layout *L, uint64_t x) {
  return L->v2 ? (x + OCKPT_CONTAINER_ALIGNMENT - 1u) / OCKPT_CONTAINER_ALIGNMENT * OCKPT_CONTAINER_ALIGNMENT : x;
}

/* Range r's buffer, or NULL when it is no range (an absent slot entry). */
static const ockpt_w_buffer *range_at(const layout *L, uint64_t r) {
  const ockpt_w_checkpoint *c = L->c;
  const ockpt_w_buffer *b;
  uint64_t n = c->num_tensors;
  if (L->block == 0 || (L->block < 0 && r < n)) return &c->tensors[r].buf;
  if (L->block > 0)
    b = &c->slots[L->block - 1].entries[r];
  else
    b = &c->slots[(r - n) / n].entries[(r - n) % n];
  if (b->nbytes == OCKPT_W_ABSENT) return L->absent_empty ? b : NULL;
  return b;
}

static uint64_t range_size(const ockpt_w_buffer *b) {
  return b->nbytes == OCKPT_W_ABSENT ? 0 : b->nbytes;
}

/* Storage-order comparison of two ranges: (built in memory, source offset, range order). */
static int key_less(const layout *L, uint64_t a, uint64_t b) {
  const ockpt_w_buffer *x = range_at(L, a), *y = range_at(L, b);
  int xn = !L->use_src || x->src_offset == OCKPT_W_NEW, yn = !L->use_src || y->src_offset == OCKPT_W_NEW;
  if (xn != yn) return xn < yn;
  if (!xn && x->src_offset != y->src_offset) return x->src_offset < y->src_offset;
  return a < b;
}

static int nonempty(const layout *L, uint64_t r) {
  const ockpt_w_buffer *b = range_at(L, r);
  return b != NULL && range_size(b) > 0;
}

/* The first non-empty range after `after` in storage order (after == NONE: the first one). */
static uint64_t next_nonempty(const layout *L, uint64_t after) {
  uint64_t r, best = NONE;
  if (L->monotonic) {
    for (r = after == NONE ? 0 : after + 1; r < L->num_ranges; r++)
      if (nonempty(L, r)) return r;
    return NONE;
  }
  for (r = 0; r < L->num_ranges; r++)
    if (nonempty(L, r) && (after == NONE || key_less(L, after, r)) &&
        (best == NONE || key_less(L, r, best)))
      best = r;
  return best;
}

/* Sum of the (aligned) sizes of the non-empty ranges stored before range r. */
static uint64_t stored_before(layout *L, uint64_t r) {
  uint64_t f, sum = 0;
  if (L->monotonic) {
    if (r < L->cur_r) L->cur_r = 0, L->cur_sum = 0;
    for (; L->cur_r < r; L->cur_r++)
      if (nonempty(L, L->cur_r)) L->cur_sum += align_to(L, range_size(range_at(L, L->cur_r)));
    return L->cur_sum;
  }
  for (f = 0; f < L->num_ranges; f++)
    if (nonempty(L, f) && key_less(L, f, r)) sum += align_to(L, range_size(range_at(L, f)));
  return sum;
}

static uint64_t stored_total(layout *L) {
  uint64_t f, sum = 0;
  for (f = 0; f < L->num_ranges; f++)
    if (nonempty(L, f)) sum += align_to(L, range_size(range_at(L, f)));
  return sum;
}

/* Where range r starts (an absolute file offset). */
static uint64_t range_offset(layout *L, uint64_t r) {
  uint64_t nx;
  if (L->monotonic || nonempty(L, r)) return L->data_start + stored_before(L, r);
  nx = next_nonempty(L, r);
  if (nx != NONE && r < nx) return L->data_start + stored_before(L, nx);
  return L->data_start + stored_total(L);
}

/* Whether an empty range is placed after every non-empty one (schema 2 then pads the data
 * section to the boundary where that range starts). */
static int empty_at_end(layout *L) {
  uint64_t r, nx;
  for (r = 0; r < L->num_ranges; r++) {
    const ockpt_w_buffer *b = range_at(L, r);
    if (b == NULL || range_size(b) > 0) continue;
    nx = next_nonempty(L, r);
    if (nx == NONE || nx < r) return 1;
  }
  return 0;
}

/* The data length: up to the end of the last stored byte, or of the last empty range. */
static uint64_t data_length(layout *L) {
  uint64_t total = stored_total(L), last = NONE, r;
  if (empty_at_end(L)) return total;
  for (r = next_nonempty(L, NONE); r != NONE; r = next_nonempty(L, r)) last = r;
  if (last == NONE) return 0;
  return total - align_to(L, range_size(range_at(L, last))) + range_size(range_at(L, last));
}

static void layout_init(layout *L, const ockpt_w_checkpoint *c, int v2, int block,
                        int absent_empty, int use_src, uint64_t data_start) {
  uint64_t r, prev = NONE;
  L->c = c;
  L->v2 = v2;
  L->block = block;
  L->absent_empty = absent_empty;
  L->use_src = use_src;
  L->num_ranges = v2 ? (uint64_t)c->num_tensors * (1u + c->num_slots) : c->num_tensors;
  L->data_start = data_start;
  L->cur_r = 0;
  L->cur_sum = 0;
  L->monotonic = 0;
  for (r = 0; r < L->num_ranges; r++) {
    if (range_at(L, r) == NULL) continue;
    if (prev != NONE && !key_less(L, prev, r)) return;
    prev = r;
  }
  L->monotonic = 1;
}

/* The stored bytes in storage order, each range at its offset (zeros between). */
static void put_data(layout *L, sink *s) {
  uint64_t r, pos = L->data_start, at = L->data_start;
  for (r = next_nonempty(L, NONE); r != NONE; r = next_nonempty(L, r)) {
    const ockpt_w_buffer *b = range_at(L, r);
    put_zeros(s, at - pos);
    put(s, b->data, b->nbytes);
    pos = at + b->nbytes;
    at += align_to(L, b->nbytes);
  }
  if (L->v2 && empty_at_end(L)) put_zeros(s, align_to(L, pos) - pos);
}

/* ---- content checks -------------------------------------------------------------------------- */

static ockpt_w_result fail(const char *message) {
  ockpt_w_result r;
  r.status = OCKPT_W_NOT_REPRESENTABLE;
  r.message = message;
  r.file_size = 0;
  return r;
}

static int bytes_equal(const uint8_t *a, uint32_t na, const uint8_t *b, uint32_t nb) {
  uint32_t i;
  if (na != nb) return 0;
  for (i = 0; i < na; i++)
    if (a[i] != b[i]) return 0;
  return 1;
}

static int is_text(const uint8_t *s, uint32_t n, const char *text) {
  uint32_t i;
  for (i = 0; i < n; i++)
    if (text[i] == '\0' || (uint8_t)text[i] != s[i]) return 0;
  return text[n] == '\0';
}

/* RFC 3629: no overlong forms, no surrogates (U+D800..DFFF), nothing above U+10FFFF. */
static int utf8_ok(const uint8_t *p, uint64_t n) {
  uint64_t i = 0;
  while (i < n) {
    uint8_t c = p[i];
    unsigned len, k;
    uint8_t lo = 0x80, hi = 0xBF;
    if (c < 0x80) {
      i++;
      continue;
    }
    if (c >= 0xC2 && c <= 0xDF) len = 2;
    else if (c >= 0xE0 && c <= 0xEF) len = 3;
    else if (c >= 0xF0 && c <= 0xF4) len = 4;
    else return 0;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
    if (n - i < len) return 0;
    if (p[i + 1] < lo || p[i + 1] > hi) return 0;
    for (k = 2; k < len; k++)
      if (p[i + k] < 0x80 || p[i + k] > 0xBF) return 0;
    i += len;
  }
  return 1;
}

static int text_ok(const uint8_t *p, uint64_t n, uint64_t limit) {
  return n >= 1 && n <= limit && p != NULL && utf8_ok(p, n);
}

/* Bytes per element of a circle TensorType (SPEC.md 6.3); 0: no whole-byte size; -1: unknown. */
static int dtype_size(int code) {
  static const signed char sizes[23] = {0, 0, 0, 0, 0, /* -5..-1: ggml blocks, uint4 */
                                        4, 2, 4, 1, 8, 0, 1, 2, 8, 1, 8, 16, 8, 0, 0, 4, 2, 0};
  if (code < -5 || code > 17) return -1;
  return sizes[code + 5];
}

static int state_value(const ockpt_w_checkpoint *c, const char *key, int64_t *value) {
  uint32_t k;
  for (k = 0; k < c->num_state; k++)
    if (is_text(c->state[k].key, c->state[k].key_len, key)) {
      if (c->state[k].type != OCKPT_CONTAINER_VALUE_INT) return -1;
      *value = c->state[k].i;
      return 1;
    }
  *value = 0;
  return 0;
}

static const char *check_tensor_order(const ockpt_w_checkpoint *c, uint64_t limit) {
  uint32_t k;
  if (c->num_tensors > 0 && c->tensors == NULL) return "no tensor array";
  for (k = 0; k < c->num_tensors; k++) {
    const ockpt_w_buffer *b = &c->tensors[k].buf;
    if (k > 0 && c->tensors[k].index <= c->tensors[k - 1].index)
      return "tensors must be given in strictly ascending index order";
    if ((uint64_t)c->tensors[k].index >= limit) return "a tensor's index is out of range";
    if (b->nbytes == OCKPT_W_ABSENT || (b->nbytes > 0 && b->data == NULL))
      return "a tensor has no data";
  }
  return NULL;
}

static const char *check_slot_entries(const ockpt_w_checkpoint *c) {
  uint32_t j, k;
  if (c->num_slots > 0 && c->slots == NULL) return "no slot array";
  for (j = 0; j < c->num_slots; j++) {
    if (c->num_tensors > 0 && c->slots[j].entries == NULL) return "a slot has no entry array";
    for (k = 0; k < c->num_tensors; k++) {
      const ockpt_w_buffer *b = &c->slots[j].entries[k];
      if (b->nbytes != OCKPT_W_ABSENT && b->nbytes > 0 && b->data == NULL)
        return "a slot entry has no data";
    }
  }
  return NULL;
}

/* What schema 1 and WOF cannot hold at all, refused as the library refuses it (SPEC.md 9,
 * 9.2: a lossy write only when asked): tensor names, dtypes, shapes and model indices, and
 * sections of other kinds. The caller who means to drop them leaves them out of `c`. */
static const char *unheld(const ockpt_w_checkpoint *c, int wof) {
  uint32_t k;
  for (k = 0; k < c->num_tensors; k++)
    if (c->tensors[k].has != 0)
      return wof ? "WOF holds no tensor names, dtypes, shapes or model indices"
                 : "schema 1 holds no tensor names, dtypes, shapes or model indices";
  if (c->num_sections > 0)
    return wof ? "WOF holds no sections of other kinds" : "schema 1 holds no sections of other kinds";
  return NULL;
}

/* ---- schema 1 (SPEC.md section 4; the runtimes' layouts: appendix B) --------------------- */

static const char *onert_unfit(const ockpt_w_checkpoint *c) {
  uint32_t k;
  if (c->num_entries != c->num_tensors)
    return "onert files have no absent entries (indices must be 0..N-1, all present)";
  for (k = 0; k < c->num_tensors; k++)
    if (c->tensors[k].index != k)
      return "onert files have no absent entries (indices must be 0..N-1, all present)";
  return NULL;
}

static const char *micro_unfit(const ockpt_w_checkpoint *c, uint32_t kind) {
  uint32_t j, k;
  if (c->footerless) return "onert-micro files always have a footer";
  if (kind == OCKPT_CONTAINER_OPT_ADAM)
    for (j = 0; j < 2; j++)
      for (k = 0; k < c->num_tensors; k++)
        if (c->slots[j].entries[k].nbytes != c->tensors[k].buf.nbytes)
          return "onert-micro keeps Adam's m and v for every saved tensor, at its size";
  return NULL;
}

static ockpt_w_result write_v1(const ockpt_w_checkpoint *c, ockpt_w_dialect dialect,
                               ockpt_write_fn write, void *ctx) {
  uint32_t kind = c->has_optimizer ? c->optimizer_kind : OCKPT_CONTAINER_OPT_SGD;
  uint64_t n = c->num_entries, pos, start[3], end[3], size, other, opt1, opt2;
  int64_t step, epoch;
  int footer, b, nblocks, onert;
  const char *why;
  uint32_t k;
  layout L[3];
  sink s;
  ockpt_w_result res;

  if (kind != OCKPT_CONTAINER_OPT_SGD && kind != OCKPT_CONTAINER_OPT_ADAM)
    return fail("schema 1 stores only SGD and Adam");
  if ((why = check_tensor_order(c, n)) != NULL) return fail(why);
  if ((why = unheld(c, 0)) != NULL) return fail(why);
  if (kind == OCKPT_CONTAINER_OPT_ADAM) {
    if (c->num_slots != 2 || !is_text(c->slots[0].name, c->slots[0].name_len, "m") ||
        !is_text(c->slots[1].name, c->slots[1].name_len, "v"))
      return fail("Adam has the slots m and v");
    if ((why = check_slot_entries(c)) != NULL) return fail(why);
    for (k = 0; k < c->num_tensors; k++) {
      uint64_t w = c->tensors[k].buf.nbytes, m = c->slots[0].entries[k].nbytes,
               v = c->slots[1].entries[k].nbytes;
      if ((m != OCKPT_W_ABSENT && m != 0 && m != w) || (v != OCKPT_W_ABSENT && v != 0 && v != w))
        return fail("an Adam slot entry's size is neither 0 nor its weight's");
      if ((m == OCKPT_W_ABSENT ? 0 : m) != (v == OCKPT_W_ABSENT ? 0 : v))
        return fail("m and v entries differ in size (Adam keeps both or neither)");
    }
  } else if (c->num_slots != 0) {
    return fail("SGD has no slots");
  }
  for (k = 0; k < c->num_state; k++)
    if (!is_text(c->state[k].key, c->state[k].key_len, "step") &&
        !is_text(c->state[k].key, c->state[k].key_len, "epoch"))
      return fail("schema 1 stores only step and epoch");
  if (state_value(c, "step", &step) < 0 || state_value(c, "epoch", &epoch) < 0 || step < 0 ||
      epoch < 0 || step > 0xFFFFFFFF || epoch > 0xFFFFFFFF)
    return fail("step and epoch must be integers in 0..2**32-1");
  if (c->footerless && (step != 0 || epoch != 0))
    return fail("a footer-less file has no footer to hold the step and epoch");
  if (dialect == OCKPT_W_AUTO) dialect = onert_unfit(c) == NULL ? OCKPT_W_ONERT : OCKPT_W_ONERT_MICRO;
  onert = dialect == OCKPT_W_ONERT;
  why = onert ? onert_unfit(c) : micro_unfit(c, kind);
  if (why != NULL) return fail(why);

  /* Offsets: the header, each block's table then data, the footer (SPEC.md 4). */
  footer = !(onert && c->footerless);
  nblocks = kind == OCKPT_CONTAINER_OPT_ADAM ? 3 : 1;
  pos = OCKPT_V1_HEADER_SIZE;
  for (b = 0; b < nblocks; b++) {
    /* onert writes data in table order (CheckpointExporter.cc); onert-micro in the order of
     * the file it read (OMCheckpointSaver.cpp): storage order by source offset. */
    start[b] = pos;
    layout_init(&L[b], c, 0, b, onert && b > 0, !onert,
                pos + OCKPT_V1_OFFSET_TABLE_OFS_ENTRIES_ELEM_SIZE * n);
    end[b] = pos + OCKPT_V1_OFFSET_TABLE_OFS_ENTRIES_ELEM_SIZE * n + stored_total(&L[b]);
    pos = end[b];
  }
  if (pos > 0xFFFFFFFFu) return fail("schema 1 offsets are u32; the content is too large");
  other = footer ? pos : 0;
  size = pos + (footer ? OCKPT_FOOTER_SIZE : 0);
  if (kind == OCKPT_CONTAINER_OPT_ADAM)
    opt1 = start[1], opt2 = start[2];
  else if (onert)
    opt1 = pos, opt2 = 0;
  else
    opt1 = 0, opt2 = 0;

  sink_init(&s, 0, write, ctx);
  PUTF(&s, V1H, magic, OCKPT_MAGIC);
  PUTF(&s, V1H, version, OCKPT_REV_V1);
  PUTF(&s, V1H, reserved, 0);
  PUTF(&s, V1H, ofs_opt1, opt1);
  PUTF(&s, V1H, ofs_opt2, opt2);
  PUTF(&s, V1H, ofs_other, other);
  PUTF(&s, V1H, num_entries, n);
  for (b = 0; b < nblocks; b++) {
    uint64_t i;
    k = 0;
    for (i = 0; i < n; i++) {
      uint64_t value = 0;
      if (k < c->num_tensors && c->tensors[k].index == i) {
        if (range_at(&L[b], k) != NULL) value = range_offset(&L[b], k);
        k++;
      }
      PUTA(&s, OCKPT_V1_OFFSET_TABLE_OFS_ENTRIES, value);
    }
    put_data(&L[b], &s);
  }
  if (footer) {
    PUTF(&s, V1F, step, step);
    PUTF(&s, V1F, epoch, epoch);
  }
  flush(&s);
  res.status = s.failed ? OCKPT_W_IO : OCKPT_W_OK;
  res.message = s.failed ? "the write callback failed" : "ok";
  res.file_size = s.count;
  if (!s.failed && s.count != size) res.status = OCKPT_W_IO, res.message = "internal: size";
  return res;
}

/* ---- weight-only format (SPEC.md section 5) -------------------------------------------------- */

static ockpt_w_result write_wof(const ockpt_w_checkpoint *c, ockpt_write_fn write, void *ctx) {
  uint32_t j, k;
  uint64_t n = c->num_entries, i;
  const char *why;
  layout L;
  sink s;
  ockpt_w_result res;
  if (c->has_optimizer) {
    if ((why = check_slot_entries(c)) != NULL) return fail(why);
    for (j = 0; j < c->num_slots; j++)
      for (k = 0; k < c->num_tensors; k++)
        if (c->slots[j].entries[k].nbytes != OCKPT_W_ABSENT)
          return fail("WOF holds weights only; writing it would lose the optimizer state");
  }
  if (c->has_optimizer && c->optimizer_kind != OCKPT_CONTAINER_OPT_SGD)
    return fail("WOF holds weights only; writing it would lose the optimizer kind");
  if (c->num_state > 0)
    return fail("WOF holds weights only; writing it would lose the training state");
  if ((why = check_tensor_order(c, n)) != NULL) return fail(why);
  if ((why = unheld(c, 1)) != NULL) return fail(why);
  layout_init(&L, c, 0, 0, 0, 1, OCKPT_WOF_HEADER_SIZE + OCKPT_WOF_OFS_ENTRIES_ELEM_SIZE * n);
  if (L.data_start + stored_total(&L) > 0xFFFFFFFFu)
    return fail("WOF offsets are u32; the content is too large");
  sink_init(&s, 0, write, ctx);
  PUTF(&s, WOFH, magic, OCKPT_MAGIC);
  PUTF(&s, WOFH, version, OCKPT_REV_V1);
  PUTF(&s, WOFH, reserved, 0);
  PUTF(&s, WOFH, num_entries, n);
  for (i = 0, k = 0; i < n; i++) {
    uint64_t value = 0;
    if (k < c->num_tensors && c->tensors[k].index == i) value = range_offset(&L, k++);
    PUTA(&s, OCKPT_WOF_OFS_ENTRIES, value);
  }
  put_data(&L, &s);
  flush(&s);
  res.status = s.failed ? OCKPT_W_IO : OCKPT_W_OK;
  res.message = s.failed ? "the write callback failed" : "ok";
  res.file_size = s.count;
  return res;
}

/* ---- schema 2 (SPEC.md sections 6 and 8, 6.10 "Writing") -------------------------------------------- */

#define V2_MAX_BODIES (OCKPT_CONTAINER_MAX_SECTIONS)

typedef struct v2plan {
  const ockpt_w_checkpoint *c;
  int v3;        /* schema 3: columnar tensors, 8-byte slot entries, ranges placed by rule */
  int identity;  /* schema 3: the data order is record order (no `order` column) */
  uint32_t columns; /* schema 3: the tensors section's columns */
  layout L;
  uint32_t n, K;
  int has_data;
  unsigned nbodies;        /* sections with a body in memory (all but data) */
  uint32_t kind[V2_MAX_BODIES + 1], flags[V2_MAX_BODIES + 1], crc[V2_MAX_BODIES + 1];
  uint64_t ofs[V2_MAX_BODIES + 1], len[V2_MAX_BODIES + 1];
  int which[V2_MAX_BODIES]; /* 1 tensors, 2 optimizer, 3 state, 5 origin, 6 data_blocks,
                             7 range_index, 0: extra section */
  uint32_t extra[V2_MAX_BODIES];
  uint64_t file_size;
  uint64_t data_len;     /* schema 3: the data section's length */
  unsigned block_shift;  /* schema 3 with a data_blocks section: log2 of its block size */
  unsigned group_shift;  /* schema 3 with a range_index section: log2 of its group size */
  uint32_t data_crc;     /* the data section's CRC-32C, summed with the blocks' (which 6) */
} v2plan;

static const char *const canonical_slots[3][2] = {{NULL, NULL}, {"momentum", NULL}, {"m", "v"}};

static const struct {
  const char *key;
  uint8_t type;
} well_known[] = {{"step", 0}, {"epoch", 0}, {"iteration", 0}, {"batch_size", 0},
                  {"learning_rate", 1}, {"best_metric", 1}, {"loss_type", 2}, {"log_dir", 2}};

static const char *v2_check(const ockpt_w_checkpoint *c) {
  uint32_t k, j, q;
  const char *why;
  if (c->num_tensors > OCKPT_CONTAINER_MAX_TENSORS) return "schema 2 holds at most 2**24 tensors";
  if ((why = check_tensor_order(c, (uint64_t)1 << 32)) != NULL) return why;
  for (k = 0; k < c->num_tensors; k++) {
    const ockpt_w_tensor *t = &c->tensors[k];
    if (t->has & ~15u) return "unknown tensor-record flag";
    if ((t->has & OCKPT_V2_HAS_MODEL_INDEX))
      for (q = 0; q < k; q++)
        if ((c->tensors[q].has & OCKPT_V2_HAS_MODEL_INDEX) && c->tensors[q].model_index == t->model_index)
          return "a model index is used twice";
    if ((t->has & OCKPT_V2_HAS_DTYPE) && dtype_size(t->dtype) < 0)
      return "a dtype is not a circle TensorType";
    if (t->has & OCKPT_V2_HAS_SHAPE) {
      if (t->rank > OCKPT_CONTAINER_MAX_RANK) return "a shape exceeds rank 8";
      if ((t->has & OCKPT_V2_HAS_DTYPE) && dtype_size(t->dtype) > 0) {
        uint64_t total = (uint64_t)dtype_size(t->dtype);
        int over = 0;
        /* the exact product: a 0 dimension makes it 0 whatever overflowed before it */
        for (q = 0; q < t->rank; q++) {
          if (t->dims[q] == 0) total = 0, over = 0;
          else if (total > UINT64_MAX / t->dims[q]) over = 1;
          else total *= t->dims[q];
        }
        if (over || total != t->buf.nbytes) return "a shape disagrees with the tensor's bytes";
      }
    }
    if (t->has & OCKPT_V2_HAS_NAME) {
      if (!text_ok(t->name, t->name_len, OCKPT_CONTAINER_MAX_NAME_LEN))
        return "a tensor name is not 1..1024 bytes of UTF-8";
      for (q = 0; q < k; q++)
        if ((c->tensors[q].has & OCKPT_V2_HAS_NAME) &&
            bytes_equal(c->tensors[q].name, c->tensors[q].name_len, t->name, t->name_len))
          return "two tensors have the same name";
    }
  }
  if (c->has_optimizer) {
    if (c->num_slots > OCKPT_CONTAINER_MAX_SLOTS) return "schema 2 holds at most 16 optimizer slots";
    if ((why = check_slot_entries(c)) != NULL) return why;
    if (c->optimizer_kind <= OCKPT_CONTAINER_OPT_ADAM) {
      const char *const *names = canonical_slots[c->optimizer_kind];
      uint32_t want = (uint32_t)(names[0] != NULL) + (uint32_t)(names[1] != NULL);
      if (c->num_slots != want) return "a known optimizer has its own slots";
      for (j = 0; j < want; j++)
        if (!is_text(c->slots[j].name, c->slots[j].name_len, names[j]))
          return "a known optimizer has its own slots, in its order";
    }
    for (j = 0; j < c->num_slots; j++) {
      if (!text_ok(c->slots[j].name, c->slots[j].name_len, OCKPT_CONTAINER_MAX_NAME_LEN))
        return "a slot name is not 1..1024 bytes of UTF-8";
      for (q = 0; q < j; q++)
        if (bytes_equal(c->slots[q].name, c->slots[q].name_len, c->slots[j].name,
                        c->slots[j].name_len))
          return "two optimizer slots have the same name";
    }
  } else if (c->num_slots != 0) {
    return "slots without an optimizer";
  }
  if (c->num_state > OCKPT_CONTAINER_MAX_STATE_ENTRIES) return "schema 2 holds at most 1024 state entries";
  for (k = 0; k < c->num_state; k++) {
    const ockpt_w_state *e = &c->state[k];
    if (!text_ok(e->key, e->key_len, OCKPT_CONTAINER_MAX_KEY_LEN))
      return "a state key is not 1..255 bytes of UTF-8";
    for (q = 0; q < k; q++)
      if (bytes_equal(c->state[q].key, c->state[q].key_len, e->key, e->key_len))
        return "two state entries have the same key";
    if (e->type > OCKPT_CONTAINER_VALUE_BYTES) return "unknown state value type";
    if (e->type >= OCKPT_CONTAINER_VALUE_STRING) {
      if (e->len > OCKPT_CONTAINER_MAX_VALUE_LEN) return "state values have at most 2**20 bytes";
      if (e->len > 0 && e->value == NULL) return "a state value has no bytes";
      if (e->type == OCKPT_CONTAINER_VALUE_STRING && !utf8_ok((const uint8_t *)e->value, e->len))
        return "a state string is not UTF-8";
    }
    for (q = 0; q < sizeof well_known / sizeof well_known[0]; q++)
      if (is_text(e->key, e->key_len, well_known[q].key) &&
          (e->type != well_known[q].type || (e->type == OCKPT_CONTAINER_VALUE_INT && e->i < 0)))
        return "a well-known state key has another type (int keys are non-negative)";
  }
  if (c->has_origin &&
      (c->origin_revision < 1 || c->origin_revision > 2 || c->origin_dialect > 2 ||
       c->origin_flags > OCKPT_CONTAINER_ORIGIN_FOOTERLESS))
    return "the origin names an unknown revision, dialect or flag";
  if (c->num_sections > 0 && c->sections == NULL) return "no section array";
  for (k = 0; k < c->num_sections; k++) {
    if (c->sections[k].kind >= OCKPT_CONTAINER_KIND_TENSORS && c->sections[k].kind <= OCKPT_CONTAINER_KIND_ORIGIN)
      return "a kept section has a kind the specification defines";
    if (k > 0 && c->sections[k].kind <= c->sections[k - 1].kind)
      return "kept sections must be in strictly ascending kind order (one of each kind)";
    if (c->sections[k].len > 0 && c->sections[k].data == NULL) return "a section has no bytes";
  }
  return NULL;
}

/* ---- schema 3 (SPEC.md 7): data order, columns, placement ------------------------------- */

/* Tensor k's place in the loaded file's data order (`data_order`), else n + k. */
static uint64_t listed_pos(const ockpt_w_checkpoint *c, uint32_t k) {
  uint32_t q;
  for (q = 0; q < c->num_data_order && c->data_order != NULL; q++)
    if (c->data_order[q] == c->tensors[k].index) return q;
  return (uint64_t)c->num_tensors + k;
}

/* Data order of the tensors: (built in memory, source offset, listed place, record), as the
 * library's v3 writer sorts them. */
static int order_less(const ockpt_w_checkpoint *c, uint32_t a, uint32_t b) {
  uint64_t oa = c->tensors[a].buf.src_offset, ob = c->tensors[b].buf.src_offset, la, lb;
  int na = oa == OCKPT_W_NEW, nb = ob == OCKPT_W_NEW;
  if (na != nb) return na < nb;
  if (!na && oa != ob) return oa < ob;
  la = listed_pos(c, a);
  lb = listed_pos(c, b);
  if (la != lb) return la < lb;
  return a < b;
}

/* The record after `prev` in data order (prev == NONE: the first); O(1) in record order, else
 * a scan of all records. */
static uint32_t next_record(const v2plan *P, uint64_t prev) {
  uint32_t k, best = 0;
  int found = 0;
  if (P->identity) return prev == NONE ? 0u : (uint32_t)prev + 1u;
  for (k = 0; k < P->n; k++)
    if ((prev == NONE || order_less(P->c, (uint32_t)prev, k)) &&
        (!found || order_less(P->c, k, best)))
      best = k, found = 1;
  return best;
}

static uint64_t v3_align(uint64_t len) {
  uint64_t a = 1;
  if (len >= 64) return 64;
  while (a < len) a <<= 1;
  return a;
}

static uint64_t round_to(uint64_t x, uint64_t a) { return (x + a - 1u) / a * a; }

/* The data section of schema 3 (7.3): the tensors in data order, then each slot's entries in
 * the same order, each at the next multiple of a(len). Writes the data when s != NULL, and the
 * range_index section's `start` values (7.5: where the walk stands, relative to the data
 * section, when each pass reaches each position G*g) when starts != NULL; returns the data
 * section's length. */
static uint64_t v3_data(const v2plan *P, sink *s, sink *starts) {
  const ockpt_w_checkpoint *c = P->c;
  uint64_t pos = 0, q, rec = NONE, group_mask = ((uint64_t)1 << P->group_shift) - 1u;
  uint32_t j;
  for (j = 0; j <= P->K; j++) {
    rec = NONE;
    for (q = 0; q < P->n; q++) {
      const ockpt_w_buffer *b;
      uint64_t at;
      rec = next_record(P, rec);
      if (starts != NULL && (q & group_mask) == 0)
        PUTA(starts, OCKPT_V3_RANGE_INDEX_SECTION_START, pos);
      b = j == 0 ? &c->tensors[rec].buf : &c->slots[j - 1].entries[rec];
      if (b->nbytes == OCKPT_W_ABSENT) continue;
      at = round_to(pos, v3_align(b->nbytes));
      if (s != NULL) {
        put_zeros(s, at - pos);
        put(s, b->data, b->nbytes);
      }
      pos = at + b->nbytes;
    }
  }
  return pos;
}

/* Schema 3's columns in file order, from ockpt_layout.h's generated descriptor (C_LEN_DATA,
 * C_INDEX, ..., C_DIMS, C_NAMES): the bit that makes each present (0: always), its element
 * size and the alignment of its start. */
#define COLUMN_ID(name, NAME, bit, size, count, sum_of, skip, align) C_##NAME,
enum { OCKPT_V3_TENSORS_HEAD_COLUMNS(COLUMN_ID) C_COLUMNS };
#undef COLUMN_ID
#define COLUMN(name, NAME, bit, size, count, sum_of, skip, align) {bit, size, align},
static const struct {
  uint32_t bit;
  unsigned size, align;
} column[C_COLUMNS] = {OCKPT_V3_TENSORS_HEAD_COLUMNS(COLUMN)};
#undef COLUMN

/* Record k's elements of column i (the default where the tensor has no value for it; `rec`
 * walks the data order for the order column). */
static void put_column(const v2plan *P, sink *s, unsigned i, uint32_t k, uint64_t *rec) {
  const ockpt_w_tensor *t = &P->c->tensors[k];
  unsigned size = column[i].size, q;
  switch (i) {
  case C_LEN_DATA: put_le(s, t->buf.nbytes, size); break;
  case C_INDEX: put_le(s, t->index, size); break;
  case C_MODEL_INDEX:
    put_le(s, (t->has & OCKPT_V2_HAS_MODEL_INDEX) ? t->model_index : OCKPT_V3_NO_MODEL_INDEX, size);
    break;
  case C_LEN_NAME: put_le(s, (t->has & OCKPT_V2_HAS_NAME) ? t->name_len : 0, size); break;
  case C_DTYPE:
    put_le(s, (uint8_t)((t->has & OCKPT_V2_HAS_DTYPE) ? t->dtype : OCKPT_V3_NO_DTYPE), size);
    break;
  case C_RANK: put_le(s, (t->has & OCKPT_V2_HAS_SHAPE) ? t->rank : OCKPT_V3_NO_SHAPE, size); break;
  case C_ORDER: put_le(s, *rec = next_record(P, *rec), size); break;
  case C_DIMS:
    if (t->has & OCKPT_V2_HAS_SHAPE)
      for (q = 0; q < t->rank; q++) put_le(s, t->dims[q], size);
    break;
  case C_NAMES:
    if (t->has & OCKPT_V2_HAS_NAME) put(s, t->name, t->name_len);
    break;
  }
}

/* The tensors section of schema 3 (7.1): the head, then each column it needs in the
 * descriptor's order, at its alignment (zero bytes before). */
static void v3_tensors(const v2plan *P, sink *s) {
  uint64_t base = s->count, rec = NONE, rel;
  uint32_t k;
  unsigned i;
  PUTF(s, TH3, num_tensors, P->n);
  PUTF(s, TH3, columns, P->columns);
  for (i = 0; i < C_COLUMNS; i++) {
    if (column[i].bit != 0 && !(P->columns & column[i].bit)) continue;
    rel = s->count - base;
    put_zeros(s, round_to(rel, column[i].align) - rel);
    for (k = 0; k < P->n; k++) put_column(P, s, i, k, &rec);
  }
}

/* The columns schema 3 needs, and whether the data order is record order. */
static void v3_plan(v2plan *P) {
  const ockpt_w_checkpoint *c = P->c;
  uint32_t k;
  P->identity = 1;
  P->columns = 0;
  for (k = 0; k < P->n; k++) {
    const ockpt_w_tensor *t = &c->tensors[k];
    if (t->index != k) P->columns |= OCKPT_V3_COL_INDEX;
    if (t->has & OCKPT_V2_HAS_MODEL_INDEX) P->columns |= OCKPT_V3_COL_MODEL_INDEX;
    if (t->has & OCKPT_V2_HAS_NAME) P->columns |= OCKPT_V3_COL_NAME;
    if (t->has & OCKPT_V2_HAS_DTYPE) P->columns |= OCKPT_V3_COL_DTYPE;
    if (t->has & OCKPT_V2_HAS_SHAPE) P->columns |= OCKPT_V3_COL_SHAPE;
    if (k > 0 && !order_less(c, k - 1, k)) P->identity = 0;
  }
  if (!P->identity) P->columns |= OCKPT_V3_COL_ORDER;
}

static void put_body(v2plan *P, unsigned b, sink *s) {
  const ockpt_w_checkpoint *c = P->c;
  uint64_t base = P->ofs[b];
  uint32_t k, j, q;
  switch (P->which[b]) {
  case 1: { /* tensors: head, records, names (SPEC.md 6.3) */
    uint64_t npos;
    if (P->v3) {
      v3_tensors(P, s);
      break;
    }
    npos = base + OCKPT_V2_TENSORS_HEAD_SIZE + (uint64_t)OCKPT_V2_TENSOR_RECORD_SIZE * P->n;
    PUTF(s, TH2, num_tensors, P->n);
    PUTF(s, TH2, reserved, 0);
    for (k = 0; k < P->n; k++) {
      const ockpt_w_tensor *t = &c->tensors[k];
      int named = (t->has & OCKPT_V2_HAS_NAME) != 0, shaped = (t->has & OCKPT_V2_HAS_SHAPE) != 0;
      PUTF(s, REC, index, t->index);
      PUTF(s, REC, model_index, (t->has & OCKPT_V2_HAS_MODEL_INDEX) ? t->model_index : 0);
      PUTF(s, REC, flags, t->has);
      PUTF(s, REC, dtype, (t->has & OCKPT_V2_HAS_DTYPE) ? (uint8_t)t->dtype : 0);
      PUTF(s, REC, rank, shaped ? t->rank : 0);
      PUTF(s, REC, len_name, named ? t->name_len : 0);
      PUTF(s, REC, ofs_name, named ? npos : 0);
      PUTF(s, REC, ofs_data, range_offset(&P->L, k));
      PUTF(s, REC, len_data, t->buf.nbytes);
      for (q = 0; q < OCKPT_CONTAINER_MAX_RANK; q++)
        PUTF(s, REC, dims[0], shaped && q < t->rank ? t->dims[q] : 0);
      if (named) npos += t->name_len;
    }
    for (k = 0; k < P->n; k++)
      if (c->tensors[k].has & OCKPT_V2_HAS_NAME) put(s, c->tensors[k].name, c->tensors[k].name_len);
    break;
  }
  case 2: { /* optimizer: head, slot descriptors, slot entries, names (SPEC.md 6.4) */
    uint64_t entry = P->v3 ? OCKPT_V3_SLOT_ENTRY_SIZE : OCKPT_V2_SLOT_ENTRY_SIZE;
    uint64_t npos = base + OCKPT_CONTAINER_OPTIMIZER_HEAD_SIZE +
                    (uint64_t)OCKPT_CONTAINER_SLOT_DESCRIPTOR_SIZE * P->K + entry * P->K * P->n;
    PUTF(s, OPT, kind, c->optimizer_kind);
    PUTF(s, OPT, num_slots, P->K);
    PUTF(s, OPT, num_tensors, P->n);
    PUTF(s, OPT, reserved, 0);
    for (j = 0; j < P->K; j++) {
      PUTF(s, DESC, ofs_name, npos);
      PUTF(s, DESC, len_name, c->slots[j].name_len);
      PUTF(s, DESC, reserved, 0);
      npos += c->slots[j].name_len;
    }
    for (j = 0; j < P->K; j++)
      for (k = 0; k < P->n; k++) {
        const ockpt_w_buffer *e = &c->slots[j].entries[k];
        if (P->v3) { /* 7.2: the size alone, NO_STATE without state */
          PUTA(s, OCKPT_V3_OPTIMIZER_SECTION_ENTRIES,
               e->nbytes == OCKPT_W_ABSENT ? OCKPT_CONTAINER_NO_STATE : e->nbytes);
        } else if (e->nbytes == OCKPT_W_ABSENT) {
          PUTF(s, SLOT, ofs_data, OCKPT_CONTAINER_NO_STATE);
          PUTF(s, SLOT, len_data, 0);
        } else {
          PUTF(s, SLOT, ofs_data, range_offset(&P->L, (uint64_t)P->n * (1u + j) + k));
          PUTF(s, SLOT, len_data, e->nbytes);
        }
      }
    for (j = 0; j < P->K; j++) put(s, c->slots[j].name, c->slots[j].name_len);
    break;
  }
  case 3: { /* state: head, entries, then each key and its value (SPEC.md 6.4) */
    uint64_t spos = base + OCKPT_CONTAINER_STATE_HEAD_SIZE + (uint64_t)OCKPT_CONTAINER_STATE_ENTRY_SIZE * c->num_state;
    PUTF(s, STH, num_entries, c->num_state);
    PUTF(s, STH, reserved, 0);
    for (k = 0; k < c->num_state; k++) {
      const ockpt_w_state *e = &c->state[k];
      uint64_t value = 0;
      PUTF(s, STE, ofs_key, spos);
      PUTF(s, STE, len_key, e->key_len);
      PUTF(s, STE, value_type, e->type);
      put_zeros(s, WIDTH(STE, reserved));
      spos += e->key_len;
      if (e->type == OCKPT_CONTAINER_VALUE_INT) {
        value = (uint64_t)e->i;
      } else if (e->type == OCKPT_CONTAINER_VALUE_FLOAT) {
        const uint8_t *fb = (const uint8_t *)&e->f; /* IEEE 754 binary64, host byte order */
        uint16_t probe = 1;
        int little = *(const uint8_t *)&probe == 1;
        for (q = 0; q < 8; q++) value |= (uint64_t)fb[little ? q : 7 - q] << (8 * q);
      } else {
        value = spos;
        spos += e->len;
      }
      PUTF(s, STE, value, value);
      PUTF(s, STE, len_value, e->type >= OCKPT_CONTAINER_VALUE_STRING ? e->len : 0);
    }
    for (k = 0; k < c->num_state; k++) {
      put(s, c->state[k].key, c->state[k].key_len);
      if (c->state[k].type >= OCKPT_CONTAINER_VALUE_STRING) put(s, c->state[k].value, c->state[k].len);
    }
    break;
  }
  case 6: { /* data_blocks (SPEC.md 7.4): each block's CRC-32C from a read of the data */
    sink crcs;
    PUTF(s, DBH, block_shift, P->block_shift);
    PUTF(s, DBH, reserved, 0);
    PUTF(s, DBH, num_blocks, (P->data_len + ((uint64_t)1 << P->block_shift) - 1u) >> P->block_shift);
    sink_init(&crcs, 1, NULL, NULL);
    crcs.blocks = s;
    crcs.block_shift = P->block_shift;
    v3_data(P, &crcs, NULL);
    flush(&crcs);
    if (crcs.block_fill > 0) /* the last, shorter block */
      PUTA(s, OCKPT_V3_DATA_BLOCKS_SECTION_CRC, crcs.block_crc);
    P->data_crc = crcs.crc;
    break;
  }
  case 7: /* range_index (SPEC.md 7.5): the walk's starts, then the inverse of `order` */
    PUTF(s, RIH, group_shift, P->group_shift);
    PUTF(s, RIH, reserved, 0);
    PUTF(s, RIH, num_groups,
         ((uint64_t)P->n + ((uint64_t)1 << P->group_shift) - 1u) >> P->group_shift);
    v3_data(P, NULL, s);
    if (!P->identity)
      for (k = 0; k < P->n; k++) { /* position[k]: the records before k in data order */
        uint32_t before = 0;
        for (q = 0; q < P->n; q++)
          if (q != k && order_less(c, q, k)) before++;
        PUTA(s, OCKPT_V3_RANGE_INDEX_SECTION_POSITION, before);
      }
    break;
  case 5: /* origin (SPEC.md 6.4) */
    PUTF(s, ORG, revision, c->origin_revision);
    PUTF(s, ORG, dialect, c->origin_dialect);
    PUTF(s, ORG, flags, c->origin_flags);
    PUTF(s, ORG, reserved, 0);
    PUTF(s, ORG, num_entries, c->origin_num_entries);
    break;
  default:
    put(s, c->sections[P->extra[b]].data, c->sections[P->extra[b]].len);
  }
}

static void put_table(const v2plan *P, sink *s) {
  unsigned b;
  for (b = 0; b < P->nbodies + (unsigned)P->has_data; b++) {
    PUTF(s, SEC, kind, P->kind[b]);
    PUTF(s, SEC, flags, P->flags[b]);
    PUTF(s, SEC, ofs_body, P->ofs[b]);
    PUTF(s, SEC, len_body, P->len[b]);
    PUTF(s, SEC, crc, P->crc[b]);
    PUTF(s, SEC, reserved, 0);
  }
}

static void add_body(v2plan *P, int which, uint32_t kind, uint32_t flags, uint64_t len,
                     uint32_t extra) {
  P->which[P->nbodies] = which;
  P->kind[P->nbodies] = kind;
  P->flags[P->nbodies] = flags;
  P->len[P->nbodies] = len;
  P->extra[P->nbodies] = extra;
  P->nbodies++;
}

static ockpt_w_result write_v2(const ockpt_w_checkpoint *c, int v3, ockpt_write_fn write,
                               void *ctx) {
  static const v2plan zero_plan;
  v2plan P = zero_plan;
  uint64_t pos, sum;
  unsigned b, nsec;
  uint32_t k;
  int blocks = 0, blocks_added = 0, index = 0;
  uint8_t header[OCKPT_CONTAINER_HEADER_SIZE];
  const char *why;
  sink s;
  ockpt_w_result res;

  if ((why = v2_check(c)) != NULL) return fail(why);
  if (v3)
    for (k = 0; k < c->num_tensors; k++)
      if ((c->tensors[k].has & OCKPT_V2_HAS_MODEL_INDEX) &&
          c->tensors[k].model_index == OCKPT_V3_NO_MODEL_INDEX)
        return fail("schema 3 model indices are 0..2**32-2 (2**32-1 means none)");
  P.c = c;
  P.v3 = v3;
  P.n = c->num_tensors;
  P.K = c->has_optimizer ? c->num_slots : 0;
  P.has_data = P.n > 0; /* every tensor is a data range */
  if (v3) {
    /* the data_blocks section (SPEC.md 7.4), as the library decides it (v3_write.py) */
    uint32_t size = c->data_block_size == 0 ? OCKPT_W_DEFAULT_BLOCK_SIZE : c->data_block_size;
    for (k = 0; k < c->num_sections; k++) {
      if (c->sections[k].kind == OCKPT_V3_DATA_BLOCKS_KIND)
        return fail("a kept section of kind 0x100008 would collide with schema 3's data_blocks "
                    "section");
      if (c->sections[k].kind == OCKPT_V3_RANGE_INDEX_KIND)
        return fail("a kept section of kind 0x100009 would collide with schema 3's range_index "
                    "section");
    }
    /* the range_index section (SPEC.md 7.5), as the library decides it: the default group
     * when there are more tensors than it holds, a group the caller names whatever n, none
     * without tensors */
    if (c->range_index_group == 0) {
      P.group_shift = OCKPT_V3_DEFAULT_GROUP_SHIFT;
      index = P.n > ((uint32_t)1 << P.group_shift);
    } else if (c->range_index_group != OCKPT_W_NO_INDEX) {
      for (P.group_shift = OCKPT_V3_MIN_GROUP_SHIFT;
           P.group_shift <= OCKPT_V3_MAX_GROUP_SHIFT &&
           ((uint32_t)1 << P.group_shift) != c->range_index_group;
           P.group_shift++) {
      }
      if (P.group_shift > OCKPT_V3_MAX_GROUP_SHIFT)
        return fail("range_index_group is not a power of two from 16 to 65536");
      index = P.n > 0;
    }
    v3_plan(&P);
    P.data_len = v3_data(&P, NULL, NULL);
    if (c->data_block_size != OCKPT_W_NO_BLOCKS) {
      for (P.block_shift = OCKPT_V3_MIN_BLOCK_SHIFT;
           P.block_shift <= OCKPT_V3_MAX_BLOCK_SHIFT && ((uint32_t)1 << P.block_shift) != size;
           P.block_shift++) {
      }
      if (P.block_shift > OCKPT_V3_MAX_BLOCK_SHIFT)
        return fail("data_block_size is not a power of two from 64 to 2**24 bytes");
      blocks = P.data_len > 0; /* no section without data bytes */
    }
  }
  /* Sections in the canonical order (SPEC.md 6.10): tensors, optimizer, state, origin, kept
   * sections by kind, data. */
  if (P.n > 0) {
    for (sum = 0, k = 0; k < P.n; k++)
      if (c->tensors[k].has & OCKPT_V2_HAS_NAME) sum += c->tensors[k].name_len;
    if (v3) { /* its size: the body generated once into a counting sink */
      sink_init(&s, 1, write, ctx);
      v3_tensors(&P, &s);
      sum = s.count;
    } else {
      sum += OCKPT_V2_TENSORS_HEAD_SIZE + (uint64_t)OCKPT_V2_TENSOR_RECORD_SIZE * P.n;
    }
    add_body(&P, 1, OCKPT_CONTAINER_KIND_TENSORS, OCKPT_CONTAINER_FLAG_REQUIRED, sum, 0);
  }
  if (c->has_optimizer) {
    for (sum = 0, k = 0; k < P.K; k++) sum += c->slots[k].name_len;
    add_body(&P, 2, OCKPT_CONTAINER_KIND_OPTIMIZER, OCKPT_CONTAINER_FLAG_REQUIRED,
             OCKPT_CONTAINER_OPTIMIZER_HEAD_SIZE + OCKPT_CONTAINER_SLOT_DESCRIPTOR_SIZE * (uint64_t)P.K +
                 (v3 ? OCKPT_V3_SLOT_ENTRY_SIZE : OCKPT_V2_SLOT_ENTRY_SIZE) * (uint64_t)P.K * P.n +
                 sum,
             0);
  }
  if (c->num_state > 0) {
    for (sum = 0, k = 0; k < c->num_state; k++)
      sum += c->state[k].key_len + (c->state[k].type >= OCKPT_CONTAINER_VALUE_STRING ? c->state[k].len : 0);
    add_body(&P, 3, OCKPT_CONTAINER_KIND_STATE, OCKPT_CONTAINER_FLAG_REQUIRED,
             OCKPT_CONTAINER_STATE_HEAD_SIZE + (uint64_t)OCKPT_CONTAINER_STATE_ENTRY_SIZE * c->num_state + sum,
             0);
  }
  if (c->has_origin) add_body(&P, 5, OCKPT_CONTAINER_KIND_ORIGIN, 0, OCKPT_CONTAINER_ORIGIN_SIZE, 0);
  if (c->num_sections > OCKPT_CONTAINER_MAX_SECTIONS) return fail("schema 2 holds at most 64 sections");
  /* kept sections, the data_blocks and range_index sections in ascending kind order (6.4) */
  for (k = 0; k <= c->num_sections; k++) {
    if (blocks && !blocks_added &&
        (k == c->num_sections || c->sections[k].kind > OCKPT_V3_DATA_BLOCKS_KIND)) {
      add_body(&P, 6, OCKPT_V3_DATA_BLOCKS_KIND, 0,
               OCKPT_V3_DATA_BLOCKS_HEAD_SIZE +
                   OCKPT_V3_DATA_BLOCKS_SECTION_CRC_ELEM_SIZE *
                       ((P.data_len + ((uint64_t)1 << P.block_shift) - 1u) >> P.block_shift),
               0);
      blocks_added = 1;
    }
    if (index && (k == c->num_sections || c->sections[k].kind > OCKPT_V3_RANGE_INDEX_KIND)) {
      add_body(&P, 7, OCKPT_V3_RANGE_INDEX_KIND, 0,
               OCKPT_V3_RANGE_INDEX_HEAD_SIZE +
                   OCKPT_V3_RANGE_INDEX_SECTION_START_ELEM_SIZE * (1u + (uint64_t)P.K) *
                       (((uint64_t)P.n + ((uint64_t)1 << P.group_shift) - 1u) >> P.group_shift) +
                   (P.identity ? 0u
                               : OCKPT_V3_RANGE_INDEX_SECTION_POSITION_ELEM_SIZE * (uint64_t)P.n),
               0);
      index = 0;
    }
    if (k < c->num_sections)
      add_body(&P, 0, c->sections[k].kind,
               c->sections[k].required ? OCKPT_CONTAINER_FLAG_REQUIRED : 0, c->sections[k].len, k);
  }
  nsec = P.nbodies + (unsigned)P.has_data;
  if (nsec > OCKPT_CONTAINER_MAX_SECTIONS) return fail("schema 2 holds at most 64 sections");
  pos = OCKPT_CONTAINER_HEADER_SIZE + (uint64_t)OCKPT_CONTAINER_SECTION_ENTRY_SIZE * nsec;
  for (b = 0; b < P.nbodies; b++) {
    pos = (pos + OCKPT_CONTAINER_ALIGNMENT - 1u) / OCKPT_CONTAINER_ALIGNMENT * OCKPT_CONTAINER_ALIGNMENT;
    P.ofs[b] = pos;
    pos += P.len[b];
  }
  layout_init(&P.L, c, 1, -1, 0, 1,
              P.has_data ? (pos + OCKPT_CONTAINER_ALIGNMENT - 1u) / OCKPT_CONTAINER_ALIGNMENT * OCKPT_CONTAINER_ALIGNMENT
                         : pos);
  P.file_size = pos;
  if (P.has_data) {
    P.kind[P.nbodies] = OCKPT_CONTAINER_KIND_DATA;
    P.flags[P.nbodies] = OCKPT_CONTAINER_FLAG_REQUIRED;
    P.ofs[P.nbodies] = P.L.data_start;
    P.len[P.nbodies] = v3 ? P.data_len : data_length(&P.L);
    P.file_size = P.L.data_start + P.len[P.nbodies];
  }

  /* Pass 1: every checksum (each body generated once into CRC-32C; the data_blocks body reads
   * the data once for its blocks' CRCs and the data section's). */
  for (b = 0; b < P.nbodies; b++) {
    sink_init(&s, 1, write, ctx);
    put_body(&P, b, &s);
    flush(&s);
    if (s.count != P.len[b]) return fail("internal: a section body's size");
    P.crc[b] = s.crc;
  }
  if (blocks_added) {
    P.crc[P.nbodies] = P.data_crc;
  } else if (P.has_data) {
    sink_init(&s, 1, write, ctx);
    if (v3)
      v3_data(&P, &s, NULL);
    else
      put_data(&P.L, &s);
    flush(&s);
    if (s.count != P.len[P.nbodies]) return fail("internal: the data section's size");
    P.crc[P.nbodies] = s.crc;
  }
  sink_init(&s, 1, write, ctx);
  put_table(&P, &s);
  flush(&s);

  /* The header (SPEC.md 6.2): header_crc is the CRC-32C of the 64 bytes with it zero. */
  for (k = 0; k < OCKPT_CONTAINER_HEADER_SIZE; k++) header[k] = 0;
  SETF(header, V2H, magic, OCKPT_MAGIC);
  SETF(header, V2H, version, v3 ? OCKPT_REV_V3 : OCKPT_REV_V2);
  SETF(header, V2H, len_file, P.file_size);
  SETF(header, V2H, ofs_section_table, OCKPT_CONTAINER_HEADER_SIZE);
  SETF(header, V2H, num_sections, nsec);
  SETF(header, V2H, section_table_crc, s.crc);
  sum = ockpt_crc32c(0, header, sizeof header);
  SETF(header, V2H, header_crc, sum);

  /* Pass 2: the file, in order. */
  sink_init(&s, 0, write, ctx);
  put(&s, header, sizeof header);
  put_table(&P, &s);
  for (b = 0; b < P.nbodies; b++) {
    put_zeros(&s, P.ofs[b] - s.count);
    put_body(&P, b, &s);
  }
  if (P.has_data) {
    put_zeros(&s, P.L.data_start - s.count);
    if (v3)
      v3_data(&P, &s, NULL);
    else
      put_data(&P.L, &s);
  }
  flush(&s);
  res.status = s.failed ? OCKPT_W_IO : OCKPT_W_OK;
  res.message = s.failed ? "the write callback failed" : "ok";
  res.file_size = s.count;
  if (!s.failed && s.count != P.file_size) res.status = OCKPT_W_IO, res.message = "internal: size";
  return res;
}

ockpt_w_result ockpt_write(const ockpt_w_checkpoint *c, ockpt_w_target target,
                           ockpt_w_dialect dialect, ockpt_write_fn write, void *ctx) {
  if (c == NULL || write == NULL) return fail("no checkpoint or no write callback");
  if (c->num_state > 0 && c->state == NULL) return fail("no state array");
  switch (target) {
  case OCKPT_W_V1:
    if (dialect != OCKPT_W_AUTO && dialect != OCKPT_W_ONERT && dialect != OCKPT_W_ONERT_MICRO)
      return fail("unknown dialect");
    return write_v1(c, dialect, write, ctx);
  case OCKPT_W_WOF:
    return write_wof(c, write, ctx);
  case OCKPT_W_V2:
    return write_v2(c, 0, write, ctx);
  case OCKPT_W_V3:
    return write_v2(c, 1, write, ctx);
  }
  return fail("unknown target");
}
