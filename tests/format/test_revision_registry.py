"""One table of revisions (format/revisions/registry.py) serves loading and saving: every
revision it lists is written by its writer and read back by its reader, and the loader and the
saver know exactly the revisions and version bytes it lists."""

from __future__ import annotations

import numpy as np
import pytest

import onert_checkpoint as oc
from onert_checkpoint.format import dispatch, saving
from onert_checkpoint.format.revisions.registry import BY_NAME, REVISIONS


def test_loader_and_saver_know_the_registry_s_revisions() -> None:
    assert set(saving.WRITERS) == {r.name for r in REVISIONS}
    assert dispatch.SUPPORTED_VERSIONS == tuple(sorted({r.version for r in REVISIONS}))


@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_each_revision_round_trips_through_its_registry_entry(name: str) -> None:
    r = BY_NAME[name]
    ckpt = oc.Checkpoint(tensors=[oc.Tensor(0, np.arange(3, dtype=np.float32).view(np.uint8))])
    if name == "wof":
        ckpt = oc.convert(ckpt, "wof")
    dialect = "onert-micro" if name == "v1" else None
    data = b"".join(r.write_chunks(ckpt, dialect))
    assert data[2] == r.version
    back = r.read(memoryview(data))
    assert back.revision == name
    assert oc.load(data).revision == name
    assert bytes(back.tensors[0].data) == np.arange(3, dtype=np.float32).tobytes()
