/* Private to the library: where the rules read bytes from, and what the dispatcher (ockpt.c)
 * needs from ockpt_v2.c.
 *
 * Every rule reads the file through an ockpt_src: the caller's buffer (ockpt_read*), or a
 * stream (ockpt_read_stream, the read-at-offset callback behind a small cache, ockpt_stream.c).
 * One implementation of the rules serves both; the buffer path is a direct load. */
#ifndef OCKPT_INTERNAL_H
#define OCKPT_INTERNAL_H

#include "ockpt.h"

typedef struct ockpt_src {
  const uint8_t *buf;   /* non-NULL: read from this buffer */
  ockpt_stream *stream; /* otherwise: through this stream */
} ockpt_src;

/* The byte at offset k (already checked to be inside the file). Through a stream: 0 after a
 * failed read, which marks the stream failed (ockpt_read_stream then reports it). */
uint8_t ockpt_stream_u8(ockpt_stream *s, uint64_t k);

/* CRC-32C of `len` bytes at `at`, continuing from crc. */
uint32_t ockpt_src_crc32c(const ockpt_src *src, uint32_t crc, uint64_t at, uint64_t len);
/* The same CRC-32C, continuing `*also` over the same bytes too: through a stream each byte is
 * read once (the data_blocks rule B6 sums every block's CRC and the data section's together). */
uint32_t ockpt_src_crc32c_also(const ockpt_src *src, uint32_t crc, uint32_t *also, uint64_t at,
                               uint64_t len);

/* Copy `len` bytes at `at` (inside the file) into dst; through a stream straight from the
 * callback, OCKPT_STREAM_LINE bytes at a time, past the cache. 0, or -1 when a read failed. */
int ockpt_src_copy(const ockpt_src *src, uint64_t at, void *dst, uint64_t len);

/* zlib CRC-32 of `len` bytes at `at` (for callers that print entry checksums). */
uint32_t ockpt_src_crc32(const ockpt_src *src, uint32_t crc, uint64_t at, uint64_t len);

static inline uint8_t src_u8(const ockpt_src *s, uint64_t k) {
  if (s->buf != NULL) return s->buf[k];
  { /* the line of the last hit holds most reads (a table walk, a record, a name) */
    const ockpt_stream *st = s->stream;
    uint64_t at = k - st->line_start[st->last]; /* wraps (and fails the test) below the line */
    if (at < st->line_len[st->last]) return st->line[st->last][at];
  }
  return ockpt_stream_u8(s->stream, k);
}

static inline uint16_t src_u16(const ockpt_src *s, uint64_t k) {
  return (uint16_t)((unsigned)src_u8(s, k) | ((unsigned)src_u8(s, k + 1) << 8));
}

static inline uint32_t src_u32(const ockpt_src *s, uint64_t k) {
  return (uint32_t)src_u8(s, k) | ((uint32_t)src_u8(s, k + 1) << 8) |
         ((uint32_t)src_u8(s, k + 2) << 16) | ((uint32_t)src_u8(s, k + 3) << 24);
}

static inline uint64_t src_u64(const ockpt_src *s, uint64_t k) {
  return (uint64_t)src_u32(s, k) | ((uint64_t)src_u32(s, k + 4) << 32);
}

static inline ockpt_src ockpt_src_of(const ockpt_file *f) {
  ockpt_src s;
  s.buf = f->buf;
  s.stream = f->stream;
  return s;
}

/* Schema 2, SPEC.md section 6, after the dispatcher checked magic and version. `f` is filled
 * (and left zeroed by the caller on failure). `scratch` may be NULL. */
ockpt_result ockpt_v2_validate(const ockpt_src *src, uint64_t S, ockpt_file *f,
                               uint64_t *scratch, size_t scratch_count);

/* How many uint64_t of scratch ockpt_v2_validate() can use for a file of S bytes. */
uint64_t ockpt_v2_scratch_count(uint64_t S);

/* ---- shared by schema 2 (ockpt_v2.c) and schema 3 (ockpt_v3.c) ------------------------------ */

/* An error's field, built from up to three names and two indices: a[i]b[j]c. */
typedef struct ockpt_fname {
  const char *a; /* e.g. "tensors" */
  int64_t i;     /* [i] after a, when >= 0 */
  const char *b; /* e.g. ".dims" */
  int64_t j;     /* [j] after b, when >= 0 */
  const char *c; /* e.g. ".len_data" */
} ockpt_fname;

static inline ockpt_fname F0(const char *a) {
  ockpt_fname f;
  f.a = a;
  f.i = -1;
  f.b = "";
  f.j = -1;
  f.c = "";
  return f;
}

static inline ockpt_fname F1(const char *a, int64_t i, const char *b) {
  ockpt_fname f = F0(a);
  f.i = i;
  f.b = b;
  return f;
}

static inline ockpt_fname F2(const char *a, int64_t i, const char *b, int64_t j, const char *c) {
  ockpt_fname f = F1(a, i, b);
  f.j = j;
  f.c = c;
  return f;
}

/* The state of one schema-2 or schema-3 validation. */
typedef struct ockpt_container_ctx {
  ockpt_src src;
  uint64_t S;
  uint64_t *scratch;
  size_t scratch_count;
  ockpt_container *info;
  /* schema 3 with a data_blocks section (SPEC.md 7.4): T4 leaves the data section's CRC to
   * rule B6, after the block CRCs (ockpt_v3.c) */
  int data_crc_later;
} ockpt_container_ctx;

typedef int (*ockpt_less_fn)(const void *ctx, uint64_t a, uint64_t b);

ockpt_result ockpt_container_ok(void);
ockpt_result ockpt_container_err(ockpt_error code, ockpt_fname f, uint64_t offset,
                                 const char *message);
int ockpt_container_utf8_valid(const ockpt_src *b, uint64_t at, uint64_t n);
int ockpt_container_same_bytes(const ockpt_src *b, uint64_t x, uint64_t y, uint64_t n);
ockpt_result ockpt_container_check_padding(const ockpt_src *b, uint64_t from, uint64_t to);
void ockpt_container_heapsort(uint64_t *a, size_t n, ockpt_less_fn less, const void *ctx);
/* Rules H1-H5, T1-T5 (both schemas), O1-O9 (+ O10 when entry_size is 16: schema 2), V1-V9,
 * G1-G3. Each fills its part of c->info. */
ockpt_result ockpt_container_check_header(const ockpt_container_ctx *c);
ockpt_result ockpt_container_check_sections(const ockpt_container_ctx *c);
ockpt_result ockpt_sec_check_optimizer(const ockpt_container_ctx *c, unsigned entry_size);
ockpt_result ockpt_sec_check_state(const ockpt_container_ctx *c);
ockpt_result ockpt_sec_check_origin(const ockpt_container_ctx *c);

/* Schema 3, SPEC.md section 7 (ockpt_v3.c), as ockpt_v2_validate. */
ockpt_result ockpt_v3_validate(const ockpt_src *src, uint64_t S, ockpt_file *f,
                               uint64_t *scratch, size_t scratch_count);
uint64_t ockpt_v3_scratch_count(uint64_t S);
/* Record k / slot j's entry for record k of a schema-3 file (ockpt_sec_tensor and
 * ockpt_sec_slot_entry dispatch here): O(k) and O(R) without the range offsets in scratch. */
int ockpt_v3_tensor_at(const ockpt_file *f, uint32_t k, ockpt_tensor_info *t);
int ockpt_v3_slot_entry_at(const ockpt_file *f, uint32_t j, uint32_t k, uint64_t *offset,
                           uint64_t *nbytes);

#endif /* OCKPT_INTERNAL_H */
