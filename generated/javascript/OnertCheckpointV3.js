// This is a generated file! Please edit source .ksy file and use kaitai-struct-compiler to rebuild

(function (root, factory) {
  if (typeof define === 'function' && define.amd) {
    define(['exports', 'kaitai-struct/KaitaiStream'], factory);
  } else if (typeof exports === 'object' && exports !== null && typeof exports.nodeType !== 'number') {
    factory(exports, require('kaitai-struct/KaitaiStream'));
  } else {
    factory(root.OnertCheckpointV3 || (root.OnertCheckpointV3 = {}), root.KaitaiStream);
  }
})(typeof self !== 'undefined' ? self : this, function (OnertCheckpointV3_, KaitaiStream) {
/**
 * Schema 3 of the training checkpoint of Samsung ONE's on-device training runtimes: schema 2
 * (onert_checkpoint_v2.ksy) with smaller tables, for checkpoints of many small tensors.
 * 
 * The container is schema 2's: a 64-byte header (version byte 3), a section table of 32-byte
 * entries, the sections at multiples of 64 in the order tensors, optimizer, state, origin, other
 * kinds by ascending kind, data last, CRC-32C over the header, the table and each section. The
 * state and origin sections are schema 2's.
 * 
 * What changes: the tensors section stores the tensors as columns (a u64 size per tensor, then
 * only the optional columns some tensor uses: entry index, model index, name length, dtype,
 * rank, data order, dims, names), each at a multiple of 8 from the section's start; an
 * optimizer-slot entry is a single u64 size (NO_STATE = 2**64-1 for no state); and no data
 * offset is stored. The data ranges are placed by rule: in data order (the tensor records in the
 * order of the `order` column, or in record order without it, then each slot's entries that are
 * not NO_STATE in the same order of records), each at the end of the previous one rounded up to
 * a(len) = 64 for len >= 64, else the smallest power of two not below len (a(0) = a(1) = 1),
 * relative to the data section's start, with zero padding between them. The `ranges` instance
 * below computes every range's place.
 * 
 * The specification document (spec/SPEC.md, section 6.7) gives the complete validation rules
 * (C0 to C13, O1 to O9, P0 to P4 besides schema 2's) and the error code of each rule.
 * @see spec/SPEC.md
 * @see {@link https://github.com/Samsung/ONE/discussions/13037|Source}
 * @see {@link https://github.com/Samsung/ONE/blob/master/nnpackage/schema/circle_schema.fbs|Source}
 */

var OnertCheckpointV3 = (function() {
  OnertCheckpointV3.OptimizerKind = Object.freeze({
    SGD: 0,
    SGD_MOMENTUM: 1,
    ADAM: 2,

    0: "SGD",
    1: "SGD_MOMENTUM",
    2: "ADAM",
  });

  OnertCheckpointV3.OriginDialect = Object.freeze({
    UNKNOWN: 0,
    ONERT: 1,
    ONERT_MICRO: 2,

    0: "UNKNOWN",
    1: "ONERT",
    2: "ONERT_MICRO",
  });

  OnertCheckpointV3.OriginRevision = Object.freeze({
    V1: 1,
    WOF: 2,

    1: "V1",
    2: "WOF",
  });

  OnertCheckpointV3.SectionKind = Object.freeze({
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

  OnertCheckpointV3.TensorType = Object.freeze({
    NO_DTYPE: -128,
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

    "-128": "NO_DTYPE",
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

  OnertCheckpointV3.ValueType = Object.freeze({
    INT: 0,
    FLOAT: 1,
    STRING: 2,
    BYTES: 3,

    0: "INT",
    1: "FLOAT",
    2: "STRING",
    3: "BYTES",
  });

  function OnertCheckpointV3(_io, _parent, _root) {
    this._io = _io;
    this._parent = _parent;
    this._root = _root || this;

    this._read();
  }
  OnertCheckpointV3.prototype._read = function() {
    this.magic = this._io.readU2le();
    if (!(this.magic == 429)) {
      throw new KaitaiStream.ValidationNotEqualError(429, this.magic, this._io, "/seq/0");
    }
    this.version = this._io.readU1();
    if (!(this.version == 3)) {
      throw new KaitaiStream.ValidationNotEqualError(3, this.version, this._io, "/seq/1");
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
   * The i-th data range in data order, placed by rule: its start is the end of the previous
   * range (the data section's start for the first) rounded up to a(len_data).
   */

  var DataRange = OnertCheckpointV3.DataRange = (function() {
    function DataRange(_io, _parent, _root, i) {
      this._io = _io;
      this._parent = _parent;
      this._root = _root;
      this.i = i;

      this._read();
    }
    DataRange.prototype._read = function() {
    }

    /**
     * a(len_data), 64 for 64 bytes or more, else the smallest power of two not below it.
     */
    Object.defineProperty(DataRange.prototype, 'alignment', {
      get: function() {
        if (this._m_alignment !== undefined)
          return this._m_alignment;
        this._m_alignment = (this.lenData > 32 ? 64 : (this.lenData > 16 ? 32 : (this.lenData > 8 ? 16 : (this.lenData > 4 ? 8 : (this.lenData > 2 ? 4 : (this.lenData > 1 ? 2 : 1))))));
        return this._m_alignment;
      }
    });

    /**
     * The range's bytes.
     */
    Object.defineProperty(DataRange.prototype, 'body', {
      get: function() {
        if (this._m_body !== undefined)
          return this._m_body;
        var io = this._root._io;
        var _pos = io.pos;
        io.seek(this.ofsData);
        this._m_body = io.readBytes(this.lenData);
        io.seek(_pos);
        return this._m_body;
      }
    });

    /**
     * Where the range ends.
     */
    Object.defineProperty(DataRange.prototype, 'end', {
      get: function() {
        if (this._m_end !== undefined)
          return this._m_end;
        this._m_end = this.ofsData + this.lenData;
        return this._m_end;
      }
    });

    /**
     * The slot entry (j * T + k).
     */
    Object.defineProperty(DataRange.prototype, 'entry', {
      get: function() {
        if (this._m_entry !== undefined)
          return this._m_entry;
        if (this.slot >= 0) {
          this._m_entry = this._root.optimizer.entries[this.slot * this.numTensors + this.record];
        }
        return this._m_entry;
      }
    });

    /**
     * False for a NO_STATE slot entry, which has no range (here 0 bytes taking no room).
     */
    Object.defineProperty(DataRange.prototype, 'hasState', {
      get: function() {
        if (this._m_hasState !== undefined)
          return this._m_hasState;
        this._m_hasState =  ((this.slot < 0) || (this.entry != 18446744073709551615)) ;
        return this._m_hasState;
      }
    });

    /**
     * The range's size.
     */
    Object.defineProperty(DataRange.prototype, 'lenData', {
      get: function() {
        if (this._m_lenData !== undefined)
          return this._m_lenData;
        this._m_lenData = (this.slot < 0 ? this._root.tensors.lenData[this.record] : (this.hasState ? this.entry : 0));
        return this._m_lenData;
      }
    });

    /**
     * n.
     */
    Object.defineProperty(DataRange.prototype, 'numTensors', {
      get: function() {
        if (this._m_numTensors !== undefined)
          return this._m_numTensors;
        this._m_numTensors = this._root.tensors.numTensors;
        return this._m_numTensors;
      }
    });

    /**
     * The range's absolute offset (relative to the data section's start, a multiple of 64, so the alignment holds in the file too).
     */
    Object.defineProperty(DataRange.prototype, 'ofsData', {
      get: function() {
        if (this._m_ofsData !== undefined)
          return this._m_ofsData;
        this._m_ofsData = Math.floor(((this.previousEnd + this.alignment) - 1) / this.alignment) * this.alignment;
        return this._m_ofsData;
      }
    });

    /**
     * The position in the order of records.
     */
    Object.defineProperty(DataRange.prototype, 'position', {
      get: function() {
        if (this._m_position !== undefined)
          return this._m_position;
        this._m_position = KaitaiStream.mod(this.i, this.numTensors);
        return this._m_position;
      }
    });

    /**
     * Where the previous range ends (the data section's start for the first).
     */
    Object.defineProperty(DataRange.prototype, 'previousEnd', {
      get: function() {
        if (this._m_previousEnd !== undefined)
          return this._m_previousEnd;
        this._m_previousEnd = (this.i == 0 ? this._root.ofsDataSection : this._root.ranges[this.i - 1].end);
        return this._m_previousEnd;
      }
    });

    /**
     * The tensor record k the range belongs to.
     */
    Object.defineProperty(DataRange.prototype, 'record', {
      get: function() {
        if (this._m_record !== undefined)
          return this._m_record;
        this._m_record = (this._root.tensors.hasOrder ? this._root.tensors.order[this.position] : this.position);
        return this._m_record;
      }
    });

    /**
     * -1 for a tensor range, else the optimizer slot j.
     */
    Object.defineProperty(DataRange.prototype, 'slot', {
      get: function() {
        if (this._m_slot !== undefined)
          return this._m_slot;
        this._m_slot = Math.floor(this.i / this.numTensors) - 1;
        return this._m_slot;
      }
    });

    return DataRange;
  })();

  /**
   * Kind 2. The optimizer kind, its K named slots, and per slot and tensor a size.
   */

  var OptimizerSection = OnertCheckpointV3.OptimizerSection = (function() {
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
        this.entries.push(this._io.readU8le());
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
     * Slot j's entry for the t-th tensor record is entry j * T + t, its len_data, or NO_STATE (2**64-1) when the tensor has no state in that slot.
     */

    return OptimizerSection;
  })();

  /**
   * Kind 5, optional. What an upgraded file was (as schema 2).
   */

  var OriginSection = OnertCheckpointV3.OriginSection = (function() {
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
   * One record's part of the dims column (nothing for NO_SHAPE).
   */

  var RecordDims = OnertCheckpointV3.RecordDims = (function() {
    function RecordDims(_io, _parent, _root, rank) {
      this._io = _io;
      this._parent = _parent;
      this._root = _root;
      this.rank = rank;

      this._read();
    }
    RecordDims.prototype._read = function() {
      this.dims = [];
      for (var i = 0; i < (this.rank == 255 ? 0 : this.rank); i++) {
        this.dims.push(this._io.readU4le());
      }
    }

    /**
     * False for NO_SHAPE.
     */
    Object.defineProperty(RecordDims.prototype, 'hasShape', {
      get: function() {
        if (this._m_hasShape !== undefined)
          return this._m_hasShape;
        this._m_hasShape = this.rank != 255;
        return this._m_hasShape;
      }
    });

    /**
     * The record's dimensions, outermost first.
     */

    return RecordDims;
  })();

  /**
   * One record's part of the names column (nothing for a record without a name).
   */

  var RecordName = OnertCheckpointV3.RecordName = (function() {
    function RecordName(_io, _parent, _root, lenName) {
      this._io = _io;
      this._parent = _parent;
      this._root = _root;
      this.lenName = lenName;

      this._read();
    }
    RecordName.prototype._read = function() {
      this.name = KaitaiStream.bytesToStr(this._io.readBytes(this.lenName), "UTF-8");
    }

    /**
     * False for a record without a name.
     */
    Object.defineProperty(RecordName.prototype, 'hasName', {
      get: function() {
        if (this._m_hasName !== undefined)
          return this._m_hasName;
        this._m_hasName = this.lenName != 0;
        return this._m_hasName;
      }
    });

    /**
     * The record's UTF-8 name.
     */

    return RecordName;
  })();

  /**
   * One entry of the section table (as schema 2).
   */

  var SectionEntry = OnertCheckpointV3.SectionEntry = (function() {
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
        case OnertCheckpointV3.SectionKind.OPTIMIZER:
          this._raw__m_body = io.readBytes(this.lenBody);
          var _io__raw__m_body = new KaitaiStream(this._raw__m_body);
          this._m_body = new OptimizerSection(_io__raw__m_body, this, this._root);
          break;
        case OnertCheckpointV3.SectionKind.ORIGIN:
          this._raw__m_body = io.readBytes(this.lenBody);
          var _io__raw__m_body = new KaitaiStream(this._raw__m_body);
          this._m_body = new OriginSection(_io__raw__m_body, this, this._root);
          break;
        case OnertCheckpointV3.SectionKind.STATE:
          this._raw__m_body = io.readBytes(this.lenBody);
          var _io__raw__m_body = new KaitaiStream(this._raw__m_body);
          this._m_body = new StateSection(_io__raw__m_body, this, this._root);
          break;
        case OnertCheckpointV3.SectionKind.TENSORS:
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
   * A slot's name (16 bytes, as schema 2).
   */

  var SlotDescriptor = OnertCheckpointV3.SlotDescriptor = (function() {
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
   * One key/value pair (32 bytes).
   */

  var StateEntry = OnertCheckpointV3.StateEntry = (function() {
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
   * Kind 3. Training state as typed key/value pairs (as schema 2).
   */

  var StateSection = OnertCheckpointV3.StateSection = (function() {
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
   * Kind 1. The tensors as columns: the count, a bit set of the optional columns present, the
   * size column, then each present optional column at the next multiple of 8 from the
   * section's start (zero bytes before it). A column is present only if some record has a
   * value other than its default; the section ends where its last column ends.
   */

  var TensorsSection = OnertCheckpointV3.TensorsSection = (function() {
    function TensorsSection(_io, _parent, _root) {
      this._io = _io;
      this._parent = _parent;
      this._root = _root;

      this._read();
    }
    TensorsSection.prototype._read = function() {
      this.numTensors = this._io.readU4le();
      this.columns = this._io.readU4le();
      this.lenData = [];
      for (var i = 0; i < this.numTensors; i++) {
        this.lenData.push(this._io.readU8le());
      }
      if (this.hasIndex) {
        this.index = [];
        for (var i = 0; i < this.numTensors; i++) {
          this.index.push(this._io.readU4le());
        }
      }
      if (this.hasModelIndex) {
        this.padModelIndex = this._io.readBytes(KaitaiStream.mod(8 - KaitaiStream.mod(this._io.pos, 8), 8));
      }
      if (this.hasModelIndex) {
        this.modelIndex = [];
        for (var i = 0; i < this.numTensors; i++) {
          this.modelIndex.push(this._io.readU4le());
        }
      }
      if (this.hasName) {
        this.padLenName = this._io.readBytes(KaitaiStream.mod(8 - KaitaiStream.mod(this._io.pos, 8), 8));
      }
      if (this.hasName) {
        this.lenName = [];
        for (var i = 0; i < this.numTensors; i++) {
          this.lenName.push(this._io.readU4le());
        }
      }
      if (this.hasDtype) {
        this.padDtype = this._io.readBytes(KaitaiStream.mod(8 - KaitaiStream.mod(this._io.pos, 8), 8));
      }
      if (this.hasDtype) {
        this.dtype = [];
        for (var i = 0; i < this.numTensors; i++) {
          this.dtype.push(this._io.readS1());
        }
      }
      if (this.hasShape) {
        this.padRank = this._io.readBytes(KaitaiStream.mod(8 - KaitaiStream.mod(this._io.pos, 8), 8));
      }
      if (this.hasShape) {
        this.rank = [];
        for (var i = 0; i < this.numTensors; i++) {
          this.rank.push(this._io.readU1());
        }
      }
      if (this.hasOrder) {
        this.padOrder = this._io.readBytes(KaitaiStream.mod(8 - KaitaiStream.mod(this._io.pos, 8), 8));
      }
      if (this.hasOrder) {
        this.order = [];
        for (var i = 0; i < this.numTensors; i++) {
          this.order.push(this._io.readU4le());
        }
      }
      if (this.hasShape) {
        this.padDims = this._io.readBytes(KaitaiStream.mod(8 - KaitaiStream.mod(this._io.pos, 8), 8));
      }
      if (this.hasShape) {
        this.dims = [];
        for (var i = 0; i < this.numTensors; i++) {
          this.dims.push(new RecordDims(this._io, this, this._root, this.rank[i]));
        }
      }
      if (this.hasName) {
        this.padNames = this._io.readBytes(KaitaiStream.mod(8 - KaitaiStream.mod(this._io.pos, 8), 8));
      }
      if (this.hasName) {
        this.names = [];
        for (var i = 0; i < this.numTensors; i++) {
          this.names.push(new RecordName(this._io, this, this._root, this.lenName[i]));
        }
      }
    }

    /**
     * The `dtype` column is present.
     */
    Object.defineProperty(TensorsSection.prototype, 'hasDtype', {
      get: function() {
        if (this._m_hasDtype !== undefined)
          return this._m_hasDtype;
        this._m_hasDtype = (this.columns & 8) != 0;
        return this._m_hasDtype;
      }
    });

    /**
     * The `index` column is present.
     */
    Object.defineProperty(TensorsSection.prototype, 'hasIndex', {
      get: function() {
        if (this._m_hasIndex !== undefined)
          return this._m_hasIndex;
        this._m_hasIndex = (this.columns & 1) != 0;
        return this._m_hasIndex;
      }
    });

    /**
     * The `model_index` column is present.
     */
    Object.defineProperty(TensorsSection.prototype, 'hasModelIndex', {
      get: function() {
        if (this._m_hasModelIndex !== undefined)
          return this._m_hasModelIndex;
        this._m_hasModelIndex = (this.columns & 2) != 0;
        return this._m_hasModelIndex;
      }
    });

    /**
     * The `len_name` and `names` columns are present.
     */
    Object.defineProperty(TensorsSection.prototype, 'hasName', {
      get: function() {
        if (this._m_hasName !== undefined)
          return this._m_hasName;
        this._m_hasName = (this.columns & 4) != 0;
        return this._m_hasName;
      }
    });

    /**
     * The `order` column is present.
     */
    Object.defineProperty(TensorsSection.prototype, 'hasOrder', {
      get: function() {
        if (this._m_hasOrder !== undefined)
          return this._m_hasOrder;
        this._m_hasOrder = (this.columns & 32) != 0;
        return this._m_hasOrder;
      }
    });

    /**
     * The `rank` and `dims` columns are present.
     */
    Object.defineProperty(TensorsSection.prototype, 'hasShape', {
      get: function() {
        if (this._m_hasShape !== undefined)
          return this._m_hasShape;
        this._m_hasShape = (this.columns & 16) != 0;
        return this._m_hasShape;
      }
    });

    /**
     * n, the number of tensor records (1..MAX_TENSORS = 2**24).
     */

    /**
     * Bit 0 INDEX, bit 1 MODEL_INDEX, bit 2 NAME, bit 3 DTYPE, bit 4 SHAPE, bit 5 ORDER; bits 6..31 are 0.
     */

    /**
     * The size of each tensor's bytes.
     */

    /**
     * The entry index of each record, strictly ascending; without the column record k's index is k.
     */

    /**
     * Zero bytes up to the next multiple of 8.
     */

    /**
     * Circle tensor index (first subgraph), or NO_MODEL_INDEX = 0xFFFFFFFF.
     */

    /**
     * Zero bytes up to the next multiple of 8.
     */

    /**
     * Name length (1..MAX_NAME_LEN = 1024), or 0 for a record without a name.
     */

    /**
     * Zero bytes up to the next multiple of 8.
     */

    /**
     * Circle TensorType code, or NO_DTYPE = -128 (byte 0x80).
     */

    /**
     * Zero bytes up to the next multiple of 8.
     */

    /**
     * Number of dimensions (0..MAX_RANK = 8), or NO_SHAPE = 255.
     */

    /**
     * Zero bytes up to the next multiple of 8.
     */

    /**
     * The data order, a permutation of the records; order[k] is the record whose range is the k-th tensor range of the data section.
     */

    /**
     * Zero bytes up to the next multiple of 8 (present even when every rank is 0).
     */

    /**
     * The dims of each record with a shape, outermost first, back to back in record order.
     */

    /**
     * Zero bytes up to the next multiple of 8.
     */

    /**
     * The names of the records with a name, back to back in record order.
     */

    return TensorsSection;
  })();

  /**
   * The data section, when present, is the last section.
   */
  Object.defineProperty(OnertCheckpointV3.prototype, 'hasData', {
    get: function() {
      if (this._m_hasData !== undefined)
        return this._m_hasData;
      this._m_hasData =  ((this.numSections > 0) && (this.sectionTable[this.numSections - 1].kind == OnertCheckpointV3.SectionKind.DATA)) ;
      return this._m_hasData;
    }
  });

  /**
   * Whether an optimizer section is present.
   */
  Object.defineProperty(OnertCheckpointV3.prototype, 'hasOptimizer', {
    get: function() {
      if (this._m_hasOptimizer !== undefined)
        return this._m_hasOptimizer;
      this._m_hasOptimizer =  ((this.numSections > this.optimizerPosition) && (this.sectionTable[this.optimizerPosition].kind == OnertCheckpointV3.SectionKind.OPTIMIZER)) ;
      return this._m_hasOptimizer;
    }
  });

  /**
   * The tensors section, when present, is the first section.
   */
  Object.defineProperty(OnertCheckpointV3.prototype, 'hasTensors', {
    get: function() {
      if (this._m_hasTensors !== undefined)
        return this._m_hasTensors;
      this._m_hasTensors =  ((this.numSections > 0) && (this.sectionTable[0].kind == OnertCheckpointV3.SectionKind.TENSORS)) ;
      return this._m_hasTensors;
    }
  });

  /**
   * One range per tensor record, and one per slot and record (NO_STATE entries included, as 0-byte ranges that take no room).
   */
  Object.defineProperty(OnertCheckpointV3.prototype, 'numRanges', {
    get: function() {
      if (this._m_numRanges !== undefined)
        return this._m_numRanges;
      this._m_numRanges = (this.hasTensors ? this.tensors.numTensors * ((this.hasOptimizer ? this.optimizer.numSlots : 0) + 1) : 0);
      return this._m_numRanges;
    }
  });

  /**
   * Where the data section starts; the first range starts here.
   */
  Object.defineProperty(OnertCheckpointV3.prototype, 'ofsDataSection', {
    get: function() {
      if (this._m_ofsDataSection !== undefined)
        return this._m_ofsDataSection;
      if (this.hasData) {
        this._m_ofsDataSection = this.sectionTable[this.numSections - 1].ofsBody;
      }
      return this._m_ofsDataSection;
    }
  });

  /**
   * The optimizer section.
   */
  Object.defineProperty(OnertCheckpointV3.prototype, 'optimizer', {
    get: function() {
      if (this._m_optimizer !== undefined)
        return this._m_optimizer;
      if (this.hasOptimizer) {
        this._m_optimizer = this.sectionTable[this.optimizerPosition].body;
      }
      return this._m_optimizer;
    }
  });

  /**
   * Where an optimizer section sits in the table (right after the tensors section).
   */
  Object.defineProperty(OnertCheckpointV3.prototype, 'optimizerPosition', {
    get: function() {
      if (this._m_optimizerPosition !== undefined)
        return this._m_optimizerPosition;
      this._m_optimizerPosition = (this.hasTensors ? 1 : 0);
      return this._m_optimizerPosition;
    }
  });

  /**
   * The data ranges in data order, each with its computed offset (SPEC.md 6.7.3).
   */
  Object.defineProperty(OnertCheckpointV3.prototype, 'ranges', {
    get: function() {
      if (this._m_ranges !== undefined)
        return this._m_ranges;
      this._m_ranges = [];
      for (var i = 0; i < this.numRanges; i++) {
        this._m_ranges.push(new DataRange(this._io, this, this._root, i));
      }
      return this._m_ranges;
    }
  });

  /**
   * The section table, in file order of the sections.
   */
  Object.defineProperty(OnertCheckpointV3.prototype, 'sectionTable', {
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
   * The tensors section.
   */
  Object.defineProperty(OnertCheckpointV3.prototype, 'tensors', {
    get: function() {
      if (this._m_tensors !== undefined)
        return this._m_tensors;
      if (this.hasTensors) {
        this._m_tensors = this.sectionTable[0].body;
      }
      return this._m_tensors;
    }
  });

  /**
   * Magic number 429, bytes `ad 01`, as in schemas 1 and 2.
   */

  /**
   * Schema version; this layout is version 3.
   */

  /**
   * Reserved, 0.
   */

  /**
   * CRC-32C of the 64 header bytes, computed with these four bytes set to zero.
   */

  /**
   * Size of the whole file in bytes.
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

  return OnertCheckpointV3;
})();
OnertCheckpointV3_.OnertCheckpointV3 = OnertCheckpointV3;
});
