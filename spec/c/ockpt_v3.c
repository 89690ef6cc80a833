/* Schema 3 in the reference C reader: SPEC.md section 7, rule by rule, in the spec's order.
 *
 * Schema 3 is schema 2's container with a columnar tensors section (rules C0-C13), 8-byte slot
 * entries (O1-O9 with O4 and O7 changed, no O10) and data ranges placed by rule (P0-P4). The
 * header, section table, optimizer, state and origin rules are schema 2's (ockpt_v2.c, shared
 * through ockpt_internal.h), so both schemas read through one implementation of them, over a
 * buffer or a stream alike.
 *
 * Arithmetic: positions inside the tensors section are computed relative to its start from
 * n <= 2^24 and at most 1024 bytes per record (D <= 8n dims, P <= 1024n name bytes), so they
 * stay below 2^40 and are compared with the section's length before anything is read; a data
 * range's place is compared with the data section's end as `len > end - p` after `p <= end`.
 *
 * No allocation. The rules that compare records with each other (C5 model indices, C9 the
 * permutation, C12 names) compare every record with every earlier one without scratch; with the
 * caller's scratch (ockpt_read_scratch) they sort in it (SPEC.md 6.1, heapsort, O(n log n)) and
 * report the same record. C4 compares neighbours only. The scratch then keeps the computed
 * offset of every data range, so that access is O(1) afterwards.
 *
 * The optional range_index section (SPEC.md 7.5): I1-I5 are checked before P2's walk and
 * reported after P3, I6 compares its starts in that same walk, I7 its positions in n steps,
 * all before P4. Without scratch, C9 takes I7's shortcut (positions that invert `order` prove
 * it a permutation in n steps), and every range lookup starts from its group's recorded start:
 * at most G - 1 ranges walked instead of up to n. */
#include "ockpt_internal.h"

#define rd8(b, k) src_u8((b), (k))
#define rd32(b, k) src_u32((b), (k))
#define rd64(b, k) src_u64((b), (k))

/* The width of every field and array element read below is the one its rd8/rd32/rd64 call
 * reads: each is checked against the generated layout (ockpt_layout.h: a packed struct's
 * member, an array's *_ELEM_SIZE), so that a width changed in onert_checkpoint_v3.ksy or
 * onert_checkpoint_common.ksy stops the build here, naming the record or array and the field,
 * instead of reading the wrong bytes (as ockpt_v2.c does for schema 2's records). */
#define WIDTH_IS(rec, f, n) \
  typedef char rec##_##f##_is_read_as_##n[sizeof(((const rec##_layout *)0)->f) == (n) ? 1 : -1]
#define ELEM_IS(arr, n) typedef char arr##_is_read_as_##n[arr##_ELEM_SIZE == (n) ? 1 : -1]
/* the container's fields that schema 3 reads itself (T1-T5 and the rest are ockpt_v2.c's) */
WIDTH_IS(ockpt_container_header, num_sections, 4);
WIDTH_IS(ockpt_container_section_entry, kind, 4);
WIDTH_IS(ockpt_container_section_entry, ofs_body, 8);
WIDTH_IS(ockpt_container_section_entry, len_body, 8);
WIDTH_IS(ockpt_container_section_entry, crc, 4);
WIDTH_IS(ockpt_container_optimizer_head, num_slots, 4);
/* the heads of schema 3's sections */
WIDTH_IS(ockpt_v3_tensors_head, num_tensors, 4);
WIDTH_IS(ockpt_v3_tensors_head, columns, 4);
WIDTH_IS(ockpt_v3_data_blocks_head, block_shift, 4);
WIDTH_IS(ockpt_v3_data_blocks_head, reserved, 4);
WIDTH_IS(ockpt_v3_data_blocks_head, num_blocks, 8);
WIDTH_IS(ockpt_v3_range_index_head, group_shift, 4);
WIDTH_IS(ockpt_v3_range_index_head, reserved, 4);
WIDTH_IS(ockpt_v3_range_index_head, num_groups, 8);
/* the columns, the slot entries and the tables after the heads */
ELEM_IS(OCKPT_V3_TENSORS_SECTION_LEN_DATA, 8);
ELEM_IS(OCKPT_V3_TENSORS_SECTION_INDEX, 4);
ELEM_IS(OCKPT_V3_TENSORS_SECTION_MODEL_INDEX, 4);
ELEM_IS(OCKPT_V3_TENSORS_SECTION_LEN_NAME, 4);
ELEM_IS(OCKPT_V3_TENSORS_SECTION_DTYPE, 1);
ELEM_IS(OCKPT_V3_TENSORS_SECTION_RANK, 1);
ELEM_IS(OCKPT_V3_TENSORS_SECTION_ORDER, 4);
ELEM_IS(OCKPT_V3_RECORD_DIMS_DIMS, 4);
ELEM_IS(OCKPT_V3_OPTIMIZER_SECTION_ENTRIES, 8);
ELEM_IS(OCKPT_V3_DATA_BLOCKS_SECTION_CRC, 4);
ELEM_IS(OCKPT_V3_RANGE_INDEX_SECTION_START, 8);
ELEM_IS(OCKPT_V3_RANGE_INDEX_SECTION_POSITION, 4);
#undef WIDTH_IS
#undef ELEM_IS

/* Element sizes of the columns and tables (ockpt_layout.h, from onert_checkpoint_v3.ksy). */
#define LEN_SIZE OCKPT_V3_TENSORS_SECTION_LEN_DATA_ELEM_SIZE
#define DIM_SIZE OCKPT_V3_RECORD_DIMS_DIMS_ELEM_SIZE
#define CRC_SIZE OCKPT_V3_DATA_BLOCKS_SECTION_CRC_ELEM_SIZE

#define err ockpt_container_err
#define ok ockpt_container_ok

#define CHECK(expr)                                 \
  do {                                              \
    ockpt_result check_r_ = (expr);                 \
    if (check_r_.code != OCKPT_OK) return check_r_; \
  } while (0)

typedef ockpt_container_ctx v3;

/* x rounded up to a multiple of a (a power of two <= 64); saturates near 2^64. */
static uint64_t round_up(uint64_t x, uint64_t a) {
  uint64_t r = x & (a - 1u);
  if (r == 0) return x;
  if (x > UINT64_MAX - a) return UINT64_MAX;
  return x + (a - r);
}

/* SPEC.md 7.3: a range of len bytes starts at a multiple of a(len). */
static uint64_t range_align(uint64_t len) {
  uint64_t a = 1;
  if (len >= OCKPT_CONTAINER_ALIGNMENT) return OCKPT_CONTAINER_ALIGNMENT;
  while (a < len) a <<= 1;
  return a;
}

/* ---- the tensors section's layout (7.1) -------------------------------------------------- */

/* The columns in file order, as ockpt_layout.h's generated descriptor lists them: C_LEN_DATA,
 * C_INDEX, C_MODEL_INDEX, C_LEN_NAME, C_DTYPE, C_RANK, C_ORDER (one element per record), then
 * C_DIMS and C_NAMES (as many as the sum of the ranks, of the name lengths). */
#define COLUMN_ID(name, NAME, bit, size, count, sum_of, skip, align) C_##NAME,
enum { OCKPT_V3_TENSORS_HEAD_COLUMNS(COLUMN_ID) C_COLUMNS, C_NONE = C_COLUMNS };
#undef COLUMN_ID

typedef struct column {
  uint32_t bit;      /* of `columns` (0: always present) */
  unsigned size;     /* bytes per element */
  unsigned sum_of;   /* C_NONE: one element per record; else the column whose values count them */
  unsigned skip;     /* a value of sum_of that counts 0 (NO_SHAPE) */
  unsigned align;    /* its start is a multiple of this from the section's start */
  const char *field; /* "tensors.<name>" */
} column;

