"""Schema 1 and WOF address their data with u32 offsets: a file larger than 0xFFFFFFFF bytes is
refused (``limit_exceeded``, field ``file``, offset 0xFFFFFFFF) before any table is read, never
reported valid with its sizes taken modulo 2**32. The files are sparse:
nothing near 4 GiB is written or allocated."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

import onert_checkpoint as oc

DATA = Path(__file__).parents[1] / "data" / "real-onert"
U32_MAX = 0xFFFF_FFFF


def sparse(tmp_path: Path, head: bytes, size: int) -> Path:
    path = tmp_path / "big.ckpt"
    with open(path, "wb") as f:
        f.write(head)
        f.truncate(size)
    assert os.stat(path).st_blocks * 512 < 1 << 20  # sparse: under 1 MiB on disk
    return path


def footerless(ckpt: oc.Checkpoint) -> bytes:
    """``ckpt`` as a footer-less onert file (ofs_other = 0; its data run to the end)."""
    ckpt.layout.quirks = ("footerless",)
    ckpt.state.clear()
    return oc.to_bytes(ckpt, revision="v1", dialect="onert")


HEADS = {
    "v1": lambda: (DATA / "fc2-sgd-step8.ckpt").read_bytes(),
    "v1 footer-less": lambda: footerless(oc.load(DATA / "fc2-sgd-step8.ckpt")),
    "wof": lambda: oc.to_bytes(oc.convert(oc.Checkpoint(tensors=[
        oc.Tensor(0, np.arange(3, dtype=np.float32).view(np.uint8))]), "wof")),
}


@pytest.mark.parametrize("kind", sorted(HEADS))
def test_v1_size_limit_over_4_gib_is_refused(tmp_path: Path, kind: str) -> None:
    path = sparse(tmp_path, HEADS[kind](), U32_MAX + 1 + 100)
    with pytest.raises(oc.CheckpointError) as caught:
        oc.load(path)
    err = caught.value
    assert (err.code, err.field, err.offset) == ("limit_exceeded", "file", U32_MAX)


@pytest.mark.parametrize("kind", sorted(HEADS))
def test_v1_size_limit_at_the_largest_size_is_other_rules(tmp_path: Path, kind: str) -> None:
    """A file of exactly 0xFFFFFFFF bytes is within the limit: what refuses it (its footer or
    its tables no longer fit the padded size) is another rule."""
    path = sparse(tmp_path, HEADS[kind](), U32_MAX)
    try:
        oc.load(path)
    except oc.CheckpointError as err:
        assert err.code != "limit_exceeded"
