"""dump --layout follows the revision records, not a table of version bytes: a revision added to
the registry (a copy of schema 3's record under version byte 4) is mapped field by field like
schema 3, under its own name, with no edit of tools/layout_map.py."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import onert_checkpoint as oc
from onert_checkpoint.format.revisions import registry
from onert_checkpoint.tools.layout_map import layout_map

DATA = Path(__file__).parents[1] / "data" / "real-onert"


def test_a_registered_revision_is_mapped_by_its_record():
    v4 = dataclasses.replace(registry.BY_NAME["v3"], name="v4", version=4, title="schema 4")
    source = oc.load(DATA / "fc3-adam-step12.ckpt", model=DATA / "fc3.circle")
    v3 = layout_map(oc.to_bytes(oc.convert(source, "v3")))
    registry.register(v4)
    try:
        mapped = layout_map(oc.to_bytes(oc.convert(source, "v4")))
    finally:
        registry.unregister("v4")
    assert (mapped.revision, mapped.error, v3.error) == ("v4", None, None)
    differ = {
        f.name for f, g in zip(mapped.fields, v3.fields, strict=True) if f.__dict__ != g.__dict__
    }
    assert differ == {"version", "header_crc"}  # the version byte and the CRC over it
    names = {f.name for f in mapped.fields}
    assert {"tensors.len_data", "tensors.names", "data_blocks.crc"} <= names
