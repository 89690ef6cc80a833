/* ockpt: the reference C reader of the onert training-checkpoint format family. Reads schema-1
 * checkpoints (onert and onert-micro dialects), the weight-only format (WOF), schema 2 and schema 3
 * (SPEC.md 7) from a caller's buffer, or through a read-at-offset callback with a fixed-size
 * state (ockpt_read_stream), exactly as spec/SPEC.md says: the same rules, in the same order, with
 * the same error code, field and byte offset. Guarantees (see README.md): - no dynamic allocation,
 * no recursion, no I/O; the library needs only <stddef.h>/<stdint.h>; - every read is
 * bounds-checked; offset arithmetic is done in uint64_t after each operand has been checked against
 * the file size, so it cannot overflow; - the caller's buffer is never written and must outlive the
 * ockpt_file that points into it; - time: O(N) for blocks whose present offsets do not decrease in
 * table order (every onert file), O(N^2) in the worst case (onert-micro files store data out of
 * table order) unless the caller lends scratch memory to ockpt_read_scratch(), which makes it O(N
 * log N); - schema 2: O(size) except the uniqueness of model indices and the data-range tiling
 * walk, O(n^2) without scratch and O(n log n) with it, and the uniqueness of names and keys,
 * pairwise (O(n^2) comparisons) in both cases (README.md, "Guarantees"); - schema 3: O(size) except
 * the uniqueness of model indices and names and the check of the `order` permutation, O(n^2)
 * without scratch and O(n log n) with it. */
#ifndef OCKPT_H
#define OCKPT_H

#include <stddef.h>
#include <stdint.h>

#include "ockpt_errors.h"
#include "ockpt_layout.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The C kit's version (reader and writer): the string, and as a number 0xMMmmpp (major, minor,
 * patch), the version of the onert-checkpoint release it belongs to. */
#define OCKPT_VERSION "0.1.0"
#define OCKPT_VERNUM 0x000100

/* SPEC.md, "Reading a file" and the header tables. */
#define OCKPT_MAGIC 429u             /* u16 at offset 0, bytes ad 01 */
#define OCKPT_FOOTER_SIZE OCKPT_V1_FOOTER_SIZE /* u32 step, u32 epoch */
#define OCKPT_MAX_BLOCKS 3u          /* weights, m, v */
#define OCKPT_FIELD_MAX 48u /* "optimizer.slots[15][4294967295].len_data" and the like fit */

/* Schemas 1, 2 and 3: every record's size and field offsets, the limits and the codes, as
 * ockpt_layout.h generates them from the .ksy files (OCKPT_CONTAINER_HEADER_SIZE,
 * OCKPT_CONTAINER_KIND_TENSORS, OCKPT_CONTAINER_MAX_TENSORS, OCKPT_V3_COL_NAME, ...). A schema-3
 * slot entry is one element of the optimizer section's `entries` array: */
#define OCKPT_V3_SLOT_ENTRY_SIZE OCKPT_V3_OPTIMIZER_SECTION_ENTRIES_ELEM_SIZE

/* Which revision a buffer holds: its version byte (offset 2). Version 1 is shared by the
 * schema-1 checkpoint and the weight-only format; ockpt_file.format tells them apart. */
typedef enum ockpt_revision {
  OCKPT_REV_NONE = 0, /* not read (error) */
  OCKPT_REV_V1 = 1,   /* schema-1 checkpoint or WOF (ockpt_read_v1, ockpt_read_wof) */
  OCKPT_REV_V2 = 2,   /* schema 2 (ockpt_v2.c) */
  OCKPT_REV_V3 = 3    /* schema 3 (ockpt_v3.c) */
} ockpt_revision;

/* Of a version-1 file: a checkpoint or the weight-only format (SPEC.md 3 tells them apart by
 * structure). OCKPT_FORMAT_CHECKPOINT for every other revision. */
typedef enum ockpt_format {
  OCKPT_FORMAT_CHECKPOINT = 0,
  OCKPT_FORMAT_WOF = 1
} ockpt_format;

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

/* OCKPT_DEFERRED (ockpt_errors.h, positive: not an error and not OCKPT_OK) is what
 * ockpt_read_stream_deferred() returns for a file that passed every rule but the data checks it
 * deferred (schema 3 with a data_blocks section: rule B6, every block's CRC-32C and the data
 * section's). The file is readable (ockpt_entry(), the ockpt_sec_* and ockpt_v3_* functions,
 * ockpt_v3_copy_verified()) but not known valid: ockpt_verify_deferred() runs the rest and
 * returns OCKPT_OK or the error. */
