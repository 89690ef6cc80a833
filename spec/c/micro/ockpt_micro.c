/*
 * ockpt_micro.c - the micro profile's schema-3 reader (ockpt_micro.h; SPEC.md section 11).
 * Offsets and constants come from the generated ../ockpt_layout.h, error numbers
 * from ../ockpt_errors.h. Every read goes through rd(), which never asks the callback for a
 * byte outside [0, size). The file is below 2^31 bytes (checked first), so every offset and
 * every sum of two checked offsets fits a uint32_t; an 8-byte field is read saturated (big()).
 */
#include "ockpt_micro.h"

#include "../ockpt_errors.h"
#include "../ockpt_layout.h"

#define E(x) (-OCKPT_E_##x) /* the code's number (OCKPT_E_* are negative) */
#define SEC(x) OCKPT_CONTAINER_SECTION_ENTRY_AT_##x
#define HDR(x) OCKPT_CONTAINER_HEADER_AT_##x
#define CHUNK 32u
#define HUGE 0x80000000u /* an 8-byte value of 2^31 or more: past any bound of the file */
#define NONE 0xffffffffu /* NO_STATE */

/* The fields a refusal names, record numbers left out; fail() takes code | field << 8. */
enum {
  F_FILE = 1, F_STREAM, F_HEADER, F_MAGIC, F_VERSION, F_HEADER_CRC, F_LEN_FILE, F_OFS_TABLE,
  F_NUM_SECTIONS, F_TABLE_CRC, F_S_FLAGS, F_S_OFS, F_S_LEN, F_S_KIND, F_S_CRC, F_SECTION,
  F_BUFFER, F_DB, F_DB_SHIFT, F_DB_NUM, F_DB_CRC, F_DB_CRC_I, F_DATA, F_T_NUM, F_T_COLUMNS,
  F_T_INDEX, F_T_ORDER, F_T_DIMS, F_T_NAMES, F_T, F_T_LEN_DATA, F_O_NUM, F_O_TENSORS,
  F_O_LEN_NAME, F_O_OFS_NAME, F_O_SLOTS, F_O_NAMES, F_O_LEN_DATA, F_V_NUM, F_V_LEN_KEY,
  F_V_OFS_KEY, F_V_VALUE, F_V_POOL
};
static const char *const field_name[] = {
    "", "file", "stream", "header", "magic", "version", "header_crc", "len_file",
    "ofs_section_table", "num_sections", "section_table_crc", "sections[].flags",
    "sections[].ofs_body", "sections[].len_body", "sections[].kind", "sections[].crc",
    "section", "block_buffer", "data_blocks", "data_blocks.block_shift",
    "data_blocks.num_blocks", "data_blocks.crc", "data_blocks.crc[]", "data",
    "tensors.num_tensors", "tensors.columns", "tensors[].index", "tensors[].order",
    "tensors.dims", "tensors.names", "tensors", "tensors[].len_data", "optimizer.num_slots",
    "optimizer.num_tensors", "optimizer.slots[].len_name", "optimizer.slots[].ofs_name",
    "optimizer.slots", "optimizer.names", "optimizer.slots[][].len_data", "state.num_entries",
    "state[].len_key", "state[].ofs_key", "state[].value", "state.pool"
};
#define R(code, f) (E(code) | (f) << 8)

/* CRC-32C (SPEC.md 6.3), a nibble at a time: 64 bytes of table. */
static const uint32_t crc_nib[16] = {
    0x00000000u, 0x105ec76fu, 0x20bd8edeu, 0x30e349b1u, 0x417b1dbcu, 0x5125dad3u,
    0x61c69362u, 0x7198540du, 0x82f63b78u, 0x92a8fc17u, 0xa24bb5a6u, 0xb21572c9u,
    0xc38d26c4u, 0xd3d3e1abu, 0xe330a81au, 0xf36e6f75u};

static uint32_t crc32c(uint32_t c, const uint8_t *p, uint32_t n) {
  c = ~c;
  while (n--) {
    c ^= *p++;
    c = (c >> 4) ^ crc_nib[c & 15u];
    c = (c >> 4) ^ crc_nib[c & 15u];
  }
  return ~c;
}

