meta:
  id: onert_checkpoint_v1
  title: onert / onert-micro training checkpoint, schema 1
  application:
    - onert (Samsung ONE on-device training runtime)
    - onert-micro (Samsung ONE runtime for microcontrollers)
  file-extension: ckpt
  xref:
    github: https://github.com/Samsung/ONE/discussions/13037
  license: Apache-2.0
  ks-version: "0.11"
  endian: le
doc: |
  Schema 1 of the training checkpoint written and read by Samsung ONE's on-device training
  runtimes: the trainable weights, the optimizer state (Adam's first and second moments m and v)
  and the training position (step, epoch).

  The file is a 20-byte header, then up to three blocks, then an 8-byte footer. Each block is an
  offset table of `num_entries` u32 absolute file offsets followed by the bytes it points to,
  packed back to back without padding. The weight block always follows the header; the two
  optimizer blocks and the footer are found through the header's offsets.

  No sizes are stored. The size of a present entry is the distance from its offset to the next
  greater-or-equal offset of the same block, taking the entries in the order (offset, table
  index); the last one ends where the block ends (the next block's start, or the footer). In
  files written by onert the data is in table order, so this is `ofs[i+1] - ofs[i]`; files
  written by onert-micro store the data in reverse operator order, so the table must be sorted.

  Two runtimes write this revision with different conventions (dialects):

  * onert: `num_entries` is the number of trainable tensors, in the runtime's internal iteration
    order (not recorded in the file); every entry is non-zero (an empty entry points at the
    next one); with SGD, `ofs_opt1 == ofs_other` and `ofs_opt2 == 0`; the epoch is written as 0.
  * onert-micro: `num_entries` is the number of tensors of the circle model, entry i is circle
    tensor i, offset 0 means the tensor has no buffer; with SGD (or Adam whose state was never
    filled) `ofs_opt1 == ofs_opt2 == 0`.

  An earlier onert exporter wrote `ofs_other == 0` and no footer; the last block then ends at
  the end of the file.

  The variable-size parts (the blocks and the footer) are instances, read on demand. Data slices
  are not declared here because their sizes need the sort described above; the specification
  document (spec/SPEC.md) gives the complete validation rules.
doc-ref:
  - spec/SPEC.md
  - https://github.com/Samsung/ONE/blob/master/runtime/onert/core/include/ir/train/Checkpoint.h
  - https://github.com/Samsung/ONE/blob/master/runtime/onert/core/src/exporter/train/CheckpointExporter.cc
  - https://github.com/Samsung/ONE/blob/master/runtime/onert/core/src/loader/train/CheckpointLoader.cc
  - https://github.com/Samsung/ONE/blob/master/onert-micro/onert-micro/src/core/train/OMCheckpointSaver.cpp
  - https://github.com/Samsung/ONE/blob/master/onert-micro/onert-micro/src/core/train/OMCheckpointLoader.cpp
  - https://github.com/Samsung/ONE/discussions/13037
-ockpt-record: header
seq:
  - id: magic
    type: u2
    valid: 429
    doc: Magic number 429, bytes `ad 01`.
  - id: version
    type: u1
    valid: 1
    doc: Schema version; this layout is version 1.
  - id: reserved
    type: u1
    valid: 0
    doc: Reserved; both runtimes write 0.
  - id: ofs_opt1
    -orig-id: opt1_offset / m_offset
    type: u4
    doc: |
      Start of the first optimizer block (Adam's m). 0 when absent (onert-micro); equal to
      `ofs_other` when absent in onert's SGD files.
  - id: ofs_opt2
    -orig-id: opt2_offset / v_offset
    type: u4
    doc: Start of the second optimizer block (Adam's v); 0 when absent.
  - id: ofs_other
    -orig-id: other_offset / other parameters offset
    type: u4
    doc: Start of the 8-byte training-state footer, which ends the file; 0 in the footer-less
      files of an earlier onert exporter.
  - id: num_entries
    -orig-id: length / n_buffers
    type: u4
    doc: Number of entries N in every offset table of the file.
instances:
  len_file:
    value: _io.size
    doc: Size of the whole file in bytes.
  has_footer:
    value: ofs_other != 0
    doc: False only in the footer-less files of the earlier onert exporter.
  ofs_end_of_blocks:
    value: 'has_footer ? ofs_other : len_file'
    doc: Where the last block ends.
  optimizer:
    value: 'ofs_opt2 != 0 ? optimizer_kind::adam : optimizer_kind::sgd'
    enum: optimizer_kind
    doc: Adam when the second optimizer block is present, SGD otherwise.
  has_opt1:
    value: ofs_opt2 != 0
    doc: The m block is present exactly when the v block is (Adam).
  weights:
    pos: 20
    type: offset_table(num_entries)
    doc: Offset table of the weight block; its data follows it.
  opt1:
    pos: ofs_opt1
    type: offset_table(num_entries)
    if: has_opt1
    doc: Offset table of the first optimizer block (Adam's m).
  opt2:
    pos: ofs_opt2
    type: offset_table(num_entries)
    if: ofs_opt2 != 0
    doc: Offset table of the second optimizer block (Adam's v).
  footer:
    pos: ofs_other
    type: footer
    if: has_footer
    doc: Training state; the last 8 bytes of the file.
types:
  offset_table:
    doc: One u32 absolute file offset per entry; 0 means absent (onert-micro only).
    params:
      - id: num_entries
        type: u4
    seq:
      - id: ofs_entries
        type: u4
        repeat: expr
        repeat-expr: num_entries
        doc: Absolute file offset of each entry's data.
  footer:
    doc: Training state.
    seq:
      - id: step
        -orig-id: cur_step / num_step
        type: u4
        doc: Training step counter (number of optimizer updates so far).
      - id: epoch
        -orig-id: cur_epoch / num_epoch
        type: u4
        doc: Current epoch; onert always writes 0, onert-micro its epoch counter.
enums:
  optimizer_kind:
    0: sgd
    1: adam
