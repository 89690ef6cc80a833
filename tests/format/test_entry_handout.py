"""An entry's array as the tables hand it out: the same array the record describes (typed_view
of its bytes), made by the shorter path, and never before the store's checks have run.

The tables type each row once and slice the file seen as the row's element type from the
range's byte phase (format/entries.py); these tests hold that path to
``typed_view(bytes, *dtype_shape(row))`` over every element type, byte phase, rank and size
mismatch, and to the store's gate (pending checks, a failed check, ``released``).
"""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

from onert_checkpoint.format.dtypes import DTYPES
from onert_checkpoint.format.entries import DataStore, EntryTable
from onert_checkpoint.format.errors import CheckpointError
from onert_checkpoint.format.model import Buffer, Tensor
from onert_checkpoint.format.typed import typed_view

HAS_DTYPE, HAS_SHAPE = 1, 2


def _rows() -> list[tuple[int, int, int, int, tuple[int, ...]]]:
    """(offset, length, flags, dtype code, dims) per row: every code, phases 0..7, ranks 0-3,
    lengths that are and are not whole elements, shapes that do and do not fit."""
    rows = []
    offset = 3
    for code, (_, size) in sorted(DTYPES.items()):
        size = size or 1
        for phase in range(8):
            for dims in ((), (1,), (6,), (2, 3), (3, 2, 1), (5, 7), (0, 4)):
                count = int(np.prod(dims)) if dims else 1
                for length, flags in (
                    (count * size, HAS_DTYPE | HAS_SHAPE),
                    (count * size, HAS_DTYPE),
                    (count * size, HAS_SHAPE),
                    (count * size + 1, HAS_DTYPE | HAS_SHAPE),  # not whole elements
                    (6 * size, HAS_DTYPE | HAS_SHAPE),  # a shape that does not fit
                ):
                    start = offset - offset % 8 + phase
                    rows.append((start, length, flags, code, dims))
                    offset = start + length + 1
    return rows


def _table(store: DataStore, rows: list[tuple[int, int, int, int, tuple[int, ...]]]) -> EntryTable:
    n = len(rows)
    dims = np.zeros((n, 3), np.uint32)
    for r, (_, _, _, _, d) in enumerate(rows):
        dims[r, : len(d)] = d
    meta = {
        "flags": np.array([f for _, _, f, _, _ in rows], np.uint16),
        "dtype": np.array([c for _, _, _, c, _ in rows], np.int8),
        "rank": np.array([len(d) for _, _, _, _, d in rows], np.uint8),
        "dims": dims,
        "model_index": np.zeros(n, np.uint32),
        "names": None,
    }
    return EntryTable(
        store,
        np.arange(n, dtype=np.int64),
        np.array([o for o, _, _, _, _ in rows], np.int64),
        np.array([ln for _, ln, _, _, _ in rows], np.uint64),
        Tensor,
        meta,
    )


def _same(got: np.ndarray, want: np.ndarray, whole: np.ndarray) -> None:
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.tobytes() == want.tobytes()
    assert got.flags.writeable == want.flags.writeable
    root = got
    while isinstance(root.base, np.ndarray):
        root = root.base
    assert root is whole  # a view of the store's bytes (a save finds their checks by it)


def _store(nbytes: int) -> DataStore:
    raw = np.random.default_rng(3).integers(0, 256, nbytes, dtype=np.uint8).tobytes()
    return DataStore(np.frombuffer(memoryview(raw), np.uint8))


def test_every_row_is_the_array_its_record_describes() -> None:
    rows = _rows()
    store = _store(rows[-1][0] + rows[-1][1] + 64)
    table = _table(store, rows)
    for r, (start, length, _, _, _) in enumerate(rows):
        want = typed_view(store.whole[start : start + length], *table.dtype_shape(r))
        _same(table.data(r), want, store.whole)


def test_a_slot_row_is_typed_as_its_tensor_when_the_sizes_agree() -> None:
    rows = _rows()
    store = _store(2 * (rows[-1][0] + rows[-1][1] + 64))
    tensors = _table(store, rows)
    base = rows[-1][0] + rows[-1][1] + 5  # the slot's ranges after the tensors', phase 5 on
    picked = np.arange(0, len(rows), 3)
    lengths = tensors.lengths[picked].copy()
    lengths[::2] += 1  # every other slot entry a byte longer than its tensor: bytes
    offsets = base + np.concatenate([[0], np.cumsum(lengths[:-1] + 1)]).astype(np.int64)
    slot = EntryTable(store, tensors.keys[picked], offsets, lengths, Buffer,
                      owner=tensors, owner_rows=picked)
    for r in range(len(picked)):
        start, length = int(offsets[r]), int(lengths[r])
        want = typed_view(store.whole[start : start + length], *slot.dtype_shape(r))
        _same(slot.data(r), want, store.whole)


