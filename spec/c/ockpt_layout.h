/*
 * ockpt_layout.h - the on-disk structures of the onert checkpoint format family, as packed C
 * structs (spec/SPEC.md sections 4-6). All fields are little-endian.
 *
 * These declarations document the layouts for C implementers and may be used to read a file
 * directly on a little-endian target whose compiler honours #pragma pack (GCC, Clang, MSVC,
 * IAR, Arm Compiler all do). The reference reader (ockpt.c) does not cast bytes to them: it
 * reads every field byte by byte, which is portable to any endianness and alignment.
 *
 * tests/test_c_layout.py compiles this header and checks every size and field offset against
 * the library's Construct schemas and NumPy record types.
 */
#ifndef OCKPT_LAYOUT_H
#define OCKPT_LAYOUT_H

#include <stdint.h>

#pragma pack(push, 1)

/* ---- Schema 1 checkpoint (SPEC.md section 4) -------------------------------------------- */

/* The 20-byte header at offset 0. */
typedef struct ockpt_v1_header {
  uint16_t magic;       /* 429 */
  uint8_t version;      /* 1 */
  uint8_t reserved;     /* 0 */
  uint32_t ofs_opt1;    /* onert: opt1_offset; onert-micro: m_offset */
  uint32_t ofs_opt2;    /* onert: opt2_offset; onert-micro: v_offset */
  uint32_t ofs_other;   /* start of the footer; 0 in footer-less files */
  uint32_t num_entries; /* N: onert: length; onert-micro: n_buffers */
} ockpt_v1_header;
/* Followed by N uint32_t offsets (the weight table); each optimizer block is N uint32_t
 * offsets followed by data. */

/* The 8-byte footer at ofs_other: the last bytes of the file. */
typedef struct ockpt_v1_footer {
  uint32_t step;
  uint32_t epoch;
} ockpt_v1_footer;

/* ---- Weight-only format (SPEC.md section 5) --------------------------------------------- */

/* The 8-byte header, followed by N uint32_t offsets. */
typedef struct ockpt_wof_header {
  uint16_t magic;       /* 429 */
  uint8_t version;      /* 1 */
  uint8_t reserved;     /* 0 */
  uint32_t num_entries; /* N: n_buffers */
} ockpt_wof_header;

/* ---- Schema 2 (SPEC.md section 6) ------------------------------------------------------- */

/* The 64-byte header at offset 0. */
typedef struct ockpt_v2_header {
  uint16_t magic;             /* 429 */
  uint8_t version;            /* 2 */
  uint8_t reserved0;          /* 0 */
  uint32_t header_crc;        /* CRC-32C of these 64 bytes with this field zero */
  uint64_t len_file;          /* the file's size */
  uint64_t ofs_section_table; /* 64 */
  uint32_t num_sections;
  uint32_t section_table_crc; /* CRC-32C of the section table */
  uint8_t reserved1[32];      /* 0 */
} ockpt_v2_header;

/* A section-table entry (32 bytes); the table follows the header. */
typedef struct ockpt_v2_section {
  uint32_t kind;  /* 1 tensors, 2 optimizer, 3 state, 4 data, 5 origin */
  uint32_t flags; /* bit 0: REQUIRED (must understand) */
  uint64_t ofs_body;
  uint64_t len_body;
  uint32_t crc; /* CRC-32C of the body */
  uint32_t reserved;
} ockpt_v2_section;

/* Tensors section (kind 1): this head, num_tensors records, then the names. */
typedef struct ockpt_v2_tensors_head {
  uint32_t num_tensors;
  uint32_t reserved;
} ockpt_v2_tensors_head;

/* A tensor record (72 bytes). */
typedef struct ockpt_v2_tensor_record {
  uint32_t index;       /* entry index, strictly ascending */
  uint32_t model_index; /* circle tensor index (HAS_MODEL_INDEX) */
  uint16_t flags;       /* HAS_DTYPE 1, HAS_SHAPE 2, HAS_NAME 4, HAS_MODEL_INDEX 8 */
  int8_t dtype;         /* circle TensorType code (HAS_DTYPE) */
  uint8_t rank;         /* 0..8 (HAS_SHAPE) */
  uint32_t len_name;
  uint64_t ofs_name;
  uint64_t ofs_data;
  uint64_t len_data;
  uint32_t dims[8];
} ockpt_v2_tensor_record;

