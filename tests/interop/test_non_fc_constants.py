"""A model whose constants are not all weights: onert exports them too.

A RESHAPE's constant shape tensor (int32) is a "trainable" tensor to onert 0.1.0: it gets a
checkpoint entry, and with Adam empty m and v entries (it has no optimizer variables). The
prediction of onert's entry order, the probe, the binding and the dialect rules must all agree.
"""

from __future__ import annotations

import tempfile

import numpy as np
import pytest

import onert_checkpoint as oc
from onert_checkpoint.circle.model import CircleModel
from onert_checkpoint.circle.onert_order import predict_onert_order, probe_onert_order

pytest.importorskip("onert", reason="the onert wheel (x86-64 Linux, CPython <= 3.12) is needed")

from circle_builder import OpSpec, TensorSpec, build_model
from onert_peer import TrainPeer


def reshape_model() -> bytes:
    rng = np.random.default_rng(7)
    tensors = [
        TensorSpec("x", (1, 4)),
        TensorSpec("w0", (8, 4), data=rng.standard_normal((8, 4)).astype("f4")),
        TensorSpec("b0", (8,), data=rng.standard_normal(8).astype("f4")),
        TensorSpec("h", (1, 8)),
        TensorSpec("shape", (2,), dtype="int32", data=np.array([1, 8], np.int32)),
        TensorSpec("h2", (1, 8)),
        TensorSpec("w1", (3, 8), data=rng.standard_normal((3, 8)).astype("f4")),
        TensorSpec("b1", (3,), data=rng.standard_normal(3).astype("f4")),
        TensorSpec("y", (1, 3)),
    ]
    ops = [
        OpSpec("FULLY_CONNECTED", (0, 1, 2), (3,)),
        OpSpec("RESHAPE", (3, 4), (5,), new_shape=(1, 8)),
        OpSpec("FULLY_CONNECTED", (5, 6, 7), (8,)),
    ]
    return build_model(tensors, ops, [0], [8])


@pytest.mark.parametrize("kind", ["sgd", "adam"])
def test_a_reshape_shape_constant_is_an_entry(kind):
    model = reshape_model()
    with tempfile.TemporaryDirectory() as folder:
        peer = TrainPeer(folder, model, kind, learning_rate=0.01)
        peer.train([np.ones((1, 4), "f4")], [np.zeros((1, 3), "f4")], 1)
        raw = peer.export()
    predicted = predict_onert_order(CircleModel.load(model))
    assert predicted == probe_onert_order(model)
    ckpt = oc.load(raw, model=model, order="predict")
    assert [t.model_index for t in ckpt.tensors] == predicted
    shape_entry = ckpt["shape"]
    assert shape_entry.dtype == "int32" and shape_entry.data.tolist() == [1, 8]
    if kind == "adam":
        # No optimizer variables for the shape tensor: empty m and v entries, onert only.
        assert ckpt.slot("m", "shape").nbytes == 0 and ckpt.slot("v", "shape").nbytes == 0
        assert ckpt.dialect == "onert"
    assert oc.to_bytes(ckpt) == raw
