"""onert's entry order for models that hold tensors no operator reads.

onert removes the operands no operator reads or writes before it copies the graph
(UnusedOperandEliminationPass), so they shape the hash-map order it exports in only through
their absence. The prediction must match the runtime for such models without the runtime:
shared constants together with unused constants, unused activations, and unused tensors that
share a used constant's buffer. Multiple subgraphs are not among them: onert 0.1.0 refuses to
train them ("TrainingCompiler does not support multiple subgraphs yet").
"""

from __future__ import annotations

import copy
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from circle_builder import OpSpec, TensorSpec, build_model
from onert_peer import ONERT_MISSING, TrainPeer

import onert_checkpoint as oc
from onert_checkpoint.circle.model import CircleModel
from onert_checkpoint.circle.onert_order import predict_onert_order, probe_onert_order


def shared_model(
    width: int,
    sources: list[tuple[int, int]],
    unused: dict[int, int],
    *,
    constant: bool = True,
    seed: int = 0,
) -> bytes:
    """FC layers reading their own or an earlier layer's weight and bias (``sources``, as
    circle_builder.build_shared_fc_model), with ``unused[k]`` tensors no operator reads placed
    after layer k's constants (k = -1: before the first layer); constants when ``constant``."""
    rng = np.random.default_rng(seed)
    tensors = [TensorSpec("input", (1, width))]

    def add(spec: TensorSpec) -> int:
        tensors.append(spec)
        return len(tensors) - 1

    def unused_after(k: int) -> None:
        for _ in range(unused.get(k, 0)):
            data = rng.standard_normal(width).astype(np.float32) if constant else None
            add(TensorSpec(f"unused{len(tensors)}", (width,), data=data))

    unused_after(-1)
    own_w: dict[int, int] = {}
    own_b: dict[int, int] = {}
    ops = []
    prev = 0
    for k, (ws, bs) in enumerate(sources):
        if ws == k:
            w = (rng.standard_normal((width, width)) * 0.3).astype(np.float32)
            own_w[k] = add(TensorSpec(f"w{k}", (width, width), data=w))
        if bs == k:
            b = (rng.standard_normal(width) * 0.3).astype(np.float32)
            own_b[k] = add(TensorSpec(f"b{k}", (width,), data=b))
        unused_after(k)
        out = add(TensorSpec(f"out{k}", (1, width)))
        ops.append(OpSpec("FULLY_CONNECTED", (prev, own_w[ws], own_b[bs]), (out,)))
        prev = out
    return build_model(tensors, ops, [0], [prev])


def with_aliases(raw: bytes, rng: random.Random, count: int) -> bytes:
    """``raw`` plus ``count`` tensors sharing a constant's buffer: each alias is left unread,
    or replaces the original for one of its readers (so a buffer backs two used tensors)."""
    import flatbuffers
    from circle_schema.v0_9.circle.Model import ModelT

    obj = ModelT.InitFromPackedBuf(bytearray(raw), 0)
    subgraph = obj.subgraphs[0]
    constants = [k for k, t in enumerate(subgraph.tensors) if t.buffer != 0]
    for _ in range(count):
        source = rng.choice(constants)
        alias = copy.deepcopy(subgraph.tensors[source])
        alias.name = f"alias{len(subgraph.tensors)}".encode()
        subgraph.tensors.append(alias)
        readers = [op for op in subgraph.operators if source in list(op.inputs)]
        if readers and rng.random() < 0.5:
            op = rng.choice(readers)
            new = len(subgraph.tensors) - 1
            op.inputs = np.asarray([new if i == source else i for i in op.inputs], np.int32)
    builder = flatbuffers.Builder(4096)
    builder.Finish(obj.Pack(builder), file_identifier=b"CIR0")
    return bytes(builder.Output())


