"""Shared weights: FULLY_CONNECTED operators that read the same weight and bias tensors.

onert 0.1.0 splits a constant read by several operators into one operand per reader before
training (spec/SPEC.md appendix B.9): a checkpoint of two layers sharing ``w`` and ``b`` has
N = 4 entries holding tensors ``[1, 2, 1, 2]``, and each copy is trained by its reader alone,
so after a training step the two entries of ``w`` differ. These tests check, against the real
runtime, the prediction of that order and of each copy's reader, reading such files through the
model, writing them byte for byte, and the conversions (schema 2, onert-micro).
"""

from __future__ import annotations

import random
import subprocess
import sys

import numpy as np
import pytest
from circle_builder import build_shared_fc_model
from onert_peer import ONERT_MISSING, TrainPeer

import onert_checkpoint as oc
from onert_checkpoint.circle.dialect_convert import to_dialect
from onert_checkpoint.circle.model import CircleModel
from onert_checkpoint.circle.onert_order import (
    predict_onert_entries,
    predict_onert_order,
    probe_onert_order,
)
from onert_checkpoint.format.errors import CheckpointError, NotRepresentableError
from onert_checkpoint.format.model import Checkpoint, Optimizer, Tensor, TrainingState

pytest.importorskip("onert", reason=ONERT_MISSING)

#: Two layers reading the same weights and bias: tensors input, w0, b0, out0, out1.
TWO = build_shared_fc_model(3, [(0, 0), (0, 0)], seed=5)


def _random_sources(rng: random.Random, layers: int) -> list[tuple[int, int]]:
    """Each layer owns its constants or reads an earlier owner's weight, bias or both."""
    owners_w: list[int] = []
    owners_b: list[int] = []
    out = []
    for k in range(layers):
        ws = rng.choice(owners_w) if owners_w and rng.random() < 0.5 else k
        bs = rng.choice(owners_b) if owners_b and rng.random() < 0.5 else k
        if ws == k:
            owners_w.append(k)
        if bs == k:
            owners_b.append(k)
        out.append((ws, bs))
    return out


def _random_models(count: int, seed: int) -> list[bytes]:
    rng = random.Random(seed)
    models = []
    for k in range(count):
        # every third model has 13+ operators: onert's operation map rehashes past 13 keys
        layers = rng.randint(13, 16) if k % 3 == 2 else rng.randint(2, 6)
        models.append(build_shared_fc_model(rng.choice([2, 3]), _random_sources(rng, layers), k))
    return models


def _train(tmp_path, model: bytes, kind: str, lr: float, steps: int = 1, name: str = "s"):
    rng = np.random.default_rng(7)
    width = CircleModel.load(model).tensors[0].shape[1]
    peer = TrainPeer(tmp_path / name, model, kind, learning_rate=lr)
    xs = [rng.standard_normal((1, width)).astype(np.float32)]
    ys = [rng.standard_normal((1, width)).astype(np.float32)]
    peer.train(xs, ys, epochs=steps)
    return peer, xs[0], ys[0]


# the order and the readers ----------------------------------------------------------------------


def test_two_layers_sharing_weight_and_bias_export_four_entries(tmp_path) -> None:
    model = CircleModel.load(TWO)
    assert predict_onert_order(model) == [1, 2, 1, 2]
    assert probe_onert_order(TWO) == [1, 2, 1, 2]
    entries = predict_onert_entries(model)
    # the operand onert keeps goes to the operator its operation map visits first (layer 1)
    assert [(e.readers, e.copy) for e in entries] == [((1,), False)] * 2 + [((0,), True)] * 2
    peer, _, _ = _train(tmp_path, TWO, "sgd", 1e-30)
    raw = peer.export()
    assert int.from_bytes(raw[16:20], "little") == 4


def test_prediction_matches_the_probe_on_random_shared_models() -> None:
    for model in _random_models(12, seed=3):
        assert predict_onert_order(CircleModel.load(model)) == probe_onert_order(model)


def test_a_shared_int32_constant_is_split_too(tmp_path) -> None:
    """Two RESHAPEs reading one int32 shape: two entries; the probe, which tells int32
    entries by their unchanged bytes, names both."""
    from circle_builder import OpSpec, TensorSpec, build_model

    rng = np.random.default_rng(0)

    def const(name: str, shape: tuple[int, ...]) -> TensorSpec:
        return TensorSpec(name, shape, data=rng.standard_normal(shape).astype(np.float32))

    raw_model = build_model(
        [TensorSpec("x", (1, 4)), TensorSpec("s", (2,), "int32", data=np.array([1, 4], np.int32)),
         TensorSpec("r0", (1, 4)), const("w0", (4, 4)), const("b0", (4,)), TensorSpec("h", (1, 4)),
         TensorSpec("r1", (1, 4)), const("w1", (4, 4)), const("b1", (4,)), TensorSpec("y", (1, 4))],
        [OpSpec("RESHAPE", (0, 1), (2,), new_shape=(1, 4)),
         OpSpec("FULLY_CONNECTED", (2, 3, 4), (5,)),
         OpSpec("RESHAPE", (5, 1), (6,), new_shape=(1, 4)),
         OpSpec("FULLY_CONNECTED", (6, 7, 8), (9,))],
        [0], [9])
    order = predict_onert_order(CircleModel.load(raw_model))
    assert order.count(1) == 2
    assert probe_onert_order(raw_model) == order
    peer, _, _ = _train(tmp_path, raw_model, "adam", 0.05)
    ckpt = oc.load(peer.export(), model=raw_model, order="probe")
    assert sorted(t.name for t in ckpt.tensors) == ["b0", "b1", "s", "s@op0", "w0", "w1"]
    assert ckpt.layout.quirks == ()  # the shape is never trained: both entries stay equal


