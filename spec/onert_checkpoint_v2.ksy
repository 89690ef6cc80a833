meta:
  id: onert_checkpoint_v2
  title: onert / onert-micro training checkpoint, schema 2
  application:
    - onert (Samsung ONE on-device training runtime)
    - onert-micro (Samsung ONE runtime for microcontrollers)
    - onert-checkpoint (this project's reference toolkit)
  file-extension: ckpt
  xref:
    github: https://github.com/Samsung/ONE/discussions/13037
  license: Apache-2.0
  ks-version: "0.11"
  endian: le
doc: |
  Schema 2 of the training checkpoint of Samsung ONE's on-device training runtimes: the
  trainable weights (with their circle tensor index, dtype, shape and name when known), the
  optimizer state in any number of named slots, and the training state as typed key/value
  pairs.

  The file is a fixed 64-byte header, a section table of `num_sections` 32-byte entries right
  after it, then the sections, each starting at a multiple of 64 bytes. Every gap between two
  structures is alignment padding of fewer than 64 zero bytes, and the file ends exactly where
  its last section ends (`len_file`). Every offset in the file is absolute and 64-bit.

  Integrity: CRC-32C (Castagnoli, reflected polynomial 0x82F63B78; crc32c("123456789") =
  0xE3069283) over the header (with `header_crc` taken as zero), over the section table, and
  over each section's bytes.

  A section-table entry carries a kind and flags. Bit 0 of the flags (REQUIRED, "must
  understand") tells a reader what to do with a kind it does not know: skip the section when the
  bit is clear, refuse the file when it is set. New optional or required sections therefore need
  no new version byte. The flag of the kinds defined here is fixed (set for tensors, optimizer,
  state and data; clear for origin), and the sections are in the order tensors, optimizer,
  state, origin, other kinds by ascending kind, data last; a section with nothing in it (no
  tensor record, no state entry, no data range) is omitted.

  Tensor data, and optimizer-slot data, are ranges of the DATA section, each starting at a
  multiple of 64 bytes so that a mapped file can hand them out zero-copy. The ranges,
  sorted by (offset, position in the file's record order), tile the DATA section: each starts at
  the end of the previous one rounded up to 64, with zero padding in between.

  Names, keys and string values are UTF-8 without a terminator, stored after the fixed-size
  records of their section, in record order, back to back.

  The specification document (spec/SPEC.md, section 6) gives the complete validation rules,
  the limits and the error code of each rule.
doc-ref:
  - spec/SPEC.md
  - https://github.com/Samsung/ONE/discussions/13037
  - https://github.com/Samsung/ONE/blob/master/nnpackage/schema/circle_schema.fbs
seq:
  - id: magic
    type: u2
    valid: 429
    doc: Magic number 429, bytes `ad 01`, as in schema 1.
  - id: version
    type: u1
    valid: 2
    doc: Schema version; this layout is version 2.
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
instances:
  section_table:
    pos: ofs_section_table
    type: section_entry
    repeat: expr
    repeat-expr: num_sections
    doc: The section table, in file order of the sections.
types:
  section_entry:
    doc: One entry of the section table.
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
        doc: Size of the section in bytes.
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
      body:
        io: _root._io
        pos: ofs_body
        size: len_body
        type:
          switch-on: kind
          cases:
            section_kind::tensors: tensors_section
            section_kind::optimizer: optimizer_section
            section_kind::state: state_section
            section_kind::origin: origin_section
        doc: The section's bytes, parsed by kind (DATA and unknown kinds stay raw bytes).
  tensors_section:
    doc: Kind 1. One fixed-size record per checkpoint tensor, then the tensor names.
    seq:
      - id: num_tensors
        type: u4
        doc: Number of tensor records (at most MAX_TENSORS = 2**24).
      - id: reserved
        type: u4
        valid: 0
        doc: Reserved, 0.
      - id: records
        type: tensor_record
        repeat: expr
        repeat-expr: num_tensors
        doc: The tensor records, in strictly ascending entry index order.
  tensor_record:
    doc: A checkpoint tensor (72 bytes).
    seq:
      - id: index
        type: u4
        doc: Entry index, unique in the file (schema 1's offset-table position).
      - id: model_index
        type: u4
        doc: Circle tensor index in the model's first subgraph when flag HAS_MODEL_INDEX, else 0.
      - id: flags
        type: u2
        doc: Bit 0 HAS_DTYPE, bit 1 HAS_SHAPE, bit 2 HAS_NAME, bit 3 HAS_MODEL_INDEX; others 0.
      - id: dtype
        type: s1
        enum: tensor_type
        doc: Circle TensorType code of the elements when HAS_DTYPE, else 0.
      - id: rank
        type: u1
        doc: Number of dimensions (0..MAX_RANK = 8) when HAS_SHAPE, else 0.
      - id: len_name
        type: u4
        doc: Name length in bytes (1..MAX_NAME_LEN = 1024) when HAS_NAME, else 0.
      - id: ofs_name
        type: u8
        doc: Absolute offset of the UTF-8 name when HAS_NAME, else 0.
      - id: ofs_data
        type: u8
        doc: Absolute offset of the tensor's bytes inside the DATA section, a multiple of 64.
      - id: len_data
        type: u8
        doc: Size of the tensor's bytes.
      - id: dims
        type: u4
        repeat: expr
        repeat-expr: 8
        doc: The first `rank` values are the dimensions, outermost first; the rest are 0.
    instances:
      has_dtype:
        value: (flags & 1) != 0
        doc: The dtype field is meaningful.
      has_shape:
        value: (flags & 2) != 0
        doc: The rank and dims fields are meaningful.
      has_name:
        value: (flags & 4) != 0
        doc: The tensor has a name.
      has_model_index:
        value: (flags & 8) != 0
        doc: The model_index field is meaningful.
      name:
        io: _root._io
        pos: ofs_name
        size: len_name
        type: str
        encoding: UTF-8
        if: has_name
        doc: The tensor's name.
  optimizer_section:
    doc: Kind 2. The optimizer kind, its K named state slots, and per slot and tensor a range.
    seq:
      - id: kind
        type: u4
        enum: optimizer_kind
        doc: Optimizer kind; known kinds fix K and the slot names.
      - id: num_slots
        type: u4
        doc: K, the number of state slots (at most MAX_SLOTS = 16).
      - id: num_tensors
        type: u4
        doc: T, equal to the tensors section's num_tensors.
      - id: reserved
        type: u4
        valid: 0
        doc: Reserved, 0.
      - id: slots
        type: slot_descriptor
        repeat: expr
        repeat-expr: num_slots
        doc: One descriptor per slot.
      - id: entries
        type: slot_entry
        repeat: expr
        repeat-expr: num_slots * num_tensors
        doc: Slot k's entry for the t-th tensor record is entry k * T + t.
  slot_descriptor:
    doc: A slot's name (16 bytes).
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
        io: _root._io
        pos: ofs_name
        size: len_name
        type: str
        encoding: UTF-8
        doc: The slot's name (`m`, `v`, `momentum`, ...).
  slot_entry:
    doc: One tensor's state in one slot (16 bytes).
    seq:
      - id: ofs_data
        type: u8
        doc: Absolute offset inside the DATA section, or NO_STATE (2**64-1) when the tensor has
          no state in this slot.
      - id: len_data
        type: u8
        doc: Size of the state in bytes; 0 with NO_STATE.
    instances:
      has_state:
        value: ofs_data != 0xffffffffffffffff
        doc: False for the explicit NO_STATE marker.
  state_section:
    doc: Kind 3. Training state as typed key/value pairs.
    seq:
      - id: num_entries
        type: u4
        doc: Number of entries (at most MAX_STATE_ENTRIES = 1024).
      - id: reserved
        type: u4
        valid: 0
        doc: Reserved, 0.
      - id: entries
        type: state_entry
        repeat: expr
        repeat-expr: num_entries
        doc: The entries; each key is unique.
  state_entry:
    doc: One key/value pair (32 bytes).
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
        io: _root._io
        pos: ofs_key
        size: len_key
        type: str
        encoding: UTF-8
        doc: The key.
  origin_section:
    doc: |
      Kind 5, optional. Where the content came from when it was upgraded from schema 1 or WOF:
      what a downgrade needs to write the original file back byte for byte.
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
  tensor_type:
    -5: ggml_q8_1
    -4: ggml_q8_0
    -3: ggml_q4_1
    -2: ggml_q4_0
    -1: uint4
    0: float32
    1: float16
    2: int32
    3: uint8
    4: int64
    5: string
    6: bool
    7: int16
    8: complex64
    9: int8
    10: float64
    11: complex128
    12: uint64
    13: resource
    14: variant
    15: uint32
    16: uint16
    17: int4
