"""One test per schema-1 and WOF validation rule of spec/SPEC.md, named after its error code.

Each starts from a valid file written by the library and breaks exactly one rule.
"""

from __future__ import annotations

import struct

import numpy as np
import pytest

import onert_checkpoint as oc
from onert_checkpoint import Buffer, Checkpoint, Optimizer, Tensor, TrainingState
from onert_checkpoint.format.layout import Schema1Layout, WofLayout


def tensor(index: int, nbytes: int, fill: int = 0) -> Tensor:
    return Tensor(index=index, data=np.full(nbytes, fill + index, dtype=np.uint8))


def make(kind: str = "adam", dialect: str = "onert", sizes=(8, 4, 12), absent=()) -> bytes:
    tensors = [tensor(i, n) for i, n in enumerate(sizes) if i not in absent]
    opt = Optimizer(kind)
    for slot_no, slot in enumerate(opt.slot_names):
        opt.slots[slot] = {
            t.index: Buffer(t.index, np.full(t.nbytes, 100 + 10 * slot_no, np.uint8))
            for t in tensors
        }
    ckpt = Checkpoint(tensors, opt, TrainingState(step=7, epoch=3),
                      layout=Schema1Layout("v1", num_entries=len(sizes)))
    return oc.to_bytes(ckpt, dialect=dialect)


def put32(data: bytes, at: int, value: int) -> bytes:
    return data[:at] + struct.pack("<I", value) + data[at + 4 :]


def u32(data: bytes, at: int) -> int:
    return struct.unpack_from("<I", data, at)[0]


def wof(sizes=(8, 0, 4), absent=(1,)) -> bytes:
    tensors = [tensor(i, n) for i, n in enumerate(sizes) if i not in absent]
    return oc.to_bytes(Checkpoint(tensors, None, layout=WofLayout("wof", num_entries=len(sizes))))


def expect(data: bytes, code: str, field: str | None = None, offset: int | None = None):
    with pytest.raises(oc.CheckpointError) as info:
        oc.load(data)
    err = info.value
    assert err.code == code, err
    if field is not None:
        assert err.field == field, err
    if offset is not None:
        assert err.offset == offset, err
    assert isinstance(err, ValueError)
    return err


def test_the_valid_baselines_load():
    assert oc.load(make()).dialect is None
    assert oc.load(make("sgd")).dialect == "onert"
    assert oc.load(make("sgd", "onert-micro")).dialect == "onert-micro"
    assert oc.load(make("adam", "onert-micro", absent=(1,))).dialect == "onert-micro"
    assert oc.load(wof()).revision == "wof"


@pytest.mark.parametrize("size", [0, 1])
def test_truncated_header_before_magic(size):
    expect(make()[:size], "truncated_header", "header", 0)


def test_truncated_header_before_version():
    expect(make()[:2], "truncated_header", "header", 0)


def test_truncated_header_schema_1():
    # 19 bytes: too short for both the checkpoint and WOF's reading of it.
    data = make()
    expect(data[:7], "truncated_header", "header", 0)


def test_bad_magic():
    expect(b"\x00\x00" + make()[2:], "bad_magic", "magic", 0)


def test_unsupported_version():
    data = make()
    expect(data[:2] + b"\x07" + data[3:], "unsupported_version", "version", 2)


def test_unsupported_version_is_its_own_class():
    data = make()
    with pytest.raises(oc.UnsupportedFormatError):
        oc.load(data[:2] + b"\x07" + data[3:])


def test_reserved_nonzero():
    data = make()
    expect(data[:3] + b"\x01" + data[4:], "reserved_nonzero", "reserved", 3)


@pytest.mark.parametrize("count", [1000, 2**30, 2**32 - 1])
def test_count_exceeds_file(count):
    expect(put32(make(), 16, count), "count_exceeds_file", "num_entries", 16)


def test_truncated_file():
    data = make()
    expect(data[:-1], "truncated_file", "ofs_other", 12)


def test_trailing_bytes():
    data = make()
    expect(data + b"\x00", "trailing_bytes", "footer", len(data))


def test_optimizer_layout_v_without_m():
    expect(put32(make(), 4, 0), "optimizer_layout", "ofs_opt1", 4)


