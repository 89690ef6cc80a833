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
  imports:
    - onert_checkpoint_common
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

  The specification document (spec/SPEC.md, section 7) gives the complete validation rules
  (C0 to C13, O1 to O9, P0 to P4 besides schema 2's) and the error code of each rule.
doc-ref:
  - spec/SPEC.md
  - https://github.com/Samsung/ONE/discussions/13037
  - https://github.com/Samsung/ONE/blob/master/nnpackage/schema/circle_schema.fbs
-ockpt-constants:
  no_model_index: 0xffffffff
  no_dtype: -128
  no_shape: 255
  column_alignment: 8
  max_range_alignment: 64
  data_blocks_kind: 0x100008
  min_block_shift: 6
  max_block_shift: 24
  range_index_kind: 0x100009
  min_group_shift: 4
  max_group_shift: 16
  default_group_shift: 6
seq:
  - id: header
    type: onert_checkpoint_common::header(3)
    doc: The 64-byte header (onert_checkpoint_common.ksy), version byte 3.
instances:
  section_table:
    pos: header.ofs_section_table
    type: section_entry
    repeat: expr
    repeat-expr: header.num_sections
    doc: The section table, in file order of the sections.
  has_tensors:
    value: header.num_sections > 0 and section_table[0].entry.kind == onert_checkpoint_common::section_kind::tensors
    doc: The tensors section, when present, is the first section.
  tensors:
    value: section_table[0].body.as<tensors_section>
    if: has_tensors
    doc: The tensors section.
  optimizer_position:
    value: 'has_tensors ? 1 : 0'
    doc: Where an optimizer section sits in the table (right after the tensors section).
  has_optimizer:
    value: header.num_sections > optimizer_position and section_table[optimizer_position].entry.kind == onert_checkpoint_common::section_kind::optimizer
    doc: Whether an optimizer section is present.
  optimizer:
    value: section_table[optimizer_position].body.as<optimizer_section>
    if: has_optimizer
    doc: The optimizer section.
  has_data:
    value: header.num_sections > 0 and section_table[header.num_sections - 1].entry.kind == onert_checkpoint_common::section_kind::data
    doc: The data section, when present, is the last section.
  ofs_data_section:
    value: section_table[header.num_sections - 1].entry.ofs_body
    if: has_data
    doc: Where the data section starts; the first range starts here.
  num_ranges:
    value: 'has_tensors ? tensors.num_tensors * ((has_optimizer ? optimizer.head.num_slots : 0) + 1) : 0'
    doc: One range per tensor record, and one per slot and record (NO_STATE entries included, as
      0-byte ranges that take no room).
  ranges:
    type: data_range(_index)
    repeat: expr
    repeat-expr: num_ranges
    doc: The data ranges in data order, each with its computed offset (SPEC.md 7.3).
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
      data_blocks:
        io: _root._io
        pos: entry.ofs_body
        size: entry.len_body
        type: data_blocks_section
        if: entry.kind.to_i == 0x100008
        doc: Kind 0x100008, optional (REQUIRED clear), the per-block CRC-32C of the data section
          (SPEC.md 7.4); a reader that does not know it skips it.
      range_index:
        io: _root._io
        pos: entry.ofs_body
        size: entry.len_body
        type: range_index_section
        if: entry.kind.to_i == 0x100009
        doc: Kind 0x100009, optional (REQUIRED clear), where the placement walk stands every
          2**group_shift sequence positions of each pass (SPEC.md 7.5); a reader that does not
          know it skips it.
  tensors_section:
    -ockpt-head: tensors_head
    doc: |
      Kind 1. The tensors as columns: the count, a bit set of the optional columns present, the
      size column, then each present optional column at the next multiple of 8 from the
      section's start (zero bytes before it). A column is present only if some record has a
      value other than its default; the section ends where its last column ends.
    seq:
      - id: num_tensors
        -ockpt-symbol: n
        -ockpt-meaning: "n, 1..`MAX_TENSORS`"
        type: u4
        doc: n, the number of tensor records (1..MAX_TENSORS = 2**24).
      - id: columns
        -ockpt-meaning: "which optional columns follow: bit 0 `INDEX`, bit 1 `MODEL_INDEX`, bit 2 `NAME`, bit 3 `DTYPE`, bit 4 `SHAPE`, bit 5 `ORDER`; bits 6..31 are 0"
        type: u4
        doc: Bit 0 INDEX, bit 1 MODEL_INDEX, bit 2 NAME, bit 3 DTYPE, bit 4 SHAPE, bit 5 ORDER;
          bits 6..31 are 0.
      - id: len_data
        -ockpt-meaning: "the size of each tensor's bytes"
        type: u8
        repeat: expr
        repeat-expr: num_tensors
        doc: The size of each tensor's bytes.
      - id: index
        -ockpt-meaning: "the entry index; strictly ascending"
        -ockpt-absent: "record k's index is k"
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
        -ockpt-meaning: "circle tensor index, or `NO_MODEL_INDEX` = 0xFFFFFFFF"
        -ockpt-absent: "no record has one"
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
        -ockpt-meaning: "the size of the name, 1..`MAX_NAME_LEN`, or 0 = no name"
        -ockpt-absent: "no record has a name"
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
        -ockpt-meaning: "a dtype code of 6.6, or `NO_DTYPE` = −128 (byte 0x80)"
        -ockpt-absent: "no record has a dtype"
        type: s1
        enum: onert_checkpoint_common::tensor_type
        repeat: expr
        repeat-expr: num_tensors
        if: has_dtype
        doc: Circle TensorType code, or NO_DTYPE = -128 (byte 0x80).
      - id: pad_rank
        size: (8 - _io.pos % 8) % 8
        if: has_shape
        doc: Zero bytes up to the next multiple of 8.
      - id: rank
        -ockpt-meaning: "0..`MAX_RANK`, or `NO_SHAPE` = 255"
        -ockpt-absent: "no record has a shape"
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
        -ockpt-meaning: "the record whose range is the k-th tensor range in the data section"
        -ockpt-absent: "the data are in record order"
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
        -ockpt-symbol: D
        -ockpt-meaning: "the dims of every record with a shape, in record order, each outermost first; D is the sum of those ranks"
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
        -ockpt-symbol: P
        -ockpt-meaning: "the names of the records with a name, in record order, back to back; P is the sum of `len_name`"
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
    -ockpt-spec-after:
      - id: names
        type: "u8[]"
        -ockpt-meaning: "the K slot names in slot order"
    doc: Kind 2. The optimizer kind, its K named slots, and per slot and tensor a size.
    seq:
      - id: head
        type: onert_checkpoint_common::optimizer_head
        doc: Optimizer kind, K and T (onert_checkpoint_common.ksy).
      - id: slots
        -ockpt-meaning: "slot descriptors, as 6.7"
        type: onert_checkpoint_common::slot_descriptor(_root._io)
        repeat: expr
        repeat-expr: head.num_slots
        doc: One descriptor per slot.
      - id: entries
        -ockpt-meaning: "slot j's entry for the t-th tensor record is entry j*T + t"
        type: u8
        repeat: expr
        repeat-expr: head.num_slots * head.num_tensors
        doc: Slot j's entry for the t-th tensor record is entry j * T + t, its len_data, or
          NO_STATE (2**64-1) when the tensor has no state in that slot.
  data_blocks_section:
    -ockpt-head: data_blocks_head
    doc: |
      Kind 0x100008 (optional, REQUIRED clear; SPEC.md 7.4): one CRC-32C per block of the data
      section, so that a reader verifies the blocks a read touches instead of the whole
      section. Block i is the data section's bytes i * 2**block_shift up to
      min((i + 1) * 2**block_shift, len_body) - 1 (the last block may be shorter). The data
      section keeps its own whole-section CRC in the section table.
    seq:
      - id: block_shift
        type: u4
        -ockpt-meaning: "log2 of the block size B: 6..24 (64 bytes to 16 MiB), the writer's choice"
        doc: log2 of the block size, 6..24 (64 bytes to 16 MiB), the writer's choice.
      - id: reserved
        type: u4
        -ockpt-meaning: "0"
        doc: Reserved, 0.
      - id: num_blocks
        type: u8
        -ockpt-symbol: n
        -ockpt-meaning: "n = ceil(D / B), D the data section's `len_body`"
        doc: The data section's len_body divided by the block size, rounded up (at least 1).
      - id: crc
        type: u4
        -ockpt-meaning: "`crc[i]` is the CRC-32C (6.3) of the data section's bytes i·B to min((i+1)·B, D) − 1"
        repeat: expr
        repeat-expr: num_blocks
        doc: CRC-32C of each block of the data section, in order.
    instances:
      block_size:
        value: 1 << block_shift
        doc: The block size in bytes.
  range_index_section:
    -ockpt-head: range_index_head
    doc: |
      Kind 0x100009 (optional, REQUIRED clear; SPEC.md 7.5): for each pass p of the placement
      walk (0: the tensor ranges, 1 + j: slot j's) and each group g of G = 2**group_shift
      sequence positions, start[p * num_groups + g] is where the walk stands (the end of the
      last range placed, relative to the data section's start) when pass p reaches position
      G * g; with an `order` column, position[k] is the sequence position of record k (the
      inverse of `order`). A lookup walks at most G - 1 ranges from its group's start.
    -ockpt-symbols:
      num_passes: "(1+K)"
    -ockpt-spec-after:
      - id: "`position`"
        type: "u32[n]"
        -ockpt-meaning: "only when the tensors section has an `order` column: `position[k]` is the sequence position of record k (`order[position[k]] = k`)"
    seq:
      - id: group_shift
        type: u4
        -ockpt-meaning: "log2 of the group size G: 4..16 (16 to 65,536 positions), the writer's choice"
        doc: log2 of the group size G, 4..16, the writer's choice.
      - id: reserved
        type: u4
        -ockpt-meaning: "0"
        doc: Reserved, 0.
      - id: num_groups
        type: u8
        -ockpt-symbol: m
        -ockpt-meaning: "m = ceil(n / G)"
        doc: The number of tensor records divided by G, rounded up.
      - id: start
        type: u8
        -ockpt-meaning: "`start[p·m + g]` is `pos − s_d` when pass p reaches position G·g, before it handles that position"
        repeat: expr
        repeat-expr: num_passes * num_groups
        doc: Where the walk stands, relative to the data section's start, when pass p reaches
          sequence position G * g (entry p * num_groups + g).
      - id: position
        type: u4
        repeat: expr
        repeat-expr: _root.tensors.num_tensors
        if: _root.has_tensors and _root.tensors.has_order
        doc: The sequence position of each record (order[position[k]] = k); only with an
          `order` column.
    instances:
      num_passes:
        value: '1 + (_root.has_optimizer ? _root.optimizer.head.num_slots : 0)'
        doc: One pass for the tensor ranges, one per optimizer slot.
      group_size:
        value: 1 << group_shift
        doc: G, the sequence positions per group.
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
enums:
  column_bits:
    1: index
    2: model_index
    4: name
    8: dtype
    16: shape
    32: order
