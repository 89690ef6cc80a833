"""A tensor (and an optimizer slot entry) is an array to NumPy: ``np.asarray(ckpt[name])`` is
its data with their shape and dtype, indexing, ``len`` and iteration delegate to the data, and
the geometry (``shape``, ``dtype``, ``ndim``, ``size``) agrees with the array. Every way out
reads through ``data``, so a corrupt data section is refused before a byte is handed out."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import onert_checkpoint as oc

DATA = Path(__file__).parents[1] / "data" / "real-onert"
ADAM = DATA / "fc2-adam-step8.ckpt"
MODEL = DATA / "fc2.circle"


def bound() -> oc.Checkpoint:
    return oc.load(ADAM, model=MODEL)


def schema2_bytes() -> bytes:
    return oc.to_bytes(oc.upgrade(bound(), to="v2"))


@pytest.mark.parametrize("source", ["v1", "v2", "v3"])
def test_asarray_gives_the_data_with_their_shape_and_dtype(source: str) -> None:
    ckpt = bound() if source == "v1" else oc.load(oc.to_bytes(oc.upgrade(bound(), to=source)))
    for key in ("w0", "b0", "w1", "b1"):
        tensor = ckpt[key]
        arr = np.asarray(tensor)
        assert arr.shape == tensor.shape and arr.dtype == tensor.dtype
        assert (tensor.ndim, tensor.size) == (arr.ndim, arr.size)
        assert np.array_equal(arr, tensor.data) and np.array_equal(tensor.numpy(), arr)
    w1 = ckpt["w1"]
    assert w1.shape == (3, 8) and len(w1) == 3
    assert np.array_equal(w1[0], w1.data[0]) and w1[1, 2] == w1.data[1, 2]
    assert np.array_equal(np.stack(list(w1)), w1.data)  # iteration: rows
    assert float(np.sum(w1)) == pytest.approx(float(w1.data.sum()))


def test_a_slot_entry_is_an_array_too() -> None:
    ckpt = bound()
    m = ckpt.slot("m", "w1")
    assert m is not None
    arr = np.asarray(m)
    assert arr.shape == m.shape == (3, 8) and arr.dtype == m.dtype == np.float32
    assert (m.ndim, m.size, len(m)) == (2, 24, 3)
    assert np.array_equal(m[2], m.data[2])


def test_an_entry_without_a_model_is_its_bytes() -> None:
    tensor = oc.load(ADAM)[0]
    arr = np.asarray(tensor)
    assert arr.dtype == np.uint8 and arr.shape == (128,)
    assert (tensor.ndim, tensor.size, len(tensor)) == (1, 128, 128)
    # what neither file nor model says stays unsaid: the metadata are None
    assert tensor.shape is None and tensor.dtype is None


def test_dtype_and_copy_follow_numpy_s_protocol() -> None:
    tensor = bound()["w1"]
    assert np.asarray(tensor) is tensor.data  # no copy unless asked
    copied = np.array(tensor)
    assert copied is not tensor.data and np.array_equal(copied, tensor.data)
    assert np.asarray(tensor, dtype=np.float64).dtype == np.float64
    assert tensor.__array__(copy=True) is not tensor.data
    with pytest.raises(ValueError):
        tensor.__array__(np.float64, copy=False)


def test_the_geometry_is_known_without_reading_the_data() -> None:
    """shape, dtype, len of a loaded schema-2 entry come from its record: a corrupt data
    section does not stop them, and they do not hand out data."""
    data = bytearray(schema2_bytes())
    ckpt = oc.load(bytes(data))
    data[ckpt["w1"].offset] ^= 1
    lazy = oc.load(bytes(data))
    w1 = lazy["w1"]
    assert (w1.shape, len(w1), w1.ndim, w1.size) == ((3, 8), 3, 2, 24)
    assert w1.dtype == np.float32 and w1.dtype == "float32"  # a name NumPy's spellings equal


@pytest.mark.parametrize(
    "access",
    [
        lambda t: np.asarray(t),
        lambda t: np.array(t),
        lambda t: t[0],
        lambda t: t.numpy(),
        lambda t: list(t),
        lambda t: np.sum(t),
    ],
    ids=["asarray", "array", "getitem", "numpy", "iter", "ufunc"],
)
def test_every_array_way_out_runs_the_deferred_data_checks(access) -> None:
    data = bytearray(schema2_bytes())
    data[oc.load(bytes(data))["w1"].offset] ^= 1  # a flipped bit in w1's data
    for target in (lambda c: c["w1"], lambda c: c.slot("m", "w1")):
        with pytest.raises(oc.CheckpointError) as err:
            access(target(oc.load(bytes(data))))
        assert err.value.code == "section_checksum"


def test_an_entry_is_always_true() -> None:
    empty = oc.Tensor(0, np.zeros(0, np.float32), dtype="float32", shape=(0,))
    assert len(empty) == 0 and bool(empty)


def test_a_tensor_assigned_from_another_checkpoint_s_tensor() -> None:
    a, b = bound(), bound()
    b["b1"].data = np.ones(3, np.float32)
    a["b1"].data = b["b1"]  # an array-like: checked and taken
    assert np.array_equal(a["b1"], np.ones(3, np.float32))


def test_a_tensor_s_dtype_is_a_name_numpy_s_spellings_equal() -> None:
    """``dtype`` is the name the model or record says, and compares as an array's dtype does;
    it still keys dicts by its name (the library's tables are keyed by names)."""
    tensor = bound()["w1"]
    assert tensor.dtype == np.float32 and tensor.dtype == np.dtype("<f4")
    assert tensor.dtype == np.asarray(tensor).dtype and np.asarray(tensor).dtype == tensor.dtype
    assert tensor.dtype != np.float64 and not (tensor.dtype == np.int32)
    assert tensor.dtype == "float32" and {"float32": 1}[tensor.dtype] == 1
    assert str(tensor.dtype) == "float32" and repr(tensor.dtype) == "'float32'"
    assert not (tensor.dtype == "int4x") and not (tensor.dtype == object)
    tensor.dtype = "float32"  # settable, as before
    assert tensor.dtype == np.float32


def test_a_tensor_built_from_an_array_takes_its_dtype_and_shape() -> None:
    t = oc.Tensor(0, np.arange(6, dtype=np.float32).reshape(2, 3))
    assert (t.dtype, t.shape) == ("float32", (2, 3))
    back = oc.load(oc.to_bytes(oc.Checkpoint([t])))  # schema 3's record keeps them
    assert (back[0].dtype, back[0].shape) == ("float32", (2, 3))
    assert oc.Tensor(0, np.zeros(4, np.int16), shape=(2, 2)).shape == (2, 2)  # given wins
    assert oc.Tensor(0, np.zeros(4, np.int16), dtype="float16").dtype == "float16"
    assert oc.Tensor(0, np.zeros((2, 2), np.uint8)).shape == (2, 2)
    # a flat uint8 array is the entry's bytes; a type the format has no name for stays bytes
    for data in (np.zeros(8, np.uint8), np.zeros(2, ">f4"), np.zeros(2, "datetime64[s]")):
        assert (oc.Tensor(0, data).dtype, oc.Tensor(0, data).shape) == (None, None)
