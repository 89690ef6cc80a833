// This is a generated file! Please edit source .ksy file and use kaitai-struct-compiler to rebuild

(function (root, factory) {
  if (typeof define === 'function' && define.amd) {
    define(['exports', 'kaitai-struct/KaitaiStream', './OnertCheckpointCommon'], factory);
  } else if (typeof exports === 'object' && exports !== null && typeof exports.nodeType !== 'number') {
    factory(exports, require('kaitai-struct/KaitaiStream'), require('./OnertCheckpointCommon'));
  } else {
    factory(root.OnertCheckpointV3 || (root.OnertCheckpointV3 = {}), root.KaitaiStream, root.OnertCheckpointCommon || (root.OnertCheckpointCommon = {}));
  }
})(typeof self !== 'undefined' ? self : this, function (OnertCheckpointV3_, KaitaiStream, OnertCheckpointCommon_) {
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
 * The specification document (spec/SPEC.md, section 7) gives the complete validation rules
 * (C0 to C13, O1 to O9, P0 to P4 besides schema 2's) and the error code of each rule.
 * @see spec/SPEC.md
 * @see {@link https://github.com/Samsung/ONE/discussions/13037|Source}
 * @see {@link https://github.com/Samsung/ONE/blob/master/nnpackage/schema/circle_schema.fbs|Source}
 */

var OnertCheckpointV3 = (function() {
  OnertCheckpointV3.ColumnBits = Object.freeze({
    INDEX: 1,
    MODEL_INDEX: 2,
    NAME: 4,
    DTYPE: 8,
    SHAPE: 16,
    ORDER: 32,

    1: "INDEX",
    2: "MODEL_INDEX",
    4: "NAME",
    8: "DTYPE",
    16: "SHAPE",
    32: "ORDER",
  });

  function OnertCheckpointV3(_io, _parent, _root) {
    this._io = _io;
    this._parent = _parent;
    this._root = _root || this;

    this._read();
  }
  OnertCheckpointV3.prototype._read = function() {
    this.header = new OnertCheckpointCommon_.OnertCheckpointCommon.Header(this._io, null, null, 3);
  }

  /**
   * Kind 0x100008 (optional, REQUIRED clear; SPEC.md 7.4): one CRC-32C per block of the data
   * section, so that a reader verifies the blocks a read touches instead of the whole
   * section. Block i is the data section's bytes i * 2**block_shift up to
   * min((i + 1) * 2**block_shift, len_body) - 1 (the last block may be shorter). The data
   * section keeps its own whole-section CRC in the section table.
   */

  var DataBlocksSection = OnertCheckpointV3.DataBlocksSection = (function() {
    function DataBlocksSection(_io, _parent, _root) {
      this._io = _io;
      this._parent = _parent;
      this._root = _root;

      this._read();
    }
    DataBlocksSection.prototype._read = function() {
      this.blockShift = this._io.readU4le();
      this.reserved = this._io.readU4le();
      this.numBlocks = this._io.readU8le();
      this.crc = [];
      for (var i = 0; i < this.numBlocks; i++) {
        this.crc.push(this._io.readU4le());
      }
    }

    /**
     * The block size in bytes.
     */
    Object.defineProperty(DataBlocksSection.prototype, 'blockSize', {
      get: function() {
        if (this._m_blockSize !== undefined)
          return this._m_blockSize;
        this._m_blockSize = 1 << this.blockShift;
        return this._m_blockSize;
      }
    });

    /**
     * log2 of the block size, 6..24 (64 bytes to 16 MiB), the writer's choice.
     */

    /**
     * Reserved, 0.
     */

    /**
     * The data section's len_body divided by the block size, rounded up (at least 1).
     */

    /**
     * CRC-32C of each block of the data section, in order.
     */

    return DataBlocksSection;
  })();

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
      this.head = new OnertCheckpointCommon_.OnertCheckpointCommon.OptimizerHead(this._io, null, null);
      this.slots = [];
      for (var i = 0; i < this.head.numSlots; i++) {
        this.slots.push(new OnertCheckpointCommon_.OnertCheckpointCommon.SlotDescriptor(this._io, null, null, this._root._io));
      }
      this.entries = [];
      for (var i = 0; i < this.head.numSlots * this.head.numTensors; i++) {
        this.entries.push(this._io.readU8le());
      }
    }

    /**
     * Optimizer kind, K and T (onert_checkpoint_common.ksy).
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
   * Kind 0x100009 (optional, REQUIRED clear; SPEC.md 7.5): for each pass p of the placement
   * walk (0: the tensor ranges, 1 + j: slot j's) and each group g of G = 2**group_shift
   * sequence positions, start[p * num_groups + g] is where the walk stands (the end of the
   * last range placed, relative to the data section's start) when pass p reaches position
   * G * g; with an `order` column, position[k] is the sequence position of record k (the
   * inverse of `order`). A lookup walks at most G - 1 ranges from its group's start.
   */

  var RangeIndexSection = OnertCheckpointV3.RangeIndexSection = (function() {
    function RangeIndexSection(_io, _parent, _root) {
      this._io = _io;
      this._parent = _parent;
      this._root = _root;

      this._read();
    }
    RangeIndexSection.prototype._read = function() {
      this.groupShift = this._io.readU4le();
      this.reserved = this._io.readU4le();
      this.numGroups = this._io.readU8le();
      this.start = [];
      for (var i = 0; i < this.numPasses * this.numGroups; i++) {
        this.start.push(this._io.readU8le());
      }
      if ( ((this._root.hasTensors) && (this._root.tensors.hasOrder)) ) {
        this.position = [];
        for (var i = 0; i < this._root.tensors.numTensors; i++) {
          this.position.push(this._io.readU4le());
        }
      }
    }

    /**
     * G, the sequence positions per group.
     */
    Object.defineProperty(RangeIndexSection.prototype, 'groupSize', {
      get: function() {
        if (this._m_groupSize !== undefined)
          return this._m_groupSize;
        this._m_groupSize = 1 << this.groupShift;
        return this._m_groupSize;
      }
    });

    /**
     * One pass for the tensor ranges, one per optimizer slot.
     */
    Object.defineProperty(RangeIndexSection.prototype, 'numPasses', {
      get: function() {
        if (this._m_numPasses !== undefined)
          return this._m_numPasses;
        this._m_numPasses = 1 + (this._root.hasOptimizer ? this._root.optimizer.head.numSlots : 0);
        return this._m_numPasses;
      }
    });

    /**
     * log2 of the group size G, 4..16, the writer's choice.
     */

    /**
     * Reserved, 0.
     */

    /**
     * The number of tensor records divided by G, rounded up.
     */

    /**
     * Where the walk stands, relative to the data section's start, when pass p reaches sequence position G * g (entry p * num_groups + g).
     */

    /**
     * The sequence position of each record (order[position[k]] = k); only with an `order` column.
     */

    return RangeIndexSection;
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
   * One entry of the section table (onert_checkpoint_common.ksy) and its body.
   */

  var SectionEntry = OnertCheckpointV3.SectionEntry = (function() {
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
     * Kind 0x100008, optional (REQUIRED clear), the per-block CRC-32C of the data section (SPEC.md 7.4); a reader that does not know it skips it.
     */
    Object.defineProperty(SectionEntry.prototype, 'dataBlocks', {
      get: function() {
        if (this._m_dataBlocks !== undefined)
          return this._m_dataBlocks;
        if (this.entry.kind == 1048584) {
          var io = this._root._io;
          var _pos = io.pos;
          io.seek(this.entry.ofsBody);
          this._raw__m_dataBlocks = io.readBytes(this.entry.lenBody);
          var _io__raw__m_dataBlocks = new KaitaiStream(this._raw__m_dataBlocks);
          this._m_dataBlocks = new DataBlocksSection(_io__raw__m_dataBlocks, this, this._root);
          io.seek(_pos);
        }
        return this._m_dataBlocks;
      }
    });

    /**
     * Kind 0x100009, optional (REQUIRED clear), where the placement walk stands every 2**group_shift sequence positions of each pass (SPEC.md 7.5); a reader that does not know it skips it.
     */
    Object.defineProperty(SectionEntry.prototype, 'rangeIndex', {
      get: function() {
        if (this._m_rangeIndex !== undefined)
          return this._m_rangeIndex;
        if (this.entry.kind == 1048585) {
          var io = this._root._io;
          var _pos = io.pos;
          io.seek(this.entry.ofsBody);
          this._raw__m_rangeIndex = io.readBytes(this.entry.lenBody);
          var _io__raw__m_rangeIndex = new KaitaiStream(this._raw__m_rangeIndex);
          this._m_rangeIndex = new RangeIndexSection(_io__raw__m_rangeIndex, this, this._root);
          io.seek(_pos);
        }
        return this._m_rangeIndex;
      }
    });

    /**
     * Kind, flags, offset, size and CRC-32C of the section.
     */

    return SectionEntry;
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
      this._m_hasData =  ((this.header.numSections > 0) && (this.sectionTable[this.header.numSections - 1].entry.kind == OnertCheckpointCommon_.OnertCheckpointCommon.SectionKind.DATA)) ;
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
      this._m_hasOptimizer =  ((this.header.numSections > this.optimizerPosition) && (this.sectionTable[this.optimizerPosition].entry.kind == OnertCheckpointCommon_.OnertCheckpointCommon.SectionKind.OPTIMIZER)) ;
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
      this._m_hasTensors =  ((this.header.numSections > 0) && (this.sectionTable[0].entry.kind == OnertCheckpointCommon_.OnertCheckpointCommon.SectionKind.TENSORS)) ;
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
      this._m_numRanges = (this.hasTensors ? this.tensors.numTensors * ((this.hasOptimizer ? this.optimizer.head.numSlots : 0) + 1) : 0);
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
        this._m_ofsDataSection = this.sectionTable[this.header.numSections - 1].entry.ofsBody;
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
   * The data ranges in data order, each with its computed offset (SPEC.md 7.3).
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
   * The 64-byte header (onert_checkpoint_common.ksy), version byte 3.
   */

  return OnertCheckpointV3;
})();
OnertCheckpointV3_.OnertCheckpointV3 = OnertCheckpointV3;
});
