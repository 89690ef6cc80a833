/* ockpt_write: the reference C writer of the onert training-checkpoint format family.
 *
 * Writes schema 1 (onert and onert-micro dialects, byte for byte as each runtime lays its file
 * out: SPEC.md section 4 and appendix B), the weight-only format (section 5), schema 2 (section 6.10,
 * "Writing") and schema 3 (section 7) from a description of the checkpoint in the caller's memory. The output is the
 * same file, byte for byte, as the Python library's `onert_checkpoint.save` writes for the same
 * content (tests/ckit/test_c_writer.py checks it on every valid vector and on random checkpoints).
 *
 * Guarantees (README.md, "Writer"):
 *   - no dynamic allocation, no recursion, no global mutable state, no libc calls: the file goes
 *     out through the caller's write callback, in file order, each byte once (so it can stream
 *     to flash or a file); the writer never seeks;
 *   - schema 3: the tensors' data order follows their source offsets (ties: `data_order`, then
 *     record order; tensors built in memory last), each slot's ranges follow in that order;
 *     O(size) when that is record order, O(n^2) comparisons otherwise;
 *   - every schema-2 checksum is computed before the header is written, by generating each
 *     section body twice (once into CRC-32C, once into the callback) and reading tensor data
 *     twice; schema 3's data_blocks section (written by default) costs one more read of the
 *     data, to emit each block's CRC-32C where the section precedes the data (README.md);
 *     its range_index section (by default past 64 tensors) walks the placement once more,
 *     without reading data, and its `position` column costs O(n^2) comparisons when the data
 *     order is not record order;
 *   - time: O(size) when the data ranges are in their storage order already (every checkpoint
 *     built in memory: no `src_offset`), else O(R^2) with R the number of data ranges (see
 *     README.md); uniqueness of names, keys and model indices is checked pairwise (O(n^2)).
 */
#ifndef OCKPT_WRITE_H
#define OCKPT_WRITE_H

#include <stddef.h>
#include <stdint.h>

#include "ockpt.h" /* the format's constants (OCKPT_V2_*) and ockpt_crc32c() */