static uint32_t le(const uint8_t *p, unsigned w) {
  uint32_t v = 0;
  while (w--) v = v << 8 | p[w];
  return v;
}

/* An 8-byte field: its value below 2^31, NONE for 2^64 - 1, else HUGE. */
static uint32_t big(const uint8_t *p) {
  uint32_t lo = le(p, 4), hi = le(p + 4, 4);
  if (!hi && lo < HUGE) return lo;
  return hi == NONE && lo == NONE ? NONE : HUGE;
}

/* The first refusal is kept. Returns -1. */
static int fail(ockpt_micro *m, unsigned what, uint32_t at) {
  if (!m->code) {
    m->code = -(int)(what & 255u);
    m->field = field_name[what >> 8];
    m->offset = at;
  }
  return -1;
}

/* Read [at, at+len) of the file; a failed read replaces any earlier refusal. */
static int rd(ockpt_micro *m, uint32_t at, void *dst, uint32_t len) {
  if (at > m->size || len > m->size - at || m->read(m->ctx, at, dst, len)) {
    m->code = 0;
    return fail(m, R(TRUNCATED_FILE, F_STREAM), at);
  }
  return 0;
}

static uint32_t get(ockpt_micro *m, uint32_t at, unsigned w) {
  uint8_t b[8];
  if (rd(m, at, b, w)) return 0;
  return w == 8 ? big(b) : le(b, w);
}

/* A section read once, front to back, through a small chunk, its CRC-32C summed on the way. */
typedef struct seq {
  ockpt_micro *m;
  uint32_t at, end, crc, have, used;
  uint8_t b[CHUNK];
} seq;

static void seq_init(seq *q, ockpt_micro *m, uint32_t s, uint32_t len) {
  q->m = m;
  q->at = s;
  q->end = s + len;
  q->crc = q->have = q->used = 0;
}

static uint32_t here(const seq *q) { return q->at - q->have + q->used; }

static void refill(seq *q) {
  uint32_t n = q->end - q->at;
  if (n > CHUNK) n = CHUNK;
  q->have = q->used = 0;
  if (!n) {
    fail(q->m, R(COUNT_EXCEEDS_FILE, F_SECTION), q->at);
  } else if (!rd(q->m, q->at, q->b, n)) {
    q->crc = crc32c(q->crc, q->b, n);
    q->at += n;
    q->have = n;
  }
}

/* The next w bytes (1..8) as a little-endian value (8: as big() reads it). */
static uint32_t val(seq *q, unsigned w) {
  uint8_t b[8];
  unsigned i;
  for (i = 0; i < w; i++) {
    if (q->used == q->have) refill(q);
    if (q->m->code) return 0;
    b[i] = q->b[q->used++];
  }
  return w == 8 ? big(b) : le(b, w);
}

static void skip(seq *q, uint32_t n) {
  while (n && !q->m->code) {
    uint32_t k;
    if (q->used == q->have) refill(q);
    k = q->have - q->used;
    if (k > n) k = n;
    q->used += k;
    n -= k;
  }
}

/* The 0..7 bytes before a column (C11, their being zero, is left to a full reader). */
static void pad8(seq *q) { skip(q, (8u - (here(q) & 7u)) & 7u); }

/* Drain the rest of the section; its CRC must be the table's (T4 f). */
static void seq_end(seq *q, uint32_t crc, uint32_t e) {
  skip(q, q->end - here(q));
  if (q->crc != crc) fail(q->m, R(SECTION_CHECKSUM, F_S_CRC), e);
}

/* R8-style pool rule: the next name, key or value starts exactly at *p and fits. */
static void pool(ockpt_micro *m, uint32_t *p, uint32_t ofs, uint32_t len, uint32_t end,
                 unsigned f, uint32_t at) {
  if (ofs != *p) fail(m, (ofs < *p ? E(OVERLAP) : E(GAP)) | f << 8, at);
  else if (len > end - ofs) fail(m, E(OFFSET_OUT_OF_BOUNDS) | f << 8, at);
  *p = ofs + len;
}

