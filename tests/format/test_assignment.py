"""Assigning an entry's data is checked: the entry keeps its size, and a
typed entry its element type and shape; lossless conversions are made, anything else is a
CheckpointError naming the tensor, raised at the assignment (not at save, not never)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import onert_checkpoint as oc

DATA = Path(__file__).parents[1] / "data" / "real-onert"
ADAM = DATA / "fc2-adam-step8.ckpt"
MODEL = DATA / "fc2.circle"


def bound() -> oc.Checkpoint:
    return oc.load(ADAM, model=MODEL)  # w0 is float32[8, 4]


def test_lossless_float64_is_converted_and_the_file_still_loads_with_its_model(tmp_path):
    ckpt = bound()
    ckpt["w0"].data = np.ones((8, 4), np.float64)
    assert ckpt["w0"].data.dtype == np.float32 and ckpt["w0"].nbytes == 128
    out = tmp_path / "out.ckpt"
    oc.save(ckpt, out)
    back = oc.load(out, model=MODEL)
    assert np.array_equal(back["w0"].data, np.ones((8, 4), np.float32))
    assert back.slot("m", "w0").nbytes == 128


def test_a_list_is_converted():
    ckpt = bound()
    ckpt["b0"].data = [0, 1, 2, 3, 4, 5, 6, 7]
    assert ckpt["b0"].data.dtype == np.float32
    assert ckpt["b0"].data.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]


@pytest.mark.parametrize(
    ("value", "code", "words"),
    [
        (
            np.ones((4, 8), np.float32),
            "model_mismatch",
            "float32[8, 4]; the new data is float32[4, 8]",
        ),
        (np.ones((8, 5), np.float64), "model_mismatch", "float64[8, 5]"),
        (np.full((8, 4), 0.1, np.float64), "model_mismatch", "without loss"),
        ([1.0, 2.0], "model_mismatch", "float64[2]"),
        ([["a"] * 4] * 8, "not_representable", "cannot hold data of type <U1"),
        (np.ones(96, np.uint8), "model_mismatch", "uint8[96]"),
    ],
)
def test_a_wrong_value_is_refused_naming_the_tensor(value, code, words):
    ckpt = bound()
    before = np.array(ckpt["w0"].data)
    with pytest.raises(oc.CheckpointError) as err:
        ckpt["w0"].data = value
    assert err.value.code == code
    assert "'w0'" in str(err.value) and words in str(err.value)
    assert np.array_equal(ckpt["w0"].data, before)  # unchanged


def test_a_slot_entry_keeps_its_size_and_type():
    ckpt = bound()
    m = ckpt.slot("m", "w0")
    m.data = np.zeros((8, 4), np.float64)
    assert m.data.dtype == np.float32
    with pytest.raises(oc.CheckpointError) as err:
        m.data = np.zeros((8, 8), np.float32)
    assert "entry 0" in str(err.value)


def test_raw_entries_keep_their_size():
    ckpt = oc.load(ADAM)  # no model: entries are bytes
    ckpt[0].data = np.zeros(32, np.float32)  # same 128 bytes, reinterpreted: allowed
    ckpt[0].data = bytes(128)
    ckpt[0].data = list(range(128))  # byte values
    assert ckpt[0].raw.tolist() == list(range(128))
    with pytest.raises(oc.CheckpointError) as err:
        ckpt[0].data = np.zeros(33, np.float32)
    assert err.value.code == "not_representable" and "entry 0 holds 128 bytes" in str(err.value)
    with pytest.raises(oc.CheckpointError):
        ckpt[0].data = [256] * 128  # not a byte value


def test_the_entry_s_own_bytes_are_always_accepted():
    ckpt = bound()
    raw = ckpt["w0"].raw.copy()
    ckpt["w0"].data = raw  # as convert does
    assert ckpt["w0"].data.shape == (8, 4) and ckpt["w0"].data.dtype == np.float32


def test_keys_are_names_when_every_tensor_has_one():
    assert list(oc.load(ADAM).keys()) == [0, 1, 2, 3]
    ckpt = bound()
    assert list(ckpt.keys()) == ["w0", "b0", "w1", "b1"]
    assert [ckpt[k].index for k in ckpt] == [0, 1, 2, 3]
    ckpt["b1"].name = "w0"  # names no longer tell the tensors apart: indices again
    assert list(ckpt) == [0, 1, 2, 3]


def test_step_and_epoch_are_settable_and_repr_is_one_line():
    ckpt = bound()
    ckpt.step, ckpt.epoch = 9, 2
    assert (ckpt.state["step"], ckpt.state["epoch"]) == (9, 2)
    assert repr(ckpt) == (
        "Checkpoint(revision='v1', dialect=None, optimizer='adam', entries=4, step=9, "
        "epoch=2, file_size=880)"
    )
    assert repr(ckpt["w0"]) == "Tensor(index=0, name='w0', float32[8, 4], nbytes=128, offset=36)"
