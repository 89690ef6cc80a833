"""Bake: the checkpoint's weights into the circle model, proven with the real onert runtime.

For every model of the interop set (FC chains of 1 to 6 layers, convolutions, a RESHAPE
constant, shared weights, a buffer two tensors share), trained in onert with SGD and Adam: a
fresh session imports the exported checkpoint, and the baked model's inference
(``onert.infer``) equals that session's (its ``train_export_circle`` inferred, and its training
graph's own forward pass). The rest of the model is unchanged.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from circle_builder import (
    OpSpec,
    TensorSpec,
    build_conv_chain_model,
    build_fc_model,
    build_model,
    build_shared_fc_model,
    operator_options,
)
from onert_peer import ONERT_MISSING, TrainPeer, infer

import onert_checkpoint as oc
from onert_checkpoint.circle.dialect_convert import to_dialect
from onert_checkpoint.circle.model import CircleModel
from onert_checkpoint.format.errors import CheckpointError, NotRepresentableError

pytest.importorskip("onert", reason=ONERT_MISSING)


def _conv3x3() -> bytes:
    rng = np.random.default_rng(1)
    return build_model(
        [TensorSpec("x", (1, 4, 4, 2)),
         TensorSpec("k", (2, 3, 3, 2), data=(rng.standard_normal((2, 3, 3, 2)) * .3).astype("f4")),
         TensorSpec("b", (2,), data=(rng.standard_normal(2) * .3).astype("f4")),
         TensorSpec("h", (1, 2, 2, 2)), TensorSpec("y", (1, 2, 2, 2))],
        [OpSpec("CONV_2D", (0, 1, 2), (3,), options=operator_options("CONV_2D")),
         OpSpec("RELU", (3,), (4,))],
        [0], [4])


def _shared_buffer() -> bytes:
    """Two FC layers whose weights are two tensors reading one buffer (a deduplicating
    exporter writes equal constants once)."""
    import flatbuffers
    from circle_schema.v0_9.circle.Model import ModelT

    raw = build_fc_model([3, 3, 3], seed=6)
    obj = ModelT.InitFromPackedBuf(bytearray(raw), 0)
    tensors = obj.subgraphs[0].tensors
    tensors[4].buffer = tensors[1].buffer  # w1 reads w0's buffer
    builder = flatbuffers.Builder(2048)
    builder.Finish(obj.Pack(builder), file_identifier=b"CIR0")
    return bytes(builder.Output())


def _reshape_model() -> bytes:
    rng = np.random.default_rng(2)
    return build_model(
        [TensorSpec("x", (1, 2, 3)), TensorSpec("shape", (2,), "int32",
                                                data=np.array([1, 6], np.int32)),
         TensorSpec("flat", (1, 6)),
         TensorSpec("w", (4, 6), data=(rng.standard_normal((4, 6)) * .3).astype("f4")),
         TensorSpec("b", (4,), data=(rng.standard_normal(4) * .3).astype("f4")),
         TensorSpec("y", (1, 4))],
        [OpSpec("RESHAPE", (0, 1), (2,), new_shape=(1, 6)),
         OpSpec("FULLY_CONNECTED", (2, 3, 4), (5,))],
        [0], [5])


MODELS = {
    "fc1": build_fc_model([5, 3], seed=11),
    "fc3": build_fc_model([4, 8, 6, 3], seed=13),
    "fc6_shuffled": build_fc_model([3, 4, 4, 4, 4, 4, 2], seed=3, layout="shuffled"),
    "conv_chain": build_conv_chain_model(["conv", "dw", "conv", "fc", "fc"], seed=5,
                                         shuffle=True),
    "conv3x3_relu": _conv3x3(),
    "reshape_fc": _reshape_model(),
    "shared_buffer": _shared_buffer(),
    "shared_weights": build_shared_fc_model(3, [(0, 0), (1, 1), (0, 1)], seed=4),
}


def _data(model: bytes, count: int = 3) -> tuple[np.ndarray, np.ndarray]:
    m = CircleModel.load(model)
    rng = np.random.default_rng(8)
    x = rng.standard_normal((count, *m.tensors[m.inputs[0]].shape[1:])).astype(np.float32)
    y = rng.standard_normal((count, *m.tensors[m.outputs[0]].shape[1:])).astype(np.float32)
    return x, y


def _trained(tmp_path, name: str, kind: str) -> bytes:
    x, y = _data(MODELS[name])
    peer = TrainPeer(tmp_path / "t", MODELS[name], kind, learning_rate=0.05)
    peer.train([x], [y], epochs=2)
    return peer.export()


def _structure(model: CircleModel) -> tuple:
    return (
        [(t.name, t.dtype, t.shape, t.is_constant) for t in model.tensors],
        [(op.opcode, op.inputs, op.outputs) for op in model.operators],
        model.inputs, model.outputs,
    )


@pytest.mark.parametrize("kind", ["sgd", "adam"])
@pytest.mark.parametrize("name", sorted(MODELS))
def test_baked_model_infers_as_the_session_that_imported_the_checkpoint(
    tmp_path, name: str, kind: str
) -> None:
    raw_model = MODELS[name]
    ckpt_raw = _trained(tmp_path, name, kind)
    shared = "untie" if name == "shared_weights" else "error"
    baked = oc.bake(ckpt_raw, raw_model, shared=shared)

    session = TrainPeer(tmp_path / "s", raw_model, kind)
    session.import_bytes(ckpt_raw)
    x = _data(raw_model, 1)[0]
    ours = infer(baked, x, tmp_path)
    # the session's training graph computes exactly what the baked model computes
    assert session.eval_loss(x, ours) <= 1e-12
    assert session.eval_loss(x, np.zeros_like(ours)) > 1e-6
    original, result = CircleModel.load(raw_model), CircleModel.load(baked)
    if name == "shared_buffer":
        # onert's own export writes both tensors into the one buffer they read: the last
        # written wins, and its model no longer computes what the session did (ours does)
        exported = CircleModel.load(session.export_circle())
        assert np.array_equal(exported.initial_data(1), exported.initial_data(4))
        assert not np.array_equal(ours, session.outputs(x))
    elif name != "shared_weights":
        # onert's own export of that session holds the same weights
        assert np.array_equal(ours, session.outputs(x))
    if name != "shared_weights":
        assert _structure(result) == _structure(original)
    # the baked constants are the checkpoint's entries; the others are as they were
    bound = oc.load(ckpt_raw, model=raw_model)
    entries = {t.model_index: t.raw for t in bound.tensors if t.model_index is not None}
    for t in original.tensors:
        if not t.is_constant:
            continue
        data = np.asarray(result.initial_data(t.index)).reshape(-1).view(np.uint8)
        expected = entries.get(t.index, np.asarray(original.initial_data(t.index)).reshape(-1)
                               .view(np.uint8))
        assert np.array_equal(data, expected), t.name
    if name == "shared_buffer":
        assert not np.array_equal(result.initial_data(1), result.initial_data(4))


def test_shared_weights_kept_is_what_onert_exports(tmp_path) -> None:
    raw_model = MODELS["shared_weights"]
    ckpt_raw = _trained(tmp_path, "shared_weights", "sgd")
    with pytest.raises(NotRepresentableError, match="shared tensor"):
        oc.bake(ckpt_raw, raw_model)
    session = TrainPeer(tmp_path / "s", raw_model, "sgd")
    session.import_bytes(ckpt_raw)
    x = _data(raw_model, 1)[0]
    session.eval_loss(x, np.zeros((1, 3), np.float32))  # onert exports after a step only
    kept = oc.bake(ckpt_raw, raw_model, shared="kept")
    assert np.array_equal(infer(kept, x, tmp_path), session.outputs(x))
    # two layers sharing w0 and b0: the kept entries come first, the copies after them
    two = build_shared_fc_model(3, [(0, 0), (0, 0)], seed=5)
    peer = TrainPeer(tmp_path / "two", two, "sgd", learning_rate=0.1)
    peer.train([x], [np.zeros((1, 3), np.float32)], epochs=1)
    two_ckpt = peer.export()
    assert [t.name for t in oc.load(two_ckpt, model=two).tensors] == [
        "w0", "b0", "w0@op0", "b0@op0"]
    assert np.array_equal(infer(oc.bake(two_ckpt, two, shared="kept"), x, tmp_path),
                          peer.outputs(x))
    untied = CircleModel.load(oc.bake(ckpt_raw, raw_model, shared="untie"))
    # layer 2 reads w0 (also read by layer 0) and b1 (also by layer 1); onert kept both
    # operands for layer 2, so layers 0 and 1 read copies, as the checkpoint names them
    copies = sorted(t.name for t in untied.tensors if "@op" in t.name)
    assert copies == ["b1@op1", "w0@op0"]
    assert copies == sorted(t.name for t in oc.load(ckpt_raw, model=raw_model).tensors
                            if "@op" in str(t.name))


@pytest.mark.parametrize("path", ["v2", "micro", "wof"])
def test_bake_from_converted_files_gives_the_same_model(tmp_path, path: str) -> None:
    raw_model = MODELS["fc3"]
    ckpt_raw = _trained(tmp_path, "fc3", "adam")
    bound = oc.load(ckpt_raw, model=raw_model)
    if path == "v2":
        other = oc.to_bytes(oc.upgrade(bound, to="v2"))
    elif path == "micro":  # _trained's run is of batch 1 (TrainPeer's default)
        other = oc.to_bytes(to_dialect(bound, "onert-micro", raw_model, batch_size=1))
    else:
        other = oc.to_bytes(oc.convert(oc.load(oc.to_bytes(to_dialect(
            bound, "onert-micro", raw_model, batch_size=1))), "wof", allow_lossy=True))
    assert oc.bake(other, raw_model) == oc.bake(ckpt_raw, raw_model)


def test_bake_command_writes_atomically_and_reports_errors(tmp_path) -> None:
    raw_model = MODELS["fc3"]
    (tmp_path / "t.ckpt").write_bytes(_trained(tmp_path, "fc3", "sgd"))
    (tmp_path / "m.circle").write_bytes(raw_model)
    (tmp_path / "other.circle").write_bytes(MODELS["fc1"])

    def run(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "onert_checkpoint", *argv], cwd=tmp_path,
                              capture_output=True, text=True, check=False)

    done = run("bake", "t.ckpt", "--model", "m.circle", "out.circle")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "out.circle").read_bytes() == oc.bake(tmp_path / "t.ckpt", raw_model)
    before = (tmp_path / "out.circle").read_bytes()
    done = run("bake", "t.ckpt", "--model", "other.circle", "out.circle")
    assert done.returncode == 1 and "model_mismatch" in done.stderr
    assert (tmp_path / "out.circle").read_bytes() == before  # untouched on failure
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no litter
    done = run("bake", "missing.ckpt", "--model", "m.circle", "x.circle")
    assert done.returncode == 2 and "io_error" in done.stderr


def test_bake_refuses_a_checkpoint_of_another_model(tmp_path) -> None:
    with pytest.raises(CheckpointError) as info:
        oc.bake(_trained(tmp_path, "fc3", "sgd"), MODELS["fc6_shuffled"])
    assert info.value.code == "model_mismatch"
