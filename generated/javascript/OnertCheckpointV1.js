// This is a generated file! Please edit source .ksy file and use kaitai-struct-compiler to rebuild

(function (root, factory) {
  if (typeof define === 'function' && define.amd) {
    define(['exports', 'kaitai-struct/KaitaiStream'], factory);
  } else if (typeof exports === 'object' && exports !== null && typeof exports.nodeType !== 'number') {
    factory(exports, require('kaitai-struct/KaitaiStream'));
  } else {
    factory(root.OnertCheckpointV1 || (root.OnertCheckpointV1 = {}), root.KaitaiStream);
  }
})(typeof self !== 'undefined' ? self : this, function (OnertCheckpointV1_, KaitaiStream) {
/**
 * Schema 1 of the training checkpoint written and read by Samsung ONE's on-device training
 * runtimes: the trainable weights, the optimizer state (Adam's first and second moments m and v)
 * and the training position (step, epoch).
 * 
 * The file is a 20-byte header, then up to three blocks, then an 8-byte footer. Each block is an
 * offset table of `num_entries` u32 absolute file offsets followed by the bytes it points to,
 * packed back to back without padding. The weight block always follows the header; the two
 * optimizer blocks and the footer are found through the header's offsets.
 * 
 * No sizes are stored. The size of a present entry is the distance from its offset to the next
 * greater-or-equal offset of the same block, taking the entries in the order (offset, table
 * index); the last one ends where the block ends (the next block's start, or the footer). In
 * files written by onert the data is in table order, so this is `ofs[i+1] - ofs[i]`; files
 * written by onert-micro store the data in reverse operator order, so the table must be sorted.
 * 
 * Two runtimes write this revision with different conventions (dialects):
 * 
 * * onert: `num_entries` is the number of trainable tensors, in the runtime's internal iteration
 *   order (not recorded in the file); every entry is non-zero (an empty entry points at the
 *   next one); with SGD, `ofs_opt1 == ofs_other` and `ofs_opt2 == 0`; the epoch is written as 0.
 * * onert-micro: `num_entries` is the number of tensors of the circle model, entry i is circle
 *   tensor i, offset 0 means the tensor has no buffer; with SGD (or Adam whose state was never
 *   filled) `ofs_opt1 == ofs_opt2 == 0`.
 * 
 * An earlier onert exporter wrote `ofs_other == 0` and no footer; the last block then ends at
 * the end of the file.
 * 
 * The variable-size parts (the blocks and the footer) are instances, read on demand. Data slices
 * are not declared here because their sizes need the sort described above; the specification
 * document (spec/SPEC.md) gives the complete validation rules.
 * @see spec/SPEC.md
 * @see {@link https://github.com/Samsung/ONE/blob/master/runtime/onert/core/include/ir/train/Checkpoint.h|Source}
 * @see {@link https://github.com/Samsung/ONE/blob/master/runtime/onert/core/src/exporter/train/CheckpointExporter.cc|Source}
 * @see {@link https://github.com/Samsung/ONE/blob/master/runtime/onert/core/src/loader/train/CheckpointLoader.cc|Source}
 * @see {@link https://github.com/Samsung/ONE/blob/master/onert-micro/onert-micro/src/core/train/OMCheckpointSaver.cpp|Source}
 * @see {@link https://github.com/Samsung/ONE/blob/master/onert-micro/onert-micro/src/core/train/OMCheckpointLoader.cpp|Source}
 * @see {@link https://github.com/Samsung/ONE/discussions/13037|Source}
 */

var OnertCheckpointV1 = (function() {
  OnertCheckpointV1.OptimizerKind = Object.freeze({
    SGD: 0,
    ADAM: 1,

    0: "SGD",
    1: "ADAM",
  });

  function OnertCheckpointV1(_io, _parent, _root) {
    this._io = _io;
    this._parent = _parent;
    this._root = _root || this;

    this._read();
  }
  OnertCheckpointV1.prototype._read = function() {
    this.magic = this._io.readU2le();
    if (!(this.magic == 429)) {
      throw new KaitaiStream.ValidationNotEqualError(429, this.magic, this._io, "/seq/0");
    }
    this.version = this._io.readU1();
    if (!(this.version == 1)) {
      throw new KaitaiStream.ValidationNotEqualError(1, this.version, this._io, "/seq/1");
    }
    this.reserved = this._io.readU1();
    if (!(this.reserved == 0)) {
      throw new KaitaiStream.ValidationNotEqualError(0, this.reserved, this._io, "/seq/2");
    }
    this.ofsOpt1 = this._io.readU4le();
    this.ofsOpt2 = this._io.readU4le();
    this.ofsOther = this._io.readU4le();
    this.numEntries = this._io.readU4le();
  }

  /**
   * Training state.
   */

  var Footer = OnertCheckpointV1.Footer = (function() {
    function Footer(_io, _parent, _root) {
      this._io = _io;
      this._parent = _parent;
      this._root = _root;

      this._read();
    }
    Footer.prototype._read = function() {
      this.step = this._io.readU4le();
      this.epoch = this._io.readU4le();
    }

    /**
     * Training step counter (number of optimizer updates so far).
     */

    /**
     * Current epoch; onert always writes 0, onert-micro its epoch counter.
     */

    return Footer;
  })();

  /**
   * One u32 absolute file offset per entry; 0 means absent (onert-micro only).
   */

  var OffsetTable = OnertCheckpointV1.OffsetTable = (function() {
    function OffsetTable(_io, _parent, _root, numEntries) {
      this._io = _io;
      this._parent = _parent;
      this._root = _root;
      this.numEntries = numEntries;

      this._read();
    }
    OffsetTable.prototype._read = function() {
      this.ofsEntries = [];
      for (var i = 0; i < this.numEntries; i++) {
        this.ofsEntries.push(this._io.readU4le());
      }
    }

    /**
     * Absolute file offset of each entry's data.
     */

    return OffsetTable;
  })();

  /**
   * Training state; the last 8 bytes of the file.
   */
  Object.defineProperty(OnertCheckpointV1.prototype, 'footer', {
    get: function() {
      if (this._m_footer !== undefined)
        return this._m_footer;
      if (this.hasFooter) {
        var _pos = this._io.pos;
        this._io.seek(this.ofsOther);
        this._m_footer = new Footer(this._io, this, this._root);
        this._io.seek(_pos);
      }
      return this._m_footer;
    }
  });

  /**
   * False only in the footer-less files of the earlier onert exporter.
   */
  Object.defineProperty(OnertCheckpointV1.prototype, 'hasFooter', {
    get: function() {
      if (this._m_hasFooter !== undefined)
        return this._m_hasFooter;
      this._m_hasFooter = this.ofsOther != 0;
      return this._m_hasFooter;
    }
  });

  /**
   * The m block is present exactly when the v block is (Adam).
   */
  Object.defineProperty(OnertCheckpointV1.prototype, 'hasOpt1', {
    get: function() {
      if (this._m_hasOpt1 !== undefined)
        return this._m_hasOpt1;
      this._m_hasOpt1 = this.ofsOpt2 != 0;
      return this._m_hasOpt1;
    }
  });

  /**
   * Size of the whole file in bytes.
   */
  Object.defineProperty(OnertCheckpointV1.prototype, 'lenFile', {
    get: function() {
      if (this._m_lenFile !== undefined)
        return this._m_lenFile;
      this._m_lenFile = this._io.size;
      return this._m_lenFile;
    }
  });

  /**
   * Where the last block ends.
   */
  Object.defineProperty(OnertCheckpointV1.prototype, 'ofsEndOfBlocks', {
    get: function() {
      if (this._m_ofsEndOfBlocks !== undefined)
        return this._m_ofsEndOfBlocks;
      this._m_ofsEndOfBlocks = (this.hasFooter ? this.ofsOther : this.lenFile);
      return this._m_ofsEndOfBlocks;
    }
  });

  /**
   * Offset table of the first optimizer block (Adam's m).
   */
  Object.defineProperty(OnertCheckpointV1.prototype, 'opt1', {
    get: function() {
      if (this._m_opt1 !== undefined)
        return this._m_opt1;
      if (this.hasOpt1) {
        var _pos = this._io.pos;
        this._io.seek(this.ofsOpt1);
        this._m_opt1 = new OffsetTable(this._io, this, this._root, this.numEntries);
        this._io.seek(_pos);
      }
      return this._m_opt1;
    }
  });

  /**
   * Offset table of the second optimizer block (Adam's v).
   */
  Object.defineProperty(OnertCheckpointV1.prototype, 'opt2', {
    get: function() {
      if (this._m_opt2 !== undefined)
        return this._m_opt2;
      if (this.ofsOpt2 != 0) {
        var _pos = this._io.pos;
        this._io.seek(this.ofsOpt2);
        this._m_opt2 = new OffsetTable(this._io, this, this._root, this.numEntries);
        this._io.seek(_pos);
      }
      return this._m_opt2;
    }
  });

  /**
   * Adam when the second optimizer block is present, SGD otherwise.
   */
  Object.defineProperty(OnertCheckpointV1.prototype, 'optimizer', {
    get: function() {
      if (this._m_optimizer !== undefined)
        return this._m_optimizer;
      this._m_optimizer = (this.ofsOpt2 != 0 ? OnertCheckpointV1.OptimizerKind.ADAM : OnertCheckpointV1.OptimizerKind.SGD);
      return this._m_optimizer;
    }
  });

  /**
   * Offset table of the weight block; its data follows it.
   */
  Object.defineProperty(OnertCheckpointV1.prototype, 'weights', {
    get: function() {
      if (this._m_weights !== undefined)
        return this._m_weights;
      var _pos = this._io.pos;
      this._io.seek(20);
      this._m_weights = new OffsetTable(this._io, this, this._root, this.numEntries);
      this._io.seek(_pos);
      return this._m_weights;
    }
  });

  /**
   * Magic number 429, bytes `ad 01`.
   */

  /**
   * Schema version; this layout is version 1.
   */

  /**
   * Reserved; both runtimes write 0.
   */

  /**
   * Start of the first optimizer block (Adam's m). 0 when absent (onert-micro); equal to
   * `ofs_other` when absent in onert's SGD files.
   */

  /**
   * Start of the second optimizer block (Adam's v); 0 when absent.
   */

  /**
   * Start of the 8-byte training-state footer, which ends the file; 0 in the footer-less files of an earlier onert exporter.
   */

  /**
   * Number of entries N in every offset table of the file.
   */

  return OnertCheckpointV1;
})();
OnertCheckpointV1_.OnertCheckpointV1 = OnertCheckpointV1;
});
