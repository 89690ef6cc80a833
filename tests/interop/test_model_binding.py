"""Reading through the circle model: onert-micro indexing, its element-size quirk, and the
errors that name what does not fit (spec/SPEC.md B.2 and 4.9)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from circle_builder import OpSpec, TensorSpec, build_fc_model, build_model

import onert_checkpoint as oc
from onert_checkpoint import Buffer, Checkpoint, Optimizer, Tensor, TrainingState
from onert_checkpoint.circle.model import CircleModel
from onert_checkpoint.circle.onert_order import predict_onert_order
from onert_checkpoint.format.layout import Schema1Layout


def int8_model() -> bytes:
    """x[1,4] -> FULLY_CONNECTED(w int8 [3,4], b int32 [3]) -> y[1,3]."""
    tensors = [
        TensorSpec("x", (1, 4), dtype="int8"),
        TensorSpec("w", (3, 4), dtype="int8", data=np.arange(12, dtype=np.int8).reshape(3, 4)),
        TensorSpec("b", (3,), dtype="int32", data=np.array([1, 2, 3], np.int32)),
        TensorSpec("y", (1, 3), dtype="int8"),
    ]
    return build_model(tensors, [OpSpec("FULLY_CONNECTED", (0, 1, 2), (3,))], [0], [3])


def micro_file(model: bytes, element_size: dict[str, int] | None = None) -> bytes:
    """What onert-micro's saver writes for ``model`` with SGD: one entry per tensor, the FC
    constants present, each ``count * element_size`` bytes (4 for every type in real files)."""
    cm = CircleModel.load(model)
    sizes = element_size or {}
    tensors = []
    for rank, i in enumerate(cm.micro_saved_indices()):
        t = cm.tensors[i]
        count = int(np.prod(t.shape))
        nbytes = count * sizes.get(t.name, t.nbytes // max(count, 1))
        tensors.append(Tensor(i, np.full(nbytes, i, np.uint8), offset=rank))
    ckpt = Checkpoint(
        tensors,
        Optimizer("sgd"),
        TrainingState(step=5, epoch=2),
        layout=Schema1Layout("v1", num_entries=len(cm.tensors)),
    )
    return oc.to_bytes(ckpt, dialect="onert-micro")


def test_onert_micro_entries_are_tensor_indices_typed_and_shaped():
    model = build_fc_model([4, 8, 3], seed=1)
    raw = micro_file(model)
    ckpt = oc.load(raw, model=model)
    assert ckpt.dialect == "onert-micro" and ckpt.layout.quirks == ()
    cm = CircleModel.load(model)
    for t in ckpt.tensors:
        assert t.model_index == t.index
        assert (t.name, t.shape) == (cm.tensors[t.index].name, cm.tensors[t.index].shape)
        assert t.data.dtype == np.float32 and t.data.shape == cm.tensors[t.index].shape
    assert oc.to_bytes(ckpt) == raw  # typing changes no byte


def test_onert_micro_four_bytes_per_element_is_a_quirk_kept_as_bytes():
    model = int8_model()
    raw = micro_file(model, {"w": 4, "b": 4})  # sizeof(enum) per element, as the saver does
    ckpt = oc.load(raw, model=model)
    assert "micro_element_size" in ckpt.layout.quirks
    w = ckpt["w"]
    assert w.dtype == "int8" and w.nbytes == 48 and w.data.dtype == np.uint8  # not retyped
    assert ckpt["b"].data.dtype == np.int32  # int32 is 4 bytes anyway: typed
    assert oc.to_bytes(ckpt) == raw


@pytest.mark.parametrize("to", ["v3", "v2"])
def test_upgrade_keeps_a_record_whose_shape_disagrees_with_its_bytes_as_named_raw_bytes(to):
    """An upgrade with the model names every record; the int8 weight of 12 elements holds 48
    bytes (onert-micro's 4 per element), so its record gets no dtype and shape (a record whose
    shape disagrees with its byte count is one no writer may write): the bytes stay as they
    were, the int32 bias (4 bytes anyway) is typed, and the schema-1 file comes back."""
    model = int8_model()
    raw = micro_file(model, {"w": 4, "b": 4})
    back = oc.load(oc.to_bytes(oc.upgrade(oc.load(raw), model, to=to)))
    assert [(t.name, t.dtype, t.shape, t.nbytes, t.model_index) for t in back.tensors] == [
        ("w", None, None, 48, 1), ("b", "int32", (3,), 12, 2)]
    assert bytes(back["w"].raw) == bytes(oc.load(raw).get(1).raw)
    assert oc.to_bytes(oc.downgrade(back, "onert-micro", allow_lossy=True)) == raw


@pytest.mark.parametrize("to", ["v3", "v2"])
def test_a_record_whose_shape_disagrees_with_its_bytes_is_not_written(to):
    ckpt = Checkpoint([Tensor(0, np.zeros(48, np.uint8), name="w", dtype="int8", shape=(3, 4))])
    with pytest.raises(oc.NotRepresentableError, match=r"shape \(3, 4\) of int8 disagrees"):
        oc.to_bytes(ckpt, revision=to)


def test_validate_strict_fails_on_the_element_size_quirk(tmp_path):
    model = tmp_path / "m.circle"
    model.write_bytes(int8_model())
    ckpt = tmp_path / "c.ckpt"
    ckpt.write_bytes(micro_file(model.read_bytes(), {"w": 4, "b": 4}))
    cmd = [sys.executable, "-m", "onert_checkpoint", "validate", "--model", str(model)]
    assert subprocess.run([*cmd, str(ckpt)], capture_output=True).returncode == 0
    strict = subprocess.run([*cmd, "--strict", str(ckpt)], capture_output=True, text=True)
    assert strict.returncode == 1, strict.stdout + strict.stderr
    assert "micro_element_size" in strict.stdout + strict.stderr
    assert "Traceback" not in strict.stderr


def test_a_size_that_fits_neither_the_tensor_nor_the_quirk_names_the_entry():
    model = int8_model()
    raw = micro_file(model, {"w": 2})
    with pytest.raises(oc.ModelMismatchError) as err:
        oc.load(raw, model=model)
    assert err.value.code == "model_mismatch" and err.value.field == "weights[1]"


def test_a_count_that_is_not_the_models_is_a_model_mismatch():
    model = build_fc_model([4, 8, 3], seed=1)
    other = build_fc_model([4, 8, 8, 3], seed=1)
    with pytest.raises(oc.ModelMismatchError) as err:
        oc.load(micro_file(model), model=other)
    assert err.value.field == "num_entries"


def test_sizes_alone_never_guess_between_equal_sizes():
    model = build_fc_model([3, 3, 3], seed=2)  # two 3x3 weights, two 3-element biases
    cm = CircleModel.load(model)
    order = predict_onert_order(cm)
    tensors = [Tensor(k, np.zeros(cm.tensors[i].nbytes, np.uint8)) for k, i in enumerate(order)]
    raw = oc.to_bytes(
        Checkpoint(
            tensors,
            Optimizer("adam", {"m": {}, "v": {}}),
            TrainingState(step=1, epoch=0),
            revision="v1",
        ),
        dialect="onert",
    )
    with pytest.raises(oc.CheckpointError) as err:
        oc.load(raw, model=model, order="size")
    assert err.value.code == "ambiguous_entries"
    ckpt = oc.load(raw, model=model, order="predict")
    assert [t.model_index for t in ckpt.tensors] == order


def test_onert_adam_empty_slots_bind():
    model = build_fc_model([4, 3], seed=3)
    cm = CircleModel.load(model)
    order = predict_onert_order(cm)
    tensors = [Tensor(k, np.ones(cm.tensors[i].nbytes, np.uint8)) for k, i in enumerate(order)]
    opt = Optimizer("adam")
    for slot in ("m", "v"):
        opt.slots[slot] = {t.index: Buffer(t.index, np.zeros(t.nbytes, np.uint8)) for t in tensors}
    raw = oc.to_bytes(Checkpoint(tensors, opt, TrainingState(step=3, epoch=0), revision="v1"))
    ckpt = oc.load(raw, model=model, order="predict")
    assert ckpt.slot("m", ckpt.tensors[0].name).data.dtype == np.float32
