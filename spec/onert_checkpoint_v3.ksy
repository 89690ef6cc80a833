meta:
  id: onert_checkpoint_v3
  title: onert / onert-micro training checkpoint, schema 3 (compact tables)
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
  Schema 3 of the training checkpoint of Samsung ONE's on-device training runtimes: schema 2
  (onert_checkpoint_v2.ksy) with smaller tables, for checkpoints of many small tensors.

  The container is schema 2's: a 64-byte header (version byte 3), a section table of 32-byte
  entries, the sections at multiples of 64 in the order tensors, optimizer, state, origin, other
  kinds by ascending kind, data last, CRC-32C over the header, the table and each section. The
  state and origin sections are schema 2's.

  What changes: the tensors section stores the tensors as columns (a u64 size per tensor, then
  only the optional columns some tensor uses: entry index, model index, name length, dtype,
  rank, data order, dims, names), each at a multiple of 8 from the section's start; an
  optimizer-slot entry is a single u64 size (NO_STATE = 2**64-1 for no state); and no data
  offset is stored. The data ranges are placed by rule: in data order (the tensor records in the
  order of the `order` column, or in record order without it, then each slot's entries that are
  not NO_STATE in the same order of records), each at the end of the previous one rounded up to
  a(len) = 64 for len >= 64, else the smallest power of two not below len (a(0) = a(1) = 1),
  relative to the data section's start, with zero padding between them. The `ranges` instance
  below computes every range's place.

  The specification document (spec/SPEC.md, section 6.7) gives the complete validation rules
  (C0 to C13, O1 to O9, P0 to P4 besides schema 2's) and the error code of each rule.
doc-ref:
  - spec/SPEC.md
  - https://github.com/Samsung/ONE/discussions/13037
  - https://github.com/Samsung/ONE/blob/master/nnpackage/schema/circle_schema.fbs
seq:
  - id: magic
    type: u2
    valid: 429
    doc: Magic number 429, bytes `ad 01`, as in schemas 1 and 2.
  - id: version
    type: u1
    valid: 3
    doc: Schema version; this layout is version 3.
  - id: reserved0
    type: u1
    valid: 0
    doc: Reserved, 0.
  - id: header_crc
    type: u4
    doc: CRC-32C of the 64 header bytes, computed with these four bytes set to zero.
  - id: len_file
    type: u8
    doc: Size of the whole file in bytes.
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
  has_tensors:
    value: num_sections > 0 and section_table[0].kind == section_kind::tensors
    doc: The tensors section, when present, is the first section.
  tensors:
    value: section_table[0].body.as<tensors_section>
    if: has_tensors
    doc: The tensors section.
  optimizer_position:
    value: 'has_tensors ? 1 : 0'
    doc: Where an optimizer section sits in the table (right after the tensors section).
  has_optimizer:
    value: num_sections > optimizer_position and section_table[optimizer_position].kind == section_kind::optimizer
    doc: Whether an optimizer section is present.
  optimizer:
    value: section_table[optimizer_position].body.as<optimizer_section>
    if: has_optimizer
    doc: The optimizer section.
  has_data:
    value: num_sections > 0 and section_table[num_sections - 1].kind == section_kind::data
    doc: The data section, when present, is the last section.
  ofs_data_section:
    value: section_table[num_sections - 1].ofs_body
    if: has_data
    doc: Where the data section starts; the first range starts here.
  num_ranges:
    value: 'has_tensors ? tensors.num_tensors * ((has_optimizer ? optimizer.num_slots : 0) + 1) : 0'
    doc: One range per tensor record, and one per slot and record (NO_STATE entries included, as
      0-byte ranges that take no room).
  ranges:
    type: data_range(_index)
    repeat: expr
    repeat-expr: num_ranges
    doc: The data ranges in data order, each with its computed offset (SPEC.md 6.7.3).
types:
  section_entry:
    doc: One entry of the section table (as schema 2).
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
    doc: |
      Kind 1. The tensors as columns: the count, a bit set of the optional columns present, the
      size column, then each present optional column at the next multiple of 8 from the
      section's start (zero bytes before it). A column is present only if some record has a
      value other than its default; the section ends where its last column ends.
    seq:
      - id: num_tensors
        type: u4
        doc: n, the number of tensor records (1..MAX_TENSORS = 2**24).
      - id: columns
        type: u4
        doc: Bit 0 INDEX, bit 1 MODEL_INDEX, bit 2 NAME, bit 3 DTYPE, bit 4 SHAPE, bit 5 ORDER;
          bits 6..31 are 0.
      - id: len_data
        type: u8
        repeat: expr
        repeat-expr: num_tensors
        doc: The size of each tensor's bytes.
      - id: index
        type: u4
        repeat: expr
        repeat-expr: num_tensors
        if: has_index
        doc: The entry index of each record, strictly ascending; without the column record k's
          index is k.
      - id: pad_model_index
        size: (8 - _io.pos % 8) % 8
        if: has_model_index
        doc: Zero bytes up to the next multiple of 8.
      - id: model_index
        type: u4
        repeat: expr
        repeat-expr: num_tensors
        if: has_model_index
        doc: Circle tensor index (first subgraph), or NO_MODEL_INDEX = 0xFFFFFFFF.
      - id: pad_len_name
        size: (8 - _io.pos % 8) % 8
        if: has_name
        doc: Zero bytes up to the next multiple of 8.
      - id: len_name
        type: u4
        repeat: expr
        repeat-expr: num_tensors
        if: has_name
        doc: Name length (1..MAX_NAME_LEN = 1024), or 0 for a record without a name.
      - id: pad_dtype
        size: (8 - _io.pos % 8) % 8
        if: has_dtype
        doc: Zero bytes up to the next multiple of 8.
      - id: dtype
        type: s1
        enum: tensor_type
        repeat: expr
        repeat-expr: num_tensors
        if: has_dtype
        doc: Circle TensorType code, or NO_DTYPE = -128 (byte 0x80).
      - id: pad_rank
        size: (8 - _io.pos % 8) % 8
        if: has_shape
        doc: Zero bytes up to the next multiple of 8.
      - id: rank
        type: u1
        repeat: expr
        repeat-expr: num_tensors
        if: has_shape
        doc: Number of dimensions (0..MAX_RANK = 8), or NO_SHAPE = 255.
      - id: pad_order
        size: (8 - _io.pos % 8) % 8
        if: has_order
        doc: Zero bytes up to the next multiple of 8.
      - id: order
        type: u4
        repeat: expr
        repeat-expr: num_tensors
        if: has_order
        doc: The data order, a permutation of the records; order[k] is the record whose range is
          the k-th tensor range of the data section.
      - id: pad_dims
        size: (8 - _io.pos % 8) % 8
        if: has_shape
        doc: Zero bytes up to the next multiple of 8 (present even when every rank is 0).
      - id: dims
        type: record_dims(rank[_index])
        repeat: expr
        repeat-expr: num_tensors
        if: has_shape
        doc: The dims of each record with a shape, outermost first, back to back in record order.
      - id: pad_names
        size: (8 - _io.pos % 8) % 8
        if: has_name
        doc: Zero bytes up to the next multiple of 8.
      - id: names
        type: record_name(len_name[_index])
        repeat: expr
        repeat-expr: num_tensors
        if: has_name
        doc: The names of the records with a name, back to back in record order.
    instances:
      has_index:
        value: (columns & 1) != 0
        doc: The `index` column is present.
      has_model_index:
        value: (columns & 2) != 0
        doc: The `model_index` column is present.
      has_name:
        value: (columns & 4) != 0
        doc: The `len_name` and `names` columns are present.
      has_dtype:
        value: (columns & 8) != 0
        doc: The `dtype` column is present.
      has_shape:
        value: (columns & 16) != 0
        doc: The `rank` and `dims` columns are present.
      has_order:
        value: (columns & 32) != 0
        doc: The `order` column is present.
  record_dims:
    doc: One record's part of the dims column (nothing for NO_SHAPE).
    params:
      - id: rank
        type: u1
    seq:
      - id: dims
        type: u4
        repeat: expr
        repeat-expr: 'rank == 255 ? 0 : rank'
        doc: The record's dimensions, outermost first.
    instances:
      has_shape:
        value: rank != 255
        doc: False for NO_SHAPE.
  record_name:
    doc: One record's part of the names column (nothing for a record without a name).
    params:
      - id: len_name
        type: u4
    seq:
      - id: name
        size: len_name
        type: str
        encoding: UTF-8
        doc: The record's UTF-8 name.
    instances:
      has_name:
        value: len_name != 0
        doc: False for a record without a name.
  optimizer_section:
    doc: Kind 2. The optimizer kind, its K named slots, and per slot and tensor a size.
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
        type: u8
        repeat: expr
        repeat-expr: num_slots * num_tensors
        doc: Slot j's entry for the t-th tensor record is entry j * T + t, its len_data, or
          NO_STATE (2**64-1) when the tensor has no state in that slot.
  slot_descriptor:
    doc: A slot's name (16 bytes, as schema 2).
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
  data_range:
    doc: |
      The i-th data range in data order, placed by rule: its start is the end of the previous
      range (the data section's start for the first) rounded up to a(len_data).
    params:
      - id: i
        type: u4
    instances:
      num_tensors:
        value: _root.tensors.num_tensors
        doc: n.
      slot:
        value: i / num_tensors - 1
        doc: -1 for a tensor range, else the optimizer slot j.
      position:
        value: i % num_tensors
        doc: The position in the order of records.
      record:
        value: '_root.tensors.has_order ? _root.tensors.order[position] : position'
        doc: The tensor record k the range belongs to.
      entry:
        value: '_root.optimizer.entries[slot * num_tensors + record]'
        if: slot >= 0
        doc: The slot entry (j * T + k).
      has_state:
        value: slot < 0 or entry != 0xffffffffffffffff
        doc: False for a NO_STATE slot entry, which has no range (here 0 bytes taking no room).
      len_data:
        value: 'slot < 0 ? _root.tensors.len_data[record] : (has_state ? entry : 0)'
        doc: The range's size.
      alignment:
        value: 'len_data > 32 ? 64 : len_data > 16 ? 32 : len_data > 8 ? 16 : len_data > 4 ? 8 : len_data > 2 ? 4 : len_data > 1 ? 2 : 1'
        doc: a(len_data), 64 for 64 bytes or more, else the smallest power of two not below it.
      previous_end:
        value: 'i == 0 ? _root.ofs_data_section : _root.ranges[i - 1].end.as<u8>'
        doc: Where the previous range ends (the data section's start for the first).
      ofs_data:
        value: (previous_end + alignment - 1) / alignment * alignment
        doc: The range's absolute offset (relative to the data section's start, a multiple of
          64, so the alignment holds in the file too).
      end:
        value: ofs_data + len_data
        doc: Where the range ends.
      body:
        io: _root._io
        pos: ofs_data
        size: len_data
        doc: The range's bytes.
  state_section:
    doc: Kind 3. Training state as typed key/value pairs (as schema 2).
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
    doc: Kind 5, optional. What an upgraded file was (as schema 2).
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
    -128: no_dtype
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
