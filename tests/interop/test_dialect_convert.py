"""Converting schema-1 checkpoints between onert's and onert-micro's conventions
(:func:`onert_checkpoint.circle.dialect_convert.to_dialect`).

The round trip onert -> onert-micro -> onert gives back the same bytes, for files exported by the
real runtime (tests/data/real-onert/) and for generated ones on random FC models; onert-micro
files are checked against a layout built here by hand from FORMAT-FACTS section 2 (table by
circle tensor index, 0 for a tensor without data, data in reverse operator order). With the
``onert`` wheel installed, an onert file converted from an onert-micro one is imported by the
runtime, trains on and exports again.
"""

from __future__ import annotations

import random
import struct
from pathlib import Path

import numpy as np
import pytest
from circle_builder import OpSpec, TensorSpec, build_fc_model, build_model

import onert_checkpoint as oc
from onert_checkpoint.circle.dialect_convert import to_dialect
from onert_checkpoint.circle.model import CircleModel
from onert_checkpoint.circle.onert_order import predict_onert_order
from onert_checkpoint.format.errors import ModelMismatchError, NotRepresentableError
from onert_checkpoint.format.model import Checkpoint, Optimizer, Tensor, TrainingState

DATA = Path(__file__).resolve().parent.parent / "data" / "real-onert"
REAL = [
    ("fc2", "fc2-sgd-step8.ckpt"),
    ("fc2", "fc2-adam-step8.ckpt"),
    ("fc3", "fc3-sgd-step12.ckpt"),
    ("fc3", "fc3-adam-step12.ckpt"),
    ("fc3sq", "fc3sq-adam-step12.ckpt"),
]


def _micro_by_hand(
    model: CircleModel,
    weights: dict[int, bytes],
    slots: dict[str, dict[int, bytes]] | None,
    step: int,
    epoch: int,
) -> bytes:
    """An onert-micro file laid out as OMCheckpointSaver does, written without the library."""
    n = len(model.tensors)
    saved = model.micro_saved_indices()
    assert sorted(saved) == sorted(weights)
    blocks = [weights] + ([slots["m"], slots["v"]] if slots else [])
    out = bytearray(20)
    starts = []
    for block in blocks:
        starts.append(len(out))
        table = [0] * n
        pos = len(out) + 4 * n
        data = bytearray()
        for i in saved:
            table[i] = pos + len(data)
            data += block[i]
        out += struct.pack(f"<{n}I", *table) + data
    other = len(out)
    out += struct.pack("<II", step, epoch)
    opt1, opt2 = (starts[1], starts[2]) if slots else (0, 0)
    struct.pack_into("<HBBIIII", out, 0, 429, 1, 0, opt1, opt2, other, n)
    return bytes(out)


def _micro_view(raw: bytes) -> tuple[list[int], list[int]]:
    """The weight table and the tensor indices in data order, read with struct."""
    n = struct.unpack_from("<I", raw, 16)[0]
    table = list(struct.unpack_from(f"<{n}I", raw, 20))
    in_data_order = [i for _, i in sorted((ofs, i) for i, ofs in enumerate(table) if ofs)]
    return table, in_data_order


# files exported by the real runtime -------------------------------------------------------------


@pytest.mark.parametrize(("model_name", "filename"), REAL, ids=[f for _, f in REAL])
def test_real_export_round_trips_through_micro(model_name: str, filename: str) -> None:
    raw = (DATA / filename).read_bytes()
    model_path = DATA / f"{model_name}.circle"
    model = CircleModel.load(model_path)
    onert_ckpt = oc.load(raw, model=model_path)

    # the exports trained one sample per step (regenerate.py): Adam's units agree (SPEC 9.3)
    micro = to_dialect(oc.load(raw), "onert-micro", model_path, batch_size=1)
    micro_raw = oc.to_bytes(micro)
    table, data_order = _micro_view(micro_raw)
    assert len(table) == len(model.tensors)
    assert data_order == model.micro_saved_indices()
    assert [i for i, ofs in enumerate(table) if ofs == 0] == [
        t.index for t in model.tensors if t.index not in set(data_order)
    ]

    again = oc.load(micro_raw, model=model_path)
    assert again.dialect == "onert-micro" and again.layout.num_entries == len(model.tensors)
    assert (again.step, again.epoch) == (onert_ckpt.step, onert_ckpt.epoch)
    assert again.optimizer.kind == onert_ckpt.optimizer.kind
    for t in onert_ckpt.tensors:
        same = again[t.model_index]
        assert same.name == t.name and np.array_equal(same.data, t.data)
        for slot, entries in onert_ckpt.optimizer.slots.items():
            theirs = again.optimizer.slots[slot][t.model_index]
            assert bytes(theirs.raw) == bytes(entries[t.index].raw)
    if onert_ckpt.optimizer.kind == "sgd":
        assert struct.unpack_from("<II", micro_raw, 4) == (0, 0)  # onert-micro's SGD

    # the same bytes as the saver's layout, written by hand
    slots = None
    if onert_ckpt.optimizer.kind == "adam":
        slots = {
            s: {i: bytes(again.optimizer.slots[s][i].raw) for i in data_order} for s in ("m", "v")
        }
    weights = {i: bytes(again[i].raw) for i in data_order}
    assert micro_raw == _micro_by_hand(model, weights, slots, again.step, again.epoch)

    back = oc.to_bytes(to_dialect(oc.load(micro_raw), "onert", model_path, batch_size=1))
    assert back == raw


