/* ockpt-write: the C writer as a command, for differential tests (tests/ckit/test_c_writer.py).
 *
 *   ockpt-write < INPUT > FILE     exit 0: written; 1: not representable (reason on stderr);
 *                                  2: malformed input; 3: write error
 *
 * INPUT describes one checkpoint, all integers little-endian ("OCKW" format, README.md):
 *   "OCKW" u8 target (ockpt_w_target: 1 schema 1, 2 schema 2, 3 schema 3, 0x81 WOF)
 *   u8 dialect (0 auto, 1 onert, 2 onert-micro)
 *   u32 num_entries u8 footerless
 *   u32 num_tensors, each: u32 index u64 src_offset u64 nbytes [nbytes] u16 has u32 model_index
 *                          i8 dtype u8 rank u32 dims[8] u32 name_len [name_len]
 *   u8 has_optimizer u32 kind u32 num_slots, each: u32 name_len [name_len], then per tensor
 *                          u64 nbytes (2^64-1: absent), when present: u64 src_offset [nbytes]
 *   u32 num_state, each: u32 key_len [key_len] u8 type, then int: i64 | float: 8 bytes (binary64)
 *                          | string, bytes: u64 len [len]
 *   u8 has_origin u32 revision u32 dialect u32 flags u64 num_entries
 *   u32 num_sections, each: u32 kind u8 required u64 len [len]
 *   u32 num_data_order, each: u32 index (schema 3: a loaded schema-3 file's data order)
 *   u32 data_block_size (schema 3: 0 the default 64 KiB blocks, 2^32-1 no data_blocks section)
 *   u32 range_index_group (schema 3: 0 the default, G = 64 past 64 tensors; 2^32-1 none)
 * The library itself allocates nothing; this driver reads the input into heap memory.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ockpt_write.h"

typedef struct input {
  const uint8_t *p;
  size_t left;
  int bad;
} input;

static uint64_t get(input *in, unsigned bytes) {
  uint64_t v = 0;
  unsigned i;
  if (in->bad || in->left < bytes) {
    in->bad = 1;
    return 0;
  }
  for (i = 0; i < bytes; i++) v |= (uint64_t)in->p[i] << (8 * i);
  in->p += bytes;
  in->left -= bytes;
  return v;
}

static const uint8_t *take(input *in, uint64_t n) {
  const uint8_t *p = in->p;
  if (in->bad || n > in->left) {
    in->bad = 1;
    return NULL;
  }
  in->p += n;
  in->left -= (size_t)n;
  return p;
}

static void *array(input *in, uint64_t count, size_t size) {
  void *p;
  if (in->bad || count > in->left) { /* every element takes at least one input byte */
    in->bad = 1;
    return NULL;
  }
  p = calloc((size_t)count + 1, size);
  if (p == NULL) in->bad = 1;
  return p;
}

static int to_stdout(void *ctx, const void *data, size_t len) {
  return fwrite(data, 1, len, (FILE *)ctx) == len ? 0 : -1;
}