def _forward(model: CircleModel, reads: dict[int, dict[int, np.ndarray]], x) -> np.ndarray:
    """The chain's output when operator k reads ``reads[k][tensor]`` for its constants."""
    value = x
    for k, op in enumerate(model.operators):
        _, w, b = op.inputs
        value = (value @ reads[k][w].T + reads[k][b]).astype(np.float32)
    return value


@pytest.mark.parametrize("seed", [0, 2, 5])
def test_each_copy_is_read_by_its_predicted_operator(tmp_path, seed: int) -> None:
    """Import a file whose copies all differ: onert's forward pass reads them as predicted."""
    raw_model = _random_models(6, seed=seed)[seed]
    model = CircleModel.load(raw_model)
    entries = predict_onert_entries(model)
    assert len(entries) > len(set(predict_onert_order(model)))  # something is shared
    rng = np.random.default_rng(seed)
    values = [
        (rng.standard_normal(model.tensors[e.tensor].shape) * 0.3).astype(np.float32)
        for e in entries
    ]
    reads: dict[int, dict[int, np.ndarray]] = {k: {} for k in range(len(model.operators))}
    for e, v in zip(entries, values):
        for reader in e.readers:
            reads[reader][e.tensor] = v
    ckpt = Checkpoint(
        tensors=[Tensor(k, v) for k, v in enumerate(values)],
        optimizer=Optimizer("sgd"),
        state=TrainingState(step=1, epoch=0),
        revision="v1",
        dialect="onert",
    )
    peer = TrainPeer(tmp_path / "s", raw_model, "sgd")
    peer.import_bytes(oc.to_bytes(ckpt))
    x = rng.standard_normal((1, model.tensors[0].shape[1])).astype(np.float32)
    expected = _forward(model, reads, x)
    assert peer.eval_loss(x, expected) <= 1e-10
    # the other assignment (the kept operand to the copy's reader) does not fit
    swapped = {k: dict(r) for k, r in reads.items()}
    for e, v in zip(entries, values):
        if e.copy:
            keeper = next(f for f in entries if f.tensor == e.tensor and not f.copy)
            swapped[keeper.readers[0]][e.tensor] = v
    assert peer.eval_loss(x, _forward(model, swapped, x)) > 1e-6


def test_onert_trains_each_copy_with_its_reader_alone(tmp_path) -> None:
    """One SGD step: the kept entry moves by layer 1's gradient, the copy by layer 0's."""
    lr = 0.1
    peer, x, y = _train(tmp_path, TWO, "sgd", lr)
    ckpt = oc.load(peer.export(), model=TWO)
    model = CircleModel.load(TWO)
    w = model.initial_data(1).astype(np.float64)
    b = model.initial_data(2).astype(np.float64)
    h = x @ w.T + b
    out = h @ w.T + b
    g_out = 2 * (out - y) / out.size
    g_h = g_out @ w
    expected = {
        "w0": w - lr * (g_out.T @ h),  # layer 1 reads the kept operand
        "b0": b - lr * g_out[0],
        "w0@op0": w - lr * (g_h.T @ x),  # layer 0 reads the copy
        "b0@op0": b - lr * g_h[0],
    }
    for name, value in expected.items():
        np.testing.assert_allclose(ckpt[name].data, value, atol=1e-6)
    assert not np.allclose(ckpt["w0"].data, ckpt["w0@op0"].data, atol=1e-4)
    # train_export_circle writes the kept operand's values into the model
    exported = CircleModel.load(peer.export_circle())
    assert np.array_equal(exported.initial_data(1), ckpt["w0"].data)


# reading and writing ---------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["sgd", "adam"])
@pytest.mark.parametrize("lr", [1e-30, 0.1])
def test_real_export_reads_through_the_model_and_writes_back(tmp_path, kind, lr) -> None:
    peer, _, _ = _train(tmp_path, TWO, kind, lr)
    raw = peer.export()
    for order in ("auto", "predict", "probe"):
        ckpt = oc.load(raw, model=TWO, order=order)
        assert [(t.name, t.model_index, t.shape) for t in ckpt.tensors] == [
            ("w0", 1, (3, 3)),
            ("b0", 2, (3,)),
            ("w0@op0", None, (3, 3)),
            ("b0@op0", None, (3,)),
        ]
        differ = any(
            not np.array_equal(a.raw, b.raw)
            for a, b in ((ckpt.tensors[0], ckpt.tensors[2]), (ckpt.tensors[1], ckpt.tensors[3]))
        )
        assert ("shared_copies_differ" in ckpt.layout.quirks) == differ
        assert differ == (lr == 0.1)  # a real step unties the copies
        assert oc.to_bytes(ckpt) == raw
    with pytest.raises(CheckpointError) as info:
        oc.load(raw, model=TWO, order="size")
    assert info.value.code == "ambiguous_entries"  # equal sizes: only an order tells them apart


