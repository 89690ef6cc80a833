"""A write never puts fresh checksums over bytes that changed after their check: a caller's
writable buffer and a mapped file written in place are checked again, whole, on their bytes as
they are at the write (docs/saving.md, "Nothing is lost, nothing unverified is written").

* ``load(bytearray)``, then a byte of a tensor record changed in the buffer: the records are
  views of the buffer, and ``to_bytes`` used to write the changed record under a fresh section
  CRC, silently. Refused now with the check's own error.
* A mapped schema-3 file whose data_blocks CRC is damaged in place after the load: the block
  CRCs are copied at load, so the check against them passed again and ``save`` wrote the
  damaged section. Refused now.
"""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

import onert_checkpoint as oc
from onert_checkpoint.format.container.data_blocks import KIND as DATA_BLOCKS

ADAM = Path(__file__).resolve().parents[1] / "data" / "real-onert" / "fc2-adam-step8.ckpt"
CHECKSUM_ERRORS = {"section_checksum", "block_checksum", "section_table_crc", "header_crc"}


def _file(revision: str) -> bytes:
    return oc.to_bytes(oc.upgrade(oc.load(ADAM), to=revision))


def _section(data: bytes | bytearray, kind: int) -> tuple[int, int]:
    """(offset, length) of the first section of ``kind`` in a schema-2/3 file."""
    count = struct.unpack_from("<I", data, 16)[0]
    for i in range(count):
        k, _, offset, length, _, _ = struct.unpack_from("<IIQQII", data, 64 + 32 * i)
        if k == kind:
            return offset, length
    raise AssertionError(f"no section of kind {kind:#x}")


TENSORS = 1


@pytest.mark.parametrize("revision", ["v2", "v3"])
@pytest.mark.parametrize("verified", [False, True], ids=["fresh", "verified"])
def test_a_record_changed_in_the_callers_buffer_is_refused_not_written(
    revision: str, verified: bool
) -> None:
    """Every byte of the tensor records, each changed in a fresh load's buffer: ``to_bytes``
    refuses with a checksum error or writes what it wrote before (a byte it does not copy)."""
    data = _file(revision)
    good = oc.to_bytes(oc.load(data))
    offset, length = _section(data, TENSORS)
    refused = 0
    for at in range(offset, offset + length):
        buf = bytearray(data)
        ckpt = oc.load(buf)
        if verified:
            ckpt.verify()
        buf[at] ^= 0x10
        try:
            out = oc.to_bytes(ckpt)
        except oc.CheckpointError as err:
            assert err.code in CHECKSUM_ERRORS, err
            refused += 1
        else:
            assert out == good, f"byte {at} of the records changed the output silently"
    assert refused == length  # every record byte is under the section's CRC


@pytest.mark.parametrize("revision", ["v2", "v3"])
def test_a_record_changed_in_a_mapped_file_is_refused_by_save(
    tmp_path: Path, revision: str
) -> None:
    path = tmp_path / "in.ckpt"
    path.write_bytes(_file(revision))
    ckpt = oc.load(path, mmap=True)
    ckpt.verify()
    offset, _ = _section(path.read_bytes(), TENSORS)
    with open(path, "r+b") as f:  # the first record's length field region, in place
        f.seek(offset + 8)
        byte = f.read(1)
        f.seek(offset + 8)
        f.write(bytes([byte[0] ^ 0x10]))
    out = tmp_path / "out.ckpt"
    with pytest.raises(oc.CheckpointError) as info:
        oc.save(ckpt, out)
    assert info.value.code in CHECKSUM_ERRORS
    assert not out.exists()


@pytest.mark.parametrize("where", ["mapped", "buffer"])
def test_a_block_crc_damaged_after_the_load_is_never_written(tmp_path: Path, where: str) -> None:
    data = _file("v3")
    offset, _ = _section(data, DATA_BLOCKS)
    crc_at = offset + 16  # the section's 16-byte head, then one CRC-32C per block
    path = tmp_path / "in.ckpt"
    path.write_bytes(data)
    buf = bytearray(data)
    ckpt = oc.load(path, mmap=True) if where == "mapped" else oc.load(buf)
    ckpt.verify()
    if where == "mapped":
        with open(path, "r+b") as f:
            f.seek(crc_at)
            f.write(b"\0\0\0\0")
    else:
        buf[crc_at : crc_at + 4] = b"\0\0\0\0"
    out = tmp_path / "out.ckpt"
    for write in (lambda: oc.save(ckpt, out), lambda: oc.to_bytes(ckpt)):
        with pytest.raises(oc.CheckpointError) as info:
            write()
        assert info.value.code in CHECKSUM_ERRORS
    assert not out.exists()


def test_a_block_crc_damaged_before_the_first_read_is_seen_by_the_read(tmp_path: Path) -> None:
    """The block CRCs are read from the mapping when a block is checked, not copied at load:
    a CRC damaged in place between the load and the first read of its block refuses the read
    (and the write above would re-read the file anyway)."""
    data = _file("v3")
    offset, _ = _section(data, DATA_BLOCKS)
    path = tmp_path / "in.ckpt"
    path.write_bytes(data)
    ckpt = oc.load(path, mmap=True)
    with open(path, "r+b") as f:
        f.seek(offset + 16)
        f.write(b"\0\0\0\0")
    with pytest.raises(oc.CheckpointError) as info:
        ckpt.tensors[0].numpy()
    assert info.value.code == "block_checksum"