int main(void) {
  size_t cap = 1 << 16, len = 0, got;
  uint8_t *buf = malloc(cap);
  input in;
  ockpt_w_checkpoint c;
  ockpt_w_tensor *tensors;
  ockpt_w_slot *slots = NULL;
  ockpt_w_buffer *entries = NULL;
  ockpt_w_state *state;
  ockpt_w_section *sections;
  uint32_t *data_order;
  ockpt_w_result r;
  int target, dialect, malformed = 0;
  uint32_t k, j, q;

  while (buf != NULL && (got = fread(buf + len, 1, cap - len, stdin)) > 0) {
    len += got;
    if (len == cap) buf = realloc(buf, cap *= 2);
  }
  if (buf == NULL) return 2;
  memset(&c, 0, sizeof c);
  in.p = buf;
  in.left = len;
  in.bad = 0;
  if (memcmp(take(&in, 4) ? buf : (const uint8_t *)"????", "OCKW", 4) != 0) in.bad = 1;
  target = (int)get(&in, 1);
  dialect = (int)get(&in, 1);
  c.num_entries = (uint32_t)get(&in, 4);
  c.footerless = (int)get(&in, 1);
  c.num_tensors = (uint32_t)get(&in, 4);
  c.tensors = tensors = array(&in, c.num_tensors, sizeof *tensors);
  for (k = 0; !in.bad && k < c.num_tensors; k++) {
    ockpt_w_tensor *t = &tensors[k];
    t->index = (uint32_t)get(&in, 4);
    t->buf.src_offset = get(&in, 8);
    t->buf.nbytes = get(&in, 8);
    t->buf.data = take(&in, t->buf.nbytes);
    t->has = (uint16_t)get(&in, 2);
    t->model_index = (uint32_t)get(&in, 4);
    t->dtype = (int8_t)(uint8_t)get(&in, 1);
    t->rank = (uint8_t)get(&in, 1);
    for (q = 0; q < 8; q++) t->dims[q] = (uint32_t)get(&in, 4);
    t->name_len = (uint32_t)get(&in, 4);
    t->name = take(&in, t->name_len);
  }
  c.has_optimizer = (int)get(&in, 1);
  c.optimizer_kind = (uint32_t)get(&in, 4);
  c.num_slots = (uint32_t)get(&in, 4);
  c.slots = slots = array(&in, c.num_slots, sizeof *slots);
  if (!in.bad && (uint64_t)c.num_slots * c.num_tensors > in.left) in.bad = 1;
  entries = array(&in, (uint64_t)c.num_slots * c.num_tensors, sizeof *entries);
  for (j = 0; !in.bad && j < c.num_slots; j++) {
    slots[j].name_len = (uint32_t)get(&in, 4);
    slots[j].name = take(&in, slots[j].name_len);
    slots[j].entries = entries + (size_t)j * c.num_tensors;
    for (k = 0; k < c.num_tensors; k++) {
      ockpt_w_buffer *e = &entries[(size_t)j * c.num_tensors + k];
      e->nbytes = get(&in, 8);
      if (e->nbytes == OCKPT_W_ABSENT) continue;
      e->src_offset = get(&in, 8);
      e->data = take(&in, e->nbytes);
    }
  }
  c.num_state = (uint32_t)get(&in, 4);
  c.state = state = array(&in, c.num_state, sizeof *state);
  for (k = 0; !in.bad && k < c.num_state; k++) {
    ockpt_w_state *e = &state[k];
    e->key_len = (uint32_t)get(&in, 4);
    e->key = take(&in, e->key_len);
    e->type = (uint8_t)get(&in, 1);
    if (e->type == OCKPT_CONTAINER_VALUE_INT) {
      e->i = (int64_t)get(&in, 8);
    } else if (e->type == OCKPT_CONTAINER_VALUE_FLOAT) {
      const uint8_t *f = take(&in, 8);
      if (f != NULL) memcpy(&e->f, f, 8); /* the input is little-endian binary64, as the host */
    } else {
      e->len = get(&in, 8);
      e->value = take(&in, e->len);
    }
  }
  c.has_origin = (int)get(&in, 1);
  c.origin_revision = (uint32_t)get(&in, 4);
  c.origin_dialect = (uint32_t)get(&in, 4);
  c.origin_flags = (uint32_t)get(&in, 4);
  c.origin_num_entries = get(&in, 8);
  c.num_sections = (uint32_t)get(&in, 4);
  c.sections = sections = array(&in, c.num_sections, sizeof *sections);
  for (k = 0; !in.bad && k < c.num_sections; k++) {
    sections[k].kind = (uint32_t)get(&in, 4);
    sections[k].required = (int)get(&in, 1);
    sections[k].len = get(&in, 8);
    sections[k].data = take(&in, sections[k].len);
  }
  c.num_data_order = (uint32_t)get(&in, 4);
  c.data_order = data_order = array(&in, c.num_data_order, sizeof *data_order);
  for (k = 0; !in.bad && k < c.num_data_order; k++) data_order[k] = (uint32_t)get(&in, 4);
  c.data_block_size = (uint32_t)get(&in, 4);
  c.range_index_group = (uint32_t)get(&in, 4);
  if (in.bad || in.left != 0) {
    fprintf(stderr, "ockpt-write: malformed input (at byte %lu)\n", (unsigned long)(len - in.left));
    malformed = 1;
  } else {
    r = ockpt_write(&c, (ockpt_w_target)target, (ockpt_w_dialect)dialect, to_stdout, stdout);
    if (r.status == OCKPT_W_OK && fflush(stdout) != 0) r.status = OCKPT_W_IO;
    if (r.status != OCKPT_W_OK) fprintf(stderr, "ockpt-write: %s\n", r.message);
  }
  free(tensors);
  free(slots);
  free(entries);
  free(state);
  free(sections);
  free(data_order);
  free(buf);
  if (malformed) return 2;
  return r.status == OCKPT_W_OK ? 0 : r.status == OCKPT_W_NOT_REPRESENTABLE ? 1 : 3;
}
