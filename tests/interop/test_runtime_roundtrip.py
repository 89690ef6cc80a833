"""Round trips through the real onert runtime (``onert`` 0.1.0), for SGD and Adam.

Models are built here (tests/interop/circle_builder.py): chains of 1, 2 and 3 float32
FULLY_CONNECTED layers of different widths, and a 3-layer chain whose weights all share one size
(so only the entry order, not the sizes, tells the entries apart).

* Export from onert, read with ``load(path, model=...)``: N, every entry's size, name, dtype and
  shape, the optimizer kind, step (epochs x batches) and epoch (onert writes 0). Which tensor an
  entry is, is checked against an independent oracle: the runtime's own ``train_export_circle``
  of the same session holds the same values at the circle tensor index we bind the entry to.
  With a learning rate of 1e-30 (onert refuses 0) the exported weights are the model's initial
  weights, bit for bit.
* Write a checkpoint with our ``save`` (weights of our choosing, in onert's entry order), import
  it, run the model (``train_export_circle`` + ``onert.infer``; and the training loss) and compare
  with a numpy forward pass. Then export again and compare the bytes with ours.

Re-export after import (step 0x01020304, epoch 0x05060708 written by us; an eval step, which
updates nothing and counts no step, lets the runtime export):

=========  ============================================================================
optimizer  bytes that differ from ours
=========  ============================================================================
Adam       only the footer's epoch (4 bytes): onert always writes epoch 0
SGD, N>2   the whole footer: epoch written as 0, and the step is *lost* (0): onert's
           loader reads an N-entry opt1 table at ``opt1_offset`` = ``other_offset`` (its
           own SGD convention); with 4N > 8 that read runs past the end of the file, and
           the failed stream then skips the footer read, so ``trainingStep`` becomes 0
           (CheckpointLoader.cc clears the stream before the tensors but not before the
           footer)
SGD, N<=2  only the epoch: the phantom table read stays inside the 8-byte footer
SGD with   only the epoch, and opt1_offset (onert writes it as other_offset again): with
opt1 = 0   no opt1 table to over-read, the footer is read and the step survives
=========  ============================================================================

Every weight, m and v byte and every table entry comes back unchanged.
"""

from __future__ import annotations

import importlib.util
import struct
import sys
from pathlib import Path

import numpy as np
import pytest
from circle_builder import build_fc_model
from onert_peer import ONERT_MISSING, TrainPeer, fc_forward

import onert_checkpoint as oc
from onert_checkpoint.circle.model import CircleModel
from onert_checkpoint.circle.onert_order import predict_onert_order
from onert_checkpoint.format.model import Checkpoint, Optimizer, Tensor, TrainingState

pytest.importorskip("onert", reason=ONERT_MISSING)

#: name -> (widths, seed); 1, 2 and 3 layers of different widths, and one of equal sizes.
MODELS = {
    "fc1": ((5, 3), 11),
    "fc2": ((4, 8, 3), 12),
    "fc3": ((6, 7, 5, 2), 13),
    "fc3sq": ((3, 3, 3, 3), 14),
}
KINDS = ("sgd", "adam")
EPOCHS, SAMPLES = 3, 4
STEP, EPOCH = 0x01020304, 0x05060708  # every byte non-zero: a changed footer byte shows

DATA = Path(__file__).resolve().parent.parent / "data" / "real-onert"


def _model(name: str) -> bytes:
    widths, seed = MODELS[name]
    return build_fc_model(widths, seed=seed)


def _data(name: str, seed: int = 5) -> tuple[np.ndarray, np.ndarray]:
    widths, _ = MODELS[name]
    rng = np.random.default_rng(seed)
    xs = rng.standard_normal((SAMPLES, widths[0])).astype(np.float32)
    ys = rng.standard_normal((SAMPLES, widths[-1])).astype(np.float32)
    return xs, ys


def _trained(tmp_path: Path, name: str, kind: str, lr: float) -> tuple[TrainPeer, bytes]:
    peer = TrainPeer(tmp_path / "s", _model(name), kind, learning_rate=lr)
    xs, ys = _data(name)
    peer.train([xs], [ys], epochs=EPOCHS)
    return peer, peer.export()