@pytest.mark.parametrize("order", ["auto", "predict"])
def test_committed_fc3_exports_bind_in_onerts_scrambled_order(order: str) -> None:
    for filename in ("fc3-sgd-step12.ckpt", "fc3-adam-step12.ckpt", "fc3sq-adam-step12.ckpt"):
        model = "fc3sq" if filename.startswith("fc3sq") else "fc3"
        ckpt = oc.load(DATA / filename, model=DATA / f"{model}.circle", order=order)
        assert [t.model_index for t in ckpt.tensors] == [8, 7, 5, 4, 2, 1]
        assert [t.name for t in ckpt.tensors] == ["b2", "w2", "b1", "w1", "b0", "w0"]
        assert (ckpt.step, ckpt.epoch) == (12, 0)


def test_fc3sq_sizes_alone_cannot_tell_the_entries_apart() -> None:
    with pytest.raises(oc.CheckpointError) as info:
        oc.load(DATA / "fc3sq-adam-step12.ckpt", model=DATA / "fc3sq.circle", order="size")
    assert info.value.code == "ambiguous_entries"


def test_converted_data_are_views_not_copies() -> None:
    ckpt = oc.load(DATA / "fc3-adam-step12.ckpt")
    micro = to_dialect(ckpt, "onert-micro", DATA / "fc3.circle", batch_size=1)
    originals = [t.data for t in ckpt.tensors]
    for t in micro.tensors:  # each converted entry's data lie in the memory of one original
        data = t.data
        assert sum(np.shares_memory(data, o) for o in originals) == 1, t.index
        assert not data.flags.owndata
    assert ckpt.tensors[0].model_index is None  # the input is left as it was


# generated checkpoints ----------------------------------------------------------------------------


def _random_onert(model: CircleModel, kind: str, rng: np.random.Generator) -> Checkpoint:
    order = predict_onert_order(model)

    def values(i: int) -> np.ndarray:
        return rng.standard_normal(model.tensors[i].shape).astype(np.float32)

    optimizer = Optimizer(kind)
    if kind == "adam":
        for slot in ("m", "v"):
            optimizer.slots[slot] = {k: Tensor(k, values(i)) for k, i in enumerate(order)}
    return Checkpoint(
        tensors=[Tensor(k, values(i)) for k, i in enumerate(order)],
        optimizer=optimizer,
        state=TrainingState(step=int(rng.integers(1 << 32)), epoch=int(rng.integers(1 << 32))),
        revision="v1",
        dialect="onert",
    )


@pytest.mark.parametrize("seed", range(3))
def test_generated_round_trips(seed: int) -> None:
    """30 random FC chains of 1-8 layers (narrow widths: many equal sizes), both optimizers."""
    rng = np.random.default_rng(seed)
    pick = random.Random(seed)
    for k in range(30):
        layers = pick.randint(1, 8)
        widths = [pick.randint(1, pick.choice([2, 3, 9])) for _ in range(layers + 1)]
        layout = ("chain", "consts_first", "shuffled")[k % 3]
        raw_model = build_fc_model(widths, seed=pick.randrange(1 << 30), layout=layout)
        model = CircleModel.load(raw_model)
        kind = ("sgd", "adam")[k % 2]
        onert_raw = oc.to_bytes(_random_onert(model, kind, rng))
        # order="predict": the entry order is what this test wrote, not what a probe finds
        micro_raw = oc.to_bytes(to_dialect(oc.load(onert_raw), "onert-micro", model,
                                           order="predict", batch_size=1))
        micro = oc.load(micro_raw)
        assert micro.dialect == "onert-micro" and micro.layout.num_entries == len(model.tensors)
        assert _micro_view(micro_raw)[1] == model.micro_saved_indices()
        onert_again = oc.to_bytes(to_dialect(micro, "onert", model, batch_size=1))
        assert onert_again == onert_raw, (widths, layout, kind)
        micro_again = oc.to_bytes(to_dialect(oc.load(onert_again), "onert-micro", model,
                                             order="predict", batch_size=1))
        assert micro_again == micro_raw


def test_onert_order_can_be_given() -> None:
    model = CircleModel.load(DATA / "fc3.circle")
    ckpt = oc.load(DATA / "fc3-sgd-step12.ckpt")
    micro = to_dialect(ckpt, "onert-micro", model)
    index_order = sorted(predict_onert_order(model))
    mine = to_dialect(micro, "onert", model, onert_order=index_order)
    assert [t.model_index for t in mine.tensors] == index_order == [1, 2, 4, 5, 7, 8]
    assert [t.name for t in mine.tensors] == ["w0", "b0", "w1", "b1", "w2", "b2"]