static uint32_t align8(uint32_t x) { return (x + 7u) & ~7u; }

/* Widths of the fixed columns, in the order of their bits (SPEC.md 7.1). */
static const uint8_t col_width[6] = {
    OCKPT_V3_TENSORS_SECTION_INDEX_ELEM_SIZE, OCKPT_V3_TENSORS_SECTION_MODEL_INDEX_ELEM_SIZE,
    OCKPT_V3_TENSORS_SECTION_LEN_NAME_ELEM_SIZE, OCKPT_V3_TENSORS_SECTION_DTYPE_ELEM_SIZE,
    OCKPT_V3_TENSORS_SECTION_RANK_ELEM_SIZE, OCKPT_V3_TENSORS_SECTION_ORDER_ELEM_SIZE};

/* C0-C11 but C5's uniqueness (C5's, C12 and C13 are left to a full reader), in one pass. */
static void tensors(ockpt_micro *m, uint32_t s, uint32_t len, uint32_t crc, uint32_t e) {
  seq q;
  uint32_t n, cols, end = OCKPT_V3_TENSORS_HEAD_SIZE, dims = 0, names = 0, k, v, prev = 0;
  unsigned c;
  seq_init(&q, m, s, len);
  m->t_ofs = s;
  if (len < OCKPT_V3_TENSORS_HEAD_SIZE) {
    fail(m, R(COUNT_EXCEEDS_FILE, F_T_NUM), s);
    return;
  }
  n = val(&q, 4);
  cols = val(&q, 4);
  if (n > OCKPT_CONTAINER_MAX_TENSORS) fail(m, R(LIMIT_EXCEEDED, F_T_NUM), s);
  if (cols >> 6) fail(m, R(RESERVED_NONZERO, F_T_COLUMNS), s + 4);
  if (m->code) return;
  end += OCKPT_V3_TENSORS_SECTION_LEN_DATA_ELEM_SIZE * n;
  for (c = 0; c < 6; c++)
    if (cols >> c & 1u) end = align8(end) + col_width[c] * n;
  if (end > len) fail(m, R(COUNT_EXCEEDS_FILE, F_T_NUM), s);
  m->num_tensors = n;
  skip(&q, OCKPT_V3_TENSORS_SECTION_LEN_DATA_ELEM_SIZE * n);
  for (c = 0; c < 6; c++) {
    uint32_t at;
    if (!(cols >> c & 1u)) continue;
    pad8(&q);
    at = here(&q);
    if (c == 0) m->col_index = at;
    if (c == 1) m->col_model = at;
    if (c == 5) {
      m->col_order = at;
      /* C9 without scratch: a bitmap of the records seen, in the caller's block buffer */
      if (n > 8u * m->buf_len) fail(m, R(LIMIT_EXCEEDED, F_T_ORDER), at);
      for (k = 0; k < n && !m->code; k += 8) m->buf[k >> 3] = 0;
    }
    for (k = 0; k < n && !m->code; k++, at += col_width[c]) {
      v = val(&q, col_width[c]);
      if (c == 0) {
        if (k && v <= prev)
          fail(m, (v == prev ? E(DUPLICATE_TENSOR_INDEX) : E(TENSOR_ORDER)) | F_T_INDEX << 8, at);
        prev = v;
      } else if (c == 2) {
        names += v > len ? HUGE : v; /* at most len, or HUGE */
        if (names > len) names = HUGE;
      } else if (c == 4) {
        if (v != OCKPT_V3_NO_SHAPE) dims += v;
      } else if (c == 5) {
        if (v >= n || m->buf[v >> 3] >> (v & 7u) & 1u)
          fail(m, R(BAD_DATA_ORDER, F_T_ORDER), at);
        else
          m->buf[v >> 3] |= (uint8_t)(1u << (v & 7u));
      }
    }
  }
  /* C10: dims (at most 255 * 2^24 of them), then names, then nothing */
  if (m->code) return;
  if (cols & OCKPT_V3_COL_SHAPE) {
    end = align8(end);
    if (end > len || dims > (len - end) >> 2) fail(m, R(COUNT_EXCEEDS_FILE, F_T_DIMS), s + end);
    end += 4 * dims;
  }
  if (cols & OCKPT_V3_COL_NAME && !m->code) {
    end = align8(end);
    if (end > len || names > len - end) fail(m, R(COUNT_EXCEEDS_FILE, F_T_NAMES), s + end);
    end += names;
  }
  if (!m->code && end < len) fail(m, R(GAP, F_T), s + end);
  if (cols & OCKPT_V3_COL_SHAPE) {
    pad8(&q);
    skip(&q, 4 * dims);
  }
  if (cols & OCKPT_V3_COL_NAME) pad8(&q);
  seq_end(&q, crc, e);
}

