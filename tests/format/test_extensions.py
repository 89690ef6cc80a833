"""Schema 3's extension sections are what its reader and writer look up by kind
(format/container/extensions.py): a copy of range_index's record registered under another kind
is written, checked and read under that kind; a section of a kind no record has is kept."""

from __future__ import annotations

import dataclasses
import struct

import numpy as np
import pytest

import onert_checkpoint as oc
from onert_checkpoint.format.container.extensions import EXTENSIONS
from onert_checkpoint.format.layout import Schema3Layout
from onert_checkpoint.format.revisions.v3 import range_index
from onert_checkpoint.format.saving import to_bytes
from tests.format.test_v3_read import patch

#: A kind above range_index's that no section of the specification has.
OTHER = range_index.KIND + 1


def _offsets(data: bytes) -> dict[int, int]:
    """kind -> ofs_body, from the section table."""
    count = struct.unpack_from("<I", data, 24)[0]
    entries = (struct.unpack_from("<IIQ", data, 64 + 32 * i) for i in range(count))
    return {kind: ofs for kind, _, ofs in entries}


def _moved(monkeypatch: pytest.MonkeyPatch) -> None:
    """range_index's record registered under OTHER instead of its own kind."""
    monkeypatch.setitem(EXTENSIONS, OTHER,
                        dataclasses.replace(EXTENSIONS[range_index.KIND], kind=OTHER))
    monkeypatch.delitem(EXTENSIONS, range_index.KIND)


def _file() -> bytes:
    tensors = [oc.Tensor(i, np.full(i % 7, i, np.uint8)) for i in range(100)]
    return to_bytes(oc.Checkpoint(tensors, layout=Schema3Layout("v3", range_index_group=16)))


def test_a_record_registered_under_another_kind_is_written_checked_and_read_there(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _moved(monkeypatch)
    data = _file()
    offsets = _offsets(data)
    assert OTHER in offsets and range_index.KIND not in offsets
    back = oc.load(data)
    assert back.layout.range_index_group == 16 and list(back.layout.sections) == []
    # its rules run: a start that is not where the walk stands is refused by I6
    with pytest.raises(oc.CheckpointError) as info:
        oc.load(patch(data, offsets[OTHER] + 16 + 8, "<Q", 1))
    assert (info.value.code, info.value.field) == ("bad_range_index", "range_index.start[1]")


def test_a_kind_without_a_record_is_kept_and_refused_once_a_record_has_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _moved(monkeypatch)
    data = _file()
    monkeypatch.undo()
    kept = oc.load(data)
    assert [s.kind for s in kept.layout.sections] == [OTHER]
    assert kept.layout.range_index_group == 0
    assert OTHER in _offsets(to_bytes(kept))
    _moved(monkeypatch)
    with pytest.raises(oc.CheckpointError) as info:
        to_bytes(kept)
    assert info.value.code == "not_representable"
    assert f"a kept section of kind {OTHER} would collide" in str(info.value)