/* Optimizer section (kind 2): this head, K slot descriptors, K*T slot entries, the names. */
typedef struct ockpt_v2_optimizer_head {
  uint32_t kind;        /* 0 sgd, 1 sgd_momentum, 2 adam, ... */
  uint32_t num_slots;   /* K */
  uint32_t num_tensors; /* T, the number of tensor records */
  uint32_t reserved;
} ockpt_v2_optimizer_head;

typedef struct ockpt_v2_slot_descriptor {
  uint64_t ofs_name;
  uint32_t len_name;
  uint32_t reserved;
} ockpt_v2_slot_descriptor;

/* Entry j*T + t: slot j of tensor record t; ofs_data == UINT64_MAX and len_data == 0 means
 * no state. */
typedef struct ockpt_v2_slot_entry {
  uint64_t ofs_data;
  uint64_t len_data;
} ockpt_v2_slot_entry;

/* State section (kind 3): this head, num_entries entries, then keys and values. */
typedef struct ockpt_v2_state_head {
  uint32_t num_entries;
  uint32_t reserved;
} ockpt_v2_state_head;

typedef struct ockpt_v2_state_entry {
  uint64_t ofs_key;
  uint32_t len_key;
  uint8_t value_type; /* 0 int, 1 float, 2 string, 3 bytes */
  uint8_t reserved[3];
  uint64_t value;     /* int64, float64 bits, or the offset of a string/bytes value */
  uint64_t len_value; /* length of a string/bytes value */
} ockpt_v2_state_entry;

/* Origin section (kind 5, optional): what an upgraded file was. */
typedef struct ockpt_v2_origin {
  uint32_t revision; /* 1 v1, 2 wof */
  uint32_t dialect;  /* 0 none, 1 onert, 2 onert-micro */
  uint32_t flags;    /* bit 0: footer-less */
  uint32_t reserved;
  uint64_t num_entries;
} ockpt_v2_origin;

/* Schema 3 (SPEC.md 6.7) keeps the header, section entry, optimizer head, slot descriptor, state
 * and origin structures above (version byte 3). Its tensors section starts with this head, then
 * the u64 len_data column and the optional columns the `columns` bits name; a slot entry is
 * one uint64_t (len_data, or UINT64_MAX for no state). */
typedef struct ockpt_v3_tensors_head {
  uint32_t num_tensors;
  uint32_t columns; /* bit 0 INDEX, 1 MODEL_INDEX, 2 NAME, 3 DTYPE, 4 SHAPE, 5 ORDER */
} ockpt_v3_tensors_head;

#pragma pack(pop)

/* C99 compile-time size checks (a negative array size fails the build). */
#define OCKPT_LAYOUT_SIZE(type, size) typedef char type##_has_size_##size[(sizeof(type) == (size)) ? 1 : -1]
OCKPT_LAYOUT_SIZE(ockpt_v1_header, 20);
OCKPT_LAYOUT_SIZE(ockpt_v1_footer, 8);
OCKPT_LAYOUT_SIZE(ockpt_wof_header, 8);
OCKPT_LAYOUT_SIZE(ockpt_v2_header, 64);
OCKPT_LAYOUT_SIZE(ockpt_v2_section, 32);
OCKPT_LAYOUT_SIZE(ockpt_v2_tensors_head, 8);
OCKPT_LAYOUT_SIZE(ockpt_v2_tensor_record, 72);
OCKPT_LAYOUT_SIZE(ockpt_v2_optimizer_head, 16);
OCKPT_LAYOUT_SIZE(ockpt_v2_slot_descriptor, 16);
OCKPT_LAYOUT_SIZE(ockpt_v2_slot_entry, 16);
OCKPT_LAYOUT_SIZE(ockpt_v2_state_head, 8);
OCKPT_LAYOUT_SIZE(ockpt_v2_state_entry, 32);
OCKPT_LAYOUT_SIZE(ockpt_v2_origin, 24);
OCKPT_LAYOUT_SIZE(ockpt_v3_tensors_head, 8);
#undef OCKPT_LAYOUT_SIZE

#endif /* OCKPT_LAYOUT_H */
