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
  imports:
    - onert_checkpoint_common
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
  - id: header
    type: onert_checkpoint_common::header(2)
    doc: The 64-byte header (onert_checkpoint_common.ksy), version byte 2.
instances:
  section_table:
    pos: header.ofs_section_table
    type: section_entry
    repeat: expr
    repeat-expr: header.num_sections
    doc: The section table, in file order of the sections.
types:
  section_entry:
    doc: One entry of the section table (onert_checkpoint_common.ksy) and its body.
    seq:
      - id: entry
        type: onert_checkpoint_common::section_entry
        doc: Kind, flags, offset, size and CRC-32C of the section.
    instances:
      body:
        io: _root._io
        pos: entry.ofs_body
        size: entry.len_body
        type:
          switch-on: entry.kind
          cases:
            onert_checkpoint_common::section_kind::tensors: tensors_section
            onert_checkpoint_common::section_kind::optimizer: optimizer_section
            onert_checkpoint_common::section_kind::state: onert_checkpoint_common::state_section(_root._io)
            onert_checkpoint_common::section_kind::origin: onert_checkpoint_common::origin_section
        doc: The section's bytes, parsed by kind (DATA and unknown kinds stay raw bytes).
  tensors_section:
    -ockpt-head: tensors_head
    -ockpt-spec-after:
      - id: names
        type: "u8[]"
        -ockpt-meaning: "the names of the records with `HAS_NAME`, in record order"
    doc: Kind 1. One fixed-size record per checkpoint tensor, then the tensor names.
    seq:
      - id: num_tensors
        -ockpt-symbol: n
        -ockpt-meaning: "n, 1..`MAX_TENSORS`"
        type: u4
        doc: Number of tensor records (at most MAX_TENSORS = 2**24).
      - id: reserved
        -ockpt-meaning: "0"
        type: u4
        valid: 0
        doc: Reserved, 0.
      - id: records
        -ockpt-meaning: "tensor records, in strictly ascending `index` order"
        type: tensor_record
        repeat: expr
        repeat-expr: num_tensors
        doc: The tensor records, in strictly ascending entry index order.
  tensor_record:
    doc: A checkpoint tensor (72 bytes).
    seq:
      - id: index
        type: u4
        doc: Entry index (schema 1's offset-table position); greater than the previous
          record's.
      - id: model_index
        type: u4
        doc: Circle tensor index in the model's first subgraph when flag HAS_MODEL_INDEX, else
          0; unique.
      - id: flags
        type: u2
        doc: Bit 0 HAS_DTYPE, bit 1 HAS_SHAPE, bit 2 HAS_NAME, bit 3 HAS_MODEL_INDEX; others 0.
      - id: dtype
        type: s1
        enum: onert_checkpoint_common::tensor_type
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
    -ockpt-spec-after:
      - id: names
        type: "u8[]"
        -ockpt-meaning: "the K slot names in slot order"
    doc: Kind 2. The optimizer kind, its K named state slots, and per slot and tensor a range.
    seq:
      - id: head
        type: onert_checkpoint_common::optimizer_head
        doc: Optimizer kind, K and T (onert_checkpoint_common.ksy).
      - id: slots
        -ockpt-meaning: "slot descriptors"
        type: onert_checkpoint_common::slot_descriptor(_root._io)
        repeat: expr
        repeat-expr: head.num_slots
        doc: One descriptor per slot.
      - id: entries
        -ockpt-meaning: "slot j's entry for the t-th tensor record is entry j*T + t"
        type: slot_entry
        repeat: expr
        repeat-expr: head.num_slots * head.num_tensors
        doc: Slot k's entry for the t-th tensor record is entry k * T + t.
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
enums:
  tensor_flags:
    1: has_dtype
    2: has_shape
    4: has_name
    8: has_model_index
