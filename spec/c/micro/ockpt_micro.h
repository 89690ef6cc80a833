/*
 * ockpt_micro.h - the micro profile's reader of schema-3 checkpoints (SPEC.md section 11): for
 * a device that loads a checkpoint into its model's buffers.
 *
 * C99, no allocation, no libc calls, no recursion. The caller gives a read-at-offset
 * callback, the file's size and one buffer of at least the file's block size (the
 * data_blocks section's B, or the whole data section without one; 64 bytes at least).
 *
 *   ockpt_micro m;
 *   if (ockpt_micro_open(&m, read_at, dev, size, block, sizeof block)) refuse(m.code);
 *   ... m.num_tensors, m.num_slots, m.opt_kind, ockpt_micro_state(&m, k, ...) ...
 *   ockpt_micro_range r;
 *   while ((rc = ockpt_micro_next(&m, &r)) == 1)       // the ranges in data order
 *     ockpt_micro_copy(&m, buffer_for(&r), r.nbytes);  // or skip it: next() verifies it
 *   if (rc < 0) refuse(m.code);                        // buffers filled so far: undefined
 *
 * open() reads and verifies the metadata (header, section table, tensors, optimizer and
 * state sections, the data_blocks head) and reads no data byte; next() and copy() then read
 * the data section once, forward, a block at a time into the caller's buffer, each block's
 * CRC-32C checked there before any of its bytes is copied out.
 */
#ifndef OCKPT_MICRO_H
#define OCKPT_MICRO_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 0 on success; anything else is a failed read (reported as truncated_file, field stream). */
typedef int (*ockpt_micro_read_fn)(void *ctx, uint64_t offset, void *dst, size_t len);

/* No model index (the record has none, or the file has no model_index column). */
#define OCKPT_MICRO_NO_MODEL_INDEX 0xffffffffu

typedef struct ockpt_micro {
  /* read-only for the caller after open() */
  int code;           /* 0, or the refusal: an ockpt_error (OCKPT_E_*, negative) */
  const char *field;  /* the field concerned, record numbers left out ("tensors[].order") */
  uint32_t offset;    /* where in the file */
  uint32_t num_tensors, num_slots, opt_kind, num_state; /* opt_kind 0xffffffff: none */
  /* private */
  ockpt_micro_read_fn read;
  void *ctx;
  uint8_t *buf;
  uint32_t size, buf_len, t_ofs, col_index, col_model, col_order, o_ent, s_ofs, d_ofs, d_len;
  uint32_t b_ofs, b_crc, b_run, d_crc, block; /* data_blocks: next crc[i], CRCs, block size */
  uint32_t at, left, blk_start, blk_len, pass, pos; /* the data pass */
} ockpt_micro;

/* One data range: pass 0 is record `record`'s tensor, pass 1 + j its slot-j entry. */
typedef struct ockpt_micro_range {
  uint32_t pass, record, index, model_index;
  uint32_t nbytes;
} ockpt_micro_range;

/* Verify the metadata. 0, or the refusal (an OCKPT_E_* code, also in m->code). A file of
 * 2^31 bytes or more is beyond the profile's limits (limit_exceeded, field file). */
int ockpt_micro_open(ockpt_micro *m, ockpt_micro_read_fn read, void *ctx, uint64_t size,
                     void *block_buf, uint32_t block_len);
/* The next range in data order: 1 (in *r), 0 at the end of a file found valid, -1 refused. */
int ockpt_micro_next(ockpt_micro *m, ockpt_micro_range *r);
/* Copy the next len bytes of the current range (dst NULL: verify and drop). 0, or -1. */
int ockpt_micro_copy(ockpt_micro *m, void *dst, uint32_t len);
/* State entry k: its key (up to 255 bytes into key, length in *key_len), type (0 int,
 * 1 float, 2 string, 3 bytes) and value (int64 or float64 bits; a string's or bytes' length).
 * 0, or -1 (k out of range, or a failed read). */
int ockpt_micro_state(ockpt_micro *m, uint32_t k, uint8_t key[255], uint32_t *key_len,
                      uint8_t *type, uint64_t *value);

#ifdef __cplusplus
}
#endif

#endif /* OCKPT_MICRO_H */