/* O1-O7 and O9 (O8 left to a full reader), 8-byte slot entries (SPEC.md 7.2). */
static void optimizer(ockpt_micro *m, uint32_t s, uint32_t len, uint32_t crc, uint32_t e) {
  seq q;
  uint32_t kind, k, t, j, p, ofs, n, d, known;
  static const char expect[] = "mvmomentum";
  seq_init(&q, m, s, len);
  if (len < OCKPT_CONTAINER_OPTIMIZER_HEAD_SIZE) {
    fail(m, R(COUNT_EXCEEDS_FILE, F_O_NUM), s + 4);
    return;
  }
  kind = val(&q, 4);
  k = val(&q, 4);
  t = val(&q, 4);
  skip(&q, 4);
  if (k > OCKPT_CONTAINER_MAX_SLOTS) fail(m, R(LIMIT_EXCEEDED, F_O_NUM), s + 4);
  if (t != m->num_tensors) fail(m, R(BAD_OPTIMIZER, F_O_TENSORS), s + 8);
  if (m->code) return;
  p = s + OCKPT_CONTAINER_OPTIMIZER_HEAD_SIZE + OCKPT_CONTAINER_SLOT_DESCRIPTOR_SIZE * k;
  m->o_ent = p;
  p += OCKPT_V3_OPTIMIZER_SECTION_ENTRIES_ELEM_SIZE * k * t;
  if (p - s > len) fail(m, R(COUNT_EXCEEDS_FILE, F_O_NUM), s + 4);
  if (kind <= OCKPT_CONTAINER_OPT_ADAM && k != kind) fail(m, R(BAD_OPTIMIZER, F_O_NUM), s + 4);
  known = kind && kind <= OCKPT_CONTAINER_OPT_ADAM;
  m->opt_kind = kind;
  m->num_slots = k;
  for (j = 0, d = s + OCKPT_CONTAINER_OPTIMIZER_HEAD_SIZE; j < k && !m->code; j++, d += 16) {
    ofs = val(&q, 8);
    n = val(&q, 4);
    skip(&q, 4);
    if (!n || n > OCKPT_CONTAINER_MAX_NAME_LEN) fail(m, R(LIMIT_EXCEEDED, F_O_LEN_NAME), d + 8);
    pool(m, &p, ofs, n, s + len, F_O_OFS_NAME, d);
    if (known && n != (kind == OCKPT_CONTAINER_OPT_ADAM ? 1u : 8u))
      fail(m, R(BAD_OPTIMIZER, F_O_SLOTS), s + 16);
  }
  if (!m->code && p != s + len) fail(m, R(GAP, F_O_NAMES), p);
  skip(&q, OCKPT_V3_OPTIMIZER_SECTION_ENTRIES_ELEM_SIZE * k * t);
  /* O9: the names of a known kind ("m", "v" for Adam; "momentum") */
  if (known)
    for (j = kind == OCKPT_CONTAINER_OPT_ADAM ? 0 : 2; j < (kind == OCKPT_CONTAINER_OPT_ADAM ? 2u : 10u); j++)
      if (val(&q, 1) != (uint8_t)expect[j]) fail(m, R(BAD_OPTIMIZER, F_O_SLOTS), s + 16);
  seq_end(&q, crc, e);
}

