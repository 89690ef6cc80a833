"""A revision is data: a record added to the registry, here a copy of schema 3's under version
byte 4, is loaded, saved, converted and validated by the library with no other edit (this
module is the only place that names it)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import pytest
from onert_checkpoint_generated.layout import Header

import onert_checkpoint as oc
from onert_checkpoint.format.container.constants import header_crc
from onert_checkpoint.format.revisions import registry

DATA = Path(__file__).parents[1] / "data" / "real-onert"
V4 = dataclasses.replace(registry.BY_NAME["v3"], name="v4", version=4, title="schema 4")


@pytest.fixture
def v4() -> Iterator[registry.Revision]:
    registry.register(V4)
    try:
        yield V4
    finally:
        registry.unregister(V4.name)


def test_fake_revision_is_converted_saved_and_loaded(v4: registry.Revision, tmp_path: Path):
    source = oc.load(DATA / "fc3-adam-step12.ckpt", model=DATA / "fc3.circle")
    ckpt = oc.convert(source, "v4")
    assert ckpt.revision == "v4"
    oc.save(ckpt, tmp_path / "run.ckpt")
    data = (tmp_path / "run.ckpt").read_bytes()
    assert data[2] == 4
    back = oc.load(tmp_path / "run.ckpt")
    assert back.revision == "v4"
    back.verify()
    assert back.content_equal(ckpt)
    assert [t.name for t in back.tensors] == [t.name for t in source.tensors]
    # the same bytes as schema 3 but for the version byte and the header's CRC
    v3 = bytearray(oc.to_bytes(oc.convert(source, "v3")))
    v3[2] = 4
    crc = Header.header_crc
    v3[crc.offset : crc.offset + crc.size] = header_crc(memoryview(v3)).to_bytes(4, "little")
    assert bytes(v3) == data


def test_fake_revision_converts_back_to_the_original_file(v4: registry.Revision):
    original = (DATA / "fc3-adam-step12.ckpt").read_bytes()
    ckpt = oc.load(oc.to_bytes(oc.convert(oc.load(original), "v4")))
    assert ckpt.revision == "v4" and ckpt.layout.origin is not None
    assert oc.to_bytes(oc.convert(ckpt, "v1")) == original


def test_fake_revision_is_validated_rule_by_rule(v4: registry.Revision):
    data = bytearray(oc.to_bytes(oc.convert(oc.load(DATA / "fc2-sgd-step8.ckpt"), "v4")))
    data[-1] ^= 0xFF  # the last data byte: the data section's checksum no longer matches
    with pytest.raises(oc.CheckpointError) as caught:
        oc.load(bytes(data)).verify()
    assert caught.value.code in ("section_checksum", "block_checksum")


def test_fake_revision_is_gone_once_unregistered():
    data = bytearray(oc.to_bytes(oc.load(DATA / "fc2-sgd-step8.ckpt"), revision="v3"))
    data[2] = 4
    with pytest.raises(oc.CheckpointError) as caught:
        oc.load(bytes(data))
    assert caught.value.code == "unsupported_version"
