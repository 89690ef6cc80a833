"""The exports written a member at a time hold what the whole-dict writers held.

``to_safetensors`` writes the safetensors format itself (interchange/safetensors_io.py): its
file must be what safetensors' own writer gives the same arrays and metadata (header length,
tensor order, dtype, shape, offsets, metadata, data), and read back with safetensors.

``to_npz`` streams its zip (interchange/npz_stream.py): every member must have the bytes
``numpy.savez`` gives the same arrays and metadata, the zip must read back (ZIP64 records
included past 65535 members), and a checkpoint read back from it must write the original
file. ``to_numpy_dict`` shares one object per empty array geometry: the arrays must still be
what each entry holds.
"""

from __future__ import annotations

import io
import json
import struct
import zipfile
from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import load_file, save

import onert_checkpoint as oc
from onert_checkpoint.interchange.npz_stream import npz_chunks, string_member
from onert_checkpoint.interchange.tensor_dict import (
    NPZ_META_PREFIX,
    _iter_arrays,
    checkpoint_metadata,
)
from tests.large_files import v3_many_entries

ROOT = Path(__file__).resolve().parents[2]


def _valid_files() -> list[Path]:
    files = sorted((ROOT / "tests" / "data").rglob("*.ckpt"))
    files += sorted(
        p for p in (ROOT / "spec" / "vectors").glob("*.ckpt") if not p.name.startswith("invalid")
    )
    return files


FILES = _valid_files()


def _savez_members(ckpt: oc.Checkpoint) -> dict[str, bytes]:
    """The members numpy.savez writes for the export's arrays and metadata (what to_npz wrote
    before it streamed, except that a rank-0 array now keeps its shape: the old writer's
    ``ascontiguousarray`` made it one-dimensional)."""
    members = dict(_iter_arrays(ckpt, True))
    for key, value in checkpoint_metadata(ckpt, paths=True).items():
        members[NPZ_META_PREFIX + key] = np.array(value)
    buffer = io.BytesIO()
    np.savez(buffer, **members)  # type: ignore[arg-type]
    with zipfile.ZipFile(buffer) as zf:
        return {name: zf.read(name) for name in zf.namelist()}


def test_there_are_files_to_compare():
    assert len(FILES) >= 10


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_streamed_npz_has_the_members_savez_writes(path, tmp_path):
    ckpt = oc.load(path)
    out = tmp_path / "out.npz"
    oc.to_npz(ckpt, out)
    with zipfile.ZipFile(out) as zf:
        assert zf.testzip() is None
        got = {name: zf.read(name) for name in zf.namelist()}
    assert got == _savez_members(ckpt)
    assert oc.to_bytes(oc.from_npz(out)) == path.read_bytes()


def test_streamed_npz_of_more_than_65535_members_reads_back(tmp_path):
    """Past 65535 members the zip needs its ZIP64 end records; numpy reads every member."""
    data = v3_many_entries(70_000)
    out = tmp_path / "many.npz"
    oc.to_npz(oc.load(data), out)
    # the ZIP64 end record and its locator precede the classic end record (22 bytes): readers
    # other than Python's trust the classic record's member count, which stops at 65535
    assert out.read_bytes()[-22 - 20 - 56 : -22 - 20][:4] == b"PK\x06\x06"
    with np.load(out) as npz:
        assert len(npz.files) == 70_000 + len(checkpoint_metadata(oc.load(data), paths=True))
    assert oc.to_bytes(oc.from_npz(out)) == data


def test_exactly_65535_members_get_the_zip64_end_records() -> None:
    """The classic end record's member count is a u16 whose 0xFFFF says "see the ZIP64 end
    record" (APPNOTE 4.4.1.4): 65,535 members get the ZIP64 records, whose count says 65,535,
    so a reader that takes 0xFFFF as that mark finds the count (the 70,000-member test above
    covers the count past the u16)."""
    count = 65_535
    empty = np.zeros(0, np.uint8)
    data = b"".join(bytes(c) for c in npz_chunks((str(i), empty) for i in range(count)))
    classic = struct.unpack_from("<IHHHHIIH", data, len(data) - 22)
    assert classic[0] == 0x06054B50 and classic[3] == classic[4] == 0xFFFF
    tail = data[-22 - 20 - 56 : -22 - 20]
    assert tail[:4] == b"PK\x06\x06" and struct.unpack_from("<QQ", tail, 24) == (count, count)
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        assert len(zf.namelist()) == count and zf.namelist()[-1] == f"{count - 1}.npy"


