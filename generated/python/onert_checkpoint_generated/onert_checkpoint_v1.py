# This is a generated file! Please edit source .ksy file and use kaitai-struct-compiler to rebuild
# type: ignore

import kaitaistruct
from kaitaistruct import KaitaiStruct, KaitaiStream, BytesIO
from enum import IntEnum


if getattr(kaitaistruct, 'API_VERSION', (0, 9)) < (0, 11):
    raise Exception("Incompatible Kaitai Struct Python API: 0.11 or later is required, but you have %s" % (kaitaistruct.__version__))

class OnertCheckpointV1(KaitaiStruct):
    """Schema 1 of the training checkpoint written and read by Samsung ONE's on-device training
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
    
    .. seealso::
       spec/SPEC.md
    
    
    .. seealso::
       Source - https://github.com/Samsung/ONE/blob/master/runtime/onert/core/include/ir/train/Checkpoint.h
    
    
    .. seealso::
       Source - https://github.com/Samsung/ONE/blob/master/runtime/onert/core/src/exporter/train/CheckpointExporter.cc
    
    
    .. seealso::
       Source - https://github.com/Samsung/ONE/blob/master/runtime/onert/core/src/loader/train/CheckpointLoader.cc
    
    
    .. seealso::
       Source - https://github.com/Samsung/ONE/blob/master/onert-micro/onert-micro/src/core/train/OMCheckpointSaver.cpp
    
    
    .. seealso::
       Source - https://github.com/Samsung/ONE/blob/master/onert-micro/onert-micro/src/core/train/OMCheckpointLoader.cpp
    
    
    .. seealso::
       Source - https://github.com/Samsung/ONE/discussions/13037
    """

    class OptimizerKind(IntEnum):
        sgd = 0
        adam = 1
    def __init__(self, _io, _parent=None, _root=None):
        super(OnertCheckpointV1, self).__init__(_io)
        self._parent = _parent
        self._root = _root or self
        self._read()

    def _read(self):
        self.magic = self._io.read_u2le()
        if not self.magic == 429:
            raise kaitaistruct.ValidationNotEqualError(429, self.magic, self._io, u"/seq/0")
        self.version = self._io.read_u1()
        if not self.version == 1:
            raise kaitaistruct.ValidationNotEqualError(1, self.version, self._io, u"/seq/1")
        self.reserved = self._io.read_u1()
        if not self.reserved == 0:
            raise kaitaistruct.ValidationNotEqualError(0, self.reserved, self._io, u"/seq/2")
        self.ofs_opt1 = self._io.read_u4le()
        self.ofs_opt2 = self._io.read_u4le()
        self.ofs_other = self._io.read_u4le()
        self.num_entries = self._io.read_u4le()


    def _fetch_instances(self):
        pass
        _ = self.footer
        if hasattr(self, '_m_footer'):
            pass
            self._m_footer._fetch_instances()

        _ = self.opt1
        if hasattr(self, '_m_opt1'):
            pass
            self._m_opt1._fetch_instances()

        _ = self.opt2
        if hasattr(self, '_m_opt2'):
            pass
            self._m_opt2._fetch_instances()

        _ = self.weights
        if hasattr(self, '_m_weights'):
            pass
            self._m_weights._fetch_instances()


    class Footer(KaitaiStruct):
        """Training state."""
        def __init__(self, _io, _parent=None, _root=None):
            super(OnertCheckpointV1.Footer, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.step = self._io.read_u4le()
            self.epoch = self._io.read_u4le()


        def _fetch_instances(self):
            pass


    class OffsetTable(KaitaiStruct):
        """One u32 absolute file offset per entry; 0 means absent (onert-micro only)."""
        def __init__(self, num_entries, _io, _parent=None, _root=None):
            super(OnertCheckpointV1.OffsetTable, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self.num_entries = num_entries
            self._read()

        def _read(self):
            self.ofs_entries = []
            for i in range(self.num_entries):
                self.ofs_entries.append(self._io.read_u4le())



        def _fetch_instances(self):
            pass
            for i in range(len(self.ofs_entries)):
                pass



    @property
    def footer(self):
        """Training state; the last 8 bytes of the file."""
        if hasattr(self, '_m_footer'):
            return self._m_footer

        if self.has_footer:
            pass
            _pos = self._io.pos()
            self._io.seek(self.ofs_other)
            self._m_footer = OnertCheckpointV1.Footer(self._io, self, self._root)
            self._io.seek(_pos)

        return getattr(self, '_m_footer', None)

    @property
    def has_footer(self):
        """False only in the footer-less files of the earlier onert exporter."""
        if hasattr(self, '_m_has_footer'):
            return self._m_has_footer

        self._m_has_footer = self.ofs_other != 0
        return getattr(self, '_m_has_footer', None)

    @property
    def has_opt1(self):
        """The m block is present exactly when the v block is (Adam)."""
        if hasattr(self, '_m_has_opt1'):
            return self._m_has_opt1

        self._m_has_opt1 = self.ofs_opt2 != 0
        return getattr(self, '_m_has_opt1', None)

    @property
    def len_file(self):
        """Size of the whole file in bytes."""
        if hasattr(self, '_m_len_file'):
            return self._m_len_file

        self._m_len_file = self._io.size()
        return getattr(self, '_m_len_file', None)

    @property
    def ofs_end_of_blocks(self):
        """Where the last block ends."""
        if hasattr(self, '_m_ofs_end_of_blocks'):
            return self._m_ofs_end_of_blocks

        self._m_ofs_end_of_blocks = (self.ofs_other if self.has_footer else self.len_file)
        return getattr(self, '_m_ofs_end_of_blocks', None)

    @property
    def opt1(self):
        """Offset table of the first optimizer block (Adam's m)."""
        if hasattr(self, '_m_opt1'):
            return self._m_opt1

        if self.has_opt1:
            pass
            _pos = self._io.pos()
            self._io.seek(self.ofs_opt1)
            self._m_opt1 = OnertCheckpointV1.OffsetTable(self.num_entries, self._io, self, self._root)
            self._io.seek(_pos)

        return getattr(self, '_m_opt1', None)

    @property
    def opt2(self):
        """Offset table of the second optimizer block (Adam's v)."""
        if hasattr(self, '_m_opt2'):
            return self._m_opt2

        if self.ofs_opt2 != 0:
            pass
            _pos = self._io.pos()
            self._io.seek(self.ofs_opt2)
            self._m_opt2 = OnertCheckpointV1.OffsetTable(self.num_entries, self._io, self, self._root)
            self._io.seek(_pos)

        return getattr(self, '_m_opt2', None)

    @property
    def optimizer(self):
        """Adam when the second optimizer block is present, SGD otherwise."""
        if hasattr(self, '_m_optimizer'):
            return self._m_optimizer

        self._m_optimizer = KaitaiStream.resolve_enum(OnertCheckpointV1.OptimizerKind, (OnertCheckpointV1.OptimizerKind.adam if self.ofs_opt2 != 0 else OnertCheckpointV1.OptimizerKind.sgd))
        return getattr(self, '_m_optimizer', None)

    @property
    def weights(self):
        """Offset table of the weight block; its data follows it."""
        if hasattr(self, '_m_weights'):
            return self._m_weights

        _pos = self._io.pos()
        self._io.seek(20)
        self._m_weights = OnertCheckpointV1.OffsetTable(self.num_entries, self._io, self, self._root)
        self._io.seek(_pos)
        return getattr(self, '_m_weights', None)


