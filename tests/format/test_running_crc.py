"""The CRC-32C summed in a second thread while a schema-2 file is written
(onert_checkpoint/format/container/running_crc.py): the same value as one pass in order, for
streams below one hand-over, of many, and with a tail; the worker's errors reach the caller;
an abandoned stream stops its worker."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import onert_checkpoint as oc
from onert_checkpoint.format.container import running_crc
from onert_checkpoint.format.container.constants import crc
from onert_checkpoint.format.container.running_crc import RunningCrc


def pieces(total: int, seed: int) -> list[memoryview]:
    rng = np.random.default_rng(seed)
    data = rng.integers(0, 256, total, dtype=np.uint8)
    cuts = np.sort(rng.integers(0, max(total, 1), 40))
    return [memoryview(part).cast("B") for part in np.split(data, cuts)]


def workers() -> int:
    return sum(t.name == "onert-checkpoint crc" for t in threading.enumerate())


@pytest.mark.parametrize("total", [0, 1, 1000, running_crc.BATCH_BYTES - 1,
                                   running_crc.BATCH_BYTES, 3 * running_crc.BATCH_BYTES + 5])
def test_the_same_value_as_one_pass_in_order(total):
    parts = pieces(total, total)
    running = RunningCrc(crc)
    for part in parts:
        running.add(part)
    value = 0
    for part in parts:
        value = crc(part, value)
    assert running.value() == value == crc(b"".join(parts))
    assert workers() == 0


def test_small_streams_never_start_a_thread(monkeypatch):
    started = []
    monkeypatch.setattr(running_crc.threading, "Thread",
                        lambda *a, **k: started.append(1) or threading.Thread(*a, **k))
    running = RunningCrc(crc)
    for part in pieces(running_crc.BATCH_BYTES - 1, 1):
        running.add(part)
    running.value()
    assert started == []


def test_an_error_in_the_worker_reaches_the_caller():
    def failing(data, value):
        if len(data) == 7:
            raise ValueError("bad piece")
        return crc(data, value)

    running = RunningCrc(failing)
    running.add(bytes(running_crc.BATCH_BYTES))
    running.add(bytes(7))
    running.add(bytes(running_crc.BATCH_BYTES))  # a second hand-over, after the failing one
    with pytest.raises(ValueError, match="bad piece"):
        running.value()
    assert workers() == 0


def test_an_abandoned_stream_stops_its_worker(tmp_path, monkeypatch):
    """A schema-2 save whose writer fails half-way: the stream is closed, its worker ends."""
    from onert_checkpoint import atomic_file

    rng = np.random.default_rng(0)
    tensors = [oc.Tensor(index=i, data=rng.integers(0, 256, 1 << 20, dtype=np.uint8))
               for i in range(40)]
    ckpt = oc.Checkpoint(tensors=tensors)
    calls = []
    real = atomic_file._writev_all

    def fail_third(fd, batch):
        calls.append(1)
        if len(calls) == 3:
            raise OSError(5, "injected")
        return real(fd, batch)

    monkeypatch.setattr(atomic_file, "_writev_all", fail_third)
    with pytest.raises(OSError):
        oc.save(ckpt, tmp_path / "t.ckpt", revision="v2")
    assert len(calls) == 3
    assert workers() == 0


@pytest.mark.parametrize("batch", [64, 1 << 30])
def test_a_schema2_save_is_the_same_file_with_or_without_the_thread(tmp_path, monkeypatch, batch):
    monkeypatch.setattr(running_crc, "BATCH_BYTES", batch)
    rng = np.random.default_rng(1)
    tensors = [oc.Tensor(index=i, data=rng.integers(0, 256, 100 + 37 * i, dtype=np.uint8))
               for i in range(50)]
    ckpt = oc.Checkpoint(tensors=tensors)
    oc.save(ckpt, tmp_path / "t.ckpt", revision="v2")
    assert (tmp_path / "t.ckpt").read_bytes() == oc.to_bytes(ckpt, revision="v2")
    assert oc.load(tmp_path / "t.ckpt").content_equal(ckpt)