#ifdef __cplusplus
extern "C" {
#endif

/* The callback gets the file's bytes in order; it returns 0 on success, anything else stops the
 * writer (which then returns OCKPT_W_IO). `len` is never 0. */
typedef int (*ockpt_write_fn)(void *ctx, const void *data, size_t len);

#define OCKPT_W_NEW UINT64_MAX    /* src_offset of data built in memory */
#define OCKPT_W_ABSENT UINT64_MAX /* nbytes of a slot entry the tensor does not have */

/* One entry's bytes. `src_offset` is where they were read from (the writer keeps a loaded
 * file's data order, SPEC.md 6.10 / 7), or OCKPT_W_NEW. */
typedef struct ockpt_w_buffer {
  const void *data; /* nbytes bytes; may be NULL when nbytes is 0 */
  uint64_t nbytes;  /* OCKPT_W_ABSENT: no entry (slot entries only) */
  uint64_t src_offset;
} ockpt_w_buffer;

/* One tensor (weight entry). Schema 2 and 3 write the fields `has` names (OCKPT_V2_HAS_* of
 * ockpt.h: 1 dtype, 2 shape, 4 name, 8 model index); schema 1 and WOF cannot hold them and
 * refuse a tensor that has any (SPEC.md 9.2: no silent loss; leave them out to drop them). */
typedef struct ockpt_w_tensor {
  uint32_t index; /* entry index: the tensors are given in strictly ascending index order */
  ockpt_w_buffer buf;
  uint16_t has;
  uint32_t model_index;
  int8_t dtype; /* circle TensorType */
  uint8_t rank; /* 0..8 */
  uint32_t dims[8];
  const uint8_t *name; /* UTF-8, not NUL-terminated */
  uint32_t name_len;
} ockpt_w_tensor;

/* An optimizer slot: its name and one entry per tensor, in the tensors' order
 * (entries[k].nbytes == OCKPT_W_ABSENT: tensor k has no state in this slot). */
typedef struct ockpt_w_slot {
  const uint8_t *name;
  uint32_t name_len;
  const ockpt_w_buffer *entries;
} ockpt_w_slot;

/* A training-state entry. Schema 1 stores only `step` and `epoch` (ints in 0..2^32-1). */
typedef struct ockpt_w_state {
  const uint8_t *key;
  uint32_t key_len;
  uint8_t type; /* OCKPT_CONTAINER_VALUE_INT, _FLOAT, _STRING, _BYTES (0..3) */
  int64_t i;
  double f;
  const void *value; /* string (UTF-8) or bytes */
  uint64_t len;
} ockpt_w_state;

/* A schema-2 section of a kind the specification does not define (kept as read). Given in
 * strictly ascending kind order. */
typedef struct ockpt_w_section {
  uint32_t kind;
  int required;
  const void *data;
  uint64_t len;
} ockpt_w_section;

/* What to write: the version byte of the revision (ockpt_revision's numbers); the weight-only
 * format, version byte 1 too, adds 0x80 to it. */
typedef enum ockpt_w_target {
  OCKPT_W_V1 = 1,     /* schema 1; `dialect` chooses the layout */
  OCKPT_W_V2 = 2,     /* schema 2 */
  OCKPT_W_V3 = 3,     /* schema 3 (SPEC.md 7) */
  OCKPT_W_WOF = 0x81  /* weight-only format (version byte 1) */
} ockpt_w_target;

typedef enum ockpt_w_dialect {
  OCKPT_W_AUTO = 0,        /* onert when its conventions hold the content, else onert-micro */
  OCKPT_W_ONERT = 1,
  OCKPT_W_ONERT_MICRO = 2
} ockpt_w_dialect;

typedef struct ockpt_w_checkpoint {
  const ockpt_w_tensor *tensors;
  uint32_t num_tensors;
  uint32_t num_entries; /* schema 1 / WOF: N, the table length (>= highest index + 1) */
  int footerless;       /* schema 1, onert only: write no footer (ofs_other = 0) */
  int has_optimizer;    /* 0: none (schema 1 writes SGD) */
  uint32_t optimizer_kind; /* OCKPT_V2_OPT_*: 0 sgd, 1 sgd_momentum, 2 adam, or another code */
  const ockpt_w_slot *slots; /* sgd: none; sgd_momentum: "momentum"; adam: "m", "v" */
  uint32_t num_slots;
  const ockpt_w_state *state;
  uint32_t num_state;
  int has_origin; /* schema 2: the origin section (SPEC.md 6.4) */
  uint32_t origin_revision, origin_dialect, origin_flags;
  uint64_t origin_num_entries;
  const ockpt_w_section *sections;
  uint32_t num_sections;
  /* schema 3: the entry indices of a loaded schema-3 file's tensors in its data order (its
   * `order` column), to order 0-byte tensors that share a source offset; NULL/0 otherwise */
  const uint32_t *data_order;
  uint32_t num_data_order;
  /* schema 3: the block size of the optional data_blocks section (SPEC.md 7.4: one CRC-32C
   * per block of the data section): 0 writes the library's default, 65536 bytes, as
   * `Checkpoint.data_block_size = None` does; OCKPT_W_NO_BLOCKS writes no such section (the
   * library's 0); otherwise a power of two from 64 to 2^24. No section without data bytes. */
  uint32_t data_block_size;
  /* schema 3: the group size G of the optional range_index section (SPEC.md 7.5: where the
   * placement walk stands every G ranges, so that a reader without scratch memory finds a
   * range in at most G - 1 steps): 0 writes the library's default, G = 64 when there are more
   * than 64 tensors, as `Checkpoint.range_index_group = None` does; OCKPT_W_NO_INDEX writes no
   * such section (the library's 0); otherwise a power of two from 16 to 65536, written
   * whatever the number of tensors. No section without tensors. */
  uint32_t range_index_group;
} ockpt_w_checkpoint;

#define OCKPT_W_DEFAULT_BLOCK_SIZE 65536u /* the Python library's DEFAULT_BLOCK_SIZE */
#define OCKPT_W_NO_BLOCKS UINT32_MAX      /* data_block_size: no data_blocks section */
#define OCKPT_W_NO_INDEX UINT32_MAX       /* range_index_group: no range_index section */

typedef enum ockpt_w_status {
  OCKPT_W_OK = 0,
  OCKPT_W_NOT_REPRESENTABLE = 1, /* the content breaks a rule of the target (message says) */
  OCKPT_W_IO = 2                 /* the callback failed */
} ockpt_w_status;

typedef struct ockpt_w_result {
  ockpt_w_status status;
  const char *message; /* static English text; never NULL */
  uint64_t file_size;  /* bytes written (on success: the file's size) */
} ockpt_w_result;

/* Write `c` as `target` through `write(ctx, ...)`. Nothing is written when the content is not
 * representable (every check comes before the first byte). */
ockpt_w_result ockpt_write(const ockpt_w_checkpoint *c, ockpt_w_target target,
                           ockpt_w_dialect dialect, ockpt_write_fn write, void *ctx);

#ifdef __cplusplus
}
#endif

#endif /* OCKPT_WRITE_H */