# export from onert, read with the model --------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", sorted(MODELS))
def test_export_reads_through_the_model(tmp_path: Path, name: str, kind: str) -> None:
    raw_model = _model(name)
    model = CircleModel.load(raw_model)
    peer, raw = _trained(tmp_path, name, kind, lr=0.01)
    path = tmp_path / "e.ckpt"
    path.write_bytes(raw)
    ckpt = oc.load(path, model=raw_model)

    order = predict_onert_order(model)
    assert len(order) == 2 * (len(MODELS[name][0]) - 1)
    assert ckpt.revision == "v1" and ckpt.layout.num_entries == len(order) == len(ckpt)
    assert [t.index for t in ckpt.tensors] == list(range(len(order)))
    assert [t.model_index for t in ckpt.tensors] == order
    for t in ckpt.tensors:
        circle = model.tensors[t.model_index]
        assert t.nbytes == circle.nbytes
        assert (t.name, t.dtype, t.shape) == (circle.name, "float32", circle.shape)
        assert t.data.dtype == np.float32 and t.data.shape == circle.shape
    assert ckpt.optimizer is not None and ckpt.optimizer.kind == kind
    assert (ckpt.step, ckpt.epoch) == (EPOCHS * SAMPLES, 0)
    if kind == "adam":
        assert ckpt.dialect in (None, "onert")
        for slot in ("m", "v"):
            entries = ckpt.optimizer.slots[slot]
            assert sorted(entries) == list(range(len(order)))
            for t in ckpt.tensors:
                assert entries[t.index].data.shape == t.shape
                assert entries[t.index].data.dtype == np.float32
        assert all(np.all(b.data >= 0) for b in ckpt.optimizer.slots["v"].values())
    else:
        assert ckpt.dialect == "onert" and ckpt.optimizer.slots == {}

    # oracle: the runtime's own model export holds each entry at the tensor we bound it to
    exported = CircleModel.load(peer.export_circle())
    for t in ckpt.tensors:
        assert np.array_equal(exported.initial_data(t.model_index), t.data), t.name
    # and training did move every weight away from the model's initial value
    assert all(not np.array_equal(model.initial_data(t.model_index), t.data) for t in ckpt.tensors)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", sorted(MODELS))
def test_tiny_learning_rate_exports_initial_weights(tmp_path: Path, name: str, kind: str) -> None:
    raw_model = _model(name)
    model = CircleModel.load(raw_model)
    _, raw = _trained(tmp_path, name, kind, lr=1e-30)
    ckpt = oc.load(raw, model=raw_model)
    assert (ckpt.step, ckpt.epoch) == (EPOCHS * SAMPLES, 0)
    for t in ckpt.tensors:
        initial = model.initial_data(t.model_index)
        assert initial is not None and initial.dtype == t.data.dtype
        assert np.array_equal(initial.view(np.uint8), t.data.view(np.uint8)), t.name


# our checkpoint, imported and run by onert ----------------------------------------------------


def _our_checkpoint(name: str, kind: str, seed: int) -> tuple[Checkpoint, dict[int, np.ndarray]]:
    """Weights (and Adam's m, v) of our choosing, in onert's entry order."""
    model = CircleModel.load(_model(name))
    rng = np.random.default_rng(seed)
    order = predict_onert_order(model)
    weights = {
        i: (rng.standard_normal(model.tensors[i].shape) * 0.5).astype(np.float32) for i in order
    }
    tensors = [Tensor(index=k, data=weights[i]) for k, i in enumerate(order)]
    optimizer = Optimizer(kind)
    if kind == "adam":
        for slot, scale in (("m", 0.01), ("v", 0.001)):
            optimizer.slots[slot] = {
                k: Tensor(
                    index=k,
                    data=np.abs(rng.standard_normal(model.tensors[i].shape) * scale).astype(
                        np.float32
                    ),
                )
                for k, i in enumerate(order)
            }
    ckpt = Checkpoint(
        tensors=tensors,
        optimizer=optimizer,
        state=TrainingState(step=STEP, epoch=EPOCH),
        revision="v1",
        dialect="onert",
    )
    return ckpt, weights


def _differing(a: bytes, b: bytes) -> list[int]:
    assert len(a) == len(b)
    return [k for k in range(len(a)) if a[k] != b[k]]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", sorted(MODELS))
