# This is a generated file! Please edit source .ksy file and use kaitai-struct-compiler to rebuild
# type: ignore

import kaitaistruct
from kaitaistruct import KaitaiStruct, KaitaiStream, BytesIO
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

    class OptimizerKind(IntEnum):
        sgd = 0
        sgd_momentum = 1
        adam = 2

    class OriginDialect(IntEnum):
        unknown = 0
        onert = 1
        onert_micro = 2

    class OriginRevision(IntEnum):
        v1 = 1
        wof = 2

    class SectionKind(IntEnum):
        tensors = 1
        optimizer = 2
        state = 3
        data = 4
        origin = 5

    class TensorType(IntEnum):
        ggml_q8_1 = -5
        ggml_q8_0 = -4
        ggml_q4_1 = -3
        ggml_q4_0 = -2
        uint4 = -1
        float32 = 0
        float16 = 1
        int32 = 2
        uint8 = 3
        int64 = 4
        string = 5
        bool = 6
        int16 = 7
        complex64 = 8
        int8 = 9
        float64 = 10
        complex128 = 11
        uint64 = 12
        resource = 13
        variant = 14
        uint32 = 15
        uint16 = 16
        int4 = 17

    class ValueType(IntEnum):
        int = 0
        float = 1
        string = 2
        bytes = 3
    def __init__(self, _io, _parent=None, _root=None):
        super(OnertCheckpointV2, self).__init__(_io)
        self._parent = _parent
        self._root = _root or self
        self._read()

    def _read(self):
        self.magic = self._io.read_u2le()
        if not self.magic == 429:
            raise kaitaistruct.ValidationNotEqualError(429, self.magic, self._io, u"/seq/0")
        self.version = self._io.read_u1()
        if not self.version == 2:
            raise kaitaistruct.ValidationNotEqualError(2, self.version, self._io, u"/seq/1")
        self.reserved0 = self._io.read_u1()
        if not self.reserved0 == 0:
            raise kaitaistruct.ValidationNotEqualError(0, self.reserved0, self._io, u"/seq/2")
        self.header_crc = self._io.read_u4le()
        self.len_file = self._io.read_u8le()
        self.ofs_section_table = self._io.read_u8le()
        if not self.ofs_section_table == 64:
            raise kaitaistruct.ValidationNotEqualError(64, self.ofs_section_table, self._io, u"/seq/5")
        self.num_sections = self._io.read_u4le()
        self.section_table_crc = self._io.read_u4le()
        self.reserved1 = self._io.read_bytes(32)


    def _fetch_instances(self):
        pass
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
            self.kind = KaitaiStream.resolve_enum(OnertCheckpointV2.OptimizerKind, self._io.read_u4le())
            self.num_slots = self._io.read_u4le()
            self.num_tensors = self._io.read_u4le()
            self.reserved = self._io.read_u4le()
            if not self.reserved == 0:
                raise kaitaistruct.ValidationNotEqualError(0, self.reserved, self._io, u"/types/optimizer_section/seq/3")
            self.slots = []
            for i in range(self.num_slots):
                self.slots.append(OnertCheckpointV2.SlotDescriptor(self._io, self, self._root))

            self.entries = []
            for i in range(self.num_slots * self.num_tensors):
                self.entries.append(OnertCheckpointV2.SlotEntry(self._io, self, self._root))



        def _fetch_instances(self):
            pass
            for i in range(len(self.slots)):
                pass
                self.slots[i]._fetch_instances()

            for i in range(len(self.entries)):
                pass
                self.entries[i]._fetch_instances()



    class OriginSection(KaitaiStruct):
        """Kind 5, optional. Where the content came from when it was upgraded from schema 1 or WOF:
        what a downgrade needs to write the original file back byte for byte.
        """
        def __init__(self, _io, _parent=None, _root=None):
            super(OnertCheckpointV2.OriginSection, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.revision = KaitaiStream.resolve_enum(OnertCheckpointV2.OriginRevision, self._io.read_u4le())
            self.dialect = KaitaiStream.resolve_enum(OnertCheckpointV2.OriginDialect, self._io.read_u4le())
            self.flags = self._io.read_u4le()
            self.reserved = self._io.read_u4le()
            if not self.reserved == 0:
                raise kaitaistruct.ValidationNotEqualError(0, self.reserved, self._io, u"/types/origin_section/seq/3")
            self.num_entries = self._io.read_u8le()


        def _fetch_instances(self):
            pass


    class SectionEntry(KaitaiStruct):
        """One entry of the section table."""
        def __init__(self, _io, _parent=None, _root=None):
            super(OnertCheckpointV2.SectionEntry, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.kind = KaitaiStream.resolve_enum(OnertCheckpointV2.SectionKind, self._io.read_u4le())
            self.flags = self._io.read_u4le()
            self.ofs_body = self._io.read_u8le()
            self.len_body = self._io.read_u8le()
            self.crc = self._io.read_u4le()
            self.reserved = self._io.read_u4le()
            if not self.reserved == 0:
                raise kaitaistruct.ValidationNotEqualError(0, self.reserved, self._io, u"/types/section_entry/seq/5")


        def _fetch_instances(self):
            pass
            _ = self.body
            if hasattr(self, '_m_body'):
                pass
                _on = self.kind
                if _on == OnertCheckpointV2.SectionKind.optimizer:
                    pass
                    self._m_body._fetch_instances()
                elif _on == OnertCheckpointV2.SectionKind.origin:
                    pass
                    self._m_body._fetch_instances()
                elif _on == OnertCheckpointV2.SectionKind.state:
                    pass
                    self._m_body._fetch_instances()
                elif _on == OnertCheckpointV2.SectionKind.tensors:
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
            io.seek(self.ofs_body)
            _on = self.kind
            if _on == OnertCheckpointV2.SectionKind.optimizer:
                pass
                self._raw__m_body = io.read_bytes(self.len_body)
                _io__raw__m_body = KaitaiStream(BytesIO(self._raw__m_body))
                self._m_body = OnertCheckpointV2.OptimizerSection(_io__raw__m_body, self, self._root)
            elif _on == OnertCheckpointV2.SectionKind.origin:
                pass
                self._raw__m_body = io.read_bytes(self.len_body)
                _io__raw__m_body = KaitaiStream(BytesIO(self._raw__m_body))
                self._m_body = OnertCheckpointV2.OriginSection(_io__raw__m_body, self, self._root)
            elif _on == OnertCheckpointV2.SectionKind.state:
                pass
                self._raw__m_body = io.read_bytes(self.len_body)
                _io__raw__m_body = KaitaiStream(BytesIO(self._raw__m_body))
                self._m_body = OnertCheckpointV2.StateSection(_io__raw__m_body, self, self._root)
            elif _on == OnertCheckpointV2.SectionKind.tensors:
                pass
                self._raw__m_body = io.read_bytes(self.len_body)
                _io__raw__m_body = KaitaiStream(BytesIO(self._raw__m_body))
                self._m_body = OnertCheckpointV2.TensorsSection(_io__raw__m_body, self, self._root)
            else:
                pass
                self._m_body = io.read_bytes(self.len_body)
            io.seek(_pos)
            return getattr(self, '_m_body', None)

        @property
        def is_required(self):
            """The must-understand flag."""
            if hasattr(self, '_m_is_required'):
                return self._m_is_required

            self._m_is_required = self.flags & 1 != 0
            return getattr(self, '_m_is_required', None)


    class SlotDescriptor(KaitaiStruct):
        """A slot's name (16 bytes)."""
        def __init__(self, _io, _parent=None, _root=None):
            super(OnertCheckpointV2.SlotDescriptor, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.ofs_name = self._io.read_u8le()
            self.len_name = self._io.read_u4le()
            self.reserved = self._io.read_u4le()
            if not self.reserved == 0:
                raise kaitaistruct.ValidationNotEqualError(0, self.reserved, self._io, u"/types/slot_descriptor/seq/2")


        def _fetch_instances(self):
            pass
            _ = self.name
            if hasattr(self, '_m_name'):
                pass


        @property
        def name(self):
            """The slot's name (`m`, `v`, `momentum`, ...)."""
            if hasattr(self, '_m_name'):
                return self._m_name

            io = self._root._io
            _pos = io.pos()
            io.seek(self.ofs_name)
            self._m_name = (io.read_bytes(self.len_name)).decode(u"UTF-8")
            io.seek(_pos)
            return getattr(self, '_m_name', None)


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


    class StateEntry(KaitaiStruct):
        """One key/value pair (32 bytes)."""
        def __init__(self, _io, _parent=None, _root=None):
            super(OnertCheckpointV2.StateEntry, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.ofs_key = self._io.read_u8le()
            self.len_key = self._io.read_u4le()
            self.value_type = KaitaiStream.resolve_enum(OnertCheckpointV2.ValueType, self._io.read_u1())
            self.reserved = self._io.read_bytes(3)
            self.value = self._io.read_u8le()
            self.len_value = self._io.read_u8le()


        def _fetch_instances(self):
            pass
            _ = self.key
            if hasattr(self, '_m_key'):
                pass


        @property
        def key(self):
            """The key."""
            if hasattr(self, '_m_key'):
                return self._m_key

            io = self._root._io
            _pos = io.pos()
            io.seek(self.ofs_key)
            self._m_key = (io.read_bytes(self.len_key)).decode(u"UTF-8")
            io.seek(_pos)
            return getattr(self, '_m_key', None)


    class StateSection(KaitaiStruct):
        """Kind 3. Training state as typed key/value pairs."""
        def __init__(self, _io, _parent=None, _root=None):
            super(OnertCheckpointV2.StateSection, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.num_entries = self._io.read_u4le()
            self.reserved = self._io.read_u4le()
            if not self.reserved == 0:
                raise kaitaistruct.ValidationNotEqualError(0, self.reserved, self._io, u"/types/state_section/seq/1")
            self.entries = []
            for i in range(self.num_entries):
                self.entries.append(OnertCheckpointV2.StateEntry(self._io, self, self._root))



        def _fetch_instances(self):
            pass
            for i in range(len(self.entries)):
                pass
                self.entries[i]._fetch_instances()



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
            self.dtype = KaitaiStream.resolve_enum(OnertCheckpointV2.TensorType, self._io.read_s1())
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
        self._io.seek(self.ofs_section_table)
        self._m_section_table = []
        for i in range(self.num_sections):
            self._m_section_table.append(OnertCheckpointV2.SectionEntry(self._io, self, self._root))

        self._io.seek(_pos)
        return getattr(self, '_m_section_table', None)


