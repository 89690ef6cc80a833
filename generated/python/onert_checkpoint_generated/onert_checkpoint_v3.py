# This is a generated file! Please edit source .ksy file and use kaitai-struct-compiler to rebuild
# type: ignore

import kaitaistruct
from kaitaistruct import KaitaiStruct, KaitaiStream, BytesIO
from . import onert_checkpoint_common
from enum import IntEnum


if getattr(kaitaistruct, 'API_VERSION', (0, 9)) < (0, 11):
    raise Exception("Incompatible Kaitai Struct Python API: 0.11 or later is required, but you have %s" % (kaitaistruct.__version__))

class OnertCheckpointV3(KaitaiStruct):
    """Schema 3 of the training checkpoint of Samsung ONE's on-device training runtimes: schema 2
    (onert_checkpoint_v2.ksy) with smaller tables, for checkpoints of many small tensors.
    
    The container is schema 2's: a 64-byte header (version byte 3), a section table of 32-byte
    entries, the sections at multiples of 64 in the order tensors, optimizer, state, origin, other
    kinds by ascending kind, data last, CRC-32C over the header, the table and each section. The
    state and origin sections are schema 2's.
    
    What changes: the tensors section stores the tensors as columns (a u64 size per tensor, then
    only the optional columns some tensor uses: entry index, model index, name length, dtype,
    rank, data order, dims, names), each at a multiple of 8 from the section's start; an
    optimizer-slot entry is a single u64 size (NO_STATE = 2**64-1 for no state); and no data
    offset is stored. The data ranges are placed by rule: in data order (the tensor records in the
    order of the `order` column, or in record order without it, then each slot's entries that are
    not NO_STATE in the same order of records), each at the end of the previous one rounded up to
    a(len) = 64 for len >= 64, else the smallest power of two not below len (a(0) = a(1) = 1),
    relative to the data section's start, with zero padding between them. The `ranges` instance
    below computes every range's place.
    
    The specification document (spec/SPEC.md, section 7) gives the complete validation rules
    (C0 to C13, O1 to O9, P0 to P4 besides schema 2's) and the error code of each rule.
    
    .. seealso::
       spec/SPEC.md
    
    
    .. seealso::
       Source - https://github.com/Samsung/ONE/discussions/13037
    
    
    .. seealso::
       Source - https://github.com/Samsung/ONE/blob/master/nnpackage/schema/circle_schema.fbs
    """

    class ColumnBits(IntEnum):
        index = 1
        model_index = 2
        name = 4
        dtype = 8
        shape = 16
        order = 32
    def __init__(self, _io, _parent=None, _root=None):
        super(OnertCheckpointV3, self).__init__(_io)
        self._parent = _parent
        self._root = _root or self
        self._read()

    def _read(self):
        self.header = onert_checkpoint_common.OnertCheckpointCommon.Header(3, self._io)


    def _fetch_instances(self):
        pass
        self.header._fetch_instances()
        _ = self.ranges
        if hasattr(self, '_m_ranges'):
            pass
            for i in range(len(self._m_ranges)):
                pass
                self._m_ranges[i]._fetch_instances()


        _ = self.section_table
        if hasattr(self, '_m_section_table'):
            pass
            for i in range(len(self._m_section_table)):
                pass
                self._m_section_table[i]._fetch_instances()



    class DataBlocksSection(KaitaiStruct):
        """Kind 0x100008 (optional, REQUIRED clear; SPEC.md 7.4): one CRC-32C per block of the data
        section, so that a reader verifies the blocks a read touches instead of the whole
        section. Block i is the data section's bytes i * 2**block_shift up to
        min((i + 1) * 2**block_shift, len_body) - 1 (the last block may be shorter). The data
        section keeps its own whole-section CRC in the section table.
        """
        def __init__(self, _io, _parent=None, _root=None):
            super(OnertCheckpointV3.DataBlocksSection, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.block_shift = self._io.read_u4le()
            self.reserved = self._io.read_u4le()
            self.num_blocks = self._io.read_u8le()
            self.crc = []
            for i in range(self.num_blocks):
                self.crc.append(self._io.read_u4le())



        def _fetch_instances(self):
            pass
            for i in range(len(self.crc)):
                pass


        @property
        def block_size(self):
            """The block size in bytes."""
            if hasattr(self, '_m_block_size'):
                return self._m_block_size

            self._m_block_size = 1 << self.block_shift
            return getattr(self, '_m_block_size', None)


    class DataRange(KaitaiStruct):
        """The i-th data range in data order, placed by rule: its start is the end of the previous
        range (the data section's start for the first) rounded up to a(len_data).
        """
        def __init__(self, i, _io, _parent=None, _root=None):
            super(OnertCheckpointV3.DataRange, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self.i = i
            self._read()

        def _read(self):
            pass


        def _fetch_instances(self):
            pass
            _ = self.body
            if hasattr(self, '_m_body'):
                pass


        @property
        def alignment(self):
            """a(len_data), 64 for 64 bytes or more, else the smallest power of two not below it."""
            if hasattr(self, '_m_alignment'):
                return self._m_alignment

            self._m_alignment = (64 if self.len_data > 32 else (32 if self.len_data > 16 else (16 if self.len_data > 8 else (8 if self.len_data > 4 else (4 if self.len_data > 2 else (2 if self.len_data > 1 else 1))))))
            return getattr(self, '_m_alignment', None)

        @property
        def body(self):
            """The range's bytes."""
            if hasattr(self, '_m_body'):
                return self._m_body

            io = self._root._io
            _pos = io.pos()
            io.seek(self.ofs_data)
            self._m_body = io.read_bytes(self.len_data)
            io.seek(_pos)
            return getattr(self, '_m_body', None)

        @property
        def end(self):
            """Where the range ends."""
            if hasattr(self, '_m_end'):
                return self._m_end

            self._m_end = self.ofs_data + self.len_data
            return getattr(self, '_m_end', None)

        @property
        def entry(self):
            """The slot entry (j * T + k)."""
            if hasattr(self, '_m_entry'):
                return self._m_entry

            if self.slot >= 0:
                pass
                self._m_entry = self._root.optimizer.entries[self.slot * self.num_tensors + self.record]

            return getattr(self, '_m_entry', None)

        @property
        def has_state(self):
            """False for a NO_STATE slot entry, which has no range (here 0 bytes taking no room)."""
            if hasattr(self, '_m_has_state'):
                return self._m_has_state

            self._m_has_state =  ((self.slot < 0) or (self.entry != 18446744073709551615)) 
            return getattr(self, '_m_has_state', None)

        @property
        def len_data(self):
            """The range's size."""
            if hasattr(self, '_m_len_data'):
                return self._m_len_data

            self._m_len_data = (self._root.tensors.len_data[self.record] if self.slot < 0 else (self.entry if self.has_state else 0))
            return getattr(self, '_m_len_data', None)

        @property
        def num_tensors(self):
            """n."""
            if hasattr(self, '_m_num_tensors'):
                return self._m_num_tensors

            self._m_num_tensors = self._root.tensors.num_tensors
            return getattr(self, '_m_num_tensors', None)

        @property
        def ofs_data(self):
            """The range's absolute offset (relative to the data section's start, a multiple of 64, so the alignment holds in the file too)."""
            if hasattr(self, '_m_ofs_data'):
                return self._m_ofs_data

            self._m_ofs_data = (((self.previous_end + self.alignment) - 1) // self.alignment) * self.alignment
            return getattr(self, '_m_ofs_data', None)

        @property
        def position(self):
            """The position in the order of records."""
            if hasattr(self, '_m_position'):
                return self._m_position

            self._m_position = self.i % self.num_tensors
            return getattr(self, '_m_position', None)

        @property
        def previous_end(self):
            """Where the previous range ends (the data section's start for the first)."""
            if hasattr(self, '_m_previous_end'):
                return self._m_previous_end

            self._m_previous_end = (self._root.ofs_data_section if self.i == 0 else self._root.ranges[self.i - 1].end)
            return getattr(self, '_m_previous_end', None)

        @property
        def record(self):
            """The tensor record k the range belongs to."""
            if hasattr(self, '_m_record'):
                return self._m_record

            self._m_record = (self._root.tensors.order[self.position] if self._root.tensors.has_order else self.position)
            return getattr(self, '_m_record', None)

        @property
        def slot(self):
            """-1 for a tensor range, else the optimizer slot j."""
            if hasattr(self, '_m_slot'):
                return self._m_slot

            self._m_slot = self.i // self.num_tensors - 1
            return getattr(self, '_m_slot', None)


    class OptimizerSection(KaitaiStruct):
        """Kind 2. The optimizer kind, its K named slots, and per slot and tensor a size."""
        def __init__(self, _io, _parent=None, _root=None):
            super(OnertCheckpointV3.OptimizerSection, self).__init__(_io)
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
                self.entries.append(self._io.read_u8le())



        def _fetch_instances(self):
            pass
            self.head._fetch_instances()
            for i in range(len(self.slots)):
                pass
                self.slots[i]._fetch_instances()

            for i in range(len(self.entries)):
                pass



    class RangeIndexSection(KaitaiStruct):
        """Kind 0x100009 (optional, REQUIRED clear; SPEC.md 7.5): for each pass p of the placement
        walk (0: the tensor ranges, 1 + j: slot j's) and each group g of G = 2**group_shift
        sequence positions, start[p * num_groups + g] is where the walk stands (the end of the
        last range placed, relative to the data section's start) when pass p reaches position
        G * g; with an `order` column, position[k] is the sequence position of record k (the
        inverse of `order`). A lookup walks at most G - 1 ranges from its group's start.
        """
        def __init__(self, _io, _parent=None, _root=None):
            super(OnertCheckpointV3.RangeIndexSection, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.group_shift = self._io.read_u4le()
            self.reserved = self._io.read_u4le()
            self.num_groups = self._io.read_u8le()
            self.start = []
            for i in range(self.num_passes * self.num_groups):
                self.start.append(self._io.read_u8le())

            if  ((self._root.has_tensors) and (self._root.tensors.has_order)) :
                pass
                self.position = []
                for i in range(self._root.tensors.num_tensors):
                    self.position.append(self._io.read_u4le())




        def _fetch_instances(self):
            pass
            for i in range(len(self.start)):
                pass

            if  ((self._root.has_tensors) and (self._root.tensors.has_order)) :
                pass
                for i in range(len(self.position)):
                    pass



        @property
        def group_size(self):
            """G, the sequence positions per group."""
            if hasattr(self, '_m_group_size'):
                return self._m_group_size

            self._m_group_size = 1 << self.group_shift
            return getattr(self, '_m_group_size', None)

        @property
        def num_passes(self):
            """One pass for the tensor ranges, one per optimizer slot."""
            if hasattr(self, '_m_num_passes'):
                return self._m_num_passes

            self._m_num_passes = 1 + (self._root.optimizer.head.num_slots if self._root.has_optimizer else 0)
            return getattr(self, '_m_num_passes', None)


    class RecordDims(KaitaiStruct):
        """One record's part of the dims column (nothing for NO_SHAPE)."""
        def __init__(self, rank, _io, _parent=None, _root=None):
            super(OnertCheckpointV3.RecordDims, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self.rank = rank
            self._read()

        def _read(self):
            self.dims = []
            for i in range((0 if self.rank == 255 else self.rank)):
                self.dims.append(self._io.read_u4le())



        def _fetch_instances(self):
            pass
            for i in range(len(self.dims)):
                pass


        @property
        def has_shape(self):
            """False for NO_SHAPE."""
            if hasattr(self, '_m_has_shape'):
                return self._m_has_shape

            self._m_has_shape = self.rank != 255
            return getattr(self, '_m_has_shape', None)


    class RecordName(KaitaiStruct):
        """One record's part of the names column (nothing for a record without a name)."""
        def __init__(self, len_name, _io, _parent=None, _root=None):
            super(OnertCheckpointV3.RecordName, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self.len_name = len_name
            self._read()

        def _read(self):
            self.name = (self._io.read_bytes(self.len_name)).decode(u"UTF-8")


        def _fetch_instances(self):
            pass

        @property
        def has_name(self):
            """False for a record without a name."""
            if hasattr(self, '_m_has_name'):
                return self._m_has_name

            self._m_has_name = self.len_name != 0
            return getattr(self, '_m_has_name', None)


    class SectionEntry(KaitaiStruct):
        """One entry of the section table (onert_checkpoint_common.ksy) and its body."""
        def __init__(self, _io, _parent=None, _root=None):
            super(OnertCheckpointV3.SectionEntry, self).__init__(_io)
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

            _ = self.data_blocks
            if hasattr(self, '_m_data_blocks'):
                pass
                self._m_data_blocks._fetch_instances()

            _ = self.range_index
            if hasattr(self, '_m_range_index'):
                pass
                self._m_range_index._fetch_instances()


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
                self._m_body = OnertCheckpointV3.OptimizerSection(_io__raw__m_body, self, self._root)
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
                self._m_body = OnertCheckpointV3.TensorsSection(_io__raw__m_body, self, self._root)
            else:
                pass
                self._m_body = io.read_bytes(self.entry.len_body)
            io.seek(_pos)
            return getattr(self, '_m_body', None)

        @property
        def data_blocks(self):
            """Kind 0x100008, optional (REQUIRED clear), the per-block CRC-32C of the data section (SPEC.md 7.4); a reader that does not know it skips it."""
            if hasattr(self, '_m_data_blocks'):
                return self._m_data_blocks

            if int(self.entry.kind) == 1048584:
                pass
                io = self._root._io
                _pos = io.pos()
                io.seek(self.entry.ofs_body)
                self._raw__m_data_blocks = io.read_bytes(self.entry.len_body)
                _io__raw__m_data_blocks = KaitaiStream(BytesIO(self._raw__m_data_blocks))
                self._m_data_blocks = OnertCheckpointV3.DataBlocksSection(_io__raw__m_data_blocks, self, self._root)
                io.seek(_pos)

            return getattr(self, '_m_data_blocks', None)

        @property
        def range_index(self):
            """Kind 0x100009, optional (REQUIRED clear), where the placement walk stands every 2**group_shift sequence positions of each pass (SPEC.md 7.5); a reader that does not know it skips it."""
            if hasattr(self, '_m_range_index'):
                return self._m_range_index

            if int(self.entry.kind) == 1048585:
                pass
                io = self._root._io
                _pos = io.pos()
                io.seek(self.entry.ofs_body)
                self._raw__m_range_index = io.read_bytes(self.entry.len_body)
                _io__raw__m_range_index = KaitaiStream(BytesIO(self._raw__m_range_index))
                self._m_range_index = OnertCheckpointV3.RangeIndexSection(_io__raw__m_range_index, self, self._root)
                io.seek(_pos)

            return getattr(self, '_m_range_index', None)


    class TensorsSection(KaitaiStruct):
        """Kind 1. The tensors as columns: the count, a bit set of the optional columns present, the
        size column, then each present optional column at the next multiple of 8 from the
        section's start (zero bytes before it). A column is present only if some record has a
        value other than its default; the section ends where its last column ends.
        """
        def __init__(self, _io, _parent=None, _root=None):
            super(OnertCheckpointV3.TensorsSection, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.num_tensors = self._io.read_u4le()
            self.columns = self._io.read_u4le()
            self.len_data = []
            for i in range(self.num_tensors):
                self.len_data.append(self._io.read_u8le())

            if self.has_index:
                pass
                self.index = []
                for i in range(self.num_tensors):
                    self.index.append(self._io.read_u4le())


            if self.has_model_index:
                pass
                self.pad_model_index = self._io.read_bytes((8 - self._io.pos() % 8) % 8)

            if self.has_model_index:
                pass
                self.model_index = []
                for i in range(self.num_tensors):
                    self.model_index.append(self._io.read_u4le())


            if self.has_name:
                pass
                self.pad_len_name = self._io.read_bytes((8 - self._io.pos() % 8) % 8)

            if self.has_name:
                pass
                self.len_name = []
                for i in range(self.num_tensors):
                    self.len_name.append(self._io.read_u4le())


            if self.has_dtype:
                pass
                self.pad_dtype = self._io.read_bytes((8 - self._io.pos() % 8) % 8)

            if self.has_dtype:
                pass
                self.dtype = []
                for i in range(self.num_tensors):
                    self.dtype.append(KaitaiStream.resolve_enum(onert_checkpoint_common.OnertCheckpointCommon.TensorType, self._io.read_s1()))


            if self.has_shape:
                pass
                self.pad_rank = self._io.read_bytes((8 - self._io.pos() % 8) % 8)

            if self.has_shape:
                pass
                self.rank = []
                for i in range(self.num_tensors):
                    self.rank.append(self._io.read_u1())


            if self.has_order:
                pass
                self.pad_order = self._io.read_bytes((8 - self._io.pos() % 8) % 8)

            if self.has_order:
                pass
                self.order = []
                for i in range(self.num_tensors):
                    self.order.append(self._io.read_u4le())


            if self.has_shape:
                pass
                self.pad_dims = self._io.read_bytes((8 - self._io.pos() % 8) % 8)

            if self.has_shape:
                pass
                self.dims = []
                for i in range(self.num_tensors):
                    self.dims.append(OnertCheckpointV3.RecordDims(self.rank[i], self._io, self, self._root))


            if self.has_name:
                pass
                self.pad_names = self._io.read_bytes((8 - self._io.pos() % 8) % 8)

            if self.has_name:
                pass
                self.names = []
                for i in range(self.num_tensors):
                    self.names.append(OnertCheckpointV3.RecordName(self.len_name[i], self._io, self, self._root))




        def _fetch_instances(self):
            pass
            for i in range(len(self.len_data)):
                pass

            if self.has_index:
                pass
                for i in range(len(self.index)):
                    pass


            if self.has_model_index:
                pass

            if self.has_model_index:
                pass
                for i in range(len(self.model_index)):
                    pass


            if self.has_name:
                pass

            if self.has_name:
                pass
                for i in range(len(self.len_name)):
                    pass


            if self.has_dtype:
                pass

            if self.has_dtype:
                pass
                for i in range(len(self.dtype)):
                    pass


            if self.has_shape:
                pass

            if self.has_shape:
                pass
                for i in range(len(self.rank)):
                    pass


            if self.has_order:
                pass

            if self.has_order:
                pass
                for i in range(len(self.order)):
                    pass


            if self.has_shape:
                pass

            if self.has_shape:
                pass
                for i in range(len(self.dims)):
                    pass
                    self.dims[i]._fetch_instances()


            if self.has_name:
                pass

            if self.has_name:
                pass
                for i in range(len(self.names)):
                    pass
                    self.names[i]._fetch_instances()



        @property
        def has_dtype(self):
            """The `dtype` column is present."""
            if hasattr(self, '_m_has_dtype'):
                return self._m_has_dtype

            self._m_has_dtype = self.columns & 8 != 0
            return getattr(self, '_m_has_dtype', None)

        @property
        def has_index(self):
            """The `index` column is present."""
            if hasattr(self, '_m_has_index'):
                return self._m_has_index

            self._m_has_index = self.columns & 1 != 0
            return getattr(self, '_m_has_index', None)

        @property
        def has_model_index(self):
            """The `model_index` column is present."""
            if hasattr(self, '_m_has_model_index'):
                return self._m_has_model_index

            self._m_has_model_index = self.columns & 2 != 0
            return getattr(self, '_m_has_model_index', None)

        @property
        def has_name(self):
            """The `len_name` and `names` columns are present."""
            if hasattr(self, '_m_has_name'):
                return self._m_has_name

            self._m_has_name = self.columns & 4 != 0
            return getattr(self, '_m_has_name', None)

        @property
        def has_order(self):
            """The `order` column is present."""
            if hasattr(self, '_m_has_order'):
                return self._m_has_order

            self._m_has_order = self.columns & 32 != 0
            return getattr(self, '_m_has_order', None)

        @property
        def has_shape(self):
            """The `rank` and `dims` columns are present."""
            if hasattr(self, '_m_has_shape'):
                return self._m_has_shape

            self._m_has_shape = self.columns & 16 != 0
            return getattr(self, '_m_has_shape', None)


    @property
    def has_data(self):
        """The data section, when present, is the last section."""
        if hasattr(self, '_m_has_data'):
            return self._m_has_data

        self._m_has_data =  ((self.header.num_sections > 0) and (self.section_table[self.header.num_sections - 1].entry.kind == onert_checkpoint_common.OnertCheckpointCommon.SectionKind.data)) 
        return getattr(self, '_m_has_data', None)

    @property
    def has_optimizer(self):
        """Whether an optimizer section is present."""
        if hasattr(self, '_m_has_optimizer'):
            return self._m_has_optimizer

        self._m_has_optimizer =  ((self.header.num_sections > self.optimizer_position) and (self.section_table[self.optimizer_position].entry.kind == onert_checkpoint_common.OnertCheckpointCommon.SectionKind.optimizer)) 
        return getattr(self, '_m_has_optimizer', None)

    @property
    def has_tensors(self):
        """The tensors section, when present, is the first section."""
        if hasattr(self, '_m_has_tensors'):
            return self._m_has_tensors

        self._m_has_tensors =  ((self.header.num_sections > 0) and (self.section_table[0].entry.kind == onert_checkpoint_common.OnertCheckpointCommon.SectionKind.tensors)) 
        return getattr(self, '_m_has_tensors', None)

    @property
    def num_ranges(self):
        """One range per tensor record, and one per slot and record (NO_STATE entries included, as 0-byte ranges that take no room)."""
        if hasattr(self, '_m_num_ranges'):
            return self._m_num_ranges

        self._m_num_ranges = (self.tensors.num_tensors * ((self.optimizer.head.num_slots if self.has_optimizer else 0) + 1) if self.has_tensors else 0)
        return getattr(self, '_m_num_ranges', None)

    @property
    def ofs_data_section(self):
        """Where the data section starts; the first range starts here."""
        if hasattr(self, '_m_ofs_data_section'):
            return self._m_ofs_data_section

        if self.has_data:
            pass
            self._m_ofs_data_section = self.section_table[self.header.num_sections - 1].entry.ofs_body

        return getattr(self, '_m_ofs_data_section', None)

    @property
    def optimizer(self):
        """The optimizer section."""
        if hasattr(self, '_m_optimizer'):
            return self._m_optimizer

        if self.has_optimizer:
            pass
            self._m_optimizer = self.section_table[self.optimizer_position].body

        return getattr(self, '_m_optimizer', None)

    @property
    def optimizer_position(self):
        """Where an optimizer section sits in the table (right after the tensors section)."""
        if hasattr(self, '_m_optimizer_position'):
            return self._m_optimizer_position

        self._m_optimizer_position = (1 if self.has_tensors else 0)
        return getattr(self, '_m_optimizer_position', None)

    @property
    def ranges(self):
        """The data ranges in data order, each with its computed offset (SPEC.md 7.3)."""
        if hasattr(self, '_m_ranges'):
            return self._m_ranges

        self._m_ranges = []
        for i in range(self.num_ranges):
            self._m_ranges.append(OnertCheckpointV3.DataRange(i, self._io, self, self._root))

        return getattr(self, '_m_ranges', None)

    @property
    def section_table(self):
        """The section table, in file order of the sections."""
        if hasattr(self, '_m_section_table'):
            return self._m_section_table

        _pos = self._io.pos()
        self._io.seek(self.header.ofs_section_table)
        self._m_section_table = []
        for i in range(self.header.num_sections):
            self._m_section_table.append(OnertCheckpointV3.SectionEntry(self._io, self, self._root))

        self._io.seek(_pos)
        return getattr(self, '_m_section_table', None)

    @property
    def tensors(self):
        """The tensors section."""
        if hasattr(self, '_m_tensors'):
            return self._m_tensors

        if self.has_tensors:
            pass
            self._m_tensors = self.section_table[0].body

        return getattr(self, '_m_tensors', None)


