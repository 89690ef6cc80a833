meta:
  id: onert_checkpoint_common
  title: onert / onert-micro training checkpoint, the types schemas 2 and 3 share
  license: Apache-2.0
  ks-version: "0.11"
  endian: le
doc: |
  The structures schemas 2 and 3 (onert_checkpoint_v2.ksy, onert_checkpoint_v3.ksy) have in
  common, imported by both: the 64-byte header (the version byte is the schema's), the 32-byte
  section-table entry, the slot descriptor, the state and origin sections, and the codes
  (section kinds, flags, optimizer kinds, value types, circle tensor types).

  The keys `-ockpt-limits` and `-ockpt-constants` are this project's (Kaitai ignores keys that
  start with a dash): spec/regenerate.py turns them, with every fixed-size type and enum here,
  into the layout module the library reads and writes through
  (generated/python/onert_checkpoint_generated/layout.py), the C header spec/c/ockpt_layout.h
  and the field tables of spec/SPEC.md.
doc-ref:
  - spec/SPEC.md
-ockpt-limits:
  alignment: 64
  max_sections: 64
  max_tensors: 16777216
  max_rank: 8
  max_name_len: 1024
  max_slots: 16
  max_state_entries: 1024
  max_key_len: 255
  max_value_len: 1048576
-ockpt-constants:
  magic: 429
  no_state: 0xffffffffffffffff