/* V1-V8 (V9, the keys' and strings' UTF-8, uniqueness and well-known types, left). */
static void state(ockpt_micro *m, uint32_t s, uint32_t len, uint32_t crc, uint32_t e) {
  seq q;
  uint32_t n, r, p, key, klen, type, value, vlen;
  seq_init(&q, m, s, len);
  m->s_ofs = s;
  if (len < OCKPT_CONTAINER_STATE_HEAD_SIZE) {
    fail(m, R(COUNT_EXCEEDS_FILE, F_V_NUM), s);
    return;
  }
  n = val(&q, 4);
  skip(&q, 4);
  if (n > OCKPT_CONTAINER_MAX_STATE_ENTRIES) fail(m, R(LIMIT_EXCEEDED, F_V_NUM), s);
  if (m->code) return;
  p = s + OCKPT_CONTAINER_STATE_HEAD_SIZE + OCKPT_CONTAINER_STATE_ENTRY_SIZE * n;
  if (p - s > len) fail(m, R(COUNT_EXCEEDS_FILE, F_V_NUM), s);
  m->num_state = n;
  for (r = s + OCKPT_CONTAINER_STATE_HEAD_SIZE; n-- && !m->code; r += OCKPT_CONTAINER_STATE_ENTRY_SIZE) {
    key = val(&q, 8);
    klen = val(&q, 4);
    type = val(&q, 1);
    skip(&q, 3);
    value = val(&q, 8);
    vlen = val(&q, 8);
    if (!klen || klen > OCKPT_CONTAINER_MAX_KEY_LEN) fail(m, R(LIMIT_EXCEEDED, F_V_LEN_KEY), r + 8);
    pool(m, &p, key, klen, s + len, F_V_OFS_KEY, r);
    if (type >= OCKPT_CONTAINER_VALUE_STRING) pool(m, &p, value, vlen, s + len, F_V_VALUE, r + 16);
  }
  if (!m->code && p != s + len) fail(m, R(GAP, F_V_POOL), p);
  seq_end(&q, crc, e);
}


