/* Example: write a training checkpoint from arrays in memory with the reference C writer.
 *
 *   write_checkpoint OUT.ckpt [v2|v3|onert|onert-micro]    (default v2)
 *
 * A two-layer model's weights and Adam state (m, v) live in static float arrays, as they would
 * on a microcontroller; the writer streams the file through a callback (here fwrite; on a
 * device, a flash driver) without allocating. tests/ckit/test_c_writer.py builds this program, runs
 * it and loads the result with the Python library.
 */
#include <stdio.h>
#include <string.h>

#include "../ockpt_write.h"

static float fc1_w[4 * 3] = {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f, 0.7f, 0.8f, 0.9f, 1.0f, 1.1f, 1.2f};
static float fc1_b[4] = {0.01f, 0.02f, 0.03f, 0.04f};
static float fc1_w_m[12], fc1_w_v[12], fc1_b_m[4], fc1_b_v[4]; /* Adam state, zero at start */

static int to_file(void *ctx, const void *data, size_t len) {
  return fwrite(data, 1, len, (FILE *)ctx) == len ? 0 : -1;
}

static ockpt_w_buffer in_memory(const void *data, uint64_t nbytes) {
  ockpt_w_buffer b;
  b.data = data;
  b.nbytes = nbytes;
  b.src_offset = OCKPT_W_NEW; /* built in memory: stored in table order */
  return b;
}

int main(int argc, char **argv) {
  ockpt_w_tensor tensors[2];
  ockpt_w_buffer m[2], v[2];
  ockpt_w_slot slots[2];
  ockpt_w_state state[3];
  ockpt_w_checkpoint c;
  ockpt_w_target target = OCKPT_W_V2;
  ockpt_w_dialect dialect = OCKPT_W_AUTO;
  ockpt_w_result r;
  FILE *out;
  unsigned k;

  if (argc < 2 || argc > 3) {
    fprintf(stderr, "usage: write_checkpoint OUT.ckpt [v2|v3|onert|onert-micro]\n");
    return 2;
  }
  if (argc == 3 && strcmp(argv[2], "v3") == 0) {
    target = OCKPT_W_V3; /* schema 3 (SPEC.md 7): the same content, compact tables */
  } else if (argc == 3 && strcmp(argv[2], "v2") != 0) {
    target = OCKPT_W_V1;
    dialect = strcmp(argv[2], "onert") == 0 ? OCKPT_W_ONERT : OCKPT_W_ONERT_MICRO;
  }
  for (k = 0; k < 12; k++) fc1_w_m[k] = 0.001f * (float)k, fc1_w_v[k] = 0.0001f * (float)k;

  memset(tensors, 0, sizeof tensors);
  tensors[0].index = 0;
  tensors[0].buf = in_memory(fc1_w, sizeof fc1_w);
  tensors[0].has = OCKPT_V2_HAS_DTYPE | OCKPT_V2_HAS_SHAPE | OCKPT_V2_HAS_NAME;
  tensors[0].dtype = 0; /* circle TensorType FLOAT32 */
  tensors[0].rank = 2;
  tensors[0].dims[0] = 4;
  tensors[0].dims[1] = 3;
  tensors[0].name = (const uint8_t *)"fc1/weight";
  tensors[0].name_len = 10;
  tensors[1].index = 1;
  tensors[1].buf = in_memory(fc1_b, sizeof fc1_b);
  tensors[1].has = OCKPT_V2_HAS_DTYPE | OCKPT_V2_HAS_SHAPE | OCKPT_V2_HAS_NAME;
  tensors[1].dtype = 0;
  tensors[1].rank = 1;
  tensors[1].dims[0] = 4;
  tensors[1].name = (const uint8_t *)"fc1/bias";
  tensors[1].name_len = 8;

  m[0] = in_memory(fc1_w_m, sizeof fc1_w_m);
  m[1] = in_memory(fc1_b_m, sizeof fc1_b_m);
  v[0] = in_memory(fc1_w_v, sizeof fc1_w_v);
  v[1] = in_memory(fc1_b_v, sizeof fc1_b_v);
  slots[0].name = (const uint8_t *)"m";
  slots[0].name_len = 1;
  slots[0].entries = m;
  slots[1].name = (const uint8_t *)"v";
  slots[1].name_len = 1;
  slots[1].entries = v;

  memset(state, 0, sizeof state);
  state[0].key = (const uint8_t *)"step";
  state[0].key_len = 4;
  state[0].type = OCKPT_CONTAINER_VALUE_INT;
  state[0].i = 120;
  state[1].key = (const uint8_t *)"epoch";
  state[1].key_len = 5;
  state[1].type = OCKPT_CONTAINER_VALUE_INT;
  state[1].i = 3;
  state[2].key = (const uint8_t *)"learning_rate"; /* schema 2 only */
  state[2].key_len = 13;
  state[2].type = OCKPT_CONTAINER_VALUE_FLOAT;
  state[2].f = 0.001;

  memset(&c, 0, sizeof c);
  c.tensors = tensors;
  c.num_tensors = 2;
  c.num_entries = 2;
  c.has_optimizer = 1;
  c.optimizer_kind = OCKPT_CONTAINER_OPT_ADAM;
  c.slots = slots;
  c.num_slots = 2;
  c.state = state;
  c.num_state = target != OCKPT_W_V1 ? 3 : 2; /* schema 1 keeps only step and epoch */
  if (target == OCKPT_W_V1) /* nor names, dtypes or shapes: the writer refuses to drop them */
    tensors[0].has = tensors[1].has = 0;

  out = fopen(argv[1], "wb");
  if (out == NULL) {
    perror(argv[1]);
    return 2;
  }
  r = ockpt_write(&c, target, dialect, to_file, out);
  if (fclose(out) != 0 && r.status == OCKPT_W_OK) r.status = OCKPT_W_IO;
  if (r.status != OCKPT_W_OK) {
    fprintf(stderr, "write_checkpoint: %s\n", r.message);
    remove(argv[1]);
    return 1;
  }
  printf("%s: %lu bytes\n", argv[1], (unsigned long)r.file_size);
  return 0;
}
