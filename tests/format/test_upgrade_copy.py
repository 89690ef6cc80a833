"""``upgrade`` (and so ``convert``) of a loaded schema-2 or schema-3 file copies the tensors
lazily (format/entries.py, ``TensorList.copied``): the copy behaves as the eager copy did."""

from __future__ import annotations

import pytest

import onert_checkpoint as oc
from tests.large_files import v3_many_entries


def _damaged() -> bytes:
    """A schema-3 file whose one data byte (its last) no longer matches its checksum."""
    data = bytearray(v3_many_entries(10))
    data[-1] ^= 0xFF
    return bytes(data)


def test_upgrade_runs_the_data_checks_a_copy_reads_then_refuses():
    ckpt = oc.load(_damaged())
    with pytest.raises(oc.CheckpointError) as refused:
        oc.upgrade(ckpt, to="v2")
    with pytest.raises(oc.CheckpointError) as verified:
        oc.load(_damaged()).verify()
    assert refused.value.code == verified.value.code


def test_upgrade_of_a_file_read_unchecked_is_checked_by_the_save(tmp_path):
    source = oc.load(_damaged(), verify_data=False)
    copy = oc.upgrade(source, to="v2")
    with pytest.raises(oc.CheckpointError):
        oc.save(copy, tmp_path / "out.ckpt")
    assert not (tmp_path / "out.ckpt").exists()


def test_upgrade_copy_outlives_the_open_block_and_keeps_edits(tmp_path):
    path = tmp_path / "in.ckpt"
    path.write_bytes(v3_many_entries(200))
    with oc.open(path) as ckpt:
        ckpt.tensors[3].name = "renamed"
        copy = oc.upgrade(ckpt, to="v2")
    copy.tensors[5].name = "only-in-the-copy"
    again = oc.load(oc.to_bytes(copy, revision="v2"))
    assert [t.name for t in again.tensors][3:6] == ["renamed", None, "only-in-the-copy"]
    assert [t.nbytes for t in again.tensors] == [0] * 199 + [4]
    assert oc.load(path).tensors[5].name is None
