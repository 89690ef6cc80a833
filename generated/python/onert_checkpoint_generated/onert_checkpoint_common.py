# This is a generated file! Please edit source .ksy file and use kaitai-struct-compiler to rebuild
# type: ignore

import kaitaistruct
from kaitaistruct import KaitaiStruct, KaitaiStream, BytesIO
from enum import IntEnum


if getattr(kaitaistruct, 'API_VERSION', (0, 9)) < (0, 11):
    raise Exception("Incompatible Kaitai Struct Python API: 0.11 or later is required, but you have %s" % (kaitaistruct.__version__))

class OnertCheckpointCommon(KaitaiStruct):
    """The structures schemas 2 and 3 (onert_checkpoint_v2.ksy, onert_checkpoint_v3.ksy) have in
    common, imported by both: the 64-byte header (the version byte is the schema's), the 32-byte
    section-table entry, the slot descriptor, the state and origin sections, and the codes
    (section kinds, flags, optimizer kinds, value types, circle tensor types).
    
    The keys `-ockpt-limits` and `-ockpt-constants` are this project's (Kaitai ignores keys that
    start with a dash): spec/regenerate.py turns them, with every fixed-size type and enum here,
    into the layout module the library reads and writes through
    (generated/python/onert_checkpoint_generated/layout.py), the C header spec/c/ockpt_layout.h
    and the field tables of spec/SPEC.md.
    
    .. seealso::
       spec/SPEC.md
    """

    class OptimizerKind(IntEnum):
        sgd = 0
        sgd_momentum = 1
        adam = 2

    class OriginDialect(IntEnum):
        unknown = 0
        onert = 1
        onert_micro = 2

    class OriginFlags(IntEnum):
        footerless = 1

    class OriginRevision(IntEnum):
        v1 = 1
        wof = 2

    class SectionFlags(IntEnum):
        required = 1

    class SectionKind(IntEnum):
        tensors = 1
        optimizer = 2
        state = 3
        data = 4
        origin = 5

    class TensorType(IntEnum):
        no_dtype = -128
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
        super(OnertCheckpointCommon, self).__init__(_io)
        self._parent = _parent
        self._root = _root or self
        self._read()

    def _read(self):
        pass


    def _fetch_instances(self):
        pass

    class Header(KaitaiStruct):
        """The 64-byte header at offset 0."""
        def __init__(self, expected_version, _io, _parent=None, _root=None):
            super(OnertCheckpointCommon.Header, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self.expected_version = expected_version
            self._read()

        def _read(self):
            self.magic = self._io.read_u2le()
            if not self.magic == 429:
                raise kaitaistruct.ValidationNotEqualError(429, self.magic, self._io, u"/types/header/seq/0")
            self.version = self._io.read_u1()
            if not self.version == self.expected_version:
                raise kaitaistruct.ValidationNotEqualError(self.expected_version, self.version, self._io, u"/types/header/seq/1")
            self.reserved0 = self._io.read_u1()
            if not self.reserved0 == 0:
                raise kaitaistruct.ValidationNotEqualError(0, self.reserved0, self._io, u"/types/header/seq/2")
            self.header_crc = self._io.read_u4le()
            self.len_file = self._io.read_u8le()
            self.ofs_section_table = self._io.read_u8le()
            if not self.ofs_section_table == 64:
                raise kaitaistruct.ValidationNotEqualError(64, self.ofs_section_table, self._io, u"/types/header/seq/5")
            self.num_sections = self._io.read_u4le()
            self.section_table_crc = self._io.read_u4le()
            self.reserved1 = self._io.read_bytes(32)


        def _fetch_instances(self):
            pass


    class OptimizerHead(KaitaiStruct):
        """The first 16 bytes of the optimizer section (kind 2)."""
        def __init__(self, _io, _parent=None, _root=None):
            super(OnertCheckpointCommon.OptimizerHead, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.kind = KaitaiStream.resolve_enum(OnertCheckpointCommon.OptimizerKind, self._io.read_u4le())
            self.num_slots = self._io.read_u4le()
            self.num_tensors = self._io.read_u4le()
            self.reserved = self._io.read_u4le()
            if not self.reserved == 0:
                raise kaitaistruct.ValidationNotEqualError(0, self.reserved, self._io, u"/types/optimizer_head/seq/3")


        def _fetch_instances(self):
            pass


    class OriginSection(KaitaiStruct):
        """Kind 5, optional (24 bytes). Where the content came from when it was upgraded from schema
        1 or WOF: what a downgrade needs to write the original file back byte for byte.
        """
        def __init__(self, _io, _parent=None, _root=None):
            super(OnertCheckpointCommon.OriginSection, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.revision = KaitaiStream.resolve_enum(OnertCheckpointCommon.OriginRevision, self._io.read_u4le())
            self.dialect = KaitaiStream.resolve_enum(OnertCheckpointCommon.OriginDialect, self._io.read_u4le())
            self.flags = self._io.read_u4le()
            self.reserved = self._io.read_u4le()
            if not self.reserved == 0:
                raise kaitaistruct.ValidationNotEqualError(0, self.reserved, self._io, u"/types/origin_section/seq/3")
            self.num_entries = self._io.read_u8le()


        def _fetch_instances(self):
            pass


    class SectionEntry(KaitaiStruct):
        """One entry of the section table (32 bytes)."""
        def __init__(self, _io, _parent=None, _root=None):
            super(OnertCheckpointCommon.SectionEntry, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.kind = KaitaiStream.resolve_enum(OnertCheckpointCommon.SectionKind, self._io.read_u4le())
            self.flags = self._io.read_u4le()
            self.ofs_body = self._io.read_u8le()
            self.len_body = self._io.read_u8le()
            self.crc = self._io.read_u4le()
            self.reserved = self._io.read_u4le()
            if not self.reserved == 0:
                raise kaitaistruct.ValidationNotEqualError(0, self.reserved, self._io, u"/types/section_entry/seq/5")


        def _fetch_instances(self):
            pass

        @property
        def is_required(self):
            """The must-understand flag."""
            if hasattr(self, '_m_is_required'):
                return self._m_is_required

            self._m_is_required = self.flags & 1 != 0
            return getattr(self, '_m_is_required', None)


    class SlotDescriptor(KaitaiStruct):
        """A slot's name (16 bytes)."""
        def __init__(self, file_io, _io, _parent=None, _root=None):
            super(OnertCheckpointCommon.SlotDescriptor, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self.file_io = file_io
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

            io = self.file_io
            _pos = io.pos()
            io.seek(self.ofs_name)
            self._m_name = (io.read_bytes(self.len_name)).decode(u"UTF-8")
            io.seek(_pos)
            return getattr(self, '_m_name', None)


    class StateEntry(KaitaiStruct):
        """One key/value pair (32 bytes)."""
        def __init__(self, file_io, _io, _parent=None, _root=None):
            super(OnertCheckpointCommon.StateEntry, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self.file_io = file_io
            self._read()

        def _read(self):
            self.ofs_key = self._io.read_u8le()
            self.len_key = self._io.read_u4le()
            self.value_type = KaitaiStream.resolve_enum(OnertCheckpointCommon.ValueType, self._io.read_u1())
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

            io = self.file_io
            _pos = io.pos()
            io.seek(self.ofs_key)
            self._m_key = (io.read_bytes(self.len_key)).decode(u"UTF-8")
            io.seek(_pos)
            return getattr(self, '_m_key', None)


    class StateSection(KaitaiStruct):
        """Kind 3. Training state as typed key/value pairs."""
        def __init__(self, file_io, _io, _parent=None, _root=None):
            super(OnertCheckpointCommon.StateSection, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self.file_io = file_io
            self._read()

        def _read(self):
            self.num_entries = self._io.read_u4le()
            self.reserved = self._io.read_u4le()
            if not self.reserved == 0:
                raise kaitaistruct.ValidationNotEqualError(0, self.reserved, self._io, u"/types/state_section/seq/1")
            self.entries = []
            for i in range(self.num_entries):
                self.entries.append(OnertCheckpointCommon.StateEntry(self.file_io, self._io, self, self._root))



        def _fetch_instances(self):
            pass
            for i in range(len(self.entries)):
                pass
                self.entries[i]._fetch_instances()




