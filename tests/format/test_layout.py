"""``Checkpoint.layout``: what a file records besides the content, one class per revision
(format/layout.py), apart from the content that ``==``, export and conversion keep."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import onert_checkpoint as oc
from onert_checkpoint.format.layout import (
    Schema1Layout,
    Schema2Layout,
    Schema3Layout,
    Section,
    WofLayout,
)
from onert_checkpoint.format.revisions import registry

DATA = Path(__file__).parents[1] / "data" / "real-onert"
FC2 = DATA / "fc2-adam-step8.ckpt"


def test_equality_is_the_content_not_the_layout():
    ckpt = oc.load(FC2)
    v3 = oc.load(oc.to_bytes(oc.convert(ckpt, "v3")))
    assert type(v3.layout) is not type(ckpt.layout)
    assert v3 == ckpt and ckpt == v3 and oc.load(FC2) == ckpt
    changed = oc.load(FC2)
    changed.state["step"] = 9
    assert changed != ckpt
    other = oc.Checkpoint([oc.Tensor(t.index, np.array(t.raw)) for t in ckpt.tensors],
                          ckpt.optimizer, ckpt.state, revision="v1")
    assert other == ckpt
    other[0] = np.ones(128, np.uint8)
    assert other != ckpt
    assert ckpt != "v1" and ckpt != dict(ckpt)


@pytest.mark.parametrize("revision, layout_type", [("v1", Schema1Layout), ("wof", WofLayout),
                                                   ("v2", Schema2Layout), ("v3", Schema3Layout)])
def test_each_revision_reads_into_its_own_layout(revision: str, layout_type: type):
    source = oc.load(FC2)
    ckpt = oc.load(oc.to_bytes(oc.convert(source, revision, allow_lossy=True)))
    assert type(ckpt.layout) is layout_type is registry.BY_NAME[revision].layout_type
    assert (ckpt.revision, ckpt.layout.revision) == (revision, revision)
    if revision in ("v1", "wof"):
        assert ckpt.layout.num_entries == 4 and ckpt.layout.origin is None
    else:
        assert ckpt.layout.origin == {"revision": "v1", "dialect": None, "num_entries": 4,
                                      "footerless": False}
        assert ckpt.layout.num_entries is None and ckpt.table_length == 4
    if revision == "v3":
        assert ckpt.layout.data_block_size == 65536 and ckpt.layout.range_index_group == 0


def test_a_field_a_revision_does_not_carry_reads_as_nothing_and_cannot_be_set():
    ckpt = oc.load(FC2)
    layout = ckpt.layout
    assert (layout.sections, layout.origin, layout.data_order, layout.data_block_size) == (
        (), None, None, None)
    with pytest.raises(AttributeError):
        layout.data_block_size = 4096
    with pytest.raises(AttributeError):
        layout.no_such_field  # noqa: B018
    assert oc.convert(ckpt, "v3").layout.quirks == ()


def test_content_built_by_hand_has_the_recommended_revisions_layout():
    ckpt = oc.Checkpoint([oc.Tensor(0, np.zeros(4, np.uint8))])
    assert type(ckpt.layout) is registry.RECOMMENDED.layout_type
    assert (ckpt.revision, ckpt.dialect) == (registry.RECOMMENDED.name, None)
    v1 = oc.Checkpoint(ckpt.tensors, oc.Optimizer("sgd"), revision="v1", dialect="onert")
    assert v1.layout == v1.layout and isinstance(v1.layout, Schema1Layout)
    assert (v1.revision, v1.dialect, v1.layout.num_entries, v1.layout.quirks) == (
        "v1", "onert", None, ())


def test_setting_the_revision_keeps_what_both_revisions_files_carry():
    ckpt = oc.load(oc.to_bytes(oc.convert(oc.load(FC2), "v3")))
    ckpt.layout.sections.append(Section(kind=0x100042, data=b"kept"))
    sections = ckpt.layout.sections
    ckpt.revision = "v2"
    assert type(ckpt.layout) is Schema2Layout
    assert ckpt.layout.origin is not None and ckpt.layout.origin["num_entries"] == 4
    assert [s.data for s in ckpt.layout.sections] == [b"kept"]
    assert ckpt.layout.sections is not sections  # a copy: the layouts share no list
    ckpt.dialect = "onert"
    assert ckpt.layout.dialect == "onert"


@dataclasses.dataclass(eq=False, slots=True)
class _V4Layout(Schema3Layout):
    """Schema 3's layout under another class: what a fake revision brings."""


@pytest.fixture
def v4() -> Iterator[registry.Revision]:
    record = dataclasses.replace(registry.BY_NAME["v3"], name="v4", version=4,
                                 title="schema 4", layout_type=_V4Layout)
    registry.register(record)
    try:
        yield record
    finally:
        registry.unregister(record.name)


def test_a_conversion_builds_the_targets_layout_from_its_record(v4: registry.Revision):
    ckpt = oc.convert(oc.load(FC2), "v4")
    assert type(ckpt.layout) is _V4Layout and ckpt.layout.origin is not None
    back = oc.load(oc.to_bytes(ckpt))
    assert type(back.layout) is _V4Layout and back == ckpt
    made = oc.Checkpoint(revision="v4")
    assert type(made.layout) is _V4Layout
    made.revision = "v1"
    assert type(made.layout) is Schema1Layout


def test_export_and_import_give_the_content_and_its_layout_back():
    ckpt = oc.load(oc.to_bytes(oc.convert(oc.load(FC2), "v3")))
    arrays, meta = oc.to_numpy_dict(ckpt, metadata=True)
    again = oc.from_numpy_dict(arrays, meta)
    assert again == ckpt and type(again.layout) is Schema3Layout
    assert again.layout.origin == ckpt.layout.origin
    assert (again.layout.data_block_size, again.layout.range_index_group) == (65536, 0)
    assert oc.to_bytes(again) == oc.to_bytes(ckpt)