types:
  header:
    doc: The 64-byte header at offset 0.
    params:
      - id: expected_version
        type: u1
        doc: The schema's version byte.
    seq:
      - id: magic
        type: u2
        valid: 429
        doc: Magic number 429, bytes `ad 01`, as in schema 1.
      - id: version
        type: u1
        valid: expected_version
        doc: Schema version (2 or 3).
      - id: reserved0
        type: u1
        valid: 0
        doc: Reserved, 0.
      - id: header_crc
        type: u4
        doc: CRC-32C of the 64 header bytes, computed with these four bytes set to zero.
      - id: len_file
        type: u8
        doc: Size of the whole file in bytes; a shorter file is truncated, a longer one has
          trailing bytes.
      - id: ofs_section_table
        type: u8
        valid: 64
        doc: Offset of the section table; always 64, right after the header.
      - id: num_sections
        type: u4
        doc: Number of 32-byte entries in the section table (at most MAX_SECTIONS = 64).
      - id: section_table_crc
        type: u4
        doc: CRC-32C of the `num_sections * 32` bytes of the section table.
      - id: reserved1
        size: 32
        doc: Reserved, all zero.
  section_entry:
    doc: One entry of the section table (32 bytes).
    seq:
      - id: kind
        type: u4
        enum: section_kind
        doc: What the section holds; unknown kinds are skipped or refused by their REQUIRED flag.
      - id: flags
        type: u4
        doc: Bit 0 REQUIRED (must understand); bits 1..31 reserved, 0.
      - id: ofs_body
        type: u8
        doc: Absolute offset of the section, a multiple of 64.
      - id: len_body
        type: u8
        doc: Size of the section in bytes (may be 0).
      - id: crc
        type: u4
        doc: CRC-32C of the section's `len_body` bytes.
      - id: reserved
        type: u4
        valid: 0
        doc: Reserved, 0.
    instances:
      is_required:
        value: (flags & 1) != 0
        doc: The must-understand flag.
  optimizer_head:
    doc: The first 16 bytes of the optimizer section (kind 2).
    seq:
      - id: kind
        -ockpt-meaning: "optimizer kind (the kind table of 6.7)"
        type: u4
        enum: optimizer_kind
        doc: Optimizer kind; known kinds fix K and the slot names.
      - id: num_slots
        -ockpt-symbol: K
        -ockpt-meaning: "K, 0..`MAX_SLOTS`"
        type: u4
        doc: K, the number of state slots (at most MAX_SLOTS = 16).
      - id: num_tensors
        -ockpt-symbol: T
        -ockpt-meaning: "T, equal to the tensors section's `num_tensors` (0 without one)"
        type: u4
        doc: T, equal to the tensors section's num_tensors.
      - id: reserved
        -ockpt-meaning: "0"
        type: u4
        valid: 0
        doc: Reserved, 0.
  slot_descriptor:
    doc: A slot's name (16 bytes).
    params:
      - id: file_io
        type: io
        doc: The whole file's stream (the name's offset is absolute).
    seq:
      - id: ofs_name
        type: u8
        doc: Absolute offset of the UTF-8 slot name.
      - id: len_name
        type: u4
        doc: Slot name length (1..MAX_NAME_LEN).
      - id: reserved
        type: u4
        valid: 0
        doc: Reserved, 0.
    instances:
      name:
        io: file_io
        pos: ofs_name
        size: len_name
        type: str
        encoding: UTF-8
        doc: The slot's name (`m`, `v`, `momentum`, ...).
  state_section:
    -ockpt-head: state_head
    -ockpt-spec-after:
      - id: pool
        type: "u8[]"
        -ockpt-meaning: "for each entry in order: its key, then (string, bytes) its value"
    doc: Kind 3. Training state as typed key/value pairs.
    params:
      - id: file_io
        type: io
        doc: The whole file's stream (the keys' offsets are absolute).
    seq:
      - id: num_entries
        -ockpt-symbol: n
        -ockpt-meaning: "n, 1..`MAX_STATE_ENTRIES`"
        type: u4
        doc: Number of entries (at most MAX_STATE_ENTRIES = 1024).
      - id: reserved
        -ockpt-meaning: "0"
        type: u4
        valid: 0
        doc: Reserved, 0.
      - id: entries
        -ockpt-meaning: "state entries"
        type: state_entry(file_io)
        repeat: expr
        repeat-expr: num_entries
        doc: The entries; each key is unique.
  state_entry:
    doc: One key/value pair (32 bytes).
    params:
      - id: file_io
        type: io
        doc: The whole file's stream (the key's offset is absolute).
    seq:
      - id: ofs_key
        type: u8
        doc: Absolute offset of the UTF-8 key.
      - id: len_key
        type: u4
        doc: Key length (1..MAX_KEY_LEN = 255).
      - id: value_type
        type: u1
        enum: value_type
        doc: Type of the value.
      - id: reserved
        size: 3
        doc: Reserved, all zero.
      - id: value
        type: u8
        doc: int64 (two's complement) or float64 bits for int and float; absolute offset of
          the value bytes for string and bytes.
      - id: len_value
        type: u8
        doc: Length of a string or bytes value (at most MAX_VALUE_LEN = 2**20); 0 for int and
          float.
    instances:
      key:
        io: file_io
        pos: ofs_key
        size: len_key
        type: str
        encoding: UTF-8
        doc: The key.
  origin_section:
    -ockpt-record: origin
    doc: |
      Kind 5, optional (24 bytes). Where the content came from when it was upgraded from schema
      1 or WOF: what a downgrade needs to write the original file back byte for byte.
    seq:
      - id: revision
        type: u4
        enum: origin_revision
        doc: The revision upgraded from.
      - id: dialect
        type: u4
        enum: origin_dialect
        doc: The schema-1 dialect of the original file.
      - id: flags
        type: u4
        doc: Bit 0 FOOTERLESS (an early onert file without the step/epoch footer); others 0.
      - id: reserved
        type: u4
        valid: 0
        doc: Reserved, 0.
      - id: num_entries
        type: u8
        doc: N, the length of the original file's offset tables.
enums:
  section_kind:
    1: tensors
    2: optimizer
    3: state
    4: data
    5: origin
  section_flags:
    1: required
  optimizer_kind:
    0: sgd
    1: sgd_momentum
    2: adam
  value_type:
    0: int
    1: float
    2: string
    3: bytes
  origin_revision:
    1: v1
    2: wof
  origin_dialect:
    0: unknown
    1: onert
    2: onert_micro
  origin_flags:
    1: footerless
  tensor_type:
    # circle's TensorType codes (circle_schema.fbs); -ockpt-element-size: bytes per element
    # where elements are whole bytes. no_dtype is schema 3's "none" of the dtype column.
    -128: no_dtype
    -5: ggml_q8_1
    -4: ggml_q8_0
    -3: ggml_q4_1
    -2: ggml_q4_0
    -1: uint4
    0:
      id: float32
      -ockpt-element-size: 4
    1:
      id: float16
      -ockpt-element-size: 2
    2:
      id: int32
      -ockpt-element-size: 4
    3:
      id: uint8
      -ockpt-element-size: 1
    4:
      id: int64
      -ockpt-element-size: 8
    5: string
    6:
      id: bool
      -ockpt-element-size: 1
    7:
      id: int16
      -ockpt-element-size: 2
    8:
      id: complex64
      -ockpt-element-size: 8
    9:
      id: int8
      -ockpt-element-size: 1
    10:
      id: float64
      -ockpt-element-size: 8
    11:
      id: complex128
      -ockpt-element-size: 16
    12:
      id: uint64
      -ockpt-element-size: 8
    13: resource
    14: variant
    15:
      id: uint32
      -ockpt-element-size: 4
    16:
      id: uint16
      -ockpt-element-size: 2
    17: int4
