"""Reading what the real onert-micro runtime writes.

The runtime (built from ../shared/reference/onert-micro with this project's driver, see
tests/interop/conftest.py) trains float32 FC chains of 1 to 6 layers (tensors in chain order,
constants first, or shuffled in the circle file; batches of 1, 2 and 3; one chain with fused
RELUs and a layer without bias: tests/interop/micro/scenarios.py) with SGD and Adam, and
writes a checkpoint (``saveCheckpoint``) and the trained model (``saveModel``). The trained
model is the ground truth: its buffers hold the weights the runtime trained, per circle tensor.

* ``load(ckpt, model=...)``: N = every tensor of the model, entry i = circle tensor i, an entry
  exactly for each FC weight and bias, with the name, dtype, shape and bytes of that tensor in
  the trained model; Adam's m and v exactly where the weights are; the step counted, epoch 0.
* Data in reverse operator order (the last layer first), as SPEC section 4.6 says.
* ``onert-ckpt validate --strict --model`` is clean, and ``to_bytes`` gives the file back byte
  for byte (with and without the model).
* Our driver reproduces the peer's own files in real-files/ byte for byte (same toy data).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from micro.scenarios import MODELS

import onert_checkpoint as oc
from onert_checkpoint.circle.model import CircleModel
from onert_checkpoint.tools.cli import main as cli_main

KINDS = ("sgd", "adam")
STEPS = 4


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", sorted(MODELS))
def test_runtime_files_read_through_the_model(micro, name: str, kind: str,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    sc = MODELS[name]
    model_path, data = sc.files(micro)
    ckpt_path, trained_path = micro.folder / "c.ckpt", micro.folder / "t.circle"
    micro.run(model=model_path, opt=kind, batch=sc.batch, data=data, steps=STEPS,
              save=ckpt_path, save_model=trained_path)
    raw = ckpt_path.read_bytes()
    model = CircleModel.load(model_path.read_bytes())
    trained = CircleModel.load(trained_path.read_bytes())

    ckpt = oc.load(raw, model=model)
    assert (ckpt.revision, ckpt.dialect) == ("v1", "onert-micro")
    assert ckpt.layout.num_entries == len(model.tensors)
    fc_constants = sorted(i for op in model.operators for i in op.inputs[1:] if i >= 0)
    assert len(fc_constants) == 2 * sc.layers - len(sc.no_bias)
    assert [t.index for t in ckpt.tensors] == fc_constants
    for t in ckpt.tensors:
        circle = model.tensors[t.index]
        assert t.model_index == t.index
        assert (t.name, t.dtype, t.shape, t.nbytes) == (
            circle.name, "float32", circle.shape, circle.nbytes)
        truth = trained.initial_data(t.index)
        assert truth is not None and t.data.shape == truth.shape
        assert t.data.tobytes() == truth.tobytes(), t.name
        # training moved it: the comparison above is not between two copies of the model
        assert t.data.tobytes() != model.initial_data(t.index).tobytes(), t.name
    assert (ckpt.step, ckpt.epoch) == (STEPS, 0)
    assert ckpt.optimizer is not None and ckpt.optimizer.kind == kind
    if kind == "adam":
        for slot in ("m", "v"):
            entries = ckpt.optimizer.slots[slot]
            assert sorted(entries) == fc_constants
            for t in ckpt.tensors:
                assert entries[t.index].data.shape == t.shape
        assert all(np.all(b.data >= 0) for b in ckpt.optimizer.slots["v"].values())
    else:
        assert ckpt.optimizer.slots == {}

    # layers saved last to first (SPEC 4.6): data offsets fall with the operator index
    offsets = [ckpt.get(op.inputs[1]).offset for op in model.operators]
    assert offsets == sorted(offsets, reverse=True)

    # strict validation, given the model
    assert cli_main(["validate", "--strict", "--json", "--model", str(model_path),
                     str(ckpt_path)]) == 0
    line = json.loads(capsys.readouterr().out)
    assert line["valid"] is True

    # saved back byte for byte
    assert oc.to_bytes(oc.load(raw)) == raw
    assert oc.to_bytes(ckpt) == raw
    again = micro.folder / "again.ckpt"
    oc.save(ckpt, again)
    assert again.read_bytes() == raw


@pytest.mark.parametrize("kind", KINDS)
def test_driver_reproduces_the_peers_own_files(micro, micro_sources: Path, kind: str) -> None:
    """The README's toy run (4 inputs, 2 outputs, batch 2, 5 steps, lr 0.01) through our driver
    gives the checkpoint and trained model in real-files/ byte for byte."""
    real = micro_sources / "real-files"
    x = micro.file("x.f32", np.array([0.5, -1.0, 0.25, 2.0, 1.0, 0.3, -0.7, 0.1], np.float32))
    y = micro.file("y.f32", np.array([1.75, 1.5, 0.7, 0.7], np.float32))
    ckpt, trained = micro.folder / "c.bin", micro.folder / "t.circle"
    micro.run(model=real / "fc2.circle", opt=kind, batch=2, data=(x, y), steps=5, save=ckpt,
              save_model=trained)
    assert ckpt.read_bytes() == (real / f"ckpt_{kind}.bin").read_bytes()
    assert trained.read_bytes() == (real / f"fc2_trained_{kind}.circle").read_bytes()
    # and its files read back byte for byte too
    raw = (real / f"ckpt_{kind}.bin").read_bytes()
    assert oc.to_bytes(oc.load(raw, model=real / "fc2.circle")) == raw


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(("name", "train_layers"), [("fc3", 1), ("fc4", 2), ("fc3r", 2)])
def test_last_layers_only(micro, name: str, kind: str, train_layers: int,
                          capsys: pytest.CaptureFixture[str]) -> None:
    """``num_of_train_layers = L``: the runtime trains and saves only the last L operators'
    weights; every other entry is absent (0), N is still every tensor of the model."""
    sc = MODELS[name]
    model_path, data = sc.files(micro)
    ckpt_path, trained_path = micro.folder / "c.ckpt", micro.folder / "t.circle"
    micro.run(model=model_path, opt=kind, batch=sc.batch, data=data, steps=STEPS,
              train_layers=train_layers, save=ckpt_path, save_model=trained_path)
    raw = ckpt_path.read_bytes()
    model = CircleModel.load(model_path.read_bytes())
    trained = CircleModel.load(trained_path.read_bytes())
    last = model.operators[-train_layers:]
    saved = sorted(i for op in last for i in op.inputs[1:] if i >= 0)
    assert saved == sorted(model.micro_saved_indices(train_layers))

    ckpt = oc.load(raw, model=model)
    assert ckpt.dialect == "onert-micro" and ckpt.layout.num_entries == len(model.tensors)
    assert [t.index for t in ckpt.tensors] == saved
    for t in ckpt.tensors:
        assert t.data.tobytes() == trained.initial_data(t.index).tobytes(), t.name
        assert t.data.tobytes() != model.initial_data(t.index).tobytes(), t.name
    for op in model.operators[:-train_layers]:  # not trained: as in the model
        for i in op.inputs[1:]:
            if i >= 0:
                assert trained.initial_data(i).tobytes() == model.initial_data(i).tobytes()
    if kind == "adam":
        assert sorted(ckpt.optimizer.slots["m"]) == saved
    assert cli_main(["validate", "--strict", "--model", str(model_path), str(ckpt_path)]) == 0
    capsys.readouterr()
    assert oc.to_bytes(ckpt) == raw
    # the runtime loads it back and resumes from it as if never stopped
    whole, resumed = micro.folder / "whole.ckpt", micro.folder / "resumed.ckpt"
    micro.run(model=model_path, opt=kind, batch=sc.batch, data=data, steps=2 * STEPS,
              train_layers=train_layers, save=whole)
    back = micro.folder / "back.ckpt"
    oc.save(ckpt, back)
    micro.run(model=model_path, opt=kind, batch=sc.batch, data=data, steps=STEPS,
              train_layers=train_layers, load=back, save=resumed)
    assert resumed.read_bytes() == whole.read_bytes()