int ockpt_micro_open(ockpt_micro *m, ockpt_micro_read_fn read, void *ctx, uint64_t size,
                     void *block_buf, uint32_t block_len) {
  /* per kept section (tensors, optimizer, state, data, data_blocks): body, length, CRC and
   * where its table entry's CRC is */
  uint32_t ofs[5], len[5], ent[5], crc[5], c = 0, i, ns, pos, kind, flags, o, l, b, x;
  uint32_t seen = 0;
  uint8_t *h = block_buf;
  m->code = 0;
  m->read = read;
  m->ctx = ctx;
  m->size = size < HUGE ? (uint32_t)size : 0;
  m->buf = h;
  m->buf_len = block_len;
  m->num_tensors = m->num_slots = m->num_state = 0;
  m->opt_kind = NONE;
  m->col_index = m->col_model = m->col_order = m->b_ofs = m->d_ofs = m->d_len = 0;
  m->at = m->left = m->blk_start = m->blk_len = m->pass = m->pos = 0;
  if (size >= HUGE) return fail(m, R(LIMIT_EXCEEDED, F_FILE), 0), m->code;
  if (block_len < OCKPT_CONTAINER_HEADER_SIZE) return fail(m, R(LIMIT_EXCEEDED, F_BUFFER), 0), m->code;
  /* section 3 and H1-H5 */
  if (rd(m, 0, h, m->size < OCKPT_CONTAINER_HEADER_SIZE ? m->size : OCKPT_CONTAINER_HEADER_SIZE))
    return m->code;
  if (m->size < 3) return fail(m, R(TRUNCATED_HEADER, F_HEADER), 0), m->code;
  if (le(h, 2) != OCKPT_CONTAINER_MAGIC) return fail(m, R(BAD_MAGIC, F_MAGIC), 0), m->code;
  if (h[HDR(VERSION)] != 3) return fail(m, R(UNSUPPORTED_VERSION, F_VERSION), 2), m->code;
  if (m->size < OCKPT_CONTAINER_HEADER_SIZE) return fail(m, R(TRUNCATED_HEADER, F_HEADER), 0), m->code;
  o = le(h + HDR(HEADER_CRC), 4);
  for (i = 0; i < 4; i++) h[HDR(HEADER_CRC) + i] = 0;
  if (crc32c(0, h, OCKPT_CONTAINER_HEADER_SIZE) != o)
    return fail(m, R(HEADER_CHECKSUM, F_HEADER_CRC), HDR(HEADER_CRC)), m->code;
  l = big(h + HDR(LEN_FILE));
  if (m->size < l) fail(m, R(TRUNCATED_FILE, F_LEN_FILE), HDR(LEN_FILE));
  if (m->size > l) fail(m, R(TRAILING_BYTES, F_FILE), l);
  o = big(h + HDR(OFS_SECTION_TABLE));
  if (o != OCKPT_CONTAINER_HEADER_SIZE)
    fail(m, (o < OCKPT_CONTAINER_HEADER_SIZE ? E(OVERLAP) : E(GAP)) | F_OFS_TABLE << 8,
         HDR(OFS_SECTION_TABLE));
  ns = le(h + HDR(NUM_SECTIONS), 4);
  b = le(h + HDR(SECTION_TABLE_CRC), 4);
  if (ns > OCKPT_CONTAINER_MAX_SECTIONS) return fail(m, R(LIMIT_EXCEEDED, F_NUM_SECTIONS), 24), m->code;
  pos = OCKPT_CONTAINER_HEADER_SIZE + OCKPT_CONTAINER_SECTION_ENTRY_SIZE * ns;
  if (pos > m->size) fail(m, R(COUNT_EXCEEDS_FILE, F_NUM_SECTIONS), HDR(NUM_SECTIONS));
  if (m->code) return m->code;
  /* T3 and T4 a-d, g-i in one pass over the table (T4 e, the padding between sections, and
   * T4 f of the sections it does not use are left to a full reader); the entries' results
   * count only once the table's CRC has matched */
  for (i = 0; i < ns; i++) {
    uint32_t e = OCKPT_CONTAINER_HEADER_SIZE + OCKPT_CONTAINER_SECTION_ENTRY_SIZE * i;
    if (rd(m, e, h, OCKPT_CONTAINER_SECTION_ENTRY_SIZE)) return m->code;
    c = crc32c(c, h, OCKPT_CONTAINER_SECTION_ENTRY_SIZE);
    kind = le(h + SEC(KIND), 4);
    flags = le(h + SEC(FLAGS), 4);
    o = big(h + SEC(OFS_BODY));
    l = big(h + SEC(LEN_BODY));
    if (flags >> 1) fail(m, R(RESERVED_NONZERO, F_S_FLAGS), e + SEC(FLAGS));
    if (o % OCKPT_CONTAINER_ALIGNMENT) fail(m, R(MISALIGNED, F_S_OFS), e + SEC(OFS_BODY));
    if (o > m->size) fail(m, R(OFFSET_OUT_OF_BOUNDS, F_S_OFS), e + SEC(OFS_BODY));
    else if (l > m->size - o) fail(m, R(OFFSET_OUT_OF_BOUNDS, F_S_LEN), e + SEC(LEN_BODY));
    if (o < pos) fail(m, R(OVERLAP, F_S_OFS), e + SEC(OFS_BODY));
    if ((kind < OCKPT_CONTAINER_KIND_TENSORS || kind > OCKPT_CONTAINER_KIND_ORIGIN) && flags & 1u)
      fail(m, R(UNKNOWN_REQUIRED_SECTION, F_S_KIND), e);
    x = kind == OCKPT_V3_DATA_BLOCKS_KIND ? 4 : kind < OCKPT_CONTAINER_KIND_ORIGIN ? kind - 1 : 5;
    if (x < 5) {
      if (seen >> x & 1u) fail(m, R(DUPLICATE_SECTION, F_S_KIND), e);
      seen |= 1u << x;
      ofs[x] = o;
      len[x] = l;
      ent[x] = e + SEC(CRC);
      crc[x] = le(h + SEC(CRC), 4);
    }
    pos = o + l;
  }
  if (c != b) {
    m->code = 0;
    return fail(m, R(SECTION_TABLE_CHECKSUM, F_TABLE_CRC), HDR(SECTION_TABLE_CRC)), m->code;
  }
  if (!m->code && pos != m->size) fail(m, R(TRAILING_BYTES, F_FILE), pos);
  if (m->code) return m->code;
  for (i = 0; i < 5; i++)
    if (!(seen >> i & 1u)) ofs[i] = len[i] = 0;
  m->d_ofs = ofs[3];
  m->d_len = len[3];
  m->d_crc = crc[3];
  m->block = len[3];
  /* B1-B5, and the profile's limit: a block must fit the caller's buffer */
  o = ofs[4];
  if (o) {
    if (len[4] < OCKPT_V3_DATA_BLOCKS_HEAD_SIZE)
      return fail(m, R(BAD_DATA_BLOCKS, F_DB), o), m->code;
    if (rd(m, o, h, OCKPT_V3_DATA_BLOCKS_HEAD_SIZE)) return m->code;
    m->b_run = crc32c(0, h, OCKPT_V3_DATA_BLOCKS_HEAD_SIZE);
    m->b_crc = crc[4];
    m->b_ofs = o + OCKPT_V3_DATA_BLOCKS_HEAD_SIZE;
    b = le(h + OCKPT_V3_DATA_BLOCKS_HEAD_AT_BLOCK_SHIFT, 4);
    l = big(h + OCKPT_V3_DATA_BLOCKS_HEAD_AT_NUM_BLOCKS);
    if (b < OCKPT_V3_MIN_BLOCK_SHIFT || b > OCKPT_V3_MAX_BLOCK_SHIFT)
      return fail(m, R(BAD_DATA_BLOCKS, F_DB_SHIFT), o), m->code;
    m->block = 1u << b;
    if (l != (m->d_len + m->block - 1) >> b) fail(m, R(BAD_DATA_BLOCKS, F_DB_NUM), o + 8);
    else if (len[4] != OCKPT_V3_DATA_BLOCKS_HEAD_SIZE + OCKPT_V3_DATA_BLOCKS_SECTION_CRC_ELEM_SIZE * l)
      fail(m, R(BAD_DATA_BLOCKS, F_DB_CRC), o + 16);
  }
  if (m->block > block_len) fail(m, R(LIMIT_EXCEEDED, o ? F_DB_SHIFT : F_DATA), o ? o : m->d_ofs);
  /* P1 (P0's data without tensors fails P3 in the data pass) */
  if (ofs[0] && !ofs[3]) fail(m, R(OFFSET_OUT_OF_BOUNDS, F_T_LEN_DATA), ofs[0] + 8);
  if (!m->code && ofs[0]) tensors(m, ofs[0], len[0], crc[0], ent[0]);
  if (!m->code && ofs[1]) optimizer(m, ofs[1], len[1], crc[1], ent[1]);
  if (!m->code && ofs[2]) state(m, ofs[2], len[2], crc[2], ent[2]);
  return m->code;
}

