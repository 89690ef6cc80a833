"""Downgrades of valid-but-hostile schema-2 files (spec/SPEC.md 9.2).

A 2 KB schema-2 file whose origin section claims a huge ``num_entries`` is valid (schema 2
stores absent entries in nothing), but writing it back as schema 1 or WOF means offset tables of
that length. The writers refuse a table longer than ``MAX_TABLE_ENTRIES`` and a file whose u32
offsets cannot hold it, before anything is allocated, and stream the tables they do write.
"""

from __future__ import annotations

import struct
import subprocess
import sys
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

import onert_checkpoint as oc
from onert_checkpoint.format.layout import Schema1Layout, WofLayout
from onert_checkpoint.format.revisions.blocks import MAX_TABLE_ENTRIES
from onert_checkpoint.format.revisions.v1 import write as v1_write
from onert_checkpoint.format.revisions.wof import write as wof_write
from tests.fuzz.structure import reseal_v2

ROOT = Path(__file__).resolve().parents[2]
ADAM = ROOT / "tests" / "data" / "real-onert" / "fc2-adam-step8.ckpt"
ORIGIN_KIND = 5


def _origin_offset(data: bytes) -> int:
    table, count = struct.unpack_from("<Q", data, 16)[0], struct.unpack_from("<I", data, 24)[0]
    for i in range(count):
        kind, _flags, ofs = struct.unpack_from("<IIQ", data, table + 32 * i)
        if kind == ORIGIN_KIND:
            return ofs
    raise AssertionError("no origin section")


def hostile_v2(num_entries: int) -> bytes:
    """The real onert Adam file upgraded to schema 2, its origin claiming ``num_entries``, every
    CRC recomputed so that the file is valid."""
    data = bytearray(oc.to_bytes(oc.convert(oc.load(ADAM), to="v2")))
    struct.pack_into("<Q", data, _origin_offset(data) + 16, num_entries)
    return reseal_v2(bytes(data))


HUGE = [MAX_TABLE_ENTRIES + 1, 1 << 28, 1 << 40, (1 << 64) - 1]


@pytest.mark.parametrize("n", HUGE, ids=["2**24+1", "2**28", "2**40", "2**64-1"])
@pytest.mark.parametrize("to", ["v1", "wof"])
def test_huge_origin_is_refused_before_allocating(tmp_path, n, to):
    data = hostile_v2(n)
    ckpt = oc.load(data)  # valid: schema 2 does not bound the original table length
    assert ckpt.layout.origin["num_entries"] == n
    out = tmp_path / "out.ckpt"
    tracemalloc.start()
    try:
        with pytest.raises(oc.CheckpointError) as info:
            oc.save(oc.convert(ckpt, to=to, allow_lossy=True), out)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert info.value.code == "not_representable"
    assert info.value.field == "num_entries"
    assert str(MAX_TABLE_ENTRIES) in info.value.message
    assert peak < 12 << 20, f"{peak} bytes allocated before the refusal"
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("n", [1 << 28, (1 << 64) - 1], ids=["2**28", "2**64-1"])
def test_cli_refuses_with_one_line_and_exit_1(tmp_path, n):
    src = tmp_path / "in.ckpt"
    src.write_bytes(hostile_v2(n))
    out = tmp_path / "out.ckpt"
    res = subprocess.run(
        [sys.executable, "-m", "onert_checkpoint", "convert", str(src), str(out), "--to", "v1"],
        capture_output=True, text=True, timeout=120, cwd=ROOT,
    )
    assert res.returncode == 1, res.stderr
    assert res.stderr.count("\n") == 1 and "not_representable" in res.stderr, res.stderr
    assert not out.exists()


def test_limit_itself_is_written_streaming(tmp_path):
    """2**23 entries (a 32 MiB table): the table is written in windows, never held whole (a
    dense int64 table would be 64 MiB; what is held is at most one write batch of 8 MiB), and
    every entry lands where the original had it."""
    n = 1 << 23
    ckpt = oc.convert(oc.load(hostile_v2(n)), to="wof", allow_lossy=True)
    out = tmp_path / "out.wof"
    tracemalloc.start()
    try:
        oc.save(ckpt, out)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 12 << 20, f"peak {peak} bytes for a {4 * n}-byte table"
    raw = out.read_bytes()
    assert struct.unpack_from("<I", raw, 4)[0] == n
    table = np.frombuffer(raw, "<u4", n, 8)
    original = oc.load(ADAM)
    present = np.flatnonzero(table)
    assert present.tolist() == [t.index for t in original.tensors]
    for t, ofs in zip(original.tensors, table[present]):
        assert raw[ofs : ofs + t.nbytes] == t.raw.tobytes()


def test_boundary_of_the_table_limit():
    tensors = [oc.Tensor(0, np.zeros(4, np.uint8))]
    at_limit = oc.Checkpoint(list(tensors), layout=WofLayout("wof", num_entries=MAX_TABLE_ENTRIES))
    block = wof_write.plan(at_limit)
    assert block.num_entries == MAX_TABLE_ENTRIES
    over = oc.Checkpoint(list(tensors), layout=WofLayout("wof", num_entries=MAX_TABLE_ENTRIES + 1))
    with pytest.raises(oc.CheckpointError, match="not_representable"):
        wof_write.plan(over)
    v1 = oc.Checkpoint(list(tensors), oc.Optimizer("sgd"),
                       layout=Schema1Layout("v1", dialect="onert-micro",
                                            num_entries=MAX_TABLE_ENTRIES))
    assert v1_write.plan(v1, "onert-micro").header["num_entries"] == MAX_TABLE_ENTRIES
    v1.layout.num_entries = MAX_TABLE_ENTRIES + 1
    with pytest.raises(oc.CheckpointError, match="not_representable"):
        v1_write.plan(v1, "onert-micro")


def test_u32_size_is_checked_from_the_sizes_alone():
    """4 GiB of data (a broadcast view: no memory) cannot be a schema-1 or WOF file: refused
    from N and the sizes alone, before a byte of data is read."""
    big = np.broadcast_to(np.zeros(1, np.uint8), (1 << 32,))
    ckpt = oc.Checkpoint([oc.Tensor(0, big)], oc.Optimizer("sgd"),
                         layout=Schema1Layout("v1", dialect="onert", num_entries=1))
    with pytest.raises(oc.CheckpointError, match="u32"):
        v1_write.plan(ckpt, "onert")
    wof = oc.Checkpoint([oc.Tensor(0, big)], layout=WofLayout("wof", num_entries=1))
    with pytest.raises(oc.CheckpointError, match="u32"):
        wof_write.plan(wof)


@pytest.mark.parametrize("bad", [-1, 1 << 64, 2.5, "3"])
def test_origin_num_entries_outside_u64_is_refused_by_the_v2_writer(bad):
    ckpt = oc.convert(oc.load(ADAM), to="v2")
    ckpt.layout.origin = dict(ckpt.layout.origin, num_entries=bad)
    with pytest.raises(oc.CheckpointError, match="not_representable"):
        oc.to_bytes(ckpt)