def test_our_checkpoint_runs_in_onert(tmp_path: Path, name: str, kind: str) -> None:
    raw_model = _model(name)
    model = CircleModel.load(raw_model)
    ckpt, weights = _our_checkpoint(name, kind, seed=len(name))
    ours_path = tmp_path / "ours.ckpt"
    oc.save(ckpt, ours_path)
    ours = ours_path.read_bytes()

    x = np.random.default_rng(99).standard_normal((1, MODELS[name][0][0])).astype(np.float32)
    expected = fc_forward(raw_model, weights, x)
    initial = {t.index: model.initial_data(t.index) for t in model.tensors if t.is_constant}
    assert not np.allclose(fc_forward(raw_model, initial, x), expected, atol=1e-3)

    peer = TrainPeer(tmp_path / "s", raw_model, kind)
    peer.import_bytes(ours)
    # the training graph's forward pass: MSE against our prediction, and against zeros
    assert peer.eval_loss(x, expected) <= 1e-12
    zeros_loss = peer.eval_loss(x, np.zeros_like(expected))
    assert zeros_loss == pytest.approx(float(np.mean(expected**2)), rel=1e-5)
    # the model itself, run by onert's inference session with the imported weights
    out = peer.outputs(x)
    assert out.shape == expected.shape
    np.testing.assert_allclose(out, expected, rtol=0, atol=1e-5)

    again = peer.export()
    size = len(ours)
    step_bytes, epoch_bytes = range(size - 8, size - 4), range(size - 4, size)
    if kind == "adam":
        assert _differing(ours, again) == list(epoch_bytes)
        assert struct.unpack_from("<II", again, size - 8) == (STEP, 0)
    elif 4 * len(ckpt) <= 8:
        # the phantom opt1 table read at other_offset fits in the footer: nothing fails
        assert _differing(ours, again) == list(epoch_bytes)
        assert struct.unpack_from("<II", again, size - 8) == (STEP, 0)
    else:
        assert _differing(ours, again) == [*step_bytes, *epoch_bytes]
        assert struct.unpack_from("<II", again, size - 8) == (0, 0)  # the step is lost


def test_sgd_step_survives_import_when_opt1_is_zero(tmp_path: Path) -> None:
    """The SGD step loss above comes from the over-read of an opt1 table at other_offset."""
    raw_model = _model("fc2")
    ckpt, _ = _our_checkpoint("fc2", "sgd", seed=1)
    ours = bytearray(oc.to_bytes(ckpt))
    other = struct.unpack_from("<I", ours, 12)[0]
    assert struct.unpack_from("<II", ours, 4) == (other, 0)
    struct.pack_into("<I", ours, 4, 0)  # opt1_offset = 0: still a valid SGD file
    assert oc.load(bytes(ours)).optimizer.kind == "sgd"
    peer = TrainPeer(tmp_path / "s", raw_model, "sgd")
    peer.import_bytes(bytes(ours))
    peer.eval_loss(np.zeros((1, 4), np.float32), np.zeros((1, 3), np.float32))
    again = peer.export()
    size = len(ours)
    assert _differing(bytes(ours), again) == [4, 5, *range(size - 4, size)]
    assert struct.unpack_from("<I", again, 4)[0] == other
    assert struct.unpack_from("<II", again, size - 8) == (STEP, 0)


def test_training_on_from_our_checkpoint_counts_steps(tmp_path: Path) -> None:
    ckpt, _ = _our_checkpoint("fc3", "adam", seed=3)
    peer = TrainPeer(tmp_path / "s", _model("fc3"), "adam", learning_rate=0.01)
    peer.import_bytes(oc.to_bytes(ckpt))
    xs, ys = _data("fc3")
    peer.train([xs], [ys], epochs=1)
    out = oc.load(peer.export(), model=_model("fc3"))
    assert (out.step, out.epoch) == (STEP + SAMPLES, 0)
    assert all(not np.array_equal(a.data, b.data) for a, b in zip(ckpt.tensors, out.tensors))


# committed test data ---------------------------------------------------------------------------


def _regenerate_module() -> object:
    spec = importlib.util.spec_from_file_location("regenerate", DATA / "regenerate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_committed_exports_regenerate() -> None:
    regenerate = _regenerate_module()
    fresh = regenerate.generate()  # type: ignore[attr-defined]
    assert fresh
    for filename, data in fresh.items():
        committed = (DATA / filename).read_bytes()
        if filename.endswith(".circle"):
            assert committed == data, filename
        else:
            assert regenerate.same_export(committed, data), filename  # type: ignore[attr-defined]
