"""Valid files with many entries, made directly as bytes with NumPy (in milliseconds, not the
minutes that a million model objects through ``save`` would take): for the memory-bound and
linear-time tests. Their validity is asserted by the tests that use them (they load)."""

from __future__ import annotations

import struct

import crc32c
import numpy as np
from onert_checkpoint_generated import layout

SECTION_DTYPE = layout.SectionEntry.DTYPE
SLOT_DESCRIPTOR_DTYPE = layout.SlotDescriptor.DTYPE
SLOT_ENTRY_DTYPE = layout.V2SlotEntry.DTYPE
TENSOR_RECORD_DTYPE = layout.V2TensorRecord.DTYPE

__all__ = [
    "circle_reference_bomb",
    "npz_bomb",
    "v1_many_entries",
    "v2_many_slots",
    "v3_many_entries",
]


def v1_many_entries(n: int, *, adam: bool = False) -> bytes:
    """A schema-1 file of ``n`` entries that all start where their block's data does:
    ``n - 1`` empty entries and one of 4 bytes per block; 4 bytes per entry and block on disk.
    SGD files are onert-micro's dialect; ``adam`` adds m and v blocks (either dialect)."""
    blocks = 3 if adam else 1
    starts = [20 + k * (4 * n + 4) for k in range(blocks)]
    end = starts[-1] + 4 * n + 4
    opt1, opt2 = (starts[1], starts[2]) if adam else (0, 0)
    out = [struct.pack("<HBBIIII", 429, 1, 0, opt1, opt2, end, n)]
    for start in starts:
        out.append(np.full(n, start + 4 * n, "<u4").tobytes())
        out.append(b"\1\2\3\4")
    out.append(struct.pack("<II", 7, 1))
    return b"".join(out)