/* Load the next block of the data section into the caller's buffer and verify it (B6). */
static int load(ockpt_micro *m) {
  uint32_t st = m->blk_start + m->blk_len, n = m->d_len - st, got;
  uint8_t c[4];
  if (n > m->block) n = m->block;
  if (!n) return fail(m, R(OFFSET_OUT_OF_BOUNDS, F_DATA), m->d_ofs + st);
  if (rd(m, m->d_ofs + st, m->buf, n)) return -1;
  got = crc32c(0, m->buf, n);
  if (m->b_ofs) {
    if (rd(m, m->b_ofs, c, 4)) return -1;
    m->b_run = crc32c(m->b_run, c, 4);
    m->b_ofs += 4;
    if (got != le(c, 4)) return fail(m, R(BLOCK_CHECKSUM, F_DB_CRC_I), m->d_ofs + st);
  } else if (got != m->d_crc) {
    return fail(m, R(SECTION_CHECKSUM, F_S_CRC), m->d_ofs);
  }
  m->blk_start = st;
  m->blk_len = n;
  return 0;
}

/* Take len bytes at the data cursor from verified blocks, into dst unless it is NULL. */
static int consume(ockpt_micro *m, uint8_t *dst, uint32_t len) {
  while (len) {
    uint32_t k;
    const uint8_t *src;
    if (m->at == m->blk_start + m->blk_len && load(m)) return -1;
    k = m->blk_start + m->blk_len - m->at;
    if (k > len) k = len;
    src = m->buf + (m->at - m->blk_start);
    len -= k;
    m->at += k;
    if (dst)
      while (k--) *dst++ = *src++;
  }
  return 0;
}

