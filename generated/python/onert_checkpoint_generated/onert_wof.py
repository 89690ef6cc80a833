# This is a generated file! Please edit source .ksy file and use kaitai-struct-compiler to rebuild
# type: ignore

import kaitaistruct
from kaitaistruct import KaitaiStruct, KaitaiStream, BytesIO


if getattr(kaitaistruct, 'API_VERSION', (0, 9)) < (0, 11):
    raise Exception("Incompatible Kaitai Struct Python API: 0.11 or later is required, but you have %s" % (kaitaistruct.__version__))

class OnertWof(KaitaiStruct):
    """The weight-only format of Samsung ONE: the constant buffers of a circle model stored apart
    from the model, so a microcontroller can keep the model in flash and load the weights from
    elsewhere. It shares its magic number and version byte with the schema-1 training checkpoint,
    so a reader tells the two apart by structure: a WOF file has an 8-byte header and its offset
    table starts at byte 8, it has no optimizer blocks and no footer, and its last entry ends at
    the end of the file.
    
    `num_entries` is the number of tensors of the circle model; entry i is circle tensor i and
    offset 0 means the tensor has no buffer here. Sizes are not stored: as in schema 1, a present
    entry runs to the next greater-or-equal offset in (offset, table index) order, the last one
    to the end of the file.
    
    .. seealso::
       spec/SPEC.md
    
    
    .. seealso::
       Source - https://github.com/Samsung/ONE/blob/master/compiler/luci/export/src/WeightOnlyFormatFileCreator.cpp
    
    
    .. seealso::
       Source - https://github.com/Samsung/ONE/blob/master/onert-micro/onert-micro/include/core/reader/OMWeightOnlyFormatReader.h
    """
    def __init__(self, _io, _parent=None, _root=None):
        super(OnertWof, self).__init__(_io)
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
        self.num_entries = self._io.read_u4le()


    def _fetch_instances(self):
        pass
        _ = self.ofs_entries
        if hasattr(self, '_m_ofs_entries'):
            pass
            for i in range(len(self._m_ofs_entries)):
                pass



    @property
    def len_file(self):
        """Size of the whole file in bytes."""
        if hasattr(self, '_m_len_file'):
            return self._m_len_file

        self._m_len_file = self._io.size()
        return getattr(self, '_m_len_file', None)

    @property
    def ofs_entries(self):
        """Absolute file offset of each tensor's data; 0 when the tensor has no buffer here."""
        if hasattr(self, '_m_ofs_entries'):
            return self._m_ofs_entries

        _pos = self._io.pos()
        self._io.seek(8)
        self._m_ofs_entries = []
        for i in range(self.num_entries):
            self._m_ofs_entries.append(self._io.read_u4le())

        self._io.seek(_pos)
        return getattr(self, '_m_ofs_entries', None)


