// This is a generated file! Please edit source .ksy file and use kaitai-struct-compiler to rebuild

(function (root, factory) {
  if (typeof define === 'function' && define.amd) {
    define(['exports', 'kaitai-struct/KaitaiStream'], factory);
  } else if (typeof exports === 'object' && exports !== null && typeof exports.nodeType !== 'number') {
    factory(exports, require('kaitai-struct/KaitaiStream'));
  } else {
    factory(root.OnertCheckpointCommon || (root.OnertCheckpointCommon = {}), root.KaitaiStream);
  }
})(typeof self !== 'undefined' ? self : this, function (OnertCheckpointCommon_, KaitaiStream) {
/**
 * The structures schemas 2 and 3 (onert_checkpoint_v2.ksy, onert_checkpoint_v3.ksy) have in
 * common, imported by both: the 64-byte header (the version byte is the schema's), the 32-byte
 * section-table entry, the slot descriptor, the state and origin sections, and the codes
 * (section kinds, flags, optimizer kinds, value types, circle tensor types).
 * 
 * The keys `-ockpt-limits` and `-ockpt-constants` are this project's (Kaitai ignores keys that
 * start with a dash): spec/regenerate.py turns them, with every fixed-size type and enum here,
 * into the layout module the library reads and writes through
 * (generated/python/onert_checkpoint_generated/layout.py), the C header spec/c/ockpt_layout.h
 * and the field tables of spec/SPEC.md.
 * @see spec/SPEC.md
 */

var OnertCheckpointCommon = (function() {
  OnertCheckpointCommon.OptimizerKind = Object.freeze({
    SGD: 0,
    SGD_MOMENTUM: 1,
    ADAM: 2,

    0: "SGD",
    1: "SGD_MOMENTUM",
    2: "ADAM",
  });

  OnertCheckpointCommon.OriginDialect = Object.freeze({
    UNKNOWN: 0,
    ONERT: 1,
    ONERT_MICRO: 2,

    0: "UNKNOWN",
    1: "ONERT",
    2: "ONERT_MICRO",
  });

  OnertCheckpointCommon.OriginFlags = Object.freeze({
    FOOTERLESS: 1,

    1: "FOOTERLESS",
  });

  OnertCheckpointCommon.OriginRevision = Object.freeze({
    V1: 1,
    WOF: 2,

    1: "V1",
    2: "WOF",
  });

  OnertCheckpointCommon.SectionFlags = Object.freeze({
    REQUIRED: 1,

    1: "REQUIRED",
  });

  OnertCheckpointCommon.SectionKind = Object.freeze({
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

  OnertCheckpointCommon.TensorType = Object.freeze({
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

  OnertCheckpointCommon.ValueType = Object.freeze({
    INT: 0,
    FLOAT: 1,
    STRING: 2,
    BYTES: 3,

    0: "INT",
    1: "FLOAT",
    2: "STRING",
    3: "BYTES",
  });

  function OnertCheckpointCommon(_io, _parent, _root) {
    this._io = _io;
    this._parent = _parent;
    this._root = _root || this;

    this._read();
  }
  OnertCheckpointCommon.prototype._read = function() {
  }

  /**
   * The 64-byte header at offset 0.
   */

  var Header = OnertCheckpointCommon.Header = (function() {
    function Header(_io, _parent, _root, expectedVersion) {
      this._io = _io;
      this._parent = _parent;
      this._root = _root;
      this.expectedVersion = expectedVersion;

      this._read();
    }
    Header.prototype._read = function() {
      this.magic = this._io.readU2le();
      if (!(this.magic == 429)) {
        throw new KaitaiStream.ValidationNotEqualError(429, this.magic, this._io, "/types/header/seq/0");
      }
      this.version = this._io.readU1();
      if (!(this.version == this.expectedVersion)) {
        throw new KaitaiStream.ValidationNotEqualError(this.expectedVersion, this.version, this._io, "/types/header/seq/1");
      }
      this.reserved0 = this._io.readU1();
      if (!(this.reserved0 == 0)) {
        throw new KaitaiStream.ValidationNotEqualError(0, this.reserved0, this._io, "/types/header/seq/2");
      }
      this.headerCrc = this._io.readU4le();
      this.lenFile = this._io.readU8le();
      this.ofsSectionTable = this._io.readU8le();
      if (!(this.ofsSectionTable == 64)) {
        throw new KaitaiStream.ValidationNotEqualError(64, this.ofsSectionTable, this._io, "/types/header/seq/5");
      }
      this.numSections = this._io.readU4le();
      this.sectionTableCrc = this._io.readU4le();
      this.reserved1 = this._io.readBytes(32);
    }

    /**
     * Magic number 429, bytes `ad 01`, as in schema 1.
     */

    /**
     * Schema version (2 or 3).
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

    /**
     * The schema's version byte.
     */

    return Header;
  })();

  /**
   * The first 16 bytes of the optimizer section (kind 2).
   */

  var OptimizerHead = OnertCheckpointCommon.OptimizerHead = (function() {
    function OptimizerHead(_io, _parent, _root) {
      this._io = _io;
      this._parent = _parent;
      this._root = _root;

      this._read();
    }
    OptimizerHead.prototype._read = function() {
      this.kind = this._io.readU4le();
      this.numSlots = this._io.readU4le();
      this.numTensors = this._io.readU4le();
      this.reserved = this._io.readU4le();
      if (!(this.reserved == 0)) {
        throw new KaitaiStream.ValidationNotEqualError(0, this.reserved, this._io, "/types/optimizer_head/seq/3");
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

    return OptimizerHead;
  })();

  /**
   * Kind 5, optional (24 bytes). Where the content came from when it was upgraded from schema
   * 1 or WOF: what a downgrade needs to write the original file back byte for byte.
   */

  var OriginSection = OnertCheckpointCommon.OriginSection = (function() {
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
   * One entry of the section table (32 bytes).
   */

  var SectionEntry = OnertCheckpointCommon.SectionEntry = (function() {
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
     * Size of the section in bytes (may be 0).
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

  var SlotDescriptor = OnertCheckpointCommon.SlotDescriptor = (function() {
    function SlotDescriptor(_io, _parent, _root, fileIo) {
      this._io = _io;
      this._parent = _parent;
      this._root = _root;
      this.fileIo = fileIo;

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
        var io = this.fileIo;
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

    /**
     * The whole file's stream (the name's offset is absolute).
     */

    return SlotDescriptor;
  })();

  /**
   * One key/value pair (32 bytes).
   */

  var StateEntry = OnertCheckpointCommon.StateEntry = (function() {
    function StateEntry(_io, _parent, _root, fileIo) {
      this._io = _io;
      this._parent = _parent;
      this._root = _root;
      this.fileIo = fileIo;

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
        var io = this.fileIo;
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

    /**
     * The whole file's stream (the key's offset is absolute).
     */

    return StateEntry;
  })();

  /**
   * Kind 3. Training state as typed key/value pairs.
   */

  var StateSection = OnertCheckpointCommon.StateSection = (function() {
    function StateSection(_io, _parent, _root, fileIo) {
      this._io = _io;
      this._parent = _parent;
      this._root = _root;
      this.fileIo = fileIo;

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
        this.entries.push(new StateEntry(this._io, this, this._root, this.fileIo));
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

    /**
     * The whole file's stream (the keys' offsets are absolute).
     */

    return StateSection;
  })();

  return OnertCheckpointCommon;
})();
OnertCheckpointCommon_.OnertCheckpointCommon = OnertCheckpointCommon;
});
