"""Valid files with many entries, made directly as bytes with NumPy (in milliseconds, not the
minutes that a million model objects through ``save`` would take): for the memory-bound and
linear-time tests. Their validity is asserted by the tests that use them (they load)."""

from __future__ import annotations

import struct

import crc32c
import numpy as np

from onert_checkpoint.format.schemas.v2 import (
    SECTION_DTYPE,
    SLOT_DESCRIPTOR_DTYPE,
    SLOT_ENTRY_DTYPE,
    TENSOR_RECORD_DTYPE,
)

__all__ = ["v1_many_entries", "v2_many_slots"]


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