/* f.container.unchecked: rule B6 (the data blocks' and the data section's CRC-32C) was not run */
#define OCKPT_UNCHECKED_BLOCKS 1u

/* One block: an offset table of N u32 at `table`, then data in [data_start, end]. */
typedef struct ockpt_block {
  uint64_t table;      /* byte offset of the offset table */
  uint64_t data_start; /* table + 4N */
  uint64_t end;        /* the next block's start, or the end of the blocks */
  int monotonic;       /* present offsets do not decrease in table order (O(1) size lookups) */
  const uint64_t *sizes; /* per-index sizes in the caller's scratch memory, or NULL */
} ockpt_block;

/* Schemas 2 and 3: where a section of a defined kind is (present == 0: the file has none). */
typedef struct ockpt_sec_span {
  int present;
  uint32_t table_index; /* position in the section table */
  uint64_t offset;      /* ofs_body */
  uint64_t length;      /* len_body */
} ockpt_sec_span;

/* Schemas 2 and 3 (the section-table container): what the reader found; records are read on
 * demand with the ockpt_sec_* functions. */
typedef struct ockpt_container {
  uint32_t num_sections;
  /* schema 3 only: the rules a deferred read left for ockpt_verify_deferred() (OCKPT_UNCHECKED_*;
   * 0 after every other successful read) */
  uint32_t unchecked;
  ockpt_sec_span tensors, optimizer, state, data, origin;
  uint32_t num_tensors;    /* tensor records (0 without a tensors section) */
  uint32_t optimizer_kind; /* when optimizer.present */
  uint32_t num_slots;      /* K */
  uint32_t num_state;      /* state entries */
  uint32_t origin_revision, origin_dialect, origin_flags; /* when origin.present */
  uint32_t columns; /* schema 3 only: the tensors section's `columns` (OCKPT_V3_COL_*) */
  uint64_t origin_num_entries;
  /* schema 3 only: the computed offset of every range in range order (tensor record k at [k], slot
   * j's entry for record k at [n + j*n + k]; NO_STATE entries hold OCKPT_CONTAINER_NO_STATE) in the
   * caller's scratch, or NULL when the read had not enough scratch for them */
  const uint64_t *offsets;
  /* schema 3 only: where the range_index section's body starts (SPEC.md 7.5), once rules I1-I7
   * passed; 0 without one. Lookups without offsets in scratch go through it: O(G) each. */
  uint64_t range_index;
} ockpt_container;

/* ---- streaming: a file read through the caller's read-at-offset callback -------------------
 * The callback copies `len` bytes at `offset` of the file into `dst` and returns 0, anything
 * else on failure. The reader asks only for bytes inside the size given to ockpt_stream_init(),
 * never more than OCKPT_STREAM_LINE bytes at a time (CRCs read in chunks of that size too).
 * All the reader's state is this struct (a small cache of OCKPT_STREAM_LINES lines) plus an
 * ockpt_file: sizeof(ockpt_stream) bytes, fixed, whatever the file's size (README.md). */
typedef int (*ockpt_read_fn)(void *ctx, uint64_t offset, void *dst, size_t len);

/* The cache: OCKPT_STREAM_LINES lines of OCKPT_STREAM_LINE bytes (define both before including
 * this header, for every file of the library, to trade memory for fewer callback reads). */
#ifndef OCKPT_STREAM_LINES
#define OCKPT_STREAM_LINES 8u
#endif
#ifndef OCKPT_STREAM_LINE
#define OCKPT_STREAM_LINE 64u
#endif

typedef struct ockpt_stream {
  ockpt_read_fn read;
  void *ctx;
  uint64_t size;      /* the file's size in bytes */
  int failed;         /* a read failed (or was asked outside the file): results are void */
  int defer;          /* the read in progress defers rule B6 (ockpt_read_stream_deferred) */
  uint64_t failed_at; /* the offset of the first failed read */
  unsigned clock;     /* least-recently-used replacement */
  unsigned last;      /* the line of the last cache hit, tried first */
  uint64_t line_start[OCKPT_STREAM_LINES];
  uint32_t line_len[OCKPT_STREAM_LINES]; /* 0: empty line */
  unsigned line_used[OCKPT_STREAM_LINES];
  const void *held;   /* ockpt_v3_copy_verified(): the caller's block buffer, and where the */
  uint64_t held_at;   /* verified block it holds starts, plus 1 (0: none) */
  uint8_t line[OCKPT_STREAM_LINES][OCKPT_STREAM_LINE];
} ockpt_stream;

