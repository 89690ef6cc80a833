# This is a generated file! Please edit source .ksy file and use kaitai-struct-compiler to rebuild
# type: ignore

import kaitaistruct
from kaitaistruct import KaitaiStruct, KaitaiStream, BytesIO
from . import onert_checkpoint_common
from enum import IntEnum


if getattr(kaitaistruct, 'API_VERSION', (0, 9)) < (0, 11):
    raise Exception("Incompatible Kaitai Struct Python API: 0.11 or later is required, but you have %s" % (kaitaistruct.__version__))

class OnertCheckpointV2(KaitaiStruct):
    """Schema 2 of the training checkpoint of Samsung ONE's on-device training runtimes: the
    trainable weights (with their circle tensor index, dtype, shape and name when known), the
    optimizer state in any number of named slots, and the training state as typed key/value
    pairs.
    
    The file is a fixed 64-byte header, a section table of `num_sections` 32-byte entries right
    after it, then the sections, each starting at a multiple of 64 bytes. Every gap between two
    structures is alignment padding of fewer than 64 zero bytes, and the file ends exactly where
    its last section ends (`len_file`). Every offset in the file is absolute and 64-bit.
    
    Integrity: CRC-32C (Castagnoli, reflected polynomial 0x82F63B78; crc32c("123456789") =
    0xE3069283) over the header (with `header_crc` taken as zero), over the section table, and
    over each section's bytes.
    
    A section-table entry carries a kind and flags. Bit 0 of the flags (REQUIRED, "must
    understand") tells a reader what to do with a kind it does not know: skip the section when the
    bit is clear, refuse the file when it is set. New optional or required sections therefore need
    no new version byte. The flag of the kinds defined here is fixed (set for tensors, optimizer,
    state and data; clear for origin), and the sections are in the order tensors, optimizer,
    state, origin, other kinds by ascending kind, data last; a section with nothing in it (no
    tensor record, no state entry, no data range) is omitted.
    
    Tensor data, and optimizer-slot data, are ranges of the DATA section, each starting at a
    multiple of 64 bytes so that a mapped file can hand them out zero-copy. The ranges,
    sorted by (offset, position in the file's record order), tile the DATA section: each starts at
    the end of the previous one rounded up to 64, with zero padding in between.
    
    Names, keys and string values are UTF-8 without a terminator, stored after the fixed-size
    records of their section, in record order, back to back.
    
    The specification document (spec/SPEC.md, section 6) gives the complete validation rules,
    the limits and the error code of each rule.
    
    .. seealso::
       spec/SPEC.md
    
    
    .. seealso::
       Source - https://github.com/Samsung/ONE/discussions/13037
    
    
    .. seealso::
       Source - https://github.com/Samsung/ONE/blob/master/nnpackage/schema/circle_schema.fbs
    """

    class TensorFlags(IntEnum):
        has_dtype = 1
        has_shape = 2
        has_name = 4
        has_model_index = 8
    def __init__(self, _io, _parent=None, _root=None):
        super(OnertCheckpointV2, self).__init__(_io)
        self._parent = _parent
        self._root = _root or self
        self._read()

    def _read(self):
        self.header = onert_checkpoint_common.OnertCheckpointCommon.Header(2, self._io)


    def _fetch_instances(self):
        pass
        self.header._fetch_instances()
        _ = self.section_table
        if hasattr(self, '_m_section_table'):
            pass
            for i in range(len(self._m_section_table)):
                pass
                self._m_section_table[i]._fetch_instances()



    class OptimizerSection(KaitaiStruct):
        """Kind 2. The optimizer kind, its K named state slots, and per slot and tensor a range."""
        def __init__(self, _io, _parent=None, _root=None):
            super(OnertCheckpointV2.OptimizerSection, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.head = onert_checkpoint_common.OnertCheckpointCommon.OptimizerHead(self._io)
            self.slots = []
            for i in range(self.head.num_slots):
                self.slots.append(onert_checkpoint_common.OnertCheckpointCommon.SlotDescriptor(self._root._io, self._io))

            self.entries = []
            for i in range(self.head.num_slots * self.head.num_tensors):
                self.entries.append(OnertCheckpointV2.SlotEntry(self._io, self, self._root))



        def _fetch_instances(self):
            pass
            self.head._fetch_instances()
            for i in range(len(self.slots)):
                pass
                self.slots[i]._fetch_instances()

            for i in range(len(self.entries)):
                pass
                self.entries[i]._fetch_instances()



    class SectionEntry(KaitaiStruct):
        """One entry of the section table (onert_checkpoint_common.ksy) and its body."""
        def __init__(self, _io, _parent=None, _root=None):
            super(OnertCheckpointV2.SectionEntry, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.entry = onert_checkpoint_common.OnertCheckpointCommon.SectionEntry(self._io)


        def _fetch_instances(self):
            pass
            self.entry._fetch_instances()
            _ = self.body
            if hasattr(self, '_m_body'):
                pass
                _on = self.entry.kind
                if _on == onert_checkpoint_common.OnertCheckpointCommon.SectionKind.optimizer:
                    pass
                    self._m_body._fetch_instances()
                elif _on == onert_checkpoint_common.OnertCheckpointCommon.SectionKind.origin:
                    pass
                    self._m_body._fetch_instances()
                elif _on == onert_checkpoint_common.OnertCheckpointCommon.SectionKind.state:
                    pass
                    self._m_body._fetch_instances()
                elif _on == onert_checkpoint_common.OnertCheckpointCommon.SectionKind.tensors:
                    pass
                    self._m_body._fetch_instances()
                else:
                    pass


        @property
        def body(self):
            """The section's bytes, parsed by kind (DATA and unknown kinds stay raw bytes)."""
            if hasattr(self, '_m_body'):
                return self._m_body

            io = self._root._io
            _pos = io.pos()
            io.seek(self.entry.ofs_body)
            _on = self.entry.kind
            if _on == onert_checkpoint_common.OnertCheckpointCommon.SectionKind.optimizer:
                pass
                self._raw__m_body = io.read_bytes(self.entry.len_body)
                _io__raw__m_body = KaitaiStream(BytesIO(self._raw__m_body))
                self._m_body = OnertCheckpointV2.OptimizerSection(_io__raw__m_body, self, self._root)
            elif _on == onert_checkpoint_common.OnertCheckpointCommon.SectionKind.origin:
                pass
                self._raw__m_body = io.read_bytes(self.entry.len_body)
                _io__raw__m_body = KaitaiStream(BytesIO(self._raw__m_body))
                self._m_body = onert_checkpoint_common.OnertCheckpointCommon.OriginSection(_io__raw__m_body)
            elif _on == onert_checkpoint_common.OnertCheckpointCommon.SectionKind.state:
                pass
                self._raw__m_body = io.read_bytes(self.entry.len_body)
                _io__raw__m_body = KaitaiStream(BytesIO(self._raw__m_body))
                self._m_body = onert_checkpoint_common.OnertCheckpointCommon.StateSection(self._root._io, _io__raw__m_body)
            elif _on == onert_checkpoint_common.OnertCheckpointCommon.SectionKind.tensors:
                pass
                self._raw__m_body = io.read_bytes(self.entry.len_body)
                _io__raw__m_body = KaitaiStream(BytesIO(self._raw__m_body))
                self._m_body = OnertCheckpointV2.TensorsSection(_io__raw__m_body, self, self._root)
            else:
                pass
                self._m_body = io.read_bytes(self.entry.len_body)
            io.seek(_pos)
            return getattr(self, '_m_body', None)


    class SlotEntry(KaitaiStruct):
        """One tensor's state in one slot (16 bytes)."""
        def __init__(self, _io, _parent=None, _root=None):
            super(OnertCheckpointV2.SlotEntry, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.ofs_data = self._io.read_u8le()
            self.len_data = self._io.read_u8le()


        def _fetch_instances(self):
            pass

        @property
        def has_state(self):
            """False for the explicit NO_STATE marker."""
            if hasattr(self, '_m_has_state'):
                return self._m_has_state

            self._m_has_state = self.ofs_data != 18446744073709551615
            return getattr(self, '_m_has_state', None)


    class TensorRecord(KaitaiStruct):
        """A checkpoint tensor (72 bytes)."""
        def __init__(self, _io, _parent=None, _root=None):
            super(OnertCheckpointV2.TensorRecord, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.index = self._io.read_u4le()
            self.model_index = self._io.read_u4le()
            self.flags = self._io.read_u2le()
            self.dtype = KaitaiStream.resolve_enum(onert_checkpoint_common.OnertCheckpointCommon.TensorType, self._io.read_s1())
            self.rank = self._io.read_u1()
            self.len_name = self._io.read_u4le()
            self.ofs_name = self._io.read_u8le()
            self.ofs_data = self._io.read_u8le()
            self.len_data = self._io.read_u8le()
            self.dims = []
            for i in range(8):
                self.dims.append(self._io.read_u4le())



        def _fetch_instances(self):
            pass
            for i in range(len(self.dims)):
                pass

            _ = self.name
            if hasattr(self, '_m_name'):
                pass


        @property
        def has_dtype(self):
            """The dtype field is meaningful."""
            if hasattr(self, '_m_has_dtype'):
                return self._m_has_dtype

            self._m_has_dtype = self.flags & 1 != 0
            return getattr(self, '_m_has_dtype', None)

        @property
        def has_model_index(self):
            """The model_index field is meaningful."""
            if hasattr(self, '_m_has_model_index'):
                return self._m_has_model_index

            self._m_has_model_index = self.flags & 8 != 0
            return getattr(self, '_m_has_model_index', None)

        @property
        def has_name(self):
            """The tensor has a name."""
            if hasattr(self, '_m_has_name'):
                return self._m_has_name

            self._m_has_name = self.flags & 4 != 0
            return getattr(self, '_m_has_name', None)

        @property
        def has_shape(self):
            """The rank and dims fields are meaningful."""
            if hasattr(self, '_m_has_shape'):
                return self._m_has_shape

            self._m_has_shape = self.flags & 2 != 0
            return getattr(self, '_m_has_shape', None)

        @property
        def name(self):
            """The tensor's name."""
            if hasattr(self, '_m_name'):
                return self._m_name

            if self.has_name:
                pass
                io = self._root._io
                _pos = io.pos()
                io.seek(self.ofs_name)
                self._m_name = (io.read_bytes(self.len_name)).decode(u"UTF-8")
                io.seek(_pos)

            return getattr(self, '_m_name', None)


    class TensorsSection(KaitaiStruct):
        """Kind 1. One fixed-size record per checkpoint tensor, then the tensor names."""
        def __init__(self, _io, _parent=None, _root=None):
            super(OnertCheckpointV2.TensorsSection, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.num_tensors = self._io.read_u4le()
            self.reserved = self._io.read_u4le()
            if not self.reserved == 0:
                raise kaitaistruct.ValidationNotEqualError(0, self.reserved, self._io, u"/types/tensors_section/seq/1")
            self.records = []
            for i in range(self.num_tensors):
                self.records.append(OnertCheckpointV2.TensorRecord(self._io, self, self._root))



        def _fetch_instances(self):
            pass
            for i in range(len(self.records)):
                pass
                self.records[i]._fetch_instances()



    @property
    def section_table(self):
        """The section table, in file order of the sections."""
        if hasattr(self, '_m_section_table'):
            return self._m_section_table

        _pos = self._io.pos()
        self._io.seek(self.header.ofs_section_table)
        self._m_section_table = []
        for i in range(self.header.num_sections):
            self._m_section_table.append(OnertCheckpointV2.SectionEntry(self._io, self, self._root))

        self._io.seek(_pos)
        return getattr(self, '_m_section_table', None)


