"""``load`` adds at most 64 MiB + 8x the file size, for any input, refused ones included.
Measured with tracemalloc (deterministic: NumPy reports its
buffers to it; the mapped file itself is page cache, not an allocation).

Before entries became columns made on access, the 1M-entry v1 file below added 313 MiB and the
65,536-tensor file with a 16-slot optimizer 651 MiB (docs/performance-notes.md).
"""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable
from pathlib import Path

import pytest

import onert_checkpoint as oc
from tests.large_files import v1_many_entries, v2_many_slots

MIB = 1 << 20


def peak_of(action: Callable[[], object]) -> int:
    tracemalloc.start()
    try:
        action()
    except oc.CheckpointError:
        pass
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    return peak


def bound(size: int) -> int:
    return 64 * MIB + 8 * size


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("large")
    made = {
        "v1-1m-entries": v1_many_entries(1_000_000),
        "v1-adam-1m-entries": v1_many_entries(1_000_000, adam=True),
        "v2-65536x16-slots": v2_many_slots(65_536),
        "v2-65536x16-last-range-invalid": v2_many_slots(65_536, bad_last=True),
    }
    out = {}
    for name, data in made.items():
        out[name] = folder / name
        out[name].write_bytes(data)
    return out


@pytest.mark.parametrize("name", ["v1-1m-entries", "v1-adam-1m-entries", "v2-65536x16-slots"])
def test_load_of_a_valid_file_with_many_entries_is_bounded(files, name):
    path = files[name]
    ckpt = oc.load(path)
    assert len(ckpt) in (1_000_000, 65_536)
    del ckpt
    size = path.stat().st_size
    assert peak_of(lambda: oc.load(path)) <= bound(size)
    # the deferred data checks and a look at every name stay within the bound too
    assert peak_of(lambda: oc.load(path).verify()) <= bound(size)


def test_load_of_a_refused_file_is_bounded(files):
    path = files["v2-65536x16-last-range-invalid"]
    with pytest.raises(oc.CheckpointError) as err:
        oc.load(path)
    assert (err.value.code, err.value.field) == (
        "offset_out_of_bounds",
        "optimizer.slots[15][65535].ofs_data",
    )
    assert peak_of(lambda: oc.load(path)) <= bound(path.stat().st_size)


def test_load_makes_no_entry_object():
    """Open cost does not grow with objects: nothing per entry exists until looked at."""
    ckpt = oc.load(v2_many_slots(1000, k=2, names=True))
    assert ckpt.tensors.made() == []
    assert ckpt["t500"].index == 500  # one lookup makes one tensor
    assert len(ckpt.tensors.made()) == 1
    assert [s.made() for s in ckpt.optimizer.slots.values()] == [[], []]


def test_a_dropped_checkpoint_is_freed_at_once():
    """No reference cycle between a checkpoint's tensors and their list: dropping it releases
    the entries (and the file mapping they view) without waiting for the cyclic collector."""
    import gc
    import weakref

    data = Path(__file__).parents[1] / "data" / "real-onert"
    collecting = gc.isenabled()
    gc.disable()
    try:
        ckpt = oc.load(data / "fc2-adam-step8.ckpt", model=data / "fc2.circle")
        ckpt["w0"].name = "renamed"
        assert ckpt["renamed"].index == 0
        refs = [weakref.ref(ckpt.tensors), weakref.ref(ckpt.tensors[0])]
        del ckpt
        assert [r() for r in refs] == [None, None]
    finally:
        if collecting:
            gc.enable()