/* A parsed file: a view of the caller's buffer, nothing allocated. Valid only after a read
 * returned OCKPT_OK, and only while the buffer (and any scratch memory) is alive. */
typedef struct ockpt_file {
  const uint8_t *buf;         /* the caller's buffer; NULL when read through a stream */
  ockpt_stream *stream;       /* the stream it was read through (ockpt_read_stream), else NULL */
  uint64_t file_size;
  ockpt_revision revision;    /* the version byte */
  ockpt_format format;        /* version 1: checkpoint or WOF */
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
  ockpt_container container;  /* schemas 2 and 3 (revision OCKPT_REV_V2, OCKPT_REV_V3) */
} ockpt_file;

/* One tensor record (schema 2's record, schema 3's columns), as ockpt_sec_tensor() returns it.
 * Fields whose flag is clear are 0 (name: NULL). `name` points into the buffer: UTF-8, not
 * NUL-terminated. */
typedef struct ockpt_tensor_info {
  uint32_t index;
  uint32_t model_index;
  uint16_t flags; /* OCKPT_V2_HAS_* */
  int8_t dtype;   /* circle TensorType */
  uint8_t rank;
  uint32_t dims[OCKPT_CONTAINER_MAX_RANK];
  const uint8_t *name; /* NULL too for a file read through a stream: read it at name_offset */
  uint32_t name_len;
  uint64_t name_offset; /* ofs_name (0 without a name) */
  uint64_t offset; /* ofs_data */
  uint64_t nbytes; /* len_data */
} ockpt_tensor_info;

/* One training-state entry (schemas 2 and 3). int: `i`; float: `f`; string and bytes:
 * `value`/`len`. `key` and `value` point into the buffer (UTF-8 for keys and strings, not
 * NUL-terminated). */
typedef struct ockpt_state_info {
  const uint8_t *key; /* NULL (and value NULL) for a file read through a stream: use the offsets */
  uint32_t key_len;
  uint64_t key_offset;
  uint64_t value_offset; /* string and bytes */
  uint8_t type; /* OCKPT_V2_VALUE_* */
  int64_t i;
  double f;
  const uint8_t *value;
  uint64_t len;
} ockpt_state_info;

/* Revision detection as SPEC.md "Reading a file" says: magic, version byte, then for version 1
 * schema-1 checkpoint first, WOF second, and the WOF-shaped rule to choose the error reported.
 * `out` may be NULL (validate only); on failure *out is zeroed (revision OCKPT_REV_NONE).
 * A NULL `buf` reads as an empty file. */
ockpt_result ockpt_read(const void *buf, size_t len, ockpt_file *out);

/* Validate as one revision only (no detection beyond magic and version byte). */
ockpt_result ockpt_read_v1(const void *buf, size_t len, ockpt_file *out);
ockpt_result ockpt_read_wof(const void *buf, size_t len, ockpt_file *out);
ockpt_result ockpt_read_v2(const void *buf, size_t len, ockpt_file *out);
ockpt_result ockpt_read_v3(const void *buf, size_t len, ockpt_file *out);

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

/* Streaming: the same reader (the same rules, results, errors) over a read-at-offset callback
 * instead of a buffer. `s` must stay alive (and untouched) while `out` is used: ockpt_entry()
 * and the ockpt_sec_* functions read the tables through it. Names, keys and values are not
 * returned as pointers (NULL); their offsets are, to be read through the callback. A failed
 * read makes the result `truncated_file` with field "stream" at the offset of that read (the
 * file is shorter than the size given); after a successful read, ockpt_stream_failed() tells
 * whether a later access hit a failed read (its values are then 0). `scratch` as for
 * ockpt_read_scratch() (may be NULL); ockpt_stream_scratch_count() tells how many. */
void ockpt_stream_init(ockpt_stream *s, ockpt_read_fn read, void *ctx, uint64_t size);
ockpt_result ockpt_read_stream(ockpt_stream *s, ockpt_file *out, uint64_t *scratch,
                               size_t scratch_count);
size_t ockpt_stream_scratch_count(ockpt_stream *s);
int ockpt_stream_failed(const ockpt_stream *s);

