meta:
  id: onert_wof
  title: ONE weight-only format (WOF)
  application:
    - luci (Samsung ONE compiler)
    - onert-micro (Samsung ONE runtime for microcontrollers)
  file-extension: wof
  xref:
    github: https://github.com/Samsung/ONE/tree/master/compiler/luci/export
  license: Apache-2.0
  ks-version: "0.11"
  endian: le
doc: |
  The weight-only format of Samsung ONE: the constant buffers of a circle model stored apart
  from the model, so a microcontroller can keep the model in flash and load the weights from
  elsewhere. It shares its magic number and version byte with the schema-1 training checkpoint,
  so a reader tells the two apart by structure: a WOF file has an 8-byte header and its offset
  table starts at byte 8, it has no optimizer blocks and no footer, and its last entry ends at
  the end of the file.

  `num_entries` is the number of tensors of the circle model; entry i is circle tensor i and
  offset 0 means the tensor has no buffer here. Sizes are not stored: as in schema 1, a present
  entry runs to the next greater-or-equal offset in (offset, table index) order, the last one
  to the end of the file.
doc-ref:
  - spec/SPEC.md
  - https://github.com/Samsung/ONE/blob/master/compiler/luci/export/src/WeightOnlyFormatFileCreator.cpp
  - https://github.com/Samsung/ONE/blob/master/onert-micro/onert-micro/include/core/reader/OMWeightOnlyFormatReader.h
-ockpt-record: header
seq:
  - id: magic
    type: u2
    valid: 429
    doc: Magic number 429, bytes `ad 01`.
  - id: version
    type: u1
    valid: 1
    doc: Schema version byte, 1 (the same as the schema-1 checkpoint's).
  - id: reserved
    type: u1
    valid: 0
    doc: Reserved; written as 0.
  - id: num_entries
    -orig-id: n_buffers
    type: u4
    doc: Number of entries N (the number of tensors of the circle model).
instances:
  len_file:
    value: _io.size
    doc: Size of the whole file in bytes.
  ofs_entries:
    pos: 8
    type: u4
    repeat: expr
    repeat-expr: num_entries
    doc: Absolute file offset of each tensor's data; 0 when the tensor has no buffer here.