# what cannot be converted -----------------------------------------------------------------------


def test_micro_file_without_some_tensors_is_not_representable_in_onert() -> None:
    """onert exports every trainable tensor; onert-micro may save only the last layers."""
    model = CircleModel.load(DATA / "fc3.circle")
    full = to_dialect(oc.load(DATA / "fc3-sgd-step12.ckpt"), "onert-micro", model)
    full.tensors = [t for t in full.tensors if t.model_index in (7, 8)]  # last layer only
    partial = oc.load(oc.to_bytes(full))
    with pytest.raises(NotRepresentableError) as info:
        to_dialect(partial, "onert", model)
    assert info.value.code == "not_representable"
    assert "'w0'" in info.value.message and "'b1'" in info.value.message
    assert "'w2'" not in info.value.message


def test_constant_outside_fc_is_not_representable_in_micro() -> None:
    shape = np.array([1, 4], np.int32)
    w = np.ones((4, 4), np.float32)
    tensors = [
        TensorSpec("x", (1, 4)),
        TensorSpec("shape", (2,), "int32", shape),
        TensorSpec("r", (1, 4)),
        TensorSpec("w", (4, 4), data=w),
        TensorSpec("y", (1, 4)),
    ]
    ops = [OpSpec("RESHAPE", (0, 1), (2,), (1, 4)), OpSpec("FULLY_CONNECTED", (2, 3, -1), (4,))]
    model = CircleModel.load(build_model(tensors, ops, [0], [4]))
    order = predict_onert_order(model)
    assert sorted(order) == [1, 3]
    ckpt = Checkpoint(
        tensors=[Tensor(k, model.initial_data(i)) for k, i in enumerate(order)],
        optimizer=Optimizer("sgd"),
        revision="v1",
        dialect="onert",
    )
    with pytest.raises(NotRepresentableError) as info:
        to_dialect(oc.load(oc.to_bytes(ckpt)), "onert-micro", model, order="predict")
    assert "'shape'" in info.value.message and "'w'" not in info.value.message


def test_checkpoint_of_another_model_is_a_mismatch() -> None:
    with pytest.raises(ModelMismatchError):
        to_dialect(oc.load(DATA / "fc2-sgd-step8.ckpt"), "onert-micro", DATA / "fc3.circle")


def test_unknown_dialect() -> None:
    with pytest.raises(ValueError, match="dialect"):
        to_dialect(oc.load(DATA / "fc2-sgd-step8.ckpt"), "tflite", DATA / "fc2.circle")


# the real runtime reads what we converted -------------------------------------------------------


@pytest.mark.parametrize(
    ("model_name", "filename"), [REAL[2], REAL[3]], ids=[REAL[2][1], REAL[3][1]]
)
def test_converted_file_trains_on_in_onert(tmp_path: Path, model_name: str, filename: str) -> None:
    from onert_peer import ONERT_MISSING, TrainPeer

    pytest.importorskip("onert", reason=ONERT_MISSING)

    model_path = DATA / f"{model_name}.circle"
    original = oc.load(DATA / filename)
    micro = oc.load(oc.to_bytes(to_dialect(original, "onert-micro", model_path, batch_size=1)))
    converted = oc.to_bytes(to_dialect(micro, "onert", model_path, batch_size=1))
    kind = original.optimizer.kind
    peer = TrainPeer(tmp_path / "s", model_path.read_bytes(), kind, learning_rate=0.01)
    peer.import_bytes(converted)
    widths = [t.shape[-1] for t in CircleModel.load(model_path).tensors if t.name == "input"]
    rng = np.random.default_rng(1)
    xs = rng.standard_normal((4, widths[0])).astype(np.float32)
    ys = rng.standard_normal((4, 2)).astype(np.float32)
    peer.train([xs], [ys], epochs=1)
    trained = oc.load(peer.export(), model=model_path)
    # onert's SGD import loses the step (N = 6 > 2: see test_runtime_roundtrip); Adam keeps it
    start = original.step if kind == "adam" else 0
    assert (trained.step, trained.epoch) == (start + 4, 0)
    assert all(
        not np.array_equal(a.raw, b.raw) for a, b in zip(original.tensors, trained.tensors)
    )


def test_two_entries_of_one_unshared_tensor_are_a_mismatch() -> None:
    """Two entries naming one tensor are onert's copies of a shared constant only when onert's
    predicted order has as many entries for it (SPEC B.9); fc3 shares nothing, so a schema-2
    file whose records name tensor 8 twice does not fit the model (counted once per file,
    not once per copy: the check stays linear)."""
    model = DATA / "fc3.circle"
    v2 = oc.convert(oc.load(DATA / "fc3-sgd-step12.ckpt", model=model), "v2", model=model)
    v2.tensors[2].model_index = v2.tensors[0].model_index
    with pytest.raises(ModelMismatchError, match="entries 0 and 2 both hold tensor 8"):
        to_dialect(v2, "onert-micro", model)
