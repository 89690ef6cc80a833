// This is a generated file! Please edit source .ksy file and use kaitai-struct-compiler to rebuild

(function (root, factory) {
  if (typeof define === 'function' && define.amd) {
    define(['exports', 'kaitai-struct/KaitaiStream'], factory);
  } else if (typeof exports === 'object' && exports !== null && typeof exports.nodeType !== 'number') {
    factory(exports, require('kaitai-struct/KaitaiStream'));
  } else {
    factory(root.OnertWof || (root.OnertWof = {}), root.KaitaiStream);
  }
})(typeof self !== 'undefined' ? self : this, function (OnertWof_, KaitaiStream) {
/**
 * The weight-only format of Samsung ONE: the constant buffers of a circle model stored apart
 * from the model, so a microcontroller can keep the model in flash and load the weights from
 * elsewhere. It shares its magic number and version byte with the schema-1 training checkpoint,
 * so a reader tells the two apart by structure: a WOF file has an 8-byte header and its offset
 * table starts at byte 8, it has no optimizer blocks and no footer, and its last entry ends at
 * the end of the file.
 * 
 * `num_entries` is the number of tensors of the circle model; entry i is circle tensor i and
 * offset 0 means the tensor has no buffer here. Sizes are not stored: as in schema 1, a present
 * entry runs to the next greater-or-equal offset in (offset, table index) order, the last one
 * to the end of the file.
 * @see spec/SPEC.md
 * @see {@link https://github.com/Samsung/ONE/blob/master/compiler/luci/export/src/WeightOnlyFormatFileCreator.cpp|Source}
 * @see {@link https://github.com/Samsung/ONE/blob/master/onert-micro/onert-micro/include/core/reader/OMWeightOnlyFormatReader.h|Source}
 */

var OnertWof = (function() {
  function OnertWof(_io, _parent, _root) {
    this._io = _io;
    this._parent = _parent;
    this._root = _root || this;

    this._read();
  }
  OnertWof.prototype._read = function() {
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
    this.numEntries = this._io.readU4le();
  }

  /**
   * Size of the whole file in bytes.
   */
  Object.defineProperty(OnertWof.prototype, 'lenFile', {
    get: function() {
      if (this._m_lenFile !== undefined)
        return this._m_lenFile;
      this._m_lenFile = this._io.size;
      return this._m_lenFile;
    }
  });

  /**
   * Absolute file offset of each tensor's data; 0 when the tensor has no buffer here.
   */
  Object.defineProperty(OnertWof.prototype, 'ofsEntries', {
    get: function() {
      if (this._m_ofsEntries !== undefined)
        return this._m_ofsEntries;
      var _pos = this._io.pos;
      this._io.seek(8);
      this._m_ofsEntries = [];
      for (var i = 0; i < this.numEntries; i++) {
        this._m_ofsEntries.push(this._io.readU4le());
      }
      this._io.seek(_pos);
      return this._m_ofsEntries;
    }
  });

  /**
   * Magic number 429, bytes `ad 01`.
   */

  /**
   * Schema version byte, 1 (the same as the schema-1 checkpoint's).
   */

  /**
   * Reserved; written as 0.
   */

  /**
   * Number of entries N (the number of tensors of the circle model).
   */

  return OnertWof;
})();
OnertWof_.OnertWof = OnertWof;
});