def test_info_with_the_model_names_both_entries(tmp_path) -> None:
    peer, _, _ = _train(tmp_path, TWO, "adam", 0.1)
    (tmp_path / "e.ckpt").write_bytes(peer.export())
    (tmp_path / "m.circle").write_bytes(TWO)
    done = subprocess.run(
        [sys.executable, "-m", "onert_checkpoint", "info", "e.ckpt", "--model", "m.circle"],
        cwd=tmp_path, capture_output=True, text=True, check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "w0@op0" in done.stdout and "shared_copies_differ" in done.stdout


@pytest.mark.parametrize("kind", ["sgd", "adam"])
def test_schema_2_round_trip_keeps_the_copies(tmp_path, kind) -> None:
    peer, _, _ = _train(tmp_path, TWO, kind, 0.1)
    raw = peer.export()
    v2 = oc.to_bytes(oc.upgrade(oc.load(raw, model=TWO), to="v2"))
    again = oc.load(v2, model=TWO)
    assert [t.name for t in again.tensors] == ["w0", "b0", "w0@op0", "b0@op0"]
    assert oc.to_bytes(oc.downgrade(again, allow_lossy=True)) == raw


# onert-micro -----------------------------------------------------------------------------------


def test_micro_conversion_of_equal_copies_round_trips_and_onert_imports_it(tmp_path) -> None:
    peer, x, y = _train(tmp_path, TWO, "sgd", 1e-30)  # lr 1e-30: the copies stay equal
    raw = peer.export()
    micro = to_dialect(oc.load(raw, model=TWO), "onert-micro", TWO)
    micro_raw = oc.to_bytes(micro)
    assert len(micro.tensors) == 2 and micro.table_length == 5  # each tensor saved once
    back = to_dialect(oc.load(micro_raw, model=TWO), "onert", TWO)
    assert [t.name for t in back.tensors] == ["w0", "b0", "w0@op0", "b0@op0"]
    assert oc.to_bytes(back) == raw
    fresh = TrainPeer(tmp_path / "f", TWO, "sgd")
    fresh.import_bytes(oc.to_bytes(back))
    assert fresh.eval_loss(x, y) == pytest.approx(peer.eval_loss(x, y), rel=1e-6)


def test_micro_conversion_refuses_copies_that_differ(tmp_path) -> None:
    peer, _, _ = _train(tmp_path, TWO, "adam", 0.1)
    with pytest.raises(NotRepresentableError, match=r"shared tensor 1 \('w0'\).*SPEC B\.9"):
        to_dialect(oc.load(peer.export(), model=TWO), "onert-micro", TWO)


def test_new_checkpoint_of_a_shared_model_is_what_onert_exports(tmp_path) -> None:
    peer, _, _ = _train(tmp_path, TWO, "adam", 1e-30)
    ours = oc.new_checkpoint(CircleModel.load(TWO), optimizer="adam")
    assert [t.name for t in ours.tensors] == ["w0", "b0", "w0@op0", "b0@op0"]
    theirs = oc.load(peer.export(), model=TWO)
    for a, b in zip(ours.tensors, theirs.tensors):
        assert np.array_equal(a.raw, b.raw)


def test_onert_micro_runs_our_conversion_of_a_shared_checkpoint(micro, tmp_path) -> None:
    """Tied values of our choosing in onert's four entries, converted to onert-micro: the real
    onert-micro runtime loads the file and infers what onert infers from the onert file."""
    model = CircleModel.load(TWO)
    rng = np.random.default_rng(12)
    w = (rng.standard_normal((3, 3)) * 0.5).astype(np.float32)
    b = (rng.standard_normal(3) * 0.5).astype(np.float32)
    ours = oc.checkpoint_from_arrays(model, {1: w, 2: b}, optimizer="sgd")
    onert_raw = oc.to_bytes(ours)
    assert len(oc.load(onert_raw).tensors) == 4
    micro_raw = oc.to_bytes(to_dialect(oc.load(onert_raw, model=TWO), "onert-micro", TWO))
    xs = rng.standard_normal((4, 3)).astype(np.float32)
    expected = ((xs @ w.T + b) @ w.T + b).astype(np.float32)

    model_path = micro.file("m.circle", TWO)
    out = micro.folder / "i.out"
    micro.run(model=model_path, opt="sgd", load=micro.file("c.ckpt", micro_raw),
              infer=micro.file("x.f32", xs), out=out)
    np.testing.assert_allclose(np.fromfile(out, "<f4").reshape(4, 3), expected, atol=1e-5)

    peer = TrainPeer(tmp_path / "o", TWO, "sgd")
    peer.import_bytes(onert_raw)
    assert peer.eval_loss(xs[:1], expected[:1]) <= 1e-10