def _random_sources(rng: random.Random, layers: int) -> list[tuple[int, int]]:
    sources: list[tuple[int, int]] = []
    for k in range(layers):
        ws = rng.randrange(k + 1) if k and rng.random() < 0.5 else k
        bs = rng.randrange(k + 1) if k and rng.random() < 0.5 else k
        # only a layer that owns its constant can lend it
        ws = ws if ws == k or sources[ws][0] == ws else k
        bs = bs if bs == k or sources[bs][1] == bs else k
        sources.append((ws, bs))
    return sources


def _models() -> list[tuple[str, bytes]]:
    rng = random.Random(25)
    models = []
    for i in range(18):
        # every third: 13+ operators, so onert's operation map rehashes too
        layers = rng.randint(13, 16) if i % 3 == 0 else rng.randint(2, 6)
        sources = _random_sources(rng, layers)
        unused = {rng.randrange(-1, layers): rng.randint(1, 3) for _ in range(rng.randint(1, 4))}
        kind = ("constants", "activations", "aliases")[i % 3]
        raw = shared_model(rng.choice([2, 3]), sources, unused, constant=kind != "activations",
                           seed=i)
        if kind == "aliases":
            raw = with_aliases(raw, rng, rng.randint(1, 3))
        models.append((f"{i}-{layers}layers-{kind}", raw))
    return models


MODELS = _models()

#: Two layers sharing w0 and b0, two unused constants after layer 1's (none of its own): the
#: runtime's order, as onert 0.1.0 exported it (probe_onert_order).
SHARED_WITH_UNUSED = shared_model(3, [(0, 0), (0, 0)], {1: 2}, seed=3)
SHARED_WITH_UNUSED_ORDER = [1, 2, 1, 2]
#: Five layers, two shared constants, two unused constants after layer 3's.
FIVE = shared_model(3, [(0, 0), (1, 1), (2, 1), (3, 1), (4, 0)], {3: 2}, seed=0)
FIVE_ORDER = [9, 2, 4, 5, 5, 5, 7, 2, 1, 13]


def reshape_model() -> bytes:
    """Unused constants first and last, a RESHAPE's int32 shape constant (an entry to onert),
    and a weight and bias shared by both FULLY_CONNECTED operators."""
    rng = np.random.default_rng(3)

    def f(*shape: int) -> np.ndarray:
        return rng.standard_normal(shape).astype(np.float32)

    tensors = [
        TensorSpec("u0", (4,), data=f(4)), TensorSpec("x", (1, 4)),
        TensorSpec("w0", (4, 4), data=f(4, 4)), TensorSpec("b0", (4,), data=f(4)),
        TensorSpec("h", (1, 4)),
        TensorSpec("shape", (2,), dtype="int32", data=np.array([1, 4], np.int32)),
        TensorSpec("h2", (1, 4)),
        TensorSpec("u1", (2,), dtype="int32", data=np.array([3, 4], np.int32)),
        TensorSpec("y", (1, 4)),
    ]
    ops = [
        OpSpec("FULLY_CONNECTED", (1, 2, 3), (4,)),
        OpSpec("RESHAPE", (4, 5), (6,), new_shape=(1, 4)),
        OpSpec("FULLY_CONNECTED", (6, 2, 3), (8,)),
    ]
    return build_model(tensors, ops, [1], [8])


RESHAPE = reshape_model()
RESHAPE_ORDER = [3, 2, 5, 3, 2]


