/* ockpt: the reference C reader of the onert training-checkpoint format family.
 *
 * Reads schema-1 checkpoints (onert and onert-micro dialects) and the weight-only format (WOF)
 * from a caller's buffer, exactly as spec/SPEC.md says: the same rules, in the same order, with
 * the same error code, field and byte offset.
 *
 * Guarantees (see README.md):
 *   - no dynamic allocation, no recursion, no I/O; the library needs only <stddef.h>/<stdint.h>;
 *   - every read is bounds-checked; offset arithmetic is done in uint64_t after each operand has
 *     been checked against the file size, so it cannot overflow;
 *   - the caller's buffer is never written and must outlive the ockpt_file that points into it;
 *   - time: O(N) for blocks whose present offsets do not decrease in table order (every onert
 *     file), O(N^2) in the worst case (onert-micro files store data out of table order) unless
 *     the caller lends scratch memory to ockpt_read_scratch(), which makes it O(N log N).
 */
#ifndef OCKPT_H
#define OCKPT_H

#include <stddef.h>
#include <stdint.h>

#include "ockpt_errors.h"

#ifdef __cplusplus
extern "C" {
#endif

/* SPEC.md, "Reading a file" and the header tables. */
#define OCKPT_MAGIC 429u             /* u16 at offset 0, bytes ad 01 */
#define OCKPT_VERSION_1 1u           /* schema-1 checkpoint, and WOF */
#define OCKPT_VERSION_2 2u           /* schema 2: not implemented yet (see ockpt.c) */
#define OCKPT_V1_HEADER_SIZE 20u     /* magic, version, reserved, ofs_opt1/2, ofs_other, N */
#define OCKPT_WOF_HEADER_SIZE 8u     /* magic, version, reserved, N */
#define OCKPT_FOOTER_SIZE 8u         /* u32 step, u32 epoch */
#define OCKPT_MAX_BLOCKS 3u          /* weights, m, v */
#define OCKPT_FIELD_MAX 32u          /* "weights[4294967295]" and the like fit */

/* Which member of the family a buffer holds. */
typedef enum ockpt_revision {
  OCKPT_REV_NONE = 0, /* not read (error) */
  OCKPT_REV_V1 = 1,   /* schema-1 checkpoint */
  OCKPT_REV_WOF = 2,  /* weight-only format */
  OCKPT_REV_V2 = 3    /* reserved for schema 2 */
} ockpt_revision;

/* Schema-1 dialect (SPEC.md rule 11). NULL: WOF, or a checkpoint that fits both runtimes. */
typedef enum ockpt_dialect {
  OCKPT_DIALECT_NULL = 0,
  OCKPT_DIALECT_ONERT = 1,
  OCKPT_DIALECT_ONERT_MICRO = 2
} ockpt_dialect;

typedef enum ockpt_optimizer {
  OCKPT_OPT_NONE = 0, /* WOF: no optimizer state */
  OCKPT_OPT_SGD = 1,  /* schema 1 with ofs_opt2 == 0: no slot blocks */
  OCKPT_OPT_ADAM = 2  /* schema 1 with ofs_opt2 != 0: m and v blocks */
} ockpt_optimizer;

/* Block numbers for ockpt_entry(). A WOF file has one block, OCKPT_BLOCK_WEIGHTS ("tensors"). */
typedef enum ockpt_block_id {
  OCKPT_BLOCK_WEIGHTS = 0,
  OCKPT_BLOCK_M = 1,
  OCKPT_BLOCK_V = 2
} ockpt_block_id;

/* The outcome of a read. On failure: the code, the field in the spec's own names ("num_entries",
 * "weights[3]", "m", "header") and the byte offset the spec assigns to the rule that failed. */
typedef struct ockpt_result {
  ockpt_error code;
  char field[OCKPT_FIELD_MAX]; /* NUL-terminated; "" on success */
  uint64_t offset;             /* 0 on success */
  const char *message;         /* static English text naming the rule; never NULL */
} ockpt_result;

/* One block: an offset table of N u32 at `table`, then data in [data_start, end]. */
typedef struct ockpt_block {
  uint64_t table;      /* byte offset of the offset table */
  uint64_t data_start; /* table + 4N */
  uint64_t end;        /* the next block's start, or the end of the blocks */
  int monotonic;       /* present offsets do not decrease in table order (O(1) size lookups) */
  const uint64_t *sizes; /* per-index sizes in the caller's scratch memory, or NULL */
} ockpt_block;

/* A parsed file: a view of the caller's buffer, nothing allocated. Valid only after a read
 * returned OCKPT_OK, and only while the buffer (and any scratch memory) is alive. */
typedef struct ockpt_file {
  const uint8_t *buf;
  uint64_t file_size;
  ockpt_revision revision;
  ockpt_dialect dialect;      /* schema 1 only */
  ockpt_optimizer optimizer;  /* schema 1 only */
  uint32_t num_entries;       /* N: entries in every offset table */
  uint32_t ofs_opt1;          /* header fields as stored (schema 1; 0 for WOF) */
  uint32_t ofs_opt2;
  uint32_t ofs_other;
  int has_footer;             /* schema 1 with ofs_other != 0 */
  uint32_t step;              /* footer, when has_footer */
  uint32_t epoch;
  unsigned num_blocks;        /* 1 (WOF, SGD) or 3 (Adam) */
  ockpt_block blocks[OCKPT_MAX_BLOCKS];
} ockpt_file;

/* Revision detection as SPEC.md "Reading a file" says: magic, version byte, then for version 1
 * schema-1 checkpoint first, WOF second, and the WOF-shaped rule to choose the error reported.
 * `out` may be NULL (validate only); on failure *out is zeroed (revision OCKPT_REV_NONE).
 * A NULL `buf` reads as an empty file. */
ockpt_result ockpt_read(const void *buf, size_t len, ockpt_file *out);

/* Validate as one revision only (no detection beyond magic and version byte). */
ockpt_result ockpt_read_v1(const void *buf, size_t len, ockpt_file *out);
ockpt_result ockpt_read_wof(const void *buf, size_t len, ockpt_file *out);

/* As ockpt_read(), with caller-lent scratch memory that makes size computation O(N log N)
 * instead of O(N^2) for blocks stored out of table order, and entry lookups O(1) afterwards.
 * `scratch_count` uint64_t elements; ockpt_scratch_count() tells how many are needed (at most
 * 8 bytes per byte of file: N <= S/4 and at most 4N elements). Too little scratch is not an
 * error: the reader then uses the allocation-free O(N^2) path. The scratch must stay alive and
 * unmodified as long as `out` is used. */
ockpt_result ockpt_read_scratch(const void *buf, size_t len, ockpt_file *out,
                                uint64_t *scratch, size_t scratch_count);

/* Number of uint64_t scratch elements ockpt_read_scratch() can use for this buffer (0 when the
 * header is too short to tell). */
size_t ockpt_scratch_count(const void *buf, size_t len);

/* Entry i of a block, table order. Returns 1 when present (offset and nbytes written), 0 when
 * absent (table value 0), -1 for a block or index out of range. The size follows SPEC.md rule
 * 9: the distance to the next present entry in (offset, index) order, or to the block's end. */
int ockpt_entry(const ockpt_file *f, unsigned block, uint32_t i, uint64_t *offset,
                uint64_t *nbytes);

/* The byte offset of entry i's u32 in the offset table of a block (the offset errors report). */
uint64_t ockpt_table_position(const ockpt_file *f, unsigned block, uint32_t i);

/* zlib-compatible CRC-32 (reflected polynomial 0xEDB88320): crc = ockpt_crc32(0, p, n) gives
 * zlib's crc32(0, p, n); pass the previous value to continue over more bytes. */
uint32_t ockpt_crc32(uint32_t crc, const void *data, size_t len);

/* The spec's name of a block: "weights", "m", "v", or "tensors" for WOF. */
const char *ockpt_block_name(const ockpt_file *f, unsigned block);

#ifdef __cplusplus
}
#endif

#endif /* OCKPT_H */