/* The one-pass load: as ockpt_read_stream(), every rule in the spec's order, except that for a
 * schema-3 file with a data_blocks section rule B6 (every block's CRC-32C, then the data section's)
 * is deferred (SPEC.md 6.5, 7.4), so that no data byte is read; the padding between ranges
 * (P4) is still checked, reading only those bytes. Such a file gives OCKPT_DEFERRED, never
 * OCKPT_OK, with f.container.unchecked = OCKPT_UNCHECKED_BLOCKS; each range copied with
 * ockpt_v3_copy_verified() is then read once and verified block by block before a byte of it
 * is copied, and ockpt_file_copy() refuses the data section. Every other file is read completely
 * (as ockpt_read_stream: OCKPT_OK or the error): without a data_blocks section nothing could
 * verify the data later. A refused file reports the first failing rule in the spec's order,
 * as ockpt_read_stream() does: when a rule after B6 fails, B6 runs before it is reported. */
ockpt_result ockpt_read_stream_deferred(ockpt_stream *s, ockpt_file *out, uint64_t *scratch,
                                        size_t scratch_count);

/* The validator call after a deferred read: the whole of B6 (every block in order, then the data
 * section's CRC), reading the data once more. OCKPT_OK (and f.container.unchecked cleared: the file
 * is valid) or B6's error. O(1) and OCKPT_OK for a file that deferred nothing. */
ockpt_result ockpt_verify_deferred(ockpt_file *f);

/* Bytes of a file read by any reader (buffer or stream), for names, keys, values and data:
 * ockpt_file_copy() copies `len` bytes at `offset` into dst; ockpt_file_crc32() continues *crc
 * (zlib's CRC-32: start from 0) over them. Both return 0 on success, -1 when the range leaves the
 * file or a read failed (*crc is then unchanged). Through a stream they read in
 * OCKPT_STREAM_LINE-byte pieces. After a deferred read (f.container.unchecked) both refuse (-1)
 * a range that reaches into the data section: its blocks are unchecked, and neither its bytes
 * nor a checksum of them leave the library (ockpt_v3_copy_verified() copies from there). */
int ockpt_file_copy(const ockpt_file *f, uint64_t offset, void *dst, size_t len);
int ockpt_file_crc32(const ockpt_file *f, uint64_t offset, uint64_t len, uint32_t *crc);

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

/* CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), the checksum of schema 2:
 * ockpt_crc32c(0, "123456789", 9) == 0xE3069283; pass the previous value to continue. */
uint32_t ockpt_crc32c(uint32_t crc, const void *data, size_t len);

/* ---- the sections of schemas 2 and 3, after a successful read (OCKPT_REV_V2, OCKPT_REV_V3) ---
 * Each returns 1 on success and -1 for an index out of range (or a file of neither revision);
 * ockpt_sec_slot_entry() returns 0 for an entry marked NO_STATE. O(1) for schema 2 (schema 3:
 * below). */

/* Tensor record k, 0 <= k < f->container.num_tensors, in record (= ascending index) order. */
int ockpt_sec_tensor(const ockpt_file *f, uint32_t k, ockpt_tensor_info *t);

/* Name of optimizer slot j, 0 <= j < f->container.num_slots (UTF-8, not NUL-terminated; NULL for a
 * file read through a stream). ockpt_sec_slot_at() gives where the name is instead. */
int ockpt_sec_slot(const ockpt_file *f, uint32_t j, const uint8_t **name, uint32_t *name_len);
int ockpt_sec_slot_at(const ockpt_file *f, uint32_t j, uint64_t *name_offset, uint32_t *name_len);

/* Slot j's entry for the tensor of record k: 1 with its data range, 0 when NO_STATE. */
int ockpt_sec_slot_entry(const ockpt_file *f, uint32_t j, uint32_t k, uint64_t *offset,
                         uint64_t *nbytes);

/* Training-state entry k, 0 <= k < f->container.num_state, in file order. */
int ockpt_sec_state(const ockpt_file *f, uint32_t k, ockpt_state_info *e);

/* Section-table entry i, 0 <= i < f->container.num_sections (also the kinds the reader skipped). */
int ockpt_container_section(const ockpt_file *f, uint32_t i, uint32_t *kind, uint32_t *flags,
                            uint64_t *offset, uint64_t *length);

/* The library's name of a circle TensorType code ("float32", "int4", ...), NULL if unknown;
 * its element size in bytes, 0 when it has no whole-byte size (or is unknown). */
const char *ockpt_dtype_name(int dtype);
unsigned ockpt_dtype_size(int dtype);

