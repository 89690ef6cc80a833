"""Circle models whose constants contradict themselves (bad input gets the project's
error): a new checkpoint of such a model is refused with model_mismatch naming the tensor,
never written so that it does not fit its own model."""

from __future__ import annotations

import flatbuffers
import numpy as np
import pytest
from circle_builder import OpSpec, TensorSpec, build_model
from circle_schema.v0_9.circle.Model import ModelT

import onert_checkpoint as oc


def fc_with_weight_shape(shape: tuple[int, ...]) -> oc.CircleModel:
    """A one-layer FC model whose weight claims ``shape`` over its 32 bytes of float32 data."""
    raw = build_model(
        [TensorSpec("x", (1, 4)), TensorSpec("w", (2, 4), "float32", np.ones((2, 4), np.float32)),
         TensorSpec("b", (2,), "float32", np.ones(2, np.float32)), TensorSpec("y", (1, 2))],
        [OpSpec("FULLY_CONNECTED", (0, 1, 2), (3,))], [0], [3])
    obj = ModelT.InitFromPackedBuf(bytearray(raw), 0)
    obj.subgraphs[0].tensors[1].shape = np.asarray(shape, np.int32)
    builder = flatbuffers.Builder(1024)
    builder.Finish(obj.Pack(builder), file_identifier=b"CIR0")
    return oc.CircleModel.load(bytes(builder.Output()))


@pytest.mark.parametrize("shape,message", [
    ((0, 4), "tensor 'w' has 0 bytes in the model; 32 given"),
    ((-1, 8), r"tensor 'w' is a constant of dynamic shape \[-1, 8\]"),
    ((4, 4), "tensor 'w' has 64 bytes in the model; 32 given"),
])
@pytest.mark.parametrize("dialect", ["onert", "onert-micro"])
def test_new_checkpoint_of_a_self_contradicting_model(shape, message, dialect) -> None:
    model = fc_with_weight_shape(shape)
    with pytest.raises(oc.ModelMismatchError, match=message):
        oc.new_checkpoint(model, dialect=dialect)


def test_the_consistent_model_gives_a_checkpoint_that_fits_it() -> None:
    model = fc_with_weight_shape((2, 4))
    data = oc.to_bytes(oc.new_checkpoint(model))
    assert np.array_equal(oc.load(data, model=model)["w"].data, np.ones((2, 4), np.float32))