def dead_branch_model(between: bool) -> bytes:
    """Two FULLY_CONNECTED layers, and a RESHAPE of the hidden activation whose output no
    operator reads and the model does not output (a dead branch), after both layers or
    between them: an operand with a writer, which onert keeps (its UnusedOperandEliminationPass
    removes only operands nothing reads or writes)."""
    rng = np.random.default_rng(7)

    def f(*shape: int) -> np.ndarray:
        return (rng.standard_normal(shape) * 0.3).astype(np.float32)

    tensors = [
        TensorSpec("x", (1, 3)),
        TensorSpec("w0", (3, 3), data=f(3, 3)), TensorSpec("b0", (3,), data=f(3)),
        TensorSpec("h", (1, 3)),
        TensorSpec("w1", (3, 3), data=f(3, 3)), TensorSpec("b1", (3,), data=f(3)),
        TensorSpec("y", (1, 3)),
        TensorSpec("shape", (2,), dtype="int32", data=np.array([3, 1], np.int32)),
        TensorSpec("dead", (3, 1)),
    ]
    first = OpSpec("FULLY_CONNECTED", (0, 1, 2), (3,))
    second = OpSpec("FULLY_CONNECTED", (3, 4, 5), (6,))
    dead = OpSpec("RESHAPE", (3, 7), (8,), new_shape=(3, 1))
    return build_model(tensors, [first, dead, second] if between else [first, second, dead],
                       [0], [6])


#: as onert 0.1.0 exported it (probe_onert_order), both placements of the dead branch; a
#: prediction that erased the dead output as unused gave [1, 2, 4, 5, 7]
DEAD_BRANCH_ORDER = [7, 5, 4, 2, 1]


def test_the_prediction_gives_the_runtime_s_recorded_order_without_the_runtime() -> None:
    """Recorded from onert 0.1.0: holds where onert is not installed (the unused tensors'
    presence in the first map had given [2, 1, 2, 1] and a shuffled five-layer order)."""
    assert predict_onert_order(CircleModel.load(SHARED_WITH_UNUSED)) == SHARED_WITH_UNUSED_ORDER
    assert predict_onert_order(CircleModel.load(FIVE)) == FIVE_ORDER
    assert predict_onert_order(CircleModel.load(RESHAPE)) == RESHAPE_ORDER


def test_the_models_hold_what_they_say() -> None:
    for name, raw in MODELS:
        model = CircleModel.load(raw)
        read = {i for op in model.operators for i in (*op.inputs, *op.outputs)}
        unread = [t.index for t in model.tensors if t.index not in read and t.index != 0]
        assert unread, name  # every model holds tensors no operator reads
    shared = [
        name for name, raw in MODELS
        if any(sum(i in op.inputs for op in CircleModel.load(raw).operators) > 1
               for i in range(1, len(CircleModel.load(raw).tensors)))
    ]
    assert len(shared) >= len(MODELS) // 2  # most also share a constant between readers


@pytest.fixture(scope="module")
def onert_runtime() -> object:
    return pytest.importorskip("onert", reason=ONERT_MISSING)


@pytest.mark.parametrize("name,raw", MODELS, ids=[name for name, _ in MODELS])
def test_prediction_matches_the_runtime(onert_runtime: object, name: str, raw: bytes) -> None:
    probed = probe_onert_order(raw)
    assert probed is not None and -1 not in probed
    assert predict_onert_order(CircleModel.load(raw)) == probed


@pytest.mark.parametrize("between", [False, True], ids=["after", "between"])
def test_an_operator_output_nothing_reads_keeps_the_runtime_s_order(between: bool) -> None:
    model = CircleModel.load(dead_branch_model(between))
    read = {i for op in model.operators for i in op.inputs}
    assert 8 not in read and 8 not in model.outputs  # the dead branch's output: unread
    assert predict_onert_order(model) == DEAD_BRANCH_ORDER


@pytest.mark.parametrize("between", [False, True], ids=["after", "between"])
def test_an_operator_output_nothing_reads_is_predicted_as_the_runtime_orders_it(
    onert_runtime: object, between: bool
) -> None:
    assert probe_onert_order(dead_branch_model(between)) == DEAD_BRANCH_ORDER


def test_the_recorded_orders_are_the_runtime_s(onert_runtime: object) -> None:
    assert probe_onert_order(SHARED_WITH_UNUSED) == SHARED_WITH_UNUSED_ORDER
    assert probe_onert_order(FIVE) == FIVE_ORDER
    assert probe_onert_order(RESHAPE) == RESHAPE_ORDER


