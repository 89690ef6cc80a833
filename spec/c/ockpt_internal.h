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

#endif /* OCKPT_INTERNAL_H */