def _align(x: int) -> int:
    return -(-x // 64) * 64


def v2_many_slots(n: int, k: int = 16, *, names: bool = False, bad_last: bool = False) -> bytes:
    """A schema-2 file of ``n`` 4-byte tensors (named ``t<i>`` with ``names``) and a
    self-described optimizer of ``k`` slots whose entries are all empty ranges at the end of
    the data section. ``bad_last`` moves the last slot entry's range out of the section (the
    file is then refused by rule D1, after every other rule has run)."""
    tensor_names = [f"t{i}".encode() for i in range(n)] if names else []
    pool = b"".join(tensor_names)
    slot_names = b"".join(f"s{j:02d}".encode() for j in range(k))
    t_len = 8 + 72 * n + len(pool)
    o_len = 16 + 16 * k + 16 * k * n + len(slot_names)
    t_at = _align(64 + 32 * 3)
    o_at = _align(t_at + t_len)
    d_at = _align(o_at + o_len)
    d_len = 64 * n
    rec = np.zeros(n, TENSOR_RECORD_DTYPE)
    rec["index"] = np.arange(n)
    rec["ofs_data"] = d_at + 64 * np.arange(n, dtype=np.uint64)
    rec["len_data"] = 4
    if names:
        lengths = np.array([len(s) for s in tensor_names], np.uint64)
        rec["flags"] = 4  # HAS_NAME
        rec["len_name"] = lengths
        rec["ofs_name"] = t_at + 8 + 72 * n + np.concatenate(([0], np.cumsum(lengths)[:-1]))
    tensors = struct.pack("<II", n, 0) + rec.tobytes() + pool
    desc = np.zeros(k, SLOT_DESCRIPTOR_DTYPE)
    desc["ofs_name"] = o_at + 16 + 16 * k + 16 * k * n + 3 * np.arange(k, dtype=np.uint64)
    desc["len_name"] = 3
    entries = np.zeros(k * n, SLOT_ENTRY_DTYPE)
    entries["ofs_data"] = d_at + d_len
    if bad_last:
        entries["ofs_data"][-1] = d_at + d_len + 64
    optimizer = struct.pack("<IIII", 9, k, n, 0) + desc.tobytes() + entries.tobytes() + slot_names
    data = np.zeros((n, 64), np.uint8)
    data[:, :4] = 1
    bodies = ((1, t_at, tensors), (2, o_at, optimizer), (4, d_at, data.tobytes()))
    table = np.zeros(3, SECTION_DTYPE)
    size = d_at + d_len
    buf = bytearray(size)
    for i, (kind, at, body) in enumerate(bodies):
        table[i] = (kind, 1, at, len(body), crc32c.crc32c(body), 0)
        buf[at : at + len(body)] = body
    raw_table = table.tobytes()
    buf[64 : 64 + len(raw_table)] = raw_table
    struct.pack_into("<HBBIQQII", buf, 0, 429, 2, 0, 0, size, 64, 3, crc32c.crc32c(raw_table))
    header_crc = crc32c.crc32c(
        bytes(buf[8:64]), crc32c.crc32c(b"\0\0\0\0", crc32c.crc32c(bytes(buf[0:4])))
    )
    struct.pack_into("<I", buf, 4, header_crc)
    return bytes(buf)


def v3_many_entries(n: int, k: int = 0) -> bytes:
    """A schema-3 file of ``n`` tensors, all empty but the last (4 bytes): 8 bytes a tensor on
    disk, the smallest a valid file can spend on one (SPEC 7); with ``k`` slots of a
    self-described optimizer, every tensor also has ``k`` empty slot entries (8 bytes each)."""
    t_len = 8 + 8 * n
    t_at = _align(64 + 32 * (3 if k else 2))  # after the section table
    lens = np.zeros(n, "<u8")
    lens[-1] = 4
    tensors = struct.pack("<II", n, 0) + lens.tobytes()
    bodies = [(1, t_at, tensors)]
    at = _align(t_at + t_len)
    if k:
        slot_names = b"".join(f"s{j:02d}".encode() for j in range(k))
        desc = np.zeros(k, SLOT_DESCRIPTOR_DTYPE)
        desc["ofs_name"] = at + 16 + 16 * k + 8 * k * n + 3 * np.arange(k, dtype=np.uint64)
        desc["len_name"] = 3
        entries = np.zeros(k * n, "<u8")
        optimizer = struct.pack("<IIII", 9, k, n, 0) + desc.tobytes() + entries.tobytes()
        bodies.append((2, at, optimizer + slot_names))
        at = _align(at + len(bodies[-1][2]))
    bodies.append((4, at, b"\1\2\3\4"))
    return _container(3, bodies, at + 4)


def _container(version: int, bodies: list[tuple[int, int, bytes]], size: int) -> bytes:
    """A schema-2 family file (header, section table, bodies) of ``version``: the section
    table at 64, every section required, CRCs computed."""
    table = np.zeros(len(bodies), SECTION_DTYPE)
    buf = bytearray(size)
    for i, (kind, at, body) in enumerate(bodies):
        table[i] = (kind, 1, at, len(body), crc32c.crc32c(body), 0)
        buf[at : at + len(body)] = body
    raw_table = table.tobytes()
    buf[64 : 64 + len(raw_table)] = raw_table
    struct.pack_into(
        "<HBBIQQII", buf, 0, 429, version, 0, 0, size, 64, len(bodies), crc32c.crc32c(raw_table)
    )
    header_crc = crc32c.crc32c(
        bytes(buf[8:64]), crc32c.crc32c(b"\0\0\0\0", crc32c.crc32c(bytes(buf[0:4])))
    )
    struct.pack_into("<I", buf, 4, header_crc)
    return bytes(buf)


def circle_reference_bomb(refs: int, rank: int, *, subgraphs: int = 1) -> bytes:
    """A valid circle model whose first subgraph's tensor vector names one tensor table
    ``refs`` times, that tensor having ``rank`` dimensions of 1; its subgraph vector names that
    subgraph ``subgraphs`` times. About ``4 * (refs + rank + subgraphs)`` bytes, but
    ``refs * rank`` dimensions (times ``subgraphs``) for a reader that expands every reference.
    The tensor is a 4-byte float32 constant (buffer 1), so a checkpoint can be baked into it."""
    import flatbuffers
    from circle_schema.v0_9.circle import Buffer, Model, SubGraph, Tensor

    b = flatbuffers.Builder(4 * (refs + rank + subgraphs) + 1024)
    Tensor.StartShapeVector(b, rank)
    for _ in range(rank):
        b.PrependInt32(1)
    shape = b.EndVector()
    name = b.CreateString("t")
    Tensor.Start(b)
    Tensor.AddShape(b, shape)
    Tensor.AddName(b, name)
    Tensor.AddBuffer(b, 1)
    tensor = Tensor.End(b)
    SubGraph.StartTensorsVector(b, refs)
    for _ in range(refs):
        b.PrependUOffsetTRelative(tensor)
    tensors = b.EndVector()
    SubGraph.Start(b)
    SubGraph.AddTensors(b, tensors)
    subgraph = SubGraph.End(b)
    data = b.CreateNumpyVector(np.ones(4, np.uint8))
    Buffer.Start(b)
    Buffer.AddData(b, data)
    constant = Buffer.End(b)
    Buffer.Start(b)
    empty = Buffer.End(b)
    Model.StartBuffersVector(b, 2)
    b.PrependUOffsetTRelative(constant)
    b.PrependUOffsetTRelative(empty)
    buffers = b.EndVector()
    Model.StartSubgraphsVector(b, subgraphs)
    for _ in range(subgraphs):
        b.PrependUOffsetTRelative(subgraph)
    graphs = b.EndVector()
    Model.Start(b)
    Model.AddVersion(b, 3)
    Model.AddSubgraphs(b, graphs)
    Model.AddBuffers(b, buffers)
    b.Finish(Model.End(b), file_identifier=b"CIR0")
    return bytes(b.Output())


def npz_bomb(declared: int) -> bytes:
    """An npz of one member: a .npy of ``declared`` zero bytes (uint8), deflated, written in
    chunks (never held whole): a container of about ``declared / 1000`` bytes."""
    import io
    import zipfile

    header = np.lib.format.header_data_from_array_1_0(np.zeros(0, np.uint8))
    header["shape"] = (declared,)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        with zf.open("0.npy", "w", force_zip64=True) as member:
            np.lib.format.write_array_header_1_0(member, header)
            chunk = bytes(1 << 20)
            left = declared
            while left:
                member.write(chunk[: min(left, len(chunk))])
                left -= min(left, len(chunk))
    return out.getvalue()