#define COLUMN(name, NAME, bit, size, count, sum_of, skip, align) \
  {bit, size, C_##sum_of, skip, align, "tensors." #name},
static const column col[C_COLUMNS] = {OCKPT_V3_TENSORS_HEAD_COLUMNS(COLUMN)};
#undef COLUMN

typedef struct layout {
  uint64_t s, L, n;
  uint32_t cols;
  uint64_t at[C_COLUMNS];   /* absolute start of each present column */
  uint64_t from[C_COLUMNS]; /* absolute end of the column before it (its padding starts there) */
  uint64_t e;               /* relative end of the last column of one element per record */
} layout;

static int has(const layout *l, unsigned i) { return col[i].bit == 0 || (l->cols & col[i].bit); }

/* Column i from relative position rel on (its padding first), `count` elements: the relative
 * end. */
static uint64_t place(layout *l, unsigned i, uint64_t rel, uint64_t count) {
  l->from[i] = l->s + rel;
  rel = round_up(rel, col[i].align);
  l->at[i] = l->s + rel;
  return rel + count * col[i].size;
}

/* C3: the columns of one element per record (their ends need no value of the file). */
static void lay_out(layout *l, uint64_t s, uint64_t L, uint64_t n, uint32_t cols) {
  uint64_t rel = OCKPT_V3_TENSORS_HEAD_SIZE;
  unsigned i;
  l->s = s;
  l->L = L;
  l->n = n;
  l->cols = cols;
  for (i = 0; i < C_COLUMNS; i++) {
    l->at[i] = 0;
    l->from[i] = 0;
    if (has(l, i) && col[i].sum_of == C_NONE) rel = place(l, i, rel, n);
  }
  l->e = rel;
}

static uint32_t col32(const ockpt_src *b, const layout *l, unsigned i, uint64_t k) {
  return rd32(b, l->at[i] + col[i].size * k);
}

/* Element k of a column of one element per record, as an unsigned value of its width. */
static uint32_t value_at(const ockpt_src *b, const layout *l, unsigned i, uint64_t k) {
  return col[i].size == 1 ? rd8(b, l->at[i] + k) : col32(b, l, i, k);
}

/* The columns counted by another column's values (dims, names), after the others in column
 * order: each one's element count (D, P) into count[] and its place; the relative end of the
 * last. Every sum fits: D <= 255n, P < 2^32 n, n <= 2^24. */
static uint64_t lay_out_counted(const ockpt_src *b, layout *l, uint64_t count[C_COLUMNS]) {
  uint64_t rel = l->e, k;
  unsigned i;
  for (i = 0; i < C_COLUMNS; i++) {
    count[i] = l->n;
    if (col[i].sum_of == C_NONE || !has(l, i)) continue;
    for (count[i] = 0, k = 0; k < l->n; k++) {
      uint32_t v = value_at(b, l, col[i].sum_of, k);
      if (v != col[i].skip) count[i] += v;
    }
    rel = place(l, i, rel, count[i]);
  }
  return rel;
}

/* A record's value of each optional column, or the column's default without it. */
static uint32_t index_of(const ockpt_src *b, const layout *l, uint64_t k) {
  return has(l, C_INDEX) ? col32(b, l, C_INDEX, k) : (uint32_t)k;
}
static uint32_t model_of(const ockpt_src *b, const layout *l, uint64_t k) {
  return has(l, C_MODEL_INDEX) ? col32(b, l, C_MODEL_INDEX, k) : OCKPT_V3_NO_MODEL_INDEX;
}
static uint32_t lname_of(const ockpt_src *b, const layout *l, uint64_t k) {
  return has(l, C_LEN_NAME) ? col32(b, l, C_LEN_NAME, k) : 0u;
}
static int dtype_of(const ockpt_src *b, const layout *l, uint64_t k) {
  return has(l, C_DTYPE) ? (int)(int8_t)rd8(b, l->at[C_DTYPE] + k) : OCKPT_V3_NO_DTYPE;
}
static unsigned rank_of(const ockpt_src *b, const layout *l, uint64_t k) {
  return has(l, C_RANK) ? rd8(b, l->at[C_RANK] + k) : OCKPT_V3_NO_SHAPE;
}
static uint32_t order_of(const ockpt_src *b, const layout *l, uint64_t q) {
  return has(l, C_ORDER) ? col32(b, l, C_ORDER, q) : (uint32_t)q;
}
static uint64_t len_at(const layout *l, uint64_t k) {
  return l->at[C_LEN_DATA] + LEN_SIZE * k;
}

/* ---- the first record whose u32 value repeats an earlier record's -------------------------- */

/* Values col[k] (i = C_MODEL_INDEX or C_ORDER), records whose value is `skip` ignored. Pairwise without
 * scratch; with it, keys value << 32 | k heap-sorted: in each run of equal values the second key
 * is the smallest record that repeats an earlier one (SPEC.md 6.1). -1 when all differ. */
static int less_u64(const void *ctx, uint64_t a, uint64_t b) {
  (void)ctx;
  return a < b;
}

static int64_t first_repeat(const v3 *c, const layout *l, unsigned i, uint32_t skip) {
  const ockpt_src *b = &c->src;
  uint64_t n = l->n, k, j;
  if (c->scratch != NULL && c->scratch_count >= n) {
    uint64_t *keys = c->scratch;
    size_t m = 0, q;
    int64_t best = -1;
    for (k = 0; k < n; k++) {
      uint32_t v = col32(b, l, i, k);
      if (v != skip) keys[m++] = ((uint64_t)v << 32) | k;
    }
    ockpt_container_heapsort(keys, m, less_u64, NULL);
    for (q = 1; q < m; q++)
      if (keys[q] >> 32 == keys[q - 1] >> 32 && (q < 2 || keys[q - 1] >> 32 != keys[q - 2] >> 32)) {
        int64_t rec = (int64_t)(keys[q] & 0xFFFFFFFFu);
        if (best < 0 || rec < best) best = rec;
      }
    return best;
  }
  for (k = 1; k < n; k++) {
    uint32_t v = col32(b, l, i, k);
    if (v == skip) continue;
    for (j = 0; j < k; j++)
      if (col32(b, l, i, j) == v) return (int64_t)k;
  }
  return -1;
}

/* ---- the range_index section's head (SPEC.md 7.5, rules I1-I5) ---------------------------- */

#define START_SIZE OCKPT_V3_RANGE_INDEX_SECTION_START_ELEM_SIZE
#define POSITION_SIZE OCKPT_V3_RANGE_INDEX_SECTION_POSITION_ELEM_SIZE

/* Where the range_index section is, once the section table passed T1-T5. */
typedef struct rindex {
  int present;
  uint64_t s, L;      /* its ofs_body, len_body */
  uint32_t shift;     /* group_shift (after I3) */
  uint64_t m;         /* num_groups (after I5) */
  uint64_t positions; /* where `position` starts, 0 without an order column (after I5) */
} rindex;

static void find_index(const ockpt_src *b, const ockpt_container *info, rindex *x) {
  uint64_t i;
  x->present = 0;
  x->s = x->L = x->m = x->positions = 0;
  x->shift = 0;
  for (i = 0; i < info->num_sections; i++) {
    uint64_t e = OCKPT_CONTAINER_HEADER_SIZE + OCKPT_CONTAINER_SECTION_ENTRY_SIZE * i;
    if (rd32(b, e) == OCKPT_V3_RANGE_INDEX_KIND) {
      x->present = 1;
      x->s = rd64(b, e + OCKPT_CONTAINER_SECTION_ENTRY_AT_OFS_BODY);
      x->L = rd64(b, e + OCKPT_CONTAINER_SECTION_ENTRY_AT_LEN_BODY);
      return;
    }
  }
}

/* I1 to I5 on a present section, for n records (tensors: a tensors section is present), K slots
 * and an order column or not. Fills x->shift, x->m, x->positions. */
static ockpt_result index_head(const ockpt_src *b, rindex *x, int tensors, uint64_t n, uint64_t K,
                               int order) {
  uint64_t s = x->s, L = x->L, G, m, want;
  if (L < OCKPT_V3_RANGE_INDEX_HEAD_SIZE) /* I1 */
    return err(OCKPT_E_BAD_RANGE_INDEX, F0("range_index"), s,
               "the range_index section is shorter than its 16-byte head");
  if (rd32(b, s + OCKPT_V3_RANGE_INDEX_HEAD_AT_RESERVED) != 0) /* I2 */
    return err(OCKPT_E_RESERVED_NONZERO, F0("range_index.reserved"),
               s + OCKPT_V3_RANGE_INDEX_HEAD_AT_RESERVED, "reserved field is not 0");
  x->shift = rd32(b, s + OCKPT_V3_RANGE_INDEX_HEAD_AT_GROUP_SHIFT);
  if (x->shift < OCKPT_V3_MIN_GROUP_SHIFT || x->shift > OCKPT_V3_MAX_GROUP_SHIFT) /* I3 */
    return err(OCKPT_E_BAD_RANGE_INDEX, F0("range_index.group_shift"), s,
               "group_shift is outside 4..16 (groups of 16 to 65,536 positions)");
  if (!tensors) /* I4 */
    return err(OCKPT_E_EMPTY_SECTION, F0("range_index"), s, "a range_index section, but no tensors");
  G = (uint64_t)1 << x->shift;
  m = rd64(b, s + OCKPT_V3_RANGE_INDEX_HEAD_AT_NUM_GROUPS);
  if (m != (n + G - 1) >> x->shift) /* I5 */
    return err(OCKPT_E_BAD_RANGE_INDEX, F0("range_index.num_groups"),
               s + OCKPT_V3_RANGE_INDEX_HEAD_AT_NUM_GROUPS,
               "num_groups is not the tensor count divided by the group size");
  /* m <= 2^20 and K <= 16 (the caller's), so nothing overflows */
  want = OCKPT_V3_RANGE_INDEX_HEAD_SIZE + START_SIZE * (1 + K) * m + (order ? POSITION_SIZE * n : 0);
  if (L != want)
    return err(OCKPT_E_BAD_RANGE_INDEX, F0("range_index.start"), s + OCKPT_V3_RANGE_INDEX_HEAD_SIZE,
               "the range_index section's length is not its fields'");
  x->m = m;
  x->positions = order ? s + OCKPT_V3_RANGE_INDEX_HEAD_SIZE + START_SIZE * (1 + K) * m : 0;
  return ok();
}

/* I7's comparison: position[order[i]] == i for every i (order values already below n, the
 * section through I5). Returns n when all hold, else the first i that breaks it. */
static uint64_t first_misplaced(const ockpt_src *b, const layout *l, const rindex *x) {
  uint64_t i;
  for (i = 0; i < l->n; i++)
    if (rd32(b, x->positions + POSITION_SIZE * (uint64_t)col32(b, l, C_ORDER, i)) != i) return i;
  return l->n;
}

/* C9 without scratch: a range_index whose positions are the inverse of `order` proves that no
 * order value repeats, in n steps instead of n^2/2 (SPEC.md 7.5, I7's shortcut). 1 when it
 * does; 0 otherwise (no section, one failing I1-I5, or a position that differs: C9 then runs in
 * full). The optimizer section is not checked yet: K is read as it stands, and the shortcut
 * only proves the fact about the bytes it read, inside the section. */
static int order_proved_by_index(const v3 *c, const layout *l) {
  const ockpt_container *info = c->info;
  uint64_t K = 0;
  rindex x;
  find_index(&c->src, info, &x);
  if (!x.present) return 0;
  if (info->optimizer.present) {
    if (info->optimizer.length < OCKPT_CONTAINER_OPTIMIZER_HEAD_SIZE) return 0;
    K = rd32(&c->src, info->optimizer.offset + OCKPT_CONTAINER_OPTIMIZER_HEAD_AT_NUM_SLOTS);
    if (K > OCKPT_CONTAINER_MAX_SLOTS) return 0;
  }
  if (index_head(&c->src, &x, 1, l->n, K, 1).code != OCKPT_OK) return 0;
  return first_misplaced(&c->src, l, &x) == l->n;
}

/* ---- names (C12) ----------------------------------------------------------------------------- */

typedef struct names_ctx {
  const ockpt_src *b;
  const layout *l;
  uint64_t start; /* the names column */
} names_ctx;

/* keys: (name's place relative to the column) << 24 | record; P <= 2^34, so 58 bits */
static int less_name(const void *ctx, uint64_t x, uint64_t y) {
  const names_ctx *nc = (const names_ctx *)ctx;
  uint64_t kx = x & 0xFFFFFFu, ky = y & 0xFFFFFFu, px = nc->start + (x >> 24),
           py = nc->start + (y >> 24), m;
  uint32_t lx = lname_of(nc->b, nc->l, kx), ly = lname_of(nc->b, nc->l, ky);
  if (lx != ly) return lx < ly;
  for (m = 0; m < lx; m++) {
    uint8_t cx = rd8(nc->b, px + m), cy = rd8(nc->b, py + m);
    if (cx != cy) return cx < cy;
  }
  return kx < ky;
}

static int same_name(const names_ctx *nc, uint64_t x, uint64_t y) {
  uint32_t lx = lname_of(nc->b, nc->l, x & 0xFFFFFFu), ly = lname_of(nc->b, nc->l, y & 0xFFFFFFu);
  return lx == ly && ockpt_container_same_bytes(nc->b, nc->start + (x >> 24), nc->start + (y >> 24), lx);
}

static ockpt_result check_names(const v3 *c, const layout *l, uint64_t start) {
  const ockpt_src *b = &c->src;
  uint64_t n = l->n, k, j, at, bad_utf8 = UINT64_MAX, bad_at = 0, dup = UINT64_MAX, dup_at = 0;
  if (c->scratch != NULL && c->scratch_count >= n) {
    uint64_t *keys = c->scratch;
    size_t m = 0, q;
    names_ctx nc;
    nc.b = b;
    nc.l = l;
    nc.start = start;
    for (k = 0, at = start; k < n; k++) {
      uint32_t ln = lname_of(b, l, k);
      if (ln == 0) continue;
      if (bad_utf8 == UINT64_MAX && !ockpt_container_utf8_valid(b, at, ln)) {
        bad_utf8 = k;
        bad_at = at;
      }
      keys[m++] = ((at - start) << 24) | k;
      at += ln;
    }
    ockpt_container_heapsort(keys, m, less_name, &nc);
    for (q = 1; q < m; q++) {
      uint64_t rec = keys[q] & 0xFFFFFFu;
      /* the comparison with the same record number ignored: equal names are neighbours */
      if (rec < dup && same_name(&nc, keys[q], keys[q - 1]) &&
          (q < 2 || !same_name(&nc, keys[q - 1], keys[q - 2]))) {
        dup = rec;
        dup_at = start + (keys[q] >> 24);
      }
    }
  } else {
    for (k = 0, at = start; k < n && dup == UINT64_MAX && bad_utf8 == UINT64_MAX; k++) {
      uint32_t ln = lname_of(b, l, k);
      uint64_t other;
      if (ln == 0) continue;
      if (!ockpt_container_utf8_valid(b, at, ln)) {
        bad_utf8 = k;
        bad_at = at;
        break;
      }
      for (j = 0, other = start; j < k; j++) {
        uint32_t lj = lname_of(b, l, j);
        if (lj == ln && ockpt_container_same_bytes(b, other, at, ln)) {
          dup = k;
          dup_at = at;
          break;
        }
        other += lj;
      }
      at += ln;
    }
  }
  if (bad_utf8 != UINT64_MAX && bad_utf8 <= dup)
    return err(OCKPT_E_BAD_UTF8, F1("tensors", (int64_t)bad_utf8, ".name"), bad_at,
               "a name is not UTF-8");
  if (dup != UINT64_MAX)
    return err(OCKPT_E_DUPLICATE_TENSOR_NAME, F1("tensors", (int64_t)dup, ".name"), dup_at,
               "two tensors have the same name");
  return ok();
}

/* ---- tensors section (C0-C13) -------------------------------------------------------------- */

static ockpt_result redundant(const layout *l) {
  return err(OCKPT_E_REDUNDANT_COLUMN, F0("tensors.columns"), l->s + OCKPT_V3_TENSORS_HEAD_AT_COLUMNS,
             "a column holds only the value its absence means");
}

static ockpt_result check_tensors(const v3 *c, layout *l) {
  const ockpt_src *b = &c->src;
  const ockpt_sec_span *sec = &c->info->tensors;
  uint64_t s = sec->offset, L = sec->length, n, k, end, count[C_COLUMNS];
  uint32_t cols;
  int64_t rep;
  int all_none;
  unsigned i;
  /* C0 */
  if (L < OCKPT_V3_TENSORS_HEAD_SIZE)
    return err(OCKPT_E_COUNT_EXCEEDS_FILE, F0("tensors.num_tensors"), s,
               "the tensors section is shorter than its 8-byte head");
  n = rd32(b, s + OCKPT_V3_TENSORS_HEAD_AT_NUM_TENSORS);
  cols = rd32(b, s + OCKPT_V3_TENSORS_HEAD_AT_COLUMNS);
  /* C1 */
  if (n == 0)
    return err(OCKPT_E_EMPTY_SECTION, F0("tensors.num_tensors"), s,
               "a tensors section without records");
  if (n > OCKPT_CONTAINER_MAX_TENSORS)
    return err(OCKPT_E_LIMIT_EXCEEDED, F0("tensors.num_tensors"), s, "more than 2^24 tensors");
  /* C2 */
  if (cols & ~(uint32_t)0x3F)
    return err(OCKPT_E_RESERVED_NONZERO, F0("tensors.columns"), s + OCKPT_V3_TENSORS_HEAD_AT_COLUMNS,
               "reserved column bits are set");
  /* C3 */
  lay_out(l, s, L, n, cols);
  if (l->e > L)
    return err(OCKPT_E_COUNT_EXCEEDS_FILE, F0("tensors.num_tensors"), s,
               "the tensors section's columns do not fit in it");
  /* C4 */
  if (has(l, C_INDEX)) {
    int identity = col32(b, l, C_INDEX, 0) == 0;
    for (k = 1; k < n; k++) {
      uint32_t here = col32(b, l, C_INDEX, k), before = col32(b, l, C_INDEX, k - 1);
      if (here == before)
        return err(OCKPT_E_DUPLICATE_TENSOR_INDEX, F1("tensors", (int64_t)k, ".index"),
                   l->at[C_INDEX] + col[C_INDEX].size * k, "two tensor records have the same index");
      if (here < before)
        return err(OCKPT_E_TENSOR_ORDER, F1("tensors", (int64_t)k, ".index"),
                   l->at[C_INDEX] + col[C_INDEX].size * k, "tensor records are not in ascending index order");
      if (here != k) identity = 0;
    }
    if (identity) return redundant(l);
  }
  /* C5 */
  if (has(l, C_MODEL_INDEX)) {
    for (k = 0, all_none = 1; k < n && all_none; k++)
      all_none = col32(b, l, C_MODEL_INDEX, k) == OCKPT_V3_NO_MODEL_INDEX;
    if (all_none) return redundant(l);
    rep = first_repeat(c, l, C_MODEL_INDEX, OCKPT_V3_NO_MODEL_INDEX);
    if (rep >= 0)
      return err(OCKPT_E_DUPLICATE_TENSOR_INDEX, F1("tensors", rep, ".model_index"),
                 l->at[C_MODEL_INDEX] + col[C_MODEL_INDEX].size * (uint64_t)rep, "two tensor records have the same model index");
  }
  /* C6 */
  if (has(l, C_LEN_NAME)) {
    for (k = 0, all_none = 1; k < n && all_none; k++) all_none = col32(b, l, C_LEN_NAME, k) == 0;
    if (all_none) return redundant(l);
    for (k = 0; k < n; k++)
      if (col32(b, l, C_LEN_NAME, k) > OCKPT_CONTAINER_MAX_NAME_LEN)
        return err(OCKPT_E_LIMIT_EXCEEDED, F1("tensors", (int64_t)k, ".len_name"),
                   l->at[C_LEN_NAME] + col[C_LEN_NAME].size * k, "a name has at most 1024 bytes");
  }
  /* C7 */
  if (has(l, C_DTYPE)) {
    for (k = 0, all_none = 1; k < n && all_none; k++)
      all_none = dtype_of(b, l, k) == OCKPT_V3_NO_DTYPE;
    if (all_none) return redundant(l);
    for (k = 0; k < n; k++) {
      int d = dtype_of(b, l, k);
      if (d != OCKPT_V3_NO_DTYPE && ockpt_dtype_name(d) == NULL)
        return err(OCKPT_E_BAD_DTYPE, F1("tensors", (int64_t)k, ".dtype"),
                   l->at[C_DTYPE] + col[C_DTYPE].size * k,
                   "dtype is not a circle TensorType");
    }
  }
  /* C8 */
  if (has(l, C_RANK)) {
    for (k = 0, all_none = 1; k < n && all_none; k++)
      all_none = rank_of(b, l, k) == OCKPT_V3_NO_SHAPE;
    if (all_none) return redundant(l);
    for (k = 0; k < n; k++) {
      unsigned r = rank_of(b, l, k);
      if (r != OCKPT_V3_NO_SHAPE && r > OCKPT_CONTAINER_MAX_RANK)
        return err(OCKPT_E_LIMIT_EXCEEDED, F1("tensors", (int64_t)k, ".rank"),
                   l->at[C_RANK] + col[C_RANK].size * k,
                   "rank exceeds 8");
    }
  }
  /* C9 */
  if (has(l, C_ORDER)) {
    int identity = 1;
    for (k = 0; k < n; k++) {
      uint32_t v = col32(b, l, C_ORDER, k);
      if (v >= n)
        return err(OCKPT_E_BAD_DATA_ORDER, F1("tensors", (int64_t)k, ".order"),
                   l->at[C_ORDER] + col[C_ORDER].size * k, "an order value is not a record");
      if (v != k) identity = 0;
    }
    rep = (c->scratch == NULL || c->scratch_count < n) && order_proved_by_index(c, l)
              ? -1
              : first_repeat(c, l, C_ORDER, UINT32_MAX); /* every value < n <= 2^24 */
    if (rep >= 0)
      return err(OCKPT_E_BAD_DATA_ORDER, F1("tensors", rep, ".order"),
                 l->at[C_ORDER] + col[C_ORDER].size * (uint64_t)rep, "an order value repeats an earlier one");
    if (identity) return redundant(l);
  }
  /* C10: the counted columns (dims: D <= 8n, names: P <= 1024n) end inside the section, each
   * checked in column order; then nothing is left after the last */
  end = lay_out_counted(b, l, count);
  for (i = 0; i < C_COLUMNS; i++)
    if (col[i].sum_of != C_NONE && has(l, i) && l->at[i] - s + count[i] * col[i].size > L)
      return err(OCKPT_E_COUNT_EXCEEDS_FILE, F0(col[i].field), l->at[i],
                 "a column counted by another column's values ends past the tensors section");
  if (end < L)
    return err(OCKPT_E_GAP, F0("tensors"), s + end, "bytes at the end of the section belong to nothing");
  /* C11, in column order */
  for (i = 0; i < C_COLUMNS; i++)
    if (has(l, i)) CHECK(ockpt_container_check_padding(b, l->from[i], l->at[i]));
  /* C12 */
  if (has(l, C_NAMES)) CHECK(check_names(c, l, l->at[C_NAMES]));
  /* C13: product(dims) * size == len_data, without overflow (as R11) */
  if (has(l, C_DTYPE) && has(l, C_DIMS)) {
    uint64_t d = l->at[C_DIMS];
    for (k = 0; k < n; k++) {
      unsigned r = rank_of(b, l, k), elem, j;
      uint64_t len = rd64(b, len_at(l, k)), prod;
      int zero = 0, over = 0, dt = dtype_of(b, l, k);
      if (r == OCKPT_V3_NO_SHAPE) continue;
      elem = dt == OCKPT_V3_NO_DTYPE ? 0 : ockpt_dtype_size(dt);
      if (elem != 0) {
        for (j = 0; j < r; j++)
          if (rd32(b, d + DIM_SIZE * j) == 0) zero = 1;
        prod = elem;
        if (!zero)
          for (j = 0; j < r && !over; j++) {
            uint64_t v = rd32(b, d + DIM_SIZE * j);
            if (prod > len / v) over = 1; /* prod * v > len (v >= 1) */
            else prod *= v;
          }
        if (zero ? len != 0 : (over || prod != len))
          return err(OCKPT_E_SHAPE_MISMATCH, F1("tensors", (int64_t)k, ".len_data"), len_at(l, k),
                     "len_data differs from the product of the dims times the element size");
      }
      d += DIM_SIZE * r;
    }
  }
  c->info->num_tensors = (uint32_t)n;
  c->info->columns = cols;
  return ok();
}

/* ---- the ranges in data order (7.3) ------------------------------------------------------- */

typedef struct walk {
  const ockpt_src *b;
  layout l;
  uint64_t n, K, count; /* count: n + K*n positions in data order */
  uint64_t entries;     /* the first slot entry */
} walk;

/* Data-order position q: 1 with the range's number in range order (record k: k; slot j's entry
 * for record k: n + j*n + k), its size and where that size is; 0 for a NO_STATE entry. */
static int range_at(const walk *w, uint64_t q, uint64_t *p, uint64_t *len, uint64_t *at) {
  uint64_t rec, j, x;
  if (q < w->n) {
    rec = order_of(w->b, &w->l, q);
    *p = rec;
    *at = len_at(&w->l, rec);
    *len = rd64(w->b, *at);
    return 1;
  }
  j = (q - w->n) / w->n;
  rec = order_of(w->b, &w->l, (q - w->n) % w->n);
  x = w->entries + OCKPT_V3_SLOT_ENTRY_SIZE * (j * w->n + rec);
  *len = rd64(w->b, x);
  *p = w->n + j * w->n + rec;
  *at = x;
  return *len != OCKPT_CONTAINER_NO_STATE;
}

static ockpt_fname range_field(const walk *w, uint64_t p) {
  if (p < w->n) return F1("tensors", (int64_t)p, ".len_data");
  return F2("optimizer.slots", (int64_t)((p - w->n) / w->n), "", (int64_t)((p - w->n) % w->n),
            ".len_data");
}

static void walk_init(walk *w, const ockpt_src *b, const ockpt_container *info) {
  w->b = b;
  w->n = info->tensors.present ? info->num_tensors : 0;
  w->K = info->optimizer.present ? info->num_slots : 0;
  w->count = w->n + w->K * w->n;
  w->entries =
      info->optimizer.offset + OCKPT_CONTAINER_OPTIMIZER_HEAD_SIZE + OCKPT_CONTAINER_SLOT_DESCRIPTOR_SIZE * w->K;
  lay_out(&w->l, info->tensors.offset, info->tensors.length, w->n, info->columns);
}

static ockpt_result check_data(const v3 *c) {
  ockpt_container *info = c->info;
  walk w;
  uint64_t s = info->data.offset, end = info->data.offset + info->data.length, pos = s, q, p, len,
           at, pad = 0, k;
  uint64_t *offsets = NULL;
  int padded = 0;
  rindex x;
  ockpt_result head = ok();
  uint64_t bad_start = UINT64_MAX, G = 0, K;
  /* P0, P1 */
  if (info->data.present && !info->tensors.present)
    return err(OCKPT_E_EMPTY_SECTION, F0("data"), s, "a data section, but no tensors");
  find_index(&c->src, info, &x);
  if (!info->tensors.present) /* no range to place; I1-I4 (I4 refuses such a section) */
    return x.present ? index_head(&c->src, &x, 0, 0, 0, 0) : ok();
  if (!info->data.present)
    return err(OCKPT_E_OFFSET_OUT_OF_BOUNDS, F0("tensors[0].len_data"),
               info->tensors.offset + OCKPT_V3_TENSORS_HEAD_SIZE,
               "tensors, but no data section");
  walk_init(&w, &c->src, info);
  if (c->scratch != NULL && c->scratch_count >= w.count) {
    offsets = c->scratch;
    for (k = 0; k < w.count; k++) offsets[k] = OCKPT_CONTAINER_NO_STATE;
  }
  K = w.K;
  if (x.present) { /* I1-I5 now, reported after P3; I6 compared during P2's walk */
    head = index_head(&c->src, &x, 1, w.n, K, has(&w.l, C_ORDER));
    if (head.code == OCKPT_OK) G = (uint64_t)1 << x.shift;
  }
  /* P2, the first non-zero padding byte for P4, the first start that differs for I6 */
  for (q = 0; q < w.count; q++) {
    uint64_t start, i = q % w.n;
    if (G != 0 && bad_start == UINT64_MAX && (i & (G - 1)) == 0) {
      uint64_t g = (q / w.n) * x.m + (i >> x.shift);
      if (rd64(&c->src, x.s + OCKPT_V3_RANGE_INDEX_HEAD_SIZE + START_SIZE * g) != pos - s)
        bad_start = g;
    }
    if (!range_at(&w, q, &p, &len, &at)) continue;
    start = round_up(pos, range_align(len));
    if (start > end || len > end - start)
      return err(OCKPT_E_OFFSET_OUT_OF_BOUNDS, range_field(&w, p), at,
                 "a data range ends past the data section");
    if (!padded && start > pos) {
      /* a deferred read reads no data byte: only the padding's (at most 63), past the cache */
      uint8_t gap[OCKPT_CONTAINER_ALIGNMENT];
      int exact = (c->info->unchecked & OCKPT_UNCHECKED_BLOCKS) != 0;
      if (exact && ockpt_src_copy(&c->src, pos, gap, start - pos) != 0) return ok(); /* reported */
      for (k = pos; k < start && !padded; k++)
        if ((exact ? gap[k - pos] : rd8(&c->src, k)) != 0) {
          padded = 1;
          pad = k;
        }
    }
    if (offsets != NULL) offsets[p] = start;
    pos = start + len;
  }
  /* P3 */
  if (pos < end)
    return err(OCKPT_E_GAP, F0("data"), pos,
               "bytes at the end of the data section belong to no tensor or slot");
  if (x.present) { /* I1-I5, I6, I7 */
    CHECK(head);
    if (bad_start != UINT64_MAX)
      return err(OCKPT_E_BAD_RANGE_INDEX, F1("range_index.start", (int64_t)bad_start, ""),
                 x.s + OCKPT_V3_RANGE_INDEX_HEAD_SIZE + START_SIZE * bad_start,
                 "a recorded start is not where the placement walk stands");
    if (x.positions != 0) {
      uint64_t i = first_misplaced(&c->src, &w.l, &x), r;
      if (i < w.n) {
        r = order_of(&c->src, &w.l, i);
        return err(OCKPT_E_BAD_RANGE_INDEX, F1("range_index.position", (int64_t)r, ""),
                   x.positions + POSITION_SIZE * r,
                   "a position is not the inverse of the order column");
      }
    }
  }
  /* P4 */
  if (padded)
    return err(OCKPT_E_NONZERO_PADDING, F0("padding"), pad, "alignment padding byte is not 0");
  info->offsets = offsets;
  info->range_index = x.present ? x.s : 0;
  return ok();
}

/* ---- the data_blocks section (SPEC.md 7.4, rules B1-B6) ----------------------------------- */

/* Whether the section table lists a data_blocks section (looked at before T1-T5 pass: a table
 * that fails them is refused there, whatever this says). */
static int lists_data_blocks(const ockpt_src *b, uint64_t S) {
  uint64_t n, i;
  if (S < OCKPT_CONTAINER_HEADER_SIZE) return 0;
  n = rd32(b, OCKPT_CONTAINER_HEADER_AT_NUM_SECTIONS);
  if (n > OCKPT_CONTAINER_MAX_SECTIONS || n > (S - OCKPT_CONTAINER_HEADER_SIZE) / OCKPT_CONTAINER_SECTION_ENTRY_SIZE)
    return 0;
  for (i = 0; i < n; i++)
    if (rd32(b, OCKPT_CONTAINER_HEADER_SIZE + OCKPT_CONTAINER_SECTION_ENTRY_SIZE * i) ==
        OCKPT_V3_DATA_BLOCKS_KIND)
      return 1;
  return 0;
}

/* B6 over a data_blocks section at s that passed B1-B5: each block's CRC-32C in order, the data
 * section's summed on the way (each data byte read once), then the data section's CRC. */
static ockpt_result check_blocks(const ockpt_src *b, const ockpt_container *info, uint64_t s) {
  uint64_t d = info->data.offset, dl = info->data.length, i, e;
  uint64_t blk = (uint64_t)1 << rd32(b, s + OCKPT_V3_DATA_BLOCKS_HEAD_AT_BLOCK_SHIFT);
  uint64_t nb = dl / blk + (dl % blk != 0);
  uint32_t whole = 0;
  for (i = 0; i < nb; i++) {
    uint64_t at = d + i * blk, len = dl - i * blk < blk ? dl - i * blk : blk;
    if (ockpt_src_crc32c_also(b, 0, &whole, at, len) !=
        rd32(b, s + OCKPT_V3_DATA_BLOCKS_HEAD_SIZE + CRC_SIZE * i))
      return err(OCKPT_E_BLOCK_CHECKSUM, F1("data_blocks.crc", (int64_t)i, ""), at,
                 "a data block's CRC-32C differs from the data_blocks section's");
  }
  e = OCKPT_CONTAINER_HEADER_SIZE + OCKPT_CONTAINER_SECTION_ENTRY_SIZE * (uint64_t)info->data.table_index;
  if (whole != rd32(b, e + OCKPT_CONTAINER_SECTION_ENTRY_AT_CRC))
    return err(OCKPT_E_SECTION_CHECKSUM, F1("sections", info->data.table_index, ".crc"),
               e + OCKPT_CONTAINER_SECTION_ENTRY_AT_CRC, "section CRC-32C differs");
  return ok();
}

/* B1-B5 on the data_blocks section, then B6: every block's CRC-32C in order, then the data
 * section's own CRC (T4 f, moved here). Runs after T5, before the tensors section. */
static ockpt_result check_data_blocks(const v3 *c) {
  const ockpt_src *b = &c->src;
  ockpt_container *info = c->info;
  uint64_t i, e = 0, s = 0, L = 0, dl, count, nb, blk;
  uint32_t shift;
  int found = 0;
  for (i = 0; i < info->num_sections && !found; i++) {
    e = OCKPT_CONTAINER_HEADER_SIZE + OCKPT_CONTAINER_SECTION_ENTRY_SIZE * i;
    if (rd32(b, e) == OCKPT_V3_DATA_BLOCKS_KIND) found = 1;
  }
  if (!found) return ok();
  s = rd64(b, e + OCKPT_CONTAINER_SECTION_ENTRY_AT_OFS_BODY);
  L = rd64(b, e + OCKPT_CONTAINER_SECTION_ENTRY_AT_LEN_BODY);
  if (L < OCKPT_V3_DATA_BLOCKS_HEAD_SIZE) /* B1 */
    return err(OCKPT_E_BAD_DATA_BLOCKS, F0("data_blocks"), s,
               "the data_blocks section is shorter than its 16-byte head");
  if (rd32(b, s + OCKPT_V3_DATA_BLOCKS_HEAD_AT_RESERVED) != 0) /* B2 */
    return err(OCKPT_E_RESERVED_NONZERO, F0("data_blocks.reserved"),
               s + OCKPT_V3_DATA_BLOCKS_HEAD_AT_RESERVED,
               "reserved field is not 0");
  shift = rd32(b, s + OCKPT_V3_DATA_BLOCKS_HEAD_AT_BLOCK_SHIFT);
  if (shift < OCKPT_V3_MIN_BLOCK_SHIFT || shift > OCKPT_V3_MAX_BLOCK_SHIFT) /* B3 */
    return err(OCKPT_E_BAD_DATA_BLOCKS, F0("data_blocks.block_shift"), s,
               "block_shift is outside 6..24 (64 B to 16 MiB blocks)");
  if (!info->data.present || info->data.length == 0) /* B4 */
    return err(OCKPT_E_EMPTY_SECTION, F0("data_blocks"), s,
               "a data_blocks section, but no data to cover");
  dl = info->data.length;
  blk = (uint64_t)1 << shift;
  nb = dl / blk + (dl % blk != 0);
  count = rd64(b, s + OCKPT_V3_DATA_BLOCKS_HEAD_AT_NUM_BLOCKS);
  if (count != nb) /* B5 */
    return err(OCKPT_E_BAD_DATA_BLOCKS, F0("data_blocks.num_blocks"),
               s + OCKPT_V3_DATA_BLOCKS_HEAD_AT_NUM_BLOCKS,
               "num_blocks is not the data section's size divided by the block size");
  if (L != OCKPT_V3_DATA_BLOCKS_HEAD_SIZE + CRC_SIZE * nb)
    return err(OCKPT_E_BAD_DATA_BLOCKS, F0("data_blocks.crc"), s + OCKPT_V3_DATA_BLOCKS_HEAD_SIZE,
               "the data_blocks section's length is not 16 bytes plus 4 per block");
  if (b->stream != NULL && b->stream->defer) { /* B6 deferred: ockpt_verify_deferred() */
    info->unchecked |= OCKPT_UNCHECKED_BLOCKS;
    return ok();
  }
  return check_blocks(b, info, s);
}

/* ---- the whole file -------------------------------------------------------------------------- */

uint64_t ockpt_v3_scratch_count(uint64_t S) {
  /* every record or range needs at least its 8-byte size in the file */
  return S / LEN_SIZE + 1u;
}

static uint64_t data_blocks_at(const ockpt_file *f, const ockpt_src *b);

/* The rules after B6: the tensors, optimizer, state and origin sections', then the data's. */
static ockpt_result check_after_blocks(const v3 *c, layout *l) {
  const ockpt_container *info = c->info;
  if (info->tensors.present) CHECK(check_tensors(c, l));
  if (info->optimizer.present) CHECK(ockpt_sec_check_optimizer(c, OCKPT_V3_SLOT_ENTRY_SIZE));
  if (info->state.present) CHECK(ockpt_sec_check_state(c));
  if (info->origin.present) CHECK(ockpt_sec_check_origin(c));
  return check_data(c);
}

ockpt_result ockpt_v3_validate(const ockpt_src *src, uint64_t S, ockpt_file *f,
                               uint64_t *scratch, size_t scratch_count) {
  static const ockpt_file zero_file;
  v3 c;
  layout l;
  ockpt_result r;
  *f = zero_file;
  f->buf = src->buf;
  f->stream = src->stream;
  f->file_size = S;
  c.src = *src;
  c.S = S;
  c.scratch = scratch;
  c.scratch_count = scratch != NULL ? scratch_count : 0;
  c.info = &f->container;
  c.data_crc_later = lists_data_blocks(src, S);
  CHECK(ockpt_container_check_header(&c));
  CHECK(ockpt_container_check_sections(&c));
  CHECK(check_data_blocks(&c));
  r = check_after_blocks(&c, &l);
  if (r.code != OCKPT_OK && (f->container.unchecked & OCKPT_UNCHECKED_BLOCKS)) {
    /* B6 was deferred but comes first: a refused file reports the first failing rule (6.5) */
    ockpt_result b6 = check_blocks(src, &f->container, data_blocks_at(f, src));
    if (b6.code != OCKPT_OK) return b6;
  }
  CHECK(r);
  f->revision = OCKPT_REV_V3;
  f->dialect = OCKPT_DIALECT_NULL;
  f->optimizer = OCKPT_OPT_NONE;
  return ok();
}

/* ---- access ----------------------------------------------------------------------------------- */

static int is_v3(const ockpt_file *f) { return f != NULL && f->revision == OCKPT_REV_V3; }

/* A cursor at record 0 for range lookups only: O(1) (its dims and name are not set). */
static void cursor_reset(const ockpt_file *f, ockpt_v3_cursor *c) {
  unsigned j;
  c->record = 0;
  c->dims = c->name = c->q = c->pos = 0;
  for (j = 0; j <= OCKPT_CONTAINER_MAX_SLOTS; j++) c->segment[j] = 0;
  if (!is_v3(f)) return;
  c->pos = f->container.data.offset;
  /* where the tensors' ranges start; each slot's start is found when first needed */
  c->segment[0] = f->container.data.offset;
  for (j = 1; j <= OCKPT_CONTAINER_MAX_SLOTS; j++) c->segment[j] = UINT64_MAX;
}

void ockpt_v3_cursor_init(const ockpt_file *f, ockpt_v3_cursor *c) {
  walk w;
  ockpt_src src;
  uint64_t count[C_COLUMNS];
  cursor_reset(f, c);
  if (!is_v3(f)) return;
  src = ockpt_src_of(f);
  walk_init(&w, &src, &f->container);
  if (w.n != 0) {
    lay_out_counted(&src, &w.l, count);
    c->dims = w.l.at[C_DIMS]; /* 0 without the column: no record has a shape then */
    c->name = w.l.at[C_NAMES];
  }
}

/* Where segment `seg` (0: the tensors' ranges, 1 + j: slot j's) starts: walks the segments
 * before it that are not known yet, once. */
static uint64_t segment_start(const walk *w, ockpt_v3_cursor *c, uint64_t seg) {
  uint64_t known = seg, q, p, len, at, pos;
  while (c->segment[known] == UINT64_MAX) known--; /* segment[0] is always known */
  pos = c->segment[known];
  for (q = known * w->n; q < seg * w->n; q++) {
    if (range_at(w, q, &p, &len, &at)) pos = round_up(pos, range_align(len)) + len;
    if ((q + 1) % w->n == 0) c->segment[(q + 1) / w->n] = pos;
  }
  return c->segment[seg];
}

/* The offset of range p (range order), from the scratch, or by walking its segment (the
 * tensors' ranges or slot j's: n positions in data order) from where the cursor stands,
 * starting the segment over once when the range lies behind: at most n steps. */
static uint64_t locate(const ockpt_file *f, ockpt_v3_cursor *c, uint64_t p) {
  ockpt_src src = ockpt_src_of(f);
  walk w;
  uint64_t steps, q, len, at, start, seg, qs, qe;
  if (f->container.offsets != NULL) return f->container.offsets[p];
  walk_init(&w, &src, &f->container);
  seg = p < w.n ? 0 : 1 + (p - w.n) / w.n;
  qs = seg * w.n;
  qe = qs + w.n;
  if (f->container.range_index != 0) {
    /* SPEC.md 7.5's lookup: from the start of the target's group, unless the cursor stands
     * fewer than G positions before the target in its pass (a walk in data order) */
    uint64_t ri = f->container.range_index, k = p - qs, i = k, g;
    uint32_t shift = rd32(&src, ri + OCKPT_V3_RANGE_INDEX_HEAD_AT_GROUP_SHIFT);
    uint64_t m = rd64(&src, ri + OCKPT_V3_RANGE_INDEX_HEAD_AT_NUM_GROUPS);
    uint64_t starts = ri + OCKPT_V3_RANGE_INDEX_HEAD_SIZE;
    if (has(&w.l, C_ORDER))
      i = rd32(&src, starts + START_SIZE * (1 + w.K) * m + POSITION_SIZE * k);
    if (c->q < qs || c->q > qs + i || qs + i - c->q >= ((uint64_t)1 << shift)) {
      g = i >> shift;
      c->q = qs + (g << shift);
      c->pos = f->container.data.offset + rd64(&src, starts + START_SIZE * (seg * m + g));
    }
  } else if (c->q < qs || c->q >= qe) {
    c->q = qs;
    c->pos = segment_start(&w, c, seg);
  }
  for (steps = 0; steps < w.n; steps++) {
    uint64_t r;
    if (c->q >= qe) {
      c->q = qs;
      c->pos = segment_start(&w, c, seg);
    }
    q = c->q++;
    if (!range_at(&w, q, &r, &len, &at)) continue;
    start = round_up(c->pos, range_align(len));
    c->pos = start + len;
    if (r == p) return start;
  }
  return 0; /* not reached for a range of a file that was read */
}

int ockpt_v3_next_tensor(const ockpt_file *f, ockpt_v3_cursor *c, ockpt_tensor_info *t) {
  ockpt_src src;
  walk w;
  uint32_t k = c->record, j;
  unsigned r;
  int d;
  if (!is_v3(f) || t == NULL) return -1;
  if (k >= f->container.num_tensors) return 0;
  src = ockpt_src_of(f);
  walk_init(&w, &src, &f->container);
  t->index = index_of(&src, &w.l, k);
  t->flags = 0;
  t->model_index = model_of(&src, &w.l, k);
  if (t->model_index != OCKPT_V3_NO_MODEL_INDEX) t->flags |= OCKPT_V2_HAS_MODEL_INDEX;
  else t->model_index = 0;
  d = dtype_of(&src, &w.l, k);
  t->dtype = d == OCKPT_V3_NO_DTYPE ? 0 : (int8_t)d;
  if (d != OCKPT_V3_NO_DTYPE) t->flags |= OCKPT_V2_HAS_DTYPE;
  r = rank_of(&src, &w.l, k);
  t->rank = r == OCKPT_V3_NO_SHAPE ? 0 : (uint8_t)r;
  if (r != OCKPT_V3_NO_SHAPE) t->flags |= OCKPT_V2_HAS_SHAPE;
  for (j = 0; j < OCKPT_CONTAINER_MAX_RANK; j++) t->dims[j] = j < t->rank ? rd32(&src, c->dims + DIM_SIZE * j) : 0;
  c->dims += DIM_SIZE * t->rank;
  t->name_len = lname_of(&src, &w.l, k);
  t->name_offset = t->name_len != 0 ? c->name : 0;
  t->name = t->name_len != 0 && f->buf != NULL ? f->buf + c->name : NULL;
  if (t->name_len != 0) t->flags |= OCKPT_V2_HAS_NAME;
  c->name += t->name_len;
  t->nbytes = rd64(&src, len_at(&w.l, k));
  t->offset = locate(f, c, k);
  c->record = k + 1;
  return 1;
}

int ockpt_v3_slot_entry(const ockpt_file *f, ockpt_v3_cursor *c, uint32_t j, uint32_t k,
                        uint32_t *index, uint64_t *offset, uint64_t *nbytes) {
  ockpt_src src;
  walk w;
  uint64_t len;
  if (!is_v3(f) || c == NULL || j >= f->container.num_slots || k >= f->container.num_tensors) return -1;
  src = ockpt_src_of(f);
  walk_init(&w, &src, &f->container);
  if (index != NULL) *index = index_of(&src, &w.l, k);
  len = rd64(&src, w.entries + OCKPT_V3_SLOT_ENTRY_SIZE * ((uint64_t)j * w.n + k));
  if (len == OCKPT_CONTAINER_NO_STATE) return 0;
  if (nbytes != NULL) *nbytes = len;
  if (offset != NULL) *offset = locate(f, c, w.n + (uint64_t)j * w.n + k);
  return 1;
}

int ockpt_v3_tensor_at(const ockpt_file *f, uint32_t k, ockpt_tensor_info *t) {
  ockpt_v3_cursor c;
  ockpt_src src;
  walk w;
  uint32_t q;
  if (!is_v3(f) || k >= f->container.num_tensors || t == NULL) return -1;
  ockpt_v3_cursor_init(f, &c);
  src = ockpt_src_of(f);
  walk_init(&w, &src, &f->container);
  for (q = 0; q < k; q++) { /* O(k): the records before k place its dims and name */
    unsigned r = rank_of(&src, &w.l, q);
    if (r != OCKPT_V3_NO_SHAPE) c.dims += DIM_SIZE * r;
    c.name += lname_of(&src, &w.l, q);
  }
  c.record = k;
  return ockpt_v3_next_tensor(f, &c, t);
}

int ockpt_v3_slot_entry_at(const ockpt_file *f, uint32_t j, uint32_t k, uint64_t *offset,
                           uint64_t *nbytes) {
  ockpt_v3_cursor c;
  cursor_reset(f, &c);
  return ockpt_v3_slot_entry(f, &c, j, k, NULL, offset, nbytes);
}

int ockpt_v3_range(const ockpt_file *f, uint32_t pass, uint32_t k, uint64_t *offset,
                   uint64_t *nbytes) {
  ockpt_v3_cursor c;
  ockpt_src src;
  walk w;
  uint64_t len;
  if (!is_v3(f) || k >= f->container.num_tensors || pass > f->container.num_slots) return -1;
  if (pass > 0) return ockpt_v3_slot_entry_at(f, pass - 1, k, offset, nbytes);
  src = ockpt_src_of(f);
  walk_init(&w, &src, &f->container);
  len = rd64(&src, len_at(&w.l, k));
  cursor_reset(f, &c);
  if (nbytes != NULL) *nbytes = len;
  if (offset != NULL) *offset = locate(f, &c, k);
  return 1;
}

/* ---- per-block verified copies (SPEC.md 7.4) ---------------------------------------------- */

ockpt_result ockpt_verify_deferred(ockpt_file *f) {
  ockpt_src b;
  ockpt_result r;
  if (!is_v3(f) || f->container.unchecked == 0) return ok();
  b = ockpt_src_of(f);
  r = check_blocks(&b, &f->container, data_blocks_at(f, &b));
  if (b.stream != NULL && b.stream->failed)
    return err(OCKPT_E_TRUNCATED_FILE, F0("stream"), b.stream->failed_at,
               "the read callback failed: the file is shorter than the size given");
  if (r.code == OCKPT_OK) f->container.unchecked = 0;
  return r;
}

/* The data_blocks section's offset, 0 when the file has none. */
static uint64_t data_blocks_at(const ockpt_file *f, const ockpt_src *b) {
  uint32_t i;
  for (i = 0; i < f->container.num_sections; i++) {
    uint64_t e = OCKPT_CONTAINER_HEADER_SIZE + OCKPT_CONTAINER_SECTION_ENTRY_SIZE * (uint64_t)i;
    if (rd32(b, e) == OCKPT_V3_DATA_BLOCKS_KIND)
      return rd64(b, e + OCKPT_CONTAINER_SECTION_ENTRY_AT_OFS_BODY);
  }
  return 0;
}

uint32_t ockpt_v3_block_size(const ockpt_file *f) {
  ockpt_src b;
  uint64_t s;
  if (!is_v3(f)) return 0;
  b = ockpt_src_of(f);
  s = data_blocks_at(f, &b);
  return s == 0 ? 0 : (uint32_t)1 << rd32(&b, s + OCKPT_V3_DATA_BLOCKS_HEAD_AT_BLOCK_SHIFT);
}

ockpt_result ockpt_v3_copy_verified(const ockpt_file *f, uint64_t offset, void *dst, size_t len,
                                    void *block, size_t block_len) {
  ockpt_src b;
  uint64_t s, d, end, i, size, k;
  uint8_t *out = (uint8_t *)dst;
  const uint8_t *buf = (const uint8_t *)block;
  uint32_t shift;
  if (!is_v3(f) || !f->container.data.present)
    return err(OCKPT_E_OFFSET_OUT_OF_BOUNDS, F0("data"), offset, "no data section");
  b = ockpt_src_of(f);
  s = data_blocks_at(f, &b);
  d = f->container.data.offset;
  end = d + f->container.data.length;
  if (s == 0) return err(OCKPT_E_OFFSET_OUT_OF_BOUNDS, F0("data"), offset, "no data_blocks section");
  shift = rd32(&b, s + OCKPT_V3_DATA_BLOCKS_HEAD_AT_BLOCK_SHIFT);
  size = (uint64_t)1 << shift;
  if (block == NULL || (uint64_t)block_len < size)
    return err(OCKPT_E_OFFSET_OUT_OF_BOUNDS, F0("data"), offset, "the block buffer is too small");
  if (offset < d || offset > end || (uint64_t)len > end - offset)
    return err(OCKPT_E_OFFSET_OUT_OF_BOUNDS, F0("data"), offset, "the range is not in the data section");
  for (i = (offset - d) >> shift; len > 0; i++) {
    uint64_t at = d + (i << shift), n = end - at < size ? end - at : size, from, to;
    uint32_t want = rd32(&b, s + OCKPT_V3_DATA_BLOCKS_HEAD_SIZE + CRC_SIZE * i);
    /* the buffer still holds this block, verified by the last copy: check it again in memory
     * (a buffer the caller changed since fails and is read again), else read it */
    if (b.stream == NULL || b.stream->held != block || b.stream->held_at != at + 1 ||
        ockpt_crc32c(0, block, (size_t)n) != want) {
      if (b.stream != NULL) b.stream->held = NULL;
      if (ockpt_src_copy(&b, at, block, n) != 0)
        return err(OCKPT_E_TRUNCATED_FILE, F0("stream"), at, "a read of the stream failed");
      if (ockpt_crc32c(0, block, (size_t)n) != want)
        return err(OCKPT_E_BLOCK_CHECKSUM, F1("data_blocks.crc", (int64_t)i, ""), at,
                   "a data block's CRC-32C differs from the data_blocks section's");
      if (b.stream != NULL) {
        b.stream->held = block;
        b.stream->held_at = at + 1;
      }
    }
    from = offset > at ? offset : at;
    to = offset + len < at + n ? offset + len : at + n;
    for (k = 0; k < to - from; k++) out[k] = buf[from - at + k]; /* no libc: freestanding */
    out += to - from;
    len -= (size_t)(to - from);
    offset = to;
  }
  return ok();
}
