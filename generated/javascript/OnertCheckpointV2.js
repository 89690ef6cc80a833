// This is a generated file! Please edit source .ksy file and use kaitai-struct-compiler to rebuild

(function (root, factory) {
  if (typeof define === 'function' && define.amd) {
    define(['exports', 'kaitai-struct/KaitaiStream'], factory);
  } else if (typeof exports === 'object' && exports !== null && typeof exports.nodeType !== 'number') {
    factory(exports, require('kaitai-struct/KaitaiStream'));
  } else {
    factory(root.OnertCheckpointV2 || (root.OnertCheckpointV2 = {}), root.KaitaiStream);
  }
})(typeof self !== 'undefined' ? self : this, function (OnertCheckpointV2_, KaitaiStream) {
/**
 * Schema 2 of the training checkpoint of Samsung ONE's on-device training runtimes: the
 * trainable weights (with their circle tensor index, dtype, shape and name when known), the
 * optimizer state in any number of named slots, and the training state as typed key/value
 * pairs.
 * 
 * The file is a fixed 64-byte header, a section table of `num_sections` 32-byte entries right
 * after it, then the sections, each starting at a multiple of 64 bytes. Every gap between two
 * structures is alignment padding of fewer than 64 zero bytes, and the file ends exactly where
 * its last section ends (`len_file`). Every offset in the file is absolute and 64-bit.
 * 
 * Integrity: CRC-32C (Castagnoli, reflected polynomial 0x82F63B78; crc32c("123456789") =
 * 0xE3069283) over the header (with `header_crc` taken as zero), over the section table, and
 * over each section's bytes.
 * 
 * A section-table entry carries a kind and flags. Bit 0 of the flags (REQUIRED, "must
 * understand") tells a reader what to do with a kind it does not know: skip the section when the
 * bit is clear, refuse the file when it is set. New optional or required sections therefore need
 * no new version byte. The flag of the kinds defined here is fixed (set for tensors, optimizer,
 * state and data; clear for origin), and the sections are in the order tensors, optimizer,
 * state, origin, other kinds by ascending kind, data last; a section with nothing in it (no
 * tensor record, no state entry, no data range) is omitted.
 * 
 * Tensor data, and optimizer-slot data, are ranges of the DATA section, each starting at a
 * multiple of 64 bytes so that a mapped file can hand them out zero-copy. The ranges,
 * sorted by (offset, position in the file's record order), tile the DATA section: each starts at
 * the end of the previous one rounded up to 64, with zero padding in between.
 * 
 * Names, keys and string values are UTF-8 without a terminator, stored after the fixed-size
 * records of their section, in record order, back to back.
 * 
 * The specification document (spec/SPEC.md, section 6) gives the complete validation rules,
 * the limits and the error code of each rule.
 * @see spec/SPEC.md
 * @see {@link https://github.com/Samsung/ONE/discussions/13037|Source}
 * @see {@link https://github.com/Samsung/ONE/blob/master/nnpackage/schema/circle_schema.fbs|Source}
 */

var OnertCheckpointV2 = (function() {
  OnertCheckpointV2.OptimizerKind = Object.freeze({
    SGD: 0,
    SGD_MOMENTUM: 1,
    ADAM: 2,

    0: "SGD",
    1: "SGD_MOMENTUM",
    2: "ADAM",
  });

  OnertCheckpointV2.OriginDialect = Object.freeze({
    UNKNOWN: 0,
    ONERT: 1,
    ONERT_MICRO: 2,

    0: "UNKNOWN",
    1: "ONERT",
    2: "ONERT_MICRO",
  });

  OnertCheckpointV2.OriginRevision = Object.freeze({
    V1: 1,
    WOF: 2,

    1: "V1",
    2: "WOF",
  });

  OnertCheckpointV2.SectionKind = Object.freeze({
    TENSORS: 1,
    OPTIMIZER: 2,
    STATE: 3,
    DATA: 4,
    ORIGIN: 5,

    1: "TENSORS",
    2: "OPTIMIZER",
    3: "STATE",
    4: "DATA",
    5: "ORIGIN",
  });

  OnertCheckpointV2.TensorType = Object.freeze({
    GGML_Q8_1: -5,
    GGML_Q8_0: -4,
    GGML_Q4_1: -3,
    GGML_Q4_0: -2,
    UINT4: -1,
    FLOAT32: 0,
    FLOAT16: 1,
    INT32: 2,
    UINT8: 3,
    INT64: 4,
    STRING: 5,
    BOOL: 6,
    INT16: 7,
    COMPLEX64: 8,
    INT8: 9,
    FLOAT64: 10,
    COMPLEX128: 11,
    UINT64: 12,
    RESOURCE: 13,
    VARIANT: 14,
    UINT32: 15,
    UINT16: 16,
    INT4: 17,

    "-5": "GGML_Q8_1",
    "-4": "GGML_Q8_0",
    "-3": "GGML_Q4_1",
    "-2": "GGML_Q4_0",
    "-1": "UINT4",
    0: "FLOAT32",
    1: "FLOAT16",
    2: "INT32",
    3: "UINT8",
    4: "INT64",
    5: "STRING",
    6: "BOOL",
    7: "INT16",
    8: "COMPLEX64",
    9: "INT8",
    10: "FLOAT64",
    11: "COMPLEX128",
    12: "UINT64",
    13: "RESOURCE",
    14: "VARIANT",
    15: "UINT32",
    16: "UINT16",
    17: "INT4",
  });

  OnertCheckpointV2.ValueType = Object.freeze({
    INT: 0,
    FLOAT: 1,
    STRING: 2,
    BYTES: 3,

    0: "INT",
    1: "FLOAT",
    2: "STRING",
    3: "BYTES",
  });

  function OnertCheckpointV2(_io, _parent, _root) {
    this._io = _io;
    this._parent = _parent;
    this._root = _root || this;

    this._read();
  }
  OnertCheckpointV2.prototype._read = function() {
    this.magic = this._io.readU2le();
    if (!(this.magic == 429)) {
      throw new KaitaiStream.ValidationNotEqualError(429, this.magic, this._io, "/seq/0");
    }
    this.version = this._io.readU1();
    if (!(this.version == 2)) {
      throw new KaitaiStream.ValidationNotEqualError(2, this.version, this._io, "/seq/1");
    }
    this.reserved0 = this._io.readU1();
    if (!(this.reserved0 == 0)) {
      throw new KaitaiStream.ValidationNotEqualError(0, this.reserved0, this._io, "/seq/2");
    }
    this.headerCrc = this._io.readU4le();
    this.lenFile = this._io.readU8le();
    this.ofsSectionTable = this._io.readU8le();
    if (!(this.ofsSectionTable == 64)) {
      throw new KaitaiStream.ValidationNotEqualError(64, this.ofsSectionTable, this._io, "/seq/5");
    }
    this.numSections = this._io.readU4le();
    this.sectionTableCrc = this._io.readU4le();
    this.reserved1 = this._io.readBytes(32);
  }

  /**
   * Kind 2. The optimizer kind, its K named state slots, and per slot and tensor a range.
   */

  var OptimizerSection = OnertCheckpointV2.OptimizerSection = (function() {
    function OptimizerSection(_io, _parent, _root) {
      this._io = _io;
      this._parent = _parent;
      this._root = _root;

      this._read();
    }
    OptimizerSection.prototype._read = function() {
      this.kind = this._io.readU4le();
      this.numSlots = this._io.readU4le();
      this.numTensors = this._io.readU4le();
      this.reserved = this._io.readU4le();
      if (!(this.reserved == 0)) {
        throw new KaitaiStream.ValidationNotEqualError(0, this.reserved, this._io, "/types/optimizer_section/seq/3");
      }
      this.slots = [];
      for (var i = 0; i < this.numSlots; i++) {
        this.slots.push(new SlotDescriptor(this._io, this, this._root));
      }
      this.entries = [];
      for (var i = 0; i < this.numSlots * this.numTensors; i++) {
        this.entries.push(new SlotEntry(this._io, this, this._root));
      }
    }

    /**
     * Optimizer kind; known kinds fix K and the slot names.
     */

    /**
     * K, the number of state slots (at most MAX_SLOTS = 16).
     */

    /**
     * T, equal to the tensors section's num_tensors.
     */

    /**
     * Reserved, 0.
     */

    /**
     * One descriptor per slot.
     */

    /**
     * Slot k's entry for the t-th tensor record is entry k * T + t.
     */

    return OptimizerSection;
  })();

  /**
   * Kind 5, optional. Where the content came from when it was upgraded from schema 1 or WOF:
   * what a downgrade needs to write the original file back byte for byte.
   */

  var OriginSection = OnertCheckpointV2.OriginSection = (function() {
    function OriginSection(_io, _parent, _root) {
      this._io = _io;
      this._parent = _parent;
      this._root = _root;

      this._read();
    }
    OriginSection.prototype._read = function() {
      this.revision = this._io.readU4le();
      this.dialect = this._io.readU4le();
      this.flags = this._io.readU4le();
      this.reserved = this._io.readU4le();
      if (!(this.reserved == 0)) {
        throw new KaitaiStream.ValidationNotEqualError(0, this.reserved, this._io, "/types/origin_section/seq/3");
      }
      this.numEntries = this._io.readU8le();
    }

    /**
     * The revision upgraded from.
     */

    /**
     * The schema-1 dialect of the original file.
     */

    /**
     * Bit 0 FOOTERLESS (an early onert file without the step/epoch footer); others 0.
     */

    /**
     * Reserved, 0.
     */

    /**
     * N, the length of the original file's offset tables.
     */

    return OriginSection;
  })();

  /**
   * One entry of the section table.
   */

  var SectionEntry = OnertCheckpointV2.SectionEntry = (function() {
    function SectionEntry(_io, _parent, _root) {
      this._io = _io;
      this._parent = _parent;
      this._root = _root;

      this._read();
    }
    SectionEntry.prototype._read = function() {
      this.kind = this._io.readU4le();
      this.flags = this._io.readU4le();
      this.ofsBody = this._io.readU8le();
      this.lenBody = this._io.readU8le();
      this.crc = this._io.readU4le();
      this.reserved = this._io.readU4le();
      if (!(this.reserved == 0)) {
        throw new KaitaiStream.ValidationNotEqualError(0, this.reserved, this._io, "/types/section_entry/seq/5");
      }
    }

    /**
     * The section's bytes, parsed by kind (DATA and unknown kinds stay raw bytes).
     */
    Object.defineProperty(SectionEntry.prototype, 'body', {
      get: function() {
        if (this._m_body !== undefined)
          return this._m_body;
        var io = this._root._io;
        var _pos = io.pos;
        io.seek(this.ofsBody);
        switch (this.kind) {
        case OnertCheckpointV2.SectionKind.OPTIMIZER:
          this._raw__m_body = io.readBytes(this.lenBody);
          var _io__raw__m_body = new KaitaiStream(this._raw__m_body);
          this._m_body = new OptimizerSection(_io__raw__m_body, this, this._root);
          break;
        case OnertCheckpointV2.SectionKind.ORIGIN:
          this._raw__m_body = io.readBytes(this.lenBody);
          var _io__raw__m_body = new KaitaiStream(this._raw__m_body);
          this._m_body = new OriginSection(_io__raw__m_body, this, this._root);
          break;
        case OnertCheckpointV2.SectionKind.STATE:
          this._raw__m_body = io.readBytes(this.lenBody);
          var _io__raw__m_body = new KaitaiStream(this._raw__m_body);
          this._m_body = new StateSection(_io__raw__m_body, this, this._root);
          break;
        case OnertCheckpointV2.SectionKind.TENSORS:
          this._raw__m_body = io.readBytes(this.lenBody);
          var _io__raw__m_body = new KaitaiStream(this._raw__m_body);
          this._m_body = new TensorsSection(_io__raw__m_body, this, this._root);
          break;
        default:
          this._m_body = io.readBytes(this.lenBody);
          break;
        }
        io.seek(_pos);
        return this._m_body;
      }
    });

    /**
     * The must-understand flag.
     */
    Object.defineProperty(SectionEntry.prototype, 'isRequired', {
      get: function() {
        if (this._m_isRequired !== undefined)
          return this._m_isRequired;
        this._m_isRequired = (this.flags & 1) != 0;
        return this._m_isRequired;
      }
    });

    /**
     * What the section holds; unknown kinds are skipped or refused by their REQUIRED flag.
     */

    /**
     * Bit 0 REQUIRED (must understand); bits 1..31 reserved, 0.
     */

    /**
     * Absolute offset of the section, a multiple of 64.
     */

    /**
     * Size of the section in bytes.
     */

    /**
     * CRC-32C of the section's `len_body` bytes.
     */

    /**
     * Reserved, 0.
     */

    return SectionEntry;
  })();

  /**
   * A slot's name (16 bytes).
   */

  var SlotDescriptor = OnertCheckpointV2.SlotDescriptor = (function() {
    function SlotDescriptor(_io, _parent, _root) {
      this._io = _io;
      this._parent = _parent;
      this._root = _root;

      this._read();
    }
    SlotDescriptor.prototype._read = function() {
      this.ofsName = this._io.readU8le();
      this.lenName = this._io.readU4le();
      this.reserved = this._io.readU4le();
      if (!(this.reserved == 0)) {
        throw new KaitaiStream.ValidationNotEqualError(0, this.reserved, this._io, "/types/slot_descriptor/seq/2");
      }
    }

    /**
     * The slot's name (`m`, `v`, `momentum`, ...).
     */
    Object.defineProperty(SlotDescriptor.prototype, 'name', {
      get: function() {
        if (this._m_name !== undefined)
          return this._m_name;
        var io = this._root._io;
        var _pos = io.pos;
        io.seek(this.ofsName);
        this._m_name = KaitaiStream.bytesToStr(io.readBytes(this.lenName), "UTF-8");
        io.seek(_pos);
        return this._m_name;
      }
    });

    /**
     * Absolute offset of the UTF-8 slot name.
     */

    /**
     * Slot name length (1..MAX_NAME_LEN).
     */

    /**
     * Reserved, 0.
     */

    return SlotDescriptor;
  })();

  /**
   * One tensor's state in one slot (16 bytes).
   */

  var SlotEntry = OnertCheckpointV2.SlotEntry = (function() {
    function SlotEntry(_io, _parent, _root) {
      this._io = _io;
      this._parent = _parent;
      this._root = _root;

      this._read();
    }
    SlotEntry.prototype._read = function() {
      this.ofsData = this._io.readU8le();
      this.lenData = this._io.readU8le();
    }

    /**
     * False for the explicit NO_STATE marker.
     */
    Object.defineProperty(SlotEntry.prototype, 'hasState', {
      get: function() {
        if (this._m_hasState !== undefined)
          return this._m_hasState;
        this._m_hasState = this.ofsData != 18446744073709551615;
        return this._m_hasState;
      }
    });

    /**
     * Absolute offset inside the DATA section, or NO_STATE (2**64-1) when the tensor has no state in this slot.
     */

    /**
     * Size of the state in bytes; 0 with NO_STATE.
     */

    return SlotEntry;
  })();

  /**
   * One key/value pair (32 bytes).
   */

  var StateEntry = OnertCheckpointV2.StateEntry = (function() {
    function StateEntry(_io, _parent, _root) {
      this._io = _io;
      this._parent = _parent;
      this._root = _root;

      this._read();
    }
    StateEntry.prototype._read = function() {
      this.ofsKey = this._io.readU8le();
      this.lenKey = this._io.readU4le();
      this.valueType = this._io.readU1();
      this.reserved = this._io.readBytes(3);
      this.value = this._io.readU8le();
      this.lenValue = this._io.readU8le();
    }

    /**
     * The key.
     */
    Object.defineProperty(StateEntry.prototype, 'key', {
      get: function() {
        if (this._m_key !== undefined)
          return this._m_key;
        var io = this._root._io;
        var _pos = io.pos;
        io.seek(this.ofsKey);
        this._m_key = KaitaiStream.bytesToStr(io.readBytes(this.lenKey), "UTF-8");
        io.seek(_pos);
        return this._m_key;
      }
    });

    /**
     * Absolute offset of the UTF-8 key.
     */

    /**
     * Key length (1..MAX_KEY_LEN = 255).
     */

    /**
     * Type of the value.
     */

    /**
     * Reserved, all zero.
     */

    /**
     * int64 (two's complement) or float64 bits for int and float; absolute offset of the value bytes for string and bytes.
     */

    /**
     * Length of a string or bytes value (at most MAX_VALUE_LEN = 2**20); 0 for int and float.
     */

    return StateEntry;
  })();

  /**
   * Kind 3. Training state as typed key/value pairs.
   */

  var StateSection = OnertCheckpointV2.StateSection = (function() {
    function StateSection(_io, _parent, _root) {
      this._io = _io;
      this._parent = _parent;
      this._root = _root;

      this._read();
    }
    StateSection.prototype._read = function() {
      this.numEntries = this._io.readU4le();
      this.reserved = this._io.readU4le();
      if (!(this.reserved == 0)) {
        throw new KaitaiStream.ValidationNotEqualError(0, this.reserved, this._io, "/types/state_section/seq/1");
      }
      this.entries = [];
      for (var i = 0; i < this.numEntries; i++) {
        this.entries.push(new StateEntry(this._io, this, this._root));
      }
    }

    /**
     * Number of entries (at most MAX_STATE_ENTRIES = 1024).
     */

    /**
     * Reserved, 0.
     */

    /**
     * The entries; each key is unique.
     */

    return StateSection;
  })();

  /**
   * A checkpoint tensor (72 bytes).
   */

  var TensorRecord = OnertCheckpointV2.TensorRecord = (function() {
    function TensorRecord(_io, _parent, _root) {
      this._io = _io;
      this._parent = _parent;
      this._root = _root;

      this._read();
    }
    TensorRecord.prototype._read = function() {
      this.index = this._io.readU4le();
      this.modelIndex = this._io.readU4le();
      this.flags = this._io.readU2le();
      this.dtype = this._io.readS1();
      this.rank = this._io.readU1();
      this.lenName = this._io.readU4le();
      this.ofsName = this._io.readU8le();
      this.ofsData = this._io.readU8le();
      this.lenData = this._io.readU8le();
      this.dims = [];
      for (var i = 0; i < 8; i++) {
        this.dims.push(this._io.readU4le());
      }
    }

    /**
     * The dtype field is meaningful.
     */
    Object.defineProperty(TensorRecord.prototype, 'hasDtype', {
      get: function() {
        if (this._m_hasDtype !== undefined)
          return this._m_hasDtype;
        this._m_hasDtype = (this.flags & 1) != 0;
        return this._m_hasDtype;
      }
    });

    /**
     * The model_index field is meaningful.
     */
    Object.defineProperty(TensorRecord.prototype, 'hasModelIndex', {
      get: function() {
        if (this._m_hasModelIndex !== undefined)
          return this._m_hasModelIndex;
        this._m_hasModelIndex = (this.flags & 8) != 0;
        return this._m_hasModelIndex;
      }
    });

    /**
     * The tensor has a name.
     */
    Object.defineProperty(TensorRecord.prototype, 'hasName', {
      get: function() {
        if (this._m_hasName !== undefined)
          return this._m_hasName;
        this._m_hasName = (this.flags & 4) != 0;
        return this._m_hasName;
      }
    });

    /**
     * The rank and dims fields are meaningful.
     */
    Object.defineProperty(TensorRecord.prototype, 'hasShape', {
      get: function() {
        if (this._m_hasShape !== undefined)
          return this._m_hasShape;
        this._m_hasShape = (this.flags & 2) != 0;
        return this._m_hasShape;
      }
    });

    /**
     * The tensor's name.
     */
    Object.defineProperty(TensorRecord.prototype, 'name', {
      get: function() {
        if (this._m_name !== undefined)
          return this._m_name;
        if (this.hasName) {
          var io = this._root._io;
          var _pos = io.pos;
          io.seek(this.ofsName);
          this._m_name = KaitaiStream.bytesToStr(io.readBytes(this.lenName), "UTF-8");
          io.seek(_pos);
        }
        return this._m_name;
      }
    });

    /**
     * Entry index, unique in the file (schema 1's offset-table position).
     */

    /**
     * Circle tensor index in the model's first subgraph when flag HAS_MODEL_INDEX, else 0.
     */

    /**
     * Bit 0 HAS_DTYPE, bit 1 HAS_SHAPE, bit 2 HAS_NAME, bit 3 HAS_MODEL_INDEX; others 0.
     */

    /**
     * Circle TensorType code of the elements when HAS_DTYPE, else 0.
     */

    /**
     * Number of dimensions (0..MAX_RANK = 8) when HAS_SHAPE, else 0.
     */

    /**
     * Name length in bytes (1..MAX_NAME_LEN = 1024) when HAS_NAME, else 0.
     */

    /**
     * Absolute offset of the UTF-8 name when HAS_NAME, else 0.
     */

    /**
     * Absolute offset of the tensor's bytes inside the DATA section, a multiple of 64.
     */

    /**
     * Size of the tensor's bytes.
     */

    /**
     * The first `rank` values are the dimensions, outermost first; the rest are 0.
     */

    return TensorRecord;
  })();

  /**
   * Kind 1. One fixed-size record per checkpoint tensor, then the tensor names.
   */

  var TensorsSection = OnertCheckpointV2.TensorsSection = (function() {
    function TensorsSection(_io, _parent, _root) {
      this._io = _io;
      this._parent = _parent;
      this._root = _root;

      this._read();
    }
    TensorsSection.prototype._read = function() {
      this.numTensors = this._io.readU4le();
      this.reserved = this._io.readU4le();
      if (!(this.reserved == 0)) {
        throw new KaitaiStream.ValidationNotEqualError(0, this.reserved, this._io, "/types/tensors_section/seq/1");
      }
      this.records = [];
      for (var i = 0; i < this.numTensors; i++) {
        this.records.push(new TensorRecord(this._io, this, this._root));
      }
    }

    /**
     * Number of tensor records (at most MAX_TENSORS = 2**24).
     */

    /**
     * Reserved, 0.
     */

    /**
     * The tensor records, in strictly ascending entry index order.
     */

    return TensorsSection;
  })();

  /**
   * The section table, in file order of the sections.
   */
  Object.defineProperty(OnertCheckpointV2.prototype, 'sectionTable', {
    get: function() {
      if (this._m_sectionTable !== undefined)
        return this._m_sectionTable;
      var _pos = this._io.pos;
      this._io.seek(this.ofsSectionTable);
      this._m_sectionTable = [];
      for (var i = 0; i < this.numSections; i++) {
        this._m_sectionTable.push(new SectionEntry(this._io, this, this._root));
      }
      this._io.seek(_pos);
      return this._m_sectionTable;
    }
  });

  /**
   * Magic number 429, bytes `ad 01`, as in schema 1.
   */

  /**
   * Schema version; this layout is version 2.
   */

  /**
   * Reserved, 0.
   */

  /**
   * CRC-32C of the 64 header bytes, computed with these four bytes set to zero.
   */

  /**
   * Size of the whole file in bytes; a shorter file is truncated, a longer one has trailing bytes.
   */

  /**
   * Offset of the section table; always 64, right after the header.
   */

  /**
   * Number of 32-byte entries in the section table (at most MAX_SECTIONS = 64).
   */

  /**
   * CRC-32C of the `num_sections * 32` bytes of the section table.
   */

  /**
   * Reserved, all zero.
   */

  return OnertCheckpointV2;
})();
OnertCheckpointV2_.OnertCheckpointV2 = OnertCheckpointV2;
});