@pytest.mark.parametrize("text", ["", "h\u00e9llo \u2603", "x" * 70_000, "a\ud800b"])
def test_a_metadata_text_in_pieces_is_the_member_numpy_saves(text):
    """The metadata texts are encoded a piece at a time: the member is numpy.save's."""
    expected = io.BytesIO()
    np.save(expected, np.array(text))
    pieces = [text[:3], text[3:]]
    zipped = b"".join(bytes(c) for c in npz_chunks([("m", string_member(pieces))]))
    with zipfile.ZipFile(io.BytesIO(zipped)) as zf:
        assert zf.read("m.npy") == expected.getvalue()


def test_shared_empty_arrays_are_each_entrys_array():
    """Empty arrays of one geometry are one object, each still the entry's (empty, typed as
    the entry); an entry with bytes keeps its own view."""
    ckpt = oc.Checkpoint([
        oc.Tensor(0, np.zeros(0, np.uint8)),
        oc.Tensor(1, np.zeros(0, np.uint8)),
        oc.Tensor(2, np.arange(4, dtype=np.uint8)),
        oc.Tensor(3, np.zeros(0, np.uint8), dtype="float32", shape=(0, 2)),
    ])
    arrays = oc.to_numpy_dict(ckpt)
    assert arrays["0"] is arrays["1"]
    assert arrays["3"].dtype == np.float32 and arrays["3"].shape == (0, 2)
    assert arrays["2"].tolist() == [0, 1, 2, 3]
    assert oc.to_bytes(oc.from_numpy_dict(*oc.to_numpy_dict(ckpt, metadata=True))) == (
        oc.to_bytes(ckpt)
    )


def _split_safetensors(data: bytes) -> tuple[int, dict, list[str], bytes]:
    length = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8 : 8 + length])
    return length, header, list(header), data[8 + length :]


def _reference_safetensors(ckpt: oc.Checkpoint) -> bytes:
    """What safetensors' own writer gives for the export's arrays and metadata (its metadata
    keys come out in a hash map's order, which varies from run to run)."""
    arrays, meta = oc.to_numpy_dict(ckpt, metadata=True)
    return save(dict(arrays), metadata=meta)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_streamed_safetensors_is_what_safetensors_writes(path, tmp_path):
    """The same header length, header (tensors in the same order, the same dtype, shape and
    offsets; the same metadata), data bytes; safetensors reads it; it imports back to the
    original file."""
    ckpt = oc.load(path)
    out = tmp_path / "out.safetensors"
    oc.to_safetensors(ckpt, out)
    got = _split_safetensors(out.read_bytes())
    assert got == _split_safetensors(_reference_safetensors(ckpt))
    assert got[2][0] == "__metadata__" and got[0] % 8 == 0
    arrays = oc.to_numpy_dict(ckpt)
    loaded = load_file(out)
    assert set(loaded) == set(arrays)
    for name, arr in arrays.items():
        assert loaded[name].dtype == arr.dtype and loaded[name].shape == arr.shape
        assert loaded[name].tobytes() == arr.tobytes()
    assert oc.to_bytes(oc.from_safetensors(out)) == path.read_bytes()


@pytest.mark.parametrize("long_name", [False, True])
def test_streamed_safetensors_orders_names_as_safetensors(long_name, tmp_path):
    """Tensors of several dtypes and names that sort differently as text and as UTF-8 bytes
    (and, with a long name, the names sorted as objects rather than fixed-width bytes)."""
    names = ["b", "a", "\u00e9", "z\u2603", "Z", "a.b", "10", "9"]
    if long_name:
        names.append("x" * 1000)
    dtypes = ["float32", "uint8", "int64", "float16", "int8", "float64", "uint16", "int32",
              "uint64"]
    tensors = [
        oc.Tensor(k, np.arange(2 * k + 2, dtype=np.uint8), name=n,
                  dtype=dtypes[k % len(dtypes)] if (2 * k + 2) % 8 == 0 else "uint8",
                  shape=None)
        for k, n in enumerate(names)
    ]
    ckpt = oc.Checkpoint(tensors, revision="v3")
    out = tmp_path / "o.safetensors"
    oc.to_safetensors(ckpt, out)
    assert _split_safetensors(out.read_bytes()) == _split_safetensors(
        _reference_safetensors(ckpt))
    assert oc.to_bytes(oc.from_safetensors(out)) == oc.to_bytes(ckpt)


def test_a_name_with_a_lone_surrogate_travels_in_the_metadata(tmp_path):
    """A name no UTF-8 text holds is not an array name (not printable): the array is named by
    its entry index and the name travels escaped in the metadata."""
    ckpt = oc.Checkpoint([oc.Tensor(0, np.zeros(1, np.uint8), name="a\ud800")], revision="v3")
    out = tmp_path / "o.safetensors"
    oc.to_safetensors(ckpt, out)
    assert list(load_file(out)) == ["0"]
    assert oc.from_safetensors(out).tensors[0].name == "a\ud800"
