/* Streaming access for the reader: the caller's read-at-offset callback behind a cache of
 * OCKPT_STREAM_LINES lines of OCKPT_STREAM_LINE bytes, all inside the caller's ockpt_stream.
 *
 * The rules (ockpt.c, ockpt_v2.c) read at most a few places at once (a table entry, two names
 * being compared, a record), so a handful of lines keeps nearly every read a cache hit; bulk
 * passes (CRCs, padding, UTF-8 of a long value) run sequentially through one line at a time.
 * Nothing here allocates, and the state never grows with the file. */
#include "ockpt_internal.h"

void ockpt_stream_init(ockpt_stream *s, ockpt_read_fn read, void *ctx, uint64_t size) {
  unsigned k;
  s->read = read;
  s->ctx = ctx;
  s->size = size;
  s->failed = 0;
  s->failed_at = 0;
  s->defer = 0;
  s->held = NULL;
  s->held_at = 0;
  s->clock = 0;
  s->last = 0;
  for (k = 0; k < OCKPT_STREAM_LINES; k++) {
    s->line_start[k] = 0;
    s->line_len[k] = 0;
    s->line_used[k] = 0;
  }
}

int ockpt_stream_failed(const ockpt_stream *s) { return s != NULL && s->failed; }

static void mark_failed(ockpt_stream *s, uint64_t at) {
  if (!s->failed) {
    s->failed = 1;
    s->failed_at = at;
  }
}

/* Read `len` (<= OCKPT_STREAM_LINE) bytes at `at` into dst; 0 on success. */
static int fetch(ockpt_stream *s, uint64_t at, uint8_t *dst, uint32_t len) {
  if (s->failed) return -1;
  if (at > s->size || len > s->size - at || s->read == NULL ||
      s->read(s->ctx, at, dst, len) != 0) {
    mark_failed(s, at);
    return -1;
  }
  return 0;
}

uint8_t ockpt_stream_u8(ockpt_stream *s, uint64_t k) {
  unsigned i, victim = 0;
  uint64_t start;
  uint32_t len;
  for (i = 0; i < OCKPT_STREAM_LINES; i++)
    if (s->line_len[i] != 0 && k >= s->line_start[i] && k - s->line_start[i] < s->line_len[i]) {
      s->line_used[i] = ++s->clock;
      s->last = i;
      return s->line[i][k - s->line_start[i]];
    }
  if (k >= s->size) {
    mark_failed(s, k);
    return 0;
  }
  for (i = 1; i < OCKPT_STREAM_LINES; i++) /* least recently used (empty lines have 0) */
    if (s->line_used[i] < s->line_used[victim]) victim = i;
  start = k - k % OCKPT_STREAM_LINE;
  len = (uint32_t)(s->size - start < OCKPT_STREAM_LINE ? s->size - start : OCKPT_STREAM_LINE);
  s->line_len[victim] = 0;
  if (fetch(s, start, s->line[victim], len) != 0) return 0;
  s->line_start[victim] = start;
  s->line_len[victim] = len;
  s->line_used[victim] = ++s->clock;
  s->last = victim;
  return s->line[victim][k - start];
}

typedef uint32_t (*crc_fn)(uint32_t crc, const void *data, size_t len);

static uint32_t src_crc(const ockpt_src *src, crc_fn fn, uint32_t crc, uint64_t at,
                        uint64_t len) {
  uint8_t chunk[OCKPT_STREAM_LINE];
  if (src->buf != NULL) {
    /* in pieces, so that a length beyond size_t (a 32-bit target) is still handled */
    while (len > 0) {
      size_t n = len > ((size_t)1 << 30) ? ((size_t)1 << 30) : (size_t)len;
      crc = fn(crc, src->buf + at, n);
      at += n;
      len -= n;
    }
    return crc;
  }
  while (len > 0) {
    uint32_t n = (uint32_t)(len < OCKPT_STREAM_LINE ? len : OCKPT_STREAM_LINE);
    if (fetch(src->stream, at, chunk, n) != 0) return 0;
    crc = fn(crc, chunk, n);
    at += n;
    len -= n;
  }
  return crc;
}

uint32_t ockpt_src_crc32c(const ockpt_src *src, uint32_t crc, uint64_t at, uint64_t len) {
  return src_crc(src, ockpt_crc32c, crc, at, len);
}

uint32_t ockpt_src_crc32c_also(const ockpt_src *src, uint32_t crc, uint32_t *also, uint64_t at,
                               uint64_t len) {
  uint8_t chunk[OCKPT_STREAM_LINE];
  if (src->buf != NULL) { /* in memory: two passes cost no second read of the file */
    *also = src_crc(src, ockpt_crc32c, *also, at, len);
    return src_crc(src, ockpt_crc32c, crc, at, len);
  }
  while (len > 0) {
    uint32_t n = (uint32_t)(len < OCKPT_STREAM_LINE ? len : OCKPT_STREAM_LINE);
    if (fetch(src->stream, at, chunk, n) != 0) return 0;
    crc = ockpt_crc32c(crc, chunk, n);
    *also = ockpt_crc32c(*also, chunk, n);
    at += n;
    len -= n;
  }
  return crc;
}

uint32_t ockpt_src_crc32(const ockpt_src *src, uint32_t crc, uint64_t at, uint64_t len) {
  return src_crc(src, ockpt_crc32, crc, at, len);
}

int ockpt_src_copy(const ockpt_src *src, uint64_t at, void *dst, uint64_t len) {
  uint8_t *out = (uint8_t *)dst;
  uint64_t k;
  if (src->buf != NULL) {
    for (k = 0; k < len; k++) out[k] = src->buf[at + k]; /* no libc: freestanding */
    return 0;
  }
  while (len > 0) { /* straight into dst, past the cache, a line's size at a time */
    uint32_t n = (uint32_t)(len < OCKPT_STREAM_LINE ? len : OCKPT_STREAM_LINE);
    if (fetch(src->stream, at, out, n) != 0) return -1;
    out += n;
    at += n;
    len -= n;
  }
  return 0;
}

/* [offset, offset + len) reaches into the data section of a deferred read, whose blocks are
 * unchecked (ockpt_v3_copy_verified copies from there). */
static int unchecked_data(const ockpt_file *f, uint64_t offset, uint64_t len) {
  const ockpt_sec_span *d = &f->container.data;
  return f->container.unchecked != 0 && len != 0 && offset < d->offset + d->length &&
         offset + len > d->offset;
}

int ockpt_file_copy(const ockpt_file *f, uint64_t offset, void *dst, size_t len) {
  uint8_t *out = (uint8_t *)dst;
  ockpt_src src;
  size_t k;
  if (f == NULL || offset > f->file_size || (uint64_t)len > f->file_size - offset) return -1;
  if (unchecked_data(f, offset, len)) return -1;
  src = ockpt_src_of(f);
  if (src.buf == NULL && src.stream == NULL) return -1;
  for (k = 0; k < len; k++) out[k] = src_u8(&src, offset + k);
  return src.stream != NULL && src.stream->failed ? -1 : 0;
}

int ockpt_file_crc32(const ockpt_file *f, uint64_t offset, uint64_t len, uint32_t *crc) {
  ockpt_src src;
  uint32_t c;
  if (f == NULL || crc == NULL || offset > f->file_size || len > f->file_size - offset) return -1;
  if (unchecked_data(f, offset, len)) return -1;
  src = ockpt_src_of(f);
  if (src.buf == NULL && src.stream == NULL) return -1;
  c = ockpt_src_crc32(&src, *crc, offset, len);
  if (src.stream != NULL && src.stream->failed) return -1;
  *crc = c;
  return 0;
}
