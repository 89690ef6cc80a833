// This is a generated file! Please edit source .ksy file and use kaitai-struct-compiler to rebuild

(function (root, factory) {
  if (typeof define === 'function' && define.amd) {
    define(['exports', 'kaitai-struct/KaitaiStream', './OnertCheckpointCommon'], factory);
  } else if (typeof exports === 'object' && exports !== null && typeof exports.nodeType !== 'number') {
    factory(exports, require('kaitai-struct/KaitaiStream'), require('./OnertCheckpointCommon'));
  } else {
    factory(root.OnertCheckpointV2 || (root.OnertCheckpointV2 = {}), root.KaitaiStream, root.OnertCheckpointCommon || (root.OnertCheckpointCommon = {}));
  }
})(typeof self !== 'undefined' ? self : this, function (OnertCheckpointV2_, KaitaiStream, OnertCheckpointCommon_) {
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
  OnertCheckpointV2.TensorFlags = Object.freeze({
    HAS_DTYPE: 1,
    HAS_SHAPE: 2,
    HAS_NAME: 4,
    HAS_MODEL_INDEX: 8,

    1: "HAS_DTYPE",
    2: "HAS_SHAPE",
    4: "HAS_NAME",
    8: "HAS_MODEL_INDEX",
  });

  function OnertCheckpointV2(_io, _parent, _root) {
    this._io = _io;
    this._parent = _parent;
    this._root = _root || this;

    this._read();
  }
  OnertCheckpointV2.prototype._read = function() {
    this.header = new OnertCheckpointCommon_.OnertCheckpointCommon.Header(this._io, null, null, 2);
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
      this.head = new OnertCheckpointCommon_.OnertCheckpointCommon.OptimizerHead(this._io, null, null);
      this.slots = [];
      for (var i = 0; i < this.head.numSlots; i++) {
        this.slots.push(new OnertCheckpointCommon_.OnertCheckpointCommon.SlotDescriptor(this._io, null, null, this._root._io));
      }
      this.entries = [];
      for (var i = 0; i < this.head.numSlots * this.head.numTensors; i++) {
        this.entries.push(new SlotEntry(this._io, this, this._root));
      }
    }

    /**
     * Optimizer kind, K and T (onert_checkpoint_common.ksy).
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
   * One entry of the section table (onert_checkpoint_common.ksy) and its body.
   */

  var SectionEntry = OnertCheckpointV2.SectionEntry = (function() {
    function SectionEntry(_io, _parent, _root) {
      this._io = _io;
      this._parent = _parent;
      this._root = _root;

      this._read();
    }
    SectionEntry.prototype._read = function() {
      this.entry = new OnertCheckpointCommon_.OnertCheckpointCommon.SectionEntry(this._io, null, null);
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
        io.seek(this.entry.ofsBody);
        switch (this.entry.kind) {
        case OnertCheckpointCommon_.OnertCheckpointCommon.SectionKind.OPTIMIZER:
          this._raw__m_body = io.readBytes(this.entry.lenBody);
          var _io__raw__m_body = new KaitaiStream(this._raw__m_body);
          this._m_body = new OptimizerSection(_io__raw__m_body, this, this._root);
          break;
        case OnertCheckpointCommon_.OnertCheckpointCommon.SectionKind.ORIGIN:
          this._raw__m_body = io.readBytes(this.entry.lenBody);
          var _io__raw__m_body = new KaitaiStream(this._raw__m_body);
          this._m_body = new OnertCheckpointCommon_.OnertCheckpointCommon.OriginSection(_io__raw__m_body, null, null);
          break;
        case OnertCheckpointCommon_.OnertCheckpointCommon.SectionKind.STATE:
          this._raw__m_body = io.readBytes(this.entry.lenBody);
          var _io__raw__m_body = new KaitaiStream(this._raw__m_body);
          this._m_body = new OnertCheckpointCommon_.OnertCheckpointCommon.StateSection(_io__raw__m_body, null, null, this._root._io);
          break;
        case OnertCheckpointCommon_.OnertCheckpointCommon.SectionKind.TENSORS:
          this._raw__m_body = io.readBytes(this.entry.lenBody);
          var _io__raw__m_body = new KaitaiStream(this._raw__m_body);
          this._m_body = new TensorsSection(_io__raw__m_body, this, this._root);
          break;
        default:
          this._m_body = io.readBytes(this.entry.lenBody);
          break;
        }
        io.seek(_pos);
        return this._m_body;
      }
    });

    /**
     * Kind, flags, offset, size and CRC-32C of the section.
     */

    return SectionEntry;
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
     * Entry index (schema 1's offset-table position); greater than the previous record's.
     */

    /**
     * Circle tensor index in the model's first subgraph when flag HAS_MODEL_INDEX, else 0; unique.
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
      this._io.seek(this.header.ofsSectionTable);
      this._m_sectionTable = [];
      for (var i = 0; i < this.header.numSections; i++) {
        this._m_sectionTable.push(new SectionEntry(this._io, this, this._root));
      }
      this._io.seek(_pos);
      return this._m_sectionTable;
    }
  });

  /**
   * The 64-byte header (onert_checkpoint_common.ksy), version byte 2.
   */

  return OnertCheckpointV2;
})();
OnertCheckpointV2_.OnertCheckpointV2 = OnertCheckpointV2;
});