def test_optimizer_layout_sgd_opt1_elsewhere():
    data = make("sgd")
    expect(put32(data, 4, 20), "optimizer_layout", "ofs_opt1", 4)


def test_offset_out_of_bounds_optimizer_offset():
    data = make()
    expect(put32(data, 8, len(data) + 1), "offset_out_of_bounds", "ofs_opt2", 8)


def test_offset_out_of_bounds_entry():
    data = make()
    expect(put32(data, 24, 2**32 - 1), "offset_out_of_bounds", "weights[1]", 24)


def test_block_order():
    data = make()
    opt1 = u32(data, 4)
    expect(put32(data, 8, opt1 + 4), "block_order", "ofs_opt2", 8)


def test_block_order_footer_inside_table():
    data = make("sgd")
    # A footer offset inside the weight table: the footer would not be the last 8 bytes, but
    # even before that rule the block order is broken. Make the file end right after it.
    short = put32(put32(data[:32], 12, 24), 4, 24)
    expect(short, "block_order", "ofs_other", 12)


def test_entry_out_of_block_into_header():
    data = make()
    expect(put32(data, 20, 4), "entry_out_of_block", "weights[0]", 20)


def test_entry_out_of_block_into_next_block():
    data = make()
    opt1 = u32(data, 4)
    expect(put32(data, 20 + 4 * 2, opt1 + 4), "entry_out_of_block", "weights[2]", 28)


def test_unreferenced_bytes():
    data = make()
    # Move entry 0 four bytes later: the first four data bytes then belong to no entry.
    expect(put32(data, 20, u32(data, 20) + 4), "unreferenced_bytes", "weights", 32)


def test_slot_without_weight():
    data = make("adam", "onert-micro", absent=(1,))
    opt1, opt2 = u32(data, 4), u32(data, 8)
    # An empty m entry at the end of the m block, for a tensor that has no weight entry.
    expect(put32(data, opt1 + 4, opt2), "slot_without_weight", "m[1]", opt1 + 4)


def test_slot_size_mismatch():
    data = make()
    opt1 = u32(data, 4)
    # Swap the data of m entries 0 and 1 in the table: sizes no longer match the weights.
    a, b = u32(data, opt1), u32(data, opt1 + 4)
    swapped = put32(put32(data, opt1, b), opt1 + 4, a)
    expect(swapped, "slot_size_mismatch", "m[0]", opt1)


def test_dialect_conflict():
    # onert's SGD offsets (opt1 == other) together with onert-micro's absent entry.
    data = make("sgd", "onert-micro", absent=(1,))
    expect(put32(data, 4, u32(data, 12)), "dialect_conflict", "header", 0)


def test_wof_truncated_header():
    # The checkpoint reading fails too, and a 7-byte file is not WOF-shaped: checkpoint error.
    expect(wof()[:7], "truncated_header", "header", 0)


def test_wof_count_too_large_is_not_wof_shaped():
    # A count whose table does not fit makes the file not WOF-shaped (spec, revision detection
    # 5.3): the checkpoint reading's error is reported.
    data = wof(sizes=(8, 4, 4, 4, 4, 4), absent=())
    expect(put32(data, 4, 100), "count_exceeds_file", "num_entries", 16)


def test_wof_entry_out_of_block():
    data = wof(sizes=(8, 4, 4, 4, 4, 4), absent=())
    expect(put32(data, 8, 9), "entry_out_of_block", "tensors[0]", 8)


def test_wof_offset_out_of_bounds():
    data = wof(sizes=(8, 4, 4, 4, 4, 4), absent=())
    expect(put32(data, 12, len(data) + 1), "offset_out_of_bounds", "tensors[1]", 12)


def test_wof_unreferenced_bytes():
    data = wof(sizes=(8, 4, 4), absent=())
    expect(put32(data, 8, u32(data, 8) + 4), "unreferenced_bytes", "tensors", 20)


def test_wof_reserved_nonzero_reported_by_the_checkpoint_reading():
    data = wof()
    expect(data[:3] + b"\x01" + data[4:], "reserved_nonzero", "reserved", 3)


def test_errors_are_value_errors_with_code_field_offset():
    err = expect(make()[:-1], "truncated_file")
    assert err.to_dict() == {
        "code": "truncated_file",
        "field": "ofs_other",
        "offset": 12,
        "message": err.message,
    }
