"""Schemas 2 and 3 are written by one container writer (format/container/write.py):
the same streaming of the data section, whose CRC-32C is summed beside the write (RunningCrc)
for both, and patched into the header and section table afterwards."""

from __future__ import annotations

import numpy as np
import pytest

import onert_checkpoint as oc
from onert_checkpoint.format.container import write as container_write
from onert_checkpoint.format.revisions.v2 import write as v2_write
from onert_checkpoint.format.revisions.v3 import write as v3_write


def _checkpoint() -> oc.Checkpoint:
    tensors = [oc.Tensor(i, np.arange(n, dtype=np.float32)) for i, n in enumerate((3, 70, 5000))]
    return oc.Checkpoint(tensors=tensors)


@pytest.mark.parametrize("writer", [v2_write, v3_write], ids=["v2", "v3"])
def test_streamed_data_crc_is_summed_beside_the_write(writer, monkeypatch) -> None:
    used: list[int] = []

    class Counting(container_write.RunningCrc):
        def add(self, piece) -> None:
            used.append(len(piece))
            super().add(piece)

    monkeypatch.setattr(container_write, "RunningCrc", Counting)
    ckpt = _checkpoint()
    p = writer.plan(ckpt, data_crc=False)
    gen = container_write.stream(p)
    body = bytearray()
    try:
        while True:
            body += next(gen)
    except StopIteration as done:
        patches = done.value
    for at, raw in patches:
        body[at : at + len(raw)] = raw
    assert sum(used) == p.sections[-1].length  # every byte of the data section, once
    assert bytes(body) == b"".join(container_write.chunks(writer.plan(ckpt)))
    assert oc.to_bytes(oc.load(bytes(body))) == bytes(body)