def test_the_runtime_s_file_reads_with_the_predicted_order_on_the_command_line(
    onert_runtime: object, tmp_path: Path
) -> None:
    """onert trains the five-layer model (Adam) and exports; ``info --model --order predict``
    (what runs where onert is not installed) names every entry as the runtime's markers say,
    and the values are the trained tensors' (within a training step of the model's)."""
    peer = TrainPeer(tmp_path / "peer", FIVE, "adam", learning_rate=1e-6)
    rng = np.random.default_rng(1)
    peer.train([rng.standard_normal((1, 3)).astype(np.float32)],
               [rng.standard_normal((1, 3)).astype(np.float32)], epochs=1)
    ckpt_path = tmp_path / "five.ckpt"
    ckpt_path.write_bytes(peer.export())
    model_path = tmp_path / "five.circle"
    model_path.write_bytes(FIVE)
    done = subprocess.run(
        [sys.executable, "-m", "onert_checkpoint", "info", "--json", "--order", "predict",
         "--model", str(model_path), str(ckpt_path)],
        capture_output=True, text=True, timeout=300, check=False,
    )
    assert done.returncode == 0, done.stderr
    model = CircleModel.load(FIVE)
    names = [model.tensors[i].name for i in FIVE_ORDER]
    import json

    # a shared constant's entries are named after it and their reader ("b0@op1")
    assert [t["name"].split("@")[0] for t in json.loads(done.stdout)["tensors"]] == names
    ckpt = oc.load(ckpt_path, model=model_path, order="predict")
    for entry, index in zip(ckpt.tensors, FIVE_ORDER):
        initial = model.initial_data(index)
        assert np.allclose(np.asarray(entry), initial, atol=1e-4), entry.name


def test_a_new_checkpoint_of_such_a_model_is_what_the_runtime_reads(
    onert_runtime: object, tmp_path: Path
) -> None:
    """``new`` writes the entries in the predicted order; each entry is then marked with its
    circle tensor's own value, onert imports the file and writes its model back
    (``train_export_circle``): every tensor holds its mark, so the runtime read each entry as
    the tensor we meant (the model's equal sizes would hide a wrong order from every check)."""
    model_path = tmp_path / "five.circle"
    model_path.write_bytes(FIVE)
    ours = tmp_path / "new.ckpt"
    done = subprocess.run(
        [sys.executable, "-m", "onert_checkpoint", "new", "--model", str(model_path),
         "--optimizer", "sgd", str(ours)],
        capture_output=True, text=True, timeout=300, check=False,
    )
    assert done.returncode == 0, done.stderr
    written = oc.load(ours, model=model_path, order="predict")
    model = CircleModel.load(FIVE)
    by_name = {t.name: t.index for t in model.tensors}
    for entry in written.tensors:  # the tensor the library says it is ("b0@op1": a copy of b0)
        index = by_name[entry.name.split("@")[0]]
        entry.data = np.full(entry.shape, (index + 1) / 64, np.float32)
    peer = TrainPeer(tmp_path / "peer", FIVE, "sgd", learning_rate=1e-30)
    peer.import_bytes(oc.to_bytes(written))
    # the runtime writes its model only after a step (this one moves nothing: lr 1e-30)
    peer.train([np.zeros((1, 3), np.float32)], [np.zeros((1, 3), np.float32)], epochs=1)
    baked = CircleModel.load(peer.export_circle())
    marked = set(FIVE_ORDER)
    assert marked == {t.index for t in model.tensors if t.is_constant and t.index in
                      {i for op in model.operators for i in op.inputs}}
    for index in marked:
        values = baked.initial_data(index)
        assert values is not None
        assert np.all(np.asarray(values) == np.float32((index + 1) / 64)), model.tensors[index].name