/* ---- schema 3 (revision OCKPT_REV_V3) ---------------------------------------------------------
 * Every ockpt_sec_* function above reads a schema-3 file too (f->container holds its counts and
 * sections; a record's flags say which of its columns hold a value). Schema 3 stores neither
 * where a name or a shape starts nor where a data range starts (SPEC.md 7.3: ranges are placed
 * by rule), so ockpt_sec_tensor() costs O(k) and ockpt_sec_slot_entry() O(R) for R ranges, O(1)
 * for the data offsets when the read had scratch for them (f->container.offsets). A cursor makes
 * reading every record in order O(1) per record, and the ranges too when they are stored in
 * record order (no ORDER column) or their offsets are in scratch. */
typedef struct ockpt_v3_cursor {
  uint32_t record; /* the record ockpt_v3_next_tensor() returns next */
  uint64_t dims;   /* where its dims start */
  uint64_t name;   /* where its name starts */
  uint64_t q;      /* the walk over the data: position in data order of the next range */
  uint64_t pos;    /* where the previous range ended */
  /* where the tensors' and each slot's ranges start */
  uint64_t segment[OCKPT_CONTAINER_MAX_SLOTS + 1];
} ockpt_v3_cursor;

/* Start at record 0 (O(n): the dims and names columns). Without the offsets in scratch a lookup
 * walks at most the n ranges of its tensor or slot in data order, from where the cursor stands
 * or from the start of those ranges (found once per cursor, by a walk over the ranges before
 * them): O(1) amortised in data order, O(n) otherwise; with a range_index section (SPEC.md
 * 7.5) from where the cursor stands when it is fewer than G positions before the range, else
 * from the start of the range's group: at most G - 1 ranges. */
void ockpt_v3_cursor_init(const ockpt_file *f, ockpt_v3_cursor *c);

/* The cursor's record (then the next one): 1, or 0 after the last record, -1 for a file that is
 * not schema 3. */
int ockpt_v3_next_tensor(const ockpt_file *f, ockpt_v3_cursor *c, ockpt_tensor_info *t);

/* Slot j's entry for record k, as ockpt_sec_slot_entry() (1 with its range, 0 for NO_STATE), and
 * record k's index; the cursor's walk makes entries taken in data order O(1) each. */
int ockpt_v3_slot_entry(const ockpt_file *f, ockpt_v3_cursor *c, uint32_t j, uint32_t k,
                        uint32_t *index, uint64_t *offset, uint64_t *nbytes);

/* The range of record k in pass `pass` (0: its tensor range, 1 + j: its slot-j entry), without a
 * record or a cursor: 1 with its offset and size, 0 for a NO_STATE slot entry, -1 out of range
 * (or not schema 3). O(1) with the offsets in scratch; through the file's range_index section
 * (SPEC.md 7.5, checked by the read) at most G - 1 ranges walked; else a walk over the
 * ranges of its pass placed before it, O(n). */
int ockpt_v3_range(const ockpt_file *f, uint32_t pass, uint32_t k, uint64_t *offset,
                   uint64_t *nbytes);

/* Schema 3's per-block checksums (the optional data_blocks section, SPEC.md 7.4): the block
 * size of a file read successfully, 0 when it has no such section or is not schema 3. */
uint32_t ockpt_v3_block_size(const ockpt_file *f);

/* Copy `len` bytes at `offset` (absolute, inside the data section) into dst, verifying each block
 * they lie in first: the block is read once into `block` (the caller's buffer of at least
 * ockpt_v3_block_size() bytes), its CRC-32C compared with the data_blocks section's, and only
 * then its part copied, so no byte reaches dst unverified whatever the medium returns now.
 * Through a stream the buffer is remembered with the block it holds: the next copy from that
 * block (the same buffer) re-checks the buffer's CRC-32C in memory instead of reading the block
 * again, so copying the ranges in data order reads each data byte once (a buffer changed in
 * between is read again, never trusted).
 * OCKPT_OK; block_checksum (field data_blocks.crc[i], offset the block's first byte);
 * truncated_file (field "stream") when a read fails; offset_out_of_bounds (field "data") for a
 * range outside the data section, a file without the section or a buffer smaller than a block. */
ockpt_result ockpt_v3_copy_verified(const ockpt_file *f, uint64_t offset, void *dst, size_t len,
                                    void *block, size_t block_len);

/* The spec's name of a block: "weights", "m", "v", or "tensors" for WOF. */
const char *ockpt_block_name(const ockpt_file *f, unsigned block);

#ifdef __cplusplus
}
#endif

#endif /* OCKPT_H */