def _typed_rows() -> list[tuple[int, int, int, int, tuple[int, ...]]]:
    """Rows of float32, float16 and float64 (NumPy types: handed out typed)."""
    return [row for row in _rows() if row[3] in (0, 1, 10)]


def test_no_byte_is_handed_out_before_the_pending_checks_pass() -> None:
    rows = _typed_rows()[:40]
    calls: list[tuple[int, int]] = []

    def failing() -> None:
        raise CheckpointError("section_checksum", "sections[0].crc", 0, "changed")

    def ranged(start: int, end: int) -> None:
        calls.append((start, end))
        failing()

    raw = bytes(rows[-1][0] + rows[-1][1] + 64)
    store = DataStore(np.frombuffer(memoryview(raw), np.uint8), failing, ranged)
    table = _table(store, rows)
    for r in (0, 7, 39):
        with pytest.raises(CheckpointError):
            table.data(r)
        start, length = rows[r][0], rows[r][1]
        assert calls[-1] == (start, start + length)  # the checks of exactly its bytes
    assert not store._typed  # nothing seen as typed, nothing handed out


def test_a_released_store_hands_out_nothing_and_lets_the_file_go() -> None:
    rows = _typed_rows()
    backing = np.random.default_rng(5).integers(0, 256, rows[-1][0] + rows[-1][1] + 64,
                                                dtype=np.uint8)
    gone = weakref.ref(backing)
    store = DataStore(np.frombuffer(backing, np.uint8))
    table = _table(store, rows)
    for r in range(len(rows)):
        table.data(r)  # three element types, every phase: views kept by the store
    assert store._typed
    del backing
    store.release()
    gc.collect()
    assert gone() is None  # no typed view of the released file is left behind
    with pytest.raises(CheckpointError) as err:
        table.data(0)
    assert err.value.code == "released"


@pytest.mark.parametrize(
    "keys", [[], [0], [3, 4, 5, 6], [0, 1, 2, 5, 6], [1, 3], [2, 2, 3], [0, 2, 2]], ids=repr
)
def test_a_row_is_found_by_its_entry_index_with_or_without_gaps(keys: list[int]) -> None:
    arr = np.array(keys, np.int64)
    table = EntryTable(_store(8), arr, np.zeros(arr.size, np.int64),
                       np.zeros(arr.size, np.uint64), Buffer)
    for key in range(-2, 10):
        want = keys.index(key) if key in keys else None
        assert table.row_of(key) == want, key


def test_a_tensor_made_after_the_name_map_is_built_has_its_own_record() -> None:
    """Once a lookup by name has decoded every name, the tensors made afterwards (by name, by
    index, in any order) take their names from that map's strings: each its own row's."""
    import onert_checkpoint as oc

    names = [f"w{i}/{'x' * (i % 3)}" for i in range(12)]
    built = oc.Checkpoint(
        [oc.Tensor(i, np.full(i + 1, i, np.float32), name=names[i], dtype="float32",
                   shape=(i + 1,)) for i in range(12)]
    )
    ckpt = oc.load(oc.to_bytes(built, revision="v3"))
    assert ckpt[names[6]].name == names[6]  # builds the map
    for k in (11, 0, 3, 9):
        t = ckpt[k]
        assert (t.name, t.shape, t.index) == (names[k], (k + 1,), k)
    for k in (1, 2, 4, 5, 7, 8, 10):
        t = ckpt[names[k]]
        assert (t.name, t.shape) == (names[k], (k + 1,))
        assert np.array_equal(t.data, np.full(k + 1, k, np.float32))


def test_np_asarray_of_an_entry_of_a_released_file_raises_released(tmp_path) -> None:
    """``np.asarray(entry)`` takes its own path to the array (no ``data`` property call): an
    entry of a file whose ``open`` block has ended raises ``released`` there too, whether
    its array was handed out inside the block or not."""
    import onert_checkpoint as oc

    built = oc.Checkpoint(
        [oc.Tensor(i, np.full(4, i, np.float32), name=f"t{i}", dtype="float32", shape=(4,))
         for i in range(3)]
    )
    path = tmp_path / "a.ckpt"
    oc.save(built, path, revision="v3")
    with oc.open(path) as ckpt:
        read, unread = ckpt["t0"], ckpt["t1"]
        assert np.array_equal(np.asarray(read), np.zeros(4, np.float32))
    for entry in (read, unread):
        with pytest.raises(CheckpointError) as err:
            np.asarray(entry)
        assert err.value.code == "released"