int ockpt_micro_copy(ockpt_micro *m, void *dst, uint32_t len) {
  if (m->code || len > m->left) return -1;
  m->left -= len;
  return consume(m, dst, len);
}

/* P2, P3 and B6, one range at a time, in data order (SPEC.md 7.3). */
int ockpt_micro_next(ockpt_micro *m, ockpt_micro_range *r) {
  uint32_t len, p, a, at, rec;
  if (m->code || consume(m, 0, m->left)) return -1;
  m->left = 0;
  for (;;) {
    if (m->pos == m->num_tensors) {
      m->pos = 0;
      m->pass++;
    }
    if (!m->num_tensors || m->pass > m->num_slots) {
      if (m->at != m->d_len) return fail(m, R(GAP, F_DATA), m->d_ofs + m->at);
      if (m->b_ofs && m->b_run != m->b_crc) return fail(m, R(SECTION_CHECKSUM, F_S_CRC), m->b_ofs);
      return 0;
    }
    rec = m->col_order ? get(m, m->col_order + 4u * m->pos, 4) : m->pos;
    at = m->pass ? m->o_ent + 8u * ((m->pass - 1) * m->num_tensors + rec)
                 : m->t_ofs + OCKPT_V3_TENSORS_HEAD_SIZE + 8u * rec;
    len = get(m, at, 8);
    m->pos++;
    if (m->code) return -1;
    if (m->pass && len == NONE) continue;
    for (a = 1; a < len && a < OCKPT_V3_MAX_RANGE_ALIGNMENT;) a <<= 1;
    p = (m->at + a - 1) & ~(a - 1);
    if (p > m->d_len || len > m->d_len - p)
      return fail(m, R(OFFSET_OUT_OF_BOUNDS, m->pass ? F_O_LEN_DATA : F_T_LEN_DATA), at);
    if (consume(m, 0, p - m->at)) return -1;
    m->left = len;
    r->pass = m->pass;
    r->record = rec;
    r->nbytes = len;
    r->index = m->col_index ? get(m, m->col_index + 4u * rec, 4) : rec;
    r->model_index = m->col_model ? get(m, m->col_model + 4u * rec, 4) : OCKPT_MICRO_NO_MODEL_INDEX;
    return m->code ? -1 : 1;
  }
}

int ockpt_micro_state(ockpt_micro *m, uint32_t k, uint8_t key[255], uint32_t *key_len,
                      uint8_t *type, uint64_t *value) {
  uint8_t e[OCKPT_CONTAINER_STATE_ENTRY_SIZE];
  unsigned v;
  if (k >= m->num_state ||
      rd(m, m->s_ofs + OCKPT_CONTAINER_STATE_HEAD_SIZE + OCKPT_CONTAINER_STATE_ENTRY_SIZE * k, e,
         OCKPT_CONTAINER_STATE_ENTRY_SIZE))
    return -1;
  *key_len = le(e + OCKPT_CONTAINER_STATE_ENTRY_AT_LEN_KEY, 4);
  *type = e[OCKPT_CONTAINER_STATE_ENTRY_AT_VALUE_TYPE];
  v = *type < OCKPT_CONTAINER_VALUE_STRING ? OCKPT_CONTAINER_STATE_ENTRY_AT_VALUE
                                    : OCKPT_CONTAINER_STATE_ENTRY_AT_LEN_VALUE;
  *value = (uint64_t)le(e + v + 4, 4) << 32 | le(e + v, 4);
  if (*key_len > OCKPT_CONTAINER_MAX_KEY_LEN) return -1;
  return rd(m, le(e + OCKPT_CONTAINER_STATE_ENTRY_AT_OFS_KEY, 4), key, *key_len);
}
